"""Benchmarks of the largest systems: whole-process wall time and peak memory.

Each case is one command-line call in a fresh interpreter, timed by ``/usr/bin/time``
(wall seconds and peak resident set size), so the figures include starting
Python and importing the package, as a reader at the command line sees them.
Targets: each at most 2 s and 1 GB on a 2-core machine. The machine may be
shared: each case runs ``--repeats`` times and the minimum is reported, with
the CPU time (user + system), which other processes disturb less than the wall time.
The package is compiled to bytecode first, as an installed package is: without it
(``PYTHONDONTWRITEBYTECODE`` set, or a fresh checkout) every case would also pay
about 0.4 s of compiling the package's sources on each start.

    python benchmarks/bench_scale.py [--repeats 3] [--timeout 60] [--extras] [NAME ...]
    python benchmarks/bench_scale.py --hostile     # the hostile HLO inputs
"""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import subprocess
import sys
import tempfile

CASES = {
    "h100-cluster": ("all-reduce, 102,400-GPU H100 cluster (12,800 nodes)",
                     ["estimate", "-t", "h100-cluster:12800", "-c", "all_reduce", "-s", "1G"]),
    "ring-65536": ("ring all-reduce, 65,536 ranks",
                   ["estimate", "-t", "ring:65536", "--bandwidth", "45e9", "-c", "all_reduce",
                    "-s", "1G"]),
    "tpu7x-pod": ("all-reduce, a full TPU7x pod (9,216 chips as 16x24x24)",
                  ["estimate", "-t", "tpu-7x:16x24x24", "-c", "all_reduce", "-s", "1G"]),
    "torus-a2a": ("all-to-all, 16x16x16 torus",
                  ["estimate", "-t", "torus:16x16x16", "--bandwidth", "45e9", "-c", "all_to_all",
                   "-s", "1M"]),
    "switch-auto": ("auto all-reduce, 4,096-port switch",
                    ["estimate", "-t", "switch:4096", "--bandwidth", "50e9", "-c", "all_reduce",
                     "-s", "1G", "--model", "ideal"]),
    "superpod-sweep": ("40-size sweep (8 B to 8 GiB), all-reduce on a SuperPod",
                       ["sweep", "-t", "dgx-h100:128", "-c", "all_reduce", "-b", "8", "-e", "8G",
                        "-f", "1.7", "--model", "ideal"]),
    "gb200-100k-ideal": ("all-reduce, 100,800-GPU GB200 cluster, ideal model",
                         ["estimate", "-t", "gb200-cluster:1400", "-c", "all_reduce", "-s", "1G",
                          "--model", "ideal"]),
    "gb200-100k-broadcast": ("chain broadcast, 100,800-GPU GB200 cluster, ideal model",
                             ["estimate", "-t", "gb200-cluster:1400", "-c", "broadcast", "-s", "1G",
                              "--model", "ideal"]),
    "h100-cluster-ideal": ("all-reduce, 102,400-GPU H100 cluster, ideal model (ring, tree, NVLS tree)",
                           ["estimate", "-t", "h100-cluster:12800", "-c", "all_reduce", "-s", "1G",
                            "--model", "ideal"]),
    "nccl-sweep-1000": ("1,000-size NCCL-model sweep, all-reduce on a SuperPod",
                        ["sweep", "-t", "dgx-h100:128", "-c", "all_reduce", "-b", "8", "-e", "8G",
                         "-f", "1.0211"]),
    "nccl-sweep-h100-cluster": ("100-size NCCL-model sweep, 102,400-GPU H100 cluster",
                                ["sweep", "-t", "h100-cluster:12800", "-c", "all_reduce", "-b", "8",
                                 "-e", "8G", "-f", "1.232"]),
    "gather-ring-4096": ("auto gather (direct, multipath), ring of 4,096",
                         ["estimate", "-t", "ring:4096", "--bandwidth", "1e9", "-c", "gather",
                          "-s", "1G"]),
    "gather-torus-64x64": ("auto gather, 64x64 torus",
                           ["estimate", "-t", "torus:64x64", "--bandwidth", "1e9", "-c",
                            "gather", "-s", "1G"]),
    "gather-v5p-4096": ("auto gather, TPU v5p 16x16x16",
                        ["estimate", "-t", "tpu-v5p:16x16x16", "--bandwidth", "1e9", "-c",
                         "gather", "-s", "1G"]),
    "gather-chain-4096": ("auto gather, chain of 4,096",
                          ["estimate", "-t", "chain:4096", "--bandwidth", "1e9", "-c",
                           "gather", "-s", "1G"]),
    "gather-switch-4096": ("auto gather, 4,096-port switch",
                           ["estimate", "-t", "switch:4096", "--bandwidth", "1e9", "-c",
                            "gather", "-s", "1G"]),
    "gather-multipath-2048": ("multipath gather, ring of 2,048",
                              ["estimate", "-t", "ring:2048", "--bandwidth", "1e9", "-c",
                               "gather", "-s", "1G", "-a", "multipath"]),
    "gather-ring-1024-8B": ("auto gather of 8 B, ring of 1,024",
                            ["estimate", "-t", "ring:1024", "--bandwidth", "1e9", "-c",
                             "gather", "-s", "8"]),
    "broadcast-ring-65536": ("auto broadcast (chain), ring of 65,536",
                             ["estimate", "-t", "ring:65536", "--bandwidth", "1e9", "-c",
                              "broadcast", "-s", "1G"]),
    "reduce-ring-65536": ("auto reduce (chain), ring of 65,536",
                          ["estimate", "-t", "ring:65536", "--bandwidth", "1e9", "-c",
                           "reduce", "-s", "1G"]),
    "broadcast-chain-65536": ("auto broadcast (chain), chain of 65,536",
                              ["estimate", "-t", "chain:65536", "--bandwidth", "1e9", "-c",
                               "broadcast", "-s", "1G"]),
    "ring-4096-all-reduce": ("auto all-reduce, ring of 4,096 (binomial tree by formula)",
                             ["estimate", "-t", "ring:4096", "--bandwidth", "1e9", "-c",
                              "all_reduce", "-s", "1G"]),
    "hlo-20000": ("hlo: 20,000 collectives of distinct sizes, v5e 4x2",
                  ["hlo", "{hlo-20000}", "-t", "tpu-v5e:4x2", "--mesh", "x=4,y=2"]),
    "hlo-50MB": ("hlo: a 50 MB module (2,800 collectives among its ops), v5e 4x2",
                 ["hlo", "{hlo-50MB}", "-t", "tpu-v5e:4x2"]),
}

_ADD = ("HloModule big, num_partitions=8\n%add (a: f32[], b: f32[]) -> f32[] {\n"
        "  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n  ROOT %s = f32[] add(%a, %b)\n}\n"
        "ENTRY %main (p: f32[1024,1024]) -> f32[1024,1024] {\n"
        "  %p.0 = f32[1024,1024]{1,0:T(8,128)} parameter(0)\n")
_CONFIG = ('backend_config={"flag_configs":[],"window_config":{"kernel_window_bounds":["256","4"],'
           '"estimated_cycles":"1079216"},"used_scoped_memory_configs":[]}')


def hlo_module(path: str, *, collectives: int = 0, nbytes: int = 0) -> None:
    """Write a module of ``collectives`` all-reduces of distinct sizes, or one of about
    ``nbytes`` of text with an all-reduce every 50 instructions (as compiled TPU text,
    each instruction with its metadata and backend config)."""
    lines, size, i = [_ADD], len(_ADD), 0
    while (collectives and i < collectives) or (nbytes and size < nbytes):
        i += 1
        if collectives:
            n = 1024 + i
            line = (f"  %p.{i} = f32[{n}]{{0}} all-reduce(f32[{n}]{{0}} %p.0), channel_id={i}, "
                    f"replica_groups={'[2,4]<=[4,2]T(1,0)' if i % 2 else '[4,2]<=[8]'}, "
                    f"use_global_device_ids=true, to_apply=%add\n")
        elif i % 50 == 0:
            line = (f"  %p.{i} = f32[1024,1024]{{1,0:T(8,128)}} all-reduce(%p.{i - 1}), "
                    f"channel_id={i}, replica_groups=[4,2]<=[8], use_global_device_ids=true, "
                    f"to_apply=%add, metadata={{op_name=\"jit(f)/psum\"}}, {_CONFIG}\n")
        else:
            line = (f"  %p.{i} = f32[1024,1024]{{1,0:T(8,128)}} multiply(%p.{i - 1}, %p.{i - 1}), "
                    f"metadata={{op_name=\"jit(f)/mul\" source_file=\"/a/b.py\"}}, {_CONFIG}\n")
        lines.append(line)
        size += len(line)
    lines.append("  ROOT %r = f32[1024,1024]{1,0} copy(%p.0)\n}\n")
    with open(path, "w") as f:
        f.writelines(lines)


_FILES = {"hlo-20000": {"collectives": 20000}, "hlo-50MB": {"nbytes": 50 * 10**6}}

#: Other large inputs (no target: they must answer, or refuse in one line).
EXTRAS = {
    "chain-4096": ("chain all-reduce, 4,096 ranks",
                   ["estimate", "-t", "chain:4096", "--bandwidth", "45e9", "-c", "all_reduce",
                    "-s", "1G"]),
    "switch-4096-direct": ("direct all-reduce, 4,096-port switch",
                           ["estimate", "-t", "switch:4096", "--bandwidth", "50e9", "-c",
                            "all_reduce", "-s", "1G", "-a", "direct"]),
    "switch-16384": ("auto all-reduce, 16,384-port switch",
                     ["estimate", "-t", "switch:16384", "--bandwidth", "50e9", "-c", "all_reduce",
                      "-s", "1G"]),
    "switch-1024-sweep": ("auto sweep, 8 B to 1 GiB, 1,024-port switch",
                          ["sweep", "-t", "switch:1024", "--bandwidth", "50e9", "-c", "all_reduce",
                           "-b", "8", "-e", "1G", "-f", "2"]),
    "sweep-dup": ("sweep -f 1.000001 -b 8 -e 16 (9 sizes)",
                  ["sweep", "-t", "dgx-h100:1", "-c", "all_reduce", "-b", "8", "-e", "16",
                   "-f", "1.000001"]),
    "tpu-pods-dcn": ("auto all-reduce, 4 TPU v5e pods joined by DCN",
                     ["estimate", "-t", "tpu-v5e:pod*4", "-c", "all_reduce", "-s", "1G"]),
    "torus-1000x1000": ("auto all-reduce, 1000x1000 torus",
                        ["estimate", "-t", "torus:1000x1000", "--bandwidth", "45e9", "-c",
                         "all_reduce", "-s", "1G"]),
    "switch-1000000": ("auto all-reduce, 1,000,000-port switch",
                       ["estimate", "-t", "switch:1000000", "--bandwidth", "50e9", "-c",
                        "all_reduce", "-s", "1G"]),
    "gather-multipath-torus-64x64": ("multipath gather, 64x64 torus (refused: no closed form)",
                                     ["estimate", "-t", "torus:64x64", "--bandwidth", "1e9",
                                      "-c", "gather", "-s", "1G", "-a", "multipath"]),
    "show-chain-65536": ("show a chain broadcast, ring of 65,536 (10 steps printed)",
                         ["show", "-t", "ring:65536", "--bandwidth", "1e9", "-c", "broadcast",
                          "-a", "chain", "--max-steps", "10"]),
    "show-switch-1000-a2a": ("show auto all-to-all, 1,000-port switch (10 steps printed)",
                             ["show", "-t", "switch:1000", "--bandwidth", "1e9", "-c",
                              "all_to_all", "--max-steps", "10"]),
    "dgx-h100-100000": ("all-reduce, 100,000 DGX H100 (800,000 GPUs)",
                        ["estimate", "-t", "dgx-h100:100000", "-c", "all_reduce", "-s", "1G"]),
}


# Hostile HLO inputs (each under the 128 MiB limit): the reader answers each within the
# targets or refuses it in one line naming a limit the README states. Each file is
# written when its case runs (up to 127 MiB in the temporary folder) and removed after.
_HEAD = "HloModule m, num_partitions=8\n"
_BIG = 127 * 2**20


def _repeat(f, unit: str, size: int) -> None:
    block = unit * max(1, 2**20 // len(unit))
    for _ in range(size // len(block)):
        f.write(block)


def _flood(unit: str, size: int = _BIG, *, entry: bool = False):
    def write(path: str) -> None:
        with open(path, "w") as f:
            f.write(_ADD if entry else _HEAD)
            _repeat(f, unit, size)
            if entry:
                f.write("  ROOT %r = f32[1024,1024]{1,0} copy(%p.0)\n}\n")
    return write


def _chain(n: int):
    def write(path: str) -> None:
        with open(path, "w") as f:
            f.write(_ADD)
            for i in range(1, n + 1):
                f.write(f"  %p.{i} = f32[1024,1024]{{1,0}} all-reduce(%p.{i - 1}), "
                        f"channel_id={i}, replica_groups=[2,4]<=[4,2]T(1,0), "
                        f"use_global_device_ids=true, to_apply=%add\n")
            f.write(f"  ROOT %r = f32[1024,1024]{{1,0}} copy(%p.{n})\n}}\n")
    return write


def _one_group(groups: str, devices: int = 2**20):
    def write(path: str) -> None:
        with open(path, "w") as f:
            f.write(_ADD.replace("num_partitions=8", f"num_partitions={devices}"))
            f.write(f"  ROOT %ar = f32[1024,1024]{{1,0}} all-reduce(%p.0), "
                    f"channel_id=1, replica_groups={groups}, "
                    f"use_global_device_ids=true, to_apply=%add\n}}\n")
    return write


def _tpu_copies(size: int):
    """The TPU-compiled scan_layers module (tests/data/hlo_tpu) and renamed copies of
    its computations, to about ``size`` bytes: a dump as large models make them."""
    def write(path: str) -> None:
        import re
        here = os.path.dirname(os.path.abspath(__file__))
        with open(os.path.join(here, "..", "tests", "data", "hlo_tpu",
                               "scan_layers.txt")) as f:
            text = f.read()
        first = re.search(r"^(%|ENTRY )\S.*\{$", text, re.M).start()
        body = text[first:].replace("ENTRY %", "%")
        with open(path, "w") as f:
            f.write(text)
            written, k = len(text), 0
            while written < size:
                k += 1
                copy = re.sub(r"%([A-Za-z_][\w.\-]*)", rf"%\1_c{k}", body)
                f.write("\n" + copy)
                written += len(copy) + 1
    return write


def _brackets(n: int):
    def write(path: str) -> None:
        with open(path, "w") as f:
            f.write(_ADD)
            f.write("  ROOT %ar = f32[1024,1024]{1,0} all-reduce(%p.0), channel_id=1, "
                    "replica_groups=[4,2]<=[8], use_global_device_ids=true, "
                    "to_apply=%add, junk=" + "{" * n + "}" * n + "\n}\n")
    return write


_V5E = ["-t", "tpu-v5e:4x2"]
HOSTILE = {
    "hlo-blank-127MiB": ("hlo: HloModule line + 127 MiB of newlines (refused)",
                         _flood("\n"), _V5E),
    "hlo-blank-64MiB": ("hlo: HloModule line + 64 MiB of newlines (refused)",
                        _flood("\n", 64 * 2**20), _V5E),
    "hlo-words-126MiB": ("hlo: HloModule line + 126 MiB of 'x' lines (refused)",
                         _flood("x\n", 126 * 2**20), _V5E),
    "hlo-line-100MB": ("hlo: HloModule line + one line of 100 MB (refused)",
                       _flood("a" * 1000, 100 * 10**6), _V5E),
    "hlo-adds-126MiB": ("hlo: 126 MiB of ordinary instructions (1.4M adds), answered",
                        _flood("  %x = f32[1024,1024]{1,0} add(f32[1024,1024]{1,0} "
                               "%p.0, f32[1024,1024]{1,0} %p.0), "
                               "metadata={op_name=\"x\"}\n", 126 * 2**20, entry=True),
                        _V5E),
    "hlo-params-127MiB": ("hlo: 127 MiB of parameters, walked (refused: 150,000 read)",
                          _flood("  %q = f32[8]{0} parameter(0)\n", entry=True), _V5E),
    "hlo-brackets-20MB": ("hlo: 10M braces nested in an attribute (refused: brackets)",
                          _brackets(10**7), _V5E),
    "hlo-comments-127MiB": ("hlo: a line of 33M /**/ comments (refused: 1,000,000)",
                            _flood("(/**/", entry=True), _V5E),
    "hlo-chain-200000": ("hlo: 200,000 chained all-reduces (refused: 20,000)",
                         _chain(200_000), _V5E),
    "hlo-chain-600000": ("hlo: 600,000 chained all-reduces, 88 MB (refused: 80,000)",
                         _chain(600_000), _V5E),
    "hlo-chain-20000-json": ("hlo: 20,000 chained all-reduces, --json",
                             _chain(20_000), _V5E + ["--json"]),
    "hlo-group-1M": ("hlo: one explicit group of 1,048,576 devices (7 MB), ring",
                     _one_group("{{" + ",".join(map(str, range(2**20))) + "}}"),
                     ["-t", "ring:1048576", "--bandwidth", "1e9"]),
    "hlo-iota-1M-error": ("hlo: 1,024 x 1,024 iota groups no ring axis fits (one line)",
                          _one_group("[1024,1024]<=[1024,1024]T(1,0)"),
                          ["-t", "ring:1048576", "--bandwidth", "1e9"]),
    "hlo-tpu-40MB": ("hlo: a TPU-compiled dump of 40 MB (scan_layers copied), answered",
                     _tpu_copies(40 * 10**6), _V5E),
    "hlo-tpu-126MB": ("hlo: a TPU-compiled dump of 126 MB (refused: 150,000 read)",
                      _tpu_copies(126 * 10**6), _V5E),
}


def measure(argv: list[str], timeout: float) -> tuple[float, float, float, int, str]:
    """(wall s, CPU s (user + system), peak RSS MB, exit status, last line of output)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as report:
        cmd = ["/usr/bin/time", "-o", report.name, "-f", "%e %U %S %M",
               "timeout", str(timeout), sys.executable, "-m", "collectives_lib", *argv]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=os.environ)
        wall, user, system, kb = report.read().strip().splitlines()[-1].split()
    lines = (proc.stdout + proc.stderr).strip().splitlines()
    return (float(wall), float(user) + float(system), int(kb) / 1024, proc.returncode,
            lines[-1] if lines else "")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--extras", action="store_true", help="also the other large inputs")
    ap.add_argument("--hostile", action="store_true",
                    help=f"the hostile HLO inputs instead: {', '.join(HOSTILE)}")
    ap.add_argument("names", nargs="*", help=f"cases to run (default the targets: {', '.join(CASES)})")
    args = ap.parse_args()
    table = {**CASES, **EXTRAS, **{k: (what, ["hlo", "{" + k + "}", *argv])
                                   for k, (what, _, argv) in HOSTILE.items()}}
    package = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "collectives_lib")
    compileall.compile_dir(package, quiet=1)
    folder = tempfile.mkdtemp()
    files = {}
    names = args.names or (list(HOSTILE) if args.hostile else
                           list({**CASES, **EXTRAS}) if args.extras else list(CASES))
    for key, kw in _FILES.items():
        if key in names:
            files[key] = os.path.join(folder, f"{key}.txt")
            hlo_module(files[key], **kw)
    print(f"{'case':<56} {'min wall (s)':>12} {'min CPU (s)':>11} {'peak RSS (MB)':>14} {'exit':>5}")
    for name in names:
        what, argv = table[name]
        if name in HOSTILE:
            files[name] = os.path.join(folder, f"{name}.txt")
            HOSTILE[name][1](files[name])
        argv = [files.get(a.strip("{}"), a) if a.startswith("{") else a for a in argv]
        runs = [measure(argv, args.timeout) for _ in range(args.repeats)]
        wall = min(r[0] for r in runs)
        cpu = min(r[1] for r in runs)
        rss = min(r[2] for r in runs)
        print(f"{what:<56} {wall:>12.2f} {cpu:>11.2f} {rss:>14.0f} {runs[-1][3]:>5}")
        print(f"    {' '.join(argv)}\n    -> {runs[-1][4][:150]}")
        if name in HOSTILE:
            os.remove(files.pop(name))
    shutil.rmtree(folder)


if __name__ == "__main__":
    main()
