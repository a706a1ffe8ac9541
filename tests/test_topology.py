import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import collectives_lib as cl


def test_reprs_are_readable():
    assert repr(cl.Torus((4, 4), bandwidth=45e9)) == \
        "Torus(dims=(4, 4), wraparound=True, bandwidth=4.5e+10, latency=0)"
    assert repr(cl.mesh((2, 3), bandwidth=1e9)) == \
        "Torus(dims=(2, 3), wraparound=False, bandwidth=1e+09, latency=0)"
    assert repr(cl.Ring(8, bandwidth=1e9)) == \
        "Ring(8, bidirectional=True, bandwidth=1e+09, latency=0)"
    assert repr(cl.tpu_slice("v5e", "8x16")) == "tpu_slice('v5e', '8x16')"
    assert repr(cl.nvswitch_node()) == "nvswitch_node('dgx-h100')"
    assert repr(cl.superpod()) == "GpuCluster('dgx-h100', num_nodes=128)"


def test_link_counts():
    assert len(cl.Torus((4, 4), bandwidth=1).links) == 4 * 4 * 4       # 4 links out of every chip
    assert len(cl.mesh((4, 4), bandwidth=1).links) == 2 * 2 * 4 * 3     # 2 axes x 2 dirs x 4 lines x 3
    assert len(cl.Ring(5, bandwidth=1, bidirectional=False).links) == 5
    assert len(cl.Chain(5, bandwidth=1).links) == 8
    assert len(cl.Switch(8, bandwidth=1).links) == 16


def test_wraparound_routing_on_a_pod():
    pod = cl.tpu_pod("v5e")
    a, b = pod.rank_of((15, 15)), pod.rank_of((2, 15))
    assert pod.hops(a, b) == 3
    assert [pod.coords(x) for x in pod.path(a, b)] == [(15, 15), (0, 15), (1, 15), (2, 15)]


def test_disjoint_paths_on_a_4x4_slice():
    s = cl.tpu_slice("v5e", "4x4")
    paths = s.disjoint_paths((3, 3), (0, 0))
    assert len(paths) == 2
    assert [len(p) - 1 for p in paths] == [6, 6]
    edges = [set(zip(p[:-1], p[1:])) for p in paths]
    assert not edges[0] & edges[1]


@pytest.mark.parametrize("gen, shape, wrap", [
    ("v5e", "16x16", (True, True)), ("v5e", "8x16", (False, True)), ("v5e", "4x4", (False, False)),
    ("v5p", "4x4x4", (True, True, True)), ("v5p", "4x4x8", (True, True, True)),
    ("v5p", "2x2x4", (False, False, False)), ("v4", "16x16x16", (True, True, True)),
    ("7x", "8x8x16", (True, True, True)),
], ids=lambda x: str(x))
def test_tpu_wraparound_rules(gen, shape, wrap):
    assert cl.tpu_slice(gen, shape).wraparound == wrap


@pytest.mark.parametrize("gen, shape, message", [
    ("v5e", "5x5", "tpu-v5e slice 5x5 does not fit a 16x16 pod: each axis one of 1, 2, 4, 8, 16"),
    ("v5e", "4x4x4", "tpu-v5e is a 2D torus, so its shape needs 2 axes"),
    ("v5p", "3x4x4", "tpu-v5p slice 3x4x4 is not a valid shape: each axis 1, 2 or a multiple of 4"),
    ("v5p", "32x4x4", "does not fit the 16x20x28 pod"),
    ("v9", "4x4", "unknown TPU generation 'v9'"),
    ("v5e", "4xA", "shape '4xA' is not understood"),
])
def test_tpu_shape_errors(gen, shape, message):
    with pytest.raises(cl.CollectivesError, match=message.replace("(", r"\(").replace(")", r"\)")):
        cl.tpu_slice(gen, shape)


def test_bad_topology_arguments():
    with pytest.raises(cl.CollectivesError, match="number of ranks N must be >= 1, got 0"):
        cl.Ring(0, bandwidth=1)
    with pytest.raises(cl.CollectivesError, match="bandwidth .* must be a positive number"):
        cl.Ring(4, bandwidth=-1)
    with pytest.raises(cl.CollectivesError, match="wraparound has 1 entries but the torus has 2 axes"):
        cl.Torus((4, 4), (True,), bandwidth=1)
    with pytest.raises(cl.CollectivesError, match="oversubscription must be >= 1"):
        cl.GpuCluster("dgx-h100", 4, oversubscription=0.5)


def test_no_route_on_one_way_chain():
    t = cl.Torus((4,), False, bandwidth=1, bidirectional=False)
    with pytest.raises(cl.CollectivesError, match="has no route from"):
        t.route(3, 0)


def test_bisection_bandwidths_of_the_seed():
    node = cl.nvswitch_node("dgx-h100")
    assert node.bisection_bandwidth() == pytest.approx(1.8e12)                 # 4 x 450 GB/s
    assert node.bisection_bandwidth(directions=2) == pytest.approx(3.6e12)
    su = cl.GpuCluster("dgx-h100", 32)
    assert su.bisection_bandwidth() == pytest.approx(6.4e12)                   # 16 x 400 GB/s
    assert su.bisection_bandwidth(directions=2) == pytest.approx(12.8e12)
    pod = cl.superpod()
    assert pod.bisection_bandwidth() == pytest.approx(25.6e12)                 # 64 x 400 GB/s
    assert pod.bisection_bandwidth(directions=2) == pytest.approx(51.2e12)
    assert pod.cut_bandwidth(pod.node_ranks(range(88))) == pytest.approx(16e12)  # 40 x 400 GB/s


def test_oversubscribed_fat_tree_halves_cross_su_bandwidth():
    full = cl.GpuCluster("dgx-h100", 64)
    half = cl.GpuCluster("dgx-h100", 64, oversubscription=2)
    side = full.node_ranks(range(32))                        # one SU against the other
    assert half.cut_bandwidth(side) == pytest.approx(full.cut_bandwidth(side) / 2)
    # 32 nodes inject 12.8 TB/s; 2:1 leaves 6.4 TB/s of uplinks
    assert full.cut_bandwidth(side) == pytest.approx(12.8e12)
    assert half.cut_bandwidth(side) == pytest.approx(6.4e12)


def test_torus_bisection():
    pod = cl.tpu_pod("v5e")                      # 16 x 2 links (wraparound) x 45 GB/s
    assert pod.bisection_bandwidth() == pytest.approx(32 * 45e9)
    m = cl.tpu_slice("v5e", "4x4")               # no wraparound: 4 links
    assert m.bisection_bandwidth() == pytest.approx(4 * 45e9)


def test_tpu_system_routes_cross_slice_traffic_through_pcie_and_dcn():
    sys_ = cl.tpu_system("v5e", "4x4", num_slices=2)
    path = sys_.path(0, sys_.num_ranks - 1)
    labels = [sys_.node_label(n) for n in path]
    assert labels[1].startswith("host") and labels[2] == "DCN" and labels[3].startswith("host")
    kinds = [sys_.links.class_name(k) for k in sys_.route(0, sys_.num_ranks - 1)]
    assert kinds == ["pcie", "dcn", "dcn", "pcie"]
    assert sys_.num_hosts == 4                  # 2 hosts of 2x4 chips per 4x4 slice


def test_superpod_routes():
    pod = cl.superpod()
    labels = [pod.node_label(n) for n in pod.path(0, 1023)]
    assert labels == ["node 0 GPU 0", "SU 0 leaf 0", "spine", "SU 3 leaf 7", "node 127 GPU 7"]
    labels = [pod.node_label(n) for n in pod.path(8, 16)]       # same rail, same SU
    assert labels == ["node 1 GPU 0", "SU 0 leaf 0", "node 2 GPU 0"]
    labels = [pod.node_label(n) for n in pod.path(0, 5)]
    assert labels == ["node 0 GPU 0", "node 0 NVSwitch", "node 0 GPU 5"]


@settings(max_examples=60, deadline=None)
@given(dims=st.lists(st.integers(1, 7), min_size=1, max_size=3),
       wrap=st.booleans(), data=st.data())
def test_routes_follow_links_and_shortest_distance(dims, wrap, data):
    t = cl.Torus(dims, wrap, bandwidth=1.0)
    a = data.draw(st.integers(0, t.num_ranks - 1))
    b = data.draw(st.integers(0, t.num_ranks - 1))
    r = t.routes(np.array([a]), np.array([b]))
    links = t.links
    for sub in range(len(r.sub_flow)):
        hops = r.inc_link[r.inc_sub == sub]
        node = a
        for link in hops:
            assert links.src[link] == node
            node = int(links.dst[link])
        assert node == b
    expected = 0
    for ca, cb, n, w in zip(t.coords(a), t.coords(b), t.dims, t.wraparound):
        d = abs(ca - cb)
        expected += min(d, n - d) if w else d
    assert t.hops(a, b) == expected
    assert np.isclose(r.sub_weight.sum(), 1.0)
