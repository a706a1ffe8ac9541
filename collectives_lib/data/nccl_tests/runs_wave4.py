"""Metadata of the runs transcribed in wave 4 (more held-out runs, A100 single node first); imported by
make_runs_csv.py.

Every entry has all columns of runs.csv (see COLS there). Raw text: raw/<run_id>.txt, typed from the
stored text of the cited file (no git copy of these repositories here: the ocitutorials snapshot is
2.5 GB, over the fetch limit), as each note says.
"""
GH = "https://github.com/"
OCIJ = GH + "oracle-japan/ocitutorials/blob/"
GCM = GH + "theap06/gcm/blob/54e1b1d0bcc03cb394e8076f86dd505ee5c6bdf0/gcm/tests/health_checks_tests/test_check_nccl.py"

NVL3 = "NVLink3 (12 links, 600 GB/s bidir) + NVSwitch gen2"
NVL4 = "NVLink4 (18 links, 900 GB/s bidir) + NVSwitch gen3 (NVLS capable)"
TYPED = "Typed from the stored text. "

# ---------------------------------------------------------------- Oracle Japan OCI tutorials (BM.GPU4.8, A100 40GB)
OCI_A100 = dict(collective="all_reduce", gpu="A100-SXM4-40GB (OCI BM.GPU4.8)", gpus_per_node=8, dtype="float",
                gpu_model="A100-SXM4-40GB", healthy="unknown")
HOROVOD = (OCIJ.replace("/blob/", "/commits/") + "master/tutorials/_intermediates/spinup-gpu-cluster.md "
           "(a revision after 61925d8bff4889924f78880353519e520931ec68, the Horovod-container version of the tutorial "
           "'GPUクラスタを構築する', section '4-2. NCCL Tests実行'; COMMIT NOT IDENTIFIED: the text is the search index's stored "
           "copy of the file, id 7310580171, whose header names /intermediates/spinup-gpu-cluster/; later revisions, moved to "
           "tutorials/_hpc/spinup-gpu-cluster.md, link to benchmark/run-nccltests.md instead)")
WAVE4 = [
 dict(OCI_A100, run_id="oci-a100x8-allreduce-ocitutorials", num_nodes=1, interconnect=NVL3,
      nccl_version="", settings="defaults (horovod/horovod:latest container, its NCCL; not printed)",
      command="./build/all_reduce_perf -b 64 -e 10G -f 2 -t 1 -g 8 (one process drives the 8 GPUs: nGpus 8, one Pid)",
      source_url=HOROVOD, date="",
      note=TYPED + "Single node, 64 B to 8 GiB with times (the -e 10G sweep stops at 8 GiB). 8 ranks (busbw/algbw = 1.75). "
           "Peak 235.1 GB/s at 8 GiB; 32 us floor up to 32 KiB. The same tutorial's 2-node run is oci-a100x8-2node-roce-allreduce-ocitutorials.",
      launch="gpus-per-process=8", nics_per_node="", nic_gbps="", fabric="nvlink-only", env="",
      health_evidence="none: vendor tutorial output (Oracle Japan) shown as the single-node step; the tutorial's summary quotes only its 2-node figure"),
 dict(OCI_A100, run_id="oci-a100x8-2node-roce-allreduce-ocitutorials", num_nodes=2,
      interconnect=NVL3 + " intra; OCI cluster network RoCE v2, 16 x 100 Gb/s per node ('総帯域幅1.6 Tbps（100 Gbps x 16）')",
      nccl_version="", settings="UCX_NET_DEVICES=mlx5_0:1; NCCL_IB_HCA = the 16 RDMA ports (mlx5_0-3, mlx5_6-17)",
      command="mpirun --allow-run-as-root -np 16 --host <2 nodes>:8 ... ./build/all_reduce_perf -b 64 -e 10G -f 2 -t 1 -g 1 (kept in the raw file)",
      source_url=HOROVOD, date="",
      note=TYPED + "16 ranks (busbw/algbw = 1.875). Peak 71.6 GB/s at 8 GiB; dips at 16 MiB and 64 MiB (out-of-place 6058 us at 64 MiB, in-place 3710 us). "
           "The tutorial's summary: '帯域（busbw）：約 72 GB/s, レイテンシ：約 39 μs'. The same vendor's 2025 page on the same shape "
           "(content/hpc/benchmark/run-nccltests-ubuntu, NCCL 2.26.5) shows 191.8 GB/s at 10 GiB on 2 nodes.",
      launch="process-per-gpu", nics_per_node="16", nic_gbps="100", fabric="roce",
      env="NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_6,mlx5_7,mlx5_8,mlx5_9,mlx5_10,mlx5_11,mlx5_12,mlx5_13,mlx5_14,mlx5_15,mlx5_16,mlx5_17",
      health_evidence="none: Oracle Japan's tutorial reports 'about 72 GB/s' as what it measured, without calling it expected; 37% of the 192 GB/s the same vendor shows on the same shape in 2025"),
 dict(OCI_A100, run_id="oci-a100x8-2node-roce-allreduce-ocitutorials-2022", num_nodes=2,
      interconnect=NVL3 + " intra; OCI cluster network RoCE v2, 16 x 100 Gb/s per node (BM.GPU4.8, 'RDMA対応ネットワークインタフェース')",
      nccl_version="", settings="host NCCL of the OCI GPU image (/usr/lib64, not printed), CUDA 11.6, OpenMPI 4.1.2a1; UCX_NET_DEVICES=mlx5_0:1; NCCL_IB_HCA = 16 ports",
      command="mpirun -n 16 -npernode 8 -hostfile ./hostlist.txt ... ./nccl-tests/build/all_reduce_perf -b 64 -e 1G -f 2 -t 1 -g 1 (kept in the raw file)",
      source_url=OCIJ + "61925d8bff4889924f78880353519e520931ec68/tutorials/_intermediates/spinup-gpu-cluster.md (section '3-4. NCCL Tests実行')",
      date="2022-12",
      note=TYPED + "16 ranks (busbw/algbw = 1.875). 64 B to 1 GiB. Peak 87.2 GB/s at 1 GiB; the tutorial's summary: '帯域（busbw）：約 87 GB/s, レイテンシ：約 35 μs'. "
           "Date from the TensorFlow log of the same page (2022-12-15).",
      launch="process-per-gpu", nics_per_node="16", nic_gbps="100", fabric="roce",
      env="NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_6,mlx5_7,mlx5_8,mlx5_9,mlx5_10,mlx5_11,mlx5_12,mlx5_13,mlx5_14,mlx5_15,mlx5_16,mlx5_17",
      health_evidence="none: Oracle Japan's tutorial reports 'about 87 GB/s' as what it measured, without calling it expected; 45% of the 192 GB/s the same vendor shows on the same shape in 2025"),
 # ---------------------------------------------------------------- Oracle Japan OCI tutorial, Ubuntu + HPC SDK NCCL 2.26.5 (one size each)
 dict(OCI_A100, run_id="oci-a100x8-allreduce-10g-ocitutorials-ubuntu", num_nodes=1, interconnect=NVL3,
      nccl_version="2.26.5 (NVIDIA HPC SDK 25.7, stated by the page; not printed)", settings="defaults; OpenMPI 5.0.8",
      command="mpirun -n 8 ./build/all_reduce_perf -b 10G -e 10G -t 1 -g 1 (kept in the raw file)",
      source_url=OCIJ + "40114268892c1cbd63aec7c636818fe320ddf1c9/content/hpc/benchmark/run-nccltests-ubuntu/index.md (section '3-1. 1ノード8GPU')",
      date="2025-07",
      note=TYPED + "One size only (10 GiB). 8 ranks (busbw/algbw = 1.75). 232.2 GB/s busbw, the page's summary figure ('1ノード8GPU： 232 GB/s'). Ubuntu 24.04 image of 2025-07-23.",
      launch="process-per-gpu", nics_per_node="", nic_gbps="", fabric="nvlink-only", env="",
      health_evidence="none: Oracle Japan's page states the 232 GB/s it obtained ('以下の性能が出ています'), without calling it expected"),
 dict(OCI_A100, run_id="oci-a100x8-2node-roce-allreduce-10g-ocitutorials-ubuntu", num_nodes=2,
      interconnect=NVL3 + " intra; OCI cluster network RoCE v2, '100Gbps x 16 /ノード'",
      nccl_version="2.26.5 (NVIDIA HPC SDK 25.7, stated by the page; not printed)", settings="defaults; OpenMPI 5.0.8",
      command="mpirun -n 16 -N 8 -hostfile ~/hostlist.txt -x LD_LIBRARY_PATH ./build/all_reduce_perf -b 10G -e 10G -t 1 -g 1 (kept in the raw file)",
      source_url=OCIJ + "40114268892c1cbd63aec7c636818fe320ddf1c9/content/hpc/benchmark/run-nccltests-ubuntu/index.md (section '3-2. 2ノード16GPU')",
      date="2025-07",
      note=TYPED + "One size only (10 GiB). 16 ranks (busbw/algbw = 1.875). 191.8 GB/s busbw ('2ノード16GPU： 192 GB/s'), 96% of 16 x 100 Gb/s.",
      launch="process-per-gpu", nics_per_node="16", nic_gbps="100", fabric="roce", env="",
      health_evidence="none: Oracle Japan's page states the 192 GB/s it obtained, without calling it expected"),
 dict(OCI_A100, run_id="oci-a100x8-2node-roce-allreduce-10g-ocitutorials-ngc", num_nodes=2,
      interconnect=NVL3 + " intra; OCI cluster network RoCE v2, 16 RDMA ports per node (NCCL_IB_HCA lists 16; 100 Gb/s each per the same vendor's BM.GPU4.8 pages)",
      nccl_version="2.21.5 (TensorFlow NGC container 24.06; the page prints '21.5.1'; not printed by the run)",
      settings="NCCL_IB_QPS_PER_CONNECTION=4;NCCL_IB_GID_INDEX=3;UCX_NET_DEVICES=eth0; NCCL_IB_HCA = 16 ports",
      command="the page shows mpirun --allow-run-as-root -np 2 -H <2 nodes>:1 ... ./build/all_reduce_perf -b 10G -e 10G -t 1 -g 8 (kept in the raw file), but its output is one process per GPU (nGpus 1, 16 Pids)",
      source_url=OCIJ + "07a25a526e553e842b521343ab346a11eabe0409/tutorials/_hpc/benchmark/run-nccltests.md (section '3. NCCL Tests実行')",
      date="2024",
      note=TYPED + "One size only (10 GiB). 16 ranks (busbw/algbw = 1.875). 222.9 GB/s out-of-place, 219.0 in-place (the page's summary: '10 GiBのメッセージサイズで 219 GB/s'). "
           "LAUNCH: the command (-np 2 -g 8) does not match its output (header nGpus 1, 16 different Pids, hosts inst-xxxxx-comp not -gpu4-ol89): an edited snippet; launch is taken from the output, one process per GPU.",
      launch="process-per-gpu", nics_per_node="16", nic_gbps="", fabric="roce",
      env="NCCL_IB_QPS_PER_CONNECTION=4;NCCL_IB_GID_INDEX=3;NCCL_IB_HCA==mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_6,mlx5_7,mlx5_8,mlx5_9,mlx5_10,mlx5_11,mlx5_12,mlx5_13,mlx5_14,mlx5_15,mlx5_16,mlx5_17",
      health_evidence="none: Oracle Japan's page states the 219 GB/s it obtained, without calling it expected"),
 # ---------------------------------------------------------------- Oracle's OKE quick start (A100 40GB, RDMA through SR-IOV VFs)
 dict(OCI_A100, run_id="oci-oke-a100x8-2node-roce-allreduce", num_nodes=2,
      gpu="A100-SXM4-40GB (OCI, OKE self-managed nodes; shape not named in the section, A100-SXM4-40GB is BM.GPU4.8)",
      interconnect=NVL3 + " intra; OCI cluster network RoCE through 16 RDMA VFs per node (the README's node listing: 'RDMA-VFs 16'; rate not stated)",
      nccl_version="", settings="manifests/a100-nccl-test.yaml (not copied); Kubernetes MPI job, 16 SR-IOV RDMA VFs per pod",
      command="kubectl apply -f .../manifests/a100-nccl-test.yaml; the MPI job runs all_reduce_perf -b 8 -e 8G -f 2 -g 1 (header: nGpus 1, 16 ranks)",
      source_url=GH + "oracle-quickstart/oci-hpc-oke/blob/001cbb9b5ee7cdd5aff4b37c6b1448618107e55f/README.md (section 'Run the NCCL test', A100; the same table is in later revisions under 'BM.GPU4.8')",
      date="",
      note=TYPED + "16 ranks (busbw/algbw = 1.875). 8 B to 8 GiB. 237.9 GB/s busbw at 8 GiB, above the 200 GB/s of 16 x 100 Gb/s (a 2-node tree's busbw can exceed the NICs'); "
           "a step from 165 GB/s at 256 MiB to 219 GB/s at 1 GiB. Identical Pids on both workers (containers).",
      launch="process-per-gpu", nics_per_node="16", nic_gbps="", fabric="roce", env="(in the manifest, not copied)",
      health_evidence="none: vendor quick start ('check its logs for the NCCL test result'), no statement about the numbers"),
 # ---------------------------------------------------------------- Oracle Japan OCI tutorial (BM.GPU.H100.8)
 dict(run_id="oci-h100x8-2node-roce-allreduce-ocitutorials", collective="all_reduce", gpu="H100 80GB HBM3 (OCI BM.GPU.H100.8)",
      gpus_per_node=8, num_nodes=2,
      interconnect=NVL4 + " intra; OCI cluster network RoCE v2, 16 RDMA ports per node ('全16ポートのRDMAインタフェース'; 200 Gb/s each per OCI's shape table, not stated on the page)",
      nccl_version="2.21.5 (TensorFlow NGC container 24.06, stated by the page; not printed)",
      settings="NCCL_CUMEM_ENABLE=0;NCCL_IB_SPLIT_DATA_ON_QPS=0;NCCL_IB_GID_INDEX=3;NCCL_IB_TC=41;NCCL_NET_PLUGIN=none;NCCL_IGNORE_CPU_AFFINITY=1;NCCL_SOCKET_IFNAME=eth0; NCCL_IB_HCA = 16 ports; --bind-to numa",
      command="mpirun --allow-run-as-root -n 16 -H <2 nodes>:8 ... ./build/all_reduce_perf -b 1G -e 16G -f 2 (kept in the raw file)",
      source_url=OCIJ + "bf795eb339690f076be088abc84c16fcc6ce5100/tutorials/_hpc/benchmark/run-nccltests-h100.md (section '3. NCCL Tests実行'; the same table, host names anonymised, is in content/hpc/benchmark/run-nccltests-h100/index.md at 876e820b6fc53752d61e571181aac4b833e84a1a)",
      date="2024-07-22", healthy="unknown",
      note=TYPED + "16 ranks (busbw/algbw = 1.875). Only 1 GiB to 16 GiB. Peak 464.6 GB/s at 16 GiB ('16 GiBのメッセージサイズで 465 GB/s の帯域（busbw）性能が出ています'). "
           "Date from the instance names (instance-20240722-0952/-0955).",
      launch="process-per-gpu", nics_per_node="16", nic_gbps="", fabric="roce",
      env="NCCL_CUMEM_ENABLE=0;NCCL_IB_SPLIT_DATA_ON_QPS=0;NCCL_IB_GID_INDEX=3;NCCL_IB_TC=41;NCCL_NET_PLUGIN=none;NCCL_IGNORE_CPU_AFFINITY=1;NCCL_SOCKET_IFNAME=eth0;NCCL_IB_HCA==mlx5_0,mlx5_1,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7,mlx5_8,mlx5_9,mlx5_10,mlx5_12,mlx5_13,mlx5_14,mlx5_15,mlx5_16,mlx5_17",
      dtype="float", gpu_model="H100-SXM5",
      health_evidence="none: Oracle Japan's tutorial states the 465 GB/s it obtained, without calling it expected"),
 # ---------------------------------------------------------------- GCM health-check fixtures (Meta's GPU cluster monitoring)
 dict(run_id="a100x8-allreduce-gcm", collective="all_reduce", gpu="A100-SXM4-80GB", gpus_per_node=8, num_nodes=1,
      interconnect=NVL3, nccl_version="2.16.2 (printed: 'NCCL version 2.16.2+cuda11.6')", settings="defaults as far as shown",
      command="not shown (the check runs all_reduce_perf from --nccl-tdir /opt/nccl-tests/build/; header: nGpus 1, 8 Pids, 32 MiB..1 GiB)",
      source_url=GCM + " (string sample_single_success_output; a fork of facebookresearch/gcm, the only copy of this path in the index)",
      date="", healthy="unknown",
      note=TYPED + "A unit-test fixture of GCM's NCCL health check ('fair_cluster prolog ... -p all_reduce'): the host name is templated ({hostname}) "
           "but the Pids and numbers look like a real run. 8 ranks (busbw/algbw = 1.75). Only 32 MiB to 1 GiB. Peak 231.7 GB/s at 1 GiB; "
           "64 MiB (557 us) is faster than 128 MiB per byte (1150 us).",
      launch="process-per-gpu", nics_per_node="", nic_gbps="", fabric="nvlink-only", env="", dtype="float",
      gpu_model="A100-SXM4-80GB",
      health_evidence="none: the 'success' sample of a health check's unit test; the test's thresholds (200/210/211 GB/s) are about its avg busbw 210.99, not a statement that the numbers are normal"),
 dict(run_id="a100x8-2node-allreduce-gcm", collective="all_reduce", gpu="A100-SXM4-80GB", gpus_per_node=8, num_nodes=2,
      interconnect=NVL3 + " intra; network between the two nodes not stated", nccl_version="2.12.12 (printed: 'NCCL version 2.12.12+cuda11.6')",
      settings="defaults as far as shown", command="not shown (GCM's pairwise check: mpirun --host <host1>:8,<host2>:8 ... all_reduce_perf; header: nGpus 1, 16 Pids)",
      source_url=GCM + " (string sample_pairwise_success_output; a fork of facebookresearch/gcm)",
      date="", healthy="unknown",
      note=TYPED + "Unit-test fixture of GCM's pairwise NCCL check; host names templated ({host1}, {host2}; the test's host lists are fairwus3-1-htc-*). "
           "16 ranks (busbw/algbw = 1.875). Only 32 MiB to 1 GiB. Peak 182.8 GB/s at 1 GiB.",
      launch="process-per-gpu", nics_per_node="", nic_gbps="", fabric="", env="", dtype="float", gpu_model="A100-SXM4-80GB",
      health_evidence="none: the 'success' sample of a health check's unit test (critical threshold 100 GB/s in that test), no statement about the numbers"),
 # ---------------------------------------------------------------- personal notes: sendrecv on 8 A100
 dict(run_id="a100x8-sendrecv-liplus", collective="sendrecv", gpu="A100 (8 GPUs, 'NVLink GPUs with 600GB/s bi-directional bandwidth')",
      gpus_per_node=8, num_nodes=1, interconnect=NVL3, nccl_version="", settings="defaults",
      command="./build/sendrecv_perf -b 128M -e 1G -f 2 -g 8 (one process drives the 8 GPUs)",
      source_url=GH + "li-plus/playground/blob/b85070fb449ea55858fed14cf69cefe10592261b/cuda/nccl.md",
      date="", healthy="unknown",
      note=TYPED + "No header or device list published (the table only, with the command). sendrecv: busbw = algbw; every rank sends to the next one. "
           "128 MiB to 1 GiB; 110.8 GB/s at 128 MiB, 195.1 GB/s at 1 GiB ('195GB/s is uni-directional', the author). GPU variant (40/80 GB) not stated.",
      launch="gpus-per-process=8", nics_per_node="", nic_gbps="", fabric="nvlink-only", env="", dtype="float",
      gpu_model="A100-SXM4",
      health_evidence="none: personal notes; the author explains the figure (uni-directional) without calling it normal or low"),
]
