"""NCCL's point-to-point path: send/recv, all-to-all and gather.

NCCL's tuner has no model for these: an all-to-all is a group of sends and
receives, scheduled peer by peer (NCCL 2.30.7, ``src/enqueue.cc``). This is the
book's own model of that path, in NCCL's units (see
:data:`collectives_lib.hardware.SOURCES`, key ``nccl-p2p-model``):

* every operation pays a fixed cost, and every peer a message cost;
* bytes to peers in the same node cross the GPU's NVLinks at ``NVLINK_EFFICIENCY``
  of what NCCL's topology code counts for them (370.8 GB/s on H100);
* bytes to other nodes leave through one NIC per GPU, whatever the peer's rail
  (PXN forwards over NVLink to the NIC on the destination's rail, but one GPU's
  traffic still cannot use more than one NIC's path): 48 GB/s on a 400G NIC
  behind PCIe Gen5.

So an all-to-all over one 8-GPU H100 node moves each GPU's 7/8 of its buffer at
about 345 GB/s, and over two nodes half of it goes through one 48 GB/s NIC:
the cliff from one node to two, about 4x in bus bandwidth.

Introduced in the chapter *GPU collectives across nodes* (the all-to-all cliff).
"""

from __future__ import annotations

from .tuner import Comm, Prediction

#: Fixed cost of one grouped point-to-point operation (s) and of each peer in it:
#: fitted to the published 8-GPU B200 all-to-all (11 us at 128 bytes, 7 peers).
BASE = 4e-6
PER_PEER = 1e-6
#: Share of NCCL's NVLink figure a GPU's point-to-point traffic reaches: fitted to the
#: same run's 672 GB/s bus bandwidth at 16 GiB (721.8 GB/s counted).
NVLINK_EFFICIENCY = 0.93


def _rates(comm: Comm) -> tuple[float, float]:
    """(NVLink bytes/s, network bytes/s) of one GPU's point-to-point traffic."""
    return (NVLINK_EFFICIENCY * comm.profile.nvlink_bw * 1e9, comm.profile.net_bw * 1e9)


def all_to_all(nbytes: int, comm: Comm) -> Prediction:
    """An all-to-all of ``nbytes`` per rank (nccl-tests' size): ``1/N`` of it to each rank,
    as NCCL runs it, one grouped send/receive to every peer (NCCL has no all-to-all
    algorithm of its own)."""
    n, g = comm.nranks, comm.ppn
    m = comm.nodes
    nvl, net = _rates(comm)
    intra = (g - 1) / n * nbytes
    inter = (n - g) / n * nbytes
    t_bw = max(intra / nvl if g > 1 else 0.0, inter / net if m > 1 else 0.0)
    lat = BASE + PER_PEER * (n - 1) if n > 1 else 0.0
    time = lat + t_bw
    busbw = (nbytes / time * (n - 1) / n) if time > 0 else 0.0
    return Prediction("all_to_all", "P2P", "SIMPLE", int(nbytes), lat, nbytes / t_bw if t_bw else 0.0,
                      busbw, time)


def send(nbytes: int, comm: Comm, *, same_node: bool) -> Prediction:
    """One message of ``nbytes`` between two GPUs."""
    nvl, net = _rates(comm)
    rate = nvl if same_node else net
    lat = BASE + PER_PEER
    return Prediction("send", "P2P", "SIMPLE", int(nbytes), lat, rate, rate, lat + nbytes / rate)


def gather(nbytes: int, comm: Comm) -> Prediction:
    """Every rank sends its ``1/N`` of ``nbytes`` to one root."""
    n, g = comm.nranks, comm.ppn
    nvl, net = _rates(comm)
    intra = (g - 1) / n * nbytes
    inter = (n - g) / n * nbytes
    t_bw = max(intra / nvl if g > 1 else 0.0, inter / net if comm.nodes > 1 else 0.0)
    lat = BASE + PER_PEER * (n - 1) if n > 1 else 0.0
    return Prediction("gather", "P2P", "SIMPLE", int(nbytes), lat, nbytes / t_bw if t_bw else 0.0,
                      (nbytes / (lat + t_bw) * (n - 1) / n) if lat + t_bw else 0.0, lat + t_bw)
