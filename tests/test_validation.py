"""NCCL's model against the published nccl-tests runs kept in collectives_lib/data/nccl_tests.

The goal: for every run its poster or NVIDIA called healthy, the median error at
1 MiB and above within 15% of the measured time and below 1 MiB within 35%,
except where the data record why the model does not hold (models.csv,
column exceptions). benchmarks/bench_validation.py prints every row.
"""
import pytest

from collectives_lib.nccl import validation as V
from collectives_lib.errors import CollectivesError
from collectives_lib.topology import parse_topology

RUNS = V.runs()


def test_every_run_has_its_source_and_a_verdict_and_a_model_or_a_reason():
    assert len(RUNS) >= 30
    for r in RUNS:
        assert r.source_url and r.healthy in ("yes", "no", "unknown"), r.run_id
        assert r.rows, r.run_id
        assert r.modelled or len(r.why_not) > 20, r.run_id


def test_models_csv_says_yes_no_or_pending_and_runs_follow_it():
    """A 'pending' row names a preset (which must exist) but stays out of the comparison
    until someone judges the fit; 'yes' rows are compared, 'no' rows are not."""
    models = {m["run_id"]: m for m in V._read("models.csv")}
    assert set(models) == {r.run_id for r in RUNS}
    pending = 0
    for r in RUNS:
        m = models[r.run_id]
        assert m["modelled"] in ("yes", "no", "pending"), r.run_id
        assert r.modelled == (m["modelled"] == "yes"), r.run_id
        if m["modelled"] == "pending":
            pending += 1
            ranks = int(V._options(m["options"]).get("gpus", 0)) or parse_topology(m["topology"]).num_ranks
            assert ranks == r.gpus_per_node * r.num_nodes, r.run_id   # the preset is the run's size
            assert r.why_not.startswith("pending: " + m["topology"]), r.why_not
            with pytest.raises(CollectivesError):
                V.compare(r)
    assert pending > 0


def test_the_data_cover_what_the_book_claims():
    covered = {(r.gpu.split()[0], r.collective.value, r.num_nodes > 1) for r in RUNS}
    for want in [("H100", "all_reduce", False), ("H100", "all_reduce", True),
                 ("H100", "reduce_scatter", False), ("H100", "all_gather", False),
                 ("A100-SXM4-80GB", "all_reduce", False), ("B200", "all_gather", False),
                 ("GB200", "all_to_all", False), ("GB200", "all_to_all", True), ("H200", "all_reduce", False),
                 ("GB200", "all_reduce", False), ("GB200", "all_reduce", True)]:
        assert want in covered, want


@pytest.mark.parametrize("run", [r for r in RUNS if r.modelled and r.healthy == "yes"
                                 and "sharp" not in r.options], ids=lambda r: r.run_id)
def test_healthy_runs_are_within_the_goals(run):
    s = V.summarize(run)
    assert s.rows
    if s.median_large is not None and "large" not in run.exceptions:
        assert abs(s.median_large) <= V.GOALS["large"], s.median_large
    if s.median_small is not None and "small" not in run.exceptions:
        assert abs(s.median_small) <= V.GOALS["small"], s.median_small


def test_the_model_is_not_far_off_anywhere_it_claims_to_model():
    """Across every modelled run that nobody called unhealthy, the typical error at
    1 MiB and above stays small (a regression guard on the calibration)."""
    errors = sorted(abs(x.error) for r in RUNS if r.modelled and r.healthy != "no"
                    and "sharp" not in r.options for x in V.compare(r) if x.nbytes >= V.LARGE)
    assert len(errors) > 300
    assert errors[len(errors) // 2] < 0.10


def test_a_row_compares_the_measured_time_with_the_prediction():
    run = V.run("dgxh100x8-nvls-allreduce-dgxc-bench")
    rows = {x.nbytes: x for x in V.compare(run)}
    big = rows[4 * 2**30]
    assert big.measured == pytest.approx(15749e-6) and big.algorithm == "nvls"
    assert abs(big.error) < 0.05
    assert "not modelled" in V.report()
