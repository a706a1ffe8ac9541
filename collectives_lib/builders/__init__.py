"""Schedule builders, by family, and the registry that lists them.

Each family module registers its algorithms (see :mod:`.registry`):

==================  ==========================================================
``rings``           ring, bidirectional ring and chain all-gather, reduce-scatter
                    and all-reduce; NCCL's multi-channel rings over a cluster
``torus``           multi_axis and sequential_axes over several torus axes
``doubling``        recursive doubling and halving, Rabenseifner
``trees``           binomial trees, NCCL's pipelined double binary tree, pipelined chains
``alltoall``        ring, bidirectional ring, chain and direct all-to-all
``innetwork``       direct sends through a switch, multicast and SHARP
``hierarchical``    InfiniBand rails between nodes + NVLink inside nodes
``p2p``             send and gather over one route or several disjoint ones
==================  ==========================================================

:func:`build_named` turns (collective, topology, algorithm name) into the
schedule that runs the one-group builder in every group the topology's axes
define (:func:`collectives_lib.schedule.embed`); :func:`reasons` says which
algorithms apply and why the others do not.

Introduced across the chapters on all-gather, reduce-scatter, all-to-all and
GPU collectives.
"""

from __future__ import annotations

import dataclasses
import numbers

from typing import Any, Callable, Mapping

import numpy as np

from ..collective import collective as as_collective
from .. import checks
from ..errors import CollectivesError
from ..schedule import Schedule, embed
from ..topology import GpuCluster, Switch, Topology
from . import alltoall, doubling, hierarchical, innetwork, p2p, rings, torus, trees  # noqa: F401  (importing registers)
from . import footprints
from .registry import (Algorithm, Group, algorithm_name, all_entries, default_algorithm, entries, entry,
                       known_names, nccl_names, size_estimate, steps_estimate, too_large)

footprints.install()      # every builder under one size cap

__all__ = ["Algorithm", "Group", "algorithm_name", "applicable", "build_group", "build_named", "buildable",
           "closed_form_for", "closed_form_instead", "default_algorithm", "group_for", "group_reasons",
           "nccl_names", "reasons", "entries", "entry", "size_estimate", "steps_estimate", "too_large",
           "all_entries", "OPTIONS"]

#: Options a builder may read, and what each means.
OPTIONS = {
    "root": "broadcast, reduce, gather: the root rank",
    "chunks": "pipelined chain broadcast and reduce, NCCL's tree: pieces the array (per tree) "
              "streams in",
    "matrix": "all-to-all: traffic matrix, bytes from origin to destination",
    "intra": "hierarchical: 'ring' or 'direct' inside each node",
    "src": "send: the sending rank",
    "dst": "send: the receiving rank",
    "paths": "send: 'disjoint', 'shortest' or a number of disjoint routes",
}


def _groups(topology: Topology | None, n: int | None, axes) -> tuple[np.ndarray, tuple[int, ...], tuple[int, ...]]:
    if topology is None:
        if axes is not None:
            raise CollectivesError("a schedule over a number of ranks has no named axes; leave axes out")
        return np.arange(n)[None, :], (n,), ()
    if hasattr(topology, "axis_groups"):
        axes_i = tuple(topology.resolve_axes(axes))
        groups = topology.axis_groups(axes)
        shape = tuple(topology.mesh_shape[a] for a in axes_i)
        return groups, shape, axes_i
    if axes is not None:
        raise CollectivesError(f"{topology!r} has no named axes; leave axes out")
    return np.arange(topology.num_ranks)[None, :], (topology.num_ranks,), ()


def _agent_namer(topology: Topology | None, groups: np.ndarray) -> Callable[[int, str], str]:
    """Global names of a one-group schedule's agents. On a GPU cluster a group's
    ``"switch"`` is its node's NVSwitch (``nvswitch<m>``) and ``"multicast"`` that
    switch's NVLS multicast group (``multicast<m>``); names a whole-cluster builder
    gives (``nvswitch3``, ``leaf0.2``, ``spine``) are the cluster's own."""
    base = getattr(topology, "base", topology)         # a mesh laid on a cluster names its agents
    if isinstance(base, GpuCluster):
        def name(g: int, local: str) -> str:
            node = int(groups[g, 0]) // base.gpus_per_node
            if local in ("switch", "nvswitch"):
                return f"nvswitch{node}"
            if local == "multicast":
                return f"multicast{node}"
            return local
        return name
    if isinstance(base, Switch):      # one switch holds every group's (a mesh laid on one node)
        return lambda g, local: local if local in ("switch", "nvswitch", "multicast") or \
            groups.shape[0] == 1 else f"{local}{g}"
    return lambda g, local: local if groups.shape[0] == 1 else f"{local}{g}"


def _target(topology) -> tuple[Topology | None, int | None]:
    """A topology, or a number of abstract ranks."""
    if isinstance(topology, Topology):
        return topology, None
    if isinstance(topology, (int, np.integer)) and not isinstance(topology, bool):
        if topology < 1:
            raise CollectivesError(f"a schedule needs at least one rank, got {int(topology)}")
        return None, checks.topology_ranks(topology, "a schedule over abstract ranks")
    hint = (f"; parse a spec such as {topology!r} with cl.parse_topology({topology!r}, bandwidth=...)"
            if isinstance(topology, str) else "")
    raise CollectivesError(
        f"topology must be a Topology (such as cl.Ring(8, bandwidth=45e9)) or a number of ranks, "
        f"got {topology!r}{hint}")


def group_for(collective, topology, axes=None, options: Mapping[str, Any] | None = None
              ) -> tuple[Group, np.ndarray]:
    """The :class:`Group` a builder sees, and the global ranks of every group."""
    coll = as_collective(collective)
    topo, n = _target(topology)
    groups, shape, axes_i = _groups(topo, n, axes)
    options = checks.endpoints(coll, dict(options or {}), groups.shape[1], groups.shape[0])
    return Group(coll, topo, axes_i, shape, options), groups


def reasons(collective, topology, axes=None, options: Mapping[str, Any] | None = None
            ) -> dict[str, str | None]:
    """Every registered algorithm for ``collective``: None where it applies to
    ``topology`` (over ``axes``), else the reason it does not."""
    group, _ = group_for(collective, topology, axes, options)
    return group_reasons(group)


def group_reasons(group: Group) -> dict[str, str | None]:
    """:func:`reasons` for a group already made by :func:`group_for`."""
    return {name: alg.reason(group) for name, alg in entries(group.collective).items()}


def applicable(group: Group, algorithm: str) -> Algorithm:
    """The registry's entry for ``algorithm`` on ``group``; raises, naming what applies,
    when it is unknown or does not apply."""
    coll = group.collective
    name = algorithm_name(algorithm)
    table = entries(coll)
    why = table[name].reason(group) if name in table else None
    if name in table and why is None:
        return table[name]
    applicable_here = ", ".join(k for k, a in table.items() if a.reason(group) is None) or "none"
    if name not in known_names():
        raise CollectivesError(f"unknown algorithm {algorithm!r} for {coll}; known: {', '.join(table)}")
    if why is None:
        raise CollectivesError(f"algorithm {name!r} does not apply to {coll} on "
                               f"{_where(group)}; applicable: {applicable_here}")
    raise CollectivesError(f"{why} (applicable here: {applicable_here})")


def closed_form_for(alg: Algorithm, group: Group, num_groups: int) -> str | None:
    """Why the schedule of ``alg`` is too large to build on ``group`` (or is timed by its
    formula there, :meth:`Algorithm.formula_reason`) when the algorithm has a closed form
    to time it by instead; None when it can be built, or has no formula."""
    why = too_large(alg, group, num_groups) or alg.formula_reason(group)
    if why is None or group.topology is None or alg.closed_form(group, 1.0) is None:
        return None
    return why


def _fitting(group: Group, num_groups: int) -> list[str]:
    """The algorithms that apply to ``group`` and whose schedules fit under the caps."""
    return [name for name, e in entries(group.collective).items()
            if e.reason(group) is None and too_large(e, group, num_groups) is None]


def build_group(alg: Algorithm, group: Group, groups: np.ndarray) -> Schedule:
    """The schedule of ``alg`` run in every group at once (``groups`` from :func:`group_for`)."""
    big = too_large(alg, group, len(groups))
    if big is not None:
        closed = group.topology is not None and alg.closed_form(group, 1.0) is not None
        if closed:
            hint = "; estimate answers with its closed form instead"
        elif getattr(group.topology, "gpu_system", None) is not None:
            hint = "; NCCL's model (model='nccl', --model nccl) times it at any size, or use fewer ranks"
        else:
            fit = _fitting(group, len(groups))
            hint = f"; use {' or '.join(fit[:3])}, which fit, or fewer ranks" if fit else "; use fewer ranks"
        raise CollectivesError(big + hint)
    local = alg.build(group)
    if group.n == 1 and local.steps:
        # one rank already holds its answer: nothing moves, whatever the algorithm (an
        # in-network one would otherwise send the array through the switch and back)
        local = dataclasses.replace(local, steps=(), agents=(), pipelined=False)
    if group.topology is None:
        return local
    return embed(local, groups, group.topology.num_ranks, agent_name=_agent_namer(group.topology, groups))


def buildable(collective, topology, algorithm: str, axes=None,
              options: Mapping[str, Any] | None = None) -> bool:
    """False when the schedule of ``algorithm`` would be too large to build."""
    group, groups = group_for(collective, topology, axes, options)
    table = entries(group.collective)
    name = algorithm_name(algorithm)
    return name not in table or too_large(table[name], group, len(groups)) is None


def closed_form_instead(collective, topology, algorithm: str, axes=None,
                        options: Mapping[str, Any] | None = None):
    """``(algorithm entry, group, why)`` when the schedule of ``algorithm`` would be too
    large to build (:func:`~collectives_lib.builders.registry.too_large`) and the entry
    has a closed form for the group, so that timing can use the formula; else None."""
    group, groups = group_for(collective, topology, axes, options)
    table = entries(group.collective)
    name = algorithm_name(algorithm)
    if name not in table or table[name].reason(group) is not None:
        return None
    why = closed_form_for(table[name], group, len(groups))
    return None if why is None else (table[name], group, why)


def build_named(collective, topology, algorithm: str, axes=None,
                options: Mapping[str, Any] | None = None) -> Schedule:
    """The schedule of ``algorithm`` (a registered name, not ``auto``) on ``topology``."""
    group, groups = group_for(collective, topology, axes, options)
    return build_group(applicable(group, algorithm), group, groups)


def _where(group: Group) -> str:
    if group.topology is None:
        return f"{group.n} ranks"
    axes = group.axes
    names = getattr(group.topology, "axis_names", ())
    over = (f" over axes {','.join(names[a] for a in axes)}"
            if axes and names and len(axes) < len(names) else "")
    return f"{group.topology!r}{over}"


def check_options(collective, options: dict) -> dict:
    """Raise for an option no builder reads (naming the ones there are); check the roots' types."""
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise CollectivesError(
            f"unknown option{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} for "
            f"{collective}; the options are: " + "; ".join(f"{k} ({v})" for k, v in OPTIONS.items()))
    for key in ("root", "src", "dst"):
        value = options.get(key)
        if value is None or checks.iterable(value):
            continue
        if checks.is_bool(value) or not isinstance(value, numbers.Integral):
            raise CollectivesError(f"{key} must be a whole-number rank, got {value!r}")
    return options
