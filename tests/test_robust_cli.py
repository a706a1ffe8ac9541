"""The command line at every input: random and hostile arguments (issue 15).

Hypothesis builds command lines from valid and hostile values (negative, NaN,
infinite, huge, empty, wrong units, unknown names, unicode) and drives
``collectives_lib.cli.main`` in the process, then a few through a real
``python -m collectives_lib``. Whatever the input, the answer is exit status 0
or 2; an error is one line on stderr and nothing on stdout; no traceback ever;
``--json`` prints strict JSON (no NaN or Infinity); and every call answers
within hypothesis' per-call deadline. Topologies stay small: the time large
specs take is benchmarked, not tested.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from collectives_lib.cli import main

TOPOLOGIES = ["ring:1", "ring:2", "ring:5", "ring:8", "chain:1", "chain:6", "switch:1", "switch:4",
              "switch:4:sharp", "torus:1x4", "torus:2x4", "torus:3x3x2", "mesh:2x3", "tpu-v5e:2x2",
              "tpu-v5e:4x4", "tpu-v4:2x2x2", "tpu-v5p:2x2x4", "dgx-h100:1", "dgx-h100:2", "dgx-a100:2",
              "gb200-nvl72:1"]
BAD_TOPOLOGIES = ["ring:", "ring:-3", "ring:0", "ring:2.5", "ring:1e2", "torus:4x", "torus:0x4", "torus:x",
                  "chain:abc", "foo:4", "ring:8:8", "ring:4:sharp", "dgx-h100:0", "dgx-h100:-1",
                  "tpu-v5e:3x3", "tpu-v5e:4x4x4", "tpu-v4:2x2", "gb200-nvl72:0"]
COLLECTIVES = ["all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce",
               "send", "gather", "ALL_REDUCE", "all-gather"]
BAD_COLLECTIVES = ["allreduce", "foo", "", "all reduce"]
ALGORITHMS = ["auto", "AUTO", "ring", "chain", "bidirectional_ring", "direct", "rabenseifner",
              "recursive_doubling", "binomial_tree", "tree", "nvls", "sharp", "multi_axis",
              "hierarchical", "multipath"]
BAD_ALGORITHMS = ["ring,chain", "foo", "", "Auto "]
SIZES = ["1", "8", "1000", "1K", "1MiB", "64M", "1GiB", "4GB", "1kB", "3", "12345", "1e36"]
RATES = ["1e9", "45e9", "45GB/s", "1", "100", "1e-3", "1e18"]       # the extremes allowed too
LATENCIES = ["0", "1e-6", "1us", "0.5ms", "3ns", "1e6"]
FACTORS = ["2", "4", "10", "1.5", "1e300"]
OVERSUBSCRIPTION = ["1", "2", "4", "1.5"]
RANKS = ["0", "1", "3", "7"]
AXES = ["x", "y", "z", "x,y", "node", "gpu", "node,gpu"]
BAD_AXES = ["x,x", "q", ",", "0", "5"]
#: Option values that are wrong wherever they appear (a hostile value replaces a good one
#: about one time in eight, so that most command lines reach the engine).
HOSTILE = ["", " ", "-1", "0", "nan", "inf", "-inf", "1e30", "1e309", "2.5", "abc", "☃", "1Kb",
           "400Gb/s", "-x", "0x10", "1,2", "None", "True", "1e-300", "1e300", "100", "2**64", "1e37"]


def _value(good, bad=()) -> st.SearchStrategy:
    hostile = list(bad) + HOSTILE
    return st.integers(0, 7).flatmap(lambda k: st.sampled_from(hostile if k == 7 else good))


def _option(flag: str, good, bad=(), *, often: int = 3) -> st.SearchStrategy:
    """``[]`` or ``[flag, value]``, the flag present about one time in ``often``."""
    return st.integers(0, often - 1).flatmap(
        lambda k: _value(good, bad).map(lambda v: [flag, v]) if k == 0 else st.just([]))


@st.composite
def command_lines(draw):
    verb = draw(st.sampled_from(["estimate", "sweep", "algorithms", "show"]))
    argv = [verb]
    topology = draw(_value(TOPOLOGIES, BAD_TOPOLOGIES))
    if draw(st.integers(0, 19)):          # now and then leave the required topology out
        argv += ["-t", topology]
    if draw(st.integers(0, 19)):
        argv += ["-c", draw(_value(COLLECTIVES, BAD_COLLECTIVES))]
    if topology.split(":")[0] in ("ring", "chain", "torus", "mesh", "switch"):
        argv += draw(_option("--bandwidth", RATES, often=1 if draw(st.integers(0, 9)) else 2))
    else:
        argv += draw(_option("--bandwidth", RATES, often=6))
    argv += draw(_option("-a", ALGORITHMS, BAD_ALGORITHMS, often=2))
    argv += draw(_option("--latency", LATENCIES, often=4))
    argv += draw(_option("--axes", AXES, BAD_AXES, often=4))
    argv += draw(_option("--root", RANKS, often=5)) + draw(_option("--dst", RANKS, often=8))
    argv += draw(_option("--oversubscription", OVERSUBSCRIPTION, often=6))
    if verb != "show":
        argv += draw(_option("--model", ["nccl", "ideal", "NCCL"], ["foo"], often=4))
        argv += draw(_option("--protocol", ["LL", "LL128", "simple"], ["foo"], often=6))
        argv += draw(_option("--nvls", ["on", "off"], ["maybe"], often=6))
        argv += draw(_option("--dtype", ["float32", "bfloat16", "float64", "int8"], ["foo"], often=5))
    if verb == "estimate":
        argv += ["-s", draw(_value(SIZES))] if draw(st.integers(0, 19)) else []
        argv += draw(st.sampled_from([[], [], ["--json"]]))
    elif verb == "sweep":
        argv += draw(_option("-b", SIZES, often=2)) + draw(_option("-e", SIZES, often=2))
        argv += draw(_option("-f", FACTORS, ["1", "0.5"], often=2))
        argv += draw(st.sampled_from([[], [], ["--json"]]))
    elif verb == "algorithms":
        argv += draw(_option("-s", SIZES, often=2))
    else:
        argv += draw(_option("--max-steps", ["0", "1", "8", "64"], ["-1", "2.5", "abc"], often=2))
    if draw(st.integers(0, 29)) == 0:     # an option no verb has
        argv += [draw(st.sampled_from(["--frobnicate", "-z", "--json=1", "extra"]))]
    return argv


SPECIAL = re.compile(r"(?<![\w.])(nan|inf|infinity)(?!\w)", re.IGNORECASE)


def _no_special_floats(token: str):
    raise AssertionError(f"not strict JSON: {token}")


def assert_answer(argv, code: int, out: str, err: str) -> None:
    """What every command line must do, whatever it was given."""
    assert code in (0, 2), (argv, code, err)
    assert "Traceback" not in out + err, (argv, err)
    if code == 2:
        assert err.count("\n") == 1 and err.endswith("\n"), (argv, err)
        assert err.startswith("collectives: error: "), (argv, err)
        assert out == "", (argv, out)
    else:
        assert out.strip(), argv
        assert err == "", (argv, err)
        if "--json" in argv:
            json.loads(out, parse_constant=_no_special_floats)
        assert not SPECIAL.search(out), (argv, out)


def _run(argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, out, err)
    return code, out.getvalue(), err.getvalue()


@settings(max_examples=800, deadline=timedelta(seconds=20), database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(command_lines())
def test_any_command_line_answers_with_0_or_one_line_and_2(argv):
    assert_answer(argv, *_run(argv))


@settings(max_examples=60, deadline=timedelta(seconds=20), database=None)
@given(st.lists(st.text(max_size=12), max_size=6))
def test_arbitrary_text_after_a_verb_never_raises(words):
    for verb in ("estimate", "sweep", "algorithms", "show"):
        argv = [verb, *words]
        assert_answer(argv, *_run(argv))


@pytest.mark.parametrize("argv", [
    ["estimate", "-t", "ring:1", "--bandwidth", "1e9", "-c", "all_reduce", "-s", "1MiB", "--json"],
    ["estimate", "-t", "ring:4", "--bandwidth", "1e9", "-c", "all_reduce", "-s", "1Kb"],
    ["sweep", "-t", "ring:1", "--bandwidth", "1e9", "-c", "all_gather", "-b", "8", "-e", "64", "--json"],
    ["show", "-t", "ring:4", "--bandwidth", "1e9", "-c", "all_reduce", "--max-steps", "-1"],
    ["estimate", "-t", "ring:4", "--bandwidth", "1e9", "-c", "send", "-a", "foo", "-s", "1K"],
    ["estimate", "-t", "dgx-h100:1", "-c", "all_reduce", "-s", "1e30"],
])
def test_the_installed_command_answers_the_same_in_a_process_of_its_own(argv):
    """A few through a real interpreter: the exit status and streams as a shell sees them."""
    proc = subprocess.run([sys.executable, "-m", "collectives_lib", *argv], capture_output=True,
                          text=True, timeout=120)
    code, out, err = _run(argv)
    assert (proc.returncode, proc.stdout, proc.stderr.replace("python -m collectives_lib", "collectives")) \
        == (code, out, err)
    assert_answer(argv, proc.returncode, proc.stdout, proc.stderr)


def test_one_rank_reports_no_bandwidth_in_text_and_null_in_json():
    base = ["estimate", "-t", "ring:1", "--bandwidth", "1e9", "-c", "all_reduce", "-s", "1MiB"]
    code, out, _ = _run(base)
    assert code == 0 and "algbw         n/a" in out and "inf" not in out and "nan" not in out
    assert "one rank on the axis: nothing moves" in out
    code, out, _ = _run(base + ["--json"])
    obj = json.loads(out, parse_constant=_no_special_floats)
    assert (obj["time_s"], obj["algbw"], obj["busbw"]) == (0.0, None, None)
    code, out, _ = _run(["estimate", "-t", "tpu-v5e:2x4", "--axes", "x", "-c", "all_reduce", "-s", "1MiB"])
    assert "an axis of 2 ranks is a chain" in out and "no wraparound link" not in out


@pytest.mark.parametrize("argv, words", [
    (["show", "-t", "ring:4", "--bandwidth", "1e9", "-c", "all_reduce", "--max-steps", "-1"],
     "max_steps (steps to print) must be >= 0, got -1"),
    (["estimate", "-t", "ring:4", "--bandwidth", "1e9", "-c", "all_reduce", "-s", "1Kb"],
     "lowercase b is bits"),
    (["estimate", "-t", "ring:4", "--bandwidth", "400Gb/s", "-c", "all_reduce", "-s", "1K"],
     "400Gb/s is 50 GB/s"),
    (["estimate", "-t", "ring:4", "--bandwidth", "1e9", "-c", "send", "-a", "foo", "-s", "1K"],
     "unknown algorithm 'foo' for send; known: direct"),
    (["estimate", "-t", "dgx-h100:1", "--oversubscription", "2", "-c", "all_reduce", "-s", "1G"],
     "--oversubscription sets the fabric between nodes"),
])
def test_the_refusals_issue_15_asked_for(argv, words):
    code, out, err = _run(argv)
    assert code == 2 and words in err, err
    assert_answer(argv, code, out, err)


def test_auto_in_capitals_is_auto():
    code, out, _ = _run(["estimate", "-t", "ring:4", "--bandwidth", "1e9", "-c", "all_reduce",
                         "-a", "AUTO", "-s", "1M"])
    assert code == 0 and "(auto: " in out and "as requested" not in out


@pytest.mark.parametrize("argv, words", [
    (["run", "--np", "2", "-b", "1K", "-e", "1M", "-f", "1.00001"], "makes 693,151 sizes; a run times at most 200"),
    (["run", "--np", "100000", "--timeout", "60", "--size", "1K"], "at most 64 processes start without --oversubscribe"),
    (["run", "--np", "2", "--timeout", "inf", "--size", "1K"], "--timeout must be a number of seconds > 0"),
    (["run", "--np", "2", "--size", "1e30"], "would need about"),
    (["run", "--np", "2", "--size", "1Kb"], "lowercase b is bits"),
    (["run", "--np", "2", "-f", "nan"], "-f must be > 1, got nan"),
])
def test_run_refuses_before_starting_any_process(argv, words):
    """Refused in the launcher, before mpiexec starts: one line, status 2."""
    from collectives_lib import mpi
    if mpi.available() is not None:
        pytest.skip("needs MPI")
    code, out, err = _run(argv)
    assert code == 2 and words in err and err.count("\n") == 1 and out == "", err
    assert err.startswith("collectives run: error: ")


def test_one_rank_sweep_prints_no_bandwidth():
    code, out, _ = _run(["sweep", "-t", "ring:1", "--bandwidth", "1e9", "-c", "all_reduce", "-b", "8", "-e", "16"])
    rows = [line.split() for line in out.splitlines() if not line.startswith("#")]
    assert code == 0 and len(rows) == 2
    assert all(row[5:7] == ["n/a", "n/a"] for row in rows), rows
