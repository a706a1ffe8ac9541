"""Pipelines: a message crossing links store-and-forward versus in packets (a
drawing and a player), and the stages of a workload as bars.
"""

from __future__ import annotations

import numpy as np

from ..errors import CollectivesError
from ..units import format_time
from .style import (FAINT_COLOR, FONT, MUTED_COLOR, NODE_COLOR, NODE_EDGE_COLOR, OP_COLORS, STAGE_COLORS,
                    STAGE_HATCHES, TEXT_COLOR, rank_color, text_on)
from .figure import axes_for, blank, grid, new_figure, player_frames, time_unit
from .layout import packet_places


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
    fig, ax = axes_for(ax, 2.9 if ax is None else None)
    gap = 1.0
    rows = ((gap, False, f"whole message per hop (store-and-forward): {total} slots"),
            (0.0, True, f"pipelined in packets (towards cut-through): {hops + packets - 1} slots"))
    step = min(0.14, 0.8 / packets)          # x spacing of queued packets, in link lengths
    xs, ys, colors, segs, seg_busy, labels, finished = [], [], [], [], [], [], []
    for y, pipelined, title in rows:
        places = packet_places(hops, packets, slot, pipelined)
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
                labels.append(ax.text(x, yy, str(k + 1), ha="center", va="center", fontsize=FONT["small"],
                                      color=text_on(rank_color(k)), zorder=6))
        for h in range(hops):
            segs.append([(h, y), (h + 1, y)])
            seg_busy.append(h in busy)
        finished.append(bool(slot > 0 and all(p == ("node", hops) for p in places)))
        labels.append(ax.text(-0.45, y + 0.5, title + ("  \u2713 delivered" if finished[-1] else ""),
                              fontsize=FONT["subheading"], color=TEXT_COLOR, va="bottom"))
        for node in range(hops + 1):
            name = "source" if node == 0 else ("destination" if node == hops else f"switch {node}")
            labels.append(ax.text(node, y - 0.14, name, ha="center", va="top", fontsize=FONT["annotation"],
                                  color=MUTED_COLOR))
    links = LineCollection(segs, colors=[OP_COLORS["copy"] if b else FAINT_COLOR for b in seg_busy],
                           linewidths=[4.0 if b else 1.5 for b in seg_busy], zorder=1)
    ax.add_collection(links)
    node_x = np.tile(np.arange(hops + 1), 2)
    node_y = np.repeat([gap, 0.0], hops + 1)
    ax.scatter(node_x, node_y, s=150, c=NODE_COLOR, edgecolors=NODE_EDGE_COLOR, linewidths=0.8, zorder=3)
    pc = ax.scatter(xs, ys, s=170, marker="s", c=colors, edgecolors="white", linewidths=0.6, zorder=5)
    ax.set_xlim(-0.5, hops + 0.5)
    ax.set_ylim(-0.4, gap + 0.75)
    blank(ax)
    when = "start" if slot == 0 else (f"after {total} slots" if slot > total else f"time slot {slot}")
    ax.set_title(f"A message of {packets} packets crossing {hops} links: {when} "
                 f"(one slot = one packet over one link)", fontsize=FONT["heading"])
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
    from ..book.explore import animation

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

    return animation(player_frames(frame), total + 2, fps=fps, captions=caption,
                     alt=f"Animation of a {packets}-packet message crossing {hops} links, store-and-forward "
                         f"against pipelined", title=title or "A message crossing links, slot by slot")


def _bound_mark(ax, bound: float, scale: float, label: str, backing) -> None:
    """The bound of :func:`draw_pipeline`: dashes over the two bars that time the whole job
    (the bound is the job's, not a stage's), its words over the dashes' end in the row kept
    for them under the line between stages and totals, so no line crosses them."""
    ax.plot([bound / scale] * 2, [-0.5, 1.5], color=MUTED_COLOR, lw=1.2, ls="--", zorder=4)
    ax.text(bound / scale, 1.55, f"{label} {format_time(bound)}", ha="center", va="bottom",
            fontsize=FONT["annotation"], color=MUTED_COLOR, zorder=5, bbox=backing)


def draw_pipeline(pipeline, ax=None, *, title: str | None = None, chunks: int | None = None,
                  bound: float | None = None, bound_label: str = "lower bound"):
    """The stages of a :class:`~collectives_lib.book.workloads.Pipeline` as bars, slowest marked.

    One horizontal bar per stage (in :data:`STAGE_COLORS`, labelled with its
    time and what it moves), then two bars that combine them: the stages one
    after another (stacked) and streamed, when they overlap and the busiest
    resource sets the time (with ``chunks``, the pipelined time for that many
    chunks instead). Stages that share a resource (an ICI reduce-scatter and
    an ICI all-gather on the same links) cannot overlap: the streamed bar is
    then stacked from them, and every stage on the busiest resource is
    outlined. ``bound`` (seconds) draws a dashed vertical line, labelled
    ``bound_label``, that no bar of a real schedule may pass below. Linear
    time axis in the unit that suits the longest bar.

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
    busiest = getattr(pipeline, "busiest", None)
    on_busiest = [st for st in stages if getattr(st, "uses", st.name) == busiest] if busiest else [neck]
    shared = len(on_busiest) > 1
    if bound is not None and not (np.isfinite(bound) and bound > 0):
        raise CollectivesError(f"bound must be a positive time in seconds, got {bound!r}")
    K = len(stages)
    # with a bound its label gets a row of its own, under the line between stages and totals:
    # no line crosses a word (the bound's dashes stop under it, the grid runs behind white)
    lift = 0.5 if bound is not None else 0.0
    fig, ax = axes_for(ax, 1.0 + 0.36 * (K + 2) + lift * 0.5 if ax is None else None)
    scale, unit = time_unit(seq)
    y_stage = np.arange(K)[::-1] + 2.4 + lift
    backing = {"boxstyle": "square,pad=0.1", "fc": ax.get_facecolor(), "ec": "none"}
    bars = []
    for i, (st, y) in enumerate(zip(stages, y_stage)):
        color = STAGE_COLORS[i % len(STAGE_COLORS)]
        hot = any(st is h for h in on_busiest)
        b = ax.barh([y], [st.seconds / scale], height=0.7, color=color, hatch=STAGE_HATCHES[i % len(STAGE_HATCHES)],
                    edgecolor=TEXT_COLOR if hot else "white", linewidth=1.8 if hot else 0.5)
        bars.append(b)
        mark = ((f"  \u2190 {busiest}, the busiest" if shared else "  \u2190 bottleneck") if hot else "")
        label = f"  {format_time(st.seconds)}  ({st.describe()})" + mark
        if len(label) > 60:                     # a long label (a stage with a limit) takes two lines
            label = f"  {format_time(st.seconds)}{mark}\n  ({st.describe()})"
        ax.text(st.seconds / scale, y, label, va="center", ha="left", fontsize=FONT["tick"], color=TEXT_COLOR,
                fontweight="bold" if hot else "normal", bbox=backing, zorder=5)
    left = 0.0
    total = []
    for i, st in enumerate(stages):
        total.append(ax.barh([1.0], [st.seconds / scale], left=left, height=0.7,
                             color=STAGE_COLORS[i % len(STAGE_COLORS)], hatch=STAGE_HATCHES[i % len(STAGE_HATCHES)],
                             edgecolor="white", linewidth=0.5))
        left += st.seconds / scale
    ax.text(left, 1.0, f"  {format_time(seq)}", va="center", ha="left", fontsize=FONT["tick"], color=TEXT_COLOR,
            bbox=backing, zorder=5)
    sb = ax.barh([0.0], [streamed / scale], height=0.7, color=FAINT_COLOR, edgecolor=TEXT_COLOR, linewidth=1.0)
    if shared and chunks is None:               # the busiest resource's stages, one after another
        left = 0.0
        for st in on_busiest:
            i = stages.index(st)
            ax.barh([0.0], [st.seconds / scale], left=left, height=0.7, color=STAGE_COLORS[i % len(STAGE_COLORS)],
                    hatch=STAGE_HATCHES[i % len(STAGE_HATCHES)], edgecolor=TEXT_COLOR, linewidth=1.0)
            left += st.seconds / scale
    ax.text(streamed / scale, 0.0, f"  {format_time(streamed)}" + (f" (all on {busiest})" if shared and chunks is None
                                                                   else ""),
            va="center", ha="left", fontsize=FONT["tick"], color=TEXT_COLOR, bbox=backing, zorder=5)
    if chunks is not None:
        streamed_name = f"pipelined, {chunks} chunks"
    else:
        streamed_name = "streamed: busiest resource" if shared else "streamed: slowest stage"
    if bound is not None:
        _bound_mark(ax, bound, scale, bound_label, backing)
    ax.set_yticks(list(y_stage) + [1.0, 0.0])
    ax.set_yticklabels([st.name for st in stages] + ["one after another", streamed_name], fontsize=FONT["annotation"])
    ax.axhline(1.7 + lift, color=FAINT_COLOR, lw=0.8)
    ax.set_xlim(0, seq / scale * 1.9)
    ax.set_ylim(-0.6, y_stage[0] + 0.6)
    ax.set_xlabel(f"time ({unit})", fontsize=FONT["label"])
    ax.tick_params(labelsize=FONT["tick"])
    grid(ax, "x")
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    if title:
        ax.set_title(title, fontsize=FONT["heading"])
    alt = (f"Horizontal bars for {K} stages: "
           + "; ".join(f"{st.name} {format_time(st.seconds)}" for st in stages)
           + (f". {' and '.join(st.name for st in on_busiest)} share {busiest} and cannot overlap"
              if shared else f". The slowest is {neck.name}")
           + f". One after another they take {format_time(seq)}; "
           + (f"streamed, {format_time(streamed)}." if chunks is None else
              f"pipelined in {chunks} chunks, {format_time(streamed)}.")
           + (f" A dashed line marks the {bound_label}, {format_time(bound)}." if bound is not None else ""))
    return {"bars": bars, "total": total, "streamed": sb, "figure": fig, "axes": ax, "alt": alt}
