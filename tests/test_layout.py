"""Tests for collectives_lib.draw.layout: positions as data, checked without drawing.

Every layout is a value computed with numpy only. The first test loads the module
in a fresh interpreter where matplotlib cannot be imported (and without the drawing
package's __init__, which refuses to load without matplotlib) and runs every layout;
the others check properties of the positions: rings on the unit circle, grids at
``Torus.coords``, fat-tree levels in order of height, no two nodes in one place."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import collectives_lib as cl
from collectives_lib.draw import layout as L

POD = cl.tpu_pod("v5e")                                   # 16x16 torus
SLICE44 = cl.tpu_slice("v5e", "4x4")
V4 = cl.tpu_slice("v4", "4x4x4")
SYSTEM = cl.tpu_system("v5e", "4x4", num_slices=2)
CLUSTER = cl.GpuCluster("dgx-h100", num_nodes=4, oversubscription=2.0)
SUPERPOD = cl.superpod()


def distinct(points: np.ndarray) -> bool:
    """No two rows of ``points`` at the same place (to a thousandth of a chip)."""
    return len(np.unique(np.round(points, 3), axis=0)) == len(points)


# --------------------------------------------------------------------------
# no matplotlib
# --------------------------------------------------------------------------

def test_every_layout_runs_with_matplotlib_blocked():
    code = textwrap.dedent("""
        import importlib.util, pathlib, sys
        sys.modules["matplotlib"] = None          # any import of matplotlib now fails
        import collectives_lib as cl
        here = pathlib.Path(cl.__file__).parent / "draw"
        spec = importlib.util.spec_from_file_location(
            "collectives_lib.draw", here / "__init__.py", submodule_search_locations=[str(here)])
        sys.modules["collectives_lib.draw"] = importlib.util.module_from_spec(spec)  # not executed
        from collectives_lib.draw import layout as L
        pod, system = cl.tpu_pod("v5e"), cl.tpu_system("v5e", "4x4", num_slices=2)
        assert L.ring_layout(8).shape == (8, 2)
        assert L.grid_layout(pod).shape == (256, 2) and L.grid_coords(pod).shape == (256, 2)
        assert L.grid_layout(cl.tpu_slice("v4", "4x4x4"), plane=1).shape == (64, 2)
        import numpy as np
        ids, paths, wraps = L.torus_link_paths(pod, L.grid_layout(pod), {0: np.array([1.0, 0.0]), 1: np.array([0.0, 1.0])})
        assert len(paths) == len(pod.links) == len(wraps)
        assert L.isometric_box((0, 0, 0), (16, 20, 28)).shape == (3, 4, 2)
        assert L.isometric_grid((16, 20, 28), 4).shape[1:] == (2, 2)
        assert L.star_layout(72).nodes.shape == (72, 2)
        assert L.fat_tree_layout(cl.GpuCluster("dgx-h100", 4)).gpus.shape == (32, 2)
        assert L.fat_tree_layout(cl.superpod()).aggregate
        assert L.cluster_layout(16, 8, 8).gpus.shape == (16, 2)
        assert L.tpu_system_layout(system).chips.shape == (32, 2)
        assert L.schedule_layout(cl.build("all_gather", 8, "ring"), None).kind == "ring"
        assert L.packet_places(3, 4, 5, True)
        assert len(L.rects([0, 1], [0, 0], 1, 1)) == 2 and L.arrow_heads([np.array([[0.0, 0.0], [1.0, 0.0]])], 0.2).shape == (1, 3, 2)
        assert sys.modules["matplotlib"] is None
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_layout_module_never_mentions_matplotlib():
    source = open(L.__file__).read()
    assert "import matplotlib" not in source and "from matplotlib" not in source


# --------------------------------------------------------------------------
# rings, grids, 3D boxes
# --------------------------------------------------------------------------

@pytest.mark.parametrize("n", [2, 3, 8, 72], ids=lambda n: f"ring{n}")
def test_ring_positions_lie_on_the_unit_circle_clockwise_from_the_top(n):
    pos = L.ring_layout(n)
    assert np.allclose(np.hypot(pos[:, 0], pos[:, 1]), 1.0)
    assert np.allclose(pos[0], (0.0, 1.0))
    angles = np.unwrap(np.arctan2(pos[:, 1], pos[:, 0]))
    assert np.all(np.diff(angles) < 0)          # clockwise
    assert distinct(pos)
    assert np.allclose(np.hypot(*L.ring_layout(n, radius=0.45).T), 0.45)


@pytest.mark.parametrize("topo", [POD, SLICE44, cl.Ring(8, bandwidth=1e9), cl.Chain(5, bandwidth=1e9), V4],
                         ids=["pod16x16", "slice4x4", "ring8", "chain5", "v4"])
def test_grid_coordinates_are_the_torus_coordinates(topo):
    coords = L.grid_coords(topo)
    assert [tuple(c) for c in coords.tolist()] == [topo.coords(r) for r in range(topo.num_ranks)]
    if len(topo.dims) <= 2:
        pos = L.grid_layout(topo)
        assert np.array_equal(pos[:, 0], coords[:, 0])
        assert np.array_equal(pos[:, 1], coords[:, 1] if len(topo.dims) == 2 else np.zeros(topo.num_ranks))
        assert distinct(pos)


def test_a_3d_torus_plane_keeps_only_its_chips():
    for z in range(V4.dims[2]):
        pos = L.grid_layout(V4, plane=z)
        shown = ~np.isnan(pos[:, 0])
        assert shown.sum() == 16 and all(V4.coords(r)[2] == z for r in np.nonzero(shown)[0])
        assert distinct(pos[shown])


def test_wraparound_links_become_two_stubs_and_the_others_straight_segments():
    ids, paths, wraps = L.torus_link_paths(POD, L.grid_layout(POD), {0: np.array([1.0, 0.0]),
                                                                      1: np.array([0.0, 1.0])})
    assert np.array_equal(wraps, POD.is_wrap_link()[ids])
    for path, wrap in zip(paths, wraps):
        assert len(path) == (5 if wrap else 2) and np.isnan(path).any() == wrap
    pairs = L.undirected_links(POD, np.arange(len(POD.links)))
    assert len(pairs) == len(POD.links) // 2


def test_isometric_projection_puts_z_up_and_the_box_faces_on_its_corners():
    assert np.allclose(L.isometric([0, 0, 0]), (0, 0))
    assert np.allclose(L.isometric([0, 0, 1]), (0, 1))
    assert L.isometric([1, 0, 0])[0] > 0 > L.isometric([0, 1, 0])[0]
    X, Y, Z = 16, 20, 28
    faces = L.isometric_box((0, 0, 0), (X, Y, Z))
    top, right, front = faces
    assert np.allclose(top[2], L.isometric([X, Y, Z])) and np.allclose(right[0], L.isometric([X, 0, 0]))
    assert top[:, 1].min() > L.isometric([X, Y, 0])[1]  # the top face is above the bottom corner
    grid = L.isometric_grid((X, Y, Z), 4)
    assert len(grid) == 2 * (X // 4 - 1) + 2 * (Y // 4 - 1) + 2 * (Z // 4 - 1)
    assert L.isometric_grid((4, 4, 4), 4).shape == (0, 2, 2)


# --------------------------------------------------------------------------
# switches, fat trees, GPU clusters, TPU systems
# --------------------------------------------------------------------------

@pytest.mark.parametrize("n", [8, 72], ids=["dgx8", "nvl72"])
def test_star_spokes_run_from_each_endpoint_to_the_switch_edge(n):
    star = L.star_layout(n)
    assert np.allclose(np.hypot(*star.nodes.T), 1.0) and distinct(star.nodes)
    inner, outer = star.spokes[:, 0], star.spokes[:, 1]
    assert np.allclose(np.hypot(*inner.T), 1 - star.node_radius)
    assert np.allclose(np.abs(outer).max(axis=1), star.hub_half)      # on the square's boundary
    assert star.node_radius * 2 < np.hypot(*(star.nodes[0] - star.nodes[1]))  # circles do not touch


def test_fat_tree_levels_are_ordered_by_height_and_no_two_parts_share_a_place():
    lay = L.fat_tree_layout(CLUSTER)
    lv = lay.levels
    assert lv["nvswitch"] < lv["gpu"] < lv["leaf"] < lv["spine"]
    assert not lay.aggregate
    assert np.all(lay.gpus[:, 1] == lv["gpu"]) and np.all(lay.nvswitches[:, 1] == lv["nvswitch"])
    assert np.all(lay.leaves[:, 1] == lv["leaf"]) and np.all(lay.spine[:, 1] == lv["spine"])
    everything = np.concatenate([lay.gpus, lay.nvswitches, lay.leaves])
    assert distinct(everything)
    g = CLUSTER.gpus_per_node
    for node in range(CLUSTER.num_nodes):    # each NVSwitch bar is centred under its node's GPUs
        xs = lay.gpus[node * g:(node + 1) * g, 0]
        assert lay.nvswitches[node, 0] == pytest.approx((xs.min() + xs.max()) / 2)
        assert xs.max() - xs.min() < lay.nvswitch_width
    lo, hi = lay.xlim
    assert lo < everything[:, 0].min() and everything[:, 0].max() < hi
    assert lo < lay.spine[0, 0] < lay.spine[1, 0] < hi


def test_superpod_levels_lay_out_scalable_units_with_their_leaves():
    lay = L.fat_tree_layout(SUPERPOD)
    assert lay.aggregate and np.isnan(lay.gpus).all()
    assert len(lay.sus) == SUPERPOD.num_sus and np.all(np.diff(lay.sus[:, 0]) > lay.su_width)
    assert np.allclose(lay.sus[:, 1] - lay.sus[:, 0], lay.su_width)
    rails = SUPERPOD.rails
    for su, (lo, hi) in enumerate(lay.sus):
        xs = lay.leaves[su * rails:(su + 1) * rails, 0]
        assert np.all((lo < xs) & (xs < hi)) and np.all(np.diff(xs) > 0)
    assert distinct(lay.leaves)
    assert not L.fat_tree_layout(SUPERPOD, aggregate=False).aggregate


def test_gpus_by_node_sit_below_one_leaf_per_rail():
    lay = L.cluster_layout(16, 8, 4)
    assert lay.gpus.shape == (16, 2) and distinct(lay.gpus)
    assert lay.gpus[8, 0] - lay.gpus[0, 0] == pytest.approx(lay.pitch)
    assert np.all(lay.leaves[:, 1] > lay.gpus[:, 1].max()) and lay.spine_y > lay.leaves[:, 1].max()
    assert len(lay.leaves) == 4 and distinct(lay.leaves)
    assert np.all(lay.node_x0 < lay.gpus[::8, 0])


@pytest.mark.parametrize("system", [SLICE44, SYSTEM, cl.tpu_system("v5e", "16x16", num_slices=2)],
                         ids=["slice4x4", "system2x4x4", "system2x16x16"])
def test_tpu_system_hosts_sit_among_their_chips_and_slices_apart(system):
    lay = L.tpu_system_layout(system)
    sl = system if isinstance(system, cl.topology.TpuSlice) else system.slice
    num_slices = 1 if isinstance(system, cl.topology.TpuSlice) else system.num_slices
    assert lay.chips.shape == (sl.num_ranks * num_slices, 2) and distinct(lay.chips)
    for h, where in enumerate(lay.hosts):
        assert np.allclose(where, lay.chips[lay.host_of == h].mean(0))
    for s in range(1, num_slices):    # slices side by side, not overlapping
        prev = lay.chips[(s - 1) * sl.num_ranks:s * sl.num_ranks, 0]
        this = lay.chips[s * sl.num_ranks:(s + 1) * sl.num_ranks, 0]
        assert this.min() > prev.max() + 1
    if num_slices > 1 or isinstance(system, cl.topology.TpuSystem):
        assert lay.dcn[1] > lay.chips[:, 1].max()
        assert lay.dcn[0] == pytest.approx((lay.chips[:, 0].min() + lay.chips[:, 0].max()) / 2)
    else:
        assert lay.dcn is None
    with pytest.raises(cl.CollectivesError, match="2D slices"):
        L.tpu_system_layout(V4)


def test_schedule_layout_uses_the_grid_of_a_2d_torus_and_a_ring_otherwise():
    torus = cl.Torus((4, 4), bandwidth=1e9)
    grid = L.schedule_layout(cl.build("all_gather", torus), torus)
    assert grid.kind == "grid" and np.array_equal(grid.positions, L.grid_layout(torus))
    ring = L.schedule_layout(cl.build("all_gather", 8, "ring"), None)
    assert ring.kind == "ring" and np.allclose(ring.positions, L.ring_layout(8))
    sharp = L.schedule_layout(cl.build("all_reduce", 8, "sharp"), cl.nvswitch_node("dgx-h100"))
    assert sharp.positions.shape == (9, 2) and np.allclose(sharp.positions[8], (0, 0))  # the switch agent
    assert distinct(sharp.positions)


def test_packets_all_arrive_and_never_share_a_link():
    hops, packets = 3, 4
    for pipelined in (False, True):
        end = hops * packets + 1
        assert L.packet_places(hops, packets, end, pipelined) == [("node", hops)] * packets
        assert L.packet_places(hops, packets, 0, pipelined) == [("node", 0)] * packets
        for slot in range(end + 1):
            links = [w for kind, w in L.packet_places(hops, packets, slot, pipelined) if kind == "link"]
            assert len(links) == len(set(links))


# --------------------------------------------------------------------------
# layouts are values
# --------------------------------------------------------------------------

@pytest.mark.parametrize("make", [lambda: L.star_layout(8), lambda: L.fat_tree_layout(CLUSTER),
                                  lambda: L.cluster_layout(16, 8, 8), lambda: L.tpu_system_layout(SYSTEM),
                                  lambda: L.schedule_layout(cl.build("all_gather", 8, "ring"), None)],
                         ids=["star", "fat_tree", "cluster", "tpu_system", "schedule"])
def test_layouts_are_frozen_values(make):
    lay = make()
    field = dataclasses.fields(lay)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(lay, field, None)
    arrays = [v for v in vars(lay).values() if isinstance(v, np.ndarray)]
    assert arrays
    for a in arrays:
        with pytest.raises(ValueError, match="read-only"):
            a.flat[0] = 1
