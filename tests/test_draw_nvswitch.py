"""Drawings of the GPU chapters: SHARP streamed through the switch, rings through the
NVSwitch, and the NVL72 star's legend clear of its GPUs (drawn headless)."""

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

import collectives_lib as cl
from collectives_lib import draw
from collectives_lib.builders.innetwork import sharp_all_reduce_streamed
from collectives_lib.draw.layout import schedule_layout

NODE = cl.nvswitch_node("dgx-h100")


def test_streamed_sharp_is_a_correct_all_reduce_with_the_bytes_of_sharp():
    s = sharp_all_reduce_streamed(8)
    assert s.num_steps == 9
    cl.check(s)                               # raises if any rank's result or byte count is wrong
    streamed = cl.simulate(s, NODE, 2**30)
    whole = cl.simulate(cl.build("all_reduce", NODE, "sharp"), NODE, 2**30)
    up = NODE.link_between(0, NODE.switch_node)
    assert streamed.link_bytes[up] == pytest.approx(whole.link_bytes[up])   # V up, once


def test_streamed_sharp_refuses_one_rank():
    with pytest.raises(ValueError, match="at least 2 ranks, got 1"):
        sharp_all_reduce_streamed(1)


def test_switch_holds_only_the_chunk_in_flight():
    s = sharp_all_reduce_streamed(8)
    states = draw.in_flight_states(s)
    held = [int((st.contrib[8] > 0).sum()) for st in states]
    assert held == [0] + [1] * 8 + [0]
    assert (states[4].contrib[8] > 0).nonzero()[0].tolist() == [3]     # after step 4: chunk 4
    assert states[4].count()[8, 3] == 8                                 # with all 8 inputs summed


def test_sharp_stream_player_has_a_frame_per_step_and_refuses_big_switches():
    player = draw.sharp_stream_animation(NODE)
    assert len(player.frames) == 10
    with pytest.raises(cl.CollectivesError, match="at most 16 GPUs"):
        draw.sharp_stream_animation(cl.nvswitch_node("gb200-nvl72"))


def _ends(art):
    """(start, end) points of every arrow drawn."""
    return [(p.vertices[0], p.vertices[-1]) for p in art["arrows"].get_paths()]


def _nearest(point, positions):
    return int(np.argmin(np.hypot(*(positions - point).T)))


@pytest.mark.parametrize("algorithm, collective", [("ring", "all_reduce"), ("recursive_doubling", "all_gather"),
                                                   ("recursive_halving", "reduce_scatter")])
def test_switch_arrows_join_each_sender_to_its_receiver(algorithm, collective):
    s = cl.build(collective, NODE, algorithm)
    pos = schedule_layout(s, NODE).positions[:8]
    for step in range(s.num_steps):
        art = draw.draw_transfers(s, step, NODE)
        t = s.steps[step].traffic
        drawn = [(_nearest(a, pos), _nearest(b, pos)) for a, b in _ends(art)]
        assert drawn == list(zip(t.src.tolist(), t.dst.tolist()))
        assert "sender to its receiver" in art["alt"]


def test_recursive_doubling_steps_look_different_on_a_switch():
    s = cl.build("all_gather", NODE, "recursive_doubling")
    shapes = [np.round(np.concatenate([p.vertices for p in draw.draw_transfers(s, k, NODE)["arrows"].get_paths()]), 3)
              for k in range(s.num_steps)]
    assert not np.array_equal(shapes[0], shapes[1]) and not np.array_equal(shapes[1], shapes[2])
    # partners 1, 2 and 4 apart: the arrows get longer step by step
    def mean_length(k):
        return np.mean([np.hypot(*(b - a)) for a, b in _ends(draw.draw_transfers(s, k, NODE))])
    lengths = [mean_length(k) for k in range(3)]
    assert lengths[0] < lengths[1] < lengths[2]


def test_switch_arrows_name_the_blocks_they_carry():
    s = cl.build("all_gather", NODE, "recursive_doubling")
    art = draw.draw_transfers(s, 2, NODE)                        # step 3: half the array each
    carried = sorted(t.get_text() for t in art["labels"] if "-" in t.get_text())
    assert carried == ["0-3"] * 4 + ["4-7"] * 4
    ring = cl.build("all_reduce", NODE, "ring")
    first = {t.get_text() for t in draw.draw_transfers(ring, 0, NODE)["labels"][8:]}
    assert first == {str(b) for b in range(8)}                   # every block once, one per send
    plain = draw.draw_transfers(ring, 0)       # no topology: straight rank-to-rank arrows
    assert all(len(p.vertices) == 2 for p in plain["arrows"].get_paths())


def test_nvl72_legend_covers_no_gpu_label():
    fig, axes = draw.new_figure(1, 2, height=3.7)
    draw.draw_switch(NODE, ax=axes[0])
    art = draw.draw_switch(cl.nvswitch_node("gb200-nvl72"), ax=axes[1])
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    box = axes[1].get_legend().get_window_extent(r)
    assert not [t.get_text() for t in art["labels"] if box.overlaps(t.get_window_extent(r))]


def test_algorithm_sweep_draws_a_curve_per_algorithm_and_a_line_per_crossing():
    sizes = np.geomspace(1e3, 1e9, 7)
    art = draw.draw_algorithm_sweep(sizes, {"ring": sizes / 1e11 + 1e-5, "tree": sizes / 5e10 + 2e-6},
                                    {"tree": 3e5}, title="t")
    assert len(art["lines"]) == 2 and len(art["crossings"]) == 1
    assert art["crossings"][0].get_xdata()[0] == 3e5
    with pytest.raises(cl.CollectivesError, match="at least one curve"):
        draw.draw_algorithm_sweep(sizes, {})

