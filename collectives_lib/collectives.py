"""Build a collective's schedule for a topology, list what applies, and pick one.

``build("all_gather", tpu_slice("v5e", "8x16"), "auto", axes="x")`` returns
the schedule XLA would run on that axis (a chain: the short axis has no
wraparound). On GPU systems ``"auto"`` does what NCCL's tuner does: it
predicts every applicable algorithm's time with a cost model (ours, here) and
picks the fastest for the given size.

Introduced in the chapter *A first look*; every chapter uses it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from . import builders as A
from .errors import CollectivesError
from .schedule import Schedule, check_collective, concat, dual, embed
from .topology import GpuCluster, Switch, Topology, Torus

ALGORITHM_NAMES = {
    "all_gather": ("ring", "bidirectional_ring", "chain", "multi_axis", "sequential_axes",
                   "recursive_doubling", "direct", "multicast", "hierarchical"),
    "reduce_scatter": ("ring", "bidirectional_ring", "chain", "multi_axis", "sequential_axes",
                       "recursive_halving", "direct", "sharp", "hierarchical"),
    "all_reduce": ("ring", "bidirectional_ring", "chain", "multi_axis", "sequential_axes",
                   "recursive_doubling", "rabenseifner", "tree", "direct", "sharp",
                   "hierarchical"),
    "all_to_all": ("ring", "bidirectional_ring", "chain", "direct", "hierarchical"),
    "broadcast": ("binomial_tree", "chain", "direct", "multicast"),
    "reduce": ("binomial_tree", "chain", "direct", "sharp"),
    "send": ("direct", "multipath"),
    "gather": ("direct", "multipath"),
}

DESCRIPTIONS = {
    "ring": "unidirectional ring, N-1 steps per phase",
    "bidirectional_ring": "ring using both directions of every link, about N/2 steps",
    "chain": "line without wraparound, N-1 steps",
    "multi_axis": "all axes at once: one part of the data per axis order",
    "sequential_axes": "one mesh axis after another, the whole array each time",
    "recursive_doubling": "log2(N) rounds of pairwise exchange (power-of-two N)",
    "recursive_halving": "log2(N) rounds of pairwise exchange, halving (power-of-two N)",
    "rabenseifner": "recursive halving reduce-scatter + recursive doubling all-gather",
    "tree": "binomial tree reduce, then binomial tree broadcast",
    "binomial_tree": "binomial tree, log2(N) rounds",
    "direct": "every message straight to its destination, routed by the network",
    "multicast": "the switch replicates data (NVLink SHARP multicast)",
    "sharp": "in-network reduction in the switch (SHARP)",
    "hierarchical": "InfiniBand rails between nodes + NVLink inside nodes, pipelined",
    "multipath": "split over link-disjoint paths",
}


@dataclass(frozen=True)
class Choice:
    """The algorithm ``auto`` picked and why."""

    algorithm: str
    reason: str


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------

def _axis_kind(topo: Torus, axis: int) -> str:
    if topo.dims[axis] <= 2 and topo.bidirectional:
        return "chain"
    if topo.wraparound[axis]:
        return "bidirectional_ring" if topo.bidirectional else "ring"
    if not topo.bidirectional:
        raise CollectivesError(
            f"axis {topo.axis_names[axis]} of {topo!r} has one-way links and no "
            f"wraparound: no collective can run on it"
        )
    return "chain"


def _require_line_kind(topo: Torus, axis: int, algorithm: str) -> None:
    size = topo.dims[axis]
    name = topo.axis_names[axis]
    if algorithm in ("ring", "bidirectional_ring") and size > 2 and not topo.wraparound[axis]:
        raise CollectivesError(
            f"{algorithm} needs a wraparound link on axis {name} (size {size}) of "
            f"{topo!r}, which has none; use chain"
        )
    if algorithm == "bidirectional_ring" and not topo.bidirectional:
        raise CollectivesError(f"bidirectional_ring needs links both ways; {topo!r} is one-way; use ring")
    if algorithm == "chain" and not topo.bidirectional:
        raise CollectivesError(f"chain needs links both ways; {topo!r} is one-way; use ring")


def _agent_namer(topo: Topology, groups: np.ndarray) -> Callable[[int, str], str]:
    if isinstance(topo, GpuCluster):
        def name(g, local):
            node = int(groups[g, 0]) // topo.gpus_per_node
            return f"nvswitch{node}"
        return name
    return lambda g, local: local if groups.shape[0] == 1 else f"{local}{g}"


def _groups(topo: Topology, axes) -> tuple[np.ndarray, tuple[int, ...], list[int]]:
    if hasattr(topo, "axis_groups"):
        axes_i = topo.resolve_axes(axes)
        groups = topo.axis_groups(axes)
        shape = tuple(topo.mesh_shape[a] for a in axes_i)
        return groups, shape, axes_i
    if axes is not None:
        raise CollectivesError(f"{topo!r} has no named axes; leave axes out")
    return np.arange(topo.num_ranks)[None, :], (topo.num_ranks,), [0]


def _unsupported(collective, algorithm, topo, axes, applicable) -> CollectivesError:
    where = f"{topo!r}" + (f" over axes {axes}" if axes is not None else "")
    return CollectivesError(
        f"algorithm {algorithm!r} does not apply to {collective} on {where}; "
        f"applicable: {', '.join(applicable) if applicable else 'none'}"
    )


# ---------------------------------------------------------------------------
# local builders per collective
# ---------------------------------------------------------------------------

def _line_local(collective: str, algorithm: str, n: int, options: dict) -> Schedule:
    """One-group schedules on a line/ring/switch of n ranks."""
    ag_builders = {
        "ring": A.ring_all_gather_local,
        "bidirectional_ring": A.bidirectional_ring_all_gather_local,
        "chain": A.chain_all_gather_local,
        "recursive_doubling": A.recursive_doubling_all_gather_local,
        "direct": A.direct_all_gather_local,
    }
    root = int(options.get("root", 0))
    if collective in ("broadcast", "reduce") and not 0 <= root < n:
        raise CollectivesError(f"root must be a rank 0..{n - 1}, got {root}")
    if collective == "all_gather":
        if algorithm == "multicast":
            return A.multicast_all_gather_local(n)
        return ag_builders[algorithm](n)
    if collective == "reduce_scatter":
        if algorithm == "sharp":
            return A.sharp_reduce_scatter_local(n)
        if algorithm == "direct":
            return A.direct_reduce_scatter_local(n)
        if algorithm == "recursive_halving":
            return dual(A.recursive_doubling_all_gather_local(n), algorithm="recursive_halving")
        return A.reduce_scatter_from(ag_builders[algorithm](n))
    if collective == "all_reduce":
        if algorithm == "recursive_doubling":
            return A.recursive_doubling_all_reduce_local(n)
        if algorithm == "rabenseifner":
            return A.rabenseifner_all_reduce_local(n)
        if algorithm == "tree":
            return A.tree_all_reduce_local(n)
        if algorithm == "sharp":
            return A.sharp_all_reduce_local(n)
        if algorithm == "direct":
            return concat(A.direct_reduce_scatter_local(n), A.direct_all_gather_local(n),
                          collective="all_reduce", algorithm="direct",
                          description="direct reduce-scatter, then direct all-gather")
        return A.all_reduce_from(ag_builders[algorithm](n))
    if collective == "all_to_all":
        matrix = options.get("matrix")
        return {"ring": A.ring_all_to_all_local,
                "bidirectional_ring": A.bidirectional_ring_all_to_all_local,
                "chain": A.chain_all_to_all_local,
                "direct": A.direct_all_to_all_local}[algorithm](n, matrix)
    if collective == "broadcast":
        if algorithm == "binomial_tree":
            return A.binomial_broadcast_local(n, root)
        if algorithm == "chain":
            return A.chain_broadcast_local(n, root, int(options.get("chunks", 8)))
        if algorithm == "direct":
            return A.direct_broadcast_local(n, root)
        return A.multicast_broadcast_local(n, root)
    if collective == "reduce":
        if algorithm == "binomial_tree":
            return dual(A.binomial_broadcast_local(n, root))
        if algorithm == "chain":
            return dual(A.chain_broadcast_local(n, root, int(options.get("chunks", 8))))
        if algorithm == "direct":
            return A.direct_reduce_local(n, root)
        return A.sharp_reduce_local(n, root)
    raise CollectivesError(f"no builder for {collective} {algorithm}")  # pragma: no cover


def _mesh_local(collective: str, algorithm: str, shape, kinds, options) -> Schedule:
    multi = algorithm == "multi_axis"
    ag = A.mesh_all_gather_local(shape, kinds, multi=multi)
    if collective == "all_gather":
        return ag
    rs = dual(ag)
    if collective == "reduce_scatter":
        return rs
    return A.all_reduce_from(ag, rs=rs, algorithm=ag.algorithm)


# ---------------------------------------------------------------------------
# what applies where
# ---------------------------------------------------------------------------

def _candidates(collective: str, topo: Topology, axes) -> dict[str, Callable[[dict], Schedule] | str]:
    """name -> builder(options) for applicable algorithms, or a reason string."""
    out: dict[str, Callable[[dict], Schedule] | str] = {}
    if collective == "send":
        return out
    groups, shape, axes_i = _groups(topo, axes)
    n = int(np.prod(shape))
    pow2 = n >= 1 and n & (n - 1) == 0
    namer = _agent_namer(topo, groups)

    def emb(local_fn):
        def make(options):
            local = local_fn(options)
            return embed(local, groups, topo.num_ranks, agent_name=namer)
        return make

    def line(alg):
        return emb(lambda o, alg=alg: _line_local(collective, alg, n, o))

    names = ALGORITHM_NAMES[collective]
    switch_like = isinstance(topo, Switch) or (isinstance(topo, GpuCluster) and axes_i == [1])
    if isinstance(topo, Torus):
        if len(axes_i) == 1:
            axis = axes_i[0]
            for alg in ("ring", "bidirectional_ring", "chain"):
                if alg not in names:
                    continue
                try:
                    _require_line_kind(topo, axis, alg)
                    if (alg == "chain" and collective == "all_to_all"
                            and topo.wraparound[axis] and topo.dims[axis] > 2):
                        # the chain all-to-all routes its messages; with a wraparound
                        # link they would take it, so it would not be a chain at all
                        raise CollectivesError(
                            f"the chain all-to-all is for an axis without wraparound; axis "
                            f"{topo.axis_names[axis]} of {topo!r} has it: use "
                            f"bidirectional_ring (or time a copy of the torus without the "
                            f"wraparound to see what losing it costs)")
                    out[alg] = line(alg)
                except CollectivesError as exc:
                    out[alg] = str(exc)
        else:
            if collective in ("all_gather", "reduce_scatter", "all_reduce"):
                try:
                    if collective != "all_gather" and not topo.bidirectional:
                        raise CollectivesError(
                            f"multi-axis {collective} on the one-way torus {topo!r} would send "
                            f"against its links; run it one axis at a time with ring (axes=x)")
                    kinds = [_axis_kind(topo, a) for a in axes_i]
                    out["multi_axis"] = emb(lambda o: _mesh_local(collective, "multi_axis", shape, kinds, o))
                    out["sequential_axes"] = emb(lambda o: _mesh_local(collective, "sequential_axes", shape, kinds, o))
                except CollectivesError as exc:
                    out["multi_axis"] = out["sequential_axes"] = str(exc)
    elif isinstance(topo, GpuCluster) and axes_i == [0, 1]:
        nodes, gpus = topo.num_nodes_, topo.gpus_per_node
        if collective in ("all_gather", "reduce_scatter", "all_reduce"):
            ag = lambda: A.multichannel_ring_all_gather_local(nodes, gpus)
            if collective == "all_gather":
                out["ring"] = emb(lambda o: ag())
            elif collective == "reduce_scatter":
                out["ring"] = emb(lambda o: dual(ag()))
            else:
                out["ring"] = emb(lambda o: A.all_reduce_from(ag()))
            hag = lambda o: A.hierarchical_all_gather_local(nodes, gpus, intra=o.get("intra", "ring"))
            if collective == "all_gather":
                out["hierarchical"] = emb(hag)
            elif collective == "reduce_scatter":
                out["hierarchical"] = emb(lambda o: dual(hag(o)))
            else:
                out["hierarchical"] = emb(lambda o: A.all_reduce_from(hag(o)))
        if collective == "all_to_all":
            out["hierarchical"] = emb(lambda o: A.hierarchical_all_to_all_local(nodes, gpus))
    else:
        # logical rings over a switch, a fat tree or hosts: routed, not physical
        for alg in ("ring", "bidirectional_ring"):
            if alg in names and collective != "broadcast":
                out[alg] = line(alg)
        if "chain" in names:
            out["chain"] = line("chain")
    # algorithms that route through any network
    if collective in ("all_gather",):
        out["recursive_doubling"] = line("recursive_doubling") if pow2 else (
            f"recursive_doubling needs a power-of-two number of ranks, got N = {n}")
    if collective == "reduce_scatter":
        out["recursive_halving"] = line("recursive_halving") if pow2 else (
            f"recursive_halving needs a power-of-two number of ranks, got N = {n}")
    if collective == "all_reduce":
        for alg in ("recursive_doubling", "rabenseifner"):
            out[alg] = line(alg) if pow2 else (
                f"{alg} needs a power-of-two number of ranks, got N = {n}")
        out["tree"] = line("tree")
    if collective in ("broadcast", "reduce"):
        out["binomial_tree"] = line("binomial_tree")
        if not (isinstance(topo, Torus) and len(axes_i) > 1):
            out["chain"] = line("chain")
    if collective in ("all_gather", "reduce_scatter", "all_reduce", "all_to_all", "broadcast", "reduce"):
        out["direct"] = line("direct")
    if switch_like:
        if collective == "all_gather":
            out["multicast"] = line("multicast")
        if collective in ("reduce_scatter", "all_reduce", "reduce"):
            out["sharp"] = line("sharp")
        if collective == "broadcast":
            out["multicast"] = line("multicast")
    order = {name: i for i, name in enumerate(names)}
    return dict(sorted(((k, v) for k, v in out.items() if k in order), key=lambda kv: order[kv[0]]))


def algorithms(collective: str, topology: Topology, axes=None) -> list[str]:
    """Names of the algorithms that apply to ``collective`` on ``topology``."""
    collective = check_collective(collective)
    if collective in ("send", "gather"):
        return ["direct", "multipath"]
    return [k for k, v in _candidates(collective, topology, axes).items() if callable(v)]


def _tpu_choice(collective: str, topo: Torus, axes_i: list[int]) -> Choice:
    if collective == "all_to_all":
        if len(axes_i) == 1:
            kind = _axis_kind(topo, axes_i[0])
            return Choice(kind, f"{kind} on axis {topo.axis_names[axes_i[0]]} "
                                f"({'wraparound' if topo.wraparound[axes_i[0]] else 'no wraparound'})")
        return Choice("direct", "every chip sends straight to every other; the ICI routes "
                                "the messages dimension by dimension")
    if collective in ("broadcast", "reduce"):
        return Choice("binomial_tree", "log2(N) rounds")
    if len(axes_i) > 1:
        return Choice("multi_axis", f"over axes {', '.join(topo.axis_names[a] for a in axes_i)} "
                                    f"at once, keeping every ICI link busy")
    kind = _axis_kind(topo, axes_i[0])
    why = ("the axis has wraparound links, so it forms a ring" if kind != "chain"
           else "the axis has no wraparound link, so it is a chain")
    return Choice(kind, f"{kind}: {why}")


def choose(collective: str, topology: Topology, size: int | None = None, axes=None,
           **options) -> Choice:
    """The algorithm ``auto`` picks, and why.

    TPU tori: what XLA does (rings on axes with wraparound, chains without,
    all axes at once). Switches and GPU clusters: like NCCL's tuner, the
    applicable algorithm with the smallest predicted time for ``size`` bytes.
    """
    collective = check_collective(collective)
    if collective == "gather":
        return Choice("direct", "every block straight to the root")
    if collective == "send":
        return Choice("multipath" if isinstance(topology, Torus) else "direct",
                      "split over link-disjoint paths" if isinstance(topology, Torus) else "one route")
    if isinstance(topology, Torus):
        _, _, axes_i = _groups(topology, axes)
        return _tpu_choice(collective, topology, axes_i)
    from .simulate import simulate
    size = 1 << 30 if size is None else size
    cands = {k: v for k, v in _candidates(collective, topology, axes).items() if callable(v)}
    # NCCL's menu: rings, trees, NVLS/SHARP, hierarchical; not the textbook extras
    nccl_menu = {"ring", "tree", "sharp", "multicast", "hierarchical", "direct", "chain",
                 "binomial_tree"}
    if collective != "all_to_all":
        cands = {k: v for k, v in cands.items() if k in nccl_menu and k != "direct"} or cands
    times = {}
    for name, make in cands.items():
        sched = make(options)
        times[name] = simulate(sched, topology, sched.round_size(size)).time
    best = min(times, key=times.get)
    listing = ", ".join(f"{k} {times[k]:.3g} s" for k in sorted(times, key=times.get))
    return Choice(best, f"fastest predicted by the cost model for this size, as NCCL's "
                        f"tuner does ({listing})")


def build(collective: str, topology: Topology, algorithm: str = "auto", *, axes=None,
          size: int | None = None, **options) -> Schedule:
    """The schedule of ``collective`` on ``topology`` with ``algorithm``.

    ``axes`` names the mesh axes the collective spans (``"x"``, ``("x", "y")``,
    ``"node"``, ``"gpu"``); the other axes form independent groups that run at
    the same time. Options: ``root`` (broadcast, reduce), ``chunks`` (pipelined
    chain broadcast), ``matrix`` (all-to-all traffic matrix, bytes from origin
    to destination), ``intra`` ("ring" or "direct" inside nodes), ``src``,
    ``dst`` and ``paths`` (send: "disjoint", "shortest" or an int).
    """
    collective = check_collective(collective)
    if collective == "send":
        return build_send(topology, options.get("src", 0), options.get("dst", topology.num_ranks - 1),
                          paths=options.get("paths", "disjoint" if algorithm in ("auto", "multipath") else "shortest"))
    if collective == "gather":
        if algorithm not in ("auto", "direct", "multipath"):
            raise CollectivesError(f"algorithm {algorithm!r} does not apply to gather; use direct or multipath")
        return build_gather(topology, options.get("root", 0),
                            paths="disjoint" if algorithm == "multipath" else "shortest")
    algorithm = str(algorithm).strip().lower().replace("-", "_")
    if algorithm == "auto":
        algorithm = choose(collective, topology, size, axes, **options).algorithm
    cands = _candidates(collective, topology, axes)
    applicable = [k for k, v in cands.items() if callable(v)]
    if algorithm not in cands:
        known = ALGORITHM_NAMES[collective]
        if algorithm not in known and algorithm not in sum(map(list, ALGORITHM_NAMES.values()), []):
            raise CollectivesError(
                f"unknown algorithm {algorithm!r} for {collective}; known: {', '.join(known)}"
            )
        err = _unsupported(collective, algorithm, topology, axes, applicable)
        if (algorithm in ("ring", "bidirectional_ring", "chain") and hasattr(topology, "resolve_axes")
                and len(topology.resolve_axes(axes)) > 1):
            err = CollectivesError(str(err) + f"; {algorithm} runs along one axis: pass "
                                   f"axes=x (--axes x), or use multi_axis or sequential_axes")
        raise err
    make = cands[algorithm]
    if isinstance(make, str):
        raise CollectivesError(make + f" (applicable here: {', '.join(applicable)})")
    return make(options)


def build_send(topology: Topology, src, dst, *, paths="disjoint") -> Schedule:
    """Point-to-point send of the whole array from ``src`` to ``dst``."""
    def as_rank(x):
        if hasattr(topology, "rank_of") and np.iterable(x):
            return topology.rank_of(x)
        x = int(x)
        if not 0 <= x < topology.num_ranks:
            raise CollectivesError(f"rank {x} is not an endpoint of {topology!r} (0..{topology.num_ranks - 1})")
        return x
    s, d = as_rank(src), as_rank(dst)
    if s == d:
        raise CollectivesError(f"send needs two different ranks, got {src} and {dst}")
    if paths == "shortest" or paths == 1:
        node_paths = []
    else:
        node_paths = topology.disjoint_paths(s, d)
        if isinstance(paths, int) and not isinstance(paths, bool):
            if paths < 1:
                raise CollectivesError(f"paths must be >= 1, got {paths}")
            node_paths = node_paths[:paths]
        elif paths != "disjoint":
            raise CollectivesError(f"paths must be 'disjoint', 'shortest' or a count, got {paths!r}")
    return A.send_local(topology.num_ranks, s, d, node_paths)


def build_gather(topology: Topology, root=0, *, paths="shortest") -> Schedule:
    """Every rank sends its block to ``root`` at once; with ``paths="disjoint"``
    each block is split over the link-disjoint routes to the root."""
    if hasattr(topology, "rank_of") and np.iterable(root):
        root = topology.rank_of(root)
    root = int(root)
    if not 0 <= root < topology.num_ranks:
        raise CollectivesError(f"root {root} is not an endpoint of {topology!r}")
    n = topology.num_ranks
    node_paths = None
    if paths == "disjoint":
        node_paths = [topology.disjoint_paths(i, root) if i != root else [] for i in range(n)]
    elif paths != "shortest":
        raise CollectivesError(f"paths must be 'disjoint' or 'shortest', got {paths!r}")
    return A.gather_local(n, root, node_paths)


def time_flows(topology: Topology, flows, *, overhead: float = 0.0):
    """Time one step of arbitrary point-to-point flows: ``[(src, dst, nbytes), ...]``.

    ``src`` and ``dst`` are endpoint ranks or named nodes (``"host0"``,
    ``"switch"``, ``"nvswitch3"``). Flows share links they cross; the result is
    a :class:`~collectives_lib.simulate.Result` whose size is the total bytes.
    Use it for traffic that is not a collective: loading shards from hosts over
    PCIe, sparse MoE dispatch, a custom pattern.
    """
    from .schedule import Schedule, Step, Traffic, boxes_array
    from .simulate import simulate
    flows = list(flows)
    if not flows:
        raise CollectivesError("time_flows needs at least one (src, dst, nbytes) flow")
    names: list[str] = []

    def node(x):
        if isinstance(x, str):
            if x not in names:
                names.append(x)
            return topology.num_ranks + names.index(x)
        x = int(x)
        if not 0 <= x < topology.num_ranks:
            raise CollectivesError(f"rank {x} is not an endpoint of {topology!r}")
        return x
    src = np.array([node(f[0]) for f in flows])
    dst = np.array([node(f[1]) for f in flows])
    nbytes = np.array([float(f[2]) for f in flows])
    if (nbytes < 0).any() or nbytes.sum() <= 0:
        raise CollectivesError("flow sizes must be >= 0 bytes and not all zero")
    total = nbytes.sum()
    traffic = Traffic.make(src, dst, 0, nbytes / total)
    sched = Schedule("send", "flows", topology.num_ranks,
                     np.arange(topology.num_ranks)[None, :], (topology.num_ranks,),
                     (len(flows),), (Step(traffic, boxes_array([(np.arange(len(flows)), 1)], len(flows)), "flows"),),
                     agents=tuple(names), routing="routed", root=0, dest=0)
    return simulate(sched, topology, int(round(total)), overhead=overhead, check_size=False)


def estimate(topology: Topology, collective: str, size: int, algorithm: str = "auto", *,
             axes=None, overhead: float = 0.0, placement=None, **options):
    """Build and simulate in one call; returns ``(result, choice)``."""
    from .simulate import simulate
    collective = check_collective(collective)
    if algorithm == "auto":
        choice = choose(collective, topology, size, axes, **options)
    else:
        choice = Choice(algorithm, "chosen by the caller")
    sched = build(collective, topology, choice.algorithm, axes=axes, size=size, **options)
    return simulate(sched, topology, size, overhead=overhead, placement=placement), choice


# ---------------------------------------------------------------------------
# every collective on a TPU slice, side by side
# ---------------------------------------------------------------------------

#: Columns of :func:`torus_summary`: one-axis schedules, then all axes at once.
SUMMARY_COLUMNS = ("ring", "bidirectional_ring", "chain", "all_axes")

_SUMMARY_FORMULAS = {
    ("all_gather", "ring"): "(N-1)/N · V/W",
    ("all_gather", "bidirectional_ring"): "⌈(N-1)/2⌉/N · V/W ≈ V/(2W)",
    ("all_gather", "chain"): "(N-1)/N · V/W ≈ V/W",
    ("all_gather", "all_axes"): "Σ_phases max_parts h·done/(D·N) · V/W ≈ n/(n-1) · V/(2DW)",
    ("all_to_all", "ring"): "(N-1)/(2N) · V/W ≈ V/(2W)",
    ("all_to_all", "bidirectional_ring"): "(m(m+1)/2 + N/4)/N² · V/W = V/(8W), N even",
    ("all_to_all", "chain"): "⌊N/2⌋⌈N/2⌉/N² · V/W ≈ V/(4W)",
    ("all_to_all", "all_axes"): "max_axes load(d)/(N·d) · V/W",
}


@dataclass(frozen=True)
class SummaryRow:
    """One cell of :func:`torus_summary`: a collective run one way on a torus.

    ``time`` is the simulator's throughput-bound time (latency set to 0) and
    ``closed_form`` the formula's; ``coefficient`` is ``time * W / V``, the
    number that multiplies ``V/W`` in ``formula``. When the schedule does not
    apply (a ring on an axis without wraparound) the times are None and
    ``note`` says why, in the library's words.
    """

    collective: str
    column: str
    algorithm: str
    axes: tuple[str, ...]
    num_ranks: int
    nbytes: int
    bandwidth: float
    time: float | None
    closed_form: float | None
    formula: str
    note: str = ""

    @property
    def coefficient(self) -> float | None:
        return None if self.time is None else self.time * self.bandwidth / self.nbytes


def _summary_axis(topo: Torus, axis) -> int:
    if axis is not None:
        return topo.resolve_axes(axis)[0]
    dims = topo.dims
    wrapped = [a for a in range(len(dims)) if topo.wraparound[a]]
    pool = wrapped or list(range(len(dims)))
    return max(pool, key=lambda a: (dims[a], -a))


def torus_summary(topology: Torus, size: int, *, axis=None) -> list[SummaryRow]:
    """Throughput-bound time of all-gather, reduce-scatter, all-reduce and
    all-to-all on a torus or TPU slice, run four ways: a one-way ring, a
    bidirectional ring and a chain along one axis (``axis``; default the
    longest axis with wraparound, else the longest), and over all axes at
    once (``multi_axis``; ``direct`` for all-to-all).

    ``size`` is V, the array of the collective's group: one line of ``axis``
    for the first three columns, the whole slice for the last. Each time is
    simulated on a copy of the topology without latency and checked against
    its closed form in :mod:`collectives_lib.costs`. Returns 16 rows,
    collective by collective, in :data:`SUMMARY_COLUMNS` order.

    Introduced in the chapter *All-to-all: a sharded transpose* (its summary
    of every TPU collective).
    """
    from . import costs
    from .simulate import simulate

    if not isinstance(topology, Torus):
        raise CollectivesError(f"torus_summary needs a torus or a TPU slice, got {topology!r}")
    size = int(size)
    if size <= 0:
        raise CollectivesError(f"size must be a positive number of bytes, got {size}")
    a = _summary_axis(topology, axis)
    W = topology.bandwidth
    flat = Torus(topology.dims, topology.wraparound, bandwidth=W, latency=0.0,
                 bidirectional=topology.bidirectional, link_class=topology.link_class)
    chain_flat = Torus(topology.dims, tuple(w and b != a for b, w in enumerate(topology.wraparound)),
                       bandwidth=W, latency=0.0, bidirectional=topology.bidirectional,
                       link_class=topology.link_class)
    try:
        kinds = [_axis_kind(topology, b) for b in range(len(topology.dims))]
    except CollectivesError:          # one-way links without wraparound: nothing runs there
        kinds = None
    n = topology.dims[a]
    rows = []
    for collective in ("all_gather", "reduce_scatter", "all_reduce", "all_to_all"):
        base = "all_to_all" if collective == "all_to_all" else "all_gather"
        factor = 2.0 if collective == "all_reduce" else 1.0
        for column in SUMMARY_COLUMNS:
            formula = _SUMMARY_FORMULAS[(base, column)]
            if factor == 2.0:
                formula = "2 × (" + formula + ")"
            if column == "all_axes":
                algorithm = "direct" if collective == "all_to_all" else "multi_axis"
                axes, group = tuple(topology.axis_names), topology.num_ranks
            else:
                algorithm = column
                axes, group = (topology.axis_names[a],), n
            # a chain is the axis without its wraparound link: time it on such a copy, so
            # that routed messages (the chain all-to-all) cannot take the shortcut
            topo = chain_flat if column == "chain" else flat
            try:
                sched = build(collective, topo, algorithm, axes=None if column == "all_axes" else axes[0])
                t = simulate(sched, topo, size, check_size=False).time
            except CollectivesError as exc:
                rows.append(SummaryRow(collective, column, algorithm, axes, group, size, W, None, None,
                                       formula, str(exc)))
                continue
            if column == "all_axes":
                if collective == "all_to_all":
                    cf = costs.torus_all_to_all(topology.dims, kinds, size, W)
                else:
                    cf = factor * costs.multi_axis_all_gather(topology.dims, kinds, size, W)
            elif collective == "all_to_all":
                cf = {"ring": costs.ring_all_to_all, "chain": costs.chain_all_to_all,
                      "bidirectional_ring": costs.bidirectional_ring_all_to_all}[column](n, size, W)
            else:
                cf = factor * {"ring": costs.ring_all_gather, "chain": costs.chain_all_gather,
                               "bidirectional_ring": costs.bidirectional_ring_all_gather}[column](n, size, W)
            rows.append(SummaryRow(collective, column, algorithm, axes, group, size, W, t, cf, formula))
    return rows
