"""The alpha-beta model as pictures: one message's two terms, a ring
all-gather's time across sizes, and the bytes a ring all-reduce sends per GPU.

Introduced in the Foundations chapters: :func:`draw_message_time` in *Moving
bytes*, :func:`draw_ring_time` in *A first look*, :func:`draw_ring_bytes` in
*The all-reduce, step by step*. Each returns its artists in a dict with
``"figure"``, ``"axes"`` and ``"alt"``; each takes ``ax=None``
(an Axes, or for two panels a Figure or two Axes) and otherwise makes a
figure that is not registered with pyplot, so an explorer can hand
``art["figure"]`` straight to its renderer.
"""

from __future__ import annotations

import numpy as np

from ..errors import CollectivesError
from ..units import format_bytes, format_rate, format_time
from .figure import axes_for, grid, label_axes, legend, panel_axes, size_axis, time_axis
from .style import FAINT_COLOR, FONT, MUTED_COLOR, OP_COLORS, REGIME_COLORS, TEXT_COLOR


def _positive(name: str, value) -> float:
    value = float(value)
    if not np.isfinite(value) or value <= 0:
        raise CollectivesError(f"{name} must be a positive number, got {value!r}")
    return value


def detached_panels(ax, n: int, height: float, **kw):
    """(figure, n axes): ``ax`` as :func:`~collectives_lib.draw.figure.panel_axes` takes it, or,
    when None, a new book-width figure not registered with pyplot (for explorers)."""
    if ax is None:
        return panel_axes(None, n, height=height, pyplot=False, **kw)
    return panel_axes(ax, n, **kw)


def _linear_bytes(axis) -> None:
    from matplotlib.ticker import FuncFormatter

    axis.set_major_formatter(FuncFormatter(lambda v, _: format_bytes(v, digits=3)))


def draw_message_time(bandwidth: float, latency: float, size: float, *, title: str = "",
                      sizes=None, ax=None):
    """One message of ``size`` bytes over a link of one-way ``bandwidth`` W and
    latency ``latency`` alpha: ``t = alpha + m/W`` across ``sizes`` (log-log, left,
    with the crossover ``m* = alpha W`` and the two regimes shaded) and the two
    terms' shares of the chosen message's time (right).

    Returns ``{"curve", "marker", "bars", "figure", "axes", "alt"}``.
    """
    W, a, size = _positive("bandwidth", bandwidth), _positive("latency", latency), _positive("size", size)
    sizes = np.logspace(2, 10, 33) if sizes is None else np.asarray(sizes, dtype=float)
    n_star = a * W
    fig, (ax, bx) = detached_panels(ax, 2, 3.3, width_ratios=[2.4, 1])
    ax.axvspan(sizes[0], n_star, color=REGIME_COLORS["latency"], alpha=0.18, lw=0)
    ax.axvspan(n_star, sizes[-1], color=REGIME_COLORS["bandwidth"], alpha=0.18, lw=0)
    (curve,) = ax.plot(sizes, a + sizes / W, color=OP_COLORS["copy"], lw=2, label="t = \u03b1 + m/W")
    ax.plot(sizes, np.full_like(sizes, a), ":", color=MUTED_COLOR, label="\u03b1")
    ax.plot(sizes, sizes / W, "--", color=MUTED_COLOR, label="m/W")
    t = a + size / W
    (marker,) = ax.plot([size], [t], "o", ms=9, color=OP_COLORS["reduce"], zorder=5)
    ax.axvline(n_star, color=TEXT_COLOR, lw=0.8)
    ax.text(n_star, 0.03, f" m* = \u03b1W = {format_bytes(n_star)}", fontsize=FONT["annotation"],
            transform=ax.get_xaxis_transform())
    ax.set(xscale="log", yscale="log", xlim=(sizes[0], sizes[-1]), ylim=(1e-7, 1))
    size_axis(ax.xaxis)
    time_axis(ax.yaxis)
    ax.minorticks_off()
    legend(ax, loc="upper left")
    label_axes(ax, f"{title}: W = {format_rate(W)}, \u03b1 = {format_time(a)}".lstrip(": "),
               "message size m (bytes)", "time", title_role="label", tick_role="tick")
    parts = {"\u03b1\nlatency": a, "m/W\nbandwidth": size / W}
    shares = [v / t for v in parts.values()]
    bars = bx.bar(list(parts), shares, color=[REGIME_COLORS["latency"], REGIME_COLORS["bandwidth"]],
                  edgecolor=MUTED_COLOR)
    for i, v in enumerate(parts.values()):
        bx.text(i, shares[i] + 0.02, f"{shares[i]:.0%}\n{format_time(v)}", ha="center", va="bottom",
                fontsize=FONT["annotation"])
    bx.set(ylim=(0, 1.3), yticks=[0, 0.5, 1], yticklabels=["0%", "50%", "100%"])
    bound = "latency-bound" if a > size / W else "bandwidth-bound"
    label_axes(bx, f"m = {format_bytes(size)}: t = {format_time(t)}\n{bound}", ylabel="share of t",
               title_role="label", tick_role="tick")
    alt = (f"Left: log-log plot of message time against size for W = {format_rate(W)} and "
           f"alpha = {format_time(a)}, with the latency and bandwidth terms and the crossover "
           f"m* = {format_bytes(n_star)} marked; right: the two terms' shares of a "
           f"{format_bytes(size)} message, which is {bound}.")
    return {"curve": curve, "marker": marker, "bars": bars, "figure": fig, "axes": [ax, bx], "alt": alt}


def draw_ring_time(times, latency_term, bandwidth_term, sizes, result, *, title: str = "", ax=None):
    """A ring collective's time across ``sizes`` (log-log): the simulated
    ``times`` (one per size), its latency term (a constant) and its bandwidth
    term (one per size) dotted, and the chosen ``result`` (a
    :class:`~collectives_lib.simulate.Result`) marked with where its time went.

    Returns ``{"curve", "marker", "figure", "axes", "alt"}``.
    """
    sizes, times = np.asarray(sizes, dtype=float), np.asarray(times, dtype=float)
    bandwidth_term = np.asarray(bandwidth_term, dtype=float)
    if not (sizes.shape == times.shape == bandwidth_term.shape) or sizes.ndim != 1:
        raise CollectivesError(f"sizes, times and bandwidth_term must be 1-D of one length, got shapes "
                               f"{sizes.shape}, {times.shape} and {bandwidth_term.shape}")
    r = result
    fig, ax = axes_for(ax, 3.4, pyplot=False)
    (curve,) = ax.plot(sizes, times, color=OP_COLORS["copy"], lw=2, label="simulated time")
    ax.plot(sizes, np.full_like(sizes, latency_term), ":", color=MUTED_COLOR,
            label=f"latency term (N-1)\u03b1 = {format_time(latency_term)}")
    ax.plot(sizes, bandwidth_term, "--", color=MUTED_COLOR, label="bandwidth term (N-1)/N \u00b7 V/W")
    (marker,) = ax.plot([r.nbytes], [r.time], "o", ms=9, color=OP_COLORS["reduce"], zorder=5)
    lat, bw = r.latency_time / r.time, r.bandwidth_time / r.time
    ax.text(0.02, 0.97,
            f"V = {format_bytes(r.nbytes)}: t = {format_time(r.time)} in {r.num_steps} "
            f"step{'s' if r.num_steps > 1 else ''}\n"
            f"latency {format_time(r.latency_time)} ({lat:.0%}), "
            f"bandwidth {format_time(r.bandwidth_time)} ({bw:.0%})\n"
            f"algbw {format_rate(r.algbw)}, busbw {format_rate(r.busbw)}",
            transform=ax.transAxes, va="top", fontsize=FONT["annotation"],
            bbox=dict(fc="white", ec=FAINT_COLOR))
    ax.set(xscale="log", yscale="log", xlim=(sizes[0], sizes[-1]), ylim=(3e-7, 1))
    ax.minorticks_off()
    size_axis(ax.xaxis)
    time_axis(ax.yaxis)
    grid(ax)
    legend(ax, loc="upper left", bbox_to_anchor=(0.0, 0.76))
    label_axes(ax, title or None, "V, size of the array (bytes)", "time", tick_role="tick")
    alt = (f"Log-log plot of the time against array size, with the latency and bandwidth terms "
           f"dotted and V = {format_bytes(r.nbytes)} marked at {format_time(r.time)}.")
    return {"curve": curve, "marker": marker, "figure": fig, "axes": ax, "alt": alt}


def draw_ring_bytes(n: int, counted: dict, nbytes: float, *, naive: float, ax=None):
    """Bytes each GPU sends in a ring all-reduce of ``nbytes`` (V): the formula
    ``2(N-1)/N V`` against N, the ``counted`` values (a dict N -> bytes counted
    from the schedule) as dots, N = ``n`` circled (left); and, on a **linear**
    axis so the ratio reads as lengths, the ring's bytes against the naive
    scheme's ``naive`` bytes at that N (right).

    Returns ``{"formula", "counted", "bars", "figure", "axes", "alt"}``.
    """
    if n not in counted:
        raise CollectivesError(f"n must be one of the counted sizes {sorted(counted)}, got {n!r}")
    D = _positive("nbytes", nbytes)
    line = np.arange(2, max(counted) + 1)
    fig, (ax, bx) = detached_panels(ax, 2, 3.2, width_ratios=[2.2, 1])
    (formula,) = ax.plot(line, 2 * (line - 1) / line * D, color=OP_COLORS["copy"], lw=1.8,
                         label="formula 2(N-1)/N \u00b7 V")
    ax.axhline(2 * D, color=OP_COLORS["reduce"], ls="--", lw=1.2, label="2V, never reached")
    (dots,) = ax.plot(list(counted), list(counted.values()), "o", color=MUTED_COLOR, ms=5,
                      label="counted from the schedule")
    ax.plot([n], [counted[n]], "o", ms=10, mfc="none", mec=OP_COLORS["reduce"], mew=2)
    ax.text(0.03, 0.05, f"N = {n}: counted {format_bytes(counted[n], digits=4)}\n"
            f"short of 2V by 2V/N = {format_bytes(2 * D - counted[n], digits=3)}",
            transform=ax.transAxes, fontsize=FONT["annotation"], bbox=dict(fc="white", ec=FAINT_COLOR))
    ticks = sorted(counted)
    ax.set(xscale="log", xlim=(1.8, max(ticks) * 1.1), ylim=(0, 2.25 * D), xticks=ticks, xticklabels=ticks)
    ax.minorticks_off()
    _linear_bytes(ax.yaxis)
    legend(ax, loc="center right")
    label_axes(ax, f"Ring all-reduce of V = {format_bytes(D)}: bytes each GPU sends",
               "GPUs N (log scale)", "bytes sent per GPU", tick_role="tick")
    values = [counted[n], float(naive)]
    bars = bx.bar(["ring", "naive"], values, color=[OP_COLORS["copy"], MUTED_COLOR])
    top = max(values)
    for i, v in enumerate(values):
        bx.text(i, v + 0.02 * top, format_bytes(v), ha="center", va="bottom", fontsize=FONT["annotation"])
    bx.set(ylim=(0, 1.18 * top))
    _linear_bytes(bx.yaxis)
    label_axes(bx, f"N = {n}, linear axis:\nnaive sends {naive / counted[n]:.1f}x more",
               ylabel="bytes sent per GPU", title_role="label", tick_role="tick")
    alt = (f"Left: bytes each GPU sends in a ring all-reduce of {format_bytes(D)} against N, creeping "
           f"towards {format_bytes(2 * D)}, with N = {n} marked; right: bars on a linear axis, ring "
           f"{format_bytes(values[0])} against naive {format_bytes(values[1])}.")
    return {"formula": formula, "counted": dots, "bars": bars, "figure": fig, "axes": [ax, bx], "alt": alt}
