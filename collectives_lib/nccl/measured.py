"""From NCCL's prediction to what nccl-tests measures: the pipeline fill.

NCCL's tuner predicts ``latency + nBytes / bandwidth`` and picks the least.
Published nccl-tests runs agree with it at the two ends (a few microseconds
of latency; the large-message bandwidth) but run slower in between: NCCL moves
each channel's data as a pipeline of chunks, and a pipeline of ``k`` chunks
through a path of per-chunk latency ``L`` takes, at the best chunk size,

    (sqrt(V / B) + sqrt(L))**2  =  V / B + L + 2 sqrt(L V / B)

The tuner counts the first two terms (its latency stands for ``L``); this
module adds the third, with ``L`` per algorithm fitted to the published runs
in ``collectives_lib/data/nccl_tests`` (``benchmarks/bench_validation.py``
refits and prints them). The choice of algorithm stays NCCL's: this changes
only the time reported for the algorithm NCCL picks.

One more correction: on a single NVLS node NCCL's channel search reports an
NVLS network bandwidth that caps the tuner's NVLS bandwidth although no byte
goes to the network (visible on B200, where the tuner says 720 GB/s of bus
bandwidth and runs measure 843); the measured time uses the NVLink term.

>>> from collectives_lib.nccl.tuner import Comm, choose
>>> comm = Comm.for_system("dgx-h100", nodes=1)
>>> p = choose("all_reduce", 2**24, comm)
>>> round(p.time * 1e6, 1), round(measured_time(p, comm) * 1e6, 1)
(86.7, 113.9)

Introduced in the chapter *Measure it yourself* (the model against published runs).
"""

from __future__ import annotations

import math

from .tuner import Comm, Prediction, bandwidth, function, nvls_channel_bandwidth

#: Per-chunk pipeline latency (s) by NCCL algorithm, fitted to the published runs
#: (median error at 1 MiB and above: ring 5.7%, NVLS 3.0%, NVLS_TREE 8.1%, tree 19%, p2p 2.8%).
PIPELINE_LATENCY = {"RING": 1e-6, "TREE": 6e-6, "NVLS": 3e-6, "NVLS_TREE": 12e-6,
                    "COLLNET_DIRECT": 6e-6, "COLLNET_CHAIN": 6e-6, "PAT": 6e-6, "P2P": 4e-6}
SOURCE = "nccl-p2p-model"


def _bandwidth(p: Prediction, comm: Comm) -> float:
    """The bandwidth (bytes/s against nBytes) a run reaches: the tuner's, except NVLS on
    one node, where the search's network figure should not cap it."""
    if p.algorithm == "NVLS" and comm.nodes == 1 and comm.graphs.get("nvls") is not None:
        func = function(p.collective)
        bus = comm.graphs["nvls"].channels * nvls_channel_bandwidth(func, comm)
        tuned = bandwidth(func, "NVLS", "SIMPLE", comm) * 1e9
        ratio = (comm.nranks / (2 * (comm.nranks - 1))) if func == "AllReduce" else 1.0
        return max(tuned, bus * ratio * 1e9)
    return p.bandwidth


def measured_time(p: Prediction, comm: Comm) -> float:
    """What nccl-tests would measure for NCCL's prediction ``p``: its latency, its
    bytes at the bandwidth the runs reach, and the pipeline fill."""
    if p.time <= 0:
        return p.time
    bw = _bandwidth(p, comm)
    t_bw = p.nbytes / bw if bw > 0 else max(p.time - p.latency, 0.0)
    lat = min(p.latency, p.time)
    fill = 2 * math.sqrt(PIPELINE_LATENCY.get(p.algorithm, 0.0) * t_bw)
    return lat + t_bw + fill

