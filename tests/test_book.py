"""The executed book build is a test: it must succeed with warnings as errors,
every notebook must run without an error, and every page must stay light and
self-contained (nothing fetched from another host)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlparse

import nbformat
import pytest

from conftest import EXECUTED_DIR, ROOT, notebook_pages, page_id, toc_files

pytestmark = pytest.mark.slow

MAX_PAGE_BYTES = 2_000_000
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


class _Assets(HTMLParser):
    """Collects the URLs a page loads: scripts, stylesheets, images."""

    def __init__(self):
        super().__init__()
        self.scripts, self.styles, self.images = [], [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "script" and a.get("src"):
            self.scripts.append(a["src"])
        elif tag == "link" and "stylesheet" in (a.get("rel") or "") and a.get("href"):
            self.styles.append(a["href"])
        elif tag == "img" and a.get("src"):
            self.images.append(a["src"])


def assets(html_path: Path) -> _Assets:
    parser = _Assets()
    parser.feed(html_path.read_text())
    return parser


def html_of(built_book, page: str) -> Path:
    return built_book.html / f"{page}.html"


def page_weight(built_book, page: str) -> int:
    """Bytes of the page's HTML (with its embedded images) plus the local images it shows.
    Shared theme assets (CSS, JS, fonts, MathJax) are cached across pages and not counted."""
    path = html_of(built_book, page)
    total = path.stat().st_size
    for src in set(assets(path).images):
        if src.startswith("data:") or urlparse(src).scheme:
            continue
        total += (path.parent / unquote(urlparse(src).path)).resolve().stat().st_size
    return total


def test_build_succeeded_and_wrote_every_page(built_book):
    missing = [p for p in toc_files() if not html_of(built_book, p).exists()]
    assert not missing, f"pages listed in _toc.yml but not built: {missing}"
    assert (built_book.html / "index.html").exists()


@pytest.mark.parametrize("page", notebook_pages(), ids=page_id)
def test_notebook_was_executed_without_errors(built_book, page):
    executed = EXECUTED_DIR / f"{page}.ipynb"
    assert executed.exists(), f"{executed.relative_to(ROOT)} missing: was the notebook executed?"
    nb = nbformat.read(executed, as_version=4)
    problems = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        if cell.get("execution_count") is None and cell.source.strip():
            problems.append(f"cell {i} was not executed")
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                problems.append(f"cell {i} raised {out.get('ename')}: {out.get('evalue')}")
            text = out.get("text", "") if out.get("output_type") == "stream" else ""
            if "Traceback (most recent call last)" in text:
                problems.append(f"cell {i} printed a traceback")
            if out.get("output_type") == "stream" and out.get("name") == "stderr":
                problems.append(f"cell {i} wrote to stderr: {text[:200]!r}")
    assert not problems, f"{page}:\n" + "\n".join(problems)


@pytest.mark.parametrize("page", notebook_pages(), ids=page_id)
def test_every_widget_has_a_static_twin(built_book, page):
    """A live widget shows nothing on the static site: each needs a text/html twin
    (use collectives_lib.book.explore rather than raw ipywidgets)."""
    nb = nbformat.read(EXECUTED_DIR / f"{page}.ipynb", as_version=4)
    bare = [
        i for i, cell in enumerate(nb.cells) if cell.cell_type == "code"
        for out in cell.get("outputs", [])
        if WIDGET_VIEW in out.get("data", {}) and "text/html" not in out.get("data", {})
    ]
    assert not bare, f"{page}: cells {bare} display a widget with no static twin"


@pytest.mark.parametrize("page", toc_files(), ids=page_id)
def test_page_weight_under_2_MB(built_book, page):
    weight = page_weight(built_book, page)
    assert weight < MAX_PAGE_BYTES, (
        f"{page}.html weighs {weight / 1e6:.2f} MB with its images (limit {MAX_PAGE_BYTES / 1e6:g} MB): "
        "pre-render fewer explorer positions with static=..."
    )


@pytest.mark.parametrize("page", toc_files(), ids=page_id)
def test_page_loads_nothing_from_other_hosts(built_book, page):
    found = assets(html_of(built_book, page))
    external = [u for u in found.scripts + found.styles + found.images if urlparse(u).scheme in ("http", "https") or u.startswith("//")]
    assert not external, f"{page}.html loads from other hosts: {external}"


def test_mathjax_is_served_locally(built_book):
    page = html_of(built_book, "book/notation")
    scripts = assets(page).scripts
    local = [s for s in scripts if "mathjax/tex-chtml.js" in s]
    assert local, f"notation.html does not load the local MathJax; scripts: {scripts}"
    assert (page.parent / urlparse(local[0]).path).resolve().is_file()
    fonts = list((built_book.html / "_static" / "mathjax" / "output" / "chtml" / "fonts" / "woff-v2").glob("*.woff"))
    assert fonts, "MathJax's fonts were not copied into _static/mathjax"


def test_no_page_embeds_saved_widget_state(built_book):
    for page in toc_files():
        text = html_of(built_book, page).read_text()
        assert "application/vnd.jupyter.widget-state+json" not in text, f"{page}.html embeds widget state"


def test_static_twins_carry_alt_text(built_book):
    for page in notebook_pages():
        text = html_of(built_book, page).read_text()
        for tag in re.findall(r"<img\b[^>]*>", text):
            assert re.search(r'\balt="[^"]+"', tag), f"{page}.html: image without alt text: {tag[:120]}"


def test_no_page_carries_thebe(built_book):
    """No Live Code button, and none of sphinx-thebe's scripts or its CDN address (book/_ext/page_fixes.py)."""
    for page in toc_files():
        text = html_of(built_book, page).read_text()
        assert not re.search(r"thebe|unpkg\.com", text, re.I), f"{page}.html still carries Thebe"


@pytest.mark.parametrize("page", notebook_pages(), ids=page_id)
def test_prose_numbers_are_filled_in(built_book, page):
    """Every {eval}`name` of the chapter became its value on the page (myst-nb inline execution)."""
    source = nbformat.read(ROOT / f"{page}.ipynb", as_version=4)
    expected = sum(len(re.findall(r"\{eval\}`[^`]+`", c.source)) for c in source.cells if c.cell_type == "markdown")
    text = html_of(built_book, page).read_text()
    assert "{eval}" not in text and "{glue" not in text, f"{page}.html shows role text"
    filled = re.findall(r'<span class="output text_plain">([^<]*)</span>', text)
    assert len(filled) >= expected, f"{page}.html: {len(filled)} numbers filled in, the prose has {expected}"
    assert all(v.strip() and v.strip()[0] not in "'\"" for v in filled), f"{page}.html: quoted or empty values"


class _Links(HTMLParser):
    """The href of every link on a page, and every id it defines."""

    def __init__(self):
        super().__init__()
        self.hrefs, self.ids = [], set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "a" and a.get("href"):
            self.hrefs.append(a["href"])


def _links(path: Path) -> _Links:
    parser = _Links()
    parser.feed(path.read_text())
    return parser


def test_no_internal_link_is_broken(built_book):
    """Every link between the site's pages names a page that exists and, with a #fragment,
    an id on that page (the chapters' Markdown links, the glossary terms, the references)."""
    pages: dict[Path, _Links] = {}

    def page(path: Path) -> _Links:
        if path not in pages:
            pages[path] = _links(path)
        return pages[path]

    broken = []
    for name in toc_files():
        source = html_of(built_book, name)
        for href in page(source).hrefs:
            url = urlparse(href)
            if url.scheme or href.startswith(("//", "javascript:")):
                continue
            target = (source.parent / unquote(url.path)).resolve() if url.path else source
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file():
                broken.append(f"{name}: {href} (no such file)")
            elif url.fragment and target.suffix == ".html" and unquote(url.fragment) not in page(target).ids:
                broken.append(f"{name}: {href} (no id {url.fragment!r} on {target.name})")
    assert not broken, f"{len(broken)} broken links:\n" + "\n".join(sorted(set(broken))[:40])


@pytest.mark.parametrize("page", notebook_pages(), ids=page_id)
def test_callouts_became_boxes_and_dropdowns(built_book, page):
    """Each `> **Takeaway.**` blockquote of the chapter is a tip box on the site and each
    `> **Solution to exercise N.**` a folded dropdown (book/_ext/portable_markdown.py)."""
    source = nbformat.read(ROOT / f"{page}.ipynb", as_version=4)
    text = "\n".join(c.source for c in source.cells if c.cell_type == "markdown")
    takeaways = len(re.findall(r"^> \*\*Takeaway\.\*\*", text, re.M))
    solutions = len(re.findall(r"^> \*\*Solution to exercise \d+\.\*\*", text, re.M))
    html = html_of(built_book, page).read_text()
    assert html.count('<div class="tip admonition">') == takeaways, f"{page}: {takeaways} takeaways in the source"
    assert len(re.findall(r'<details class="sd-sphinx-override sd-dropdown', html)) == solutions
    leaked = re.findall(r"<blockquote>\s*<div>\s*<p><strong>(Takeaway|Solution to exercise|Worked example|Note|Warning)",
                        html)
    assert not leaked, f"{page}: callouts left as quotations: {leaked}"


_HIDDEN = re.compile(r"<(pre|code|script|style|textarea)\b.*?</\1>", re.S | re.I)
# a line of pipes, colons and dashes only, with a pipe and a run of dashes; Sphinx's smart
# quotes turn a "---" left in the text into an em dash, "--" into an en dash
_TABLE_RULE = re.compile(r"^[ \t]*(?=[^\n]*\|)(?=[^\n]*(?:-{3,}|[\u2013\u2014]))[|: \t\-\u2013\u2014]+$", re.M)
_RAW_MATH = re.compile(r"\$[^$\n<>]*\\[A-Za-z]+[^$\n<>]*\$")


def raw_markdown(html: str) -> list[str]:
    """Markdown that reached the page unparsed: a table's rule line (``| --- |``,
    ``|---|---|``) or ``$...$`` holding a TeX command, in the page's text (code blocks,
    scripts and styles left out). A ``text/markdown`` output rendered as CommonMark
    (myst-nb's default) shows both; ``nb_render_markdown_format: myst`` renders them."""
    from html import unescape

    text = unescape(re.sub(r"<[^>]+>", "\n", _HIDDEN.sub("\n", html)))
    return [m.group(0).strip() for m in _TABLE_RULE.finditer(text)] + _RAW_MATH.findall(text)


def test_raw_markdown_is_recognised():
    # what a CommonMark-rendered table output looks like on the page, and the same rendered
    commonmark = "<p>| case | time |\n| \u2014 | \u2014 |\n| 1 | $\\frac{V}{W}$ |</p>"
    gfm = "<table><tr><th>case</th><th>$\\frac{V}{W}$</th></tr><tr><td>|---|</td></tr></table>"
    rendered = ('<table><tr><th>case</th><td><span class="math">\\(\\frac{V}{W}\\)</span></td></tr>'
                "</table><pre>| --- | --- |\n$\\alpha$</pre><p>costs $5 and $6</p>")
    assert raw_markdown(commonmark) == ["| \u2014 | \u2014 |", "$\\frac{V}{W}$"]
    assert raw_markdown("<p>|:---|---:|</p><hr/><p>---</p><p>a | b</p>") == ["|:---|---:|"]
    assert raw_markdown(gfm) == ["|---|", "$\\frac{V}{W}$"]
    assert raw_markdown(rendered) == []


def test_no_page_shows_raw_markdown(built_book):
    """Tables and math printed by a code cell as Markdown (``display(Markdown(...))``) are
    rendered on the site, not left as pipes and dollars (_config.yml: nb_render_markdown_format)."""
    found = {page: raw_markdown(html_of(built_book, page).read_text()) for page in toc_files()}
    found = {page: hits for page, hits in found.items() if hits}
    assert not found, "raw Markdown on the site: " + "; ".join(f"{p}: {h[:3]}" for p, h in found.items())


def test_table_identifiers_break_after_underscores_and_hyphens(built_book):
    """A long name in a table cell breaks after a ``_`` or ``-`` (``NCCL_COLLNET_`` /
    ``ENABLE``), never inside a word (book/_ext/page_fixes.py); code outside tables is as
    written."""
    html = html_of(built_book, "notebooks/running_nccl").read_text()
    assert "NCCL_<wbr>COLLNET_<wbr>ENABLE" in html
    outside = _TABLES.sub("", html)
    assert "<wbr>" not in outside


_TABLES = re.compile(r"<table\b.*?</table>", re.S)
