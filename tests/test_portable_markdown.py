"""The chapters' markdown reads well in every notebook front end, not only on the site.

Colab and VS Code render a markdown cell as plain CommonMark (with tables);
JupyterLab follows a link by opening the file it names. So a chapter writes:

- links between pages as Markdown links to files that exist:
  ``[text](other_chapter.ipynb)``, ``[text](other_chapter.ipynb#heading-slug)``,
  ``[term](../book/glossary.md#term-name)``, ``[text](../book/references.md#ref-label)``
  (a ``{doc}`` or ``{term}`` role shows as its raw text there, and a path without
  ``.ipynb`` is a 404 in JupyterLab);
- callouts and solutions as blockquotes opening with a bold label,
  ``> **Takeaway.** ...``, ``> **Solution to exercise 2.** ...`` (a MyST
  directive shows as a run-on paragraph or a code block), which
  book/_ext/portable_markdown.py turns into boxes and dropdowns on the site;
- no other MyST syntax, apart from math and ``{eval}`name``` (whose number
  ``glue`` also shows in the code cell just above; tests/test_glue_placement.py).

These tests read each chapter's markdown the way those front ends do.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from urllib.parse import unquote, urlparse

import nbformat
import pytest
from markdown_it import MarkdownIt

from conftest import ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
GLOSSARY = ROOT / "book" / "glossary.md"
COMMONMARK = MarkdownIt("commonmark").enable("table")   # what Colab and VS Code render

ROLE = re.compile(r"\{([a-z][\w:-]*)\}`")                 # {name}` , the start of a MyST role
FENCE = re.compile(r"^\s*(:{3,}|`{3,})\s*\{")             # a MyST directive's opening fence
OPTION = re.compile(r"^\s*:[\w-]+:(\s|$)", re.M)           # a directive option line, :class: tip
DEFINITION = re.compile(r"\n: ")                           # a MyST definition list
LABEL_LINE = re.compile(r"^\s*\([\w-]+\)=\s*$", re.M)      # a MyST target, (label)=
CALLOUT = re.compile(r"(Takeaway|Note|Warning|Worked example: .+?|Solution to exercise \d+)[.:]?")


def markdown_cells(path: Path) -> list[tuple[int, str]]:
    nb = nbformat.read(path, as_version=4)
    return [(i, c.source) for i, c in enumerate(nb.cells) if c.cell_type == "markdown"]


def sphinx_term_id(term: str) -> str:
    """The HTML id Sphinx gives a glossary term: ``term-`` and the term, each run of
    characters other than ASCII letters, digits, ``.`` and ``_`` made one hyphen."""
    return re.sub(r"[^a-zA-Z0-9._]+", "-", f"term-{term}").strip("-._")


def glossary_ids() -> set[str]:
    ids, inside = set(), False
    for line in GLOSSARY.read_text().splitlines():
        if line.startswith("```{glossary}"):
            inside = True
        elif inside and line.startswith("```"):
            break
        elif inside and line and not line[0].isspace() and not line.startswith(":"):
            ids.add(sphinx_term_id(line.strip()))
    return ids


def heading_slugs(markdown: list[str]) -> set[str]:
    """myst-parser's anchors for headings (GitHub's rule: lower case, spaces to hyphens,
    punctuation dropped, -1, -2 ... for repeats)."""
    slugs: set[str] = set()
    for text in markdown:
        tokens = COMMONMARK.parse(text)
        for k, token in enumerate(tokens):
            if token.type == "heading_open":
                base = re.sub(r"[^\w\- ]", "", tokens[k + 1].content.strip().lower()).replace(" ", "-")
                slug, n = base, 0
                while slug in slugs:
                    n += 1
                    slug = f"{base}-{n}"
                slugs.add(slug)
    return slugs


@functools.lru_cache(maxsize=None)
def anchors_of(path: Path) -> set[str]:
    """The ids a link may name in a page: its headings' slugs, its (label)= targets, and,
    for the glossary, its terms."""
    if path.suffix == ".ipynb":
        markdown = [source for _, source in markdown_cells(path)]
    else:
        markdown = [path.read_text()]
    found = heading_slugs(markdown) | {m for text in markdown for m in re.findall(r"^\(([\w-]+)\)=\s*$", text, re.M)}
    if path == GLOSSARY:
        found |= glossary_ids()
    return found


def links(source: str) -> list[str]:
    found = []
    for token in COMMONMARK.parse(source):
        for child in token.children or []:
            if child.type == "link_open":
                found.append(child.attrGet("href"))
    return found


def test_glossary_ids_follow_sphinx():
    """The id rule above is Sphinx's own (sphinx.util.nodes.make_id for a glossary term)."""
    from sphinx.util.nodes import _make_id

    for term in ("all-reduce", "SHARP/NVLS", "alpha-beta model", "NCCL model", "rail-only network"):
        assert sphinx_term_id(term) == _make_id(f"term-{term}")
    assert {"term-all-reduce", "term-SHARP-NVLS", "term-ZeRO"} <= glossary_ids()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_link_names_a_file_and_an_id_that_exist(path):
    problems = []
    for i, source in markdown_cells(path):
        for href in links(source):
            url = urlparse(href)
            if url.scheme in ("http", "https", "mailto"):
                continue
            if url.scheme or href.startswith("/"):
                problems.append(f"cell {i}: {href!r} is neither a web address nor a path relative to the chapter")
                continue
            if not url.path:
                problems.append(f"cell {i}: {href!r} points into this page; JupyterLab and Colab cannot follow it")
                continue
            target = (path.parent / unquote(url.path)).resolve()
            if not target.is_file():
                hint = " (add .ipynb: JupyterLab opens files, not pages)" if target.with_suffix(".ipynb").is_file() else ""
                problems.append(f"cell {i}: {href!r} names no file{hint}")
            elif target.suffix not in (".ipynb", ".md"):
                problems.append(f"cell {i}: {href!r} is not a page of the book")
            elif url.fragment and url.fragment not in anchors_of(target):
                problems.append(f"cell {i}: {href!r}: {target.name} has no heading, label or term with id {url.fragment!r}")
    assert not problems, f"{path.name}:\n" + "\n".join(problems)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_markdown_uses_no_myst_only_syntax(path):
    """Roles other than {eval}, directives, options, targets and definition lists show raw on Colab."""
    problems = []
    for i, source in markdown_cells(path):
        prose = re.sub(r"```.*?```", "", source, flags=re.S)       # code blocks may show any text
        for m in ROLE.finditer(prose):
            if m.group(1) != "eval":
                problems.append(f"cell {i}: the role {{{m.group(1)}}} (write a Markdown link)")
        for line in source.splitlines():
            if FENCE.match(line):
                problems.append(f"cell {i}: the directive {line.strip()!r} (write a blockquote opening with a bold label)")
        if LABEL_LINE.search(source):
            problems.append(f"cell {i}: a (label)= target (link to the heading's slug instead)")
    assert not problems, f"{path.name}:\n" + "\n".join(problems)


def rendered_blocks(source: str):
    """(kind, text) of each block plain CommonMark makes of the cell: paragraphs with their
    text, code blocks with their info string."""
    tokens = COMMONMARK.parse(source)
    for k, token in enumerate(tokens):
        if token.type == "paragraph_open":
            yield "paragraph", tokens[k + 1].content
        elif token.type == "fence":
            yield "code", token.info


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_plain_commonmark_shows_no_directive_as_a_run_on_paragraph_or_code(path):
    """What Colab and VS Code show: no paragraph made of a directive's fence, options or a
    definition list, and no code block that is a directive in disguise."""
    problems = []
    for i, source in markdown_cells(path):
        for kind, text in rendered_blocks(source):
            if kind == "code" and text.strip().startswith("{"):
                problems.append(f"cell {i}: a {text.strip()} directive shows as a code block")
            if kind != "paragraph":
                continue
            first = text.lstrip().splitlines()[0] if text.strip() else ""
            if FENCE.match(first) or re.match(r"^(:{3,}|`{3,})\s*$", first):
                problems.append(f"cell {i}: a paragraph opens with a directive fence: {first[:60]!r}")
            if OPTION.search(text):
                problems.append(f"cell {i}: a directive option runs into a paragraph: {text[:80]!r}")
            if DEFINITION.search(text):
                problems.append(f"cell {i}: a definition list runs into one paragraph: {text[:80]!r}")
    assert not problems, f"{path.name}:\n" + "\n".join(problems)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_callouts_are_blockquotes_with_a_label_the_site_knows(path):
    """A blockquote opening with a bold word that is nearly a label (a typo) would stay a
    plain quotation on the site: each one's label must be one the site turns into a box."""
    problems = []
    for i, source in markdown_cells(path):
        tokens = COMMONMARK.parse(source)
        for k, token in enumerate(tokens):
            if token.type != "blockquote_open":
                continue
            inline = next(t for t in tokens[k:] if t.type == "inline")
            m = re.match(r"\*\*(.+?)\*\*", inline.content)
            if m and not CALLOUT.fullmatch(m.group(1)):
                problems.append(f"cell {i}: a blockquote opens with **{m.group(1)}**, which is no callout label "
                                "(Takeaway, Note, Warning, Worked example: ..., Solution to exercise N)")
    assert not problems, f"{path.name}:\n" + "\n".join(problems)


def test_the_site_knows_the_same_labels():
    """The labels above are those book/_ext/portable_markdown.py turns into boxes."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("portable_markdown", ROOT / "book" / "_ext" / "portable_markdown.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for label in ("Takeaway.", "Note.", "Warning.", "Worked example: a DP all-reduce.", "Solution to exercise 12.",
                  "Takeaways", "Solution", "Worked example", "Exercise 1."):
        assert bool(module.LABEL.fullmatch(label)) == bool(CALLOUT.fullmatch(label)), label


def _sphinx_build(tmp_path, page: str) -> tuple[int, str, Path]:
    """Build a two-page Sphinx project (a page and a glossary) with myst-parser, this book's
    portable_markdown extension and warnings as errors, as the book builds."""
    import subprocess
    import sys

    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT / 'book' / '_ext')!r})\n"
        "extensions = ['myst_parser', 'sphinx_design', 'portable_markdown']\n"
        "myst_heading_anchors = 3\n")
    (src / "index.md").write_text("# Index\n\n```{toctree}\npage\nglossary\n```\n")
    (src / "glossary.md").write_text("# Glossary\n\n```{glossary}\nall-gather\n  A collective.\n\nSHARP/NVLS\n  Adding in the switch.\n```\n")
    (src / "page.md").write_text(page)
    out = tmp_path / "html"
    run = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(src), str(out)],
                         capture_output=True, text=True, timeout=300)
    return run.returncode, run.stderr, out


GOOD_PAGE = """# A page

## A section

See [all-gather](glossary.md#term-all-gather), [SHARP](glossary.md#term-SHARP-NVLS) and
[the section](page.md#a-section).

> **Takeaway.** A box with {math}`V/N`
> bytes.

> **Solution to exercise 1.** Folded.

> A plain quotation.
"""


def test_the_site_resolves_term_anchors_and_makes_boxes(tmp_path):
    code, log, out = _sphinx_build(tmp_path, GOOD_PAGE)
    assert code == 0, log
    html = (out / "page.html").read_text()
    assert 'href="glossary.html#term-all-gather"' in html and 'href="glossary.html#term-SHARP-NVLS"' in html
    assert 'href="#a-section"' in html
    assert re.search(r'<div class="tip admonition">\s*<p class="admonition-title">Takeaway</p>\s*<p>A box with', html)
    assert re.search(r'<details class="sd-sphinx-override sd-dropdown[^"]*">\s*<summary[^>]*>\s*'
                     r'<span class="sd-summary-text">Solution to exercise 1</span>', html)
    assert html.count("<blockquote>") == 1 and "A plain quotation." in html


@pytest.mark.parametrize("link, message", [
    ("[x](glossary.md#term-no-such-term)", "local id not found in doc 'glossary': 'term-no-such-term'"),
    ("[x](missing.md)", "cross-reference target not found: 'missing.md'"),
    ("[x](page.md#no-such-section)", "local id not found in doc 'page': 'no-such-section'"),
])
def test_a_broken_link_fails_the_build(tmp_path, link, message):
    """myst-parser's cross-reference warnings are on, and the book builds with warnings as errors."""
    code, log, _ = _sphinx_build(tmp_path, f"# A page\n\n{link}\n")
    assert code != 0 and message in log, log


def test_the_book_does_not_silence_cross_reference_warnings():
    import yaml

    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    silenced = (config.get("sphinx", {}).get("config", {}) or {}).get("suppress_warnings", [])
    assert not [w for w in silenced if w in ("myst", "myst.xref_missing", "ref", "ref.ref")], silenced
    assert "--warningiserror" in (ROOT / "Makefile").read_text()
