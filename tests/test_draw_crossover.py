"""draw_size_crossover (chapter Depth, trees and the network roofline) draws headless:
one line per algorithm, the fastest at the marked size, and clear errors for bad input."""

from __future__ import annotations

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

from collectives_lib import draw  # noqa: E402
from collectives_lib.errors import CollectivesError  # noqa: E402

pytestmark = pytest.mark.filterwarnings("error")

SIZES = np.geomspace(1e3, 1e9, 13)
# latency + bytes / bandwidth: "tree" 10 us + V / 50 GB/s, "ring" 100 us + V / 200 GB/s;
# equal where 90e-6 = V (1/50e9 - 1/200e9), V = 6 MB
CURVES = {"tree": 10e-6 + SIZES / 50e9, "ring": 100e-6 + SIZES / 200e9}


def test_one_line_per_curve_and_the_fastest_at_each_end():
    small = draw.draw_size_crossover(SIZES, CURVES, 1e3, crossover=6e6, title="toy model")
    big = draw.draw_size_crossover(SIZES, CURVES, 1e9)
    assert len(small["lines"]) == 2
    assert small["fastest"] == "tree" and big["fastest"] == "ring"
    assert "toy model" in small["axes"].get_title()
    assert "6 MB" in " ".join(t.get_text() for t in small["axes"].texts)


@pytest.mark.parametrize("sizes, curves, size", [
    (SIZES[::-1], CURVES, 1e3),                              # not increasing
    (SIZES, {"tree": CURVES["tree"][:-1]}, 1e3),             # wrong length
    (SIZES, {"tree": -CURVES["tree"]}, 1e3),                 # negative times
    (SIZES, CURVES, 1e12),                                   # size off the axis
    (SIZES, {}, 1e3),                                        # nothing to draw
])
def test_bad_input_is_refused(sizes, curves, size):
    with pytest.raises(CollectivesError):
        draw.draw_size_crossover(sizes, curves, size)
