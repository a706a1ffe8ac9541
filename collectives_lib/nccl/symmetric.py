"""NCCL's symmetric-memory kernels (2.27 and later): what runs on registered buffers.

When both buffers of a collective are registered as symmetric windows
(``ncclCommWindowRegister``; nccl-tests ``-R 2``) on a communicator joined
entirely by NVLink, NCCL runs one of its symmetric kernels instead of its ring,
tree or NVLS algorithms, picked by their own cost model (NCCL 2.30.7,
``src/sym_kernels.cc``, ``queryModel_lsa`` and ``ncclSymkPickKernel``; the
scheduler falls back to the usual algorithms only when no kernel applies,
``src/scheduler/symmetric_sched.cc``). This module restates that model: each
kernel's time is

    baseLat + softplus(busBytes / bw - 1),   bw = softmin(nBlocks * smBw * mul, peakBw)

in microseconds, with the kernel's bus bytes (the LL kernels count nine times
the bytes: twice for flags, plus processing), NCCL's per-SM and peak bandwidths
(Hopper, Blackwell) and the fewest blocks within 2.5% of the most; NCCL picks
the least ``time * (1 + 0.025 * blocks)``.

>>> from collectives_lib.nccl.tuner import Comm
>>> comm = Comm.for_system("dgx-h100", nodes=1, ppn=4)
>>> k = pick("all_reduce", 4 * 2**20, comm)
>>> k.name, k.blocks, round(k.time * 1e6, 1)
('AllReduce_RSxLDMC_AGxSTMC', 3, 17.0)

Introduced in the chapter *Measure it yourself* (registered buffers).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..collective import Collective
from .tuner import Comm, function

SOURCE = "nccl-symk-2.30"

#: NCCL's kernels (sym_kernels.cc kernelName), with what each one needs.
KERNELS = {
    "AllReduce": ("AllReduce_AGxLL_R", "AllReduce_AGxLLMC_R", "AllReduce_RSxLD_AGxST",
                  "AllReduce_RSxLDMC_AGxSTMC"),
    "AllGather": ("AllGather_LL", "AllGather_LLMC", "AllGather_ST", "AllGather_STMC"),
    "ReduceScatter": ("ReduceScatter_LL", "ReduceScatter_LD", "ReduceScatter_LDMC"),
}
#: Kernels that use the switch's multicast (stores or loads): they need NVLS and more than 2 ranks.
MULTICAST = frozenset({"AllReduce_AGxLLMC_R", "AllReduce_RSxLDMC_AGxSTMC", "AllGather_LLMC",
                       "AllGather_STMC", "ReduceScatter_LDMC"})
#: Kernels that reduce in the switch (multimem loads): NVLS's element types only.
SWITCH_REDUCE = frozenset({"AllReduce_RSxLDMC_AGxSTMC", "ReduceScatter_LDMC"})
LL_KERNELS = frozenset({"AllReduce_AGxLL_R", "AllReduce_AGxLLMC_R", "AllGather_LL", "AllGather_LLMC",
                        "ReduceScatter_LL"})
LL_BUS_FACTOR = 9.0          # "2X the bytes, plus some processing, plus no unrolling"
MAX_BLOCKS = 64              # ncclSymkMaxBlocks
SM_PENALTY = 0.025           # 2.5% more time per SM in the pick
GBPS = (1 << 30) / 1e6       # NCCL's "GBps": bytes per microsecond
#: Element types the kernels reduce (ncclSymkImplemented: floating point but not double).
REDUCE_DTYPES = frozenset({"float32", "float", "float16", "half", "bfloat16", "float8_e4m3", "float8_e5m2"})
#: Element types the switch reduces for them (hasLDMC), fp8 only from SM100.
SWITCH_DTYPES = frozenset({"float32", "float", "float16", "half", "bfloat16", "float64", "double",
                           "int32", "uint32", "int64", "uint64"})


@dataclass(frozen=True)
class Kernel:
    """One symmetric kernel's prediction: its name, blocks and time (s)."""

    name: str
    blocks: int
    time: float
    base: float = 0.0            # the kernel's base latency (s)

    @property
    def protocol(self) -> str:
        return "LL" if self.name in LL_KERNELS else "SIMPLE"

    @property
    def in_network(self) -> bool:
        return self.name in SWITCH_REDUCE

    @property
    def multicast(self) -> bool:
        return self.name in MULTICAST


def applies(collective, comm: Comm) -> bool:
    """Whether NCCL has a symmetric kernel for ``collective`` here: one NVLink domain
    (``isAllDirectNvlink``), all-gather, or all-reduce / reduce-scatter of a
    floating-point type other than double."""
    func = _func(collective)
    if func is None or comm.nodes != 1 or comm.nranks < 2:
        return False
    return not Collective(collective).reduces or comm.dtype in REDUCE_DTYPES   # a copy: any type


def _func(collective) -> str | None:
    coll = Collective(collective)
    if coll.rooted or coll.personalised:      # symmetric kernels: every rank plays one part
        return None
    return function(coll)


def _softmin(x: float, ceiling: float, softness: float) -> float:
    return ceiling - softness * math.log1p((math.exp(ceiling / softness) - 1) * math.exp(-x / softness))


def _softplus(x: float, softness: float) -> float:
    z = x / softness
    return x if z >= 100.0 else softness * math.log1p(math.exp(z))


def _model(bus_bytes: float, base_lat: float, blocks: int, sm_bw: float, mul: float, peak: float) -> float:
    bw = _softmin(blocks * sm_bw * mul, peak, sm_bw)
    return base_lat + _softplus(bus_bytes / bw - 1, 1)


def _query(name: str, nbytes: int, comm: Comm) -> Kernel:
    """queryModel_lsa: the kernel's time (us) at its fewest blocks within 2.5% of its most."""
    n = comm.nranks
    blackwell = comm.profile.sm >= 100
    max_blocks, nvls_blocks = MAX_BLOCKS, -(-(32 if blackwell else 16) // n)
    mul = 1.0
    if name in ("AllReduce_AGxLL_R", "AllGather_LL", "ReduceScatter_LL"):
        bus = n * nbytes * LL_BUS_FACTOR
    elif name in ("AllReduce_AGxLLMC_R", "AllGather_LLMC"):
        bus, mul = n * nbytes * LL_BUS_FACTOR, 1.1
    elif name == "AllReduce_RSxLD_AGxST":
        bus = 2 * nbytes * (n - 1) / n
    elif name == "AllReduce_RSxLDMC_AGxSTMC":
        bus, mul, max_blocks = nbytes / n + nbytes, n, nvls_blocks
    elif name in ("AllGather_ST", "ReduceScatter_LD"):
        bus = (n - 1) * nbytes
    else:                                   # AllGather_STMC, ReduceScatter_LDMC
        bus, mul, max_blocks = (n - 1) * nbytes, 0.55 * n, nvls_blocks
    ll = name in LL_KERNELS
    ag = name.startswith("AllGather")
    ar = name.startswith("AllReduce")
    if not blackwell:
        base = 4.5 if ll else 7.8
        sm_bw = (65 if ar else 44) * GBPS
        peak = (480 if name == "AllReduce_RSxLDMC_AGxSTMC" else 320) * GBPS
    else:
        base = (8.5 if ag else 11.0) if ll else (19.5 if ar else 13.0)
        sm_bw = 55 * GBPS
        peak = (1000 if name == "AllReduce_RSxLDMC_AGxSTMC" else 600) * GBPS
    # NCCL's figures are for a full H100 or B200 NVLink (its nvlinkBws: 360 and 720 GB/s): a
    # GPU with fewer links (H800) and an overridden NVLink scale them, and an overridden
    # latency scales the base latency
    links = min(1.0, comm.profile.nvlink_bw / (720.0 if blackwell else 360.0)) * comm.scale.nvlink
    sm_bw *= links
    peak *= links
    base *= comm.scale.nvlink_latency
    best_blocks, best = max_blocks, _model(bus, base, max_blocks, sm_bw, mul, peak)
    for blocks in range(1, max_blocks):
        t = _model(bus, base, blocks, sm_bw, mul, peak)
        if t <= 1.025 * best:
            best_blocks, best = blocks, t
            break
    return Kernel(name, best_blocks, best * 1e-6, base * 1e-6)


def link_floor(name: str, nbytes: int, comm: Comm) -> float:
    """The least time (s) a kernel can take: the bytes each GPU's NVLink carries one way
    (all-reduce: the whole buffer through the switch's multicast, twice its
    ``(N-1)/N`` otherwise; all-gather and reduce-scatter: ``(N-1)/N`` of nccl-tests'
    size; LL kernels twice that, for their flags) at NCCL's NVLink figure (370.8 GB/s
    on H100), which NCCL's own kernel model, written for the pick, can exceed."""
    n = comm.nranks
    if name.startswith("AllReduce"):
        moved = nbytes if name in SWITCH_REDUCE else 2 * nbytes * (n - 1) / n
    else:
        moved = nbytes * (n - 1) / n
    if name in LL_KERNELS:
        moved *= 2
    return moved / (comm.profile.nvlink_bw * 1e9 * comm.scale.nvlink)


def candidates(collective, nbytes: int, comm: Comm) -> list[Kernel]:
    """Every symmetric kernel NCCL would weigh here (ncclSymkMask), timed."""
    if not applies(collective, comm):
        return []
    func = _func(collective)
    multicast = comm.nvls and comm.graphs.get("nvls") is not None and comm.nranks > 2
    switch = multicast and comm.dtype in SWITCH_DTYPES
    if comm.dtype.startswith("float8"):
        switch = multicast and comm.profile.sm >= 100
    # NCCL's nBytes is one rank's count: nccl-tests' size for all-reduce, its 1/N for
    # all-gather (the input) and reduce-scatter (the output); its bus bytes are nccl-tests' size
    per_rank = nbytes if func == "AllReduce" else max(1, nbytes // comm.nranks)
    bus_bytes = nbytes
    out = []
    for name in KERNELS[func]:
        if name in MULTICAST and not multicast:
            continue
        if name in SWITCH_REDUCE and not switch:
            continue
        if name in LL_KERNELS and bus_bytes >= 2 << 30:      # LL kernels count elements in 32 bits
            continue
        if bus_bytes >= 32 * (2 << 30):
            continue
        out.append(_query(name, per_rank, comm))
    return out


def pick(collective, nbytes: int, comm: Comm) -> Kernel | None:
    """NCCL's pick among the symmetric kernels (ncclSymkPickKernel), or None if none applies."""
    best = None
    for k in candidates(collective, nbytes, comm):
        if best is None or k.time * (1 + SM_PENALTY * k.blocks) < best.time * (1 + SM_PENALTY * best.blocks):
            best = k
    return best
