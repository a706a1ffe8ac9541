"""Lower bounds: how fast a collective could possibly be on a topology.

Two bounds, both from the topology's links alone (no algorithm, no protocol):

* **bandwidth**: a part of the ranks (one rank, one node, one Scalable Unit,
  half of a torus) must receive, or send, a certain share of the data over
  the links that cross its boundary. An all-gather's rank must receive the
  other ranks' blocks, ``(N-1)/N`` of V; an all-reduce moves at least
  ``2(m-1)/m`` of V across the boundaries of m equal parts unless the network
  between them adds (NVLS, SHARP: then V each way); an all-to-all sends
  ``k(N-k)/N`` of one rank's buffer out of a part of k ranks. The bound is the
  largest of these times over the parts tried, and it names the part.
* **latency**: a rank needs data from the farthest member of its group, so no
  collective finishes before the latency of the quickest path of links between
  them (through switches or other ranks: NVLink to a GPU on another rail, then
  that rail, can beat the network's own route through a spine).

Only links between members of the group (and the switches on their routes)
count: a collective over one axis of a torus uses that axis's links, a
data-parallel group over the nodes of a GPU cluster (one GPU per node) its NICs.
A group of a program's mesh laid on a GPU preset (``with_mesh``) is bound as the
same ranks asked plainly: its ranks on each node leave it through their NICs.
Where the groups that run at once share a link, their bytes add: the chips of a
TPU host, each in its own group over ``slice``, send through the host's one DCN
port. A send follows the network's route between its two ranks (one NIC each way
between two GPU nodes); one split over routes through other ranks
(``multipath``) is held to the cut between the two.

>>> import collectives_lib as cl
>>> b = lower_bound("all_gather", cl.Ring(8, bandwidth=45e9, latency=1e-6), 2**30)
>>> round(b.bandwidth_time * 1e3, 3), round(b.latency_time * 1e6, 1)
(10.439, 4.0)

Introduced in the chapter *A first look* (every estimate prints its bound).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

from . import checks
from .errors import CollectivesError
from .bulk import make
from .builders import group_for
from .collective import Collective, collective as as_collective
from .topology import GpuCluster, MeshView, Switch, Topology, Torus, TpuSystem
from .units import format_rate, format_time


@dataclass(frozen=True)
class Bound:
    """The lower bound on a collective's time, and what sets it."""

    time: float
    bandwidth_time: float
    bandwidth_reason: str
    latency_time: float
    latency_reason: str
    in_network: bool = False

    def efficiency(self, time: float) -> float:
        """The bound as a share of ``time`` (1: the bound is reached)."""
        return self.time / time if time > 0 else 1.0

    def as_dict(self) -> dict:
        return {"time_s": self.time, "bandwidth_time_s": self.bandwidth_time,
                "bandwidth_reason": self.bandwidth_reason, "latency_time_s": self.latency_time,
                "latency_reason": self.latency_reason, "in_network": self.in_network}

    def __str__(self) -> str:
        return (f"{format_time(self.time)} (bandwidth {format_time(self.bandwidth_time)}: "
                f"{self.bandwidth_reason}; latency {format_time(self.latency_time)}: "
                f"{self.latency_reason})")


def _relevant(topology: Topology, members: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(vertex mask, link mask): the group's ranks, the switches on routes between
    them, and the links among those vertices."""
    links = topology.links
    inside = np.zeros(topology.num_vertices, dtype=bool)
    inside[members] = True
    if len(members) > 1 and topology.num_vertices > topology.num_ranks:
        # only switches on the routes join the ranks: where every vertex is a rank
        # (a torus) there is nothing to route for. Routes to and from the first member and
        # the last: each member's own way in and out (a host, a leaf) lies on one of them
        src, dst = [], []
        for hub in (members[0], members[-1]):
            others = members[members != hub]
            src += [np.full(len(others), hub), others]
            dst += [others, np.full(len(others), hub)]
        src, dst = np.concatenate(src), np.concatenate(dst)
        r = topology.routes(src, dst)
        ends = np.concatenate([links.src[r.inc_link], links.dst[r.inc_link]])
        inside[ends[ends >= topology.num_ranks]] = True
    use = inside[links.src] & inside[links.dst]
    return inside, use


def _crossing(topology: Topology, part: np.ndarray, use: np.ndarray) -> tuple[float, float]:
    """(bandwidth out of, bandwidth into) a set of vertices, over the links in ``use``."""
    links = topology.links
    s = np.zeros(topology.num_vertices, dtype=bool)
    s[part] = True
    out = use & s[links.src] & ~s[links.dst]
    into = use & ~s[links.src] & s[links.dst]
    return float(links.bandwidth[out].sum()), float(links.bandwidth[into].sum())


def _crossing_each(topology: Topology, ranks: np.ndarray, use: np.ndarray,
                   like: int | None = None) -> tuple[float, float]:
    """The smallest bandwidth out of, and into, any single one of ``ranks``.

    With ``like`` (a rank whose routes ``use`` holds), each rank's own links of the
    classes ``like`` uses count for it, whether or not ``use`` holds them: the routes
    found are those of a few ranks, and a rank elsewhere may have slower links (a
    straggler's, say) of the same kind."""
    links = topology.links
    if like is None:
        mine_out = mine_in = use
    else:
        mine_out = use | np.isin(links.klass, np.unique(links.klass[use & (links.src == like)]))
        mine_in = use | np.isin(links.klass, np.unique(links.klass[use & (links.dst == like)]))
    out = np.bincount(links.src[mine_out], weights=links.bandwidth[mine_out], minlength=topology.num_vertices)
    into = np.bincount(links.dst[mine_in], weights=links.bandwidth[mine_in], minlength=topology.num_vertices)
    return float(out[ranks].min()), float(into[ranks].min())


def _cluster(topology: Topology) -> GpuCluster | None:
    """The GPU cluster under ``topology`` (itself, or the preset a mesh is laid on)."""
    base = topology.base if isinstance(topology, MeshView) else topology
    return base if isinstance(base, GpuCluster) else None


def _cluster_parts(c: GpuCluster, members: np.ndarray, inside: np.ndarray):
    """The group's ranks on one node, one Scalable Unit, one pod of a GPU cluster (with
    the node's NVSwitch and the unit's leaves), wherever the group spans several: the
    NICs and uplinks its bytes cross to leave each. The group may be the whole cluster,
    an axis of it, or an axis of a mesh laid on it (one GPU of every other node, two
    nodes of 8...): the part is its own ranks, counted."""
    g = c.gpus_per_node
    node = members // g
    nodes, count = np.unique(node, return_counts=True)
    if len(nodes) > 1 and len(members) > len(nodes):        # else a node holds one rank: "each rank"
        # the fullest node: where the parts differ, an all-reduce's share of the bytes that
        # cross between them is held to the part with the most links
        first = nodes[np.argmax(count)]
        mine = members[node == first]
        yield "each node", np.concatenate([mine, [c.nvswitch_node(first)]]), len(mine), len(nodes)
    levels = [("each Scalable Unit", node // c.nodes_per_su, 1)]
    if c.num_pods > 1:                                       # a three-level fabric: a pod under its spine
        levels.append(("each pod", node // c.nodes_per_su // c.sus_per_pod, c.sus_per_pod))
    for name, unit, sus in levels:
        units, count = np.unique(unit, return_counts=True)
        if len(units) < 2:
            continue
        first = int(units[np.argmax(count)])
        mine = members[unit == first]
        first_su = first * sus
        mask = np.zeros(c.num_vertices, dtype=bool)
        mask[mine] = True
        mask[c.num_ranks + np.unique(mine // g)] = True          # their nodes' NVSwitches
        mask[[c.leaf_node(su, r) for su in range(first_su, min(first_su + sus, c.num_sus))
              for r in range(c.rails)]] = True
        if name == "each pod":
            mask[c.pod_spine_node(first)] = True
        yield name, np.nonzero(mask & inside)[0], len(mine), len(units)


def _parts(topology: Topology, members: np.ndarray, axes: tuple[int, ...], inside: np.ndarray,
           root: int | None, groups: np.ndarray):
    """(name, vertex set, ranks in it, number of such parts, ranks of each group in it)
    for the partitions worth trying; for a rooted collective, the root alone and another
    rank alone. The last is None where only the first group's ranks are in the part, else
    how many ranks of every group running at once lie in it (a TPU host's chips, each in
    its own group over ``slice``, share the host's DCN port)."""
    n = len(members)
    if root is None:
        yield "each rank", members, 1, n, None    # every rank alone (see _crossing_each)
    else:
        yield f"rank {root}", np.array([root]), 1, n, None
        other = members[members != root]
        if len(other):
            yield f"rank {int(other[0])}", other[:1], 1, n, None
    cluster = _cluster(topology)
    if isinstance(topology, Torus):
        coords = np.stack(np.unravel_index(members, topology.dims), axis=1)
        for a in axes:
            d = topology.dims[a]
            if d >= 2:
                half = members[coords[:, a] < d // 2]
                yield f"half of axis {topology.axis_names[a]}", half, len(half), 2, None
    elif cluster is not None and cluster.num_nodes > 1:
        for name, part, k, m in _cluster_parts(cluster, members, inside):
            yield name, part, k, m, None
    elif isinstance(topology, TpuSystem) and topology.num_slices > 1 and 0 in axes:
        per = topology.chips_per_slice
        if len(axes) > 1:
            k = int((members < per).sum())
            hosts = topology.num_ranks + np.arange(topology.hosts_per_slice)
            yield "each slice", np.concatenate([np.arange(per), hosts]), k, topology.num_slices, None
        # the host of the first rank, with all its chips: every group with a chip there sends
        # through the host's one DCN port
        host = topology.host_of(int(members[0]))
        chips = topology.host_chips(host)
        group_of = np.empty(topology.num_ranks, dtype=np.int64)
        group_of[groups.ravel()] = np.repeat(np.arange(len(groups)), groups.shape[1])
        ks = np.bincount(group_of[chips], minlength=len(groups))
        yield ("each host", np.concatenate([chips, [topology.host_node(host)]]),
               int(np.isin(members, chips).sum()), n, ks[ks > 0])


def _plain_torus(topology: Topology) -> bool:
    """A torus with the links and routes of :class:`Torus` (one bandwidth, one latency)."""
    return (isinstance(topology, Torus) and type(topology).routes is Torus.routes
            and type(topology)._build_links is Torus._build_links)


def _torus_each(topology: Torus, axes) -> tuple[float, float]:
    """:func:`_crossing_each` on a plain torus, counted: along each axis of the group a
    rank has two links each way with wraparound (one on a one-way ring), else one at
    the ends of the line (none out of a one-way line's last rank, none into its first);
    some rank sits at an end of every axis at once."""
    out = into = 0
    for a in axes:
        d, wrap = topology.dims[a], topology.wraparound[a]
        if d < 2:
            continue
        if topology.bidirectional:
            out += 2 if wrap else 1
            into += 2 if wrap else 1
        else:
            out += 1 if wrap else 0
            into += 1 if wrap else 0
    return out * topology.bandwidth, into * topology.bandwidth


def _torus_rank(topology: Torus, axes, rank: int) -> tuple[float, float]:
    """:func:`_crossing` of one rank on a plain torus: its links along the group's axes."""
    coords = np.unravel_index(rank, topology.dims)
    out = into = 0
    for a in axes:
        d, wrap, c = topology.dims[a], topology.wraparound[a], int(coords[a])
        if d < 2:
            continue
        up, down = (c < d - 1 or wrap), (c > 0 or wrap)
        if topology.bidirectional:
            out += up + down
            into += up + down
        else:
            out += up
            into += down
    return out * topology.bandwidth, into * topology.bandwidth


def _torus_half(topology: Torus, axes, name: str, n: int) -> tuple[float, float]:
    """:func:`_crossing` of "half of axis a" on a plain torus, counted: each of the
    ``n / d`` lines along the axis crosses the cut once at the middle, and once more
    at the wraparound (both ways on bidirectional links; a one-way ring's wraparound
    only comes in)."""
    a = next(a for a in axes if name == f"half of axis {topology.axis_names[a]}")
    d, wrap = topology.dims[a], topology.wraparound[a]
    lines = n // d
    if topology.bidirectional:
        out = into = 1 + (1 if wrap else 0)
    else:
        out, into = 1, (1 if wrap else 0)
    return lines * out * topology.bandwidth, lines * into * topology.bandwidth


def _reduces_between(topology: Topology, part_name: str, members: np.ndarray) -> bool:
    """Whether the network adds between the parts: an NVSwitch that reduces (NVLS) between
    the group's ranks on one node, SHARP's switches between nodes."""
    base = topology.base if isinstance(topology, MeshView) else topology
    if part_name.startswith("each rank") or part_name.startswith("rank "):
        if isinstance(base, Switch):
            return base.in_network
        if isinstance(base, GpuCluster):
            node = members // base.gpus_per_node
            if len(np.unique(node)) < len(node):
                return base.system.nvls      # the ranks of a node meet in an NVSwitch that adds
    if isinstance(base, GpuCluster) and part_name != "each rank":
        return bool(getattr(base, "sharp", False))
    return False


def _needs(coll: Collective, V: float, n: int, k: int, m: int, in_network: bool,
           root_inside: bool) -> tuple[float, float]:
    """(bytes a part of k of the n ranks must send out, bytes it must receive): a closed
    form per collective; a reduction with a dual is its dual run backwards (what one
    must receive, the other must send)."""
    if coll.reduces and coll.dual is not None:
        send, recv = _needs(coll.dual, V, n, k, m, in_network, root_inside)
        return recv, send
    if coll is Collective.ALL_GATHER:
        return 0.0, (n - k) / n * V
    if coll is Collective.ALL_REDUCE:
        move = V if in_network else 2 * (m - 1) / m * V
        return (move, move) if m > 1 else (0.0, 0.0)
    if coll is Collective.ALL_TO_ALL:
        move = k * (n - k) / n * V
        return move, move
    if coll is Collective.BROADCAST:
        return (V, 0.0) if root_inside else (0.0, V)
    if coll is Collective.GATHER:
        return (0.0, (n - k) / n * V) if root_inside else (k / n * V, 0.0)
    return 0.0, 0.0


def _latencies(topology: Topology, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """The latency of the route of each flow (the longer half where a flow splits)."""
    if (isinstance(topology, Torus) and type(topology).routes is Torus.routes
            and type(topology)._build_links is Torus._build_links):   # one latency per hop
        return topology.route_hops(src, dst) * float(topology.latency)
    r = topology.routes(src, dst)
    per_sub = np.bincount(r.inc_sub, weights=topology.links.latency[r.inc_link],
                          minlength=len(r.sub_flow))
    out = np.zeros(len(src))
    np.maximum.at(out, r.sub_flow, per_sub)
    return out


def _least(topology: Topology, start: int, targets: np.ndarray, reverse: bool = False) -> np.ndarray:
    """The least latency from ``start`` to each target (to ``start`` with ``reverse``)."""
    if _plain_torus(topology):              # its routes are shortest: counted, not searched
        ends = np.full(len(targets), start)
        return _latencies(topology, targets, ends) if reverse else _latencies(topology, ends, targets)
    return _nearest(topology, start, np.asarray(targets, dtype=np.int64), reverse)


def _nearest(topology: Topology, start: int, targets: np.ndarray, reverse: bool = False) -> np.ndarray:
    """The least latency of any path of links from ``start`` to each of ``targets``
    (from each target to ``start`` with ``reverse``): through switches or other ranks,
    whatever the network's own routes are. A schedule that forwards through other ranks
    (NVLink to a GPU on another rail, then that rail) can beat the route between two
    ranks, never this."""
    links = topology.links
    src, dst = (links.dst, links.src) if reverse else (links.src, links.dst)
    lat = np.asarray(links.latency, dtype=float)
    nv = int(topology.num_vertices)
    dist = np.full(nv, np.inf)
    dist[int(start)] = 0.0
    order = np.argsort(dst, kind="stable")
    s_o, d_o, l_o = src[order], dst[order], lat[order]
    heads = np.flatnonzero(np.r_[True, d_o[1:] != d_o[:-1]]) if len(d_o) else np.zeros(0, int)
    into = d_o[heads]
    for _ in range(64):                  # relax every link at once, a hop at a time
        best = np.minimum.reduceat(dist[s_o] + l_o, heads) if len(heads) else heads
        new = dist.copy()
        new[into] = np.minimum(dist[into], best)
        if np.array_equal(new, dist):
            return dist[targets]
        dist = new
    return _dijkstra(nv, s_o, d_o, l_o, int(start))[targets]   # long paths: one at a time


def _dijkstra(nv: int, src: np.ndarray, dst: np.ndarray, lat: np.ndarray, start: int) -> np.ndarray:
    order = np.argsort(src, kind="stable")
    d_o, l_o = dst[order].tolist(), lat[order].tolist()
    first = np.searchsorted(src[order], np.arange(nv + 1)).tolist()
    dist = [float("inf")] * nv
    dist[start] = 0.0
    heap = [(0.0, start)]
    while heap:
        d, v = heapq.heappop(heap)
        if d > dist[v]:
            continue
        for e in range(first[v], first[v + 1]):
            nd, w = d + l_o[e], d_o[e]
            if nd < dist[w]:
                dist[w] = nd
                heapq.heappush(heap, (nd, w))
    return np.asarray(dist)


def _send_bound(topology: Topology, group, groups: np.ndarray, V: float, multipath: bool) -> Bound:
    """A send from the group's ``src`` to its ``dst`` (ranks of the group: over an axis, the
    pair in every group along it, all at once). Over the network's routes, the busiest link
    sets the bound: the messages whose routes cross it (a split route shares a message over
    its halves), over its bandwidth. Split over routes through other ranks (``multipath``,
    over the whole topology only), the cut between the two ranks."""
    i, j = int(group.options.get("src", 0)), int(group.options.get("dst", groups.shape[1] - 1))
    s, d = int(groups[0][i]), int(groups[0][j])
    links = topology.links
    if multipath:
        capacity = topology.cut_bandwidth([s], [d]) if topology.num_vertices <= 20000 else min(
            float(links.bandwidth[links.src == s].sum()), float(links.bandwidth[links.dst == d].sum()))
        what = f"the cut between rank {s} and rank {d} carries {format_rate(capacity)}"
    else:
        r = topology.routes(groups[:, i], groups[:, j])
        load = np.bincount(r.inc_link, weights=r.sub_weight[r.inc_sub], minlength=len(links.src))
        on = np.nonzero(load > 1e-12)[0]
        capacity = 0.0
        what = "no link between them"
        if len(on):
            rate = links.bandwidth[on] / load[on]
            busiest = int(on[np.argmin(rate)])
            capacity = float(rate.min())
            what = f"the route from rank {s} to rank {d} carries {format_rate(capacity)}"
            if load[busiest] > 1 + 1e-9:
                what = (f"{load[busiest]:.4g} of the {len(groups)} groups' sends cross "
                        f"{topology.node_label(int(links.src[busiest]))} -> "
                        f"{topology.node_label(int(links.dst[busiest]))} "
                        f"({format_rate(float(links.bandwidth[busiest]))}): {format_rate(capacity)} each")
    lat = float(_least(topology, s, np.array([d]))[0])
    bw_t = V / capacity if capacity > 0 else 0.0
    return Bound(max(bw_t, lat), bw_t, what, lat,
                 f"the quickest path of links from rank {s} to rank {d}")


def lower_bound(collective, topology: Topology, nbytes: float, *, axes=None, root: int | None = None,
                src: int | None = None, dst: int | None = None, network: bool = True,
                multipath: bool = False) -> Bound:
    """The lower bound on ``collective`` of ``nbytes`` (nccl-tests' size) over ``axes``.

    ``network=False`` is the bound for algorithms whose switches only forward: the
    network's own reduction (NVLS, SHARP) is not counted. A send follows the network's
    route between its two ranks (one NIC each side between two GPU nodes), unless
    ``multipath=True``: split over routes through other ranks, it is held to the
    cut between the two."""
    return lower_bounds(collective, topology, [nbytes], axes=axes, root=root, src=src, dst=dst,
                        network=network, multipath=multipath)[0]


def lower_bounds(collective, topology: Topology, sizes, *, axes=None, root: int | None = None,
                 src: int | None = None, dst: int | None = None, network: bool = True,
                 multipath: bool = False) -> list[Bound]:
    """:func:`lower_bound` for many sizes: the cuts are found once (the bandwidth
    bound grows in proportion to the size, the latency bound does not)."""
    if isinstance(sizes, str) or not np.iterable(sizes):
        raise CollectivesError(f"sizes must be a list of sizes in bytes, got {sizes!r}")
    sizes = checked_sizes(sizes)
    multipath = checks.flag(multipath, "multipath (a send split over routes through other ranks)")
    one = _lower_bound(collective, topology, 1.0, axes=axes, root=root, src=src, dst=dst, network=network,
                       multipath=multipath)
    return per_size(one, sizes, topology)


def unit_bound(collective, topology: Topology, *, axes=None, root: int | None = None,
               src: int | None = None, dst: int | None = None, network: bool = True,
               multipath: bool = False) -> Bound:
    """The lower bound on one byte: :func:`per_size` scales it to every size."""
    multipath = checks.flag(multipath, "multipath (a send split over routes through other ranks)")
    return _lower_bound(collective, topology, 1.0, axes=axes, root=root, src=src, dst=dst, network=network,
                        multipath=multipath)


def checked_sizes(sizes) -> list[float]:
    """``sizes`` as floats >= 0, else an error naming the size."""
    # whole numbers of bytes below 2**53 are exact floats (the common case, checked at once)
    if all(type(v) is int and 0 <= v < 1 << 53 for v in sizes):
        return [float(v) for v in sizes]
    return [checks.nonnegative(v, "size (bytes)") for v in sizes]


def per_size(one: Bound, sizes: list[float], topology: Topology) -> list[Bound]:
    """The bound of 1 byte, ``one``, at every size of ``sizes`` (floats >= 0): the
    bandwidth bound grows in proportion to the size, the latency bound does not."""
    with np.errstate(over="ignore", invalid="ignore"):
        worst = one.bandwidth_time * max(sizes, default=0.0) + one.latency_time
    if not np.isfinite(worst):
        raise CollectivesError(f"the lower bound of {max(sizes):g} bytes on {topology!r} overflows a float: "
                               f"its bandwidth or latency is beyond any real link")
    bw1, lat, bw_why, lat_why, net = (one.bandwidth_time, one.latency_time, one.bandwidth_reason,
                                      one.latency_reason, one.in_network)
    out = []
    for v in sizes:
        bw = bw1 * v
        out.append(make(Bound, {"time": lat if lat > bw else bw,          # max(bw, lat)
                                "bandwidth_time": bw, "bandwidth_reason": bw_why, "latency_time": lat,
                                "latency_reason": lat_why, "in_network": net}))
    return out


def _lower_bound(collective, topology: Topology, nbytes: float, *, axes=None, root: int | None = None,
                 src: int | None = None, dst: int | None = None, network: bool = True,
                 multipath: bool = False) -> Bound:
    coll = as_collective(collective)
    ranks = {"root": root, "src": src, "dst": dst}
    group, groups = group_for(coll, topology, axes, {k: v for k, v in ranks.items() if v is not None})
    members = np.asarray(groups[0], dtype=np.int64)
    n = len(members)
    root = int(group.options.get("root", 0)) if not np.iterable(group.options.get("root", 0)) else 0
    if coll is Collective.SEND:
        return _send_bound(topology, group, np.asarray(groups, dtype=np.int64), float(nbytes), multipath)
    V = float(nbytes)
    plain = _plain_torus(topology)
    # a plain torus's cuts are counted, not found: its links need not be built
    inside, use = (None, None) if plain else _relevant(topology, members)
    best, why = 0.0, "nothing needs to move"
    any_network = False
    root_rank = int(members[root])
    for name, part, k, m, ks in _parts(topology, members, group.axes, inside,
                                       root_rank if coll.rooted else None, groups):
        in_network = network and coll is Collective.ALL_REDUCE and _reduces_between(topology, name, members)
        root_inside = bool(np.isin(root_rank, part)) and name != "each rank"
        if ks is not None and coll.rooted:
            continue                          # each group's root is its own: not counted together
        if ks is None:
            send, recv = _needs(coll, V, n, k, m, in_network, root_inside)
        else:                                 # every group with ranks in the part, at once
            both = [_needs(coll, V, n, int(j), max(1, n // int(j)), in_network, False) for j in ks]
            send, recv = sum(b[0] for b in both), sum(b[1] for b in both)
        if ks is not None:
            # the part holds other groups' ranks too: their links of the kinds the first
            # group uses count (a TPU host's PCIe and DCN)
            out_bw, in_bw = _crossing(topology, part, np.isin(topology.links.klass,
                                                               np.unique(topology.links.klass[use])))
        elif name == "each rank":               # the rank with the fewest links sets the bound
            # on a torus every vertex is a rank, so every rank's links are known; elsewhere
            # each rank's links of the kinds rank 0's routes use count for it
            out_bw, in_bw = (_torus_each(topology, group.axes) if plain
                             else _crossing_each(topology, part, use)
                             if isinstance(topology, Torus)
                             else _crossing_each(topology, part, use, like=int(part[0])))
        elif plain and len(part) == 1:
            out_bw, in_bw = _torus_rank(topology, group.axes, int(part[0]))
        elif plain:
            out_bw, in_bw = _torus_half(topology, group.axes, name, n)
        else:
            out_bw, in_bw = _crossing(topology, part, use)
        for need, bw, verb in ((send, out_bw, "send"), (recv, in_bw, "receive")):
            if need > 0 and bw > 0 and need / bw > best:
                best = need / bw
                any_network = in_network
                share = need / V
                unit = "a rank's buffer" if coll.sized_per_rank else "the size"
                what = unit if abs(share - 1) < 1e-12 else f"{share:.4g} x {unit}"
                why = (f"{name} must {verb} {what} over {format_rate(bw)} of links"
                       + (" (the network reduces between them)" if in_network else ""))
    # the farthest member
    if n > 1:
        others = members[1:] if not coll.rooted else np.setdiff1d(members, [root_rank])
        start = members[0] if not coll.rooted else root_rank
        there, back = (_least(topology, int(start), others, reverse) for reverse in (False, True))
        lat = float(max(there.max(initial=0.0), back.max(initial=0.0)))
        lat_why = (f"the farthest rank from rank {int(start)} is {format_time(lat)} of links away"
                   if lat > 0 else "the links have no latency")
    else:
        lat, lat_why = 0.0, "one rank: nothing to wait for"
    return Bound(max(best, lat), best, why, lat, lat_why, any_network)
