"""Topologies: who is wired to whom, at what bandwidth and latency, and how traffic is routed.

A topology is a value. Its nodes ``0 .. num_ranks - 1`` are endpoints (TPU chips,
GPUs); further nodes are switches and hosts. Its links are directed and carry a
one-way bandwidth (bytes/s), a latency (s) and a link class (``"ici"``,
``"nvlink"``, ``"ib"``, ``"pcie"``, ``"dcn"`` or ``"link"``), stored as numpy
arrays so that routing thousands of flows is vectorised.

Generic constructors: :class:`Ring`, :class:`Chain`, :class:`Torus` (a mesh when
no axis wraps, see :func:`mesh`) and :class:`Switch`. Hardware presets:
:func:`tpu_slice`, :func:`tpu_pod`, :func:`tpu_system` (hosts, PCIe, DCN),
:func:`nvswitch_node` and :class:`GpuCluster` (NVLink nodes on an InfiniBand fat
tree, :func:`superpod`).

Introduced in the chapters *TPU cluster topology* and *NVIDIA GPU cluster topology*.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from . import hardware as hw
from .errors import CollectivesError, check_num_ranks

LINK_CLASSES = ("ici", "nvlink", "ib", "pcie", "dcn", "link")
_CLASS_CODE = {name: i for i, name in enumerate(LINK_CLASSES)}


@dataclass(frozen=True)
class Links:
    """The directed links of a topology, one entry per link."""

    src: np.ndarray        # node ids
    dst: np.ndarray
    bandwidth: np.ndarray  # bytes/s, one way
    latency: np.ndarray    # seconds
    klass: np.ndarray      # index into LINK_CLASSES

    def __len__(self) -> int:
        return len(self.src)

    def class_name(self, link: int) -> str:
        return LINK_CLASSES[int(self.klass[link])]


@dataclass(frozen=True)
class Routes:
    """Where each flow goes: flows split into sub-flows, sub-flows cross links.

    ``sub_flow[s]`` is the flow a sub-flow belongs to and ``sub_weight[s]`` the
    fraction of the flow's bytes it carries (ties between equally short
    directions on a torus split a flow in two). ``inc_sub`` and ``inc_link``
    list (sub-flow, link) incidences.
    """

    sub_flow: np.ndarray
    sub_weight: np.ndarray
    inc_sub: np.ndarray
    inc_link: np.ndarray


class _LinkBuilder:
    def __init__(self) -> None:
        self.src: list[np.ndarray] = []
        self.dst: list[np.ndarray] = []
        self.bw: list[np.ndarray] = []
        self.lat: list[np.ndarray] = []
        self.klass: list[np.ndarray] = []
        self.count = 0

    def add(self, src, dst, bandwidth, latency, klass: str) -> np.ndarray:
        src = np.atleast_1d(np.asarray(src, dtype=np.int64))
        dst = np.atleast_1d(np.asarray(dst, dtype=np.int64))
        n = len(src)
        self.src.append(src)
        self.dst.append(dst)
        self.bw.append(np.broadcast_to(np.asarray(bandwidth, dtype=float), (n,)).copy())
        self.lat.append(np.broadcast_to(np.asarray(latency, dtype=float), (n,)).copy())
        self.klass.append(np.full(n, _CLASS_CODE[klass], dtype=np.int8))
        ids = np.arange(self.count, self.count + n, dtype=np.int64)
        self.count += n
        return ids

    def build(self) -> Links:
        cat = lambda xs, dt: np.concatenate(xs).astype(dt) if xs else np.zeros(0, dt)
        return Links(cat(self.src, np.int64), cat(self.dst, np.int64),
                     cat(self.bw, float), cat(self.lat, float), cat(self.klass, np.int8))


def _positive(value, what: str) -> float:
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise CollectivesError(f"{what} must be a positive number, got {value!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise CollectivesError(f"{what} must be a positive number, got {value!r}")
    return value


def _nonnegative(value, what: str) -> float:
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise CollectivesError(f"{what} must be a number >= 0, got {value!r}") from None
    if not math.isfinite(value) or value < 0:
        raise CollectivesError(f"{what} must be a number >= 0, got {value!r}")
    return value


def _fmt(x: float) -> str:
    return f"{x:.4g}"


class Topology:
    """Base class. Subclasses build their links and may override routing."""

    num_ranks: int
    num_nodes: int
    mesh_shape: tuple[int, ...]
    axis_names: tuple[str, ...]
    routing_kind = "routed"  # "torus": transfers hop between neighbours

    # -- links -------------------------------------------------------------
    def _build_links(self) -> Links:  # pragma: no cover - abstract
        raise NotImplementedError

    @cached_property
    def links(self) -> Links:
        return self._build_links()

    @cached_property
    def _link_index(self) -> dict[tuple[int, int], int]:
        links = self.links
        index: dict[tuple[int, int], int] = {}
        for i, (u, v) in enumerate(zip(links.src.tolist(), links.dst.tolist())):
            index.setdefault((u, v), i)
        return index

    def link_between(self, u: int, v: int) -> int:
        """The id of a link u -> v, or -1 if there is none."""
        return self._link_index.get((int(u), int(v)), -1)

    def neighbors(self, node: int) -> list[int]:
        links = self.links
        return links.dst[links.src == node].tolist()

    # -- names ---------------------------------------------------------------
    def node_label(self, node: int) -> str:
        if node < self.num_ranks:
            return f"rank {node}"
        return f"node {node}"

    def agent_node(self, name: str) -> int:
        """The node id of a named participant such as ``"switch"`` or ``"host0"``."""
        raise CollectivesError(f"{self!r} has no node called {name!r}")

    def link_label(self, link: int) -> str:
        links = self.links
        return (f"{self.node_label(int(links.src[link]))} -> "
                f"{self.node_label(int(links.dst[link]))} "
                f"({links.class_name(link)}, {_fmt(links.bandwidth[link])} B/s)")

    # -- routing -------------------------------------------------------------
    def routes(self, src: np.ndarray, dst: np.ndarray) -> Routes:
        """Route flows ``src[i] -> dst[i]``; the default is a shortest path by hops."""
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        inc_sub: list[int] = []
        inc_link: list[int] = []
        cache: dict[tuple[int, int], list[int]] = {}
        for i, (a, b) in enumerate(zip(src.tolist(), dst.tolist())):
            key = (a, b)
            if key not in cache:
                cache[key] = self._bfs_path(a, b)
            for link in cache[key]:
                inc_sub.append(i)
                inc_link.append(link)
        n = len(src)
        return Routes(np.arange(n), np.ones(n), np.asarray(inc_sub, dtype=np.int64),
                      np.asarray(inc_link, dtype=np.int64))

    @cached_property
    def _out_links(self) -> list[list[int]]:
        out: list[list[int]] = [[] for _ in range(self.num_nodes)]
        for i, u in enumerate(self.links.src.tolist()):
            out[u].append(i)
        return out

    def _bfs_path(self, a: int, b: int) -> list[int]:
        if a == b:
            return []
        links = self.links
        prev = {a: -1}
        queue = deque([a])
        while queue:
            u = queue.popleft()
            for link in self._out_links[u]:
                v = int(links.dst[link])
                if v not in prev:
                    prev[v] = link
                    if v == b:
                        path = []
                        while v != a:
                            link = prev[v]
                            path.append(link)
                            v = int(links.src[link])
                        return path[::-1]
                    queue.append(v)
        raise CollectivesError(
            f"{self!r} has no route from {self.node_label(a)} to {self.node_label(b)}"
        )

    def route(self, src: int, dst: int) -> list[int]:
        """The links of one shortest route src -> dst (the first, if a flow splits)."""
        r = self.routes(np.array([src]), np.array([dst]))
        first = r.inc_sub == 0
        return r.inc_link[first].tolist()

    def path(self, src: int, dst: int) -> list[int]:
        """The nodes visited by :meth:`route`, from src to dst."""
        nodes = [int(src)]
        for link in self.route(src, dst):
            nodes.append(int(self.links.dst[link]))
        return nodes

    def hops(self, src: int, dst: int) -> int:
        """Number of links on the shortest route."""
        return len(self.route(src, dst))

    # -- capacities ----------------------------------------------------------
    def cut_bandwidth(self, side_a, side_b=None) -> float:
        """One-way bandwidth from endpoints ``side_a`` to ``side_b`` (default: the rest).

        It is the maximum flow from one side to the other; switches and hosts may
        carry flow in either side's favour. A full fat tree is limited by the
        smaller side; a torus by the links that cross the cut.
        """
        a = np.unique(np.asarray(list(side_a), dtype=np.int64))
        if side_b is None:
            b = np.setdiff1d(np.arange(self.num_ranks), a)
        else:
            b = np.unique(np.asarray(list(side_b), dtype=np.int64))
        for side in (a, b):
            if len(side) and (side.min() < 0 or side.max() >= self.num_ranks):
                raise CollectivesError(
                    f"a cut side must list endpoints 0..{self.num_ranks - 1}, got {side.tolist()}"
                )
        if len(np.intersect1d(a, b)):
            raise CollectivesError("the two sides of a cut must not share endpoints")
        if len(a) == 0 or len(b) == 0:
            return 0.0
        return _max_flow(self, a, b)

    def bisection_bandwidth(self, side=None, *, directions: int = 1) -> float:
        """Bandwidth across an equal split (or across ``side`` versus the rest).

        ``directions=2`` adds both directions, as bidirectional figures do.
        """
        if directions not in (1, 2):
            raise CollectivesError(f"directions must be 1 or 2, got {directions!r}")
        if side is None:
            side = self.default_bisection()
        side = list(side)
        one = self.cut_bandwidth(side)
        if directions == 1:
            return one
        rest = np.setdiff1d(np.arange(self.num_ranks), np.asarray(side, dtype=np.int64))
        return one + self.cut_bandwidth(rest, side)

    def default_bisection(self) -> list[int]:
        return list(range(self.num_ranks // 2))

    def disjoint_paths(self, src: int, dst: int) -> list[list[int]]:
        """As many link-disjoint routes src -> dst as exist, shortest in total.

        Returns node lists. On a 4x4 mesh, chip (3, 3) to chip (0, 0) has two,
        each of 6 hops.
        """
        return _disjoint_paths(self, int(src), int(dst))

    # -- misc ----------------------------------------------------------------
    def endpoint_links(self, node: int) -> tuple[list[int], list[int]]:
        links = self.links
        return (np.nonzero(links.src == node)[0].tolist(),
                np.nonzero(links.dst == node)[0].tolist())

    def injection_bandwidth(self, node: int) -> float:
        """Sum of one-way bandwidth of the links leaving ``node``."""
        links = self.links
        return float(links.bandwidth[links.src == node].sum())


# ---------------------------------------------------------------------------
# Tori, rings, chains, meshes
# ---------------------------------------------------------------------------

AXIS_NAMES = ("x", "y", "z", "w", "v", "u")


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
        dims = tuple(int(d) for d in (dims if np.iterable(dims) else (dims,)))
        if not dims:
            raise CollectivesError("a torus needs at least one axis")
        for d in dims:
            check_num_ranks(d, what=f"torus axis size (in dims {dims})")
        if isinstance(wraparound, (bool, np.bool_)):
            wrap = (bool(wraparound),) * len(dims)
        else:
            wrap = tuple(bool(w) for w in wraparound)
            if len(wrap) != len(dims):
                raise CollectivesError(
                    f"wraparound has {len(wrap)} entries but the torus has "
                    f"{len(dims)} axes (dims {dims})"
                )
        if bidirectional:
            wrap = tuple(w and d > 2 for w, d in zip(wrap, dims))
        else:
            wrap = tuple(w and d > 1 for w, d in zip(wrap, dims))
        if link_class not in LINK_CLASSES:
            raise CollectivesError(f"link class must be one of {LINK_CLASSES}, got {link_class!r}")
        self.dims = dims
        self.wraparound = wrap
        self.bidirectional = bool(bidirectional)
        self.bandwidth = _positive(bandwidth, "bandwidth (bytes/s, one way)")
        self.latency = _nonnegative(latency, "latency (s per hop)")
        self.link_class = link_class
        self.num_ranks = int(np.prod(dims))
        self.num_nodes = self.num_ranks
        self.mesh_shape = dims
        self.axis_names = AXIS_NAMES[: len(dims)]

    def __repr__(self) -> str:
        wrap = self.wraparound
        wrap_text = str(wrap[0]) if len(set(wrap)) == 1 else str(wrap)
        extra = "" if self.bidirectional else ", bidirectional=False"
        return (f"Torus(dims={self.dims}, wraparound={wrap_text}, "
                f"bandwidth={_fmt(self.bandwidth)}, latency={_fmt(self.latency)}{extra})")

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
        builder = _LinkBuilder()
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
        best = _disjoint_paths(self, src, dst)
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
        axes = self.resolve_axes(axes)
        others = [a for a in range(len(self.dims)) if a not in axes]
        ranks = np.arange(self.num_ranks).reshape(self.dims)
        order = others + sorted(axes)
        moved = np.transpose(ranks, order)
        group_size = int(np.prod([self.dims[a] for a in axes]))
        return moved.reshape(-1, group_size)

    def resolve_axes(self, axes) -> list[int]:
        if axes is None:
            return list(range(len(self.dims)))
        if isinstance(axes, (str, int)):
            axes = [axes]
        out = []
        for a in axes:
            if isinstance(a, str):
                a_clean = a.strip().lower()
                if a_clean not in self.axis_names:
                    raise CollectivesError(
                        f"unknown axis {a!r}; {self!r} has axes "
                        f"{', '.join(self.axis_names)} (sizes {self.dims})"
                    )
                out.append(self.axis_names.index(a_clean))
            else:
                if not 0 <= int(a) < len(self.dims):
                    raise CollectivesError(
                        f"axis {a!r} out of range; {self!r} has axes 0..{len(self.dims) - 1}"
                    )
                out.append(int(a))
        if len(set(out)) != len(out):
            raise CollectivesError(f"axes {axes!r} name an axis twice")
        return sorted(out)


class Ring(Torus):
    """A ring of ``n`` ranks; bidirectional (full-duplex links) or one-way."""

    def __init__(self, n: int, *, bandwidth, latency: float = 0.0,
                 bidirectional: bool = True, link_class: str = "link"):
        n = check_num_ranks(n)
        super().__init__((n,), True, bandwidth=bandwidth, latency=latency,
                         bidirectional=bidirectional, link_class=link_class)

    def __repr__(self) -> str:
        return (f"Ring({self.num_ranks}, bidirectional={self.bidirectional}, "
                f"bandwidth={_fmt(self.bandwidth)}, latency={_fmt(self.latency)})")

    def node_label(self, node: int) -> str:
        return f"rank {node}" if node < self.num_ranks else super().node_label(node)


class Chain(Torus):
    """A line of ``n`` ranks without wraparound; links are full-duplex."""

    def __init__(self, n: int, *, bandwidth, latency: float = 0.0, link_class: str = "link"):
        n = check_num_ranks(n)
        super().__init__((n,), False, bandwidth=bandwidth, latency=latency,
                         link_class=link_class)

    def __repr__(self) -> str:
        return (f"Chain({self.num_ranks}, bandwidth={_fmt(self.bandwidth)}, "
                f"latency={_fmt(self.latency)})")

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
        self.num_nodes = self.num_ranks
        self.bandwidth = _positive(bandwidth, "bandwidth (bytes/s, one way, per pair)")
        self.latency = _nonnegative(latency, "latency (s per hop)")
        if link_class not in LINK_CLASSES:
            raise CollectivesError(f"link class must be one of {LINK_CLASSES}, got {link_class!r}")
        self.link_class = link_class
        self.mesh_shape = (self.num_ranks,)
        self.axis_names = ("x",)

    def __repr__(self) -> str:
        return (f"FullMesh({self.num_ranks}, bandwidth={_fmt(self.bandwidth)}, "
                f"latency={_fmt(self.latency)})")

    @property
    def num_pair_links(self) -> int:
        """Pairs joined by a link: ``n(n-1)/2``."""
        return self.num_ranks * (self.num_ranks - 1) // 2

    def _build_links(self) -> Links:
        n = self.num_ranks
        src, dst = np.nonzero(~np.eye(n, dtype=bool))
        b = _LinkBuilder()
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


# ---------------------------------------------------------------------------
# One switch
# ---------------------------------------------------------------------------

class Switch(Topology):
    """``n`` endpoints on one non-blocking switch (an NVSwitch node, for example).

    Each endpoint has an up-link into the switch and a down-link out of it,
    each of ``bandwidth`` bytes/s one way. ``reduce_flops`` is the switch's
    in-network reduction throughput (SHARP), or None.
    """

    def __init__(self, n: int, *, bandwidth, latency: float = 0.0,
                 link_class: str = "link", reduce_flops: float | None = None,
                 name: str | None = None, agent_latency: float = 0.0):
        self.num_ranks = check_num_ranks(n)
        self.num_nodes = self.num_ranks + 1
        self.bandwidth = _positive(bandwidth, "bandwidth (bytes/s, one way)")
        self.latency = _nonnegative(latency, "latency (s per hop)")
        if link_class not in LINK_CLASSES:
            raise CollectivesError(f"link class must be one of {LINK_CLASSES}, got {link_class!r}")
        self.link_class = link_class
        self.reduce_flops = None if reduce_flops is None else _positive(reduce_flops, "reduce_flops")
        self.agent_latency_ = _nonnegative(agent_latency, "agent_latency (s)")
        self.name = name
        self.mesh_shape = (self.num_ranks,)
        self.axis_names = ("x",)

    def __repr__(self) -> str:
        if self.name:
            return f"nvswitch_node({self.name!r})" if self.name in hw.GPU_SYSTEMS else f"Switch({self.num_ranks}, name={self.name!r})"
        return (f"Switch({self.num_ranks}, bandwidth={_fmt(self.bandwidth)}, "
                f"latency={_fmt(self.latency)})")

    @property
    def switch_node(self) -> int:
        return self.num_ranks

    def node_label(self, node: int) -> str:
        if node == self.num_ranks:
            return "switch"
        return f"GPU {node}" if self.link_class == "nvlink" else f"rank {node}"

    def agent_node(self, name: str) -> int:
        if name in ("switch", "nvswitch", "nvswitch0"):
            return self.num_ranks
        return super().agent_node(name)

    def reduce_rate(self, node: int) -> float | None:
        return self.reduce_flops if node == self.num_ranks else None

    def agent_latency(self, node: int) -> float:
        """Fixed cost of entering or leaving the switch as a participant (SHARP, multicast)."""
        return self.agent_latency_ if node == self.num_ranks else 0.0

    def _build_links(self) -> Links:
        n = self.num_ranks
        b = _LinkBuilder()
        b.add(np.arange(n), np.full(n, n), self.bandwidth, self.latency, self.link_class)
        b.add(np.full(n, n), np.arange(n), self.bandwidth, self.latency, self.link_class)
        return b.build()

    def routes(self, src, dst) -> Routes:
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        n = self.num_ranks
        if len(src) and (src.max() > n or dst.max() > n or src.min() < 0 or dst.min() < 0):
            raise CollectivesError(f"a flow names a node outside {self!r}")
        flows = np.arange(len(src), dtype=np.int64)
        up = (src < n) & (src != dst)
        down = (dst < n) & (src != dst)
        inc_sub = np.concatenate([flows[up], flows[down]])
        inc_link = np.concatenate([src[up], n + dst[down]])
        return Routes(flows, np.ones(len(src)), inc_sub, inc_link)

    def axis_groups(self, axes) -> np.ndarray:
        resolve_switch_axes(axes)
        return np.arange(self.num_ranks)[None, :]

    def resolve_axes(self, axes) -> list[int]:
        resolve_switch_axes(axes)
        return [0]


def resolve_switch_axes(axes) -> None:
    if axes is None:
        return
    names = [axes] if isinstance(axes, (str, int)) else list(axes)
    if [str(a).lower() for a in names] not in (["x"], ["0"]):
        raise CollectivesError(
            f"a single switch has one axis, x; got axes {axes!r}"
        )


def nvswitch_node(system: str = "dgx-h100", *, bandwidth: float | None = None,
                  latency: float | None = None) -> Switch:
    """One NVLink/NVSwitch scale-up domain: ``"dgx-h100"`` (8 GPUs at 450 GB/s
    each way), ``"dgx-b200"`` or ``"gb200-nvl72"`` (72 GPUs)."""
    s = hw.gpu_system(system)
    return Switch(
        s.gpus_per_node,
        bandwidth=float(s.nvlink_bandwidth) if bandwidth is None else bandwidth,
        latency=float(s.nvlink_latency) if latency is None else latency,
        link_class="nvlink",
        reduce_flops=None if s.nvswitch_reduce_flops is None else float(s.nvswitch_reduce_flops),
        name=s.name,
        agent_latency=0.0 if s.nvls_latency is None else float(s.nvls_latency) / 2,
    )


# ---------------------------------------------------------------------------
# TPU presets
# ---------------------------------------------------------------------------

def _tpu_wrap(gen: hw.TpuGeneration, shape: tuple[int, ...]) -> tuple[bool, ...]:
    if gen.wrap_rule == "axis-16":
        return tuple(d == 16 for d in shape)
    full_cube = all(d % 4 == 0 for d in shape)
    return (full_cube,) * len(shape)


def _check_tpu_shape(gen: hw.TpuGeneration, shape) -> tuple[int, ...]:
    label = f"tpu-{gen.name}"
    try:
        shape = tuple(int(d) for d in shape)
    except (TypeError, ValueError):
        raise CollectivesError(f"{label} shape must be whole numbers, got {shape!r}") from None
    if len(shape) != gen.torus_dims:
        example = "16x16" if gen.torus_dims == 2 else "4x4x4"
        raise CollectivesError(
            f"{label} is a {gen.torus_dims}D torus, so its shape needs "
            f"{gen.torus_dims} axes (like {example}); got {'x'.join(map(str, shape))}"
        )
    if any(d < 1 for d in shape):
        raise CollectivesError(f"{label} axis sizes must be >= 1, got {shape}")
    if gen.wrap_rule == "axis-16":
        if any(d not in (1, 2, 4, 8, 16) for d in shape):
            raise CollectivesError(
                f"{label} slice {'x'.join(map(str, shape))} does not fit a "
                f"{'x'.join(map(str, gen.pod_shape))} pod: {gen.allowed_dims()}"
            )
    else:
        if any(d not in (1, 2) and d % 4 for d in shape):
            raise CollectivesError(
                f"{label} slice {'x'.join(map(str, shape))} is not a valid shape: "
                f"{gen.allowed_dims()}"
            )
        if gen.pod_shape is not None:
            if any(a > b for a, b in zip(sorted(shape), sorted(gen.pod_shape))):
                raise CollectivesError(
                    f"{label} slice {'x'.join(map(str, shape))} does not fit the "
                    f"{'x'.join(map(str, gen.pod_shape))} pod"
                )
    if int(np.prod(shape)) > gen.pod_chips:
        raise CollectivesError(
            f"{label} slice {'x'.join(map(str, shape))} has {int(np.prod(shape))} chips, "
            f"more than the pod's {gen.pod_chips}"
        )
    return shape


class TpuSlice(Torus):
    """An ICI-connected slice of a TPU pod, with its generation's wraparound rule.

    v5e and v6e wrap only on an axis of 16 (a full pod side); v4, v5p and 7x
    wrap on every axis of a slice made of full 4x4x4 cubes.
    """

    def __init__(self, generation: str, shape, *, bandwidth: float | None = None,
                 latency: float | None = None, wraparound=None):
        gen = hw.tpu(generation)
        if gen.ici_bandwidth is None:
            raise CollectivesError(
                f"TPU {gen.name} has no ICI figures in this library; use one of "
                + ", ".join(hw.TPU_PRESET_GENERATIONS)
            )
        shape = _check_tpu_shape(gen, shape)
        self.generation = gen
        wrap = _tpu_wrap(gen, shape) if wraparound is None else wraparound
        super().__init__(
            shape, wrap,
            bandwidth=float(gen.ici_bandwidth) if bandwidth is None else bandwidth,
            latency=float(gen.ici_latency) if latency is None else latency,
            link_class="ici",
        )
        self._custom = bandwidth is not None or latency is not None or wraparound is not None

    def __repr__(self) -> str:
        shape = "x".join(map(str, self.dims))
        if self._custom:
            return (f"tpu_slice({self.generation.name!r}, {shape!r}, "
                    f"bandwidth={_fmt(self.bandwidth)}, latency={_fmt(self.latency)}, "
                    f"wraparound={self.wraparound})")
        return f"tpu_slice({self.generation.name!r}, {shape!r})"

    @property
    def host_shape(self) -> tuple[int, ...]:
        return tuple(min(h, d) for h, d in zip(self.generation.host_shape, self.dims))

    def host_of(self, rank) -> int:
        """Index of the CPU host that serves chip ``rank`` over PCIe."""
        coords = np.array(np.unravel_index(np.asarray(rank), self.dims))
        hs = np.array(self.host_shape)[:, None] if coords.ndim > 1 else np.array(self.host_shape)
        block = coords // hs
        grid = tuple(-(-d // h) for d, h in zip(self.dims, self.host_shape))
        return np.ravel_multi_index(tuple(block), grid)

    @property
    def num_hosts(self) -> int:
        return int(np.prod([-(-d // h) for d, h in zip(self.dims, self.host_shape)]))

    def hosts(self) -> list[list[int]]:
        owner = self.host_of(np.arange(self.num_ranks))
        return [np.nonzero(owner == h)[0].tolist() for h in range(self.num_hosts)]


def parse_shape(text) -> tuple[int, ...]:
    if isinstance(text, (tuple, list)):
        return tuple(int(t) for t in text)
    parts = str(text).lower().split("x")
    try:
        return tuple(int(p) for p in parts)
    except ValueError:
        raise CollectivesError(
            f"shape {text!r} is not understood; write it like 4x4 or 4x4x8"
        ) from None


def tpu_slice(generation: str, shape, **overrides) -> TpuSlice:
    """A TPU slice: ``tpu_slice("v5e", "4x4")``, ``tpu_slice("v5p", (4, 4, 8))``."""
    return TpuSlice(generation, parse_shape(shape), **overrides)


def tpu_pod(generation: str, **overrides) -> TpuSlice:
    """The whole pod of a generation (v4 16x16x16, v5p 16x20x28, v5e/v6e 16x16)."""
    gen = hw.tpu(generation)
    if gen.pod_shape is None:
        raise CollectivesError(
            f"TPU {gen.name} pods are assembled from 4x4x4 cubes by optical "
            f"switches and have no single shape; ask for a slice instead"
        )
    return TpuSlice(generation, gen.pod_shape, **overrides)


class TpuSystem(Topology):
    """TPU slices with their CPU hosts: ICI inside each slice, PCIe from each
    chip to its host, and DCN between hosts through one data-centre switch.

    Nodes: the chips of slice 0, then of slice 1, ...; then the hosts; then the
    DCN switch. Named participants: ``"host<h>"`` and ``"dcn"``. Traffic between
    slices goes chip -> PCIe -> host -> DCN -> host -> PCIe -> chip.
    """

    def __init__(self, generation: str, shape, num_slices: int = 1, *,
                 dcn_bandwidth: float | None = None, pcie_bandwidth: float | None = None):
        self.slice = tpu_slice(generation, shape)
        gen = self.slice.generation
        self.num_slices = check_num_ranks(num_slices, what="number of slices")
        self.chips_per_slice = self.slice.num_ranks
        self.num_ranks = self.chips_per_slice * self.num_slices
        self.hosts_per_slice = self.slice.num_hosts
        self.num_hosts = self.hosts_per_slice * self.num_slices
        self.num_nodes = self.num_ranks + self.num_hosts + 1
        self.pcie_bandwidth = float(gen.pcie_bandwidth) if pcie_bandwidth is None else _positive(pcie_bandwidth, "pcie_bandwidth")
        chips_per_host = int(np.prod(self.slice.host_shape))
        per_chip_dcn = float(gen.dcn_bandwidth) if dcn_bandwidth is None else _positive(dcn_bandwidth, "dcn_bandwidth")
        self.dcn_bandwidth_per_host = per_chip_dcn * chips_per_host
        self.mesh_shape = (self.num_slices,) + self.slice.dims
        self.axis_names = ("slice",) + self.slice.axis_names
        self._host_of_chip = np.concatenate([
            self.slice.host_of(np.arange(self.chips_per_slice)) + s * self.hosts_per_slice
            for s in range(self.num_slices)
        ])

    def __repr__(self) -> str:
        shape = "x".join(map(str, self.slice.dims))
        return f"TpuSystem({self.slice.generation.name!r}, {shape!r}, num_slices={self.num_slices})"

    @property
    def dcn_node(self) -> int:
        return self.num_nodes - 1

    def host_node(self, host: int) -> int:
        return self.num_ranks + int(host)

    def host_of(self, chip: int) -> int:
        return int(self._host_of_chip[chip])

    def node_label(self, node: int) -> str:
        if node < self.num_ranks:
            s, r = divmod(node, self.chips_per_slice)
            prefix = f"slice {s} " if self.num_slices > 1 else ""
            return prefix + self.slice.node_label(r)
        if node == self.dcn_node:
            return "DCN"
        return f"host {node - self.num_ranks}"

    def agent_node(self, name: str) -> int:
        if name == "dcn":
            return self.dcn_node
        if name.startswith("host"):
            try:
                h = int(name[4:])
            except ValueError:
                h = -1
            if 0 <= h < self.num_hosts:
                return self.host_node(h)
        return super().agent_node(name)

    def _build_links(self) -> Links:
        b = _LinkBuilder()
        ici = self.slice.links
        for s in range(self.num_slices):
            off = s * self.chips_per_slice
            b.add(ici.src + off, ici.dst + off, ici.bandwidth, ici.latency, "ici")
        chips = np.arange(self.num_ranks)
        hosts = self.num_ranks + self._host_of_chip
        self._pcie_up = b.add(chips, hosts, self.pcie_bandwidth, 0.0, "pcie")
        self._pcie_down = b.add(hosts, chips, self.pcie_bandwidth, 0.0, "pcie")
        host_nodes = self.num_ranks + np.arange(self.num_hosts)
        self._dcn_up = b.add(host_nodes, np.full(self.num_hosts, self.dcn_node),
                             self.dcn_bandwidth_per_host, 0.0, "dcn")
        self._dcn_down = b.add(np.full(self.num_hosts, self.dcn_node), host_nodes,
                               self.dcn_bandwidth_per_host, 0.0, "dcn")
        return b.build()

    def routes(self, src, dst) -> Routes:
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        self.links  # builds the link id tables
        n, cps = self.num_ranks, self.chips_per_slice
        if len(src) and (src.max() >= self.num_nodes or dst.max() >= self.num_nodes
                         or src.min() < 0 or dst.min() < 0):
            raise CollectivesError(f"a flow names a node outside {self!r}")
        sub_flow: list[np.ndarray] = []
        sub_weight: list[np.ndarray] = []
        inc_sub: list[np.ndarray] = []
        inc_link: list[np.ndarray] = []
        nsub = 0
        same_slice = (src < n) & (dst < n) & (src // cps == dst // cps)
        idx = np.nonzero(same_slice)[0]
        if len(idx):
            off = (src[idx] // cps) * cps
            r = self.slice.routes(src[idx] - off, dst[idx] - off)
            sub_flow.append(idx[r.sub_flow])
            sub_weight.append(r.sub_weight)
            inc_sub.append(r.inc_sub)
            slice_of_sub = (src[idx] // cps)[r.sub_flow]
            inc_link.append(r.inc_link + slice_of_sub[r.inc_sub] * len(self.slice.links))
            nsub = len(r.sub_flow)
        for f in np.nonzero(~same_slice)[0].tolist():
            sub_flow.append(np.array([f]))
            sub_weight.append(np.ones(1))
            path = self._system_path(int(src[f]), int(dst[f]))
            inc_sub.append(np.full(len(path), nsub, dtype=np.int64))
            inc_link.append(np.asarray(path, dtype=np.int64))
            nsub += 1
        if not sub_flow:
            z = np.zeros(0, np.int64)
            return Routes(z, np.zeros(0), z, z)
        return Routes(np.concatenate(sub_flow).astype(np.int64), np.concatenate(sub_weight),
                      np.concatenate(inc_sub).astype(np.int64),
                      np.concatenate(inc_link).astype(np.int64))

    def _system_path(self, a: int, b: int) -> list[int]:
        n = self.num_ranks
        if a == b:
            return []
        path: list[int] = []
        # climb from a to the DCN switch (or stop at a common host)
        def host_node_of(x):
            return n + self.host_of(x) if x < n else x
        if a < n and b < n:
            ha, hb = host_node_of(a), host_node_of(b)
            path.append(int(self._pcie_up[a]))
            if ha != hb:
                path += [int(self._dcn_up[ha - n]), int(self._dcn_down[hb - n])]
            path.append(int(self._pcie_down[b]))
            return path
        if a >= n and b < n:  # host or dcn -> chip
            hb = host_node_of(b)
            if a == self.dcn_node:
                return [int(self._dcn_down[hb - n]), int(self._pcie_down[b])]
            if a != hb:
                path += [int(self._dcn_up[a - n]), int(self._dcn_down[hb - n])]
            return path + [int(self._pcie_down[b])]
        if a < n and b >= n:  # chip -> host or dcn
            ha = host_node_of(a)
            path.append(int(self._pcie_up[a]))
            if b == self.dcn_node:
                return path + [int(self._dcn_up[ha - n])]
            if b != ha:
                path += [int(self._dcn_up[ha - n]), int(self._dcn_down[b - n])]
            return path
        # host/dcn <-> host/dcn
        if a == self.dcn_node:
            return [int(self._dcn_down[b - n])]
        if b == self.dcn_node:
            return [int(self._dcn_up[a - n])]
        return [int(self._dcn_up[a - n]), int(self._dcn_down[b - n])]


def tpu_system(generation: str, shape, num_slices: int = 1, **kw) -> TpuSystem:
    """TPU slices with hosts, PCIe and DCN (see :class:`TpuSystem`)."""
    return TpuSystem(generation, parse_shape(shape), num_slices, **kw)


# ---------------------------------------------------------------------------
# GPU clusters: NVLink nodes on an InfiniBand fat tree
# ---------------------------------------------------------------------------

class GpuCluster(Topology):
    """Nodes of GPUs on an NVSwitch, joined by a rail-optimised InfiniBand fat tree.

    Each GPU has one NIC; GPU ``g`` of a node sits on rail ``g % rails``. The
    nodes of a Scalable Unit (``nodes_per_su``) share one leaf switch per rail;
    leaves connect to a spine. A leaf's uplink carries ``1/oversubscription`` of
    what its NICs can inject (1 is a full fat tree). The spine is modelled as
    one non-blocking switch with one aggregate up-link and down-link per leaf.

    Ranks are GPUs, numbered node by node: rank = node * gpus_per_node + gpu.
    Named participants: ``"nvswitch<m>"`` (node m's NVSwitch fabric) and
    ``"spine"``.
    """

    def __init__(self, system: str = "dgx-h100", num_nodes: int = 1, *,
                 nodes_per_su: int | None = None, oversubscription: float = 1.0,
                 nvlink_bandwidth: float | None = None, nic_bandwidth: float | None = None,
                 nvlink_latency: float | None = None, nic_latency: float | None = None):
        s = hw.gpu_system(system)
        self.system = s
        self.num_nodes_ = check_num_ranks(num_nodes, what="number of nodes")
        self.gpus_per_node = s.gpus_per_node
        self.rails = s.rails
        self.nodes_per_su = check_num_ranks(nodes_per_su or s.nodes_per_su,
                                            what="nodes per scalable unit")
        self.oversubscription = _positive(oversubscription, "oversubscription")
        if self.oversubscription < 1:
            raise CollectivesError(
                f"oversubscription must be >= 1 (1 is a full fat tree), got {oversubscription}"
            )
        self.nvlink_bandwidth = float(s.nvlink_bandwidth) if nvlink_bandwidth is None else _positive(nvlink_bandwidth, "nvlink_bandwidth")
        self.nic_bandwidth = float(s.nic_bandwidth) if nic_bandwidth is None else _positive(nic_bandwidth, "nic_bandwidth")
        self.nvlink_latency = float(s.nvlink_latency) if nvlink_latency is None else _nonnegative(nvlink_latency, "nvlink_latency")
        self.nic_latency = float(s.nic_latency) if nic_latency is None else _nonnegative(nic_latency, "nic_latency")
        self.reduce_flops = None if s.nvswitch_reduce_flops is None else float(s.nvswitch_reduce_flops)
        m, g = self.num_nodes_, self.gpus_per_node
        self.num_ranks = m * g
        self.num_sus = -(-m // self.nodes_per_su)
        self.num_leaves = self.num_sus * self.rails
        self.num_nodes = self.num_ranks + m + self.num_leaves + 1
        self.mesh_shape = (m, g)
        self.axis_names = ("node", "gpu")
        self._custom = any(v is not None for v in (nodes_per_su, nvlink_bandwidth, nic_bandwidth,
                                                   nvlink_latency, nic_latency)) or oversubscription != 1

    def __repr__(self) -> str:
        extra = ""
        if self.oversubscription != 1:
            extra += f", oversubscription={self.oversubscription:g}"
        if self._custom and self.nodes_per_su != self.system.nodes_per_su:
            extra += f", nodes_per_su={self.nodes_per_su}"
        return f"GpuCluster({self.system.name!r}, num_nodes={self.num_nodes_}{extra})"

    # node ids
    def nvswitch_node(self, node: int) -> int:
        return self.num_ranks + int(node)

    def leaf_node(self, su: int, rail: int) -> int:
        return self.num_ranks + self.num_nodes_ + int(su) * self.rails + int(rail)

    @property
    def spine_node(self) -> int:
        return self.num_nodes - 1

    def node_label(self, node: int) -> str:
        n, m = self.num_ranks, self.num_nodes_
        if node < n:
            nd, gpu = divmod(node, self.gpus_per_node)
            return f"node {nd} GPU {gpu}"
        if node < n + m:
            return f"node {node - n} NVSwitch"
        if node < n + m + self.num_leaves:
            su, rail = divmod(node - n - m, self.rails)
            return f"SU {su} leaf {rail}"
        return "spine"

    def agent_node(self, name: str) -> int:
        if name == "spine":
            return self.spine_node
        if name in ("switch", "nvswitch") and self.num_nodes_ == 1:
            return self.nvswitch_node(0)
        if name.startswith("nvswitch"):
            try:
                k = int(name[8:])
            except ValueError:
                k = -1
            if 0 <= k < self.num_nodes_:
                return self.nvswitch_node(k)
        return super().agent_node(name)

    def reduce_rate(self, node: int) -> float | None:
        if self.num_ranks <= node < self.num_ranks + self.num_nodes_:
            return self.reduce_flops
        return None

    def agent_latency(self, node: int) -> float:
        """Fixed cost of entering or leaving a node's NVSwitch as a participant (NVLS)."""
        if self.num_ranks <= node < self.num_ranks + self.num_nodes_ and self.system.nvls_latency:
            return float(self.system.nvls_latency) / 2
        return 0.0

    def _build_links(self) -> Links:
        n, m, g = self.num_ranks, self.num_nodes_, self.gpus_per_node
        gpus = np.arange(n)
        node_of = gpus // g
        rail_of = (gpus % g) % self.rails
        su_of = node_of // self.nodes_per_su
        nvsw = n + node_of
        leaf = n + m + su_of * self.rails + rail_of
        b = _LinkBuilder()
        self._nvl_up = b.add(gpus, nvsw, self.nvlink_bandwidth, self.nvlink_latency, "nvlink")
        self._nvl_down = b.add(nvsw, gpus, self.nvlink_bandwidth, self.nvlink_latency, "nvlink")
        self._nic_up = b.add(gpus, leaf, self.nic_bandwidth, self.nic_latency, "ib")
        self._nic_down = b.add(leaf, gpus, self.nic_bandwidth, self.nic_latency, "ib")
        # leaf uplink capacity: what its NICs can inject, divided by oversubscription
        per_leaf = np.bincount(leaf - n - m, minlength=self.num_leaves)
        cap = per_leaf * self.nic_bandwidth / self.oversubscription
        cap = np.where(cap > 0, cap, self.nic_bandwidth)
        leaves = n + m + np.arange(self.num_leaves)
        spine = np.full(self.num_leaves, self.spine_node)
        self._leaf_up = b.add(leaves, spine, cap, self.nic_latency, "ib")
        self._leaf_down = b.add(spine, leaves, cap, self.nic_latency, "ib")
        return b.build()

    def routes(self, src, dst) -> Routes:
        """NVLink inside a node; across nodes GPU -> its leaf -> (spine ->) leaf -> GPU.

        Cross-node traffic between different rails or Scalable Units climbs to
        the spine. Switch agents (``nvswitch<m>``) are reached over NVLink.
        """
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        self.links
        n, m, g = self.num_ranks, self.num_nodes_, self.gpus_per_node
        flows = np.arange(len(src), dtype=np.int64)
        if len(src) and (src.max() >= self.num_nodes or dst.max() >= self.num_nodes):
            raise CollectivesError(f"a flow names a node outside {self!r}")
        subs: list[np.ndarray] = []
        links: list[np.ndarray] = []

        def add(mask, link_ids):
            subs.append(flows[mask])
            links.append(np.asarray(link_ids)[mask] if np.ndim(link_ids) else np.full(mask.sum(), link_ids))

        gpu_s, gpu_d = src < n, dst < n
        sw_s = (src >= n) & (src < n + m)
        sw_d = (dst >= n) & (dst < n + m)
        node_s = np.where(gpu_s, src // g, src - n)
        node_d = np.where(gpu_d, dst // g, dst - n)
        s_safe = np.where(gpu_s, src, 0)
        d_safe = np.where(gpu_d, dst, 0)
        # GPU <-> its own node's switch agent
        add(gpu_s & sw_d & (node_s == node_d), self._nvl_up[s_safe])
        add(sw_s & gpu_d & (node_s == node_d), self._nvl_down[d_safe])
        # GPU -> GPU in the same node
        intra = gpu_s & gpu_d & (node_s == node_d) & (src != dst)
        add(intra, self._nvl_up[s_safe])
        add(intra, self._nvl_down[d_safe])
        # GPU -> GPU across nodes
        inter = gpu_s & gpu_d & (node_s != node_d)
        if inter.any():
            rail_s = (src % g) % self.rails
            rail_d = (dst % g) % self.rails
            su_s = node_s // self.nodes_per_su
            su_d = node_d // self.nodes_per_su
            leaf_s = su_s * self.rails + rail_s
            leaf_d = su_d * self.rails + rail_d
            via_spine = inter & (leaf_s != leaf_d)
            add(inter, self._nic_up[s_safe])
            add(via_spine, self._leaf_up[np.where(via_spine, leaf_s, 0)])
            add(via_spine, self._leaf_down[np.where(via_spine, leaf_d, 0)])
            add(inter, self._nic_down[d_safe])
        other = ~((gpu_s & sw_d & (node_s == node_d)) | (sw_s & gpu_d & (node_s == node_d))
                  | intra | inter | (src == dst))
        for f in np.nonzero(other)[0].tolist():
            for link in self._bfs_path(int(src[f]), int(dst[f])):
                subs.append(np.array([f]))
                links.append(np.array([link]))
        if subs:
            return Routes(flows, np.ones(len(src)), np.concatenate(subs).astype(np.int64),
                          np.concatenate(links).astype(np.int64))
        return Routes(flows, np.ones(len(src)), np.zeros(0, np.int64), np.zeros(0, np.int64))

    def default_bisection(self) -> list[int]:
        half = self.num_nodes_ // 2
        if half == 0:
            return list(range(self.gpus_per_node // 2))
        return list(range(half * self.gpus_per_node))

    def node_ranks(self, nodes) -> list[int]:
        """The GPUs (ranks) of the given nodes."""
        g = self.gpus_per_node
        out: list[int] = []
        for nd in nodes:
            out.extend(range(int(nd) * g, int(nd) * g + g))
        return out

    def axis_groups(self, axes) -> np.ndarray:
        axes = self.resolve_axes(axes)
        ranks = np.arange(self.num_ranks).reshape(self.mesh_shape)
        if axes == [0, 1]:
            return ranks.reshape(1, -1)
        if axes == [1]:
            return ranks
        return ranks.T.copy()

    def resolve_axes(self, axes) -> list[int]:
        if axes is None:
            return [0, 1]
        names = [axes] if isinstance(axes, (str, int)) else list(axes)
        out = []
        aliases = {"node": 0, "x": 0, "nodes": 0, "gpu": 1, "y": 1, "gpus": 1, "0": 0, "1": 1}
        for a in names:
            key = str(a).strip().lower()
            if key not in aliases:
                raise CollectivesError(
                    f"unknown axis {a!r}; {self!r} has axes node (x, {self.num_nodes_} nodes) "
                    f"and gpu (y, {self.gpus_per_node} GPUs per node)"
                )
            out.append(aliases[key])
        if len(set(out)) != len(out):
            raise CollectivesError(f"axes {axes!r} name an axis twice")
        return sorted(out)


def superpod(system: str = "dgx-h100", num_nodes: int = 128, **kw) -> GpuCluster:
    """The DGX SuperPOD reference design: 4 Scalable Units of 32 DGX H100 nodes
    (1024 GPUs) on a rail-optimised full fat tree."""
    return GpuCluster(system, num_nodes, **kw)


# ---------------------------------------------------------------------------
# Max-flow and disjoint paths
# ---------------------------------------------------------------------------

def _max_flow(topo: Topology, a: np.ndarray, b: np.ndarray) -> float:
    """Maximum flow from endpoint set ``a`` to endpoint set ``b`` (Dinic)."""
    links = topo.links
    n = topo.num_nodes
    side = np.zeros(n, dtype=np.int8)  # 0 free, 1 source side, 2 sink side
    side[a] = 1
    side[b] = 2
    assigned_endpoints = np.zeros(n, dtype=bool)
    assigned_endpoints[: topo.num_ranks] = True
    src_side, dst_side = side[links.src], side[links.dst]
    # if every node is assigned, the answer is the capacity of links crossing a -> b
    free_nodes = np.nonzero(side == 0)[0]
    # endpoints not on either side do not forward traffic for others unless they are
    # routers (tori); we let them forward, as chips on a torus do.
    if len(free_nodes) == 0:
        return float(links.bandwidth[(src_side == 1) & (dst_side == 2)].sum())
    # contract: S = every side-1 node, T = every side-2 node
    node_id = np.full(n, -1, dtype=np.int64)
    node_id[free_nodes] = np.arange(len(free_nodes))
    S, T = len(free_nodes), len(free_nodes) + 1
    node_id[side == 1] = S
    node_id[side == 2] = T
    u = node_id[links.src]
    v = node_id[links.dst]
    keep = u != v
    cap: dict[tuple[int, int], float] = {}
    for x, y, c in zip(u[keep].tolist(), v[keep].tolist(), links.bandwidth[keep].tolist()):
        cap[(x, y)] = cap.get((x, y), 0.0) + c
    return _dinic(len(free_nodes) + 2, cap, S, T)


def _dinic(num: int, cap: dict[tuple[int, int], float], s: int, t: int) -> float:
    graph: list[list[int]] = [[] for _ in range(num)]
    to: list[int] = []
    res: list[float] = []
    for (x, y), c in cap.items():
        graph[x].append(len(to)); to.append(y); res.append(c)
        graph[y].append(len(to)); to.append(x); res.append(0.0)
    total = 0.0
    eps = 1e-9
    while True:
        level = [-1] * num
        level[s] = 0
        q = deque([s])
        while q:
            x = q.popleft()
            for e in graph[x]:
                if res[e] > eps and level[to[e]] < 0:
                    level[to[e]] = level[x] + 1
                    q.append(to[e])
        if level[t] < 0:
            return total
        it = [0] * num

        def dfs(x: int, pushed: float) -> float:
            if x == t:
                return pushed
            while it[x] < len(graph[x]):
                e = graph[x][it[x]]
                y = to[e]
                if res[e] > eps and level[y] == level[x] + 1:
                    got = dfs(y, min(pushed, res[e]))
                    if got > eps:
                        res[e] -= got
                        res[e ^ 1] += got
                        return got
                it[x] += 1
            return 0.0

        while True:
            pushed = dfs(s, math.inf)
            if pushed <= eps:
                break
            total += pushed


def _disjoint_paths(topo: Topology, src: int, dst: int) -> list[list[int]]:
    """Successive shortest paths with unit capacities: max link-disjoint paths, min total hops."""
    if src == dst:
        return [[src]]
    links = topo.links
    num_links = len(links)
    used = np.zeros(num_links, dtype=bool)
    out_links = topo._out_links
    in_links: list[list[int]] = [[] for _ in range(topo.num_nodes)]
    for i, v in enumerate(links.dst.tolist()):
        in_links[v].append(i)
    lsrc, ldst = links.src.tolist(), links.dst.tolist()
    count = 0
    while True:
        # Bellman-Ford style shortest path in the residual graph (costs +1 forward, -1 back)
        dist = {src: 0}
        prev: dict[int, tuple[int, int]] = {}
        # residual costs can be negative; use label-correcting (SPFA)
        queue = deque([src])
        inq = {src}
        while queue:
            x = queue.popleft()
            inq.discard(x)
            dx = dist[x]
            for e in out_links[x]:
                if not used[e]:
                    y = ldst[e]
                    if dx + 1 < dist.get(y, math.inf):
                        dist[y] = dx + 1
                        prev[y] = (e, +1)
                        if y not in inq:
                            queue.append(y); inq.add(y)
            for e in in_links[x]:
                if used[e]:
                    y = lsrc[e]
                    if dx - 1 < dist.get(y, math.inf):
                        dist[y] = dx - 1
                        prev[y] = (e, -1)
                        if y not in inq:
                            queue.append(y); inq.add(y)
        if dst not in dist:
            break
        y = dst
        while y != src:
            e, sign = prev[y]
            if sign > 0:
                used[e] = True
                y = lsrc[e]
            else:
                used[e] = False
                y = ldst[e]
        count += 1
    # decompose the used links into paths
    remaining = {}
    for e in np.nonzero(used)[0].tolist():
        remaining.setdefault(lsrc[e], []).append(e)
    paths = []
    for _ in range(count):
        path = [src]
        x = src
        while x != dst:
            e = remaining[x].pop()
            x = ldst[e]
            path.append(x)
        paths.append(path)
    paths.sort(key=len)
    return paths
