"""What every other builder's schedule would hold, before it is built.

The size cap (:func:`~collectives_lib.builders.registry.too_large`: distinct
transfers, and transfers times the topology's longest route) needs each
algorithm's footprint ``(transfers, steps)`` before building. The ring, chain,
doubling, binomial, tree and direct builders declare theirs where they are
registered (exact); this module gives every other algorithm one, so that no
builder escapes the cap. A footprint may add a third figure, the longest route
one of its transfers takes (1 for a neighbour), where that is shorter than the
topology's longest. These are upper bounds on the distinct transfers
the built schedule holds (a pattern that steps repeat is held and routed once),
fitted to the builders and held to them by ``tests/test_registry.py``; the steps
are the schedule's where they are known in closed form.
"""

from __future__ import annotations

import dataclasses

from ..topology import GpuCluster, Torus
from . import registry
from .registry import Group


#: The route length of a transfer to a neighbour (see :func:`registry.too_large`).
NEIGHBOUR = 1


def _log2(n: int) -> int:
    return max(int(n) - 1, 0).bit_length()


def _axes_dims(g: Group) -> list[int]:
    return [int(d) for d in g.shape] or [g.n]


def _mesh(multi: bool, phases: int):
    """multi_axis and sequential_axes on a mesh: along an axis of d ranks every rank sends
    at most d messages (d - 1 on a chain or round an odd ring), once per part (one part per
    axis order for multi_axis); each message goes to a neighbour."""
    def size(g: Group) -> tuple[int, int, int]:
        dims = _axes_dims(g)
        parts = len(dims) if multi else 1
        return (phases * g.n * parts * sum(dims), phases * sum(d - 1 for d in dims),
                NEIGHBOUR)
    return size


def _neighbour(footprint):
    """A footprint whose transfers go one hop to a neighbour on a ring, chain or torus
    (a switch or a cluster still routes them over its own longest route)."""
    def size(g: Group):
        out = footprint(g)
        return (*out, NEIGHBOUR) if isinstance(g.topology, Torus) else out
    return size


def _tiers(phases: int, steps: int | None = None, *, repeats: bool = True):
    """hierarchical: every rank sends once per step of each tier (the group's axes); over
    a GPU cluster the all-gather's steps repeat two patterns (NVLink, the rails), N
    transfers each; the all-to-all's do not."""
    def size(g: Group) -> tuple[int, int]:
        dims = _axes_dims(g)
        count = sum(d - 1 for d in dims)
        if repeats and g.whole_cluster:
            transfers = g.n * (2 if g.topology.num_nodes > 1 else 1)
        else:
            transfers = g.n * sum(dims)
        return phases * transfers, phases * count if steps is None else steps
    return size


def _nvls_tree(g: Group) -> tuple[int, int]:
    topo, K = g.topology, g.chunks
    nodes = topo.num_nodes if isinstance(topo, GpuCluster) else 1
    return g.n * (4 * K + 2 * _log2(nodes) + 8), K + 2 * _log2(nodes) + 3


def _collnet(chain: bool):
    def size(g: Group) -> tuple[int, int]:
        topo = g.topology
        gpus = topo.gpus_per_node if isinstance(topo, GpuCluster) else g.n
        extra = 2 if isinstance(topo, GpuCluster) and topo.num_sus > 1 else 0
        return g.n * (2 * gpus + 1), (2 * gpus if chain else 4) + extra
    return size


def _bidirectional_ring_all_to_all(g: Group) -> tuple[int, int]:
    n = g.n
    half, cw_max = n // 2, (n - 1) // 2
    return 2 * n * (min(half, cw_max) + (half if n % 2 == 0 else 0)), half


def _multipath(per_rank: bool):
    """At most one route per link leaving the source (two per torus dimension)."""
    def size(g: Group) -> tuple[int, int]:
        dims = len(getattr(g.topology, "dims", ())) or 1
        paths = 2 * dims
        return (paths * g.n if per_rank else paths), 1
    return size


#: (collective, algorithm) -> footprint, for every algorithm registered without one.
FOOTPRINTS = {
    ("all_gather", "multi_axis"): _mesh(True, 1),
    ("reduce_scatter", "multi_axis"): _mesh(True, 1),
    ("all_reduce", "multi_axis"): _mesh(True, 2),
    ("all_gather", "sequential_axes"): _mesh(False, 1),
    ("reduce_scatter", "sequential_axes"): _mesh(False, 1),
    ("all_reduce", "sequential_axes"): _mesh(False, 2),
    ("all_gather", "pat"): lambda g: (g.n * (g.n - 1), _log2(g.n)),
    ("reduce_scatter", "pat"): lambda g: (g.n * (g.n - 1), _log2(g.n)),
    ("all_gather", "nvls"): lambda g: (g.n + g.n * g.n, 2),
    ("reduce_scatter", "sharp"): lambda g: (2 * g.n, 2),
    ("reduce_scatter", "nvls"): lambda g: (2 * g.n, 2),
    ("all_reduce", "sharp"): lambda g: (2 * g.n, 2),
    ("all_reduce", "nvls"): lambda g: (3 * g.n + g.n * g.n, 4),
    ("all_gather", "hierarchical"): _tiers(1),
    ("reduce_scatter", "hierarchical"): _tiers(1),
    ("all_reduce", "hierarchical"): _tiers(2),
    ("all_to_all", "hierarchical"): _tiers(1, 2, repeats=False),
    ("all_reduce", "nvls_tree"): _nvls_tree,
    ("all_reduce", "collnet_direct"): _collnet(False),
    ("all_reduce", "collnet_chain"): _collnet(True),
    ("all_to_all", "ring"): _neighbour(lambda g: (g.n * (g.n - 1), g.n - 1)),
    ("all_to_all", "chain"): lambda g: (g.n * (g.n - 1), g.n - 1),
    ("all_to_all", "bidirectional_ring"): _neighbour(_bidirectional_ring_all_to_all),
    ("broadcast", "chain"): _neighbour(lambda g: (g.chunks * (g.n - 1), g.chunks + g.n - 2 if g.n > 1 else 0)),
    ("reduce", "chain"): _neighbour(lambda g: (g.chunks * (g.n - 1), g.chunks + g.n - 2 if g.n > 1 else 0)),
    ("broadcast", "direct"): lambda g: (g.n - 1, 1),
    ("reduce", "direct"): lambda g: (g.n - 1, 1),
    ("broadcast", "multicast"): lambda g: (g.n + 1, 2),
    ("reduce", "sharp"): lambda g: (g.n + 1, 2),
    ("send", "direct"): lambda g: (1, 1),
    ("send", "multipath"): _multipath(False),
    ("gather", "direct"): lambda g: (g.n - 1, 1),
    ("gather", "multipath"): _multipath(True),
}

#: Footprints that bound the transfers rather than count them exactly.
BOUNDS = frozenset(FOOTPRINTS)


def install() -> None:
    """Give every registered algorithm without a footprint its entry from :data:`FOOTPRINTS`."""
    for coll, table in registry._REGISTRY.items():
        for name, alg in list(table.items()):
            key = (str(coll), name)
            if alg.size is None and key in FOOTPRINTS:
                table[name] = dataclasses.replace(alg, size=FOOTPRINTS[key])


def missing() -> list[str]:
    """Registered algorithms that still have no footprint (the tests want none)."""
    return [f"{a.collective} {a.name}" for a in registry.all_entries() if a.size is None]

