"""Algorithms against message size: each algorithm's time, the fastest one per
size as a band along the bottom, and where two of them cross.

Introduced in the chapter *Depth, trees and the network roofline*.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ..errors import CollectivesError
from ..units import format_bytes, format_time
from .figure import grid, label_axes, legend, new_figure
from .style import ALGORITHM_STYLES, FONT, MUTED_COLOR

_SIZE_TICKS = [(1e3, "1 KB"), (1e4, "10 KB"), (1e5, "100 KB"), (1e6, "1 MB"), (1e7, "10 MB"),
               (1e8, "100 MB"), (1e9, "1 GB"), (1e10, "10 GB"), (1e11, "100 GB")]
_TIME_TICKS = [(1e-6, "1 µs"), (1e-5, "10 µs"), (1e-4, "100 µs"), (1e-3, "1 ms"), (1e-2, "10 ms"),
               (1e-1, "100 ms"), (1.0, "1 s"), (10.0, "10 s")]


def _at(sizes: np.ndarray, times: np.ndarray, size: float) -> float:
    return float(np.exp(np.interp(np.log(size), np.log(sizes), np.log(times))))


def draw_size_crossover(sizes: Sequence[float], curves: Mapping[str, Sequence[float]], size: float, *,
                        crossover: float | None = None, crossover_label: str = "ring = tree",
                        styles: Mapping[str, tuple] | None = None, title: str = "", ax=None):
    """Time against message size for several algorithms, on log axes.

    ``curves`` maps an algorithm's name to its times (seconds) at ``sizes``
    (bytes, increasing). A marker on every curve shows ``size``; the band along
    the bottom is coloured by the fastest algorithm at each size; ``crossover``
    (bytes, a sequence of them, or None) is drawn as dotted lines labelled ``crossover_label``.
    ``styles`` maps names to ``(colour, linestyle, marker)`` (default: the
    book's :data:`ALGORITHM_STYLES` in order). The title (``title``, with the
    fastest algorithm at ``size`` appended) should name the model the times
    come from.

    Returns ``{"lines": one Line2D per curve, "fastest": the name fastest at
    size, "figure", "axes", "alt"}``.
    """
    sizes = np.asarray(sizes, dtype=float)
    if sizes.ndim != 1 or len(sizes) < 2 or np.any(np.diff(sizes) <= 0) or sizes[0] <= 0:
        raise CollectivesError("sizes must be at least two positive, increasing byte counts")
    if not curves:
        raise CollectivesError("curves must name at least one algorithm")
    times = {k: np.asarray(v, dtype=float) for k, v in curves.items()}
    for k, t in times.items():
        if t.shape != sizes.shape or not np.all(t > 0):
            raise CollectivesError(f"curve {k!r} must hold one positive time per size ({len(sizes)})")
    if not sizes[0] <= size <= sizes[-1]:
        raise CollectivesError(f"size must lie in [{sizes[0]:g}, {sizes[-1]:g}] bytes, got {size!r}")
    styles = dict(styles or {})
    for i, k in enumerate(times):
        styles.setdefault(k, ALGORITHM_STYLES[i % len(ALGORITHM_STYLES)])
    if ax is None:
        fig, ax = new_figure(height=3.4, pyplot=False)
    else:
        fig = ax.figure
    lines = []
    for k, t in times.items():
        color, ls, marker = styles[k]
        lines.append(ax.plot(sizes, t, color=color, ls=ls, lw=1.8, label=k.replace("_", " "))[0])
        ax.plot([size], [_at(sizes, t, size)], marker=marker, color=color, ms=6, zorder=4)
    names = list(times)
    best = np.argmin(np.stack([times[k] for k in names]), axis=0)
    edges = np.sqrt(sizes[:-1] * sizes[1:])
    edges = np.concatenate([[sizes[0]], edges, [sizes[-1]]])
    for j in range(len(sizes)):
        ax.axvspan(edges[j], edges[j + 1], ymin=0, ymax=0.04, color=styles[names[best[j]]][0], lw=0)
    marks = [] if crossover is None else [float(x) for x in np.atleast_1d(crossover)]
    for j, x in enumerate(marks):
        ax.axvline(x, color=MUTED_COLOR, ls=":", lw=1)
        label = f" {crossover_label} at {format_bytes(x)}" if len(marks) == 1 else f" {j + 1}"
        ax.text(x, 0.93, label, transform=ax.get_xaxis_transform(), size=FONT["annotation"])
    if len(marks) > 1:
        ax.text(0.99, 0.93, f"{crossover_label} at " + ", ".join(format_bytes(x) for x in marks),
                transform=ax.transAxes, ha="right", size=FONT["annotation"])
    at_size = {k: _at(sizes, t, size) for k, t in times.items()}
    pick = min(at_size, key=at_size.get)
    ax.set(xscale="log", yscale="log", xlim=(sizes[0], sizes[-1]))
    ax.minorticks_off()
    xt = [(v, s) for v, s in _SIZE_TICKS if sizes[0] <= v <= sizes[-1]]
    ax.set_xticks([v for v, _ in xt], [s for _, s in xt])
    lo = min(float(t.min()) for t in times.values()) / 2
    hi = max(float(t.max()) for t in times.values()) * 2
    ax.set_ylim(lo, hi)
    yt = [(v, s) for v, s in _TIME_TICKS if lo <= v <= hi]
    ax.set_yticks([v for v, _ in yt], [s for _, s in yt])
    head = f"{title}: " if title else ""
    label_axes(ax, f"{head}at {format_bytes(size, binary=True)} {pick.replace('_', ' ')} is fastest "
                   f"({format_time(at_size[pick])})",
               "message size V; band at the bottom: the fastest algorithm", "time", tick_role="tick")
    grid(ax)
    legend(ax, loc="upper left")
    alt = (f"Log-log plot of time against message size for {', '.join(n.replace('_', ' ') for n in names)}, "
           f"with a band showing the fastest per size; at {format_bytes(size, binary=True)} "
           f"{pick.replace('_', ' ')} is fastest")
    return {"lines": lines, "fastest": pick, "figure": fig, "axes": ax, "alt": alt}
