"""Every schedule is replayed on real numpy data for every N tried, and must
compute its collective's definition; malformed schedules are rejected with a
message naming the step, rank and chunk."""
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import collectives_lib as cl
from collectives_lib import builders as A
from collectives_lib.schedule import COPY, REDUCE, Schedule, Step, Traffic, boxes_array

GOLDEN = Path(__file__).parent / "golden"

ANY_N = {
    "ring_all_gather": cl.ring_all_gather,
    "bidirectional_ring_all_gather": cl.bidirectional_ring_all_gather,
    "chain_all_gather": cl.chain_all_gather,
    "direct_all_gather": cl.direct_all_gather,
    "multicast_all_gather": cl.multicast_all_gather,
    "ring_reduce_scatter": cl.ring_reduce_scatter,
    "bidirectional_ring_reduce_scatter": cl.bidirectional_ring_reduce_scatter,
    "chain_reduce_scatter": cl.chain_reduce_scatter,
    "direct_reduce_scatter": A.direct_reduce_scatter_local,
    "sharp_reduce_scatter": A.sharp_reduce_scatter_local,
    "ring_all_reduce": cl.ring_all_reduce,
    "bidirectional_ring_all_reduce": cl.bidirectional_ring_all_reduce,
    "chain_all_reduce": cl.chain_all_reduce,
    "tree_all_reduce": cl.tree_all_reduce,
    "sharp_all_reduce": cl.sharp_all_reduce,
    "ring_all_to_all": cl.ring_all_to_all,
    "bidirectional_ring_all_to_all": cl.bidirectional_ring_all_to_all,
    "chain_all_to_all": cl.chain_all_to_all,
    "direct_all_to_all": cl.direct_all_to_all,
    "binomial_broadcast": cl.binomial_broadcast,
    "chain_broadcast": lambda n: A.chain_broadcast_local(n, 0, 4),
    "direct_broadcast": A.direct_broadcast_local,
    "multicast_broadcast": A.multicast_broadcast_local,
    "binomial_reduce": lambda n: cl.dual(cl.binomial_broadcast(n)),
    "chain_reduce": lambda n: cl.dual(A.chain_broadcast_local(n, 0, 4)),
    "direct_reduce": A.direct_reduce_local,
    "sharp_reduce": A.sharp_reduce_local,
}
POW2 = {
    "recursive_doubling_all_gather": cl.recursive_doubling_all_gather,
    "recursive_halving_reduce_scatter": cl.recursive_halving_reduce_scatter,
    "recursive_doubling_all_reduce": cl.recursive_doubling_all_reduce,
    "rabenseifner_all_reduce": cl.rabenseifner_all_reduce,
}
SIZES = [1, 2, 3, 4, 5, 6, 7, 8, 12, 16]


@pytest.mark.parametrize("n", SIZES, ids=lambda n: f"n{n}")
@pytest.mark.parametrize("name", sorted(ANY_N))
def test_replay_any_n(name, n):
    sched = ANY_N[name](n)
    states = cl.check(sched)
    assert len(states) == sched.num_steps + 1


@pytest.mark.parametrize("n", [1, 2, 4, 8, 16, 32, 64], ids=lambda n: f"n{n}")
@pytest.mark.parametrize("name", sorted(POW2))
def test_replay_powers_of_two(name, n):
    cl.check(POW2[name](n))


@pytest.mark.parametrize("name", ["ring_all_reduce", "bidirectional_ring_all_gather",
                                  "chain_all_to_all", "direct_all_to_all", "tree_all_reduce"])
def test_replay_at_64_ranks(name):
    cl.check(ANY_N[name](64))


@pytest.mark.parametrize("name", sorted(POW2))
@pytest.mark.parametrize("n", [3, 6, 12])
def test_power_of_two_required(name, n):
    with pytest.raises(cl.CollectivesError, match=f"needs a power-of-two number of ranks, got N = {n}"):
        POW2[name](n)


MESHES = [(2, 2), (4, 4), (2, 4), (3, 5), (4, 4, 4), (2, 3, 4), (8, 8)]


@pytest.mark.parametrize("dims", MESHES, ids=lambda d: "mesh" + "x".join(map(str, d)))
@pytest.mark.parametrize("multi", [True, False], ids=["multi_axis", "sequential_axes"])
@pytest.mark.parametrize("wrap", [True, False], ids=["torus", "mesh"])
def test_replay_mesh_collectives(dims, multi, wrap):
    kinds = ["bidirectional_ring" if wrap and d > 2 else "chain" for d in dims]
    ag = cl.mesh_all_gather(dims, kinds, multi=multi)
    cl.check(ag)
    cl.check(cl.reduce_scatter_from(ag))
    cl.check(cl.all_reduce_from(ag))


@pytest.mark.parametrize("nodes, gpus", [(1, 8), (2, 4), (3, 4), (4, 8), (2, 8)])
def test_replay_hierarchical(nodes, gpus):
    ag = cl.hierarchical_all_gather(nodes, gpus)
    cl.check(ag)
    cl.check(cl.reduce_scatter_from(ag))
    cl.check(cl.all_reduce_from(ag))
    cl.check(cl.hierarchical_all_to_all(nodes, gpus))
    ring = A.multichannel_ring_all_gather_local(nodes, gpus)
    cl.check(ring)
    cl.check(cl.all_reduce_from(ring))


@pytest.mark.parametrize("spec, axes", [
    ("v5e:4x4", None), ("v5e:4x4", "x"), ("v5e:8x4", "y"), ("v5p:4x4x4", ("x", "z")),
    ("v5p:2x2x4", None),
], ids=lambda x: str(x))
@pytest.mark.parametrize("collective", ["all_gather", "reduce_scatter", "all_reduce", "all_to_all"])
def test_replay_on_tpu_slices_with_groups(spec, axes, collective):
    gen, shape = spec.split(":")
    topo = cl.tpu_slice(gen, shape)
    for alg in cl.algorithms(collective, topo, axes):
        sched = cl.build(collective, topo, alg, axes=axes)
        cl.check(sched)


@pytest.mark.parametrize("collective", ["all_gather", "reduce_scatter", "all_reduce", "all_to_all",
                                        "broadcast", "reduce"])
@pytest.mark.parametrize("axes", [None, "node", "gpu"])
def test_replay_on_gpu_clusters(collective, axes):
    topo = cl.GpuCluster("dgx-h100", 4)
    for alg in cl.algorithms(collective, topo, axes):
        cl.check(cl.build(collective, topo, alg, axes=axes))


def test_replay_send_over_disjoint_paths():
    s = cl.tpu_slice("v5e", "4x4")
    sched = cl.build_send(s, (3, 3), (0, 0))
    assert len(sched.paths) == 2
    cl.check(sched)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 9), seed=st.integers(0, 10_000))
def test_imbalanced_all_to_all(n, seed):
    rng = np.random.default_rng(seed)
    matrix = rng.integers(0, 5, size=(n, n)).astype(float)
    np.fill_diagonal(matrix, 0)
    matrix[0, 1] += 1
    for build in (cl.ring_all_to_all, cl.bidirectional_ring_all_to_all, cl.chain_all_to_all,
                  cl.direct_all_to_all):
        sched = build(n, matrix)
        cl.check(sched)
        # every byte that leaves a rank is accounted for
        sent = sum(step.traffic.fraction.sum() for step in sched.steps)
        assert sent >= (matrix.sum()) / matrix.sum() - 1e-12


def test_fractions_agree_with_chunks():
    for sched in [cl.ring_all_reduce(6), cl.mesh_all_gather((4, 4), ["bidirectional_ring"] * 2),
                  cl.hierarchical_all_to_all(2, 4), cl.bidirectional_ring_all_to_all(6)]:
        A._check_fractions(sched)


# ----------------------------------------------------------------- malformed schedules

def _one_step(collective, n, src, dst, box, op=COPY, fraction=None, slot_shape=None):
    slot_shape = slot_shape or (n,)
    boxes = boxes_array([(b[0], b[1]) for b in box], 1)
    t = Traffic.make([src], [dst], op, fraction or 1.0 / n)
    return Schedule(collective, "broken", n, np.arange(n)[None, :], (n,), slot_shape,
                    (Step(t, boxes.reshape(1, len(box), 2)),))


def test_checker_names_missing_data():
    bad = _one_step("all_gather", 4, 1, 2, [(3, 1)])
    with pytest.raises(cl.ScheduleError, match=r"step 1: rank 1 sends block 3 to rank 2 but does not hold block 3 yet"):
        cl.check(bad)


def test_checker_names_double_counting():
    rs = cl.ring_reduce_scatter(4)
    steps = list(rs.steps) + [rs.steps[0]]
    bad = Schedule(**{**rs.__dict__, "steps": tuple(steps)})
    with pytest.raises(cl.ScheduleError, match=r"step 4: rank \d reduces block \d into rank \d, "
                                               r"which already has the contribution of rank"):
        cl.check(bad)


def test_checker_names_incomplete_result():
    ag = cl.ring_all_gather(4)
    bad = Schedule(**{**ag.__dict__, "steps": ag.steps[:-1]})
    with pytest.raises(cl.ScheduleError, match=r"rank \d does not get block \d"):
        cl.check(bad)
    ar = cl.ring_all_reduce(4)
    bad = Schedule(**{**ar.__dict__, "steps": ar.steps[1:]})
    with pytest.raises(cl.ScheduleError, match="fully reduced: it is missing the contribution"):
        cl.check(bad)


def test_checker_rejects_self_sends_and_out_of_range():
    with pytest.raises(cl.ScheduleError, match="sends block 0 to itself"):
        cl.check(_one_step("all_gather", 4, 0, 0, [(0, 1)]))
    with pytest.raises(cl.ScheduleError, match="outside 0..3"):
        cl.check(_one_step("all_gather", 4, 0, 7, [(0, 1)]))
    with pytest.raises(cl.ScheduleError, match="outside the \\(4,\\) grid"):
        cl.check(_one_step("all_gather", 4, 0, 1, [(5, 1)]))


def test_checker_rejects_wrong_values_even_with_right_contributors():
    # a copy that should have been a reduce leaves the right owner but the wrong sum
    rs = cl.ring_reduce_scatter(3)
    t = rs.steps[-1].traffic
    flipped = Traffic(t.src, t.dst, np.full(len(t), COPY, np.uint8), t.fraction)
    steps = list(rs.steps[:-1]) + [Step(flipped, rs.steps[-1].chunks, rs.steps[-1].stage)]
    with pytest.raises(cl.ScheduleError):
        cl.check(Schedule(**{**rs.__dict__, "steps": tuple(steps)}))


# ----------------------------------------------------------------- golden listings

GOLDEN_CASES = {
    "ring_all_reduce_4": lambda: cl.ring_all_reduce(4),
    "bidirectional_ring_all_gather_5": lambda: cl.bidirectional_ring_all_gather(5),
    "chain_all_gather_4": lambda: cl.chain_all_gather(4),
    "recursive_doubling_all_gather_4": lambda: cl.recursive_doubling_all_gather(4),
    "bidirectional_ring_all_to_all_4": lambda: cl.bidirectional_ring_all_to_all(4),
    "sharp_all_reduce_4": lambda: cl.sharp_all_reduce(4),
    "multi_axis_all_gather_2x2": lambda: cl.mesh_all_gather((2, 2), ["chain", "chain"]),
}


@pytest.mark.parametrize("name", sorted(GOLDEN_CASES))
def test_golden_listing(name):
    text = str(GOLDEN_CASES[name]()) + "\n"
    path = GOLDEN / f"{name}.txt"
    if not path.exists():  # first run writes it; review it and commit it
        path.write_text(text)
    assert text == path.read_text()
