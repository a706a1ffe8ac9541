"""One question, two models: how long does this collective take here?

:func:`estimate` answers with either model and says which:

* ``model="ideal"``, the **ideal link model**: the schedule is timed on the
  topology's links (:func:`collectives_lib.simulate`). It teaches: every
  second is a link's bandwidth or latency.
* ``model="nccl"``, **NCCL's model**: what NCCL's tuner predicts for its
  algorithm and protocol (:mod:`collectives_lib.nccl`), which is what a
  reader will measure with nccl-tests on that hardware. It applies to the GPU
  presets (``nvswitch_node``, ``GpuCluster``) and is their default.

Every answer carries the lower bound (:func:`collectives_lib.bounds.lower_bound`)
and the schedule's efficiency against it, the size in nccl-tests' meaning
(for all-to-all, one rank's buffer), and a note when the size did not split
into equal shards of whole elements.

>>> import collectives_lib as cl
>>> e = cl.estimate("all_reduce", cl.nvswitch_node("dgx-h100"), 2**32)
>>> e.model, e.algorithm, e.protocol, cl.format_time(e.nccl_time), cl.format_time(e.time)
('nccl', 'nvls', 'SIMPLE', '15.8 ms', '16.3 ms')
>>> round(e.busbw / 1e9)
463

Introduced in the chapter *A first look*; every chapter uses it.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import numpy as np

from . import checks, nccl
from .analysis import Choice, nccl_menu, resolve
from .bounds import Bound, lower_bound, lower_bounds
from .builders import build_named, buildable, check_options, closed_form_instead, entries, group_for, reasons, steps_estimate
from .collective import Collective, collective as as_collective
from .errors import CollectivesError
from .schedule import Schedule
from .simulate import Result, simulate, simulate_sizes
from .topology import Topology, Torus
from .units import DTYPES, check_nbytes, element_size, format_bytes, format_rate, format_time

MODELS = ("ideal", "nccl")


@dataclass(frozen=True)
class Estimate:
    """An answer: a time, what it is made of, the bound beside it, and which model said so."""

    collective: Collective
    topology: Topology = field(repr=False)
    algorithm: str
    model: str
    nbytes: int                       # nccl-tests' size (for all-to-all, one rank's buffer)
    dtype: str
    time: float
    latency_time: float
    bandwidth_time: float
    group_size: int
    num_groups: int
    num_steps: int
    reason: str
    bound: Bound
    protocol: str | None = None       # NCCL's model: LL, LL128 or SIMPLE
    nccl_algorithm: str | None = None # NCCL's name for the algorithm
    nccl_time: float | None = None    # NCCL's model: the tuner's own prediction (time is what runs measure)
    note: str = ""                    # how the size split, when not evenly
    alternatives: tuple = ()          # (label, time) of the other candidates auto weighed
    result: Result | None = field(default=None, repr=False)   # the simulator's, ideal model
    schedule: Schedule | None = field(default=None, repr=False)

    @property
    def moves_nothing(self) -> bool:
        """One rank per group: nothing moves, the time is 0 and bandwidths do not apply."""
        return self.group_size == 1 or self.time == 0

    @property
    def algbw(self) -> float:
        """nccl-tests' algorithm bandwidth: size / time (0.0 where nothing moves; see
        :attr:`moves_nothing`, and :meth:`as_dict`, which says null there)."""
        return self.nbytes / self.time if self.time > 0 else 0.0

    @property
    def busbw(self) -> float:
        """nccl-tests' bus bandwidth: algbw times the collective's factor."""
        return self.algbw * self.collective.busbw_factor(self.group_size)

    @property
    def efficiency(self) -> float:
        """The lower bound as a share of the time (1: the bound is reached)."""
        return self.bound.efficiency(self.time)

    @property
    def choice(self) -> Choice:
        return Choice(self.algorithm, self.reason)

    def _simulated(self, what: str):
        if self.result is None:
            raise CollectivesError(f"{what} comes from the simulator: estimate with model='ideal' "
                                   f"to see the links ({self.model} model here)")
        return getattr(self.result, what)

    @property
    def link_bytes(self):
        """Bytes on every link (ideal model)."""
        return self._simulated("link_bytes")

    @property
    def link_busy(self):
        return self._simulated("link_busy")

    @property
    def stage_times(self) -> dict:
        return self._simulated("stage_times")

    @property
    def step_times(self):
        return self._simulated("step_times")

    @property
    def time_unoverlapped(self) -> float:
        return self._simulated("time_unoverlapped")

    @property
    def bottleneck(self) -> str:
        """The busiest link (ideal model), or what NCCL's model says instead."""
        if self.result is None:
            return f"NCCL's model: {self.nccl_algorithm}/{self.protocol} over its channels"
        return self.result.bottleneck

    @property
    def label(self) -> str:
        return self.algorithm + (f" ({self.nccl_algorithm}/{self.protocol})" if self.protocol else "")

    def __str__(self) -> str:
        rates = ("one rank: nothing moves" if self.moves_nothing else
                 f"algbw {format_rate(self.algbw)}, busbw {format_rate(self.busbw)}")
        return (f"{self.label} {self.collective} of {format_bytes(self.nbytes)} over "
                f"{self.group_size} ranks ({self.model} model): {format_time(self.time)}, "
                f"{rates}; "
                f"lower bound {format_time(self.bound.time)} ({self.efficiency:.0%} of it reached)")

    def as_dict(self) -> dict:
        """Plain, JSON-safe values (no infinities or NaN)."""
        out = {
            "collective": self.collective.value, "topology": repr(self.topology),
            "algorithm": self.algorithm, "model": self.model, "protocol": self.protocol,
            "nccl_algorithm": self.nccl_algorithm, "nccl_tuner_time_s": self.nccl_time,
            "nbytes": self.nbytes, "dtype": self.dtype,
            "array_bytes": self.nbytes * (self.group_size if self.collective.layout == "pairs" else 1),
            "time_s": self.time, "latency_time_s": self.latency_time,
            "bandwidth_time_s": self.bandwidth_time,
            "algbw": None if self.moves_nothing else self.algbw,
            "busbw": None if self.moves_nothing else self.busbw,
            "num_ranks": self.topology.num_ranks, "group_size": self.group_size,
            "groups": self.num_groups, "steps": self.num_steps, "why": self.reason,
            "note": self.note, "lower_bound": self.bound.as_dict(), "efficiency": self.efficiency,
            "alternatives": [{"algorithm": a, "time_s": t} for a, t in self.alternatives],
        }
        if self.result is not None:
            out["bottleneck"] = self.result.bottleneck
            out["stage_times_s"] = dict(self.result.stage_times)
        return _finite(out)


def _finite(value):
    if isinstance(value, float) and not math.isfinite(value):
        raise CollectivesError(f"an estimate came out as {value}: please report this input")
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def default_model(topology: Topology) -> str:
    """``"nccl"`` on the GPU presets, ``"ideal"`` everywhere else."""
    return "nccl" if nccl.supports(topology) else "ideal"


def _model(model, topology: Topology) -> str:
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


#: NCCL's algorithm names and the registry's (the registry's entries carry ``nccl=``).
NCCL_TO_REGISTRY = {"RING": "ring", "TREE": "tree", "NVLS": "nvls", "NVLS_TREE": "nvls_tree",
                    "COLLNET_DIRECT": "collnet_direct", "COLLNET_CHAIN": "collnet_chain",
                    "PAT": "pat"}


def _nccl_names(coll: Collective) -> dict[str, str]:
    """NCCL's algorithm name -> the registry's, for this collective (broadcast and
    reduce: NCCL's ring is a pipelined chain along the ring order)."""
    names = dict(NCCL_TO_REGISTRY)
    for a in entries(coll).values():
        if a.nccl:
            names[a.nccl] = a.name
    return names


def estimate(collective, topology: Topology, nbytes: int, algorithm: str = "auto", *,
             axes=None, model: str | None = None, protocol: str | None = None,
             dtype: str = "float32", nvls: bool | None = None, overhead: float = 0.0,
             placement=None, **options) -> Estimate:
    """How long ``collective`` of ``nbytes`` takes on ``topology``, in one of the two models.

    ``nbytes`` is nccl-tests' size for the collective (for all-to-all, one rank's
    buffer; any positive size works). ``algorithm`` is a registered name or
    ``auto``. With NCCL's model ``auto`` is NCCL's tuner: the (algorithm,
    protocol) with the least predicted time; ``protocol`` (LL, LL128, Simple)
    fixes the protocol and ``nvls=False`` is ``NCCL_NVLS_ENABLE=0``. With the
    ideal model ``auto`` is :func:`collectives_lib.analysis.choose`, and
    ``overhead`` (seconds per step) and ``placement`` (rank -> endpoint) apply.
    ``dtype`` sets the element size (float32 by default, as nccl-tests).
    """
    coll = as_collective(collective)
    check_options(coll, options)
    if nvls is not None:
        checks.flag(nvls, "nvls (NVLink SHARP on or off; None: where the system has it)")
    which = _model(model, topology)
    dt = _dtype(dtype)
    nbytes = check_nbytes(nbytes)
    esize = element_size(dt)
    if which == "ideal":
        if protocol is not None:
            raise CollectivesError("protocols (LL, LL128, Simple) belong to NCCL's model; "
                                   "use model='nccl' or leave protocol out")
        return _ideal(coll, topology, nbytes, algorithm, axes, dt, esize, overhead, placement, options)
    if overhead or placement is not None:
        raise CollectivesError("overhead and placement belong to the ideal link model; "
                               "use model='ideal' or leave them out")
    return _nccl(coll, topology, nbytes, algorithm, axes, dt, esize, protocol, nvls, options)


def _ideal(coll, topology, nbytes, algorithm, axes, dt, esize, overhead, placement, options):
    choice = resolve(coll, topology, algorithm, nbytes, axes, options)
    formula = closed_form_instead(coll, topology, choice.algorithm, axes, options)
    if formula is not None and not overhead and placement is None:
        return _closed_form_estimates(coll, topology, [nbytes], choice, formula, axes, dt, options)[0]
    sched = build_named(coll, topology, choice.algorithm, axes, options)
    res = simulate(sched, topology, nbytes, overhead=overhead, placement=placement, element_size=esize)
    bound = lower_bound(coll, topology, res.nbytes, axes=axes, **_bound_options(coll, options))
    return Estimate(coll, topology, sched.algorithm if choice.algorithm == sched.algorithm else choice.algorithm,
                    "ideal", res.nbytes, dt, res.time, res.latency_time, res.time - res.latency_time,
                    sched.group_size, sched.num_groups, res.num_steps, choice.reason, bound,
                    note=res.note, result=res, schedule=sched)


def _closed_form_estimates(coll, topology, sizes, choice, formula, axes, dt, options) -> list[Estimate]:
    """Estimates from the algorithm's closed form, for a schedule too large to build:
    the same ideal link model, in a formula (the registry's tests hold each formula
    to the simulator's time on small topologies)."""
    alg, group, big = formula
    num_groups = len(group_for(coll, topology, axes, options)[1])
    steps = steps_estimate(alg, group)
    lat = float(alg.closed_form(group, 0.0))
    bounds = lower_bounds(coll, topology, sizes, axes=axes, **_bound_options(coll, options))
    note = f"timed by its closed form: {big}"
    out = []
    for size, bound in zip(sizes, bounds):
        t = float(alg.closed_form(group, float(size)))
        out.append(Estimate(coll, topology, choice.algorithm, "ideal", int(size), dt, t,
                            min(lat, t), t - min(lat, t), group.n, num_groups, steps,
                            choice.reason, bound, note=note))
    return out


def _bound_options(coll: Collective, options: dict) -> dict:
    out = {}
    if coll in ("broadcast", "reduce", "gather") and "root" in options and not np.iterable(options["root"]):
        out["root"] = int(options["root"])
    if coll == "send":
        for key in ("src", "dst"):
            if key in options and not np.iterable(options[key]):
                out[key] = int(options[key])
    return out


def _nccl(coll, topology, nbytes, algorithm, axes, dt, esize, protocol, nvls, options):
    name = str(algorithm).strip().lower().replace("-", "_")
    to_registry = _nccl_names(coll)
    from_registry = {v: k for k, v in to_registry.items()}
    comm = nccl.comm_for(topology, axes, dtype=dt, nvls=nvls,
                         protocols=None if protocol is None else [protocol])
    table = reasons(coll, topology, axes, options)
    if name != "auto" and name not in from_registry:
        if name not in table:
            build_named(coll, topology, name, axes, options)     # raises: unknown algorithm
        if table[name] is not None:
            build_named(coll, topology, name, axes, options)     # raises: does not apply, and why
    preds = nccl.predictions(coll, nbytes, comm)
    if coll.value in nccl.tuner.FUNCTIONS:
        if name != "auto":
            if name not in from_registry:
                raise CollectivesError(
                    f"NCCL does not run {name} for {coll}; its algorithms here are "
                    f"{', '.join(sorted({to_registry.get(p.algorithm, p.algorithm.lower()) for p in preds}))} "
                    f"(or use model='ideal' to time {name} on the links)")
            preds = [p for p in preds if p.algorithm == from_registry[name]]
        if not preds:
            raise CollectivesError(
                f"NCCL has no {'protocol ' + protocol + ' for ' if protocol else ''}"
                f"{name if name != 'auto' else 'algorithm'} for {coll} on {topology!r}"
                + (" (NVLS is off)" if nvls is False else ""))
        best = min(preds, key=lambda p: p.time)          # ties: NCCL's loop order, which min keeps
        reg = to_registry.get(best.algorithm, best.algorithm.lower())
        why = ("NCCL's tuner picks it: the least predicted time over its algorithms and protocols"
               if name == "auto" else "as requested; NCCL's best protocol for it")
    else:
        want = "hierarchical" if name == "hierarchical" else "direct"
        if name not in ("auto", "direct", "hierarchical"):
            raise CollectivesError(f"NCCL runs {coll} as point-to-point sends (direct); "
                                   f"{name} is the ideal model's: use model='ideal'")
        if name == "auto":
            best = min(preds, key=lambda p: p.time)
        else:
            chosen = [p for p in preds if (p.algorithm == "HIERARCHICAL") == (want == "hierarchical")]
            if not chosen:
                raise CollectivesError(f"the hierarchical {coll} needs several nodes of several GPUs")
            best = chosen[0]
        reg = "hierarchical" if best.algorithm == "HIERARCHICAL" else "direct"
        why = ("the point-to-point model: a cost per peer, NVLink inside the node, one NIC per "
               "GPU across nodes" + ("; the least time of direct and hierarchical" if name == "auto" else ""))
    sched = None
    if reg in table and table[reg] is None and buildable(coll, topology, reg, axes, options):
        sched = build_named(coll, topology, reg, axes, options)
    group, num_groups = (sched.group_size, sched.num_groups) if sched is not None else (comm.nranks, 1)
    split = sched.split(nbytes, esize) if sched is not None else None
    bound = lower_bound(coll, topology, nbytes, axes=axes, **_bound_options(coll, options))
    time = nccl.measured_time(best, comm)
    lat = min(best.latency, time)
    alternatives = tuple(sorted(((f"{to_registry.get(p.algorithm, p.algorithm.lower())}/{p.protocol}",
                                  nccl.measured_time(p, comm)) for p in preds if p is not best),
                                key=lambda x: x[1]))
    return Estimate(coll, topology, reg, "nccl", int(nbytes), dt, time, lat, time - lat,
                    group, num_groups, sched.num_steps if sched is not None else 0, why, bound,
                    protocol=best.protocol if coll.value in nccl.tuner.FUNCTIONS else None,
                    nccl_algorithm=best.algorithm, nccl_time=best.time, note=split.note() if split is not None else "",
                    alternatives=alternatives, schedule=sched)


def sweep(collective, topology: Topology, sizes, algorithm: str = "auto", *, axes=None,
          model: str | None = None, protocol: str | None = None, dtype: str = "float32",
          nvls: bool | None = None, **options) -> list[Estimate]:
    """:func:`estimate` over many sizes, with the structure built once: every
    candidate schedule is routed once and timed at every size, the bound's cuts
    are found once, and ``auto`` may pick a different algorithm at each size (as
    NCCL's tuner does)."""
    coll = as_collective(collective)
    check_options(coll, options)
    if nvls is not None:
        checks.flag(nvls, "nvls (NVLink SHARP on or off; None: where the system has it)")
    which = _model(model, topology)
    dt = _dtype(dtype)
    esize = element_size(dt)
    sizes = [check_nbytes(s) for s in sizes]
    if not sizes:
        raise CollectivesError("a sweep needs at least one size")
    bounds = lower_bounds(coll, topology, sizes, axes=axes, **_bound_options(coll, options))
    if which == "nccl":
        out = []
        for size, bound in zip(sizes, bounds):
            e = _nccl(coll, topology, size, algorithm, axes, dt, esize, protocol, nvls, options)
            out.append(_with_bound(e, bound))
        return out
    if protocol is not None:
        raise CollectivesError("protocols (LL, LL128, Simple) belong to NCCL's model; "
                               "use model='nccl' or leave protocol out")
    name = str(algorithm).strip().lower().replace("-", "_")
    if name != "auto":
        names, why = [name], "as requested"
    else:
        names, why = _auto_candidates(coll, topology, axes, options, max(sizes))
    timed = {}
    formulas = {n: closed_form_instead(coll, topology, n, axes, options) for n in names}
    if len(names) == 1 and formulas[names[0]] is not None:
        return _closed_form_estimates(coll, topology, sizes, Choice(names[0], why),
                                      formulas[names[0]], axes, dt, options)
    if len(names) > 1:                         # drop what is too large to build, with no formula
        names = [n for n in names if formulas[n] is not None
                 or buildable(coll, topology, n, axes, options)] or names[:1]
    for n in names:
        if formulas[n] is not None:            # too large to build: its closed form
            alg, group, _ = formulas[n]
            times = np.array([float(alg.closed_form(group, float(s))) for s in sizes])
            timed[n] = (None, times, float(alg.closed_form(group, 0.0)))
            continue
        sched = build_named(coll, topology, n, axes, options)
        times = simulate_sizes(sched, topology, list(sizes) + [0], element_size=esize)  # routed once
        timed[n] = (sched, times[:-1], float(times[-1]))
    out = []
    for i, (size, bound) in enumerate(zip(sizes, bounds)):
        best = min(names, key=lambda n: timed[n][1][i])
        sched, times, lat = timed[best]
        t = float(times[i])
        alts = tuple(sorted(((n, float(timed[n][1][i])) for n in names if n != best), key=lambda x: x[1]))
        reason = why if len(names) == 1 else "the fastest in the ideal link model at this size"
        if sched is None:
            closed = _closed_form_estimates(coll, topology, [size], Choice(best, reason),
                                            formulas[best], axes, dt, options)[0]
            out.append(dataclasses.replace(closed, bound=bound, alternatives=alts))
            continue
        out.append(Estimate(coll, topology, best, "ideal", size, dt, t, min(lat, t), t - min(lat, t),
                            sched.group_size, sched.num_groups, sched.num_steps,
                            reason, bound, note=sched.split(size, esize).note(), alternatives=alts,
                            schedule=sched))
    return out


def _auto_candidates(coll, topology, axes, options, nbytes) -> tuple[list[str], str]:
    """The algorithms ``auto`` weighs in the ideal model; one when the choice does not
    depend on the size (a torus's rings, chains and multi-axis schedules)."""
    names = [k for k, why in reasons(coll, topology, axes, options).items() if why is None]
    if not isinstance(topology, Torus):
        names = [k for k in names if k in nccl_menu(coll)] or names
        if len(names) > 1:       # the sweep times each at every size; no need to choose first
            return names, "the fastest in the ideal link model at this size"
    choice = resolve(coll, topology, "auto", nbytes, axes, options)
    if isinstance(topology, Torus) and not choice.reason.endswith(")"):
        return [choice.algorithm], choice.reason
    return names, choice.reason


def _with_bound(e: Estimate, bound: Bound) -> Estimate:
    return dataclasses.replace(e, bound=bound)
