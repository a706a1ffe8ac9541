"""Published measurements against the models: one nccl-tests run's bus bandwidth
by size, beside NCCL's model and the ideal link model
(:mod:`collectives_lib.nccl.validation`).

Introduced in the chapter *Measure it yourself*.
"""

from __future__ import annotations

import numpy as np

from ..collective import Collective
from ..errors import CollectivesError
from ..units import format_bytes
from .figure import grid, label_axes, legend, new_figure
from .style import ALGORITHM_STYLES, FONT, MUTED_COLOR, TEXT_COLOR


def draw_measured_vs_models(collective, num_ranks: int, sizes, measured, nccl=None, ideal=None, *,
                            title: str = "", ax=None):
    """Bus bandwidth against message size: measured points, NCCL's model (solid)
    and the ideal link model (dashed), on a log size axis.

    ``sizes`` in bytes (nccl-tests' convention), ``measured``, ``nccl`` and
    ``ideal`` the times in seconds at those sizes (either model may be None);
    bus bandwidth is ``size / time`` times the collective's busbw factor for
    ``num_ranks``. The title gets the median error of NCCL's model appended (the
    error of median absolute value, with its sign, as :func:`collectives_lib.nccl.validation.summarize`).
    With no sizes (a machine and collective nobody has published) the panel
    says so.

    Returns ``{"measured": Line2D or None, "models": list of Line2D, "median_error": float or None,
    "figure", "axes", "alt"}``.
    """
    coll = Collective(collective)
    if isinstance(num_ranks, bool) or int(num_ranks) != num_ranks or num_ranks < 2:
        raise CollectivesError(f"num_ranks must be a whole number >= 2, got {num_ranks!r}")
    sizes = np.asarray(sizes, dtype=float)
    if ax is None:
        fig, ax = new_figure(height=3.3, pyplot=False)
    else:
        fig = ax.figure
    if sizes.size == 0:
        ax.text(0.5, 0.5, f"no published nccl-tests run of {coll.value.replace('_', '-')} here",
                ha="center", va="center", transform=ax.transAxes, size=FONT["label"], color=MUTED_COLOR)
        ax.set_xticks([])
        ax.set_yticks([])
        label_axes(ax, title or "no published run")
        return {"measured": None, "models": [], "median_error": None, "figure": fig, "axes": ax,
                "alt": f"An empty panel: no published run of {coll.value} on this machine"}
    factor = coll.busbw_factor(int(num_ranks))
    series = {"measured": measured, "NCCL model": nccl, "ideal link model": ideal}
    busbw = {}
    for k, t in series.items():
        if t is None:
            continue
        t = np.asarray(t, dtype=float)
        if t.shape != sizes.shape or not np.all(t > 0):
            raise CollectivesError(f"{k} must hold one positive time per size ({sizes.size})")
        busbw[k] = sizes / t * factor / 1e9
    if "measured" not in busbw:
        raise CollectivesError("measured times are required")
    m = ax.plot(sizes, busbw["measured"], "o", color=TEXT_COLOR, ms=4, label="measured (nccl-tests)")[0]
    models = []
    for (k, ls), style in zip((("NCCL model", "-"), ("ideal link model", "--")), ALGORITHM_STYLES):
        if k in busbw:
            models.append(ax.plot(sizes, busbw[k], ls=ls, color=style[0], lw=1.6, label=k)[0])
    err = None
    if nccl is not None:
        e = (np.asarray(nccl, dtype=float) - np.asarray(measured, dtype=float)) / np.asarray(measured, dtype=float)
        err = float(e[np.argsort(np.abs(e))[len(e) // 2]])     # the median by size, by |error|, signed
    ax.set_xscale("log", base=2)
    ax.minorticks_off()
    lo, hi = int(np.floor(np.log2(sizes[0]))), int(np.ceil(np.log2(sizes[-1])))
    step = max(1, (hi - lo + 7) // 8)
    ticks = [2.0**k for k in range(lo, hi + 1, step)]
    ax.set_xticks(ticks, [format_bytes(t, binary=True) for t in ticks])
    ax.set_ylim(0, max(float(np.max(v)) for v in busbw.values()) * 1.12)
    head = title or f"{coll.value.replace('_', '-')}, {int(num_ranks)} GPUs"
    if err is not None:
        head += f": NCCL model's median error {err:+.0%}"
    label_axes(ax, head, "message size (nccl-tests' convention)", "bus bandwidth (GB/s)", tick_role="tick")
    grid(ax)
    legend(ax, loc="upper left")
    alt = (f"Bus bandwidth of a published {coll.value} run on {int(num_ranks)} GPUs against message "
           f"size, measured points rising to a plateau, with NCCL's model as a solid line and the ideal "
           f"link model as a dashed line" + (f"; the NCCL model's median error is {err:+.0%}" if err is not None
                                             else ""))
    return {"measured": m, "models": models, "median_error": err, "figure": fig, "axes": ax, "alt": alt}


def _times(name: str, values, shape) -> np.ndarray:
    t = np.asarray(values, dtype=float)
    if t.shape != shape or not np.all(np.isfinite(t)) or not np.all(t > 0):
        raise CollectivesError(f"{name} must hold one positive time (s) per size ({shape[0]})")
    return t


def draw_busbw_prediction(collective, num_ranks: int, sizes, predicted, bound, *, picks=None,
                          measured=None, network_bound=None, title: str = "", ax=None):
    """What nccl-tests should print for ``collective`` on ``num_ranks`` GPUs: the bus
    bandwidth NCCL's model predicts against message size (a solid line, with one marker
    per size coloured by what the model expects NCCL to run there, ``picks``, e.g.
    ``"NVLS/SIMPLE"``), the bus bandwidth of the lower bound on the time (dashed: no
    algorithm of that kind gets above it) and, optionally, measured times (black points).
    ``network_bound`` (optional) is the bound when the switches reduce (NVLS, SHARP:
    :func:`~collectives_lib.bounds.lower_bounds` with ``network=True``), drawn dotted
    beside ``bound`` (then the bound of algorithms whose switches only forward) at the
    sizes where it is the lower: each algorithm is read against its own bound, not one
    line that steps as NCCL's pick changes kind.

    ``sizes`` in bytes (nccl-tests' convention); ``predicted``, ``bound`` and ``measured``
    are times in seconds at those sizes; busbw is ``size / time`` times the collective's
    factor. Drawn into one of several panels (``ax`` of a figure with more axes), it
    takes fewer size ticks and a one-column legend. Introduced in the chapter
    *Running and reading NCCL*.

    Returns ``{"model": Line2D, "bound": Line2D, "network_bound": Line2D or None,
    "measured": Line2D or None, "picks": {label: PathCollection}, "figure", "axes", "alt"}``.
    """
    coll = Collective(collective)
    if isinstance(num_ranks, bool) or int(num_ranks) != num_ranks or num_ranks < 2:
        raise CollectivesError(f"num_ranks must be a whole number >= 2, got {num_ranks!r}")
    sizes = np.asarray(sizes, dtype=float)
    if sizes.ndim != 1 or sizes.size < 2 or not np.all(sizes > 0):
        raise CollectivesError(f"sizes must be at least two positive sizes in bytes, got {sizes.size}")
    factor = coll.busbw_factor(int(num_ranks))
    bus = {k: sizes / _times(k, v, sizes.shape) * factor / 1e9
           for k, v in (("predicted", predicted), ("bound", bound), ("measured", measured),
                        ("network_bound", network_bound)) if v is not None}
    if picks is not None and len(picks) != sizes.size:
        raise CollectivesError(f"picks must name one algorithm per size ({sizes.size}), got {len(picks)}")
    if ax is None:
        fig, ax = new_figure(height=3.4, pyplot=False)
    else:
        fig = ax.figure
    color, _, _ = ALGORITHM_STYLES[0]
    model = ax.plot(sizes, bus["predicted"], "-", color=color, lw=1.6, label="NCCL's model", zorder=2)[0]
    lower_at = bus["network_bound"] > bus["bound"] * 1.001 if "network_bound" in bus else None
    apart = lower_at is not None and bool(lower_at.any())
    lower = ax.plot(sizes, bus["bound"], "--", color=MUTED_COLOR, lw=1.3, zorder=1,
                    label="lower bound, as busbw" + (": switches forward" if apart else ""))[0]
    innet = None
    if apart:
        higher = np.where(lower_at, bus["network_bound"], np.nan)
        innet = ax.plot(sizes, higher, ":", color=TEXT_COLOR, lw=1.5, zorder=1,
                        label="lower bound: switches reduce (NVLS)")[0]
    marks = {}
    for i, label in enumerate(dict.fromkeys(picks or ())):
        at = np.array([p == label for p in picks])
        c, _, marker = ALGORITHM_STYLES[(i + 1) % len(ALGORITHM_STYLES)]
        marks[label] = ax.scatter(sizes[at], bus["predicted"][at], s=18, marker=marker, color=c, zorder=3,
                                  label=f"expects {label}")
    meas = None
    if "measured" in bus:
        meas = ax.plot(sizes, bus["measured"], "o", color=TEXT_COLOR, ms=3.5, label="measured (nccl-tests)",
                       zorder=4)[0]
    wide = len(fig.axes) == 1                       # one panel across the page, or one of several
    ax.set_xscale("log", base=2)
    ax.minorticks_off()
    lo, hi = int(np.floor(np.log2(sizes[0]))), int(np.ceil(np.log2(sizes[-1])))
    most = 8 if wide else 4
    step = max(1, (hi - lo + most - 1) // most)
    ticks = [2.0**k for k in range(lo, hi + 1, step)]
    ax.set_xticks(ticks, [format_bytes(t, binary=True) for t in ticks])
    top = max(float(np.nanmax(v)) for v in bus.values())
    ax.set_ylim(0, top * (1.1 if wide else 1.7))      # a wide figure's legend is below it
    label_axes(ax, title or f"{coll.value.replace('_', '-')}, {int(num_ranks)} GPUs (NCCL's model)",
               "message size (nccl-tests' convention)", "bus bandwidth (GB/s)", tick_role="tick")
    grid(ax)
    if wide:
        # two columns below the axes: three ran past the right edge of a narrower figure
        # with long names (NVLS_TREE/SIMPLE)
        legend(ax, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)
    else:
        legend(ax, loc="upper left")
    peak = float(bus["predicted"][-1])
    alt = (f"Bus bandwidth against message size for {coll.value} on {int(num_ranks)} GPUs: NCCL's model "
           f"rises to {peak:.0f} GB/s at the largest size, under the dashed busbw of the lower bound"
           + (" (dotted: the bound when the switches reduce, which NVLS is held to)" if apart else "")
           + ("; measured points lie along it" if meas is not None else "")
           + (f"; markers say what NCCL runs: {', '.join(marks)}" if marks else ""))
    return {"model": model, "bound": lower, "network_bound": innet, "measured": meas, "picks": marks,
            "figure": fig, "axes": ax, "alt": alt}
