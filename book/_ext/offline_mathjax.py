"""Serve MathJax from the book's own ``_static`` folder instead of a CDN.

Sphinx loads MathJax 3 from jsDelivr by default, so the formulas of a book
opened offline (or behind a firewall) would show as raw TeX. MathJax 3.2.2 is
available from PyPI as a plain data package (``django-static-mathjax``; it does
not need Django), pinned in ``requirements.txt``. This extension points
``mathjax_path`` at ``_static/mathjax/tex-chtml.js`` and, after an HTML build,
copies the pieces MathJax needs next to it:

* ``tex-chtml.js``: TeX input and CommonHTML output in one file;
* ``output/chtml/fonts/woff-v2``: the fonts CommonHTML loads relative to the script;
* ``input/tex/extensions``: TeX packages MathJax loads on demand (``\\require``, autoload);
* ``ui`` and ``a11y``: the right-click menu and its accessibility tools.

It leaves out the speech-rule engine (``sre``, 3.9 MB), which only the menu's
speech option asks for. Installed size in ``_build/html/_static/mathjax``: about 4 MB.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError

MATHJAX_SUBDIR = "mathjax"
ENTRY = "tex-chtml.js"
PARTS = [ENTRY, "output/chtml/fonts", "input/tex/extensions", "ui", "a11y", "adaptors"]


def mathjax_es5_dir() -> Path:
    try:
        import mathjax  # the django-static-mathjax distribution
    except ImportError as err:  # pragma: no cover - guarded by requirements.txt
        raise ExtensionError(
            "offline_mathjax: the package django-static-mathjax is not installed; "
            "run `make book` (or `pip install -r requirements.txt`)"
        ) from err
    es5 = Path(mathjax.__file__).parent / "static" / "mathjax" / "es5"
    if not (es5 / ENTRY).is_file():
        raise ExtensionError(f"offline_mathjax: {es5 / ENTRY} not found; reinstall django-static-mathjax")
    return es5


def _config_inited(app: Sphinx, config) -> None:
    mathjax_es5_dir()  # fail early, with a clear message
    # A relative mathjax_path is relative to the _static folder of the built site.
    config.mathjax_path = f"{MATHJAX_SUBDIR}/{ENTRY}"


def _build_finished(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    src = mathjax_es5_dir()
    dst = Path(app.outdir) / "_static" / MATHJAX_SUBDIR
    for part in PARTS:
        source, target = src / part, dst / part
        if source.is_dir():
            shutil.copytree(source, target, dirs_exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def setup(app: Sphinx) -> dict:
    app.connect("config-inited", _config_inited)
    app.connect("build-finished", _build_finished)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1.0"}
