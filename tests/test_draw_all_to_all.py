"""The all-to-all drawings of the chapter *All-to-all* draw headless and say what they show."""
import matplotlib
import numpy as np
import pytest

import collectives_lib as cl

matplotlib.use("Agg")
W = 45e9


@pytest.mark.parametrize("n, wide", [(4, False), (8, True)])
def test_frame_puts_the_grids_below_the_ring_from_seven_ranks_on(n, wide):
    ring = cl.Ring(n, bandwidth=W, latency=1e-6)
    sched = cl.build("all_to_all", ring, "bidirectional_ring")
    fig = cl.draw.all_to_all_frame(sched, ring, 1, title="t")
    grids = [a for a in fig.get_axes() if a.get_title().startswith("rank ")]
    assert len(grids) == n
    fig.canvas.draw()
    width = grids[0].get_window_extent().width          # pixels at the book's 700-px width
    assert width / n > 14                               # a block is at least 14 px wide
    ring_ax = [a for a in fig.get_axes() if a.get_title() == f"step 1 of {sched.num_steps}"]
    assert len(ring_ax) == 1
    top_of_grids = max(a.get_window_extent().y1 for a in grids)
    assert (ring_ax[0].get_window_extent().y0 >= top_of_grids) == wide


def test_frame_rejects_a_frame_past_the_end():
    sched = cl.build("all_to_all", 4, "bidirectional_ring")
    with pytest.raises(cl.CollectivesError, match=r"frame must be 0\.\.2, got 3"):
        cl.draw.all_to_all_frame(sched, cl.Ring(4, bandwidth=W), 3, title="t")


def test_animation_has_one_frame_per_step_and_the_start():
    ring = cl.Ring(4, bandwidth=W, latency=1e-6)
    sched = cl.build("all_to_all", ring, "bidirectional_ring")
    p = cl.draw.all_to_all_animation(sched, ring, "t", [f"c{i}" for i in range(sched.num_steps + 1)])
    assert len(p.frames) == sched.num_steps + 1 and p.captions[-1] == "c2"


def test_summary_table_and_figure():
    pod = cl.tpu_pod("v5e")
    rows = cl.analysis.torus_summary(pod, 2**30)
    table = cl.draw.summary_markdown(rows)
    assert table.count("\n") == 5 and "**all-to-all**" in table and "1/8 · V/W" in table
    art = cl.draw.draw_collective_summary(pod, rows, 2**30)
    assert len(art["cells"].get_paths()) == 16
    assert "ideal link model" in art["axes"].get_title()
    with pytest.raises(cl.CollectivesError, match="16 rows"):
        cl.draw.draw_collective_summary(pod, rows[:4], 2**30)


def test_moe_skew_draws_two_curves_and_names_the_model():
    ring = cl.Ring(4, bandwidth=W, latency=1e-6)
    m = np.full((4, 4), 1e6)
    r = cl.simulate(cl.build("all_to_all", ring, "bidirectional_ring", matrix=m), ring, int(m.sum()) // 4)
    curve = {a: ([0.0, 1.0], [r.time, 2 * r.time], r.time) for a in ("bidirectional_ring", "direct")}
    art = cl.draw.draw_moe_skew(r, curve, 0.0, exchange="dispatch", top_k=1, topology=ring)
    assert len(art["lines"]) == 2
    assert "ideal link model" in art["figure"]._suptitle.get_text()
