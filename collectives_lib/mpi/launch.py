"""Launching mpiexec: finding it, starting the ranks with their payload, waiting for
them within the run's deadline, and stopping the whole tree on every way out.

A launch owns a private temporary directory (the payload the ranks read; rank 0
removes it as soon as every rank has read it, and the launcher removes it again
at the end) and the process tree below mpiexec (stopped by
:func:`~collectives_lib.mpi.processes.kill_tree` unless it ended by itself). The
run's deadline and stop signals are :mod:`collectives_lib.mpi.guard`'s: a
timeout, SIGTERM, SIGHUP or Ctrl-C all leave :func:`launch` through the same
cleanup. Ranks versus cores: :func:`check_processes` refuses more than
:func:`process_cap` processes unless asked to oversubscribe.

Oversubscription. On a laptop or a 2-core build machine, N processes may
share fewer cores. MPICH's shared-memory transport busy-polls while it waits,
and Hydra does not pin processes by default (checked: without ``-bind-to``,
every process may run on every core), so with more processes than cores a
process that waits holds a core that the process it waits for needs, until the
kernel's scheduler switches them. Every step then costs scheduling time rather
than transport time: on the 2-core machine this was written on, an all-reduce
of 1 KiB took about 3 us per step with 2 processes, 10 to 15 us with 4 and 20
to 35 us with 8 (ring and recursive doubling alike; ``MPI_Allreduce`` slowed
down the same way). MPICH can yield the core while it polls
(``MPIR_CVAR_POSIX_POLL_FREQUENCY``, every 1000 polls by default); asking it
to yield after every poll or every 100 made no consistent difference there
(sometimes worse), so the launcher leaves MPICH's defaults alone (pass
``env=`` to try others). The processes that a smaller schedule does not use
sleep instead of polling.

MPICH needs no special flag to run as root (Open MPI would need
``--allow-run-as-root``). The MPI library comes from pip: ``pip install mpi4py
mpich`` installs mpi4py and MPICH, whose ``mpiexec`` lands next to the Python
interpreter.
"""

from __future__ import annotations

import atexit
import json
import os
import pickle
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from ..errors import CollectivesError
from .errors import MPIRunError, MPIUnavailable
from .executor import ERROR_MARK, RESULT_MARK
from .guard import DeadlineExceeded, RunGuard, guarded
from .processes import RUN_TOKEN, hydra_files, kill_tree, read_proc, remove_hydra_files

#: What to install when mpi4py or mpiexec is missing.
INSTALL_HINT = "pip install mpi4py mpich"



_LAUNCH_ENV = ("PMI_RANK", "PMI_SIZE", "PMI_FD", "PMI_PORT", "PMIX_RANK", "OMPI_COMM_WORLD_SIZE",
               "OMPI_COMM_WORLD_RANK", "MPI_LOCALRANKID", "MPI_LOCALNRANKS")


def under_mpiexec() -> bool:
    """Was this process started by mpiexec (MPICH's Hydra, Open MPI, a PMIx launcher)?"""
    return any(os.environ.get(var) for var in
               ("PMI_RANK", "PMI_SIZE", "PMIX_RANK", "OMPI_COMM_WORLD_SIZE", "MPI_LOCALRANKID"))


def find_mpiexec() -> str:
    """Path of ``mpiexec``: ``$MPIEXEC`` if set, else the one on PATH, else the one
    next to this Python (pip's ``mpich`` puts it in the environment's bin, which
    is not on PATH when the environment is not activated)."""
    explicit = os.environ.get("MPIEXEC")
    if explicit:
        if shutil.which(explicit):
            return shutil.which(explicit)
        raise MPIUnavailable(f"MPIEXEC={explicit!r} is not an executable; unset it or point it to mpiexec")
    found = shutil.which("mpiexec")
    if found:
        return found
    beside = Path(sys.executable).parent / "mpiexec"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    raise MPIUnavailable(
        f"mpiexec not found (not on PATH, not next to {sys.executable}); "
        f"install MPI with `{INSTALL_HINT}`")


def check_mpi4py() -> None:
    """Raise :class:`MPIUnavailable` unless mpi4py can be imported."""
    import importlib.util
    try:
        spec = importlib.util.find_spec("mpi4py")
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        raise MPIUnavailable(f"mpi4py is not installed for {sys.executable}; install it with "
                             f"`{INSTALL_HINT}`")


def available() -> str | None:
    """None if MPI runs are possible here, else the reason (with what to install)."""
    try:
        check_mpi4py()
        find_mpiexec()
    except MPIUnavailable as exc:
        return str(exc)
    return None


#: Processes a run may start without asking to oversubscribe: this many, or the
#: number of cores if that is more.
MAX_PROCESSES = 64


def cores() -> int:
    """The cores this process may run on (its CPU affinity), as the ranks will."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def process_cap() -> int:
    """The most processes a run starts here without ``oversubscribe``."""
    return max(MAX_PROCESSES, cores())


def check_processes(processes: int, *, oversubscribe: bool, what: str | None = None,
                    flag: str = "oversubscribe=True") -> None:
    """Refuse more than :func:`process_cap` processes unless ``oversubscribe``: past the
    cores, the times measure the scheduler; far past them, the machine."""
    cap = process_cap()
    if processes > cap and not oversubscribe:
        raise CollectivesError(
            f"{what or f'{processes} processes'}: at most {cap} processes start without {flag} "
            f"(this machine has {cores()} cores, and past them the times measure the scheduler)")


def first_error(stderr: str) -> str:
    """The failing rank's error from the workers' stderr, with its traceback."""
    lines = stderr.splitlines()
    for i, line in enumerate(lines):
        if ERROR_MARK in line:
            head = line.split(ERROR_MARK, 1)[1].strip()
            rest = []
            for ln in lines[i + 1:]:
                if ERROR_MARK in ln or ln.startswith("Abort(") or ln.startswith("==="):
                    break
                rest.append(ln)
            return head + ("\n" + "\n".join(rest[-12:]) if rest else "")
    return ""


class _Launched:
    """What one launch owns, and how to let go of it on every way out."""

    def __init__(self, workdir: str, token: str):
        self.workdir = workdir
        self.token = token
        self.proc: subprocess.Popen | None = None
        self.hydra_before: list[str] = hydra_files()   # Hydra's files already there
        self.started = time.time()

    def stop(self) -> None:
        """Stop the process tree (if it is still there) and collect what it wrote."""
        proc = self.proc
        if proc is None:
            return
        kill_tree(proc, token=self.token)
        if proc.stdout is not None and not proc.stdout.closed:
            try:
                proc.communicate(timeout=5)
            except BaseException:  # noqa: BLE001 - the pipes may be half read; close them
                for pipe in (proc.stdout, proc.stderr):
                    if pipe is not None:
                        pipe.close()

    def remove_files(self) -> None:
        shutil.rmtree(self.workdir, ignore_errors=True)
        remove_hydra_files(self.hydra_before, self.started)

    def at_exit(self) -> None:
        """The interpreter is exiting while the launch is under way (a daemon thread)."""
        self.stop()
        self.remove_files()


def launch(payload: dict, processes: int, *, timeout: float, hostfile=None, mpiexec_args=(),
           env=None) -> dict:
    """Start ``mpiexec -n processes python -m collectives_lib.mpi --payload FILE`` and
    return rank 0's results; raise :class:`MPIRunError` on failure or timeout.

    ``timeout`` (s) counts from the start of the run: from here, or from the
    guard of a run already under way in this thread (:func:`~collectives_lib.mpi.run`,
    the command line), whichever ends first.
    """
    with guarded(timeout) as guard:
        guard.phase = "starting mpiexec"
        check_mpi4py()
        mpiexec = find_mpiexec()
        if hostfile is not None and not Path(hostfile).is_file():
            raise CollectivesError(f"host file {str(hostfile)!r} does not exist")
        # On a cluster the payload must be readable by rank 0, which Hydra starts on the
        # first host of the host file: put it in the working directory (usually shared).
        where = os.getcwd() if hostfile else None
        with guard.hold():
            launched = _Launched(tempfile.mkdtemp(prefix=".collectives-mpi-", dir=where), uuid.uuid4().hex)
            atexit.register(launched.at_exit)
        try:
            return _run(launched, payload, processes, guard, mpiexec, hostfile, mpiexec_args, env)
        finally:
            with guard.hold():
                launched.remove_files()
                atexit.unregister(launched.at_exit)


def _run(launched: _Launched, payload: dict, processes: int, guard: RunGuard, mpiexec: str, hostfile,
         mpiexec_args, env) -> dict:
    path = os.path.join(launched.workdir, "payload.pkl")
    me = read_proc(os.getpid())
    payload = dict(payload, remove=[path, launched.workdir],
                   hydra=[launched.hydra_before, launched.started],
                   launcher=None if me is None else [socket.gethostname(), os.getpid(), me.start])
    child_env = {k: v for k, v in os.environ.items() if k not in _LAUNCH_ENV}
    pkg_parent = str(Path(__file__).resolve().parents[2])
    child_env["PYTHONPATH"] = pkg_parent + (os.pathsep + child_env["PYTHONPATH"]
                                            if child_env.get("PYTHONPATH") else "")
    child_env.update(env or {})
    child_env[RUN_TOKEN] = launched.token
    cmd = [mpiexec]
    if hostfile is not None:
        cmd += ["-f", str(hostfile)]
    cmd += [*map(str, mpiexec_args), "-n", str(processes), sys.executable, "-m", "collectives_lib.mpi",
            "--payload", path]
    with open(path, "wb") as f:
        pickle.dump(payload, f, protocol=pickle.HIGHEST_PROTOCOL)
    guard.check()
    try:
        with guard.hold():
            launched.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                             stderr=subprocess.PIPE, text=True, env=child_env,
                                             start_new_session=True)
        guard.phase = "waiting for the MPI processes"
        try:
            out, err = launched.proc.communicate(timeout=max(guard.remaining(), 1e-3))
        except subprocess.TimeoutExpired:
            guard.expire()
    except DeadlineExceeded:
        with guard.hold():
            launched.stop()
        raise MPIRunError(
            f"the MPI run ({processes} processes) did not finish within {guard.timeout:g} s and was "
            f"stopped, every process killed; a schedule that deadlocks, a rank that "
            f"waits forever, or too small a --timeout for this machine") from None
    except BaseException:
        with guard.hold():
            launched.stop()
        raise
    proc = launched.proc
    if proc.returncode != 0:  # it ended by itself, badly: make sure nothing of it is left
        with guard.hold():
            launched.stop()
    result = None
    for line in out.splitlines():
        if line.startswith(RESULT_MARK):
            result = json.loads(line[len(RESULT_MARK):])
    if proc.returncode != 0 or result is None:
        why = first_error(err)
        if why:
            raise MPIRunError(f"the MPI run failed: {why}")
        tail = "\n".join((err.strip() or out.strip()).splitlines()[-15:])
        raise MPIRunError(f"the MPI run failed (mpiexec exit code {proc.returncode}):\n{tail}")
    return result
