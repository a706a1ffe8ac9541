"""Cost drawings: time and bandwidth against message size, where the time of one
schedule goes step by step, link loads over a topology, and the bandwidth
ladder.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from .. import CollectivesError, Schedule, Topology, Torus, format_bytes, format_rate, format_time
from ..analysis import CostCurves
from ..collective import Collective
from .. import hardware as hw
from .style import (ALGORITHM_STYLES, FAINT_COLOR, FONT, LINK_COLORS, MUTED_COLOR, OP_COLORS, REGIME_COLORS,
                    STAGE_COLORS, STAGE_HATCHES, TEXT_COLOR, TIER_COLORS)
from .figure import axes_for, grid, size_axis, time_axis, time_unit, topology_name
from .layout import grid_layout
from .networks import draw_topology


def draw_cost_curves(curves: CostCurves, ax=None, *, reference: str | None = None):
    """Time versus message size on log-log axes, one curve per algorithm.

    The numbers are ``curves``, from :func:`collectives_lib.analysis.cost_curves`
    (nothing is simulated here). Each curve is ``t(V) = L + B V`` in the
    large: the latency-bound regime (left, shaded) is where ``L`` dominates,
    the bandwidth-bound one (right) where ``B V`` does, and the crossover
    ``V* = L / B`` of the ``reference`` algorithm (default: the fastest at
    the largest size) is marked, with its two asymptotes dotted. Every
    algorithm's own crossover is a hollow marker on its curve, and a dotted
    vertical line marks each size where the fastest algorithm changes.

    Returns ``{"lines": {label: Line2D}, "crossover": V* (bytes) or None,
    "crossovers": {label: V*}, "switches": [(size, from, to)], "regimes":
    [latency span, bandwidth span], "curves": the CostCurves drawn, "figure",
    "axes", "alt"}``.
    """
    if not isinstance(curves, CostCurves):
        raise CollectivesError(f"draw_cost_curves draws cl.analysis.cost_curves(...); got {curves!r}")
    topology, sizes, times, labels = curves.topology, curves.sizes, curves.times, curves.labels
    fig, ax = axes_for(ax, 3.6 if ax is None else None)
    lines = {}
    for i, label in enumerate(labels):
        color, ls, marker = ALGORITHM_STYLES[i % len(ALGORITHM_STYLES)]
        (line,) = ax.plot(sizes, times[label], color=color, ls=ls, lw=1.8, label=str(label).replace("_", " "),
                          marker=marker, markevery=(i * 2 % 8, 8), ms=4, zorder=3)
        lines[label] = line
    stack = np.stack([times[k] for k in labels])
    best = curves.fastest
    switches = curves.switches()
    for x, _from, b in switches:
        ax.axvline(x, color=MUTED_COLOR, ls=":", lw=1.0, zorder=1)
        # at the annotation size, high in the plot on a white backing over the curves and grid
        ax.text(x, 0.86, f"{str(b).replace('_', ' ')} fastest \u2192", transform=ax.get_xaxis_transform(),
                rotation=90, fontsize=FONT["annotation"], color=TEXT_COLOR, ha="center", va="top", zorder=5,
                bbox=dict(boxstyle="round,pad=0.2", facecolor="white", edgecolor="none", alpha=0.9))
    crossovers = curves.crossovers()
    for i, label in enumerate(labels):
        v = crossovers.get(label)
        if v is not None and sizes[0] <= v <= sizes[-1]:
            color = ALGORITHM_STYLES[i % len(ALGORITHM_STYLES)][0]
            tv = float(np.interp(np.log(v), np.log(sizes), np.log(times[label])))
            ax.plot([v], [math.exp(tv)], marker="o", ms=7, mfc="white", mec=color, mew=1.6, zorder=4)
    if reference is None:
        reference = labels[int(best[-1])]
    regimes = []
    v_star = crossovers.get(reference)
    if v_star is not None and sizes[0] < v_star < sizes[-1]:
        L, B = curves.alpha[reference], curves.beta[reference]
        regimes.append(ax.axvspan(sizes[0], v_star, color=REGIME_COLORS["latency"], alpha=0.16, lw=0, zorder=0))
        regimes.append(ax.axvspan(v_star, sizes[-1], color=REGIME_COLORS["bandwidth"], alpha=0.16, lw=0, zorder=0))
        ax.plot(sizes, np.full(len(sizes), L), color=MUTED_COLOR, ls=(0, (1, 2)), lw=1.0, zorder=2)
        ax.plot(sizes, B * sizes, color=MUTED_COLOR, ls=(0, (1, 2)), lw=1.0, zorder=2)
        ax.axvline(v_star, color=TEXT_COLOR, lw=1.0, zorder=2)
        trans = ax.get_xaxis_transform()
        ax.text(v_star, 0.97, "latency-bound \u2190 ", transform=trans, fontsize=FONT["annotation"], va="top",
                ha="right", color=TEXT_COLOR)
        ax.text(v_star, 0.97, " \u2192 bandwidth-bound", transform=trans, fontsize=FONT["annotation"], va="top",
                ha="left", color=TEXT_COLOR)
        ax.text(v_star, 0.88, f" V* = L/B = {format_bytes(v_star)}\n ({str(reference).replace('_', ' ')}: "
                f"L = {format_time(L)}, 1/B = {format_rate(1 / B)})", transform=trans, fontsize=FONT["small"], va="top",
                ha="left", color=TEXT_COLOR,
                bbox=dict(boxstyle="round,pad=0.25", facecolor="white", edgecolor=FAINT_COLOR, alpha=0.9))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(sizes[0], sizes[-1])
    ymin = float(stack[stack > 0].min()) if (stack > 0).any() else 1e-9
    ax.set_ylim(ymin / 2, float(stack.max()) * 2)
    size_axis(ax.xaxis)
    time_axis(ax.yaxis)
    ax.tick_params(labelsize=FONT["tick"])
    ax.set_xlabel("message size V (bytes)", fontsize=FONT["label"])
    ax.set_ylabel("time", fontsize=FONT["label"])
    grid(ax)
    coll = curves.collective.replace("_", "-")
    ax.set_title(f"{coll} on the {topology_name(topology)}: time versus size", fontsize=FONT["title"])
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=FONT["tick"], frameon=False,
              title="algorithm\n(o: its V* = L/B)", title_fontsize=FONT["tick"])
    alt = (f"Log-log plot of {coll} time against message size on the {topology_name(topology)} for "
           f"{len(labels)} algorithms ({', '.join(str(k).replace('_', ' ') for k in labels)})"
           + (f"; the latency-bound region below {format_bytes(v_star)} and the bandwidth-bound region above "
              "it are shaded" if regimes else "")
           + "".join(f"; {str(b).replace('_', ' ')} becomes fastest at about {format_bytes(x)}" for x, a, b in switches)
           + ".")
    return {"lines": lines, "crossover": v_star if regimes else None, "crossovers": crossovers,
            "switches": switches, "regimes": regimes, "curves": curves, "figure": fig, "axes": ax, "alt": alt}


def draw_bandwidth_curves(curves: CostCurves, ax=None, *, peak: float | None = None,
                          peak_label: str = "link bandwidth"):
    """nccl-tests' view of ``curves`` (:func:`collectives_lib.analysis.cost_curves`):
    algbw (solid) and busbw (dashed) against message size.

    ``algbw = V / t`` and ``busbw = algbw x factor`` (nccl-tests' factor, named in
    the title: all-reduce 2(n-1)/n; broadcast, reduce and send 1; the others
    (n-1)/n), as ``all_reduce_perf`` prints them; sizes on a
    log2 axis, bandwidths in GB/s on a linear axis. ``peak`` draws a
    reference line (e.g. the link bandwidth that busbw approaches).

    Returns ``{"lines": {(label, "algbw" | "busbw"): Line2D}, "figure",
    "axes", "alt"}``.
    """
    if not isinstance(curves, CostCurves):
        raise CollectivesError(f"draw_bandwidth_curves draws cl.analysis.cost_curves(...); got {curves!r}")
    topology, sizes, collective = curves.topology, curves.sizes, curves.collective
    fig, ax = axes_for(ax, 3.4 if ax is None else None)
    lines = {}
    top = 0.0
    for i, label in enumerate(curves.labels):
        color, _, marker = ALGORITHM_STYLES[i % len(ALGORITHM_STYLES)]
        algbw = curves.algbw(label) / 1e9
        busbw = curves.busbw(label) / 1e9
        name = str(label).replace("_", " ")
        (l1,) = ax.plot(sizes, algbw, color=color, ls="-", lw=1.7, marker=marker, ms=3.5, markevery=3,
                        label=f"{name} algbw")
        (l2,) = ax.plot(sizes, busbw, color=color, ls="--", lw=1.4, label=f"{name} busbw")
        lines[(label, "algbw")] = l1
        lines[(label, "busbw")] = l2
        top = max(top, float(np.nanmax(busbw)), float(np.nanmax(algbw)))
    if peak is not None:
        ax.axhline(peak / 1e9, color=TEXT_COLOR, ls=":", lw=1.0)
        ax.text(sizes[0], peak / 1e9, f" {peak_label} {format_rate(peak)}", fontsize=FONT["small"], va="bottom",
                color=TEXT_COLOR)
        top = max(top, peak / 1e9)
    ax.set_xscale("log", base=2)
    size_axis(ax.xaxis, binary=True)
    from matplotlib.ticker import LogLocator

    ax.xaxis.set_major_locator(LogLocator(base=2 ** 4))
    ax.set_xlim(sizes[0], sizes[-1])
    ax.set_ylim(0, top * 1.12 if top > 0 else 1)
    ax.tick_params(labelsize=FONT["tick"])
    ax.set_xlabel("message size (bytes, powers of 2 as in nccl-tests)", fontsize=FONT["label"])
    ax.set_ylabel("bandwidth (GB/s)", fontsize=FONT["label"])
    grid(ax)
    coll = str(collective)
    factor = Collective(collective).busbw_formula
    ax.set_title(f"{coll.replace('_', '-')} on the {topology_name(topology)}\nalgbw = V/t (solid), "
                 f"busbw = algbw \u00d7 {factor} (dashed)", fontsize=FONT["heading"])
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=FONT["small"], frameon=False)
    alt = (f"nccl-tests style plot of algorithm bandwidth and bus bandwidth in GB/s against message size for "
           f"{coll.replace('_', '-')} on the {topology_name(topology)}; both rise with size and level off.")
    return {"lines": lines, "figure": fig, "axes": ax, "alt": alt}


def draw_step_times(schedule: Schedule, result, ax=None):
    """Where the time goes: one bar per step of ``schedule``, coloured (and hatched) by
    stage, from ``result = cl.simulate(schedule, topology, nbytes)``.
    The legend gives each stage's total and share; for pipelined schedules
    (stages overlap) a note gives the overlapped total.

    Returns ``{"bars": BarContainer (one bar per step), "stages": {stage:
    seconds}, "result": Result, "figure", "axes", "alt"}``.
    """
    from matplotlib.patches import Patch

    r, topology = result, result.topology
    fig, ax = axes_for(ax, 3.0 if ax is None else None)
    stages = schedule.stages()
    stage_of = [stages.index(s.stage) for s in schedule.steps]
    scale, unit = time_unit(float(np.max(r.step_times, initial=0.0)))
    x = np.arange(1, schedule.num_steps + 1)
    colors = [STAGE_COLORS[k % len(STAGE_COLORS)] for k in stage_of]
    hatches = [STAGE_HATCHES[k % len(STAGE_HATCHES)] for k in stage_of]
    K = schedule.num_steps
    bars = ax.bar(x, r.step_times / scale, width=0.85 if K <= 64 else 1.0, color=colors,
                  edgecolor="white" if K <= 64 else "none", linewidth=0.5)
    for bar, h in zip(bars, hatches):
        if h:
            bar.set_hatch(h)
    total = float(np.sum(r.step_times))
    handles = []
    for k, st in enumerate(stages):
        tt = float(r.stage_times.get(st, 0.0))
        share = tt / total * 100 if total else 0
        handles.append(Patch(facecolor=STAGE_COLORS[k % len(STAGE_COLORS)], hatch=STAGE_HATCHES[k % len(STAGE_HATCHES)],
                             edgecolor="white", label=f"{st or 'all steps'}: {format_time(tt)} ({share:.0f}%)"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=FONT["tick"], frameon=False,
              title="stage: total (share)", title_fontsize=FONT["tick"])
    ax.set_xlabel("step", fontsize=FONT["label"])
    ax.set_ylabel(f"step time ({unit})", fontsize=FONT["label"])
    ax.set_xlim(0.4, K + 0.6)
    if K <= 24:
        ax.set_xticks(x)
    ax.tick_params(labelsize=FONT["tick"])
    grid(ax, "y")
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    note = ""
    if schedule.pipelined and r.time < r.time_unoverlapped:
        note = f"; stages overlap, so the total is {format_time(r.time)}, not the sum {format_time(r.time_unoverlapped)}"
    ax.set_title(f"{schedule.algorithm.replace('_', ' ')} {schedule.collective.replace('_', '-')} of "
                 f"{format_bytes(r.nbytes)} on the {topology_name(topology)}\n{format_time(r.time)} in "
                 f"{K} steps", fontsize=FONT["heading"])
    if note:
        ax.set_xlabel("step\n" + note.lstrip("; ").capitalize(), fontsize=FONT["label"])
    alt = (f"Bar chart of the time of each of the {K} steps of the {schedule.algorithm.replace('_', ' ')} "
           f"{schedule.collective.replace('_', '-')} of {format_bytes(r.nbytes)}, coloured by stage: "
           + "; ".join(f"{st or 'all steps'} {format_time(float(r.stage_times.get(st, 0.0)))}" for st in stages)
           + f"; {format_time(r.time)} in all.")
    return {"bars": bars, "stages": dict(r.stage_times), "result": r, "figure": fig, "axes": ax, "alt": alt}


def draw_link_loads(topology: Topology, values, ax=None, *, title: str | None = None,
                    value_label: str | None = None):
    """Per-link load as a heat map over the topology, with the bottleneck named.

    ``values`` is one number per directed link (seconds busy, or bytes): a
    ``Result.link_busy``, or :func:`collectives_lib.analysis.link_load_values` of a
    schedule (the whole of it, or one step; that also gives a ``title``). Tori
    colour each direction of each link; switches and fat trees colour their
    links (a fat-tree bundle by its busiest link); TPU systems colour ICI, PCIe
    and DCN alike. The busiest link is circled and named.

    Returns the topology drawing's dict plus ``"values"``, ``"bottleneck"``
    (link id) and ``"bottleneck_label"``.
    """
    value_label = value_label or "link busy time"
    values = np.asarray(values, dtype=float)
    if len(values) != len(topology.links):
        raise CollectivesError(f"values has {len(values)} entries; {topology!r} has {len(topology.links)} links")
    if isinstance(topology, Torus) and len(topology.dims) == 3 and topology.dims[2] > 8:
        raise CollectivesError(
            f"{topology_name(topology)} is too big to draw link by link; draw a slice of it"
        )
    art = draw_topology(topology, ax=ax, link_values=values, value_label=value_label)
    b = int(np.argmax(values)) if len(values) and values.max() > 0 else -1
    label = topology.link_label(b) if b >= 0 else "none"
    if b >= 0:
        u, v = int(topology.links.src[b]), int(topology.links.dst[b])
        short = f"{topology.node_label(u)} \u2192 {topology.node_label(v)}"
        amount = format_time(values[b]) if "time" in value_label else f"{values[b]:.3g}"
        nmax = int(np.sum(values >= values[b] * (1 - 1e-9)))
        more = f" (and {nmax - 1} more as busy)" if nmax > 1 else ""
        a = art["axes"][0] if isinstance(art["axes"], list) else art["axes"]
        title = (title or value_label) + f"\nbottleneck: {short}, {amount}{more}"
        if isinstance(topology, Torus) and len(topology.dims) <= 2 and not (len(topology.dims) == 1 and topology.wraparound[0] and topology.dims[0] > 2):
            pos = grid_layout(topology)
            mid = (pos[u] + pos[v]) / 2 if abs(pos[u] - pos[v]).max() <= 1 else pos[u]
            a.plot(*mid, marker="o", ms=16, mfc="none", mec=OP_COLORS["reduce"], mew=2, zorder=6)
    if title:
        # a figure-wide title: the drawing itself may be narrow (a square grid)
        if not isinstance(art["axes"], list):
            art["axes"].set_title("")
        art["figure"].suptitle(title, fontsize=FONT["heading"])
    art.update(values=values, bottleneck=b, bottleneck_label=label)
    art["alt"] = (art["alt"].rstrip(".") + f"; links coloured by {value_label}, the busiest being {label}.")
    return art


_LADDER_TIERS = (("NVLink", "nvlink"), ("ICI", "ici"), ("PCIe", "pcie"), ("InfiniBand", "ib"),
                 ("DCN", "dcn"), ("HBM", "memory"), ("die", "chip"))


def draw_bandwidth_ladder(ax=None, *, ladder: Mapping[str, Any] | None = None):
    """The bandwidth hierarchy on a log scale, from on-chip to the data-centre network.

    One bar per entry of :data:`collectives_lib.hardware.LADDER` (or
    ``ladder``), longest first, coloured by link class (memory and on-chip
    tiers in their own colours), labelled with its value and the key of its
    source (see ``hardware.SOURCES``).

    Returns ``{"bars": BarContainer, "sources": {name: (key, title, url)},
    "figure", "axes", "alt"}``.
    """
    from matplotlib.patches import Patch

    ladder = hw.LADDER if ladder is None else ladder
    items = sorted(ladder.items(), key=lambda kv: -float(kv[1].value))
    names = [k for k, _ in items]
    vals = np.array([float(f.value) for _, f in items])
    fig, ax = axes_for(ax, 0.9 + 0.27 * len(items) if ax is None else None)

    def tier(name):
        for word, key in _LADDER_TIERS:
            if word.lower() in name.lower():
                return key
        return "chip"

    tiers = [tier(nm) for nm in names]
    colors = [LINK_COLORS[t] if t in LINK_COLORS else TIER_COLORS[t] for t in tiers]   # tier() gives one or the other
    y = np.arange(len(items))[::-1]
    bars = ax.barh(y, vals, color=colors, height=0.7, edgecolor="white")
    for bar, t in zip(bars, tiers):
        if t in ("pcie", "dcn"):
            bar.set_hatch("///" if t == "pcie" else "..")
    ax.set_xscale("log")
    ax.set_yticks(y)
    ax.set_yticklabels(names, fontsize=FONT["tick"])
    size_axis(ax.xaxis)
    from matplotlib.ticker import FuncFormatter

    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: format_rate(v, digits=3)))
    ax.set_xlim(vals.min() / 3, vals.max() * 15)
    ax.tick_params(labelsize=FONT["tick"])
    sources = {}
    for yy, (nm, f), v in zip(y, items, vals):
        title_url = hw.SOURCES.get(f.source, ("", ""))
        sources[nm] = (f.source, title_url[0], title_url[1])
        ax.text(v * 1.15, yy, f"{format_rate(v)}  [{f.source}]", va="center", fontsize=FONT["small"], color=TEXT_COLOR)
    ax.set_xlabel("bandwidth (bytes/s, one way, log scale); [source key] in hardware.SOURCES", fontsize=FONT["label"])
    grid(ax, "x")
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    seen = []
    handles = []
    tier_names = {"chip": "on-chip / package", "memory": "memory (HBM)", "nvlink": "NVLink", "ici": "ICI",
                  "pcie": "PCIe", "ib": "InfiniBand", "dcn": "DCN"}
    for t, c in zip(tiers, colors):
        if t not in seen:
            seen.append(t)
            handles.append(Patch(facecolor=c, hatch="///" if t == "pcie" else (".." if t == "dcn" else ""),
                                 edgecolor="white", label=tier_names.get(t, t)))
    ax.legend(handles=handles, loc="lower right", fontsize=FONT["small"], frameon=True, framealpha=0.9,
              edgecolor=FAINT_COLOR)
    ratio = vals.max() / vals.min()
    ax.set_title(f"The bandwidth ladder: {ratio:,.0f}x from on-chip to the data-centre network",
                 fontsize=FONT["heading"])
    alt = ("Horizontal bars on a log scale, from " + f"{names[0]} at {format_rate(vals[0])} down to "
           f"{names[-1]} at {format_rate(vals[-1])}: " + "; ".join(f"{nm} {format_rate(v)}" for nm, v in zip(names, vals)) + ".")
    return {"bars": bars, "sources": sources, "figure": fig, "axes": ax, "alt": alt}
