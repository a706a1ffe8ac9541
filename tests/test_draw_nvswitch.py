"""Drawings of the GPU chapters: SHARP streamed through the switch, rings through the
NVSwitch, and the NVL72 star's legend clear of its GPUs (drawn headless)."""

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

import collectives_lib as cl
from collectives_lib import draw
from collectives_lib.builders.innetwork import sharp_all_reduce_streamed

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


def test_ring_on_a_switch_goes_through_it():
    ring = cl.build("all_reduce", NODE, "ring")
    art = draw.draw_transfers(ring, 0, NODE)
    paths = art["arrows"].get_paths()
    assert len(paths) == 8
    for p in paths:                            # up a spoke to the box, across it, down another
        v = p.vertices
        assert len(v) == 4
        r = np.hypot(v[:, 0], v[:, 1])
        assert r[1] < 0.45 and r[2] < 0.45 and r[0] > 0.7 and r[3] > 0.7
    assert "around the switch" in art["alt"]
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

