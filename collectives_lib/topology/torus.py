"""Tori, rings, chains and meshes, and the full mesh: endpoints joined directly.

Introduced in the chapter *TPU cluster topology*.
"""

from __future__ import annotations

import math
from functools import cached_property

import numpy as np

from ..errors import CollectivesError
from ..checks import check_num_ranks
from .. import checks
from .core import LINK_CLASSES, LinkBuilder, Links, Routes, Topology, fmt, mesh_axis_groups, resolve_mesh_axes
from .graph import disjoint_paths_between

# ---------------------------------------------------------------------------
# Tori, rings, chains, meshes
# ---------------------------------------------------------------------------

AXIS_NAMES = ("x", "y", "z", "w", "v", "u")


def axis_names(count: int) -> tuple[str, ...]:
    """The names of a mesh's ``count`` axes: x, y, z, w, v, u, then d6, d7, ..."""
    return AXIS_NAMES[:count] + tuple(f"d{i}" for i in range(len(AXIS_NAMES), count))


class Torus(Topology):
    """An n-dimensional torus; ``wraparound`` per axis (a mesh where none wraps).

    ``Torus((4, 4), bandwidth=4.5e10)`` is a 4x4 torus of full-duplex links of
    45 GB/s each way. Coordinates are given in the order of ``dims``; rank
    ``r`` has coordinates ``np.unravel_index(r, dims)`` (the last axis varies
    fastest). Axis names are ``x, y, z`` in the order of ``dims``.

    A wraparound on an axis of size 1 or 2 adds no new neighbour and is
    dropped for bidirectional tori.
    """

    routing_kind = "torus"

    def __init__(self, dims, wraparound=True, *, bandwidth, latency: float = 0.0,
                 bidirectional: bool = True, link_class: str = "link"):
        dims = checks.dims(dims)
        if checks.is_bool(wraparound):
            wrap = (bool(wraparound),) * len(dims)
        elif isinstance(wraparound, str) or not np.iterable(wraparound):
            raise CollectivesError(f"wraparound must be True, False or one of them per axis, got {wraparound!r}")
        else:
            wrap = tuple(checks.flag(w, "wraparound (per axis)") for w in wraparound)
            if len(wrap) != len(dims):
                raise CollectivesError(
                    f"wraparound has {len(wrap)} entries but the torus has "
                    f"{len(dims)} axes (dims {dims})"
                )
        if checks.flag(bidirectional, "bidirectional"):
            wrap = tuple(w and d > 2 for w, d in zip(wrap, dims))
        else:
            wrap = tuple(w and d > 1 for w, d in zip(wrap, dims))
        if link_class not in LINK_CLASSES:
            raise CollectivesError(f"link class must be one of {LINK_CLASSES}, got {link_class!r}")
        self.dims = dims
        self.wraparound = wrap
        self.bidirectional = bool(bidirectional)
        self.bandwidth = checks.bandwidth(bandwidth, "bandwidth (bytes/s, one way)")
        self.latency = checks.latency(latency, "latency (s per hop)")
        self.link_class = link_class
        self.num_ranks = checks.topology_ranks(
            math.prod(dims), f"{type(self).__name__}({'x'.join(map(str, dims))})")
        self.num_vertices = self.num_ranks
        self.mesh_shape = dims
        self.axis_names = axis_names(len(dims))

    def _identity(self) -> tuple:
        return (self.dims, self.wraparound, self.bidirectional, self.bandwidth, self.latency,
                self.link_class)

    @property
    def max_hops(self) -> int:
        """The diameter: per axis half the ring both ways round, all of it one way, or the
        whole line without wraparound."""
        hops = 0
        for d, wrap in zip(self.dims, self.wraparound):
            hops += (d // 2 if self.bidirectional else d - 1) if wrap and d > 2 else d - 1
        return hops

    def __repr__(self) -> str:
        wrap = self.wraparound
        wrap_text = str(wrap[0]) if len(set(wrap)) == 1 else str(wrap)
        extra = "" if self.bidirectional else ", bidirectional=False"
        return (f"Torus(dims={self.dims}, wraparound={wrap_text}, "
                f"bandwidth={fmt(self.bandwidth)}, latency={fmt(self.latency)}{extra})")

    # coordinates
    def coords(self, rank) -> tuple[int, ...]:
        return tuple(int(c) for c in np.unravel_index(int(rank), self.dims))

    def rank_of(self, coords) -> int:
        coords = tuple(int(c) for c in coords)
        if len(coords) != len(self.dims) or any(
            not 0 <= c < d for c, d in zip(coords, self.dims)
        ):
            raise CollectivesError(
                f"coordinates {coords} are not on the torus with dims {self.dims}"
            )
        return int(np.ravel_multi_index(coords, self.dims))

    def node_label(self, node: int) -> str:
        if 0 <= node < self.num_ranks:
            return str(self.coords(node))
        return super().node_label(node)

    # links
    @cached_property
    def _tables(self) -> tuple[np.ndarray, np.ndarray]:
        """(neighbour[node, axis, dir], link[node, axis, dir]); dir 0 is +, 1 is -."""
        n, d = self.num_ranks, len(self.dims)
        coords = np.stack(np.unravel_index(np.arange(n), self.dims), axis=1)
        nbr = np.full((n, d, 2), -1, dtype=np.int64)
        for axis, size in enumerate(self.dims):
            for direction, step in ((0, 1), (1, -1)):
                if direction == 1 and not self.bidirectional:
                    continue
                c = coords.copy()
                c[:, axis] += step
                inside = (c[:, axis] >= 0) & (c[:, axis] < size)
                if self.wraparound[axis]:
                    c[:, axis] %= size
                    inside[:] = True
                ok = inside & (size > 1)
                nbr[ok, axis, direction] = np.ravel_multi_index(
                    tuple(c[ok].T), self.dims)
        link = np.full((n, d, 2), -1, dtype=np.int64)
        present = nbr >= 0
        link[present] = np.arange(int(present.sum()))
        return nbr, link

    def _build_links(self) -> Links:
        nbr, link = self._tables
        present = nbr >= 0
        src = np.broadcast_to(np.arange(self.num_ranks)[:, None, None], nbr.shape)[present]
        builder = LinkBuilder()
        builder.add(src, nbr[present], self.bandwidth, self.latency, self.link_class)
        return builder.build()

    def link_axis(self) -> np.ndarray:
        """For each link, the axis it runs along."""
        nbr, _ = self._tables
        axis = np.broadcast_to(np.arange(len(self.dims))[None, :, None], nbr.shape)
        return axis[nbr >= 0]

    def is_wrap_link(self) -> np.ndarray:
        """For each link, whether it is a wraparound link."""
        nbr, _ = self._tables
        n = self.num_ranks
        coords = np.stack(np.unravel_index(np.arange(n), self.dims), axis=1)
        out = np.zeros(nbr.shape, dtype=bool)
        for axis, size in enumerate(self.dims):
            out[:, axis, 0] = coords[:, axis] == size - 1
            out[:, axis, 1] = coords[:, axis] == 0
        return out[nbr >= 0]

    # routing
    def routes(self, src, dst) -> Routes:
        """Dimension-order routing (x, then y, then z), shortest way round each axis.

        A flow whose two directions round an axis are equally short is split
        half and half between them.
        """
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        if len(src) and (src.max() >= self.num_ranks or dst.max() >= self.num_ranks
                         or src.min() < 0 or dst.min() < 0):
            raise CollectivesError(f"a flow names a node outside {self!r}")
        nbr, link = self._tables
        dims = self.dims
        cs = np.stack(np.unravel_index(src, dims), axis=1) if len(src) else np.zeros((0, len(dims)), np.int64)
        cd = np.stack(np.unravel_index(dst, dims), axis=1) if len(dst) else np.zeros((0, len(dims)), np.int64)
        flow = np.arange(len(src), dtype=np.int64)
        weight = np.ones(len(src))
        # per axis: direction (0 +, 1 -) and hop count, splitting ties
        directions = []
        hop_counts = []
        for axis, size in enumerate(dims):
            delta = cd[:, axis] - cs[:, axis]
            if self.wraparound[axis]:
                fwd = np.mod(delta, size)
                bwd = np.mod(-delta, size)
                if self.bidirectional:
                    direction = np.where(fwd <= bwd, 0, 1)
                    hops = np.minimum(fwd, bwd)
                    tie = (fwd == bwd) & (fwd > 0)
                    if tie.any():
                        dup = np.nonzero(tie)[0]
                        flow = np.concatenate([flow, flow[dup]])
                        weight = weight.copy()
                        weight[dup] *= 0.5
                        weight = np.concatenate([weight, weight[dup]])
                        cs = np.concatenate([cs, cs[dup]])
                        cd = np.concatenate([cd, cd[dup]])
                        directions = [np.concatenate([dd, dd[dup]]) for dd in directions]
                        hop_counts = [np.concatenate([hh, hh[dup]]) for hh in hop_counts]
                        direction = np.concatenate([direction, np.ones(len(dup), np.int64)])
                        hops = np.concatenate([hops, hops[dup]])
                else:
                    direction = np.zeros(len(delta), np.int64)
                    hops = fwd
            else:
                if not self.bidirectional and (delta < 0).any():
                    bad = int(np.nonzero(delta < 0)[0][0])
                    raise CollectivesError(
                        f"{self!r} has no route from {self.node_label(int(src[flow[bad]]))} "
                        f"to {self.node_label(int(dst[flow[bad]]))}: axis "
                        f"{self.axis_names[axis]} has one-way links and no wraparound"
                    )
                direction = np.where(delta >= 0, 0, 1)
                hops = np.abs(delta)
            directions.append(direction.astype(np.int64))
            hop_counts.append(hops.astype(np.int64))
        cur = np.ravel_multi_index(tuple(cs.T), dims) if len(cs) else np.zeros(0, np.int64)
        cur = np.asarray(cur, dtype=np.int64)
        inc_sub: list[np.ndarray] = []
        inc_link: list[np.ndarray] = []
        sub_ids = np.arange(len(flow), dtype=np.int64)
        for axis in range(len(dims)):
            direction, hops = directions[axis], hop_counts[axis]
            if len(hops) == 0:
                continue
            for h in range(int(hops.max(initial=0))):
                active = np.nonzero(hops > h)[0]
                here = cur[active]
                d = direction[active]
                inc_sub.append(sub_ids[active])
                inc_link.append(link[here, axis, d])
                cur[active] = nbr[here, axis, d]
        if inc_sub:
            isub, ilink = np.concatenate(inc_sub), np.concatenate(inc_link)
        else:
            isub, ilink = np.zeros(0, np.int64), np.zeros(0, np.int64)
        return Routes(flow, weight, isub, ilink)

    def route_hops(self, src, dst) -> np.ndarray:
        """Hops of each flow's route (:meth:`routes`), without listing its links: the
        shortest way round each axis with wraparound, the straight way without
        (both halves of a split flow are equally long)."""
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        if len(src) and (src.max() >= self.num_ranks or dst.max() >= self.num_ranks
                         or src.min() < 0 or dst.min() < 0):
            raise CollectivesError(f"a flow names a node outside {self!r}")
        cs = np.unravel_index(src, self.dims)
        cd = np.unravel_index(dst, self.dims)
        total = np.zeros(len(src), dtype=np.int64)
        for axis, size in enumerate(self.dims):
            delta = np.asarray(cd[axis], dtype=np.int64) - cs[axis]
            if self.wraparound[axis]:
                fwd = np.mod(delta, size)
                total += np.minimum(fwd, np.mod(-delta, size)) if self.bidirectional else fwd
            else:
                if not self.bidirectional and (delta < 0).any():
                    self.routes(src, dst)       # raises: no route, and which
                total += np.abs(delta)
        return total

    def distance(self, a, b) -> int:
        """Hop distance between two chips, by rank or by coordinates."""
        a = self.rank_of(a) if np.iterable(a) else int(a)
        b = self.rank_of(b) if np.iterable(b) else int(b)
        return self.hops(a, b)

    def disjoint_paths(self, src: int, dst: int) -> list[list[int]]:
        """Link-disjoint shortest routes; prefers dimension-ordered ones (XY, YX...).

        On a 4x4 mesh, chip (3, 3) to chip (0, 0) gives the two L-shaped 6-hop
        routes, x first and y first.
        """
        src = self.rank_of(src) if np.iterable(src) else int(src)
        dst = self.rank_of(dst) if np.iterable(dst) else int(dst)
        n = self.num_ranks
        if len(self.dims) == 1 and 0 <= src < n and 0 <= dst < n:
            return self.line_paths(src, dst)
        best = disjoint_paths_between(self, src, dst)
        k, total = len(best), sum(len(p) for p in best)
        from itertools import permutations
        candidates = []
        for order in permutations(range(len(self.dims))):
            path = [src]
            cur = list(self.coords(src))
            goal = self.coords(dst)
            for axis in order:
                size = self.dims[axis]
                delta = goal[axis] - cur[axis]
                if self.wraparound[axis]:
                    fwd, bwd = delta % size, (-delta) % size
                    step, hops = (1, fwd) if fwd <= bwd else (-1, bwd)
                else:
                    step, hops = (1 if delta >= 0 else -1), abs(delta)
                for _ in range(hops):
                    cur[axis] = (cur[axis] + step) % size
                    path.append(self.rank_of(cur))
            candidates.append(path)
        chosen, used = [], set()
        for path in candidates:
            edges = set(zip(path[:-1], path[1:]))
            if path not in chosen and not edges & used:
                chosen.append(path)
                used |= edges
        if len(chosen) == k and sum(len(p) for p in chosen) == total:
            return chosen
        return best

    def line_paths(self, src: int, dst: int) -> list[list[int]]:
        """:meth:`disjoint_paths` on a ring or a line, counted instead of searched (the
        search's own answer, in its order): both ways round a two-way ring, the shorter
        first (the way down first when they tie), else the one way there is."""
        n, src, dst = self.num_ranks, int(src), int(dst)
        if src == dst:
            return [[src]]
        up = (dst - src) % n
        if not self.wraparound[0]:
            if dst < src and not self.bidirectional:
                return []                       # one-way links lead the other way only
            step = 1 if dst > src else -1
            return [list(range(src, dst + step, step))]
        ahead = ((src + np.arange(up + 1)) % n).tolist()
        if not self.bidirectional:
            return [ahead]
        back = ((src - np.arange(n - up + 1)) % n).tolist()
        return [ahead, back] if up < n - up else [back, ahead]

    def default_bisection(self) -> list[int]:
        # cut across the longest axis; that is the minimum bisection of a torus
        axis = int(np.argmax(self.dims))
        coords = np.stack(np.unravel_index(np.arange(self.num_ranks), self.dims), axis=1)
        return np.nonzero(coords[:, axis] < self.dims[axis] // 2)[0].tolist()

    def axis_groups(self, axes) -> np.ndarray:
        """Ranks grouped for a collective over ``axes``: shape (groups, group size).

        Within a group, ranks are ordered with the listed axes in ``dims`` order,
        the last varying fastest.
        """
        return mesh_axis_groups(self.dims, self.resolve_axes(axes))

    def resolve_axes(self, axes) -> list[int]:
        return resolve_mesh_axes(self, axes, self.axis_names, self.dims)


class Ring(Torus):
    """A ring of ``n`` ranks; bidirectional (full-duplex links) or one-way."""

    def __init__(self, n: int, *, bandwidth, latency: float = 0.0,
                 bidirectional: bool = True, link_class: str = "link"):
        n = check_num_ranks(n)
        super().__init__((n,), True, bandwidth=bandwidth, latency=latency,
                         bidirectional=bidirectional, link_class=link_class)

    def __repr__(self) -> str:
        return (f"Ring({self.num_ranks}, bidirectional={self.bidirectional}, "
                f"bandwidth={fmt(self.bandwidth)}, latency={fmt(self.latency)})")

    def node_label(self, node: int) -> str:
        return f"rank {node}" if node < self.num_ranks else super().node_label(node)


class Chain(Torus):
    """A line of ``n`` ranks without wraparound; links are full-duplex."""

    def __init__(self, n: int, *, bandwidth, latency: float = 0.0, link_class: str = "link"):
        n = check_num_ranks(n)
        super().__init__((n,), False, bandwidth=bandwidth, latency=latency,
                         link_class=link_class)

    def __repr__(self) -> str:
        return (f"Chain({self.num_ranks}, bandwidth={fmt(self.bandwidth)}, "
                f"latency={fmt(self.latency)})")

    def node_label(self, node: int) -> str:
        return f"rank {node}" if node < self.num_ranks else super().node_label(node)


def mesh(dims, *, bandwidth, latency: float = 0.0, link_class: str = "link") -> Torus:
    """A torus without wraparound on any axis."""
    return Torus(dims, False, bandwidth=bandwidth, latency=latency, link_class=link_class)


# ---------------------------------------------------------------------------
# A full mesh: a direct link between every pair
# ---------------------------------------------------------------------------

class FullMesh(Topology):
    """``n`` endpoints with a direct full-duplex link between every pair.

    ``bandwidth`` is what one pair's link carries one way: with ``L`` physical
    links per endpoint split evenly over its ``n-1`` peers, that is
    ``L // (n-1)`` links' worth. Routing is direct (one hop). It has
    ``n(n-1)/2`` pair links (``len(links) // 2`` directed ones).

    Introduced in the chapter *Moving bytes* (why eight GPUs need a switch).
    """

    def __init__(self, n: int, *, bandwidth, latency: float = 0.0, link_class: str = "link"):
        self.num_ranks = check_num_ranks(n)
        pairs = self.num_ranks * (self.num_ranks - 1)
        if pairs > 2 * checks.MAX_TOPOLOGY_RANKS:
            raise CollectivesError(
                f"FullMesh({self.num_ranks}) has {pairs:,} directed pair links, beyond the "
                f"{2 * checks.MAX_TOPOLOGY_RANKS:,} a topology may have (its links are held in memory)")
        self.num_vertices = self.num_ranks
        self.bandwidth = checks.bandwidth(bandwidth, "bandwidth (bytes/s, one way, per pair)")
        self.latency = checks.latency(latency, "latency (s per hop)")
        if link_class not in LINK_CLASSES:
            raise CollectivesError(f"link class must be one of {LINK_CLASSES}, got {link_class!r}")
        self.link_class = link_class
        self.mesh_shape = (self.num_ranks,)
        self.axis_names = ("x",)

    def _identity(self) -> tuple:
        return (self.num_ranks, self.bandwidth, self.latency, self.link_class)

    def __repr__(self) -> str:
        return (f"FullMesh({self.num_ranks}, bandwidth={fmt(self.bandwidth)}, "
                f"latency={fmt(self.latency)})")

    @property
    def num_pair_links(self) -> int:
        """Pairs joined by a link: ``n(n-1)/2``."""
        return self.num_ranks * (self.num_ranks - 1) // 2

    def _build_links(self) -> Links:
        n = self.num_ranks
        src, dst = np.nonzero(~np.eye(n, dtype=bool))
        b = LinkBuilder()
        b.add(src, dst, self.bandwidth, self.latency, self.link_class)
        return b.build()

    def routes(self, src, dst) -> Routes:
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        n = self.num_ranks
        if len(src) and (src.max() >= n or dst.max() >= n or src.min() < 0 or dst.min() < 0):
            raise CollectivesError(f"a flow names a node outside {self!r}")
        flows = np.arange(len(src), dtype=np.int64)
        moving = src != dst
        # directed link u -> v has id u * (n - 1) + (v if v < u else v - 1)
        s, d = src[moving], dst[moving]
        link = s * (n - 1) + np.where(d < s, d, d - 1)
        return Routes(flows, np.ones(len(src)), flows[moving], link.astype(np.int64))




def torus_distances(dims, twist=None) -> np.ndarray:
    """Hop counts from chip 0 to every chip of a torus, optionally twisted.

    ``twist`` maps an axis to a shift of the other coordinates: a link that
    wraps around axis ``a`` (from the last chip back to the first) also moves
    the coordinates by ``twist[a]`` (one integer per axis, the entry for ``a``
    itself ignored), which is how a *twisted torus* joins its faces, like a
    Moebius strip. Twisted and plain tori are vertex-transitive, so the
    distances from chip 0 are those from every chip. Returns the hop counts in
    the order of the ranks (:meth:`Torus.rank_of`: the last axis fastest).

    Introduced in the chapter *TPU cluster topology* (the twisted torus).
    """
    dims = tuple(int(d) for d in dims)
    if not dims or min(dims) < 1:
        raise CollectivesError(f"dims must be positive sizes, got {dims!r}")
    D = len(dims)
    twist = {} if twist is None else {int(a): tuple(int(s) for s in v) for a, v in dict(twist).items()}
    for a, v in twist.items():
        if not 0 <= a < D or len(v) != D:
            raise CollectivesError(f"twist maps an axis 0..{D - 1} to {D} shifts, got {a}: {v}")
    coords = np.array(np.unravel_index(np.arange(int(np.prod(dims))), dims)).T   # the ranks' order
    dist = np.full(len(coords), -1)
    dist[0] = 0
    frontier, hops = np.array([0]), 0
    while len(frontier):
        hops += 1
        nxt = []
        for a in range(D):
            for step in (1, -1):
                c = coords[frontier].copy()
                c[:, a] += step
                crossed = (c[:, a] >= dims[a]) | (c[:, a] < 0)
                shift = np.array(twist.get(a, (0,) * D))
                shift[a] = 0
                c[crossed] += step * shift
                c %= dims
                nxt.append(np.ravel_multi_index(tuple(c.T), dims))
        cand = np.unique(np.concatenate(nxt))
        cand = cand[dist[cand] < 0]
        dist[cand] = hops
        frontier = cand
    return dist


def best_twist(dims, max_axes: int | None = None) -> tuple[dict, np.ndarray]:
    """The twist that gives a torus of ``dims`` the fewest hops on average.

    Tries every shift of the other coordinates at the wraparound of one axis,
    and of several axes at once, up to ``max_axes`` of them (default: all but
    one, the most there can be), and returns ``(twist, distances)`` for the best
    (fewest hops on average, then the nearest farthest chip; the untwisted
    torus, ``{}``, if no twist helps). When several axes are twisted, each
    shifts only the axes left untwisted: the torus is then still the grid
    folded onto itself by whole translations, so every chip sees the same
    distances (:func:`torus_distances` measures them from chip 0).

    Introduced in the chapter *TPU cluster topology* (the twisted torus).
    """
    import itertools

    dims = tuple(int(d) for d in dims)
    D = len(dims)
    most = max(D - 1, 1)
    if max_axes is None:
        max_axes = most
    if isinstance(max_axes, bool) or int(max_axes) != max_axes or not 1 <= max_axes <= most:
        raise CollectivesError(f"max_axes must be a whole number from 1 to {most} for a "
                               f"{len(dims)}-axis torus, got {max_axes!r}")
    plain = torus_distances(dims)
    best = ({}, plain)

    def better(d, than) -> bool:
        return (d.mean() < than.mean() - 1e-12
                or (abs(d.mean() - than.mean()) <= 1e-12 and d.max() < than.max()))

    for k in range(1, int(max_axes) + 1):
        for twisted in itertools.combinations(range(D), k):
            free = [r for r in range(D) if r not in twisted]
            if not free:
                continue
            shifts = []
            for _ in twisted:       # each twisted axis shifts the untwisted ones
                shifts.append([tuple(dict(zip(free, sh)).get(r, 0) for r in range(D))
                               for sh in itertools.product(*(range(dims[r]) for r in free))])
            for combo in itertools.product(*shifts):
                if any(not any(v) for v in combo):
                    continue        # a zero shift is a twist of fewer axes, tried already
                twist = dict(zip(twisted, combo))
                d = torus_distances(dims, twist)
                if better(d, best[1]):
                    best = (twist, d)
    return best
