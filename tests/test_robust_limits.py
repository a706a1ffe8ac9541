"""Robustness at the edges: overridden links in NCCL's model, one rank, sizes that are
not whole elements, tree on a large switch, the size cap on every builder, the
largest systems, hostile HLO and the ``run`` verb's JSON.

Each test pins a wrong answer, traceback or blow-up found by trying the library as
a hostile user would; the answers are checked against the API and the lower bound.
"""
import json
import math
import subprocess
import sys

import numpy as np
import pytest

import collectives_lib as cl

CLI = [sys.executable, "-m", "collectives_lib"]


def cli(*args, timeout=120):
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout)


# -- 1. overridden links reach NCCL's model; never below the bound ------------------------

def test_bandwidth_flag_changes_nccls_answer_and_says_so():
    """`--bandwidth 1e9` on a DGX H100 once left NCCL's 4.19 ms (25625% of the bound)."""
    base = json.loads(cli("estimate", "-t", "dgx-h100:1", "-c", "all_reduce", "-s", "1GiB",
                          "--json").stdout)
    slow = cli("estimate", "-t", "dgx-h100:1", "-c", "all_reduce", "-s", "1GiB",
               "--bandwidth", "1e9", "--json")
    assert slow.returncode == 0, slow.stderr
    got = json.loads(slow.stdout)
    assert got["time_s"] > 100 * base["time_s"]
    assert got["time_s"] >= got["lower_bound"]["time_s"]
    assert "scaled" in got["why"]


@pytest.mark.parametrize("topology", [
    cl.nvswitch_node("dgx-h100", bandwidth=1e9),
    cl.nvswitch_node("dgx-h100", latency=1e-3),
    cl.GpuCluster("dgx-h100", 4, nvlink_bandwidth=1e9, nic_bandwidth=1e8),
    cl.GpuCluster("dgx-h100", 2, nic_latency=1e-3, nvlink_latency=1e-4),
], ids=["nvlink-1GB", "nvlink-1ms", "cluster-slow", "cluster-latency"])
@pytest.mark.parametrize("collective", ["all_reduce", "all_gather", "reduce_scatter", "all_to_all"])
def test_api_overrides_keep_nccls_answer_above_its_bound(topology, collective):
    preset = (cl.nvswitch_node("dgx-h100") if topology.num_ranks == 8 else
              cl.GpuCluster("dgx-h100", topology.num_ranks // 8))
    for size in (7, 4096, 2**30):
        e = cl.estimate(collective, topology, size)
        assert e.model == "nccl"
        assert e.time >= e.bound.time * (1 - 1e-9), (size, e.time, e.bound.time)
        assert e.efficiency <= 1 + 1e-9
        if size == 2**30:
            assert e.time > cl.estimate(collective, preset, size).time


# -- 2. one rank costs nothing --------------------------------------------------------------

@pytest.mark.parametrize("collective,algorithm", [
    ("all_reduce", "sharp"), ("all_reduce", "nvls"), ("reduce_scatter", "sharp"),
    ("reduce_scatter", "nvls"), ("all_gather", "nvls"), ("reduce", "sharp"),
    ("broadcast", "multicast"), ("all_reduce", "direct"), ("all_reduce", "ring")])
def test_one_rank_costs_nothing_whatever_the_algorithm(collective, algorithm):
    switch = cl.Switch(1, bandwidth=1e9, in_network=True)
    e = cl.estimate(collective, switch, 2**30, algorithm=algorithm)
    assert e.time == 0 and e.algbw is None
    assert cl.build(collective, switch, algorithm).num_steps == 0
    cl.check(cl.build(collective, switch, algorithm))


def test_one_rank_in_the_cli():
    out = cli("estimate", "-t", "switch:1:sharp", "--bandwidth", "1e9", "-c", "all_reduce",
              "-s", "1GiB", "-a", "sharp", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["time_s"] == 0


@pytest.mark.parametrize("model", ["ideal", "nccl"])
def test_one_node_over_the_node_axis(model):
    out = cli("estimate", "-t", "h100-cluster:1", "--axes", "node", "-c", "all_reduce",
              "-s", "1GiB", "--model", model, "--json")
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["time_s"] == 0 and got["algbw"] is None


# -- 3. sizes that are not whole elements ---------------------------------------------------

@pytest.mark.parametrize("collective", ["send", "broadcast", "all_gather", "reduce_scatter",
                                        "all_reduce", "all_to_all", "reduce"])
@pytest.mark.parametrize("size", [1, 3, 5, 7, 9, 4097])
def test_sizes_not_whole_elements_never_beat_the_link(collective, size):
    """A 7 B send once showed 1.75 GB/s on a 1 GB/s link: nccl-tests counts whole elements."""
    ring = cl.Ring(2, bandwidth=1e9)
    e = cl.estimate(collective, ring, size)
    assert e.efficiency <= 1 + 1e-9
    assert e.time >= e.bound.time * (1 - 1e-9)
    if e.busbw is not None and collective != "all_to_all":
        # nccl-tests' bus bandwidth is what one link carries: never more than the link
        assert e.busbw <= 1e9 * (1 + 1e-9), (e.busbw, e.time)
    if e.time:
        r = cl.simulate(cl.build(collective, ring, e.algorithm), ring, size)
        assert r.algbw == pytest.approx(e.algbw)


def test_a_rate_just_below_a_unit_prints_as_that_unit():
    assert cl.format_rate(999_999_999.9999999) == "1 GB/s"
    assert cl.format_time(0.000999999999) == "1 ms"


# -- 4. tree on a switch is its closed form at every N --------------------------------------

@pytest.mark.parametrize("n", [2, 8, 64, 129, 500, 501, 1000])
@pytest.mark.parametrize("size", [4096, 2**20, 2**30])
def test_tree_on_a_switch_is_its_closed_form_at_every_n(n, size):
    """Slots of 0 or 1 element once let the largest set the time: 16 ms for 1 MiB on 500
    ranks, 2.09 ms on 501 (past the cap, by the closed form)."""
    from collectives_lib.builders import entry, group_for
    switch = cl.Switch(n, bandwidth=1e9, latency=1e-6)
    group, _ = group_for("all_reduce", switch)
    e = cl.estimate("all_reduce", switch, size, algorithm="tree")
    assert e.time == pytest.approx(entry("all_reduce", "tree").closed_form(group, size), rel=1e-12)
    assert e.time >= e.bound.time * (1 - 1e-9)


def test_tree_does_not_jump_at_the_cap():
    t = [cl.estimate("all_reduce", cl.Switch(n, bandwidth=1e9), 2**20, algorithm="tree").time
         for n in (499, 500, 501)]
    assert max(t) / min(t) < 1.01


# -- 5. one size cap for every builder -------------------------------------------------------

@pytest.mark.parametrize("args", [
    ["ring:8192", "-c", "all_to_all"], ["ring:8192", "-c", "all_to_all", "-a", "ring"],
    ["ring:1024", "-c", "all_reduce", "-a", "direct"], ["chain:1024", "-c", "all_reduce"],
    ["chain:1024", "-c", "all_to_all"], ["chain:2048", "-c", "all_reduce"],
    ["torus:128x128", "-c", "all_reduce", "-a", "multi_axis"]], ids=" ".join)
def test_past_the_cap_answers_by_closed_form_or_refuses_in_one_line(args):
    """ring:8192 all-to-all once took 112 s and 15 GB; chain:1024 ended in MemoryError."""
    import time
    t0 = time.perf_counter()
    out = cli("estimate", "-t", *args, "-s", "1MiB", "--bandwidth", "1e9", timeout=60)
    assert time.perf_counter() - t0 < 30
    if out.returncode == 2:
        assert len(out.stderr.strip().splitlines()) == 1 and "beyond the" in out.stderr
    else:
        assert out.returncode == 0, out.stderr
        assert "closed form" in out.stdout or "too large to build" in out.stdout



def test_show_refuses_before_building_what_it_would_not_print():
    """A tree just under the cap once took 19.5 s and 5 GB to print 64 transfers."""
    import time
    t0 = time.perf_counter()
    out = cli("show", "-t", "switch:500", "--bandwidth", "1e9", "-c", "all_reduce", "-a", "tree")
    assert out.returncode == 2 and time.perf_counter() - t0 < 20
    assert len(out.stderr.strip().splitlines()) == 1 and "show prints schedules of up to" in out.stderr


def test_show_lists_the_first_transfers_by_source_and_destination():
    sched = cl.build("all_to_all", cl.Switch(40, bandwidth=1e9), "direct")
    listed = sched.transfers(0, limit=5)
    every = sorted(sched.transfers(0), key=lambda t: (t.src, t.dst))[:5]
    assert listed == every
    text = sched.format(max_transfers=3)
    assert "(0 of V)" not in text and "more transfers" in text


# -- 6. the largest systems, any number of dimensions ----------------------------------------

@pytest.mark.parametrize("spec", ["torus:2x2x2x2x2x2x2", "mesh:2x2x2x2x2x2x2x2", "torus:3x3x3x3x3x3x3x3"])
@pytest.mark.parametrize("collective", ["all_reduce", "all_gather", "reduce_scatter", "all_to_all"])
def test_tori_of_seven_or_more_dimensions(spec, collective):
    """Seven axes once ended in IndexError (six axis names)."""
    topo = cl.parse_topology(spec, bandwidth=1e9)
    assert len(set(topo.axis_names)) == len(topo.dims)
    e = cl.estimate(collective, topo, 2**20)
    assert e.time >= e.bound.time * (1 - 1e-9)
    if topo.num_ranks <= 64:      # replay tracks up to 64 ranks
        cl.check(cl.build(collective, topo, "multi_axis" if collective != "all_to_all" else "direct"))


def test_a_six_axis_torus_replays_with_every_axis_named():
    cl.check(cl.build("all_reduce", cl.Torus((2,) * 6, bandwidth=1e9), "multi_axis"))


def test_an_axis_past_the_sixth_is_named():
    topo = cl.Torus((2,) * 8, bandwidth=1e9)
    assert topo.axis_names[6:] == ("d6", "d7")
    assert cl.estimate("all_reduce", topo, 2**20, axes="d7").time > 0


# -- 8. the run verb: strict JSON, null for one rank, no Hydra file left ----------------------

def _mpi_or_skip():
    why = cl.mpi.available()
    if why:
        pytest.skip(why)


def _strict(text):
    def refuse(name):
        raise AssertionError(f"not strict JSON: {name}")
    return json.loads(text, parse_constant=refuse)


def test_run_one_rank_calibrated_json_is_strict_with_null_bandwidths():
    """`run --np 1 --calibrate --json` once printed NaN and an algbw of 0.8-1.0 GB/s."""
    _mpi_or_skip()
    out = cli("run", "--np", "1", "--calibrate", "--json", "-c", "all_reduce", "-s", "1MiB",
              timeout=300)
    assert out.returncode == 0, out.stderr
    row = _strict(out.stdout)["rows"][0]
    assert row["algbw"] is None and row["busbw"] is None and row["mpi_algbw"] is None
    assert row["measured_over_predicted"] is None


def test_strict_turns_every_non_finite_float_into_null():
    from collectives_lib.mpi.results import strict
    got = strict({"a": float("nan"), "b": [float("inf"), 1.0, np.float64("nan")], "c": "x"})
    assert json.dumps(got, allow_nan=False) == '{"a": null, "b": [null, 1.0, null], "c": "x"}'


def test_hydra_topology_files_of_a_launch_are_removed(tmp_path, monkeypatch):
    """mpiexec writes /tmp/hydra_hwloc_xmlfile_* and leaves it when a rank fails or the
    launcher is killed; the launcher (and rank 0, once every process has started) remove
    the ones the launch made, and only those."""
    import os
    import time
    from collectives_lib.mpi import processes as launch
    monkeypatch.setattr(launch, "HYDRA_FILES", str(tmp_path / "hydra_hwloc_xmlfile_"))
    old = tmp_path / "hydra_hwloc_xmlfile_old"
    old.write_text("x")
    before, since = launch.hydra_files(), time.time()
    ours = tmp_path / "hydra_hwloc_xmlfile_new"
    ours.write_text("x")
    other = tmp_path / "unrelated"
    other.write_text("x")
    assert launch.remove_hydra_files(before, since) == [str(ours)]
    assert old.exists() and other.exists() and not ours.exists()
    os.utime(old, (since + 5, since + 5))     # there before the launch: kept whatever its time
    assert launch.remove_hydra_files(before, since) == []


def test_a_killed_launcher_leaves_no_hydra_file():
    _mpi_or_skip()
    import os
    import signal
    import time
    from collectives_lib.mpi.processes import hydra_files
    before = set(hydra_files())
    proc = subprocess.Popen([*CLI, "run", "--np", "2", "-c", "all_reduce", "-s", "64MiB",
                             "--timeout", "60"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(6)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    time.sleep(8)
    mine = [f for f in set(hydra_files()) - before if os.stat(f).st_mtime >= time.time() - 30]
    assert not mine


# -- 10. random cases: answers against the API and their bounds ------------------------------

def _random_topology(rng):
    kind = rng.integers(7)
    bw, lat = float(10 ** rng.uniform(8, 12)), float(rng.choice([0.0, 1e-7, 1e-6, 1e-4]))
    if kind == 0:
        return cl.Ring(int(rng.integers(1, 40)), bandwidth=bw, latency=lat)
    if kind == 1:
        return cl.Chain(int(rng.integers(1, 40)), bandwidth=bw, latency=lat)
    if kind == 2:
        return cl.Switch(int(rng.integers(1, 300)), bandwidth=bw, latency=lat,
                         in_network=bool(rng.integers(2)))
    if kind == 3:
        dims = tuple(int(d) for d in rng.integers(1, 5, size=int(rng.integers(1, 8))))
        return cl.Torus(dims, bandwidth=bw, latency=lat)
    if kind == 4:
        return cl.nvswitch_node(str(rng.choice(["dgx-h100", "dgx-a100", "dgx-b200"])),
                                **({"bandwidth": bw} if rng.integers(2) else {"latency": lat}))
    if kind == 5:
        return cl.GpuCluster("dgx-h100", int(rng.integers(1, 5)),
                             nvlink_bandwidth=bw * 4, nic_bandwidth=bw / 2)
    return cl.GpuCluster("dgx-h100", int(rng.integers(1, 5)), nic_latency=lat or 1e-6)


@pytest.mark.parametrize("seed", range(40))
def test_random_answers_stay_above_their_bounds(seed):
    """Random topologies (overridden links included), collectives, sizes that are often
    not whole elements, dtypes and both models: never below the bound, efficiency at
    most 100%, nothing non-finite, one rank free, the sweep's row the estimate."""
    rng = np.random.default_rng(seed)
    topo = _random_topology(rng)
    coll = str(rng.choice(["all_reduce", "all_gather", "reduce_scatter", "all_to_all",
                           "broadcast", "reduce"]))
    dtype = str(rng.choice(["float32", "bfloat16", "float64", "int8"]))
    sizes = sorted({int(s) for s in 10 ** rng.uniform(0, 9, size=3)} | {int(rng.integers(1, 16))})
    model = str(rng.choice(["ideal", "nccl"])) if topo.gpu_system is not None else "ideal"
    try:
        rows = cl.models.sweep(coll, topo, sizes, model=model, dtype=dtype)
    except cl.CollectivesError as e:            # refused: one line
        assert "\n" not in str(e)
        return
    for size, e in zip(sizes, rows):
        assert math.isfinite(e.time) and e.time >= 0
        assert e.time >= e.bound.time * (1 - 1e-9), (size, e.algorithm, e.time, e.bound.time)
        assert e.efficiency <= 1 + 1e-9
        if e.group_size == 1:
            assert e.time == 0 and e.algbw is None
        elif e.busbw is not None:
            assert math.isfinite(e.busbw)
        one = cl.estimate(coll, topo, size, model=model, dtype=dtype)
        assert one.time == pytest.approx(e.time, rel=1e-9)


@pytest.mark.parametrize("make, message", [
    (lambda: cl.Ring(10**12, bandwidth=1e9), r"Ring\(1000000000000\) has 1,000,000,000,000 ranks"),
    (lambda: cl.Torus((4096, 4096), bandwidth=1e9), r"Torus\(4096x4096\) has 16,777,216 ranks"),
    (lambda: cl.Switch(2**23, bandwidth=1e9), "a switch has 8,388,608 ranks"),
    (lambda: cl.FullMesh(10**5, bandwidth=1e9), r"FullMesh\(100000\) has 9,999,900,000 directed"),
    (lambda: cl.GpuCluster("dgx-h100", 600_000), "a cluster of 600,000 nodes of 8 GPUs"),
    (lambda: cl.algorithms("all_reduce", 2**70), "a schedule over abstract ranks has"),
    (lambda: cl.build("all_gather", 2**40, "ring"), "a schedule over abstract ranks has"),
])
def test_a_topology_too_large_to_hold_is_refused_in_one_line(make, message):
    """Links are arrays: 10^12 ranks asked numpy for 7 TiB (MemoryError, a traceback in the CLI)."""
    with pytest.raises(cl.CollectivesError, match=message) as err:
        make()
    assert "\n" not in str(err.value)


def test_the_cli_refuses_a_ring_of_a_trillion_in_one_line():
    out = subprocess.run([sys.executable, "-m", "collectives_lib", "estimate", "-t", "ring:1000000000000",
                          "--bandwidth", "1e9", "-c", "all_reduce", "-s", "1M"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.strip().count("\n") == 0 and "4,194,304" in out.stderr


def test_a_spec_that_is_not_text_is_refused_naming_its_type():
    with pytest.raises(cl.CollectivesError, match="not a value of type Schedule"):
        cl.parse_topology(cl.build("all_reduce", 4, "ring"))
