"""Write the TPU-compiled HLO modules that tests/test_hlo_tpu.py reads.

Each module is compiled ahead of time by the real TPU compiler (libtpu) for an
abstract TPU topology: no TPU is needed, only the ``jax[tpu]`` wheels, which
pin a libtpu from PyPI. Run it with a separate virtual environment, outside the
repository (the project's own venv has the CPU jaxlib only)::

    python3 -m venv /tmp/venv-tpu
    /tmp/venv-tpu/bin/pip install "jax[tpu]==0.10.2"      # jaxlib 0.10.2, libtpu 0.0.42.1
    /tmp/venv-tpu/bin/python tests/data/hlo_tpu/make_modules.py

For every program it writes ``<name>.txt`` (the text of
``jax.jit(f, in_shardings=..., out_shardings=...).trace(*avals).lower().compile().as_text()``,
after one ``//`` line naming the program, the topology and the versions) and
``<name>.meta.json``: the topology, the mesh (axis names and sizes), each mesh
position's TPU device id and chip coordinates (``jax.make_mesh`` on the
topology's devices), and the versions. ``<name>.expected.json`` beside them is
written by hand from reading the text (see README.md) and is not touched here.

The abstract topologies come from
``jax.experimental.topologies.get_topology_desc("v5e:4x2", "tpu")``. libtpu
prints warnings about missing TPU host variables when it starts without a TPU;
they do not affect ahead-of-time compilation.
"""

from __future__ import annotations

import json
import sys
from importlib import metadata
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from jax import shard_map
from jax.experimental import topologies
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

HERE = Path(__file__).resolve().parent
VERSIONS = {p: metadata.version(p) for p in ("jax", "jaxlib", "libtpu")}


def topology(name: str):
    return topologies.get_topology_desc(name, "tpu")


def make_mesh(topo_name: str, shape, names):
    """``jax.make_mesh`` over the abstract topology's devices (its device order), with
    automatic axes (the compiler places the collectives of a ``jit`` program)."""
    topo = topology(topo_name)
    return jax.make_mesh(tuple(shape), tuple(names), axis_types=(AxisType.Auto,) * len(shape),
                         devices=topo.devices)


def aval(mesh, shape, spec, dtype=jnp.float32):
    return jax.ShapeDtypeStruct(tuple(shape), dtype, sharding=NamedSharding(mesh, spec))


# ---------------------------------------------------------------------------
# the programs: name -> () -> (description, topology, mesh, function, avals)
# ---------------------------------------------------------------------------

def _fsdp_layer_loss(axes, dtype):
    def local(w, tokens):
        w1 = jax.lax.all_gather(w[0], axes, axis=0, tiled=True)
        w2 = jax.lax.all_gather(w[1], axes, axis=0, tiled=True)
        out = jnp.tanh(tokens @ w1) @ w2
        return jax.lax.psum(jnp.sum(out.astype(jnp.float32) ** 2), axes)
    return local


def fsdp_layer():
    """The chapter's FSDP layer (shard_map), forward and backward, f32."""
    topo = "v5e:2x4"
    mesh = make_mesh(topo, (2, 4), ("x", "y"))
    D, F, B = 4096, 16384, 8192
    both = ("x", "y")
    loss = shard_map(_fsdp_layer_loss(both, jnp.float32), mesh=mesh,
                     in_specs=((P(both),) * 2, P(both)), out_specs=P())
    args = ((aval(mesh, (D, F), P(both)), aval(mesh, (F, D), P(both))),
            aval(mesh, (B, D), P(both)))
    return ("FSDP layer (from_code_to_wire): shard_map, f32 w1[4096,16384], w2[16384,4096] "
            "sharded over (x,y), tokens[8192,4096] over (x,y); value_and_grad",
            topo, mesh, jax.value_and_grad(loss), args)


def fsdp_bf16_layer():
    """The same layer in bf16 on a 4x4 slice."""
    topo = "v5e:4x4"
    mesh = make_mesh(topo, (4, 4), ("x", "y"))
    D, F, B = 2048, 8192, 4096
    both = ("x", "y")
    loss = shard_map(_fsdp_layer_loss(both, jnp.bfloat16), mesh=mesh,
                     in_specs=((P(both),) * 2, P(both)), out_specs=P())
    bf = jnp.bfloat16
    args = ((aval(mesh, (D, F), P(both), bf), aval(mesh, (F, D), P(both), bf)),
            aval(mesh, (B, D), P(both), bf))
    return ("FSDP layer in bf16: shard_map, w1[2048,8192], w2[8192,2048] sharded over (x,y), "
            "tokens[4096,2048] over (x,y); value_and_grad",
            topo, mesh, jax.value_and_grad(loss), args)


def fsdp_train_step():
    """A jit train step: GSPMD places the collectives (params and batch over all)."""
    topo = "v5e:4x2"
    mesh = make_mesh(topo, (4, 2), ("data", "fsdp"))
    D, F, B = 1024, 4096, 2048

    def loss(params, x):
        h = jnp.tanh(x @ params["w1"])
        return jnp.mean((h @ params["w2"]) ** 2)

    def step(params, x):
        value, grads = jax.value_and_grad(loss)(params, x)
        return value, jax.tree.map(lambda p, g: p - 0.01 * g, params, grads)

    pspec = {"w1": P("fsdp", None), "w2": P(None, "fsdp")}
    params = {k: aval(mesh, s, pspec[k]) for k, s in (("w1", (D, F)), ("w2", (F, D)))}
    x = aval(mesh, (B, D), P(("data", "fsdp"), None))
    shard = lambda s: NamedSharding(mesh, s)  # noqa: E731
    f = jax.jit(step, in_shardings=({k: shard(v) for k, v in pspec.items()}, shard(x.sharding.spec)),
                out_shardings=(shard(P()), {k: shard(v) for k, v in pspec.items()}))
    return ("jit train step (GSPMD): f32 w1[1024,4096] sharded P('fsdp',None), "
            "w2[4096,1024] P(None,'fsdp'), batch x[2048,1024] over (data,fsdp); SGD update",
            topo, mesh, f, (params, x))


def psum_scatter():
    """An explicit psum_scatter of partial products."""
    topo = "v5e:2x4"
    mesh = make_mesh(topo, (2, 4), ("x", "y"))
    size = 4096
    f = shard_map(lambda a, b: jax.lax.psum_scatter(a @ b, "y", scatter_dimension=0, tiled=True),
                  mesh=mesh, in_specs=(P(None, "y"), P("y", None)), out_specs=P("y", None))
    return ("A[I,J_y] @ B[J_y,K] -> C[I_y,K], f32 4096^3, shard_map with psum_scatter over y",
            topo, mesh, f, (aval(mesh, (size, size), P(None, "y")), aval(mesh, (size, size), P("y", None))))


def scan_layers():
    """12 FSDP layers under lax.scan, forward and backward."""
    topo = "v5e:4x2"
    mesh = make_mesh(topo, (4, 2), ("x", "y"))
    L, D, F, B = 12, 1024, 4096, 2048

    def local(ws, x):
        def layer(x, w):
            w1 = jax.lax.all_gather(w[0], "x", axis=0, tiled=True)
            w2 = jax.lax.all_gather(w[1], "x", axis=0, tiled=True)
            return jnp.tanh(x @ w1) @ w2, None
        x, _ = jax.lax.scan(layer, x, ws)
        return jax.lax.psum(jnp.sum(x ** 2), ("x", "y"))

    loss = shard_map(local, mesh=mesh, in_specs=((P(None, "x"), P(None, "x")), P(("x", "y"))),
                     out_specs=P())
    ws = (aval(mesh, (L, D, F), P(None, "x")), aval(mesh, (L, F, D), P(None, "x")))
    return ("12 FSDP layers under lax.scan: f32 w1[12,1024,4096], w2[12,4096,1024] sharded "
            "over x on dimension 1, batch x[2048,1024] over (x,y); value_and_grad",
            topo, mesh, jax.value_and_grad(loss), (ws, aval(mesh, (B, D), P(("x", "y")))))


def fori_loop():
    """A fori_loop of 5 trips, each a matmul and a psum over x."""
    topo = "v5e:2x4"
    mesh = make_mesh(topo, (2, 4), ("x", "y"))

    def local(a, w):
        def body(i, a):
            return jnp.tanh(jax.lax.psum(a @ w, "x"))
        return jax.lax.fori_loop(0, 5, body, a)

    f = shard_map(local, mesh=mesh, in_specs=(P("y", None), P("x", None)),
                  out_specs=P("y", None))
    return ("fori_loop(0, 5): a[1024,2048] over y times w[2048,2048] over x (rows), psum over "
            "x each trip",
            topo, mesh, f, (aval(mesh, (4096, 2048), P("y", None)),
                            aval(mesh, (4096, 2048), P("x", None))))


def collective_matmul():
    """All-gather matmul by hand: ppermute the LHS around y while multiplying."""
    topo = "v5e:4x4"
    mesh = make_mesh(topo, (4, 4), ("x", "y"))
    n = 4
    M, K, N = 8192, 4096, 8192
    perm = [(j, (j + 1) % n) for j in range(n)]

    def local(lhs, rhs):
        # lhs: [M/n, K] (rows over y), rhs: [K, N/(4n)] (columns over x,y)
        idx = jax.lax.axis_index("y")
        rows = lhs.shape[0]
        out = jnp.zeros((rows * n, rhs.shape[1]), lhs.dtype)
        chunk = lhs
        for step in range(n):
            block = (idx - step) % n
            out = jax.lax.dynamic_update_slice(out, chunk @ rhs, (block * rows, 0))
            if step < n - 1:
                chunk = jax.lax.ppermute(chunk, "y", perm)
        return out

    f = shard_map(local, mesh=mesh, in_specs=(P("y", None), P(None, ("x", "y"))),
                  out_specs=P(None, ("x", "y")))
    bf = jnp.bfloat16
    return ("collective matmul: bf16 lhs[8192,4096] rows over y, rhs[4096,8192] columns over "
            "(x,y); 4 matmuls and 3 ppermutes of the lhs block around y (+1)",
            topo, mesh, f, (aval(mesh, (M, K), P("y", None), bf),
                            aval(mesh, (K, N), P(None, ("x", "y")), bf)))


def moe_all_to_all():
    """Expert dispatch and return: all_to_all over the expert axis."""
    topo = "v5p:2x2x2"
    mesh = make_mesh(topo, (2, 4), ("data", "expert"))
    E, C, D, F = 8, 1024, 2048, 4096

    def local(x, w1, w2):
        # x: [E, C, D] tokens routed to each expert, on this device
        x = jax.lax.all_to_all(x, "expert", 0, 1, tiled=True)     # [E/4, 4C, D]
        h = jnp.einsum("ecd,edf->ecf", x, w1)
        y = jnp.einsum("ecf,efd->ecd", jax.nn.relu(h), w2)
        return jax.lax.all_to_all(y, "expert", 1, 0, tiled=True)  # back: [E, C, D]

    bf = jnp.bfloat16
    tokens = P(("data", "expert"), None, None)
    f = shard_map(local, mesh=mesh,
                  in_specs=(tokens, P("expert", None, None), P("expert", None, None)),
                  out_specs=tokens)
    return ("MoE layer: bf16 tokens[64,1024,2048] over (data,expert) (each device routes "
            "[8,1024,2048], a capacity of 1024 tokens to each of 8 experts), w1[8,2048,4096], "
            "w2[8,4096,2048] over expert; all_to_all over expert out and back",
            topo, mesh, f, (aval(mesh, (8 * E, C, D), tokens, bf),
                            aval(mesh, (E, D, F), P("expert", None, None), bf),
                            aval(mesh, (E, F, D), P("expert", None, None), bf)))


def mesh_3axis():
    """A jit train step on a 3-axis mesh: data, fsdp, tensor parallel."""
    topo = "v5p:2x2x2"
    mesh = make_mesh(topo, (2, 2, 2), ("data", "fsdp", "model"))
    D, F, B = 2048, 8192, 4096

    def loss(params, x):
        h = jax.nn.gelu(x @ params["w1"])
        return jnp.mean((h @ params["w2"]) ** 2)

    def step(params, x):
        value, grads = jax.value_and_grad(loss)(params, x)
        return value, jax.tree.map(lambda p, g: p - 0.01 * g, params, grads)

    pspec = {"w1": P("fsdp", "model"), "w2": P("model", "fsdp")}
    bf = jnp.bfloat16
    params = {k: aval(mesh, s, pspec[k], bf) for k, s in (("w1", (D, F)), ("w2", (F, D)))}
    x = aval(mesh, (B, D), P(("data", "fsdp"), None), bf)
    shard = lambda s: NamedSharding(mesh, s)  # noqa: E731
    f = jax.jit(step, in_shardings=({k: shard(v) for k, v in pspec.items()}, shard(x.sharding.spec)),
                out_shardings=(shard(P()), {k: shard(v) for k, v in pspec.items()}))
    return ("jit train step on mesh data=2,fsdp=2,model=2: bf16 w1[2048,8192] P('fsdp','model'), "
            "w2[8192,2048] P('model','fsdp'), batch x[4096,2048] over (data,fsdp); SGD update",
            topo, mesh, f, (params, x))


PROGRAMS = [fsdp_layer, fsdp_bf16_layer, fsdp_train_step, psum_scatter, scan_layers, fori_loop,
            collective_matmul, moe_all_to_all, mesh_3axis]


def compile_text(f, args) -> str:
    jitted = f if hasattr(f, "trace") else jax.jit(f)
    return jitted.trace(*args).lower().compile().as_text()


def main(names=None) -> None:
    for make in PROGRAMS:
        name = make.__name__
        if names and name not in names:
            continue
        what, topo, mesh, f, args = make()
        text = compile_text(f, args)
        devices = list(np.asarray(mesh.devices).ravel())
        meta = {
            "program": what, "topology": topo,
            "mesh": dict(zip(mesh.axis_names, (int(s) for s in mesh.devices.shape))),
            "device_ids": [int(d.id) for d in devices],
            "device_coords": [list(map(int, d.coords)) for d in devices],
            "versions": VERSIONS,
        }
        head = (f"// {name}: {what}; compiled for {topo} by jax {VERSIONS['jax']}, "
                f"jaxlib {VERSIONS['jaxlib']}, libtpu {VERSIONS['libtpu']} "
                f"(tests/data/hlo_tpu/make_modules.py)\n")
        (HERE / f"{name}.txt").write_text(head + text)
        (HERE / f"{name}.meta.json").write_text(json.dumps(meta, indent=1) + "\n")
        print(f"{name}: {len(text):,} characters, {topo}, mesh {meta['mesh']}")


if __name__ == "__main__":
    main(sys.argv[1:])
