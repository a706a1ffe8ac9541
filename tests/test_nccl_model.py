"""NCCL's model against figures recomputed by hand from NCCL 2.30.7's tuning formulas.

Every expected number below was computed twice, with a float implementation of
the formulas and an exact-fraction re-derivation, from NCCL's source
(src/graph/tuning.cc, search.cc, enqueue.cc at v2.30.7-1): latencies in us,
bandwidths in GB/s, times in us. They are the tuner's own predictions, not
measurements; tests/test_validation.py holds the model to measurements.
"""
import json

import pytest

import collectives_lib as cl
from collectives_lib.nccl import tuner
from collectives_lib.nccl.graphs import launched_channels, search
from collectives_lib import hardware as hw

KiB, MiB, GiB = 2**10, 2**20, 2**30
SIZES = (KiB, 64 * KiB, MiB, 64 * MiB, 4 * GiB)


def times(comm, collective="all_reduce", sizes=SIZES):
    return {size: {p.label: p.time * 1e6 for p in tuner.predict_all(collective, size, comm)}
            for size in sizes}


# -- the channel search --------------------------------------------------------------

@pytest.mark.parametrize("system, nodes, ppn, pattern, want", [
    ("dgx-h100", 1, 8, "ring", (12, 30.0, 30.0)),
    ("dgx-h100", 1, 8, "nvls", (8, 40.0, 60.0)),
    ("dgx-h100", 2, 8, "ring", (8, 48.0, 48.0)),
    ("dgx-h100", 16, 8, "nvls", (8, 40.0, 48.0)),
    ("dgx-h100", 64, 1, "ring", (2, 24.0, 24.0)),
    ("dgx-h100", 64, 1, "tree", (2, 48.0, 24.0)),
    ("dgx-a100", 1, 8, "ring", (12, 20.0, 20.0)),
    ("dgx-a100", 2, 8, "ring", (8, 24.0, 24.0)),
    # search.cc, pass 2: a tree raises bwIntra up the ladder while it is below twice
    # bwInter and the channels still fit a GPU's NVLinks (8 x 30 <= 240, 8 x 48 > 240)
    ("dgx-a100", 2, 8, "tree", (8, 30.0, 24.0)),
    ("dgx-h100", 2, 8, "tree", (8, 48.0, 48.0)),      # 48 is the top of SM90's ladder
    ("dgx-b200", 1, 8, "ring", (16, 45.0, 45.0)),
    ("dgx-b200", 1, 8, "nvls", (8, 80.0, 90.0)),
    ("dgx-b200", 2, 8, "ring", (8, 48.0, 48.0)),
    ("gb200-nvl72", 1, 72, "nvls", (32, 20.0, 40.0)),
])
def test_the_channel_search_finds_what_nccl_prints(system, nodes, ppn, pattern, want):
    g = search(hw.gpu_system(system).nccl, nodes=nodes, ppn=ppn)[pattern]
    assert (g.channels, g.bw_intra, g.bw_inter) == want


def test_a_tree_on_two_nodes_of_16_slow_nics_is_priced_above_the_ring():
    """8 A100s with 16 NICs of 100 Gb/s (OCI BM.GPU4.8): 16 rings of 12 GB/s, and trees
    raised to 15 GB/s inside the node, which is what NCCL's tuner reads on two nodes;
    so at 8 GiB NCCL picks the tree, whose bus bandwidth can exceed the NICs' 200 GB/s."""
    topo = cl.parse_topology("dgx-a100:2:nics=16x100:fabric=roce")
    comm = cl.nccl.comm.comm_for(topo)
    assert (comm.graphs["ring"].channels, comm.graphs["ring"].bw_intra) == (16, 12.0)
    assert (comm.graphs["tree"].channels, comm.graphs["tree"].bw_intra) == (16, 15.0)
    pick = tuner.choose("all_reduce", 8 * GiB, comm)
    assert pick.algorithm == "TREE"
    ring = tuner.predict("all_reduce", 8 * GiB, comm, "RING", "SIMPLE")
    assert pick.time < ring.time


def test_launched_channels_on_dgx_h100():
    p = hw.gpu_system("dgx-h100").nccl
    assert launched_channels(search(p, nodes=1, ppn=8), nodes=1, sm=90) == 24
    assert launched_channels(search(p, nodes=16, ppn=8), nodes=16, sm=90) == 16


# -- 8 x H100, one node ------------------------------------------------------------------

ONE_NODE = {
    KiB: {"TREE/LL": 15.2261, "TREE/LL128": 31.5080, "TREE/SIMPLE": 64.4069, "RING/LL": 15.0127,
          "RING/LL128": 40.6054, "RING/SIMPLE": 56.0050, "NVLS/SIMPLE": 25.0038},
    64 * KiB: {"TREE/LL": 17.7064, "TREE/LL128": 32.3480, "TREE/SIMPLE": 65.0596, "RING/LL": 15.8134,
               "RING/LL128": 40.9463, "RING/SIMPLE": 56.3186, "NVLS/SIMPLE": 25.2409},
    MiB: {"TREE/LL": 63.3231, "TREE/LL128": 45.0685, "TREE/SIMPLE": 77.0640, "RING/LL": 28.0142,
          "RING/LL128": 46.1405, "RING/SIMPLE": 61.0972, "NVLS/SIMPLE": 28.8551},
    64 * MiB: {"TREE/LL": 1555.1377, "TREE/LL128": 610.4239, "TREE/SIMPLE": 570.9585, "RING/LL": 847.9114,
               "RING/LL128": 395.1909, "RING/SIMPLE": 382.2236, "NVLS/SIMPLE": 271.7238},
    4 * GiB: {"TREE/LL": 98571.2128, "TREE/LL128": 33377.5194, "TREE/SIMPLE": 26000.1929,
              "RING/LL": 53321.3317, "RING/LL128": 22734.4187, "RING/SIMPLE": 20934.3132,
              "NVLS/SIMPLE": 15815.3209},
}
SIXTEEN_NODES = {
    KiB: {"TREE/LL": 55.3312, "TREE/LL128": 99.5104, "TREE/SIMPLE": 176.4093, "RING/LL": 311.6996,
          "RING/LL128": 559.6069, "RING/SIMPLE": 1190.0053, "NVLS_TREE/SIMPLE": 192.2056},
    64 * KiB: {"TREE/LL": 67.7982, "TREE/LL128": 100.6078, "TREE/SIMPLE": 177.2924, "RING/LL": 317.9749,
               "RING/LL128": 560.0429, "RING/SIMPLE": 1190.3387, "NVLS_TREE/SIMPLE": 192.5573},
    MiB: {"TREE/LL": 297.0860, "TREE/LL128": 117.2244, "TREE/SIMPLE": 193.5336, "RING/LL": 413.5984,
          "RING/LL128": 566.6871, "RING/SIMPLE": 1671.4187, "NVLS_TREE/SIMPLE": 197.9164},
    64 * MiB: {"TREE/LL": 7795.5534, "TREE/LL128": 855.7414, "TREE/SIMPLE": 861.7438, "RING/LL": 6839.4996,
               "RING/LL128": 1013.1734, "RING/SIMPLE": 2012.7947, "NVLS_TREE/SIMPLE": 558.0493},
    4 * GiB: {"TREE/LL": 495437.8178, "TREE/LL128": 43659.0060, "TREE/SIMPLE": 35266.0021,
              "RING/LL": 418097.1749, "RING/LL128": 29588.2980, "RING/SIMPLE": 23860.8587,
              "NVLS_TREE/SIMPLE": 23606.5564},
}
ONE_TWENTY_EIGHT_NODES = {
    KiB: {"TREE/LL": 85.3312, "TREE/LL128": 150.5104, "TREE/SIMPLE": 260.4093, "RING/LL": 2484.5003,
          "RING/LL128": 4434.8070, "RING/SIMPLE": 9657.2053, "NVLS_TREE/SIMPLE": 317.6056},
    MiB: {"TREE/LL": 327.0860, "TREE/LL128": 168.2244, "TREE/SIMPLE": 277.5336, "RING/LL": 2587.1012,
          "RING/LL128": 4441.9359, "RING/SIMPLE": 13525.5360, "NVLS_TREE/SIMPLE": 323.3558},
    4 * GiB: {"TREE/LL": 495467.8178, "TREE/LL128": 43710.0060, "TREE/SIMPLE": 35350.0021,
              "RING/LL": 423148.4188, "RING/LL128": 33663.4989, "RING/SIMPLE": 35867.8560,
              "NVLS_TREE/SIMPLE": 23893.2758},
}


@pytest.mark.parametrize("nodes, expected, picks", [
    (1, ONE_NODE, {KiB: "RING/LL", 64 * KiB: "RING/LL", MiB: "RING/LL", 64 * MiB: "NVLS/SIMPLE",
                   4 * GiB: "NVLS/SIMPLE"}),
    (16, SIXTEEN_NODES, {KiB: "TREE/LL", 64 * KiB: "TREE/LL", MiB: "TREE/LL128",
                         64 * MiB: "NVLS_TREE/SIMPLE", 4 * GiB: "NVLS_TREE/SIMPLE"}),
    (128, ONE_TWENTY_EIGHT_NODES, {KiB: "TREE/LL", MiB: "TREE/LL128", 4 * GiB: "NVLS_TREE/SIMPLE"}),
], ids=["8xH100", "16x8xH100", "128x8xH100"])
def test_all_reduce_times_and_picks_match_the_hand_computed_tables(nodes, expected, picks):
    comm = tuner.Comm.for_system("dgx-h100", nodes=nodes)
    got = times(comm, sizes=tuple(expected))
    for size, row in expected.items():
        assert set(got[size]) == set(row), size
        for label, want in row.items():
            assert got[size][label] == pytest.approx(want, rel=1e-5), (size, label)
        assert tuner.choose("all_reduce", size, comm).label == picks[size]


def test_in_network_reduction_across_nodes_is_nvls_at_every_size():
    comm = tuner.Comm.for_system("dgx-h100", nodes=16, collnet=True)
    want = {KiB: 43.0053, 64 * KiB: 43.3387, MiB: 48.4187, 64 * MiB: 389.7947, 4 * GiB: 22237.8587}
    for size, t in want.items():
        best = tuner.choose("all_reduce", size, comm)
        assert best.label == "NVLS/SIMPLE" and best.time * 1e6 == pytest.approx(t, rel=1e-5)
    got = times(comm, sizes=(KiB,))[KiB]
    assert got["COLLNET_DIRECT/SIMPLE"] == pytest.approx(44.0063, rel=1e-5)
    assert got["COLLNET_CHAIN/SIMPLE"] == pytest.approx(69.2053, rel=1e-5)


def test_all_gather_one_node_and_two_node_nvls_tree():
    comm = tuner.Comm.for_system("dgx-h100", nodes=1)
    got = times(comm, "all_gather", (GiB,))[GiB]
    assert got == pytest.approx({"RING/LL": 6674.0915, "RING/LL128": 2864.0273, "RING/SIMPLE": 2641.9892,
                                 "NVLS/SIMPLE": 5181.0232}, rel=1e-5)
    two = tuner.Comm.for_system("dgx-h100", nodes=2)
    best = tuner.choose("all_reduce", 4 * GiB, two)
    assert best.label == "NVLS_TREE/SIMPLE" and best.time * 1e6 == pytest.approx(17512.78, rel=1e-5)


def test_pat_with_one_gpu_per_node():
    comm = tuner.Comm.for_system("dgx-h100", nodes=64, ppn=1)
    for size, (label, t) in {64 * KiB: ("PAT/SIMPLE", 213.02), MiB: ("PAT/SIMPLE", 240.33),
                             16 * MiB: ("PAT/SIMPLE", 677.23), GiB: ("RING/SIMPLE", 22910.50)}.items():
        best = tuner.choose("all_gather", size, comm)
        assert best.label == label and best.time * 1e6 == pytest.approx(t, abs=0.01)


def test_the_nvls_bus_bandwidth_on_8xh100_is_476():
    comm = tuner.Comm.for_system("dgx-h100", nodes=1)
    assert tuner.bus_bandwidth("AllReduce", "NVLS", "SIMPLE", comm) == pytest.approx(476.0)
    assert tuner.bus_bandwidth("AllReduce", "RING", "SIMPLE", comm) == pytest.approx(360.0)


def test_nvls_off_and_forced_protocols():
    node = cl.nvswitch_node("dgx-h100")
    e = cl.estimate("all_reduce", node, 4 * GiB, nvls=False)
    assert (e.nccl_algorithm, e.protocol) == ("RING", "SIMPLE")
    assert e.tuner_time * 1e6 == pytest.approx(20934.3132, rel=1e-5)
    e = cl.estimate("all_reduce", node, 4 * GiB, "ring", protocol="LL128")
    assert e.protocol == "LL128" and e.tuner_time * 1e6 == pytest.approx(22734.4187, rel=1e-5)
    with pytest.raises(cl.CollectivesError, match="NCCL does not run recursive_doubling"):
        cl.estimate("all_reduce", node, GiB, "recursive_doubling")
    with pytest.raises(cl.CollectivesError, match="protocols .* belong to NCCL's model"):
        cl.estimate("all_reduce", node, GiB, model="ideal", protocol="LL")


def test_the_default_model_is_nccl_on_gpu_presets_and_ideal_elsewhere():
    assert cl.estimate("all_reduce", cl.nvswitch_node("dgx-h100"), MiB).model == "nccl"
    assert cl.estimate("all_reduce", cl.GpuCluster("dgx-h100", 4), MiB).model == "nccl"
    assert cl.estimate("all_reduce", cl.tpu_slice("v5e", "4x4"), MiB).model == "ideal"
    assert cl.estimate("all_reduce", cl.Switch(8, bandwidth=1e11), MiB).model == "ideal"
    with pytest.raises(cl.CollectivesError, match="NCCL's model needs a GPU system preset"):
        cl.estimate("all_reduce", cl.Ring(8, bandwidth=1e9), MiB, model="nccl")


def test_all_to_all_falls_off_a_cliff_from_one_node_to_two():
    one = cl.estimate("all_to_all", cl.nvswitch_node("dgx-h100"), GiB)
    two = cl.estimate("all_to_all", cl.GpuCluster("dgx-h100", 2), GiB)
    assert one.busbw / two.busbw > 3.5
    assert 40e9 < cl.estimate("all_to_all", cl.GpuCluster("dgx-h100", 16), GiB).busbw < 50e9

def test_nccl_runs_all_to_all_as_grouped_sends_only():
    """NCCL has no all-to-all algorithm: a group of sends and receives (src/device/
    all_to_all is ncclGroupStart + ncclSend/ncclRecv per peer in nccl-tests' alltoall.cu).
    The ideal model's two-stage hierarchical exchange is not what it runs."""
    e = cl.estimate("all_to_all", cl.GpuCluster("dgx-h100", 16), 4 * KiB)
    assert (e.algorithm, e.nccl_algorithm, e.protocol) == ("direct", "P2P", None)
    assert e.alternatives == ()
    with pytest.raises(cl.CollectivesError, match="NCCL does not run hierarchical for all_to_all here"):
        cl.estimate("all_to_all", cl.GpuCluster("dgx-h100", 16), 4 * KiB, "hierarchical")
    assert cl.estimate("all_to_all", cl.GpuCluster("dgx-h100", 16), 4 * KiB, "hierarchical",
                       model="ideal").algorithm == "hierarchical"


def test_estimate_json_is_strict_and_carries_the_bound():
    e = cl.estimate("all_reduce", cl.GpuCluster("dgx-h100", 16), 4 * GiB)
    obj = json.loads(json.dumps(e.as_dict(), allow_nan=False))
    assert obj["model"] == "nccl" and obj["nccl_algorithm"] == "NVLS_TREE"
    assert 0 < obj["lower_bound"]["time_s"] <= obj["time_s"] and 0 < obj["efficiency"] <= 1
    assert obj["nccl_tuner_time_s"] == pytest.approx(23606.5564e-6, rel=1e-5)


def test_channels_launched_per_call_follow_topoGetAlgoInfo():
    """NCCL 2.30.7's enqueue.cc: rings and trees drop channels while nBytes < nc x nt x
    threshold (ring LL: 512 threads x 8 B x nRanks; LL128: 640 x 8; Simple: 512 x 64), NVLS
    runs nvlsChannels (16 on H100), whatever the communicator's 24."""
    from collectives_lib.nccl.tuner import Comm, call_channels
    comm = Comm.for_system("dgx-h100", nodes=1, ppn=8)
    assert comm.channels == 24
    ring_ll = [call_channels("RING", "LL", n, comm) for n in (4096, 65536, 2**19, 2**20)]
    assert ring_ll == [1, 2, 16, 24]                 # 64 KiB / (512 x 64) = 2; 512 KiB = 16
    assert call_channels("RING", "LL128", 2**16, comm) == 12      # 65536 / (640 x 8) = 12.8
    assert call_channels("RING", "SIMPLE", 2**20, comm) == 24     # 512 x 64 x 24 = 768 KiB
    assert call_channels("RING", "SIMPLE", 2**19, comm) == 16
    assert call_channels("TREE", "LL", 2**16, comm) == 16         # no x nRanks for trees
    assert call_channels("NVLS", "SIMPLE", 2**30, comm) == 16
    b200 = Comm.for_system("dgx-b200", nodes=1, ppn=8)
    assert call_channels("NVLS", "SIMPLE", 2**30, b200) == 24     # NVLS_NCHANNELS_SM100_NVL


def test_the_estimate_reports_the_channels_of_its_call():
    small = cl.estimate("all_reduce", cl.parse_topology("dgx-h100:1"), 4096)
    large = cl.estimate("all_reduce", cl.parse_topology("dgx-h100:1"), 2**30)
    assert (small.nccl_algorithm, small.channels) == ("RING", 1)
    assert (large.nccl_algorithm, large.channels) == ("NVLS", 16)
    assert "over 1 channels" not in small.bottleneck
