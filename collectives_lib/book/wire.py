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

from dataclasses import dataclass

import numpy as np

from ..collective import Collective
from ..errors import CollectivesError
from ..hlo import HloCollective, HloModule, mesh_axes, parse_hlo, topology_axes
from ..models import estimate
from ..topology import Topology
from ..units import format_bytes

__all__ = ["summary", "shards", "replay_collective", "TORCH_CALLS", "TorchCall",
           "torch_collective", "Parameter", "llama_parameters", "Bucket", "ddp_buckets",
           "fsdp_collectives", "DEFAULT_FIRST_BUCKET_BYTES", "ddp_fsdp_traffic"]

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
    coll, arrays, jax_form = _replay_inputs(collective, inputs, split_axis, concat_axis)
    axes = topology_axes(collective, topology)
    sched = build(coll, topology, algorithm, axes=list(axes) if axes else None)
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
    per_owner = S // coll.pieces(n)          # slots per block (per pair, for all-to-all)
    slots = np.arange(S)
    # JAX orders a group as the HLO lists it; the schedule, as the topology does
    hlo_group = {d: g for g in collective.replica_groups for d in g}
    data = np.zeros((sched.num_ranks, S, 1))
    blocks = {}
    for d, x in enumerate(arrays):
        mine, peers = int(local[d]), [int(local[p]) for p in hlo_group[d]]
        if coll.starts == "owner" and coll.layout == "blocks":      # x is this rank's block
            data = _fill(data, d, slots[owner == mine], x.ravel(), per_owner)
        elif coll.ends == "everyone":                               # x is the whole array
            flat = _parts(x.ravel(), S)
            data = _ensure(data, flat.shape[1])
            data[d, :, :] = flat
        else:                                                       # x holds one part per peer
            split = np.split(x, n, axis=dim)
            blocks[d] = split[0].shape
            for j, peer in enumerate(peers):
                where = owner == peer if coll.reduces else (owner == mine) & (dest == peer)
                data = _fill(data, d, slots[where], split[j].ravel(), per_owner)
    final = replay_inputs(sched, data)[-1].values
    out = []
    for d, x in enumerate(arrays):
        mine, peers = int(local[d]), [int(local[p]) for p in hlo_group[d]]
        held = final[d]
        if coll.ends == "everyone" and not coll.reduces:            # every peer's block
            out.append(np.concatenate([_read(held[owner == p], x.shape) for p in peers],
                                      axis=dim))
        elif coll.ends == "everyone":                               # the whole sum
            out.append(_read(held, x.shape))
        elif coll.ends == "owner":                                  # this rank's block of it
            out.append(_read(held[owner == mine], blocks[d]))
        else:
            out.append(np.concatenate([_read(held[(owner == p) & (dest == mine)], blocks[d])
                                       for p in peers], axis=join))
    return out


def _replay_inputs(collective: HloCollective, inputs, split_axis, concat_axis):
    """The :class:`Collective` replayed, the inputs as float arrays, checked against
    it, and whether they are in JAX's all-to-all form (split and concatenated on other
    axes)."""
    kind = collective.kind
    coll = collective.collective
    if coll is None or coll.rooted:          # replay covers the collectives without a root
        raise CollectivesError(f"replay_collective replays all_gather, reduce_scatter, "
                               f"all_reduce and all_to_all, not {kind}")
    pairs = coll.layout == "pairs"
    if pairs and collective.dimension is None:
        raise CollectivesError("a tuple all-to-all has one operand per peer: replay the array "
                               "form (unoptimized text) instead")
    arrays = [np.asarray(x, dtype=float) for x in inputs]
    n_dev = collective.num_devices
    if len(arrays) != n_dev:
        raise CollectivesError(f"inputs has {len(arrays)} arrays, one per device is "
                               f"{n_dev}")
    want = collective.operands[0].dims
    jax_form = pairs and (split_axis is not None or concat_axis is not None)
    if (split_axis is not None or concat_axis is not None) and not pairs:
        raise CollectivesError(f"split_axis and concat_axis are for all_to_all, not {kind}")
    for d, x in enumerate(arrays):
        if jax_form and x.size != collective.operands[0].num_elements:
            raise CollectivesError(f"inputs[{d}] has {x.size} elements, the operand "
                                   f"{collective.operands[0]} has "
                                   f"{collective.operands[0].num_elements}")
        if not jax_form and x.shape != want:
            raise CollectivesError(f"inputs[{d}] has shape {x.shape}, the operand is {want}")
    return coll, arrays, jax_form


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
              "DDP all-reduces whole gradients in buckets, in reverse parameter order: the "
              "first closes at 1 MiB, the others once they reach bucket_cap_mb (25 MiB)"),
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


#: DDP's cap on the first bucket of gradients (``dist._DEFAULT_FIRST_BUCKET_BYTES``): 1 MiB.
DEFAULT_FIRST_BUCKET_BYTES = 2**20
_ELEMENT_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2, "float64": 8, "float8": 1,
                  "int8": 1, "uint8": 1, "int32": 4, "int64": 8}


@dataclass(frozen=True)
class Parameter:
    """One parameter tensor of a model, as DDP and FSDP see it: its name, shape,
    dtype, device and the FSDP unit (wrapped module) it belongs to (``"root"``: the
    outermost module's own parameters)."""

    name: str
    shape: tuple[int, ...]
    dtype: str = "bfloat16"
    unit: str = "root"
    device: str = "cuda"

    @property
    def nbytes(self) -> int:
        if self.dtype not in _ELEMENT_BYTES:
            raise CollectivesError(f"parameter {self.name}: dtype {self.dtype!r} is not one of "
                                   f"{', '.join(_ELEMENT_BYTES)}")
        return int(np.prod(self.shape, dtype=np.int64)) * _ELEMENT_BYTES[self.dtype]


def llama_parameters(*, layers: int = 32, hidden: int = 4096, intermediate: int = 14336,
                     heads: int = 32, kv_heads: int = 8, vocab: int = 128256,
                     dtype: str = "bfloat16") -> list[Parameter]:
    """A Llama-shaped model's parameters in definition order (Hugging Face's
    ``LlamaForCausalLM``: ``embed_tokens``; per layer ``q, k, v, o`` projections,
    ``gate, up, down``, two RMSNorm weights; the final norm; ``lm_head``, untied).
    The defaults are Llama 3 8B's: 8.03 billion parameters. Each layer is its own
    FSDP unit; the embedding, final norm and head belong to the root."""
    kv = hidden // heads * kv_heads
    out = [Parameter("model.embed_tokens.weight", (vocab, hidden), dtype)]
    for i in range(layers):
        unit = f"model.layers.{i}"
        shapes = [("self_attn.q_proj", (hidden, hidden)), ("self_attn.k_proj", (kv, hidden)),
                  ("self_attn.v_proj", (kv, hidden)), ("self_attn.o_proj", (hidden, hidden)),
                  ("mlp.gate_proj", (intermediate, hidden)), ("mlp.up_proj", (intermediate, hidden)),
                  ("mlp.down_proj", (hidden, intermediate)), ("input_layernorm", (hidden,)),
                  ("post_attention_layernorm", (hidden,))]
        out.extend(Parameter(f"{unit}.{n}.weight", shape, dtype, unit) for n, shape in shapes)
    out.append(Parameter("model.norm.weight", (hidden,), dtype))
    out.append(Parameter("lm_head.weight", (vocab, hidden), dtype))
    return out


@dataclass(frozen=True)
class Bucket:
    """One DDP gradient bucket: the parameters it holds (indices in definition
    order, in the order their gradients fill it) and its bytes (the all-reduce's size)."""

    indices: tuple[int, ...]
    nbytes: int
    dtype: str


def ddp_buckets(parameters, *, bucket_cap_mb: float = 25,
                first_bucket_bytes: int = DEFAULT_FIRST_BUCKET_BYTES) -> list[Bucket]:
    """DDP's gradient buckets, in the order they are all-reduced, as torch's reducer
    makes them from the second iteration on.

    After the first backward pass the reducer rebuilds its buckets in the order the
    gradients became ready (``Reducer::rebuild_buckets``), which for a model whose
    layers run in definition order is the reverse of it; it assigns them with
    ``compute_bucket_assignment_by_size`` (``torch/csrc/distributed/c10d/reducer.cpp``,
    pytorch/pytorch at 00413201d3d38d5b5bb039180220d5a0d6c74052) over the limits
    ``[first_bucket_bytes, bucket_cap_mb * 2**20]`` (``torch/nn/parallel/distributed.py``
    at 25562d3d418774598bd22d0fae875897a96a917b: ``_DEFAULT_FIRST_BUCKET_BYTES`` is
    1 MiB, ``bucket_bytes_cap = int(bucket_cap_mb * 1024 * 1024)``):

    * tensors are never split: a bucket takes whole gradients;
    * a bucket of one dtype and device fills until its bytes *reach* its limit
      (``size >= limit``) and then closes, so it may exceed the cap by up to one
      tensor (a 1 GB ``lm_head`` is one bucket alone);
    * the first bucket of each dtype and device closes at 1 MiB, the others at the cap;
    * what is left open at the end becomes one last bucket per dtype and device.

    >>> ps = [Parameter("a", (256, 1024)), Parameter("b", (4096, 1024)), Parameter("c", (1024,))]
    >>> [(b.indices, b.nbytes) for b in ddp_buckets(ps, bucket_cap_mb=4)]
    [((2, 1), 8390656), ((0,), 524288)]
    """
    params = list(parameters)
    if not params or not all(isinstance(p, Parameter) for p in params):
        raise CollectivesError("ddp_buckets takes a non-empty list of Parameter values")
    cap = int(float(bucket_cap_mb) * 1024 * 1024)
    if cap < 1 or first_bucket_bytes < 1:
        raise CollectivesError(f"bucket_cap_mb must give at least 1 byte, got {bucket_cap_mb!r}")
    limits = (int(first_bucket_bytes), cap)
    open_: dict[tuple, list] = {}          # (dtype, device) -> [indices, bytes, closed so far]
    out: list[Bucket] = []
    for i in reversed(range(len(params))):
        p = params[i]
        key = (p.dtype, p.device)
        acc = open_.setdefault(key, [[], 0, 0])
        acc[0].append(i)
        acc[1] += p.nbytes
        if acc[1] >= limits[min(acc[2], 1)]:
            out.append(Bucket(tuple(acc[0]), acc[1], p.dtype))
            open_[key] = [[], 0, acc[2] + 1]
    out.extend(Bucket(tuple(a[0]), a[1], dt) for (dt, _), a in open_.items() if a[0])
    return out


def fsdp_collectives(parameters, world_size: int) -> list[tuple[str, str, str, int]]:
    """What FSDP2 (``fully_shard`` on each unit and the root, ``reshard_after_forward``
    by default) runs in one step: ``(unit, phase, collective, nccl-tests size)`` in
    order. Each unit's parameters form one flat buffer, padded to a multiple of the
    world size: it is all-gathered before the unit's forward and, being resharded
    after it, again before its backward (the root's is kept from forward to
    backward), and its gradient is reduce-scattered after its backward. FSDP
    prefetches the next unit's all-gather while the current one computes, which
    overlaps them with compute but changes no bytes."""
    if isinstance(world_size, bool) or not isinstance(world_size, (int, np.integer)) \
            or world_size < 1:
        raise CollectivesError(f"world_size must be a whole number >= 1, got {world_size!r}")
    units: dict[str, int] = {}
    for p in parameters:
        units[p.unit] = units.get(p.unit, 0) + p.nbytes
    pad = {u: -(-b // world_size) * world_size for u, b in units.items()}
    order = [u for u in units if u != "root"]
    head = ["root"] if "root" in units else []
    out = [(u, "forward", "all_gather", pad[u]) for u in head + order]
    out += [(u, "backward", "all_gather", pad[u]) for u in reversed(order)]
    out += [(u, "backward", "reduce_scatter", pad[u]) for u in reversed(order)] + \
           [(u, "backward", "reduce_scatter", pad[u]) for u in head]
    return out


def ddp_fsdp_traffic(parameters, topology: Topology, *, bucket_cap_mb: float = 25,
                     model: str | None = None) -> dict:
    """What DDP (:func:`ddp_buckets`) and FSDP2 (:func:`fsdp_collectives`) run in one
    training step over every rank of ``topology``, for a model's ``parameters``
    (a list of :class:`Parameter`, such as :func:`llama_parameters`).

    Returns ``{"ddp": [...], "fsdp": [...]}``, each a list of
    ``(what, collective, nbytes, count, estimate)`` (collectives of one size
    counted together), with totals ``"ddp_time"``, ``"fsdp_time"`` (one after
    another, no overlap) and ``"ddp_bytes"``, ``"fsdp_bytes"``: the bytes each
    rank sends at least (nccl-tests' bus bytes, size x the collective's bus factor).
    """
    params = list(parameters)
    n = topology.num_ranks
    plans = {"ddp": [("bucket", "all_reduce", b.nbytes) for b in ddp_buckets(params, bucket_cap_mb=bucket_cap_mb)],
             "fsdp": [(f"{phase} {coll.replace('_', '-')}", coll, size)
                      for _, phase, coll, size in fsdp_collectives(params, n)]}
    out: dict = {}
    cache: dict = {}
    for name, plan in plans.items():
        counted: dict = {}
        for what, coll, size in plan:
            counted[(what, coll, size)] = counted.get((what, coll, size), 0) + 1
        rows = []
        for (what, coll, size), count in counted.items():
            if (coll, size) not in cache:
                cache[coll, size] = estimate(coll, topology, size, model=model)
            rows.append((what, coll, size, count, cache[coll, size]))
        out[name] = rows
        out[f"{name}_time"] = sum(e.time * count for *_, count, e in rows)
        out[f"{name}_bytes"] = sum(size * Collective(coll).busbw_factor(n) * count
                                   for _, coll, size, count, _ in rows)
        out[f"{name}_count"] = len(plan)
    return out
