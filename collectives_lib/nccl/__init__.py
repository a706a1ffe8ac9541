"""NCCL's own cost model: what a reader will measure with nccl-tests.

The book uses two models. The *ideal link model* (:mod:`collectives_lib.simulate`)
times a schedule from its links' bandwidth and latency; it teaches. *NCCL's
model*, here, is what NCCL's tuner predicts for its algorithms (ring, double
binary tree, NVLS, NVLS_TREE, CollNet, PAT) and protocols (LL, LL128, Simple),
with the base latencies, per-step latencies, channel counts and efficiencies
NCCL 2.30.7 uses, plus the book's model of NCCL's point-to-point path for
all-to-all, send and gather (NCCL's tuner has none). It applies to the GPU
presets: :func:`~collectives_lib.topology.nvswitch_node` and
:class:`~collectives_lib.topology.GpuCluster`.

* :mod:`.tables`: NCCL's constants; :mod:`.graphs`: the channels its search finds;
  :mod:`.tuner`: latency, bandwidth, time and choice; :mod:`.p2p`: point to point;
  :mod:`.validation` (loaded on first use): the published nccl-tests runs it is held to.
* :func:`comm_for` turns a topology (and the axes a collective spans) into the
  communicator NCCL would see; :func:`predictions` lists what NCCL would
  consider for a collective and size.

Introduced in the chapter *GPU collectives within the node*.
"""

from __future__ import annotations

import numpy as np

from .. import hardware as hw
from ..collective import collective as as_collective
from ..errors import CollectivesError
from ..topology import GpuCluster, Switch, Topology
from . import measured, p2p, tables
from .graphs import launched_channels, search
from .measured import measured_time
from .tuner import FUNCTIONS, Comm, Prediction, choose, predict, predict_all

__all__ = ["Comm", "Prediction", "comm_for", "supports", "predictions", "choose", "predict",
           "predict_all", "measured_time", "tables", "p2p", "measured", "VERSION"]

VERSION = tables.VERSION


def _system(topology: Topology) -> hw.GpuSystem | None:
    topology = getattr(topology, "base", topology)        # a MeshView: its GPU preset
    if isinstance(topology, GpuCluster):
        return topology.system
    if isinstance(topology, Switch) and topology.name in hw.GPU_SYSTEMS:
        return hw.gpu_system(topology.name)
    return None


def supports(topology: Topology) -> bool:
    """Whether NCCL's model applies: a GPU system preset with an NCCL profile."""
    s = _system(topology)
    return s is not None and s.nccl is not None


def comm_for(topology: Topology, axes=None, *, dtype: str = "float32", nvls: bool | None = None,
             algorithms=None, protocols=None) -> Comm:
    """The communicator NCCL would see for a collective over ``axes`` of ``topology``.

    On a GPU cluster the whole cluster is ``nodes`` x ``gpus_per_node``; over
    ``axes="gpu"`` each communicator is one node; over ``axes="node"`` it holds
    one GPU per node (a data-parallel group on one rail). ``nvls=False`` is
    ``NCCL_NVLS_ENABLE=0``; ``algorithms`` and ``protocols`` are ``NCCL_ALGO``
    and ``NCCL_PROTO`` (NCCL's names, case-insensitive).
    """
    s = _system(topology)
    if s is None or s.nccl is None:
        raise CollectivesError(
            f"NCCL's model needs a GPU system preset (nvswitch_node, GpuCluster); {topology!r} is "
            f"not one: use model='ideal'")
    nodes, ppn = _span(topology, axes)
    collnet = bool(getattr(topology, "sharp", False)) and nodes * ppn == topology.num_ranks
    graphs = search(s.nccl, nodes=nodes, ppn=ppn)
    algos = tables.ALGORITHMS if algorithms is None else tuple(_names(algorithms, tables.ALGORITHMS, "NCCL_ALGO"))
    protos = tables.PROTOCOLS if protocols is None else tuple(_names(protocols, tables.PROTOCOLS, "NCCL_PROTO"))
    return Comm(nodes, ppn, s.nccl, graphs, s.nvls if nvls is None else bool(nvls), collnet,
                launched_channels(graphs, nodes=nodes, sm=s.nccl.sm), dtype, algos, protos)


def _span(topology: Topology, axes) -> tuple[int, int]:
    """(nodes, GPUs per node) of the communicator over ``axes``: the nodes its first
    group's ranks sit on, and its ranks per node (on a switch, one node)."""
    group = np.asarray(topology.axis_groups(axes))[0]
    nodes = len(np.unique(group // getattr(topology, "gpus_per_node", topology.num_ranks)))
    return nodes, len(group) // nodes


def _names(values, allowed, what) -> list[str]:
    if isinstance(values, str):
        values = [v for v in values.replace(";", ",").split(",") if v.strip()]
    out = []
    for v in values:
        key = str(v).strip().upper()
        if key == "SIMPLE" or key in allowed:
            out.append(key)
        else:
            raise CollectivesError(f"{what} {v!r} is not one of {', '.join(allowed)}")
    if not out:
        raise CollectivesError(f"{what} needs at least one of {', '.join(allowed)}")
    return out


def predictions(collective, nbytes: int, comm: Comm) -> list[Prediction]:
    """Everything NCCL would consider for ``collective`` of ``nbytes`` (nccl-tests' size)."""
    coll = as_collective(collective)
    if coll.value in FUNCTIONS:
        return predict_all(coll, nbytes, comm)
    if coll == "all_to_all":
        out = [p2p.all_to_all(nbytes, comm)]
        if comm.nodes > 1 and comm.ppn > 1:
            out.append(p2p.all_to_all(nbytes, comm, hierarchical=True))
        return out
    if coll == "gather":
        return [p2p.gather(nbytes, comm)]
    return [p2p.send(nbytes, comm, same_node=comm.nodes == 1)]



def __getattr__(name: str):
    # the published runs (``validation``) load on first use: they need the models above this package
    if name == "validation":
        import importlib
        module = importlib.import_module(".validation", __name__)
        globals()[name] = module
        return module
    raise AttributeError(f"module 'collectives_lib.nccl' has no attribute {name!r}")
