"""Topology drawings: rings, chains, 2D and 3D tori (chip by chip or as a box),
slices in their pod, TPU systems with hosts and DCN (NVSwitch nodes and fat
trees: :mod:`.networks`).
"""

from __future__ import annotations

import numpy as np

from ..errors import CollectivesError
from ..topology import LINK_CLASSES, Torus, TpuSlice, TpuSystem
from ..units import format_rate
from .style import (FAINT_COLOR, FONT, IDLE_LINK_COLOR, LINK_COLORS, LINK_LABELS,
                    LINK_LINESTYLES, MUTED_COLOR, NODE_COLOR, NODE_EDGE_COLOR,
                    OP_COLORS, RANK_COLORS, TEXT_COLOR, WRAP_LINESTYLE, tint)
from .figure import (axes_for, blank, class_legend, grid_ticks, panel_axes, topology_name, value_colorbar,
                     value_norm, wraparound_text)
from .layout import (grid_layout, isometric, isometric_box, isometric_grid, rects,
                     ring_layout, squares, torus_link_paths, tpu_system_layout,
                     undirected_links)


def linewidth_for(bandwidth, max_bandwidth, *, max_width: float = 8.0, min_width: float = 0.5):
    """Line width in points proportional to bandwidth (clipped below for visibility)."""
    return np.clip(max_width * np.asarray(bandwidth, dtype=float) / float(max_bandwidth),
                   min_width, max_width)


def draw_torus_links(ax, topo: Torus, pos, axis_vec, *, values=None, cmap=None, norm=None,
                     lw=None, muted=False, zorder=1):
    """Undirected class-coloured links (values None) or directed value-coloured links."""
    from matplotlib.collections import LineCollection

    klass = LINK_CLASSES[int(topo.links.klass[0])] if len(topo.links) else "link"
    color = FAINT_COLOR if muted else LINK_COLORS[klass]
    if values is None:
        select = undirected_links(topo, np.arange(len(topo.links)))
        ids, paths, wraps = torus_link_paths(topo, pos, axis_vec, select=select)
        styles = [WRAP_LINESTYLE if w else "-" for w in wraps]
        width = lw if lw is not None else 1.6
        coll = LineCollection(paths, colors=color, linewidths=width, linestyles=styles,
                              zorder=zorder, capstyle="butt")
    else:
        ids, paths, wraps = torus_link_paths(topo, pos, axis_vec, offset=0.11, shrink=0.22)
        vals = np.asarray(values, dtype=float)[ids]
        colors = value_colors(vals, cmap, norm)
        idle = vals <= 0
        widths = np.where(idle, 0.8, lw if lw is not None else 2.2)
        styles = [WRAP_LINESTYLE if w else "-" for w in wraps]
        coll = LineCollection(paths, colors=colors, linewidths=widths, linestyles=styles,
                              zorder=zorder, capstyle="butt")
    ax.add_collection(coll, autolim=False)
    return coll, ids, wraps


def value_colors(vals, cmap, norm):
    """Link colours for link values: the load colour map, idle links (0) grey."""
    vals = np.asarray(vals, dtype=float)
    colors = cmap(norm(vals))
    colors[vals <= 0] = IDLE_LINK_COLOR
    return colors


def _draw_chips(ax, pos, *, size=0.44, facecolor=NODE_COLOR, edgecolor=NODE_EDGE_COLOR, zorder=3, lw=0.8):
    from matplotlib.collections import PolyCollection

    keep = ~np.isnan(pos[:, 0])
    verts = squares(pos[keep], size)
    coll = PolyCollection(verts, facecolors=facecolor if np.ndim(facecolor) < 2 else np.asarray(facecolor)[keep],
                          edgecolors=edgecolor, linewidths=lw, zorder=zorder)
    ax.add_collection(coll, autolim=False)
    return coll


def draw_circles(ax, pos, radius, face, edgecolor=NODE_EDGE_COLOR, zorder=3, lw=0.8):
    """One circle of ``radius`` per row of ``pos``, filled with ``face``: ranks and GPUs on a circle."""
    from matplotlib.collections import PolyCollection

    t = np.linspace(0, 2 * np.pi, 25)
    circle = np.stack([np.cos(t), np.sin(t)], 1) * radius
    verts = pos[:, None, :] + circle[None, :, :]
    coll = PolyCollection(verts, facecolors=face, edgecolors=edgecolor, linewidths=lw, zorder=zorder)
    ax.add_collection(coll, autolim=False)
    return coll


def _coord_labels(ax, topo: Torus, pos, fontsize, color=TEXT_COLOR):
    texts = []
    for r in np.nonzero(~np.isnan(pos[:, 0]))[0].tolist():
        c = topo.coords(r)
        label = ",".join(map(str, c[:2] if len(c) == 3 else c))
        texts.append(ax.text(pos[r, 0], pos[r, 1], label, ha="center", va="center",
                             fontsize=fontsize, color=color, zorder=4))
    return texts




def draw_torus(topology: Torus, ax=None, *, labels: bool | None = None, highlight=None,
               link_values=None, value_label: str = "link busy time", node_colors=None,
               title: str | None = None, legend: bool = True):
    """A ring, chain, 2D torus or mesh as a flat grid; a 3D torus as one panel per z-plane.

    Chips are squares at their coordinates (x across, y up); wraparound links
    are dashed stubs that leave one edge and re-enter the opposite one.
    ``labels`` prints coordinates in the chips (default: when there are at
    most 64 per panel; the axes are always labelled). ``highlight`` is a list
    of ranks to fill in the first rank colour. ``link_values`` (one number
    per directed link, e.g. ``Result.link_busy``) colours each direction of
    every link with :data:`LOAD_CMAP`, idle links grey.

    A 3D torus takes ``ax=None``, a Figure or a sequence of ``dims[2]`` Axes,
    one per z-plane (z-links join each chip to the same (x, y) in the next
    plane; with ``link_values`` a chip's fill shows its busiest z-link).

    Returns ``{"nodes": PolyCollection (one square per chip), "links":
    LineCollection (one path per drawn link: each full-duplex pair once, or
    each direction with link_values), "labels", "figure", "axes", "alt"}``
    (for 3D, ``"nodes"`` and ``"links"`` are lists, one per plane).
    """
    if not isinstance(topology, Torus):
        raise CollectivesError(f"draw_torus draws tori, meshes, rings and chains, not {topology!r}")
    dims = topology.dims
    if len(dims) == 3:
        return _draw_torus_3d(topology, ax, labels=labels, highlight=highlight,
                              link_values=link_values, value_label=value_label, title=title)
    if len(dims) > 3:
        raise CollectivesError(f"draw_torus draws up to 3 axes; {topology!r} has {len(dims)}")
    if len(dims) == 1 and topology.wraparound[0] and dims[0] > 2:
        return _draw_ring_topology(topology, ax, labels=labels, highlight=highlight,
                                   link_values=link_values, value_label=value_label, title=title)
    X = dims[0]
    Y = dims[1] if len(dims) == 2 else 1
    height = None if ax is not None else (1.6 if Y == 1 else max(2.9, min(5.4, 1.4 + 0.25 * Y)))
    fig, ax = axes_for(ax, height)
    pos = grid_layout(topology)
    axis_vec = {0: np.array([1.0, 0.0])}
    if len(dims) == 2:
        axis_vec[1] = np.array([0.0, 1.0])
    cmap = norm = None
    if link_values is not None:
        cmap, norm = value_norm(link_values)
    links, _, wraps = draw_torus_links(ax, topology, pos, axis_vec, values=link_values,
                                       cmap=cmap, norm=norm)
    face = np.full((topology.num_ranks, 4), 0.0)
    face[:] = (0.933, 0.945, 0.957, 1.0)
    from matplotlib.colors import to_rgba

    if node_colors is not None:
        face = np.array([to_rgba(c) for c in node_colors])
    if highlight is not None:
        face[np.asarray(list(highlight), dtype=int)] = to_rgba(RANK_COLORS[4])
    size = 0.5 if max(X, Y) <= 8 else 0.46
    nodes = _draw_chips(ax, pos, size=size, facecolor=face)
    if labels is None:
        labels = topology.num_ranks <= 64
    texts = (_coord_labels(ax, topology, pos, fontsize=FONT["small"] if max(X, Y) <= 4 else FONT["dense"])
             if labels else [])
    ax.set_xlim(-1.0, X)
    ax.set_ylim(-0.9 if Y > 1 else -0.6, Y - 0.1 if Y > 1 else 0.6)
    ax.set_aspect("equal")
    grid_ticks(ax, X, Y)
    ax.set_xlabel("x (chip coordinate)", fontsize=FONT["label"])
    if Y > 1:
        ax.set_ylabel("y", fontsize=FONT["label"])
    klass = LINK_CLASSES[int(topology.links.klass[0])]
    bw = format_rate(topology.links.bandwidth[0])
    if title is None:
        title = f"{topology_name(topology)}: {topology.num_ranks} chips, {wraparound_text(topology)}"
    ax.set_title(title, fontsize=FONT["title"])
    cbar = None
    if link_values is not None:
        cbar = value_colorbar(fig, ax, cmap, norm, value_label)
    elif legend:
        class_legend(ax, [(klass, f"{LINK_LABELS[klass]} link,\n{bw} each way")],
                     wrap=bool(wraps.any()))
    alt = (f"{topology_name(topology)} drawn as a {X} by {Y} grid of {topology.num_ranks} "
           f"chips with their {LINK_LABELS[klass]} links"
           + ("; dashed stubs at the edges are the wraparound links" if wraps.any() else "")
           + (", coloured by load" if link_values is not None else "") + ".")
    return {"nodes": nodes, "links": links, "labels": texts, "colorbar": cbar,
            "figure": fig, "axes": ax, "alt": alt}


def _draw_ring_topology(topo: Torus, ax, *, labels, highlight, link_values, value_label, title):
    from matplotlib.collections import LineCollection
    from matplotlib.colors import to_rgba

    n = topo.num_ranks
    fig, ax = axes_for(ax, 3.2 if ax is None else None)
    pos = ring_layout(n)
    node_r = min(0.13, 2.6 / n)
    links = topo.links
    klass = LINK_CLASSES[int(links.klass[0])]
    cmap = norm = None
    if link_values is None:
        ids = undirected_links(topo, np.arange(len(links)))
        offset = 0.0
    else:
        ids = np.arange(len(links))
        offset = 0.035
        cmap, norm = value_norm(link_values)
    paths, outer = [], set()
    for lid in ids.tolist():
        p, q = pos[links.src[lid]], pos[links.dst[lid]]
        d = q - p
        u = d / np.hypot(*d)
        nrm = np.array([u[1], -u[0]]) * offset
        paths.append(np.array([p + u * node_r + nrm, q - u * node_r + nrm]))
        step = (int(links.dst[lid]) - int(links.src[lid])) % n      # 1: clockwise (rank order)
        if offset and float(np.dot(nrm, p + q)) > 0:
            outer.add("clockwise" if step == 1 else "counter-clockwise")
    if link_values is None:
        coll = LineCollection(paths, colors=LINK_COLORS[klass], linewidths=1.8, zorder=1)
    else:
        vals = np.asarray(link_values, dtype=float)[ids]
        colors = cmap(norm(vals))
        colors[vals <= 0] = IDLE_LINK_COLOR
        coll = LineCollection(paths, colors=colors, linewidths=2.2, zorder=1)
    ax.add_collection(coll, autolim=False)
    face = np.array([to_rgba(NODE_COLOR)] * n)
    if highlight is not None:
        face[np.asarray(list(highlight), dtype=int)] = to_rgba(RANK_COLORS[4])
    nodes = draw_circles(ax, pos, node_r, face)
    texts = []
    if labels is None:
        labels = n <= 32
    if labels:
        for r in range(n):
            texts.append(ax.text(*pos[r], str(r), ha="center", va="center",
                                 fontsize=FONT["annotation"] if n <= 16 else FONT["dense"], zorder=4))
    ax.set_xlim(-1.25, 1.25)
    ax.set_ylim(-1.2, 1.2)
    ax.set_aspect("equal")
    blank(ax)
    ax.set_title(title or f"{topology_name(topo)} ({'full-duplex' if topo.bidirectional else 'one-way'} links, "
                 f"{format_rate(links.bandwidth[0])} each)", fontsize=FONT["title"])
    cbar = value_colorbar(fig, ax, cmap, norm, value_label) if link_values is not None else None
    key = _ring_direction_key(ax, outer) if link_values is not None and topo.bidirectional else None
    alt = f"A ring of {n} ranks drawn as a circle, each linked to its two neighbours."
    if key is not None:
        alt = alt[:-1] + ("; each link is two strokes, one per direction, the outer one "
                          f"{min(outer)} and the inner one the other way.")
    return {"nodes": nodes, "links": coll, "labels": texts, "colorbar": cbar, "direction_key": key,
            "figure": fig, "axes": ax, "alt": alt}


def _ring_direction_key(ax, outer):
    """The key in the middle of a ring coloured by load: which of a link's two strokes is
    which direction (``outer``: the directions drawn outside, one of them)."""
    from matplotlib.lines import Line2D

    out = min(outer) if outer else "counter-clockwise"
    inner = "clockwise" if out == "counter-clockwise" else "counter-clockwise"
    towards = {"clockwise": "r \u2192 r + 1", "counter-clockwise": "r \u2192 r \u2212 1"}
    handles = [Line2D([], [], color=MUTED_COLOR, lw=2.2, label=f"{where}: {way}\n({towards[way]})")
               for where, way in (("outer", out), ("inner", inner))]
    return ax.legend(handles=handles, loc="center", fontsize=FONT["annotation"], frameon=False,
                     title="two strokes a link,\none each way:", title_fontsize=FONT["annotation"],
                     handlelength=1.0, handletextpad=0.5, labelspacing=0.6)


def _draw_torus_3d(topo: Torus, ax, *, labels, highlight, link_values, value_label, title):
    from matplotlib.colors import to_rgba

    X, Y, Z = topo.dims
    if Z > 8:
        raise CollectivesError(
            f"{topology_name(topo)} has {Z} z-planes, too many for one panel each; "
            "use draw_torus_summary"
        )
    nrows = 1 if Z <= 2 else 2          # four planes as 2 x 2: each panel half the page wide
    height = None if ax is not None else (3.0 if nrows == 1 else 5.6) * (0.8 + 0.05 * Y)
    fig, axes = panel_axes(ax, Z, nrows=nrows, height=height)
    axis_vec = {0: np.array([1.0, 0.0]), 1: np.array([0.0, 1.0])}
    cmap = norm = None
    if link_values is not None:
        cmap, norm = value_norm(link_values)
        zlinks = np.nonzero(topo.link_axis() == 2)[0]
        zbusy = np.zeros(topo.num_ranks)
        np.maximum.at(zbusy, topo.links.src[zlinks], np.asarray(link_values, dtype=float)[zlinks])
    nodes, links_all, texts = [], [], []
    wraps_any = False
    if labels is None:
        labels = X * Y <= 16 and link_values is None
    for z, a in enumerate(axes):
        pos = grid_layout(topo, plane=z)
        links, _, wraps = draw_torus_links(a, topo, pos, axis_vec, values=link_values,
                                           cmap=cmap, norm=norm, lw=1.4 if link_values is None else 2.0)
        wraps_any |= bool(wraps.any())
        face = np.array([to_rgba(NODE_COLOR)] * topo.num_ranks)
        if link_values is not None:
            busy = zbusy > 0
            face[busy] = cmap(norm(zbusy[busy]))
        if highlight is not None:
            face[np.asarray(list(highlight), dtype=int)] = to_rgba(RANK_COLORS[4])
        nodes.append(_draw_chips(a, pos, size=0.62, facecolor=face))
        if labels:
            texts += _coord_labels(a, topo, pos, fontsize=FONT["small"] if Z <= 4 else FONT["dense"])
        a.set_xlim(-1.0, X)
        a.set_ylim(-1.0, Y)
        a.set_aspect("equal")
        grid_ticks(a, X, Y, fontsize=FONT["small"])
        a.set_title(f"z = {z}", fontsize=FONT["label"], pad=2)
        a.set_xlabel("x", fontsize=FONT["annotation"])
        if z % (len(axes) // nrows or 1) == 0:
            a.set_ylabel("y", fontsize=FONT["annotation"])
        links_all.append(links)
    klass = LINK_CLASSES[int(topo.links.klass[0])]
    zwrap = "with wraparound" if topo.wraparound[2] else "without wraparound"
    fig.suptitle(title or f"{topology_name(topo)}: {topo.num_ranks} chips, one panel per z-plane",
                 fontsize=FONT["title"])
    fig.supxlabel(f"Each chip also links to the chip at the same (x, y) in planes z \u00b1 1 ({zwrap} on z).\n"
                  f"{LINK_LABELS[klass]} {format_rate(topo.links.bandwidth[0])} each way."
                  + (" Dashed stubs: wraparound links." if wraps_any else ""), fontsize=FONT["tick"],
                  color=TEXT_COLOR)
    cbar = None
    if link_values is not None:
        cbar = value_colorbar(fig, axes, cmap, norm, value_label + "\n(chip fill: busiest z-link)")
    alt = (f"{topology_name(topo)} drawn as {Z} panels, one per z-plane, each a {X} by {Y} grid of chips"
           + ("; dashed stubs at the edges are wraparound links" if wraps_any else "") + ".")
    return {"nodes": nodes, "links": links_all, "labels": texts, "colorbar": cbar,
            "figure": fig, "axes": axes, "alt": alt}


def draw_torus_summary(topology: Torus, ax=None, *, cube: int = 4, slice_shape=None,
                       cut: bool = False, title: str | None = None):
    """A 3D torus too big to draw chip by chip, as a box made of ``cube``-sided cubes.

    The box is drawn in isometric projection with its sides labelled in chips
    and the grid of 4x4x4 cubes on its three visible faces; a table beside it
    gives the chips, cubes, links per chip, wraparound and the bisection
    bandwidth (from :meth:`~collectives_lib.topology.Topology.cut_bandwidth`).
    ``slice_shape`` shades a slice of that shape in the corner; ``cut=True``
    shades the bisection plane across the longest axis.

    Returns ``{"box": PolyCollection (3 faces), "grid": LineCollection,
    "slice": PolyCollection or None, "cut": PolyCollection or None,
    "bisection": bytes/s, "figure", "axes", "alt"}``.
    """
    from matplotlib.collections import LineCollection, PolyCollection

    if not isinstance(topology, Torus) or len(topology.dims) != 3:
        raise CollectivesError(f"draw_torus_summary draws 3D tori, not {topology!r}")
    X, Y, Z = topology.dims
    fig, ax = axes_for(ax, 3.6 if ax is None else None)
    klass = LINK_CLASSES[int(topology.links.klass[0])]
    color = LINK_COLORS[klass]

    faces = isometric_box((0, 0, 0), (X, Y, Z))     # top, right (x = X), front (y = Y)
    box = PolyCollection(faces, facecolors=[tint(color, 0.18), tint(color, 0.30), tint(color, 0.42)],
                         edgecolors=TEXT_COLOR, linewidths=1.2, zorder=1)
    ax.add_collection(box, autolim=False)
    grid = LineCollection(isometric_grid((X, Y, Z), cube), colors=TEXT_COLOR, linewidths=0.5, alpha=0.45, zorder=2)
    ax.add_collection(grid, autolim=False)
    slice_coll = None
    if slice_shape is not None:
        sx, sy, sz = (int(v) for v in slice_shape)
        x0, y0 = X - sx, Y - sy  # the visible corner
        c = RANK_COLORS[0]      # top, right and front faces lit like the box's: a box
        slice_coll = PolyCollection(isometric_box((x0, y0, 0), (X, Y, sz)),
                                    facecolors=[tint(c, 0.45), tint(c, 0.7), c],
                                    edgecolors=TEXT_COLOR, linewidths=1.0, zorder=3,
                                    hatch="////")
        ax.add_collection(slice_coll, autolim=False)
    cut_coll = None
    bis = topology.bisection_bandwidth()
    if cut:
        axis = int(np.argmax(topology.dims))
        h = topology.dims[axis] / 2
        corners = {0: [(h, 0, 0), (h, Y, 0), (h, Y, Z), (h, 0, Z)],
                   1: [(0, h, 0), (X, h, 0), (X, h, Z), (0, h, Z)],
                   2: [(0, 0, h), (X, 0, h), (X, Y, h), (0, Y, h)]}[axis]
        cut_coll = PolyCollection([isometric(np.array(corners))], facecolors=OP_COLORS["reduce"],
                                  edgecolors=OP_COLORS["reduce"], alpha=0.35, linewidths=1.5,
                                  linestyles="--", zorder=4)
        ax.add_collection(cut_coll, autolim=False)
    # side labels
    def label(p, text, **kw):
        u, v = isometric(np.array(p))
        ax.text(u, v, text, fontsize=FONT["annotation"], color=TEXT_COLOR, **kw)

    big = max(X, Y, Z)
    label((X / 2, Y + 0.06 * big, 0), f"x: {X} chips", ha="center", va="top", rotation=-30,
          rotation_mode="anchor")
    label((X + 0.06 * big, Y / 2, 0), f"y: {Y} chips", ha="center", va="top", rotation=30,
          rotation_mode="anchor")
    label((-0.05 * big, Y, Z / 2), f"z: {Z} chips", ha="right", va="center")
    pts = isometric(np.array([[0, 0, 0], [X, 0, 0], [0, Y, 0], [X, Y, 0], [0, 0, Z], [X, 0, Z], [0, Y, Z], [X, Y, Z]]))
    pad = 0.1 * (pts.max(0) - pts.min(0))
    ax.set_xlim(pts[:, 0].min() - 2.2 * pad[0], pts[:, 0].max() + pad[0])
    ax.set_ylim(pts[:, 1].min() - 1.6 * pad[1], pts[:, 1].max() + 0.5 * pad[1])
    ax.set_aspect("equal")
    blank(ax)
    cubes = tuple(-(-d // cube) for d in (X, Y, Z))
    neighbours = 2 * sum(1 for d in (X, Y, Z) if d > 1)
    rows = [
        ("chips", f"{topology.num_ranks:,}"),
        (f"{cube}x{cube}x{cube} cubes", f"{cubes[0] * cubes[1] * cubes[2]:,} ({cubes[0]}x{cubes[1]}x{cubes[2]})"),
        ("links per chip", f"{neighbours} ({LINK_LABELS[klass]}, {format_rate(topology.links.bandwidth[0])} each way)"),
        ("wraparound", ", ".join(a for a, w in zip(topology.axis_names, topology.wraparound) if w) or "none"),
        ("bisection (one way)", format_rate(bis)),
    ]
    if slice_shape is not None:
        rows.append(("shaded slice", "x".join(map(str, slice_shape))
                     + f" = {int(np.prod(slice_shape)):,} chips"))
    text = "\n".join(f"{k}: {v}" for k, v in rows)
    ax.text(1.04, 0.5, text, transform=ax.transAxes, ha="left", va="center", fontsize=FONT["annotation"],
            color=TEXT_COLOR, linespacing=1.5,
            bbox=dict(boxstyle="round,pad=0.5", facecolor="white", edgecolor=FAINT_COLOR))
    ax.set_title(title or f"{topology_name(topology)}: a {X}x{Y}x{Z} 3D torus of {cube}x{cube}x{cube} cubes",
                 fontsize=FONT["title"])
    alt = (f"{topology_name(topology)} drawn as a box of {X} by {Y} by {Z} chips divided into "
           f"{cube}x{cube}x{cube} cubes of {cube ** 3} chips; {topology.num_ranks} chips, bisection bandwidth {format_rate(bis)} one way"
           + (f"; a {'x'.join(map(str, slice_shape))} slice is shaded in one corner" if slice_shape is not None else "")
           + (", with the bisection plane shaded" if cut else "") + ".")
    return {"box": box, "grid": grid, "slice": slice_coll, "cut": cut_coll, "bisection": bis,
            "figure": fig, "axes": ax, "alt": alt}


def draw_slice_in_pod(slice_topology: TpuSlice, ax=None, *, origin=None, pod: Torus | None = None):
    """A slice highlighted inside its pod.

    2D generations (v5e, v6e): the pod's grid with the slice's chips filled
    and framed at ``origin`` (default the corner), the key beside the grid
    naming the slice and whether it keeps the pod's wraparound (never written
    over its chips). 3D generations: the pod's box from
    :func:`draw_torus_summary` with the slice hatched and named in the title.

    Returns the dict of the pod drawing plus ``"slice_ranks"`` (pod ranks of
    the slice), ``"frame"`` (the outline patch) and ``"legend"`` (2D).
    """
    from matplotlib.patches import Rectangle

    if not isinstance(slice_topology, TpuSlice):
        raise CollectivesError(f"draw_slice_in_pod needs a TPU slice, not {slice_topology!r}")
    gen = slice_topology.generation
    if pod is None:
        from .. import tpu_pod

        pod = tpu_pod(gen.name)
    shape = slice_topology.dims
    if len(pod.dims) == 3:
        chips = int(np.prod(shape))
        title = (f"A {'x'.join(map(str, shape))} slice ({chips:,} chips, hatched) "
                 f"in the {topology_name(pod)}")
        art = draw_torus_summary(pod, ax=ax, slice_shape=shape, title=title)
        art["slice_ranks"] = None
        art["frame"] = art["legend"] = None
        return art
    origin = tuple(origin) if origin is not None else (0,) * len(shape)
    grid = np.stack(np.meshgrid(*[np.arange(o, o + s) for o, s in zip(origin, shape)], indexing="ij"), -1).reshape(-1, len(shape))
    ranks = [pod.rank_of(c) for c in grid]
    wrap = wraparound_text(slice_topology)
    name = "x".join(map(str, shape))
    title = f"A {name} slice ({len(ranks)} chips) in the {topology_name(pod)}"
    art = draw_torus(pod, ax=ax, highlight=ranks, labels=False, legend=False,
                     title=title)
    a = art["axes"]
    frame = Rectangle((origin[0] - 0.5, origin[1] - 0.5), shape[0], shape[1], fill=False,
                      edgecolor=TEXT_COLOR, lw=2.0, zorder=5)
    a.add_patch(frame)
    # the slice is named in the key beside the grid, never over its own chips
    from matplotlib.patches import Patch

    klass = LINK_CLASSES[int(pod.links.klass[0])]
    words = (f"the {name} slice\n({len(ranks)} chips, framed):\n"
             + wrap.replace(" and ", ", "))
    swatch = Patch(facecolor=RANK_COLORS[4], edgecolor=TEXT_COLOR, lw=2.0, label=words)
    link = f"{LINK_LABELS[klass]} link,\n{format_rate(pod.links.bandwidth[0])} each way"
    art["legend"] = class_legend(a, [(klass, link)], wrap=any(pod.wraparound),
                                 extra=[swatch])
    art["slice_ranks"] = ranks
    art["frame"] = frame
    art["alt"] = (f"The {topology_name(pod)} grid with a {'x'.join(map(str, shape))} slice of "
                  f"{len(ranks)} chips shaded and framed at the corner; the slice has {wrap}.")
    return art


def draw_tpu_system(system, ax=None, *, link_values=None, value_label: str = "link busy time",
                    labels: bool | None = None):
    """TPU chips with their CPU hosts: ICI inside each slice, PCIe to the hosts, DCN between hosts.

    ``system`` is a :class:`~collectives_lib.topology.TpuSystem` (from
    :func:`~collectives_lib.topology.tpu_system`) or a single 2D
    :class:`~collectives_lib.topology.TpuSlice` (hosts and PCIe only). Each
    host serves a block of chips (2x4 on v5e), drawn as a shaded block with
    the host in its middle and a dotted PCIe link to every chip. Slices sit
    side by side; their hosts reach the DCN switch above them (one bundle per
    slice when a slice has more than one row of hosts).

    ``link_values`` (one number per directed link) colours the links by load,
    idle ones grey: ICI each direction, PCIe and DCN by the busier of their two
    directions (a DCN bundle by its busiest host).

    Returns ``{"nodes": chips, "hosts": PolyCollection (one per host),
    "links": {"ici", "pcie", "dcn"} LineCollections (ICI: one path per
    full-duplex pair, or per direction with link_values; PCIe: one per chip;
    DCN: one per host or per slice), "colorbar", "figure", "axes", "alt"}``.
    """
    from matplotlib.collections import LineCollection, PolyCollection
    from matplotlib.patches import FancyBboxPatch

    if isinstance(system, TpuSlice):
        sl, num_slices, has_dcn = system, 1, False
    elif isinstance(system, TpuSystem):
        sl, num_slices, has_dcn = system.slice, system.num_slices, True
    else:
        raise CollectivesError(f"draw_tpu_system needs a TPU slice or system, not {system!r}")
    if len(sl.dims) != 2:
        raise CollectivesError(
            f"draw_tpu_system draws 2D slices (v5e, v6e); {topology_name(sl)} is 3D: "
            "use draw_torus for its chips"
        )
    X, Y = sl.dims
    hx, hy = sl.host_shape
    lay = tpu_system_layout(system)
    n_chips = len(lay.chips)
    fig, ax = axes_for(ax, None if ax is not None else min(5.6, 2.0 + 0.3 * Y + (0.9 if has_dcn else 0)))
    cmap = norm = None
    if link_values is not None:
        cmap, norm = value_norm(link_values)
    base, chip_pos, host_of, host_pos = lay.slice_chips, lay.chips, lay.host_of, lay.hosts
    hosts_per_slice = sl.num_hosts
    num_hosts = len(host_pos)
    # host blocks
    blocks = []
    for h in range(num_hosts):
        pts = chip_pos[host_of == h]
        lo, hi = pts.min(0) - 0.42, pts.max(0) + 0.42
        blocks.append(FancyBboxPatch(lo, *(hi - lo), boxstyle="round,pad=0,rounding_size=0.15",
                                     facecolor=tint(LINK_COLORS["pcie"], 0.10),
                                     edgecolor=tint(LINK_COLORS["pcie"], 0.5), lw=0.8, zorder=0))
    for b in blocks:
        ax.add_patch(b)
    # ICI
    axis_vec = {0: np.array([1.0, 0.0]), 1: np.array([0.0, 1.0])}
    ici_paths, ici_ids = [], []
    ici_sel = np.arange(len(sl.links)) if link_values is not None else undirected_links(sl, np.arange(len(sl.links)))
    ids, paths, wraps = torus_link_paths(sl, base, axis_vec, select=ici_sel,
                                         offset=0.11 if link_values is not None else 0.0,
                                         shrink=0.22 if link_values is not None else 0.0)
    for s in range(num_slices):
        shift = np.array([lay.slice_x[s], 0.0])
        ici_paths += [p + shift for p in paths]
        ici_ids += (ids + s * len(sl.links)).tolist()
    styles = [WRAP_LINESTYLE if w else "-" for w in np.tile(wraps, num_slices)]
    ici = LineCollection(ici_paths, colors=LINK_COLORS["ici"], linewidths=1.6, linestyles=styles, zorder=1)
    ax.add_collection(ici, autolim=False)
    # PCIe spokes: chip -> host (drawn once per chip)
    pcie_paths = [np.array([chip_pos[c], host_pos[host_of[c]]]) for c in range(n_chips)]
    pcie = LineCollection(pcie_paths, colors=LINK_COLORS["pcie"], linewidths=1.1,
                          linestyles=[LINK_LINESTYLES["pcie"]], zorder=1.5)
    ax.add_collection(pcie, autolim=False)
    if link_values is not None:     # by load: ICI each way, PCIe its busier way
        ici_vals = np.asarray(link_values, dtype=float)[np.asarray(ici_ids, dtype=int)]
        ici.set_color(value_colors(ici_vals, cmap, norm))
        ici.set_linewidth(np.where(ici_vals > 0, 1.8, 0.8))
        if has_dcn:
            up = [_both_ways(system, link_values, c, system.host_node(host_of[c]))
                  for c in range(n_chips)]
            pcie.set_color(value_colors(up, cmap, norm))
    chips = _draw_chips(ax, chip_pos, size=0.4)
    host_boxes = PolyCollection(rects(host_pos[:, 0] - 0.27, host_pos[:, 1] - 0.22, 0.54, 0.44),
                                facecolors="white", edgecolors=LINK_COLORS["pcie"], linewidths=1.4, zorder=4)
    ax.add_collection(host_boxes, autolim=False)
    if labels is None:
        labels = num_hosts <= 16
    texts = []
    if labels:
        for h in range(num_hosts):
            texts.append(ax.text(*host_pos[h], f"H{h}", ha="center", va="center", fontsize=FONT["detail"],
                                 color=TEXT_COLOR, zorder=5))
    # DCN
    dcn = None
    top = Y - 0.5
    xmax = lay.width
    if has_dcn:
        dcn_center = lay.dcn
        one_row = hy >= Y
        if one_row:
            dcn_paths = [np.array([host_pos[h] + [0, 0.22], [host_pos[h, 0], top + 0.15],
                                   dcn_center - [0, 0.25]]) for h in range(num_hosts)]
            dcn_bw = system.dcn_bandwidth_per_host
        else:
            dcn_paths = [np.array([[lay.slice_x[s] + (X - 1) / 2, top + 0.15], dcn_center - [0, 0.25]])
                         for s in range(num_slices)]
            dcn_bw = system.dcn_bandwidth_per_host * hosts_per_slice
        dcn = LineCollection(dcn_paths, colors=LINK_COLORS["dcn"], linewidths=1.6,
                             linestyles=[LINK_LINESTYLES["dcn"]], zorder=1)
        ax.add_collection(dcn, autolim=False)
        if link_values is not None:      # a host's (slice's) busiest way to DCN
            k = hosts_per_slice
            hosts = ([[h] for h in range(num_hosts)] if one_row else
                     [range(s * k, (s + 1) * k) for s in range(num_slices)])
            hub = system.dcn_node
            dcn_vals = [max(_both_ways(system, link_values, system.host_node(h), hub)
                            for h in group) for group in hosts]
            dcn.set_color(value_colors(dcn_vals, cmap, norm))
        sw = FancyBboxPatch(dcn_center - [1.9, 0.3], 3.8, 0.6, boxstyle="round,pad=0.02",
                            facecolor="white", edgecolor=LINK_COLORS["dcn"], lw=1.5, zorder=4)
        ax.add_patch(sw)
        ax.text(*dcn_center, "DCN switch", ha="center", va="center", fontsize=FONT["annotation"], zorder=5)
        for s in range(num_slices):
            ax.text(lay.slice_x[s] + (X - 1) / 2, -0.75, f"slice {s}", ha="center", va="top",
                    fontsize=FONT["annotation"])
    ax.set_xlim(-0.8, xmax - 0.2)
    ax.set_ylim(-1.1 if has_dcn else -0.8, (Y + 1.9) if has_dcn else Y - 0.2)
    ax.set_aspect("equal")
    blank(ax)
    gen = sl.generation
    extra = _system_key(gen, sl.host_shape, dcn_bw if has_dcn else None, per_host=hy >= Y, named=labels)
    ici_label = f"ICI, {format_rate(float(gen.ici_bandwidth))} each way"
    key = class_legend(ax, [("ici", ici_label)], wrap=bool(wraps.any()), extra=extra,
                       loc="upper center", bbox=(0.5, -0.02), ncol=2)
    if link_values is not None:     # colours are loads: the key tells classes by dash
        for line in key.get_lines():
            line.set_color(MUTED_COLOR)
    what = ((f"{num_slices} TPU {gen.name} slices of {X}x{Y}" if num_slices > 1 else
             f"one TPU {gen.name} slice of {X}x{Y}") if has_dcn else topology_name(sl))
    ax.set_title(f"{what[:1].upper() + what[1:]}: {num_hosts} hosts, each serving {hx}x{hy} chips over PCIe",
                 fontsize=FONT["title"])
    alt = (f"{what[:1].upper() + what[1:]}: chips in a grid joined by ICI; each block of {hx} by {hy} chips is shaded and "
           f"linked by dotted PCIe lines to its host in the middle"
           + ("; the hosts connect up to one DCN switch" if has_dcn else "") + ".")
    cbar = None
    if link_values is not None:
        cbar = value_colorbar(fig, ax, cmap, norm, value_label)
    return {"nodes": chips, "hosts": host_boxes, "links": {"ici": ici, "pcie": pcie, "dcn": dcn},
            "labels": texts, "colorbar": cbar, "figure": fig, "axes": ax, "alt": alt}


def _system_key(gen, host_shape, dcn_bw, *, per_host: bool, named: bool) -> list:
    """The key of :func:`draw_tpu_system` beside its ICI entry: PCIe, a host's block, a chip,
    a host (the white squares) and, with ``dcn_bw``, the DCN."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    hx, hy = host_shape
    pcie = LINK_COLORS["pcie"]
    extra = [Line2D([], [], color=pcie, ls=LINK_LINESTYLES["pcie"], lw=1.5,
                    label=f"PCIe chip\u2013host, {format_rate(float(gen.pcie_bandwidth))}"),
             Patch(facecolor=tint(pcie, 0.10), edgecolor=tint(pcie, 0.5), label=f"one host's {hx}x{hy} chips"),
             Line2D([], [], ls="none", marker="s", ms=7, mfc=NODE_COLOR, mec=NODE_EDGE_COLOR, mew=0.8,
                    label=f"TPU {gen.name} chip"),
             Line2D([], [], ls="none", marker="s", ms=8, mfc="white", mec=pcie, mew=1.4,
                    label="host: the CPU server" + (" (H0, H1...)" if named else ""))]
    if dcn_bw is not None:
        extra.append(Line2D([], [], color=LINK_COLORS["dcn"], ls=LINK_LINESTYLES["dcn"], lw=1.5,
                            label=f"DCN, {format_rate(dcn_bw)} per {'host' if per_host else 'slice'}"))
    return extra


def _both_ways(topo, values, u: int, v: int) -> float:
    """The larger of ``values`` on the links u -> v and v -> u (0 if there are none)."""
    ids = [i for i in (topo.link_between(u, v), topo.link_between(v, u)) if i >= 0]
    return max((float(values[i]) for i in ids), default=0.0)
