"""From NCCL's prediction to what nccl-tests measures.

NCCL's tuner predicts ``latency + nBytes / bandwidth`` and picks the least.
Published nccl-tests runs agree with it at the two ends (a few microseconds of
latency; the large-message bandwidth) but differ in four ways this module
models. Its constants are fitted to named published runs
(``collectives_lib/data/nccl_tests/fits.csv``) and held to the others.

* **The pipeline fill.** NCCL moves each channel's data as a pipeline of
  chunks; a pipeline of ``k`` chunks through a path of per-chunk latency ``L``
  takes, at the best chunk size, ``V / B + L + 2 sqrt(L V / B)``. The tuner
  counts the first two terms; the third is added here, with ``L`` per algorithm
  (:data:`PIPELINE_LATENCY`), where a stage must hold a whole step of about half a
  megabyte (:data:`STEP_BYTES`) before the next can use it: Simple everywhere,
  LL128 across nodes (over NVLink its receiver reads each 128-byte line as the
  line's flag lands); never LL, whose steps carry 32 KiB. So a 1 MiB all-reduce on
  one H100 node (ring/LL) is priced as the tuner prices it.
* **What NCCL then runs.** On one NVLS node the search's NVLS network figure
  caps the tuner's NVLS bandwidth although no byte goes to the network: the
  measured time uses the NVLink term. Across nodes NCCL runs NVLS_TREE on
  ``comm->nvlsChannels`` channels (32 on Blackwell across nodes, 16 on Hopper:
  :func:`~collectives_lib.nccl.graphs.nvls_channels`), more than the search's
  heads the tuner counts, so its per-channel cap applies per launched channel,
  and the NVLink part runs at the NVLink speed the one-node search finds; the
  NICs still bound it. Racks of GB200/GB300 trays joined this way keep
  :data:`NVLS_TREE_MNNVL` of it (fitted, not derived).
* **The launch.** One process driving ``G`` GPUs (nccl-tests ``-g G``) launches
  each GPU's kernel in turn, and successive iterations overlap, so an
  iteration takes at least ``G`` launches: ``max(time, G * LAUNCH)``
  (:data:`LAUNCH`, and :data:`LAUNCH_GRAPH` when nccl-tests captures the
  iterations in a CUDA Graph, ``-G``). One process per GPU pays one launch,
  which the tuner's base latency already holds.
* **Registered buffers** (nccl-tests ``-R 2``) run NCCL's symmetric kernels
  (:mod:`collectives_lib.nccl.symmetric`), timed by their own model.

>>> from collectives_lib.nccl.tuner import Comm, choose
>>> comm = Comm.for_system("dgx-h100", nodes=1)
>>> p = choose("all_reduce", 2**24, comm)
>>> round(p.time * 1e6, 1), round(measured_time(p, comm) * 1e6, 1)
(86.7, 108.9)

Introduced in the chapter *Measure it yourself* (the model against published runs).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .. import checks
from ..errors import CollectivesError
from . import tables as T
from .graphs import nvls_channels, search
from .tables import SPEED_LADDERS
from .tuner import Comm, Prediction, bandwidth, function, nvls_channel_bandwidth

#: Per-chunk pipeline latency (s) by NCCL algorithm, fitted to the runs fits.csv names.
#: A ring's chunks cross NVLink within a node and the network between nodes, whose per-step
#: latency is several times NVLink's (the tuner's hwLat): RING_NET is a ring across nodes.
PIPELINE_LATENCY = {"RING": 2e-6, "RING_NET": 0.25e-6, "TREE": 3e-6, "NVLS": 2e-6, "NVLS_TREE": 16e-6,
                    "COLLNET_DIRECT": 0.25e-6, "COLLNET_CHAIN": 0.25e-6, "PAT": 0.0, "P2P": 4e-6}
#: One kernel launch from a process driving several GPUs (s): fitted (fits.csv).
LAUNCH = 5.2e-6
#: The same with the iterations captured in a CUDA Graph (nccl-tests -G): fitted.
LAUNCH_GRAPH = 4.2e-6
#: The latency (s) a network plugin reports to NCCL (``ncclNetProperties_t.latency``), by
#: fabric kind: NCCL's tuner adds it to every network step, twice for Simple
#: (``src/graph/tuning.cc``: ``interLat += graphs[a]->latencyInter``, then "the flush extra
#: latency"). NCCL's own IB verbs transport, InfiniBand or RoCE, reports 0 (``net_ib``:
#: "Not set"); Google's gIB plugin (RoCE on GKE and GCE A3 Ultra and A4) is not public, so
#: its figure is fitted (fits.csv).
PLUGIN_LATENCY = {"gib": 14e-6}
#: What one call across nodes over NCCL's own network transport (IB verbs: InfiniBand or
#: RoCE) takes beyond the tuner's latencies (s), once per call: fitted (fits.csv) on the
#: fit set's InfiniBand runs with sizes below 1 MiB (2 and 4 nodes of H100, 2 of A100),
#: whose floors are 30-40 us where the tuner's are 25-35. Not derived: the tuner's
#: latencies are the figures NCCL compares algorithms by (a base per algorithm and
#: protocol, a few microseconds a network step), and they stay as they are, so what
#: NCCL picks does not change; the measured time carries the rest. Not added over a
#: network plugin that reports its own latency (gIB: :data:`PLUGIN_LATENCY`).
NET_LATENCY = 8e-6
#: The fabrics whose traffic NCCL's own IB verbs transport carries.
NCCL_NET_FABRICS = ("infiniband", "roce")
#: The share of the NVLS bandwidth one NVLink domain reaches that NVLS_TREE keeps when it
#: joins domains that span several hosts (MNNVL: racks of GB200/GB300 trays, each rack one
#: NCCL node) over the network: fitted (fits.csv), not derived. NCCL's source gives no such
#: loss: its tuner prices the rack's NVLink part as on one rack (the network term, twice
#: bw_inter on two nodes, does not bind), the heads' NICs carry a 32nd of the message, and
#: the kernel moves the same bytes over NVLink as NVLS on one rack (its one difference, 6
#: and 5 scatter and gather warps on a head with a tree parent against 8 and 7, is on
#: every channel on two racks and on three alike). 8-GPU nodes joined by NVLS_TREE keep 1.
NVLS_TREE_MNNVL = 0.88
SOURCE = "nccl-p2p-model"


@dataclass(frozen=True)
class Launch:
    """How the GPUs are driven: ``gpus_per_process`` GPUs per process (1: one process
    per GPU; nccl-tests ``-g``), ``graph`` the iterations captured in a CUDA Graph
    (nccl-tests ``-G``)."""

    gpus_per_process: int = 1
    graph: bool = False

    def floor(self) -> float:
        """The least time an iteration takes: one launch per GPU the process drives."""
        if self.gpus_per_process <= 1:
            return 0.0
        return self.gpus_per_process * (LAUNCH_GRAPH if self.graph else LAUNCH)

    def __str__(self) -> str:
        base = "process-per-gpu" if self.gpus_per_process == 1 else f"gpus-per-process={self.gpus_per_process}"
        return base + ("+graph" if self.graph else "")


LAUNCH_HELP = ("launch is process-per-gpu (the default), gpus-per-process=G (one process drives G GPUs "
               "of a node, nccl-tests -g G), or either with +graph (iterations in a CUDA Graph, -G 1)")


def parse_launch(value, gpus_per_node: int) -> Launch:
    """``launch`` as :class:`Launch`: None or ``"process-per-gpu"``, ``"gpus-per-process=G"``
    (G at most the GPUs per node of the communicator), either with ``"+graph"``."""
    if value is None:
        return Launch()
    if isinstance(value, Launch):
        launch = value
    else:
        text = str(value).strip().lower()
        graph = text.endswith("+graph")
        base = text.removesuffix("+graph")
        if base in ("process-per-gpu", ""):
            g = 1
        elif base.startswith("gpus-per-process="):
            try:
                g = int(base.split("=", 1)[1])
            except ValueError:
                raise CollectivesError(f"launch {value!r}: G must be a whole number; {LAUNCH_HELP}") from None
        else:
            raise CollectivesError(f"launch {value!r} is not understood; {LAUNCH_HELP}")
        launch = Launch(checks.whole(g, "GPUs per process") if g != 1 else 1, graph)
    if launch.gpus_per_process > gpus_per_node:
        raise CollectivesError(f"launch {launch}: a process drives GPUs of one node, and this "
                               f"communicator has {gpus_per_node} per node")
    return launch


def _nvls_tree_bandwidth(p: Prediction, comm: Comm) -> float:
    """NVLS_TREE as NCCL runs it (bytes/s against nBytes): per head the least of the
    NVLink part at the one-node NVLS speed (times :data:`NVLS_TREE_MNNVL` where the nodes
    are racks of trays), the network part (twice bw_inter on two nodes, as the tuner),
    and the tuner's per-channel cap over the channels NCCL launches; no more than the
    heads' NICs carry."""
    g = comm.graphs["nvls"]
    heads = g.channels
    one_node = search(comm.profile, nodes=1, ppn=comm.ppn)["nvls"]
    if one_node is None or heads < 2:
        return p.bandwidth
    eff = T.NVLS_EFFICIENCY[comm.arch] * (heads - 1) / heads * 2 * comm.scale.nvlink
    if comm.hosts > 1:                  # racks joined: what they keep of one rack's NVLS (fitted)
        eff *= NVLS_TREE_MNNVL
    intra = nvls_speed(comm.profile, comm.ppn, one_node.channels, one_node.bw_intra) * eff
    inter = g.bw_inter * (2 if comm.nodes <= 2 else 1)
    launched = nvls_channels(comm.profile, nodes=comm.nodes, ppn=comm.ppn)
    cap = T.NVLS_TREE_MAX_BW[comm.arch][comm.n2] * max(1.0, launched / heads)
    bus = heads * min(intra, inter, cap)
    # the heads' NICs: on two nodes each head sends and receives its slice once
    # (algbw = heads x NIC), on more a tree's inner nodes carry two children's
    n = comm.nranks
    nic = heads * g.bw_inter * (1.0 if comm.nodes <= 2 else 0.5)
    return min(bus * n / (2 * (n - 1)), nic) * 1e9


def nvls_speed(profile, ppn: int, heads: int, searched: float) -> float:
    """The per-head NVLink speed (GB/s) NVLS runs at on one node: the search's, unless the
    search's ladder tops out below the NVLink's share ``nvlink / (heads + 1)`` (each GPU's
    link carries its head's slice twice and every other once): with few GPUs the
    ladder's top (60 GB/s on SM90, 90 on SM100) caps the search's channels, but NCCL
    launches ``nvlsChannels`` channels, more than the heads, and fills the link."""
    top = max(SPEED_LADDERS[100 if profile.sm >= 100 else (90 if profile.sm >= 90 else 80)][0])
    share = profile.nvlink_bw / (heads + 1)
    return share if searched >= top - 1e-9 and share > searched else searched


def _nvls_one_node_bus(func: str, comm: Comm) -> float:
    """NVLS's bus bandwidth (GB/s) on one node as it runs: NCCL's per-channel formula
    (nvls_channel_bandwidth) at the speed :func:`nvls_speed` gives."""
    g = comm.graphs["nvls"]
    base = comm.unscaled["nvls"] if comm.unscaled else g
    speed = nvls_speed(comm.profile, comm.ppn, g.channels, base.bw_intra) * (g.bw_intra / base.bw_intra)
    return g.channels * nvls_channel_bandwidth(func, comm) * speed / g.bw_intra


def _bandwidth(p: Prediction, comm: Comm) -> float:
    """The bandwidth (bytes/s against nBytes) a run reaches: the tuner's, except NVLS on
    one node and NVLS_TREE across nodes, where NCCL runs more than the tuner counts."""
    if p.algorithm == "NVLS" and comm.nodes == 1 and comm.graphs.get("nvls") is not None:
        func = function(p.collective)
        bus = _nvls_one_node_bus(func, comm)
        tuned = bandwidth(func, "NVLS", "SIMPLE", comm) * 1e9
        ratio = (comm.nranks / (2 * (comm.nranks - 1))) if func == "AllReduce" else 1.0
        return max(tuned, bus * ratio * 1e9)
    bw = p.bandwidth
    if p.algorithm == "NVLS_TREE" and comm.nodes > 1 and comm.graphs.get("nvls") is not None:
        bw = _nvls_tree_bandwidth(p, comm)
    return bw * _spine_factor(p, comm)


def _spine_factor(p: Prediction, comm: Comm) -> float:
    """An oversubscribed fabric: a ring or tree channel crosses a leaf's uplink once
    between Scalable Units, and the uplink carries its NICs' worth (one per node of
    the Scalable Unit) over the oversubscription; a channel faster than that slows."""
    su = comm.nodes_per_su or comm.nodes
    if comm.oversubscription <= 1 or comm.nodes <= su or p.algorithm not in ("RING", "TREE", "NVLS_TREE"):
        return 1.0
    g = comm.graphs["nvls" if p.algorithm == "NVLS_TREE" else p.algorithm.lower()]
    uplink = su * comm.profile.net_bw * comm.scale.net / comm.oversubscription
    speed = g.bw_inter if comm.nodes > 2 else g.bw_intra
    return min(1.0, uplink / speed) if speed > 0 else 1.0


#: Bytes one step of a channel holds, by protocol (src/include/device.h, NCCL_STEPS = 8 steps
#: per buffer): Simple 4 MiB / 8 = 512 KiB; LL128 640 threads x 120 elements x 8 B = 600 KiB;
#: LL 512 threads x 8 lines x 16 B = 64 KiB (half of it flags). Simple and LL128 fill a
#: pipeline of steps of about half a megabyte; LL's steps are a sixteenth of that.
STEP_BYTES = {"SIMPLE": 4 * 2**20 // 8, "LL128": 640 * 120 * 8, "LL": 512 * 8 * 16}


def fill(algorithm: str, t_bw: float, comm: Comm, protocol: str | None = "SIMPLE") -> float:
    """The pipeline fill (s) of a message whose bytes take ``t_bw``: ``2 sqrt(L t_bw)``
    where data moves in half-megabyte steps that a stage must hold whole before the
    next can use them: Simple everywhere (and the grouped sends of all-to-all), LL128
    across nodes (the network delivers a whole step, then its flag; over NVLink the
    receiver reads each 128-byte line as its flag lands); none for LL, whose steps
    carry 32 KiB of data."""
    if protocol == "LL" or (protocol == "LL128" and comm.nodes == 1):
        return 0.0
    key = algorithm + "_NET" if comm.nodes > 1 and algorithm + "_NET" in PIPELINE_LATENCY else algorithm
    latency = PIPELINE_LATENCY.get(key, 0.0)
    latency *= comm.scale.nvlink_latency if comm.nodes == 1 else comm.scale.net_latency
    if latency <= 0 or t_bw <= 0:
        return 0.0
    return 2 * math.sqrt(latency * t_bw)


def net_latency(comm: Comm) -> float:
    """The time (s) a call takes beyond the tuner's latencies for crossing the network:
    :data:`NET_LATENCY` on several nodes over NCCL's own transport, else 0."""
    return NET_LATENCY if comm.nodes > 1 and comm.fabric in NCCL_NET_FABRICS else 0.0


def device_time(p: Prediction, comm: Comm) -> float:
    """What the GPUs take for NCCL's prediction ``p``: its latency (and
    :func:`net_latency` across nodes), its bytes at the bandwidth runs reach, and
    the pipeline fill."""
    if p.time <= 0:
        return p.time
    bw = _bandwidth(p, comm)
    t_bw = p.nbytes / bw if bw > 0 else max(p.time - p.latency, 0.0)
    lat = min(p.latency, p.time) + net_latency(comm)
    return lat + t_bw + fill(p.algorithm, t_bw, comm, p.protocol)


def measured_time(p: Prediction, comm: Comm, launch: Launch | None = None) -> float:
    """What nccl-tests would measure for NCCL's prediction ``p``: the device time, and
    at least one launch per GPU the process drives."""
    t = device_time(p, comm)
    if t <= 0:
        return t
    return max(t, (launch or Launch()).floor())
