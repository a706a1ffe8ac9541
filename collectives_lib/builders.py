"""Schedule builders: rings, chains, multi-axis, trees, switches, SHARP, hierarchies.

Each ``*_local`` function builds a one-group schedule over local ranks
``0 .. n-1``; :func:`build` picks the groups a topology and its axes define
and runs the local schedule in all of them at once (see
:func:`collectives_lib.schedule.embed`).

Sizes: V is the size of the whole array the collective is about (the gathered
array for all-gather; each rank's unreduced array for reduce-scatter and
all-reduce; the total over all ranks for all-to-all; the broadcast array).

Introduced across the chapters on all-gather, reduce-scatter, all-to-all and
GPU collectives.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from .errors import CollectivesError, check_power_of_two
from .schedule import (COPY, REDUCE, Schedule, Step, Traffic, box_fraction,
                       boxes_array, concat, dual, reflect)

def _schedule(collective, algorithm, n, slot_shape, steps, *, group_shape=None,
              routing="neighbor", agents=(), pipelined=False, root=None, dest=None,
              weights=None, paths=(), description="") -> Schedule:
    return Schedule(
        collective=collective, algorithm=algorithm, num_ranks=n,
        groups=np.arange(n, dtype=np.int64)[None, :],
        group_shape=tuple(group_shape or (n,)), slot_shape=tuple(slot_shape),
        steps=tuple(steps), agents=tuple(agents), routing=routing,
        pipelined=pipelined, root=root, dest=dest, weights=weights,
        paths=tuple(tuple(p) for p in paths), description=description,
    )


# ---------------------------------------------------------------------------
# All-gather on one line of ranks
# ---------------------------------------------------------------------------

def ring_all_gather_local(n: int) -> Schedule:
    """Unidirectional ring: N-1 steps; at step k rank r passes block (r-k) to r+1."""
    r = np.arange(n)
    traffic = Traffic.make(r, (r + 1) % n, COPY, 1.0 / n)
    steps = [Step(traffic, (lambda k=k: boxes_array([((r - k) % n, 1)], n)), "all-gather")
             for k in range(n - 1)]
    return _schedule("all_gather", "ring", n, (n,), steps,
                     description="unidirectional ring: every rank forwards the block "
                                 "it received last step to its right neighbour")


def bidirectional_ring_all_gather_local(n: int) -> Schedule:
    """Bidirectional ring: each block travels both ways round; ceil((N-1)/2) steps."""
    r = np.arange(n)
    cw_steps = n // 2                    # ceil((n-1)/2)
    ccw_steps = (n - 1) // 2             # floor((n-1)/2)
    both = Traffic.make(np.concatenate([r, r]), np.concatenate([(r + 1) % n, (r - 1) % n]),
                        COPY, 1.0 / n)
    cw_only = Traffic.make(r, (r + 1) % n, COPY, 1.0 / n)
    steps = []
    for h in range(1, cw_steps + 1):
        if h <= ccw_steps:
            chunks = (lambda h=h: boxes_array(
                [(np.concatenate([(r - h + 1) % n, (r + h - 1) % n]), 1)], 2 * n))
            steps.append(Step(both, chunks, "all-gather"))
        else:
            chunks = (lambda h=h: boxes_array([((r - h + 1) % n, 1)], n))
            steps.append(Step(cw_only, chunks, "all-gather"))
    return _schedule("all_gather", "bidirectional_ring", n, (n,), steps,
                     description="bidirectional ring: every block goes both ways round "
                                 "the ring at once, so it needs half as many steps")


def chain_all_gather_local(n: int) -> Schedule:
    """Chain (no wraparound): blocks flow both ways along the line; N-1 steps."""
    steps = []
    for h in range(1, n):
        right = np.arange(h - 1, n - 1)          # r -> r+1 carries block r-h+1
        left = np.arange(1, n - h + 1)           # r -> r-1 carries block r+h-1
        src = np.concatenate([right, left])
        dst = np.concatenate([right + 1, left - 1])
        blocks = np.concatenate([right - h + 1, left + h - 1])
        steps.append(Step(Traffic.make(src, dst, COPY, 1.0 / n),
                          boxes_array([(blocks, 1)], len(src)), "all-gather"))
    return _schedule("all_gather", "chain", n, (n,), steps,
                     description="chain: without the wraparound link, blocks must "
                                 "walk to both ends of the line, N-1 steps")


def recursive_doubling_all_gather_local(n: int) -> Schedule:
    """log2(N) steps; at step k partners 2^k apart swap everything they hold."""
    check_power_of_two(n, "recursive doubling all-gather")
    r = np.arange(n)
    steps = []
    for k in range(int(math.log2(n)) if n > 1 else 0):
        size = 1 << k
        traffic = Traffic.make(r, r ^ size, COPY, size / n)
        steps.append(Step(traffic, boxes_array([((r >> k) << k, size)], n), "all-gather"))
    return _schedule("all_gather", "recursive_doubling", n, (n,), steps, routing="routed",
                     description="recursive doubling: log2(N) rounds; partners 1, 2, 4, ... "
                                 "apart swap all they hold, doubling it")


def direct_all_gather_local(n: int) -> Schedule:
    """One step: every rank sends its block straight to every other rank."""
    i, j = np.nonzero(~np.eye(n, dtype=bool))
    traffic = Traffic.make(i, j, COPY, 1.0 / n)
    return _schedule("all_gather", "direct", n, (n,),
                     [Step(traffic, boxes_array([(i, 1)], len(i)), "all-gather")],
                     routing="routed",
                     description="direct: every rank sends its block to every other "
                                 "rank at once, through the switch")


def multicast_all_gather_local(n: int) -> Schedule:
    """NVLink SHARP all-gather: each rank stores its block once to a multicast
    address; the switch replicates it to every rank, the source included."""
    r = np.arange(n)
    push = Traffic.make(r, np.full(n, n), COPY, 1.0 / n)
    src = np.full(n * n, n)
    dst = np.tile(r, n)
    blocks = np.repeat(r, n)
    mcast = Traffic.make(src, dst, COPY, 1.0 / n)
    steps = [Step(push, boxes_array([(r, 1)], n), "push"),
             Step(mcast, boxes_array([(blocks, 1)], n * n), "multicast")]
    return _schedule("all_gather", "multicast", n, (n,), steps, routing="routed",
                     agents=("switch",), pipelined=True,
                     description="multicast (NVLS): the switch replicates each block to "
                                 "all ranks, including the one that sent it")


# ---------------------------------------------------------------------------
# Multi-dimensional all-gathers on a mesh of ranks
# ---------------------------------------------------------------------------

LINE_ALGORITHMS = {
    "ring": ring_all_gather_local,
    "bidirectional_ring": bidirectional_ring_all_gather_local,
    "chain": chain_all_gather_local,
}


def _lift_line(line: Schedule, group_shape, axis: int, done: Sequence[int],
               slot_shape, part: int | None, stage: str, cache: dict) -> list[Step]:
    """Run a 1D all-gather along ``axis`` of the group mesh, on every line at once."""
    dims = tuple(group_shape)
    n_axis = dims[axis]
    ranks = np.arange(int(np.prod(dims))).reshape(dims)
    lines = np.moveaxis(ranks, axis, -1).reshape(-1, n_axis)        # (L, n_axis)
    L = lines.shape[0]
    coords = np.stack(np.unravel_index(lines[:, 0], dims), axis=1)  # (L, D)
    total = float(np.prod(slot_shape))
    steps = []
    for step in line.steps:
        t = step.traffic
        key = (id(t), axis, tuple(done), part)
        if key not in cache:
            src = lines[:, t.src].ravel()
            dst = lines[:, t.dst].ravel()
            # chunk volume: the 1D count times the full extent of the done axes
            vol = np.prod([dims[a] for a in done]) if done else 1
            frac = np.tile(t.fraction * n_axis * vol / total, L)
            cache[key] = Traffic(src, dst, np.tile(t.op, L), frac)

        def chunks(step=step, T=len(t)):
            b1 = step.boxes                                         # (T, 1, 2)
            out = np.empty((L * T, len(slot_shape), 2), dtype=np.int64)
            for a in range(len(dims)):
                if a == axis:
                    out[:, a, 0] = np.tile(b1[:, 0, 0], L)
                    out[:, a, 1] = np.tile(b1[:, 0, 1], L)
                elif a in done:
                    out[:, a, 0] = 0
                    out[:, a, 1] = dims[a]
                else:
                    out[:, a, 0] = np.repeat(coords[:, a], T)
                    out[:, a, 1] = 1
            if len(slot_shape) > len(dims):
                out[:, len(dims), 0] = 0 if part is None else part
                out[:, len(dims), 1] = 1
            return out
        steps.append(Step(cache[key], chunks, stage))
    return steps


def _check_fractions(schedule: Schedule) -> None:
    for k, step in enumerate(schedule.steps):
        expect = box_fraction(step.boxes, schedule.slot_shape, schedule.weights)
        if not np.allclose(expect, step.traffic.fraction, rtol=1e-9, atol=1e-15):
            raise AssertionError(f"{schedule.algorithm}: step {k} fractions disagree with chunks")


def mesh_all_gather_local(group_shape, kinds: Sequence[str], *, multi: bool = True,
                          order: Sequence[int] | None = None) -> Schedule:
    """All-gather over every axis of a mesh of ranks.

    ``kinds[a]`` is the 1D algorithm along axis ``a`` ("bidirectional_ring",
    "ring" or "chain"). With ``multi=True`` the array is cut into as many parts
    as there are axes and part ``j`` gathers along the axes in the order
    rotated by ``j``, all parts at once, so every link of every chip is busy
    (the 2D all-gather of the seed post, about 2x faster than one axis at a
    time). With ``multi=False`` the whole array goes one axis after the other.
    """
    dims = tuple(int(d) for d in group_shape)
    D = len(dims)
    n = int(np.prod(dims))
    lines = {a: LINE_ALGORITHMS[kinds[a]](dims[a]) for a in range(D)}
    base_order = list(order) if order is not None else list(range(D))
    if multi and D > 1:
        parts = D
        orders = [base_order[j:] + base_order[:j] for j in range(D)]
    else:
        parts = 1
        orders = [base_order]
    slot_shape = dims + (parts,)
    cache: dict = {}
    # phases[j][p] = the steps of part j's p-th axis
    phases: list[list[list[Step]]] = []
    for j, ordr in enumerate(orders):
        seq: list[list[Step]] = []
        done: list[int] = []
        for axis in ordr:
            seq.append(_lift_line(lines[axis], dims, axis, sorted(done), slot_shape, j,
                                  f"axis {'xyzwvu'[axis]}", cache) if dims[axis] > 1 else [])
            done.append(axis)
        phases.append(seq)
    # Phase p of every part runs at once (the rotated orders put the parts on
    # different axes, so they never share a link); the next phase starts when
    # the slowest part has finished this one.
    steps = []
    merged: dict = {}
    for p in range(D):
        length = max(len(ph[p]) for ph in phases)
        for k in range(length):
            members = [ph[p][k] for ph in phases if k < len(ph[p])]
            key = tuple(id(m.traffic) for m in members)
            if key not in merged:
                lanes = [j for j, ph in enumerate(phases) if k < len(ph[p])]
                merged[key] = Traffic(np.concatenate([m.traffic.src for m in members]),
                                      np.concatenate([m.traffic.dst for m in members]),
                                      np.concatenate([m.traffic.op for m in members]),
                                      np.concatenate([m.traffic.fraction for m in members]),
                                      None,
                                      np.concatenate([np.full(len(m.traffic), j)
                                                      for j, m in zip(lanes, members)]))
            chunks = (lambda members=members: np.concatenate([m.boxes for m in members]))
            stage = f"phase {p + 1}" if parts > 1 else members[0].stage
            steps.append(Step(merged[key], chunks, stage))
    name = "multi_axis" if multi and D > 1 else ("sequential_axes" if D > 1 else kinds[0])
    desc = (f"{D}D all-gather: the array is cut in {parts} parts that gather along the "
            f"axes in rotated orders at the same time, keeping every link busy"
            if parts > 1 else "one axis after another")
    return _schedule("all_gather", name, n, slot_shape, steps, group_shape=dims,
                     description=desc)


# ---------------------------------------------------------------------------
# Reduce-scatter and all-reduce built from all-gathers
# ---------------------------------------------------------------------------

def reduce_scatter_from(ag: Schedule) -> Schedule:
    """The dual of an all-gather: same pattern, reversed, reducing instead of copying.

    Rings are mirrored first, so that a ring reduce-scatter sends to the right
    like its all-gather (any direction would do; this one reads like the textbook).
    """
    if ag.algorithm in ("ring", "bidirectional_ring") and len(ag.group_shape) == 1 \
            and ag.num_groups == 1 and not ag.agents and ag.slot_shape == ag.group_shape:
        return dual(reflect(ag))
    return dual(ag)


def all_reduce_from(ag: Schedule, *, rs: Schedule | None = None, algorithm: str | None = None) -> Schedule:
    """All-reduce as reduce-scatter followed by all-gather (twice the cost of either)."""
    rs = rs if rs is not None else reduce_scatter_from(ag)
    return concat(rs, ag, collective="all_reduce", algorithm=algorithm or ag.algorithm,
                  description=f"{ag.algorithm} reduce-scatter, then {ag.algorithm} all-gather")


def recursive_doubling_all_reduce_local(n: int) -> Schedule:
    """log2(N) steps; partners 2^k apart swap and add their whole arrays."""
    check_power_of_two(n, "recursive doubling all-reduce")
    r = np.arange(n)
    steps = []
    full = boxes_array([(0, n)], n)
    for k in range(int(math.log2(n)) if n > 1 else 0):
        steps.append(Step(Traffic.make(r, r ^ (1 << k), REDUCE, 1.0), full, "all-reduce"))
    return _schedule("all_reduce", "recursive_doubling", n, (n,), steps, routing="routed",
                     description="recursive doubling: log2(N) rounds, each an exchange of "
                                 "the whole array with a partner 1, 2, 4, ... away")


def binomial_broadcast_local(n: int, root: int = 0, chunks: int = 1) -> Schedule:
    """Binomial tree: in round k every rank that has the data sends it 2^k ranks on."""
    steps = []
    rel = np.arange(n)
    k = 0
    while (1 << k) < n:
        size = 1 << k
        have = rel[rel < size]
        send = have[have + size < n]
        src = (send + root) % n
        dst = (send + size + root) % n
        steps.append(Step(Traffic.make(src, dst, COPY, 1.0),
                          boxes_array([(0, chunks)], len(src)), "broadcast"))
        k += 1
    return _schedule("broadcast", "binomial_tree", n, (chunks,), steps, routing="routed",
                     root=root, description="binomial tree: the set of ranks holding "
                                            "the data doubles every round, log2(N) rounds")


def tree_all_reduce_local(n: int) -> Schedule:
    """Binomial-tree reduce to rank 0, then binomial-tree broadcast back."""
    bc = binomial_broadcast_local(n, 0)
    red = dual(bc)
    steps = []
    for s in red.steps + bc.steps:
        steps.append(Step(s.traffic, boxes_array([(0, n)], len(s.traffic)), s.stage))
    return _schedule("all_reduce", "tree", n, (n,), steps, routing="routed",
                     description="tree: reduce up a binomial tree to rank 0 (log2 N "
                                 "rounds), then broadcast back down (log2 N rounds)")


def sharp_all_reduce_local(n: int) -> Schedule:
    """In-network reduction: every rank sends its array into the switch, which sums
    it and multicasts the result back. The two stages stream at once."""
    r = np.arange(n)
    full = boxes_array([(0, n)], n)
    up = Traffic.make(r, np.full(n, n), REDUCE, 1.0)
    down = Traffic.make(np.full(n, n), r, COPY, 1.0)
    return _schedule("all_reduce", "sharp", n, (n,),
                     [Step(up, full, "reduce in switch"), Step(down, full, "multicast")],
                     routing="routed", agents=("switch",), pipelined=True,
                     description="SHARP: the switch adds the arrays as they arrive and "
                                 "multicasts the sum; each byte crosses each link once")


def sharp_reduce_scatter_local(n: int) -> Schedule:
    r = np.arange(n)
    up = Traffic.make(r, np.full(n, n), REDUCE, 1.0)
    down = Traffic.make(np.full(n, n), r, COPY, 1.0 / n)
    return _schedule("reduce_scatter", "sharp", n, (n,),
                     [Step(up, boxes_array([(0, n)], n), "reduce in switch"),
                      Step(down, boxes_array([(r, 1)], n), "scatter")],
                     routing="routed", agents=("switch",), pipelined=True,
                     description="SHARP reduce-scatter: the switch sums and sends each "
                                 "rank only its block")


def direct_reduce_scatter_local(n: int) -> Schedule:
    i, j = np.nonzero(~np.eye(n, dtype=bool))
    return _schedule("reduce_scatter", "direct", n, (n,),
                     [Step(Traffic.make(i, j, REDUCE, 1.0 / n), boxes_array([(j, 1)], len(i)),
                           "reduce-scatter")],
                     routing="routed",
                     description="direct: every rank sends each block straight to its owner")


# ---------------------------------------------------------------------------
# Broadcast and reduce
# ---------------------------------------------------------------------------

def chain_broadcast_local(n: int, root: int = 0, chunks: int = 8) -> Schedule:
    """Pipelined chain from the root: chunk c leaves rank i at step c + i."""
    order = (np.arange(n) + root) % n
    steps = []
    for k in range(chunks + n - 2 if n > 1 else 0):
        pos = np.arange(n - 1)
        c = k - pos
        ok = (c >= 0) & (c < chunks)
        pos, c = pos[ok], c[ok]
        steps.append(Step(Traffic.make(order[pos], order[pos + 1], COPY, 1.0 / chunks),
                          boxes_array([(c, 1)], len(pos)), "broadcast"))
    return _schedule("broadcast", "chain", n, (chunks,), steps, routing="routed", root=root,
                     description=f"pipelined chain: the array in {chunks} chunks streams "
                                 f"down the line, N - 2 + {chunks} steps")


def direct_broadcast_local(n: int, root: int = 0) -> Schedule:
    dst = np.array([i for i in range(n) if i != root])
    return _schedule("broadcast", "direct", n, (1,),
                     [Step(Traffic.make(np.full(len(dst), root), dst, COPY, 1.0),
                           boxes_array([(0, 1)], len(dst)), "broadcast")] if n > 1 else [],
                     routing="routed", root=root,
                     description="direct: the root sends the array to every rank")


def multicast_broadcast_local(n: int, root: int = 0) -> Schedule:
    r = np.arange(n)
    steps = [Step(Traffic.make([root], [n], COPY, 1.0), boxes_array([(0, 1)], 1), "push"),
             Step(Traffic.make(np.full(n, n), r, COPY, 1.0), boxes_array([(0, 1)], n), "multicast")]
    return _schedule("broadcast", "multicast", n, (1,), steps, routing="routed",
                     agents=("switch",), pipelined=True, root=root,
                     description="multicast: the switch replicates the root's array")


def sharp_reduce_local(n: int, root: int = 0) -> Schedule:
    r = np.arange(n)
    steps = [Step(Traffic.make(r, np.full(n, n), REDUCE, 1.0), boxes_array([(0, 1)], n), "reduce in switch"),
             Step(Traffic.make([n], [root], COPY, 1.0), boxes_array([(0, 1)], 1), "deliver")]
    return _schedule("reduce", "sharp", n, (1,), steps, routing="routed", agents=("switch",),
                     pipelined=True, root=root,
                     description="SHARP reduce: the switch sums and sends the result to the root")


def direct_reduce_local(n: int, root: int = 0) -> Schedule:
    src = np.array([i for i in range(n) if i != root])
    return _schedule("reduce", "direct", n, (1,),
                     [Step(Traffic.make(src, np.full(len(src), root), REDUCE, 1.0),
                           boxes_array([(0, 1)], len(src)), "reduce")] if n > 1 else [],
                     routing="routed", root=root,
                     description="direct: every rank sends its array to the root")


# ---------------------------------------------------------------------------
# All-to-all
# ---------------------------------------------------------------------------

def _a2a_weights(matrix, n: int, parts: int) -> np.ndarray | None:
    if matrix is None:
        return None
    m = np.asarray(matrix, dtype=float)
    if m.shape != (n, n):
        raise CollectivesError(f"traffic matrix must be {n}x{n} (origin x destination), got {m.shape}")
    if (m < 0).any() or not np.isfinite(m).all():
        raise CollectivesError("traffic matrix entries must be finite and >= 0")
    total = m.sum()
    if total <= 0:
        raise CollectivesError("traffic matrix must carry some bytes")
    w = m / total
    return np.repeat(w[:, :, None], parts, axis=2) / parts


def _a2a_schedule(n, algorithm, slot_shape, steps, matrix_w, routing, desc) -> Schedule:
    sched = _schedule("all_to_all", algorithm, n, slot_shape, [], routing=routing,
                      weights=matrix_w, description=desc)
    fixed = []
    for src, dst, boxes, stage in steps:
        frac = box_fraction(boxes, slot_shape, matrix_w)
        fixed.append(Step(Traffic.make(src, dst, COPY, frac), boxes, stage))
    return Schedule(**{**sched.__dict__, "steps": tuple(fixed)})


def ring_all_to_all_local(n: int, matrix=None) -> Schedule:
    """Unidirectional ring: data hops clockwise until it reaches its destination.

    At step h every rank forwards what origin (r - h + 1) sent to destinations
    h or more hops away; N - 1 steps.
    """
    r = np.arange(n)
    steps = []
    for h in range(1, n):
        o = (r - h + 1) % n
        boxes = boxes_array([(o, 1), ((o + h) % n, n - h), (0, 1)], n)
        steps.append((r, (r + 1) % n, boxes, "all-to-all"))
    return _a2a_schedule(n, "ring", (n, n, 1), steps, _a2a_weights(matrix, n, 1), "neighbor",
                         "unidirectional ring: data hops one way until it arrives")


def bidirectional_ring_all_to_all_local(n: int, matrix=None) -> Schedule:
    """Bidirectional ring: each block goes the short way round; the block exactly
    opposite (even N) is split half each way. floor(N/2) steps."""
    r = np.arange(n)
    half = n // 2
    even = n % 2 == 0
    steps = []
    for h in range(1, half + 1):
        src, dst, boxes = [], [], []
        # clockwise: destinations o+h .. o+cw_max, where cw_max = ceil(n/2)-1 (+ tie part 0)
        cw_max = (n - 1) // 2
        o = (r - h + 1) % n
        if h <= cw_max:
            src.append(r); dst.append((r + 1) % n)
            boxes.append(boxes_array([(o, 1), ((o + h) % n, cw_max - h + 1), (0, 2)], n))
        if even:  # the opposite destination, part 0 clockwise
            src.append(r); dst.append((r + 1) % n)
            boxes.append(boxes_array([(o, 1), ((o + half) % n, 1), (0, 1)], n))
        o2 = (r + h - 1) % n
        if h <= cw_max:
            src.append(r); dst.append((r - 1) % n)
            boxes.append(boxes_array([(o2, 1), ((o2 - cw_max) % n, cw_max - h + 1), (0, 2)], n))
        if even:
            src.append(r); dst.append((r - 1) % n)
            boxes.append(boxes_array([(o2, 1), ((o2 - half) % n, 1), (1, 1)], n))
        steps.append((np.concatenate(src), np.concatenate(dst), np.concatenate(boxes), "all-to-all"))
    return _a2a_schedule(n, "bidirectional_ring", (n, n, 2), steps, _a2a_weights(matrix, n, 2),
                         "neighbor", "bidirectional ring: every block takes the shorter way "
                                     "round; floor(N/2) steps")


def chain_all_to_all_local(n: int, matrix=None) -> Schedule:
    """Chain: in step k every rank sends straight to the ranks k to its left and
    right; the messages cross k links. N - 1 steps.

    Forwarding hop by hop in lock-step would leave the middle links idle while
    the end links are busy; sending by distance keeps the middle of the chain,
    the bottleneck, busy in every step, which reaches the bound V / (4 W).
    """
    r = np.arange(n)
    steps = []
    for k in range(1, n):
        right = r[r + k < n]
        left = r[r - k >= 0]
        src = np.concatenate([right, left])
        dst = np.concatenate([right + k, left - k])
        boxes = boxes_array([(src, 1), (dst, 1), (0, 1)], len(src))
        steps.append((src, dst, boxes, "all-to-all"))
    return _a2a_schedule(n, "chain", (n, n, 1), steps, _a2a_weights(matrix, n, 1), "routed",
                         "chain: in step k every rank sends directly to the ranks k away; "
                         "the chips in between forward the bytes")


def direct_all_to_all_local(n: int, matrix=None) -> Schedule:
    """One step: every rank sends every other rank its block directly; the network routes it."""
    i, j = np.nonzero(~np.eye(n, dtype=bool))
    boxes = boxes_array([(i, 1), (j, 1), (0, 1)], len(i))
    return _a2a_schedule(n, "direct", (n, n, 1), [(i, j, boxes, "all-to-all")],
                         _a2a_weights(matrix, n, 1), "routed",
                         "direct: every block goes straight to its destination")


def gather_local(n: int, root: int = 0, paths: Sequence[Sequence[Sequence[int]]] | None = None) -> Schedule:
    """Every rank sends its block straight to the root in one step (routed).

    ``paths[i]``, if given, lists node paths for rank i's block; the block is
    split evenly over them (for example the two link-disjoint routes on a mesh).
    """
    src, dst, boxes, fractions, path_ids, all_paths = [], [], [], [], [], []
    slots = 1
    for p in (paths or []):
        if p:
            slots = math.lcm(slots, len(p))
    for i in range(n):
        if i == root:
            continue
        mine = paths[i] if paths and paths[i] else [None]
        k = len(mine)
        for j, p in enumerate(mine):
            src.append(i); dst.append(root)
            boxes.append([(i, 1), (j * slots // k, slots // k)])
            fractions.append(1.0 / (n * k))
            if p is None:
                path_ids.append(-1)
            else:
                path_ids.append(len(all_paths)); all_paths.append(tuple(p))
    traffic = Traffic.make(src, dst, COPY, fractions, path_ids if all_paths else None)
    steps = [Step(traffic, np.asarray(boxes, dtype=np.int64).reshape(-1, 2, 2), "gather")] if src else []
    return _schedule("gather", "direct" if not all_paths else "multipath", n, (n, slots), steps,
                     routing="routed", root=root, paths=all_paths,
                     description="gather: every rank sends its block to the root at once")


# ---------------------------------------------------------------------------
# Point-to-point
# ---------------------------------------------------------------------------

def send_local(n: int, src: int, dst: int, paths: Sequence[Sequence[int]] = ()) -> Schedule:
    """Send the array from ``src`` to ``dst``, split evenly over ``paths`` (node lists)."""
    k = max(1, len(paths))
    path_ids = np.arange(k) if paths else np.full(1, -1)
    traffic = Traffic.make(np.full(k, src), np.full(k, dst), COPY, 1.0 / k, path_ids)
    return _schedule("send", "multipath" if len(paths) > 1 else "direct", n, (k,),
                     [Step(traffic, boxes_array([(np.arange(k), 1)], k), "send")],
                     routing="routed", root=src, dest=dst, paths=paths,
                     description=f"send over {k} link-disjoint path{'s' if k > 1 else ''}")


# ---------------------------------------------------------------------------
# Hierarchical (GPU clusters): NVLink inside nodes, InfiniBand rails between
# ---------------------------------------------------------------------------

def hierarchical_all_gather_local(nodes: int, gpus: int, *, intra: str = "ring") -> Schedule:
    """Rails first: GPUs with the same local index gather across nodes over
    InfiniBand (one ring per rail), then each node gathers over NVLink.

    Slots are (node, gpu). The two stages stream (pipelined), so the slower one
    sets the time.
    """
    dims = (nodes, gpus)
    slot_shape = dims + (1,)
    cache: dict = {}
    steps: list[Step] = []
    if nodes > 1:
        steps += _lift_line(ring_all_gather_local(nodes), dims, 0, [], slot_shape, 0,
                            "inter-node (InfiniBand)", cache)
    if gpus > 1:
        line = direct_all_gather_local(gpus) if intra == "direct" else ring_all_gather_local(gpus)
        steps += _lift_line(line, dims, 1, [0], slot_shape, 0, "intra-node (NVLink)", cache)
    return _schedule("all_gather", "hierarchical", nodes * gpus, slot_shape, steps,
                     group_shape=dims, routing="routed", pipelined=True,
                     description="hierarchical: a ring per rail across nodes over "
                                 "InfiniBand, then a ring inside each node over NVLink")


def hierarchical_all_to_all_local(nodes: int, gpus: int) -> Schedule:
    """Inside each node, GPU g first collects from its node peers everything bound
    for GPU g of every node; then rail g exchanges across nodes. Nothing can be
    reduced on the way: every byte still has to cross the network."""
    n = nodes * gpus
    dims = (nodes, gpus)
    slot_shape = (nodes, gpus, nodes, gpus, 1)
    r = np.arange(n)
    node, gpu = r // gpus, r % gpus
    steps = []
    if gpus > 1:
        # stage 1: rank (m, g) sends to (m, g') data from origin (m, g) for all (*, g')
        src, dst, boxes = [], [], []
        for d in range(1, gpus):
            g2 = (gpu + d) % gpus
            src.append(r); dst.append(node * gpus + g2)
            boxes.append(boxes_array([(node, 1), (gpu, 1), (0, nodes), (g2, 1), (0, 1)], n))
        src, dst, boxes = map(np.concatenate, (src, dst, boxes))
        steps.append((src, dst, boxes, "intra-node (NVLink)"))
    if nodes > 1:
        # stage 2: rank (m, g) sends to (m', g) everything from node m bound for (m', g)
        src, dst, boxes = [], [], []
        for d in range(1, nodes):
            m2 = (node + d) % nodes
            src.append(r); dst.append(m2 * gpus + gpu)
            boxes.append(boxes_array([(node, 1), (0, gpus), (m2, 1), (gpu, 1), (0, 1)], n))
        src, dst, boxes = map(np.concatenate, (src, dst, boxes))
        steps.append((src, dst, boxes, "inter-node (InfiniBand)"))
    sched = _a2a_schedule(n, "hierarchical", slot_shape, steps, None, "routed",
                          "hierarchical all-to-all: regroup by destination GPU inside "
                          "the node over NVLink, then exchange along each rail")
    return Schedule(**{**sched.__dict__, "group_shape": dims, "pipelined": True})


def multichannel_ring_order(nodes: int, gpus: int, channel: int) -> np.ndarray:
    """Ring order of channel ``c`` over a cluster: each node is entered on the GPU
    whose rail the previous node left on, so inter-node hops stay on one rail and
    the channels together use every NIC."""
    order = []
    for m in range(nodes):
        e = (channel - m) % gpus
        order.extend(m * gpus + (e + i) % gpus for i in range(gpus))
    return np.asarray(order)


def multichannel_ring_all_gather_local(nodes: int, gpus: int) -> Schedule:
    """NCCL-style rings over a cluster: one ring (channel) per GPU of a node, each
    carrying 1/gpus of the data, arranged so that all NICs work at once."""
    n = nodes * gpus
    channels = gpus if nodes > 1 else 1
    orders = [multichannel_ring_order(nodes, gpus, c) for c in range(channels)]
    src = np.concatenate([o for o in orders])
    dst = np.concatenate([np.roll(o, -1) for o in orders])
    traffic = Traffic.make(src, dst, COPY, 1.0 / (n * channels))
    steps = []
    for k in range(n - 1):
        def chunks(k=k):
            parts = []
            for c, o in enumerate(orders):
                i = np.arange(n)
                blocks = o[(i - k) % n]               # ring position i sends block of pos i-k
                parts.append(boxes_array([(blocks, 1), (c, 1)], n))
            return np.concatenate(parts)
        steps.append(Step(traffic, chunks, "all-gather"))
    return _schedule("all_gather", "ring", n, (n, channels), steps, routing="routed",
                     description=f"{channels} rings (channels), each over every GPU, "
                                 "entering each node on the rail it left the last one")


# ---------------------------------------------------------------------------
# Rabenseifner
# ---------------------------------------------------------------------------

def rabenseifner_all_reduce_local(n: int) -> Schedule:
    """Recursive-halving reduce-scatter, then recursive-doubling all-gather."""
    check_power_of_two(n, "Rabenseifner all-reduce")
    ag = recursive_doubling_all_gather_local(n)
    return concat(dual(ag, algorithm="recursive_halving"), ag, collective="all_reduce",
                  algorithm="rabenseifner",
                  description="Rabenseifner: recursive halving reduce-scatter, then "
                              "recursive doubling all-gather: log2(N) rounds each, "
                              "bandwidth-optimal")
