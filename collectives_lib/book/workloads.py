"""Worked examples of training jobs: what they send, when, and what it costs.

The pipelines of stages and the TPU examples made of them (:class:`Pipeline`,
:func:`offloaded_matmul`, :func:`multislice_all_reduce`) live in
:mod:`.pipelines` and are named here too, so a chapter writes
``cl.workloads.multislice_all_reduce(...)``.

* :func:`fsdp_layer` -- the all-gather chapter's worked example: gather one
  layer's sharded weights over a mesh axis while the chip computes.
* :func:`zero_traffic` -- what data parallelism (DDP) and ZeRO stages 1, 2 and
  3 send per step and keep in memory (chapter *Why communication decides scaling*).
* :func:`ddp_backward` -- the backward pass with its gradients all-reduced in
  buckets, overlapped with the layers still computing (same chapter).

Introduced in the chapter *TPU cluster topology*.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import checks
from ..errors import CollectivesError
from ..units import format_bytes, format_time
from .pipelines import (ICI_ROUTINGS, MultisliceAllReduce, OffloadedMatmul, Pipeline, Stage,  # noqa: F401
                        multislice_all_reduce, offloaded_matmul)

__all__ = ["Stage", "Pipeline", "OffloadedMatmul", "FsdpLayer", "offloaded_matmul",
           "fsdp_layer", "ZeroStage", "zero_traffic", "DdpBucket", "DdpTimeline",
           "ddp_backward", "PxnTraffic", "pxn_all_to_all", "MultisliceAllReduce", "multislice_all_reduce"]




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
    axis: the output would need one axis twice, so all-gather one operand first,
    the smaller one (A, ``I x J``, if it is smaller than B, ``J x K``; B on a tie),
    and C keeps the other operand's sharding. ``shape = (I, J, K)``. With a ``topology`` (a TPU slice whose axis
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
        # gather the smaller operand: the other one keeps its shard, and C its sharding
        case, coll, axis = 4, "all_gather", bk
        if I * J < J * K:
            operand, nbytes, out_i = "A", I * J * dtype_bytes, None
        else:
            operand, nbytes, out_k = "B", J * K * dtype_bytes, None
    else:
        case, coll, operand, axis, nbytes = 1, None, None, None, 0.0
    out = f"I{'_' + out_i if out_i else ''},K{'_' + out_k if out_k else ''}"
    rules = {1: "multiply the local shards", 2: f"all-gather {operand} over {axis}, then multiply",
             3: f"multiply the local shards, then all-reduce the partial sums over {axis}",
             4: f"all-gather {operand}, the smaller operand, over {axis} (C cannot be sharded twice over {axis})"}
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
