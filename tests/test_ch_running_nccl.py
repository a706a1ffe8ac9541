"""What the chapter *Running and reading NCCL* (notebooks/running_nccl.ipynb) states, held to
the published outputs and to NCCL's model, and its drawing, draw_busbw_prediction."""
from __future__ import annotations

from importlib import resources

import numpy as np
import pytest

import collectives_lib as cl

RAW = resources.files("collectives_lib") / "data/nccl_tests/raw"
DGXC = "dgxh100x8-nvls-allreduce-dgxc-bench"
GOOD, BAD = "h100x8-2node-ib-allreduce-issue309-gjaion", "h100x8-2node-ib-allreduce-issue290"
MOC = "h100x1-2node-roce-allreduce-nogdr-moc"


def outputs_with_an_average():
    out = []
    for path in sorted(RAW.iterdir(), key=lambda p: p.name):
        text = path.read_text()
        if "Avg bus bandwidth" not in text:
            continue
        try:
            parsed = cl.diagnose.parse_output(text)
        except cl.CollectivesError:
            continue
        h = parsed.header
        if parsed.avg_busbw is None or h.get("step_kind") != "factor" or not h.get("minBytes"):
            continue                                   # no header to say what the whole sweep was
        whole = round(np.log(h["maxBytes"] / h["minBytes"]) / np.log(h["step"])) + 1
        if len(parsed.rows) == whole:                  # vendors' excerpts keep a few rows only
            out.append(pytest.param(parsed, id=path.name.removesuffix(".txt")))
    return out


@pytest.mark.parametrize("parsed", outputs_with_an_average())
def test_the_average_line_is_the_mean_of_every_busbw_both_halves(parsed):
    """The chapter says nccl-tests' 'Avg bus bandwidth' is the plain mean of all busbw
    values, out-of-place and in-place: every published output with the line agrees,
    to the rounding of the printed values (and a table cut short may lack rows)."""
    values = [t.busbw for r in parsed.rows for t in (r.out_of_place, r.in_place) if t is not None]
    full = all(r.complete and r.out_of_place is not None and r.in_place is not None for r in parsed.rows)
    if not full:
        pytest.skip("a row lacks a half: the mean cannot be recomputed")
    assert np.mean(values) == pytest.approx(parsed.avg_busbw, rel=2e-3, abs=2e-3)


def test_the_annotated_row_recomputes_from_size_and_time():
    out = cl.diagnose(RAW / f"{DGXC}.txt").output
    n = len(out.devices)
    assert n == 8 and len({d.pid for d in out.devices}) == 8        # one process per GPU
    for r in out.rows:
        if r.nbytes < 2**20:                                      # printed with two decimals only
            continue
        for t in (r.out_of_place, r.in_place):
            algbw = r.nbytes / (t.time_us * 1e-6) / 1e9
            assert algbw == pytest.approx(t.algbw, rel=3e-3)
            assert algbw * 2 * (n - 1) / n == pytest.approx(t.busbw, rel=3e-3)


def test_the_chapters_three_diagnoses():
    assert cl.diagnose(RAW / f"{DGXC}.txt").verdict == "healthy"
    assert cl.diagnose(RAW / f"{BAD}.txt").verdict == "unknown"          # no device lines
    good = cl.diagnose(RAW / f"{GOOD}.txt", topology="dgx-h100:2")
    bad = cl.diagnose(RAW / f"{BAD}.txt", topology="dgx-h100:2")
    assert good.verdict == "healthy" and bad.verdict == "degraded"
    assert bad.finding("network") is not None
    # the degraded run plateaus near a third of the model; one missing NIC would cost far less
    assert 0.25 < 1 / bad.metrics.peak_ratio < 0.45


def test_the_log_of_a_run_without_gpudirect_rdma():
    d = cl.diagnose(RAW / f"{MOC}.txt")
    info = d.output.info
    assert info.gdr is False and info.nics == ("mlx5_5:1/RoCE",) and info.nnodes == 2
    assert dict(info.settings)["NCCL_IB_HCA"] == "mlx5_5"
    assert d.verdict == "degraded" and d.finding("gdr") is not None


def test_one_process_for_eight_gpus_has_a_launch_floor_at_small_sizes_only():
    node = cl.parse_topology("dgx-h100:1")
    sizes = [8, 2**16, 2**20, 2**24, 2**28]
    one = cl.models.sweep("all_reduce", node, sizes, model="nccl")
    g8 = cl.models.sweep("all_reduce", node, sizes, model="nccl", launch="gpus-per-process=8")
    floor = cl.nccl.measured.Launch(gpus_per_process=8).floor()
    assert g8[0].time == pytest.approx(floor) and g8[0].time > 2 * one[0].time
    assert g8[-1].time == pytest.approx(one[-1].time)                # large sizes: the same collective
    assert all(b.time >= a.time for a, b in zip(one, g8))


def test_the_settings_table_moves_the_way_the_chapter_says():
    two = cl.parse_topology("dgx-h100:2")
    size = 2**30
    base = cl.estimate("all_reduce", two, size, model="nccl")
    off = cl.estimate("all_reduce", two, size, model="nccl", nvls=False)
    ll = cl.estimate("all_reduce", two, size, model="nccl", protocol="LL")
    fewer = cl.estimate("all_reduce", cl.parse_topology("dgx-h100:2:nics=7x400"), size, model="nccl")
    assert base.nccl_algorithm == "NVLS_TREE" and off.nccl_algorithm == "RING"
    assert base.time < off.time < ll.time and base.time < fewer.time
    # seven NICs of eight: about seven eighths of the busbw (the network bounds it)
    full = cl.estimate("all_reduce", two, 16 * 2**30, model="nccl")
    less = cl.estimate("all_reduce", cl.parse_topology("dgx-h100:2:nics=7x400"), 16 * 2**30, model="nccl")
    assert less.busbw / full.busbw == pytest.approx(7 / 8, abs=0.03)
    for e in (base, off, ll, fewer):
        assert e.bound.time <= e.time


# -- draw_busbw_prediction ----------------------------------------------------------

def _sweep():
    topo = cl.parse_topology("dgx-h100:2")
    sizes = [2**k for k in range(10, 31, 2)]
    es = cl.models.sweep("all_reduce", topo, sizes, model="nccl")
    return topo, sizes, es


def test_busbw_prediction_draws_busbw_with_the_collectives_factor():
    pytest.importorskip("matplotlib")
    topo, sizes, es = _sweep()
    picks = [f"{e.nccl_algorithm}/{e.protocol}" for e in es]
    art = cl.draw.draw_busbw_prediction("all_reduce", topo.num_ranks, sizes, [e.time for e in es],
                                        [e.bound.time for e in es], picks=picks,
                                        measured=[e.time * 1.1 for e in es])
    y = art["model"].get_ydata()
    assert np.allclose(y, [e.busbw / 1e9 for e in es], rtol=1e-9)     # the estimate's own busbw
    assert np.all(art["bound"].get_ydata() >= y - 1e-9)                 # the bound is never below
    assert np.allclose(art["measured"].get_ydata(), y / 1.1)
    assert set(art["picks"]) == set(picks)
    assert sum(len(p.get_offsets()) for p in art["picks"].values()) == len(sizes)
    assert "NCCL's model" in art["axes"].get_title() and art["alt"]


def test_busbw_prediction_holds_each_kind_to_its_own_bound():
    # one DGX H100: NVLS's busbw is above the bound of switches that only forward (the
    # ring's 2(N-1)/N over NVLink) and below the dotted one of switches that reduce
    pytest.importorskip("matplotlib")
    topo = cl.parse_topology("dgx-h100:1")
    sizes = [2**k for k in range(10, 35, 2)]
    es = cl.models.sweep("all_reduce", topo, sizes, model="nccl")
    forward = [b.time for b in cl.bounds.lower_bounds("all_reduce", topo, sizes, network=False)]
    reduce = [b.time for b in cl.bounds.lower_bounds("all_reduce", topo, sizes, network=True)]
    art = cl.draw.draw_busbw_prediction("all_reduce", 8, sizes, [e.time for e in es], forward,
                                        network_bound=reduce)
    y, dashed = art["model"].get_ydata(), art["bound"].get_ydata()
    dotted = np.asarray(art["network_bound"].get_ydata(), dtype=float)
    assert es[-1].nccl_algorithm == "NVLS" and y[-1] > dashed[-1]   # above forwarding's...
    assert np.all(np.fmax(dotted, dashed) >= y - 1e-9)     # ...never above its own
    assert np.isnan(dotted[0]) and dotted[-1] > dashed[-1] * 1.5   # drawn where it is lower
    # without NVLS (A100) there is no second line
    a100 = cl.parse_topology("dgx-a100:1")
    es = cl.models.sweep("all_reduce", a100, sizes, model="nccl")
    both = [[b.time for b in cl.bounds.lower_bounds("all_reduce", a100, sizes, network=n)]
            for n in (False, True)]
    art = cl.draw.draw_busbw_prediction("all_reduce", 8, sizes, [e.time for e in es], both[0],
                                        network_bound=both[1])
    assert art["network_bound"] is None


@pytest.mark.parametrize("kw, message", [
    ({"num_ranks": 1}, "num_ranks must be a whole number >= 2, got 1"),
    ({"sizes": [1024]}, "sizes must be at least two positive sizes"),
    ({"predicted": [1.0, -1.0]}, "predicted must hold one positive time"),
    ({"bound": [1.0]}, "bound must hold one positive time"),
    ({"picks": ["RING/LL"]}, "picks must name one algorithm per size"),
    ({"collective": "all_sum"}, "all_sum"),
])
def test_busbw_prediction_refuses_bad_input(kw, message):
    pytest.importorskip("matplotlib")
    args = {"collective": "all_reduce", "num_ranks": 8, "sizes": [1024, 2048],
            "predicted": [1e-5, 2e-5], "bound": [1e-6, 2e-6]}
    args.update(kw)
    with pytest.raises((cl.CollectivesError, ValueError), match=message):
        cl.draw.draw_busbw_prediction(args.pop("collective"), args.pop("num_ranks"), args.pop("sizes"),
                                      args.pop("predicted"), args.pop("bound"), **args)
