"""Buffers: where a participant's slots live, what it starts with, what it must end with.

Every participant keeps a flat buffer holding the array's slots one after
another (``num_slots x elements_per_slot``, float64 or float32; :class:`Layout`).

What is checked. Inputs are pseudo-random non-zero integers in [-1000, 1000],
a hash of (rank, element), so every rank can compute every other rank's input
and sums are exact in float32 and float64 alike. Slots a participant does not
hold at the start are zero, as in :func:`~collectives_lib.replay.initial_state`
(so a reduce into an empty slot acts as a copy, which is how the emulated
switch of SHARP collects its sum); since no input is zero, a chunk that never
arrives, a contribution counted twice or one left out all change the result.
At the end every rank compares its buffer with the collective's definition
(:func:`expected_buffer`, as in :func:`collectives_lib.replay.expected_output`:
the slots the definition fixes for that rank), with :func:`compare`.
"""

from __future__ import annotations

import os
from typing import Iterable

import numpy as np

from ..errors import CollectivesError
from ..schedule import Schedule
from ..units import format_bytes

DTYPES = ("float64", "float32")

#: Bytes a process holds per byte of the array, at most: its buffer and the one it
#: starts from, scratch for received and packed chunks, MPI's own collective's
#: output, the expected values and the temporaries that make them. (Measured at
#: 128 MiB with 2 processes: a peak of 9.3 for all-reduce and reduce-scatter, 7.8
#: for all-to-all, 7.5 for all-gather and broadcast.)
BYTES_PER_BYTE = 10
#: Bytes per transfer of the schedules, in every process (their arrays, pickled and not).
BYTES_PER_TRANSFER = 64
#: What a process holds before any buffer: Python, numpy, mpi4py and MPICH (measured: 47 MB).
BASE_BYTES = 64 * 2**20


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


def compare(schedule: Schedule, layout: Layout, got: np.ndarray, want: np.ndarray,
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



def available_memory() -> int | None:
    """Bytes of memory available for new processes here (Linux's MemAvailable; else the
    physical memory; None if neither can be read)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, OSError, ValueError):  # pragma: no cover
        return None


def transfers(schedules: Iterable[Schedule]) -> int:
    """How many transfers ``schedules`` have in all (counted without building their chunks)."""
    return sum(len(step.traffic) for s in schedules for step in s.steps)


def check_memory(largest: int, processes: int, *, num_transfers: int = 0, what: str = "the run",
                 per_byte: float = BYTES_PER_BYTE) -> None:
    """Refuse a run whose ``processes`` would need more memory than is available here,
    with one line saying how much and what fits. ``largest`` is the largest size
    (bytes of the array), ``num_transfers`` those of all its schedules."""
    available = available_memory()
    if available is None:
        return
    fixed = BASE_BYTES + BYTES_PER_TRANSFER * num_transfers
    each = fixed + per_byte * largest
    if processes * each <= available:
        return
    parts = [f"{per_byte:g} bytes per byte of the largest array, {format_bytes(largest)}"]
    if num_transfers:
        parts.append(f"{num_transfers} transfers of schedule")
    room = (available / processes - fixed) / per_byte
    fits = (f"sizes up to about {format_bytes(room, binary=True)} fit" if room >= 1024 else
            "no size fits: fewer processes or smaller schedules")
    raise CollectivesError(
        f"{what} would need about {format_bytes(processes * each)} of memory ({processes} "
        f"process{'es' if processes != 1 else ''} x {format_bytes(each)}: {', '.join(parts)}); "
        f"{format_bytes(available)} is available here, so {fits}")
