"""draw_ddp_timeline (chapter Why communication decides scaling) draws headless: one
bar per layer and per bucket, and a clear error for what is not a timeline."""

from __future__ import annotations

import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

import collectives_lib as cl  # noqa: E402
from collectives_lib import draw  # noqa: E402
from collectives_lib.errors import CollectivesError  # noqa: E402

pytestmark = pytest.mark.filterwarnings("error")


def test_one_bar_per_layer_and_bucket():
    cluster = cl.GpuCluster("dgx-h100", 2)
    tl = cl.workloads.ddp_backward(cluster, [10e6] * 6, 1e-3, bucket_bytes=20e6)
    art = draw.draw_ddp_timeline(tl)
    assert len(art["compute"].get_paths()) == 6
    assert len(art["buckets"].get_paths()) == 3
    assert "exposed" in art["axes"].get_title()


def test_not_a_timeline_is_refused():
    with pytest.raises(CollectivesError):
        draw.draw_ddp_timeline(None)
