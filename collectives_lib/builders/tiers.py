"""Closed forms of rings on a GPU cluster's fat tree, tier by tier, at any size.

A ring's steps all repeat one traffic pattern, so the ideal link model times a
step by its slowest transfer: ``max over transfers (latency of its route + V x
the largest load / bandwidth of its links)``, and the ring takes that many
steps. This module gets that maximum without building the schedule, by
counting how many ring edges (transfers of one step) cross each tier of the
cluster (:class:`~collectives_lib.topology.GpuCluster`):

* **NVLink** inside a node: every GPU's NVLink to and from its NVSwitch.
* **NIC**: every GPU's link to and from the leaf of its rail.
* **leaf**: a leaf's uplink to its pod's spine, whose capacity is what the
  leaf's NICs can inject over ``oversubscription`` (a partly filled Scalable
  Unit has less).
* **spine** (three levels): a pod spine's uplink to the core, what its leaves'
  uplinks carry over ``core_oversubscription``.

Edges between two nodes of one Scalable Unit stay on their rail's leaf; only the
edges that cross a Scalable Unit boundary (and the ring's closing edge, which
may also change rail) climb to the spine, and those that cross a pod boundary
to the core. Only those edges are listed (at most ``GPUs per node`` per
boundary), so the cost is that of the fabric's boundaries, not of its GPUs.

Four patterns are timed this way: NCCL's multi-channel rings over every GPU
(``ring`` on a whole cluster), the rail rings over the nodes (``ring`` over the
node axis, and the first stage of ``hierarchical``), the ring or direct sends
inside each node (``ring`` over the gpu axis, the second stage of
``hierarchical``), and the exchange between twins on a rail (the hierarchical
all-to-all, whose pairs are counted per Scalable Unit and pod, not listed). A
reduce-scatter is its all-gather reversed (every edge turned round, which
swaps each link's up and down loads), and an all-reduce is the two one after
the other; pipelined stages (hierarchical) are combined as the simulator does
(:func:`collectives_lib.simulate._pipelined`): the stages' latencies add, the
slowest stage's bandwidth term sets the pace, and no link finishes before it
has carried its bytes. :func:`busiest_link` names the busiest link as the
simulator names its bottleneck. ``tests/test_tiers.py`` holds every form to the
simulator on clusters small enough to simulate.

Used wherever these schedules are too large to build (a 100,800-GPU cluster);
the README's limits paragraph says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..collective import collective as as_collective
from ..topology import GpuCluster
from .shapes import double_binary_tree, tree_levels

#: From this many transfers (per phase), NCCL's rings and trees over a whole cluster are timed by
#: their closed form even where they could be built (it is exact, and milliseconds).
FORMULA_PAST = 1 << 18

def past_formula(group, transfers: int | None, holds: str) -> str | None:
    """Why the tiers' closed form times an algorithm over a whole cluster whose schedule
    would hold ``transfers`` (its footprint), past :data:`FORMULA_PAST`; else None.
    ``holds`` says what holds them, with ``{n}`` and ``{transfers}`` to fill in."""
    if not (group.whole_cluster and applies(group.topology)) or transfers is None or \
            transfers < FORMULA_PAST:
        return None
    return (f"{holds.format(n=group.n, transfers=f'{transfers:,}')}; the closed form over the "
            f"cluster's tiers is exact")


#: Link tiers whose loads a step records (the up and down direction of each).
_TIERS = ("nvl", "nic", "leaf", "spine")


@dataclass(frozen=True)
class StepForm:
    """One step's time as a function of the array's bytes V: ``max(lat + V * unit)``
    over its transfers (for each distinct route latency, the largest seconds per byte), and the
    seconds per byte of V on every link it loads, by tier and direction (a scalar
    where every link of the tier carries the same)."""

    lat: np.ndarray
    unit: np.ndarray
    links: dict          # (tier, "up" | "down") -> seconds per byte of V on each link

    def times(self, V: np.ndarray) -> np.ndarray:
        if not len(self.lat):
            return np.zeros_like(V)
        return np.max(self.lat[None, :] + V[:, None] * self.unit[None, :], axis=1)

    @property
    def latency(self) -> float:
        return float(self.lat.max(initial=0.0))

    def reversed(self) -> "StepForm":
        """Every transfer turned round (the reduce-scatter of an all-gather)."""
        flip = {"up": "down", "down": "up"}
        return StepForm(self.lat, self.unit, {(t, flip[d]): v for (t, d), v in self.links.items()})


def _pairs(lat, unit) -> tuple[np.ndarray, np.ndarray]:
    lat, unit = np.asarray(lat, dtype=float), np.asarray(unit, dtype=float)
    if not len(lat):
        return lat, unit
    # a step takes max(lat + V unit): of the transfers sharing a latency only the
    # largest seconds per byte can be the maximum
    lats, inv = np.unique(lat, return_inverse=True)
    most = np.full(len(lats), -np.inf)
    np.maximum.at(most, inv, unit)
    return lats, most


class _Fabric:
    """The cluster's tiers as arrays: leaves (Scalable Unit x rail), their capacities
    (as :meth:`GpuCluster._build_links` sets them) and the pods above them."""

    def __init__(self, topo: GpuCluster):
        self.topo = topo
        M, G, R = topo.num_nodes, topo.gpus_per_node, topo.rails
        self.M, self.G, self.R, self.S = M, G, R, topo.num_sus
        self.n = M * G
        per_rail = np.bincount(np.arange(G) % R, minlength=R)          # GPUs of a node on each rail
        nodes_in_su = np.minimum(topo.nodes_per_su, M - np.arange(self.S) * topo.nodes_per_su)
        per_leaf = (nodes_in_su[:, None] * per_rail[None, :]).ravel()  # leaf id = su * R + rail
        self.leaf_cap = per_leaf * topo.nic_bandwidth / topo.oversubscription
        self.pods = topo.num_pods
        self.pod_of_leaf = np.arange(self.S * R) // R // topo.sus_per_pod
        if self.pods > 1:
            self.core_cap = (np.bincount(self.pod_of_leaf, weights=self.leaf_cap, minlength=self.pods)
                             / topo.core_oversubscription)

    def su(self, node):
        return np.asarray(node) // self.topo.nodes_per_su

    def leaf(self, node, gpu):
        return self.su(node) * self.R + np.asarray(gpu) % self.R

    def inter(self, src_node, src_gpu, dst_node, dst_gpu, frac: float, nic_up: float,
              nic_down: float, stays: bool) -> tuple[list, list, dict]:
        """Transfers between nodes: the ones that leave their leaf (``src_*``, ``dst_*``:
        one entry each, every one carrying ``frac`` of V), on top of NIC links that
        each carry ``nic_up`` / ``nic_down`` of V; ``stays``: some transfers between
        nodes stay on one leaf. Returns (latencies, units, link loads)."""
        t, W = self.topo, self.topo.nic_bandwidth
        lam = t.nic_latency
        u_nic = max(nic_up, nic_down) / W
        lat, unit = ([np.array([2 * lam])], [np.array([u_nic])]) if stays else ([], [])
        links = {("nic", "up"): nic_up / W, ("nic", "down"): nic_down / W}
        ls, ld = self.leaf(src_node, src_gpu), self.leaf(dst_node, dst_gpu)
        L = self.S * self.R
        up = np.bincount(ls, minlength=L) * frac / self.leaf_cap
        down = np.bincount(ld, minlength=L) * frac / self.leaf_cap
        links[("leaf", "up")], links[("leaf", "down")] = up, down
        if not len(ls):
            return _cat(lat), _cat(unit), links
        u = np.maximum(np.maximum(up[ls], down[ld]), u_nic)
        hops = np.full(len(ls), 4.0)
        if self.pods > 1:
            ps, pd = self.pod_of_leaf[ls], self.pod_of_leaf[ld]
            core = ps != pd
            sup = np.bincount(ps[core], minlength=self.pods) * frac / self.core_cap
            sdown = np.bincount(pd[core], minlength=self.pods) * frac / self.core_cap
            links[("spine", "up")], links[("spine", "down")] = sup, sdown
            u = np.where(core, np.maximum(u, np.maximum(sup[ps], sdown[pd])), u)
            hops = np.where(core, 6.0, 4.0)
        lat.append(hops * lam)          # a route's latency: one nic_latency per link
        unit.append(u)
        return _cat(lat), _cat(unit), links

    def nvlink(self, frac_up: float, frac_down: float) -> tuple[list, list, dict]:
        """Every GPU sends ``frac_up`` of V to peers in its node and receives ``frac_down``
        (each transfer GPU -> NVSwitch -> GPU, equal loads on every GPU)."""
        t = self.topo
        W = t.nvlink_bandwidth
        return (np.array([2 * t.nvlink_latency]), np.array([max(frac_up, frac_down) / W]),
                {("nvl", "up"): frac_up / W, ("nvl", "down"): frac_down / W})


def _cat(arrays) -> np.ndarray:
    return np.concatenate(arrays) if arrays else np.zeros(0)


def _form(*parts) -> StepForm:
    links: dict = {}
    for _, _, c in parts:
        links.update(c)
    lat, unit = _pairs(_cat([p[0] for p in parts]), _cat([p[1] for p in parts]))
    return StepForm(lat, unit, links)


@lru_cache(maxsize=16)       # a sweep asks once per size
def channel_ring_step(topo: GpuCluster) -> StepForm:
    """One step of NCCL's multi-channel rings over every GPU
    (:func:`~collectives_lib.builders.rings.multichannel_ring_all_gather`).

    With M > 1 nodes of G GPUs there are G channels; channel c enters node m on GPU
    ``(c - m) mod G`` and leaves it on the GPU before, which is where it enters node
    m + 1: over the channels every GPU sends G - 1 transfers over NVLink and one over
    its NIC per step, each ``V / (n G)``. The edge from node m to m + 1 stays on one
    rail; the closing edge (node M-1 to node 0) leaves GPU a for GPU ``(a + M) mod G``."""
    F = _Fabric(topo)
    M, G, n = F.M, F.G, F.n
    if n == 1:
        return _form()
    if M == 1:                       # one ring over the node's NVSwitch, V / G per edge
        return _form(F.nvlink(1.0 / G, 1.0 / G))
    frac = 1.0 / (n * G)
    parts = [F.nvlink((G - 1) * frac, (G - 1) * frac)] if G > 1 else []
    per_su = topo.nodes_per_su
    gpus = np.arange(G)
    # edges m -> m+1 that cross a Scalable Unit boundary: every exit GPU a, on its rail
    bounds = np.arange(per_su - 1, M - 1, per_su)
    src_node = np.repeat(bounds, G)
    src_gpu = np.tile(gpus, len(bounds))
    # the closing edge, node M-1 GPU a -> node 0 GPU (a + M) mod G
    close_dst = (gpus + M) % G
    close_cross = F.leaf(M - 1, gpus) != F.leaf(0, close_dst)
    sn = np.concatenate([src_node, np.full(int(close_cross.sum()), M - 1)])
    sg = np.concatenate([src_gpu, gpus[close_cross]])
    dn = np.concatenate([src_node + 1, np.zeros(int(close_cross.sum()), dtype=np.int64)])
    dg = np.concatenate([src_gpu, close_dst[close_cross]])
    stays = M - 1 > len(bounds) or bool((~close_cross).any())     # some edge stays on its leaf
    parts.append(F.inter(sn, sg, dn, dg, frac, frac, frac, stays))
    return _form(*parts)


@lru_cache(maxsize=16)       # a sweep asks once per size
def rail_ring_step(topo: GpuCluster, frac: float) -> StepForm:
    """One step of a ring over the nodes on every GPU index at once: GPU g of node m
    sends ``frac`` of V to GPU g of node m + 1 (mod M), all on rail ``g mod rails``
    (:func:`~collectives_lib.builders.rings.ring_all_gather` over the node axis, and
    the first stage of :func:`~collectives_lib.builders.hierarchical.hierarchical_all_gather`)."""
    F = _Fabric(topo)
    M, G = F.M, F.G
    if M == 1:
        return _form()
    gpus = np.arange(G)
    su = F.su(np.arange(M))
    nxt = (np.arange(M) + 1) % M
    cross = np.nonzero(su != su[nxt])[0]           # nodes whose edge leaves the Scalable Unit
    sn = np.repeat(cross, G)
    sg = np.tile(gpus, len(cross))
    dn = np.repeat(nxt[cross], G)
    stays = len(cross) < M
    return _form(F.inter(sn, sg, dn, sg, frac, frac, frac, stays))


@lru_cache(maxsize=16)       # a sweep asks once per size
def node_ring_step(topo: GpuCluster, frac: float, peers: int = 1) -> StepForm:
    """One step inside every node at once: every GPU sends ``frac`` of V to each of
    ``peers`` GPUs of its node (1: a ring; G - 1: every peer at once)."""
    F = _Fabric(topo)
    if F.G == 1:
        return _form()
    return _form(F.nvlink(peers * frac, peers * frac))


def _stage_times(stages: dict, V: np.ndarray) -> tuple[dict, dict]:
    """Each stage's time at every V, and at V = 0 (its latency)."""
    zero = np.zeros(1)
    times = {k: sum(c * f.times(V) for c, f in parts) for k, parts in stages.items()}
    lats = {k: float(sum(c * f.times(zero)[0] for c, f in parts)) for k, parts in stages.items()}
    return times, lats


def _busiest(stages: dict) -> float:
    """Seconds per byte of V on the busiest link over the whole schedule."""
    total: dict = {}
    for parts in stages.values():
        for c, f in parts:
            for key, v in f.links.items():
                total[key] = total.get(key, 0.0) + c * np.asarray(v, dtype=float)
    return max((float(np.max(v, initial=0.0)) for v in total.values()), default=0.0)


def timed(stages: dict, V, *, pipelined: bool) -> np.ndarray:
    """The time of a schedule whose stages are ``{label: [(steps, StepForm), ...]}``
    at every array size in ``V``: the stages one after another, or (``pipelined``) as
    :func:`collectives_lib.simulate._pipelined` streams them."""
    V = np.atleast_1d(np.asarray(V, dtype=float))
    stages = {k: [(c, f) for c, f in parts if c and len(f.lat)] for k, parts in stages.items()}
    stages = {k: v for k, v in stages.items() if v}
    if not stages:
        return np.zeros_like(V)
    times, lats = _stage_times(stages, V)
    total = sum(times.values())
    if not pipelined:
        return total
    lat = sum(lats.values())
    bw = np.max(np.stack([times[k] - lats[k] for k in times]), axis=0)
    return np.maximum(lat + bw, _busiest(stages) * V)


def _time(form: tuple[dict, bool], V):
    """The time at ``V`` bytes (a float), or at every size of an array ``V``."""
    stages, pipelined = form
    out = timed(stages, V, pipelined=pipelined)
    return float(out[0]) if np.ndim(V) == 0 else out


_LINKS = {("nvl", "up"): "every GPU's NVLink to its NVSwitch", ("nvl", "down"): "every NVSwitch's NVLink to a GPU",
          ("nic", "up"): "every GPU's NIC link to its leaf", ("nic", "down"): "every leaf's link to a GPU's NIC"}


def busiest_link(topo: GpuCluster, form: tuple[dict, bool], V: float) -> str:
    """The busiest link over the whole schedule at ``V`` bytes, as the simulator names its
    bottleneck: where it is, how long it is busy and the bytes it carries."""
    from ..units import format_bytes, format_time
    stages = form[0]
    total: dict = {}
    for parts in stages.values():
        for c, f in parts:
            for key, v in f.links.items():
                total[key] = total.get(key, 0.0) + c * np.asarray(v, dtype=float)
    total = {k: v for k, v in total.items() if np.max(v, initial=0.0) > 0}
    if not total or V <= 0:
        return "none (no bytes move)"
    order = [(t, d) for t in _TIERS for d in ("up", "down") if (t, d) in total]     # the links' order
    key = max(order, key=lambda k: float(np.max(total[k])))
    i = int(np.argmax(total[key]))
    busy = float(np.max(total[key])) * V
    F = _Fabric(topo)
    if key[0] == "leaf":
        what = f"SU {i // F.R} leaf {i % F.R} {'up-link to' if key[1] == 'up' else 'down-link from'} the spine"
        bw = F.leaf_cap[i]
    elif key[0] == "spine":
        what = f"pod {i} spine {'up-link to' if key[1] == 'up' else 'down-link from'} the core"
        bw = F.core_cap[i]
    else:
        what = _LINKS[key]
        bw = topo.nvlink_bandwidth if key[0] == "nvl" else topo.nic_bandwidth
    return f"{what}: busy {format_time(busy)}, {format_bytes(busy * bw)} in all (closed form)"


def _runs(collective) -> tuple[bool, bool]:
    """(reduce-scatter phase, all-gather phase) of a collective these forms time: a
    reduction runs the reduce-scatter, a collective whose result every rank holds runs
    the all-gather, and the all-reduce (two passes) runs both."""
    c = as_collective(collective)
    return c.reduces, not c.reduces or c.passes == 2


def _phases(step: StepForm, count: int, collective: str, ag: str, rs: str) -> dict:
    """A line pattern run as all-gather, reduce-scatter (reversed) or all-reduce (both)."""
    scatter, gather = _runs(collective)
    return ({rs: [(count, step.reversed())]} if scatter else {}) | ({ag: [(count, step)]} if gather else {})


def channel_ring_stages(topo: GpuCluster, collective: str) -> tuple[dict, bool]:
    """``ring`` over every GPU of ``topo`` (NCCL's channels): ``n - 1`` steps of
    :func:`channel_ring_step` per phase; (stages, pipelined) for :func:`timed`."""
    n = topo.num_ranks
    return _phases(channel_ring_step(topo), n - 1, collective, "all-gather", "reduce-scatter"), False


def channel_ring_time(topo: GpuCluster, collective: str, V: float) -> float:
    return _time(channel_ring_stages(topo, collective), V)


def node_axis_ring_stages(topo: GpuCluster, collective: str) -> tuple[dict, bool]:
    """``ring`` over the node axis (one ring per GPU index, V each): ``M - 1`` steps of
    :func:`rail_ring_step` with ``V / M`` per edge."""
    M = topo.num_nodes
    return _phases(rail_ring_step(topo, 1.0 / M), M - 1, collective, "all-gather", "reduce-scatter"), False


def node_axis_ring_time(topo: GpuCluster, collective: str, V: float) -> float:
    return _time(node_axis_ring_stages(topo, collective), V)


def gpu_axis_ring_stages(topo: GpuCluster, collective: str) -> tuple[dict, bool]:
    """``ring`` over the gpu axis (one ring per node, V each): ``G - 1`` steps of V / G."""
    G = topo.gpus_per_node
    return _phases(node_ring_step(topo, 1.0 / G), G - 1, collective, "all-gather", "reduce-scatter"), False


def gpu_axis_ring_time(topo: GpuCluster, collective: str, V: float) -> float:
    return _time(gpu_axis_ring_stages(topo, collective), V)


#: The stage labels of :func:`~collectives_lib.builders.hierarchical.hierarchical_all_gather`.
INTER, INTRA = "inter-node (InfiniBand)", "intra-node (NVLink)"


def hierarchical_stages(topo: GpuCluster, collective: str, intra: str = "ring") -> tuple[dict, bool]:
    """``hierarchical`` over every GPU: rail rings across the nodes (``M - 1`` steps of
    ``V / n`` per edge), then inside each node a ring (``G - 1`` steps of ``V / G``) or
    direct sends (one step, ``V / G`` to each peer); the stages stream. Its
    reduce-scatter runs the stages reversed, and the all-reduce both (each stage's
    label collects its steps of both phases, as in the schedule)."""
    M, G = topo.num_nodes, topo.gpus_per_node
    ib = rail_ring_step(topo, 1.0 / (M * G))
    nvl = node_ring_step(topo, 1.0 / G, peers=G - 1) if intra == "direct" else node_ring_step(topo, 1.0 / G)
    nvl_steps = (1 if G > 1 else 0) if intra == "direct" else G - 1
    stages: dict = {INTER: [], INTRA: []}
    scatter, gather = _runs(collective)
    if scatter:
        stages[INTER].append((M - 1, ib.reversed()))
        stages[INTRA].append((nvl_steps, nvl.reversed()))
    if gather:
        stages[INTER].append((M - 1, ib))
        stages[INTRA].append((nvl_steps, nvl))
    return stages, True


def hierarchical_time(topo: GpuCluster, collective: str, V: float, intra: str = "ring") -> float:
    return _time(hierarchical_stages(topo, collective, intra), V)


def applies(topo) -> bool:
    """The tier closed forms hold on ``topo``: a GPU cluster whose links are the ones its
    figures make (not one with some ranks' links slowed, ``book.scaling.slowed``)."""
    return isinstance(topo, GpuCluster) and not topo.__dict__.get("slowdown")


def ring_stages(topo: GpuCluster, axes: tuple[int, ...], collective: str) -> tuple[dict, bool]:
    """``ring`` on a GPU cluster over ``axes`` (its mesh axes: (0, 1) every GPU, (0,) the
    node axis, (1,) the gpu axis)."""
    if tuple(axes) == (0, 1):
        return channel_ring_stages(topo, collective)
    if tuple(axes) == (0,):
        return node_axis_ring_stages(topo, collective)
    return gpu_axis_ring_stages(topo, collective)


def ring_time(topo: GpuCluster, axes: tuple[int, ...], collective: str, V: float) -> float:
    return _time(ring_stages(topo, axes, collective), V)


@lru_cache(maxsize=16)       # a sweep asks once per size
def rail_exchange_step(topo: GpuCluster, frac: float) -> StepForm:
    """One step in which GPU g of every node sends ``frac`` of V to GPU g of every other
    node (the second stage of the hierarchical all-to-all). Every GPU's NIC carries
    ``(M - 1) frac`` each way; a leaf's uplink ``GPUs on the leaf x nodes outside its
    Scalable Unit x frac``, a pod's ``GPUs in the pod x nodes outside it x frac``. The
    transfers of one kind of route (inside a leaf, through a spine, through the core)
    share a latency, so each kind's slowest is its most loaded link."""
    F = _Fabric(topo)
    M, G, R, S = F.M, F.G, F.R, F.S
    if M == 1:
        return _form()
    t, W, lam = topo, topo.nic_bandwidth, topo.nic_latency
    per_su = np.minimum(t.nodes_per_su, M - np.arange(S) * t.nodes_per_su)       # nodes in each SU
    per_rail = np.bincount(np.arange(G) % R, minlength=R)
    on_leaf = (per_su[:, None] * per_rail[None, :]).ravel()
    leaving = np.repeat(M - per_su, R)                   # nodes outside each leaf's SU
    u_leaf = on_leaf * leaving * frac / F.leaf_cap       # up = down: every pair both ways
    u_nic = (M - 1) * frac / W
    links = {("nic", "up"): u_nic, ("nic", "down"): u_nic, ("leaf", "up"): u_leaf, ("leaf", "down"): u_leaf}
    lat, unit = [], []
    if per_su.max() > 1:                                 # two nodes of one SU: inside the leaf
        lat.append(2 * lam)
        unit.append(u_nic)
    sus_in_pod = np.bincount(np.arange(S) // t.sus_per_pod, minlength=F.pods)
    pod_of_su = np.arange(S) // t.sus_per_pod
    shared = np.repeat(sus_in_pod[pod_of_su] > 1, R)     # leaves with another SU in their pod
    if shared.any():
        lat.append(4 * lam)
        unit.append(max(u_nic, float(u_leaf[shared].max())))
    if F.pods > 1:
        per_pod = np.bincount(pod_of_su, weights=per_su, minlength=F.pods)
        u_spine = G * per_pod * (M - per_pod) * frac / F.core_cap
        links[("spine", "up")], links[("spine", "down")] = u_spine, u_spine
        lat.append(6 * lam)
        unit.append(max(u_nic, float(u_leaf.max()), float(u_spine.max())))
    lat, unit = _pairs(lat, unit)
    return StepForm(lat, unit, links)


def hierarchical_all_to_all_stages(topo: GpuCluster) -> tuple[dict, bool]:
    """``hierarchical`` all-to-all over every GPU, V the sum of every rank's buffer:
    inside each node every GPU sends ``M V / n^2`` to each of its G - 1 peers, then
    every GPU sends ``G V / n^2`` to its twin in each other node; both one step,
    streaming (:func:`~collectives_lib.builders.hierarchical.hierarchical_all_to_all`)."""
    M, G = topo.num_nodes, topo.gpus_per_node
    n = M * G
    inner = node_ring_step(topo, M / n**2, peers=G - 1)
    outer = rail_exchange_step(topo, G / n**2)
    return {INTRA: [(1 if G > 1 else 0, inner)], INTER: [(1 if M > 1 else 0, outer)]}, True


def hierarchical_all_to_all_time(topo: GpuCluster, V: float) -> float:
    return _time(hierarchical_all_to_all_stages(topo), V)


# ---------------------------------------------------------------------------
# the pipelined chain (broadcast and reduce) over every GPU
# ---------------------------------------------------------------------------

def _chain_edges(F: _Fabric, root: int, reduce: bool):
    """The chain's edges between nodes, in order: their positions, (node, gpu) of each
    end, each end's leaf; and whether any edge stays in a node.
    :func:`~collectives_lib.builders.trees.chain_broadcast` runs rank ``(root + e) mod
    n`` -> ``(root + e + 1) mod n`` at edge ``e``; a reduce runs every edge turned round."""
    n, G = F.n, F.G
    e = np.arange(n - 1)
    src, dst = (e + root) % n, (e + root + 1) % n
    cross = np.nonzero(src // G != dst // G)[0]
    s, d = src[cross], dst[cross]
    if reduce:
        s, d = d, s
    ends = (s // G, s % G, d // G, d % G)
    return cross, ends, F.leaf(ends[0], ends[1]), F.leaf(ends[2], ends[3]), len(cross) < n - 1


#: The most (distinct steps x edges between nodes in each) the chain's closed form
#: walks through; past it (chunks far beyond the GPUs of a node on a large cluster)
#: the chain has no closed form here and is refused as too large to build.
CHAIN_WORK = 20_000_000


def chain_work(topo: GpuCluster, chunks: int) -> int:
    """About how many (step, edge between nodes) pairs :func:`chain_stages` visits."""
    n, G, K = topo.num_ranks, topo.gpus_per_node, int(chunks)
    steps = min(K + n - 2, 2 * (n - 1) + 1)
    return steps * (min(K, n - 1) // G + 2)


@lru_cache(maxsize=16)
def chain_stages(topo: GpuCluster, collective: str, root: int, chunks: int) -> tuple[dict, bool]:
    """``chain`` broadcast (or reduce) over every GPU: ``K + n - 2`` steps, step ``s``
    running edges ``s - K + 1 .. s`` of the chain, each carrying ``V / K``.

    Every rank sends at most once and receives at most once in a step, so a GPU's
    NVLink and NIC each carry one chunk; the step's time is its slowest transfer,
    which depends only on whether an edge inside a node runs (NVLink) and on which
    edges between nodes run (their leaves, Scalable Units and pods share uplinks).
    Steps are grouped by that run of edges between nodes, so the cost is the
    number of nodes, not of steps."""
    n, K = topo.num_ranks, int(chunks)
    if n == 1:
        return {}, False
    F = _Fabric(topo)
    frac = 1.0 / K
    reduce = as_collective(collective).reduces
    pos, (sn, sg, dn, dg), ls, ld, _ = _chain_edges(F, root, reduce)
    leaves = ls != ld                                        # the edges that leave their leaf
    # step s runs edges s-K+1 .. s; past the fill every step runs all of them (K > n-1),
    # so the steps are counted by their window clipped to the chain, not listed
    if K <= n - 1:               # every step's window differs: list them
        steps = np.arange(K + n - 2)
        first, last = np.maximum(steps - K + 1, 0), np.minimum(steps, n - 2)
        weight = np.ones(len(steps), dtype=np.int64)
    else:                        # growing, K - n + 1 steps running every edge, shrinking
        grow, shrink = np.arange(n - 1), np.arange(K, K + n - 2)
        first = np.concatenate([np.zeros(n - 1, dtype=np.int64), [0], shrink - K + 1])
        last = np.concatenate([grow, [n - 2], np.full(n - 2, n - 2)])
        weight = np.concatenate([np.ones(n - 1, dtype=np.int64), [K - n + 1], np.ones(n - 2, dtype=np.int64)])
    first, last = np.maximum(first, 0), np.minimum(last, n - 2)
    lo = np.searchsorted(pos, first)                         # the run of edges between nodes
    hi = np.searchsorted(pos, last, side="right")
    nvl = (last - first + 1) > (hi - lo)                     # some edge inside a node runs
    keys, inverse = np.unique(np.stack([lo, hi, nvl]), axis=1, return_inverse=True)
    counts = np.bincount(inverse.ravel(), weights=weight, minlength=keys.shape[1]).astype(np.int64)
    nvl_part = F.nvlink(frac, frac)
    forms: dict = {}         # a run's time depends on the leaves it leaves and enters, not where it is
    counted: dict = {}
    for (a, b, v), c in zip(keys.T, counts):
        go = np.nonzero(leaves[a:b])[0] + a
        key = (bool(v), b > a and bool((~leaves[a:b]).any()), ls[go].tobytes(), ld[go].tobytes())
        if key not in forms:
            inter = [F.inter(sn[go], sg[go], dn[go], dg[go], frac, frac, frac, key[1])] if b > a else []
            forms[key] = _form(*([nvl_part] if key[0] else []), *inter)
        counted[key] = counted.get(key, 0) + int(c)
    parts = [(c, forms[k]) for k, c in counted.items()]
    stage = "reduce" if reduce else "broadcast"
    return {stage: parts}, False


def chain_time(topo: GpuCluster, collective: str, V: float, root: int, chunks: int) -> float:
    return _time(chain_stages(topo, collective, root, chunks), V)


def chain_busiest(topo: GpuCluster, collective: str, V: float, root: int) -> str:
    """The chain's busiest link: every link it uses carries V (the array passes each
    edge once), a leaf's or pod's uplink V for every edge between nodes through it."""
    F = _Fabric(topo)
    pos, (sn, sg, dn, dg), ls, ld, intra = _chain_edges(F, root, as_collective(collective).reduces)
    leaves = ls != ld
    go = np.nonzero(leaves)[0]
    total = _form(*([F.nvlink(1.0, 1.0)] if intra and F.G > 1 else []),
                  *([F.inter(sn[go], sg[go], dn[go], dg[go], 1.0, 1.0, 1.0, bool((~leaves).any()))]
                    if len(pos) else []))
    return busiest_link(topo, ({"chain": [(1, total)]}, False), V)


# ---------------------------------------------------------------------------
# NCCL's tree all-reduce over every GPU
# ---------------------------------------------------------------------------

def _node_trees(M: int):
    """NCCL's two trees over the nodes: per tree (parent, height, depth) as arrays
    over the nodes, and the tree's height."""
    out = []
    for parent in double_binary_tree(M):
        height, depth = tree_levels(parent)
        out.append((parent, height, depth, int(height[parent < 0][0])))
    return out


def _windows(K: int, last: int) -> dict:
    """``{(first, last offset): number of steps}`` of a pipeline whose step s runs the
    offsets ``s-K+1 .. s`` of ``0 .. last``: steps whose window, clipped to the offsets
    there are, is the same (all of a long pipeline's middle) are counted, not listed."""
    if K <= last + 1:
        return {(max(s - K + 1, 0), min(s, last)): 1 for s in range(last + K)}
    windows = {(0, s): 1 for s in range(last)}     # growing, every offset, shrinking
    windows[(0, last)] = K - last
    windows.update({(lo, last): 1 for lo in range(1, last + 1)})
    return windows


def _tree_edges(F: _Fabric, trees, c0: int) -> dict:
    """The node-tree edges (child, parent) of both trees, the offsets of their steps up
    and down (``c0``: the chain below a node's head), whether each leaves its Scalable
    Unit, its route's latency, and the nodes' SUs and pods and the rails' GPUs."""
    M, G, R = F.M, F.G, F.R
    nodes = np.arange(M)
    su = F.su(nodes)
    per_rail = np.bincount(np.arange(G) % R, minlength=R).astype(float)
    child = np.concatenate([nodes[p >= 0] for p, *_ in trees])
    par = np.concatenate([p[p >= 0] for p, *_ in trees])
    cross = su[child] != su[par]
    pod = F.pod_of_leaf[su * R] if F.pods > 1 else np.zeros(M, dtype=np.int64)
    hops = np.where(pod[child] != pod[par], 6.0, np.where(cross, 4.0, 2.0)) * F.topo.nic_latency
    return dict(child=child, par=par, cross=cross, hops=hops, su=su, pod=pod, per_rail=per_rail,
                rails=np.nonzero(per_rail)[0],
                up_at=np.concatenate([c0 + h[p >= 0] for p, h, *_ in trees]),
                down_at=np.concatenate([c0 + H + d[p[p >= 0]] for p, _, d, H in trees]))


def _tree_network_step(F: _Fabric, edges: dict, on, weight: float, frac: float,
                       total: dict) -> tuple[list, list]:
    """One window of :func:`tree_stages` between the nodes: the (latency, seconds per byte)
    of every node-tree edge it runs, each over its NICs, leaves and pods, and what those
    links carry added to ``total`` (``weight``: steps in the window x ``frac``)."""
    M, G, R, W = F.M, F.G, F.R, F.topo.nic_bandwidth
    child, par, cross, hops = edges["child"], edges["par"], edges["cross"], edges["hops"]
    su, pod, per_rail = edges["su"], edges["pod"], edges["per_rail"]
    lat, unit = [], []
    # NICs: each node's head sends up and down its node-tree edges
    a_up, a_down = on(edges["up_at"]), on(edges["down_at"])
    nic_up = (np.bincount(child[a_up], minlength=M) + np.bincount(par[a_down], minlength=M)).astype(float)
    nic_down = (np.bincount(par[a_up], minlength=M) + np.bincount(child[a_down], minlength=M)).astype(float)
    total[("nic", "up")] += nic_up * weight / W
    total[("nic", "down")] += nic_down * weight / W
    src = np.concatenate([child[a_up], par[a_down]])
    dst = np.concatenate([par[a_up], child[a_down]])
    cr = np.concatenate([cross[a_up], cross[a_down]])
    hp = np.concatenate([hops[a_up], hops[a_down]])
    if len(src):
        u = np.maximum(nic_up[src], nic_down[dst]) / W
        lat.append(hp[~cr])
        unit.append(u[~cr] * frac)
        if cr.any():
            s_su, d_su = su[src[cr]], su[dst[cr]]
            out = np.bincount(s_su, minlength=F.S).astype(float)
            into = np.bincount(d_su, minlength=F.S).astype(float)
            uc = u[cr]
            if F.pods > 1:             # a pod's uplink carries every rail's channels
                ps, pd = pod[src[cr]], pod[dst[cr]]
                core = ps != pd
                cu = np.bincount(ps[core], minlength=F.pods) * G / F.core_cap
                cd = np.bincount(pd[core], minlength=F.pods) * G / F.core_cap
                total[("spine", "up")] += cu * weight
                total[("spine", "down")] += cd * weight
                uc = np.where(core, np.maximum(uc, np.maximum(cu[ps], cd[pd])), uc)
            for r in edges["rails"]:            # each rail's leaf carries its GPUs' channels
                ids = np.arange(F.S) * R + r
                leaf_up = out * per_rail[r] / F.leaf_cap[ids]
                leaf_down = into * per_rail[r] / F.leaf_cap[ids]
                total[("leaf", "up")][ids] += leaf_up * weight
                total[("leaf", "down")][ids] += leaf_down * weight
                lat.append(hp[cr])
                unit.append(np.maximum(uc, np.maximum(leaf_up[s_su], leaf_down[d_su])) * frac)
    return lat, unit


@lru_cache(maxsize=16)
def tree_stages(topo: GpuCluster, chunks: int, chain: bool = True) -> tuple[dict, bool]:
    """``tree`` all-reduce over every GPU of a cluster of two or more nodes
    (:func:`~collectives_lib.builders.trees.cluster_trees` run by
    :func:`~collectives_lib.builders.trees.pipelined_tree_all_reduce`), step by step.

    ``P = 2G`` trees (channel c, node tree t) each carry ``V / (P K)`` per transfer.
    In channel c node m's head is GPU c and the node's GPUs hang below it in a chain,
    so the GPU at chain position j >= 1 has height ``G-1-j`` and depth ``d_t(m) + j``,
    and the head height ``G-1+h_t(m)`` (``h_t``, ``d_t``: the node's height and depth
    in tree t); up-transfers run at step ``height(child) + k``, down-transfers at
    ``H_t + depth(parent) + k`` (chunk k, ``H_t = G-1+h_t(root)``). Over the G
    channels every chain position falls on every GPU once, so all GPUs of a node
    carry the same NVLink loads, which depend on the node only through its depths;
    the NIC of GPU c carries channel c's edges between node heads, so every NIC of a
    node carries the same; a leaf's uplink carries, for each active node-tree edge
    leaving its Scalable Unit, one transfer per GPU on its rail. A step's time is
    its slowest transfer's route latency plus its bytes times the most loaded link
    on its route, as the simulator times it; the cost is (steps x nodes x rails).

    ``chain=False``: the trees between nodes alone, GPU g of every node on the trees
    of rail g (the middle stage of ``nvls_tree``): no chain inside the nodes, so the
    node heights and depths are the ranks'."""
    F = _Fabric(topo)
    M, G, R, K = F.M, F.G, F.R, int(chunks)
    frac = 1.0 / (2 * G * K)
    trees = _node_trees(M)
    Wn, lamn = topo.nvlink_bandwidth, topo.nvlink_latency
    edges = _tree_edges(F, trees, G - 1 if chain else 0)
    last = max(int(max(edges["up_at"].max(initial=0), edges["down_at"].max(initial=0))),
               max((G - 1 + H + int(d.max()) + G - 2) if chain and G > 1 else 0     # the last
                   for _, _, d, H in trees))                                     # step's offset
    steps = []
    L = F.S * R
    total = {("nvl", "up"): np.zeros(M), ("nvl", "down"): np.zeros(M), ("nic", "up"): np.zeros(M),
             ("nic", "down"): np.zeros(M), ("leaf", "up"): np.zeros(L), ("leaf", "down"): np.zeros(L)}
    if F.pods > 1:
        total[("spine", "up")], total[("spine", "down")] = np.zeros(F.pods), np.zeros(F.pods)
    # step s runs the offsets s-K+1 .. s: steps whose window, clipped to the offsets
    # there are, is the same (all of a long pipeline's middle) take the same time
    windows = _windows(K, last)
    j = np.arange(G)                             # chain positions in a node
    inside = chain and G > 1
    for (lo, hi), c in windows.items():
        def on(at, lo=lo, hi=hi):
            return (at >= lo) & (at <= hi)
        # NVLink: chain positions j = 1..G-1 send up at G-1-j; j = 0..G-2 down at H + d + j
        up_chain = on(G - 1 - j[1:]).sum() * 2 if inside else 0           # both trees, every node
        recv_chain = on(G - 2 - j[:-1]).sum() * 2 if inside else 0
        nvl_up = np.full(M, float(up_chain))
        nvl_down = np.full(M, float(recv_chain))
        for _, _, d, H in trees:
            if inside:
                nvl_up += on(G - 1 + H + d[:, None] + j[None, :-1]).sum(axis=1)
                nvl_down += on(G - 1 + H + d[:, None] + j[None, 1:] - 1).sum(axis=1)
        lat, unit = [], []
        total[("nvl", "up")] += nvl_up * c * frac / Wn
        total[("nvl", "down")] += nvl_down * c * frac / Wn
        busy = np.maximum(nvl_up, nvl_down)
        if busy.max(initial=0) > 0:
            u = np.unique(busy[busy > 0])
            lat.append(np.full(len(u), 2 * lamn))
            unit.append(u * frac / Wn)
        more_lat, more_unit = _tree_network_step(F, edges, on, c * frac, frac, total)
        lat += more_lat
        unit += more_unit
        lt, ut = _pairs(_cat(lat), _cat(unit))
        steps.append((c, StepForm(lt, ut, {})))
    if steps:      # what every link carries over the whole schedule, for busiest_link
        c0, first = steps[0]
        steps[0] = (c0, StepForm(first.lat, first.unit, {k: v / c0 for k, v in total.items()}))
    return {"tree": steps}, False


def tree_time(topo: GpuCluster, V: float, chunks: int) -> float:
    return _time(tree_stages(topo, chunks), V)


def tree_busiest(topo: GpuCluster, V: float, chunks: int) -> str:
    return busiest_link(topo, tree_stages(topo, chunks), V)


@lru_cache(maxsize=16)
def nvls_tree_stages(topo: GpuCluster, chunks: int) -> tuple[dict, bool]:
    """``nvls_tree`` all-reduce over a cluster of NVLS nodes
    (:func:`~collectives_lib.builders.hierarchical.nvls_tree_all_reduce`), its five
    stages streaming. Inside every node alike: each GPU's NVLink carries its array up
    into the NVSwitch (whose adders need ``G / 4 / rate`` seconds per byte, float32),
    then its slice ``V / G`` down; after the trees, its slice up into the multicast
    group and every slice down (``V``). Each of those steps pays one NVLink and the
    switch's participant latency. Between them, the trees of every rail
    (:func:`tree_stages` with ``chain=False``)."""
    G, Wn = topo.gpus_per_node, topo.nvlink_bandwidth
    crossing = topo.nvlink_latency + topo.agent_latency(topo.nvswitch_node(0))
    adders = G / 4 / topo.reduce_flops if topo.reduce_flops else 0.0

    def step(unit: float, link: str, extra: float = 0.0) -> StepForm:
        lat, per = [crossing], [unit]
        if extra:
            lat, per = [crossing, 0.0], [unit, extra]
        lt, ut = _pairs(lat, per)
        return StepForm(lt, ut, {("nvl", link): unit})
    stages = {"NVLS load-reduce": [(1, step(1.0 / Wn, "up", adders))],
              "reduced slice": [(1, step(1.0 / (G * Wn), "down"))],
              "tree between nodes": tree_stages(topo, chunks, chain=False)[0]["tree"],
              "store": [(1, step(1.0 / (G * Wn), "up"))],
              "multicast": [(1, step(1.0 / Wn, "down"))]}
    return stages, True


def nvls_tree_time(topo: GpuCluster, V: float, chunks: int) -> float:
    return _time(nvls_tree_stages(topo, chunks), V)


def nvls_tree_busiest(topo: GpuCluster, V: float, chunks: int) -> str:
    return busiest_link(topo, nvls_tree_stages(topo, chunks), V)
