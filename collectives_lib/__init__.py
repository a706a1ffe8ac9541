"""collectives_lib: the engine of the book on collective communication.

Topologies (rings, chains, tori, TPU slices and pods, NVSwitch nodes, InfiniBand
fat trees), step-accurate collective schedules, replay on real data, and a
contention-aware simulator. ``import collectives_lib as cl`` pulls in numpy
only: drawing (``cl.draw``), explorers (``cl.explore``) and the MPI runner
(``cl.mpi``) load on first use.
"""

from __future__ import annotations

import importlib

from . import costs, hardware, scaling, workloads
from .builders import (bidirectional_ring_all_gather_local as bidirectional_ring_all_gather,
                         bidirectional_ring_all_to_all_local as bidirectional_ring_all_to_all,
                         chain_all_gather_local as chain_all_gather,
                         chain_all_to_all_local as chain_all_to_all,
                         direct_all_gather_local as direct_all_gather,
                         direct_all_to_all_local as direct_all_to_all,
                         hierarchical_all_gather_local as hierarchical_all_gather,
                         hierarchical_all_to_all_local as hierarchical_all_to_all,
                         multicast_all_gather_local as multicast_all_gather,
                         rabenseifner_all_reduce_local as rabenseifner_all_reduce,
                         recursive_doubling_all_gather_local as recursive_doubling_all_gather,
                         recursive_doubling_all_reduce_local as recursive_doubling_all_reduce,
                         ring_all_gather_local as ring_all_gather,
                         ring_all_to_all_local as ring_all_to_all,
                         sharp_all_reduce_local as sharp_all_reduce,
                         tree_all_reduce_local as tree_all_reduce,
                         binomial_broadcast_local as binomial_broadcast,
                         mesh_all_gather_local as mesh_all_gather,
                         all_reduce_from, reduce_scatter_from)
from .collectives import (Choice, algorithms, build, build_gather, build_send, choose,
                          estimate, time_flows)
from .errors import CollectivesError, ScheduleError
from .replay import State, arrival_steps, check, replay, replay_inputs
from .schedule import (BUSBW_FACTORS, COLLECTIVES, Op, Schedule, Step, Traffic, Transfer,
                       concat, dual, embed)
from .simulate import Result, simulate, simulate_sizes, step_link_loads
from .topology import (Chain, FullMesh, GpuCluster, Ring, Switch, Topology, Torus, TpuSlice, TpuSystem,
                       mesh, nvswitch_node, parse_shape, superpod, tpu_pod, tpu_slice,
                       tpu_system)
from .units import (GB, GiB, KB, KiB, MB, MiB, TB, format_bytes, format_rate, format_time,
                    parse_size)

__version__ = "0.1.0"


def ring_reduce_scatter(n: int) -> Schedule:
    """Reduce-scatter on a unidirectional ring: the all-gather reversed, reducing."""
    return reduce_scatter_from(ring_all_gather(n))


def bidirectional_ring_reduce_scatter(n: int) -> Schedule:
    return reduce_scatter_from(bidirectional_ring_all_gather(n))


def chain_reduce_scatter(n: int) -> Schedule:
    return dual(chain_all_gather(n))


def recursive_halving_reduce_scatter(n: int) -> Schedule:
    return dual(recursive_doubling_all_gather(n), algorithm="recursive_halving")


def ring_all_reduce(n: int) -> Schedule:
    """Reduce-scatter then all-gather on a unidirectional ring: 2(N-1) steps."""
    return all_reduce_from(ring_all_gather(n))


def bidirectional_ring_all_reduce(n: int) -> Schedule:
    return all_reduce_from(bidirectional_ring_all_gather(n))


def chain_all_reduce(n: int) -> Schedule:
    return all_reduce_from(chain_all_gather(n))


_LAZY = {"draw", "explore", "mpi", "cli"}


def __getattr__(name: str):
    if name in _LAZY:
        module = importlib.import_module(f".{name}", __name__)
        globals()[name] = module
        return module
    raise AttributeError(f"module 'collectives_lib' has no attribute {name!r}")
