"""All-to-all: every rank sends a different block to every other rank.

Nothing can be combined on the way, so the question is only how the blocks
travel. On a ring they hop one way (``ring``) or the shorter way round
(``bidirectional_ring``, the opposite block split in two); on a chain every
rank sends by distance, so the middle link, the bottleneck, is busy in every
step; through a switch every block goes straight to its destination
(``direct``). A traffic ``matrix`` (bytes from origin to destination) makes it
imbalanced, as mixture-of-experts routing does.

Introduced in the chapter *All-to-all: a sharded transpose*.
"""

from __future__ import annotations

import numpy as np

from .. import costs
from ..errors import CollectivesError
from ..schedule import COPY, Schedule, Step, Traffic, box_fraction, boxes_array
from ..topology import Switch, Torus
from .registry import Group, every_pair, register
from .rings import line_reason


def traffic_weights(matrix, n: int, parts: int) -> np.ndarray | None:
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


def all_to_all_schedule(n, algorithm, slot_shape, steps, matrix_w, routing, desc) -> Schedule:
    fixed = []
    for src, dst, boxes, stage in steps:
        frac = box_fraction(boxes, slot_shape, matrix_w)
        fixed.append(Step(Traffic.make(src, dst, COPY, frac), boxes, stage))
    return Schedule.local("all_to_all", algorithm, n, slot_shape, fixed, routing=routing,
                          weights=matrix_w, description=desc)


def ring_all_to_all(n: int, matrix=None) -> Schedule:
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
    return all_to_all_schedule(n, "ring", (n, n, 1), steps, traffic_weights(matrix, n, 1), "neighbor",
                         "unidirectional ring: data hops one way until it arrives")


def bidirectional_ring_all_to_all(n: int, matrix=None) -> Schedule:
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
            src.append(r)
            dst.append((r + 1) % n)
            boxes.append(boxes_array([(o, 1), ((o + h) % n, cw_max - h + 1), (0, 2)], n))
        if even:  # the opposite destination, part 0 clockwise
            src.append(r)
            dst.append((r + 1) % n)
            boxes.append(boxes_array([(o, 1), ((o + half) % n, 1), (0, 1)], n))
        o2 = (r + h - 1) % n
        if h <= cw_max:
            src.append(r)
            dst.append((r - 1) % n)
            boxes.append(boxes_array([(o2, 1), ((o2 - cw_max) % n, cw_max - h + 1), (0, 2)], n))
        if even:
            src.append(r)
            dst.append((r - 1) % n)
            boxes.append(boxes_array([(o2, 1), ((o2 - half) % n, 1), (1, 1)], n))
        steps.append((np.concatenate(src), np.concatenate(dst), np.concatenate(boxes), "all-to-all"))
    return all_to_all_schedule(n, "bidirectional_ring", (n, n, 2), steps, traffic_weights(matrix, n, 2),
                         "neighbor", "bidirectional ring: every block takes the shorter way "
                                     "round; floor(N/2) steps")


def chain_all_to_all(n: int, matrix=None) -> Schedule:
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
    return all_to_all_schedule(n, "chain", (n, n, 1), steps, traffic_weights(matrix, n, 1), "routed",
                         "chain: in step k every rank sends directly to the ranks k away; "
                         "the chips in between forward the bytes")


def direct_all_to_all(n: int, matrix=None) -> Schedule:
    """One step: every rank sends every other rank its block directly; the network routes it."""
    i, j = np.nonzero(~np.eye(n, dtype=bool))
    boxes = boxes_array([(i, 1), (j, 1), (0, 1)], len(i))
    return all_to_all_schedule(n, "direct", (n, n, 1), [(i, j, boxes, "all-to-all")],
                         traffic_weights(matrix, n, 1), "routed",
                         "direct: every block goes straight to its destination")



_BUILDERS = {"ring": ring_all_to_all, "bidirectional_ring": bidirectional_ring_all_to_all,
             "chain": chain_all_to_all}
_FORMULAS = {"ring": costs.ring_all_to_all, "bidirectional_ring": costs.bidirectional_ring_all_to_all,
             "chain": costs.chain_all_to_all}
_DESCRIPTIONS = {
    "ring": "unidirectional ring, N-1 steps",
    "bidirectional_ring": "ring using both directions of every link, about N/2 steps",
    "chain": "line without wraparound, N-1 steps",
}


def _line_reason(kind: str):
    def test(group: Group) -> str | None:
        if group.whole_cluster:
            return (f"a {kind} all-to-all is not run across the nodes of {group.topology!r}; "
                    f"use direct or hierarchical")
        why = line_reason(group, kind)
        if why is None and kind == "chain" and group.torus_axis is not None:
            topo, axis = group.topology, group.torus_axis
            if topo.wraparound[axis] and topo.dims[axis] > 2:
                # the chain all-to-all routes its messages; with a wraparound link they
                # would take it, so it would not be a chain at all
                why = (f"the chain all-to-all is for an axis without wraparound; axis "
                       f"{topo.axis_names[axis]} of {topo!r} has it: use bidirectional_ring (or "
                       f"time a copy of the torus without the wraparound to see what losing it "
                       f"costs)")
        return why
    return test


def _axis_kinds(group: Group) -> list[str] | None:
    """The kind of each torus axis the group spans, for the direct all-to-all's closed
    form (:func:`collectives_lib.costs.direct_all_to_all_mesh`): ``bidirectional_ring``
    where an axis of more than two ranks wraps and links go both ways, ``ring`` where they
    go one way, ``chain`` without wraparound; None off a plain torus (its routes another
    rule's)."""
    topo = group.topology
    if not isinstance(topo, Torus) or type(topo).routes is not Torus.routes:
        return None
    wrapping = "bidirectional_ring" if topo.bidirectional else "ring"
    return [wrapping if topo.wraparound[a] and topo.dims[a] > 2 else "chain" for a in group.axes]


def _cost(formula, *, axis: bool, switch: bool):
    """A closed form on one torus axis (``axis``) and/or on a switch (``switch``)."""
    def cost(group: Group, nbytes: float) -> float | None:
        if group.options.get("matrix") is not None:
            return None
        kinds = _axis_kinds(group) if formula is costs.direct_all_to_all else None
        if kinds is not None:
            dims = [group.topology.dims[a] for a in group.axes]
            return costs.direct_all_to_all_mesh(dims, kinds, group.n * nbytes, *group.link())
        on_axis = axis and group.torus_axis is not None
        on_switch = switch and isinstance(group.topology, Switch)
        if not (on_axis or on_switch):
            return None
        W, alpha = group.link()
        return formula(group.n, group.n * nbytes, W, alpha)    # the formulas take the whole array
    return cost


def _register_line(kind: str) -> None:
    register(kind, "all_to_all", applies=_line_reason(kind), description=_DESCRIPTIONS[kind],
             cost=_cost(_FORMULAS[kind], axis=True, switch=kind == "ring"), default=kind == "ring"
             )(lambda g: _BUILDERS[kind](g.n, g.options.get("matrix")))


for _kind in _BUILDERS:
    _register_line(_kind)

register("direct", "all_to_all", description="every block straight to its destination, routed "
                                             "by the network",
         cost=_cost(costs.direct_all_to_all, axis=False, switch=True), nccl="P2P", size=every_pair()
         )(lambda g: direct_all_to_all(g.n, g.options.get("matrix")))
