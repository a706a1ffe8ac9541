"""Pipelines of stages, and the TPU chapters' worked examples made of them.

A job that loads an array from CPU hosts, moves it between chips over ICI,
streams it out of HBM and multiplies it is a *pipeline* of stages. Each
stage's time comes from the library (topologies, the simulator, the hardware
figures); when the stages overlap, as streaming makes them, the busiest
resource sets the pace (stages on the same links cannot overlap each other),
and when they do not, the times add up. :class:`Pipeline` holds the stages
and answers both questions.

* :func:`offloaded_matmul` -- the TPU cluster chapter's big example: a matrix
  sharded over a slice, offloaded to host DRAM, gathered onto one chip and
  multiplied there.
* :func:`multislice_all_reduce` -- data parallelism across slices: ICI inside,
  DCN between (the reduce-scatter chapter's multi-slice example).

Introduced in the chapter *TPU cluster topology*.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field

import numpy as np

from ..errors import CollectivesError
from ..units import format_bytes, format_flops, format_rate, format_time

__all__ = ["Stage", "Pipeline", "OffloadedMatmul", "offloaded_matmul", "MultisliceAllReduce",
           "multislice_all_reduce", "ICI_ROUTINGS"]


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
        shared = {r: t for r, t in self.resource_times.items()
                  if sum(st.uses == r for st in self.stages) > 1}
        # The streamed time is a resource's total: when that resource carries several
        # stages, the mark goes on the resource, since no single stage sets the time.
        lines = []
        for st in self.stages:
            mark = ("  <- bottleneck" if st is self.bottleneck and self.busiest not in shared
                    else "")
            lines.append(f"{st.name:<{width}}  {format_time(st.seconds):>9}  "
                         f"({st.describe()}){mark}")
        lines.append(f"{'one after another':<{width}}  {format_time(self.time_sequential):>9}")
        for r, t in shared.items():
            mark = "  <- bottleneck" if r == self.busiest else ""
            lines.append(f"{'on ' + r:<{width}}  {format_time(t):>9}  "
                         f"(its stages cannot overlap){mark}")
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


def _whole_numbers(**values) -> None:
    for name, v in values.items():
        if isinstance(v, bool) or int(v) != v or v < 1:
            raise CollectivesError(f"{name} must be a whole number >= 1, got {v!r}")


def _matmul_inputs(sl, root, rows: int, cols: int, dtype_bytes: int) -> tuple[int, int]:
    """The root's rank and the matrix's bytes, checked against the slice and its figures."""
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
    return root_rank, matrix


def _gather_onto(sl, matrix: int, root_rank: int, chosen: str):
    """The ICI gather of the whole matrix onto the root, both routings and the bound:
    ``(times by routing, links into the root, hot links, why the hot links limit it)``."""
    from ..bounds import lower_bound
    from ..plan import build
    from ..simulate import simulate

    options, runs = {}, {}
    for label, algorithm in (("dimension-order", "direct"), ("disjoint", "multipath")):
        sched = build("gather", sl, algorithm, root=root_rank)
        runs[label] = simulate(sched, sl, matrix)
        options[label] = runs[label].time
    options["lower bound"] = lower_bound("gather", sl, int(matrix), root=root_rank).bandwidth_time
    links_in = int((sl.links.dst == root_rank).sum())
    # the root's incoming links that carry the most: they set the gather's time
    loads = runs[chosen].link_bytes[np.flatnonzero(sl.links.dst == root_rank)]
    hot = int((loads >= 0.999 * loads.max()).sum())
    limit = "" if hot == links_in else (
        f"{hot} hot link{' carries' if hot == 1 else 's carry'} {format_bytes(hot * loads.max())} at "
        f"{format_rate(hot * float(sl.bandwidth))}")
    return options, links_in, hot, limit


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
    from ..topology import tpu_system

    _whole_numbers(rows=rows, cols=cols, rhs_cols=rhs_cols, dtype_bytes=dtype_bytes,
                   rhs_dtype_bytes=rhs_dtype_bytes, out_dtype_bytes=out_dtype_bytes)
    if ici_routing not in ICI_ROUTINGS:
        raise CollectivesError(
            f"ici_routing must be 'dimension-order' or 'disjoint', got {ici_routing!r}"
        )
    kw = {} if pcie_bandwidth is None else {"pcie_bandwidth": pcie_bandwidth}
    system = tpu_system(generation, shape, **kw)
    sl = system.slice
    gen = sl.generation
    n = sl.num_ranks
    root_rank, matrix = _matmul_inputs(sl, root, rows, cols, dtype_bytes)
    shard = matrix // n
    rhs = int(cols) * int(rhs_cols) * int(rhs_dtype_bytes)
    out = int(rows) * int(rhs_cols) * int(out_dtype_bytes)
    flops = 2.0 * rows * cols * rhs_cols

    # 1. PCIe: hosts -> their chips, all chips at once
    flows = [(f"host{system.host_of(c)}", c, shard) for c in range(n)]
    pcie = time_flows(system, flows)
    pcie_rate = float(system.pcie_bandwidth)
    # 2. ICI: gather onto the root, both routings, and the bound
    chosen = "dimension-order" if ICI_ROUTINGS[ici_routing] == "shortest" else "disjoint"
    options, links_in, hot, limit = _gather_onto(sl, matrix, root_rank, chosen)
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
    cap = float(gen.hbm_capacity)
    notes = [] if matrix + rhs + out <= cap else [
        f"A alone is {format_bytes(matrix)}, {matrix / cap:.2f}x the root's {format_bytes(cap)} "
        f"of HBM: it cannot be gathered whole, only streamed"]
    return OffloadedMatmul(
        stages=stages, notes=tuple(notes), generation=gen.name, shape=tuple(sl.dims),
        num_chips=n, num_hosts=system.num_hosts, matrix_bytes=float(matrix),
        shard_bytes=float(shard), rhs_bytes=float(rhs), out_bytes=float(out), flops=flops,
        hbm_capacity=cap, ici_routing=chosen, ici_options=options, ici_hot_links=hot,
    )


# ---------------------------------------------------------------------------
# Data parallelism across slices: ICI inside, DCN between
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class MultisliceAllReduce(Pipeline):
    """:func:`multislice_all_reduce`'s answer: three stages, one after another.

    ``dcn_only`` is the time of the naive alternative that all-reduces each
    chip's whole array over the DCN (ring over the slices) without reducing
    inside the slice first; ``dcn_bound`` is the DCN stage's lower bound, the
    bytes every host must send over its DCN port divided by the port's bandwidth,
    and ``dcn_latency`` the latency its ring pays on top: one crossing from a chip to
    its twin (PCIe, DCN out and in, PCIe) for each of its ``dcn_steps`` steps.
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
    dcn_latency: float = 0.0


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
    from ..bounds import lower_bound
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
        dcn_only=ring_over_slices(V / S), dcn_bound=bound,
        dcn_latency=2 * (S - 1) * lower_bound("send", system, 0, src=0, dst=n).latency_time)
