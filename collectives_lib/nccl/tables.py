"""NCCL's tuning constants, as NCCL 2.30.7 defines them.

Every number here is read from NCCL's source at tag v2.30.7-1 (the keys of
:data:`collectives_lib.hardware.SOURCES` name the files): ``src/graph/tuning.cc``
for the latencies, caps, efficiencies and the tree correction table, and
``src/graph/search.cc`` for the speed ladders the channel search tries. NCCL's
figures carry over; its code does not: :mod:`collectives_lib.nccl.tuner`
restates its formulas. Units are NCCL's: microseconds and GB/s (1e9 B/s).

Indices: algorithms TREE, RING, COLLNET_DIRECT, COLLNET_CHAIN, NVLS, NVLS_TREE,
PAT (NCCL's order, which also breaks ties in its choice); protocols LL, LL128,
SIMPLE; architectures by compute capability: Volta (SM < 80), Ampere (80),
Hopper (90), Blackwell (100 and up).

Introduced in the chapter *GPU collectives within the node* (protocols).
"""

from __future__ import annotations

#: Where the constants come from (keys of ``hardware.SOURCES``) and the version they are.
SOURCE = "nccl-tuning-2.30"
SEARCH_SOURCE = "nccl-search-2.30"
VERSION = "2.30.7"

ALGORITHMS = ("TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT")
PROTOCOLS = ("LL", "LL128", "SIMPLE")
ARCHES = ("volta", "ampere", "hopper", "blackwell")

#: Base latency of an algorithm, per protocol (us).
BASE_LATENCY = {
    "TREE": (6.8, 14.0, 8.4),
    "RING": (6.6, 14.0, 8.4),
    "COLLNET_DIRECT": (0.0, 0.0, 0.0),
    "COLLNET_CHAIN": (0.0, 0.0, 0.0),
    "NVLS": (0.0, 0.0, 0.0),
    "NVLS_TREE": (0.0, 0.0, 0.0),
    "PAT": (8.0, 8.0, 8.0),
}

#: Per-step hardware latency (us) over NVLink, PCI and the network, per algorithm and protocol.
HW_LATENCY = {
    "NVLINK": {
        "TREE": (0.6, 1.25, 4.0), "RING": (0.6, 1.9, 3.4),
        "COLLNET_DIRECT": (0.0, 0.0, 3.7), "COLLNET_CHAIN": (0.0, 0.0, 2.8),
        "NVLS": (0.0, 0.0, 25.0), "NVLS_TREE": (0.0, 0.0, 25.0), "PAT": (0.0, 0.0, 4.0),
    },
    "PCI": {
        "TREE": (1.0, 1.9, 4.0), "RING": (1.0, 2.5, 5.7),
        "COLLNET_DIRECT": (0.0, 0.0, 3.7), "COLLNET_CHAIN": (0.0, 0.0, 2.8),
        "NVLS": (0.0, 0.0, 0.0), "NVLS_TREE": (0.0, 0.0, 0.0), "PAT": (0.0, 0.0, 4.0),
    },
    "NET": {
        "TREE": (5.0, 8.5, 14.0), "RING": (2.7, 4.0, 14.0),
        "COLLNET_DIRECT": (0.0, 0.0, 31.0), "COLLNET_CHAIN": (0.0, 0.0, 30.0),
        "NVLS": (0.0, 0.0, 18.0), "NVLS_TREE": (0.0, 0.0, 20.9), "PAT": (0.0, 0.0, 14.0),
    },
}

#: LL caps (GB/s): rows Volta 1-node or Intel multi-node, Ampere 1-node or AMD multi-node,
#: Hopper 1-node, Blackwell 1-node; columns 1 node, 2 nodes, 3 or more.
LL_MAX_BW = ((39.0, 39.0, 20.4), (87.7, 22.5, 19.0), (141.0, 45.0, 35.0), (282.0, 90.0, 70.0))
#: Per-channel caps (GB/s) by architecture (rows) and node count (columns, as above).
RING_LL128_MAX_BW = ((20.0, 20.0, 20.0), (20.0, 20.0, 20.0), (36.7, 36.7, 36.7), (40.0, 40.0, 40.0))
TREE_LL128_MAX_BW = ((20.0, 20.0, 20.0), (20.0, 20.0, 20.0), (36.7, 36.7, 29.0), (55.6, 31.67, 20.0))
TREE_MAX_BW = ((26.5, 18.5, 10.0), (24.0, 23.6, 17.8), (38.7, 41.4, 36.0), (70.0, 42.8, 24.0))
NVLS_TREE_MAX_BW = ((26.5, 18.5, 10.0), (24.0, 23.6, 17.8), (0.0, 57.7, 45.5), (0.0, 96.0, 80.0))
#: NVLS efficiency by architecture.
NVLS_EFFICIENCY = (0.0, 0.0, 0.85, 0.74)

#: Tree correction factor by protocol and log2(nBytes / 64): 24 entries (64 B to 1 GiB).
TREE_CORRECTION = {
    "LL": (1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0,
           1.0, 1.0, 1.0),
    "LL128": (1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9,
              1.0, 1.0, 1.0),
    "SIMPLE": (.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9,
               .9, .9),
}

#: Scalar factors of the bandwidth model.
RING_LL_FACTOR = 0.5            # an LL line is 8 bytes of data and 8 of flags
RING_LL128_FACTOR = 0.92        # the comment says 120/128; the code uses 0.92
TREE_FACTOR = 0.92
TREE_LL_DIVISOR = 3.8
TREE_LL128_ONE_NODE = 7.0 / 9.0
TREE_LL128_MULTI_NODE = 120.0 / 128.0
TREE_PATTERN_PENALTY = 0.85     # every NIC's traffic through one GPU (the TREE search pattern)
PAT_FACTOR = 0.75
COLLNET_DIRECT_SM90 = 0.85
COLLNET_DIRECT_NET = 0.9
COLLNET_ARITY_LATENCY = 0.4     # us per local peer
PAT_LOG_DIVISOR = 3.5
PAT_LINEAR_LATENCY = 2.8        # us per rank
RING_PLATEAU = (1.9, 1.4)       # Simple ring all-reduce latency multiplier: SM < 80, SM >= 80
NET_OVERHEAD = {"intel": 1.0, "amd": 2.0, "arm": 1.0}   # us per network step; x3 for Simple

#: Per-channel speeds (GB/s) the channel search tries, fastest first: (intra, inter) by SM.
SPEED_LADDERS = {
    80: ((40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3),
         (48, 30, 28, 24, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3, 2.4, 1.2, 0.24, 0.12)),
    90: ((60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3),
         (48, 45, 42, 40, 30, 24, 22, 20, 17.5, 15, 12, 6, 3, 2.4, 1.2, 0.24, 0.12)),
    100: ((90, 80, 70, 60, 50, 45, 40, 30, 24, 20, 19, 18),
          (96, 86, 80, 48, 45.1, 42, 40, 30, 24, 22, 20, 17.5, 15, 12, 6, 3, 2.4, 1.2, 0.24, 0.12)),
}
#: Ring channels the search may use (MAXCHANNELS / 2 since NCCL 2.25).
MAX_RING_CHANNELS = 32

#: src/enqueue.cc, updateCollCostTable: an fp8 ring over more than 8 ranks has its time
#: multiplied by this, "any factor large enough to act as a partition between lossy and
#: non-lossy algos".
FP8_RING_PENALTY = 1024.0
#: NVLS heads at most (NCCL_MAX_NVLS_ARITY, src/include/device.h).
MAX_NVLS_ARITY = 32

#: NVLS channels NCCL launches (comm->nvlsChannels, src/transport/nvls.cc ncclNvlsTuning):
#: SM90 16; SM100 24 on one node (NVLS_NCHANNELS_SM100_NVL), 32 across nodes, then the SM100
#: NVLSTree table (ncclNvlsTreeSm100Tuning) by node count, NIC speed (GB/s) and GPUs per node.
NVLS_CHANNELS_SM90 = 16
NVLS_CHANNELS_SM100 = 32
NVLS_CHANNELS_SM100_NVL = 24

#: Threads per channel and bytes per thread before NCCL adds a channel (src/graph/tuning.cc
#: ncclTopoTuneModel, src/include/device.h, src/include/comm.h): maxThreads[algorithm][protocol]
#: (Simple on a ring: 256 where the ring graph's bwIntra x nChannels <= PCI_BW, else 512) and
#: threadThresholds (LL 8, times nRanks on a ring; LL128 8; Simple 64; CollNet Simple 512).
MAX_THREADS = {"LL": 512, "LL128": 640, "SIMPLE": 512}
MAX_THREADS_IN_NETWORK = 640        # NVLS, NVLS_TREE, COLLNET_*: NCCL_MAX_NTHREADS
THREAD_THRESHOLDS = {"LL": 8, "LL128": 8, "SIMPLE": 64}
COLLNET_SIMPLE_THRESHOLD = 512
PCI_BW = 12.0                       # GB/s, src/include/graph.h
