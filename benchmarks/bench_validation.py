"""NCCL's model against every published nccl-tests run (prints figures; not a test).

    python benchmarks/bench_validation.py            # the summary table
    python benchmarks/bench_validation.py --rows     # and every row of every run
    python benchmarks/bench_validation.py --fit      # refit the pipeline latencies

The summary gives, per run, the median and worst error (predicted - measured)
/ measured below 1 MiB and at 1 MiB and above; the goal is 35% and 15% on
healthy runs. --fit prints the per-algorithm pipeline latency that minimises
the median error at 1 MiB and above (collectives_lib.nccl.measured).
"""

import math
import sys
import time

import collectives_lib as cl
from collectives_lib.nccl import validation as V
from collectives_lib.nccl import measured


def _rows():
    for run in V.runs():
        if run.modelled and run.healthy != "no" and "sharp" not in run.options:
            yield run, V.compare(run)


def fit() -> None:
    data = {}
    for run, _ in _rows():
        topo = V.topology_for(run)
        n = run.gpus_per_node * run.num_nodes
        for row in run.rows:
            size, t = int(row["size_bytes"]), V._measured(row, run.collective, n)
            if size < V.LARGE or not t:
                continue
            e = cl.estimate(run.collective, topo, size, run.options.get("algorithm", "auto"),
                            nvls={"off": False}.get(run.options.get("nvls", "")),
                            dtype=run.options.get("dtype", "float32"))
            fill = e.time - e.latency_time
            base = fill - 2 * math.sqrt(measured.PIPELINE_LATENCY.get(e.nccl_algorithm, 0) * fill)
            data.setdefault(e.nccl_algorithm, []).append((t, e.latency_time, max(base, 0.0)))
    for algo, rows in sorted(data.items()):
        best = min(((lp, sorted(abs(lat + bw + 2 * math.sqrt(lp * 1e-6 * bw) - t) / t
                                for t, lat, bw in rows)[len(rows) // 2])
                    for lp in (0, 0.25, 0.5, 1, 2, 3, 4, 6, 8, 12, 16, 24)), key=lambda x: x[1])
        print(f"{algo:<15} rows {len(rows):>4}  best pipeline latency {best[0]:>5} us  median error {best[1]:.1%}")


def main() -> None:
    t0 = time.perf_counter()
    print(V.report())
    if "--rows" in sys.argv:
        for run, rows in _rows():
            print(f"\n{run.run_id} ({run.healthy}; {run.source_url})")
            for x in rows:
                print(f"  {x.nbytes:>12}  measured {x.measured * 1e6:>11.2f} us  predicted "
                      f"{x.predicted * 1e6:>11.2f} us  {x.error:+6.1%}  {x.algorithm}/{x.protocol}")
    if "--fit" in sys.argv:
        fit()
    print(f"\n({time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main()
