"""Schedules over real MPI ranks (collectives_lib.mpi).

Every schedule family the library builds runs as MPI messages between
processes and ends with what the collective's definition and MPI's own
collective say; the calibration fits a positive alpha and beta; the command's
table parses; and the failure paths (a wrong schedule, a failing rank, no
mpiexec, no mpi4py, a hang) say what happened and leave no process behind.

Launching mpiexec is the slow part, so the families all run in one launch
(the ``batch`` fixture: about 400 schedules on up to 9 processes, a few
seconds on 2 cores).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
import time
import uuid

import numpy as np
import pytest

import collectives_lib as cl
from collectives_lib import cli, mpi
from collectives_lib.mpi.processes import process_table, read_proc
from collectives_lib.replay import expected_output, initial_state
from collectives_lib.schedule import Step, Traffic

COLLECTIVES = ("all_gather", "reduce_scatter", "all_reduce", "all_to_all", "broadcast", "reduce",
               "gather", "send")
MATRIX = np.array([[0, 5, 1, 0], [2, 0, 3, 7], [1, 1, 0, 1], [9, 0, 2, 0]])


def switch_schedules() -> dict[str, cl.Schedule]:
    """Every algorithm of every collective on Switch(N), N = 1..8 (SHARP and multicast
    run with the switch emulated on an extra process)."""
    out = {}
    for n in range(1, 9):
        topo = cl.Switch(n, bandwidth=1e9, in_network=True)
        for c in COLLECTIVES:
            if c == "send" and n == 1:
                continue
            opts = {"root": n - 1} if c in ("broadcast", "reduce", "gather") else {}
            if c == "send":
                opts = {"src": n - 1, "dst": 0}
            for a in cl.algorithms(c, topo):
                out[f"{a}_{c}_switch{n}"] = cl.build(c, topo, a, **opts)
    return out


def other_schedules() -> dict[str, cl.Schedule]:
    """Families that need other shapes: meshes (several axes at once, and one axis
    at a time: several groups), hierarchical GPU schedules, imbalanced all-to-all."""
    out = {}
    for dims in [(2, 2), (2, 3), (2, 4)]:
        topo = cl.Torus(dims=dims, bandwidth=1e9)
        shape = "x".join(map(str, dims))
        for c in ("all_gather", "reduce_scatter", "all_reduce", "all_to_all"):
            for axes in (None, "x", "y"):
                for a in cl.algorithms(c, topo, axes=axes):
                    out[f"{a}_{c}_torus{shape}_{axes or 'all'}"] = cl.build(c, topo, a, axes=axes)
    for nodes, gpus in [(2, 2), (2, 3), (3, 2), (2, 4)]:
        out[f"hierarchical_all_gather_{nodes}x{gpus}"] = cl.builders.hierarchical.hierarchical_all_gather(nodes, gpus)
        out[f"hierarchical_all_to_all_{nodes}x{gpus}"] = cl.builders.hierarchical.hierarchical_all_to_all(nodes, gpus)
    for a in ("ring", "bidirectional_ring", "chain", "direct"):
        out[f"{a}_all_to_all_weighted4"] = cl.build("all_to_all", cl.Switch(4, bandwidth=1e9), a,
                                                    matrix=MATRIX)
    return out


SCHEDULES = {**switch_schedules(), **other_schedules()}
NAMES = list(SCHEDULES)


def flip_op(schedule: cl.Schedule, step: int, transfer: int = 0) -> cl.Schedule:
    """The same schedule with one transfer's operation flipped (copy <-> reduce)."""
    st = schedule.steps[step]
    t = st.traffic
    op = t.op.copy()
    op[transfer] ^= 1
    steps = list(schedule.steps)
    steps[step] = Step(Traffic(t.src, t.dst, op, t.fraction, t.path, t.lane), st.boxes, st.stage)
    return dataclasses.replace(schedule, steps=tuple(steps))


# ---------------------------------------------------------------------------
# Without MPI: the pieces the ranks use
# ---------------------------------------------------------------------------

SMALL = [n for n in NAMES if SCHEDULES[n].num_ranks <= 6]


@pytest.mark.parametrize("name", SMALL)
def test_inputs_and_expectations_follow_replay(name):
    """held_slots/expected_buffer say what replay.initial_state/expected_output say."""
    s = SCHEDULES[name]
    E = 2
    layout = mpi.Layout(s, s.num_slots * E * 8) if s.weights is None else None
    state, _ = initial_state(s, elements=E)
    for p in range(s.num_participants):
        assert (mpi.held_slots(s, p) == (state.contrib[p] != 0)).all(), f"participant {p}"
    if layout is None:
        return
    x = np.stack([mpi.input_values(r, layout.count).reshape(s.num_slots, E)
                  for r in range(s.num_ranks)])
    want, required = expected_output(s, x)
    for r in range(s.num_ranks):
        values, need = mpi.expected_buffer(s, layout, r)
        assert (need == required[r]).all(), f"rank {r}"
        got = values.reshape(s.num_slots, E)
        assert np.array_equal(got[need], want[r][need]), f"rank {r}"


def test_inputs_are_nonzero_integers_that_differ_by_rank():
    a, b = mpi.input_values(0, 10000), mpi.input_values(1, 10000)
    for v in (a, b):
        assert (v != 0).all() and (np.abs(v) <= 1000).all() and (v == np.round(v)).all()
    assert (a != b).mean() > 0.99
    assert np.array_equal(mpi.input_values(3, 50, dtype="float32"), mpi.input_values(3, 50).astype("float32"))


def test_layout_rounds_like_nccl_tests_and_apportions_weights():
    ring = cl.build("all_reduce", 4, "ring")
    assert mpi.Layout(ring, 1000).nbytes == 992          # 4 slots x 31 doubles
    assert mpi.Layout(ring, 8).nbytes == 32              # at least one element per slot
    assert mpi.Layout(ring, 1000, "float32").count == 248
    weighted = SCHEDULES["ring_all_to_all_weighted4"]
    lay = mpi.Layout(weighted, 8000)
    assert lay.count == 1000 and lay.counts.sum() == 1000
    assert lay.counts.reshape(4, 4)[0, 1] == round(5 / MATRIX.sum() * 1000)
    assert (lay.counts.reshape(4, 4).diagonal() == 0).all()


def test_ranges_merge_adjacent_slots_in_box_order():
    lay = mpi.Layout(cl.build("all_gather", 4, "ring"), 4 * 3 * 8)   # 3 elements per slot
    assert lay.ranges([2, 3, 0]) == ([(6, 12), (0, 3)], 9)


def test_tags_count_transfers_between_the_same_pair():
    src, dst = np.array([0, 1, 0, 0, 1]), np.array([1, 0, 1, 2, 0])
    assert mpi.executor.message_tags(src, dst, 3).tolist() == [0, 0, 1, 0, 1]


@pytest.mark.parametrize("name", ["ring_all_reduce_switch5", "direct_all_to_all_torus2x3_x",
                                  "hierarchical_all_gather_2x3", "ring_all_to_all_weighted4",
                                  "sharp_all_reduce_switch4", "chain_broadcast_switch3"])
def test_schedule_round_trips_through_a_file(name, tmp_path):
    s = SCHEDULES[name]
    back = mpi.load_schedule(mpi.save_schedule(s, tmp_path / "s.npz"))
    assert str(back) == str(s)
    assert back.agents == s.agents and back.root == s.root
    cl.check(back)


def test_load_schedule_errors(tmp_path):
    with pytest.raises(cl.CollectivesError, match="does not exist"):
        mpi.load_schedule(tmp_path / "missing.npz")
    (tmp_path / "junk.npz").write_text("junk")
    with pytest.raises(cl.CollectivesError, match="is not a schedule written by"):
        mpi.load_schedule(tmp_path / "junk.npz")


def test_validate_names_what_cannot_run():
    s = cl.build("all_gather", 3, "ring")
    t = s.steps[0].traffic
    bad = dataclasses.replace(s, steps=(Step(Traffic(t.src, t.src, t.op, t.fraction), s.steps[0].boxes),))
    with pytest.raises(cl.CollectivesError, match="^step 1: participant 0 sends to itself$"):
        mpi.validate(bad)
    far = dataclasses.replace(s, steps=(Step(Traffic(t.src, t.dst + 5, t.op, t.fraction), s.steps[0].boxes),))
    with pytest.raises(cl.CollectivesError, match=r"names a participant outside 0\.\.2"):
        mpi.validate(far)


def test_calibration_sizes_cover_the_run_and_both_protocols():
    assert mpi.calibration_sizes(1000) == (8, 32, 128, 512, 2048, 8192, 32768)
    assert mpi.calibration_sizes(2**21)[-1] == 2**21
    assert mpi.CALIBRATION_SIZES == mpi.calibration_sizes(2**21)


def fake_row(**kw):
    row = {"collective": "all_reduce", "algorithm": "ring", "num_ranks": 4, "steps": 6,
           "size_bytes": 4096, "count": 512, "dtype": "float64", "time_s": 50e-6, "mpi_time_s": 40e-6,
           "algbw": 4096 / 50e-6, "busbw": 4096 / 50e-6 * 1.5, "mpi_busbw": 4096 / 40e-6 * 1.5,
           "correct": True, "emulated_agents": [], "mpi": "MPI_Allreduce", "error": ""}
    return {**row, **kw}


def test_table_full_and_compact():
    result = mpi.RunResult([fake_row(), fake_row(correct=False, error="rank 2 ends with the wrong values in block 1")],
                           library="MPICH Version:      5.0.2", world_size=4, hosts=["vm"], iters=20, warmup=5)
    full = result.table()
    assert mpi.parse_table(full)[0] == {
        "size": 4096, "count": 512, "algorithm": "ring", "N": 4, "steps": 6, "time": 50.0, "mpi": 40.0,
        "algbw": 0.082, "busbw": 0.123, "mpi_busbw": 0.154, "predicted": None, "meas/pred": None,
        "correct": True}
    assert "# WRONG: ring N=4 4096 B: rank 2 ends with the wrong values in block 1" in full
    assert "# 1 of 2 rows are wrong" in full
    compact = result.table(compact=True).splitlines()
    assert compact[:3] == ["# all_reduce, N = 4: 4 processes on 1 host, float64",
                           "# median of 20 timed runs after 5 warm-up runs", "# MPICH Version: 5.0.2"]
    head = next(line for line in compact if line.split()[:2] == ["#", "size"])
    assert head.split() == ["#", "size", "algorithm", "N", "steps", "time", "mpi", "busbw", "correct"]
    assert max(map(len, compact[:-2])) <= 80


def test_fit_recovers_a_line_and_stays_positive_in_noise():
    sizes = np.array(mpi.CALIBRATION_SIZES, dtype=float)
    alpha, beta, method = cl.analysis.fit_alpha_beta(sizes, 2e-6 + sizes / 5e9)
    assert alpha == pytest.approx(2e-6, rel=1e-6) and beta == pytest.approx(2e-10, rel=1e-6)
    assert method.startswith("least squares")
    # a machine whose small messages are slower than its large ones predict:
    # the unconstrained fit has a negative slope; the fallback stays positive
    times = np.array([50e-6, 40e-6, 30e-6])
    alpha, beta, method = cl.analysis.fit_alpha_beta([8, 64, 512], times)
    assert alpha > 0 and beta > 0 and method.startswith("fallback")
    with pytest.raises(cl.CollectivesError, match="at least two different sizes"):
        cl.analysis.fit_alpha_beta([8, 8], [1e-6, 1e-6])


def test_calibration_topology_predicts_the_fitted_line_for_one_message():
    cal = mpi.Calibration(2e-6, 1e-10, (8, 1024), (2e-6, 2.1e-6), "test")
    send = cl.build("send", cl.Switch(2, bandwidth=1e9), "direct", src=0, dst=1)
    assert cal.predict(send, [1e6])[0] == pytest.approx(2e-6 + 1e6 * 1e-10)
    assert repr(cal.topology(4)) == "Switch(4, bandwidth=1e+10, latency=1e-06, in_network=True)"


# ---------------------------------------------------------------------------
# Over MPI
# ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def batch() -> mpi.RunResult:
    """Every schedule in SCHEDULES, one launch, one iteration each."""
    result = mpi.run(list(SCHEDULES.values()), [1000], iters=1, warmup=0, timeout=240)
    assert len(result.rows) == len(SCHEDULES)
    return result


@pytest.mark.parametrize("index,name", list(enumerate(NAMES)), ids=NAMES)
def test_every_family_computes_its_collective_over_mpi(batch, index, name):
    row = batch.rows[index]
    s = SCHEDULES[name]
    assert (row["algorithm"], row["collective"], row["num_ranks"]) == (s.algorithm, s.collective, s.num_ranks)
    assert row["correct"], row["error"]
    assert row["participants"] == s.num_participants
    assert len(row["step_times_s"]) == s.num_steps


def test_the_batch_covers_n_1_to_8_and_non_powers_of_two(batch):
    def sizes(algorithm):
        return {r["group_size"] for r in batch.rows if r["algorithm"] == algorithm
                and r["collective"] == "all_reduce" and r["num_groups"] == 1}
    ring, rd = sizes("ring"), sizes("recursive_doubling")
    assert ring >= set(range(1, 9)) and rd == {1, 2, 4, 8}
    assert any(r["emulated_agents"] for r in batch.rows)


def test_float32_and_several_sizes():
    names = ["ring_all_reduce_switch3", "direct_all_to_all_switch5", "rabenseifner_all_reduce_switch4",
             "chain_broadcast_switch4"]
    res = mpi.run([SCHEDULES[n] for n in names], [64, "4KiB", 100_000], iters=2, warmup=1, dtype="float32")
    assert res.ok, [r["error"] for r in res.rows if not r["correct"]]
    assert {r["dtype"] for r in res.rows} == {"float32"}
    assert len(res.rows) == 12


def test_a_flipped_operation_is_reported_wrong(tmp_path, capsys):
    ring = cl.build("all_reduce", 4, "ring")
    broken = flip_op(ring, step=ring.num_steps - 1)       # an all-gather copy becomes a reduce
    with pytest.raises(cl.ScheduleError):
        cl.check(broken)
    code = cli.main(["run", "--schedule", str(mpi.save_schedule(broken, tmp_path / "broken.npz")),
                         "--size", "4K", "--iters", "2", "--warmup", "0"])
    out = capsys.readouterr().out
    assert code == 1
    rows = mpi.parse_table(out)
    assert len(rows) == 1 and rows[0]["correct"] is False and rows[0]["predicted"] is None
    assert "# WRONG: ring N=4 4096 B: rank " in out and "ends with the wrong values in block" in out
    assert "1 of 1 rows are wrong" in out


def test_calibration_gives_positive_alpha_and_beta():
    cal = mpi.calibrate(sizes=[8, 1024, 65536, 1 << 20])
    assert cal.alpha > 0 and cal.beta > 0
    assert len(cal.times) == 4 and all(t > 0 for t in cal.times)
    assert "MPICH" in cal.library or cal.library


def test_run_table_parses_with_predictions(capsys):
    code = cli.main(["run", "--np", "4", "-c", "all_reduce", "-a", "ring,recursive_doubling",
                         "-b", "1K", "-e", "16K", "-f", "4", "--iters", "3", "--warmup", "1",
                         "--calibrate"])
    out = capsys.readouterr().out
    assert code == 0, out
    rows = mpi.parse_table(out)
    assert [(r["algorithm"], r["size"]) for r in rows] == [
        (a, s) for a in ("ring", "recursive_doubling") for s in (1024, 4096, 16384)]
    for r in rows:
        assert r["correct"] and r["N"] == 4
        assert r["time"] > 0 and r["mpi"] > 0 and r["predicted"] > 0 and r["meas/pred"] > 0
        assert r["count"] * 8 == r["size"]
        assert r["busbw"] == pytest.approx(r["algbw"] * 2 * 3 / 4, abs=2e-3)
    assert "# ping-pong: alpha = " in out and "every row correct" in out


def test_the_package_command_runs_and_prints_json():
    proc = subprocess.run([sys.executable, "-m", "collectives_lib", "run", "--np", "3", "-c", "all_gather",
                           "-a", "all", "--size", "3K", "--iters", "2", "--warmup", "0", "--json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    import json
    data = json.loads(proc.stdout)
    assert data["ok"] and data["world_size"] == 4       # multicast emulates the switch
    assert {r["algorithm"] for r in data["rows"]} == set(cl.algorithms("all_gather", cl.Switch(3, bandwidth=1, in_network=True)))


def test_runs_in_place_under_mpiexec():
    proc = subprocess.run([mpi.find_mpiexec(), "-n", "3", sys.executable, "-m", "collectives_lib.mpi",
                           "-c", "reduce_scatter", "-a", "ring,direct", "--size", "3K", "--iters", "2"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    rows = mpi.parse_table(proc.stdout)
    assert [(r["algorithm"], r["N"], r["correct"]) for r in rows] == [("ring", 3, True), ("direct", 3, True)]


def without_core_warning(err: str, processes: int) -> str:
    """``err`` without the warning the command gives when processes outnumber cores,
    which must be there exactly then."""
    warning = (f"collectives run: warning: {processes} processes on {mpi.cores()} cores: the times "
               f"include waiting for the scheduler, not only for messages\n")
    if processes > mpi.cores():
        assert err.startswith(warning), err
        return err[len(warning):]
    assert "warning" not in err, err
    return err


def test_a_failing_rank_fails_the_run_with_its_error(capsys):
    code = cli.main(["run", "--np", "3", "-c", "all_reduce", "--size", "1K", "--fail-rank", "2"])
    err = without_core_warning(capsys.readouterr().err, 3)
    assert code == 1
    assert err.startswith("collectives run: error: the MPI run failed: rank 2: RuntimeError: "
                          "deliberate failure injected at rank 2 (testing)")


def test_missing_mpiexec_says_what_to_install(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("MPIEXEC", raising=False)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    assert cli.main(["run", "--np", "2", "--size", "1K"]) == 2
    assert capsys.readouterr().err == (
        f"collectives run: error: mpiexec not found (not on PATH, not next to {tmp_path / 'python'}); "
        f"install MPI with `pip install mpi4py mpich`\n")
    assert "pip install mpi4py mpich" in mpi.available()


def test_missing_mpi4py_says_what_to_install(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "mpi4py", None)
    assert cli.main(["run", "--np", "2", "--size", "1K"]) == 2
    assert capsys.readouterr().err == (
        f"collectives run: error: mpi4py is not installed for {sys.executable}; install it with "
        f"`pip install mpi4py mpich`\n")


def _processes_with(marker: str) -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if marker.encode() in f.read():
                    found.append(int(pid))
        except OSError:
            continue
    return found


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="finds orphans through /proc")
def test_timeout_kills_a_hanging_run_without_orphans(monkeypatch, capsys):
    marker = f"collectives-test-{uuid.uuid4().hex}"
    monkeypatch.setenv("COLLECTIVES_TEST_MARK", marker)
    start = time.monotonic()
    code = cli.main(["run", "--np", "3", "-c", "all_reduce", "--size", "1K", "--stall-rank", "1",
                         "--timeout", "2"])
    elapsed = time.monotonic() - start
    err = without_core_warning(capsys.readouterr().err, 3)
    assert code == 1
    assert err.startswith("collectives run: error: the MPI run (3 processes) did not finish "
                          "within 2 s and was stopped, every process killed")
    assert elapsed < 15
    deadline = time.monotonic() + 5
    while _processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _processes_with(marker) == []


@pytest.fixture
def escaped_tree():
    """Like Hydra's ranks: a parent that ignores SIGTERM, and two children that moved
    into sessions of their own. Yields (parent, {pid: start time} of all three) once the
    tree has its final shape; kills what is left of it afterwards, by pid."""
    marker = f"collectives-test-{uuid.uuid4().hex}"
    proc = subprocess.Popen(["bash", "-c", "trap '' TERM; setsid sleep 300 & setsid sleep 300 & wait"],
                            env={**os.environ, "COLLECTIVES_TEST_MARK": marker}, start_new_session=True)
    members: dict[int, str] = {}
    seen: dict[int, str] = {}      # every child ever seen, for the cleanup if this fails
    try:
        # Read the process table, not the environment: /proc/PID/environ is briefly empty
        # while a process execs (bash -> setsid -> sleep), which made counting marked
        # processes flaky under load. Wait until both children are `sleep` in a session
        # of their own, however long a loaded machine takes.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            table = process_table()
            children = {pid: entry.start for pid, entry in table.items() if entry.ppid == proc.pid}
            seen.update(children)
            settled = [pid for pid in children if _comm(pid) == "sleep" and _session(pid) == pid]
            if len(settled) == 2 and proc.pid in table:
                members = {proc.pid: table[proc.pid].start, **{pid: children[pid] for pid in settled}}
                break
            time.sleep(0.02)
        assert members, "the tree did not reach its final shape"
        yield proc, members, marker
    finally:
        for pid, start in {**seen, **members}.items():
            if _alive(pid, start):
                os.kill(pid, 9)
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)


def _session(pid: int) -> int | None:
    try:
        return os.getsid(pid)
    except OSError:
        return None


def _comm(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


def _alive(pid: int, start: str) -> bool:
    entry = read_proc(pid)
    return entry is not None and entry.start == start and entry.state != "Z"


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="finds orphans through /proc")
def test_kill_tree_reaches_processes_in_other_sessions(escaped_tree):
    proc, members, marker = escaped_tree
    assert len(members) == 3 and all(_alive(pid, start) for pid, start in members.items())
    mpi.processes.kill_tree(proc, grace=0.2)
    assert [pid for pid, start in members.items() if _alive(pid, start)] == []   # it waited for them
    assert proc.returncode == -9                                                # SIGTERM was ignored
    assert _processes_with(marker) == []


def test_bad_options_are_one_line_errors(capsys):
    assert cli.main(["run", "--np", "3", "-c", "all_reduce", "-a", "recursive_doubling"]) == 2
    assert capsys.readouterr().err == (
        "collectives run: error: recursive_doubling needs a power-of-two number of ranks, got N = 3 "
        "(applicable here: ring, bidirectional_ring, chain, bidirectional_ring_whole, tree, binomial_tree, "
        "direct, sharp, nvls)\n")
    assert cli.main(["run", "--np", "2", "-b", "1M", "-e", "1K"]) == 2
    assert capsys.readouterr().err == "collectives run: error: -e 1K is smaller than -b 1M\n"
    with pytest.raises(cl.CollectivesError, match="dtype 'int8' is not supported"):
        mpi.run(cl.build("all_gather", 2, "ring"), [64], dtype="int8")


def test_run_usage_names_the_program_as_it_was_started(capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["run", "--help"])                 # the console script `collectives`
    assert stop.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith("usage: collectives run ")
    assert "check every\nrank's result against the collective's definition" in text
    assert "examples:\n  collectives run --np 4 -c all_reduce -a ring,recursive_doubling -b 1K -e 4M\n" in text
    assert "--timeout TIMEOUT" in text and "--payload" not in text
    for argv, prog in ([sys.executable, "-m", "collectives_lib", "run", "--help"], "python -m collectives_lib run"),\
                      ([sys.executable, "-m", "collectives_lib.mpi", "--help"], "python -m collectives_lib.mpi"):
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.startswith(f"usage: {prog} "), proc.stdout[:200]
        assert f"examples:\n  {prog} --np 4 " in proc.stdout


def test_run_parse_errors_are_one_line(capsys):
    assert cli.main(["run", "--np", "abc"]) == 2
    assert capsys.readouterr().err == "collectives run: error: argument --np/-n: invalid int value: 'abc'\n"
    from collectives_lib.mpi.cli import run_main
    assert run_main(["--dtype", "int8"], prog="python -m collectives_lib.mpi") == 2
    assert capsys.readouterr().err.startswith("collectives run: error: argument --dtype: invalid choice: 'int8'")


TIMEOUT_RULE = "must be a number of seconds > 0 and at most 1000000 (about 11 days), got "


@pytest.mark.parametrize("value", ["inf", "nan", "-1", "0", "1e7", "soon"])
def test_bad_timeouts_are_one_line_and_status_2(value, capsys):
    assert cli.main(["run", "--timeout", value]) == 2
    assert capsys.readouterr().err == f"collectives run: error: --timeout {TIMEOUT_RULE}{value}\n"


def test_bad_timeouts_from_the_shell_give_no_traceback():
    proc = subprocess.run([sys.executable, "-m", "collectives_lib", "run", "--timeout", "inf"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr == f"collectives run: error: --timeout {TIMEOUT_RULE}inf\n"


def test_the_python_api_refuses_bad_timeouts():
    ring = cl.build("all_gather", 2, "ring")
    for value in (float("inf"), float("nan"), -1, 0, True):
        with pytest.raises(cl.CollectivesError, match=f"^{re.escape(f'timeout {TIMEOUT_RULE}{value!r}')}$"):
            mpi.run(ring, ["1K"], timeout=value)


@pytest.mark.parametrize("argv, message", [
    (["--size", "1e30"], "--np 2 with --size 1e30 would need about 2e19 TB of memory (2 processes x 1e19 TB: "
                         "10 bytes per byte of the largest array, 1e18 TB); "),
    (["-b", "1K", "-e", "1e30"], "--np 2 with -e 1e30 would need about "),
    (["-b", "1e30", "-e", "1e30"], "--np 2 with -e 1e30 would need about 2e19 TB of memory"),
    (["--np", "100000"], f"--np 100000: at most {mpi.process_cap()} processes start without --oversubscribe "
                         f"(this machine has {mpi.cores()} cores, and past them the times measure the scheduler)"),
    (["--topology", "torus:16x16"], f"--topology torus:16x16 (256 ranks): at most {mpi.process_cap()} processes "
                                    f"start without --oversubscribe"),
    (["--np", "5000", "--oversubscribe"], "--np 5000 with -e 1M would need about "),
], ids=["size-1e30", "maxbytes-1e30", "both-1e30", "np-100000", "topology-256", "np-5000-oversubscribed"])
def test_too_large_runs_are_one_line_and_status_2(argv, message, capsys):
    start = time.monotonic()
    assert cli.main(["run", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"collectives run: error: {message}"), err
    if "would need about" in message:
        assert " is available here, so " in err
    assert time.monotonic() - start < 20       # refused before anything large is built


def test_too_large_runs_from_the_shell_give_no_traceback():
    for argv in (["--size", "1e30"], ["--np", "100000"]):
        proc = subprocess.run([sys.executable, "-m", "collectives_lib", "run", *argv],
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("collectives run: error: ")
        assert "Traceback" not in proc.stderr


def test_the_python_api_refuses_too_large_runs():
    ring = cl.build("all_gather", 2, "ring")
    with pytest.raises(cl.CollectivesError, match=r"^the run would need about .* is available here"):
        mpi.run(ring, [10**30])
    big = cl.build("all_gather", 100, "ring")
    with pytest.raises(cl.CollectivesError, match=r"^100 processes: at most \d+ processes start without "
                                                  r"oversubscribe=True"):
        mpi.run(big, ["1K"])
    with pytest.raises(cl.CollectivesError, match=r"^the ping-pong would need about"):
        mpi.calibrate(sizes=[10**30])


def test_more_processes_than_cores_is_one_warning(capsys):
    n = mpi.cores() + 1
    code = cli.main(["run", "--np", str(n), "-c", "all_gather", "--size", "1K", "--iters", "1",
                     "--warmup", "0", "--oversubscribe"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert captured.err == (f"collectives run: warning: {n} processes on {mpi.cores()} cores: the times "
                            f"include waiting for the scheduler, not only for messages\n")
    assert mpi.parse_table(captured.out)[0]["N"] == n


def test_a_run_says_when_a_size_runs_as_whole_elements(capsys):
    # 1 B of float64 over 2 ranks runs as 2 elements, 16 B: the table and JSON say so
    code = cli.main(["run", "--np", "2", "--size", "1", "--iters", "2", "--warmup", "0"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "# sizes run as whole float64 elements, at least one per slot: 1 B ran as 16 B" in out
    code = cli.main(["run", "--np", "2", "-b", "16", "-e", "1K", "-f", "4", "--iters", "2",
                     "--warmup", "0", "--json"])
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert code == 0
    assert [(r["asked_bytes"], r["size_bytes"]) for r in rows] == [
        ([16], 16), ([64], 64), ([256], 256), ([1024], 1024)]
