"""Library helpers of the Systems at scale chapters (why_communication_scales,
depth_trees_roofline) and the hardware sources appendix."""
import math

import numpy as np
import pytest

import collectives_lib as cl
from collectives_lib import hardware as hw
from collectives_lib import scaling


# -- stragglers in closed form -------------------------------------------------------

@pytest.mark.parametrize("n", [1, 8, 1000], ids=lambda n: f"n{n}")
def test_slowest_median_sits_at_the_order_statistic_quantile(n):
    m = scaling.slowest_median(n, sigma=0.3, median=2.0)
    assert scaling.slowest_cdf(n, m, sigma=0.3, median=2.0) == pytest.approx(0.5, abs=1e-9)
    # and it is the single-chip quantile 2^(-1/n)
    assert scaling.slowest_cdf(1, m, sigma=0.3, median=2.0) == pytest.approx(scaling.slowest_quantile(n), abs=1e-9)


def test_slowest_median_agrees_with_sampling():
    for n in (8, 64):
        sampled = float(np.median(scaling.sample_slowest(n, 20_000, sigma=0.25)))
        assert scaling.slowest_median(n, sigma=0.25) == pytest.approx(sampled, rel=0.01)


@pytest.mark.parametrize("n", [1, 16, 4096], ids=lambda n: f"n{n}")
def test_slowest_pdf_integrates_to_one_and_matches_the_cdf(n):
    x = np.linspace(0.2, 5.0, 20001)
    pdf = scaling.slowest_pdf(n, x, sigma=0.25)
    dx = x[1] - x[0]
    assert float(pdf.sum() * dx) == pytest.approx(1.0, abs=2e-3)
    cdf = scaling.slowest_cdf(n, x, sigma=0.25)
    assert float(np.cumsum(pdf)[10000] * dx) == pytest.approx(float(cdf[10000] - cdf[0]), abs=2e-3)


def test_slowest_pdf_is_finite_far_from_the_median():
    x = np.array([0.0, 1e-6, 0.05, 1.0, 50.0])
    for n in (1, 2, 4096):
        pdf = scaling.slowest_pdf(n, x, sigma=0.05)
        assert np.all(np.isfinite(pdf)) and pdf[0] == 0.0
        assert np.all(np.isfinite(scaling.slowest_cdf(n, x, sigma=0.05)))


def test_slowest_of_more_chips_is_slower():
    medians = [scaling.slowest_median(n) for n in (1, 8, 64, 512, 4096)]
    assert all(a < b for a, b in zip(medians, medians[1:]))
    assert medians[0] == pytest.approx(1.0)


def test_slowest_rejects_bad_spread():
    with pytest.raises(cl.CollectivesError, match="sigma .* must be > 0, got 0"):
        scaling.slowest_median(8, sigma=0)
    with pytest.raises(cl.CollectivesError, match="median step time must be > 0"):
        scaling.slowest_pdf(8, [1.0], median=-1)


# -- hop counts ----------------------------------------------------------------------

@pytest.mark.parametrize("k", [4, 8, 16], ids=lambda k: f"torus{k}x{k}")
def test_hop_counts_on_a_torus_grow_with_its_side(k):
    hops = scaling.hop_counts(cl.Torus((k, k), bandwidth=1e9))
    assert hops.max() == k                  # k/2 along each of two axes
    assert len(hops) == k * k - 1


def test_hop_counts_on_a_switch_are_two():
    hops = scaling.hop_counts(cl.Switch(64, bandwidth=1e9), src=5)
    assert np.all(hops == 2) and len(hops) == 63


def test_hop_counts_on_a_fat_tree_are_at_most_four():
    hops = scaling.hop_counts(cl.GpuCluster("dgx-h100", 8))
    assert hops.min() == 2 and hops.max() == 4


def test_hop_counts_bad_source():
    with pytest.raises(cl.CollectivesError, match="src must be an endpoint 0..15"):
        scaling.hop_counts(cl.Torus((4, 4), bandwidth=1e9), src=16)


# -- a slowed rank ---------------------------------------------------------------------

def test_slowed_divides_the_bandwidth_of_the_straggler_links_only():
    sw = cl.Switch(4, bandwidth=100e9)
    slow = scaling.slowed(sw, {2: 4.0})
    bw = slow.links.bandwidth
    touches = (slow.links.src == 2) | (slow.links.dst == 2)
    assert np.allclose(bw[touches], 25e9) and np.allclose(bw[~touches], 100e9)
    assert np.allclose(sw.links.bandwidth, 100e9)          # the original is untouched


@pytest.mark.parametrize("make", [lambda: cl.GpuCluster("dgx-h100", num_nodes=4), lambda: cl.Switch(8, bandwidth=100e9),
                                  lambda: cl.nvswitch_node("dgx-h100")], ids=["cluster", "switch", "dgxh100"])
def test_a_straggler_far_from_rank_0_sets_the_bound(make):
    """The lower bound looks at every rank's own links, not only rank 0's: a rank in
    another node at half speed must send 2(N-1)/N V over half its links."""
    topo = make()
    n, V = topo.num_ranks, float(1 << 30)
    straggler = n - 3
    slow = scaling.slowed(topo, {straggler: 2.0})
    links = slow.links
    own = float(links.bandwidth[links.src == straggler].sum())
    by_hand = 2 * (n - 1) / n * V / own
    bound = cl.lower_bound("all_reduce", slow, V, network=False)
    assert bound.bandwidth_time == pytest.approx(by_hand, rel=1e-9)
    assert bound.time > cl.lower_bound("all_reduce", topo, V, network=False).time


@pytest.mark.parametrize("topo", [cl.nvswitch_node("dgx-h100"), cl.Ring(6, bandwidth=50e9, latency=1e-6)],
                         ids=["dgxh100", "ring6"])
def test_rank_timeline_step_times_match_the_simulator(topo):
    sched = cl.build("all_reduce", topo, "ring")
    V = sched.round_size(2**27)
    for slowdown in (None, {1: 3.0}):
        tl = scaling.rank_timeline(sched, topo, V, slowdown)
        topo_used = scaling.slowed(topo, slowdown) if slowdown else topo
        r = cl.simulate(sched, topo_used, V)
        assert np.allclose(tl.step_times, r.step_times)
        assert tl.total == pytest.approx(r.time)
        assert np.all(tl.wait >= -1e-15)


def test_one_straggler_slows_every_ring_step():
    node = cl.nvswitch_node("dgx-h100")
    sched = cl.build("all_reduce", node, "ring")
    V = sched.round_size(2**30)
    healthy = scaling.rank_timeline(sched, node, V)
    slow = scaling.rank_timeline(sched, node, V, {5: 2.0})
    # bandwidth-bound: every step takes about twice as long, so the total does too
    assert np.all(slow.step_times > 1.9 * healthy.step_times)
    assert slow.total == pytest.approx(2 * healthy.total, rel=0.02)
    # ranks far from the straggler spend about half of every step waiting
    assert np.all(slow.wait[:, 0] > 0.45 * slow.step_times)


def test_slowed_rejects_bad_input():
    sw = cl.Switch(4, bandwidth=1e9)
    with pytest.raises(cl.CollectivesError, match="slowdown names rank 7"):
        scaling.slowed(sw, {7: 2.0})
    with pytest.raises(cl.CollectivesError, match="factor must be a number >= 1"):
        scaling.slowed(sw, {1: 0.5})


# -- pipeline bubbles ---------------------------------------------------------------------

@pytest.mark.parametrize("p, m", [(1, 4), (4, 4), (4, 16), (8, 32)], ids=lambda v: str(v))
def test_gpipe_schedule_idles_the_bubble_fraction(p, m):
    tasks = scaling.gpipe_schedule(p, m, forward=1.0, backward=2.0)
    assert len(tasks) == 2 * p * m
    end = max(t.end for t in tasks)
    assert end == pytest.approx((m + p - 1) * 3.0)
    for s in range(p):
        busy = sum(t.end - t.start for t in tasks if t.stage == s)
        assert 1 - busy / end == pytest.approx(scaling.pipeline_bubble_fraction(p, m))


def test_gpipe_schedule_respects_dependencies_and_never_overlaps():
    p, m = 4, 6
    tasks = {(t.stage, t.microbatch, t.phase): t for t in scaling.gpipe_schedule(p, m)}
    for s in range(p):
        for j in range(m):
            f, b = tasks[(s, j, "forward")], tasks[(s, j, "backward")]
            if s > 0:
                assert f.start >= tasks[(s - 1, j, "forward")].end
            if s < p - 1:
                assert b.start >= tasks[(s + 1, j, "backward")].end
            else:
                assert b.start >= f.end
        mine = sorted((t.start, t.end) for t in tasks.values() if t.stage == s)
        assert all(a[1] <= b[0] + 1e-12 for a, b in zip(mine, mine[1:]))


def test_bubble_fraction_examples_and_errors():
    assert scaling.pipeline_bubble_fraction(8, 8) == pytest.approx(7 / 15)
    assert scaling.pipeline_bubble_fraction(1, 8) == 0.0
    with pytest.raises(cl.CollectivesError, match="number of micro-batches must be >= 1"):
        scaling.pipeline_bubble_fraction(4, 0)


# -- depth, trees and the ridge point ------------------------------------------------------

@pytest.mark.parametrize("n", [8, 16, 64], ids=lambda n: f"switch{n}")
def test_step_counts_reduce_broadcast_recursive_doubling_ring(n):
    sw = cl.Switch(n, bandwidth=1e9)
    log = int(math.log2(n))
    assert cl.build("reduce", sw, "binomial_tree").num_steps == log
    assert cl.build("broadcast", sw, "binomial_tree").num_steps == log
    assert cl.build("all_reduce", sw, "binomial_tree").num_steps == 2 * log
    assert cl.build("all_reduce", sw, "tree").num_steps == 2 * (n - 1) + 8 - 1     # chains, 8 chunks
    assert cl.build("all_reduce", sw, "recursive_doubling").num_steps == log
    assert cl.build("all_reduce", sw, "ring").num_steps == 2 * (n - 1)


def test_peak_flops_by_format():
    peak = hw.PEAK_FLOPS
    assert float(peak["H100"]["fp8"]) == pytest.approx(2 * float(peak["H100"]["bf16"]), rel=0.001)
    assert float(peak["B200"]["fp4"]) == 4 * float(peak["B200"]["bf16"])
    assert float(peak["GB200"]["fp4"]) == 4 * float(peak["GB200"]["bf16"])
    assert peak["H100"]["bf16"] is hw.GPU_SYSTEMS["dgx-h100"].peak_flops_bf16
    names = dict(hw.all_figures())
    assert names["peak.B200.fp8"] is peak["B200"]["fp8"]


def test_ridge_point_doubles_with_fp8_when_the_wire_stays_bf16():
    nvlink = float(hw.GPU_SYSTEMS["dgx-h100"].nvlink_bandwidth)
    bf16 = scaling.ridge_point(hw.PEAK_FLOPS["H100"]["bf16"], nvlink)
    fp8 = scaling.ridge_point(hw.PEAK_FLOPS["H100"]["fp8"], nvlink)
    assert fp8 / bf16 == pytest.approx(2.0, rel=0.001)
    assert bf16 == pytest.approx(989e12 / 450e9)
    # figures and plain numbers alike
    assert scaling.ridge_point(hw.PEAK_FLOPS["H100"]["bf16"], hw.GPU_SYSTEMS["dgx-h100"].nvlink_bandwidth) == bf16
    with pytest.raises(cl.CollectivesError, match="fabric bandwidth must be > 0"):
        scaling.ridge_point(1e15, 0)


# --- NCCL's model behind the chapters' latency claims ---------------------------

def test_nccl_ring_latency_charges_the_network_per_node_not_per_step():
    """NCCL's ring latency (AllReduce, LL): base 6.6 us + NVLink 0.6 us for the
    2(N-1) - 2(nodes-1) steps inside nodes + 2.7 us for the 2(nodes-1) steps between them."""
    comm = cl.nccl.comm_for(cl.GpuCluster("dgx-h100", 4))
    n, nodes = 32, 4
    inter = 2 * (nodes - 1)
    want = 6.6 + (2 * (n - 1) - inter) * 1.0 + inter * 2.7     # intra step: max(0.6, net overhead 1.0)
    assert cl.nccl.tuner.latency("AllReduce", "RING", "LL", comm) == pytest.approx(want)


def test_nccl_ll_cap_halves_from_two_to_three_nodes():
    """depth_trees_roofline exercise 2: the tuner's n2 column (1 for two nodes, 2 for three or
    more) caps ring LL at 39.0 then 20.4 GB/s bus bandwidth (Intel CPU row), so the table's
    bandwidth, bus x nRanks / nsteps, drops from 39 x 16/30 to 20.4 x 24/46."""
    two = cl.nccl.comm_for(cl.GpuCluster("dgx-h100", 2))
    three = cl.nccl.comm_for(cl.GpuCluster("dgx-h100", 3))
    assert cl.nccl.tuner.bandwidth("AllReduce", "RING", "LL", two) == pytest.approx(39.0 * 16 / 30, rel=1e-5)
    assert cl.nccl.tuner.bandwidth("AllReduce", "RING", "LL", three) == pytest.approx(20.4 * 24 / 46, rel=1e-5)


def test_crossovers_finds_every_swap_and_crossover_the_first():
    sizes = np.array([1.0, 10.0, 100.0, 1000.0, 1e4])
    a = np.array([1.0, 3.0, 3.0, 30.0, 30.0])
    b = np.array([2.0, 2.0, 4.0, 20.0, 40.0])          # a ahead, behind, ahead, behind, ahead
    found = cl.analysis.crossovers(sizes, a, b)
    assert len(found) == 4 and all(x < y for x, y in zip(found, found[1:]))
    assert all(s0 < x < s1 for x, s0, s1 in zip(found, sizes, sizes[1:]))
    assert cl.analysis.crossover(sizes, a, b) == found[0]
    assert cl.analysis.crossovers(sizes, a, 2 * a) == [] and cl.analysis.crossover(sizes, a, 2 * a) is None


@pytest.mark.parametrize("bad", [dict(times_a=[1.0, 2.0]), dict(times_b=[1.0, 0.0, 1.0])])
def test_crossovers_refuses_mismatched_or_non_positive_curves(bad):
    args = dict(sizes=[1.0, 10.0, 100.0], times_a=[1.0, 2.0, 3.0], times_b=[2.0, 2.0, 2.0]) | bad
    with pytest.raises(cl.CollectivesError):
        cl.analysis.crossovers(**args)


def test_forced_tree_and_ring_trade_the_lead_three_times_on_two_nodes():
    """depth_trees_roofline: on 2 DGX H100 nodes the forced curves (NCCL's model, the times
    nccl-tests would measure) swap places three times: the tree ahead below a few hundred
    KB, the ring on LL after it, the tree again on LL128 while the ring is still on LL, the
    ring once it moves to LL128; with the tree's fill across the network 3x the fitted
    PIPELINE_LATENCY.TREE the middle lead is gone."""
    from collectives_lib.nccl import validation as V
    topo = cl.GpuCluster("dgx-h100", 2)
    sizes = [int(s) for s in np.geomspace(1e3, 1e10, 40)]

    def curves():
        return {a: cl.models.sweep("all_reduce", topo, sizes, a, model="nccl") for a in ("tree", "ring")}
    e = curves()
    found = cl.analysis.crossovers(sizes, [x.time for x in e["tree"]], [x.time for x in e["ring"]])
    assert len(found) == 3 and 1e5 < found[0] < found[1] < found[2] < 1e7
    middle = [(t, r) for t, r in zip(e["tree"], e["ring"]) if found[1] < t.nbytes < found[2]]
    assert middle and all(t.time < r.time and t.protocol == "LL128" for t, r in middle)
    assert e["ring"][-1].time < e["tree"][-1].time
    with V.constants({"PIPELINE_LATENCY.TREE": 3 * V.FITTED["PIPELINE_LATENCY.TREE"].value}):
        e = curves()
        assert len(cl.analysis.crossovers(sizes, [x.time for x in e["tree"]], [x.time for x in e["ring"]])) == 1


# --- ZeRO and DDP buckets -----------------------------------------------------------

def test_zero_stages_send_ddp_bytes_except_stage_three():
    """Ring on 16 GPUs: all-reduce 2 x 15/16 V, all-gather and reduce-scatter 15/16 V each."""
    cluster = cl.GpuCluster("dgx-h100", 2)
    params = 1.6e9
    V = params * 2
    stages = [cl.workloads.zero_traffic(cluster, params, stage=s) for s in range(4)]
    for s in stages[:3]:
        assert s.bytes_sent == pytest.approx(2 * 15 / 16 * V, rel=1e-6)
    assert stages[3].bytes_sent == pytest.approx(3 * 15 / 16 * V, rel=1e-6)
    # memory: (2 + 2 + 12) P; stage 1 shards 12 P, stage 2 also 2 P, stage 3 all 16 P over 16
    want = [16 * params, 4 * params + 12 * params / 16, 2 * params + 14 * params / 16, params]
    assert [s.memory for s in stages] == pytest.approx(want)
    assert [s.name for s in stages] == ["DDP", "ZeRO-1", "ZeRO-2", "ZeRO-3"]


@pytest.mark.parametrize("bad", [dict(stage=4), dict(stage=True), dict(stage=1, bytes_per_param=0)])
def test_zero_traffic_refuses_bad_input(bad):
    with pytest.raises(cl.CollectivesError):
        cl.workloads.zero_traffic(cl.GpuCluster("dgx-h100", 2), 1e9, **bad)


def test_ddp_buckets_fill_in_backward_order_and_wait_for_each_other():
    cluster = cl.GpuCluster("dgx-h100", 2)
    tl = cl.workloads.ddp_backward(cluster, [10e6, 10e6, 10e6, 10e6, 10e6], 1e-3, bucket_bytes=20e6)
    assert [b.layers for b in tl.buckets] == [(4, 3), (2, 1), (0,)]
    assert [b.ready for b in tl.buckets] == pytest.approx([2e-3, 4e-3, 5e-3])
    ar = cl.estimate("all_reduce", cluster, 20_000_000).time
    assert tl.buckets[0].end - tl.buckets[0].start == pytest.approx(ar)
    for a, b in zip(tl.buckets, tl.buckets[1:]):
        assert b.start == pytest.approx(max(b.ready, a.end))
    assert tl.backward_end == pytest.approx(5e-3)
    assert tl.exposed == pytest.approx(tl.buckets[-1].end - 5e-3)
    assert tl.unbucketed_end == pytest.approx(5e-3 + cl.estimate("all_reduce", cluster, 50_000_000).time)


@pytest.mark.parametrize("sizes, times, cap", [([], 1e-3, 1e6), ([1e6, -1], 1e-3, 1e6),
                                               ([1e6], [1e-3, 1e-3], 1e6), ([1e6], 1e-3, 0)])
def test_ddp_backward_refuses_bad_input(sizes, times, cap):
    with pytest.raises(cl.CollectivesError):
        cl.workloads.ddp_backward(cl.GpuCluster("dgx-h100", 2), sizes, times, bucket_bytes=cap)


# --- measure_it_yourself: the published runs its explorer shows --------------------

CHAPTER_RUNS = ("h100x4of8-allreduce-ncclcollbench", "h100x4of8-reducescatter-ncclcollbench",
                "p5-h100x8-nvls-allreduce-awsbatch", "h100x8-ring-reducescatter-nccl1047",
                "h100x8-2node-ib-allreduce-issue309-gjaion", "h100x8-4node-ib-allreduce-issue309-gjaion",
                "h100x8-8node-ib-allreduce-issue309-gjaion", "azure-nda100v4-a100x8-allreduce-busbw-only",
                "crusoe-a100x8-2node-ib-allreduce-dstack", "gke-a3ultra-h200x8-2node-roce-allgather-clustertoolkit",
                "gcp-a4-b200x8-2node-roce-allreduce-dstack", "b300x8-allreduce-oci",
                "b300x8-2node-roce-allreduce-oci", "b300x8-2node-roce-alltoall-oci",
                "gb200-nvl72-1rack-allreduce-coreweave", "gb200-nvl72-16tray-mnnvl-allreduce-oci",
                "gb200-nvl72-16tray-mnnvl-alltoall-oci", "gb200-nvl72-2rack-allreduce-oci",
                "gb200-nvl72-2rack-alltoall-oci", "gb300-nvl72-2tray-mnnvl-allreduce-oci",
                "gb300-nvl72-2tray-mnnvl-alltoall-oci", "gb300-nvl72-2rack-allreduce-oci",
                "gb300-nvl72-2rack-alltoall-oci")


def test_the_chapters_runs_exist_and_are_modelled():
    """The explorer's runs (its RUNS): modelled, and all but two held out from the model's
    fitted constants (the 2-node A100 run is in the fit set of rings across nodes, the
    2-rack GB200 all-reduce in that of NVLS_TREE across racks, judged on the 2-rack GB300
    one; the explorer's titles say which)."""
    fitted = []
    for run_id in CHAPTER_RUNS:
        run = cl.nccl.validation.run(run_id)
        assert run.modelled, run_id
        if not run.held_out:
            fitted.append(run_id)
    assert fitted == ["crusoe-a100x8-2node-ib-allreduce-dstack", "gb200-nvl72-2rack-allreduce-oci"]


def test_dgx_h100_nvls_run_is_predicted_within_its_goal():
    """The docstring's example: 4 GiB measured 15,749 us, NCCL's model 16,171 us (+2.7%; it was
    +3.2% before NVLS's pipeline latency was refitted on its fit set, fits.csv: 2 us, not 3)."""
    rows = cl.nccl.validation.compare(cl.nccl.validation.run("dgxh100x8-nvls-allreduce-dgxc-bench"))
    big = [r for r in rows if r.nbytes == 4 * 2**30][0]
    assert big.measured == pytest.approx(15749e-6, rel=1e-3)
    assert big.error == pytest.approx(0.027, abs=0.002)
