"""Schematics of the all-reduce schemes a collective library chooses from: a
tree (reduce up, broadcast down), a hierarchical all-reduce (inside the
servers, across them, inside again) and in-network reduction (the switch
adds).

Introduced in the chapter *The all-reduce, step by step*. They are pictures
of the idea, not step-by-step schedules (those are drawn by
:func:`~collectives_lib.draw.schedule_animation`); the tree, though, is the one
the library's ``tree`` schedule builds, its edges read off that schedule. Each
function returns
``{"nodes", "arrows", "figure", "axes", "alt"}``: ``nodes`` the list of drawn
boxes (one per GPU, plus switches), ``arrows`` the list of arrows.
"""

from __future__ import annotations

import numpy as np

from ..errors import CollectivesError
from ..schedule import REDUCE
from .alpha_beta import detached_panels
from .figure import axes_for, blank, label_axes
from .layout import tree_layout
from .style import (FONT, LINK_COLORS, MUTED_COLOR, NODE_COLOR, NODE_EDGE_COLOR, OP_COLORS,
                    PANEL_COLOR, PANEL_EDGE_COLOR, TEXT_COLOR, rank_color, text_on)


def _whole(name: str, value, low: int) -> int:
    if isinstance(value, bool) or int(value) != value or value < low:
        raise CollectivesError(f"{name} must be a whole number >= {low}, got {value!r}")
    return int(value)


def label_box(ax, xy, label, *, color=NODE_COLOR, size=0.32, role="small"):
    """A rounded square at ``xy`` with ``label`` in it (a GPU, a switch): the patch."""
    from matplotlib.patches import FancyBboxPatch

    x, y = xy
    patch = FancyBboxPatch((x - size / 2, y - size / 2), size, size, boxstyle="round,pad=0.02",
                           fc=color, ec=NODE_EDGE_COLOR, lw=0.9, zorder=3)
    ax.add_patch(patch)
    ax.text(x, y, label, ha="center", va="center", fontsize=FONT[role], color=text_on(color), zorder=4)
    return patch


def _arrow(ax, a, b, *, color, style="-", shrink=13, width=1.4, rad=0.0):
    from matplotlib.patches import FancyArrowPatch

    arrow = FancyArrowPatch(a, b, arrowstyle="-|>", mutation_scale=9, color=color, lw=width,
                            linestyle=style, shrinkA=shrink, shrinkB=shrink, zorder=2,
                            connectionstyle=f"arc3,rad={rad}")
    ax.add_patch(arrow)
    return arrow


def _between_boxes(a, b, half: float):
    """The part of the segment from ``a`` to ``b`` outside the squares of half-side
    ``half`` centred on both (data units, equal aspect): an arrow from box to box."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    d = b - a
    t = half / np.abs(d).max()
    return a + t * d, b - t * d


def tree_edges(schedule, tree: int = 0, group: int = 0) -> list[tuple[int, int]]:
    """The ``(child, parent)`` pairs of tree ``tree`` of a pipelined tree all-reduce
    (:func:`~collectives_lib.builders.trees.pipelined_tree_all_reduce`, slots
    ``(n, trees, chunks)``), in group ``group``'s local ranks: every rank that sends
    that tree's chunks up (reduce) to another, read off the schedule's transfers."""
    local = {int(r): i for i, r in enumerate(schedule.groups[group])}
    edges = set()
    for step in schedule.steps:
        t = step.traffic
        up = (t.op == REDUCE) & (step.boxes[:, 1, 0] == tree)
        for s, d in zip(t.src[up].tolist(), t.dst[up].tolist()):
            if s in local and d in local:
                edges.add((local[s], local[d]))
    return sorted(edges)


_TREE_PANELS = (("reduce", "1. reduce up: each GPU adds its children's arrays"),
                ("copy", "2. broadcast down: the root's total to every GPU"))


def draw_tree_all_reduce(n: int = 7, ax=None, *, tree: int = 0):
    """A tree all-reduce over ``n`` GPUs, two panels: the partial sums climb the
    tree to the root (reduce, dashed), then the total comes back down
    (broadcast, solid).

    The tree is the library's own: NCCL's binary tree (``tree=0``; ``ncclGetBtree``,
    rooted at GPU 0, whose one child is the largest power of two below ``n``) or
    its complement (``tree=1``): the two trees of the double binary tree
    (:func:`~collectives_lib.builders.trees.double_binary_tree`) that the ``tree``
    algorithm pipelines over. Its edges are read off that schedule
    (:func:`tree_edges`), not drawn by hand. ``2H`` hops of the whole array up and
    down a tree of height ``H`` instead of the ring's ``2(N-1)`` steps of ``1/N`` of
    it; NCCL cuts the array in chunks and sends half of it over each tree, so that
    every GPU's links carry half the data each way.

    Returns ``{"nodes", "arrows", "edges", "parent", "figure", "axes", "alt"}``:
    ``edges`` the ``(child, parent)`` pairs drawn, ``parent`` the tree as a parent
    array.
    """
    from ..builders.trees import double_binary_tree, pipelined_tree_all_reduce

    n = _whole("n", n, 2)
    if tree not in (0, 1):
        raise CollectivesError("tree must be 0 (NCCL's binary tree) or 1 "
                               f"(its complement), got {tree!r}")
    schedule = pipelined_tree_all_reduce(double_binary_tree(n), 1, algorithm="tree")
    edges = tree_edges(schedule, tree)
    parent = np.full(n, -1, dtype=np.int64)
    for child, up in edges:
        parent[child] = up
    root = int(np.nonzero(parent < 0)[0][0])
    pos = tree_layout(parent)
    levels = int(-pos[:, 1].min()) + 1
    span = np.ptp(pos, axis=0) + (1.2, 0.8)                  # the panel's data extent
    # a panel is about 3.3 inches wide: as tall as the tree's shape needs, 2.2..3.2 in
    height = float(np.clip(3.3 * span[1] / span[0] + 0.45, 2.2, 3.2))
    fig, axes = detached_panels(ax, 2, height)
    nodes, arrows = [], []
    for ax, (op, title) in zip(axes, _TREE_PANELS):
        for child, up in edges:
            a, b = _between_boxes(pos[child], pos[up], 0.2)
            a, b = (a, b) if op == "reduce" else (b, a)
            arrows.append(_arrow(ax, a, b, color=OP_COLORS[op], shrink=1.5,
                                 style="--" if op == "reduce" else "-"))
        for r in range(n):
            nodes.append(label_box(ax, pos[r], str(r), color=rank_color(r)))
        ax.set(xlim=(pos[:, 0].min() - 0.6, pos[:, 0].max() + 0.6),
               ylim=(pos[:, 1].min() - 0.4, 0.4))
        ax.set_aspect("equal")                             # square GPU boxes
        blank(ax)
        label_axes(ax, title, title_role="label")
    which = ("NCCL's binary tree", "the complement of NCCL's binary tree")[tree]
    kids = ", ".join(str(c) for c, up in edges if up == root)
    kin = "child: GPU" if "," not in kids else "children: GPUs"
    deep = f"{levels - 1} level{'s' * (levels > 2)}"
    alt = (f"Two copies of {which} over {n} GPUs, rooted at GPU {root} "
           f"(its {kin} {kids}): on the left dashed arrows carry partial sums from "
           f"the leaves up to GPU {root} in {deep}; on the right solid arrows carry "
           "the total back down.")
    return {"nodes": nodes, "arrows": arrows, "edges": edges, "parent": parent,
            "figure": fig, "axes": list(axes), "alt": alt}


def _server(ax, x0, y0, gpus, label, width):
    from matplotlib.patches import FancyBboxPatch

    ax.add_patch(FancyBboxPatch((x0, y0), width, 0.8, boxstyle="round,pad=0.03", fc=PANEL_COLOR,
                                ec=PANEL_EDGE_COLOR, lw=1.0, zorder=1))
    ax.text(x0 + 0.05, y0 + 0.9, label, fontsize=FONT["detail"], color=MUTED_COLOR, va="bottom")
    return [(x0 + 0.35 + 0.5 * g, y0 + 0.4) for g in range(gpus)]


def draw_hierarchical_all_reduce(servers: int = 2, gpus_per_server: int = 4, ax=None):
    """A hierarchical all-reduce over ``servers`` servers of ``gpus_per_server``
    GPUs, three panels: (1) a reduce-scatter inside each server over NVLink
    leaves GPU g with chunk g summed over its server; (2) GPU g of every server
    all-reduces chunk g with its counterparts over its own network card (one
    of ``gpus_per_server`` rails); (3) an all-gather inside each server
    shares the finished chunks. Only (2) crosses the network, carrying
    ``1/gpus_per_server`` of the array per card."""
    servers, gpus = _whole("servers", servers, 2), _whole("gpus_per_server", gpus_per_server, 2)
    width = 0.5 * gpus + 0.2
    fig, axes = detached_panels(ax, 3, 2.2 + 0.55 * servers)
    titles = ("1. reduce-scatter\nin each server (NVLink)", "2. each GPU's chunk all-reduced\nacross servers (network)",
              "3. all-gather\nin each server (NVLink)")
    nodes, arrows = [], []
    for stage, (ax, title) in enumerate(zip(axes, titles)):
        rows = [_server(ax, 0, -1.3 * s, gpus, f"server {s}", width) for s in range(servers)]
        for s, row in enumerate(rows):
            for g, xy in enumerate(row):
                if stage != 1:
                    nxt = row[(g + 1) % gpus]
                    op = "reduce" if stage == 0 else "copy"
                    arrows.append(_arrow(ax, xy, nxt, color=OP_COLORS[op], style="--" if op == "reduce" else "-",
                                         rad=-0.5 if g == gpus - 1 else -0.35, width=1.1, shrink=9))
                elif s + 1 < servers:
                    arrows.append(_arrow(ax, xy, rows[s + 1][g], color=LINK_COLORS["ib"], width=1.3,
                                         shrink=9))
                    arrows.append(_arrow(ax, rows[s + 1][g], xy, color=LINK_COLORS["ib"], width=1.3,
                                         shrink=9, rad=0.3))
                nodes.append(label_box(ax, xy, f"{s * gpus + g}", color=rank_color(g), size=0.3, role="detail"))
        ax.set(xlim=(-0.2, width + 0.2), ylim=(-1.3 * (servers - 1) - 0.3, 1.25))
        blank(ax)
        label_axes(ax, title, title_role="annotation")
    alt = (f"Three panels of {servers} servers with {gpus} GPUs each: arrows around each server "
           f"(reduce-scatter), arrows between GPU g of every server over the network (all-reduce of "
           f"chunk g), arrows around each server again (all-gather).")
    return {"nodes": nodes, "arrows": arrows, "figure": fig, "axes": list(axes), "alt": alt}


def draw_in_network_all_reduce(n: int = 4, ax=None):
    """In-network reduction (SHARP) over ``n`` GPUs on one switch: each GPU
    sends its array into the switch once (up), the switch adds the arrays as
    their packets stream through, holding only the packets in flight, and
    sends the sum back down to every GPU once. Each GPU link carries the
    array once each way instead of a ring's ``2(N-1)/N`` times."""
    n = _whole("n", n, 2)
    fig, ax = axes_for(ax, 2.5, pyplot=False)
    xs = np.arange(n) - (n - 1) / 2
    switch_xy = (0.0, 1.2)
    nodes = [label_box(ax, switch_xy, "switch\nadds", color=NODE_COLOR, size=0.55, role="annotation")]
    arrows = []
    bottom, top = switch_xy[1] - 0.3, 0.18        # the switch's lower edge, the GPUs' upper edge
    for r, x in enumerate(xs):
        at = switch_xy[0] + 0.4 * x / max(1.0, abs(xs[0]))   # where this GPU's pair meets the switch
        arrows.append(_arrow(ax, (x - 0.07, top), (at - 0.05, bottom), color=OP_COLORS["reduce"],
                             style="--", shrink=1))
        arrows.append(_arrow(ax, (at + 0.05, bottom), (x + 0.07, top), color=OP_COLORS["copy"], shrink=1))
        nodes.append(label_box(ax, (x, 0), str(r), color=rank_color(r)))
    ax.text(xs[-1] + 0.45, 0.75, "up: every GPU's array, once (dashed)\n"
            "down: the sum, once (solid)\nthe switch adds packets in flight;\nit never holds the array",
            fontsize=FONT["annotation"], color=TEXT_COLOR, va="center")
    ax.set(xlim=(xs[0] - 0.5, xs[-1] + 3.4), ylim=(-0.4, 1.65))
    ax.set_aspect("equal")
    blank(ax)
    label_axes(ax, f"In-network reduction over {n} GPUs on one switch", title_role="label")
    alt = (f"{n} GPUs under one switch marked with a plus: a dashed arrow from every GPU up into the "
           "switch and a solid arrow from the switch back down to every GPU.")
    return {"nodes": nodes, "arrows": arrows, "figure": fig, "axes": ax, "alt": alt}
