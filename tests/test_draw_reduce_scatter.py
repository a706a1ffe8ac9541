"""The reduce-scatter drawings of the chapter *Reduce-scatter and all-reduce* draw headless."""
import matplotlib
import numpy as np
import pytest

import collectives_lib as cl

matplotlib.use("Agg")


def test_explorer_box_stays_clear_of_the_curves():
    art = cl.draw.draw_reduce_scatter_explorer(cl.analysis.one_axis_curves(16, "bidirectional ring", 45e9, 1e-6), 2**30)
    fig, ax = art["figure"], art["axes"]
    fig.canvas.draw()
    box = art["box"].get_window_extent()
    for line in art["lines"]:
        xy = ax.transData.transform(line.get_xydata())
        inside = ((xy[:, 0] > box.x0) & (xy[:, 0] < box.x1) & (xy[:, 1] > box.y0) & (xy[:, 1] < box.y1))
        assert not inside.any(), line.get_label()
    assert "reduce-scatter: 11.2 ms" in art["box"].get_text()
    assert "ideal link model" in ax.get_title()


def test_curves_all_reduce_is_twice_reduce_scatter():
    c = cl.analysis.one_axis_curves(8, "chain", 45e9, 0.0)
    assert np.allclose(c["all_reduce"], 2 * c["reduce_scatter"])
    assert np.allclose(c["all_gather"], c["reduce_scatter"])
    with pytest.raises(cl.CollectivesError, match="kind must be one of"):
        cl.analysis.one_axis_curves(8, "torus", 45e9, 0.0)


def test_step_time_bars_one_per_step():
    pod = cl.tpu_pod("v5e")
    scheds = [cl.build("reduce_scatter", pod, a) for a in ("sequential_axes", "multi_axis")]
    labels = {"sequential_axes": ("y", "x"), "multi_axis": ("both", "swapped")}
    art = cl.draw.draw_stage_step_times([(s, cl.simulate(s, pod, 2**30)) for s in scheds], labels)
    assert [len(b) for b in art["bars"]] == [s.num_steps for s in scheds]
    assert "ideal link model" in art["figure"]._suptitle.get_text()
