"""Time a schedule on a topology.

The link model: in each step, every transfer is routed on the topology;
transfers that cross the same link in the same step share its bandwidth; each
link on a route adds its latency (cut-through: the bytes pipeline across the
hops, so latency adds once per hop and the bandwidth term once per transfer).
A transfer finishes when its most loaded link has drained::

    t(transfer) = sum(latency of its links) + max over its links (load / bandwidth)

and a step ends when its slowest transfer does (bulk-synchronous steps). A
per-step software overhead ``overhead`` (alpha) can be added.

Timing never touches the data: each distinct :class:`~collectives_lib.schedule.Traffic`
of a schedule is routed once, and its transfers are reduced to a few (latency,
seconds per byte) pairs, so sweeping sizes is cheap.

Stages and overlap: when ``schedule.pipelined`` is set (hierarchical
collectives, SHARP), chunks stream through the stages: their latencies add but
their bandwidth terms overlap, so the time is the sum of the stages' latencies
plus the slowest stage's bandwidth term (and at least the busiest link's
total); ``time_unoverlapped`` is the plain sum.

Introduced in the chapter *A first look*.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import checks
from .collective import Collective
from .errors import CollectivesError
from .schedule import REDUCE, Schedule, Traffic, check_schedule
from .topology import Topology, check_topology
from .units import format_bytes, format_rate, format_time


@dataclass(frozen=True)
class Pattern:
    """A routed traffic pattern: what one step costs as a function of V.

    For each lane, the critical flows as (latency s, seconds per byte of V)
    pairs: the step takes ``max(lat + V * unit)`` in that lane.
    """

    lanes: tuple[int, ...]
    lat: tuple[np.ndarray, ...]
    unit: tuple[np.ndarray, ...]
    links: np.ndarray       # links used
    link_unit: np.ndarray   # fraction of V each of those links carries

    def lane_times(self, sizes: np.ndarray) -> dict[int, np.ndarray]:
        return {lane: np.max(lat[None, :] + sizes[:, None] * unit[None, :], axis=1)
                for lane, lat, unit in zip(self.lanes, self.lat, self.unit)}

    def time(self, nbytes: float) -> float:
        times = self.lane_times(np.array([float(nbytes)]))
        return float(max((t[0] for t in times.values()), default=0.0))


def _envelope(lat: np.ndarray, unit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Keep only flows that can be the slowest for some V >= 0.

    In order of decreasing latency (ties: decreasing seconds per byte), a flow
    is kept when it needs more seconds per byte than every flow before it;
    equal flows are kept once."""
    lat = np.asarray(lat, dtype=float)
    unit = np.asarray(unit, dtype=float)
    if len(lat) == 0:
        return np.zeros(0), np.zeros(0)
    order = np.lexsort((-unit, -lat))
    a, b = lat[order], unit[order]
    before = np.concatenate([[-1.0], np.maximum.accumulate(b)[:-1]])
    keep = b > before
    return a[keep], b[keep]


@dataclass(frozen=True)
class Stage:
    """One stage of a schedule (its steps with the same label): its time alone, and its
    latency part (the rest is its bytes over its busiest links)."""

    name: str
    time: float
    latency: float

    @property
    def bandwidth_time(self) -> float:
        return self.time - self.latency


@dataclass(frozen=True)
class Stages:
    """A schedule's stages (:meth:`Result.stages`), with the total one after another
    (``unoverlapped``) and the total the schedule takes (``time``, less where
    pipelined stages overlap)."""

    stages: tuple[Stage, ...]
    time: float
    unoverlapped: float

    def __iter__(self):
        return iter(self.stages)

    def __len__(self) -> int:
        return len(self.stages)

    def __getitem__(self, name: str) -> Stage:
        for st in self.stages:
            if st.name == name:
                return st
        raise KeyError(f"no stage {name!r}; the stages are {', '.join(st.name for st in self.stages)}")

    @property
    def slowest(self) -> Stage:
        return max(self.stages, key=lambda st: st.time)

    def __str__(self) -> str:
        width = max([len(st.name) for st in self.stages] + [5])
        lines = [f"{'stage':<{width}}  {'time':>9}  {'latency':>9}  {'bandwidth':>9}"]
        for st in self.stages:
            lines.append(f"{st.name:<{width}}  {format_time(st.time):>9}  {format_time(st.latency):>9}  "
                         f"{format_time(st.bandwidth_time):>9}")
        lines.append(f"{'one after another':<{width}}  {format_time(self.unoverlapped):>9}")
        if self.time < self.unoverlapped * (1 - 1e-9):
            lines.append(f"{'overlapped':<{width}}  {format_time(self.time):>9}")
        return "\n".join(lines)


@dataclass(frozen=True)
class Result:
    """What :func:`simulate` reports (seconds, bytes, bytes/s)."""

    collective: str
    algorithm: str
    num_ranks: int
    group_size: int
    nbytes: int                 # nccl-tests' size (for all-to-all, one rank's buffer)
    time: float
    time_unoverlapped: float
    step_times: np.ndarray
    stage_times: dict
    latency_time: float
    bandwidth_time: float
    link_bytes: np.ndarray
    link_busy: np.ndarray
    bottleneck_link: int
    bottleneck: str
    topology: Topology = field(repr=False)
    timed_bytes: float = 0.0    # the whole array the time is for (every slot as large as the largest)
    note: str = ""              # how the size split, when not evenly
    stage_latencies: dict = field(default_factory=dict)   # each stage's latency part (its time at size 0)
    element_size: int = 4       # bytes per element: algbw counts whole elements, as nccl-tests does

    def stages(self) -> "Stages":
        """The stages one after another: each one's time, its latency and bandwidth parts,
        and what overlapping them (a pipelined schedule) made of the total."""
        return Stages(tuple(Stage(name, float(t), float(self.stage_latencies.get(name, 0.0)))
                            for name, t in self.stage_times.items()),
                      self.time, self.time_unoverlapped)

    @property
    def num_steps(self) -> int:
        return len(self.step_times)

    @property
    def algbw(self) -> float:
        """nccl-tests' algorithm bandwidth: size / time, the size in whole elements as
        nccl-tests counts it (0 when no time passes)."""
        whole = self.nbytes - self.nbytes % self.element_size
        return whole / self.time if self.time > 0 else 0.0

    @property
    def busbw(self) -> float:
        """nccl-tests' bus bandwidth: algbw times the collective's factor."""
        return self.algbw * Collective(self.collective).busbw_factor(self.group_size)

    def __str__(self) -> str:
        return (f"{self.algorithm} {self.collective} of {format_bytes(self.nbytes)} on "
                f"{self.num_ranks} ranks: {format_time(self.time)} in {self.num_steps} steps, "
                f"algbw {format_rate(self.algbw)}, busbw {format_rate(self.busbw)}; "
                f"bottleneck {self.bottleneck}")

    def as_dict(self) -> dict:
        return {
            "collective": self.collective, "algorithm": self.algorithm,
            "num_ranks": self.num_ranks, "group_size": self.group_size,
            "nbytes": self.nbytes, "timed_bytes": self.timed_bytes, "time_s": self.time,
            "time_unoverlapped_s": self.time_unoverlapped, "steps": self.num_steps,
            "algbw": self.algbw, "busbw": self.busbw,
            "latency_time_s": self.latency_time, "bandwidth_time_s": self.bandwidth_time,
            "stage_times_s": dict(self.stage_times), "bottleneck": self.bottleneck,
            "note": self.note,
        }


def participant_nodes(schedule: Schedule, topology: Topology, placement) -> np.ndarray:
    if schedule.num_ranks != topology.num_ranks:
        raise CollectivesError(
            f"the schedule is for {schedule.num_ranks} ranks but {topology!r} has "
            f"{topology.num_ranks} endpoints"
        )
    if placement is None:
        nodes = np.arange(schedule.num_ranks, dtype=np.int64)
    else:
        try:
            given = np.asarray(placement)
            nodes = given.astype(np.int64)
        except (TypeError, ValueError):
            given, nodes = None, None
        if given is None or given.dtype.kind not in "iu" or nodes.shape != (schedule.num_ranks,) or sorted(nodes.tolist()) != list(range(topology.num_ranks)):
            raise CollectivesError(
                f"placement must be a permutation of 0..{topology.num_ranks - 1} "
                f"(rank -> endpoint), got {np.asarray(placement).tolist()[:8]}..."
            )
    agents = [topology.agent_node(name) for name in schedule.agents]
    return np.concatenate([nodes, np.asarray(agents, dtype=np.int64)])


def _routes_with_paths(schedule: Schedule, topology: Topology, src, dst, paths, step_index: int):
    """(sub_flow, sub_weight, inc_sub, inc_link) of the flows: the network's routes, and the
    schedule's own node paths where a transfer names one."""
    if paths is None or not (paths >= 0).any():
        r = topology.routes(src, dst)
        return r.sub_flow, r.sub_weight, r.inc_sub, r.inc_link
    explicit = np.nonzero(paths >= 0)[0]
    other = np.nonzero(paths < 0)[0]
    r = topology.routes(src[other], dst[other])
    sub_flow, sub_weight, inc_sub, inc_link = [other[r.sub_flow]], [r.sub_weight], [r.inc_sub], [r.inc_link]
    nsub = len(r.sub_flow)
    for f in explicit.tolist():
        node_path = schedule.paths[int(paths[f])]
        hop_links = []
        for u, v in zip(node_path[:-1], node_path[1:]):
            link = topology.link_between(u, v)
            if link < 0:
                raise CollectivesError(
                    f"step {step_index + 1}: the path of a transfer uses "
                    f"{topology.node_label(u)} -> {topology.node_label(v)}, which is "
                    f"not a link of {topology!r}"
                )
            hop_links.append(link)
        sub_flow.append(np.array([f]))
        sub_weight.append(np.ones(1))
        inc_sub.append(np.full(len(hop_links), nsub))
        inc_link.append(np.asarray(hop_links, dtype=np.int64))
        nsub += 1
    return (np.concatenate(sub_flow).astype(np.int64), np.concatenate(sub_weight),
            np.concatenate(inc_sub).astype(np.int64), np.concatenate(inc_link).astype(np.int64))


def _check_neighbours(schedule, topology, inc_sub, sub_flow, src, dst, keep, step_index) -> None:
    """A neighbour-to-neighbour schedule on a torus must find a link for every transfer."""
    nsubs = len(sub_flow)
    if not (schedule.routing == "neighbor" and topology.routing_kind == "torus" and nsubs):
        return
    hops = np.bincount(inc_sub, minlength=nsubs)
    bad = np.nonzero(hops != 1)[0]
    if len(bad):
        f = int(sub_flow[bad[0]])
        orig = np.nonzero(keep)[0][f]
        raise CollectivesError(
            f"step {step_index + 1}: {schedule.algorithm} sends from "
            f"{topology.node_label(int(src[f]))} to {topology.node_label(int(dst[f]))}, "
            f"but {topology!r} has no direct link between them "
            f"({int(hops[bad[0]])} hops); a {schedule.algorithm} needs a link to each "
            f"neighbour it talks to (is the wraparound missing? try the chain algorithm)"
            if orig >= 0 else "schedule uses a missing link"
        )


def _agent_extra(schedule, topology, traffic, keep, src, dst) -> np.ndarray | None:
    """In-switch operations (SHARP, multicast) cost a fixed latency on top of the links:
    the extra latency of each flow, or None."""
    agent_latency = getattr(topology, "agent_latency", None)
    if agent_latency is None:
        return None
    is_agent = (traffic.src[keep] >= schedule.num_ranks) | (traffic.dst[keep] >= schedule.num_ranks)
    if not is_agent.any():
        return None
    extra = np.zeros(len(src))
    flows = np.nonzero(is_agent)[0]
    at = np.where(traffic.dst[keep][flows] >= schedule.num_ranks, dst[flows], src[flows])
    nodes_at, which = np.unique(at, return_inverse=True)      # each agent once
    extra[flows] = np.array([agent_latency(int(v)) for v in nodes_at.tolist()])[which]
    return extra


def _reduction_units(schedule, topology, traffic, keep, dst, frac, ops, element_size) -> list[float]:
    """In-network reduction: a switch adds only as fast as its reduction units allow; the
    seconds per unit of size each reducing switch needs."""
    reduce_rate = getattr(topology, "reduce_rate", None)
    if reduce_rate is None or not (ops == REDUCE).any():
        return []
    is_agent_dst = traffic.dst[keep] >= schedule.num_ranks
    out = []
    for node in np.unique(dst[(ops == REDUCE) & is_agent_dst]).tolist():
        rate = reduce_rate(int(node))
        if rate:
            out.append(frac[(dst == node) & (ops == REDUCE)].sum() / element_size / rate)
    return out


def _route_pattern(schedule: Schedule, topology: Topology, traffic: Traffic,
                   nodes: np.ndarray, step_index: int, element_size: int) -> Pattern:
    links = topology.links
    keep = traffic.fraction > 0
    src = nodes[traffic.src[keep]]
    dst = nodes[traffic.dst[keep]]
    frac = traffic.fraction[keep]
    ops = traffic.op[keep]
    paths = traffic.path[keep] if traffic.path is not None else None
    sub_flow, sub_weight, inc_sub, inc_link = _routes_with_paths(schedule, topology, src, dst, paths, step_index)
    nsubs = len(sub_flow)
    _check_neighbours(schedule, topology, inc_sub, sub_flow, src, dst, keep, step_index)
    sub_frac = frac[sub_flow] * sub_weight
    load = np.bincount(inc_link, weights=sub_frac[inc_sub], minlength=len(links))
    used = np.nonzero(load > 0)[0]
    unit_inc = load[inc_link] / links.bandwidth[inc_link]
    sub_unit = np.zeros(nsubs)
    np.maximum.at(sub_unit, inc_sub, unit_inc)
    sub_lat = np.bincount(inc_sub, weights=links.latency[inc_link], minlength=nsubs)
    if nsubs:
        extra = _agent_extra(schedule, topology, traffic, keep, src, dst)
        if extra is not None:
            sub_lat = sub_lat + extra[sub_flow]
    sub_lane = (traffic.lane[keep][sub_flow] if traffic.lane is not None
                else np.zeros(nsubs, dtype=np.int64))
    lat_l, unit_l, lane_l = [sub_lat], [sub_unit], [sub_lane]
    for unit in _reduction_units(schedule, topology, traffic, keep, dst, frac, ops, element_size):
        lat_l.append(np.zeros(1))
        unit_l.append(np.array([unit]))
        lane_l.append(np.zeros(1, dtype=np.int64))
    lat_all, unit_all, lane_all = map(np.concatenate, (lat_l, unit_l, lane_l))
    lanes, lats, units = [], [], []
    for lane in np.unique(lane_all).tolist():
        sel = lane_all == lane
        a, b = _envelope(lat_all[sel], unit_all[sel])
        lanes.append(int(lane))
        lats.append(a)
        units.append(b)
    return Pattern(tuple(lanes), tuple(lats), tuple(units), used, load[used])


def patterns(schedule: Schedule, topology: Topology, *, placement=None,
             element_size: int = 4) -> tuple[list[Pattern], list[int]]:
    """Route every distinct traffic pattern once; returns (patterns, pattern index per step)."""
    nodes = participant_nodes(schedule, topology, placement)
    cache: dict[int, int] = {}
    pats: list[Pattern] = []
    index = []
    for k, step in enumerate(schedule.steps):
        key = id(step.traffic)
        if key not in cache:
            cache[key] = len(pats)
            pats.append(_route_pattern(schedule, topology, step.traffic, nodes, k, element_size))
        index.append(cache[key])
    return pats, index


def _overhead(overhead) -> float:
    return checks.nonnegative(overhead, "overhead (seconds per step)")


def _inputs(schedule, topology, element_size) -> None:
    check_schedule(schedule)
    check_topology(topology)
    checks.whole(element_size, "element_size (bytes)")


def simulate(schedule: Schedule, topology: Topology, nbytes: int, *, placement=None,
             overhead: float = 0.0, overlap: bool = True, element_size: int = 4) -> Result:
    """Time ``schedule`` on ``topology`` for a size of ``nbytes`` bytes.

    ``nbytes`` means what nccl-tests' size column means for the collective (for
    all-to-all, one rank's buffer; see :meth:`Schedule.array_bytes`). Any
    positive size works: it is cut into whole elements of ``element_size``
    bytes over the schedule's slots, and the largest slot sets the pace (the
    result's ``note`` says when the split is uneven). ``placement[rank]`` is the
    endpoint each rank runs on (default: rank i on endpoint i). ``overhead`` is
    added to every step. ``element_size`` also sets in-network reduction throughput.
    """
    _inputs(schedule, topology, element_size)
    overlap = checks.flag(overlap, "overlap")
    with np.errstate(over="ignore", invalid="ignore"):
        result = _simulate(schedule, topology, nbytes, placement, overhead, overlap, element_size)
    _finite_times(result.time, nbytes, topology)
    return result


def _finite_times(times, nbytes, topology) -> None:
    if not np.all(np.isfinite(times)):
        raise CollectivesError(
            f"the time of {nbytes} bytes on {topology!r} overflows a float: its bandwidth or latency "
            f"is beyond any real link")


def _simulate(schedule, topology, nbytes, placement, overhead, overlap, element_size) -> Result:
    split = schedule.split(nbytes, element_size)
    nbytes = split.nbytes
    timed = split.timed_bytes
    overhead = _overhead(overhead)
    pats, index = patterns(schedule, topology, placement=placement, element_size=element_size)
    sizes = np.array([timed])
    total, stage_times, steps = _timeline(schedule, pats, index, sizes, overhead)
    _, lat_stages, _ = _timeline(schedule, pats, index, np.zeros(1), overhead)
    link_bytes = _link_units(topology, pats, index) * timed
    links = topology.links
    link_busy = link_bytes / links.bandwidth
    steps = steps[:, 0]
    stage_times = {k: float(v[0]) for k, v in stage_times.items()}
    total = float(total[0])
    latency_time = float(sum(v[0] for v in lat_stages.values()))
    time = total
    if schedule.pipelined and overlap and stage_times:
        time = float(_pipelined(stage_times, {k: float(v[0]) for k, v in lat_stages.items()},
                                float(link_busy.max(initial=0.0))))
    bottleneck_link = int(np.argmax(link_busy)) if len(link_busy) and link_busy.max() > 0 else -1
    if bottleneck_link >= 0:
        bottleneck = (f"{topology.link_label(bottleneck_link)}: busy "
                      f"{format_time(link_busy[bottleneck_link])}, "
                      f"{format_bytes(link_bytes[bottleneck_link])} in all")
    else:
        bottleneck = "none (no bytes move)"
    return Result(
        collective=schedule.collective, algorithm=schedule.algorithm,
        num_ranks=schedule.num_ranks, group_size=schedule.group_size, nbytes=int(nbytes),
        time=time, time_unoverlapped=total, step_times=steps, stage_times=stage_times,
        latency_time=latency_time, bandwidth_time=float(total - latency_time),
        link_bytes=link_bytes, link_busy=link_busy, bottleneck_link=bottleneck_link,
        bottleneck=bottleneck, topology=topology, timed_bytes=timed, note=split.note(),
        stage_latencies={k: float(v[0]) for k, v in lat_stages.items()},
        element_size=int(element_size),
    )


def _pipelined(stage_times, stage_latency, busiest_link):
    """Time of stages that stream chunks through each other.

    A chunk still pays every stage's latency on its way through, but the
    stages' bandwidth terms overlap, so the slowest stage sets the pace:
    ``sum(latency_s) + max(bandwidth_s)``; and no link can finish before it has
    carried all its bytes. With big messages this is the slower stage's time
    (the limit the seed post quotes); with tiny ones, the stages' latencies add.
    """
    lat = sum(stage_latency.values())
    bw = max(stage_times[k] - stage_latency.get(k, 0.0) for k in stage_times)
    return np.maximum(lat + bw, busiest_link)


def _timeline(schedule: Schedule, pats: list[Pattern], index: list[int],
              sizes: np.ndarray, overhead: float):
    """(total (S,), stage times {stage: (S,)}, step times (K, S)) for sizes (S,).

    Steps run one after another; within a stage, each lane (an independent
    sub-schedule) accumulates its own time and the stage lasts as long as its
    slowest lane.
    """
    S = len(sizes)
    per_pattern = [p.lane_times(sizes) for p in pats]
    if len(index) > _MANY_STEPS:
        return _timeline_grouped(schedule, per_pattern, index, S, overhead)
    step_times = np.zeros((len(index), S))
    acc: dict[str, dict[int, np.ndarray]] = {}
    for k, pi in enumerate(index):
        stage = schedule.steps[k].stage
        lanes = acc.setdefault(stage, {})
        times = per_pattern[pi]
        if not times:
            times = {0: np.zeros(S)}
        best = np.zeros(S)
        for lane, t in times.items():
            t = t + overhead
            lanes[lane] = lanes.get(lane, 0.0) + t
            best = np.maximum(best, t)
        step_times[k] = best
    stage_times = {stage: np.max(np.stack([np.broadcast_to(v, (S,)) for v in lanes.values()]), axis=0)
                   for stage, lanes in acc.items()}
    total = sum(stage_times.values()) if stage_times else np.zeros(S)
    return np.asarray(total, dtype=float), stage_times, step_times


#: Beyond this many steps, :func:`_timeline` adds each stage's steps by pattern
#: (a count times a step's time) instead of one by one: the same sums up to rounding.
_MANY_STEPS = 2048


def _timeline_grouped(schedule: Schedule, per_pattern, index, S: int, overhead: float):
    """:func:`_timeline` for long schedules: steps that share a stage and a pattern
    take the same time, so each lane's time in a stage is a sum over its patterns
    of (number of steps) x (one step's time)."""
    index = np.asarray(index, dtype=np.int64)
    names = [st.stage for st in schedule.steps]
    stage_ids = {n: i for i, n in enumerate(dict.fromkeys(names))}     # in order of first use
    sid = np.array([stage_ids[n] for n in names], dtype=np.int64)
    P = len(per_pattern)
    counts = np.bincount(sid * P + index, minlength=len(stage_ids) * P).reshape(len(stage_ids), P)
    # one step's time per pattern (its slowest lane), for the step table
    best = np.zeros((P, S))
    for p, times in enumerate(per_pattern):
        for t in (times or {0: np.zeros(S)}).values():
            best[p] = np.maximum(best[p], t + overhead)
    step_times = best[index]
    stage_times = {}
    for stage, i in stage_ids.items():
        lanes: dict[int, np.ndarray] = {}
        for p in np.nonzero(counts[i])[0].tolist():
            for lane, t in (per_pattern[p] or {0: np.zeros(S)}).items():
                lanes[lane] = lanes.get(lane, 0.0) + counts[i, p] * (t + overhead)
        stage_times[stage] = np.max(np.stack([np.broadcast_to(v, (S,)) for v in lanes.values()]),
                                    axis=0)
    total = sum(stage_times.values()) if stage_times else np.zeros(S)
    return np.asarray(total, dtype=float), stage_times, step_times


def _link_units(topology: Topology, pats: list[Pattern], index: list[int]) -> np.ndarray:
    """Fraction of V every link carries over the whole schedule."""
    out = np.zeros(len(topology.links))
    if not index:
        return out
    counts = np.bincount(np.asarray(index), minlength=len(pats))
    for p, c in zip(pats, counts):
        np.add.at(out, p.links, c * p.link_unit)
    return out


def timed_sizes(schedule: Schedule, sizes, element_size: int = 4) -> np.ndarray:
    """The array bytes :func:`simulate` times for each nccl-tests size (vectorised)."""
    try:
        sizes = np.asarray(sizes, dtype=float)
    except (TypeError, ValueError):
        raise CollectivesError(f"sizes must be numbers of bytes, got {sizes!r}") from None
    if sizes.ndim != 1 or not np.isfinite(sizes).all() or (sizes < 0).any():
        flat = sizes.ravel()
        bad = flat[~(np.isfinite(flat) & (flat >= 0))][:3].tolist()
        raise CollectivesError(f"sizes must be a list of sizes in bytes (>= 0), got {bad or sizes.tolist()}")
    elements = np.floor(np.floor(sizes) * schedule.array_bytes(1) / element_size)
    if schedule.weights is not None:
        return elements * element_size
    slots = schedule.num_slots
    return np.ceil(elements / slots) * slots * element_size


def simulate_sizes(schedule: Schedule, topology: Topology, sizes, *, placement=None,
                   overhead: float = 0.0, overlap: bool = True, element_size: int = 4) -> np.ndarray:
    """Times (s) for many sizes at once; routing happens once. Sizes as in :func:`simulate`."""
    _inputs(schedule, topology, element_size)
    overlap = checks.flag(overlap, "overlap")
    with np.errstate(over="ignore", invalid="ignore"):
        times = _simulate_sizes(schedule, topology, sizes, placement, overhead, overlap, element_size)
    _finite_times(times, "up to " + str(max(np.ravel(sizes), default=0)), topology)
    return times


def _simulate_sizes(schedule, topology, sizes, placement, overhead, overlap, element_size) -> np.ndarray:
    sizes = timed_sizes(schedule, sizes, element_size)
    overhead = _overhead(overhead)
    pats, index = patterns(schedule, topology, placement=placement, element_size=element_size)
    total, stages, _ = _timeline(schedule, pats, index, sizes, overhead)
    if not (schedule.pipelined and overlap) or not stages:
        return total
    _, lat_stages, _ = _timeline(schedule, pats, index, np.zeros(1), overhead)
    busy = (_link_units(topology, pats, index) / topology.links.bandwidth).max(initial=0.0)
    lat = sum(float(v[0]) for v in lat_stages.values())
    bw = np.max(np.stack([stages[k] - float(lat_stages[k][0]) for k in stages]), axis=0)
    return np.maximum(lat + bw, busy * sizes)


def step_link_loads(schedule: Schedule, topology: Topology, step: int, nbytes: float, *,
                    placement=None) -> np.ndarray:
    """Bytes on every link during one step (for per-step heatmaps)."""
    _inputs(schedule, topology, 4)
    step = checks.whole(step, "step", minimum=0)
    if step >= schedule.num_steps:
        raise CollectivesError(f"step must be 0..{schedule.num_steps - 1} for {schedule!r}, got {step}")
    nbytes = checks.nonnegative(nbytes, "nbytes")
    nodes = participant_nodes(schedule, topology, placement)
    p = _route_pattern(schedule, topology, schedule.steps[step].traffic, nodes, step, 4)
    out = np.zeros(len(topology.links))
    out[p.links] = p.link_unit * nbytes
    return out
