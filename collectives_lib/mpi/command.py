"""The command: ``python -m collectives_lib run ...`` (see :data:`RUN_DESCRIPTION`)."""

from __future__ import annotations

import argparse
import json
import pickle
import sys
from typing import Any

from ..collective import collective as as_collective
from ..errors import CollectivesError
from ..schedule import Schedule
from ..units import parse_size
from .buffers import DTYPES
from .calibration import calibration_sizes
from .executor import serve
from .launch import MPIRunError, check_mpi4py, under_mpiexec
from .results import RunResult, format_table
from .runner import finish, prepare, run
from .schedules import load_schedule


RUN_DESCRIPTION = """\
Run the library's schedule of a collective over N MPI processes, check every
rank's result against the collective's definition and MPI's own collective, and
time both, like nccl-tests' all_reduce_perf. Launches mpiexec itself, or runs in
place when started by mpiexec (for clusters: --hostfile, or your own mpiexec).

examples:
  python -m collectives_lib run --np 4 -c all_reduce -a ring,recursive_doubling -b 1K -e 4M
  python -m collectives_lib run --np 8 -c all_gather -a all --size 1MiB --calibrate
  python -m collectives_lib run --np 16 --hostfile hosts.txt -c all_reduce -a ring -b 8 -e 128M
  mpiexec -n 4 python -m collectives_lib run -c all_to_all -a direct --size 64K

exit status: 0 all correct, 1 a wrong result or a failed run, 2 bad options or no MPI.
"""


class _ArgumentParser(argparse.ArgumentParser):
    def error(self, message):  # one line, our exit code
        raise CollectivesError(message)


def _parser() -> argparse.ArgumentParser:
    p = _ArgumentParser(prog="python -m collectives_lib run", description=RUN_DESCRIPTION,
                        formatter_class=argparse.RawDescriptionHelpFormatter)
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
    p.add_argument("--root", type=int, default=0, help="broadcast/reduce/gather root; send source")
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
    p.add_argument("--dtype", default="float64", choices=DTYPES)
    p.add_argument("--calibrate", action="store_true",
                   help="ping-pong, fit alpha and beta, and add the simulator's prediction")
    p.add_argument("--hostfile", help="host file passed to mpiexec (-f) to run on a cluster")
    p.add_argument("--timeout", type=float, default=300.0,
                   help="seconds before the whole run is killed (default 300)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    p.add_argument("--payload", help=argparse.SUPPRESS)       # set by the launcher
    p.add_argument("--fail-rank", type=int, help=argparse.SUPPRESS)   # testing
    p.add_argument("--stall-rank", type=int, help=argparse.SUPPRESS)  # testing
    return p


def _sweep_sizes(args) -> list[int]:
    if args.size is not None:
        return [parse_size(args.size)]
    lo, hi = parse_size(args.minbytes), parse_size(args.maxbytes)
    if hi < lo:
        raise CollectivesError(f"-e {args.maxbytes} is smaller than -b {args.minbytes}")
    if not args.stepfactor > 1:
        raise CollectivesError(f"-f must be > 1, got {args.stepfactor}")
    sizes, s = [], float(lo)
    while s <= hi * (1 + 1e-12):
        sizes.append(int(round(s)))
        s *= args.stepfactor
    return sizes


def _schedules_from_args(args, num_ranks: int) -> list[Schedule]:
    if args.schedule:
        sched = load_schedule(args.schedule)
        if args.np is not None and args.np != sched.num_ranks:
            raise CollectivesError(f"--np {args.np} but the schedule in {args.schedule} is for "
                                   f"{sched.num_ranks} ranks; leave --np out")
        return [sched]
    from ..plan import algorithms as applicable, build
    from ..topology import Switch
    collective = as_collective(args.collective)
    if args.topology:
        from ..topology import parse_topology
        topo = parse_topology(args.topology, 1e9)
    else:
        topo = Switch(num_ranks, bandwidth=1e9)
    axes = [a.strip() for a in args.axes.split(",")] if args.axes else None
    opts: dict[str, Any] = {}
    if collective in ("broadcast", "reduce", "gather"):
        opts["root"] = args.root
    if collective == "send":
        opts["src"] = args.root
        if args.dst is not None:
            opts["dst"] = args.dst
    default = {"broadcast": "binomial_tree", "reduce": "binomial_tree", "send": "direct",
               "gather": "direct"}
    algorithm = args.algorithm or default.get(collective, "ring")
    names = [a.strip() for a in str(algorithm).split(",") if a.strip()]
    if names == ["all"]:
        names = applicable(collective, topo, axes)
    if not names:
        raise CollectivesError("--algorithm needs a name, a comma-separated list, or all")
    if collective == "send":
        return [build("send", topo, names[0], **opts)]
    return [build(collective, topo, a, axes=axes, **opts) for a in names]


def main_run(argv: list[str]) -> int:
    """``python -m collectives_lib run ...``: see :data:`RUN_DESCRIPTION`."""
    out, err = sys.stdout, sys.stderr
    try:
        args = _parser().parse_args(list(argv))
        if args.payload:  # a process started by our own launcher
            check_mpi4py()
            with open(args.payload, "rb") as f:
                payload = pickle.load(f)
            serve(payload, emit=True)
            return 0
        if under_mpiexec():
            return _run_in_place(args, out)
        if args.np is not None and args.np < 1:
            raise CollectivesError(f"--np must be >= 1, got {args.np}")
        if args.topology:
            num_ranks = _topology_ranks(args.topology)
            if args.np is not None and args.np != num_ranks:
                raise CollectivesError(f"--topology {args.topology} has {num_ranks} ranks but "
                                       f"--np is {args.np}")
        else:
            num_ranks = args.np if args.np is not None else 2
        schedules = _schedules_from_args(args, num_ranks)
        inject = {k: v for k, v in (("fail_rank", args.fail_rank), ("stall_rank", args.stall_rank))
                  if v is not None}
        result = run(schedules, _sweep_sizes(args), iters=args.iters, warmup=args.warmup,
                     dtype=args.dtype, calibrate=args.calibrate, timeout=args.timeout,
                     hostfile=args.hostfile, _inject=inject)
    except MPIRunError as exc:
        err.write(f"collectives run: error: {exc}\n")
        return 1
    except CollectivesError as exc:
        err.write(f"collectives run: error: {exc}\n")
        return 2
    except KeyboardInterrupt:
        err.write("collectives run: interrupted; every MPI process was stopped\n")
        return 130
    _emit(result, args.json, out)
    return 0 if result.ok else 1


def _emit(result: RunResult, as_json: bool, out) -> None:
    if as_json:
        out.write(json.dumps(result.as_dict()) + "\n")
    else:
        out.write(format_table(result) + "\n")
    out.flush()


def _run_in_place(args, out) -> int:
    """Started by mpiexec: every process builds the same payload and runs it.

    N is ``--np`` if given, else the number of processes (emulated switches
    need more processes than ranks: ``mpiexec -n 5 ... --np 4 -a sharp``)."""
    if args.hostfile:
        raise CollectivesError("--hostfile is for the launcher; under mpiexec give the host "
                               "file to mpiexec itself (mpiexec -f FILE -n N ...)")
    check_mpi4py()
    from mpi4py import MPI
    world = MPI.COMM_WORLD
    size, me = world.Get_size(), world.Get_rank()
    if args.topology:
        num_ranks = _topology_ranks(args.topology)
    else:
        num_ranks = args.np if args.np is not None else size
    schedules = _schedules_from_args(args, num_ranks)
    fit = [s for s in schedules if s.num_participants <= size]
    if not fit:
        need = min(s.num_participants for s in schedules)
        raise CollectivesError(f"the schedule needs {need} processes (ranks plus emulated "
                               f"switches); mpiexec started {size}")
    if len(fit) < len(schedules) and me == 0:
        skipped = ", ".join(f"{s.algorithm} (needs {s.num_participants} processes)"
                            for s in schedules if s.num_participants > size)
        out.write(f"# skipped {skipped}: it emulates a switch on an extra process\n")
    schedules = fit
    cases = prepare(schedules, _sweep_sizes(args), args.dtype)
    largest = max(max(c["sizes"]) for c in cases)
    calib = list(calibration_sizes(largest)) if args.calibrate and size >= 2 else None
    payload = {"cases": cases, "iters": args.iters, "warmup": args.warmup, "dtype": args.dtype,
               "seed": 0, "inject": {}, "calibrate": calib}
    result = serve(payload, emit=False)
    ok = world.bcast(None if result is None else all(r["correct"] for r in result["rows"]), root=0)
    if me == 0:
        _emit(finish(result, None, bool(calib), schedules), args.json, out)
    return 0 if ok else 1


def _topology_ranks(spec: str) -> int:
    from ..topology import parse_topology
    return parse_topology(spec, 1e9).num_ranks
