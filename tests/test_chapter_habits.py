"""Chapters are made of short calls (issue 11): no code cell over 30 lines, at most
15% of a chapter's code cells over 10 lines, no ``fontsize=`` and no colour literals
(the drawing package owns sizes and colours), the import cell after the title, and
exercises in the book's one style with solutions that run."""

from __future__ import annotations

import re

import nbformat
import pytest

from conftest import ROOT

NOTEBOOKS = sorted(p for p in (ROOT / "notebooks").glob("*.ipynb"))
# Appendix notebooks that are reference tables, not chapters with exercises.
NO_EXERCISES = {"gallery", "hardware_sources"}
MAX_LINES = 30
LONG = 10
MAX_LONG_SHARE = 0.15
HEX_COLOUR = re.compile(r"""["']#[0-9a-fA-F]{3,8}["']""")
NAMED_COLOUR = re.compile(
    r"""\b(?:color|colour|c|facecolor|edgecolor|fc|ec)\s*=\s*["'](?!C\d)[a-z]+["']""")


def code_cells(path):
    nb = nbformat.read(path, as_version=4)
    # The Colab install cell (the first cell) is the same in every chapter and is not counted.
    return [c for c in nb.cells if c.cell_type == "code" and not c.source.startswith("# Colab only")]


def lines(cell):
    return [line for line in cell.source.splitlines() if line.strip()]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_code_cell_is_long(path):
    long = [(i, len(lines(c))) for i, c in enumerate(code_cells(path)) if len(lines(c)) > MAX_LINES]
    assert not long, f"{path.name}: code cells over {MAX_LINES} lines (index, lines): {long}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_few_code_cells_are_over_ten_lines(path):
    cells = code_cells(path)
    over = [i for i, c in enumerate(cells) if len(lines(c)) > LONG]
    assert len(over) <= MAX_LONG_SHARE * len(cells), (
        f"{path.name}: {len(over)} of {len(cells)} code cells are over {LONG} lines "
        f"(at most {MAX_LONG_SHARE:.0%} may be): cells {over}")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_sizes_or_colours_typed_in_cells(path):
    bad = []
    for i, cell in enumerate(code_cells(path)):
        for line in cell.source.splitlines():
            if "fontsize=" in line or HEX_COLOUR.search(line) or NAMED_COLOUR.search(line):
                bad.append((i, line.strip()))
    assert not bad, f"{path.name}: sizes or colours typed in cells (use cl.draw's style): {bad}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_nothing_renders_above_the_title(path):
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "markdown" and cell.source.lstrip().startswith("# "):
            return
        shown = cell.cell_type == "markdown" or "remove-cell" not in cell.metadata.get("tags", [])
        assert not shown, f"{path.name}: a cell that renders comes before the title:\n{cell.source[:200]}"
    pytest.fail(f"{path.name}: no title (a markdown cell starting '# ')")


def shows_numbers_only(cell) -> bool:
    """A cell hidden from the site that only glues numbers for the paragraph below it
    (tests/test_glue_placement.py): it may sit between a solution's code and its explanation."""
    return ("remove-input" in cell.metadata.get("tags", [])
            and all(line.startswith(("glue(", " ")) for line in cell.source.splitlines() if line.strip()))


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if p.stem not in NO_EXERCISES], ids=lambda p: p.stem)
def test_exercises_in_one_style(path):
    nb = nbformat.read(path, as_version=4)
    heads = [i for i, c in enumerate(nb.cells) if c.cell_type == "markdown" and re.match(r"##\s+Exercises\s*$", c.source.strip().splitlines()[0] if c.source.strip() else "")]
    assert heads, f"{path.name}: no '## Exercises' section"
    start = heads[-1]
    numbered = re.findall(r"^\s*(\d+)\.\s", nb.cells[start].source + "\n" + (nb.cells[start + 1].source if nb.cells[start + 1].cell_type == "markdown" else ""), re.M)
    count = len(numbered)
    assert count >= 3, f"{path.name}: {count} exercises; every chapter ends with at least three"
    rest = nb.cells[start + 1:]
    for k in range(1, count + 1):
        sol = [i for i, c in enumerate(rest) if c.cell_type == "code" and c.source.startswith(f"# Solution to exercise {k}")]
        assert sol, f"{path.name}: no code cell starting '# Solution to exercise {k}'"
        j = sol[0]
        while True:                         # a solution may span several folded code cells
            cell = rest[j]
            assert "hide-cell" in cell.metadata.get("tags", []) or shows_numbers_only(cell), (
                f"{path.name}: solution {k}'s code is not folded (hide-cell)")
            if j + 1 < len(rest) and rest[j + 1].cell_type == "code" and not rest[j + 1].source.startswith("# Solution"):
                j += 1
                continue
            break
        after = rest[j + 1] if j + 1 < len(rest) else None
        # A blockquote with this label: a folded dropdown on the site (book/_ext/portable_markdown.py),
        # and readable where plain CommonMark is all there is (Colab, VS Code).
        assert after is not None and after.cell_type == "markdown" and after.source.lstrip().startswith(
            f"> **Solution to exercise {k}.**"), (
            f"{path.name}: solution {k}'s explanation is not a '> **Solution to exercise {k}.** ...' "
            "blockquote after its code")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_figure_shown_is_the_cells_last_expression(path):
    """``draw.show(...)`` returns the image; anywhere but last in its cell the image is
    dropped and the page shows nothing (the gallery's step-time bars were lost so)."""
    import ast
    lost = []
    for i, cell in enumerate(code_cells(path)):
        try:
            body = ast.parse(cell.source).body
        except SyntaxError:
            continue
        for st in body[:-1]:
            call = st.value if isinstance(st, ast.Expr) else None
            func = getattr(call, "func", None)
            if (getattr(func, "attr", None) or getattr(func, "id", None)) == "show":
                lost.append((i, st.lineno))
    assert not lost, f"{path.name}: show() not last in its cell (cell, line): {lost}"
