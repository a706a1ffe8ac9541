"""Through a switch, and in it: direct sends, multicast, NVLS and in-network reduction (SHARP).

*Direct* algorithms send every message straight to its destination in one step
and let the network route it: on a non-blocking switch each rank's up-link
carries what it sends and its down-link what it receives. *Multicast* stores the
data once into the switch, which replicates it to every rank. *SHARP* (the
ideal in-switch reduction) reduces in the switch: every rank sends its array
up, the switch adds the arrays as they arrive and sends the sum (or each rank's
block of it) down; the two stages stream at once.

*NVLS* is what NCCL runs with NVLink SHARP, through the multimem instructions:
its all-gather stores each block once to the multicast group (the switch writes
it to every GPU), its reduce-scatter is a load-reduce (each GPU receives only
its reduced block), and its all-reduce is both: GPU g load-reduces slice g of
everyone's array (its link carries V in and V/N out over all slices), then
stores the sum of slice g to the multicast group, which writes it to all N GPUs
(V/N in, V out): ``(N+1)/N V`` each way, against ``2(N-1)/N V`` for a ring.

Introduced in the chapter *GPU collectives within the node*.
"""

from __future__ import annotations

import numpy as np

from .. import costs
from ..schedule import COPY, REDUCE, Schedule, Step, Traffic, boxes_array, concat
from ..topology import Switch
from .registry import Group, every_pair, register


def direct_all_gather(n: int) -> Schedule:
    """One step: every rank sends its block straight to every other rank."""
    i, j = np.nonzero(~np.eye(n, dtype=bool))
    traffic = Traffic.make(i, j, COPY, 1.0 / n)
    return Schedule.local("all_gather", "direct", n, (n,),
                          [Step(traffic, boxes_array([(i, 1)], len(i)), "all-gather")],
                          routing="routed",
                          description="direct: every rank sends its block to every other "
                                      "rank at once, through the switch")


def nvls_all_gather(n: int) -> Schedule:
    """NVLink SHARP all-gather (NCCL's NVLS): each rank stores its block once to a
    multicast address; the switch replicates it to every rank, the source included."""
    r = np.arange(n)
    push = Traffic.make(r, np.full(n, n), COPY, 1.0 / n)
    src = np.full(n * n, n)
    dst = np.tile(r, n)
    blocks = np.repeat(r, n)
    mcast = Traffic.make(src, dst, COPY, 1.0 / n)
    steps = [Step(push, boxes_array([(r, 1)], n), "push"),
             Step(mcast, boxes_array([(blocks, 1)], n * n), "multicast")]
    return Schedule.local("all_gather", "nvls", n, (n,), steps, routing="routed",
                          agents=("switch",), pipelined=True,
                          description="NVLS: each rank stores its block once to the multicast "
                                      "group; the switch replicates it to all ranks, including "
                                      "the one that sent it")


def direct_reduce_scatter(n: int) -> Schedule:
    i, j = np.nonzero(~np.eye(n, dtype=bool))
    return Schedule.local("reduce_scatter", "direct", n, (n,),
                          [Step(Traffic.make(i, j, REDUCE, 1.0 / n), boxes_array([(j, 1)], len(i)),
                                "reduce-scatter")],
                          routing="routed",
                          description="direct: every rank sends each block straight to its owner")


def sharp_reduce_scatter(n: int, algorithm: str = "sharp") -> Schedule:
    """Every rank sends its whole array into the switch, which sums it and sends each
    rank only its block. NCCL's NVLS reduce-scatter (``algorithm="nvls"``) is this
    traffic: GPU g's multimem load-reduce of block g."""
    r = np.arange(n)
    up = Traffic.make(r, np.full(n, n), REDUCE, 1.0)
    down = Traffic.make(np.full(n, n), r, COPY, 1.0 / n)
    what = ("NVLS reduce-scatter: each GPU load-reduces its block from everyone's array "
            "in the switch" if algorithm == "nvls" else
            "SHARP reduce-scatter: the switch sums and sends each rank only its block")
    return Schedule.local("reduce_scatter", algorithm, n, (n,),
                          [Step(up, boxes_array([(0, n)], n), "reduce in switch"),
                           Step(down, boxes_array([(r, 1)], n), "scatter")],
                          routing="routed", agents=("switch",), pipelined=True,
                          description=what)


def sharp_all_reduce(n: int) -> Schedule:
    """In-network reduction: every rank sends its array into the switch, which sums
    it and multicasts the result back. The two stages stream at once."""
    r = np.arange(n)
    full = boxes_array([(0, n)], n)
    up = Traffic.make(r, np.full(n, n), REDUCE, 1.0)
    down = Traffic.make(np.full(n, n), r, COPY, 1.0)
    return Schedule.local("all_reduce", "sharp", n, (n,),
                          [Step(up, full, "reduce in switch"), Step(down, full, "multicast")],
                          routing="routed", agents=("switch",), pipelined=True,
                          description="SHARP: the switch adds the arrays as they arrive and "
                                      "multicasts the sum; each byte crosses each link once")


def sharp_all_reduce_streamed(n: int) -> Schedule:
    """SHARP all-reduce as the switch streams it, one chunk of ``V/n`` at a time.

    Step k sends chunk k up from every rank (the switch adds the n copies as
    they arrive) and chunk k-1's sum down to every rank, so ``n + 1`` steps
    move the same bytes as :func:`sharp_all_reduce`. It shows what the switch
    holds: only the chunk in flight, never the whole array (the drawing
    :func:`collectives_lib.draw.sharp_stream_animation` plays it).
    """
    if not isinstance(n, (int, np.integer)) or n < 2:
        raise ValueError(f"sharp_all_reduce_streamed needs at least 2 ranks, got {n!r}")
    r = np.arange(n)
    steps = []
    for k in range(n + 1):
        src, dst, op, boxes = [], [], [], []
        if k < n:          # chunk k goes up and is summed in the switch
            src.append(r), dst.append(np.full(n, n)), op.append(np.full(n, REDUCE))
            boxes.append(np.full(n, k))
        if k > 0:          # the sum of chunk k-1 comes down to everyone
            src.append(np.full(n, n)), dst.append(r), op.append(np.full(n, COPY))
            boxes.append(np.full(n, k - 1))
        what = ("chunk 1 up" if k == 0 else f"chunk {k} down" if k == n else
                f"chunk {k + 1} up, chunk {k} down")
        steps.append(Step(Traffic.make(np.concatenate(src), np.concatenate(dst), np.concatenate(op), 1.0 / n),
                          boxes_array([(np.concatenate(boxes), 1)], len(np.concatenate(src))), what))
    return Schedule.local("all_reduce", "sharp", n, (n,), steps, routing="routed", agents=("switch",),
                          description="SHARP, chunk by chunk: each step one chunk goes up and is "
                                      "summed in the switch while the previous chunk's sum comes down")


def nvls_all_reduce(n: int) -> Schedule:
    """NCCL's NVLS all-reduce: a multimem load-reduce, then a multimem store.

    Each GPU owns block g (1/N of the array). (a) Every GPU sends its whole array
    into the switch (``"switch"``, the reduction), which returns to GPU g the sum
    of block g; (b) GPU g stores that sum into the multicast group
    (``"multicast"``, the same switch), which writes it to all N GPUs. Each GPU's
    links carry ``V + V/N`` each way. The four crossings of the switch stream
    (pipelined), each paying the link and the in-switch latency.
    """
    r = np.arange(n)
    switch, mcast = n, n + 1
    blocks = boxes_array([(r, 1)], n)
    steps = [
        Step(Traffic.make(r, np.full(n, switch), REDUCE, 1.0), boxes_array([(0, n)], n),
             "load-reduce"),
        Step(Traffic.make(np.full(n, switch), r, COPY, 1.0 / n), blocks, "reduced block"),
        Step(Traffic.make(r, np.full(n, mcast), COPY, 1.0 / n), blocks, "store"),
        Step(Traffic.make(np.full(n * n, mcast), np.tile(r, n), COPY, 1.0 / n),
             boxes_array([(np.repeat(r, n), 1)], n * n), "multicast"),
    ]
    return Schedule.local("all_reduce", "nvls", n, (n,), steps, routing="routed",
                          agents=("switch", "multicast"), pipelined=True,
                          description="NVLS: GPU g load-reduces block g in the switch, then "
                                      "stores the sum to the multicast group, which writes "
                                      "it to every GPU; (N+1)/N V each way")


def direct_broadcast(n: int, root: int = 0) -> Schedule:
    dst = np.array([i for i in range(n) if i != root])
    return Schedule.local("broadcast", "direct", n, (1,),
                          [Step(Traffic.make(np.full(len(dst), root), dst, COPY, 1.0),
                                boxes_array([(0, 1)], len(dst)), "broadcast")] if n > 1 else [],
                          routing="routed", root=root,
                          description="direct: the root sends the array to every rank")


def multicast_broadcast(n: int, root: int = 0) -> Schedule:
    r = np.arange(n)
    steps = [Step(Traffic.make([root], [n], COPY, 1.0), boxes_array([(0, 1)], 1), "push"),
             Step(Traffic.make(np.full(n, n), r, COPY, 1.0), boxes_array([(0, 1)], n), "multicast")]
    return Schedule.local("broadcast", "multicast", n, (1,), steps, routing="routed",
                          agents=("switch",), pipelined=True, root=root,
                          description="multicast: the switch replicates the root's array")


def direct_reduce(n: int, root: int = 0) -> Schedule:
    src = np.array([i for i in range(n) if i != root])
    return Schedule.local("reduce", "direct", n, (1,),
                          [Step(Traffic.make(src, np.full(len(src), root), REDUCE, 1.0),
                                boxes_array([(0, 1)], len(src)), "reduce")] if n > 1 else [],
                          routing="routed", root=root,
                          description="direct: every rank sends its array to the root")


def sharp_reduce(n: int, root: int = 0) -> Schedule:
    r = np.arange(n)
    steps = [Step(Traffic.make(r, np.full(n, n), REDUCE, 1.0), boxes_array([(0, 1)], n), "reduce in switch"),
             Step(Traffic.make([n], [root], COPY, 1.0), boxes_array([(0, 1)], 1), "deliver")]
    return Schedule.local("reduce", "sharp", n, (1,), steps, routing="routed", agents=("switch",),
                          pipelined=True, root=root,
                          description="SHARP reduce: the switch sums and sends the result to the root")



def direct_all_reduce(n: int) -> Schedule:
    """Direct reduce-scatter, then direct all-gather."""
    return concat(direct_reduce_scatter(n), direct_all_gather(n), collective="all_reduce",
                  algorithm="direct", description="direct reduce-scatter, then direct all-gather")


# ---------------------------------------------------------------------------
# Registered
# ---------------------------------------------------------------------------

def _switch_reason(what: str, across: str = ""):
    def test(group: Group) -> str | None:
        if not group.switch_like:
            hint = f"; {across}" if across and group.whole_cluster else ""
            return (f"{what} needs one switch joining the ranks (a Switch, an NVSwitch node, or "
                    f"axes=gpu of a GPU cluster); {group.topology!r} is not one{hint}")
        if not group.in_network:
            return (f"{what} needs a switch that reduces and multicasts in the network; "
                    f"{group.topology!r} only forwards (Switch(..., in_network=True) makes one that does)")
        return None
    return test


def _on_switch(formula):
    """A closed form on a :class:`Switch`: ``W`` its links, ``alpha`` the up-link and
    down-link latencies plus what an in-switch operation costs (NVLS), and the
    switch's reduction rate where it has one."""
    def cost(group: Group, nbytes: float) -> float | None:
        topo = group.topology
        if not isinstance(topo, Switch):
            return None
        W, alpha = group.link()
        return formula(group.n, nbytes, W, alpha, 2 * topo.agent_latency_, topo.reduce_flops)
    return cost


def _sharp_bandwidth(n, V, W, rate):
    """The slower of the links and the switch's adders (4-byte elements)."""
    return max(V / W, 0.0 if not rate else n * V / 4 / rate)


_DIRECT = "every message straight to its destination, routed by the network"
_MULTICAST = "the switch replicates data (NVLink SHARP multicast)"
_SHARP = "in-network reduction in the switch (SHARP)"
_NVLS_ACROSS = ("across nodes NCCL runs nvls_tree, or NVLS with InfiniBand SHARP "
                "(collnet_direct, collnet_chain)")
_nvls_reason = _switch_reason("nvls", _NVLS_ACROSS)

register("direct", "all_gather", description=_DIRECT, size=every_pair(),
         cost=_on_switch(lambda n, V, W, a, agent, rate: costs.direct_all_gather(n, V, W, a))
         )(lambda g: direct_all_gather(g.n))
register("nvls", "all_gather", applies=_nvls_reason, nccl="NVLS",
         description="NVLS: each GPU stores its block once; the switch multicasts it to every GPU",
         cost=_on_switch(lambda n, V, W, a, agent, rate: a + agent + costs.multicast_all_gather(n, V, W))
         )(lambda g: nvls_all_gather(g.n))
register("direct", "reduce_scatter", description=_DIRECT, size=every_pair(),
         cost=_on_switch(lambda n, V, W, a, agent, rate: costs.direct_all_gather(n, V, W, a))
         )(lambda g: direct_reduce_scatter(g.n))
register("sharp", "reduce_scatter", in_network=True, applies=_switch_reason("sharp"), description=_SHARP,
         cost=_on_switch(lambda n, V, W, a, agent, rate: a + agent + _sharp_bandwidth(n, V, W, rate))
         )(lambda g: sharp_reduce_scatter(g.n))
register("nvls", "reduce_scatter", in_network=True, applies=_nvls_reason, nccl="NVLS",
         description="NVLS load-reduce: each GPU sends its array in and gets back its reduced block",
         cost=_on_switch(lambda n, V, W, a, agent, rate: a + agent + _sharp_bandwidth(n, V, W, rate))
         )(lambda g: sharp_reduce_scatter(g.n, "nvls"))
register("direct", "all_reduce", description=_DIRECT, size=every_pair(2),
         cost=_on_switch(lambda n, V, W, a, agent, rate: 2 * costs.direct_all_gather(n, V, W, a))
         )(lambda g: direct_all_reduce(g.n))
register("sharp", "all_reduce", in_network=True, applies=_switch_reason("sharp"), description=_SHARP,
         cost=_on_switch(lambda n, V, W, a, agent, rate: a + agent + _sharp_bandwidth(n, V, W, rate))
         )(lambda g: sharp_all_reduce(g.n))
register("nvls", "all_reduce", in_network=True, applies=_nvls_reason, nccl="NVLS",
         description="NVLS: load-reduce of each GPU's block, then a multicast store: (N+1)/N V each way",
         cost=_on_switch(lambda n, V, W, a, agent, rate: costs.nvls_all_reduce(
             n, V, W, (a + agent) / 2, n * V / 4 / rate if rate else 0.0))
         )(lambda g: nvls_all_reduce(g.n))
register("direct", "broadcast", description="direct: the root sends the array to every rank",
         cost=_on_switch(lambda n, V, W, a, agent, rate: costs.direct_broadcast(n, V, W, a))
         )(lambda g: direct_broadcast(g.n, g.root))
register("multicast", "broadcast", applies=_switch_reason("multicast"), description=_MULTICAST,
         cost=_on_switch(lambda n, V, W, a, agent, rate: a + agent + V / W)
         )(lambda g: multicast_broadcast(g.n, g.root))
register("direct", "reduce", description="direct: every rank sends its array to the root",
         cost=_on_switch(lambda n, V, W, a, agent, rate: costs.direct_broadcast(n, V, W, a))
         )(lambda g: direct_reduce(g.n, g.root))
register("sharp", "reduce", in_network=True, applies=_switch_reason("sharp"), description=_SHARP,
         cost=_on_switch(lambda n, V, W, a, agent, rate: a + agent + _sharp_bandwidth(n, V, W, rate))
         )(lambda g: sharp_reduce(g.n, g.root))
