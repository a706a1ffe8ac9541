"""Reduce-scatter and all-reduce drawings: the one-axis explorer and the step-time bars.

Introduced in the chapter *Reduce-scatter and all-reduce* (``tpu_reduce_scatter_all_reduce``).
"""

from __future__ import annotations

import numpy as np

from ..collective import Collective
from ..units import format_bytes, format_rate, format_time
from .figure import grid, label_axes, legend, new_figure, time_axis
from .style import FONT, OP_COLORS, PANEL_COLOR, PANEL_EDGE_COLOR, STAGE_COLORS, TEXT_COLOR

#: The explorer's curves: collective, colour, line style, width, label.
_CURVES = (("all_gather", OP_COLORS["copy"], (0, (1, 2)), 3.5, "all-gather"),
           ("reduce_scatter", OP_COLORS["reduce"], "-", 1.6, "reduce-scatter"),
           ("all_reduce", TEXT_COLOR, "-", 1.6, "all-reduce"))


def draw_reduce_scatter_explorer(curves: dict, nbytes: float):
    """Time against size for all-gather, reduce-scatter and all-reduce on one axis
    (``curves`` from :func:`collectives_lib.analysis.one_axis_curves`), the chosen size
    marked and its times in a box clear of the curves. Ideal link model.

    Returns ``{"figure", "axes", "lines", "box", "alt"}``.
    """
    from matplotlib.ticker import FuncFormatter

    times, CURVE_SIZES = curves, curves["sizes"]
    n, kind, bandwidth, latency = curves["n"], curves["kind"], curves["bandwidth"], curves["latency"]
    at = int(np.argmin(abs(CURVE_SIZES - nbytes)))
    fig, ax = new_figure(height=3.4, pyplot=False)
    lines, said = [], []
    for collective, colour, ls, lw, label in _CURVES:
        lines += ax.plot(CURVE_SIZES, times[collective], color=colour, ls=ls, lw=lw, label=label)
        if Collective(collective).reduces:       # all-gather's time is reduce-scatter's
            ax.plot([CURVE_SIZES[at]], [times[collective][at]], "o", color=colour, ms=6, zorder=4)
            said.append(f"{label}: {format_time(times[collective][at])}")
    box = ax.text(0.97, 0.05, f"at {format_bytes(CURVE_SIZES[at], binary=True)}\n" + "\n".join(said),
                  transform=ax.transAxes, ha="right", va="bottom", fontsize=FONT["annotation"], color=TEXT_COLOR,
                  bbox=dict(boxstyle="round,pad=0.4", facecolor=PANEL_COLOR, edgecolor=PANEL_EDGE_COLOR))
    ax.set(xscale="log", yscale="log")
    label_axes(ax, f"{kind}, N = {n}, W = {format_rate(bandwidth)} one way, {format_time(latency)} per hop "
                   "(ideal link model)", "V, size of each chip's array (bytes)", "time", tick_role="tick")
    ax.set_xticks([2.0 ** k for k in range(10, 35, 4)])
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: format_bytes(v, binary=True)))
    time_axis(ax.yaxis)
    ax.minorticks_off()
    grid(ax)
    legend(ax, loc="upper left")
    alt = (f"Log-log plot of time against size for all-gather, reduce-scatter and all-reduce on a {kind} of "
           f"{n} chips, with the times at {format_bytes(CURVE_SIZES[at], binary=True)} marked; all-reduce is "
           f"twice reduce-scatter, which equals all-gather.")
    return {"figure": fig, "axes": ax, "lines": lines, "box": box, "alt": alt}


def draw_stage_step_times(runs, labels: dict):
    """One bar chart per ``(schedule, result)`` in ``runs`` of the simulated time of every
    step (``result = cl.simulate(schedule, ...)``), coloured by stage.

    ``labels[schedule.algorithm]`` names the stages in order. Ideal link model.
    Returns ``{"figure", "axes", "bars", "alt"}``.
    """
    schedules = [s for s, _ in runs]
    fig, axes = new_figure(1, len(schedules), height=3.0, sharey=True, squeeze=False)
    axes = list(axes[0])
    bars = []
    for a, (sched, r) in zip(axes, runs):
        stages = sched.stages()
        colours = [STAGE_COLORS[stages.index(s.stage) % len(STAGE_COLORS)] for s in sched.steps]
        bars.append(a.bar(np.arange(1, sched.num_steps + 1), r.step_times * 1e6, color=colours, width=0.8))
        for k, label in enumerate(labels[sched.algorithm]):
            a.bar([0], [0], color=STAGE_COLORS[k], label=label)
        a.set_xlim(0.3, sched.num_steps + 0.7)
        a.set_xticks([1] + list(range(4, sched.num_steps + 1, 4)))
        label_axes(a, f"{sched.algorithm}: {format_time(r.time)} in all", "step", tick_role="tick")
        legend(a, loc="upper right", role="small")
        grid(a, "y")
        a.set_axisbelow(True)
    label_axes(axes[0], ylabel="step time (\u00b5s)")
    fig.suptitle("Time of every step (ideal link model)", fontsize=FONT["heading"])
    alt = ("Bar charts of the time of each step, one per schedule: "
           + "; ".join(f"{s.algorithm}, {s.num_steps} steps" for s in schedules) + ".")
    return {"figure": fig, "axes": axes, "bars": bars, "alt": alt}
