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
