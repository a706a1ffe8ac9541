"""What an NVSwitch holds while it reduces: SHARP streamed chunk by chunk.

:func:`sharp_stream_animation` plays :func:`~collectives_lib.builders.innetwork.sharp_all_reduce_streamed`:
every step one chunk of ``V/N`` goes up from every GPU and is summed in the
switch while the previous chunk's sum comes down. The switch's row of the
buffers shows only the chunk it is summing in that step: a switch has no room
for the array, it forwards sums as they are finished.

Introduced in the chapter *Time collectives inside a GPU node*.
"""

from __future__ import annotations

from ..errors import CollectivesError
from ..topology import Switch
from .figure import new_figure
from .schedule import draw_schedule_step, replay_states, schedule_name, step_player


def in_flight_states(schedule):
    """The replayed states of a streamed switch schedule with each agent's row kept only
    for the slots the step just wrote into it (what the switch holds at that moment)."""
    from .schedule import written_slots

    states = [s.copy() for s in replay_states(schedule)]
    R = schedule.num_ranks
    for after in range(1, len(states)):
        held = states[after].contrib[R:].copy()
        states[after].contrib[R:] = 0
        states[after].values[R:] = 0
        p, slots, _ = written_slots(schedule, after - 1)
        keep = p >= R
        states[after].contrib[p[keep], slots[keep]] = held[p[keep] - R, slots[keep]]
    states[0].contrib[R:] = 0
    return states


def sharp_stream_animation(topology: Switch, *, fps: float = 1.2, title: str | None = None):
    """A player of the streamed SHARP all-reduce on an NVSwitch node (at most 16 GPUs):
    per step, the arrows of the chunk going up and the chunk coming down, and every
    buffer with the switch's row holding only the chunk in flight."""
    from ..builders.innetwork import sharp_all_reduce_streamed

    if not isinstance(topology, Switch) or topology.num_ranks > 16:
        raise CollectivesError(f"sharp_stream_animation draws a switch of at most 16 GPUs, not {topology!r}")
    schedule = sharp_all_reduce_streamed(topology.num_ranks)
    states = in_flight_states(schedule)

    def frame(i):
        fig, _ = new_figure(0, 0, pyplot=False, height=min(4.6, 1.3 + 0.2 * schedule.num_participants))
        draw_schedule_step(schedule, None if i == 0 else i - 1, topology, ax=fig, states=states)
        return fig

    n = topology.num_ranks
    return step_player(schedule, frame, fps=fps,
                       alt=(f"Animation of a SHARP all-reduce on {n} GPUs, one chunk of V/{n} per step: "
                            "each step every GPU sends one chunk up into the switch, which holds only "
                            "that chunk's running sum, while the previous chunk's sum comes down"),
                       title=title or f"{schedule_name(schedule)} over {n} GPUs, chunk by chunk")


def draw_algorithm_sweep(sizes, curves, crossings=None, ax=None, *, title: str = "",
                         xlabel: str = "V, array size (bytes)", floor: float = 1e-7):
    """Time against size on log-log axes, one curve per algorithm, with a vertical line and a
    size label where each algorithm crosses the first one (``crossings``: label -> bytes).

    ``curves`` maps a label to one time per size (seconds). Styles come from
    :data:`~collectives_lib.draw.style.ALGORITHM_STYLES`, in order. Introduced in the
    chapter *Time collectives inside a GPU node* (rings, trees and SHARP over size).
    Returns ``{"lines", "crossings", "figure", "axes", "alt"}``.
    """
    from matplotlib.ticker import FuncFormatter

    from ..units import format_bytes, format_time
    from .figure import axes_for, grid, label_axes, legend
    from .style import ALGORITHM_STYLES, FONT

    if not curves:
        raise CollectivesError("draw_algorithm_sweep needs at least one curve")
    fig, ax = axes_for(ax, 3.6 if ax is None else None)
    lines, marks = [], []
    crossings = crossings or {}
    for k, (label, times) in enumerate(curves.items()):
        color, ls, _ = ALGORITHM_STYLES[k % len(ALGORITHM_STYLES)]
        lines += ax.plot(sizes, times, color=color, ls=ls, lw=2, label=label)
        x = crossings.get(label)
        if x:
            marks.append(ax.axvline(x, color=color, lw=0.8, ls=ls))
            ax.text(x, floor * 1.5, f" {format_bytes(x)}", rotation=90, color=color, va="bottom", ha="right",
                    fontsize=FONT["annotation"])
    top = max(max(t) for t in curves.values())
    ax.set(xscale="log", yscale="log", ylim=(floor, top * 3), xlim=(sizes[0], sizes[-1]))
    ax.minorticks_off()
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: format_bytes(v)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: format_time(v)))
    label_axes(ax, title, xlabel, "time", tick_role="tick")
    grid(ax)
    legend(ax, loc="upper left")
    alt = (f"Log-log plot of time against size for {', '.join(curves)}; vertical lines mark the sizes "
           "where each crosses the first.")
    return {"lines": lines, "crossings": marks, "figure": fig, "axes": ax, "alt": alt}
