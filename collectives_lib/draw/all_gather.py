"""The all-gather explorer: time against size for four schedules, and the arrival grid.

Introduced in the chapter *Inside all-gather* (``tpu_all_gather``), whose explorer
cell calls :func:`all_gather_explorer_data` once and :func:`draw_all_gather_explorer`
for every setting.
"""

from __future__ import annotations

import numpy as np

from ..errors import CollectivesError
from ..units import format_time
from .figure import grid, label_axes, legend, new_figure
from .style import ALGORITHM_STYLES, FONT, TEXT_COLOR

#: The explorer's schedules: label -> registered algorithm.
ALL_GATHER_KINDS = {"unidirectional ring": "ring", "bidirectional ring": "bidirectional_ring",
                    "chain": "chain", "2D torus, both axes": "multi_axis"}


def all_gather_topology(algorithm: str, n: int, bandwidth: float, latency: float):
    """The topology each explorer schedule runs on: a ring (one-way for ``ring``), a
    chain, or a square torus of ``n`` chips for ``multi_axis``."""
    from ..topology import Chain, Ring, Torus

    if algorithm == "multi_axis":
        k = int(round(n ** 0.5))
        if k * k != n:
            raise CollectivesError(f"the 2D schedule needs a square number of chips, got {n}")
        return Torus((k, k), bandwidth=bandwidth, latency=latency, link_class="ici")
    if algorithm == "chain":
        return Chain(n, bandwidth=bandwidth, latency=latency, link_class="ici")
    return Ring(n, bandwidth=bandwidth, latency=latency, link_class="ici", bidirectional=algorithm != "ring")


def all_gather_arrivals(schedule) -> np.ndarray:
    """For every rank and block, the step after which the block has arrived; for the 2D
    schedule the columns are slots, part 0's blocks first, then part 1's."""
    from ..replay import arrival_steps

    if schedule.algorithm != "multi_axis":
        return arrival_steps(schedule)
    per_slot = arrival_steps(schedule, per_slot=True)
    n = schedule.group_size
    parts = per_slot.shape[1] // n
    return per_slot[:, [parts * b + p for p in range(parts) for b in range(n)]]


def all_gather_explorer_data(bandwidth: float, latency: float, ns=(4, 16, 64), sizes=None) -> dict:
    """Everything the explorer draws, computed once: for every ``n`` and schedule the
    topology, the schedule, its simulated times over ``sizes`` and its arrival grid
    (ideal link model)."""
    from ..plan import build
    from ..simulate import simulate_sizes

    sizes = np.logspace(3, 10, 57) if sizes is None else np.asarray(sizes, dtype=float)
    data = {"sizes": sizes, "ns": tuple(ns)}
    for n in ns:
        for label, algorithm in ALL_GATHER_KINDS.items():
            topo = all_gather_topology(algorithm, n, bandwidth, latency)
            sched = build("all_gather", topo, algorithm)
            data[n, label] = (topo, sched, simulate_sizes(sched, topo, sizes), all_gather_arrivals(sched))
    return data


def draw_all_gather_explorer(data: dict, n: int, nbytes: float, kind: str):
    """Left: time against size for the four schedules (``kind`` bold, the chosen size
    marked); right: the arrival grid of ``kind``. Ideal link model.

    Returns ``{"figure", "axes", "lines", "image", "alt"}``.
    """
    from matplotlib.ticker import MaxNLocator

    from ..simulate import simulate

    if (n, kind) not in data:
        raise CollectivesError(f"no explorer data for N = {n} and {kind!r}; N is one of {data['ns']}, "
                               f"the schedule one of {', '.join(ALL_GATHER_KINDS)}")
    sizes = data["sizes"]
    fig, (ax, bx) = new_figure(1, 2, height=3.4, pyplot=False, width_ratios=[1.25, 1])
    lines = []
    for i, label in enumerate(ALL_GATHER_KINDS):
        color, ls, _ = ALGORITHM_STYLES[i]
        on = label == kind
        lines += ax.plot(sizes, data[n, label][2], color=color, ls=ls, lw=2.4 if on else 1.3,
                         alpha=1.0 if on else 0.8, label=label, zorder=3 if on else 2)
    topo, sched, _, arr = data[n, kind]
    r = simulate(sched, topo, sched.round_size(nbytes))
    ax.plot([r.nbytes], [r.time], "o", color=TEXT_COLOR, ms=7, zorder=4)
    ax.set(xscale="log", yscale="log")
    ax.minorticks_off()
    label_axes(ax, f"{format_time(r.time)} in {r.num_steps} steps, {100 * r.latency_time / r.time:.0f}% latency",
               "V, gathered array (bytes)", "time (s)", tick_role="tick")
    grid(ax)
    legend(ax, loc="upper left", role="small")
    im = bx.imshow(arr, cmap="viridis_r", aspect="auto", interpolation="nearest", vmin=0)
    for axis in (bx.xaxis, bx.yaxis):
        axis.set_major_locator(MaxNLocator(integer=True))
    cbar = fig.colorbar(im, ax=bx, fraction=0.06, pad=0.03)
    cbar.locator = MaxNLocator(integer=True)
    cbar.update_ticks()
    cbar.ax.set_title("step", fontsize=FONT["small"])
    cbar.ax.tick_params(labelsize=FONT["small"])
    label_axes(bx, f"{kind}, N = {n}", "slot (part 0, then part 1)" if arr.shape[1] > n else "block", "rank",
               tick_role="tick")
    fig.suptitle("All-gather on v5e ICI links (ideal link model)", fontsize=FONT["heading"])
    alt = (f"Left: log-log plot of all-gather time against array size for four schedules on {n} chips, "
           f"{kind} bold, at the chosen size {format_time(r.time)}. Right: a grid of ranks by blocks "
           f"coloured by the step at which each block reaches each rank.")
    return {"figure": fig, "axes": (ax, bx), "lines": lines, "image": im, "alt": alt}
