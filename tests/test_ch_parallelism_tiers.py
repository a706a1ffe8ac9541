"""What the chapter *Parallelism onto the tiers* relies on, against hand derivations.

A program's mesh laid row-major on 16 DGX H100 nodes puts each axis's groups where
the chapter says (TP inside a node, DP on one rail, PP two nodes apart); the lower
bounds it quotes are the bytes each rank or node must move over its links; sequence
parallelism's reduce-scatter plus all-gather has the all-reduce's bound; a ring step
of context parallelism is one block over one link; and NCCL's model never beats the
bound it is shown beside.
"""
import numpy as np
import pytest

import collectives_lib as cl
from collectives_lib.topology import with_mesh

H, S, B = 8192, 8192, 2
ACT = S * H * B


@pytest.fixture(scope="module")
def pod():
    return cl.parse_topology("dgx-h100:16")


def nvlink(pod):
    return float(pod.gpu_system.nvlink_bandwidth)


def nic(pod):
    return float(pod.gpu_system.nic_bandwidth)


def test_mesh_axes_land_where_the_chapter_says(pod):
    mesh = with_mesh(pod, {"pp": 2, "dp": 8, "tp": 8})
    tp, dp, pp = (mesh.axis_groups([a]) for a in ("tp", "dp", "pp"))
    assert tp.shape == (16, 8) and dp.shape == (16, 8) and pp.shape == (64, 2)
    assert tp[0].tolist() == list(range(8))
    assert dp[0].tolist() == list(range(0, 64, 8))
    assert pp[0].tolist() == [0, 64]
    # every TP group is one node; every DP group is one local GPU (one rail) on 8 nodes
    assert all(len(set(g // 8)) == 1 for g in tp)
    assert all(len(set(g % 8)) == 1 and len(set(g // 8)) == 8 for g in dp)
    # the groups of an axis partition the ranks
    for groups in (tp, dp, pp):
        assert sorted(groups.ravel().tolist()) == list(range(128))


def test_tp_all_reduce_bound_is_its_bytes_over_nvlink(pod):
    # NCCL runs TP's all-reduce as NVLS, which the NVSwitch reduces: each GPU sends its
    # data once and receives the sum once, as on one DGX H100; a ring moves 2(N-1)/N of it
    mesh = with_mesh(pod, {"dp": 16, "tp": 8})
    e = cl.estimate("all_reduce", mesh, ACT, axes=["tp"], model="nccl")
    assert e.nccl_algorithm == "NVLS"
    assert e.bound.time == pytest.approx(ACT / nvlink(pod), rel=0.01)
    assert e.time >= e.bound.time
    ring = cl.estimate("all_reduce", mesh, ACT, "ring", axes=["tp"], model="ideal")
    assert ring.bound.time == pytest.approx(2 * 7 / 8 * ACT / nvlink(pod), rel=0.01)


def test_sequence_parallel_pair_has_the_all_reduce_bound(pod):
    mesh = with_mesh(pod, {"dp": 16, "tp": 8})
    ar, rs, ag = (cl.estimate(c, mesh, ACT, "ring", axes=["tp"], model="ideal")
                  for c in ("all_reduce", "reduce_scatter", "all_gather"))
    assert rs.bound.time + ag.bound.time == pytest.approx(ar.bound.time, rel=0.01)
    assert rs.bound.time == pytest.approx(7 / 8 * ACT / nvlink(pod), rel=0.01)
    # left to choose, the ideal model runs the TP group's all-reduce in its node's
    # NVSwitch, as on one DGX H100: each GPU's data once up, the sum once down
    auto = cl.estimate("all_reduce", mesh, ACT, axes=["tp"], model="ideal")
    assert auto.algorithm == "nvls" and auto.bound.in_network
    assert auto.bound.time == pytest.approx(ACT / nvlink(pod), rel=0.01)


def test_dp_all_reduce_on_one_rail(pod):
    mesh = with_mesh(pod, {"pp": 2, "dp": 8, "tp": 8})
    grad = 12 * H * H * B // 8
    e = cl.estimate("all_reduce", mesh, grad, axes=["dp"], model="nccl")
    assert e.bound.time == pytest.approx(2 * 7 / 8 * grad / nic(pod), rel=0.01)
    assert e.bound.time <= e.time < 1.5 * e.bound.time


@pytest.mark.parametrize("mesh, link", [({"dp": 16, "cp": 8}, "nvlink"), ({"cp": 16, "dp": 8}, "nic")])
def test_ring_attention_step_is_one_block_over_one_link(pod, mesh, link):
    view = with_mesh(pod, mesh)
    group = view.axis_groups(["cp"])[0]
    block = 2 * (131072 // len(group)) * 1024 * B
    flows = [(int(a), int(b), block) for a, b in zip(group, np.roll(group, -1))]
    rate = nvlink(pod) if link == "nvlink" else nic(pod)
    assert cl.time_flows(view, flows).time == pytest.approx(block / rate, rel=0.02)


def test_expert_all_to_all_across_two_nodes_is_bound_by_the_nics():
    two = cl.parse_topology("dgx-h100:2")
    v = 8192 * 8 * H * B
    e = cl.estimate("all_to_all", two, v, model="nccl")
    # each node sends half of each of its 8 GPUs' buffers through 8 NICs
    assert e.bound.time == pytest.approx(8 * v / 2 / (8 * nic(two)), rel=0.01)
    assert e.time >= e.bound.time
    inside = cl.estimate("all_to_all", cl.parse_topology("dgx-h100:1"), v, model="nccl")
    assert inside.time < e.time / 3


def test_hsdp_all_reduce_across_nodes_by_hand(pod):
    layer = 12 * H * H * B
    hsdp = with_mesh(pod, {"replicate": 16, "shard": 8})
    ar = cl.estimate("all_reduce", hsdp, layer // 8, axes=["replicate"], model="nccl")
    assert ar.bound.time == pytest.approx(2 * 15 / 16 * (layer // 8) / nic(pod), rel=0.01)
    # an all-reduce across the nodes moves twice the flat reduce-scatter's bytes over the cut
    flat = cl.estimate("reduce_scatter", pod, layer, model="nccl")
    assert ar.bound.time == pytest.approx(2 * flat.bound.time, rel=0.01)


def test_nvl72_keeps_a_72_way_all_to_all_on_nvlink():
    rack = cl.parse_topology("gb200-nvl72:1")
    assert rack.num_ranks == 72
    v = 8192 * 8 * H * B
    e = cl.estimate("all_to_all", rack, v, model="nccl")
    assert e.time >= e.bound.time
    assert e.bound.time == pytest.approx(71 / 72 * v / float(rack.gpu_system.nvlink_bandwidth), rel=0.02)


@pytest.mark.parametrize("mesh, message", [
    ({"dp": 2, "tp": 8}, "has 16 devices but"),
    ({"dp": 16, "tp": 0}, "whole size >= 1"),
])
def test_bad_mesh_is_named(pod, mesh, message):
    with pytest.raises(cl.CollectivesError, match=message):
        with_mesh(pod, mesh)


def test_unknown_axis_is_named(pod):
    with pytest.raises(cl.CollectivesError, match="unknown axis 'ep'"):
        cl.estimate("all_reduce", with_mesh(pod, {"dp": 16, "tp": 8}), ACT, axes=["ep"])


def test_pipeline_step_of_a_whole_stage_is_one_activation_per_nic(pod):
    # the 8 GPUs of node 0 each send an activation to their counterpart on node 8
    t = cl.time_flows(pod, [(g, 64 + g, ACT) for g in range(8)]).time
    assert t == pytest.approx(ACT / nic(pod), rel=0.01)
    across = cl.estimate("send", cl.parse_topology("dgx-h100:2"), ACT, model="nccl")
    assert across.time >= t
