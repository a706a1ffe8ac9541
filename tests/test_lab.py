"""The explore facility in a real JupyterLab, driven by headless Chromium, the
way a reader who typed `make lab` sees it: a live explorer redraws its one
image in place when a slider or a menu moves, and a player steps.

The smoke notebook is written here, into a temporary folder that JupyterLab
serves, so the explorer test depends on no chapter's content; copies of the
chapters (notebooks/) and of the book's pages (book/) are served beside it, laid
out as in the repository, to check that a chapter's prose shows the numbers its
cells compute (jupyterlab-myst evaluates the inline expressions) and that its
links to another chapter and to the glossary open them. Nothing JupyterLab
saves can reach the repository.

Every step waits for what it needs, never for a fixed time: JupyterLab's
application object (exposed to the page) says when the notebook's kernel is
connected and idle, and only then are cells run; a loaded machine only makes
the waits longer."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest

from conftest import BUILD_DIR, ROOT

pytestmark = pytest.mark.slow

CHAPTER = ROOT / "notebooks" / "first_look.ipynb"   # short, with numbers in its prose and links
CHAPTER_PATH = f"notebooks/{CHAPTER.name}"           # where the lab serves it
EVAL = re.compile(r"\{eval\}`([^`]+)`")
STARTUP_TIMEOUT = 180    # seconds for JupyterLab to answer
PAGE_TIMEOUT = 120_000   # milliseconds for the page, a notebook or a widget to appear
KERNEL_TIMEOUT = 180_000  # milliseconds for the notebook's kernel to be connected and idle
RUN_TIMEOUT = 300_000    # milliseconds for the notebook's cells to finish

# The open notebook's kernel can take work: connected, and idle (jupyterapp is JupyterLab's
# application object, which --LabApp.expose_app_in_browser puts on the page).
KERNEL_READY = """() => {
    const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    const context = panel && panel.sessionContext;
    const kernel = context && context.session && context.session.kernel;
    return !!kernel && context.isReady && kernel.connectionStatus === 'connected' && kernel.status === 'idle';
}"""
OPEN_PATH = "() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget; return w && w.context ? w.context.path : null; }"
SHOTS = BUILD_DIR / "screenshots"

SMOKE_CELLS = [
    """\
import numpy as np
from collectives_lib.book.explore import Dropdown, Slider, animation, explorer, subplots""",
    """\
def draw(n, bandwidth):
    fig, ax = subplots()
    x = np.arange(2, 65)
    ax.plot(x, (x - 1) / x * 1e9 / bandwidth * 1e3)
    ax.axvline(n, color="C1")
    ax.set(xlabel="ranks N", ylabel="time (ms)", title=f"N = {n}, W = {bandwidth / 1e9:g} GB/s")
    return fig

explorer(draw, {"n": Slider("ranks N", [2, 4, 8, 16], value=4),
                "bandwidth": Dropdown("link W", [50e9, 450e9])},
         title="Smoke explorer", alt="A line and a marker")""",
    """\
def frame(i):
    fig, ax = subplots(height=1.5)
    ax.bar(range(4), [k <= i for k in range(4)])
    return fig

animation(frame, 4, captions=lambda i: f"step {i}", alt="Bars filling in")""",
]


class Lab(str):
    """The lab's base URL, with its server log (where a 404 shows as `404 GET /...`)."""

    def __new__(cls, url: str, log: Path):
        lab = super().__new__(cls, url)
        lab.log = log
        return lab

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


def open_notebook(context, lab: str, path: str, workspace: str):
    """A fresh tab with the notebook at `path` open, its cells on the page and its kernel
    ready for work; JavaScript errors are collected in page.errors."""
    page = context.new_page()
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.errors = []
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    # JupyterLab may look for news or extensions on the internet; keep it local.
    page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(lab) else r.abort())
    page.goto(f"{lab}/lab/workspaces/{workspace}/tree/{path}?reset", wait_until="domcontentloaded",
              timeout=PAGE_TIMEOUT)
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=PAGE_TIMEOUT)
    page.wait_for_function(KERNEL_READY, timeout=KERNEL_TIMEOUT, polling=250)
    return page


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab():
    """A JupyterLab server on 127.0.0.1 over a temporary folder holding smoke.ipynb."""
    tmp = Path(tempfile.mkdtemp(prefix="lab-test-"))
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(src) for src in SMOKE_CELLS])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    nbformat.write(nb, tmp / "smoke.ipynb")
    shutil.copytree(ROOT / "notebooks", tmp / "notebooks", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    shutil.copytree(ROOT / "book", tmp / "book", ignore=shutil.ignore_patterns("_ext", "_static", "__pycache__"))
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k != "COLLECTIVES_BOOK_BUILD"}  # live mode, as a reader has it
    env.update(JUPYTER_RUNTIME_DIR=str(tmp / ".runtime"), JUPYTERLAB_WORKSPACES_DIR=str(tmp / ".workspaces"),
               JUPYTERLAB_SETTINGS_DIR=str(tmp / ".settings"))
    # Start the notebook's own kernel without asking, keep every cell in the page (not
    # only those in view, JupyterLab's default), and fetch no news.
    for name, settings in {
        "@jupyterlab/notebook-extension/tracker.jupyterlab-settings":
            '{"autoStartDefaultKernel": true, "windowingMode": "none"}',
        "@jupyterlab/apputils-extension/notification.jupyterlab-settings": '{"fetchNews": "false"}',
    }.items():
        (tmp / ".settings" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / ".settings" / name).write_text(settings)
    command = [
        str(Path(sys.executable).with_name("jupyter")), "lab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
        f"--ServerApp.root_dir={tmp}", "--ServerApp.token=", "--ServerApp.password=",
        "--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.expose_app_in_browser=True",
    ]
    if os.geteuid() == 0:
        command.append("--allow-root")
    log_path = tmp / ".lab.log"
    log = open(log_path, "w")
    proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while True:
            try:
                urllib.request.urlopen(f"{url}/api/status", timeout=2)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not start; its log:\n{log_path.read_text()[-3000:]}")
                time.sleep(0.5)
        yield Lab(url, log_path)
    finally:
        proc.terminate()  # JupyterLab shuts its kernels down on SIGTERM
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)


def run_all_cells(page, count: int) -> None:
    """Run every cell with Run > Run All Cells, as a reader would, once the kernel is ready
    (open_notebook waited for it), and wait until each of the `count` code cells shows an
    execution count."""
    page.wait_for_function(KERNEL_READY, timeout=KERNEL_TIMEOUT, polling=250)
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
    page.wait_for_function(
        """n => {
            const prompts = [...document.querySelectorAll('.jp-NotebookPanel .jp-CodeCell .jp-InputPrompt')].slice(0, n);
            return prompts.length === n && prompts.every(p => /\\[\\d+\\]/.test(p.textContent));
        }""", arg=count, timeout=RUN_TIMEOUT, polling=500)
    page.wait_for_function(KERNEL_READY, timeout=KERNEL_TIMEOUT, polling=250)   # the last cell's reply is in


def test_explore_facility_in_jupyterlab(lab, chromium_context):
    (SHOTS / "lab-smoke-failed.png").unlink(missing_ok=True)
    page = open_notebook(chromium_context, lab, "smoke.ipynb", "smoke")
    try:
        run_all_cells(page, len(SMOKE_CELLS))
        failed = page.eval_on_selector_all(
            ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']",
            "els => els.map(e => e.innerText.slice(0, 400))",
        )
        assert not failed, f"cells wrote errors or stderr in JupyterLab: {failed}"

        box = page.locator(".cl-live-explorer")
        box.wait_for(timeout=PAGE_TIMEOUT)             # the widget manager renders it after the output lands
        assert box.count() == 1, "the explorer did not display as a live widget"
        image = box.locator("img")
        page.wait_for_function("el => el.naturalWidth > 0", arg=image.element_handle(), timeout=PAGE_TIMEOUT)

        def changes_image(action, what):
            before = image.get_attribute("src")
            action()
            page.wait_for_function(
                "([el, before]) => el.getAttribute('src') !== before && el.naturalWidth > 0",
                arg=[image.element_handle(), before], timeout=PAGE_TIMEOUT, polling=100,
            )
            assert box.locator("img").count() == 1, f"{what}: the redraw added an image instead of replacing it"

        def press_slider():
            handle = box.locator(".noUi-handle").first
            handle.focus()
            page.keyboard.press("ArrowRight")

        changes_image(press_slider, "slider")
        changes_image(lambda: box.locator("select").first.select_option(index=1), "menu")

        player = page.locator(".cl-player")
        player.wait_for(timeout=PAGE_TIMEOUT)
        assert player.count() == 1, "the player did not display"
        player.scroll_into_view_if_needed()
        frame = player.locator("img.cl-frame")
        first = frame.get_attribute("src")
        player.locator("button.cl-step").click()
        page.wait_for_function("([el, first]) => el.getAttribute('src') !== first",
                               arg=[frame.element_handle(), first], timeout=PAGE_TIMEOUT)
        page.wait_for_function("el => el.textContent === '2 / 4'",
                               arg=player.locator("output.cl-counter").element_handle(), timeout=PAGE_TIMEOUT)
        assert not page.errors, f"JavaScript errors in JupyterLab: {page.errors}"
    except Exception:
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "lab-smoke-failed.png"))
        raise
    finally:
        page.close()


def expected_numbers(path: Path) -> dict[str, str]:
    """What each {eval}`name` of the chapter should show: the chapter run by nbclient, then
    each name printed as IPython shows it (the text/plain an inline expression gets)."""
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    names = sorted({n for c in nb.cells if c.cell_type == "markdown" for n in EVAL.findall(c.source)})
    nb.cells.append(nbformat.v4.new_code_cell(
        "import json as _json\nfrom IPython import get_ipython as _ip\n"
        f"print(_json.dumps({{n: _ip().display_formatter.format(globals()[n])[0]['text/plain'] for n in {names!r}}}))"))
    with tempfile.TemporaryDirectory() as tmp:
        NotebookClient(nb, timeout=600, startup_timeout=300, kernel_name="python3",
                       resources={"metadata": {"path": tmp}}).execute()
    text = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.get("name") == "stdout")
    return json.loads(text)


def test_chapter_prose_shows_its_numbers_in_jupyterlab(lab, chromium_context):
    nb = nbformat.read(CHAPTER, as_version=4)
    expected = expected_numbers(CHAPTER)
    markdown = [(i, c) for i, c in enumerate(nb.cells) if c.cell_type == "markdown"]
    with_numbers = [(k, EVAL.findall(c.source)) for k, (_, c) in enumerate(markdown) if EVAL.search(c.source)]
    assert with_numbers, f"{CHAPTER.name} has no inline expressions to check"
    shot = SHOTS / "lab-chapter.png"
    page = open_notebook(chromium_context, lab, CHAPTER_PATH, "chapter")
    try:
        run_all_cells(page, sum(c.cell_type == "code" for c in nb.cells))
        cells = page.locator(".jp-NotebookPanel .jp-MarkdownCell")
        assert cells.count() == len(markdown)
        problems = []
        for k, names in with_numbers:
            cell = cells.nth(k)
            cell.scroll_into_view_if_needed()
            for name in names:  # jupyterlab-myst fills the expressions in once the kernel answers
                try:
                    page.wait_for_function("([el, v]) => el.innerText.includes(v)",
                                           arg=[cell.element_handle(), expected[name]], timeout=60_000)
                except Exception:
                    problems.append(f"markdown cell {k}: {{eval}}`{name}` should show {expected[name]!r}")
            text = cell.inner_text()
            for name in names:
                if name in text:
                    problems.append(f"markdown cell {k} shows the name {name!r}")
            if "{eval}" in text or "{glue" in text:
                problems.append(f"markdown cell {k} shows role text: {text[:200]!r}")
        assert not problems, "\n".join(problems)
        assert not page.errors, f"JavaScript errors in JupyterLab: {page.errors}"
        SHOTS.mkdir(parents=True, exist_ok=True)
        cells.nth(with_numbers[0][0]).scroll_into_view_if_needed()
        page.screenshot(path=str(shot))
    except Exception:
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "lab-chapter-failed.png"))
        raise
    finally:
        page.close()


def _follow(page, lab, link, expected_path: str, what: str) -> None:
    """Click a link in a rendered markdown cell; JupyterLab must open `expected_path`
    and the server must answer no request with 404."""
    start = len(lab.log_text())
    link.scroll_into_view_if_needed()
    link.click()
    try:
        page.wait_for_function(f"() => ({OPEN_PATH})() === {json.dumps(expected_path)}", timeout=PAGE_TIMEOUT,
                               polling=250)
    except Exception:
        opened = page.evaluate(f"({OPEN_PATH})()")
        pytest.fail(f"{what} {link.get_attribute('href')!r} opened {opened!r}, not {expected_path}; "
                    f"server log:\n{lab.log_text()[start:][-2000:]}")
    not_found = [ln for ln in lab.log_text()[start:].splitlines() if " 404 " in ln]
    assert not not_found, f"{what}: the server answered 404: {not_found}"


def test_chapter_links_open_a_chapter_and_the_glossary_in_jupyterlab(lab, chromium_context):
    """A reader on Binder or `make lab` clicks a link between chapters and a glossary link:
    each opens its file (no 404 in the server's log)."""
    page = open_notebook(chromium_context, lab, CHAPTER_PATH, "links")
    try:
        # the rendered prose of a markdown cell (jupyterlab-myst renders it in its own element,
        # not JupyterLab's .jp-RenderedMarkdown; the cell's editor holds no links)
        prose = page.locator(".jp-NotebookPanel .jp-MarkdownCell")
        page.wait_for_function("n => document.querySelectorAll('.jp-NotebookPanel .jp-MarkdownCell a[href]').length >= n",
                               arg=2, timeout=PAGE_TIMEOUT)
        chapter = prose.locator("a", has_text="Moving bytes").first
        _follow(page, lab, chapter, "notebooks/moving_bytes.ipynb", "the chapter link")
        page.evaluate("() => { window.jupyterapp.commands.execute('docmanager:open', {path: %s}); }"  # (returns a widget)
                      % json.dumps(CHAPTER_PATH))
        page.wait_for_function(f"() => ({OPEN_PATH})() === {json.dumps(CHAPTER_PATH)}", timeout=PAGE_TIMEOUT)
        term = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-MarkdownCell a[href]",
                            has_text=re.compile(r"^all-gather$")).first
        _follow(page, lab, term, "book/glossary.md", "the glossary link")
        assert not page.errors, f"JavaScript errors in JupyterLab: {page.errors}"
    except Exception:
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "lab-links-failed.png"))
        raise
    finally:
        page.close()
