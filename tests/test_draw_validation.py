"""draw_measured_vs_models (chapter Measure it yourself) draws headless: bus bandwidth
from times with the collective's factor, the median error, an empty panel when
nobody has published a run, and clear errors for bad input."""

from __future__ import annotations

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

from collectives_lib import draw  # noqa: E402
from collectives_lib.errors import CollectivesError  # noqa: E402

pytestmark = pytest.mark.filterwarnings("error")

SIZES = 2.0 ** np.arange(10, 31, 4)
MEASURED = 20e-6 + SIZES / 100e9


def test_busbw_uses_the_collective_factor_and_reports_the_median_error():
    art = draw.draw_measured_vs_models("all_reduce", 8, SIZES, MEASURED, nccl=MEASURED * 1.1,
                                       ideal=MEASURED / 2)
    # all-reduce busbw = size / time x 2 (N-1) / N = 1.75 x algbw on 8 ranks
    got = art["measured"].get_ydata()
    assert got == pytest.approx(SIZES / MEASURED * 1.75 / 1e9)
    assert art["median_error"] == pytest.approx(0.1)
    assert len(art["models"]) == 2
    assert "+10%" in art["axes"].get_title()


def test_no_run_gives_an_empty_panel():
    art = draw.draw_measured_vs_models("all_to_all", 8, [], [])
    assert art["measured"] is None and "no published" in art["axes"].texts[0].get_text()


@pytest.mark.parametrize("kw", [dict(num_ranks=1), dict(nccl=MEASURED[:-1]), dict(measured=-MEASURED)])
def test_bad_input_is_refused(kw):
    args = dict(num_ranks=8, measured=MEASURED) | kw
    with pytest.raises(CollectivesError):
        draw.draw_measured_vs_models("all_reduce", args.pop("num_ranks"), SIZES, args.pop("measured"), **args)
