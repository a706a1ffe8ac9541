"""Metadata of the runs transcribed in wave 5 (H200 multi-node first); imported by make_runs_csv.py.
The other five runs of wave 5 (arms of nccl-collectives-bench) are in runs_wave3.py beside their siblings.

Every entry has all columns of runs.csv (see COLS there; `added` is set by make_runs_csv.py). Raw text:
raw/<run_id>.txt. The OCI (argonne-lcf/oci-howto) and Nebius (nebius/ml-cookbook) tables are copied with
`git show <commit>:<path>` from fetched snapshots of those repositories; the SkyPilot table is typed from the
search index's stored copy of the file at the commit cited (the skypilot snapshot, 539 MB, is over the fetch
limit), as each note says.
"""
GH = "https://github.com/"
NVL4 = "NVLink4 (18 links, 900 GB/s bidir) + NVSwitch gen3 (NVLS capable)"
COPIED = "Copied with git show from a fetched snapshot of the repository. "
TYPED = "Typed from the stored text. "

H200 = dict(gpus_per_node=8, dtype="float", gpu_model="H200", launch="process-per-gpu")

WAVE5 = [
 # ---------------------------------------------------------------- Argonne (ALCF) how-to for an OCI H200 cluster
 dict(H200, run_id="oci-h200x8-2node-roce-allreduce-argonne", collective="all_reduce",
      gpu="H200 (OCI, oci-hpc stack; shape not named on the page, 8 x H200 per node = BM.GPU.H200.8)",
      num_nodes=2,
      interconnect=NVL4 + " intra; OCI cluster network RDMA ('H200/RDMA fabric'; both nodes 'from switch number 1'); NIC count and rate not stated on the page",
      nccl_version="2.27.5 (printed: 'NCCL version 2.27.5+cuda12.8')",
      settings="oci-hpc sample script /opt/oci-hpc/samples/gpu/nccl_run_allreduce.sbatch (its NCCL_* settings are not shown on the page); Slurm --nodes=2 --gpus-per-node=8 --ntasks-per-node=8 --exclusive",
      command="sbatch nccl_run_allreduce.sbatch -> /opt/oci-hpc/nccl-test/build/all_reduce_perf on 2 nodes (header: nGpus 1, minBytes 1G, maxBytes 16G, iters 50, 16 Pids); the page shows the script head and the slurm.out, both kept in the raw file",
      source_url=GH + "argonne-lcf/oci-howto/blob/166a3009c0802ed8fe5e6e50cb4c46e80472ca1f/4_jobscript.md (section '5. Interpreting the Slurm output and NCCL performance'; unchanged at HEAD 38d4343af7f9e68b69f840af04c6f5a196106063)",
      date="2025-11-26", healthy="yes",
      note=COPIED + "16 ranks (busbw/algbw = 1.875). Only 1 GiB to 16 GiB (no small sizes). Peak 486.5 GB/s busbw at 16 GiB; Avg 476.572. "
           "Fabric recorded as roce because OCI cluster networks are RoCE v2 (the page says only 'RDMA'). Date = commit date.",
      nics_per_node="", nic_gbps="", fabric="roce", env="(set inside the oci-hpc sample script, not shown)",
      health_evidence="reporter (kaushik, Argonne): 'This confirms ... The Slurm configuration, NCCL build, and RDMA network are all functioning and delivering high bandwidth'; the section's aim is to 'confirm that the H200/RDMA fabric is functioning and delivering expected bandwidth'"),
 # ---------------------------------------------------------------- Nebius ML cookbook, Run:ai MPI job
 dict(H200, run_id="nebius-h200x8-2node-ib-allreduce-runai", collective="all_reduce",
      gpu="H200 (Nebius Managed Kubernetes with Run:ai; 'hopper' platform)",
      num_nodes=2,
      interconnect=NVL4 + " intra; InfiniBand between nodes (NCCL_IB_HCA=mlx5; the same cookbook's SkyPilot examples call the Nebius fabric InfiniBand); NIC count and rate not stated in the README",
      nccl_version="2.23.4 presumably (image cr.eu-north1.nebius.cloud/nebius-benchmarks/nccl-tests:2.23.4-ubu22.04-cu12.4 in runai/mpi/nccl-tests.sh; not printed)",
      settings="NCCL_DEBUG=version;NCCL_DEBUG_SUBSYS=init,env;NCCL_SOCKET_IFNAME=eth0;UCX_NET_DEVICES=eth0;NCCL_IB_HCA=mlx5;NCCL_BUFFSIZE=8388608;NCCL_IB_QPS_PER_CONNECTION=2;OMPI_MCA_coll_hcoll_enable=0;OMPI_MCA_coll_ucc_enable=0 (from runai/mpi/nccl-tests.sh)",
      command="./nccl-tests.sh --platform hopper -p demo -g 8 -n 2 -> runai mpi submit ... mpirun -np 16 --map-by ppr:8:node ... /opt/nccl_tests/build/all_reduce_perf -b 1024M -e 16G -f 2 -g 1 (the log command is kept in the raw file)",
      source_url=GH + "nebius/ml-cookbook/blob/40f106497abbbecaef637bdd7a3d7feb202a6b3b/runai/README.md (section 'Example output'; same numbers at aa6c30e2644d032c4e24df71396264a20978f3f5, whitespace only changed; the fork twinanda/ml-cookbook carries the same text)",
      date="2025-09-26", healthy="unknown",
      note=COPIED + "16 ranks (busbw/algbw = 1.875). Only 1 GiB to 16 GiB (no small sizes). Peak 479.3 GB/s busbw (in-place, 16 GiB); Avg 467.089. "
           "Job name demo-nccl-hopper-8g2n, pods demo-nccl-test-16-h200-worker-0/1; Pids repeat across the two pods (containers). Date = commit date.",
      nics_per_node="", nic_gbps="", fabric="infiniband",
      env="NCCL_SOCKET_IFNAME=eth0;NCCL_IB_HCA=mlx5;NCCL_BUFFSIZE=8388608;NCCL_IB_QPS_PER_CONNECTION=2",
      health_evidence="none: vendor cookbook 'Example output', no statement about the numbers"),
 # ---------------------------------------------------------------- SkyPilot GKE docs (a3-ultragpu-8g), Google's GIB test pods
 dict(H200, run_id="gke-a3ultra-h200x8-2node-roce-allgather-skypilot", collective="all_gather",
      gpu="H200 (GKE a3-ultragpu-8g)",
      num_nodes=2,
      interconnect=NVL4 + " intra; GPUDirect-RDMA over RoCE with Google's gIB NCCL plugin; a3-ultragpu-8g has 8 x 400 Gb/s ConnectX-7 (Google's spec, as in gke-a3ultra-h200x8-2node-roce-allgather-clustertoolkit; not restated here)",
      nccl_version="2.26.6 (printed: 'NCCL version 2.26.6+cuda12.8')",
      settings="Google's /usr/local/gib/scripts/run_nccl_tests.sh defaults (gIB env from set_nccl_env.sh); warmup iters 50, iters 100 (header)",
      command="kubectl exec nccl-test-host-1 -it -- /usr/local/gib/scripts/run_nccl_tests.sh -t all_gather -b 1K -e 8G nccl-host-1 nccl-host-2 (after kubectl apply of Google's gpudirect-rdma/nccl-test-a4.yaml manifest, as the page shows; kept in the raw file)",
      source_url=GH + "skypilot-org/skypilot/blob/088eebc2dd2ef6cdac96f7b72e8f800bc9b1f9f2/examples/gcp_gpu_direct_tcpx/README.md (section 'Comparing with raw NCCL test pods from GCP documentation')",
      date="", healthy="yes",
      note=TYPED + "16 ranks (busbw/algbw = 0.9375). 1 KiB to 8 GiB with times: 28 us floor to 32 KiB, 54.7 us at 1 MiB, peak 325.5 GB/s out-of-place "
           "(332.2 in-place) at 8 GiB. The manifest URL on the page says nccl-test-a4.yaml (the A4/B200 one) but the device list shows H200, i.e. a3-ultra. "
           "The same README section also shows the SkyPilot-launched run on the same shape (same sweep, peak 325.7/332.6 GB/s, Avg 122.073) whose lines carry a "
           "'(head, rank=0, pid=3808) [1,0]<stdout>:' prefix that convert.py does not strip; it is not transcribed. Commit date not looked up.",
      nics_per_node="8", nic_gbps="400", fabric="roce", env="NCCL_NET=gIB (via set_nccl_env.sh, values not shown)",
      health_evidence="reporter (SkyPilot docs): 'The scaling curves and bandwidth measurements match exactly with Google's official benchmarks'; the table is shown as Google's reference pods for comparison"),
]
