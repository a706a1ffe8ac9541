"""Rings and chains: all-gather, reduce-scatter and all-reduce on one line of ranks,
and NCCL's multi-channel rings over a GPU cluster.

A ring passes blocks to one neighbour; a bidirectional ring uses both
directions of every link; a chain is a line without the wraparound link, so
blocks walk to both ends. Reduce-scatter is the all-gather reversed with
reductions (:func:`reduce_scatter_from`); all-reduce is reduce-scatter then
all-gather (:func:`all_reduce_from`).

Introduced in the chapters *A first look* and *Inside all-gather: rings, chains
and two axes*.
"""

from __future__ import annotations

import numpy as np

from .. import costs
from ..errors import CollectivesError
from ..schedule import COPY, Schedule, Step, Traffic, all_reduce_from, boxes_array, reduce_scatter_from
from ..topology import Switch, Torus
from . import tiers
from .registry import Group, register

# ---------------------------------------------------------------------------
# One-group builders
# ---------------------------------------------------------------------------


def ring_all_gather(n: int) -> Schedule:
    """Unidirectional ring: N-1 steps; at step k rank r passes block (r-k) to r+1."""
    r = np.arange(n)
    traffic = Traffic.make(r, (r + 1) % n, COPY, 1.0 / n)
    steps = [Step(traffic, (lambda k=k: boxes_array([((r - k) % n, 1)], n)), "all-gather")
             for k in range(n - 1)]
    return Schedule.local("all_gather", "ring", n, (n,), steps,
                          description="unidirectional ring: every rank forwards the block "
                                      "it received last step to its right neighbour")


def bidirectional_ring_all_gather(n: int) -> Schedule:
    """Bidirectional ring at the bandwidth bound: every block travels both ways round.

    Step h (1-based) moves the blocks h-1 hops from their owners one hop further,
    clockwise and counter-clockwise at once. For odd N, (N-1)/2 steps reach every
    rank. For even N the block opposite its owner is N/2 hops away both ways: its
    two halves (slot grid ``(N, 2)``) go one each way in the last step, which so
    carries half a block per link. N/2 steps in all, ``(N-1)/(2N) V`` on every link:
    the bound. A ring of two has one link each way, so its blocks go whole.
    """
    if n % 2 or n == 2:
        return _bidirectional_whole(n, "bidirectional_ring")
    r = np.arange(n)
    both = Traffic.make(np.concatenate([r, r]), np.concatenate([(r + 1) % n, (r - 1) % n]),
                        COPY, 1.0 / n)
    halves = Traffic.make(np.concatenate([r, r]), np.concatenate([(r + 1) % n, (r - 1) % n]),
                          COPY, 1.0 / (2 * n))
    steps = []
    for h in range(1, n // 2):
        chunks = (lambda h=h: boxes_array(
            [(np.concatenate([(r - h + 1) % n, (r + h - 1) % n]), 1), (0, 2)], 2 * n))
        steps.append(Step(both, chunks, "all-gather"))
    h = n // 2
    last = (lambda h=h: boxes_array([(np.concatenate([(r - h + 1) % n, (r + h - 1) % n]), 1),
                                     (np.repeat([0, 1], n), 1)], 2 * n))
    steps.append(Step(halves, last, "all-gather"))
    return Schedule.local("all_gather", "bidirectional_ring", n, (n, 2), steps,
                          description="bidirectional ring: every block goes both ways round "
                                      "the ring at once; the block opposite its owner goes "
                                      "half each way")


def bidirectional_ring_whole_all_gather(n: int) -> Schedule:
    """Bidirectional ring with whole blocks: ceil((N-1)/2) steps of V/N each.

    For even N the block opposite its owner goes whole one way in the last step,
    while the other direction idles: ``(N/2) V/(N W)`` instead of the bound
    ``(N-1)/(2N) V/W``; see :func:`bidirectional_ring_all_gather`.
    """
    return _bidirectional_whole(n, "bidirectional_ring_whole")


def _bidirectional_whole(n: int, name: str) -> Schedule:
    r = np.arange(n)
    cw_steps = n // 2                    # ceil((n-1)/2)
    ccw_steps = (n - 1) // 2             # floor((n-1)/2)
    both = Traffic.make(np.concatenate([r, r]), np.concatenate([(r + 1) % n, (r - 1) % n]),
                        COPY, 1.0 / n)
    cw_only = Traffic.make(r, (r + 1) % n, COPY, 1.0 / n)
    steps = []
    for h in range(1, cw_steps + 1):
        if h <= ccw_steps:
            chunks = (lambda h=h: boxes_array(
                [(np.concatenate([(r - h + 1) % n, (r + h - 1) % n]), 1)], 2 * n))
            steps.append(Step(both, chunks, "all-gather"))
        else:
            chunks = (lambda h=h: boxes_array([((r - h + 1) % n, 1)], n))
            steps.append(Step(cw_only, chunks, "all-gather"))
    extra = ("" if n % 2 or n <= 2 else
             "; the block opposite its owner goes whole one way, in a step of its own")
    return Schedule.local("all_gather", name, n, (n,), steps,
                          description="bidirectional ring: every block goes both ways round "
                                      "the ring at once, so it needs half as many steps" + extra)


def chain_all_gather(n: int) -> Schedule:
    """Chain (no wraparound): blocks flow both ways along the line; N-1 steps."""
    steps = []
    for h in range(1, n):
        right = np.arange(h - 1, n - 1)          # r -> r+1 carries block r-h+1
        left = np.arange(1, n - h + 1)           # r -> r-1 carries block r+h-1
        src = np.concatenate([right, left])
        dst = np.concatenate([right + 1, left - 1])
        blocks = np.concatenate([right - h + 1, left + h - 1])
        steps.append(Step(Traffic.make(src, dst, COPY, 1.0 / n),
                          boxes_array([(blocks, 1)], len(src)), "all-gather"))
    return Schedule.local("all_gather", "chain", n, (n,), steps,
                          description="chain: without the wraparound link, blocks must "
                                      "walk to both ends of the line, N-1 steps")


def multichannel_ring_order(nodes: int, gpus: int, channel: int) -> np.ndarray:
    """Ring order of channel ``c`` over a cluster: each node is entered on the GPU
    whose rail the previous node left on, so inter-node hops stay on one rail and
    the channels together use every NIC."""
    order = []
    for m in range(nodes):
        e = (channel - m) % gpus
        order.extend(m * gpus + (e + i) % gpus for i in range(gpus))
    return np.asarray(order)


def multichannel_ring_all_gather(nodes: int, gpus: int) -> Schedule:
    """NCCL-style rings over a cluster: one ring (channel) per GPU of a node, each
    carrying 1/gpus of the data, arranged so that all NICs work at once."""
    n = nodes * gpus
    channels = gpus if nodes > 1 else 1
    orders = [multichannel_ring_order(nodes, gpus, c) for c in range(channels)]
    src = np.concatenate([o for o in orders])
    dst = np.concatenate([np.roll(o, -1) for o in orders])
    traffic = Traffic.make(src, dst, COPY, 1.0 / (n * channels))
    steps = []
    for k in range(n - 1):
        def chunks(k=k):
            parts = []
            for c, o in enumerate(orders):
                i = np.arange(n)
                blocks = o[(i - k) % n]               # ring position i sends block of pos i-k
                parts.append(boxes_array([(blocks, 1), (c, 1)], n))
            return np.concatenate(parts)
        steps.append(Step(traffic, chunks, "all-gather"))
    return Schedule.local("all_gather", "ring", n, (n, channels), steps, routing="routed",
                          description=f"{channels} rings (channels), each over every GPU, "
                                      "entering each node on the rail it left the last one")


#: The one-axis all-gathers, by the name of the axis kind they run on.
LINE_ALL_GATHERS = {
    "ring": ring_all_gather,
    "bidirectional_ring": bidirectional_ring_all_gather,
    "bidirectional_ring_whole": bidirectional_ring_whole_all_gather,
    "chain": chain_all_gather,
}


# ---------------------------------------------------------------------------
# Where rings and chains apply
# ---------------------------------------------------------------------------

def line_reason(group: Group, kind: str) -> str | None:
    """Why ``kind`` ("ring", "bidirectional_ring", "bidirectional_ring_whole" or "chain")
    cannot run on the group, or None."""
    topo = group.topology
    axis = group.torus_axis
    if axis is not None:
        size, name = topo.dims[axis], topo.axis_names[axis]
        if kind != "chain" and size > 2 and not topo.wraparound[axis]:
            return (f"{kind} needs a wraparound link on axis {name} (size {size}) of "
                    f"{topo!r}, which has none; use chain")
        if kind.startswith("bidirectional_ring") and not topo.bidirectional:
            return f"{kind} needs links both ways; {topo!r} is one-way; use ring"
        if kind == "chain" and not topo.bidirectional:
            return f"chain needs links both ways; {topo!r} is one-way; use ring"
        return None
    if group.on_torus_axes:
        names = ",".join(topo.axis_names[a] for a in group.axes)
        return (f"algorithm {kind!r} does not apply to {group.collective} over axes {names} of "
                f"{topo!r}: {kind} runs along one axis: pass axes=x (--axes x), or use multi_axis "
                f"or sequential_axes")
    if group.whole_cluster and kind != "ring":
        return (f"{kind} is not run across the nodes of {topo!r}; NCCL's rings there are "
                f"ring (one per rail) or hierarchical")
    return None


def axis_kind(topo: Torus, axis: int) -> str:
    """How XLA runs a collective along one torus axis: a ring where it wraps, else a chain."""
    if topo.dims[axis] <= 2 and topo.bidirectional:
        return "chain"
    if topo.wraparound[axis]:
        return "bidirectional_ring" if topo.bidirectional else "ring"
    if not topo.bidirectional:
        raise CollectivesError(
            f"axis {topo.axis_names[axis]} of {topo!r} has one-way links and no "
            f"wraparound: no collective can run on it"
        )
    return "chain"


def _line_cost(kind: str, factor: float):
    """The closed form on a torus axis; a one-way ring also on a switch (one flow per
    up-link and down-link per step) and on a GPU cluster's fat tree, over any of its axes
    (:mod:`.tiers`: the most loaded link of each tier sets a step's time)."""
    formula = {"ring": costs.ring_all_gather, "bidirectional_ring": costs.bidirectional_ring_all_gather,
               "bidirectional_ring_whole": costs.bidirectional_ring_whole_all_gather,
               "chain": costs.chain_all_gather}[kind]

    def cost(group: Group, nbytes: float) -> float | None:
        if kind == "ring" and tiers.applies(group.topology):
            return tiers.ring_time(group.topology, group.axes, str(group.collective), nbytes)
        if group.torus_axis is None and not (kind == "ring" and isinstance(group.topology, Switch)):
            return None
        W, alpha = group.link()
        return factor * formula(group.n, nbytes, W, alpha)
    return cost


_DESCRIPTIONS = {
    "ring": "unidirectional ring, N-1 steps per phase",
    "bidirectional_ring": "ring using both directions of every link, N/2 steps, at the bandwidth bound",
    "bidirectional_ring_whole": "bidirectional ring sending whole blocks: for even N the opposite "
                                "block goes one way in an extra step",
    "chain": "line without wraparound, N-1 steps",
}


def _line_all_gather(group: Group, kind: str) -> Schedule:
    if kind == "ring" and group.whole_cluster:
        topo = group.topology
        return multichannel_ring_all_gather(topo.num_nodes, topo.gpus_per_node)
    return LINE_ALL_GATHERS[kind](group.n)


def _line_busiest(group: Group, nbytes: float) -> str | None:
    if not tiers.applies(group.topology):
        return None
    return tiers.busiest_link(group.topology, tiers.ring_stages(group.topology, group.axes,
                                                                str(group.collective)), nbytes)


def _ring_by_formula(group: Group) -> str | None:
    """NCCL's rings over a large GPU cluster: the tiers' closed form is exact (held to the
    simulator in ``tests/test_tiers.py``) and takes milliseconds where building and routing
    the schedule's transfers takes seconds (819,200 per phase on 102,400 GPUs)."""
    footprint = _line_size("ring", 1)(group) if group.whole_cluster else None
    return tiers.past_formula(group, footprint and footprint[0],
                              "NCCL's rings over {n} GPUs hold {transfers} transfers per phase")


def _line_size(kind: str, phases: int):
    """A line's footprint: N-1 steps per phase (N/2 both ways round a ring). A chain's steps
    each hold different transfers, N(N-1) per phase in all; a ring's repeat patterns: one of
    N one way; both ways one of 2N, or for even N one more for the last step (2N again, or N
    for whole blocks). NCCL's channels over a whole cluster: N transfers per channel and phase."""
    def size(g: Group) -> tuple[int, int] | None:
        if g.whole_cluster:     # NCCL's channels: one ring per GPU of a node (one on one node)
            topo = g.topology
            channels = topo.gpus_per_node if topo.num_nodes > 1 else 1
            return (phases * g.n * channels, phases * (g.n - 1)) if kind == "ring" else None
        n = g.n
        if kind == "chain":
            return phases * n * (n - 1), phases * (n - 1)
        if kind == "ring":
            return phases * n, phases * (n - 1)
        last = 0 if n % 2 or n < 4 else (2 * n if kind == "bidirectional_ring" else n)
        return phases * (2 * n + last), phases * (n // 2)
    return size


def _register_line(kind: str) -> None:
    applies = (lambda g, kind=kind: line_reason(g, kind))

    nccl = "RING" if kind == "ring" else None
    default = kind == "ring"

    @register(kind, "all_gather", applies=applies, description=_DESCRIPTIONS[kind],
              cost=_line_cost(kind, 1.0), nccl=nccl, busiest=_line_busiest if kind == "ring" else None,
              by_formula=_ring_by_formula if kind == "ring" else None,
              size=_line_size(kind, 1), default=default)
    def all_gather(g: Group) -> Schedule:
        return _line_all_gather(g, kind)

    @register(kind, "reduce_scatter", applies=applies, description=_DESCRIPTIONS[kind],
              cost=_line_cost(kind, 1.0), nccl=nccl, busiest=_line_busiest if kind == "ring" else None,
              by_formula=_ring_by_formula if kind == "ring" else None,
              size=_line_size(kind, 1), default=default)
    def reduce_scatter(g: Group) -> Schedule:
        return reduce_scatter_from(_line_all_gather(g, kind))

    @register(kind, "all_reduce", applies=applies, description=_DESCRIPTIONS[kind],
              cost=_line_cost(kind, 2.0), nccl=nccl, busiest=_line_busiest if kind == "ring" else None,
              by_formula=_ring_by_formula if kind == "ring" else None,
              size=_line_size(kind, 2), default=default)
    def all_reduce(g: Group) -> Schedule:
        return all_reduce_from(_line_all_gather(g, kind))


for _kind in ("ring", "bidirectional_ring", "chain", "bidirectional_ring_whole"):
    _register_line(_kind)
