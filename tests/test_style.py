"""Tests for collectives_lib.draw.style: the one palette and size rule, font sizes by
role, and the helpers that let chapters name a colour or a size instead of typing it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

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
