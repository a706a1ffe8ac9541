"""The Python API: :func:`run` and :func:`run_collective` launch ``mpiexec``, wait for it
with a timeout, and return a :class:`~collectives_lib.mpi.results.RunResult`."""

from __future__ import annotations

import pickle
from typing import Sequence

import numpy as np

from ..collective import collective as as_collective
from ..errors import CollectivesError
from ..schedule import Schedule
from ..units import parse_size
from .buffers import DTYPES, check_memory, rounded_size, transfers
from .calibration import Calibration, calibration_from, calibration_sizes
from .executor import serve
from .guard import active, guarded
from .launch import check_mpi4py, check_processes, launch
from .results import RunResult
from .schedules import schedule_to_dict, validate


def parse_sizes(sizes) -> list[int]:
    """One size or several (bytes, or strings like ``"1MiB"``), as whole numbers of bytes."""
    sizes = [parse_size(s) for s in (sizes if np.iterable(sizes) and not isinstance(sizes, str) else [sizes])]
    if not sizes:
        raise CollectivesError("give at least one size")
    return sizes


def prepare(schedules: Sequence[Schedule], sizes, dtype: str) -> list[dict]:
    """The cases of a payload: each schedule as plain arrays, with the sizes it runs at."""
    if dtype not in DTYPES:
        raise CollectivesError(f"dtype {dtype!r} is not supported; use one of {', '.join(DTYPES)}")
    sizes = parse_sizes(sizes)
    for s in schedules:
        if not isinstance(s, Schedule):
            raise CollectivesError(f"expected a Schedule, got {type(s).__name__}")
    guard = active()
    cases = []
    for index, s in enumerate(schedules):
        if guard is not None:
            guard.check()  # outside the main thread, the only way the deadline is seen here
        validate(s)
        asked: dict[str, list[int]] = {}
        for n in sizes:
            asked.setdefault(str(rounded_size(s, n, dtype)), []).append(int(n))
        actual = sorted(int(k) for k in asked)
        cases.append({"schedule": schedule_to_dict(s), "sizes": actual, "index": index,
                      "asked": {k: sorted(set(v)) for k, v in asked.items()},
                      "label": f"{s.algorithm} {s.collective} N={s.num_ranks}"})
    return cases


def finish(result: dict, calibration: Calibration | None, predict: bool,
           schedules: Sequence[Schedule]) -> RunResult:
    """The :class:`RunResult` of what rank 0 reported, with predictions when calibrated."""
    cal = calibration or calibration_from(result.get("pingpong"), result.get("library", ""))
    rows = result["rows"]
    if cal is not None and predict:
        for r in rows:
            try:
                p = float(cal.predict(schedules[r["case_index"]], [r["size_bytes"]])[0])
            except CollectivesError:  # a participant the Switch model has no place for
                p = float("nan")
            r["predicted_s"] = p if np.isfinite(p) else None
            # nothing to compare with where the prediction is 0 (one rank) or unknown
            r["measured_over_predicted"] = r["time_s"] / p if np.isfinite(p) and p > 0 else None
    return RunResult(rows, cal, result.get("library", ""), int(result.get("world_size", 0)),
                     list(result.get("hosts", [])), int(result.get("iters", 0)),
                     int(result.get("warmup", 0)))


def run(schedules, sizes, *, iters: int = 20, warmup: int = 5, dtype: str = "float64",
        calibrate: bool | Calibration = False, processes: int | None = None,
        timeout: float = 300.0, hostfile=None, mpiexec_args: Sequence[str] = (),
        env: dict | None = None, seed: int = 0, oversubscribe: bool = False,
        _inject: dict | None = None) -> RunResult:
    """Run ``schedules`` (one or a list) over MPI at every size in ``sizes`` (bytes or
    strings like ``"1MiB"``); check and time each, and time MPI's own collective.

    One ``mpiexec`` launch runs everything, with as many processes as the
    largest schedule has participants (ranks, plus one per emulated switch)
    unless ``processes`` asks for more; smaller schedules run on the first
    processes while the others sleep. ``calibrate=True`` adds a ping-pong
    between processes 0 and 1 (sizes from :func:`calibration_sizes`) and the
    simulator's prediction for every row
    (``predicted_s``, ``measured_over_predicted``); pass a
    :class:`Calibration` to reuse one.

    ``timeout`` (s) bounds the whole run, from this call on: past it every
    process is killed, the run's files removed, and :class:`MPIRunError` raised.
    SIGTERM, SIGHUP or Ctrl-C during the run do the same, then reach the handler
    that was there before (:mod:`collectives_lib.mpi.guard`: in the main thread
    only). More than :func:`~collectives_lib.mpi.launch.process_cap` processes on
    this machine need ``oversubscribe=True``, and a run that would need more
    memory than is available is refused.
    """
    with guarded(timeout) as guard:
        guard.phase = "preparing the schedules"
        if isinstance(schedules, Schedule):
            schedules = [schedules]
        schedules = list(schedules)
        if not schedules:
            raise CollectivesError("give at least one schedule to run")
        for name, v, lo in (("iters", iters, 1), ("warmup", warmup, 0)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
                raise CollectivesError(f"{name} must be a whole number >= {lo}, got {v!r}")
        sizes = parse_sizes(sizes)
        for s in schedules:
            if not isinstance(s, Schedule):
                raise CollectivesError(f"expected a Schedule, got {type(s).__name__}")
        need = max(s.num_participants for s in schedules)
        if calibrate is True:
            need = max(need, 2)
        np_ = need if processes is None else int(processes)
        if np_ < need:
            raise CollectivesError(f"processes={processes} is too few: the schedules need {need}")
        if hostfile is None:
            check_processes(np_, oversubscribe=oversubscribe)
        largest = max(sizes)
        check_memory(largest, 1 if hostfile is not None else np_, num_transfers=transfers(schedules))
        cases = prepare(schedules, sizes, dtype)
        largest = max(max(c["sizes"]) for c in cases)
        payload = {"cases": cases, "iters": int(iters), "warmup": int(warmup), "dtype": dtype,
                   "seed": int(seed), "inject": dict(_inject or {}),
                   "calibrate": list(calibration_sizes(largest)) if calibrate is True else None}
        result = launch(payload, np_, timeout=timeout, hostfile=hostfile,
                        mpiexec_args=mpiexec_args, env=env)
        cal = calibrate if isinstance(calibrate, Calibration) else None
        return finish(result, cal, bool(calibrate), schedules)


def _switch_schedules(collective: str, num_ranks: int, algorithms, **options) -> list[Schedule]:
    from ..plan import algorithms as applicable, build
    from ..topology import Switch
    topo = Switch(num_ranks, bandwidth=1e9, in_network=True)   # the emulated switch adds (SHARP)
    names = applicable(collective, topo)
    if algorithms in (None, "all"):
        chosen = names
    else:
        chosen = [algorithms] if isinstance(algorithms, str) else list(algorithms)
    return [build(collective, topo, a, **options) for a in chosen]


def run_collective(collective: str, num_ranks: int, algorithms="all", *, sizes=("1MiB",),
                   **kwargs) -> RunResult:
    """:func:`run` for the library's schedules of ``collective`` on ``Switch(num_ranks)``
    (``algorithms``: a name, a list, or ``"all"``: every algorithm that applies)."""
    collective = as_collective(collective)
    options = {k: kwargs.pop(k) for k in ("root", "matrix", "chunks") if k in kwargs}
    return run(_switch_schedules(collective, num_ranks, algorithms, **options), sizes, **kwargs)



def world() -> tuple[int, int]:
    """(number of processes, this process's rank) under an mpiexec that is already running."""
    check_mpi4py()
    from mpi4py import MPI
    return MPI.COMM_WORLD.Get_size(), MPI.COMM_WORLD.Get_rank()


def run_in_place(schedules: Sequence[Schedule], sizes, *, iters: int = 20, warmup: int = 5,
                 dtype: str = "float64", calibrate: bool = False) -> tuple[RunResult | None, bool]:
    """Run ``schedules`` on the processes of an mpiexec that is already running: every
    process calls this with the same arguments (``mpiexec -n 4 python -m collectives_lib run
    ...``). Returns ``(result, ok)``: the result at rank 0 (None elsewhere), and at every
    process whether every row is correct."""
    from mpi4py import MPI
    world_comm = MPI.COMM_WORLD
    sizes = parse_sizes(sizes)
    check_memory(max(sizes), 1, num_transfers=transfers(schedules))
    cases = prepare(schedules, sizes, dtype)
    largest = max(max(c["sizes"]) for c in cases)
    calib = list(calibration_sizes(largest)) if calibrate and world_comm.Get_size() >= 2 else None
    payload = {"cases": cases, "iters": iters, "warmup": warmup, "dtype": dtype,
               "seed": 0, "inject": {}, "calibrate": calib}
    result = serve(payload, emit=False)
    ok = world_comm.bcast(None if result is None else all(r["correct"] for r in result["rows"]), root=0)
    if result is None:
        return None, bool(ok)
    return finish(result, None, bool(calib), schedules), bool(ok)


def serve_file(path) -> None:
    """What a process started by :func:`~collectives_lib.mpi.launch.launch` does: read the
    payload the launcher wrote to ``path`` and run it (rank 0 prints the results)."""
    check_mpi4py()
    with open(path, "rb") as f:
        payload = pickle.load(f)
    serve(payload, emit=True)
