"""Command line: what-if questions answered the way nccl-tests reports measurements.

    python -m collectives_lib estimate --topology tpu-v5e:16x16 --collective all_gather --size 1GiB
    python -m collectives_lib sweep --topology dgx-h100:1 --collective all_reduce -b 8 -e 8G -f 4
    python -m collectives_lib algorithms --topology ring:8 --bandwidth 45e9 --collective all_to_all
    python -m collectives_lib show --topology ring:4 --bandwidth 1e9 --collective all_reduce
    python -m collectives_lib run --np 4 --collective all_reduce --algorithm ring --size 1MiB
    python -m collectives_lib diagnose all_reduce_perf.log

Bad input exits with status 2 and one line naming the value and what is allowed.
"""

from __future__ import annotations

import argparse
import json
import sys

from . import nccl
from .builders import algorithm_name, entries
from .collective import COLLECTIVES, collective as as_collective
from .errors import CollectivesError
from .models import MODELS, Estimate, algorithms as model_algorithms, estimate, model_for, sweep
from .plan import build
from .topology import TOPOLOGY_HELP, Topology, parse_rate, parse_seconds, parse_topology
from .units import DTYPES, element_size, format_bytes, format_rate, format_time, parse_size, sweep_sizes

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
    p.add_argument("--root", type=int, help="broadcast/reduce/gather root; send source (default 0)")
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
        p.add_argument("--launch", help="NCCL's model: process-per-gpu (default) or gpus-per-process=G "
                       "(one process drives G GPUs, nccl-tests -g G), either with +graph (CUDA Graph, -G 1)")
        p.add_argument("--registered", action="store_true", help="NCCL's model: buffers registered as "
                       "symmetric windows (nccl-tests -R 2), which run NCCL's symmetric kernels")
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
    _diagnose_parser(sub)
    from .mpi.cli import RUN_DESCRIPTION, add_arguments
    p = sub.add_parser("run", help="run a schedule over MPI and compare with MPI's collective",
                       description=RUN_DESCRIPTION.format(prog=f"{prog} run"),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(p)
    return parser


def _topology(args) -> Topology:
    return parse_topology(args.topology, parse_rate(args.bandwidth), parse_seconds(args.latency),
                          args.oversubscription)


def _request(args):
    """What every subcommand starts from: (topology, collective, axes, options)."""
    topo = _topology(args)
    collective = as_collective(args.collective)
    return topo, collective, _axes(args.axes), collective.endpoints(args.root, args.dst)


def _model_options(args) -> dict:
    nvls = None if args.nvls is None else args.nvls == "on"
    return {"model": args.model, "protocol": args.protocol, "dtype": args.dtype, "nvls": nvls,
            "launch": args.launch, "registered": args.registered}


def _model_line(e: Estimate) -> str:
    if e.model == "nccl":
        return (f"NCCL's model (the tuner of NCCL {nccl.VERSION}): what nccl-tests would measure")
    return "the ideal link model: the schedule timed on the links alone"


def _bound_line(b) -> str:
    return (f"{format_time(b.time)}: bandwidth {format_time(b.bandwidth_time)} ({b.bandwidth_reason}); "
            f"latency {format_time(b.latency_time)} ({b.latency_reason})")


def _estimate(args, out) -> int:
    topo, collective, axes, opts = _request(args)
    size = parse_size(args.size)
    algorithm = algorithm_name(args.algorithm)
    e = estimate(collective, topo, size, algorithm, axes=axes, **_model_options(args), **opts)
    if args.json:
        out.write(json.dumps(e.as_dict(), allow_nan=False) + "\n")
        return 0
    for k, v in estimate_rows(e, topo, axes, auto=algorithm == "auto"):
        out.write(f"{k:<13} {v}\n")
    return 0


def estimate_rows(e: Estimate, topo: Topology, axes, *, auto: bool) -> list[tuple[str, str]]:
    """The lines ``collectives estimate`` prints, as (label, text)."""
    why = f"auto: {e.reason}" if auto else e.reason
    count = e.nbytes // element_size(e.dtype)
    rows = [
        ("topology", f"{topo!r} ({topo.num_ranks} ranks)"),
        ("collective", e.collective.value + ("" if e.num_groups == 1 else
                                             f" over axes {','.join(axes or [])}: {e.num_groups} "
                                             f"groups of {e.group_size} at once")),
        ("model", _model_line(e)),
        ("algorithm", f"{e.label} ({why})"),
        ("size", f"{format_bytes(e.nbytes)} ({e.nbytes} bytes, {count} {e.dtype}"
                 + (" per rank" if e.collective.layout == "pairs" else "") + ")"),
        ("time", format_time(e.time) + (f" (NCCL's tuner predicts {format_time(e.tuner_time)} and "
                                        f"chooses by that)" if e.model == "nccl" else "")),
    ]
    if e.model == "ideal":
        rows.append(("steps", f"{e.num_steps}" + (" (closed form)" if e.how == "closed form" else "")))
    else:
        rows.append(("channels", f"{e.channels} (launched by NCCL)"))
    rows += [
        ("algbw", f"n/a ({e.why_nothing_moves})" if e.moves_nothing else format_rate(e.algbw)),
        ("busbw", "n/a" if e.moves_nothing else format_rate(e.busbw)),
        ("latency part", format_time(e.latency_time)),
        ("lower bound", _bound_line(e.bound)),
        ("efficiency", f"{e.efficiency:.0%} of the lower bound"),
    ]
    if e.network_bound is not None:
        rows.append(("in-network", f"{_bound_line(e.network_bound)}: the bound if the switches reduce, "
                                   f"which {e.algorithm} does not use"))
    rows.append(("bottleneck", e.bottleneck))
    if e.alternatives:
        if e.model == "nccl":
            others = ", ".join(f"{a.label} {format_time(a.time)} (tuner {format_time(a.tuner_time)})"
                               for a in e.alternatives[:6])
        else:
            others = ", ".join(f"{a.label} {format_time(a.time)}" for a in e.alternatives[:6])
        rows.append(("others", others))
    if e.note:
        rows.append(("note", e.note))
    return rows


def _gbps(e, rate: float) -> str:
    """A bandwidth column of the sweep table: ``n/a`` where one rank moves nothing."""
    return f"{'n/a':>8}" if e.moves_nothing else f"{rate / 1e9:>8.2f}"


def _sweep(args, out) -> int:
    topo, collective, axes, opts = _request(args)
    sizes = sweep_sizes(args.minbytes, args.maxbytes, args.stepfactor)
    algorithm = algorithm_name(args.algorithm)
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
        out.write(f"  {e.nbytes:>12d} {e.nbytes // esize:>12d} {e.dtype:>8} {e.row_label:>22} "
                  f"{e.time * 1e6:>11.2f} {_gbps(e, e.algbw)} {_gbps(e, e.busbw)} "
                  f"{e.bound.time * 1e6:>11.2f} {e.efficiency:>5.0%}\n")
    formula = [e for e in rows if getattr(e, "how", "") == "closed form"]
    if formula:
        out.write(f"# {len(formula)} of {len(rows)} sizes timed by a closed form, not a built schedule "
                  f"({formula[0].note.removeprefix('timed by its closed form: ')})\n")
    partial = sum(1 for e in rows if e.nbytes % esize)
    if partial:
        out.write(f"# {partial} of {len(rows)} sizes are not whole {esize}-byte elements: the bytes "
                  f"past the last whole element are left out (as nccl-tests counts)\n")
    uneven = sum(1 for e in rows if getattr(e, "how", "") == "simulated" and "split evenly" in e.note)
    if uneven:
        out.write(f"# {uneven} of {len(rows)} sizes do not split evenly into whole elements per "
                  f"slot; the largest slot sets their time\n")
    return 0


def _algorithms(args, out) -> int:
    topo, collective, axes, opts = _request(args)
    size = parse_size(args.size) if args.size else 1 << 30
    model = model_for(args.model, topo)
    nvls = None if args.nvls is None else args.nvls == "on"
    table = model_algorithms(collective, topo, axes, model=model, nvls=nvls, protocol=args.protocol,
                             dtype=args.dtype, **opts)
    described = entries(collective)
    e = estimate(collective, topo, size, "auto", axes=axes, **_model_options(args), **opts)
    out.write(f"{collective} on {topo!r}" + (f" over axes {','.join(axes)}" if axes else "")
              + f", {_model_line(e)}: what `estimate` accepts\n")
    for name, why in table.items():
        if why is None:
            mark = "  (auto)" if name == e.algorithm else ""
            nccl_name = f" [NCCL: {described[name].nccl}]" if described[name].nccl else ""
            out.write(f"  {name:<20} {described[name].description}{nccl_name}{mark}\n")
    not_run = [name for name, why in table.items() if why is not None and why.startswith("NCCL does not run")]
    for name, why in table.items():
        if why is not None and name not in not_run:
            out.write(f"  not {name}: {why}\n")
    if not_run:
        out.write(f"  not run by NCCL here (model='ideal' times them on the links): {', '.join(not_run)}\n")
    out.write(f"auto picks {e.label} for {format_bytes(size)} ({e.model} model): {e.reason}\n")
    return 0


#: The most transfers a schedule ``show`` builds may hold: it prints 64 of a step's.
SHOW_MAX_TRANSFERS = 1_000_000


def _show(args, out) -> int:
    topo, collective, axes, opts = _request(args)
    _show_size(collective, topo, args.algorithm, axes, opts)
    sched = build(collective, topo, args.algorithm, axes=axes, **opts)
    out.write(sched.format(max_steps=args.max_steps) + "\n")
    return 0


def _show_size(collective, topo, algorithm, axes, opts) -> None:
    """Refuse, before building it, a schedule too large to read (its footprint)."""
    from .builders import applicable, group_for, size_estimate
    if algorithm_name(algorithm) == "auto":
        return                       # auto's pick is built by estimate's own cap
    group, groups = group_for(collective, topo, axes, opts)
    alg = applicable(group, algorithm)
    size = size_estimate(alg, group)
    if size is not None and size[0] * len(groups) > SHOW_MAX_TRANSFERS:
        raise CollectivesError(
            f"show prints schedules of up to {SHOW_MAX_TRANSFERS:,} transfers; {alg.name} "
            f"{collective} on {topo!r} would hold about {size[0] * len(groups):,}: time it with "
            f"estimate, or show fewer ranks")


# ---------------------------------------------------------------------------
# hlo: the collectives of a compiled XLA program, timed (collectives_lib.book.wire)
# ---------------------------------------------------------------------------

HLO_DESCRIPTION = """\
Read the collectives of one XLA HLO module (the text of
jax.jit(f).lower(*args).compile().as_text(), or a file XLA wrote with
XLA_FLAGS=--xla_dump_to=DIR) and time each on a topology, with a total. Async
chains and the TPU compiler's collective fusions count once, as they run; loop
bodies count their trips; permutes are timed as routed point-to-point pairs.
Device i of the module runs on rank i of the topology unless --devices says
otherwise, so every collective runs over the topology axes its replica groups
span, or, on a GPU preset, over the --mesh axes laid row-major on its GPUs.
A file over 128 MiB, or without an HloModule line in its first 64 KiB, is
refused.

examples:
  {prog} module.after_optimizations.txt --topology tpu-v5e:4x2 --mesh x=4,y=2
  {prog} module.txt -t dgx-h100:1 --mesh data=4,model=2 --json
  {prog} module.txt -t dgx-h100:2 --mesh data=4,model=4 --model ideal
"""


def _hlo_parser(sub) -> None:
    p = sub.add_parser("hlo", help="time the collectives of an XLA HLO dump",
                       description=HLO_DESCRIPTION.format(prog="collectives hlo"),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", metavar="FILE", help="HLO text of one module ('-' reads stdin)")
    p.add_argument("--topology", "-t", required=True, help=TOPOLOGY_HELP)
    p.add_argument("--mesh", help="the program's mesh, axis=size pairs in order, e.g. x=4,y=2: "
                   "names the axes each collective spans")
    p.add_argument("--devices", help="the rank that runs each of the module's devices, in device "
                   "order, e.g. 0,1,3,2 (the device assignment; default: device i on rank i)")
    p.add_argument("--model", choices=MODELS, type=str.lower,
                   help="nccl (the default on GPU presets) or ideal (the default elsewhere)")
    p.add_argument("--algorithm", "-a", default="auto", help="an algorithm name, or auto")
    p.add_argument("--bandwidth", help="one-way bytes/s per link (replaces a preset's values)")
    p.add_argument("--latency", help="seconds per hop (replaces a preset's values)")
    p.add_argument("--oversubscription", type=float, default=1.0,
                   help="GPU clusters: leaf uplink oversubscription (1 = full fat tree)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _devices(text: str) -> list[int]:
    parts = [p.strip() for p in str(text).split(",")]
    if not parts or not all(p.isdigit() and len(p) < 8 for p in parts):
        raise CollectivesError(f"--devices {str(text)[:60]!r} is not a list of ranks like 0,1,3,2")
    return [int(p) for p in parts]


def _hlo(args, out) -> int:
    from .hlo import parse_hlo, parse_mesh, read_hlo, time_hlo
    mesh = parse_mesh(args.mesh) if args.mesh is not None else None
    devices = _devices(args.devices) if args.devices is not None else None
    topo = _topology(args)
    module = parse_hlo(read_hlo(args.file))
    timing = time_hlo(module, topo, mesh=mesh, devices=devices, model=args.model,
                      algorithm=algorithm_name(args.algorithm))
    if args.json:
        out.write(json.dumps(timing.as_dict(), allow_nan=False) + "\n")
    else:
        out.write(str(timing) + "\n")
    return 0


# ---------------------------------------------------------------------------
# diagnose: a reader's nccl-tests output beside NCCL's model (collectives_lib.diagnose)
# ---------------------------------------------------------------------------

DIAGNOSE_DESCRIPTION = """\
Read the output of an nccl-tests binary (all_reduce_perf, all_gather_perf,
reduce_scatter_perf, alltoall_perf, broadcast_perf, reduce_perf,
sendrecv_perf), with or without its header and NCCL_DEBUG=INFO lines, and
print its table beside what NCCL's model expects for every row: the
expected time and busbw, the ratio of measured to expected time and the
algorithm/protocol the model expects. Without --topology it picks the
nearest preset from the GPU model, ranks and hosts the output names, and
says why. The verdict is healthy, degraded (with the likely cause and its
evidence) or unknown (no preset stands for the machine); any #wrong other
than 0 is degraded.

examples:
  {prog} all_reduce_perf.log
  mpirun -np 16 -N 8 ./build/all_reduce_perf -b 8 -e 8G -f 2 -g 1 | {prog} -
  {prog} run.txt --topology dgx-h100:2 --env NCCL_ALGO=Ring
  {prog} run.txt --json
"""


def _diagnose_parser(sub) -> None:
    p = sub.add_parser("diagnose", help="read an nccl-tests output beside NCCL's model",
                       description=DIAGNOSE_DESCRIPTION.format(prog="collectives diagnose"),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", metavar="FILE", help="the output of an nccl-tests binary ('-' reads stdin)")
    p.add_argument(
        "--topology", "-t",
        help="the machine, when the output does not say it or says it wrong: a GPU "
             "preset, as NCCL's model needs one (dgx-a100:M, dgx-a800:M, dgx-h100:M, dgx-h200:M, "
             "dgx-h800:M, dgx-b200:M, dgx-b300:M, gb200-tray:M, gb300-tray:M, "
             "gb200-nvl72:M, gb300-nvl72:M, h100-cluster:M, gb200-cluster:M; M nodes, "
             "trays or racks; :gpus=G, :trays=T, :nics=NxR or NxPxR, :fabric=ib|roce|gib as in "
             "the other verbs)")
    p.add_argument(
        "--env", action="append", default=[], metavar="NCCL_X=VALUE",
        help="an NCCL setting the run used that its output does not state; the model "
             "reads NCCL_ALGO, NCCL_PROTO, NCCL_NVLS_ENABLE and NCCL_COLLNET_ENABLE, "
             "and says so of any other; repeatable")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _read_limited(path: str) -> bytes:
    from .diagnose import MAX_BYTES
    if path == "-":
        data = sys.stdin.buffer.read(MAX_BYTES + 1) if hasattr(sys.stdin, "buffer") else \
            sys.stdin.read(MAX_BYTES + 1).encode("utf-8")
        return data
    try:
        with open(path, "rb") as f:
            return f.read(MAX_BYTES + 1)
    except OSError as exc:
        raise CollectivesError(f"cannot read {path}: {exc.strerror or exc}") from None


def _diagnose(args, out) -> int:
    from .diagnose import decode, diagnose
    env = {}
    for item in args.env:
        key, sep, value = item.partition("=")
        if not sep or not key.startswith("NCCL_") or not value:
            raise CollectivesError(f"--env {item!r}: give NCCL_NAME=VALUE, like NCCL_ALGO=Ring")
        env[key] = value
    text = decode(_read_limited(args.file), "standard input" if args.file == "-" else args.file)
    d = diagnose(text, args.topology, env=env)
    if args.json:
        out.write(json.dumps(d.as_dict(), allow_nan=False) + "\n")
    else:
        out.write(str(d) + "\n")
    return 0


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
            from .mpi.cli import run
            return run(args, out, err)
        handler = {"estimate": _estimate, "sweep": _sweep, "algorithms": _algorithms,
                   "show": _show, "hlo": _hlo, "diagnose": _diagnose}[args.command]
        return handler(args, out)
    except CollectivesError as exc:
        err.write(f"{'collectives run' if argv[:1] == ['run'] else 'collectives'}: error: {exc}\n")
        return 2
    except BrokenPipeError:  # pragma: no cover
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
