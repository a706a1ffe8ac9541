"""The explore facility in a real JupyterLab, driven by headless Chromium, the
way a reader who typed `make lab` sees it: a live explorer redraws its one
image in place when a slider or a menu moves, and a player steps.

The smoke notebook is written here, into a temporary folder that JupyterLab
serves, so the explorer test depends on no chapter's content; a copy of one
chapter is served beside it, to check that its prose shows the numbers its
cells compute (jupyterlab-myst evaluates the inline expressions). Nothing
JupyterLab saves can reach the repository."""

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

CHAPTER = ROOT / "notebooks" / "first_look.ipynb"   # short, with numbers in its prose
EVAL = re.compile(r"\{eval\}`([^`]+)`")
STARTUP_TIMEOUT = 90  # seconds for JupyterLab to answer
RUN_TIMEOUT = 60_000  # milliseconds for the notebook's cells to finish
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
    shutil.copy(CHAPTER, tmp / CHAPTER.name)
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
        yield url
    finally:
        proc.terminate()  # JupyterLab shuts its kernels down on SIGTERM
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)


def test_explore_facility_in_jupyterlab(lab, chromium_context):
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

    (SHOTS / "lab-smoke-failed.png").unlink(missing_ok=True)
    page = chromium_context.new_page()
    page.set_viewport_size({"width": 1400, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    # JupyterLab may look for news or extensions on the internet; keep it local.
    page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(lab) else r.abort())
    try:
        page.goto(f"{lab}/lab/workspaces/smoke/tree/smoke.ipynb?reset", wait_until="networkidle")
        page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=60_000)
        page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=60_000)
        # Run every cell as a reader would, with Shift+Enter. JupyterLab reports the kernel
        # idle a moment before it accepts work, so repeat the first cell until it is taken.
        prompts = page.locator(".jp-NotebookPanel .jp-CodeCell .jp-InputPrompt")
        for _attempt in range(30):
            prompts.first.click()
            page.keyboard.press("Shift+Enter")
            try:
                page.wait_for_function("el => el.textContent.trim() !== '[ ]:'", arg=prompts.first.element_handle(), timeout=2000)
                break
            except PlaywrightTimeoutError:
                continue
        else:
            pytest.fail("JupyterLab never ran the first cell")
        prompts.nth(1).click()
        for _ in range(len(SMOKE_CELLS) - 1):
            page.keyboard.press("Shift+Enter")
        # Every cell has run once it shows an execution count (Shift+Enter on the last
        # cell adds an empty one, which is not counted).
        page.wait_for_function(
            """n => {
                const prompts = [...document.querySelectorAll('.jp-NotebookPanel .jp-CodeCell .jp-InputPrompt')].slice(0, n);
                return prompts.length === n && prompts.every(p => /\\[\\d+\\]/.test(p.textContent));
            }""",
            arg=len(SMOKE_CELLS), timeout=RUN_TIMEOUT, polling=250,
        )
        failed = page.eval_on_selector_all(
            ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']",
            "els => els.map(e => e.innerText.slice(0, 400))",
        )
        assert not failed, f"cells wrote errors or stderr in JupyterLab: {failed}"

        box = page.locator(".cl-live-explorer")
        assert box.count() == 1, "the explorer did not display as a live widget"
        image = box.locator("img")
        page.wait_for_function("el => el.naturalWidth > 0", arg=image.element_handle(), timeout=30_000)

        def changes_image(action, what):
            before = image.get_attribute("src")
            action()
            page.wait_for_function(
                "([el, before]) => el.getAttribute('src') !== before && el.naturalWidth > 0",
                arg=[image.element_handle(), before], timeout=30_000, polling=100,
            )
            assert box.locator("img").count() == 1, f"{what}: the redraw added an image instead of replacing it"

        def press_slider():
            handle = box.locator(".noUi-handle").first
            handle.focus()
            page.keyboard.press("ArrowRight")

        changes_image(press_slider, "slider")
        changes_image(lambda: box.locator("select").first.select_option(index=1), "menu")

        player = page.locator(".cl-player")
        assert player.count() == 1, "the player did not display"
        player.scroll_into_view_if_needed()
        first = player.locator("img.cl-frame").get_attribute("src")
        player.locator("button.cl-step").click()
        assert player.locator("img.cl-frame").get_attribute("src") != first, "player: step did nothing"
        assert player.locator("output.cl-counter").inner_text() == "2 / 4"
        assert not errors, f"JavaScript errors in JupyterLab: {errors}"
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
        NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": tmp}}).execute()
    text = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.get("name") == "stdout")
    return json.loads(text)


def run_all_cells(page, count: int) -> None:
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=60_000)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=60_000)
    for _attempt in range(30):  # the kernel reports idle a moment before it accepts work
        page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
        page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
        try:
            page.wait_for_function(
                "() => [...document.querySelectorAll('.jp-NotebookPanel .jp-CodeCell .jp-InputPrompt')]"
                ".some(p => /\\[[\\d*]+\\]/.test(p.textContent))", timeout=3000)
            break
        except PlaywrightTimeoutError:
            continue
    else:
        pytest.fail("JupyterLab never ran the chapter")
    page.wait_for_function(
        """n => {
            const prompts = [...document.querySelectorAll('.jp-NotebookPanel .jp-CodeCell .jp-InputPrompt')];
            return prompts.length === n && prompts.every(p => /\\[\\d+\\]/.test(p.textContent));
        }""", arg=count, timeout=RUN_TIMEOUT * 3, polling=500)


def test_chapter_prose_shows_its_numbers_in_jupyterlab(lab, chromium_context):
    nb = nbformat.read(CHAPTER, as_version=4)
    expected = expected_numbers(CHAPTER)
    markdown = [(i, c) for i, c in enumerate(nb.cells) if c.cell_type == "markdown"]
    with_numbers = [(k, EVAL.findall(c.source)) for k, (_, c) in enumerate(markdown) if EVAL.search(c.source)]
    assert with_numbers, f"{CHAPTER.name} has no inline expressions to check"
    shot = SHOTS / "lab-chapter.png"
    page = chromium_context.new_page()
    page.set_viewport_size({"width": 1400, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(lab) else r.abort())
    try:
        page.goto(f"{lab}/lab/workspaces/chapter/tree/{CHAPTER.name}?reset", wait_until="networkidle")
        run_all_cells(page, sum(c.cell_type == "code" for c in nb.cells))
        cells = page.locator(".jp-NotebookPanel .jp-MarkdownCell")
        assert cells.count() == len(markdown)
        problems = []
        for k, names in with_numbers:
            cell = cells.nth(k)
            cell.scroll_into_view_if_needed()
            for name in names:  # jupyterlab-myst fills the expressions in once the kernel answers
                try:
                    # Solutions sit in dropdowns (<details>), whose text is hidden until opened.
                    page.wait_for_function("([el, v]) => { el.querySelectorAll('details').forEach("
                                           "d => { d.open = true; }); return el.innerText.includes(v); }",
                                           arg=[cell.element_handle(), expected[name]], timeout=10_000)
                except Exception:
                    problems.append(f"markdown cell {k}: {{eval}}`{name}` should show {expected[name]!r}")
            text = cell.inner_text()
            for name in names:
                if name in text:
                    problems.append(f"markdown cell {k} shows the name {name!r}")
            if "{eval}" in text or "{glue" in text:
                problems.append(f"markdown cell {k} shows role text: {text[:200]!r}")
        assert not problems, "\n".join(problems)
        assert not errors, f"JavaScript errors in JupyterLab: {errors}"
        SHOTS.mkdir(parents=True, exist_ok=True)
        cells.nth(with_numbers[0][0]).scroll_into_view_if_needed()
        page.screenshot(path=str(shot))
    except Exception:
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "lab-chapter-failed.png"))
        raise
    finally:
        page.close()
