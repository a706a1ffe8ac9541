"""Schedules as data: steps of transfers, each moving a chunk from one rank to another.

The model follows msccl-tools: the array a collective works on is cut into
*slots* laid out on a small grid (``slot_shape``); a *chunk* is a box of slots
(a start and a count on every grid axis, wrapping around). A transfer copies a
chunk from ``src`` to ``dst`` (``Op.COPY``) or adds it into what ``dst`` holds
(``Op.REDUCE``). A step is a set of transfers that happen at the same time, all
reading what their sources held when the step began.

For all-gather, reduce-scatter and all-reduce the leading axes of the slot grid
index the rank that owns a block (so slot ``(3,)`` is block 3, owned by rank
3); all-to-all grids are ``(origin..., destination..., part)``; broadcast,
reduce and send grids are pipeline chunks.

Timing needs only each step's :class:`Traffic` (who sends how many bytes to
whom); the chunks of a step may be computed lazily, which keeps schedules of
thousands of ranks small. Steps that repeat the same traffic share one
:class:`Traffic` object, and the simulator times it once.

Introduced in the chapter *A first look*.
"""

from __future__ import annotations

import math

import dataclasses
import enum
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import Callable, Sequence

import numpy as np

from . import checks
from .collective import Collective, collective as as_collective
from .errors import CollectivesError

class Op(enum.Enum):
    """What a transfer does at its destination."""

    COPY = "copy"      # dst slot := src slot
    REDUCE = "reduce"  # dst slot := dst slot + src slot

    @property
    def code(self) -> int:
        return 0 if self is Op.COPY else 1

    @staticmethod
    def from_code(code: int) -> "Op":
        return Op.COPY if int(code) == 0 else Op.REDUCE


COPY, REDUCE = 0, 1


@dataclass(frozen=True, eq=False)
class Traffic:
    """What the network sees in one step: flows with their share of the array.

    ``fraction[i]`` is the share of V (the collective's size) that transfer
    ``i`` carries; ``path[i]`` is an index into the schedule's explicit paths,
    or -1 to let the topology route it. ``lane[i]`` (optional) marks transfers
    of independent sub-schedules that share a step for the picture but do not
    wait for each other: within a stage each lane runs at its own pace.
    """

    src: np.ndarray
    dst: np.ndarray
    op: np.ndarray
    fraction: np.ndarray
    path: np.ndarray | None = None
    lane: np.ndarray | None = None

    def __post_init__(self) -> None:
        n = len(self.src)
        for name in ("dst", "op", "fraction"):
            if len(getattr(self, name)) != n:
                raise CollectivesError(f"traffic arrays differ in length ({name})")

    def __len__(self) -> int:
        return len(self.src)

    @staticmethod
    def make(src, dst, op, fraction, path=None) -> "Traffic":
        src = np.asarray(src, dtype=np.int64).ravel()
        dst = np.asarray(dst, dtype=np.int64).ravel()
        n = len(src)
        op = np.broadcast_to(np.asarray(op, dtype=np.uint8), (n,)).copy()
        fraction = np.broadcast_to(np.asarray(fraction, dtype=float), (n,)).copy()
        if path is not None:
            path = np.broadcast_to(np.asarray(path, dtype=np.int64), (n,)).copy()
        return Traffic(src, dst, op, fraction, path)


@dataclass(frozen=True, eq=False)
class Step:
    """One step: its traffic, the chunk each transfer carries, and its stage name."""

    traffic: Traffic
    chunks: object  # (T, D, 2) int array of (start, count) boxes, or a callable returning it
    stage: str = ""

    @property
    def boxes(self) -> np.ndarray:
        boxes = self.chunks() if callable(self.chunks) else self.chunks
        return np.asarray(boxes, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.traffic)


@dataclass(frozen=True)
class Split:
    """An nccl-tests size in whole elements over a schedule's slots.

    ``slots`` equal slots would hold ``elements / slots`` elements each; when
    that is not whole, some hold ``largest`` and the others ``smallest`` (the
    remainder spread one element each, as NCCL spreads it). ``timed_bytes`` is
    the array the time is computed for: every slot as large as the largest.
    ``dropped`` counts the bytes of the array that do not form a whole element.
    """

    nbytes: int
    elements: int
    element_size: int
    slots: int
    largest: int
    smallest: int
    dropped: int = 0

    @property
    def timed_bytes(self) -> float:
        return float(self.slots * self.largest * self.element_size)

    @property
    def even(self) -> bool:
        return self.largest == self.smallest and not self.dropped

    def note(self, unit: str = "element") -> str:
        """One sentence when the split is uneven or drops bytes, else ''."""
        parts = []
        if self.dropped:
            parts.append(f"{self.dropped} {'byte does' if self.dropped == 1 else 'bytes do'} not "
                         f"make a whole {self.element_size}-byte {unit} and "
                         f"{'is' if self.dropped == 1 else 'are'} left out")
        if self.largest != self.smallest:
            parts.append(f"{self.elements:,} {unit}s do not split evenly over {self.slots:,} "
                         f"slots: each holds {self.smallest:,} or {self.largest:,}, and the "
                         f"largest sets the time")
        return "; ".join(parts)


@dataclass(frozen=True)
class Transfer:
    """One transfer, for reading and printing (schedules store arrays)."""

    src: int
    dst: int
    chunk: tuple[tuple[int, int], ...]
    fraction: float
    op: Op = Op.COPY
    path: tuple[int, ...] | None = None

    def nbytes(self, size: float) -> float:
        return self.fraction * size


@dataclass(frozen=True, eq=False)
class Schedule:
    """A collective as data: who sends which chunk to whom at each step.

    ``groups[g]`` lists the global ranks of group ``g`` (a collective over one
    axis of a torus runs one group per line along that axis, all at once);
    within a group, local rank ``i`` is ``groups[g, i]``. ``group_shape`` is the
    group's shape as a mesh. ``agents`` name extra participants such as a switch
    that reduces (SHARP); they are numbered after the ranks. ``routing`` is
    ``"neighbor"`` when every transfer must cross exactly one link of the
    topology (a physical ring) and ``"routed"`` when the network may route it.
    With ``pipelined=True`` the stages overlap (chunks stream through them) and
    the simulator reports the slowest stage as the time, and the sum as the
    unoverlapped time.
    """

    collective: str
    algorithm: str
    num_ranks: int
    groups: np.ndarray
    group_shape: tuple[int, ...]
    slot_shape: tuple[int, ...]
    steps: tuple[Step, ...]
    agents: tuple[str, ...] = ()
    routing: str = "neighbor"
    pipelined: bool = False
    root: int | None = None
    dest: int | None = None
    weights: np.ndarray | None = None
    paths: tuple[tuple[int, ...], ...] = ()
    description: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "collective", Collective(self.collective))

    @classmethod
    def local(cls, collective, algorithm: str, n: int, slot_shape, steps, *, group_shape=None,
              routing: str = "neighbor", agents=(), pipelined: bool = False, root=None,
              dest=None, weights=None, paths=(), description: str = "") -> "Schedule":
        """A one-group schedule over local ranks ``0 .. n-1`` (what builders return)."""
        return cls(
            collective=collective, algorithm=algorithm, num_ranks=n,
            groups=np.arange(n, dtype=np.int64)[None, :],
            group_shape=tuple(group_shape or (n,)), slot_shape=tuple(slot_shape),
            steps=tuple(steps), agents=tuple(agents), routing=routing,
            pipelined=pipelined, root=root, dest=dest, weights=weights,
            paths=tuple(tuple(p) for p in paths), description=description,
        )

    # -- basic facts -----------------------------------------------------------
    @property
    def num_steps(self) -> int:
        return len(self.steps)

    @property
    def group_size(self) -> int:
        return int(self.groups.shape[1])

    @property
    def num_groups(self) -> int:
        return int(self.groups.shape[0])

    @property
    def num_participants(self) -> int:
        return self.num_ranks + len(self.agents)

    @cached_property
    def num_slots(self) -> int:
        return math.prod(int(d) for d in self.slot_shape)

    @property
    def size_multiple(self) -> int:
        """A size (nccl-tests' meaning: see :meth:`array_bytes`) splits into equal
        whole-byte slots when it is a multiple of this."""
        if self.weights is not None:
            return 1
        per_rank = self.collective.layout == "pairs"
        return max(1, self.num_slots // self.group_size) if per_rank else self.num_slots

    def check_size(self, nbytes) -> int:
        """``nbytes`` as a positive whole number of bytes, else a :class:`CollectivesError`."""
        if isinstance(nbytes, bool) or not isinstance(nbytes, (int, np.integer)):
            if isinstance(nbytes, float) and np.isfinite(nbytes) and nbytes.is_integer():
                nbytes = int(nbytes)
            else:
                raise CollectivesError(f"size must be a whole number of bytes, got {nbytes!r}")
        nbytes = int(nbytes)
        if nbytes <= 0:
            raise CollectivesError(f"size must be positive, got {nbytes} bytes")
        return nbytes

    def array_bytes(self, nbytes: float) -> float:
        """The whole array the schedule's shares of V refer to, for an nccl-tests size:
        one rank's buffer times the number of ranks for all-to-all, the size itself
        for every other collective (the buffer of all-reduce, broadcast and reduce,
        the gathered output of all-gather, the unscattered input of reduce-scatter)."""
        return float(nbytes) * self._array_ranks

    @cached_property
    def _array_ranks(self) -> int:
        return self.group_size if self.collective.layout == "pairs" else 1

    def split(self, nbytes: int, element_size: int = 4) -> "Split":
        """How ``nbytes`` splits into whole elements over the schedule's slots.

        Slots that cannot all be equal get one element more or less (the
        remainder spread as NCCL spreads it); the largest slot sets the pace, so
        the simulator times ``split.timed_bytes``.
        """
        nbytes = self.check_size(nbytes)
        element_size = int(element_size)
        array = int(self.array_bytes(nbytes))
        elements = array // element_size
        dropped = array - elements * element_size
        if self.weights is not None:
            return Split(nbytes, elements, element_size, 1, elements, elements, dropped)
        slots = self.num_slots
        return Split(nbytes, elements, element_size, slots, -(-elements // slots),
                     elements // slots, dropped)

    def split_note(self, nbytes: int, element_size: int = 4) -> str:
        """``split(nbytes, element_size).note()``: an even split (the usual case, and
        an empty note) is known without making the :class:`Split`."""
        nbytes = self.check_size(nbytes)
        element_size = int(element_size)
        array = int(self.array_bytes(nbytes))
        if array % element_size == 0 and (self.weights is not None
                                          or array // element_size % self.num_slots == 0):
            return ""
        return self.split(nbytes, element_size).note()

    def round_size(self, nbytes: float, element_size: int = 4) -> int:
        """The largest size <= nbytes that splits into equal slots of whole elements
        (at least one element per slot), as nccl-tests rounds its sizes."""
        m = self.size_multiple * int(element_size)
        return max(m, int(nbytes) // m * m)

    def busbw_factor(self) -> float:
        return self.collective.busbw_factor(self.group_size)

    @cached_property
    def local_index(self) -> tuple[np.ndarray, np.ndarray]:
        """For each participant: its group and its local index in it (agents and
        ranks outside every group: -1)."""
        P = self.num_participants
        group = np.full(P, -1, dtype=np.int64)
        local = np.full(P, -1, dtype=np.int64)
        for g in range(self.num_groups):
            group[self.groups[g]] = g
            local[self.groups[g]] = np.arange(self.group_size)
        return group, local

    @cached_property
    def slot_roles(self) -> tuple[np.ndarray, np.ndarray]:
        """Per slot: the local rank that owns its block (its origin, for all-to-all)
        and its destination (all-to-all), -1 where the layout has none."""
        S = self.num_slots
        layout = self.collective.layout
        if layout == "chunks":
            return np.full(S, -1), np.full(S, -1)
        k = len(self.group_shape)
        coords = np.unravel_index(np.arange(S), self.slot_shape)
        owner = np.ravel_multi_index(tuple(coords[:k]), self.group_shape)
        if layout == "pairs":
            return owner, np.ravel_multi_index(tuple(coords[k:2 * k]), self.group_shape)
        return owner, np.full(S, -1)

    # -- reading ---------------------------------------------------------------
    def participant_name(self, p: int) -> str:
        if p < self.num_ranks:
            return f"rank {p}"
        return self.agents[p - self.num_ranks]

    def transfers(self, step: int, limit: int | None = None) -> list[Transfer]:
        """The transfers of step ``step`` (0-based) as objects; with ``limit``, only the
        first ``limit`` by (source, destination), made without the others."""
        s = self.steps[step]
        t = s.traffic
        boxes = s.boxes
        out = []
        which = range(len(t))
        if limit is not None:
            which = np.lexsort((t.dst, t.src), axis=0)[:max(int(limit), 0)]
        for i in which:
            path = None
            if t.path is not None and t.path[i] >= 0:
                path = tuple(self.paths[int(t.path[i])])
            out.append(Transfer(int(t.src[i]), int(t.dst[i]),
                                tuple((int(a), int(b)) for a, b in boxes[i]),
                                float(t.fraction[i]), Op.from_code(t.op[i]), path))
        return out

    def stages(self) -> list[str]:
        seen: list[str] = []
        for s in self.steps:
            if s.stage not in seen:
                seen.append(s.stage)
        return seen

    def bytes_sent(self, size: float) -> np.ndarray:
        """Bytes each participant sends over the whole schedule, for an array of ``size`` bytes."""
        out = np.zeros(self.num_participants)
        for s in self.steps:
            np.add.at(out, s.traffic.src, s.traffic.fraction * size)
        return out

    def bytes_received(self, size: float) -> np.ndarray:
        out = np.zeros(self.num_participants)
        for s in self.steps:
            np.add.at(out, s.traffic.dst, s.traffic.fraction * size)
        return out

    def chunk_label(self, box) -> str:
        return chunk_label(box, self.slot_shape, self.collective, len(self.group_shape))

    def __repr__(self) -> str:
        return (f"<Schedule {self.algorithm} {self.collective}: {self.num_ranks} ranks"
                f"{'' if self.num_groups == 1 else f' in {self.num_groups} groups of {self.group_size}'}, "
                f"{self.num_steps} steps>")

    def __str__(self) -> str:
        return self.format()

    def _slots_text(self) -> str:
        """How the array is cut, in the words of the listing's chunk labels:
        ``the array in 4 blocks, one per rank, each in 2 parts`` (all-gather,
        reduce-scatter, all-reduce), ``... 16 blocks, one per origin-destination
        pair, ...`` (all-to-all), ``the array in 8 chunks`` (broadcast, reduce,
        send)."""
        shape = tuple(int(v) for v in self.slot_shape)
        k = len(self.group_shape)
        layout = self.collective.layout
        lead = {"blocks": k, "pairs": 2 * k}.get(layout, 0)
        blocks, parts = math.prod(shape[:lead]), math.prod(shape[lead:])
        if not lead:                      # pipeline chunks
            whole = "the whole array as one chunk"
            return f"the array in {parts} chunks" if parts > 1 else whole
        whose = "rank" if layout == "blocks" else "origin-destination pair"
        if self.num_groups > 1:
            whose += " of a group"
        text = f"the array in {blocks} block{'s' * (blocks != 1)}, one per {whose}"
        return text + (f", each in {parts} parts" if parts > 1 else "")

    def format(self, *, max_steps: int = 64, max_transfers: int = 64) -> str:
        """A readable listing, one line per transfer, as ``show`` prints it."""
        max_steps = checks.whole(max_steps, "max_steps (steps to print)", minimum=0)
        max_transfers = checks.whole(max_transfers, "max_transfers (transfers per step to print)", minimum=0)
        head = (f"{self.algorithm} {self.collective} over {self.num_ranks} ranks"
                + ("" if self.num_groups == 1 else f" ({self.num_groups} groups of {self.group_size})")
                + f", {self.num_steps} step{'s' * (self.num_steps != 1)};")
        slots = self._slots_text()
        # two lines where one would not fit a page's code box (80 characters)
        lines = [f"{head} {slots}"] if len(head) + len(slots) < 80 else [head, slots]
        for k, step in enumerate(self.steps[:max_steps]):
            stage = f" [{step.stage}]" if step.stage else ""
            lines.append(f"step {k + 1}{stage}:")
            for tr in self.transfers(k, limit=max_transfers):
                frac = Fraction(tr.fraction).limit_denominator(1 << 20)
                share = ("V" if frac == 1 else f"{frac} of V" if frac else
                         f"{tr.fraction:.3g} of V")          # finer than 1/2^20
                lines.append(
                    f"  {self.participant_name(tr.src)} -> {self.participant_name(tr.dst)}: "
                    f"{tr.op.value} {self.chunk_label(tr.chunk)} ({share})"
                    + (f" via {len(tr.path) - 1} hops" if tr.path else "")
                )
            if len(step) > max_transfers:
                lines.append(f"  ... {len(step) - max_transfers} more transfers")
        if self.num_steps > max_steps:
            more = self.num_steps - max_steps
            lines.append(f"... {more} more step{'s' * (more != 1)}")
        return "\n".join(lines)


# ---------------------------------------------------------------------------
# Boxes
# ---------------------------------------------------------------------------

def chunk_label(box, slot_shape, collective, owner_dims: int) -> str:
    box = [tuple(int(v) for v in b) for b in box]

    def span(start, count, size):
        if count == size:
            return "*"
        if count == 1:
            return str(start)
        end = (start + count - 1) % size
        return f"{start}..{end}"

    parts = [span(s, c, n) for (s, c), n in zip(box, slot_shape)]
    layout = as_collective(collective).layout
    if layout == "blocks":
        owner = parts[:owner_dims]
        rest = parts[owner_dims:]
        if all(o == "*" for o in owner):
            label = "all blocks"
        else:
            plural = "blocks " if any(o == "*" or ".." in o for o in owner) else "block "
            label = plural + (owner[0] if owner_dims == 1 else "(" + ",".join(owner) + ")")
        if rest and any(r != "*" for r in rest) and any(n > 1 for n in slot_shape[owner_dims:]):
            label += " part " + ",".join(rest)
        return label
    if layout == "pairs":
        k = owner_dims
        o, d, rest = parts[:k], parts[k:2 * k], parts[2 * k:]
        fmt = lambda xs: xs[0] if len(xs) == 1 else "(" + ",".join(xs) + ")"
        label = f"from {fmt(o)} to {fmt(d)}"
        if rest and any(r != "*" for r in rest) and any(n > 1 for n in slot_shape[2 * k:]):
            label += ", part " + ",".join(rest)
        return label
    return "chunk " + ",".join(parts)


def box_fraction(boxes: np.ndarray, slot_shape, weights: np.ndarray | None = None) -> np.ndarray:
    """Share of the array each box covers (uniform slots, or slot ``weights``)."""
    boxes = np.asarray(boxes, dtype=np.int64)
    if weights is None:
        return np.prod(boxes[:, :, 1], axis=1) / float(np.prod(slot_shape))
    return _box_sums(np.asarray(weights, dtype=float), boxes)


def _box_sums(weights: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """Sum of ``weights`` over each wrapping box, by a summed-area table of the
    twice-tiled array (a box of count <= size never wraps twice)."""
    d = weights.ndim
    tiled = np.tile(weights, (2,) * d)
    sat = tiled
    for axis in range(d):
        sat = np.cumsum(sat, axis=axis)
    sat = np.pad(sat, [(1, 0)] * d)
    starts = boxes[:, :, 0]
    ends = starts + boxes[:, :, 1]
    total = np.zeros(len(boxes))
    for corner in range(1 << d):
        idx = []
        sign = 1
        for axis in range(d):
            if corner >> axis & 1:
                idx.append(starts[:, axis])
                sign = -sign
            else:
                idx.append(ends[:, axis])
        total += sign * sat[tuple(idx)]
    return total


def expand_box(box, slot_shape) -> np.ndarray:
    """Flat slot indices covered by a (start, count) box, wrapping on every axis."""
    ranges = [np.mod(np.arange(int(s), int(s) + int(c)), n)
              for (s, c), n in zip(box, slot_shape)]
    grids = np.meshgrid(*ranges, indexing="ij")
    return np.ravel_multi_index(tuple(g.ravel() for g in grids), slot_shape)


def boxes_array(per_axis: Sequence[tuple[np.ndarray, np.ndarray]], n: int) -> np.ndarray:
    """Stack per-axis (start, count) arrays (or scalars) into a (n, D, 2) box array."""
    out = np.empty((n, len(per_axis), 2), dtype=np.int64)
    for axis, (start, count) in enumerate(per_axis):
        out[:, axis, 0] = start
        out[:, axis, 1] = count
    return out


# ---------------------------------------------------------------------------
# Building schedules out of schedules
# ---------------------------------------------------------------------------

def _agent_names(local: Schedule, groups: np.ndarray, agent_name) -> tuple[list[str], np.ndarray]:
    """Global agent names and a (G, A_local) map to global participant ids."""
    G = groups.shape[0]
    index: dict[str, int] = {}
    ids = np.zeros((G, len(local.agents)), dtype=np.int64)
    for g in range(G):
        for a, name in enumerate(local.agents):
            gname = agent_name(g, name) if agent_name else (name if G == 1 else f"{name}{g}")
            ids[g, a] = index.setdefault(gname, len(index))
    return list(index), ids


def embed(local: Schedule, groups: np.ndarray, num_ranks: int, *,
          agent_name: Callable[[int, str], str] | None = None,
          algorithm: str | None = None, description: str | None = None) -> Schedule:
    """Run a one-group schedule (local ranks 0..n-1) in every group at once.

    ``groups[g, i]`` is the global rank playing local rank ``i`` in group
    ``g``. Agents get one global instance per group, named by
    ``agent_name(g, local_name)``.
    """
    groups = np.asarray(groups, dtype=np.int64)
    if groups.ndim != 2 or groups.shape[1] != local.group_size:
        raise CollectivesError(
            f"groups must have shape (G, {local.group_size}), got {groups.shape}"
        )
    if local.num_groups != 1:
        raise CollectivesError("embed needs a one-group schedule")
    G, n = groups.shape
    names, agent_ids = _agent_names(local, groups, agent_name)
    # participant map: (G, n + A_local) -> global participant id
    pmap = np.concatenate([groups, num_ranks + agent_ids], axis=1)
    cache: dict[int, Traffic] = {}
    steps = []
    # one group whose ranks and agents keep their numbers: the local steps are the global ones
    identity = G == 1 and np.array_equal(pmap[0], np.arange(pmap.shape[1]))
    if identity:
        steps = list(local.steps)
    for step in () if identity else local.steps:
        t = step.traffic
        key = id(t)
        if key not in cache:
            if G == 1:
                src, dst = pmap[0, t.src], pmap[0, t.dst]
            else:
                src = pmap[:, t.src].ravel()
                dst = pmap[:, t.dst].ravel()
            cache[key] = Traffic(src, dst, np.tile(t.op, G), np.tile(t.fraction, G),
                                 None if t.path is None else np.tile(t.path, G),
                                 None if t.lane is None else np.tile(t.lane, G))
        chunks = step.chunks
        if G == 1:
            new_chunks = chunks
        elif callable(chunks):
            new_chunks = (lambda c=chunks, G=G: np.tile(np.asarray(c()), (G, 1, 1)))
        else:
            new_chunks = np.tile(np.asarray(chunks), (G, 1, 1))
        steps.append(Step(cache[key], new_chunks, step.stage))
    return Schedule(
        collective=local.collective, algorithm=algorithm or local.algorithm,
        num_ranks=int(num_ranks), groups=groups, group_shape=local.group_shape,
        slot_shape=local.slot_shape, steps=tuple(steps), agents=tuple(names),
        routing=local.routing, pipelined=local.pipelined, root=local.root, dest=local.dest,
        weights=local.weights, paths=local.paths,
        description=description or local.description,
    )


def dual(schedule: Schedule, *, algorithm: str | None = None) -> Schedule:
    """The reduce-scatter that mirrors an all-gather (and back).

    Reverse the steps, reverse every transfer, and reduce where the all-gather
    copied: each chunk's broadcast tree becomes a reduction tree into its owner.
    """
    check_schedule(schedule, "schedule")
    to = schedule.collective.dual
    if to is None:
        raise CollectivesError(f"{schedule.collective} has no dual here")
    new_op = REDUCE if to.reduces else COPY
    cache: dict[int, Traffic] = {}
    steps = []
    for step in reversed(schedule.steps):
        t = step.traffic
        if id(t) not in cache:
            cache[id(t)] = Traffic(t.dst, t.src, np.full(len(t), new_op, np.uint8),
                                   t.fraction, t.path, t.lane)
        steps.append(Step(cache[id(t)], step.chunks, _dual_stage(step.stage)))
    return Schedule(
        collective=to, algorithm=algorithm or schedule.algorithm,
        num_ranks=schedule.num_ranks, groups=schedule.groups,
        group_shape=schedule.group_shape, slot_shape=schedule.slot_shape,
        steps=tuple(steps), agents=schedule.agents, routing=schedule.routing,
        pipelined=schedule.pipelined, root=schedule.root, dest=schedule.dest,
        weights=schedule.weights,
        paths=tuple(tuple(reversed(p)) for p in schedule.paths),
        description=schedule.description,
    )


def reflect(schedule: Schedule) -> Schedule:
    """Mirror a one-group schedule on a line of ranks: rank r becomes N-1-r and
    block b becomes N-1-b. A ring all-gather that sends to the right becomes one
    that sends to the left, so that its dual reduce-scatter sends to the right,
    as the textbook ring all-reduce does."""
    if schedule.num_groups != 1 or len(schedule.group_shape) != 1 or schedule.agents:
        raise CollectivesError("reflect works on one group of ranks on a line")
    n = schedule.group_size
    flip = lambda r: (n - 1 - r)
    cache: dict[int, Traffic] = {}
    steps = []
    for st in schedule.steps:
        t = st.traffic
        if id(t) not in cache:
            cache[id(t)] = Traffic(flip(t.src), flip(t.dst), t.op, t.fraction, t.path, t.lane)
        def chunks(st=st):
            b = st.boxes.copy()
            b[:, 0, 0] = np.mod(n - b[:, 0, 0] - b[:, 0, 1], n)
            return b
        steps.append(Step(cache[id(t)], chunks, st.stage))
    return dataclasses.replace(schedule, steps=tuple(steps))


_DUAL_STAGES = {"all-gather": "reduce-scatter", "reduce-scatter": "all-gather",
                "broadcast": "reduce", "reduce": "broadcast"}


def _dual_stage(stage: str) -> str:
    return _DUAL_STAGES.get(stage, stage)


def concat(first: Schedule, second: Schedule, *, collective: str, algorithm: str,
           pipelined: bool | None = None, description: str = "") -> Schedule:
    """Run ``second`` after ``first`` (all-reduce = reduce-scatter, then all-gather)."""
    check_schedule(first, "first")
    check_schedule(second, "second")
    if (first.num_ranks != second.num_ranks or first.slot_shape != second.slot_shape
            or not np.array_equal(first.groups, second.groups)):
        raise CollectivesError("concat needs schedules over the same ranks and slots")
    agents = tuple(dict.fromkeys(first.agents + second.agents))
    def remap(s: Schedule) -> list[Step]:
        if s.agents == agents[: len(s.agents)]:
            return list(s.steps)
        mapping = np.arange(s.num_participants)
        for i, name in enumerate(s.agents):
            mapping[s.num_ranks + i] = s.num_ranks + agents.index(name)
        out = []
        cache: dict[int, Traffic] = {}
        for st in s.steps:
            t = st.traffic
            if id(t) not in cache:
                cache[id(t)] = Traffic(mapping[t.src], mapping[t.dst], t.op, t.fraction,
                                       t.path, t.lane)
            out.append(Step(cache[id(t)], st.chunks, st.stage))
        return out
    return Schedule(
        collective=collective, algorithm=algorithm, num_ranks=first.num_ranks,
        groups=first.groups, group_shape=first.group_shape, slot_shape=first.slot_shape,
        steps=tuple(remap(first) + remap(second)), agents=agents,
        routing="routed" if "routed" in (first.routing, second.routing) else "neighbor",
        pipelined=first.pipelined or second.pipelined if pipelined is None else pipelined,
        root=first.root, weights=first.weights,
        paths=first.paths + second.paths if second.paths else first.paths,
        description=description,
    )


def reduce_scatter_from(ag: Schedule) -> Schedule:
    """The dual of an all-gather: same pattern, reversed, reducing instead of copying.

    Rings are mirrored first, so that a ring reduce-scatter sends to the right
    like its all-gather (any direction would do; this one reads like the textbook).
    """
    check_schedule(ag, "ag")
    if ag.algorithm in ("ring", "bidirectional_ring") and len(ag.group_shape) == 1 \
            and ag.num_groups == 1 and not ag.agents and ag.slot_shape == ag.group_shape:
        return dual(reflect(ag))
    return dual(ag)


def all_reduce_from(ag: Schedule, *, rs: Schedule | None = None, algorithm: str | None = None) -> Schedule:
    """All-reduce as reduce-scatter followed by all-gather (twice the cost of either)."""
    check_schedule(ag, "ag")
    rs = rs if rs is not None else reduce_scatter_from(ag)
    return concat(rs, ag, collective="all_reduce", algorithm=algorithm or ag.algorithm,
                  description=f"{ag.algorithm} reduce-scatter, then {ag.algorithm} all-gather")


def check_schedule(value, what: str = "schedule"):
    """A :class:`~collectives_lib.schedule.Schedule`, else an error saying how to build one."""
    if isinstance(value, Schedule):
        return value
    raise CollectivesError(f"{what} must be a Schedule (such as cl.build('all_reduce', ring, 'ring')), "
                           f"got {value!r}")
