"""The latency drawings of the chapter *TPU cluster topology* draw headless."""
import matplotlib
import numpy as np
import pytest

import collectives_lib as cl

matplotlib.use("Agg")


def test_front_player_has_one_frame_per_hop_and_times_the_last():
    s44 = cl.tpu_slice("v5e", "4x4")
    routes = s44.disjoint_paths((3, 3), (0, 0))
    p = cl.draw.route_front_animation(s44, (3, 3), (0, 0), routes, alpha=1e-6, time_with=1.006e-3,
                                      time_without=1e-3, title="t")
    assert len(p.frames) == 6                       # six hops from corner to corner
    assert "crossed 1 link, 1 µs" in p.captions[0]
    assert "6 µs of hops plus 1 ms" in p.captions[-1]


def test_latency_share_explorer_marks_the_share():
    sizes = np.logspace(2, 9, 8)
    curves = {"a": (sizes / 1e9 + 1e-6, sizes / 1e9), "b": (sizes / 2e9 + 2e-6, sizes / 2e9)}
    art = cl.draw.draw_latency_share(curves, sizes, "a", 1e5, full=1e-4 + 1e-6, bandwidth_only=1e-4,
                                     yardstick=45e3)
    assert len(art["lines"]) == 2 and art["lines"][0].get_linewidth() > art["lines"][1].get_linewidth()
    assert art["axes"][1].get_title() == "of which latency is 1%"
    assert "ideal link model" in art["figure"]._suptitle.get_text()
    key = art["axes"][0].get_legend()          # the yardstick's dotted line passes behind it
    assert key.get_frame_on() and key.get_frame().get_alpha() == 1.0
    with pytest.raises(cl.CollectivesError, match="route must be one of a, b"):
        cl.draw.draw_latency_share(curves, sizes, "c", 1e5, full=1.0, bandwidth_only=0.5, yardstick=1.0)
