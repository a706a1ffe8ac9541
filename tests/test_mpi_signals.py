"""Every way a run ends stops its whole process tree and removes its files.

Each test starts a real launcher (``python -m collectives_lib run ...``, or a
Python script calling ``cl.mpi.run``) with a temporary directory of its own
(``TMPDIR``) and a marker in its environment, waits until its ranks are running
MPI, ends it (SIGTERM, SIGHUP, SIGINT, SIGKILL, the timeout) and then checks,
by pid and start time, that no process of its tree survives (the tree is
recorded while it runs, so processes that changed session or lost their parent
count too), that the temporary directory is empty, and that no MPICH
shared-memory segment the ranks mapped is left in /dev/shm. The fixture kills
whatever a failing test leaves behind.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

import collectives_lib as cl
from collectives_lib import mpi
from collectives_lib.mpi.processes import descendants, process_table, read_proc

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc") or mpi.available() is not None,
                                reason="needs Linux's /proc and MPI")

#: A run that lasts minutes unless something ends it.
LONG_RUN = ["--np", "2", "-b", "1M", "-e", "64M", "--iters", "1000"]
#: Bound on how long a launcher may take to end once told to (loose: the machine is shared).
PROMPT = 20.0


def _cmdline(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().decode(errors="replace").split("\0")
    except OSError:
        return []


def _environ_has(pid: int, needle: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return needle in f.read()
    except OSError:
        return False


def _alive(pid: int, start: str) -> bool:
    entry = read_proc(pid)
    return entry is not None and entry.start == start and entry.state != "Z"


def _mapped_segments(pid: int) -> set[str]:
    """MPICH segments that ``pid`` maps, named or already unlinked."""
    found = set()
    try:
        with open(f"/proc/{pid}/maps") as f:
            for line in f:
                parts = line.split(None, 5)
                if len(parts) == 6 and parts[5].startswith("/dev/shm/mpich_shm_"):
                    found.add(parts[5].strip().removesuffix(" (deleted)"))
    except OSError:
        pass
    return found


class Launcher:
    """A launcher process and everything seen of its tree."""

    def __init__(self, argv: list[str], tmp_path: Path, *, ignore: tuple[int, ...] = ()):
        self.marker = f"collectives-test-{uuid.uuid4().hex}"
        self.tmpdir = tmp_path / "tmp"
        self.tmpdir.mkdir(parents=True)
        self.out, self.err = tmp_path / "stdout", tmp_path / "stderr"
        env = {**os.environ, "TMPDIR": str(self.tmpdir), "COLLECTIVES_TEST_MARK": self.marker}
        # A shell's background job may have SIGINT ignored, which the launcher would then
        # keep ignoring (rightly): start from the default dispositions, then ignore `ignore`.
        setup = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
                 "signal.signal(signal.SIGHUP, signal.SIG_DFL); "
                 + "".join(f"signal.signal({int(s)}, signal.SIG_IGN); " for s in ignore)
                 + "os.execv(sys.executable, [sys.executable] + sys.argv[1:])")
        with open(self.out, "wb") as out, open(self.err, "wb") as err:
            self.proc = subprocess.Popen([sys.executable, "-c", setup, *argv], env=env, stdout=out,
                                         stderr=err, stdin=subprocess.DEVNULL, start_new_session=True)
        self.seen: dict[int, str] = {}
        self.segments: set[str] = set()

    def look(self) -> dict[int, str]:
        """Record the tree below the launcher, and every process carrying the marker."""
        table = process_table()
        found = dict(descendants(self.proc.pid, table)) if self.proc.poll() is None else {}
        needle = f"COLLECTIVES_TEST_MARK={self.marker}".encode()
        for pid, entry in table.items():
            if pid != self.proc.pid and pid not in found and _environ_has(pid, needle):
                found[pid] = entry.start
        for pid, start in found.items():
            if self.seen.get(pid) != start:
                self.seen[pid] = start
        return found

    def wait_until_running(self, ranks: int, timeout: float = 120.0) -> None:
        """Until mpiexec, its proxy and ``ranks`` ranks exist and every rank has started MPI
        (it maps MPICH's shared-memory segment)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"the launcher ended first: {self.stderr()}"
            commands = {pid: _cmdline(pid) for pid in self.look()}
            names = {os.path.basename(cmd[0]) for cmd in commands.values() if cmd}
            running = [pid for pid, cmd in commands.items()
                       if "--payload" in cmd and os.path.basename(cmd[0]) != "mpiexec"]
            segments = [_mapped_segments(pid) for pid in running]
            if {"mpiexec", "hydra_pmi_proxy"} <= names and len(running) == ranks and all(segments):
                self.segments |= set().union(*segments)
                return
            time.sleep(0.05)
        raise AssertionError(f"the ranks did not start within {timeout:g} s: {self.stderr()}")

    def wait(self, timeout: float = PROMPT) -> int:
        """The launcher's exit status, recording its tree (and the ranks' segments) meanwhile."""
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None:
            assert time.monotonic() < deadline, f"the launcher did not end within {timeout:g} s"
            for pid in self.look():
                self.segments |= _mapped_segments(pid)
            time.sleep(0.05)
        return self.proc.returncode

    def survivors(self) -> list[str]:
        """Processes of the run still alive: recorded ones, and any carrying the marker."""
        self.look()
        return [f"{pid} {' '.join(_cmdline(pid))[:80]}" for pid, start in self.seen.items()
                if _alive(pid, start)]

    def stderr(self) -> str:
        return self.err.read_text()

    def kill_everything(self) -> None:
        """What a failing test leaves: SIGKILL, by pid (and start time)."""
        self.look()
        for pid, start in self.seen.items():
            if _alive(pid, start):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)


@pytest.fixture
def launcher(tmp_path):
    started: list[Launcher] = []

    def start(argv: list[str], **kw) -> Launcher:
        run = Launcher(argv, tmp_path / f"launch{len(started)}", **kw)
        started.append(run)
        return run

    yield start
    for run in started:
        run.kill_everything()


def assert_nothing_left(run: Launcher, *, started: bool = True) -> None:
    """No process of the run alive, its TMPDIR empty, no segment its ranks mapped left
    (``started``: the ranks were seen running MPI, so there were segments)."""
    assert run.survivors() == []
    assert sorted(os.listdir(run.tmpdir)) == []
    assert run.segments or not started
    assert [s for s in run.segments if os.path.exists(s)] == []


def stderr_lines(run: Launcher, processes: int = 2) -> list[str]:
    """The launcher's stderr, less the warning it gives when processes outnumber cores."""
    lines = run.stderr().splitlines()
    if processes > mpi.cores() and lines and lines[0].startswith("collectives run: warning: "):
        return lines[1:]
    return lines


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT],
                         ids=["SIGTERM", "SIGHUP", "SIGINT"])
def test_a_signal_to_the_command_stops_every_process_and_removes_its_files(launcher, signum):
    run = launcher(["-m", "collectives_lib", "run", *LONG_RUN])
    run.wait_until_running(ranks=2)
    os.kill(run.proc.pid, signum)
    assert run.wait() == 128 + signum
    name = signal.Signals(signum).name
    assert stderr_lines(run) == [f"collectives run: stopped by {name}; every MPI process was stopped "
                                 f"and the run's files removed"]
    assert_nothing_left(run)


def test_sigterm_to_python_calling_run_ends_it_by_sigterm_after_cleaning_up(launcher):
    """A notebook's kernel, or a script under a batch scheduler: the run cleans up, then
    SIGTERM's default action (the handler that was there before) ends the process."""
    code = ("import collectives_lib as cl; "
            "cl.mpi.run(cl.build('all_reduce', 2, 'ring'), ['1M', '4M', '16M', '64M'], iters=1000)")
    run = launcher(["-c", code])
    run.wait_until_running(ranks=2)
    os.kill(run.proc.pid, signal.SIGTERM)
    assert run.wait() == -signal.SIGTERM
    assert_nothing_left(run)


def test_the_timeout_stops_a_run_that_would_last_longer(launcher):
    run = launcher(["-m", "collectives_lib", "run", *LONG_RUN, "--timeout", "3"])
    start = time.monotonic()
    assert run.wait() == 1
    assert time.monotonic() - start < PROMPT
    lines = stderr_lines(run)
    assert len(lines) == 1, lines
    assert lines[0].startswith("collectives run: error: the MPI run (2 processes) did not finish within "
                               "3 s and was stopped, every process killed")
    assert len(run.seen) >= 4     # mpiexec, its proxy and the ranks were seen, and are gone:
    assert_nothing_left(run, started=False)


def test_sigkill_to_the_command_leaves_ranks_that_end_themselves(launcher):
    """Nothing catches SIGKILL: the ranks notice that their launcher is gone and end,
    and with them mpiexec; the payload and MPICH's segment were unlinked at start-up."""
    run = launcher(["-m", "collectives_lib", "run", *LONG_RUN])
    run.wait_until_running(ranks=2)
    os.kill(run.proc.pid, signal.SIGKILL)
    assert run.wait() == -signal.SIGKILL
    deadline = time.monotonic() + PROMPT
    while run.survivors() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert_nothing_left(run)


def test_an_ignored_signal_stays_ignored(launcher):
    """Under nohup (SIGHUP ignored) a hangup does not stop the run; SIGTERM still does."""
    run = launcher(["-m", "collectives_lib", "run", *LONG_RUN], ignore=(signal.SIGHUP,))
    run.wait_until_running(ranks=2)
    os.kill(run.proc.pid, signal.SIGHUP)
    time.sleep(1.0)
    assert run.proc.poll() is None and len(run.survivors()) >= 4
    os.kill(run.proc.pid, signal.SIGTERM)
    assert run.wait() == 128 + signal.SIGTERM
    assert_nothing_left(run)


# ---------------------------------------------------------------------------
# In this process: the guard's deadline, handlers put back, other threads
# ---------------------------------------------------------------------------

def _dispositions():
    return {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGALRM)}


def test_the_deadline_interrupts_work_before_the_launch():
    before = _dispositions()
    start = time.monotonic()
    with pytest.raises(mpi.MPIRunError, match=r"^the run did not finish within 0\.5 s, its timeout: "
                                              r"it was stopped while building the schedules$"):
        with mpi.guarded(0.5) as guard:
            guard.phase = "building the schedules"
            while True:     # pure Python work, as building a large schedule is
                sum(range(1000))
    assert time.monotonic() - start < PROMPT
    assert _dispositions() == before
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_a_run_puts_back_the_handlers_and_timer_it_found():
    def mine(signum, frame):  # pragma: no cover - never called
        raise AssertionError("called")

    previous = signal.signal(signal.SIGTERM, mine)
    try:
        signal.setitimer(signal.ITIMER_REAL, 3600)
        before = _dispositions()
        result = mpi.run(cl.build("all_gather", 2, "ring"), ["1K"], iters=1, warmup=0, timeout=60)
        assert result.ok
        assert _dispositions() == before and signal.getsignal(signal.SIGTERM) is mine
        remaining, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 3000 < remaining <= 3600
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGTERM, previous)


def test_outside_the_main_thread_the_timeout_still_stops_everything(monkeypatch):
    """No signal handlers there: the deadline is enforced while waiting for mpiexec."""
    marker = f"collectives-test-{uuid.uuid4().hex}"
    monkeypatch.setenv("COLLECTIVES_TEST_MARK", marker)
    before = _dispositions()
    outcome: list[BaseException] = []

    def target():
        try:
            mpi.run(cl.build("all_reduce", 2, "ring"), ["1K"], timeout=2, _inject={"stall_rank": 1})
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            outcome.append(exc)

    thread = threading.Thread(target=target)
    thread.start()
    thread.join(timeout=PROMPT)
    assert not thread.is_alive()
    assert len(outcome) == 1 and isinstance(outcome[0], mpi.MPIRunError), outcome
    assert str(outcome[0]).startswith("the MPI run (2 processes) did not finish within 2 s")
    assert _dispositions() == before
    needle = f"COLLECTIVES_TEST_MARK={marker}".encode()
    assert [pid for pid, entry in process_table().items() if entry.state != "Z"
            and pid != os.getpid() and _environ_has(pid, needle)] == []

