"""The ideal link model's one timing pipeline: candidates timed once, as data.

Every ideal-model answer (:func:`collectives_lib.estimate`, ``sweep``, what
``auto`` picks, :func:`collectives_lib.analysis.compare`) goes through here:

1. :func:`auto_rule` says which algorithms ``auto`` weighs and by what rule.
   On a TPU slice or pod the rule is what XLA runs (rings on axes with
   wraparound, chains without, every axis at once), stated; where XLA's
   choice is not fixed (broadcast, reduce, gather, send; all-to-all on an axis
   without wraparound), on the GPU presets (among the algorithms NCCL runs)
   and on every generic topology (among every algorithm that applies), it is
   the least time of the candidates at each size.
2. :func:`time_candidates` builds each candidate's schedule once, routes it
   once and times it at every size (:func:`~collectives_lib.simulate.simulate_sizes`),
   or, for a schedule too large to build, times the algorithm's closed form.
   Each is a :class:`Candidate`: the algorithm, its group, its schedule (or
   None), its time at every size, and how it was timed.
3. :func:`sweep` turns candidates into answers, size by size: the pick is the
   argmin of the candidates' times (or the rule's one algorithm), and the
   others are its alternatives, with the same times.

>>> import collectives_lib as cl
>>> rule = auto_rule("all_gather", cl.tpu_slice("v5e", "4x4"), axes="x")
>>> rule.names, rule.fixed
(('chain',), True)

Introduced in the chapter *A first look*; every answer comes from here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .bounds import checked_sizes, per_size, unit_bound
from .builders import (Group, applicable, build_group, closed_form_for, entries, group_for,
                       group_reasons, steps_estimate, too_large)
from .builders.rings import axis_kind
from .collective import Collective, collective as as_collective
from .errors import CollectivesError
from .estimates import Alternative, IdealEstimate
from .bulk import make
from .schedule import Schedule
from .simulate import simulate_sizes
from .topology import Topology, Torus, TpuSlice, TpuSystem


@dataclass(frozen=True)
class Rule:
    """How ``auto`` chooses: among ``names`` (one name: a stated rule, no timing needed),
    for the ``reason`` given."""

    names: tuple[str, ...]
    reason: str

    @property
    def fixed(self) -> bool:
        """One algorithm, whatever the size."""
        return len(self.names) == 1


@dataclass(frozen=True)
class Candidate:
    """One algorithm timed at every size of a request."""

    algorithm: str
    group: Group = field(repr=False)
    num_groups: int
    schedule: Schedule | None = field(repr=False)
    sizes: tuple[int, ...]
    times: np.ndarray = field(repr=False)
    latency: float                       # the time of an empty message
    how: str                             # "simulated" or "closed form"
    why_formula: str = ""                # for a closed form: why no schedule was built
    num_steps: int = 0
    in_network: bool = False             # the switches reduce: the in-network bound applies
    busiest: Sequence = ()               # for a closed form: its busiest link at each size, named

    def time(self, i: int) -> float:
        return float(self.times[i])


def nccl_menu(collective) -> list[str]:
    """The registry's algorithms for ``collective`` that NCCL runs (their ``nccl`` name is set):
    the ideal model's ``auto`` on GPU systems chooses among these, not the textbook extras
    such as recursive doubling or the binomial tree.

    >>> nccl_menu("all_reduce")
    ['ring', 'tree', 'nvls', 'nvls_tree', 'collnet_direct', 'collnet_chain']
    """
    return [name for name, entry in entries(as_collective(collective)).items() if entry.nccl]


# ---------------------------------------------------------------------------
# 1. the rule
# ---------------------------------------------------------------------------

_FASTEST = "the fastest in the ideal link model at this size"


def _torus_rule(coll: Collective, topo: Torus, group: Group, usable: list[str]) -> Rule:
    axes = list(group.axes)
    if coll.layout == "pairs":                       # all-to-all
        if len(axes) > 1:
            return Rule(("direct",), "every chip sends straight to every other; the ICI routes "
                                     "the messages dimension by dimension")
        kind = axis_kind(topo, axes[0])
        name = topo.axis_names[axes[0]]
        if kind == "chain" and "direct" in usable:
            return Rule(("chain", "direct"), f"axis {name} has no wraparound: sends by distance or "
                                             f"straight to each chip, whichever is faster")
        return Rule((kind,), f"{kind} on axis {name} "
                             f"({'wraparound' if topo.wraparound[axes[0]] else 'no wraparound'})")
    if coll.rooted:                                  # broadcast, reduce, gather, send
        return Rule(tuple(usable), _FASTEST)
    if len(axes) > 1:
        return Rule(("multi_axis",), f"over axes {', '.join(topo.axis_names[a] for a in axes)} at once, "
                                     f"keeping every ICI link busy")
    kind = axis_kind(topo, axes[0])
    size = topo.dims[axes[0]]
    if size == 1:
        why = "one rank on the axis: nothing moves"
    elif kind == "chain" and size == 2:
        why = "an axis of 2 ranks is a chain: a wraparound would join the same two ranks"
    elif kind == "chain":
        why = "the axis has no wraparound link, so it is a chain"
    else:
        why = "the axis has wraparound links, so it forms a ring"
    return Rule((kind,), f"{kind}: {why}")


def auto_rule(collective, topology: Topology, axes=None, options=None, *, group: Group | None = None) -> Rule:
    """What ``auto`` weighs in the ideal link model (see the module docstring)."""
    coll = as_collective(collective)
    if group is None:
        group, _ = group_for(coll, topology, axes, options)
    usable = [k for k, why in group_reasons(group).items() if why is None]
    if not usable:
        raise CollectivesError(f"no algorithm applies to {coll} on {topology!r}")
    if group.n == 1:
        where = "on the axis" if isinstance(topology, Torus) else "in the group"
        first = next((k for k in usable if entries(coll)[k].default), usable[0])
        return Rule((first,), f"one rank {where}: nothing moves")
    if isinstance(topology, TpuSlice):
        return _torus_rule(coll, topology, group, usable)
    if isinstance(topology, TpuSystem) and "hierarchical" in usable:
        return Rule(("hierarchical",), "what XLA runs across slices: the ICI axes inside every slice at once, "
                                       "and over DCN only what must cross it (each chip's shard)")
    gpus = topology.gpu_system if isinstance(topology, Topology) else None
    menu = [k for k in usable if k in nccl_menu(coll)] if gpus is not None else []
    if menu:
        return Rule(tuple(menu), f"{_FASTEST}, among the algorithms NCCL runs ({', '.join(menu)})")
    return Rule(tuple(usable), f"{_FASTEST}, among every algorithm that applies")


def timeable_rule(rule: Rule, group: Group, num_groups: int) -> Rule:
    """``rule``, or where none of its algorithms can be timed on ``group`` (each too large
    to build, with no closed form here), the other algorithms that apply and have a
    closed form here, so that ``auto`` answers instead of refusing; the reason says so."""
    table = entries(group.collective)

    def timeable(name: str) -> bool:
        alg = table[name]
        return too_large(alg, group, num_groups) is None or closed_form_for(alg, group, num_groups) is not None

    if any(timeable(k) for k in rule.names):
        return rule
    usable = [k for k, why in group_reasons(group).items() if why is None and k not in rule.names]
    formula = [k for k in usable if group.topology is not None and table[k].closed_form(group, 1.0) is not None
               and timeable(k)]
    if not formula:
        return rule
    return Rule(tuple(formula), f"{rule.reason}; {', '.join(rule.names)}: too large to build here and no closed "
                                f"form, so among the algorithms with a closed form here ({', '.join(formula)})")


# ---------------------------------------------------------------------------
# 2. the candidates
# ---------------------------------------------------------------------------

def time_candidates(collective, topology: Topology, names, sizes, *, axes=None, options=None,
                    element_size: int = 4, overhead: float = 0.0, placement=None,
                    group: tuple | None = None, required: bool = False) -> list[Candidate]:
    """Each of ``names`` timed at every size in ``sizes`` (nccl-tests' sizes).

    A schedule too large to build is timed by its closed form where it has one
    (not with ``overhead`` or ``placement``, which need a schedule), and left
    out otherwise, unless it is the only one (or ``required``): then the
    reason it cannot be built is raised.
    """
    coll = as_collective(collective)
    grp, groups = group if group is not None else group_for(coll, topology, axes, options)
    sizes = tuple(int(s) for s in sizes)
    probe = np.asarray(list(sizes) + [0], dtype=float)
    out: list[Candidate] = []
    skipped: list[str] = []
    for name in names:
        alg = applicable(grp, name)
        formula = closed_form_for(alg, grp, len(groups))
        if formula is not None and not overhead and placement is None:
            times = _closed_times(alg, grp, sizes)
            lat = float(alg.closed_form(grp, 0.0))
            busiest = _Busiest(alg, grp, sizes)
            out.append(Candidate(alg.name, grp, len(groups), None, sizes, times, lat, "closed form",
                                 formula, steps_estimate(alg, grp), alg.in_network, busiest))
            continue
        if too_large(alg, grp, len(groups)) is not None and (len(names) > 1 and not required):
            skipped.append(alg.name)
            continue
        sched = build_group(alg, grp, groups)          # raises, saying why, when too large
        both = simulate_sizes(sched, topology, probe, element_size=element_size, overhead=overhead,
                              placement=placement)
        out.append(Candidate(alg.name, grp, len(groups), sched, sizes, both[:-1], float(both[-1]),
                             "simulated", "", sched.num_steps, alg.in_network))
    if not out:
        build_group(applicable(grp, skipped[0]), grp, groups)     # raises: too large, and why
    return out


def _closed_times(alg, grp: Group, sizes: tuple[int, ...]) -> np.ndarray:
    """The closed form at every size: at once where it takes an array of sizes (and
    agrees with itself size by size at the first, middle and last), else one by one."""
    if len(sizes) > 8:
        V = np.asarray(sizes, dtype=float)
        try:
            with np.errstate(all="ignore"):
                at_once = np.asarray(alg.closed_form(grp, V), dtype=float)
        except (TypeError, ValueError, CollectivesError):
            at_once = None
        if at_once is not None and at_once.shape == V.shape:
            probe = sorted({0, len(sizes) // 2, len(sizes) - 1})
            if all(np.isclose(float(alg.closed_form(grp, float(sizes[i]))), at_once[i],
                              rtol=1e-12, atol=0.0) for i in probe):
                return at_once
    return np.array([float(alg.closed_form(grp, float(s))) for s in sizes])


class _Busiest:
    """A closed form's busiest link at each size, named when an answer asks for it
    (a sweep asks only for the algorithm it picks)."""

    def __init__(self, alg, grp: Group, sizes: tuple[int, ...]):
        self._alg, self._grp, self._sizes, self._named = alg, grp, sizes, {}

    def __len__(self) -> int:
        return len(self._sizes)

    def __getitem__(self, i: int) -> str | None:
        if i not in self._named:
            self._named[i] = self._alg.busiest_link(self._grp, float(self._sizes[i]))
        return self._named[i]


# ---------------------------------------------------------------------------
# 3. the answers
# ---------------------------------------------------------------------------

def _bound_sizes(sizes, element_size: int) -> list[int]:
    """The bytes that move: whole elements only (a 7-byte send of float32 moves 4)."""
    return [int(s) // element_size * element_size for s in sizes]


def bound_kinds(coll: Collective, topology: Topology, sizes, *, axes, options, element_size: int) -> dict:
    """The lower bounds at every size for the kinds of algorithm: ``{False: (plain,
    apart), True: (network, nones)}``. An algorithm whose switches only forward is held
    to ``plain`` (no in-network reduction counted) and shown the in-network bound
    ``apart`` where that is lower; one that reduces in the switches is held to it. A
    send adds ``"multipath"``: one split over routes through other ranks is held to the
    cut between its two ranks, one on the network's route to that route (:func:`bound_key`)."""
    ranks = {k: options[k] for k in coll.endpoint_options if options.get(k) is not None
             and not np.iterable(options[k])}
    moved = checked_sizes(_bound_sizes(sizes, element_size))
    one_plain = unit_bound(coll, topology, axes=axes, network=False, **ranks)
    plain = per_size(one_plain, moved, topology)
    one_network = unit_bound(coll, topology, axes=axes, network=True, **ranks)
    kinds = _Kinds(one_network, moved, topology)
    if one_network.bandwidth_time >= one_plain.bandwidth_time:
        # then at no size is the network's bound the lower: none is shown apart
        kinds[False] = (plain, [None] * len(plain))
    else:
        network = kinds[True][0]
        kinds[False] = (plain, [n if n.bandwidth_time < p.bandwidth_time * (1 - 1e-12) else None
                                for p, n in zip(plain, network)])
    if coll is Collective.SEND:
        split = per_size(unit_bound(coll, topology, axes=axes, multipath=True, **ranks), moved, topology)
        kinds["multipath"] = (split, [None] * len(split))
    return kinds


def bound_key(coll: Collective, algorithm: str, in_network: bool, options) -> bool | str:
    """Which of :func:`bound_kinds` holds an algorithm: a send split over several routes
    (``multipath``, or any send given ``paths``) is ``"multipath"``, else ``in_network``."""
    if coll is Collective.SEND and (algorithm == "multipath"
                                    or options.get("paths", "shortest") not in ("shortest", 1)):
        return "multipath"
    return in_network


class _Kinds(dict):
    """:func:`bound_kinds`' answer: the in-network bounds (``True``) made when first asked."""

    def __init__(self, one, sizes, topology):
        super().__init__()
        self._args = (one, sizes, topology)
        per_size(one, [max(sizes, default=0.0)], topology)    # refuses an overflow now

    def __missing__(self, key):
        if key is not True and key != 1:
            raise KeyError(key)
        network = per_size(*self._args)
        self[True] = (network, [None] * len(network))
        return self[True]


def sweep(collective, topology: Topology, sizes, algorithm: str = "auto", *, axes=None, options=None,
          dtype: str = "float32", element_size: int = 4, overhead: float = 0.0,
          placement=None) -> list[IdealEstimate]:
    """The ideal link model's answers at every size (checked arguments: see
    :func:`collectives_lib.models.sweep`, the public entry)."""
    coll = as_collective(collective)
    options = dict(options or {})
    grp, groups = group_for(coll, topology, axes, options)
    if algorithm == "auto":
        rule = auto_rule(coll, topology, group=grp)
        if not overhead and placement is None:
            rule = timeable_rule(rule, grp, len(groups))
    else:
        rule = Rule((applicable(grp, algorithm).name,), "as requested")
    cands = time_candidates(coll, topology, rule.names, sizes, element_size=element_size,
                            overhead=overhead, placement=placement, group=(grp, groups),
                            required=rule.fixed)
    reason = rule.reason
    if len(cands) < len(rule.names):
        missing = sorted(set(rule.names) - {c.algorithm for c in cands})
        reason += f"; not timed, too large to build here: {', '.join(missing)}"
    bounds = bound_kinds(coll, topology, sizes, axes=axes, options=options, element_size=element_size)
    times = [c.times.tolist() for c in cands]        # (what Candidate.time(i) reads, as floats)
    which = range(len(cands))
    out = []
    for i, size in enumerate(sizes):
        # ties: the rule's order, which min keeps
        k = min(which, key=lambda j: times[j][i]) if len(cands) > 1 else 0
        kind = bound_key(coll, cands[k].algorithm, cands[k].in_network, options)
        out.append(_answer(coll, topology, cands[k], cands, times, k, i, int(size), reason,
                           bounds[kind], dtype, element_size, overhead, placement))
    return out


def _answer(coll, topology, best: Candidate, cands, times, k: int, i: int, size: int, reason: str, bounds,
            dtype: str, element_size: int, overhead: float, placement) -> IdealEstimate:
    # (made by :func:`~collectives_lib.bulk.make`: a sweep makes one per size)
    t = times[k][i]
    lat = min(best.latency, t)
    if best.schedule is not None:
        note = best.schedule.split_note(size, element_size)
    else:
        note = f"timed by its closed form: {best.why_formula}"
    alternatives = tuple(sorted((make(Alternative, {"algorithm": c.algorithm, "time": times[j][i],
                                                    "protocol": None, "tuner_time": None, "how": c.how})
                                 for j, c in enumerate(cands) if c is not best), key=lambda a: a.time))
    plain, apart = bounds
    return make(IdealEstimate, {
        "collective": coll, "topology": topology, "algorithm": best.algorithm, "model": "ideal",
        "nbytes": size, "dtype": dtype, "time": t, "latency_time": lat, "bandwidth_time": t - lat,
        "group_size": best.group.n, "num_groups": best.num_groups, "reason": reason,
        "bound": plain[i], "network_bound": apart[i], "note": note, "alternatives": alternatives,
        "num_steps": best.num_steps, "how": best.how, "schedule": best.schedule,
        "overhead": overhead, "placement": placement, "element_size": element_size,
        "formula_bottleneck": (best.busiest[i] or "") if best.busiest else ""})


def choose(collective, topology: Topology, nbytes: int, *, axes=None, options=None) -> tuple[str, str]:
    """``(algorithm, reason)``: what ``auto`` picks for ``nbytes`` in the ideal link model.
    A stated rule needs no timing; otherwise the candidates are timed at that size."""
    coll = as_collective(collective)
    grp, groups = group_for(coll, topology, axes, options)
    rule = timeable_rule(auto_rule(coll, topology, group=grp), grp, len(groups))
    if rule.fixed:
        return rule.names[0], rule.reason
    best = sweep(coll, topology, [nbytes], "auto", axes=axes, options=options)[0]
    return best.algorithm, best.reason
