"""Each prose number sits right under the code cell that shows it.

On Colab and in VS Code a markdown cell shows ``{eval}`name``` as it is; the
number itself is in the output of the code cell that called
``glue(name=...)`` (collectives_lib/book/prose.py). So that output must be
next to the sentence, not sixty cells above it:

- the first paragraph that uses a name comes right after the code cell that
  glues it, with at most one code cell (a figure, a table) in between;
- a later paragraph that uses it again is at most two cells below a cell that
  shows it; further down, ``glue("name")`` shows it again (in a cell tagged
  ``remove-input``, so the site, whose prose shows the numbers, hides it).

These tests read the names each code cell glues from its source (keywords,
names without values, string and f-string keys of ``**{...}``, dicts built in
the same cell); tests/test_colab.py checks the same rule on the outputs of
every chapter run on Colab's packages.
"""

from __future__ import annotations

import ast
import re

import nbformat
import pytest

from conftest import ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
EVAL = re.compile(r"\{eval\}`([^`]+)`")
ANY = r"[A-Za-z0-9_]+"          # what an f-string's {field} may put into a name
FIRST_USE_GAP = 1               # code cells allowed between the glue and the first paragraph using it
LATER_USE_GAP = 2               # cells allowed between a cell showing a name and a later paragraph using it


class Unreadable(Exception):
    pass


def _key_pattern(node: ast.expr, where: str) -> str:
    """A regular expression for the names a dict key may evaluate to."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return re.escape(node.value)
    if isinstance(node, ast.JoinedStr):
        return "".join(re.escape(v.value) if isinstance(v, ast.Constant) else ANY for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _key_pattern(node.left, where) + _key_pattern(node.right, where)
    if isinstance(node, (ast.Call, ast.Name, ast.Subscript, ast.Attribute)):
        return ANY if _is_string_method(node) else _fail(node, where)
    return _fail(node, where)


def _is_string_method(node: ast.expr) -> bool:
    # "..".join(...), name.replace(...) inside a key built with + : any name
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
        "replace", "join", "lower", "format")


def _fail(node: ast.expr, where: str):
    raise Unreadable(f"{where}: glue's names must be readable from the code "
                     f"(keywords, strings or f-strings), not {ast.unparse(node)!r}")


def _dicts_built(tree: ast.Module, where: str) -> dict[str, list[str]]:
    """Name -> key patterns, for dicts a cell builds as {"k": ...}, dict(k=...) or d["k"] = ..."""
    built: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
            if isinstance(target, ast.Name) and isinstance(value, ast.Dict) and None not in value.keys:
                built[target.id] = [_key_pattern(k, where) for k in value.keys]
            elif (isinstance(target, ast.Name) and isinstance(value, ast.Call)
                  and getattr(value.func, "id", None) == "dict" and not value.args):
                built[target.id] = [re.escape(k.arg) for k in value.keywords if k.arg]
            elif (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)
                  and target.value.id in built):
                built[target.value.id].append(_key_pattern(target.slice, where))
    return built


def glued_names(source: str, where: str) -> list[re.Pattern]:
    """Patterns of the names the cell's glue calls show (show=False calls show nothing)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    built = None
    patterns = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "glue"):
            continue
        if any(k.arg == "show" and not (isinstance(k.value, ast.Constant) and k.value.value) for k in node.keywords):
            continue
        for arg in node.args:
            if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
                _fail(arg, where)
            patterns.append(re.escape(arg.value))
        for kw in node.keywords:
            if kw.arg is not None:
                patterns.append(re.escape(kw.arg))
            elif isinstance(kw.value, ast.Dict) and None not in kw.value.keys:
                patterns += [_key_pattern(k, where) for k in kw.value.keys]
            elif isinstance(kw.value, ast.DictComp):
                patterns.append(_key_pattern(kw.value.key, where))
            elif isinstance(kw.value, ast.Name):
                built = _dicts_built(tree, where) if built is None else built
                if kw.value.id not in built:
                    _fail(kw.value, where)
                patterns += built[kw.value.id]
            else:
                _fail(kw.value, where)
    return [re.compile(p) for p in patterns if p != "show"]


def far_numbers(cells) -> list[str]:
    """The rule of the module docstring, over a list of (cell_type, source)."""
    shows = {i: glued_names(src, f"cell {i}") for i, (kind, src) in enumerate(cells) if kind == "code"}
    seen, problems = set(), []
    for m, (kind, src) in enumerate(cells):
        if kind != "markdown":
            continue
        for name in dict.fromkeys(EVAL.findall(src)):
            first = name not in seen
            seen.add(name)
            above = [i for i in range(m - 1, -1, -1) if any(p.fullmatch(name) for p in shows.get(i, []))]
            if not above:
                problems.append(f"cell {m}: {{eval}}`{name}` is glued in no code cell above it")
                continue
            between = [cells[j][0] for j in range(above[0] + 1, m)]
            if first and (len(between) > FIRST_USE_GAP or "markdown" in between):
                problems.append(f"cell {m}: {name} first appears {len(between)} cells below cell {above[0]}, "
                                f"which glues it; glue it in a code cell right above the paragraph")
            elif not first and len(between) > LATER_USE_GAP:
                problems.append(f"cell {m}: {name} was last shown {len(between)} cells above, in cell "
                                f"{above[0]}; show it again right above with glue({name!r})")
    return problems


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_prose_number_is_shown_right_above_its_paragraph(path):
    nb = nbformat.read(path, as_version=4)
    try:
        problems = far_numbers([(c.cell_type, c.source) for c in nb.cells])
    except Unreadable as err:
        problems = [str(err)]
    assert not problems, f"{path.name}:\n" + "\n".join(problems)


def cells(*spec):
    return [("markdown" if s.startswith("md:") else "code", s.removeprefix("md:")) for s in spec]


@pytest.mark.parametrize("spec, expected", [
    (["glue(a_x=1)", "md:{eval}`a_x`"], []),
    (["glue(a_x=1)", "fig()", "md:{eval}`a_x`"], []),
    (["glue(a_x=1)", "fig()", "table()", "md:{eval}`a_x`"], ["first appears 2 cells below cell 0"]),
    (["glue(a_x=1)", "md:prose", "md:{eval}`a_x`"], ["first appears 1 cells below cell 0"]),
    (["glue(a_x=1, show=False)", "md:{eval}`a_x`"], ["glued in no code cell above"]),
    (["md:{eval}`a_x`", "glue(a_x=1)"], ["glued in no code cell above"]),
    (["glue(a_x=1)", "md:{eval}`a_x`", "x", "md:{eval}`a_x` again"], []),
    (["glue(a_x=1)", "md:{eval}`a_x`", "x", "md:y", "md:{eval}`a_x` again"],
     ["last shown 3 cells above, in cell 0; show it again right above with glue('a_x')"]),
    (["glue(a_x=1)", "md:{eval}`a_x`", "x", "md:y", "z", 'glue("a_x")', "md:{eval}`a_x` again"], []),
    (['glue(**{f"a_{k}": 1 for k in ks})', "md:{eval}`a_x` {eval}`a_y`"], []),
    (['glue(**{f"b_{k}": v})', "md:{eval}`a_x`"], ["glued in no code cell above"]),
    (['d = {"a_x": 1}\nd["p_" + k.lower()] = 2\nglue(**d)', "md:{eval}`a_x` {eval}`p_q`"], []),
    (['glue(**d)', "md:{eval}`a_x`"], ["not 'd'"]),
    (["for k, v in d.items():\n    glue(**{k: v})", "md:{eval}`a_x`"], ["not 'k'"]),
])
def test_the_rule_itself(spec, expected):
    try:
        problems = far_numbers(cells(*spec))
    except Unreadable as err:
        problems = [str(err)]
    assert len(problems) == len(expected) and all(e in p for e, p in zip(expected, problems)), problems
