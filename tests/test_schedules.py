"""Every schedule is replayed on real numpy data for every N tried, and must
compute its collective's definition; malformed schedules are rejected with a
message naming the step, rank and chunk."""
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import collectives_lib as cl
from collectives_lib.replay import check_fractions
from collectives_lib.schedule import COPY, Schedule, Step, Traffic, boxes_array

GOLDEN = Path(__file__).parent / "golden"


def _by_name(collective, algorithm):
    """A schedule over n abstract ranks, as the registry builds it."""
    return lambda n: cl.build(collective, n, algorithm)


ANY_N = {
    "ring_all_gather": _by_name("all_gather", "ring"),
    "bidirectional_ring_all_gather": _by_name("all_gather", "bidirectional_ring"),
    "bidirectional_ring_whole_all_gather": _by_name("all_gather", "bidirectional_ring_whole"),
    "chain_all_gather": _by_name("all_gather", "chain"),
    "direct_all_gather": _by_name("all_gather", "direct"),
    "nvls_all_gather": _by_name("all_gather", "nvls"),
    "ring_reduce_scatter": _by_name("reduce_scatter", "ring"),
    "bidirectional_ring_reduce_scatter": _by_name("reduce_scatter", "bidirectional_ring"),
    "bidirectional_ring_whole_reduce_scatter": _by_name("reduce_scatter", "bidirectional_ring_whole"),
    "chain_reduce_scatter": _by_name("reduce_scatter", "chain"),
    "direct_reduce_scatter": _by_name("reduce_scatter", "direct"),
    "sharp_reduce_scatter": _by_name("reduce_scatter", "sharp"),
    "nvls_reduce_scatter": _by_name("reduce_scatter", "nvls"),
    "ring_all_reduce": _by_name("all_reduce", "ring"),
    "bidirectional_ring_all_reduce": _by_name("all_reduce", "bidirectional_ring"),
    "bidirectional_ring_whole_all_reduce": _by_name("all_reduce", "bidirectional_ring_whole"),
    "chain_all_reduce": _by_name("all_reduce", "chain"),
    "binomial_tree_all_reduce": _by_name("all_reduce", "binomial_tree"),
    "tree_all_reduce": _by_name("all_reduce", "tree"),
    "sharp_all_reduce": _by_name("all_reduce", "sharp"),
    "nvls_all_reduce": _by_name("all_reduce", "nvls"),
    "ring_all_to_all": _by_name("all_to_all", "ring"),
    "bidirectional_ring_all_to_all": _by_name("all_to_all", "bidirectional_ring"),
    "chain_all_to_all": _by_name("all_to_all", "chain"),
    "direct_all_to_all": _by_name("all_to_all", "direct"),
    "binomial_broadcast": _by_name("broadcast", "binomial_tree"),
    "chain_broadcast": lambda n: cl.builders.trees.chain_broadcast(n, 0, 4),
    "direct_broadcast": _by_name("broadcast", "direct"),
    "multicast_broadcast": _by_name("broadcast", "multicast"),
    "binomial_reduce": lambda n: cl.dual(cl.build("broadcast", n, "binomial_tree")),
    "chain_reduce": lambda n: cl.dual(cl.builders.trees.chain_broadcast(n, 0, 4)),
    "direct_reduce": _by_name("reduce", "direct"),
    "sharp_reduce": _by_name("reduce", "sharp"),
}
POW2 = {
    "recursive_doubling_all_gather": _by_name("all_gather", "recursive_doubling"),
    "recursive_halving_reduce_scatter": _by_name("reduce_scatter", "recursive_halving"),
    "recursive_doubling_all_reduce": _by_name("all_reduce", "recursive_doubling"),
    "rabenseifner_all_reduce": _by_name("all_reduce", "rabenseifner"),
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
                                  "chain_all_to_all", "direct_all_to_all", "binomial_tree_all_reduce"])
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
    ag = cl.builders.torus.mesh_all_gather(dims, kinds, multi=multi)
    cl.check(ag)
    cl.check(cl.reduce_scatter_from(ag))
    cl.check(cl.all_reduce_from(ag))


@pytest.mark.parametrize("dims, kinds", [
    ((4, 6), ["bidirectional_ring_whole", "bidirectional_ring"]),
    ((6, 3, 2), ["bidirectional_ring", "ring", "chain"]),
    ((4, 4), ["bidirectional_ring_whole"] * 2),
], ids=["whole4-split6", "split6-ring3-chain2", "whole4x4"])
@pytest.mark.parametrize("multi", [True, False], ids=["multi_axis", "sequential_axes"])
def test_replay_mesh_collectives_with_mixed_axis_kinds(dims, kinds, multi):
    ag = cl.builders.torus.mesh_all_gather(dims, kinds, multi=multi)
    halves = any(k == "bidirectional_ring" and d % 2 == 0 for k, d in zip(kinds, dims))
    assert ag.slot_shape == tuple(dims) + ((len(dims),) if multi else (1,)) + ((2,) if halves else ())
    cl.check(ag)
    cl.check(cl.dual(ag))
    check_fractions(ag)


@pytest.mark.parametrize("nodes, gpus", [(1, 8), (2, 4), (3, 4), (4, 8), (2, 8)])
def test_replay_hierarchical(nodes, gpus):
    ag = cl.builders.hierarchical.hierarchical_all_gather(nodes, gpus)
    cl.check(ag)
    cl.check(cl.reduce_scatter_from(ag))
    cl.check(cl.all_reduce_from(ag))
    cl.check(cl.builders.hierarchical.hierarchical_all_to_all(nodes, gpus))
    ring = cl.builders.rings.multichannel_ring_all_gather(nodes, gpus)
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
@pytest.mark.parametrize("sharp", [False, True], ids=["ib", "ib_sharp"])
def test_replay_on_gpu_clusters(collective, axes, sharp):
    topo = cl.GpuCluster("dgx-h100", 4, sharp=sharp)
    for alg in cl.algorithms(collective, topo, axes):
        cl.check(cl.build(collective, topo, alg, axes=axes))


def test_replay_send_over_disjoint_paths():
    s = cl.tpu_slice("v5e", "4x4")
    sched = cl.build("send", s, "multipath", src=(3, 3), dst=(0, 0))
    assert len(sched.paths) == 2
    cl.check(sched)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 9), seed=st.integers(0, 10_000))
def test_imbalanced_all_to_all(n, seed):
    rng = np.random.default_rng(seed)
    matrix = rng.integers(0, 5, size=(n, n)).astype(float)
    np.fill_diagonal(matrix, 0)
    matrix[0, 1] += 1
    for build in ((lambda n, x=None, **k: cl.build("all_to_all", n, "ring", **({"matrix": x} if x is not None else {}), **k)), (lambda n, x=None, **k: cl.build("all_to_all", n, "bidirectional_ring", **({"matrix": x} if x is not None else {}), **k)), (lambda n, x=None, **k: cl.build("all_to_all", n, "chain", **({"matrix": x} if x is not None else {}), **k)),
                  (lambda n, x=None, **k: cl.build("all_to_all", n, "direct", **({"matrix": x} if x is not None else {}), **k))):
        sched = build(n, matrix)
        cl.check(sched)
        # every byte that leaves a rank is accounted for
        sent = sum(step.traffic.fraction.sum() for step in sched.steps)
        assert sent >= (matrix.sum()) / matrix.sum() - 1e-12


def test_fractions_agree_with_chunks():
    for sched in [cl.build("all_reduce", 6, "ring"), cl.builders.torus.mesh_all_gather((4, 4), ["bidirectional_ring"] * 2),
                  cl.builders.torus.mesh_all_gather((4, 3, 2), ["bidirectional_ring", "bidirectional_ring", "chain"]),
                  cl.builders.torus.mesh_all_gather((6, 4), ["bidirectional_ring", "ring"], multi=False),
                  cl.build("all_reduce", 8, "bidirectional_ring"),
                  cl.builders.hierarchical.hierarchical_all_to_all(2, 4), cl.build("all_to_all", 6, "bidirectional_ring")]:
        check_fractions(sched)


def test_check_catches_bytes_that_do_not_match_their_chunks():
    """A schedule whose transfers are charged a tenth of what their chunks hold moves the right
    data but would be timed ten times too fast: check must refuse it."""
    import dataclasses

    good = cl.build("all_gather", 4, "ring")
    steps = [dataclasses.replace(step, traffic=dataclasses.replace(step.traffic, fraction=step.traffic.fraction * 0.1))
             for step in good.steps]
    scaled = dataclasses.replace(good, steps=steps)
    cl.replay(scaled)   # the data moves correctly...
    with pytest.raises(cl.ScheduleError, match=r"step 1: rank 0 -> rank 1 is charged 0.025 of V but its chunk"):
        cl.check(scaled)  # ...but the bytes charged are not the bytes moved
    assert repr(cl.check(good)) == "checked ring all_gather, 4 ranks, 3 steps: every rank's result, every transfer's bytes"
    assert len(cl.check(good)) == good.num_steps + 1   # still the states, as replay returns them


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
    rs = cl.build("reduce_scatter", 4, "ring")
    steps = list(rs.steps) + [rs.steps[0]]
    bad = Schedule(**{**rs.__dict__, "steps": tuple(steps)})
    with pytest.raises(cl.ScheduleError, match=r"step 4: rank \d reduces block \d into rank \d, "
                                               r"which already has the contribution of rank"):
        cl.check(bad)


def test_checker_names_incomplete_result():
    ag = cl.build("all_gather", 4, "ring")
    bad = Schedule(**{**ag.__dict__, "steps": ag.steps[:-1]})
    with pytest.raises(cl.ScheduleError, match=r"rank \d does not get block \d"):
        cl.check(bad)
    ar = cl.build("all_reduce", 4, "ring")
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
    rs = cl.build("reduce_scatter", 3, "ring")
    t = rs.steps[-1].traffic
    flipped = Traffic(t.src, t.dst, np.full(len(t), COPY, np.uint8), t.fraction)
    steps = list(rs.steps[:-1]) + [Step(flipped, rs.steps[-1].chunks, rs.steps[-1].stage)]
    with pytest.raises(cl.ScheduleError):
        cl.check(Schedule(**{**rs.__dict__, "steps": tuple(steps)}))


# ----------------------------------------------------------------- golden listings

GOLDEN_CASES = {
    "ring_all_reduce_4": lambda: cl.build("all_reduce", 4, "ring"),
    "bidirectional_ring_all_gather_5": lambda: cl.build("all_gather", 5, "bidirectional_ring"),
    "bidirectional_ring_all_gather_4": lambda: cl.build("all_gather", 4, "bidirectional_ring"),
    "chain_all_gather_4": lambda: cl.build("all_gather", 4, "chain"),
    "recursive_doubling_all_gather_4": lambda: cl.build("all_gather", 4, "recursive_doubling"),
    "bidirectional_ring_all_to_all_4": lambda: cl.build("all_to_all", 4, "bidirectional_ring"),
    "sharp_all_reduce_4": lambda: cl.build("all_reduce", 4, "sharp"),
    "multi_axis_all_gather_2x2": lambda: cl.builders.torus.mesh_all_gather((2, 2), ["chain", "chain"]),
}


@pytest.mark.parametrize("name", sorted(GOLDEN_CASES))
def test_golden_listing(name):
    text = str(GOLDEN_CASES[name]()) + "\n"
    path = GOLDEN / f"{name}.txt"
    assert path.exists(), f"golden listing {path} is missing: it is checked in, never written by a test"
    assert text == path.read_text()
