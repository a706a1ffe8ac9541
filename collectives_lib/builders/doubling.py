"""Recursive doubling and halving, Rabenseifner's all-reduce, and NCCL's PAT.

In round ``k`` of recursive doubling, partners ``2^k`` apart (rank ``r`` and
``r XOR 2^k``) swap what they hold; after ``log2 N`` rounds every rank holds
everything. Recursive halving is the same pattern reversed with reductions.
Rabenseifner's all-reduce is halving then doubling: tree-like latency with the
ring's bandwidth. All need a power-of-two number of ranks, and route through
the network (the partners are not neighbours).

PAT (Parallel Aggregated Trees, NCCL's all-gather and reduce-scatter for one GPU
per node) is Bruck's algorithm with the dimensions reversed: the longest
distance first, when each rank forwards only its own block, and the shortest
last; ``ceil(log2 N)`` network steps for any N.

Introduced in the chapter *All-reduce, step by step* (its exercises).
"""

from __future__ import annotations

import math

import numpy as np

from .. import costs
from ..errors import check_power_of_two
from ..schedule import COPY, REDUCE, Schedule, Step, Traffic, boxes_array, concat, dual
from ..topology import GpuCluster, Switch
from .registry import Group, power_of_two, register


def recursive_doubling_all_gather(n: int) -> Schedule:
    """log2(N) steps; at step k partners 2^k apart swap everything they hold."""
    check_power_of_two(n, "recursive doubling all-gather")
    r = np.arange(n)
    steps = []
    for k in range(int(math.log2(n)) if n > 1 else 0):
        size = 1 << k
        traffic = Traffic.make(r, r ^ size, COPY, size / n)
        steps.append(Step(traffic, boxes_array([((r >> k) << k, size)], n), "all-gather"))
    return Schedule.local("all_gather", "recursive_doubling", n, (n,), steps, routing="routed",
                          description="recursive doubling: log2(N) rounds; partners 1, 2, 4, ... "
                                      "apart swap all they hold, doubling it")


def recursive_halving_reduce_scatter(n: int) -> Schedule:
    """Recursive doubling reversed: log2(N) rounds, halving the data each round."""
    return dual(recursive_doubling_all_gather(n), algorithm="recursive_halving")


def recursive_doubling_all_reduce(n: int) -> Schedule:
    """log2(N) steps; partners 2^k apart swap and add their whole arrays."""
    check_power_of_two(n, "recursive doubling all-reduce")
    r = np.arange(n)
    steps = []
    full = boxes_array([(0, n)], n)
    for k in range(int(math.log2(n)) if n > 1 else 0):
        steps.append(Step(Traffic.make(r, r ^ (1 << k), REDUCE, 1.0), full, "all-reduce"))
    return Schedule.local("all_reduce", "recursive_doubling", n, (n,), steps, routing="routed",
                          description="recursive doubling: log2(N) rounds, each an exchange of "
                                      "the whole array with a partner 1, 2, 4, ... away")


def rabenseifner_all_reduce(n: int) -> Schedule:
    """Recursive-halving reduce-scatter, then recursive-doubling all-gather."""
    check_power_of_two(n, "Rabenseifner all-reduce")
    ag = recursive_doubling_all_gather(n)
    return concat(dual(ag, algorithm="recursive_halving"), ag, collective="all_reduce",
                  algorithm="rabenseifner",
                  description="Rabenseifner: recursive halving reduce-scatter, then "
                              "recursive doubling all-gather: log2(N) rounds each, "
                              "bandwidth-optimal")


def pat_all_gather(n: int) -> Schedule:
    """PAT all-gather, fully aggregated (what NCCL runs for small sizes).

    A block has to travel from its owner ``o`` to every rank ``o - s``,
    ``s = 1 .. N-1``; PAT sends it along the bits of ``s`` from the highest down:
    in the step of bit ``d`` (``d = ceil(log2 N) - 1, ..., 0``) every rank ``r``
    sends rank ``r - 2^d`` the blocks of ranks ``r + j 2^(d+1)`` it holds (its own,
    ``j = 0``, and those received in earlier steps) for which ``j 2^(d+1) + 2^d < N``.
    The first step sends one block the farthest; the last ``floor(N/2)`` blocks to
    the nearest neighbour. Every offset ``s`` is delivered once, in the step of its
    lowest set bit, so a rank sends ``N - 1`` blocks in all: ``ceil(log2 N)`` steps at
    the bandwidth bound, for any N (the ranks beyond N of NCCL's next power of two
    are skipped). A step's blocks to one peer are one message, listed block by block.
    (S. Jeaugey, "PAT: a new algorithm for all-gather and reduce-scatter operations
    at scale", arXiv:2506.20252; NCCL's ``PatAGAlgorithm``.)
    """
    r = np.arange(n)
    steps = []
    for d in range(max(n - 1, 0).bit_length() - 1, -1, -1):
        offsets = np.arange(0, n - (1 << d), 1 << (d + 1))          # j 2^(d+1), + 2^d < n
        src = np.repeat(r, len(offsets))
        dst = (src - (1 << d)) % n
        blocks = (src + np.tile(offsets, n)) % n
        steps.append(Step(Traffic.make(src, dst, COPY, 1.0 / n), boxes_array([(blocks, 1)], len(src)),
                          f"distance {1 << d}"))
    return Schedule.local("all_gather", "pat", n, (n,), steps, routing="routed",
                          description="PAT: Bruck's all-gather with the dimensions reversed; the "
                                      "farthest peer first, with one block, the nearest last, "
                                      "with half of them; ceil(log2 N) steps")


def _pat_reason(group: Group) -> str | None:
    topo = group.topology
    if topo is None:
        return None
    if isinstance(topo, GpuCluster) and (group.axes == (0,) or topo.gpus_per_node == 1):
        return None
    return ("pat is NCCL's algorithm for one GPU per node: a group over axes=node of a GPU "
            f"cluster (NCCL enables it only when every rank is on its own node); {topo!r}"
            + (" over these axes" if isinstance(topo, GpuCluster) else "") + " is not one")


def _pat_cost(group: Group, nbytes: float) -> float | None:
    """One GPU per node on its rail inside one Scalable Unit: every step one message
    per NIC each way, over two links (GPU -> leaf -> GPU)."""
    topo = group.topology
    if not isinstance(topo, GpuCluster) or topo.num_nodes > topo.nodes_per_su:
        return None
    return costs.pat_all_gather(group.n, nbytes, topo.nic_bandwidth, 2 * topo.nic_latency)


def _on_switch(formula):
    """A closed form that holds on a non-blocking switch (each round one flow per link)."""
    def cost(group: Group, nbytes: float) -> float | None:
        if not isinstance(group.topology, Switch):
            return None
        W, alpha = group.link()
        return formula(group.n, nbytes, W, alpha)
    return cost


def _pairwise(phases: int):
    """log2(N) rounds in which every rank sends once, ``phases`` times over: N log2 N
    transfers a phase, each round's different."""
    def size(g: Group) -> tuple[int, int]:
        rounds = max(g.n - 1, 0).bit_length()
        return phases * g.n * rounds, phases * rounds
    return size


register("recursive_doubling", "all_gather", applies=power_of_two("recursive_doubling"), size=_pairwise(1),
         description="log2(N) rounds of pairwise exchange (power-of-two N)",
         cost=_on_switch(costs.recursive_doubling_all_gather)
         )(lambda g: recursive_doubling_all_gather(g.n))

register("recursive_halving", "reduce_scatter", applies=power_of_two("recursive_halving"), size=_pairwise(1),
         description="log2(N) rounds of pairwise exchange, halving (power-of-two N)",
         cost=_on_switch(costs.recursive_doubling_all_gather)
         )(lambda g: recursive_halving_reduce_scatter(g.n))

register("pat", "all_gather", applies=_pat_reason, cost=_pat_cost, nccl="PAT",
         description="PAT: Bruck with the dimensions reversed, ceil(log2 N) steps (one GPU per node)"
         )(lambda g: pat_all_gather(g.n))

register("pat", "reduce_scatter", applies=_pat_reason, cost=_pat_cost, nccl="PAT",
         description="PAT reversed, reducing: the nearest peer first, with half the blocks; ceil(log2 N) "
                     "steps (one GPU per node)"
         )(lambda g: dual(pat_all_gather(g.n)))

register("recursive_doubling", "all_reduce", applies=power_of_two("recursive_doubling"), size=_pairwise(1),
         description="log2(N) rounds of pairwise exchange (power-of-two N)",
         cost=_on_switch(costs.recursive_doubling_all_reduce)
         )(lambda g: recursive_doubling_all_reduce(g.n))

register("rabenseifner", "all_reduce", applies=power_of_two("rabenseifner"), size=_pairwise(2),
         description="recursive halving reduce-scatter + recursive doubling all-gather",
         cost=_on_switch(costs.rabenseifner_all_reduce)
         )(lambda g: rabenseifner_all_reduce(g.n))
