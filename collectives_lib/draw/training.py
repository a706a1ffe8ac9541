"""Training steps in time: the backward pass of data parallelism with its
gradient all-reduces in buckets (:func:`collectives_lib.book.workloads.ddp_backward`).

Introduced in the chapter *Why communication decides scaling*.
"""

from __future__ import annotations

from ..errors import CollectivesError
from ..units import format_time
from .figure import label_axes, legend, new_figure
from .style import EMPTY_COLOR, FONT, IDLE_COLOR, OP_COLORS, STAGE_COLORS, TEXT_COLOR, text_on


def draw_ddp_timeline(timeline, ax=None, *, title: str | None = None):
    """Three rows against time: the backward pass layer by layer (last layer
    first), the bucketed all-reduces that overlap it, and, for comparison, one
    all-reduce of every gradient after the backward pass. A dashed line marks
    where the backward pass ends; what the buckets run past it is exposed.

    ``timeline`` is a :class:`~collectives_lib.book.workloads.DdpTimeline`. Layers
    are numbered from 1 in forward order. Returns ``{"compute": bars,
    "buckets": bars, "figure", "axes", "alt"}``.
    """
    from matplotlib.patches import Patch

    if not getattr(timeline, "compute", None) or not getattr(timeline, "buckets", None):
        raise CollectivesError("draw_ddp_timeline needs a DdpTimeline from workloads.ddp_backward")
    if ax is None:
        fig, ax = new_figure(height=2.8, pyplot=False)
    else:
        fig = ax.figure
    scale, unit = (1e3, "ms") if timeline.unbucketed_end >= 1e-3 else (1e6, "µs")
    compute_color, comm_color = STAGE_COLORS[0], OP_COLORS["reduce"]
    compute = ax.broken_barh([(s * scale, (e - s) * scale) for _, s, e in timeline.compute], (2.6, 0.8),
                             facecolors=compute_color, edgecolor=EMPTY_COLOR, lw=0.8)
    for layer, s, e in timeline.compute:
        ax.text((s + e) / 2 * scale, 3.0, str(layer + 1), ha="center", va="center",
                size=FONT["detail"], color=text_on(compute_color))
    buckets = ax.broken_barh([(b.start * scale, (b.end - b.start) * scale) for b in timeline.buckets],
                             (1.6, 0.8), facecolors=comm_color, edgecolor=EMPTY_COLOR, lw=0.8)
    for k, b in enumerate(timeline.buckets):
        ax.text((b.start + b.end) / 2 * scale, 2.0, f"b{k + 1}", ha="center", va="center",
                size=FONT["detail"], color=text_on(comm_color))
    one = timeline.unbucketed_end - timeline.backward_end
    ax.broken_barh([(0, timeline.backward_end * scale)], (0.6, 0.8), facecolors=IDLE_COLOR,
                   edgecolor=compute_color, lw=0.8)
    ax.text(timeline.backward_end / 2 * scale, 1.0, "waits for the whole backward pass", ha="center",
            va="center", size=FONT["detail"], color=TEXT_COLOR)
    ax.broken_barh([(timeline.backward_end * scale, one * scale)], (0.6, 0.8), facecolors=comm_color,
                   edgecolor=EMPTY_COLOR, lw=0.8)
    ax.axvline(timeline.backward_end * scale, color=TEXT_COLOR, ls="--", lw=1)
    ax.set_yticks([3.0, 2.0, 1.0], ["backward compute", "bucketed all-reduce", "one all-reduce at end"])
    ax.set_ylim(0.3, 3.7)
    ax.set_xlim(0, max(timeline.end, timeline.unbucketed_end) * scale * 1.02)
    ax.tick_params(axis="both", labelsize=FONT["tick"])
    label_axes(ax, title or (f"Backward pass with bucketed all-reduces:\n{format_time(timeline.exposed)} "
                             f"exposed, against {format_time(one)} unbucketed"),
               f"time from the start of the backward pass ({unit})", None)
    legend(ax, [Patch(color=compute_color, label="layer's backward (number: layer)"),
                Patch(color=comm_color, label="all-reduce (b: bucket)")],
           loc="upper center", bbox_to_anchor=(0.5, -0.28), ncol=2)
    alt = (f"Timeline of a backward pass over {len(timeline.compute)} layers, last layer first, with "
           f"{len(timeline.buckets)} bucketed all-reduces running beneath it as soon as each bucket is "
           f"full; only {format_time(timeline.exposed)} of communication is left after the backward pass, "
           f"against {format_time(one)} for one all-reduce of every gradient at the end")
    return {"compute": compute, "buckets": buckets, "figure": fig, "axes": ax, "alt": alt}
