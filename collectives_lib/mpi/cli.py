"""The ``run`` verb: the library's schedules over real MPI processes.

``collectives run ...`` and ``python -m collectives_lib.mpi ...`` both land
here (:func:`run_main`, and :func:`add_arguments` / :func:`run` for the main
command line). Launches mpiexec itself, or runs in place when started by
mpiexec; every process it starts ends on every exit path (:mod:`.guard`).

Introduced in the chapter *Measure it yourself*.
"""

from __future__ import annotations

import argparse
import json
import math
import sys

from ..builders import default_algorithm
from ..collective import collective as as_collective
from ..errors import CollectivesError
from ..plan import algorithms, build
from ..topology import Switch, parse_topology
from ..units import parse_size, sweep_sizes


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, status 2
        raise CollectivesError(message)


RUN_DESCRIPTION = """\
Run the library's schedule of a collective over N MPI processes, check every
rank's result against the collective's definition and MPI's own collective, and
time both, like nccl-tests' all_reduce_perf. Launches mpiexec itself, or runs in
place when started by mpiexec (for clusters: --hostfile, or your own mpiexec).

examples:
  {prog} --np 4 -c all_reduce -a ring,recursive_doubling -b 1K -e 4M
  {prog} --np 8 -c all_gather -a all --size 1MiB --calibrate
  {prog} --np 16 --hostfile hosts.txt -c all_reduce -a ring -b 8 -e 128M
  mpiexec -n 4 python -m collectives_lib run -c all_to_all -a direct --size 64K

limits: --timeout counts from the start of the command, building the schedules
included; past it, or on SIGTERM, SIGHUP or Ctrl-C, every MPI process is stopped
and the run's temporary files removed (ending them takes a second or two more:
SIGTERM, then SIGKILL after 3 s). More processes than the cap (64, or the
number of cores if more) need --oversubscribe; sizes whose buffers would not fit
in the available memory are refused.

exit status: 0 all correct, 1 a wrong result or a failed or timed-out run, 2 bad
options or no MPI, 128 + the signal's number when stopped by a signal.
"""


#: Most sizes one ``run`` times (each is --warmup + --iters collectives on every rank).
MAX_RUN_SIZES = 200


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--np", "-n", type=int, help="number of ranks N (default 2; under mpiexec: "
                   "the number of processes)")
    p.add_argument("--collective", "-c", default="all_reduce",
                   help="all_gather, reduce_scatter, all_reduce, all_to_all, broadcast, reduce, "
                        "gather or send (default all_reduce)")
    p.add_argument("--algorithm", "-a",
                   help="an algorithm, a comma-separated list, or 'all' (every one that "
                        "applies); default ring (binomial_tree for broadcast and reduce, direct "
                        "for gather and send)")
    p.add_argument("--topology", "-t", help="build the schedule for this topology instead of "
                   "switch:N (e.g. torus:2x4; see `collectives sweep -h`)")
    p.add_argument("--axes", help="mesh axes of --topology the collective spans, e.g. x")
    p.add_argument("--root", type=int, help="broadcast/reduce/gather root; send source (default 0)")
    p.add_argument("--dst", type=int, help="send destination (default: the last rank)")
    p.add_argument("--schedule", help="run a schedule saved with collectives_lib.mpi.save_schedule "
                   "(an .npz file)")
    p.add_argument("--size", "-s", help="one size V, e.g. 1MiB: the whole array as the library "
                   "counts it (gathered, unreduced, or for all-to-all the total over ranks)")
    p.add_argument("-b", "--minbytes", default="1K", help="smallest size of the sweep (default 1K)")
    p.add_argument("-e", "--maxbytes", default="1M", help="largest size (default 1M)")
    p.add_argument("-f", "--stepfactor", type=float, default=4.0, help="size multiplier (default 4)")
    p.add_argument("--iters", type=int, default=20, help="timed runs per size (default 20)")
    p.add_argument("--warmup", "-w", type=int, default=5, help="untimed runs first (default 5)")
    p.add_argument("--dtype", default="float64", choices=("float64", "float32"))
    p.add_argument("--calibrate", action="store_true",
                   help="ping-pong, fit alpha and beta, and add the simulator's prediction")
    p.add_argument("--hostfile", help="host file passed to mpiexec (-f) to run on a cluster")
    p.add_argument("--timeout", default="300",
                   help="seconds before the whole run is stopped, from the start (default 300)")
    p.add_argument("--oversubscribe", action="store_true",
                   help="start more processes than the cap (64, or the number of cores if more)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    p.add_argument("--payload", help=argparse.SUPPRESS)       # set by the launcher
    p.add_argument("--fail-rank", type=int, help=argparse.SUPPRESS)   # testing
    p.add_argument("--stall-rank", type=int, help=argparse.SUPPRESS)  # testing


def _run_sizes(args) -> list[int]:
    if args.size is not None:
        return [parse_size(args.size)]
    lo, hi = parse_size(args.minbytes), parse_size(args.maxbytes)
    if hi < lo:
        raise CollectivesError(f"-e {args.maxbytes} is smaller than -b {args.minbytes}")
    if not args.stepfactor > 1:
        raise CollectivesError(f"-f must be > 1, got {args.stepfactor}")
    count = 1 + math.floor(math.log(hi / lo) / math.log(args.stepfactor) + 1e-9) if hi > lo else 1
    if count > MAX_RUN_SIZES:
        raise CollectivesError(
            f"-b {args.minbytes} -e {args.maxbytes} -f {args.stepfactor:g} makes {count:,} sizes; a run "
            f"times at most {MAX_RUN_SIZES} (every size is --warmup + --iters runs on every rank): "
            f"use a larger -f, such as 2")
    return sweep_sizes(lo, hi, args.stepfactor)


def _run_schedules(args, num_ranks: int) -> list:
    from . import load_schedule
    if args.schedule:
        sched = load_schedule(args.schedule)
        if args.np is not None and args.np != sched.num_ranks:
            raise CollectivesError(f"--np {args.np} but the schedule in {args.schedule} is for "
                                   f"{sched.num_ranks} ranks; leave --np out")
        return [sched]
    collective = as_collective(args.collective)
    topo = parse_topology(args.topology, 1e9) if args.topology else Switch(num_ranks, bandwidth=1e9, in_network=True)
    axes = [a.strip() for a in args.axes.split(",")] if args.axes else None
    opts = collective.endpoints(args.root, args.dst)
    algorithm = args.algorithm or default_algorithm(collective)
    names = [a.strip() for a in str(algorithm).split(",") if a.strip()]
    if names == ["all"]:
        names = algorithms(collective, topo, axes)
    if not names:
        raise CollectivesError("--algorithm needs a name, a comma-separated list, or all")
    if collective.ends == "peer":      # a send: one pair of ranks, no axes to choose
        return [build(collective, topo, names[0], **opts)]
    return [build(collective, topo, a, axes=axes, **opts) for a in names]


def run(args, out, err) -> int:
    """``collectives run``: launch mpiexec, or run in place under it (see RUN_DESCRIPTION)."""
    from .. import mpi
    try:
        if args.payload:  # a process started by our own launcher
            mpi.serve_file(args.payload)
            return 0
        if mpi.under_mpiexec():
            return _run_in_place(args, out)
        timeout = mpi.check_timeout(args.timeout, "--timeout")
        with mpi.guarded(timeout, signals="raise") as guard:
            guard.phase = "building the schedules"
            result = _run_launch(args, timeout, err)
    except mpi.Stopped as stop:
        err.write(f"collectives run: stopped by {stop.name}; every MPI process was stopped and "
                  f"the run's files removed\n")
        return 128 + stop.signum
    except mpi.MPIRunError as exc:
        err.write(f"collectives run: error: {exc}\n")
        return 1
    except CollectivesError as exc:
        err.write(f"collectives run: error: {exc}\n")
        return 2
    except KeyboardInterrupt:
        err.write("collectives run: interrupted; every MPI process was stopped\n")
        return 130
    _run_emit(result, args.json, out)
    return 0 if result.ok else 1


def _run_launch(args, timeout: float, err):
    """The launcher's part of ``collectives run``: options checked before anything is
    built, the schedules, a warning when processes outnumber cores, the run."""
    from .. import mpi
    if args.np is not None and args.np < 1:
        raise CollectivesError(f"--np must be >= 1, got {args.np}")
    if args.topology:
        num_ranks = parse_topology(args.topology, 1e9).num_ranks
        if args.np is not None and args.np != num_ranks:
            raise CollectivesError(f"--topology {args.topology} has {num_ranks} ranks but "
                                   f"--np is {args.np}")
        what = f"--topology {args.topology} ({num_ranks} ranks)"
    else:
        num_ranks = args.np if args.np is not None else 2
        what = f"--np {num_ranks}"
    local = args.hostfile is None
    if local and not args.schedule:
        mpi.check_processes(num_ranks, oversubscribe=args.oversubscribe, what=what, flag="--oversubscribe")
    sizes = _run_sizes(args)
    size_text = f"--size {args.size}" if args.size is not None else f"-e {args.maxbytes}"
    mpi.check_memory(max(sizes), num_ranks if local and not args.schedule else 1,
                     what=f"{what} with {size_text}" if local and not args.schedule else size_text)
    schedules = _run_schedules(args, num_ranks)
    processes = max([s.num_participants for s in schedules] + [2 if args.calibrate else 1])
    if local:
        mpi.check_processes(processes, oversubscribe=args.oversubscribe, flag="--oversubscribe")
        if processes > mpi.cores():
            err.write(f"collectives run: warning: {processes} processes on {mpi.cores()} cores: the "
                      f"times include waiting for the scheduler, not only for messages\n")
            err.flush()
    inject = {k: v for k, v in (("fail_rank", args.fail_rank), ("stall_rank", args.stall_rank))
              if v is not None}
    return mpi.run(schedules, sizes, iters=args.iters, warmup=args.warmup, dtype=args.dtype,
                   calibrate=args.calibrate, timeout=timeout, hostfile=args.hostfile,
                   oversubscribe=args.oversubscribe, _inject=inject)


def _run_emit(result, as_json: bool, out) -> None:
    from . import format_table
    out.write((json.dumps(result.as_dict(), allow_nan=False) if as_json else format_table(result)) + "\n")
    out.flush()


def _run_in_place(args, out) -> int:
    """Started by mpiexec: every process builds the same schedules and runs them.

    N is ``--np`` if given, else the number of processes (emulated switches
    need more processes than ranks: ``mpiexec -n 5 ... --np 4 -a sharp``)."""
    from .. import mpi
    if args.hostfile:
        raise CollectivesError("--hostfile is for the launcher; under mpiexec give the host "
                               "file to mpiexec itself (mpiexec -f FILE -n N ...)")
    size, me = mpi.world()
    if args.topology:
        num_ranks = parse_topology(args.topology, 1e9).num_ranks
    else:
        num_ranks = args.np if args.np is not None else size
    schedules = _run_schedules(args, num_ranks)
    fit = [s for s in schedules if s.num_participants <= size]
    if not fit:
        need = min(s.num_participants for s in schedules)
        raise CollectivesError(f"the schedule needs {need} processes (ranks plus emulated "
                               f"switches); mpiexec started {size}")
    if len(fit) < len(schedules) and me == 0:
        skipped = ", ".join(f"{s.algorithm} (needs {s.num_participants} processes)"
                            for s in schedules if s.num_participants > size)
        out.write(f"# skipped {skipped}: it emulates a switch on an extra process\n")
    result, ok = mpi.run_in_place(fit, _run_sizes(args), iters=args.iters, warmup=args.warmup,
                                  dtype=args.dtype, calibrate=args.calibrate)
    if result is not None:
        _run_emit(result, args.json, out)
    return 0 if ok else 1


def run_main(argv: list[str], *, prog: str = "collectives run", out=None, err=None) -> int:
    """The ``run`` verb alone (``python -m collectives_lib.mpi ...``), with its own usage line."""
    out = out or sys.stdout
    err = err or sys.stderr
    parser = _Parser(prog=prog, description=RUN_DESCRIPTION.format(prog=prog),
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    try:
        args = parser.parse_args(list(argv))
    except CollectivesError as exc:
        err.write(f"collectives run: error: {exc}\n")
        return 2
    return run(args, out, err)
