"""The algorithm registry: every algorithm is one entry.

An entry names an algorithm for one collective and holds four things: its
builder (a function of a :class:`Group` that returns a one-group schedule over
local ranks ``0 .. n-1``), its applicability test (a function of the group
that returns ``None`` when the algorithm applies and otherwise the reason, in
the words an error message would use), a one-line description, and its closed
form in the ideal link model (a function of the group and the size, or None
where the topology has no closed form). The front door
(:func:`collectives_lib.build`, :func:`collectives_lib.algorithms`), ``auto``
and the command line all read this table; adding an algorithm is one
registered function and its closed form::

    @register("ring", "all_gather", applies=ring_on_axis,
              cost=lambda g, nbytes: costs.ring_all_gather(g.n, nbytes, *g.link()))
    def ring_all_gather(g):
        return ring_all_gather_local(g.n)

Introduced in the chapter *A first look*; the CLI verb ``algorithms`` prints it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np

from ..collective import Collective, collective as as_collective
from ..errors import CollectivesError
from ..schedule import Schedule
from ..topology import GpuCluster, MeshView, Switch, Topology, Torus, TpuSystem
from ..units import format_rate


@dataclass(frozen=True)
class Group:
    """What a builder sees: one group of ranks of a topology, and the options.

    ``axes`` are the topology's mesh axes the group spans (resolved to
    indices), ``shape`` the group's mesh shape and ``n`` its number of ranks.
    ``topology`` is None for a schedule over ``n`` abstract ranks.
    """

    collective: Collective
    topology: Topology | None
    axes: tuple[int, ...]
    shape: tuple[int, ...]
    options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return int(math.prod(self.shape))

    @property
    def root(self) -> int:
        return int(self.options.get("root", 0))

    @property
    def chunks(self) -> int:
        """The ``chunks`` option of pipelined algorithms (default 8), checked."""
        chunks = self.options.get("chunks", 8)
        if isinstance(chunks, bool) or not isinstance(chunks, (int, np.integer)) or chunks < 1:
            raise CollectivesError(f"chunks must be a whole number >= 1, got {chunks!r}")
        return int(chunks)

    # -- what the group sits on -------------------------------------------------
    @property
    def torus_axis(self) -> int | None:
        """The torus axis of a one-axis group on a torus, else None."""
        if isinstance(self.topology, Torus) and len(self.axes) == 1:
            return self.axes[0]
        return None

    @property
    def ici(self) -> tuple[Torus, tuple[int, ...]] | None:
        """The torus the group runs on and its axes there: a torus's own, or the
        slice of a :class:`TpuSystem` when the group stays inside one slice
        (its ICI axes, not ``slice``); None elsewhere."""
        topo = self.topology
        if isinstance(topo, Torus):
            return topo, self.axes
        if isinstance(topo, TpuSystem) and self.axes and 0 not in self.axes:
            return topo.slice, tuple(a - 1 for a in self.axes)
        return None

    @property
    def on_torus_axes(self) -> bool:
        """A group over two or more axes of a torus (or of a TPU system's slices)."""
        return self.ici is not None and len(self.axes) > 1

    @property
    def whole_cluster(self) -> bool:
        """A group over every GPU of a GPU cluster (both its node and gpu axes)."""
        return isinstance(self.topology, GpuCluster) and self.axes == (0, 1)

    @property
    def switch_like(self) -> bool:
        """One switch joins the group: a :class:`Switch`, or the GPUs of one node (a GPU
        cluster's gpu axis, or mesh axes whose every group lies inside one node); and,
        for a schedule over abstract ranks, any algorithm through a switch applies."""
        return self.topology is None or self.node_switch is not None

    @property
    def node_switch(self) -> Topology | None:
        """The preset whose one switch joins every group (the :class:`Switch`, or the GPU
        cluster whose nodes each hold a group), else None."""
        topo = self.topology
        if isinstance(topo, Switch):
            return topo
        if isinstance(topo, GpuCluster):
            return topo if self.axes == (1,) else None
        if isinstance(topo, MeshView) and isinstance(topo.base, Switch):
            return topo.base
        if isinstance(topo, MeshView) and isinstance(topo.base, GpuCluster):
            groups = topo.axis_groups([topo.axis_names[a] for a in self.axes])
            nodes = groups // topo.base.gpus_per_node
            return topo.base if bool((nodes == nodes[:, :1]).all()) else None
        return None

    @property
    def in_network(self) -> bool:
        """The switch joining the group can reduce and multicast (NVLS, SHARP)."""
        if self.topology is None:
            return True
        switch = self.node_switch
        if isinstance(switch, Switch):
            return switch.in_network
        if isinstance(switch, GpuCluster):
            return switch.system.nvls
        return False

    @property
    def logical(self) -> bool:
        """The network routes any rank to any other (not a torus, not a whole cluster)."""
        return not isinstance(self.topology, Torus) and not self.whole_cluster

    @property
    def power_of_two(self) -> bool:
        return self.n >= 1 and self.n & (self.n - 1) == 0

    def link(self) -> tuple[float, float]:
        """``(W, alpha)`` of the ideal link model for one step between two ranks of
        the group: a torus link, or the up-link and down-link of a switch."""
        topo = self.topology
        if self.ici is not None:
            return self.ici[0].bandwidth, self.ici[0].latency
        if isinstance(topo, Switch):
            return topo.bandwidth, 2 * topo.latency
        raise CollectivesError(f"no single link model for {topo!r}")


@dataclass(frozen=True)
class Algorithm:
    """One algorithm for one collective (see the module docstring)."""

    name: str
    collective: Collective
    build: Callable[[Group], Schedule]
    applies: Callable[[Group], str | None]
    description: str
    cost: Callable[[Group, float], float | None] | None = None
    family: str = ""
    nccl: str | None = None      # NCCL's name for the algorithm (RING, TREE, NVLS, ...), if NCCL runs it
    size: Callable[[Group], tuple[int, int] | None] | None = None   # (distinct transfers, steps), before building
    default: bool = False        # what runs when no algorithm is named and nothing chooses (``collectives run``)
    in_network: bool = False     # the switches reduce (NVLS, SHARP, CollNet): held to the in-network bound
    by_formula: Callable[[Group], str | None] | None = None   # why its closed form times it here, if it does
    busiest: Callable[[Group, float], str | None] | None = None   # its closed form's busiest link, named

    def busiest_link(self, group: Group, nbytes: float) -> str | None:
        """The busiest link of the closed form's timing of ``nbytes`` on ``group``, named as
        the simulator names its bottleneck where the closed form knows it, else the links
        it is written over where they are all alike (a switch's, a ring's, a torus's)."""
        named = None if self.busiest is None else self.busiest(group, nbytes)
        return named if named is not None else _alike_links(group)

    def formula_reason(self, group: Group) -> str | None:
        """Why ``group`` is timed by the closed form even where the schedule can be built
        (the schedule's slots are finer than the elements it would carry), else None."""
        return None if self.by_formula is None else self.by_formula(group)

    def reason(self, group: Group) -> str | None:
        """None when the algorithm applies to ``group``, else why not."""
        return self.applies(group)

    def closed_form(self, group: Group, nbytes: float) -> float | None:
        """The ideal link model's time for ``nbytes``, or None where there is no closed form."""
        return None if self.cost is None else self.cost(group, nbytes)

    def footprint(self, group: Group) -> tuple[int, int] | None:
        """``(distinct transfers, steps)`` the schedule on ``group`` would hold, where the
        algorithm knows it before building (None: not known)."""
        return None if self.size is None else self.size(group)


def _alike_links(group: Group) -> str | None:
    """What a closed form on one kind of link is written over: on a switch every rank's
    links to and from it, on a ring every link, on a chain or a torus without wraparound
    the middle links (they carry the most); None where the links differ."""
    topo = group.topology
    if isinstance(topo, Switch):
        where = "every rank's links to and from the switch, alike"
    elif group.ici is not None and not isinstance(topo, TpuSystem):
        torus, axes = group.ici
        lines = [torus.dims[a] > 2 and not torus.wraparound[a] for a in axes]
        names = ", ".join(torus.axis_names[a] for a in axes)
        kind = (("chain's links" if any(lines) else "ring's links") if len(torus.dims) == 1
                else f"{'mesh' if any(lines) else 'torus'}'s links along "
                     f"{'axes' if len(axes) > 1 else 'axis'} {names}")
        where = (f"the {kind}, the middle ones most (no wraparound)" if any(lines)
                 else f"the {kind}, alike")
    else:
        return None
    try:
        W, _ = group.link()
    except CollectivesError:
        return None
    return f"closed form, not simulated: {where} ({format_rate(W)} each)"


_REGISTRY: dict[Collective, dict[str, Algorithm]] = {c: {} for c in Collective}

#: The order listings follow: family by family, in registration order within one.
FAMILIES = ("rings", "torus", "doubling", "trees", "alltoall", "innetwork", "hierarchical", "p2p")


def always(group: Group) -> None:
    return None


def algorithm_name(name) -> str:
    """An algorithm's name as the registry spells it (``"Ring"``, ``" bidirectional-ring"``
    -> ``"ring"``, ``"bidirectional_ring"``); ``"auto"`` stays ``"auto"``.

    >>> algorithm_name("NVLS-Tree")
    'nvls_tree'
    """
    if not isinstance(name, str):
        raise CollectivesError(f"algorithm must be a name such as 'ring', or 'auto', got {name!r}")
    key = name.strip().lower().replace("-", "_").replace(" ", "_")
    if not key:
        raise CollectivesError("algorithm needs a name, such as 'ring', or 'auto'")
    return key


def register(name: str, collective, *, applies: Callable[[Group], str | None] = always,
             description: str, cost: Callable[[Group, float], float | None] | None = None,
             family: str = "", nccl: str | None = None,
             size: Callable[[Group], tuple[int, int] | None] | None = None, default: bool = False,
             in_network: bool = False, by_formula: Callable[[Group], str | None] | None = None,
             busiest: Callable[[Group, float], str | None] | None = None):
    """Decorator: register ``builder(group) -> Schedule`` as ``name`` for ``collective``.

    ``nccl`` is NCCL's name for the algorithm where NCCL runs it; ``size`` says how
    many distinct transfers and steps a group's schedule holds, before building it;
    ``default`` marks the one algorithm that runs when none is named and nothing
    chooses (the MPI runner); ``in_network`` an algorithm whose switches reduce;
    ``by_formula(group)`` says why the closed form times it on ``group`` (else None);
    ``busiest(group, nbytes)`` names the closed form's busiest link."""
    coll = as_collective(collective)

    def decorate(builder: Callable[[Group], Schedule]) -> Callable[[Group], Schedule]:
        if name in _REGISTRY[coll]:
            raise CollectivesError(f"algorithm {name!r} for {coll} is registered twice")
        fam = family or builder.__module__.rsplit(".", 1)[-1]
        if fam not in FAMILIES:
            raise CollectivesError(f"unknown family {fam!r}; add it to FAMILIES")
        table = _REGISTRY[coll]
        if default and any(a.default for a in table.values()):
            raise CollectivesError(f"{coll} has two default algorithms")
        table[name] = Algorithm(name, coll, builder, applies, description, cost, fam, nccl, size, default,
                                in_network, by_formula, busiest)
        order = sorted(table.values(), key=lambda a: FAMILIES.index(a.family))   # stable
        _REGISTRY[coll] = {a.name: a for a in order}
        return builder
    return decorate


def entries(collective) -> dict[str, Algorithm]:
    """Every registered algorithm for ``collective``, in registration order."""
    return dict(_REGISTRY[Collective(collective)])


def entry(collective, name: str) -> Algorithm:
    """The entry for ``name``; raises naming the known algorithms."""
    coll = as_collective(collective)
    table = _REGISTRY[coll]
    if name not in table:
        raise CollectivesError(
            f"unknown algorithm {name!r} for {coll}; known: {', '.join(table) or 'none'}")
    return table[name]


def default_algorithm(collective) -> str:
    """The algorithm that runs for ``collective`` when none is named and nothing chooses."""
    coll = as_collective(collective)
    for a in _REGISTRY[coll].values():
        if a.default:
            return a.name
    raise CollectivesError(f"{coll} has no default algorithm")   # pragma: no cover  (a test holds every one)


def nccl_names(collective) -> dict[str, str]:
    """NCCL's name -> the registry's, for the algorithms NCCL runs for ``collective``.

    >>> nccl_names("all_reduce")["NVLS_TREE"]
    'nvls_tree'
    """
    return {a.nccl: a.name for a in _REGISTRY[as_collective(collective)].values() if a.nccl}


def all_entries() -> list[Algorithm]:
    return [a for table in _REGISTRY.values() for a in table.values()]


def known_names() -> set[str]:
    return {a.name for a in all_entries()}


def power_of_two(label: str) -> Callable[[Group], str | None]:
    """Applicability test: ``label`` needs a power-of-two group."""
    def test(group: Group) -> str | None:
        if group.power_of_two:
            return None
        return f"{label} needs a power-of-two number of ranks, got N = {group.n}"
    return test


# ---------------------------------------------------------------------------
# How big a schedule would be, before building it
# ---------------------------------------------------------------------------

#: The most transfers a schedule may hold in its distinct steps (about 40 bytes
#: each, and the simulator routes each once); beyond it ``build`` refuses and
#: ``estimate`` answers with the algorithm's closed form where it has one.
MAX_TRANSFERS = 4_000_000

#: The most ranks a schedule may span (each step's traffic lists every rank).
MAX_RANKS = 1 << 18

#: The most (transfer, link) pairs a schedule's routes may hold: the simulator routes
#: every distinct transfer once, about 16 bytes per link it crosses.
MAX_ROUTED = 50_000_000


def every_pair(phases: int = 1) -> Callable[[Group], tuple[int, int]]:
    """Footprint of a schedule that sends between every pair of ranks in each of
    ``phases`` steps (direct sends): ``phases * N(N-1)`` transfers."""
    return lambda g: (phases * g.n * (g.n - 1), phases)


def size_estimate(alg: Algorithm, group: Group) -> tuple[int, int] | None:
    """``(distinct transfers, steps)`` one group's schedule of ``alg`` would hold (see
    :meth:`Algorithm.footprint`); None where the algorithm does not say."""
    return alg.footprint(group)


def steps_estimate(alg: Algorithm, group: Group) -> int:
    """How many steps the schedule of ``alg`` on ``group`` has, where known without
    building it, else 0."""
    size = alg.footprint(group)
    return 0 if size is None else int(size[1])


def too_large(alg: Algorithm, group: Group, num_groups: int = 1) -> str | None:
    """Why the schedule of ``alg`` on ``group`` (times ``num_groups``) is too large to
    build, in one sentence, or None."""
    size = size_estimate(alg, group)
    where = f"{group.topology!r}" if group.topology is not None else f"{group.n} ranks"
    ranks = group.n * num_groups
    if ranks > MAX_RANKS:
        return (f"{alg.name} {alg.collective} on {where} would span {ranks:,} ranks, beyond "
                f"the {MAX_RANKS:,} a schedule may span")
    if size is None:
        return None
    if len(size) > 3 and size[3]:     # the builder's reason: work beyond its transfers
        return f"{alg.name} {alg.collective} on {where} {size[3]}"
    hops = getattr(group.topology, "max_hops", None)
    if len(size) > 2 and size[2] is not None and hops is not None:
        hops = min(hops, int(size[2]))        # its transfers go no further than this
    if size[0] * num_groups <= MAX_TRANSFERS:
        if hops is None or size[0] * num_groups * hops <= MAX_ROUTED:
            return None
        return (f"{alg.name} {alg.collective} on {where} would route about {size[0] * num_groups:,} "
                f"transfers over up to {hops:,} links each, beyond the {MAX_ROUTED:,} (transfer, link) "
                f"pairs a schedule may hold")
    return (f"{alg.name} {alg.collective} on {where} would hold about "
            f"{size[0] * num_groups:,} transfers, beyond the "
            f"{MAX_TRANSFERS:,} a schedule may hold")
