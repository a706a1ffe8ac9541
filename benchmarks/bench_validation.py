"""NCCL's model against every published nccl-tests run (prints figures; not a test).

    python benchmarks/bench_validation.py            # the table (fit set and held out apart) and
                                                     # a leave-one-run-out figure per fitted constant
    python benchmarks/bench_validation.py --rows     # and every row of every modelled run
    python benchmarks/bench_validation.py --fit      # refit every constant on its fit set

The table gives, per run, the median error (predicted - measured) / measured
from 1 KiB to 1 MiB and at 1 MiB and above, and its verdict; the goals are 35%
and 15%. The runs each fitted constant was fitted on are in
collectives_lib/data/nccl_tests/fits.csv; all the others are held out.

Leave one run out: for a constant fitted on two or more runs, it is refitted
without each of them in turn and that run's median error at the refitted value
is printed (a constant fitted on one run has no such figure: said so).
"""

import sys
import time

from collectives_lib.nccl import validation as V


def fit() -> None:
    for name, f in V.FITTED.items():
        value = V.refit(name)
        mark = "" if value == f.get() else f"   <- differs from the model's {f.get():g}"
        print(f"{name:<26} fitted on {len(f.runs)} run(s): {value:g} {f.unit}{mark}")


def leave_one_out() -> None:
    print("\nleave one run out (refit without the run, then that run's median error in the constant's class)")
    for name, f in V.FITTED.items():
        rows = V.leave_one_out(name)
        if not rows:
            why = "no run in the data" if not f.runs else f"fitted on its only run, {f.runs[0]}"
            print(f"  {name:<26} {f.get():g} {f.unit}: no leave-one-out figure ({why})")
            continue
        for rid, value, err in rows:
            e = "   -" if err is None else f"{err:+6.1%}"
            print(f"  {name:<26} without {rid:<58} -> {value:g} {f.unit}; its {f.size_class} error {e}")


def main() -> None:
    t0 = time.perf_counter()
    print(V.report())
    if "--rows" in sys.argv:
        for s in V.summaries():
            run = s.run
            print(f"\n{run.run_id} ({run.healthy}; {run.source_url})")
            for x in s.rows:
                print(f"  {x.nbytes:>12}  measured {x.measured * 1e6:>11.2f} us  predicted "
                      f"{x.predicted * 1e6:>11.2f} us  {x.error:+6.1%}  {x.algorithm}/{x.protocol}")
    if "--fit" in sys.argv:
        print()
        fit()
    leave_one_out()
    print(f"\n({time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main()
