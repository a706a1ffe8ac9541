"""Scaling helpers, gathers and arbitrary flows, against the seeds' numbers."""
import numpy as np
import pytest

import collectives_lib as cl
from collectives_lib import scaling


def test_amdahl_seed_example():
    four = scaling.amdahl(100e-6, 50e-6, 4)
    assert four.step_time == pytest.approx(75e-6) and four.speedup == pytest.approx(2.0)
    sixteen = scaling.amdahl(100e-6, 50e-6, 16)
    assert sixteen.step_time == pytest.approx(56.25e-6)
    assert sixteen.speedup == pytest.approx(150 / 56.25)
    assert four.limit == pytest.approx(3.0)


@pytest.mark.parametrize("n, q", [(1, 0.5), (8, 0.917), (1000, 0.99931)])
def test_slowest_quantile(n, q):
    assert scaling.slowest_quantile(n) == pytest.approx(q, abs=5e-4)


def test_sampling_agrees_with_the_formula():
    for n in (8, 64):
        assert scaling.empirical_quantile_of_median_max(n, trials=20_000) == pytest.approx(
            scaling.slowest_quantile(n), abs=0.01)


def test_crossover_interpolates():
    sizes = np.array([1.0, 10.0, 100.0])
    a = np.array([1.0, 2.0, 20.0])
    b = np.array([2.0, 2.0 * 1.0001, 4.0])
    x = cl.analysis.crossover(sizes, a, b)
    assert 9.9 < x < 11
    assert cl.analysis.crossover(sizes, a, a * 2) is None


def test_tree_beats_ring_for_small_messages_only():
    sw = cl.nvswitch_node()
    x = cl.analysis.algorithm_crossover("all_reduce", sw, "binomial_tree", "ring")
    assert x is not None and 1e4 < x < 1e8
    small, large = x / 10, x * 10
    t = lambda alg, v: cl.simulate(cl.build("all_reduce", sw, alg), sw, int(v) // 8 * 8).time
    assert t("binomial_tree", small) < t("ring", small)
    assert t("binomial_tree", large) > t("ring", large)


def test_reduction_depth():
    assert cl.costs.reduction_depth(16) == 4                 # 16 chips at 10 us: 40 us at best
    assert cl.costs.reduction_depth(16, fan_in=4) == 2
    assert cl.costs.reduction_depth(1) == 0


def test_gather_over_disjoint_paths_reaches_the_bound():
    s = cl.tpu_slice("v5e", "4x4")
    V = 16 * 10**9
    direct = cl.simulate(cl.build("gather", s, "direct", root=(0, 0)), s, V)
    split = cl.simulate(cl.build("gather", s, "multipath", root=(0, 0)), s, V)
    bound = 15 * 10**9 / (2 * 45e9)                        # 15 GB into 2 links of (0, 0)
    assert split.time == pytest.approx(bound, rel=1e-3)
    assert direct.time > 1.5 * split.time                  # x-then-y routing piles onto one link
    cl.check(cl.build("gather", s, "multipath", root=(0, 0)))


def test_time_flows_from_hosts_over_pcie():
    system = cl.tpu_system("v5e", "4x4")
    flows = [(f"host{system.host_of(c)}", c, 1e9) for c in range(16)]
    r = cl.time_flows(system, flows)
    lat = float(cl.hardware.TPU_PCIE_LATENCY)           # one PCIe crossing, host to chip
    # v5e PCIe: 1.5e10 B/s per chip (Scaling Book, Feb 2025)
    assert r.time == pytest.approx(1e9 / 1.5e10 + lat)
    # the same bytes through one chip's PCIe link take 16 times longer
    one = cl.time_flows(system, [("host0", 0, 16e9)])
    assert one.time - lat == pytest.approx(16 * (r.time - lat))


def test_time_flows_rejects_bad_input():
    sw = cl.Switch(4, bandwidth=1e9)
    with pytest.raises(cl.CollectivesError, match="at least one"):
        cl.time_flows(sw, [])
    with pytest.raises(cl.CollectivesError, match="rank 9 is not an endpoint"):
        cl.time_flows(sw, [(0, 9, 10)])
    with pytest.raises(cl.CollectivesError, match="has no node called 'host0'"):
        cl.time_flows(sw, [("host0", 1, 10)])


def test_moe_traffic_top_k_of_e():
    m = scaling.moe_traffic(72, 500, top_k=8, bytes_per_token=2.0, seed=1)
    assert m.shape == (72, 72)
    assert np.allclose(m.sum(axis=1), 500 * 8 * 2.0)          # each token reaches 8 ranks
    assert m.sum() / (72 * 500 * 2.0 * 72) == pytest.approx(8 / 72)   # about 11% of GPUs per token
    skewed = scaling.moe_traffic(8, 2000, skew=2.0, seed=1)
    assert skewed[:, 0].sum() > 3 * skewed[:, 7].sum()        # expert 0 is hot
    sched = cl.build("all_to_all", 8, "bidirectional_ring", matrix=skewed)
    cl.check(sched)
    with pytest.raises(cl.CollectivesError, match="top_k must be between 1 and the number of experts"):
        scaling.moe_traffic(8, 10, top_k=9)
