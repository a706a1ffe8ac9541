"""draw_paired_times: two systems side by side (the GPU/TPU summary of gpu_across_nodes), headless."""

import matplotlib

matplotlib.use("Agg")

import pytest

import collectives_lib as cl
from collectives_lib import draw


def test_paired_times_draw_two_bars_per_category_and_check_lengths():
    art = draw.draw_paired_times(["all_gather", "all_reduce"], [("ring", 1e-3), ("ring", 2e-3)],
                                 [("ring", 3e-3), ("tree", 5e-3)], labels=("GPU", "TPU"))
    assert [len(b) for b in art["bars"]] == [2, 2]
    assert art["labels"][3].get_text() == "5 ms  tree"
    with pytest.raises(cl.CollectivesError, match="one time per category"):
        draw.draw_paired_times(["all_gather"], [("ring", 1e-3)], [])
