"""`collectives diagnose FILE [--topology SPEC] [--env K=V] [--json]`: a reader's nccl-tests
output beside NCCL's model; bad input is one line and status 2."""
import io
import json
from pathlib import Path
import sys
from importlib import resources

import pytest

import collectives_lib as cl
from collectives_lib.cli import main
from collectives_lib.diagnose import MAX_BYTES

RAW = resources.files("collectives_lib") / "data" / "nccl_tests" / "raw"
NVLS = str(RAW / "h100x8-nvls-allreduce-issue290.txt")
RING = str(RAW / "h100x8-2node-ib-allreduce-ring-issue290.txt")


def run(*argv, stdin: bytes | None = None, monkeypatch=None):
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_the_report_is_nccl_tests_table_with_the_models_columns():
    code, out, err = run("diagnose", NVLS)
    assert code == 0 and err == ""
    assert out == str(cl.diagnose(NVLS)) + "\n"
    lines = out.splitlines()
    head = next(ln for ln in lines if " size " in ln).split()
    assert head == ["#", "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong",
                    "time", "algbw", "busbw", "#wrong", "time", "busbw", "ratio", "algorithm"]
    rows = [ln.split() for ln in lines if ln.lstrip()[:1].isdigit()]
    printed = [ln.split() for ln in open(NVLS) if ln.lstrip()[:1].isdigit()]
    assert [r[:13] for r in rows] == [p[:13] for p in printed]       # nccl-tests' columns as printed
    for r in rows:                                                    # ratio = measured / expected
        assert float(r[15]) == pytest.approx(float(r[5]) / float(r[13]), abs=0.006)
        assert r[16] == "nvls/SIMPLE"
    assert "# verdict: healthy" in out


def test_standard_input(monkeypatch):
    data = open(NVLS, "rb").read()
    code, out, err = run("diagnose", "-", stdin=data, monkeypatch=monkeypatch)
    assert code == 0 and err == "" and out == str(cl.diagnose(NVLS)) + "\n"


def test_json_is_strict_and_is_the_libraries():
    code, out, err = run("diagnose", RING, "--topology", "dgx-h100:2", "--json")
    assert code == 0 and err == ""
    got = json.loads(out, parse_constant=lambda c: pytest.fail(f"non-strict JSON: {c}"))
    assert got == json.loads(json.dumps(cl.diagnose(RING, "dgx-h100:2").as_dict()))
    assert got["verdict"] == "degraded" and got["machine"]["preset"] == "dgx-h100:2"
    assert [f["code"] for f in got["findings"] if f["severity"] == "degraded"] == ["network"]
    assert all(r["ratio"] > 2 for r in got["rows"])


def test_settings_given_on_the_command_line():
    code, out, _ = run("diagnose", RING, "-t", "dgx-h100:2", "--env", "NCCL_ALGO=Ring", "--json")
    got = json.loads(out)
    assert code == 0 and got["machine"]["model_options"] == {"algorithm": "ring"}
    assert {r["expected"]["algorithm"] for r in got["rows"]} == {"ring"}


def _one_line_error(code, out, err, match):
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("collectives: error: ") and match in err, err


def test_empty_and_foreign_input(tmp_path, monkeypatch):
    empty = tmp_path / "empty.log"
    empty.write_text("")
    _one_line_error(*run("diagnose", str(empty)), "the input is empty")
    _one_line_error(*run("diagnose", "-", stdin=b"", monkeypatch=monkeypatch), "the input is empty")
    hlo = tmp_path / "module.txt"
    hlo.write_text("HloModule jit_f\nENTRY main { ROOT p = f32[8] parameter(0) }\n")
    _one_line_error(*run("diagnose", str(hlo)), "no nccl-tests table found")
    binary = tmp_path / "core"
    binary.write_bytes(b"\x7fELF\x00\x00\x01")
    _one_line_error(*run("diagnose", str(binary)), "not text")


def test_a_table_that_contradicts_its_header(tmp_path):
    text = open(NVLS).read().replace("# Using devices", "# Collective test starting: alltoall_perf\n# Using devices")
    f = tmp_path / "bad.log"
    f.write_text(text)
    _one_line_error(*run("diagnose", str(f)), "the table contradicts its header")


def test_a_topology_with_another_rank_count():
    _one_line_error(*run("diagnose", RING, "--topology", "dgx-h100:4"),
                    "has 32 ranks but the table has 16")


def test_too_large_input(tmp_path, monkeypatch):
    big = tmp_path / "huge.log"
    big.write_bytes(b"# x\n" * (MAX_BYTES // 4 + 1))
    _one_line_error(*run("diagnose", str(big)), "more than the 4 MiB read")
    _one_line_error(*run("diagnose", "-", stdin=big.read_bytes(), monkeypatch=monkeypatch),
                    "more than the 4 MiB read")


def test_bad_arguments(tmp_path):
    _one_line_error(*run("diagnose", str(tmp_path / "nope.log")), "cannot read")
    _one_line_error(*run("diagnose", NVLS, "--env", "ALGO=Ring"), "give NCCL_NAME=VALUE")
    _one_line_error(*run("diagnose", NVLS, "--topology", "dgx-z9:1"), "unknown topology kind")


def test_help_text(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["diagnose", "--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    assert "nccl-tests binary" in text and "examples:" in text and "collectives diagnose -" in text


def test_the_readmes_example_is_what_the_verb_prints():
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    cmd = "$ python -m collectives_lib diagnose h100x8-2node-ib-allreduce-ring-issue290.txt"
    block = readme.split(cmd, 1)[1].split("```", 1)[0]
    args = block.splitlines()[0].split()
    shown = "\n".join(block.splitlines()[1:]).strip("\n")
    code, out, _ = run("diagnose", RING, *args)
    assert code == 0 and out.rstrip("\n") == shown


def test_every_setting_given_is_used_noted_or_refused():
    code, out, _ = run("diagnose", NVLS, "--env", "NCCL_FOO=1",
                       "--env", "NCCL_NVLS_ENABLE=2", "--json")
    got = json.loads(out)
    why = " ".join(got["machine"]["why"])
    assert code == 0 and "NCCL_FOO=1 given: not modelled" in why
    # 2 is NCCL's default (src/transport/nvls.cc): NVLS where multicast is there
    assert "NCCL_NVLS_ENABLE=2: NCCL's default" in why
    assert "nvls" not in got["machine"]["model_options"]
    _, out, _ = run("diagnose", NVLS, "--env", "NCCL_IB_HCA=mlx5_0", "--json")
    why = " ".join(json.loads(out)["machine"]["why"])
    assert "NCCL_IB_HCA=mlx5_0 given: not modelled" in why
    _one_line_error(*run("diagnose", NVLS, "--env", "NCCL_NVLS_ENABLE=yes"),
                    "NCCL_NVLS_ENABLE=yes given: NCCL reads an integer there")
    # NCCL resets any other value to 0 (src/init.cc): refused rather than guessed
    _one_line_error(*run("diagnose", NVLS, "--env", "NCCL_COLLNET_ENABLE=2"),
                    "NCCL_COLLNET_ENABLE=2 given: NCCL takes 0 or 1")
    code, out, _ = run("diagnose", NVLS, "--env", "NCCL_NVLS_ENABLE=0", "--json")
    assert json.loads(out)["machine"]["model_options"] == {"nvls": False}


@pytest.mark.parametrize("spec", ["ring:8", "switch:8", "torus:2x4", "tpu-v5e:2x4"])
def test_a_topology_that_is_not_a_gpu_preset(spec):
    code, out, err = run("diagnose", NVLS, "--topology", spec)
    _one_line_error(code, out, err, f"topology '{spec}' is not a GPU machine")
    assert "--bandwidth" not in err and "model='ideal'" not in err
    assert "dgx-h100:M" in err


def test_the_help_names_what_diagnose_takes(capsys):
    with pytest.raises(SystemExit):
        main(["diagnose", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--bandwidth" not in text and "ring:N" not in text and "dgx-h100:M" in text


def test_a_damaged_row_is_one_line_and_status_2(tmp_path):
    lines = open(NVLS).read().splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.lstrip()[:1].isdigit())
    lines[at] = lines[at].replace("float", "floa7", 1)
    f = tmp_path / "bad.log"
    f.write_text("\n".join(lines) + "\n")
    _one_line_error(*run("diagnose", str(f)), f"line {at + 1}: type 'floa7'")


def test_nvls_enabled_on_gpus_without_it_is_said_not_pretended():
    a100 = str(RAW / "a100x8-16node-ib-allreduce-coreweave-2022.txt")
    code, out, err = run("diagnose", a100, "--env", "NCCL_NVLS_ENABLE=1")
    assert code == 0, err
    text = " ".join(out.replace("#", " ").split())      # wrapped comment lines joined
    assert "have no NVLink SHARP, so NCCL runs without NVLS" in text
    assert "the model with NVLS on" not in text
