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
    from .schedule import _written

    states = [s.copy() for s in replay_states(schedule)]
    R = schedule.num_ranks
    for after in range(1, len(states)):
        held = states[after].contrib[R:].copy()
        states[after].contrib[R:] = 0
        states[after].values[R:] = 0
        p, slots, _ = _written(schedule, after - 1)
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
