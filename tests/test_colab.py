"""Every chapter on Google Colab's packages, without the book's tooling.

A separate virtual environment holds the packages Colab's runtime has
(tests/data/colab-runtime.txt: its numpy, matplotlib, IPython and ipywidgets
7.7) and the library installed the way a chapter's Colab cell installs it,
from a copy of the package source, with the extras that cell asks for. No
myst_nb, no Jupyter Book. Each chapter then runs in an empty folder, in a
kernel of that environment, cell by cell (tests/notebook_run.py), and must
finish with no error and nothing on stderr; every inline expression of its
prose must name a number that exists, as text, when the reader reaches it; and
every explorer must be a live widget.

The environment is made once per set of pins, in _build/colab-venv (about a
minute and 300 MB); the library is reinstalled into it on every run.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest

from conftest import BUILD_DIR, ROOT, notebook_pages, page_id

pytestmark = pytest.mark.slow

RUNTIME = ROOT / "tests" / "data" / "colab-runtime.txt"
RUNNER = ROOT / "tests" / "notebook_run.py"
VENV = BUILD_DIR / "colab-venv"
INSTALL_TIMEOUT = 15 * 60    # seconds, for pip
CHAPTER_TIMEOUT = 15 * 60    # seconds, for one chapter
EXTRAS = re.compile(r"collectives_lib\[([a-z,]+)\]\s*@\s*git\+")


def pins() -> dict[str, str]:
    lines = [ln.split("#")[0].strip() for ln in RUNTIME.read_text().splitlines()]
    return dict(ln.split("==") for ln in lines if ln)


def requested_extras() -> set[str]:
    """The extras the chapters' Colab cells install with the library (``collectives_lib[mpi] @ git+...``)."""
    found = set()
    for page in notebook_pages():
        first = nbformat.read(ROOT / f"{page}.ipynb", as_version=4).cells[0].source
        for group in EXTRAS.findall(first):
            found.update(group.split(","))
    return found


def _pip(python: Path, *args: str) -> None:
    result = subprocess.run([str(python), "-m", "pip", "--disable-pip-version-check", "--quiet", *args],
                            capture_output=True, text=True, timeout=INSTALL_TIMEOUT)
    if result.returncode:
        pytest.fail(f"pip {' '.join(args)} failed:\n{result.stderr[-3000:]}")


@pytest.fixture(scope="session")
def colab_python() -> Path:
    python = VENV / "bin" / "python"
    stamp = VENV / f".pins-{hashlib.sha256(RUNTIME.read_bytes()).hexdigest()[:16]}"
    if not stamp.exists():
        shutil.rmtree(VENV, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True, timeout=300)
        _pip(python, "install", "-r", str(RUNTIME))
        # matplotlib builds its font cache on first import, and says so on stderr
        subprocess.run([str(python), "-c", "import matplotlib.font_manager"], check=True, timeout=300,
                       capture_output=True)
        stamp.touch()
    # The library as `pip install git+<repository>` installs it: built from the package
    # source (a copy, so no build files land in the working tree), with the chapters' extras.
    with tempfile.TemporaryDirectory(prefix="colab-src-") as tmp:
        src = Path(tmp)
        shutil.copytree(ROOT / "collectives_lib", src / "collectives_lib",
                        ignore=shutil.ignore_patterns("__pycache__"))
        for name in ("pyproject.toml", "README.md"):
            shutil.copy(ROOT / name, src / name)
        extras = ",".join(sorted(requested_extras()))
        _pip(python, "uninstall", "-y", "collectives_lib")
        _pip(python, "install", f"{src}[{extras}]" if extras else str(src))
    return python


def explorer_calls(nb) -> list[int]:
    return [i for i, cell in enumerate(nb.cells) if cell.cell_type == "code" and "explorer(" in cell.source]


@pytest.mark.parametrize("page", notebook_pages(), ids=page_id)
def test_chapter_runs_on_colabs_packages(colab_python, page, tmp_path):
    notebook = ROOT / f"{page}.ipynb"
    report_path = tmp_path / "report.json"
    env = {k: v for k, v in os.environ.items() if k not in ("COLLECTIVES_BOOK_BUILD", "PYTHONPATH")}
    env["PATH"] = f"{colab_python.parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"   # the kernel's debugger, talking about frozen modules
    try:
        run = subprocess.run([str(colab_python), str(RUNNER), str(notebook), str(report_path)],
                             capture_output=True, text=True, timeout=CHAPTER_TIMEOUT, env=env, cwd=tmp_path)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{page}: did not finish in {CHAPTER_TIMEOUT} s")
    assert run.returncode == 0 and report_path.exists(), f"{page}: the runner failed:\n{run.stderr[-3000:]}"
    report = json.loads(report_path.read_text())

    probe = report.get("probe", {})
    expected = pins()
    assert probe, f"{page}: the kernel did not start: {report['errors']}"
    assert not probe["myst_nb"] and not probe["jupyter_book"], f"{page}: the book's tooling is importable: {probe}"
    assert probe["ipywidgets"] == expected["ipywidgets"] and probe["numpy"] == expected["numpy"], probe
    assert probe["library"].startswith(str(VENV)), f"the kernel imported the library from {probe['library']}"

    assert not report["errors"], f"{page} stopped on Colab's packages:\n" + "\n".join(report["errors"])
    assert not report["stderr"], f"{page} wrote to stderr:\n" + "\n".join(report["stderr"])
    assert not report["eval_problems"], (
        f"{page}: the prose names numbers that are not there when a reader reaches them:\n"
        + "\n".join(report["eval_problems"]))
    nb = nbformat.read(notebook, as_version=4)
    prose = sum(len(set(re.findall(r"\{eval\}`([^`]+)`", c.source))) for c in nb.cells if c.cell_type == "markdown")
    assert report["evals"] == prose, f"{page}: evaluated {report['evals']} inline expressions of {prose}"
    explorers = report["explorers"]
    assert all(e["live"] for e in explorers), f"{page}: explorers without a live widget: {explorers}"
    calls = explorer_calls(nb)
    shown = {e["cell"] for e in explorers}
    assert set(calls) <= shown, f"{page}: cells {sorted(set(calls) - shown)} call explorer() but show no explorer"
