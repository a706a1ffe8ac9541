"""Every registered algorithm, replayed on data and held to its closed form.

The registry is the one list of algorithms; this test walks it, so a newly
registered algorithm is tested without anyone adding it here. For each entry
and each small topology it applies to, the schedule must compute its
collective on real numbers (``cl.check``) and, where the entry gives a closed
form for that topology, the simulator's time must equal it. Every entry must
meet its closed form on at least one of these topologies.
"""
import numpy as np
import pytest

import collectives_lib as cl
from collectives_lib.builders import all_entries, group_for

W, LAT = 45e9, 1e-6


def _cluster(nodes, **kw):
    return cl.GpuCluster("dgx-h100", nodes, nvlink_bandwidth=4 * W, nic_bandwidth=W / 2,
                         nvlink_latency=LAT / 4, nic_latency=LAT, **kw)


#: name -> topology, or (topology, axes) for a group over some of its axes
TOPOLOGIES = {
    **{f"ring{n}": cl.Ring(n, bandwidth=W, latency=LAT) for n in (2, 3, 4, 5, 6, 8)},
    "oneway_ring5": cl.Ring(5, bandwidth=W, latency=LAT, bidirectional=False),
    **{f"chain{n}": cl.Chain(n, bandwidth=W, latency=LAT) for n in (2, 3, 4, 7)},
    "torus4x4": cl.Torus((4, 4), bandwidth=W, latency=LAT),
    "mesh3x4": cl.mesh((3, 4), bandwidth=W, latency=LAT),
    "torus2x3x4": cl.Torus((2, 3, 4), (True, False, True), bandwidth=W, latency=LAT),
    **{f"switch{n}": cl.Switch(n, bandwidth=W, latency=LAT / 2) for n in (2, 3, 4, 8)},
    "nvswitch_like8": cl.Switch(8, bandwidth=W, latency=LAT / 2, in_network=True, agent_latency=5e-6,
                                reduce_flops=1e12),
    "in_network_switch5": cl.Switch(5, bandwidth=W, latency=LAT / 2, in_network=True),
    "cluster2x4": _cluster(2),
    "cluster1x8": _cluster(1),
    "cluster3x8": _cluster(3),
    "cluster2x4_gpu": (_cluster(2), "gpu"),
    "cluster2x4_node": (_cluster(2), "node"),
    "cluster4x8_node": (_cluster(4), "node"),
    "cluster3x8_node": (_cluster(3), "node"),
    "sharp_cluster2": _cluster(2, sharp=True),
    "sharp_cluster3_2su": _cluster(3, sharp=True, nodes_per_su=2),
}


def _topology(entry):
    return entry if isinstance(entry, cl.Topology) else entry[0]


def _axes(entry):
    return None if isinstance(entry, cl.Topology) else entry[1]


def _cases():
    for alg in all_entries():
        yield pytest.param(alg, id=f"{alg.collective}-{alg.name}")


def _applicable(alg):
    for name, entry in TOPOLOGIES.items():
        topo, axes = _topology(entry), _axes(entry)
        group, _ = group_for(alg.collective, topo, axes)
        if alg.reason(group) is None:
            yield name, topo, axes, group


@pytest.mark.parametrize("alg", list(_cases()))
def test_every_registered_algorithm_replays_and_meets_its_closed_form(alg):
    met = []
    for name, topo, axes, group in _applicable(alg):
        sched = cl.build(alg.collective, topo, alg.name, axes=axes)
        assert sched.collective == alg.collective and sched.num_ranks == topo.num_ranks
        cl.check(sched)
        V = sched.round_size(3 * 2**20)
        want = alg.closed_form(group, V)
        if want is None:
            continue
        got = cl.simulate(sched, topo, V).time
        assert got == pytest.approx(want, rel=1e-9), f"{alg.name} {alg.collective} on {name}"
        met.append(name)
    assert met, (f"{alg.name} {alg.collective} meets its closed form on none of "
                 f"{', '.join(TOPOLOGIES)}: give it one")


@pytest.mark.parametrize("alg", [a for a in all_entries() if a.collective in ("broadcast", "reduce")],
                         ids=lambda a: f"{a.collective}-{a.name}")
@pytest.mark.parametrize("root", [1, 3])
def test_rooted_algorithms_replay_from_any_root(alg, root):
    sw = TOPOLOGIES["nvswitch_like8"]
    sched = cl.build(alg.collective, sw, alg.name, root=root)
    assert sched.root == root
    cl.check(sched)


def test_every_algorithm_says_why_it_does_not_apply():
    """Where an entry does not apply, its reason is a sentence, never empty."""
    for alg in all_entries():
        for entry in TOPOLOGIES.values():
            group, _ = group_for(alg.collective, _topology(entry), _axes(entry))
            why = alg.reason(group)
            assert why is None or (isinstance(why, str) and len(why) > 20), (alg, entry, why)


def test_listing_order_and_reasons_come_from_the_registry():
    ring6 = TOPOLOGIES["ring6"]
    table = cl.algorithms("all_reduce", ring6, reasons=True)
    assert list(table)[:3] == ["ring", "bidirectional_ring", "chain"]
    assert table["rabenseifner"] == "rabenseifner needs a power-of-two number of ranks, got N = 6"
    assert cl.algorithms("all_reduce", ring6) == [k for k, v in table.items() if v is None]


def test_a_schedule_over_abstract_ranks_needs_no_topology():
    sched = cl.build("all_gather", 6, "bidirectional_ring")
    assert sched.num_ranks == 6 and np.array_equal(sched.groups, [np.arange(6)])
    cl.check(sched)
    with pytest.raises(cl.CollectivesError, match="auto needs a topology"):
        cl.build("all_gather", 6)


@pytest.mark.parametrize("topology", [cl.Ring(8, bandwidth=1e9), cl.Chain(6, bandwidth=1e9), cl.Switch(13, bandwidth=1e9),
                                      cl.Torus((4, 4), bandwidth=1e9), cl.Switch(16, bandwidth=1e9, in_network=True),
                                      cl.Torus((2, 3, 4), bandwidth=1e9), cl.Ring(9, bandwidth=1e9),
                                      _cluster(1), _cluster(3), _cluster(2, sharp=True),
                                      cl.parse_topology("dgx-h100:5:gpus=1")],
                         ids=repr)
def test_every_declared_footprint_is_what_the_built_schedule_holds(topology):
    """Every algorithm says how many transfers and steps its schedule holds before building
    it (for the size cap), and is held to the schedule it then builds: exactly (its distinct
    patterns) where it counts them, an upper bound on its distinct transfers, not far above
    all of them, where :mod:`collectives_lib.builders.footprints` bounds them."""
    from collectives_lib.builders import footprints, group_for
    from collectives_lib.builders.registry import all_entries
    assert footprints.missing() == []
    checked = 0
    for alg in all_entries():
        group, groups = group_for(alg.collective, topology)
        if alg.reason(group) is not None:
            continue
        sched = cl.build(alg.collective, topology, alg.name)
        transfers, steps = alg.footprint(group)[:2]
        distinct = sum({id(s.traffic): len(s.traffic.src) for s in sched.steps}.values())
        total = sum(len(s.traffic.src) for s in sched.steps)
        if (str(alg.collective), alg.name) in footprints.BOUNDS:
            assert distinct <= transfers <= 4 * total + 8, (alg.name, alg.collective, transfers, total)
            assert steps >= 1 or sched.num_steps == 0
        else:
            assert steps in (sched.num_steps, 0), (alg.name, alg.collective)   # 0: not known
            # a schedule whose steps repeat a pattern holds that pattern once (NCCL's trees
            # over nodes are counted step by step: between the distinct and all transfers)
            assert distinct <= transfers <= total, (alg.name, alg.collective, transfers, distinct)
        checked += 1
    assert checked >= 8


def test_a_schedule_too_long_to_route_is_refused_before_it_is_built():
    """Recursive doubling on a ring of 65,536 sends over up to 32,768 links a transfer:
    it is refused in one line (and auto does without it) rather than routed for minutes."""
    ring = cl.Ring(65536, bandwidth=45e9)
    with pytest.raises(cl.CollectivesError, match=r"over up to 32,768 links each"):
        cl.build("all_reduce", ring, "recursive_doubling")
    e = cl.estimate("all_reduce", ring, 2**30)
    assert e.algorithm in ("bidirectional_ring", "bidirectional_ring_whole")
    assert "recursive_doubling" in e.reason
