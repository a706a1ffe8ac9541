"""TPU slices joined by DCN (issue 24, items 1 and 2): the hierarchical ICI -> DCN -> ICI
collectives as schedules, replayed on data, chosen by auto, addressable by axes; and the
multi-slice worked example never below the library's own bound."""
import pytest

import collectives_lib as cl


@pytest.mark.parametrize("gen, shape, slices", [("v5e", "4x4", 3), ("v5e", "2x4", 2), ("v5p", "2x2x2", 2)])
@pytest.mark.parametrize("collective", ["all_gather", "reduce_scatter", "all_reduce", "all_to_all"])
def test_hierarchical_schedules_across_slices_are_right_on_data(gen, shape, slices, collective):
    system = cl.tpu_system(gen, shape, slices)
    sched = cl.build(collective, system, "hierarchical")
    cl.check(sched)
    assert any("DCN" in s for s in sched.stages())


def test_auto_across_slices_is_what_xla_runs_and_near_the_bound():
    pods = cl.parse_topology("tpu-v5e:16x16*4")
    e = cl.estimate("all_reduce", pods, 2 * 10**9)
    assert e.algorithm == "hierarchical" and "what XLA runs across slices" in e.reason
    assert e.efficiency > 0.9
    flat = cl.estimate("all_reduce", pods, 2 * 10**9, "ring")
    assert flat.time > 10 * e.time                 # every byte of a flat ring crosses DCN
    # the stages: the ICI reduce-scatter and all-gather share the ICI links, DCN carries the shards
    stages = e.stages()
    dcn = stages["DCN (across slices)"].time
    ici = sum(st.time for st in stages if st.name.startswith("ICI"))
    assert e.time == pytest.approx(max(ici, dcn), rel=0.01)


def test_the_slice_axis_is_addressable():
    pods = cl.parse_topology("tpu-v5e:16x16*4")
    e = cl.estimate("all_reduce", pods, 2**20, axes="slice")
    assert (e.group_size, e.num_groups) == (4, 256)
    assert cl.estimate("all_reduce", pods, 2**20, axes=("slice", "x")).group_size == 64
    with pytest.raises(cl.CollectivesError, match="unknown axis 'pod'"):
        cl.estimate("all_reduce", pods, 2**20, axes="pod")


def test_the_worked_example_and_the_schedule_agree_and_respect_the_bound():
    """Two code paths: the worked example (the slice's own estimates and DCN flows) and the
    hierarchical schedule timed on the whole system. Stages on the same ICI links cannot
    overlap, so the streamed time is at least the bound, and both give the same time."""
    m = cl.workloads.multislice_all_reduce("v5e", "16x16", 4, 2e9)
    pods = cl.tpu_system("v5e", "16x16", 4)
    bound = cl.lower_bound("all_reduce", pods, int(2e9))
    assert m.time_streamed >= bound.time
    assert m.resource_times["ICI links"] == pytest.approx(m["ICI reduce-scatter"].seconds + m["ICI all-gather"].seconds)
    e = cl.estimate("all_reduce", pods, int(2e9))
    assert e.time == pytest.approx(m.time_streamed, rel=0.01)


def test_ici_axes_of_a_tpu_system_run_as_on_its_slice():
    """Over a slice's ICI axes (x, y), every slice of a TpuSystem runs what the slice alone
    runs: auto takes multi_axis (it took a 49% ring), at the slice's time."""
    system, alone = cl.tpu_system("v5e", "16x16", 4), cl.tpu_slice("v5e", "16x16")
    V = 2 * 10**9
    on_system = cl.estimate("all_reduce", system, V, axes=["x", "y"], model="ideal")
    on_slice = cl.estimate("all_reduce", alone, V, model="ideal")
    assert on_system.algorithm == on_slice.algorithm == "multi_axis"
    assert on_system.time == pytest.approx(on_slice.time, rel=1e-6)
    assert on_system.efficiency > 0.95


def test_str_marks_the_shared_resource_not_one_of_its_stages():
    """The ICI reduce-scatter and all-gather take turns on the same links, so the streamed
    time is their sum: the bottleneck is the ICI links, not either stage alone."""
    p = cl.workloads.multislice_all_reduce("v5e", "16x16", 4, 2e9)
    marked = [ln for ln in str(p).splitlines() if "bottleneck" in ln]
    assert len(marked) == 1 and marked[0].startswith("on ICI links")
    assert p.time_streamed == pytest.approx(p["ICI reduce-scatter"].seconds + p["ICI all-gather"].seconds)
