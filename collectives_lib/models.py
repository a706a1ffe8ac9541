"""One question, two models: how long does this collective take here?

:func:`sweep` answers for many sizes and :func:`estimate` for one
(``estimate(..., size)`` is ``sweep(..., [size])[0]``), with either model, and
the answer says which:

* ``model="ideal"``, the **ideal link model**: the schedule is timed on the
  topology's links (:mod:`collectives_lib.timing`, with the simulator). It
  teaches: every second is a link's bandwidth or latency.
  :class:`~collectives_lib.estimates.IdealEstimate`.
* ``model="nccl"``, **NCCL's model**: what NCCL's tuner picks for its
  algorithm and protocol, and what nccl-tests would then measure
  (:func:`collectives_lib.nccl.estimate`). It applies to the GPU presets
  (``nvswitch_node``, ``GpuCluster``) and is their default.
  :class:`~collectives_lib.estimates.NcclEstimate`.

Every answer carries the lower bound for its kind of algorithm
(:func:`collectives_lib.bounds.lower_bound`) and its efficiency against it,
the size in nccl-tests' meaning (for all-to-all, one rank's buffer), and a
note when the size did not split into equal shards of whole elements.

>>> import collectives_lib as cl
>>> e = cl.estimate("all_reduce", cl.nvswitch_node("dgx-h100"), 2**32)
>>> e.model, e.algorithm, e.protocol, cl.format_time(e.tuner_time), cl.format_time(e.time)
('nccl', 'nvls', 'SIMPLE', '15.8 ms', '16.2 ms')
>>> round(e.busbw / 1e9)
465

Introduced in the chapter *A first look*; every chapter uses it.
"""

from __future__ import annotations

from dataclasses import replace

from . import checks, nccl, timing
from .builders import algorithm_name, check_options
from .collective import collective as as_collective
from .errors import CollectivesError
from .estimates import Estimate, IdealEstimate, NcclEstimate
from .topology import Topology
from .units import DTYPES, check_nbytes, element_size

__all__ = ["MODELS", "Estimate", "IdealEstimate", "NcclEstimate", "estimate", "sweep", "default_model",
           "algorithms"]

MODELS = ("ideal", "nccl")


def default_model(topology: Topology) -> str:
    """``"nccl"`` on the GPU presets, ``"ideal"`` everywhere else."""
    return "nccl" if nccl.supports(topology) else "ideal"


def model_for(model, topology: Topology) -> str:
    """``model`` checked (None: the topology's default)."""
    if model is None:
        return default_model(topology)
    key = str(model).strip().lower()
    if key not in MODELS:
        raise CollectivesError(f"model must be one of {', '.join(MODELS)}, got {model!r}")
    return key


def _dtype(dtype) -> str:
    key = str(dtype).strip().lower()
    if key not in DTYPES:
        raise CollectivesError(f"dtype {dtype!r} is not one of {', '.join(DTYPES)}")
    return key


def sweep(collective, topology: Topology, sizes, algorithm: str = "auto", *, axes=None,
          model: str | None = None, protocol: str | None = None, dtype: str = "float32",
          nvls: bool | None = None, overhead: float = 0.0, placement=None, launch=None,
          registered: bool = False, **options) -> list[Estimate]:
    """How long ``collective`` takes on ``topology`` at every size in ``sizes``.

    Each size is nccl-tests' size for the collective (for all-to-all, one rank's
    buffer; any positive size). ``algorithm`` is a registered name or ``auto``,
    which may pick a different algorithm at each size. With NCCL's model
    ``auto`` is NCCL's tuner; ``protocol`` (LL, LL128, Simple) fixes the
    protocol and ``nvls=False`` is ``NCCL_NVLS_ENABLE=0``. With the ideal model
    ``auto`` is :func:`collectives_lib.timing.auto_rule`, and ``overhead``
    (seconds per step) and ``placement`` (rank -> endpoint) apply. ``dtype``
    sets the element size (float32 by default, as nccl-tests). Under NCCL's
    model ``launch`` says how the GPUs are driven (``"process-per-gpu"``, the
    default; ``"gpus-per-process=G"``, nccl-tests ``-g G``; either with
    ``"+graph"``, nccl-tests ``-G``) and ``registered=True`` is buffers registered
    as symmetric windows (nccl-tests ``-R 2``). Every candidate is built, routed
    and timed once for all the sizes.
    """
    coll = as_collective(collective)
    check_options(coll, options)
    if nvls is not None:
        checks.flag(nvls, "nvls (NVLink SHARP on or off; None: where the system has it)")
    which = model_for(model, topology)
    dt = _dtype(dtype)
    if isinstance(sizes, (str, bytes)) or not hasattr(sizes, "__iter__"):
        raise CollectivesError(f"sizes must be a list of sizes in bytes, got {sizes!r}")
    # (whole numbers of bytes below 2**53, the common case, need no float check)
    sizes = [s if type(s) is int and 0 < s < 1 << 53 else check_nbytes(s) for s in sizes]
    if not sizes:
        raise CollectivesError("a sweep needs at least one size")
    name = algorithm_name(algorithm)
    if which == "ideal":
        if protocol is not None:
            raise CollectivesError("protocols (LL, LL128, Simple) belong to NCCL's model; "
                                   "use model='nccl' or leave protocol out")
        if nvls is not None:
            raise CollectivesError("nvls (NCCL_NVLS_ENABLE) belongs to NCCL's model; in the ideal model "
                                   "name the algorithm (nvls, or one that does not reduce in the switch)")
        if launch is not None or registered:
            raise CollectivesError("launch and registered (how NCCL's kernels are launched, registered "
                                   "buffers) belong to NCCL's model; the ideal link model times links only")
        return _with_fabric(topology, timing.sweep(
            coll, topology, sizes, name, axes=axes, options=options, dtype=dt,
            element_size=element_size(dt), overhead=checks.nonnegative(overhead, "overhead"),
            placement=placement))
    if overhead or placement is not None:
        raise CollectivesError("overhead and placement belong to the ideal link model; "
                               "use model='ideal' or leave them out")
    return _with_fabric(topology, nccl.estimate(coll, topology, sizes, name, axes=axes, protocol=protocol,
                                                dtype=dt, nvls=nvls, options=options, launch=launch,
                                                registered=registered))


def _with_fabric(topology: Topology, answers: list) -> list:
    """Answers on a RoCE cluster say what the fabric changes: NCCL drives RoCE through
    the same IB verbs transport as InfiniBand, and the links are the same links, so only
    SHARP (InfiniBand switches) depends on it, and a RoCE cluster has none."""
    if getattr(topology, "fabric", "infiniband") == "infiniband" or getattr(topology, "num_nodes", 1) < 2:
        return answers
    note = ("; RoCE fabric: NCCL's IB verbs transport and the same link figures as InfiniBand, "
            "without SHARP")
    return [replace(e, reason=e.reason + note) for e in answers]


def estimate(collective, topology: Topology, nbytes: int, algorithm: str = "auto", *, axes=None,
             model: str | None = None, protocol: str | None = None, dtype: str = "float32",
             nvls: bool | None = None, overhead: float = 0.0, placement=None, launch=None,
             registered: bool = False, **options) -> Estimate:
    """How long ``collective`` of ``nbytes`` takes on ``topology``: :func:`sweep` at one size."""
    return sweep(collective, topology, [nbytes], algorithm, axes=axes, model=model, protocol=protocol,
                 dtype=dtype, nvls=nvls, overhead=overhead, placement=placement, launch=launch,
                 registered=registered, **options)[0]


def algorithms(collective, topology: Topology, axes=None, *, model: str | None = None,
               nvls: bool | None = None, protocol: str | None = None, dtype: str = "float32",
               **options) -> dict[str, str | None]:
    """Every algorithm :func:`estimate` knows for ``collective``, under ``model`` (None:
    the topology's default): None where ``estimate`` accepts it here, else why not.
    Under NCCL's model the accepted ones are those NCCL runs here."""
    from .builders import reasons
    coll = as_collective(collective)
    check_options(coll, options)
    table = reasons(coll, topology, axes, options)
    if model_for(model, topology) == "ideal":
        return table
    here = nccl.names_here(coll, topology, axes, nvls=nvls, dtype=_dtype(dtype), protocol=protocol)
    out = {}
    for name in table:
        if name in here:
            out[name] = None
        else:
            out[name] = (f"NCCL does not run {name} for {coll} here (it runs {', '.join(here)}); "
                         f"model='ideal' times it on the links")
    return out
