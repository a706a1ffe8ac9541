"""Point the book at another repository (a fork): ``make repository URL=https://github.com/you/fork``.

The repository is named in one place, ``repository.url`` in ``_config.yml``:
the site's Binder, Colab and repository buttons read it from there. The one
copy outside it is each chapter's Colab cell, which installs the library with
``pip install git+<url>`` (a notebook opened on Colab cannot read the book's
configuration). This script writes the URL into ``_config.yml`` and then into
every chapter's Colab cell; with no URL it only brings the cells in line with
``_config.yml``. tests/test_notebooks.py fails while the two disagree.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "_config.yml"
URL = re.compile(r"https://github\.com/[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+")


def set_config_url(url: str) -> None:
    text = CONFIG.read_text()
    new, n = re.subn(r"(?m)^(  url: )\S+$", lambda m: m.group(1) + url, text)
    if n != 1:
        sys.exit("_config.yml: expected exactly one 'repository: url:' line")
    CONFIG.write_text(new)


def set_chapters(url: str) -> list[Path]:
    changed = []
    for path in sorted((ROOT / "notebooks").rglob("*.ipynb")):
        if ".ipynb_checkpoints" in path.parts:
            continue
        nb = nbformat.read(path, as_version=4)
        first = nb.cells[0]
        if first.cell_type != "code" or "google.colab" not in first.source:
            continue
        source = re.sub(r"git\+\S+?(?=[\"'])", "git+" + url, first.source)
        if source != first.source:
            first.source = source
            nbformat.write(nb, path)
            changed.append(path)
    return changed


def main(argv: list[str]) -> int:
    if len(argv) > 1:
        sys.exit("usage: python book/set_repository.py [https://github.com/OWNER/REPO]")
    if argv:
        url = argv[0].rstrip("/").removesuffix(".git")
        if not URL.fullmatch(url):
            sys.exit(f"{argv[0]!r} is not a GitHub repository URL (https://github.com/OWNER/REPO)")
        set_config_url(url)
    url = yaml.safe_load(CONFIG.read_text())["repository"]["url"]
    changed = set_chapters(url)
    print(f"repository: {url}; updated the Colab cell of {len(changed)} chapter(s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
