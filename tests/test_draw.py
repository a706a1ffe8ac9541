"""Tests for collectives_lib.draw: every drawing runs on small and large cases on
the Agg backend and returns the artists it promises, counted against the library
(one arrow per transfer, one slot per participant and slot, one square per chip,
the cut bandwidth from cut_bandwidth...). Warnings are errors: a drawing that
makes matplotlib complain would fail the book build."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.colors import to_hex, to_rgba  # noqa: E402

import collectives_lib as cl  # noqa: E402
from collectives_lib import draw as D  # noqa: E402
from collectives_lib import hardware as hw  # noqa: E402
from collectives_lib.schedule import expand_box  # noqa: E402
from collectives_lib.topology import LINK_CLASSES  # noqa: E402

pytestmark = pytest.mark.filterwarnings("error")


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def render(art) -> None:
    """Lay out and draw the figure (constrained layout runs at draw time)."""
    art["figure"].canvas.draw()


def npaths(collection) -> int:
    return len(collection.get_paths())


def vertices(collection) -> list[np.ndarray]:
    """Each path's vertices, NaN breaks included (get_segments drops them)."""
    return [p.vertices for p in collection.get_paths()]


# --------------------------------------------------------------------------
# topologies used throughout (built once; they are values)
# --------------------------------------------------------------------------

POD = cl.tpu_pod("v5e")                      # 16x16 torus
SLICE44 = cl.tpu_slice("v5e", "4x4")         # 4x4 mesh (no wraparound)
V4 = cl.tpu_slice("v4", "4x4x4")             # 3D torus
V5P = cl.tpu_pod("v5p")                      # 16x20x28
SYSTEM = cl.tpu_system("v5e", "4x4", num_slices=2)
NODE = cl.nvswitch_node("dgx-h100")          # 8 GPUs
NVL72 = cl.nvswitch_node("gb200-nvl72")      # 72 GPUs
CLUSTER = cl.GpuCluster("dgx-h100", num_nodes=4, oversubscription=2.0)
SUPERPOD = cl.superpod()                     # 1024 GPUs
RING8 = cl.Ring(8, bandwidth=50e9, latency=1e-6)
TORUS44 = cl.Torus((4, 4), bandwidth=45e9, latency=1e-6)
MESH44 = cl.mesh((4, 4), bandwidth=45e9, latency=1e-6)


def undirected_pairs(topo) -> int:
    return len({(min(u, v), max(u, v)) for u, v in zip(topo.links.src.tolist(), topo.links.dst.tolist())})


# --------------------------------------------------------------------------
# the library stays free of matplotlib; the palette and the size rule
# --------------------------------------------------------------------------

def test_importing_the_library_and_the_module_does_not_import_matplotlib():
    code = ("import sys, collectives_lib as cl; from collectives_lib import draw; "
            "print('matplotlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_importing_the_drawings_without_matplotlib_names_the_extra_to_install():
    code = textwrap.dedent("""
        import sys
        sys.modules["matplotlib"] = None            # as if matplotlib were not installed
        import collectives_lib as cl                # the engine needs only numpy
        for load in (lambda: __import__("collectives_lib.draw"), lambda: cl.draw):
            try:
                load()
            except ImportError as err:
                print(type(err).__name__, err.name, "|", err)
            else:
                print("imported")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 2 and lines[0] == lines[1], out.stdout
    assert lines[0].startswith("ModuleNotFoundError matplotlib | ")
    assert 'pip install "collectives_lib[plot]"' in lines[0]


def test_rank_palette_is_distinct_past_nine_ranks_with_hatches_as_a_second_cue():
    assert len(set(map(str.lower, D.RANK_COLORS))) == len(D.RANK_COLORS) >= 8
    k = len(D.RANK_COLORS)
    assert [D.rank_color(r) for r in range(k)] == list(D.RANK_COLORS)   # small pictures keep their colours
    assert D.rank_color(0) != D.rank_color(k) and D.rank_hatch(0) != D.rank_hatch(k)
    # every rank up to 54 gets a distinct (colour, hatch) pair, and a distinct colour on its own
    pairs = {(D.rank_color(r), D.rank_hatch(r)) for r in range(k * len(D.RANK_HATCHES))}
    assert len(pairs) == k * len(D.RANK_HATCHES)
    assert len({D.rank_color(r) for r in range(k * len(D.RANK_HATCHES))}) == k * len(D.RANK_HATCHES)


def test_copy_and_reduce_differ_in_colour_and_line_style():
    """Copies and reductions must tell apart in colour (CIE76 distance, and for the
    common red-green deficiencies in lightness) and again in line style."""
    from test_style import cie_lab, delta_e
    copy, red = to_hex(D.OP_COLORS["copy"]).upper(), to_hex(D.OP_COLORS["reduce"]).upper()
    assert delta_e(copy, red) > 40
    assert abs(cie_lab(copy)[0] - cie_lab(red)[0]) > 5 or abs(cie_lab(copy)[2] - cie_lab(red)[2]) > 40
    assert D.OP_LINESTYLES["copy"] != D.OP_LINESTYLES["reduce"]


def test_every_link_class_has_a_colour_style_and_label():
    for klass in LINK_CLASSES:
        assert klass in D.LINK_COLORS and klass in D.LINK_LINESTYLES and klass in D.LINK_LABELS
    physical = [to_hex(D.LINK_COLORS[k]) for k in ("ici", "nvlink", "ib", "pcie", "dcn")]
    assert len(set(physical)) == 5


def test_new_figure_has_the_book_width_constrained_layout_and_a_white_card():
    fig, ax = D.new_figure()
    assert tuple(fig.get_size_inches()) == (D.FIGURE_WIDTH, D.FIGURE_HEIGHT)
    import io
    from PIL import Image
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=D.DPI)
    assert Image.open(buf).size[0] == 700       # the pixels the book's content column shows unscaled
    assert fig.get_layout_engine().__class__.__name__ == "ConstrainedLayoutEngine"
    assert to_hex(fig.get_facecolor()) == "#ffffff"
    assert fig.number in plt.get_fignums()
    bare, _ = D.new_figure(pyplot=False)
    assert bare not in [plt.figure(n) for n in plt.get_fignums()]


def test_show_renders_png_with_alt_text_and_closes_the_figure():
    art = D.draw_torus(SLICE44)
    image = D.show(art)
    html = image._repr_html_()
    assert image.png.startswith(b"\x89PNG")
    assert f'alt="{art["alt"]}"' in html.replace("&#x27;", "'")
    assert 'class="cl-figure' in html
    assert plt.get_fignums() == []
    fig, ax = D.new_figure()
    with pytest.raises(ValueError, match="alt text"):
        D.show(fig)
    custom = D.show(fig, alt='a "quoted" <figure>')
    assert 'alt="a &quot;quoted&quot; &lt;figure&gt;"' in custom._repr_html_()


def test_show_renders_twice_the_pixels_it_displays():
    """High-DPI screens get sharp digits: a full-width figure is 1,400 pixels shown 700 wide."""
    import io

    from PIL import Image
    fig, ax = D.new_figure()
    ax.text(0.5, 0.5, "7", fontsize=D.FONT["dense"])
    image = D.show(fig, alt="a digit")
    assert Image.open(io.BytesIO(image.png)).size[0] == 1400
    assert 'width="700"' in image._repr_html_()
    narrow, _ = D.new_figure(width=3.5)
    assert 'width="350"' in D.show(narrow, alt="half")._repr_html_()


# --------------------------------------------------------------------------
# topologies
# --------------------------------------------------------------------------

@pytest.mark.parametrize("topo", [POD, SLICE44, TORUS44, cl.Chain(5, bandwidth=1e9), RING8],
                         ids=["pod16x16", "slice4x4", "torus4x4", "chain5", "ring8"])
def test_torus_draws_one_square_per_chip_and_each_link_pair_once(topo):
    art = D.draw_torus(topo)
    render(art)
    assert npaths(art["nodes"]) == topo.num_ranks
    assert npaths(art["links"]) == undirected_pairs(topo)
    assert art["alt"]


def test_torus_wraparound_links_are_dashed_stubs_at_both_edges():
    art = D.draw_torus(POD)
    wraps = POD.is_wrap_link()
    styles = art["links"].get_linestyles()
    paths = vertices(art["links"])
    broken = [i for i, p in enumerate(paths) if np.isnan(p).any()]
    assert len(broken) == 32  # 16 rows + 16 columns wrap, each pair drawn once
    dashed = [i for i, st in enumerate(styles) if st[1] is not None]
    assert sorted(dashed) == broken
    assert wraps.sum() == 64  # both directions in the topology
    for i in broken:  # the stubs point out of the grid: their outer ends lie beyond the edges
        p = paths[i]
        outer = np.array([p[1], p[3]])
        assert ((outer < -0.5) | (outer > 15.5)).any(axis=1).all(), p
    # a mesh has none
    mesh_art = D.draw_torus(SLICE44)
    assert not any(np.isnan(p).any() for p in vertices(mesh_art["links"]))


def test_torus_labels_coordinates_when_small_and_axes_always():
    small = D.draw_torus(SLICE44)
    assert len(small["labels"]) == 16 and small["labels"][7].get_text() == "1,3"
    big = D.draw_torus(POD)
    assert big["labels"] == []
    assert [t.get_text() for t in big["axes"].get_xticklabels()] == [str(i) for i in range(16)]


def test_torus_link_values_colour_every_direction():
    values = np.arange(len(POD.links), dtype=float)
    art = D.draw_torus(POD, link_values=values)
    assert npaths(art["links"]) == len(POD.links)
    assert art["colorbar"] is not None


def test_3d_torus_draws_one_panel_per_plane():
    art = D.draw_torus(V4)
    render(art)
    assert len(art["axes"]) == 4 and len(art["nodes"]) == 4
    assert all(npaths(n) == 16 for n in art["nodes"])
    in_plane = np.isin(V4.link_axis(), [0, 1]).sum() // 2
    assert sum(npaths(lk) for lk in art["links"]) == in_plane


def test_3d_pod_summary_reports_the_bisection():
    art = D.draw_torus_summary(V5P, slice_shape=(4, 8, 8))
    render(art)
    assert npaths(art["box"]) == 3
    assert art["bisection"] == pytest.approx(V5P.bisection_bandwidth())
    assert art["slice"] is not None
    assert cl.format_rate(art["bisection"]) in art["alt"]
    with pytest.raises(cl.CollectivesError, match="too many"):
        D.draw_torus(V5P)
    assert D.draw_topology(V5P)["box"] is not None


def test_slice_in_pod_highlights_exactly_the_slice():
    art = D.draw_slice_in_pod(SLICE44, origin=(4, 8))
    render(art)
    ranks = art["slice_ranks"]
    assert len(ranks) == 16
    coords = {POD.coords(r) for r in ranks}
    assert coords == {(x, y) for x in range(4, 8) for y in range(8, 12)}
    faces = art["nodes"].get_facecolors()
    highlighted = {i for i, f in enumerate(faces) if np.allclose(f, to_rgba(D.RANK_COLORS[4]))}
    assert highlighted == set(ranks)
    assert "no wraparound" in art["alt"]
    art3 = D.draw_slice_in_pod(cl.tpu_slice("v5p", "4x4x8"))
    assert art3["slice"] is not None


@pytest.mark.parametrize("system, chips, hosts, dcn", [
    (SLICE44, 16, 2, None), (SYSTEM, 32, 4, 4), (POD, 256, 32, None),
    (cl.tpu_system("v5e", "16x16", num_slices=2), 512, 64, 2),
], ids=["slice4x4", "system2x4x4", "pod16x16", "system2x16x16"])
def test_tpu_system_draws_hosts_with_a_pcie_link_per_chip(system, chips, hosts, dcn):
    art = D.draw_tpu_system(system)
    render(art)
    assert npaths(art["nodes"]) == chips
    assert npaths(art["hosts"]) == hosts
    assert npaths(art["links"]["pcie"]) == chips
    if dcn is None:
        assert art["links"]["dcn"] is None
    else:
        assert npaths(art["links"]["dcn"]) == dcn  # one per host, or one bundle per slice


def test_tpu_system_pcie_links_go_to_the_chip_own_host():
    art = D.draw_tpu_system(SYSTEM)
    hosts = np.array([p.vertices[:4].mean(0) for p in art["hosts"].get_paths()])
    for chip, seg in enumerate(vertices(art["links"]["pcie"])):
        nearest = int(np.argmin(np.hypot(*(hosts - seg[-1]).T)))
        assert nearest == SYSTEM.host_of(chip)


def test_tpu_system_refuses_3d_slices():
    with pytest.raises(cl.CollectivesError, match="2D slices"):
        D.draw_tpu_system(V4)


@pytest.mark.parametrize("topo", [NODE, NVL72], ids=["dgx8", "nvl72"])
def test_switch_draws_every_gpu_and_its_link(topo):
    art = D.draw_switch(topo)
    render(art)
    n = topo.num_ranks
    assert npaths(art["nodes"]) == n and npaths(art["links"]) == n
    assert len(art["labels"]) == n
    loaded = D.draw_switch(topo, link_values=np.ones(len(topo.links)))
    assert npaths(loaded["links"]) == 2 * n


def test_fat_tree_draws_every_link_with_width_proportional_to_bandwidth():
    art = D.draw_fat_tree(CLUSTER)
    render(art)
    n, leaves = CLUSTER.num_ranks, CLUSTER.num_leaves
    assert npaths(art["nodes"]) == n
    assert npaths(art["leaves"]) == leaves
    assert npaths(art["links"]) == leaves + 2 * n  # uplinks, NVLink per GPU, NIC per GPU
    widths = art["links"].get_linewidths()
    uplink, nvlink, nic = widths[0], widths[leaves], widths[leaves + 1]
    assert nvlink / nic == pytest.approx(CLUSTER.nvlink_bandwidth / CLUSTER.nic_bandwidth)
    # a leaf has 4 NICs of 50 GB/s and a 2:1 uplink: 100 GB/s, twice a NIC
    assert uplink / nic == pytest.approx(2.0)
    assert "2:1 oversubscribed" in art["axes"].texts[-1].get_text()


def test_superpod_fat_tree_aggregates_scalable_units():
    art = D.draw_fat_tree(SUPERPOD)
    render(art)
    assert npaths(art["nodes"]) == SUPERPOD.num_sus == 4
    assert npaths(art["links"]) == 2 * SUPERPOD.num_leaves  # rail bundles + uplinks
    full = D.draw_fat_tree(cl.superpod(oversubscription=2.0))
    w = full["links"].get_linewidths()
    k = SUPERPOD.num_leaves
    assert w[0] / w[k] == pytest.approx(0.5)  # uplink half the rail bundle


def test_bisection_of_the_pod_crosses_32_links():
    art = D.draw_bisection(POD)
    render(art)
    assert art["cut_bandwidth"] == pytest.approx(POD.cut_bandwidth(POD.default_bisection()))
    assert art["cut_bandwidth"] == pytest.approx(32 * 45e9)
    assert len(art["crossing"]) == 32 and npaths(art["cut"]) == 32
    assert "1.44 TB/s" in art["axes"].get_title()


@pytest.mark.parametrize("topo", [SLICE44, RING8, V4, V5P, NODE, CLUSTER, SUPERPOD],
                         ids=["mesh4x4", "ring8", "v4", "v5p", "dgx8", "cluster4", "superpod"])
def test_bisection_annotates_cut_bandwidth(topo):
    side = topo.default_bisection()
    art = D.draw_bisection(topo)
    render(art)
    want = topo.cut_bandwidth(side)
    assert art["cut_bandwidth"] == pytest.approx(want)
    assert cl.format_rate(want) in art["alt"]


def test_route_through_the_wraparound():
    art = D.draw_route(POD, (15, 15), (2, 15))
    render(art)
    assert art["hops"] == [3]
    (line,) = art["paths"]
    x = line.get_xdata()
    assert np.isnan(x).sum() == 1  # one hop leaves the right edge and re-enters on the left
    assert "(15, 15)" in art["alt"] and "wraparound" in art["alt"]


def test_two_disjoint_six_hop_routes_on_a_4x4_slice():
    art = D.draw_route(SLICE44, (3, 3), (0, 0), disjoint=True)
    render(art)
    assert art["hops"] == [6, 6] and len(art["paths"]) == 2
    routes = SLICE44.disjoint_paths(SLICE44.rank_of((3, 3)), 0)
    edges = [set(zip(p[:-1], p[1:])) for p in routes]
    assert not edges[0] & edges[1]


@pytest.mark.parametrize("topo, src, dst, hops", [(SUPERPOD, 0, 1000, 4), (SYSTEM, 0, 20, 4), (NODE, 0, 5, 2)],
                         ids=["superpod", "tpu_system", "dgx8"])
def test_route_elsewhere_is_a_row_of_hops(topo, src, dst, hops):
    art = D.draw_route(topo, src, dst)
    render(art)
    assert art["hops"] == [hops] == [len(topo.route(src, dst))]
    assert len(art["paths"][0].get_xdata()) == hops + 1


# --------------------------------------------------------------------------
# schedules
# --------------------------------------------------------------------------

SCHEDULES = {
    "ring_all_reduce8": (cl.build("all_reduce", 8, "ring"), RING8),
    "bidir_all_gather8": (cl.build("all_gather", 8, "bidirectional_ring"), RING8),
    "recursive_doubling8": (cl.build("all_gather", 8, "recursive_doubling"), None),
    "sharp8": (cl.build("all_reduce", 8, "sharp"), NODE),
    "direct_all_to_all8": (cl.build("all_to_all", 8, "direct"), NODE),
    "ring_all_to_all4": (cl.build("all_to_all", 4, "ring"), None),
    "ring_reduce_scatter5": (cl.build("reduce_scatter", 5, "ring"), None),
    "torus4x4_all_reduce": (cl.build("all_reduce", TORUS44), TORUS44),
    "pod_all_gather_x": (cl.build("all_gather", POD, axes="x"), POD),
    "hierarchical16": (cl.build("all_reduce", cl.GpuCluster("dgx-h100", 2), "hierarchical"), None),
}


@pytest.mark.parametrize("name", SCHEDULES)
def test_every_step_draws_one_arrow_per_transfer_and_every_slot(name):
    schedule, topo = SCHEDULES[name]
    states = cl.replay(schedule)
    P, S = schedule.num_participants, schedule.num_slots
    steps = range(schedule.num_steps) if schedule.num_steps <= 8 else [0, schedule.num_steps // 2,
                                                                        schedule.num_steps - 1]
    for k in steps:
        t = D.draw_transfers(schedule, k, topo)
        n = len(schedule.transfers(k))
        assert npaths(t["arrows"]) == n and npaths(t["heads"]) == n
        b = D.draw_buffers(schedule, k + 1, states=states)
        assert npaths(b["slots"]) == P * S and npaths(b["fills"]) == P * S
        written = sum(len(expand_box(tr.chunk, schedule.slot_shape)) for tr in schedule.transfers(k))
        assert npaths(b["written"]) == written
        plt.close("all")


def test_arrow_colour_and_style_follow_the_operation():
    schedule = cl.build("all_reduce", 4, "ring")
    rs = D.draw_transfers(schedule, 0)            # reduce-scatter step
    ag = D.draw_transfers(schedule, 4)            # all-gather step
    assert {to_hex(c) for c in rs["arrows"].get_colors()} == {to_hex(D.OP_COLORS["reduce"])}
    assert {to_hex(c) for c in ag["arrows"].get_colors()} == {to_hex(D.OP_COLORS["copy"])}
    assert all(st[1] is not None for st in rs["arrows"].get_linestyles())   # dashed
    assert all(st[1] is None for st in ag["arrows"].get_linestyles())       # solid


def test_arrows_on_a_torus_break_at_the_wraparound():
    schedule = cl.build("all_gather", TORUS44, "sequential_axes")
    art = D.draw_transfers(schedule, 0, TORUS44)
    coords = np.array([TORUS44.coords(r) for r in range(16)])
    t = schedule.steps[0].traffic
    seen = []
    for path, s, d in zip(vertices(art["arrows"]), t.src, t.dst):
        wraps = np.abs(coords[d] - coords[s]).max() == 3
        assert np.isnan(path).any() == wraps
        seen.append(wraps)
    assert any(seen) and not all(seen)


def test_buffers_colour_copies_by_origin_and_leave_empty_slots_white():
    schedule = cl.build("all_gather", 4, "ring")
    start = D.draw_buffers(schedule, 0)
    faces = start["slots"].get_facecolors().reshape(4, 4, 4)
    for r in range(4):
        for s in range(4):
            want = D.RANK_COLORS[s] if r == s else D.EMPTY_COLOR
            assert np.allclose(faces[r, s], to_rgba(want))
    end = D.draw_buffers(schedule, schedule.num_steps)
    faces = end["slots"].get_facecolors().reshape(4, 4, 4)
    assert all(np.allclose(faces[r, s], to_rgba(D.RANK_COLORS[s])) for r in range(4) for s in range(4))
    assert [t.get_text() for t in end["labels"][:4]] == ["0", "1", "2", "3"]


def test_reduced_slots_fill_with_their_contribution_count():
    schedule = cl.build("all_reduce", 4, "ring")
    states = cl.replay(schedule)
    for after in (0, 2, 3, 6):
        art = D.draw_buffers(schedule, after, states=states)
        count = states[after].count()
        heights = np.array([np.ptp(p.vertices[:4, 1]) for p in art["fills"].get_paths()]).reshape(4, 4)
        full = np.array([np.ptp(p.vertices[:4, 1]) for p in art["slots"].get_paths()]).reshape(4, 4)
        assert np.allclose(heights / full, count / 4)
        assert sorted(t.get_text() for t in art["labels"]) == sorted(str(c) for c in count.ravel())
        plt.close("all")
    # after the reduce-scatter phase one slot per rank is complete: a full-height fill
    art = D.draw_buffers(schedule, 3, states=states)
    heights = np.array([np.ptp(p.vertices[:4, 1]) for p in art["fills"].get_paths()])
    assert np.isclose(heights, heights.max()).sum() == 4


def test_buffers_of_many_ranks_colour_every_block_apart_and_hatch_past_nine():
    schedule = cl.build("all_gather", 20, "ring")
    art = D.draw_buffers(schedule, schedule.num_steps)
    assert npaths(art["slots"]) == 400
    faces = art["slots"].get_facecolors().reshape(20, 20, 4)
    assert all(np.allclose(faces[0, b], to_rgba(D.rank_color(b))) for b in range(20))
    assert len({to_hex(f) for f in faces[0]}) == 20  # block 9 is no longer block 0's colour
    assert art["hatched"] == 20 * 11  # blocks 9..19 carry a hatch on every row
    assert npaths(art["hatches"]) == 20 * 11  # one stroke each ("/" for 9..17, "-" for 18, 19)
    start = D.draw_buffers(schedule, 0)
    assert start["hatched"] == 11  # only the owners hold their blocks
    assert art["labels"] == []  # too many to print


def test_buffers_reject_a_step_outside_the_schedule():
    with pytest.raises(cl.CollectivesError, match="after must be 0..3"):
        D.draw_buffers(cl.build("all_gather", 4, "ring"), 4)


def test_schedule_step_combines_transfers_and_buffers():
    schedule = cl.build("all_reduce", 8, "sharp")
    art = D.draw_schedule_step(schedule, 0, NODE)
    render(art)
    assert len(art["axes"]) == 2
    assert npaths(art["arrows"]) == 8
    assert npaths(art["slots"]) == 9 * 8  # 8 ranks and the switch
    before = D.draw_schedule_step(schedule, None)
    assert npaths(before["arrows"]) == 0 and before["written"] is None
    assert "Before step 1" in before["alt"]


def test_small_multiples_show_every_state_or_a_spread_of_them():
    schedule = cl.build("all_reduce", 4, "ring")
    art = D.draw_schedule_steps(schedule)
    render(art)
    assert art["shown"] == list(range(7)) and len(art["slots"]) == 7
    assert all(npaths(s) == 16 for s in art["slots"])
    long = cl.build("all_reduce", 16, "ring")
    art = D.draw_schedule_steps(long, max_panels=8)
    assert len(art["shown"]) == 8 and art["shown"][0] == 0 and art["shown"][-1] == long.num_steps


def test_animation_has_one_frame_per_state_and_player_controls():
    schedule = cl.build("all_gather", 4, "ring")
    player = D.schedule_animation(schedule)
    assert len(player.frames) == schedule.num_steps + 1
    html = player.html()
    for control in ("cl-play", "cl-pause", "cl-step", "cl-back", "cl-scrub"):
        assert control in html
    assert re.search(r'<img class="cl-frame[^"]*" src="data:image/png;base64,[^"]+" alt="[^"]+"', html)
    assert "Before step 1" in player.captions[0]
    assert plt.get_fignums() == []  # frames are not left open
    with pytest.raises(cl.CollectivesError, match="at most"):
        D.schedule_animation(cl.build("all_reduce", 32, "ring"))


# --------------------------------------------------------------------------
# costs
# --------------------------------------------------------------------------

def test_cost_curves_one_line_per_algorithm_and_the_crossover():
    algs = ["ring", "bidirectional_ring", "recursive_doubling"]
    sizes = np.logspace(3, 10, 29)
    art = D.draw_cost_curves(cl.analysis.cost_curves(RING8, "all_gather", algs, sizes))
    render(art)
    assert list(art["lines"]) == algs
    for alg in algs:
        t = cl.simulate_sizes(cl.build("all_gather", RING8, alg), RING8, sizes)
        assert np.allclose(art["lines"][alg].get_ydata(), t)
    # V* is where the bandwidth term equals the latency term: t(V*) = 2 t(0) for the ring
    ring = cl.build("all_gather", RING8, "ring")
    v = art["crossovers"]["ring"]
    t0, tv = cl.simulate_sizes(ring, RING8, [0.0, v])
    assert tv == pytest.approx(2 * t0, rel=1e-6)
    assert art["crossover"] is not None and len(art["regimes"]) == 2
    assert art["axes"].get_xscale() == "log" and art["axes"].get_yscale() == "log"


def test_cost_curves_mark_where_the_fastest_algorithm_changes():
    ring16 = cl.Ring(16, bandwidth=50e9, latency=5e-6)
    sizes = np.logspace(2, 10, 41)
    art = D.draw_cost_curves(cl.analysis.cost_curves(ring16, "all_reduce", ["ring", "recursive_doubling"], sizes))
    assert art["switches"], "recursive doubling wins small messages, ring large ones"
    x, before, after = art["switches"][0]
    t = {a: cl.simulate_sizes(cl.build("all_reduce", ring16, a), ring16, [x / 2, x * 2]) for a in (before, after)}
    assert t[before][0] <= t[after][0] and t[after][1] <= t[before][1]


def test_cost_curves_are_computed_apart_from_their_drawing(monkeypatch):
    algs = ["ring", "recursive_doubling"]
    sizes = np.logspace(3, 9, 13)
    curves = cl.analysis.cost_curves(RING8, "all_gather", algs, sizes)
    assert curves.collective == "all_gather" and curves.labels == algs and curves.topology is RING8
    for alg in algs:
        schedule = cl.build("all_gather", RING8, alg)
        assert np.allclose(curves.times[alg], cl.simulate_sizes(schedule, RING8, sizes))
        assert curves.alpha[alg] == pytest.approx(cl.simulate_sizes(schedule, RING8, [0.0])[0])
        t1, t2 = cl.simulate_sizes(schedule, RING8, [1e12, 2e12])
        assert curves.beta[alg] == pytest.approx((t2 - t1) / 1e12)
        assert curves.crossovers()[alg] == pytest.approx(curves.alpha[alg] / curves.beta[alg])
    fastest = np.argmin([curves.times[a] for a in algs], axis=0)
    assert np.array_equal(curves.fastest, fastest)
    assert [(a, b) for _, a, b in curves.switches()] == [
        (algs[i], algs[j]) for i, j in zip(fastest[:-1], fastest[1:]) if i != j]

    def no_simulation(*args, **kwargs):
        raise AssertionError("draw_cost_curves(curves) must not simulate")

    monkeypatch.setattr(cl, "simulate_sizes", no_simulation)
    art = D.draw_cost_curves(curves)
    assert art["curves"] is curves and list(art["lines"]) == algs
    for alg in algs:
        assert np.array_equal(art["lines"][alg].get_ydata(), curves.times[alg])
    assert art["crossovers"] == curves.crossovers() and art["switches"] == curves.switches()
    with pytest.raises(cl.CollectivesError, match="draws cl.analysis.cost_curves"):
        D.draw_cost_curves(RING8)


def test_bandwidth_curves_busbw_is_algbw_times_the_factor():
    art = D.draw_bandwidth_curves(cl.analysis.cost_curves(NODE, "all_reduce", ["ring", "sharp"],
                                                          2.0 ** np.arange(10, 34)), peak=450e9)
    render(art)
    assert len(art["lines"]) == 4
    alg = art["lines"][("ring", "algbw")].get_ydata()
    bus = art["lines"][("ring", "busbw")].get_ydata()
    assert np.allclose(bus / alg, 2 * 7 / 8)
    sizes = art["lines"][("ring", "algbw")].get_xdata()
    t = cl.simulate_sizes(cl.build("all_reduce", NODE, "ring"), NODE, sizes)
    assert np.allclose(alg, sizes / t / 1e9)


def test_step_times_one_bar_per_step_coloured_by_stage():
    cluster = cl.GpuCluster("dgx-h100", 4)
    schedule = cl.build("all_reduce", cluster, "hierarchical")
    r = cl.simulate(schedule, cluster, 2**28)
    art = D.draw_step_times(schedule, r)
    render(art)
    assert len(art["bars"]) == schedule.num_steps
    heights = np.array([b.get_height() for b in art["bars"]])
    assert np.allclose(heights / heights.max(), r.step_times / r.step_times.max())
    colors = {to_hex(b.get_facecolor()) for b in art["bars"]}
    assert len(colors) == len(schedule.stages()) == 2
    assert art["stages"] == pytest.approx(r.stage_times)


@pytest.mark.parametrize("topo, collective, algorithm", [
    (MESH44, "all_to_all", "direct"), (RING8, "all_reduce", "ring"), (NODE, "all_to_all", "direct"),
    (CLUSTER, "all_to_all", "direct"), (SUPERPOD, "all_reduce", "ring"), (V4, "all_gather", "auto"),
    (SYSTEM, "all_reduce", "auto"),
], ids=["mesh4x4", "ring8", "dgx8", "cluster4", "superpod", "v4", "tpu_system"])
def test_link_loads_name_the_bottleneck(topo, collective, algorithm):
    schedule = cl.build(collective, topo, algorithm)
    nbytes = schedule.round_size(2**24)
    r = cl.simulate(schedule, topo, nbytes)
    art = D.draw_link_loads(topo, r.link_busy)
    render(art)
    assert np.allclose(art["values"], r.link_busy)
    assert art["bottleneck"] == r.bottleneck_link
    assert art["bottleneck_label"] == topo.link_label(r.bottleneck_link)


def test_link_loads_on_a_mesh_are_darkest_on_the_bottleneck():
    schedule = cl.build("all_to_all", MESH44, "direct")
    art = D.draw_link_loads(MESH44, cl.simulate(schedule, MESH44, 2**24).link_busy)
    colors = art["links"].get_colors()
    assert npaths(art["links"]) == len(MESH44.links)
    darkness = 1 - colors[:, :3].mean(1)
    ids = np.arange(len(MESH44.links))  # drawn in link order on a mesh
    assert darkness[ids == art["bottleneck"]][0] == pytest.approx(darkness.max())


def test_link_loads_of_one_step():
    schedule = cl.build("all_gather", POD, axes="x")
    values, title = cl.analysis.link_load_values(schedule, POD, 2**28, step=0)
    art = D.draw_link_loads(POD, values, title=title)
    loads = cl.step_link_loads(schedule, POD, 0, 2**28)
    assert np.allclose(art["values"], loads / POD.links.bandwidth)
    assert "step 1" in art["figure"].get_suptitle()


def test_link_loads_reject_wrong_lengths():
    with pytest.raises(cl.CollectivesError, match="links"):
        D.draw_link_loads(NODE, np.ones(3))


def test_bandwidth_ladder_one_bar_per_figure_with_its_source():
    art = D.draw_bandwidth_ladder()
    render(art)
    assert len(art["bars"]) == len(hw.LADDER)
    widths = [b.get_width() for b in art["bars"]]
    assert widths == sorted(widths, reverse=True)
    assert set(art["sources"]) == set(hw.LADDER)
    for name, (key, _title, _url) in art["sources"].items():
        assert key == hw.LADDER[name].source and key in hw.SOURCES
    assert art["axes"].get_xscale() == "log"


# --------------------------------------------------------------------------
# every drawing takes an Axes, has alt text and draws without warnings
# (how quickly they draw: benchmarks/bench_draw.py, a script, not a timed test)
# --------------------------------------------------------------------------

DRAWINGS = {
    "torus16x16": lambda ax: D.draw_torus(POD, ax=ax),
    "switch8": lambda ax: D.draw_switch(NODE, ax=ax),
    "fat_tree_superpod": lambda ax: D.draw_fat_tree(SUPERPOD, ax=ax),
    "route": lambda ax: D.draw_route(POD, (15, 15), (2, 15), ax=ax),
    "buffers64": lambda ax: D.draw_buffers(cl.build("all_reduce", 64, "ring"), 70, ax=ax),
    "transfers64": lambda ax: D.draw_transfers(cl.build("all_reduce", 64, "ring"), 70, ax=ax),
    "cost": lambda ax: D.draw_cost_curves(cl.analysis.cost_curves(NODE, "all_reduce", ["ring", "binomial_tree", "sharp"]),
                                          ax=ax),
    "ladder": lambda ax: D.draw_bandwidth_ladder(ax=ax),
}


@pytest.mark.parametrize("name", DRAWINGS)
def test_drawings_take_an_axes_and_describe_themselves(name):
    fig, ax = D.new_figure(pyplot=False)
    art = DRAWINGS[name](ax)
    fig.canvas.draw()
    assert art["figure"] is fig and art["axes"] is ax
    assert art["alt"].strip().endswith(".")


def test_four_z_planes_are_drawn_two_by_two_at_half_the_page_each():
    import matplotlib
    matplotlib.use("Agg")
    art = cl.draw.draw_torus(cl.tpu_slice("v5p", "4x4x4"))
    fig = art["figure"]
    fig.canvas.draw()
    boxes = [a.get_window_extent() for a in art["axes"]]
    assert len({round(b.y0) for b in boxes}) == 2                 # two rows of panels
    assert min(b.width for b in boxes) > 0.27 * fig.bbox.width     # was under a fifth in one row
    title = fig._suptitle.get_window_extent()
    assert all(title.y0 >= a.title.get_window_extent().y1 for a in art["axes"])   # no collision
    import matplotlib.pyplot as plt
    plt.close("all")


# --------------------------------------------------------------------------
# legible at the page's width: a 7-inch figure shows 700 px wide, so 1 pt is
# 1.39 px; smaller text, badges, colour bars and slice labels readers squinted at
# --------------------------------------------------------------------------

def shown_px(text, fig) -> float:
    """Pixels of a text's size where the page shows the figure (700 px wide at most)."""
    scale = min(1.0, D.FIGURE_WIDTH / fig.get_figwidth())
    return text.get_fontsize() / 72 * D.DPI * scale


@pytest.mark.parametrize("topo, src, dst, disjoint", [
    (POD, (15, 15), (2, 15), False), (SLICE44, (3, 3), (0, 0), True),
], ids=["pod16x16", "slice4x4"])
def test_route_hop_badges_are_legible_and_sized_to_their_numbers(topo, src, dst,
                                                                 disjoint):
    art = D.draw_route(topo, src, dst, disjoint=disjoint)
    render(art)
    fig = art["figure"]
    badges = art["badges"]
    numbers = [str(h + 1) for n in art["hops"] for h in range(n)]
    assert [b.get_text() for b in badges] == numbers
    renderer = fig.canvas.get_renderer()
    for b in badges:
        assert shown_px(b, fig) >= 9 * D.DPI / 72   # 9 pt where the page shows it
        text = b.get_window_extent(renderer)
        disc = b.get_bbox_patch().get_window_extent(renderer)
        assert disc.x0 <= text.x0 and text.x1 <= disc.x1
        assert disc.y0 <= text.y0 and text.y1 <= disc.y1


def test_link_load_scale_starts_at_zero_in_a_named_unit_with_idle_links_apart():
    schedule = cl.build("all_gather", SLICE44, axes="x")
    values, title = cl.analysis.link_load_values(schedule, SLICE44, 2**24, step=0)
    values = values.copy()
    light = np.nonzero(values > 0)[0][:2]
    values[light] *= 1e-3                                  # two links barely loaded
    art = D.draw_link_loads(SLICE44, values, title=title)
    render(art)
    cbar = art["colorbar"]
    assert cbar.norm.vmin == 0 and cbar.norm.vmax == pytest.approx(values.max())
    assert cbar.ax.get_ylabel() == "link busy time (\u00b5s)"
    ticks = [t.get_text() for t in cbar.ax.get_yticklabels() if t.get_text()]
    assert ticks[0] == "0" and not any("s" in t for t in ticks)   # unit in the label
    idle_color = to_hex(D.IDLE_LINK_COLOR)
    assert cbar.extend == "min" and to_hex(cbar.cmap.get_under()) == idle_color
    assert "idle" in [t.get_text() for t in cbar.ax.texts]
    colors, widths = art["links"].get_colors(), art["links"].get_linewidths()
    assert len(colors) == len(values)   # in link order on a mesh
    idle = values <= 0
    assert idle.any() and all(to_hex(c) == idle_color for c in colors[idle])
    grey = np.array(to_rgba(D.IDLE_LINK_COLOR))[:3]
    assert (np.abs(colors[light, :3] - grey).max(axis=1) > 0.15).all()   # not grey
    assert widths[idle].max() < widths[light].min()        # nor as thin as idle links


def test_link_load_colour_bar_names_bytes_in_one_unit():
    from collectives_lib.draw.figure import value_unit

    assert value_unit(3.2e7, "bytes per link") == (1e6, "MB")
    assert value_unit(4e-4, "link busy time") == (1e-6, "\u00b5s")
    assert value_unit(7.0, "share") == (1.0, "")


def test_link_loads_on_a_tpu_system_colour_every_link_class():
    schedule = cl.build("all_reduce", SYSTEM, "auto")
    r = cl.simulate(schedule, SYSTEM, schedule.round_size(2**24))
    art = D.draw_link_loads(SYSTEM, r.link_busy)
    render(art)
    assert art["colorbar"] is not None
    plain = {to_hex(D.LINK_COLORS[c]) for c in ("ici", "pcie", "dcn")}
    for name in ("ici", "pcie", "dcn"):
        drawn = {to_hex(c) for c in art["links"][name].get_colors()}
        assert drawn and not drawn & plain, name           # by load, not by class
    assert npaths(art["links"]["ici"]) == len(SYSTEM.slice.links) * SYSTEM.num_slices


def test_slice_in_pod_names_the_slice_beside_the_grid_not_over_its_chips():
    art = D.draw_slice_in_pod(SLICE44)
    render(art)
    fig, frame = art["figure"], art["frame"].get_window_extent()
    assert not any(t.get_window_extent().overlaps(frame) for t in art["axes"].texts)
    key = art["legend"]
    words = [t.get_text() for t in key.get_texts()]
    assert any("4x4 slice" in w and "16 chips" in w and "no wraparound" in w
               for w in words)
    box = key.get_window_extent()
    assert not box.overlaps(frame)
    assert box.x0 >= 0 and box.x1 <= fig.bbox.x1           # never cut off
    assert art["axes"].yaxis.label.get_window_extent().x0 >= 0   # nor the y label
    art3 = D.draw_slice_in_pod(cl.tpu_slice("v5p", "4x8x8"))
    assert art3["axes"].get_title().startswith("A 4x8x8 slice (256 chips, hatched)")
    faces = {to_hex(c) for c in art3["slice"].get_facecolors()}
    assert len(faces) == 3                                 # lit like a box


def _text_px(fig) -> list[tuple[float, str]]:
    from matplotlib.text import Text

    fig.canvas.draw()
    return [(shown_px(t, fig), t.get_text()) for t in fig.findobj(Text)
            if t.get_visible() and t.get_text().strip()]


def _hierarchical(nodes, gpus):
    return cl.builders.hierarchical.hierarchical_all_gather(nodes, gpus)


@pytest.mark.parametrize("frame", [
    lambda fig: D.draw_schedule_step(cl.build("all_reduce", NODE, "ring"), 0, NODE,
                                     ax=fig),
    lambda fig: D.draw_schedule_step(cl.build("all_gather", NODE, "recursive_doubling"),
                                     1, NODE, ax=fig),
    lambda fig: D.draw_schedule_step(cl.build("all_gather", 24, "ring"), 0, ax=fig),
    lambda fig: D.draw_cluster_step(_hierarchical(4, 4), 0, 4, ax=fig),
], ids=["ring_dgx8", "recursive_doubling_dgx8", "ring24", "hierarchical_4x4"])
def test_player_frames_have_no_text_under_8_px_at_the_page_width(frame):
    fig, _ = D.new_figure(0, 0, pyplot=False, height=3.2)
    frame(fig)
    small = [(round(px, 1), text) for px, text in _text_px(fig) if px < 8]
    assert not small


@pytest.mark.parametrize("make", [
    lambda: D.schedule_animation(cl.build("all_gather", 4, "ring")),
    lambda: D.cluster_schedule_animation(_hierarchical(2, 2), 2),
    lambda: D.all_to_all_animation(cl.build("all_to_all", 4, "ring"),
                                   cl.Ring(4, bandwidth=1e9), "t", ["c"] * 4),
    lambda: D.packet_pipeline_animation(2, 2),
    lambda: D.route_front_animation(SLICE44, (1, 1), (0, 0),
                                    SLICE44.disjoint_paths((1, 1), (0, 0)), alpha=1e-6,
                                    time_with=2e-6, time_without=1e-6, title="t"),
], ids=["schedule", "cluster", "all_to_all", "packets", "route_front"])
def test_player_frames_are_drawn_for_high_dpi_screens(make):
    import io

    from PIL import Image

    from collectives_lib.draw.figure import FRAME_HIDPI

    player = make()
    widths = {Image.open(io.BytesIO(f)).size[0] for f in player.frames}
    # more pixels than the 700 the page shows them in
    assert widths == {round(D.FIGURE_WIDTH * D.DPI * FRAME_HIDPI)} and FRAME_HIDPI > 1
    assert plt.get_fignums() == []
