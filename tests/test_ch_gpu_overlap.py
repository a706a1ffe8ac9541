"""What the chapter *Overlapping communication with compute on GPUs* relies on, against
hand derivations.

The book's SM model (a collective's CTAs take SMs from the compute beside it), the
overlapped step time and its lower bound, worked by hand; NCCL's model's channel counts
for the chapter's cases, a CUDA graph's smaller launch floor, and the symmetric kernels'
fewer SMs on registered buffers.
"""
import pytest

import collectives_lib as cl

MiB = 2**20


def test_sm_counts_and_slowdown_by_hand():
    assert cl.scaling.sm_count("H100 SXM") == 132
    assert cl.scaling.sm_slowdown(0, 132) == 1.0
    assert cl.scaling.sm_slowdown(66, 132) == pytest.approx(2.0)
    assert cl.scaling.sm_slowdown(16, 132) == pytest.approx(132 / 116)
    assert cl.scaling.sm_slowdown(2, 108) < cl.scaling.sm_slowdown(24, 108)


def test_overlap_step_by_hand():
    # compute 10, comm 4, slow-down 2: 4 s of comm at half speed does 2 s of compute,
    # the remaining 8 s at full speed: 4 + 8 = 12 = 10 + 4 * (1 - 1/2)
    s = cl.scaling.overlap_step(10.0, 4.0, 2.0, 3.0)
    assert s.serial == 14.0
    assert s.overlapped == pytest.approx(12.0)
    assert s.exposed == pytest.approx(2.0)
    assert s.bound == 10.0
    # comm longer than the slowed compute: the step is the collective
    t = cl.scaling.overlap_step(3.0, 10.0, 2.0, 8.0)
    assert t.overlapped == 10.0 and t.bound == 8.0
    assert t.compute_end == 6.0 and s.compute_end == pytest.approx(12.0)
    # no slow-down: max(compute, comm), the lower bound when comm hits its bound
    u = cl.scaling.overlap_step(5.0, 4.0, 1.0, 4.0)
    assert u.overlapped == 5.0 == u.bound


@pytest.mark.parametrize("compute, comm, slow", [(1.0, 0.5, 1.1), (0.2, 0.5, 1.5), (2.0, 2.0, 1.0)])
def test_overlapped_lies_between_bound_and_serial(compute, comm, slow):
    s = cl.scaling.overlap_step(compute, comm, slow, comm * 0.8)
    assert s.bound <= s.overlapped <= s.serial
    assert s.overlapped <= max(compute * slow, comm) + 1e-12


@pytest.mark.parametrize("call, message", [
    (lambda: cl.scaling.sm_count("B900"), "no SM count for GPU 'B900'"),
    (lambda: cl.scaling.sm_slowdown(132, 132), "ctas must be a whole number from 0 to 131"),
    (lambda: cl.scaling.sm_slowdown(-1, 132), "ctas must be"),
    (lambda: cl.scaling.sm_slowdown(4, 0), "sms must be a whole number"),
    (lambda: cl.scaling.overlap_step(-1.0, 1.0), "compute must be a time"),
    (lambda: cl.scaling.overlap_step(1.0, float("nan")), "comm must be a time"),
    (lambda: cl.scaling.overlap_step(1.0, 1.0, 0.5), "slowdown must be a factor >= 1"),
    (lambda: cl.scaling.overlap_step(1.0, 1.0, 1.0, 2.0), "comm_bound"),
])
def test_bad_input_is_named(call, message):
    with pytest.raises(cl.CollectivesError, match=message):
        call()


def test_nccl_channels_in_the_chapter():
    cluster = cl.parse_topology("dgx-h100:16")
    e = cl.estimate("all_reduce", cluster, 16 * 2**30, model="nccl")
    assert 1 <= e.channels < cl.scaling.sm_count("H100 SXM")
    assert e.time >= e.bound.time


def test_graph_lowers_the_launch_floor_only_for_small_messages():
    node = cl.nvswitch_node("dgx-h100")
    small = [cl.estimate("all_reduce", node, 64 * 1024, model="nccl", launch=how).time
             for how in ("gpus-per-process=8", "gpus-per-process=8+graph")]
    assert small[1] < small[0]
    assert small[0] - small[1] == pytest.approx(8 * (cl.nccl.measured.LAUNCH - cl.nccl.measured.LAUNCH_GRAPH))
    big = [cl.estimate("all_reduce", node, 256 * MiB, model="nccl", launch=how).time
           for how in ("gpus-per-process=8", "gpus-per-process=8+graph")]
    assert big[0] == pytest.approx(big[1])


def test_symmetric_kernels_take_fewer_sms_and_less_time():
    node = cl.nvswitch_node("dgx-h100")
    plain = cl.estimate("all_reduce", node, 64 * 1024, model="nccl")
    reg = cl.estimate("all_reduce", node, 64 * 1024, model="nccl", registered=True)
    assert reg.time < plain.time
    assert reg.channels < plain.channels
    assert reg.time >= reg.bound.time
