"""A leaf-spine network with explicit spine switches, routed by flow hashing or spraying.

:class:`GpuCluster` models its spine as one non-blocking switch: every flow finds
its full bandwidth above the leaves, which is what a fat tree with ideal routing
gives. A real two-level Clos has several spine switches, and an Ethernet or
InfiniBand switch with static ECMP (equal-cost multi-path) routing sends each
flow over one of them, chosen by a hash of its addresses, so that the packets of
a flow stay in order. Two large flows hashed onto the same uplink share it and
each runs at half speed, although other uplinks sit idle. :class:`LeafSpine`
keeps the spines apart so that the simulator can show this: ``routing="ecmp"``
hashes, ``routing="spray"`` splits every flow evenly over all spines (packet
spraying, or ideal adaptive routing).

Introduced in the chapter *Fabrics and scale-out realities*.
"""

from __future__ import annotations

import hashlib

import numpy as np

from .. import checks
from ..checks import check_num_ranks
from ..errors import CollectivesError
from .core import LinkBuilder, Links, Routes, Topology, fmt

ROUTINGS = ("ecmp", "spray")


class LeafSpine(Topology):
    """``leaves`` leaf switches of ``hosts_per_leaf`` endpoints each, every leaf joined to
    each of ``spines`` spine switches by one link each way.

    Endpoint links carry ``bandwidth`` bytes/s one way, leaf-spine links
    ``uplink_bandwidth`` (default the same): with ``spines * uplink_bandwidth >=
    hosts_per_leaf * bandwidth`` the network has full bisection. Every link has
    ``latency`` seconds. Ranks are numbered leaf by leaf; named participants are
    ``"leaf<l>"`` and ``"spine<s>"``.

    A flow between two leaves crosses host -> leaf -> spine -> leaf -> host.
    ``routing="ecmp"`` picks its spine by a hash (BLAKE2b) of (source, destination,
    ``seed``), as a switch hashes a packet's header fields (``seed`` stands for
    the header fields that are not the ranks, such as the ports a connection got);
    ``routing="spray"`` splits it evenly over every spine.
    """

    def __init__(self, hosts_per_leaf: int, spines: int, *, leaves: int = 2, bandwidth,
                 uplink_bandwidth=None, latency: float = 0.0, routing: str = "ecmp", seed: int = 0):
        self.hosts_per_leaf = check_num_ranks(hosts_per_leaf, what="hosts per leaf")
        self.spines = check_num_ranks(spines, what="number of spine switches")
        self.leaves = check_num_ranks(leaves, what="number of leaf switches")
        self.bandwidth = checks.bandwidth(bandwidth, "bandwidth (bytes/s of an endpoint link, one way)")
        self.uplink_bandwidth = (self.bandwidth if uplink_bandwidth is None else
                                 checks.bandwidth(uplink_bandwidth, "uplink_bandwidth (bytes/s, one way)"))
        self.latency = checks.latency(latency, "latency (s per link)")
        if routing not in ROUTINGS:
            raise CollectivesError(f"routing must be one of {', '.join(ROUTINGS)}, got {routing!r}")
        self.routing = routing
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise CollectivesError(f"seed must be a whole number >= 0, got {seed!r}")
        self.seed = int(seed)
        self.num_ranks = checks.topology_ranks(self.leaves * self.hosts_per_leaf, "this leaf-spine fabric")
        self.num_vertices = self.num_ranks + self.leaves + self.spines
        self.mesh_shape = (self.num_ranks,)
        self.axis_names = ("x",)

    def _identity(self) -> tuple:
        return (self.hosts_per_leaf, self.spines, self.leaves, self.bandwidth, self.uplink_bandwidth,
                self.latency, self.routing, self.seed)

    def __repr__(self) -> str:
        up = "" if self.uplink_bandwidth == self.bandwidth else f", uplink_bandwidth={fmt(self.uplink_bandwidth)}"
        return (f"LeafSpine({self.hosts_per_leaf}, {self.spines}, leaves={self.leaves}, "
                f"bandwidth={fmt(self.bandwidth)}{up}, latency={fmt(self.latency)}, "
                f"routing={self.routing!r}, seed={self.seed})")

    @property
    def max_hops(self) -> int:
        return 4

    def leaf_of(self, rank) -> np.ndarray:
        """The leaf each rank hangs off."""
        return np.asarray(rank) // self.hosts_per_leaf

    def leaf_node(self, leaf: int) -> int:
        return self.num_ranks + int(leaf)

    def spine_node(self, spine: int) -> int:
        return self.num_ranks + self.leaves + int(spine)

    def node_label(self, node: int) -> str:
        if node < self.num_ranks:
            return f"rank {node}"
        if node < self.num_ranks + self.leaves:
            return f"leaf{node - self.num_ranks}"
        return f"spine{node - self.num_ranks - self.leaves}"

    def agent_node(self, name: str) -> int:
        for prefix, count, node in (("leaf", self.leaves, self.leaf_node),
                                    ("spine", self.spines, self.spine_node)):
            if name.startswith(prefix) and name[len(prefix):].isdigit() and int(name[len(prefix):]) < count:
                return node(int(name[len(prefix):]))
        return super().agent_node(name)

    def spine_of(self, src, dst) -> np.ndarray:
        """The spine ECMP hashes each flow ``src[i] -> dst[i]`` onto (whatever ``routing`` is)."""
        pairs = zip(np.atleast_1d(src).tolist(), np.atleast_1d(dst).tolist())
        def digest(a, b):
            key = np.array([a, b, self.seed], dtype="<i8").tobytes()
            return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "little")
        return np.array([digest(a, b) % self.spines for a, b in pairs], dtype=np.int64)

    def _build_links(self) -> Links:
        n, L, S = self.num_ranks, self.leaves, self.spines
        b = LinkBuilder()
        ranks = np.arange(n)
        b.add(ranks, n + self.leaf_of(ranks), self.bandwidth, self.latency, "link")        # 0 .. n-1 up
        b.add(n + self.leaf_of(ranks), ranks, self.bandwidth, self.latency, "link")        # n .. 2n-1 down
        leaf, spine = np.repeat(np.arange(L), S), np.tile(np.arange(S), L)
        b.add(n + leaf, n + L + spine, self.uplink_bandwidth, self.latency, "link")       # leaf l -> spine s
        b.add(n + L + spine, n + leaf, self.uplink_bandwidth, self.latency, "link")       # spine s -> leaf l
        return b.build()

    def _up(self, leaf, spine):
        return 2 * self.num_ranks + leaf * self.spines + spine

    def _down(self, spine, leaf):
        return 2 * self.num_ranks + self.leaves * self.spines + leaf * self.spines + spine

    def routes(self, src, dst) -> Routes:
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        n = self.num_ranks
        if len(src) and (min(src.min(), dst.min()) < 0 or max(src.max(), dst.max()) >= n):
            raise CollectivesError(f"{self!r} routes between its ranks 0..{n - 1} only")
        sub_flow, sub_weight, inc_sub, inc_link = [], [], [], []
        hashed = self.spine_of(src, dst) if len(src) else np.zeros(0, dtype=np.int64)
        for i, (a, z) in enumerate(zip(src.tolist(), dst.tolist())):
            la, lz = a // self.hosts_per_leaf, z // self.hosts_per_leaf
            if a == z:
                paths, weight = [[]], 1.0
            elif la == lz:
                paths, weight = [[a, n + z]], 1.0
            else:
                spines = range(self.spines) if self.routing == "spray" else [int(hashed[i])]
                paths = [[a, self._up(la, s), self._down(s, lz), n + z] for s in spines]
                weight = 1.0 / len(paths)
            for path in paths:
                s = len(sub_flow)
                sub_flow.append(i)
                sub_weight.append(weight)
                inc_sub += [s] * len(path)
                inc_link += path
        return Routes(np.asarray(sub_flow, dtype=np.int64), np.asarray(sub_weight, dtype=float),
                      np.asarray(inc_sub, dtype=np.int64), np.asarray(inc_link, dtype=np.int64))
