#!/usr/bin/env python3
"""Writes runs.csv (metadata for every transcribed run). Edit the RUNS list, then run
`python3 make_runs_csv.py && python3 convert.py`."""
import csv
import os
HERE = os.path.dirname(os.path.abspath(__file__))
COLS = ["run_id","collective","gpu","gpus_per_node","num_nodes","interconnect","nccl_version",
        "settings","command","source_url","date","healthy","note",
        # structured columns (wave 3): how the run was launched and on what
        "launch","nics_per_node","nic_gbps","fabric","env","dtype","gpu_model","health_evidence","added"]
# launch: process-per-gpu, or gpus-per-process=<g> (nccl-tests -g g, one process driving g GPUs);
#   empty when the post does not show it.  nics_per_node / nic_gbps: scale-out NICs of a node
#   (tray for GB200/GB300) and the rate of one, Gb/s; empty for single-node runs or when not stated.
# fabric: nvlink-only, pcie, infiniband, roce, efa, tcpx, tcpxo, mnnvl (NVLink across trays of an
#   NVL72 rack), mnnvl+infiniband / mnnvl+roce (several racks).  env: the NCCL_* variables the run
#   set, ';'-separated.  health_evidence: who said what about the numbers (or why nobody did).
I309 = "https://github.com/NVIDIA/nccl-tests/issues/309"
I290 = "https://github.com/NVIDIA/nccl-tests/issues/290"
CW = "https://github.com/coreweave/nccl-tests/blob/cb86553328f8c9ed6f9d682971f5f9b17a926ab4/README.md"
DS = "https://github.com/dstackai/dstack/blob/511c318c8a7672fb2a925041bfc2d7301a26272e/mkdocs/docs/examples/clusters/"
AW = "https://github.com/aws-samples/awsome-distributed-training/blob/7217859f67bc693c52ff175ccc6082c41dbd7a1b/micro-benchmarks/nccl-tests/"
OCI = "https://github.com/oracle-quickstart/oci-gpu-quickstarts/blob/6a0abdc78b574b28eb10926387615c8414ed8c1d/nvidia/GB200/README-GB200.md"
WB = "https://github.com/waynehacking8/nccl-collectives-bench/blob/38c093eda275208e175abd3969c14e1316fe50e6/results/"
NVL4 = "NVLink4 (18 links, 900 GB/s bidir) + NVSwitch gen3 (NVLS capable)"
NVL5 = "NVLink5 (1.8 TB/s bidir) + NVSwitch gen4 (NVLS capable)"
RUNS = [
 # ---------------- item 1: 8x H100 single node all_reduce ----------------
 dict(run_id="dgxh100x8-nvls-allreduce-dgxc-bench", collective="all_reduce", gpu="H100 80GB HBM3 (DGX H100)",
      gpus_per_node=8, num_nodes=1, interconnect=NVL4, nccl_version="",
      settings="defaults (NVLS on); -d float -t 1 -g 1 -n 20 -w 5 -R 0 (-c 1 in later testset versions)",
      command="all_reduce_perf -b 8 -e 16G -f 2 -g 1 (one process per GPU, Slurm; nccl-tests build from NVIDIA Nvidia-Comms-Perf-Suite; header shows extra 'side_work/work_sms/direction' fields)",
      source_url="https://github.com/NVIDIA/dgxc-benchmarking/blob/8e77d607c06f8c8603568ba7e49e65f8ff88c1b8/nccl/README.md (unchanged at 841f5466cd86b66abd48049e839c563776f6d716)",
      date="2025-12-04", healthy="yes",
      note="NVIDIA DGX Cloud Benchmarking recipe 'View sample output (AllReduce excerpt)' for DGX H100; container nvcr.io/nvidia/nemo:25.09.00 at that commit (NCCL version not printed). Peak 480 GB/s busbw = NVIDIA's stated NVLS expectation (~480, nccl-tests#212). 8 ranks confirmed by busbw/algbw=1.75."),
 dict(run_id="p5-h100x8-nvls-allreduce-awsbatch", collective="all_reduce", gpu="H100 80GB HBM3 (AWS p5.48xlarge)",
      gpus_per_node=8, num_nodes=1, interconnect=NVL4+"; 32x100G EFA present but unused (single node)", nccl_version="",
      settings="FI_PROVIDER=efa;FI_EFA_USE_DEVICE_RDMA=1;NCCL_BUFFSIZE=8388608;NCCL_P2P_NET_CHUNKSIZE=524288;NCCL_TUNER_PLUGIN=libnccl-ofi-tuner.so; defaults otherwise (NVLS on)",
      command="mpirun -np 8 -N 8 ... /opt/nccl-tests/build/all_reduce_perf -b 8 -e 16G -f 2 -g 1 -c 1 -n 100 (job definition 0.aws-batch-distributed-training-p5.yaml, image public.ecr.aws/hpc-cloud/nccl-tests:latest)",
      source_url=AW+"aws-batch/README.md (first added 0fbac547ef8eada26fd6966ae7d468a06d2e0cf4 as 1.architectures/3.aws-batch/README.md)",
      date="2024-10-30", healthy="yes",
      note="AWS sample 'check the output' for p5 on AWS Batch. Job definition says NumNodes 2 but mpirun uses -np 8 -N 8; busbw/algbw=1.75 confirms 8 ranks (single node). Peak 483 GB/s at 16 GiB, consistent with NVLS expectation. Also quoted as 'one example with p5.48xlarge' in aws/aws-k8s-tester PR #503."),
 dict(run_id="h100x8-nvls-allreduce-issue290", collective="all_reduce", gpu="H100 80GB HBM3",
      gpus_per_node=8, num_nodes=1, interconnect=NVL4, nccl_version="",
      settings="defaults (NVLS on); iters 2 (!)", command="all_reduce_perf -b 128M -e 4G -f 2 -g 8 (inferred from header: nGpus 8, minBytes 134217728, maxBytes 4294967296, iters: 2)",
      source_url=I290+" (issue description)", date="2025-03", healthy="yes",
      note="Maintainer AddyLaddy (2025-03-03): 'The single node run above will be using NVLink and NVLink SHARP ... 476GB/s looks to be in the expected range for H100.' Only 2 timed iterations per size."),
 # ---------------- item 2: 8x H100 other collectives ----------------
 dict(run_id="h100x8-ring-reducescatter-nccl1047", collective="reduce_scatter", gpu="H100 80GB HBM3",
      gpus_per_node=8, num_nodes=1, interconnect=NVL4, nccl_version="",
      settings="NCCL_ALGO=Ring (poster's label 'Reducescatter (H100: ring)')", command="reduce_scatter_perf, 128M..8G (exact command not shown)",
      source_url="https://github.com/NVIDIA/nccl/issues/1047 (issue description)", date="2023-10-31", healthy="unknown",
      note="Partial: 7 rows, last row has only out-of-place columns (transcribed from the search-corpus excerpt of the issue, which ended there). The issue asks why NVLS reduce_scatter is slower than Ring; NVIDIA (sjeaugey, nccl#1083) says that is expected. Ring busbw 362 GB/s matches NVIDIA's ~360-370 GB/s H100 expectation (nccl-tests#212, #326) => likely healthy. busbw/algbw=0.875 => 8 ranks."),
 # ---------------- 4 of 8 H100 (complete sweeps of AG / RS) ----------------
 dict(run_id="h100x4of8-allreduce-ncclcollbench", collective="all_reduce", gpu="H100 80GB HBM3 SXM5 (HGX 8-GPU host, 4 GPUs used)",
      gpus_per_node=4, num_nodes=1, interconnect=NVL4+"; only 4 of the 8 GPUs participate", nccl_version="2.29.2 (nccl-library=22902; nccl-tests 2.18.3)",
      settings="defaults", command="all_reduce_perf -b 8 -e 8G -f 2 -g 4 -n 50 -w 5 (from header)",
      source_url=WB+"all_reduce.txt", date="2026-05-31", healthy="unknown",
      note="Personal benchmark project (README claims 'quiet-box' methodology on a shared host). Only 4 ranks: NCCL picks Ring at 4 GPUs per the author's attribution logs; peak busbw ~365 GB/s. Note README says 'NCCL 2.18.3' but that is the nccl-tests version; library is 2.29.2."),
 dict(run_id="h100x4of8-allgather-ncclcollbench", collective="all_gather", gpu="H100 80GB HBM3 SXM5 (HGX 8-GPU host, 4 GPUs used)",
      gpus_per_node=4, num_nodes=1, interconnect=NVL4+"; only 4 of the 8 GPUs participate", nccl_version="2.29.2 (nccl-library=22902; nccl-tests 2.18.3)",
      settings="defaults", command="all_gather_perf -b 8 -e 8G -f 2 -g 4 -n 50 -w 5 (from header)",
      source_url=WB+"all_gather.txt", date="2026-05-31", healthy="unknown",
      note="4 ranks; busbw factor (n-1)/n=0.75. First three rows are size 0 (size < nranks*4 B)."),
 dict(run_id="h100x4of8-reducescatter-ncclcollbench", collective="reduce_scatter", gpu="H100 80GB HBM3 SXM5 (HGX 8-GPU host, 4 GPUs used)",
      gpus_per_node=4, num_nodes=1, interconnect=NVL4+"; only 4 of the 8 GPUs participate", nccl_version="2.29.2 (nccl-library=22902; nccl-tests 2.18.3)",
      settings="defaults", command="reduce_scatter_perf -b 8 -e 8G -f 2 -g 4 -n 50 -w 5 (from header)",
      source_url=WB+"reduce_scatter.txt", date="2026-05-31", healthy="unknown", note="4 ranks."),
 # ---------------- item 3: 8x A100 ----------------
 dict(run_id="azure-nda100v4-a100x8-allreduce-busbw-only", collective="all_reduce", gpu="A100-SXM4-80GB (Azure ND96amsr_A100_v4)",
      gpus_per_node=8, num_nodes=1, interconnect="NVLink3 + NVSwitch gen2", nccl_version="2.18.5",
      settings="", command="(not given) NCCL AllReduce, in-place, 1K..8G",
      source_url="https://github.com/Azure/AI-benchmarking-guide/blob/3bb66cacc25632d8ece36bc1d5128c5ea886a60b/Azure_Results/ND_A100_v4_results.md",
      date="", healthy="yes",
      note="Vendor (Microsoft Azure) published reference: ONLY in-place busbw per size is published (no time/algbw). Size labels are loose ('65K','132K','33M'); rows mapped to 1024*2^i bytes. The page says 'NVLS algorithm' which cannot apply to A100 (no NVLink SHARP) - a copy/paste label; numbers are ring/tree-era A100 values (231.6 GB/s at 8 GiB)."),
 dict(run_id="p4de-a100x8-2node-efa-allreduce-awsome", collective="all_reduce", gpu="A100-SXM4-80GB (AWS p4de.24xlarge)",
      gpus_per_node=8, num_nodes=2, interconnect="NVLink3+NVSwitch intra; 4x100 Gb/s EFA per node (400 Gb/s)", nccl_version="",
      settings="FI_PROVIDER=efa;FI_EFA_USE_DEVICE_RDMA=1;FI_EFA_FORK_SAFE=1;NCCL_BUFFSIZE=8388608;NCCL_P2P_NET_CHUNKSIZE=524288",
      command="srun ... all_reduce_perf -b 8 -e 2G -f 2 -g 1 -c 1 -n 100 (nccl-tests.sbatch; the run shown stops at 2 GiB)",
      source_url=AW+"README.md (section 'Results'; text first appears in 88c2e71b17895e2d5de10733861888c7faedf2f0)",
      date="2024-04-19", healthy="yes",
      note="AWS: 'the output should look as below'. Container defaults at that commit: NCCL 2.20.3, aws-ofi-nccl 1.8.1, EFA installer 1.31.0 (not printed in the output). Peak 78 GB/s busbw = EFA-limited (400 Gb/s per node). 16 ranks confirmed (factor 1.875)."),
 # ---------------- item 4: H100 multi-node ----------------
 dict(run_id="h100x8-2node-ib-allreduce-issue309-qoofyk", collective="all_reduce", gpu="H100 80GB HBM3 (Dell XE9680 HGX)",
      gpus_per_node=8, num_nodes=2, interconnect="NVLink4+NVSwitch intra; 8x ConnectX-7 400 Gb/s NDR InfiniBand per node", nccl_version="2.26.2",
      settings="NCCL_NET_GDR_LEVEL=1;NCCL_P2P_LEVEL=NVL;NCCL_IB_DISABLE=0;NCCL_IB_GID_INDEX=0;NCCL_IB_HCA=mlx5_0..7; defaults otherwise (NVLSTree)",
      command="mpirun --np 16 -H bm-h100-01:8,bm-h100-02:8 ... all_reduce_perf_mpi -b 8 -e 16g -f 2 -g 1",
      source_url=I309+" (issue description)", date="2025-05-20", healthy="yes",
      note="NVIDIA (kiskra-nvidia, 2025-05-21): 'Your numbers look good to me!'. Also later: 2-node results 'tend to be an aberration (ideal case for TREE)'. Same poster: single node 482.12 GB/s NVLS, and 368.76 GB/s with NCCL_NVLS_ENABLE=0 (numbers only, no tables)."),
 dict(run_id="h100x8-4node-ib-vm-allreduce-issue309-qoofyk", collective="all_reduce", gpu="H100 80GB HBM3 (HGX, VMware VMs)",
      gpus_per_node=8, num_nodes=4, interconnect="NVLink4+NVSwitch intra; 8x ConnectX-7 400 Gb/s NDR InfiniBand per node (virtualized, NCCL_TOPO_FILE)", nccl_version="2.26.2",
      settings="NCCL_TOPO_FILE=vm_topo_mod.xml;NCCL_NET_GDR_LEVEL=1;NCCL_P2P_LEVEL=NVL;NCCL_IB_GID_INDEX=0;NCCL_IB_HCA=mlx5_0..7",
      command="mpirun --np 32 -H spt01:8,spt02:8,pt01:8,pt02:8 ... all_reduce_perf_mpi -b 8 -e 16g -f 2 -g 1",
      source_url=I309+" (comment by qoofyk, 2025-05-23)", date="2025-05-22", healthy="yes",
      note="NVIDIA (kiskra-nvidia, 2025-06-18): 'That's a good number. Multi-node, your IB network will be the limiting factor. With 8 400 Gbps NICs your peak would be at 400 GB/s ... NCCL_MIN_CTAS=24 may get you above 380 GB/s'. Peak 365.8 GB/s."),
 dict(run_id="h100x8-2node-ib-allreduce-issue309-gjaion", collective="all_reduce", gpu="H100 80GB HBM3",
      gpus_per_node=8, num_nodes=2, interconnect="NVLink4+NVSwitch intra; 8x 400 Gb/s InfiniBand per node", nccl_version="",
      settings="defaults", command="mpirun -np 16 -N 8 ... ./build/all_reduce_perf -b 1M -e 8G -f 2 -g 1 (inferred from the 4/8-node commands in the same comment thread)",
      source_url=I309+" (comment by gj-aion, 2025-06-18)", date="2025-06-18", healthy="unknown",
      note="Maintainer reply: 2-node results are an aberration (NVLSTree ideal case); use NCCL_ALGO=Ring to judge the fabric. 466.7 GB/s matches the confirmed-good qoofyk 2-node run (468.5) => likely healthy."),
 dict(run_id="h100x8-4node-ib-allreduce-issue309-gjaion", collective="all_reduce", gpu="H100 80GB HBM3",
      gpus_per_node=8, num_nodes=4, interconnect="NVLink4+NVSwitch intra; 8x 400 Gb/s InfiniBand per node", nccl_version="",
      settings="defaults", command="mpirun -np 32 -N 8 --hostfile /tmp/hosts.txt -x LD_LIBRARY_PATH ./build/all_reduce_perf -b 1M -e 8G -f 2 -g 1",
      source_url=I309+" (comment by gj-aion, 2025-06-18)", date="2025-06-18", healthy="unknown",
      note="No direct verdict; maintainer says ~320 GB/s at 8 nodes is 'possible, depending on your network' and suggests tuning (adaptive routing, NCCL_MIN_CTAS, QPS). 325 GB/s vs qoofyk's 366 GB/s on 4 nodes => probably under-tuned, not broken."),
 dict(run_id="h100x8-8node-ib-allreduce-issue309-gjaion", collective="all_reduce", gpu="H100 80GB HBM3",
      gpus_per_node=8, num_nodes=8, interconnect="NVLink4+NVSwitch intra; 8x 400 Gb/s InfiniBand per node", nccl_version="",
      settings="defaults", command="(not shown; same as the 4-node command with -np 64)",
      source_url=I309+" (comment by gj-aion, 2025-06-18)", date="2025-06-18", healthy="unknown",
      note="Maintainer: 'That's possible, depending on your network'; with tuning the same cluster reaches 391 GB/s (see h100x8-8node-ib-allreduce-minctas24-issue309-gjaion). 64 ranks confirmed (factor 1.96875)."),
 dict(run_id="h100x8-8node-ib-allreduce-minctas24-issue309-gjaion", collective="all_reduce", gpu="H100 80GB HBM3",
      gpus_per_node=8, num_nodes=8, interconnect="NVLink4+NVSwitch intra; 8x 400 Gb/s InfiniBand per node", nccl_version="",
      settings="NCCL_MIN_CTAS=24;NCCL_IB_QPS_PER_CONNECTION=2",
      command="mpirun -np 64 -N 8 --hostfile /tmp/8hosts.txt -x LD_LIBRARY_PATH -x NCCL_MIN_CTAS=24 -x NCCL_IB_QPS_PER_CONNECTION=2 ./build/all_reduce_perf -b 1M -e 8G -f 2 -g 1",
      source_url=I309+" (comment by gj-aion, 2025-06-18)", date="2025-06-18", healthy="unknown",
      note="Tuning suggested by NVIDIA; result 391 GB/s is close to the 400 GB/s IB limit NVIDIA quoted => likely healthy (tuned)."),
 dict(run_id="h100x8-2node-ib-allreduce-ring-minctas24-issue309-gjaion", collective="all_reduce", gpu="H100 80GB HBM3",
      gpus_per_node=8, num_nodes=2, interconnect="NVLink4+NVSwitch intra; 8x 400 Gb/s InfiniBand per node", nccl_version="",
      settings="NCCL_ALGO=Ring;NCCL_MIN_CTAS=24;NCCL_IB_QPS_PER_CONNECTION=2",
      command="mpirun -np 16 -N 8 --hostfile /tmp/2hosts.txt -x LD_LIBRARY_PATH -x NCCL_ALGO=Ring -x NCCL_MIN_CTAS=24 -x NCCL_IB_QPS_PER_CONNECTION=2 ./build/all_reduce_perf -b 1M -e 8G -f 2 -g 1",
      source_url=I309+" (comment by gj-aion, 2025-06-18)", date="2025-06-18", healthy="unknown",
      note="Ring forced as NVIDIA recommends for 2-node fabric checks; 392.7 GB/s = 'sub 400 GB/s, which is the IB limit of our network' (poster) => likely healthy."),
 dict(run_id="h100x8-2node-ib-allreduce-issue290", collective="all_reduce", gpu="H100 80GB HBM3",
      gpus_per_node=8, num_nodes=2, interconnect="NVLink4+NVSwitch intra; 8x ConnectX-7 400 Gb/s NDR InfiniBand (Quantum-2) per node", nccl_version="",
      settings="NCCL_SOCKET_IFNAME=eth0;UCX_NET_DEVICES=mlx5_*; defaults otherwise; -c 0 (validation off, #wrong=N/A); iters 200",
      command="srun all_reduce_perf -b 8M -e 8G -f 2 -g 1 (inferred from header)",
      source_url=I290+" (issue description)", date="2025-03", healthy="no",
      note="Issue is about multi-node performance degradation. 155 GB/s busbw on 2 nodes vs ~467 GB/s on other healthy 2-node NDR H100 systems (#309, Nebius); no resolution in thread."),
 dict(run_id="h100x8-2node-ib-allreduce-ring-issue290", collective="all_reduce", gpu="H100 80GB HBM3",
      gpus_per_node=8, num_nodes=2, interconnect="NVLink4+NVSwitch intra; 8x ConnectX-7 400 Gb/s NDR InfiniBand (Quantum-2) per node", nccl_version="",
      settings="NCCL_ALGO=RING;NCCL_IB_AR_THRESHOLD=0;NCCL_IB_PCI_RELAXED_ORDERING=1;NCCL_IB_SPLIT_DATA_ON_QPS=0;NCCL_IB_QPS_PER_CONNECTION=2;CUDA_DEVICE_ORDER=PCI_BUS_ID;NCCL_IB_HCA=mlx5_0,2,3,4,5,7,8,9;NCCL_IGNORE_CPU_AFFINITY=1; -c 0",
      command="(not shown; same binary as the issue description, 8M..8G)",
      source_url=I290+" (comment by shahizat, 2025-03-04)", date="2025-03-04", healthy="no",
      note="89.9 GB/s busbw with Ring on 2 nodes; a healthy 8x NDR node pair reaches ~390 (#309 gj-aion ring). algbw plateaus at ~48 GB/s = one NIC, suggesting only one NIC effectively used. Poster asked if correct; no answer in the stored thread."),
 dict(run_id="h100x8-12node-ib-sharp-allreduce-coreweave", collective="all_reduce", gpu="H100 80GB HBM3 (CoreWeave HGX H100)",
      gpus_per_node=8, num_nodes=12, interconnect="NVLink4+NVSwitch intra; 8x 400 Gb/s NDR InfiniBand per node with IB SHARP (CollNet)", nccl_version="2.18.1 (image tag nccl2.18.1-1 in the referenced job at that commit; not printed)",
      settings="NCCL_ALGO=COLLNETCHAIN;NCCL_COLLNET_ENABLE=1;NCCL_IB_HCA=ibp;SHARP_COLL_ENABLE_PCI_RELAXED_ORDERING=1;NCCL_IB_PCI_RELAXED_ORDERING=0",
      command="mpirun -np <N> ... /opt/nccl_tests/build/all_reduce_perf -b 512M -e 8G -f 2 -g 1 (cf. mpi-operator/nccl-test-distributed-h100-64-sharp-las1-mpijob.yaml at fb4787cc)",
      source_url=CW+" (section 'Running Jobs'; added in fb4787ccc6a9bb7d0cadc133bac7f6f7e8d35408)", date="2023-06-15", healthy="unknown",
      note="Vendor example log excerpt (not labelled as expected performance). The pasted '# nThread ... minBytes 4 maxBytes 2147483648' header line does not match the 512M..8G table (edited snippet). RANK COUNT: busbw/algbw = 1.9792 on every row => 96 ranks (12 nodes x 8), NOT the 64 ranks (-np 64) of the job file the README points to; num_nodes set to 12 from this check. Peak 386.6 GB/s."),
 dict(run_id="nebius-h100x8-2node-ib-allreduce-dstack", collective="all_reduce", gpu="H100 (Nebius gpu-h100-sxm)",
      gpus_per_node=8, num_nodes=2, interconnect="NVLink4+NVSwitch intra; InfiniBand 8x400 Gb/s per node (Nebius GPU cluster)", nccl_version="",
      settings="NCCL_DEBUG=INFO; defaults", command="mpirun --hostfile $DSTACK_MPI_HOSTFILE -n 16 -N 8 --bind-to none /opt/nccl-tests/build/all_reduce_perf -b 8 -e 8G -f 2 -g 1",
      source_url=DS+"nebius.md (earlier at examples/clusters/nebius/README.md)", date="2026-02-12", healthy="unknown",
      note="Tool-vendor (dstack) documentation example. 467.5 GB/s peak equals the NVIDIA-confirmed 2-node NDR result in nccl-tests#309 (468.5) => likely healthy. 16 ranks (factor 1.875)."),
 dict(run_id="p5-h100x8-2node-efa-allreduce-awsome", collective="all_reduce", gpu="H100 80GB HBM3 (AWS p5.48xlarge)",
      gpus_per_node=8, num_nodes=2, interconnect="NVLink4+NVSwitch intra; 32x100 Gb/s EFA per node (3.2 Tb/s)", nccl_version="",
      settings="FI_PROVIDER=efa;FI_EFA_USE_DEVICE_RDMA=1;FI_EFA_FORK_SAFE=1;NCCL_BUFFSIZE=8388608;NCCL_P2P_NET_CHUNKSIZE=524288",
      command="srun -u -l --container-image ... --mpi=pmix --cpu-bind=none all_reduce_perf -b 8 -e 16G -f 2 -g 1 -c 1 -n 100 (nccl-tests.sbatch)",
      source_url=AW+"README.md (section 'Results'; first appears in 88c2e71b17895e2d5de10733861888c7faedf2f0)", date="2024-04-19", healthy="yes",
      note="AWS: 'the output should look as below'. Container defaults at that commit: NCCL 2.20.3, aws-ofi-nccl 1.8.1 (not printed). 487 GB/s at 16 GiB on 2 nodes (NVLSTree-style 2-node aberration, cf. #309). 16 ranks (factor 1.875)."),
 # ---------------- item 5: GB200 / B200 ----------------
 dict(run_id="gb200-nvl72-1rack-allreduce-coreweave", collective="all_reduce", gpu="GB200 (NVL72; printed as 'NVIDIA Graphics Device')",
      gpus_per_node=4, num_nodes=18, interconnect="NVLink5 multi-node NVLink (NVL72 rack, 18 trays x 4 GPU); Quantum-X800 IB for scale-out", nccl_version="2.26.2",
      settings="per CoreWeave example scripts at that commit: NCCL_NVLS_ENABLE=0;NCCL_COLLNET_ENABLE=0;NCCL_NET_GDR_C2C=1;NCCL_IB_HCA=ibp (not confirmed for the README run)",
      command="all_reduce_perf -b 512M -e 8G -f 2 -g 1 (slurm/nccl-test-distributed-gb200-nvl72-enroot.slurm), 72 ranks",
      source_url=CW+" (section 'Expected Performance' > GB200 > Single Rack; added in bee97e71ff87d859aa9db4f5e7e3eaaa00733159)", date="2025-05-05", healthy="yes",
      note="Vendor-published expected performance. Only 5 sizes (512M..8G). 72 ranks confirmed (busbw/algbw=1.9722). Peak 846.8 GB/s (in-place, 8 GiB)."),
 dict(run_id="gb200-nvl72-2rack-allreduce-coreweave", collective="all_reduce", gpu="GB200 (NVL72 x2)",
      gpus_per_node=4, num_nodes=36, interconnect="NVLink5 MNNVL within each NVL72 rack; Quantum-X800 InfiniBand between racks", nccl_version="2.26.2",
      settings="see gb200-nvl72-1rack-allreduce-coreweave (not stated for this run)", command="all_reduce_perf -b 512M -e 16G -f 2 -g 1 (inferred), 144 ranks",
      source_url=CW+" (Expected Performance > GB200 > 2 Racks)", date="2025-05-05", healthy="yes",
      note="Vendor-published expected performance; 144 ranks confirmed (factor 1.9861). Peak 820 GB/s at 16 GiB."),
 dict(run_id="gb200-nvl72-20rack-allreduce-coreweave", collective="all_reduce", gpu="GB200 (NVL72 x20)",
      gpus_per_node=4, num_nodes=360, interconnect="NVLink5 MNNVL within each NVL72 rack; Quantum-X800 InfiniBand between racks", nccl_version="2.26.2",
      settings="see gb200-nvl72-1rack-allreduce-coreweave (not stated for this run)", command="all_reduce_perf -b 512M -e 16G -f 2 -g 1 (inferred), 1440 ranks",
      source_url=CW+" (Expected Performance > GB200 > 20 Racks)", date="2025-05-05", healthy="yes",
      note="Vendor-published expected performance; 1440 ranks confirmed (factor 1.9986). Last rank line prints 'NVIDIA GB200'. Peak 405.7 GB/s at 16 GiB (still rising)."),
 dict(run_id="gb200x4-tray-nvls-allreduce-oci", collective="all_reduce", gpu="GB200 (OCI BM.GPU.GB200, one 4-GPU compute tray)",
      gpus_per_node=4, num_nodes=1, interconnect="NVLink5 (within one tray of an NVL72 rack)", nccl_version="",
      settings="defaults", command="./build/all_reduce_perf -b 8 -e 8G -f 2 -g 4 (as written; header shows minBytes 524288 and nGpus 1)",
      source_url=OCI+" (NCCL All Reduce Scale Performance Single Node)", date="2026-03-03", healthy="yes",
      note="Vendor (Oracle) baseline numbers. HAND-EDITED TABLE: only 2 rows ('Truncated smaller message sizes'), columns re-spaced, the 4 GiB count is misprinted (107374124; should be 1073741824) and the header's nGpus/minBytes disagree with the stated command. 4 ranks confirmed by busbw/algbw=1.5."),
 dict(run_id="gb200x4-tray-alltoall-oci", collective="alltoall", gpu="GB200 (OCI BM.GPU.GB200, one 4-GPU compute tray)",
      gpus_per_node=4, num_nodes=1, interconnect="NVLink5 (within one tray of an NVL72 rack)", nccl_version="",
      settings="defaults", command="./build/alltoall_perf -b 512k -e 8G -f 2 -g 4",
      source_url=OCI+" (NCCL All-to-All Single Node)", date="2026-03-03", healthy="yes",
      note="Vendor baseline; HAND-EDITED 2-row table with misprinted counts (printed 107374124 and 2147483648 for 4 GiB / 8 GiB; nccl-tests would print 268435456 / 536870912 for float with 4 ranks). 4 ranks confirmed by busbw/algbw=0.75. Out-of-place vs in-place differ by ~9%."),
 dict(run_id="gcp-a4-b200x8-2node-roce-allreduce-dstack", collective="all_reduce", gpu="B200 (GCP a4-highgpu-8g)",
      gpus_per_node=8, num_nodes=2, interconnect="NVLink5+NVSwitch intra; 8x 400 Gb/s RoCE (CX-7, 3.2 Tb/s) per node", nccl_version="",
      settings="", command="dstack apply -f nccl-tests.dstack.yml (all_reduce_perf -b 8 -e 8G -f 2 -g 1; the log shown starts at 8 MiB)",
      source_url=DS+"gcp.md (tab 'A4')", date="2025-12-16", healthy="unknown",
      note="Tool-vendor docs example; table header printed without leading '#'. 16 ranks (factor 1.875). Peak 683.5 GB/s at 8 GiB."),
 dict(run_id="lambda-b200x8-2node-ib-allreduce-dstack", collective="all_reduce", gpu="B200 (Lambda 1-Click Cluster)",
      gpus_per_node=8, num_nodes=2, interconnect="NVLink5+NVSwitch intra; InfiniBand (8x 400 Gb/s per node assumed; NCCL_IB_HCA=^mlx5_0)", nccl_version="2.26.2 (nccl-library=22602; nccl-tests 2.17.6)",
      settings="NCCL_IB_HCA=^mlx5_0", command="mpirun --hostfile $DSTACK_MPI_HOSTFILE -n 16 -N 8 --bind-to none -x NCCL_IB_HCA=^mlx5_0 /opt/nccl-tests/build/all_reduce_perf -b 8 -e 2G -f 2 -t 1 -g 1 -c 1 -n 100",
      source_url=DS+"lambda.md (earlier at examples/clusters/lambda/README.md)", date="2025-12-22", healthy="unknown",
      note="Tool-vendor docs example; stops at 2 GiB (702.9 GB/s in-place, still rising). 16 ranks (factor 1.875). NIC count/speed not stated in the doc."),
 dict(run_id="b200x8-2node-gib-allgather-dranet", collective="all_gather", gpu="B200 (GKE A4, a4-highgpu-8g)",
      gpus_per_node=8, num_nodes=2, interconnect="NVLink5+NVSwitch intra; 8x 400 Gb/s RoCE (gIB NCCL plugin) per node", nccl_version="2.26.6",
      settings="GKE gIB defaults (source /usr/local/gib/scripts/set_nccl_env.sh); warmup 50, iters 100",
      command="kubectl exec -it nccl-gib-test-0 -- /usr/local/gib/scripts/run_nccl_tests.sh -t all_gather -b 1K -e 8G nccl-gib-test-0.nccl-gib-test nccl-gib-test-1.nccl-gib-test",
      source_url="https://github.com/kubernetes-sigs/dranet/blob/f258477cbea0551b7ad239e3873a997a7a3d116b/site/content/docs/user/gke-rdma.md (2 workers x 8 GPUs/8 NICs)",
      date="2025-06-12", healthy="unknown",
      note="DraNet (Kubernetes DRA network driver) docs example. 260 GB/s busbw on 2x8 B200 is ~2/3 of the ~390 GB/s 8x400G ring limit seen for H100 all_reduce ring (#309) - the doc does not claim it is optimal. 16 ranks (factor 0.9375)."),
 # ---------------- item 6: other ----------------
 dict(run_id="gcp-a3mega-h100x8-2node-tcpxo-allreduce-ztan", collective="all_reduce", gpu="H100 80GB HBM3 (GCP a3-megagpu-8g)",
      gpus_per_node=8, num_nodes=2, interconnect="NVLink4+NVSwitch intra; GPUDirect-TCPXO 8x 200 Gb/s (1.6 Tb/s data) per node", nccl_version="",
      settings="${HOST_VARS} (TCPXO/FasTrak env, not listed)",
      command="mpirun -v --mca btl self,tcp --mca btl_tcp_if_include enp0s12 --hostfile ~/hostfile -np 16 -npernode 8 -x ${HOST_VARS} /opt/src/nccl-tests/build/all_reduce_perf -b 8 -e 8G -f 2 -g 1",
      source_url="https://github.com/lessizzmore/create-a3mega-ztan-fork/blob/02dd8f455c43ced1cf442ef29334bda97149264b/ztan-NCCL-test-result",
      date="", healthy="unknown", note="Personal fork of a GCP A3 Mega cluster recipe. Peak 338.8 GB/s at 8 GiB; 16 ranks (factor 1.875)."),
 dict(run_id="gcp-a3mega-h100x8-2node-tcpxo-allgather-dstack", collective="all_gather", gpu="H100 80GB (GCP a3-megagpu-8g)",
      gpus_per_node=8, num_nodes=2, interconnect="NVLink4+NVSwitch intra; GPUDirect-TCPXO 8x 200 Gb/s per node", nccl_version="",
      settings="source /var/lib/tcpxo/lib64/nccl-env-profile-ll128.sh;NCCL_FASTRAK_CTRL_DEV=enp0s12;NCCL_FASTRAK_IFNAME=8 NICs;NCCL_SOCKET_IFNAME=enp0s12; -c 0 (validation off)",
      command="mpirun -n 16 -N 8 --mca btl tcp,self ... ./all_gather_perf -b 8M -e 8G -f 2 -g 1 -w 5 --iters 200 -c 0",
      source_url=DS+"gcp.md (tab 'A3 Mega')", date="2025-12-16", healthy="unknown",
      note="Tool-vendor docs example; #wrong = N/A (validation off). 188.5 GB/s busbw; 16 ranks (factor 0.9375)."),
]

H100 = "H100-SXM5"
NVL8 = dict(launch="process-per-gpu", nics_per_node="8", nic_gbps="400", fabric="infiniband", dtype="float",
            gpu_model=H100)
WAVE2 = {   # the structured columns of the runs transcribed in wave 2
 "dgxh100x8-nvls-allreduce-dgxc-bench": dict(launch="process-per-gpu", fabric="nvlink-only", env="", dtype="float",
     gpu_model=H100, health_evidence="NVIDIA's DGX Cloud recipe shows it as its sample output; 480 GB/s is the ~480 GB/s NVLS peak sjeaugey gives in nccl-tests#212"),
 "p5-h100x8-nvls-allreduce-awsbatch": dict(launch="process-per-gpu", fabric="nvlink-only",
     env="NCCL_BUFFSIZE=8388608;NCCL_P2P_NET_CHUNKSIZE=524288;NCCL_TUNER_PLUGIN=libnccl-ofi-tuner.so", dtype="float",
     gpu_model=H100, health_evidence="AWS sample: 'check the output' (the expected result of the AWS Batch recipe)"),
 "h100x8-nvls-allreduce-issue290": dict(launch="gpus-per-process=8", fabric="nvlink-only", env="", dtype="float",
     gpu_model=H100, health_evidence="AddyLaddy (NVIDIA): '476GB/s looks to be in the expected range for H100'"),
 "h100x8-ring-reducescatter-nccl1047": dict(launch="", fabric="nvlink-only", env="NCCL_ALGO=Ring", dtype="float",
     gpu_model=H100, health_evidence="no verdict on these numbers; 362 GB/s matches the ~360-370 GB/s sjeaugey (NVIDIA) gives for non-NVLS H100 collectives (nccl-tests#212)"),
 "h100x4of8-allreduce-ncclcollbench": dict(launch="gpus-per-process=4", fabric="nvlink-only", env="", dtype="float",
     gpu_model=H100, health_evidence="none: personal benchmark on a shared host"),
 "h100x4of8-allgather-ncclcollbench": dict(launch="gpus-per-process=4", fabric="nvlink-only", env="", dtype="float",
     gpu_model=H100, health_evidence="none: personal benchmark on a shared host"),
 "h100x4of8-reducescatter-ncclcollbench": dict(launch="gpus-per-process=4", fabric="nvlink-only", env="", dtype="float",
     gpu_model=H100, health_evidence="none: personal benchmark on a shared host"),
 "azure-nda100v4-a100x8-allreduce-busbw-only": dict(launch="gpus-per-process=8", fabric="nvlink-only", env="NCCL_ALGO=NVLS",
     dtype="float", gpu_model="A100-SXM4-80GB",
     health_evidence="Microsoft Azure publishes it as the ND A100 v4 reference result (the harness's NCCL_ALGO=NVLS column; A100 has no NVLS)"),
 "p4de-a100x8-2node-efa-allreduce-awsome": dict(launch="process-per-gpu", nics_per_node="4", nic_gbps="100", fabric="efa",
     env="NCCL_BUFFSIZE=8388608;NCCL_P2P_NET_CHUNKSIZE=524288", dtype="float", gpu_model="A100-SXM4-80GB",
     health_evidence="AWS: 'the output should look as below'"),
 "h100x8-2node-ib-allreduce-issue309-qoofyk": dict(NVL8,
     env="NCCL_NET_GDR_LEVEL=1;NCCL_P2P_LEVEL=NVL;NCCL_IB_DISABLE=0;NCCL_IB_GID_INDEX=0;NCCL_IB_HCA=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_7:1",
     health_evidence="kiskra-nvidia (NVIDIA): 'Your numbers look good to me!'"),
 "h100x8-4node-ib-vm-allreduce-issue309-qoofyk": dict(NVL8,
     env="NCCL_TOPO_FILE=/mnt/nfs/vm_topo_mod.xml;NCCL_NET_GDR_LEVEL=1;NCCL_P2P_LEVEL=NVL;NCCL_IB_DISABLE=0;NCCL_IB_GID_INDEX=0;NCCL_IB_HCA=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_7:1",
     health_evidence="kiskra-nvidia (NVIDIA): 'That's a good number. Multi-node, your IB network will be the limiting factor'"),
 "h100x8-2node-ib-allreduce-issue309-gjaion": dict(NVL8, env="",
     health_evidence="no verdict on this run; kiskra-nvidia (NVIDIA) calls 2-node results an aberration (ideal case for NVLSTree); equals the confirmed qoofyk 2-node run"),
 "h100x8-4node-ib-allreduce-issue309-gjaion": dict(NVL8, env="",
     health_evidence="no verdict; kiskra-nvidia (NVIDIA) suggests tuning (NCCL_MIN_CTAS, QPs) for this cluster"),
 "h100x8-8node-ib-allreduce-issue309-gjaion": dict(NVL8, env="",
     health_evidence="kiskra-nvidia (NVIDIA) on ~320 GB/s at 8 nodes: 'That's possible, depending on your network'"),
 "h100x8-8node-ib-allreduce-minctas24-issue309-gjaion": dict(NVL8, env="NCCL_MIN_CTAS=24;NCCL_IB_QPS_PER_CONNECTION=2",
     health_evidence="the tuning NVIDIA suggested; 391 GB/s is close to the 400 GB/s IB limit kiskra-nvidia quoted"),
 "h100x8-2node-ib-allreduce-ring-minctas24-issue309-gjaion": dict(NVL8,
     env="NCCL_ALGO=Ring;NCCL_MIN_CTAS=24;NCCL_IB_QPS_PER_CONNECTION=2",
     health_evidence="gj-aion (poster): 'sub 400 GB/s, which is the IB limit of our network'"),
 "h100x8-2node-ib-allreduce-issue290": dict(NVL8, env="NCCL_SOCKET_IFNAME=eth0",
     health_evidence="the issue is about multi-node degradation: 155 GB/s against ~467 GB/s on healthy 2-node NDR H100 (#309); cause not found in the thread"),
 "h100x8-2node-ib-allreduce-ring-issue290": dict(NVL8,
     env="NCCL_ALGO=RING;NCCL_IB_AR_THRESHOLD=0;NCCL_IB_PCI_RELAXED_ORDERING=1;NCCL_IB_SPLIT_DATA_ON_QPS=0;NCCL_IB_QPS_PER_CONNECTION=2;NCCL_IB_HCA=mlx5_0,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_7,mlx5_8,mlx5_9;NCCL_IGNORE_CPU_AFFINITY=1",
     health_evidence="poster (shahizat) asks whether it is correct, no answer; algbw plateaus at ~48 GB/s = one NIC (suspected cause: traffic on one NIC)"),
 "h100x8-12node-ib-sharp-allreduce-coreweave": dict(NVL8,
     env="NCCL_ALGO=COLLNETCHAIN;NCCL_COLLNET_ENABLE=1;NCCL_IB_HCA=ibp;NCCL_IB_PCI_RELAXED_ORDERING=0",
     health_evidence="none: vendor example log, not labelled as expected performance"),
 "nebius-h100x8-2node-ib-allreduce-dstack": dict(NVL8, env="NCCL_DEBUG=INFO",
     health_evidence="none: tool-vendor docs example; equals NVIDIA-confirmed 2-node NDR runs (#309)"),
 "p5-h100x8-2node-efa-allreduce-awsome": dict(launch="process-per-gpu", nics_per_node="32", nic_gbps="100", fabric="efa",
     env="NCCL_BUFFSIZE=8388608;NCCL_P2P_NET_CHUNKSIZE=524288", dtype="float", gpu_model=H100,
     health_evidence="AWS: 'the output should look as below'"),
 "gb200-nvl72-1rack-allreduce-coreweave": dict(launch="process-per-gpu", fabric="mnnvl", env="", dtype="float",
     gpu_model="GB200", health_evidence="CoreWeave's README lists it under 'Expected Performance'"),
 "gb200-nvl72-2rack-allreduce-coreweave": dict(launch="process-per-gpu", fabric="mnnvl+infiniband", env="", dtype="float",
     gpu_model="GB200", health_evidence="CoreWeave's README lists it under 'Expected Performance'"),
 "gb200-nvl72-20rack-allreduce-coreweave": dict(launch="process-per-gpu", fabric="mnnvl+infiniband", env="", dtype="float",
     gpu_model="GB200", health_evidence="CoreWeave's README lists it under 'Expected Performance'"),
 "gb200x4-tray-nvls-allreduce-oci": dict(launch="gpus-per-process=4", fabric="nvlink-only", env="", dtype="float",
     gpu_model="GB200", health_evidence="Oracle publishes it as the shape's NCCL baseline"),
 "gb200x4-tray-alltoall-oci": dict(launch="gpus-per-process=4", fabric="nvlink-only", env="", dtype="float",
     gpu_model="GB200", health_evidence="Oracle publishes it as the shape's NCCL baseline"),
 "gcp-a4-b200x8-2node-roce-allreduce-dstack": dict(launch="process-per-gpu", nics_per_node="8", nic_gbps="400", fabric="roce",
     env="", dtype="float", gpu_model="B200", health_evidence="none: tool-vendor docs example"),
 "lambda-b200x8-2node-ib-allreduce-dstack": dict(launch="process-per-gpu", nics_per_node="8", nic_gbps="400",
     fabric="infiniband", env="NCCL_IB_HCA=^mlx5_0", dtype="float", gpu_model="B200",
     health_evidence="none: tool-vendor docs example (NIC count and speed assumed, not stated)"),
 "b200x8-2node-gib-allgather-dranet": dict(launch="process-per-gpu", nics_per_node="8", nic_gbps="400", fabric="roce",
     env="(GKE gIB set_nccl_env.sh defaults, not listed)", dtype="float", gpu_model="B200",
     health_evidence="none: docs example; 260 GB/s is below the 366 GB/s Google shows for the same machine type (gke-a4-b200x8-2node-roce-allgather-clustertoolkit)"),
 "gcp-a3mega-h100x8-2node-tcpxo-allreduce-ztan": dict(launch="process-per-gpu", nics_per_node="8", nic_gbps="200",
     fabric="tcpxo", env="(${HOST_VARS}, not listed)", dtype="float", gpu_model=H100,
     health_evidence="none: personal fork of a recipe"),
 "gcp-a3mega-h100x8-2node-tcpxo-allgather-dstack": dict(launch="process-per-gpu", nics_per_node="8", nic_gbps="200",
     fabric="tcpxo", env="NCCL_FASTRAK_CTRL_DEV=enp0s12;NCCL_FASTRAK_IFNAME=enp6s0,enp7s0,enp13s0,enp14s0,enp134s0,enp135s0,enp141s0,enp142s0;NCCL_SOCKET_IFNAME=enp0s12;NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY=/dev/aperture_devices (plus nccl-env-profile-ll128.sh)",
     dtype="float", gpu_model=H100, health_evidence="none: tool-vendor docs example; equals Google's own a3-mega example (gke-a3mega-h100x8-2node-tcpxo-allgather-clustertoolkit)"),
}
for r in RUNS:
    r.update(WAVE2[r["run_id"]], added="wave2")
from runs_wave3 import WAVE3   # noqa: E402  (the runs transcribed in wave 3, with every column)
RUNS += [dict(r, added=r.get("added", "wave3")) for r in WAVE3]
from runs_wave4 import WAVE4   # noqa: E402  (the runs transcribed in wave 4, with every column)
RUNS += [dict(r, added="wave4") for r in WAVE4]
from runs_wave5 import WAVE5   # noqa: E402  (the runs transcribed in wave 5, with every column)
RUNS += [dict(r, added="wave5") for r in WAVE5]
from runs_wave7 import WAVE7   # noqa: E402  (the runs transcribed in wave 7, with every column)
RUNS += [dict(r, added="wave7") for r in WAVE7]
assert len({r["run_id"] for r in RUNS}) == len(RUNS), "duplicate run_id"
with open(os.path.join(HERE, "runs.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=COLS, quoting=csv.QUOTE_MINIMAL)
    w.writeheader()
    for r in RUNS:
        r = dict(r)
        src = r["source_url"]
        if src.startswith("http") and " (" in src:
            # keep source_url a bare URL; move the location detail into the note
            url, detail = src.split(" (", 1)
            r["source_url"] = url
            r["note"] = "[source: " + detail.rstrip(")") + "] " + r["note"]
        elif not src.startswith("http"):
            ident = src.split("search-index file id ")[1].split()[0].rstrip(",")
            r["source_url"] = "unresolved: search-index file id " + ident
            r["note"] = "[source: " + src + "] " + r["note"]
        w.writerow({k: r.get(k, "") for k in COLS})
print(len(RUNS), "runs")
