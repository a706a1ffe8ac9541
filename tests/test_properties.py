"""Properties a user would call a silent wrong answer if they failed (issue 20, item 6).

Random valid questions, in both models:

* every rooted collective honours its root, in the API and the command line;
* an estimate equals its sweep row (algorithm and time);
* the pick is never slower than an alternative the same answer lists, by the time the
  choice is made on (the ideal model's time; NCCL's tuner's time under NCCL's model);
* on generic topologies ``auto`` is never slower than an algorithm the user can force
  under the same model;
* what ``algorithms`` lists is what ``estimate`` accepts;
* time never falls when the size grows, nor rises when the links get faster;
* no answer is below its own lower bound.
"""

from __future__ import annotations

import io
import re
from datetime import timedelta

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import collectives_lib as cl
from collectives_lib.cli import main
from collectives_lib.models import algorithms as accepted

SETTINGS = dict(deadline=timedelta(seconds=30), database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])

GENERIC = st.one_of(
    st.integers(2, 12).map(lambda n: cl.Ring(n, bandwidth=45e9, latency=1e-6)),
    st.integers(2, 12).map(lambda n: cl.Chain(n, bandwidth=45e9, latency=1e-6)),
    st.integers(2, 16).map(lambda n: cl.Switch(n, bandwidth=50e9, latency=5e-7)),
    st.integers(2, 8).map(lambda n: cl.Switch(n, bandwidth=50e9, latency=5e-7, in_network=True)),
    st.tuples(st.integers(2, 4), st.integers(2, 4), st.booleans()).map(
        lambda t: cl.Torus((t[0], t[1]), t[2], bandwidth=45e9, latency=1e-6)),
)
PRESETS = st.sampled_from([cl.nvswitch_node("dgx-h100"), cl.nvswitch_node("dgx-a100"),
                           cl.nvswitch_node("dgx-b200"), cl.GpuCluster("dgx-h100", 2),
                           cl.GpuCluster("dgx-h100", 4), cl.GpuCluster("dgx-a100", 3),
                           cl.tpu_slice("v5e", "4x4"), cl.tpu_slice("v5p", "2x2x2")])
COLLECTIVES = st.sampled_from(list(cl.COLLECTIVES))
ROOTED = st.sampled_from(["broadcast", "reduce", "gather"])
SIZES = st.integers(1, 1 << 32)


def models_for(topology) -> list[str]:
    return ["ideal", "nccl"] if cl.nccl.supports(topology) else ["ideal"]


def _answer(*args, **kwargs):
    """An estimate, or None where the question has no answer (an error naming why)."""
    try:
        return cl.estimate(*args, **kwargs)
    except cl.CollectivesError:
        return None


# -- roots ---------------------------------------------------------------------------------

@settings(max_examples=60, **SETTINGS)
@given(GENERIC, ROOTED, st.data())
def test_every_rooted_collective_honours_its_root_in_the_api(topology, collective, data):
    n = topology.num_ranks
    root = data.draw(st.integers(0, n - 1))
    for name in cl.algorithms(collective, topology, root=root):
        sched = cl.build(collective, topology, name, root=root)
        assert sched.root == root, (collective, name)
        cl.check(sched)                       # the replay's end state is the definition's, at this root
        if collective == "gather":            # every block is sent towards the root; the root sends none
            sends = [t for k in range(sched.num_steps) for t in sched.transfers(k)]
            assert root not in {t.src for t in sends} and (root in {t.dst for t in sends} or n == 1)
    e = cl.estimate(collective, topology, 1 << 20, root=root, model="ideal")
    assert f"rank {root}" in e.bound.latency_reason or topology.latency == 0
    with pytest.raises(cl.CollectivesError, match="root"):
        cl.estimate(collective, topology, 1 << 20, root=n, model="ideal")


@settings(max_examples=40, **SETTINGS)
@given(st.integers(2, 9), ROOTED, st.data())
def test_every_rooted_collective_honours_its_root_in_the_command_line(n, collective, data):
    root = data.draw(st.integers(0, n - 1))
    out, err = io.StringIO(), io.StringIO()
    assert main(["show", "-t", f"switch:{n}", "--bandwidth", "1e9", "-c", collective, "--root", str(root)],
                out, err) == 0, err.getvalue()
    pairs = [(int(a), int(b)) for a, b in re.findall(r"rank (\d+) -> rank (\d+)", out.getvalue())]
    if collective == "gather":
        assert pairs and {b for _, b in pairs} == {root}
    elif collective == "broadcast":
        assert root in {a for a, _ in pairs} and root not in {b for _, b in pairs}
    else:                                            # reduce: the root only receives
        assert root in {b for _, b in pairs} and root not in {a for a, _ in pairs}


def test_a_root_where_none_applies_is_refused_not_ignored():
    ring = cl.Ring(4, bandwidth=1e9)
    for call in (lambda: cl.estimate("all_reduce", ring, 1 << 20, root=2),
                 lambda: cl.build("all_gather", ring, "ring", root=1),
                 lambda: cl.lower_bound("all_to_all", ring, 1 << 20, root=3)):
        with pytest.raises(cl.CollectivesError, match="root"):
            call()
    err = io.StringIO()
    assert main(["estimate", "-t", "ring:4", "--bandwidth", "1e9", "-c", "all_reduce", "-s", "1M",
                 "--root", "2"], io.StringIO(), err) == 2
    assert "root does not apply to all_reduce" in err.getvalue()


# -- one question, one answer ---------------------------------------------------------------

@settings(max_examples=60, **SETTINGS)
@given(st.one_of(GENERIC, PRESETS), COLLECTIVES, st.lists(SIZES, min_size=1, max_size=5), st.data())
def test_an_estimate_equals_its_sweep_row(topology, collective, sizes, data):
    for model in models_for(topology):
        try:
            rows = cl.models.sweep(collective, topology, sizes, model=model)
        except cl.CollectivesError:
            continue
        i = data.draw(st.integers(0, len(sizes) - 1))
        one = cl.estimate(collective, topology, sizes[i], model=model)
        assert (one.algorithm, one.time) == (rows[i].algorithm, rows[i].time), (model, sizes[i])
        assert one.alternatives == rows[i].alternatives


@settings(max_examples=60, **SETTINGS)
@given(st.one_of(GENERIC, PRESETS), COLLECTIVES, SIZES)
def test_the_pick_is_never_slower_than_an_alternative_it_lists(topology, collective, size):
    for model in models_for(topology):
        e = _answer(collective, topology, size, model=model)
        if e is None:
            continue
        for a in e.alternatives:
            assert e.chosen_by <= a.chosen_by * (1 + 1e-12), (model, e.label, a.label)


@settings(max_examples=50, **SETTINGS)
@given(GENERIC, COLLECTIVES, SIZES)
def test_auto_is_never_slower_than_what_a_user_can_force_on_generic_topologies(topology, collective, size):
    auto = _answer(collective, topology, size, model="ideal")
    if auto is None:
        return
    for name, why in accepted(collective, topology, model="ideal").items():
        if why is None:
            forced = cl.estimate(collective, topology, size, name, model="ideal")
            assert auto.time <= forced.time * (1 + 1e-12), (name, auto.algorithm)


@settings(max_examples=40, **SETTINGS)
@given(st.sampled_from([cl.nvswitch_node("dgx-h100"), cl.GpuCluster("dgx-h100", 2),
                        cl.GpuCluster("dgx-b200", 4), cl.nvswitch_node("dgx-a100")]),
       st.sampled_from(["all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce"]), SIZES)
def test_nccl_auto_is_its_tuner_least_time_over_what_a_user_can_force(topology, collective, size):
    auto = cl.estimate(collective, topology, size)
    for name, why in accepted(collective, topology).items():
        if why is None:
            forced = cl.estimate(collective, topology, size, name)
            assert auto.tuner_time <= forced.tuner_time * (1 + 1e-12), name


@settings(max_examples=40, **SETTINGS)
@given(st.one_of(GENERIC, PRESETS), COLLECTIVES)
def test_what_algorithms_lists_estimate_accepts(topology, collective):
    for model in models_for(topology):
        try:
            table = accepted(collective, topology, model=model)
        except cl.CollectivesError:
            continue
        for name, why in table.items():
            if why is None:
                assert cl.estimate(collective, topology, 1 << 20, name, model=model).algorithm == name
            else:
                with pytest.raises(cl.CollectivesError):
                    cl.estimate(collective, topology, 1 << 20, name, model=model)


# -- monotonic, and above the bound --------------------------------------------------------------

@settings(max_examples=50, **SETTINGS)
@given(st.one_of(GENERIC, PRESETS), COLLECTIVES, st.lists(SIZES, min_size=2, max_size=6, unique=True))
def test_time_never_falls_when_the_size_grows(topology, collective, sizes):
    sizes = sorted(sizes)
    for model in models_for(topology):
        try:
            rows = cl.models.sweep(collective, topology, sizes, model=model)
        except cl.CollectivesError:
            continue
        times = [e.time for e in rows]
        assert all(b >= a * (1 - 1e-12) for a, b in zip(times, times[1:])), (model, sizes, times)


@settings(max_examples=40, **SETTINGS)
@given(st.integers(2, 12), st.sampled_from(["ring", "switch", "torus"]), COLLECTIVES, SIZES,
       st.floats(1.01, 100))
def test_time_never_rises_when_the_links_get_faster(n, kind, collective, size, faster):
    def topo(bw):
        if kind == "ring":
            return cl.Ring(n, bandwidth=bw, latency=1e-6)
        if kind == "switch":
            return cl.Switch(n, bandwidth=bw, latency=1e-6)
        return cl.Torus((2, n), True, bandwidth=bw, latency=1e-6)
    slow = _answer(collective, topo(10e9), size, model="ideal")
    if slow is None:
        return
    fast = cl.estimate(collective, topo(10e9 * faster), size, model="ideal")
    assert fast.time <= slow.time * (1 + 1e-12)


@settings(max_examples=60, **SETTINGS)
@given(st.one_of(GENERIC, PRESETS), COLLECTIVES, SIZES)
def test_no_answer_is_below_its_own_lower_bound(topology, collective, size):
    for model in models_for(topology):
        e = _answer(collective, topology, size, model=model)
        if e is None or e.moves_nothing:
            continue
        assert e.bound.time <= e.time * (1 + 1e-9), (model, e.label, e.bound, e.time)
        assert e.efficiency <= 1 + 1e-9


def test_sizes_that_are_not_whole_elements_move_whole_elements():
    """A 7-byte send of float32 moves one element: the bound counts the 4 bytes that move."""
    link = cl.Ring(2, bandwidth=1e9)
    e = cl.estimate("send", link, 7)
    assert e.efficiency <= 1 and e.bound.bandwidth_time == pytest.approx(4 / 1e9)
    assert e.time == pytest.approx(4 / 1e9)


def test_a_generic_ring_is_held_to_the_argmin_a_tpu_slice_to_the_rule():
    """auto on a TPU slice is what XLA runs (stated); on a generic ring it is the fastest."""
    tpu = cl.estimate("all_gather", cl.tpu_slice("v5e", "4x4"), 1 << 20, axes="x")
    assert tpu.algorithm == "chain" and tpu.alternatives == () and "no wraparound" in tpu.reason
    ring = cl.estimate("all_gather", cl.Ring(8, bandwidth=45e9, latency=1e-6), 1 << 30)
    assert ring.algorithm == "bidirectional_ring" and ring.efficiency == pytest.approx(1, rel=1e-3)
    assert np.all([ring.time <= a.time for a in ring.alternatives])
