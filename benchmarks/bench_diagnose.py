"""Time `collectives diagnose`: every published nccl-tests run, and a 40-row output.

    python benchmarks/bench_diagnose.py

The 40-row output is the 32 rows of an 8 x H100 all-reduce sweep (8 B to 16 GiB) with
eight more sizes between them, from 3 KiB to 384 MiB (nccl-tests -f 1.5 style), with
times as the published rows give them; it is read with and without its preset.
"""
from __future__ import annotations

import time
from importlib import resources

import collectives_lib as cl
from collectives_lib.nccl import validation as V

RAW = resources.files("collectives_lib") / "data" / "nccl_tests" / "raw"


def forty_rows() -> str:
    text = (RAW / "dgxh100x8-nvls-allreduce-dgxc-bench.txt").read_text()
    lines = text.splitlines()
    rows = [ln for ln in lines if ln.lstrip()[:1].isdigit() and "float" in ln]
    extra = []
    for ln in rows[9:17]:                       # 4 KiB .. 512 KiB: a size 1.5x each
        t = ln.split()
        size = int(t[0]) * 3 // 2
        t0, t1 = float(t[5]) * 1.2, float(t[9]) * 1.2
        a0, a1 = size / t0 / 1e3, size / t1 / 1e3
        extra.append(f"{size:>12}  {size // 4:>12}  {'float':>8}  {'sum':>6}  {-1:>6}"
                     f"  {t0:7.2f}  {a0:6.2f}  {a0 * 1.75:6.2f}  {0:>6}"
                     f"  {t1:7.2f}  {a1:6.2f}  {a1 * 1.75:6.2f}  {0:>6}")
    table = sorted(rows + extra, key=lambda ln: int(ln.split()[0]))
    head = [ln for ln in lines if ln.startswith("#") and "Avg" not in ln and "Out of" not in ln]
    return "\n".join(head + table) + "\n"


def best_of(fn, repeat=5) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    t0 = time.perf_counter()
    import collectives_lib.diagnose  # noqa: F401  (the first call's import, timed apart)
    print(f"import collectives_lib.diagnose: {(time.perf_counter() - t0) * 1e3:.0f} ms")
    text = forty_rows()
    n = sum(1 for ln in text.splitlines() if ln.lstrip()[:1].isdigit())
    print(f"{n}-row all_reduce_perf output, 8 x H100:")
    print(f"  inferred preset  {best_of(lambda: cl.diagnose(text)) * 1e3:7.1f} ms")
    print(f"  --topology       {best_of(lambda: cl.diagnose(text, 'dgx-h100:1')) * 1e3:7.1f} ms")
    print(f"  text and JSON    {best_of(lambda: (str(d := cl.diagnose(text)), d.as_dict())) * 1e3:7.1f} ms")
    print("every published run (with its preset where models.csv names one):")
    rows = []
    for run in V.runs():
        path = RAW / f"{run.run_id}.txt"
        topo = V.topology_for(run) if run.modelled else None
        def go(path=path, topo=topo):
            try:
                cl.diagnose(path, topo)
            except cl.CollectivesError:
                pass
        rows.append((best_of(go, 3), run.run_id, len(run.rows)))
    total = sum(t for t, _, _ in rows)
    for t, rid, k in sorted(rows, reverse=True)[:5]:
        print(f"  {t * 1e3:7.1f} ms  {k:3d} rows  {rid}")
    print(f"  {len(rows)} runs in {total:.2f} s, the slowest above")


if __name__ == "__main__":
    main()
