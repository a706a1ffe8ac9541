"""Hierarchical collectives on GPU clusters: InfiniBand rails between nodes, NVLink inside.

An all-gather first gathers across nodes along each rail (GPUs with the same
local index, one ring per rail), then inside each node; the two stages stream,
so the slower one sets the pace. Reduce-scatter is its dual and all-reduce the
pair. The hierarchical all-to-all regroups by destination GPU inside the node,
then exchanges along each rail: every byte still crosses the network.

Introduced in the chapter *GPU collectives across nodes*.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .. import costs
from ..errors import CollectivesError
from ..schedule import Schedule, Step, all_reduce_from, boxes_array, dual
from ..topology import GpuCluster
from .alltoall import all_to_all_schedule
from .innetwork import direct_all_gather
from .registry import Group, register
from .rings import ring_all_gather
from .torus import lift_line


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


def hierarchical_all_to_all(nodes: int, gpus: int) -> Schedule:
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
        steps.append((src, dst, boxes, "intra-node (NVLink)"))
    if nodes > 1:
        # stage 2: rank (m, g) sends to (m', g) everything from node m bound for (m', g)
        src, dst, boxes = [], [], []
        for d in range(1, nodes):
            m2 = (node + d) % nodes
            src.append(r)
            dst.append(m2 * gpus + gpu)
            boxes.append(boxes_array([(node, 1), (0, gpus), (m2, 1), (gpu, 1), (0, 1)], n))
        src, dst, boxes = map(np.concatenate, (src, dst, boxes))
        steps.append((src, dst, boxes, "inter-node (InfiniBand)"))
    sched = all_to_all_schedule(n, "hierarchical", slot_shape, steps, None, "routed",
                                "hierarchical all-to-all: regroup by destination GPU inside "
                                "the node over NVLink, then exchange along each rail")
    return dataclasses.replace(sched, group_shape=dims, pipelined=True)


# ---------------------------------------------------------------------------
# Registered
# ---------------------------------------------------------------------------

def _reason(group: Group) -> str | None:
    if group.whole_cluster:
        return None
    return ("hierarchical runs over every GPU of a GPU cluster (both its node and gpu axes, "
            "the default)")


def _intra(group: Group) -> str:
    intra = group.options.get("intra", "ring")
    if intra not in ("ring", "direct"):
        raise CollectivesError(f"intra must be 'ring' or 'direct', got {intra!r}")
    return intra


def _cluster_links(group: Group):
    """(nodes, gpus, W_nic, W_nvlink, alpha_nic, alpha_nvlink) when every rail ring stays
    inside one Scalable Unit (two links per hop, no spine), else None."""
    topo = group.topology
    if not isinstance(topo, GpuCluster) or topo.num_nodes > topo.nodes_per_su:
        return None
    return (topo.num_nodes, topo.gpus_per_node, topo.nic_bandwidth, topo.nvlink_bandwidth,
            2 * topo.nic_latency, 2 * topo.nvlink_latency)


def _ag_cost(factor: float):
    def cost(group: Group, nbytes: float) -> float | None:
        links = _cluster_links(group)
        if links is None or _intra(group) != "ring":
            return None
        return factor * costs.hierarchical_all_gather(*links[:2], nbytes, *links[2:4],
                                                      alpha_nic=links[4], alpha_nvlink=links[5])
    return cost


def _a2a_cost(group: Group, nbytes: float) -> float | None:
    links = _cluster_links(group)
    if links is None:
        return None
    return costs.hierarchical_all_to_all(*links[:2], group.n * nbytes, *links[2:4],
                                         alpha_nic=links[4], alpha_nvlink=links[5])


def _hag(g: Group) -> Schedule:
    return hierarchical_all_gather(g.topology.num_nodes, g.topology.gpus_per_node, intra=_intra(g))


_DESCRIPTION = "InfiniBand rails between nodes + NVLink inside nodes, pipelined"
register("hierarchical", "all_gather", applies=_reason, description=_DESCRIPTION,
         cost=_ag_cost(1.0))(_hag)
register("hierarchical", "reduce_scatter", applies=_reason, description=_DESCRIPTION,
         cost=_ag_cost(1.0))(lambda g: dual(_hag(g)))
register("hierarchical", "all_reduce", applies=_reason, description=_DESCRIPTION,
         cost=_ag_cost(2.0))(lambda g: all_reduce_from(_hag(g)))
register("hierarchical", "all_to_all", applies=_reason, description=_DESCRIPTION,
         cost=_a2a_cost)(lambda g: hierarchical_all_to_all(g.topology.num_nodes,
                                                           g.topology.gpus_per_node))
