"""Trees and pipelines: binomial trees, the tree all-reduce, and pipelined chains
for broadcast and reduce.

A binomial tree doubles the set of ranks that hold the data every round, so a
broadcast takes ``ceil(log2 N)`` rounds of the whole array; its dual reduces
up the same tree. The seed's tree all-reduce is a binomial reduce to rank 0
then a binomial broadcast back: few steps, but the whole array in every one.
A pipelined chain cuts the array into chunks that stream down a line of ranks:
``N - 2 + chunks`` steps of ``V / chunks``.

Introduced in the chapter *Depth, trees and the network roofline*.
"""

from __future__ import annotations

import numpy as np

from .. import costs
from ..errors import CollectivesError
from ..schedule import COPY, Schedule, Step, Traffic, boxes_array, dual
from ..topology import Switch
from .registry import Group, register


def binomial_broadcast(n: int, root: int = 0, chunks: int = 1) -> Schedule:
    """Binomial tree: in round k every rank that has the data sends it 2^k ranks on."""
    steps = []
    rel = np.arange(n)
    k = 0
    while (1 << k) < n:
        size = 1 << k
        have = rel[rel < size]
        send = have[have + size < n]
        src = (send + root) % n
        dst = (send + size + root) % n
        steps.append(Step(Traffic.make(src, dst, COPY, 1.0),
                          boxes_array([(0, chunks)], len(src)), "broadcast"))
        k += 1
    return Schedule.local("broadcast", "binomial_tree", n, (chunks,), steps, routing="routed",
                          root=root, description="binomial tree: the set of ranks holding "
                                                 "the data doubles every round, log2(N) rounds")


def binomial_tree_all_reduce(n: int) -> Schedule:
    """Binomial-tree reduce to rank 0, then binomial-tree broadcast back."""
    bc = binomial_broadcast(n, 0)
    red = dual(bc)
    steps = []
    for s in red.steps + bc.steps:
        steps.append(Step(s.traffic, boxes_array([(0, n)], len(s.traffic)), s.stage))
    return Schedule.local("all_reduce", "tree", n, (n,), steps, routing="routed",
                          description="tree: reduce up a binomial tree to rank 0 (log2 N "
                                      "rounds), then broadcast back down (log2 N rounds)")


def chain_broadcast(n: int, root: int = 0, chunks: int = 8) -> Schedule:
    """Pipelined chain from the root: chunk c leaves rank i at step c + i."""
    order = (np.arange(n) + root) % n
    steps = []
    for k in range(chunks + n - 2 if n > 1 else 0):
        pos = np.arange(n - 1)
        c = k - pos
        ok = (c >= 0) & (c < chunks)
        pos, c = pos[ok], c[ok]
        steps.append(Step(Traffic.make(order[pos], order[pos + 1], COPY, 1.0 / chunks),
                          boxes_array([(c, 1)], len(pos)), "broadcast"))
    return Schedule.local("broadcast", "chain", n, (chunks,), steps, routing="routed", root=root,
                          description=f"pipelined chain: the array in {chunks} chunks streams "
                                      f"down the line, N - 2 + {chunks} steps")


def _on_switch(formula):
    def cost(group: Group, nbytes: float) -> float | None:
        if not isinstance(group.topology, Switch):
            return None
        W, alpha = group.link()
        return formula(group, nbytes, W, alpha)
    return cost


def _chunks(group: Group) -> int:
    chunks = group.options.get("chunks", 8)
    if isinstance(chunks, bool) or not isinstance(chunks, (int, np.integer)) or chunks < 1:
        raise CollectivesError(f"chunks must be a whole number >= 1, got {chunks!r}")
    return int(chunks)


def _one_axis(group: Group) -> str | None:
    if group.on_torus_axes:
        return "the pipelined chain runs along one axis: pass axes=x (--axes x)"
    return None


_binomial_cost = _on_switch(lambda g, V, W, a: costs.binomial_tree_broadcast(g.n, V, W, a))
_chain_cost = _on_switch(lambda g, V, W, a: costs.pipelined_chain_broadcast(g.n, V, W, a, _chunks(g)))

register("tree", "all_reduce", description="binomial tree reduce, then binomial tree broadcast",
         cost=_on_switch(lambda g, V, W, a: costs.tree_all_reduce(g.n, V, W, a))
         )(lambda g: binomial_tree_all_reduce(g.n))
register("binomial_tree", "broadcast", description="binomial tree, log2(N) rounds",
         cost=_binomial_cost)(lambda g: binomial_broadcast(g.n, g.root))
register("binomial_tree", "reduce", description="binomial tree, log2(N) rounds",
         cost=_binomial_cost)(lambda g: dual(binomial_broadcast(g.n, g.root)))
register("chain", "broadcast", applies=_one_axis, cost=_chain_cost,
         description="pipelined chain: the array streams down the line in chunks"
         )(lambda g: chain_broadcast(g.n, g.root, _chunks(g)))
register("chain", "reduce", applies=_one_axis, cost=_chain_cost,
         description="pipelined chain: partial sums stream up the line in chunks"
         )(lambda g: dual(chain_broadcast(g.n, g.root, _chunks(g))))
