"""The Python API at every wrong input (issue 15): the library's own error, naming the value.

Each case is a call that used to raise a raw AttributeError, IndexError,
TypeError or ValueError from deep inside, or silently changed its input
(``Torus((2.5, 2))`` was 2x2, ``bandwidth=True`` was 1 B/s, ``wraparound="no"``
was a wraparound), or returned NaN or negative times. Now every one raises
:class:`collectives_lib.CollectivesError` whose message contains the words
given here (the offending value and what is allowed).
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import collectives_lib as cl
from collectives_lib import checks

RING = cl.Ring(8, bandwidth=45e9)
TORUS = cl.Torus((4, 4), bandwidth=1e9)
NODE = cl.nvswitch_node("dgx-h100")
AR = cl.build("all_reduce", RING, "ring")
AG = cl.build("all_gather", RING, "ring")

CASES = {
    # topologies
    "torus shape as a string": (lambda: cl.Torus("4x4", bandwidth=1e9), "the string '4x4'"),
    "torus of 2.5 x 2": (lambda: cl.Torus((2.5, 2), bandwidth=1e9), "got 2.5 in (2.5, 2)"),
    "torus of no axes": (lambda: cl.Torus((), bandwidth=1e9), "at least one axis"),
    "mesh shape as a string": (lambda: cl.mesh("a", bandwidth=1e9), "the string 'a'"),
    "wraparound as a string": (lambda: cl.Torus((4, 4), "no", bandwidth=1e9), "wraparound must be True"),
    "wraparound per axis as strings": (lambda: cl.Torus((4, 4), ["no", "no"], bandwidth=1e9),
                                       "wraparound (per axis) must be True or False, got 'no'"),
    "bidirectional as a string": (lambda: cl.Ring(4, bandwidth=1e9, bidirectional="no"),
                                  "bidirectional must be True or False, got 'no'"),
    "bandwidth True": (lambda: cl.Ring(4, bandwidth=True), "must be a positive number, got True"),
    "switch bandwidth True": (lambda: cl.Switch(4, bandwidth=True), "got True"),
    "bandwidth NaN": (lambda: cl.Ring(4, bandwidth=math.nan), "got nan"),
    "latency infinite": (lambda: cl.Ring(4, bandwidth=1e9, latency=math.inf), "got inf"),
    "ranks 8.0": (lambda: cl.Ring(8.0, bandwidth=1e9), "whole number >= 1, got 8.0"),
    "ranks '8'": (lambda: cl.Chain("8", bandwidth=1e9), "got '8'"),
    "full mesh of 2.5": (lambda: cl.FullMesh(2.5, bandwidth=1e9), "got 2.5"),
    "tpu slice of 2.5 x 2": (lambda: cl.tpu_slice("v5e", (2.5, 2)), "got 2.5 in (2.5, 2)"),
    "GPUs 2.5": (lambda: cl.nvswitch_node("dgx-h100", gpus=2.5), "got 2.5"),
    "nodes 2.5": (lambda: cl.GpuCluster("dgx-h100", 2.5), "got 2.5"),
    "spec not a string": (lambda: cl.parse_topology(5), "not a value of type int"),
    "bandwidth beyond any link": (lambda: cl.Ring(4, bandwidth=1e-300), "between 0.001 and 1e+18 bytes/s, got 1e-300"),
    "latency beyond any link": (lambda: cl.Switch(4, bandwidth=1e9, latency=1e308), "at most 1e+06 s"),
    "cluster NIC bandwidth 1e30": (lambda: cl.GpuCluster("dgx-h100", 2, nic_bandwidth=1e30), "nic_bandwidth must be between"),
    "size 1e-300 (was 0 bytes)": (lambda: cl.parse_size("1e-300"), "less than one byte"),
    "size beyond any memory": (lambda: cl.parse_size("1e300"), "beyond any memory"),
    "estimate beyond any memory": (lambda: cl.estimate("all_reduce", RING, 10**40), "at most 1e+36 bytes"),
    # building
    "a spec string for a topology": (lambda: cl.build("all_reduce", "ring:8"),
                                     "cl.parse_topology('ring:8'"),
    "axes=[]": (lambda: cl.build("all_reduce", TORUS, "ring", axes=[]), "at least one axis"),
    "axes=['']": (lambda: cl.build("all_reduce", TORUS, "ring", axes=""), "must name an axis"),
    "axes of a float": (lambda: cl.build("all_reduce", TORUS, "ring", axes=[1.5]), "got 1.5"),
    "axes on a switch []": (lambda: cl.algorithms("all_reduce", cl.Switch(4, bandwidth=1e9), axes=[]),
                            "at least one axis"),
    "axes on a cluster []": (lambda: cl.build("all_reduce", cl.GpuCluster("dgx-h100", 2), "ring", axes=[]),
                             "at least one axis"),
    "root 2.5": (lambda: cl.build("broadcast", RING, "binomial_tree", root=2.5), "got 2.5"),
    "root True": (lambda: cl.build("broadcast", RING, "binomial_tree", root=True), "got True"),
    "root 8 of 8": (lambda: cl.build("broadcast", RING, "binomial_tree", root=8), "0..7, got 8"),
    "unknown option to build": (lambda: cl.build("all_reduce", RING, "ring", foo=1), "unknown option 'foo'"),
    "unknown algorithm": (lambda: cl.build("send", RING, "foo"), "known: direct, multipath"),
    "unknown collective": (lambda: cl.build("all_reduction", RING, "ring"), "'all_reduction'"),
    # timing
    "unknown option to estimate": (lambda: cl.estimate("all_reduce", RING, 1024, foo=1), "unknown option 'foo'"),
    "unknown option to sweep": (lambda: cl.models.sweep("all_reduce", RING, [1024], foo=1), "unknown option 'foo'"),
    "nvls as a string": (lambda: cl.estimate("all_reduce", NODE, 1024, nvls="no"), "got 'no'"),
    "estimate size 1.5": (lambda: cl.estimate("all_reduce", RING, 1.5), "got 1.5"),
    "estimate size True": (lambda: cl.estimate("all_reduce", RING, True), "got True"),
    "estimate size '1MiB'": (lambda: cl.estimate("all_reduce", RING, "1MiB"), "got '1MiB'"),
    "overhead NaN": (lambda: cl.simulate(AR, RING, 1024, overhead=math.nan), "got nan"),
    "overhead True": (lambda: cl.estimate("all_reduce", RING, 1024, overhead=True), "got True"),
    "simulate sizes -1 and NaN": (lambda: cl.simulate_sizes(AR, RING, [-1, math.nan]), "sizes"),
    "simulate size NaN": (lambda: cl.simulate(AR, RING, math.nan), "got nan"),
    "simulate a string": (lambda: cl.simulate("ring", RING, 1024), "schedule must be a Schedule (such as cl.build('all_reduce', ring, 'ring')), got 'ring'"),
    "simulate on None": (lambda: cl.simulate(AR, None, 1024), "topology must be a Topology (such as cl.Ring(8, bandwidth=45e9)), got None"),
    "simulate on a spec": (lambda: cl.simulate(AR, "ring:8", 1024), "cl.parse_topology('ring:8'"),
    "element size 0": (lambda: cl.simulate(AR, RING, 1024, element_size=0), "element_size (bytes) must be >= 1"),
    "element size 2.5": (lambda: cl.simulate(AR, RING, 1024, element_size=2.5), "got 2.5"),
    "overlap as a string": (lambda: cl.simulate(AR, RING, 1024, overlap="no"), "overlap must be True or False"),
    "placement of letters": (lambda: cl.simulate(AR, RING, 1024, placement="abc"), "placement must be a permutation"),
    "placement of halves": (lambda: cl.simulate(AR, RING, 1024, placement=[0.5] * 8),
                            "placement must be a permutation"),
    "estimate root out of range": (lambda: cl.estimate("reduce", cl.Torus((1, 4), bandwidth=1e9), 1024, root=7),
                                   "root must be a rank 0..3, got 7"),
    "estimate root -1": (lambda: cl.estimate("broadcast", RING, 1024, root=-1), "root must be a rank 0..7, got -1"),
    "root outside its group": (lambda: cl.build("broadcast", TORUS, "chain", axes="x", root=5),
                               "0..3 of its group (4 groups of 4 ranks), got 5"),
    "lower bound root 7 of 4": (lambda: cl.lower_bound("broadcast", cl.Ring(4, bandwidth=1e9), 1024, root=7),
                                "root must be a rank 0..3, got 7"),
    "step of a step-loads 99": (lambda: cl.step_link_loads(AR, RING, 99, 1024), "step must be 0..13"),
    "step of a step-loads -1": (lambda: cl.step_link_loads(AR, RING, -1, 1024), "step must be >= 0"),
    "lower bound of NaN": (lambda: cl.lower_bound("all_reduce", RING, math.nan), "got nan"),
    "lower bound of -1": (lambda: cl.lower_bound("all_reduce", RING, -1), "got -1"),
    "choose for -1 bytes": (lambda: cl.choose("all_reduce", RING, -1), "got -1"),
    "choose for NaN bytes": (lambda: cl.choose("all_reduce", RING, math.nan), "got nan"),
    # proving and composing
    "check a string": (lambda: cl.check("x"), "must be a Schedule (such as cl.build('all_reduce', ring, 'ring')), got 'x'"),
    "replay a string": (lambda: cl.replay("x"), "got 'x'"),
    "replay 0 elements": (lambda: cl.replay(AR, elements=0), "elements (numbers per slot) must be >= 1"),
    "check 2.5 elements": (lambda: cl.check(AR, elements=2.5), "got 2.5"),
    "replay inputs of letters": (lambda: cl.replay_inputs(AR, "abc"), "inputs must be"),
    "arrival steps of a string": (lambda: cl.arrival_steps(AG, states="abc"), "states must be what replay"),
    "dual of a string": (lambda: cl.dual("x"), "got 'x'"),
    "reduce-scatter from a string": (lambda: cl.reduce_scatter_from("x"), "got 'x'"),
    "all-reduce from a string": (lambda: cl.all_reduce_from("x"), "got 'x'"),
    "format -1 steps": (lambda: AR.format(max_steps=-1), "max_steps (steps to print) must be >= 0, got -1"),
    # sizes
    "1Kb": (lambda: cl.parse_size("1Kb"), "lowercase b is bits"),
    "8Gb": (lambda: cl.parse_size("8Gb"), "write 8GB (powers of 10) or 8GiB"),
    "400Gb/s": (lambda: cl.parse_topology("ring:4", cl.topology.parse_rate("400Gb/s")), "400Gb/s is 50 GB/s"),
    "oversubscription on a ring": (lambda: cl.parse_topology("ring:4", 1e9, oversubscription=2),
                                   "ring has none"),
    "oversubscription on one node": (lambda: cl.parse_topology("dgx-h100:1", oversubscription=2),
                                     "dgx-h100:1 is one node"),
}


@pytest.mark.parametrize("call, words", CASES.values(), ids=CASES.keys())
def test_a_wrong_input_gets_the_librarys_error_naming_it(call, words):
    with pytest.raises(cl.CollectivesError) as caught:
        call()
    assert words in str(caught.value)
    assert "\n" not in str(caught.value)


def test_right_inputs_still_work_in_every_form_the_checks_accept():
    assert cl.Torus(np.array([4, 4]), bandwidth=np.float64(1e9)).dims == (4, 4)
    assert cl.Torus(4, bandwidth=1e9).dims == (4,)
    assert cl.Torus((4, 4), [True, np.bool_(False)], bandwidth=1e9).wraparound == (True, False)
    assert cl.build("all_reduce", TORUS, "ring", axes="x").group_size == 4
    assert cl.build("all_reduce", TORUS, "multi_axis", axes=("x", 1)).group_size == 16
    assert cl.build("broadcast", RING, "binomial_tree", root=np.int64(3)).root == 3
    assert cl.simulate(AR, RING, 1024, placement=np.arange(8)[::-1]).time > 0
    assert cl.lower_bound("all_reduce", RING, 0).time == 0
    assert cl.parse_size("1kB") == 1000 and cl.parse_size("1k") == 1024 and cl.parse_size("1KiB") == 1024
    assert AR.format(max_steps=0).count("\n") == 1
    assert cl.parse_size("1e36") == 10**36


def test_the_extremes_allowed_still_give_finite_times():
    """The slowest link and largest size allowed: every time finite, in both models."""
    slow = cl.Ring(4, bandwidth=checks.BANDWIDTH_RANGE[0], latency=checks.MAX_LATENCY)
    e = cl.estimate("all_reduce", slow, checks.MAX_BYTES)
    assert math.isfinite(e.time) and math.isfinite(e.bound.time) and e.time >= e.bound.time
    big = cl.GpuCluster("dgx-h100", 2, nvlink_bandwidth=1e-3, nic_bandwidth=1e-3, nic_latency=1e6)
    assert math.isfinite(cl.estimate("all_reduce", big, checks.MAX_BYTES).time)


def test_one_rank_moves_nothing_and_says_so():
    e = cl.estimate("all_reduce", cl.Ring(1, bandwidth=1e9), 1 << 20)
    assert e.moves_nothing and e.time == 0
    d = e.as_dict()
    assert d["algbw"] is None and d["busbw"] is None and d["time_s"] == 0
    assert "nothing moves" in str(e) and "nan" not in str(e) and "inf" not in str(e)
    assert "one rank on the axis: nothing moves" in e.reason
    assert not cl.estimate("all_reduce", cl.Ring(2, bandwidth=1e9), 1 << 20).moves_nothing


def test_the_checks_live_in_one_module():
    """The topologies use the checks module's functions, and plan the builders' option check, not copies of their own."""
    from collectives_lib.topology import core
    assert core.positive is checks.positive and core.nonnegative is checks.nonnegative
    from collectives_lib import builders
    assert cl.plan.check_options is builders.check_options


# -- property: any values, in any position, to the public entry points -----------------------

VALUES = [-1, 0, 1, 2, 3, 4, 8, 2**70, math.nan, math.inf, -math.inf, 2.5, -0.0, 1e-300, 1e300, True, False,
          None, "", "x", "y", "ring", "ring:8", "4x4", "auto", "all_reduce", "broadcast", "v5e", "dgx-h100",
          "1MiB", "nan", [], [1, 2], ["x"], ("x", "y"), (4, 4), (2.5, 2), np.arange(8), np.array([np.nan]),
          np.int64(3), np.float64(2.0), RING, TORUS, NODE, AR, {}, {"a": 1}, object()]
ENTRY_POINTS = [cl.Ring, cl.Chain, cl.Torus, cl.mesh, cl.FullMesh, cl.Switch, cl.nvswitch_node, cl.GpuCluster,
                cl.tpu_slice, cl.tpu_pod, cl.tpu_system, cl.superpod, cl.parse_topology, cl.build, cl.algorithms,
                cl.choose, cl.estimate, cl.simulate, cl.simulate_sizes, cl.step_link_loads, cl.lower_bound,
                cl.check, cl.replay, cl.replay_inputs, cl.arrival_steps, cl.dual, cl.reduce_scatter_from,
                cl.all_reduce_from, cl.parse_size, cl.collective.collective]
KEYWORDS = ["bandwidth", "latency", "axes", "root", "nbytes", "overhead", "placement", "element_size", "model",
            "protocol", "dtype", "nvls", "chunks", "matrix", "src", "dst", "paths", "intra", "elements", "seed",
            "wraparound", "bidirectional", "in_network", "sharp", "oversubscription", "gpus", "overlap", "reasons"]
#: Python's own complaint about a call's shape (too many arguments, an unknown keyword) is allowed.
SIGNATURE = re.compile(r"positional argument|keyword argument|required|takes|got multiple values")


@pytest.mark.filterwarnings("error")
@settings(max_examples=800, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(ENTRY_POINTS), st.lists(st.sampled_from(VALUES), max_size=4),
       st.dictionaries(st.sampled_from(KEYWORDS), st.sampled_from(VALUES), max_size=3))
def test_any_values_to_an_entry_point_answer_finitely_or_get_the_librarys_error(function, args, kwargs):
    try:
        answer = function(*args, **kwargs)
    except cl.CollectivesError as exc:
        assert "\n" not in str(exc)
        return
    except TypeError as exc:
        assert SIGNATURE.search(str(exc)), exc
        return
    time = getattr(answer, "time", None)
    assert time is None or not isinstance(time, float) or math.isfinite(time)
    if isinstance(answer, np.ndarray) and answer.dtype.kind == "f":
        assert np.all(np.isfinite(answer))
