"""Shared fixtures: the book's configuration, its chapters, and one book build
per test session, shared by tests/test_book.py and tests/test_browser.py."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
BUILD_DIR = ROOT / "_build"
HTML_DIR = BUILD_DIR / "html"
EXECUTED_DIR = BUILD_DIR / "jupyter_execute"
BUILD_LOG = BUILD_DIR / "build.log"
BUILD_TIMEOUT = 45 * 60  # seconds (a loaded two-core machine)


def load_config() -> dict:
    return yaml.safe_load((ROOT / "_config.yml").read_text())


def load_toc() -> dict:
    return yaml.safe_load((ROOT / "_toc.yml").read_text())


def toc_files() -> list[str]:
    """Every page in _toc.yml, in reading order, as paths without suffix."""
    toc = load_toc()
    files = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                files.append(entry["file"])
            walk(entry.get("sections"))

    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    return files


def source_of(page: str) -> Path:
    """The source file of a _toc.yml entry (.ipynb or .md), or a clear failure."""
    matches = [ROOT / f"{page}{suffix}" for suffix in (".ipynb", ".md") if (ROOT / f"{page}{suffix}").exists()]
    if len(matches) != 1:
        raise FileNotFoundError(f"_toc.yml lists {page!r}: expected exactly one of {page}.ipynb or {page}.md, found {matches}")
    return matches[0]


def notebook_pages() -> list[str]:
    return [p for p in toc_files() if (ROOT / f"{p}.ipynb").exists()]


def page_id(page: str) -> str:
    return page.replace("/", "-")


@dataclass
class BookBuild:
    html: Path
    log: str
    seconds: float | None
    error: str | None = None
    reported: bool = False


def pytest_addoption(parser):
    parser.addoption(
        "--reuse-book",
        action="store_true",
        help="use the book already built in _build/html instead of building it again "
        "(for iterating on the browser tests; `make test` always builds afresh)",
    )


def _failure_report(log: str) -> str:
    lines = re.sub(r"\x1b\[[0-9;]*m", "", log).splitlines()
    flagged = [ln for ln in lines if "WARNING" in ln or "ERROR" in ln or "Error" in ln]
    reports = []
    for report in sorted((HTML_DIR / "reports").rglob("*.log")) if (HTML_DIR / "reports").exists() else []:
        reports.append(f"--- {report.relative_to(ROOT)} ---\n{report.read_text()[-4000:]}")
    return "\n".join(
        ["Warnings and errors:", *flagged[:80], "", "Last lines of the log:", *lines[-60:], *reports]
    )


@pytest.fixture(scope="session")
def book_build(request) -> BookBuild:
    """Build the book once per session, exactly as `make book` does. Never raises:
    a failed build is reported by `built_book`, once in full."""
    if request.config.getoption("--reuse-book"):
        if not (HTML_DIR / "index.html").exists():
            return BookBuild(HTML_DIR, log="", seconds=None,
                             error="--reuse-book given but _build/html/index.html does not exist; run `make book`")
        return BookBuild(HTML_DIR, log="(reused an existing build)", seconds=None)
    jupyter_book = Path(sys.executable).with_name("jupyter-book")
    command = [str(jupyter_book), "build", str(ROOT), "--all", "--warningiserror", "--keep-going"]
    env = {**os.environ, "COLLECTIVES_BOOK_BUILD": "1"}
    start = time.monotonic()
    try:
        proc = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=BUILD_TIMEOUT)
    except subprocess.TimeoutExpired as err:
        return BookBuild(HTML_DIR, log=str(err), seconds=None, error=f"the book build took more than {BUILD_TIMEOUT} s")
    seconds = time.monotonic() - start
    log = proc.stdout + proc.stderr
    BUILD_DIR.mkdir(exist_ok=True)
    BUILD_LOG.write_text(log)
    error = None
    if proc.returncode != 0:
        error = (
            f"`{' '.join(command)}` failed (exit {proc.returncode}) after {seconds:.0f} s; "
            f"full log in {BUILD_LOG.relative_to(ROOT)}\n\n{_failure_report(log)}"
        )
    return BookBuild(HTML_DIR, log=log, seconds=seconds, error=error)


@pytest.fixture
def built_book(book_build) -> BookBuild:
    """The built book; fails the test if the build failed (the first such test shows why)."""
    if book_build.error:
        if not book_build.reported:
            book_build.reported = True
            pytest.fail(book_build.error, pytrace=False)
        pytest.fail("the book build failed: see the first test that used it for the log", pytrace=False)
    return book_build


CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="session")
def chromium_context():
    """Debian's Chromium, headless, with a fresh profile, driven by Playwright (one per session:
    Playwright's sync API allows only one driver at a time)."""
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"{CHROMIUM} not found: `make test` installs Debian's chromium (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile, sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 900},
        )
        yield context
        context.close()


@pytest.fixture(autouse=True)
def _close_pyplot_figures():
    """Close the pyplot figures a test leaves open, so no test sees another's figures."""
    yield
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is not None:
        plt.close("all")
