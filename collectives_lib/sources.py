"""Where the book's hardware figures come from: one entry per source, keyed as each
:class:`collectives_lib.hardware.Figure` names it (title, address; the address is
empty where a source is the book's own estimate).

Kept apart from :mod:`collectives_lib.hardware`, which holds the figures and
re-exports :data:`SOURCES`.
"""

from __future__ import annotations

SOURCES: dict[str, tuple[str, str]] = {
    "scaling-book": (
        "J. Austin et al., How to Scale Your Model (the Scaling Book), part 2: "
        "How to Think About TPUs, February 2025 edition (jax-ml/scaling-book 0819a7d)",
        "https://jax-ml.github.io/scaling-book/tpus/",
    ),
    "gcp-v5e": ("Google Cloud, TPU v5e system architecture",
                "https://cloud.google.com/tpu/docs/v5e"),
    "gcp-v5p": ("Google Cloud, TPU v5p system architecture",
                "https://cloud.google.com/tpu/docs/v5p"),
    "gcp-v6e": ("Google Cloud, TPU v6e (Trillium) system architecture",
                "https://cloud.google.com/tpu/docs/v6e"),
    "gcp-tpu7x": ("Google Cloud, TPU7x (Ironwood) system architecture",
                  "https://cloud.google.com/tpu/docs/tpu7x"),
    "gcp-v4": ("Google Cloud, TPU v4 system architecture",
               "https://cloud.google.com/tpu/docs/v4"),
    "gcp-arch": ("Google Cloud, TPU system architecture (v2 and v3 pods)",
                 "https://cloud.google.com/tpu/docs/system-architecture-tpu-vm"),
    "estimate": ("This book's estimate, not a published figure: the figure's note gives "
                 "the reasoning and the public numbers it rests on", ""),
    "nv-mma4z00": ("NVIDIA MMA4Z00-NS-T 800 Gb/s twin-port OSFP multimode transceiver "
                   "(50 m): 15 W in every configuration",
                   "https://docs.nvidia.com/networking/display/800gmma4z00nst/overview"),
    "nv-dgxc-bench": ("NVIDIA dgxc-benchmarking, NCCL: nccl-tests all_reduce_perf on a DGX H100 "
                      "(the published run collectives_lib/data/nccl_tests/"
                      "dgxh100x8-nvls-allreduce-dgxc-bench.csv)",
                      "https://github.com/NVIDIA/dgxc-benchmarking/blob/"
                      "8e77d607c06f8c8603568ba7e49e65f8ff88c1b8/nccl/README.md"),
    "nv-h100": ("NVIDIA H100 Tensor Core GPU datasheet (SXM5)",
                "https://www.nvidia.com/en-us/data-center/h100/"),
    "nv-hopper-arch": ("NVIDIA H100 Tensor Core GPU Architecture whitepaper (GH100: 132 SMs on H100 SXM5, "
                       "114 on H100 PCIe)",
                       "https://resources.nvidia.com/en-us-tensor-core"),
    "nv-ampere-arch": ("NVIDIA A100 Tensor Core GPU Architecture whitepaper (GA100: 108 SMs on A100)",
                       "https://images.nvidia.com/aem-dam/en-zz/Solutions/data-center/"
                       "nvidia-ampere-architecture-whitepaper.pdf"),
    "nv-a100": ("NVIDIA A100 Tensor Core GPU datasheet (SXM4 80GB)",
                "https://www.nvidia.com/en-us/data-center/a100/"),
    "nv-b200": ("NVIDIA DGX B200 datasheet",
                "https://www.nvidia.com/en-us/data-center/dgx-b200/"),
    "nv-gb200": ("NVIDIA GB200 NVL72 specifications",
                 "https://www.nvidia.com/en-us/data-center/gb200-nvl72/"),
    "nv-nvlink": ("NVIDIA NVLink and NVLink Switch overview (NVLink generations)",
                  "https://www.nvidia.com/en-us/data-center/nvlink/"),
    "nv-rubin": ("NVIDIA Vera Rubin NVL144 / NVLink 6 announcement (3.6 TB/s per GPU)",
                 "https://nvidianews.nvidia.com/"),
    "nv-dgx-h100": ("NVIDIA DGX H100 user guide: hardware overview (8x ConnectX-7 "
                    "400 Gb/s compute ports, 4 NVSwitch chips)",
                    "https://docs.nvidia.com/dgx/dgxh100-user-guide/"),
    "nv-superpod": ("NVIDIA DGX SuperPOD reference architecture with DGX H100 "
                    "(Scalable Units of 32 nodes, rail-optimised full fat tree)",
                    "https://docs.nvidia.com/dgx-superpod/reference-architecture-scalable-infrastructure-h100/"),
    "nv-superpod-large": ("NVIDIA DGX SuperPOD reference architecture with DGX B200: "
                          "larger SuperPOD component counts (from 16 Scalable Units a core "
                          "level; node-leaf, leaf-spine and spine-core cables equal in number)",
                          "https://docs.nvidia.com/dgx-superpod/reference-architecture-scalable-infrastructure-b200/latest/dgx-superpod-architecture.html"),
    "nv-superpod-gb200": ("NVIDIA DGX SuperPOD reference architecture with DGX GB200: "
                          "Scalable Units of 8 NVL72 racks (576 GPUs)",
                          "https://docs.nvidia.com/dgx-superpod/reference-architecture-scalable-infrastructure-gb200/latest/"),
    "nv-dgx-gb200": ("NVIDIA DGX GB200 user guide: compute tray with four "
                     "ConnectX-7 400 Gb/s ports for four GPUs",
                     "https://docs.nvidia.com/dgx/dgxgb200-user-guide/"),
    "hotchips-nvswitch": ("A. Ishii and R. Wells, The NVLink-Network Switch: "
                          "NVIDIA's Switch Chip for High Communication-Bandwidth "
                          "SuperPODs, Hot Chips 34 (2022): SHARP 400 GFLOP/s FP32",
                          "https://hc34.hotchips.org/"),
    "nccl-tuning": ("NCCL source, src/graph/tuning.cc: the per-step hardware latency "
                    "table hwLat, per link type, algorithm and protocol",
                    "https://github.com/NVIDIA/nccl/blob/master/src/graph/tuning.cc"),
    "nccl-tests-212": ("NVIDIA/nccl-tests issue 212, answer by S. Jeaugey (NCCL "
                       "lead): ~370 GB/s effective NVLink busbw on H100, ~480 GB/s "
                       "all-reduce busbw with NVLink SHARP (algbw ~275 GB/s)",
                       "https://github.com/NVIDIA/nccl-tests/issues/212"),
    "nccl-1442": ("NVIDIA/nccl issue 1442: 370 GB/s per direction app-level "
                  "bandwidth; NVLink SHARP gives about 30% on all-reduce",
                  "https://github.com/NVIDIA/nccl/issues/1442"),
    "pcie5": ("PCI-SIG, PCI Express 5.0: 32 GT/s per lane, about 63 GB/s per "
              "direction for x16", "https://pcisig.com/specifications"),
    "ib-ndr": ("NVIDIA ConnectX-7 / Quantum-2 NDR InfiniBand: 400 Gb/s per port",
               "https://www.nvidia.com/en-us/networking/infiniband/"),
    "ib-xdr": ("NVIDIA Quantum-X800 / ConnectX-8 XDR InfiniBand: 800 Gb/s per port",
               "https://www.nvidia.com/en-us/networking/products/infiniband/quantum-x800/"),
    "nv-b200-d2d": ("NVIDIA Blackwell architecture: 10 TB/s NV-HBI die-to-die link",
                    "https://www.nvidia.com/en-us/data-center/technologies/blackwell-architecture/"),
    "mpich": ("MPICH (https://www.mpich.org), used by the 'Measure it yourself' chapter", "https://www.mpich.org"),
    "nv-dgx-a100": ("NVIDIA DGX A100 user guide: 8x A100 SXM4, 6 NVSwitch, 8x ConnectX-6 "
                    "200 Gb/s HDR compute ports, 2x AMD EPYC 7742",
                    "https://docs.nvidia.com/dgx/dgxa100-user-guide/introduction-to-dgxa100.html"),
    "nv-a100-nvlink": ("NVIDIA A100 Tensor Core GPU architecture whitepaper: 12 third-generation "
                       "NVLinks of 25 GB/s each way, 600 GB/s bidirectional",
                       "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/nvidia-ampere-architecture-whitepaper.pdf"),
    "nv-h200": ("NVIDIA H200 Tensor Core GPU datasheet: 141 GB HBM3e, 4.8 TB/s; NVLink 900 GB/s",
                "https://www.nvidia.com/en-us/data-center/h200/"),
    "nv-dgx-b200": ("NVIDIA DGX B200 user guide: 8x B200, 2 NVSwitch chips, 8x ConnectX-7 "
                    "400 Gb/s OSFP ports, 2x Intel Xeon Platinum 8570",
                    "https://docs.nvidia.com/dgx/dgxb200-user-guide/"),
    "nccl-topo": ("NCCL 2.30.7 source, src/graph/topo.h and topo.cc: NVLink bandwidth per link by "
                  "SM (SM80 20.0, SM90 20.6, SM100 40.1 GB/s), PCIe width x lane speed / 80 "
                  "(Gen4 x16 24, Gen5 x16 48), NIC speed Mb/s / 8000 (400G 50, 200G 25)",
                  "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/topo.h"),
    "nccl-tuning-2.30": ("NCCL 2.30.7 source, src/graph/tuning.cc: base and per-step latencies "
                         "per algorithm and protocol, per-architecture bandwidth caps, protocol "
                         "and algorithm efficiencies, the tree correction table",
                         "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/tuning.cc"),
    "nccl-search-2.30": ("NCCL 2.30.7 source, src/graph/search.cc: the channel search (speed "
                         "ladders per SM, channel packing, DupChannels) that sets the tuner's "
                         "channels and per-channel bandwidths",
                         "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/search.cc"),
    "nccl-enqueue-2.30": ("NCCL 2.30.7 source, src/enqueue.cc: the tuner's choice (least time "
                          "over algorithm and protocol) and the p2p schedule",
                          "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/enqueue.cc"),
    "nccl-tests-267": ("NVIDIA/nccl-tests issue 267: all-to-all cannot aggregate several NICs; a "
                       "ConnectX-7 NDR NIC reaches 48-49 GB/s",
                       "https://github.com/NVIDIA/nccl-tests/issues/267"),
    "nv-a800": ("NVIDIA A800 (the export variant of A100, November 2022): the A100's GA100, memory and "
                "power, with its NVLink interconnect limited to 400 GB/s (the A100's 600 GB/s), as Reuters "
                "reported and this news page restates",
                "https://tweakers.net/nieuws/203182/nvidia-introduceert-a800-gpu-voor-china-die-niet-onder-exportrestricties-vs-valt.html"),
    "nv-h800": ("NVIDIA H800 SXM5 (the export variant of H100): NVLink 400 GB/s bidirectional per GPU "
                "(8 fourth-generation links instead of 18), otherwise the H100 SXM5 figures; NVIDIA's "
                "datasheet figures as compared in this technical analysis",
                "https://www.philisun.com/technical-analysis/nvidia-h800-vs-h100-a-technical-deep-dive-into-politically-defined-ai-chips/"),
    "nv-dgx-b300": ("NVIDIA DGX B300 user guide: 8x B300 (Blackwell Ultra) SXM, NVLink 5 through 2 NVSwitch "
                    "chips (1.8 TB/s bidirectional per GPU), 8x ConnectX-8 800 Gb/s compute ports on the GPU "
                    "baseboard (PCIe Gen6), 288 GB HBM3e per GPU",
                    "https://docs.nvidia.com/dgx/dgxb300-user-guide/"),
    "nv-gb300": ("NVIDIA GB300 NVL72 Enterprise Reference Architecture, system hardware and components: 18 "
                 "compute trays of 4 Blackwell Ultra GPUs and 2 Grace CPUs, 9 NVSwitch trays (130 TB/s), "
                 "4 ConnectX-8 HCAs per compute tray",
                 "https://docs.nvidia.com/enterprise-reference-architectures/nvl72-ai-factory/latest/components.html"),
    "ib-cx8": ("NVIDIA ConnectX-8 SuperNIC: 800 Gb/s per port (XDR InfiniBand or Ethernet), PCIe Gen6 x16 "
               "host interface", "https://www.nvidia.com/en-us/networking/products/ethernet/supernic/"),
    "nccl-nvls-2.30": ("NCCL 2.30.7 source, src/transport/nvls.cc (ncclNvlsTuning: NVLS_NCHANNELS_SM90 16, "
                       "NVLS_NCHANNELS_SM100 32 across nodes, NVLS_NCHANNELS_SM100_NVL 24 within one; the SM100 "
                       "NVLSTree table by node count, NIC speed and GPUs per node) and src/enqueue.cc (NVLS_TREE "
                       "runs comm->nvlsChannels channels)",
                       "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/transport/nvls.cc"),
    "nccl-symk-2.30": ("NCCL 2.30.7 source, src/sym_kernels.cc: the symmetric-memory kernels' own cost model "
                       "(queryModel_lsa: base latency, per-SM bandwidth, peak bandwidth, bus bytes per kernel) "
                       "and their pick (ncclSymkPickKernel), used when both buffers are registered as "
                       "symmetric windows (nccl-tests -R 2) on a communicator joined entirely by NVLink",
                       "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/sym_kernels.cc"),
    "nccl-device-2.30": ("NCCL 2.30.7 source, src/include/device.h (ncclNvlsSupported: NVLS reduces sum, min "
                         "and max of int32, uint32, int64, uint64, float16 and bfloat16, and the sum of float32 "
                         "and float64; never int8, uint8 or fp8) and src/enqueue.cc (updateCollCostTable: "
                         "NVLS only where ncclNvlsSupported or for all-gather; fp8 rings over more than 8 "
                         "ranks have their time multiplied by 1024 so that NCCL prefers any other algorithm)",
                         "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/include/device.h"),
    "nccl-p2p-model": ("The book's own model of NCCL's point-to-point path (NCCL has no cost "
                       "model for send/recv and all-to-all): a per-peer message cost and the "
                       "tuner's per-GPU NVLink and NIC bandwidths; fitted to the published "
                       "all-to-all runs kept in collectives_lib/data/nccl_tests", ""),
}
