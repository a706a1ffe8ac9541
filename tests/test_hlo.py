"""The HLO reader: checked-in dumps, modules JAX compiles now, and JAX's collective
results against the library's replay of the same collectives on the same data.

Everything that needs JAX runs in one subprocess (``JAX_SCRIPT``) with 8 CPU
devices, so the XLA flag is set before JAX starts whatever this process
imported before; it returns its results as JSON.
"""

from __future__ import annotations

import doctest
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import collectives_lib as cl
from collectives_lib.errors import CollectivesError
from collectives_lib.hlo import Array, mesh_axes, parse_hlo, parse_mesh

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "hlo"
MESH = {"x": 4, "y": 2}
X = ((0, 2, 4, 6), (1, 3, 5, 7))            # groups over x on the 4x2 mesh
Y = ((0, 1), (2, 3), (4, 5), (6, 7))        # over y
XY = ((0, 1, 2, 3, 4, 5, 6, 7),)            # over both
SHIFT_X = ((0, 2), (2, 4), (4, 6), (6, 0), (1, 3), (3, 5), (5, 7), (7, 1))


def test_doctests():
    import importlib
    attempted = 0
    for part in ("", ".text", ".groups", ".mesh", ".parse", ".timing"):
        result = doctest.testmod(importlib.import_module("collectives_lib.hlo" + part),
                                 optionflags=doctest.ELLIPSIS)
        assert result.failed == 0, part
        attempted += result.attempted
    assert attempted >= 12


# ---------------------------------------------------------------------------
# the checked-in dumps
# ---------------------------------------------------------------------------

def row(c, mesh=MESH):
    """One collective as a comparable tuple."""
    return (c.name, c.kind, " ".join(map(str, c.operands)), " ".join(map(str, c.results)),
            c.dtype, c.operand_bytes, c.nbytes, c.dimension,
            c.source_target_pairs if c.kind == "collective_permute" else c.replica_groups,
            mesh_axes(c, mesh), c.reduction, c.repeats)


#   name, kind, operands, results, dtype, operand bytes, nbytes, dimension, groups, axes,
#   reduction, repeats
DUMPS = {
    "all_gather.txt": [
        # bf16 in the program; XLA's CPU backend runs the collective in f32
        ("all_gather.3", "all_gather", "f32[8,4]", "f32[32,4]", "f32", 128, 512, 0, X, ("x",),
         None, 1)],
    "reduce_scatter.txt": [
        ("reduce_scatter.7", "reduce_scatter", "f32[4,16]", "f32[4,8]", "f32", 256, 256, 1, Y,
         ("y",), "add", 1)],
    "all_reduce.txt": [
        ("psum_invariant.7", "all_reduce", "f32[4,4]", "f32[4,4]", "f32", 64, 64, None, XY,
         ("x", "y"), "add", 1),
        ("pmax.7", "all_reduce", "s32[2,4]", "s32[2,4]", "s32", 32, 32, None, X, ("x",),
         "maximum", 1)],
    "all_to_all.txt": [
        ("all-to-all", "all_to_all", " ".join(["f32[4,2]"] * 4), " ".join(["f32[4,2]"] * 4),
         "f32", 128, 128, None, X, ("x",), None, 1)],
    "collective_permute.txt": [
        ("ppermute.3", "collective_permute", "s32[4,4]", "s32[4,4]", "s32", 64, 64, None,
         SHIFT_X, ("x",), None, 1)],
    "matmul_all_reduce.txt": [
        ("all-reduce", "all_reduce", "f32[16,8]", "f32[16,8]", "f32", 512, 512, None, X, ("x",),
         "add", 1)],
    "matmul_all_reduce_slice.txt": [
        ("all-reduce", "all_reduce", "f32[16,8]", "f32[16,8]", "f32", 512, 512, None, X, ("x",),
         "add", 1)],
    "matmul_reduce_scatter.txt": [
        ("reduce_scatter.7", "reduce_scatter", "f32[16,8]", "f32[4,8]", "f32", 512, 512, 0, X,
         ("x",), "add", 1)],
    "matmul_all_gather.txt": [
        ("all-gather", "all_gather", "f32[32,2]", "f32[32,8]", "f32", 256, 1024, 1, X, ("x",),
         None, 1)],
    "matmul_2d.txt": [
        ("all-reduce", "all_reduce", "f32[4,8]", "f32[4,8]", "f32", 128, 128, None, Y, ("y",),
         "add", 1)],
    "fsdp.txt": [
        ("all_gather.6", "all_gather", "f32[4,32]", "f32[16,32]", "f32", 512, 2048, 0, X, ("x",),
         None, 1),
        ("all_gather.7", "all_gather", "f32[8,16]", "f32[32,16]", "f32", 512, 2048, 0, X, ("x",),
         None, 1),
        ("psum_invariant.21", "all_reduce", "f32[]", "f32[]", "f32", 4, 4, None, XY, ("x", "y"),
         "add", 1),
        # XLA combined both weight gradients' all-reduce over y into one tuple all-reduce
        ("all-reduce", "all_reduce", "f32[16,32] f32[32,16]", "f32[16,32] f32[32,16]", "f32",
         4096, 4096, None, Y, ("y",), "add", 1),
        ("reduce_scatter.14", "reduce_scatter", "f32[16,32]", "f32[4,32]", "f32", 2048, 2048, 0,
         X, ("x",), "add", 1),
        ("reduce_scatter.15", "reduce_scatter", "f32[32,16]", "f32[8,16]", "f32", 2048, 2048, 0,
         X, ("x",), "add", 1)],
    "fsdp_scan.cpu_after_optimizations.txt": [
        ("all_gather.6", "all_gather", "f32[4,32]", "f32[16,32]", "f32", 512, 2048, 0, X, ("x",),
         None, 3),
        ("all_gather.7", "all_gather", "f32[8,16]", "f32[32,16]", "f32", 512, 2048, 0, X, ("x",),
         None, 3),
        ("all-reduce", "all_reduce", "f32[16,32] f32[32,16]", "f32[16,32] f32[32,16]", "f32",
         4096, 4096, None, Y, ("y",), "add", 3),
        ("reduce_scatter.22", "reduce_scatter", "f32[16,32]", "f32[4,32]", "f32", 2048, 2048, 0,
         X, ("x",), "add", 3),
        ("reduce_scatter.23", "reduce_scatter", "f32[32,16]", "f32[8,16]", "f32", 2048, 2048, 0,
         X, ("x",), "add", 3),
        ("psum_invariant.23", "all_reduce", "f32[]", "f32[]", "f32", 4, 4, None, XY, ("x", "y"),
         "add", 1)],
    "collectives.before_optimizations.txt": [
        ("psum_invariant.5", "all_reduce", "bf16[16,4]", "bf16[16,4]", "bf16", 128, 128, None, X,
         ("x",), "add", 1),
        ("all_gather.1", "all_gather", "bf16[16,4]", "bf16[32,4]", "bf16", 128, 256, 0, Y, ("y",),
         None, 1),
        ("reduce_scatter.5", "reduce_scatter", "bf16[16,4]", "bf16[2,4]", "bf16", 128, 128, 0, XY,
         ("x", "y"), "add", 1),
        ("all_to_all.1", "all_to_all", "bf16[16,4]", "bf16[16,4]", "bf16", 128, 128, 0, X, ("x",),
         None, 1),
        ("ppermute.1", "collective_permute", "bf16[16,4]", "bf16[16,4]", "bf16", 128, 128, None,
         SHIFT_X, ("x",), None, 1)],
}


def test_every_dump_is_tested():
    assert sorted(p.name for p in DATA.glob("*.txt")) == sorted(DUMPS)


@pytest.mark.parametrize("name", sorted(DUMPS), ids=lambda n: n.split(".")[0])
def test_dump(name):
    module = parse_hlo((DATA / name).read_text())
    assert [row(c) for c in module] == DUMPS[name]
    assert module.num_devices == 8
    for c in module:
        assert c.num_devices == 8 and not c.is_async


def test_dumps_name_their_jax():
    for path in DATA.glob("*.txt"):
        if path.name.endswith(".cpu_after_optimizations.txt"):
            continue                      # written by XLA itself; README.md says which JAX
        first = path.read_text().splitlines()[0]
        assert first.startswith("// ") and "jax 0.10.2, jaxlib 0.10.2, 8 CPU devices" in first
    assert "jax 0.10.2 and jaxlib 0.10.2" in (DATA / "README.md").read_text()


def test_dump_details():
    fsdp = parse_hlo((DATA / "fsdp.txt").read_text())
    assert fsdp.name == "jit_local" and fsdp.num_partitions == 8 and fsdp.replica_count == 1
    assert fsdp.counts() == {"all_gather": 2, "all_reduce": 2, "reduce_scatter": 2}
    gather = fsdp[0]
    assert (gather.channel_id, gather.use_global_device_ids, gather.to_apply) == (1, True, None)
    assert gather.computation == "main.0_spmd"
    assert (DATA / "fsdp.txt").read_text().splitlines()[gather.line - 1].lstrip().startswith(
        "%all_gather.6 = f32[16,32]{1,0} all-gather(")
    assert fsdp[3].to_apply == "region_2.0" and fsdp[3].reduction == "add"
    scan = parse_hlo((DATA / "fsdp_scan.cpu_after_optimizations.txt").read_text())
    assert [c.computation for c in scan][:2] == ["region_0.1_spmd"] * 2
    # unoptimized text: no num_partitions in the header, collectives in the shard_map body
    before = parse_hlo((DATA / "collectives.before_optimizations.txt").read_text())
    assert before.num_partitions == 8
    assert {c.computation for c in before} == {"xla.sdy.manual_computation_body.3"}
    # the mesh form of replica groups, as jit's partitioner writes it
    text = (DATA / "matmul_all_gather.txt").read_text()
    assert "replica_groups=mesh['axis_0'=1,'axis_1'=4,'axis_2'=2] {'axis_1'}" in text


def test_module_table():
    module = parse_hlo((DATA / "fsdp_scan.cpu_after_optimizations.txt").read_text())
    assert str(module).splitlines() == [
        "HloModule jit_local: 6 collectives on 8 devices",
        "name               kind            operands                result                  "
        "groups  nbytes  repeats",
        "all_gather.6       all_gather      f32[4,32]               f32[16,32]              "
        "2 x 4   2048    3",
        "all_gather.7       all_gather      f32[8,16]               f32[32,16]              "
        "2 x 4   2048    3",
        "all-reduce         all_reduce      f32[16,32], f32[32,16]  f32[16,32], f32[32,16]  "
        "4 x 2   4096    3",
        "reduce_scatter.22  reduce_scatter  f32[16,32]              f32[4,32]               "
        "2 x 4   2048    3",
        "reduce_scatter.23  reduce_scatter  f32[32,16]              f32[8,16]               "
        "2 x 4   2048    3",
        "psum_invariant.23  all_reduce      f32[]                   f32[]                   "
        "1 x 8   4       1",
    ]
    assert str(module[2]) == ("all-reduce: all_reduce f32[16,32], f32[32,16] -> f32[16,32], "
                              "f32[32,16] over 4 groups of 2, 4096 bytes, 3 times")


# ---------------------------------------------------------------------------
# hand-written modules: forms the CPU backend does not emit (every snippet is
# also parsed by XLA's own HLO parser in the JAX subprocess)
# ---------------------------------------------------------------------------

ASYNC = """\
HloModule gpu_style, num_partitions=8

%add (a: bf16[], b: bf16[]) -> bf16[] {
  %a = bf16[] parameter(0)
  %b = bf16[] parameter(1)
  ROOT %sum = bf16[] add(%a, %b)
}

%wrapped_reduce_scatter (x: bf16[64,8]) -> bf16[8,8] {
  %x = bf16[64,8]{1,0} parameter(0)
  ROOT %rs = bf16[8,8]{1,0} reduce-scatter(%x), channel_id=4, replica_groups=[1,8]<=[8], use_global_device_ids=true, dimensions={0}, to_apply=%add
}

ENTRY %main (p: bf16[64,8]) -> (bf16[512,8], bf16[64,8], bf16[64,8], bf16[8,8], bf16[64,8]) {
  %p = bf16[64,8]{1,0} parameter(0)
  %ags = (bf16[64,8]{1,0}, bf16[512,8]{1,0}) all-gather-start(%p), channel_id=1, replica_groups=[1,8]<=[8], dimensions={0}, use_global_device_ids=true
  %agd = bf16[512,8]{1,0} all-gather-done(%ags)
  %ars = bf16[64,8]{1,0} all-reduce-start(%p), channel_id=2, replica_groups=[2,4]<=[8], use_global_device_ids=true, to_apply=%add
  %ard = bf16[64,8]{1,0} all-reduce-done(%ars)
  %cps = (bf16[64,8]{1,0}, bf16[64,8]{1,0}, u32[], u32[]) collective-permute-start(%p), channel_id=3, source_target_pairs={{0,1},{1,2},{2,3},{3,4},{4,5},{5,6},{6,7},{7,0}}
  %cpd = bf16[64,8]{1,0} collective-permute-done(%cps)
  %rss = ((bf16[64,8]{1,0}), bf16[8,8]{1,0}) async-start(%p), calls=%wrapped_reduce_scatter
  %rsd = bf16[8,8]{1,0} async-done(%rss)
  %a2s = ((bf16[64,8]{1,0}), bf16[64,8]{1,0}) all-to-all-start(%p), channel_id=5, replica_groups=[4,2]<=[2,4]T(1,0), dimensions={0}
  %a2d = bf16[64,8]{1,0} all-to-all-done(%a2s)
  ROOT %t = (bf16[512,8]{1,0}, bf16[64,8]{1,0}, bf16[64,8]{1,0}, bf16[8,8]{1,0}, bf16[64,8]{1,0}) tuple(%agd, %ard, %cpd, %rsd, %a2d)
}
"""

GROUPS = """\
HloModule groups, num_partitions=8

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %sum = f32[] add(%a, %b)
}

ENTRY %main (p: f32[8]) -> f32[8] {
  %p = f32[8]{0} parameter(0)
  %explicit = f32[8]{0} all-reduce(%p), channel_id=1, replica_groups={{0,1},{2,3},{4,5},{6,7}}, use_global_device_ids=true, to_apply=%add
  %everyone = f32[8]{0} all-reduce(%p), channel_id=2, replica_groups={}, use_global_device_ids=true, to_apply=%add
  %iota = f32[8]{0} all-reduce(%p), channel_id=3, replica_groups=[2,4]<=[8], use_global_device_ids=true, to_apply=%add
  %iota_transposed = f32[8]{0} all-reduce(%p), channel_id=4, replica_groups=[4,2]<=[2,4]T(1,0), use_global_device_ids=true, to_apply=%add
  %mesh_x = f32[8]{0} all-reduce(%p), channel_id=5, replica_groups=mesh['x'=4,'y'=2] {'x'}, use_global_device_ids=true, to_apply=%add
  %mesh_listed_ids = f32[8]{0} all-reduce(%p), channel_id=6, replica_groups=mesh['x'=4,'y'=2], device_ids=(7,6,5,4,3,2,1,0) {'y'}, use_global_device_ids=true, to_apply=%add
  %mesh_iota_ids = f32[8]{0} all-reduce(%p), channel_id=7, replica_groups=mesh['axis_0'=8,'axis_1'=1], device_ids=([4,2]T(1,0)) {'axis_0'}, use_global_device_ids=true, to_apply=%add
  %sub_major = f32[8]{0} all-reduce(%p), channel_id=8, replica_groups=mesh['x'=4,'y'=2] {'x':(1)2}, use_global_device_ids=true, to_apply=%add
  %sub_minor_and_y = f32[8]{0} all-reduce(%p), channel_id=9, replica_groups=mesh['x'=4,'y'=2] {'x':(2)2,'y'}, use_global_device_ids=true, to_apply=%add
  ROOT %sub_two = f32[8]{0} all-reduce(%p), channel_id=10, replica_groups=mesh['a'=8] {'a':(1)2,'a':(4)2}, use_global_device_ids=true, to_apply=%add
}
"""

SHAPES = """\
HloModule shapes, num_partitions=4

%add (a: f64[], b: f64[]) -> f64[] {
  %a = f64[] parameter(0)
  %b = f64[] parameter(1)
  ROOT %sum = f64[] add(%a, %b)
}

%addf (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}

ENTRY %main (a: f16[8,128], b: u8[32], c: pred[4], d: f64[2], e: f64[6], f: f8e4m3fn[16], g: s4[16], h: f32[<=8,4]) -> f16[32,128] {
  %a = f16[8,128]{1,0:T(8,128)(2,1)} parameter(0)
  %b = u8[32]{0} parameter(1)
  %c = pred[4]{0} parameter(2)
  %d = f64[2]{0} parameter(3)
  %e = f64[6]{0} parameter(4)
  %f = f8e4m3fn[16]{0} parameter(5)
  %g = s4[16]{0} parameter(6)
  %h = f32[<=8,4]{1,0} parameter(7)
  %typed = f16[32,128]{1,0:T(8,128)(2,1)} all-gather(f16[8,128]{1,0:T(8,128)(2,1)} %a), channel_id=1, replica_groups={{0,1,2,3}}, dimensions={0}, use_global_device_ids=true
  %combined = (u8[128]{0}, pred[16]{0}) all-gather(%b, %c), channel_id=2, replica_groups={{0,1,2,3}}, dimensions={0}, use_global_device_ids=true
  %six = (f64[2]{0}, f64[6]{0}, f64[2]{0}, f64[6]{0}, f64[2]{0}, /*index=5*/f64[6]{0}) all-reduce(%d, %e, %d, %e, %d, %e), channel_id=3, replica_groups={{0,1},{2,3}}, use_global_device_ids=true, to_apply=%add
  %fp8 = f8e4m3fn[16]{0} collective-permute(%f), channel_id=4, source_target_pairs={{0,1},{1,0},{2,3},{3,2}}
  %int4 = s4[16]{0} all-to-all(%g), channel_id=5, replica_groups={{0,1,2,3}}, dimensions={0}
  %bounded = f32[<=8,4]{1,0} all-reduce(%h), channel_id=6, replica_groups={}, use_global_device_ids=true, to_apply=%addf
  %bcast = u8[32]{0} collective-broadcast(%b), channel_id=7, replica_groups={{0,1,2,3}}
  ROOT %r = f16[32,128]{1,0:T(8,128)(2,1)} copy(%typed)
}
"""

REPLICAS = """\
HloModule pmap_f, replica_count=2, num_partitions=2

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %sum = f32[] add(%a, %b)
}

ENTRY %main (p: f32[8]) -> (f32[8], f32[8], f32[8], f32[32], f32[8]) {
  %p = f32[8]{0} parameter(0)
  %cross_replica = f32[8]{0} all-reduce(%p), replica_groups={{0,1}}, to_apply=%add
  %cross_partition = f32[8]{0} all-to-all(%p), channel_id=1, replica_groups={{0,1}}, dimensions={0}
  %replica_and_partition = f32[8]{0} all-reduce(%p), channel_id=2, replica_groups={{0},{1}}, use_global_device_ids=false, to_apply=%add
  %everyone = f32[32]{0} all-gather(%p), channel_id=3, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=false
  %swap = f32[8]{0} collective-permute(%p), channel_id=4, source_target_pairs={{0,1},{1,0}}
  ROOT %t = (f32[8]{0}, f32[8]{0}, f32[8]{0}, f32[32]{0}, f32[8]{0}) tuple(%cross_replica, %cross_partition, %replica_and_partition, %everyone, %swap)
}
"""

LOOPS = """\
HloModule loops, num_partitions=2

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %sum = f32[] add(%a, %b)
}

%body (s: (s32[], f32[4])) -> (s32[], f32[4]) {
  %s = (s32[], f32[4]{0}) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %v = f32[4]{0} get-tuple-element(%s), index=1
  %in_loop = f32[4]{0} all-reduce(%v), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=%add
  %one = s32[] constant(1)
  %next = s32[] add(%i, %one)
  ROOT %out = (s32[], f32[4]{0}) tuple(%next, %in_loop)
}

%cond (c: (s32[], f32[4])) -> pred[] {
  %c = (s32[], f32[4]{0}) parameter(0)
  %j = s32[] get-tuple-element(%c), index=0
  %five = s32[] constant(5)
  ROOT %lt = pred[] compare(%j, %five), direction=LT
}

%body2 (st2: (s32[], f32[4])) -> (s32[], f32[4]) {
  %st2 = (s32[], f32[4]{0}) parameter(0)
  %i2 = s32[] get-tuple-element(%st2), index=0
  %v2 = f32[4]{0} get-tuple-element(%st2), index=1
  %in_unknown_loop = f32[4]{0} all-reduce(%v2), channel_id=2, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=%add
  ROOT %out2 = (s32[], f32[4]{0}) tuple(%i2, %in_unknown_loop)
}

%cond2 (c2: (s32[], f32[4])) -> pred[] {
  %c2 = (s32[], f32[4]{0}) parameter(0)
  %k = s32[] get-tuple-element(%c2), index=0
  %ten = s32[] constant(10)
  ROOT %lt2 = pred[] compare(%k, %ten), direction=LT
}

%branch (q: f32[4]) -> f32[4] {
  %q = f32[4]{0} parameter(0)
  ROOT %in_branch = f32[4]{0} all-reduce(%q), channel_id=3, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=%add
}

%other (q2: f32[4]) -> f32[4] {
  ROOT %q2 = f32[4]{0} parameter(0)
}

ENTRY %main (p: f32[4], flag: pred[]) -> (f32[4], f32[4], f32[4]) {
  %p = f32[4]{0} parameter(0)
  %flag = pred[] parameter(1)
  %zero = s32[] constant(0)
  %init = (s32[], f32[4]{0}) tuple(%zero, %p)
  %w = (s32[], f32[4]{0}) while(%init), condition=%cond, body=%body, backend_config={"known_trip_count":{"n":"5"}}
  %w2 = (s32[], f32[4]{0}) while(%init), condition=%cond2, body=%body2
  %r1 = f32[4]{0} get-tuple-element(%w), index=1
  %r2 = f32[4]{0} get-tuple-element(%w2), index=1
  %r3 = f32[4]{0} conditional(%flag, %p, %p), true_computation=%branch, false_computation=%other
  ROOT %t = (f32[4]{0}, f32[4]{0}, f32[4]{0}) tuple(%r1, %r2, %r3)
}
"""

SNIPPETS = {"async": ASYNC, "groups": GROUPS, "shapes": SHAPES, "replicas": REPLICAS,
            "loops": LOOPS}


def test_async_pairs_count_once():
    module = parse_hlo(ASYNC)
    assert [(c.name, c.kind, c.opcode, str(c.results[0]), c.nbytes) for c in module] == [
        ("ags", "all_gather", "all-gather-start", "bf16[512,8]", 8192),
        ("ars", "all_reduce", "all-reduce-start", "bf16[64,8]", 1024),
        ("cps", "collective_permute", "collective-permute-start", "bf16[64,8]", 1024),
        ("rss", "reduce_scatter", "async-start", "bf16[8,8]", 1024),
        ("a2s", "all_to_all", "all-to-all-start", "bf16[64,8]", 1024),
    ]
    assert all(c.is_async for c in module)
    rs = module[3]
    # the wrapped instruction's attributes; the wrapped computation is not counted again
    assert (rs.replica_groups, rs.dimension, rs.channel_id, rs.reduction, rs.computation) == (
        XY, 0, 4, "add", "main")
    assert module[1].replica_groups == ((0, 1, 2, 3), (4, 5, 6, 7))
    assert module[4].replica_groups == ((0, 4), (1, 5), (2, 6), (3, 7))
    assert module[2].source_target_pairs == tuple((i, (i + 1) % 8) for i in range(8))
    assert [mesh_axes(c, {"a": 2, "b": 4}) for c in module] == [
        ("a", "b"), ("b",), ("a", "b"), ("a", "b"), ("a",)]


def test_replica_group_forms():
    groups = {c.name: c.replica_groups for c in parse_hlo(GROUPS)}
    assert groups == {
        "explicit": Y,
        "everyone": XY,
        "iota": ((0, 1, 2, 3), (4, 5, 6, 7)),
        "iota_transposed": ((0, 4), (1, 5), (2, 6), (3, 7)),
        "mesh_x": X,
        "mesh_listed_ids": ((7, 6), (5, 4), (3, 2), (1, 0)),
        "mesh_iota_ids": ((0, 2, 4, 6, 1, 3, 5, 7),),
        "sub_major": ((0, 4), (1, 5), (2, 6), (3, 7)),      # x's major half: x in {0, 2}, ...
        "sub_minor_and_y": ((0, 1, 2, 3), (4, 5, 6, 7)),    # x's minor half and y
        "sub_two": ((0, 1, 4, 5), (2, 3, 6, 7)),            # bits 0 and 2 of a
    }
    axes = {c.name: _axes_or_none(c) for c in parse_hlo(GROUPS)}
    assert axes == {
        "explicit": ("y",), "everyone": ("x", "y"), "iota": ("x:(2)2", "y"),
        "iota_transposed": ("x:(1)2",),
        "mesh_x": ("x",), "mesh_listed_ids": ("y",), "mesh_iota_ids": ("y", "x"),
        # sub-axes, as the mesh form writes them: x's major half, its minor half and y, ...
        "sub_major": ("x:(1)2",), "sub_minor_and_y": ("x:(2)2", "y"), "sub_two": ("x:(1)2", "y"),
    }


def _axes_or_none(c):
    try:
        return mesh_axes(c, MESH)
    except CollectivesError:
        return None


def test_element_types_layouts_and_tuples():
    m = {c.name: c for c in parse_hlo(SHAPES)}
    assert [(n, c.kind, c.dtype, c.element_size, c.operand_bytes, c.result_bytes, c.nbytes)
            for n, c in m.items()] == [
        ("typed", "all_gather", "f16", 2.0, 2048, 8192, 8192),
        ("combined", "all_gather", "u8+pred", 1.0, 36, 144, 144),
        ("six", "all_reduce", "f64", 8.0, 192, 192, 192),
        ("fp8", "collective_permute", "f8e4m3fn", 1.0, 16, 16, 16),
        ("int4", "all_to_all", "s4", 0.5, 8, 8, 8),
        ("bounded", "all_reduce", "f32", 4.0, 128, 128, 128),   # a dynamic dim at its bound
        ("bcast", "broadcast", "u8", 1.0, 32, 32, 32),
    ]
    assert m["combined"].results == (Array("u8", (128,)), Array("pred", (16,)))
    assert len(m["six"].operands) == 6 and m["six"].replica_groups == ((0, 1), (2, 3))
    assert m["bounded"].replica_groups == ((0, 1, 2, 3),)


def test_bytes_per_element():
    cases = {"pred": 1, "s8": 1, "u8": 1, "f8e4m3fn": 1, "f8e5m2": 1, "bf16": 2, "f16": 2,
             "s32": 4, "u32": 4, "f32": 4, "f64": 8, "s64": 8, "c64": 8, "c128": 16}
    assert {t: Array(t, (3, 5)).nbytes for t in cases} == {t: 15 * b for t, b in cases.items()}
    assert Array("s4", (3,)).nbytes == 2 and Array("f4e2m1fn", (8,)).nbytes == 4
    assert Array("f32", ()).nbytes == 4 and str(Array("f32", ())) == "f32[]"


def test_replicas_and_partitions():
    """Groups are global device ids (replica * num_partitions + partition) in every mode."""
    module = parse_hlo(REPLICAS)
    assert (module.replica_count, module.num_partitions, module.num_devices) == (2, 2, 4)
    got = {c.name: c.source_target_pairs or c.replica_groups for c in module}
    assert got == {
        "cross_replica": ((0, 2), (1, 3)),               # replicas 0 and 1 of each partition
        "cross_partition": ((0, 1), (2, 3)),             # partitions 0 and 1 of each replica
        "replica_and_partition": ((0, 1), (2, 3)),       # each replica with all its partitions
        "everyone": ((0, 1, 2, 3),),
        "swap": ((0, 1), (1, 0), (2, 3), (3, 2)),
    }
    assert module[3].group_size == 4 and module[3].nbytes == 128
    assert mesh_axes(module[0], {"partition": 2, "replica": 2}, devices=[[0, 2], [1, 3]]) == (
        "replica",)


def test_loops_repeat_their_collectives():
    module = parse_hlo(LOOPS)
    assert [(c.name, c.computation, c.repeats) for c in module] == [
        ("in_loop", "body", 5), ("in_unknown_loop", "body2", None), ("in_branch", "branch", 1)]
    assert str(module[1]) == ("in_unknown_loop: all_reduce f32[4] -> f32[4] over 1 group of 2, "
                              "16 bytes, ? times")


def test_an_empty_module():
    module = parse_hlo("HloModule m, num_partitions=2\nENTRY %e (p: f32[]) -> f32[] {\n"
                       "  ROOT %p = f32[] parameter(0)\n}\n")
    assert len(module) == 0 and str(module) == "HloModule m: 0 collectives on 2 devices"


# ---------------------------------------------------------------------------
# meshes
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("groups, axes", [
    (Y, ("y",)), (X, ("x",)), (XY, ("x", "y")), (((0, 2, 4, 6, 1, 3, 5, 7),), ("y", "x")),
    (((1, 0), (3, 2), (5, 4), (7, 6)), ("y",)), (tuple((i,) for i in range(8)), ()),
], ids=["y", "x", "xy", "yx", "y_reversed", "singletons"])
def test_mesh_axes(groups, axes):
    assert mesh_axes(groups, MESH) == axes
    assert mesh_axes(groups, "x=4,y=2") == axes


def test_mesh_axes_three_axes_and_device_order():
    mesh = {"a": 2, "b": 2, "c": 2}
    assert mesh_axes([[0, 2], [1, 3], [4, 6], [5, 7]], mesh) == ("b",)
    assert mesh_axes([[0, 1, 4, 5], [2, 3, 6, 7]], mesh) == ("a", "c")
    assert mesh_axes([[0, 4, 1, 5], [2, 6, 3, 7]], mesh) == ("c", "a")
    # a mesh whose devices are numbered otherwise (as jax.make_mesh may on a real slice)
    devices = np.array([0, 2, 4, 6, 1, 3, 5, 7]).reshape(4, 2)
    assert mesh_axes([[0, 2], [4, 6], [1, 3], [5, 7]], MESH, devices=devices) == ("y",)
    # numbered row-major, the same groups are the minor half of x (x = 0,1 / 2,3)
    assert mesh_axes([[0, 2], [4, 6], [1, 3], [5, 7]], MESH) == ("x:(2)2",)
    with pytest.raises(CollectivesError):
        mesh_axes([[0, 3], [1, 2], [4, 7], [5, 6]], MESH)


def test_mesh_axes_of_a_permute():
    cp = parse_hlo((DATA / "collective_permute.txt").read_text())[0]
    assert mesh_axes(cp, MESH) == ("x",)
    assert mesh_axes(cp, {"x": 8}) == ("x",)


def test_parse_mesh():
    assert parse_mesh("x=4,y=2") == {"x": 4, "y": 2}
    assert list(parse_mesh("data=2, model=4")) == ["data", "model"]


# ---------------------------------------------------------------------------
# error messages
# ---------------------------------------------------------------------------

def module_with(line: str, extra: str = "") -> str:
    return ("HloModule bad, num_partitions=4\n\n"
            "%add (a: f32[], b: f32[]) -> f32[] {\n"
            "  %a = f32[] parameter(0)\n"
            "  %b = f32[] parameter(1)\n"
            "  ROOT %s = f32[] add(%a, %b)\n"
            "}\n\n"
            "ENTRY %main (p: f32[8,4]) -> f32[32,4] {\n"
            "  %p = f32[8,4]{1,0} parameter(0)\n"
            f"  {line}\n"
            f"{extra}"
            "}\n")


def spmd(head: str, rest: str) -> str:
    """An instruction as SPMD modules write it: a channel and global device ids."""
    return f"{head}, channel_id=1, use_global_device_ids=true, {rest}"


BAD = [
    ("all-gather-begin",
     "%ag = f32[32,4]{1,0} all-gather-begin(%p), replica_groups={{0,1,2,3}}, dimensions={0}",
     "line 11: all-gather-begin %ag: unknown collective op 'all-gather-begin'; known: "
     "all-gather, reduce-scatter, all-reduce, all-to-all, collective-permute, "
     "collective-broadcast, their -start/-done forms and async-start"),
    ("ragged",
     "%r = f32[8,4]{1,0} ragged-all-to-all(%p, %p, %p, %p, %p, %p), replica_groups={{0,1,2,3}}",
     "line 11: ragged-all-to-all %r: not supported: its per-peer sizes are operands known "
     "only at run time"),
    ("unequal_groups",
     spmd("%ar = f32[8,4]{1,0} all-reduce(%p)",
          "replica_groups={{0,1,2},{3}}, to_apply=%add"),
     "line 11: all-reduce %ar: replica_groups '{{0,1,2},{3}}' has groups of different sizes"),
    ("not_groups",
     spmd("%ar = f32[8,4]{1,0} all-reduce(%p)",
          "replica_groups={{0,1},{2,x}}, to_apply=%add"),
     "line 11: all-reduce %ar: replica_groups '{{0,1},{2,x}}' is not a list of groups like "
     "{{0,1},{2,3}}"),
    ("iota_count",
     spmd("%ar = f32[8,4]{1,0} all-reduce(%p)",
          "replica_groups=[3,4]<=[12], to_apply=%add"),
     "line 11: all-reduce %ar: replica_groups '[3,4]<=[12]' name device 11 but the module has 4 "
     "devices"),
    ("cross_replica",
     "%ar = f32[8,4]{1,0} all-reduce(%p), replica_groups={{0,1,2,3}}, to_apply=%add",
     "line 11: all-reduce %ar: replica_groups '{{0,1,2,3}}' name device 3 but the module has 1 "
     "replicas (without a channel_id the groups list replicas)"),
    ("iota_mismatch",
     spmd("%ar = f32[8,4]{1,0} all-reduce(%p)",
          "replica_groups=[2,3]<=[4], to_apply=%add"),
     "line 11: all-reduce %ar: replica_groups '[2,3]<=[4]': 2x3 is not 4 devices"),
    ("mesh_axis",
     spmd("%ar = f32[8,4]{1,0} all-reduce(%p)",
          "replica_groups=mesh['x'=2,'y'=2] {'z'}, to_apply=%add"),
     "line 11: all-reduce %ar: replica_groups \"mesh['x'=2,'y'=2] {'z'}\": 'z' is not an axis "
     "of the mesh (x, y)"),
    ("twice",
     spmd("%ar = f32[8,4]{1,0} all-reduce(%p)",
          "replica_groups={{0,1},{1,2}}, to_apply=%add"),
     "line 11: all-reduce %ar: replica_groups '{{0,1},{1,2}}' list a device twice"),
    ("no_dimensions",
     spmd("%ag = f32[32,4]{1,0} all-gather(%p)",
          "replica_groups={{0,1,2,3}}"),
     "line 11: all-gather %ag: no dimensions={...} attribute"),
    ("gather_shape",
     spmd("%ag = f32[16,4]{1,0} all-gather(%p)",
          "replica_groups={{0,1,2,3}}, dimensions={0}"),
     "line 11: all-gather %ag: result f32[16,4] is not 4 x f32[8,4] along dimension 0"),
    ("scatter_shape",
     spmd("%rs = f32[4,4]{1,0} reduce-scatter(%p)",
          "replica_groups={{0,1,2,3}}, dimensions={0}, to_apply=%add"),
     "line 11: reduce-scatter %rs: operand f32[8,4] is not 4 x f32[4,4] along dimension 0"),
    ("no_reduction",
     spmd("%ar = f32[8,4]{1,0} all-reduce(%p)",
          "replica_groups={{0,1,2,3}}"),
     "line 11: all-reduce %ar: no to_apply=%computation (the reduction)"),
    ("bad_reduction",
     spmd("%ar = f32[8,4]{1,0} all-reduce(%p)",
          "replica_groups={{0,1,2,3}}, to_apply=%mul"),
     "line 11: all-reduce %ar: to_apply=%mul names no computation in the module"),
    ("undefined_operand",
     spmd("%ar = f32[8,4]{1,0} all-reduce(%q)",
          "replica_groups={{0,1,2,3}}, to_apply=%add"),
     "line 11: all-reduce %ar: operand %q is not defined in the module"),
    ("element_type",
     spmd("%ar = f33[8,4]{1,0} all-reduce(%p)",
          "replica_groups={{0,1,2,3}}, to_apply=%add"),
     "line 11: all-reduce %ar: unknown element type 'f33' in shape 'f33[8,4]{1,0}'"),
    ("unbalanced",
     "%ar = f32[8,4]{1,0} all-reduce(%p, replica_groups={{0,1,2,3}}, to_apply=%add",
     "line 11: malformed all-reduce %ar: unbalanced '(' in '(%p, replica_groups={{0,1,2,3}}, "
     "to_apply=%add'"),
    ("pairs",
     "%cp = f32[8,4]{1,0} collective-permute(%p), source_target_pairs={{0,1},{1}}",
     "line 11: collective-permute %cp: source_target_pairs '{{0,1},{1}}' is not a list like "
     "{{0,1},{1,0}}"),
    ("no_pairs",
     "%cp = f32[8,4]{1,0} collective-permute(%p), channel_id=1",
     "line 11: collective-permute %cp: no source_target_pairs attribute"),
    ("tuple_all_to_all",
     "%a2a = (f32[8,4]{1,0}, f32[8,4]{1,0}) all-to-all(%p, %p), channel_id=1, replica_groups={{0,1,2,3}}",
     "line 11: all-to-all %a2a: a tuple all-to-all has one operand per device of the group: "
     "2 operands for groups of 4"),
    ("split",
     "%a2a = f32[8,4]{1,0} all-to-all(%p), replica_groups={{0,1,2,3}}, dimensions={1}, "
     "channel_id=x",
     "line 11: all-to-all %a2a: channel_id 'x' is not a whole number"),
    ("start_shape",
     "%ags = f32[32,4]{1,0} all-gather-start(%p), replica_groups={{0,1,2,3}}, dimensions={0}",
     "line 11: all-gather-start %ags: shape f32[32,4]{1,0} of an async start is not "
     "(operands, results, ...)"),
]


@pytest.mark.parametrize("line, message", [(b[1], b[2]) for b in BAD], ids=[b[0] for b in BAD])
def test_malformed_collectives(line, message):
    with pytest.raises(CollectivesError) as err:
        parse_hlo(module_with(line))
    assert str(err.value) == message


@pytest.mark.parametrize("text, message", [
    ("", "not HLO text: the text is empty"),
    ("x = jnp.ones(3)\nprint(x)", "not HLO text: no 'HloModule' line (the text starts "
                                  "'x = jnp.ones(3) print(x)')"),
    (b"module @jit_f {\n func.func public @main() {}}",
     "not HLO text: no 'HloModule' line (the text starts 'module @jit_f { func.func public @mai...')"),
    (42, "parse_hlo takes HLO text (a str), got int"),
    ("HloModule a\nHloModule b\n", "the text holds 2 HLO modules (lines 1, 2); pass one module "
                                   "at a time"),
    ("HloModule a, num_partitions=2\n%c (p: f32[]) -> f32[] {\n  ROOT %p = f32[] parameter(0)\n}",
     "HLO module a has no ENTRY computation"),
], ids=["empty", "python", "stablehlo", "not_text", "two_modules", "no_entry"])
def test_not_hlo(text, message):
    with pytest.raises(CollectivesError) as err:
        parse_hlo(text)
    assert str(err.value) == message


@pytest.mark.parametrize("call, message", [
    (lambda: mesh_axes([[0, 3], [1, 2]], {"x": 2, "y": 2}),
     "replica groups {{0,3},{1,2}} do not span any set of axes or sub-axes of mesh x=2,y=2"),
    (lambda: mesh_axes(X, {"x": 4, "y": 3}),
     "mesh x=4,y=3 has 12 devices but the replica groups {{0,2,4,6},{1,3,5,7}} cover 8"),
    (lambda: mesh_axes(parse_hlo(ASYNC)[0], {"x": 4, "y": 4}),
     "mesh x=4,y=4 has 16 devices but ags runs on a module of 8"),
    (lambda: mesh_axes([[0, 1], [2, 9]], {"x": 4}),
     "replica groups {{0,1},{2,9}} name devices outside 0..3 of mesh x=4"),
    (lambda: mesh_axes([[0, 1], [1, 2]], {"x": 4}),
     "replica groups {{0,1},{1,2}} list a device twice"),
    (lambda: mesh_axes([[0, 1]], {"x": 2}, devices=[0, 1, 2]),
     "devices has shape (3,) but mesh x=2 needs (2,)"),
    (lambda: mesh_axes([[0, 1]], {"x": 2}, devices=[0, 0]),
     "devices must hold each device id 0..1 once, got [0, 0]"),
    (lambda: mesh_axes([[0, 1]], {"x": 0}), "mesh axis 'x' must have a whole size >= 1, got 0"),
    (lambda: mesh_axes([[0, 1]], 8),
     "mesh must map axis names to sizes, like {'x': 4, 'y': 2} or 'x=4,y=2'; got 8"),
    (lambda: mesh_axes("0,1", {"x": 2}),
     "replica groups must be lists of device ids, got '0,1'"),
    (lambda: mesh_axes([[0, 3], [1, 2], [4, 7], [5, 6]], MESH),
     "replica groups {{0,3},{1,2},{4,7},{5,6}} do not span any set of axes or sub-axes of "
     "mesh x=4,y=2"),
    (lambda: mesh_axes([[0, 3], [1, 2], [4, 7], [5, 6]], MESH,
                       devices=np.arange(8).reshape(4, 2)[::-1]),
     "replica groups {{0,3},{1,2},{4,7},{5,6}} do not span any set of axes or sub-axes of "
     "mesh x=4,y=2 (devices [[6, 7], [4, 5], [2, 3], [0, 1]])"),
    (lambda: parse_mesh("x=4,y"), "mesh 'x=4,y' is not understood; write axis=size pairs like "
                                  "x=4,y=2"),
    (lambda: parse_mesh("x=4,x=2"), "mesh 'x=4,x=2' is not understood; write axis=size pairs "
                                    "like x=4,y=2"),
], ids=["groups", "sizes", "module_size", "outside", "twice", "devices_shape", "devices_ids",
        "axis_size", "mesh_type", "groups_type", "order", "order_devices", "parse", "parse_twice"])
def test_mesh_errors(call, message):
    with pytest.raises(CollectivesError) as err:
        call()
    assert str(err.value) == message


# ---------------------------------------------------------------------------
# JAX, in a subprocess with 8 CPU devices
# ---------------------------------------------------------------------------

JAX_SCRIPT = r'''
import json, os, sys
request = json.load(sys.stdin)
import numpy as np
import jax, jax.numpy as jnp
from jax import shard_map
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
from collectives_lib.hlo import parse_hlo, mesh_axes

out = {"devices": len(jax.devices()), "version": jax.__version__}
mesh = jax.make_mesh((4, 2), ("x", "y"))
out["mesh_devices"] = [[d.id for d in row] for row in mesh.devices]
a = jax.device_put(jnp.zeros((16, 16)), NamedSharding(mesh, P("x", "y")))   # local (4, 8)
OPS = {
    "psum": lambda axes: lambda v: jax.lax.psum(v, axes),
    "all_gather": lambda axes: lambda v: jax.lax.all_gather(v, axes, axis=0, tiled=True),
    "psum_scatter": lambda axes: lambda v: jax.lax.psum_scatter(v, axes, scatter_dimension=1,
                                                                tiled=True),
    "all_to_all": lambda axes: lambda v: jax.lax.all_to_all(v, axes, 1, 1, tiled=True),
}
out["live"] = {}
for op, make in OPS.items():
    for axes in ["x", "y", ["x", "y"]]:
        names = tuple(axes) if isinstance(axes, list) else axes
        f = jax.jit(shard_map(make(names), mesh=mesh, in_specs=P("x", "y"), out_specs=P("x", "y")))
        out["live"][f"{op}-{'-'.join(axes)}"] = f.lower(a).compile().as_text()

# mesh_axes reads a jax Mesh without importing jax; HLO groups name mesh positions
odd = Mesh(np.array(jax.devices())[[0, 2, 4, 6, 1, 3, 5, 7]].reshape(4, 2), ("x", "y"))
g = jax.jit(shard_map(lambda v: jax.lax.psum(v, "y"), mesh=odd, in_specs=P("x", "y"),
                      out_specs=P("x", "y")))
text = g.lower(jax.device_put(jnp.zeros((16, 16)), NamedSharding(odd, P("x", "y")))).compile().as_text()
out["odd_mesh"] = {"text": text, "axes": list(mesh_axes(parse_hlo(text)[0], odd)),
                   "device_ids": [[d.id for d in row] for row in odd.devices]}

# proof on data: per-device inputs in, per-device outputs out
line = jax.make_mesh((8,), ("x",))
def run(m, spec, fn, local):
    """local[d] is device d's input; returns every device's output as rows."""
    n = local.shape[0]
    glob = jax.device_put(jnp.asarray(local.reshape(n * local.shape[1]), jnp.float32),
                          NamedSharding(m, spec))
    y = jax.jit(shard_map(fn, mesh=m, in_specs=spec, out_specs=spec))(glob)
    return np.asarray(y).reshape(n, -1).tolist()
data = {k: np.array(v, dtype=np.float32) for k, v in request["inputs"].items()}
out["data"] = {
    "all_gather": run(line, P("x"), lambda v: jax.lax.all_gather(v, "x", tiled=True), data["block"]),
    "reduce_scatter": run(line, P("x"), lambda v: jax.lax.psum_scatter(v, "x", tiled=True), data["full"]),
    "all_reduce": run(line, P("x"), lambda v: jax.lax.psum(v, "x"), data["full"]),
    "all_to_all": run(line, P("x"), lambda v: jax.lax.all_to_all(v, "x", 0, 0, tiled=True), data["full"]),
}
both = ("x", "y")
spec2 = P(both)
out["data2"] = {
    "all_reduce": run(mesh, spec2, lambda v: jax.lax.psum(v, both), data["full2"]),
    "all_gather": run(mesh, spec2, lambda v: jax.lax.all_gather(v, both, tiled=True), data["block2"]),
    "reduce_scatter": run(mesh, spec2, lambda v: jax.lax.psum_scatter(v, both, tiled=True), data["full2"]),
}

# the checked-in dumps: what the pinned JAX compiles now
sys.path.insert(0, request["dumps"])
import make_dumps
out["fresh"] = {}
for program in make_dumps.OPTIMIZED + make_dumps.XLA_DUMPED:
    _, fn, args = program()
    name = program.__name__ + (".cpu_after_optimizations.txt" if program in make_dumps.XLA_DUMPED else ".txt")
    out["fresh"][name] = fn.lower(*args).compile().as_text()
for program in make_dumps.UNOPTIMIZED:
    _, fn, args = program()
    out["fresh"][program.__name__ + ".before_optimizations.txt"] = fn.lower(*args).as_text(dialect="hlo")

# the hand-written snippets, through XLA's own HLO parser
try:
    from jaxlib import _hlo
    check = _hlo.hlo_module_from_text
except (ImportError, AttributeError):
    check = None
out["xla_parses"] = {}
for name, snippet in request["snippets"].items():
    if check is None:
        out["xla_parses"][name] = "unavailable"
        continue
    try:
        check(snippet)
        out["xla_parses"][name] = "ok"
    except Exception as err:
        out["xla_parses"][name] = str(err)
print(json.dumps(out))
'''

E = 2                                     # elements per block in the proofs on data
RNG = np.random.default_rng(7)
INPUTS = {
    "block": RNG.integers(-50, 50, size=(8, E)).astype(float),          # one block per device
    "full": RNG.integers(-50, 50, size=(8, 8 * E)).astype(float),       # 8 blocks per device
    "block2": RNG.integers(-50, 50, size=(8, 2 * E)).astype(float),     # 2 parts of a block
    "full2": RNG.integers(-50, 50, size=(8, 16 * E)).astype(float),     # 16 slots per device
}


@pytest.fixture(scope="module")
def jax_run():
    pytest.importorskip("jax", reason="jax is not installed (pip install -r requirements.txt)")
    env = dict(os.environ)
    env["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
    env["JAX_PLATFORMS"] = "cpu"
    request = {"snippets": SNIPPETS, "dumps": str(DATA),
               "inputs": {k: v.tolist() for k, v in INPUTS.items()}}
    proc = subprocess.run([sys.executable, "-c", JAX_SCRIPT], input=json.dumps(request),
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    assert out["devices"] == 8
    return out


def test_jax_version_is_the_pinned_one(jax_run):
    pins = (ROOT / "requirements.txt").read_text().splitlines()
    assert f"jax=={jax_run['version']}" in pins and f"jaxlib=={jax_run['version']}" in pins


def test_xla_parses_every_snippet(jax_run):
    if "unavailable" in jax_run["xla_parses"].values():
        pytest.skip("this jaxlib has no jaxlib._hlo.hlo_module_from_text")
    assert jax_run["xla_parses"] == {name: "ok" for name in SNIPPETS}


@pytest.mark.parametrize("name", sorted(DUMPS), ids=lambda n: n.split(".")[0])
def test_dumps_are_what_jax_compiles_now(jax_run, name):
    """If this fails after a JAX upgrade, run tests/data/hlo/make_dumps.py and update DUMPS."""
    fresh = parse_hlo(jax_run["fresh"][name])
    assert [row(c) for c in fresh] == DUMPS[name]


KINDS = {"psum": "all_reduce", "all_gather": "all_gather", "psum_scatter": "reduce_scatter",
         "all_to_all": "all_to_all"}


@pytest.mark.parametrize("op", sorted(KINDS))
@pytest.mark.parametrize("axes", [("x",), ("y",), ("x", "y")], ids=["x", "y", "xy"])
def test_live_modules(jax_run, op, axes):
    module = parse_hlo(jax_run["live"][f"{op}-{'-'.join(axes)}"])
    assert len(module) == 1
    (c,) = module
    assert c.kind == KINDS[op]
    assert c.replica_groups == {("x",): X, ("y",): Y, ("x", "y"): XY}[axes]
    assert mesh_axes(c, MESH) == axes
    local = Array("f32", (4, 8))
    n = 8 if axes == ("x", "y") else MESH[axes[0]]
    if op == "all_to_all":   # the CPU backend splits it into one operand per peer
        assert c.operands == (Array("f32", (4, 8 // n)),) * n and c.dimension is None
    else:
        assert c.operands == (local,)
    want = {"psum": (4, 8), "all_gather": (4 * n, 8), "psum_scatter": (4, 8 // n),
            "all_to_all": (4, 8 // n)}[op]
    assert c.results[0].dims == want
    assert c.nbytes == (4 * n * 8 * 4 if op == "all_gather" else 4 * 8 * 4)


def test_groups_name_mesh_positions_not_device_ids(jax_run):
    """A mesh of devices [[0,2],[4,6],[1,3],[5,7]]: psum over y still groups positions
    {0,1},{2,3},...; the executable's device assignment maps positions to devices."""
    assert jax_run["mesh_devices"] == [[0, 1], [2, 3], [4, 5], [6, 7]]
    odd = jax_run["odd_mesh"]
    assert odd["device_ids"] == [[0, 2], [4, 6], [1, 3], [5, 7]]
    assert parse_hlo(odd["text"])[0].replica_groups == Y
    assert odd["axes"] == ["y"]


ALGORITHMS = ["ring", "bidirectional_ring"]


def replay_final(schedule, inputs):
    return cl.replay_inputs(schedule, inputs)[-1].values[: schedule.num_ranks]


def slots_per_block(schedule, n):
    """1 for a grid of blocks; 2 where every block is cut in halves (the bidirectional
    ring of an even number of ranks sends the block opposite its owner half each way)."""
    assert schedule.slot_shape[0] == n and schedule.num_slots % n == 0
    k = schedule.num_slots // n
    assert k in (1, 2) and E % k == 0
    return k


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_all_gather_matches_jax(jax_run, algorithm):
    schedule = cl.build("all_gather", cl.Ring(8, bandwidth=1e9), algorithm)
    k = slots_per_block(schedule, 8)
    x = INPUTS["block"]                                   # x[rank] is its block
    inputs = np.repeat(x[:, None, :], 8, axis=1)          # slot s of rank r: read only if s == r
    final = replay_final(schedule, inputs.reshape(8, 8 * k, E // k)).reshape(8, 8, E)
    jax_out = np.array(jax_run["data"]["all_gather"]).reshape(8, 8, E)
    assert np.array_equal(final, jax_out)
    assert np.array_equal(jax_out[3], x)                  # and both are the concatenation


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_reduce_scatter_matches_jax(jax_run, algorithm):
    schedule = cl.build("reduce_scatter", cl.Ring(8, bandwidth=1e9), algorithm)
    k = slots_per_block(schedule, 8)
    y = INPUTS["full"].reshape(8, 8, E)                   # y[rank, block]
    final = replay_final(schedule, y.reshape(8, 8 * k, E // k)).reshape(8, 8, E)
    jax_out = np.array(jax_run["data"]["reduce_scatter"])  # rank r's block r of the sum
    assert np.array_equal(final[np.arange(8), np.arange(8)], jax_out)
    assert np.array_equal(jax_out, y.sum(axis=0)[np.arange(8)])


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_all_reduce_matches_jax(jax_run, algorithm):
    schedule = cl.build("all_reduce", cl.Ring(8, bandwidth=1e9), algorithm)
    k = slots_per_block(schedule, 8)
    y = INPUTS["full"].reshape(8, 8, E)
    final = replay_final(schedule, y.reshape(8, 8 * k, E // k)).reshape(8, 8, E)
    jax_out = np.array(jax_run["data"]["all_reduce"]).reshape(8, 8, E)
    assert np.array_equal(final, jax_out)
    assert not np.array_equal(final[0], y[0])             # the data did move


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_all_to_all_matches_jax(jax_run, algorithm):
    schedule = cl.build("all_to_all", cl.Ring(8, bandwidth=1e9), algorithm)
    parts = schedule.slot_shape[2]
    assert schedule.slot_shape == (8, 8, parts)
    z = INPUTS["full"].reshape(8, 8, parts, E // parts)   # z[origin, destination, part]
    # slot (origin, destination, part) of rank r: read only where origin == r
    inputs = np.broadcast_to(z[None], (8,) + z.shape).reshape(8, 8 * 8 * parts, E // parts)
    final = replay_final(schedule, inputs).reshape(8, 8, 8, parts, E // parts)
    # rank d ends with what every origin sent it, in origin order: JAX's concatenation
    got = final[np.arange(8), :, np.arange(8)].reshape(8, 8 * E)
    assert np.array_equal(got, np.array(jax_run["data"]["all_to_all"]))


def test_two_axis_all_reduce_matches_jax(jax_run):
    """psum over both axes of the 4x2 mesh against multi_axis on a 4x2 torus: device d is
    mesh position divmod(d, 2), which is torus rank d; every slot is a piece of the array."""
    schedule = cl.build("all_reduce", cl.Torus((4, 2), bandwidth=1e9), "multi_axis")
    assert schedule.slot_shape == (4, 2, 2, 2)            # x, y, part, half (the ring of 4 splits)
    y = INPUTS["full2"].reshape(8, 32, E // 2)
    final = replay_final(schedule, y).reshape(8, 16, E)
    jax_out = np.array(jax_run["data2"]["all_reduce"]).reshape(8, 16, E)
    assert np.array_equal(final, jax_out)
    assert jax_run["mesh_devices"] == [[0, 1], [2, 3], [4, 5], [6, 7]]


def test_two_axis_all_gather_matches_jax(jax_run):
    """all_gather over (x, y): block (bx, by) is device 2*bx + by's, in two parts."""
    schedule = cl.build("all_gather", cl.Torus((4, 2), bandwidth=1e9), "multi_axis")
    assert schedule.slot_shape == (4, 2, 2, 2)            # x, y, part, half (the ring of 4 splits)
    x = INPUTS["block2"].reshape(8, 4, E // 2)             # x[rank, (part, half)]
    inputs = np.broadcast_to(x[:, None], (8, 8, 4, E // 2)).reshape(8, 32, E // 2)
    final = replay_final(schedule, inputs).reshape(8, 16, E)
    jax_out = np.array(jax_run["data2"]["all_gather"]).reshape(8, 16, E)
    assert np.array_equal(final, jax_out)


def test_two_axis_reduce_scatter_matches_jax(jax_run):
    schedule = cl.build("reduce_scatter", cl.Torus((4, 2), bandwidth=1e9), "multi_axis")
    y = INPUTS["full2"].reshape(8, 8, 2 * E)               # y[rank, block, parts x elements]
    final = replay_final(schedule, y.reshape(8, 32, E // 2)).reshape(8, 8, 2 * E)
    jax_out = np.array(jax_run["data2"]["reduce_scatter"])
    assert np.array_equal(final[np.arange(8), np.arange(8)], jax_out)
