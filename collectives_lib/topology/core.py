"""The core of every topology: directed links as arrays, routes, and the base class.

A topology is a value. Its vertices ``0 .. num_ranks - 1`` are endpoints (TPU
chips, GPUs); further vertices are switches and hosts (``num_vertices`` counts
them all). Its links are directed and carry a one-way bandwidth (bytes/s), a
latency (s) and a link class (``"ici"``, ``"nvlink"``, ``"ib"``, ``"pcie"``,
``"dcn"`` or ``"link"``), stored as numpy arrays so that routing thousands of
flows is vectorised. Two topologies built with the same parameters are equal.

Introduced in the chapters *TPU cluster topology* and *NVIDIA GPU cluster topology*.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..errors import CollectivesError
from ..units import format_rate
from ..checks import nonnegative, positive  # noqa: F401  (re-exported to the topologies)
from .graph import disjoint_paths_between, max_flow

LINK_CLASSES = ("ici", "nvlink", "ib", "pcie", "dcn", "link")
CLASS_CODE = {name: i for i, name in enumerate(LINK_CLASSES)}


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


class LinkBuilder:
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
        self.klass.append(np.full(n, CLASS_CODE[klass], dtype=np.int8))
        ids = np.arange(self.count, self.count + n, dtype=np.int64)
        self.count += n
        return ids

    def build(self) -> Links:
        cat = lambda xs, dt: np.concatenate(xs).astype(dt) if xs else np.zeros(0, dt)
        return Links(cat(self.src, np.int64), cat(self.dst, np.int64),
                     cat(self.bw, float), cat(self.lat, float), cat(self.klass, np.int8))


def fmt(x: float) -> str:
    """A number as reprs print it: four significant digits."""
    return f"{x:.4g}"


class Topology:
    """Base class. Subclasses build their links and may override routing."""

    num_ranks: int
    num_vertices: int
    mesh_shape: tuple[int, ...]
    axis_names: tuple[str, ...]
    routing_kind = "routed"  # "torus": transfers hop between neighbours

    # -- value equality ------------------------------------------------------

    @property
    def max_hops(self) -> int | None:
        """The most links a route between two ranks crosses, where known without routing
        (None: not known); timing uses it to price a schedule before building it."""
        return None

    @property
    def gpu_system(self):
        """The GPU system preset (:class:`collectives_lib.hardware.GpuSystem`) this topology is
        made of, or None (a generic topology, a TPU)."""
        return None

    def _identity(self) -> tuple:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    def __eq__(self, other) -> bool:
        if not isinstance(other, Topology):
            return NotImplemented
        return type(self) is type(other) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def _key(self) -> tuple:
        # a topology with slowed links (scaling.slowed) is not the one it was copied from
        return (type(self).__name__, self._identity(), self.__dict__.get("slowdown", ()))

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
                f"({links.class_name(link)}, {format_rate(float(links.bandwidth[link]))})")

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
    def out_links(self) -> list[list[int]]:
        out: list[list[int]] = [[] for _ in range(self.num_vertices)]
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
            for link in self.out_links[u]:
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
        return max_flow(self, a, b)

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
        return disjoint_paths_between(self, int(src), int(dst))


def check_topology(value, what: str = "topology"):
    """A :class:`~collectives_lib.topology.Topology`, else an error with the way to make one."""
    if isinstance(value, Topology):
        return value
    hint = (f"; parse a spec such as {value!r} with cl.parse_topology({value!r}, bandwidth=...)"
            if isinstance(value, str) else "")
    raise CollectivesError(f"{what} must be a Topology (such as cl.Ring(8, bandwidth=45e9)), "
                           f"got {value!r}{hint}")


def mesh_axis_groups(mesh_shape, axes: list[int]) -> np.ndarray:
    """Ranks laid out row-major on ``mesh_shape``, grouped for a collective over ``axes``:
    shape (groups, group size); within a group the listed axes in mesh order, the last
    varying fastest."""
    dims = tuple(int(d) for d in mesh_shape)
    others = [a for a in range(len(dims)) if a not in axes]
    ranks = np.arange(int(np.prod(dims))).reshape(dims)
    moved = np.transpose(ranks, others + sorted(axes))
    return moved.reshape(-1, int(np.prod([dims[a] for a in axes])))


def resolve_mesh_axes(topology, axes, names, dims) -> list[int]:
    """``axes`` (names or indices; None: every axis) as sorted axis indices of a mesh with
    axis ``names`` and sizes ``dims``; a one-line error names the axes there are."""
    from ..checks import axes as check_axes
    axes = check_axes(axes)
    if axes is None:
        return list(range(len(dims)))
    out = []
    for a in axes:
        if isinstance(a, str):
            key = a.strip().lower()
            if key not in names:
                raise CollectivesError(f"unknown axis {a!r}; {topology!r} has axes {', '.join(names)} "
                                       f"(sizes {tuple(dims)})")
            out.append(names.index(key))
        else:
            if not 0 <= int(a) < len(dims):
                raise CollectivesError(f"axis {a!r} out of range; {topology!r} has axes 0..{len(dims) - 1}")
            out.append(int(a))
    if len(set(out)) != len(out):
        raise CollectivesError(f"axes {axes!r} name an axis twice")
    return sorted(out)
