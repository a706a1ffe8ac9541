"""collectives_lib.book.wire: HLO modules timed on topologies, replayed on JAX's own data,
and PyTorch's calls as collectives.

JAX runs in one subprocess with 8 CPU devices (XLA_FLAGS must be set before JAX is
imported); the subprocess only compiles and runs, and every check runs here.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import collectives_lib as cl
from collectives_lib import hlo, wire
from collectives_lib.errors import CollectivesError
from collectives_lib.hlo import parse_hlo

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "hlo"

JAX_SCRIPT = r'''
import json
import numpy as np
import jax, jax.numpy as jnp
from jax import shard_map
from jax.sharding import NamedSharding, PartitionSpec as P

out = {"devices": len(jax.devices()), "programs": {}}
for shape, names in (((4, 2), ("x", "y")), ((2, 4), ("data", "model"))):
    mesh = jax.make_mesh(shape, names)
    a0, a1 = names
    a = jax.device_put((jnp.arange(32 * 16, dtype=jnp.float32).reshape(32, 16) * 7) % 23,
                       NamedSharding(mesh, P(a0, a1)))
    ops = {
        "psum": (lambda v: jax.lax.psum(v, a0), {}),
        "psum_both": (lambda v: jax.lax.psum(v, (a0, a1)), {}),
        "all_gather": (lambda v: jax.lax.all_gather(v, a1, axis=1, tiled=True), {}),
        "all_gather_both": (lambda v: jax.lax.all_gather(v, (a0, a1), axis=0, tiled=True), {}),
        "psum_scatter": (lambda v: jax.lax.psum_scatter(v, a0, scatter_dimension=0, tiled=True), {}),
        "psum_scatter_yx": (lambda v: jax.lax.psum_scatter(v, (a1, a0), scatter_dimension=0,
                                                          tiled=True), {}),
        "all_to_all": (lambda v: jax.lax.all_to_all(v, a0, 1, 1, tiled=True), {}),
        "all_to_all_transpose": (lambda v: jax.lax.all_to_all(v, a1, 0, 1, tiled=True),
                                 {"split_axis": 0, "concat_axis": 1}),
    }
    devices = list(mesh.devices.ravel())          # partition id = position in the mesh
    def shards(arr):
        by = {s.device: np.asarray(s.data) for s in arr.addressable_shards}
        return [by[d].tolist() for d in devices]
    for op, (fn, kw) in ops.items():
        f = jax.jit(shard_map(fn, mesh=mesh, in_specs=P(a0, a1), out_specs=P(a0, a1)))
        out["programs"][f"{op}@{a0}"] = {
            "text": f.lower(a).as_text(dialect="hlo"),
            "compiled": f.lower(a).compile().as_text(),
            "inputs": shards(a), "outputs": shards(f(a)), "kw": kw,
            "mesh": dict(zip(names, shape)),
        }
print(json.dumps(out))
'''


@pytest.fixture(scope="module")
def jax_run():
    pytest.importorskip("jax", reason="jax is not installed (pip install -r requirements.txt)")
    env = dict(os.environ)
    env["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
    env["JAX_PLATFORMS"] = "cpu"
    proc = subprocess.run([sys.executable, "-c", JAX_SCRIPT], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    assert out["devices"] == 8
    return out["programs"]


TOPOLOGIES = {"x": cl.tpu_slice("v5e", "4x2"), "data": cl.GpuCluster("gb200-tray", 2)}
PROGRAMS = ["psum", "psum_both", "all_gather", "all_gather_both", "psum_scatter",
            "psum_scatter_yx", "all_to_all", "all_to_all_transpose"]


@pytest.mark.parametrize("mesh", ["x", "data"])
@pytest.mark.parametrize("op", PROGRAMS)
def test_jax_results_equal_the_replayed_schedule(jax_run, op, mesh):
    run = jax_run[f"{op}@{mesh}"]
    module = parse_hlo(run["text"])
    assert len(module) == 1
    inputs = [np.array(x) for x in run["inputs"]]
    got = wire.replay_collective(module[0], inputs, TOPOLOGIES[mesh], **run["kw"])
    want = [np.array(y) for y in run["outputs"]]
    assert [g.shape for g in got] == [w.shape for w in want]
    for d, (g, w) in enumerate(zip(got, want)):
        assert np.array_equal(g, w), (op, mesh, d)
    if module[0].kind != "all_gather":     # the data moved: a device's result is not its input
        assert not all(np.array_equal(g, x) for g, x in zip(got, inputs))


@pytest.mark.parametrize("mesh", ["x", "data"])
def test_compiled_modules_time_on_both_topologies(jax_run, mesh):
    topo = TOPOLOGIES[mesh]
    for op in PROGRAMS:
        run = jax_run[f"{op}@{mesh}"]
        timing = hlo.time_hlo(run["compiled"], topo, mesh=run["mesh"])
        assert timing.model == ("ideal" if mesh == "x" else "nccl")
        (row,) = timing.rows
        assert row.estimate is not None and row.estimate.time > 0
        assert timing.total == pytest.approx(row.estimate.time)
        assert row.estimate.bound.time <= row.estimate.time * (1 + 1e-9)
        names = list(run["mesh"])
        both = {"psum_both", "all_gather_both", "psum_scatter_yx"}
        want = tuple(names) if op in both else (names[0],) if op in (
            "psum", "psum_scatter", "all_to_all") else (names[1],)
        assert set(row.mesh_axes) == set(want)
        assert row.topology_axes == tuple(topo.axis_names) if op in both else len(
            row.topology_axes) == 1


def test_the_mesh_maps_onto_the_topologys_axes():
    module = parse_hlo((DATA / "fsdp.txt").read_text())
    timing = hlo.time_hlo(module, cl.tpu_slice("v5e", "4x2"), mesh="x=4,y=2")
    axes = [(r.collective.kind, r.mesh_axes, r.topology_axes) for r in timing.rows]
    assert axes == [("all_gather", ("x",), ("x",)), ("all_gather", ("x",), ("x",)),
                    ("all_reduce", ("x", "y"), ("x", "y")), ("all_reduce", ("y",), ("y",)),
                    ("reduce_scatter", ("x",), ("x",)), ("reduce_scatter", ("x",), ("x",))]
    # every row is the library's estimate of that collective over those axes
    for r in timing.rows:
        e = cl.estimate(r.collective.kind, timing.topology, r.collective.nbytes,
                        axes=list(r.topology_axes))
        assert r.estimate.time == e.time
    assert timing.total == pytest.approx(sum(r.estimate.time for r in timing.rows))
    assert timing.total_bytes == sum(c.nbytes for c in module)


def test_loops_count_every_trip():
    module = parse_hlo((DATA / "fsdp_scan.cpu_after_optimizations.txt").read_text())
    timing = hlo.time_hlo(module, cl.tpu_slice("v5e", "4x2"))
    assert sorted(r.repeats for r in timing.rows) == [1, 3, 3, 3, 3, 3]
    assert timing.total == pytest.approx(sum(r.estimate.time * r.repeats for r in timing.rows))


def test_permutes_are_routed_on_the_topology():
    # ppermute over x by +1 of s32[4,4] per device (64 B): on a v5e 4x2 slice (no
    # wraparound) the pair 6 -> 0 goes back over 3 links of 1 us, alone on them
    module = parse_hlo((DATA / "collective_permute.txt").read_text())
    topo = cl.tpu_slice("v5e", "4x2")
    timing = hlo.time_hlo(module, topo, mesh="x=4,y=2")
    (row,) = timing.rows
    assert row.mesh_axes == ("x",) and row.estimate.pairs == 8
    link = float(topo.links.bandwidth.max())
    assert row.time == pytest.approx(3e-6 + 64 / link, rel=1e-9)
    assert row.bound == pytest.approx(3e-6, rel=1e-9) and row.bound <= row.time


@pytest.mark.parametrize("call, message", [
    (lambda m: hlo.time_hlo(m, cl.nvswitch_node("dgx-h100")),
     "all_gather.3: replica groups {{0,2,4,6},{1,3,5,7}} (as ranks) fit no axes of "
     "nvswitch_node('dgx-h100') (axes x=8): give the program's mesh (mesh=, --mesh) to lay its "
     "axes on the GPUs"),
    (lambda m: hlo.time_hlo(m, cl.tpu_slice("v5e", "4x4")),
     "module jit__lambda runs on 8 devices but tpu_slice('v5e', '4x4') has 16 ranks: pick a "
     "topology of 8"),
    (lambda m: hlo.time_hlo(m, cl.tpu_slice("v5e", "4x2"), mesh="x=2,y=2"),
     "mesh x=2,y=2 has 4 devices but module jit__lambda runs on 8"),
    (lambda m: hlo.time_hlo(m, cl.tpu_slice("v5e", "4x2"), devices=[0, 0, 1, 2, 3, 4, 5, 6]),
     "devices must give each of the module's 8 devices a distinct rank 0..7, got "
     "[0, 0, 1, 2, 3, 4, 5, 6]"),
    (lambda m: hlo.time_hlo(m, cl.tpu_slice("v5e", "4x2"), devices=[0, 2, 1, 3, 4, 6, 5, 7]),
     "all_gather.3: replica groups {{0,1,4,5},{2,3,6,7}} (as ranks) fit no axes of "
     "tpu_slice('v5e', '4x2') (axes x=4, y=2): pick a topology whose axes match the mesh, or "
     "give the device assignment (devices=, --devices)"),
    (lambda m: wire.replay_collective(m[0], [np.zeros((8, 4))] * 7, cl.tpu_slice("v5e", "4x2")),
     "inputs has 7 arrays, one per device is 8"),
    (lambda m: wire.replay_collective(m[0], [np.zeros((4, 8))] * 8, cl.tpu_slice("v5e", "4x2")),
     "inputs[0] has shape (4, 8), the operand is (8, 4)"),
])
def test_bad_input_gets_one_clear_line(call, message):
    module = parse_hlo((DATA / "all_gather.txt").read_text())
    with pytest.raises(CollectivesError) as err:
        call(module)
    assert str(err.value) == message


def test_torch_calls_map_to_collectives_and_sizes():
    assert wire.torch_collective("all_reduce", 4096, 8) == ("all_reduce", 4096)
    assert wire.torch_collective("all_gather_into_tensor", 4096, 8) == ("all_gather", 32768)
    assert wire.torch_collective("reduce_scatter_tensor", 4096, 8) == ("reduce_scatter", 32768)
    assert wire.torch_collective("all_to_all_single", 4096, 8) == ("all_to_all", 4096)
    assert wire.torch_collective("DDP bucket", 4096, 8) == ("all_reduce", 4096)
    kinds = {c.call: c.collective for c in wire.TORCH_CALLS}
    assert kinds["FSDP all-gather"] == "all_gather"
    assert kinds["FSDP reduce-scatter"] == "reduce_scatter"
    with pytest.raises(CollectivesError, match="unknown call 'all_gather'; known: all_reduce"):
        wire.torch_collective("all_gather", 4096, 8)
    with pytest.raises(CollectivesError, match="world_size must be a whole number >= 1"):
        wire.torch_collective("all_reduce", 4096, 0)


def _mlp(dtype="float32"):
    """nn.Sequential(Linear(512, 512), ReLU, Linear(512, 512), ReLU, Linear(512, 512)):
    each weight 512 x 512 x 4 B = 1 MiB, each bias 2 KiB, in definition order."""
    out = []
    for i in range(3):
        out += [wire.Parameter(f"{i}.weight", (512, 512), dtype, f"{i}"),
                wire.Parameter(f"{i}.bias", (512,), dtype, f"{i}")]
    return out


def test_ddp_buckets_as_torchs_reducer_makes_them():
    # reverse order: bias 2 (2 KiB) + weight 2 (1 MiB) reach the 1 MiB first cap: closed;
    # the other four (2.1 MB) never reach 25 MiB: one last bucket
    got = [(b.indices, b.nbytes) for b in wire.ddp_buckets(_mlp())]
    assert got == [((5, 4), 2**20 + 2048), ((3, 2, 1, 0), 2 * (2**20 + 2048))]
    # with a 1 MiB cap every (bias, weight) pair reaches it
    got = [b.indices for b in wire.ddp_buckets(_mlp(), bucket_cap_mb=1)]
    assert got == [(5, 4), (3, 2), (1, 0)]
    # dtypes never share a bucket; each has its own first (1 MiB) bucket
    mixed = _mlp()[:4] + [wire.Parameter("h", (1024, 1024), "bfloat16"),
                          wire.Parameter("g", (8,), "bfloat16")]
    got = [(b.indices, b.dtype) for b in wire.ddp_buckets(mixed)]
    assert got == [((5, 4), "bfloat16"), ((3, 2), "float32"), ((1, 0), "float32")]


def test_ddp_buckets_of_an_8b_llama():
    """Counted by hand: lm_head (128256 x 4096 bf16, 1.05 GB) alone reaches the 1 MiB first
    cap; then each layer, from the last, fills five buckets that reach 25 MiB: [its two norms
    and down_proj (117 MB; the last layer's also takes the final norm)], [up_proj], [gate_proj],
    [o_proj (33.5 MB)], [v_proj, k_proj (8.4 MB each), q_proj]; the embedding closes the
    last: 1 + 5 x 32 + 1 = 162 all-reduces."""
    ps = wire.llama_parameters()
    assert sum(p.nbytes for p in ps) == 2 * 8_030_261_248
    buckets = wire.ddp_buckets(ps)
    assert len(buckets) == 162
    sizes = [b.nbytes for b in buckets]
    assert sizes[0] == sizes[-1] == 128256 * 4096 * 2
    layer = [2 * 4096 * 2 + 4096 * 14336 * 2, 14336 * 4096 * 2, 14336 * 4096 * 2,
             4096 * 4096 * 2, 2 * 1024 * 4096 * 2 + 4096 * 4096 * 2]
    assert sizes[1] == layer[0] + 4096 * 2 and sizes[2:6] == layer[1:]
    assert sizes[6:161] == layer * 31
    assert sum(sizes) == sum(p.nbytes for p in ps)


def test_fsdp_collectives_per_unit():
    # the MLP wrapped per Linear (3 units, no root parameters): 3 gathers in forward,
    # 3 in backward (resharded after forward), 3 reduce-scatters, padded to 8 ranks
    got = wire.fsdp_collectives(_mlp(), 8)
    unit = -(-(2**20 + 2048) // 8) * 8
    assert [(u, ph, c) for u, ph, c, _ in got] == (
        [(u, "forward", "all_gather") for u in "012"] + [(u, "backward", "all_gather") for u in "210"]
        + [(u, "backward", "reduce_scatter") for u in "210"])
    assert {size for *_, size in got} == {unit}
    # a Llama: 32 layers gathered twice and reduce-scattered, the root gathered once
    step = wire.fsdp_collectives(wire.llama_parameters(), 32)
    assert len(step) == 32 * 3 + 2


def test_ddp_fsdp_traffic_counts_and_times():
    topo = cl.GpuCluster("dgx-h100", 2)
    ps = wire.llama_parameters(layers=4)
    out = wire.ddp_fsdp_traffic(ps, topo)
    n, total = 16, sum(p.nbytes for p in ps)
    assert out["ddp_count"] == 2 + 5 * 4 and out["fsdp_count"] == 4 * 3 + 2
    assert out["ddp_bytes"] == pytest.approx(2 * (n - 1) / n * total)
    assert out["ddp_time"] == pytest.approx(sum(r[4].time * r[3] for r in out["ddp"]))
    assert out["fsdp_time"] == pytest.approx(sum(r[4].time * r[3] for r in out["fsdp"]))
    with pytest.raises(CollectivesError, match="ddp_buckets takes a non-empty list"):
        wire.ddp_fsdp_traffic([], topo)


def test_brief_and_summary_fit_80_columns():
    module = parse_hlo((DATA / "fsdp_scan.cpu_after_optimizations.txt").read_text())
    timing = hlo.time_hlo(module, cl.tpu_slice("v5e", "4x2"), mesh="x=4,y=2")
    lines = timing.brief().splitlines()
    assert lines[0].split() == ["kind", "axes", "bytes", "algorithm", "time"]
    assert len(lines) == len(module) + 2 and max(map(len, lines)) <= 80
    assert lines[1].split()[:2] == ["all_gather", "x"] and lines[1].endswith("x3")
    assert lines[-1] == (f"total {cl.format_time(timing.total)} (ideal link model), lower bound "
                         f"{cl.format_time(timing.total_bound)}")
    one = parse_hlo((DATA / "all_gather.txt").read_text())
    assert wire.summary(one, "x=4,y=2") == "all_gather over x, 512 B"
    assert wire.summary(one) == "all_gather over 2x4, 512 B"


class _Shard:
    def __init__(self, device, data):
        self.device, self.data = device, data


def test_shards_orders_blocks_by_mesh_position():
    """A mesh whose devices are numbered otherwise: blocks come in mesh order."""
    class Mesh:
        devices = np.array([[3, 1], [0, 2]])
    class Array:
        addressable_shards = [_Shard(d, np.full(2, d)) for d in range(4)]
    got = wire.shards(Array(), Mesh())
    assert [int(b[0]) for b in got] == [3, 1, 0, 2]
    with pytest.raises(CollectivesError, match="shards takes a jax.Array and the"):
        wire.shards(np.zeros(4), Mesh())
    class Other:
        devices = np.array([5, 6])
    with pytest.raises(CollectivesError, match="no block on 2 of the mesh's 2 devices"):
        wire.shards(Array(), Other())


def test_collective_broadcast_is_timed_with_its_bound():
    # 4 MiB from the first device of each x group: the root (chip x=0, no wraparound on a
    # v5e 4x2 slice) has one x link, so nothing beats 4 MiB over one 45 GB/s link
    module = parse_hlo("""HloModule m, num_partitions=8
ENTRY %main (p: f32[1048576]) -> f32[1048576] {
  %p = f32[1048576]{0} parameter(0)
  ROOT %b = f32[1048576]{0} collective-broadcast(%p), channel_id=1, replica_groups={{0,2,4,6},{1,3,5,7}}
}""")
    topo = cl.tpu_slice("v5e", "4x2")
    (row,) = hlo.time_hlo(module, topo, mesh="x=4,y=2").rows
    link = float(topo.links.bandwidth.max())
    assert row.collective.kind == "broadcast" and row.topology_axes == ("x",)
    assert row.bound == pytest.approx(4 * 2**20 / link, rel=1e-9) and row.time >= row.bound
    (gpu,) = hlo.time_hlo(module, cl.parse_topology("dgx-h100:1"), mesh="x=4,y=2").rows
    assert gpu.estimate.model == "nccl" and gpu.bound <= gpu.time
