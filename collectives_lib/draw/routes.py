"""Cuts and routes drawn over the topology pictures: a bisection with the
bandwidth across it, routes with their hops on a torus or as a row of nodes,
and one route climbing a GPU cluster's fat tree.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..errors import CollectivesError
from ..topology import LINK_CLASSES, GpuCluster, Switch, Topology, Torus
from ..units import format_rate
from .style import (FAINT_COLOR, FONT, LINK_COLORS, LINK_LABELS, LINK_LINESTYLES, NODE_COLOR,
                    NODE_EDGE_COLOR, OP_COLORS, PATH_STYLES, RANK_COLORS, ROUTE_COLOR,
                    TEXT_COLOR, text_on)
from .figure import axes_for, blank, topology_name
from .layout import fat_tree_layout, grid_coords, grid_layout, ring_layout, torus_link_paths, undirected_links
from .networks import draw_fat_tree, draw_switch
from .topology import draw_torus, draw_torus_summary


def draw_bisection(topology: Topology, side=None, ax=None):
    """A cut through a topology with the bandwidth across it annotated.

    ``side`` lists the endpoints on one side (default: the topology's own
    bisection, across the longest axis of a torus or between the two halves
    of a cluster). The bandwidth is :meth:`~collectives_lib.topology.Topology.cut_bandwidth`
    (one way, from ``side`` to the rest). Tori (1D, 2D) show the links the
    cut crosses in vermillion; 3D tori show the cut plane on the box;
    switches and fat trees colour the two sides.

    Returns the drawing's dict plus ``"cut_bandwidth"`` (bytes/s) and
    ``"crossing"`` (ids of links from ``side`` to the rest, tori).
    """
    from matplotlib.collections import LineCollection

    if side is None:
        side = topology.default_bisection()
    side = np.unique(np.asarray(list(side), dtype=np.int64))
    rest = np.setdiff1d(np.arange(topology.num_ranks), side)
    bw = topology.cut_bandwidth(side)
    links = topology.links
    in_a = np.zeros(topology.num_vertices, dtype=bool)
    in_a[side] = True
    in_b = np.zeros(topology.num_vertices, dtype=bool)
    in_b[rest] = True
    crossing = np.nonzero(in_a[links.src] & in_b[links.dst])[0]
    text = f"cut bandwidth (one way): {format_rate(bw)}"
    if isinstance(topology, Torus) and len(topology.dims) == 3 and topology.dims[2] > 8:
        art = draw_torus_summary(topology, ax=ax, cut=True)
        art.update(cut_bandwidth=bw, crossing=crossing)
        return art
    if isinstance(topology, Torus) and len(topology.dims) <= 2:
        from matplotlib.colors import to_rgba

        colors = [to_rgba(RANK_COLORS[4]) if r in set(side.tolist()) else to_rgba(RANK_COLORS[2])
                  for r in range(topology.num_ranks)]
        art = draw_torus(topology, ax=ax, node_colors=colors, legend=False,
                         labels=topology.num_ranks <= 16,
                         title=f"Bisection of the {topology_name(topology)}: {text}")
        a = art["axes"]
        if len(topology.dims) == 2 or not topology.wraparound[0] or topology.dims[0] <= 2:
            pos = grid_layout(topology)
            vec = {0: np.array([1.0, 0.0])}
            if len(topology.dims) == 2:
                vec[1] = np.array([0.0, 1.0])
            sel = undirected_links(topology, crossing)
            ids, paths, wraps = torus_link_paths(topology, pos, vec, select=sel)
        else:  # a ring: chords
            pos = ring_layout(topology.num_ranks)
            ids = undirected_links(topology, crossing)
            paths = [np.array([pos[links.src[i]], pos[links.dst[i]]]) for i in ids]
        cut = LineCollection(paths, colors=OP_COLORS["reduce"], linewidths=3.2, zorder=2)
        a.add_collection(cut, autolim=False)
        n_cross = len(crossing)
        per = format_rate(links.bandwidth[crossing[0]]) if n_cross else "0"
        if n_cross and np.ptp(links.bandwidth[crossing]) > 0:
            per = "their bandwidths"
        from matplotlib.lines import Line2D
        from matplotlib.patches import Patch

        handles = [Patch(facecolor=RANK_COLORS[4], edgecolor=NODE_EDGE_COLOR, label=f"side A: {len(side)} chips"),
                   Patch(facecolor=RANK_COLORS[2], edgecolor=NODE_EDGE_COLOR, label=f"side B: {len(rest)} chips"),
                   Line2D([], [], color=OP_COLORS["reduce"], lw=3,
                          label=f"{n_cross} links A\u2192B\n\u00d7 {per}\n= {format_rate(bw)}")]
        a.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=FONT["annotation"],
                 frameon=False, borderaxespad=0.0)
        art.update(cut=cut, cut_bandwidth=bw, crossing=crossing)
        art["alt"] = (f"The {topology_name(topology)} split into two halves of {len(side)} and {len(rest)} "
                      f"chips; the {n_cross} links crossing from one half to the other are highlighted, "
                      f"{format_rate(bw)} one way in all.")
        return art
    if isinstance(topology, Torus):  # a small 3D torus: panels, side A highlighted
        art = draw_torus(topology, ax=ax, highlight=side.tolist(),
                         title=f"Bisection of the {topology_name(topology)}: {text} (side A filled)")
        art.update(cut_bandwidth=bw, crossing=crossing)
        art["alt"] = (f"The {topology_name(topology)} in z-plane panels with one side of the cut "
                      f"({len(side)} chips) filled; {format_rate(bw)} can cross one way.")
        return art
    if isinstance(topology, Switch):
        art = draw_switch(topology, ax=ax, sides=(side, rest))
        a = art["axes"]
        n = topology.num_ranks
        if side.tolist() == list(range(len(side))):  # a contiguous arc from rank 0: cut between the arcs
            ang = np.deg2rad(90.0 + 180.0 / n)
            ang2 = np.deg2rad(90.0 - 360.0 * (len(side) - 0.5) / n)
            a.plot([1.18 * np.cos(ang), 0, 1.18 * np.cos(ang2)], [1.18 * np.sin(ang), 0, 1.18 * np.sin(ang2)],
                   color=OP_COLORS["reduce"], ls="--", lw=1.8, zorder=6)
        a.set_title(f"Bisection of the {topology_name(topology)}: {text}", fontsize=FONT["title"])
    elif isinstance(topology, GpuCluster):
        art = draw_fat_tree(topology, ax=ax, sides=(side, rest),
                            title=f"Bisection of {topology_name(topology)}: {text}")
        a = art["axes"]
        verts = art["nodes"].get_paths()
        xs = [(p.vertices[:, 0].min() + p.vertices[:, 0].max()) / 2 for p in verts]
        k = len(side) // topology.gpus_per_node if art["nodes"] is not None else 0
        aggregate = len(verts) != topology.num_ranks
        if aggregate:
            k = -(-len(side) // (topology.gpus_per_node * topology.nodes_per_su))
            left, right = xs[k - 1], xs[min(k, len(xs) - 1)]
        else:
            left, right = xs[len(side) - 1], xs[min(len(side), len(xs) - 1)]
        x = (left + right) / 2
        ylo, yhi = a.get_ylim()
        art["cut"] = a.plot([x, x], [ylo + 0.1, yhi - 0.1], color=OP_COLORS["reduce"], ls="--", lw=1.8,
                            zorder=6)[0]
        # the spine's label sits where the cut crosses the spine: lift it over the line on a
        # white backing (the footer under the axes is below the line's end)
        art["spine_label"].set(zorder=7, bbox={"boxstyle": "square,pad=0.25", "facecolor": "white",
                                               "edgecolor": "none"})
    else:
        raise CollectivesError(f"draw_bisection has no drawing for {topology!r}")
    from matplotlib.patches import Patch

    a.legend(handles=[Patch(facecolor=RANK_COLORS[4], edgecolor=NODE_EDGE_COLOR, label=f"side A: {len(side)} GPUs"),
                      Patch(facecolor=RANK_COLORS[2], edgecolor=NODE_EDGE_COLOR, label=f"side B: {len(rest)} GPUs")],
             loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=FONT["annotation"], frameon=False)
    art.update(cut_bandwidth=bw, crossing=crossing)
    art["alt"] = (f"{topology_name(topology)} split into two sides of {len(side)} and {len(rest)} endpoints "
                  f"by a dashed line; {format_rate(bw)} can cross from one side to the other.")
    return art


#: Points of the hop numbers on a route over a torus: 9 pt whatever the grid's size,
#: so a badge stays legible where a chapter shows a whole 16x16 pod at the page's width.
HOP_BADGE_FONT = FONT["label"]


def _as_rank(topology, x) -> int:
    if isinstance(topology, Torus) and np.iterable(x):
        return topology.rank_of(x)
    return int(x)


def _hops(h: int) -> str:
    return f"{h} hop" if h == 1 else f"{h} hops"


class _RouteStyle(NamedTuple):
    font: str            # FONT key of the words
    gap: float           # between a link and its nodes (node widths)
    above: float         # a link's label above the row
    below: float         # a node's label below the row
    link_width: float    # points
    node_size: float     # points


_SHORT_ROUTE = _RouteStyle("label", 0.22, 0.1, 0.16, 4, 16)
_LONG_ROUTE = _RouteStyle("detail", 0.28, 0.08, 0.12, 2.5, 9)


def draw_route(topology: Topology, src, dst, ax=None, *, disjoint: bool = False, paths=None,
               hop_numbers: bool | None = None):
    """The route from ``src`` to ``dst`` with its hops (``disjoint=True``: every link-disjoint route).

    ``src`` and ``dst`` are ranks or, on a torus, coordinates such as
    ``(15, 15)``. ``paths`` (lists of node ids) overrides the routes. On a
    1D or 2D torus the routes are drawn over the grid, each in its own colour
    and dash, hops numbered, a hop through a wraparound leaving one edge and
    re-entering the other; elsewhere (switches, fat trees, TPU systems) each
    route is drawn as a row of the nodes it visits, with each link's class.

    Returns ``{"paths": list of Line2D (one per route), "hops": list of hop
    counts, "figure", "axes", "alt"}`` (plus the grid's artists on a torus, and
    ``"badges"``: the hop numbers, 9 pt discs sized to their digits).
    """
    s, d = _as_rank(topology, src), _as_rank(topology, dst)
    if paths is None:
        paths = topology.disjoint_paths(s, d) if disjoint else [topology.path(s, d)]
    paths = [list(map(int, p)) for p in paths]
    hops = [len(p) - 1 for p in paths]
    if isinstance(topology, Torus) and len(topology.dims) == 2:
        return _draw_route_torus(topology, s, d, paths, hops, ax, hop_numbers)
    return _draw_route_rows(topology, s, d, paths, hops, ax)


def _route_height(X: int, Y: int) -> float:
    """Inches of a route drawing over an X x Y grid: tall enough that a 4x4 slice reads at
    the page's width and that a hop badge fits between four chips of a 16x16 pod."""
    return 1.6 if Y == 1 else (5.0 if max(X, Y) <= 8 else 6.0)


#: Grids wider than this put hop badges beside their links, in the empty square between
#: four chips: a 9 pt badge is wider than the gap between two chips there.
BADGE_BESIDE_FROM = 7


def _badge_spot(mid, axis: int, coord: float, size: int, shift: float):
    """Where a hop's badge goes on a large grid: half a row (column) off its link's middle,
    on the side away from the grid's middle (a route's own side when routes run side by side)."""
    side = np.sign(shift) if shift else (1.0 if coord >= (size - 1) / 2 else -1.0)
    spot = np.array(mid, dtype=float)
    other = 1 - axis
    spot[axis] = np.floor(spot[axis]) + 0.5           # between two chips along the link
    spot[other] = coord + 0.5 * side
    return spot


def _endpoint_labels(a, topo: Torus, s, d, pos):
    """``src (x, y)`` and ``dst (x, y)`` outside the grid, above it for a chip in the upper
    half, below it for the lower half, an arrow to the chip: never over other chips."""
    X, Y = topo.dims
    out, sides = [], set()
    for r, word in ((s, "src"), (d, "dst")):
        a.plot(*pos[r], marker="o", ms=13, mfc="none", mec=TEXT_COLOR, mew=2.0, zorder=8)
        c = topo.coords(r)
        if Y == 1:          # a ring or chain: the label just above its chip
            out.append(a.annotate(f"{word} {c}", pos[r], xytext=(0, 11), textcoords="offset points",
                                  fontsize=FONT["annotation"], ha="center", color=TEXT_COLOR, zorder=9,
                                  bbox=dict(boxstyle="round,pad=0.2", facecolor="white",
                                            edgecolor=FAINT_COLOR)))
            continue
        up = c[1] >= (Y - 1) / 2
        sides.add(up)
        # a large grid's top row has hop badges over it: the words go higher there
        gap = 0.3 if max(X, Y) < BADGE_BESIDE_FROM else 0.85
        where = (float(np.clip(pos[r][0], 0.8, X - 1.8)), Y - 0.5 + gap if up else -0.5 - gap)
        out.append(a.annotate(f"{word} {c}", pos[r], xytext=where, textcoords="data",
                              fontsize=FONT["annotation"], ha="center", va="bottom" if up else "top",
                              color=TEXT_COLOR, zorder=9,
                              bbox=dict(boxstyle="round,pad=0.2", facecolor="white", edgecolor=FAINT_COLOR),
                              arrowprops=dict(arrowstyle="-", color=TEXT_COLOR, lw=0.9, shrinkA=0,
                                              shrinkB=7)))
    if sides:
        low, high = a.get_ylim()
        room = 0.9 if max(X, Y) < BADGE_BESIDE_FROM else 1.45
        a.set_ylim(-0.5 - room if False in sides else low, Y - 0.5 + room if True in sides else high)
    return out


def _draw_route_torus(topo: Torus, s, d, paths, hops, ax, hop_numbers):
    X, Y = topo.dims
    if ax is None:
        _, ax = axes_for(None, _route_height(X, Y))
    art = draw_torus(topo, ax=ax, labels=False, legend=False, title="")
    a = art["axes"]
    art["links"].set_color(FAINT_COLOR)
    pos = grid_layout(topo)
    coords = grid_coords(topo)
    if hop_numbers is None:
        hop_numbers = sum(hops) <= 40
    lines, badges = [], []
    from matplotlib.lines import Line2D

    n_paths = len(paths)
    for k, path in enumerate(paths):
        color, ls = PATH_STYLES[k % len(PATH_STYLES)]
        shift = (k - (n_paths - 1) / 2) * 0.14
        pts = []
        mids = []
        for u, v in zip(path[:-1], path[1:]):
            diff = coords[v] - coords[u]
            axis = int(np.nonzero(diff)[0][0])
            size = topo.dims[axis]
            step = diff[axis]
            wrap = abs(step) > 1 or (size == 2 and False)
            sign = -np.sign(step) if wrap else np.sign(step)
            vec = np.zeros(2)
            vec[axis] = sign
            normal = np.array([vec[1], -vec[0]]) * shift
            normal = np.abs(normal) * np.sign(shift) if shift else normal
            p, q = pos[u] + normal, pos[v] + normal
            mid = p + vec * 0.45 if wrap else (p + q) / 2
            if max(X, Y) >= BADGE_BESIDE_FROM:
                mid = _badge_spot(pos[u] + vec * 0.5, axis, pos[u][1 - axis], topo.dims[1 - axis], shift)
            mids.append(mid)
            if wrap:
                pts += [p, p + vec * 0.6, [np.nan, np.nan], q - vec * 0.6, q]
            else:
                pts += [p, q]
        pts = np.array(pts, dtype=float)
        line = Line2D(pts[:, 0], pts[:, 1], color=color, ls=ls, lw=3.0, zorder=5,
                      solid_capstyle="round", label=f"route {k + 1}: {_hops(hops[k])}" if n_paths > 1 else f"{_hops(hops[k])}")
        a.add_line(line)
        lines.append(line)
        if hop_numbers:     # badges sized to their numbers, legible at the page's width
            disc = dict(boxstyle="circle,pad=0.2", facecolor=color, edgecolor="white",
                        linewidth=0.8)
            for h, (x, y) in enumerate(mids):
                badges.append(a.text(x, y, str(h + 1), fontsize=HOP_BADGE_FONT,
                                     ha="center", va="center_baseline",
                                     color=text_on(color), fontweight="bold",
                                     zorder=8.5, bbox=disc))   # over src, dst rings
    ends = _endpoint_labels(a, topo, s, d, pos)
    a.legend(handles=lines, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=FONT["annotation"], frameon=False)
    what = "link-disjoint routes" if len(paths) > 1 else "route"
    a.set_title(f"{'Two' if len(paths) == 2 else len(paths) if len(paths) > 1 else 'The'} {what} "
                f"{topo.coords(s)} \u2192 {topo.coords(d)} on the {topology_name(topo)}", fontsize=FONT["title"])
    art.update(paths=lines, hops=hops, badges=badges, ends=ends)
    art["alt"] = (f"The {topology_name(topo)} grid with "
                  + (f"{len(paths)} link-disjoint routes" if len(paths) > 1 else "the route")
                  + f" from {topo.coords(s)} to {topo.coords(d)} highlighted, "
                  + ", ".join(_hops(h) for h in hops)
                  + ("; the route leaves through the wraparound at one edge and re-enters at the other"
                     if any(np.abs(np.diff(coords[p], axis=0)).max(initial=0) > 1 for p in paths) else "")
                  + ".")
    return art


def _draw_route_rows(topo: Topology, s, d, paths, hops, ax):
    from matplotlib.collections import LineCollection
    from matplotlib.lines import Line2D

    n_paths = len(paths)
    fig, ax = axes_for(ax, None if ax is not None else 0.9 + 0.9 * n_paths)
    lines = []
    width = max(len(p) for p in paths)
    # a short route has room to read: larger words, nodes and links
    style = _SHORT_ROUTE if width <= 8 else _LONG_ROUTE
    size, gap = FONT[style.font], style.gap
    links = topo.links
    for k, path in enumerate(paths):
        y = -k
        xs = np.arange(len(path), dtype=float)
        segs, colors, styles = [], [], []
        for h, (u, v) in enumerate(zip(path[:-1], path[1:])):
            lid = topo.link_between(u, v)
            klass = LINK_CLASSES[int(links.klass[lid])] if lid >= 0 else "link"
            segs.append([[xs[h] + gap, y], [xs[h + 1] - gap, y]])
            colors.append(LINK_COLORS[klass])
            styles.append(LINK_LINESTYLES[klass])
            label = LINK_LABELS[klass] + (f"\n{format_rate(links.bandwidth[lid])}" if lid >= 0 else "")
            ax.text(xs[h] + 0.5, y + style.above, label, ha="center", va="bottom", fontsize=size, color=TEXT_COLOR)
        coll = LineCollection(segs, colors=colors, linestyles=styles, linewidths=style.link_width,
                              zorder=1)
        ax.add_collection(coll, autolim=False)
        line = Line2D(xs, np.full(len(xs), y), ls="none", marker="s", ms=style.node_size, mfc=NODE_COLOR,
                      mec=NODE_EDGE_COLOR, zorder=2, label=f"route {k + 1}: {_hops(hops[k])}")
        ax.add_line(line)
        lines.append(line)
        for h, node in enumerate(path):
            words = topo.node_label(node).split()
            half = (len(words) + 1) // 2
            ax.text(xs[h], y - style.below, " ".join(words[:half]) + "\n" + " ".join(words[half:]), ha="center", va="top",
                    fontsize=size, color=TEXT_COLOR)
    ax.set_xlim(-0.6, width - 0.4)
    ax.set_ylim(-n_paths + 0.35, 0.55)
    blank(ax)
    ax.set_title(f"Route {topo.node_label(s)} \u2192 {topo.node_label(d)}: "
                 + ", ".join(_hops(h) for h in hops), fontsize=FONT["title"])
    alt = (f"The route from {topo.node_label(s)} to {topo.node_label(d)} drawn as a row of the nodes it "
           f"visits: " + "; ".join(" to ".join(topo.node_label(n) for n in p) for p in paths) + ".")
    return {"paths": lines, "hops": hops, "figure": fig, "axes": ax, "alt": alt}


def draw_fat_tree_route(cluster: GpuCluster, src: int, dst: int, ax=None, *, hops: int | None = None,
                        title: str | None = None):
    """One route through a GPU cluster, drawn over :func:`draw_fat_tree`.

    The route is the cluster's own (:meth:`~collectives_lib.topology.Topology.path`):
    through the node's NVSwitch inside a node; GPU -> its rail's leaf -> GPU
    between nodes on the same leaf; up through the spine otherwise. ``hops``
    draws only the first ``hops`` links of the route and puts a marker (the
    packet) on the node reached, so that a loop over ``hops`` animates the
    packet's climb. The cluster must be small enough to be drawn GPU by GPU
    (at most 8 nodes).

    Introduced in the chapter *NVIDIA GPU cluster topology*.

    Returns :func:`draw_fat_tree`'s dict plus ``"route"`` (LineCollection,
    one path per hop drawn), ``"packet"`` (the marker), ``"path"`` (node ids
    of the whole route) and ``"hops"`` (links drawn).
    """
    from matplotlib.collections import LineCollection
    from matplotlib.patches import Rectangle

    if not isinstance(cluster, GpuCluster):
        raise CollectivesError(f"draw_fat_tree_route draws a route in a GpuCluster, not {cluster!r}")
    if cluster.num_nodes > 8:
        raise CollectivesError(
            f"draw_fat_tree_route draws clusters of at most 8 nodes GPU by GPU; {cluster!r} has "
            f"{cluster.num_nodes}")
    src, dst = int(src), int(dst)
    n = cluster.num_ranks
    for x in (src, dst):
        if not 0 <= x < n:
            raise CollectivesError(f"GPU {x} is not a rank of {cluster!r} (0..{n - 1})")
    if src == dst:
        raise CollectivesError("a route needs two different GPUs")
    path = cluster.path(src, dst)
    total = len(path) - 1
    hops = total if hops is None else int(hops)
    if not 0 <= hops <= total:
        raise CollectivesError(f"hops must be 0..{total} for this route, got {hops}")
    art = draw_fat_tree(cluster, ax=ax, aggregate=False, title=title)
    ax = art["axes"]

    lay = fat_tree_layout(cluster, aggregate=False)   # where draw_fat_tree put every part
    gpus = lay.gpus
    spine_y = lay.levels["spine"]
    half = 0.27  # half the height of a GPU or leaf box in draw_fat_tree's coordinates

    def nvswitch_pos(node):
        """The node's NVSwitch bar, below its GPUs."""
        return lay.nvswitches[node - n]

    def on_bar(gpu, node):
        """Where ``gpu``'s NVLink meets the top edge of its node's NVSwitch bar: the route
        runs along that edge, clear of the bar's label in the middle."""
        return np.array([gpus[gpu][0], nvswitch_pos(node)[1] + 0.15])

    def leaf_pos(node):
        return lay.leaves[node - n - cluster.num_nodes]

    segs = []
    for k in range(hops):
        a, b = path[k], path[k + 1]
        if a < n and b >= n and b < n + cluster.num_nodes:          # GPU -> NVSwitch
            segs.append([gpus[a] - [0, half], on_bar(a, b)])
        elif a >= n and a < n + cluster.num_nodes:                   # NVSwitch -> GPU
            segs.append([on_bar(path[k - 1], a), on_bar(b, a), gpus[b] - [0, half]])
        elif a < n:                                                   # GPU -> leaf
            segs.append([gpus[a] + [0, half], leaf_pos(b) - [0, 0.3]])
        elif b < n:                                                   # leaf -> GPU
            segs.append([leaf_pos(a) - [0, 0.3], gpus[b] + [0, half]])
        elif b == cluster.spine_node:                                 # leaf -> spine
            segs.append([leaf_pos(a) + [0, 0.3], [leaf_pos(a)[0], spine_y - 0.3]])
        else:                                                         # spine -> leaf
            x0 = leaf_pos(path[k - 1])[0]
            segs.append([[x0, spine_y - 0.3], [x0, spine_y], [leaf_pos(b)[0], spine_y],
                         [leaf_pos(b)[0], spine_y - 0.3], leaf_pos(b) + [0, 0.3]])
    route = LineCollection([np.asarray(s, dtype=float) for s in segs], colors=ROUTE_COLOR, linewidths=3.0,
                           zorder=5, capstyle="round", joinstyle="round")
    ax.add_collection(route, autolim=False)
    here = path[hops]
    if here < n:
        pos = gpus[here]
    elif here < n + cluster.num_nodes:
        pos = on_bar(path[hops - 1], here)
    elif here == cluster.spine_node:
        pos = np.array([leaf_pos(path[hops - 1])[0], spine_y])
    else:
        pos = leaf_pos(here)
    packet = ax.plot([pos[0]], [pos[1]], "o", ms=11, mfc=ROUTE_COLOR, mec="white", mew=1.5, zorder=6)[0]
    for r in (src, dst):
        ax.add_patch(Rectangle(gpus[r] - [0.45, 0.32], 0.9, 0.64, fill=False, edgecolor=ROUTE_COLOR,
                               lw=2.0, zorder=5))
    names = [cluster.node_label(x) for x in path]
    art["alt"] = (art["alt"] + f" The route from {names[0]} to {names[-1]} ({total} links: "
                  + " -> ".join(names) + f") is highlighted up to hop {hops}, where a dot marks the packet.")
    art.update(route=route, packet=packet, path=path, hops=hops)
    return art
