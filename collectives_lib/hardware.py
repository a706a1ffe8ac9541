"""Every hardware figure the book uses, each with its source.

This is the only module that holds hardware numbers. Topology presets, the
simulator's defaults and every chapter read them from here, so a figure is
changed in one place and the book follows.

Bandwidths are bytes per second and **one-way** (per direction) unless a name
says ``bidirectional``; latencies are seconds; compute is FLOP/s (dense).

Where sources disagree we follow the Scaling Book (Austin et al., *How to Scale
Your Model*), the reference most readers check against, and record the disagreement
in ``note``.

Introduced in the chapter *Moving bytes* and used throughout.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from .errors import CollectivesError
from .sources import SOURCES  # noqa: F401  (re-exported: hardware.SOURCES, the sources of the figures)


class Figure(float):
    """One sourced hardware figure: a number (``hw.H100.nvlink_bandwidth * 2`` is a float)
    that keeps its unit, the key of its source in :data:`SOURCES`, and a note.

    >>> f = Figure(45e9, "B/s", "scaling-book")
    >>> f / 1e9, f.source, f.unit
    (45.0, 'scaling-book', 'B/s')
    """

    __slots__ = ("unit", "source", "note")

    def __new__(cls, value: float, unit: str, source: str, note: str = "") -> "Figure":
        if source not in SOURCES:
            raise CollectivesError(f"unknown source key {source!r}")
        self = super().__new__(cls, value)
        object.__setattr__(self, "unit", unit)
        object.__setattr__(self, "source", source)
        object.__setattr__(self, "note", note)
        return self

    def __setattr__(self, name, value):
        raise AttributeError(f"a Figure is read-only ({name})")

    @property
    def value(self) -> float:
        """The number as a plain float."""
        return float(self)

    @property
    def cite(self) -> str:
        """Where the figure comes from, as the references page writes it."""
        title, url = SOURCES[self.source]
        return f"{title}" + (f" ({url})" if url else "")

    def __repr__(self) -> str:
        note = f", {self.note!r}" if self.note else ""
        return f"Figure({float(self)!r}, {self.unit!r}, {self.source!r}{note})"

    def __reduce__(self):
        return (Figure, (float(self), self.unit, self.source, self.note))


def _f(value: float, unit: str, source: str, note: str = "") -> Figure:
    return Figure(value, unit, source, note)


# ---------------------------------------------------------------------------
# TPUs
# ---------------------------------------------------------------------------

ICI_HOP_LATENCY = _f(1e-6, "s", "scaling-book",
                     "about 1 µs per ICI hop (the Scaling Book's worked example)")

#: One way over a TPU host's PCIe link (chip to host, host to chip), per crossing.
TPU_PCIE_LATENCY = _f(1e-6, "s", "estimate",
                      "about 1 µs: a DMA over PCIe to or from host memory costs on the order "
                      "of a microsecond one way (a posted write crosses the root complex in "
                      "a few hundred ns; the DMA engine's setup and completion add as much)")
#: One way between a TPU host and the data-center network, per crossing (a transfer
#: between slices crosses twice: host to network, network to host).
DCN_LATENCY = _f(5e-6, "s", "estimate",
                 "about 10 µs host to host, charged 5 µs each way in and out of the network: "
                 "an RDMA message between two hosts of a data-center network crosses two NICs "
                 "and three to five switches of about 1 µs each, plus the hosts' staging; no "
                 "public figure gives Google's DCN latency between TPU slices")

@dataclass(frozen=True)
class TpuGeneration:
    """A TPU generation: its torus, its pod and its chip."""

    name: str
    torus_dims: int                    # 2 (four neighbours) or 3 (six neighbours)
    pod_shape: tuple[int, ...] | None  # None: the pod is reconfigured from cubes
    pod_chips: int
    host_shape: tuple[int, ...]        # chips served by one CPU host over PCIe
    wrap_rule: str                     # "axis-16" or "cube-4"
    ici_bandwidth: Figure | None       # one-way, per link
    hbm_bandwidth: Figure | None
    hbm_capacity: Figure | None
    peak_flops_bf16: Figure | None
    pcie_bandwidth: Figure | None      # per chip, one-way
    dcn_bandwidth: Figure | None       # per chip egress
    ici_latency: Figure = ICI_HOP_LATENCY
    vmem_bandwidth: Figure | None = None   # VMEM to the matrix units, per chip
    vmem_capacity: Figure | None = None
    notes: str = ""

    def allowed_dims(self) -> str:
        if self.wrap_rule == "axis-16":
            return "each axis one of 1, 2, 4, 8, 16"
        return "each axis 1, 2 or a multiple of 4"


TPU_GENERATIONS: dict[str, TpuGeneration] = {
    "v2": TpuGeneration(
        name="v2", torus_dims=2, pod_shape=(16, 16), pod_chips=256,
        host_shape=(2, 2), wrap_rule="axis-16",
        ici_bandwidth=None, hbm_bandwidth=None, hbm_capacity=None,
        peak_flops_bf16=None, pcie_bandwidth=None, dcn_bandwidth=None,
        notes="listed for its 2D torus only (gcp-arch); no figures used",
    ),
    "v3": TpuGeneration(
        name="v3", torus_dims=2, pod_shape=(32, 32), pod_chips=1024,
        host_shape=(4, 2), wrap_rule="axis-16",
        ici_bandwidth=_f(1e11, "B/s", "scaling-book"),
        hbm_bandwidth=_f(9.0e11, "B/s", "scaling-book"),
        hbm_capacity=_f(32e9, "B", "scaling-book"),
        peak_flops_bf16=_f(1.4e14, "FLOP/s", "scaling-book"),
        pcie_bandwidth=None, dcn_bandwidth=None,
    ),
    "v4": TpuGeneration(
        name="v4", torus_dims=3, pod_shape=(16, 16, 16), pod_chips=4096,
        host_shape=(2, 2, 1), wrap_rule="cube-4",
        ici_bandwidth=_f(4.5e10, "B/s", "scaling-book"),
        hbm_bandwidth=_f(1.2e12, "B/s", "scaling-book"),
        hbm_capacity=_f(32e9, "B", "scaling-book"),
        peak_flops_bf16=_f(2.75e14, "FLOP/s", "scaling-book"),
        pcie_bandwidth=_f(1.6e10, "B/s", "scaling-book",
                          "the February 2025 edition: 16 GB/s each way on TPU v4"),
        dcn_bandwidth=_f(6.25e9, "B/s", "scaling-book"),
    ),
    "v5p": TpuGeneration(
        name="v5p", torus_dims=3, pod_shape=(16, 20, 28), pod_chips=8960,
        host_shape=(2, 2, 1), wrap_rule="cube-4",
        ici_bandwidth=_f(9e10, "B/s", "scaling-book",
                         "Google's page gives 1200 GB/s bidirectional per chip over "
                         "6 links (1e11 one-way); we keep the Scaling Book's 9e10"),
        hbm_bandwidth=_f(2.8e12, "B/s", "scaling-book",
                         "Google's page gives 2765 GB/s"),
        hbm_capacity=_f(96e9, "B", "scaling-book"),
        peak_flops_bf16=_f(4.59e14, "FLOP/s", "scaling-book"),
        pcie_bandwidth=_f(1.5e10, "B/s", "scaling-book",
                          "the February 2025 edition's typical figure per chip"),
        dcn_bandwidth=_f(6.25e9, "B/s", "scaling-book",
                         "Google's page: 50 Gb/s per chip, the same figure"),
        notes="Google schedules single slices up to 16x16x24 (6144 chips); the "
              "pod holds 16x20x28 = 8960 chips",
    ),
    "v5e": TpuGeneration(
        name="v5e", torus_dims=2, pod_shape=(16, 16), pod_chips=256,
        host_shape=(2, 4), wrap_rule="axis-16",
        ici_bandwidth=_f(4.5e10, "B/s", "scaling-book",
                         "Google's page "
                         "gives 400 GB/s bidirectional per chip over 4 ports, "
                         "i.e. 5e10 one-way, which a later Scaling Book revision "
                         "also uses"),
        hbm_bandwidth=_f(8.1e11, "B/s", "scaling-book"),
        hbm_capacity=_f(16e9, "B", "scaling-book", "Google: 16 GB"),
        peak_flops_bf16=_f(1.97e14, "FLOP/s", "scaling-book"),
        pcie_bandwidth=_f(1.5e10, "B/s", "scaling-book",
                          "the February 2025 edition's typical figure per chip; it "
                          "gives 16 GB/s each way for TPU v4 only"),
        dcn_bandwidth=_f(3.125e9, "B/s", "scaling-book",
                         "Google: 2 x 100 Gb/s NICs per 8-chip host"),
        vmem_bandwidth=_f(1.78e13, "B/s", "scaling-book",
                          "'around 22x higher than HBM bandwidth': 22 x 8.1e11, the "
                          "figure of the Scaling Book's worked answer"),
        vmem_capacity=_f(128 * 2**20, "B", "scaling-book", "128 MiB on TPU v5e"),
        notes="one CPU host per 2x4 block of chips (the Scaling Book writes 4x2)",
    ),
    "v6e": TpuGeneration(
        name="v6e", torus_dims=2, pod_shape=(16, 16), pod_chips=256,
        host_shape=(2, 4), wrap_rule="axis-16",
        ici_bandwidth=_f(9e10, "B/s", "scaling-book",
                         "the February 2025 edition's 9e10; Google's page gives 800 GB/s "
                         "bidirectional per chip over 4 links, i.e. 1e11 one-way, which a "
                         "later Scaling Book revision also uses"),
        hbm_bandwidth=_f(1.6e12, "B/s", "scaling-book", "Google's page gives 1638 GB/s"),
        hbm_capacity=_f(32e9, "B", "scaling-book"),
        peak_flops_bf16=_f(9.2e14, "FLOP/s", "scaling-book"),
        pcie_bandwidth=_f(3.2e10, "B/s", "scaling-book",
                          "the February 2025 edition: 32 GB/s on Trillium"),
        dcn_bandwidth=_f(1.25e10, "B/s", "scaling-book"),
    ),
    "7x": TpuGeneration(
        name="7x", torus_dims=3, pod_shape=None, pod_chips=9216,
        host_shape=(2, 2, 1), wrap_rule="cube-4",
        # no edition of the Scaling Book has TPU7x figures: they are Google's page's
        ici_bandwidth=_f(1e11, "B/s", "gcp-tpu7x",
                         "1200 GB/s bidirectional per chip over 6 links: 1e11 one-way per link"),
        hbm_bandwidth=_f(7.38e12, "B/s", "gcp-tpu7x", "7380 GB/s per chip"),
        hbm_capacity=_f(192 * 2**30, "B", "gcp-tpu7x", "192 GiB per chip"),
        peak_flops_bf16=_f(2.307e15, "FLOP/s", "gcp-tpu7x", "2307 TFLOP/s dense BF16 per chip"),
        pcie_bandwidth=_f(1.5e10, "B/s", "estimate",
                          "no source gives a TPU7x PCIe figure; we use the Scaling Book's "
                          "1.5e10 per chip of the earlier generations (v5e, v5p)"),
        dcn_bandwidth=_f(1.25e10, "B/s", "gcp-tpu7x", "100 Gb/s per chip"),
        notes="Ironwood: 9216 chips per pod, built from 4x4x4 cubes joined by "
              "optical circuit switches, so slices take many 3D shapes",
    ),
}
TPU_GENERATIONS["v4p"] = TPU_GENERATIONS["v4"]
TPU_GENERATIONS["tpu7x"] = TPU_GENERATIONS["7x"]
TPU_GENERATIONS["ironwood"] = TPU_GENERATIONS["7x"]

TPU_PRESET_GENERATIONS = ("v4", "v5e", "v5p", "v6e", "7x")


def tpu(generation: str) -> TpuGeneration:
    """Look up a TPU generation by name (``"v5e"``, ``"v5p"``, ``"7x"``...)."""
    key = str(generation).lower().removeprefix("tpu-").removeprefix("tpu")
    key = key.removeprefix("-")
    if key not in TPU_GENERATIONS:
        raise CollectivesError(
            f"unknown TPU generation {generation!r}; known: "
            + ", ".join(sorted(set(g.name for g in TPU_GENERATIONS.values())))
        )
    return TPU_GENERATIONS[key]


# ---------------------------------------------------------------------------
# NVIDIA GPUs and systems
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class NcclProfile:
    """What NCCL's topology detection finds on a system: the inputs of its tuner.

    Figures in NCCL's own units (GB/s, 1e9 bytes per second), as its topology
    code computes them; see :mod:`collectives_lib.nccl` for how they become
    channels and bandwidths.
    """

    sm: int                     # compute capability x 10: 80 Ampere, 90 Hopper, 100 Blackwell
    nvlink_links: int           # NVLink links from one GPU into the NVSwitch fabric
    nvlink_link_bw: Figure      # NCCL's bandwidth per NVLink link
    nic_bw: Figure              # one NIC (Mb/s / 8000)
    gpu_nic_bw: Figure          # the PCIe path between a GPU and its NIC
    cpu: str                    # "intel", "amd" or "arm": NCCL's network overhead and LL caps differ
    tree_pattern: str           # "balanced" (two GPUs share a NIC's PCIe switch) or "tree" (one NIC per GPU)

    @property
    def nvlink_bw(self) -> float:
        """All of a GPU's NVLinks, as NCCL adds them (370.8 GB/s on H100)."""
        return self.nvlink_links * float(self.nvlink_link_bw)

    @property
    def net_bw(self) -> float:
        """The GPU-to-network path: the slower of the NIC and the PCIe path to it."""
        return min(float(self.nic_bw), float(self.gpu_nic_bw))


@dataclass(frozen=True)
class GpuSystem:
    """An NVIDIA scale-up domain (a node or a rack) and its scale-out NICs."""

    name: str
    gpu: str
    gpus_per_node: int
    nvlink_bandwidth: Figure            # per GPU, one way, into the NVSwitch fabric
    nvlink_latency: Figure              # per link (GPU->switch or switch->GPU)
    nic_bandwidth: Figure               # one NIC, one way (nics_per_node of them; default one per GPU)
    nic_latency: Figure                 # per link of the InfiniBand fabric
    rails: int                          # NIC rails (GPU g uses rail g % rails)
    hbm_bandwidth: Figure
    hbm_capacity: Figure
    peak_flops_bf16: Figure
    nvswitch_reduce_flops: Figure | None  # SHARP throughput of the node's switches
    nvswitch_chips: int = 1
    nodes_per_su: int = 32
    nvls_latency: Figure | None = None   # fixed cost of one in-switch (NVLS) operation
    nccl: NcclProfile | None = None      # what NCCL's tuner sees on this system
    notes: str = ""
    nics_per_node: int = 0               # scale-out NICs per node (0: one per GPU)
    tray_gpus: int = 0                   # GPUs per compute tray of a rack-scale NVLink domain (0: not one)
    fabric: str = "infiniband"           # the scale-out fabric of the preset: "infiniband" or "roce"

    @property
    def nics(self) -> int:
        """Scale-out NICs per node (per NVLink domain for a rack), each of ``nic_bandwidth``."""
        return self.nics_per_node or self.gpus_per_node

    @property
    def nvls(self) -> bool:
        """Whether the NVSwitches reduce and multicast in the switch (NVLink SHARP)."""
        return self.nvls_latency is not None

    @property
    def nvlink_bidirectional(self) -> float:
        return 2.0 * float(self.nvlink_bandwidth)

    @property
    def node_injection(self) -> float:
        """One-way scale-out bandwidth of one node (all its NICs)."""
        return self.nics * float(self.nic_bandwidth)


_NVLINK_STEP = _f(0.3e-6, "s", "nccl-tuning",
                  "NCCL's model charges 0.6 µs per ring step over NVLink (LL "
                  "protocol); we split it over the two links GPU->NVSwitch->GPU")
_NVLS_LATENCY = _f(25e-6, "s", "nccl-tuning",
                   "NCCL's model charges 25 µs for an NVLink SHARP (NVLS) operation "
                   "(hwLat NVLS, Simple protocol); we charge half on the way into the "
                   "switch and half on the way out")
_IB_LINK = _f(0.675e-6, "s", "nccl-tuning",
              "NCCL's model charges 2.7 µs per ring step over the network (LL "
              "protocol); we split it over the four links of a path through a "
              "spine, GPU->leaf->spine->leaf->GPU")

_SM80_LINK = _f(20.0, "GB/s", "nccl-topo", "NCCL's figure for one SM80 NVLink (spec: 25 GB/s)")
_SM90_LINK = _f(20.6, "GB/s", "nccl-topo", "NCCL's figure for one SM90 NVLink (spec: 25 GB/s); "
                "18 links give the 370.8 GB/s NCCL prints as NVL[370.8]")
_SM100_LINK = _f(40.1, "GB/s", "nccl-topo", "NCCL's figure for one SM100 NVLink (spec: 50 GB/s)")
_NIC_400G = _f(50.0, "GB/s", "nccl-topo", "400 Gb/s NDR x4: 400000 Mb/s / 8000")
_NIC_200G = _f(25.0, "GB/s", "nccl-topo", "200 Gb/s HDR x4: 200000 Mb/s / 8000")
_PCIE5 = _f(48.0, "GB/s", "nccl-topo", "PCIe Gen5 x16: 16 x 240 / 80; it caps a 400G NIC's path "
            "at 48, the 'maxBw 48.0' of DGX H100 logs")
_PCIE4 = _f(24.0, "GB/s", "nccl-topo", "PCIe Gen4 x16: 16 x 120 / 80")
_PCIE6 = _f(96.0, "GB/s", "nccl-topo", "PCIe Gen6 x16: 16 x 480 / 80 (kvDictPciGen '64.0 GT/s PCIe' 480), the "
            "host interface of ConnectX-8")
_NIC_800G = _f(100.0, "GB/s", "nccl-topo", "800 Gb/s (ConnectX-8): 800000 Mb/s / 8000")
_H800_LINKS = 8
_A800_LINKS = 8

NCCL_PROFILES: dict[str, NcclProfile] = {
    "ampere": NcclProfile(80, 12, _SM80_LINK, _NIC_200G, _PCIE4, "amd", "balanced"),
    "hopper": NcclProfile(90, 18, _SM90_LINK, _NIC_400G, _PCIE5, "intel", "tree"),
    "blackwell": NcclProfile(100, 18, _SM100_LINK, _NIC_400G, _PCIE5, "intel", "tree"),
    "grace-blackwell": NcclProfile(100, 18, _SM100_LINK, _NIC_400G, _PCIE5, "arm", "tree"),
    # A800: Ampere with 8 NVLinks per GPU (NCCL counts 8 x 20 = 160 GB/s); the host CPU of A800
    # boards varies (DGX A100's profile is AMD's), so the A100's is kept
    "ampere-a800": NcclProfile(80, _A800_LINKS, _SM80_LINK, _NIC_200G, _PCIE4, "amd", "balanced"),
    # H800: Hopper with 8 NVLinks per GPU (NCCL counts 8 x 20.6 = 164.8 GB/s)
    "hopper-h800": NcclProfile(90, _H800_LINKS, _SM90_LINK, _NIC_400G, _PCIE5, "intel", "tree"),
    # Blackwell Ultra (SM103) with ConnectX-8 on PCIe Gen6: 800G NICs at 96 GB/s
    "blackwell-ultra": NcclProfile(103, 18, _SM100_LINK, _NIC_800G, _PCIE6, "intel", "tree"),
    "grace-blackwell-ultra": NcclProfile(103, 18, _SM100_LINK, _NIC_800G, _PCIE6, "arm", "tree"),
}

GPU_SYSTEMS: dict[str, GpuSystem] = {
    "dgx-a100": GpuSystem(
        name="dgx-a100", gpu="A100 SXM4", gpus_per_node=8,
        nvlink_bandwidth=_f(300e9, "B/s", "nv-a100-nvlink",
                            "NVLink 3: 12 links of 25 GB/s each way, 600 GB/s bidirectional"),
        nvlink_latency=_NVLINK_STEP,
        nic_bandwidth=_f(25e9, "B/s", "nv-dgx-a100",
                         "one ConnectX-6 200 Gb/s HDR port per GPU"),
        nic_latency=_IB_LINK, rails=8,
        hbm_bandwidth=_f(2.039e12, "B/s", "nv-a100", "A100 80GB SXM"),
        hbm_capacity=_f(80e9, "B", "nv-a100"),
        peak_flops_bf16=_f(312e12, "FLOP/s", "nv-a100", "dense"),
        nvswitch_reduce_flops=None,
        nvswitch_chips=6,
        nvls_latency=None,
        nccl=NCCL_PROFILES["ampere"],
        notes="second-generation NVSwitch: no in-switch reduction (no NVLS)",
    ),
    "dgx-h100": GpuSystem(
        name="dgx-h100", gpu="H100 SXM", gpus_per_node=8,
        nvlink_bandwidth=_f(450e9, "B/s", "nv-h100",
                            "NVLink 4: 900 GB/s bidirectional per GPU"),
        nvlink_latency=_NVLINK_STEP,
        nic_bandwidth=_f(50e9, "B/s", "nv-dgx-h100",
                         "one ConnectX-7 400 Gb/s NDR port per GPU"),
        nic_latency=_IB_LINK, rails=8,
        hbm_bandwidth=_f(3.35e12, "B/s", "nv-h100"),
        hbm_capacity=_f(80e9, "B", "nv-h100"),
        peak_flops_bf16=_f(989e12, "FLOP/s", "nv-h100", "dense"),
        nvswitch_reduce_flops=_f(4 * 400e9, "FLOP/s", "hotchips-nvswitch",
                                 "400 GFLOP/s FP32 per NVSwitch chip, 4 chips per "
                                 "DGX H100 node"),
        nvswitch_chips=4,
        nvls_latency=_NVLS_LATENCY,
        nccl=NCCL_PROFILES["hopper"],
    ),
    "dgx-h200": GpuSystem(
        name="dgx-h200", gpu="H200 SXM", gpus_per_node=8,
        nvlink_bandwidth=_f(450e9, "B/s", "nv-h200", "NVLink 4: 900 GB/s bidirectional per GPU"),
        nvlink_latency=_NVLINK_STEP,
        nic_bandwidth=_f(50e9, "B/s", "nv-dgx-h100",
                         "one ConnectX-7 400 Gb/s NDR port per GPU, as DGX H100"),
        nic_latency=_IB_LINK, rails=8,
        hbm_bandwidth=_f(4.8e12, "B/s", "nv-h200"),
        hbm_capacity=_f(141e9, "B", "nv-h200"),
        peak_flops_bf16=_f(989e12, "FLOP/s", "nv-h200", "dense, as H100"),
        nvswitch_reduce_flops=_f(4 * 400e9, "FLOP/s", "hotchips-nvswitch",
                                 "the DGX H100 NVSwitch system"),
        nvswitch_chips=4,
        nvls_latency=_NVLS_LATENCY,
        nccl=NCCL_PROFILES["hopper"],
        notes="DGX H100 with H200 GPUs: the same NVLink, NICs and NCCL figures",
    ),
    "dgx-b200": GpuSystem(
        name="dgx-b200", gpu="B200", gpus_per_node=8,
        nvlink_bandwidth=_f(900e9, "B/s", "nv-b200",
                            "NVLink 5: 1.8 TB/s bidirectional per GPU"),
        nvlink_latency=_NVLINK_STEP,
        nic_bandwidth=_f(50e9, "B/s", "nv-b200",
                         "8 ConnectX-7 400 Gb/s ports, one per GPU"),
        nic_latency=_IB_LINK, rails=8,
        hbm_bandwidth=_f(8e12, "B/s", "nv-b200"),
        hbm_capacity=_f(180e9, "B", "nv-b200"),
        peak_flops_bf16=_f(2.25e15, "FLOP/s", "nv-b200",
                           "72 PFLOPS FP8 training per 8 GPUs is sparse; dense BF16 "
                           "is a quarter of that per GPU"),
        nvswitch_reduce_flops=None,
        nvswitch_chips=2,
        nvls_latency=_NVLS_LATENCY,
        nccl=NCCL_PROFILES["blackwell"],
    ),
    "gb200-nvl72": GpuSystem(
        name="gb200-nvl72", gpu="GB200 (Blackwell)", gpus_per_node=72,
        nvlink_bandwidth=_f(900e9, "B/s", "nv-gb200",
                            "NVLink 5: 1.8 TB/s bidirectional per GPU, 130 TB/s "
                            "for the rack"),
        nvlink_latency=_NVLINK_STEP,
        nic_bandwidth=_f(50e9, "B/s", "nv-dgx-gb200",
                         "one ConnectX-7 400 Gb/s port per GPU"),
        nic_latency=_IB_LINK, rails=8,
        hbm_bandwidth=_f(8e12, "B/s", "nv-gb200"),
        hbm_capacity=_f(186e9, "B", "nv-gb200"),
        peak_flops_bf16=_f(2.5e15, "FLOP/s", "nv-gb200",
                           "360 PFLOPS sparse BF16 per 72 GPUs, halved for dense"),
        nvswitch_reduce_flops=None,
        nvswitch_chips=18,
        nvls_latency=_NVLS_LATENCY,
        nccl=NCCL_PROFILES["grace-blackwell"],
        nodes_per_su=8,
        tray_gpus=4,
        notes="the rack is the scale-up domain (72 GPUs); we group its NICs into "
              "8 rails as in the 8-GPU designs, an assumption of this model; trays=T makes "
              "the NVLink domain a partition of T trays (4T GPUs)",
    ),
    "gb200-tray": GpuSystem(
        name="gb200-tray", gpu="GB200 (Blackwell)", gpus_per_node=4,
        nvlink_bandwidth=_f(900e9, "B/s", "nv-gb200",
                            "NVLink 5: 1.8 TB/s bidirectional per GPU, through the rack's "
                            "NVLink switch trays"),
        nvlink_latency=_NVLINK_STEP,
        nic_bandwidth=_f(50e9, "B/s", "nv-dgx-gb200",
                         "one ConnectX-7 400 Gb/s port per GPU, four per compute tray"),
        nic_latency=_IB_LINK, rails=4,
        hbm_bandwidth=_f(8e12, "B/s", "nv-gb200"),
        hbm_capacity=_f(186e9, "B", "nv-gb200"),
        peak_flops_bf16=_f(2.5e15, "FLOP/s", "nv-gb200",
                           "360 PFLOPS sparse BF16 per 72 GPUs, halved for dense"),
        nvswitch_reduce_flops=None,
        nvswitch_chips=18,
        nvls_latency=_NVLS_LATENCY,
        nccl=NCCL_PROFILES["grace-blackwell"],
        nodes_per_su=18,
        tray_gpus=4,
        notes="one compute tray of an NVL72 rack (2 Grace CPUs, 4 GPUs) used on its own: "
              "4 GPUs joined by the rack's NVLink switches; trays of one rack are joined "
              "over NVLink too, which this preset leaves out (use gb200-nvl72)",
    ),
    "dgx-h800": GpuSystem(
        name="dgx-h800", gpu="H800 SXM", gpus_per_node=8,
        nvlink_bandwidth=_f(200e9, "B/s", "nv-h800",
                            "NVLink 4 with 8 links per GPU: 400 GB/s bidirectional"),
        nvlink_latency=_NVLINK_STEP,
        nic_bandwidth=_f(50e9, "B/s", "nv-dgx-h100",
                         "one 400 Gb/s NIC per GPU, as DGX H100 (an assumption: H800 systems are "
                         "HGX H100 boards with the H800 part)"),
        nic_latency=_IB_LINK, rails=8,
        hbm_bandwidth=_f(3.35e12, "B/s", "nv-h800", "as H100 SXM5"),
        hbm_capacity=_f(80e9, "B", "nv-h800"),
        peak_flops_bf16=_f(989e12, "FLOP/s", "nv-h800", "dense, as H100"),
        nvswitch_reduce_flops=_f(4 * 400e9, "FLOP/s", "hotchips-nvswitch",
                                 "the DGX H100 NVSwitch system"),
        nvswitch_chips=4,
        nvls_latency=_NVLS_LATENCY,
        nccl=NCCL_PROFILES["hopper-h800"],
        notes="an HGX H100 board with H800 GPUs: 8 NVLinks per GPU instead of 18",
    ),
    "dgx-b300": GpuSystem(
        name="dgx-b300", gpu="B300 (Blackwell Ultra)", gpus_per_node=8,
        nvlink_bandwidth=_f(900e9, "B/s", "nv-dgx-b300", "NVLink 5: 1.8 TB/s bidirectional per GPU"),
        nvlink_latency=_NVLINK_STEP,
        nic_bandwidth=_f(100e9, "B/s", "nv-dgx-b300",
                         "one ConnectX-8 800 Gb/s port per GPU (ib-cx8)"),
        nic_latency=_IB_LINK, rails=8,
        hbm_bandwidth=_f(8e12, "B/s", "nv-dgx-b300"),
        hbm_capacity=_f(288e9, "B", "nv-dgx-b300"),
        peak_flops_bf16=_f(2.25e15, "FLOP/s", "nv-dgx-b300",
                           "dense BF16 as B200 (Blackwell Ultra raises FP4, not BF16)"),
        nvswitch_reduce_flops=None,
        nvswitch_chips=2,
        nvls_latency=_NVLS_LATENCY,
        nccl=NCCL_PROFILES["blackwell-ultra"],
        notes="DGX B300 / HGX B300 (OCI BM.GPU.B300.8 shows each 800G port as two 400G NICs: "
              "dgx-b300:M:nics=16x400)",
    ),
    "gb300-nvl72": GpuSystem(
        name="gb300-nvl72", gpu="GB300 (Blackwell Ultra)", gpus_per_node=72,
        nvlink_bandwidth=_f(900e9, "B/s", "nv-gb300",
                            "NVLink 5: 1.8 TB/s bidirectional per GPU, 130 TB/s for the rack"),
        nvlink_latency=_NVLINK_STEP,
        nic_bandwidth=_f(100e9, "B/s", "nv-gb300",
                         "4 ConnectX-8 HCAs per compute tray, one 800 Gb/s port per GPU (ib-cx8)"),
        nic_latency=_IB_LINK, rails=8,
        hbm_bandwidth=_f(8e12, "B/s", "nv-gb300"),
        hbm_capacity=_f(288e9, "B", "nv-gb300"),
        peak_flops_bf16=_f(2.5e15, "FLOP/s", "nv-gb200", "dense BF16 as GB200"),
        nvswitch_reduce_flops=None,
        nvswitch_chips=18,
        nvls_latency=_NVLS_LATENCY,
        nccl=NCCL_PROFILES["grace-blackwell-ultra"],
        nodes_per_su=8,
        tray_gpus=4,
        notes="GB200 NVL72's rack with Blackwell Ultra GPUs and ConnectX-8; trays=T makes the "
              "NVLink domain a partition of T trays",
    ),
    "gb300-tray": GpuSystem(
        name="gb300-tray", gpu="GB300 (Blackwell Ultra)", gpus_per_node=4,
        nvlink_bandwidth=_f(900e9, "B/s", "nv-gb300", "NVLink 5: 1.8 TB/s bidirectional per GPU"),
        nvlink_latency=_NVLINK_STEP,
        nic_bandwidth=_f(100e9, "B/s", "nv-gb300",
                         "4 ConnectX-8 HCAs per compute tray, one 800 Gb/s port per GPU (ib-cx8)"),
        nic_latency=_IB_LINK, rails=4,
        hbm_bandwidth=_f(8e12, "B/s", "nv-gb300"),
        hbm_capacity=_f(288e9, "B", "nv-gb300"),
        peak_flops_bf16=_f(2.5e15, "FLOP/s", "nv-gb200", "dense BF16 as GB200"),
        nvswitch_reduce_flops=None,
        nvswitch_chips=18,
        nvls_latency=_NVLS_LATENCY,
        nccl=NCCL_PROFILES["grace-blackwell-ultra"],
        nodes_per_su=18,
        tray_gpus=4,
        notes="one GB300 compute tray used on its own (OCI BM.GPU.GB300.4 shows its 4 ConnectX-8 "
              "as 8 x 400 Gb/s: gb300-tray:M:nics=8x400)",
    ),
}

# An HGX A100 board with the A800 part: the A100's figures, its NVLink and NCCL's profile aside.
GPU_SYSTEMS["dgx-a800"] = replace(
    GPU_SYSTEMS["dgx-a100"], name="dgx-a800", gpu="A800 SXM4",
    nvlink_bandwidth=_f(200e9, "B/s", "nv-a800",
                        "NVLink 3 limited to 400 GB/s bidirectional per GPU (8 links of 25 GB/s each way)"),
    nic_bandwidth=_f(25e9, "B/s", "nv-dgx-a100",
                     "one 200 Gb/s NIC per GPU, as DGX A100 (an assumption: A800 systems are HGX A100 "
                     "boards with the A800 part, and their NICs vary: state them with nics=NxR)"),
    nccl=NCCL_PROFILES["ampere-a800"],
    notes="an HGX A100 board with A800 GPUs: 8 NVLinks per GPU instead of 12; no published run in "
          "the book's data (unvalidated)",
)


def gpu_system(name: str) -> GpuSystem:
    key = str(name).lower()
    if key not in GPU_SYSTEMS:
        raise CollectivesError(
            f"unknown GPU system {name!r}; known: {', '.join(GPU_SYSTEMS)}"
        )
    return GPU_SYSTEMS[key]


@dataclass(frozen=True)
class ClusterPreset:
    """A cluster beyond one SuperPOD: nodes of ``system`` in Scalable Units, ``sus_per_pod``
    Scalable Units per spine (a pod), the pods joined by a core level
    (:class:`~collectives_lib.topology.GpuCluster` with ``sus_per_pod``)."""

    name: str
    system: str
    sus_per_pod: Figure
    core_oversubscription: Figure
    notes: str = ""


CLUSTER_PRESETS: dict[str, ClusterPreset] = {
    "h100-cluster": ClusterPreset(
        name="h100-cluster", system="dgx-h100",
        sus_per_pod=_f(4, "SUs", "nv-superpod",
                       "the reference SuperPOD: 4 Scalable Units of 32 DGX H100 (1,024 GPUs) "
                       "on one two-level rail-optimised fat tree; we take it as the pod"),
        core_oversubscription=_f(1, "", "nv-superpod-large",
                                 "from 16 Scalable Units the reference design adds a core level "
                                 "with as many spine-core cables as leaf-spine ones: a full fat "
                                 "tree at every level"),
        notes="h100-cluster:12800 is 12,800 DGX H100 (102,400 GPUs): 400 Scalable Units in 100 "
              "pods under one core; --oversubscription sets the leaves' uplinks",
    ),
    "gb200-cluster": ClusterPreset(
        name="gb200-cluster", system="gb200-nvl72",
        sus_per_pod=_f(4, "SUs", "nv-superpod-gb200",
                       "Scalable Units of 8 NVL72 racks; 4 per pod, as the H100 reference "
                       "SuperPOD groups its Scalable Units (our choice: the GB200 design gives "
                       "no pod size)"),
        core_oversubscription=_f(1, "", "nv-superpod-large",
                                 "a full fat tree at every level, as the reference design's "
                                 "cable counts"),
        notes="gb200-cluster:1389 is 1,389 NVL72 racks (100,008 GPUs)",
    ),
}


def cluster_preset(name: str) -> ClusterPreset:
    key = str(name).lower()
    if key not in CLUSTER_PRESETS:
        raise CollectivesError(f"unknown cluster preset {name!r}; known: {', '.join(CLUSTER_PRESETS)}")
    return CLUSTER_PRESETS[key]


# Dense tensor-core peaks per GPU by number format (datasheets quote the
# sparse figure, twice these). Introduced in the chapter *Depth, trees and the
# network roofline* (the network ridge point); BF16 entries are the systems' own.
PEAK_FLOPS: dict[str, dict[str, Figure]] = {
    "A100": {
        "bf16": _f(312e12, "FLOP/s", "nv-a100", "dense; 624 TFLOPS with sparsity; no FP8 or FP4"),
    },
    "H100": {
        "bf16": GPU_SYSTEMS["dgx-h100"].peak_flops_bf16,
        "fp8": _f(1979e12, "FLOP/s", "nv-h100",
                  "dense; the datasheet's 3,958 TFLOPS is with sparsity; no FP4"),
    },
    "B200": {
        "bf16": GPU_SYSTEMS["dgx-b200"].peak_flops_bf16,
        "fp8": _f(4.5e15, "FLOP/s", "nv-b200",
                  "dense; 72 PFLOPS FP8 per 8 GPUs is with sparsity"),
        "fp4": _f(9e15, "FLOP/s", "nv-b200",
                  "dense; 144 PFLOPS FP4 per 8 GPUs is with sparsity"),
    },
    "GB200": {
        "bf16": GPU_SYSTEMS["gb200-nvl72"].peak_flops_bf16,
        "fp8": _f(5e15, "FLOP/s", "nv-gb200",
                  "dense; 720 PFLOPS FP8 per 72 GPUs is with sparsity"),
        "fp4": _f(10e15, "FLOP/s", "nv-gb200",
                  "dense; 1,440 PFLOPS FP4 per 72 GPUs is with sparsity"),
    },
}


#: Streaming multiprocessors per GPU: NCCL runs each channel as one CTA on one SM, which
#: concurrent kernels then lack (introduced in the chapter *Overlapping communication
#: with compute on GPUs*).
SM_COUNT: dict[str, Figure] = {
    "H100 SXM": _f(132, "SMs", "nv-hopper-arch"),
    "H100 PCIe": _f(114, "SMs", "nv-hopper-arch"),
    "H200 SXM": _f(132, "SMs", "nv-hopper-arch",
                   "the H100 SXM5's GH100 configuration; H200 changes the memory (HBM3e), not the SMs"),
    "A100 SXM": _f(108, "SMs", "nv-ampere-arch"),
}


# ---------------------------------------------------------------------------
# The interconnect ladder (one-way figures unless noted)
# ---------------------------------------------------------------------------

NVLINK_GENERATIONS: dict[str, Figure] = {
    # bidirectional per GPU, as NVIDIA quotes them
    "A100 (NVLink 3)": _f(600e9, "B/s bidirectional", "nv-a100"),
    "H100 (NVLink 4)": _f(900e9, "B/s bidirectional", "nv-h100"),
    "Blackwell (NVLink 5)": _f(1.8e12, "B/s bidirectional", "nv-nvlink"),
    "Rubin (NVLink 6)": _f(3.6e12, "B/s bidirectional", "nv-rubin",
                           "NVLink 6 doubles NVLink 5's 1.8 TB/s per GPU"),
}

# Direct links per GPU: a GPU's NVLink bandwidth is split over this many links.
# Introduced in the chapter *Moving bytes* (why eight GPUs need a switch).
NVLINK_LINKS_PER_GPU: dict[str, Figure] = {
    "H100 (NVLink 4)": _f(18, "links per GPU", "nv-nvlink",
                          "18 fourth-generation links of 25 GB/s each way (50 GB/s "
                          "bidirectional), 900 GB/s bidirectional in all"),
    "Blackwell (NVLink 5)": _f(18, "links per GPU", "nv-nvlink",
                               "18 fifth-generation links of 50 GB/s each way, 1.8 TB/s "
                               "bidirectional in all"),
}

LADDER: dict[str, Figure] = {
    # name -> bandwidth between two endpoints of that tier, one way
    "on-die (between compute units)": _f(
        2e13, "B/s", "estimate",
        "an order of magnitude, not a measured rung: the one public figure for on-chip "
        "bandwidth to the compute units is the Scaling Book's TPU v5e VMEM to MXU, about "
        "22 times its 8.1e11 B/s HBM, 1.8e13 B/s; 2e13 B/s stands for 'tens of TB/s'"),
    "die-to-die (Blackwell NV-HBI)": _f(1e13, "B/s", "nv-b200-d2d"),
    "HBM (B200)": _f(8e12, "B/s", "nv-b200"),
    "HBM (H100)": _f(3.35e12, "B/s", "nv-h100"),
    "NVLink 5 (per GPU, one way)": _f(900e9, "B/s", "nv-nvlink"),
    "NVLink 4 (per GPU, one way)": _f(450e9, "B/s", "nv-h100"),
    "ICI (TPU v5e, per link, one way)": TPU_GENERATIONS["v5e"].ici_bandwidth,
    "PCIe Gen5 x16 (one way)": _f(64e9, "B/s", "pcie5",
                                  "32 GT/s x 16 lanes, 128b/130b: about 63 GB/s each way"),
    "InfiniBand XDR (800 Gb/s NIC)": _f(100e9, "B/s", "ib-xdr"),
    "InfiniBand NDR (400 Gb/s NIC)": _f(50e9, "B/s", "ib-ndr"),
    "PCIe (TPU v5e host link)": TPU_GENERATIONS["v5e"].pcie_bandwidth,
    "DCN (TPU v5e, per chip)": TPU_GENERATIONS["v5e"].dcn_bandwidth,
}

# Tiers of the communication hierarchy for one GPU generation (Blackwell), in order.
BLACKWELL_HIERARCHY: tuple[tuple[str, str], ...] = (
    ("same die", "on-die (between compute units)"),
    ("same package", "die-to-die (Blackwell NV-HBI)"),
    ("same rack (NVLink 5)", "NVLink 5 (per GPU, one way)"),
    ("different racks (InfiniBand XDR)", "InfiniBand XDR (800 Gb/s NIC)"),
)

# ---------------------------------------------------------------------------
# Measurements and other quoted facts
# ---------------------------------------------------------------------------

MEASURED: dict[str, Figure] = {
    "h100-nvlink-effective-busbw": _f(370e9, "B/s", "nccl-tests-212",
                                      "NCCL ring busbw on 8x H100, multi-GB messages"),
    "h100-nvls-allreduce-busbw": _f(480e9, "B/s", "nccl-tests-212",
                                    "NCCL NVLink SHARP all-reduce busbw, 8x H100"),
    "h100-nvls-allreduce-algbw": _f(275e9, "B/s", "nccl-tests-212"),
    "sharp-practical-speedup": _f(1.3, "x", "nccl-1442",
                                  "about 30% over ring all-reduce in practice"),
    "h100-near-peak-message": _f(1e9, "B", "nv-dgxc-bench",
                                 "NCCL all-reduce on a DGX H100 reaches 95% of its largest "
                                 "measured busbw at 1.07 GB (2^30 B), 90% at 537 MB and 80% "
                                 "at 134 MB in NVIDIA's published run; nccl-tests issue 290 "
                                 "shows the same steps (introduced in the chapter GPU "
                                 "collectives within the node)"),
}

#: Power of one 800 Gb/s short-reach optical transceiver (one end of a link).
OPTICAL_TRANSCEIVER_800G_POWER = _f(15, "W", "nv-mma4z00",
                                    "an 800 Gb/s twin-port OSFP multimode module, 50 m reach")
#: The NVL72 NVLink spine: one copper pair per 200 Gb/s lane and direction, 18 NVLink 5
#: links of 2 lanes each way per GPU (72 GPUs).
NVL72_SPINE_COPPER_CABLES = _f(72 * 18 * 2 * 2, "cables", "estimate",
                               "72 GPUs x 18 NVLink 5 links x 2 lanes of 200 Gb/s x 2 directions")
NVL72_SPINE_OPTICS_POWER = _f(72 * (900e9 * 8 / 800e9) * 2 * float(OPTICAL_TRANSCEIVER_800G_POWER),
                              "W", "estimate",
                              "the spine in optics: 72 GPUs x 900 GB/s each way = 9 links of "
                              "800 Gb/s per GPU, an 800 Gb/s transceiver of 15 W (NVIDIA "
                              "MMA4Z00-NS-T) at each end of each link")


#: InfiniBand switches of the 4-SU, 128-node DGX SuperPOD compute fabric (the reference
#: architecture's switch-count table: one leaf per rail per SU, and the spine).
SUPERPOD_LEAF_SWITCHES = _f(32, "switches", "nv-superpod",
                            "4 SUs x 8 rails: one leaf per rail per SU (RA switch-count table)")
SUPERPOD_SPINE_SWITCHES = _f(16, "switches", "nv-superpod",
                             "spine switches of the 4-SU, 128-node compute fabric (RA switch-count table)")
#: Ports of one Quantum-2 QM9700 NDR switch, the SuperPOD's leaf and spine.
QM9700_PORTS = _f(64, "ports", "ib-ndr", "NVIDIA Quantum-2 QM9700: 64 ports of 400 Gb/s NDR")


def all_figures() -> list[tuple[str, Figure]]:
    """Every figure in this module as (dotted name, figure), for the sources page."""
    out: list[tuple[str, Figure]] = []
    seen: set[str] = set()
    for gen in TPU_GENERATIONS.values():
        if gen.name in seen:
            continue
        seen.add(gen.name)
        for fld in fields(gen):
            value = getattr(gen, fld.name)
            if isinstance(value, Figure):
                out.append((f"tpu.{gen.name}.{fld.name}", value))
    out.append(("tpu.pcie_latency", TPU_PCIE_LATENCY))
    out.append(("tpu.dcn_latency", DCN_LATENCY))
    for key, sysm in GPU_SYSTEMS.items():
        for fld in fields(sysm):
            value = getattr(sysm, fld.name)
            if isinstance(value, Figure):
                out.append((f"gpu.{key}.{fld.name}", value))
    for key, preset in CLUSTER_PRESETS.items():
        for fld in fields(preset):
            value = getattr(preset, fld.name)
            if isinstance(value, Figure):
                out.append((f"cluster.{key}.{fld.name}", value))
    for gpu, by_format in PEAK_FLOPS.items():
        for fmt, value in by_format.items():
            out.append((f"peak.{gpu}.{fmt}", value))
    for key, value in NVLINK_GENERATIONS.items():
        out.append((f"nvlink.{key}", value))
    for key, value in NVLINK_LINKS_PER_GPU.items():
        out.append((f"nvlink_links.{key}", value))
    for key, value in SM_COUNT.items():
        out.append((f"sms.{key}", value))
    for key, value in LADDER.items():
        out.append((f"ladder.{key}", value))
    for key, value in MEASURED.items():
        out.append((f"measured.{key}", value))
    out.append(("optics.transceiver_800g_power", OPTICAL_TRANSCEIVER_800G_POWER))
    out.append(("nvl72.spine_copper_cables", NVL72_SPINE_COPPER_CABLES))
    out.append(("nvl72.spine_optics_power", NVL72_SPINE_OPTICS_POWER))
    out.append(("superpod.leaf_switches", SUPERPOD_LEAF_SWITCHES))
    out.append(("superpod.spine_switches", SUPERPOD_SPINE_SWITCHES))
    out.append(("ib.qm9700_ports", QM9700_PORTS))
    return out
