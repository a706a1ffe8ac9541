"""Tests for the chapter *TPU cluster topology*: the seed post's numbers, the
pipeline calculator (collectives_lib.book.workloads) held to hand formulas, its
failure messages, and the pipeline drawing."""

from __future__ import annotations

import numpy as np
import pytest

import collectives_lib as cl
from collectives_lib import hardware as hw
from collectives_lib.book.workloads import Pipeline, Stage, offloaded_matmul

V5E = hw.tpu("v5e")
W = float(V5E.ici_bandwidth)


# -- the seed post's topology facts ------------------------------------------------

@pytest.mark.parametrize("gen, chips", [("v4", 4096), ("v5p", 8960), ("v5e", 256)],
                         ids=["v4", "v5p", "v5e"])
def test_pod_chip_counts(gen, chips):
    assert cl.tpu_pod(gen).num_ranks == chips == hw.tpu(gen).pod_chips


def test_smallest_full_3d_torus_is_4x4x4():
    sizes = (1, 2, 4, 8)
    full = [s for s in ((x, y, z) for x in sizes for y in sizes for z in sizes)
            if all(cl.tpu_slice("v5p", s).wraparound)]
    assert min(full, key=np.prod) == (4, 4, 4)
    assert not any(cl.tpu_slice("v5p", "2x2x2").wraparound)
    assert all(cl.tpu_slice("v5p", "4x4x8").wraparound)
    assert cl.tpu_slice("v5e", "8x16").wraparound == (False, True)


def test_route_through_wraparound_is_3_hops():
    pod = cl.tpu_pod("v5e")
    src, dst = pod.rank_of((15, 15)), pod.rank_of((2, 15))
    assert pod.hops(src, dst) == 3
    assert [pod.coords(c) for c in pod.path(src, dst)] == [(15, 15), (0, 15), (1, 15), (2, 15)]
    assert cl.tpu_slice("v5e", "16x16", wraparound=False).hops(src, dst) == 13


def test_v5e_host_serves_2x4_chips_over_8_pcie_links():
    system = cl.tpu_system("v5e", "16x16")
    hosts = system.slice.hosts()
    assert system.num_hosts == 32 and all(len(h) == 8 for h in hosts)


def test_dcn_route_crosses_pcie_at_both_ends():
    two = cl.tpu_system("v5e", "16x16", num_slices=2)
    classes = [two.links.class_name(link) for link in two.route(0, 256)]
    assert classes == ["pcie", "dcn", "dcn", "pcie"]


def test_two_disjoint_paths_halve_the_send():
    s = cl.tpu_slice("v5e", "4x4")
    s0 = cl.tpu_slice("v5e", "4x4", latency=0.0)
    V = 2048 * 2048 * 2
    two = cl.build("send", s, "multipath", src=(3, 3), dst=(0, 0), paths="disjoint")
    one = cl.build("send", s, "direct", src=(3, 3), dst=(0, 0))
    assert cl.simulate(two, s0, V).time == pytest.approx(V / (2 * W))
    assert cl.simulate(two, s, V).time == pytest.approx(V / (2 * W) + 6e-6)
    assert cl.simulate(one, s0, V).time == pytest.approx(V / W)


def test_45_kb_cross_one_link_in_a_microsecond():
    assert cl.costs.crossover_size(float(hw.ICI_HOP_LATENCY), W) == pytest.approx(45e3)


# -- Pipeline ----------------------------------------------------------------------

def _pipe(*seconds):
    return Pipeline(tuple(Stage(f"s{i}", t, 1.0, "B", 1.0) for i, t in enumerate(seconds)))


def test_pipeline_times():
    p = _pipe(1.0, 3.0, 2.0)
    assert p.bottleneck.name == "s1"
    assert p.time_sequential == pytest.approx(6.0)
    assert p.time_streamed == pytest.approx(3.0)
    assert p.time_pipelined(1) == pytest.approx(6.0)
    assert p.time_pipelined(3) == pytest.approx(6.0 / 3 + 2 / 3 * 3.0)
    assert p.time_pipelined(10**9) == pytest.approx(3.0, rel=1e-6)
    assert p["s2"].seconds == 2.0


def test_pipeline_errors():
    with pytest.raises(cl.CollectivesError, match="at least one stage"):
        Pipeline(())
    with pytest.raises(cl.CollectivesError, match="no stage called 'x'; the stages are s0"):
        _pipe(1.0)["x"]
    with pytest.raises(cl.CollectivesError, match="chunks must be a whole number >= 1"):
        _pipe(1.0).time_pipelined(0)


# -- the offloaded matrix multiplication ---------------------------------------------

def test_offloaded_matmul_stages_match_hand_formulas():
    m = offloaded_matmul("v5e", "4x4")                 # the seed's bf16 example
    A = 2.0 ** 34 * 2
    shard = A / 16
    B = C = 2.0 ** 17 * 128 * 2
    assert m.matrix_bytes == A and m.shard_bytes == shard and m.num_hosts == 2
    pcie = shard / float(V5E.pcie_bandwidth) + float(cl.hardware.TPU_PCIE_LATENCY)
    assert m["PCIe: hosts to chips"].seconds == pytest.approx(pcie)
    bound = 15 / 16 * A / (2 * W)
    assert m.ici_options["lower bound"] == pytest.approx(bound)
    assert m.ici_options["disjoint"] == pytest.approx(bound, rel=1e-4)    # plus 6 hops of latency
    assert m.ici_options["dimension-order"] == pytest.approx(12 * shard / W, rel=1e-4)
    assert m["HBM to matrix units"].seconds == pytest.approx((A + B + C) / float(V5E.hbm_bandwidth))
    assert m["compute"].seconds == pytest.approx(2 * 2.0 ** 34 * 128 / float(V5E.peak_flops_bf16))
    assert m.bottleneck.name == "ICI: gather onto the root"
    assert m.time_streamed == m.ici_options["disjoint"]


def test_offloaded_matmul_does_not_fit_and_says_so():
    m = offloaded_matmul("v5e", "4x4")
    assert not m.fits_in_hbm
    assert m.hbm_overflow == pytest.approx(2.0 ** 35 / 16e9)
    assert m.streamed_footprint < m.hbm_capacity
    assert any("cannot be gathered whole" in n for n in m.notes)
    sb = offloaded_matmul("v5e", "4x4", dtype_bytes=1, rhs_cols=8)   # the Scaling Book's int8 version
    assert sb.matrix_bytes == 2 ** 34 and not sb.fits_in_hbm
    small = offloaded_matmul("v5e", "4x4", rows=1024, cols=1024)
    assert small.fits_in_hbm and not small.notes


def test_offloaded_matmul_routing_choice():
    m = offloaded_matmul("v5e", "4x4", ici_routing="dimension-order")
    assert m.ici_routing == "dimension-order"
    assert m["ICI: gather onto the root"].seconds == m.ici_options["dimension-order"]


@pytest.mark.parametrize("kwargs, message", [
    ({"ici_routing": "xy"}, "ici_routing must be 'dimension-order' or 'disjoint', got 'xy'"),
    ({"rows": 0}, "rows must be a whole number >= 1, got 0"),
    ({"rows": 3, "cols": 5, "dtype_bytes": 1}, "does not split into 16 equal shards"),
    ({"root": (4, 0)}, "not on the torus"),
], ids=["routing", "rows", "shards", "root"])
def test_offloaded_matmul_errors(kwargs, message):
    with pytest.raises(cl.CollectivesError, match=message.replace("(", r"\(").replace(")", r"\)")):
        offloaded_matmul("v5e", "4x4", **kwargs)


def test_gather_bound_is_the_bytes_the_root_lacks_over_its_links_in():
    """A corner chip of a v5e 4x4 slice (no wraparound) has two links in, an inner one four:
    the root lacks 15/16 of 16 GB, which can arrive only over those links."""
    s = cl.tpu_slice("v5e", "4x4")
    assert cl.lower_bound("gather", s, int(16e9), root=0).time == pytest.approx(15e9 / (2 * W))
    assert cl.lower_bound("gather", s, int(16e9), root=s.rank_of((1, 1))).time == pytest.approx(15e9 / (4 * W))


def test_str_names_the_bottleneck():
    text = str(offloaded_matmul("v5e", "4x4"))
    line = [ln for ln in text.splitlines() if "bottleneck" in ln]
    assert len(line) == 1 and line[0].startswith("ICI: gather onto the root")


# -- drawing -----------------------------------------------------------------------

def test_draw_pipeline_counts_bars():
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    m = offloaded_matmul("v5e", "2x4")
    art = cl.draw.draw_pipeline(m, chunks=8)
    art["figure"].canvas.draw()
    assert len(art["bars"]) == 4 and len(art["total"]) == 4
    assert "ICI: gather onto the root" in art["alt"] and "8 chunks" in art["alt"]
    with pytest.raises(cl.CollectivesError):
        cl.draw.draw_pipeline(type("P", (), {"stages": ()})())


def test_offloaded_matmul_names_the_hot_links_that_set_the_gather():
    # int8 A on the 16x16 torus, dimension-order: the root has 4 links in, but x-then-y
    # routes put almost everything on its 2 y links, so 17.1 GB at 180 GB/s takes
    # the time of the hot links, not 95 ms
    m = cl.workloads.offloaded_matmul("v5e", "16x16", dtype_bytes=1, ici_routing="dimension-order")
    g = m["ICI: gather onto the root"]
    assert m.ici_hot_links == 2
    assert g.rate == pytest.approx(4 * 45e9)
    assert g.seconds > 1.8 * g.work / g.rate
    assert "2 hot links carry" in g.describe() and "90 GB/s" in g.describe()
    assert g.seconds == pytest.approx(float(g.describe().split("carry ")[1].split(" GB")[0]) * 1e9
                                      / 90e9, rel=1e-2)
    split = cl.workloads.offloaded_matmul("v5e", "16x16", dtype_bytes=1, ici_routing="disjoint")
    assert split.ici_hot_links == 4 and "hot" not in split.stages[1].describe()
