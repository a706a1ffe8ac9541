"""Library code introduced in the chapter *All-to-all: a sharded transpose*: the
all-to-all closed forms for any mesh, the summary of every TPU collective, and
replay on the caller's data (the MoE transpose)."""
import numpy as np
import pytest

import collectives_lib as cl
from collectives_lib import costs
from collectives_lib.analysis import SUMMARY_COLUMNS, torus_summary
from collectives_lib.builders.rings import axis_kind

W = 45e9


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8, 16])
@pytest.mark.parametrize("kind, formula", [("ring", costs.ring_all_to_all),
                                           ("bidirectional_ring", costs.bidirectional_ring_all_to_all),
                                           ("chain", costs.chain_all_to_all)])
def test_line_load_gives_the_line_formulas(n, kind, formula):
    V = 1e9
    assert costs.line_all_to_all_load(n, kind) * V / (n * n * W) == pytest.approx(formula(n, V, W), rel=1e-12)
    assert costs.torus_all_to_all((n,), kind, V, W) == pytest.approx(formula(n, V, W), rel=1e-12)


def test_bidirectional_ring_load_is_an_eighth_of_n_squared_for_even_n():
    for n in (4, 8, 16, 32):
        assert costs.line_all_to_all_load(n, "bidirectional_ring") == n * n / 8


@pytest.mark.parametrize("gen, shape", [("v5e", "4x4"), ("v5e", "8x16"), ("v5e", "16x16"), ("v5e", "2x8"),
                                        ("v5p", "4x4x4"), ("v5p", "4x4x8")],
                         ids=lambda x: x if isinstance(x, str) else None)
def test_torus_all_to_all_matches_direct_schedule(gen, shape):
    topo = cl.tpu_slice(gen, shape, latency=0.0)
    kinds = [axis_kind(topo, a) for a in range(len(topo.dims))]
    sched = cl.build("all_to_all", topo, "direct")
    size = sched.round_size(2**30 // topo.num_ranks)      # one chip's buffer, as nccl-tests counts
    V = sched.array_bytes(size)
    assert cl.simulate(sched, topo, size).time == pytest.approx(
        costs.torus_all_to_all(topo.dims, kinds, V, topo.bandwidth), rel=1e-9)


def test_square_torus_all_to_all_is_v_over_8kw():
    assert costs.torus_all_to_all((16, 16), "bidirectional_ring", 1e9, W) == pytest.approx(1e9 / (8 * 16 * W))


@pytest.mark.parametrize("gen, shape", [("v5e", "4x4"), ("v5e", "8x16"), ("v5e", "16x16"), ("v5p", "4x4x4")],
                         ids=lambda x: x if isinstance(x, str) else None)
def test_summary_simulator_agrees_with_closed_forms(gen, shape):
    rows = torus_summary(cl.tpu_slice(gen, shape), 2**30)
    assert len(rows) == 16
    assert [r.column for r in rows[:4]] == list(SUMMARY_COLUMNS)
    for r in rows:
        if r.time is None:
            assert r.column in ("ring", "bidirectional_ring") and "wraparound" in r.note
        else:
            assert r.time == pytest.approx(r.closed_form, rel=1e-9), (r.collective, r.column)


def test_summary_headline_coefficients_on_a_v5e_pod():
    rows = {(r.collective, r.column): r for r in torus_summary(cl.tpu_pod("v5e"), 2**30)}
    # a ring of 16 at the bound: (N-1)/(2N) = 15/32 of V / W (about V / (2W))
    assert rows["all_gather", "bidirectional_ring"].coefficient == pytest.approx(15 / 32)
    assert rows["reduce_scatter", "bidirectional_ring"].coefficient == pytest.approx(15 / 32)
    assert rows["all_reduce", "bidirectional_ring"].coefficient == pytest.approx(15 / 16)
    assert rows["all_to_all", "bidirectional_ring"].coefficient == pytest.approx(1 / 8)
    assert rows["all_to_all", "chain"].coefficient == pytest.approx(1 / 4)   # chain ignores the wraparound
    assert rows["all_gather", "all_axes"].coefficient == pytest.approx(255 / 1024)   # (1 - 1/N) / 4


def test_summary_on_a_slice_without_wraparound_says_why():
    rows = {(r.collective, r.column): r for r in torus_summary(cl.tpu_slice("v5e", "4x4"), 2**20)}
    note = rows["all_gather", "ring"].note
    assert note.startswith("ring needs a wraparound link on axis x (size 4)")
    assert rows["all_gather", "chain"].coefficient == pytest.approx(3 / 4)


def test_summary_rejects_bad_input():
    with pytest.raises(cl.CollectivesError, match="needs a torus"):
        torus_summary(cl.Switch(8, bandwidth=W), 2**20)
    with pytest.raises(cl.CollectivesError, match="positive number of bytes"):
        torus_summary(cl.tpu_slice("v5e", "4x4"), 0)


@pytest.mark.parametrize("builder", [(lambda n, x=None, **k: cl.build("all_to_all", n, "bidirectional_ring", **({"matrix": x} if x is not None else {}), **k)), (lambda n, x=None, **k: cl.build("all_to_all", n, "ring", **({"matrix": x} if x is not None else {}), **k)),
                                     (lambda n, x=None, **k: cl.build("all_to_all", n, "chain", **({"matrix": x} if x is not None else {}), **k))])
def test_replay_inputs_transposes_blocks(builder):
    n = 4
    sched = builder(n)
    parts = sched.slot_shape[2]
    x = np.arange(n * sched.num_slots * 3, dtype=float).reshape(n, sched.num_slots, 3)
    final = cl.replay_inputs(sched, x)[-1].values[:n].reshape(n, n, n, parts, 3)
    sent = x.reshape(n, n, n, parts, 3)
    for dst in range(n):
        for origin in range(n):
            np.testing.assert_array_equal(final[dst, origin, dst], sent[origin, origin, dst])


def test_replay_inputs_reads_only_held_slots():
    sched = cl.build("all_gather", 4, "ring")
    x = np.ones((4, 4, 1))
    start = cl.replay_inputs(sched, x)[0].values[:, :, 0]
    np.testing.assert_array_equal(start, np.eye(4))


def test_replay_inputs_checks_shape():
    with pytest.raises(cl.ScheduleError, match=r"inputs must have shape \(ranks, slots, elements\) = \(4, 4, E\)"):
        cl.replay_inputs(cl.build("all_gather", 4, "ring"), np.zeros((4, 5, 1)))


@pytest.mark.parametrize("n", [4, 8], ids=lambda n: f"ring{n}")
def test_draw_all_to_all_blocks_counts_cells_and_arrivals(n):
    sched = cl.build("all_to_all", n, "bidirectional_ring")
    states = cl.replay(sched, elements=1)
    start = cl.draw.draw_all_to_all_blocks(sched, 0, states=states)
    assert len(start["cells"]) == n and all(len(c.get_paths()) == n * n for c in start["cells"])
    assert start["written"] is None
    assert f"after 0 of {sched.num_steps} steps: {n} of {n * n} blocks" in start["alt"]
    end = cl.draw.draw_all_to_all_blocks(sched, sched.num_steps, states=states)
    assert sum(len(f.get_paths()) for f in end["fills"]) == n * n        # every block arrived
    assert f"{n * n} of {n * n} blocks have reached" in end["alt"]
    mid = cl.draw.draw_all_to_all_blocks(sched, 1, states=states)
    assert sum(len(w.get_paths()) for w in mid["written"]) > 0
    import matplotlib.pyplot as plt
    plt.close("all")


def test_draw_all_to_all_blocks_on_a_slice_shows_one_line():
    s44 = cl.tpu_slice("v5e", "4x4")
    sched = cl.build("all_to_all", s44, "chain", axes="x")
    art = cl.draw.draw_all_to_all_blocks(sched, sched.num_steps, group=1)
    assert [a.get_title() for a in art["axes"]] == ["rank 1", "rank 5", "rank 9", "rank 13"]
    import matplotlib.pyplot as plt
    plt.close("all")


def test_draw_all_to_all_blocks_rejects_other_collectives():
    with pytest.raises(cl.CollectivesError, match="draws all-to-all schedules, not all_gather"):
        cl.draw.draw_all_to_all_blocks(cl.build("all_gather", 4, "ring"))
    with pytest.raises(cl.CollectivesError, match=r"after must be 0\.\.3"):
        cl.draw.draw_all_to_all_blocks(cl.build("all_to_all", 4, "ring"), 7)


def test_summary_on_a_one_way_torus_explains_instead_of_failing():
    rows = {(r.collective, r.column): r for r in torus_summary(cl.Torus((4, 4), bandwidth=W, bidirectional=False),
                                                              2**20)}
    assert rows["all_gather", "ring"].coefficient == pytest.approx(3 / 4)
    assert rows["all_gather", "chain"].note.startswith("chain needs links both ways")
    for r in rows.values():
        assert (r.time is None) == bool(r.note)
        if r.time is not None:
            assert r.time == pytest.approx(r.closed_form, rel=1e-9)


@pytest.mark.parametrize("lhs, rhs, case, collective, operand, axis, nbytes, out", [
    ("I_X,J", "J,K_Y", 1, None, None, None, 0, "I_X,K_Y"),
    ("I,J_X", "J,K", 2, "all_gather", "A", "X", 1024 * 2048 * 2, "I,K"),
    ("I_Y,J", "J_X,K", 2, "all_gather", "B", "X", 2048 * 4096 * 2, "I_Y,K"),
    ("I_Y,J_X", "J_X,K", 3, "all_reduce", "C", "X", 1024 * 4096 * 2 / 16, "I_Y,K"),
    # case 4 gathers the smaller operand: A (1024 x 2048) is half of B (2048 x 4096) here
    ("I_X,J", "J,K_X", 4, "all_gather", "A", "X", 1024 * 2048 * 2, "I,K_X"),
])
def test_sharded_matmul_follows_the_scaling_books_four_cases(lhs, rhs, case, collective, operand, axis,
                                                             nbytes, out, shape=(1024, 2048, 4096)):
    pod = cl.tpu_pod("v5e")
    m = cl.workloads.sharded_matmul(lhs, rhs, shape=shape, topology=pod)
    assert (m.case, m.collective, m.operand, m.axis, m.out) == (case, collective, operand, axis, out)
    assert m.nbytes == nbytes
    if collective is None:
        assert m.time is None and "no communication" in str(m)
    else:
        e = cl.estimate(collective, pod, nbytes, axes=axis.lower())
        assert m.time == pytest.approx(e.time) and m.bound == pytest.approx(e.bound.time)


def test_sharded_matmul_case_4_gathers_b_when_b_is_the_smaller():
    # B (2048 x 1024) is half of A (4096 x 2048): gathering it moves half the bytes
    pod = cl.tpu_pod("v5e")
    m = cl.workloads.sharded_matmul("I_X,J", "J,K_X", shape=(4096, 2048, 1024), topology=pod)
    a = cl.workloads.sharded_matmul("I_X,J", "J,K_X", shape=(1024, 2048, 4096), topology=pod)
    assert (m.operand, m.out, m.nbytes) == ("B", "I_X,K", 2048 * 1024 * 2)
    assert m.time == pytest.approx(cl.estimate("all_gather", pod, 2048 * 1024 * 2, axes="x").time)
    assert a.time == pytest.approx(m.time)     # the same bytes either way round: the same time
    assert "the smaller operand" in m.rule


@pytest.mark.parametrize("lhs, rhs, message", [
    ("I,J_X", "J_Y,K", "J is sharded over X in A but over Y in B"),
    ("I_X,J_X", "J,K", "sharded twice over the same mesh axis"),
    ("I,J", "K,J", "rhs must be J"),
    ("I,J,K", "J,K", "lhs must name two dimensions"),
    ("I,J_Z", "J,K", "mesh axis 'Z' is not an axis of"),
])
def test_sharded_matmul_errors(lhs, rhs, message):
    with pytest.raises(cl.CollectivesError, match=message):
        cl.workloads.sharded_matmul(lhs, rhs, topology=cl.tpu_pod("v5e"))


def test_sharded_matmul_markdown_has_a_row_per_case():
    table = cl.workloads.sharded_matmul_markdown([("I_X,J", "J,K_Y"), ("I,J_X", "J_X,K")],
                                                 shape=(1024, 2048, 4096), topology=cl.tpu_pod("v5e"))
    rows = table.splitlines()
    assert len(rows) == 4 and "| 1 | none |" in rows[2] and "all-reduce of C over X" in rows[3]


@pytest.mark.parametrize("n", [4, 16, 64], ids=lambda n: f"ring{n}")
def test_all_to_all_explorer_curves_follow_the_link_loads(n):
    # for a large V on a bidirectional ring of even n: V/(8W) (each link carries V/8), the
    # chain's middle link V/4, the one-way ring (n-1)/(2n) V/W, and the all-gather of the
    # same V on the ring (n-1)/n V/(2W): 4(n-1)/n times the all-to-all
    W = 4.5e10
    c = cl.analysis.all_to_all_curves(n, W, 0.0)
    big = c["sizes"] >= 2**30
    V = c["sizes"][big]
    assert np.allclose(c["bidirectional ring"][big], V / (8 * W), rtol=1e-3)
    assert np.allclose(c["chain"][big], V / (4 * W), rtol=1e-3)
    assert np.allclose(c["one-way ring"][big], (n - 1) / (2 * n) * V / W, rtol=1e-3)
    assert np.allclose(c["all_gather"][big] / c["bidirectional ring"][big], 4 * (n - 1) / n, rtol=1e-3)
    assert np.all(c["bound"] <= c["bidirectional ring"] * (1 + 1e-9))


def test_all_to_all_explorer_draws_and_refuses_bad_input():
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    curves = cl.analysis.all_to_all_curves(8, 4.5e10, 1e-6)
    art = cl.draw.draw_all_to_all_explorer(curves, 2**30)
    art["figure"].canvas.draw()
    assert len(art["lines"]) == 4 and "8 chips" in art["alt"] and "1 GiB" in art["box"].get_text()
    with pytest.raises(cl.CollectivesError, match="n must be a whole number of chips >= 2"):
        cl.analysis.all_to_all_curves(1, 4.5e10, 1e-6)
    with pytest.raises(cl.CollectivesError, match="nbytes must be positive"):
        cl.draw.draw_all_to_all_explorer(curves, 0)
