"""Write the checked-in HLO dumps that tests/test_hlo.py reads.

Each dump is the optimized HLO text of one small JAX program compiled for 8 CPU
devices (``jax.jit(f).lower(*args).compile().as_text()``), with a first comment
line that says what the program is and which JAX made it. Two are other
formats the reader takes: the unoptimized text (``.as_text(dialect="hlo")``)
and a file XLA itself wrote with ``--xla_dump_to``.

Run from anywhere with the project's Python (jax and jaxlib from
requirements.txt)::

    python tests/data/hlo/make_dumps.py

Paths of this folder inside the texts' source locations are made relative, so
that a checkout elsewhere writes the same files.
"""

from __future__ import annotations

import glob
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEVICES = 8

if "jax" not in sys.modules:
    os.environ["XLA_FLAGS"] = " ".join(
        [f"--xla_force_host_platform_device_count={DEVICES}"]
        + [f for f in os.environ.get("XLA_FLAGS", "").split() if "device_count" not in f]
    )

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import jaxlib  # noqa: E402
from jax import shard_map  # noqa: E402
from jax.sharding import AxisType, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402


def mesh_xy(auto: bool = False):
    """The 4x2 mesh every program runs on: devices [[0,1],[2,3],[4,5],[6,7]]."""
    kinds = (AxisType.Auto,) * 2 if auto else (AxisType.Explicit,) * 2
    return jax.make_mesh((4, 2), ("x", "y"), axis_types=kinds)


def put(mesh, shape, spec, dtype=jnp.float32):
    value = jnp.arange(int(jnp.prod(jnp.array(shape))), dtype=jnp.float32).reshape(shape) % 7
    return jax.device_put(value.astype(dtype), NamedSharding(mesh, spec))


# Every program: name -> () -> (description, jitted function, args)

def all_gather():
    mesh = mesh_xy()
    f = shard_map(lambda a: jax.lax.all_gather(a, "x", axis=0, tiled=True),
                  mesh=mesh, in_specs=P("x", "y"), out_specs=P("x", "y"))
    return ("all_gather over x of bf16[32,8] sharded P('x','y') on a 4x2 mesh",
            jax.jit(f), (put(mesh, (32, 8), P("x", "y"), jnp.bfloat16),))


def reduce_scatter():
    mesh = mesh_xy()
    f = shard_map(lambda a: jax.lax.psum_scatter(a, "y", scatter_dimension=1, tiled=True),
                  mesh=mesh, in_specs=P("x", "y"), out_specs=P("x", "y"))
    return ("psum_scatter over y, scatter_dimension=1, of f32[16,32] sharded P('x','y')",
            jax.jit(f), (put(mesh, (16, 32), P("x", "y")),))


def all_reduce():
    mesh = mesh_xy()
    f = shard_map(lambda a, b: (jax.lax.psum(a, ("x", "y")), jax.lax.pmax(b, "x")),
                  mesh=mesh, in_specs=(P("x", "y"), P("x", "y")),
                  out_specs=(P("x", "y"), P("x", "y")))
    return ("psum over (x, y) of f32[16,8] and pmax over x of s32[8,8], both P('x','y')",
            jax.jit(f), (put(mesh, (16, 8), P("x", "y")),
                         put(mesh, (8, 8), P("x", "y"), jnp.int32)))


def all_to_all():
    mesh = mesh_xy()
    f = shard_map(lambda a: jax.lax.all_to_all(a, "x", split_axis=1, concat_axis=0, tiled=True),
                  mesh=mesh, in_specs=P("x", "y"), out_specs=P("x", "y"))
    return ("all_to_all over x, split_axis=1, concat_axis=0, of f32[16,16] sharded P('x','y')",
            jax.jit(f), (put(mesh, (16, 16), P("x", "y")),))


def collective_permute():
    mesh = mesh_xy()
    shift = [(i, (i + 1) % 4) for i in range(4)]
    f = shard_map(lambda a: jax.lax.ppermute(a, "x", shift),
                  mesh=mesh, in_specs=P("x", "y"), out_specs=P("x", "y"))
    return ("ppermute over x by +1 (a ring shift) of s32[16,8] sharded P('x','y')",
            jax.jit(f), (put(mesh, (16, 8), P("x", "y"), jnp.int32),))


def _matmul(spec_a, spec_b, spec_out, what):
    mesh = mesh_xy(auto=True)
    f = jax.jit(lambda a, b: a @ b, out_shardings=NamedSharding(mesh, spec_out))
    return (what, f, (put(mesh, (16, 32), spec_a), put(mesh, (32, 8), spec_b)))


def matmul_all_reduce():
    return _matmul(P(None, "x"), P("x", None), P(),
                   "A[I,J_x] @ B[J_x,K] -> C[I,K] (jit chooses): partial sums all-reduced over x")


def matmul_all_reduce_slice():
    return _matmul(P(None, "x"), P("x", None), P("x", None),
                   "A[I,J_x] @ B[J_x,K] -> C[I_x,K] (jit chooses): on CPU an all-reduce over x "
                   "and a slice, where TPU and GPU run a reduce-scatter")


def matmul_all_gather():
    return _matmul(P("x", None), P(None, "x"), P("x", None),
                   "A[I_x,J] @ B[J,K_x] -> C[I_x,K] (jit chooses): B all-gathered over x")


def matmul_2d():
    return _matmul(P("x", "y"), P("y", None), P("x", None),
                   "A[I_x,J_y] @ B[J_y,K] -> C[I_x,K] (jit chooses): partial sums all-reduced over y")


def matmul_reduce_scatter():
    mesh = mesh_xy()
    f = shard_map(lambda a, b: jax.lax.psum_scatter(a @ b, "x", scatter_dimension=0, tiled=True),
                  mesh=mesh, in_specs=(P(None, "x"), P("x", None)), out_specs=P("x", None))
    return ("A[I,J_x] @ B[J_x,K] -> C[I_x,K] with shard_map: psum_scatter over x",
            jax.jit(f), (put(mesh, (16, 32), P(None, "x")), put(mesh, (32, 8), P("x", None))))


def _mlp_loss(mesh, layers):
    """FSDP: weights sharded over x (all-gathered to use), the batch over (x, y)."""
    def local(ws, x):
        for w1, w2 in layers(ws):
            w1 = jax.lax.all_gather(w1, "x", axis=0, tiled=True)
            w2 = jax.lax.all_gather(w2, "x", axis=0, tiled=True)
            x = jnp.tanh(x @ w1) @ w2
        return jax.lax.psum(jnp.sum(x ** 2), ("x", "y"))
    return local


def fsdp():
    mesh = mesh_xy()
    local = _mlp_loss(mesh, lambda ws: [ws])
    loss = shard_map(local, mesh=mesh, in_specs=((P("x"), P("x")), P(("x", "y"))), out_specs=P())
    ws = (put(mesh, (16, 32), P("x")), put(mesh, (32, 16), P("x")))
    return ("FSDP MLP layer forward + backward (value_and_grad): f32 weights [16,32] and "
            "[32,16] sharded over x, batch [16,16] over (x, y)",
            jax.jit(jax.value_and_grad(loss)), (ws, put(mesh, (16, 16), P(("x", "y")))))


def fsdp_scan():
    mesh = mesh_xy()

    def local(ws, x):
        def layer(x, w):
            w1 = jax.lax.all_gather(w[0], "x", axis=0, tiled=True)
            w2 = jax.lax.all_gather(w[1], "x", axis=0, tiled=True)
            return jnp.tanh(x @ w1) @ w2, None
        x, _ = jax.lax.scan(layer, x, ws)
        return jax.lax.psum(jnp.sum(x ** 2), ("x", "y"))

    loss = shard_map(local, mesh=mesh, in_specs=((P(None, "x"), P(None, "x")), P(("x", "y"))),
                     out_specs=P())
    ws = (put(mesh, (3, 16, 32), P(None, "x")), put(mesh, (3, 32, 16), P(None, "x")))
    return ("FSDP MLP of 3 layers under lax.scan, forward + backward: the collectives run in "
            "while loops of 3 trips",
            jax.jit(jax.value_and_grad(loss)), (ws, put(mesh, (16, 16), P(("x", "y")))))


def collectives():
    mesh = mesh_xy()

    def f(a):
        return (jax.lax.psum(a, "x"), jax.lax.all_gather(a, "y", axis=0, tiled=True),
                jax.lax.psum_scatter(a, ("x", "y"), scatter_dimension=0, tiled=True),
                jax.lax.all_to_all(a, "x", 0, 0, tiled=True),
                jax.lax.ppermute(a, "x", [(i, (i + 1) % 4) for i in range(4)]))

    g = shard_map(f, mesh=mesh, in_specs=P("x", "y"), out_specs=(P("x", "y"),) * 5)
    return ("psum over x, all_gather over y, psum_scatter over (x, y), all_to_all over x and "
            "ppermute over x of bf16[64,8] sharded P('x','y')",
            jax.jit(g), (put(mesh, (64, 8), P("x", "y"), jnp.bfloat16),))


OPTIMIZED = [all_gather, reduce_scatter, all_reduce, all_to_all, collective_permute,
             matmul_all_reduce, matmul_all_reduce_slice, matmul_all_gather, matmul_2d,
             matmul_reduce_scatter, fsdp]
UNOPTIMIZED = [collectives]          # written as NAME.before_optimizations.txt
XLA_DUMPED = [fsdp_scan]             # written by XLA as NAME.cpu_after_optimizations.txt


def stamp(description: str, how: str) -> str:
    return (f"// {description}. jax {jax.__version__}, jaxlib {jaxlib.__version__}, "
            f"{DEVICES} CPU devices, {how}\n")


def relative(text: str) -> str:
    return text.replace(str(HERE) + os.sep, "")


def write_xla_dump(program, out_dir: Path) -> Path:
    """Compile ``program`` in a fresh process with --xla_dump_to; copy XLA's file."""
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ)
        env["XLA_FLAGS"] = (f"--xla_force_host_platform_device_count={DEVICES} "
                            f"--xla_dump_to={tmp} --xla_dump_hlo_as_text")
        subprocess.run([sys.executable, __file__, "--compile", program.__name__],
                       check=True, env=env)
        _, fn, args = program()
        module = fn.lower(*args).as_text(dialect="hlo").split()[1].rstrip(",")
        pattern = os.path.join(tmp, f"module_*.{module}.cpu_after_optimizations.txt")
        found = sorted(glob.glob(pattern))
        if len(found) != 1:
            raise SystemExit(f"expected one file like {pattern}, found {found}")
        target = out_dir / f"{program.__name__}.cpu_after_optimizations.txt"
        target.write_text(relative(Path(found[0]).read_text()))
        return target


def main(argv: list[str]) -> None:
    if argv[:1] == ["--compile"]:
        program = globals()[argv[1]]
        _, fn, args = program()
        fn.lower(*args).compile()
        return
    assert len(jax.devices()) == DEVICES, jax.devices()
    out_dir = Path(argv[0]) if argv else HERE
    for program in OPTIMIZED:
        what, fn, args = program()
        text = fn.lower(*args).compile().as_text()
        how = "jax.jit(f).lower(*args).compile().as_text()"
        (out_dir / f"{program.__name__}.txt").write_text(stamp(what, how) + relative(text))
    for program in UNOPTIMIZED:
        what, fn, args = program()
        text = fn.lower(*args).as_text(dialect="hlo")
        how = 'jax.jit(f).lower(*args).as_text(dialect="hlo")'
        (out_dir / f"{program.__name__}.before_optimizations.txt").write_text(
            stamp(what, how) + relative(text))
    for program in XLA_DUMPED:
        write_xla_dump(program, out_dir)
    print(f"wrote {len(OPTIMIZED) + len(UNOPTIMIZED) + len(XLA_DUMPED)} dumps to {out_dir}")


if __name__ == "__main__":
    main(sys.argv[1:])
