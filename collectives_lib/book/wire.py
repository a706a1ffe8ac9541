"""From a program to the wire: replay the collectives an HLO module runs on the
program's own data, and map PyTorch's calls (and what DDP and FSDP issue) onto
the library's collectives.

Timing a module is the HLO tool's (:func:`collectives_lib.hlo.time_hlo`, which
``collectives hlo`` prints); this module is the book's side of the chapter.

:func:`replay_collective` runs the library's schedule of the same collective on
the same per-device arrays and returns what every device ends with, in the
layout JAX gives it, so a chapter can compare it with JAX's own result.

:data:`TORCH_CALLS` and :func:`torch_collective` map ``torch.distributed``
calls (and what DDP and FSDP issue) onto the library's collectives and
nccl-tests sizes, without importing PyTorch; :func:`ddp_buckets` assigns
gradients to DDP's buckets as torch's reducer does, and
:func:`ddp_fsdp_traffic` works out what DDP and FSDP move for one training step.

Introduced in the chapter *From your code to the wire*.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import CollectivesError
from ..hlo import HloCollective, HloModule, mesh_axes, parse_hlo, topology_axes
from ..models import estimate
from ..topology import Topology
from ..units import format_bytes

__all__ = ["summary", "shards", "replay_collective", "TORCH_CALLS", "TorchCall",
           "torch_collective", "ddp_fsdp_traffic"]

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
