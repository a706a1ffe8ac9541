"""Open every chapter of the built book in headless Chromium, as a reader would,
with the network cut off: no JavaScript errors, every image loads, no cell shows
an error, explorers and players respond, and full-page screenshots (light and
dark) land in _build/screenshots/ for a person to look at.

Every check waits for the state it needs (a page loaded, an image swapped, a
counter updated) with generous timeouts, so a loaded machine makes the tests
slower, not flaky; the one timed wait is the check that a paused player stays
paused, over three of its own frame intervals."""

from __future__ import annotations

import functools
import http.server
import re
import threading
from pathlib import Path

import pytest
from playwright.sync_api import expect

from conftest import BUILD_DIR, load_config, notebook_pages, page_id, toc_files

pytestmark = pytest.mark.slow

SCREENSHOTS = BUILD_DIR / "screenshots"
VIEWPORT = {"width": 1280, "height": 900}
TIMEOUT = 120_000   # milliseconds for any page, navigation or change to happen

# Console messages and page errors that are harmless, each with the reason.
# (substring of the message, why it is harmless). Empty today: the two the
# theme used to produce are fixed in book/_ext/page_fixes.py.
HARMLESS_ERRORS: list[tuple[str, str]] = []


def _harmless(message: str) -> bool:
    return any(fragment in message for fragment, _reason in HARMLESS_ERRORS)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep the test output clean
        pass


@pytest.fixture(scope="session")
def site(book_build):
    """Serve _build/html on a free port of 127.0.0.1; yields the base URL."""
    handler = functools.partial(_QuietHandler, directory=str(book_build.html))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


class Visit:
    """One page opened in a fresh tab, recording errors and blocked requests."""

    def __init__(self, context, url: str, origin: str, color_scheme: str = "light"):
        self.errors: list[str] = []
        self.blocked: list[str] = []
        self.page = context.new_page()
        self.page.set_default_timeout(TIMEOUT)
        self.page.set_default_navigation_timeout(TIMEOUT)
        self.page.emulate_media(color_scheme=color_scheme)
        self.page.on("pageerror", lambda exc: self.errors.append(f"pageerror: {exc}"))
        self.page.on("console", lambda msg: self.errors.append(f"console.{msg.type}: {msg.text}") if msg.type == "error" else None)

        def route(r):
            if r.request.url.startswith(origin + "/"):
                r.continue_()
            else:
                self.blocked.append(r.request.url)
                r.abort()

        self.page.route("**/*", route)
        self.page.goto(url, wait_until="networkidle")
        self.wait_for_mathjax()

    def wait_for_mathjax(self):
        """Let MathJax finish typesetting, so screenshots show formulas and late errors surface."""
        self.page.evaluate(
            "() => (window.MathJax && MathJax.startup && MathJax.startup.promise) ? MathJax.startup.promise.then(() => true) : true"
        )

    def close(self):
        self.page.close()


@pytest.mark.parametrize("page_name", toc_files(), ids=page_id)
def test_chapter_in_browser(built_book, chromium_context, site, page_name):
    url = f"{site}/{page_name}.html"
    visit = Visit(chromium_context, url, site)
    page = visit.page
    try:
        # Images are loaded only once scrolled into view on some pages: scroll through first.
        page.evaluate("async () => { for (let y = 0; y < document.body.scrollHeight; y += 600) { window.scrollTo(0, y); await new Promise(r => setTimeout(r, 20)); } window.scrollTo(0, 0); }")
        page.wait_for_load_state("networkidle")

        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        shot = SCREENSHOTS / f"{Path(page_name).name}.png"
        page.screenshot(path=str(shot), full_page=True)

        images = page.eval_on_selector_all(
            "img", "els => els.map(e => ({src: e.currentSrc.slice(0, 80), alt: e.getAttribute('alt'), w: e.naturalWidth, cls: e.className}))"
        )
        broken = [img for img in images if img["w"] == 0]
        assert not broken, f"{page_name}: images that did not load: {broken}"
        no_alt = [img for img in images if "cl-" in img["cls"] and not (img["alt"] or "").strip()]
        assert not no_alt, f"{page_name}: interactive figures without alt text: {no_alt}"

        failed_cells = page.eval_on_selector_all(
            ".cell_output .output.error, .cell_output .traceback, .cell_output .output.traceback, .cell_output .output.stderr",
            "els => els.map(e => e.innerText.slice(0, 300))",
        )
        assert not failed_cells, f"{page_name}: cells show errors: {failed_cells}"
        outputs_text = page.eval_on_selector_all(".cell_output", "els => els.map(e => e.innerText).join('\\n')")
        assert "Traceback (most recent call last)" not in outputs_text, f"{page_name}: an output shows a traceback"

        # nothing scrolls sideways: code and printed lines (88 characters at most) fit
        # their box at the book's code size, and tables fit the content column
        wide = page.evaluate("""() => {
            const out = [];
            for (const e of document.querySelectorAll('div.cell pre'))
                if (e.scrollWidth > e.clientWidth + 1)
                    out.push(e.textContent.split('\\n').reduce((a, l) => l.length > a.length ? l : a, ''));
            for (const t of document.querySelectorAll('article table'))
                if (t.scrollWidth > t.parentElement.clientWidth + 1) out.push('table: ' + t.innerText.slice(0, 60));
            return out; }""")
        assert not wide, f"{page_name}: wider than its box (scrolls sideways): {wide[:5]}"

        _check_explorers(page, page_name)
        _check_players(page, page_name)

        errors = [e for e in visit.errors if not _harmless(e)]
        assert not errors, f"{page_name}: JavaScript errors: {errors}"
        assert not visit.blocked, f"{page_name}: tried to reach other hosts (blocked): {visit.blocked}"
    finally:
        visit.close()

    # Dark mode, in a fresh tab: the theme follows the system setting ("auto") on a first visit.
    dark = Visit(chromium_context, url, site, color_scheme="dark")
    try:
        dark.page.wait_for_function("() => document.documentElement.dataset.theme === 'dark'")
        dark.page.screenshot(path=str(SCREENSHOTS / f"{Path(page_name).name}-dark.png"), full_page=True)
        # Figures alone and figures in explorer cards are dimmed alike, none left glaring white.
        filters = dark.page.evaluate("""() => [...new Set([
            ...[...document.querySelectorAll('img.cl-figure')].filter(e => !e.closest('.cl-card')),
            ...document.querySelectorAll('.cl-card')].map(e => getComputedStyle(e).filter))]""")
        assert all(f != "none" for f in filters) and len(filters) <= 1, \
            f"{page_name} (dark): figures dimmed unevenly: {filters}"
        errors = [e for e in dark.errors if not _harmless(e)]
        assert not errors, f"{page_name} (dark): JavaScript errors: {errors}"
        assert not dark.blocked, f"{page_name} (dark): tried to reach other hosts (blocked): {dark.blocked}"
    finally:
        dark.close()


def _check_explorers(page, page_name):
    explorers = page.locator(".cl-explorer")
    for k in range(explorers.count()):
        explorer = explorers.nth(k)
        explorer.scroll_into_view_if_needed()
        image = explorer.locator("img.cl-explorer-image")
        sliders = explorer.locator("input[type=range]")
        assert sliders.count() + explorer.locator("select").count() > 0, f"{page_name}: explorer {k} has no controls"
        for i in range(sliders.count()):
            slider = sliders.nth(i)
            label = explorer.locator(f'output[data-cl-label="{slider.get_attribute("data-cl-control")}"]')
            if slider.get_attribute("max") == "0":
                continue
            before_src, before_label = image.get_attribute("src"), label.inner_text()
            at_end = slider.input_value() == slider.get_attribute("max")
            slider.focus()
            page.keyboard.press("ArrowLeft" if at_end else "ArrowRight")
            expect(image, f"{page_name}: explorer {k}, slider {i} did not change the image").not_to_have_attribute(
                "src", before_src, timeout=TIMEOUT)
            expect(label, f"{page_name}: explorer {k}, slider {i} did not change its value label").not_to_have_text(
                before_label, timeout=TIMEOUT)
            assert (image.get_attribute("alt") or "").strip()
        selects = explorer.locator("select")
        for i in range(selects.count()):
            select = selects.nth(i)
            options = select.locator("option")
            if options.count() < 2:
                continue
            before_src = image.get_attribute("src")
            current = select.input_value()
            other = next(options.nth(j).get_attribute("value") for j in range(options.count())
                         if options.nth(j).get_attribute("value") != current)
            select.select_option(other)
            expect(image, f"{page_name}: explorer {k}, menu {i} did not change the image").not_to_have_attribute(
                "src", before_src, timeout=TIMEOUT)


def _check_players(page, page_name):
    players = page.locator(".cl-player")
    for k in range(players.count()):
        player = players.nth(k)
        player.scroll_into_view_if_needed()
        image = player.locator("img.cl-frame")
        counter = player.locator("output.cl-counter")
        total = int(counter.inner_text().split("/")[1])
        if total < 2:
            continue
        first_src = image.get_attribute("src")
        expect(counter).to_have_text(re.compile(r"^1 /"), timeout=TIMEOUT)
        player.locator("button.cl-step").click()
        expect(image, f"{page_name}: player {k}: step did not change the frame").not_to_have_attribute(
            "src", first_src, timeout=TIMEOUT)
        expect(counter).to_have_text(re.compile(r"^2 /"), timeout=TIMEOUT)
        player.locator("button.cl-back").click()
        expect(image, f"{page_name}: player {k}: back did not return to frame 1").to_have_attribute(
            "src", first_src, timeout=TIMEOUT)
        expect(player.locator("button.cl-back"), f"{page_name}: player {k}: back enabled at frame 1").to_be_disabled(
            timeout=TIMEOUT)
        scrub = player.locator("input.cl-scrub")
        to_frame = "(el, v) => { el.value = v; el.dispatchEvent(new Event('input')); }"
        scrub.evaluate(to_frame, str(total - 1))  # the last frame: Step must stay there, not wrap to the first
        expect(counter).to_have_text(f"{total} / {total}", timeout=TIMEOUT)
        expect(player.locator("button.cl-step"), f"{page_name}: player {k}: step enabled at the end").to_be_disabled(
            timeout=TIMEOUT)
        player.locator("button.cl-step").click(force=True)
        assert counter.inner_text() == f"{total} / {total}", f"{page_name}: player {k}: step wrapped past the end"
        scrub.evaluate(to_frame, "0")
        expect(counter).to_have_text(f"1 / {total}", timeout=TIMEOUT)
        player.locator("button.cl-play").click()
        page.wait_for_function("el => el.dataset.frame !== '0'", arg=player.element_handle(), timeout=TIMEOUT)
        player.locator("button.cl-pause").click()
        expect(player).to_have_attribute("data-playing", "0", timeout=TIMEOUT)
        paused_at = player.get_attribute("data-frame")
        # Proving that nothing happens takes time: three of the player's own frame intervals.
        interval = player.locator("script.cl-data").evaluate("el => JSON.parse(el.textContent).interval")
        page.wait_for_timeout(3 * interval)
        assert player.get_attribute("data-frame") == paused_at, f"{page_name}: player {k} kept playing after pause"


@pytest.mark.parametrize("page_name", notebook_pages(), ids=page_id)
def test_launch_buttons(built_book, chromium_context, site, page_name):
    """Every launch button opens Binder or Colab on this chapter of the configured repository;
    with the network cut off, each click asks for that address at once, and none hangs or
    throws. There is no Live Code (Thebe) button."""
    repo = load_config()["repository"]
    owner_repo = repo["url"].removeprefix("https://github.com/")
    expected = {
        "Binder": f"https://mybinder.org/v2/gh/{owner_repo}/{repo['branch']}?urlpath=lab/tree/{page_name}.ipynb",
        "Colab": f"https://colab.research.google.com/github/{owner_repo}/blob/{repo['branch']}/{page_name}.ipynb",
    }
    visit = Visit(chromium_context, f"{site}/{page_name}.html", site)
    page = visit.page
    try:
        live = page.locator("button.thebe-launch-button, .thebe-launch-button, :text-is('Live Code')")
        assert live.count() == 0, f"{page_name}: a Live Code button is on the page"
        menu = page.locator(".dropdown-launch-buttons")
        assert menu.count() == 1, f"{page_name}: no launch menu"
        links = menu.locator("a.dropdown-item")
        found = {links.nth(i).inner_text().strip(): links.nth(i).get_attribute("href") for i in range(links.count())}
        assert found == expected, f"{page_name}: launch buttons {found}, expected {expected}"
        requested: list[str] = []

        def block(route):  # the new tab's requests: local ones pass, the rest are recorded and cut
            if route.request.url.startswith(site + "/"):
                route.continue_()
            else:
                requested.append(route.request.url)
                route.abort()

        chromium_context.route("**/*", block)
        try:
            for i in range(links.count()):
                label = links.nth(i).inner_text().strip()
                menu.locator("button.dropdown-toggle").click()
                links.nth(i).wait_for(state="visible", timeout=TIMEOUT)
                with chromium_context.expect_page(timeout=TIMEOUT) as opened:
                    links.nth(i).click()
                tab = opened.value
                tab.wait_for_load_state("domcontentloaded", timeout=TIMEOUT)
                assert expected[label] in requested, f"{page_name}: {label} asked for {requested}"
                tab.close()
        finally:
            chromium_context.unroute("**/*", block)
        assert not visit.errors, f"{page_name}: JavaScript errors: {visit.errors}"
    finally:
        visit.close()
