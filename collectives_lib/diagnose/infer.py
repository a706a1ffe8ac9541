"""From what an nccl-tests output says to the machine NCCL's model stands for.

:func:`infer_machine` reads the collective (the binary's name, else the
table's own columns), the ranks, processes and hosts (the ``# Using
devices`` list, NCCL's ``comm … nRanks 16 nNodes 2`` line, else busbw/algbw,
which nccl-tests computes from the rank count), the GPU model (the device
name nccl-tests prints), the NCCL version and the settings the output states
(``NCCL_ALGO``, ``NCCL_PROTO``, ``NCCL_NVLS_ENABLE``, ``NCCL_COLLNET_ENABLE``),
and picks the nearest preset, saying which and why. A ``--topology`` given
by the reader replaces the guess but is still held to the table: its rank
count must be the table's.

The GPU models are one table, :data:`MACHINES`: a pattern on the device
name and the preset of :data:`collectives_lib.hardware.GPU_SYSTEMS` that
stands for it. A new preset is one more row. A device no row matches, a
network no preset models (AWS EFA, GCP's GPUDirect-TCPX/TCPXO) and a node
count that is not whole nodes of a preset leave the machine unmatched, and
the diagnosis ``unknown``.

>>> from collectives_lib.diagnose.parse import parse_output
>>> m = infer_machine(parse_output('''
... #  Rank  0 Group  0 Pid 1 on node1 device  0 [0x18] NVIDIA H100 80GB HBM3
... #  Rank  1 Group  0 Pid 2 on node1 device  1 [0x2a] NVIDIA H100 80GB HBM3
...    134217728      33554432     float     sum      -1    400.0  335.54  335.54      0    400.0  335.54  335.54      0
... '''))
>>> m.spec, m.collective.value, m.ranks
('dgx-h100:1 (2 of its 8 GPUs)', 'all_reduce', 2)

Introduced in the chapter *Running and reading NCCL*.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from .. import hardware as hw
from ..collective import Collective
from ..errors import CollectivesError
from ..nccl.comm import supports
from ..topology import GpuCluster, Switch, Topology, nvswitch_node, parse_topology
from .parse import Output


@dataclass(frozen=True)
class MachineRow:
    """One row of :data:`MACHINES`: a GPU model and the preset that stands for it."""

    pattern: str                 # regular expression on nccl-tests' device name (case-insensitive)
    system: str                  # a key of hardware.GPU_SYSTEMS: one host's GPUs
    domain: str | None = None    # a key of GPU_SYSTEMS whose NVLink spans several hosts (a rack)
    fabric_note: str = ""        # what the preset assumes about its scale-out network

    def matches(self, name: str) -> bool:
        return re.search(self.pattern, name, re.I) is not None


#: GPU models and presets, first match wins. The SXM parts on an NVSwitch baseboard; PCIe
#: cards, the NVL (PCIe + bridge) parts and the export variants (H800, H20) match no row, nor
#: the A100-SXM-64GB, made for 4-GPU boards whose GPUs are joined pairwise by NVLink without
#: an NVSwitch (CINECA's Leonardo: nccl-tests#331).
MACHINES: tuple[MachineRow, ...] = (
    MachineRow(r"\bH100\b(?!.*\b(?:PCIe|NVL)\b)", "dgx-h100"),
    MachineRow(r"\bH200\b(?!.*\bNVL\b)", "dgx-h200"),
    MachineRow(r"\bA100[- ]SXM(?!.*\b64GB\b)", "dgx-a100"),
    MachineRow(r"(?<!G)\bB200\b", "dgx-b200"),
    MachineRow(r"\bGB200\b", "gb200-tray", domain="gb200-nvl72",
               fabric_note="the book groups an NVL72 rack's 72 NICs into 8 rails, as in 8-GPU "
                           "nodes: an assumption (hardware.GPU_SYSTEMS['gb200-nvl72'].notes)"),
    MachineRow(r"(?<!G)\bB300\b", "dgx-b300"),
    MachineRow(r"\bGB300\b", "gb300-tray", domain="gb300-nvl72",
               fabric_note="the book groups an NVL72 rack's NICs into 8 rails, as in 8-GPU "
                           "nodes: an assumption (hardware.GPU_SYSTEMS['gb300-nvl72'].notes)"),
)

#: What the model assumes about a scale-out fabric where it cannot vouch for the bandwidth.
FABRIC_NOTES = {
    "gib": ("Google's gIB plugin is not public: the model's latency for it is fitted and its "
            "bandwidth is the NICs'; Google's own A3 Ultra (H200) reference runs fall short of "
            "that at the plateau by about what one NIC down would cost (the book's data: "
            "gke-a3ultra-h200x8-2node-roce-allgather-clustertoolkit and -skypilot), while its "
            "A4 (B200) run meets it"),
}


def _fabric_note(topo, note: str) -> str:
    """The preset's note, and the fabric's when the model cannot vouch for its bandwidth."""
    extra = FABRIC_NOTES.get(getattr(topo, "fabric", "")) if isinstance(topo, GpuCluster) else None
    return "; ".join(x for x in (note, extra) if x)


#: Device names of GPUs a driver does not name yet, and what the reader can do.
UNNAMED = ("Graphics Device",)

#: Networks NCCL reports (``Using network X``) that no preset models, and what they are.
UNMODELLED_NETWORKS = {
    "AWS Libfabric": "AWS EFA (libfabric through aws-ofi-nccl)",
    "Libfabric": "libfabric (AWS EFA or another OFI provider)",
    "FasTrak": "GCP GPUDirect-TCPXO (FasTrak)",
    "GPUDirectTCPX": "GCP GPUDirect-TCPX",
}

#: NCCL_ALGO's names (any case) and the library's.
ALGORITHMS = {"ring": "ring", "tree": "tree", "nvls": "nvls", "nvlstree": "nvls_tree",
              "nvls_tree": "nvls_tree", "collnetdirect": "collnet_direct",
              "collnet_direct": "collnet_direct", "collnetchain": "collnet_chain",
              "collnet_chain": "collnet_chain", "pat": "pat"}
PROTOCOLS = {"ll": "LL", "ll128": "LL128", "simple": "SIMPLE"}

#: The NCCL settings NCCL's model here reads; any other is noted as not modelled.
MODELLED = ("NCCL_ALGO", "NCCL_PROTO", "NCCL_NVLS_ENABLE", "NCCL_COLLNET_ENABLE")

#: busbw / algbw of each binary (its GetBw in src/*.cu): "ar" 2(n-1)/n, "n1" (n-1)/n,
#: "one" 1.
FAMILY = {"all_reduce": "ar", "all_gather": "n1", "reduce_scatter": "n1",
          "alltoall": "n1", "gather": "n1", "scatter": "n1", "alltoallv": "n1",
          "broadcast": "one", "reduce": "one", "sendrecv": "one", "hypercube": "one"}
#: The binaries with a root: they print the root rank (0 to n-1; -r -1 runs each in
#: turn); the others print -1.
ROOTED = ("broadcast", "reduce", "gather", "scatter")

#: nccl-tests' binaries and the library's collectives (scatter and hypercube have no model).
PROGRAM_COLLECTIVE = {"all_reduce": "all_reduce", "all_gather": "all_gather",
                      "reduce_scatter": "reduce_scatter", "alltoall": "all_to_all",
                      "broadcast": "broadcast", "reduce": "reduce", "sendrecv": "send",
                      "gather": "gather"}


@dataclass(frozen=True)
class Machine:
    """What ran, as far as the output says, and the preset that stands for it."""

    program: str                         # nccl-tests' name: all_reduce, alltoall, sendrecv, ...
    collective: Collective | None        # None: no model (scatter, hypercube)
    ranks: int | None
    hosts: int | None                    # distinct hosts named, or None
    processes: int | None
    gpus_per_process: int | None         # nccl-tests' -g (and -t): 1 is one process per GPU
    gpu: str | None                      # the device name printed
    nccl_version: str | None
    settings: dict = field(default_factory=dict)   # NCCL_* the output states
    topology: Topology | None = field(default=None, repr=False)
    spec: str | None = None              # the preset, as --topology would write it
    system: str | None = None            # hardware.GPU_SYSTEMS key
    why: tuple[str, ...] = ()            # how each fact was read, one sentence each
    unmatched: str | None = None         # why no preset stands for the machine
    fabric_note: str = ""                # the preset's assumption about the network, if any
    model_options: dict = field(default_factory=dict)   # estimate()'s algorithm/protocol/nvls

    @property
    def matched(self) -> bool:
        return self.topology is not None and self.collective is not None

    @property
    def nodes(self) -> int:
        """Hosts, or nodes of the preset (1 for a single node)."""
        if isinstance(self.topology, GpuCluster):
            return self.topology.num_nodes
        return self.hosts or 1

    @property
    def launch(self) -> str:
        g = self.gpus_per_process
        if g is None:
            return "launch mode not stated"
        if g == 1:
            return "one process per GPU"
        return f"one process drives {g} GPUs (-g {g})"


def nccl_version_of(code: int) -> str:
    """nccl-tests' ``nccl-library=22902`` as ``2.29.2`` (NCCL_VERSION_CODE)."""
    if code >= 10000:
        return f"{code // 10000}.{code // 100 % 100}.{code % 100}"
    return f"{code // 1000}.{code // 100 % 10}.{code % 100}"


def _collective(out: Output, ranks_hint: int | None) -> tuple[str, str]:
    """nccl-tests' program and how it was read: its name if printed, else the table's
    columns (root, redop, busbw/algbw)."""
    first = out.rows[0]
    rooted = first.root is not None and first.root >= 0
    reduces = first.redop not in (None, "none")
    ratio = out.busbw_ratio()
    if out.program:
        prog = out.program
        _check_program(out, prog, rooted, ratio)
        return prog, f"the output names {prog}_perf"
    if ratio is None:
        raise CollectivesError(
            "the table alone does not say which collective ran (no row reaches 1 GB/s, so "
            "busbw/algbw is not known) and the output does not name the binary: keep the line "
            "that ran it (all_reduce_perf ...) or the '# Collective test starting' line")
    lo, hi = ratio
    if rooted:
        if lo <= 1.0 <= hi:
            return ("reduce" if reduces else "broadcast"), (
                f"root {first.root} and {'a reduction' if reduces else 'no reduction'} in every "
                f"row, busbw = algbw")
        return "gather", ("root and busbw = algbw x (n-1)/n: gather (or scatter, which reads the "
                          "same; gather assumed)")
    in_place_na = all(r.in_place is not None and r.in_place.wrong is None
                      and r.out_of_place is not None and r.out_of_place.checked for r in out.rows)
    if reduces:
        if lo > 1.0:
            return "all_reduce", f"a reduction and busbw/algbw = {lo:.4g} (2(n-1)/n)"
        if hi < 1.0:
            return "reduce_scatter", f"a reduction and busbw/algbw = {lo:.4g} ((n-1)/n)"
        if ranks_hint is not None and ranks_hint > 2:
            return "sendrecv", f"busbw = algbw over {ranks_hint} ranks: sendrecv"
        if in_place_na:
            return "sendrecv", ("busbw = algbw and '#wrong' N/A in place (nccl-tests does not "
                                "check sendrecv in place): sendrecv")
        return "all_reduce", ("busbw = algbw: an all-reduce over 2 ranks (sendrecv reads the "
                              "same; all-reduce assumed)")
    if lo <= 1.0 <= hi:
        return "sendrecv", "no reduction and busbw = algbw"
    if in_place_na:
        return "alltoall", ("no reduction, busbw = algbw x (n-1)/n and '#wrong' N/A in place: "
                            "alltoall")
    return "all_gather", ("no reduction and busbw = algbw x (n-1)/n: all_gather (alltoall "
                          "reads the same; all_gather assumed)")


def _check_program(out: Output, prog: str, rooted: bool, ratio) -> None:
    """The binary the output names against its table."""
    wants_reduce = prog in PROGRAM_COLLECTIVE and Collective(PROGRAM_COLLECTIVE[prog]).reduces
    for r in out.rows:              # every sweep's redop (-o all): the first one wrong
        reduces = r.redop not in (None, "none")
        if r.redop is not None and reduces != wants_reduce and prog != "sendrecv":
            where = "" if r is out.rows[0] else f" (line {r.line})"
            raise CollectivesError(
                f"the output names {prog}_perf but its table's redop is "
                f"{r.redop!r}{where}: the table contradicts its header")
    if ratio is None:
        return
    lo, hi = ratio
    family = FAMILY.get(prog)
    ok = {"ar": hi >= 1.0 or lo < 1e-6, "n1": lo < 1.0, "one": lo <= 1.0 <= hi}.get(family, True)
    if not ok:
        raise CollectivesError(
            f"the output names {prog}_perf but busbw/algbw in its table is {lo:.4g}, which "
            f"{prog} never prints: the table contradicts its header")


def _ranks(out: Output, program: str, per_node: int | None = None) -> tuple[int | None, str]:
    whole = out.whole_device_count()
    if whole is not None:
        return whole, f"{whole} ranks in the '# Using devices' list"
    if out.info.nranks:
        return out.info.nranks, f"NCCL's log says nRanks {out.info.nranks}"
    allowed = out.ranks_from_table()
    if allowed is not None:
        lo, hi = allowed
        listed = max((d.rank for d in out.devices), default=-1) + 1
        if lo == hi:
            return lo, f"busbw/algbw in the table gives {lo} ranks"
        if lo <= listed <= hi:
            return listed, (f"busbw/algbw allows {lo} to {hi} ranks and the device list shows "
                            f"rank {listed - 1}: {listed} ranks")
        mid = (lo + hi) / 2
        if per_node:
            whole = [n for n in range(lo, hi + 1) if n % per_node == 0]
            if whole:
                n = min(whole, key=lambda k: abs(k - mid))
                return n, (f"busbw/algbw allows {lo} to {hi} ranks: {n}, the whole nodes of "
                           f"{per_node} GPUs nearest the middle")
        return round(mid), f"busbw/algbw allows {lo} to {hi} ranks: about {round(mid)}"
    header = out.header
    if header.get("nGpus") and out.runs == 1 and out.devices and len({d.pid for d in out.devices}) == 1:
        n = header["nGpus"] * header.get("nThread", 1)
        return n, f"one process with nGpus {header['nGpus']}"
    if out.devices and not out.devices_elided and out.runs == 1:
        return len(out.devices), f"{len(out.devices)} ranks listed"
    return None, "the output does not say how many ranks ran (busbw = algbw for this collective)"


def _fits(lo: float, hi: float, scale: float) -> tuple[float, float]:
    """The rank counts n whose scale x (n-1)/n lies in [lo, hi] (real bounds)."""
    low = 1.0 if lo <= 0 else (scale / (scale - lo) if lo < scale else math.inf)
    high = scale / (scale - hi) if hi < scale else math.inf
    return low, high


def _check_factor(out: Output, prog: str, ranks: int | None, how: str) -> None:
    """busbw/algbw in the table is the binary's factor for a whole rank count, and for
    the rank count the output says (nccl-tests' GetBw: 2(n-1)/n for all_reduce,
    (n-1)/n for all_gather, reduce_scatter, alltoall, gather and scatter)."""
    ratio = out.busbw_ratio()
    family = FAMILY.get(prog)
    if ratio is None or family not in ("ar", "n1"):
        return
    lo, hi = ratio
    scale = 2.0 if family == "ar" else 1.0
    formula = "2(n-1)/n" if family == "ar" else "(n-1)/n"
    mid = (lo + hi) / 2
    low, high = _fits(lo, hi, scale)
    said = (f"busbw/algbw in the table is {mid:.4g} ({lo:.4g} to {hi:.4g} after "
            f"rounding)")
    if math.floor(high + 1e-9) < math.ceil(low - 1e-9):          # no whole rank count
        n = max(1, math.floor(scale / (scale - mid))) if mid < scale else None
        near = (f": {formula} is {scale * (n - 1) / n:.4g} for {n} ranks and "
                f"{scale * n / (n + 1):.4g} for {n + 1}" if n else "")
        raise CollectivesError(
            f"{said}, but {prog}_perf prints busbw = algbw x {formula}, and no rank "
            f"count n gives it{near}: the table contradicts itself")
    if ranks is not None and not low - 1e-9 <= ranks <= high + 1e-9:
        raise CollectivesError(
            f"{said}, but {prog}_perf over {ranks} ranks ({how}) prints busbw = algbw "
            f"x {formula} = {scale * (ranks - 1) / ranks:.4g}: the table contradicts "
            f"itself")


def _check_roots(out: Output, prog: str, ranks: int | None) -> None:
    """nccl-tests prints the root rank of a rooted collective (0 to n-1; -r -1 runs
    every root in turn) and -1 for the others (src/*.cu, TimeTest's root)."""
    rooted = prog in ROOTED
    for r in out.rows:
        if r.root is None:
            continue
        if rooted and (r.root < 0 or (ranks and r.root >= ranks)):
            span = f"0 to {ranks - 1} over {ranks} ranks" if ranks else "0 or more"
            raise CollectivesError(
                f"line {r.line}: root {r.root}: {prog}_perf prints the root rank "
                f"there, {span} (-r R; -r -1 runs every root in turn): the table "
                f"contradicts itself")
        if not rooted and r.root != -1:
            raise CollectivesError(
                f"line {r.line}: root {r.root}: {prog}_perf has no root and prints -1 "
                f"there: the table contradicts itself")


def _launch(out: Output) -> tuple[int | None, int | None, str]:
    """(processes, GPUs per process, how it was read)."""
    h = out.header
    whole = out.whole_device_count()
    if whole and all(d.pid is not None for d in out.devices):
        procs = len({(d.host, d.pid) for d in out.devices})
        if whole % procs == 0:
            return procs, whole // procs, "the device list's process ids"
    if "nGpus" in h:
        per = h["nGpus"] * h.get("nThread", 1)
        procs = None
        if out.devices and not out.devices_elided:
            procs = len({(d.host, d.pid) for d in out.devices})
        return procs, per, f"nGpus {h['nGpus']} in the header"
    if out.gpus_flag is not None:
        return None, out.gpus_flag, f"-g {out.gpus_flag} on the command line"
    return None, None, ""


def _settings(out: Output) -> dict[str, str]:
    """NCCL_* as the output states them: NCCL's 'set by environment' lines win over a
    command line's."""
    s = dict(out.settings)
    s.update(dict(out.info.settings))
    return s


def _model_options(settings: dict, collective: Collective | None, version: str | None,
                   why: list[str], has_nvls: bool | None = None) -> dict:
    """estimate()'s algorithm, protocol and nvls from NCCL_ALGO, NCCL_PROTO,
    NCCL_NVLS_ENABLE and the NCCL version (no NVLS before 2.17)."""
    opts: dict = {}
    algo = settings.get("NCCL_ALGO")
    if algo:
        names = [a.strip().lower() for a in algo.split(",") if a.strip()]
        if len(names) == 1 and not names[0].startswith("^") and names[0] in ALGORITHMS:
            # NCCL chooses an algorithm for every collective it does not run as sends
            if collective is not None and not collective.personalised:
                opts["algorithm"] = ALGORITHMS[names[0]]
                why.append(f"NCCL_ALGO={algo}: the model times {ALGORITHMS[names[0]]}")
        elif all(n.lstrip("^") in ("nvls", "nvlstree", "nvls_tree") for n in names) and algo.startswith("^"):
            opts["nvls"] = False
            why.append(f"NCCL_ALGO={algo} leaves NVLS out: the model without NVLS")
        else:
            why.append(f"NCCL_ALGO={algo} is a list the model does not restrict itself to: "
                       f"NCCL's own choice is timed")
    proto = settings.get("NCCL_PROTO")
    if proto:
        p = proto.strip().lower()
        if p in PROTOCOLS and collective is not None and not collective.personalised:
            opts["protocol"] = PROTOCOLS[p]
            why.append(f"NCCL_PROTO={proto}: the model uses {PROTOCOLS[p]}")
        else:
            why.append(f"NCCL_PROTO={proto}: not one protocol; NCCL's own choice is timed")
    nvls = settings.get("NCCL_NVLS_ENABLE")
    if nvls is not None:
        value = nccl_int(nvls, whole=False)
        read = "" if nccl_int(nvls) is not None else f" (NCCL reads it as {value})"
        if value == 2:
            why.append(f"NCCL_NVLS_ENABLE={nvls}{read}: NCCL's default (NVLS where "
                       f"the GPUs support NVLink multicast): the model's own choice")
        elif value != 0 and has_nvls is False:
            why.append(f"NCCL_NVLS_ENABLE={nvls}{read}: these GPUs' NVSwitches have no "
                       f"NVLink SHARP, so NCCL runs without NVLS, as the model does")
        else:
            opts["nvls"] = value != 0
            why.append(f"NCCL_NVLS_ENABLE={nvls}{read}: the model with NVLS "
                       f"{'on' if opts['nvls'] else 'off'}"
                       + (" (NCCL forces NVLS on for any value but 0 and 2)"
                          if value not in (0, 1) else ""))
    if version and "nvls" not in opts:
        major, minor = (int(x) for x in version.split(".")[:2])
        if (major, minor) < (2, 17):
            opts["nvls"] = False
            why.append(f"NCCL {version} has no NVLS (it came in 2.17): the model without it")
    return opts


_NCCL_INT = re.compile(r"\s*([+-]?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)")


def nccl_int(text: str, whole: bool = True) -> int | None:
    """An integer setting as NCCL reads it (``strtoll(text, NULL, 0)``: decimal, 0x
    hex, 0 octal): the whole text (None if it is not one), or with ``whole=False`` its
    leading integer, 0 without one."""
    m = _NCCL_INT.fullmatch(text.strip()) if whole else _NCCL_INT.match(text)
    if m is None:
        return None if whole else 0
    body = m.group(2)
    if body[:2].lower() == "0x":
        value = int(body, 16)
    else:
        value = int(body, 8) if body[0] == "0" else int(body)
    return -value if m.group(1) == "-" else value


def _check_env(env: dict, why: list[str]) -> None:
    """The settings the reader gives (--env): a value NCCL does not take for a setting
    the model reads is refused; a setting it does not read is said."""
    for key, value in env.items():
        if key == "NCCL_NVLS_ENABLE" and nccl_int(value) is None:
            raise CollectivesError(
                f"NCCL_NVLS_ENABLE={value} given: NCCL reads an integer there (0: "
                f"off; 2, its default: on where the GPUs support NVLink multicast; any "
                f"other: on)")
        if key == "NCCL_COLLNET_ENABLE" and nccl_int(value) not in (0, 1):
            raise CollectivesError(
                f"NCCL_COLLNET_ENABLE={value} given: NCCL takes 0 or 1 (it resets any "
                f"other value to 0)")
        if key not in MODELLED:
            also = " (only the NIC finding reads it)" if key == "NCCL_IB_HCA" else ""
            why.append(f"{key}={value} given: not modelled{also}; NCCL's model here "
                       f"reads NCCL_ALGO, NCCL_PROTO, NCCL_NVLS_ENABLE and "
                       f"NCCL_COLLNET_ENABLE, so the expected times do not reflect it")


def _guess(row: MachineRow, ranks: int, hosts: int | None, mnnvl: bool | None,
           why: list[str]) -> tuple[Topology | None, str | None, str | None]:
    """(topology, spec, why not) for ranks of one GPU model."""
    per_host = hw.gpu_system(row.system).gpus_per_node
    if row.domain and row.domain in hw.GPU_SYSTEMS:
        rack = hw.gpu_system(row.domain).gpus_per_node
        if ranks <= per_host and (hosts or 1) == 1:
            spec = f"{row.system}:1"
        elif ranks % rack == 0:
            spec = f"{row.domain}:{ranks // rack}"
            why.append(f"{ranks} ranks are {ranks // rack} whole {row.domain} rack(s)")
        elif ranks < rack and mnnvl is not False:
            why.append(f"{ranks} ranks over several trays: a part of one {row.domain} rack's NVLink "
                       f"domain (MNNVL{'' if mnnvl else ', assumed'})")
            return nvswitch_node(row.domain, gpus=ranks), f"{row.domain}:1 ({ranks} of its {rack} GPUs)", None
        elif ranks % per_host == 0 and mnnvl is False:
            spec = f"{row.system}:{ranks // per_host}"
            why.append(f"MNNVL 0: {ranks // per_host} trays joined by their NICs")
        else:
            return None, None, (f"{ranks} ranks are neither whole {row.domain} racks ({rack} GPUs) "
                                f"nor part of one")
        return _spec_topology(spec, ranks), _label(spec, ranks), None
    if hosts is None:
        hosts = 1 if ranks <= per_host else None
        if hosts is None:
            if ranks % per_host:
                return None, None, (f"{ranks} ranks are not whole {row.system} nodes of {per_host} "
                                    f"GPUs and the output names no hosts")
            hosts = ranks // per_host
            why.append(f"the output names no hosts: {hosts} nodes of {per_host} GPUs assumed")
    if hosts == 1:
        if ranks > per_host:
            return None, None, f"{ranks} ranks on one host: a {row.system} node has {per_host} GPUs"
        return _spec_topology(f"{row.system}:1", ranks), _label(f"{row.system}:1", ranks), None
    if ranks != hosts * per_host:
        return None, None, (f"{ranks} ranks on {hosts} hosts are not whole {row.system} nodes of "
                            f"{per_host} GPUs: no preset has {ranks / hosts:g} GPU{'' if ranks == hosts else 's'} per node")
    return _spec_topology(f"{row.system}:{hosts}", ranks), _label(f"{row.system}:{hosts}", ranks), None


def _label(spec: str, ranks: int) -> str:
    kind, _, m = spec.partition(":")
    if m == "1" and kind in hw.GPU_SYSTEMS and ranks < hw.gpu_system(kind).gpus_per_node:
        return f"{spec} ({ranks} of its {hw.gpu_system(kind).gpus_per_node} GPUs)"
    return spec


def _spec_topology(spec: str, ranks: int) -> Topology:
    topo = parse_topology(spec)
    if isinstance(topo, Switch) and ranks < topo.num_ranks:
        topo = nvswitch_node(topo.name, gpus=ranks)
    return topo


def _given(topology, ranks: int | None, why: list[str]) -> tuple[Topology, str]:
    """The reader's --topology, held to the table's rank count."""
    if isinstance(topology, str):
        spec = topology
        kind = topology.strip().lower().split(":", 1)[0]
        generic = kind in ("ring", "chain", "torus", "mesh", "switch")
        if generic or kind.startswith("tpu"):
            raise CollectivesError(_not_a_gpu_preset(repr(topology)))
        topo = parse_topology(topology)
    elif isinstance(topology, Topology):
        topo, spec = topology, repr(topology)
    else:
        raise CollectivesError(f"topology must be a spec such as 'dgx-h100:2' or a topology value, "
                               f"got {type(topology).__name__}")
    if not supports(topo):
        raise CollectivesError(_not_a_gpu_preset(spec))
    if ranks is not None and topo.num_ranks != ranks:
        if isinstance(topo, Switch) and topo.name in hw.GPU_SYSTEMS and ranks < topo.num_ranks:
            why.append(f"the table has {ranks} ranks: {ranks} of the {topo.num_ranks} GPUs of "
                       f"{spec}")
            return nvswitch_node(topo.name, gpus=ranks), f"{spec} ({ranks} of its {topo.num_ranks} GPUs)"
        raise CollectivesError(f"topology {spec} has {topo.num_ranks} ranks but the table has "
                               f"{ranks} (busbw/algbw and the header say so): give the machine "
                               f"that ran it")
    why.append(f"machine given: {spec}")
    return topo, spec


def _not_a_gpu_preset(spec: str) -> str:
    presets = ", ".join(f"{k}:M" for k in (*hw.GPU_SYSTEMS, *hw.CLUSTER_PRESETS))
    return (f"topology {spec} is not a GPU machine: diagnose times the table with "
            f"NCCL's model, which needs one of the GPU presets ({presets}; M nodes, "
            f"trays or racks; :gpus=G for G GPUs of a node)")


def _system_of(topo: Topology) -> str | None:
    if isinstance(topo, GpuCluster):
        return topo.system.name
    if isinstance(topo, Switch) and topo.name in hw.GPU_SYSTEMS:
        return topo.name
    return None


def infer_machine(out: Output, topology=None, env: dict | None = None) -> Machine:
    """The machine an output ran on and the preset that stands for it (see the module)."""
    why: list[str] = []
    ranks_hint = out.whole_device_count() or out.info.nranks
    program, how = _collective(out, ranks_hint)
    why.append(f"collective: {how}")
    coll = Collective(PROGRAM_COLLECTIVE[program]) if program in PROGRAM_COLLECTIVE else None
    names = sorted({d.name for d in out.devices if d.name})
    row = next((r for r in MACHINES if names and r.matches(names[0])), None)
    per_node = hw.gpu_system(row.system).gpus_per_node if row and row.system in hw.GPU_SYSTEMS else None
    ranks, how = _ranks(out, program, per_node)
    why.append(how)
    _check_factor(out, program, ranks, how)
    _check_roots(out, program, ranks)
    hosts = len({d.host for d in out.devices}) if out.whole_device_count() else None
    if out.info.nnodes:
        hosts = out.info.nnodes
    procs, per_process, how = _launch(out)
    if how:
        why.append(f"launch: {how}")
    gpu = names[0] if names else None
    version = out.info.version or (nccl_version_of(out.nccl_library) if out.nccl_library else None)
    settings = _settings(out)
    given = {str(key): str(value) for key, value in (env or {}).items()}
    settings.update(given)
    system = hw.gpu_system(row.system) if row and row.system in hw.GPU_SYSTEMS else None
    opts = _model_options(settings, coll, version, why,
                          None if system is None else bool(system.nvls))
    _check_env(given, why)
    base = dict(program=program, collective=coll, ranks=ranks, hosts=hosts, processes=procs,
                gpus_per_process=per_process, gpu=gpu, nccl_version=version, settings=settings,
                model_options=opts)
    if coll is None:
        return Machine(**base, why=tuple(why), unmatched=f"no model for {program}")
    if len(names) > 1:
        why.append(f"several GPU models: {', '.join(names)}")
    if topology is not None:
        topo, spec = _given(topology, ranks, why)
        if ranks is None:
            _check_roots(out, program, topo.num_ranks)
        system = _system_of(topo)
        note = ""
        for row in MACHINES:
            if row.domain == system and isinstance(topo, GpuCluster):
                note = row.fabric_note
        return Machine(**base, topology=_with_collnet(topo, settings, why), spec=spec,
                       system=system, why=tuple(why), fabric_note=_fabric_note(topo, note))
    if ranks is None:
        return Machine(**base, why=tuple(why), unmatched="the rank count is not known")
    if out.runs > 1:
        return Machine(**base, why=tuple(why),
                       unmatched=f"{out.runs} separate runs (one '# nThread' header each): not one "
                                 f"communicator")
    network = out.info.network or ""
    for key, what in UNMODELLED_NETWORKS.items():
        if key.lower() in network.lower() and (hosts or 1) > 1:
            return Machine(**base, why=tuple(why),
                           unmatched=f"the network is {what}: no preset models it")
    if gpu is None:
        return Machine(**base, why=tuple(why),
                       unmatched="the output names no GPU (no '#  Rank ... device' line): give "
                                 "--topology")
    if any(u in gpu for u in UNNAMED):
        return Machine(**base, why=tuple(why),
                       unmatched=f"the driver does not name the GPU ({gpu!r}, as early drivers "
                                 f"print for GB200): give --topology")
    row = next((r for r in MACHINES if r.matches(gpu)), None)
    if row is None or row.system not in hw.GPU_SYSTEMS:
        return Machine(**base, why=tuple(why),
                       unmatched=f"no preset for {gpu!r} (presets: "
                                 f"{', '.join(r.system for r in MACHINES)})")
    why.append(f"GPU: {gpu!r} is {hw.gpu_system(row.system).gpu} ({row.system})")
    topo, spec, why_not = _guess(row, ranks, hosts, out.info.mnnvl, why)
    if topo is None:
        return Machine(**base, why=tuple(why), unmatched=why_not, system=row.system)
    if hosts is not None and hosts > 1:
        why.append(f"{hosts} hosts")
    note = row.fabric_note if isinstance(topo, GpuCluster) and row.domain and spec.startswith(row.domain) else ""
    return Machine(**base, topology=_with_collnet(topo, settings, why), spec=spec,
                   system=row.system if not spec.startswith(str(row.domain)) else row.domain,
                   why=tuple(why), fabric_note=_fabric_note(topo, note))


def _with_collnet(topo: Topology, settings: dict, why: list[str]) -> Topology:
    """NCCL_COLLNET_ENABLE=1 on a cluster: InfiniBand SHARP in the fabric."""
    if nccl_int(settings.get("NCCL_COLLNET_ENABLE", "0"), whole=False) == 1 \
            and isinstance(topo, GpuCluster) \
            and not topo.sharp:
        why.append("NCCL_COLLNET_ENABLE=1: a fabric with InfiniBand SHARP")
        return GpuCluster(topo.system.name, topo.num_nodes, sharp=True)
    return topo
