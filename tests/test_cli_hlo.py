"""`collectives hlo FILE --topology SPEC [--mesh ...] [--json]`: the collectives of an XLA
dump, timed, with a total; bad input is one line and status 2."""
import io
import json
from pathlib import Path

import pytest

import collectives_lib as cl
from collectives_lib.cli import main
from collectives_lib.hlo import parse_hlo

DATA = Path(__file__).resolve().parent / "data" / "hlo"


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_table_lists_every_collective_with_a_total():
    code, out, err = run("hlo", str(DATA / "fsdp.txt"), "-t", "tpu-v5e:4x2", "--mesh", "x=4,y=2")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == "jit_local: 6 collectives on tpu_slice('v5e', '4x2'), the ideal link model"
    assert lines[1].split() == ["name", "kind", "operands", "dtype", "bytes", "groups", "mesh",
                                "axes", "algorithm", "time", "bound", "times"]
    kinds = [ln.split()[1] for ln in lines[2:8]]
    assert kinds == ["all_gather", "all_gather", "all_reduce", "all_reduce", "reduce_scatter",
                     "reduce_scatter"]
    total = cl.hlo.time_hlo(parse_hlo((DATA / "fsdp.txt").read_text()),
                             cl.tpu_slice("v5e", "4x2")).total
    assert lines[8].startswith(f"total {cl.format_time(total)} per run")


@pytest.mark.parametrize("name", ["all_gather", "reduce_scatter", "all_reduce", "all_to_all",
                                  "collective_permute", "matmul_all_gather", "matmul_2d",
                                  "fsdp_scan.cpu_after_optimizations",
                                  "collectives.before_optimizations"])
def test_json_is_strict_and_matches_the_library(name):
    code, out, err = run("hlo", str(DATA / f"{name}.txt"), "-t", "tpu-v5e:4x2", "--mesh",
                         "x=4,y=2", "--json")
    assert code == 0 and err == ""
    got = json.loads(out, parse_constant=lambda c: pytest.fail(f"non-strict JSON: {c}"))
    module = parse_hlo((DATA / f"{name}.txt").read_text())
    timing = cl.hlo.time_hlo(module, cl.tpu_slice("v5e", "4x2"), mesh="x=4,y=2")
    assert got == json.loads(json.dumps(timing.as_dict()))
    assert [c["kind"] for c in got["collectives"]] == [c.kind for c in module]
    assert got["total_time_s"] == pytest.approx(sum(c["total_time_s"] for c in got["collectives"]))
    for c in got["collectives"]:
        assert c["mesh_axes"] and set(c["mesh_axes"]) <= {"x", "y"}


def test_generic_topologies_and_the_model_option():
    code, out, _ = run("hlo", str(DATA / "all_gather.txt"), "-t", "torus:4x2", "--bandwidth",
                       "1e9", "--json")
    assert code == 0 and json.loads(out)["model"] == "ideal"
    code, out, _ = run("hlo", str(DATA / "all_gather.txt"), "-t", "tpu-v5e:4x2", "--model",
                       "nccl")
    assert code == 2 and out == ""


@pytest.mark.parametrize("argv, message", [
    (["missing.txt", "-t", "tpu-v5e:4x2"],
     "cannot read missing.txt: No such file or directory"),
    ([str(DATA / "README.md"), "-t", "tpu-v5e:4x2"],
     "not HLO text: no 'HloModule' line (the text starts '# HLO dumps of small JAX programs Wha...')"),
    ([str(DATA / "all_gather.txt"), "-t", "tpu-v5e:4x2", "--devices", "0,1,2"],
     "devices must give each of the module's 8 devices a distinct rank 0..7, got [0, 1, 2]"),
    ([str(DATA / "all_gather.txt"), "-t", "tpu-v5e:4x2", "--devices", "0,1,x"],
     "--devices '0,1,x' is not a list of ranks like 0,1,3,2"),
    ([str(DATA / "all_gather.txt"), "-t", "tpu-v5e:4x2", "--mesh", "x=4"],
     "mesh x=4 has 4 devices but module jit__lambda runs on 8"),
    ([str(DATA / "all_gather.txt"), "-t", "tpu-v5e:4x2", "--mesh", "x:4"],
     "mesh 'x:4' is not understood; write axis=size pairs like x=4,y=2"),
    ([str(DATA / "all_gather.txt"), "-t", "dgx-h100:1"],
     "all_gather.3: replica groups {{0,2,4,6},{1,3,5,7}} (as ranks) fit no axes of "
     "nvswitch_node('dgx-h100') (axes x=8): give the program's mesh (mesh=, --mesh) to lay its "
     "axes on the GPUs"),
    ([str(DATA / "all_gather.txt"), "-t", "tpu-v5e:4x4"],
     "module jit__lambda runs on 8 devices but tpu_slice('v5e', '4x4') has 16 ranks: pick a "
     "topology of 8"),
    ([str(DATA), "-t", "tpu-v5e:4x2"], f"cannot read {DATA}: Is a directory"),
])
def test_bad_input_is_one_line_and_status_2(argv, message):
    code, out, err = run("hlo", *argv)
    assert (code, out) == (2, "")
    assert err == f"collectives: error: {message}\n"


def test_unknown_op_and_binary_files(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text((DATA / "all_gather.txt").read_text().replace(" all-gather(", " all-gather-x("))
    code, _, err = run("hlo", str(bad), "-t", "tpu-v5e:4x2")
    assert code == 2 and err.count("\n") == 1
    assert "unknown collective op 'all-gather-x'; known: all-gather" in err
    blob = tmp_path / "blob.bin"
    blob.write_bytes(bytes(range(128, 256)))
    code, _, err = run("hlo", str(blob), "-t", "tpu-v5e:4x2")
    assert (code, err) == (2, f"collectives: error: {blob} is not text (not UTF-8): not an HLO "
                              "dump\n")


def test_reads_stdin_and_has_help(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO((DATA / "all_reduce.txt").read_text()))
    code, out, err = run("hlo", "-", "-t", "tpu-v5e:4x2", "--mesh", "x=4,y=2")
    assert code == 0 and err == "" and out.splitlines()[0].startswith("jit__lambda: 2 collectives")
    with pytest.raises(SystemExit) as done:
        main(["hlo", "--help"])
    assert done.value.code == 0
    assert "--xla_dump_to" in capsys.readouterr().out


def test_a_gpu_mesh_and_a_device_assignment_from_the_shell():
    tpu = Path(__file__).parent / "data" / "hlo_tpu"
    code, out, err = run("hlo", str(tpu / "fsdp_train_step.txt"), "-t", "dgx-h100:1",
                         "--mesh", "data=4,fsdp=2", "--json")
    report = json.loads(out)
    assert (code, err, report["model"]) == (0, "", "nccl")
    assert [c["topology_axes"] for c in report["collectives"]][:2] == [["fsdp"], ["fsdp"]]
    assert report["collectives"][1]["folded"][0] == "all-gather.13"
    meta = json.loads((tpu / "psum_scatter.meta.json").read_text())
    ranks = cl.hlo.chip_ranks(meta["device_coords"], cl.tpu_slice("v5e", "2x4"))
    code, out, err = run("hlo", str(tpu / "fsdp_layer.txt"), "-t", "tpu-v5e:2x4", "--json",
                         "--devices", ",".join(map(str, ranks)))
    assert code == 0 and json.loads(out)["devices"] == ranks


# ---------------------------------------------------------------------------
# messages of one short line; collectives of nothing; limits from the shell
# ---------------------------------------------------------------------------

_AR = """HloModule m, num_partitions=NUM
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %c = f32[] add(%a, %b)
}
ENTRY %main (p: SHAPE) -> SHAPE {
  %p = SHAPE{0} parameter(0)
  ROOT %ar = SHAPE{0} all-reduce(%p), channel_id=1, replica_groups=GROUPS, ATTRS
}
""".replace("ATTRS", "use_global_device_ids=true, to_apply=%add")


def _module(tmp_path, groups, num=8, shape="f32[1024]"):
    path = tmp_path / "m.txt"
    path.write_text(_AR.replace("NUM", str(num)).replace("GROUPS", groups)
                    .replace("SHAPE", shape))
    return str(path)


def test_a_group_of_a_million_devices_is_one_short_line(tmp_path):
    # 1,024 groups of 1,024 devices that fit no axis of a ring: the message lists the
    # first ids of the first group and counts the rest (it was 57,104 characters)
    path = _module(tmp_path, "[1024,1024]<=[1024,1024]T(1,0)", num=1048576)
    code, out, err = run("hlo", path, "-t", "ring:1048576", "--bandwidth", "1e9")
    assert (code, out) == (2, "") and err.count("\n") == 1 and len(err) <= 301, err
    assert err.startswith("collectives: error: ar: replica groups {{0,1024,2048,3072,"
                          "... 1,020 more},... 1,023 more} (as ranks) fit no axes of "
                          "Ring(")


def test_collectives_of_zero_bytes_move_nothing(tmp_path):
    # XLA keeps them in unoptimized text (jax.lax.psum of an f32[0] lowers to one)
    path = _module(tmp_path, "{{0,1,2,3,4,5,6,7}}", shape="f32[0]")
    code, out, err = run("hlo", path, "-t", "tpu-v5e:4x2", "--json")
    assert (code, err) == (0, "")
    row = json.loads(out)["collectives"][0]
    assert (row["nbytes"], row["total_time_s"], row["time_s"], row["algorithm"]) == (
        0, 0.0, None, None)
    assert row["note"] == "0 bytes (f32[0]): nothing moves"
    assert row["topology_axes"] == ["x", "y"]
    code, out, err = run("hlo", path, "-t", "tpu-v5e:4x2")
    assert code == 0 and out.splitlines()[-1] == "ar: 0 bytes (f32[0]): nothing moves"


_LINE9 = "line 9: all-reduce %ar: replica_groups "


@pytest.mark.parametrize("groups, message", [
    ("mesh['x'=4,'x'=2] {'x'}",
     _LINE9 + "\"mesh['x'=4,'x'=2] {'x'}\": the mesh names axis 'x' twice"),
    ("mesh['x'=4,'y'=2] {'x','x'}",
     _LINE9 + "\"mesh['x'=4,'y'=2] {'x','x'}\": axis x is listed twice in the groups"),
    ("mesh['x'=3,'y'=2] {'x'}",
     _LINE9 + "\"mesh['x'=3,'y'=2] {'x'}\" is a mesh of 6 devices but the module has "
     "8 devices"),
    ("{{0,1}}", "ar: replica groups {{0,1}} cover 2 of the module's 8 devices: no axes "
                "of a topology group them"),
], ids=["axis-twice", "grouped-twice", "mesh-of-6", "groups-of-2"])
def test_groups_that_are_not_the_module_s_say_so(tmp_path, groups, message):
    code, out, err = run("hlo", _module(tmp_path, groups), "-t", "tpu-v5e:4x2")
    assert (code, out, err) == (2, "", f"collectives: error: {message}\n")


def test_too_many_collectives_are_refused_in_one_line(tmp_path):
    from collectives_lib.hlo.parse import MAX_COLLECTIVES
    n = MAX_COLLECTIVES + 1
    lines = [_AR.split("ENTRY")[0].replace("NUM", "8"),
             "ENTRY %main (p: f32[8]) -> f32[8] {\n  %p = f32[8]{0} parameter(0)\n"]
    lines += [f"  %ar.{i} = f32[8]{{0}} all-reduce(%p), channel_id={i + 1}, "
              f"replica_groups=[2,4]<=[8], use_global_device_ids=true, to_apply=%add\n"
              for i in range(n)]
    lines.append("  ROOT %r = f32[8]{0} copy(%p)\n}\n")
    path = tmp_path / "many.txt"
    path.write_text("".join(lines))
    code, out, err = run("hlo", str(path), "-t", "tpu-v5e:4x2", "--json")
    assert (code, out) == (2, "")
    assert err == (f"collectives: error: HLO module m runs {n:,} collectives; at most "
                   f"{MAX_COLLECTIVES:,} are read: pass a smaller module\n")


def test_a_file_over_the_limit_is_refused_from_its_size(tmp_path):
    # a regular file past 128 MiB is refused after its first 64 KiB, not read
    import tracemalloc
    from collectives_lib.hlo import MAX_BYTES, read_hlo
    big = tmp_path / "big.txt"
    with open(big, "wb") as f:
        f.write(b"HloModule m, num_partitions=8\n")
        f.truncate(MAX_BYTES + 1)                   # (sparse: no disk is written)
    tracemalloc.start()
    try:
        with pytest.raises(cl.CollectivesError, match="is larger than 128 MiB"):
            read_hlo(str(big))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2**20, peak
    code, out, err = run("hlo", str(big), "-t", "tpu-v5e:4x2")
    assert (code, out) == (2, "") and err == (
        f"collectives: error: {big} is larger than 128 MiB, the most an HLO module may "
        f"be here: pass one module's dump\n")
