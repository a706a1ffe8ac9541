"""Positions as data: where the drawings put nodes, links and packets.

Every function returns numpy arrays (or small values made of them) and this
module never imports matplotlib, so layouts are tested on their own and the
drawing modules only turn them into artists.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..errors import CollectivesError
from ..schedule import Schedule
from ..topology import GpuCluster, Topology, Torus, TpuSlice, TpuSystem


def _fixed(a) -> np.ndarray:
    """A read-only float array: a layout is a value."""
    a = np.array(a, dtype=float)
    a.setflags(write=False)
    return a


def rects(x0, y0, w, h) -> np.ndarray:
    """(K, 4, 2) rectangle vertices."""
    x0, y0, w, h = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (x0, y0, w, h)))
    x0, y0, w, h = (v.ravel() for v in (x0, y0, w, h))
    return np.stack([np.stack([x0, y0], 1), np.stack([x0 + w, y0], 1),
                     np.stack([x0 + w, y0 + h], 1), np.stack([x0, y0 + h], 1)], axis=1)


def squares(pos: np.ndarray, size: float) -> np.ndarray:
    """(K, 4, 2) vertices of squares of side ``size`` centred on ``pos``."""
    return rects(pos[:, 0] - size / 2, pos[:, 1] - size / 2, size, size)


def grid_coords(topo: Torus) -> np.ndarray:
    """(num_ranks, len(dims)) integer coordinates of every chip, as ``topo.coords(rank)``."""
    return np.stack(np.unravel_index(np.arange(topo.num_ranks), topo.dims), axis=1)


def torus_link_paths(topo: Torus, pos: np.ndarray, axis_vec: Mapping[int, np.ndarray], *,
                     select=None, offset: float = 0.0, stub: float = 0.78, shrink: float = 0.0):
    """Polylines for torus links.

    ``pos[rank]`` is each chip's drawing position (NaN: not drawn);
    ``axis_vec[axis]`` the drawing direction of the axis (axes not in it are
    skipped). Wraparound links become two stubs: out of the source's edge and
    into the destination's opposite edge, joined by NaN (one path per link).
    ``offset`` shifts a link to the right of its direction of travel, so the
    two directions of a full-duplex link sit side by side.
    Returns (link ids, list of (k, 2) arrays, is_wrap per returned link).
    """
    links = topo.links
    coords = grid_coords(topo)
    axis = topo.link_axis()
    wrap = topo.is_wrap_link()
    ids = np.arange(len(links)) if select is None else np.asarray(select)
    keep = np.isin(axis[ids], list(axis_vec))
    ids = ids[keep]
    src, dst = links.src[ids], links.dst[ids]
    ok = ~np.isnan(pos[src, 0]) & ~np.isnan(pos[dst, 0])
    ids, src, dst = ids[ok], src[ok], dst[ok]
    ax_of = axis[ids]
    paths, wraps = [], []
    for lid, s, d, a in zip(ids.tolist(), src.tolist(), dst.tolist(), ax_of.tolist()):
        v = axis_vec[a]
        size = topo.dims[a]
        delta = (coords[d, a] - coords[s, a]) % size
        sign = 1.0 if delta == 1 else -1.0
        if size == 2 and not wrap[lid]:
            sign = 1.0 if coords[d, a] > coords[s, a] else -1.0
        travel = sign * v
        normal = np.array([travel[1], -travel[0]]) * offset
        p, q = pos[s] + normal, pos[d] + normal
        if wrap[lid] and topo.dims[a] > 1 and size > 2 or (wrap[lid] and size == 2 and not topo.bidirectional):
            out = p + travel * stub
            inn = q - travel * stub
            p2 = p + travel * shrink
            q2 = q - travel * shrink
            paths.append(np.array([p2, out, [np.nan, np.nan], inn, q2]))
            wraps.append(True)
        else:
            direction = q - p
            length = np.hypot(*direction)
            unit = direction / length if length else direction
            paths.append(np.array([p + unit * shrink, q - unit * shrink]))
            wraps.append(False)
    return ids, paths, np.array(wraps, dtype=bool)


def undirected_links(topo: Topology, ids: np.ndarray) -> np.ndarray:
    """Keep one link of each full-duplex pair (the one with src < dst, or the
    only one for one-way links)."""
    links = topo.links
    src, dst = links.src[ids], links.dst[ids]
    pair = {}
    for lid, s, d in zip(ids.tolist(), src.tolist(), dst.tolist()):
        key = (min(s, d), max(s, d))
        pair.setdefault(key, lid)
    return np.array(sorted(pair.values()), dtype=np.int64)


def grid_layout(topo: Torus, plane: int | None = None) -> np.ndarray:
    """Drawing positions: x across, y up; for 3D, only the chips of z-plane ``plane``."""
    c = grid_coords(topo).astype(float)
    if len(topo.dims) == 1:
        return np.stack([c[:, 0], np.zeros(len(c))], 1)
    pos = c[:, :2].copy()
    if len(topo.dims) == 3:
        pos[c[:, 2] != plane] = np.nan
    return pos


def tree_layout(parent) -> np.ndarray:
    """x, y of the nodes of a tree given as a parent array (-1 at the root): the root
    on top at y = 0, depth d at y = -d, the leaves one unit apart in depth-first order
    (children by rank) and every other node centred over its children."""
    parent = np.asarray(parent, dtype=np.int64)
    n = len(parent)
    roots = np.nonzero(parent < 0)[0]
    if len(roots) != 1:
        raise CollectivesError(f"a tree has exactly one root, got {len(roots)}")
    children: list[list[int]] = [[] for _ in range(n)]
    for child in np.argsort(parent, kind="stable").tolist():
        if parent[child] >= 0:
            children[int(parent[child])].append(child)
    pos = np.full((n, 2), np.nan)
    pos[roots[0], 1] = 0.0
    order, stack = [], [int(roots[0])]
    while stack:                          # depth first, children in rank order
        node = stack.pop()
        order.append(node)
        for child in sorted(children[node], reverse=True):
            pos[child, 1] = pos[node, 1] - 1
            stack.append(child)
    if len(order) != n:
        raise CollectivesError("the parent array does not join every node to the root")
    leaves = [v for v in order if not children[v]]
    pos[leaves, 0] = np.arange(len(leaves), dtype=float)
    for node in reversed(order):          # children before their parent
        if children[node]:
            xs = pos[children[node], 0]
            pos[node, 0] = (xs.min() + xs.max()) / 2
    return _fixed(pos)


def ring_layout(n: int, radius: float = 1.0, start: float = 90.0) -> np.ndarray:
    """(n, 2) positions on a circle of ``radius``, rank 0 at ``start`` degrees, clockwise."""
    angles = np.deg2rad(start - 360.0 * np.arange(n) / n)
    return np.stack([radius * np.cos(angles), radius * np.sin(angles)], 1)


def isometric(p, scale=1.0):
    """Isometric projection of (x, y, z) points: x to the right-down, y to the left-down, z up."""
    p = np.asarray(p, dtype=float)
    c, s = math.cos(math.radians(30)), math.sin(math.radians(30))
    u = (p[..., 0] - p[..., 1]) * c
    v = p[..., 2] - (p[..., 0] + p[..., 1]) * s
    return np.stack([u, v], -1) * scale


def isometric_box(lo, hi) -> np.ndarray:
    """(3, 4, 2): the three visible faces (top, right at x = hi, front at y = hi) of the box
    from corner ``lo`` to corner ``hi`` (x, y, z), in :func:`isometric` projection."""
    (x0, y0, z0), (x1, y1, z1) = lo, hi
    return np.stack([isometric(np.array(f)) for f in (
        [(x0, y0, z1), (x1, y0, z1), (x1, y1, z1), (x0, y1, z1)],     # top
        [(x1, y0, z0), (x1, y1, z0), (x1, y1, z1), (x1, y0, z1)],     # right (x = x1)
        [(x0, y1, z0), (x1, y1, z0), (x1, y1, z1), (x0, y1, z1)],     # front (y = y1)
    )])


def isometric_grid(dims, cube: int) -> np.ndarray:
    """(K, 2, 2) segments dividing the visible faces of a ``dims`` box into ``cube``-sided cubes."""
    X, Y, Z = dims
    segs = []
    for x in range(cube, X, cube):
        segs += [isometric([(x, 0, Z), (x, Y, Z)]), isometric([(x, Y, 0), (x, Y, Z)])]
    for y in range(cube, Y, cube):
        segs += [isometric([(0, y, Z), (X, y, Z)]), isometric([(X, y, 0), (X, y, Z)])]
    for z in range(cube, Z, cube):
        segs += [isometric([(X, 0, z), (X, Y, z)]), isometric([(0, Y, z), (X, Y, z)])]
    return np.array(segs) if segs else np.zeros((0, 2, 2))


@dataclass(frozen=True)
class StarLayout:
    """Endpoints on a circle around one switch (:func:`star_layout`)."""

    nodes: np.ndarray        # (n, 2) endpoint centres, on the unit circle
    node_radius: float       # radius of an endpoint's circle
    hub_half: float          # half the side of the switch's square, centred on (0, 0)
    spokes: np.ndarray       # (n, 2, 2) each endpoint's link: from its circle to the switch's edge


def star_layout(n: int, hub_half: float = 0.3) -> StarLayout:
    """``n`` endpoints (GPUs on an NVSwitch) on a circle, rank 0 on top, around a square switch."""
    nodes = ring_layout(n)
    node_radius = min(0.12, 2.4 / n)
    inner = nodes * (1 - node_radius)
    outer = nodes * (hub_half / np.abs(nodes).max(axis=1, keepdims=True))
    return StarLayout(_fixed(nodes), node_radius, hub_half, _fixed(np.stack([inner, outer], axis=1)))


@dataclass(frozen=True)
class FatTreeLayout:
    """Where :func:`draw_fat_tree` puts a GPU cluster's parts (:func:`fat_tree_layout`)."""

    aggregate: bool          # Scalable Units drawn as boxes (no single GPUs)
    levels: Mapping[str, float]   # the height of each level: NVSwitch < GPU < leaf < spine
    gpus: np.ndarray         # (num_ranks, 2) GPU centres (NaN when aggregated)
    nvswitches: np.ndarray   # (num_nodes, 2) centres of the nodes' NVSwitch bars (NaN when aggregated)
    nvswitch_width: float    # width of an NVSwitch bar
    sus: np.ndarray          # (num_sus, 2) x extent of each Scalable Unit
    su_width: float          # width of an aggregated Scalable Unit's box
    leaves: np.ndarray       # (num_leaves, 2) leaf switch centres, rail by rail within each SU
    spine: np.ndarray        # (2, 2) the ends of the spine bar
    xlim: tuple[float, float]  # the extent of the tree in x


#: Heights of a fat tree's levels in :func:`fat_tree_layout` (GPUs at 0).
FAT_TREE_LEVELS = {"nvswitch": -1.2, "gpu": 0.0, "leaf": 3.0, "spine": 5.0}


def fat_tree_layout(cluster: GpuCluster, aggregate: bool | None = None) -> FatTreeLayout:
    """A rail-optimised fat tree bottom to top: each node's NVSwitch, its GPUs, one leaf per
    rail per Scalable Unit above them, and the spine. ``aggregate`` (default: more than 8
    nodes, as a SuperPod) lays out each Scalable Unit as one box instead of GPU by GPU."""
    m, g, rails = cluster.num_nodes, cluster.gpus_per_node, cluster.rails
    n = cluster.num_ranks
    if aggregate is None:
        aggregate = m > 8
    num_sus = cluster.num_sus
    gpu_node = np.arange(n) // g
    gpu_su = gpu_node // cluster.nodes_per_su
    su_w = 10.0
    if not aggregate:
        node_w = g + 1.2
        gpu_x = gpu_node * node_w + (np.arange(n) % g)
        su_span = {su: (gpu_x[gpu_su == su].min(), gpu_x[gpu_su == su].max()) for su in range(num_sus)}
        gpus = np.stack([gpu_x, np.full(n, FAT_TREE_LEVELS["gpu"])], axis=1)
        node_lo = np.arange(m) * (g + 1.2) - 0.45
        nvswitches = np.stack([node_lo + (g - 0.1) / 2, np.full(m, FAT_TREE_LEVELS["nvswitch"])], axis=1)
    else:
        su_span = {su: (su * (su_w + 1.5), su * (su_w + 1.5) + su_w) for su in range(num_sus)}
        gpus = np.full((n, 2), np.nan)
        nvswitches = np.full((m, 2), np.nan)
    leaf_x = np.zeros(cluster.num_leaves)
    for su in range(num_sus):
        lo, hi = su_span[su]
        step = (hi - lo) / max(rails, 1)
        leaf_x[su * rails:(su + 1) * rails] = lo + step * (np.arange(rails) + 0.5)
    xmin = min(v[0] for v in su_span.values()) - 0.8
    xmax = max(v[1] for v in su_span.values()) + 0.8
    y_spine = FAT_TREE_LEVELS["spine"]
    return FatTreeLayout(
        aggregate=bool(aggregate), levels=dict(FAT_TREE_LEVELS), gpus=_fixed(gpus), nvswitches=_fixed(nvswitches),
        nvswitch_width=g - 0.1, sus=_fixed([su_span[su] for su in range(num_sus)]), su_width=su_w,
        leaves=_fixed(np.stack([leaf_x, np.full(len(leaf_x), FAT_TREE_LEVELS["leaf"])], axis=1)),
        spine=_fixed([[xmin + 0.6, y_spine], [xmax - 0.6, y_spine]]), xlim=(float(xmin), float(xmax)))


@dataclass(frozen=True)
class TpuSystemLayout:
    """Where :func:`draw_tpu_system` puts chips, hosts and the DCN switch (:func:`tpu_system_layout`)."""

    slice_chips: np.ndarray  # (chips per slice, 2) one slice's chips, on its grid
    slice_x: np.ndarray      # (num_slices,) x offset of each slice, side by side
    chips: np.ndarray        # (num_chips, 2) every chip, slice after slice
    host_of: np.ndarray      # (num_chips,) the host serving each chip
    hosts: np.ndarray        # (num_hosts, 2) each host in the middle of its chips
    dcn: np.ndarray | None   # (2,) the DCN switch above the slices (None for a single slice)
    width: float             # x extent of the slices (from 0)


def tpu_system_layout(system) -> TpuSystemLayout:
    """A 2D TPU slice (or a :class:`TpuSystem` of them) with its CPU hosts: chips on their grid,
    slices side by side two chips apart, each host at the mean of its chips, the DCN switch
    centred above."""
    if isinstance(system, TpuSlice):
        sl, num_slices, has_dcn = system, 1, False
    elif isinstance(system, TpuSystem):
        sl, num_slices, has_dcn = system.slice, system.num_slices, True
    else:
        raise CollectivesError(f"tpu_system_layout lays out a TPU slice or system, not {system!r}")
    if len(sl.dims) != 2:
        raise CollectivesError(f"tpu_system_layout lays out 2D slices; {sl!r} has {len(sl.dims)} axes")
    X, Y = sl.dims
    gap = 2.0
    cps = sl.num_ranks
    base = grid_layout(sl)
    slice_x = np.arange(num_slices) * (X + gap)
    chips = np.concatenate([base + np.array([sx, 0.0]) for sx in slice_x])
    hosts_per_slice = sl.num_hosts
    host_of = np.concatenate([np.asarray(sl.host_of(np.arange(cps))) + s * hosts_per_slice
                              for s in range(num_slices)])
    num_hosts = hosts_per_slice * num_slices
    hosts = np.zeros((num_hosts, 2))
    for h in range(num_hosts):
        hosts[h] = chips[host_of == h].mean(0)
    width = num_slices * (X + gap) - gap
    dcn = _fixed([(width - 1) / 2, Y + 1.3]) if has_dcn else None
    host_of = np.asarray(host_of, dtype=np.int64)
    host_of.setflags(write=False)
    return TpuSystemLayout(_fixed(base), _fixed(slice_x), _fixed(chips), host_of, _fixed(hosts), dcn, float(width))


@dataclass(frozen=True)
class ScheduleLayout:
    """Where :func:`draw_transfers` puts a schedule's participants (:func:`schedule_layout`)."""

    kind: str                # "grid" (the ranks on a 2D torus) or "ring" (a circle in rank order)
    positions: np.ndarray    # (num_participants, 2); switch agents in the middle of the ring
    radius: float            # radius of a rank's circle


def schedule_layout(schedule: Schedule, topology: Topology | None) -> ScheduleLayout:
    """The ranks of ``schedule`` on ``topology``'s grid when it is a 2D torus of exactly its
    ranks (and no switch agents take part); otherwise on a circle in rank order, agents in
    the middle (one at the centre, several on a small inner circle)."""
    P, R = schedule.num_participants, schedule.num_ranks
    if (isinstance(topology, Torus) and len(topology.dims) == 2 and topology.num_ranks == R
            and not schedule.agents):
        return ScheduleLayout("grid", _fixed(grid_layout(topology)), 0.24)
    pos = np.zeros((P, 2))
    pos[:R] = ring_layout(R)
    agents = P - R
    if agents == 1:
        pos[R] = (0.0, 0.0)
    elif agents > 1:
        pos[R:] = ring_layout(agents, radius=0.45)
    return ScheduleLayout("ring", _fixed(pos), min(0.11, 2.2 / max(R, 1)))


def arrow_heads(paths, size):
    """(K, 3, 2) triangles of ``size`` at the end of each path, pointing along its last segment."""
    tris = []
    for pth in paths:
        q = pth[-1]
        p = pth[-2]
        v = q - p
        L = np.hypot(*v)
        u = v / L if L else np.array([1.0, 0.0])
        nrm = np.array([-u[1], u[0]])
        tris.append([q, q - u * size + nrm * size * 0.45, q - u * size - nrm * size * 0.45])
    return np.array(tris) if tris else np.zeros((0, 3, 2))


@dataclass(frozen=True)
class ClusterLayout:
    """GPUs node by node under one leaf per rail (:func:`cluster_layout`)."""

    gpus: np.ndarray         # (num_ranks, 2) GPU centres, nodes side by side
    leaves: np.ndarray       # (rails, 2) leaf switch centres above the nodes
    pitch: float             # distance from one node's first GPU to the next node's
    node_x0: np.ndarray      # (num_nodes,) left edge of each node's box
    spine_y: float           # height of the spine line, above the leaves


def cluster_layout(num_ranks: int, gpus: int, rails: int) -> ClusterLayout:
    """``num_ranks`` GPUs, ``gpus`` per node, the nodes side by side at height 0 with one leaf
    switch per rail spread evenly above them, and the spine above the leaves."""
    nodes = num_ranks // gpus
    pitch = gpus + 0.8
    r = np.arange(num_ranks)
    gpu_pos = np.stack([(r // gpus) * pitch + (r % gpus), np.zeros(num_ranks)], axis=1)
    width = nodes * pitch - 0.8 - 1
    leaf_pos = np.stack([width * (np.arange(rails) + 0.5) / rails, np.full(rails, 2.6)], axis=1)
    return ClusterLayout(_fixed(gpu_pos), _fixed(leaf_pos), pitch, _fixed(np.arange(nodes) * pitch - 0.5), 3.5)


def packet_places(hops: int, packets: int, slot: int, pipelined: bool) -> list[tuple[str, int]]:
    """Where each packet is during time slot ``slot`` (0: before the first):
    ("node", n) or ("link", h)."""
    out = []
    for k in range(packets):
        if pipelined:
            h = slot - 1 - k              # packet k crosses link h in slot h + k + 1
        else:
            g = slot - 1                  # the whole message crosses one link at a time
            h = g // packets if 0 <= g < hops * packets else (-1 if g < 0 else hops)
            j = g % packets
            if 0 <= h < hops and k != j:
                out.append(("node", h + 1 if k < j else h))
                continue
        if h < 0:
            out.append(("node", 0))
        elif h >= hops:
            out.append(("node", hops))
        else:
            out.append(("link", h))
    return out
