"""The drawings of chapter Why communication decides scaling draw headless and
refuse bad input with the library's error."""

from __future__ import annotations

import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

import collectives_lib as cl  # noqa: E402
from collectives_lib import draw  # noqa: E402
from collectives_lib.draw.scaling import percentile  # noqa: E402

pytestmark = pytest.mark.filterwarnings("error")


def test_amdahl_marks_the_achieved_speedup():
    art = draw.draw_amdahl(100e-6, 50e-6, 16)
    left, right = art["axes"]
    assert "2.67x" in " ".join(t.get_text() for t in right.texts)   # 150 / (100/16 + 50)
    assert "3x" in art["alt"]                                         # (C + S) / S


def test_slowest_tail_names_the_median():
    art = draw.draw_slowest_tail(8, 0.1)
    m = cl.scaling.slowest_median(8, sigma=0.1)
    assert f"{m:.3g}x" in art["axes"].texts[0].get_text()


def test_gpipe_draws_one_bar_per_task_and_the_bubble():
    art = draw.draw_gpipe(4, 8)
    # 4 idle rows + 2 x 4 x 8 forward and backward tasks
    assert len(art["axes"].collections) == 4 + 2 * 4 * 8
    assert "27%" in art["axes"].get_title()                            # (p-1)/(m+p-1) = 3/11


def test_straggler_step_and_its_errors():
    node = cl.nvswitch_node("dgx-h100")
    ring = cl.build("all_reduce", node, "ring")
    ok = cl.scaling.rank_timeline(ring, node, 2**20)
    slow = cl.scaling.rank_timeline(ring, node, 2**20, slowdown={5: 2.0})
    art = draw.draw_straggler_step(ring, ok, slow, 3, slow=5)
    assert "3 of 14 steps" in art["axes"].get_title()
    with pytest.raises(cl.CollectivesError):
        draw.draw_straggler_step(ring, ok, slow, 15, slow=5)


def test_percentile_keeps_two_digits_of_the_tail():
    assert percentile(0.917) == "p91.7"
    assert percentile(0.99975) == "p99.975"
    with pytest.raises(cl.CollectivesError):
        percentile(1.0)
