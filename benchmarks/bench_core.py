"""Benchmarks of the library's speed on large topologies (not a test: prints figures).

Each case runs in a fresh interpreter, so the wall time includes starting Python
and importing the package, as a reader at the command line would see it.
Targets (issue 2): each at most 2 s on a 2-core machine.

    python benchmarks/bench_core.py
"""

import os
import statistics
import subprocess
import sys
import time

CASES = {
    "all-gather over all axes of a v5p pod (8960 chips)":
        "import collectives_lib as cl; t = cl.tpu_pod('v5p'); "
        "r = cl.simulate(cl.build('all_gather', t), t, 8960 * 2**20); print(r.num_steps, r.time)",
    "hierarchical all-reduce over a 1024-GPU SuperPod":
        "import collectives_lib as cl; t = cl.superpod(); "
        "r = cl.simulate(cl.build('all_reduce', t, 'hierarchical'), t, 2**30); print(r.num_steps, r.time)",
    "ring all-reduce over 4096 ranks (8190 steps)":
        "import collectives_lib as cl; t = cl.Ring(4096, bandwidth=45e9, latency=1e-6); "
        "r = cl.simulate(cl.build('all_reduce', t, 'ring'), t, 4096 * 2**20); print(r.num_steps, r.time)",
    "replay with data: ring all-reduce on 64 ranks":
        "import collectives_lib as cl; cl.check(cl.build('all_reduce', 64, 'ring')); print('ok')",
    "replay with data: bidirectional all-to-all on 64 ranks":
        "import collectives_lib as cl; cl.check(cl.build('all_to_all', 64, 'bidirectional_ring')); print('ok')",
    "sweep of 40 sizes, flat ring all-reduce on the SuperPod":
        "import numpy as np, collectives_lib as cl; t = cl.superpod(); "
        "s = cl.build('all_reduce', t, 'ring'); print(cl.simulate_sizes(s, t, np.geomspace(8, 1e10, 40))[-1])",
}


def run_once(code: str) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of one fresh interpreter running ``code``.

    The CPU time is what to compare between versions on a loaded machine: other
    processes stretch the wall time but not the work this one does."""
    before = os.times()
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    wall = time.perf_counter() - t0
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return wall, cpu


def main(repeats: int = 3) -> None:
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'case':<58} {'median wall (s)':>16} {'median CPU (s)':>15} {'runs':>5}")
    for name, code in CASES.items():
        runs = [run_once(code) for _ in range(repeats)]
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        print(f"{name:<58} {wall:>16.2f} {cpu:>15.2f} {repeats:>5}")


if __name__ == "__main__":
    main()
