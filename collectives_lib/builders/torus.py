"""Multi-axis tori: all-gather, reduce-scatter and all-reduce over several mesh axes.

``multi_axis`` cuts the array in as many parts as there are axes; part ``j``
gathers along the axes in the order rotated by ``j``, all parts at once, so
every link of every chip is busy. ``sequential_axes`` sends the whole array
along one axis after another. Each axis runs the one-axis algorithm XLA would
use there: a bidirectional ring where the axis wraps, a chain where it does not.

Introduced in the chapter *Inside all-gather: rings, chains and two axes*.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .. import costs
from ..errors import CollectivesError
from ..schedule import Schedule, Step, Traffic, all_reduce_from, dual
from ..topology.torus import axis_names
from .registry import Group, register
from .rings import LINE_ALL_GATHERS, axis_kind


def lift_line(line: Schedule, group_shape, axis: int, done: Sequence[int],
              slot_shape, part: int | None, stage: str, cache: dict) -> list[Step]:
    """Run a 1D all-gather along ``axis`` of the group mesh, on every line at once.

    ``slot_shape`` is the mesh's dims, then one axis for the parts of a multi-axis
    all-gather (``part`` None moves every part), then optionally a trailing axis of halves: a line schedule whose own
    grid is ``(n, 2)`` (a bidirectional ring that sends the opposite block half each
    way) moves the halves it names; a line with a ``(n,)`` grid moves both halves.
    """
    dims = tuple(group_shape)
    D = len(dims)
    n_axis = dims[axis]
    halves = slot_shape[D + 1] if len(slot_shape) > D + 1 else 1
    line_halves = line.slot_shape[1] if len(line.slot_shape) > 1 else 1
    if line_halves not in (1, halves):
        raise CollectivesError(f"a line schedule on a {line.slot_shape} grid cannot be lifted "
                               f"onto a {tuple(slot_shape)} grid")
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
            # chunk volume: the line's share of its own grid times the full extent of
            # the done axes (and of the halves, where the line does not split them)
            vol = np.prod([dims[a] for a in done]) if done else 1
            if part is None and len(slot_shape) > D:
                vol *= slot_shape[D]
            frac = np.tile(t.fraction * n_axis * line_halves * vol * (halves // line_halves) / total, L)
            cache[key] = Traffic(src, dst, np.tile(t.op, L), frac)

        def chunks(step=step, T=len(t)):
            b1 = step.boxes                                         # (T, 1 or 2, 2)
            out = np.empty((L * T, len(slot_shape), 2), dtype=np.int64)
            for a in range(D):
                if a == axis:
                    out[:, a, 0] = np.tile(b1[:, 0, 0], L)
                    out[:, a, 1] = np.tile(b1[:, 0, 1], L)
                elif a in done:
                    out[:, a, 0] = 0
                    out[:, a, 1] = dims[a]
                else:
                    out[:, a, 0] = np.repeat(coords[:, a], T)
                    out[:, a, 1] = 1
            if len(slot_shape) > D:
                out[:, D, 0] = 0 if part is None else part
                out[:, D, 1] = slot_shape[D] if part is None else 1
            if halves > 1:
                if line_halves > 1:
                    out[:, D + 1, 0] = np.tile(b1[:, 1, 0], L)
                    out[:, D + 1, 1] = np.tile(b1[:, 1, 1], L)
                else:
                    out[:, D + 1, 0] = 0
                    out[:, D + 1, 1] = halves
            return out
        steps.append(Step(cache[key], chunks, stage))
    return steps


def _merge_parts(phases: list[list[list[Step]]], num_phases: int, parts: int, tiered: bool) -> list[Step]:
    """Phase p of every part runs at once (the rotated orders put the parts on different
    axes, so they never share a link); the next phase starts when the slowest part has
    finished this one. Each part's transfers keep their lane."""
    steps = []
    merged: dict = {}
    for p in range(num_phases):
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
            stage = (f"ICI phase {p + 1}" if tiered else f"phase {p + 1}") if parts > 1 \
                else members[0].stage
            steps.append(Step(merged[key], chunks, stage))
    return steps


def mesh_all_gather(group_shape, kinds: Sequence[str], *, multi: bool = True,
                    order: Sequence[int] | None = None, outer: int | None = None,
                    outer_stage: str = "") -> Schedule:
    """All-gather over every axis of a mesh of ranks.

    ``kinds[a]`` is the 1D algorithm along axis ``a`` ("bidirectional_ring",
    "bidirectional_ring_whole", "ring" or "chain"). With ``multi=True`` the
    array is cut into as many parts as there are axes and part ``j`` gathers
    along the axes in the order rotated by ``j``, all parts at once, so every
    link of every chip is busy
    (the 2D all-gather of the seed post, about 2x faster than one axis at a
    time). With ``multi=False`` the whole array goes one axis after the other.
    Where an axis is an even bidirectional ring, the grid gains a trailing axis
    of two halves: the block opposite its owner goes half each way round that
    axis (:func:`~collectives_lib.builders.rings.bidirectional_ring_all_gather`),
    so every axis runs at the bandwidth bound.

    ``outer`` is an axis gathered first, whole, before the others (a slower tier:
    each rank's own block crosses it once, then every axis of the faster tier
    gathers the blocks that arrived); its steps are labelled ``outer_stage``.
    """
    dims = tuple(int(d) for d in group_shape)
    D = len(dims)
    n = int(np.prod(dims))
    lines = {a: LINE_ALL_GATHERS[kinds[a]](dims[a]) for a in range(D)}
    inner = [a for a in range(D) if a != outer]
    base_order = list(order) if order is not None else inner
    Di = len(base_order)
    if multi and Di > 1:
        parts = Di
        orders = [base_order[j:] + base_order[:j] for j in range(Di)]
    else:
        parts = 1
        orders = [base_order]
    halves = max(lines[a].slot_shape[1] if len(lines[a].slot_shape) > 1 else 1 for a in base_order)
    slot_shape = dims + (parts,) + ((halves,) if halves > 1 else ())
    cache: dict = {}
    first: list[Step] = []
    if outer is not None and dims[outer] > 1:
        first = lift_line(lines[outer], dims, outer, [], slot_shape, None, outer_stage, cache)
    # phases[j][p] = the steps of part j's p-th axis
    phases: list[list[list[Step]]] = []
    for j, ordr in enumerate(orders):
        seq: list[list[Step]] = []
        done: list[int] = [] if outer is None else [outer]
        for axis in ordr:
            seq.append(lift_line(lines[axis], dims, axis, sorted(done), slot_shape, j,
                                  f"axis {axis_names(len(dims))[axis]}", cache) if dims[axis] > 1 else [])
            done.append(axis)
        phases.append(seq)
    steps = list(first) + _merge_parts(phases, Di, parts, outer is not None)
    name = "multi_axis" if multi and D > 1 else ("sequential_axes" if D > 1 else kinds[0])
    if outer is not None:
        name = "hierarchical"
    desc = (f"{Di}D all-gather: the array is cut in {parts} parts that gather along the "
            f"axes in rotated orders at the same time, keeping every link busy"
            if parts > 1 else "one axis after another")
    return Schedule.local("all_gather", name, n, slot_shape, steps, group_shape=dims,
                          description=desc)



# ---------------------------------------------------------------------------
# Registered: multi_axis and sequential_axes
# ---------------------------------------------------------------------------

def _kinds(group: Group) -> list[str]:
    torus, axes = group.ici
    return [axis_kind(torus, a) for a in axes]


def _reason(group: Group) -> str | None:
    if not group.on_torus_axes:
        return "runs over two or more axes of a torus or TPU slice"
    topo = group.ici[0]
    # a reduction runs the all-gather's steps backwards: against one-way links
    if group.collective.reduces and not topo.bidirectional:
        return (f"multi-axis {group.collective} on the one-way torus {topo!r} would send "
                f"against its links; run it one axis at a time with ring (axes=x)")
    try:
        _kinds(group)
    except CollectivesError as exc:
        return str(exc)
    return None


def _cost(multi: bool, factor: float):
    def cost(group: Group, nbytes: float) -> float:
        W, alpha = group.link()
        return factor * costs.multi_axis_all_gather(group.shape, _kinds(group), nbytes, W, alpha,
                                                    multi=multi)
    return cost


_DESCRIPTIONS = {
    "multi_axis": "all axes at once: one part of the data per axis order",
    "sequential_axes": "one mesh axis after another, the whole array each time",
}


def _register(name: str) -> None:
    multi = name == "multi_axis"

    def ag(g: Group) -> Schedule:
        return mesh_all_gather(g.shape, _kinds(g), multi=multi)

    register(name, "all_gather", applies=_reason, description=_DESCRIPTIONS[name],
             cost=_cost(multi, 1.0))(ag)
    register(name, "reduce_scatter", applies=_reason, description=_DESCRIPTIONS[name],
             cost=_cost(multi, 1.0))(lambda g: dual(ag(g)))

    def all_reduce(g: Group) -> Schedule:
        a = ag(g)
        return all_reduce_from(a, rs=dual(a), algorithm=a.algorithm)
    register(name, "all_reduce", applies=_reason, description=_DESCRIPTIONS[name],
             cost=_cost(multi, 2.0))(all_reduce)


for _name in ("multi_axis", "sequential_axes"):
    _register(_name)
