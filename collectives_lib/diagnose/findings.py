"""Every row beside NCCL's model, a verdict, and findings with their evidence.

:func:`compare` times every row with :func:`collectives_lib.estimate`
(NCCL's model, the row's size and type, the algorithm, protocol and NVLS
setting the output states). :func:`assess` reads the comparison as a
maintainer of NVIDIA/nccl-tests reads a pasted table, in two places:

* the **plateau**: the largest sizes (up to :data:`PEAK_ROWS`) at which the
  model's busbw is at least :data:`PLATEAU` of its busbw at 16 GiB; their
  median ``ratio = measured time / expected time`` is the bandwidth verdict;
* the **floor**: sizes from 8 B to 64 KiB, where latency is all there is.

The thresholds come from the published runs in
``collectives_lib/data/nccl_tests`` read with the preset the data name for
each (``tests/test_diagnose.py`` holds them to the data): the runs whose poster, vendor
or NVIDIA called them normal, and those the data's notes call likely healthy.

* :data:`SLOW` ``node`` = 1.12: on one node (or one NVLink domain) their plateau ratios
  lie between 0.94 and 1.07 (H100 with NVLS 0.97 to 0.98, H100 rings of 2 to 8 GPUs 0.94
  to 1.04, a GB200 rack and trays 1.04 to 1.07). 1.12 leaves 5 % above the slowest of
  them, and an H100 node without NVLS (370 GB/s where NVLS gives 469, a ratio near
  1.27) stays far beyond it.
* :data:`SLOW` ``cluster`` = 1.09: across nodes they lie between 0.94 and 1.07 (2 to 12
  H100 nodes on InfiniBand, the slowest of them a 4-node VM cluster NVIDIA called "a good
  number" at 1.04; racks of GB200 and GB300 trays up to 1.064), and a lost NIC costs an
  eighth of the bandwidth: 8/7 = 1.14 on a run at 1.0, 1.097 on one at 0.96. 1.09 leaves
  2 % above the slowest healthy run and still flags a lost NIC on a run at 0.96.
* :data:`FAST` = 0.85: a run more than 15 % faster than the model is the model's limit,
  not the machine's (two B200 nodes reach 683 to 703 GB/s where the model's NVLS tree
  gives 484; NVLS on 2 and 4 of 8 H100s, where NCCL's log shows it, beats the model's
  NVLS by 2.1x and 1.3x).
* :data:`FLOOR`: the floor ratio of those runs reaches 1.4 with one process per GPU (H100
  1.0 to 1.2, B200 pairs of nodes 1.4) and 2.5 with one process driving several GPUs
  (``-g 4``: each launch goes through one process, which NCCL's model does not charge);
  2.0 and 3.0 leave room above them.
* :data:`SMALL_TOO` = 1.4 with the plateau slow: the whole sweep is slower, not the
  bandwidth alone (a slow GPU, another job), when the floor ratio is also 1.4 or more
  and within 1.5x of the plateau's.

The findings and what names them: NVLS not in use (the plateau fits the
model with ``nvls=False`` far better than with NVLS), a PCIe path (a single
node whose busbw is within 1.5x of a PCIe x16 link), a NIC or rail down
(across nodes, busbw near 7/8 of the expectation; fewer NICs' worth below
that), GPUDirect RDMA off and TCP sockets instead of InfiniBand (NCCL's own
log), a high floor, a sweep that stops before the plateau, a run faster
than the model (the model's limit, not a fault) and ``#wrong`` other than 0
(the data were corrupted: always ``degraded``).

Introduced in the chapter *Running and reading NCCL*.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .. import hardware as hw
from ..collective import Collective
from ..errors import CollectivesError
from ..models import estimate
from ..topology import GpuCluster
from ..units import format_bytes
from .infer import Machine
from .parse import Output, Row

#: The model's plateau: busbw at least this share of its busbw at :data:`PEAK_SIZE`.
PLATEAU = 0.90
PEAK_SIZE = 16 * 2**30
#: Rows of the plateau that make the bandwidth verdict (the largest sizes).
PEAK_ROWS = 3
#: The floor: sizes up to this.
SMALL = 64 * 2**10
#: measured/expected time at the plateau above which a run is slow: one node, several nodes
#: (restated with the runs modelled since: 2 GB300 racks' all-reduce at 1.064 of the model,
#: 2 GB200 racks' all-to-all at 1.049; still below the 1.105 of a healthy 2-node H100 run
#: with one NIC of 8 down).
SLOW = {"node": 1.12, "cluster": 1.09}
#: ... and below which it is faster than the model can explain.
FAST = 0.85
#: measured/expected time at the floor above which the floor is high: one process per GPU,
#: one process driving several GPUs (or not stated).
FLOOR = {"per_gpu": 2.0, "per_process": 3.0}
#: A slow plateau with the floor at least this slow too: slow at every size.
SMALL_TOO = 1.4
#: A sweep that stops before the plateau is judged at its largest sizes (1 MiB or more)
#: with this threshold: the healthy runs' rows between 1 MiB and the plateau reach
#: ratios of 2 (the model's pipeline fill and protocol switches are least sure there).
SHORT_SLOW = 2.5
#: A single node's busbw within this factor of its PCIe x16 link: the PCIe path.
PCIE_FACTOR = 1.5


@dataclass(frozen=True)
class Comparison:
    """One row of the output beside what NCCL's model expects for it."""

    row: Row
    expected_time: float | None = None       # seconds
    expected_busbw: float | None = None      # bytes/s
    algorithm: str | None = None             # the library's name (ring, nvls, ...)
    nccl_algorithm: str | None = None
    protocol: str | None = None

    @property
    def measured_time(self) -> float | None:
        t = self.row.timing
        return None if t is None or t.time_us <= 0 else t.time_us * 1e-6

    @property
    def ratio(self) -> float | None:
        """measured / expected time: above 1 the run is slower than the model."""
        m = self.measured_time
        if m is None or not self.expected_time:
            return None
        return m / self.expected_time

    @property
    def measured_busbw(self) -> float | None:
        t = self.row.timing
        return None if t is None else t.busbw * 1e9


@dataclass(frozen=True)
class Finding:
    """One thing the diagnosis found, with its evidence (numbers) and likely cause."""

    code: str          # wrong, nvls, pcie, nic-down, network, gdr, socket, slow-everywhere, ...
    severity: str      # "degraded", "unknown" (the model cannot judge) or "note"
    title: str
    evidence: str
    cause: str = ""

    def as_dict(self) -> dict:
        return {"code": self.code, "severity": self.severity, "title": self.title,
                "evidence": self.evidence, "cause": self.cause}


class _Model:
    """NCCL's model for one machine, with a cache (rows repeat sizes)."""

    def __init__(self, machine: Machine):
        self.m = machine
        self.cache: dict = {}

    def options(self, row_root: int | None) -> dict:
        m = self.m
        opts = {}
        keys = m.collective.endpoint_options
        if keys == ("root",):
            opts["root"] = max(0, row_root or 0)
        elif keys:                            # a send's source and destination
            topo = m.topology
            if isinstance(topo, GpuCluster):
                g = topo.gpus_per_node        # nccl-tests' ring shift crosses a node boundary
                opts.update(src=g - 1, dst=g)
            else:
                opts.update(src=0, dst=1)
        return opts

    def __call__(self, nbytes: int, dtype: str, root: int | None = None, **override):
        kw = dict(self.m.model_options)
        kw.update(override)
        key = (nbytes, dtype, root, tuple(sorted(kw.items())))
        if key not in self.cache:
            algorithm = kw.pop("algorithm", "auto")
            try:
                self.cache[key] = estimate(self.m.collective, self.m.topology, nbytes, algorithm,
                                           model="nccl", dtype=dtype, **kw, **self.options(root))
            except CollectivesError:
                if algorithm == "auto" and not kw:
                    raise
                # NCCL ignores a setting that does not apply (NCCL_ALGO=Ring for alltoall)
                self.cache[key] = estimate(self.m.collective, self.m.topology, nbytes, "auto",
                                           model="nccl", dtype=dtype, **self.options(root))
        return self.cache[key]


#: NCCL's algorithm names in its log and the library's.
NCCL_NAMES = {"RING": "ring", "TREE": "tree", "NVLS": "nvls", "NVLS_TREE": "nvls_tree",
              "NVLSTREE": "nvls_tree", "COLLNET_DIRECT": "collnet_direct",
              "COLLNET_CHAIN": "collnet_chain", "PAT": "pat"}


def logged(out: Output, machine: Machine, nbytes: int) -> dict:
    """estimate()'s algorithm and protocol for a size NCCL's log says it ran (its tuning
    lines), or {} (the output's settings, else NCCL's tuner as the model has it)."""
    choice = out.info.choice(nbytes)
    # NCCL's log names an algorithm only for what it does not run as sends and receives
    if choice is None or machine.collective is None or machine.collective.personalised:
        return {}
    algo, proto = choice
    if algo not in NCCL_NAMES or proto not in ("LL", "LL128", "SIMPLE"):
        return {}
    return {"algorithm": NCCL_NAMES[algo], "protocol": proto}


def compare(out: Output, machine: Machine) -> tuple[Comparison, ...]:
    """Every row beside NCCL's model (sizes of 0 and unmatched machines: no expectation).
    Where NCCL's log names the algorithm and protocol it ran for a size, the model times
    those."""
    if not machine.matched:
        return tuple(Comparison(r) for r in out.rows)
    model = _Model(machine)
    rows = []
    for r in out.rows:
        if r.nbytes <= 0 or r.timing is None:
            rows.append(Comparison(r))
            continue
        e = model(r.nbytes, r.dtype, r.root, **logged(out, machine, r.nbytes))
        rows.append(Comparison(r, e.time, e.busbw, e.algorithm, e.nccl_algorithm, e.protocol))
    return tuple(rows)


def _median(xs):
    xs = sorted(xs)
    if not xs:
        return None
    k = len(xs) // 2
    return xs[k] if len(xs) % 2 else 0.5 * (xs[k - 1] + xs[k])


def _gbs(x: float | None) -> str:
    return "n/a" if x is None else f"{x / 1e9:.1f} GB/s"


def _size(n: int) -> str:
    return format_bytes(n, binary=True)


@dataclass(frozen=True)
class Metrics:
    """The two places the verdict looks at, and the model's plateau."""

    peak_busbw_model: float | None = None     # the model's busbw at PEAK_SIZE (B/s)
    plateau_start: int | None = None          # the smallest size at PLATEAU of it
    peak_rows: tuple[int, ...] = ()           # sizes of the plateau rows used
    peak_ratio: float | None = None
    peak_busbw: float | None = None           # measured, median over the plateau rows (B/s)
    peak_expected: float | None = None
    floor_rows: int = 0
    floor_ratio: float | None = None
    slow_threshold: float | None = None
    floor_threshold: float | None = None
    at_plateau: bool = True                   # False: the sweep stops before the plateau

    def as_dict(self) -> dict:
        return {"peak_busbw_model": self.peak_busbw_model, "plateau_start": self.plateau_start,
                "peak_sizes": list(self.peak_rows), "peak_ratio": self.peak_ratio,
                "peak_busbw": self.peak_busbw, "peak_busbw_expected": self.peak_expected,
                "floor_rows": self.floor_rows, "floor_ratio": self.floor_ratio,
                "slow_threshold": self.slow_threshold, "floor_threshold": self.floor_threshold,
                "at_plateau": self.at_plateau}


def _plateau(model: _Model, dtype: str, root, top: int, rows, how: dict) -> tuple[float, int | None]:
    """The model's busbw at the largest size (with the algorithm NCCL's log names for the
    largest row, if it does), and the smallest size at which it reaches PLATEAU of that: the
    smallest row there, else (the sweep stops short of it) the smallest power of two, by
    bisection (busbw grows with size)."""
    size = max(PEAK_SIZE, top)
    peak = model(size, dtype, root, **how).busbw
    there = [c.row.nbytes for c in rows if c.expected_busbw >= PLATEAU * peak]
    if there:
        return peak, min(there)
    lo, hi = int(math.log2(max(top, 8))), int(math.log2(size))
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if model(2**mid, dtype, root, **how).busbw >= PLATEAU * peak:
            hi = mid
        else:
            lo = mid
    return peak, 2**hi


def _system(machine: Machine) -> hw.GpuSystem | None:
    return hw.gpu_system(machine.system) if machine.system in hw.GPU_SYSTEMS else None


def _nics_per_node(system: hw.GpuSystem, topology=None) -> int:
    """The NICs one node has: the topology's own (``nics=`` in its spec), else the preset's."""
    return getattr(topology, "nics_per_node", None) or system.nics


def assess(out: Output, machine: Machine, rows: tuple[Comparison, ...]):
    """(verdict, findings, metrics) for one output; see the module's docstring."""
    found: list[Finding] = []
    _wrong(out, found)
    if out.runs > 1:
        found.append(Finding(
            "separate-runs", "degraded", "every process ran alone",
            f"the output holds {out.runs} '# nThread' headers, one per process, each with its own "
            f"table: the processes did not form one communicator",
            "nccl-tests was built without MPI (make MPI=1) or started without its MPI launcher; "
            "each process then runs its own one-rank test"))
    _log_faults(out, machine, found)
    metrics = Metrics()
    if machine.matched:
        metrics = _measure(out, machine, rows, found)
    elif machine.unmatched:
        found.append(Finding("unmatched", "unknown", "no preset stands for this machine",
                             machine.unmatched,
                             "give the machine with --topology (dgx-h100:2, gb200-nvl72:1, ...)"))
    _notes(out, machine, rows, metrics, found)
    found.sort(key=lambda f: {"degraded": 0, "unknown": 1}.get(f.severity, 2))
    severities = {f.severity for f in found}
    if "degraded" in severities:
        verdict = "degraded"
    elif "unknown" in severities or not machine.matched:
        verdict = "unknown"
    else:
        verdict = "healthy"
    return verdict, tuple(found), metrics


def _log_faults(out: Output, machine: Machine, found: list) -> None:
    """What NCCL's own log says is wrong on a run across nodes, with or without a preset:
    TCP sockets instead of RDMA, no GPUDirect RDMA, GPUs left to share fewer NICs."""
    info = out.info
    nodes = info.nnodes or machine.hosts or (machine.topology.num_nodes if isinstance(
        machine.topology, GpuCluster) else 1)
    if not info.present or nodes <= 1:
        return
    socket = (info.network or "").lower() == "socket" or any(
        t.startswith("NET/Socket") for t in info.transports)
    if socket:
        found.append(Finding(
            "socket", "degraded", "TCP sockets, not InfiniBand or RoCE",
            f"NCCL's log says 'Using network {info.network or 'Socket'}' on a run over {nodes} nodes",
            "NCCL found no RDMA device: NCCL_IB_DISABLE=1, no /dev/infiniband or rdma-core in the "
            "container, or NCCL_NET set to Socket"))
    elif info.gdr is False:
        found.append(Finding(
            "gdr", "degraded", "GPUDirect RDMA off",
            "NCCL's log shows the network without GPUDirect RDMA ('GDR 0', or channels 'via "
            f"NET/IB/n' without '/GDRDMA') on a run over {nodes} nodes",
            "every transfer is staged through host memory: the nvidia-peermem (or dma-buf) module "
            "not loaded, ACS or the IOMMU in the way, NCCL_NET_GDR_LEVEL too low, or NICs far from "
            "their GPUs (PCIe topology)"))
    local = info.local_ranks or (machine.ranks // nodes if machine.ranks else None)
    settings = machine.settings
    if info.nics and local and len(info.nics) < local and not socket:
        hca = settings.get("NCCL_IB_HCA")
        found.append(Finding(
            "nics", "degraded" if hca else "note",
            f"{local} GPUs of a node share {len(info.nics)} NIC{'s' if len(info.nics) > 1 else ''}",
            f"NCCL's log lists {', '.join(info.nics)} for {local} local ranks"
            + (f"; NCCL_IB_HCA={hca}" if hca else ""),
            "NCCL_IB_HCA names fewer NICs than the node has" if hca else
            "a node with fewer NICs than GPUs (or NICs NCCL did not find): each NIC carries "
            "several GPUs' traffic"))


def _wrong(out: Output, found: list) -> None:
    bad = [r for r in out.rows if r.wrong > 0]
    if bad:
        sizes = sorted({r.nbytes for r in bad})
        worst = max(bad, key=lambda r: r.wrong)
        found.append(Finding(
            "wrong", "degraded", "data corrupted",
            f"{len(bad)} row(s) with '#wrong' above 0, at {_size(sizes[0])}"
            + (f" to {_size(sizes[-1])}" if len(sizes) > 1 else "")
            + f"; the most, {worst.wrong} elements, at {_size(worst.nbytes)} (line {worst.line})",
            "a result differed from the expected one: a faulty GPU, NVLink or NIC (check dmesg "
            "for Xid errors and the links' error counters), memory errors (ECC), or a bug in a "
            "network plugin; the bandwidth of such a run does not count"))
    elif out.out_of_bounds:
        found.append(Finding(
            "wrong", "degraded", "data corrupted",
            f"'Out of bounds values : {out.out_of_bounds} FAILED' in the footer",
            "results outside the expected values: a faulty GPU, link or NIC"))


def _measure(out, machine, rows, found) -> Metrics:
    model = _Model(machine)
    series = {r.line for r in out.series()}
    usable = [c for c in rows if c.row.line in series and c.ratio is not None]
    if not usable:
        return Metrics()
    first = usable[0].row
    top = max(c.row.nbytes for c in usable)
    how = logged(out, machine, top)
    peak_model, start = _plateau(model, first.dtype, first.root, top, usable, how)
    multi = machine.nodes > 1 or isinstance(machine.topology, GpuCluster)
    slow = SLOW["cluster" if multi else "node"]
    per_gpu = machine.gpus_per_process == 1
    floor_limit = FLOOR["per_gpu" if per_gpu else "per_process"]
    plateau = [c for c in usable if c.expected_busbw >= PLATEAU * peak_model]
    at_plateau = bool(plateau)
    if not at_plateau:            # judged at its largest sizes, with a wider threshold
        plateau = [c for c in usable if c.row.nbytes >= 2**20]
        slow = max(slow, SHORT_SLOW)
    peak_rows = sorted(plateau, key=lambda c: c.row.nbytes)[-PEAK_ROWS:]
    small = [c for c in usable if c.row.nbytes <= SMALL]
    peak_ratio = _median([c.ratio for c in peak_rows])
    floor_ratio = _median([c.ratio for c in small]) if len(small) >= 2 else None
    metrics = Metrics(peak_model, start, tuple(c.row.nbytes for c in peak_rows), peak_ratio,
                      _median([c.measured_busbw for c in peak_rows]),
                      _median([c.expected_busbw for c in peak_rows]), len(small), floor_ratio,
                      slow, floor_limit, at_plateau)
    if top < start:
        found.append(Finding(
            "short-sweep", "note", "the sweep stops before the plateau",
            f"the largest size is {_size(top)}; NCCL's model reaches {PLATEAU:.0%} of its "
            f"{_gbs(peak_model)} busbw only from {_size(start)}: the bandwidth is judged at the "
            f"largest sizes, and only a shortfall beyond {SHORT_SLOW:g}x",
            f"run up to at least {_size(start)} (-e {_size(max(start, 2**30)).replace(' ', '')})"))
    if peak_ratio is not None:
        _bandwidth(out, machine, model, peak_rows, metrics, slow, found, at_plateau)
    if floor_ratio is not None and not any(f.code == "slow-everywhere" for f in found):
        if floor_ratio > floor_limit:
            worst = max(small, key=lambda c: c.ratio)
            found.append(Finding(
                "floor", "degraded", "a high small-size floor",
                f"from {_size(small[0].row.nbytes)} to {_size(small[-1].row.nbytes)} the run takes "
                f"{floor_ratio:.2f}x the model's time (median of {len(small)} sizes; "
                f"{worst.measured_time * 1e6:.1f} us at {_size(worst.row.nbytes)} where the model "
                f"expects {worst.expected_time * 1e6:.1f} us); healthy runs stay below "
                f"{floor_limit:g}x",
                "a slow launch path: CPU binding far from the GPU (--bind-to, numactl), a busy or "
                "slow CPU, a network plugin's proxy thread, NCCL_PROTO without LL, or "
                "NCCL_LAUNCH_MODE; across nodes, the network's latency (adaptive routing, hops)"))
    return metrics


def _bandwidth(out, machine, model, peak_rows, metrics, slow, found, at_plateau=True) -> None:
    ratio = metrics.peak_ratio
    big = peak_rows[-1]
    place = "at the plateau" if at_plateau else "at the largest sizes, below the plateau"
    where = f"{_gbs(metrics.peak_busbw)} busbw {place} ({_size(peak_rows[0].row.nbytes)}" + (
        f" to {_size(big.row.nbytes)})" if len(peak_rows) > 1 else ")")
    expect = f"{_gbs(metrics.peak_expected)} NCCL's model expects ({big.algorithm}/{big.protocol})"
    system = _system(machine)
    if ratio < FAST and at_plateau:
        found.append(Finding(
            "faster", "note", "faster than the model: the model's limit",
            f"{where}, {1 / ratio:.2f}x the {expect}",
            "the machine is fine; NCCL's model undercounts what this NCCL and machine do (a "
            "newer algorithm or tuning, or a fabric faster than the preset's), so the table "
            "cannot say how much is left"))
        return
    if ratio <= slow:
        return
    single = not isinstance(machine.topology, GpuCluster) and machine.nodes <= 1
    info = out.info
    # a PCIe path: one node far below NVLink, near a PCIe link's bandwidth
    if single and system is not None and system.nccl is not None:
        pcie = float(system.nccl.gpu_nic_bw) * 1e9
        if metrics.peak_busbw <= PCIE_FACTOR * pcie and ratio >= 3:
            shm = [t for t in info.transports if t.startswith("SHM")]
            found.append(Finding(
                "pcie", "degraded", "a PCIe path, not NVLink",
                f"{where}, {ratio:.1f}x slower than the {expect}; a PCIe Gen"
                f"{5 if pcie > 30e9 else 4} x16 link carries about {_gbs(pcie)}"
                + (f"; NCCL's log shows transports {', '.join(shm)}" if shm else ""),
                "NVLink is not used: NCCL_P2P_DISABLE=1 or NCCL_P2P_LEVEL set too low, the fabric "
                "manager (nvidia-fabricmanager) not running, NVLinks down (nvidia-smi nvlink -s), "
                "or GPUs in separate containers that cannot share memory"))
            return
    # NVLS not in use: the model without NVLS explains the plateau far better
    nvls_forced = ("nvls" in machine.model_options or "algorithm" in machine.model_options
                   or any(out.info.choice(c.row.nbytes) for c in peak_rows))
    if system is not None and system.nvls and not nvls_forced \
            and (big.nccl_algorithm or "").startswith("NVLS"):
        alt = [model(c.row.nbytes, c.row.dtype, c.row.root, nvls=False) for c in peak_rows]
        alt_ratio = _median([c.measured_time / e.time for c, e in zip(peak_rows, alt)])
        if FAST <= alt_ratio <= slow and abs(math.log(alt_ratio)) < 0.5 * abs(math.log(ratio)):
            said = ""
            if info.nvls_available is False:
                said = "NCCL's log says 'NVLS multicast support is not available'; "
            elif info.nvls_channels == 0:
                said = "NCCL's log shows 0 nvls channels; "
            found.append(Finding(
                "nvls", "degraded", "NVLS (NVLink SHARP) not in use",
                f"{where}: {ratio:.2f}x slower than the {expect}, but {alt_ratio:.2f}x the "
                f"{_gbs(_median([e.busbw for e in alt]))} it expects without NVLS "
                f"({alt[-1].algorithm}/{alt[-1].protocol})",
                said + "NVLS is off or unavailable: NCCL_NVLS_ENABLE=0, NCCL older than 2.17, the "
                "fabric manager or its NVLink multicast not running (on GB200 also IMEX), a "
                "CUDA driver without multicast objects, or a container without the IMEX "
                "channels; NCCL then falls back to rings"))
            return
    small = metrics.floor_ratio
    if small is not None and small >= SMALL_TOO and 1 / 1.5 <= small / ratio <= 1.5:
        found.append(Finding(
            "slow-everywhere", "degraded", "slow at every size",
            f"{where}, {ratio:.2f}x the time of the {expect}; the small sizes too: "
            f"{small:.2f}x at {_size(8)} to {_size(SMALL)}",
            "the whole run is slowed, not one link: another job on the GPUs or links, GPU "
            "clocks throttled (power or heat: nvidia-smi -q -d PERFORMANCE), a debug build or "
            "NCCL_DEBUG=TRACE, or (across nodes) TCP sockets instead of InfiniBand"))
        return
    if not single:
        _network(out, machine, system, peak_rows, metrics, where, expect, found)
        return
    found.append(Finding(
        "slow", "degraded", "slower than the model at the plateau",
        f"{where}, {ratio:.2f}x the time of the {expect} (healthy single nodes stay below "
        f"{slow:g}x)",
        "fewer NVLinks than the GPU has (a link down: nvidia-smi nvlink -s), GPU clocks "
        "throttled, another job on the GPUs, or settings that cut NCCL's channels "
        "(NCCL_MAX_NCHANNELS, NCCL_MIN_CTAS)"))


def _network(out, machine, system, peak_rows, metrics, where, expect, found) -> None:
    info = out.info
    ratio = metrics.peak_ratio
    share = 1 / ratio
    nics = _nics_per_node(system, machine.topology) if system is not None else 8
    worth = share * nics
    k = max(1, round(worth))
    evidence = (f"{where}, {share:.0%} of the {expect}: about {worth:.1f} of the {nics} NICs a "
                f"node has")
    if machine.fabric_note:
        found.append(Finding(
            "model-limit", "unknown", "the model's network for this machine is an assumption",
            evidence + f"; {machine.fabric_note}",
            "the run may be healthy: a verdict needs the machine's real fabric (its NICs per "
            "GPU, its rails and switches)"))
        return
    causes = []
    for i, f in enumerate(found):
        if f.code in ("socket", "gdr", "nics"):       # NCCL's log named the cause: add the numbers
            found[i] = Finding(f.code, "degraded", f.title, f"{f.evidence}; {evidence}", f.cause)
            return
    if info.nics and len(info.nics) < nics:
        causes.append(f"NCCL's log lists {len(info.nics)} NICs ({', '.join(info.nics)}) for "
                      f"{nics} GPUs")
    if k >= nics - 1 and share < 1:
        found.append(Finding(
            "nic-down", "degraded", "a NIC or rail down (or a fabric below its best)",
            evidence + (f"; {causes[0]}" if causes else ""),
            "one NIC or one rail's switch port down or degraded (ibstat, ibdiagnet), "
            "NCCL_IB_HCA leaving a NIC out, or a fabric that needs tuning (adaptive routing, "
            "NCCL_IB_QPS_PER_CONNECTION, NCCL_MIN_CTAS)"))
        return
    title = (f"the network carries less than one NIC's worth of {nics}" if worth < 0.75 else
             f"the network carries about {k} NIC{'s' if k > 1 else ''}' worth of {nics}")
    found.append(Finding(
        "network", "degraded", title,
        evidence + (f"; {causes[0]}" if causes else ""),
        "NICs missing or slow: NCCL_IB_HCA naming too few, NICs not mapped to their GPUs "
        "(NCCL_TOPO_FILE in VMs), links trained below their rate (ibstat), PXN or GPUDirect "
        "RDMA off, or congestion from other jobs"))


def _notes(out: Output, machine: Machine, rows, metrics: Metrics, found: list) -> None:
    """What the output says that bears on the numbers but is no fault."""
    if out.stopped:
        found.append(Finding("partial", "note", "a partial table", out.stopped,
                             "the output was cut; every row read is compared"))
    empty = [r for r in out.rows if r.nbytes == 0]
    if empty:
        many = "s" if len(empty) > 1 else ""
        lines = ", ".join(str(r.line) for r in empty[:3])
        lines += ", ..." if len(empty) > 3 else ""
        found.append(Finding(
            "zero-size", "note", f"{len(empty)} row{many} of 0 bytes",
            f"line{many} {lines}: nccl-tests prints 0 B where the size asked is less "
            f"than one element (a rank's share, rounded down to 16 B, for all_gather, "
            f"reduce_scatter, alltoall, gather and scatter); nothing moves, so they "
            f"are not compared with the model and do not count in the verdict", ""))
    checked = [r for r in out.rows if r.out_of_place is not None and r.out_of_place.checked]
    if out.rows and not checked:
        found.append(Finding("unchecked", "note", "results not checked",
                             "'#wrong' is N/A: validation was off (-c 0), so corruption would "
                             "not show", ""))
    if machine.gpus_per_process and machine.gpus_per_process > 1:
        found.append(Finding(
            "launch", "note", machine.launch,
            f"one process launches the collective on its {machine.gpus_per_process} GPUs in turn: "
            f"its small-size floor is higher than with one process per GPU (mpirun -np N ... -g 1); "
            f"NCCL's model has no launch cost per GPU of a process, so the floor may read high "
            f"(threshold {FLOOR['per_process']:g}x instead of {FLOOR['per_gpu']:g}x)", ""))
    iters = out.header.get("iters")
    if iters is not None and iters <= 5:
        found.append(Finding("few-iters", "note", f"only {iters} timed iterations",
                             f"'iters: {iters}' in the header: each time is the mean of "
                             f"{iters} runs, noisy at small sizes", "run with -n 20 or more"))
    _notes_on_settings(out, machine, rows, found)


def _notes_on_settings(out: Output, machine: Machine, rows, found: list) -> None:
    """What the run's settings and NCCL's log say: NVLS off, an excerpt, edited counts,
    NCCL's own choices beside the model's."""
    opts = machine.model_options
    if opts.get("nvls") is False and machine.matched:
        system = _system(machine)
        if system is not None and system.nvls and machine.collective is Collective.ALL_REDUCE:
            top = max((c.row.nbytes for c in rows if c.expected_time), default=0)
            if top:
                on = _Model(machine)(top, out.rows[0].dtype, out.rows[0].root, nvls=True)
                found.append(Finding(
                    "nvls-off", "note", "NVLS switched off by the run's settings",
                    f"the output sets it off; with NVLS NCCL's model expects {_gbs(on.busbw)} at "
                    f"{_size(top)} ({on.algorithm}/{on.protocol})", ""))
    if out.avg_busbw is not None and out.rows:
        values = [t.busbw for r in out.rows for t in (r.out_of_place, r.in_place) if t is not None]
        mean = sum(values) / len(values)
        if mean > 0 and abs(mean - out.avg_busbw) > max(0.01, 0.005 * out.avg_busbw) and len(
                values) >= 2 and all(r.complete for r in out.rows):
            found.append(Finding(
                "excerpt", "note", "the table is an excerpt",
                f"the footer's Avg bus bandwidth ({out.avg_busbw:g}) is not the mean of the rows' "
                f"busbw ({mean:.4g}): rows were left out of what was pasted", ""))
    counts = [r for r in out.rows if r.count > 0 and r.nbytes > 0]
    if counts and machine.ranks:
        from ..units import element_size
        bad = [r for r in counts if not _count_ok(r, machine, element_size(r.dtype))]
        if bad:
            r = bad[0]
            found.append(Finding(
                "count", "note", "the count column does not match the size",
                f"line {r.line}: {r.count} elements of {r.type} for {r.nbytes} bytes over "
                f"{machine.ranks} ranks; nccl-tests prints them consistently, so the table was "
                f"edited", "only sizes and times are used"))
    info = out.info
    if info.present and info.nvls_available is False and not any(f.code == "nvls" for f in found):
        system = _system(machine)
        if system is not None and system.nvls:
            found.append(Finding("nvls", "note", "NVLS multicast not available",
                                 "NCCL's log says 'NVLS multicast support is not available'", ""))
    forced = {"NCCL_ALGO", "NCCL_PROTO"} & set(machine.settings)
    if machine.matched and out.info.choices and not forced:
        model = _Model(machine)
        differ = []
        for c in rows:
            how = logged(out, machine, c.row.nbytes)
            if how and c.expected_time:
                own = model(c.row.nbytes, c.row.dtype, c.row.root)
                if (own.algorithm, own.protocol) != (how["algorithm"], how["protocol"]):
                    differ.append((c.row.nbytes, how, own))
        if differ:
            n, how, own = differ[-1]
            found.append(Finding(
                "tuner", "note", "NCCL chose otherwise than the model's tuner",
                f"NCCL's log shows {how['algorithm']}/{how['protocol']} at {len(differ)} size(s) "
                f"where the model's tuner picks another (at {_size(n)}: {own.algorithm}/"
                f"{own.protocol}); the expected times above are the model's for what NCCL ran",
                "NCCL's tuner and the model's disagree here, or a setting the output does not show "
                "(NCCL_ALGO, NCCL_PROTO) chose for it"))
    if machine.collective is not None and machine.program == "sendrecv":
        found.append(Finding("sendrecv", "note", "sendrecv is timed as one send",
                             "each rank sends to the next; the model times one pair "
                             "(across a node boundary on several nodes), the slowest", ""))


def _count_ok(r: Row, machine: Machine, esize: int) -> bool:
    """nccl-tests' count column: size/element for the whole-array collectives, size/element/n
    for all-gather, reduce-scatter and all-to-all (count/nranks rounded down to 16 bytes);
    scatter_perf (no collective of the library's) splits as gather does."""
    n = machine.ranks
    whole = r.nbytes // esize
    coll = machine.collective
    per_rank = coll.splits if coll is not None else machine.program == "scatter"
    if per_rank:
        return r.count * n * esize == r.nbytes
    return r.count == whole
