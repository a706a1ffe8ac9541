"""Tests for collectives_lib.draw.style: the one palette and size rule, font sizes by
role, and the helpers that let chapters name a colour or a size instead of typing it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import collectives_lib as cl
from collectives_lib.draw import style

DRAW_DIR = Path(style.__file__).parent


# --------------------------------------------------------------------------
# font sizes by role
# --------------------------------------------------------------------------

def test_font_roles_run_from_titles_down_to_the_smallest_labels():
    sizes = list(style.FONT.values())
    assert sizes == sorted(sizes, reverse=True) and len(set(sizes)) == len(sizes)
    for role in ("title", "heading", "label", "annotation", "tick", "small"):
        assert role in style.FONT
    assert style.FONT["title"] == 10 and style.FONT["label"] == 9 and style.FONT["annotation"] == 8


FONT_LITERAL = re.compile(r"(?:fontsize|labelsize)\s*(?::\s*float\s*)?=\s*\d|set_fontsize\(\s*\d"
                          r"|(?:fontsize|labelsize)\s*=[^,\n]*\belse\s+\d")


@pytest.mark.parametrize("path", sorted(DRAW_DIR.glob("*.py")), ids=lambda p: p.name)
def test_drawing_code_takes_font_sizes_from_the_roles(path):
    hits = [f"{path.name}:{i}: {line.strip()}" for i, line in enumerate(path.read_text().splitlines(), 1)
            if FONT_LITERAL.search(line)]
    assert not hits, "font sizes written as numbers (use style.FONT[role]):\n" + "\n".join(hits)


HEX_LITERAL = re.compile(r"[\"']#[0-9a-fA-F]{6}[\"']")


@pytest.mark.parametrize("path", sorted(p for p in DRAW_DIR.glob("*.py") if p.name != "style.py"),
                         ids=lambda p: p.name)
def test_every_colour_lives_in_the_palette(path):
    hits = [f"{path.name}:{i}: {line.strip()}" for i, line in enumerate(path.read_text().splitlines(), 1)
            if HEX_LITERAL.search(line)]
    assert not hits, "colours typed outside style.py:\n" + "\n".join(hits)


# --------------------------------------------------------------------------
# naming a colour instead of typing it
# --------------------------------------------------------------------------

@pytest.mark.parametrize("what, want", [
    (0, style.RANK_COLORS[0]), (3, style.RANK_COLORS[3]), ("copy", style.OP_COLORS["copy"]),
    ("reduce", style.OP_COLORS["reduce"]), ("ici", style.LINK_COLORS["ici"]), ("dcn", style.LINK_COLORS["dcn"]),
    ("latency", style.REGIME_COLORS["latency"]), ("bandwidth", style.REGIME_COLORS["bandwidth"]),
    ("text", style.TEXT_COLOR), ("muted", style.MUTED_COLOR), ("faint", style.FAINT_COLOR),
    ("grid", style.GRID_COLOR), ("node", style.NODE_COLOR), ("node_edge", style.NODE_EDGE_COLOR),
    ("idle", style.IDLE_COLOR), ("panel", style.PANEL_COLOR), ("panel_edge", style.PANEL_EDGE_COLOR),
    ("route", style.ROUTE_COLOR), ("empty", style.EMPTY_COLOR),
], ids=str)
def test_color_for_names_every_colour_of_the_palette(what, want):
    assert style.color_for(what) == want


def test_color_for_takes_numpy_ranks_and_refuses_unknown_names():
    import numpy as np

    assert style.color_for(np.int64(5)) == style.rank_color(5)
    with pytest.raises(cl.CollectivesError, match=r"no book colour for 'purple': give a rank number or one of copy"):
        style.color_for("purple")
    with pytest.raises(cl.CollectivesError, match="no book colour for True"):
        style.color_for(True)


def _contrast(a: str, b: str) -> float:
    """WCAG 2 contrast ratio, written out independently of the library."""
    def lum(h):
        rgb = [int(h[i:i + 2], 16) / 255 for i in (1, 3, 5)]
        lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
    hi, lo = sorted((lum(a), lum(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_the_palette_reads_on_a_white_page():
    """Text and muted text meet WCAG AA (4.5:1) on the white figure card; the grid and
    idle fills stay faint (close to white, still visible)."""
    assert _contrast(style.TEXT_COLOR, "#ffffff") >= 7          # AAA for the main text
    assert _contrast(style.MUTED_COLOR, "#ffffff") >= 4.5
    for faint in (style.GRID_COLOR, style.IDLE_COLOR, style.PANEL_COLOR, style.NODE_COLOR):
        assert 2 < delta_e(faint, "#ffffff") < 15, faint
    assert delta_e(style.REGIME_COLORS["latency"], style.REGIME_COLORS["bandwidth"]) > 30


# --------------------------------------------------------------------------
# a chapter's plot in the book's sizes, without a number
# --------------------------------------------------------------------------

@pytest.fixture
def ax():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    fig, ax = cl.draw.new_figure(pyplot=False)
    return ax


def test_label_axes_sets_title_labels_and_ticks_by_role(ax):
    assert cl.draw.label_axes(ax, "time versus size", "V (bytes)", "time", tick_role="annotation") is ax
    assert ax.get_title() == "time versus size" and ax.title.get_fontsize() == style.FONT["heading"]
    assert ax.xaxis.label.get_fontsize() == ax.yaxis.label.get_fontsize() == style.FONT["label"]
    assert ax.xaxis.get_major_ticks()[0].label1.get_fontsize() == style.FONT["annotation"]
    cl.draw.label_axes(ax, "one-panel figure", title_role="title")
    assert ax.title.get_fontsize() == style.FONT["title"] and ax.get_xlabel() == "V (bytes)"
    with pytest.raises(KeyError):
        cl.draw.label_axes(ax, "x", title_role="huge")


def test_legend_is_frameless_in_the_role_size(ax):
    ax.plot([0, 1], [0, 1], label="ring")
    leg = cl.draw.legend(ax, loc="upper left", title="algorithm")
    assert not leg.get_frame_on() and leg.get_texts()[0].get_fontsize() == style.FONT["annotation"]
    assert leg.get_title().get_fontsize() == style.FONT["annotation"]
    from matplotlib.lines import Line2D

    small = cl.draw.legend(ax, [Line2D([], [], label="copy")], role="tick", ncol=2)
    assert [t.get_text() for t in small.get_texts()] == ["copy"]
    assert small.get_texts()[0].get_fontsize() == style.FONT["tick"]


def test_grid_draws_the_light_grid_on_the_asked_axis(ax):
    from matplotlib.colors import to_hex

    cl.draw.grid(ax, "y")
    ygrid = ax.yaxis.get_major_ticks()[0].gridline
    assert ygrid.get_visible() and to_hex(ygrid.get_color()) == style.GRID_COLOR and ygrid.get_linewidth() == 0.6
    assert not ax.xaxis.get_major_ticks()[0].gridline.get_visible()


# --------------------------------------------------------------------------
# rank colours past the first nine
# --------------------------------------------------------------------------

def cie_lab(hex_color: str):
    """CIELAB (D65) of an sRGB colour, written out independently of the library."""
    rgb = [int(hex_color[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    x = (0.4124564 * lin[0] + 0.3575761 * lin[1] + 0.1804375 * lin[2]) / 0.95047
    y = 0.2126729 * lin[0] + 0.7151522 * lin[1] + 0.0721750 * lin[2]
    z = (0.0193339 * lin[0] + 0.1191920 * lin[1] + 0.9503041 * lin[2]) / 1.08883
    f = [t ** (1 / 3) if t > (6 / 29) ** 3 else t / (3 * (6 / 29) ** 2) + 4 / 29 for t in (x, y, z)]
    return 116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])


def delta_e(a: str, b: str) -> float:
    """CIE76 colour difference: about 2 is just noticeable, more than 10 clearly different."""
    return sum((p - q) ** 2 for p, q in zip(cie_lab(a), cie_lab(b))) ** 0.5


def test_the_first_nine_rank_colours_stay_tol_muted():
    assert style.rank_colors(9) == style.RANK_COLORS
    assert style.RANK_COLORS == ("#CC6677", "#332288", "#DDCC77", "#117733", "#88CCEE",
                                 "#882255", "#44AA99", "#999933", "#AA4499")


def test_ranks_0_to_63_have_distinct_colours_and_neighbours_differ_clearly():
    colors = style.rank_colors(64)
    assert len(set(colors)) == 64 and all(re.fullmatch(r"#[0-9A-F]{6}", c) for c in colors)
    neighbours = [delta_e(colors[r], colors[r + 1]) for r in range(63)]
    assert min(neighbours) > 25, min(neighbours)
    nearest = min(delta_e(a, b) for i, a in enumerate(colors) for b in colors[i + 1:])
    assert nearest > 18, nearest           # any two of the 64, not only neighbours
    for c in colors:                        # never close to an empty (white) slot
        assert delta_e(c, style.EMPTY_COLOR) > 20


def test_rank_colours_cover_big_groups_then_repeat():
    n = style.RANK_COLOR_COUNT
    colors = style.rank_colors(n)
    assert len(set(colors)) == n and style.rank_color(n) == style.rank_color(0)
    assert style.rank_color(-1) == style.rank_color(n - 1)
    assert style.rank_hatch(8) == "" and style.rank_hatch(9) == style.RANK_HATCHES[1]
