"""Move the cut: the bandwidth across every split of a GPU cluster into two sides.

:func:`draw_cut_sweep` draws a strip with the two sides (and the SU
boundaries) above the cut bandwidth against the size of side A, one way and
both ways, with the same cut on an oversubscribed tree when given, and one
cut marked. Introduced in the chapter *Map a GPU cluster* (the cut explorer).
"""

from __future__ import annotations

import numpy as np

from ..errors import CollectivesError
from ..units import format_rate
from .figure import grid, label_axes, legend, new_figure
from .style import FAINT_COLOR, FONT, OP_COLORS, RANK_COLORS, TEXT_COLOR


def draw_cut_sweep(one, both, k: int, *, over=None, unit: str = "nodes", boundary: int | None = None,
                   title: str = ""):
    """``one[i]`` and ``both[i]`` are the cut bandwidths (B/s) with ``i + 1`` units on side A
    (of ``len(one) + 1`` units); ``over`` the one-way cut of an oversubscribed tree; ``k`` the
    marked cut; ``boundary`` draws a dotted line every ``boundary`` units (SU edges).

    Returns ``{"curves", "marker", "strip", "figure", "axes", "alt"}`` (axes: strip, plot).
    """
    one, both = np.asarray(one, dtype=float), np.asarray(both, dtype=float)
    units = len(one) + 1
    if len(both) != len(one) or not 1 <= k < units:
        raise CollectivesError(f"draw_cut_sweep needs one and both of equal length and 1 <= k < {units}, "
                               f"got {len(one)}, {len(both)} and k={k}")
    ks = np.arange(1, units)
    fig, (strip, ax) = new_figure(2, 1, pyplot=False, height=3.9, height_ratios=[1, 4.2])
    strip.barh(0, k, color=RANK_COLORS[4], edgecolor="white")
    strip.barh(0, units - k, left=k, color=RANK_COLORS[2], edgecolor="white")
    strip.text(k / 2, 0, f"A: {k}", ha="center", va="center", fontsize=FONT["label"])
    strip.text(k + (units - k) / 2, 0, f"B: {units - k}", ha="center", va="center", fontsize=FONT["label"])
    if boundary:
        for b in range(boundary, units, boundary):
            strip.axvline(b, color=TEXT_COLOR, lw=0.8, ls=":")
    strip.set_xlim(0, units)
    strip.set_axis_off()
    label_axes(strip, title, title_role="label")
    curves = ax.plot(ks, one / 1e12, color=OP_COLORS["copy"], lw=2, label="one way, A to B")
    curves += ax.plot(ks, both / 1e12, color=OP_COLORS["copy"], lw=1.2, ls="--", label="both ways")
    if over is not None:
        curves += ax.plot(ks, np.asarray(over) / 1e12, color=OP_COLORS["reduce"], lw=1.8, ls=":", zorder=3,
                          label="one way, 2:1 oversubscribed")
    marker = ax.plot([k], [one[k - 1] / 1e12], "o", color=OP_COLORS["copy"], ms=7)[0]
    ax.annotate(f"{k} | {units - k} {unit}:\n{format_rate(one[k - 1])} one way\n{format_rate(both[k - 1])} both ways",
                (k, one[k - 1] / 1e12), xytext=(10, 12), textcoords="offset points", fontsize=FONT["label"],
                va="bottom", ha="left" if k < 0.6 * units else "right",
                bbox=dict(boxstyle="round,pad=0.3", fc="white", ec=FAINT_COLOR, alpha=0.95))
    ax.set_xlim(0, units)
    ax.set_ylim(0, both.max() / 1e12 * 1.12)
    label_axes(ax, None, f"{unit} on side A", "cut bandwidth (TB/s)", tick_role="label")
    grid(ax)
    legend(ax, loc="upper left")
    alt = (f"Cut bandwidth against the number of {unit} on side A, out of {units}: a tent that peaks at the "
           f"even split; the marked cut puts {k} on side A.")
    return {"curves": curves, "marker": marker, "strip": strip, "figure": fig, "axes": (strip, ax), "alt": alt}
