"""The book's one palette and size rule: colours per rank, operation, link class and
stage, line styles and hatches, the figure size, and named font sizes by role.

Importing this module does not import matplotlib; the few helpers that need
colour conversion import it when called.
"""

from __future__ import annotations

import functools

import numpy as np

from ..errors import CollectivesError


#: Width of every book figure in inches (700 px at :data:`DPI`).
FIGURE_WIDTH = 7.0
#: Default height in inches.
FIGURE_HEIGHT = 3.2
#: Resolution of the PNGs the book shows.
DPI = 100

#: Font sizes in points, by role: every drawing (and every chapter figure) takes
#: its sizes from here instead of writing a number.
FONT = {
    "title": 10,        # the title of a one-panel figure
    "heading": 9.5,     # a figure's title over its panels; a two-line plot title
    "label": 9,         # axis labels; titles of small panels (buffers, planes, transfers)
    "subheading": 8.5,  # a panel title under a heading; row titles in a drawing
    "annotation": 8,    # text drawn in a figure; legends of drawings
    "tick": 7.5,        # tick labels and notes of plots (cost, step times, ladder)
    "small": 7,         # tick labels of drawings; labels in nodes; compact legends
    "detail": 6.5,      # numbers in slots, hop numbers, labels under nodes
    "dense": 6,         # the same in large drawings
    "tiny": 5.5,        # labels around a 72-GPU switch, leaf names of a fat tree
    "smallest": 5,      # GPU numbers of more than 32 ranks
}

TEXT_COLOR = "#1f2328"
MUTED_COLOR = "#57606a"
FAINT_COLOR = "#c9ced6"
NODE_COLOR = "#eef1f4"
#: The outline of a chip, GPU or rank.
NODE_EDGE_COLOR = "#6e7781"
#: The outline of a buffer slot.
SLOT_EDGE_COLOR = "#8c959f"
#: Grid lines behind plotted data.
GRID_COLOR = "#e6e8eb"
#: A link that carried nothing, in drawings coloured by load.
IDLE_LINK_COLOR = (0.86, 0.87, 0.89, 1.0)
#: Time spent waiting (pipeline bubbles, idle ranks), drawn hatched.
IDLE_COLOR = "#f3f4f6"
#: A card or panel behind a group of results, and its outline.
PANEL_COLOR = "#f6f8fa"
PANEL_EDGE_COLOR = "#d0d7de"
#: The latency-bound and bandwidth-bound regimes of a cost plot (shaded lightly).
REGIME_COLORS = {"latency": "#88CCEE", "bandwidth": "#DDCC77"}

#: The colours of ranks (or chunk origins) 0..8: Paul Tol's muted scheme (colour-blind safe).
#: Ranks from 9 on take the colours :func:`rank_color` picks to stay apart from these.
RANK_COLORS = ("#CC6677", "#332288", "#DDCC77", "#117733", "#88CCEE",
               "#882255", "#44AA99", "#999933", "#AA4499")
#: A second cue besides colour: rank ``r`` carries ``RANK_HATCHES[r // 9 % 6]`` (none for 0..8).
RANK_HATCHES = ("", "/", "-", "x", "\\", "|")
#: How many distinct rank colours there are; rank ``r`` and ``r + RANK_COLOR_COUNT`` share one.
RANK_COLOR_COUNT = 256

# The strokes that draw each hatch inside a unit cell (buffers draw them as lines:
# matplotlib's own hatching is far too slow for thousands of slots).
HATCH_STROKES = {
    "/": [((0, 0), (1, 1))], "-": [((0, 0.5), (1, 0.5))], "x": [((0, 0), (1, 1)), ((0, 1), (1, 0))],
    "\\": [((0, 1), (1, 0))], "|": [((0.5, 0), (0.5, 1))],
}
#: An empty slot.
EMPTY_COLOR = "#ffffff"

#: Copy versus reduce: a colour and a line style each (Okabe-Ito blue and vermillion).
OP_COLORS = {"copy": "#0072B2", "reduce": "#D55E00"}
OP_LINESTYLES = {"copy": "-", "reduce": (0, (4, 2))}

#: One colour per link class (Okabe-Ito), in ``topology.LINK_CLASSES`` terms.
LINK_COLORS = {"ici": "#009E73", "nvlink": "#E69F00", "ib": "#CC79A7",
               "pcie": "#8C5A2B", "dcn": "#555555", "link": "#7F7F7F"}
LINK_LINESTYLES = {"ici": "-", "nvlink": "-", "ib": "-", "pcie": (0, (1, 1.5)),
                   "dcn": (0, (6, 2, 1, 2)), "link": "-"}
LINK_LABELS = {"ici": "ICI", "nvlink": "NVLink", "ib": "InfiniBand", "pcie": "PCIe",
               "dcn": "DCN", "link": "link"}
#: Wraparound links of a torus: the class colour, this dash.
WRAP_LINESTYLE = (0, (2.0, 1.2))

#: Stages of a schedule (Tol's bright scheme) and a hatch per stage.
STAGE_COLORS = ("#4477AA", "#EE6677", "#228833", "#CCBB44", "#66CCEE", "#AA3377", "#BBBBBB")
STAGE_HATCHES = ("", "///", "...", "xx", "\\\\\\", "oo", "++")

#: Algorithms in cost plots: (colour, line style, marker), in order.
ALGORITHM_STYLES = (
    ("#4477AA", "-", "o"), ("#EE6677", "--", "s"), ("#228833", "-.", "^"),
    ("#AA3377", ":", "D"), ("#CCBB44", "-", "v"), ("#66CCEE", "--", "P"),
    ("#555555", "-.", "X"), ("#882255", ":", "*"),
)

#: Colour map for link loads: light (idle) to dark (busiest); a slice of
#: matplotlib's perceptually uniform, colour-blind-safe ``magma_r``.
LOAD_CMAP = "magma_r"
_LOAD_RANGE = (0.08, 0.92)

TIER_COLORS = {"chip": "#332288", "memory": "#88CCEE"}  # bandwidth ladder tiers

#: Colours and styles of the routes in :func:`draw_route`.
PATH_STYLES = (("#D55E00", "-"), ("#0072B2", "--"), ("#009E73", "-."), ("#CC79A7", ":"))
#: Colour of a highlighted route and of the packet on it.
ROUTE_COLOR = "#D55E00"


def rank_color(rank: int) -> str:
    """The colour of rank (or chunk origin) ``rank``: :data:`RANK_COLORS` for ranks 0..8, then
    colours chosen to stay as far apart as possible (see :func:`rank_colors`)."""
    r = int(rank) % RANK_COLOR_COUNT
    return RANK_COLORS[r] if r < len(RANK_COLORS) else _more_rank_colors()[r - len(RANK_COLORS)]


def rank_colors(n: int) -> tuple[str, ...]:
    """The colours of ranks ``0..n-1``.

    The first nine are Tol's muted scheme (:data:`RANK_COLORS`). Each further rank takes,
    of the sRGB colours on a grid of twentieths whose CIELAB lightness is 35..78 and chroma
    25..70 (neither near white, which marks an empty slot, nor grey, nor garish), the one
    farthest (CIE76) from every colour taken before it. So neighbouring ranks differ by
    more than 25 and any two of the first 64 ranks by more than 18 (delta-E); the hatch of
    :func:`rank_hatch` stays as a second cue.
    """
    return tuple(rank_color(r) for r in range(int(n)))


def _srgb_to_lab(rgb: np.ndarray) -> np.ndarray:
    """CIELAB (D65) of sRGB colours in 0..1, one per row."""
    rgb = np.asarray(rgb, dtype=float)
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    xyz = linear @ np.array([[0.4124564, 0.2126729, 0.0193339],
                             [0.3575761, 0.7151522, 0.1191920],
                             [0.1804375, 0.0721750, 0.9503041]]) / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.stack([116 * f[:, 1] - 16, 500 * (f[:, 0] - f[:, 1]), 200 * (f[:, 1] - f[:, 2])], axis=1)


@functools.lru_cache(maxsize=1)
def _more_rank_colors() -> tuple[str, ...]:
    """The colours of ranks 9..RANK_COLOR_COUNT-1, farthest point first (see :func:`rank_colors`)."""
    steps = np.linspace(0.0, 1.0, 21)
    grid = np.stack(np.meshgrid(steps, steps, steps, indexing="ij"), axis=-1).reshape(-1, 3)
    lab = _srgb_to_lab(grid)
    chroma = np.hypot(lab[:, 1], lab[:, 2])
    keep = (lab[:, 0] >= 35) & (lab[:, 0] <= 78) & (chroma >= 25) & (chroma <= 70)
    grid, lab = grid[keep], lab[keep]
    base = _srgb_to_lab(np.array([[int(c[i:i + 2], 16) / 255 for i in (1, 3, 5)] for c in RANK_COLORS]))
    nearest = np.linalg.norm(lab[:, None, :] - base[None, :, :], axis=-1).min(axis=1)
    out = []
    for _ in range(RANK_COLOR_COUNT - len(RANK_COLORS)):
        i = int(np.argmax(nearest))
        out.append("#" + "".join(f"{round(v * 255):02X}" for v in grid[i]))
        nearest = np.minimum(nearest, np.linalg.norm(lab - lab[i], axis=1))
    return tuple(out)


def rank_hatch(rank: int) -> str:
    """The hatch drawn over rank ``rank``'s colour, a second cue: '' for ranks 0..8, then one
    hatch per further group of nine."""
    return RANK_HATCHES[(int(rank) // len(RANK_COLORS)) % len(RANK_HATCHES)]


_NAMED_COLORS = {
    "text": TEXT_COLOR, "muted": MUTED_COLOR, "faint": FAINT_COLOR, "node": NODE_COLOR,
    "node_edge": NODE_EDGE_COLOR, "slot_edge": SLOT_EDGE_COLOR, "empty": EMPTY_COLOR, "grid": GRID_COLOR,
    "idle": IDLE_COLOR, "panel": PANEL_COLOR, "panel_edge": PANEL_EDGE_COLOR, "route": ROUTE_COLOR,
}


def color_for(what) -> str:
    """The book's colour for ``what``, so a chapter names a colour instead of typing it.

    ``what`` is a rank or chunk origin (an int: :func:`rank_color`), an operation
    (``"copy"``, ``"reduce"``), a link class (``"ici"``, ``"nvlink"``, ``"ib"``, ``"pcie"``,
    ``"dcn"``, ``"link"``), a regime of a cost plot (``"latency"``, ``"bandwidth"``) or a role:
    ``"text"``, ``"muted"``, ``"faint"``, ``"node"``, ``"node_edge"``, ``"slot_edge"``,
    ``"empty"``, ``"grid"``, ``"idle"``, ``"panel"``, ``"panel_edge"``, ``"route"``.
    """
    if isinstance(what, (int, np.integer)) and not isinstance(what, bool):
        return rank_color(what)
    for table in (OP_COLORS, LINK_COLORS, REGIME_COLORS, _NAMED_COLORS):
        if what in table:
            return table[what]
    names = [*OP_COLORS, *LINK_COLORS, *REGIME_COLORS, *_NAMED_COLORS]
    raise CollectivesError(f"no book colour for {what!r}: give a rank number or one of {', '.join(names)}")


def op_name(code: int) -> str:
    """``"copy"`` or ``"reduce"`` for a transfer's op code (``Traffic.op``: 0 or 1)."""
    return "copy" if int(code) == 0 else "reduce"


def text_on(color) -> str:
    """Dark or white text, whichever reads better on ``color``."""
    from matplotlib.colors import to_rgb

    r, g, b = to_rgb(color)
    lum = 0.2126 * r ** 2.2 + 0.7152 * g ** 2.2 + 0.0722 * b ** 2.2
    return TEXT_COLOR if lum > 0.22 else "white"


def tint(color, amount: float = 0.25) -> tuple[float, float, float]:
    """``color`` mixed with white: ``amount`` of the colour (0: white, 1: the colour)."""
    from matplotlib.colors import to_rgb

    rgb = np.array(to_rgb(color))
    return tuple(1 - amount * (1 - rgb))


def load_cmap():
    """The colour map of :data:`LOAD_CMAP`, cut to the range that stays visible on white."""
    import matplotlib as mpl
    from matplotlib.colors import ListedColormap

    base = mpl.colormaps[LOAD_CMAP]
    return ListedColormap(base(np.linspace(*_LOAD_RANGE, 256)), name="collectives_load")

