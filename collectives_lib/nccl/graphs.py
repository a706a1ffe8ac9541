"""The channel graphs NCCL's topology search would find: the tuner's inputs.

NCCL runs a search per pattern (ring, tree, NVLS, CollNet) that packs
*channels* onto the links, each at one per-channel speed taken from a ladder
(NCCL 2.30.7, ``src/graph/search.cc``). The tuner then uses the number of
search channels and their per-channel bandwidth inside the node (``bw_intra``)
and on the network (``bw_inter``). This module restates the search's rules for
the systems the book models (every GPU on an NVSwitch; one NIC per GPU),
which is enough to reproduce what NCCL prints on DGX and HGX machines: on one
DGX H100 node 12 ring channels of 30 GB/s and 8 NVLS channels of 40 GB/s; on
several, 8 channels of 48 GB/s (one per NIC, capped by PCIe Gen5 at 48).

>>> from collectives_lib import hardware as hw
>>> g = search(hw.gpu_system("dgx-h100").nccl, nodes=1, ppn=8)
>>> g["ring"], g["nvls"]
(Graph(channels=12, bw_intra=30.0, bw_inter=30.0, pattern='ring'), Graph(channels=8, bw_intra=40.0, bw_inter=60.0, pattern='nvls'))

Introduced in the chapter *GPU collectives within the node* (channels).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..hardware import NcclProfile
from .tables import (MAX_NVLS_ARITY, MAX_RING_CHANNELS, NVLS_CHANNELS_SM90, NVLS_CHANNELS_SM100,
                     NVLS_CHANNELS_SM100_NVL, SPEED_LADDERS)

_EPS = 1e-9


@dataclass(frozen=True)
class Graph:
    """One search result: ``channels`` at ``bw_intra`` / ``bw_inter`` GB/s each."""

    channels: int
    bw_intra: float
    bw_inter: float
    pattern: str = "ring"      # "ring", "balanced", "tree", "nvls" or "collnet"


def _ladder(profile: NcclProfile, inter: bool) -> tuple[float, ...]:
    sm = 100 if profile.sm >= 100 else (90 if profile.sm >= 90 else 80)
    return tuple(float(s) for s in SPEED_LADDERS[sm][1 if inter else 0])


def _dup(profile: NcclProfile, channels: int, bw: float) -> tuple[int, float]:
    """NCCL's DupChannels: twice the channels at half the speed, unless the speed is
    already low (below 25 GB/s, or below 50 on SM > 80 with more than 4 channels)."""
    if bw < 25 or (profile.sm > 80 and bw < 50 and channels > 4):
        return channels, bw
    return min(2 * channels, 2 * MAX_RING_CHANNELS), bw / 2


def _ring_one_node(profile: NcclProfile) -> Graph:
    """Channels packed on each GPU's NVLink to the switch: ``channels * speed <= nvlink_bw``."""
    total = profile.nvlink_bw
    best_n, best_s = 0, 0.0
    for s in _ladder(profile, inter=False):
        if s > total + _EPS:
            continue
        if best_s and s <= 0.49 * best_s:
            break
        n = min(int(total / s + _EPS), MAX_RING_CHANNELS)
        if n >= 1 and n * s > best_n * best_s + _EPS:
            best_n, best_s = n, s
            if n == MAX_RING_CHANNELS or n * s >= total - _EPS:
                break
    n, s = _dup(profile, best_n, best_s)
    ladder = _ladder(profile, inter=False)
    faster = [x for x in ladder if x > s and n * x <= total + _EPS]   # pass 2: keep channels, raise speed
    if faster:
        s = max(faster)
    return Graph(n, s, s, "ring")


def _ring_multi_node(profile: NcclProfile, nics: int, ppn: int | None = None) -> Graph:
    """One channel per NIC (each ring enters and leaves a node on one NIC), at the
    GPU-to-network path's speed; stops once the channels carry a GPU's NVLink, or all
    that the node's GPUs can push through their PCIe links (two NICs behind one GPU's
    link share it)."""
    path = profile.net_bw
    speeds = [s for s in _ladder(profile, inter=True) if s <= path + _EPS]
    s = speeds[0]
    total = max(profile.nvlink_bw, path)
    if ppn is not None:
        total = min(total, max(ppn * float(profile.gpu_nic_bw), s))
    n = 0
    while n < min(nics, MAX_RING_CHANNELS):
        n += 1
        if n * s >= total - _EPS:
            break
    n, s = _dup(profile, n, s)
    return Graph(n, s, s, "ring")


def _tree_multi_node(profile: NcclProfile, ring: Graph) -> Graph:
    """The tree across nodes: the ring's channels and network speed, then the search's
    second pass raises ``bw_intra`` up the ladder while it is below twice ``bw_inter``
    ("increase bwIntra for trees (2 nodes or collnet)", ``search.cc``) and the same
    channels still fit: each channel's chain crosses a GPU's NVLinks once each way, so
    ``channels * bw_intra`` stays within a GPU's NVLink bandwidth. The tuner reads
    ``bw_intra`` on two nodes, so there a tree can be priced above the ring (8 A100s
    with 16 NICs of 100 Gb/s: 16 x 12 GB/s rings, 16 x 15 GB/s trees)."""
    up = ring.bw_intra
    for x in sorted(_ladder(profile, inter=True)):
        if x <= up:
            continue
        if up >= 2 * ring.bw_inter - _EPS or ring.channels * x > profile.nvlink_bw + _EPS:
            break
        up = x
    return Graph(ring.channels, up, ring.bw_inter, profile.tree_pattern)


def _nvls(profile: NcclProfile, ppn: int, inter: bool, nics: int | None = None) -> Graph | None:
    """NVLS: one channel per head (on one node every GPU, at most 32; across nodes one
    per NIC whose local GPU is not a head yet, so at most min(32, NICs, GPUs)); a
    head's link carries twice its channel, every other GPU's once, so each GPU's link
    carries (channels + 1) times the speed. Then the search raises bw_inter while it
    is below twice bw_intra (on several nodes, up to the NIC path)."""
    if ppn < 2:
        return None
    heads = min(MAX_NVLS_ARITY, ppn)
    if inter and nics is not None:
        heads = min(heads, max(1, nics))
        if heads < 2:
            return None
    total = profile.nvlink_bw
    top = profile.net_bw if inter else total        # maxBw: the best path, to a NIC on several nodes
    fit = [s for s in _ladder(profile, inter) if s <= top + _EPS and (heads + 1) * s <= total + _EPS
           and heads * s <= total * ppn / (ppn - 1) + _EPS]
    if not fit:
        return None
    s = fit[0]
    ladder = _ladder(profile, inter)
    cap = profile.net_bw if inter else max(ladder)
    up = s
    for x in sorted(ladder):
        if x > up and up < 2 * s and x <= cap + _EPS:
            up = x
    return Graph(heads, s, up, "nvls")


def search(profile: NcclProfile, *, nodes: int, ppn: int, nics: int | None = None) -> dict[str, Graph]:
    """The graphs for a communicator of ``nodes`` nodes with ``ppn`` GPUs and ``nics``
    NICs each (default one per GPU): ``ring``, ``tree``, ``nvls`` (None where NVLS
    cannot run), ``collnet`` (CollNet direct and chain)."""
    nics = ppn if nics is None else max(1, int(nics))
    if nodes == 1:
        ring = _ring_one_node(profile) if ppn > 1 else Graph(1, profile.nvlink_bw, profile.nvlink_bw)
        tree = Graph(ring.channels, ring.bw_intra, ring.bw_inter, "balanced")
        nvls = _nvls(profile, ppn, inter=False)
        collnet = None
    else:
        ring = _ring_multi_node(profile, nics, ppn)
        if ppn == 1:
            # a tree with one GPU per node raises bw_intra while it is below twice bw_inter
            tree = Graph(ring.channels, min(2 * ring.bw_inter, profile.net_bw), ring.bw_inter, "balanced")
        else:
            tree = _tree_multi_node(profile, ring)
        nvls = _nvls(profile, ppn, inter=True, nics=nics)
        collnet = Graph(min(ppn, nics, 8), profile.net_bw, profile.net_bw, "collnet")
    return {"ring": ring, "tree": tree, "nvls": nvls, "collnet": collnet}


def launched_channels(graphs: dict[str, Graph], *, nodes: int, sm: int) -> int:
    """The collective channels NCCL launches (``comm->nChannels``): twice the search's
    ring and tree channels, doubled again on SM90+ multi-node rings faster than 45
    GB/s with fewer than 16 channels."""
    n = min(64, 2 * min(graphs["ring"].channels, graphs["tree"].channels))
    if sm >= 90 and nodes > 1 and graphs["ring"].bw_intra > 45 and n < 16:
        n = min(64, 2 * n)
    return n


def nvls_channels(profile: NcclProfile, *, nodes: int, ppn: int) -> int:
    """The NVLS channels NCCL launches (``comm->nvlsChannels``).

    What decides it in NCCL 2.30.7: ``ncclNvlsTuning`` (``src/transport/nvls.cc``)
    starts from NVLS_NCHANNELS_SM90 = 16, or on SM100 NVLS_NCHANNELS_SM100_NVL = 24
    within one node and NVLS_NCHANNELS_SM100 = 32 across nodes; across nodes on SM100
    ``ncclNvlsTreeSm100Tuning`` then sets it by node count, NIC speed (``minNetBw``, the
    GPU-to-NIC path) and GPUs per node: 2 nodes at 48 GB/s or more, 32; at 96 or more,
    24 with at most 8 GPUs per node and 32 with more; at 48 or more, 24; slower NICs
    keep 32. NCCL_NVLS_CTAS (``config.nvlsCTAs``) overrides it, and it is clamped to
    [NCCL_MIN_CTAS, NCCL_MAX_CTAS] (defaults keep it). A communicator split from a parent
    that shares its NVLS resources takes at most the parent's (``connect.cc``), and with
    no NVLS heads it is 0 (``connectNvls``; ``init.cc`` then turns NVLS off). NVLS_TREE
    runs these channels (``enqueue.cc``: ``nc = comm->nvlsChannels``); NVLS across
    nodes (with CollNet) runs ``min(nvlsChannels, nChannels)``."""
    if profile.sm < 100:
        return NVLS_CHANNELS_SM90
    if nodes == 1:
        return NVLS_CHANNELS_SM100_NVL
    nic = profile.net_bw
    if nodes == 2 and nic >= 48.0:
        return 32
    if nic >= 96.0:
        return 24 if ppn <= 8 else 32
    if nic >= 48.0:
        return 24
    return NVLS_CHANNELS_SM100
