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
* :func:`estimate` is the model's one entry: NCCL's pick at every size, the tuner's
  time it chooses by, the time a run would measure, and the alternatives.
* :func:`comm_for` turns a topology (and the axes a collective spans) into the
  communicator NCCL would see; :func:`predictions` lists what NCCL would
  consider for a collective and size.

Introduced in the chapter *GPU collectives within the node*.
"""

from __future__ import annotations

from . import measured, p2p, tables
from .comm import comm_for, predictions, supports
from .estimate import estimate, names_here
from .measured import measured_time
from .tuner import Comm, Prediction, choose, make_comm, predict, predict_all

__all__ = ["estimate", "names_here", "Comm", "Prediction", "comm_for", "supports", "predictions", "choose",
           "make_comm", "predict", "predict_all", "measured_time", "tables", "p2p", "measured", "VERSION"]

VERSION = tables.VERSION


def __getattr__(name: str):
    # the published runs (``validation``) load on first use: they need the models above this package
    if name == "validation":
        import importlib
        module = importlib.import_module(".validation", __name__)
        globals()[name] = module
        return module
    raise AttributeError(f"module 'collectives_lib.nccl' has no attribute {name!r}")
