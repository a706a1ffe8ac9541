"""Quick checks on the chapters as committed: no outputs in git, every chapter
in the table of contents and every table-of-contents entry present, and every
chapter opening with the Colab install cell for this repository."""

from __future__ import annotations

import re

import nbformat
import pytest

from conftest import ROOT, load_config, notebook_pages, page_id, source_of, toc_files

NOTEBOOKS = sorted(p for p in (ROOT / "notebooks").rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def repository_url() -> str:
    return load_config()["repository"]["url"]


def read(path):
    return nbformat.read(path, as_version=4)


def test_there_are_notebooks():
    assert NOTEBOOKS, "no notebooks found under notebooks/"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_committed_without_outputs(path):
    nb = read(path)
    dirty = [
        i for i, cell in enumerate(nb.cells)
        if cell.cell_type == "code" and (cell.get("outputs") or cell.get("execution_count") is not None)
    ]
    assert not dirty, (
        f"{path.relative_to(ROOT)}: code cells {dirty} have outputs or execution counts; "
        "clear them before committing (JupyterLab: Edit > Clear Outputs of All Cells, "
        "or `jupyter nbconvert --clear-output --inplace`)"
    )
    assert "widgets" not in nb.metadata, f"{path.relative_to(ROOT)}: saved widget state in the notebook metadata"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_valid(path):
    nbformat.validate(read(path))


@pytest.mark.parametrize("page", toc_files(), ids=page_id)
def test_toc_entry_exists(page):
    source_of(page)  # raises with a clear message when missing or ambiguous


def test_every_notebook_is_in_the_toc():
    listed = set(toc_files())
    missing = [str(p.relative_to(ROOT).with_suffix("")) for p in NOTEBOOKS if str(p.relative_to(ROOT).with_suffix("")) not in listed]
    assert not missing, f"notebooks not listed in _toc.yml (they would not be built): {missing}"


def test_toc_lists_each_page_once():
    pages = toc_files()
    repeated = sorted({p for p in pages if pages.count(p) > 1})
    assert not repeated, f"_toc.yml lists these pages more than once: {repeated}"


def test_repository_url_is_named_once_in_config():
    text = (ROOT / "_config.yml").read_text()
    url = repository_url()
    assert url.startswith("https://github.com/"), url
    assert text.count("github.com") == 1, "_config.yml must name the repository only in repository.url"


@pytest.mark.parametrize("page", notebook_pages(), ids=page_id)
def test_chapter_opens_with_colab_install_cell(page):
    nb = read(ROOT / f"{page}.ipynb")
    assert nb.cells, f"{page}: empty notebook"
    first = nb.cells[0]
    where = f"{page}.ipynb, first cell"
    assert first.cell_type == "code", f"{where}: must be the Colab install code cell"
    assert "remove-cell" in first.metadata.get("tags", []), f"{where}: must be tagged remove-cell"
    assert "google.colab" in first.source, f"{where}: must install only when google.colab is importable"
    urls = re.findall(r"git\+(\S+?)[\"']", first.source)
    assert urls == [repository_url()], (
        f"{where}: installs {urls}, but _config.yml's repository.url is {repository_url()!r}"
    )


@pytest.mark.parametrize("page", notebook_pages(), ids=page_id)
def test_chapter_imports_the_library_in_its_second_cell(page):
    nb = read(ROOT / f"{page}.ipynb")
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert len(code) >= 2 and "import collectives_lib as cl" in code[1].source, (
        f"{page}: the first code cell after the Colab cell must import the library (`import collectives_lib as cl`)"
    )


@pytest.mark.parametrize("page", notebook_pages(), ids=page_id)
def test_chapter_has_a_title(page):
    nb = read(ROOT / f"{page}.ipynb")
    markdown = [c for c in nb.cells if c.cell_type == "markdown"]
    assert markdown and markdown[0].source.lstrip().startswith("# "), f"{page}: first markdown cell must start with a '# ' title"


GLUE_ROLE = re.compile(r"\{glue(:[a-z]+)?\}|```\{glue")
EVAL_ROLE = re.compile(r"\{eval\}`([^`]*)`")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_markdown_holds_no_glue_roles(path):
    """myst-nb's glue exists only on the built site; the prose uses {eval}`name` instead,
    which JupyterLab (jupyterlab-myst) evaluates too."""
    found = [(i, m.group(0)) for i, cell in enumerate(read(path).cells) if cell.cell_type == "markdown"
             for m in GLUE_ROLE.finditer(cell.source)]
    assert not found, f"{path.name}: markdown cells hold glue roles {found[:5]}; use {{eval}}`name`"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_inline_expressions_name_plain_variables(path):
    """myst-nb evaluates only plain names on the site (an expression renders nothing)."""
    bad = [(i, m.group(1)) for i, cell in enumerate(read(path).cells) if cell.cell_type == "markdown"
           for m in EVAL_ROLE.finditer(cell.source) if not m.group(1).isidentifier()]
    assert not bad, f"{path.name}: {{eval}} of something other than a variable name: {bad}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_chapters_need_no_book_tooling(path):
    """Colab, VS Code and Binder have no myst_nb or jupyter_book: a chapter imports neither."""
    bad = [i for i, cell in enumerate(read(path).cells) if cell.cell_type == "code"
           and re.search(r"^\s*(from|import)\s+(myst_nb|jupyter_book|sphinx)\b", cell.source, re.M)]
    assert not bad, f"{path.name}: code cells {bad} import the book's build tooling"


@pytest.mark.parametrize("page", notebook_pages(), ids=page_id)
def test_colab_cell_installs_the_extras_the_chapter_uses(page):
    """Colab has no mpi4py: a chapter that runs MPI installs the library with its mpi extra."""
    nb = read(ROOT / f"{page}.ipynb")
    uses_mpi = any(cell.cell_type == "code" and re.search(r"\b(cl|collectives_lib)\.mpi\b", cell.source)
                   for cell in nb.cells[1:])
    asks = bool(re.search(r"collectives_lib\[[a-z,]*\bmpi\b[a-z,]*\]\s*@\s*git\+", nb.cells[0].source))
    assert uses_mpi == asks, (
        f"{page}: {'runs MPI but its Colab cell does not install' if uses_mpi else 'installs without using'} "
        "the mpi extra (\"collectives_lib[mpi] @ git+<repository>\")")


def test_set_repository_points_config_and_every_colab_cell_at_a_fork(tmp_path):
    import shutil
    import subprocess
    import sys

    (tmp_path / "book").mkdir()
    shutil.copy(ROOT / "book" / "set_repository.py", tmp_path / "book")
    shutil.copy(ROOT / "_config.yml", tmp_path)
    shutil.copytree(ROOT / "notebooks", tmp_path / "notebooks")
    fork = "https://github.com/someone/collectives-fork"
    script = str(tmp_path / "book" / "set_repository.py")
    run = subprocess.run([sys.executable, script, fork + ".git"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    config = (tmp_path / "_config.yml").read_text()
    assert f"url: {fork}\n" in config and config.count("github.com") == 1
    for path in (tmp_path / "notebooks").glob("*.ipynb"):
        assert re.findall(r"git\+(\S+?)[\"']", read(path).cells[0].source) == [fork], path.name
    bad = subprocess.run([sys.executable, script, "not a url"], capture_output=True, text=True, timeout=120)
    assert bad.returncode != 0 and "'not a url' is not a GitHub repository URL" in bad.stderr
    assert "Traceback" not in bad.stderr
