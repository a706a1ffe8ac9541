"""Command line: what-if questions answered the way nccl-tests reports measurements.

    python -m collectives_lib estimate --topology tpu-v5e:16x16 --collective all_gather --size 1GiB
    python -m collectives_lib sweep --topology dgx-h100:1 --collective all_reduce -b 8 -e 8G -f 4
    python -m collectives_lib algorithms --topology ring:8 --bandwidth 45e9 --collective all_to_all
    python -m collectives_lib show --topology ring:4 --bandwidth 1e9 --collective all_reduce
    python -m collectives_lib run --np 4 --collective all_reduce --algorithm ring --size 1MiB

Bad input exits with status 2 and one line naming the value and what is allowed.
"""

from __future__ import annotations

import argparse
import json
import sys

import math

from . import nccl
from .builders import entries
from .collective import COLLECTIVES, collective as as_collective
from .errors import CollectivesError
from .models import MODELS, Estimate, estimate, sweep
from .plan import algorithms, build
from .topology import TOPOLOGY_HELP, Switch, Topology, parse_rate, parse_seconds, parse_topology
from .units import DTYPES, element_size, format_bytes, format_rate, format_time, parse_size

class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, status 2
        raise CollectivesError(message)


def _axes(text):
    if text is None:
        return None
    parts = [p.strip() for p in str(text).split(",") if p.strip()]
    if not parts:
        raise CollectivesError("--axes needs axis names, like x or x,y")
    return parts


def _common(p: argparse.ArgumentParser, *, size: bool = True, collective: bool = True,
            model: bool = True) -> None:
    p.add_argument("--topology", "-t", required=True, help=TOPOLOGY_HELP)
    if collective:
        p.add_argument("--collective", "-c", required=True,
                       help="one of " + ", ".join(c.value for c in COLLECTIVES))
    p.add_argument("--algorithm", "-a", default="auto", help="an algorithm name, or auto")
    p.add_argument("--axes", help="mesh axes the collective spans, e.g. x or x,y (node, gpu on GPU clusters)")
    p.add_argument("--bandwidth", help="one-way bytes/s per link (replaces a preset's values)")
    p.add_argument("--latency", help="seconds per hop (replaces a preset's values), e.g. 1e-6 or 1us")
    p.add_argument("--oversubscription", type=float, default=1.0,
                   help="GPU clusters: leaf uplink oversubscription (1 = full fat tree)")
    p.add_argument("--root", type=int, default=0, help="broadcast/reduce/gather root; send source")
    p.add_argument("--dst", type=int, help="send destination (default: the last rank)")
    if model:
        p.add_argument("--model", choices=MODELS, type=str.lower,
                       help="nccl (NCCL's tuner: what nccl-tests measures; the default on GPU "
                            "presets) or ideal (the links alone; the default elsewhere)")
        p.add_argument("--protocol", "-p", type=str.upper, choices=("LL", "LL128", "SIMPLE"),
                       help="NCCL's model: fix the protocol (default: NCCL's choice)")
        p.add_argument("--nvls", choices=("on", "off"), help="NCCL's model: NVLink SHARP on or "
                       "off (NCCL_NVLS_ENABLE); default on where the system has it")
        p.add_argument("--dtype", "-d", default="float32", type=str.lower,
                       help="element type, as nccl-tests' -d (default float32): " + ", ".join(DTYPES))
    if size:
        p.add_argument("--size", "-s", required=True,
                       help="nccl-tests' size: the buffer (all-reduce, broadcast, reduce), the "
                            "gathered output (all-gather), the input (reduce-scatter), one rank's "
                            "buffer (all-to-all); bytes, or with KB/MB/GB, KiB/MiB/GiB, K/M/G (a lowercase b, "
                            "as in 1Kb, is bits and refused)")


_EXAMPLES = {
    "estimate": """examples:
  collectives estimate -t dgx-h100:1 -c all_reduce -s 4GiB
  collectives estimate -t dgx-h100:16 -c all_reduce -s 4MiB --protocol LL128
  collectives estimate -t tpu-v5p:4x4x4 -c all_gather -s 1GiB --json
  collectives estimate -t ring:8 --bandwidth 45e9 --latency 1us -c all_to_all -s 128MiB
""",
    "sweep": """examples:
  collectives sweep -t dgx-h100:1 -c all_reduce -b 8 -e 8G -f 2        (as all_reduce_perf)
  collectives sweep -t dgx-h100:1 -c all_reduce -b 8 -e 8G --nvls off
  collectives sweep -t tpu-v5e:16x16 -c all_gather -b 1K -e 1G -f 4 --axes x
""",
    "algorithms": """examples:
  collectives algorithms -t ring:6 --bandwidth 45e9 -c all_reduce
  collectives algorithms -t dgx-h100:16 -c all_reduce -s 64MiB
""",
    "show": """examples:
  collectives show -t ring:4 --bandwidth 1e9 -c all_reduce -a ring
  collectives show -t tpu-v5e:2x2 -c all_gather --max-steps 4
""",
}
_DESCRIPTIONS = {
    "estimate": "Time one collective on a topology, as nccl-tests would report it (time, algbw, "
                "busbw), with the lower bound beside it and the model that answered.",
    "sweep": "A table over sizes from -b to -e, each -f times the last, like nccl-tests' *_perf "
             "tools; auto may pick a different algorithm at each size, as NCCL does.",
    "algorithms": "List the algorithms that apply to a collective on a topology, with a reason "
                  "for each that does not, and the one auto picks.",
    "show": "Print a schedule step by step: who sends which block to whom.",
}


def _make_parser(prog: str = "collectives") -> argparse.ArgumentParser:
    parser = _Parser(prog=prog, description=__doc__,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    import collectives_lib
    parser.add_argument("--version", action="version", version=f"collectives {collectives_lib.__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)

    def verb(name: str, help_text: str):
        return sub.add_parser(name, help=help_text, description=_DESCRIPTIONS[name],
                              epilog=_EXAMPLES[name],
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p = verb("estimate", "time one collective")
    _common(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p = verb("sweep", "a table over sizes, like nccl-tests")
    _common(p, size=False)
    p.add_argument("-b", "--minbytes", default="8", help="smallest size (default 8)")
    p.add_argument("-e", "--maxbytes", default="128M", help="largest size (default 128M)")
    p.add_argument("-f", "--stepfactor", type=float, default=2.0, help="size multiplier (default 2)")
    p.add_argument("--json", action="store_true", help="print a JSON list")
    p = verb("algorithms", "list algorithms that apply")
    _common(p, size=False)
    p.add_argument("--size", "-s", help="size for auto's choice (default 1GiB)")
    p = verb("show", "print a small schedule step by step")
    _common(p, size=False, model=False)
    p.add_argument("--max-steps", type=int, default=64, help="steps to print (default 64)")
    _hlo_parser(sub)
    p = sub.add_parser("run", help="run a schedule over MPI and compare with MPI's collective",
                       description=RUN_DESCRIPTION.format(prog=f"{prog} run"),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    _run_options(p)
    return parser


def _topology(args) -> Topology:
    return parse_topology(args.topology, parse_rate(args.bandwidth), parse_seconds(args.latency),
                          args.oversubscription)


def _options(args, collective: str) -> dict:
    opts = {}
    if collective in ("broadcast", "reduce"):
        opts["root"] = args.root
    if collective == "send":
        opts["src"] = args.root
        if args.dst is not None:
            opts["dst"] = args.dst
    return opts


def _request(args):
    """What every subcommand starts from: (topology, collective, axes, options)."""
    topo = _topology(args)
    collective = as_collective(args.collective)
    return topo, collective, _axes(args.axes), _options(args, collective)


def _model_options(args) -> dict:
    nvls = None if args.nvls is None else args.nvls == "on"
    return {"model": args.model, "protocol": args.protocol, "dtype": args.dtype, "nvls": nvls}


def _model_line(e: Estimate) -> str:
    if e.model == "nccl":
        return (f"NCCL's model (the tuner of NCCL {nccl.VERSION}): what nccl-tests would measure")
    return "the ideal link model: the schedule timed on the links alone"


def _algorithm_word(name: str) -> str:
    word = str(name).strip().lower().replace("-", "_")
    return "auto" if word == "auto" else word


def _estimate(args, out) -> int:
    topo, collective, axes, opts = _request(args)
    size = parse_size(args.size)
    algorithm = _algorithm_word(args.algorithm)
    e = estimate(collective, topo, size, algorithm, axes=axes, **_model_options(args), **opts)
    why = f"auto: {e.reason}" if algorithm == "auto" else e.reason
    if args.json:
        out.write(json.dumps(e.as_dict(), allow_nan=False) + "\n")
        return 0
    count = e.nbytes // element_size(e.dtype)
    rows = [
        ("topology", f"{topo!r} ({topo.num_ranks} ranks)"),
        ("collective", collective.value + ("" if e.num_groups == 1 else
                                           f" over axes {','.join(axes or [])}: {e.num_groups} "
                                           f"groups of {e.group_size} at once")),
        ("model", _model_line(e)),
        ("algorithm", f"{e.label} ({why})"),
        ("size", f"{format_bytes(e.nbytes)} ({e.nbytes} bytes, {count} {e.dtype}"
                 + (" per rank" if collective.layout == "pairs" else "") + ")"),
        ("time", format_time(e.time)),
        ("steps", str(e.num_steps)),
        ("algbw", "n/a (one rank per group: nothing moves)" if e.moves_nothing else format_rate(e.algbw)),
        ("busbw", "n/a" if e.moves_nothing else format_rate(e.busbw)),
        ("latency part", format_time(e.latency_time)),
        ("lower bound", f"{format_time(e.bound.time)}: bandwidth {format_time(e.bound.bandwidth_time)} "
                        f"({e.bound.bandwidth_reason}); latency {format_time(e.bound.latency_time)} "
                        f"({e.bound.latency_reason})"),
        ("efficiency", f"{e.efficiency:.0%} of the lower bound"),
    ]
    if e.result is not None:
        rows.append(("bottleneck", e.result.bottleneck))
    if e.alternatives:
        rows.append(("others", ", ".join(f"{a} {format_time(t)}" for a, t in e.alternatives[:6])))
    if e.note:
        rows.append(("note", e.note))
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        out.write(f"{k:<{width}}  {v}\n")
    return 0


#: A sweep prints at most this many sizes.
MAX_SWEEP_ROWS = 1000


def sweep_sizes(minbytes, maxbytes, stepfactor: float) -> list[int]:
    """nccl-tests' sizes: from -b to -e, each -f times the last, as whole bytes, each once."""
    lo, hi = parse_size(minbytes), parse_size(maxbytes)
    if hi < lo:
        raise CollectivesError(f"-e {maxbytes} is smaller than -b {minbytes}")
    factor = float(stepfactor)
    if not (factor > 1 and factor != float("inf")):
        raise CollectivesError(f"-f must be a number > 1, got {stepfactor}")
    sizes, s = [], float(lo)
    log_f = math.log(factor)
    while s <= hi * (1 + 1e-12):
        size = int(round(s))
        if not sizes or size != sizes[-1]:
            if len(sizes) == MAX_SWEEP_ROWS:
                raise CollectivesError(
                    f"-b {minbytes} -e {maxbytes} -f {stepfactor} makes more than "
                    f"{MAX_SWEEP_ROWS} different sizes; a sweep prints at most "
                    f"{MAX_SWEEP_ROWS}: use a larger -f")
            sizes.append(size)
            # skip the steps that round to this same whole size (a factor close to 1)
            skip = int(math.log((size + 0.5) / s) / log_f) - 1 if s < size + 0.5 else 0
            if skip > 0:
                s *= factor ** skip
        s *= factor
    return sizes


def _gbps(e, rate: float) -> str:
    """A bandwidth column of the sweep table: ``n/a`` where one rank moves nothing."""
    return f"{'n/a':>8}" if e.moves_nothing else f"{rate / 1e9:>8.2f}"


def _sweep(args, out) -> int:
    topo, collective, axes, opts = _request(args)
    sizes = sweep_sizes(args.minbytes, args.maxbytes, args.stepfactor)
    algorithm = _algorithm_word(args.algorithm)
    rows = sweep(collective, topo, sizes, algorithm, axes=axes, **_model_options(args), **opts)
    if args.json:
        out.write(json.dumps([e.as_dict() for e in rows], allow_nan=False) + "\n")
        return 0
    first = rows[0]
    esize = element_size(first.dtype)
    out.write(f"# {collective} on {topo!r}: {topo.num_ranks} ranks"
              + (f", axes {','.join(axes)}: {first.num_groups} groups of {first.group_size}"
                 if axes else "") + f"; {first.dtype}\n")
    out.write(f"# {_model_line(first)}\n")
    out.write(f"# lower bound: {first.bound.bandwidth_reason}; {first.bound.latency_reason}\n#\n")
    out.write(f"# {'size':>12} {'count':>12} {'type':>8} {'algorithm':>22} {'time':>11} "
              f"{'algbw':>8} {'busbw':>8} {'bound':>11} {'eff':>5}\n")
    out.write(f"# {'(B)':>12} {'(elements)':>12} {'':>8} {'':>22} {'(us)':>11} "
              f"{'(GB/s)':>8} {'(GB/s)':>8} {'(us)':>11} {'':>5}\n")
    for e in rows:
        label = e.algorithm + (f"/{e.protocol}" if e.protocol else "")
        out.write(f"  {e.nbytes:>12d} {e.nbytes // esize:>12d} {e.dtype:>8} {label:>22} "
                  f"{e.time * 1e6:>11.2f} {_gbps(e, e.algbw)} {_gbps(e, e.busbw)} "
                  f"{e.bound.time * 1e6:>11.2f} {e.efficiency:>5.0%}\n")
    notes = sorted({e.note for e in rows if e.note})
    if notes:
        uneven = sum(1 for e in rows if e.note)
        out.write(f"# {uneven} of {len(rows)} sizes do not split evenly into whole elements per "
                  f"slot; the largest slot sets their time\n")
    return 0


def _algorithms(args, out) -> int:
    topo, collective, axes, opts = _request(args)
    size = parse_size(args.size) if args.size else 1 << 30
    table = algorithms(collective, topo, axes=axes, reasons=True, **opts)
    described = entries(collective)
    e = estimate(collective, topo, size, "auto", axes=axes, **_model_options(args), **opts)
    out.write(f"{collective} on {topo!r}" + (f" over axes {','.join(axes)}" if axes else "") + ":\n")
    for name, why in table.items():
        if why is None:
            mark = "  (auto)" if name == e.algorithm else ""
            nccl_name = f" [NCCL: {described[name].nccl}]" if described[name].nccl else ""
            out.write(f"  {name:<20} {described[name].description}{nccl_name}{mark}\n")
    for name, why in table.items():
        if why is not None:
            out.write(f"  not {name}: {why}\n")
    out.write(f"auto picks {e.label} for {format_bytes(size)} ({e.model} model): {e.reason}\n")
    return 0


def _show(args, out) -> int:
    topo, collective, axes, opts = _request(args)
    sched = build(collective, topo, args.algorithm, axes=axes, **opts)
    out.write(sched.format(max_steps=args.max_steps) + "\n")
    return 0


# ---------------------------------------------------------------------------
# hlo: the collectives of a compiled XLA program, timed (collectives_lib.wire)
# ---------------------------------------------------------------------------

HLO_DESCRIPTION = """\
Read the collectives of one XLA HLO module (the text of
jax.jit(f).lower(*args).compile().as_text(), or a file XLA wrote with
XLA_FLAGS=--xla_dump_to=DIR) and time each on a topology, with a total. The
module's device ids are the topology's ranks (row-major, as a JAX mesh), so
every collective runs over the topology axes its replica groups span.

examples:
  {prog} module.after_optimizations.txt --topology tpu-v5e:4x2 --mesh x=4,y=2
  {prog} module.txt -t gb200-tray:2 --mesh data=2,model=4 --json
  {prog} module.txt -t dgx-h100:2 --model ideal
"""


def _hlo_parser(sub) -> None:
    p = sub.add_parser("hlo", help="time the collectives of an XLA HLO dump",
                       description=HLO_DESCRIPTION.format(prog="collectives hlo"),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", metavar="FILE", help="HLO text of one module ('-' reads stdin)")
    p.add_argument("--topology", "-t", required=True, help=TOPOLOGY_HELP)
    p.add_argument("--mesh", help="the program's mesh, axis=size pairs in order, e.g. x=4,y=2: "
                   "names the axes each collective spans")
    p.add_argument("--model", choices=MODELS, type=str.lower,
                   help="nccl (the default on GPU presets) or ideal (the default elsewhere)")
    p.add_argument("--algorithm", "-a", default="auto", help="an algorithm name, or auto")
    p.add_argument("--bandwidth", help="one-way bytes/s per link (replaces a preset's values)")
    p.add_argument("--latency", help="seconds per hop (replaces a preset's values)")
    p.add_argument("--oversubscription", type=float, default=1.0,
                   help="GPU clusters: leaf uplink oversubscription (1 = full fat tree)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _read_text(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise CollectivesError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise CollectivesError(f"{path} is not text (not UTF-8): not an HLO dump") from None


def _hlo(args, out) -> int:
    from .hlo import parse_hlo, parse_mesh
    from .wire import time_hlo
    mesh = parse_mesh(args.mesh) if args.mesh is not None else None
    topo = _topology(args)
    module = parse_hlo(_read_text(args.file))
    timing = time_hlo(module, topo, mesh=mesh, model=args.model,
                      algorithm=_algorithm_word(args.algorithm))
    if args.json:
        out.write(json.dumps(timing.as_dict(), allow_nan=False) + "\n")
    else:
        out.write(str(timing) + "\n")
    return 0


# ---------------------------------------------------------------------------
# run: the library's schedules over real MPI processes (collectives_lib.mpi)
# ---------------------------------------------------------------------------

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


def _run_options(p: argparse.ArgumentParser) -> None:
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
    from .mpi import load_schedule
    if args.schedule:
        sched = load_schedule(args.schedule)
        if args.np is not None and args.np != sched.num_ranks:
            raise CollectivesError(f"--np {args.np} but the schedule in {args.schedule} is for "
                                   f"{sched.num_ranks} ranks; leave --np out")
        return [sched]
    collective = as_collective(args.collective)
    topo = parse_topology(args.topology, 1e9) if args.topology else Switch(num_ranks, bandwidth=1e9, in_network=True)
    axes = [a.strip() for a in args.axes.split(",")] if args.axes else None
    opts: dict = {}
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
        names = algorithms(collective, topo, axes)
    if not names:
        raise CollectivesError("--algorithm needs a name, a comma-separated list, or all")
    if collective == "send":
        return [build("send", topo, names[0], **opts)]
    return [build(collective, topo, a, axes=axes, **opts) for a in names]


def _run(args, out, err) -> int:
    """``collectives run``: launch mpiexec, or run in place under it (see RUN_DESCRIPTION)."""
    from . import mpi
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
    from . import mpi
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
    from .mpi import format_table
    out.write((json.dumps(result.as_dict()) if as_json else format_table(result)) + "\n")
    out.flush()


def _run_in_place(args, out) -> int:
    """Started by mpiexec: every process builds the same schedules and runs them.

    N is ``--np`` if given, else the number of processes (emulated switches
    need more processes than ranks: ``mpiexec -n 5 ... --np 4 -a sharp``)."""
    from . import mpi
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
    _run_options(parser)
    try:
        args = parser.parse_args(list(argv))
    except CollectivesError as exc:
        err.write(f"collectives run: error: {exc}\n")
        return 2
    return _run(args, out, err)


def main(argv: list[str] | None = None, out=None, err=None, *, prog: str = "collectives") -> int:
    """The command line; ``prog`` is how it was started (usage lines and examples say it)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    out = out or sys.stdout
    err = err or sys.stderr
    parser = _make_parser(prog)
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help(out)
            return 2
        if args.command == "run":
            return _run(args, out, err)
        handler = {"estimate": _estimate, "sweep": _sweep, "algorithms": _algorithms,
                   "show": _show, "hlo": _hlo}[args.command]
        return handler(args, out)
    except CollectivesError as exc:
        err.write(f"{'collectives run' if argv[:1] == ['run'] else 'collectives'}: error: {exc}\n")
        return 2
    except BrokenPipeError:  # pragma: no cover
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
