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

from .analysis import choose
from .builders import entries
from .collective import COLLECTIVES, collective as as_collective
from .errors import CollectivesError
from .plan import algorithms, build
from .simulate import simulate
from .topology import TOPOLOGY_HELP, Topology, Torus, parse_rate, parse_seconds, parse_topology
from .units import format_bytes, format_rate, format_time, parse_size

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


def _common(p: argparse.ArgumentParser, *, size: bool = True, collective: bool = True) -> None:
    p.add_argument("--topology", "-t", required=True, help=TOPOLOGY_HELP)
    if collective:
        p.add_argument("--collective", "-c", required=True,
                       help="one of " + ", ".join(COLLECTIVES))
    p.add_argument("--algorithm", "-a", default="auto", help="an algorithm name, or auto")
    p.add_argument("--axes", help="mesh axes the collective spans, e.g. x or x,y (node, gpu on GPU clusters)")
    p.add_argument("--bandwidth", help="one-way bytes/s per link (replaces a preset's values)")
    p.add_argument("--latency", help="seconds per hop (replaces a preset's values), e.g. 1e-6 or 1us")
    p.add_argument("--oversubscription", type=float, default=1.0,
                   help="GPU clusters: leaf uplink oversubscription (1 = full fat tree)")
    p.add_argument("--root", type=int, default=0, help="broadcast/reduce root; send source")
    p.add_argument("--dst", type=int, help="send destination (default: the last rank)")
    if size:
        p.add_argument("--size", "-s", required=True,
                       help="V, the whole array: bytes, or with KB/MB/GB, KiB/MiB/GiB, K/M/G")


def _make_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="collectives", description=__doc__,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    p = sub.add_parser("estimate", help="time one collective")
    _common(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p = sub.add_parser("sweep", help="a table over sizes, like nccl-tests")
    _common(p, size=False)
    p.add_argument("-b", "--minbytes", default="8", help="smallest size (default 8)")
    p.add_argument("-e", "--maxbytes", default="128M", help="largest size (default 128M)")
    p.add_argument("-f", "--stepfactor", type=float, default=2.0, help="size multiplier (default 2)")
    p.add_argument("--json", action="store_true", help="print a JSON list")
    p = sub.add_parser("algorithms", help="list algorithms that apply")
    _common(p, size=False)
    p.add_argument("--size", "-s", help="size for auto's choice (default 1GiB)")
    p = sub.add_parser("show", help="print a small schedule step by step")
    _common(p, size=False)
    p.add_argument("--max-steps", type=int, default=64)
    p = sub.add_parser("run", help="run a schedule over MPI and compare with MPI's collective",
                       add_help=False)
    p.add_argument("rest", nargs=argparse.REMAINDER)
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


def _estimate(args, out) -> int:
    topo, collective, axes, opts = _request(args)
    size = parse_size(args.size)
    if args.algorithm == "auto":
        choice = choose(collective, topo, size, axes=axes, **opts)
        algorithm, why = choice.algorithm, f"auto: {choice.reason}"
    else:
        algorithm, why = args.algorithm, "as requested"
    sched = build(collective, topo, algorithm, axes=axes, **opts)
    result = simulate(sched, topo, size)
    if args.json:
        obj = result.as_dict()
        obj.update({"topology": repr(topo), "algorithm": sched.algorithm, "why": why,
                    "num_ranks": topo.num_ranks, "groups": sched.num_groups})
        out.write(json.dumps(obj) + "\n")
        return 0
    rows = [
        ("topology", f"{topo!r} ({topo.num_ranks} ranks)"),
        ("collective", collective + ("" if sched.num_groups == 1 else
                                     f" over axes {','.join(axes or [])}: {sched.num_groups} "
                                     f"groups of {sched.group_size} at once")),
        ("algorithm", f"{sched.algorithm} ({why})"),
        ("size", f"{format_bytes(size)} ({size} bytes)"),
        ("time", format_time(result.time)
         + ("" if result.time == result.time_unoverlapped else
            f" (stages overlapped; {format_time(result.time_unoverlapped)} one after another)")),
        ("steps", str(result.num_steps)),
        ("algbw", format_rate(result.algbw)),
        ("busbw", format_rate(result.busbw)),
        ("latency part", format_time(result.latency_time)),
        ("bottleneck", result.bottleneck),
    ]
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        out.write(f"{k:<{width}}  {v}\n")
    return 0


def _sweep(args, out) -> int:
    topo, collective, axes, opts = _request(args)
    lo, hi = parse_size(args.minbytes), parse_size(args.maxbytes)
    if hi < lo:
        raise CollectivesError(f"-e {args.maxbytes} is smaller than -b {args.minbytes}")
    if not args.stepfactor > 1:
        raise CollectivesError(f"-f must be > 1, got {args.stepfactor}")
    sizes = []
    s = float(lo)
    while s <= hi * (1 + 1e-12):
        sizes.append(int(round(s)))
        s *= args.stepfactor
    algorithm = args.algorithm
    if algorithm == "auto" and not isinstance(topo, Torus):
        # NCCL may switch algorithm with size: choose per size
        per_size = [choose(collective, topo, sz, axes=axes, **opts).algorithm for sz in sizes]
    else:
        chosen = choose(collective, topo, hi, axes=axes, **opts).algorithm if algorithm == "auto" else algorithm
        per_size = [chosen] * len(sizes)
    rows = []
    cache = {}
    for sz, alg in zip(sizes, per_size):
        if alg not in cache:
            cache[alg] = build(collective, topo, alg, axes=axes, **opts)
        sched = cache[alg]
        real = sched.round_size(sz)
        r = simulate(sched, topo, real)
        rows.append({"size_bytes": real, "algorithm": alg, "time_s": r.time, "steps": r.num_steps,
                     "algbw": r.algbw, "busbw": r.busbw})
    if args.json:
        out.write(json.dumps(rows) + "\n")
        return 0
    out.write(f"# {collective} on {topo!r}, {topo.num_ranks} ranks"
              + (f", axes {','.join(axes)}" if axes else "") + "\n")
    out.write(f"# {'size':>14} {'algorithm':>20} {'steps':>6} {'time':>12} {'algbw':>9} {'busbw':>9}\n")
    out.write(f"# {'(B)':>14} {'':>20} {'':>6} {'(us)':>12} {'(GB/s)':>9} {'(GB/s)':>9}\n")
    for row in rows:
        out.write(f"  {row['size_bytes']:>14d} {row['algorithm']:>20} {row['steps']:>6d} "
                  f"{row['time_s'] * 1e6:>12.2f} {row['algbw'] / 1e9:>9.2f} {row['busbw'] / 1e9:>9.2f}\n")
    return 0


def _algorithms(args, out) -> int:
    topo, collective, axes, opts = _request(args)
    size = parse_size(args.size) if args.size else 1 << 30
    table = algorithms(collective, topo, axes=axes, reasons=True, **opts)
    described = entries(collective)
    choice = choose(collective, topo, size, axes=axes, **opts)
    out.write(f"{collective} on {topo!r}" + (f" over axes {','.join(axes)}" if axes else "") + ":\n")
    for name, why in table.items():
        if why is None:
            mark = "  (auto)" if name == choice.algorithm else ""
            out.write(f"  {name:<20} {described[name].description}{mark}\n")
    for name, why in table.items():
        if why is not None:
            out.write(f"  not {name}: {why}\n")
    out.write(f"auto picks {choice.algorithm} for {format_bytes(size)}: {choice.reason}\n")
    return 0


def _show(args, out) -> int:
    topo, collective, axes, opts = _request(args)
    sched = build(collective, topo, args.algorithm, axes=axes, **opts)
    out.write(sched.format(max_steps=args.max_steps) + "\n")
    return 0


def main(argv: list[str] | None = None, out=None, err=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    out = out or sys.stdout
    err = err or sys.stderr
    if argv and argv[0] == "run":
        try:
            from . import mpi
        except ImportError as exc:  # pragma: no cover - mpi.py is part of the package
            err.write(f"collectives: error: the MPI runner is unavailable ({exc})\n")
            return 2
        return mpi.main_run(argv[1:])
    parser = _make_parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help(out)
            return 2
        handler = {"estimate": _estimate, "sweep": _sweep, "algorithms": _algorithms,
                   "show": _show}[args.command]
        return handler(args, out)
    except CollectivesError as exc:
        err.write(f"collectives: error: {exc}\n")
        return 2
    except BrokenPipeError:  # pragma: no cover
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
