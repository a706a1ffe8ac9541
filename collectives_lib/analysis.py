"""Analysis: what ``auto`` picks, estimates, flows, crossovers and alpha-beta fits.

Building a schedule (:mod:`collectives_lib.builders`) never times it; this
module does, with the simulator (:mod:`collectives_lib.simulate`):

* :func:`choose` is ``auto``: on a TPU torus, what XLA runs (rings on axes with
  wraparound, chains without, every axis at once); elsewhere, like NCCL's
  tuner, the applicable algorithm with the least predicted time for the size.
* :func:`estimate` builds and times in one call.
* :func:`time_flows` times arbitrary point-to-point traffic that is not a collective.
* :func:`crossover` and :func:`algorithm_crossover` find where two algorithms
  swap places; :func:`size_at_fraction`, where one reaches a share of its peak.
* :func:`fit_alpha_beta` fits ``t = alpha + beta m`` to measured or simulated times.
* :func:`collective_costs` and :func:`torus_summary` tabulate whole systems.

Introduced in the chapter *A first look*; every chapter uses it.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from . import checks, costs, timing
from .builders import algorithm_name, build_named, buildable, group_for, reasons
from .builders.rings import axis_kind
from .collective import Collective, collective as as_collective
from .timing import nccl_menu  # noqa: F401  (where it was; the timing pipeline owns it)
from .errors import CollectivesError
from .estimates import Choice
from .schedule import Schedule, Step, Traffic, boxes_array
from .simulate import simulate, simulate_sizes
from .topology import Topology, Torus
from .units import element_size, format_bytes


# ---------------------------------------------------------------------------
# auto
# ---------------------------------------------------------------------------

def choose(collective, topology: Topology, nbytes: int | None = None, *, axes=None,
           **options) -> Choice:
    """The algorithm ``auto`` picks in the ideal link model, and why
    (:func:`collectives_lib.timing.auto_rule`: on a TPU torus what XLA runs, elsewhere the
    least time among the algorithms NCCL runs). NCCL's own choice, with its protocols,
    is :func:`collectives_lib.estimate` with ``model="nccl"``."""
    coll = as_collective(collective)
    nbytes = 1 << 30 if nbytes is None else checks.size(nbytes)
    return Choice(*timing.choose(coll, topology, nbytes, axes=axes, options=options))


def resolve(collective, topology: Topology, algorithm: str, nbytes: int | None, axes,
            options) -> Choice:
    """``algorithm`` as a :class:`Choice`: ``auto`` resolved by :func:`choose`."""
    name = algorithm_name(algorithm)
    if name == "auto":
        return choose(collective, topology, nbytes, axes=axes, **options)
    return Choice(name, "as requested")


# ---------------------------------------------------------------------------
# Arbitrary flows
# ---------------------------------------------------------------------------

def time_flows(topology: Topology, flows, *, overhead: float = 0.0):
    """Time one step of arbitrary point-to-point flows: ``[(src, dst, nbytes), ...]``.

    ``src`` and ``dst`` are endpoint ranks or named nodes (``"host0"``,
    ``"switch"``, ``"nvswitch3"``). Flows share links they cross; the result is
    a :class:`~collectives_lib.simulate.Result` whose size is the total bytes.
    Use it for traffic that is not a collective: loading shards from hosts over
    PCIe, sparse MoE dispatch, a custom pattern.
    """
    flows = list(flows)
    if not flows:
        raise CollectivesError("time_flows needs at least one (src, dst, nbytes) flow")
    names: list[str] = []

    def node(x):
        if isinstance(x, str):
            if x not in names:
                names.append(x)
            return topology.num_ranks + names.index(x)
        x = int(x)
        if not 0 <= x < topology.num_ranks:
            raise CollectivesError(f"rank {x} is not an endpoint of {topology!r}")
        return x
    src = np.array([node(f[0]) for f in flows])
    dst = np.array([node(f[1]) for f in flows])
    nbytes = np.array([float(f[2]) for f in flows])
    if (nbytes < 0).any() or nbytes.sum() <= 0:
        raise CollectivesError("flow sizes must be >= 0 bytes and not all zero")
    total = nbytes.sum()
    traffic = Traffic.make(src, dst, 0, nbytes / total)
    sched = Schedule("send", "flows", topology.num_ranks,
                     np.arange(topology.num_ranks)[None, :], (topology.num_ranks,),
                     (len(flows),), (Step(traffic, boxes_array([(np.arange(len(flows)), 1)], len(flows)), "flows"),),
                     agents=tuple(names), routing="routed", root=0, dest=0, weights=nbytes / total)
    return simulate(sched, topology, max(1, int(round(total))), overhead=overhead, element_size=1)


# ---------------------------------------------------------------------------
# Crossovers, peaks and fits
# ---------------------------------------------------------------------------

def crossovers(sizes: np.ndarray, times_a: np.ndarray, times_b: np.ndarray) -> list[float]:
    """Every size where algorithms a and b swap places, in increasing order, each
    interpolated on log-log axes between the two sizes around it; empty if they
    never cross in ``sizes``. Curves whose protocols switch can cross more than once.

    Introduced in the chapter *Depth, trees and the network roofline*.
    """
    sizes = np.asarray(sizes, dtype=float)
    ta, tb = np.asarray(times_a, dtype=float), np.asarray(times_b, dtype=float)
    if sizes.ndim != 1 or ta.shape != sizes.shape or tb.shape != sizes.shape:
        raise CollectivesError(f"sizes and both time curves must be 1-D of one length, got shapes "
                               f"{sizes.shape}, {ta.shape} and {tb.shape}")
    if np.any(sizes <= 0) or np.any(ta <= 0) or np.any(tb <= 0):
        raise CollectivesError("sizes and times must all be positive")
    d = np.log(ta) - np.log(tb)
    sign = np.sign(d)
    out = []
    for i in np.nonzero(sign[:-1] * sign[1:] < 0)[0]:
        x0, x1 = np.log(sizes[i]), np.log(sizes[i + 1])
        t = d[i] / (d[i] - d[i + 1])
        out.append(float(np.exp(x0 + t * (x1 - x0))))
    return out


def crossover(sizes: np.ndarray, times_a: np.ndarray, times_b: np.ndarray) -> float | None:
    """The first size where algorithm a stops being faster than b (or the other way),
    interpolated on log-log axes; None if they never cross in ``sizes``
    (:func:`crossovers` gives every one)."""
    found = crossovers(sizes, times_a, times_b)
    return found[0] if found else None


def algorithm_crossover(collective, topology: Topology, algorithm_a: str, algorithm_b: str, *,
                        axes=None, lo: float = 8, hi: float = 1e11, points: int = 400) -> float | None:
    """Size at which two algorithms of a collective take equal time on a topology."""
    a = build_named(collective, topology, algorithm_a, axes)
    b = build_named(collective, topology, algorithm_b, axes)
    sizes = np.geomspace(lo, hi, points)
    return crossover(sizes, simulate_sizes(a, topology, sizes), simulate_sizes(b, topology, sizes))


def size_at_fraction(schedule: Schedule, topology: Topology, fraction: float = 0.9, *,
                     overhead: float = 0.0, lo: float = 1.0, hi: float = 1e13,
                     points: int = 800) -> float | None:
    """Smallest array size V at which ``schedule`` reaches ``fraction`` of its peak bandwidth.

    The peak is the large-message limit of algbw (equivalently busbw), where
    latency no longer counts. In the alpha-beta model ``t = L + B V`` the
    answer is ``V = f L / ((1 - f) B)``; the simulator's times are used, so
    pipelined stages and shared links count too. ``overhead`` is a per-step
    software cost added to every step (as in :func:`~collectives_lib.simulate.simulate`).
    Returns None if the fraction is not reached below ``hi`` bytes.

    Introduced in the chapter *GPU collectives within the node*.
    """
    fraction = float(fraction)
    if not 0.0 < fraction < 1.0:
        raise CollectivesError(f"fraction must be between 0 and 1 (exclusive), got {fraction}")
    if not 0 < lo < hi:
        raise CollectivesError(f"need 0 < lo < hi, got lo={lo}, hi={hi}")
    sizes = np.geomspace(lo, hi, int(points))
    huge = 1e18
    times = simulate_sizes(schedule, topology, np.concatenate([sizes, [huge]]), overhead=overhead)
    if not times[-1] > 0:
        raise CollectivesError("the schedule takes no time at any size (no bytes move)")
    peak = huge / times[-1]
    eff = sizes / times[:-1] / peak
    above = np.nonzero(eff >= fraction)[0]
    if not len(above):
        return None
    i = int(above[0])
    if i == 0:
        return float(sizes[0])
    # interpolate in log size between the last point below and the first above
    x0, x1 = np.log(sizes[i - 1]), np.log(sizes[i])
    e0, e1 = eff[i - 1], eff[i]
    t = (fraction - e0) / (e1 - e0) if e1 > e0 else 1.0
    return float(np.exp(x0 + t * (x1 - x0)))


def fit_alpha_beta(sizes, times) -> tuple[float, float, str]:
    """Fit ``t(m) = alpha + beta m`` to times; returns ``(alpha, beta, method)``.

    Least squares on *relative* errors (each point weighted by ``1/t``): times
    span four decades, and plain least squares would let the largest message
    decide alpha, which comes out negative in the noise. Both must be positive
    for the model to mean anything; if the fit gives ``alpha <= 0`` or
    ``beta <= 0`` (a noisy or oversubscribed machine), fall back to the two ends
    of the sweep: alpha = the smallest message's time, beta = the largest
    message's extra time per byte (or its time per byte, if that is not
    positive either), and say so in ``method``.

    >>> alpha, beta, how = fit_alpha_beta([1e3, 1e6], [1.1e-6, 1.01e-4])
    >>> round(alpha * 1e6, 3), round(1 / beta / 1e9, 3), how
    (1.0, 10.0, 'least squares on relative error')
    """
    m = np.asarray(sizes, dtype=float)
    t = np.asarray(times, dtype=float)
    ok = np.isfinite(t) & (t > 0) & np.isfinite(m) & (m >= 0)
    m, t = m[ok], t[ok]
    if len(m) < 2 or np.ptp(m) == 0:
        raise CollectivesError(
            f"fitting alpha and beta needs times for at least two different sizes, got {len(m)}")
    A = np.stack([np.ones_like(m), m], axis=1) / t[:, None]
    (alpha, beta), *_ = np.linalg.lstsq(A, np.ones_like(t), rcond=None)
    if alpha > 0 and beta > 0:
        return float(alpha), float(beta), "least squares on relative error"
    small, large = np.argmin(m), np.argmax(m)
    alpha = float(t[small])
    beta = (t[large] - alpha) / (m[large] - m[small])
    method = "fallback: alpha from the smallest message, beta from the largest"
    if not beta > 0:
        beta = t[large] / m[large]
        method = "fallback: alpha from the smallest message, beta = time/size of the largest"
    return alpha, float(beta), method


# ---------------------------------------------------------------------------
# Cost curves: time against size for several algorithms, with alpha-beta fits
# ---------------------------------------------------------------------------

def schedules_for(topology, collective, algorithms, schedules, axes):
    """The schedules to compare: ``schedules`` as given, else every algorithm named (default:
    every one that applies), built on ``topology``."""
    if schedules is not None:
        return dict(schedules)
    if algorithms is None:
        algorithms = [k for k, why in reasons(collective, topology, axes).items() if why is None]
    out = {}
    for alg in algorithms:
        out[alg] = build_named(collective, topology, alg, axes)
    return out


def latency_and_slope(schedule: Schedule, topology: Topology) -> tuple[float, float]:
    """(latency term L in s, seconds per byte B) of t(V) ~ L + B V, from the simulator:
    the time of an empty message, and the slope between 1 TB and 2 TB."""
    big = np.array([1e12, 2e12])
    t0 = float(simulate_sizes(schedule, topology, np.array([0.0]))[0])
    tb = simulate_sizes(schedule, topology, big)
    slope = float((tb[1] - tb[0]) / (big[1] - big[0]))
    return t0, slope


@dataclass(frozen=True)
class CostCurves:
    """Simulated time against message size for several algorithms, each with its
    alpha-beta fit ``t(V) ~ alpha + beta V`` (made by :func:`cost_curves`)."""

    collective: str
    topology: Topology
    sizes: np.ndarray                  # message sizes V in bytes
    times: Mapping[str, np.ndarray]    # label -> seconds at each size
    alpha: Mapping[str, float]         # label -> latency term L in seconds (the time of an empty message)
    beta: Mapping[str, float]          # label -> seconds per byte B (the slope for large messages)
    factors: Mapping[str, float] = None   # label -> nccl-tests' busbw factor of its group

    def algbw(self, label: str) -> np.ndarray:
        """nccl-tests' algorithm bandwidth V / t at every size (bytes/s)."""
        return self.sizes / self.times[label]

    def busbw(self, label: str) -> np.ndarray:
        """nccl-tests' bus bandwidth: algbw times the collective's factor for the group."""
        return self.algbw(label) * self.factors[label]

    @property
    def labels(self) -> list[str]:
        return list(self.times)

    @property
    def fastest(self) -> np.ndarray:
        """Index into :attr:`labels` of the fastest algorithm at each size."""
        return np.argmin(np.stack([self.times[k] for k in self.labels]), axis=0)

    def crossovers(self) -> dict[str, float]:
        """Each algorithm's ``V* = alpha / beta`` in bytes, where the bandwidth term overtakes
        the latency term (algorithms with a zero term have none)."""
        return {k: self.alpha[k] / self.beta[k] for k in self.labels if self.alpha[k] > 0 and self.beta[k] > 0}

    def switches(self) -> list[tuple[float, str, str]]:
        """``(size, from, to)`` wherever the fastest algorithm changes, at the geometric
        middle of the two sizes around the change."""
        labels, best, sizes = self.labels, self.fastest, self.sizes
        return [(math.sqrt(sizes[j - 1] * sizes[j]), labels[best[j - 1]], labels[best[j]])
                for j in range(1, len(sizes)) if best[j] != best[j - 1]]


def cost_curves(topology: Topology, collective: str | None = None, algorithms=None, sizes=None, *,
                schedules: Mapping[str, Schedule] | None = None, axes=None) -> CostCurves:
    """The numbers behind :func:`draw_cost_curves`: build the schedules, simulate them at
    every size and fit ``t(V) ~ alpha + beta V`` to each.

    Times come from :func:`~collectives_lib.simulate.simulate_sizes`; ``alpha`` is the
    simulated time of an empty message and ``beta`` the slope between 1 TB and 2 TB.
    ``algorithms`` defaults to every algorithm that applies
    (:func:`collectives_lib.algorithms`); or pass ready
    ``schedules={label: schedule}``. ``sizes`` defaults to 57 sizes from 1 kB to 10 GB.
    """
    scheds = schedules_for(topology, collective, algorithms, schedules, axes)
    if not scheds:
        raise CollectivesError(f"no algorithm applies to {collective} on {topology!r}")
    if sizes is None:
        sizes = np.logspace(3, 10, 57)
    sizes = np.asarray(sizes, dtype=float)
    times, alpha, beta, factors = {}, {}, {}, {}
    for label, sched in scheds.items():
        times[label] = simulate_sizes(sched, topology, sizes)
        alpha[label], beta[label] = latency_and_slope(sched, topology)
        factors[label] = sched.busbw_factor()
    return CostCurves(collective or next(iter(scheds.values())).collective, topology, sizes, times, alpha, beta,
                      factors)


def link_load_values(schedule: Schedule, topology: Topology, nbytes: int, step: int | None = None
                     ) -> tuple[np.ndarray, str]:
    """Seconds each link is busy during the whole schedule (or during ``step``, 0-based),
    and a title that says which: the numbers behind :func:`~collectives_lib.draw.draw_link_loads`."""
    from .simulate import step_link_loads
    name = f"{schedule.algorithm.replace('_', ' ')} {schedule.collective.replace('_', '-')}"
    if step is not None:
        loads = step_link_loads(schedule, topology, step, nbytes)
        return loads / topology.links.bandwidth, f"link busy time in step {step + 1} of {name}"
    r = simulate(schedule, topology, nbytes)
    return r.link_busy, f"link busy time over the whole {name} of {format_bytes(r.nbytes)}"


# ---------------------------------------------------------------------------
# The numbers behind two chapters' explorers
# ---------------------------------------------------------------------------

#: The reduce-scatter explorer's axes: label -> registered algorithm.
AXIS_KINDS = {"bidirectional ring": "bidirectional_ring", "one-way ring": "ring", "chain": "chain"}
#: 1 KiB .. 16 GiB in half powers of two: the reduce-scatter explorer's curve sizes.
CURVE_SIZES = 2.0 ** np.arange(10, 34.5, 0.5)


@lru_cache(maxsize=None)
def one_axis_curves(n: int, kind: str, bandwidth: float, latency: float) -> dict:
    """Simulated times over :data:`CURVE_SIZES` of all-gather, reduce-scatter and
    all-reduce on one axis of ``n`` chips wired as ``kind`` (a key of
    :data:`AXIS_KINDS`), ideal link model: ``{"sizes", "n", "kind", "bandwidth",
    "latency", collective: times}`` (introduced in the reduce-scatter chapter)."""
    from .plan import build
    from .topology import Chain, Ring

    if kind not in AXIS_KINDS:
        raise CollectivesError(f"kind must be one of {', '.join(AXIS_KINDS)}, got {kind!r}")
    topo = (Chain(n, bandwidth=bandwidth, latency=latency) if kind == "chain" else
            Ring(n, bandwidth=bandwidth, latency=latency, bidirectional=kind == "bidirectional ring"))
    out = {"sizes": CURVE_SIZES, "n": n, "kind": kind, "bandwidth": bandwidth, "latency": latency}
    for c in (Collective.ALL_GATHER, Collective.REDUCE_SCATTER, Collective.ALL_REDUCE):
        out[c.value] = simulate_sizes(build(c, topo, AXIS_KINDS[kind]), topo, CURVE_SIZES)
    return out


#: The all-to-all explorer's wirings of one axis: label -> registered algorithm.
ALL_TO_ALL_KINDS = {"bidirectional ring": "bidirectional_ring", "one-way ring": "ring", "chain": "chain"}


@lru_cache(maxsize=None)
def all_to_all_curves(n: int, bandwidth: float, latency: float) -> dict:
    """Simulated times over :data:`CURVE_SIZES` (``V``, the total over the ``n`` chips)
    of a balanced all-to-all on one axis wired three ways (:data:`ALL_TO_ALL_KINDS`),
    of the all-gather of the same ``V`` on the bidirectional ring, and the all-to-all's
    lower bound there; ideal link model. Returns ``{"sizes", "n", "bandwidth",
    "latency", label: times, "all_gather": times, "bound": times}`` (introduced in the
    all-to-all chapter's explorer)."""
    from .bounds import lower_bound
    from .plan import build
    from .topology import Chain, Ring

    if isinstance(n, bool) or int(n) != n or n < 2:
        raise CollectivesError(f"n must be a whole number of chips >= 2, got {n!r}")
    if not (bandwidth > 0 and latency >= 0):
        raise CollectivesError(f"bandwidth must be positive and latency at least 0, got {bandwidth!r}, {latency!r}")
    n = int(n)
    sizes = CURVE_SIZES
    per_chip = sizes / n                      # what simulate takes for an all-to-all: one chip's buffer
    out = {"sizes": sizes, "n": n, "bandwidth": bandwidth, "latency": latency}
    for label, algorithm in ALL_TO_ALL_KINDS.items():
        topo = (Chain(n, bandwidth=bandwidth, latency=latency) if algorithm == "chain" else
                Ring(n, bandwidth=bandwidth, latency=latency, bidirectional=algorithm == "bidirectional_ring"))
        out[label] = simulate_sizes(build("all_to_all", topo, algorithm), topo, per_chip)
    ring = Ring(n, bandwidth=bandwidth, latency=latency)
    out["all_gather"] = simulate_sizes(build("all_gather", ring, "bidirectional_ring"), ring, sizes)
    out["bound"] = np.array([lower_bound("all_to_all", ring, int(v)).time for v in per_chip])
    return out


#: The all-gather explorer's schedules: label -> registered algorithm.
ALL_GATHER_KINDS = {"unidirectional ring": "ring", "bidirectional ring": "bidirectional_ring",
                    "chain": "chain", "2D torus, both axes": "multi_axis"}


def all_gather_topology(algorithm: str, n: int, bandwidth: float, latency: float):
    """The topology each all-gather explorer schedule runs on: a ring (one-way for
    ``ring``), a chain, or a square torus of ``n`` chips for ``multi_axis``."""
    from .topology import Chain, Ring, Torus

    if algorithm == "multi_axis":
        k = int(round(n ** 0.5))
        if k * k != n:
            raise CollectivesError(f"the 2D schedule needs a square number of chips, got {n}")
        return Torus((k, k), bandwidth=bandwidth, latency=latency, link_class="ici")
    if algorithm == "chain":
        return Chain(n, bandwidth=bandwidth, latency=latency, link_class="ici")
    return Ring(n, bandwidth=bandwidth, latency=latency, link_class="ici", bidirectional=algorithm != "ring")


def all_gather_arrivals(schedule: Schedule) -> np.ndarray:
    """For every rank and block, the step after which the block has arrived; for the 2D
    schedule the columns are slots, part 0's blocks first, then part 1's."""
    from .replay import arrival_steps

    if schedule.algorithm != "multi_axis":
        return arrival_steps(schedule)
    per_slot = arrival_steps(schedule, per_slot=True)
    n = schedule.group_size
    parts = per_slot.shape[1] // n
    return per_slot[:, [parts * b + p for p in range(parts) for b in range(n)]]


def all_gather_explorer_data(bandwidth: float, latency: float, ns=(4, 16, 64), sizes=None, marks=()) -> dict:
    """Everything the all-gather explorer draws, computed once (ideal link model): for
    every ``n`` and schedule the topology, the schedule, its times over ``sizes``, its
    arrival grid, and at each size in ``marks`` (the explorer's slider sizes) the
    simulator's :class:`~collectives_lib.simulate.Result` at that size rounded to whole shards."""
    from .plan import build

    sizes = np.logspace(3, 10, 57) if sizes is None else np.asarray(sizes, dtype=float)
    data = {"sizes": sizes, "ns": tuple(ns), "marks": tuple(marks)}
    for n in ns:
        for label, algorithm in ALL_GATHER_KINDS.items():
            topo = all_gather_topology(algorithm, n, bandwidth, latency)
            sched = build("all_gather", topo, algorithm)
            data[n, label] = {"topology": topo, "schedule": sched, "times": simulate_sizes(sched, topo, sizes),
                              "arrivals": all_gather_arrivals(sched),
                              "marks": {m: simulate(sched, topo, sched.round_size(m)) for m in marks}}
    return data


# ---------------------------------------------------------------------------
# Tables for whole systems
# ---------------------------------------------------------------------------

def collective_costs(topology: Topology, nbytes: float, collectives=("all_gather", "reduce_scatter",
                                                                      "all_reduce", "all_to_all"), *,
                     algorithm: str = "auto", axes=None, overhead: float = 0.0) -> list[dict]:
    """One row per collective: the algorithm ``auto`` picks (or ``algorithm``), and its
    time, algbw and busbw for an array of about ``nbytes`` bytes.

    Each size is rounded to the nearest size the schedule can split evenly
    (``Schedule.round_size``; a schedule too large to build is timed by its closed
    form at the size given), and the row says which size was used. ``nbytes``
    is the book's V for every collective (see the notation page): for
    all-to-all, the total over all ranks, so each rank's buffer (nccl-tests'
    size, the row's ``"rank_nbytes"``) is ``V / N``; the row's algbw and busbw
    are nccl-tests' figures for that buffer. A collective that does not apply
    to the topology gets a row with ``"error"`` set instead of times.

    Introduced in the chapter *GPU collectives across nodes* (the closing table).
    """
    from .models import estimate
    rows = []
    for coll in collectives:
        try:
            name = algorithm_name(algorithm)
            pick = timing.choose(coll, topology, int(nbytes), axes=axes)[0] if name == "auto" else name
            pairs = as_collective(coll).layout == "pairs"       # all-to-all: V over all ranks
            if buildable(coll, topology, pick, axes) or overhead:
                probe = build_named(coll, topology, pick, axes)
                size = probe.round_size(int(nbytes))
                per_rank = probe.round_size(max(1, size // probe.group_size)) if pairs else size
            else:       # timed by its closed form, which takes any size: nothing to round to
                n = group_for(coll, topology, axes)[0].n
                per_rank = max(1, int(nbytes) // n) if pairs else int(nbytes)
            e = estimate(coll, topology, per_rank, name, axes=axes, model="ideal", overhead=overhead)
        except CollectivesError as exc:
            rows.append({"collective": coll, "algorithm": None, "error": str(exc)})
            continue
        rows.append({"collective": coll, "algorithm": e.algorithm,
                     "reason": "chosen by the caller" if name != "auto" else e.reason,
                     "nbytes": e.nbytes * (e.group_size if pairs else 1), "rank_nbytes": e.nbytes,
                     "group_size": e.group_size, "steps": e.num_steps,
                     "time": e.time, "algbw": e.algbw, "busbw": e.busbw,
                     "bottleneck": e.bottleneck, "error": None})
    return rows


# ---------------------------------------------------------------------------
# every collective on a TPU slice, side by side
# ---------------------------------------------------------------------------

#: Columns of :func:`torus_summary`: one-axis schedules, then all axes at once.
SUMMARY_COLUMNS = ("ring", "bidirectional_ring", "chain", "all_axes")

_SUMMARY_FORMULAS = {
    ("all_gather", "ring"): "(N-1)/N · V/W",
    ("all_gather", "bidirectional_ring"): "⌈(N-1)/2⌉/N · V/W ≈ V/(2W)",
    ("all_gather", "chain"): "(N-1)/N · V/W ≈ V/W",
    ("all_gather", "all_axes"): "Σ_phases max_parts h·done/(D·N) · V/W ≈ n/(n-1) · V/(2DW)",
    ("all_to_all", "ring"): "(N-1)/(2N) · V/W ≈ V/(2W)",
    ("all_to_all", "bidirectional_ring"): "(m(m+1)/2 + N/4)/N² · V/W = V/(8W), N even",
    ("all_to_all", "chain"): "⌊N/2⌋⌈N/2⌉/N² · V/W ≈ V/(4W)",
    ("all_to_all", "all_axes"): "max_axes load(d)/(N·d) · V/W",
}


@dataclass(frozen=True)
class SummaryRow:
    """One cell of :func:`torus_summary`: a collective run one way on a torus.

    ``time`` is the simulator's throughput-bound time (latency set to 0) and
    ``closed_form`` the formula's; ``coefficient`` is ``time * W / V``, the
    number that multiplies ``V/W`` in ``formula``. When the schedule does not
    apply (a ring on an axis without wraparound) the times are None and
    ``note`` says why, in the library's words.
    """

    collective: str
    column: str
    algorithm: str
    axes: tuple[str, ...]
    num_ranks: int
    nbytes: int
    bandwidth: float
    time: float | None
    closed_form: float | None
    formula: str
    note: str = ""

    @property
    def coefficient(self) -> float | None:
        return None if self.time is None else self.time * self.bandwidth / self.nbytes


def _summary_axis(topo: Torus, axis) -> int:
    if axis is not None:
        return topo.resolve_axes(axis)[0]
    dims = topo.dims
    wrapped = [a for a in range(len(dims)) if topo.wraparound[a]]
    pool = wrapped or list(range(len(dims)))
    return max(pool, key=lambda a: (dims[a], -a))


def torus_summary(topology: Torus, size: int, *, axis=None) -> list[SummaryRow]:
    """Throughput-bound time of all-gather, reduce-scatter, all-reduce and
    all-to-all on a torus or TPU slice, run four ways: a one-way ring, a
    bidirectional ring and a chain along one axis (``axis``; default the
    longest axis with wraparound, else the longest), and over all axes at
    once (``multi_axis``; ``direct`` for all-to-all).

    ``size`` is V, the whole array of the collective's group (for all-to-all,
    the sum of every rank's buffer; pick a multiple of the group size): one line of ``axis``
    for the first three columns, the whole slice for the last. Each time is
    simulated on a copy of the topology without latency and checked against
    its closed form in :mod:`collectives_lib.costs`. Returns 16 rows,
    collective by collective, in :data:`SUMMARY_COLUMNS` order.

    Introduced in the chapter *All-to-all: a sharded transpose* (its summary
    of every TPU collective).
    """
    if not isinstance(topology, Torus):
        raise CollectivesError(f"torus_summary needs a torus or a TPU slice, got {topology!r}")
    size = int(size)
    if size <= 0:
        raise CollectivesError(f"size must be a positive number of bytes, got {size}")
    a = _summary_axis(topology, axis)
    W = topology.bandwidth
    flat = Torus(topology.dims, topology.wraparound, bandwidth=W, latency=0.0,
                 bidirectional=topology.bidirectional, link_class=topology.link_class)
    chain_flat = Torus(topology.dims, tuple(w and b != a for b, w in enumerate(topology.wraparound)),
                       bandwidth=W, latency=0.0, bidirectional=topology.bidirectional,
                       link_class=topology.link_class)
    try:
        kinds = [axis_kind(topology, b) for b in range(len(topology.dims))]
    except CollectivesError:          # one-way links without wraparound: nothing runs there
        kinds = None
    n = topology.dims[a]
    rows = []
    for coll in (c for c in Collective if not c.rooted):
        collective = coll.value
        # all-to-all's closed forms (a block per pair of ranks), else all-gather's, counted
        # once per pass (all-reduce: a reduce-scatter, then an all-gather)
        pairs = coll.layout == "pairs"
        base = "all_to_all" if pairs else "all_gather"
        factor = float(coll.passes)
        for column in SUMMARY_COLUMNS:
            formula = _SUMMARY_FORMULAS[(base, column)]
            if coll.passes > 1:
                formula = f"{coll.passes} × (" + formula + ")"
            if column == "all_axes":
                algorithm = "direct" if pairs else "multi_axis"
                axes, group = tuple(topology.axis_names), topology.num_ranks
            else:
                algorithm = column
                axes, group = (topology.axis_names[a],), n
            # a chain is the axis without its wraparound link: time it on such a copy, so
            # that routed messages (the chain all-to-all) cannot take the shortcut
            topo = chain_flat if column == "chain" else flat
            try:
                sched = build_named(collective, topo, algorithm, None if column == "all_axes" else axes[0])
                # the simulator takes nccl-tests' size: one rank's buffer for all-to-all
                res = simulate(sched, topo, size // group if coll.sized_per_rank else size)
                t, timed = res.time, res.timed_bytes     # the closed forms take the array it timed
            except CollectivesError as exc:
                rows.append(SummaryRow(collective, column, algorithm, axes, group, size, W, None, None,
                                       formula, str(exc)))
                continue
            if column == "all_axes":
                if pairs:
                    cf = costs.torus_all_to_all(topology.dims, kinds, timed, W)
                else:
                    cf = factor * costs.multi_axis_all_gather(topology.dims, kinds, timed, W)
            elif pairs:
                cf = {"ring": costs.ring_all_to_all, "chain": costs.chain_all_to_all,
                      "bidirectional_ring": costs.bidirectional_ring_all_to_all}[column](n, timed, W)
            else:
                cf = factor * {"ring": costs.ring_all_gather, "chain": costs.chain_all_gather,
                               "bidirectional_ring": costs.bidirectional_ring_all_gather}[column](n, timed, W)
            rows.append(SummaryRow(collective, column, algorithm, axes, group, size, W, t, cf, formula))
    return rows


# ---------------------------------------------------------------------------
# Algorithms side by side, as nccl-tests prints them
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Comparison:
    """Several algorithms of one collective timed at the same sizes in one model
    (made by :func:`compare`). ``str()`` prints the table the way nccl-tests'
    ``all_reduce_perf`` prints its out-of-place and in-place halves: the size
    columns once, then time, algbw and busbw per algorithm, and each
    algorithm's share of its lower bound."""

    collective: str
    topology: Topology
    model: str
    sizes: tuple[int, ...]
    rows: Mapping[str, tuple]          # label -> one Estimate per size

    @property
    def labels(self) -> list[str]:
        return list(self.rows)

    def __getitem__(self, label: str) -> tuple:
        return self.rows[label]

    def times(self, label: str) -> np.ndarray:
        return np.array([e.time for e in self.rows[label]])

    def fastest(self) -> list[str]:
        """The label with the least time at each size."""
        return [min(self.labels, key=lambda k: self.rows[k][i].time) for i in range(len(self.sizes))]

    def crossovers(self, a: str, b: str) -> float | None:
        """The size where ``a`` and ``b`` swap places (log-log interpolation), or None."""
        return crossover(np.array(self.sizes, dtype=float), self.times(a), self.times(b))

    def as_dict(self) -> dict:
        return {"collective": self.collective, "topology": repr(self.topology), "model": self.model,
                "sizes": list(self.sizes),
                "rows": {k: [e.as_dict() for e in v] for k, v in self.rows.items()}}

    def _block(self, labels: list[str], wide: bool, algbw: bool) -> list[str]:
        """One table of nccl-tests' columns for ``labels``: size (and, ``wide``, count and
        type), then per algorithm time, (``algbw``,) busbw and its share of the bound."""
        first = self.rows[labels[0]][0]
        esize = element_size(first.dtype)
        cols = [("time", "(us)", 9)] + ([("algbw", "(GB/s)", 7)] if algbw else []) + [
            ("busbw", "(GB/s)", 7), ("bound", "", 6)]
        span = sum(w + 1 for _, _, w in cols) - 1
        left = [("size", "(B)", 12)] + ([("count", "(elements)", 12), ("type", "", 8)] if wide else [])

        def head(pick):
            return ("# " + " ".join(f"{pick(c):>{c[2]}}" for c in left)[1:] + "".join(
                " " + " ".join(f"{pick(c):>{c[2]}}" for c in cols) for _ in labels)).rstrip()

        names = ("# " + " ".join(" " * w for _, _, w in left)[1:]
                 + "".join(f" {k[:span]:>{span}}" for k in labels)).rstrip()
        lines = [names, head(lambda c: c[0]), head(lambda c: c[1])]

        def rate(r):
            return "n/a" if r is None else f"{r / 1e9:.2f}"

        for i, size in enumerate(self.sizes):
            cells = [f"{size:>12d}"] + ([f"{size // esize:>12d}", f"{first.dtype:>8}"] if wide else [])
            for k in labels:
                e = self.rows[k][i]
                vals = [f"{e.time * 1e6:.2f}"] + ([rate(e.algbw)] if algbw else []) + [
                    rate(e.busbw), f"{e.efficiency:.0%}"]
                cells.append(" ".join(f"{v:>{w}}" for v, (_, _, w) in zip(vals, cols)))
            lines.append(" ".join(cells))
        return lines

    def __str__(self) -> str:
        """nccl-tests' table, no wider than the book's code box (88 characters): it drops
        the count and type columns (the title names the type), then algbw, and past that
        prints the algorithms in several blocks, each with its size column."""
        width = 88
        first = next(iter(self.rows.values()))[0]
        title = (f"# {self.collective} on {self.topology!r} ({self.topology.num_ranks} ranks"
                 + (f", groups of {first.group_size}" if first.num_groups > 1 else "")
                 + f"), {first.model_name}, {first.dtype}")
        labels = self.labels
        for wide, algbw in ((True, True), (False, True), (False, False)):
            block = self._block(labels, wide, algbw)
            if max(map(len, block)) <= width:
                blocks = [block]
                break
        else:
            per = max(1, (width - 12) // 25)     # size column, then 25 characters per algorithm
            blocks = [self._block(labels[i:i + per], False, False) for i in range(0, len(labels), per)]
        lines = textwrap.wrap(title, width, subsequent_indent="#   ", break_on_hyphens=False)
        for block in blocks:
            lines += ["#"] + block
        lines.append("# bound: the lower bound's share of the time (100%: the bound is reached)")
        return "\n".join(lines)


def compare(collective, topology: Topology, algorithms=None, sizes=None, *, model: str | None = None,
            axes=None, dtype: str = "float32", **options) -> Comparison:
    """Time ``algorithms`` (names, ``"auto"`` among them if wanted; default: every one
    the model accepts here) of ``collective`` at ``sizes`` (default: nccl-tests'
    8 B to 1 GiB, every 4x) in one model, each through :func:`collectives_lib.models.sweep`.

    Introduced in the chapter *A first look*; the chapters' comparison tables are these.
    """
    from .models import algorithms as accepted, model_for, sweep
    from .units import sweep_sizes
    coll = as_collective(collective)
    which = model_for(model, topology)
    if algorithms is None:
        algorithms = [k for k, why in accepted(coll, topology, axes, model=which, **options).items()
                      if why is None]
    if isinstance(algorithms, str):
        algorithms = [algorithms]
    if not algorithms:
        raise CollectivesError(f"compare needs at least one algorithm for {coll} on {topology!r}")
    sizes = tuple(sweep_sizes(8, 1 << 30, 4) if sizes is None else (int(s) for s in sizes))
    rows = {}
    for name in algorithms:
        rows[str(name)] = tuple(sweep(coll, topology, sizes, name, axes=axes, model=which, dtype=dtype,
                                      **options))
    return Comparison(coll.value, topology, which, sizes, rows)
