"""Scaling at the system level: Amdahl's limit, stragglers, ridge points, MoE traffic, pipelines,
flows hashed onto equal-cost paths.

Introduced in the chapters *Why communication decides scaling*, *Depth,
trees and the network roofline*, *Fabrics and scale-out realities* (ECMP) and
*Overlapping communication with compute on GPUs* (SMs taken by NCCL's channels).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import CollectivesError
from ..checks import check_num_ranks


@dataclass(frozen=True)
class Amdahl:
    """A training step of ``compute`` seconds plus ``sync`` seconds of communication,
    when only the compute gets ``chip_speedup`` times faster."""

    compute: float
    sync: float
    chip_speedup: float

    @property
    def step_time(self) -> float:
        return self.compute / self.chip_speedup + self.sync

    @property
    def speedup(self) -> float:
        return (self.compute + self.sync) / self.step_time

    @property
    def limit(self) -> float:
        """The speed-up an infinitely fast chip would give: (compute + sync) / sync."""
        return (self.compute + self.sync) / self.sync if self.sync > 0 else float("inf")


def amdahl(compute: float, sync: float, chip_speedup: float) -> Amdahl:
    if compute < 0 or sync < 0:
        raise CollectivesError("compute and sync times must be >= 0 seconds")
    if not chip_speedup > 0:
        raise CollectivesError(f"chip_speedup must be > 0, got {chip_speedup}")
    return Amdahl(float(compute), float(sync), float(chip_speedup))


def slowest_quantile(n: int) -> float:
    """Where the slowest of ``n`` independent participants typically lands.

    With latencies drawn i.i.d. from any continuous distribution F, the slowest
    of n has distribution F(x)^n; its median sits at the quantile
    ``q = 2^(-1/n)`` of F: 8 chips, about the 92nd percentile; 1000 chips,
    about the 99.93rd.
    """
    n = check_num_ranks(n, what="number of participants")
    return 0.5 ** (1.0 / n)


def sample_slowest(n: int, trials: int = 10_000, *, sigma: float = 0.25, median: float = 1.0,
                   seed: int = 0) -> np.ndarray:
    """Slowest of ``n`` lognormal step times, ``trials`` times (a seeded experiment)."""
    n = check_num_ranks(n, what="number of participants")
    trials = check_num_ranks(trials, what="number of trials")
    rng = np.random.default_rng(seed)
    draws = median * np.exp(sigma * rng.standard_normal((trials, n)))
    return draws.max(axis=1)


def empirical_quantile_of_median_max(n: int, trials: int = 20_000, *, sigma: float = 0.25,
                                     seed: int = 0) -> float:
    """Sample the median slowest of n, then ask which quantile of one chip's
    distribution it is; agrees with :func:`slowest_quantile` up to sampling noise."""
    slowest = sample_slowest(n, trials, sigma=sigma, seed=seed)
    m = float(np.median(slowest))
    rng = np.random.default_rng(seed + 1)
    single = np.exp(sigma * rng.standard_normal(200_000))
    return float((single <= m).mean())


def ridge_point(peak_flops: float, fabric_bandwidth: float) -> float:
    """FLOPs a step must do per byte it moves over the fabric to stay compute-bound.

    Either argument may be a number or a sourced ``hardware.Figure``.
    """
    fabric_bandwidth = float(fabric_bandwidth)
    if not fabric_bandwidth > 0:
        raise CollectivesError("fabric bandwidth must be > 0")
    return float(peak_flops) / fabric_bandwidth


def moe_traffic(num_ranks: int, tokens_per_rank: int, *, num_experts: int | None = None,
                top_k: int = 1, bytes_per_token: float = 1.0, skew: float = 0.0,
                seed: int = 0) -> np.ndarray:
    """Bytes each rank sends each rank when a mixture-of-experts layer routes tokens.

    Experts are placed round-robin (expert e lives on rank e mod N). Each token
    picks ``top_k`` distinct experts; expert e is chosen with probability
    proportional to ``(e + 1) ** -skew`` (0: uniform, larger: a few hot experts).
    A token goes once to every rank that hosts one of its experts. Returns an
    N x N matrix (origin, destination) including tokens that stay home on the
    diagonal; pass it as ``matrix=`` to the all-to-all builders (they move only
    the off-diagonal part).
    """
    n = check_num_ranks(num_ranks, what="number of ranks")
    e = check_num_ranks(num_experts or n, what="number of experts")
    if not 1 <= top_k <= e:
        raise CollectivesError(f"top_k must be between 1 and the number of experts ({e}), got {top_k}")
    if tokens_per_rank < 0 or bytes_per_token < 0 or skew < 0:
        raise CollectivesError("tokens_per_rank, bytes_per_token and skew must be >= 0")
    rng = np.random.default_rng(seed)
    weights = (np.arange(e) + 1.0) ** -float(skew)
    weights /= weights.sum()
    host = np.arange(e) % n
    out = np.zeros((n, n))
    tokens = int(tokens_per_rank)
    for origin in range(n):
        if tokens == 0:
            continue
        # top-k distinct experts per token (Gumbel top-k = sampling without replacement)
        keys = np.log(weights)[None, :] + rng.gumbel(size=(tokens, e))
        chosen = np.argpartition(-keys, top_k - 1, axis=1)[:, :top_k]
        dest = np.zeros((tokens, n), dtype=bool)
        dest[np.repeat(np.arange(tokens), top_k), host[chosen].ravel()] = True
        out[origin] = dest.sum(axis=0) * bytes_per_token
    return out


# ---------------------------------------------------------------------------
# Stragglers in closed form, hop counts, a slowed rank, pipeline bubbles.
# Introduced in the chapter *Why communication decides scaling*.
# ---------------------------------------------------------------------------

def _check_lognormal(sigma: float, median: float) -> None:
    if not sigma > 0:
        raise CollectivesError(f"sigma (the spread of log step time) must be > 0, got {sigma}")
    if not median > 0:
        raise CollectivesError(f"median step time must be > 0, got {median}")


def slowest_cdf(n: int, x, *, sigma: float = 0.25, median: float = 1.0) -> np.ndarray:
    """P(slowest of ``n`` <= x) = F(x)^n, for the lognormal step times of
    :func:`sample_slowest` (``median * exp(sigma * Z)``).

    Introduced in the chapter *Why communication decides scaling*.
    """
    import math
    n = check_num_ranks(n, what="number of participants")
    _check_lognormal(sigma, median)
    x = np.asarray(x, dtype=float)
    z = np.log(np.maximum(x, 1e-300) / median) / sigma
    upper = 0.5 * np.vectorize(math.erfc, otypes=[float])(z / math.sqrt(2.0))  # 1 - F(x), accurate in the tail
    with np.errstate(divide="ignore"):
        out = np.exp(n * np.log1p(-np.minimum(upper, 1.0)))
    return np.where(x > 0, out, 0.0)


def slowest_pdf(n: int, x, *, sigma: float = 0.25, median: float = 1.0) -> np.ndarray:
    """Density of the slowest of ``n`` lognormal step times: ``n F(x)^(n-1) f(x)``.

    Introduced in the chapter *Why communication decides scaling*.
    """
    import math
    n = check_num_ranks(n, what="number of participants")
    _check_lognormal(sigma, median)
    x = np.asarray(x, dtype=float)
    safe = np.maximum(x, 1e-300)
    z = np.log(safe / median) / sigma
    f = np.exp(-0.5 * z * z) / (math.sqrt(2 * math.pi) * sigma * safe)
    upper = 0.5 * np.vectorize(math.erfc, otypes=[float])(z / math.sqrt(2.0))
    if n == 1:
        head = np.ones_like(upper)
    else:
        with np.errstate(divide="ignore"):
            head = np.exp((n - 1) * np.log1p(-np.minimum(upper, 1.0)))
    return np.where(x > 0, n * head * f, 0.0)


def slowest_median(n: int, *, sigma: float = 0.25, median: float = 1.0) -> float:
    """Median of the slowest of ``n`` lognormal step times: the single-chip
    quantile :func:`slowest_quantile` (``2^(-1/n)``) of ``median * exp(sigma Z)``.

    Introduced in the chapter *Why communication decides scaling*.
    """
    from statistics import NormalDist
    _check_lognormal(sigma, median)
    q = slowest_quantile(n)
    if q >= 1.0:  # beyond double precision (n ~ 1e16); never reached in the book
        raise CollectivesError(f"n = {n} is too large for double precision")
    return float(median * np.exp(sigma * NormalDist().inv_cdf(q)))


def hop_counts(topology, src: int = 0) -> np.ndarray:
    """Links crossed on the route from endpoint ``src`` to every other endpoint
    (in rank order, ``src`` left out). Where a torus splits a flow between two
    equally short directions, both halves have the same length.

    Introduced in the chapter *Why communication decides scaling*.
    """
    n = topology.num_ranks
    src = int(src)
    if not 0 <= src < n:
        raise CollectivesError(f"src must be an endpoint 0..{n - 1} of {topology!r}, got {src}")
    if n == 1:
        return np.zeros(0)
    dst = np.array([d for d in range(n) if d != src], dtype=np.int64)
    r = topology.routes(np.full(len(dst), src, dtype=np.int64), dst)
    per_sub = np.bincount(r.inc_sub, minlength=len(r.sub_flow)).astype(float)
    return np.bincount(r.sub_flow, weights=per_sub * r.sub_weight, minlength=len(dst))


def slowed(topology, slowdown):
    """A copy of ``topology`` in which every link into or out of each rank in
    ``slowdown`` (a mapping rank -> factor) carries ``1 / factor`` of its
    bandwidth: a straggler whose transfers take ``factor`` times longer.
    Latencies are unchanged. The original is not modified.

    Introduced in the chapter *Why communication decides scaling*.
    """
    import copy

    from ..topology import Links

    factors = np.ones(topology.num_vertices)
    for rank, factor in dict(slowdown).items():
        if isinstance(rank, bool) or not isinstance(rank, (int, np.integer)) or not 0 <= rank < topology.num_ranks:
            raise CollectivesError(f"slowdown names rank {rank!r}, but {topology!r} has ranks "
                                   f"0..{topology.num_ranks - 1}")
        factor = float(factor)
        if not (np.isfinite(factor) and factor >= 1.0):
            raise CollectivesError(f"a slow-down factor must be a number >= 1 (1: full speed), "
                                   f"got {factor} for rank {rank}")
        factors[int(rank)] = factor
    links = topology.links
    per_link = np.maximum(factors[links.src], factors[links.dst])
    out = copy.copy(topology)
    out.__dict__["slowdown"] = tuple(sorted((int(r), float(f)) for r, f in dict(slowdown).items()))
    out.__dict__["links"] = Links(links.src, links.dst, links.bandwidth / per_link,
                                  links.latency, links.klass)
    return out


@dataclass(frozen=True)
class RankTimeline:
    """Per-step, per-rank timing of a bulk-synchronous schedule (see :func:`rank_timeline`).

    ``busy[k, r]`` is how long rank r's own transfers (sent or received) take in
    step k; ``step_times[k]`` the step's length (its slowest transfer);
    ``start[k]`` when it begins. ``wait = step_times[:, None] - busy`` is what
    each rank spends waiting for the others.
    """

    busy: np.ndarray
    step_times: np.ndarray
    start: np.ndarray

    @property
    def total(self) -> float:
        return float(self.step_times.sum())

    @property
    def wait(self) -> np.ndarray:
        return self.step_times[:, None] - self.busy


def rank_timeline(schedule, topology, nbytes: float, slowdown=None) -> RankTimeline:
    """Who is busy and who waits, step by step, when a schedule runs on a topology.

    Each transfer takes what the simulator charges it (latencies along its
    route plus the load of its busiest link over that link's bandwidth); a
    step ends when its slowest transfer does. ``slowdown`` ({rank: factor})
    slows the links of straggler ranks first (:func:`slowed`). The step times
    equal :func:`~collectives_lib.simulate.simulate`'s ``step_times``.

    Introduced in the chapter *Why communication decides scaling*.
    """
    from ..simulate import participant_nodes

    topo = slowed(topology, slowdown) if slowdown else topology
    nodes = participant_nodes(schedule, topo, None)
    links = topo.links
    P = schedule.num_ranks
    busy = np.zeros((schedule.num_steps, P))
    for k, step in enumerate(schedule.steps):
        t = step.traffic
        if t.path is not None and (np.asarray(t.path) >= 0).any():
            raise CollectivesError("rank_timeline handles routed schedules only (no explicit paths)")
        keep = t.fraction > 0
        src_p, dst_p, frac = t.src[keep], t.dst[keep], t.fraction[keep] * float(nbytes)
        if not len(frac):
            continue
        r = topo.routes(nodes[src_p], nodes[dst_p])
        load = np.bincount(r.inc_link, weights=(frac[r.sub_flow] * r.sub_weight)[r.inc_sub],
                           minlength=len(links))
        drain = np.zeros(len(r.sub_flow))
        np.maximum.at(drain, r.inc_sub, load[r.inc_link] / links.bandwidth[r.inc_link])
        lat = np.bincount(r.inc_sub, weights=links.latency[r.inc_link], minlength=len(r.sub_flow))
        flow_time = np.zeros(len(frac))
        np.maximum.at(flow_time, r.sub_flow, lat + drain)
        for ends in (src_p, dst_p):
            ranks = ends < P
            np.maximum.at(busy[k], ends[ranks], flow_time[ranks])
        # transfers to or from an agent (a switch that reduces) count for their rank end only
    step_times = busy.max(axis=1) if P else np.zeros(schedule.num_steps)
    start = np.concatenate([[0.0], np.cumsum(step_times)[:-1]])
    return RankTimeline(busy=busy, step_times=step_times, start=start)


#: Most flows :func:`ecmp_max_load` enumerates (the integer partitions of 40 number 37,338).
MAX_ECMP_FLOWS = 40


def _check_ecmp(flows, paths) -> tuple[int, int]:
    k = check_num_ranks(flows, what="number of flows")
    m = check_num_ranks(paths, what="number of equal-cost paths")
    if k > MAX_ECMP_FLOWS:
        raise CollectivesError(f"ecmp_max_load enumerates every way {k} flows can share the paths; "
                               f"give at most {MAX_ECMP_FLOWS} flows")
    return k, m


def _partitions(k: int, largest: int, parts: int):
    """The partitions of k into at most ``parts`` parts, none above ``largest``, largest first."""
    if k == 0:
        yield ()
        return
    if parts == 0:
        return
    for first in range(min(k, largest), 0, -1):
        for rest in _partitions(k - first, first, parts - 1):
            yield (first,) + rest


def ecmp_max_load(flows: int, paths: int) -> dict[int, float]:
    """How many flows the busiest path carries when each of ``flows`` flows is hashed
    onto one of ``paths`` equal-cost paths, uniformly and independently (static ECMP):
    ``{k: probability that the busiest path carries k flows}``.

    Exact: every occupancy pattern (a partition of the flows into at most ``paths``
    parts) counted with its number of assignments, ``paths! / (paths - r)! / prod(mult!)``
    ways to place its r parts on paths times the multinomial ``flows! / prod(part!)``,
    over the ``paths ** flows`` equally likely assignments.

    >>> ecmp_max_load(2, 2)
    {1: 0.5, 2: 0.5}

    Introduced in the chapter *Fabrics and scale-out realities*.
    """
    from collections import Counter
    from math import factorial, perm, prod

    k, m = _check_ecmp(flows, paths)
    counts: dict[int, int] = {}
    for parts in _partitions(k, k, m):
        ways = perm(m, len(parts)) // prod(factorial(c) for c in Counter(parts).values())
        ways *= factorial(k) // prod(factorial(p) for p in parts)
        counts[parts[0]] = counts.get(parts[0], 0) + ways
    total = m ** k
    return {load: counts[load] / total for load in sorted(counts)}


def ecmp_collision_probability(flows: int, paths: int) -> float:
    """The probability that two or more of ``flows`` hashed flows share one of ``paths``
    paths: ``1 - paths! / ((paths - flows)! paths**flows)`` (the birthday problem), 1 when
    there are more flows than paths.

    Introduced in the chapter *Fabrics and scale-out realities*.
    """
    from math import perm

    k = check_num_ranks(flows, what="number of flows")
    m = check_num_ranks(paths, what="number of equal-cost paths")
    return 1.0 if k > m else 1.0 - perm(m, k) / m ** k


def pipeline_bubble_fraction(stages: int, microbatches: int) -> float:
    """Share of a pipeline-parallel step that each stage sits idle:
    ``(p - 1) / (m + p - 1)`` for ``p`` stages and ``m`` micro-batches
    (GPipe and 1F1B alike, whatever the forward and backward times).

    Introduced in the chapter *Why communication decides scaling*.
    """
    p = check_num_ranks(stages, what="number of pipeline stages")
    m = check_num_ranks(microbatches, what="number of micro-batches")
    return (p - 1) / (m + p - 1)


@dataclass(frozen=True)
class PipelineTask:
    """One forward or backward pass of one micro-batch on one pipeline stage."""

    stage: int
    microbatch: int
    phase: str      # "forward" or "backward"
    start: float
    end: float


def gpipe_schedule(stages: int, microbatches: int, *, forward: float = 1.0,
                   backward: float = 2.0) -> list[PipelineTask]:
    """The GPipe schedule: every micro-batch's forward pass flows down the
    stages, then the backward passes flow back up in reverse order. Times are
    in units of ``forward`` and ``backward`` (one micro-batch on one stage).

    The step lasts ``(m + p - 1)(forward + backward)`` and each stage is busy
    ``m (forward + backward)`` of it, so the idle share is
    :func:`pipeline_bubble_fraction`.

    Introduced in the chapter *Why communication decides scaling*.
    """
    p = check_num_ranks(stages, what="number of pipeline stages")
    m = check_num_ranks(microbatches, what="number of micro-batches")
    if not (forward > 0 and backward > 0):
        raise CollectivesError("forward and backward times must be > 0")
    tasks = [PipelineTask(s, j, "forward", (s + j) * forward, (s + j + 1) * forward)
             for s in range(p) for j in range(m)]
    t0 = (m + p - 1) * forward
    tasks += [PipelineTask(s, j, "backward", t0 + ((p - 1 - s) + (m - 1 - j)) * backward,
                           t0 + ((p - 1 - s) + (m - j)) * backward)
              for s in range(p) for j in range(m)]
    return sorted(tasks, key=lambda t: (t.start, t.stage))


# ---------------------------------------------------------------------------
# Overlap: a collective's CTAs take SMs from the compute beside it
# ---------------------------------------------------------------------------

#: Streaming multiprocessors per GPU (NVIDIA's datasheets and architecture whitepapers).


def sm_count(gpu: str) -> int:
    """The SMs of ``gpu`` (a name as :func:`collectives_lib.hardware.gpu_system` gives it)."""
    from ..hardware import SM_COUNT      # each count with its source
    if gpu not in SM_COUNT:
        raise CollectivesError(f"no SM count for GPU {gpu!r}; known: {', '.join(SM_COUNT)}")
    return int(SM_COUNT[gpu])


def sm_slowdown(ctas: int, sms: int) -> float:
    """How much longer SM-bound compute takes while ``ctas`` of the GPU's ``sms`` SMs
    run a collective (one CTA per SM): ``sms / (sms - ctas)``. The book's model:
    it ignores the HBM bandwidth and L2 the two kernels also share."""
    if not (isinstance(sms, (int, np.integer)) and sms >= 1):
        raise CollectivesError(f"sms must be a whole number of SMs >= 1, got {sms!r}")
    if not (isinstance(ctas, (int, np.integer)) and 0 <= ctas < sms):
        raise CollectivesError(f"ctas must be a whole number from 0 to {sms - 1} (fewer than the "
                               f"GPU's {sms} SMs), got {ctas!r}")
    return sms / (sms - ctas)


@dataclass(frozen=True)
class OverlapStep:
    """A step of ``compute`` seconds beside a collective of ``comm`` seconds."""

    compute: float
    comm: float
    slowdown: float               # compute runs this much slower while the collective runs
    comm_bound: float             # the collective's lower bound

    @property
    def serial(self) -> float:
        """Compute, then the collective: no overlap."""
        return self.compute + self.comm

    @property
    def overlapped(self) -> float:
        """Both at once from the start: the compute done during the collective runs
        at ``1 / slowdown`` of its speed; the rest at full speed."""
        if self.comm >= self.compute * self.slowdown:
            return self.comm
        return self.compute + self.comm * (1 - 1 / self.slowdown)

    @property
    def compute_end(self) -> float:
        """When the compute ends, overlapped: slowed throughout if the collective outlasts it."""
        return min(self.overlapped, self.compute * self.slowdown)

    @property
    def bound(self) -> float:
        """No step is shorter than its compute alone or its collective's lower bound."""
        return max(self.compute, self.comm_bound)

    @property
    def exposed(self) -> float:
        """What the collective adds to the compute alone when overlapped."""
        return self.overlapped - self.compute


def overlap_step(compute: float, comm: float, slowdown: float = 1.0, comm_bound: float = 0.0) -> OverlapStep:
    """:class:`OverlapStep` of ``compute`` and ``comm`` seconds, checked."""
    for name, v in (("compute", compute), ("comm", comm), ("comm_bound", comm_bound)):
        if not (isinstance(v, (int, float, np.integer, np.floating)) and np.isfinite(v) and v >= 0):
            raise CollectivesError(f"{name} must be a time >= 0 s, got {v!r}")
    if not (isinstance(slowdown, (int, float, np.integer, np.floating)) and np.isfinite(slowdown)
            and slowdown >= 1):
        raise CollectivesError(f"slowdown must be a factor >= 1, got {slowdown!r}")
    if comm_bound > comm * (1 + 1e-9):
        raise CollectivesError(f"comm_bound ({comm_bound!r} s) cannot exceed comm ({comm!r} s)")
    return OverlapStep(float(compute), float(comm), float(slowdown), float(comm_bound))
