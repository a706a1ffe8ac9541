"""Trees and pipelines: binomial trees, NCCL's double binary tree, and pipelined
chains for broadcast and reduce.

A binomial tree doubles the set of ranks that hold the data every round, so a
broadcast takes ``ceil(log2 N)`` rounds of the whole array; its dual reduces
up the same tree. The seed's tree all-reduce (``binomial_tree``) is a binomial
reduce to rank 0 then a binomial broadcast back: few steps, but the whole array
in every one. A pipelined chain cuts the array into chunks that stream down a
line of ranks: ``N - 2 + chunks`` steps of ``V / chunks``.

NCCL's tree all-reduce (``tree``) pipelines chunks up a tree (reduce) and back
down (broadcast) at once: between nodes two complementary binary trees
(:func:`double_binary_tree`), each carrying half the data, inside each node a
chain hanging from the GPU whose NIC joins the tree, and one channel per NIC
(:func:`cluster_trees`); on one switch, one chain per GPU, each starting at
another GPU (:func:`chain_trees`). :func:`pipelined_tree_all_reduce` turns any
set of trees into bulk-synchronous steps.

Introduced in the chapter *Depth, trees and the network roofline*.
"""

from __future__ import annotations

import numpy as np

from .. import costs
from ..schedule import COPY, REDUCE, Schedule, Step, Traffic, boxes_array, dual
from ..topology import GpuCluster, Switch, Torus
from ..units import format_rate
from .registry import Group, register
from . import tiers
from .shapes import double_binary_tree, nccl_binary_tree, tree_levels  # noqa: F401  (re-exported)


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
    return Schedule.local("all_reduce", "binomial_tree", n, (n,), steps, routing="routed",
                          description="binomial tree: reduce up a binomial tree to rank 0 "
                                      "(log2 N rounds), then broadcast back down (log2 N rounds)")


# ---------------------------------------------------------------------------
# NCCL's tree: pipelined (double binary) trees
# ---------------------------------------------------------------------------

def chain_trees(n: int) -> list[np.ndarray]:
    """NCCL's tree on one switch: a chain through the GPUs per channel, one channel
    per GPU, channel ``c`` starting (its root) at GPU ``c`` and going ``c, c+1, ...``.
    Every GPU sits once at each place of a chain, so every link carries the same."""
    trees = []
    for c in range(n):
        order = (c + np.arange(n)) % n
        parent = np.full(n, -1, dtype=np.int64)
        parent[order[1:]] = order[:-1]
        trees.append(parent)
    return trees


def cluster_trees(nodes: int, gpus: int) -> list[np.ndarray]:
    """NCCL's trees over a GPU cluster, as parent arrays over its ranks.

    One channel per GPU of a node, each with both trees of :func:`double_binary_tree`
    over the nodes: ``2 * gpus`` trees, each carrying ``1 / (2 gpus)`` of the data.
    In channel ``c`` the head of every node is GPU ``c``: it joins the node tree
    through its NIC (rail ``c``), and the node's other GPUs hang below it in a chain
    ``c+1, c+2, ...`` over NVLink (NCCL's ``TREE`` pattern: parent and children of a
    node on the same GPU). Every channel thus enters every node on the same rail,
    as NCCL's trees do (a tree's intra-node order is the same on every node), so its
    inter-node hops never leave the rail's leaf switch, and the channels together use
    every NIC. One node: :func:`chain_trees`.
    """
    if nodes == 1:
        return chain_trees(gpus)
    node_trees = double_binary_tree(nodes)
    base = np.arange(nodes)[:, None] * gpus
    trees = []
    for c in range(gpus):
        ranks = base + (c + np.arange(gpus))[None, :] % gpus        # (nodes, position)
        for up in node_trees:
            parent = np.full(nodes * gpus, -1, dtype=np.int64)
            parent[ranks[:, 1:]] = ranks[:, :-1]
            parent[ranks[:, 0]] = np.where(up < 0, -1, up * gpus + c)
            trees.append(parent)
    return trees


def pipelined_tree_all_reduce(trees, chunks: int, *, algorithm: str = "tree",
                              description: str = "") -> Schedule:
    """All-reduce over trees (parent arrays over ranks ``0..n-1``), each carrying an
    equal share of the array in ``chunks`` chunks that stream up and down at once.

    Bulk-synchronous steps: a rank of height ``h`` sends chunk ``c`` (the sum of its
    subtree's contributions) to its parent at step ``h + c``; the root of height
    ``H`` holds chunk ``c`` complete after step ``H - 1 + c``, and a rank of depth
    ``d`` sends it on to its children at step ``H + d + c``. A tree takes
    ``2H + chunks - 1`` steps: ``2H`` hops up and down (NCCL's latency count, whose
    ``H`` is ``(GPUs per node - 1) + log2(nodes)``), plus the pipeline fill. Slots:
    ``(n, trees, chunks)``, every transfer carrying all n blocks of one chunk of one tree.
    """
    trees = [np.asarray(t, dtype=np.int64) for t in trees]
    P, K = len(trees), int(chunks)
    n = len(trees[0]) if trees else 1
    src, dst, op, off, part = [], [], [], [], []
    for p, parent in enumerate(trees):
        height, depth = tree_levels(parent)
        H = int(height[parent < 0][0])
        child = np.nonzero(parent >= 0)[0]
        up = parent[child]
        src += [child, up]
        dst += [up, child]
        op += [np.full(len(child), REDUCE), np.full(len(child), COPY)]
        off += [height[child], H + depth[up]]
        part += [np.full(2 * len(child), p)]
    steps = []
    if P and n > 1:
        src, dst, op, off, part = (np.concatenate(x) for x in (src, dst, op, off, part))
        cache: dict[bytes, Traffic] = {}
        for s in range(int(off.max()) + K):
            k = s - off
            sel = (k >= 0) & (k < K)
            key = sel.tobytes()
            if key not in cache:
                cache[key] = Traffic.make(src[sel], dst[sel], op[sel], 1.0 / (P * K))
            ops = op[sel]
            stage = ("reduce" if (ops == REDUCE).all() else "broadcast" if (ops == COPY).all()
                     else "reduce and broadcast")
            chunks_of = (lambda sel=sel, k=k: boxes_array(
                [(0, n), (part[sel], 1), (k[sel], 1)], int(sel.sum())))
            steps.append(Step(cache[key], chunks_of, stage))
    return Schedule.local("all_reduce", algorithm, n, (n, max(P, 1), K), steps, routing="routed",
                          description=description or
                          f"pipelined trees: {P} trees, each carrying 1/{max(P, 1)} of the array "
                          f"in {K} chunks that stream up (reduce) and down (broadcast) at once")


def nccl_tree_all_reduce(group: Group) -> Schedule:
    """NCCL's tree for the group: double binary trees with a chain per node and a
    channel per NIC over a whole cluster, double binary trees over one GPU per node
    (``axes=node``), and one chain per GPU on a switch."""
    topo, K = group.topology, group.chunks
    if isinstance(topo, GpuCluster) and group.whole_cluster:
        trees = cluster_trees(topo.num_nodes, topo.gpus_per_node)
        what = (f"{topo.gpus_per_node} channels, each a pair of binary trees over the "
                f"{topo.num_nodes} nodes (entered on the channel's rail) with a chain inside "
                f"each node" if topo.num_nodes > 1 else
                f"{topo.gpus_per_node} chains through the node's GPUs, one from each GPU")
    elif isinstance(topo, GpuCluster) and group.axes == (0,):
        trees = list(double_binary_tree(group.n)) if group.n > 1 else []
        what = f"two complementary binary trees over the {group.n} nodes"
    else:
        trees = chain_trees(group.n)
        what = f"{group.n} chains through the ranks, one from each rank"
    return pipelined_tree_all_reduce(
        trees, K, algorithm="tree",
        description=f"NCCL's tree: {what}; the array in {K} chunks per tree streams up "
                    f"(reduce) and back down (broadcast) at once")


def chain_broadcast(n: int, root: int = 0, chunks: int = 8) -> Schedule:
    """Pipelined chain from the root: chunk c leaves rank i at step c + i."""
    order = (np.arange(n) + root) % n
    steps = []
    for k in range(chunks + n - 2 if n > 1 else 0):
        # the ranks whose chunk k - pos is in flight
        pos = np.arange(max(0, k - chunks + 1), min(k, n - 2) + 1)
        c = k - pos
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


def _one_axis(group: Group) -> str | None:
    if group.on_torus_axes:
        return "the pipelined chain runs along one axis: pass axes=x (--axes x)"
    return None


_switch_binomial_cost = _on_switch(
    lambda g, V, W, a: costs.binomial_tree_broadcast(g.n, V, W, a))
_switch_chain_cost = _on_switch(lambda g, V, W, a: costs.pipelined_chain_broadcast(g.n, V, W, a, g.chunks))


def _line(group: Group) -> str | None:
    """The kind of the torus axis a one-axis group runs along (``bidirectional_ring``,
    ``ring`` one way, ``chain``), for the closed forms along a line; None elsewhere (off
    a torus routed dimension by dimension, or an axis of one-way links without
    wraparound)."""
    topo, axis = group.topology, group.torus_axis
    if axis is None or type(topo).routes is not Torus.routes:
        return None
    if topo.wraparound[axis]:           # kept only where it adds a neighbour
        return "bidirectional_ring" if topo.bidirectional else "ring"
    return "chain" if topo.bidirectional or topo.dims[axis] == 1 else None


def _binomial_line(group: Group, what: str):
    """``(kind, phases)`` of a binomial tree along a torus axis where its closed form
    holds (a ring from any root, a chain of three or more from rank 0), else None; ``phases`` are
    :func:`~collectives_lib.costs.binomial_tree_broadcast_line`'s ``reduce`` flags."""
    kind = _line(group)
    rooted = what != "all_reduce"
    if kind is None or (kind == "chain" and rooted and group.root != 0 and group.n > 2):
        return None
    phases = {"broadcast": (False,), "reduce": (True,), "all_reduce": (True, False)}
    return kind, phases[what]


def _binomial_cost(what: str):
    """The binomial tree's closed form: on a switch, and along a ring or chain
    (:func:`~collectives_lib.costs.binomial_tree_broadcast_line`)."""
    def cost(group: Group, nbytes: float) -> float | None:
        if isinstance(group.topology, Switch):
            one = _switch_binomial_cost(group, nbytes)
            return 2 * one if what == "all_reduce" else one
        line = _binomial_line(group, what)
        if line is None:
            return None
        W, alpha = group.link()
        kind, phases = line
        return sum(costs.binomial_tree_broadcast_line(group.n, kind, nbytes, W, alpha,
                                                      reduce=r) for r in phases)
    return cost


#: The most (transfer, link) pairs a binomial tree's routes along a ring or chain may
#: hold before its closed form times it (each round's routes run ``2**j`` links: on a
#: ring of 4,096 about 11 million pairs, 1.8 s to route).
BINOMIAL_ROUTED = 2_000_000


def _binomial_routed(group: Group, what: str) -> int:
    """(transfer, link) pairs the binomial tree's routes hold along the group's line."""
    n, kind = group.n, _line(group)
    pairs, k = 0, 1
    while k < n:
        hops = min(k, n - k) if kind == "bidirectional_ring" else k
        pairs += min(k, n - k) * hops
        k *= 2
    return pairs * (2 if what == "all_reduce" else 1)


def _binomial_by_formula(what: str):
    def reason(group: Group) -> str | None:
        if _binomial_line(group, what) is None:
            return None
        pairs = _binomial_routed(group, what)
        if pairs <= BINOMIAL_ROUTED:
            return None
        return (f"the binomial tree's routes over {group.n} ranks along the line would "
                f"cross about {pairs:,} links; its closed form is exact")
    return reason


def _binomial_busiest(group: Group, nbytes: float) -> str | None:
    what = "broadcast" if group.collective.rooted else "all_reduce"
    if _binomial_line(group, what) is None:
        return None
    W, _ = group.link()
    return (f"closed form, not simulated: the middle link of each round's run of "
            f"routes, which all of that round's copies cross ({format_rate(W)} each)")


def _chain_line(group: Group) -> str | None:
    """The kind of line the pipelined chain runs along where its closed form holds: any
    torus axis, except a reduce one way round a ring (its hops back go the long way)."""
    kind = _line(group)
    if kind == "ring" and group.collective.reduces:
        return None
    return kind


def _chain_cost(group: Group, nbytes: float) -> float | None:
    """The closed form on a switch, along a torus axis, and over every GPU of a GPU
    cluster (:mod:`.tiers`)."""
    if group.whole_cluster and tiers.applies(group.topology):
        if tiers.chain_work(group.topology, group.chunks) > tiers.CHAIN_WORK:
            return None
        return tiers.chain_time(group.topology, str(group.collective), nbytes, group.root, group.chunks)
    kind = _chain_line(group)
    if kind is not None:
        W, alpha = group.link()
        return costs.pipelined_chain_broadcast_line(
            group.n, nbytes, W, alpha, group.chunks, root=group.root,
            wraparound=kind != "chain")
    return _switch_chain_cost(group, nbytes)


#: The most steps a pipelined chain along a torus axis is built and simulated for;
#: beyond, its closed form (exact, ``tests/test_scale.py``) times it: every step holds
#: different transfers (65,542 on a ring of 65,536 took 22 s and 259 MB to route).
CHAIN_STEPS = 1024


def _chain_by_formula(group: Group) -> str | None:
    """Over a whole GPU cluster every step of the chain holds different transfers (about
    N of them, 100,800 on a 1,400-rack GB200 cluster): the tiers' closed form groups
    them by the run of edges between nodes and is exact (``tests/test_tiers.py``). Along
    a torus axis of more than :data:`CHAIN_STEPS` steps, the line's closed form."""
    if group.whole_cluster and tiers.applies(group.topology) and group.n > 1 and \
            tiers.chain_work(group.topology, group.chunks) <= tiers.CHAIN_WORK:
        return (f"the chain over {group.n} GPUs runs {group.chunks + group.n - 2} different "
                f"steps; the closed form over the cluster's tiers is exact")
    steps = group.chunks + group.n - 2
    if _chain_line(group) is not None and steps > CHAIN_STEPS:
        return (f"the chain over {group.n} ranks runs {steps:,} different steps; its "
                f"closed form along the line is exact")
    return None


def _chain_busiest(group: Group, nbytes: float) -> str | None:
    if group.whole_cluster and tiers.applies(group.topology):
        return tiers.chain_busiest(group.topology, str(group.collective), nbytes, group.root)
    if _chain_line(group) is not None:
        W, _ = group.link()
        return (f"closed form, not simulated: the link from each rank to the next "
                f"along the chain, alike, each carrying the whole array once "
                f"({format_rate(W)} each)")
    return None


def _tree_reason(group: Group) -> str | None:
    if isinstance(group.topology, Torus):
        return (f"tree is NCCL's algorithm for GPU systems (a switch, an NVSwitch node, a GPU "
                f"cluster); {group.topology!r} is a torus, where XLA runs rings: use ring or "
                f"binomial_tree")
    return None


def _tree_cost(group: Group, nbytes: float) -> float | None:
    """Closed forms: one switch (or the GPUs of a node), and one or two nodes of a
    cluster whose trees stay inside one Scalable Unit."""
    topo, K = group.topology, group.chunks
    if isinstance(topo, Switch):
        W, alpha = group.link()
        return costs.tree_all_reduce(group.n, nbytes, W, alpha, K)
    if not isinstance(topo, GpuCluster):
        return None
    nvl = (topo.nvlink_bandwidth, 2 * topo.nvlink_latency)
    nic = (topo.nic_bandwidth, 2 * topo.nic_latency)
    if group.axes == (1,) or (group.whole_cluster and topo.num_nodes == 1):
        return costs.tree_all_reduce(topo.gpus_per_node, nbytes, *nvl, K)
    if group.whole_cluster and tiers.applies(topo):
        return tiers.tree_time(topo, nbytes, K)
    if topo.num_nodes != 2 or topo.num_nodes > topo.nodes_per_su:
        return None
    gpus = topo.gpus_per_node if group.whole_cluster else 1
    return costs.tree_all_reduce_two_nodes(gpus, nbytes, nic[0], nvl[0], nic[1], nvl[1], K)


def _tree_count(group: Group) -> int:
    """How many trees NCCL's tree all-reduce builds for the group (see :func:`nccl_tree_all_reduce`)."""
    topo = group.topology
    if isinstance(topo, GpuCluster) and group.whole_cluster:
        return 2 * topo.gpus_per_node if topo.num_nodes > 1 else topo.gpus_per_node
    if isinstance(topo, GpuCluster) and group.axes == (0,):
        return 2
    return group.n


def _tree_size(group: Group) -> tuple[int, int]:
    """Each tree moves K chunks over its N-1 edges, up and down; on a switch the trees are
    chains of height N-1 and the schedule pipelines K chunks through them."""
    n, K, trees = group.n, group.chunks, _tree_count(group)
    topo = group.topology
    chains = not (isinstance(topo, GpuCluster) and (group.whole_cluster or group.axes == (0,)))
    steps = 2 * (n - 1) + K - 1 if chains and n > 1 else 0
    return 2 * trees * (n - 1) * K, steps


def _tree_busiest(group: Group, nbytes: float) -> str | None:
    if group.whole_cluster and tiers.applies(group.topology) and group.topology.num_nodes > 1:
        return tiers.tree_busiest(group.topology, nbytes, group.chunks)
    return None


def _tree_by_formula(group: Group) -> str | None:
    """On a switch the N chains each carry 1/N of the array in K chunks, N^2 K slots of
    whole elements: from a few dozen ranks up most slots would hold 0 or 1 element and the
    largest would set the time (16 ms for 1 MiB on 500 ranks, against 4.1 ms). The chains'
    closed form is exact for them, so it times tree on a switch at every N."""
    if isinstance(group.topology, Switch) and group.n > 1:
        return (f"tree on a switch is {group.n} chains of {group.n} ranks, each carrying "
                f"1/{group.n} of the array in {group.chunks} chunks; their closed form is exact")
    return tiers.past_formula(group, _tree_size(group)[0],
                              "NCCL's trees over {n} GPUs hold {transfers} transfers")


register("tree", "all_reduce", applies=_tree_reason, cost=_tree_cost, nccl="TREE", size=_tree_size,
         by_formula=_tree_by_formula, busiest=_tree_busiest,
         description="NCCL's tree: double binary trees between nodes, a chain inside each, "
                     "one channel per NIC, chunks pipelined up and down"
         )(nccl_tree_all_reduce)
def _binomial_size(phases: int):
    """A binomial tree sends along each of its N-1 edges once, in ceil(log2 N) rounds."""
    return lambda g: (phases * (g.n - 1), phases * max(g.n - 1, 0).bit_length())


register("binomial_tree", "all_reduce", size=_binomial_size(2),
         description="binomial tree reduce, then binomial tree broadcast",
         cost=_binomial_cost("all_reduce"),
         by_formula=_binomial_by_formula("all_reduce"), busiest=_binomial_busiest
         )(lambda g: binomial_tree_all_reduce(g.n))
register("binomial_tree", "broadcast", description="binomial tree, log2(N) rounds", default=True,
         size=_binomial_size(1), cost=_binomial_cost("broadcast"),
         by_formula=_binomial_by_formula("broadcast"), busiest=_binomial_busiest
         )(lambda g: binomial_broadcast(g.n, g.root))
register("binomial_tree", "reduce", description="binomial tree, log2(N) rounds", default=True,
         size=_binomial_size(1), cost=_binomial_cost("reduce"),
         by_formula=_binomial_by_formula("reduce"), busiest=_binomial_busiest
         )(lambda g: dual(binomial_broadcast(g.n, g.root)))
register("chain", "broadcast", applies=_one_axis, cost=_chain_cost, nccl="RING",
         by_formula=_chain_by_formula, busiest=_chain_busiest,
         description="pipelined chain: the array streams down the line in chunks"
         )(lambda g: chain_broadcast(g.n, g.root, g.chunks))
register("chain", "reduce", applies=_one_axis, cost=_chain_cost, nccl="RING",
         by_formula=_chain_by_formula, busiest=_chain_busiest,
         description="pipelined chain: partial sums stream up the line in chunks"
         )(lambda g: dual(chain_broadcast(g.n, g.root, g.chunks)))
