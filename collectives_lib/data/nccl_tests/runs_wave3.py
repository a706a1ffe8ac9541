"""Metadata of the runs transcribed in wave 3 (issue 21, item 2); imported by make_runs_csv.py.

Every entry has all columns of runs.csv (see COLS there). Raw text: raw/<run_id>.txt, cut from the
cited file at the cited commit (git show | sed), or typed from the stored text where noted.
"""
GH = "https://github.com/"
CW = GH + "coreweave/nccl-tests/blob/"
AZ = GH + "Azure/AI-benchmarking-guide/blob/"
WB = GH + "waynehacking8/nccl-collectives-bench/blob/38c093eda275208e175abd3969c14e1316fe50e6/results/"
OCI = GH + "oracle-quickstart/oci-gpu-quickstarts/blob/6a0abdc78b574b28eb10926387615c8414ed8c1d/nvidia/"
DR = GH + "kubernetes-sigs/dranet/blob/f258477cbea0551b7ad239e3873a997a7a3d116b/"
CT = GH + "GoogleCloudPlatform/cluster-toolkit/blob/"
CTH = CT + "1047080375afbb44da4b596be314634e7486af4a/examples/"
AUTODL = (GH + "Anthony-Hoo/Anthony-Hoo.github.io/blob/37e805e8e56f839f6557756d76503d45af6ab47e/"
          "posts/AutoDL_Multi-GPU_Interconnection_Test.md")

NVL3 = "NVLink3 (12 links, 600 GB/s bidir) + NVSwitch gen2"
NVL4 = "NVLink4 (18 links, 900 GB/s bidir) + NVSwitch gen3 (NVLS capable)"
NVL5 = "NVLink5 (18 links, 1.8 TB/s bidir) + NVSwitch gen4 (NVLS capable)"

# ---------------------------------------------------------------- CoreWeave A100 (README history)
CW_A100 = dict(collective="all_reduce", gpu="A100-SXM4-80GB (CoreWeave HGX A100, region LAS1)", gpus_per_node=8,
               launch="process-per-gpu", nics_per_node="", nic_gbps="", fabric="infiniband", dtype="float",
               gpu_model="A100-SXM4-80GB", healthy="unknown",
               health_evidence="none: vendor example log in 'Running NCCL Tests', not labelled as expected performance")
WAVE3 = [
 dict(CW_A100, run_id="a100x8-16node-ib-allreduce-coreweave-2022", num_nodes=16,
      interconnect="NVLink3+NVSwitch intra; InfiniBand between nodes (NCCL_IB_HCA=ibp; HCA count and speed not stated)",
      nccl_version="", settings="NCCL_SOCKET_IFNAME=eth0;NCCL_IB_HCA=ibp; -w 50 -n 50",
      env="NCCL_SOCKET_IFNAME=eth0;NCCL_IB_HCA=ibp",
      command="mpirun -np 128 -x LD_LIBRARY_PATH -x NCCL_SOCKET_IFNAME=eth0 -x NCCL_IB_HCA=ibp /opt/nccl_tests/build/all_reduce_perf -b 4 -e 2G -f 2 -g 1 -w 50 -n 50 (nccl-test-distributed-128-las1-mpijob.yaml at the same commit: 16 workers x 8 GPUs, image coreweave/nccl-tests:2022-07-05_09-54-20.051_EDT, CUDA 11.6.2, HPC-X 2.11)",
      source_url=CW + "22df9b7f289ce65f5d0ad3d4167a413561163742/README.md (Initial Commit, section 'Running NCCL Tests'; replaced by a SHARP run in 703d6eb)",
      date="2022-07-05",
      note="Old nccl-tests layout: no root column, 'error' instead of #wrong. The vendor elided the 128-rank device list after rank 4 ('...'). 128 ranks confirmed (busbw/algbw=1.984). Peak 45.4 GB/s busbw at 1 GiB, about a quarter of what 8x200G HDR A100 nodes reach (194 GB/s, crusoe-a100x8-2node-ib-allreduce-dstack); small sizes 58 us at 4 B."),
 dict(CW_A100, run_id="a100x8-4node-ib-sharp-allreduce-coreweave-2022", num_nodes=4,
      interconnect="NVLink3+NVSwitch intra; InfiniBand with SHARP (NCCL_COLLNET_ENABLE=1, NCCL SHARP plugin; HCA count and speed not stated)",
      nccl_version="", settings="NCCL_COLLNET_ENABLE=1;NCCL_SOCKET_IFNAME=ens81f0np0;NCCL_IB_HCA=ibp; -w 1 -n 10 (job file)",
      env="NCCL_COLLNET_ENABLE=1;NCCL_SOCKET_IFNAME=ens81f0np0;NCCL_IB_HCA=ibp",
      command="mpirun -np 64 ... /opt/nccl_tests/build/all_reduce_perf -b 4 -e 8G -f 2 -g 1 -w 1 -n 10 (nccl-test-distributed-64-sharp-las1-mpijob.yaml at the same commit; image coreweave/nccl-tests:2022-09-28_16-34-19.392_EDT)",
      source_url=CW + "703d6eb1433c983855df00a5fe3b2fd699923ab9/README.md (commit 'Add SHARP Example'; the table is unchanged up to a0cb1a6, replaced in 5a79e81)",
      date="2022-09-30",
      note="RANK COUNT: busbw/algbw = 1.9375 on every row => 32 ranks (4 nodes x 8), not the -np 64 of the job file; the '# nThread ... minBytes 4 maxBytes 2147483648' header is left over from the earlier 128-rank log while the table runs 8 B..8 GiB (edited snippet). Two SHARP (libsharp) INFO lines kept. Old layout ('error' column). Peak 115.6 GB/s at 8 GiB."),
 dict(CW_A100, run_id="a100x8-4node-ib-sharp-allreduce-coreweave-2023", num_nodes=4,
      interconnect="NVLink3+NVSwitch intra; InfiniBand with SHARP (job file: 4 UCX devices ibp0..ibp3)",
      nccl_version="2.14.3 (image tag ...nccl2.14.3-1-45d6ec9 in the job file at that commit; not printed)",
      settings="NCCL_COLLNET_ENABLE=1;NCCL_SOCKET_IFNAME=eth0;NCCL_IB_HCA=ibp;UCX_NET_DEVICES=ibp0:1,ibp1:1,ibp2:1,ibp3:1; -w 1 -n 10 (job file)",
      env="NCCL_COLLNET_ENABLE=1;NCCL_SOCKET_IFNAME=eth0;NCCL_IB_HCA=ibp",
      command="mpirun -np 64 -bind-to none ... /opt/nccl_tests/build/all_reduce_perf -b 8 -e 8G -f 2 -g 1 -w 1 -n 10 (nccl-test-distributed-64-sharp-las1-mpijob.yaml at the same commit)",
      source_url=CW + "5a79e816097c153e1d72fb6ca188dedc14aa5ca0/README.md (commit 'Clean up stale MPIJobs'; replaced by the H100 SHARP run in fb4787c)",
      date="2023-02-01",
      note="Only 512 MiB..8 GiB shown. 32 ranks (busbw/algbw = 1.9375), again not the job file's -np 64; header and SHARP lines are those of the 2022 snippet. Peak 159.8 GB/s at 8 GiB, 38% above the 2022 SHARP run on the same 32 ranks."),
 # ---------------------------------------------------------------- Azure AI-benchmarking-guide
 dict(run_id="azure-ndh100v5-h100x8-allreduce-nvls-busbw-only", collective="all_reduce",
      gpu="H100 80GB HBM3 (Azure ND H100 v5)", gpus_per_node=8, num_nodes=1, interconnect=NVL4, nccl_version="2.18.5",
      settings="NCCL_ALGO=NVLS; in-place busbw only",
      command="NCCL_ALGO=NVLS ./build/all_reduce_perf -b 8 -e 8G -f 2 -g 8 -n 40 (Benchmarks/NCCLBandwidth.py at 5751982e78cb4b47f50f279b64f806e45a40f098 runs Tree, Ring, NVLS and NVLSTree and keeps column 12, in-place busbw)",
      source_url=AZ + "ae0b6a7f47caee92985aafc546faf30e9d4a3ca7/Azure_Results/ND_H100_v5_results.md (section 'NCCL Bandwidth')",
      date="2024-09-24", healthy="yes",
      note="Vendor reference: only in-place busbw per size (no time, no algbw). Size labels are loose ('65K', '132K', '33M'); rows are 1024*2^i bytes. Peak 478.9 GB/s at 8 GiB = NVIDIA's ~480 GB/s NVLS expectation.",
      launch="gpus-per-process=8", nics_per_node="", nic_gbps="", fabric="nvlink-only", env="NCCL_ALGO=NVLS",
      dtype="float", gpu_model="H100-SXM5",
      health_evidence="Microsoft Azure publishes it as the ND H100 v5 benchmark result"),
 dict(run_id="azure-ndh200v5-h200x8-allreduce-nvls-busbw-only", collective="all_reduce",
      gpu="H200 141GB (Azure ND H200 v5)", gpus_per_node=8, num_nodes=1, interconnect=NVL4, nccl_version="2.20.5",
      settings="NCCL_ALGO=NVLS; in-place busbw only",
      command="NCCL_ALGO=NVLS ./build/all_reduce_perf -b 8 -e 8G -f 2 -g 8 -n 40 (Benchmarks/NCCLBandwidth.py at 5751982e78cb4b47f50f279b64f806e45a40f098)",
      source_url=AZ + "7f20e5fa3b2f9a46d8404af1f6fb14b049d6d5cc/Azure_Results/ND_H200_v5_results.md (section 'NCCL Bandwidth')",
      date="2024-09-24", healthy="yes",
      note="Vendor reference, in-place busbw only, loose size labels as in the H100 v5 page. Peak 480.0 GB/s at 8 GiB, within 0.3% of ND H100 v5: H200 has the same NVLink4 and NVSwitch.",
      launch="gpus-per-process=8", nics_per_node="", nic_gbps="", fabric="nvlink-only", env="NCCL_ALGO=NVLS",
      dtype="float", gpu_model="H200",
      health_evidence="Microsoft Azure publishes it as the ND H200 v5 benchmark result"),
 dict(run_id="azure-ndgb200v6-gb200x4-allreduce-ring-busbw-only", collective="all_reduce",
      gpu="GB200 185GB (Azure ND GB200 v6, one 4-GPU tray)", gpus_per_node=4, num_nodes=1,
      interconnect="NVLink5 within one compute tray (rack NVLink switches); no other tray in the run",
      nccl_version="2.25.1", settings="NCCL_ALGO=Ring (page: 'NCCL AllReduce (Ring algorithm)'); in-place busbw only",
      command="NCCL_ALGO=Ring all_reduce_perf on the host's 4 GPUs in one process (Azure, issue #7: the benchmark 'will run single process of all_reduce_perf on that number of GPUs')",
      source_url=GH + "samuel-bohman/AI-benchmarking-guide/blob/154d35c0239faf7f354093705d571864179478a5/Azure_Results/ND_GB200_v6_results.md (a fork: the stored copy of Azure/AI-benchmarking-guide predates the GB200 page, which Azure/AI-benchmarking-guide issue #7 links at main)",
      date="2025-03", healthy="yes",
      note="Typed from the stored text. In-place busbw only, loose size labels. Peak 679.6 GB/s at 8 GiB with Ring on 4 GPUs. In Azure/AI-benchmarking-guide#7 a user asks why it is far below 900 GB/s; Azure (avnf) answers that it is one host's 4 GPUs in one process and asks what nvloom reports, without calling the number abnormal.",
      launch="gpus-per-process=4", nics_per_node="", nic_gbps="", fabric="nvlink-only", env="NCCL_ALGO=Ring",
      dtype="float", gpu_model="GB200",
      health_evidence="Microsoft Azure publishes it as the ND GB200 v6 result; Azure's avnf explains it in issue #7 (single host, 4 GPUs) without calling it low"),
]

# ---------------------------------------------------------------- nccl-collectives-bench (2, 4, 6 of 8 H100)
WBR = dict(collective="all_reduce", gpu="H100 80GB HBM3 SXM5 (HGX 8-GPU host, shared; pytorch:26.02 container)",
           num_nodes=1, nccl_version="2.29.2 (nccl-library=22902; nccl-tests 2.18.3)", date="2026-06-02",
           healthy="unknown", launch="", nics_per_node="", nic_gbps="", fabric="nvlink-only", dtype="float",
           gpu_model="H100-SXM5",
           health_evidence="none: personal benchmark on a shared host (other tenants on GPUs outside the slice, other_tenants.csv)")
#: The arms of the two reports below transcribed in wave 5 (runs.csv marks them added=wave5).
WAVE5_ARMS = {"h100x2of8-auto-allreduce-ncclcollbench", "h100x4of8-auto-allreduce-ncclcollbench",
              "h100x4of8-ring-allreduce-ncclcollbench", "h100x6of8-nvls-allreduce-ncclcollbench",
              "h100x4of8-small-allreduce-symmetric-cudagraph-ncclcollbench"}
SCALING = "scaling_attributed/report.md: 9 arms, -g 2/4/6 x {auto, NCCL_ALGO=Ring, NCCL_ALGO=NVLS}, host GPUs 2..7"
for rid, g, algo, peak in [("h100x2of8-ring-allreduce-ncclcollbench", 2, "Ring", "348 GB/s busbw (= algbw at 2 ranks)"),
                           ("h100x2of8-nvls-allreduce-ncclcollbench", 2, "NVLS", "207 GB/s, 40% below Ring on 2 GPUs ('a disaster', the author)"),
                           ("h100x4of8-nvls-allreduce-ncclcollbench", 4, "NVLS", "376 GB/s, 3% above the tuner's Ring choice at 4 GPUs"),
                           ("h100x6of8-ring-allreduce-ncclcollbench", 6, "Ring", "367 GB/s"),
                           ("h100x6of8-auto-allreduce-ncclcollbench", 6, None, "443 GB/s; the tuner picks NVLS at 6 GPUs (TUNING lines)"),
                           # wave 5 (WAVE5_ARMS): the other four arms of the same report (byte-identical to the files at 38c093e)
                           ("h100x2of8-auto-allreduce-ncclcollbench", 2, None, "the tuner picks Ring at 2 GPUs (TUNING lines)"),
                           ("h100x4of8-auto-allreduce-ncclcollbench", 4, None, "the tuner picks Ring at 4 GPUs (TUNING lines)"),
                           ("h100x4of8-ring-allreduce-ncclcollbench", 4, "Ring", "Ring forced, the same choice as the tuner's"),
                           ("h100x6of8-nvls-allreduce-ncclcollbench", 6, "NVLS", "NVLS forced, the same choice as the tuner's")]:
    env = "NCCL_DEBUG=INFO;NCCL_DEBUG_SUBSYS=INIT,TUNING" + (f";NCCL_ALGO={algo}" if algo else "")
    WAVE3.append(dict(WBR, run_id=rid, gpus_per_node=g, added="wave5" if rid in WAVE5_ARMS else "wave3",
                      interconnect=NVL4 + f"; {g} of the 8 GPUs participate",
                      settings=env + "; -w 5 -n 50", env=env, launch=f"gpus-per-process={g}",
                      command=f"{'NCCL_ALGO=' + algo + ' ' if algo else ''}all_reduce_perf -b 256M -e 8G -f 2 -w 5 -n 50 -g {g} (scripts/run_scaling_attributed.sh)",
                      source_url=WB + f"scaling_attributed/g{g}_{algo or 'auto'}.log ({SCALING})",
                      note=f"Full log with NCCL INFO (INIT,TUNING) lines: the tuner's per-size choice is in the raw text. Only 256 MiB..8 GiB. Peak {peak}."))
SYM = "symmetric/report.md: NCCL 2.29.2 on host GPUs 2..5, arms -R 0/2 x -G 0/1"
for rid, f, extra, env_note, peak in [
        ("h100x4of8-small-allreduce-ncclcollbench", "all_reduce_reg0_graph0.txt", "-R 0 -G 0", "", "eager launch floor 23.5-25 us below 2 KB"),
        ("h100x4of8-small-allreduce-cudagraph-ncclcollbench", "all_reduce_reg0_graph1.txt", "-R 0 -G 1",
         "CUDA Graph capture (-G 1)", "floor ~16 us with CUDA Graph capture, ~8 us below eager"),
        ("h100x4of8-small-allreduce-symmetric-ncclcollbench", "all_reduce_reg2_graph0.txt", "-R 2 -G 0",
         "symmetric (window) buffer registration (-R 2)", "eager floor 23.6 us; 4 MiB in 25.6 us vs 43.4 us unregistered"),
        ("h100x4of8-small-allreduce-symmetric-cudagraph-ncclcollbench", "all_reduce_reg2_graph1.txt", "-R 2 -G 1",
         "symmetric (window) buffer registration and CUDA Graph capture (-R 2 -G 1)",
         "floor 19.7 us, above the 16.3 us of CUDA Graph without registration (the report's table)")]:
    WAVE3.append(dict(WBR, run_id=rid, gpus_per_node=4, interconnect=NVL4 + "; 4 of the 8 GPUs participate",
                      added="wave5" if rid in WAVE5_ARMS else "wave3",
                      settings=(env_note + "; " if env_note else "") + f"{extra} -w 5 -n 50", env="",
                      launch="gpus-per-process=4",
                      command=f"all_reduce_perf -b 8 -e 16M -f 2 -g 4 -w 5 -n 50 {extra} (scripts/run_symmetric_sweep.sh)",
                      source_url=WB + f"symmetric/{f} ({SYM})",
                      note=f"Small-message sweep 8 B..16 MiB. {peak}."))

# ---------------------------------------------------------------- Oracle OCI quick starts (vendor baselines)
GB300_CMD = ("mpirun --bind-to numa --mca pml ucx --mca coll ^hcoll -x NCCL_MNNVL_ENABLE=1 -x NCCL_CUMEM_ENABLE=1 "
             "-x NCCL_NVLS_ENABLE=1 -x NCCL_MNNVLS_ENABLE=1 ... --np xxx --hostfile ./yyy <test>_perf -b 512K -e 16G -f 2 -g 1 -n 50 "
             "(the README's 'All tests run as follows' block, kept at the top of the raw file)")
GB300_ENV = ("NCCL_DEBUG=WARN;NCCL_MNNVL_ENABLE=1;NCCL_CUMEM_ENABLE=1;NCCL_IB_HCA==mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_5,mlx5_6,mlx5_7,mlx5_8;"
             "NCCL_NET_PLUGIN=.../nccl_rdma_sharp_plugin/lib/libnccl-net.so.0;NCCL_NVLS_ENABLE=1;NCCL_SOCKET_IFNAME=eth0;NCCL_IB_GID_INDEX=3;"
             "NCCL_IB_TC=41;NCCL_IB_SL=0;NCCL_IB_TIMEOUT=22;NCCL_BUFFSIZE=16777216;NCCL_IB_QPS_PER_CONNECTION=4;NCCL_IB_SPLIT_DATA_ON_QPS=0;"
             "NCCL_NET_GDR_C2C=1;NCCL_MNNVLS_ENABLE=1;NCCL_DMABUF_ENABLE=1")
GB300 = dict(gpu="GB300 (OCI BM.GPU.GB300.4; rank lines print 'NVIDIA GB300')", gpus_per_node=4, nccl_version="2.28.7",
             settings="the README's common mpirun block (env column); only the two largest sizes published",
             command=GB300_CMD, date="2026-03-03", healthy="yes", launch="process-per-gpu", nics_per_node="8",
             nic_gbps="400", env=GB300_ENV, dtype="float", gpu_model="GB300",
             health_evidence="Oracle publishes it under 'Performance Benchmarks' of the shape's quick start")
for rid, coll, nodes, fab, where, peak in [
        ("gb300x4-tray-allreduce-oci", "all_reduce", 1, "nvlink-only", "NCCL All Reduce Scale Performance Single Node", "685 GB/s at 16 GiB"),
        ("gb300-nvl72-2tray-mnnvl-allreduce-oci", "all_reduce", 2, "mnnvl", "NCCL All Reduce Scale Performance 2 Nodes on a Single Rack", "842 GB/s at 16 GiB (NVLS across 2 trays)"),
        ("gb300-nvl72-16tray-mnnvl-allreduce-oci", "all_reduce", 16, "mnnvl", "NCCL All Reduce Scale Performance Multi-node 1 Rack - 16 nodes", "930.6 GB/s at 16 GiB, above CoreWeave's full GB200 rack (847)"),
        ("gb300-nvl72-2rack-allreduce-oci", "all_reduce", 32, "mnnvl+roce", "NCCL All Reduce Scale Performance Multi-node 2 Racks - 32 nodes", "740 GB/s at 16 GiB across 2 racks (16 trays each)"),
        ("gb300x4-tray-alltoall-oci", "alltoall", 1, "nvlink-only", "NCCL All-to-All Single Node", "628 GB/s out-of-place, 681 in-place"),
        ("gb300-nvl72-2tray-mnnvl-alltoall-oci", "alltoall", 2, "mnnvl", "NCCL All to All Scale Performance 2 Hosts Single Rack", "685 GB/s"),
        ("gb300-nvl72-16tray-mnnvl-alltoall-oci", "alltoall", 16, "mnnvl", "NCCL All to All Scale Performance 16 Hosts 1 Rack", "667 GB/s"),
        ("gb300-nvl72-2rack-alltoall-oci", "alltoall", 32, "mnnvl+roce", "NCCL All to All Scale Performance 32 Hosts 2 Racks", "47.7 GB/s: across racks all-to-all runs at one 400G NIC's rate (~48 GB/s)")]:
    ic = ("NVLink5 within one tray" if nodes == 1 else
          f"NVLink5 multi-node NVLink across {nodes} trays of one NVL72 rack" if nodes <= 18 else
          "NVLink5 MNNVL within each rack (16 trays per rack used); RoCE 8 x 400 Gb/s per tray between racks")
    WAVE3.append(dict(GB300, run_id=rid, collective=coll, num_nodes=nodes, interconnect=ic, fabric=fab,
                      source_url=OCI + f"GB300/README-GB300.md ({where})",
                      note=f"Vendor table with only 8 GiB and 16 GiB ('# Truncated smaller message sizes'). {nodes * 4} ranks confirmed by busbw/algbw. Peak {peak}."))
GB200 = dict(gpu="GB200 (OCI BM.GPU.GB200.4)", gpus_per_node=4, nccl_version="", date="2026-03-03", healthy="yes",
             launch="process-per-gpu", dtype="float", gpu_model="GB200",
             health_evidence="Oracle publishes it under 'Performance Benchmarks' as the shape's baseline")
GB200_2N_ENV = ("NCCL_DEBUG=WARN;NCCL_MNNVL_ENABLE=1;NCCL_CUMEM_ENABLE=1;NCCL_NET_PLUGIN=/opt/hpcx-v2.21.2-gcc-doca_ofed-ubuntu22.04-cuda12-aarch64/nccl_rdma_sharp_plugin/lib/libnccl-net.so.0;"
                "NCCL_IB_HCA==mlx5_0,mlx5_1,mlx5_3,mlx5_4;NCCL_WORK_FIFO_BYTES=0;NCCL_NVLS_ENABLE=1;NCCL_NET_GDR_C2C=1;NCCL_SOCKET_IFNAME=eth0;NCCL_P2P_NET_CHUNKSIZE=524288")
RANKS_16 = ("RANK COUNT: busbw/algbw = 1.96875 on both rows => 64 ranks (16 trays), not the 8 ranks of the section title "
            "('2 Nodes on a Single Rack') and of its --np 8 command, which the raw file keeps; num_nodes set to 16 from this check. ")
for rid, coll, nodes, where, peak, cmd in [
        ("gb200-nvl72-16tray-mnnvl-allreduce-oci", "all_reduce", 16, "NCCL All Reduce Scale Performance 2 Nodes on a Single Rack", "895.5 GB/s in-place at 8 GiB", True),
        ("gb200-nvl72-2rack-allreduce-oci", "all_reduce", 32, "NCCL All Reduce Scale Performance Multi-node 2 Racks - 32 nodes", "799.8 GB/s at 8 GiB", False),
        ("gb200-nvl72-3rack-allreduce-oci", "all_reduce", 48, "NCCL All Reduce Scale Performance Multi-node 3 Racks - 48 nodes", "748.9 GB/s at 8 GiB", False),
        ("gb200-nvl72-2tray-mnnvl-alltoall-oci", "alltoall", 2, "NCCL All to All Scale Performance 2 Hosts Single Rack", "662 GB/s at 16 GiB", True),
        ("gb200-nvl72-16tray-mnnvl-alltoall-oci", "alltoall", 16, "NCCL All to All Scale Performance 16 Hosts 1 Rack", "623 GB/s at 8 GiB", False),
        ("gb200-nvl72-2rack-alltoall-oci", "alltoall", 32, "NCCL All to All Scale Performance 32 Hosts 2 Racks", "89.7 GB/s at 8 GiB: cross-rack all-to-all is network-bound", False),
        ("gb200-nvl72-3rack-alltoall-oci", "alltoall", 48, "NCCL All to All Scale Performance 48 Hosts 3 Racks", "62.5 GB/s at 8 GiB", False)]:
    ic = (f"NVLink5 multi-node NVLink across {nodes} trays of one NVL72 rack" if nodes <= 18 else
          f"NVLink5 MNNVL within each rack (16 trays per rack used, {nodes // 16} racks); InfiniBand between racks")
    WAVE3.append(dict(GB200, run_id=rid, collective=coll, num_nodes=nodes, interconnect=ic,
                      fabric="mnnvl" if nodes <= 18 else "mnnvl+infiniband",
                      nics_per_node="4", nic_gbps="400",
                      settings=("the 2-node command's env (env column)" if cmd else "not stated for this run") + "; only two sizes published",
                      env=GB200_2N_ENV if cmd else "",
                      nccl_version="2.27.3" if coll == "all_reduce" else "",
                      command=(f"mpirun --bind-to none --mca coll ^hcoll --np 8 ... /opt/oci-hpc/nccl-test/build/{coll}_perf -b 512K -e 8G -f 2 -g 1 -n 50 (the section's 'Execution' block, kept in the raw file)"
                               if cmd else f"not shown ({nodes * 4} ranks)"),
                      source_url=OCI + f"GB200/README-GB200.md ({where})",
                      note=(RANKS_16 if rid == "gb200-nvl72-16tray-mnnvl-allreduce-oci" else "") + f"HAND-EDITED vendor table as in gb200x4-tray-*-oci: two rows, re-spaced columns, misprinted counts (107374124 for 4 GiB; 2147483648 for 8 GiB in the alltoall 2-host table). {nodes * 4} ranks confirmed by busbw/algbw. NICs: 4 HCAs in the 2-node command's NCCL_IB_HCA, InfiniBand 4 x 400 Gb/s per tray in the shape table (BM.GPU.GB200.4 / -v2.4). Peak {peak}."))
B300 = dict(gpu="B300 SXM6 AC (OCI BM.GPU.B300.8)", gpus_per_node=8, nccl_version="2.28.9", date="2026-04-09",
            healthy="yes", dtype="float", gpu_model="B300", env="",
            health_evidence="Oracle publishes it under 'Performance Benchmarks' ('the most useful for cluster planning')")
for rid, coll, nodes, where, launch, cmd, peak in [
        ("b300x8-allreduce-oci", "all_reduce", 1, "All Reduce - Single Node", "gpus-per-process=8",
         "/opt/oci-hpc/nccl-tests/build/all_reduce_perf -b 512k -e 8G -f 2 -g 8 (after hpcx-init.sh; kept in the raw file)", "835 GB/s at 8 GiB (NVLS)"),
        ("b300x8-2node-roce-allreduce-oci", "all_reduce", 2, "All Reduce - 2 Nodes", "", "not shown", "768 GB/s at 16 GiB"),
        ("b300x8-alltoall-oci", "alltoall", 1, "All-to-All - Single Node", "gpus-per-process=8", "not shown (header: nGpus 8)", "676 GB/s at 8 GiB"),
        ("b300x8-2node-roce-alltoall-oci", "alltoall", 2, "All-to-All - 2 Nodes", "process-per-gpu", "not shown (header: nGpus 1, 16 ranks)", "181 GB/s at 8 GiB")]:
    WAVE3.append(dict(B300, run_id=rid, collective=coll, num_nodes=nodes, launch=launch, command=cmd,
                      interconnect=NVL5 + ("" if nodes == 1 else "; RoCE 8 x 2 x 400 Gb/s = 6.4 Tb/s per node (shape table)"),
                      nics_per_node="" if nodes == 1 else "16", nic_gbps="" if nodes == 1 else "400",
                      fabric="nvlink-only" if nodes == 1 else "roce", settings="defaults as far as shown; only the largest sizes published",
                      source_url=OCI + f"B300/README-B300.md ({where})",
                      note=f"Vendor table, one or two rows ('<smaller message sizes truncated>'). {nodes * 8} ranks confirmed by busbw/algbw. No rank lines published. Peak {peak}."))

# ---------------------------------------------------------------- Kubernetes DRA network driver (dranet) docs
DRN = dict(num_nodes=2, gpus_per_node=1, healthy="unknown", dtype="float", launch="process-per-gpu", fabric="roce",
           health_evidence="none: docs example about attaching NICs to pods ('They now connect!'), no performance claim")
WAVE3 += [
 dict(DRN, run_id="b200x2of8-allgather-dranet", collective="all_gather", num_nodes=1, gpus_per_node=2,
      gpu="B200 (GKE A4, 2 of 8 GPUs given to a pod by NVIDIA's DRA driver)", interconnect=NVL5 + "; 2 of the 8 GPUs",
      nccl_version="2.26.6", settings="gIB image defaults (set_nccl_env.sh); warmup 50, iters 100", env="(gIB defaults, not listed)",
      command="/usr/local/gib/scripts/run_nccl_tests.sh -t all_gather -b 1K -e 8G nccl-gib-test-0 -g 2 (2 processes, header nGpus 1)",
      source_url=DR + "site/content/docs/user/nvidia-dranet.md (first run, 'It works on the single pod')", date="2025-06-20",
      fabric="nvlink-only", nics_per_node="", nic_gbps="", gpu_model="B200",
      note="The poster elided the rows below 64 MiB ('...'). 2 ranks: all_gather busbw = algbw/2. Out-of-place 482.7 GB/s busbw (965 algbw) at 8 GiB, in-place 564 GB/s: in-place all_gather on 2 GPUs moves half the data of out-of-place."),
 dict(DRN, run_id="b200x1-2node-roce-allgather-dranet", collective="all_gather",
      gpu="B200 (GKE A4, one GPU per pod, two pods on two nodes)", interconnect="one GPU per node; RoCE (gIB) NICs given to each pod by DRANET (the pod's claim holds 2 GPUs and 2 NICs on one PCIe root; the test runs -g 1)",
      nccl_version="2.26.6", settings="gIB image defaults; -n 100 -w 50", env="(gIB defaults, not listed)",
      command="kubectl exec nccl-gib-test-0 -it -- /usr/local/gib/scripts/run_nccl_tests.sh -t all_gather -b 8 -e 1G -f 2 -g 1 -n 100 -w 50 nccl-gib-test-0.nccl-gib-test nccl-gib-test-1.nccl-gib-test",
      source_url=DR + "site/content/docs/user/nvidia-dranet.md (section 'Nvidia DRA + DRANET')", date="2025-06-20",
      nics_per_node="2", nic_gbps="400", gpu_model="B200",
      note="2 ranks on 2 nodes, full small-size sweep 8 B..1 GiB (first rows size 0). Floor 14.2 us; out-of-place 36.7 GB/s busbw at 1 GiB, in-place 45.1 (one 400G NIC is ~48 GB/s)."),
 dict(DRN, run_id="h200x1-2node-roce-allgather-dranet", collective="all_gather",
      gpu="H200 (GKE RDMA node pool, one GPU per pod, two pods on two nodes)",
      interconnect="one GPU per node; one RDMA NIC per pod claimed through DRANET (gpu6rdma0/gpu3rdma0 in the README)",
      nccl_version="2.25.1", settings="gIB image defaults; warmup 50, iters 100", env="(gIB defaults, not listed)",
      command="kubectl exec nccl-gib-test-0 -it -- /usr/local/gib/scripts/run_nccl_tests.sh -t all_gather -b 1K -g 1 -e 8G nccl-gib-test-0.nccl-gib-test nccl-gib-test-1.nccl-gib-test",
      source_url=DR + "examples/demo_gke_rdma/README.md (section 'Run the tests')", date="2026-04-21",
      nics_per_node="1", nic_gbps="400", gpu_model="H200",
      note="The README calls the node pool 'A4Mega' but the rank lines print H200 (GCP's H200 machine is a3-ultragpu-8g). 2 ranks: all_gather busbw = algbw/2. Floor 21 us; 32.2 GB/s busbw (64.4 algbw) at 8 GiB."),
 dict(DRN, run_id="h200x1-2node-roce-allreduce-dranet", collective="all_reduce",
      gpu="H200 (GKE, one GPU and one RDMA NIC per MPI worker)", interconnect="one GPU per node; one RDMA NIC (mlx5_2, RoCE) per worker, claimed through DRANET",
      nccl_version="", settings="source /usr/local/gib/scripts/set_nccl_env.sh; -w 5 -n 20", env="(gIB set_nccl_env.sh, not listed)",
      command="mpirun --allow-run-as-root --prefix /opt/openmpi -np 2 -bind-to none -map-by slot -mca routed direct -x LD_LIBRARY_PATH=/usr/local/nvidia/lib64 bash -c 'source /usr/local/gib/scripts/set_nccl_env.sh; /usr/local/bin/all_reduce_perf -g 1 -b 1K -e 8G -f 2 -w 5 -n 20;'",
      source_url=DR + "site/content/docs/user/mpi-operator.md (section 'Example: Running NCCL Tests')", date="2025-05-27",
      nics_per_node="1", nic_gbps="400", gpu_model="H200",
      note="Open MPI openib warnings kept (not nccl-tests output). 2 ranks on 2 nodes: all_reduce busbw = algbw. 31.9 GB/s at 8 GiB, two thirds of one 400G NIC; a jump from 20.8 to 29.8 GB/s between 32 and 64 MiB."),
]

# ---------------------------------------------------------------- dstack docs (history)
WAVE3 += [
 dict(run_id="crusoe-a100x8-2node-ib-allreduce-dstack", collective="all_reduce", gpu="A100-SXM4-80GB (Crusoe VM, cloud-hypervisor)",
      gpus_per_node=8, num_nodes=2, interconnect=NVL3 + " intra; 8 InfiniBand HCAs per node (mlx5_1..mlx5_8; speed not stated)",
      nccl_version="", settings="HPC-X 2.21.3 (hpcx_load); Crusoe topology file; IB settings in env",
      env="NCCL_SOCKET_NTHREADS=4;NCCL_NSOCKS_PERTHREAD=8;NCCL_TOPO_FILE=/etc/crusoe/nccl_topo/a100-80gb-sxm-ib-cloud-hypervisor.xml;NCCL_IB_MERGE_VFS=0;NCCL_IB_AR_THRESHOLD=0;NCCL_IB_PCI_RELAXED_ORDERING=1;NCCL_IB_SPLIT_DATA_ON_QPS=0;NCCL_IB_QPS_PER_CONNECTION=2;NCCL_IB_HCA=mlx5_1:1,mlx5_2:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_7:1,mlx5_8:1",
      command="mpirun --allow-run-as-root --hostfile $DSTACK_MPI_HOSTFILE -n $DSTACK_GPUS_NUM -N $DSTACK_GPUS_PER_NODE --bind-to none -mca btl tcp,self -mca coll_hcoll_enable 0 ... /opt/nccl-tests/build/all_reduce_perf -b 8 -e 2G -f 2 -t 1 -g 1 -c 1 -n 100 (the VMs task, kept in the raw file)",
      source_url=GH + "dstackai/dstack/blob/107fefef52821c544abe1755d9379fe9ed54a96c/examples/clusters/crusoe/README.md (section 'NCCL tests'; removed from the README in 1ee8cd0)",
      date="2026-02-12", healthy="unknown",
      note="Table printed without the leading '#'. 16 ranks (factor 1.875). Peak 194 GB/s busbw at 2 GiB, close to 8 x 200 Gb/s HDR (8 x 25 GB/s) if these are HDR NICs; a 262 KiB outlier (193 us out-of-place).",
      launch="process-per-gpu", nics_per_node="8", nic_gbps="", fabric="infiniband", dtype="float", gpu_model="A100-SXM4-80GB",
      health_evidence="none: tool-vendor docs example"),
 dict(run_id="gcp-a3high-h100x8-2node-tcpx-allgather-dstack", collective="all_gather", gpu="H100 80GB (GCP a3-highgpu-8g)",
      gpus_per_node=8, num_nodes=2, interconnect="NVLink4+NVSwitch intra; GPUDirect-TCPX over 4 x 200 Gb/s data NICs per VM (1000 Gb/s VM maximum)",
      nccl_version="", settings="dstack's GPUDirect-TCPX setup (RXDM container, TCPX plugin); -c 0 (validation off), iters 200",
      env="(TCPX plugin env set by dstack, not listed)",
      command="dstack apply -f examples/misc/a3high-clusters/nccl-tests.dstack.yml (all_gather_perf 8M..8G, header: validation 0, iters 200)",
      source_url=GH + "dstackai/dstack/blob/120ef058dcfb30f8e3dabeaa067fae7d6e13ef76/examples/clusters/a3high/README.md (section 'Run NCCL Tests with GPUDirect-TCPX support'; removed in 7f97339)",
      date="2025-11-25", healthy="unknown",
      note="Header and table without leading '#'. 16 ranks (factor 0.9375). Plateau 50 GB/s busbw from 128 MiB: 4 x 200 Gb/s = 100 GB/s of NICs per node.",
      launch="process-per-gpu", nics_per_node="4", nic_gbps="200", fabric="tcpx", dtype="float", gpu_model="H100-SXM5",
      health_evidence="none: tool-vendor docs example"),
]

# ---------------------------------------------------------------- Google Cloud cluster-toolkit examples
GKE = dict(collective="all_gather", gpus_per_node=8, num_nodes=2, nccl_version="", dtype="float", launch="process-per-gpu")
WAVE3 += [
 dict(GKE, run_id="gke-a3mega-h100x8-2node-tcpxo-allgather-clustertoolkit", gpu="H100 80GB (GKE a3-megagpu-8g)",
      interconnect="NVLink4+NVSwitch intra; GPUDirect-TCPXO 8 x 200 Gb/s per node",
      settings="the blueprint's TCPXO NCCL plugin and /scripts/allgather.sh defaults", env="(TCPXO plugin env, not listed)",
      command="kubectl exec nccl-test-host-1 -c nccl-test -- /scripts/allgather.sh nccl-host-1 nccl-host-2",
      source_url=CTH + "gke-a3-megagpu/README.md (step 5, 'Run the benchmark', Example Output)", date="2026-04-16",
      healthy="unknown", note="Markdown list indentation (4 spaces) removed. 16 ranks (factor 0.9375); sizes 0..8 GiB (first five rows size 0). Floor 85 us; 188.7 GB/s busbw at 8 GiB, as dstack's a3-mega run (188.5).",
      nics_per_node="8", nic_gbps="200", fabric="tcpxo", gpu_model="H100-SXM5",
      health_evidence="none: Google's 'Example Output', no performance claim"),
 dict(GKE, run_id="gke-a3high-h100x8-2node-tcpx-allgather-clustertoolkit", gpu="H100 80GB (GKE a3-highgpu-8g)",
      interconnect="NVLink4+NVSwitch intra; GPUDirect-TCPX 4 x 200 Gb/s per node",
      settings="NCCL_P2P_PXN_LEVEL=0 (INFO line); validation off (#wrong N/A)", env="NCCL_P2P_PXN_LEVEL=0",
      command="kubectl exec -t nccl-test-host-1 -c nccl-test -- /scripts/allgather.sh nccl-host-1 nccl-host-2",
      source_url=CTH + "gke-a3-highgpu/multi-node-test-plan.md (Step 4, 'Verify Results', Example Output)", date="2026-04-03",
      healthy="unknown", note="Markdown list indentation removed. Only 1 MiB..512 MiB. 16 ranks (factor 0.9375). Floor ~1 ms (TCPX); 71 GB/s busbw at 512 MiB, above dstack's 50 GB/s on the same machine type (whose sweep is flat from 128 MiB).",
      nics_per_node="4", nic_gbps="200", fabric="tcpx", gpu_model="H100-SXM5",
      health_evidence="Google: 'Look for the busbw column to ensure TCPX networking and the secondary NICs are successfully scaling' (no number given)"),
 dict(GKE, run_id="gke-a3ultra-h200x8-2node-roce-allgather-clustertoolkit", gpu="H200 (GKE a3-ultragpu-8g, DWS flex-start)",
      interconnect=NVL4 + " intra; 8 x 400 Gb/s RoCE (ConnectX-7, gIB NCCL plugin) per node",
      settings="gIB defaults of the nccl-jobset-example.yaml", env="(gIB defaults, not listed)",
      command="kubectl create -f .../dws-flex-start/nccl-jobset-example.yaml; kubectl logs ag-2-fz9fs-w-0-0-kkd5t",
      source_url=CT + "8b70b1036d2807b6f3fa2a31fe21b7329cf8e4ae/examples/gke-consumption-options/dws-flex-start/README.md (the output 'should be similar to the following')",
      date="2025-05-09", healthy="yes",
      note="Markdown list indentation removed. 16 ranks (factor 0.9375), 1 KiB..8 GiB. Floor 54 us; 328.9 GB/s busbw out-of-place, 335.7 in-place at 8 GiB. Google's daily test for GKE A3 Ultra (test-gke-a3-ultra.yml) asks for an average bus bandwidth >= 100 GB/s; this log averages 120.2.",
      nics_per_node="8", nic_gbps="400", fabric="roce", gpu_model="H200",
      health_evidence="Google: 'The output should be similar to the following'"),
 dict(GKE, run_id="gke-a4-b200x8-2node-roce-allgather-clustertoolkit", gpu="B200 (GKE a4-highgpu-8g)",
      interconnect=NVL5 + " intra; 8 x 400 Gb/s RoCE (ConnectX-7, gIB NCCL plugin) per node",
      settings="gIB defaults of the nccl-jobset-example.yaml", env="(gIB defaults, not listed)",
      command="kubectl create -f ~/cluster-toolkit/examples/gke-a4/nccl-jobset-example.yaml; kubectl logs ag-2-jnftb-w-0-0-8wrqq",
      source_url=CT + "f0a39c768f7ea8e2c16c741decee7bf31c6de55f/examples/gke-a4/README.md (the output 'should be similar to the following'; the example moved in 0288e1ac9)",
      date="2025-03-27", healthy="yes",
      note="Markdown list indentation removed. 16 ranks (factor 0.9375), 1 KiB..8 GiB. Floor 35-39 us; 366.3 GB/s busbw out-of-place, 374.6 in-place at 8 GiB: 40% above dranet's 260 GB/s all_gather on the same machine type (b200x8-2node-gib-allgather-dranet).",
      nics_per_node="8", nic_gbps="400", fabric="roce", gpu_model="B200",
      health_evidence="Google: 'The output should be similar to the following'"),
]

# ---------------------------------------------------------------- AWS p5en (awsome-distributed-training)
WAVE3.append(dict(
    run_id="p5en-h200x8-16node-efa-allreduce-awsome", collective="all_reduce", gpu="H200 (AWS p5en.48xlarge)",
    gpus_per_node=8, num_nodes=16, interconnect=NVL4 + " intra; EFA 16 x 200 Gb/s per node (3.2 Tb/s)", nccl_version="",
    settings="the recipe's EFA defaults (aws-ofi-nccl; not printed)", env="(aws-ofi-nccl defaults, not listed)",
    command="sbatch nccl-tests-container.sbatch / nccl-tests-ami.sbatch (slurm/topology-aware-nccl-tests; all_reduce_perf -b 8 -e 16G)",
    source_url=GH + "aws-samples/awsome-distributed-training/blob/7217859f67bc693c52ff175ccc6082c41dbd7a1b/micro-benchmarks/nccl-tests/slurm/topology-aware-nccl-tests/README.md (section 'Performance Output Format')",
    date="2025-09-07", healthy="unknown",
    note="Three rows only (8 B, 16 B, 16 GiB; the rest elided '...' by AWS). busbw/algbw = 1.9843 => 128 ranks = 16 nodes, as in the README's file-name example nccl_16_ami_allreduce_...; 369.9 GB/s at 16 GiB. The 8-byte out-of-place row (983 us) is a first-call outlier; in-place 166 us.",
    launch="process-per-gpu", nics_per_node="16", nic_gbps="200", fabric="efa", dtype="float", gpu_model="H200",
    health_evidence="none: AWS shows it as the output format, not as expected performance"))

# ---------------------------------------------------------------- 2x RTX 2080 Ti over PCIe without P2P (blog post in a GitHub repo)
PCIE = dict(gpu="GeForce RTX 2080 Ti 11GB (AutoDL container, Beijing A zone)", gpus_per_node=2, num_nodes=1,
            interconnect="PCIe Gen3 x16 through one PCIe switch (nvidia-smi topo -m: PIX); GPU P2P not supported (topo -p2p: NS)",
            nccl_version="", settings="defaults; CUDA 12.4, driver 550.90.07", env="", source_url=AUTODL + " (section 'nccl-tests')",
            date="2025-06-05", launch="gpus-per-process=2", nics_per_node="", nic_gbps="", fabric="pcie", dtype="float",
            gpu_model="RTX-2080Ti")
POOR = ("the poster: no NVLink and 'P2P communication is unavailable for driver reasons, so multi-GPU interconnect "
        "performance is poor'; their table calls all_reduce 'limited by PCIe' (cause: GPU P2P not supported, NS)")
for rid, coll, healthy, peak in [
        ("rtx2080tix2-pcie-allreduce-autodl", "all_reduce", "no", "4.00 GB/s busbw from 128 MiB"),
        ("rtx2080tix2-pcie-allgather-autodl", "all_gather", "no", "3.8 GB/s busbw (7.6 algbw)"),
        ("rtx2080tix2-pcie-broadcast-autodl", "broadcast", "unknown", "11.1 GB/s: the poster puts it at 69% of the PCIe one-way peak"),
        ("rtx2080tix2-pcie-reduce-autodl", "reduce", "unknown", "11.1 GB/s: the poster puts it at 70% of the PCIe one-way peak"),
        ("rtx2080tix2-pcie-alltoall-autodl", "alltoall", "no", "4.6 GB/s busbw (9.2 algbw)")]:
    WAVE3.append(dict(PCIE, run_id=rid, collective=coll, healthy=healthy,
                      command=f"./build/{coll}_perf -b 8 -e 1024M -f 2 -g2",
                      note=("Typed from the stored text (shell prompt removed). 2 GPUs in one process, full sweep 8 B..1 GiB; "
                            f"floor 10-13 us. Peak {peak}. p2pBandwidthLatencyTest in the same post: 5.7 GB/s one-way between the GPUs, 14.8 us."),
                      health_evidence=POOR if healthy == "no" else
                      "the poster: close to the PCIe one-way peak (69-70%), in a post that finds the interconnect poor because GPU P2P is unavailable"))

# ---------------------------------------------------------------- MOC (Mass Open Cloud) RoCE tests on RHEL AI, raw logs in a repository
MOC = GH + "CCI-MOC/roce-testing/blob/24e67d1710d81d0d9a2b6ebb7689edad88af8750/RHELAI/3_nccl_tests/"
MOCR = dict(gpu="H100 80GB HBM3 (MOC RHEL AI nodes, 4 GPUs per node)", num_nodes=2, nccl_version="2.26.2",
            date="2025-04-02", healthy="no", nics_per_node="1", nic_gbps="400", fabric="roce", dtype="float",
            gpu_model="H100-SXM5", env="NCCL_ALGO=RING;NCCL_IB_HCA=mlx5_5;NCCL_IB_GID_INDEX=3;NCCL_IB_DISABLE=0;NCCL_SOCKET_IFNAME=eno7np0",
            settings="env from the log's 'set by environment' lines; -b 1024M -e 26656M -i 2048M (2 GiB steps)")
GDR = ("the README: 'Largest possible bandwidth value: 400 Gbps', 'Largest observed ... for 1 GPU per node: 15.49 GB/s = 123.92 Gbps'; "
       "the log shows no GPUDirect RDMA (channels 'via NET/IB/1' without GDRDMA{}), a cause the poster does not name")
WAVE3 += [
 dict(MOCR, run_id="h100x1-2node-roce-sendrecv-nogdr-moc", collective="sendrecv", gpus_per_node=1, launch="process-per-gpu",
      interconnect="one GPU per node (device 0); one 400 Gb/s RoCE NIC (mlx5_5, NCCL_IB_HCA) per node",
      command="NCCL_ALGO=RING mpirun -np 2 -host localhost,$ROCE_REMOTE_IP ./build/sendrecv_perf -b 1024M -e 26656M -i 2048M -g 1 (README; the log is the full stdout+stderr)",
      source_url=MOC + "logs/sendrecv_roce_1gpu.log (README.md of the same folder for the command and the 400 Gbps expectation)",
      note="Full log with NCCL INFO lines (algorithm table, channel set-up). 2 ranks; sendrecv busbw = algbw. 13.96 GB/s flat from 1 GiB to 25 GiB, 29% of one 400G NIC. #wrong N/A in-place.",
      health_evidence=GDR.format("")),
 dict(MOCR, run_id="h100x1-2node-roce-allreduce-nogdr-moc", collective="all_reduce", gpus_per_node=1, launch="process-per-gpu",
      interconnect="one GPU per node (device 0); one 400 Gb/s RoCE NIC (mlx5_5, NCCL_IB_HCA) per node",
      command="NCCL_ALGO=RING mpirun -np 2 ... ./build/all_reduce_perf -b 1024M -e 26656M -i 2048M -g 1 (as the README's sendrecv command)",
      source_url=MOC + "logs/all_reduce_roce_1gpu.log (README.md of the same folder)",
      note="Full log with NCCL INFO lines, including 'Connected all rings, use ring PXN 0 GDR 0'. 2 ranks: all_reduce busbw = algbw. 15.0-15.2 GB/s from 1 GiB to 25 GiB.",
      health_evidence=GDR.format("; 'use ring PXN 0 GDR 0'")),
 dict(MOCR, run_id="h100x4-2node-roce-sendrecv-1nic-moc", collective="sendrecv", gpus_per_node=4, launch="gpus-per-process=4",
      interconnect="4 H100 per node (NVLink between them, P2P/direct pointer); the nodes joined by one 400 Gb/s RoCE NIC each (NCCL_IB_HCA=mlx5_5)",
      command="NCCL_ALGO=RING mpirun -np 2 -host localhost,$ROCE_REMOTE_IP ./build/sendrecv_perf -b 1024M -e 26656M -i 2048M -g 4 (README)",
      source_url=MOC + "logs/sendrecv_roce_4gpu.log (README.md of the same folder)",
      note="Full log with NCCL INFO lines: the two cross-node pairs (3->4, 7->0) go 'via NET/IB/1(2)/GDRDMA/Shared' through the one NIC, the others over NVLink. 8 ranks, sendrecv busbw = algbw. 5.84 GB/s, 42% of the 1-GPU-per-node run on the same NIC.",
      health_evidence="the README: 'Largest observed average bandwidth value for 4 GPUs per node: 5.84 GB/s = 46.72 Gbps', 'Increasing the number of GPUs per node ends up reducing the network performance' (cause in the log: 4 GPUs share one NIC, mlx5_5)"),
]
