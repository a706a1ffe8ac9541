"""Closed-form costs: the alpha-beta model and the throughput-bound formulas.

Notation (the book's notation page): ``n`` ranks, ``V`` bytes (the whole array:
gathered for all-gather, per rank unreduced for reduce-scatter and all-reduce,
total for all-to-all), ``W`` one-way bandwidth of one link in bytes/s,
``alpha`` the latency paid once per step (a per-hop latency for neighbour
algorithms). Every formula here is derived for the schedules in
:mod:`collectives_lib.algorithms`, and the tests hold the simulator to them.

The Scaling Book writes the same results with the bidirectional bandwidth
``W_bidi = 2 W``: an all-gather over a ring axis costs ``V / W_bidi``, over
``k`` axes at once ``V / (k W_bidi)``.

Introduced in the chapter *Moving bytes*.
"""

from __future__ import annotations

import math

from .errors import CollectivesError
from .checks import check_num_ranks


def _log2(n: int) -> int:
    if n & (n - 1):
        raise CollectivesError(f"this formula needs a power-of-two N, got {n}")
    return n.bit_length() - 1


def alpha_beta(nbytes: float, bandwidth: float, alpha: float = 0.0) -> float:
    """One message: ``alpha + nbytes / bandwidth`` (beta = 1 / bandwidth)."""
    return alpha + nbytes / bandwidth


def crossover_size(alpha: float, bandwidth: float, steps: int = 1) -> float:
    """Message size where latency and bandwidth terms are equal: ``alpha * W`` per step.

    Below it a transfer is latency-bound, above it bandwidth-bound. One v5e ICI
    link (45 GB/s) with 1 us per hop moves 45 KB in that microsecond.
    """
    return alpha * bandwidth * steps


def pipelined_send(hops: int, V: float, W: float, alpha: float = 0.0, packets: int = 1) -> float:
    """One message of ``V`` bytes over ``hops`` links, cut into ``packets`` packets.

    Each link forwards a packet once it has wholly arrived and adds ``alpha``
    per hop, so the last packet arrives after
    ``hops * alpha + (hops + packets - 1) * V / (packets * W)``.
    ``packets=1`` is store-and-forward, ``hops * (alpha + V / W)``; many small
    packets approach cut-through, ``hops * alpha + V / W``, which is what
    :func:`~collectives_lib.simulate.simulate` charges for a routed transfer.

    Introduced in the chapter *Moving bytes*.
    """
    if int(hops) != hops or hops < 1:
        raise CollectivesError(f"hops must be a whole number >= 1, got {hops!r}")
    if int(packets) != packets or packets < 1:
        raise CollectivesError(f"packets must be a whole number >= 1, got {packets!r}")
    if W <= 0:
        raise CollectivesError(f"bandwidth W must be positive, got {W!r}")
    return hops * alpha + (hops + packets - 1) * V / (packets * W)


# -- all-gather / reduce-scatter -------------------------------------------------

def ring_all_gather(n: int, V: float, W: float, alpha: float = 0.0) -> float:
    """Unidirectional ring: ``(n-1) (alpha + V / (n W))``."""
    n = check_num_ranks(n)
    return (n - 1) * (alpha + V / (n * W))


def bidirectional_ring_all_gather(n: int, V: float, W: float, alpha: float = 0.0) -> float:
    """Bidirectional ring at the bound: ``floor(n/2) alpha + (n-1)/(2n) V / W``.

    Every block goes both ways round; for even n the block opposite its owner goes
    half each way, so every link carries ``(n-1)/(2n) V``, the bound for a ring.
    A ring of two has one link each way: ``alpha + V / (2W)``.
    """
    n = check_num_ranks(n)
    return line_all_gather(n, "bidirectional_ring", V / n, W, alpha)


def bidirectional_ring_whole_all_gather(n: int, V: float, W: float, alpha: float = 0.0) -> float:
    """Bidirectional ring sending whole blocks: ``ceil((n-1)/2) (alpha + V / (n W))``.

    For even n the opposite block goes whole one way in a step of its own, so the
    ring takes ``V / (2W)`` for its bandwidth instead of ``(n-1)/(2n) V / W``.
    """
    n = check_num_ranks(n)
    return math.ceil((n - 1) / 2) * (alpha + V / (n * W))


def chain_all_gather(n: int, V: float, W: float, alpha: float = 0.0) -> float:
    """Chain (no wraparound): ``(n-1) (alpha + V / (n W))``, about twice the bidirectional ring."""
    return ring_all_gather(n, V, W, alpha)


def recursive_doubling_all_gather(n: int, V: float, W: float, alpha: float = 0.0) -> float:
    """On a non-blocking switch: ``log2(n) alpha + (n-1)/n V / W``."""
    n = check_num_ranks(n)
    return _log2(n) * alpha + (n - 1) / n * V / W


def pat_all_gather(n: int, V: float, W: float, alpha: float = 0.0) -> float:
    """PAT (NCCL's all-gather for one GPU per node): ``ceil(log2 n) alpha + (n-1)/n V / W``.

    In the step of distance ``2^d`` a rank sends one message of
    ``#{j : j 2^(d+1) + 2^d < n}`` blocks to one peer and receives one; over the
    ``ceil(log2 n)`` steps that is ``n - 1`` blocks, as in a ring. The reduce-scatter
    (the same steps reversed) costs the same.
    """
    n = check_num_ranks(n)
    return max(n - 1, 0).bit_length() * alpha + (n - 1) / n * V / W


def direct_all_gather(n: int, V: float, W: float, alpha: float = 0.0) -> float:
    """Over a switch, every rank's uplink carries its block n-1 times: ``alpha + (n-1)/n V/W``."""
    n = check_num_ranks(n)
    return alpha + (n - 1) / n * V / W


def multicast_all_gather(n: int, V: float, W: float) -> float:
    """Switch multicast (NVLS) with stages overlapped: every GPU's downlink gets
    all n blocks, its own included: ``V / W`` (the 1/n of it is wasted)."""
    return V / W


def mesh_all_gather(dims, V: float, W: float, alpha: float = 0.0, *,
                    wraparound: bool = True, multi: bool = True, whole: bool = False) -> float:
    """All-gather over all axes of a square ``n x n (x n)`` torus or mesh.

    ``multi=True``: the data is cut in D parts, part j goes round the axes in
    rotated order, all at once; phase p moves blocks ``B_p = n**p V / (D N)``
    (``N = n**D``) along one axis, so ``T = sum_p t(n, B_p)`` with ``t`` the time
    of one axis: ``floor(n/2) alpha + (n-1)/2 B / W`` on a bidirectional ring
    (wraparound; ``whole=True``: ``ceil((n-1)/2) (alpha + B / W)``, the ring that
    sends the opposite block whole), ``(n-1) (alpha + B / W)`` on a chain.
    ``multi=False`` sends the whole array one axis at a time (D = 1 above, phase
    after phase). About ``V / (2 D W)`` with wraparound: twice as fast with two
    axes as with one; a 4x4 torus takes exactly the bound ``15/16 V / (4W)``.
    """
    dims = tuple(dims)
    if len(set(dims)) != 1:
        raise CollectivesError(f"the closed form is for equal axes, got {dims}")
    n, D = dims[0], len(dims)
    N = n ** D
    kind = ("bidirectional_ring_whole" if whole else "bidirectional_ring") if wraparound else "chain"
    parts = D if multi else 1
    return sum(line_all_gather(n, kind, n ** p * V / (parts * N), W, alpha) for p in range(D))


def scaling_book_all_gather(V: float, W_bidi: float, axes: int = 1) -> float:
    """The Scaling Book's throughput-bound form: ``V / (axes * W_bidi)``."""
    return V / (axes * W_bidi)


# duals
pat_reduce_scatter = pat_all_gather
ring_reduce_scatter = ring_all_gather
bidirectional_ring_reduce_scatter = bidirectional_ring_all_gather
bidirectional_ring_whole_reduce_scatter = bidirectional_ring_whole_all_gather
chain_reduce_scatter = chain_all_gather


# -- all-reduce --------------------------------------------------------------------

def ring_all_reduce(n: int, V: float, W: float, alpha: float = 0.0) -> float:
    """Reduce-scatter then all-gather on a unidirectional ring: ``2 (n-1) (alpha + V/(nW))``."""
    return 2 * ring_all_gather(n, V, W, alpha)


def bidirectional_ring_all_reduce(n: int, V: float, W: float, alpha: float = 0.0) -> float:
    """Reduce-scatter then all-gather, both at the bound: ``2 floor(n/2) alpha + (n-1)/n V / W``."""
    return 2 * bidirectional_ring_all_gather(n, V, W, alpha)


def bidirectional_ring_whole_all_reduce(n: int, V: float, W: float, alpha: float = 0.0) -> float:
    return 2 * bidirectional_ring_whole_all_gather(n, V, W, alpha)


def ring_all_reduce_bytes_per_rank(n: int, V: float) -> float:
    """Bytes each rank sends in a ring all-reduce: ``2 (n-1)/n V`` (never quite 2V)."""
    n = check_num_ranks(n)
    return 2 * (n - 1) / n * V


def naive_all_reduce_bytes_per_rank(n: int, V: float) -> float:
    """Every rank sends its whole array to every other: ``(n-1) V``."""
    n = check_num_ranks(n)
    return (n - 1) * V


def recursive_doubling_all_reduce(n: int, V: float, W: float, alpha: float = 0.0) -> float:
    """``log2(n) (alpha + V / W)``: few steps, but the whole array every step."""
    return _log2(check_num_ranks(n)) * (alpha + V / W)


def rabenseifner_all_reduce(n: int, V: float, W: float, alpha: float = 0.0) -> float:
    """``2 log2(n) alpha + 2 (n-1)/n V / W``: tree latency, ring bandwidth."""
    n = check_num_ranks(n)
    return 2 * _log2(n) * alpha + 2 * (n - 1) / n * V / W


def binomial_tree_all_reduce(n: int, V: float, W: float, alpha: float = 0.0) -> float:
    """Binomial reduce then broadcast, whole array per round: ``2 ceil(log2 n) (alpha + V/W)``."""
    n = check_num_ranks(n)
    return 2 * math.ceil(math.log2(n)) * (alpha + V / W) if n > 1 else 0.0


def _pipelined_count(starts, chunks: int, step: int) -> int:
    """Transfers sharing a link at ``step`` when each start ``a`` begins a stream of
    ``chunks`` transfers, one per step from step ``a``."""
    return sum(1 for a in starts if a <= step < a + chunks)


def tree_all_reduce(n: int, V: float, W: float, alpha: float = 0.0, chunks: int = 8) -> float:
    """NCCL's tree on one switch: ``(2(n-1) + chunks - 1) alpha + 2(n-1)/n V / W``.

    ``n`` chains (one channel per rank, chain ``c`` rooted at rank ``c`` and going
    ``c, c+1, ...``), each carrying ``V/n`` in ``chunks`` chunks that stream up the
    chain (reduce) and back down (broadcast) at once. A chain has height
    ``H = n - 1``: ``2H + chunks - 1`` bulk-synchronous steps. At the place ``p`` of
    a chain a rank sends up at steps ``n-1-p + c`` and down at ``n-1+p + c``; over
    the n chains every rank is once at every place, so every up-link (and every
    down-link) carries streams starting at steps ``0, 1, ..., 2n-3``, one each.
    Every link is equally loaded in every step, and the loads of all steps add up
    to ``2(n-1) chunks`` transfers of ``V / (n chunks)``: the ring's bandwidth,
    with the chain's latency and the pipeline fill.
    """
    n = check_num_ranks(n)
    if n == 1:
        return 0.0
    return (2 * (n - 1) + chunks - 1) * alpha + 2 * (n - 1) / n * V / W


def tree_all_reduce_two_nodes(gpus: int, V: float, W_nic: float, W_nvlink: float,
                              alpha_nic: float = 0.0, alpha_nvlink: float = 0.0,
                              chunks: int = 8) -> float:
    """NCCL's tree over two nodes of ``gpus`` GPUs (``gpus=1``: one GPU per node).

    ``gpus`` channels, each with two trees (node 0 the root of one, node 1 of the
    other) carrying ``V / (2 gpus)`` in ``chunks`` chunks; in a node, the channel's
    head GPU joins the other node over its NIC and the other GPUs hang below it in
    a chain. Height ``H = gpus``: ``2 gpus + chunks - 1`` steps. As on one switch
    (:func:`tree_all_reduce`) every link of a kind sees the same streams: every NVLink
    link ``0..gpus-2`` twice (reduce) and ``gpus..2gpus-2``, ``gpus+1..2gpus-1``
    (broadcast), every NIC link ``gpus-1`` and ``gpus``. Step ``s`` takes the slower
    of its NVLink and InfiniBand transfers,
    ``max(alpha_nvlink + k_nvl(s) b / W_nvlink, alpha_nic + k_nic(s) b / W_nic)``
    with ``k(s)`` the streams under way and ``b = V / (2 gpus chunks)``; ``alpha_*``
    are per step (two links). With one GPU per node it is
    ``(chunks + 1) alpha_nic + V / W_nic``.
    """
    G, K = check_num_ranks(gpus, what="GPUs per node"), int(chunks)
    nvl = [*range(G - 1), *range(G - 1), *range(G, 2 * G - 1), *range(G + 1, 2 * G)]
    nic = [G - 1, G]
    b = V / (2 * G * K)
    total = 0.0
    for s in range(2 * G + K - 1):
        k_nvl, k_nic = _pipelined_count(nvl, K, s), _pipelined_count(nic, K, s)
        total += max(alpha_nvlink + k_nvl * b / W_nvlink if k_nvl else 0.0,
                     alpha_nic + k_nic * b / W_nic if k_nic else 0.0)
    return total


def sharp_all_reduce(n: int, V: float, W: float, alpha: float = 0.0) -> float:
    """In-network reduction, up and down streams overlapped: ``alpha + V / W``."""
    return alpha + V / W


def nvls_all_reduce(n: int, V: float, W: float, crossing: float = 0.0,
                    reduce_seconds: float = 0.0) -> float:
    """NVLS all-reduce (load-reduce, then multicast store), its four crossings of the
    switch streaming: ``max(4 c + max(V / W, R - c), (n+1)/n V / W)``.

    ``c`` (``crossing``) is what one trip into or out of the switch costs (a link and
    half the in-switch latency); ``R`` (``reduce_seconds``) the time the switch's
    adders need for the ``n V`` bytes they sum (0: as fast as the links). Each GPU's
    up-link carries ``V`` (its array into the reduction) and ``V/n`` (its reduced
    block into the multicast), its down-link the same back, so the links bound the
    time by ``(n+1)/n V / W``: 1.125 V / W at n = 8 against the ring's 1.75.
    """
    n = check_num_ranks(n)
    return max(4 * crossing + max(V / W, reduce_seconds - crossing), (n + 1) / n * V / W)


def nvls_tree_all_reduce_two_nodes(gpus: int, V: float, W_nic: float, W_nvlink: float,
                                   alpha_nic: float = 0.0, crossing: float = 0.0,
                                   reduce_seconds: float = 0.0, chunks: int = 8) -> float:
    """NVLS_TREE over two nodes of ``gpus`` GPUs, its stages streaming.

    NVLS reduce-scatter (two crossings of the NVSwitch, ``c`` each), the tree of
    :func:`tree_all_reduce_two_nodes` with one GPU per node on every rail carrying
    ``V / gpus`` (``chunks + 1`` steps of ``alpha_nic``), then the NVLS all-gather
    (two crossings): ``max(4c + (chunks+1) alpha_nic + max(V / W_nvlink, R - c, B_tree),
    (gpus+1)/gpus V / W_nvlink, V / (gpus W_nic))``, with ``B_tree`` the tree's
    bandwidth term (``V / (gpus W_nic)``) and ``R`` the switch adders' time.
    """
    G, K = check_num_ranks(gpus, what="GPUs per node"), int(chunks)
    tree_latency = (K + 1) * alpha_nic
    tree = tree_all_reduce_two_nodes(1, V / G, W_nic, W_nvlink, alpha_nic, 0.0, K) - tree_latency
    stages = 4 * crossing + tree_latency + max(V / W_nvlink, reduce_seconds - crossing, tree)
    return max(stages, (G + 1) / G * V / W_nvlink, V / (G * W_nic))


def collnet_direct_all_reduce(gpus: int, V: float, W_nic: float, W_nvlink: float,
                              lat_nic: float = 0.0, lat_nvlink: float = 0.0) -> float:
    """CollNet direct (InfiniBand SHARP) inside one Scalable Unit, stages streaming.

    An NVLink reduce-scatter inside the node (one step, two links: ``(g-1)/g V``
    per GPU link), the node's slice into the leaf switch and back (one link each
    way, ``V/g``), an NVLink all-gather: ``max(4 l_nvl + 2 l_nic + max(A, B), 2A, B)``
    with ``A = (g-1)/g V / W_nvlink`` and ``B = V / (g W_nic)``; ``l_*`` per link.
    The NVLink links carry the reduce-scatter and the all-gather, ``2A`` in all.
    """
    G = check_num_ranks(gpus, what="GPUs per node")
    A = (G - 1) / G * V / W_nvlink
    B = V / (G * W_nic)
    lat = (4 * lat_nvlink if G > 1 else 0.0) + 2 * lat_nic
    return max(lat + max(A, B), 2 * A, B)


def collnet_chain_all_reduce(gpus: int, V: float, W_nic: float, W_nvlink: float,
                             lat_nic: float = 0.0, lat_nvlink: float = 0.0) -> float:
    """CollNet chain (InfiniBand SHARP) inside one Scalable Unit, every hop streaming.

    ``g - 1`` NVLink hops up each channel's chain and ``g - 1`` down (two links
    each, ``V/g`` per hop), the head's slice into the leaf and back:
    ``max(4 (g-1) l_nvl + 2 l_nic + V / (g min(W_nvlink, W_nic)), 2 (g-1)/g V / W_nvlink)``
    (NCCL's latency count ``2 (ppn-1)`` intra-node steps plus the network).
    """
    G = check_num_ranks(gpus, what="GPUs per node")
    lat = 4 * (G - 1) * lat_nvlink + 2 * lat_nic
    return max(lat + V / (G * min(W_nvlink, W_nic)), 2 * (G - 1) / G * V / W_nvlink, V / (G * W_nic))


def sharp_speedup(n: int) -> float:
    """Ideal SHARP speed-up over the ring all-reduce: ``2 (n-1) / n`` (1.75 at n = 8)."""
    n = check_num_ranks(n)
    return 2 * (n - 1) / n


def reduction_depth(n: int, fan_in: int = 2) -> int:
    """Rounds needed to combine n values when a step combines ``fan_in`` of them:
    ``ceil(log_k n)``. Pairwise, 16 values need 4 rounds."""
    n = check_num_ranks(n)
    if fan_in < 2:
        raise CollectivesError(f"fan_in must be >= 2, got {fan_in}")
    depth, reach = 0, 1
    while reach < n:
        reach *= fan_in
        depth += 1
    return depth


# -- broadcast and reduce ------------------------------------------------------------

def binomial_tree_broadcast(n: int, V: float, W: float, alpha: float = 0.0) -> float:
    """``ceil(log2 n)`` rounds of the whole array: ``ceil(log2 n) (alpha + V / W)``.
    A binomial reduce is the same tree reversed and costs the same."""
    n = check_num_ranks(n)
    return math.ceil(math.log2(n)) * (alpha + V / W) if n > 1 else 0.0


def pipelined_chain_broadcast(n: int, V: float, W: float, alpha: float = 0.0,
                              chunks: int = 8) -> float:
    """The array in ``chunks`` pieces streams down a line of ``n`` ranks:
    ``(chunks + n - 2) (alpha + V / (chunks W))``, about ``V / W`` for many chunks."""
    n = check_num_ranks(n)
    return (chunks + n - 2) * (alpha + V / (chunks * W)) if n > 1 else 0.0


def direct_broadcast(n: int, V: float, W: float, alpha: float = 0.0) -> float:
    """The root sends the whole array to each of the others over its one link:
    ``alpha + (n-1) V / W`` (a direct reduce receives them the same way)."""
    n = check_num_ranks(n)
    return alpha + (n - 1) * V / W if n > 1 else 0.0


def pipelined_chain_broadcast_line(n: int, V: float, W: float, alpha: float = 0.0,
                                   chunks: int = 8, *, root: int = 0,
                                   wraparound: bool = True) -> float:
    """The pipelined chain along a line of ``n`` ranks (a ring, or a torus axis), from
    ``root`` through ``root + 1, ..., n - 1, 0, 1, ...``: every hop is to a neighbour,
    each step's pieces on different links, so :func:`pipelined_chain_broadcast` with
    ``alpha`` one link's latency. Without ``wraparound`` (a chain) and ``root > 0`` the
    hop from rank ``n-1`` back to rank 0 crosses the whole line, on the links the other
    way, which no other piece uses: the ``chunks`` steps that carry it pay
    ``(n-1) alpha``, ``(n-2) alpha`` more each. A pipelined reduce (the chain reversed)
    costs the same on links that go both ways."""
    n = check_num_ranks(n)
    base = pipelined_chain_broadcast(n, V, W, alpha, chunks)
    if wraparound or n < 3 or int(root) % n == 0:
        return base
    return base + chunks * (n - 2) * alpha


def _binomial_rounds(n: int, kind: str, reduce: bool):
    """``(hops, blocks)`` of each round of a binomial tree along a line of ``n`` ranks
    (see :func:`binomial_tree_broadcast_line`)."""
    k = 1
    while k < n:
        senders = min(k, n - k)               # ranks 0..senders-1 send k ranks on
        if kind == "bidirectional_ring":
            hops = min(k, n - k)              # the short way round
            yield hops, hops / 2 if 2 * k == n else hops
        elif kind == "ring":
            yield (n - k if reduce else k), senders
        else:
            yield k, senders
        k *= 2


def binomial_tree_broadcast_line(n: int, kind: str, V: float, W: float,
                                 alpha: float = 0.0, *, reduce: bool = False) -> float:
    """A binomial-tree broadcast (``reduce``: reduce) of the whole array along a line of
    ``n`` ranks of one ``kind``: ``"bidirectional_ring"``, ``"ring"`` (one way) or
    ``"chain"`` (from rank 0; a ring from any root, all alike).

    In round ``j`` (``k = 2**j``) ranks ``0 .. s-1``, ``s = min(k, n-k)``, send ``k``
    ranks on, and their routes overlap: the middle link of the run carries ``s`` copies
    of the array, and every route crosses it. Round ``j`` takes ``h alpha + b V / W``:
    on a two-way ring each goes the short way, ``h = b = min(k, n-k)`` (for ``2k = n``
    half each way, ``b = h / 2``); on a chain ``h = k``, ``b = s``; one way round a
    ring ``h = k`` (a reduce, ``n - k``), ``b = s``. A two-way ring of two is a chain.
    """
    n = check_num_ranks(n)
    if kind not in _A2A_KINDS:
        raise CollectivesError(f"unknown axis kind {kind!r}; use one of "
                               f"{', '.join(_A2A_KINDS)}")
    if kind == "bidirectional_ring" and n <= 2:
        kind = "chain"
    return sum(h * alpha + b * V / W for h, b in _binomial_rounds(n, kind, reduce))


def binomial_tree_all_reduce_line(n: int, kind: str, V: float, W: float,
                                  alpha: float = 0.0) -> float:
    """The binomial-tree all-reduce (reduce to rank 0, then broadcast back) along a
    line of ``n`` ranks: :func:`binomial_tree_broadcast_line` of the reduce plus the
    broadcast."""
    return (binomial_tree_broadcast_line(n, kind, V, W, alpha, reduce=True)
            + binomial_tree_broadcast_line(n, kind, V, W, alpha))


# -- point to point ----------------------------------------------------------------------

def ring_send(n: int, distance: int, V: float, W: float, alpha: float = 0.0, *,
              multipath: bool = False) -> float:
    """A send between ranks ``distance`` apart on a bidirectional ring.

    One route takes the short way: ``min(d, n-d) alpha + V / W``, except that
    opposite ranks (``2d = n``) split the message both ways. Over the two
    link-disjoint routes (``multipath``) each carries half and the long way
    sets the latency: ``max(d, n-d) alpha + V / (2W)``.
    """
    n = check_num_ranks(n)
    d = int(distance) % n
    if d == 0:
        return 0.0
    if n <= 2:
        return alpha + V / W
    if multipath or 2 * d == n:
        return max(d, n - d) * alpha + V / (2 * W)
    return min(d, n - d) * alpha + V / W


def ring_gather(n: int, V: float, W: float, alpha: float = 0.0, *, multipath: bool = False) -> float:
    """Every rank sends its block ``V / n`` to one root on a bidirectional ring.

    Either way the root's two incoming links carry ``(n-1)/(2n) V`` each (the
    opposite block, for even n, or every block, with ``multipath``, split in
    two). One route per block: ``floor(n/2) alpha + (n-1)/(2n) V / W``; split
    over both routes the farthest piece goes ``n-1`` hops:
    ``(n-1) alpha + (n-1)/(2n) V / W``.
    """
    n = check_num_ranks(n)
    if n == 1:
        return 0.0
    hops = n - 1 if multipath else n // 2
    return hops * alpha + (n - 1) / (2 * n) * V / W


def direct_gather(n: int, V: float, W: float, alpha: float = 0.0) -> float:
    """Every rank sends its block ``V / n`` to one root through a switch, all at once:
    the root's down-link carries ``n - 1`` of them, ``alpha + (n-1)/n V / W`` (``alpha``
    up and down)."""
    n = check_num_ranks(n)
    return alpha + (n - 1) / n * V / W if n > 1 else 0.0


def _gather_sides(d: int, kind: str, r: int) -> list[tuple[float, int]]:
    """``(blocks, farthest hops)`` of the messages that reach position ``r`` of a line
    of ``d`` over each of its links into ``r``."""
    if kind == "bidirectional_ring" and d > 2:
        return [((d - 1) / 2, d // 2)] * 2       # an even ring's opposite block splits
    if kind == "ring":
        return [(d - 1, d - 1)]
    return [(r, r), (d - 1 - r, d - 1 - r)]


def direct_gather_mesh(dims, kinds, root, V: float, W: float,
                       alpha: float = 0.0) -> float:
    """Every rank sends its block ``V / n`` straight to ``root`` (its coordinates) over
    a mesh whose axes are of any kind (``kinds`` per axis: ``"bidirectional_ring"``,
    ``"ring"`` one way, ``"chain"``), routed dimension by dimension, axis 0 first, the
    shortest way round (a tie split half each way), all at once.

    A message whose last leg runs along axis ``a`` enters the root over one of its links
    along ``a``, with all the others from the ``P_a = prod(dims[:a])`` ranks of every
    position ahead on that side: ``P_a c`` blocks, the most any link on its route
    carries (the links before it along ``a`` carry fewer, and along an earlier axis
    ``b`` fewer than ``P_b d_b <= P_a``). The farthest of them has gone as far as it
    can along every earlier axis first, ``H_a = sum_{b<a} far_b``, then ``m`` hops
    along ``a``::

        t = max over axes a, sides (c, m) of   (H_a + m) alpha + P_a c V / (n W)

    where each side of axis ``a`` into root position ``r`` brings ``c`` positions, the
    farthest ``m`` hops away: a two-way ring ``c = (d-1)/2``, ``m = floor(d/2)`` each
    way, a one-way ring ``c = m = d - 1``, a chain ``c = m = r`` and ``d - 1 - r``. One
    axis, a two-way ring: :func:`ring_gather`.
    """
    dims, kinds = _line_kinds(dims, kinds, _A2A_KINDS)
    root = tuple(int(r) for r in root)
    if len(root) != len(dims) or any(not 0 <= r < d for r, d in zip(root, dims)):
        raise CollectivesError(f"root {root} is not a position of dims {dims}")
    n = math.prod(dims)
    best, far, before = 0.0, 0, 1
    for d, kind, r in zip(dims, kinds, root):
        if d > 1:
            sides = _gather_sides(d, kind, r)
            for c, m in sides:
                if c > 0:
                    best = max(best, (far + m) * alpha + before * c * V / (n * W))
            far += max(m for _, m in sides)
        before *= d
    return best


# -- all-to-all ----------------------------------------------------------------------

def bidirectional_ring_all_to_all(n: int, V: float, W: float, alpha: float = 0.0) -> float:
    """Each block takes the short way; the opposite one (even n) splits.

    ``T = floor(n/2) alpha + V/(n^2 W) (m(m+1)/2 + [n even] n/4)`` with
    ``m = floor((n-1)/2)``; exactly ``V / (8W)`` for even n, a quarter of the
    bidirectional all-gather's ``V / (2W)``.
    """
    n = check_num_ranks(n)
    m = (n - 1) // 2
    blocks = m * (m + 1) / 2 + (n / 4 if n % 2 == 0 else 0)
    if n == 2:  # both directions of a 2-ring are the same link
        blocks = 1
    return (n // 2) * alpha + blocks * V / (n * n * W)


def ring_all_to_all(n: int, V: float, W: float, alpha: float = 0.0) -> float:
    """One way round: ``(n-1) alpha + (n-1)/(2n) V / W``."""
    n = check_num_ranks(n)
    return (n - 1) * alpha + (n - 1) / (2 * n) * V / W


def chain_all_to_all(n: int, V: float, W: float, alpha: float = 0.0) -> float:
    """Distance-k exchanges on a line; the middle link limits: about ``V / (4W)``.

    ``T = sum_k (k alpha + min(k, n-k) V / (n^2 W))`` for k = 1..n-1.
    """
    n = check_num_ranks(n)
    return sum(k * alpha + min(k, n - k) * V / (n * n * W) for k in range(1, n))


def direct_all_to_all(n: int, V: float, W: float, alpha: float = 0.0) -> float:
    """Over a switch: each uplink carries ``(n-1)/n`` of the rank's ``V/n``."""
    n = check_num_ranks(n)
    return alpha + (n - 1) * V / (n * n * W)


def direct_all_to_all_torus(dims, V: float, W: float, alpha: float = 0.0) -> float:
    """Direct all-to-all over every axis of a bidirectional torus with wraparound on
    each axis (every size > 2), routed dimension by dimension, the shortest way
    round each axis (a tie split half each way), all at once. ``V`` is the whole
    array (every rank's buffer); each message is ``V / n**2``.

    By symmetry every link along axis ``a`` one way carries the same bytes: the
    hops that one rank's messages take along ``a`` that way, times ``V / n**2``;
    ``n / d_a`` messages share each offset along the axis. The message to the
    diametric rank crosses every axis and takes the most hops, so it finishes last::

        t = alpha * sum(floor(d_a / 2)) + max_a (V / n**2) (n / d_a) s(d_a) / W

    with ``s(d)`` the hops one way round a line of ``d``: ``sum_{k=1}^{floor((d-1)/2)} k``
    plus ``d / 4`` for the tied opposite rank of an even ``d``.
    """
    dims = tuple(int(d) for d in dims)
    return direct_all_to_all_mesh(dims, ["bidirectional_ring" if d > 2 else "chain" for d in dims],
                                  V, W, alpha)


def direct_all_to_all_mesh(dims, kinds, V: float, W: float, alpha: float = 0.0) -> float:
    """Direct all-to-all over axes of any kind (``kinds`` per axis: ``"bidirectional_ring"``
    with wraparound both ways, ``"ring"`` one way, ``"chain"`` without wraparound), routed
    dimension by dimension, all at once. ``V`` is the whole array.

    The messages whose leg along axis ``a`` goes from position ``i`` to ``j`` are ``n / d_a``
    per line along ``a``, so a link of that line carries ``n / d_a`` times the blocks of a
    one-axis all-to-all over it (:func:`line_all_to_all_load`: the middle link of a chain,
    every link of a ring), each ``V / n**2``; the longest route crosses ``floor(d_a / 2)``
    links of a two-way ring and ``d_a - 1`` of a chain or a one-way ring::

        t = alpha * sum_a hops(d_a) + max_a load(d_a) V / (n d_a W)

    On a torus that wraps both ways this is :func:`direct_all_to_all_torus`.
    """
    dims, kinds = _line_kinds(dims, kinds, _A2A_KINDS)
    n = math.prod(dims)
    if n < 2:
        return 0.0
    load = max(line_all_to_all_load(d, k) / d for d, k in zip(dims, kinds) if d > 1) * V / n
    hops = sum(d // 2 if k == "bidirectional_ring" else d - 1 for d, k in zip(dims, kinds))
    return alpha * hops + load / W


# -- several mesh axes at once (any sizes, any mix of rings and chains) ------------

_LINE_KINDS = ("ring", "bidirectional_ring", "bidirectional_ring_whole", "chain")
_A2A_KINDS = ("ring", "bidirectional_ring", "chain")


def _line_kinds(dims, kinds, allowed=_LINE_KINDS) -> tuple[tuple[int, ...], tuple[str, ...]]:
    dims = tuple(int(d) for d in dims)
    for d in dims:
        check_num_ranks(d, what=f"axis size (in dims {dims})")
    kinds = (kinds,) * len(dims) if isinstance(kinds, str) else tuple(kinds)
    if len(kinds) != len(dims):
        raise CollectivesError(f"kinds has {len(kinds)} entries but dims {dims} has {len(dims)} axes")
    bad = [k for k in kinds if k not in allowed]
    if bad:
        raise CollectivesError(f"unknown axis kind {bad[0]!r}; use one of {', '.join(allowed)}")
    return dims, kinds


def line_steps(n: int, kind: str) -> int:
    """Steps of a one-axis all-gather of ``n`` ranks: ``n-1`` on a one-way ring or a
    chain, ``floor(n/2)`` (= ``ceil((n-1)/2)``) on a bidirectional ring."""
    n = check_num_ranks(n)
    if kind not in _LINE_KINDS:
        raise CollectivesError(f"unknown axis kind {kind!r}; use one of {', '.join(_LINE_KINDS)}")
    return n // 2 if kind.startswith("bidirectional_ring") else n - 1


def line_all_gather(n: int, kind: str, B: float, W: float, alpha: float = 0.0) -> float:
    """One-axis all-gather of blocks of ``B`` bytes (one per rank) along a line of ``n``.

    ``"ring"`` and ``"chain"``: ``(n-1) (alpha + B / W)``. ``"bidirectional_ring"``:
    ``floor(n/2) alpha + (n-1)/2 B / W`` (the opposite block of an even ring goes
    half each way; a ring of two sends its block whole over its one link each way).
    ``"bidirectional_ring_whole"``: ``ceil((n-1)/2) (alpha + B / W)``.
    """
    n = check_num_ranks(n)
    steps = line_steps(n, kind)
    if kind == "bidirectional_ring" and n > 2:
        return steps * alpha + (n - 1) / 2 * B / W
    return steps * (alpha + B / W)


def multi_axis_all_gather(dims, kinds, V: float, W: float, alpha: float = 0.0, *,
                          multi: bool = True) -> float:
    """All-gather over every axis of a mesh of any shape, axis by axis.

    ``kinds[a]`` is how axis ``a`` is run: ``"bidirectional_ring"``,
    ``"ring"`` or ``"chain"``. With ``multi=False`` (the library's
    ``sequential_axes``) the whole array gathers along axis 0, then axis 1...;
    phase ``p`` moves blocks ``prod(dims[:p]) V / N`` in ``h_p`` steps, so
    ``T = sum_p h_p (alpha + prod(dims[:p]) V / (N W))``. With ``multi=True``
    (``multi_axis``) the array is cut in ``D`` parts; part ``j`` visits the axes
    in the order rotated by ``j``, all parts at once on different axes, and each
    phase lasts as long as its slowest part:
    ``T = sum_p max_j t(d_(j,p), done_(j,p) V / (D N))``, with ``done`` the
    product of the axes that part has already gathered and ``t`` the one-axis
    time :func:`line_all_gather`. For a square torus this is
    :func:`mesh_all_gather`; about ``V / (2 D W)`` with wraparound.
    ``"bidirectional_ring_whole"`` axes send the opposite block whole (the
    book's first version). Reduce-scatter costs the same; all-reduce twice.

    Introduced in the chapter *Reduce-scatter and all-reduce: the dual of all-gather*.
    """
    dims, kinds = _line_kinds(dims, kinds)
    D, N = len(dims), int(math.prod(dims))
    parts = D if multi and D > 1 else 1
    orders = [list(range(D))[j:] + list(range(D))[:j] for j in range(parts)]
    total = 0.0
    for p in range(D):
        phase = 0.0
        for order in orders:
            axis = order[p]
            if dims[axis] == 1:
                continue
            done = math.prod(dims[a] for a in order[:p])
            phase = max(phase, line_all_gather(dims[axis], kinds[axis], done * V / (parts * N),
                                               W, alpha))
        total += phase
    return total


def line_all_to_all_load(n: int, kind: str) -> float:
    """Blocks the busiest link carries in a balanced all-to-all on a line of ``n``
    ranks (every rank sends one block to every other rank, shortest way):
    one-way ring ``n(n-1)/2``; bidirectional ring ``m(m+1)/2 + n/4`` for even
    ``n`` (``m = floor((n-1)/2)``, the opposite block split both ways), which
    is ``n^2/8``; chain ``floor(n/2) ceil(n/2)`` (the middle link).

    Introduced in the chapter *All-to-all: a sharded transpose*.
    """
    n = check_num_ranks(n)
    if kind not in _A2A_KINDS:
        raise CollectivesError(f"unknown axis kind {kind!r}; use one of {', '.join(_A2A_KINDS)}")
    if n == 1:
        return 0.0
    if kind == "ring":
        return n * (n - 1) / 2
    if kind == "chain" or n == 2:
        return (n // 2) * (n - n // 2)
    m = (n - 1) // 2
    return m * (m + 1) / 2 + (n / 4 if n % 2 == 0 else 0)


def torus_all_to_all(dims, kinds, V: float, W: float) -> float:
    """Throughput-bound time of a balanced all-to-all over every axis of a mesh,
    each block sent straight to its destination and routed dimension by
    dimension (x, then y, then z), as the ICI does.

    Along axis ``a`` every line carries a one-axis all-to-all whose blocks are
    ``N / d_a`` times larger (all the pairs that share that leg), so its
    busiest link carries ``load(d_a) V / (N d_a)`` bytes
    (:func:`line_all_to_all_load`); the axes use different links, so
    ``T = max_a load(d_a) V / (N d_a W)``. A square ``k x k`` torus gives
    ``V / (8 k W)``; one axis alone gives the one-axis formulas above.

    Introduced in the chapter *All-to-all: a sharded transpose*.
    """
    dims, kinds = _line_kinds(dims, kinds, _A2A_KINDS)
    N = int(math.prod(dims))
    return max((line_all_to_all_load(d, k) * V / (N * d * W) for d, k in zip(dims, kinds) if d > 1),
               default=0.0)


# -- hierarchical --------------------------------------------------------------------

def hierarchical_all_gather(nodes: int, gpus: int, V: float, W_nic: float, W_nvlink: float,
                            overlap: bool = True, *, alpha_nic: float = 0.0,
                            alpha_nvlink: float = 0.0) -> float:
    """Rails across nodes, then NVLink inside: stage times
    ``(M-1) (alpha_nic + V / (M G W_nic))`` and ``(G-1) (alpha_nvlink + V / (G W_nvlink))``.
    With the stages pipelined a chunk still pays both stages' latencies but the
    bandwidth terms overlap, so the slower one sets the pace; without overlap
    the stage times add. ``alpha_*`` are per ring step (two links: GPU to switch
    to GPU)."""
    lat_ib, lat_nvl = (nodes - 1) * alpha_nic, (gpus - 1) * alpha_nvlink
    ib = (nodes - 1) / nodes * V / (gpus * W_nic)
    nvl = (gpus - 1) / gpus * V / W_nvlink
    return lat_ib + lat_nvl + (max(ib, nvl) if overlap else ib + nvl)


def hierarchical_all_to_all(nodes: int, gpus: int, V: float, W_nic: float, W_nvlink: float, *,
                            alpha_nic: float = 0.0, alpha_nvlink: float = 0.0) -> float:
    """Regroup inside the node, then exchange along each rail, stages pipelined.

    With ``n = M G`` ranks and blocks of ``V / n^2``: inside the node every GPU
    sends ``G - 1`` messages of ``M`` blocks over NVLink; across nodes every
    NIC sends ``M - 1`` messages of ``G`` blocks. Each stage is one step:
    ``alpha_nvlink + alpha_nic + max((G-1) M, (M-1) G W_nvlink / W_nic) V / (n^2 W_nvlink)``.
    """
    n = nodes * gpus
    nvl = (gpus - 1) * nodes * V / (n * n * W_nvlink) if gpus > 1 else 0.0
    ib = (nodes - 1) * gpus * V / (n * n * W_nic) if nodes > 1 else 0.0
    lat = (alpha_nvlink if gpus > 1 else 0.0) + (alpha_nic if nodes > 1 else 0.0)
    return lat + max(nvl, ib)


def fat_tree_ring_all_gather(nodes: int, V: float, node_bandwidth: float) -> float:
    """First-order model: one ring over all nodes of a full fat tree,
    ``(M-1)/M * V / node_bandwidth`` (each node injects at, say, 400 GB/s)."""
    return (nodes - 1) / nodes * V / node_bandwidth
