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
