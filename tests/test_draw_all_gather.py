"""The all-gather explorer of the chapter *Inside all-gather* draws headless."""
import matplotlib
import numpy as np
import pytest

import collectives_lib as cl

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def data():
    return cl.analysis.all_gather_explorer_data(45e9, 1e-6, ns=(4, 16), sizes=np.logspace(3, 9, 7), marks=(4e6,))


def test_explorer_draws_four_curves_with_integer_ticks(data):
    art = cl.draw.draw_all_gather_explorer(data, 4, 4e6, "2D torus, both axes")
    assert len(art["lines"]) == 4
    assert [ln.get_linewidth() for ln in art["lines"]] == [1.3, 1.3, 1.3, 2.4]   # the chosen one bold
    art["figure"].canvas.draw()
    bx = art["axes"][1]
    for ticks in (bx.get_xticks(), bx.get_yticks()):
        assert np.allclose(ticks, np.round(ticks))                              # no half-integer ticks
    assert "ideal link model" in art["figure"]._suptitle.get_text()
    assert art["image"].get_array().shape == (4, 8)                            # 2 parts x 4 blocks


def test_arrivals_of_the_2d_schedule_put_part_0_first():
    sched = cl.build("all_gather", cl.Torus((2, 2), bandwidth=1e9), "multi_axis")
    arr = cl.analysis.all_gather_arrivals(sched)
    assert arr.shape == (4, 8)
    assert (np.diag(arr[:, :4]) == 0).all() and (np.diag(arr[:, 4:]) == 0).all()   # own blocks at start


def test_explorer_names_what_it_lacks(data):
    with pytest.raises(cl.CollectivesError, match="no explorer data for N = 64"):
        cl.draw.draw_all_gather_explorer(data, 64, 4e6, "chain")
    with pytest.raises(cl.CollectivesError, match="no mark at 1000 bytes"):
        cl.draw.draw_all_gather_explorer(data, 4, 1000, "chain")
    with pytest.raises(cl.CollectivesError, match="square number of chips, got 8"):
        cl.analysis.all_gather_topology("multi_axis", 8, 1e9, 0.0)
