"""TPU presets: slices and pods with their generation's wraparound rule, and TPU
systems with hosts, PCIe and DCN.

Introduced in the chapters *TPU cluster topology* and *TPU clusters: hosts, PCIe and DCN*.
"""

from __future__ import annotations

import numpy as np

from .. import hardware as hw
from ..errors import CollectivesError
from ..checks import check_num_ranks
from .. import checks
from .core import LinkBuilder, Links, Routes, Topology, mesh_axis_groups, resolve_mesh_axes
from .torus import Torus, fmt

# ---------------------------------------------------------------------------
# TPU presets
# ---------------------------------------------------------------------------

def tpu_wrap(gen: hw.TpuGeneration, shape: tuple[int, ...]) -> tuple[bool, ...]:
    if gen.wrap_rule == "axis-16":
        return tuple(d == 16 for d in shape)
    full_cube = all(d % 4 == 0 for d in shape)
    return (full_cube,) * len(shape)


def check_tpu_shape(gen: hw.TpuGeneration, shape) -> tuple[int, ...]:
    label = f"tpu-{gen.name}"
    shape = checks.dims(shape, f"{label} shape")
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
        shape = check_tpu_shape(gen, shape)
        self.generation = gen
        wrap = tpu_wrap(gen, shape) if wraparound is None else wraparound
        super().__init__(
            shape, wrap,
            bandwidth=float(gen.ici_bandwidth) if bandwidth is None else bandwidth,
            latency=float(gen.ici_latency) if latency is None else latency,
            link_class="ici",
        )
        self._custom = bandwidth is not None or latency is not None or wraparound is not None

    def _identity(self) -> tuple:
        return (self.generation.name,) + super()._identity()

    def __repr__(self) -> str:
        shape = "x".join(map(str, self.dims))
        if self._custom:
            return (f"tpu_slice({self.generation.name!r}, {shape!r}, "
                    f"bandwidth={fmt(self.bandwidth)}, latency={fmt(self.latency)}, "
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
    if not isinstance(text, str):
        return checks.dims(text, "shape")
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
        self.num_ranks = checks.topology_ranks(self.chips_per_slice * self.num_slices, "this TPU system")
        self.hosts_per_slice = self.slice.num_hosts
        self.num_hosts = self.hosts_per_slice * self.num_slices
        self.num_vertices = self.num_ranks + self.num_hosts + 1
        self.pcie_bandwidth = float(gen.pcie_bandwidth) if pcie_bandwidth is None else checks.bandwidth(pcie_bandwidth, "pcie_bandwidth")
        chips_per_host = int(np.prod(self.slice.host_shape))
        per_chip_dcn = float(gen.dcn_bandwidth) if dcn_bandwidth is None else checks.bandwidth(dcn_bandwidth, "dcn_bandwidth")
        self.dcn_bandwidth_per_host = per_chip_dcn * chips_per_host
        self.mesh_shape = (self.num_slices,) + self.slice.dims
        self.axis_names = ("slice",) + self.slice.axis_names
        self._host_of_chip = np.concatenate([
            self.slice.host_of(np.arange(self.chips_per_slice)) + s * self.hosts_per_slice
            for s in range(self.num_slices)
        ])

    def _identity(self) -> tuple:
        return (self.slice, self.num_slices, self.pcie_bandwidth,
                self.dcn_bandwidth_per_host)

    def __repr__(self) -> str:
        shape = "x".join(map(str, self.slice.dims))
        return f"TpuSystem({self.slice.generation.name!r}, {shape!r}, num_slices={self.num_slices})"

    @property
    def max_hops(self) -> int:
        """Across the slice's ICI, then chip -> PCIe -> host -> DCN -> host -> PCIe -> chip."""
        return self.slice.max_hops + 4

    def axis_groups(self, axes) -> np.ndarray:
        """Chips grouped for a collective over ``axes`` of the mesh (slice, x, y[, z]):
        ``slice`` alone groups each chip with its twins in the other slices."""
        return mesh_axis_groups(self.mesh_shape, self.resolve_axes(axes))

    def resolve_axes(self, axes) -> list[int]:
        return resolve_mesh_axes(self, axes, self.axis_names, self.mesh_shape)

    @property
    def dcn_node(self) -> int:
        return self.num_vertices - 1

    def host_node(self, host: int) -> int:
        return self.num_ranks + int(host)

    def host_of(self, chip: int) -> int:
        return int(self._host_of_chip[chip])

    def host_chips(self, host: int) -> np.ndarray:
        """The chips of host ``host`` (they share its PCIe side and its DCN port)."""
        return np.nonzero(self._host_of_chip == int(host))[0]

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
        b = LinkBuilder()
        ici = self.slice.links
        for s in range(self.num_slices):
            off = s * self.chips_per_slice
            b.add(ici.src + off, ici.dst + off, ici.bandwidth, ici.latency, "ici")
        chips = np.arange(self.num_ranks)
        hosts = self.num_ranks + self._host_of_chip
        pcie_lat, dcn_lat = float(hw.TPU_PCIE_LATENCY), float(hw.DCN_LATENCY)
        self._pcie_up = b.add(chips, hosts, self.pcie_bandwidth, pcie_lat, "pcie")
        self._pcie_down = b.add(hosts, chips, self.pcie_bandwidth, pcie_lat, "pcie")
        host_nodes = self.num_ranks + np.arange(self.num_hosts)
        self._dcn_up = b.add(host_nodes, np.full(self.num_hosts, self.dcn_node),
                             self.dcn_bandwidth_per_host, dcn_lat, "dcn")
        self._dcn_down = b.add(np.full(self.num_hosts, self.dcn_node), host_nodes,
                               self.dcn_bandwidth_per_host, dcn_lat, "dcn")
        return b.build()

    def routes(self, src, dst) -> Routes:
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        _ = self.links  # builds the link id tables
        n, cps = self.num_ranks, self.chips_per_slice
        if len(src) and (src.max() >= self.num_vertices or dst.max() >= self.num_vertices
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


