"""The Foundations chapters' drawings (cl.draw.alpha_beta, .schemes, .server) draw headless,
count what they promise and refuse bad input with the library's error."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("matplotlib")

import collectives_lib as cl  # noqa: E402


def test_message_time_marks_the_size_and_names_the_regime():
    art = cl.draw.draw_message_time(450e9, 0.6e-6, 1e3, title="NVLink")
    assert art["marker"].get_xdata()[0] == 1e3
    assert art["marker"].get_ydata()[0] == pytest.approx(0.6e-6 + 1e3 / 450e9)
    assert len(art["bars"]) == 2
    assert "latency-bound" in art["alt"]
    assert "bandwidth-bound" in cl.draw.draw_message_time(450e9, 0.6e-6, 1e9)["alt"]
    with pytest.raises(cl.CollectivesError, match="latency must be a positive number, got 0.0"):
        cl.draw.draw_message_time(450e9, 0.0, 1e3)


def test_ring_time_plots_one_point_per_size():
    ring = cl.Ring(8, bandwidth=45e9, latency=1e-6)
    sched = cl.build("all_gather", ring, "ring")
    sizes = np.logspace(3, 9, 7)
    times = cl.simulate_sizes(sched, ring, sizes)
    r = cl.simulate(sched, ring, sched.round_size(10**6))
    art = cl.draw.draw_ring_time(times, 7e-6, 7 / 8 * sizes / 45e9, sizes, r)
    assert list(art["curve"].get_ydata()) == pytest.approx(list(times))
    assert art["marker"].get_xdata()[0] == r.nbytes
    with pytest.raises(cl.CollectivesError, match="1-D of one length"):
        cl.draw.draw_ring_time(times[:3], 7e-6, sizes, sizes, r)


def test_ring_bytes_bars_are_linear_and_to_scale():
    D = 8e9
    counted = {n: cl.build("all_reduce", n, "ring").bytes_sent(D).max() for n in (2, 4, 8)}
    art = cl.draw.draw_ring_bytes(8, counted, D, naive=7 * D)
    bx = art["axes"][1]
    assert bx.get_yscale() == "linear"
    heights = [b.get_height() for b in art["bars"]]
    assert heights == pytest.approx([14e9, 56e9])   # the 4x reads as a 4x
    with pytest.raises(cl.CollectivesError, match=r"n must be one of the counted sizes \[2, 4, 8\], got 16"):
        cl.draw.draw_ring_bytes(16, counted, D, naive=15 * D)


@pytest.mark.parametrize("n", [2, 7, 8])
def test_tree_schematic_has_an_arrow_per_edge_each_way(n):
    art = cl.draw.draw_tree_all_reduce(n)
    assert len(art["nodes"]) == 2 * n
    assert len(art["arrows"]) == 2 * (n - 1)


def test_hierarchical_schematic_counts_gpus_and_network_arrows():
    art = cl.draw.draw_hierarchical_all_reduce(2, 4)
    assert len(art["nodes"]) == 3 * 8
    # two ring panels of 8 arrows each, and 4 GPU pairs crossing the network both ways
    assert len(art["arrows"]) == 8 + 8 + 2 * 4
    with pytest.raises(cl.CollectivesError, match="servers must be a whole number >= 2, got 1"):
        cl.draw.draw_hierarchical_all_reduce(1, 4)


def test_in_network_schematic_sends_up_once_and_down_once():
    art = cl.draw.draw_in_network_all_reduce(4)
    assert len(art["nodes"]) == 1 + 4
    assert len(art["arrows"]) == 2 * 4
    with pytest.raises(cl.CollectivesError, match="n must be a whole number >= 2, got 1.5"):
        cl.draw.draw_in_network_all_reduce(1.5)


def test_pcie_tree_gpudirect_path_skips_the_host():
    art = cl.draw.draw_pcie_tree()
    nodes = art["nodes"]
    host = nodes["host memory"].get_bbox()
    direct = art["routes"]["gpudirect"].get_xydata()
    staged = art["routes"]["staged"].get_xydata()
    assert not any(host.x0 <= x <= host.x1 and host.y0 <= y <= host.y1 for x, y in direct)
    assert any(host.x0 <= x <= host.x1 and host.y0 <= y <= host.y1 for x, y in staged)
    assert "GPU 0" in nodes and "NIC 0" in nodes


def test_mesh_and_switch_draws_a_line_per_pair():
    art = cl.draw.draw_mesh_and_switch(cl.FullMesh(8, bandwidth=50e9), cl.nvswitch_node("dgx-h100"))
    assert len(art["links"].get_paths()) == 28
    assert len(art["switch"]["nodes"].get_paths()) == 8
    with pytest.raises(cl.CollectivesError, match="takes a FullMesh and a Switch"):
        cl.draw.draw_mesh_and_switch(cl.nvswitch_node("dgx-h100"), cl.FullMesh(8, bandwidth=50e9))


def test_every_drawing_shows_with_its_alt_text():
    for art in (cl.draw.draw_tree_all_reduce(), cl.draw.draw_in_network_all_reduce(),
                cl.draw.draw_pcie_tree()):
        image = cl.draw.show(art)
        assert image.alt == art["alt"] and image.png.startswith(b"\x89PNG")


def test_the_drawings_take_the_axes_they_are_given_and_end_their_alt_with_a_full_stop():
    D = cl.draw
    one = {"in_network": lambda ax: D.draw_in_network_all_reduce(4, ax=ax),
           "pcie": lambda ax: D.draw_pcie_tree(ax=ax)}
    for name, draw in one.items():
        fig, ax = D.new_figure(pyplot=False)
        art = draw(ax)
        fig.canvas.draw()
        assert art["figure"] is fig and art["axes"] is ax, name
        assert art["alt"].strip().endswith("."), name
    fig, _ = D.new_figure(0, 0, pyplot=False)
    art = D.draw_hierarchical_all_reduce(2, 4, ax=fig)
    assert art["figure"] is fig and len(art["axes"]) == 3
    fig, axes = D.new_figure(1, 2, pyplot=False)
    art = D.draw_tree_all_reduce(7, ax=axes)
    assert art["axes"] == list(axes) and art["alt"].endswith(".")


def _schedule_pairs(schedule, tree, group=0):
    """(child, parent) pairs of tree ``tree`` as the schedule sends them: every reduce
    transfer carrying that tree's slots (axis 1 of the tree's (n, trees, chunks) slots),
    in the local ranks of group ``group``."""
    local = {int(r): i for i, r in enumerate(schedule.groups[group])}
    pairs = set()
    for step in schedule.steps:
        t, boxes = step.traffic, step.boxes
        for s, d, op, box in zip(t.src.tolist(), t.dst.tolist(), t.op.tolist(), boxes):
            up = op == cl.schedule.REDUCE and box[1, 0] == tree
            if up and s in local and d in local:
                pairs.add((local[s], local[d]))
    return sorted(pairs)


@pytest.mark.parametrize("n", [2, 3, 7, 8, 16])
@pytest.mark.parametrize("tree", [0, 1])
def test_tree_schematic_draws_the_tree_the_tree_schedule_uses(n, tree):
    """The drawn edges are the parent/child pairs of the library's own tree all-reduce
    (NCCL's double binary tree over n nodes, axes=node), not a hand-drawn heap."""
    cluster = cl.GpuCluster("dgx-h100", num_nodes=n)
    schedule = cl.build("all_reduce", cluster, "tree", axes="node")
    art = cl.draw.draw_tree_all_reduce(n, tree=tree)
    assert art["edges"] == _schedule_pairs(schedule, tree)
    first, second = cl.builders.trees.double_binary_tree(n)
    parent = (first, second)[tree]
    assert art["parent"].tolist() == parent.tolist()
    pairs = [(c, p) for c, p in enumerate(parent.tolist()) if p >= 0]
    assert art["edges"] == sorted(pairs)
    # one arrow per edge each way, and every GPU box where the tree layout puts it
    assert len(art["arrows"]) == 2 * len(art["edges"]) == 2 * (n - 1)
    pos = cl.draw.layout.tree_layout(parent)
    for r, box in enumerate(art["nodes"][:n]):
        x, y = box.get_x() + box.get_width() / 2, box.get_y() + box.get_height() / 2
        assert (x, y) == pytest.approx(tuple(pos[r]))
    root = int(np.nonzero(parent < 0)[0][0])
    assert f"rooted at GPU {root}" in art["alt"]


def test_tree_schematic_is_nccls_binary_tree_not_a_heap():
    art = cl.draw.draw_tree_all_reduce(7)
    # ncclGetBtree over 7: 0 -> 4 -> {2, 6}, 2 -> {1, 3}, 6 -> {5}
    assert art["edges"] == [(1, 2), (2, 4), (3, 2), (4, 0), (5, 6), (6, 4)]
    assert "NCCL's binary tree" in art["alt"] and "(its child: GPU 4)" in art["alt"]
    with pytest.raises(cl.CollectivesError, match="tree must be 0"):
        cl.draw.draw_tree_all_reduce(7, tree=2)


def test_tree_layout_puts_parents_over_their_children():
    parent = cl.builders.trees.nccl_binary_tree(16)
    pos = cl.draw.layout.tree_layout(parent)
    height, depth = cl.builders.trees.tree_levels(parent)
    assert (pos[:, 1] == -depth).all()
    for r in range(16):
        kids = np.nonzero(parent == r)[0]
        if len(kids):
            assert pos[kids, 0].min() <= pos[r, 0] <= pos[kids, 0].max()
    leaves = pos[height == 0]
    assert len(np.unique(leaves[:, 0])) == len(leaves)           # leaves never overlap
    with pytest.raises(cl.CollectivesError, match="exactly one root"):
        cl.draw.layout.tree_layout([-1, -1])
