"""Figure defects a cold visual review of the static site found, each pinned by a test that
failed on the old drawing: text too small at the page's width, keys missing (hatching,
hosts, the two directions of a ring's links), a line through a bar label, hop badges and
route labels over chips."""

from __future__ import annotations

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.text import Text  # noqa: E402

import collectives_lib as cl  # noqa: E402
from collectives_lib import draw as D  # noqa: E402
from collectives_lib.draw.figure import top_figure  # noqa: E402

pytestmark = pytest.mark.filterwarnings("error")

V5E = cl.hardware.tpu("v5e")
W, ALPHA = float(V5E.ici_bandwidth), float(V5E.ici_latency)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def drawn(art):
    """The figure of ``art``, laid out and drawn (explorer figures have no pyplot canvas)."""
    fig = top_figure(art["figure"])
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return fig, canvas.get_renderer()


def texts(fig):
    """Every text drawn: visible, not empty, not a tick label of an axis turned off."""
    hidden = {id(t) for ax in fig.axes for axis in (ax.xaxis, ax.yaxis)
              if not (ax.axison and axis.get_visible())
              for t in axis.get_ticklabels(which="both") + [axis.label, axis.get_offset_text()]}
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip() and id(t) not in hidden]


def legend_words(legend) -> list[str]:
    return [t.get_text() for t in legend.get_texts()] if legend is not None else []


# 1 ------------------------------------------------------------------ summary explorer

@pytest.mark.parametrize("name, shape", [("v5e 8x16", ("v5e", "8x16")), ("v5e 4x4", ("v5e", "4x4")),
                                         ("v5p 4x4x4", ("v5p", "4x4x4"))])
def test_collective_summary_has_no_text_under_9_pt(name, shape):
    topo = cl.tpu_slice(*shape)
    art = D.draw_collective_summary(topo, cl.analysis.torus_summary(topo, 2**30), 2**30, name=name)
    fig, renderer = drawn(art)
    assert fig.get_figwidth() == D.FIGURE_WIDTH            # shown 700 px wide: 1 pt is 1.39 px
    small = [(t.get_fontsize(), t.get_text()) for t in texts(fig) if t.get_fontsize() < 9]
    assert not small
    # every word inside the figure, and the words of a cell inside its cell
    page = fig.bbox
    for t in texts(fig):
        box = t.get_window_extent(renderer)
        assert page.x0 <= box.x0 and box.x1 <= page.x1 + 0.5, t.get_text()
    cells = art["cells"].get_paths()
    inside = [t for t in art["axes"].texts if t.get_position()[1] < 0 and t.get_position()[0] > 1]
    boxes = [p.get_extents().transformed(art["axes"].transData) for p in cells]
    for t in inside:
        box = t.get_window_extent(renderer)
        assert any(b.x0 <= box.x0 and box.x1 <= b.x1 for b in boxes), t.get_text()


# 2 ------------------------------------------------------------- digits of step grids

def _digit_sizes(art):
    return [t.get_fontsize() for p in art["panels"] for t in p["labels"]]


def test_tree_step_grid_digits_are_sized_to_the_laid_out_slots():
    """The chapter's page of seven panels, 9 inches tall: the digits were sized before the
    layout engine placed the panels and came out 6.5 pt in slots with room for 9."""
    tree8 = cl.build("all_reduce", cl.Switch(8, bandwidth=1e9), "binomial_tree")
    page, _ = D.new_figure(height=9.0, pyplot=False)
    page.clear()
    art = D.draw_schedule_steps(tree8, page, ncols=2)
    fig, renderer = drawn(art)
    sizes = _digit_sizes(art)
    assert sizes and min(sizes) >= 8            # was 6.6
    for panel in art["panels"]:                          # and each digit fits in its slot
        slots = [p.get_extents().transformed(panel["axes"].transData) for p in panel["slots"].get_paths()]
        height = min(b.height for b in slots)
        assert max(t.get_window_extent(renderer).height for t in panel["labels"]) < height
    assert "fill height and number:\ncontributions summed so far" in legend_words(fig.legends[0])
    key = fig.legends[0].get_window_extent(renderer)
    assert fig.bbox.x0 <= key.x0 and key.x1 <= fig.bbox.x1          # never cut off


def test_small_step_grids_get_rows_tall_enough_for_their_digits():
    rs = cl.build("reduce_scatter", cl.Ring(4, bandwidth=W), "ring")
    art = D.draw_schedule_steps(rs, ncols=2)
    drawn(art)
    assert min(_digit_sizes(art)) >= 9


def test_a_step_grid_too_large_to_number_says_so():
    art = D.draw_schedule_steps(cl.build("all_reduce", 16, "binomial_tree"))
    fig, renderer = drawn(art)
    assert _digit_sizes(art) == []
    assert any("too many slots to number" in w for w in legend_words(fig.legends[0]))
    assert any(w.startswith("hatched slot: ranks 9\u201315") for w in legend_words(fig.legends[0]))
    key = fig.legends[0].get_window_extent(renderer)
    assert fig.bbox.x0 <= key.x0 and key.x1 <= fig.bbox.x1          # never cut off


# 3 -------------------------------------------------- link loads on a ring: directions

def test_ring_link_loads_key_the_two_strokes_and_have_legible_ticks():
    ring = cl.Ring(16, bandwidth=W, latency=ALPHA)
    r = cl.simulate(cl.build("all_to_all", ring, "bidirectional_ring"), ring, 2**24)
    art = D.draw_link_loads(ring, r.link_busy, value_label="link busy time")
    fig, _ = drawn(art)
    words = legend_words(art["direction_key"])
    assert len(words) == 2
    outer = next(w for w in words if w.startswith("outer"))
    inner = next(w for w in words if w.startswith("inner"))
    # the key says what the geometry does: find a clockwise link (r -> r + 1) and its side
    links = ring.links
    lid = next(i for i in range(len(links)) if (int(links.dst[i]) - int(links.src[i])) % 16 == 1)
    path = art["links"].get_paths()[lid].vertices
    mid = path.mean(axis=0)
    centre_of_link = (D.layout.ring_layout(16)[links.src[lid]] + D.layout.ring_layout(16)[links.dst[lid]]) / 2
    clockwise_outside = np.hypot(*mid) > np.hypot(*centre_of_link)
    assert ("counter-clockwise" not in outer) == clockwise_outside
    assert ("counter-clockwise" in inner) == clockwise_outside
    ticks = [t for t in art["colorbar"].ax.get_yticklabels() if t.get_text()]
    assert ticks and min(t.get_fontsize() for t in ticks) >= D.FONT["annotation"]


def test_a_one_way_ring_has_no_direction_key():
    ring = cl.Ring(8, bandwidth=W, bidirectional=False)
    r = cl.simulate(cl.build("all_gather", ring, "ring"), ring, 2**20)
    art = D.draw_link_loads(ring, r.link_busy)
    assert art["direction_key"] is None


# 4 ---------------------------------------------------------- hatching has a key

def test_multi_axis_player_frames_say_what_the_hatching_means():
    torus44 = cl.Torus((4, 4), bandwidth=W, latency=ALPHA, link_class="ici")
    two_d = cl.build("all_gather", torus44, "multi_axis")
    for step in (None, 1):
        fig, _ = D.new_figure(0, 0, pyplot=False, height=4.5)
        art = D.draw_schedule_step(two_d, step, torus44, ax=fig)
        assert art["hatched"] > 0
        words = legend_words(art["axes"][0].get_legend())
        assert any(w.startswith("hatched slot: ranks 9\u201315") for w in words)
        if step is not None:
            assert "copy" in words
        handle = art["axes"][0].get_legend().legend_handles[-1]
        assert handle.get_hatch()


def test_step_grids_key_their_hatching_only_when_slots_are_hatched():
    big = D.draw_schedule_steps(cl.build("all_gather", 16, "ring"), max_panels=4)
    fig, _ = drawn(big)
    assert any(w.startswith("hatched slot: ranks 9\u201315") for w in legend_words(fig.legends[0]))
    small = D.draw_schedule_steps(cl.build("all_gather", 8, "ring"), max_panels=4)
    fig, _ = drawn(small)
    assert not any("hatched" in w for w in legend_words(fig.legends[0]))


# 5 ------------------------------------------------ no line through a bar's label

def test_multislice_bars_have_no_line_through_a_label():
    system = cl.tpu_system("v5e", "16x16", num_slices=4)
    V = int(2e9)
    ms = cl.workloads.multislice_all_reduce("v5e", "16x16", 4, V)
    art = D.draw_pipeline(ms, title="Gradient all-reduce over 4 v5e pods",
                          bound=cl.lower_bound("all_reduce", system, V).time,
                          bound_label="lower bound of the all-reduce")
    fig, renderer = drawn(art)
    ax = art["axes"]
    gridlines = set(ax.get_xgridlines()) | set(ax.get_ygridlines())
    lines = [ln for ln in ax.get_lines() if ln not in gridlines and ln.get_visible()]
    assert len(lines) >= 2                            # the separator and the bound's dashes
    for t in ax.texts:
        box = t.get_window_extent(renderer)
        for ln in lines:
            xy = ln.get_transform().transform(ln.get_xydata())
            # the segment sampled densely: no point of it inside the text's box
            pts = np.concatenate([np.linspace(a, b, 200) for a, b in zip(xy[:-1], xy[1:])])
            hit = ((pts[:, 0] > box.x0) & (pts[:, 0] < box.x1) & (pts[:, 1] > box.y0) & (pts[:, 1] < box.y1))
            assert not hit.any(), (t.get_text(), ln)
        # the grid runs behind the labels: each has an opaque backing
        patch = t.get_bbox_patch()
        assert patch is not None and patch.get_facecolor()[3] == 1.0, t.get_text()


# 6 ------------------------------------------------------------------- hosts keyed

def test_a_pod_drawing_keys_its_host_squares():
    art = D.draw_tpu_system(cl.tpu_pod("v5e"))
    assert art["labels"] == []                        # 32 hosts: no H0, H1... to say it
    legend = art["axes"].get_legend()
    words = legend_words(legend)
    host = [i for i, w in enumerate(words) if w.startswith("host")]
    assert host and any(w.startswith("TPU v5e chip") for w in words)
    handle = legend.legend_handles[host[0]]
    assert isinstance(handle, Line2D) and handle.get_marker() == "s"
    assert handle.get_markerfacecolor() == "white"      # drawn as the host squares are


# 7 ------------------------------------------------------------ routes on the grid

def _chip_boxes(art):
    ax = art["axes"]
    return [p.get_extents().transformed(ax.transData) for p in art["nodes"].get_paths()]


def test_pod_route_badges_and_labels_stay_off_the_chips():
    art = D.draw_route(cl.tpu_pod("v5e"), (15, 15), (2, 15))
    fig, renderer = drawn(art)
    chips = _chip_boxes(art)
    assert art["badges"] and len(art["ends"]) == 2
    for t in art["badges"]:                 # discs: clear of every chip square
        disc = t.get_bbox_patch().get_window_extent(renderer)
        cx, cy, r = (disc.x0 + disc.x1) / 2, (disc.y0 + disc.y1) / 2, disc.width / 2
        gaps = [np.hypot(max(c.x0 - cx, 0, cx - c.x1), max(c.y0 - cy, 0, cy - c.y1)) for c in chips]
        assert min(gaps) >= r - 0.5, (t.get_text(), min(gaps), r)
    for t in art["ends"]:
        box = t.get_bbox_patch().get_window_extent(renderer)
        assert not any(box.overlaps(c) for c in chips), t.get_text()
        assert t.get_fontsize() >= 8


def test_slice_route_reads_at_the_page_width():
    art = D.draw_route(cl.tpu_slice("v5e", "4x4"), (3, 3), (0, 0), disjoint=True)
    fig, renderer = drawn(art)
    chips = _chip_boxes(art)
    side_px = min(c.width for c in chips) * D.DPI / fig.dpi
    assert side_px >= 34                                   # was 26 px in a 2.9-inch figure
    for t in art["ends"]:
        box = t.get_bbox_patch().get_window_extent(renderer)
        assert not any(box.overlaps(c) for c in chips), t.get_text()
