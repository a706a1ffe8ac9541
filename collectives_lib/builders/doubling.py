"""Recursive doubling and halving, and Rabenseifner's all-reduce.

In round ``k`` of recursive doubling, partners ``2^k`` apart (rank ``r`` and
``r XOR 2^k``) swap what they hold; after ``log2 N`` rounds every rank holds
everything. Recursive halving is the same pattern reversed with reductions.
Rabenseifner's all-reduce is halving then doubling: tree-like latency with the
ring's bandwidth. All need a power-of-two number of ranks, and route through
the network (the partners are not neighbours).

Introduced in the chapter *All-reduce, step by step* (its exercises).
"""

from __future__ import annotations

import math

import numpy as np

from .. import costs
from ..errors import check_power_of_two
from ..schedule import COPY, REDUCE, Schedule, Step, Traffic, boxes_array, concat, dual
from ..topology import Switch
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


def _on_switch(formula):
    """A closed form that holds on a non-blocking switch (each round one flow per link)."""
    def cost(group: Group, nbytes: float) -> float | None:
        if not isinstance(group.topology, Switch):
            return None
        W, alpha = group.link()
        return formula(group.n, nbytes, W, alpha)
    return cost


register("recursive_doubling", "all_gather", applies=power_of_two("recursive_doubling"),
         description="log2(N) rounds of pairwise exchange (power-of-two N)",
         cost=_on_switch(costs.recursive_doubling_all_gather)
         )(lambda g: recursive_doubling_all_gather(g.n))

register("recursive_halving", "reduce_scatter", applies=power_of_two("recursive_halving"),
         description="log2(N) rounds of pairwise exchange, halving (power-of-two N)",
         cost=_on_switch(costs.recursive_doubling_all_gather)
         )(lambda g: recursive_halving_reduce_scatter(g.n))

register("recursive_doubling", "all_reduce", applies=power_of_two("recursive_doubling"),
         description="log2(N) rounds of pairwise exchange (power-of-two N)",
         cost=_on_switch(costs.recursive_doubling_all_reduce)
         )(lambda g: recursive_doubling_all_reduce(g.n))

register("rabenseifner", "all_reduce", applies=power_of_two("rabenseifner"),
         description="recursive halving reduce-scatter + recursive doubling all-gather",
         cost=_on_switch(costs.rabenseifner_all_reduce)
         )(lambda g: rabenseifner_all_reduce(g.n))
