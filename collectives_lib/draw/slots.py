"""Slots of a buffer drawing: the key to their hatching (a second cue beside colour) and
the digits inside them, sized to the slot once the layout has placed the axes.
"""

from __future__ import annotations

import numpy as np

from .figure import top_figure
from .style import FONT, RANK_COLORS, RANK_HATCHES, SLOT_EDGE_COLOR, rank_color, text_on


def hatch_key(color_index, note: str = "\n(a second cue\nbeside colour)") -> list:
    """Legend handles saying what the hatching of slots means: ranks from 9 on carry a hatch
    beside their colour (:func:`~collectives_lib.draw.style.rank_hatch`), one per group of
    nine. One handle per hatch in ``color_index`` (the rank colouring each slot, -1: none),
    naming its ranks, then ``note``; none when no slot is hatched."""
    from matplotlib.patches import Patch

    idx = np.unique(np.asarray(color_index))
    idx = idx[idx >= 0]
    groups = {}
    for r in idx.tolist():
        h = (r // len(RANK_COLORS)) % len(RANK_HATCHES)
        if h:
            groups.setdefault(h, []).append(r)
    handles = []
    for h, ranks in sorted(groups.items()):
        lo, hi = min(ranks), max(ranks)
        who = f"rank {lo}" if lo == hi else f"ranks {lo}\u2013{hi}"
        face = rank_color(lo)
        key = Patch(facecolor=face, edgecolor=SLOT_EDGE_COLOR, hatch=RANK_HATCHES[h] * 2,
                    label=f"hatched slot: {who}{note}")
        if hasattr(key, "set_hatchcolor"):      # matplotlib 3.11; before it, the edge colour
            key.set_hatchcolor(text_on(face))
        handles.append(key)
    return handles


#: Slot digits: this share of a slot's pitch (its smaller side), between these sizes in points.
DIGIT_SHARE, DIGIT_RANGE = 0.6, (FONT["detail"], 11.0)


def slot_digit_size(ax, columns: int, rows: int) -> float:
    """Points of the digits in a grid of ``columns`` x ``rows`` slots filling ``ax`` where it
    is now: :data:`DIGIT_SHARE` of a slot's pitch, clipped to :data:`DIGIT_RANGE`."""
    box = ax.get_position()
    fig = top_figure(ax.figure)
    pitch = min(box.width * fig.get_figwidth() / (columns + 0.2),
                box.height * fig.get_figheight() / (rows + 0.2)) * 72
    return float(np.clip(DIGIT_SHARE * pitch, *DIGIT_RANGE))


def slot_digits(ax, texts, columns: int, rows: int):
    """An artist that sizes ``texts`` (the digits of a grid of ``columns`` x ``rows`` slots)
    by :func:`slot_digit_size` when the figure is drawn, after the layout engine has placed
    ``ax``: before that its size is a guess (a tall page of panels got 6.5 pt digits in slots
    with room for 9). Drawn first in the axes (zorder -10), so before the digits; the
    digits get a size from the guess at once too. Add it with ``ax.add_artist``."""
    from matplotlib.artist import Artist

    class _Digits(Artist):
        def draw(self, renderer):
            size = slot_digit_size(ax, columns, rows)
            for t in texts:
                t.set_fontsize(size)
            self.stale = False

    size = slot_digit_size(ax, columns, rows)
    for t in texts:
        t.set_fontsize(size)
    art = _Digits()
    art.set_zorder(-10)
    return art
