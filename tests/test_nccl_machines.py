"""NCCL's model on the machines people run, and every flag reaching it.

Machines as specs (NICs per node and their speed, fabric, GPUs per node, NVLink
partitions of NVL72 racks), NCCL 2.30.7's own rules (NVLS channels, the dtypes NVLS
reduces, fp8's ring penalty), launch modes and registered buffers, and the link
figures a user overrides, held to hand derivations from NCCL's figures and to the
lower bound of the ideal link model at every size.
"""
import math
import random

import pytest

import collectives_lib as cl
from collectives_lib import hardware as hw
from collectives_lib.errors import CollectivesError
from collectives_lib.nccl import comm_for, measured, symmetric
from collectives_lib.nccl.graphs import nvls_channels, search
from collectives_lib.nccl.tuner import Comm, predict
from collectives_lib.topology import parse_topology

GiB, MiB, KiB = 2**30, 2**20, 2**10


# ----------------------------------------------------------------- specs

def test_nics_per_node_and_their_speed_are_a_spec_parameter():
    """dgx-a100:3 with 4 HDR NICs: the ring's channels are NCCL's one per NIC, each at
    the slower of the NIC (200 Gb/s = 25 GB/s) and the GPU's PCIe Gen4 path (24 GB/s):
    4 x 24 = 96 GB/s of bus bandwidth, half of the preset's 8 rails."""
    four = parse_topology("dgx-a100:3:nics=4x200")
    assert (four.num_nodes, four.nics_per_node, four.nic_rate, four.rails) == (3, 4, 25e9, 4)
    assert four.nic_bandwidth == pytest.approx(4 * 25e9 / 8)     # a GPU's share of its node's NICs
    ring4, ring8 = comm_for(four).graphs["ring"], comm_for(parse_topology("dgx-a100:3")).graphs["ring"]
    assert ring4.channels * ring4.bw_inter == pytest.approx(96.0)
    assert ring8.channels * ring8.bw_inter == pytest.approx(192.0)
    big4 = cl.estimate("all_reduce", four, GiB, "ring")
    big8 = cl.estimate("all_reduce", parse_topology("dgx-a100:3"), GiB, "ring")
    assert big4.time / big8.time == pytest.approx(2.0, rel=0.05)


def test_the_ports_of_a_nic_are_one_device_as_nccl_fuses_them():
    """nics=NxPxR: N NICs of P ports of R Gb/s. NCCL fuses the ports of one NIC into one
    network device of their summed speed (NCCL_NET_MERGE_LEVEL=PORT by default), so 8 dual-
    port 200G NICs are 8 devices of 400G: each NVLS head gets 48 GB/s, and 2 H100 nodes run
    NVLS_TREE as on 8 x 400G, where 16 single 200G NICs give each head 24 and NCCL a ring."""
    fused = parse_topology("dgx-h100:2:nics=8x2x200:fabric=roce")
    assert (fused.nics_per_node, fused.nic_rate) == (8, 50e9)
    assert fused == parse_topology("dgx-h100:2:nics=8x400:fabric=roce")
    ports = parse_topology("dgx-h100:2:nics=16x200:fabric=roce")
    assert comm_for(fused).graphs["nvls"].bw_inter == pytest.approx(48.0)
    assert comm_for(ports).graphs["nvls"].bw_inter == pytest.approx(24.0)
    assert cl.estimate("all_reduce", fused, 8 * GiB, model="nccl").nccl_algorithm == "NVLS_TREE"
    assert cl.estimate("all_reduce", ports, 8 * GiB, model="nccl").nccl_algorithm == "RING"


def test_one_gpu_per_node_and_gpus_of_a_node():
    two = parse_topology("dgx-h100:2:gpus=1")
    assert two.num_ranks == 2 and two.gpus_per_node == 1 and two.nics_per_node == 1
    comm = comm_for(two)
    assert (comm.nodes, comm.ppn) == (2, 1)
    assert parse_topology("dgx-h100:1:gpus=4") == cl.nvswitch_node("dgx-h100", gpus=4)


def test_nvlink_partitions_of_a_rack():
    """trays=T: an NVLink domain of T trays (4T GPUs). On one rack it is one NVLink
    domain (NCCL's MNNVL clique is one node); across racks, T trays per domain."""
    assert parse_topology("gb200-nvl72:1:trays=2") == cl.nvswitch_node("gb200-nvl72", gpus=8)
    racks = parse_topology("gb300-nvl72:2:trays=16:nics=8x400:fabric=roce")
    assert (racks.num_nodes, racks.gpus_per_node, racks.num_ranks) == (2, 64, 128)
    assert racks.nics_per_node == 16 * 8 and racks.fabric == "roce"     # nics= is per tray on a rack
    comm = comm_for(racks)
    assert (comm.nodes, comm.ppn) == (2, 64) and comm.graphs["nvls"].channels == 32   # NCCL_MAX_NVLS_ARITY
    assert parse_topology("gb200-nvl72:2:trays=18") == cl.GpuCluster("gb200-nvl72", 2)


@pytest.mark.parametrize("spec, match", [
    ("dgx-h100:1:nics=4x200", "between nodes"), ("dgx-h100:2:nics=4", "NxR"),
    ("dgx-h100:2:nics=8x0x200", "at least one port"), ("dgx-h100:2:nics=8x2x", "NxPxR"),
    ("dgx-h100:2:trays=2", "not a rack"), ("gb200-nvl72:2:trays=19", "18 compute trays"),
    ("dgx-h100:2:gpus=9", "8 GPUs per node"), ("dgx-h100:2:fabric=ethernet", "ib, roce"),
    ("dgx-h100:2:speed=1", "not understood"), ("dgx-h100:2:gpus=2:gpus=3", "twice"),
    ("gb200-nvl72:1:trays=2:gpus=8", "give one"),
])
def test_bad_parameters_are_refused_in_one_line(spec, match):
    with pytest.raises(CollectivesError, match=match) as e:
        parse_topology(spec)
    assert "\n" not in str(e.value)


def test_sharp_needs_infiniband():
    with pytest.raises(CollectivesError, match="InfiniBand"):
        cl.GpuCluster("dgx-h100", 2, sharp=True, fabric="roce")
    e = cl.estimate("all_reduce", parse_topology("dgx-h100:2:fabric=roce"), GiB)
    assert "RoCE" in e.reason


def test_new_presets_carry_their_figures():
    h800, b300, gb300 = (hw.gpu_system(n) for n in ("dgx-h800", "dgx-b300", "gb300-nvl72"))
    a800 = hw.gpu_system("dgx-a800")
    assert a800.nccl.nvlink_bw == pytest.approx(8 * 20.0)           # 8 NVLinks, NCCL's 20 GB/s each
    assert float(a800.nvlink_bandwidth) == 200e9 and a800.nvls_latency is None
    assert h800.nccl.nvlink_bw == pytest.approx(8 * 20.6)           # 8 NVLinks, NCCL's 20.6 GB/s each
    assert float(h800.nvlink_bandwidth) == 200e9                    # 400 GB/s bidirectional
    assert b300.nccl.net_bw == 96.0 and b300.node_injection == 8 * 100e9   # 800G NICs behind PCIe Gen6
    assert gb300.gpus_per_node == 72 and gb300.tray_gpus == 4
    for s in (a800, h800, b300, gb300, hw.gpu_system("gb300-tray")):
        for f in (s.nvlink_bandwidth, s.nic_bandwidth, s.hbm_capacity):
            assert f.source in hw.SOURCES


# ----------------------------------------------------------------- NCCL's rules

def test_nvls_channels_as_nccl_launches_them():
    """ncclNvlsTuning (transport/nvls.cc): 16 on Hopper; on Blackwell 24 within a node,
    32 across 2 nodes with a NIC path of 48 GB/s or more, 24 on 3 or more."""
    hopper, blackwell = hw.NCCL_PROFILES["hopper"], hw.NCCL_PROFILES["blackwell"]
    assert nvls_channels(hopper, nodes=4, ppn=8) == 16
    assert nvls_channels(blackwell, nodes=1, ppn=8) == 24
    assert nvls_channels(blackwell, nodes=2, ppn=8) == 32
    assert nvls_channels(blackwell, nodes=3, ppn=8) == 24
    assert nvls_channels(hw.NCCL_PROFILES["blackwell-ultra"], nodes=3, ppn=8) == 24   # 96 GB/s, <= 8 GPUs
    assert nvls_channels(hw.NCCL_PROFILES["blackwell-ultra"], nodes=3, ppn=64) == 32


@pytest.mark.parametrize("dtype, nvls", [("float32", True), ("bfloat16", True), ("int32", True),
                                         ("int8", False), ("uint8", False), ("float8_e4m3", False)])
def test_nvls_reduces_only_the_types_nccl_does(dtype, nvls):
    """ncclNvlsSupported (include/device.h): no NVLS reduction of int8, uint8 or fp8;
    all-gather reduces nothing and keeps NVLS."""
    node = cl.nvswitch_node("dgx-h100")
    names = cl.nccl.names_here("all_reduce", node, dtype=dtype)
    assert ("nvls" in names) == nvls
    assert ("nvls" in cl.nccl.names_here("reduce_scatter", node, dtype=dtype)) == nvls
    assert "nvls" in cl.nccl.names_here("all_gather", node, dtype=dtype)
    if not nvls:
        assert cl.estimate("all_reduce", node, GiB, dtype=dtype).nccl_algorithm != "NVLS"


def test_fp8_rings_over_more_than_8_ranks_are_what_nccl_avoids():
    """enqueue.cc multiplies an fp8 ring's time by 1024 beyond 8 ranks (the time NCCL
    compares); what the ring takes is unchanged."""
    fp8 = Comm.for_system("dgx-h100", nodes=2, dtype="float8_e4m3")
    f32 = Comm.for_system("dgx-h100", nodes=2)
    a, b = predict("all_reduce", GiB, fp8, "RING", "SIMPLE"), predict("all_reduce", GiB, f32, "RING", "SIMPLE")
    assert a.time == pytest.approx(1024 * b.time)
    assert measured.measured_time(a, fp8) == pytest.approx(measured.measured_time(b, f32))
    e = cl.estimate("all_reduce", cl.GpuCluster("dgx-h100", 2), GiB, dtype="float8_e4m3")
    assert e.nccl_algorithm != "RING"


# ----------------------------------------------------------------- launch and registration

def test_one_process_driving_several_gpus_has_a_floor():
    node = cl.nvswitch_node("dgx-h100", gpus=4)
    alone = cl.estimate("all_reduce", node, KiB)
    driven = cl.estimate("all_reduce", node, KiB, launch="gpus-per-process=4")
    assert driven.time == pytest.approx(4 * measured.LAUNCH) and driven.time > alone.time
    graph = cl.estimate("all_reduce", node, KiB, launch="gpus-per-process=4+graph")
    assert graph.time == pytest.approx(max(alone.time, 4 * measured.LAUNCH_GRAPH))
    big = cl.estimate("all_reduce", node, GiB, launch="gpus-per-process=4")
    assert big.time == pytest.approx(cl.estimate("all_reduce", node, GiB).time)
    assert "4 GPUs" in driven.reason
    with pytest.raises(CollectivesError, match="4 per node"):
        cl.estimate("all_reduce", node, KiB, launch="gpus-per-process=8")
    with pytest.raises(CollectivesError, match="not understood"):
        cl.estimate("all_reduce", node, KiB, launch="threads=4")
    with pytest.raises(CollectivesError, match="NCCL's model"):
        cl.estimate("all_reduce", node, KiB, model="ideal", launch="gpus-per-process=4")


def test_a_call_across_nodes_over_nccls_own_transport_pays_its_network_latency():
    """NET_LATENCY: once per call across nodes over InfiniBand or RoCE, in the time
    nccl-tests would measure and in the answer's latency part; never on one node, nor
    over gIB (whose plugin reports its own latency to the tuner); NCCL's pick and the
    tuner's own time do not move."""
    def at(spec, size=KiB, net=None):
        topo = parse_topology(spec)
        if net is None:
            return cl.estimate("all_reduce", topo, size)
        with cl.nccl.validation.constants({"NET_LATENCY": net}):
            return cl.estimate("all_reduce", topo, size)
    for spec in ("dgx-h100:2", "dgx-a100:2:nics=16x100:fabric=roce", "dgx-h100:8"):
        with_, without = at(spec), at(spec, net=0.0)
        assert with_.time - without.time == pytest.approx(measured.NET_LATENCY)
        assert with_.latency_time - without.latency_time == pytest.approx(measured.NET_LATENCY)
        assert (with_.nccl_algorithm, with_.protocol, with_.tuner_time) == \
               (without.nccl_algorithm, without.protocol, without.tuner_time)
    for spec in ("dgx-h100:1", "dgx-b200:2:fabric=gib"):
        assert at(spec).time == at(spec, net=0.0).time
    assert 0 < measured.NET_LATENCY < 20e-6


def test_registered_buffers_run_nccls_symmetric_kernels():
    """On one NVLink domain: NCCL's symmetric kernel and its own model (sym_kernels.cc:
    RSxLDMC_AGxSTMC moves nBytes/N + nBytes at up to 480 GB/s on Hopper after 7.8 us)."""
    node = cl.nvswitch_node("dgx-h100", gpus=4)
    e = cl.estimate("all_reduce", node, 16 * MiB, registered=True)
    assert e.nccl_algorithm == "AllReduce_RSxLDMC_AGxSTMC" and e.algorithm == "nvls"
    bus = 16 * MiB / 4 + 16 * MiB
    assert e.tuner_time * 1e6 == pytest.approx(7.8 + bus / (480 * 2**30 / 1e6), rel=0.02)
    assert e.time >= e.tuner_time
    across = cl.estimate("all_reduce", cl.GpuCluster("dgx-h100", 2), 16 * MiB, registered=True)
    assert across.nccl_algorithm in ("NVLS_TREE", "TREE", "RING") and "no symmetric kernel" in across.reason
    f64 = cl.estimate("all_reduce", node, 16 * MiB, registered=True, dtype="float64")
    assert f64.nccl_algorithm in ("RING", "NVLS", "TREE")           # the kernels do not reduce double
    with pytest.raises(CollectivesError, match="own model"):
        cl.estimate("all_reduce", node, 16 * MiB, "ring", registered=True)
    assert symmetric.pick("all_gather", 16 * MiB, comm_for(node)).name.startswith("AllGather")


# ----------------------------------------------------------------- flags reach the model

def test_an_overridden_bandwidth_scales_nccls_figures():
    """--bandwidth 1e9 on a DGX H100 node: NCCL's per-link figures are the preset's times
    1e9 / 450e9, so a large all-reduce takes about 450 times as long; never below the
    lower bound, and the answer says why."""
    base = cl.estimate("all_reduce", cl.nvswitch_node("dgx-h100"), GiB)
    slow = cl.estimate("all_reduce", parse_topology("dgx-h100:1", bandwidth=1e9), GiB)
    assert slow.time / base.time == pytest.approx(450, rel=0.1)
    assert slow.time >= slow.bound.time and slow.efficiency <= 1
    assert "scaled" in slow.reason and "x0.002222" in slow.reason
    node = cl.nvswitch_node("dgx-h100", bandwidth=225e9)
    assert cl.estimate("all_reduce", node, GiB).time == pytest.approx(2 * base.time, rel=0.05)


def test_gpu_cluster_link_overrides_reach_nccls_model():
    two = cl.GpuCluster("dgx-h100", 2)
    half_nic = cl.GpuCluster("dgx-h100", 2, nic_bandwidth=25e9)
    half_nvl = cl.GpuCluster("dgx-h100", 2, nvlink_bandwidth=225e9)
    t = {k: cl.estimate("all_reduce", c, 4 * GiB, "ring").time for k, c in
         (("base", two), ("nic", half_nic), ("nvl", half_nvl))}
    assert t["nic"] / t["base"] == pytest.approx(2, rel=0.05)       # a ring across nodes: the NIC's speed
    assert t["nvl"] / t["base"] == pytest.approx(2, rel=0.05)       # and the NVLink it crosses
    slow = cl.GpuCluster("dgx-h100", 2, nic_latency=100e-6)          # the preset's 0.675 us per link x 148
    small, fast = cl.estimate("all_reduce", slow, 8), cl.estimate("all_reduce", two, 8)
    assert small.time > 4 * 100e-6 and small.time >= small.bound.time  # four links to the other node
    assert small.time > 10 * fast.time and "network latencies x148.1" in small.reason


def test_oversubscription_reaches_all_to_all_and_says_what_it_does_to_rings():
    """Across Scalable Units an all-to-all sends most of its bytes through the leaves'
    uplinks, which oversubscription 4 narrows to a quarter; a ring crosses an uplink once
    per channel and keeps its time, which the answer says."""
    full, over = (cl.parse_topology("h100-cluster:64", oversubscription=o) for o in (1, 4))
    a2a = [cl.estimate("all_to_all", t, GiB).time for t in (full, over)]
    assert a2a[1] / a2a[0] == pytest.approx(4 * 32 / 63, rel=0.05)  # 32 of 63 other nodes are in the other SU
    ring = [cl.estimate("all_reduce", t, GiB, "ring") for t in (full, over)]
    assert ring[1].time == pytest.approx(ring[0].time) and "leaf uplinks" in ring[1].reason


PRESETS = ["dgx-a100", "dgx-a800", "dgx-h100", "dgx-h200", "dgx-h800", "dgx-b200", "dgx-b300", "gb200-tray",
           "gb300-tray", "gb200-nvl72", "gb300-nvl72"]
COLLECTIVES = ["all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce", "send",
               "gather"]


def test_no_nccl_answer_falls_below_its_lower_bound():
    """Random presets, NIC counts, GPUs per node, overridden bandwidths and latencies,
    sizes (whole elements or not), dtypes, launch modes and registration: every NCCL
    answer is finite and at least its lower bound (efficiency at most 100%)."""
    rng = random.Random(2026)
    checked = 0
    for _ in range(500):
        preset = rng.choice(PRESETS)
        nodes = rng.choice([1, 1, 2, 3, 4, 8])
        spec = f"{preset}:{nodes}"
        if nodes > 1 and rng.random() < 0.3:
            spec += f":nics={rng.choice([1, 2, 4, 8, 16])}x{rng.choice([100, 200, 400, 800])}"
        if rng.random() < 0.2:
            spec += f":gpus={rng.randint(1, hw.gpu_system(preset).gpus_per_node)}"
        topo = parse_topology(spec, bandwidth=rng.choice([None, None, 1e9, 1e11, 5e12]),
                              latency=rng.choice([None, None, 0.0, 1e-7, 1e-3]))
        kw = {}
        per_node = getattr(topo, "gpus_per_node", topo.num_ranks)
        if rng.random() < 0.2:
            kw["launch"] = f"gpus-per-process={rng.randint(1, per_node)}"
        if rng.random() < 0.15:
            kw["registered"] = True
        size = rng.choice([1, 7, 100, 4 * KiB, 64 * KiB, MiB, 16 * MiB, GiB, 8 * GiB])
        dtype = rng.choice(["float32", "float16", "int8", "float8_e4m3", "float64"])
        e = cl.estimate(rng.choice(COLLECTIVES), topo, size, dtype=dtype, **kw)
        assert math.isfinite(e.time) and e.time >= e.bound.time * (1 - 1e-9), (spec, e)
        assert e.efficiency <= 1 + 1e-9
        checked += 1
    assert checked == 500


def test_one_gpu_per_node_searches_as_nccl():
    """One GPU and one 400G NIC per node: one ring channel at the 48 GB/s PCIe path,
    doubled by NCCL's DupChannels into 2 of 24 GB/s."""
    g = search(hw.NCCL_PROFILES["hopper"], nodes=2, ppn=1, nics=1)["ring"]
    assert (g.channels, g.bw_inter) == (2, 24.0)


@pytest.mark.parametrize("spec, axes", [("dgx-h100:16:nics=2x200", ["node"]), ("dgx-a100:4:nics=4x200", ["node"]),
                                         ("dgx-h100:4:nics=2x400", ["node"])])
def test_groups_that_share_a_nodes_nics_get_their_share(spec, axes):
    """Over axes="node" every GPU's group runs at once: with fewer NICs than GPUs they share
    them, so NCCL's model (which sees one communicator alone) is scaled to each one's share
    and never answers below the bound (it took 85 ms against a 322 ms bound on 2x200G)."""
    topo = cl.parse_topology(spec)
    e = cl.estimate("all_reduce", topo, 1 << 30, axes=axes, model="nccl")
    assert e.time >= e.bound.time
    alone = cl.parse_topology(spec.split(":nics=")[0])      # a NIC per GPU: nothing shared
    full = cl.estimate("all_reduce", alone, 1 << 30, axes=axes, model="nccl")
    nics, rate = spec.split(":nics=")[1].split("x")
    per_gpu = int(nics) * float(rate) / topo.gpus_per_node / (float(alone.nic_rate) / 1e9 * 8)
    assert e.time == pytest.approx(full.time / per_gpu, rel=0.15)
