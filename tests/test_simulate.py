"""The simulator against the closed forms, and the seeds' worked numbers."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import collectives_lib as cl
from collectives_lib import costs, hardware as hw

W, LAT = 45e9, 1e-6


def ring(n, **kw):
    return cl.Ring(n, bandwidth=W, latency=LAT, **kw)


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8, 13, 16], ids=lambda n: f"ring{n}")
@pytest.mark.parametrize("collective, algorithm, formula", [
    ("all_gather", "ring", costs.ring_all_gather),
    ("all_gather", "bidirectional_ring", costs.bidirectional_ring_all_gather),
    ("all_gather", "bidirectional_ring_whole", costs.bidirectional_ring_whole_all_gather),
    ("reduce_scatter", "ring", costs.ring_reduce_scatter),
    ("reduce_scatter", "bidirectional_ring", costs.bidirectional_ring_reduce_scatter),
    ("reduce_scatter", "bidirectional_ring_whole", costs.bidirectional_ring_whole_reduce_scatter),
    ("all_reduce", "ring", costs.ring_all_reduce),
    ("all_reduce", "bidirectional_ring", costs.bidirectional_ring_all_reduce),
    ("all_reduce", "bidirectional_ring_whole", costs.bidirectional_ring_whole_all_reduce),
    ("all_to_all", "ring", costs.ring_all_to_all),
    ("all_to_all", "bidirectional_ring", costs.bidirectional_ring_all_to_all),
])
def test_rings_match_closed_forms(n, collective, algorithm, formula):
    topo = ring(n)
    sched = cl.build(collective, topo, algorithm)
    size = sched.round_size(3 * 2**20)          # nccl-tests' size: one rank's buffer for all-to-all
    V = sched.array_bytes(size)                 # the closed forms take the whole array
    assert cl.simulate(sched, topo, size).time == pytest.approx(formula(n, V, W, LAT), rel=1e-9)


@pytest.mark.parametrize("n", [2, 3, 4, 7, 8, 16], ids=lambda n: f"chain{n}")
@pytest.mark.parametrize("collective, formula", [
    ("all_gather", costs.chain_all_gather), ("reduce_scatter", costs.chain_reduce_scatter),
    ("all_to_all", costs.chain_all_to_all),
])
def test_chains_match_closed_forms(n, collective, formula):
    topo = cl.Chain(n, bandwidth=W, latency=LAT)
    sched = cl.build(collective, topo, "chain")
    size = sched.round_size(2**22)
    V = sched.array_bytes(size)
    assert cl.simulate(sched, topo, size).time == pytest.approx(formula(n, V, W, LAT), rel=1e-9)


@pytest.mark.parametrize("n", [2, 4, 8, 16, 32])
def test_switch_algorithms_match_closed_forms(n):
    sw = cl.Switch(n, bandwidth=W, latency=LAT / 2)        # a switch path is two links
    V = n * n * 4096
    cases = [
        ("all_gather", "recursive_doubling", costs.recursive_doubling_all_gather),
        ("all_gather", "direct", costs.direct_all_gather),
        ("all_reduce", "recursive_doubling", costs.recursive_doubling_all_reduce),
        ("all_reduce", "rabenseifner", costs.rabenseifner_all_reduce),
        ("all_reduce", "binomial_tree", costs.binomial_tree_all_reduce),
        ("all_reduce", "tree", costs.tree_all_reduce),
        ("all_to_all", "direct", costs.direct_all_to_all),
    ]
    for collective, alg, formula in cases:
        sched = cl.build(collective, sw, alg)
        got = cl.simulate(sched, sw, V // n if collective == "all_to_all" else V).time
        assert got == pytest.approx(formula(n, V, W, LAT), rel=1e-9), (collective, alg)


@pytest.mark.parametrize("dims", [(4, 4), (8, 8), (4, 4, 4), (6, 6)], ids=lambda d: "torus" + "x".join(map(str, d)))
@pytest.mark.parametrize("wrap", [True, False], ids=["wrap", "nowrap"])
@pytest.mark.parametrize("algorithm", ["multi_axis", "sequential_axes"])
def test_mesh_all_gather_matches_closed_form(dims, wrap, algorithm):
    topo = cl.Torus(dims, wrap, bandwidth=W, latency=LAT)
    sched = cl.build("all_gather", topo, algorithm)
    V = sched.round_size(2**24)
    want = costs.mesh_all_gather(dims, V, W, LAT, wraparound=wrap, multi=algorithm == "multi_axis")
    assert cl.simulate(sched, topo, V).time == pytest.approx(want, rel=1e-9)


@pytest.mark.parametrize("n", [4, 6, 8, 16])
def test_even_bidirectional_ring_reaches_the_bound(n):
    """The opposite block goes half each way: (n-1)/(2n) V/W and n/2 steps, where the
    whole-block ring takes V/(2W); for odd n the two are the same schedule."""
    topo = cl.Ring(n, bandwidth=W, latency=0.0)
    V = 2 * n * 2**20
    split = cl.simulate(cl.build("all_gather", topo, "bidirectional_ring"), topo, V)
    whole = cl.simulate(cl.build("all_gather", topo, "bidirectional_ring_whole"), topo, V)
    assert split.time == pytest.approx((n - 1) / (2 * n) * V / W, rel=1e-12)
    assert whole.time == pytest.approx(V / (2 * W), rel=1e-12)
    assert split.num_steps == whole.num_steps == n // 2
    assert split.link_bytes.max() == pytest.approx((n - 1) / (2 * n) * V)


def test_a_4x4_torus_all_gather_takes_the_bound():
    torus = cl.Torus((4, 4), bandwidth=45e9, latency=0.0)
    V = 2**25
    t = cl.simulate(cl.build("all_gather", torus, "multi_axis"), torus, V).time
    assert t == pytest.approx(15 / 16 * V / (4 * 45e9), rel=1e-12)       # 174.8 us
    assert t == pytest.approx(174.76e-6, rel=1e-4)
    whole = costs.mesh_all_gather((4, 4), V, 45e9, whole=True)             # the first version
    assert whole == pytest.approx(233.0e-6, rel=1e-3)


def test_a_v5p_cube_all_gather_over_three_axes_is_about_v_over_6w():
    cube = cl.tpu_slice("v5p", "4x4x4")
    W5p = float(hw.tpu("v5p").ici_bandwidth)
    sched = cl.build("all_gather", cube, "multi_axis")
    V = sched.round_size(2**30)     # the three axes split each block in three: 1 GiB is not a multiple
    r = cl.simulate(sched, cube, V)
    bound = 63 / 64 * V / (6 * W5p)                                        # (N-1)/N V / (2 D W)
    assert r.time == pytest.approx(bound + 6 * float(hw.tpu("v5p").ici_latency), rel=1e-9)
    assert 1.96e-3 < r.time < 1.99e-3


def test_two_axes_are_about_twice_as_fast_as_one():
    pod = cl.tpu_pod("v5e")
    V = 2**30
    multi = cl.simulate(cl.build("all_gather", pod, "multi_axis"), pod, V).time
    seq = cl.simulate(cl.build("all_gather", pod, "sequential_axes"), pod, V).time
    assert 1.9 < seq / multi < 2.05
    # and within 10% of the Scaling Book's V / (2 W_bidi)
    book = costs.scaling_book_all_gather(V, 2 * float(hw.tpu("v5e").ici_bandwidth), axes=2)
    assert multi == pytest.approx(book, rel=0.1)


def test_losing_wraparound_roughly_doubles_a_ring_collective():
    V = 2**30
    full = cl.tpu_slice("v5e", "16x16")
    short = cl.tpu_slice("v5e", "8x16")     # the short axis has no wraparound
    t_ring = cl.estimate("all_gather", full, V, axes="x").time
    choice = cl.estimate("all_gather", short, V, axes="y").choice
    t_chain8 = cl.estimate("all_gather", short, V, axes="x").time
    assert choice.algorithm == "bidirectional_ring"
    assert 1.6 < t_chain8 / t_ring < 2.0       # a chain of 8 against a ring of 16
    ring8 = cl.estimate("all_gather", cl.Ring(8, bandwidth=45e9, latency=1e-6), V).time
    assert 1.6 < t_chain8 / ring8 < 2.0


def test_ring_all_reduce_bytes_per_rank_seed_example():
    # 8 GPUs averaging an 8 GB gradient: 56 GB naive, 14 GB ring, ~35 ms at 400 GB/s
    V, n = 8 * cl.units.GB, 8
    sched = cl.build("all_reduce", n, "ring")
    sent = sched.bytes_sent(V)
    assert np.allclose(sent, 14e9)
    assert costs.naive_all_reduce_bytes_per_rank(n, V) == pytest.approx(56e9)
    t = cl.simulate(sched, cl.Ring(n, bandwidth=400e9, bidirectional=False), int(V)).time
    assert t == pytest.approx(35e-3)


@pytest.mark.parametrize("n", [2, 4, 8, 16, 72])
def test_ideal_sharp_speedup(n):
    sw = cl.Switch(n, bandwidth=450e9, in_network=True)
    V = n * 2**24
    t_ring = cl.simulate(cl.build("all_reduce", sw, "ring"), sw, V).time
    t_sharp = cl.simulate(cl.build("all_reduce", sw, "sharp"), sw, V).time
    assert t_ring / t_sharp == pytest.approx(costs.sharp_speedup(n), rel=1e-9)


def test_sharp_at_eight_gpus_is_1_75x():
    """The simulator, on a switch that reduces, against the closed form's 2(n-1)/n: the
    ring sends 2(n-1)/n of V through every up-link, SHARP sends V once."""
    sw = cl.Switch(8, bandwidth=50e9, latency=0.0, in_network=True, reduce_flops=1e18)
    V = 8 * 2**27
    ring_ = cl.simulate(cl.build("all_reduce", sw, "ring"), sw, V).time
    sharp = cl.simulate(cl.build("all_reduce", sw, "sharp"), sw, V).time
    assert ring_ / sharp == pytest.approx(costs.sharp_speedup(8), rel=1e-6) == 1.75


def test_nvls_all_gather_wastes_one_eighth():
    node = cl.nvswitch_node("dgx-h100")
    V = 8 * 2**27
    mc = cl.simulate(cl.build("all_gather", node, "nvls"), node, V)
    ring_ = cl.simulate(cl.build("all_gather", node, "ring"), node, V)
    down = np.array([node.links.src[i] == node.switch_node for i in range(len(node.links))])
    assert mc.link_bytes[down].max() == pytest.approx(V)               # every block, own one too
    assert ring_.link_bytes[down].max() == pytest.approx(V * 7 / 8)


def test_pipelined_stages_add_latencies_for_tiny_messages():
    node = cl.nvswitch_node("dgx-h100")
    sharp = cl.build("all_reduce", node, "sharp")
    tiny = cl.simulate(sharp, node, 8)
    # two stages, each paying the NVLink hop and half of NCCL's 25 us NVLS latency
    assert tiny.time == pytest.approx(2 * (0.3e-6 + 12.5e-6), rel=1e-3)


def test_auto_picks_among_what_nccl_runs_a_ring_small_and_nvls_large():
    node = cl.nvswitch_node("dgx-h100")
    small = cl.choose("all_reduce", node, 64 * 1024)
    large = cl.choose("all_reduce", node, 8 * 2**30)
    assert small.algorithm == "ring" and large.algorithm == "nvls"
    # only NCCL's algorithms are weighed: not the binomial tree, recursive doubling or SHARP
    assert "binomial_tree" not in small.reason and "recursive" not in small.reason
    assert "sharp" not in large.reason


def test_one_v5e_link_moves_45_kb_per_microsecond():
    g = hw.tpu("v5e")
    assert costs.crossover_size(float(g.ici_latency), float(g.ici_bandwidth)) == pytest.approx(45e3)


def test_two_path_send_on_a_4x4_slice():
    s = cl.tpu_slice("v5e", "4x4")
    V = 2048 * 2048 * 2                                                # bf16[2048, 2048]
    two = cl.simulate(cl.build("send", s, "multipath", src=(3, 3), dst=(0, 0)), s, V)
    one = cl.simulate(cl.build("send", s, "direct", src=(3, 3), dst=(0, 0)), s, V)
    assert two.time == pytest.approx(6e-6 + V / 2 / 45e9)
    assert one.time == pytest.approx(6e-6 + V / 45e9)
    no_latency = cl.tpu_slice("v5e", "4x4", latency=0.0)
    assert cl.simulate(cl.build("send", no_latency, "multipath", src=(3, 3), dst=(0, 0)), no_latency, V).time == \
        pytest.approx(V / 2 / 45e9)


def test_hierarchical_overlap_and_sum():
    cluster = cl.GpuCluster("dgx-h100", 32)
    V = 2**30
    r = cl.simulate(cl.build("all_gather", cluster, "hierarchical"), cluster, V)
    want_ib = costs.hierarchical_all_gather(32, 8, V, 50e9, 450e9)
    assert set(r.stage_times) == {"inter-node (InfiniBand)", "intra-node (NVLink)"}
    ib = r.stage_times["inter-node (InfiniBand)"]
    nvl = r.stage_times["intra-node (NVLink)"]
    # latencies add (a chunk passes through both stages), bandwidth terms overlap
    lat_ib = 31 * 2 * float(hw.gpu_system("dgx-h100").nic_latency)   # 31 ring steps, 2 links each
    lat_nvl = 7 * 2 * float(hw.gpu_system("dgx-h100").nvlink_latency)
    assert r.time == pytest.approx(lat_ib + lat_nvl + max(ib - lat_ib, nvl - lat_nvl))
    assert max(ib, nvl) < r.time < max(ib, nvl) * 1.01
    assert r.time_unoverlapped == pytest.approx(ib + nvl)
    assert ib == pytest.approx(want_ib, rel=0.02)                   # latency adds a little
    assert ib > nvl
    # the first-order model: about V over the node's 400 GB/s
    assert r.time == pytest.approx(costs.fat_tree_ring_all_gather(32, V, 400e9), rel=0.02)


def test_rail_unaware_placement_slows_an_oversubscribed_fabric():
    cluster = cl.GpuCluster("dgx-h100", 64, oversubscription=2)
    sched = cl.build("all_gather", cluster, "hierarchical")
    V = 2**30
    aligned = cl.simulate(sched, cluster, V).time
    rng = np.random.default_rng(0)
    placement = np.concatenate([m * 8 + rng.permutation(8) for m in range(64)])
    shuffled = cl.simulate(sched, cluster, V, placement=placement).time
    assert shuffled > 1.5 * aligned


def test_data_parallel_all_reduce_over_a_tensor_parallel_mesh():
    # 4 nodes x 8 GPUs; TP over the 8 GPUs of a node, DP across nodes: each TP shard is
    # all-reduced across the 4 nodes on its own rail, 8 groups at once
    cluster = cl.GpuCluster("dgx-h100", 4)
    sched = cl.build("all_reduce", cluster, "ring", axes="node")
    assert sched.num_groups == 8 and sched.group_size == 4
    cl.check(sched)
    V = 2**28
    r = cl.simulate(sched, cluster, V)
    klass = cluster.links.klass[r.link_bytes > 0]
    assert set(klass.tolist()) == {2}                                # InfiniBand only
    assert r.time == pytest.approx(costs.ring_all_reduce(4, V, 50e9, 2 * 0.675e-6), rel=1e-6)


def test_contention_shares_a_link():
    # two flows through the same link in one step take twice as long
    chain = cl.Chain(3, bandwidth=1e9)
    sched = cl.build("all_to_all", chain, "direct")
    r = cl.simulate(sched, chain, 3 * 10**6)      # each rank's buffer: 3 blocks of 1 MB
    # rank 0 -> 2 and rank 1 -> 2 share link 1 -> 2: 2 blocks of 1 MB
    assert r.time == pytest.approx(2e6 / 1e9)


def test_neighbor_schedules_need_their_links():
    ag = cl.embed(cl.build("all_gather", 4, "ring"), np.arange(4)[None, :], 4)
    with pytest.raises(cl.CollectivesError, match="has no direct link between them"):
        cl.simulate(ag, cl.Chain(4, bandwidth=1e9), 4096)


def test_any_size_splits_into_whole_elements_and_the_largest_shard_sets_the_time():
    ring6 = cl.Ring(6, bandwidth=1e9)
    sched = cl.build("all_gather", ring6, "ring")
    r = cl.simulate(sched, ring6, 1000)                 # 250 float32 over 6 ranks: 41 or 42 each
    assert r.nbytes == 1000 and r.timed_bytes == 6 * 42 * 4
    assert r.time == pytest.approx(cl.simulate(sched, ring6, 6 * 42 * 4).time)
    assert "250 elements do not split evenly over 6 slots: each holds 41 or 42" in r.note
    assert sched.round_size(1000) == 984 and sched.round_size(1000, element_size=1) == 996
    assert cl.simulate(sched, ring6, 984).note == ""
    sw = cl.Switch(4, bandwidth=1e9)
    a2a = cl.build("all_to_all", sw, "direct")
    r = cl.simulate(a2a, sw, 100)                         # one rank's buffer: 25 elements for 4 peers
    assert r.timed_bytes == 16 * 7 * 4 and "each holds 6 or 7" in r.note
    assert cl.simulate(sched, ring6, 1001).note.startswith("1 byte does not make a whole 4-byte element and is left out")


def test_topology_mismatch():
    with pytest.raises(cl.CollectivesError, match="schedule is for 4 ranks but"):
        cl.simulate(cl.build("all_gather", 4, "ring"), cl.Ring(8, bandwidth=1e9), 4096)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 12), exp=st.integers(3, 30))
def test_simulate_sizes_agrees_with_simulate(n, exp):
    topo = cl.Ring(n, bandwidth=W, latency=LAT)
    sched = cl.build("all_reduce", topo, "bidirectional_ring")
    V = sched.round_size(2**exp)
    many = cl.simulate_sizes(sched, topo, [V])[0]
    assert many == pytest.approx(cl.simulate(sched, topo, V).time, rel=1e-12)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 10), exp=st.integers(10, 30))
def test_busbw_never_exceeds_link_bandwidth_on_rings(n, exp):
    topo = cl.Ring(n, bandwidth=W, bidirectional=False)
    for coll in ("all_gather", "reduce_scatter", "all_reduce"):
        sched = cl.build(coll, topo, "ring")
        r = cl.simulate(sched, topo, sched.round_size(2**exp))
        assert r.busbw == pytest.approx(W, rel=1e-9)


def test_imbalanced_all_to_all_hottest_link():
    n = 8
    matrix = np.ones((n, n))
    np.fill_diagonal(matrix, 0)
    balanced = cl.build("all_to_all", n, "bidirectional_ring", matrix=matrix)
    skewed_m = matrix.copy()
    skewed_m[:, 3] *= 4                                   # everyone loves expert 3
    skewed = cl.build("all_to_all", n, "bidirectional_ring", matrix=skewed_m)
    topo = cl.Ring(n, bandwidth=W)
    V = 2**26
    rb, rs = cl.simulate(balanced, topo, V), cl.simulate(skewed, topo, V)
    assert rs.time > rb.time
    hot = rs.bottleneck_link
    assert topo.links.dst[hot] == 3
