"""collectives_lib: the engine of the book on collective communication.

Topologies (rings, chains, tori, TPU slices and pods, NVSwitch nodes, InfiniBand
fat trees), step-accurate collective schedules, replay on real data, and a
contention-aware simulator. ``import collectives_lib as cl`` pulls in numpy
only: drawing (``cl.draw``), explorers (``cl.explore``), the MPI runner
(``cl.mpi``), the reader of nccl-tests outputs (``cl.diagnose``, a module one
calls: ``cl.diagnose("all_reduce_perf.log")``) and the command line (``cl.cli``)
load on first use.

>>> import collectives_lib as cl
>>> ring = cl.Ring(8, bandwidth=45e9, latency=1e-6)
>>> schedule = cl.build("all_gather", ring, "ring")
>>> _ = cl.check(schedule)                 # replayed on real numbers
>>> print(cl.format_time(cl.simulate(schedule, ring, 2**30).time))
20.9 ms

The public names are listed once, by section, in :data:`toc`; ``__all__`` is
made from it (the shape of SimPy's ``__init__``), so the documentation and the
implementation cannot drift apart.
"""

from __future__ import annotations

import importlib

from . import analysis, builders, costs, hardware, nccl, units
from .analysis import Choice, choose, time_flows
from .bounds import Bound, lower_bound
from .models import Estimate, estimate
from .collective import COLLECTIVES, Collective
from .errors import CollectivesError, ScheduleError
from .plan import algorithms, build
from .replay import State, arrival_steps, check, replay, replay_inputs
from .schedule import (Op, Schedule, Step, Traffic, Transfer, all_reduce_from, concat, dual, embed,
                       reduce_scatter_from)
from .simulate import Result, simulate, simulate_sizes, step_link_loads
from .topology import (Chain, FullMesh, GpuCluster, Ring, Switch, Topology, Torus, mesh,
                       nvswitch_node, parse_topology, superpod, tpu_pod, tpu_slice, tpu_system)
from .units import format_bytes, format_rate, format_time, parse_size

__version__ = "0.2.0"

#: The public API, by section: (section, names).
toc = (
    ("Collectives", ("Collective", "COLLECTIVES")),
    ("Topologies", ("Topology", "Ring", "Chain", "Torus", "mesh", "FullMesh", "Switch",
                    "nvswitch_node", "GpuCluster", "superpod", "tpu_slice", "tpu_pod",
                    "tpu_system", "parse_topology")),
    ("Schedules", ("Schedule", "Step", "Traffic", "Transfer", "Op", "embed", "dual", "concat",
                   "reduce_scatter_from", "all_reduce_from")),
    ("Building", ("build", "algorithms", "choose", "Choice")),
    ("Proving", ("replay", "replay_inputs", "check", "arrival_steps", "State")),
    ("Timing", ("estimate", "Estimate", "simulate", "simulate_sizes", "step_link_loads", "Result",
                "time_flows", "lower_bound", "Bound")),
    ("Sizes", ("parse_size", "format_bytes", "format_time", "format_rate")),
    ("Errors", ("CollectivesError", "ScheduleError")),
    ("Modules", ("analysis", "builders", "costs", "hardware", "nccl", "units",
                 "hlo", "diagnose", "book", "workloads", "scaling", "wire", "explore", "draw", "mpi",
                 "cli")),
)

__all__ = [name for _, names in toc for name in names]

#: Loaded on first use: the tools (``hlo``, ``diagnose``, ``mpi``, ``cli``), the drawings and the
#: book's helpers (``book``; ``workloads``, ``scaling``, ``wire`` and ``explore`` are its modules).
_LAZY = {"draw": "draw", "book": "book", "mpi": "mpi", "cli": "cli", "hlo": "hlo",
         "diagnose": "diagnose",
         "workloads": "book.workloads", "scaling": "book.scaling", "wire": "book.wire",
         "explore": "book.explore"}


def __getattr__(name: str):
    if name in _LAZY:
        module = importlib.import_module(f".{_LAZY[name]}", __name__)
        globals()[name] = module
        return module
    raise AttributeError(f"module 'collectives_lib' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
