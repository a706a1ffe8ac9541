"""The HLO reader on programs compiled by the real TPU compiler (tests/data/hlo_tpu/).

Each module's collectives, as they run, were written by hand beside it
(``<name>.expected.json``, from reading the text: see that folder's README); the
reader must agree on kinds, counts, bytes, mesh axes and trip counts, and on
the bytes per step within 2%. No libtpu is needed: the texts are committed.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import collectives_lib as cl
from collectives_lib import hlo, nccl
from collectives_lib.hlo import mesh_axes, parse_hlo, time_hlo

DATA = Path(__file__).parent / "data" / "hlo_tpu"
NAMES = sorted(p.name[: -len(".expected.json")] for p in DATA.glob("*.expected.json"))


def load(name):
    text = (DATA / f"{name}.txt").read_text()
    meta = json.loads((DATA / f"{name}.meta.json").read_text())
    expected = json.loads((DATA / f"{name}.expected.json").read_text())
    return parse_hlo(text), meta, expected


def test_every_required_module_is_there():
    meta = {n: json.loads((DATA / f"{n}.meta.json").read_text()) for n in NAMES}
    assert {"v5e:4x2", "v5e:2x4", "v5e:4x4", "v5p:2x2x2"} <= {m["topology"] for m in meta.values()}
    assert len(NAMES) >= 9
    assert all(m["versions"]["libtpu"] for m in meta.values())


@pytest.mark.parametrize("name", NAMES)
def test_reader_reads_what_runs(name):
    module, meta, expected = load(name)
    want = Counter()
    for c in expected["collectives"]:
        want[(c["kind"], c["nbytes"], c["repeats"], tuple(c["mesh_axes"]))] += c["count"]
    got = Counter((c.kind, c.nbytes, c.repeats, mesh_axes(c, meta["mesh"])) for c in module)
    assert got == want
    assert module.bytes_per_step == pytest.approx(expected["bytes_per_step"], rel=0.02)
    # what was folded is never listed again
    listed = {c.name for c in module}
    assert not listed & {f for c in module for f in c.folded}


def test_async_chains_and_fusions_are_named_and_overlaps_seen():
    module, _, _ = load("fsdp_layer")
    chain = next(c for c in module if c.name == "async-collective-start")
    assert chain.kind == "all_gather" and chain.is_async and "convolution.11" in chain.overlaps
    assert chain.folded == ("all-gather.9", "fusion.17", "all-gather.11", "async-collective-done",
                            "all-gather.13")
    rs = next(c for c in module if c.name == "fusion")
    assert (rs.kind, rs.folded, str(rs.operands[0]), str(rs.results[0])) == (
        "reduce_scatter", ("all-reduce.1",), "f32[16704,4096]", "f32[2088,4096]")
    # the collective matmul: the third permute is in flight across three matmul fusions
    cm, _, _ = load("collective_matmul")
    assert [len(c.overlaps) for c in cm] == [0, 0, 3]


def test_the_device_assignment_of_jax_make_mesh():
    # jax.make_mesh((2, 4)) on a v5e 2x4 slice lays each row of 4 on a 2x2 block of chips
    _, meta, _ = load("psum_scatter")
    topo = cl.tpu_slice("v5e", "2x4")
    ranks = hlo.chip_ranks(meta["device_coords"], topo)
    assert ranks[:4] == [0, 4, 1, 5]           # chips (0,0), (1,0), (0,1), (1,1)
    # the FSDP step's groups hold every chip, so any assignment times them; its permute's
    # pairs become other chips' pairs, routed where they are
    module, meta, _ = load("fsdp_layer")
    plain = time_hlo(module, topo, mesh=meta["mesh"])
    placed = time_hlo(module, topo, mesh=meta["mesh"], devices=ranks)
    assert placed.devices == tuple(ranks)
    for a, b in zip(plain.rows, placed.rows):
        if a.collective.kind != "collective_permute":
            assert a.time == b.time
    assert all(r.estimate is not None and r.bound <= r.time * (1 + 1e-9) for r in placed.rows)


def test_collective_matmul_permutes_are_timed_with_bounds():
    module, meta, _ = load("collective_matmul")
    topo = cl.tpu_slice("v5e", "4x4")
    timing = time_hlo(module, topo, mesh=meta["mesh"])
    link = float(topo.links.bandwidth.max())
    for row in timing.rows:
        e = row.estimate
        # rings of 4 along y without wraparound: 3 -> 0 goes back over 3 links, and shares
        # none of them with the +1 pairs (they use the other direction): 16 MiB over one link
        assert e.pairs == 16 and e.bound.time <= e.time
        assert e.time == pytest.approx(2048 * 4096 * 2 / link + 3e-6, rel=1e-6)
    assert timing.overlapped == pytest.approx(timing.rows[2].time)


def test_gpu_meshes_are_timed_on_dgx_presets():
    # data=4, fsdp=2 on one DGX H100: fsdp groups are pairs of GPUs, data four GPUs two apart
    module, _, _ = load("fsdp_train_step")
    node = cl.parse_topology("dgx-h100:1")
    timing = time_hlo(module, node, mesh="data=4,fsdp=2")
    assert timing.model == "nccl" and all(r.estimate is not None for r in timing.rows)
    assert all(r.estimate.efficiency <= 1 + 1e-9 for r in timing.rows)
    view = cl.topology.with_mesh(node, {"data": 4, "fsdp": 2})
    comm = nccl.comm_for(view, ["data"])
    assert (comm.nodes, comm.ppn) == (1, 4)
    # data=4, model=4 on two nodes: each data group holds 2 GPUs of each node
    two = cl.parse_topology("dgx-h100:2")
    view = cl.topology.with_mesh(two, {"data": 4, "model": 4})
    assert view.axis_groups(["data"]).tolist()[0] == [0, 4, 8, 12]
    assert [(nccl.comm_for(view, [a]).nodes, nccl.comm_for(view, [a]).ppn)
            for a in ("data", "model")] == [(2, 2), (1, 4)]
    text = _two_axis_module(16, 4, 4)
    timing = time_hlo(text, two, mesh="data=4,model=4")
    data, model = timing.rows
    assert data.topology_axes == ("data",) and model.topology_axes == ("model",)
    assert data.time > model.time > 0          # data crosses InfiniBand, model stays on NVLink
    assert all(r.estimate.efficiency <= 1 + 1e-9 for r in timing.rows)


def test_groups_that_fit_no_mapping_say_what_was_tried():
    text = _two_axis_module(16, 4, 4).replace("[4,4]<=[4,4]T(1,0)", "{{0,5,10,15},{1,6,11,12},"
                                              "{2,7,8,13},{3,4,9,14}}")
    with pytest.raises(cl.CollectivesError) as err:
        time_hlo(text, cl.parse_topology("dgx-h100:2"), mesh="data=4,model=4")
    msg = str(err.value)
    assert "GpuCluster('dgx-h100', num_nodes=2) (axes node=2, gpu=8)" in msg
    assert "the mesh data=4,model=4 laid row-major on its ranks" in msg


def _two_axis_module(n, data, model):
    return f"""HloModule m, num_partitions={n}
%add (a: f32[], b: f32[]) -> f32[] {{
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}}
ENTRY %main (p: f32[4194304]) -> f32[4194304] {{
  %p = f32[4194304]{{0}} parameter(0)
  %over_data = f32[4194304]{{0}} all-reduce(%p), channel_id=1, replica_groups=[{model},{data}]<=[{data},{model}]T(1,0), use_global_device_ids=true, to_apply=%add
  ROOT %over_model = f32[4194304]{{0}} all-reduce(%over_data), channel_id=2, replica_groups=[{data},{model}]<=[{n}], use_global_device_ids=true, to_apply=%add
}}
"""


@pytest.mark.parametrize("name", NAMES)
def test_every_module_times_on_its_slice(name):
    module, meta, _ = load(name)
    gen, shape = meta["topology"].split(":")
    timing = time_hlo(module, cl.tpu_slice(gen, shape), mesh=meta["mesh"])
    assert all(r.estimate is not None for r in timing.rows)
    assert timing.total_bound <= timing.total * (1 + 1e-9)
    assert timing.total_bytes == module.bytes_per_step
    assert np.isfinite(timing.total) and timing.total > 0


def test_the_packaged_examples_are_the_test_modules():
    for name in ("fsdp_layer", "collective_matmul"):
        text, meta = hlo.tpu_example(name)
        assert text == (DATA / f"{name}.txt").read_text()
        assert meta == json.loads((DATA / f"{name}.meta.json").read_text())
    with pytest.raises(cl.CollectivesError, match="no TPU example 'x'; the package has"):
        hlo.tpu_example("x")


def test_a_collective_in_an_unknown_fusion_is_named_not_dropped():
    text = """HloModule m, num_partitions=4
%fused (p: f32[8]) -> f32[32] {
  %p = f32[8]{0} parameter(0)
  %ag = f32[32]{0} all-gather(%p), channel_id=1, replica_groups={{0,1,2,3}}, dimensions={0}, use_global_device_ids=true
  ROOT %n = f32[32]{0} negate(%ag)
}
ENTRY %main (x: f32[8]) -> f32[32] {
  %x = f32[8]{0} parameter(0)
  ROOT %f = f32[32]{0} fusion(%x), kind=kCustom, calls=%fused
}
"""
    module = parse_hlo(text)
    (c,) = module
    assert (c.name, c.kind, c.nbytes, c.line) == ("ag", "all_gather", 128, 9)
    assert "inside fusion %f (calls %fused), a fusion the reader does not know" in c.note
    assert module.notes == ("line 9: all-gather %ag " + c.note,)
    assert "line 9: all-gather %ag inside fusion %f" in str(module)


def test_a_bf16_operand_summed_into_f32_counts_the_f32_bytes():
    # what the TPU compiler writes for a psum of f32 over values gathered in bf16
    module = parse_hlo("""HloModule m, num_partitions=4
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %main (p: bf16[2048,4096]) -> f32[2048,4096] {
  %p = bf16[2048,4096]{1,0} parameter(0)
  ROOT %ar = f32[2048,4096]{1,0} all-reduce(%p), channel_id=1, replica_groups={{0,1,2,3}}, use_global_device_ids=true, to_apply=%add
}""")
    (c,) = module
    assert c.widens and c.nbytes == 2048 * 4096 * 4 and c.operand_bytes == 2048 * 4096 * 2
    with pytest.raises(cl.CollectivesError, match="have different element types"):
        parse_hlo(module_text := """HloModule m, num_partitions=4
ENTRY %main (p: f32[8]) -> bf16[32] {
  %p = f32[8]{0} parameter(0)
  ROOT %ag = bf16[32]{0} all-gather(%p), channel_id=1, replica_groups={{0,1,2,3}}, dimensions={0}, use_global_device_ids=true
}""")
    assert module_text


def test_a_permute_is_a_schedule_the_library_checks():
    # the collective matmul's pairs: rings of 4 along y on a v5e 4x4 slice
    cm, _, _ = load("collective_matmul")
    topo = cl.tpu_slice("v5e", "4x4")
    pairs = cm[0].source_target_pairs
    sched = hlo.permute_schedule(topo, pairs)
    assert "checked" in str(cl.check(sched))
    nbytes = cm[0].nbytes
    simulated = cl.simulate(sched, topo, len(pairs) * nbytes // topo.num_ranks).time
    assert simulated == pytest.approx(hlo.time_permute(topo, pairs, nbytes).time, rel=1e-9)
    with pytest.raises(cl.CollectivesError, match=r"pair \(3, 3\) is not two distinct ranks"):
        hlo.permute_schedule(topo, [(3, 3)])
