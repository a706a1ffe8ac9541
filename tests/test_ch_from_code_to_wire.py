"""What the chapter *From your code to the wire* relies on, with hand-derived numbers.

The Scaling Book's four sharded products are compiled by JAX in a subprocess (8 CPU
devices; XLA_FLAGS must be set before JAX starts) exactly as the chapter compiles them;
the checks run here.
"""
import json
import os
import subprocess
import sys

import pytest

import collectives_lib as cl
from collectives_lib import hlo, wire
from collectives_lib.hlo import parse_hlo

TPU = cl.tpu_slice("v5e", "2x4")
GPU = cl.parse_topology("dgx-h100:1")
LAID = cl.topology.with_mesh(GPU, {"x": 2, "y": 4})   # the mesh row-major on the GPUs
MESH = {"x": 2, "y": 4}
N = 8192

CHAPTER_SCRIPT = r'''
import json
import jax, jax.numpy as jnp
from jax import shard_map
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
N = 8192
def spec(shape, s):
    return jax.ShapeDtypeStruct(shape, jnp.float32, sharding=NamedSharding(mesh, s))
def text(f, *args, out=None):
    out = None if out is None else NamedSharding(mesh, out)
    return jax.jit(f, out_shardings=out).lower(*args).compile().as_text()
def matmul(sa, sb, sc):
    return text(lambda a, b: a @ b, spec((N, N), sa), spec((N, N), sb), out=sc)
both = ("x", "y")
def fsdp_loss(w, tokens):
    w1 = jax.lax.all_gather(w[0], both, axis=0, tiled=True)
    w2 = jax.lax.all_gather(w[1], both, axis=0, tiled=True)
    return jax.lax.psum(jnp.sum((jnp.tanh(tokens @ w1) @ w2) ** 2), both)
loss = shard_map(fsdp_loss, mesh=mesh, in_specs=((P(both),) * 2, P(both)), out_specs=P())
rs = shard_map(lambda a, b: jax.lax.psum_scatter(a @ b, "y", scatter_dimension=0, tiled=True),
               mesh=mesh, in_specs=(P(None, "y"), P("y", None)), out_specs=P("y", None))
print(json.dumps({
    "case 1": matmul(P("x", None), P(None, "y"), P("x", "y")),
    "case 2": matmul(P(None, "y"), P(), P()),
    "case 3": matmul(P(None, "y"), P("y", None), P()),
    "case 4": matmul(P("y", None), P(None, "y"), P("y", None)),
    "reshard": text(lambda a: a, spec((N, N), P(None, "y")), out=P("y", None)),
    "case 3 RS": text(rs, spec((N, N), P(None, "y")), spec((N, N), P("y", None))),
    "fsdp": text(jax.value_and_grad(loss), (spec((4096, 16384), P(both)),
                 spec((16384, 4096), P(both))), spec((8192, 4096), P(both))),
}))
'''


@pytest.fixture(scope="module")
def compiled():
    pytest.importorskip("jax", reason="jax is not installed (pip install -r requirements.txt)")
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8",
               JAX_PLATFORMS="cpu")
    proc = subprocess.run([sys.executable, "-c", CHAPTER_SCRIPT], capture_output=True,
                          text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {k: parse_hlo(v) for k, v in json.loads(proc.stdout).items()}


def kinds(module):
    return [(c.kind, wire.mesh_axes(c, MESH), c.nbytes) for c in module]


def test_the_scaling_books_cases(compiled):
    full = N * N * 4                               # C[I,K] or B gathered, float32
    assert kinds(compiled["case 1"]) == []
    assert kinds(compiled["case 2"]) == [("all_gather", ("y",), full)]
    assert kinds(compiled["case 3"]) == [("all_reduce", ("y",), full)]
    assert kinds(compiled["case 4"]) == [("all_gather", ("y",), full)]
    assert kinds(compiled["case 3 RS"]) == [("reduce_scatter", ("y",), full)]
    # one device's buffer: A[I, J_y] is 8192 x 2048 floats, in 4 pieces on CPU
    assert kinds(compiled["reshard"]) == [("all_to_all", ("y",), N * N // 4 * 4)]
    assert len(compiled["reshard"][0].operands) == 4


def test_fsdp_step(compiled):
    got = kinds(compiled["fsdp"])
    w = 4096 * 16384 * 4
    assert sorted(got) == sorted([("all_gather", ("x", "y"), w)] * 2 + [("all_reduce", ("x", "y"), 4)]
                                 + [("reduce_scatter", ("x", "y"), w)] * 2)


def test_groups_map_to_each_machines_axes():
    rows, columns = [(0, 1, 2, 3), (4, 5, 6, 7)], [(0, 4), (1, 5), (2, 6), (3, 7)]
    assert hlo.topology_axes(rows, TPU) == ("y",) and hlo.topology_axes(columns, TPU) == ("x",)
    assert hlo.topology_axes(rows, LAID) == ("y",) and hlo.topology_axes(columns, LAID) == ("x",)
    assert hlo.topology_axes([tuple(range(8))], GPU) == ("x",)
    with pytest.raises(cl.CollectivesError, match="not the groups of any axes"):
        hlo.topology_axes(rows, GPU)


def test_case_times(compiled):
    t = {k: hlo.time_hlo(compiled[k], TPU, mesh=MESH) for k in ("case 2", "case 3", "case 3 RS")}
    assert t["case 2"].model == "ideal"
    # an all-reduce is a reduce-scatter then an all-gather: twice the time on the chain of 4
    assert t["case 3"].total / t["case 2"].total == pytest.approx(2, rel=0.01)
    assert t["case 3 RS"].total == pytest.approx(t["case 2"].total, rel=0.01)
    g = hlo.time_hlo(compiled["case 2"], GPU, mesh=MESH)
    assert g.model == "nccl" and g.rows[0].topology_axes == ("y",)
    e = cl.estimate("all_gather", LAID, N * N * 4, axes=["y"])
    assert g.total == e.time and e.group_size == 4 and e.num_groups == 2
    # NCCL sees a communicator of 4 GPUs in one node: the same as a 4-GPU NVSwitch node
    four = cl.estimate("all_gather", cl.nvswitch_node("dgx-h100", gpus=4), N * N * 4)
    assert e.time == pytest.approx(four.time)


def test_fsdp_against_ddp_worked_example():
    """The chapter's 8B Llama on 4 DGX H100 nodes: DDP all-reduces 162 buckets (by hand
    in test_wire), 2(n-1)/n of the parameters' bytes; FSDP gathers every block twice and
    the root (embedding, final norm, head) once, and reduce-scatters all of it."""
    cluster = cl.GpuCluster("dgx-h100", num_nodes=4)
    params = wire.llama_parameters()
    step = wire.ddp_fsdp_traffic(params, cluster)
    n, total = 32, sum(p.nbytes for p in params)
    root = 2 * 128256 * 4096 * 2 + 4096 * 2
    assert step["ddp_count"] == 162 and step["fsdp_count"] == 98
    assert step["ddp_bytes"] == pytest.approx(2 * (n - 1) / n * total)     # 31.1 GB
    assert step["fsdp_bytes"] == pytest.approx((n - 1) / n * (3 * total - root), rel=1e-6)
    assert all(r[4].model == "nccl" for r in step["ddp"] + step["fsdp"])
    assert cl.format_bytes(step["ddp_bytes"]) == "31.1 GB"


def test_torch_table_for_a_64_mib_tensor_on_8_ranks():
    sizes = {t.call: wire.torch_collective(t.call, 64 * 2**20, 8) for t in wire.TORCH_CALLS}
    assert sizes["all_gather_into_tensor"] == ("all_gather", 512 * 2**20)
    assert sizes["reduce_scatter_tensor"] == ("reduce_scatter", 512 * 2**20)
    assert sizes["all_to_all_single"] == ("all_to_all", 64 * 2**20)
    assert sizes["FSDP all-gather"] == ("all_gather", 64 * 2**20)
