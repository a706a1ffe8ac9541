"""NCCL's tuner: the time it predicts for every algorithm and protocol, and its pick.

NCCL builds, once per communicator, a table of latencies (us) and bandwidths
(GB/s) for every (collective, algorithm, protocol), and for each call predicts

    time = latency + nBytes / bandwidth

and runs the pair with the least time (NCCL 2.30.7, ``src/graph/tuning.cc`` and
``src/enqueue.cc``). ``nBytes`` is nccl-tests' size: one rank's buffer for
all-reduce, broadcast and reduce, the gathered output for all-gather, the
unscattered input for reduce-scatter. This module restates those formulas
with the constants of :mod:`collectives_lib.nccl.tables` and the channel
graphs of :mod:`collectives_lib.nccl.graphs`.

>>> from collectives_lib.nccl.tuner import Comm, predict_all
>>> comm = Comm.for_system("dgx-h100", nodes=1, ppn=8)
>>> best = min(predict_all("all_reduce", 2**30 * 4, comm), key=lambda p: p.time)
>>> best.algorithm, best.protocol, round(best.time * 1e6, 1)
('NVLS', 'SIMPLE', 15815.3)

Introduced in the chapter *GPU collectives within the node*.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import hardware as hw
from ..collective import Collective
from ..errors import CollectivesError
from . import tables as T
from .graphs import Graph, launched_channels, nvls_channels, search

#: NCCL's functions, by the library's collective names.
FUNCTIONS = {"all_reduce": "AllReduce", "all_gather": "AllGather", "reduce_scatter": "ReduceScatter",
             "broadcast": "Broadcast", "reduce": "Reduce"}


#: Element types NCCL's NVLS kernels reduce (with sum): ``ncclNvlsSupported`` in
#: ``src/include/device.h`` (int8, uint8 and fp8 are not among them; all-gather needs no reduction).
NVLS_REDUCE_DTYPES = frozenset({"int32", "uint32", "int64", "uint64", "float16", "half", "bfloat16",
                                "float32", "float", "float64", "double"})


@dataclass(frozen=True)
class Scale:
    """How far a topology's link figures are from its preset's, as factors: NCCL's
    per-link bandwidths and per-step latencies are the preset's times these
    (``--bandwidth``, ``--latency``, ``nvswitch_node(bandwidth=)``,
    ``GpuCluster(nvlink_bandwidth=, nic_bandwidth=, ...)``)."""

    nvlink: float = 1.0
    net: float = 1.0
    nvlink_latency: float = 1.0
    net_latency: float = 1.0

    def __bool__(self) -> bool:
        return any(abs(v - 1.0) > 1e-12 for v in (self.nvlink, self.net, self.nvlink_latency,
                                                  self.net_latency))

    def describe(self, multi_node: bool) -> str:
        parts = []
        if abs(self.nvlink - 1) > 1e-12:
            parts.append(f"NVLink bandwidths x{self.nvlink:.4g}")
        if multi_node and abs(self.net - 1) > 1e-12:
            parts.append(f"network bandwidths x{self.net:.4g}")
        if abs(self.nvlink_latency - 1) > 1e-12:
            parts.append(f"NVLink latencies x{self.nvlink_latency:.4g}")
        if multi_node and abs(self.net_latency - 1) > 1e-12:
            parts.append(f"network latencies x{self.net_latency:.4g}")
        return ", ".join(parts)


def _arch(sm: int) -> int:
    return 0 if sm < 80 else (1 if sm < 90 else (2 if sm < 100 else 3))


def _log2i(x: int) -> int:
    return -1 if x <= 0 else int(x).bit_length() - 1


@dataclass(frozen=True)
class Comm:
    """A communicator as NCCL's tuner sees it.

    ``nodes`` and ``ppn`` (GPUs per node in the communicator), the profile of
    the system (architecture, NVLink and NIC figures, CPU), the search graphs,
    whether the NVSwitches reduce (NVLS) and whether the InfiniBand fabric does
    (CollNet/SHARP), the launched channel count, and the element type.
    """

    nodes: int
    ppn: int
    profile: hw.NcclProfile
    graphs: dict = field(compare=False)
    nvls: bool
    collnet: bool = False
    channels: int = 0                  # launched collective channels (comm->nChannels)
    dtype: str = "float32"
    algorithms: tuple[str, ...] = T.ALGORITHMS    # NCCL_ALGO
    protocols: tuple[str, ...] = T.PROTOCOLS      # NCCL_PROTO
    nics: int = 0                      # scale-out NICs per node in the communicator (0: one per GPU)
    scale: Scale = Scale()             # the topology's link figures against the preset's
    unscaled: dict = field(default=None, compare=False, repr=False)   # the graphs before scaling
    oversubscription: float = 1.0      # the leaves' uplinks carry 1/oversubscription of their NICs
    nodes_per_su: int = 0              # nodes under one leaf per rail (0: all of them)
    latency_inter: float = 0.0         # us: the network plugin's reported latency (graph->latencyInter)
    hosts: int = 1                     # hosts (compute trays) one node's NVLink domain joins: >1 is MNNVL
    fabric: str = "infiniband"         # the scale-out fabric: "infiniband", "roce" or "gib"

    @staticmethod
    def for_system(system: str, *, nodes: int, ppn: int | None = None, collnet: bool = False,
                   nvls: bool | None = None, dtype: str = "float32") -> "Comm":
        """The communicator of ``nodes`` nodes of the preset ``system`` with ``ppn`` GPUs
        each (default: all of them); see :func:`make_comm`."""
        s = hw.gpu_system(system)
        return make_comm(s, nodes=nodes, ppn=s.gpus_per_node if ppn is None else int(ppn),
                         collnet=collnet, nvls=nvls, dtype=dtype)

    @property
    def nranks(self) -> int:
        return self.nodes * self.ppn

    @property
    def arch(self) -> int:
        return _arch(self.profile.sm)

    @property
    def n2(self) -> int:
        return 0 if self.nodes == 1 else (1 if self.nodes == 2 else 2)


@dataclass(frozen=True)
class Prediction:
    """NCCL's prediction for one (algorithm, protocol): seconds, and its two parts."""

    collective: str
    algorithm: str                 # NCCL's name: RING, TREE, NVLS, ...
    protocol: str                  # LL, LL128, SIMPLE
    nbytes: int
    latency: float                 # s
    bandwidth: float               # bytes/s against nBytes (after NCCL's size corrections)
    bus_bandwidth: float           # the tuner's bus bandwidth, bytes/s
    time: float                    # s

    @property
    def label(self) -> str:
        return f"{self.algorithm}/{self.protocol}"


def make_comm(system: hw.GpuSystem, *, nodes: int, ppn: int, collnet: bool = False,
              nvls: bool | None = None, dtype: str = "float32", algorithms=T.ALGORITHMS,
              protocols=T.PROTOCOLS, nics: int | None = None, profile: hw.NcclProfile | None = None,
              scale: Scale = Scale(), oversubscription: float = 1.0, nodes_per_su: int = 0,
              latency_inter: float = 0.0, fabric: str = "infiniband") -> Comm:
    """The one way a :class:`Comm` is made: the channel search for ``nodes`` x ``ppn``
    GPUs of ``system`` with ``nics`` NICs per node (default one per GPU) as NCCL's
    topology code sees them (``profile``: the system's, or one with the machine's own
    NIC speed), NVLS where the system has it (``nvls=False`` is ``NCCL_NVLS_ENABLE=0``),
    the launched channel count; then every search bandwidth times ``scale`` (link
    figures overridden from the preset's). ``latency_inter`` (us) is the latency the
    network plugin reports (``ncclNetProperties_t.latency``; NCCL's own IB transport
    reports 0), which the tuner adds to every network step; ``fabric`` is the scale-out
    fabric's kind, which the tuner does not see (the measured time does:
    :data:`collectives_lib.nccl.measured.NET_LATENCY`)."""
    profile = system.nccl if profile is None else profile
    if profile is None:
        raise CollectivesError(f"{system.name} has no NCCL profile in this library")
    nics = ppn if nics is None else max(1, int(nics))
    graphs = search(profile, nodes=nodes, ppn=ppn, nics=nics)
    if nvls is True and not system.nvls:
        raise CollectivesError(f"nvls on: {system.name}'s NVSwitches have no NVLink SHARP "
                               f"(NVLS needs third-generation NVSwitch: H100 and later), so "
                               f"NCCL_NVLS_ENABLE=1 changes nothing; leave nvls out")
    if nvls is True and graphs.get("nvls") is None:
        raise CollectivesError(f"nvls on: NCCL builds no NVLS channels for {ppn} GPU(s) per "
                               f"node{' with ' + str(nics) + ' NIC(s)' if nodes > 1 else ''} "
                               f"(it needs two or more GPUs of a node on the switch), so it "
                               f"would not run NVLS; leave nvls out")
    scaled = _scaled(graphs, scale, nodes) if scale else graphs
    return Comm(nodes, ppn, profile, scaled, system.nvls if nvls is None else bool(nvls), collnet,
                launched_channels(graphs, nodes=nodes, sm=profile.sm), dtype, tuple(algorithms),
                tuple(protocols), nics, scale, graphs, float(oversubscription), int(nodes_per_su),
                float(latency_inter) if nodes > 1 else 0.0, domain_hosts(system, ppn), str(fabric))


def domain_hosts(system: hw.GpuSystem, ppn: int) -> int:
    """The hosts (compute trays of ``system.tray_gpus`` GPUs) that ``ppn`` GPUs of one
    NVLink domain sit on: 1 on an 8-GPU node or a single tray; more on a rack's NVLink
    partition, which NCCL treats as one node (multi-node NVLink, MNNVL: the clique)."""
    tray = int(system.tray_gpus or 0)
    return max(1, -(-int(ppn) // tray)) if tray else 1


def _scaled(graphs: dict, scale: Scale, nodes: int) -> dict:
    """The search's graphs with their per-channel bandwidths scaled: NVLink ones by the
    NVLink factor, network ones by the network factor; a channel that crosses both
    (a ring or tree across nodes) by the smaller."""
    out = {}
    both = min(scale.nvlink, scale.net)
    for key, g in graphs.items():
        if g is None:
            out[key] = None
        elif nodes == 1:
            out[key] = Graph(g.channels, g.bw_intra * scale.nvlink, g.bw_inter * scale.nvlink, g.pattern)
        elif key == "nvls":
            out[key] = Graph(g.channels, g.bw_intra * scale.nvlink, g.bw_inter * scale.net, g.pattern)
        elif key == "collnet":
            out[key] = Graph(g.channels, g.bw_intra * scale.net, g.bw_inter * scale.net, g.pattern)
        else:
            out[key] = Graph(g.channels, g.bw_intra * both, g.bw_inter * both, g.pattern)
    return out


def nvls_reduces(dtype: str) -> bool:
    """Whether NCCL's NVLS kernels can reduce ``dtype`` (sum): ``ncclNvlsSupported``."""
    return str(dtype).lower() in NVLS_REDUCE_DTYPES


def function(collective) -> str:
    """NCCL's function for one of the library's collectives (``"all_reduce"`` ->
    ``"AllReduce"``); raises for the ones NCCL runs as point-to-point sends."""
    func = FUNCTIONS.get(Collective(collective).value)
    if func is None:
        raise CollectivesError(f"NCCL's tuner has no model for {collective}; its point-to-point "
                               f"path is modelled in collectives_lib.nccl.p2p")
    return func


def nvls_channel_bandwidth(func: str, comm: Comm) -> float:
    """What one NVLS channel carries inside the node (GB/s of bus bandwidth): the search's
    per-channel speed, NCCL's NVLS efficiency, one channel's share lost to its head
    (``(nch - 1) / nch``), and twice that for all-reduce (reduce and multicast each
    move the data once), ``(ppn - 1) / ppn`` for all-gather and reduce-scatter."""
    g = comm.graphs["nvls"]
    nch = g.channels
    intra = g.bw_intra * T.NVLS_EFFICIENCY[comm.arch] * (nch - 1) / nch
    return intra * (2 if func == "AllReduce" else (comm.ppn - 1) / comm.ppn)


def _nsteps(func: str, n: int) -> int:
    return {"AllReduce": 2 * (n - 1), "AllGather": n - 1, "ReduceScatter": n - 1}.get(func, n)


def _exists(func: str, algo: str, proto: str, comm: Comm) -> bool:
    """Which (function, algorithm, protocol) NCCL defines and enables here."""
    if algo not in comm.algorithms or proto not in comm.protocols:
        return False
    if func in ("Broadcast", "Reduce") and algo != "RING":
        return False
    if func in ("AllGather", "ReduceScatter") and algo not in ("RING", "NVLS", "COLLNET_DIRECT", "PAT"):
        return False
    if func == "AllReduce" and algo == "PAT":
        return False
    if algo in ("NVLS", "NVLS_TREE", "PAT", "COLLNET_DIRECT", "COLLNET_CHAIN") and proto != "SIMPLE":
        return False
    if algo == "PAT" and not (comm.ppn == 1 and comm.nodes > 1 and comm.profile.sm >= 60):
        return False
    if algo in ("NVLS", "NVLS_TREE"):
        if not comm.nvls or comm.graphs.get("nvls") is None:
            return False
        if func != "AllGather" and not nvls_reduces(comm.dtype):   # enqueue.cc: nvlsSupport
            return False
        if func != "AllReduce" and comm.ppn > 32:
            return False
        if algo == "NVLS_TREE" and comm.nodes == 1:
            return False
        if algo == "NVLS" and comm.nodes > 1 and not comm.collnet:
            return False
    if algo.startswith("COLLNET") and (not comm.collnet or comm.ppn > 8 or comm.nodes == 1):
        return False
    return True


def _graph(algo: str, comm: Comm) -> Graph:
    return {"TREE": comm.graphs["tree"], "RING": comm.graphs["ring"], "PAT": comm.graphs["tree"],
            "NVLS": comm.graphs["nvls"], "NVLS_TREE": comm.graphs["nvls"],
            "COLLNET_DIRECT": comm.graphs["collnet"], "COLLNET_CHAIN": comm.graphs["collnet"]}[algo]


def bus_bandwidth(func: str, algo: str, proto: str, comm: Comm) -> float:
    """The tuner's bus bandwidth (GB/s) for one triple, before the conversion to nBytes."""
    g = _graph(algo, comm)
    cc, n2 = comm.arch, comm.n2
    nch = g.channels
    bw = g.bw_intra if comm.nodes <= 2 or algo.startswith("COLLNET") else g.bw_inter
    if algo in ("NVLS", "NVLS_TREE"):
        if nch < 2:
            return 0.0
        intra = nvls_channel_bandwidth(func, comm)
        inter = g.bw_inter * (2 if algo == "NVLS_TREE" and comm.nodes <= 2 else 1)
        bw = min(intra, inter)
        if algo == "NVLS_TREE":
            bw = min(bw, T.NVLS_TREE_MAX_BW[cc][n2])
    bus = nch * bw
    ll_row = cc if comm.nodes == 1 else (1 if comm.profile.cpu == "amd" else 0)
    ll_max = T.LL_MAX_BW[ll_row][n2]
    if algo == "RING" and proto == "LL":
        bus = min(ll_max, T.RING_LL_FACTOR * bus)
    if algo == "RING" and proto == "LL128":
        bus = min(T.RING_LL128_FACTOR * bus, nch * T.RING_LL128_MAX_BW[cc][n2])
    if algo == "TREE" and func == "AllReduce":
        bus = min(T.TREE_FACTOR * bus, nch * T.TREE_MAX_BW[cc][n2])
    if algo == "TREE" and proto == "LL":
        bus = min(bus / T.TREE_LL_DIVISOR, ll_max)
    if algo == "TREE" and proto == "LL128":
        factor = T.TREE_LL128_ONE_NODE if comm.nodes == 1 else T.TREE_LL128_MULTI_NODE
        bus = min(bus * factor, nch * T.TREE_LL128_MAX_BW[cc][n2])
    if algo == "TREE" and g.pattern == "tree":
        bus *= T.TREE_PATTERN_PENALTY
    if algo == "PAT":
        bus *= T.PAT_FACTOR
    if algo == "COLLNET_DIRECT":
        if func in ("AllGather", "ReduceScatter"):
            bus = comm.ppn * min(g.bw_intra, T.COLLNET_DIRECT_NET * g.bw_inter)
        else:
            f = comm.ppn / nch
            bus = bus / (f - (f - 1) / 2)
            if comm.profile.sm >= 90:
                bus *= T.COLLNET_DIRECT_SM90
    if algo in ("NVLS", "COLLNET_DIRECT") and func in ("AllGather", "ReduceScatter") and comm.nodes > 1:
        bus = 0.0      # needs a CollNet plugin with all-gather / reduce-scatter, which we do not model
    return bus


def bandwidth(func: str, algo: str, proto: str, comm: Comm) -> float:
    """The table's bandwidth (GB/s) against nBytes: bus bandwidth times nRanks/nsteps
    (rings, NVLS, NVLS_TREE) or one half (trees, CollNet); all-gather and
    reduce-scatter use the bus bandwidth as it is, except the ring."""
    bus = bus_bandwidth(func, algo, proto, comm)
    if func in ("AllGather", "ReduceScatter") and algo != "RING":
        return bus
    if algo in ("RING", "NVLS", "NVLS_TREE"):
        return bus * comm.nranks / max(1, _nsteps(func, comm.nranks))
    return bus * 0.5


def latency(func: str, algo: str, proto: str, comm: Comm) -> float:
    """The table's latency (us)."""
    p = T.PROTOCOLS.index(proto)
    nodes, ppn, n = comm.nodes, comm.ppn, comm.nranks
    intra_lat = T.HW_LATENCY["NVLINK"][algo][p] * comm.scale.nvlink_latency
    inter_lat = T.HW_LATENCY["NET"]["TREE" if ppn == 1 else algo][p] * comm.scale.net_latency
    # tuning.cc: interLat += graph->latencyInter (the net plugin's latency), once more for
    # Simple ("the flush extra latency")
    inter_lat += comm.latency_inter * (2 if proto == "SIMPLE" else 1)
    lat = T.BASE_LATENCY[algo][p]
    nsteps = _nsteps(func, n)
    if algo == "RING" and func in ("AllReduce", "AllGather", "ReduceScatter"):
        overhead = 0.0 if nodes == 1 else T.NET_OVERHEAD[comm.profile.cpu] * (3 if proto == "SIMPLE" else 1)
        intra_lat = max(intra_lat, overhead)
        n_inter = 0 if nodes == 1 else (2 * (nodes - 1) if func == "AllReduce" else nodes - 1)
        return lat + (nsteps - n_inter) * intra_lat + n_inter * inter_lat
    if algo == "RING":                       # broadcast, reduce: the ring graph has sameChannels
        if nodes > 1:
            return lat + T.HW_LATENCY["NET"]["RING"][p] * comm.scale.net_latency
        return lat + T.HW_LATENCY["NVLINK"]["RING"][p] * comm.scale.nvlink_latency
    if algo == "TREE":
        return lat + 2 * ((n // nodes - 1) * intra_lat + _log2i(nodes) * inter_lat)
    if algo == "COLLNET_DIRECT":
        return lat + 2 * (min(1, ppn - 1) * intra_lat + (ppn - 1) * T.COLLNET_ARITY_LATENCY) + inter_lat
    if algo == "COLLNET_CHAIN":
        return lat + 2 * (ppn - 1) * intra_lat + inter_lat
    if algo == "NVLS":
        return intra_lat + (inter_lat if nodes > 1 else 0.0)
    if algo == "NVLS_TREE":
        return lat + intra_lat + 2 * _log2i(nodes) * inter_lat
    if algo == "PAT":
        return lat + _log2i(nodes) * inter_lat / T.PAT_LOG_DIVISOR + T.PAT_LINEAR_LATENCY * n
    raise CollectivesError(f"no latency model for {algo}")   # pragma: no cover


def predict(collective, nbytes: int, comm: Comm, algorithm: str, protocol: str) -> Prediction | None:
    """NCCL's time for one (algorithm, protocol), or None where NCCL would not run it."""
    func = function(collective)
    algo, proto = algorithm.upper(), protocol.upper()
    if not _exists(func, algo, proto, comm):
        return None
    bus = bus_bandwidth(func, algo, proto, comm)
    bw = bandwidth(func, algo, proto, comm)
    if bw <= 0:
        return None
    lat = latency(func, algo, proto, comm)
    log_size = _log2i(int(nbytes) >> 6)
    if func == "AllReduce" and 0 <= log_size:
        if algo == "TREE" and log_size < 23:
            bw *= T.TREE_CORRECTION[proto][log_size]
        if (algo == "NVLS_TREE" and log_size < 24 and comm.profile.sm >= 100
                and comm.profile.cpu in ("intel", "amd")):
            bw *= T.TREE_CORRECTION[proto][log_size]
    if (algo == "RING" and proto == "SIMPLE" and func == "AllReduce" and comm.nodes > 1
            and int(nbytes) // (comm.channels * comm.nranks) >= 64):
        lat *= T.RING_PLATEAU[1 if comm.profile.sm >= 80 else 0]
    time_us = lat + int(nbytes) / (1000.0 * bw)
    if comm.dtype.startswith("float8") and algo == "RING" and comm.nranks > 8:
        # enqueue.cc (updateCollCostTable): fp8 rings deeper than 8 ranks lose precision, so
        # NCCL multiplies their time by 1024 to prefer any other algorithm (the time it
        # compares, not what the ring takes: measured.py times the ring itself)
        time_us *= T.FP8_RING_PENALTY
    if comm.nranks == 1:
        time_us = 0.0
    return Prediction(Collective(collective).value, algo, proto, int(nbytes), lat * 1e-6, bw * 1e9,
                      bus * 1e9, time_us * 1e-6)


def predict_all(collective, nbytes: int, comm: Comm) -> list[Prediction]:
    """Every (algorithm, protocol) NCCL would consider, in its loop order."""
    out = []
    for algo in T.ALGORITHMS:
        for proto in T.PROTOCOLS:
            p = predict(collective, nbytes, comm, algo, proto)
            if p is not None:
                out.append(p)
    return out


def choose(collective, nbytes: int, comm: Comm) -> Prediction:
    """NCCL's pick: the least time, ties to the earlier algorithm and protocol."""
    best = None
    for p in predict_all(collective, nbytes, comm):
        if best is None or p.time < best.time:
            best = p
    if best is None:
        raise CollectivesError(f"NCCL has no algorithm and protocol for {collective} here "
                               f"(NCCL_ALGO={','.join(comm.algorithms)}, NCCL_PROTO={','.join(comm.protocols)})")
    return best


def call_channels(algorithm: str, protocol: str, nbytes: int, comm: Comm) -> int:
    """The channels (thread blocks, one SM each) NCCL launches for one call of ``nbytes``
    (nccl-tests' size) run as ``algorithm``/``protocol``: ``topoGetAlgoInfo`` in NCCL 2.30.7's
    ``src/enqueue.cc``. NVLS and NVLS_TREE run ``comm->nvlsChannels`` (NVLS across nodes at
    most ``nChannels``); CollNet Direct drops channels while
    ``nBytes < nc * nt * nHeads * threshold``, halving the threshold at 24, 12, 6, 3 and
    stopping at 16, 8, 4, 2, 1; rings, trees, CollNet Chain and PAT drop one channel at a
    time while ``nBytes < nc * nt * threshold``, down to one. So a small all-reduce on 8
    H100 runs 1 or 2 of the communicator's 24 channels.

    >>> comm = Comm.for_system("dgx-h100", nodes=1, ppn=8)
    >>> [call_channels("RING", "LL", n, comm) for n in (4096, 2**16, 2**20)], comm.channels
    ([1, 2, 24], 24)
    """
    nc = max(1, comm.channels)
    if algorithm in ("NVLS", "NVLS_TREE"):
        launched = nvls_channels(comm.profile, nodes=comm.nodes, ppn=comm.ppn)
        return min(launched, nc) if comm.nodes > 1 and algorithm == "NVLS" else launched
    nbytes = int(nbytes)
    if algorithm.startswith("COLLNET"):
        nt, threshold = T.MAX_THREADS_IN_NETWORK, T.COLLNET_SIMPLE_THRESHOLD
        if protocol != "SIMPLE":
            threshold = T.THREAD_THRESHOLDS[protocol]
    else:
        nt = T.MAX_THREADS[protocol]
        ring = comm.graphs["ring"]
        if algorithm == "RING" and protocol == "SIMPLE" and ring.bw_intra * ring.channels <= T.PCI_BW:
            nt = 256
        threshold = T.THREAD_THRESHOLDS[protocol] * (comm.nranks if (algorithm, protocol) == ("RING", "LL")
                                                     else 1)
    if algorithm == "COLLNET_DIRECT":
        heads = comm.graphs["collnet"].channels if comm.graphs.get("collnet") else 1
        switch = 16
        more = True
        while switch >= 1 and more:
            while (more := nbytes < nc * nt * heads * threshold) and nc > switch:
                if nc == switch + switch // 2:
                    threshold //= 2
                nc -= 1
            switch //= 2
        return nc
    while nbytes < nc * nt * threshold and nc >= 2:
        nc -= 1
    return nc
