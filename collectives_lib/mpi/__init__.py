"""Run the library's schedules over real MPI ranks, check them, and time them.

A :class:`~collectives_lib.schedule.Schedule` is data: steps of transfers, each
moving a box of slots from one participant to another. This package executes
that data as point-to-point MPI messages between processes, on real numpy
buffers, and compares the result with the collective's definition and with
MPI's own collective (``MPI_Allgather``, ``MPI_Reduce_scatter_block``,
``MPI_Allreduce``, ``MPI_Alltoall``, ``MPI_Bcast``, ``MPI_Reduce``,
``MPI_Gather``; a send is compared with ``MPI_Send``/``MPI_Recv``) on the same
input. It also times both, and fits the alpha-beta model to a ping-pong so that
the simulator can predict what was measured.

Three ways in:

* ``collectives run --np 4 --collective all_reduce --algorithm ring -b 1K -e 1M``
  (the command line's ``run`` verb, :mod:`collectives_lib.cli`; also
  ``python -m collectives_lib run`` or ``python -m collectives_lib.mpi`` with the
  same options) launches ``mpiexec`` itself and prints a table like
  nccl-tests' ``all_reduce_perf``. Under ``mpiexec`` already (``mpiexec -n 4
  python -m collectives_lib run ...``, or with ``--hostfile`` on a cluster) it
  runs in place.
* :func:`run` and :func:`run_collective` from Python (a notebook): they launch
  ``mpiexec``, wait for it with a timeout, and return a :class:`RunResult`.
* :func:`calibrate` measures a ping-pong between two processes and fits
  ``t(m) = alpha + beta m``; :meth:`Calibration.predict` turns the fit into the
  simulator's prediction for any schedule.

The modules, by concern:

=================  ===========================================================
``schedules``      schedules as plain arrays, :func:`save_schedule`/:func:`load_schedule`, :func:`validate`
``buffers``        :class:`Layout`, inputs, held and expected buffers, the comparison
``executor``       what runs inside the MPI processes (mpi4py is imported there)
``launch``         finding and starting ``mpiexec``, its temporary files, processes versus cores
``guard``          the run's deadline and its stop signals (SIGTERM, SIGHUP, SIGINT)
``processes``      the process table, and stopping a run's whole process tree
``calibration``    :class:`Calibration`, :func:`calibrate`, :func:`calibration_sizes`
``results``        :class:`RunResult`, :func:`format_table`, :func:`parse_table`
``runner``         :func:`run`, :func:`run_collective`, :func:`run_in_place` (under an mpiexec)
``reference``      :func:`reference`: recorded runs shipped with the library, medians over repeats
=================  ===========================================================

Importing this package does not import mpi4py: only the MPI processes do.

Introduced in the chapter *Measure it yourself*.
"""

from __future__ import annotations

from .buffers import (DTYPES, Layout, available_memory, check_memory, expected_buffer, held_slots, initial_buffer,
                      input_values, rounded_size, transfers)
from .calibration import CALIBRATION_SIZES, Calibration, calibrate, calibration_sizes
from .errors import MPIRunError, MPIUnavailable
from .guard import MAX_TIMEOUT, DeadlineExceeded, RunGuard, Stopped, check_timeout, guarded
from .launch import (INSTALL_HINT, MAX_PROCESSES, available, check_mpi4py, check_processes, cores,
                     find_mpiexec, process_cap, under_mpiexec)
from .reference import REFERENCES, Reference, reference
from .results import COMPACT_COLUMNS, TABLE_COLUMNS, RunResult, format_table, parse_table
from .runner import run, run_collective, run_in_place, serve_file, world
from .schedules import MPI_NAMES, load_schedule, save_schedule, schedule_from_dict, schedule_to_dict, validate

__all__ = [
    # running
    "run", "run_collective", "calibrate", "available", "find_mpiexec", "check_mpi4py", "under_mpiexec",
    "run_in_place", "world", "serve_file",
    # results
    "RunResult", "Calibration", "format_table", "parse_table", "TABLE_COLUMNS", "COMPACT_COLUMNS",
    "calibration_sizes", "CALIBRATION_SIZES", "reference", "Reference", "REFERENCES",
    # schedules and buffers
    "save_schedule", "load_schedule", "validate", "schedule_to_dict", "schedule_from_dict", "MPI_NAMES",
    "Layout", "DTYPES", "input_values", "held_slots", "initial_buffer", "expected_buffer", "rounded_size",
    # limits: time, signals, processes, memory
    "guarded", "RunGuard", "Stopped", "DeadlineExceeded", "check_timeout", "MAX_TIMEOUT",
    "check_processes", "process_cap", "cores", "MAX_PROCESSES", "check_memory", "available_memory",
    "transfers",
    # errors
    "MPIUnavailable", "MPIRunError", "INSTALL_HINT",
]
