"""Launching mpiexec: finding it, starting the ranks, waiting with a timeout, and
stopping the whole process tree.

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

import json
import os
import pickle
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from ..errors import CollectivesError
from .executor import ERROR_MARK, RESULT_MARK

#: What to install when mpi4py or mpiexec is missing.
INSTALL_HINT = "pip install mpi4py mpich"

_LAUNCH_ENV = ("PMI_RANK", "PMI_SIZE", "PMI_FD", "PMI_PORT", "PMIX_RANK", "OMPI_COMM_WORLD_SIZE",
               "OMPI_COMM_WORLD_RANK", "MPI_LOCALRANKID", "MPI_LOCALNRANKS")


class MPIUnavailable(CollectivesError):
    """mpi4py or mpiexec is missing: the message says what to install."""


class MPIRunError(CollectivesError):
    """The MPI run failed, hung past its timeout, or a rank raised an error."""


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


def process_table() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, start time) for every process (Linux /proc; empty elsewhere)."""
    table = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return table
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        table[int(name)] = (int(fields[1]), fields[19])  # ppid, starttime
    return table


def descendants(pid: int) -> list[tuple[int, str]]:
    """(pid, start time) of every process below ``pid``."""
    table = process_table()
    children: dict[int, list[int]] = {}
    for p, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(p)
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append((c, table[c][1]))
            todo.append(c)
    return out


def kill_tree(proc: subprocess.Popen, grace: float = 3.0) -> None:
    """Stop mpiexec, its proxies and every rank.

    mpiexec runs in its own process group (``start_new_session``), but Hydra
    puts each proxy and each rank in a session of its own, so killing the group
    alone would orphan the ranks if mpiexec could not clean up. So: note every
    descendant, SIGTERM the group (Hydra forwards it and cleans up), wait
    ``grace`` seconds, then
    SIGKILL whatever is left of the noted processes (checking each one's start
    time, so that a recycled process id is never hit).
    """
    tree = descendants(proc.pid)
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    now = process_table()
    for pid, started in tree:
        if pid in now and now[pid][1] == started:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:  # pragma: no cover
        pass


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


def launch(payload: dict, np_: int, *, timeout: float, hostfile=None, mpiexec_args=(),
            env=None) -> dict:
    """Start ``mpiexec -n np_ python -m collectives_lib.mpi --payload FILE`` and return
    rank 0's results; raise :class:`MPIRunError` on failure or timeout."""
    check_mpi4py()
    mpiexec = find_mpiexec()
    if not (timeout and timeout > 0):
        raise CollectivesError(f"timeout must be a positive number of seconds, got {timeout!r}")
    if hostfile is not None and not Path(hostfile).is_file():
        raise CollectivesError(f"host file {str(hostfile)!r} does not exist")
    # On a cluster the payload must be readable by rank 0, which Hydra starts on the
    # first host of the host file: put it in the working directory (usually shared).
    where = os.getcwd() if hostfile else None
    fd, path = tempfile.mkstemp(prefix=".collectives-mpi-", suffix=".pkl", dir=where)
    child_env = {k: v for k, v in os.environ.items() if k not in _LAUNCH_ENV}
    pkg_parent = str(Path(__file__).resolve().parents[2])
    child_env["PYTHONPATH"] = pkg_parent + (os.pathsep + child_env["PYTHONPATH"]
                                            if child_env.get("PYTHONPATH") else "")
    child_env.update(env or {})
    cmd = [mpiexec]
    if hostfile is not None:
        cmd += ["-f", str(hostfile)]
    cmd += [*map(str, mpiexec_args), "-n", str(np_), sys.executable, "-m", "collectives_lib.mpi",
            "--payload", path]
    try:
        with os.fdopen(fd, "wb") as f:
            pickle.dump(payload, f, protocol=pickle.HIGHEST_PROTOCOL)
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=child_env,
                                start_new_session=True)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_tree(proc)
            try:
                proc.communicate(timeout=10)
            except subprocess.TimeoutExpired:  # pragma: no cover - a process we never saw
                pass
            raise MPIRunError(
                f"the MPI run ({np_} processes) did not finish within {timeout:g} s and was "
                f"stopped, every process killed; a schedule that deadlocks, a rank that "
                f"waits forever, or too small a --timeout for this machine") from None
        except BaseException:
            kill_tree(proc)
            raise
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
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

