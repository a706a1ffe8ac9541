"""Every chapter on Google Colab's Python and packages, without the book's tooling.

A separate virtual environment, made with a Python of Colab's version (3.13,
as named in tests/data/colab-runtime.txt), holds exactly the packages Colab's
runtime has that the chapters' imports pull in, at Colab's versions: all 93
of them, not only numpy, matplotlib, IPython and ipywidgets 7.7 but every
dependency (installed with --no-deps, so nothing else comes in). The library
is installed the way a chapter's Colab cell installs it, from a copy of the
package source, with the extras that cell asks for, constrained to those
versions. No myst_nb, no Jupyter Book. Each chapter then runs in an empty
folder, in a kernel of that environment, cell by cell (tests/notebook_run.py),
and must finish with no error and nothing on stderr; every inline expression
of its prose must name a number that exists, as text, when the reader reaches
it, and that a code cell's output showed just above (Colab shows the
expression itself); and every explorer must be a live widget.

The Python is found as $COLAB_PYTHON, ``python3.13`` on the PATH, or in
pyenv's versions (this project's machines carry pyenv's 3.13.0; Colab runs
3.13.15). Without one the tests are skipped, saying so: Python 3.13 cannot be
installed from PyPI, Debian 12 has no package of it, and ``uv python install``
downloads from GitHub.

The environment is made once per set of pins, in _build/colab-venv (about two
minutes and 800 MB); the library is reinstalled into it on every run.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
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
    return {norm(k): v for k, v in (ln.split("==") for ln in lines if ln)}


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def colab_python_version() -> str:
    """The Python version Colab runs, as written in the runtime file (``# python: 3.13``)."""
    m = re.search(r"^# python: (\d+\.\d+)\s*$", RUNTIME.read_text(), re.M)
    assert m, f"{RUNTIME.name} names no Python version ('# python: X.Y')"
    return m.group(1)


def find_python(version: str) -> Path | None:
    """A Python of that version: $COLAB_PYTHON, pythonX.Y on the PATH, or one of pyenv's."""
    candidates = [os.environ.get("COLAB_PYTHON"), shutil.which(f"python{version}")]
    for root in {os.environ.get("PYENV_ROOT"), str(Path.home() / ".pyenv")} - {None}:
        candidates += sorted(str(p) for p in Path(root).glob(f"versions/{version}.*/bin/python{version}"))
    for candidate in filter(None, candidates):
        try:
            out = subprocess.run([candidate, "-c", "import sys, venv; print('%d.%d' % sys.version_info[:2])"],
                                 capture_output=True, text=True, timeout=60)
        except OSError:
            continue
        if out.returncode == 0 and out.stdout.strip() == version:
            return Path(candidate)
    return None


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
    version = colab_python_version()
    base = find_python(version)
    if base is None:
        pytest.skip(f"no Python {version} (Colab's) here: set COLAB_PYTHON, or put python{version} on the PATH "
                    "or in pyenv's versions")
    python = VENV / "bin" / "python"
    stamp = VENV / f".pins-{hashlib.sha256(RUNTIME.read_bytes() + bytes(base)).hexdigest()[:16]}"
    if not stamp.exists():
        shutil.rmtree(VENV, ignore_errors=True)
        subprocess.run([str(base), "-m", "venv", str(VENV)], check=True, timeout=300)
        # Exactly Colab's packages: every dependency is pinned in the file, so pip adds nothing.
        _pip(python, "install", "--no-deps", "-r", str(RUNTIME))
        # The closure is complete: nothing the pins need is missing (but jedi, as on Colab).
        check = subprocess.run([str(python), "-m", "pip", "check"], capture_output=True, text=True, timeout=300)
        missing = [ln for ln in check.stdout.splitlines() if ln.strip() and "requires jedi" not in ln]
        if missing:
            pytest.fail(f"{RUNTIME.name} misses packages its pins need:\n" + "\n".join(missing))
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
        # As the chapter's cell does on Colab: what Colab has stays at Colab's versions.
        _pip(python, "install", "-c", str(RUNTIME), f"{src}[{extras}]" if extras else str(src))
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
    assert probe["python"].startswith(colab_python_version() + "."), probe
    assert probe["library"].startswith(str(VENV)), f"the kernel imported the library from {probe['library']}"

    assert not report["errors"], f"{page} stopped on Colab's packages:\n" + "\n".join(report["errors"])
    assert not report["stderr"], f"{page} wrote to stderr:\n" + "\n".join(report["stderr"])
    assert not report["eval_problems"], (
        f"{page}: the prose names numbers that are not there when a reader reaches them:\n"
        + "\n".join(report["eval_problems"]))
    assert not report["far_numbers"], (
        f"{page}: numbers a Colab reader finds far above the sentence that names them "
        "(glue them, or show them again with glue(\"name\"), right above it):\n" + "\n".join(report["far_numbers"]))
    nb = nbformat.read(notebook, as_version=4)
    prose = sum(len(set(re.findall(r"\{eval\}`([^`]+)`", c.source))) for c in nb.cells if c.cell_type == "markdown")
    assert report["evals"] == prose, f"{page}: evaluated {report['evals']} inline expressions of {prose}"
    explorers = report["explorers"]
    assert all(e["live"] for e in explorers), f"{page}: explorers without a live widget: {explorers}"
    calls = explorer_calls(nb)
    shown = {e["cell"] for e in explorers}
    assert set(calls) <= shown, f"{page}: cells {sorted(set(calls) - shown)} call explorer() but show no explorer"
