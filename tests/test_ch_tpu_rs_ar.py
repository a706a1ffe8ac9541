"""Library code introduced in the chapter *Reduce-scatter and all-reduce: the dual
of all-gather*: the closed form of the multi-axis and sequential-axes all-gather on
a mesh of any shape, held against the simulator, and the duality it relies on."""
import numpy as np
import pytest

import collectives_lib as cl
from collectives_lib import costs
from collectives_lib.builders.rings import axis_kind

SLICES = [("v5e", "4x4"), ("v5e", "8x16"), ("v5e", "16x16"), ("v5e", "2x8"), ("v5p", "4x4x4"),
          ("v5p", "4x4x8"), ("v5p", "2x4x4")]


def _id(case):
    return f"{case[0]}-{case[1]}"


@pytest.mark.parametrize("case", SLICES, ids=_id)
@pytest.mark.parametrize("algorithm", ["multi_axis", "sequential_axes"])
@pytest.mark.parametrize("collective, factor", [("all_gather", 1), ("reduce_scatter", 1), ("all_reduce", 2)])
def test_multi_axis_closed_form_matches_simulator(case, algorithm, collective, factor):
    topo = cl.tpu_slice(*case)
    kinds = [axis_kind(topo, a) for a in range(len(topo.dims))]
    sched = cl.build(collective, topo, algorithm)
    V = sched.round_size(3 * 2**28)
    want = factor * costs.multi_axis_all_gather(topo.dims, kinds, V, topo.bandwidth, topo.latency,
                                                multi=algorithm == "multi_axis")
    assert cl.simulate(sched, topo, V).time == pytest.approx(want, rel=1e-9)


@pytest.mark.parametrize("n", [4, 8, 16])
@pytest.mark.parametrize("wrap", [True, False], ids=["torus", "mesh"])
def test_square_case_agrees_with_mesh_all_gather(n, wrap):
    kinds = ["bidirectional_ring" if wrap else "chain"] * 2
    for multi in (True, False):
        assert costs.multi_axis_all_gather((n, n), kinds, 1e9, 45e9, 1e-6, multi=multi) == pytest.approx(
            costs.mesh_all_gather((n, n), 1e9, 45e9, 1e-6, wraparound=wrap, multi=multi), rel=1e-12)


@pytest.mark.parametrize("dims, speedup", [((16, 16), 2.0), ((4, 4, 4), 3.0), ((4, 4), 2.0)],
                         ids=["torus16x16", "torus4x4x4", "mesh4x4"])
def test_using_every_axis_divides_time_by_the_number_of_axes(dims, speedup):
    kinds = ["bidirectional_ring"] * len(dims)
    seq = costs.multi_axis_all_gather(dims, kinds, 1e9, 45e9, multi=False)
    multi = costs.multi_axis_all_gather(dims, kinds, 1e9, 45e9, multi=True)
    assert seq / multi == pytest.approx(speedup, rel=1e-12)


def test_one_axis_is_the_line_formula():
    assert costs.multi_axis_all_gather((16,), "bidirectional_ring", 1e9, 45e9, 1e-6) == pytest.approx(
        costs.bidirectional_ring_all_gather(16, 1e9, 45e9, 1e-6))
    assert costs.multi_axis_all_gather((8,), ["chain"], 1e9, 45e9) == pytest.approx(
        costs.chain_all_gather(8, 1e9, 45e9))


def test_line_steps():
    assert [costs.line_steps(n, "bidirectional_ring") for n in (2, 3, 4, 8, 16)] == [1, 1, 2, 4, 8]
    assert costs.line_steps(16, "ring") == costs.line_steps(16, "chain") == 15


def test_bad_kinds_are_named():
    with pytest.raises(cl.CollectivesError, match="unknown axis kind 'torus'"):
        costs.multi_axis_all_gather((4, 4), ["torus", "chain"], 1e9, 45e9)
    with pytest.raises(cl.CollectivesError, match="kinds has 1 entries but dims"):
        costs.multi_axis_all_gather((4, 4), ["chain"], 1e9, 45e9)


@pytest.mark.parametrize("n", [4, 8])
def test_dual_reverses_every_transfer_and_reduces(n):
    ag = cl.build("all_gather", n, "ring")
    rs = cl.dual(ag)
    assert rs.collective == "reduce_scatter" and rs.num_steps == ag.num_steps
    for k in range(ag.num_steps):
        fwd = {(t.src, t.dst, t.chunk) for t in ag.transfers(k)}
        back = {(t.dst, t.src, t.chunk) for t in rs.transfers(ag.num_steps - 1 - k)}
        assert fwd == back
        assert all(t.op is cl.Op.REDUCE for t in rs.transfers(k))
    cl.check(rs)


def test_reduce_scatter_contributions_grow_by_one_per_step():
    states = cl.check(cl.reduce_scatter_from(cl.build("all_gather", 4, "ring")))
    owned = [np.diag(s.count()) for s in states]       # rank r's own block r
    assert [list(o) for o in owned] == [[1] * 4, [1] * 4, [1] * 4, [4] * 4]
    assert [int(s.count().max()) for s in states] == [1, 2, 3, 4]


def test_multislice_all_reduce_stages_by_hand():
    # v5e 4x4 slices, two of them, 16 MiB per chip. Inside a slice: the library's
    # reduce-scatter and all-gather. Across: chip c and its twin swap halves of their
    # 1 MiB shard twice (ring of 2 slices: 2 steps of 512 KiB); the 8 chips of a host
    # share its 8 x 3.125 GB/s DCN port, so a step takes 8 x 512 KiB / 25 GB/s.
    V = 16 * 2**20
    m = cl.workloads.multislice_all_reduce("v5e", "4x4", 2, V)
    s44 = cl.tpu_slice("v5e", "4x4")
    assert m.stages[0].seconds == pytest.approx(cl.estimate("reduce_scatter", s44, V).time)
    assert m.stages[2].seconds == pytest.approx(cl.estimate("all_gather", s44, V).time)
    step = 8 * (V / 16 / 2) / 25e9
    # each step crosses PCIe, the DCN out and in, and PCIe: the latency it pays
    cross = 2 * float(cl.hardware.TPU_PCIE_LATENCY) + 2 * float(cl.hardware.DCN_LATENCY)
    assert m.dcn_steps == 2
    assert m.dcn_latency == pytest.approx(2 * cross)
    assert m.stages[1].seconds == pytest.approx(2 * step + 2 * cross)
    assert m.dcn_bound == pytest.approx(2 * step)     # the DCN stage: its bound plus latency
    # 16x the DCN bytes without ICI first
    assert m.dcn_only == pytest.approx(2 * 8 * (V / 2) / 25e9 + 2 * cross)
    assert m.time_sequential == pytest.approx(sum(st.seconds for st in m.stages))


@pytest.mark.parametrize("kwargs, message", [
    ({"num_slices": 1}, "num_slices must be a whole number >= 2"),
    ({"num_slices": 2.5}, "num_slices must be a whole number >= 2"),
    ({"nbytes": 0}, "nbytes must be positive"),
])
def test_multislice_all_reduce_errors(kwargs, message):
    args = {"generation": "v5e", "shape": "4x4", "num_slices": 2, "nbytes": 2**20} | kwargs
    with pytest.raises(cl.CollectivesError, match=message):
        cl.workloads.multislice_all_reduce(**args)


def test_multislice_figure_streams_at_the_busiest_resource_above_the_bound():
    # the two ICI stages share the slice's links: the streamed bar is their sum, labelled
    # as the busiest resource, both outlined, and the dashed bound lies below it
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    V = 16 * 2**20
    m = cl.workloads.multislice_all_reduce("v5e", "4x4", 2, V)
    bound = cl.estimate("all_reduce", cl.tpu_system("v5e", "4x4", 2), V).bound.time
    art = cl.draw.draw_pipeline(m, bound=bound, bound_label="lower bound")
    ax = art["axes"]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[-1] == "streamed: busiest resource"
    ici = m.stages[0].seconds + m.stages[2].seconds
    widths = [b[0].get_width() for b in art["bars"]]
    assert art["streamed"][0].get_width() == pytest.approx(widths[0] + widths[2])
    assert m.time_streamed == pytest.approx(ici) and m.time_streamed >= bound
    outlined = [b[0].get_linewidth() for b in art["bars"]]
    assert outlined[0] == outlined[2] > outlined[1]          # the ICI stages, not the DCN one
    assert "share ICI links and cannot overlap" in art["alt"] and "lower bound" in art["alt"]
    dashed = [ln for ln in ax.get_lines() if ln.get_linestyle() == "--"]
    assert len(dashed) == 1
    with pytest.raises(cl.CollectivesError, match="bound must be a positive time"):
        cl.draw.draw_pipeline(m, bound=-1.0)
