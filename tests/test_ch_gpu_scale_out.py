"""What the chapter *Fabrics and scale-out realities* relies on, against hand derivations.

ECMP: the busiest of m uplinks when k flows are hashed uniformly (counted by hand for
small cases, and checked by sampling for the chapter's 8 on 8); the leaf-spine topology
that routes by hash or sprays, simulated; the NCCL model's NICs per node, its refusal
to reduce int8 and fp8 in the NVSwitch, and the slow-link ring.
"""
from fractions import Fraction
from itertools import product

import numpy as np
import pytest

import collectives_lib as cl
from collectives_lib.topology import LeafSpine

GiB = 2**30


def brute_max_load(k, m):
    """Every one of the m**k assignments, counted: {busiest load: probability}."""
    counts = {}
    for a in product(range(m), repeat=k):
        top = max(np.bincount(a, minlength=m))
        counts[top] = counts.get(top, 0) + 1
    return {n: c / m**k for n, c in sorted(counts.items())}


@pytest.mark.parametrize("k, m", [(1, 1), (2, 2), (3, 2), (3, 3), (4, 3), (5, 4), (4, 6)],
                         ids=lambda v: str(v))
def test_max_load_matches_every_assignment_counted(k, m):
    got = cl.scaling.ecmp_max_load(k, m)
    want = brute_max_load(k, m)
    assert got.keys() == want.keys()
    for n in want:
        assert got[n] == pytest.approx(want[n], abs=1e-12)


def test_max_load_by_hand():
    # 3 flows on 2 uplinks: all on one side in 2 of 8 ways, else 2 + 1
    assert cl.scaling.ecmp_max_load(3, 2) == {2: 0.75, 3: 0.25}
    # 3 flows on 3 uplinks: 3! = 6 of 27 are clean, 3 of 27 put all on one
    d = cl.scaling.ecmp_max_load(3, 3)
    assert d[1] == pytest.approx(6 / 27) and d[3] == pytest.approx(3 / 27) and d[2] == pytest.approx(18 / 27)


def test_chapter_case_agrees_with_sampling():
    d = cl.scaling.ecmp_max_load(8, 8)
    assert sum(d.values()) == pytest.approx(1.0)
    assert d[1] == pytest.approx(float(Fraction(40320, 8**8)))            # 8! / 8^8
    rng = np.random.default_rng(0)
    draws = rng.integers(0, 8, size=(40_000, 8))
    busiest = np.array([np.bincount(r, minlength=8).max() for r in draws])
    mean = sum(n * p for n, p in d.items())
    assert busiest.mean() == pytest.approx(mean, abs=0.02)
    assert 2.5 < mean < 2.7


def test_collision_probability_is_the_birthday_problem():
    assert cl.scaling.ecmp_collision_probability(23, 365) == pytest.approx(0.5073, abs=1e-4)
    assert cl.scaling.ecmp_collision_probability(1, 8) == 0.0
    assert cl.scaling.ecmp_collision_probability(9, 8) == 1.0
    assert cl.scaling.ecmp_collision_probability(8, 8) == pytest.approx(1 - cl.scaling.ecmp_max_load(8, 8)[1])


@pytest.mark.parametrize("call, message", [
    (lambda: cl.scaling.ecmp_max_load(41, 8), "at most 40 flows"),
    (lambda: cl.scaling.ecmp_max_load(0, 8), "number of flows"),
    (lambda: cl.scaling.ecmp_collision_probability(3, 0), "number of equal-cost paths"),
    (lambda: LeafSpine(4, 4, bandwidth=1e9, routing="random"), "routing must be one of ecmp, spray"),
    (lambda: LeafSpine(4, 4, bandwidth=1e9, seed=-1), "seed must be a whole number >= 0"),
    (lambda: LeafSpine(4, 4, bandwidth=-1), "bandwidth"),
    (lambda: LeafSpine(4, 0, bandwidth=1e9), "number of spine switches"),
])
def test_bad_input_is_named(call, message):
    with pytest.raises(cl.CollectivesError, match=message):
        call()


def test_leaf_spine_times_are_the_busiest_uplink():
    W, S, k = 50e9, GiB, 8
    flows = [(i, k + i, S) for i in range(k)]
    sprayed = cl.time_flows(LeafSpine(k, k, bandwidth=W, routing="spray"), flows).time
    assert sprayed == pytest.approx(S / W)
    for seed in range(5):
        topo = LeafSpine(k, k, bandwidth=W, seed=seed)
        busiest = np.bincount(topo.spine_of(np.arange(k), np.arange(k, 2 * k)), minlength=k).max()
        assert cl.time_flows(topo, flows).time == pytest.approx(busiest * S / W)


def test_leaf_spine_routes_inside_a_leaf_without_the_spine():
    topo = LeafSpine(4, 2, bandwidth=1e9, latency=1e-6)
    assert topo.path(0, 3) == [0, topo.leaf_node(0), 3]
    assert len(topo.route(0, 5)) == 4
    assert topo.agent_node("spine1") == topo.spine_node(1)
    assert topo == LeafSpine(4, 2, bandwidth=1e9, latency=1e-6) and topo != LeafSpine(4, 2, bandwidth=1e9,
                                                                                         latency=1e-6, seed=1)
    # thin uplinks: two spines of half a host link each carry 8 hosts' flows at a quarter of their rate
    thin = LeafSpine(4, 2, bandwidth=1e9, uplink_bandwidth=0.5e9, routing="spray")
    t = cl.time_flows(thin, [(i, 4 + i, 1e9) for i in range(4)]).time
    assert t == pytest.approx(4 * 1e9 / (2 * 0.5e9))


def test_a_fat_tree_runs_any_permutation_at_nic_speed():
    pod = cl.GpuCluster("dgx-h100", 8)
    half = pod.num_ranks // 2
    partner = np.random.default_rng(3).permutation(half) + half
    t = cl.time_flows(pod, [(i, int(partner[i]), GiB) for i in range(half)]).time
    assert t == pytest.approx(GiB / pod.nic_bandwidth, rel=1e-3)


def test_nics_per_node_set_the_bound_and_the_model_follows():
    runs = {n: cl.estimate("all_reduce", cl.parse_topology(f"dgx-h100:16:nics={n}"), 4 * GiB, model="nccl")
            for n in ("8x400", "8x200", "4x200")}
    b = {n: e.bound.time for n, e in runs.items()}
    # the bound: each node sends 2 (M-1)/M of the size through its NICs (8 x 400 Gb/s = 400 GB/s)
    assert b["8x400"] == pytest.approx(2 * 15 / 16 * 4 * GiB / 400e9, rel=1e-3)
    assert b["8x200"] == pytest.approx(2 * b["8x400"]) and b["4x200"] == pytest.approx(4 * b["8x400"])
    assert runs["8x400"].busbw > 1.8 * runs["8x200"].busbw > 3.2 * runs["4x200"].busbw
    for e in runs.values():
        assert e.time >= e.bound.time


@pytest.mark.parametrize("dtype", ["int8", "uint8", "float8_e4m3", "float8_e5m2"])
def test_nvls_never_reduces_what_the_switch_cannot_add(dtype):
    node = cl.nvswitch_node("dgx-h100")
    assert cl.estimate("all_reduce", node, GiB, model="nccl", dtype="bfloat16").nccl_algorithm == "NVLS"
    e = cl.estimate("all_reduce", node, GiB, model="nccl", dtype=dtype)
    assert e.nccl_algorithm not in ("NVLS", "NVLS_TREE")


def test_nvls_across_nodes_needs_sharp_and_nics():
    algo = lambda t: cl.estimate("all_reduce", t, GiB, model="nccl").nccl_algorithm  # noqa: E731
    assert algo(cl.GpuCluster("dgx-h100", 16)) == "NVLS_TREE"
    assert algo(cl.GpuCluster("dgx-h100", 16, sharp=True)) == "NVLS"
    assert algo(cl.parse_topology("dgx-h100:16:nics=1x400")) not in ("NVLS", "NVLS_TREE")
    with pytest.raises(cl.CollectivesError, match="InfiniBand SHARP"):
        cl.GpuCluster("dgx-h100", 2, sharp=True, fabric="roce")


def test_one_slow_nic_slows_the_ring_and_its_rank_never_waits():
    rail = cl.GpuCluster("dgx-h100", 8, gpus_per_node=1)
    ring = cl.build("all_reduce", rail, "ring")
    size = ring.round_size(GiB)
    ok = cl.scaling.rank_timeline(ring, rail, size)
    slow = cl.scaling.rank_timeline(ring, rail, size, slowdown={5: 2.0})
    assert slow.total / ok.total == pytest.approx(2.0, rel=0.01)
    waits = slow.wait.sum(axis=0)
    assert set(np.flatnonzero(waits == 0)) == {4, 5, 6}       # node 5 and its ring neighbours
    assert np.allclose(slow.step_times, cl.simulate(ring, cl.scaling.slowed(rail, {5: 2.0}), size).step_times)
