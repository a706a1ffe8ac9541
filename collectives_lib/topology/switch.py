"""One switch joining every endpoint: an NVSwitch node, a leaf switch, a crossbar.

Introduced in the chapter *NVIDIA GPU cluster topology*.
"""

from __future__ import annotations

import numpy as np

from .. import hardware as hw
from ..errors import CollectivesError
from ..checks import check_num_ranks
from .. import checks
from .core import LINK_CLASSES, LinkBuilder, Links, Routes, Topology, fmt, positive

# ---------------------------------------------------------------------------
# One switch
# ---------------------------------------------------------------------------

class Switch(Topology):
    """``n`` endpoints on one non-blocking switch (an NVSwitch node, for example).

    Each endpoint has an up-link into the switch and a down-link out of it,
    each of ``bandwidth`` bytes/s one way. A switch only forwards unless
    ``in_network=True``: then it can also add the data passing through it and
    multicast it (NVLink SHARP, InfiniBand SHARP), and ``reduce_flops`` is its
    reduction throughput (None: as fast as the links). ``agent_latency`` is
    what entering or leaving the switch as a participant costs (NVLS).
    """

    def __init__(self, n: int, *, bandwidth, latency: float = 0.0,
                 link_class: str = "link", in_network: bool = False,
                 reduce_flops: float | None = None, name: str | None = None,
                 agent_latency: float = 0.0):
        self.num_ranks = checks.topology_ranks(check_num_ranks(n), "a switch")
        self.num_vertices = self.num_ranks + 1
        self.bandwidth = checks.bandwidth(bandwidth, "bandwidth (bytes/s, one way)")
        self.latency = checks.latency(latency, "latency (s per hop)")
        if link_class not in LINK_CLASSES:
            raise CollectivesError(f"link class must be one of {LINK_CLASSES}, got {link_class!r}")
        self.link_class = link_class
        if not isinstance(in_network, (bool, np.bool_)):
            raise CollectivesError(f"in_network must be True or False, got {in_network!r}")
        self.in_network = bool(in_network)
        self.reduce_flops = None if reduce_flops is None else positive(reduce_flops, "reduce_flops")
        self.agent_latency_ = checks.latency(agent_latency, "agent_latency (s)")
        self.name = name
        self.mesh_shape = (self.num_ranks,)
        self.axis_names = ("x",)

    def _identity(self) -> tuple:
        return (self.num_ranks, self.bandwidth, self.latency, self.link_class, self.in_network,
                self.reduce_flops, self.name, self.agent_latency_)

    @property
    def max_hops(self) -> int:
        """Up to the switch and down again."""
        return 2

    @property
    def gpu_system(self):
        """The GPU system preset of an ``nvswitch_node``, else None."""
        return hw.gpu_system(self.name) if self.name in hw.GPU_SYSTEMS else None

    def __repr__(self) -> str:
        if self.name in hw.GPU_SYSTEMS:
            full = hw.gpu_system(self.name).gpus_per_node
            gpus = "" if self.num_ranks == full else f", gpus={self.num_ranks}"
            return f"nvswitch_node({self.name!r}{gpus})"
        if self.name:
            return f"Switch({self.num_ranks}, name={self.name!r})"
        extra = ", in_network=True" if self.in_network else ""
        return (f"Switch({self.num_ranks}, bandwidth={fmt(self.bandwidth)}, "
                f"latency={fmt(self.latency)}{extra})")

    @property
    def switch_node(self) -> int:
        return self.num_ranks

    def node_label(self, node: int) -> str:
        if node == self.num_ranks:
            return "switch"
        return f"GPU {node}" if self.link_class == "nvlink" else f"rank {node}"

    def agent_node(self, name: str) -> int:
        # "multicast": the multicast group of NVLS, a second buffer in the same switch
        if name in ("switch", "nvswitch", "nvswitch0", "multicast", "multicast0"):
            return self.num_ranks
        return super().agent_node(name)

    def reduce_rate(self, node: int) -> float | None:
        return self.reduce_flops if node == self.num_ranks else None

    def agent_latency(self, node: int) -> float:
        """Fixed cost of entering or leaving the switch as a participant (SHARP, multicast)."""
        return self.agent_latency_ if node == self.num_ranks else 0.0

    def _build_links(self) -> Links:
        n = self.num_ranks
        b = LinkBuilder()
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

    def disjoint_paths(self, src: int, dst: int) -> list[list[int]]:
        """Between two endpoints the one route there is, up to the switch and down
        (what the search finds, without searching: one link each way per endpoint)."""
        src, dst, n = int(src), int(dst), self.num_ranks
        if src == dst or not (0 <= src < n and 0 <= dst < n):
            return super().disjoint_paths(src, dst)
        return [[src, n, dst]]

    def axis_groups(self, axes) -> np.ndarray:
        resolve_switch_axes(axes)
        return np.arange(self.num_ranks)[None, :]

    def resolve_axes(self, axes) -> list[int]:
        resolve_switch_axes(axes)
        return [0]


def resolve_switch_axes(axes) -> None:
    names = checks.axes(axes)
    if names is None:
        return
    if [str(a).lower() for a in names] not in (["x"], ["0"]):
        raise CollectivesError(
            f"a single switch has one axis, x; got axes {axes!r}"
        )


def nvswitch_node(system: str = "dgx-h100", *, gpus: int | None = None,
                  bandwidth: float | None = None, latency: float | None = None) -> Switch:
    """One NVLink/NVSwitch scale-up domain: ``"dgx-h100"`` (8 GPUs at 450 GB/s
    each way), ``"dgx-b200"`` or ``"gb200-nvl72"`` (72 GPUs); ``gpus`` uses only
    some of its GPUs (a communicator of 4 of a node's 8)."""
    s = hw.gpu_system(system)
    n = s.gpus_per_node if gpus is None else check_num_ranks(gpus, what="number of GPUs")
    if n > s.gpus_per_node:
        raise CollectivesError(f"{s.name} has {s.gpus_per_node} GPUs per node, not {n}")
    return Switch(
        n,
        bandwidth=float(s.nvlink_bandwidth) if bandwidth is None else bandwidth,
        latency=float(s.nvlink_latency) if latency is None else latency,
        link_class="nvlink",
        in_network=s.nvls,
        reduce_flops=None if s.nvswitch_reduce_flops is None else float(s.nvswitch_reduce_flops),
        name=s.name,
        agent_latency=0.0 if s.nvls_latency is None else float(s.nvls_latency) / 2,
    )


