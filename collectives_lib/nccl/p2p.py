"""NCCL's point-to-point path: send/recv, all-to-all and gather.

NCCL's tuner has no model for these: an all-to-all is a group of sends and
receives, scheduled peer by peer (NCCL 2.30.7, ``src/enqueue.cc``). This is the
book's own model of that path, in NCCL's units (see
:data:`collectives_lib.hardware.SOURCES`, key ``nccl-p2p-model``):

* every operation pays a fixed cost, and every peer a message cost;
* bytes to peers in the same node cross the GPU's NVLinks at ``NVLINK_EFFICIENCY``
  of what NCCL's topology code counts for them (370.8 GB/s on H100);
* bytes to other nodes leave through the GPU's share of its node's NICs, whatever
  the peer's rail (PXN forwards over NVLink to the NIC on the destination's rail):
  one NIC's path with one NIC per GPU (48 GB/s on a 400G NIC behind PCIe Gen5),
  half of one when two GPUs share a NIC, both of two NICs up to the GPU's own PCIe
  link (B300 nodes with two 400G ports per GPU reach 96 GB/s);
* bytes bound for other Scalable Units also cross the leaves' uplinks, which an
  oversubscribed fabric narrows.

So an all-to-all over one 8-GPU H100 node moves each GPU's 7/8 of its buffer at
about 345 GB/s, and over two nodes half of it goes through one 48 GB/s NIC:
the cliff from one node to two, about 4x in bus bandwidth.

Introduced in the chapter *GPU collectives across nodes* (the all-to-all cliff).
"""

from __future__ import annotations

from . import tables as T
from .tuner import Comm, Prediction

#: Fixed cost of one grouped point-to-point operation (s) and of each peer in it:
#: fitted to the published 8-GPU B200 all-to-all (11 us at 128 bytes, 7 peers).
BASE = 4e-6
PER_PEER = 1e-6
#: Share of NCCL's NVLink figure a GPU's point-to-point traffic reaches: fitted to the
#: same run's 672 GB/s bus bandwidth at 16 GiB (721.8 GB/s counted).
NVLINK_EFFICIENCY = 0.93


def _rates(comm: Comm) -> tuple[float, float]:
    """(NVLink bytes/s, network bytes/s) of one GPU's point-to-point traffic: the GPU's
    NVLinks at NVLINK_EFFICIENCY, and its share of the node's NIC paths (one NIC per
    GPU: one path; two GPUs per NIC: half of one; two NICs per GPU: both, up to the
    GPU's own PCIe link), each times the topology's scale against its preset."""
    nics = comm.nics or comm.ppn
    net = min(comm.profile.net_bw * nics / comm.ppn, float(comm.profile.gpu_nic_bw))
    return (NVLINK_EFFICIENCY * comm.profile.nvlink_bw * 1e9 * comm.scale.nvlink,
            net * 1e9 * comm.scale.net)


def all_to_all(nbytes: int, comm: Comm) -> Prediction:
    """An all-to-all of ``nbytes`` per rank (nccl-tests' size): ``1/N`` of it to each rank,
    as NCCL runs it, one grouped send/receive to every peer (NCCL has no all-to-all
    algorithm of its own)."""
    n, g = comm.nranks, comm.ppn
    m = comm.nodes
    nvl, net = _rates(comm)
    intra = (g - 1) / n * nbytes
    inter = (n - g) / n * nbytes
    t_bw = max(intra / nvl if g > 1 else 0.0, _network_time(inter, net, comm) if m > 1 else 0.0)
    lat = _latency(comm, n - 1, m > 1)
    time = lat + t_bw
    busbw = (nbytes / time * (n - 1) / n) if time > 0 else 0.0
    return Prediction("all_to_all", "P2P", "SIMPLE", int(nbytes), lat, nbytes / t_bw if t_bw else 0.0,
                      busbw, time)


def _latency(comm: Comm, peers: int, across: bool) -> float:
    """The fixed cost (s) of a grouped send to ``peers`` peers: BASE and PER_PEER, and no
    less than one step over the slowest path the messages take (NCCL's per-step NVLink
    latency, and its network one when some peers are on other nodes), each scaled with the
    topology's link latencies against its preset's (at the preset's, BASE is the larger)."""
    if peers < 1:
        return 0.0
    path = T.HW_LATENCY["NVLINK"]["RING"][2] * comm.scale.nvlink_latency
    if across:
        path = max(path, T.HW_LATENCY["NET"]["RING"][2] * comm.scale.net_latency)
    return max(BASE + PER_PEER * peers, path * 1e-6)


def _network_time(inter: float, net: float, comm: Comm) -> float:
    """The time of ``inter`` bytes per GPU to the other nodes, spread evenly: through
    its NICs at ``net``, and the share bound for other Scalable Units through its
    leaf's uplink, which carries 1/oversubscription of what the leaf's NICs inject."""
    t = inter / net
    su = comm.nodes_per_su or comm.nodes
    if comm.oversubscription > 1 and comm.nodes > su:
        cross = inter * (comm.nodes - su) / (comm.nodes - 1)
        t = max(t, cross * comm.oversubscription / net)
    return t


def send(nbytes: int, comm: Comm, *, same_node: bool, share: float = 1.0) -> Prediction:
    """One message of ``nbytes`` between two GPUs; across nodes at ``share`` of the GPU's
    network rate where other sends crowd its route (an oversubscribed uplink)."""
    nvl, net = _rates(comm)
    rate = nvl if same_node else net * min(1.0, share)
    lat = _latency(comm, 1, not same_node)
    return Prediction("send", "P2P", "SIMPLE", int(nbytes), lat, rate, rate, lat + nbytes / rate)


def gather(nbytes: int, comm: Comm) -> Prediction:
    """Every rank sends its ``1/N`` of ``nbytes`` to one root."""
    n, g = comm.nranks, comm.ppn
    nvl, net = _rates(comm)
    intra = (g - 1) / n * nbytes
    inter = (n - g) / n * nbytes
    t_bw = max(intra / nvl if g > 1 else 0.0, _network_time(inter, net, comm) if comm.nodes > 1 else 0.0)
    lat = _latency(comm, n - 1, comm.nodes > 1)
    return Prediction("gather", "P2P", "SIMPLE", int(nbytes), lat, nbytes / t_bw if t_bw else 0.0,
                      (nbytes / (lat + t_bw) * (n - 1) / n) if lat + t_bw else 0.0, lat + t_bw)
