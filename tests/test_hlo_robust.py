"""Hostile input to the HLO reader: malformed groups, endless or huge files, random damage.

Every refusal is one line (a CollectivesError; exit 2 from the command line),
no input grows memory without bound, and no damage to a real module makes the
reader fail in any other way.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import collectives_lib as cl
from collectives_lib.errors import CollectivesError
from collectives_lib.hlo import parse_hlo, read_hlo, time_hlo

ROOT = Path(__file__).resolve().parents[1]
TPU = ROOT / "tests" / "data" / "hlo_tpu"
CPU = ROOT / "tests" / "data" / "hlo"

MODULE = """HloModule m, num_partitions=8
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %main (p: f32[8]) -> f32[8] {
  %p = f32[8]{0} parameter(0)
  ROOT %ar = f32[8]{0} all-reduce(%p), channel_id=1, replica_groups=GROUPS, use_global_device_ids=true, to_apply=%add
}
"""


@pytest.mark.parametrize("groups, message", [
    ("[0,4]<=[0]", "a dimension of 0 devices"),
    ("[1000000,1000000]<=[1000000000000]", "names more than 1,048,576 devices"),
    ("[2,4]<=[9]", "2x4 is not 9 devices"),
    ("[8]<=[8]", "must be [groups,size]<=[...]"),
    ("[2,4]<=[2,4]T(0,0)", "T(0,0) is not a permutation of 2 dimensions"),
    ("[1,8]<=[8]T(1,0)", "T(1,0) is not a permutation of 1 dimensions"),
    ("mesh['x'=0] {'x'}", "a dimension of 0 devices"),
    ("mesh['x'=1048577] {'x'}", "names more than 1,048,576 devices"),
    ("{{0,1,2,3,4,5,6,99999999999}}", "beyond 1,048,576"),
    ("{{0,1},{2,3,4}}", "has groups of different sizes"),
], ids=["zero", "huge", "count", "one_dim", "perm", "perm_dims", "mesh_zero", "mesh_huge",
        "huge_id", "ragged"])
def test_malformed_groups_are_one_line(groups, message):
    start = time.process_time()
    with pytest.raises(CollectivesError) as err:
        parse_hlo(MODULE.replace("GROUPS", groups))
    assert message in str(err.value) and "\n" not in str(err.value)
    assert str(err.value).startswith("line 9: all-reduce %ar: ")
    assert time.process_time() - start < 1


@pytest.mark.parametrize("header", [
    "HloModule m, num_partitions=0", "HloModule m, num_partitions=100000000000",
    "HloModule m, num_partitions=1048576, replica_count=2"])
def test_impossible_device_counts_are_refused(header):
    with pytest.raises(CollectivesError, match="at least 1 and at most 1,048,576 devices"):
        parse_hlo(MODULE.replace("HloModule m, num_partitions=8", header)
                  .replace("GROUPS", "{}"))


@pytest.mark.parametrize("shape", ["f32[99999999999999999999]", "f32[4294967296,4294967296]"])
def test_impossible_shapes_are_refused(shape):
    with pytest.raises(CollectivesError, match="line 9: malformed all-reduce|line 9: all-reduce"):
        parse_hlo(MODULE.replace("ROOT %ar = f32[8]{0}", f"ROOT %ar = {shape}{{0}}")
                  .replace("GROUPS", "{}"))


def _limited(code: str, memory_gb: float = 2.0, stdin=None, timeout: float = 120):
    """Run ``code`` in a fresh interpreter whose address space is capped."""
    prelude = textwrap.dedent(f"""
        import resource, sys
        cap = int({memory_gb} * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        sys.path.insert(0, {str(ROOT)!r})
    """)
    return subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], input=stdin,
                          capture_output=True, timeout=timeout)


def test_dev_zero_is_refused_at_once_without_memory():
    run = _limited("""
        from collectives_lib.cli import main
        sys.exit(main(["hlo", "/dev/zero", "-t", "tpu-v5e:4x2"]))
    """, memory_gb=1.5)
    err = run.stderr.decode()
    assert run.returncode == 2 and err.count("\n") == 1, err
    assert "/dev/zero is not HLO text: no 'HloModule' line in its first 64 KiB" in err


def test_endless_hlo_on_stdin_stops_at_the_limit():
    # an HloModule line, then lines forever: refused past 128 MiB, under a 1.5 GB cap
    feeder = subprocess.Popen(
        [sys.executable, "-c", "import sys\nsys.stdout.write('HloModule m, num_partitions=8\\n')\n"
         "line = '  %x = f32[8]{0} parameter(0)\\n' * 4096\n"
         "try:\n    while True: sys.stdout.write(line)\nexcept BrokenPipeError:\n    pass\n"],
        stdout=subprocess.PIPE)
    try:
        run = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(f"""
                import resource, sys
                cap = int(1.5 * 2**30)
                resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
                sys.path.insert(0, {str(ROOT)!r})
                from collectives_lib.cli import main
                sys.exit(main(["hlo", "-", "-t", "tpu-v5e:4x2"]))
            """)], stdin=feeder.stdout, capture_output=True, timeout=120)
    finally:
        feeder.kill()
        feeder.wait()
    err = run.stderr.decode()
    assert run.returncode == 2 and err.count("\n") == 1, err
    assert "standard input is larger than 128 MiB" in err


def test_a_large_file_that_is_not_hlo_costs_one_chunk(tmp_path):
    big = tmp_path / "big.txt"
    with open(big, "w") as f:
        for _ in range(50):
            f.write("not an hlo module, just text\n" * 36000)        # 50 MB
    start = time.perf_counter()
    with pytest.raises(CollectivesError, match="is not HLO text: no 'HloModule' line in its "
                                               "first 64 KiB"):
        read_hlo(str(big))
    assert time.perf_counter() - start < 1


def test_binary_and_nul_bytes_are_refused(tmp_path):
    blob = tmp_path / "nul.txt"
    blob.write_bytes(b"HloModule m\n\x00\x00\x00")
    with pytest.raises(CollectivesError, match="holds NUL bytes"):
        read_hlo(str(blob))


# ---------------------------------------------------------------------------
# random damage to real modules: a CollectivesError or an answer, nothing else
# ---------------------------------------------------------------------------

TEXTS = [p.read_text() for p in sorted(TPU.glob("*.txt"))] + [
    (CPU / n).read_text() for n in ("fsdp.txt", "collectives.before_optimizations.txt",
                                    "fsdp_scan.cpu_after_optimizations.txt")]
_COLLECTIVE_LINES = [[i for i, ln in enumerate(t.splitlines())
                      if any(k in ln for k in ("all-gather", "all-reduce", "reduce-scatter",
                                               "all-to-all", "collective-permute", "while("))]
                     for t in TEXTS]
_JUNK = st.sampled_from(["", "{", "}", "(", ")", "[", "]", ",", "=", "%", "\"", "'", "<=",
                         "99999999999999999999", "0", "-1", "T(1,0)", "mesh[", "/*", "*/",
                         "all-gather(", "replica_groups={}", "\x00", "é", "\n"])


@st.composite
def damaged(draw):
    k = draw(st.integers(0, len(TEXTS) - 1))
    lines = TEXTS[k].splitlines()
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.sampled_from(_COLLECTIVE_LINES[k] or [0]))
        line = lines[i]
        at = draw(st.integers(0, len(line)))
        cut = draw(st.integers(0, 40))
        lines[i] = line[:at] + draw(_JUNK) + line[at + cut:]
        if draw(st.booleans()):
            j = draw(st.integers(0, len(lines) - 1))
            lines.insert(j, lines[i])
    return "\n".join(lines)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(damaged())
def test_damaged_modules_answer_or_refuse_in_one_line(text):
    try:
        module = parse_hlo(text)
    except CollectivesError as err:
        assert "\n" not in str(err)
        return
    for c in module:
        assert c.nbytes >= 0 and (c.repeats is None or c.repeats >= 0)
    topo = {8: cl.tpu_slice("v5e", "4x2"), 16: cl.tpu_slice("v5e", "4x4")}.get(module.num_devices)
    if topo is None or len(module) > 40:
        return
    try:
        timing = time_hlo(module, topo)
    except CollectivesError as err:
        assert "\n" not in str(err)
        return
    assert timing.total_bound <= timing.total * (1 + 1e-9)


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=400))
def test_any_text_answers_or_refuses(text):
    for candidate in (text, "HloModule m, num_partitions=8\n" + text,
                      "HloModule m\nENTRY %e (p: f32[]) -> f32[] {\n" + text + "\n}\n"):
        try:
            parse_hlo(candidate)
        except CollectivesError as err:
            assert "\n" not in str(err)
