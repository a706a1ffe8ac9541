"""draw_cut_sweep: the cut explorer of gpu_topology, drawn headless."""

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

import collectives_lib as cl
from collectives_lib import draw


def test_cut_sweep_draws_the_tent_and_marks_the_cut():
    su = cl.GpuCluster("dgx-h100", 32)
    g = su.gpus_per_node
    one = np.array([su.cut_bandwidth(range(k * g)) for k in range(1, 32)])
    art = draw.draw_cut_sweep(one, 2 * one, 8, boundary=None, title="one SU")
    assert len(art["curves"]) == 2
    x, y = art["marker"].get_data()
    assert x[0] == 8 and y[0] == pytest.approx(8 * su.system.node_injection / 1e12)   # min(8, 24) nodes
    over = draw.draw_cut_sweep(one, 2 * one, 16, over=one / 2, boundary=8)
    assert len(over["curves"]) == 3


def test_cut_sweep_refuses_a_cut_outside_the_units():
    with pytest.raises(cl.CollectivesError, match="1 <= k < 4"):
        draw.draw_cut_sweep([1.0, 2.0, 1.0], [2.0, 4.0, 2.0], 4)
