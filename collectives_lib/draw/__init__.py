"""Drawings for the book: topologies, schedules and costs, in one visual language.

Every function here follows the networkx convention: it takes ``ax=None``
(and makes a figure of the book's width when none is given), imports
matplotlib only when called, never calls ``plt.show()``, and returns its
artists in a dict. Every dict also carries ``"figure"``, ``"axes"`` and
``"alt"``, a one-sentence description of the picture for screen readers;
:func:`show` turns a figure (or such a dict) into an ``<img>`` with that alt
text, which is how the chapters display figures::

    import collectives_lib as cl
    art = cl.draw.draw_torus(cl.tpu_pod("v5e"))
    cl.draw.show(art)                      # PNG card with alt text

One palette for the whole book (module constants, never re-chosen per figure):

* :data:`RANK_COLORS` -- one colour per rank or chunk origin (Paul Tol's
  colour-blind-safe *muted* scheme); beyond nine ranks the colours repeat
  with a hatching from :data:`RANK_HATCHES`, and small drawings also print
  the rank number, so colour never carries meaning alone.
* :data:`OP_COLORS` and :data:`OP_LINESTYLES` -- copy (blue, solid) versus
  reduce (vermillion, dashed).
* :data:`LINK_COLORS` and :data:`LINK_LINESTYLES` -- ICI, NVLink,
  InfiniBand, PCIe, DCN (Okabe-Ito hues where it has them; PCIe dotted, DCN
  dash-dotted, so print and colour-blind readers can tell them apart).
* :data:`STAGE_COLORS` -- stages of a schedule (Tol's *bright* scheme, with
  :data:`STAGE_HATCHES`).
* :data:`LOAD_CMAP` -- link loads, light (idle) to dark (busiest).

One size rule: :data:`FIGURE_WIDTH` inches at :data:`DPI` (700 px, the
width of the sphinx-book-theme page column), ``layout="constrained"`` and a
white background, so the PNG reads as a card in the site's dark mode too.

Counting artists (what the tests check): schedule drawings return
``"arrows"``, a LineCollection with one path per transfer of the step
(``len(art["arrows"].get_paths())``), and ``"slots"``, a PolyCollection with
one rectangle per participant and slot (``participants x num_slots``).
Topology drawings return ``"nodes"`` (one square per endpoint) and
``"links"`` (one path per drawn link; see each function for what a link is).

Introduced in the chapter *A first look*; the gallery appendix shows every
drawing.
"""

from __future__ import annotations

import base64
import html as _html
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from .. import hardware as hw
from ..errors import CollectivesError
from ..schedule import Schedule, expand_box
from ..topology import LINK_CLASSES, GpuCluster, Switch, Topology, Torus, TpuSlice, TpuSystem
from ..units import format_bytes, format_rate, format_time

__all__ = [
    "FIGURE_WIDTH", "FIGURE_HEIGHT", "DPI", "RANK_COLORS", "RANK_HATCHES", "EMPTY_COLOR",
    "OP_COLORS", "OP_LINESTYLES", "LINK_COLORS", "LINK_LINESTYLES", "LINK_LABELS",
    "STAGE_COLORS", "STAGE_HATCHES", "ALGORITHM_STYLES", "LOAD_CMAP", "TEXT_COLOR",
    "new_figure", "show", "FigureImage", "rank_color", "rank_hatch",
    "draw_topology", "draw_torus", "draw_torus_summary", "draw_slice_in_pod",
    "draw_tpu_system", "draw_switch", "draw_fat_tree", "draw_bisection", "draw_route",
    "draw_buffers", "draw_transfers", "draw_schedule_step", "draw_schedule_steps",
    "schedule_animation", "draw_cost_curves", "draw_bandwidth_curves", "draw_step_times",
    "draw_link_loads", "draw_bandwidth_ladder", "draw_all_to_all_blocks", "draw_pipeline", "draw_packet_pipeline", "packet_pipeline_animation",
]

# ---------------------------------------------------------------------------
# The palette and the size rule
# ---------------------------------------------------------------------------

#: Width of every book figure in inches (700 px at :data:`DPI`).
FIGURE_WIDTH = 7.0
#: Default height in inches.
FIGURE_HEIGHT = 3.2
#: Resolution of the PNGs the book shows.
DPI = 100

TEXT_COLOR = "#1f2328"
MUTED_COLOR = "#57606a"
FAINT_COLOR = "#c9ced6"
NODE_COLOR = "#eef1f4"

#: One colour per rank / chunk origin: Paul Tol's muted scheme (colour-blind safe).
RANK_COLORS = ("#CC6677", "#332288", "#DDCC77", "#117733", "#88CCEE",
               "#882255", "#44AA99", "#999933", "#AA4499")
#: Rank ``r`` is drawn in ``RANK_COLORS[r % 9]`` with ``RANK_HATCHES[r // 9 % 6]``.
RANK_HATCHES = ("", "/", "-", "x", "\\", "|")

# The strokes that draw each hatch inside a unit cell (buffers draw them as lines:
# matplotlib's own hatching is far too slow for thousands of slots).
_HATCH_STROKES = {
    "/": [((0, 0), (1, 1))], "-": [((0, 0.5), (1, 0.5))], "x": [((0, 0), (1, 1)), ((0, 1), (1, 0))],
    "\\": [((0, 1), (1, 0))], "|": [((0.5, 0), (0.5, 1))],
}
#: An empty slot.
EMPTY_COLOR = "#ffffff"

#: Copy versus reduce: a colour and a line style each (Okabe-Ito blue and vermillion).
OP_COLORS = {"copy": "#0072B2", "reduce": "#D55E00"}
OP_LINESTYLES = {"copy": "-", "reduce": (0, (4, 2))}

#: One colour per link class (Okabe-Ito), in ``topology.LINK_CLASSES`` terms.
LINK_COLORS = {"ici": "#009E73", "nvlink": "#E69F00", "ib": "#CC79A7",
               "pcie": "#8C5A2B", "dcn": "#555555", "link": "#7F7F7F"}
LINK_LINESTYLES = {"ici": "-", "nvlink": "-", "ib": "-", "pcie": (0, (1, 1.5)),
                   "dcn": (0, (6, 2, 1, 2)), "link": "-"}
LINK_LABELS = {"ici": "ICI", "nvlink": "NVLink", "ib": "InfiniBand", "pcie": "PCIe",
               "dcn": "DCN", "link": "link"}
#: Wraparound links of a torus: the class colour, this dash.
WRAP_LINESTYLE = (0, (2.0, 1.2))

#: Stages of a schedule (Tol's bright scheme) and a hatch per stage.
STAGE_COLORS = ("#4477AA", "#EE6677", "#228833", "#CCBB44", "#66CCEE", "#AA3377", "#BBBBBB")
STAGE_HATCHES = ("", "///", "...", "xx", "\\\\\\", "oo", "++")

#: Algorithms in cost plots: (colour, line style, marker), in order.
ALGORITHM_STYLES = (
    ("#4477AA", "-", "o"), ("#EE6677", "--", "s"), ("#228833", "-.", "^"),
    ("#AA3377", ":", "D"), ("#CCBB44", "-", "v"), ("#66CCEE", "--", "P"),
    ("#555555", "-.", "X"), ("#882255", ":", "*"),
)

#: Colour map for link loads: light (idle) to dark (busiest); a slice of
#: matplotlib's perceptually uniform, colour-blind-safe ``magma_r``.
LOAD_CMAP = "magma_r"
_LOAD_RANGE = (0.08, 0.92)

_TIER_COLORS = {"chip": "#332288", "memory": "#88CCEE"}  # bandwidth ladder tiers


def rank_color(rank: int) -> str:
    """The colour of rank (or chunk origin) ``rank``."""
    return RANK_COLORS[int(rank) % len(RANK_COLORS)]


def rank_hatch(rank: int) -> str:
    """The hatch that tells apart ranks that share a colour ('' for ranks 0..8)."""
    return RANK_HATCHES[(int(rank) // len(RANK_COLORS)) % len(RANK_HATCHES)]


def _op_name(code: int) -> str:
    return "copy" if int(code) == 0 else "reduce"


def _text_on(color) -> str:
    """Dark or white text, whichever reads better on ``color``."""
    from matplotlib.colors import to_rgb

    r, g, b = to_rgb(color)
    lum = 0.2126 * r ** 2.2 + 0.7152 * g ** 2.2 + 0.0722 * b ** 2.2
    return TEXT_COLOR if lum > 0.22 else "white"


def _tint(color, amount: float = 0.25) -> tuple[float, float, float]:
    from matplotlib.colors import to_rgb

    rgb = np.array(to_rgb(color))
    return tuple(1 - amount * (1 - rgb))


def _load_cmap():
    import matplotlib as mpl
    from matplotlib.colors import ListedColormap

    base = mpl.colormaps[LOAD_CMAP]
    return ListedColormap(base(np.linspace(*_LOAD_RANGE, 256)), name="collectives_load")


# ---------------------------------------------------------------------------
# Figures, axes and display
# ---------------------------------------------------------------------------

def new_figure(nrows: int = 1, ncols: int = 1, *, height: float | None = None,
               width: float = FIGURE_WIDTH, pyplot: bool = True, **kwargs: Any):
    """A figure of the book's width with constrained layout and a white background.

    Returns ``(fig, axes)`` like ``plt.subplots``. With ``pyplot=False`` the
    figure is not registered with pyplot (for explorers and animations, which
    render it to PNG themselves); otherwise it shows inline as usual.
    Extra keyword arguments go to ``Figure.subplots`` (``width_ratios``,
    ``sharey``, ``subplot_kw``...).
    """
    height = FIGURE_HEIGHT if height is None else float(height)
    fig_kw = {"figsize": (float(width), height), "facecolor": "white", "dpi": DPI,
              "layout": kwargs.pop("layout", "constrained")}
    if pyplot:
        import matplotlib.pyplot as plt

        fig = plt.figure(**fig_kw)
    else:
        from matplotlib.figure import Figure

        fig = Figure(**fig_kw)
    if nrows == 0 or ncols == 0:
        return fig, None
    kwargs.setdefault("squeeze", True)
    axes = fig.subplots(nrows, ncols, **kwargs)
    return fig, axes


def _axes(ax, height: float | None = None, **kw):
    """(fig, ax) from a given Axes, or a new figure."""
    if ax is None:
        fig, ax = new_figure(height=height, **kw)
        return fig, ax
    return ax.figure, ax


def _panel_axes(ax, n: int, *, nrows: int = 1, height: float | None = None, **kw):
    """Axes for a multi-panel drawing: ``ax`` may be None, a Figure/SubFigure or a
    sequence of at least ``n`` Axes."""
    from matplotlib.figure import FigureBase

    ncols = -(-n // nrows)
    if ax is None:
        fig, axes = new_figure(nrows, ncols, height=height, squeeze=False, **kw)
    elif isinstance(ax, FigureBase):
        fig = ax
        axes = fig.subplots(nrows, ncols, squeeze=False, **kw)
    else:
        axes = np.asarray(ax, dtype=object).ravel()
        if len(axes) < n:
            raise ValueError(f"this drawing needs {n} axes, got {len(axes)}")
        return axes[0].figure, list(axes[:n])
    flat = list(np.asarray(axes, dtype=object).ravel())
    for extra in flat[n:]:
        extra.set_visible(False)
    return fig, flat[:n]


def _top_figure(fig):
    while hasattr(fig, "figure") and fig.figure is not fig and fig.figure is not None:
        fig = fig.figure
    return fig


class FigureImage:
    """A rendered figure with its alt text; displays as an ``<img>`` card.

    Made by :func:`show`. ``png`` holds the bytes, ``alt`` the text.
    """

    def __init__(self, png: bytes, alt: str, width: int | None = None):
        if not alt or not str(alt).strip():
            raise ValueError("a figure needs non-empty alt text")
        self.png = png
        self.alt = str(alt)
        self.width = width

    def _repr_html_(self) -> str:
        data = base64.b64encode(self.png).decode("ascii")
        width = f' width="{int(self.width)}"' if self.width else ""
        return (f'<img class="cl-figure dark-light" src="data:image/png;base64,{data}"'
                f' alt="{_html.escape(self.alt, quote=True)}"{width}'
                ' style="max-width:100%;height:auto;background:#fff;border-radius:0">')

    def __repr__(self) -> str:
        return f"<figure ({len(self.png) / 1e3:.0f} kB): {self.alt}>"


def show(figure: Any, alt: str | None = None, *, compact: bool = True,
         width: int | None = None) -> FigureImage:
    """Render a figure (or the dict a drawing returned) as an image with alt text.

    The figure is closed. Display the result (last expression of a cell). The
    alt text defaults to the drawing's own ``"alt"``; pass ``alt=`` to say
    more. ``compact`` quantises the PNG to 256 colours (flat book figures
    lose nothing and weigh a third).
    """
    from ..explore import render_png

    if isinstance(figure, Mapping):
        alt = alt or figure.get("alt")
        figure = figure["figure"]
    figure = _top_figure(figure)
    if not alt:
        raise ValueError("show() needs alt text: pass alt='...' (a sentence saying what the figure shows)")
    return FigureImage(render_png(figure, compact=compact), alt, width)


def _hide_frame(ax) -> None:
    for side in ("top", "right", "left", "bottom"):
        ax.spines[side].set_visible(False)
    ax.tick_params(length=0)


def _blank(ax) -> None:
    _hide_frame(ax)
    ax.set_xticks([])
    ax.set_yticks([])


def _rects(x0, y0, w, h) -> np.ndarray:
    """(K, 4, 2) rectangle vertices."""
    x0, y0, w, h = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (x0, y0, w, h)))
    x0, y0, w, h = (v.ravel() for v in (x0, y0, w, h))
    return np.stack([np.stack([x0, y0], 1), np.stack([x0 + w, y0], 1),
                     np.stack([x0 + w, y0 + h], 1), np.stack([x0, y0 + h], 1)], axis=1)


def _squares(pos: np.ndarray, size: float) -> np.ndarray:
    return _rects(pos[:, 0] - size / 2, pos[:, 1] - size / 2, size, size)


def _linewidth_for(bandwidth, max_bandwidth, *, max_width: float = 8.0, min_width: float = 0.5):
    """Line width in points proportional to bandwidth (clipped below for visibility)."""
    return np.clip(max_width * np.asarray(bandwidth, dtype=float) / float(max_bandwidth),
                   min_width, max_width)


def _topology_name(topo: Topology) -> str:
    if isinstance(topo, TpuSlice):
        shape = "x".join(map(str, topo.dims))
        gen = topo.generation
        whole = gen.pod_shape is not None and tuple(sorted(topo.dims)) == tuple(sorted(gen.pod_shape))
        return f"TPU {gen.name} {'pod' if whole else 'slice'} {shape}"
    if isinstance(topo, TpuSystem):
        shape = "x".join(map(str, topo.slice.dims))
        if topo.num_slices == 1:
            return f"one TPU {topo.slice.generation.name} slice of {shape}"
        return f"{topo.num_slices} TPU {topo.slice.generation.name} slices of {shape}"
    if isinstance(topo, GpuCluster):
        return f"{topo.num_nodes_} {topo.system.name.upper()} nodes"
    if isinstance(topo, Switch):
        if topo.name:
            return f"{topo.name.upper()} ({topo.num_ranks} GPUs on NVSwitch)"
        return f"{topo.num_ranks} ranks on a switch"
    if isinstance(topo, Torus):
        shape = "x".join(map(str, topo.dims))
        if len(topo.dims) == 1:
            return f"{'ring' if topo.wraparound[0] else 'chain'} of {topo.num_ranks}"
        kind = "torus" if all(topo.wraparound) else ("mesh" if not any(topo.wraparound) else "partial torus")
        return f"{shape} {kind}"
    return repr(topo)


def _wrap_text(topo: Torus) -> str:
    axes = [n for n, w in zip(topo.axis_names, topo.wraparound) if w]
    if not axes:
        return "no wraparound"
    return "wraparound on " + " and ".join(axes)


def _step_title(schedule: Schedule, step: int) -> str:
    """``step 3: 16 transfers (reduce-scatter)``: the panel title of one step."""
    st = schedule.steps[step]
    return f"step {step + 1}: {len(st)} transfers" + (f" ({st.stage})" if st.stage else "")


def _wrap_title(text: str, width: int = 92) -> str:
    """Break a long figure title over lines that fit the page column."""
    import textwrap
    return "\n".join(textwrap.wrap(text, width)) if len(text) > width else text


def _class_legend(ax, classes, *, wrap=False, extra=(), loc="upper left",
                  bbox=(1.01, 1.0), ncol=1, fontsize=8, title=None):
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color=LINK_COLORS[c], ls=LINK_LINESTYLES[c], lw=2,
                      label=label) for c, label in classes]
    if wrap:
        c = classes[0][0] if classes else "link"
        handles.append(Line2D([], [], color=LINK_COLORS[c], ls=WRAP_LINESTYLE, lw=2,
                              label="wraparound: leaves\none edge, re-enters\nthe opposite one"))
    handles.extend(extra)
    return ax.legend(handles=handles, loc=loc, bbox_to_anchor=bbox, ncol=ncol,
                     fontsize=fontsize, frameon=False, title=title,
                     title_fontsize=fontsize, borderaxespad=0.0)


# ---------------------------------------------------------------------------
# Torus geometry
# ---------------------------------------------------------------------------

def _torus_coords(topo: Torus) -> np.ndarray:
    return np.stack(np.unravel_index(np.arange(topo.num_ranks), topo.dims), axis=1)


def _link_geometry(topo: Torus, pos: np.ndarray, axis_vec: Mapping[int, np.ndarray], *,
                   select=None, offset: float = 0.0, stub: float = 0.78, shrink: float = 0.0):
    """Polylines for torus links.

    ``pos[rank]`` is each chip's drawing position (NaN: not drawn);
    ``axis_vec[axis]`` the drawing direction of the axis (axes not in it are
    skipped). Wraparound links become two stubs: out of the source's edge and
    into the destination's opposite edge, joined by NaN (one path per link).
    ``offset`` shifts a link to the right of its direction of travel, so the
    two directions of a full-duplex link sit side by side.
    Returns (link ids, list of (k, 2) arrays, is_wrap per returned link).
    """
    links = topo.links
    coords = _torus_coords(topo)
    axis = topo.link_axis()
    wrap = topo.is_wrap_link()
    ids = np.arange(len(links)) if select is None else np.asarray(select)
    keep = np.isin(axis[ids], list(axis_vec))
    ids = ids[keep]
    src, dst = links.src[ids], links.dst[ids]
    ok = ~np.isnan(pos[src, 0]) & ~np.isnan(pos[dst, 0])
    ids, src, dst = ids[ok], src[ok], dst[ok]
    ax_of = axis[ids]
    paths, wraps = [], []
    for lid, s, d, a in zip(ids.tolist(), src.tolist(), dst.tolist(), ax_of.tolist()):
        v = axis_vec[a]
        size = topo.dims[a]
        delta = (coords[d, a] - coords[s, a]) % size
        sign = 1.0 if delta == 1 else -1.0
        if size == 2 and not wrap[lid]:
            sign = 1.0 if coords[d, a] > coords[s, a] else -1.0
        travel = sign * v
        normal = np.array([travel[1], -travel[0]]) * offset
        p, q = pos[s] + normal, pos[d] + normal
        if wrap[lid] and topo.dims[a] > 1 and size > 2 or (wrap[lid] and size == 2 and not topo.bidirectional):
            out = p + travel * stub
            inn = q - travel * stub
            p2 = p + travel * shrink
            q2 = q - travel * shrink
            paths.append(np.array([p2, out, [np.nan, np.nan], inn, q2]))
            wraps.append(True)
        else:
            direction = q - p
            length = np.hypot(*direction)
            unit = direction / length if length else direction
            paths.append(np.array([p + unit * shrink, q - unit * shrink]))
            wraps.append(False)
    return ids, paths, np.array(wraps, dtype=bool)


def _undirected(topo: Topology, ids: np.ndarray) -> np.ndarray:
    """Keep one link of each full-duplex pair (the one with src < dst, or the
    only one for one-way links)."""
    links = topo.links
    src, dst = links.src[ids], links.dst[ids]
    pair = {}
    for lid, s, d in zip(ids.tolist(), src.tolist(), dst.tolist()):
        key = (min(s, d), max(s, d))
        pair.setdefault(key, lid)
    return np.array(sorted(pair.values()), dtype=np.int64)


def _grid_pos(topo: Torus, plane: int | None = None) -> np.ndarray:
    """Drawing positions: x across, y up; for 3D, only the chips of z-plane ``plane``."""
    c = _torus_coords(topo).astype(float)
    if len(topo.dims) == 1:
        return np.stack([c[:, 0], np.zeros(len(c))], 1)
    pos = c[:, :2].copy()
    if len(topo.dims) == 3:
        pos[c[:, 2] != plane] = np.nan
    return pos


def _ring_pos(n: int, radius: float = 1.0, start: float = 90.0) -> np.ndarray:
    angles = np.deg2rad(start - 360.0 * np.arange(n) / n)
    return np.stack([radius * np.cos(angles), radius * np.sin(angles)], 1)


def _draw_torus_links(ax, topo: Torus, pos, axis_vec, *, values=None, cmap=None, norm=None,
                      lw=None, muted=False, zorder=1):
    """Undirected class-coloured links (values None) or directed value-coloured links."""
    from matplotlib.collections import LineCollection

    klass = LINK_CLASSES[int(topo.links.klass[0])] if len(topo.links) else "link"
    color = FAINT_COLOR if muted else LINK_COLORS[klass]
    if values is None:
        select = _undirected(topo, np.arange(len(topo.links)))
        ids, paths, wraps = _link_geometry(topo, pos, axis_vec, select=select)
        styles = [WRAP_LINESTYLE if w else "-" for w in wraps]
        width = lw if lw is not None else 1.6
        coll = LineCollection(paths, colors=color, linewidths=width, linestyles=styles,
                              zorder=zorder, capstyle="butt")
    else:
        ids, paths, wraps = _link_geometry(topo, pos, axis_vec, offset=0.11, shrink=0.22)
        vals = np.asarray(values, dtype=float)[ids]
        colors = cmap(norm(vals))
        idle = vals <= 0
        colors[idle] = (0.86, 0.87, 0.89, 1.0)
        widths = np.where(idle, 0.8, lw if lw is not None else 2.2)
        styles = [WRAP_LINESTYLE if w else "-" for w in wraps]
        coll = LineCollection(paths, colors=colors, linewidths=widths, linestyles=styles,
                              zorder=zorder, capstyle="butt")
    ax.add_collection(coll, autolim=False)
    return coll, ids, wraps


def _draw_chips(ax, pos, *, size=0.44, facecolor=NODE_COLOR, edgecolor="#6e7781", zorder=3, lw=0.8):
    from matplotlib.collections import PolyCollection

    keep = ~np.isnan(pos[:, 0])
    verts = _squares(pos[keep], size)
    coll = PolyCollection(verts, facecolors=facecolor if np.ndim(facecolor) < 2 else np.asarray(facecolor)[keep],
                          edgecolors=edgecolor, linewidths=lw, zorder=zorder)
    ax.add_collection(coll, autolim=False)
    return coll


def _grid_ticks(ax, X: int, Y: int, fontsize: float = 8) -> None:
    def ticks(n):
        step = 1 if n <= 16 else (2 if n <= 32 else 4)
        return list(range(0, n, step))

    ax.set_xticks(ticks(X))
    ax.set_yticks(ticks(Y) if Y > 1 else [])
    ax.tick_params(labelsize=fontsize, length=0, pad=2)
    _hide_frame(ax)


def _coord_labels(ax, topo: Torus, pos, fontsize, color=TEXT_COLOR):
    texts = []
    for r in np.nonzero(~np.isnan(pos[:, 0]))[0].tolist():
        c = topo.coords(r)
        label = ",".join(map(str, c[:2] if len(c) == 3 else c))
        texts.append(ax.text(pos[r, 0], pos[r, 1], label, ha="center", va="center",
                             fontsize=fontsize, color=color, zorder=4))
    return texts


# ---------------------------------------------------------------------------
# Topologies
# ---------------------------------------------------------------------------

def draw_topology(topology: Topology, ax=None, **kwargs):
    """Draw any topology with the drawing that suits it.

    Tori and TPU slices: :func:`draw_torus` (large 3D ones:
    :func:`draw_torus_summary`); TPU systems: :func:`draw_tpu_system`; a
    switch: :func:`draw_switch`; a GPU cluster: :func:`draw_fat_tree`.
    """
    if isinstance(topology, TpuSystem):
        return draw_tpu_system(topology, ax=ax, **kwargs)
    if isinstance(topology, GpuCluster):
        return draw_fat_tree(topology, ax=ax, **kwargs)
    if isinstance(topology, Switch):
        return draw_switch(topology, ax=ax, **kwargs)
    if isinstance(topology, Torus):
        if len(topology.dims) == 3 and topology.dims[2] > 8:
            return draw_torus_summary(topology, ax=ax, **kwargs)
        return draw_torus(topology, ax=ax, **kwargs)
    raise CollectivesError(f"no drawing for {topology!r}")


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
    fig, ax = _axes(ax, height)
    pos = _grid_pos(topology)
    axis_vec = {0: np.array([1.0, 0.0])}
    if len(dims) == 2:
        axis_vec[1] = np.array([0.0, 1.0])
    cmap = norm = None
    if link_values is not None:
        cmap, norm = _value_norm(link_values)
    links, _, wraps = _draw_torus_links(ax, topology, pos, axis_vec, values=link_values,
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
    texts = _coord_labels(ax, topology, pos, fontsize=7 if max(X, Y) <= 4 else 6) if labels else []
    ax.set_xlim(-1.0, X)
    ax.set_ylim(-0.9 if Y > 1 else -0.6, Y - 0.1 if Y > 1 else 0.6)
    ax.set_aspect("equal")
    _grid_ticks(ax, X, Y)
    ax.set_xlabel("x (chip coordinate)", fontsize=9)
    if Y > 1:
        ax.set_ylabel("y", fontsize=9)
    klass = LINK_CLASSES[int(topology.links.klass[0])]
    bw = format_rate(topology.links.bandwidth[0])
    if title is None:
        title = f"{_topology_name(topology)}: {topology.num_ranks} chips, {_wrap_text(topology)}"
    ax.set_title(title, fontsize=10)
    cbar = None
    if link_values is not None:
        cbar = _value_colorbar(fig, ax, cmap, norm, value_label)
    elif legend:
        _class_legend(ax, [(klass, f"{LINK_LABELS[klass]} link,\n{bw} each way")],
                      wrap=bool(wraps.any()))
    alt = (f"{_topology_name(topology)} drawn as a {X} by {Y} grid of {topology.num_ranks} "
           f"chips with their {LINK_LABELS[klass]} links"
           + ("; dashed stubs at the edges are the wraparound links" if wraps.any() else "")
           + (", coloured by load" if link_values is not None else "") + ".")
    return {"nodes": nodes, "links": links, "labels": texts, "colorbar": cbar,
            "figure": fig, "axes": ax, "alt": alt}


def _draw_ring_topology(topo: Torus, ax, *, labels, highlight, link_values, value_label, title):
    from matplotlib.collections import LineCollection
    from matplotlib.colors import to_rgba

    n = topo.num_ranks
    fig, ax = _axes(ax, 3.2 if ax is None else None)
    pos = _ring_pos(n)
    node_r = min(0.13, 2.6 / n)
    links = topo.links
    klass = LINK_CLASSES[int(links.klass[0])]
    cmap = norm = None
    if link_values is None:
        ids = _undirected(topo, np.arange(len(links)))
        offset = 0.0
    else:
        ids = np.arange(len(links))
        offset = 0.035
        cmap, norm = _value_norm(link_values)
    paths = []
    for lid in ids.tolist():
        p, q = pos[links.src[lid]], pos[links.dst[lid]]
        d = q - p
        u = d / np.hypot(*d)
        nrm = np.array([u[1], -u[0]]) * offset
        paths.append(np.array([p + u * node_r + nrm, q - u * node_r + nrm]))
    if link_values is None:
        coll = LineCollection(paths, colors=LINK_COLORS[klass], linewidths=1.8, zorder=1)
    else:
        vals = np.asarray(link_values, dtype=float)[ids]
        colors = cmap(norm(vals))
        colors[vals <= 0] = (0.86, 0.87, 0.89, 1.0)
        coll = LineCollection(paths, colors=colors, linewidths=2.2, zorder=1)
    ax.add_collection(coll, autolim=False)
    face = np.array([to_rgba(NODE_COLOR)] * n)
    if highlight is not None:
        face[np.asarray(list(highlight), dtype=int)] = to_rgba(RANK_COLORS[4])
    nodes = _draw_circles(ax, pos, node_r, face)
    texts = []
    if labels is None:
        labels = n <= 32
    if labels:
        for r in range(n):
            texts.append(ax.text(*pos[r], str(r), ha="center", va="center", fontsize=7 if n <= 16 else 6, zorder=4))
    ax.set_xlim(-1.25, 1.25)
    ax.set_ylim(-1.2, 1.2)
    ax.set_aspect("equal")
    _blank(ax)
    ax.set_title(title or f"{_topology_name(topo)} ({'full-duplex' if topo.bidirectional else 'one-way'} links, "
                 f"{format_rate(links.bandwidth[0])} each)", fontsize=10)
    cbar = _value_colorbar(fig, ax, cmap, norm, value_label) if link_values is not None else None
    alt = f"A ring of {n} ranks drawn as a circle, each linked to its two neighbours."
    return {"nodes": nodes, "links": coll, "labels": texts, "colorbar": cbar,
            "figure": fig, "axes": ax, "alt": alt}


def _draw_circles(ax, pos, radius, face, edgecolor="#6e7781", zorder=3, lw=0.8):
    from matplotlib.collections import PolyCollection

    t = np.linspace(0, 2 * np.pi, 25)
    circle = np.stack([np.cos(t), np.sin(t)], 1) * radius
    verts = pos[:, None, :] + circle[None, :, :]
    coll = PolyCollection(verts, facecolors=face, edgecolors=edgecolor, linewidths=lw, zorder=zorder)
    ax.add_collection(coll, autolim=False)
    return coll


def _draw_torus_3d(topo: Torus, ax, *, labels, highlight, link_values, value_label, title):
    from matplotlib.colors import to_rgba

    X, Y, Z = topo.dims
    if Z > 8:
        raise CollectivesError(
            f"{_topology_name(topo)} has {Z} z-planes, too many for one panel each; "
            "use draw_torus_summary"
        )
    nrows = 1 if Z <= 4 else 2
    height = None if ax is not None else (2.4 if nrows == 1 else 4.4) * (0.8 + 0.05 * Y)
    fig, axes = _panel_axes(ax, Z, nrows=nrows, height=height)
    axis_vec = {0: np.array([1.0, 0.0]), 1: np.array([0.0, 1.0])}
    cmap = norm = None
    if link_values is not None:
        cmap, norm = _value_norm(link_values)
        zlinks = np.nonzero(topo.link_axis() == 2)[0]
        zbusy = np.zeros(topo.num_ranks)
        np.maximum.at(zbusy, topo.links.src[zlinks], np.asarray(link_values, dtype=float)[zlinks])
    nodes, links_all, texts = [], [], []
    wraps_any = False
    if labels is None:
        labels = X * Y <= 16 and link_values is None
    for z, a in enumerate(axes):
        pos = _grid_pos(topo, plane=z)
        links, _, wraps = _draw_torus_links(a, topo, pos, axis_vec, values=link_values,
                                            cmap=cmap, norm=norm, lw=1.4 if link_values is None else 2.0)
        wraps_any |= bool(wraps.any())
        face = np.array([to_rgba(NODE_COLOR)] * topo.num_ranks)
        if link_values is not None:
            busy = zbusy > 0
            face[busy] = cmap(norm(zbusy[busy]))
        if highlight is not None:
            face[np.asarray(list(highlight), dtype=int)] = to_rgba(RANK_COLORS[4])
        nodes.append(_draw_chips(a, pos, size=0.5, facecolor=face))
        if labels:
            texts += _coord_labels(a, topo, pos, fontsize=6)
        a.set_xlim(-1.0, X)
        a.set_ylim(-1.0, Y)
        a.set_aspect("equal")
        _grid_ticks(a, X, Y, fontsize=7)
        a.set_title(f"z = {z}", fontsize=9)
        a.set_xlabel("x", fontsize=8)
        if z % (len(axes) // nrows or 1) == 0:
            a.set_ylabel("y", fontsize=8)
        links_all.append(links)
    klass = LINK_CLASSES[int(topo.links.klass[0])]
    zwrap = "with wraparound" if topo.wraparound[2] else "without wraparound"
    fig.suptitle(title or f"{_topology_name(topo)}: {topo.num_ranks} chips, one panel per z-plane",
                 fontsize=10)
    fig.supxlabel(f"Each chip also links to the chip at the same (x, y) in planes z \u00b1 1 ({zwrap} on z).\n"
                  f"{LINK_LABELS[klass]} {format_rate(topo.links.bandwidth[0])} each way."
                  + (" Dashed stubs: wraparound links." if wraps_any else ""), fontsize=7.5,
                  color=TEXT_COLOR)
    cbar = None
    if link_values is not None:
        cbar = _value_colorbar(fig, axes, cmap, norm, value_label + "\n(chip fill: busiest z-link)")
    alt = (f"{_topology_name(topo)} drawn as {Z} panels, one per z-plane, each a {X} by {Y} grid of chips"
           + ("; dashed stubs at the edges are wraparound links" if wraps_any else "") + ".")
    return {"nodes": nodes, "links": links_all, "labels": texts, "colorbar": cbar,
            "figure": fig, "axes": axes, "alt": alt}


def _iso(p, scale=1.0):
    """Isometric projection of (x, y, z) points: x to the right-down, y to the left-down, z up."""
    p = np.asarray(p, dtype=float)
    c, s = math.cos(math.radians(30)), math.sin(math.radians(30))
    u = (p[..., 0] - p[..., 1]) * c
    v = p[..., 2] - (p[..., 0] + p[..., 1]) * s
    return np.stack([u, v], -1) * scale


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
    fig, ax = _axes(ax, 3.6 if ax is None else None)
    klass = LINK_CLASSES[int(topology.links.klass[0])]
    color = LINK_COLORS[klass]

    def face(a, b, c, d):
        return _iso(np.array([a, b, c, d]))

    faces = [face((0, 0, Z), (X, 0, Z), (X, Y, Z), (0, Y, Z)),     # top
             face((X, 0, 0), (X, Y, 0), (X, Y, Z), (X, 0, Z)),     # right (x = X)
             face((0, Y, 0), (X, Y, 0), (X, Y, Z), (0, Y, Z))]     # front (y = Y)
    box = PolyCollection(faces, facecolors=[_tint(color, 0.18), _tint(color, 0.30), _tint(color, 0.42)],
                         edgecolors=TEXT_COLOR, linewidths=1.2, zorder=1)
    ax.add_collection(box, autolim=False)
    segs = []
    for x in range(cube, X, cube):
        segs += [_iso([(x, 0, Z), (x, Y, Z)]), _iso([(x, Y, 0), (x, Y, Z)])]
    for y in range(cube, Y, cube):
        segs += [_iso([(0, y, Z), (X, y, Z)]), _iso([(X, y, 0), (X, y, Z)])]
    for z in range(cube, Z, cube):
        segs += [_iso([(X, 0, z), (X, Y, z)]), _iso([(0, Y, z), (X, Y, z)])]
    grid = LineCollection(segs, colors=TEXT_COLOR, linewidths=0.5, alpha=0.45, zorder=2)
    ax.add_collection(grid, autolim=False)
    slice_coll = None
    if slice_shape is not None:
        sx, sy, sz = (int(v) for v in slice_shape)
        x0, y0 = X - sx, Y - sy  # the visible corner
        sf = [face((x0, y0, sz), (X, y0, sz), (X, Y, sz), (x0, Y, sz)),
              face((X, y0, 0), (X, Y, 0), (X, Y, sz), (X, y0, sz)),
              face((x0, Y, 0), (X, Y, 0), (X, Y, sz), (x0, Y, sz))]
        slice_coll = PolyCollection(sf, facecolors=RANK_COLORS[0], edgecolors=TEXT_COLOR,
                                    linewidths=1.0, alpha=0.85, zorder=3, hatch="////")
        ax.add_collection(slice_coll, autolim=False)
    cut_coll = None
    bis = topology.bisection_bandwidth()
    if cut:
        axis = int(np.argmax(topology.dims))
        h = topology.dims[axis] / 2
        corners = {0: [(h, 0, 0), (h, Y, 0), (h, Y, Z), (h, 0, Z)],
                   1: [(0, h, 0), (X, h, 0), (X, h, Z), (0, h, Z)],
                   2: [(0, 0, h), (X, 0, h), (X, Y, h), (0, Y, h)]}[axis]
        cut_coll = PolyCollection([_iso(np.array(corners))], facecolors=OP_COLORS["reduce"],
                                  edgecolors=OP_COLORS["reduce"], alpha=0.35, linewidths=1.5,
                                  linestyles="--", zorder=4)
        ax.add_collection(cut_coll, autolim=False)
    # side labels
    def label(p, text, **kw):
        u, v = _iso(np.array(p))
        ax.text(u, v, text, fontsize=8, color=TEXT_COLOR, **kw)

    big = max(X, Y, Z)
    label((X / 2, Y + 0.06 * big, 0), f"x: {X} chips", ha="center", va="top", rotation=-30,
          rotation_mode="anchor")
    label((X + 0.06 * big, Y / 2, 0), f"y: {Y} chips", ha="center", va="top", rotation=30,
          rotation_mode="anchor")
    label((-0.05 * big, Y, Z / 2), f"z: {Z} chips", ha="right", va="center")
    pts = _iso(np.array([[0, 0, 0], [X, 0, 0], [0, Y, 0], [X, Y, 0], [0, 0, Z], [X, 0, Z], [0, Y, Z], [X, Y, Z]]))
    pad = 0.1 * (pts.max(0) - pts.min(0))
    ax.set_xlim(pts[:, 0].min() - 2.2 * pad[0], pts[:, 0].max() + pad[0])
    ax.set_ylim(pts[:, 1].min() - 1.6 * pad[1], pts[:, 1].max() + 0.5 * pad[1])
    ax.set_aspect("equal")
    _blank(ax)
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
    ax.text(1.04, 0.5, text, transform=ax.transAxes, ha="left", va="center", fontsize=8,
            color=TEXT_COLOR, linespacing=1.5,
            bbox=dict(boxstyle="round,pad=0.5", facecolor="white", edgecolor=FAINT_COLOR))
    ax.set_title(title or f"{_topology_name(topology)}: a {X}x{Y}x{Z} 3D torus of {cube}x{cube}x{cube} cubes",
                 fontsize=10)
    alt = (f"{_topology_name(topology)} drawn as a box of {X} by {Y} by {Z} chips divided into "
           f"{cube}-chip cubes; {topology.num_ranks} chips, bisection bandwidth {format_rate(bis)} one way"
           + (f"; a {'x'.join(map(str, slice_shape))} slice is shaded in one corner" if slice_shape is not None else "")
           + (", with the bisection plane shaded" if cut else "") + ".")
    return {"box": box, "grid": grid, "slice": slice_coll, "cut": cut_coll, "bisection": bis,
            "figure": fig, "axes": ax, "alt": alt}


def draw_slice_in_pod(slice_topology: TpuSlice, ax=None, *, origin=None, pod: Torus | None = None):
    """A slice highlighted inside its pod.

    2D generations (v5e, v6e): the pod's grid with the slice's chips filled
    and framed at ``origin`` (default the corner), and a note on whether the
    slice keeps the pod's wraparound. 3D generations: the pod's box from
    :func:`draw_torus_summary` with the slice shaded.

    Returns the dict of the pod drawing plus ``"slice_ranks"`` (pod ranks of
    the slice) and ``"frame"`` (the outline patch, 2D).
    """
    from matplotlib.patches import Rectangle

    if not isinstance(slice_topology, TpuSlice):
        raise CollectivesError(f"draw_slice_in_pod needs a TPU slice, not {slice_topology!r}")
    gen = slice_topology.generation
    if pod is None:
        from ..topology import tpu_pod

        pod = tpu_pod(gen.name)
    shape = slice_topology.dims
    if len(pod.dims) == 3:
        art = draw_torus_summary(pod, ax=ax, slice_shape=shape)
        art["slice_ranks"] = None
        art["frame"] = None
        return art
    origin = tuple(origin) if origin is not None else (0,) * len(shape)
    grid = np.stack(np.meshgrid(*[np.arange(o, o + s) for o, s in zip(origin, shape)], indexing="ij"), -1).reshape(-1, len(shape))
    ranks = [pod.rank_of(c) for c in grid]
    wrap = _wrap_text(slice_topology)
    art = draw_torus(pod, ax=ax, highlight=ranks, labels=False,
                     title=f"A {'x'.join(map(str, shape))} slice ({len(ranks)} chips) in the "
                           f"{_topology_name(pod)}")
    a = art["axes"]
    frame = Rectangle((origin[0] - 0.5, origin[1] - 0.5), shape[0], shape[1], fill=False,
                      edgecolor=TEXT_COLOR, lw=2.0, zorder=5)
    a.add_patch(frame)
    a.text(origin[0] + shape[0] / 2 - 0.5, origin[1] + shape[1] / 2 - 0.5,
           f"slice {'x'.join(map(str, shape))}\n{wrap}", ha="center", va="center", fontsize=8,
           color=TEXT_COLOR, zorder=6,
           bbox=dict(boxstyle="round,pad=0.25", facecolor="white", edgecolor=FAINT_COLOR))
    art["slice_ranks"] = ranks
    art["frame"] = frame
    art["alt"] = (f"The {_topology_name(pod)} grid with a {'x'.join(map(str, shape))} slice of "
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

    Returns ``{"nodes": chips, "hosts": PolyCollection (one per host),
    "links": {"ici", "pcie", "dcn"} LineCollections (ICI: one path per
    full-duplex pair; PCIe: one per chip; DCN: one per host or per slice),
    "figure", "axes", "alt"}``.
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
            f"draw_tpu_system draws 2D slices (v5e, v6e); {_topology_name(sl)} is 3D: "
            "use draw_torus for its chips"
        )
    X, Y = sl.dims
    hx, hy = sl.host_shape
    gap = 2.0
    cps = sl.num_ranks
    n_chips = cps * num_slices
    fig, ax = _axes(ax, None if ax is not None else min(5.6, 2.0 + 0.3 * Y + (0.9 if has_dcn else 0)))
    cmap = norm = None
    if link_values is not None:
        cmap, norm = _value_norm(link_values)
    base = _grid_pos(sl)
    chip_pos = np.concatenate([base + np.array([s * (X + gap), 0.0]) for s in range(num_slices)])
    hosts_per_slice = sl.num_hosts
    host_of = np.concatenate([np.asarray(sl.host_of(np.arange(cps))) + s * hosts_per_slice
                              for s in range(num_slices)])
    num_hosts = hosts_per_slice * num_slices
    host_pos = np.zeros((num_hosts, 2))
    for h in range(num_hosts):
        host_pos[h] = chip_pos[host_of == h].mean(0)
    # host blocks
    blocks = []
    for h in range(num_hosts):
        pts = chip_pos[host_of == h]
        lo, hi = pts.min(0) - 0.42, pts.max(0) + 0.42
        blocks.append(FancyBboxPatch(lo, *(hi - lo), boxstyle="round,pad=0,rounding_size=0.15",
                                     facecolor=_tint(LINK_COLORS["pcie"], 0.10),
                                     edgecolor=_tint(LINK_COLORS["pcie"], 0.5), lw=0.8, zorder=0))
    for b in blocks:
        ax.add_patch(b)
    # ICI
    axis_vec = {0: np.array([1.0, 0.0]), 1: np.array([0.0, 1.0])}
    ici_paths, ici_ids = [], []
    ici_sel = np.arange(len(sl.links)) if link_values is not None else _undirected(sl, np.arange(len(sl.links)))
    ids, paths, wraps = _link_geometry(sl, base, axis_vec, select=ici_sel,
                                       offset=0.11 if link_values is not None else 0.0,
                                       shrink=0.22 if link_values is not None else 0.0)
    for s in range(num_slices):
        shift = np.array([s * (X + gap), 0.0])
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
    chips = _draw_chips(ax, chip_pos, size=0.4)
    host_boxes = PolyCollection(_rects(host_pos[:, 0] - 0.27, host_pos[:, 1] - 0.22, 0.54, 0.44),
                                facecolors="white", edgecolors=LINK_COLORS["pcie"], linewidths=1.4, zorder=4)
    ax.add_collection(host_boxes, autolim=False)
    if labels is None:
        labels = num_hosts <= 16
    texts = []
    if labels:
        for h in range(num_hosts):
            texts.append(ax.text(*host_pos[h], f"H{h}", ha="center", va="center", fontsize=6.5,
                                 color=TEXT_COLOR, zorder=5))
    # DCN
    dcn = None
    top = Y - 0.5
    xmax = num_slices * (X + gap) - gap
    if has_dcn:
        dcn_y = Y + 1.3
        dcn_center = np.array([(xmax - 1) / 2, dcn_y])
        one_row = hy >= Y
        if one_row:
            dcn_paths = [np.array([host_pos[h] + [0, 0.22], [host_pos[h, 0], top + 0.15],
                                   dcn_center - [0, 0.25]]) for h in range(num_hosts)]
            dcn_bw = system.dcn_bandwidth_per_host
        else:
            dcn_paths = [np.array([[s * (X + gap) + (X - 1) / 2, top + 0.15], dcn_center - [0, 0.25]])
                         for s in range(num_slices)]
            dcn_bw = system.dcn_bandwidth_per_host * hosts_per_slice
        dcn = LineCollection(dcn_paths, colors=LINK_COLORS["dcn"], linewidths=1.6,
                             linestyles=[LINK_LINESTYLES["dcn"]], zorder=1)
        ax.add_collection(dcn, autolim=False)
        sw = FancyBboxPatch(dcn_center - [1.9, 0.3], 3.8, 0.6, boxstyle="round,pad=0.02",
                            facecolor="white", edgecolor=LINK_COLORS["dcn"], lw=1.5, zorder=4)
        ax.add_patch(sw)
        ax.text(*dcn_center, "DCN switch", ha="center", va="center", fontsize=8, zorder=5)
        for s in range(num_slices):
            ax.text(s * (X + gap) + (X - 1) / 2, -0.75, f"slice {s}", ha="center", va="top", fontsize=8)
    ax.set_xlim(-0.8, xmax - 0.2)
    ax.set_ylim(-1.1 if has_dcn else -0.8, (Y + 1.9) if has_dcn else Y - 0.2)
    ax.set_aspect("equal")
    _blank(ax)
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    gen = sl.generation
    extra = [Line2D([], [], color=LINK_COLORS["pcie"], ls=LINK_LINESTYLES["pcie"], lw=1.5,
                    label=f"PCIe chip\u2013host, {format_rate(float(gen.pcie_bandwidth))}"),
             Patch(facecolor=_tint(LINK_COLORS["pcie"], 0.10), edgecolor=_tint(LINK_COLORS["pcie"], 0.5),
                   label=f"one host's {hx}x{hy} chips")]
    if has_dcn:
        extra.append(Line2D([], [], color=LINK_COLORS["dcn"], ls=LINK_LINESTYLES["dcn"], lw=1.5,
                            label=f"DCN, {format_rate(dcn_bw)} per {'host' if hy >= Y else 'slice'}"))
    _class_legend(ax, [("ici", f"ICI, {format_rate(float(gen.ici_bandwidth))} each way")],
                  wrap=bool(wraps.any()), extra=extra, loc="upper center", bbox=(0.5, -0.02),
                  ncol=2 if not has_dcn else 2)
    what = ((f"{num_slices} TPU {gen.name} slices of {X}x{Y}" if num_slices > 1 else
             f"one TPU {gen.name} slice of {X}x{Y}") if has_dcn else _topology_name(sl))
    ax.set_title(f"{what[:1].upper() + what[1:]}: {num_hosts} hosts, each serving {hx}x{hy} chips over PCIe", fontsize=10)
    alt = (f"{what[:1].upper() + what[1:]}: chips in a grid joined by ICI; each block of {hx} by {hy} chips is shaded and "
           f"linked by dotted PCIe lines to its host in the middle"
           + ("; the hosts connect up to one DCN switch" if has_dcn else "") + ".")
    return {"nodes": chips, "hosts": host_boxes, "links": {"ici": ici, "pcie": pcie, "dcn": dcn},
            "labels": texts, "figure": fig, "axes": ax, "alt": alt}


def draw_switch(topology: Switch, ax=None, *, link_values=None, value_label: str = "link busy time",
                labels: bool | None = None, sides=None):
    """Endpoints on one switch (an NVSwitch node: 8 GPUs, or 72 for GB200 NVL72).

    GPUs sit on a circle around the switch, each with its link into the
    switch. ``link_values`` (one number per directed link) draws the up- and
    down-links side by side, coloured by load. ``sides`` (two lists of
    ranks) colours the two halves of a cut.

    Returns ``{"nodes": PolyCollection (one per GPU), "links": LineCollection
    (one spoke per GPU, or one per directed link with link_values), "switch",
    "labels", "figure", "axes", "alt"}``.
    """
    from matplotlib.collections import LineCollection
    from matplotlib.colors import to_rgba
    from matplotlib.patches import FancyBboxPatch

    if not isinstance(topology, Switch):
        raise CollectivesError(f"draw_switch draws a Switch, not {topology!r}")
    n = topology.num_ranks
    fig, ax = _axes(ax, (3.4 if n <= 16 else 4.4) if ax is None else None)
    pos = _ring_pos(n)
    node_r = min(0.12, 2.4 / n)
    sw_half = 0.3
    links = topology.links
    klass = topology.link_class
    cmap = norm = None
    if link_values is None:
        paths = [np.array([pos[g] * (1 - node_r), pos[g] * (sw_half / np.abs(pos[g]).max())]) for g in range(n)]
        coll = LineCollection(paths, colors=LINK_COLORS[klass], linewidths=4.0 if n <= 16 else 1.2, zorder=1)
    else:
        cmap, norm = _value_norm(link_values)
        paths = []
        for lid in range(len(links)):
            s, d = int(links.src[lid]), int(links.dst[lid])
            g = s if s < n else d
            p = pos[g] * (1 - node_r)
            q = pos[g] * (sw_half / np.abs(pos[g]).max())
            u = (q - p) / np.hypot(*(q - p))
            off = np.array([u[1], -u[0]]) * (0.025 if s < n else -0.025)
            paths.append(np.array([p + off, q + off]))
        vals = np.asarray(link_values, dtype=float)
        colors = cmap(norm(vals))
        colors[vals <= 0] = (0.86, 0.87, 0.89, 1.0)
        coll = LineCollection(paths, colors=colors, linewidths=2.0 if n <= 16 else 0.9, zorder=1)
    ax.add_collection(coll, autolim=False)
    face = np.array([to_rgba(NODE_COLOR)] * n)
    if sides is not None:
        face[np.asarray(list(sides[0]), dtype=int)] = to_rgba(RANK_COLORS[4])
        face[np.asarray(list(sides[1]), dtype=int)] = to_rgba(RANK_COLORS[2])
    nodes = _draw_circles(ax, pos, node_r, face)
    sw = FancyBboxPatch((-sw_half, -sw_half), 2 * sw_half, 2 * sw_half, boxstyle="round,pad=0.02",
                        facecolor="white", edgecolor=LINK_COLORS[klass], lw=2, zorder=4)
    ax.add_patch(sw)
    sw_name = "NVSwitch" if klass == "nvlink" else "switch"
    ax.text(0, 0, sw_name, ha="center", va="center", fontsize=8 if n <= 16 else 7, zorder=5)
    texts = []
    if labels is None:
        labels = True
    if labels:
        word = "GPU " if (klass == "nvlink" and n <= 16) else ""
        for g in range(n):
            if n <= 16:
                texts.append(ax.text(*pos[g], f"{word}{g}" if not word else str(g), ha="center", va="center",
                                     fontsize=8, zorder=5))
            else:
                texts.append(ax.text(*(pos[g] * (1 + node_r + 0.05)), str(g), ha="center", va="center",
                                     fontsize=5.5, color=TEXT_COLOR, zorder=5))
    lim = 1.25 if n > 16 else 1.2
    ax.set_xlim(-lim, lim)
    ax.set_ylim(-lim, lim)
    ax.set_aspect("equal")
    _blank(ax)
    bw = format_rate(links.bandwidth[0])
    unit = "GPU" if klass == "nvlink" else "rank"
    ax.set_title(f"{_topology_name(topology)}:\n{bw} each way from every {unit} into the switch",
                 fontsize=10)
    cbar = None
    if link_values is not None:
        cbar = _value_colorbar(fig, ax, cmap, norm, value_label)
    else:
        _class_legend(ax, [(klass, f"{LINK_LABELS[klass]}, {bw}\neach way per {unit}")],
                      loc="lower right", bbox=(1.0, 0.0))
    alt = (f"{n} {unit}s on a circle around one {sw_name}, each joined to it by a "
           f"{LINK_LABELS[klass]} link of {bw} each way.")
    return {"nodes": nodes, "links": coll, "switch": sw, "labels": texts, "colorbar": cbar,
            "figure": fig, "axes": ax, "alt": alt}


def _fat_tree_roles(cluster: GpuCluster):
    """Classify links: 'nvlink' (GPU<->NVSwitch), 'nic' (GPU<->leaf), 'uplink' (leaf<->spine)."""
    links = cluster.links
    n, m = cluster.num_ranks, cluster.num_nodes_
    s, d = links.src, links.dst
    nvl = ((s < n) & (d >= n) & (d < n + m)) | ((d < n) & (s >= n) & (s < n + m))
    up = (s == cluster.spine_node) | (d == cluster.spine_node)
    nic = ~nvl & ~up
    return nvl, nic, up


def draw_fat_tree(cluster: GpuCluster, ax=None, *, aggregate: bool | None = None, link_values=None,
                  value_label: str = "link busy time", sides=None, title: str | None = None):
    """GPU nodes on a rail-optimised InfiniBand fat tree, link widths proportional to bandwidth.

    Bottom to top: each node's GPUs on its NVSwitch (NVLink), the leaf
    switches (one per rail per Scalable Unit), and the spine. Every GPU's NIC
    goes to its rail's leaf; each leaf's uplink carries 1/oversubscription of
    what its NICs inject, so an oversubscribed tree shows thinner uplinks.

    ``aggregate`` (default: more than 8 nodes) draws each Scalable Unit as one
    box and each rail's NICs as one bundle to its leaf, width by total
    bandwidth. ``link_values`` colours links by load (a bundle by its busiest
    link). ``sides`` (two lists of ranks) colours the halves of a cut.

    Returns ``{"nodes": PolyCollection (GPUs, or SU boxes when aggregated),
    "leaves", "spine", "links": LineCollection (one path per GPU NVLink, per
    GPU NIC and per leaf uplink; aggregated: per (SU, rail) bundle and per
    leaf uplink), "figure", "axes", "alt"}``.
    """
    from matplotlib.collections import LineCollection, PolyCollection
    from matplotlib.colors import to_rgba

    if not isinstance(cluster, GpuCluster):
        raise CollectivesError(f"draw_fat_tree draws a GpuCluster, not {cluster!r}")
    m, g, rails = cluster.num_nodes_, cluster.gpus_per_node, cluster.rails
    n = cluster.num_ranks
    if aggregate is None:
        aggregate = m > 8
    links = cluster.links
    nvl, nic, up = _fat_tree_roles(cluster)
    fig, ax = _axes(ax, 3.6 if ax is None else None)
    cmap = norm = None
    vals = None
    if link_values is not None:
        cmap, norm = _value_norm(link_values)
        vals = np.asarray(link_values, dtype=float)
    y_gpu, y_leaf, y_spine = 0.0, 3.0, 5.0
    num_sus = cluster.num_sus
    leaf0 = n + m
    gpu_node = np.arange(n) // g
    gpu_su = gpu_node // cluster.nodes_per_su
    rail_of = (np.arange(n) % g) % rails
    paths, widths_bw, seg_of_link, seg_color = [], [], np.full(len(links), -1), []
    if not aggregate:
        node_w = g + 1.2
        gpu_x = gpu_node * node_w + (np.arange(n) % g)
        su_span = {su: (gpu_x[gpu_su == su].min(), gpu_x[gpu_su == su].max()) for su in range(num_sus)}
    else:
        su_w = 10.0
        su_span = {su: (su * (su_w + 1.5), su * (su_w + 1.5) + su_w) for su in range(num_sus)}
    leaf_x = np.zeros(cluster.num_leaves)
    for su in range(num_sus):
        lo, hi = su_span[su]
        step = (hi - lo) / max(rails, 1)
        leaf_x[su * rails:(su + 1) * rails] = lo + step * (np.arange(rails) + 0.5)
    xmin = min(v[0] for v in su_span.values()) - 0.8
    xmax = max(v[1] for v in su_span.values()) + 0.8
    spine_lo, spine_hi = xmin + 0.6, xmax - 0.6

    def add(path, bw, link_ids, color):
        k = len(paths)
        paths.append(np.asarray(path, dtype=float))
        widths_bw.append(bw)
        seg_of_link[np.asarray(link_ids, dtype=int)] = k
        seg_color.append(color)

    # leaf uplinks
    leaf_nodes = leaf0 + np.arange(cluster.num_leaves)
    for li, node in enumerate(leaf_nodes.tolist()):
        ids = np.nonzero(up & ((links.src == node) | (links.dst == node)))[0]
        bw = float(links.bandwidth[ids[0]])
        add([[leaf_x[li], y_leaf + 0.25], [leaf_x[li], y_spine - 0.3]], bw, ids, LINK_COLORS["ib"])
    if not aggregate:
        for r in range(n):
            ids_nvl = np.nonzero(nvl & ((links.src == r) | (links.dst == r)))[0]
            add([[gpu_x[r], y_gpu - 0.25], [gpu_x[r], y_gpu - 1.05]], float(links.bandwidth[ids_nvl[0]]),
                ids_nvl, LINK_COLORS["nvlink"])
            ids_nic = np.nonzero(nic & ((links.src == r) | (links.dst == r)))[0]
            leaf = int(gpu_su[r]) * rails + int(rail_of[r])
            add([[gpu_x[r], y_gpu + 0.25], [leaf_x[leaf], y_leaf - 0.25]], float(links.bandwidth[ids_nic[0]]),
                ids_nic, LINK_COLORS["ib"])
    else:
        for su in range(num_sus):
            lo, hi = su_span[su]
            for rail in range(rails):
                leaf = su * rails + rail
                gpus = np.nonzero((gpu_su == su) & (rail_of == rail))[0]
                ids = np.nonzero(nic & (np.isin(links.src, gpus) | np.isin(links.dst, gpus)))[0]
                bw = float(links.bandwidth[ids].sum() / 2)  # each direction
                x0 = lo + (hi - lo) * (rail + 0.5) / rails
                add([[x0, y_gpu + 0.6], [leaf_x[leaf], y_leaf - 0.25]], bw, ids, LINK_COLORS["ib"])
    widths = _linewidth_for(widths_bw, max(widths_bw), max_width=7.0 if not aggregate else 4.0, min_width=0.6)
    if vals is not None:
        seg_val = np.zeros(len(paths))
        ok = seg_of_link >= 0
        np.maximum.at(seg_val, seg_of_link[ok], vals[ok])
        colors = cmap(norm(seg_val))
        colors[seg_val <= 0] = (0.86, 0.87, 0.89, 1.0)
    else:
        colors = [to_rgba(c) for c in seg_color]
    coll = LineCollection(paths, colors=colors, linewidths=widths, zorder=1, capstyle="butt")
    ax.add_collection(coll, autolim=False)
    side_of = np.full(n, -1)
    if sides is not None:
        side_of[np.asarray(list(sides[0]), dtype=int)] = 0
        side_of[np.asarray(list(sides[1]), dtype=int)] = 1
    side_face = {-1: to_rgba(NODE_COLOR), 0: to_rgba(RANK_COLORS[4]), 1: to_rgba(RANK_COLORS[2])}
    texts = []
    if not aggregate:
        face = [side_face[int(s)] for s in side_of]
        nodes = PolyCollection(_rects(gpu_x - 0.38, y_gpu - 0.25, 0.76, 0.5), facecolors=face,
                               edgecolors="#6e7781", linewidths=0.7, zorder=3)
        ax.add_collection(nodes, autolim=False)
        if n <= 64:
            for r in range(n):
                texts.append(ax.text(gpu_x[r], y_gpu, str(r % g), ha="center", va="center", fontsize=6, zorder=4))
        node_lo = np.arange(m) * (g + 1.2) - 0.45
        nvs = PolyCollection(_rects(node_lo, y_gpu - 1.35, g - 0.1, 0.3), facecolors="white",
                             edgecolors=LINK_COLORS["nvlink"], linewidths=1.2, zorder=3)
        ax.add_collection(nvs, autolim=False)
        for k in range(m):
            ax.text(node_lo[k] + (g - 0.1) / 2, y_gpu - 1.2, f"node {k} NVSwitch", ha="center", va="center",
                    fontsize=6.5, zorder=4)
    else:
        face = []
        for su in range(num_sus):
            sel = side_of[gpu_su == su]
            face.append(side_face[int(sel[0])] if len(sel) and (sel == sel[0]).all() else side_face[-1])
        lo = np.array([su_span[s][0] for s in range(num_sus)])
        nodes = PolyCollection(_rects(lo, y_gpu - 1.2, su_w, 1.8), facecolors=face, edgecolors="#6e7781",
                               linewidths=0.8, zorder=3)
        ax.add_collection(nodes, autolim=False)
        for su in range(num_sus):
            k = int(np.sum(gpu_su == su)) // g
            texts.append(ax.text(lo[su] + su_w / 2, y_gpu - 0.3,
                                 f"SU {su}: {k} nodes\n\u00d7 {g} GPUs on NVLink", ha="center", va="center",
                                 fontsize=7, zorder=4))
    lw_leaf = 0.8 if not aggregate else min(0.9, 0.8 * (xmax - xmin) / max(cluster.num_leaves, 1))
    leaves = PolyCollection(_rects(leaf_x - lw_leaf / 2, y_leaf - 0.3, lw_leaf, 0.6),
                            facecolors=_tint(LINK_COLORS["ib"], 0.25), edgecolors=LINK_COLORS["ib"],
                            linewidths=1.2, zorder=3)
    ax.add_collection(leaves, autolim=False)
    if not aggregate or cluster.num_leaves <= 16:
        for li in range(cluster.num_leaves):
            ax.text(leaf_x[li], y_leaf, f"L{li % rails}", ha="center", va="center", fontsize=5.5, zorder=4)
    spine = PolyCollection(_rects([spine_lo], [y_spine - 0.3], [spine_hi - spine_lo], [0.6]),
                           facecolors="white", edgecolors=LINK_COLORS["ib"], linewidths=1.5, zorder=3)
    ax.add_collection(spine, autolim=False)
    ax.text((spine_lo + spine_hi) / 2, y_spine, "spine (modelled as one non-blocking switch)",
            ha="center", va="center", fontsize=7.5, zorder=4)
    # tier notes on the left
    nic_bw = cluster.nic_bandwidth
    uplink = float(links.bandwidth[up][0])
    per_leaf_down = uplink * cluster.oversubscription
    ax.text(xmin - 0.3, y_leaf, "leaves\n(one per rail\nper SU)", ha="right", va="center", fontsize=7)
    ax.text(xmin - 0.3, y_gpu - 0.4, "GPUs" if not aggregate else "Scalable\nUnits", ha="right",
            va="center", fontsize=7)
    ax.text(xmin - 0.3, y_spine, "spine", ha="right", va="center", fontsize=7)
    over = cluster.oversubscription
    note = (f"NIC {format_rate(nic_bw)} per GPU; NVLink {format_rate(cluster.nvlink_bandwidth)} per GPU; "
            f"leaf: {format_rate(per_leaf_down)} down, {format_rate(uplink)} up"
            + (f" ({over:g}:1 oversubscribed)" if over != 1 else " (full fat tree, 1:1)"))
    ax.text(0.5, -0.01, note + "\nline widths proportional to bandwidth", transform=ax.transAxes,
            ha="center", va="top", fontsize=7.5, color=TEXT_COLOR)
    ax.set_xlim(xmin - 3.2, xmax + 0.2)
    ax.set_ylim(y_gpu - 1.6, y_spine + 0.5)
    _blank(ax)
    ax.set_title(title or f"{_topology_name(cluster)} ({n} GPUs) on a rail-optimised InfiniBand fat tree",
                 fontsize=10)
    cbar = _value_colorbar(fig, ax, cmap, norm, value_label) if vals is not None else None
    alt = (f"{_topology_name(cluster)} with {n} GPUs: "
           + ("each Scalable Unit drawn as a box with one bundle per rail up to its leaf switch"
              if aggregate else "each node's GPUs on an NVSwitch, every GPU's NIC going up to its rail's leaf switch")
           + f", and the leaves joined to the spine; leaf uplinks carry {format_rate(uplink)}"
           + (f", {over:g} to 1 oversubscribed" if over != 1 else ", a full fat tree") + ".")
    return {"nodes": nodes, "leaves": leaves, "spine": spine, "links": coll, "labels": texts,
            "colorbar": cbar, "figure": fig, "axes": ax, "alt": alt}


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
    in_a = np.zeros(topology.num_nodes, dtype=bool)
    in_a[side] = True
    in_b = np.zeros(topology.num_nodes, dtype=bool)
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
                         title=f"Bisection of the {_topology_name(topology)}: {text}")
        a = art["axes"]
        if len(topology.dims) == 2 or not topology.wraparound[0] or topology.dims[0] <= 2:
            pos = _grid_pos(topology)
            vec = {0: np.array([1.0, 0.0])}
            if len(topology.dims) == 2:
                vec[1] = np.array([0.0, 1.0])
            sel = _undirected(topology, crossing)
            ids, paths, wraps = _link_geometry(topology, pos, vec, select=sel)
        else:  # a ring: chords
            pos = _ring_pos(topology.num_ranks)
            ids = _undirected(topology, crossing)
            paths = [np.array([pos[links.src[i]], pos[links.dst[i]]]) for i in ids]
        cut = LineCollection(paths, colors=OP_COLORS["reduce"], linewidths=3.2, zorder=2)
        a.add_collection(cut, autolim=False)
        n_cross = len(crossing)
        per = format_rate(links.bandwidth[crossing[0]]) if n_cross else "0"
        if n_cross and np.ptp(links.bandwidth[crossing]) > 0:
            per = "their bandwidths"
        from matplotlib.lines import Line2D
        from matplotlib.patches import Patch

        handles = [Patch(facecolor=RANK_COLORS[4], edgecolor="#6e7781", label=f"side A: {len(side)} chips"),
                   Patch(facecolor=RANK_COLORS[2], edgecolor="#6e7781", label=f"side B: {len(rest)} chips"),
                   Line2D([], [], color=OP_COLORS["reduce"], lw=3,
                          label=f"{n_cross} links A\u2192B\n\u00d7 {per}\n= {format_rate(bw)}")]
        a.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False,
                 borderaxespad=0.0)
        art.update(cut=cut, cut_bandwidth=bw, crossing=crossing)
        art["alt"] = (f"The {_topology_name(topology)} split into two halves of {len(side)} and {len(rest)} "
                      f"chips; the {n_cross} links crossing from one half to the other are highlighted, "
                      f"{format_rate(bw)} one way in all.")
        return art
    if isinstance(topology, Torus):  # a small 3D torus: panels, side A highlighted
        art = draw_torus(topology, ax=ax, highlight=side.tolist(),
                         title=f"Bisection of the {_topology_name(topology)}: {text} (side A filled)")
        art.update(cut_bandwidth=bw, crossing=crossing)
        art["alt"] = (f"The {_topology_name(topology)} in z-plane panels with one side of the cut "
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
        a.set_title(f"Bisection of the {_topology_name(topology)}: {text}", fontsize=10)
    elif isinstance(topology, GpuCluster):
        art = draw_fat_tree(topology, ax=ax, sides=(side, rest),
                            title=f"Bisection of {_topology_name(topology)}: {text}")
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
        a.plot([x, x], [ylo + 0.1, yhi - 0.1], color=OP_COLORS["reduce"], ls="--", lw=1.8, zorder=6)
    else:
        raise CollectivesError(f"draw_bisection has no drawing for {topology!r}")
    from matplotlib.patches import Patch

    a.legend(handles=[Patch(facecolor=RANK_COLORS[4], edgecolor="#6e7781", label=f"side A: {len(side)} GPUs"),
                      Patch(facecolor=RANK_COLORS[2], edgecolor="#6e7781", label=f"side B: {len(rest)} GPUs")],
             loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
    art.update(cut_bandwidth=bw, crossing=crossing)
    art["alt"] = (f"{_topology_name(topology)} split into two sides of {len(side)} and {len(rest)} endpoints "
                  f"by a dashed line; {format_rate(bw)} can cross from one side to the other.")
    return art


#: Colours and styles of the routes in :func:`draw_route`.
PATH_STYLES = (("#D55E00", "-"), ("#0072B2", "--"), ("#009E73", "-."), ("#CC79A7", ":"))


def _as_rank(topology, x) -> int:
    if isinstance(topology, Torus) and np.iterable(x):
        return topology.rank_of(x)
    return int(x)


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
    counts, "figure", "axes", "alt"}`` (plus the grid's artists on a torus).
    """
    s, d = _as_rank(topology, src), _as_rank(topology, dst)
    if paths is None:
        paths = topology.disjoint_paths(s, d) if disjoint else [topology.path(s, d)]
    paths = [list(map(int, p)) for p in paths]
    hops = [len(p) - 1 for p in paths]
    if isinstance(topology, Torus) and len(topology.dims) == 2:
        return _draw_route_torus(topology, s, d, paths, hops, ax, hop_numbers)
    return _draw_route_rows(topology, s, d, paths, hops, ax)


def _draw_route_torus(topo: Torus, s, d, paths, hops, ax, hop_numbers):
    X, Y = topo.dims
    art = draw_torus(topo, ax=ax, labels=False, legend=False, title="")
    a = art["axes"]
    art["links"].set_color(FAINT_COLOR)
    pos = _grid_pos(topo)
    coords = _torus_coords(topo)
    if hop_numbers is None:
        hop_numbers = sum(hops) <= 40
    lines = []
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
            if wrap:
                pts += [p, p + vec * 0.6, [np.nan, np.nan], q - vec * 0.6, q]
                mids.append(p + vec * 0.45)
            else:
                pts += [p, q]
                mids.append((p + q) / 2)
        pts = np.array(pts, dtype=float)
        line = Line2D(pts[:, 0], pts[:, 1], color=color, ls=ls, lw=3.0, zorder=5,
                      solid_capstyle="round", label=f"route {k + 1}: {hops[k]} hops" if n_paths > 1 else f"{hops[k]} hops")
        a.add_line(line)
        lines.append(line)
        if hop_numbers:
            for h, mpt in enumerate(mids):
                a.text(mpt[0], mpt[1], str(h + 1), fontsize=6.5, ha="center", va="center", color="white",
                       zorder=7, bbox=dict(boxstyle="circle,pad=0.15", facecolor=color, edgecolor="none"))
    for r, word in ((s, "src"), (d, "dst")):
        a.plot(*pos[r], marker="o", ms=13, mfc="none", mec=TEXT_COLOR, mew=2.0, zorder=8)
        c = topo.coords(r)
        ha = "left" if c[0] < X - 3 else "right"
        a.annotate(f"{word} {c}", pos[r], xytext=(9 if ha == "left" else -9, 9), textcoords="offset points",
                   fontsize=8, ha=ha, color=TEXT_COLOR, zorder=9,
                   bbox=dict(boxstyle="round,pad=0.2", facecolor="white", edgecolor=FAINT_COLOR))
    a.legend(handles=lines, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    what = "link-disjoint routes" if len(paths) > 1 else "route"
    a.set_title(f"{'Two' if len(paths) == 2 else len(paths) if len(paths) > 1 else 'The'} {what} "
                f"{topo.coords(s)} \u2192 {topo.coords(d)} on the {_topology_name(topo)}", fontsize=10)
    art.update(paths=lines, hops=hops)
    art["alt"] = (f"The {_topology_name(topo)} grid with "
                  + (f"{len(paths)} link-disjoint routes" if len(paths) > 1 else "the route")
                  + f" from {topo.coords(s)} to {topo.coords(d)} highlighted, "
                  + ", ".join(f"{h} hops" for h in hops)
                  + ("; the route leaves through the wraparound at one edge and re-enters at the other"
                     if any(np.abs(np.diff(coords[p], axis=0)).max(initial=0) > 1 for p in paths) else "")
                  + ".")
    return art


def _draw_route_rows(topo: Topology, s, d, paths, hops, ax):
    from matplotlib.collections import LineCollection
    from matplotlib.lines import Line2D

    n_paths = len(paths)
    fig, ax = _axes(ax, None if ax is not None else 0.9 + 0.9 * n_paths)
    lines = []
    width = max(len(p) for p in paths)
    links = topo.links
    for k, path in enumerate(paths):
        y = -k
        xs = np.arange(len(path), dtype=float)
        segs, colors, styles = [], [], []
        for h, (u, v) in enumerate(zip(path[:-1], path[1:])):
            lid = topo.link_between(u, v)
            klass = LINK_CLASSES[int(links.klass[lid])] if lid >= 0 else "link"
            segs.append([[xs[h] + 0.28, y], [xs[h + 1] - 0.28, y]])
            colors.append(LINK_COLORS[klass])
            styles.append(LINK_LINESTYLES[klass])
            label = LINK_LABELS[klass] + (f"\n{format_rate(links.bandwidth[lid])}" if lid >= 0 else "")
            ax.text(xs[h] + 0.5, y + 0.08, label, ha="center", va="bottom", fontsize=6.5, color=TEXT_COLOR)
        coll = LineCollection(segs, colors=colors, linestyles=styles, linewidths=2.5, zorder=1)
        ax.add_collection(coll, autolim=False)
        line = Line2D(xs, np.full(len(xs), y), ls="none", marker="s", ms=9, mfc=NODE_COLOR, mec="#6e7781",
                      zorder=2, label=f"route {k + 1}: {hops[k]} hops")
        ax.add_line(line)
        lines.append(line)
        for h, node in enumerate(path):
            words = topo.node_label(node).split()
            half = (len(words) + 1) // 2
            ax.text(xs[h], y - 0.12, " ".join(words[:half]) + "\n" + " ".join(words[half:]), ha="center", va="top",
                    fontsize=6.5, color=TEXT_COLOR)
    ax.set_xlim(-0.6, width - 0.4)
    ax.set_ylim(-n_paths + 0.35, 0.55)
    _blank(ax)
    ax.set_title(f"Route {topo.node_label(s)} \u2192 {topo.node_label(d)}: "
                 + ", ".join(f"{h} hops" for h in hops), fontsize=10)
    alt = (f"The route from {topo.node_label(s)} to {topo.node_label(d)} drawn as a row of the nodes it "
           f"visits: " + "; ".join(" to ".join(topo.node_label(n) for n in p) for p in paths) + ".")
    return {"paths": lines, "hops": hops, "figure": fig, "axes": ax, "alt": alt}


# ---------------------------------------------------------------------------
# Link-value colouring
# ---------------------------------------------------------------------------

def _value_norm(values):
    from matplotlib.colors import Normalize

    v = np.asarray(values, dtype=float)
    top = float(v.max()) if len(v) and v.max() > 0 else 1.0
    return _load_cmap(), Normalize(0.0, top)


def _value_colorbar(fig, ax, cmap, norm, label):
    from matplotlib.cm import ScalarMappable
    from matplotlib.ticker import FuncFormatter

    sm = ScalarMappable(norm=norm, cmap=cmap)
    cbar = fig.colorbar(sm, ax=ax, shrink=0.8, pad=0.02, aspect=25, panchor=False)
    if "time" in label:
        cbar.ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: format_time(v, digits=3)))
    elif "bytes" in label:
        cbar.ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: format_bytes(v, digits=3)))
    cbar.set_label(label, fontsize=8)
    cbar.ax.tick_params(labelsize=7)
    return cbar


# ---------------------------------------------------------------------------
# Schedules
# ---------------------------------------------------------------------------

_REDUCING = ("reduce_scatter", "all_reduce", "reduce")


def _slot_owner(schedule: Schedule) -> np.ndarray:
    """Local rank that owns each slot's block (origin for all-to-all, root otherwise)."""
    S = schedule.num_slots
    if schedule.collective in ("all_gather", "reduce_scatter", "all_reduce", "all_to_all"):
        k = len(schedule.group_shape)
        coords = np.unravel_index(np.arange(S), schedule.slot_shape)
        return np.ravel_multi_index(tuple(coords[:k]), schedule.group_shape)
    return np.full(S, int(schedule.root or 0))


def _slot_order(schedule: Schedule) -> np.ndarray:
    """Column order of the slots: all-to-all by destination, then origin; else as stored."""
    S = schedule.num_slots
    if schedule.collective != "all_to_all":
        return np.arange(S)
    k = len(schedule.group_shape)
    coords = np.unravel_index(np.arange(S), schedule.slot_shape)
    origin = np.ravel_multi_index(tuple(coords[:k]), schedule.group_shape)
    dest = np.ravel_multi_index(tuple(coords[k:2 * k]), schedule.group_shape)
    rest = np.ravel_multi_index(tuple(coords[2 * k:]), schedule.slot_shape[2 * k:]) if len(coords) > 2 * k else 0
    return np.lexsort((rest, origin, dest))


def _lowest_bit(c: np.ndarray) -> np.ndarray:
    c = c.astype(np.uint64)
    low = c & (~c + np.uint64(1))
    out = np.full(c.shape, -1, dtype=np.int64)
    nz = low > 0
    out[nz] = np.round(np.log2(low[nz].astype(float))).astype(np.int64)
    return out


def _states(schedule: Schedule, states=None):
    if states is not None:
        return states
    from ..replay import replay

    return replay(schedule, elements=1)


def _written(schedule: Schedule, step: int):
    """(participant, slot, op) for every slot written in step ``step`` (0-based)."""
    st = schedule.steps[step]
    t = st.traffic
    boxes = st.boxes
    out_p, out_s, out_op = [], [], []
    for i in range(len(t)):
        slots = expand_box(boxes[i], schedule.slot_shape)
        out_p.append(np.full(len(slots), int(t.dst[i])))
        out_s.append(slots)
        out_op.append(np.full(len(slots), int(t.op[i])))
    if not out_p:
        z = np.zeros(0, np.int64)
        return z, z, z
    return np.concatenate(out_p), np.concatenate(out_s), np.concatenate(out_op)


def draw_buffers(schedule: Schedule, after: int = 0, ax=None, *, states=None, labels: bool | None = None,
                 show_written: bool = True, legend: bool = True, title: str | None = None):
    """Every participant's buffer as a row of slots, after ``after`` steps (0: before step 1).

    A slot's colour is the rank whose block it belongs to (the owner for
    all-gather, reduce-scatter and all-reduce; the origin for all-to-all,
    whose columns are grouped by destination). For reductions the slot is
    filled in proportion to the number of contributions summed into it so
    far, and (when it fits) shows that number, so partial sums grow step by
    step; for copies a filled slot shows its origin rank. Empty slots are
    white. The slots written by step ``after`` are outlined: blue solid for
    copies, vermillion dashed for reductions. ``states`` takes a precomputed
    ``cl.replay(schedule)`` (needs groups of at most 64 ranks).

    Returns ``{"slots": PolyCollection (participants x num_slots
    rectangles), "fills": PolyCollection (same count; empty ones have no
    height), "written": PolyCollection (one per written slot) or None,
    "labels": list of Text, "figure", "axes", "alt"}``.
    """
    from matplotlib.collections import PolyCollection
    from matplotlib.colors import to_rgba

    states = _states(schedule, states)
    if not 0 <= after < len(states):
        raise CollectivesError(f"after must be 0..{len(states) - 1} (steps done), got {after}")
    P, S = schedule.num_participants, schedule.num_slots
    n = schedule.group_size
    fig, ax = _axes(ax, None if ax is not None else min(5.0, 1.2 + 0.22 * P))
    state = states[after]
    count = state.count()
    contrib = state.contrib
    order = _slot_order(schedule)
    col = np.empty(S, dtype=np.int64)
    col[order] = np.arange(S)
    owner = _slot_owner(schedule)
    reducing = schedule.collective in _REDUCING
    color_idx = np.where(reducing, owner[None, :], _lowest_bit(contrib)) if not reducing else np.broadcast_to(owner, (P, S))
    color_idx = np.asarray(color_idx)
    palette = np.array([to_rgba(c) for c in RANK_COLORS])
    tints = np.array([to_rgba(_tint(c, 0.28)) for c in RANK_COLORS])
    cidx = np.where(color_idx >= 0, color_idx % len(RANK_COLORS), 0)
    empty = count == 0
    if reducing:
        face = tints[cidx]
        frac = np.clip(count / n, 0, 1)
    else:
        face = np.where(empty[..., None], to_rgba(EMPTY_COLOR), palette[cidx])
        frac = np.where(empty, 0.0, 1.0)
    face = np.where(empty[..., None], to_rgba(EMPTY_COLOR), face)
    pp, ss = np.meshgrid(np.arange(P), np.arange(S), indexing="ij")
    x0 = col[ss] + 0.05
    y0 = -pp - 0.42
    cell_w, cell_h = 0.9, 0.84
    slots = PolyCollection(_rects(x0, y0, cell_w, cell_h), facecolors=face.reshape(-1, 4),
                           edgecolors="#8c959f", linewidths=0.4 if P * S > 400 else 0.6, zorder=1)
    ax.add_collection(slots, autolim=False)
    fill_face = palette[cidx].reshape(-1, 4)
    fills = PolyCollection(_rects(x0, y0, cell_w, cell_h * frac), facecolors=fill_face, edgecolors="none",
                           zorder=2)
    ax.add_collection(fills, autolim=False)
    # hatching for ranks that share a colour
    from matplotlib.collections import LineCollection

    hatch_of = np.where(color_idx >= 0, (color_idx // len(RANK_COLORS)) % len(RANK_HATCHES), 0)
    stroke_alpha = 0.8 if P * S <= 1024 else 0.45  # dense grids: lighter strokes, less noise
    stroke_on = np.array([to_rgba("white" if _text_on(c) == "white" else TEXT_COLOR, stroke_alpha)
                          for c in RANK_COLORS])
    segs, seg_colors = [], []
    hatched = 0
    for h in range(1, len(RANK_HATCHES)):
        sel = (hatch_of == h) & ~empty & (frac > 0)
        if not sel.any():
            continue
        hatched += int(sel.sum())
        hx, hy, hh = x0[sel], y0[sel], (cell_h * frac)[sel]
        for (ax0, ay0), (ax1, ay1) in _HATCH_STROKES[RANK_HATCHES[h]]:
            seg = np.stack([np.stack([hx + ax0 * cell_w, hy + ay0 * hh], 1),
                            np.stack([hx + ax1 * cell_w, hy + ay1 * hh], 1)], 1)
            segs.append(seg)
            seg_colors.append(stroke_on[cidx[sel]])
    hatches = LineCollection(np.concatenate(segs) if segs else np.zeros((0, 2, 2)),
                             colors=np.concatenate(seg_colors) if seg_colors else "none",
                             linewidths=0.8 if P * S <= 400 else 0.5, zorder=2.5)
    ax.add_collection(hatches, autolim=False)
    written = None
    if show_written and after >= 1:
        wp, ws, wop = _written(schedule, after - 1)
        if len(wp):
            wx = col[ws] + 0.05
            wy = -wp - 0.42
            written = PolyCollection(_rects(wx, wy, cell_w, cell_h), facecolors="none",
                                     edgecolors=[OP_COLORS[_op_name(o)] for o in wop],
                                     linestyles=[OP_LINESTYLES[_op_name(o)] for o in wop],
                                     linewidths=1.8 if P * S <= 400 else 1.0, zorder=3)
            ax.add_collection(written, autolim=False)
    # labels
    texts = []
    if labels is None:
        labels = P * S <= 160 and S <= 24
    if labels:
        for p in range(P):
            for s in range(S):
                c = int(count[p, s])
                if c == 0:
                    continue
                if reducing:
                    text = str(c)
                    # the number sits in the upper part of the slot: on the fill only when nearly full
                    fc = palette[cidx[p, s]] if frac[p, s] >= 0.75 else tints[cidx[p, s]]
                    y = -p + 0.1
                else:
                    text = str(int(color_idx[p, s]))
                    fc = palette[cidx[p, s]]
                    y = -p
                texts.append(ax.text(col[s] + 0.5, y, text, ha="center", va="center", fontsize=6.5,
                                     color=_text_on(fc), zorder=4))
    ax.set_xlim(-0.1, S + 0.1)
    ax.set_ylim(-P + 0.4, 0.6)
    _hide_frame(ax)
    # rows
    step_r = 1 if P <= 24 else max(1, P // 16)
    rows = list(range(0, P, step_r))
    for extra in range(schedule.num_ranks, P):
        if extra not in rows:
            rows.append(extra)
    ax.set_yticks([-p for p in rows])
    ax.set_yticklabels([schedule.participant_name(p) if P <= 24 else
                        (str(p) if p < schedule.num_ranks else schedule.participant_name(p)) for p in rows],
                       fontsize=7 if P <= 16 else 6)
    # columns: block boundaries and labels
    if schedule.collective == "all_to_all":
        per = S // n
        groups = [(d * per, (d + 1) * per, f"to {d}") for d in range(n)]
        xlabel = "slots, grouped by destination rank (colour: origin rank)"
    elif schedule.collective in ("all_gather", "reduce_scatter", "all_reduce"):
        per = S // n
        groups = [(b * per, (b + 1) * per, str(b)) for b in range(n)]
        xlabel = "block of the array (colour: owner rank)" + (
            "\nfill and number: contributions summed so far" if reducing else "")
    else:
        per = 1
        groups = [(s, s + 1, str(s)) for s in range(S)]
        xlabel = "pipeline chunks of the array"
    tick_every = 1 if len(groups) <= 16 else max(1, len(groups) // 16)
    ax.set_xticks([(a + b) / 2 for a, b, _ in groups[::tick_every]])
    ax.set_xticklabels([t for _, _, t in groups[::tick_every]], fontsize=7 if len(groups) <= 16 else 6)
    if per > 1:
        ax.vlines([a for a, _, _ in groups[1:]], -P + 0.45, 0.55, colors=TEXT_COLOR, lw=0.8, zorder=3.5)
    ax.set_xlabel(xlabel, fontsize=8)
    total = schedule.num_steps
    if title is None:
        title = ("before step 1" if after == 0 else
                 f"after step {after} of {total}" + (f" ({schedule.steps[after - 1].stage})"
                                                     if schedule.steps[after - 1].stage else ""))
    ax.set_title(title, fontsize=9)
    if legend and written is not None:
        from matplotlib.lines import Line2D

        ops = sorted(set(wop.tolist()))
        handles = [Line2D([], [], color=OP_COLORS[_op_name(o)], ls=OP_LINESTYLES[_op_name(o)], lw=1.8,
                          label=f"written this step ({_op_name(o)})") for o in ops]
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7,
                  frameon=False, borderaxespad=0.2, handlelength=1.6)
    held = int((count > 0).sum())
    if reducing:
        full = int((count == n).sum())
        desc = f"{full} of {P * S} slots fully reduced"
    else:
        desc = f"{held} of {P * S} slots filled"
    alt = (f"Buffers of {P} participants, one row each with {S} slots, {title}: {desc}"
           + (f"; {len(wp)} slots written in this step are outlined" if written is not None else "") + ".")
    return {"slots": slots, "fills": fills, "hatches": hatches, "hatched": hatched, "written": written,
            "labels": texts,
            "figure": fig, "axes": ax, "alt": alt}


def _schedule_layout(schedule: Schedule, topology: Topology | None):
    """('grid' | 'ring', positions (P, 2), node radius)."""
    P, R = schedule.num_participants, schedule.num_ranks
    if (isinstance(topology, Torus) and len(topology.dims) == 2 and topology.num_ranks == R
            and not schedule.agents):
        return "grid", _grid_pos(topology).astype(float), 0.24
    pos = np.zeros((P, 2))
    pos[:R] = _ring_pos(R)
    agents = P - R
    if agents == 1:
        pos[R] = (0.0, 0.0)
    elif agents > 1:
        pos[R:] = _ring_pos(agents, radius=0.45)
    return "ring", pos, min(0.11, 2.2 / max(R, 1))


def _arrow_paths(schedule: Schedule, step: int, topology, kind, pos, node_r):
    """One polyline per transfer (NaN breaks for wraparound hops), ending at the destination."""
    t = schedule.steps[step].traffic
    src, dst = t.src.astype(int), t.dst.astype(int)
    paths = []
    offset = 0.07 if kind == "grid" else 0.03
    if kind == "grid":
        coords = _torus_coords(topology)
        dims = topology.dims
        follow = len(src) <= 2048  # beyond that, straight arrows: routing each would be slow
    for s, d in zip(src.tolist(), dst.tolist()):
        if kind == "grid":
            diff = coords[d] - coords[s]
            nz = np.nonzero(diff)[0]
            direct = len(nz) == 1 and (abs(diff[nz[0]]) == 1 or abs(diff[nz[0]]) == dims[nz[0]] - 1)
            nodes = [s, d] if direct or not follow else topology.path(s, d)
            pts = []
            for u, v in zip(nodes[:-1], nodes[1:]):
                dv = coords[v] - coords[u]
                a = int(np.nonzero(dv)[0][0])
                if np.count_nonzero(dv) > 1 or (abs(dv[a]) > 1 and abs(dv[a]) != dims[a] - 1):
                    u_vec = pos[v] - pos[u]
                    u_vec = u_vec / np.hypot(*u_vec)
                    pts += [pos[u] + u_vec * node_r, pos[v] - u_vec * node_r]  # not a link: straight
                    continue
                wrap = abs(dv[a]) > 1
                vec = np.zeros(2)
                vec[a] = -np.sign(dv[a]) if wrap else np.sign(dv[a])
                nrm = np.array([vec[1], -vec[0]]) * offset
                p, q = pos[u] + nrm, pos[v] + nrm
                if wrap:
                    pts += [p + vec * node_r, p + vec * 0.62, [np.nan, np.nan], q - vec * 0.62, q - vec * node_r]
                else:
                    pts += [p + vec * node_r, q - vec * node_r]
            paths.append(np.array(pts, dtype=float))
        else:
            p, q = pos[s], pos[d]
            v = q - p
            L = np.hypot(*v)
            u = v / L if L else v
            nrm = np.array([u[1], -u[0]]) * offset
            paths.append(np.array([p + u * node_r * 1.15 + nrm, q - u * node_r * 1.15 + nrm]))
    return paths, t.op.astype(int)


def _arrow_heads(paths, size):
    tris = []
    for pth in paths:
        q = pth[-1]
        p = pth[-2]
        v = q - p
        L = np.hypot(*v)
        u = v / L if L else np.array([1.0, 0.0])
        nrm = np.array([-u[1], u[0]])
        tris.append([q, q - u * size + nrm * size * 0.45, q - u * size - nrm * size * 0.45])
    return np.array(tris) if tris else np.zeros((0, 3, 2))


def draw_transfers(schedule: Schedule, step: int | None, topology: Topology | None = None, ax=None, *,
                   labels: bool | None = None, title: str | None = None, legend: bool = True):
    """The transfers of step ``step`` (0-based) as arrows, over the topology or a ring.

    On a 2D torus (``topology`` given, no switch agents) the ranks sit on the
    grid and each arrow follows its route hop by hop (through the wraparound
    where it goes that way); otherwise the ranks sit on a circle in rank order
    with agents (a SHARP switch) in the middle. Copies are blue solid arrows,
    reductions vermillion dashed ones. ``step=None`` draws the ranks only.

    Returns ``{"arrows": LineCollection (one path per transfer), "heads":
    PolyCollection (one per transfer), "nodes", "labels", "figure", "axes",
    "alt"}``.
    """
    from matplotlib.collections import LineCollection, PolyCollection
    from matplotlib.colors import to_rgba
    from matplotlib.patches import FancyBboxPatch

    kind, pos, node_r = _schedule_layout(schedule, topology)
    R, P = schedule.num_ranks, schedule.num_participants
    fig, ax = _axes(ax, None if ax is not None else (3.4 if kind == "ring" else
                                                     max(3.0, min(5.4, 1.2 + 0.26 * topology.dims[1]))))
    # ranks coloured by their local index in their group
    local = np.zeros(P, dtype=int)
    for grp in schedule.groups:
        local[grp] = np.arange(len(grp))
    face = np.array([to_rgba(rank_color(i)) for i in local[:R]])
    if kind == "grid":
        X, Y = topology.dims
        vec = {0: np.array([1.0, 0.0]), 1: np.array([0.0, 1.0])}
        _draw_torus_links(ax, topology, pos[:R], vec, muted=True, lw=1.0, zorder=0.5)
        nodes = _draw_circles(ax, pos[:R], node_r, face)
        ax.set_xlim(-1.0, X)
        ax.set_ylim(-1.0, Y)
        _grid_ticks(ax, X, Y, fontsize=7)
    else:
        nodes = _draw_circles(ax, pos[:R], node_r, face)
        for a in range(R, P):
            w = 0.34
            ax.add_patch(FancyBboxPatch(pos[a] - [w / 2, 0.1], w, 0.2, boxstyle="round,pad=0.02",
                                        facecolor="white", edgecolor=TEXT_COLOR, lw=1.2, zorder=3))
            ax.text(*pos[a], schedule.participant_name(a), ha="center", va="center", fontsize=7, zorder=4)
        ax.set_xlim(-1.3, 1.3)
        ax.set_ylim(-1.25, 1.25)
        _blank(ax)
    ax.set_aspect("equal")
    texts = []
    if labels is None:
        labels = R <= 32
    if labels:
        fs = 7 if R <= 16 else 5.5
        for r in range(R):
            texts.append(ax.text(*pos[r], str(r), ha="center", va="center", fontsize=fs,
                                 color=_text_on(face[r]), zorder=4))
    if step is None:
        arrows = LineCollection([], zorder=2)
        heads = PolyCollection([], zorder=2)
        ax.add_collection(arrows, autolim=False)
        ax.add_collection(heads, autolim=False)
        ops = np.zeros(0, int)
    else:
        paths, ops = _arrow_paths(schedule, step, topology, kind, pos, node_r)
        colors = [OP_COLORS[_op_name(o)] for o in ops]
        styles = [OP_LINESTYLES[_op_name(o)] for o in ops]
        lw = 1.6 if len(paths) <= 64 else (1.0 if len(paths) <= 512 else 0.5)
        arrows = LineCollection(paths, colors=colors, linestyles=styles, linewidths=lw, zorder=2,
                                capstyle="butt")
        ax.add_collection(arrows, autolim=False)
        head = (0.22 if kind == "grid" else 0.085) * (1 if len(paths) <= 64 else 0.7)
        heads = PolyCollection(_arrow_heads(paths, head), facecolors=colors, edgecolors="none", zorder=2.5)
        ax.add_collection(heads, autolim=False)
    if legend and len(ops):
        from matplotlib.lines import Line2D

        handles = [Line2D([], [], color=OP_COLORS[o], ls=OP_LINESTYLES[o], lw=1.8, label=o)
                   for o in ("copy", "reduce") if (o == "copy" and (ops == 0).any()) or (o == "reduce" and (ops == 1).any())]
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7, frameon=False,
                  borderaxespad=0.0, handlelength=2.2)
    if title is None:
        title = (f"{schedule.algorithm} {schedule.collective}: {R} ranks" if step is None
                 else _step_title(schedule, step))
    ax.set_title(title, fontsize=9)
    n_t = 0 if step is None else len(schedule.steps[step])
    alt = (f"{R} ranks " + ("on the torus grid" if kind == "grid" else "on a circle")
           + (f" with {n_t} arrows for the transfers of step {step + 1}" if step is not None else "") + ".")
    return {"arrows": arrows, "heads": heads, "nodes": nodes, "labels": texts,
            "figure": fig, "axes": ax, "alt": alt}


def _step_caption(schedule: Schedule, step: int | None) -> str:
    if step is None:
        if schedule.collective in _REDUCING:
            return "Before step 1: every rank holds its whole input (one contribution in every slot)."
        if schedule.collective == "all_to_all":
            return "Before step 1: every rank holds the blocks it sends to each rank."
        return "Before step 1: every rank holds only its own block."
    st = schedule.steps[step]
    t = st.traffic
    ops = set(int(o) for o in t.op)
    what = " and ".join(("reductions" if o else "copies") for o in sorted(ops)) or "nothing"
    fr = np.unique(np.round(t.fraction, 12))
    size = ""
    if len(fr) == 1:
        size = ", all of V each" if fr[0] == 1 else f", {_fraction_text(fr[0])} of V each"
    return (f"Step {step + 1} of {schedule.num_steps}" + (f" ({st.stage})" if st.stage else "")
            + f": {len(t)} transfers, {what}{size}.")


def _fraction_text(f: float) -> str:
    from fractions import Fraction

    fr = Fraction(float(f)).limit_denominator(1 << 16)
    return str(fr)


def draw_schedule_step(schedule: Schedule, step: int | None = None, topology: Topology | None = None,
                       ax=None, *, states=None, labels: bool | None = None):
    """One step of a schedule: its transfers (left) and every buffer after it (right).

    ``step`` is 0-based (``None``: the state before step 1, no arrows).
    ``ax`` may be None, a Figure, or two Axes. Combines :func:`draw_transfers`
    and :func:`draw_buffers`; returns both dicts' artists (``"arrows"``,
    ``"heads"``, ``"slots"``, ``"fills"``, ``"written"``) with ``"figure"``,
    ``"axes"`` (two) and ``"alt"``.
    """
    P = schedule.num_participants
    height = min(5.0, max(2.9, 1.3 + 0.2 * P))
    fig, axes = _panel_axes(ax, 2, height=height, width_ratios=[1, 1.45])
    states = _states(schedule, states)
    t = draw_transfers(schedule, step, topology, ax=axes[0], labels=labels,
                       title="ranks" if step is None else "transfers of this step")
    after = 0 if step is None else step + 1
    b = draw_buffers(schedule, after, ax=axes[1], states=states, labels=labels, legend=False,
                     title="buffers before step 1" if step is None else
                     "buffers after it (outlined: slots it wrote)")
    fig.suptitle(_wrap_title(f"{schedule.algorithm.replace('_', ' ')} {schedule.collective.replace('_', '-')} "
                             f"over {schedule.num_ranks} ranks. " + _step_caption(schedule, step)),
                 fontsize=9.5)
    alt = (f"{schedule.algorithm.replace('_', ' ')} {schedule.collective.replace('_', '-')} on "
           f"{schedule.num_ranks} ranks. " + _step_caption(schedule, step) + " Left: " + t["alt"]
           + " Right: " + b["alt"])
    out = {k: v for k, v in b.items() if k not in ("figure", "axes", "alt", "labels")}
    out.update({k: v for k, v in t.items() if k not in ("figure", "axes", "alt", "labels", "nodes")})
    out.update(nodes=t["nodes"], labels=t["labels"] + b["labels"], figure=fig, axes=axes, alt=alt)
    return out


def draw_schedule_steps(schedule: Schedule, ax=None, *, states=None, max_panels: int = 16, ncols: int | None = None,
                        labels: bool | None = None):
    """Small multiples: the buffers before step 1 and after every step, side by side.

    Each panel is :func:`draw_buffers` (slots written by that step outlined
    by operation). With more than ``max_panels`` states, evenly spaced ones
    are shown (always the first and last). ``ax`` may be None, a Figure or a
    sequence of Axes.

    Returns ``{"panels": list of draw_buffers dicts, "shown": the step counts
    shown, "slots": list of PolyCollections (one per panel), "figure",
    "axes", "alt"}``.
    """
    states = _states(schedule, states)
    K = schedule.num_steps
    shown = list(range(K + 1))
    if len(shown) > max_panels:
        shown = sorted(set(np.round(np.linspace(0, K, max_panels)).astype(int).tolist()))
    nplots = len(shown)
    if ncols is None:
        ncols = min(nplots, 4 if schedule.num_slots <= 16 else 3)
    nrows = -(-nplots // ncols)
    P = schedule.num_participants
    row_h = max(1.2, 0.45 + 0.13 * P)
    fig, axes = _panel_axes(ax, nplots, nrows=nrows, height=min(9.0, row_h * nrows + 0.5))
    if labels is None:
        labels = P * schedule.num_slots <= 64 and ncols <= 4
    panels = []
    for a, after in zip(axes, shown):
        title = "start" if after == 0 else (f"step {after}" + (f" \u00b7 {schedule.steps[after - 1].stage}"
                                                                if schedule.steps[after - 1].stage else ""))
        art = draw_buffers(schedule, after, ax=a, states=states, labels=labels, legend=False, title=title)
        a.title.set_fontsize(8)
        a.set_xlabel("")
        if P > 8 or len(panels) % ncols:
            a.set_yticks([])
        panels.append(art)
    from matplotlib.lines import Line2D

    present = set()
    for st in schedule.steps:
        present |= set(int(o) for o in np.unique(st.traffic.op))
    handles = [Line2D([], [], color=OP_COLORS[_op_name(o)], ls=OP_LINESTYLES[_op_name(o)], lw=1.8,
                      label=f"slot written by a {_op_name(o)}") for o in sorted(present)]
    fig.legend(handles=handles, loc="outside lower center", ncol=2, fontsize=8, frameon=False)
    fig.suptitle(_wrap_title(f"{schedule.algorithm.replace('_', ' ')} {schedule.collective.replace('_', '-')} over "
                             f"{schedule.num_ranks} ranks: every buffer, step by step "
                             f"(rows: ranks; colour: {'origin' if schedule.collective == 'all_to_all' else 'owner'} rank)"),
                 fontsize=9.5)
    alt = (f"{nplots} small panels showing the buffers of the {schedule.algorithm.replace('_', ' ')} "
           f"{schedule.collective.replace('_', '-')} on {schedule.num_ranks} ranks from the start to step {K}; "
           "the coloured slots fill up as data arrives.")
    return {"panels": panels, "shown": shown, "slots": [p["slots"] for p in panels],
            "figure": fig, "axes": axes, "alt": alt}


def schedule_animation(schedule: Schedule, topology: Topology | None = None, *, fps: float = 1.2,
                       title: str | None = None, max_frames: int = 40, labels: bool | None = None):
    """The whole schedule as a player: one frame per step, with play, pause and step buttons.

    Frame 0 is the state before step 1; frame k shows the transfers of step
    k and the buffers after it (:func:`draw_schedule_step`). Built on
    :func:`collectives_lib.explore.animation`, so it is plain HTML and
    JavaScript that works on the static site, in JupyterLab and in Colab;
    each frame has alt text and a caption. Display the returned
    :class:`~collectives_lib.explore.Player` (last expression of a cell).
    """
    K = schedule.num_steps
    if K + 1 > max_frames:
        raise CollectivesError(
            f"the schedule has {K} steps; an animation shows at most {max_frames - 1} "
            "(pass max_frames=, or use draw_schedule_steps for an overview)"
        )
    states = _states(schedule)

    def frame(i):
        fig, _ = new_figure(0, 0, pyplot=False, height=min(4.6, max(2.8, 1.3 + 0.2 * schedule.num_participants)))
        draw_schedule_step(schedule, None if i == 0 else i - 1, topology, ax=fig, states=states, labels=labels)
        return fig

    name = _schedule_name(schedule)
    return _step_player(schedule, frame, fps=fps,
                        alt=(f"Animation of the {name} on {schedule.num_ranks} ranks: the transfers "
                             "of each step as arrows and every rank's buffer filling up"),
                        title=title or f"{name} over {schedule.num_ranks} ranks, step by step")


def _schedule_name(schedule: Schedule) -> str:
    return f"{schedule.algorithm.replace('_', ' ')} {schedule.collective.replace('_', '-')}"


def _step_player(schedule: Schedule, frame, *, fps: float, alt: str, title: str):
    """A player with one frame before step 1 and one after each step, captioned."""
    from ..explore import animation

    K = schedule.num_steps
    captions = [_step_caption(schedule, None if i == 0 else i - 1) for i in range(K + 1)]
    return animation(frame, K + 1, fps=fps, alt=alt, captions=captions, title=title)


# ---------------------------------------------------------------------------
# Costs
# ---------------------------------------------------------------------------

def _size_axis(axis, binary: bool = False) -> None:
    from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

    axis.set_major_locator(LogLocator(base=10 if not binary else 2, numticks=12))
    axis.set_minor_locator(NullLocator())  # minor log ticks cost more to lay out than the curves
    axis.set_major_formatter(FuncFormatter(lambda v, _: format_bytes(v, digits=3, binary=binary)))


def _time_axis(axis) -> None:
    from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

    axis.set_major_locator(LogLocator(base=10, numticks=12))
    axis.set_minor_locator(NullLocator())
    axis.set_major_formatter(FuncFormatter(lambda v, _: format_time(v, digits=3)))


def _schedules_for(topology, collective, algorithms, schedules, axes):
    from ..collectives import algorithms as list_algorithms, build

    if schedules is not None:
        return dict(schedules)
    if algorithms is None:
        algorithms = list_algorithms(collective, topology, axes=axes)
    out = {}
    for alg in algorithms:
        out[alg] = build(collective, topology, alg, axes=axes)
    return out


def _fit_alpha_beta(schedule, topology, sizes):
    """(latency term L in s, seconds per byte B) of t(V) ~ L + B V, from the simulator."""
    from ..simulate import simulate_sizes

    big = np.array([1e12, 2e12])
    t0 = float(simulate_sizes(schedule, topology, np.array([0.0]))[0])
    tb = simulate_sizes(schedule, topology, big)
    slope = float((tb[1] - tb[0]) / (big[1] - big[0]))
    return t0, slope


def draw_cost_curves(topology: Topology, collective: str | None = None, algorithms=None, sizes=None, ax=None, *,
                     schedules: Mapping[str, Schedule] | None = None, axes=None, reference: str | None = None):
    """Time versus message size on log-log axes, one curve per algorithm.

    Times come from :func:`~collectives_lib.simulate.simulate_sizes`.
    ``algorithms`` defaults to every algorithm that applies
    (:func:`~collectives_lib.collectives.algorithms`); or pass ready
    ``schedules={label: schedule}``. Each curve is ``t(V) = L + B V`` in the
    large: the latency-bound regime (left, shaded) is where ``L`` dominates,
    the bandwidth-bound one (right) where ``B V`` does, and the crossover
    ``V* = L / B`` of the ``reference`` algorithm (default: the fastest at
    the largest size) is marked, with its two asymptotes dotted. Every
    algorithm's own crossover is a hollow marker on its curve, and a dotted
    vertical line marks each size where the fastest algorithm changes.

    Returns ``{"lines": {label: Line2D}, "crossover": V* (bytes) or None,
    "crossovers": {label: V*}, "switches": [(size, from, to)], "regimes":
    [latency span, bandwidth span], "figure", "axes", "alt"}``.
    """
    from ..simulate import simulate_sizes

    scheds = _schedules_for(topology, collective, algorithms, schedules, axes)
    if not scheds:
        raise CollectivesError(f"no algorithm applies to {collective} on {topology!r}")
    if sizes is None:
        sizes = np.logspace(3, 10, 57)
    sizes = np.asarray(sizes, dtype=float)
    fig, ax = _axes(ax, 3.6 if ax is None else None)
    times = {}
    lines = {}
    fits = {}
    for i, (label, sched) in enumerate(scheds.items()):
        color, ls, marker = ALGORITHM_STYLES[i % len(ALGORITHM_STYLES)]
        t = simulate_sizes(sched, topology, sizes)
        times[label] = t
        (line,) = ax.plot(sizes, t, color=color, ls=ls, lw=1.8, label=str(label).replace("_", " "),
                          marker=marker, markevery=(i * 2 % 8, 8), ms=4, zorder=3)
        lines[label] = line
        fits[label] = _fit_alpha_beta(sched, topology, sizes)
    labels = list(times)
    stack = np.stack([times[k] for k in labels])
    best = np.argmin(stack, axis=0)
    switches = []
    for j in range(1, len(sizes)):
        if best[j] != best[j - 1]:
            a, b = labels[best[j - 1]], labels[best[j]]
            # solve for the exact crossing on a log-log scale between the two sample points
            x = math.sqrt(sizes[j - 1] * sizes[j])
            switches.append((x, a, b))
            ax.axvline(x, color=MUTED_COLOR, ls=":", lw=1.0, zorder=1)
            ax.text(x, 0.02, f" {str(b).replace('_', ' ')} fastest \u2192", transform=ax.get_xaxis_transform(),
                    rotation=90, fontsize=6.5, color=MUTED_COLOR, ha="right", va="bottom")
    crossovers = {}
    for i, label in enumerate(labels):
        L, B = fits[label]
        if L > 0 and B > 0:
            v = L / B
            crossovers[label] = v
            if sizes[0] <= v <= sizes[-1]:
                color = ALGORITHM_STYLES[i % len(ALGORITHM_STYLES)][0]
                tv = float(np.interp(np.log(v), np.log(sizes), np.log(times[label])))
                ax.plot([v], [math.exp(tv)], marker="o", ms=7, mfc="white", mec=color, mew=1.6, zorder=4)
    if reference is None:
        reference = labels[int(best[-1])]
    regimes = []
    v_star = crossovers.get(reference)
    if v_star is not None and sizes[0] < v_star < sizes[-1]:
        L, B = fits[reference]
        regimes.append(ax.axvspan(sizes[0], v_star, color="#88CCEE", alpha=0.16, lw=0, zorder=0))
        regimes.append(ax.axvspan(v_star, sizes[-1], color="#DDCC77", alpha=0.16, lw=0, zorder=0))
        ax.plot(sizes, np.full(len(sizes), L), color=MUTED_COLOR, ls=(0, (1, 2)), lw=1.0, zorder=2)
        ax.plot(sizes, B * sizes, color=MUTED_COLOR, ls=(0, (1, 2)), lw=1.0, zorder=2)
        ax.axvline(v_star, color=TEXT_COLOR, lw=1.0, zorder=2)
        trans = ax.get_xaxis_transform()
        ax.text(v_star, 0.97, "latency-bound \u2190 ", transform=trans, fontsize=8, va="top", ha="right",
                color=TEXT_COLOR)
        ax.text(v_star, 0.97, " \u2192 bandwidth-bound", transform=trans, fontsize=8, va="top", ha="left",
                color=TEXT_COLOR)
        ax.text(v_star, 0.88, f" V* = L/B = {format_bytes(v_star)}\n ({str(reference).replace('_', ' ')}: "
                f"L = {format_time(L)}, 1/B = {format_rate(1 / B)})", transform=trans, fontsize=7, va="top",
                ha="left", color=TEXT_COLOR,
                bbox=dict(boxstyle="round,pad=0.25", facecolor="white", edgecolor=FAINT_COLOR, alpha=0.9))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(sizes[0], sizes[-1])
    ymin = float(stack[stack > 0].min()) if (stack > 0).any() else 1e-9
    ax.set_ylim(ymin / 2, float(stack.max()) * 2)
    _size_axis(ax.xaxis)
    _time_axis(ax.yaxis)
    ax.tick_params(labelsize=7.5)
    ax.set_xlabel("message size V (bytes)", fontsize=9)
    ax.set_ylabel("time", fontsize=9)
    ax.grid(True, which="major", color="#e6e8eb", lw=0.6)
    coll = (collective or next(iter(scheds.values())).collective).replace("_", "-")
    ax.set_title(f"{coll} on the {_topology_name(topology)}: time versus size", fontsize=10)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7.5, frameon=False,
              title="algorithm\n(o: its V* = L/B)", title_fontsize=7.5)
    alt = (f"Log-log plot of {coll} time against message size on the {_topology_name(topology)} for "
           f"{len(labels)} algorithms ({', '.join(str(k).replace('_', ' ') for k in labels)})"
           + (f"; the latency-bound region below {format_bytes(v_star)} and the bandwidth-bound region above "
              "it are shaded" if regimes else "")
           + "".join(f"; {str(b).replace('_', ' ')} becomes fastest at about {format_bytes(x)}" for x, a, b in switches)
           + ".")
    return {"lines": lines, "crossover": v_star if regimes else None, "crossovers": crossovers,
            "switches": switches, "regimes": regimes, "figure": fig, "axes": ax, "alt": alt}


def draw_bandwidth_curves(topology: Topology, collective: str | None = None, algorithms=None, sizes=None,
                          ax=None, *, schedules: Mapping[str, Schedule] | None = None, axes=None,
                          peak: float | None = None, peak_label: str = "link bandwidth"):
    """nccl-tests' view: algbw (solid) and busbw (dashed) against message size.

    ``algbw = V / t`` and ``busbw = algbw x factor`` (all-reduce 2(n-1)/n,
    the others (n-1)/n), as ``all_reduce_perf`` prints them; sizes on a
    log2 axis, bandwidths in GB/s on a linear axis. ``peak`` draws a
    reference line (e.g. the link bandwidth that busbw approaches).

    Returns ``{"lines": {(label, "algbw" | "busbw"): Line2D}, "figure",
    "axes", "alt"}``.
    """
    from ..schedule import BUSBW_FACTORS
    from ..simulate import simulate_sizes

    scheds = _schedules_for(topology, collective, algorithms, schedules, axes)
    if sizes is None:
        sizes = 2.0 ** np.arange(10, 34)
    sizes = np.asarray(sizes, dtype=float)
    fig, ax = _axes(ax, 3.4 if ax is None else None)
    lines = {}
    top = 0.0
    for i, (label, sched) in enumerate(scheds.items()):
        color, _, marker = ALGORITHM_STYLES[i % len(ALGORITHM_STYLES)]
        t = simulate_sizes(sched, topology, sizes)
        algbw = sizes / t / 1e9
        busbw = algbw * BUSBW_FACTORS[sched.collective](sched.group_size)
        name = str(label).replace("_", " ")
        (l1,) = ax.plot(sizes, algbw, color=color, ls="-", lw=1.7, marker=marker, ms=3.5, markevery=3,
                        label=f"{name} algbw")
        (l2,) = ax.plot(sizes, busbw, color=color, ls="--", lw=1.4, label=f"{name} busbw")
        lines[(label, "algbw")] = l1
        lines[(label, "busbw")] = l2
        top = max(top, float(np.nanmax(busbw)), float(np.nanmax(algbw)))
    if peak is not None:
        ax.axhline(peak / 1e9, color=TEXT_COLOR, ls=":", lw=1.0)
        ax.text(sizes[0], peak / 1e9, f" {peak_label} {format_rate(peak)}", fontsize=7, va="bottom",
                color=TEXT_COLOR)
        top = max(top, peak / 1e9)
    ax.set_xscale("log", base=2)
    _size_axis(ax.xaxis, binary=True)
    from matplotlib.ticker import LogLocator

    ax.xaxis.set_major_locator(LogLocator(base=2 ** 4))
    ax.set_xlim(sizes[0], sizes[-1])
    ax.set_ylim(0, top * 1.12 if top > 0 else 1)
    ax.tick_params(labelsize=7.5)
    ax.set_xlabel("message size (bytes, powers of 2 as in nccl-tests)", fontsize=9)
    ax.set_ylabel("bandwidth (GB/s)", fontsize=9)
    ax.grid(True, color="#e6e8eb", lw=0.6)
    coll = (collective or next(iter(scheds.values())).collective)
    factor = "2(n-1)/n" if coll == "all_reduce" else "(n-1)/n"
    ax.set_title(f"{coll.replace('_', '-')} on the {_topology_name(topology)}\nalgbw = V/t (solid), "
                 f"busbw = algbw \u00d7 {factor} (dashed)", fontsize=9.5)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False)
    alt = (f"nccl-tests style plot of algorithm bandwidth and bus bandwidth in GB/s against message size for "
           f"{coll.replace('_', '-')} on the {_topology_name(topology)}; both rise with size and level off.")
    return {"lines": lines, "figure": fig, "axes": ax, "alt": alt}


def draw_step_times(schedule: Schedule, topology: Topology, nbytes: int, ax=None, *, result=None):
    """Where the time goes: one bar per step, coloured (and hatched) by stage.

    Uses :func:`~collectives_lib.simulate.simulate` (or a given ``result``).
    The legend gives each stage's total and share; for pipelined schedules
    (stages overlap) a note gives the overlapped total.

    Returns ``{"bars": BarContainer (one bar per step), "stages": {stage:
    seconds}, "result": Result, "figure", "axes", "alt"}``.
    """
    from matplotlib.patches import Patch

    from ..simulate import simulate

    r = result if result is not None else simulate(schedule, topology, nbytes)
    fig, ax = _axes(ax, 3.0 if ax is None else None)
    stages = schedule.stages()
    stage_of = [stages.index(s.stage) for s in schedule.steps]
    scale, unit = _time_unit(float(np.max(r.step_times, initial=0.0)))
    x = np.arange(1, schedule.num_steps + 1)
    colors = [STAGE_COLORS[k % len(STAGE_COLORS)] for k in stage_of]
    hatches = [STAGE_HATCHES[k % len(STAGE_HATCHES)] for k in stage_of]
    K = schedule.num_steps
    bars = ax.bar(x, r.step_times / scale, width=0.85 if K <= 64 else 1.0, color=colors,
                  edgecolor="white" if K <= 64 else "none", linewidth=0.5)
    for bar, h in zip(bars, hatches):
        if h:
            bar.set_hatch(h)
    total = float(np.sum(r.step_times))
    handles = []
    for k, st in enumerate(stages):
        tt = float(r.stage_times.get(st, 0.0))
        share = tt / total * 100 if total else 0
        handles.append(Patch(facecolor=STAGE_COLORS[k % len(STAGE_COLORS)], hatch=STAGE_HATCHES[k % len(STAGE_HATCHES)],
                             edgecolor="white", label=f"{st or 'all steps'}: {format_time(tt)} ({share:.0f}%)"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7.5, frameon=False,
              title="stage: total (share)", title_fontsize=7.5)
    ax.set_xlabel("step", fontsize=9)
    ax.set_ylabel(f"step time ({unit})", fontsize=9)
    ax.set_xlim(0.4, K + 0.6)
    if K <= 24:
        ax.set_xticks(x)
    ax.tick_params(labelsize=7.5)
    ax.grid(True, axis="y", color="#e6e8eb", lw=0.6)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    note = ""
    if schedule.pipelined and r.time < r.time_unoverlapped:
        note = f"; stages overlap, so the total is {format_time(r.time)}, not the sum {format_time(r.time_unoverlapped)}"
    ax.set_title(f"{schedule.algorithm.replace('_', ' ')} {schedule.collective.replace('_', '-')} of "
                 f"{format_bytes(r.nbytes)} on the {_topology_name(topology)}\n{format_time(r.time)} in "
                 f"{K} steps", fontsize=9.5)
    if note:
        ax.set_xlabel("step\n" + note.lstrip("; ").capitalize(), fontsize=9)
    alt = (f"Bar chart of the time of each of the {K} steps of the {schedule.algorithm.replace('_', ' ')} "
           f"{schedule.collective.replace('_', '-')} of {format_bytes(r.nbytes)}, coloured by stage: "
           + "; ".join(f"{st or 'all steps'} {format_time(float(r.stage_times.get(st, 0.0)))}" for st in stages)
           + f"; {format_time(r.time)} in all.")
    return {"bars": bars, "stages": dict(r.stage_times), "result": r, "figure": fig, "axes": ax, "alt": alt}


def _time_unit(t: float):
    for name, scale in (("s", 1.0), ("ms", 1e-3), ("\u00b5s", 1e-6), ("ns", 1e-9)):
        if t >= scale:
            return scale, name
    return 1e-9, "ns"


def draw_link_loads(topology: Topology, values=None, ax=None, *, schedule: Schedule | None = None,
                    nbytes: int | None = None, step: int | None = None, result=None,
                    value_label: str | None = None):
    """Per-link load as a heat map over the topology, with the bottleneck named.

    ``values`` is one number per directed link (seconds busy, or bytes).
    Or give ``schedule`` and ``nbytes``: the whole schedule's
    ``Result.link_busy`` (or ``result`` directly), or with ``step`` (0-based)
    that step's busy time (:func:`~collectives_lib.simulate.step_link_loads`
    over each link's bandwidth). Tori colour each direction of each link;
    switches and fat trees colour their links (a fat-tree bundle by its
    busiest link); TPU systems colour ICI, PCIe and DCN alike. The busiest
    link is circled and named.

    Returns the topology drawing's dict plus ``"values"``, ``"bottleneck"``
    (link id) and ``"bottleneck_label"``.
    """
    from ..simulate import simulate, step_link_loads

    title = None
    if values is None:
        if schedule is None:
            raise CollectivesError("draw_link_loads needs values= or schedule= and nbytes=")
        if step is not None:
            loads = step_link_loads(schedule, topology, step, nbytes)
            values = loads / topology.links.bandwidth
            title = f"link busy time in step {step + 1} of {schedule.algorithm.replace('_', ' ')} {schedule.collective.replace('_', '-')}"
        else:
            r = result if result is not None else simulate(schedule, topology, nbytes)
            values = r.link_busy
            title = (f"link busy time over the whole {schedule.algorithm.replace('_', ' ')} "
                     f"{schedule.collective.replace('_', '-')} of {format_bytes(r.nbytes)}")
        value_label = value_label or "link busy time"
    value_label = value_label or "link busy time"
    values = np.asarray(values, dtype=float)
    if len(values) != len(topology.links):
        raise CollectivesError(f"values has {len(values)} entries; {topology!r} has {len(topology.links)} links")
    if isinstance(topology, Torus) and len(topology.dims) == 3 and topology.dims[2] > 8:
        raise CollectivesError(
            f"{_topology_name(topology)} is too big to draw link by link; draw a slice of it"
        )
    art = draw_topology(topology, ax=ax, link_values=values, value_label=value_label)
    b = int(np.argmax(values)) if len(values) and values.max() > 0 else -1
    label = topology.link_label(b) if b >= 0 else "none"
    if b >= 0:
        u, v = int(topology.links.src[b]), int(topology.links.dst[b])
        short = f"{topology.node_label(u)} \u2192 {topology.node_label(v)}"
        amount = format_time(values[b]) if "time" in value_label else f"{values[b]:.3g}"
        nmax = int(np.sum(values >= values[b] * (1 - 1e-9)))
        more = f" (and {nmax - 1} more as busy)" if nmax > 1 else ""
        a = art["axes"][0] if isinstance(art["axes"], list) else art["axes"]
        title = (title or value_label) + f"\nbottleneck: {short}, {amount}{more}"
        if isinstance(topology, Torus) and len(topology.dims) <= 2 and not (len(topology.dims) == 1 and topology.wraparound[0] and topology.dims[0] > 2):
            pos = _grid_pos(topology)
            mid = (pos[u] + pos[v]) / 2 if abs(pos[u] - pos[v]).max() <= 1 else pos[u]
            a.plot(*mid, marker="o", ms=16, mfc="none", mec=OP_COLORS["reduce"], mew=2, zorder=6)
    if title:
        # a figure-wide title: the drawing itself may be narrow (a square grid)
        if not isinstance(art["axes"], list):
            art["axes"].set_title("")
        art["figure"].suptitle(title, fontsize=9.5)
    art.update(values=values, bottleneck=b, bottleneck_label=label)
    art["alt"] = (art["alt"].rstrip(".") + f"; links coloured by {value_label}, the busiest being {label}.")
    return art


_LADDER_TIERS = (("NVLink", "nvlink"), ("ICI", "ici"), ("PCIe", "pcie"), ("InfiniBand", "ib"),
                 ("DCN", "dcn"), ("HBM", "memory"), ("die", "chip"))


def draw_bandwidth_ladder(ax=None, *, ladder: Mapping[str, Any] | None = None):
    """The bandwidth hierarchy on a log scale, from on-chip to the data-centre network.

    One bar per entry of :data:`collectives_lib.hardware.LADDER` (or
    ``ladder``), longest first, coloured by link class (memory and on-chip
    tiers in their own colours), labelled with its value and the key of its
    source (see ``hardware.SOURCES``).

    Returns ``{"bars": BarContainer, "sources": {name: (key, title, url)},
    "figure", "axes", "alt"}``.
    """
    from matplotlib.patches import Patch

    ladder = hw.LADDER if ladder is None else ladder
    items = sorted(ladder.items(), key=lambda kv: -float(kv[1].value))
    names = [k for k, _ in items]
    vals = np.array([float(f.value) for _, f in items])
    fig, ax = _axes(ax, 0.9 + 0.27 * len(items) if ax is None else None)

    def tier(name):
        for word, key in _LADDER_TIERS:
            if word.lower() in name.lower():
                return key
        return "chip"

    tiers = [tier(nm) for nm in names]
    colors = [LINK_COLORS.get(t, _TIER_COLORS.get(t, "#777777")) for t in tiers]
    y = np.arange(len(items))[::-1]
    bars = ax.barh(y, vals, color=colors, height=0.7, edgecolor="white")
    for bar, t in zip(bars, tiers):
        if t in ("pcie", "dcn"):
            bar.set_hatch("///" if t == "pcie" else "..")
    ax.set_xscale("log")
    ax.set_yticks(y)
    ax.set_yticklabels(names, fontsize=7.5)
    _size_axis(ax.xaxis)
    from matplotlib.ticker import FuncFormatter

    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: format_rate(v, digits=3)))
    ax.set_xlim(vals.min() / 3, vals.max() * 15)
    ax.tick_params(labelsize=7.5)
    sources = {}
    for yy, (nm, f), v in zip(y, items, vals):
        title_url = hw.SOURCES.get(f.source, ("", ""))
        sources[nm] = (f.source, title_url[0], title_url[1])
        ax.text(v * 1.15, yy, f"{format_rate(v)}  [{f.source}]", va="center", fontsize=7, color=TEXT_COLOR)
    ax.set_xlabel("bandwidth (bytes/s, one way, log scale); [source key] in hardware.SOURCES", fontsize=9)
    ax.grid(True, axis="x", color="#e6e8eb", lw=0.6)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    seen = []
    handles = []
    tier_names = {"chip": "on-chip / package", "memory": "memory (HBM)", "nvlink": "NVLink", "ici": "ICI",
                  "pcie": "PCIe", "ib": "InfiniBand", "dcn": "DCN"}
    for t, c in zip(tiers, colors):
        if t not in seen:
            seen.append(t)
            handles.append(Patch(facecolor=c, hatch="///" if t == "pcie" else (".." if t == "dcn" else ""),
                                 edgecolor="white", label=tier_names.get(t, t)))
    ax.legend(handles=handles, loc="lower right", fontsize=7, frameon=True, framealpha=0.9, edgecolor=FAINT_COLOR)
    ratio = vals.max() / vals.min()
    ax.set_title(f"The bandwidth ladder: {ratio:,.0f}x from on-chip to the data-centre network", fontsize=9.5)
    alt = ("Horizontal bars on a log scale, from " + f"{names[0]} at {format_rate(vals[0])} down to "
           f"{names[-1]} at {format_rate(vals[-1])}: " + "; ".join(f"{nm} {format_rate(v)}" for nm, v in zip(names, vals)) + ".")
    return {"bars": bars, "sources": sources, "figure": fig, "axes": ax, "alt": alt}


# ---------------------------------------------------------------------------
# GPU clusters: a route through the fat tree, and schedules laid out by node
# (introduced in the chapters *NVIDIA GPU cluster topology* and *GPU
# collectives across nodes*)
# ---------------------------------------------------------------------------

#: Colour of a highlighted route and of the packet on it.
ROUTE_COLOR = "#D55E00"


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
    if cluster.num_nodes_ > 8:
        raise CollectivesError(
            f"draw_fat_tree_route draws clusters of at most 8 nodes GPU by GPU; {cluster!r} has "
            f"{cluster.num_nodes_}")
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

    def centre(coll, i):
        v = coll.get_paths()[i].vertices
        return np.array([(v[:, 0].min() + v[:, 0].max()) / 2, (v[:, 1].min() + v[:, 1].max()) / 2])

    gpus = {r: centre(art["nodes"], r) for r in range(n)}
    leaves = {i: centre(art["leaves"], i) for i in range(cluster.num_leaves)}
    spine_y = centre(art["spine"], 0)[1]
    g = cluster.gpus_per_node
    half = 0.27  # half the height of a GPU or leaf box in draw_fat_tree's coordinates

    def nvswitch_pos(node):
        """The node's NVSwitch bar, below its GPUs (as draw_fat_tree places it)."""
        k = node - n
        xs = [gpus[k * g + j][0] for j in range(g)]
        return np.array([(min(xs) + max(xs)) / 2, gpus[k * g][1] - 1.2])

    def leaf_pos(node):
        return leaves[node - n - cluster.num_nodes_]

    segs = []
    for k in range(hops):
        a, b = path[k], path[k + 1]
        if a < n and b >= n and b < n + cluster.num_nodes_:          # GPU -> NVSwitch
            segs.append([gpus[a] - [0, half], [gpus[a][0], nvswitch_pos(b)[1]], nvswitch_pos(b)])
        elif a >= n and a < n + cluster.num_nodes_:                   # NVSwitch -> GPU
            p = nvswitch_pos(a)
            segs.append([p, [gpus[b][0], p[1]], gpus[b] - [0, half]])
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
    elif here < n + cluster.num_nodes_:
        pos = nvswitch_pos(here)
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


def _cluster_layout(num_ranks: int, gpus: int, rails: int):
    """Positions of GPUs (num_ranks, 2), leaves (rails, 2) and node boxes for a by-node drawing."""
    nodes = num_ranks // gpus
    pitch = gpus + 0.8
    r = np.arange(num_ranks)
    gpu_pos = np.stack([(r // gpus) * pitch + (r % gpus), np.zeros(num_ranks)], axis=1)
    width = nodes * pitch - 0.8 - 1
    leaf_pos = np.stack([width * (np.arange(rails) + 0.5) / rails, np.full(rails, 2.6)], axis=1)
    return gpu_pos, leaf_pos, pitch


def draw_cluster_transfers(schedule: Schedule, step: int | None, gpus_per_node: int, ax=None, *,
                           rails: int | None = None, title: str | None = None, legend: bool = True):
    """The transfers of one step of a schedule on GPUs drawn node by node.

    Ranks ``m * gpus_per_node + g`` are drawn as GPU ``g`` of node ``m``, the
    nodes side by side, with one leaf switch per rail above them (GPU ``g``
    is on rail ``g % rails``; ``rails`` defaults to ``gpus_per_node``). A
    transfer inside a node is an arc through the node's NVSwitch, below the
    GPUs; a transfer between nodes climbs to its rail's leaf and comes down
    to the destination (through a "spine" line above the leaves when the two
    GPUs are on different rails). Copies are blue and solid, reductions
    vermillion and dashed, as in :func:`draw_transfers`. ``step=None`` draws
    the GPUs only. The spine is drawn only when a transfer needs it: within
    one Scalable Unit a rail-aligned schedule never does.

    Introduced in the chapter *GPU collectives across nodes*.

    Returns ``{"arrows": LineCollection (one path per transfer), "heads":
    PolyCollection (one per transfer), "nodes": PolyCollection (one square
    per GPU), "leaves", "labels", "figure", "axes", "alt"}``.
    """
    from matplotlib.collections import LineCollection, PolyCollection
    from matplotlib.colors import to_rgba
    from matplotlib.patches import FancyBboxPatch

    g = int(gpus_per_node)
    R = schedule.num_ranks
    if g < 1 or R % g:
        raise CollectivesError(f"{R} ranks do not split into nodes of {gpus_per_node} GPUs")
    if schedule.num_participants != R:
        raise CollectivesError("draw_cluster_transfers draws schedules between GPUs only (no switch agents)")
    rails = g if rails is None else int(rails)
    if rails < 1:
        raise CollectivesError(f"rails must be >= 1, got {rails}")
    M = R // g
    gpu_pos, leaf_pos, pitch = _cluster_layout(R, g, rails)
    fig, ax = _axes(ax, 2.6 if ax is None else None)
    # node boxes with their NVSwitch
    for m in range(M):
        x0 = m * pitch - 0.5
        ax.add_patch(FancyBboxPatch((x0, -1.15), g, 1.55, boxstyle="round,pad=0.02,rounding_size=0.15",
                                    facecolor="white", edgecolor=LINK_COLORS["nvlink"], lw=1.3, zorder=0.5))
        ax.text(x0 + g / 2, -1.22, f"node {m} (NVSwitch)", ha="center", va="top", fontsize=7.5,
                color=MUTED_COLOR, zorder=1)
    # leaves and their NIC wires (faint)
    wires = []
    for r in range(R):
        wires.append([gpu_pos[r] + [0, 0.28], leaf_pos[(r % g) % rails] - [0, 0.22]])
    ax.add_collection(LineCollection(wires, colors=_tint(LINK_COLORS["ib"], 0.35), linewidths=0.6, zorder=0.4),
                      autolim=False)
    leaves = PolyCollection(_rects(leaf_pos[:, 0] - 0.45, leaf_pos[:, 1] - 0.22, 0.9, 0.44),
                            facecolors=_tint(LINK_COLORS["ib"], 0.25), edgecolors=LINK_COLORS["ib"],
                            linewidths=1.1, zorder=3)
    ax.add_collection(leaves, autolim=False)
    for i, p in enumerate(leaf_pos):
        ax.text(*p, f"leaf {i}", ha="center", va="center", fontsize=7, zorder=4)
    local = np.zeros(R, dtype=int)
    for grp in schedule.groups:
        local[grp] = np.arange(len(grp))
    face = [to_rgba(rank_color(i)) for i in local]
    nodes = PolyCollection(_rects(gpu_pos[:, 0] - 0.3, gpu_pos[:, 1] - 0.28, 0.6, 0.56), facecolors=face,
                           edgecolors="#6e7781", linewidths=0.7, zorder=3)
    ax.add_collection(nodes, autolim=False)
    texts = [ax.text(*gpu_pos[r], str(r), ha="center", va="center", fontsize=7.5 if R <= 32 else 5,
                     color=_text_on(face[r]), zorder=4) for r in range(R)]
    spine_y = 3.5
    paths, ops = [], np.zeros(0, int)
    need_spine = False
    if step is not None:
        t = schedule.steps[step].traffic
        ops = t.op.astype(int)
        for s, d in zip(t.src.astype(int).tolist(), t.dst.astype(int).tolist()):
            ps, pd = gpu_pos[s], gpu_pos[d]
            if s // g == d // g:   # NVLink: an arc below the GPUs
                span = abs(pd[0] - ps[0])
                depth = 0.2 + 0.085 * span
                off = 0.08 if pd[0] > ps[0] else -0.08
                tt = np.linspace(0, 1, 16)[:, None]
                a, b = ps + [off, -0.28], pd + [off, -0.28]
                c = (a + b) / 2 - [0, depth * 2]
                curve = (1 - tt) ** 2 * a + 2 * (1 - tt) * tt * c + tt ** 2 * b
                paths.append(curve)
            else:                 # InfiniBand: up to the rail's leaf, down to the destination
                ls, ld = leaf_pos[(s % g) % rails], leaf_pos[(d % g) % rails]
                off = 0.1 if d > s else -0.1
                pts = [ps + [off, 0.28], ls + [off, -0.22]]
                if (s % g) % rails != (d % g) % rails:
                    need_spine = True
                    pts += [ls + [off, 0.22], [ls[0] + off, spine_y - 0.1], [ld[0] + off, spine_y - 0.1],
                            ld + [off, 0.22]]
                pts += [ld + [off, -0.22], pd + [off, 0.28]]
                paths.append(np.asarray(pts, dtype=float))
    colors = [OP_COLORS[_op_name(o)] for o in ops]
    styles = [OP_LINESTYLES[_op_name(o)] for o in ops]
    arrows = LineCollection(paths, colors=colors, linestyles=styles, linewidths=1.4, zorder=2, capstyle="butt")
    ax.add_collection(arrows, autolim=False)
    heads = PolyCollection(_arrow_heads(paths, 0.22) if paths else np.zeros((0, 3, 2)), facecolors=colors,
                           edgecolors="none", zorder=2.5)
    ax.add_collection(heads, autolim=False)
    if need_spine:
        ax.plot([leaf_pos[0, 0] - 0.5, leaf_pos[-1, 0] + 0.5], [spine_y, spine_y], color=LINK_COLORS["ib"], lw=4,
                solid_capstyle="butt", zorder=1)
        ax.text(leaf_pos[-1, 0] + 0.7, spine_y, "spine", va="center", fontsize=6.5)
    if legend and len(ops):
        from matplotlib.lines import Line2D

        handles = [Line2D([], [], color=OP_COLORS[o], ls=OP_LINESTYLES[o], lw=1.6, label=o)
                   for o in ("copy", "reduce") if (o == "copy" and (ops == 0).any()) or (o == "reduce" and (ops == 1).any())]
        ax.legend(handles=handles, loc="upper left", fontsize=7, frameon=False, borderaxespad=0.0,
                  handlelength=2.0)
    xmax = max(M * pitch - 0.8, leaf_pos[-1, 0] + 1.6)
    ax.set_xlim(-0.9, xmax)
    ax.set_ylim(-1.6, spine_y + 0.4)
    ax.set_aspect("equal")
    _blank(ax)
    if title is None:
        title = (f"{M} nodes x {g} GPUs, one leaf per rail" if step is None
                 else _step_title(schedule, step))
    ax.set_title(title, fontsize=9)
    n_t = 0 if step is None else len(schedule.steps[step])
    n_ib = sum(1 for p in paths if len(p) != 16)
    alt = (f"{M} nodes of {g} GPUs side by side with {rails} leaf switches above them"
           + (f"; {n_t} arrows for the transfers of step {step + 1}: {n_t - n_ib} inside nodes over NVLink "
              f"and {n_ib} between nodes through the leaves" if step is not None else "") + ".")
    return {"arrows": arrows, "heads": heads, "nodes": nodes, "leaves": leaves, "labels": texts,
            "figure": fig, "axes": ax, "alt": alt}


def draw_cluster_step(schedule: Schedule, step: int | None, gpus_per_node: int, ax=None, *, states=None,
                      rails: int | None = None):
    """One step of a schedule across GPU nodes: the transfers node by node
    (:func:`draw_cluster_transfers`, top) and every buffer after the step
    (:func:`draw_buffers`, bottom). ``ax`` may be None, a Figure or two Axes.

    Introduced in the chapter *GPU collectives across nodes*.
    """
    R = schedule.num_ranks
    fig, axes = _panel_axes(ax, 2, nrows=2, height=_cluster_step_height(R), height_ratios=[1.0, 0.25 + 0.06 * R])
    states = _states(schedule, states)
    t = draw_cluster_transfers(schedule, step, gpus_per_node, ax=axes[0], rails=rails,
                               title="GPUs by node" if step is None else "transfers of this step")
    after = 0 if step is None else step + 1
    b = draw_buffers(schedule, after, ax=axes[1], states=states, labels=R <= 8, legend=False,
                     title="buffers before step 1" if step is None else
                     "buffers after this step (outlined: slots it wrote)")
    b["axes"].title.set_fontsize(8.5)
    b["axes"].tick_params(labelsize=6.5)
    b["axes"].xaxis.label.set_fontsize(7)
    g = int(gpus_per_node)
    fig.suptitle(f"{schedule.algorithm.replace('_', ' ')} {schedule.collective.replace('_', '-')} over "
                 f"{R // g} nodes x {g} GPUs\n" + _step_caption(schedule, step), fontsize=9)
    alt = (f"{schedule.algorithm.replace('_', ' ')} {schedule.collective.replace('_', '-')} on {R // g} nodes of "
           f"{g} GPUs. " + _step_caption(schedule, step) + " Top: " + t["alt"] + " Bottom: " + b["alt"])
    out = {k: v for k, v in b.items() if k not in ("figure", "axes", "alt", "labels")}
    out.update({k: v for k, v in t.items() if k not in ("figure", "axes", "alt", "labels")})
    out.update(labels=t["labels"] + b["labels"], figure=fig, axes=axes, alt=alt)
    return out


def _cluster_step_height(num_ranks: int) -> float:
    return min(6.4, 3.2 + 0.17 * num_ranks)


def cluster_schedule_animation(schedule: Schedule, gpus_per_node: int, *, rails: int | None = None,
                               fps: float = 1.0, title: str | None = None, max_frames: int = 40):
    """A schedule across GPU nodes as a player: frame 0 is the start, frame k
    shows step k (:func:`draw_cluster_step`), with captions and alt text.

    Introduced in the chapter *GPU collectives across nodes*.
    """
    K = schedule.num_steps
    if K + 1 > max_frames:
        raise CollectivesError(
            f"the schedule has {K} steps; an animation shows at most {max_frames - 1} (pass max_frames=)")
    states = _states(schedule)
    R = schedule.num_ranks

    def frame(i):
        fig, _ = new_figure(0, 0, pyplot=False, height=_cluster_step_height(R))
        draw_cluster_step(schedule, None if i == 0 else i - 1, gpus_per_node, ax=fig, states=states, rails=rails)
        return fig

    g = int(gpus_per_node)
    name = _schedule_name(schedule)
    return _step_player(schedule, frame, fps=fps,
                        alt=(f"Animation of the {name} on {R // g} nodes of {g} GPUs: each step's "
                             "transfers drawn node by node, inside nodes over NVLink and between nodes "
                             "through the rail's leaf switch, and every GPU's buffer"),
                        title=title or f"{name} over {R // g} nodes x {g} GPUs, step by step")


# ---------------------------------------------------------------------------
# A message crossing hops: store-and-forward versus a packet pipeline
# ---------------------------------------------------------------------------

def _packet_places(hops: int, packets: int, slot: int, pipelined: bool) -> list[tuple[str, int]]:
    """Where each packet is during time slot ``slot`` (0: before the first):
    ("node", n) or ("link", h)."""
    out = []
    for k in range(packets):
        if pipelined:
            h = slot - 1 - k              # packet k crosses link h in slot h + k + 1
        else:
            g = slot - 1                  # the whole message crosses one link at a time
            h = g // packets if 0 <= g < hops * packets else (-1 if g < 0 else hops)
            j = g % packets
            if 0 <= h < hops and k != j:
                out.append(("node", h + 1 if k < j else h))
                continue
        if h < 0:
            out.append(("node", 0))
        elif h >= hops:
            out.append(("node", hops))
        else:
            out.append(("link", h))
    return out


def draw_packet_pipeline(hops: int, packets: int, slot: int, ax=None):
    """A message of ``packets`` packets crossing ``hops`` links, two ways, during one time slot.

    Top row: the whole message crosses one link before the next link starts
    (store-and-forward), ``hops * packets`` slots. Bottom row: every link
    forwards each packet as soon as it has arrived, so the packets stream
    through the links like a pipeline, ``hops + packets - 1`` slots; with many
    small packets that is cut-through, ``hops * alpha + V / W``
    (:func:`collectives_lib.costs.pipelined_send`). A slot is the time one
    packet takes to cross one link, ``V / (packets W)``; ``slot`` 0 is the
    start and ``hops * packets + 1`` the end. Packets are coloured and
    numbered by their place in the message; busy links are drawn thick.

    Introduced in the chapter *Moving bytes*.

    Returns ``{"packets": PathCollection (two rows x packets squares),
    "links": LineCollection (two rows x hops links), "finished": [bool, bool],
    "labels", "figure", "axes", "alt"}``.
    """
    from matplotlib.collections import LineCollection

    if int(hops) != hops or hops < 1 or int(packets) != packets or packets < 1:
        raise CollectivesError(f"hops and packets must be whole numbers >= 1, got {hops!r} and {packets!r}")
    hops, packets = int(hops), int(packets)
    total = hops * packets
    if not 0 <= slot <= total + 1:
        raise CollectivesError(f"slot must be 0..{total + 1}, got {slot}")
    fig, ax = _axes(ax, 2.9 if ax is None else None)
    gap = 1.0
    rows = ((gap, False, f"whole message per hop (store-and-forward): {total} slots"),
            (0.0, True, f"pipelined in packets (towards cut-through): {hops + packets - 1} slots"))
    step = min(0.14, 0.8 / packets)          # x spacing of queued packets, in link lengths
    xs, ys, colors, segs, seg_busy, labels, finished = [], [], [], [], [], [], []
    for y, pipelined, title in rows:
        places = _packet_places(hops, packets, slot, pipelined)
        busy = {where for kind, where in places if kind == "link"}
        queues: dict[int, list[int]] = {}
        for k, (kind, where) in enumerate(places):
            if kind == "node":
                queues.setdefault(where, []).append(k)
        for k, (kind, where) in enumerate(places):
            if kind == "link":
                x, yy = where + 0.5, y
            else:
                q = queues[where]
                x, yy = where + (q.index(k) - (len(q) - 1) / 2) * step, y + 0.3
            xs.append(x)
            ys.append(yy)
            colors.append(rank_color(k))
            if packets <= 12:
                labels.append(ax.text(x, yy, str(k + 1), ha="center", va="center", fontsize=7,
                                      color=_text_on(rank_color(k)), zorder=6))
        for h in range(hops):
            segs.append([(h, y), (h + 1, y)])
            seg_busy.append(h in busy)
        finished.append(bool(slot > 0 and all(p == ("node", hops) for p in places)))
        labels.append(ax.text(-0.45, y + 0.5, title + ("  \u2713 delivered" if finished[-1] else ""),
                              fontsize=8.5, color=TEXT_COLOR, va="bottom"))
        for node in range(hops + 1):
            name = "source" if node == 0 else ("destination" if node == hops else f"switch {node}")
            labels.append(ax.text(node, y - 0.14, name, ha="center", va="top", fontsize=8, color=MUTED_COLOR))
    links = LineCollection(segs, colors=[OP_COLORS["copy"] if b else FAINT_COLOR for b in seg_busy],
                           linewidths=[4.0 if b else 1.5 for b in seg_busy], zorder=1)
    ax.add_collection(links)
    node_x = np.tile(np.arange(hops + 1), 2)
    node_y = np.repeat([gap, 0.0], hops + 1)
    ax.scatter(node_x, node_y, s=150, c=NODE_COLOR, edgecolors="#6e7781", linewidths=0.8, zorder=3)
    pc = ax.scatter(xs, ys, s=170, marker="s", c=colors, edgecolors="white", linewidths=0.6, zorder=5)
    ax.set_xlim(-0.5, hops + 0.5)
    ax.set_ylim(-0.4, gap + 0.75)
    _blank(ax)
    when = "start" if slot == 0 else (f"after {total} slots" if slot > total else f"time slot {slot}")
    ax.set_title(f"A message of {packets} packets crossing {hops} links: {when} "
                 f"(one slot = one packet over one link)", fontsize=9.5)
    alt = (f"Two rows of {hops + 1} nodes joined by {hops} links. At {when}, top row (store-and-forward): "
           + ("all packets delivered" if finished[0] else "the message is still on its way")
           + "; bottom row (pipelined): " + ("all packets delivered" if finished[1] else "packets stream along the links")
           + ".")
    return {"packets": pc, "links": links, "finished": finished, "labels": labels, "figure": fig, "axes": ax,
            "alt": alt}


def packet_pipeline_animation(hops: int = 3, packets: int = 4, *, fps: float = 1.5, title: str | None = None):
    """:func:`draw_packet_pipeline` as a player: the start, one frame per time
    slot until the store-and-forward row has delivered, and the end
    (``hops * packets + 2`` frames).

    Introduced in the chapter *Moving bytes*.
    """
    from ..explore import animation

    total = hops * packets
    pipe = hops + packets - 1

    def frame(i):
        fig, ax = new_figure(height=2.9, pyplot=False)
        draw_packet_pipeline(hops, packets, i, ax=ax)
        return fig

    def caption(i):
        if i == 0:
            return f"Start: all {packets} packets wait at the source."
        if i > total:
            return (f"Both delivered: {pipe} slots pipelined against {total} slots store-and-forward.")
        if i <= pipe:
            return (f"Slot {i}: pipelined, every busy link carries a different packet at once; "
                    "store-and-forward, one link works while the others wait.")
        return (f"Slot {i}: the pipelined message arrived after {pipe} slots; the store-and-forward one "
                f"is on link {(i - 1) // packets + 1} of {hops}.")

    return animation(frame, total + 2, fps=fps, captions=caption,
                     alt=f"Animation of a {packets}-packet message crossing {hops} links, store-and-forward "
                         f"against pipelined", title=title or "A message crossing links, slot by slot")


def draw_pipeline(pipeline, ax=None, *, title: str | None = None, chunks: int | None = None):
    """The stages of a :class:`~collectives_lib.workloads.Pipeline` as bars, slowest marked.

    One horizontal bar per stage (in :data:`STAGE_COLORS`, labelled with its
    time and what it moves), then two bars that combine them: the stages one
    after another (stacked) and streamed, when they overlap and the slowest
    stage sets the time (with ``chunks``, the pipelined time for that many
    chunks instead). Linear time axis in the unit that suits the longest bar.

    Introduced in the chapter *TPU cluster topology*.

    Returns ``{"bars": list of BarContainer (one per stage), "total": the
    stacked bar's containers, "streamed": BarContainer, "figure", "axes", "alt"}``.
    """
    stages = list(pipeline.stages)
    if not stages:
        raise CollectivesError("the pipeline has no stages to draw")
    seq = float(pipeline.time_sequential)
    streamed = float(pipeline.time_streamed if chunks is None else pipeline.time_pipelined(chunks))
    neck = pipeline.bottleneck
    K = len(stages)
    fig, ax = _axes(ax, 1.0 + 0.36 * (K + 2) if ax is None else None)
    scale, unit = _time_unit(seq)
    y_stage = np.arange(K)[::-1] + 2.4
    bars = []
    for i, (st, y) in enumerate(zip(stages, y_stage)):
        color = STAGE_COLORS[i % len(STAGE_COLORS)]
        b = ax.barh([y], [st.seconds / scale], height=0.7, color=color, hatch=STAGE_HATCHES[i % len(STAGE_HATCHES)],
                    edgecolor=TEXT_COLOR if st is neck else "white", linewidth=1.8 if st is neck else 0.5)
        bars.append(b)
        label = f"  {format_time(st.seconds)}  ({st.describe()})" + ("  \u2190 bottleneck" if st is neck else "")
        ax.text(st.seconds / scale, y, label, va="center", ha="left", fontsize=7.5, color=TEXT_COLOR,
                fontweight="bold" if st is neck else "normal")
    left = 0.0
    total = []
    for i, st in enumerate(stages):
        total.append(ax.barh([1.0], [st.seconds / scale], left=left, height=0.7,
                             color=STAGE_COLORS[i % len(STAGE_COLORS)], hatch=STAGE_HATCHES[i % len(STAGE_HATCHES)],
                             edgecolor="white", linewidth=0.5))
        left += st.seconds / scale
    ax.text(left, 1.0, f"  {format_time(seq)}", va="center", ha="left", fontsize=7.5, color=TEXT_COLOR)
    sb = ax.barh([0.0], [streamed / scale], height=0.7, color=FAINT_COLOR, edgecolor=TEXT_COLOR, linewidth=1.0)
    ax.text(streamed / scale, 0.0, f"  {format_time(streamed)}", va="center", ha="left", fontsize=7.5,
            color=TEXT_COLOR)
    streamed_name = "streamed: slowest stage" if chunks is None else f"pipelined, {chunks} chunks"
    ax.set_yticks(list(y_stage) + [1.0, 0.0])
    ax.set_yticklabels([st.name for st in stages] + ["one after another", streamed_name], fontsize=8)
    ax.axhline(1.7, color=FAINT_COLOR, lw=0.8)
    ax.set_xlim(0, seq / scale * 1.9)
    ax.set_ylim(-0.6, y_stage[0] + 0.6)
    ax.set_xlabel(f"time ({unit})", fontsize=9)
    ax.tick_params(labelsize=7.5)
    ax.grid(True, axis="x", color="#e6e8eb", lw=0.6)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    if title:
        ax.set_title(title, fontsize=9.5)
    alt = (f"Horizontal bars for {K} stages: "
           + "; ".join(f"{st.name} {format_time(st.seconds)}" for st in stages)
           + f". The slowest is {neck.name}. One after another they take {format_time(seq)}; "
           + (f"streamed, {format_time(streamed)}." if chunks is None else
              f"pipelined in {chunks} chunks, {format_time(streamed)}."))
    return {"bars": bars, "total": total, "streamed": sb, "figure": fig, "axes": ax, "alt": alt}


# ---------------------------------------------------------------------------
# All-to-all as a transpose
# ---------------------------------------------------------------------------

def draw_all_to_all_blocks(schedule: Schedule, after: int = 0, ax=None, *, states=None, group: int = 0,
                           ncols: int | None = None, title: str | None = None):
    """An all-to-all seen as a transpose: one small origin x destination grid per rank.

    Panel ``r`` shows what local rank ``r`` of group ``group`` holds after
    ``after`` steps (0: before step 1). Cell ``(o, d)`` is the block origin
    ``o`` sends to destination ``d``, in ``o``'s colour: pale in the rank's
    own row (its send buffer), full in its own column ``d = r`` (blocks that
    have arrived; partly filled while only some parts have), medium for
    blocks it is passing on to other ranks, white when it has never held the
    block. Cells written by step ``after`` are outlined in the copy colour.
    Row ``r`` at the start and column ``r`` at the end: the transpose.
    ``states`` takes a precomputed ``cl.replay(schedule)``; ``ax`` may be
    None, a Figure or SubFigure, or a sequence of at least ``n`` Axes.

    Returns ``{"cells": PolyCollection (n x n per panel, all panels),
    "fills": PolyCollection (same count), "written": PolyCollection or None,
    "figure", "axes", "alt"}``.

    Introduced in the chapter *All-to-all: a sharded transpose*.
    """
    from matplotlib.collections import PolyCollection
    from matplotlib.colors import to_rgba
    from matplotlib.patches import Rectangle

    if schedule.collective != "all_to_all":
        raise CollectivesError(f"draw_all_to_all_blocks draws all-to-all schedules, not {schedule.collective}")
    if len(schedule.group_shape) != 1:
        raise CollectivesError("draw_all_to_all_blocks draws one line of ranks (a 1D group shape)")
    if not 0 <= group < schedule.num_groups:
        raise CollectivesError(f"group must be 0..{schedule.num_groups - 1}, got {group}")
    states = _states(schedule, states)
    if not 0 <= after < len(states):
        raise CollectivesError(f"after must be 0..{len(states) - 1} (steps done), got {after}")
    n = schedule.group_size
    members = schedule.groups[group]
    parts = schedule.num_slots // (n * n)
    held = (states[after].contrib[members] != 0).reshape(n, n, n, parts).mean(axis=3)   # [rank, o, d]
    ncols = ncols or (n if n <= 6 else -(-n // 2))
    nrows = -(-n // ncols)
    fig, axes = _panel_axes(ax, n, nrows=nrows, height=None if ax is not None else 1.0 + 1.3 * nrows)
    written = np.zeros((n, n, n), dtype=bool)
    if after >= 1:
        wp, ws, _ = _written(schedule, after - 1)
        local = {int(g): i for i, g in enumerate(members)}
        coords = np.unravel_index(ws, schedule.slot_shape)
        for p, o, d in zip(wp.tolist(), coords[0].tolist(), coords[1].tolist()):
            if p in local:
                written[local[p], o, d] = True
    oo, dd = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")     # cell (o, d) at x = d, y = n-1-o
    palette = np.array([to_rgba(rank_color(o)) for o in range(n)])
    cells_all, fills_all, written_all = [], [], []
    for r, a in enumerate(axes):
        h = held[r]
        face = np.tile(to_rgba(EMPTY_COLOR), (n, n, 1))
        passing = (h > 0) & (dd != r) & (oo != r)
        tints = np.array([to_rgba(_tint(rank_color(o), 0.55)) for o in range(n)])
        face[passing] = tints[oo[passing]]
        face[oo == r] = to_rgba(_tint(rank_color(r), 0.3))
        cells = PolyCollection(_rects(dd.ravel() + 0.06, (n - 1 - oo).ravel() + 0.06, 0.88, 0.88),
                               facecolors=face.reshape(-1, 4), edgecolors=FAINT_COLOR, linewidths=0.5, zorder=1)
        a.add_collection(cells, autolim=False)
        arrived = (dd == r) & (h > 0)
        fills = PolyCollection(_rects(dd[arrived] + 0.06, (n - 1 - oo[arrived]) + 0.06, 0.88, 0.88 * h[arrived]),
                               facecolors=palette[oo[arrived]], edgecolors="none", zorder=2)
        a.add_collection(fills, autolim=False)
        cells_all.append(cells)
        fills_all.append(fills)
        wo, wd = np.nonzero(written[r])
        if len(wo):
            wcol = PolyCollection(_rects(wd + 0.06, (n - 1 - wo) + 0.06, 0.88, 0.88), facecolors="none",
                                  edgecolors=OP_COLORS["copy"], linewidths=1.4, zorder=3)
            a.add_collection(wcol, autolim=False)
            written_all.append(wcol)
        a.add_patch(Rectangle((r, 0), 1, n, fill=False, edgecolor=TEXT_COLOR, lw=1.0, zorder=4))
        a.set_xlim(-0.1, n + 0.1)
        a.set_ylim(-0.1, n + 0.1)
        a.set_aspect("equal")
        _hide_frame(a)
        a.set_xticks(np.arange(n) + 0.5)
        a.set_xticklabels([str(d) for d in range(n)], fontsize=6)
        a.set_yticks(np.arange(n) + 0.5)
        a.set_yticklabels([str(o) for o in range(n)][::-1], fontsize=6)
        a.set_title(f"rank {int(members[r])}", fontsize=8, pad=3)
        if r % ncols:
            a.set_yticklabels([])
        else:
            a.set_ylabel("from", fontsize=7, labelpad=1)
        if r >= n - ncols:
            a.set_xlabel("to", fontsize=7, labelpad=1)
    if title is not None:
        fig.suptitle(title, fontsize=9)
    arrived_total = int(sum((held[r][:, r] >= 1).sum() for r in range(n)))
    alt = (f"{n} small grids, one per rank, of the blocks of an all-to-all by origin (rows) and destination "
           f"(columns) after {after} of {schedule.num_steps} steps: {arrived_total} of {n * n} blocks have "
           "reached their destination column.")
    return {"cells": cells_all, "fills": fills_all, "written": written_all or None,
            "figure": fig, "axes": axes, "alt": alt}
