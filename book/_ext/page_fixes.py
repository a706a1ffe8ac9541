"""Two small fixes to the pages Jupyter Book 1.0.4 writes, so they load with no
JavaScript errors and name no CDN (tests/test_browser.py and tests/test_book.py
check both).

1. The book has no "Live Code" button (``launch_buttons.thebe: false``: Thebe
   0.8 comes from a CDN and speaks only the ipywidgets 7 protocol), but Jupyter
   Book loads sphinx-thebe anyway, which puts its scripts, stylesheet and a
   Thebe configuration naming a CDN and a stranger's Binder repository on every
   page (and, with Sphinx 7.4, its inline script twice, the second copy
   throwing ``Identifier 'THEBE_JS_URL' has already been declared``). We drop
   all of it.
2. pydata-sphinx-theme reads the light/dark mode from ``html_context
   ["default_mode"]``, which Jupyter Book leaves empty, so a first visit logs
   ``Got invalid theme mode``. We default it to ``auto`` (follow the system),
   unless the configuration sets it; the theme's switch still offers light and dark.
3. The chapters' code and printed lines are at most 88 characters, which the
   theme's 14px monospace does not fit in the content column (77): a stylesheet
   (``static/code_width.css``) sets code cells' text to 12px, so nothing scrolls sideways.
   The same stylesheet dims static figures in dark mode as the explorers' cards are.
4. Identifiers in table cells (``NCCL_COLLNET_ENABLE``, run names such as
   ``h100x8-2node-ib-allreduce-ring-minctas24-issue309-gjaion``) are wider than a
   column should be: a ``<wbr>`` after each ``_``, ``.`` and ``-`` lets them break there and
   only there (``NCCL_COLLNET_`` / ``ENABLE``, not ``NCCL_COLLNET_ENABL`` / ``E``); the
   break opportunity is not a character, so a copied name is unchanged.
"""

from __future__ import annotations

import re
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx


def _is_thebe(asset) -> bool:
    filename = getattr(asset, "filename", asset) or ""
    body = getattr(asset, "attributes", {}).get("body") or ""
    return "thebe" in str(filename) or "THEBE_JS_URL" in body


def _drop_thebe_assets(app: Sphinx, pagename, templatename, context, doctree) -> None:
    for key in ("script_files", "css_files"):
        if context.get(key):
            context[key] = [asset for asset in context[key] if not _is_thebe(asset)]


def _drop_thebe_config(app: Sphinx, doctree, docname) -> None:
    for node in list(doctree.findall(nodes.raw)):
        if "text/x-thebe-config" in node.astext():
            node.parent.remove(node)


def _default_mode(app: Sphinx, config) -> None:
    context = dict(config.html_context or {})
    context.setdefault("default_mode", "auto")
    config.html_context = context


def _code_width(app: Sphinx, config) -> None:
    config.html_static_path = list(config.html_static_path or []) + [str(Path(__file__).parent / "static")]


_TABLE = re.compile(r"<table\b.*?</table>", re.S)
_CODE = re.compile(r"(<code\b[^>]*>)(.*?)(</code>)", re.S)
_TEXT = re.compile(r"(?<=[_.-])(?=[^<\s])")    # after _ . or -, inside text (not before a tag)


def _code_breaks(html: str) -> str:
    """``html`` with a ``<wbr>`` after every ``_``, ``.`` and ``-`` of code inside tables."""
    def code(m: re.Match) -> str:
        parts = re.split(r"(<[^>]*>)", m.group(2))       # tags kept as they are
        inner = "".join(p if p.startswith("<") else _TEXT.sub("<wbr>", p) for p in parts)
        return m.group(1) + inner + m.group(3)
    return _TABLE.sub(lambda t: _CODE.sub(code, t.group(0)), html)


def _break_table_code(app: Sphinx, pagename, templatename, context, doctree) -> None:
    if context.get("body"):
        context["body"] = _code_breaks(context["body"])


def setup(app: Sphinx) -> dict:
    app.connect("config-inited", _default_mode)
    app.connect("config-inited", _code_width)
    app.add_css_file("code_width.css")
    app.connect("html-page-context", _drop_thebe_assets)
    app.connect("html-page-context", _break_table_code)
    app.connect("doctree-resolved", _drop_thebe_config, priority=900)  # after sphinx-thebe adds it
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1.0"}
