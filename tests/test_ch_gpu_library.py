"""Library pieces introduced by the GPU chapters (gpu_topology, gpu_intra_node,
gpu_across_nodes): the message-size helper, the cost table, the fat-tree route
drawing and the by-node schedule drawings."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest

import collectives_lib as cl
from collectives_lib import draw


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


# -- scaling.size_at_fraction ------------------------------------------------------

@pytest.mark.parametrize("fraction", [0.5, 0.9, 0.99], ids=["f50", "f90", "f99"])
def test_size_at_fraction_matches_the_alpha_beta_closed_form(fraction):
    node = cl.nvswitch_node("dgx-h100")
    ring = cl.build("all_reduce", node, "ring")
    r = cl.simulate(ring, node, ring.round_size(1 << 30))
    L, B = r.latency_time, r.bandwidth_time / r.nbytes
    expected = fraction * L / ((1 - fraction) * B)
    got = cl.analysis.size_at_fraction(ring, node, fraction)
    assert got == pytest.approx(expected, rel=0.02)


def test_size_at_fraction_grows_with_a_per_step_overhead():
    node = cl.nvswitch_node("dgx-h100")
    ring = cl.build("all_gather", node, "ring")
    plain = cl.analysis.size_at_fraction(ring, node, 0.9)
    slow = cl.analysis.size_at_fraction(ring, node, 0.9, overhead=10e-6)
    assert slow > 10 * plain


def test_size_at_fraction_none_when_out_of_range_and_errors():
    node = cl.nvswitch_node("dgx-h100")
    ring = cl.build("all_gather", node, "ring")
    assert cl.analysis.size_at_fraction(ring, node, 0.9, hi=1e3) is None
    with pytest.raises(cl.CollectivesError, match="fraction must be between 0 and 1"):
        cl.analysis.size_at_fraction(ring, node, 1.0)
    with pytest.raises(cl.CollectivesError, match="need 0 < lo < hi"):
        cl.analysis.size_at_fraction(ring, node, 0.5, lo=10, hi=5)


# -- scaling.collective_costs --------------------------------------------------------

def test_collective_costs_rows_meet_the_closed_forms_on_a_ring():
    """On a bidirectional ring of 8 the fastest schedules are the bidirectional rings, whose
    closed forms (costs.py) are derived by hand: each row must equal them, at the size
    rounded to whole shards."""
    ring = cl.Ring(8, bandwidth=45e9, latency=1e-6)
    rows = {r["collective"]: r for r in cl.analysis.collective_costs(ring, 10**9)}
    assert list(rows) == ["all_gather", "reduce_scatter", "all_reduce", "all_to_all"]
    W, a = 45e9, 1e-6
    ag = rows["all_gather"]
    assert ag["nbytes"] == 10**9 // 32 * 32 and ag["algorithm"] == "bidirectional_ring"
    assert ag["time"] == pytest.approx(cl.costs.bidirectional_ring_all_gather(8, ag["nbytes"], W, a))
    assert rows["reduce_scatter"]["time"] == pytest.approx(ag["time"])
    assert rows["all_reduce"]["time"] == pytest.approx(2 * cl.costs.bidirectional_ring_all_gather(
        8, rows["all_reduce"]["nbytes"], W, a))
    assert ag["algbw"] == pytest.approx(ag["nbytes"] / ag["time"])
    a2a = rows["all_to_all"]                 # V is the whole array: each rank holds V / 8
    assert a2a["nbytes"] == 10**9 and a2a["rank_nbytes"] == 10**9 // 8
    assert a2a["time"] == pytest.approx(cl.costs.bidirectional_ring_all_to_all(8, 10**9, W, a))
    assert a2a["algbw"] == pytest.approx(a2a["rank_nbytes"] / a2a["time"])   # nccl-tests' figure


def test_collective_costs_rounds_a_tiny_all_to_all_up_to_a_byte_per_pair():
    row = cl.analysis.collective_costs(cl.Ring(8, bandwidth=45e9), 4, ["all_to_all"])[0]
    assert row["rank_nbytes"] * 8 == row["nbytes"] and row["nbytes"] >= 8 * 8 and row["error"] is None


def test_collective_costs_reports_inapplicable_algorithms_as_errors():
    node = cl.nvswitch_node("dgx-h100")
    rows = cl.analysis.collective_costs(node, 2**20, ["all_gather", "all_reduce"], algorithm="sharp")
    assert rows[0]["algorithm"] is None and "does not apply to all_gather" in rows[0]["error"]
    assert rows[1]["algorithm"] == "sharp" and rows[1]["error"] is None


# -- hardware ------------------------------------------------------------------------

def test_gpu_near_peak_message_is_sourced():
    fig = cl.hardware.MEASURED["h100-near-peak-message"]
    assert float(fig) == 1e9 and fig.source == "nv-dgxc-bench"
    # A TPU line of chips is near its peak at far smaller messages: its hops cost about
    # 1 µs. The ideal model's all-gather on a 16-chip v5e line (no wraparound, both
    # directions, 45 GB/s each way) pays 16 µs of hops against V·15/16 / 90 GB/s, so it
    # reaches 90% of its bound once V ≥ 9 × 16 µs × 90 GB/s × 16/15 ≈ 13.8 MB: by hand
    # the first power of two there is 2^24 B.
    line = cl.tpu_slice("v5e", "16x1")
    sizes = [2**k for k in range(16, 31)]
    near = next(s for s in sizes
                if (e := cl.estimate("all_gather", line, s, model="ideal")).bound.time / e.time >= 0.9)
    assert near == 2**24 and near < float(fig)


# -- draw.draw_fat_tree_route ----------------------------------------------------------

ROUTES = [((0, 5), 2), ((0, 8), 2), ((0, 16), 4), ((3, 12), 4)]


@pytest.mark.parametrize("pair,links", ROUTES, ids=["nvswitch", "leaf", "spine", "cross-rail"])
def test_route_drawing_follows_the_cluster_route(pair, links):
    toy = cl.GpuCluster("dgx-h100", 3, nodes_per_su=2)
    art = draw.draw_fat_tree_route(toy, *pair)
    assert art["path"] == toy.path(*pair)
    assert len(art["path"]) - 1 == links
    assert len(art["route"].get_paths()) == links
    assert " -> ".join(toy.node_label(x) for x in art["path"]) in art["alt"]


def test_route_drawing_step_by_step():
    toy = cl.GpuCluster("dgx-h100", 3, nodes_per_su=2)
    for hop in range(5):
        art = draw.draw_fat_tree_route(toy, 0, 16, hops=hop)
        assert len(art["route"].get_paths()) == hop
        assert art["hops"] == hop


def test_route_drawing_errors():
    toy = cl.GpuCluster("dgx-h100", 3, nodes_per_su=2)
    with pytest.raises(cl.CollectivesError, match="two different GPUs"):
        draw.draw_fat_tree_route(toy, 1, 1)
    with pytest.raises(cl.CollectivesError, match=r"hops must be 0..2"):
        draw.draw_fat_tree_route(toy, 0, 8, hops=3)
    with pytest.raises(cl.CollectivesError, match="at most 8 nodes"):
        draw.draw_fat_tree_route(cl.superpod(), 0, 8)
    with pytest.raises(cl.CollectivesError, match="is not a rank"):
        draw.draw_fat_tree_route(toy, 0, 99)
    with pytest.raises(cl.CollectivesError, match="GpuCluster"):
        draw.draw_fat_tree_route(cl.nvswitch_node(), 0, 1)


# -- draw.draw_cluster_transfers and friends ---------------------------------------------

def test_cluster_transfers_one_arrow_per_transfer():
    sched = cl.builders.hierarchical.hierarchical_all_gather(4, 4)
    for step, st in enumerate(sched.steps):
        art = draw.draw_cluster_transfers(sched, step, 4)
        assert len(art["arrows"].get_paths()) == len(st)
        assert len(art["heads"].get_paths()) == len(st)
        assert len(art["nodes"].get_paths()) == sched.num_ranks
        assert len(art["leaves"].get_paths()) == 4
        inside = "intra" in st.stage
        assert (f"{len(st)} inside nodes" in art["alt"]) == inside
    none = draw.draw_cluster_transfers(sched, None, 4)
    assert len(none["arrows"].get_paths()) == 0


def test_cluster_transfers_on_a_real_cluster_schedule():
    c = cl.GpuCluster("dgx-h100", 2)
    sched = cl.build("all_reduce", c, "ring", axes="node")
    art = draw.draw_cluster_transfers(sched, 0, c.gpus_per_node)
    assert len(art["arrows"].get_paths()) == len(sched.steps[0])
    assert "0 inside nodes" in art["alt"]


def test_cluster_transfers_errors():
    with pytest.raises(cl.CollectivesError, match="do not split into nodes of 3"):
        draw.draw_cluster_transfers(cl.builders.hierarchical.hierarchical_all_gather(2, 4), 0, 3)
    node = cl.nvswitch_node()
    with pytest.raises(cl.CollectivesError, match="no switch agents"):
        draw.draw_cluster_transfers(cl.build("all_reduce", node, "sharp"), 0, 8)


def test_cluster_step_and_animation():
    sched = cl.all_reduce_from(cl.builders.hierarchical.hierarchical_all_gather(2, 4))
    art = draw.draw_cluster_step(sched, 3, 4)
    assert len(art["axes"]) == 2
    assert len(art["slots"].get_paths()) == sched.num_participants * sched.num_slots
    assert "Step 4 of 8" in art["alt"]
    player = draw.cluster_schedule_animation(sched, 4)
    assert len(player.frames) == sched.num_steps + 1
    assert player.captions[0].startswith("Before step 1")
    with pytest.raises(cl.CollectivesError, match="at most 3"):
        draw.cluster_schedule_animation(sched, 4, max_frames=4)


# -- NCCL's model as the GPU chapters use it (hand-derived from NCCL 2.30.7's tables) --

NODE = cl.nvswitch_node("dgx-h100")


def test_h100_ring_ceiling_is_nccls_count_of_the_nvlinks():
    comm = cl.nccl.comm_for(NODE)
    prof, ring = comm.profile, comm.graphs["ring"]
    assert prof.nvlink_links * float(prof.nvlink_link_bw) == pytest.approx(370.8)   # 18 x 20.6
    assert ring.channels * ring.bw_intra == pytest.approx(360.0)                     # 12 x 30
    by = {(p.algorithm, p.protocol): p for p in cl.nccl.predict_all("all_reduce", 8 * 2**30, comm)}
    assert by["RING", "SIMPLE"].bus_bandwidth == pytest.approx(360e9, rel=1e-5)
    assert by["RING", "LL"].bus_bandwidth == pytest.approx(141e9, rel=1e-5)          # llMaxBws, Hopper
    assert by["NVLS", "SIMPLE"].bus_bandwidth > 450e9                                 # above the line rate


def test_small_all_reduce_on_one_node_costs_the_base_latency():
    e = cl.estimate("all_reduce", NODE, 8, model="nccl")
    assert (e.nccl_algorithm, e.protocol) == ("RING", "LL")
    # base 6.6 us + 2(N-1) = 14 steps x 0.6 us (NVLink, ring, LL)
    assert e.tuner_time == pytest.approx(6.6e-6 + 14 * 0.6e-6, rel=1e-3)
    assert e.bound.time < 1e-6


def test_all_to_all_cliff_from_one_node_to_two():
    V = 2**30
    one = cl.estimate("all_to_all", NODE, V, model="nccl")
    two = cl.estimate("all_to_all", cl.GpuCluster("dgx-h100", 2), V, model="nccl")
    # two nodes: half of each buffer leaves through the GPU's own NIC at NCCL's 48 GB/s
    assert two.time == pytest.approx(0.5 * V / 48e9, rel=0.06)
    assert 3.5 < two.time / one.time < 4.5


def test_tree_keeps_larger_messages_as_nodes_grow():
    sizes = [2**k for k in range(12, 35)]

    def crossing(m):
        comm = cl.nccl.comm_for(cl.GpuCluster("dgx-h100", m), nvls=False)
        best = {a: [min(p.time for p in cl.nccl.predict_all("all_reduce", s, comm) if p.algorithm == a)
                    for s in sizes] for a in ("TREE", "RING")}
        return cl.analysis.crossover(sizes, best["TREE"], best["RING"])

    x4, x16, x64 = crossing(4), crossing(16), crossing(64)
    assert x4 < x16 < x64


def test_superpod_switch_counts_follow_from_the_ports():
    pod = cl.superpod()
    ports = int(cl.hardware.QM9700_PORTS.value)
    up = ports - pod.nodes_per_su
    assert pod.num_leaves == int(cl.hardware.SUPERPOD_LEAF_SWITCHES.value) == 32
    assert pod.num_leaves * up // ports == int(cl.hardware.SUPERPOD_SPINE_SWITCHES.value) == 16
    assert pod.links.bandwidth[pod.links.src == pod.spine_node].sum() == pytest.approx(
        pod.num_ranks * pod.nic_bandwidth)                                             # 1024 x 50 GB/s


def test_dp_under_tp_in_nccls_model_is_one_rail_ring():
    su = cl.GpuCluster("dgx-h100", 32)
    shard = 8192 * 28672 * 2 // 8
    e = cl.estimate("all_reduce", su, shard, axes="node", model="nccl")
    assert e.nccl_algorithm == "RING" and e.group_size == 32
    assert e.bound.time < e.time


def test_pxn_keeps_an_all_to_all_on_its_rails():
    cluster = cl.GpuCluster("dgx-h100", 4)               # 4 nodes of 8: a block is 1/32 of the buffer
    block = 2**25 / 32
    plain = cl.workloads.pxn_all_to_all(cluster, 2**25, pxn=False)
    pxn = cl.workloads.pxn_all_to_all(cluster, 2**25)
    assert (plain.nvlink, plain.rail, plain.spine) == (7 * block, 3 * block, 21 * block)
    assert (pxn.nvlink, pxn.rail, pxn.spine) == (28 * block, 24 * block, 0.0)
    assert plain.network == pxn.network == 24 * block    # the same bytes leave the node either way
    with pytest.raises(cl.CollectivesError, match="GpuCluster"):
        cl.workloads.pxn_all_to_all(cl.Ring(8, bandwidth=1e9), 2**20)
    with pytest.raises(cl.CollectivesError, match="pxn must be True or False"):
        cl.workloads.pxn_all_to_all(cluster, 2**20, pxn="no")
