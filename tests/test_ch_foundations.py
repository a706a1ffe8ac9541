"""Library pieces introduced by the Foundations chapters (A first look, Moving
bytes, The all-reduce step by step): the full mesh, the packet pipeline and
its drawing, NVLink link counts, and the worked examples those chapters quote."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import collectives_lib as cl
from collectives_lib import hardware as hw


# -- FullMesh -------------------------------------------------------------------

@pytest.mark.parametrize("n", [2, 3, 8, 72], ids=lambda n: f"mesh{n}")
def test_full_mesh_has_a_link_per_pair_and_routes_directly(n):
    mesh = cl.FullMesh(n, bandwidth=50e9)
    assert mesh.num_pair_links == n * (n - 1) // 2
    assert len(mesh.links) == n * (n - 1)
    for u, v in itertools.islice(itertools.permutations(range(n), 2), 200):
        route = mesh.route(u, v)
        assert route == [mesh.link_between(u, v)]
        assert mesh.links.src[route[0]] == u and mesh.links.dst[route[0]] == v


def test_full_mesh_of_eight_h100s_worked_example():
    links = int(hw.NVLINK_LINKS_PER_GPU["H100 (NVLink 4)"].value)
    w_gpu = hw.GPU_SYSTEMS["dgx-h100"].nvlink_bandwidth.value
    per_pair = links // 7
    assert per_pair == 2
    mesh = cl.FullMesh(8, bandwidth=per_pair * w_gpu / links, link_class="nvlink")
    assert mesh.bandwidth == pytest.approx(50e9)
    assert mesh.bisection_bandwidth() == pytest.approx(16 * 50e9)
    node = cl.nvswitch_node("dgx-h100")
    assert node.bisection_bandwidth() == pytest.approx(8 * w_gpu / 2)


def test_every_permutation_runs_at_full_rate_on_a_switch_but_not_on_a_mesh():
    node = cl.nvswitch_node("dgx-h100", latency=0.0)
    mesh = cl.FullMesh(8, bandwidth=50e9)
    V = 1e9
    for perm in itertools.islice(itertools.permutations(range(8)), 0, 40320, 997):
        flows = [(s, d, V) for s, d in enumerate(perm) if s != d]
        if not flows:
            continue
        assert cl.time_flows(node, flows).time == pytest.approx(V / node.bandwidth)
        assert cl.time_flows(mesh, flows).time == pytest.approx(V / mesh.bandwidth)


def test_full_mesh_runs_collectives():
    mesh = cl.FullMesh(8, bandwidth=50e9)
    r = cl.estimate("all_reduce", mesh, 10**9, "ring").result
    assert r.time == pytest.approx(cl.costs.ring_all_reduce(8, 1e9, 50e9))


def test_full_mesh_errors():
    with pytest.raises(cl.CollectivesError, match="bandwidth"):
        cl.FullMesh(4, bandwidth=0)
    with pytest.raises(cl.CollectivesError, match="link class must be one of"):
        cl.FullMesh(4, bandwidth=1e9, link_class="copper")
    with pytest.raises(cl.CollectivesError, match="a flow names a node outside FullMesh"):
        cl.FullMesh(4, bandwidth=1e9).routes(np.array([0]), np.array([4]))
    assert repr(cl.FullMesh(4, bandwidth=1e9)) == "FullMesh(4, bandwidth=1e+09, latency=0)"


# -- the packet pipeline ---------------------------------------------------------

def test_pipelined_send_limits():
    h, V, W, a = 3, 1e6, 45e9, 1e-6
    assert cl.costs.pipelined_send(h, V, W, a, 1) == pytest.approx(h * (a + V / W))
    assert cl.costs.pipelined_send(h, V, W, a, 10**6) == pytest.approx(h * a + V / W, rel=1e-5)
    times = [cl.costs.pipelined_send(h, V, W, a, p) for p in (1, 2, 4, 8, 64)]
    assert times == sorted(times, reverse=True)


def test_simulator_charges_cut_through():
    W, a = 45e9, 1e-6
    for hops in (1, 3, 7):
        line = cl.Chain(hops + 1, bandwidth=W, latency=a)
        send = cl.build("send", line, "direct", src=0, dst=hops)
        t = cl.simulate(send, line, 10**6).time
        assert t == pytest.approx(cl.costs.pipelined_send(hops, 1e6, W, a, 10**9), rel=1e-6)


@pytest.mark.parametrize("args, message", [
    ((0, 1e6, 1e9), "hops must be a whole number >= 1, got 0"),
    ((2, 1e6, 1e9, 0.0, 0), "packets must be a whole number >= 1, got 0"),
    ((2, 1e6, 0.0), "bandwidth W must be positive, got 0.0"),
])
def test_pipelined_send_errors(args, message):
    with pytest.raises(cl.CollectivesError, match=message.replace("(", r"\(")):
        cl.costs.pipelined_send(*args)


def test_packet_positions_follow_the_pipeline():
    from collectives_lib.draw.layout import packet_places as _packet_places

    hops, packets = 3, 4
    # pipelined: packet k is on link h during slot h + k + 1
    for k in range(packets):
        for h in range(hops):
            assert _packet_places(hops, packets, h + k + 1, True)[k] == ("link", h)
    # store-and-forward: one link busy at a time, in order
    for slot in range(1, hops * packets + 1):
        on_links = [w for kind, w in _packet_places(hops, packets, slot, False) if kind == "link"]
        assert on_links == [(slot - 1) // packets]
    assert all(p == ("node", 0) for p in _packet_places(hops, packets, 0, False))
    assert all(p == ("node", hops) for p in _packet_places(hops, packets, hops * packets + 1, False))


def test_draw_packet_pipeline_artists():
    pytest.importorskip("matplotlib")
    art = cl.draw.draw_packet_pipeline(3, 4, 5)
    assert len(art["packets"].get_offsets()) == 2 * 4
    assert len(art["links"].get_paths()) == 2 * 3
    assert art["finished"] == [False, False]
    assert cl.draw.draw_packet_pipeline(3, 4, 7)["finished"] == [False, True]
    assert cl.draw.draw_packet_pipeline(3, 4, 13)["finished"] == [True, True]
    assert art["alt"].startswith("Two rows of 4 nodes")
    with pytest.raises(cl.CollectivesError, match="slot must be 0..13, got 14"):
        cl.draw.draw_packet_pipeline(3, 4, 14)


def test_packet_pipeline_animation_frames():
    pytest.importorskip("matplotlib")
    player = cl.draw.packet_pipeline_animation(2, 2)
    assert len(player.frames) == 2 * 2 + 2
    assert player.captions[0].startswith("Start")
    assert player.captions[-1].startswith("Both delivered: 3 slots pipelined against 4")


# -- hardware figures ---------------------------------------------------------------

def test_nvlink_link_counts_match_the_per_gpu_bandwidth():
    for name, per_link in (("H100 (NVLink 4)", 25e9), ("Blackwell (NVLink 5)", 50e9)):
        one_way = hw.NVLINK_GENERATIONS[name].value / 2
        assert one_way / hw.NVLINK_LINKS_PER_GPU[name].value == pytest.approx(per_link)
    names = [name for name, _ in hw.all_figures()]
    assert "nvlink_links.H100 (NVLink 4)" in names


# -- the worked examples the chapters quote --------------------------------------------

def test_seed_all_reduce_example():
    """Seed lesson: 8 GPUs, 8 GB: naive 56 GB, ring 14 GB, ~35 ms at 400 GB/s."""
    D = 8e9
    ring = cl.build("all_reduce", 8, "ring")
    assert ring.bytes_sent(D) == pytest.approx(np.full(8, 14e9))
    assert cl.costs.naive_all_reduce_bytes_per_rank(8, D) == pytest.approx(56e9)
    r = cl.simulate(ring, cl.Ring(8, bandwidth=400e9, bidirectional=False), int(D))
    assert r.time == pytest.approx(0.035)
    assert r.busbw == pytest.approx(400e9)


@pytest.mark.parametrize("n", [2, 3, 7, 64, 128], ids=lambda n: f"ring{n}")
def test_ring_bytes_creep_towards_but_never_reach_2d(n):
    sent = cl.build("all_reduce", n, "ring").bytes_sent(1.0)
    assert sent == pytest.approx(np.full(n, cl.costs.ring_all_reduce_bytes_per_rank(n, 1.0)))
    assert sent.max() < 2.0
    assert 2.0 - sent.max() == pytest.approx(2.0 / n)


def test_crossover_sizes_quoted_in_moving_bytes():
    v5e = hw.tpu("v5e")
    assert cl.costs.crossover_size(float(v5e.ici_latency), float(v5e.ici_bandwidth)) == pytest.approx(45e3)
    node = cl.nvswitch_node("dgx-h100")
    alpha_nvl = float(node.links.latency[node.route(0, 1)].sum())
    assert alpha_nvl == pytest.approx(0.6e-6)
    cluster = cl.GpuCluster("dgx-h100", num_nodes=64)
    far = cluster.gpus_per_node * cluster.nodes_per_su
    assert cluster.hops(0, far) == 4
    assert float(cluster.links.latency[cluster.route(0, far)].sum()) == pytest.approx(2.7e-6)


def test_like_for_like_nvlink5_against_xdr():
    nvl5 = hw.LADDER["NVLink 5 (per GPU, one way)"].value
    xdr = hw.LADDER["InfiniBand XDR (800 Gb/s NIC)"].value
    assert hw.NVLINK_GENERATIONS["Blackwell (NVLink 5)"].value / xdr == pytest.approx(18)
    assert nvl5 / xdr == pytest.approx(9)
    assert math.isclose(xdr, 800e9 / 8)


# -- second edition: the numbers the revised Foundations chapters state ----------------

def _v5e_ring(n):
    v5e = hw.tpu("v5e")
    return cl.Ring(n, bandwidth=float(v5e.ici_bandwidth), latency=float(v5e.ici_latency), link_class="ici")


def test_first_look_latency_term_grows_ninefold_from_8_to_64_chips():
    """(N-1) alpha: 63 / 7 = 9, not eight."""
    times = {}
    for n in (8, 64):
        ring = _v5e_ring(n)
        times[n] = cl.simulate(cl.build("all_gather", ring, "ring"), ring, 10**9)
    assert times[64].latency_time / times[8].latency_time == pytest.approx(9.0)
    assert times[64].bandwidth_time / times[8].bandwidth_time == pytest.approx((63 / 64) / (7 / 8))


def test_first_look_bidirectional_ring_splits_the_data_and_reaches_the_bound():
    ring, V = _v5e_ring(8), 10**9
    split = cl.estimate("all_gather", ring, V, "bidirectional_ring", model="ideal")
    whole = cl.estimate("all_gather", ring, V, "bidirectional_ring_whole", model="ideal")
    one_way = cl.estimate("all_gather", ring, V, "ring", model="ideal")
    W = float(hw.tpu("v5e").ici_bandwidth)
    assert split.bound.time == pytest.approx(7 / 8 * V / (2 * W), rel=1e-3)   # two links in
    assert split.efficiency == pytest.approx(1.0, abs=1e-3)
    # whole shards: 4 steps of V/N one way, against the bound's 7/16 V/W
    assert whole.efficiency == pytest.approx((7 / 16) / (4 / 8), rel=1e-3)
    assert one_way.efficiency == pytest.approx(0.5, rel=1e-3)


def test_hierarchical_time_rests_on_overlapping_its_stages():
    cluster, V = cl.GpuCluster("dgx-h100", num_nodes=16), 10**9
    hier = cl.estimate("all_reduce", cluster, V, "hierarchical", model="ideal")
    stages = list(hier.stage_times.values())
    assert len(stages) == 2
    assert hier.time_unoverlapped == pytest.approx(sum(stages))
    assert max(stages) <= hier.time < 1.05 * max(stages)
    # the network stage: 2 (S-1)/S of one eighth of V per card at 50 GB/s, S = 16 servers
    assert stages[1] == pytest.approx(2 * 15 / 16 * V / 8 / 50e9, rel=0.01)


def test_nccl_runs_many_rings_not_one_through_a_single_card():
    cluster, V = cl.GpuCluster("dgx-h100", num_nodes=16), 10**9
    nccl_ring = cl.estimate("all_reduce", cluster, V, "ring", model="nccl")
    single_card_ring = 2 * 127 / 128 * V / 50e9     # one 128-GPU ring through one NIC per server
    assert nccl_ring.time < single_card_ring / 4
    assert nccl_ring.time > nccl_ring.bound.time
    with pytest.raises(cl.CollectivesError, match="NCCL does not run hierarchical"):
        cl.estimate("all_reduce", cluster, V, "hierarchical", model="nccl")


def test_the_choice_per_call_the_chapter_tabulates():
    node, cluster = cl.nvswitch_node("dgx-h100"), cl.GpuCluster("dgx-h100", num_nodes=16)
    pick = {(t.num_ranks, s): cl.estimate("all_reduce", t, cl.parse_size(s), model="nccl").nccl_algorithm
            for t in (node, cluster) for s in ("4KB", "256KB", "16MB", "1GB")}
    assert [pick[8, s] for s in ("4KB", "256KB", "16MB", "1GB")] == ["RING", "RING", "NVLS", "NVLS"]
    assert [pick[128, s] for s in ("4KB", "256KB")] == ["TREE", "TREE"]
    assert pick[128, "1GB"] != "TREE"


def test_small_message_floor_is_software_in_the_nccl_model():
    node = cl.nvswitch_node("dgx-h100")
    nccl = cl.estimate("all_reduce", node, 8, model="nccl")
    assert nccl.nccl_algorithm == "RING" and nccl.protocol == "LL"
    assert nccl.time >= 6.6e-6 + 14 * 0.6e-6     # base latency of ring/LL plus 2(N-1) NVLink steps
    ideal = cl.estimate("all_reduce", node, 8, "ring", model="ideal")
    assert ideal.time == pytest.approx(14 * 0.6e-6, rel=1e-3)


def test_recursive_doubling_and_halving_steps_and_bytes():
    node = cl.nvswitch_node("dgx-h100")
    rd = cl.estimate("all_reduce", node, 10**9, "recursive_doubling", model="ideal")
    rab = cl.estimate("all_reduce", node, 10**9, "rabenseifner", model="ideal")
    assert rd.num_steps == 3 and rab.num_steps == 6
    assert rd.schedule.bytes_sent(1.0).max() == pytest.approx(3.0)          # whole array, 3 times
    assert rab.schedule.bytes_sent(1.0).max() == pytest.approx(2 * 7 / 8)   # the ring's bytes


def test_ring_simulator_of_moving_bytes_matches_the_closed_form():
    W, a, V = 450e9, 0.6e-6, 8e6
    ring = cl.Ring(8, bandwidth=W, latency=a, bidirectional=False)
    r = cl.simulate(cl.build("all_reduce", ring, "ring"), ring, int(V))
    assert r.time == pytest.approx(14 * (a + V / 8 / W))
