"""NCCL's algorithms as schedules: the double binary tree, NVLS, NVLS_TREE, CollNet and
PAT. Each is replayed on data over many sizes and held to its closed form; the
registry test (test_registry.py) walks them too."""
import math

import numpy as np
import pytest

import collectives_lib as cl
from collectives_lib import costs
from collectives_lib.builders import trees

W, LAT = 45e9, 1e-6


def cluster(nodes, **kw):
    return cl.GpuCluster("dgx-h100", nodes, nvlink_bandwidth=4 * W, nic_bandwidth=W / 2,
                         nvlink_latency=LAT / 4, nic_latency=LAT, **kw)


# ----------------------------------------------------------------- the double binary tree

def _children(parent, r):
    return sorted(np.nonzero(parent == r)[0].tolist())


def test_binary_tree_is_nccls():
    """trees.cc's picture of 14 ranks: 0 -> 8 -> {4, 12}, 4 -> {2, 6}, 12 -> {10, 13}."""
    t = trees.nccl_binary_tree(14)
    assert t[0] == -1 and _children(t, 0) == [8]
    assert _children(t, 8) == [4, 12] and _children(t, 4) == [2, 6]
    assert _children(t, 12) == [10, 13] and _children(t, 10) == [9, 11]
    assert all(_children(t, r) == [] for r in range(1, 14, 2))


def test_second_tree_mirrors_for_even_and_shifts_for_odd_counts():
    first, second = trees.double_binary_tree(12)
    assert second[11] == -1 and _children(second, 11) == [3] and _children(second, 3) == [1, 7]
    assert all(second[11 - r] == (-1 if first[r] < 0 else 11 - first[r]) for r in range(12))
    first, second = trees.double_binary_tree(13)
    assert second[1] == -1 and _children(second, 1) == [9]
    assert all(second[(r + 1) % 13] == (-1 if first[r] < 0 else (first[r] + 1) % 13) for r in range(13))


@pytest.mark.parametrize("n", [2, 4, 6, 8, 10, 16, 32])
def test_every_node_is_interior_in_at_most_one_tree_for_even_counts(n):
    first, second = trees.double_binary_tree(n)
    inner = [set(t[t >= 0].tolist()) for t in (first, second)]
    assert not inner[0] & inner[1]
    for t in (first, second):
        height, depth = trees.tree_levels(t)
        assert height.max() == depth.max() == math.ceil(math.log2(n))


def test_tree_levels_reject_what_is_not_a_tree():
    with pytest.raises(cl.CollectivesError, match="exactly one root, got 2"):
        trees.tree_levels(np.array([-1, -1, 0]))
    with pytest.raises(cl.CollectivesError, match="has a cycle"):
        trees.tree_levels(np.array([-1, 2, 1]))


@pytest.mark.parametrize("nodes", [1, 2, 3, 4])
@pytest.mark.parametrize("gpus", [2, 3, 4, 8])
@pytest.mark.parametrize("chunks", [1, 3])
def test_tree_all_reduce_replays_on_clusters(nodes, gpus, chunks):
    sched = trees.pipelined_tree_all_reduce(trees.cluster_trees(nodes, gpus), chunks)
    cl.check(sched)
    H = gpus - 1 + math.ceil(math.log2(nodes))
    # NCCL's latency count 2 ((ppn - 1) + log2 nNodes) hops, plus the pipeline fill
    assert sched.num_steps == 2 * H + chunks - 1


@pytest.mark.parametrize("axes", [None, "node", "gpu"])
@pytest.mark.parametrize("nodes", [1, 2, 4])
def test_tree_replays_on_gpu_clusters(nodes, axes):
    topo = cl.GpuCluster("dgx-h100", nodes)
    cl.check(cl.build("all_reduce", topo, "tree", axes=axes, chunks=2))


def test_tree_channels_use_every_nic_and_stay_on_their_rails():
    topo = cluster(4)
    V = 2**24
    r = cl.simulate(cl.build("all_reduce", topo, "tree"), topo, V)
    links = topo.links
    nic_up = (links.klass == 2) & (links.src < topo.num_ranks)
    leaf_up = (links.klass == 2) & (links.dst == topo.spine_node)
    assert (r.link_bytes[nic_up] > 0).all()                       # every NIC sends
    assert r.link_bytes[leaf_up].sum() == 0                        # never through the spine
    # a NIC carries its channel's two trees: interior in one (3 sends), a leaf in the other
    assert r.link_bytes[nic_up].max() == pytest.approx(4 * V / (2 * 8))


@pytest.mark.parametrize("n", [2, 3, 5, 8])
@pytest.mark.parametrize("chunks", [1, 2, 4, 8])
def test_tree_on_a_switch_has_ring_bandwidth_and_chain_latency(n, chunks):
    sw = cl.Switch(n, bandwidth=W, latency=LAT / 2)
    sched = cl.build("all_reduce", sw, "tree", chunks=chunks)
    V = sched.round_size(3 * 2**20)   # equal pieces of whole elements (odd n does not divide 3 MiB)
    r = cl.simulate(sched, sw, V)
    assert sched.num_steps == 2 * (n - 1) + chunks - 1
    assert r.time == pytest.approx((2 * n + chunks - 3) * LAT + 2 * (n - 1) / n * V / W, rel=1e-12)
    assert r.time == pytest.approx(costs.tree_all_reduce(n, V, W, LAT, chunks), rel=1e-12)
    # every up-link carries the same: the ring's 2 (n-1)/n V
    up = sw.links.src < n
    assert np.allclose(r.link_bytes[up], 2 * (n - 1) / n * V)


@pytest.mark.parametrize("chunks", [1, 2, 8, 32])
@pytest.mark.parametrize("axes", [None, "node"])
def test_tree_over_two_nodes_meets_its_closed_form(axes, chunks):
    topo = cluster(2)
    sched = cl.build("all_reduce", topo, "tree", axes=axes, chunks=chunks)
    V = 3 * 2**20
    gpus = 8 if axes is None else 1
    want = costs.tree_all_reduce_two_nodes(gpus, V, W / 2, 4 * W, 2 * LAT, LAT / 2, chunks)
    assert cl.simulate(sched, topo, V).time == pytest.approx(want, rel=1e-12)
    if axes == "node":
        assert want == pytest.approx((chunks + 1) * 2 * LAT + V / (W / 2), rel=1e-12)


def test_more_chunks_trade_latency_for_bandwidth_across_nodes():
    """On one switch the n chains keep every link busy in every step, so chunks only
    add steps; across nodes they fill the node tree's pipeline."""
    sw = cl.nvswitch_node()
    big = 2**30
    on_switch = [cl.simulate(cl.build("all_reduce", sw, "tree", chunks=k), sw, big).time for k in (1, 8)]
    assert on_switch[1] - on_switch[0] == pytest.approx(7 * 2 * 0.3e-6, rel=1e-9)
    two = cl.GpuCluster("dgx-h100", 2)
    t = {(k, v): cl.simulate(cl.build("all_reduce", two, "tree", chunks=k), two, v).time
         for k in (1, 64) for v in (2**10, big)}
    assert t[64, big] < 0.8 * t[1, big] and t[64, 2**10] > t[1, 2**10]


def test_tree_does_not_run_on_a_torus_and_chunks_must_be_whole():
    why = cl.algorithms("all_reduce", cl.Torus((4, 4), bandwidth=W), reasons=True)["tree"]
    assert why.startswith("tree is NCCL's algorithm for GPU systems")
    with pytest.raises(cl.CollectivesError, match="chunks must be a whole number >= 1, got 0"):
        cl.build("all_reduce", 4, "tree", chunks=0)


def test_the_seed_tree_is_binomial_tree():
    sched = cl.build("all_reduce", 8, "binomial_tree")
    assert sched.algorithm == "binomial_tree" and sched.num_steps == 6
    assert cl.builders.entry("all_reduce", "tree").nccl == "TREE"
    assert cl.builders.entry("all_reduce", "binomial_tree").nccl is None


# ----------------------------------------------------------------- NVLS

@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 8, 12, 16])
@pytest.mark.parametrize("collective", ["all_gather", "reduce_scatter", "all_reduce"])
def test_nvls_replays(collective, n):
    sched = cl.build(collective, n, "nvls")
    assert sched.algorithm == "nvls"
    cl.check(sched)


@pytest.mark.parametrize("n", [2, 4, 8, 72])
def test_nvls_all_reduce_moves_n_plus_one_over_n_each_way(n):
    sw = cl.Switch(n, bandwidth=450e9, latency=0.3e-6, in_network=True, agent_latency=12.5e-6)
    sched = cl.build("all_reduce", sw, "nvls")
    assert sched.agents == ("switch", "multicast")
    V = n * 2**26
    r = cl.simulate(sched, sw, V)
    up, down = sw.links.src < n, sw.links.dst < n
    assert np.allclose(r.link_bytes[up], (n + 1) / n * V)
    assert np.allclose(r.link_bytes[down], (n + 1) / n * V)
    assert np.allclose(sched.bytes_sent(V)[:n], (n + 1) / n * V)
    assert r.time == pytest.approx(costs.nvls_all_reduce(n, V, 450e9, 12.8e-6), rel=1e-12)
    assert r.time == pytest.approx((n + 1) / n * V / 450e9, rel=1e-12)     # big V: the links
    ring = cl.simulate(cl.build("all_reduce", sw, "ring"), sw, V).time
    assert ring / r.time == pytest.approx(2 * (n - 1) / (n + 1), rel=1e-2)  # 14/9 at n = 8, plus latency


def test_nvls_tiny_all_reduce_pays_four_crossings_of_the_switch():
    node = cl.nvswitch_node("dgx-h100")
    r = cl.simulate(cl.build("all_reduce", node, "nvls"), node, 8)
    assert r.time == pytest.approx(4 * (0.3e-6 + 12.5e-6), rel=1e-3)


def test_nvls_on_the_gpus_of_each_node_of_a_cluster():
    topo = cl.GpuCluster("dgx-h100", 2)
    for coll in ("all_gather", "reduce_scatter", "all_reduce"):
        sched = cl.build(coll, topo, "nvls", axes="gpu")
        cl.check(sched)
        assert set(sched.agents) <= {"nvswitch0", "nvswitch1", "multicast0", "multicast1"}
    sched = cl.build("all_reduce", topo, "nvls", axes="gpu")
    assert sched.agents == ("nvswitch0", "multicast0", "nvswitch1", "multicast1")
    r = cl.simulate(sched, topo, 2**30)
    assert r.link_bytes[topo.links.klass == 2].sum() == 0                # NVLink only


def test_nvls_needs_an_in_network_switch():
    why = cl.algorithms("all_reduce", cl.Switch(8, bandwidth=W), reasons=True)["nvls"]
    assert why.startswith("nvls needs a switch that reduces and multicasts in the network")
    why = cl.algorithms("all_gather", cl.GpuCluster("dgx-h100", 2), reasons=True)["nvls"]
    assert "across nodes NCCL runs nvls_tree" in why
    assert cl.builders.entry("all_gather", "nvls").nccl == "NVLS"
    assert "multicast" not in cl.builders.entries("all_gather")
    assert "multicast" in cl.builders.entries("broadcast")


# ----------------------------------------------------------------- NVLS_TREE

@pytest.mark.parametrize("nodes", [2, 3, 4])
@pytest.mark.parametrize("gpus", [2, 4, 8])
def test_nvls_tree_replays(nodes, gpus):
    sched = cl.builders.hierarchical.nvls_tree_all_reduce(nodes, gpus, chunks=3)
    cl.check(sched)
    H = math.ceil(math.log2(nodes))
    assert sched.num_steps == 2 + (2 * H + 3 - 1) + 2          # NVLS in, tree, NVLS out


def test_nvls_tree_only_the_tree_crosses_the_network():
    topo = cl.GpuCluster("dgx-h100", 4)
    V = 2**28
    sched = cl.build("all_reduce", topo, "nvls_tree")
    cl.check(sched)
    r = cl.simulate(sched, topo, V)
    links = topo.links
    nic_up = (links.klass == 2) & (links.src < topo.num_ranks)
    nvl_up = (links.klass == 1) & (links.src < topo.num_ranks)
    # NVLink: the array into the switch, the slice into the multicast group
    assert np.allclose(r.link_bytes[nvl_up], V + V / 8)
    # a NIC: its rail's two trees over the slice (interior in one, a leaf in the other)
    assert r.link_bytes[nic_up].max() == pytest.approx(2 * V / 8)
    assert r.link_bytes[links.dst == topo.spine_node].sum() == 0


def test_nvls_tree_over_two_nodes_meets_its_closed_form():
    topo = cluster(2)
    for V in (4096, 3 * 2**20, 2**30):
        got = cl.simulate(cl.build("all_reduce", topo, "nvls_tree", chunks=4), topo, V).time
        want = costs.nvls_tree_all_reduce_two_nodes(8, V, W / 2, 4 * W, 2 * LAT,
                                                    LAT / 4 + 12.5e-6, 8 * V / 4 / 1.6e12, 4)
        assert got == pytest.approx(want, rel=1e-12)


def test_nvls_tree_needs_two_nodes_of_nvls():
    why = cl.algorithms("all_reduce", cl.GpuCluster("dgx-h100", 1), reasons=True)["nvls_tree"]
    assert why.startswith("nvls_tree joins nodes with a tree") and "use nvls" in why
    why = cl.algorithms("all_reduce", cl.GpuCluster("dgx-h100", 2), axes="gpu", reasons=True)["nvls_tree"]
    assert why.startswith("nvls_tree runs over every GPU of a GPU cluster")


# ----------------------------------------------------------------- CollNet (InfiniBand SHARP)

@pytest.mark.parametrize("name", ["collnet_direct", "collnet_chain"])
@pytest.mark.parametrize("nodes, per_su", [(2, 32), (3, 32), (4, 32), (3, 2), (4, 1)],
                         ids=["2", "3", "4", "3_in_2su", "4_in_4su"])
def test_collnet_replays(name, nodes, per_su):
    topo = cl.GpuCluster("dgx-h100", nodes, sharp=True, nodes_per_su=per_su)
    sched = cl.build("all_reduce", topo, name)
    cl.check(sched)
    spine = "spine" in sched.agents
    assert spine == (topo.num_sus > 1)
    G = 8
    inside = 2 * (G - 1) if name == "collnet_chain" else 2
    assert sched.num_steps == inside + 2 + (2 if spine else 0)


@pytest.mark.parametrize("build", [cl.builders.hierarchical.collnet_direct_all_reduce,
                                   cl.builders.hierarchical.collnet_chain_all_reduce],
                         ids=["direct", "chain"])
@pytest.mark.parametrize("nodes", [2, 3, 4])
@pytest.mark.parametrize("gpus", [2, 3, 4, 8])
@pytest.mark.parametrize("per_su, rails", [(32, None), (2, None), (1, 2)], ids=["1su", "2su", "su_per_node_2rails"])
def test_collnet_replays_on_nodes_of_any_size(build, nodes, gpus, per_su, rails):
    cl.check(build(nodes, gpus, nodes_per_su=per_su, rails=rails))


@pytest.mark.parametrize("name, formula", [("collnet_direct", costs.collnet_direct_all_reduce),
                                           ("collnet_chain", costs.collnet_chain_all_reduce)])
@pytest.mark.parametrize("V", [4096, 3 * 2**20, 2**30])
def test_collnet_meets_its_closed_form(name, formula, V):
    topo = cluster(3, sharp=True)
    sched = cl.build("all_reduce", topo, name)
    V = sched.round_size(V)   # equal pieces of whole elements over 3 nodes
    got = cl.simulate(sched, topo, V)
    assert got.time == pytest.approx(formula(8, V, W / 2, 4 * W, LAT, LAT / 4), rel=1e-12)
    # every GPU's NIC carries its slice once each way: V / 8
    nic_up = (topo.links.klass == 2) & (topo.links.src < topo.num_ranks)
    assert np.allclose(got.link_bytes[nic_up], V / 8)


def test_collnet_sums_in_the_leaves_and_the_spine():
    topo = cl.GpuCluster("dgx-h100", 4, sharp=True, nodes_per_su=2)
    sched = cl.build("all_reduce", topo, "collnet_direct")
    assert sched.agents == tuple(f"leaf{su}.{g}" for su in (0, 1) for g in range(8)) + ("spine",)
    V = 2**26
    r = cl.simulate(sched, topo, V)
    leaf_up = topo.links.dst == topo.spine_node
    assert np.allclose(r.link_bytes[leaf_up], V / 8)           # one partial sum per rail and SU


def test_collnet_needs_sharp():
    plain = cl.algorithms("all_reduce", cl.GpuCluster("dgx-h100", 2), reasons=True)
    assert plain["collnet_direct"].startswith("collnet_direct needs InfiniBand SHARP")
    big = cl.algorithms("all_reduce", cl.GpuCluster("gb200-nvl72", 2, sharp=True), reasons=True)
    assert big["collnet_chain"].startswith("NCCL runs collnet_chain with at most 8 GPUs per node")
    assert repr(cl.GpuCluster("dgx-h100", 2, sharp=True)) == "GpuCluster('dgx-h100', num_nodes=2, sharp=True)"
    assert cl.GpuCluster("dgx-h100", 2, sharp=True) != cl.GpuCluster("dgx-h100", 2)
    with pytest.raises(cl.CollectivesError, match="sharp must be True or False, got 'yes'"):
        cl.GpuCluster("dgx-h100", 2, sharp="yes")


# ----------------------------------------------------------------- PAT

@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 16, 31, 32, 33])
@pytest.mark.parametrize("collective", ["all_gather", "reduce_scatter"])
def test_pat_replays_for_any_n(collective, n):
    sched = cl.build(collective, n, "pat")
    cl.check(sched)
    assert sched.num_steps == math.ceil(math.log2(n)) if n > 1 else sched.num_steps == 0
    assert np.allclose(sched.bytes_sent(n * 1.0)[:n], n - 1)        # n - 1 blocks each


def test_pat_sends_the_farthest_first_with_the_least_data():
    sched = cl.build("all_gather", 16, "pat")
    dist = [int((t.src[0] - t.dst[0]) % 16) for t in (s.traffic for s in sched.steps)]
    blocks = [len(s.traffic) // 16 for s in sched.steps]
    assert dist == [8, 4, 2, 1] and blocks == [1, 2, 4, 8]


@pytest.mark.parametrize("nodes", [2, 3, 4, 5, 8])
@pytest.mark.parametrize("collective", ["all_gather", "reduce_scatter"])
def test_pat_over_the_nodes_meets_its_closed_form(nodes, collective):
    topo = cluster(nodes)
    sched = cl.build(collective, topo, "pat", axes="node")
    cl.check(sched)
    V = sched.round_size(3 * 2**20)
    want = math.ceil(math.log2(nodes)) * 2 * LAT + (nodes - 1) / nodes * V / (W / 2)
    assert cl.simulate(sched, topo, V).time == pytest.approx(want, rel=1e-12)
    assert want == pytest.approx(costs.pat_all_gather(nodes, V, W / 2, 2 * LAT), rel=1e-12)


def test_pat_is_for_one_gpu_per_node():
    why = cl.algorithms("all_gather", cl.GpuCluster("dgx-h100", 4), reasons=True)["pat"]
    assert why.startswith("pat is NCCL's algorithm for one GPU per node")
    assert "pat" in cl.algorithms("all_gather", cl.GpuCluster("dgx-h100", 4), axes="node")
    assert "pat" not in cl.algorithms("all_gather", cl.nvswitch_node())
