"""Hierarchical collectives on GPU clusters: InfiniBand rails between nodes, NVLink inside.

An all-gather first gathers across nodes along each rail (GPUs with the same
local index, one ring per rail), then inside each node; the two stages stream,
so the slower one sets the pace. Reduce-scatter is its dual and all-reduce the
pair. The hierarchical all-to-all regroups by destination GPU inside the node,
then exchanges along each rail: every byte still crosses the network.

NCCL's hierarchical all-reduces (all stages streaming):

* ``nvls_tree`` (NVLS_TREE): an NVLS reduce-scatter inside each node (GPU g ends
  with its node's sum of slice g), NCCL's double binary tree across the nodes
  among the GPUs g (rail g), then an NVLS all-gather inside each node.
* ``collnet_direct`` (COLLNET_DIRECT): inside the node GPU g reduces slice g
  from its peers directly over NVLink, sends it into the InfiniBand fabric, which
  sums it across nodes (SHARP) and sends it back; the node all-gathers.
* ``collnet_chain`` (COLLNET_CHAIN): one chain per channel inside the node,
  reducing towards the channel's head GPU, whose NIC joins the fabric's sum;
  the chain then broadcasts the result back.

The fabric's sums happen in the leaf switch of each rail (``leaf<su>.<rail>``)
and, where the nodes span several Scalable Units, in the spine.

Introduced in the chapter *GPU collectives across nodes*.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .. import costs
from ..errors import CollectivesError
from ..schedule import COPY, REDUCE, Schedule, Step, Traffic, all_reduce_from, boxes_array, dual
from ..topology import GpuCluster, TpuSystem
from .alltoall import all_to_all_schedule
from .innetwork import direct_all_gather
from . import tiers
from .registry import Group, entry, register
from .rings import axis_kind, ring_all_gather
from .torus import lift_line, mesh_all_gather
from .shapes import double_binary_tree
from .trees import pipelined_tree_all_reduce


def hierarchical_all_gather(nodes: int, gpus: int, *, intra: str = "ring") -> Schedule:
    """Rails first: GPUs with the same local index gather across nodes over
    InfiniBand (one ring per rail), then each node gathers over NVLink.

    Slots are (node, gpu). The two stages stream (pipelined), so the slower one
    sets the time.
    """
    dims = (nodes, gpus)
    slot_shape = dims + (1,)
    cache: dict = {}
    steps: list[Step] = []
    if nodes > 1:
        steps += lift_line(ring_all_gather(nodes), dims, 0, [], slot_shape, 0,
                            "inter-node (InfiniBand)", cache)
    if gpus > 1:
        line = direct_all_gather(gpus) if intra == "direct" else ring_all_gather(gpus)
        steps += lift_line(line, dims, 1, [0], slot_shape, 0, "intra-node (NVLink)", cache)
    return Schedule.local("all_gather", "hierarchical", nodes * gpus, slot_shape, steps,
                          group_shape=dims, routing="routed", pipelined=True,
                          description="hierarchical: a ring per rail across nodes over "
                                      "InfiniBand, then a ring inside each node over NVLink")


def hierarchical_all_to_all(nodes: int, gpus: int, *, inner: str = "intra-node (NVLink)",
                            outer: str = "inter-node (InfiniBand)") -> Schedule:
    """Inside each node, GPU g first collects from its node peers everything bound
    for GPU g of every node; then rail g exchanges across nodes. Nothing can be
    reduced on the way: every byte still has to cross the network."""
    n = nodes * gpus
    dims = (nodes, gpus)
    slot_shape = (nodes, gpus, nodes, gpus, 1)
    r = np.arange(n)
    node, gpu = r // gpus, r % gpus
    steps = []
    if gpus > 1:
        # stage 1: rank (m, g) sends to (m, g') data from origin (m, g) for all (*, g')
        src, dst, boxes = [], [], []
        for d in range(1, gpus):
            g2 = (gpu + d) % gpus
            src.append(r)
            dst.append(node * gpus + g2)
            boxes.append(boxes_array([(node, 1), (gpu, 1), (0, nodes), (g2, 1), (0, 1)], n))
        src, dst, boxes = map(np.concatenate, (src, dst, boxes))
        steps.append((src, dst, boxes, inner))
    if nodes > 1:
        # stage 2: rank (m, g) sends to (m', g) everything from node m bound for (m', g)
        src, dst, boxes = [], [], []
        for d in range(1, nodes):
            m2 = (node + d) % nodes
            src.append(r)
            dst.append(m2 * gpus + gpu)
            boxes.append(boxes_array([(node, 1), (0, gpus), (m2, 1), (gpu, 1), (0, 1)], n))
        src, dst, boxes = map(np.concatenate, (src, dst, boxes))
        steps.append((src, dst, boxes, outer))
    sched = all_to_all_schedule(n, "hierarchical", slot_shape, steps, None, "routed",
                                "hierarchical all-to-all: regroup by destination GPU inside "
                                "the node over NVLink, then exchange along each rail")
    return dataclasses.replace(sched, group_shape=dims, pipelined=True)


# ---------------------------------------------------------------------------
# NCCL's NVLS_TREE and CollNet all-reduces
# ---------------------------------------------------------------------------

def _slices(nodes: int, gpus: int, g, extra=()) -> np.ndarray:
    """Boxes of slice ``g`` (every node's block g: ``(*, g)``) on a ``(nodes, gpus, ...)``
    grid, whole on the ``extra`` axes."""
    g = np.atleast_1d(np.asarray(g))
    return boxes_array([(0, nodes), (g, 1)] + [(0, e) for e in extra], len(g))


def nvls_tree_all_reduce(nodes: int, gpus: int, chunks: int = 8) -> Schedule:
    """NCCL's NVLS_TREE: NVLS inside the nodes, a double binary tree between them.

    1. NVLS reduce-scatter: every GPU sends its array into its node's NVSwitch
       (``nvswitch<m>``), which returns to GPU g the node's sum of slice g (block
       ``(*, g)``, 1/gpus of the array).
    2. Between the nodes, on every rail at once: GPU g of each node all-reduces its
       slice over NCCL's two complementary trees (half the slice each) in ``chunks``
       chunks per tree (:func:`~collectives_lib.builders.trees.pipelined_tree_all_reduce`).
    3. NVLS all-gather: GPU g stores the result into its node's multicast group
       (``multicast<m>``), which writes every slice to every GPU of the node.

    The stages stream (pipelined). Slots ``(nodes, gpus, 2, chunks)``: slice, tree
    half, chunk. Only the tree crosses the network: each NIC carries about
    ``2 V / gpus``, the ring's share, in ``2 log2(nodes) + chunks - 1`` steps.
    """
    M, G, K = nodes, gpus, int(chunks)
    n = M * G
    r = np.arange(n)
    node, gpu = r // G, r % G
    ranks = r.reshape(M, G)
    shape = (M, G, 2, K)
    switch, mcast = n + node, n + M + node
    # boxes are computed when read (replay, listings), not to time the schedule
    steps = [Step(Traffic.make(r, switch, REDUCE, 1.0),
                  lambda: boxes_array([(0, M), (0, G), (0, 2), (0, K)], n), "NVLS load-reduce"),
             Step(Traffic.make(switch, r, COPY, 1.0 / G), lambda: _slices(M, G, gpu, (2, K)),
                  "reduced slice")]
    rail = pipelined_tree_all_reduce(list(double_binary_tree(M)), K) if M > 1 else None
    cache: dict[int, Traffic] = {}
    for st in rail.steps if rail is not None else ():
        t = st.traffic
        if id(t) not in cache:              # rail g: local rank m is GPU g of node m
            cache[id(t)] = Traffic.make(ranks[t.src].T.ravel(), ranks[t.dst].T.ravel(),
                                        np.tile(t.op, G), np.tile(t.fraction, G) / G)

        def chunks_of(st=st, T=len(t)):
            b = st.boxes                                    # (T, 3, 2): (*, tree, chunk)
            out = np.empty((G * T, 4, 2), dtype=np.int64)
            out[:, 0] = (0, M)
            out[:, 1, 0], out[:, 1, 1] = np.repeat(np.arange(G), T), 1
            out[:, 2:] = np.tile(b[:, 1:], (G, 1, 1))
            return out
        steps.append(Step(cache[id(t)], chunks_of, "tree between nodes"))
    # NVLS all-gather: GPU g stores slice g; node m's multicast group writes all slices to all
    steps.append(Step(Traffic.make(r, mcast, COPY, 1.0 / G), lambda: _slices(M, G, gpu, (2, K)),
                      "store"))
    src = n + M + np.repeat(node, G)                           # (m, slice g) -> (m, g')
    dst = (np.repeat(node, G) * G + np.tile(np.arange(G), n))
    steps.append(Step(Traffic.make(src, dst, COPY, 1.0 / G),
                      lambda: _slices(M, G, np.repeat(gpu, G), (2, K)), "multicast"))
    agents = tuple(f"nvswitch{m}" for m in range(M)) + tuple(f"multicast{m}" for m in range(M))
    return Schedule.local("all_reduce", "nvls_tree", n, shape, steps, group_shape=(M, G),
                          routing="routed", agents=agents, pipelined=True,
                          description=f"NVLS_TREE: NVLS reduce-scatter in each node, a double "
                                      f"binary tree across the {M} nodes on every rail "
                                      f"({K} chunks per tree), NVLS all-gather in each node")


def _sharp_agents(nodes: int, gpus: int, nodes_per_su: int, rails: int
                  ) -> tuple[list[str], np.ndarray, int]:
    """The fabric's adders: agent names, and for every (node, gpu) the index of its
    leaf agent; the spine's index (-1 in one Scalable Unit)."""
    M, G = nodes, gpus
    su = np.arange(M) // nodes_per_su
    rail = np.arange(G) % rails
    names, leaf = [], np.zeros((M, G), dtype=np.int64)
    for m in range(M):
        for g in range(G):
            name = f"leaf{su[m]}.{rail[g]}"
            if name not in names:
                names.append(name)
            leaf[m, g] = names.index(name)
    spine = -1
    if su[-1] > 0:
        names.append("spine")
        spine = len(names) - 1
    return names, leaf, spine


def _network_sum(fabric: tuple[int, int, int, int], heads: np.ndarray, slices: np.ndarray
                 ) -> tuple[list, list[str]]:
    """Steps in which ``heads[i]`` (ranks) send slice ``slices[i]`` into the fabric and
    get back its sum over the nodes: the leaves of their rails add what their
    Scalable Unit sends; across Scalable Units the leaves send their sums to the spine,
    which adds those and sends the total back down."""
    M, G = fabric[:2]
    n = M * G
    names, leaf_of, spine = _sharp_agents(*fabric)
    node, gpu = heads // G, heads % G
    leaf = n + leaf_of[node, gpu]
    box = _slices(M, G, slices)
    steps = [Step(Traffic.make(heads, leaf, REDUCE, 1.0 / G), box, "reduce in the fabric (SHARP)")]
    if spine >= 0:
        # one transfer per (leaf, slice) that the leaf summed
        pairs = sorted(set(zip(leaf.tolist(), slices.tolist())))
        lf = np.array([p[0] for p in pairs])
        sl = np.array([p[1] for p in pairs])
        top = np.full(len(pairs), n + spine)
        steps.append(Step(Traffic.make(lf, top, REDUCE, 1.0 / G), _slices(M, G, sl), "reduce at the spine"))
        steps.append(Step(Traffic.make(top, lf, COPY, 1.0 / G), _slices(M, G, sl), "back to the leaves"))
    steps.append(Step(Traffic.make(leaf, heads, COPY, 1.0 / G), box, "multicast from the fabric"))
    return steps, names


def collnet_direct_all_reduce(nodes: int, gpus: int, *, nodes_per_su: int = 32,
                              rails: int | None = None) -> Schedule:
    """NCCL's COLLNET_DIRECT over a cluster whose fabric reduces (SHARP).

    GPU g of every node reduces slice g (block ``(*, g)``) from its node peers
    directly over NVLink (every GPU sends each peer its slice), sends the node's sum
    into the fabric through its NIC, gets the sum over all nodes back, and sends it
    directly to its node peers. Four streaming stages (six across Scalable Units):
    one NVLink step and one fabric crossing each way. GPU g uses rail ``g % rails``
    (default: one rail per GPU); ``nodes_per_su`` nodes share a leaf per rail.
    """
    M, G = nodes, gpus
    fabric_shape = (M, G, nodes_per_su, rails or G)
    n = M * G
    r = np.arange(n)
    node, gpu = r // G, r % G
    peers = (gpu[:, None] + np.arange(1, G)[None, :]) % G            # (n, G-1)
    src = np.repeat(r, G - 1)
    dst = (node[:, None] * G + peers).ravel()
    steps = []
    if G > 1:
        steps.append(Step(Traffic.make(src, dst, REDUCE, 1.0 / G), _slices(M, G, peers.ravel()),
                          "reduce-scatter in node (NVLink)"))
    fabric, agents = _network_sum(fabric_shape, r, gpu)
    steps += fabric
    if G > 1:
        steps.append(Step(Traffic.make(src, dst, COPY, 1.0 / G), _slices(M, G, np.repeat(gpu, G - 1)),
                          "all-gather in node (NVLink)"))
    return Schedule.local("all_reduce", "collnet_direct", n, (M, G), steps, group_shape=(M, G),
                          routing="routed", agents=tuple(agents), pipelined=True,
                          description="CollNet direct: each GPU reduces its slice from its node "
                                      "peers over NVLink, the InfiniBand fabric sums it across "
                                      "nodes (SHARP), and the node all-gathers it")


def collnet_chain_all_reduce(nodes: int, gpus: int, *, nodes_per_su: int = 32,
                             rails: int | None = None) -> Schedule:
    """NCCL's COLLNET_CHAIN over a cluster whose fabric reduces (SHARP).

    One channel per GPU of a node, channel c carrying slice c: in every node the
    GPUs form a chain ``c, c+1, ...`` whose head, GPU c, has the channel's NIC. The
    slice is reduced down the chain towards the head (``gpus - 1`` NVLink hops), the
    head sends it into the fabric, which sums it over the nodes and sends it back,
    and the chain broadcasts it (``gpus - 1`` hops). Every hop is a streaming stage.
    Rails and Scalable Units as in :func:`collnet_direct_all_reduce`.
    """
    M, G = nodes, gpus
    fabric_shape = (M, G, nodes_per_su, rails or G)
    n = M * G
    base = np.repeat(np.arange(M), G) * G                       # per (node, channel)
    channel = np.tile(np.arange(G), M)

    def at(position):                                           # rank at a chain position
        return base + (channel + position) % G

    box = _slices(M, G, channel)
    steps = [Step(Traffic.make(at(p), at(p - 1), REDUCE, 1.0 / G), box, f"chain reduce {G - p}")
             for p in range(G - 1, 0, -1)]
    fabric, agents = _network_sum(fabric_shape, at(0), channel)
    steps += fabric
    steps += [Step(Traffic.make(at(p - 1), at(p), COPY, 1.0 / G), box, f"chain broadcast {p}")
              for p in range(1, G)]
    return Schedule.local("all_reduce", "collnet_chain", n, (M, G), steps, group_shape=(M, G),
                          routing="routed", agents=tuple(agents), pipelined=True,
                          description="CollNet chain: a chain per channel reduces each slice "
                                      "towards the GPU with the channel's NIC, the InfiniBand "
                                      "fabric sums it across nodes (SHARP), and the chain "
                                      "broadcasts it back")


# ---------------------------------------------------------------------------
# Registered
# ---------------------------------------------------------------------------

def _reason(group: Group) -> str | None:
    if group.whole_cluster:
        return None
    if _multislice(group):
        return None
    return ("hierarchical runs over every GPU of a GPU cluster (both its node and gpu axes, "
            "the default), or over the slice axis and ICI axes of TPU slices joined by DCN")


def _multislice(group: Group) -> bool:
    """A group over the slice axis and at least one ICI axis of a TPU system."""
    topo = group.topology
    return isinstance(topo, TpuSystem) and topo.num_slices > 1 and group.axes[:1] == (0,) and len(group.axes) > 1


def _multislice_all_gather(group: Group) -> Schedule:
    """DCN first: each chip's own block crosses to its twins in the other slices (a ring
    over the slices, one message per chip and step), then the slice's ICI axes gather
    every block that arrived, all axes at once. Its dual reduce-scatter reduces over ICI
    first and sends only a chip's summed shard over DCN; the all-reduce is the pair:
    ICI reduce-scatter, DCN all-reduce of the shards, ICI all-gather."""
    topo = group.topology
    kinds = ["ring"] + [axis_kind(topo.slice, a - 1) for a in group.axes[1:]]
    sched = mesh_all_gather(group.shape, kinds, outer=0, outer_stage="DCN (across slices)")
    # chunks stream through the tiers: DCN works on one chunk while the ICI axes work on
    # another (stages on the same ICI links still add up: the simulator counts the busiest link)
    return dataclasses.replace(sched, pipelined=True)


def _hier_all_gather(g: Group) -> Schedule:
    return _multislice_all_gather(g) if _multislice(g) else _hag(g)


def _hier_all_to_all(g: Group) -> Schedule:
    if _multislice(g):
        n_inner = g.n // g.shape[0]
        return hierarchical_all_to_all(g.shape[0], n_inner, inner="ICI (inside each slice)",
                                       outer="DCN (across slices)")
    return hierarchical_all_to_all(g.topology.num_nodes, g.topology.gpus_per_node)


def _intra(group: Group) -> str:
    intra = group.options.get("intra", "ring")
    if intra not in ("ring", "direct"):
        raise CollectivesError(f"intra must be 'ring' or 'direct', got {intra!r}")
    return intra


def _ag_cost(group: Group, nbytes: float) -> float | None:
    """Over a GPU cluster of any size (Scalable Units, pods, oversubscription), tier by
    tier (:func:`.tiers.hierarchical_time`); on one Scalable Unit it is
    :func:`collectives_lib.costs.hierarchical_all_gather`."""
    if not tiers.applies(group.topology) or not group.whole_cluster:
        return None
    return tiers.hierarchical_time(group.topology, str(group.collective), nbytes, _intra(group))


def _busiest(group: Group, nbytes: float) -> str | None:
    topo = group.topology
    if not tiers.applies(topo) or not group.whole_cluster:
        return None
    if group.collective.layout == "pairs":
        return tiers.busiest_link(topo, tiers.hierarchical_all_to_all_stages(topo), group.n * nbytes)
    return tiers.busiest_link(topo, tiers.hierarchical_stages(topo, str(group.collective), _intra(group)), nbytes)


def _a2a_cost(group: Group, nbytes: float) -> float | None:
    """Over a GPU cluster of any size (:func:`.tiers.hierarchical_all_to_all_time`); on
    one Scalable Unit it is :func:`collectives_lib.costs.hierarchical_all_to_all`."""
    if not tiers.applies(group.topology) or not group.whole_cluster:
        return None
    return tiers.hierarchical_all_to_all_time(group.topology, group.n * nbytes)


def _hag(g: Group) -> Schedule:
    return hierarchical_all_gather(g.topology.num_nodes, g.topology.gpus_per_node, intra=_intra(g))


_DESCRIPTION = ("the slow tier and the fast tier apart: InfiniBand rails between nodes + NVLink inside "
                "them, or DCN between TPU slices + ICI inside them; pipelined")
register("hierarchical", "all_gather", applies=_reason, description=_DESCRIPTION,
         cost=_ag_cost, busiest=_busiest)(_hier_all_gather)
register("hierarchical", "reduce_scatter", applies=_reason, description=_DESCRIPTION,
         cost=_ag_cost, busiest=_busiest)(lambda g: dual(_hier_all_gather(g)))
register("hierarchical", "all_reduce", applies=_reason, description=_DESCRIPTION,
         cost=_ag_cost, busiest=_busiest)(lambda g: all_reduce_from(_hier_all_gather(g)))
register("hierarchical", "all_to_all", applies=_reason, description=_DESCRIPTION,
         cost=_a2a_cost, busiest=_busiest)(_hier_all_to_all)


def _nvls_tree_reason(group: Group) -> str | None:
    if not group.whole_cluster:
        return ("nvls_tree runs over every GPU of a GPU cluster of NVLS nodes (both its node "
                "and gpu axes, the default)")
    topo = group.topology
    if not topo.system.nvls:
        return f"nvls_tree needs NVLS nodes (NVSwitches that reduce and multicast); {topo!r} has none"
    if topo.num_nodes < 2:
        return f"nvls_tree joins nodes with a tree; {topo!r} has one node: use nvls (axes=gpu)"
    return None


def _nvls_crossing(topo: GpuCluster) -> tuple[float, float]:
    """One trip into or out of a node's NVSwitch as a participant, and the time its
    adders need per byte of one GPU's array (0: as fast as the links)."""
    crossing = topo.nvlink_latency + topo.agent_latency(topo.nvswitch_node(0))
    per_byte = topo.gpus_per_node / 4 / topo.reduce_flops if topo.reduce_flops else 0.0
    return crossing, per_byte


def _nvls_tree_cost(group: Group, nbytes: float) -> float | None:
    """Over any GPU cluster of NVLS nodes (:func:`.tiers.nvls_tree_time`); on a cluster
    whose links were changed apart (``book.scaling.slowed``), two nodes of one SU."""
    topo = group.topology
    if tiers.applies(topo) and topo.num_nodes > 1:
        return tiers.nvls_tree_time(topo, nbytes, group.chunks)
    if topo.num_nodes != 2 or topo.num_nodes > topo.nodes_per_su:
        return None
    crossing, per_byte = _nvls_crossing(topo)
    return costs.nvls_tree_all_reduce_two_nodes(
        topo.gpus_per_node, nbytes, topo.nic_bandwidth, topo.nvlink_bandwidth,
        2 * topo.nic_latency, crossing, per_byte * nbytes, group.chunks)


def _nvls_tree_busiest(group: Group, nbytes: float) -> str | None:
    topo = group.topology
    if tiers.applies(topo) and topo.num_nodes > 1:
        return tiers.nvls_tree_busiest(topo, nbytes, group.chunks)
    return None


def _nvls_tree_by_formula(group: Group) -> str | None:
    """Past :data:`.tiers.FORMULA_PAST` transfers the closed form (exact) times it."""
    footprint = entry("all_reduce", "nvls_tree").size          # (footprints.py)
    return tiers.past_formula(group, footprint(group)[0] if footprint else None,
                              "NVLS_TREE over {n} GPUs holds {transfers} transfers")


register("nvls_tree", "all_reduce", in_network=True, applies=_nvls_tree_reason, cost=_nvls_tree_cost, nccl="NVLS_TREE",
         busiest=_nvls_tree_busiest, by_formula=_nvls_tree_by_formula,
         description="NVLS reduce-scatter in each node, a double binary tree across nodes per rail, "
                     "NVLS all-gather; pipelined"
         )(lambda g: nvls_tree_all_reduce(g.topology.num_nodes, g.topology.gpus_per_node, g.chunks))


def _collnet_reason(name: str):
    def test(group: Group) -> str | None:
        topo = group.topology
        if not group.whole_cluster:
            return (f"{name} runs over every GPU of a GPU cluster whose InfiniBand fabric reduces "
                    f"in the network (GpuCluster(..., sharp=True))")
        if not topo.sharp:
            return (f"{name} needs InfiniBand SHARP: the fabric of {topo!r} only forwards; "
                    f"GpuCluster(..., sharp=True) makes one that reduces")
        if topo.gpus_per_node > 8:
            return (f"NCCL runs {name} with at most 8 GPUs per node; {topo!r} has "
                    f"{topo.gpus_per_node}")
        if topo.num_nodes < 2:
            return f"{name} sums across nodes in the fabric; {topo!r} has one node: use nvls or ring"
        return None
    return test


def _on_cluster(build):
    """A builder of the group's cluster: its nodes, GPUs, Scalable Units and rails."""
    def builder(group: Group) -> Schedule:
        t = group.topology
        return build(t.num_nodes, t.gpus_per_node, nodes_per_su=t.nodes_per_su, rails=t.rails)
    return builder


def _collnet_cost(chain: bool):
    def cost(group: Group, nbytes: float) -> float | None:
        topo = group.topology
        if topo.num_sus > 1:
            return None
        formula = costs.collnet_chain_all_reduce if chain else costs.collnet_direct_all_reduce
        return formula(topo.gpus_per_node, nbytes, topo.nic_bandwidth, topo.nvlink_bandwidth,
                       topo.nic_latency, topo.nvlink_latency)
    return cost


register("collnet_direct", "all_reduce", in_network=True, applies=_collnet_reason("collnet_direct"),
         cost=_collnet_cost(False), nccl="COLLNET_DIRECT",
         description="InfiniBand SHARP: each GPU reduces its slice from its node peers over NVLink, "
                     "the fabric sums it across nodes, the node all-gathers it"
         )(_on_cluster(collnet_direct_all_reduce))
register("collnet_chain", "all_reduce", in_network=True, applies=_collnet_reason("collnet_chain"),
         cost=_collnet_cost(True), nccl="COLLNET_CHAIN",
         description="InfiniBand SHARP: a chain per channel reduces towards the GPU with its NIC, "
                     "the fabric sums across nodes, the chain broadcasts back"
         )(_on_cluster(collnet_chain_all_reduce))
