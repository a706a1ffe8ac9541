"""Point to point: a send between two ranks, and a gather to one root, over one
route or split over link-disjoint routes.

On a torus or mesh two chips are joined by several link-disjoint routes (two
on a 2D mesh between opposite corners, up to six on a 3D torus); splitting a
message over them divides its bandwidth term by their number.

Introduced in the chapter *TPU cluster topology* (disjoint paths) and used by
the offload example in *TPU clusters: hosts, PCIe and DCN*.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from .. import costs
from ..errors import CollectivesError
from ..schedule import COPY, Schedule, Step, Traffic, boxes_array
from ..topology import Ring, Switch, Topology, Torus
from ..units import format_rate
from .registry import Group, register


def gather_schedule(n: int, root: int = 0, paths: Sequence[Sequence[Sequence[int]]] | None = None) -> Schedule:
    """Every rank sends its block straight to the root in one step (routed).

    ``paths[i]``, if given, lists node paths for rank i's block; the block is
    split evenly over them (for example the two link-disjoint routes on a mesh).
    """
    src, dst, boxes, fractions, path_ids, all_paths = [], [], [], [], [], []
    slots = 1
    for p in (paths or []):
        if p:
            slots = math.lcm(slots, len(p))
    for i in range(n):
        if i == root:
            continue
        mine = paths[i] if paths and paths[i] else [None]
        k = len(mine)
        for j, p in enumerate(mine):
            src.append(i)
            dst.append(root)
            boxes.append([(i, 1), (j * slots // k, slots // k)])
            fractions.append(1.0 / (n * k))
            if p is None:
                path_ids.append(-1)
            else:
                path_ids.append(len(all_paths))
                all_paths.append(tuple(p))
    traffic = Traffic.make(src, dst, COPY, fractions, path_ids if all_paths else None)
    steps = [Step(traffic, np.asarray(boxes, dtype=np.int64).reshape(-1, 2, 2), "gather")] if src else []
    return Schedule.local("gather", "direct" if not all_paths else "multipath", n, (n, slots), steps,
                          routing="routed", root=root, paths=all_paths,
                          description="gather: every rank sends its block to the root at once")


def send_schedule(n: int, src: int, dst: int, paths: Sequence[Sequence[int]] = ()) -> Schedule:
    """Send the array from ``src`` to ``dst``, split evenly over ``paths`` (node lists)."""
    k = max(1, len(paths))
    path_ids = np.arange(k) if paths else np.full(1, -1)
    traffic = Traffic.make(np.full(k, src), np.full(k, dst), COPY, 1.0 / k, path_ids)
    return Schedule.local("send", "multipath" if len(paths) > 1 else "direct", n, (k,),
                          [Step(traffic, boxes_array([(np.arange(k), 1)], k), "send")],
                          routing="routed", root=src, dest=dst, paths=paths,
                          description=f"send over {k} link-disjoint path{'s' if k > 1 else ''}")


# ---------------------------------------------------------------------------
# Ranks, routes and the registered algorithms
# ---------------------------------------------------------------------------

def endpoint(topology: Topology, x, what: str) -> int:
    """A rank of ``topology`` given as a rank or as coordinates."""
    if hasattr(topology, "rank_of") and np.iterable(x) and not isinstance(x, str):
        return topology.rank_of(x)
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
        raise CollectivesError(f"{what} must be a whole-number rank 0..{topology.num_ranks - 1}, got {x!r}")
    x = int(x)
    if not 0 <= x < topology.num_ranks:
        raise CollectivesError(f"{what} {x} is not an endpoint of {topology!r} (0..{topology.num_ranks - 1})")
    return x


def send_paths(topology: Topology, src: int, dst: int, paths) -> list[list[int]]:
    """The node paths a send splits over: ``"shortest"`` (one route, the network's
    own), ``"disjoint"`` (every link-disjoint route) or a count of disjoint routes."""
    if paths == "shortest" or (paths == 1 and not isinstance(paths, bool)):
        return []
    node_paths = topology.disjoint_paths(src, dst)
    if isinstance(paths, (int, np.integer)) and not isinstance(paths, bool):
        if paths < 1:
            raise CollectivesError(f"paths must be >= 1, got {paths}")
        return node_paths[:int(paths)]
    if paths != "disjoint":
        raise CollectivesError(f"paths must be 'disjoint', 'shortest' or a count, got {paths!r}")
    return node_paths


def _whole_topology(group: Group) -> str | None:
    if group.topology is None:
        return f"a {group.collective} needs a topology to route over, not just a number of ranks"
    if group.axes and sorted(group.axes) != list(range(len(getattr(group.topology, "mesh_shape", ())))):
        return f"a {group.collective} runs over the whole topology; leave axes out"
    return None


def _on_axes(group: Group) -> bool:
    """Whether the group is an axis of its topology (not the whole of it)."""
    return bool(group.axes) and sorted(group.axes) != list(range(len(getattr(group.topology, "mesh_shape", ()))))


def _send_applies(group: Group) -> str | None:
    """A send runs in every group at once: over an axis, ``src`` and ``dst`` are ranks of each
    group along it (the pair in each), routed as the network routes them."""
    if group.topology is None:
        return f"a {group.collective} needs a topology to route over, not just a number of ranks"
    if _on_axes(group) and group.options.get("paths", "shortest") not in ("shortest", 1):
        return ("a send over an axis follows the network's route in each group (paths='shortest'); "
                "paths split over the whole topology's links: leave axes out")
    return None


def _split_send_applies(group: Group) -> str | None:
    if group.topology is not None and _on_axes(group):
        return ("a send split over link-disjoint paths (multipath) runs over the whole topology; "
                "over an axis, direct sends the pair in each group on the network's route")
    return _send_applies(group)


def _send(g: Group, default_paths: str) -> Schedule:
    topo = g.topology
    if _on_axes(g):                       # the pair in each group along the axis
        s = endpoint(_Ranks(g.n), g.options.get("src", 0), "src")
        d = endpoint(_Ranks(g.n), g.options.get("dst", g.n - 1), "dst")
        if s == d:
            raise CollectivesError(f"send needs two different ranks, got {s} and {d}")
        return send_schedule(g.n, s, d)
    s = endpoint(topo, g.options.get("src", 0), "src")
    d = endpoint(topo, g.options.get("dst", topo.num_ranks - 1), "dst")
    if s == d:
        raise CollectivesError(f"send needs two different ranks, got {s} and {d}")
    return send_schedule(topo.num_ranks, s, d, send_paths(topo, s, d, g.options.get("paths", default_paths)))


class _Ranks:
    """The ranks of one group along an axis, as :func:`endpoint` checks them."""

    def __init__(self, n: int):
        self.num_ranks = n

    def __repr__(self) -> str:
        return f"a group of {self.num_ranks} ranks"


def _gather(g: Group, paths: str) -> Schedule:
    topo = g.topology
    root = endpoint(topo, g.options.get("root", 0), "root")
    n = topo.num_ranks
    node_paths = None
    if paths == "disjoint":
        node_paths = [topo.disjoint_paths(i, root) if i != root else [] for i in range(n)]
    return gather_schedule(n, root, node_paths)


def _ring_send_cost(multipath: bool):
    def cost(g: Group, nbytes: float) -> float | None:
        topo = g.topology
        if not isinstance(topo, Ring) or not topo.bidirectional or "paths" in g.options:
            return None
        n = topo.num_ranks
        s, d = g.options.get("src", 0), g.options.get("dst", n - 1)
        return costs.ring_send(n, (d - s) % n, nbytes, topo.bandwidth, topo.latency, multipath=multipath)
    return cost


def _gather_kinds(topo: Topology) -> list[str] | None:
    """The kind of each axis of a torus routed dimension by dimension, for the gather's
    closed form (:func:`~collectives_lib.costs.direct_gather_mesh`); None elsewhere, or
    where an axis of one-way links has no wraparound (no route back along it)."""
    if not isinstance(topo, Torus) or type(topo).routes is not Torus.routes:
        return None
    kinds = []
    for d, wrap in zip(topo.dims, topo.wraparound):
        if wrap:                        # kept only where it adds a neighbour
            kinds.append("bidirectional_ring" if topo.bidirectional else "ring")
        elif topo.bidirectional or d == 1:
            kinds.append("chain")
        else:
            return None
    return kinds


def _gather_cost(multipath: bool):
    """The gather's closed form: on a switch, and on a torus, ring or chain routed
    dimension by dimension; split over link-disjoint routes (``multipath``) only where
    they are counted (along one line: both ways round a two-way ring, else the one
    route there is)."""
    def cost(g: Group, nbytes: float) -> float | None:
        topo = g.topology
        if isinstance(topo, Switch):
            return costs.direct_gather(topo.num_ranks, nbytes, *g.link())
        kinds = _gather_kinds(topo)
        if kinds is None:
            return None
        W, alpha = topo.bandwidth, topo.latency
        if isinstance(topo, Ring) and topo.bidirectional and topo.num_ranks >= 3:
            return costs.ring_gather(topo.num_ranks, nbytes, W, alpha,
                                     multipath=multipath)
        lines = [a for a, d in enumerate(topo.dims) if d > 1]
        if multipath and len(lines) > 1:
            return None
        if multipath and lines and kinds[lines[0]] == "bidirectional_ring":
            return costs.ring_gather(topo.dims[lines[0]], nbytes, W, alpha,
                                     multipath=True)
        root = endpoint(topo, g.options.get("root", 0), "root")
        coords = np.unravel_index(root, topo.dims)
        return costs.direct_gather_mesh(topo.dims, kinds, coords, nbytes, W, alpha)
    return cost


def _gather_busiest(g: Group, nbytes: float) -> str | None:
    topo = g.topology
    if not isinstance(topo, (Switch, Torus)):
        return None
    root = topo.node_label(endpoint(topo, g.options.get("root", 0), "root"))
    return (f"closed form, not simulated: the links into the root ({root}), the "
            f"busiest carrying every block that reaches the root over it "
            f"({format_rate(topo.bandwidth)} each)")


#: The most (transfer, link) pairs a direct gather's routes on a torus, ring or chain
#: may hold before its closed form (exact, ``tests/test_scale.py``) times it: on a
#: chain of 4,096 they hold 8.4 million, 1 s and 370 MB to route.
GATHER_ROUTED = 2_000_000


def _direct_gather_hops(topo: Topology, root: int) -> int | None:
    """The links the direct gather's routes to ``root`` cross in all (each axis's
    distances to the root's position, once per line along it); None off a torus."""
    kinds = _gather_kinds(topo)
    if kinds is None:
        return None
    total = 0
    for d, kind, r in zip(topo.dims, kinds, np.unravel_index(root, topo.dims)):
        p = np.arange(d)
        if kind == "bidirectional_ring":
            dist = np.minimum((r - p) % d, (p - r) % d)
        elif kind == "ring":
            dist = (r - p) % d
        else:
            dist = np.abs(p - r)
        total += topo.num_ranks // d * int(dist.sum())
    return total


def _gather_by_formula(g: Group) -> str | None:
    topo = g.topology
    if topo is None:
        return None
    hops = _direct_gather_hops(topo, endpoint(topo, g.options.get("root", 0), "root"))
    if hops is None or hops <= GATHER_ROUTED:
        return None
    return (f"the gather's routes over {topo.num_ranks:,} ranks would cross {hops:,} "
            f"links in all; its closed form is exact")


#: The most links a multipath gather's own routes may hold: the simulator looks each
#: one up in turn (about 0.3 microseconds each), where it routes the network's in bulk
#: (a ring of 700 holds 489,300; estimate times it in 0.5 s).
MAX_PATH_HOPS = 500_000

#: The most link visits the search for every rank's link-disjoint routes may take
#: (about 0.15 microseconds each), where the routes are not counted (a torus of two or
#: more axes, any other network): a 16x16 torus takes 1.3 million, 8x8x8 11 million.
MAX_SEARCH = 6_000_000


def _gather_routes(topo: Topology, root: int) -> tuple[int, int, int]:
    """``(routes, links on them, link visits to search them)`` of a multipath gather
    to ``root``: counted along one line and through a switch
    (:meth:`Torus.line_paths`, :meth:`Switch.disjoint_paths`), else bounded (each
    search for a route visits every link and node, once per route found and once
    more)."""
    n = topo.num_ranks
    if isinstance(topo, Switch):
        return n - 1, 2 * (n - 1), 0
    if isinstance(topo, Torus) and len(topo.dims) == 1:
        if topo.wraparound[0] and topo.bidirectional:
            return 2 * (n - 1), n * (n - 1), 0
        if topo.wraparound[0]:
            return n - 1, n * (n - 1) // 2, 0
        r = root
        return n - 1, r * (r + 1) // 2 + (n - 1 - r) * (n - r) // 2, 0
    dims = len(getattr(topo, "dims", ())) or 1
    if 2 * n * (n - 1) > MAX_SEARCH:           # every search visits every rank at least
        return 2 * dims * n, 0, 2 * n * (n - 1)
    links = topo.links
    out = np.bincount(links.src, minlength=topo.num_vertices)[:n].max(initial=0)
    return 2 * dims * n, 0, (n - 1) * (int(out) + 1) * (len(links) + topo.num_vertices)


def _multipath_gather_size(g: Group):
    """The multipath gather's footprint: its routes (one transfer each, in one step),
    and why its own routes are too many to find or to time where they are
    (:data:`MAX_PATH_HOPS`, :data:`MAX_SEARCH`); the registry's size cap reads it."""
    topo = g.topology
    root = endpoint(topo, g.options.get("root", 0), "root")
    routes, hops, search = _gather_routes(topo, root)
    why = None
    if hops > MAX_PATH_HOPS:
        why = (f"would split its blocks over routes of {hops:,} links in all, each "
               f"looked up in turn, beyond the {MAX_PATH_HOPS:,} a schedule's own "
               f"routes may hold")
    elif search > MAX_SEARCH:
        why = (f"would visit about {search:,} links searching every rank's "
               f"link-disjoint routes, beyond the {MAX_SEARCH:,} the search may")
    return routes, 1, None, why


register("direct", "send", applies=_send_applies, cost=_ring_send_cost(False), nccl="P2P", default=True,
         description="one route, the network's own")(lambda g: _send(g, "shortest"))
register("multipath", "send", applies=_split_send_applies, cost=_ring_send_cost(True),
         description="split over link-disjoint paths")(lambda g: _send(g, "disjoint"))
register("direct", "gather", applies=_whole_topology, cost=_gather_cost(False),
         nccl="P2P", default=True, by_formula=_gather_by_formula,
         busiest=_gather_busiest,
         description="every block straight to the root")(lambda g: _gather(g, "shortest"))
register("multipath", "gather", applies=_whole_topology, cost=_gather_cost(True),
         size=_multipath_gather_size, busiest=_gather_busiest,
         description="every block split over the link-disjoint routes to the root"
         )(lambda g: _gather(g, "disjoint"))
