"""From a program to the wire: time the collectives an HLO module runs, replay them on
the program's own data, and map PyTorch's calls onto the library's collectives.

:func:`time_hlo` takes what :func:`collectives_lib.hlo.parse_hlo` reads and times
every collective on a topology with :func:`collectives_lib.estimate`. The
module's device ids (partition ids: positions in the JAX mesh, row-major) are
the topology's ranks, so a collective runs over the topology axes whose groups
are its replica groups: on ``tpu_slice("v5e", "4x2")`` the groups
``{{0,2,4,6},{1,3,5,7}}`` are axis ``x``. Groups that are no axis of the
topology are refused with the groups and the topology's axes named.

>>> import collectives_lib as cl
>>> from collectives_lib.hlo import parse_hlo
>>> module = parse_hlo('''HloModule m, num_partitions=8
... %add (a: f32[], b: f32[]) -> f32[] {
...   %a = f32[] parameter(0)
...   %b = f32[] parameter(1)
...   ROOT %s = f32[] add(%a, %b)
... }
... ENTRY %main (p: f32[1024]) -> f32[1024] {
...   %p = f32[1024]{0} parameter(0)
...   ROOT %ar = f32[1024]{0} all-reduce(%p), channel_id=1, replica_groups=[2,4]<=[4,2]T(1,0), use_global_device_ids=true, to_apply=%add
... }''')
>>> timing = time_hlo(module, cl.tpu_slice("v5e", "4x2"), mesh="x=4,y=2")
>>> row = timing.rows[0]
>>> row.mesh_axes, row.topology_axes, row.estimate.group_size, row.estimate.num_groups
(('x',), ('x',), 4, 2)
>>> timing.total == row.time
True

:func:`replay_collective` runs the library's schedule of the same collective on
the same per-device arrays and returns what every device ends with, in the
layout JAX gives it, so a chapter can compare it with JAX's own result.

:data:`TORCH_CALLS` and :func:`torch_collective` map ``torch.distributed``
calls (and what DDP and FSDP issue) onto the library's collectives and
nccl-tests sizes, without importing PyTorch; :func:`ddp_fsdp_traffic` works
out what DDP and FSDP move for one training step.

Introduced in the chapter *From your code to the wire*.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np

from ..errors import CollectivesError
from ..hlo import HloCollective
from ..hlo import HloModule, format_groups, mesh_axes, mesh_sizes, parse_hlo
from ..models import MODELS, Estimate, default_model, estimate
from ..topology import Topology
from ..units import format_bytes, format_time

__all__ = ["HloRow", "HloTiming", "time_hlo", "topology_axes", "library_dtype", "summary", "shards",
           "replay_collective", "TORCH_CALLS", "TorchCall", "torch_collective",
           "ddp_fsdp_traffic"]

#: XLA element type -> the library's dtype name (what NCCL's model is told).
_DTYPES = {"f32": "float32", "bf16": "bfloat16", "f16": "float16", "f64": "float64",
           "s8": "int8", "u8": "uint8", "pred": "uint8", "s32": "int32", "u32": "uint32",
           "s64": "int64", "u64": "uint64", "f8e4m3fn": "float8_e4m3", "f8e4m3": "float8_e4m3",
           "f8e5m2": "float8_e5m2"}
_BY_SIZE = {1: "uint8", 2: "float16", 4: "float32", 8: "float64"}


def library_dtype(hlo_dtype: str) -> str:
    """The library's dtype for an XLA element type (``"bf16"`` -> ``"bfloat16"``);
    types the library does not name go by their size (``c64`` -> ``float64``)."""
    first = str(hlo_dtype).split("+")[0]
    if first in _DTYPES:
        return _DTYPES[first]
    from ..hlo import ELEMENT_BITS
    bits = ELEMENT_BITS.get(first)
    if bits is None:
        raise CollectivesError(f"unknown XLA element type {hlo_dtype!r}")
    return _BY_SIZE.get(max(1, bits // 8), "uint8")


def topology_axes(groups, topology: Topology) -> tuple[str, ...]:
    """The axes of ``topology`` whose rank groups are ``groups`` (device ids = ranks).

    ``groups`` is a :class:`collectives_lib.hlo.HloCollective` or a list of groups.
    ``()`` means groups of one device (nothing moves).
    """
    if isinstance(groups, HloCollective):
        if groups.num_devices != topology.num_ranks:
            raise CollectivesError(
                f"the module runs on {groups.num_devices} devices but {topology!r} has "
                f"{topology.num_ranks} ranks: pick a topology of {groups.num_devices}")
        groups = groups.replica_groups
    groups = [tuple(int(v) for v in g) for g in groups]
    if all(len(g) == 1 for g in groups):
        return ()
    want = {frozenset(g) for g in groups}
    names = list(topology.axis_names)
    for k in range(1, len(names) + 1):
        for subset in itertools.combinations(names, k):
            try:
                got = topology.axis_groups(list(subset))
            except CollectivesError:
                continue
            if {frozenset(int(v) for v in g) for g in np.asarray(got).tolist()} == want:
                return tuple(subset)
    axes = ", ".join(f"{a}={s}" for a, s in zip(names, topology.mesh_shape))
    raise CollectivesError(
        f"replica groups {format_groups(groups)} are not the groups of any axes of "
        f"{topology!r} (axes {axes}, ranks numbered row-major): pick a topology whose axes "
        f"match the mesh")


@dataclass(frozen=True)
class HloRow:
    """One collective of a module, timed: ``time`` counts its repeats."""

    collective: HloCollective
    mesh_axes: tuple[str, ...] | None
    topology_axes: tuple[str, ...]
    estimate: Estimate | None         # None: not timed (see ``note``)
    note: str = ""

    @property
    def repeats(self) -> int:
        return 1 if self.collective.repeats is None else self.collective.repeats

    @property
    def time(self) -> float:
        """Seconds one run of the program spends in it (0 when not timed)."""
        return 0.0 if self.estimate is None else self.estimate.time * self.repeats

    @property
    def bound(self) -> float:
        return 0.0 if self.estimate is None else self.estimate.bound.time * self.repeats

    def as_dict(self) -> dict:
        c, e = self.collective, self.estimate
        groups = ([list(p) for p in c.source_target_pairs] if c.kind == "collective_permute"
                  else [list(g) for g in c.replica_groups])
        return {
            "name": c.name, "kind": c.kind, "line": c.line,
            "operands": [str(a) for a in c.operands], "results": [str(a) for a in c.results],
            "dtype": c.dtype, "nbytes": c.nbytes,
            "replica_groups" if c.kind != "collective_permute" else "source_target_pairs": groups,
            "mesh_axes": None if self.mesh_axes is None else list(self.mesh_axes),
            "topology_axes": list(self.topology_axes),
            "repeats": c.repeats,
            "algorithm": None if e is None else e.label,
            "model": None if e is None else e.model,
            "time_s": None if e is None else e.time,
            "total_time_s": self.time,
            "lower_bound_s": None if e is None else e.bound.time,
            "efficiency": None if e is None else e.efficiency,
            "note": self.note,
        }


@dataclass(frozen=True)
class HloTiming:
    """Every collective of a module timed on one topology, and their total."""

    module: HloModule
    topology: Topology = field(repr=False)
    model: str
    mesh: dict | None
    rows: tuple[HloRow, ...]

    @property
    def total(self) -> float:
        """Seconds in collectives per run, run one after another (no overlap)."""
        return sum(r.time for r in self.rows)

    @property
    def total_bound(self) -> float:
        return sum(r.bound for r in self.rows)

    @property
    def total_bytes(self) -> int:
        return sum(r.collective.nbytes * r.repeats for r in self.rows)

    def table(self) -> list[list[str]]:
        """The rows as strings, header first (what ``collectives hlo`` prints)."""
        head = ["name", "kind", "operands", "dtype", "bytes", "groups", "mesh axes",
                "algorithm", "time", "bound", "times"]
        out = [head]
        for r in self.rows:
            c, e = r.collective, r.estimate
            groups = (f"{len(c.source_target_pairs)} pairs" if c.kind == "collective_permute"
                      else f"{c.num_groups}x{c.group_size}")
            axes = "-" if r.mesh_axes is None else (",".join(r.mesh_axes) or "(one device)")
            out.append([c.name, c.kind, ", ".join(map(str, c.operands)), c.dtype,
                        format_bytes(c.nbytes), groups, axes,
                        "-" if e is None else e.label,
                        "-" if e is None else format_time(e.time),
                        "-" if e is None else format_time(e.bound.time),
                        "?" if c.repeats is None else str(c.repeats)])
        return out

    def brief(self) -> str:
        """A narrow table (kind, mesh axes, bytes, algorithm, time) and the total,
        for pages and terminals of 80 columns."""
        rows = [["kind", "axes", "bytes", "algorithm", "time"]]
        for r in self.rows:
            c, e = r.collective, r.estimate
            axes = "-" if r.mesh_axes is None else ",".join(r.mesh_axes) or "one"
            times = "" if r.repeats == 1 else f" x{r.repeats}"
            rows.append([c.kind, axes, format_bytes(c.nbytes), "-" if e is None else e.label,
                         "-" if e is None else format_time(e.time) + times])
        widths = [max(len(r[i]) for r in rows) for i in range(5)]
        lines = ["  ".join(v.rjust(w) if i in (2, 4) else v.ljust(w)
                           for i, (v, w) in enumerate(zip(r, widths))).rstrip() for r in rows]
        model = "NCCL model" if self.model == "nccl" else "ideal link model"
        lines.append(f"total {format_time(self.total)} ({model}), lower bound "
                     f"{format_time(self.total_bound)}")
        return "\n".join(lines)

    def __str__(self) -> str:
        rows = self.table()
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines = ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in rows]
        model = ("NCCL's model" if self.model == "nccl" else "the ideal link model")
        head = (f"{self.module.name}: {len(self.rows)} collectives on {self.topology!r}, "
                f"{model}")
        total = (f"total {format_time(self.total)} per run (one after another), lower bound "
                 f"{format_time(self.total_bound)}, {format_bytes(self.total_bytes)} per device")
        notes = [f"{r.collective.name}: {r.note}" for r in self.rows if r.note]
        return "\n".join([head] + lines + [total] + notes)

    def as_dict(self) -> dict:
        return {"module": self.module.name, "num_devices": self.module.num_devices,
                "topology": repr(self.topology), "model": self.model, "mesh": self.mesh,
                "collectives": [r.as_dict() for r in self.rows],
                "total_time_s": self.total, "total_lower_bound_s": self.total_bound,
                "total_bytes": self.total_bytes}


def time_hlo(module, topology: Topology, *, mesh=None, model: str | None = None,
             algorithm: str = "auto") -> HloTiming:
    """Time every collective of ``module`` (an :class:`~collectives_lib.hlo.HloModule`
    or HLO text) on ``topology``, with the ideal link model or NCCL's model
    (``model=None``: NCCL's on GPU presets, ideal elsewhere).

    ``mesh`` (``"x=4,y=2"``, a dict or a ``jax.sharding.Mesh``) names the axes
    each collective spans in the program's terms; its size must be the
    module's. Permutes are listed but not timed (point-to-point, not a
    collective the library schedules); a loop whose trip count is not in the
    text counts once, with a note.
    """
    if not isinstance(module, HloModule):
        module = parse_hlo(module)
    if not isinstance(topology, Topology):
        raise CollectivesError(f"topology must be a Topology, got {topology!r}")
    if module.num_devices != topology.num_ranks:
        raise CollectivesError(
            f"module {module.name} runs on {module.num_devices} devices but {topology!r} has "
            f"{topology.num_ranks} ranks: pick a topology of {module.num_devices}")
    mesh_dict = None
    if mesh is not None:
        mesh_dict = mesh_sizes(mesh)
        size = int(np.prod(list(mesh_dict.values())))
        if size != module.num_devices:
            raise CollectivesError(
                f"mesh {','.join(f'{a}={s}' for a, s in mesh_dict.items())} has {size} "
                f"devices but module {module.name} runs on {module.num_devices}")
    rows = []
    used_model = None
    for c in module:
        axes_m = mesh_axes(c, mesh_dict) if mesh_dict is not None else None
        if c.kind == "collective_permute":
            rows.append(HloRow(c, axes_m, (), None, "a permute is point-to-point: not timed"))
            continue
        axes_t = topology_axes(c, topology)
        if not axes_t:
            rows.append(HloRow(c, axes_m, (), None, "groups of one device: nothing moves"))
            continue
        e = estimate(c.kind, topology, c.nbytes, algorithm, axes=list(axes_t), model=model,
                     dtype=library_dtype(c.dtype))
        used_model = e.model
        note = ""
        if c.repeats is None:
            note = "in a loop whose trip count the text does not give: counted once"
        rows.append(HloRow(c, axes_m, axes_t, e, note))
    if used_model is None:
        if model is not None and str(model).strip().lower() not in MODELS:
            raise CollectivesError(f"model must be one of {', '.join(MODELS)}, got {model!r}")
        used_model = default_model(topology) if model is None else str(model).strip().lower()
    return HloTiming(module, topology, used_model, mesh_dict, tuple(rows))


def summary(module, mesh=None) -> str:
    """One line for a module: ``"all_gather over y, 268 MB"`` per collective, or
    ``"no collective"``; without ``mesh`` the groups are given as count x size."""
    if not isinstance(module, HloModule):
        module = parse_hlo(module)
    parts = []
    for c in module:
        if mesh is not None:
            over = ",".join(mesh_axes(c, mesh)) or "one device"
        elif c.kind == "collective_permute":
            over = f"{len(c.source_target_pairs)} pairs"
        else:
            over = f"{c.num_groups}x{c.group_size}"
        parts.append(f"{c.kind} over {over}, {format_bytes(c.nbytes)}")
    return "; ".join(parts) or "no collective"


def shards(array, mesh) -> list[np.ndarray]:
    """Each device's block of a ``jax.Array``, in mesh order (the devices' ids in
    the HLO), as numpy arrays; read without importing JAX."""
    try:
        block = {s.device: np.asarray(s.data) for s in array.addressable_shards}
        devices = list(np.asarray(mesh.devices).ravel())
    except AttributeError:
        raise CollectivesError("shards takes a jax.Array and the jax.sharding.Mesh it is "
                               "sharded over") from None
    missing = [d for d in devices if d not in block]
    if missing:
        raise CollectivesError(f"the array has no block on {len(missing)} of the mesh's "
                               f"{len(devices)} devices: is it on this mesh?")
    return [block[d] for d in devices]


# ---------------------------------------------------------------------------
# replay on the program's data
# ---------------------------------------------------------------------------

def _parts(flat: np.ndarray, k: int) -> np.ndarray:
    """``flat`` cut into ``k`` slots, zero-padded to a multiple of ``k`` (the padding
    is summed or copied like any value and cut off again when read back)."""
    pad = -flat.size % k
    return np.concatenate([flat, np.zeros(pad)]).reshape(k, -1)


def _read(slots: np.ndarray, shape) -> np.ndarray:
    return slots.ravel()[: int(np.prod(shape, dtype=np.int64))].reshape(shape)


def replay_collective(collective: HloCollective, inputs, topology: Topology, *,
                      algorithm: str = "auto", split_axis: int | None = None,
                      concat_axis: int | None = None) -> list[np.ndarray]:
    """What every device ends with when the library's schedule of ``collective``
    (built on ``topology`` over the axes its groups span) runs on ``inputs``.

    ``inputs[d]`` is device ``d``'s operand (a numpy array of the operand's
    shape). Returns device ``d``'s result in JAX's layout: the gathered array
    (all-gather, along its dimension), its block of the sum (reduce-scatter),
    the sum (all-reduce), or the chunks from every device concatenated along
    the dimension (array all-to-all, split and concatenated on one dimension).
    The schedule moves every value (:func:`collectives_lib.replay_inputs`);
    numpy only cuts and joins the blocks.

    XLA's all-to-all splits and concatenates along one dimension; JAX's
    ``all_to_all(x, axis, split_axis, concat_axis, tiled=True)`` reshapes
    around it. Give ``split_axis`` and ``concat_axis`` to replay JAX's form on
    the shards as JAX sees them (the operand then need only hold as many
    elements).
    """
    from ..plan import build
    from ..replay import replay_inputs
    kind = collective.kind
    if kind not in ("all_gather", "reduce_scatter", "all_reduce", "all_to_all"):
        raise CollectivesError(f"replay_collective replays all_gather, reduce_scatter, "
                               f"all_reduce and all_to_all, not {kind}")
    if kind == "all_to_all" and collective.dimension is None:
        raise CollectivesError("a tuple all-to-all has one operand per peer: replay the array "
                               "form (unoptimized text) instead")
    arrays = [np.asarray(x, dtype=float) for x in inputs]
    n_dev = collective.num_devices
    if len(arrays) != n_dev:
        raise CollectivesError(f"inputs has {len(arrays)} arrays, one per device is "
                               f"{n_dev}")
    want = collective.operands[0].dims
    jax_form = kind == "all_to_all" and (split_axis is not None or concat_axis is not None)
    if (split_axis is not None or concat_axis is not None) and kind != "all_to_all":
        raise CollectivesError(f"split_axis and concat_axis are for all_to_all, not {kind}")
    for d, x in enumerate(arrays):
        if jax_form and x.size != collective.operands[0].num_elements:
            raise CollectivesError(f"inputs[{d}] has {x.size} elements, the operand "
                                   f"{collective.operands[0]} has "
                                   f"{collective.operands[0].num_elements}")
        if not jax_form and x.shape != want:
            raise CollectivesError(f"inputs[{d}] has shape {x.shape}, the operand is {want}")
    axes = topology_axes(collective, topology)
    sched = build(kind, topology, algorithm, axes=list(axes) if axes else None)
    owner, dest = sched.slot_roles
    _, local = sched.local_index
    n, S, dim = sched.group_size, sched.num_slots, collective.dimension
    if jax_form:
        dim = collective.dimension if split_axis is None else int(split_axis)
    join = dim if concat_axis is None else int(concat_axis)
    for axis in (dim, join):
        if dim is not None and not 0 <= axis < arrays[0].ndim:
            raise CollectivesError(f"axis {axis} is not a dimension of the {arrays[0].ndim}-d "
                                   f"inputs")
    per_owner = S // n if kind != "all_to_all" else S // (n * n)
    slots = np.arange(S)
    # JAX orders a group as the HLO lists it; the schedule, as the topology does
    hlo_group = {d: g for g in collective.replica_groups for d in g}
    data = np.zeros((sched.num_ranks, S, 1))
    blocks = {}
    for d, x in enumerate(arrays):
        mine, peers = int(local[d]), [int(local[p]) for p in hlo_group[d]]
        if kind == "all_gather":
            data = _fill(data, d, slots[owner == mine], x.ravel(), per_owner)
        elif kind == "all_reduce":
            flat = _parts(x.ravel(), S)
            data = _ensure(data, flat.shape[1])
            data[d, :, :] = flat
        else:
            split = np.split(x, n, axis=dim)
            blocks[d] = split[0].shape
            for j, peer in enumerate(peers):
                where = owner == peer if kind == "reduce_scatter" else (owner == mine) & (dest == peer)
                data = _fill(data, d, slots[where], split[j].ravel(), per_owner)
    final = replay_inputs(sched, data)[-1].values
    out = []
    for d, x in enumerate(arrays):
        mine, peers = int(local[d]), [int(local[p]) for p in hlo_group[d]]
        held = final[d]
        if kind == "all_gather":
            out.append(np.concatenate([_read(held[owner == p], x.shape) for p in peers],
                                      axis=dim))
        elif kind == "all_reduce":
            out.append(_read(held, x.shape))
        elif kind == "reduce_scatter":
            out.append(_read(held[owner == mine], blocks[d]))
        else:
            out.append(np.concatenate([_read(held[(owner == p) & (dest == mine)], blocks[d])
                                       for p in peers], axis=join))
    return out


def _ensure(data: np.ndarray, elements: int) -> np.ndarray:
    if data.shape[2] == elements:
        return data
    if data.shape[2] != 1 or data.any():
        raise CollectivesError("blocks of different sizes")      # pragma: no cover
    return np.zeros(data.shape[:2] + (elements,))


def _fill(data, d, where, flat, k):
    parts = _parts(flat, k)
    data = _ensure(data, parts.shape[1])
    data[d, where, :] = parts
    return data


# ---------------------------------------------------------------------------
# PyTorch: torch.distributed calls as the library's collectives
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class TorchCall:
    """One ``torch.distributed`` call (or what DDP or FSDP issues), as a collective.

    ``size`` says which buffer is nccl-tests' size: ``"tensor"`` (the tensor
    passed), ``"output"`` (the gathered output: world x the input), ``"input"``
    (the unscattered input: world x the output).
    """

    call: str
    collective: str
    size: str
    note: str


#: torch.distributed calls and what DDP and FSDP issue, as the library's collectives.
TORCH_CALLS: tuple[TorchCall, ...] = (
    TorchCall("all_reduce", "all_reduce", "tensor", "the tensor, summed in place on every rank"),
    TorchCall("all_gather_into_tensor", "all_gather", "output",
              "output = world x input, concatenated along dim 0"),
    TorchCall("reduce_scatter_tensor", "reduce_scatter", "input",
              "input = world x output; each rank keeps its block of the sum"),
    TorchCall("all_to_all_single", "all_to_all", "input", "one rank's buffer, split in world parts"),
    TorchCall("broadcast", "broadcast", "tensor", "from src to every rank"),
    TorchCall("DDP bucket", "all_reduce", "tensor",
              "DDP all-reduces gradients in buckets of bucket_cap_mb (25 MiB by default) as "
              "backward produces them"),
    TorchCall("FSDP all-gather", "all_gather", "output",
              "FSDP gathers a unit's flat parameters before its forward, and again before its "
              "backward when it resharded after forward (FULL_SHARD)"),
    TorchCall("FSDP reduce-scatter", "reduce_scatter", "input",
              "FSDP reduce-scatters a unit's flat gradient after its backward"),
)
_TORCH = {c.call.lower(): c for c in TORCH_CALLS}


def torch_collective(call: str, nbytes: int, world_size: int) -> tuple[str, int]:
    """``(collective, nccl-tests size)`` of one call whose *local* tensor has ``nbytes``.

    The local tensor is the input of ``all_gather_into_tensor`` and the output
    of ``reduce_scatter_tensor`` (one rank's shard), the tensor of the others;
    for DDP and FSDP it is the bucket or the unit's full flat parameters.

    >>> torch_collective("all_gather_into_tensor", 1024, 8)
    ('all_gather', 8192)
    >>> torch_collective("FSDP all-gather", 8192, 8)
    ('all_gather', 8192)
    """
    key = str(call).strip().lower()
    if key not in _TORCH:
        raise CollectivesError(f"unknown call {call!r}; known: "
                               f"{', '.join(c.call for c in TORCH_CALLS)}")
    from ..units import check_nbytes
    nbytes = check_nbytes(nbytes)
    if isinstance(world_size, bool) or not isinstance(world_size, (int, np.integer)) \
            or world_size < 1:
        raise CollectivesError(f"world_size must be a whole number >= 1, got {world_size!r}")
    c = _TORCH[key]
    shard = key in ("all_gather_into_tensor", "reduce_scatter_tensor")
    return c.collective, int(nbytes) * (int(world_size) if shard else 1)


def ddp_fsdp_traffic(param_bytes: int, topology: Topology, *, units: int = 1,
                     bucket_bytes: int = 25 * 2**20, model: str | None = None) -> dict:
    """What DDP and FSDP (FULL_SHARD) run in one training step over every rank
    of ``topology``, for ``param_bytes`` of parameters (and as many of gradients).

    DDP: one all-reduce per bucket. FSDP with ``units`` wrapped units: per unit,
    an all-gather before forward, another before backward, a reduce-scatter
    after. Returns ``{"ddp": [...], "fsdp": [...]}``, each a list of
    ``(what, collective, nbytes, count, estimate)``, with totals
    ``"ddp_time"``, ``"fsdp_time"`` and ``"ddp_bytes"``, ``"fsdp_bytes"``:
    the bytes each rank sends at least (nccl-tests' bus bytes, size x the
    collective's bus factor).
    """
    from ..collective import Collective as Coll
    from ..units import check_nbytes
    param_bytes = check_nbytes(param_bytes, what="param_bytes")
    bucket_bytes = check_nbytes(bucket_bytes, what="bucket_bytes")
    if isinstance(units, bool) or not isinstance(units, (int, np.integer)) or units < 1:
        raise CollectivesError(f"units must be a whole number >= 1, got {units!r}")
    n = topology.num_ranks
    full, rest = divmod(param_bytes, bucket_bytes)
    ddp_plan = [("bucket", "all_reduce", bucket_bytes, full)] if full else []
    if rest:
        ddp_plan.append(("last bucket", "all_reduce", rest, 1))
    unit = -(-param_bytes // units)
    fsdp_plan = [("forward all-gather", "all_gather", unit, units),
                 ("backward all-gather", "all_gather", unit, units),
                 ("gradient reduce-scatter", "reduce_scatter", unit, units)]
    out: dict = {}
    for name, plan in (("ddp", ddp_plan), ("fsdp", fsdp_plan)):
        rows = [(what, coll, size, count, estimate(coll, topology, size, model=model))
                for what, coll, size, count in plan]
        out[name] = rows
        out[f"{name}_time"] = sum(e.time * count for *_, count, e in rows)
        out[f"{name}_bytes"] = sum(size * Coll(coll).busbw_factor(n) * count
                                   for _, coll, size, count, _ in rows)
    return out
