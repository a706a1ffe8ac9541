"""Answers a hostile tester found wrong though no error was raised (issue 25).

Each test failed on the code before its fix: an ideal-model answer faster than its
own lower bound on GPU clusters (the bound's latency took the network's route, the
schedules took NVLink and another rail); sizes above 2**53 read through a float;
a run that changed its size without saying so; links between TPU slices with no
latency; "one rank per group" printed for groups of many ranks; flags that changed
nothing (a protocol for NCCL's send/recv, NVLS on an A100) and internal messages.
"""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

import collectives_lib as cl
from collectives_lib import bounds, hardware as hw
from collectives_lib.builders import entries
from collectives_lib.cli import main
from collectives_lib.units import check_nbytes, parse_size


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


# -- no answer below its own bound ---------------------------------------------------

SMALL_CLUSTERS = ["dgx-h100:2", "dgx-h100:2:gpus=2", "dgx-a100:2:gpus=2", "gb300-nvl72:2:trays=1",
                  "dgx-b200:2:gpus=4", "gb200-tray:3"]


@pytest.mark.parametrize("spec", SMALL_CLUSTERS)
def test_no_ideal_answer_beats_its_bound_on_small_clusters(spec):
    topo = cl.parse_topology(spec)
    sizes = [8, 64, 2048, 32768]
    for coll in ("send", "broadcast", "all_reduce", "all_gather", "reduce_scatter", "all_to_all"):
        for name in entries(coll):
            try:
                rows = cl.models.sweep(coll, topo, sizes, name, model="ideal")
            except cl.CollectivesError:
                continue                      # does not apply here
            for e in rows:
                assert e.time >= e.bound.time * (1 - 1e-9), (coll, name, e.nbytes, e.time, e.bound)
                assert e.efficiency <= 1 + 1e-9


def test_the_latency_bound_is_the_quickest_path_not_the_route():
    topo = cl.parse_topology("dgx-h100:2")
    # the route 0 -> 15 climbs to a spine (4 InfiniBand links); NVLink to GPU 7 and
    # its rail is quicker
    route = float(bounds._latencies(topo, np.array([0]), np.array([15]))[0])
    quick = float(bounds._least(topo, 0, np.array([15]))[0])
    h100 = hw.GPU_SYSTEMS["dgx-h100"]
    nv, ib = float(h100.nvlink_latency), float(h100.nic_latency)
    assert route == pytest.approx(2 * nv + 4 * ib) or route == pytest.approx(4 * ib)
    assert quick == pytest.approx(2 * nv + 2 * ib)
    assert quick < route


def test_the_quickest_path_search_agrees_with_dijkstra_on_long_rings():
    # a chain longer than the relaxation's 64 rounds falls back to Dijkstra
    topo = cl.Chain(300, bandwidth=1e9, latency=1e-6)
    sw = cl.Switch(5, bandwidth=1e9, latency=2e-6)
    for t in (topo, sw):
        far = np.arange(1, t.num_ranks)
        got = bounds._nearest(t, 0, far)
        assert got == pytest.approx(bounds._latencies(t, np.zeros(len(far), int), far))


# -- sizes are what was asked ----------------------------------------------------------

@pytest.mark.parametrize("text, want", [("9007199254740993", 2**53 + 1),
                                        ("9223372036854775807", 2**63 - 1),
                                        ("1e36", 10**36), ("0.00000000000000000000000001e30", 10**4)])
def test_sizes_are_read_exactly(text, want):
    assert parse_size(text) == want


@pytest.mark.parametrize("text, message", [("1e400", "beyond any memory"),
                                           ("1e999999999", "beyond any memory"),
                                           ("0.1G", "not a whole number of bytes"),
                                           ("1e-400", "not a whole number of bytes")])
def test_sizes_beyond_a_float_are_refused_for_what_they_are(text, message):
    with pytest.raises(cl.CollectivesError, match=message):
        parse_size(text)


def test_api_sizes_are_exact_and_arrays_refused():
    assert check_nbytes(2**53 + 1) == 2**53 + 1
    assert check_nbytes(np.int64(12)) == 12 and check_nbytes(np.array(7.0)) == 7
    e = cl.estimate("all_gather", cl.Ring(4, bandwidth=1e9), 2**53 + 1, dtype="int8")
    assert e.nbytes == 2**53 + 1
    with pytest.raises(cl.CollectivesError, match="one integer"):
        cl.estimate("all_reduce", cl.Ring(8, bandwidth=1e9), np.array([1024]))


def test_cli_keeps_a_size_above_two_to_the_53():
    code, out, err = run("estimate", "-t", "ring:4", "--bandwidth", "1e9", "-c", "all_gather",
                         "-d", "int8", "-s", "9007199254740993", "--json")
    assert code == 0, err
    assert json.loads(out)["nbytes"] == 9007199254740993


def test_a_sweep_never_passes_its_largest_size():
    code, out, err = run("sweep", "-t", "ring:4", "--bandwidth", "1e9", "-c", "all_gather", "-d",
                         "int8", "-b", "1", "-e", "1e36", "-f", "1e6", "--json")
    assert code == 0, err
    sizes = [r["nbytes"] for r in json.loads(out)["rows"]] if isinstance(json.loads(out), dict) \
        else [r["nbytes"] for r in json.loads(out)]
    assert max(sizes) == 10**36


def test_a_latency_that_underflows_is_refused():
    code, out, err = run("estimate", "-t", "ring:4", "--bandwidth", "1e9", "--latency", "1e-400",
                         "-c", "all_reduce", "-s", "1M")
    assert code == 2 and "below the smallest time" in err and "\n" not in err.strip()


# -- the links between TPU slices take time ------------------------------------------

def test_a_send_between_slices_pays_pcie_and_dcn_latency():
    code, out, err = run("estimate", "-t", "tpu-v5e:4x4*2", "-c", "send", "-s", "8", "--json")
    assert code == 0, err
    e = json.loads(out)
    least = 2 * float(hw.TPU_PCIE_LATENCY) + 2 * float(hw.DCN_LATENCY)
    assert e["lower_bound"]["latency_time_s"] >= least
    assert e["time_s"] >= least
    assert hw.DCN_LATENCY.source == "estimate" and hw.DCN_LATENCY.note


# -- nothing moves: say why ------------------------------------------------------------

def test_no_whole_element_is_not_called_one_rank():
    code, out, err = run("estimate", "-t", "ring:4", "--bandwidth", "1e9", "-c", "all_reduce",
                         "-s", "7", "-d", "float64")
    assert code == 0, err
    assert "one rank" not in out and "no whole float64 element" in out
    code, out, err = run("estimate", "-t", "ring:1", "--bandwidth", "1e9", "-c", "all_reduce",
                         "-s", "8")
    assert "one rank per group" in out


# -- flags that would change nothing are refused --------------------------------------

@pytest.mark.parametrize("coll", ["send", "all_to_all", "gather"])
def test_a_protocol_for_nccls_send_recv_is_refused(coll):
    code, out, err = run("estimate", "-t", "dgx-h100:1", "-c", coll, "-s", "1M", "-p", "LL")
    assert code == 2 and "NCCL_P2P_LL_THRESHOLD" in err and not out


def test_nvls_on_where_nccl_cannot_run_it_is_refused():
    code, out, err = run("estimate", "-t", "dgx-a100:1", "-c", "all_reduce", "-s", "1G",
                         "--nvls", "on")
    assert code == 2 and "no NVLink SHARP" in err
    code, out, err = run("estimate", "-t", "dgx-h100:1:gpus=1", "-c", "all_reduce", "-s", "1G",
                         "--nvls", "on")
    assert code == 2 and "no NVLS channels" in err
    code, out, err = run("estimate", "-t", "dgx-h100:1", "-c", "all_reduce", "-s", "1G",
                         "--nvls", "on")
    assert code == 0, err


@pytest.mark.parametrize("name", ["none", "all", "ring,tree"])
def test_an_unknown_algorithm_is_called_unknown_in_nccls_model(name):
    code, out, err = run("estimate", "-t", "dgx-h100:1", "-c", "all_reduce", "-s", "1M", "-a", name)
    assert code == 2 and f"unknown algorithm {name!r}" in err


@pytest.mark.parametrize("args, message", [
    (["-t", "dgx-h100:1:gpus=1"], "send needs two ranks; the group has 1"),
    (["-t", "dgx-h100:2", "--root", "3", "--dst", "3"], "two different ranks, got 3 and 3"),
])
def test_a_send_to_itself_is_refused_in_both_models(args, message):
    for model in ("nccl", "ideal"):
        code, out, err = run("estimate", *args, "-c", "send", "-s", "1M", "--model", model)
        assert code == 2 and message in err, (model, err)


def test_the_tpu_host_latencies_are_on_the_sources_page():
    names = dict(hw.all_figures())
    assert names["tpu.dcn_latency"] is hw.DCN_LATENCY
    assert names["tpu.pcie_latency"] is hw.TPU_PCIE_LATENCY
