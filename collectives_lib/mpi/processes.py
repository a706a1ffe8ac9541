"""The process table, and stopping a run's whole process tree.

mpiexec runs in its own session (``start_new_session``), but Hydra puts its
proxy and every rank in a session of their own, so neither a signal to
mpiexec's process group nor mpiexec's own cleanup is enough if mpiexec hangs or
dies first. :func:`kill_tree` therefore finds every process of the run itself,
and identifies each by (pid, start time), so that a recycled process id is
never hit. Linux's ``/proc`` is read; elsewhere only the process group is
signalled.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from typing import NamedTuple

#: The environment variable that carries a run's token to every process of the
#: run (Hydra passes the launcher's environment on to the ranks).
RUN_TOKEN = "COLLECTIVES_MPI_RUN"
#: Seconds between SIGTERM and SIGKILL when a run is stopped.
GRACE = 3.0
#: Names MPICH gives its shared-memory segments in /dev/shm.
SHM_PREFIX = "/dev/shm/mpich_shm_"


class Proc(NamedTuple):
    """One line of the process table."""
    ppid: int
    start: str   # start time (clock ticks since boot): with the pid, the process's identity
    state: str   # R, S, D, Z (a zombie: dead, not yet reaped), ...


def read_proc(pid: int) -> Proc | None:
    """Process ``pid``'s line of the process table, None if there is no such process."""
    try:
        with open(f"/proc/{int(pid)}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()
    return Proc(int(fields[1]), fields[19], fields[0])  # ppid, starttime, state


def process_table() -> dict[int, Proc]:
    """pid -> :class:`Proc` for every process (Linux /proc; empty elsewhere)."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return {}
    table = {}
    for name in entries:
        if name.isdigit():
            entry = read_proc(int(name))
            if entry is not None:
                table[int(name)] = entry
    return table


def descendants(pid: int, table: dict[int, Proc] | None = None) -> list[tuple[int, str]]:
    """(pid, start time) of every process below ``pid``."""
    table = process_table() if table is None else table
    children: dict[int, list[int]] = {}
    for p, entry in table.items():
        children.setdefault(entry.ppid, []).append(p)
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append((c, table[c].start))
            todo.append(c)
    return out


def carrying(token: str, table: dict[int, Proc]) -> list[tuple[int, str]]:
    """(pid, start time) of every process whose environment has ``RUN_TOKEN=token``
    (a process in the middle of an exec may be missed: look again)."""
    needle = f"{RUN_TOKEN}={token}".encode()
    found = []
    for pid, entry in table.items():
        if pid == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if needle in f.read():
                    found.append((pid, entry.start))
        except OSError:
            continue
    return found


def shm_segments(pid: int) -> set[str]:
    """MPICH's shared-memory segments that process ``pid`` maps and that still have a name."""
    found = set()
    try:
        with open(f"/proc/{pid}/maps") as f:
            for line in f:
                parts = line.split(None, 5)
                if len(parts) == 6 and parts[5].startswith(SHM_PREFIX):
                    path = parts[5].strip()
                    if not path.endswith("(deleted)"):
                        found.add(path)
    except OSError:
        pass
    return found


def _alive(pid: int, start: str, table: dict[int, Proc]) -> bool:
    entry = table.get(pid)
    return entry is not None and entry.start == start and entry.state != "Z"


def _signal(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def _signal_group(proc: subprocess.Popen, signum: int) -> None:
    # Only while mpiexec is unreaped: until then its pid, and so its group's id, cannot be reused.
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signum)
        except (ProcessLookupError, PermissionError):
            pass


def kill_tree(proc: subprocess.Popen, grace: float = GRACE, *, token: str | None = None) -> None:
    """Stop mpiexec (``proc``), its proxies and every rank, and remove the shared-memory
    segments they leave named.

    The run's processes are every process below mpiexec, walked again and again as
    the tree changes, and (with ``token``) every process whose environment carries
    the run's token, which finds a process whose parent died before it was seen.
    All get SIGTERM (mpiexec's whole group too): Python ranks end at once, and
    Hydra stops its proxy. Whatever is still alive after ``grace`` seconds gets
    SIGKILL, until nothing is. Returns once every one of them has ended.
    """
    members: dict[int, str] = {}
    segments: set[str] = set()

    def look(signum: int) -> dict[int, Proc]:
        table = process_table()
        found = descendants(proc.pid, table) if proc.poll() is None else []  # while its pid is ours
        for pid, start in list(members.items()):
            if _alive(pid, start, table):
                found += descendants(pid, table)
        if token:
            found += carrying(token, table)
        for pid, start in found:
            if pid not in members or members[pid] != start:
                members[pid] = start
                segments.update(shm_segments(pid))
                _signal(pid, signum)
        return table

    def living(table) -> list[int]:
        return [pid for pid, start in members.items() if _alive(pid, start, table)]

    look(signal.SIGTERM)
    _signal_group(proc, signal.SIGTERM)
    end = time.monotonic() + grace
    while time.monotonic() < end:
        table = look(signal.SIGTERM)
        if proc.poll() is not None and not living(table):
            break
        time.sleep(0.05)
    end = time.monotonic() + max(grace, 2.0)
    while True:
        _signal_group(proc, signal.SIGKILL)
        table = look(signal.SIGKILL)
        alive = living(table)
        for pid in alive:
            _signal(pid, signal.SIGKILL)
        if (not alive and proc.poll() is not None) or time.monotonic() > end:
            break
        time.sleep(0.02)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL did not end mpiexec
        pass
    remove_segments(segments)


def remove_segments(paths) -> None:
    """Unlink MPICH shared-memory segments (nothing else: only names under /dev/shm/mpich_shm_)."""
    for path in paths:
        if str(path).startswith(SHM_PREFIX):
            try:
                os.unlink(path)
            except OSError:
                pass


#: Where MPICH's Hydra writes its hwloc topology (the path is fixed in mpiexec, whatever
#: TMPDIR says); it removes the file when it exits normally, not when a rank fails or the
#: launcher is killed.
HYDRA_FILES = "/tmp/hydra_hwloc_xmlfile_"


def hydra_files() -> list[str]:
    """Hydra's topology files now in /tmp."""
    folder, prefix = os.path.split(HYDRA_FILES)
    try:
        return sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.startswith(prefix))
    except OSError:
        return []


def remove_hydra_files(before, since: float) -> list[str]:
    """Remove Hydra's topology files that a launch made: not there ``before`` it, written
    since ``since`` (s) and owned by this user. mpiexec reads its file only while starting
    its proxies, so this is safe once the processes have started (or the run is over)."""
    removed, old = [], set(before)
    for path in hydra_files():
        try:
            st = os.stat(path)
            if path in old or st.st_uid != os.getuid() or st.st_mtime < since - 1:
                continue
            os.unlink(path)
            removed.append(path)
        except OSError:
            pass
    return removed
