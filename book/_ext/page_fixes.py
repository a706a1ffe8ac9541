"""Two small fixes to the pages Jupyter Book 1.0.4 writes, so they load with no
JavaScript errors (tests/test_browser.py checks that they do).

1. sphinx-thebe 0.3.1 registers its inline configuration script
   (``const THEBE_JS_URL = ...``) twice on every page with Sphinx 7.4, and the
   second copy throws ``Identifier 'THEBE_JS_URL' has already been declared``.
   We drop repeated inline scripts with identical bodies from each page.
2. pydata-sphinx-theme reads the light/dark mode from ``html_context
   ["default_mode"]``, which Jupyter Book leaves empty, so a first visit logs
   ``Got invalid theme mode``. We default it to ``auto`` (follow the system),
   unless the configuration sets it; the theme's switch still offers light and dark.
"""

from __future__ import annotations

from sphinx.application import Sphinx


def _dedupe_inline_scripts(app: Sphinx, pagename, templatename, context, doctree) -> None:
    scripts = context.get("script_files")
    if not scripts:
        return
    seen = set()
    kept = []
    for script in scripts:
        filename = getattr(script, "filename", script)
        body = getattr(script, "attributes", {}).get("body")
        if not filename and body:
            if body in seen:
                continue
            seen.add(body)
        kept.append(script)
    context["script_files"] = kept


def _default_mode(app: Sphinx, config) -> None:
    context = dict(config.html_context or {})
    context.setdefault("default_mode", "auto")
    config.html_context = context


def setup(app: Sphinx) -> dict:
    app.connect("config-inited", _default_mode)
    app.connect("html-page-context", _dedupe_inline_scripts)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1.0"}
