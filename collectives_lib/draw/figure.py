"""Figures, axes and display: the book-width figure, axes for one or several
panels, frames, legends, colour bars, axis formatters and titles, and
:func:`show` (a PNG card with alt text).
"""

from __future__ import annotations

import base64
import html as _html
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..topology import GpuCluster, Switch, Topology, Torus, TpuSlice, TpuSystem
from ..units import format_bytes, format_time
from .style import (DPI, FIGURE_HEIGHT, FIGURE_WIDTH, FONT, GRID_COLOR, IDLE_LINK_COLOR,
                    LINK_COLORS, LINK_LINESTYLES, TEXT_COLOR, WRAP_LINESTYLE, load_cmap)


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


def axes_for(ax, height: float | None = None, **kw):
    """(fig, ax) from a given Axes, or a new figure."""
    if ax is None:
        fig, ax = new_figure(height=height, **kw)
        return fig, ax
    return ax.figure, ax


def panel_axes(ax, n: int, *, nrows: int = 1, height: float | None = None, **kw):
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


def top_figure(fig):
    """The figure a subfigure (or an artist) belongs to, at the top."""
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


#: Pixels per CSS pixel of a shown figure: rendered at twice the book's DPI and
#: displayed at its width, so its smallest digits stay sharp on high-DPI screens.
HIDPI = 2

#: Pixels per CSS pixel of a player's frames (:func:`player_frames`). A player holds
#: every frame of its animation in the page, so twice the DPI would more than double
#: the weight of the TPU chapters' players and take three pages past the book's 2 MB a
#: page (``tests/test_book.py``); one and a half keeps the buffers' digits crisp on a
#: 1.5x screen and near it on a 2x one, where 1x frames were blurred by upscaling.
FRAME_HIDPI = 1.5


def frame_png(figure) -> bytes:
    """One frame of a player as PNG bytes at :data:`FRAME_HIDPI` times the book's DPI
    (256 colours, like every book figure); the figure is closed. The player's ``<img>``
    fits its card's width, so the frame shows at the figure's width in CSS pixels."""
    from ..book.explore import render_png

    return render_png(top_figure(figure), dpi=round(DPI * FRAME_HIDPI), compact=True)


def player_frames(draw_frame):
    """``draw_frame`` (frame index -> Figure) made to return :func:`frame_png` bytes:
    what the drawings hand to :func:`collectives_lib.book.explore.animation`."""
    return lambda i: frame_png(draw_frame(i))


def show(figure: Any, alt: str | None = None, *, compact: bool = True,
         width: int | None = None) -> FigureImage:
    """Render a figure (or the dict a drawing returned) as an image with alt text.

    The figure is closed. Display the result (last expression of a cell). The
    alt text defaults to the drawing's own ``"alt"``; pass ``alt=`` to say
    more. ``compact`` quantises the PNG to 256 colours (flat book figures
    lose nothing and weigh a third). The image holds :data:`HIDPI` pixels per
    displayed pixel; it is shown ``width`` CSS pixels wide (default: the
    figure's width at the book's DPI, 700 for a full-width figure).
    """
    from ..book.explore import render_png

    if isinstance(figure, Mapping):
        alt = alt or figure.get("alt")
        figure = figure["figure"]
    figure = top_figure(figure)
    if not alt:
        raise ValueError("show() needs alt text: pass alt='...' (a sentence saying what the figure shows)")
    shown = width or round(figure.get_figwidth() * DPI)
    return FigureImage(render_png(figure, dpi=DPI * HIDPI, compact=compact), alt, shown)


def hide_frame(ax) -> None:
    """No spines and no tick marks (tick labels stay)."""
    for side in ("top", "right", "left", "bottom"):
        ax.spines[side].set_visible(False)
    ax.tick_params(length=0)


def blank(ax) -> None:
    """No frame, no ticks: a drawing, not a plot."""
    hide_frame(ax)
    ax.set_xticks([])
    ax.set_yticks([])


def label_axes(ax, title: str | None = None, xlabel: str | None = None, ylabel: str | None = None, *,
               title_role: str = "heading", label_role: str = "label", tick_role: str | None = None):
    """Title and axis labels in the book's sizes: the title in ``FONT[title_role]`` (a plot's
    title is a heading, 9.5 pt; ``"title"`` for 10 pt), the axis labels in ``FONT[label_role]``
    and, when ``tick_role`` is given, the tick labels in ``FONT[tick_role]``. Returns ``ax``.

    Lets a chapter write ``label_axes(ax, "time versus size", "V (bytes)", "time")`` instead of
    three calls with font sizes."""
    if title is not None:
        ax.set_title(title, fontsize=FONT[title_role])
    if xlabel is not None:
        ax.set_xlabel(xlabel, fontsize=FONT[label_role])
    if ylabel is not None:
        ax.set_ylabel(ylabel, fontsize=FONT[label_role])
    if tick_role is not None:
        ax.tick_params(labelsize=FONT[tick_role])
    return ax


def legend(ax, handles=None, *, role: str = "annotation", **kwargs):
    """A frameless legend in ``FONT[role]`` (its title too); other keyword arguments go to
    ``Axes.legend`` (``loc``, ``ncol``, ``bbox_to_anchor``...)."""
    if handles is not None:
        kwargs["handles"] = handles
    if kwargs.get("title") is not None:
        kwargs.setdefault("title_fontsize", FONT[role])
    kwargs.setdefault("frameon", False)
    return ax.legend(fontsize=FONT[role], **kwargs)


def grid(ax, axis: str = "both") -> None:
    """The book's light grid (:data:`~collectives_lib.draw.style.GRID_COLOR`) on ``axis``
    (``"both"``, ``"x"`` or ``"y"``), at the major ticks."""
    ax.grid(True, axis=axis, which="major", color=GRID_COLOR, lw=0.6)


def topology_name(topo: Topology) -> str:
    """A short name for titles and alt text: ``TPU v5e pod 16x16``, ``ring of 8``..."""
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
        return f"{topo.num_nodes} {topo.system.name.upper()} nodes"
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


def wraparound_text(topo: Torus) -> str:
    """``wraparound on x and y``, or ``no wraparound``."""
    axes = [n for n, w in zip(topo.axis_names, topo.wraparound) if w]
    if not axes:
        return "no wraparound"
    return "wraparound on " + " and ".join(axes)


def class_legend(ax, classes, *, wrap=False, extra=(), loc="upper left",
                 bbox=(1.01, 1.0), ncol=1, fontsize=FONT["annotation"], title=None):
    """A legend of link classes (``classes``: (class, label) pairs), the wraparound dash when ``wrap``,
    and ``extra`` handles; outside the axes on the right by default."""
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


def grid_ticks(ax, X: int, Y: int, fontsize: float = FONT["annotation"]) -> None:
    """Integer chip coordinates as ticks (every 1, 2 or 4 by size), without a frame."""
    def ticks(n):
        step = 1 if n <= 16 else (2 if n <= 32 else 4)
        return list(range(0, n, step))

    ax.set_xticks(ticks(X))
    ax.set_yticks(ticks(Y) if Y > 1 else [])
    ax.tick_params(labelsize=fontsize, length=0, pad=2)
    hide_frame(ax)


def value_norm(values):
    """(colour map, Normalize from 0 to the largest value) for colouring links by ``values``."""
    from matplotlib.colors import Normalize

    v = np.asarray(values, dtype=float)
    top = float(v.max()) if len(v) and v.max() > 0 else 1.0
    return load_cmap(), Normalize(0.0, top)


def value_unit(vmax: float, label: str):
    """(scale, unit) the ticks of a colour bar up to ``vmax`` are written in: a time
    unit when ``label`` speaks of time (``(1e-6, "\u00b5s")``), a decimal byte unit
    when it speaks of bytes (``(1e6, "MB")``), else ``(1.0, "")``."""
    if "time" in label:
        return time_unit(vmax)
    if "bytes" in label:
        for name, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
            if vmax >= scale:
                return scale, name
        return 1.0, "B"
    return 1.0, ""


def value_colorbar(fig, ax, cmap, norm, label):
    """A colour bar for link values: from 0 (:func:`value_norm`) to the largest value,
    its ticks plain numbers in one unit that the label names (``link busy time
    (\u00b5s)``), and under the 0 a grey box marked ``idle``: the colour the drawings
    give a link that carries nothing, so the faintest loaded colour never passes for
    an idle link."""
    from matplotlib.cm import ScalarMappable
    from matplotlib.ticker import FuncFormatter
    from matplotlib.transforms import ScaledTranslation

    sm = ScalarMappable(norm=norm, cmap=cmap.with_extremes(under=IDLE_LINK_COLOR))
    frac = 0.2                          # the idle box, as a share of the bar's length: room for two 8 pt words
    cbar = fig.colorbar(sm, ax=ax, shrink=0.8, pad=0.02, aspect=25, panchor=False,
                        extend="min", extendrect=True, extendfrac=frac)
    scale, unit = value_unit(float(norm.vmax), label)
    cbar.ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v / scale:.4g}"))
    first, _, rest = label.partition("\n")
    text = f"{first} ({unit})" if unit else first
    cbar.set_label(text + (f"\n{rest}" if rest else ""), fontsize=FONT["annotation"])
    cbar.ax.tick_params(labelsize=FONT["annotation"])      # 11 px on the page
    # the idle box hangs below the bar's axes: name it where a tick label would be
    pad = (cbar.ax.yaxis.get_major_ticks()[0].get_pad() + 3.5) / 72       # inches
    beside = cbar.ax.transAxes + ScaledTranslation(pad, 0, fig.dpi_scale_trans)
    cbar.ax.text(1.0, -frac * 0.55, "idle", ha="left", va="center", fontsize=FONT["annotation"],
                 color=TEXT_COLOR, transform=beside)
    return cbar


def size_axis(axis, binary: bool = False) -> None:
    """Log ticks of message sizes (``1 kB``, ``1 MiB`` when ``binary``), no minor ticks."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

    axis.set_major_locator(LogLocator(base=10 if not binary else 2, numticks=12))
    axis.set_minor_locator(NullLocator())  # minor log ticks cost more to lay out than the curves
    axis.set_major_formatter(FuncFormatter(lambda v, _: format_bytes(v, digits=3, binary=binary)))


def time_axis(axis) -> None:
    """Log ticks of times (``10 µs``, ``1 ms``), no minor ticks."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

    axis.set_major_locator(LogLocator(base=10, numticks=12))
    axis.set_minor_locator(NullLocator())
    axis.set_major_formatter(FuncFormatter(lambda v, _: format_time(v, digits=3)))


def time_unit(t: float):
    """(scale, unit name) that suits a time of ``t`` seconds: ``(1e-3, "ms")``..."""
    for name, scale in (("s", 1.0), ("ms", 1e-3), ("\u00b5s", 1e-6), ("ns", 1e-9)):
        if t >= scale:
            return scale, name
    return 1e-9, "ns"
