"""Lower bounds on mesh views, sends and multi-slice TPU axes: no answer below its own bound.

A program's mesh laid on a GPU preset (``with_mesh``) must get the same bound as the
same groups asked plainly; a send between two GPU nodes goes through one NIC each
side; a collective over ``slice`` on a TPU multi-slice system shares each host's DCN
port between the host's chips. The property test draws random (topology, mesh, axes,
collective, size) and checks every answer, under both models, against its bound.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

import collectives_lib as cl
from collectives_lib.bounds import lower_bound
from collectives_lib.errors import CollectivesError
from collectives_lib.topology import with_mesh

GIB = 2**30


@pytest.mark.parametrize("model", ["ideal", "nccl"])
def test_mesh_axis_across_nodes_has_the_bound_of_the_same_groups_asked_plainly(model):
    # EP=16 on 16 DGX H100 nodes: each group is two whole nodes, as dgx-h100:2 is
    view = with_mesh(cl.parse_topology("dgx-h100:16"), {"dp": 8, "ep": 16})
    assert view.axis_groups(["ep"])[0].tolist() == list(range(16))
    on_mesh = cl.estimate("all_to_all", view, GIB, axes=["ep"], model=model)
    plain = cl.estimate("all_to_all", cl.parse_topology("dgx-h100:2"), GIB, model=model)
    assert on_mesh.bound.time == pytest.approx(plain.bound.time, rel=1e-9)
    # half of each GPU's buffer leaves the node through its own 50 GB/s NIC: 10.7 ms, not 2.01
    nic = cl.parse_topology("dgx-h100:2").nic_bandwidth
    assert on_mesh.bound.time == pytest.approx(0.5 * GIB / nic, rel=1e-6)
    assert "each node" in on_mesh.bound.bandwidth_reason
    assert on_mesh.time >= on_mesh.bound.time * (1 - 1e-9)


def test_mesh_group_inside_a_node_reduces_in_the_nvswitch_as_the_node_does():
    # TP=8 on 16 nodes is one node per group: NCCL's NVLS all-reduce is held to the
    # in-network bound, as on one DGX H100
    view = with_mesh(cl.GpuCluster("dgx-h100", 16), {"dp": 16, "tp": 8})
    one = cl.nvswitch_node("dgx-h100")
    for model, algorithm in (("nccl", "auto"), ("ideal", "ring"), ("ideal", "tree")):
        a = cl.estimate("all_reduce", view, GIB, algorithm, axes=["tp"], model=model)
        b = cl.estimate("all_reduce", one, GIB, algorithm, model=model)
        assert (a.algorithm, a.bound.time) == (b.algorithm, pytest.approx(b.bound.time, rel=1e-9))
        assert a.time >= a.bound.time * (1 - 1e-9)
    nvls = cl.estimate("all_reduce", view, GIB, axes=["tp"], model="nccl")
    assert nvls.algorithm == "nvls" and "the network reduces" in nvls.bound.bandwidth_reason


def test_mesh_axis_of_one_gpu_per_node_counts_each_scalable_unit():
    # dp over 64 nodes (2 Scalable Units), one GPU per node, oversubscribed 2:1: the SU's
    # leaf uplink, as for axes="node" on the plain cluster
    base = cl.GpuCluster("dgx-h100", 64, oversubscription=2.0)
    view = with_mesh(base, {"dp": 64, "tp": 8})
    on_mesh = lower_bound("all_to_all", view, GIB, axes=["dp"])
    plain = lower_bound("all_to_all", base, GIB, axes=["node"])
    assert on_mesh.time == pytest.approx(plain.time, rel=1e-9)
    assert "Scalable Unit" in on_mesh.bandwidth_reason


def test_send_between_two_nodes_is_bound_by_one_nic():
    t = cl.parse_topology("dgx-h100:2")
    b = lower_bound("send", t, GIB, src=0, dst=8)
    assert b.bandwidth_time == pytest.approx(GIB / t.nic_bandwidth, rel=1e-9)      # 21.5 ms, not 2.68
    for model in ("ideal", "nccl"):
        e = cl.estimate("send", t, GIB, model=model, src=0, dst=8)
        assert e.bound.time == pytest.approx(b.time) and e.time >= b.time
    # on another rail too (NCCL's PXN: still one NIC per pair)
    assert lower_bound("send", t, GIB, src=0, dst=11).bandwidth_time == pytest.approx(b.bandwidth_time)
    # a send split over routes through other GPUs is held to the cut between the two
    split = cl.estimate("send", t, GIB, "multipath", model="ideal", src=0, dst=8)
    cut = lower_bound("send", t, GIB, src=0, dst=8, multipath=True)
    assert split.bound.time == pytest.approx(cut.time) and cut.time < b.time <= split.time * 2.01


def test_nccl_send_inside_a_node_of_a_larger_communicator_goes_over_nvlink():
    t = cl.parse_topology("dgx-h100:2")
    inside = cl.estimate("send", t, GIB, model="nccl", src=0, dst=1)
    across = cl.estimate("send", t, GIB, model="nccl", src=0, dst=8)
    assert inside.time < across.time / 5
    assert inside.time >= inside.bound.time


@pytest.mark.parametrize("model", ["ideal", "nccl"])
def test_send_over_a_mesh_axis_is_the_pair_in_each_group(model):
    view = with_mesh(cl.parse_topology("dgx-h100:16"), {"dp": 8, "ep": 16})
    # ep group 0 is ranks 0..15: src 0 -> dst 1 stays in node 0, src 0 -> dst 8 leaves it
    near = cl.estimate("send", view, GIB, axes=["ep"], model=model, src=0, dst=1)
    far = cl.estimate("send", view, GIB, axes=["ep"], model=model, src=0, dst=8)
    assert near.time < far.time / 5
    nic = cl.parse_topology("dgx-h100:2").nic_bandwidth
    assert far.bound.bandwidth_time == pytest.approx(GIB / nic, rel=1e-9)
    for e in (near, far):
        assert e.time >= e.bound.time * (1 - 1e-9)
    with pytest.raises(CollectivesError, match="axis"):
        cl.estimate("send", view, GIB, "multipath", axes=["ep"], model="ideal")


def test_slice_axis_counts_the_hosts_shared_dcn_port():
    t = cl.parse_topology("tpu-v5e:16x16*4")
    chips = int(np.prod(t.slice.host_shape))            # 8 chips share one host
    port = t.dcn_bandwidth_per_host
    b = lower_bound("all_reduce", t, GIB, axes=["slice"])
    # every chip of a host runs its own 4-way all-reduce through the host's one port
    assert b.bandwidth_time == pytest.approx(chips * 2 * 3 / 4 * GIB / port, rel=1e-9)
    assert "each host" in b.bandwidth_reason
    e = cl.estimate("all_reduce", t, GIB, axes=["slice"])
    assert e.time >= b.time * (1 - 1e-9) and e.bound.time == pytest.approx(b.time)
    assert sorted(t.host_chips(0).tolist()) == [c for c in range(t.num_ranks) if t.host_of(c) == 0]
    g = lower_bound("all_gather", t, GIB, axes=["slice"])
    assert g.bandwidth_time == pytest.approx(chips * 3 / 4 * GIB / port, rel=1e-9)


# ---------------------------------------------------------------------------
# the property: time >= bound, everywhere
# ---------------------------------------------------------------------------

GPU_BASES = ["dgx-h100:1", "dgx-h100:2", "dgx-h100:4", "dgx-b200:2", "gb200-nvl72:1", "oversubscribed"]
IDEAL_ONLY = ["tpu-v5e:4x4*2", "tpu-v4:2x2x2*2", "ring:8", "torus:4x4"]
COLLECTIVES = ["all_gather", "reduce_scatter", "all_reduce", "all_to_all", "broadcast", "reduce",
               "gather", "send"]


def _factor(n: int, rng: random.Random) -> list[int]:
    """``n`` split into 1 to 3 whole factors, at random."""
    parts = []
    for _ in range(rng.randint(0, 2)):
        divisors = [d for d in range(2, n + 1) if n % d == 0]
        if not divisors:
            break
        d = rng.choice(divisors)
        parts.append(d)
        n //= d
    parts.append(n)
    rng.shuffle(parts)
    return parts


def _case(rng: random.Random):
    name = rng.choice(GPU_BASES + IDEAL_ONLY)
    generic = name.split(":")[0] in ("ring", "torus")
    if name == "oversubscribed":              # 2 Scalable Units of 4 nodes, uplinks at 1/4
        topo = cl.GpuCluster("dgx-h100", 8, nodes_per_su=4, oversubscription=4.0)
    elif generic:
        topo = cl.parse_topology(name, bandwidth=45e9, latency=1e-6)
    else:
        topo = cl.parse_topology(name)
    axes = None
    if name in GPU_BASES and rng.random() < 0.7:
        shape = _factor(topo.num_ranks, rng)
        names = [f"a{i}" for i in range(len(shape))]
        topo = with_mesh(topo, dict(zip(names, shape)))
        axes = rng.sample(names, rng.randint(1, len(names)))
    elif rng.random() < 0.5 and len(getattr(topo, "axis_names", ())) > 1:
        axes = rng.sample(list(topo.axis_names), rng.randint(1, len(topo.axis_names)))
    coll = rng.choice(COLLECTIVES)
    size = rng.choice([1, 7, 4096, 65537, 1 << 20, (1 << 26) + 3, 1 << 30])
    models = ["ideal"] + (["nccl"] if name in GPU_BASES else [])
    return name, topo, axes, coll, size, models


def test_no_answer_below_its_lower_bound_on_random_meshes_axes_and_sizes():
    rng = random.Random(25)
    checked = 0
    for _ in range(240):
        name, topo, axes, coll, size, models = _case(rng)
        options = {}
        if coll == "send":
            n = len(topo.axis_groups(axes)[0])
            if n < 2:
                continue
            options = dict(zip(("src", "dst"), rng.sample(range(n), 2)))
        for model in models:
            try:
                e = cl.estimate(coll, topo, size, axes=axes, model=model, **options)
            except CollectivesError:
                continue          # refused in one line (gather over an axis, say): not an answer
            assert e.time >= e.bound.time * (1 - 1e-9), (name, topo, axes, coll, size, model, options,
                                                         str(e), str(e.bound))
            checked += 1
    assert checked >= 220


def test_a_mesh_axis_of_whole_nodes_has_the_bound_of_that_many_nodes_plainly():
    # the property behind the first test, drawn at random: groups of k whole nodes laid
    # by a mesh on M nodes are bound as dgx-h100:k is, for every collective
    rng = random.Random(7)
    for _ in range(12):
        nodes = rng.choice([2, 4, 8])
        k = rng.choice([d for d in (1, 2, 4, 8) if nodes % d == 0])
        coll = rng.choice(["all_gather", "reduce_scatter", "all_reduce", "all_to_all", "broadcast",
                           "reduce", "gather"])
        view = with_mesh(cl.parse_topology(f"dgx-h100:{nodes}"), {"rest": nodes // k, "grp": 8 * k})
        plain = cl.parse_topology(f"dgx-h100:{k}")
        for network in (False, True):
            a = lower_bound(coll, view, GIB, axes=["grp"], network=network)
            b = lower_bound(coll, plain, GIB, network=network)
            assert a.time == pytest.approx(b.time, rel=1e-9), (nodes, k, coll, network, str(a), str(b))


@pytest.mark.parametrize("model", ["ideal", "nccl"])
def test_sends_of_every_group_at_once_share_the_links_their_routes_cross(model):
    # over slice on a TPU multi-slice system the 8 chips of a host send through its one port
    t = cl.parse_topology("tpu-v5e:4x4*2")
    if model == "ideal":
        e = cl.estimate("send", t, GIB, axes=["slice"], model=model)
        assert e.bound.bandwidth_time == pytest.approx(8 * GIB / t.dcn_bandwidth_per_host, rel=1e-9)
        assert e.time >= e.bound.time * (1 - 1e-9)
    # on an oversubscribed fabric the pairs of a mesh axis crowd each leaf's uplink: 32 pairs
    # cross one at 4:1, 12.5 GB/s each; NCCL's model, which sees one communicator, slows to it
    base = cl.GpuCluster("dgx-h100", 64, oversubscription=4.0)
    view = with_mesh(base, {"dp": 2, "r": 32, "g": 8})
    e = cl.estimate("send", view, GIB, axes=["dp"], model=model)
    assert e.bound.bandwidth_time == pytest.approx(GIB / (base.nic_bandwidth / 4), rel=1e-9)
    assert e.time >= e.bound.time * (1 - 1e-9)
    alone = cl.estimate("send", base, GIB, model=model, src=0, dst=256)
    assert alone.time < e.time / 3


def test_nccl_model_on_a_mesh_view_sees_the_fabric_of_the_preset_under_it():
    # a mesh over every rank of an oversubscribed cluster is the cluster: NCCL's model must see
    # its 4:1 leaf uplinks and Scalable Units, or it answers below the bound (1.43 ms < 2.68 ms)
    base = cl.GpuCluster("dgx-h100", 8, nodes_per_su=4, oversubscription=4.0)
    view = with_mesh(base, {"a0": 8, "a1": 8})
    on_mesh = cl.estimate("all_to_all", view, 1 << 26, axes=["a0", "a1"], model="nccl")
    plain = cl.estimate("all_to_all", base, 1 << 26, model="nccl")
    assert on_mesh.time == pytest.approx(plain.time, rel=1e-12)
    assert on_mesh.bound.time == pytest.approx(plain.bound.time, rel=1e-12)
    assert on_mesh.time >= on_mesh.bound.time


# -- a mesh axis inside one node is joined by that node's NVSwitch ------------------------------

def test_a_mesh_axis_inside_one_node_runs_nvls_as_the_gpu_axis_does():
    """A tp=8 axis laid on two DGX H100s once got ring under the ideal model (4.18 ms for
    1 GiB) while the cluster's own gpu axis, the same GPUs, got NVLS (2.68 ms): the
    registry saw one switch only on a Switch or on axes=gpu."""
    base = cl.GpuCluster("dgx-h100", 2)
    view = with_mesh(base, {"dp": 2, "tp": 8})
    plain = cl.estimate("all_reduce", base, 2**30, model="ideal", axes="gpu")
    meshed = cl.estimate("all_reduce", view, 2**30, model="ideal", axes="tp")
    assert plain.algorithm == meshed.algorithm == "nvls"
    assert meshed.time == pytest.approx(plain.time, rel=1e-12)
    assert meshed.time >= meshed.bound.time * (1 - 1e-9)
    # dp groups span both nodes: no one switch joins them, and nvls says so
    with pytest.raises(CollectivesError, match="nvls needs one switch"):
        cl.estimate("all_reduce", view, 2**30, model="ideal", axes="dp", algorithm="nvls")


def test_a_mesh_on_one_node_runs_nvls_on_any_axis_and_shares_the_switch():
    """On one NVSwitch node every mesh group is joined by the node's switch. Two groups of
    four run NVLS at once, each GPU over its own link: (N+1)/N V / W with N = 4, plus
    the NVLS latency, the same as one group of four alone."""
    node = cl.nvswitch_node("dgx-h100")
    view = with_mesh(node, {"a": 4, "b": 2})
    both = cl.estimate("all_reduce", view, 2**30, model="ideal", axes="a", algorithm="nvls")
    W = node.bandwidth
    assert both.time == pytest.approx(5 / 4 * 2**30 / W, rel=0.02)
    for axes in ("a", "b", None):
        e = cl.estimate("all_reduce", view, 2**30, model="ideal", axes=axes)
        forced = [cl.estimate("all_reduce", view, 2**30, model="ideal", axes=axes, algorithm=a).time
                  for a in ("ring", "nvls")]
        assert e.time <= min(forced) * (1 + 1e-12)
