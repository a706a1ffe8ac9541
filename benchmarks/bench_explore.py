"""How quickly does an explorer redraw, and how heavy are the built pages?

Run from the repository root after `make book`:

    .venv/bin/python benchmarks/bench_explore.py [--redraws 30]

Redraws are timed as a reader causes them in a kernel: set a slider widget's
``.value`` and wait until the image widget holds the new PNG (draw, render to
PNG, close the figure). Every timed redraw shows a value not drawn before, so no
cache hit flatters the numbers. The target is a median under 150 ms for a
typical figure. This is a script that prints numbers, not a timed test.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import unquote, urlparse

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import yaml  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from collectives_lib.book.explore import Slider, explorer, render_png, subplots  # noqa: E402

TARGET_MS = 150.0
SIZES = np.logspace(3, 10, 60)


def line_plot(n):
    """Typical: a few lines on linear axes, labelled, with a legend."""
    fig, ax = subplots()
    x = np.arange(2, 65)
    ax.plot(x, (x - 1) / x, label="all-gather busbw factor")
    ax.plot(x, 2 * (x - 1) / x, label="all-reduce busbw factor")
    ax.axvline(n, color="0.5", ls="--")
    ax.set(xlabel="ranks N", ylabel="factor", title=f"N = {n}")
    ax.legend(loc="lower right")
    return fig


def loglog_plot(n, minor=True):
    """Time against size on log axes spanning decades, as most cost figures are."""
    fig, ax = subplots()
    for k in (2, 8, 64):
        ax.plot(SIZES, (k - 1) * 5e-6 + (k - 1) / k * SIZES / 50e9, color="0.75")
    ax.plot(SIZES, (n - 1) * 5e-6 + (n - 1) / n * SIZES / 50e9, lw=2)
    ax.set(xscale="log", yscale="log", xlabel="V (bytes)", ylabel="time (s)", title=f"N = {n}")
    if not minor:
        ax.minorticks_off()
    return fig


def time_redraws(draw, redraws: int) -> list[float]:
    values = list(range(2, 3 + redraws))
    exp = explorer(draw, {"n": Slider("ranks N", values)})
    widget = exp.controls["n"]  # builds the widget and draws the first value (not timed)
    times = []
    for value in values[1:]:
        start = time.perf_counter()
        widget.value = value
        times.append(time.perf_counter() - start)
        assert exp.last_values == {"n": value}
    return times


def report(name: str, times: list[float]) -> None:
    ms = sorted(t * 1e3 for t in times)
    median = statistics.median(ms)
    p90 = ms[int(0.9 * (len(ms) - 1))]
    verdict = "under" if median < TARGET_MS else "OVER"
    print(f"  {name:<38} median {median:6.1f} ms   p90 {p90:6.1f} ms   ({verdict} the {TARGET_MS:.0f} ms target)")


def static_cost(draw, positions: int) -> None:
    start = time.perf_counter()
    sizes = [len(render_png(draw(n), compact=True)) for n in range(2, 2 + positions)]
    seconds = time.perf_counter() - start
    print(f"  static twin, {positions} positions: {seconds / positions * 1e3:.0f} ms and "
          f"{statistics.mean(sizes) / 1e3:.1f} kB per pre-rendered PNG (palette-compressed)")


def toc_pages() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    pages = [toc["root"]]

    def walk(entries):
        for e in entries or []:
            if "file" in e:
                pages.append(e["file"])
            walk(e.get("sections"))

    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    return pages


def page_weights() -> None:
    html_dir = ROOT / "_build" / "html"
    if not (html_dir / "index.html").exists():
        print("\nPage weights: no book in _build/html (run `make book`).")
        return
    print("\nPage weights (HTML with embedded images, plus local images; limit 2 MB):")
    for page in toc_pages():
        path = html_dir / f"{page}.html"
        if not path.exists():
            print(f"  {page:<28} not built")
            continue
        text = path.read_text()
        html_bytes = path.stat().st_size
        embedded = sum(len(m) for m in re.findall(r"data:image/png;base64,([A-Za-z0-9+/=]+)", text))
        local = 0
        for src in set(re.findall(r'<img[^>]*\ssrc="([^"]+)"', text)):
            if not src.startswith("data:") and not urlparse(src).scheme:
                local += (path.parent / unquote(urlparse(src).path)).resolve().stat().st_size
        total = html_bytes + local
        print(f"  {page:<28} {total / 1e6:5.2f} MB  (of which base64 images {embedded / 1e6:.2f} MB, "
              f"image files {local / 1e6:.2f} MB)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--redraws", type=int, default=30, help="timed redraws per figure (default 30)")
    args = parser.parse_args()
    print(f"Explorer redraw: set a slider's .value, {args.redraws} fresh values each, "
          f"figure {subplots()[0].get_size_inches().tolist()} in at the book's dpi")
    report("line plot, linear axes (typical)", time_redraws(line_plot, args.redraws))
    report("log-log, no minor ticks", time_redraws(lambda n: loglog_plot(n, minor=False), args.redraws))
    report("log-log, with minor ticks", time_redraws(loglog_plot, args.redraws))
    static_cost(loglog_plot, 12)
    page_weights()


if __name__ == "__main__":
    main()
