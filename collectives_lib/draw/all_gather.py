"""The all-gather explorer: time against size for four schedules, and the arrival grid.

Introduced in the chapter *Inside all-gather* (``tpu_all_gather``), whose explorer
cell calls :func:`collectives_lib.analysis.all_gather_explorer_data` once (the
numbers) and :func:`draw_all_gather_explorer` for every setting (the drawing).
"""

from __future__ import annotations

from ..errors import CollectivesError
from ..units import format_time
from .figure import grid, label_axes, legend, new_figure
from .style import ALGORITHM_STYLES, FONT, TEXT_COLOR

from ..analysis import ALL_GATHER_KINDS

def draw_all_gather_explorer(data: dict, n: int, nbytes: float, kind: str):
    """Left: time against size for the four schedules (``kind`` bold, the chosen size
    marked); right: the arrival grid of ``kind``. Ideal link model.

    Returns ``{"figure", "axes", "lines", "image", "alt"}``.
    """
    from matplotlib.ticker import MaxNLocator

    if (n, kind) not in data:
        raise CollectivesError(f"no explorer data for N = {n} and {kind!r}; N is one of {data['ns']}, "
                               f"the schedule one of {', '.join(ALL_GATHER_KINDS)}")
    sizes = data["sizes"]
    fig, (ax, bx) = new_figure(1, 2, height=3.4, pyplot=False, width_ratios=[1.25, 1])
    lines = []
    for i, label in enumerate(ALL_GATHER_KINDS):
        color, ls, _ = ALGORITHM_STYLES[i]
        on = label == kind
        lines += ax.plot(sizes, data[n, label]["times"], color=color, ls=ls, lw=2.4 if on else 1.3,
                         alpha=1.0 if on else 0.8, label=label, zorder=3 if on else 2)
    arr = data[n, kind]["arrivals"]
    if nbytes not in data[n, kind]["marks"]:
        raise CollectivesError(f"the explorer data has no mark at {nbytes} bytes; it has "
                               f"{', '.join(str(m) for m in data['marks']) or 'none'} (all_gather_explorer_data(marks=...))")
    r = data[n, kind]["marks"][nbytes]
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
