"""How long do the book's drawings take, from the call to a laid-out figure?

Run from the repository root:

    .venv/bin/python benchmarks/bench_draw.py [--repeats 5]

Each drawing is timed as tests/test_draw.py calls it: on a fresh Axes of the
book's width, the drawing function then ``fig.canvas.draw()`` (constrained
layout runs at draw time), and separately rendered to PNG as :func:`show`
does. The first call of each drawing is not timed (imports, the rank colours
past nine, font caches). The target is under 300 ms for the drawing and its
layout. This is a script that prints numbers, not a timed test: wall-clock
bounds fail on a loaded machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import collectives_lib as cl  # noqa: E402
from collectives_lib.book.explore import render_png  # noqa: E402

D = cl.draw
TARGET_MS = 300.0

POD = cl.tpu_pod("v5e")
NODE = cl.nvswitch_node("dgx-h100")
SUPERPOD = cl.superpod()
RING_ALL_REDUCE_64 = cl.ring_all_reduce(64)
STATES_64 = cl.replay(RING_ALL_REDUCE_64, elements=1)

# the drawings tests/test_draw.py checks take an Axes: the big cases of each kind
DRAWINGS = {
    "torus 16x16 (v5e pod)": lambda ax: D.draw_torus(POD, ax=ax),
    "switch, 8 GPUs": lambda ax: D.draw_switch(NODE, ax=ax),
    "fat tree, SuperPod": lambda ax: D.draw_fat_tree(SUPERPOD, ax=ax),
    "route through the wraparound": lambda ax: D.draw_route(POD, (15, 15), (2, 15), ax=ax),
    "buffers, 64 ranks (with replay)": lambda ax: D.draw_buffers(RING_ALL_REDUCE_64, 70, ax=ax),
    "buffers, 64 ranks (states given)": lambda ax: D.draw_buffers(RING_ALL_REDUCE_64, 70, ax=ax, states=STATES_64),
    "transfers, 64 ranks": lambda ax: D.draw_transfers(RING_ALL_REDUCE_64, 70, ax=ax),
    "cost curves, 3 algorithms": lambda ax: D.draw_cost_curves(cl.analysis.cost_curves(NODE, "all_reduce", ["ring", "tree", "sharp"]), ax=ax),
    "bandwidth ladder": lambda ax: D.draw_bandwidth_ladder(ax=ax),
}


def time_drawing(draw, repeats: int) -> tuple[list[float], list[float]]:
    """(seconds to draw and lay out, seconds to render the PNG) per repeat, after one untimed call."""
    fig, ax = D.new_figure(pyplot=False)
    draw(ax)
    fig.canvas.draw()
    drawn, rendered = [], []
    for _ in range(repeats):
        fig, ax = D.new_figure(pyplot=False)
        start = time.perf_counter()
        draw(ax)
        fig.canvas.draw()
        drawn.append(time.perf_counter() - start)
        start = time.perf_counter()
        render_png(fig, compact=True)
        rendered.append(time.perf_counter() - start)
    return drawn, rendered


def time_animation(repeats: int) -> list[float]:
    """Seconds to pre-render every frame of a schedule player (9 frames)."""
    schedule = cl.ring_all_gather(8)
    D.schedule_animation(schedule)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        D.schedule_animation(schedule)
        times.append(time.perf_counter() - start)
    return times


def ms(times: list[float]) -> tuple[float, float]:
    values = sorted(t * 1e3 for t in times)
    return statistics.median(values), values[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5, help="timed calls per drawing (default 5)")
    args = parser.parse_args()
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    print(f"Drawing + layout (fig.canvas.draw), then PNG render; median and worst of {args.repeats} calls, "
          f"target {TARGET_MS:.0f} ms for draw + layout\n(load average {load} on {os.cpu_count()} cores: "
          "times grow with it)")
    for name, draw in DRAWINGS.items():
        drawn, rendered = time_drawing(draw, args.repeats)
        (d_med, d_max), (r_med, _) = ms(drawn), ms(rendered)
        verdict = "under" if d_med < TARGET_MS else "OVER"
        print(f"  {name:<34} draw {d_med:6.1f} ms (worst {d_max:6.1f})   png {r_med:6.1f} ms   ({verdict})")
    med, worst = ms(time_animation(args.repeats))
    print(f"  {'player, ring all-gather of 8':<34} {med:6.1f} ms for 9 frames (worst {worst:6.1f})")


if __name__ == "__main__":
    main()
