"""What runs inside the MPI processes: step plans, the executor, MPI's own collective,
the timing loops, the ping-pong and the worker that does a whole run.

mpi4py is imported inside the functions, so this module loads without it.

How a schedule runs. In each step a participant posts a receive for every
transfer that ends at it and a send for every transfer that starts at it (the
box's slots, packed into one contiguous message when they are not contiguous
already), waits for all of them, and only then applies what arrived: a copy
overwrites the slots, a reduce adds into them (:class:`Executor`; the requests
are MPI persistent requests set up once per size, so a step costs little
Python). All sends of a step therefore carry what the sender held when the step
began, exactly as :func:`collectives_lib.replay.apply_step` says. Messages are
matched by (source, tag) with the tag counting transfers between the same pair
within the step (:func:`message_tags`), so several transfers between two ranks
in one step are fine. Participants that are not ranks (the reducing switch of
the SHARP and multicast algorithms) are *emulated*: each gets one extra MPI
process, which receives, adds and forwards like the switch would. Imbalanced
all-to-all (``schedule.weights``) is supported: each slot gets a number of
elements proportional to its weight, and MPI's reference is ``MPI_Alltoallv``.

What is timed. After untimed warm-up runs (at least ``warmup`` of them, and at
least :data:`WARMUP_SECONDS` of them), ``iters`` timed runs; before each, the
buffer is reset and the ranks meet in a barrier. A run's time is the slowest
rank's (``MPI_Wtime`` after the barrier to the end of its last step); the table
shows the median over runs. Per-step times (the slowest rank's, per step) are
kept too. MPI's collective (:class:`MPICollective`) is timed the same way on
the same input, and both results are compared with the collective's definition.

Leaving nothing behind. Once every process is up (:func:`settle`), each one
removes the name of MPICH's shared-memory segment in ``/dev/shm`` (the mapping
stays valid, and the memory goes when the last process unmaps it, however it
ends), and rank 0 removes the payload file the launcher wrote. A process that
its own launcher started also watches it (:func:`watch_launcher`): if the
launcher is gone (killed with SIGKILL, which nothing can catch), the process
ends itself, and with it the run.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time
import traceback
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..collective import Collective
from ..errors import CollectivesError
from ..schedule import REDUCE, Schedule, expand_box
from .buffers import Layout, compare, expected_buffer, initial_buffer
from .processes import read_proc, remove_hydra_files, remove_segments, shm_segments
from .schedules import MPI_NAMES, schedule_from_dict

#: Marks the line of rank 0's stdout that carries the results (JSON) to the launcher.
RESULT_MARK = "@@collectives-mpi-result@@"
#: Marks the line of a failing rank's stderr that says what went wrong.
ERROR_MARK = "@@collectives-mpi-error@@"


@dataclass
class StepPlan:
    recvs: list   # (src, tag, ranges, n, op, arena offset)
    sends: list   # (dst, tag, ranges, n, arena offset or -1 when sent from the buffer)


def message_tags(src: np.ndarray, dst: np.ndarray, P: int) -> np.ndarray:
    """Occurrence number of each (src, dst) pair within a step, in transfer order."""
    T = len(src)
    if T == 0:
        return np.zeros(0, dtype=np.int64)
    pair = src.astype(np.int64) * P + dst.astype(np.int64)
    order = np.argsort(pair, kind="stable")
    sp = pair[order]
    starts = np.concatenate([[0], np.nonzero(np.diff(sp))[0] + 1])
    lengths = np.diff(np.concatenate([starts, [T]]))
    tag = np.empty(T, dtype=np.int64)
    tag[order] = np.arange(T) - np.repeat(starts, lengths)
    return tag


def plan(schedule: Schedule, layout: Layout, me: int) -> tuple[list[StepPlan], int, int]:
    """Participant ``me``'s messages, step by step, and the scratch sizes needed
    (elements received in the busiest step, elements packed in the busiest step)."""
    P = schedule.num_participants
    steps = []
    max_recv = max_pack = 0
    for step in schedule.steps:
        t = step.traffic
        mine = np.nonzero((t.src == me) | (t.dst == me))[0]
        recvs, sends = [], []
        if len(mine):
            boxes = step.boxes
            tags = message_tags(t.src, t.dst, P)
            r_off = p_off = 0
            for i in mine.tolist():
                ranges, n = layout.ranges(expand_box(boxes[i], schedule.slot_shape).tolist())
                if n == 0:
                    continue
                if int(t.dst[i]) == me:
                    recvs.append((int(t.src[i]), int(tags[i]), ranges, n, int(t.op[i]), r_off))
                    r_off += n
                else:
                    if len(ranges) == 1:
                        sends.append((int(t.dst[i]), int(tags[i]), ranges, n, -1))
                    else:
                        sends.append((int(t.dst[i]), int(tags[i]), ranges, n, p_off))
                        p_off += n
            max_recv, max_pack = max(max_recv, r_off), max(max_pack, p_off)
        steps.append(StepPlan(recvs, sends))
    return steps, max_recv, max_pack


class Executor:
    """One participant's part of a schedule at one size, ready to run many times.

    Everything that does not change between runs is prepared once: the flat
    buffer ``data`` (reset from ``init`` before each run), scratch space for
    received and packed chunks, numpy views of every range, and MPI
    *persistent* requests (``Send_init``/``Recv_init``), so a step costs one
    ``Startall``, one ``Waitall`` and the copies and additions it must do.
    """

    def __init__(self, comm, schedule: Schedule, layout: Layout, me: int, init: np.ndarray):
        steps, max_recv, max_pack = plan(schedule, layout, me)
        self.data = init.copy()
        self.init = init
        self.rbuf = np.empty(max(1, max_recv), dtype=layout.dtype)
        self.pbuf = np.empty(max(1, max_pack), dtype=layout.dtype)
        self.steps = []
        self._requests = []
        data, rbuf, pbuf = self.data, self.rbuf, self.pbuf
        for st in steps:
            reqs, packs, applies = [], [], []
            for src, tag, ranges, n, op, off in st.recvs:
                reqs.append(comm.Recv_init(rbuf[off:off + n], source=src, tag=tag))
                pos = off
                for a, b in ranges:
                    applies.append((data[a:b], rbuf[pos:pos + b - a], op == REDUCE))
                    pos += b - a
            for dst, tag, ranges, n, off in st.sends:
                if off < 0:
                    a, b = ranges[0]
                    buf = data[a:b]
                else:
                    buf = pbuf[off:off + n]
                    pos = off
                    for a, b in ranges:
                        packs.append((pbuf[pos:pos + b - a], data[a:b]))
                        pos += b - a
                reqs.append(comm.Send_init(buf, dest=dst, tag=tag))
            self.steps.append((reqs, packs, applies))
            self._requests += reqs

    def run(self, stamps: np.ndarray, Wtime) -> None:
        """Run every step on ``data`` in place; ``stamps[k]`` = when step k ended here.

        All receives and sends of a step are started together and completed
        before anything arrives in ``data``, so every send carries what its
        sender held when the step began (as replay.apply_step).
        """
        from mpi4py import MPI
        startall, waitall = MPI.Prequest.Startall, MPI.Request.Waitall
        copyto, add = np.copyto, np.add
        for k, (reqs, packs, applies) in enumerate(self.steps):
            for dst, src in packs:
                copyto(dst, src)
            if reqs:
                startall(reqs)
                waitall(reqs)
            for dst, src, reduce in applies:
                if reduce:
                    add(dst, src, out=dst)
                else:
                    copyto(dst, src)
            stamps[k] = Wtime()

    def free(self) -> None:
        for r in self._requests:
            r.Free()
        self._requests = []


class MPICollective:
    """MPI's own collective over one group's communicator, on the same input.

    What a rank sends and where MPI's answer lands follow the collective's
    definition (:class:`~collectives_lib.collective.Collective`); which MPI call
    runs it is the one table :attr:`CALLS`."""

    def __init__(self, schedule: Schedule, layout: Layout, gcomm, local: int, init: np.ndarray):
        from mpi4py import MPI
        self.MPI = MPI
        self.s, self.layout, self.comm, self.i, self.init = schedule, layout, gcomm, local, init
        n = schedule.group_size
        S = schedule.num_slots
        off = layout.offsets
        coll = schedule.collective
        self.coll = coll
        self.out = np.full(layout.count, np.nan, dtype=layout.dtype)
        if coll.layout == "pairs":
            K = S // (n * n)
            first = lambda o, d: (o * n + d) * K  # noqa: E731 - first slot of (origin, dest)
            base = int(off[first(local, 0)])
            self.send = init[base:int(off[first(local, n - 1) + K])]
            self.scounts = np.array([off[first(local, d) + K] - off[first(local, d)] for d in range(n)])
            self.sdispls = np.array([off[first(local, d)] - base for d in range(n)])
            self.rranges = [(int(off[first(o, local)]), int(off[first(o, local) + K])) for o in range(n)]
            self.rcounts = np.array([b - a for a, b in self.rranges])
            self.rdispls = np.concatenate([[0], np.cumsum(self.rcounts)[:-1]])
            self.recv = np.empty(int(self.rcounts.sum()), dtype=layout.dtype)
            self.uniform = schedule.weights is None
        elif coll.layout == "blocks" and coll.starts == "owner":     # a rank sends its own block
            K = S // n
            self.send = init[off[local * K]:off[(local + 1) * K]]
        elif coll.ends == "owner":                                   # a rank receives its own block
            K = S // n
            self.block = (int(off[local * K]), int(off[(local + 1) * K]))
            self.recv = np.empty(self.block[1] - self.block[0], dtype=layout.dtype)
        self.mpitype = MPI.DOUBLE if layout.dtype == np.float64 else MPI.FLOAT

    def _allgather(self) -> None:
        self.comm.Allgather(self.send, self.out)

    def _gather(self) -> None:
        self.comm.Gather(self.send, self.out if self.i == self.s.root else None, root=self.s.root)

    def _reduce_scatter(self) -> None:
        self.comm.Reduce_scatter_block(self.init, self.recv, op=self.MPI.SUM)

    def _allreduce(self) -> None:
        self.comm.Allreduce(self.init, self.out, op=self.MPI.SUM)

    def _alltoall(self) -> None:
        if self.uniform:
            self.comm.Alltoall(self.send, self.recv)
        else:
            self.comm.Alltoallv([self.send, self.scounts, self.sdispls, self.mpitype],
                                [self.recv, self.rcounts, self.rdispls, self.mpitype])

    def _bcast(self) -> None:
        if self.i == self.s.root:
            self.out[...] = self.init
        self.comm.Bcast(self.out, root=self.s.root)

    def _reduce(self) -> None:
        self.comm.Reduce(self.init, self.out if self.i == self.s.root else None, op=self.MPI.SUM,
                         root=self.s.root)

    def _send(self) -> None:
        if self.i == self.s.root:
            self.comm.Send(self.init, dest=self.s.dest, tag=7)
        elif self.i == self.s.dest:
            self.comm.Recv(self.out, source=self.s.root, tag=7)

    #: The MPI call that runs each collective (named in :data:`~.schedules.MPI_NAMES`).
    CALLS = {Collective.ALL_GATHER: _allgather, Collective.GATHER: _gather,
             Collective.REDUCE_SCATTER: _reduce_scatter, Collective.ALL_REDUCE: _allreduce,
             Collective.ALL_TO_ALL: _alltoall, Collective.BROADCAST: _bcast,
             Collective.REDUCE: _reduce, Collective.SEND: _send}

    def run(self) -> None:
        self.CALLS[self.coll](self)

    def result(self) -> np.ndarray:
        """MPI's answer laid out like the schedule's buffer (NaN where it says nothing)."""
        if self.coll.layout == "pairs":
            out = np.full(self.layout.count, np.nan, dtype=self.layout.dtype)
            pos = 0
            for a, b in self.rranges:
                out[a:b] = self.recv[pos:pos + b - a]
                pos += b - a
            return out
        if self.coll.ends == "owner":
            out = np.full(self.layout.count, np.nan, dtype=self.layout.dtype)
            a, b = self.block
            out[a:b] = self.recv
            return out
        return self.out


#: Warm-up lasts at least this long (s), and at most this many runs: a few runs of a
#: tiny message take microseconds, too short for the processes to settle.
WARMUP_SECONDS = 0.01
MAX_WARMUP_RUNS = 1000
#: Round trips of 8 bytes before the ping-pong sweep starts.
PINGPONG_WARMUP = 2000


def _warm_up(comm, once, warmup: int) -> None:
    """Call ``once()`` (one untimed run) at least ``warmup`` times and for at least
    :data:`WARMUP_SECONDS`. Rank 0 times the first run and tells every process
    how many more to do, so all run it equally often."""
    from mpi4py import MPI
    if warmup <= 0:
        return
    once()
    t0 = MPI.Wtime()
    once()
    dt = MPI.Wtime() - t0
    runs = None
    if comm.Get_rank() == 0:
        runs = int(min(MAX_WARMUP_RUNS, max(warmup, np.ceil(WARMUP_SECONDS / max(dt, 1e-7)))))
    runs = comm.bcast(runs, root=0)
    for _ in range(runs - 2):
        once()


def _sleep_barrier(comm, pause: float = 0.005) -> None:
    """A barrier that sleeps instead of busy-polling, so that the processes a batch
    of cases does not use leave the cores to those it does. They wake every
    ``pause`` seconds to check; each wake-up can preempt a process that is
    measuring, so the pause is long (it costs at most one pause per batch)."""
    req = comm.Ibarrier()
    while not req.Test():
        time.sleep(pause)


class _Communicators:
    """Communicators of the first P processes, of their first R (the ranks), and of
    each group, made once and reused by every case that needs the same ones
    (making one is a collective call, slow on an oversubscribed machine)."""

    def __init__(self, world):
        self.world = world
        self.cache: dict = {}

    def get(self, sched: Schedule):
        from mpi4py import MPI
        me = self.world.Get_rank()
        P, R = sched.num_participants, sched.num_ranks
        key = ("case", P)
        if key not in self.cache:
            self.cache[key] = self.world.Split(0 if me < P else MPI.UNDEFINED, me)
        comm = self.cache[key]
        if me >= P:
            return comm, MPI.COMM_NULL, None
        key = ("ranks", P, R)
        if key not in self.cache:
            self.cache[key] = comm.Split(0 if me < R else MPI.UNDEFINED, me)
        rcomm = self.cache[key]
        if me >= R:
            return comm, rcomm, None
        if sched.num_groups == 1:
            return comm, rcomm, rcomm
        key = ("groups", P, R, np.asarray(sched.groups).tobytes(), sched.groups.shape)
        if key not in self.cache:
            group, local = sched.local_index
            self.cache[key] = rcomm.Split(int(group[me]), int(local[me]))
        return comm, rcomm, self.cache[key]

    def free(self) -> None:
        from mpi4py import MPI
        for c in reversed(list(self.cache.values())):
            if c != MPI.COMM_NULL:
                c.Free()
        self.cache = {}


def _run_case(world, case: dict, opts: dict, comms: _Communicators) -> list[dict]:
    """Run one schedule at every size on the first participants of ``world``.
    Returns the rows at world rank 0 (elsewhere [])."""
    sched = schedule_from_dict(case["schedule"])
    comm, rcomm, gcomm = comms.get(sched)
    if world.Get_rank() >= sched.num_participants:
        return []
    rows = [_run_size(world, sched, nbytes, case, opts, comm, rcomm, gcomm) for nbytes in case["sizes"]]
    return [r for r in rows if r is not None]


def _run_size(world, sched: Schedule, nbytes: int, case: dict, opts: dict, comm, rcomm,
              gcomm) -> dict | None:
    """Time and check ``sched`` at one size: the row at world rank 0, else None."""
    me = world.Get_rank()
    is_rank = me < sched.num_ranks
    _, local = sched.local_index
    iters, warmup, seed = int(opts["iters"]), int(opts["warmup"]), int(opts["seed"])
    layout = Layout(sched, nbytes, opts["dtype"])
    init = initial_buffer(sched, layout, me, seed)
    all_t, data = _time_schedule(comm, sched, layout, me, init, iters, warmup)
    # MPI's own collective, same input, same timing
    mpi_t = np.zeros(iters)
    builtin = None
    if is_rank:
        if gcomm is not None:
            builtin = MPICollective(sched, layout, gcomm, int(local[me]), init)
        _time_builtin(rcomm, builtin, iters, warmup, mpi_t)
    # correctness: the definition, and MPI's answer
    msg = mpi_msg = ""
    if is_rank:
        want, need = expected_buffer(sched, layout, me, seed)
        msg = compare(sched, layout, data, want, need, f"rank {me}")
        if builtin is not None:
            mpi_msg = compare(sched, layout, builtin.result(), want, need,
                              f"{MPI_NAMES[sched.collective]} at rank {me}")
    checks = comm.gather((msg, mpi_msg), root=0)
    if me != 0:
        return None
    return _row(case, sched, layout, all_t, mpi_t, checks, iters)


def _time_schedule(comm, sched: Schedule, layout: Layout, me: int, init: np.ndarray, iters: int,
                   warmup: int) -> tuple[np.ndarray, np.ndarray]:
    """Run the schedule ``iters`` times after warm-up: per run, the slowest participant's
    total time and step times (``[run, 0]`` and ``[run, 1:]``, at participant 0), and
    this participant's buffer after the last run."""
    from mpi4py import MPI
    K = sched.num_steps
    ex = Executor(comm, sched, layout, me, init)
    data = ex.data
    stamps = np.zeros(K)
    local_t = np.zeros((iters, K + 1))

    def schedule_once() -> float:
        data[...] = init
        comm.Barrier()
        t0 = MPI.Wtime()
        ex.run(stamps, MPI.Wtime)
        return t0

    _warm_up(comm, schedule_once, warmup)
    for j in range(iters):
        t0 = schedule_once()
        t1 = stamps[-1] if K else MPI.Wtime()
        local_t[j, 0] = t1 - t0
        local_t[j, 1:] = np.diff(np.concatenate([[t0], stamps]))
    ex.free()
    all_t = np.zeros_like(local_t)
    comm.Reduce(local_t, all_t, op=MPI.MAX, root=0)
    return all_t, data


def _time_builtin(rcomm, builtin: MPICollective | None, iters: int, warmup: int,
                  mpi_t: np.ndarray) -> None:
    """Time MPI's collective (None on a rank outside every group: it only keeps time)
    like the schedule; the slowest rank's time per run lands in ``mpi_t`` at rank 0."""
    from mpi4py import MPI

    def builtin_once() -> float:
        rcomm.Barrier()
        t0 = MPI.Wtime()
        if builtin is not None:
            builtin.run()
        return t0

    _warm_up(rcomm, builtin_once, warmup)
    loc = np.zeros(iters)
    for j in range(iters):
        t0 = builtin_once()
        loc[j] = MPI.Wtime() - t0
    rcomm.Reduce(loc, mpi_t, op=MPI.MAX, root=0)


def _row(case: dict, sched: Schedule, layout: Layout, all_t: np.ndarray, mpi_t: np.ndarray,
         checks: list, iters: int) -> dict:
    """The table row for one size, from the gathered times and checks."""
    K, R, P = sched.num_steps, sched.num_ranks, sched.num_participants
    errors = [m for m, _ in checks if m]
    mpi_errors = [m for _, m in checks if m]
    med = np.median(all_t, axis=0) if iters else np.full(K + 1, np.nan)
    t = float(med[0])
    tm = float(np.median(mpi_t)) if iters else float("nan")
    factor = sched.busbw_factor()
    return {
        "case": case.get("label", ""), "case_index": int(case.get("index", 0)),
        "collective": sched.collective, "algorithm": sched.algorithm,
        "num_ranks": R, "group_size": sched.group_size, "num_groups": sched.num_groups,
        "participants": P, "emulated_agents": list(sched.agents),
        "steps": K, "size_bytes": layout.nbytes, "count": layout.count,
        # the sizes asked for that run as this one (whole elements, at least one per slot)
        "asked_bytes": case.get("asked", {}).get(str(layout.nbytes), [layout.nbytes]),
        "dtype": layout.dtype.name,
        "time_s": t, "time_min_s": float(all_t[:, 0].min()) if iters else float("nan"),
        "time_max_s": float(all_t[:, 0].max()) if iters else float("nan"),
        "step_times_s": [float(v) for v in med[1:]],
        "mpi": MPI_NAMES[sched.collective], "mpi_time_s": tm,
        # one rank per group moves nothing: its bandwidths do not apply (null, as estimate says)
        "algbw": layout.nbytes / t if t > 0 and sched.group_size > 1 else None,
        "busbw": layout.nbytes / t * factor if t > 0 and sched.group_size > 1 else None,
        "mpi_algbw": layout.nbytes / tm if tm > 0 and sched.group_size > 1 else None,
        "mpi_busbw": layout.nbytes / tm * factor if tm > 0 and sched.group_size > 1 else None,
        "correct": not errors and not mpi_errors,
        "schedule_correct": not errors, "mpi_correct": not mpi_errors,
        "error": "; ".join((errors + mpi_errors)[:3]),
    }


def _pingpong(world, sizes: Sequence[int]) -> list[float]:
    """One-way times (s) between world ranks 0 and 1: half the median round trip."""
    from mpi4py import MPI
    me = world.Get_rank()
    out = []
    if me > 1:
        return out
    peer = 1 - me

    def round_trip(buf) -> None:
        if me == 0:
            world.Send(buf, dest=peer, tag=11)
            world.Recv(buf, source=peer, tag=11)
        else:
            world.Recv(buf, source=peer, tag=11)
            world.Send(buf, dest=peer, tag=11)

    small = np.zeros(8, dtype=np.uint8)
    for _ in range(PINGPONG_WARMUP):  # the first messages after start-up are slow
        round_trip(small)
    for m in sizes:
        buf = np.zeros(max(1, int(m)), dtype=np.uint8)
        reps = int(min(1000, max(20, (1 << 24) // max(1, int(m)))))
        rtt = np.zeros(reps)
        for it in range(reps // 10 + reps):
            t0 = MPI.Wtime()
            round_trip(buf)
            if it >= reps // 10:
                rtt[it - reps // 10] = MPI.Wtime() - t0
        out.append(float(np.median(rtt)) / 2)
    return out


def _worker(payload: dict) -> dict | None:
    """Everything one MPI process does for a run. Returns the results at rank 0."""
    from mpi4py import MPI
    world = MPI.COMM_WORLD
    me = world.Get_rank()
    inject = payload.get("inject") or {}
    if inject.get("fail_rank") == me:
        raise RuntimeError(f"deliberate failure injected at rank {me} (testing)")
    if inject.get("stall_rank") == me:
        time.sleep(float(inject.get("stall_seconds", 3600)))
    need = max([schedule_from_dict(c["schedule"]).num_participants for c in payload["cases"]] + [1])
    if need > world.Get_size():
        raise CollectivesError(
            f"the run needs {need} processes but mpiexec started {world.Get_size()}; "
            f"use mpiexec -n {need}")
    pp = None
    if payload.get("calibrate"):
        if world.Get_size() >= 2:
            times = _pingpong(world, payload["calibrate"])
            pp = {"sizes": list(payload["calibrate"]), "times": times} if me == 0 else None
        _sleep_barrier(world)
    # Cases that need the same number of processes run back to back, so the
    # processes they leave idle wait (asleep) once per such batch, not per case.
    rows: list[dict] = []
    comms = _Communicators(world)
    batches: dict[int, list[dict]] = {}
    for case in payload["cases"]:
        batches.setdefault(schedule_from_dict(case["schedule"]).num_participants, []).append(case)
    for cases in batches.values():
        for case in cases:
            rows += _run_case(world, case, payload, comms)
        _sleep_barrier(world)
    comms.free()
    rows.sort(key=lambda r: r["case_index"])  # stable: sizes stay in order
    hosts = world.gather(MPI.Get_processor_name(), root=0)
    if me != 0:
        return None
    return {
        "world_size": world.Get_size(), "hosts": sorted(set(hosts)),
        "library": MPI.Get_library_version().strip().splitlines()[0],
        "mpi4py": _mpi4py_version(), "pingpong": pp, "rows": rows,
        "iters": int(payload["iters"]), "warmup": int(payload["warmup"]),
    }


def _mpi4py_version() -> str:
    try:
        import mpi4py
        return mpi4py.__version__
    except Exception:  # noqa: BLE001  # pragma: no cover
        return "?"


#: Seconds between two looks at the launcher (:func:`watch_launcher`).
WATCH_INTERVAL = 1.0


def watch_launcher(host: str, pid: int, start: str, interval: float = WATCH_INTERVAL) -> bool:
    """End this process (``os._exit``) as soon as the launcher, process ``pid`` started at
    ``start`` on ``host``, is gone. Only on the launcher's host (elsewhere its pid
    means nothing); returns whether it watches."""
    if host != socket.gethostname():
        return False

    def watch() -> None:
        while True:
            time.sleep(interval)
            entry = read_proc(pid)
            if entry is None or entry.start != start:
                sys.stderr.write(f"{ERROR_MARK} the launcher (process {pid}) is gone; ending\n")
                sys.stderr.flush()
                os._exit(1)

    threading.Thread(target=watch, name="collectives-watch-launcher", daemon=True).start()
    return True


def settle(world, payload: dict) -> None:
    """Once every process has started MPI: remove the names only a start-up needed (MPICH's
    shared-memory segment, the payload file), so that no way of ending leaves them."""
    launcher = payload.get("launcher")
    if launcher:
        watch_launcher(*launcher)
    world.Barrier()  # every process is past MPI_Init: each has mapped the segment, read the payload
    remove_segments(shm_segments(os.getpid()))
    if world.Get_rank() == 0:
        if payload.get("hydra"):    # Hydra's topology file, read only while starting (launch.py)
            remove_hydra_files(*payload["hydra"])
        for path in payload.get("remove", ()):  # the file, then its directory
            try:
                if os.path.isdir(path):
                    os.rmdir(path)
                else:
                    os.unlink(path)
            except OSError:
                pass


def serve(payload: dict, *, emit: bool) -> dict | None:
    """Run the worker under mpiexec; on any error print it (marked) and abort all ranks."""
    from mpi4py import MPI
    me = MPI.COMM_WORLD.Get_rank()
    try:
        settle(MPI.COMM_WORLD, payload)
        result = _worker(payload)
    except BaseException as exc:  # noqa: BLE001 - any failure must take the whole run down
        detail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        first = str(exc).splitlines()[0] if str(exc) else ""
        sys.stderr.write(f"{ERROR_MARK} rank {me}: {type(exc).__name__}: {first}\n{detail}")
        sys.stderr.flush()
        MPI.COMM_WORLD.Abort(1)
        raise  # pragma: no cover - Abort does not return
    if emit and me == 0:
        sys.stdout.write(RESULT_MARK + " " + json.dumps(result) + "\n")
        sys.stdout.flush()
    return result
