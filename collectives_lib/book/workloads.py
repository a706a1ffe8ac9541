"""Worked examples that chain data movement with memory and compute.

A job that loads an array from CPU hosts, moves it between chips over ICI,
streams it out of HBM and multiplies it is a *pipeline* of stages. Each
stage's time comes from the library (topologies, the simulator, the hardware
figures); when the stages overlap, as streaming makes them, the slowest stage
sets the pace, and when they do not, the times add up. :class:`Pipeline`
holds the stages and answers both questions.

Calculators:

* :func:`offloaded_matmul` -- the TPU cluster chapter's big example: a matrix
  sharded over a slice, offloaded to host DRAM, gathered onto one chip and
  multiplied there.
* :func:`fsdp_layer` -- the all-gather chapter's worked example: gather one
  layer's sharded weights over a mesh axis while the chip computes.
* :func:`zero_traffic` -- what data parallelism (DDP) and ZeRO stages 1, 2 and
  3 send per step and keep in memory (chapter *Why communication decides scaling*).
* :func:`ddp_backward` -- the backward pass with its gradients all-reduced in
  buckets, overlapped with the layers still computing (same chapter).

Introduced in the chapter *TPU cluster topology*.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field

import numpy as np

from .. import checks
from ..errors import CollectivesError
from ..units import format_bytes, format_flops, format_rate, format_time

__all__ = ["Stage", "Pipeline", "OffloadedMatmul", "FsdpLayer", "offloaded_matmul",
           "fsdp_layer", "ZeroStage", "zero_traffic", "DdpBucket", "DdpTimeline",
           "ddp_backward", "PxnTraffic", "pxn_all_to_all"]


@dataclass(frozen=True)
class Stage:
    """One stage of a pipeline: ``work`` units (bytes or FLOPs) at ``rate`` per second.

    ``seconds`` is what the stage takes on its own; it can exceed
    ``work / rate`` when the stage is limited by a bottleneck inside it (a
    busiest link), which ``detail`` names.
    """

    name: str
    seconds: float
    work: float
    unit: str          # "B" or "FLOP"
    rate: float        # the nominal rate: bytes/s or FLOP/s
    detail: str = ""
    limit: str = ""    # why ``seconds`` exceeds ``work / rate``, if it does
    resource: str = "" # what the stage occupies (links, a host's port, the chip); "" = its own

    @property
    def uses(self) -> str:
        """The resource the stage occupies: stages on the same one cannot overlap."""
        return self.resource or self.name

    def describe(self) -> str:
        amount = (format_bytes(self.work) if self.unit == "B"
                  else format_flops(self.work).removesuffix("/s"))
        rate = format_rate(self.rate) if self.unit == "B" else format_flops(self.rate)
        return f"{amount} at {rate}" + (f"; {self.limit}" if self.limit else "")


@dataclass(frozen=True)
class Pipeline:
    """Stages that one piece of data passes through in order.

    ``time_sequential`` runs them one after another; ``time_streamed`` is the
    limit when the data is cut into many chunks and every stage works on a
    different chunk at once. Stages that occupy the same resource (the same
    links: an ICI reduce-scatter and an ICI all-gather) cannot overlap each
    other, so the streamed time is the busiest *resource*'s total, never less
    than what any one resource must carry; :meth:`time_pipelined` is the time
    for a given number of chunks.
    """

    stages: tuple[Stage, ...]
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.stages:
            raise CollectivesError("a pipeline needs at least one stage")

    def __getitem__(self, name: str) -> Stage:
        for st in self.stages:
            if st.name == name:
                return st
        raise CollectivesError(
            f"no stage called {name!r}; the stages are {', '.join(s.name for s in self.stages)}"
        )

    @property
    def stage_times(self) -> dict[str, float]:
        return {st.name: st.seconds for st in self.stages}

    @property
    def resource_times(self) -> dict[str, float]:
        """Each resource's total: the stages that occupy it, one after another."""
        out: dict[str, float] = {}
        for st in self.stages:
            out[st.uses] = out.get(st.uses, 0.0) + st.seconds
        return out

    @property
    def busiest(self) -> str:
        """The resource with the largest total: it sets the streamed time."""
        times = self.resource_times
        return max(times, key=times.get)

    @property
    def bottleneck(self) -> Stage:
        """The slowest stage on the busiest resource."""
        return max((st for st in self.stages if st.uses == self.busiest), key=lambda st: st.seconds)

    @property
    def time_sequential(self) -> float:
        """Every stage waits for the previous one to finish: the sum."""
        return float(sum(st.seconds for st in self.stages))

    @property
    def time_streamed(self) -> float:
        """Stages on different resources overlap perfectly: the busiest resource's total."""
        return float(max(self.resource_times.values()))

    def time_pipelined(self, chunks: int) -> float:
        """Data cut into ``chunks`` equal pieces that flow through the stages.

        With stage times ``T_i`` each chunk spends ``T_i / k`` in stage i, so
        the last chunk leaves after ``sum(T_i)/k + (k-1)/k * max(T_i)``: the
        sum for one chunk, the slowest stage as ``k`` grows.
        """
        if isinstance(chunks, bool) or int(chunks) != chunks or chunks < 1:
            raise CollectivesError(f"chunks must be a whole number >= 1, got {chunks!r}")
        k = int(chunks)
        return self.time_sequential / k + (k - 1) / k * self.time_streamed

    def __str__(self) -> str:
        width = max(len(st.name) for st in self.stages)
        lines = []
        for st in self.stages:
            mark = "  <- bottleneck" if st is self.bottleneck else ""
            lines.append(f"{st.name:<{width}}  {format_time(st.seconds):>9}  "
                         f"({st.describe()}){mark}")
        lines.append(f"{'one after another':<{width}}  {format_time(self.time_sequential):>9}")
        shared = {r: t for r, t in self.resource_times.items()
                  if sum(st.uses == r for st in self.stages) > 1}
        for r, t in shared.items():
            lines.append(f"{'on ' + r:<{width}}  {format_time(t):>9}  (its stages cannot overlap)")
        lines.append(f"{'streamed':<{width}}  {format_time(self.time_streamed):>9}")
        for n in self.notes:
            lines += textwrap.wrap(f"note: {n}", 72, subsequent_indent="  ")
        return "\n".join(lines)


# ---------------------------------------------------------------------------
# The offloaded matrix multiplication of the TPU cluster chapter
# ---------------------------------------------------------------------------

ICI_ROUTINGS = {"dimension-order": "shortest", "shortest": "shortest", "disjoint": "disjoint"}


@dataclass(frozen=True)
class OffloadedMatmul(Pipeline):
    """:func:`offloaded_matmul`'s answer: the stages plus what they were computed from.

    ``ici_options`` gives the gather's time three ways: ``"dimension-order"``
    (every block on the ICI's own x-then-y route), ``"disjoint"`` (every block
    split over the link-disjoint routes to the root) and ``"lower bound"``
    (:func:`collectives_lib.lower_bound` of the gather). ``fits_in_hbm`` says whether the whole matrix
    fits in the root chip's HBM; ``streamed_footprint`` is what the root must
    hold if it multiplies shard by shard as the data arrives (two shards in
    flight, the right-hand matrix and the result).
    """

    generation: str = ""
    shape: tuple[int, ...] = ()
    num_chips: int = 0
    num_hosts: int = 0
    matrix_bytes: float = 0.0
    shard_bytes: float = 0.0
    rhs_bytes: float = 0.0
    out_bytes: float = 0.0
    flops: float = 0.0
    hbm_capacity: float = 0.0
    ici_routing: str = "disjoint"
    ici_options: dict = field(default_factory=dict)
    ici_hot_links: int = 0     # the root's incoming links that carry the most bytes

    @property
    def fits_in_hbm(self) -> bool:
        return self.matrix_bytes + self.rhs_bytes + self.out_bytes <= self.hbm_capacity

    @property
    def hbm_overflow(self) -> float:
        """How many times the root's HBM the whole matrix needs."""
        return self.matrix_bytes / self.hbm_capacity

    @property
    def streamed_footprint(self) -> float:
        return 2 * self.shard_bytes + self.rhs_bytes + self.out_bytes


def offloaded_matmul(generation: str = "v5e", shape="4x4", *, rows: int = 128 * 1024,
                     cols: int = 128 * 1024, rhs_cols: int = 128, dtype_bytes: int = 2,
                     rhs_dtype_bytes: int = 2, out_dtype_bytes: int = 2, root=None,
                     ici_routing: str = "disjoint", pcie_bandwidth: float | None = None) -> OffloadedMatmul:
    """Time the seed post's example: gather a host-offloaded matrix onto one chip and multiply.

    A ``rows x cols`` matrix A of ``dtype_bytes`` per element is sharded evenly
    over a TPU slice of ``shape`` and sits in the DRAM of the slice's CPU
    hosts. It is multiplied on chip ``root`` (default: the origin) by a
    ``cols x rhs_cols`` matrix B. The stages:

    1. **PCIe**: every chip loads its shard from its host, all at once
       (:func:`~collectives_lib.analysis.time_flows` on
       :func:`~collectives_lib.topology.tpu_system`).
    2. **ICI**: the chips send their shards to the root
       (``build("gather", ...)``, simulated), with
       ``ici_routing`` ``"dimension-order"`` or ``"disjoint"``.
    3. **HBM**: the matrix units read A and B out of HBM and write the result
       C (``rows x rhs_cols``, ``out_dtype_bytes`` per element).
    4. **compute**: ``2 * rows * cols * rhs_cols`` FLOPs at the chip's peak.

    ``pcie_bandwidth`` overrides the generation's per-chip PCIe figure.
    Returns an :class:`OffloadedMatmul` (a :class:`Pipeline`).
    """
    from ..analysis import time_flows
    from ..bounds import lower_bound
    from ..plan import build
    from ..simulate import simulate
    from ..topology import tpu_system

    for name, v in (("rows", rows), ("cols", cols), ("rhs_cols", rhs_cols),
                    ("dtype_bytes", dtype_bytes), ("rhs_dtype_bytes", rhs_dtype_bytes),
                    ("out_dtype_bytes", out_dtype_bytes)):
        if isinstance(v, bool) or int(v) != v or v < 1:
            raise CollectivesError(f"{name} must be a whole number >= 1, got {v!r}")
    if ici_routing not in ICI_ROUTINGS:
        raise CollectivesError(
            f"ici_routing must be 'dimension-order' or 'disjoint', got {ici_routing!r}"
        )
    kw = {} if pcie_bandwidth is None else {"pcie_bandwidth": pcie_bandwidth}
    system = tpu_system(generation, shape, **kw)
    sl = system.slice
    gen = sl.generation
    for what, fig in (("HBM bandwidth", gen.hbm_bandwidth), ("HBM capacity", gen.hbm_capacity),
                      ("peak FLOP/s", gen.peak_flops_bf16), ("PCIe bandwidth", gen.pcie_bandwidth)):
        if fig is None:
            raise CollectivesError(f"TPU {gen.name} has no {what} figure in cl.hardware")
    n = sl.num_ranks
    root_rank = 0 if root is None else (sl.rank_of(root) if np.iterable(root) else int(root))
    if not 0 <= root_rank < n:
        raise CollectivesError(f"root {root!r} is not a chip of the {'x'.join(map(str, sl.dims))} slice")
    matrix = int(rows) * int(cols) * int(dtype_bytes)
    if matrix % n:
        raise CollectivesError(
            f"a {rows} x {cols} matrix of {dtype_bytes}-byte elements ({matrix} bytes) does "
            f"not split into {n} equal shards"
        )
    shard = matrix // n
    rhs = int(cols) * int(rhs_cols) * int(rhs_dtype_bytes)
    out = int(rows) * int(rhs_cols) * int(out_dtype_bytes)
    flops = 2.0 * rows * cols * rhs_cols

    # 1. PCIe: hosts -> their chips, all chips at once
    flows = [(f"host{system.host_of(c)}", c, shard) for c in range(n)]
    pcie = time_flows(system, flows)
    pcie_rate = float(system.pcie_bandwidth)
    # 2. ICI: gather onto the root, both routings, and the bound
    options, runs = {}, {}
    for label, algorithm in (("dimension-order", "direct"), ("disjoint", "multipath")):
        sched = build("gather", sl, algorithm, root=root_rank)
        runs[label] = simulate(sched, sl, matrix)
        options[label] = runs[label].time
    options["lower bound"] = lower_bound("gather", sl, int(matrix), root=root_rank).bandwidth_time
    chosen = "dimension-order" if ICI_ROUTINGS[ici_routing] == "shortest" else "disjoint"
    links_in = int((sl.links.dst == root_rank).sum())
    # the root's incoming links that carry the most: they set the gather's time
    loads = runs[chosen].link_bytes[np.flatnonzero(sl.links.dst == root_rank)]
    hot = int((loads >= 0.999 * loads.max()).sum())
    limit = "" if hot == links_in else (
        f"{hot} hot link{' carries' if hot == 1 else 's carry'} {format_bytes(hot * loads.max())} at "
        f"{format_rate(hot * float(sl.bandwidth))}")
    # 3. HBM and 4. compute
    hbm_rate = float(gen.hbm_bandwidth)
    hbm_bytes = matrix + rhs + out
    peak = float(gen.peak_flops_bf16)
    stages = (
        Stage("PCIe: hosts to chips", pcie.time, matrix, "B", pcie_rate * n,
              f"each of {n} chips loads its {format_bytes(shard)} shard from its host at "
              f"{format_rate(pcie_rate)}"),
        Stage("ICI: gather onto the root", options[chosen], (n - 1) / n * matrix, "B",
              links_in * float(sl.bandwidth),
              f"{format_bytes((n - 1) / n * matrix)} into chip {sl.coords(root_rank)} over its "
              f"{links_in} incoming links, {'split over disjoint routes' if chosen == 'disjoint' else 'on dimension-order routes'}",
              limit),
        Stage("HBM to matrix units", hbm_bytes / hbm_rate, hbm_bytes, "B", hbm_rate,
              "read A and B, write the result"),
        Stage("compute", flops / peak, flops, "FLOP", peak,
              f"2 x {rows} x {cols} x {rhs_cols} FLOPs at peak"),
    )
    notes = []
    cap = float(gen.hbm_capacity)
    if matrix + rhs + out > cap:
        notes.append(f"A alone is {format_bytes(matrix)}, {matrix / cap:.2f}x the root's "
                     f"{format_bytes(cap)} of HBM: it cannot be gathered whole, only "
                     f"streamed")
    return OffloadedMatmul(
        stages=stages, notes=tuple(notes), generation=gen.name, shape=tuple(sl.dims),
        num_chips=n, num_hosts=system.num_hosts, matrix_bytes=float(matrix),
        shard_bytes=float(shard), rhs_bytes=float(rhs), out_bytes=float(out), flops=flops,
        hbm_capacity=cap, ici_routing=chosen, ici_options=options, ici_hot_links=hot,
    )


# ---------------------------------------------------------------------------
# FSDP: gather a layer's weights while computing
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class FsdpLayer(Pipeline):
    """:func:`fsdp_layer`'s answer. ``break_even_tokens`` is the number of
    tokens per chip at which computing the layer takes as long as gathering its
    weights: with more, prefetching the next layer's weights hides the gather."""

    params: float = 0.0
    weight_bytes: float = 0.0
    tokens_per_chip: int = 0
    group_size: int = 0
    algorithm: str = ""
    break_even_tokens: float = 0.0


def fsdp_layer(topology, params: float, tokens_per_chip: int, *, axes="x",
               bytes_per_param: int = 2, algorithm: str = "auto",
               peak_flops: float | None = None) -> FsdpLayer:
    """One FSDP layer: all-gather its sharded weights over ``axes``, then compute.

    The weights (``params x bytes_per_param`` bytes) are sharded over the
    chips of each group along ``axes``; the all-gather is built and simulated
    on ``topology`` (a TPU slice). The forward pass of the layer costs
    ``2 x params x tokens_per_chip`` FLOPs per chip at ``peak_flops`` (default:
    the slice's generation's bf16 peak). The stages are ``"all-gather"`` and
    ``"compute"``; with prefetching they overlap, so the slower one sets the
    time (``time_streamed``).
    """
    from ..plan import build
    from ..simulate import simulate

    if not params > 0:
        raise CollectivesError(f"params must be positive, got {params!r}")
    if isinstance(tokens_per_chip, bool) or int(tokens_per_chip) != tokens_per_chip or tokens_per_chip < 1:
        raise CollectivesError(f"tokens_per_chip must be a whole number >= 1, got {tokens_per_chip!r}")
    if peak_flops is None:
        gen = getattr(topology, "generation", None)
        if gen is None or gen.peak_flops_bf16 is None:
            raise CollectivesError(f"pass peak_flops=: {topology!r} has no chip figures")
        peak_flops = float(gen.peak_flops_bf16)
    sched = build("all_gather", topology, algorithm, axes=axes)
    weight_bytes = sched.round_size(params * bytes_per_param)
    r = simulate(sched, topology, weight_bytes)
    flops = 2.0 * params * tokens_per_chip
    compute = flops / peak_flops
    per_token = 2.0 * params / peak_flops
    stages = (
        Stage("all-gather", r.time, weight_bytes, "B", r.algbw,
              f"{sched.algorithm.replace('_', ' ')} over {sched.group_size} chips, {sched.num_steps} steps"),
        Stage("compute", compute, flops, "FLOP", peak_flops,
              f"2 x {params:.3g} params x {int(tokens_per_chip)} tokens"),
    )
    return FsdpLayer(stages=stages, params=float(params), weight_bytes=float(weight_bytes),
                     tokens_per_chip=int(tokens_per_chip), group_size=sched.group_size,
                     algorithm=sched.algorithm, break_even_tokens=r.time / per_token)


# ---------------------------------------------------------------------------
# Data parallelism: ZeRO's stages and DDP's gradient buckets
# ---------------------------------------------------------------------------

#: What each ZeRO stage runs per training step, in order: (phase, collective), every
#: one over the whole model's bytes (nccl-tests' convention: the all-gather's output,
#: the reduce-scatter's input). Stage 0 is plain data parallelism (DDP).
ZERO_COLLECTIVES = {
    0: (("backward", "all_reduce"),),
    1: (("backward", "reduce_scatter"), ("after the optimizer", "all_gather")),
    2: (("backward", "reduce_scatter"), ("after the optimizer", "all_gather")),
    3: (("forward", "all_gather"), ("backward", "all_gather"), ("backward", "reduce_scatter")),
}
ZERO_NAMES = {0: "DDP", 1: "ZeRO-1", 2: "ZeRO-2", 3: "ZeRO-3"}


@dataclass(frozen=True)
class ZeroStage:
    """:func:`zero_traffic`'s answer for one stage. ``calls`` lists ``(phase,
    collective, bytes sent by the busiest GPU, time)``; ``bytes_sent`` and
    ``time`` are their sums; ``memory`` is the model state one GPU holds
    (parameters, gradients, optimizer state), in bytes."""

    stage: int
    name: str
    group_size: int
    model_bytes: float
    calls: tuple
    bytes_sent: float
    time: float
    memory: float

    def __str__(self) -> str:
        return (f"{self.name}: sends {format_bytes(self.bytes_sent)} per GPU per step "
                f"({self.bytes_sent / self.model_bytes:.2f}x the model) in {format_time(self.time)}, "
                f"holds {format_bytes(self.memory)} of model state")


def zero_traffic(topology, params: float, *, stage: int, axes=None, bytes_per_param: int = 2,
                 optimizer_bytes: int = 12, model: str | None = None) -> ZeroStage:
    """Per-step traffic and per-GPU memory of data parallelism with ZeRO ``stage``.

    ``stage`` 0 is DDP: every GPU keeps the whole model and all-reduces the
    gradients. ZeRO (Rajbhandari et al., 2020) shards the optimizer state
    (stage 1), also the gradients (2), also the parameters (3) over the
    data-parallel group, which is ``axes`` of ``topology``. Stages 1 and 2
    reduce-scatter the gradients and all-gather the updated parameters: the
    same bytes as DDP's all-reduce. Stage 3 all-gathers the parameters in the
    forward and again in the backward pass: 1.5 times DDP's bytes.

    Bytes sent are the busiest GPU's in the ring schedule of each collective;
    times come from :func:`collectives_lib.estimate` (``model`` as there: NCCL's
    on GPU presets). Memory follows the ZeRO paper's mixed-precision Adam:
    ``bytes_per_param`` each for parameters and gradients, ``optimizer_bytes``
    (12: fp32 master weights, momentum, variance) per parameter for the
    optimizer, sharded as the stage says.
    """
    from ..models import estimate
    from ..plan import build

    if isinstance(stage, bool) or stage not in ZERO_COLLECTIVES:
        raise CollectivesError(f"stage must be 0 (DDP), 1, 2 or 3, got {stage!r}")
    if not (isinstance(params, (int, float, np.integer, np.floating)) and params > 0):
        raise CollectivesError(f"params must be a positive number of parameters, got {params!r}")
    for name, v in (("bytes_per_param", bytes_per_param), ("optimizer_bytes", optimizer_bytes)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise CollectivesError(f"{name} must be a whole number of bytes >= 1, got {v!r}")
    calls, group = [], None
    model_bytes = None
    for phase, coll in ZERO_COLLECTIVES[stage]:
        sched = build(coll, topology, "ring", axes=axes)
        group = sched.group_size
        nbytes = sched.round_size(params * bytes_per_param)
        model_bytes = float(nbytes)
        sent = float(sched.bytes_sent(nbytes).max())
        t = estimate(coll, topology, nbytes, axes=axes, model=model).time
        calls.append((phase, coll, sent, float(t)))
    p = float(params)
    shard = {0: (1, 1, 1), 1: (1, 1, group), 2: (1, group, group), 3: (group, group, group)}[stage]
    memory = p * (bytes_per_param / shard[0] + bytes_per_param / shard[1] + optimizer_bytes / shard[2])
    return ZeroStage(stage, ZERO_NAMES[stage], group, model_bytes, tuple(calls),
                     sum(c[2] for c in calls), sum(c[3] for c in calls), memory)


@dataclass(frozen=True)
class DdpBucket:
    """One gradient bucket: the layers it holds (numbered in forward order), its
    bytes, when its last gradient is ready and when its all-reduce runs."""

    layers: tuple
    nbytes: float
    ready: float
    start: float
    end: float


@dataclass(frozen=True)
class DdpTimeline:
    """:func:`ddp_backward`'s answer. ``compute`` holds ``(layer, start, end)``
    in the order the backward pass runs (last layer first); times in seconds
    from the start of the backward pass."""

    compute: tuple
    buckets: tuple
    backward_end: float
    end: float
    unbucketed_end: float

    @property
    def exposed(self) -> float:
        """Communication left after the backward pass has finished."""
        return self.end - self.backward_end

    @property
    def communication(self) -> float:
        """The all-reduces' total time, hidden or not."""
        return sum(b.end - b.start for b in self.buckets)


def ddp_backward(topology, layer_bytes, layer_time, *, bucket_bytes: float = 25 * 2**20, axes=None,
                 model: str | None = None) -> DdpTimeline:
    """The backward pass of data parallelism with its gradients all-reduced in buckets.

    ``layer_bytes`` are the gradient bytes of each layer in forward order;
    ``layer_time`` the backward compute time of each layer (one number for
    all, or one per layer). The backward pass runs from the last layer to the
    first. As in PyTorch DDP (Li et al., 2020), gradients fill a bucket in that
    order until it holds at least ``bucket_bytes`` (default 25 MiB, DDP's
    ``bucket_cap_mb``); its all-reduce starts once its last gradient is ready
    and the previous bucket's all-reduce is done (one communication stream),
    and runs while the earlier layers still compute. Times of the all-reduces
    come from :func:`collectives_lib.estimate` over ``axes`` of ``topology``.
    ``unbucketed_end`` is the end of the step if one all-reduce of every
    gradient ran after the backward pass instead.
    """
    from ..models import estimate

    sizes = np.atleast_1d(np.asarray(layer_bytes, dtype=float))
    if sizes.ndim != 1 or not len(sizes) or not np.all(np.isfinite(sizes)) or np.any(sizes <= 0):
        raise CollectivesError(f"layer_bytes must be one positive byte count per layer, got {layer_bytes!r}")
    times = np.asarray(layer_time, dtype=float)
    times = np.full(len(sizes), float(times)) if times.ndim == 0 else times
    if times.shape != sizes.shape or not np.all(np.isfinite(times)) or np.any(times < 0):
        raise CollectivesError(f"layer_time must be one time >= 0 s, or one per layer "
                               f"({len(sizes)}), got {layer_time!r}")
    if not (isinstance(bucket_bytes, (int, float, np.integer, np.floating)) and bucket_bytes > 0):
        raise CollectivesError(f"bucket_bytes must be a positive byte count, got {bucket_bytes!r}")

    def allreduce(nbytes: float) -> float:
        return float(estimate("all_reduce", topology, int(round(nbytes)), axes=axes, model=model).time)

    compute, t = [], 0.0
    for layer in range(len(sizes) - 1, -1, -1):
        compute.append((layer, t, t + float(times[layer])))
        t += float(times[layer])
    backward_end = t
    buckets, held, filled, free = [], [], 0.0, 0.0
    for layer, _, done in compute:
        held.append(layer)
        filled += float(sizes[layer])
        if filled >= bucket_bytes or layer == 0:
            start = max(done, free)
            free = start + allreduce(filled)
            buckets.append(DdpBucket(tuple(held), filled, done, start, free))
            held, filled = [], 0.0
    return DdpTimeline(tuple(compute), tuple(buckets), backward_end, free,
                       backward_end + allreduce(float(sizes.sum())))


# ---------------------------------------------------------------------------
# Data parallelism across slices: ICI inside, DCN between
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class MultisliceAllReduce(Pipeline):
    """:func:`multislice_all_reduce`'s answer: three stages, one after another.

    ``dcn_only`` is the time of the naive alternative that all-reduces each
    chip's whole array over the DCN (ring over the slices) without reducing
    inside the slice first; ``dcn_bound`` is the DCN stage's lower bound, the
    bytes every host must send over its DCN port divided by the port's bandwidth.
    """

    generation: str = ""
    shape: tuple[int, ...] = ()
    num_slices: int = 0
    chips_per_slice: int = 0
    nbytes: float = 0.0
    shard_bytes: float = 0.0
    dcn_steps: int = 0
    dcn_only: float = 0.0
    dcn_bound: float = 0.0


def multislice_all_reduce(generation: str, shape, num_slices: int, nbytes: float) -> MultisliceAllReduce:
    """The hierarchical gradient all-reduce of data parallelism over ``num_slices`` slices.

    Every chip holds ``nbytes``. 1. Inside every slice at once, a reduce-scatter
    over ICI (the library's choice, e.g. ``multi_axis``) leaves each chip one
    ``1/n`` shard summed over its slice. 2. Chip ``c`` of every slice all-reduces
    its shard with chip ``c`` of the other slices: a ring over the slices,
    ``2 (S - 1)`` steps of ``nbytes / (n S)`` per chip, every chip's flow going
    chip -> PCIe -> host -> DCN -> host -> PCIe -> chip, all chips at once
    (timed with :func:`~collectives_lib.analysis.time_flows` on a
    :func:`~collectives_lib.topology.tpu_system`). 3. An all-gather over ICI
    restores the whole sum on every chip. Ideal link model throughout.

    Introduced in the chapter *Reduce-scatter and all-reduce* (the multi-slice
    worked example).
    """
    from ..analysis import time_flows
    from ..models import estimate
    from ..topology import tpu_system

    if isinstance(num_slices, bool) or int(num_slices) != num_slices or num_slices < 2:
        raise CollectivesError(f"num_slices must be a whole number >= 2 (one slice needs no DCN), got {num_slices!r}")
    if not nbytes > 0:
        raise CollectivesError(f"nbytes must be positive, got {nbytes!r}")
    S = int(num_slices)
    system = tpu_system(generation, shape, S)
    sl, n = system.slice, system.chips_per_slice
    V = float(nbytes)
    rs = estimate("reduce_scatter", sl, V)
    ag = estimate("all_gather", sl, V)

    def ring_over_slices(per_chip: float) -> float:
        # one step of the ring over the slices: every chip sends per_chip to its twin in the next slice
        flows = [(c + s * n, c + ((s + 1) % S) * n, per_chip) for s in range(S) for c in range(n)]
        return 2 * (S - 1) * time_flows(system, flows).time

    shard = V / n
    dcn = ring_over_slices(shard / S)
    per_host = int(np.prod(sl.host_shape))
    bound = 2 * (S - 1) / S * shard * per_host / system.dcn_bandwidth_per_host
    links = int((sl.links.src == 0).sum())
    stages = (
        Stage("ICI reduce-scatter", rs.time, (n - 1) / n * V, "B", links * float(sl.bandwidth),
              f"{rs.algorithm.replace('_', ' ')} over {n} chips", resource="ICI links"),
        Stage("DCN all-reduce of shards", dcn, 2 * (S - 1) / S * shard * per_host, "B",
              system.dcn_bandwidth_per_host,
              f"ring over {S} slices, {2 * (S - 1)} steps, {per_host} chips per host share its DCN port",
              resource="DCN"),
        Stage("ICI all-gather", ag.time, (n - 1) / n * V, "B", links * float(sl.bandwidth),
              f"{ag.algorithm.replace('_', ' ')} over {n} chips", resource="ICI links"),
    )
    return MultisliceAllReduce(
        stages=stages, generation=sl.generation.name, shape=tuple(sl.dims), num_slices=S,
        chips_per_slice=n, nbytes=V, shard_bytes=shard, dcn_steps=2 * (S - 1),
        dcn_only=ring_over_slices(V / S), dcn_bound=bound)


# ---------------------------------------------------------------------------
# Sharded matrix multiplication: which collective it needs
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class ShardedMatmul:
    """:func:`sharded_matmul`'s answer: the Scaling Book's case and the collective it calls."""

    lhs: str
    rhs: str
    out: str
    case: int                     # 1..4, as the Scaling Book numbers them
    collective: str | None        # None, "all_gather" or "all_reduce"
    operand: str | None           # "A", "B" or "C" (the partial sums)
    axis: str | None              # the mesh axis the collective runs over ("X")
    nbytes: float = 0.0           # V of the collective: the gathered array, or the partial C per chip
    time: float | None = None     # with a topology: cl.estimate's time (ideal link model)
    bound: float | None = None
    rule: str = ""

    def __str__(self) -> str:
        what = "no communication" if self.collective is None else (
            f"{self.collective.replace('_', '-')} of {self.operand} over {self.axis}, "
            f"{format_bytes(self.nbytes)}")
        when = "" if self.time is None else f": {format_time(self.time)}"
        return f"A[{self.lhs}] . B[{self.rhs}] -> C[{self.out}] (case {self.case}): {what}{when}"


def _spec(text: str, names: tuple[str, str], what: str) -> tuple[str | None, str | None]:
    dims = [d.strip() for d in str(text).split(",")]
    if len(dims) != 2:
        raise CollectivesError(f"{what} must name two dimensions, e.g. '{names[0]}_X,{names[1]}', got {text!r}")
    axes = []
    for d, name in zip(dims, names):
        base, _, axis = d.partition("_")
        if base != name or (axis and not axis.isalpha()):
            raise CollectivesError(f"{what} must be {names[0]}[_AXIS],{names[1]}[_AXIS] (axes are letters "
                                   f"such as X), got {text!r}")
        axes.append(axis or None)
    return axes[0], axes[1]


def sharded_matmul(lhs: str, rhs: str, *, shape=(8192, 8192, 8192), dtype_bytes: int = 2,
                   topology=None) -> ShardedMatmul:
    """Which collective ``C[I, K] = A[I, J] . B[J, K]`` needs, by the Scaling Book's rules.

    ``lhs`` and ``rhs`` give each operand's sharding, the Scaling Book's way:
    ``"I_X,J"`` is A with I sharded over mesh axis X, ``"J,K"`` an unsharded B.
    The four cases: (1) the contracting dimension J is sharded in neither: multiply
    the local shards, no communication; (2) in one: all-gather that operand over
    its J axis first; (3) in both, over the same axis: multiply the local shards,
    then all-reduce the partial sums of C over that axis (a reduce-scatter instead
    if C may stay sharded); (4) J unsharded but I and K sharded over the same
    axis: the output would need one axis twice, so all-gather one operand (B here)
    first. ``shape = (I, J, K)``. With a ``topology`` (a TPU slice whose axis
    names are the lower-case mesh axes) the collective is timed with
    :func:`~collectives_lib.estimate` (ideal link model).

    Introduced in the chapter *All-to-all* (which sharded matmul calls which collective).
    """
    from ..models import estimate

    I, J, K = (int(v) for v in shape)  # noqa: E741  (the Scaling Book's names)
    if min(I, J, K) < 1:
        raise CollectivesError(f"shape must be three positive sizes (I, J, K), got {shape!r}")
    ai, aj = _spec(lhs, ("I", "J"), "lhs")
    bj, bk = _spec(rhs, ("J", "K"), "rhs")

    def size(axis_map) -> float:
        # bytes of an operand on one chip's group: divide by the axes it stays sharded on
        n = 1
        for axis in axis_map:
            if axis is not None:
                n *= mesh_size(axis)
        return n

    def mesh_size(axis: str) -> int:
        if topology is None:
            return 1
        names = [a.lower() for a in topology.axis_names]
        if axis.lower() not in names:
            raise CollectivesError(f"mesh axis {axis!r} is not an axis of {topology!r} "
                                   f"(its axes: {', '.join(topology.axis_names)})")
        return int(topology.dims[names.index(axis.lower())])

    for axis in (ai, aj, bj, bk):
        if axis is not None:
            mesh_size(axis)                      # names an axis of the topology
    if ai is not None and ai == aj or bj is not None and bj == bk:
        raise CollectivesError("an operand cannot be sharded twice over the same mesh axis")
    if aj is not None and bj is not None and aj != bj:
        raise CollectivesError(f"J is sharded over {aj} in A but over {bj} in B: reshard one of them first "
                               f"(an all-to-all) so that both agree")
    out_i, out_k = ai, bk
    if aj is not None and aj == bj:
        case, coll, operand, axis = 3, "all_reduce", "C", aj
        nbytes = I * K * dtype_bytes / size((out_i, out_k))
    elif aj is not None or bj is not None:
        case, coll = 2, "all_gather"
        operand, axis = ("A", aj) if aj is not None else ("B", bj)
        nbytes = (I * J / size((ai,)) if operand == "A" else J * K / size((bk,))) * dtype_bytes
    elif ai is not None and ai == bk:
        case, coll, operand, axis = 4, "all_gather", "B", bk
        nbytes = J * K * dtype_bytes
        out_k = None
    else:
        case, coll, operand, axis, nbytes = 1, None, None, None, 0.0
    out = f"I{'_' + out_i if out_i else ''},K{'_' + out_k if out_k else ''}"
    rules = {1: "multiply the local shards", 2: f"all-gather {operand} over {axis}, then multiply",
             3: f"multiply the local shards, then all-reduce the partial sums over {axis}",
             4: f"all-gather {operand} over {axis} (C cannot be sharded twice over {axis})"}
    time = bound = None
    if coll is not None and topology is not None:
        e = estimate(coll, topology, nbytes, axes=axis.lower())
        time, bound = e.time, e.bound.time
    return ShardedMatmul(lhs=lhs, rhs=rhs, out=out, case=case, collective=coll, operand=operand, axis=axis,
                         nbytes=float(nbytes), time=time, bound=bound, rule=rules[case])


def sharded_matmul_markdown(cases, *, shape=(8192, 8192, 8192), dtype_bytes: int = 2, topology=None) -> str:
    """A Markdown table of :func:`sharded_matmul` for ``cases``, pairs ``(lhs, rhs)``:
    the shardings, the case, the collective, its size and (with a topology) its time and
    lower bound (ideal link model)."""
    lines = ["| A | B | C | case | collective | V | time | lower bound |", "|---" * 8 + "|"]
    for lhs, rhs in cases:
        m = sharded_matmul(lhs, rhs, shape=shape, dtype_bytes=dtype_bytes, topology=topology)
        what = "none" if m.collective is None else f"{m.collective.replace('_', '-')} of {m.operand} over {m.axis}"
        times = ["", ""] if m.time is None else [format_time(m.time), format_time(m.bound)]
        lines.append(f"| $A[{lhs}]$ | $B[{rhs}]$ | $C[{m.out}]$ | {m.case} | {what} | "
                     f"{format_bytes(m.nbytes) if m.nbytes else ''} | " + " | ".join(times) + " |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# PXN: an all-to-all's blocks kept on their rails
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class PxnTraffic:
    """Where one GPU's all-to-all blocks travel, in bytes, with and without PXN.

    ``nvlink`` is what crosses the GPU's NVLinks (blocks for its own node, plus, with
    PXN, the blocks it hands to the GPU on the destination's rail and those it
    forwards for the others); ``rail`` what leaves through its NIC to a GPU on its
    own rail; ``spine`` what its NIC sends to GPUs on other rails, which only a
    spine switch can deliver (nothing with PXN). A rail-only network has no spine:
    there the all-to-all needs PXN."""
    nodes: int
    gpus_per_node: int
    nbytes: float
    pxn: bool
    nvlink: float
    rail: float
    spine: float

    @property
    def network(self) -> float:
        """Bytes that leave through the GPU's NIC (rail plus spine)."""
        return self.rail + self.spine


def pxn_all_to_all(cluster, nbytes: float, *, pxn: bool = True) -> PxnTraffic:
    """One GPU's all-to-all traffic on a rail-optimised ``cluster`` (a
    :class:`~collectives_lib.topology.GpuCluster`), ``nbytes`` per rank as nccl-tests
    counts it (``1/N`` of it to each rank), by path.

    Without PXN, GPU ``g`` sends each block for another node straight from its own
    NIC; a block for GPU ``h != g`` of that node changes rails in the spine. With
    PXN, it first hands that block over NVLink to GPU ``h`` of its own node, which
    sends it on rail ``h``: the same bytes leave the node, all of them on their own
    rail, and as many cross NVLink a second time.

    >>> import collectives_lib as cl
    >>> t = pxn_all_to_all(cl.GpuCluster("dgx-h100", 2), 16 * 2**20, pxn=False)
    >>> t.rail / 2**20, t.spine / 2**20          # 1 block on rail 0, 7 change rails
    (1.0, 7.0)
    >>> t = pxn_all_to_all(cl.GpuCluster("dgx-h100", 2), 16 * 2**20)
    >>> t.rail / 2**20, t.spine, t.nvlink / 2**20  # 7 own-node blocks + 7 handed over
    (8.0, 0.0, 14.0)

    Introduced in the chapter *GPU collectives across nodes* (PXN and rail-only networks).
    """
    from ..topology import GpuCluster
    if not isinstance(cluster, GpuCluster):
        raise CollectivesError(f"pxn_all_to_all needs a GpuCluster (nodes on rails), got {cluster!r}")
    checks.nonnegative(nbytes, "nbytes")
    if not isinstance(pxn, bool):
        raise CollectivesError(f"pxn must be True or False, got {pxn!r}")
    m, g = cluster.num_nodes, cluster.gpus_per_node
    block = float(nbytes) / (m * g)
    own_node = (g - 1) * block
    same_rail = (m - 1) * block
    other_rails = (m - 1) * (g - 1) * block
    if pxn:
        # It hands (m-1)(g-1) blocks to its node's other GPUs and sends as many for them on its
        # rail: every block for another node leaves on the destination's rail.
        return PxnTraffic(m, g, float(nbytes), True, own_node + other_rails,
                          same_rail + other_rails, 0.0)
    return PxnTraffic(m, g, float(nbytes), False, own_node, same_rail, other_rails)
