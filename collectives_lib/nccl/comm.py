"""The communicator NCCL would see for a collective on a topology, and what it weighs.

:func:`comm_for` turns a topology (and the axes a collective spans) into a
:class:`~collectives_lib.nccl.tuner.Comm`; :func:`predictions` lists every
(algorithm, protocol) NCCL would consider for a collective and size, or its
point-to-point path (:mod:`collectives_lib.nccl.p2p`).

Introduced in the chapter *GPU collectives within the node*.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .. import hardware as hw
from ..collective import Collective, collective as as_collective
from ..errors import CollectivesError
from ..topology import GpuCluster, Topology
from . import measured, p2p, tables
from .tuner import FUNCTIONS, Comm, Prediction, Scale, make_comm, predict_all


def _system(topology: Topology) -> hw.GpuSystem | None:
    return topology.gpu_system if isinstance(topology, Topology) else None


def supports(topology: Topology) -> bool:
    """Whether NCCL's model applies: a GPU system preset with an NCCL profile."""
    s = _system(topology)
    return s is not None and s.nccl is not None


def comm_for(topology: Topology, axes=None, *, dtype: str = "float32", nvls: bool | None = None,
             algorithms=None, protocols=None) -> Comm:
    """The communicator NCCL would see for a collective over ``axes`` of ``topology``.

    On a GPU cluster the whole cluster is ``nodes`` x ``gpus_per_node``; over
    ``axes="gpu"`` each communicator is one node; over ``axes="node"`` it holds
    one GPU per node (a data-parallel group on one rail). ``nvls=False`` is
    ``NCCL_NVLS_ENABLE=0``; ``algorithms`` and ``protocols`` are ``NCCL_ALGO``
    and ``NCCL_PROTO`` (NCCL's names, case-insensitive).
    """
    s = _system(topology)
    if s is None or s.nccl is None:
        raise CollectivesError(
            f"NCCL's model needs a GPU system preset (nvswitch_node, GpuCluster); {topology!r} is "
            f"not one: use model='ideal'")
    groups = np.asarray(topology.axis_groups(axes))       # every group over axes, run at once
    nodes, ppn = _span(topology, groups)
    base = getattr(topology, "base", topology)       # a program's mesh laid on a preset: its fabric
    collnet = bool(getattr(base, "sharp", False)) and nodes * ppn == topology.num_ranks
    algos = tables.ALGORITHMS if algorithms is None else tuple(_names(algorithms, tables.ALGORITHMS, "NCCL_ALGO"))
    protos = tables.PROTOCOLS if protocols is None else tuple(_names(protocols, tables.PROTOCOLS, "NCCL_PROTO"))
    profile, nics, scale = machine(topology, s, ppn, groups_per_node=_groups_per_node(topology, groups))
    over = float(getattr(base, "oversubscription", 1.0)) if nodes > 1 else 1.0
    plugin = measured.PLUGIN_LATENCY.get(getattr(base, "fabric", ""), 0.0)
    return make_comm(s, nodes=nodes, ppn=ppn, collnet=collnet, nvls=nvls, dtype=dtype,
                     algorithms=algos, protocols=protos, nics=nics, profile=profile, scale=scale,
                     oversubscription=over, nodes_per_su=getattr(base, "nodes_per_su", 0),
                     latency_inter=plugin * 1e6, fabric=getattr(base, "fabric", "infiniband"))


def machine(topology: Topology, system: hw.GpuSystem, ppn: int, *,
            groups_per_node: int = 1) -> tuple[hw.NcclProfile, int, Scale]:
    """What NCCL's topology code would see on ``topology`` for a communicator of ``ppn``
    GPUs per node: the profile (the preset's, with the machine's own NIC speed), the
    NICs per node it reaches, and how far the topology's overridden link figures are
    from the preset's (:class:`~collectives_lib.nccl.tuner.Scale`).

    ``groups_per_node`` communicators running at once on each node (the groups of an
    axis, say one per GPU over ``axes="node"``) share the node's NICs: where their
    NICs together are more than the node has, each gets its share, and the network
    bandwidths are scaled down by it (NCCL's tuner sees one communicator alone)."""
    profile = system.nccl
    topology = getattr(topology, "base", topology)          # a program's mesh laid on a preset: the preset
    if isinstance(topology, GpuCluster):
        if topology.nic_rate != float(system.nic_bandwidth):
            profile = replace(profile, nic_bw=hw.Figure(topology.nic_rate / 1e9, "GB/s", "nccl-topo",
                                                        "the machine's NIC: its Mb/s / 8000"))
        # the NICs this communicator's GPUs use: their share of the node's (at least one)
        nics = max(1, round(topology.nics_per_node * ppn / topology.gpus_per_node))
        share = topology.nics_per_node * topology.nic_rate / topology.gpus_per_node
        shared = min(1.0, topology.nics_per_node / (max(1, groups_per_node) * nics))
        scale = Scale(nvlink=topology.nvlink_bandwidth / float(system.nvlink_bandwidth),
                      net=topology.nic_bandwidth / share * shared,
                      nvlink_latency=_ratio(topology.nvlink_latency, system.nvlink_latency),
                      net_latency=_ratio(topology.nic_latency, system.nic_latency))
        return profile, nics, scale
    scale = Scale(nvlink=topology.bandwidth / float(system.nvlink_bandwidth),
                  nvlink_latency=_ratio(topology.latency, system.nvlink_latency))
    return profile, ppn, scale


def _ratio(value: float, preset) -> float:
    base = float(preset)
    return value / base if base > 0 else 1.0


def _groups_per_node(topology: Topology, groups: np.ndarray) -> int:
    """How many of ``groups`` (an axis's groups, all running at once) have ranks on the
    node of the first group's first rank."""
    per = getattr(topology, "gpus_per_node", topology.num_ranks)
    node = int(groups[0][0]) // per
    return int(np.any(groups // per == node, axis=1).sum())


def _span(topology: Topology, groups: np.ndarray) -> tuple[int, int]:
    """(nodes, GPUs per node) of the communicator of ``groups[0]``: the nodes its
    ranks sit on, and its ranks per node (on a switch, one node). A program's
    mesh laid on the GPUs (:func:`collectives_lib.topology.with_mesh`) may split a
    node: data=4,model=4 on two nodes of 8 gives each data group 2 nodes x 2 GPUs."""
    group = groups[0]
    nodes = len(np.unique(group // getattr(topology, "gpus_per_node", topology.num_ranks)))
    return nodes, len(group) // nodes


def _names(values, allowed, what) -> list[str]:
    if isinstance(values, str):
        values = [v for v in values.replace(";", ",").split(",") if v.strip()]
    out = []
    for v in values:
        key = str(v).strip().upper()
        if key == "SIMPLE" or key in allowed:
            out.append(key)
        else:
            raise CollectivesError(f"{what} {v!r} is not one of {', '.join(allowed)}")
    if not out:
        raise CollectivesError(f"{what} needs at least one of {', '.join(allowed)}")
    return out


def predictions(collective, nbytes: int, comm: Comm, *, same_node: bool | None = None,
                share: float = 1.0) -> list[Prediction]:
    """Everything NCCL would consider for ``collective`` of ``nbytes`` (nccl-tests' size).
    For a send, ``same_node`` says whether its two GPUs share a node (None: whether the
    communicator is one node) and ``share`` what its route leaves it of its network rate
    while the other groups' sends cross the same links (:func:`send_share`)."""
    coll = as_collective(collective)
    if coll.value in FUNCTIONS:
        return predict_all(coll, nbytes, comm)
    # the rest NCCL runs as grouped sends and receives (Collective.personalised)
    if coll is Collective.ALL_TO_ALL:
        return [p2p.all_to_all(nbytes, comm)]
    if coll is Collective.GATHER:
        return [p2p.gather(nbytes, comm)]
    return [p2p.send(nbytes, comm, same_node=comm.nodes == 1 if same_node is None else bool(same_node),
                     share=share)]


def send_same_node(topology: Topology, group_ranks, options) -> bool:
    """Whether a send's ``src`` and ``dst`` (ranks of the group ``group_ranks``; by default
    its first and last) sit on one node, so that NCCL sends over NVLink, not the network."""
    ranks = np.asarray(group_ranks)
    s = int(ranks[int(options.get("src", 0))])
    d = int(ranks[int(options.get("dst", len(ranks) - 1))])
    per = getattr(topology, "gpus_per_node", topology.num_ranks)
    return s // per == d // per


def send_share(topology: Topology, groups, options) -> float:
    """What a send across nodes keeps of its route's rate while the sends of every group
    (over an axis, one pair in each, all at once) cross the fabric: the busiest link's
    bandwidth per message it carries, over the first pair's route alone (1 where no link is
    shared beyond its bandwidth, as on a full fat tree; an oversubscribed leaf uplink that
    32 pairs cross at once leaves each less). NCCL's tuner sees one communicator alone."""
    groups = np.asarray(groups, dtype=np.int64)
    i, j = int(options.get("src", 0)), int(options.get("dst", groups.shape[1] - 1))
    links = topology.links
    alone = topology.routes(groups[:1, i], groups[:1, j])
    if len(groups) < 2 or not len(alone.inc_link):
        return 1.0
    every = topology.routes(groups[:, i], groups[:, j])
    load = np.bincount(every.inc_link, weights=every.sub_weight[every.inc_sub], minlength=len(links.src))
    on = load > 1e-12
    own = np.bincount(alone.inc_link, weights=alone.sub_weight[alone.inc_sub], minlength=len(links.src))
    mine = own > 1e-12
    shared = float((links.bandwidth[on] / load[on]).min())
    single = float((links.bandwidth[mine] / own[mine]).min())
    return min(1.0, shared / single) if single > 0 else 1.0
