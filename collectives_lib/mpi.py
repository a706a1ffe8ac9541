"""Run the library's schedules over real MPI ranks, check them, and time them.

A :class:`~collectives_lib.schedule.Schedule` is data: steps of transfers, each
moving a box of slots from one participant to another. This module executes
that data as point-to-point MPI messages between processes, on real numpy
buffers, and compares the result with the collective's definition and with
MPI's own collective (``MPI_Allgather``, ``MPI_Reduce_scatter_block``,
``MPI_Allreduce``, ``MPI_Alltoall``, ``MPI_Bcast``, ``MPI_Reduce``,
``MPI_Gather``; a send is compared with ``MPI_Send``/``MPI_Recv``) on the same
input. It also times both,
and fits the alpha-beta model to a ping-pong so that the simulator can predict
what was measured.

Three ways in:

* ``python -m collectives_lib run --np 4 --collective all_reduce --algorithm ring -b 1K -e 1M``
  (or ``python -m collectives_lib.mpi ...`` with the same options) launches
  ``mpiexec`` itself and prints a table like nccl-tests' ``all_reduce_perf``.
  Under ``mpiexec`` already (``mpiexec -n 4 python -m collectives_lib run ...``,
  or with ``--hostfile`` on a cluster) it runs in place.
* :func:`run` and :func:`run_collective` from Python (a notebook): they launch
  ``mpiexec``, wait for it with a timeout, and return a :class:`RunResult`.
* :func:`calibrate` measures a ping-pong between two processes and fits
  ``t(m) = alpha + beta m``; :meth:`Calibration.predict` turns the fit into the
  simulator's prediction for any schedule.

How a schedule runs. Every participant keeps a flat buffer holding the array's
slots one after another (``num_slots x elements_per_slot``, float64 or
float32). In each step it posts a receive for every transfer that ends at it
and a send for every transfer that starts at it (the box's slots, packed into
one contiguous message when they are not contiguous already), waits for all of
them, and only then applies what arrived: a copy overwrites the slots, a
reduce adds into them (:class:`Executor`; the requests are MPI persistent
requests set up once per size, so a step costs little Python). All sends of a step therefore carry what the sender held
when the step began, exactly as :func:`collectives_lib.replay.apply_step` says.
Messages are matched by (source, tag) with the tag counting transfers between
the same pair within the step, so several transfers between two ranks in one
step are fine. Participants that are not ranks (the reducing switch of the
SHARP and multicast algorithms) are *emulated*: each gets one extra MPI
process, which receives, adds and forwards like the switch would. Imbalanced
all-to-all (``schedule.weights``) is supported: each slot gets a number of
elements proportional to its weight (largest-remainder rounding, so some may
get none), and MPI's reference is ``MPI_Alltoallv``.

What is checked. Inputs are pseudo-random non-zero integers in [-1000, 1000],
a hash of (rank, element), so every rank can compute every other rank's input
and sums are exact in float32 and float64 alike. Slots a participant does not
hold at the start are zero, as in :func:`~collectives_lib.replay.initial_state`
(so a reduce into an empty slot acts as a copy, which is how the emulated
switch of SHARP collects its sum); since no input is zero, a chunk that never
arrives, a contribution counted twice or one left out all change the result.
At the end every rank compares its
buffer with the collective's definition (as in
:func:`collectives_lib.replay.expected_output`: the slots the definition fixes
for that rank) and compares MPI's own collective on the same input with the
same definition. A wrong result gives ``correct = False`` and a message naming
the rank and the chunk, and the command exits non-zero; its time is reported
but marked.

What is timed. After untimed warm-up runs (at least ``warmup`` of them, and
at least 10 ms of them), ``iters`` timed runs; before each, the buffer is
reset and the ranks meet in a barrier. A run's time is the
slowest rank's (``MPI_Wtime`` after the barrier to the end of its last step);
the table shows the median over runs. Per-step times (the slowest rank's, per
step) are kept too. MPI's collective is timed the same way on the same input.

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

Introduced in the chapter *Measure it yourself*.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from .errors import CollectivesError
from .analysis import fit_alpha_beta
from .collective import collective as as_collective
from .schedule import COPY, REDUCE, Schedule, Step, Traffic, expand_box
from .units import format_rate, format_time, parse_size

#: What to install when mpi4py or mpiexec is missing.
INSTALL_HINT = "pip install mpi4py mpich"

#: Ping-pong sizes for :func:`calibrate` (bytes): 8 B to 2 MiB, factor 4.
CALIBRATION_SIZES = tuple(8 * 4 ** k for k in range(10))


def calibration_sizes(largest: int) -> tuple[int, ...]:
    """Ping-pong sizes for a run whose largest array is ``largest`` bytes: 8 B,
    32 B, ... (factor 4) up to ``largest``, and at least to 32 KiB so that both
    of MPI's protocols (eager and rendezvous) are sampled.

    Calibrate over the sizes you measure: the time per byte of shared memory is
    not one number (caches, and the protocol switch), so a line fitted to
    messages far larger than the run's would predict it worse.
    """
    top = max(int(largest), 32 * 1024)
    return tuple(8 * 4 ** k for k in range(40) if 8 * 4 ** k <= top)


DTYPES = ("float64", "float32")

#: MPI's collective that each of the library's collectives is compared with.
MPI_NAMES = {
    "all_gather": "MPI_Allgather",
    "reduce_scatter": "MPI_Reduce_scatter_block",
    "all_reduce": "MPI_Allreduce",
    "all_to_all": "MPI_Alltoall",
    "broadcast": "MPI_Bcast",
    "reduce": "MPI_Reduce",
    "send": "MPI_Send/MPI_Recv",
    "gather": "MPI_Gather",
}

_RESULT_MARK = "@@collectives-mpi-result@@"
_ERROR_MARK = "@@collectives-mpi-error@@"
_LAUNCH_ENV = ("PMI_RANK", "PMI_SIZE", "PMI_FD", "PMI_PORT", "PMIX_RANK", "OMPI_COMM_WORLD_SIZE",
               "OMPI_COMM_WORLD_RANK", "MPI_LOCALRANKID", "MPI_LOCALNRANKS")


class MPIUnavailable(CollectivesError):
    """mpi4py or mpiexec is missing: the message says what to install."""


class MPIRunError(CollectivesError):
    """The MPI run failed, hung past its timeout, or a rank raised an error."""


# ---------------------------------------------------------------------------
# Schedules as plain arrays (to ship to the ranks, or to save to a file)
# ---------------------------------------------------------------------------

def schedule_to_dict(schedule: Schedule) -> dict:
    """Everything the ranks need to execute ``schedule``, as plain values and arrays.

    Lazily computed chunks are materialised; explicit paths, lanes and
    descriptions (which only matter for timing and drawing) are kept.
    """
    steps = []
    for step in schedule.steps:
        t = step.traffic
        steps.append({
            "src": np.asarray(t.src, dtype=np.int64), "dst": np.asarray(t.dst, dtype=np.int64),
            "op": np.asarray(t.op, dtype=np.uint8), "fraction": np.asarray(t.fraction, dtype=float),
            "path": None if t.path is None else np.asarray(t.path, dtype=np.int64),
            "lane": None if t.lane is None else np.asarray(t.lane, dtype=np.int64),
            "boxes": np.asarray(step.boxes, dtype=np.int64).reshape(len(t), len(schedule.slot_shape), 2),
            "stage": step.stage,
        })
    return {
        "collective": schedule.collective, "algorithm": schedule.algorithm,
        "num_ranks": int(schedule.num_ranks), "groups": np.asarray(schedule.groups, dtype=np.int64),
        "group_shape": tuple(int(v) for v in schedule.group_shape),
        "slot_shape": tuple(int(v) for v in schedule.slot_shape),
        "agents": tuple(schedule.agents), "routing": schedule.routing,
        "pipelined": bool(schedule.pipelined), "root": schedule.root, "dest": schedule.dest,
        "weights": None if schedule.weights is None else np.asarray(schedule.weights, dtype=float),
        "paths": tuple(tuple(int(v) for v in p) for p in schedule.paths),
        "description": schedule.description, "steps": steps,
    }


def schedule_from_dict(d: dict) -> Schedule:
    """Inverse of :func:`schedule_to_dict`."""
    steps = tuple(
        Step(Traffic(s["src"], s["dst"], s["op"], s["fraction"], s.get("path"), s.get("lane")),
             s["boxes"], s.get("stage", ""))
        for s in d["steps"])
    return Schedule(
        collective=d["collective"], algorithm=d["algorithm"], num_ranks=int(d["num_ranks"]),
        groups=np.asarray(d["groups"], dtype=np.int64), group_shape=tuple(d["group_shape"]),
        slot_shape=tuple(d["slot_shape"]), steps=steps, agents=tuple(d.get("agents", ())),
        routing=d.get("routing", "neighbor"), pipelined=bool(d.get("pipelined", False)),
        root=d.get("root"), dest=d.get("dest"), weights=d.get("weights"),
        paths=tuple(d.get("paths", ())), description=d.get("description", ""),
    )


def save_schedule(schedule: Schedule, path) -> Path:
    """Write ``schedule`` to ``path`` as a numpy ``.npz`` archive (arrays and one JSON
    header, no pickles), for ``python -m collectives_lib run --schedule PATH``."""
    path = Path(path)
    d = schedule_to_dict(schedule)
    arrays: dict[str, np.ndarray] = {"groups": d["groups"]}
    if d["weights"] is not None:
        arrays["weights"] = d["weights"]
    stages = []
    for k, st in enumerate(d["steps"]):
        stages.append(st["stage"])
        for key in ("src", "dst", "op", "fraction", "boxes", "path", "lane"):
            if st[key] is not None:
                arrays[f"step{k}.{key}"] = st[key]
    meta = {key: d[key] for key in ("collective", "algorithm", "num_ranks", "group_shape",
                                    "slot_shape", "agents", "routing", "pipelined", "root",
                                    "dest", "paths", "description")}
    meta["stages"] = stages
    arrays["header"] = np.array(json.dumps(meta))
    with open(path, "wb") as f:
        np.savez_compressed(f, **arrays)
    return path


def load_schedule(path) -> Schedule:
    """Read a schedule written by :func:`save_schedule`."""
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["header"]))
            d = dict(meta, groups=z["groups"], weights=z["weights"] if "weights" in z else None)
            d["steps"] = [
                {key: (z[f"step{k}.{key}"] if f"step{k}.{key}" in z else None)
                 for key in ("src", "dst", "op", "fraction", "boxes", "path", "lane")}
                | {"stage": stage}
                for k, stage in enumerate(meta["stages"])]
        return schedule_from_dict(d)
    except FileNotFoundError:
        raise CollectivesError(f"schedule file {str(path)!r} does not exist") from None
    except Exception as exc:  # noqa: BLE001 - any unreadable file is the same user error
        raise CollectivesError(
            f"schedule file {str(path)!r} is not a schedule written by "
            f"collectives_lib.mpi.save_schedule ({type(exc).__name__}: {exc})") from None


def validate(schedule: Schedule) -> None:
    """Raise :class:`CollectivesError` unless ``schedule`` can be executed as messages:
    participants in range, no transfer to itself, boxes inside the slot grid.

    Whether it computes its collective is *not* checked here: that is what the
    run finds out.
    """
    if schedule.collective not in MPI_NAMES:
        raise CollectivesError(f"collective {schedule.collective!r} cannot run over MPI here; "
                               f"supported: {', '.join(MPI_NAMES)}")
    P = schedule.num_participants
    grid = np.asarray(schedule.slot_shape, dtype=np.int64)
    for k, step in enumerate(schedule.steps):
        t = step.traffic
        bad = (t.src < 0) | (t.src >= P) | (t.dst < 0) | (t.dst >= P)
        if bad.any():
            i = int(np.nonzero(bad)[0][0])
            raise CollectivesError(
                f"step {k + 1}: transfer {int(t.src[i])} -> {int(t.dst[i])} names a participant "
                f"outside 0..{P - 1}")
        same = t.src == t.dst
        if same.any():
            i = int(np.nonzero(same)[0][0])
            raise CollectivesError(f"step {k + 1}: participant {int(t.src[i])} sends to itself")
        if not np.isin(t.op, (COPY, REDUCE)).all():
            raise CollectivesError(f"step {k + 1}: operation codes must be 0 (copy) or 1 (reduce)")
        boxes = step.boxes
        if len(t) and boxes.shape != (len(t), len(grid), 2):
            raise CollectivesError(
                f"step {k + 1}: chunks have shape {boxes.shape}, expected {(len(t), len(grid), 2)}")
        if len(t) and ((boxes[:, :, 0] < 0) | (boxes[:, :, 0] >= grid)
                       | (boxes[:, :, 1] < 1) | (boxes[:, :, 1] > grid)).any():
            raise CollectivesError(
                f"step {k + 1}: a chunk lies outside the slot grid {schedule.slot_shape}")
    if schedule.collective in ("broadcast", "reduce", "send", "gather") and schedule.root is None:
        raise CollectivesError(f"a {schedule.collective} schedule needs a root")


# ---------------------------------------------------------------------------
# Buffers: slots laid out one after another
# ---------------------------------------------------------------------------

class Layout:
    """Where each slot's elements live in a participant's flat buffer.

    Uniform schedules give every slot ``elements_per_slot`` elements, so the
    buffer is a ``(num_slots, elements_per_slot)`` array; ``nbytes`` is rounded
    down to a multiple of ``num_slots * itemsize`` (at least one element per
    slot), as nccl-tests rounds sizes. With ``schedule.weights`` (imbalanced
    all-to-all) slot ``s`` gets about ``weights[s] * count`` elements.
    """

    def __init__(self, schedule: Schedule, nbytes: int, dtype: str = "float64"):
        self.dtype = np.dtype(dtype)
        S = schedule.num_slots
        isz = self.dtype.itemsize
        if schedule.weights is None:
            per_slot = max(1, int(nbytes) // (isz * S))
            self.counts = np.full(S, per_slot, dtype=np.int64)
            self.elements_per_slot = per_slot
        else:
            total = max(1, int(nbytes) // isz)
            self.counts = _apportion(np.asarray(schedule.weights, dtype=float).ravel(), total)
            self.elements_per_slot = None
        self.offsets = np.concatenate([[0], np.cumsum(self.counts)]).astype(np.int64)
        self.count = int(self.offsets[-1])
        self.nbytes = self.count * isz

    def ranges(self, slots: Iterable[int]) -> tuple[list[tuple[int, int]], int]:
        """Element ranges of ``slots`` in the order given (adjacent ones merged), and
        their total length. Sender and receiver both use the box's slot order."""
        out: list[list[int]] = []
        n = 0
        for s in slots:
            a, b = int(self.offsets[s]), int(self.offsets[s + 1])
            if a == b:
                continue
            if out and out[-1][1] == a:
                out[-1][1] = b
            else:
                out.append([a, b])
            n += b - a
        return [(a, b) for a, b in out], n

    def slot_of(self, element: int) -> int:
        return int(np.searchsorted(self.offsets, element, side="right") - 1)


def _apportion(weights: np.ndarray, total: int) -> np.ndarray:
    """Integers proportional to ``weights`` summing to ``total`` (largest remainders)."""
    w = np.clip(weights, 0, None)
    exact = w / w.sum() * total
    counts = np.floor(exact).astype(np.int64)
    short = total - int(counts.sum())
    if short > 0:
        order = np.argsort(-(exact - counts), kind="stable")
        counts[order[:short]] += 1
    return counts


def rounded_size(schedule: Schedule, nbytes: int, dtype: str = "float64") -> int:
    """The size (bytes) that actually runs for a requested ``nbytes``."""
    return Layout(schedule, nbytes, dtype).nbytes


# ---------------------------------------------------------------------------
# Inputs and the collective's definition, per rank
# ---------------------------------------------------------------------------

_M1 = np.uint64(0x9E3779B97F4A7C15)
_M2 = np.uint64(0xBF58476D1CE4E5B9)
_M3 = np.uint64(0x94D049BB133111EB)


def input_values(rank: int, count: int, seed: int = 0, dtype: str = "float64") -> np.ndarray:
    """Rank ``rank``'s input: ``count`` pseudo-random non-zero integers in [-1000, 1000].

    A hash of (seed, rank, element index), so any rank can compute any other
    rank's input without communicating, and sums of up to 16384 of them are
    exact in float32.
    """
    h = np.arange(count, dtype=np.uint64) * _M1
    h += np.uint64((rank + 1) * 0x632BE59BD9B4E019 + seed * 0x85EBCA77 & 0xFFFFFFFFFFFFFFFF)
    h ^= h >> np.uint64(30)
    h *= _M2
    h ^= h >> np.uint64(27)
    h *= _M3
    h ^= h >> np.uint64(31)
    v = (h % np.uint64(2000)).astype(np.int64) - 1000
    v[v >= 0] += 1
    return v.astype(dtype)


def held_slots(schedule: Schedule, participant: int) -> np.ndarray:
    """Which slots ``participant`` holds before step 1 (as in replay.initial_state)."""
    S = schedule.num_slots
    if participant >= schedule.num_ranks:
        return np.zeros(S, dtype=bool)
    _, local = schedule.local_index
    i = int(local[participant])
    if i < 0:
        return np.zeros(S, dtype=bool)
    owner, _ = schedule.slot_roles
    return schedule.collective.start_mask(owner, np.array([i]), schedule.root)[0]


def initial_buffer(schedule: Schedule, layout: Layout, participant: int, seed: int = 0) -> np.ndarray:
    """``participant``'s buffer before step 1: its input where it holds data, zero
    elsewhere (as in replay.initial_state: a reduce into an empty slot is a copy)."""
    held = held_slots(schedule, participant)
    buf = np.zeros(layout.count, dtype=layout.dtype)
    if held.any():
        x = input_values(participant, layout.count, seed, layout.dtype.name)
        mask = np.repeat(held, layout.counts)
        buf[mask] = x[mask]
    return buf


def expected_buffer(schedule: Schedule, layout: Layout, rank: int, seed: int = 0
                    ) -> tuple[np.ndarray, np.ndarray]:
    """What the collective's definition says ``rank`` ends with: ``(values, required)``,
    ``required`` a mask over slots (the slots the definition fixes for this rank),
    ``values`` NaN outside them. The same definition as
    :func:`collectives_lib.replay.expected_output`, for one rank and any size."""
    S = schedule.num_slots
    values = np.full(layout.count, np.nan, dtype=layout.dtype)
    group, local = schedule.local_index
    if rank >= schedule.num_ranks or local[rank] < 0:
        return values, np.zeros(S, dtype=bool)
    g, i = int(group[rank]), int(local[rank])
    members = schedule.groups[g]
    owner, dest = schedule.slot_roles
    coll = schedule.collective
    origin = coll.source(owner, schedule.root)
    need = coll.end_mask(owner, dest, np.array([i]), schedule.root, schedule.dest)[0]
    if not need.any():
        return values, need
    dt = layout.dtype.name
    if origin is None:
        total = np.zeros(layout.count, dtype=np.float64)
        for m in members:
            total += input_values(int(m), layout.count, seed, "float64")
        mask = np.repeat(need, layout.counts)
        values[mask] = total[mask]
    else:
        for o in np.unique(origin[need]).tolist():
            sel = need & (origin == o)
            mask = np.repeat(sel, layout.counts)
            values[mask] = input_values(int(members[o]), layout.count, seed, dt)[mask]
    return values, need


def _compare(schedule: Schedule, layout: Layout, got: np.ndarray, want: np.ndarray,
             need: np.ndarray, who: str) -> str:
    """'' if ``got`` equals ``want`` on the required slots, else a one-line reason."""
    mask = np.repeat(need, layout.counts)
    if np.array_equal(got[mask], want[mask]):
        return ""
    bad = np.nonzero(mask & ~(got == want))[0]
    e = int(bad[0])
    s = layout.slot_of(e)
    box = [(int(c), 1) for c in np.unravel_index(s, schedule.slot_shape)]
    g = got[e]
    what = "0, its value before step 1" if g == 0 else ("NaN" if np.isnan(g) else f"{g:g}")
    return (f"{who} ends with the wrong values in {schedule.chunk_label(box)} "
            f"(element {e - int(layout.offsets[s])} of slot {s}: expected {want[e]:g}, got {what})")


# ---------------------------------------------------------------------------
# The executor (runs inside MPI processes; mpi4py is imported there)
# ---------------------------------------------------------------------------

@dataclass
class _StepPlan:
    recvs: list   # (src, tag, ranges, n, op, arena offset)
    sends: list   # (dst, tag, ranges, n, arena offset or -1 when sent from the buffer)


def _tags(src: np.ndarray, dst: np.ndarray, P: int) -> np.ndarray:
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


def plan(schedule: Schedule, layout: Layout, me: int) -> tuple[list[_StepPlan], int, int]:
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
            tags = _tags(t.src, t.dst, P)
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
        steps.append(_StepPlan(recvs, sends))
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


class _Builtin:
    """MPI's own collective over one group's communicator, on the same input."""

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
        if coll in ("all_gather", "gather"):
            K = S // n
            self.send = init[off[local * K]:off[(local + 1) * K]]
        elif coll == "reduce_scatter":
            K = S // n
            self.block = (int(off[local * K]), int(off[(local + 1) * K]))
            self.recv = np.empty(self.block[1] - self.block[0], dtype=layout.dtype)
        elif coll == "all_to_all":
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
        self.mpitype = MPI.DOUBLE if layout.dtype == np.float64 else MPI.FLOAT

    def run(self) -> None:
        MPI, c, coll = self.MPI, self.comm, self.coll
        if coll == "all_gather":
            c.Allgather(self.send, self.out)
        elif coll == "gather":
            c.Gather(self.send, self.out if self.i == self.s.root else None, root=self.s.root)
        elif coll == "reduce_scatter":
            c.Reduce_scatter_block(self.init, self.recv, op=MPI.SUM)
        elif coll == "all_reduce":
            c.Allreduce(self.init, self.out, op=MPI.SUM)
        elif coll == "all_to_all":
            if self.uniform:
                c.Alltoall(self.send, self.recv)
            else:
                c.Alltoallv([self.send, self.scounts, self.sdispls, self.mpitype],
                            [self.recv, self.rcounts, self.rdispls, self.mpitype])
        elif coll == "broadcast":
            if self.i == self.s.root:
                self.out[...] = self.init
            c.Bcast(self.out, root=self.s.root)
        elif coll == "reduce":
            c.Reduce(self.init, self.out if self.i == self.s.root else None, op=MPI.SUM,
                     root=self.s.root)
        elif coll == "send":
            if self.i == self.s.root:
                c.Send(self.init, dest=self.s.dest, tag=7)
            elif self.i == self.s.dest:
                c.Recv(self.out, source=self.s.root, tag=7)

    def result(self) -> np.ndarray:
        """MPI's answer laid out like the schedule's buffer (NaN where it says nothing)."""
        if self.coll == "reduce_scatter":
            out = np.full(self.layout.count, np.nan, dtype=self.layout.dtype)
            a, b = self.block
            out[a:b] = self.recv
            return out
        if self.coll == "all_to_all":
            out = np.full(self.layout.count, np.nan, dtype=self.layout.dtype)
            pos = 0
            for a, b in self.rranges:
                out[a:b] = self.recv[pos:pos + b - a]
                pos += b - a
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
    from mpi4py import MPI
    me = world.Get_rank()
    sched = schedule_from_dict(case["schedule"])
    P, R = sched.num_participants, sched.num_ranks
    rows: list[dict] = []
    comm, rcomm, gcomm = comms.get(sched)
    if me >= P:
        return rows
    is_rank = me < R
    group, local = sched.local_index
    iters, warmup, seed = int(opts["iters"]), int(opts["warmup"]), int(opts["seed"])
    K = sched.num_steps
    for nbytes in case["sizes"]:
        layout = Layout(sched, nbytes, opts["dtype"])
        init = initial_buffer(sched, layout, me, seed)
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
        # MPI's own collective, same input, same timing
        mpi_t = np.zeros(iters)
        builtin = None
        if is_rank:
            if gcomm is not None:
                builtin = _Builtin(sched, layout, gcomm, int(local[me]), init)
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
        # correctness: the definition, and MPI's answer
        msg = mpi_msg = ""
        if is_rank:
            want, need = expected_buffer(sched, layout, me, seed)
            msg = _compare(sched, layout, data, want, need, f"rank {me}")
            if builtin is not None:
                mpi_msg = _compare(sched, layout, builtin.result(), want, need,
                                   f"{MPI_NAMES[sched.collective]} at rank {me}")
        checks = comm.gather((msg, mpi_msg), root=0)
        if me == 0:
            errors = [m for m, _ in checks if m]
            mpi_errors = [m for _, m in checks if m]
            med = np.median(all_t, axis=0) if iters else np.full(K + 1, np.nan)
            t = float(med[0])
            tm = float(np.median(mpi_t)) if iters else float("nan")
            factor = sched.busbw_factor()
            rows.append({
                "case": case.get("label", ""), "case_index": int(case.get("index", 0)),
                "collective": sched.collective, "algorithm": sched.algorithm,
                "num_ranks": R, "group_size": sched.group_size, "num_groups": sched.num_groups,
                "participants": P, "emulated_agents": list(sched.agents),
                "steps": K, "size_bytes": layout.nbytes, "count": layout.count,
                "dtype": layout.dtype.name,
                "time_s": t, "time_min_s": float(all_t[:, 0].min()) if iters else float("nan"),
                "time_max_s": float(all_t[:, 0].max()) if iters else float("nan"),
                "step_times_s": [float(v) for v in med[1:]],
                "mpi": MPI_NAMES[sched.collective], "mpi_time_s": tm,
                "algbw": layout.nbytes / t if t > 0 else float("inf"),
                "busbw": layout.nbytes / t * factor if t > 0 else float("inf"),
                "mpi_algbw": layout.nbytes / tm if tm > 0 else float("inf"),
                "mpi_busbw": layout.nbytes / tm * factor if tm > 0 else float("inf"),
                "correct": not errors and not mpi_errors,
                "schedule_correct": not errors, "mpi_correct": not mpi_errors,
                "error": "; ".join((errors + mpi_errors)[:3]),
            })
    return rows


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


def _serve(payload: dict, *, emit: bool) -> dict | None:
    """Run the worker under mpiexec; on any error print it (marked) and abort all ranks."""
    from mpi4py import MPI
    me = MPI.COMM_WORLD.Get_rank()
    try:
        result = _worker(payload)
    except BaseException as exc:  # noqa: BLE001 - any failure must take the whole run down
        detail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        first = str(exc).splitlines()[0] if str(exc) else ""
        sys.stderr.write(f"{_ERROR_MARK} rank {me}: {type(exc).__name__}: {first}\n{detail}")
        sys.stderr.flush()
        MPI.COMM_WORLD.Abort(1)
        raise  # pragma: no cover - Abort does not return
    if emit and me == 0:
        sys.stdout.write(_RESULT_MARK + " " + json.dumps(result) + "\n")
        sys.stdout.flush()
    return result


# ---------------------------------------------------------------------------
# Calibration: the alpha-beta model fitted to a ping-pong
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Calibration:
    """A ping-pong between two MPI processes and the alpha-beta fit to it.

    ``alpha`` (s) is the one-way latency of a message, ``beta`` (s/byte) the
    time per byte, ``bandwidth = 1 / beta`` (bytes/s).
    """

    alpha: float
    beta: float
    sizes: tuple[int, ...]
    times: tuple[float, ...]
    method: str
    library: str = ""
    processes: int = 2

    @property
    def bandwidth(self) -> float:
        return 1.0 / self.beta

    def model(self, nbytes):
        """The fitted line: ``alpha + beta * nbytes`` (s)."""
        return self.alpha + self.beta * np.asarray(nbytes, dtype=float)

    def relative_residuals(self) -> np.ndarray:
        t = np.asarray(self.times)
        return (self.model(self.sizes) - t) / t

    def topology(self, num_ranks: int):
        """The machine as the simulator sees it: ``Switch(N, bandwidth=1/beta, latency=alpha/2)``.

        Every message between two processes crosses two links of a switch (up
        and down), and the simulator adds each link's latency once and each
        transfer's bandwidth term once, so a single message of ``m`` bytes is
        predicted to take exactly ``alpha + beta m``: the line fitted to the
        ping-pong. (``overhead=alpha`` per step would agree for one message but
        charge steps, not messages; the per-hop latency keeps the topology
        self-contained.) What a switch adds beyond the ping-pong is contention:
        a process sending to k others in one step shares its uplink k ways.
        """
        from .topology import Switch
        return Switch(int(num_ranks), bandwidth=self.bandwidth, latency=self.alpha / 2)

    def predict(self, schedule: Schedule, sizes) -> np.ndarray:
        """Predicted times (s) of ``schedule`` for each size in ``sizes`` (bytes)."""
        from .simulate import simulate_sizes
        return simulate_sizes(schedule, self.topology(schedule.num_ranks),
                              np.asarray(sizes, dtype=float))

    def __str__(self) -> str:
        return (f"alpha = {format_time(self.alpha)}, beta = {self.beta:.3g} s/B "
                f"(bandwidth {format_rate(self.bandwidth)}), {self.method}")


def _calibration_from(pp: dict | None, library: str) -> Calibration | None:
    if not pp:
        return None
    alpha, beta, method = fit_alpha_beta(pp["sizes"], pp["times"])
    return Calibration(alpha, beta, tuple(int(s) for s in pp["sizes"]),
                       tuple(float(t) for t in pp["times"]), method, library)


# ---------------------------------------------------------------------------
# Launching mpiexec
# ---------------------------------------------------------------------------

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


def _process_table() -> dict[int, tuple[int, str]]:
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


def _descendants(pid: int) -> list[tuple[int, str]]:
    """(pid, start time) of every process below ``pid``."""
    table = _process_table()
    children: dict[int, list[int]] = {}
    for p, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(p)
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append((c, table[c][1]))
            todo.append(c)
    return out


def _kill_tree(proc: subprocess.Popen, grace: float = 3.0) -> None:
    """Stop mpiexec, its proxies and every rank.

    mpiexec runs in its own process group (``start_new_session``), but Hydra
    puts each proxy and each rank in a session of its own, so killing the group
    alone would orphan the ranks if mpiexec could not clean up. So: note every
    descendant, SIGTERM the group (Hydra forwards it and cleans up), wait
    ``grace`` seconds, then
    SIGKILL whatever is left of the noted processes (checking each one's start
    time, so that a recycled process id is never hit).
    """
    tree = _descendants(proc.pid)
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
    now = _process_table()
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


def _first_error(stderr: str) -> str:
    """The failing rank's error from the workers' stderr, with its traceback."""
    lines = stderr.splitlines()
    for i, line in enumerate(lines):
        if _ERROR_MARK in line:
            head = line.split(_ERROR_MARK, 1)[1].strip()
            rest = []
            for ln in lines[i + 1:]:
                if _ERROR_MARK in ln or ln.startswith("Abort(") or ln.startswith("==="):
                    break
                rest.append(ln)
            return head + ("\n" + "\n".join(rest[-12:]) if rest else "")
    return ""


def _launch(payload: dict, np_: int, *, timeout: float, hostfile=None, mpiexec_args=(),
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
    pkg_parent = str(Path(__file__).resolve().parent.parent)
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
            _kill_tree(proc)
            try:
                proc.communicate(timeout=10)
            except subprocess.TimeoutExpired:  # pragma: no cover - a process we never saw
                pass
            raise MPIRunError(
                f"the MPI run ({np_} processes) did not finish within {timeout:g} s and was "
                f"stopped, every process killed; a schedule that deadlocks, a rank that "
                f"waits forever, or too small a --timeout for this machine") from None
        except BaseException:
            _kill_tree(proc)
            raise
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
    result = None
    for line in out.splitlines():
        if line.startswith(_RESULT_MARK):
            result = json.loads(line[len(_RESULT_MARK):])
    if proc.returncode != 0 or result is None:
        why = _first_error(err)
        if why:
            raise MPIRunError(f"the MPI run failed: {why}")
        tail = "\n".join((err.strip() or out.strip()).splitlines()[-15:])
        raise MPIRunError(f"the MPI run failed (mpiexec exit code {proc.returncode}):\n{tail}")
    return result


# ---------------------------------------------------------------------------
# The Python API
# ---------------------------------------------------------------------------

@dataclass
class RunResult:
    """What a run measured: one row per (schedule, size), and the calibration."""

    rows: list[dict]
    calibration: Calibration | None = None
    library: str = ""
    world_size: int = 0
    hosts: list[str] = field(default_factory=list)
    iters: int = 0
    warmup: int = 0

    @property
    def ok(self) -> bool:
        """Every schedule computed its collective (and MPI's collective agreed)."""
        return all(r["correct"] for r in self.rows)

    def select(self, algorithm: str | None = None, **match) -> list[dict]:
        """Rows of one algorithm (and matching other keys, e.g. ``num_ranks=4``)."""
        return [r for r in self.rows
                if (algorithm is None or r["algorithm"] == algorithm)
                and all(r.get(k) == v for k, v in match.items())]

    def table(self, *, compact: bool = False) -> str:
        """The nccl-tests style table (:func:`format_table`)."""
        return format_table(self, compact=compact)

    def as_dict(self) -> dict:
        cal = None
        if self.calibration is not None:
            c = self.calibration
            cal = {"alpha_s": c.alpha, "beta_s_per_byte": c.beta, "bandwidth": c.bandwidth,
                   "method": c.method, "sizes": list(c.sizes), "times_s": list(c.times)}
        return {"library": self.library, "world_size": self.world_size, "hosts": self.hosts,
                "iters": self.iters, "warmup": self.warmup, "calibration": cal, "rows": self.rows,
                "ok": self.ok}


def _prepare(schedules: Sequence[Schedule], sizes, dtype: str) -> list[dict]:
    if dtype not in DTYPES:
        raise CollectivesError(f"dtype {dtype!r} is not supported; use one of {', '.join(DTYPES)}")
    sizes = [parse_size(s) for s in (sizes if np.iterable(sizes) and not isinstance(sizes, str) else [sizes])]
    if not sizes:
        raise CollectivesError("give at least one size")
    cases = []
    for index, s in enumerate(schedules):
        if not isinstance(s, Schedule):
            raise CollectivesError(f"expected a Schedule, got {type(s).__name__}")
        validate(s)
        actual = sorted(set(rounded_size(s, n, dtype) for n in sizes))
        cases.append({"schedule": schedule_to_dict(s), "sizes": actual, "index": index,
                      "label": f"{s.algorithm} {s.collective} N={s.num_ranks}"})
    return cases


def _finish(result: dict, calibration: Calibration | None, predict: bool,
            schedules: Sequence[Schedule]) -> RunResult:
    cal = calibration or _calibration_from(result.get("pingpong"), result.get("library", ""))
    rows = result["rows"]
    if cal is not None and predict:
        for r in rows:
            try:
                p = float(cal.predict(schedules[r["case_index"]], [r["size_bytes"]])[0])
            except CollectivesError:  # a participant the Switch model has no place for
                p = float("nan")
            r["predicted_s"] = p
            r["measured_over_predicted"] = r["time_s"] / p if p > 0 else float("nan")
    return RunResult(rows, cal, result.get("library", ""), int(result.get("world_size", 0)),
                     list(result.get("hosts", [])), int(result.get("iters", 0)),
                     int(result.get("warmup", 0)))


def run(schedules, sizes, *, iters: int = 20, warmup: int = 5, dtype: str = "float64",
        calibrate: bool | Calibration = False, processes: int | None = None,
        timeout: float = 300.0, hostfile=None, mpiexec_args: Sequence[str] = (),
        env: dict | None = None, seed: int = 0, _inject: dict | None = None) -> RunResult:
    """Run ``schedules`` (one or a list) over MPI at every size in ``sizes`` (bytes or
    strings like ``"1MiB"``); check and time each, and time MPI's own collective.

    One ``mpiexec`` launch runs everything, with as many processes as the
    largest schedule has participants (ranks, plus one per emulated switch)
    unless ``processes`` asks for more; smaller schedules run on the first
    processes while the others sleep. ``calibrate=True`` adds a ping-pong
    between processes 0 and 1 (sizes from :func:`calibration_sizes`) and the
    simulator's prediction for every row
    (``predicted_s``, ``measured_over_predicted``); pass a
    :class:`Calibration` to reuse one. ``timeout`` (s) bounds the whole run:
    past it every process is killed and :class:`MPIRunError` raised.
    """
    if isinstance(schedules, Schedule):
        schedules = [schedules]
    schedules = list(schedules)
    if not schedules:
        raise CollectivesError("give at least one schedule to run")
    for name, v, lo in (("iters", iters, 1), ("warmup", warmup, 0)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
            raise CollectivesError(f"{name} must be a whole number >= {lo}, got {v!r}")
    cases = _prepare(schedules, sizes, dtype)
    need = max(s.num_participants for s in schedules)
    if calibrate is True:
        need = max(need, 2)
    np_ = need if processes is None else int(processes)
    if np_ < need:
        raise CollectivesError(f"processes={processes} is too few: the schedules need {need}")
    largest = max(max(c["sizes"]) for c in cases)
    payload = {"cases": cases, "iters": int(iters), "warmup": int(warmup), "dtype": dtype,
               "seed": int(seed), "inject": dict(_inject or {}),
               "calibrate": list(calibration_sizes(largest)) if calibrate is True else None}
    result = _launch(payload, np_, timeout=timeout, hostfile=hostfile,
                     mpiexec_args=mpiexec_args, env=env)
    cal = calibrate if isinstance(calibrate, Calibration) else None
    return _finish(result, cal, bool(calibrate), schedules)


def _switch_schedules(collective: str, num_ranks: int, algorithms, **options) -> list[Schedule]:
    from .plan import algorithms as applicable, build
    from .topology import Switch
    topo = Switch(num_ranks, bandwidth=1e9, in_network=True)
    names = applicable(collective, topo)
    if algorithms in (None, "all"):
        chosen = names
    else:
        chosen = [algorithms] if isinstance(algorithms, str) else list(algorithms)
    return [build(collective, topo, a, **options) for a in chosen]


def run_collective(collective: str, num_ranks: int, algorithms="all", *, sizes=("1MiB",),
                   **kwargs) -> RunResult:
    """:func:`run` for the library's schedules of ``collective`` on ``Switch(num_ranks)``
    (``algorithms``: a name, a list, or ``"all"``: every algorithm that applies)."""
    collective = as_collective(collective)
    options = {k: kwargs.pop(k) for k in ("root", "matrix", "chunks") if k in kwargs}
    return run(_switch_schedules(collective, num_ranks, algorithms, **options), sizes, **kwargs)


def calibrate(*, sizes: Sequence[int] = CALIBRATION_SIZES, timeout: float = 120.0,
              hostfile=None, mpiexec_args: Sequence[str] = (), env=None) -> Calibration:
    """Ping-pong between two MPI processes over ``sizes`` and fit alpha and beta
    (:func:`fit_alpha_beta`)."""
    sizes = [parse_size(s) for s in sizes]
    payload = {"cases": [], "iters": 1, "warmup": 0, "dtype": "float64", "seed": 0,
               "inject": {}, "calibrate": sizes}
    result = _launch(payload, 2, timeout=timeout, hostfile=hostfile,
                     mpiexec_args=mpiexec_args, env=env)
    return _calibration_from(result["pingpong"], result.get("library", ""))


# ---------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------

def _num(value, scale: float, fmt: str) -> str:
    return "-" if value is None or not np.isfinite(value) else format(value * scale, fmt)


#: The table's columns: (name, unit, width, text of a row).
_COLUMNS = {
    "size": ("(B)", 11, lambda r: str(r["size_bytes"])),
    "count": ("(elements)", 10, lambda r: str(r["count"])),
    "algorithm": ("", 20, lambda r: r["algorithm"]),
    "N": ("", 3, lambda r: str(r["num_ranks"])),
    "steps": ("", 5, lambda r: str(r["steps"])),
    "time": ("(us)", 10, lambda r: _num(r["time_s"], 1e6, ".2f")),
    "mpi": ("(us)", 10, lambda r: _num(r["mpi_time_s"], 1e6, ".2f")),
    "algbw": ("(GB/s)", 8, lambda r: _num(r["algbw"], 1e-9, ".3f")),
    "busbw": ("(GB/s)", 8, lambda r: _num(r["busbw"], 1e-9, ".3f")),
    "mpi_busbw": ("(GB/s)", 9, lambda r: _num(r["mpi_busbw"], 1e-9, ".3f")),
    "predicted": ("(us)", 10, lambda r: _num(r.get("predicted_s"), 1e6, ".2f")),
    "meas/pred": ("", 9, lambda r: _num(r.get("measured_over_predicted"), 1, ".2f")),
    "correct": ("", 7, lambda r: str(bool(r["correct"]))),
}
#: Columns of the command's table, in order (what :func:`parse_table` reads).
TABLE_COLUMNS = tuple(_COLUMNS)
#: The narrower table for a page column (``compact=True``), with narrower widths.
COMPACT_COLUMNS = ("size", "algorithm", "N", "steps", "time", "mpi", "busbw", "predicted",
                   "meas/pred", "correct")
_COMPACT_WIDTHS = {"size": 9, "algorithm": 18, "time": 9, "mpi": 9, "predicted": 9}


def format_table(result: RunResult, *, compact: bool = False) -> str:
    """An nccl-tests style table: one line per (algorithm, size); comment lines start
    with #. ``compact=True`` keeps the columns that fit a page (the prediction
    columns only when the run was calibrated)."""
    rows = result.rows
    cal = result.calibration
    names = list(TABLE_COLUMNS)
    width = {c: w for c, (_, w, _) in _COLUMNS.items()}
    if compact:
        predicted = any(r.get("predicted_s") is not None for r in rows)
        names = [c for c in COMPACT_COLUMNS if predicted or c not in ("predicted", "meas/pred")]
        width.update(_COMPACT_WIDTHS)
    lines = []
    if rows:
        r0 = rows[0]
        ranks = ", ".join(map(str, sorted({r["num_ranks"] for r in rows})))
        hosts = len(result.hosts) or 1
        lines.append(f"# {r0['collective']}, N = {ranks}: {result.world_size} processes on {hosts} "
                     f"host{'s' if hosts > 1 else ''}, {r0['dtype']}")
        lines.append(f"# median of {result.iters} timed runs after {result.warmup} warm-up runs")
    lines.append(f"# {' '.join(result.library.split())}")
    if cal is not None:
        lines.append(f"# ping-pong: alpha = {format_time(cal.alpha)}, beta = {cal.beta:.3g} s/B "
                     f"({format_rate(cal.bandwidth)})")
        lines.append(f"# ({cal.method})")
        lines.append("# predicted: simulate on Switch(N, bandwidth=1/beta, latency=alpha/2)")
    emulated = sorted({a for r in rows for a in r["emulated_agents"]})
    if emulated:
        lines.append(f"# emulated on extra processes: {', '.join(emulated)}")
    if rows:
        lines.append(f"# time: the library's schedule; mpi: {rows[0]['mpi']}, same input")
        lines.append(f"# busbw = algbw x {_factor_text(rows[0]['collective'])}")
    lines.append("# " + " ".join(f"{c:>{width[c]}}" for c in names))
    lines.append("# " + " ".join(f"{_COLUMNS[c][0]:>{width[c]}}" for c in names))
    for r in rows:
        lines.append("  " + " ".join(f"{_COLUMNS[c][2](r):>{width[c]}}" for c in names))
    bad = [r for r in rows if not r["correct"]]
    for r in bad[:5]:
        lines.append(f"# WRONG: {r['algorithm']} N={r['num_ranks']} {r['size_bytes']} B: {r['error']}")
    if bad:
        lines.append(f"# {len(bad)} of {len(rows)} rows are wrong: their times measure a "
                     f"schedule that does not compute {rows[0]['collective']}")
    else:
        lines.append("# every row correct: each rank matches the definition and MPI")
    return "\n".join(lines)


def _factor_text(collective: str) -> str:
    return {"all_reduce": "2(N-1)/N", "all_gather": "(N-1)/N", "reduce_scatter": "(N-1)/N",
            "all_to_all": "(N-1)/N", "gather": "(N-1)/N"}.get(collective, "1")


def parse_table(text: str) -> list[dict]:
    """Read the rows back from :func:`format_table`'s output (the full table), for
    tests and scripts: one dict per row, keyed by column name, numbers as floats
    (``None`` for ``-``), ``correct`` as a bool."""
    rows = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = line.split()
        if len(fields) != len(TABLE_COLUMNS):
            raise CollectivesError(f"not a row of the run table: {line!r}")
        row: dict[str, Any] = {}
        for name, value in zip(TABLE_COLUMNS, fields):
            if name == "algorithm":
                row[name] = value
            elif name == "correct":
                row[name] = value == "True"
            elif name in ("size", "count", "N", "steps"):
                row[name] = int(value)
            else:
                row[name] = None if value == "-" else float(value)
        rows.append(row)
    return rows


# ---------------------------------------------------------------------------
# The command: python -m collectives_lib run ...
# ---------------------------------------------------------------------------

RUN_DESCRIPTION = """\
Run the library's schedule of a collective over N MPI processes, check every
rank's result against the collective's definition and MPI's own collective, and
time both, like nccl-tests' all_reduce_perf. Launches mpiexec itself, or runs in
place when started by mpiexec (for clusters: --hostfile, or your own mpiexec).

examples:
  python -m collectives_lib run --np 4 -c all_reduce -a ring,recursive_doubling -b 1K -e 4M
  python -m collectives_lib run --np 8 -c all_gather -a all --size 1MiB --calibrate
  python -m collectives_lib run --np 16 --hostfile hosts.txt -c all_reduce -a ring -b 8 -e 128M
  mpiexec -n 4 python -m collectives_lib run -c all_to_all -a direct --size 64K

exit status: 0 all correct, 1 a wrong result or a failed run, 2 bad options or no MPI.
"""


class _ArgumentParser(argparse.ArgumentParser):
    def error(self, message):  # one line, our exit code
        raise CollectivesError(message)


def _parser() -> argparse.ArgumentParser:
    p = _ArgumentParser(prog="python -m collectives_lib run", description=RUN_DESCRIPTION,
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--np", "-n", type=int, help="number of ranks N (default 2; under mpiexec: "
                   "the number of processes)")
    p.add_argument("--collective", "-c", default="all_reduce",
                   help="all_gather, reduce_scatter, all_reduce, all_to_all, broadcast, reduce, "
                        "gather or send (default all_reduce)")
    p.add_argument("--algorithm", "-a",
                   help="an algorithm, a comma-separated list, or 'all' (every one that "
                        "applies); default ring (binomial_tree for broadcast and reduce, direct "
                        "for gather and send)")
    p.add_argument("--topology", "-t", help="build the schedule for this topology instead of "
                   "switch:N (e.g. torus:2x4; see `collectives sweep -h`)")
    p.add_argument("--axes", help="mesh axes of --topology the collective spans, e.g. x")
    p.add_argument("--root", type=int, default=0, help="broadcast/reduce/gather root; send source")
    p.add_argument("--dst", type=int, help="send destination (default: the last rank)")
    p.add_argument("--schedule", help="run a schedule saved with collectives_lib.mpi.save_schedule "
                   "(an .npz file)")
    p.add_argument("--size", "-s", help="one size V, e.g. 1MiB: the whole array as the library "
                   "counts it (gathered, unreduced, or for all-to-all the total over ranks)")
    p.add_argument("-b", "--minbytes", default="1K", help="smallest size of the sweep (default 1K)")
    p.add_argument("-e", "--maxbytes", default="1M", help="largest size (default 1M)")
    p.add_argument("-f", "--stepfactor", type=float, default=4.0, help="size multiplier (default 4)")
    p.add_argument("--iters", type=int, default=20, help="timed runs per size (default 20)")
    p.add_argument("--warmup", "-w", type=int, default=5, help="untimed runs first (default 5)")
    p.add_argument("--dtype", default="float64", choices=DTYPES)
    p.add_argument("--calibrate", action="store_true",
                   help="ping-pong, fit alpha and beta, and add the simulator's prediction")
    p.add_argument("--hostfile", help="host file passed to mpiexec (-f) to run on a cluster")
    p.add_argument("--timeout", type=float, default=300.0,
                   help="seconds before the whole run is killed (default 300)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    p.add_argument("--payload", help=argparse.SUPPRESS)       # set by the launcher
    p.add_argument("--fail-rank", type=int, help=argparse.SUPPRESS)   # testing
    p.add_argument("--stall-rank", type=int, help=argparse.SUPPRESS)  # testing
    return p


def _sweep_sizes(args) -> list[int]:
    if args.size is not None:
        return [parse_size(args.size)]
    lo, hi = parse_size(args.minbytes), parse_size(args.maxbytes)
    if hi < lo:
        raise CollectivesError(f"-e {args.maxbytes} is smaller than -b {args.minbytes}")
    if not args.stepfactor > 1:
        raise CollectivesError(f"-f must be > 1, got {args.stepfactor}")
    sizes, s = [], float(lo)
    while s <= hi * (1 + 1e-12):
        sizes.append(int(round(s)))
        s *= args.stepfactor
    return sizes


def _schedules_from_args(args, num_ranks: int) -> list[Schedule]:
    if args.schedule:
        sched = load_schedule(args.schedule)
        if args.np is not None and args.np != sched.num_ranks:
            raise CollectivesError(f"--np {args.np} but the schedule in {args.schedule} is for "
                                   f"{sched.num_ranks} ranks; leave --np out")
        return [sched]
    from .plan import algorithms as applicable, build
    from .topology import Switch
    collective = as_collective(args.collective)
    if args.topology:
        from .topology import parse_topology
        topo = parse_topology(args.topology, 1e9)
    else:
        topo = Switch(num_ranks, bandwidth=1e9, in_network=True)
    axes = [a.strip() for a in args.axes.split(",")] if args.axes else None
    opts: dict[str, Any] = {}
    if collective in ("broadcast", "reduce", "gather"):
        opts["root"] = args.root
    if collective == "send":
        opts["src"] = args.root
        if args.dst is not None:
            opts["dst"] = args.dst
    default = {"broadcast": "binomial_tree", "reduce": "binomial_tree", "send": "direct",
               "gather": "direct"}
    algorithm = args.algorithm or default.get(collective, "ring")
    names = [a.strip() for a in str(algorithm).split(",") if a.strip()]
    if names == ["all"]:
        names = applicable(collective, topo, axes)
    if not names:
        raise CollectivesError("--algorithm needs a name, a comma-separated list, or all")
    if collective == "send":
        return [build("send", topo, names[0], **opts)]
    return [build(collective, topo, a, axes=axes, **opts) for a in names]


def main_run(argv: list[str]) -> int:
    """``python -m collectives_lib run ...``: see :data:`RUN_DESCRIPTION`."""
    out, err = sys.stdout, sys.stderr
    try:
        args = _parser().parse_args(list(argv))
        if args.payload:  # a process started by our own launcher
            check_mpi4py()
            with open(args.payload, "rb") as f:
                payload = pickle.load(f)
            _serve(payload, emit=True)
            return 0
        if under_mpiexec():
            return _run_in_place(args, out)
        if args.np is not None and args.np < 1:
            raise CollectivesError(f"--np must be >= 1, got {args.np}")
        if args.topology:
            num_ranks = _topology_ranks(args.topology)
            if args.np is not None and args.np != num_ranks:
                raise CollectivesError(f"--topology {args.topology} has {num_ranks} ranks but "
                                       f"--np is {args.np}")
        else:
            num_ranks = args.np if args.np is not None else 2
        schedules = _schedules_from_args(args, num_ranks)
        inject = {k: v for k, v in (("fail_rank", args.fail_rank), ("stall_rank", args.stall_rank))
                  if v is not None}
        result = run(schedules, _sweep_sizes(args), iters=args.iters, warmup=args.warmup,
                     dtype=args.dtype, calibrate=args.calibrate, timeout=args.timeout,
                     hostfile=args.hostfile, _inject=inject)
    except MPIRunError as exc:
        err.write(f"collectives run: error: {exc}\n")
        return 1
    except CollectivesError as exc:
        err.write(f"collectives run: error: {exc}\n")
        return 2
    except KeyboardInterrupt:
        err.write("collectives run: interrupted; every MPI process was stopped\n")
        return 130
    _emit(result, args.json, out)
    return 0 if result.ok else 1


def _emit(result: RunResult, as_json: bool, out) -> None:
    if as_json:
        out.write(json.dumps(result.as_dict()) + "\n")
    else:
        out.write(format_table(result) + "\n")
    out.flush()


def _run_in_place(args, out) -> int:
    """Started by mpiexec: every process builds the same payload and runs it.

    N is ``--np`` if given, else the number of processes (emulated switches
    need more processes than ranks: ``mpiexec -n 5 ... --np 4 -a sharp``)."""
    if args.hostfile:
        raise CollectivesError("--hostfile is for the launcher; under mpiexec give the host "
                               "file to mpiexec itself (mpiexec -f FILE -n N ...)")
    check_mpi4py()
    from mpi4py import MPI
    world = MPI.COMM_WORLD
    size, me = world.Get_size(), world.Get_rank()
    if args.topology:
        num_ranks = _topology_ranks(args.topology)
    else:
        num_ranks = args.np if args.np is not None else size
    schedules = _schedules_from_args(args, num_ranks)
    fit = [s for s in schedules if s.num_participants <= size]
    if not fit:
        need = min(s.num_participants for s in schedules)
        raise CollectivesError(f"the schedule needs {need} processes (ranks plus emulated "
                               f"switches); mpiexec started {size}")
    if len(fit) < len(schedules) and me == 0:
        skipped = ", ".join(f"{s.algorithm} (needs {s.num_participants} processes)"
                            for s in schedules if s.num_participants > size)
        out.write(f"# skipped {skipped}: it emulates a switch on an extra process\n")
    schedules = fit
    cases = _prepare(schedules, _sweep_sizes(args), args.dtype)
    largest = max(max(c["sizes"]) for c in cases)
    calib = list(calibration_sizes(largest)) if args.calibrate and size >= 2 else None
    payload = {"cases": cases, "iters": args.iters, "warmup": args.warmup, "dtype": args.dtype,
               "seed": 0, "inject": {}, "calibrate": calib}
    result = _serve(payload, emit=False)
    ok = world.bcast(None if result is None else all(r["correct"] for r in result["rows"]), root=0)
    if me == 0:
        _emit(_finish(result, None, bool(calib), schedules), args.json, out)
    return 0 if ok else 1


def _topology_ranks(spec: str) -> int:
    from .topology import parse_topology
    return parse_topology(spec, 1e9).num_ranks


if __name__ == "__main__":
    # Run through the package module (not this __main__ copy), so there is one of everything.
    from collectives_lib.mpi import main_run as _main_run
    sys.exit(_main_run(sys.argv[1:]))
