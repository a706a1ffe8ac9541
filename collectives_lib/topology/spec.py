"""Topology specs: ``ring:8``, ``torus:4x4``, ``tpu-v5p:4x4x8``, ``dgx-h100:16``...

One parser for every entry point that takes a topology as text: the command
line's ``--topology``, the MPI runner and the notebooks' dropdowns.

>>> parse_topology("tpu-v5e:4x4")
tpu_slice('v5e', '4x4')
>>> parse_topology("ring:8", bandwidth=parse_rate("45GB/s"), latency=parse_seconds("1us"))
Ring(8, bidirectional=True, bandwidth=4.5e+10, latency=1e-06)
"""

from __future__ import annotations

import re

from .. import hardware as hw
from ..errors import CollectivesError
from ..checks import check_num_ranks
from ..units import format_rate, parse_size
from .cluster import GpuCluster
from .. import checks
from .core import Topology
from .switch import Switch, nvswitch_node
from .torus import Chain, Ring, Torus, mesh
from .tpu import TpuSystem, parse_shape, tpu_pod, tpu_slice

TOPOLOGY_HELP = (
    "ring:N, chain:N, torus:AxB[xC], mesh:AxB[xC], switch:N (switch:N:sharp reduces in the "
    "network; these need --bandwidth); "
    "tpu-v4:AxBxC, tpu-v5p:AxBxC, tpu-v5e:AxB, tpu-v6e:AxB, tpu-7x:AxBxC (or :pod; SHAPE*K "
    "or pod*K: K slices or pods joined by DCN); "
    "dgx-a100:M, dgx-a800:M, dgx-h100:M, dgx-h200:M, dgx-h800:M, dgx-b200:M, dgx-b300:M, gb200-tray:M, "
    "gb300-tray:M, gb200-nvl72:M, gb300-nvl72:M (M nodes, trays or racks); h100-cluster:M, "
    "gb200-cluster:M (M nodes or racks in pods of 4 Scalable Units under a core level); a GPU "
    "preset takes :KEY=VALUE parameters: gpus=G (G GPUs per node, down to 1; on one node, G of "
    "its GPUs), trays=T (rack presets: NVLink partitions of T trays, 4T GPUs, e.g. "
    "gb200-nvl72:2:trays=16), nics=NxR (N NICs of R Gb/s per node, per tray on rack presets, "
    "e.g. dgx-a100:3:nics=4x200) or nics=NxPxR (N NICs of P ports of R Gb/s, which NCCL fuses "
    "into one device per NIC, e.g. nics=8x2x200), fabric=ib|roce|gib (gib: RoCE through "
    "Google's gIB plugin)"
)

#: Parameters a GPU preset spec takes, and what they mean (TOPOLOGY_HELP says the same).
GPU_PARAMS = ("gpus", "trays", "nics", "fabric")
_FABRIC_NAMES = {"ib": "infiniband", "infiniband": "infiniband", "roce": "roce", "gib": "gib"}



def parse_rate(text) -> float:
    """Bandwidth in bytes/s: ``45e9``, ``45GB`` or ``45GB/s``."""
    if text is None:
        return None
    t = str(text).strip()
    t = re.sub(r"/s$", "", t, flags=re.I)
    bits = re.match(r"^([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([kKmMgGtT]?)(b|bps)$", t)
    if bits:
        scale = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}[bits.group(2).lower()]
        raise CollectivesError(
            f"bandwidth {text!r} is in bits per second (a lowercase b); give bytes per second: "
            f"{text} is {format_rate(float(bits.group(1)) * scale / 8)}")
    try:
        value = float(t)
    except ValueError:
        try:
            value = float(parse_size(t))
        except CollectivesError:
            raise CollectivesError(
                f"bandwidth {text!r} is not understood; give bytes per second one way, "
                f"like 45e9 or 45GB/s"
            ) from None
    if not value > 0:
        raise CollectivesError(f"bandwidth must be positive, got {text!r}")
    return value


def parse_seconds(text) -> float:
    """Latency in seconds: ``1e-6``, ``1us``, ``0.5ms``."""
    if text is None:
        return None
    t = str(text).strip().lower()
    m = re.match(r"^([0-9.eE+-]+)\s*(s|ms|us|µs|ns)?$", t)
    if not m:
        raise CollectivesError(f"latency {text!r} is not understood; use seconds like 1e-6 or 1us")
    scale = {"s": 1.0, None: 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}[m.group(2)]
    try:
        value = float(m.group(1)) * scale
    except ValueError:
        raise CollectivesError(f"latency {text!r} is not a number") from None
    if value < 0:
        raise CollectivesError(f"latency must be >= 0 seconds, got {text!r}")
    if value == 0 and re.search(r"[1-9]", m.group(1).lower().partition("e")[0]):
        raise CollectivesError(f"latency {text!r} is below the smallest time a float holds "
                               f"(about 1e-308 s); give 0 for no latency")
    return value


def parse_topology(spec: str, bandwidth: float | None = None, latency: float | None = None,
                   oversubscription: float = 1.0) -> Topology:
    """Turn a topology SPEC into a topology value (see TOPOLOGY_HELP)."""
    if not isinstance(spec, str):
        raise CollectivesError(f"a topology spec is text such as 'ring:8' or 'dgx-h100:2', "
                               f"not a value of type {type(spec).__name__}")
    text = spec.strip().lower()
    if ":" not in text:
        raise CollectivesError(f"topology {spec!r} is not understood; use {TOPOLOGY_HELP}")
    kind, arg = text.split(":", 1)
    params = {}
    gpu = kind in hw.GPU_SYSTEMS or kind in hw.CLUSTER_PRESETS
    if gpu and ":" in arg:
        arg, params = _gpu_params(kind, arg)
    sharp = False
    if arg.endswith(":sharp"):
        arg, sharp = arg[: -len(":sharp")], True
        if kind != "switch":
            raise CollectivesError(f"':sharp' (a switch that reduces in the network) applies to "
                                   f"switch:N, not to {kind}")
    oversubscription = checks.positive(oversubscription, "oversubscription")
    if oversubscription != 1.0 and not gpu:
        raise CollectivesError(
            f"--oversubscription {oversubscription:g} sets the fabric between the nodes of a GPU "
            f"cluster (dgx-h100:M and the other GPU presets); {kind} has none")
    if kind in _GENERIC:
        return _generic(kind, arg, spec, bandwidth, latency, sharp)
    if kind.startswith("tpu"):
        return _tpu(kind, arg, spec, bandwidth, latency)
    if gpu:
        return _gpu(kind, arg, spec, params, bandwidth, latency, oversubscription)
    raise CollectivesError(f"unknown topology kind {kind!r}; use {TOPOLOGY_HELP}")


_GENERIC = ("ring", "chain", "torus", "mesh", "switch")


def _generic(kind: str, arg: str, spec: str, bandwidth, latency, sharp: bool) -> Topology:
    """ring:N, chain:N, switch:N[:sharp], torus:SHAPE, mesh:SHAPE (a bandwidth is required)."""
    if bandwidth is None:
        raise CollectivesError(
            f"topology {spec!r} needs --bandwidth (one-way bytes/s per link, e.g. 45e9)"
        )
    lat = 0.0 if latency is None else latency
    if kind in ("ring", "chain", "switch"):
        try:
            n = int(arg)
        except ValueError:
            raise CollectivesError(f"{kind}:N needs a whole number of ranks, got {arg!r}") from None
        check_num_ranks(n)
        if kind == "ring":
            return Ring(n, bandwidth=bandwidth, latency=lat)
        if kind == "chain":
            return Chain(n, bandwidth=bandwidth, latency=lat)
        return Switch(n, bandwidth=bandwidth, latency=lat, in_network=sharp)
    dims = parse_shape(arg)
    if kind == "torus":
        return Torus(dims, True, bandwidth=bandwidth, latency=lat)
    return mesh(dims, bandwidth=bandwidth, latency=lat)


def _tpu(kind: str, arg: str, spec: str, bandwidth, latency) -> Topology:
    """tpu-GEN:SHAPE, tpu-GEN:pod, and several slices joined by DCN (tpu-GEN:SHAPE*K)."""
    gen = kind.removeprefix("tpu-").removeprefix("tpu")
    if gen not in hw.TPU_PRESET_GENERATIONS and gen not in ("v4p", "tpu7x"):
        raise CollectivesError(
            f"unknown TPU preset {kind!r}; use one of "
            + ", ".join(f"tpu-{g}" for g in hw.TPU_PRESET_GENERATIONS)
        )
    if "*" in arg:                     # several slices (or pods) joined by DCN
        shape, _, count = arg.rpartition("*")
        try:
            k = int(count)
        except ValueError:
            raise CollectivesError(f"{kind}:SHAPE*K needs a whole number K of slices, "
                                   f"got {count!r}") from None
        check_num_ranks(k, what="number of slices K")
        if bandwidth is not None or latency is not None:
            raise CollectivesError(f"--bandwidth and --latency set one slice's ICI; "
                                   f"{spec!r} joins {k} slices over DCN: leave them out")
        dims = tpu_pod(gen).dims if shape == "pod" else shape
        return TpuSystem(gen, dims, k)
    if arg == "pod":
        return tpu_pod(gen, bandwidth=bandwidth, latency=latency)
    return tpu_slice(gen, arg, bandwidth=bandwidth, latency=latency)


def _gpu(kind: str, arg: str, spec: str, params: dict, bandwidth, latency,
         oversubscription: float) -> Topology:
    """A cluster preset or a GPU system of M nodes (one node: an NVSwitch node)."""
    try:
        m = int(arg)
    except ValueError:
        raise CollectivesError(f"{kind}:M needs a whole number of nodes, got {arg!r}") from None
    check_num_ranks(m, what="number of nodes M")
    links = dict(nvlink_bandwidth=bandwidth, nic_bandwidth=bandwidth,
                 nvlink_latency=latency, nic_latency=latency)
    if kind in hw.CLUSTER_PRESETS:
        preset = hw.cluster_preset(kind)
        return GpuCluster(preset.system, m, oversubscription=oversubscription,
                          sus_per_pod=int(preset.sus_per_pod.value),
                          core_oversubscription=float(preset.core_oversubscription.value),
                          **links, **_cluster_kwargs(hw.gpu_system(preset.system), params, spec))
    system = hw.gpu_system(kind)
    if m == 1:
        if oversubscription != 1.0:
            raise CollectivesError(
                f"--oversubscription sets the fabric between nodes; {kind}:1 is one node with "
                f"none (use {kind}:M with M >= 2 nodes)")
        for key in ("nics", "fabric"):
            if key in params:
                raise CollectivesError(
                    f"{key}= describes the network between nodes; {kind}:1 is one node (NVLink "
                    f"only): leave it out or use {kind}:M with M >= 2")
        gpus = _gpus(system, params, spec)
        return nvswitch_node(kind, gpus=gpus, bandwidth=bandwidth, latency=latency)
    return GpuCluster(kind, m, oversubscription=oversubscription,
                      **links, **_cluster_kwargs(system, params, spec))


def _gpu_params(kind: str, arg: str) -> tuple[str, dict]:
    """``M:key=value:...`` of a GPU preset spec: M, and the parameters as text."""
    head, *items = arg.split(":")
    params = {}
    for item in items:
        key, eq, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not eq or key not in GPU_PARAMS or not value:
            raise CollectivesError(
                f"{kind} parameter {item!r} is not understood; a GPU preset takes "
                f"{', '.join(k + '=...' for k in GPU_PARAMS)} (see the topology help)")
        if key in params:
            raise CollectivesError(f"{kind} parameter {key}= is given twice")
        params[key] = value
    return head, params


def _whole(value: str, what: str, spec) -> int:
    try:
        n = int(value)
    except ValueError:
        raise CollectivesError(f"{what} in {spec!r} must be a whole number, got {value!r}") from None
    return check_num_ranks(n, what=what)


def _gpus(system, params: dict, spec) -> int | None:
    """GPUs per node (per NVLink domain) from ``gpus=`` or ``trays=``, or None (the preset's)."""
    if "trays" in params:
        if not system.tray_gpus or system.gpus_per_node == system.tray_gpus:
            raise CollectivesError(
                f"trays= splits a rack's NVLink domain into partitions; {system.name} is not a rack "
                f"preset (gb200-nvl72, gb300-nvl72 are)")
        if "gpus" in params:
            raise CollectivesError(f"{spec!r} gives both trays= and gpus=: give one")
        trays = _whole(params["trays"], "trays per NVLink partition", spec)
        most = system.gpus_per_node // system.tray_gpus
        if trays > most:
            raise CollectivesError(f"a {system.name} rack has {most} compute trays, not {trays}")
        return trays * system.tray_gpus
    if "gpus" in params:
        gpus = _whole(params["gpus"], "GPUs per node", spec)
        if gpus > system.gpus_per_node:
            raise CollectivesError(f"{system.name} has {system.gpus_per_node} GPUs per node, not {gpus}")
        return gpus
    return None


def _cluster_kwargs(system, params: dict, spec) -> dict:
    """GpuCluster's keyword arguments for a spec's parameters."""
    out = {}
    gpus = _gpus(system, params, spec)
    if gpus is not None:
        out["gpus_per_node"] = gpus
    if "nics" in params:
        m = re.match(r"^(\d+)x(?:(\d+)x)?(\d+(?:\.\d+)?)(?:g|gb|gbps)?$", params["nics"])
        if not m:
            raise CollectivesError(
                f"nics={params['nics']!r} is not understood; give NxR: N NICs of R Gb/s per node "
                f"(per compute tray on a rack preset), e.g. nics=4x200, or NxPxR: N NICs of P "
                f"ports of R Gb/s, e.g. nics=8x2x200")
        count = check_num_ranks(int(m.group(1)), what="NICs per node")
        ports = 1 if m.group(2) is None else int(m.group(2))
        if ports < 1:
            raise CollectivesError(f"nics={params['nics']!r}: a NIC has at least one port, not {ports}")
        # NCCL fuses the ports of one NIC into one network device of their summed speed
        # (NCCL_NET_MERGE_LEVEL=PORT, the default: src/graph/topo.cc ncclTopoGetFusionEnv;
        # NCCL_IB_MERGE_NICS=1 from 2.21), so a NIC of P ports is one device of P x R
        rate = ports * float(m.group(3)) * 1e9 / 8          # Gb/s -> bytes/s
        if not rate > 0:
            raise CollectivesError(f"nics={params['nics']!r}: a NIC's rate must be positive")
        if system.tray_gpus and system.gpus_per_node > system.tray_gpus:
            count *= -(-(gpus or system.gpus_per_node) // system.tray_gpus)   # per tray, on a rack
        out.update(nics_per_node=count, nic_rate=rate)
    if "fabric" in params:
        fabric = _FABRIC_NAMES.get(params["fabric"])
        if fabric is None:
            raise CollectivesError(f"fabric={params['fabric']!r} is not one of ib, roce, gib")
        out["fabric"] = fabric
    return out
