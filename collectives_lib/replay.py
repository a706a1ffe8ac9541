"""Replay a schedule on real numpy data and prove it computes its collective.

Two things are tracked for every participant and slot: the *values* (random
numbers, added or copied exactly as the schedule says) and the *contributions*
(the set of ranks whose input is summed in, as a bit mask). The contributions
are what the drawings colour, and they catch the subtle bugs: a reduce that
would count a rank twice, a send of data the sender does not yet hold.

:func:`check` raises :class:`~collectives_lib.errors.ScheduleError` naming the
step, rank and chunk at fault; :func:`replay` returns the state after every
step.

Introduced in the chapter *A first look*.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import checks
from .collective import Collective
from .errors import ScheduleError
from .schedule import COPY, REDUCE, Schedule, box_fraction, check_schedule, expand_box

MAX_REPLAY_GROUP = 64  # contributions are bit masks in uint64


@dataclass
class State:
    """What every participant holds: ``values[p, slot, element]`` and
    ``contrib[p, slot]`` (bit i set: local rank i's input is in there)."""

    values: np.ndarray
    contrib: np.ndarray

    def copy(self) -> "State":
        return State(self.values.copy(), self.contrib.copy())

    def count(self) -> np.ndarray:
        """Number of contributions in each (participant, slot)."""
        c = self.contrib.copy()
        out = np.zeros(c.shape, dtype=np.int64)
        one = np.uint64(1)
        while c.any():
            out += (c & one).astype(np.int64)
            c >>= one
        return out


def initial_state(schedule: Schedule, elements: int = 2, seed: int = 0) -> tuple[State, np.ndarray]:
    """The state before step 1 and the inputs ``x[global rank, slot, element]``."""
    check_schedule(schedule)
    elements = checks.whole(elements, "elements (numbers per slot)")
    seed = checks.whole(seed, "seed", minimum=0)
    if schedule.group_size > MAX_REPLAY_GROUP:
        raise ScheduleError(
            f"replay tracks up to {MAX_REPLAY_GROUP} ranks per group; this schedule has "
            f"{schedule.group_size}"
        )
    rng = np.random.default_rng(seed)
    P, S = schedule.num_participants, schedule.num_slots
    x = rng.integers(-1000, 1000, size=(schedule.num_ranks, S, elements)).astype(float)
    values = np.zeros((P, S, elements))
    contrib = np.zeros((P, S), dtype=np.uint64)
    group, local = schedule.local_index
    ranks = np.nonzero(local[: schedule.num_ranks] >= 0)[0]
    bit = np.uint64(1) << local[ranks].astype(np.uint64)
    owner, _ = schedule.slot_roles
    mask = schedule.collective.start_mask(owner, local[ranks], schedule.root)
    contrib[ranks] = np.where(mask, bit[:, None], np.uint64(0))
    values[ranks] = np.where(mask[:, :, None], x[ranks], 0.0)
    return State(values, contrib), x


def check_fractions(schedule: Schedule) -> None:
    """Raise :class:`ScheduleError` unless every transfer's share of V equals the
    share of the array its chunk covers (what the simulator charges is what moves)."""
    for k, step in enumerate(schedule.steps):
        expect = box_fraction(step.boxes, schedule.slot_shape, schedule.weights)
        got = step.traffic.fraction
        bad = np.nonzero(~np.isclose(expect, got, rtol=1e-9, atol=1e-15))[0]
        if len(bad):
            i = int(bad[0])
            t = step.traffic
            raise ScheduleError(
                f"step {k + 1}: {_name(schedule, t.src[i])} -> {_name(schedule, t.dst[i])} is "
                f"charged {got[i]:.6g} of V but its chunk "
                f"{schedule.chunk_label(step.boxes[i])} is {expect[i]:.6g} of V")


def _name(schedule: Schedule, p: int) -> str:
    return schedule.participant_name(int(p))


def _ranks_in(mask: int, schedule: Schedule, group: int) -> list[int]:
    members = schedule.groups[group] if group >= 0 else np.arange(schedule.group_size)
    return [int(members[i]) for i in range(schedule.group_size) if mask >> i & 1]


def apply_step(schedule: Schedule, state: State, k: int) -> State:
    """The state after step ``k`` (0-based), checking every transfer."""
    step = schedule.steps[k]
    t = step.traffic
    boxes = step.boxes
    before = state
    after = state.copy()
    P = schedule.num_participants
    written = {}
    group, _ = schedule.local_index
    if len(boxes) != len(t):
        raise ScheduleError(f"step {k + 1}: {len(t)} transfers but {len(boxes)} chunks")
    for i in range(len(t)):
        src, dst, op = int(t.src[i]), int(t.dst[i]), int(t.op[i])
        label = schedule.chunk_label(boxes[i])
        if not (0 <= src < P and 0 <= dst < P):
            raise ScheduleError(
                f"step {k + 1}: transfer {src} -> {dst} names a participant outside "
                f"0..{P - 1}"
            )
        if src == dst:
            raise ScheduleError(f"step {k + 1}: {_name(schedule, src)} sends {label} to itself")
        for axis, ((start, count), size) in enumerate(zip(boxes[i], schedule.slot_shape)):
            if not (0 <= start < size and 1 <= count <= size):
                raise ScheduleError(
                    f"step {k + 1}: {_name(schedule, src)} -> {_name(schedule, dst)} carries "
                    f"a chunk outside the {schedule.slot_shape} grid on axis {axis}: "
                    f"start {start}, count {count}"
                )
        slots = expand_box(boxes[i], schedule.slot_shape)
        held = before.contrib[src, slots]
        if (held == 0).any():
            missing = slots[held == 0]
            raise ScheduleError(
                f"step {k + 1}: {_name(schedule, src)} sends {label} to "
                f"{_name(schedule, dst)} but does not hold "
                f"{schedule.chunk_label(_slot_box(schedule, missing[0]))} yet"
            )
        for s in slots.tolist():
            prev = written.get((dst, s))
            if prev is not None and (prev == COPY or op == COPY):
                raise ScheduleError(
                    f"step {k + 1}: two transfers write {schedule.chunk_label(_slot_box(schedule, s))} "
                    f"at {_name(schedule, dst)} in the same step"
                )
            written[(dst, s)] = op
        if op == COPY:
            after.contrib[dst, slots] = before.contrib[src, slots]
            after.values[dst, slots] = before.values[src, slots]
        elif op == REDUCE:
            overlap = after.contrib[dst, slots] & before.contrib[src, slots]
            if overlap.any():
                j = int(np.nonzero(overlap)[0][0])
                g = int(group[dst]) if group[dst] >= 0 else int(group[src])
                twice = _ranks_in(int(overlap[j]), schedule, g)
                raise ScheduleError(
                    f"step {k + 1}: {_name(schedule, src)} reduces "
                    f"{schedule.chunk_label(_slot_box(schedule, slots[j]))} into "
                    f"{_name(schedule, dst)}, which already has the contribution of "
                    f"rank{'s' if len(twice) > 1 else ''} {', '.join(map(str, twice))}: "
                    f"it would be counted twice"
                )
            after.contrib[dst, slots] |= before.contrib[src, slots]
            after.values[dst, slots] += before.values[src, slots]
        else:
            raise ScheduleError(f"step {k + 1}: unknown operation code {op}")
    return after


def _slot_box(schedule: Schedule, slot: int):
    coords = np.unravel_index(int(slot), schedule.slot_shape)
    return [(int(c), 1) for c in coords]


def replay(schedule: Schedule, *, elements: int = 2, seed: int = 0) -> list[State]:
    """States before step 1 and after every step: ``len == num_steps + 1``."""
    check_schedule(schedule)
    state, _ = initial_state(schedule, elements, seed)
    states = [state]
    for k in range(schedule.num_steps):
        state = apply_step(schedule, state, k)
        states.append(state)
    return states


def expected_output(schedule: Schedule, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """What the collective's definition says each rank ends with.

    Returns ``(values, required)``: ``values[rank, slot]`` and a mask of the
    slots the definition constrains (a reduce-scatter only fixes each rank's
    own block). Computed straight from the inputs with numpy: concatenation,
    elementwise sum, transpose of blocks.
    """
    R, S, E = x.shape
    values = np.zeros((R, S, E))
    required = np.zeros((R, S), dtype=bool)
    coll = schedule.collective
    owner, dest = schedule.slot_roles
    source = coll.source(owner, schedule.root)
    local = np.arange(schedule.group_size)
    need = coll.end_mask(owner, dest, local, schedule.root, schedule.dest)     # (n, S)
    for g in range(schedule.num_groups):
        members = schedule.groups[g]
        xs = x[members]                               # (n, S, E) inputs of the group
        result = xs.sum(axis=0) if source is None else xs[source, np.arange(S)]
        values[members] = result
        required[members] = need
    return values, required


class Checked(list):
    """The states of a checked replay (a list, as :func:`replay` returns), shown as one line."""

    def __init__(self, states, schedule: Schedule):
        super().__init__(states)
        self.schedule = schedule

    def __repr__(self) -> str:
        s = self.schedule
        steps = f"{s.num_steps} step{'s' if s.num_steps != 1 else ''}"
        return (f"checked {s.algorithm} {s.collective}, {s.num_ranks} ranks, {steps}: "
                "every rank's result, every transfer's bytes")

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(repr(self))


def check(schedule: Schedule, *, elements: int = 2, seed: int = 0) -> Checked:
    """Replay ``schedule`` and raise :class:`ScheduleError` unless every rank ends
    with what the collective's definition says, and every transfer is charged the
    share of V its chunk covers (what the simulator times is what moves).

    Returns the states (before step 1, then after each step), printed as one line:

    >>> from collectives_lib import build
    >>> check(build("all_gather", 4, "ring"))
    checked ring all_gather, 4 ranks, 3 steps: every rank's result, every transfer's bytes
    """
    check_schedule(schedule)
    check_fractions(schedule)
    states = replay(schedule, elements=elements, seed=seed)
    final = states[-1]
    _, x = initial_state(schedule, elements, seed)
    want, required = expected_output(schedule, x)
    group, local = schedule.local_index
    full = np.uint64((1 << schedule.group_size) - 1)
    coll = schedule.collective
    for r in range(schedule.num_ranks):
        if group[r] < 0:
            continue
        need = np.nonzero(required[r])[0]
        if not len(need):
            continue
        have = final.contrib[r, need]
        if coll.reduces:
            bad = np.nonzero(have != full)[0]
            if len(bad):
                s = need[bad[0]]
                got = _ranks_in(int(final.contrib[r, s]), schedule, int(group[r]))
                miss = sorted(set(schedule.groups[group[r]].tolist()) - set(got))
                raise ScheduleError(
                    f"rank {r} does not end with {schedule.chunk_label(_slot_box(schedule, s))} "
                    f"fully reduced: it is missing the contribution of rank"
                    f"{'s' if len(miss) > 1 else ''} {', '.join(map(str, miss))}"
                )
        else:
            bad = np.nonzero(have == 0)[0]
            if len(bad):
                s = need[bad[0]]
                raise ScheduleError(
                    f"rank {r} does not get {schedule.chunk_label(_slot_box(schedule, s))}"
                )
        if not np.allclose(final.values[r, need], want[r, need]):
            s = need[np.nonzero(~np.isclose(final.values[r, need], want[r, need]).all(axis=1))[0][0]]
            raise ScheduleError(
                f"rank {r} ends with the wrong values in "
                f"{schedule.chunk_label(_slot_box(schedule, s))}"
            )
    return Checked(states, schedule)


def replay_inputs(schedule: Schedule, inputs) -> list[State]:
    """Replay ``schedule`` on the caller's data instead of random numbers.

    ``inputs[rank, slot, element]`` is what each rank starts with in each slot
    of the schedule's grid (``schedule.slot_shape``, flattened); only the slots
    a rank holds at the start are read (its own block for all-gather, its
    blocks to every rank for all-to-all, everything for the reductions).
    Returns the states before step 1 and after every step, like :func:`replay`;
    ``states[-1].values[rank]`` is what the rank ends with. For example, an
    all-to-all moves token activations grouped by source chip into groups by
    destination expert.

    Introduced in the chapter *All-to-all: a sharded transpose*.
    """
    check_schedule(schedule)
    try:
        x = np.asarray(inputs, dtype=float)
    except (TypeError, ValueError):
        raise ScheduleError(f"inputs must be an array of numbers (ranks, slots, elements), got "
                            f"{type(inputs).__name__}") from None
    want = (schedule.num_ranks, schedule.num_slots)
    if x.ndim == 2:
        x = x[:, :, None]
    if x.ndim != 3 or x.shape[:2] != want:
        raise ScheduleError(
            f"inputs must have shape (ranks, slots, elements) = ({want[0]}, {want[1]}, E) for this "
            f"schedule (slot grid {schedule.slot_shape}), got {np.shape(inputs)}"
        )
    state, _ = initial_state(schedule, elements=x.shape[2])
    held = state.contrib[: schedule.num_ranks] != 0
    state.values[: schedule.num_ranks] = np.where(held[:, :, None], x, 0.0)
    states = [state]
    for k in range(schedule.num_steps):
        state = apply_step(schedule, state, k)
        states.append(state)
    return states


def arrival_steps(schedule: Schedule, states: list[State] | None = None, *,
                  per_slot: bool = False) -> np.ndarray:
    """When each block reaches each rank in an all-gather.

    Returns ``steps[rank, block]`` (global rank; block = local index of the
    rank that owns it in the rank's group): the number of steps after which
    the rank first holds every slot of the block, 0 for its own block, -1 if
    it never does. A picture of a schedule in one array: a unidirectional ring
    gives diagonal bands, a bidirectional ring a V, a chain ``|r - b|``.
    ``states`` takes a precomputed :func:`replay`. With ``per_slot=True`` the
    answer is ``steps[rank, slot]``, one column per slot of the schedule's grid
    (a 2D all-gather cuts every block in parts that travel separately).

    Introduced in the chapter *Inside all-gather: rings, chains and two axes*.
    """
    check_schedule(schedule)
    if schedule.collective is not Collective.ALL_GATHER:
        raise ScheduleError(
            f"arrival_steps is for all-gather schedules, got a {schedule.collective}"
        )
    if states is None:
        states = replay(schedule)
    elif (isinstance(states, str) or not isinstance(states, (list, tuple)) or len(states) != schedule.num_steps + 1
          or not all(isinstance(s, State) for s in states)):
        raise ScheduleError(f"states must be what replay(schedule) returns: {schedule.num_steps + 1} states, "
                            f"got {type(states).__name__}")
    owner, _ = schedule.slot_roles
    n = schedule.group_size
    R = schedule.num_ranks
    held = np.stack([(s.contrib[:R] != 0) for s in states])        # (K+1, R, S)
    if per_slot:
        per_block = held
    else:
        per_block = np.stack([held[:, :, owner == b].all(axis=2) for b in range(n)], axis=2)
    ever = per_block.any(axis=0)
    first = np.argmax(per_block, axis=0)
    return np.where(ever, first, -1).astype(np.int64)
