"""Topologies: who is wired to whom, at what bandwidth and latency, and how traffic is routed.

A topology is a value: two built with the same parameters are equal. Its
vertices ``0 .. num_ranks - 1`` are endpoints (TPU chips, GPUs); further
vertices are switches and hosts (``num_vertices`` counts them all). Its links
are directed and carry a one-way bandwidth (bytes/s), a latency (s) and a link
class (``"ici"``, ``"nvlink"``, ``"ib"``, ``"pcie"``, ``"dcn"`` or ``"link"``).

==============  ============================================================
``core``        links, routes and the :class:`Topology` base class
``torus``       :class:`Torus`, :class:`Ring`, :class:`Chain`, :func:`mesh`, :class:`FullMesh`
``switch``      :class:`Switch`, :func:`nvswitch_node`
``cluster``     :class:`GpuCluster` (NVLink nodes on an InfiniBand fat tree), :func:`superpod`
``tpu``         :func:`tpu_slice`, :func:`tpu_pod`, :class:`TpuSystem` (hosts, PCIe, DCN)
``leafspine``   :class:`LeafSpine` (spine switches kept apart: ECMP hashing or spraying)
``graph``       maximum flow and link-disjoint paths
``spec``        :func:`parse_topology`: ``ring:8``, ``tpu-v5e:16x16``, ``dgx-h100:16``
``meshview``    :func:`with_mesh`: a program's mesh axes laid row-major on a GPU preset
==============  ============================================================

Introduced in the chapters *TPU cluster topology* and *NVIDIA GPU cluster topology*.
"""

from .cluster import GpuCluster, superpod
from .core import LINK_CLASSES, Links, Routes, Topology, check_topology
from .spec import TOPOLOGY_HELP, parse_rate, parse_seconds, parse_topology
from .switch import Switch, nvswitch_node
from .torus import AXIS_NAMES, Chain, FullMesh, Ring, Torus, best_twist, mesh, torus_distances
from .leafspine import LeafSpine
from .meshview import MeshView, mesh_applies, with_mesh
from .tpu import TpuSlice, TpuSystem, parse_shape, tpu_pod, tpu_slice, tpu_system

__all__ = ["AXIS_NAMES", "Chain", "check_topology", "FullMesh", "GpuCluster", "LINK_CLASSES", "LeafSpine", "Links", "Ring",
           "Routes", "Switch", "TOPOLOGY_HELP", "Topology", "Torus", "TpuSlice", "TpuSystem",
           "mesh", "nvswitch_node", "parse_rate", "parse_seconds", "parse_shape",
           "parse_topology", "superpod", "tpu_pod", "tpu_slice", "tpu_system", "best_twist",
           "torus_distances", "MeshView", "mesh_applies", "with_mesh"]
