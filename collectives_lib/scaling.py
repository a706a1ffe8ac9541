"""Scaling at the system level: Amdahl's limit, stragglers, crossovers, ridge points.

Introduced in the chapters *Why communication decides scaling* and *Depth,
trees and the network roofline*.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import CollectivesError, check_num_ranks


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


def crossover(sizes: np.ndarray, times_a: np.ndarray, times_b: np.ndarray) -> float | None:
    """The size where algorithm a stops being faster than b (or the other way),
    interpolated on log-log axes; None if they never cross in ``sizes``."""
    sizes = np.asarray(sizes, dtype=float)
    d = np.log(np.asarray(times_a, dtype=float)) - np.log(np.asarray(times_b, dtype=float))
    sign = np.sign(d)
    idx = np.nonzero(sign[:-1] * sign[1:] < 0)[0]
    if not len(idx):
        return None
    i = int(idx[0])
    x0, x1 = np.log(sizes[i]), np.log(sizes[i + 1])
    t = d[i] / (d[i] - d[i + 1])
    return float(np.exp(x0 + t * (x1 - x0)))


def algorithm_crossover(topology, collective: str, algorithm_a: str, algorithm_b: str, *,
                        axes=None, lo: float = 8, hi: float = 1e11, points: int = 400) -> float | None:
    """Size at which two algorithms of a collective take equal time on a topology."""
    from .collectives import build
    from .simulate import simulate_sizes
    a = build(collective, topology, algorithm_a, axes=axes)
    b = build(collective, topology, algorithm_b, axes=axes)
    sizes = np.geomspace(lo, hi, points)
    return crossover(sizes, simulate_sizes(a, topology, sizes), simulate_sizes(b, topology, sizes))


def ridge_point(peak_flops: float, fabric_bandwidth: float) -> float:
    """FLOPs a step must do per byte it moves over the fabric to stay compute-bound."""
    if not fabric_bandwidth > 0:
        raise CollectivesError("fabric bandwidth must be > 0")
    return float(peak_flops) / float(fabric_bandwidth)


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
