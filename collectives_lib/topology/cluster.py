"""GPU clusters: NVLink nodes on a rail-optimised InfiniBand fat tree.

Introduced in the chapter *NVIDIA GPU cluster topology*.
"""

from __future__ import annotations

import numpy as np

from .. import hardware as hw
from ..errors import CollectivesError
from ..checks import check_num_ranks
from .. import checks
from .core import LinkBuilder, Links, Routes, Topology, positive

#: Scale-out fabrics a GPU cluster may have.
FABRICS = ("infiniband", "roce", "gib")

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
    Named participants: ``"nvswitch<m>"`` (node m's NVSwitch fabric),
    ``"multicast<m>"`` (its NVLS multicast group, the same vertex),
    ``"leaf<su>.<rail>"`` (a leaf switch) and ``"spine"``.

    A **three-level** fat tree (leaf, spine, core): ``sus_per_pod`` Scalable Units
    share one spine (a *pod*, modelled like the two-level spine: one non-blocking
    switch with an aggregate link per leaf), and the pods' spines join one core
    switch. A spine's uplink to the core carries what its leaves' uplinks can,
    divided by ``core_oversubscription`` (``oversubscription`` is the leaves'; 1 at
    both levels is a full fat tree). Traffic between pods climbs to the core:
    GPU -> leaf -> spine -> core -> spine -> leaf -> GPU. Without ``sus_per_pod``
    (or with one pod) the fabric is the two-level one above. Named participants
    add ``"spine<p>"`` (pod p's spine) and ``"core"``.

    The machine's own figures can differ from the preset's: ``gpus_per_node``
    (fewer GPUs per node, down to one; on a rack preset the GPUs of one NVLink
    partition, such as 8 for two trays of an NVL72 rack), ``nics_per_node`` NICs
    of ``nic_rate`` bytes/s each per node (default one per GPU at the preset's
    rate; a GPU's NIC link carries its share, ``nics * nic_rate / gpus``, and
    there are ``min(nics, gpus)`` rails) and ``fabric`` (``"infiniband"`` or
    ``"roce"``: NCCL drives both through the same IB verbs transport, so only
    SHARP, which needs InfiniBand, depends on it; ``"gib"`` is RoCE through
    Google's gIB network plugin, whose latency NCCL's tuner adds to every network
    step: :data:`collectives_lib.nccl.measured.PLUGIN_LATENCY`).

    ``sharp=True`` makes the InfiniBand switches reduce in the network (SHARP, which
    NCCL drives through its CollNet algorithms): the leaf of a rail sums what the
    nodes of its Scalable Unit send it, the spine what the leaves send it. Like
    the links, the switches' adders are ideal (no extra latency, link speed).
    """

    def __init__(self, system: str = "dgx-h100", num_nodes: int = 1, *,
                 nodes_per_su: int | None = None, oversubscription: float = 1.0,
                 nvlink_bandwidth: float | None = None, nic_bandwidth: float | None = None,
                 nvlink_latency: float | None = None, nic_latency: float | None = None,
                 sharp: bool = False, sus_per_pod: int | None = None,
                 core_oversubscription: float = 1.0, gpus_per_node: int | None = None,
                 nics_per_node: int | None = None, nic_rate: float | None = None,
                 fabric: str | None = None):
        s = hw.gpu_system(system)
        self.system = s
        if not isinstance(sharp, (bool, np.bool_)):
            raise CollectivesError(f"sharp must be True or False, got {sharp!r}")
        self.sharp = bool(sharp)
        self.num_nodes = check_num_ranks(num_nodes, what="number of nodes")
        self.gpus_per_node = (s.gpus_per_node if gpus_per_node is None else
                              check_num_ranks(gpus_per_node, what="GPUs per node"))
        if self.gpus_per_node > s.gpus_per_node:
            raise CollectivesError(f"{s.name} has {s.gpus_per_node} GPUs per node (NVLink domain), "
                                   f"not {self.gpus_per_node}")
        self.nics_per_node = (self.gpus_per_node * s.nics // s.gpus_per_node if nics_per_node is None else
                              check_num_ranks(nics_per_node, what="NICs per node"))
        self.nics_per_node = max(1, self.nics_per_node)
        self.nic_rate = (float(s.nic_bandwidth) if nic_rate is None else
                         checks.bandwidth(nic_rate, "nic_rate (bytes/s of one NIC, one way)"))
        self.fabric = s.fabric if fabric is None else str(fabric).strip().lower()
        if self.fabric not in FABRICS:
            raise CollectivesError(f"fabric must be one of {', '.join(FABRICS)}, got {fabric!r}")
        if self.sharp and self.fabric != "infiniband":
            raise CollectivesError(f"sharp=True is InfiniBand SHARP (in the switches of an InfiniBand "
                                   f"fabric); a {self.fabric} fabric has none")
        self.rails = min(s.rails, self.nics_per_node, self.gpus_per_node)
        self.nodes_per_su = check_num_ranks(nodes_per_su or s.nodes_per_su,
                                            what="nodes per scalable unit")
        self.oversubscription = positive(oversubscription, "oversubscription")
        if self.oversubscription < 1:
            raise CollectivesError(
                f"oversubscription must be >= 1 (1 is a full fat tree), got {oversubscription}"
            )
        self.nvlink_bandwidth = float(s.nvlink_bandwidth) if nvlink_bandwidth is None else checks.bandwidth(nvlink_bandwidth, "nvlink_bandwidth")
        share = self.nics_per_node * self.nic_rate / self.gpus_per_node      # a GPU's share of its node's NICs
        self.nic_bandwidth = share if nic_bandwidth is None else checks.bandwidth(nic_bandwidth, "nic_bandwidth")
        self.nvlink_latency = float(s.nvlink_latency) if nvlink_latency is None else checks.latency(nvlink_latency, "nvlink_latency")
        self.nic_latency = float(s.nic_latency) if nic_latency is None else checks.latency(nic_latency, "nic_latency")
        self.reduce_flops = None if s.nvswitch_reduce_flops is None else float(s.nvswitch_reduce_flops)
        m, g = self.num_nodes, self.gpus_per_node
        self.num_ranks = checks.topology_ranks(m * g, f"a cluster of {m:,} nodes of {g} GPUs")
        self.num_sus = -(-m // self.nodes_per_su)
        self.num_leaves = self.num_sus * self.rails
        self.sus_per_pod = (self.num_sus if sus_per_pod is None else
                            check_num_ranks(sus_per_pod, what="Scalable Units per pod"))
        self.num_pods = -(-self.num_sus // self.sus_per_pod)
        self.core_oversubscription = positive(core_oversubscription, "core_oversubscription")
        if self.core_oversubscription < 1:
            raise CollectivesError(f"core_oversubscription must be >= 1 (1 is a full fat tree), "
                                   f"got {core_oversubscription}")
        if self.num_pods > 1 and self.sharp:
            raise CollectivesError("sharp=True is modelled on a two-level fabric (one spine); "
                                   f"{self.num_pods} pods need a core level: leave out sharp "
                                   f"or sus_per_pod")
        # vertices: GPUs, NVSwitches, leaves, one spine per pod, and the core (pods > 1)
        self.num_vertices = (self.num_ranks + m + self.num_leaves + self.num_pods
                             + (1 if self.num_pods > 1 else 0))
        self.mesh_shape = (m, g)
        self.axis_names = ("node", "gpu")
        self._custom = any(v is not None for v in (nodes_per_su, nvlink_bandwidth, nic_bandwidth,
                                                   nvlink_latency, nic_latency, gpus_per_node,
                                                   nics_per_node, nic_rate)) or oversubscription != 1
        self._custom = self._custom or self.fabric != s.fabric
        self._custom = self._custom or self.num_pods > 1

    def _identity(self) -> tuple:
        return (self.system.name, self.num_nodes, self.nodes_per_su, self.oversubscription,
                self.nvlink_bandwidth, self.nic_bandwidth, self.nvlink_latency, self.nic_latency,
                self.sharp, self.num_pods, self.sus_per_pod if self.num_pods > 1 else None,
                self.core_oversubscription if self.num_pods > 1 else 1.0, self.gpus_per_node,
                self.nics_per_node, self.nic_rate, self.fabric)

    @property
    def gpu_system(self):
        """The cluster's GPU system preset (as :attr:`system`)."""
        return self.system

    def __repr__(self) -> str:
        extra = ""
        if self.oversubscription != 1:
            extra += f", oversubscription={self.oversubscription:g}"
        if self._custom and self.nodes_per_su != self.system.nodes_per_su:
            extra += f", nodes_per_su={self.nodes_per_su}"
        if self.gpus_per_node != self.system.gpus_per_node:
            extra += f", gpus_per_node={self.gpus_per_node}"
        if (self.nics_per_node != self.gpus_per_node * self.system.nics // self.system.gpus_per_node
                or self.nic_rate != float(self.system.nic_bandwidth)):
            extra += f", nics_per_node={self.nics_per_node}, nic_rate={self.nic_rate:g}"
        if self.fabric != self.system.fabric:
            extra += f", fabric={self.fabric!r}"
        if self.sharp:
            extra += ", sharp=True"
        if self.num_pods > 1:
            extra += f", sus_per_pod={self.sus_per_pod}"
            if self.core_oversubscription != 1:
                extra += f", core_oversubscription={self.core_oversubscription:g}"
        return f"GpuCluster({self.system.name!r}, num_nodes={self.num_nodes}{extra})"

    # node ids
    def nvswitch_node(self, node: int) -> int:
        return self.num_ranks + int(node)

    def leaf_node(self, su: int, rail: int) -> int:
        return self.num_ranks + self.num_nodes + int(su) * self.rails + int(rail)

    @property
    def spine_node(self) -> int:
        """The spine (of pod 0, in a three-level fabric)."""
        return self.pod_spine_node(0)

    def pod_spine_node(self, pod: int) -> int:
        return self.num_ranks + self.num_nodes + self.num_leaves + int(pod)

    @property
    def core_node(self) -> int:
        if self.num_pods == 1:
            raise CollectivesError(f"{self!r} has two levels (one spine) and no core")
        return self.num_vertices - 1

    def node_label(self, node: int) -> str:
        n, m = self.num_ranks, self.num_nodes
        if node < n:
            nd, gpu = divmod(node, self.gpus_per_node)
            return f"node {nd} GPU {gpu}"
        if node < n + m:
            return f"node {node - n} NVSwitch"
        if node < n + m + self.num_leaves:
            su, rail = divmod(node - n - m, self.rails)
            return f"SU {su} leaf {rail}"
        if self.num_pods == 1:
            return "spine"
        pod = node - n - m - self.num_leaves
        return f"pod {pod} spine" if pod < self.num_pods else "core"

    def agent_node(self, name: str) -> int:
        if name == "spine" and self.num_pods == 1:
            return self.spine_node
        if self.num_pods > 1:
            if name == "core":
                return self.core_node
            if name.startswith("spine") and name[5:].isdigit() and int(name[5:]) < self.num_pods:
                return self.pod_spine_node(int(name[5:]))
        if name in ("switch", "nvswitch", "multicast") and self.num_nodes == 1:
            return self.nvswitch_node(0)
        # "multicast<m>": node m's NVLS multicast group, a second buffer in its NVSwitch
        for prefix in ("nvswitch", "multicast"):
            if name.startswith(prefix):
                try:
                    k = int(name[len(prefix):])
                except ValueError:
                    k = -1
                if 0 <= k < self.num_nodes:
                    return self.nvswitch_node(k)
        if name.startswith("leaf"):
            su, _, rail = name[4:].partition(".")
            if su.isdigit() and rail.isdigit() and int(su) < self.num_sus and int(rail) < self.rails:
                return self.leaf_node(int(su), int(rail))
        return super().agent_node(name)

    def reduce_rate(self, node: int) -> float | None:
        if self.num_ranks <= node < self.num_ranks + self.num_nodes:
            return self.reduce_flops
        return None

    def agent_latency(self, node: int) -> float:
        """Fixed cost of entering or leaving a node's NVSwitch as a participant (NVLS)."""
        if self.num_ranks <= node < self.num_ranks + self.num_nodes and self.system.nvls_latency:
            return float(self.system.nvls_latency) / 2
        return 0.0

    def _build_links(self) -> Links:
        n, m, g = self.num_ranks, self.num_nodes, self.gpus_per_node
        gpus = np.arange(n)
        node_of = gpus // g
        rail_of = (gpus % g) % self.rails
        su_of = node_of // self.nodes_per_su
        nvsw = n + node_of
        leaf = n + m + su_of * self.rails + rail_of
        b = LinkBuilder()
        self._nvl_up = b.add(gpus, nvsw, self.nvlink_bandwidth, self.nvlink_latency, "nvlink")
        self._nvl_down = b.add(nvsw, gpus, self.nvlink_bandwidth, self.nvlink_latency, "nvlink")
        self._nic_up = b.add(gpus, leaf, self.nic_bandwidth, self.nic_latency, "ib")
        self._nic_down = b.add(leaf, gpus, self.nic_bandwidth, self.nic_latency, "ib")
        # leaf uplink capacity: what its NICs can inject, divided by oversubscription
        per_leaf = np.bincount(leaf - n - m, minlength=self.num_leaves)
        cap = per_leaf * self.nic_bandwidth / self.oversubscription
        cap = np.where(cap > 0, cap, self.nic_bandwidth)
        leaves = n + m + np.arange(self.num_leaves)
        self._pod_of_leaf = np.arange(self.num_leaves) // self.rails // self.sus_per_pod
        spine = n + m + self.num_leaves + self._pod_of_leaf
        self._leaf_up = b.add(leaves, spine, cap, self.nic_latency, "ib")
        self._leaf_down = b.add(spine, leaves, cap, self.nic_latency, "ib")
        if self.num_pods > 1:
            # a spine's uplink: what its leaves' uplinks carry, over the core's oversubscription
            core_cap = np.bincount(self._pod_of_leaf, weights=cap, minlength=self.num_pods)
            core_cap = core_cap / self.core_oversubscription
            spines = n + m + self.num_leaves + np.arange(self.num_pods)
            core = np.full(self.num_pods, self.core_node)
            self._spine_up = b.add(spines, core, core_cap, self.nic_latency, "ib")
            self._spine_down = b.add(core, spines, core_cap, self.nic_latency, "ib")
        return b.build()

    def routes(self, src, dst) -> Routes:
        """NVLink inside a node; across nodes GPU -> its leaf -> (spine ->) leaf -> GPU.

        Cross-node traffic between different rails or Scalable Units climbs to
        the spine. Switch agents (``nvswitch<m>``) are reached over NVLink.
        """
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        _ = self.links  # builds the link id tables
        n, m, g = self.num_ranks, self.num_nodes, self.gpus_per_node
        flows = np.arange(len(src), dtype=np.int64)
        if len(src) and (src.max() >= self.num_vertices or dst.max() >= self.num_vertices):
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
            if self.num_pods > 1:
                pod_s = self._pod_of_leaf[np.where(via_spine, leaf_s, 0)]
                pod_d = self._pod_of_leaf[np.where(via_spine, leaf_d, 0)]
                via_core = via_spine & (pod_s != pod_d)
                add(via_core, self._spine_up[pod_s])
                add(via_core, self._spine_down[pod_d])
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
        half = self.num_nodes // 2
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
        names = checks.axes(axes)
        if names is None:
            return [0, 1]
        out = []
        aliases = {"node": 0, "x": 0, "nodes": 0, "gpu": 1, "y": 1, "gpus": 1, "0": 0, "1": 1}
        for a in names:
            key = str(a).strip().lower()
            if key not in aliases:
                raise CollectivesError(
                    f"unknown axis {a!r}; {self!r} has axes node (x, {self.num_nodes} nodes) "
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


