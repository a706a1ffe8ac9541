"""All-to-all drawings: the step-by-step player, the skew explorer and the summary table.

Introduced in the chapter *All-to-all: route tokens to experts on a TPU slice*
(``tpu_all_to_all``), which calls them in one line each.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..errors import CollectivesError
from ..units import format_bytes, format_rate, format_time
from .figure import grid, label_axes, legend, new_figure, player_frames, time_axis
from .schedule import draw_all_to_all_blocks, draw_transfers
from .style import FONT, MUTED_COLOR, OP_COLORS, PANEL_COLOR, PANEL_EDGE_COLOR, TEXT_COLOR

#: Column and row names of :func:`draw_collective_summary`.
SUMMARY_COLUMNS = {"ring": "one-way ring", "chain": "chain", "bidirectional_ring": "bidirectional ring",
                   "all_axes": "all axes at once"}
#: The column heads of the figure, names broken where a head is wider than its cell.
_SUMMARY_HEADS = {"ring": "one-way ring", "chain": "chain", "bidirectional_ring": "bidirectional\nring",
                  "all_axes": "all axes\nat once"}
SUMMARY_COLLECTIVES = {"all_gather": "all-gather", "all_to_all": "all-to-all",
                       "reduce_scatter": "reduce-scatter", "all_reduce": "all-reduce"}


def all_to_all_frame(schedule, topology, i: int, *, title: str, states=None):
    """Frame ``i`` of :func:`all_to_all_animation` (0: the start, ``k``: after step ``k``).

    Up to six ranks: the step's transfers on the left, one origin x destination
    grid per rank on the right. From seven ranks on the grids get the page's
    width: transfers on top, the grids below in two rows, so that each grid is
    about a quarter of the page wide.
    """
    n = schedule.group_size
    if not 0 <= i <= schedule.num_steps:
        raise CollectivesError(f"frame must be 0..{schedule.num_steps}, got {i}")
    wide = n > 6
    fig, _ = new_figure(0, 0, pyplot=False, height=6.4 if wide else 2.9)
    if wide:
        top, bottom = fig.subfigures(2, 1, height_ratios=[1, 1.45])
    else:
        top, bottom = fig.subfigures(1, 2, width_ratios=[1, 1.7])
    step = None if i == 0 else i - 1
    draw_transfers(schedule, step, topology, ax=top.subplots(), legend=False,
                   title="start" if i == 0 else f"step {i} of {schedule.num_steps}")
    draw_all_to_all_blocks(schedule, i, ax=bottom, states=states, ncols=-(-n // 2) if wide else None)
    fig.suptitle(title, fontsize=FONT["heading"])
    return fig


def all_to_all_animation(schedule, topology, title: str, captions, *, fps: float = 0.8):
    """A player of an all-to-all: each step's transfers and every rank's grid of blocks."""
    from ..book.explore import animation
    from ..replay import replay

    states = replay(schedule, elements=1)
    alt = (f"{title}: the transfers of each step and, for every chip, the blocks it holds by origin "
           "and destination, its column filling up")

    def frame(i):
        return all_to_all_frame(schedule, topology, i, title=title, states=states)

    return animation(player_frames(frame), schedule.num_steps + 1, captions=captions,
                     fps=fps, title=title, alt=alt)


def summary_coefficient(row) -> str:
    """A row of :func:`~collectives_lib.analysis.torus_summary` as a multiple of V/W."""
    f = Fraction(row.coefficient).limit_denominator(4096)
    return "V/W" if f == 1 else f"{f.numerator}/{f.denominator} · V/W"


def summary_markdown(rows) -> str:
    """:func:`~collectives_lib.analysis.torus_summary`'s rows as a Markdown table."""
    cols = [f"{SUMMARY_COLUMNS[r.column]} ({', '.join(r.axes)}; N = {r.num_ranks})" for r in rows[:4]]
    lines = ["| | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for i in range(0, len(rows), 4):
        cells = [f"{format_time(r.time)} = {summary_coefficient(r)}" if r.time is not None
                 else "n/a: no wraparound" for r in rows[i:i + 4]]
        lines.append(f"| **{SUMMARY_COLLECTIVES[rows[i].collective]}** | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def draw_collective_summary(topology, rows, nbytes, *, name: str | None = None):
    """The summary table as a figure: four collectives by four ways of running them.

    ``rows`` are :func:`~collectives_lib.analysis.torus_summary`'s (ideal link
    model, throughput-bound). Returns ``{"figure", "axes", "cells", "alt"}``.
    """
    from matplotlib.collections import PolyCollection

    if len(rows) != 16:
        raise CollectivesError(f"the summary has 16 rows (4 collectives x 4 columns), got {len(rows)}")
    fig, ax = new_figure(height=4.1, pyplot=False)
    ax.set_axis_off()
    # every word at least 9 pt: the explorer shows the figure 700 px wide, 1.39 px a point
    ax.set(xlim=(-0.05, 5.05), ylim=(-4.08, 1.05))
    boxes, faces = [], []
    for j, r in enumerate(rows[:4]):
        ax.text(1.55 + j * 0.96, 0.06, f"{_SUMMARY_HEADS[r.column]}\naxis {', '.join(r.axes)}, N = {r.num_ranks}",
                ha="center", va="bottom", fontsize=FONT["label"], color=TEXT_COLOR, linespacing=1.25)
    for i in range(4):
        ax.text(0.5, -0.5 - i, SUMMARY_COLLECTIVES[rows[4 * i].collective], ha="center", va="center",
                fontsize=FONT["label"], weight="bold", color=TEXT_COLOR)
        for j, r in enumerate(rows[4 * i:4 * i + 4]):
            x, y = 1.55 + j * 0.96, -0.5 - i
            boxes.append([(x - 0.45, y - 0.44), (x + 0.45, y - 0.44), (x + 0.45, y + 0.44), (x - 0.45, y + 0.44)])
            faces.append(PANEL_COLOR if r.time is not None else "white")
            if r.time is None:
                ax.text(x, y, "n/a: no\nwraparound", ha="center", va="center",
                        fontsize=FONT["label"], color=TEXT_COLOR, style="italic")
            else:
                ax.text(x, y + 0.15, format_time(r.time), ha="center", va="center", fontsize=FONT["title"] + 1,
                        weight="bold", color=TEXT_COLOR)
                ax.text(x, y - 0.2, "= " + summary_coefficient(r), ha="center", va="center",
                        fontsize=FONT["label"], color=TEXT_COLOR)
    cells = PolyCollection(boxes, facecolors=faces, edgecolors=PANEL_EDGE_COLOR, linewidths=0.8, zorder=0)
    ax.add_collection(cells)
    label = name or "x".join(map(str, topology.dims))
    ax.set_title(f"TPU {label} slice, V = {format_bytes(nbytes, binary=True)}, W = "
                 f"{format_rate(topology.bandwidth)} one way: throughput-bound times (ideal link model)",
                 fontsize=FONT["heading"])
    alt = (f"Table of throughput-bound times of all-gather, reduce-scatter, all-reduce and all-to-all on a "
           f"TPU {label} slice for {format_bytes(nbytes, binary=True)}, on a one-way ring, a bidirectional "
           f"ring, a chain and all axes at once, each with its multiple of V/W (ideal link model).")
    return {"figure": fig, "axes": ax, "cells": cells, "alt": alt}


def draw_moe_skew(ring, curve, skew: float, *, exchange: str, top_k: int, topology):
    """The skew explorer: link busy times (left) and time against skew (right).

    ``ring`` is the lock-step ring's simulation at ``skew``; ``curve`` maps
    ``"bidirectional_ring"`` and ``"direct"`` to ``(skews, times, time_now)``.
    Ideal link model. Returns ``{"figure", "lines", "alt"}``.
    """
    from .cost import draw_link_loads

    fig, _ = new_figure(0, 0, pyplot=False, height=3.5)
    left, right = fig.subfigures(1, 2, width_ratios=[1.2, 1])
    draw_link_loads(topology, ring.link_busy, ax=left.subplots(), value_label="link busy time")
    ax = right.subplots()
    lines = []
    for algorithm, colour, ls, lw, label in (
            ("bidirectional_ring", OP_COLORS["reduce"], "-", 3.0, "ring, lock-step"),
            ("direct", OP_COLORS["copy"], (0, (4, 2)), 1.6, "routed (direct)")):
        skews, times, now = curve[algorithm]
        lines += ax.plot(skews, np.asarray(times) * 1e3, color=colour, ls=ls, lw=lw, label=label)
        ax.plot([skew], [now * 1e3], "o", color=colour, ms=6, zorder=5)
    base = curve["direct"][1][0]
    ax.text(0.03, 0.97, f"ring {format_time(ring.time)} ({ring.time / base:.2g}x uniform)\n"
                        f"routed {format_time(curve['direct'][2])}",
            transform=ax.transAxes, va="top", fontsize=FONT["annotation"], color=TEXT_COLOR)
    ax.set(xlim=(-0.05, max(skews) + 0.05), ylim=(0, None))
    label_axes(ax, xlabel="routing skew s", ylabel=f"{exchange} time (ms)")
    grid(ax)
    legend(ax, loc="lower right")
    fig.suptitle(f"MoE {exchange} on a 16-chip v5e axis, top-{top_k}, skew {skew:g} (ideal link model)",
                 fontsize=FONT["heading"])
    alt = (f"Left: a ring of chips with each link coloured by its busy time in the MoE {exchange} all-to-all "
           f"with top-{top_k} routing and skew {skew:g}. Right: {exchange} time against skew for the "
           f"lock-step ring schedule and for a routed exchange, with the current setting marked.")
    return {"figure": fig, "lines": lines, "alt": alt}


#: The all-to-all explorer's curves: key of the curves, colour, line style, width, label.
#: (key, colour, line style, width, label, marker size): the dashed and dotted curves' points
#: are hollow rings of two sizes, the solid ones' dots, so where times coincide (one-way ring
#: and all-gather at N = 64) all show
_A2A_CURVES = (("bidirectional ring", OP_COLORS["copy"], "-", 2.0, "all-to-all, bidirectional ring", 5),
               ("chain", OP_COLORS["reduce"], "-", 1.6, "all-to-all, chain", 5),
               ("one-way ring", TEXT_COLOR, (0, (4, 2)), 1.4, "all-to-all, one-way ring", 8),
               ("all_gather", MUTED_COLOR, (0, (1, 2)), 2.4, "all-gather, bidirectional ring", 12))


def draw_all_to_all_explorer(curves: dict, nbytes: float):
    """Time against size ``V`` (the total over the chips) of a balanced all-to-all on one
    axis of ``n`` chips, wired three ways, beside the all-gather of the same ``V`` on the
    bidirectional ring (``curves`` from :func:`collectives_lib.analysis.all_to_all_curves`);
    the chosen size marked, its times, the ring's lower bound and the all-gather's ratio
    in a box clear of the curves. Ideal link model.

    Introduced in the chapter *All-to-all* (its explorer).

    Returns ``{"figure", "axes", "lines", "box", "alt"}``.
    """
    from matplotlib.ticker import FuncFormatter

    sizes, n = curves["sizes"], curves["n"]
    if not nbytes > 0:
        raise CollectivesError(f"nbytes must be positive, got {nbytes!r}")
    at = int(np.argmin(abs(np.log(sizes) - np.log(nbytes))))
    fig, (ax, side) = new_figure(1, 2, height=3.6, pyplot=False, width_ratios=[2.6, 1])
    side.set_axis_off()                       # the legend and the chosen point's numbers
    lines = []
    for key, colour, ls, lw, label, ms in _A2A_CURVES:
        lines += ax.plot(sizes, curves[key], color=colour, ls=ls, lw=lw, label=label)
        hollow = not isinstance(ls, str)
        ax.plot([sizes[at]], [curves[key][at]], "o", ms=ms, zorder=4, color=colour,
                mfc="none" if hollow else colour, mew=1.6 if hollow else 1)
    ring, bound, ag = (curves[k][at] for k in ("bidirectional ring", "bound", "all_gather"))
    said = [f"at V = {format_bytes(sizes[at], binary=True)}, N = {n}", "all-to-all:",
            f"  bidirectional ring {format_time(ring)}", f"    (lower bound {format_time(bound)})",
            f"  chain {format_time(curves['chain'][at])}", f"  one-way ring {format_time(curves['one-way ring'][at])}",
            f"all-gather on the ring {format_time(ag)},", f"  {ag / ring:.2f} x the all-to-all"]
    box = side.text(0.0, 0.0, "\n".join(said), transform=side.transAxes, ha="left", va="bottom",
                    fontsize=FONT["annotation"], color=TEXT_COLOR, linespacing=1.4,
                    bbox=dict(boxstyle="round,pad=0.4", facecolor=PANEL_COLOR, edgecolor=PANEL_EDGE_COLOR))
    ax.set(xscale="log", yscale="log")
    label_axes(ax, f"{n} chips on one axis, W = {format_rate(curves['bandwidth'])} one way, "
                   f"{format_time(curves['latency'])} per hop", "V, total over the chips (bytes)", "time",
               tick_role="tick")
    ax.set_xticks([2.0 ** k for k in range(10, 35, 8)])
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: format_bytes(v, binary=True)))
    time_axis(ax.yaxis)
    ax.minorticks_off()
    grid(ax)
    legend(side, handles=lines, loc="upper left", bbox_to_anchor=(-0.05, 1.0))
    alt = (f"Log-log plot of time against total size for a balanced all-to-all on {n} chips wired as a "
           f"bidirectional ring, a chain and a one-way ring, and the all-gather of the same size on the "
           f"ring; at {format_bytes(sizes[at], binary=True)} the ring all-to-all takes {format_time(ring)}, "
           f"the all-gather {ag / ring:.2f} times as long.")
    return {"figure": fig, "axes": ax, "lines": lines, "box": box, "alt": alt}
