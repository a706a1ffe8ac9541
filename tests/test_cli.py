"""The command line: answers, JSON, tables, and one-line errors with status 2."""
import json
import subprocess
import sys

import pytest

from collectives_lib.cli import main


def run(*argv):
    import io
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_estimate_json_has_the_promised_keys():
    code, out, err = run("estimate", "--topology", "tpu-v5e:16x16", "--collective", "all_gather",
                         "--size", "1GiB", "--json")
    assert code == 0, err
    obj = json.loads(out)
    for key in ("time_s", "steps", "algbw", "busbw", "num_ranks", "algorithm"):
        assert key in obj
    assert obj["num_ranks"] == 256
    assert obj["algorithm"] == "multi_axis"
    assert obj["algbw"] == pytest.approx(2**30 / obj["time_s"])


def test_estimate_text_says_what_auto_chose():
    code, out, _ = run("estimate", "-t", "tpu-v5e:8x16", "-c", "all_gather", "-s", "1GB", "--axes", "x")
    assert code == 0
    assert "chain (auto: chain: the axis has no wraparound link" in out
    assert "16 groups of 8" in out


def test_estimate_on_generic_topologies_with_bandwidth_and_latency():
    code, out, _ = run("estimate", "-t", "ring:8", "--bandwidth", "400GB/s", "-c", "all_reduce",
                       "-s", "8GB", "-a", "ring", "--json")
    assert code == 0
    assert json.loads(out)["time_s"] == pytest.approx(0.035)


def test_latency_zero_isolates_the_bandwidth_term():
    _, a, _ = run("estimate", "-t", "tpu-v5e:16x16", "-c", "all_gather", "-s", "1MiB", "--json")
    _, b, _ = run("estimate", "-t", "tpu-v5e:16x16", "-c", "all_gather", "-s", "1MiB", "--json",
                  "--latency", "0")
    assert json.loads(b)["latency_time_s"] == 0
    assert json.loads(a)["time_s"] > json.loads(b)["time_s"]


def test_gpu_auto_picks_like_a_tuner():
    code, out, _ = run("estimate", "-t", "dgx-h100:1", "-c", "all_reduce", "-s", "8GB", "--json")
    obj = json.loads(out)
    assert obj["model"] == "nccl" and (obj["algorithm"], obj["protocol"]) == ("nvls", "SIMPLE")
    assert "NCCL's tuner picks it" in obj["why"]
    code, out, _ = run("estimate", "-t", "dgx-h100:16", "-c", "all_reduce", "-s", "1GB", "--json")
    assert json.loads(out)["nccl_algorithm"] == "NVLS_TREE"
    code, out, _ = run("estimate", "-t", "dgx-h100:1", "-c", "all_reduce", "-s", "8GB", "--json",
                       "--model", "ideal")
    obj = json.loads(out)
    assert obj["model"] == "ideal" and obj["algorithm"] == "nvls" and obj["protocol"] is None
    assert "fastest in the ideal link model" in obj["why"]


def test_sweep_table_parses():
    code, out, _ = run("sweep", "-t", "ring:6", "--bandwidth", "1e9", "-c", "all_gather",
                       "-b", "8", "-e", "1M", "-f", "4")
    assert code == 0
    rows = [line.split() for line in out.splitlines() if not line.startswith("#")]
    assert len(rows) == 9                       # 8, 32, ..., 512K
    sizes = [int(r[0]) for r in rows]
    assert sizes == [8 * 4**k for k in range(9)]   # every size as asked; uneven shards are noted
    assert [int(r[1]) for r in rows] == [s // 4 for s in sizes] and {r[2] for r in rows} == {"float32"}
    times = [float(r[4]) for r in rows]
    assert times == sorted(times)
    assert "sizes do not split evenly" in out


def test_sweep_json():
    code, out, _ = run("sweep", "-t", "dgx-h100:1", "-c", "all_reduce", "-b", "1K", "-e", "1G",
                       "-f", "32", "--json")
    rows = json.loads(out)
    assert (rows[0]["algorithm"], rows[0]["protocol"]) == ("ring", "LL")
    assert rows[-1]["algorithm"] == "nvls"
    assert all(r["lower_bound"]["time_s"] <= r["time_s"] for r in rows)


def test_algorithms_lists_and_explains():
    code, out, _ = run("algorithms", "-t", "ring:6", "--bandwidth", "1e9", "-c", "all_reduce")
    assert code == 0
    assert "bidirectional_ring" in out and "(auto)" in out
    assert "not recursive_doubling: recursive_doubling needs a power-of-two number of ranks, got N = 6" in out


def test_show_prints_steps():
    code, out, _ = run("show", "-t", "ring:4", "--bandwidth", "1e9", "-c", "all_reduce", "-a", "ring")
    assert code == 0
    assert out.count("step ") == 6
    assert "reduce block" in out and "copy block" in out


@pytest.mark.parametrize("argv, message", [
    (["estimate", "-t", "tpu-v5e:5x5", "-c", "all_gather", "-s", "1GB"],
     "tpu-v5e slice 5x5 does not fit a 16x16 pod"),
    (["estimate", "-t", "tpu-v9:4x4", "-c", "all_gather", "-s", "1GB"], "unknown TPU preset 'tpu-v9'"),
    (["estimate", "-t", "ring:0", "--bandwidth", "1e9", "-c", "all_gather", "-s", "1GB"],
     "number of ranks N must be >= 1, got 0"),
    (["estimate", "-t", "ring:6", "--bandwidth", "1e9", "-c", "all_gather", "-s", "1GB",
      "-a", "recursive_doubling"], "needs a power-of-two number of ranks, got N = 6"),
    (["estimate", "-t", "ring:6", "--bandwidth", "1e9", "-c", "all_gather", "-s", "-5"],
     "must be positive"),
    (["estimate", "-t", "ring:6", "-c", "all_gather", "-s", "5"], "needs --bandwidth"),
    (["estimate", "-t", "ring:6", "--bandwidth", "1e9", "-c", "allfoo", "-s", "1000"],
     "unknown collective 'allfoo'"),
    (["estimate", "-t", "tpu-v5e:4x4", "-c", "all_gather", "-s", "1GB", "--axes", "z"],
     "unknown axis 'z'"),
    (["estimate", "-t", "tpu-v5e:4x4", "-c", "all_gather", "-s", "1GB", "-a", "ring"],
     "algorithm 'ring' does not apply"),
    (["estimate", "-t", "tpu-v5e:8x16", "-c", "all_gather", "-s", "1GB", "-a", "ring", "--axes", "x"],
     "ring needs a wraparound link on axis x (size 8)"),
    (["estimate", "-t", "nonsense", "-c", "all_gather", "-s", "1GB"], "topology 'nonsense' is not understood"),
    (["estimate", "-t", "dgx-h100:0", "-c", "all_gather", "-s", "1GB"], "number of nodes M must be >= 1"),
    (["estimate", "-t", "ring:4", "--bandwidth", "fast", "-c", "all_gather", "-s", "1GB"],
     "bandwidth 'fast' is not understood"),
    (["frobnicate"], "invalid choice: 'frobnicate'"),
    (["estimate", "-t", "ring:4"], "the following arguments are required"),
])
def test_bad_input_is_one_line_and_status_2(argv, message):
    code, out, err = run(*argv)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("collectives: error: ")
    assert message in err


def test_module_entry_point_runs_without_traceback():
    proc = subprocess.run([sys.executable, "-m", "collectives_lib", "estimate", "-t", "ring:3",
                           "-c", "all_gather", "-s", "1GB"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip() == ("collectives: error: topology 'ring:3' needs --bandwidth "
                                   "(one-way bytes/s per link, e.g. 45e9)")


def test_import_pulls_no_plotting_or_widgets():
    code = ("import sys, collectives_lib; "
            "print(any(m.split('.')[0] in ('matplotlib', 'ipywidgets', 'mpi4py') for m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.stdout.strip() == "False", proc.stderr


def test_the_sweep_footer_tells_partial_elements_from_uneven_slots():
    """A 1,000-size sweep under NCCL's model once ended '741 of 1000 sizes do not split
    evenly into whole elements per slot': NCCL's model has no slots; the sizes were not
    whole float32 elements."""
    code, out, _ = run("sweep", "-t", "dgx-h100:2", "-c", "all_reduce", "-b", "1001", "-e", "1005",
                       "-f", "1.001")
    assert code == 0
    assert "# 3 of 4 sizes are not whole 4-byte elements" in out
    assert "per slot" not in out
    code, out, _ = run("sweep", "-t", "ring:6", "--bandwidth", "1e9", "-c", "all_reduce",
                       "-b", "1000", "-e", "1002", "-f", "1.001")
    assert "# 1 of 2 sizes are not whole 4-byte elements" in out
    assert "# 2 of 2 sizes do not split evenly into whole elements per slot" in out
