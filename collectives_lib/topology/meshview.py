"""A program's mesh laid on a GPU preset: named axes that split nodes and GPUs.

A JAX or PyTorch program names its devices by a mesh (``data=4, model=2``).
On GPUs, ``jax.make_mesh`` and torch's ``init_device_mesh`` lay the mesh
row-major over the ranks (rank = node * gpus_per_node + gpu), so on one DGX H100
``model`` runs over pairs of GPUs and ``data`` over four GPUs two apart, and on
two nodes with ``data=4, model=4`` each ``data`` group holds two GPUs of each
node. :func:`with_mesh` gives a GPU preset (``nvswitch_node``, ``GpuCluster``)
those axes: the same links and routes, with ``axis_names`` and ``axis_groups``
of the mesh. NCCL's model then sees each group's communicator as the nodes it
spans and the GPUs per node in it (:func:`collectives_lib.nccl.comm_for`).

>>> import collectives_lib as cl
>>> view = with_mesh(cl.nvswitch_node("dgx-h100"), {"data": 4, "model": 2})
>>> view.axis_groups(["model"]).tolist()[:2], view.axis_groups(["data"]).tolist()[0]
([[0, 1], [2, 3]], [0, 2, 4, 6])

Introduced in the chapter *From your code to the wire*.
"""

from __future__ import annotations

import numpy as np

from .. import checks
from ..errors import CollectivesError
from .cluster import GpuCluster
from .core import Topology
from .switch import Switch


def mesh_applies(topology: Topology) -> bool:
    """Whether a program's mesh can be laid on ``topology`` (a GPU preset: a switch
    or a cluster of NVLink nodes)."""
    return isinstance(topology, (Switch, GpuCluster))


class MeshView(Topology):
    """``base`` with the axes of a mesh laid row-major over its ranks."""

    def __init__(self, base: Topology, mesh):
        if not mesh_applies(base):
            raise CollectivesError(f"a mesh is laid on a GPU preset (nvswitch_node, GpuCluster), "
                                   f"not on {base!r}: a torus has its own axes")
        items = list(dict(mesh).items())
        if not items:
            raise CollectivesError("a mesh needs at least one axis")
        for a, s in items:
            if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 1:
                raise CollectivesError(f"mesh axis {a!r} must have a whole size >= 1, got {s!r}")
        self.base = base
        self.axis_names = tuple(str(a) for a, _ in items)
        self.mesh_shape = tuple(int(s) for _, s in items)
        if len(set(self.axis_names)) != len(items):
            raise CollectivesError(f"mesh {dict(mesh)!r} names an axis twice")
        if int(np.prod(self.mesh_shape)) != base.num_ranks:
            raise CollectivesError(
                f"mesh {self._desc()} has {int(np.prod(self.mesh_shape))} devices but {base!r} "
                f"has {base.num_ranks} ranks")
        self.num_ranks = base.num_ranks
        self.num_vertices = base.num_vertices
        self.routing_kind = base.routing_kind

    def _desc(self) -> str:
        return ",".join(f"{a}={s}" for a, s in zip(self.axis_names, self.mesh_shape))

    def _identity(self) -> tuple:
        return (self.base._key(), self.axis_names, self.mesh_shape)

    def __repr__(self) -> str:
        return f"with_mesh({self.base!r}, {dict(zip(self.axis_names, self.mesh_shape))!r})"

    # the base's wiring
    @property
    def links(self):
        return self.base.links

    def routes(self, src, dst):
        return self.base.routes(src, dst)

    def node_label(self, node: int) -> str:
        return self.base.node_label(node)

    def agent_node(self, name: str) -> int:
        return self.base.agent_node(name)

    def reduce_rate(self, node: int):
        return self.base.reduce_rate(node)

    def agent_latency(self, node: int) -> float:
        return self.base.agent_latency(node)

    def default_bisection(self) -> list[int]:
        return self.base.default_bisection()

    @property
    def gpus_per_node(self) -> int:
        return getattr(self.base, "gpus_per_node", self.base.num_ranks)

    @property
    def max_hops(self):
        return self.base.max_hops

    @property
    def gpu_system(self):
        """The base preset's GPU system (what NCCL's model reads)."""
        return self.base.gpu_system

    # the mesh's axes
    def resolve_axes(self, axes) -> list[int]:
        names = checks.axes(axes)
        if names is None:
            return list(range(len(self.axis_names)))
        out = []
        for a in names:
            if str(a) not in self.axis_names:
                raise CollectivesError(f"unknown axis {a!r}; {self!r} has axes {self._desc()}")
            out.append(self.axis_names.index(str(a)))
        if len(set(out)) != len(out):
            raise CollectivesError(f"axes {axes!r} name an axis twice")
        return sorted(out)

    def axis_groups(self, axes) -> np.ndarray:
        idx = self.resolve_axes(axes)
        ranks = np.arange(self.num_ranks).reshape(self.mesh_shape)
        others = [a for a in range(len(self.mesh_shape)) if a not in idx]
        size = int(np.prod([self.mesh_shape[a] for a in idx]))
        return ranks.transpose(others + idx).reshape(-1, size)


def with_mesh(topology: Topology, mesh) -> MeshView:
    """``topology`` (a GPU preset) with the axes of ``mesh`` (``{"data": 4, "model": 2}``)
    laid row-major over its ranks, as ``jax.make_mesh`` lays a mesh on GPUs."""
    if isinstance(mesh, str):
        from ..hlo.mesh import parse_mesh
        mesh = parse_mesh(mesh)
    return MeshView(topology, mesh)
