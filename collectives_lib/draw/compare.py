"""Two systems side by side: one pair of horizontal bars per collective, on a log time axis.

Introduced in the chapter *Estimate collectives across GPU nodes* (GPU and TPU
collectives side by side).
"""

from __future__ import annotations

import numpy as np

from ..errors import CollectivesError
from ..units import format_time
from .figure import axes_for, grid, label_axes, legend
from .style import FONT, LINK_COLORS


def draw_paired_times(categories, first, second, ax=None, *, labels=("first", "second"),
                      classes=("nvlink", "ici"), title: str = ""):
    """Horizontal bars of two systems' times per category (collective), each bar labelled
    with its time and algorithm. ``first`` and ``second`` hold one ``(algorithm, seconds)``
    per category; ``classes`` are the link classes whose colours the two systems take.

    Returns ``{"bars": two BarContainers, "labels": list of Text, "figure", "axes", "alt"}``.
    """
    from matplotlib.ticker import FuncFormatter

    if not (len(categories) == len(first) == len(second)) or not len(categories):
        raise CollectivesError(f"draw_paired_times needs one time per category for both systems, got "
                               f"{len(categories)} categories, {len(first)} and {len(second)} times")
    fig, ax = axes_for(ax, 3.8 if ax is None else None)
    y = np.arange(len(categories))
    bars, texts = [], []
    for rows, offset, klass, label in ((first, -0.2, classes[0], labels[0]), (second, 0.2, classes[1], labels[1])):
        bars.append(ax.barh(y + offset, [t for _, t in rows], height=0.38, color=LINK_COLORS[klass], label=label))
        for yy, (alg, t) in zip(y + offset, rows):
            texts.append(ax.text(t * 1.15, yy, f"{format_time(t)}  {alg.replace('_', ' ')}", va="center",
                                 fontsize=FONT["annotation"]))
    ax.set_yticks(y, [c.replace("_", "-") for c in categories], fontsize=FONT["tick"])
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.minorticks_off()
    times = [t for _, t in list(first) + list(second)]
    ax.set_xlim(min(times) / 2, max(times) * 60)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: format_time(v)))
    label_axes(ax, title, "time (log scale)", tick_role="tick")
    legend(fig, loc="outside lower center", ncol=2)
    grid(ax, "x")
    alt = (f"Horizontal bars on a log time axis for {', '.join(c.replace('_', '-') for c in categories)}: "
           f"{labels[0]} against {labels[1]}, each bar labelled with its time and algorithm.")
    return {"bars": bars, "labels": texts, "figure": fig, "axes": ax, "alt": alt}
