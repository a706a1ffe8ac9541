"""Why communication decides scaling, drawn: Amdahl's law for one training step,
where the slowest of n chips lands, a GPipe schedule's bubble, and a ring
all-reduce waiting for one slow GPU (:mod:`collectives_lib.book.scaling`).

Introduced in the chapter *Why communication decides scaling*.
"""

from __future__ import annotations

import numpy as np

from ..book import scaling
from ..errors import CollectivesError
from ..units import format_time
from .figure import grid, label_axes, legend, new_figure, time_unit
from .style import (EMPTY_COLOR, FAINT_COLOR, FONT, IDLE_COLOR, MUTED_COLOR, OP_COLORS, RANK_COLORS,
                    TEXT_COLOR)

_SPEEDUPS = np.geomspace(1, 256, 50)


def percentile(q: float) -> str:
    """'p91.7' for q = 0.917: enough decimals to show two digits of the tail 1 - q."""
    if not 0 < q < 1:
        raise CollectivesError(f"q must lie strictly between 0 and 1, got {q!r}")
    decimals = max(1, int(np.ceil(-np.log10((1 - q) * 100))) + 1)
    return f"p{100 * q:.{decimals}f}"


def draw_amdahl(compute: float, sync: float, chip: float):
    """Left: one step's compute and sync today and on a chip ``chip`` times
    faster. Right: step speed-up against chip speed-up, with the limit
    ``(C + S) / S``. ``compute`` and ``sync`` in seconds.

    Returns ``{"figure", "axes", "alt"}``.
    """
    a = scaling.amdahl(compute, sync, chip)
    fig, (left, right) = new_figure(1, 2, pyplot=False, width_ratios=[1, 1.2])
    rows = [("today", scaling.amdahl(a.compute, a.sync, 1)), (f"chip {chip:g}x faster", a)]
    for y, (_label, b) in enumerate(rows):
        c_us, s_us = b.compute / b.chip_speedup * 1e6, b.sync * 1e6
        left.barh(y, c_us, height=0.5, color=OP_COLORS["copy"], label="compute C/k" if y == 0 else None)
        left.barh(y, s_us, left=c_us, height=0.5, color=OP_COLORS["reduce"], label="sync S" if y == 0 else None)
        left.text(c_us + s_us, y, f" {format_time(b.step_time)}", va="center", size=FONT["annotation"])
    left.set_yticks([0, 1], [r[0] for r in rows])
    left.invert_yaxis()
    left.set_xlim(0, (a.compute + a.sync) * 1e6 * 1.4)
    label_axes(left, "one training step", "step time (µs)", None, tick_role="tick")
    legend(left, loc="center right", role="tick")           # between the two bars
    achieved = [scaling.amdahl(a.compute, a.sync, s).speedup for s in _SPEEDUPS]
    right.plot(_SPEEDUPS, _SPEEDUPS, color=MUTED_COLOR, ls="--", lw=1, label="ideal: what you paid for")
    right.plot(_SPEEDUPS, achieved, color=OP_COLORS["copy"], lw=2, label="achieved")
    right.axhline(a.limit, color=OP_COLORS["reduce"], ls=":", lw=1.3, label=f"limit (C+S)/S = {a.limit:.3g}x")
    right.plot([chip], [a.speedup], "o", color=TEXT_COLOR, ms=6, zorder=4)
    # below the point, unless that is the axis (a speed-up near 1x): then above it, on a
    # white patch over the two lines that leave the point
    low = a.speedup < 1.3
    right.annotate(f"{a.speedup:.2f}x", (chip, a.speedup), xytext=(8, 6 if low else -14),
                   textcoords="offset points", size=FONT["annotation"], zorder=5,
                   bbox=dict(boxstyle="square,pad=0.15", fc="white", ec="none"))
    ticks = [1, 4, 16, 64, 256]
    right.set(xscale="log", yscale="log", xlim=(1, 256), ylim=(1, 64))
    right.minorticks_off()
    right.set_xticks(ticks, [f"{t}x" for t in ticks])
    right.set_yticks(ticks[:-1], [f"{t}x" for t in ticks[:-1]])
    label_axes(right, "what the faster chip buys", "chip speed-up k (compute only)", "step speed-up",
               tick_role="tick")
    legend(right, loc="upper left", role="tick")
    grid(right)
    alt = (f"Left: stacked bars of compute and sync for today's step and for a chip {chip:g} times faster. "
           f"Right: step speed-up against chip speed-up on log axes, flattening towards the limit "
           f"{a.limit:.3g}x below the ideal diagonal")
    return {"figure": fig, "axes": (left, right), "alt": alt}


def draw_slowest_tail(n: int, sigma: float):
    """The density of one chip's lognormal step time (spread ``sigma``) and of
    the slowest of ``n``, with the median slowest marked and one chip's tail
    beyond it shaded. Returns ``{"figure", "axes", "alt"}``."""
    fig, ax = new_figure(height=3.0, pyplot=False)
    x = np.linspace(np.exp(-4 * sigma), np.exp(6 * sigma), 500)
    one = scaling.slowest_pdf(1, x, sigma=sigma)
    top = scaling.slowest_pdf(n, x, sigma=sigma)
    m = scaling.slowest_median(n, sigma=sigma)
    q = scaling.slowest_quantile(n)
    ax.plot(x, one, color=RANK_COLORS[1], lw=1.8, label="one chip")
    ax.fill_between(x, one, where=x >= m, color=RANK_COLORS[1], alpha=0.25, lw=0,
                    label=f"one chip's tail beyond it: {100 * (1 - q):.2g}%")
    ax.plot(x, top, color=RANK_COLORS[0], lw=2, label=f"slowest of {n}")
    ax.axvline(m, color=TEXT_COLOR, lw=1, ls=":")
    where = f" at one chip's {percentile(q)}" if q < 1 else ""
    # the label in the headroom above both curves, on the side of the line with more room
    right_half = (m - x[0]) / (x[-1] - x[0]) > 0.55
    ax.text(m, 0.97, f" median slowest: {m:.3g}x the median chip \n{where} ",
            transform=ax.get_xaxis_transform(), va="top", ha="right" if right_half else "left",
            size=FONT["annotation"])
    ax.set_xlim(x[0], x[-1])
    ax.set_ylim(0, max(one.max(), top.max()) * 1.3)
    label_axes(ax, None, "step time (multiples of one chip's median)", "probability density", tick_role="tick")
    legend(ax, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=3)     # below: never on a curve
    alt = (f"Density of one chip's step time (spread {sigma:g}) and of the slowest of {n} chips, with the "
           f"median of the slowest, {m:.3g} times the median chip, marked")
    return {"figure": fig, "axes": ax, "alt": alt}


def draw_gpipe(p: int, m: int, ax=None):
    """A GPipe schedule of ``p`` stages and ``m`` micro-batches as a Gantt chart,
    idle time hatched. Returns ``{"figure", "axes", "alt"}``."""
    from matplotlib.patches import Patch

    if ax is None:
        fig, ax = new_figure(height=2.9, pyplot=False)
    else:
        fig = ax.figure
    colors = {"forward": OP_COLORS["copy"], "backward": OP_COLORS["reduce"]}
    tasks = scaling.gpipe_schedule(p, m)
    end = max(t.end for t in tasks)
    for s in range(p):
        ax.broken_barh([(0, end)], (s - 0.4, 0.8), facecolors=IDLE_COLOR, edgecolor=FAINT_COLOR, hatch="///", lw=0)
    for t in tasks:
        ax.broken_barh([(t.start, t.end - t.start)], (t.stage - 0.4, 0.8), facecolors=colors[t.phase],
                       edgecolor=EMPTY_COLOR, lw=0.6)
        ax.text((t.start + t.end) / 2, t.stage, str(t.microbatch + 1), ha="center", va="center",
                size=FONT["detail"], color=EMPTY_COLOR)
    ax.set_yticks(range(p), [f"stage {s + 1}" for s in range(p)])
    ax.invert_yaxis()
    ax.set_xlim(0, end)
    bubble = scaling.pipeline_bubble_fraction(p, m)
    label_axes(ax, f"GPipe, p = {p} stages, m = {m} micro-batches: each stage idles {bubble:.0%} of the step",
               "time (units of one micro-batch's forward pass on one stage)", None, tick_role="tick")
    legend(ax, [Patch(color=colors["forward"], label="forward"), Patch(color=colors["backward"], label="backward"),
                Patch(facecolor=IDLE_COLOR, edgecolor=FAINT_COLOR, hatch="///", label="idle (bubble)")],
           loc="upper center", bbox_to_anchor=(0.5, -0.28), ncol=3)
    alt = (f"Gantt chart of a GPipe schedule with {p} stages and {m} micro-batches: forward passes step "
           f"diagonally down the stages, then backward passes (twice as long) step back up; hatched idle "
           f"time at the start and end of each stage's row is the bubble, {bubble:.0%} of the step")
    return {"figure": fig, "axes": ax, "alt": alt}


def draw_straggler_step(schedule, healthy, straggler, k: int, *, slow: int, what: str = ""):
    """The first ``k`` steps of ``schedule`` as a Gantt chart per rank: each
    rank's transfers (``straggler.busy``) and its wait until the step ends,
    with the healthy run's end dashed. ``healthy`` and ``straggler`` are
    :func:`collectives_lib.book.scaling.rank_timeline` results; ``slow`` names the
    slow rank; ``what`` describes the run in the title.

    Returns ``{"figure", "axes", "alt"}``.
    """
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    K, P = straggler.busy.shape
    if isinstance(k, bool) or int(k) != k or not 0 <= k <= K:
        raise CollectivesError(f"k must be a whole number of steps in 0..{K}, got {k!r}")
    fig, ax = new_figure(height=3.2, pyplot=False)
    scale, unit = time_unit(straggler.total)      # the axis in the unit the run's length reads in
    u = 1 / scale
    for j in range(k):
        color = OP_COLORS["reduce" if schedule.steps[j].stage == "reduce-scatter" else "copy"]
        t0, dt = straggler.start[j] * u, straggler.step_times[j] * u
        for r in range(P):
            busy = straggler.busy[j, r] * u
            ax.broken_barh([(t0, busy)], (r - 0.38, 0.76), facecolors=color, edgecolor=EMPTY_COLOR, lw=0.5,
                           alpha=1.0 if j == k - 1 else 0.55)
            ax.broken_barh([(t0 + busy, dt - busy)], (r - 0.38, 0.76), facecolors=IDLE_COLOR,
                           edgecolor=FAINT_COLOR, hatch="///", lw=0)
        ax.axvline(t0 + dt, color=MUTED_COLOR, lw=0.6)
    ax.axvline(healthy.total * u, color=TEXT_COLOR, ls="--", lw=1.2)
    ax.set_yticks(range(P), [f"GPU {r}" + (" (slow)" if r == slow else "") for r in range(P)])
    ax.set_ylim(P - 0.4, -0.6)
    ax.set_xlim(0, straggler.total * u * 1.02)
    done = straggler.start[k - 1] + straggler.step_times[k - 1] if k else 0.0
    label_axes(ax, f"{what}{': ' if what else ''}{k} of {K} steps, {format_time(done)} elapsed",
               f"time ({unit})", None, tick_role="tick")
    legend(ax, [Patch(color=OP_COLORS["reduce"], label="reduce-scatter transfer"),
                Patch(color=OP_COLORS["copy"], label="all-gather transfer"),
                Patch(facecolor=IDLE_COLOR, edgecolor=FAINT_COLOR, hatch="///", label="waiting"),
                Line2D([], [], color=TEXT_COLOR, ls="--", lw=1.2, label="healthy run ends")],
           loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=4)
    alt = (f"Gantt chart of {k} of {K} steps of a collective on {P} GPUs with GPU {slow} slow: the GPUs "
           f"exchanging with it are busy longer and the rest wait")
    return {"figure": fig, "axes": ax, "alt": alt}
