"""Positions as data: where the drawings put nodes, links and packets.

Every function returns numpy arrays (or small values made of them) and this
module never imports matplotlib, so layouts are tested on their own and the
drawing modules only turn them into artists.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from ..schedule import Schedule
from ..topology import Topology, Torus


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


def schedule_layout(schedule: Schedule, topology: Topology | None):
    """('grid' | 'ring', positions (P, 2), node radius)."""
    P, R = schedule.num_participants, schedule.num_ranks
    if (isinstance(topology, Torus) and len(topology.dims) == 2 and topology.num_ranks == R
            and not schedule.agents):
        return "grid", grid_layout(topology).astype(float), 0.24
    pos = np.zeros((P, 2))
    pos[:R] = ring_layout(R)
    agents = P - R
    if agents == 1:
        pos[R] = (0.0, 0.0)
    elif agents > 1:
        pos[R:] = ring_layout(agents, radius=0.45)
    return "ring", pos, min(0.11, 2.2 / max(R, 1))


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


def cluster_layout(num_ranks: int, gpus: int, rails: int):
    """Positions of GPUs (num_ranks, 2), leaves (rails, 2) and node boxes for a by-node drawing."""
    nodes = num_ranks // gpus
    pitch = gpus + 0.8
    r = np.arange(num_ranks)
    gpu_pos = np.stack([(r // gpus) * pitch + (r % gpus), np.zeros(num_ranks)], axis=1)
    width = nodes * pitch - 0.8 - 1
    leaf_pos = np.stack([width * (np.arange(rails) + 0.5) / rails, np.full(rails, 2.6)], axis=1)
    return gpu_pos, leaf_pos, pitch


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
