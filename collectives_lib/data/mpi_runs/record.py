"""Record the reference MPI run that the chapter *Measure it yourself* reads.

    python collectives_lib/data/mpi_runs/record.py OUT.json [--repeats 5] [--label TEXT]

Runs ``collectives run`` (the library's MPI runner) once per command below, each
``--repeats`` times, on this machine, and writes one JSON file: the machine
(host name, CPU model, core count), the date, every command as run, an honest
label, and every repeat's rows and calibration. :func:`collectives_lib.mpi.reference`
reads it back and takes the median over the repeats.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys

COMMANDS = [
    ["--np", "4", "-c", "all_reduce", "-a", "ring,recursive_doubling", "-b", "32", "-e", "2M", "-f", "4",
     "--iters", "20", "--warmup", "5", "--calibrate"],
    ["--np", "8", "-c", "all_reduce", "-a", "ring,recursive_doubling", "-b", "32", "-e", "2M", "-f", "4",
     "--iters", "20", "--warmup", "5", "--calibrate"],
    ["--np", "8", "-c", "all_gather", "-a", "ring,bidirectional_ring,chain,bidirectional_ring_whole,"
     "recursive_doubling,direct", "--size", "1MiB", "--iters", "10", "--warmup", "3", "--calibrate"],
]


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--label", default="")
    args = p.parse_args(argv)
    if args.repeats < 1:
        p.error(f"--repeats must be at least 1, got {args.repeats}")
    runs = []
    for repeat in range(args.repeats):
        for cmd in COMMANDS:
            full = [sys.executable, "-m", "collectives_lib", "run", *cmd, "--json"]
            done = subprocess.run(full, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                sys.stderr.write(done.stderr)
                return done.returncode
            runs.append({"repeat": repeat, "command": "collectives run " + " ".join(cmd),
                         "result": json.loads(done.stdout)})
            print(f"repeat {repeat}: {' '.join(cmd[:4])} done", file=sys.stderr)
    meta = {"machine": {"host": platform.node(), "cpu": cpu_model(), "cores": os.cpu_count(),
                        "system": f"{platform.system()} {platform.release()}", "python": platform.python_version()},
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "label": args.label, "repeats": args.repeats,
            "commands": ["collectives run " + " ".join(c) for c in COMMANDS]}
    with open(args.out, "w") as f:
        json.dump({"meta": meta, "runs": runs}, f, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
