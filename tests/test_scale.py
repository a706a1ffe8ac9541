"""The largest systems (issue 15): fabrics beyond one SuperPOD, schedules too large to
build, formulas in their place, and the fast paths that must equal the slow ones.
(Speed is measured in benchmarks/bench_scale.py, not here.)"""
import numpy as np
import pytest

import collectives_lib as cl
import importlib
from collectives_lib import bounds, costs
from collectives_lib.models import sweep
from collectives_lib.topology import TpuSystem
from collectives_lib.builders import group_for, registry
from collectives_lib.units import MAX_SWEEP_ROWS, sweep_sizes
from collectives_lib.errors import CollectivesError
from collectives_lib.topology import parse_topology

sim = importlib.import_module("collectives_lib.simulate")   # the module (cl.simulate is the function)

IB = 0.675e-6          # one InfiniBand link's latency (hardware.py: _IB_LINK)


# ---------------------------------------------------------------------------
# A three-level fat tree
# ---------------------------------------------------------------------------

def three_level(core=1.0):
    """8 DGX H100 in 4 Scalable Units of 2 nodes, 2 Scalable Units per pod: 2 pods."""
    return cl.GpuCluster("dgx-h100", 8, nodes_per_su=2, sus_per_pod=2, core_oversubscription=core)


def test_three_level_structure_counts():
    t = three_level()
    n, m, leaves = 64, 8, 4 * 8
    assert (t.num_sus, t.num_pods, t.num_leaves) == (4, 2, leaves)
    assert t.num_vertices == n + m + leaves + 2 + 1                 # two spines and the core
    assert len(t.links) == 4 * n + 2 * leaves + 2 * 2                # GPU links, leaf and spine uplinks
    assert t.node_label(t.pod_spine_node(1)) == "pod 1 spine" and t.node_label(t.core_node) == "core"
    assert t.agent_node("core") == t.core_node and t.agent_node("spine1") == t.pod_spine_node(1)
    # a spine's uplink carries what its 16 leaves' uplinks do (2 nodes x 50 GB/s each)
    up = [i for i in range(len(t.links)) if t.links.dst[i] == t.core_node]
    assert t.links.bandwidth[up].tolist() == [16 * 2 * 50e9] * 2


def test_a_message_between_pods_climbs_to_the_core_by_hand():
    t = three_level()
    # GPU 0 of node 0 (pod 0) to GPU 0 of node 4 (pod 1): GPU-leaf-spine-core-spine-leaf-GPU,
    # six InfiniBand links, the NIC the narrowest
    assert cl.time_flows(t, [(0, 32, 1e9)]).time == pytest.approx(6 * IB + 1e9 / 50e9, rel=1e-12)
    # inside a pod, between Scalable Units: no core, four links
    assert cl.time_flows(t, [(0, 16, 1e9)]).time == pytest.approx(4 * IB + 1e9 / 50e9, rel=1e-12)


def test_core_oversubscription_slows_what_crosses_it():
    # the eight GPUs of node 0 each send 1 GB to node 4: 8 GB over pod 0's uplink of
    # 1.6 TB/s / 8 = 200 GB/s, 0.04 s; at 1:1 each NIC's 50 GB/s sets 0.02 s
    flows = [(g, 32 + g, 1e9) for g in range(8)]
    assert cl.time_flows(three_level(8), flows).time == pytest.approx(6 * IB + 8e9 / 200e9, rel=1e-12)
    assert cl.time_flows(three_level(1), flows).time == pytest.approx(6 * IB + 1e9 / 50e9, rel=1e-12)


def test_the_bound_knows_the_pods():
    b = cl.lower_bound("all_reduce", three_level(8), 2**30)
    # two pods must exchange V (2 (m-1)/m with m = 2) over 200 GB/s
    assert b.bandwidth_time == pytest.approx(2**30 / 200e9, rel=1e-12)
    assert "each pod" in b.bandwidth_reason


def test_one_pod_is_the_two_level_fabric():
    two = cl.GpuCluster("dgx-h100", 8, nodes_per_su=2)
    one_pod = cl.GpuCluster("dgx-h100", 8, nodes_per_su=2, sus_per_pod=4)
    assert one_pod.num_pods == 1 and one_pod.num_vertices == two.num_vertices
    s = cl.build("all_reduce", two, "ring")
    assert cl.simulate(s, one_pod, 2**30).time == cl.simulate(s, two, 2**30).time


def test_schedules_replay_on_three_levels():
    t = three_level()
    for alg in ("ring", "tree", "hierarchical"):
        s = cl.build("all_reduce", t, alg)
        cl.check(s)
        assert cl.simulate(s, t, 2**20).time > 0


def test_sharp_needs_two_levels():
    with pytest.raises(CollectivesError, match="two-level"):
        cl.GpuCluster("dgx-h100", 8, nodes_per_su=2, sus_per_pod=2, sharp=True)


@pytest.mark.parametrize("spec, gpus, sus, pods", [
    ("h100-cluster:12800", 102_400, 400, 100),
    ("gb200-cluster:1389", 100_008, 174, 44),
    ("h100-cluster:128", 1024, 4, 1),
])
def test_cluster_presets(spec, gpus, sus, pods):
    t = parse_topology(spec)
    assert (t.num_ranks, t.num_sus, t.num_pods) == (gpus, sus, pods)


def test_a_one_pod_preset_is_the_superpod():
    s = cl.build("all_reduce", cl.superpod(), "ring")
    assert (cl.simulate(s, parse_topology("h100-cluster:128"), 2**30).time
            == cl.simulate(s, cl.superpod(), 2**30).time)


def test_tpu_pods_joined_by_dcn():
    t = parse_topology("tpu-v5e:pod*4")
    assert isinstance(t, TpuSystem) and (t.num_slices, t.num_ranks) == (4, 1024)
    small = parse_topology("tpu-v5e:4x4*2")
    assert (small.num_slices, small.num_ranks) == (2, 32)
    with pytest.raises(CollectivesError, match="whole number K"):
        parse_topology("tpu-v5e:4x4*two")


# ---------------------------------------------------------------------------
# Too large to build: refused in one line, or timed by the closed form
# ---------------------------------------------------------------------------

def test_a_schedule_growing_as_n_squared_is_refused_before_it_is_built():
    chain = cl.Chain(4096, bandwidth=45e9)
    with pytest.raises(CollectivesError, match="4,000,000") as err:
        cl.build("all_reduce", chain, "chain")
    assert "\n" not in str(err.value) and "closed form" in str(err.value)


def test_estimate_uses_the_closed_form_where_the_schedule_is_too_large():
    chain = cl.Chain(4096, bandwidth=45e9, latency=1e-6)
    e = cl.estimate("all_reduce", chain, 2**30, "chain")
    assert e.time == pytest.approx(2 * costs.chain_all_gather(4096, 2**30, 45e9, 1e-6), rel=1e-12)
    assert "closed form" in e.note and e.result is None


@pytest.mark.parametrize("collective, topology, algorithm", [
    ("all_to_all", cl.Torus((4, 4, 4), True, bandwidth=45e9, latency=1e-6), "direct"),
    ("all_reduce", cl.Chain(12, bandwidth=45e9, latency=1e-6), "chain"),
    ("all_reduce", cl.Switch(12, bandwidth=45e9, latency=1e-6), "tree"),
    ("all_reduce", cl.Switch(12, bandwidth=45e9, latency=1e-6), "direct"),
])
def test_the_closed_form_path_gives_the_simulators_time(monkeypatch, collective, topology, algorithm):
    size = cl.build(collective, topology, algorithm).round_size(3 * 2**20)
    simulated = cl.estimate(collective, topology, size, algorithm, model="ideal")
    monkeypatch.setattr(registry, "MAX_TRANSFERS", 10)      # now every one is "too large"
    formula = cl.estimate(collective, topology, size, algorithm, model="ideal")
    assert formula.result is None and "closed form" in formula.note
    assert formula.time == pytest.approx(simulated.time, rel=1e-9)
    assert formula.num_steps == simulated.num_steps
    assert formula.bound.time == pytest.approx(simulated.bound.time, rel=1e-12)


def test_auto_and_sweep_agree_with_one_estimate_per_size():
    sw = cl.Switch(32, bandwidth=50e9, latency=1e-6)
    sizes = [8, 4096, 2**20, 2**30]
    rows = sweep("all_reduce", sw, sizes)
    for size, row in zip(sizes, rows):
        one = cl.estimate("all_reduce", sw, size)
        assert (row.algorithm, row.time) == (one.algorithm, pytest.approx(one.time, rel=1e-12))


def test_auto_skips_what_is_too_large_and_has_no_formula():
    """On a ring of 4,096 direct sends (N^2 transfers) and recursive doubling (routes of up to
    2,048 links) cannot be built and have no closed form there: auto times the rest and says so."""
    e = cl.estimate("all_reduce", cl.Ring(4096, bandwidth=45e9, latency=1e-6), 2**30)
    assert "too large to build here: " in e.reason and "direct" in e.reason.split("too large")[1]
    assert "direct" not in {a.algorithm for a in e.alternatives}
    assert e.algorithm == "bidirectional_ring" and all(e.time <= a.time for a in e.alternatives)


def test_direct_all_to_all_on_a_torus_meets_its_closed_form():
    for dims, axes in [((3, 5), None), ((4, 6, 3), None), ((6, 4), None), ((4, 6, 3), ["x", "z"])]:
        t = cl.Torus(dims, True, bandwidth=45e9, latency=1e-6)
        s = cl.build("all_to_all", t, "direct", axes=axes)
        V = s.round_size(3 * 2**20)
        group, _ = group_for("all_to_all", t, axes)
        want = registry.entry("all_to_all", "direct").closed_form(group, V)
        assert cl.simulate(s, t, V).time == pytest.approx(want, rel=1e-12), dims


@pytest.mark.parametrize("dims, wrap, both_ways, axes", [
    ((3, 5), False, True, None), ((4, 4), False, True, None), ((5, 4), False, True, ["y"]),
    ((4, 6, 3), [True, False, True], True, None), ((3, 4), True, False, None),
    ((2, 5), True, False, None), ((8, 3), [False, True], True, ["x"]), ((2, 2), True, True, None),
])
def test_direct_all_to_all_on_meshes_and_one_way_tori_meets_its_closed_form(dims, wrap, both_ways,
                                                                           axes):
    """Without wraparound the middle links carry the most (floor(d/2) ceil(d/2) pairs of a
    line, each n/d messages); one way round a ring every link carries n(n-1)/2: the closed
    form is the simulator's time exactly."""
    t = cl.Torus(dims, wrap, bandwidth=45e9, latency=1e-6, bidirectional=both_ways)
    s = cl.build("all_to_all", t, "direct", axes=axes)
    V = s.round_size(3 * 2**20)
    group, _ = group_for("all_to_all", t, axes)
    want = registry.entry("all_to_all", "direct").closed_form(group, V)
    assert want is not None
    assert cl.simulate(s, t, V).time == pytest.approx(want, rel=1e-12)


def test_direct_all_to_all_on_a_large_mesh_is_timed_by_its_closed_form():
    """A 64x64 mesh's direct all-to-all holds 16.8M transfers: it used to have no closed form
    and no other algorithm applies over both axes, so estimate refused."""
    e = cl.estimate("all_to_all", cl.mesh((64, 64), bandwidth=1e9), 2**30)
    assert e.algorithm == "direct" and e.how == "closed form"
    assert e.time == pytest.approx(e.bound.time, rel=1e-9)
    assert "middle ones most" in e.bottleneck and "1 GB/s" in e.bottleneck


@pytest.mark.parametrize("topology, collective, algorithm, words", [
    (cl.Switch(501, bandwidth=1e9), "all_reduce", "tree", "links to and from the switch"),
    (cl.Ring(8192, bandwidth=1e9), "all_to_all", None, "the ring's links, alike"),
    (cl.Chain(2048, bandwidth=1e9), "all_reduce", None, "chain's links, the middle ones most"),
    (cl.Torus((1000, 1000), bandwidth=1e9), "all_reduce", None, "torus's links along axes x, y"),
])
def test_a_closed_form_names_the_links_it_is_written_over(topology, collective, algorithm, words):
    e = cl.estimate(collective, topology, 2**30, algorithm=algorithm or "auto")
    assert e.how == "closed form", e.how
    assert words in e.bottleneck and "not simulated" in e.bottleneck, e.bottleneck


def test_too_large_names_what_fits_not_an_algorithm_that_does_not_apply():
    """Over both axes of a torus the ring does not apply: the hint names what does and fits."""
    with pytest.raises(cl.CollectivesError) as err:
        cl.build("all_reduce", cl.Torus((64, 64), bandwidth=1e9), "direct")
    msg = str(err.value)
    assert "use ring" not in msg and "multi_axis" in msg and "which fit" in msg


def test_direct_all_to_all_on_a_torus_by_hand():
    # a 4x4 torus: one rank's messages take 0+1+2/2+1 = ... one way round a line of 4:
    # offset 1 one hop, offset 2 tied (half each way, 2 hops): s(4) = 1 + 4/4 = 2 hops;
    # 4 messages per offset -> 8 messages' worth of V/16**2 per link; diameter 4 hops
    V = 16 * 2**20
    assert costs.direct_all_to_all_torus((4, 4), V, 1e9, 1e-6) == pytest.approx(
        4e-6 + 4 * 2 * V / 256 / 1e9, rel=1e-12)


# ---------------------------------------------------------------------------
# The fast paths equal the general ones
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("topology", [
    cl.Torus((4, 5, 6), True, bandwidth=1e9, latency=1e-6),
    cl.mesh((3, 4), bandwidth=1e9, latency=2e-6),
    cl.Ring(7, bandwidth=1e9, latency=1e-6, bidirectional=False),
    cl.Chain(6, bandwidth=1e9, latency=1e-6),
])
def test_hop_latencies_equal_the_routed_ones(topology):
    n = topology.num_ranks
    src, dst = np.repeat(np.arange(n), n), np.tile(np.arange(n), n)
    r = topology.routes(src, dst)
    per_sub = np.bincount(r.inc_sub, weights=topology.links.latency[r.inc_link],
                          minlength=len(r.sub_flow))
    routed = np.zeros(len(src))
    np.maximum.at(routed, r.sub_flow, per_sub)
    assert np.allclose(bounds._latencies(topology, src, dst), routed, rtol=0, atol=1e-18)


def test_the_envelope_keeps_the_flows_that_can_be_slowest():
    rng = np.random.default_rng(0)
    lat = rng.choice([0.0, 1.0, 2.0, 3.0], 200)
    unit = rng.choice([0.5, 1.0, 1.5, 2.0], 200)
    a, b = sim._envelope(lat, unit)
    sizes = np.linspace(0, 10, 101)
    assert np.allclose(np.max(a[None] + sizes[:, None] * b[None], axis=1),
                       np.max(lat[None] + sizes[:, None] * unit[None], axis=1))
    assert len(a) <= len(set(zip(lat.tolist(), unit.tolist())))


def test_long_schedules_add_steps_by_pattern(monkeypatch):
    t = cl.GpuCluster("dgx-h100", 4, nodes_per_su=2)
    cases = [cl.build("all_reduce", t, a) for a in ("ring", "tree", "hierarchical")]
    before = [cl.simulate(s, t, 2**24).time for s in cases]
    monkeypatch.setattr(sim, "_MANY_STEPS", 0)
    after = [cl.simulate(s, t, 2**24).time for s in cases]
    assert after == pytest.approx(before, rel=1e-12)


# ---------------------------------------------------------------------------
# sweep's sizes
# ---------------------------------------------------------------------------

def _naive_sizes(lo, hi, f):
    out, s = [], float(lo)
    while s <= hi * (1 + 1e-12):
        if not out or int(round(s)) != out[-1]:
            out.append(int(round(s)))
        s *= f
    return out


def test_sweep_sizes_are_whole_and_each_once():
    assert sweep_sizes(8, 16, 1.000001) == list(range(8, 17))
    for lo, hi, f in [(8, 2**33, 2), (1, 1000, 1.01), (8, 4 * 2**30, 1.75), (3, 977, 1.0001)]:
        assert sweep_sizes(lo, hi, f) == _naive_sizes(lo, hi, f)


def test_a_sweep_of_too_many_sizes_is_refused():
    with pytest.raises(CollectivesError, match=f"more than {MAX_SWEEP_ROWS}"):
        sweep_sizes(8, 2**30, 1.0000001)


@pytest.mark.parametrize("topology", [
    cl.Torus((4, 5, 6), True, bandwidth=1e9, latency=1e-6),
    cl.Torus((2, 3, 4), (True, False, True), bandwidth=1e9, latency=1e-6),
    cl.mesh((3, 4), bandwidth=1e9, latency=2e-6),
    cl.Ring(7, bandwidth=1e9, latency=1e-6, bidirectional=False),
    cl.Ring(2, bandwidth=1e9, latency=1e-6, bidirectional=False),
    cl.Torus((3, 4), True, bandwidth=1e9, latency=1e-6, bidirectional=False),
    cl.Chain(6, bandwidth=1e9, latency=1e-6),
    cl.tpu_slice("v5e", "4x4"),
])
@pytest.mark.parametrize("collective", ["all_gather", "reduce_scatter", "all_reduce", "all_to_all",
                                        "broadcast", "reduce"])
def test_counted_torus_cuts_equal_the_found_ones(monkeypatch, topology, collective):
    axes_choices = [None] + ([[topology.axis_names[0]]] if len(topology.dims) > 1 else [])
    for axes in axes_choices:
        group = topology.num_ranks if axes is None else topology.dims[0]
        for root in ([0, 1, group - 1] if collective in ("broadcast", "reduce") else [None]):
            counted = cl.lower_bound(collective, topology, 2**20, axes=axes, root=root)
            with monkeypatch.context() as m:
                m.setattr(bounds, "_plain_torus", lambda t: False)
                found = cl.lower_bound(collective, topology, 2**20, axes=axes, root=root)
            # (a path's latency found by search is a sum, counted it is hops x latency)
            for key, value in vars(counted).items():
                want = getattr(found, key)
                assert value == (pytest.approx(want, rel=1e-12) if isinstance(value, float)
                                 else want), (topology, axes, root, key)


@pytest.mark.parametrize("collective, topology, algorithm", [
    ("all_reduce", cl.Switch(12, bandwidth=45e9), "ring"),
    ("all_gather", cl.Ring(9, bandwidth=45e9), "bidirectional_ring"),
    ("reduce_scatter", cl.Ring(10, bandwidth=45e9), "bidirectional_ring"),
    ("all_reduce", cl.Ring(10, bandwidth=45e9), "bidirectional_ring_whole"),
    ("all_reduce", cl.Chain(7, bandwidth=45e9), "chain"),
    ("all_reduce", cl.Switch(6, bandwidth=45e9), "tree"),
    ("all_to_all", cl.Torus((3, 4), True, bandwidth=45e9), "direct"),
])
def test_step_counts_known_without_building(collective, topology, algorithm):
    group, _ = group_for(collective, topology)
    want = cl.build(collective, topology, algorithm).num_steps
    assert registry.steps_estimate(registry.entry(collective, algorithm), group) == want


def test_send_across_a_long_ring_needs_no_deep_recursion():
    """The max-flow behind a send's bound walked augmenting paths recursively: a ring of
    about 990 ranks or more ended in RecursionError in every verb. Both ways round carry."""
    e = cl.estimate("send", cl.Ring(3000, bandwidth=1e9), 2**20, src=0, dst=1500)
    assert e.bound.time == pytest.approx(2**20 / 2e9, rel=1e-9)
    assert e.time == pytest.approx(e.bound.time, rel=1e-9)


# ---------------------------------------------------------------------------
# Gather, pipelined chains and binomial trees: closed forms beyond the caps
# ---------------------------------------------------------------------------

LINES = [cl.Ring(n, bandwidth=3e9, latency=1e-6) for n in (2, 3, 4, 7, 8, 12)] + [
    cl.Ring(5, bandwidth=3e9, latency=1e-6, bidirectional=False),
    cl.Ring(2, bandwidth=3e9, latency=1e-6, bidirectional=False),
    *[cl.Chain(n, bandwidth=3e9, latency=2e-6) for n in (1, 2, 5, 8)],
]
GATHER_TOPOLOGIES = LINES + [
    cl.Switch(2, bandwidth=3e9, latency=1e-6), cl.Switch(7, bandwidth=3e9, latency=1e-6),
    cl.Torus((4, 5), (True, False), bandwidth=3e9, latency=2e-6),
    cl.Torus((3, 4, 5), bandwidth=3e9, latency=1e-6), cl.mesh((3, 4), bandwidth=3e9, latency=1e-6),
    cl.Torus((2, 3, 4), (True, False, True), bandwidth=3e9, latency=1e-6),
    cl.Torus((3, 4), True, bandwidth=3e9, latency=1e-6, bidirectional=False),
    cl.Torus((1, 8), True, bandwidth=3e9, latency=1e-6), cl.tpu_slice("v5e", "4x4"),
]


def _roots(n):
    return sorted({0, 1 % n, n // 2, n - 1})


def _meets(collective, topology, algorithm, axes=None, **options):
    """The closed form equals the simulator's time at a few sizes (None: it has none)."""
    sched = cl.build(collective, topology, algorithm, axes=axes, **options)
    group, _ = group_for(collective, topology, axes, options)
    entry = registry.entry(collective, algorithm)
    if entry.closed_form(group, 1.0) is None:
        return None
    for size in (3 * 2**20, 777, 2**30 + 12):
        V = sched.round_size(size)
        want = entry.closed_form(group, V)
        assert cl.simulate(sched, topology, V).time == pytest.approx(want, rel=1e-12), (
            collective, algorithm, topology, axes, options, size)
    return True


@pytest.mark.parametrize("topology", GATHER_TOPOLOGIES, ids=repr)
def test_gather_closed_forms_equal_the_simulator(topology):
    """Direct: every torus, ring, chain and switch, from every kind of root; multipath
    where its routes are counted (one line, a switch), none over two or more axes."""
    lines = sum(d > 1 for d in getattr(topology, "dims", (topology.num_ranks,)))
    for root in _roots(topology.num_ranks):
        assert _meets("gather", topology, "direct", root=root)
        split = _meets("gather", topology, "multipath", root=root)
        assert split is (None if lines > 1 else True), topology


@pytest.mark.parametrize("topology", LINES + [
    cl.Torus((4, 5), (True, False), bandwidth=3e9, latency=2e-6),
    cl.Torus((3, 6), True, bandwidth=3e9, latency=1e-6, bidirectional=False),
    cl.tpu_slice("v5e", "4x8")], ids=repr)
def test_chain_and_binomial_closed_forms_along_a_line_equal_the_simulator(topology):
    """Pipelined chains (any root, a chain's wrap back to rank 0 across the line, chunks
    1 to 8) and binomial trees (a ring from any root, a chain from rank 0), along a ring,
    a chain or each axis of a torus."""
    axes_list = [None] if len(topology.dims) == 1 else list(topology.axis_names)
    for axes in axes_list:
        n = topology.num_ranks if axes is None else topology.dims[topology.axis_names.index(axes)]
        line = "chain" if not topology.wraparound[axes_list.index(axes) if axes else 0] else "ring"
        for root in _roots(n):
            for chunks in (1, 3, 8):
                assert _meets("broadcast", topology, "chain", axes, root=root, chunks=chunks)
                back = _meets("reduce", topology, "chain", axes, root=root, chunks=chunks)
                assert back is (None if not topology.bidirectional else True)
            for coll in ("broadcast", "reduce"):
                tree = _meets(coll, topology, "binomial_tree", axes, root=root)
                assert tree is (None if line == "chain" and root != 0 and n > 2 else True)
        assert _meets("all_reduce", topology, "binomial_tree", axes)


def test_the_closed_forms_of_the_line_by_hand():
    V, W, a = 8e6, 1e9, 1e-6
    # a chain of 5 from rank 2: 2, 3, 4, then 4 -> 0 across the line (4 hops), then 1
    assert costs.pipelined_chain_broadcast_line(5, V, W, a, 2, root=2, wraparound=False) == \
        pytest.approx(5 * (a + V / 2 / W) + 2 * 3 * a)
    # binomial on a ring of 8: rounds of 1, 2 and 4 (the last half each way) ranks apart
    assert costs.binomial_tree_broadcast_line(8, "bidirectional_ring", V, W, a) == \
        pytest.approx((1 + 2 + 4) * a + (1 + 2 + 2) * V / W)
    assert costs.binomial_tree_all_reduce_line(8, "chain", V, W, a) == \
        pytest.approx(2 * ((1 + 2 + 4) * a + (1 + 2 + 4) * V / W))
    # gather onto (1, 0) of a 3x4 mesh: 3 blocks over each link along y, the last leg
    assert costs.direct_gather_mesh((3, 4), "chain", (1, 0), 12 * V, W, a) == \
        pytest.approx((1 + 3) * a + 3 * 3 * V / W)
    assert costs.direct_gather(8, 8 * V, W, a) == pytest.approx(a + 7 * V / W)


@pytest.mark.parametrize("collective, topology, algorithm, axes, options", [
    ("gather", cl.Chain(9, bandwidth=45e9, latency=1e-6), "direct", None, {"root": 3}),
    ("gather", cl.Torus((3, 4), bandwidth=45e9, latency=1e-6), "direct", None, {"root": 5}),
    ("gather", cl.Ring(7, bandwidth=45e9, latency=1e-6), "multipath", None, {"root": 2}),
    ("gather", cl.Switch(12, bandwidth=45e9, latency=1e-6), "multipath", None, {}),
    ("broadcast", cl.Ring(9, bandwidth=45e9, latency=1e-6), "chain", None, {"root": 4}),
    ("reduce", cl.Chain(6, bandwidth=45e9, latency=1e-6), "chain", None, {"root": 2}),
    ("broadcast", cl.Torus((4, 6), bandwidth=45e9, latency=1e-6), "chain", "y", {"root": 1}),
    ("all_reduce", cl.Ring(12, bandwidth=45e9, latency=1e-6), "binomial_tree", None, {}),
    ("reduce", cl.Ring(10, bandwidth=45e9, latency=1e-6), "binomial_tree", None, {"root": 3}),
])
def test_the_line_closed_forms_give_the_simulators_estimate(monkeypatch, collective, topology,
                                                            algorithm, axes, options):
    size = cl.build(collective, topology, algorithm, axes=axes, **options).round_size(3 * 2**20)
    simulated = cl.estimate(collective, topology, size, algorithm, axes=axes, model="ideal",
                            **options)
    monkeypatch.setattr(registry, "MAX_TRANSFERS", 1)       # now every one is "too large"
    formula = cl.estimate(collective, topology, size, algorithm, axes=axes, model="ideal",
                          **options)
    assert formula.result is None and formula.how == "closed form"
    assert formula.time == pytest.approx(simulated.time, rel=1e-9)
    assert formula.num_steps == simulated.num_steps
    assert "not simulated" in formula.bottleneck


def test_line_and_switch_routes_are_counted_as_the_search_finds_them():
    """Disjoint paths on a ring, a one-way ring, a chain and through a switch are counted,
    not searched: the same routes, in the same order (the shorter first, down first)."""
    from collectives_lib.topology.graph import disjoint_paths_between
    tops = ([cl.Ring(n, bandwidth=1.0) for n in (1, 2, 3, 6, 9)]
            + [cl.Ring(n, bandwidth=1.0, bidirectional=False) for n in (2, 5)]
            + [cl.Chain(n, bandwidth=1.0) for n in (2, 6)]
            + [cl.Torus((4,), False, bandwidth=1.0, bidirectional=False)]
            + [cl.Switch(n, bandwidth=1.0) for n in (1, 2, 5)])
    for t in tops:
        for a in range(t.num_vertices):
            for b in range(t.num_vertices):
                assert t.disjoint_paths(a, b) == disjoint_paths_between(t, a, b), (t, a, b)


def test_the_pipelined_chain_holds_each_chunk_where_it_should_be():
    """Chunk c leaves position i at step c + i (the builder lists only those in flight)."""
    from collectives_lib.builders.trees import chain_broadcast
    for n, K, root in [(1, 3, 0), (2, 1, 1), (5, 3, 2), (9, 12, 8), (7, 2, 0)]:
        s = chain_broadcast(n, root, K)
        assert s.num_steps == (K + n - 2 if n > 1 else 0)
        order = (np.arange(n) + root) % n
        for k, step in enumerate(s.steps):
            pos = [i for i in range(n - 1) if 0 <= k - i < K]
            assert step.traffic.src.tolist() == order[pos].tolist()
            assert step.traffic.dst.tolist() == order[np.add(pos, 1)].tolist()


def test_large_gathers_chains_and_trees_answer_by_their_closed_forms():
    """What took minutes: every rank's link-disjoint routes searched one by one (a gather
    on 4,096 ranks), 65,542 different steps of a chain, the binomial tree's long routes."""
    ring = cl.Ring(4096, bandwidth=1e9)
    e = cl.estimate("gather", ring, 2**30)
    assert {e.how} | {a.how for a in e.alternatives} == {"closed form"}
    assert e.time == pytest.approx(costs.ring_gather(4096, 2**30, 1e9), rel=1e-12)
    split = cl.estimate("gather", ring, 2**30, "multipath")
    assert split.how == "closed form" and "looked up in turn" in split.note
    big = cl.Ring(65536, bandwidth=1e9)
    for coll in ("broadcast", "reduce"):
        e = cl.estimate(coll, big, 2**30)
        assert e.algorithm == "chain" and e.how == "closed form" and "65,542" in e.note
        assert e.time == pytest.approx(costs.pipelined_chain_broadcast(65536, 2**30, 1e9),
                                       rel=1e-12)
        assert "binomial_tree" in {a.algorithm for a in e.alternatives}
    e = cl.estimate("all_reduce", ring, 2**30)
    tree = {a.algorithm: a for a in e.alternatives}["binomial_tree"]
    assert tree.how == "closed form"


def test_a_multipath_gather_too_large_to_search_is_refused_in_one_line():
    """Over two axes its routes are searched and have no closed form: auto does without
    it, and asked for by name it is refused, naming what fits."""
    t = cl.Torus((64, 64), bandwidth=1e9)
    e = cl.estimate("gather", t, 2**30)
    assert e.algorithm == "direct" and "multipath" in e.reason.split("too large")[1]
    with pytest.raises(CollectivesError) as err:
        cl.build("gather", t, "multipath")
    assert "\n" not in str(err.value) and "searching" in str(err.value)
    assert "use direct" in str(err.value)
