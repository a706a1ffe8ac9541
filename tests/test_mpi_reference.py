"""The reference MPI run shipped for the chapter Measure it yourself (cl.mpi.reference)."""
import numpy as np
import pytest

import collectives_lib as cl


def test_reference_run_records_its_provenance_and_at_least_eight_ranks():
    ref = cl.mpi.reference()
    assert ref.date and ref.commands and ref.repeats >= 3
    assert ref.machine["cores"] >= 1 and ref.machine["cpu"]
    assert "oversubscribed" in ref.label           # 8 ranks on 2 cores: the label says so
    assert max(r["num_ranks"] for r in ref.rows) >= 8
    assert ref.ok


def test_reference_rows_are_medians_over_the_repeats():
    ref = cl.mpi.reference()
    s = ref.series("ring", 8)
    assert np.all(np.diff(s["size_bytes"]) > 0) and np.all(s["spread"] >= 1.0)
    assert all(r["repeats"] == ref.repeats for r in ref.rows)
    assert ref.calibration.alpha > 0 and ref.calibration.beta > 0


def test_reference_refuses_unknown_names_and_series():
    with pytest.raises(cl.CollectivesError, match="no reference MPI run 'nope'; there are: 2core-vm"):
        cl.mpi.reference("nope")
    with pytest.raises(cl.CollectivesError, match="has no all_reduce 'ring' on 3 ranks"):
        cl.mpi.reference().series("ring", 3)
