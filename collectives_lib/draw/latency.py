"""Latency against bandwidth: a transfer's front hop by hop, and the latency-share explorer.

Introduced in the chapter *TPU cluster topology* (``tpu_topology``).
"""

from __future__ import annotations

import numpy as np

from ..errors import CollectivesError
from ..units import format_bytes, format_time
from .figure import grid, label_axes, legend, new_figure, player_frames
from .style import ALGORITHM_STYLES, FONT, MUTED_COLOR, TEXT_COLOR


def route_front_animation(topology, src, dst, routes, *, alpha: float, time_with: float,
                          time_without: float, title: str):
    """A player of the front of every route from ``src`` to ``dst``, one frame per hop.

    ``routes`` are the routes as node lists (``cl.draw.draw_route`` paths);
    ``time_with`` and ``time_without`` are the transfer's simulated times with and
    without per-hop latency, for the last caption. Ideal link model.
    """
    from ..book.explore import animation
    from .routes import draw_route

    hops = max(len(r) for r in routes) - 1
    if hops < 1:
        raise CollectivesError("the routes must have at least one hop")

    def frame(k):
        fig, ax = new_figure(height=3.0, pyplot=False)
        draw_route(topology, src, dst, ax=ax, paths=[r[: k + 2] for r in routes])
        ax.set_title(f"After {k + 1} of {hops} hops", fontsize=FONT["title"])
        return fig

    def caption(k):
        text = (f"The first bytes of each part have crossed {k + 1} link{'s' if k else ''}, "
                f"{format_time((k + 1) * alpha)} after the start")
        if k == hops - 1:
            text += (f"; the rest streams behind them, and the last byte lands at {format_time(time_with)}: "
                     f"{format_time(hops * alpha)} of hops plus {format_time(time_without)} for the bytes")
        return text

    return animation(player_frames(frame), hops, captions=caption, fps=1.0, title=title,
                     alt=f"The {topology!r} with the routes from {src} to {dst} drawn up to the current hop")


def draw_latency_share(curves: dict, sizes, route: str, nbytes: float, *, full: float, bandwidth_only: float,
                       yardstick: float):
    """Left: time against size for every route in ``curves`` (``route`` bold); right:
    the share of it that is latency. ``curves[name] = (t_with, t_without)`` over
    ``sizes``; ``full`` and ``bandwidth_only`` are the chosen point's times. Ideal
    link model. Returns ``{"figure", "axes", "lines", "alt"}``.
    """
    if route not in curves:
        raise CollectivesError(f"route must be one of {', '.join(curves)}, got {route!r}")
    fig, (ax, bx) = new_figure(1, 2, height=3.2, pyplot=False)
    lines = []
    for i, (name, (t_all, t_bw)) in enumerate(curves.items()):
        color, ls, _ = ALGORITHM_STYLES[i]
        style = dict(color=color, ls=ls, lw=2.2 if name == route else 1.2, alpha=1.0 if name == route else 0.7)
        lines += ax.plot(sizes, np.asarray(t_all) * 1e6, label=name, **style)
        bx.plot(sizes, 100 * (1 - np.asarray(t_bw) / np.asarray(t_all)), **style)
    share = 1 - bandwidth_only / full
    ax.plot([nbytes], [full * 1e6], "o", color=TEXT_COLOR, ms=7)
    bx.plot([nbytes], [100 * share], "o", color=TEXT_COLOR, ms=7)
    for a in (ax, bx):
        a.axvline(yardstick, color=MUTED_COLOR, ls=":", lw=1)
        a.minorticks_off()
        grid(a)
    bx.text(yardstick, 8, f"alpha x W =\n{format_bytes(yardstick)} ", fontsize=FONT["small"], color=MUTED_COLOR,
            ha="right")
    ax.set(xscale="log", yscale="log")
    bx.set(xscale="log", ylim=(0, 102))
    label_axes(ax, f"{format_bytes(nbytes)} takes {format_time(full)}", "message size (bytes)", "time (\u00b5s)",
               tick_role="tick")
    label_axes(bx, f"of which latency is {100 * share:.0f}%", "message size (bytes)",
               "latency share of the time (%)", tick_role="tick")
    # on a white backing: the yardstick line may run through the legend's corner
    legend(ax, loc="upper left", role="small", frameon=True, framealpha=1.0, edgecolor="none")
    fig.suptitle("How much of a transfer is latency? (ideal link model)", fontsize=FONT["heading"])
    alt = (f"Left: time against message size on log axes for {len(curves)} routes. Right: the share of that "
           f"time spent on per-hop latency; at {format_bytes(nbytes)} it is {100 * share:.0f}% for {route}.")
    return {"figure": fig, "axes": (ax, bx), "lines": lines, "alt": alt}
