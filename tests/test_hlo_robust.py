"""Hostile input to the HLO reader: malformed groups, endless or huge files, random damage.

Every refusal is one line (a CollectivesError; exit 2 from the command line),
no input grows memory without bound, and no damage to a real module makes the
reader fail in any other way.
"""

from __future__ import annotations

import random
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
from collectives_lib.hlo import parse as hlo_parse
from collectives_lib.hlo import parse_hlo, read_hlo, time_hlo
from collectives_lib.hlo import text as hlo_text

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


# ---------------------------------------------------------------------------
# large and hostile texts: bounded work, or one line naming the limit
# ---------------------------------------------------------------------------

ONE_AR = """HloModule m, num_partitions=8
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
ENTRY %main (p: f32[8]) -> f32[8] {
  %p = f32[8]{0} parameter(0)
BODY
  ROOT %r = f32[8]{0} copy(%p)
}
"""


_GROUPS = "replica_groups=[2,4]<=[8], use_global_device_ids=true, to_apply=%add"


def _ars(n: int, operand: str = "%p") -> str:
    return "\n".join(f"  %ar.{i} = f32[8]{{0}} all-reduce({operand}), "
                     f"channel_id={i + 1}, {_GROUPS}" for i in range(n))


def _refused(text: str, **kw) -> str:
    with pytest.raises(CollectivesError) as err:
        parse_hlo(text, **kw)
    message = str(err.value)
    assert "\n" not in message and len(message) <= 280, message
    return message


@pytest.mark.parametrize("filler", ["\n", "x\n", "   \t\n", "no brackets here\n"],
                         ids=["blank", "word", "spaces", "words"])
def test_blank_and_stray_lines_make_no_objects(filler):
    # a scan in C jumps over them: the reader's peak is a few kilobytes, not a list
    # of every line (8 bytes a line: 40 MB for these 5,000,000 lines)
    import tracemalloc
    text = "HloModule m, num_partitions=8\n" + filler * 5_000_000
    tracemalloc.start()
    try:
        message = _refused(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert message == "HLO module m has no ENTRY computation"
    assert peak < 4 * 2**20, peak


@pytest.mark.parametrize("limit, value, lines, message", [
    ("MAX_INSTRUCTIONS", 1000, "  %x.{i} = f32[8]{{0}} add(%p, %p)",
     "HLO module m holds more than 1,000 instructions, the most read here"),
    ("MAX_READ", 1000, "  %x.{i} = f32[8]{{0}} parameter(0)",
     "HLO module m holds more than 1,000 lines read in full (instructions the reader "
     "walks, computations, brackets), the most read here"),
    ("MAX_READ", 1000, "  (", "HLO module m holds more than 1,000 lines read in full"),
    ("MAX_LOOPS", 10, "  %w.{i} = f32[8]{{0}} while(%p), condition=%add, body=%add",
     "HLO module m holds more than 10 loops (while)"),
    ("MAX_COMMENTS", 10, "  %x.{i} = f32[8]{{0}} /* a */ add(%p, %p)",
     "HLO module m holds more than 10 /* comments */"),
], ids=["instructions", "read-in-full", "brackets", "loops", "comments"])
def test_a_module_past_a_limit_is_refused_in_one_line(monkeypatch, limit, value, lines,
                                                      message):
    monkeypatch.setattr(hlo_parse, limit, value)
    body = "\n".join(lines.format(i=i) for i in range(2 * value))
    got = _refused(ONE_AR.replace("BODY", body))
    assert got.startswith(message) and got.endswith(": pass a smaller module"), got


def test_collectives_past_the_limit_are_counted_then_refused():
    text = ONE_AR.replace("BODY", _ars(30))
    assert _refused(text, max_collectives=20) == (
        "HLO module m runs 30 collectives; at most 20 are read: pass a smaller module")
    assert len(parse_hlo(text, max_collectives=30)) == 30
    assert len(parse_hlo(text, max_collectives=None)) == 30
    # past four collective instructions per collective allowed: in the cheap pass
    assert _refused(ONE_AR.replace("BODY", _ars(81)), max_collectives=20).startswith(
        "HLO module m holds more than 80 collective instructions")
    assert hlo_parse.MAX_COLLECTIVES == 20_000
    with pytest.raises(CollectivesError, match="max_collectives must be a whole"):
        parse_hlo(text, max_collectives=-1)


def test_operands_left_in_the_text_are_found_back_from_their_user(monkeypatch):
    # unoptimized text names operands without their shapes: the reader finds the
    # instruction it left unread, by a search back from its user or, past the
    # searches' budget, in an index made once; both give the same module
    defs = "\n".join(f"  %x.{i} = f32[{i + 1}]{{0}} add(%p, %p)" for i in range(300))
    uses = "\n".join(f"  %ar.{i} = f32[{i + 1}]{{0}} all-reduce(%x.{i}), "
                     f"channel_id={i + 1}, {_GROUPS}" for i in range(300))
    text = ONE_AR.replace("BODY", defs + "\n" + uses)
    searched = parse_hlo(text)
    assert [c.operands[0].dims for c in searched] == [(i + 1,) for i in range(300)]
    monkeypatch.setattr(hlo_parse, "_SEARCH_BUDGET", 0)
    monkeypatch.setattr(hlo_parse, "_SEARCH_SLACK", 0)
    assert parse_hlo(text) == searched
    with pytest.raises(CollectivesError, match=r"line 9: all-reduce %ar: operand "
                                               r"%nowhere is not defined in the"):
        parse_hlo(ONE_AR.replace("BODY", "  %ar = f32[8]{0} all-reduce(%nowhere), "
                                         "to_apply=%add"))


@pytest.mark.parametrize("where", ["iota", "explicit", "pairs", "partitions", "channel",
                                   "mesh"])
def test_numbers_of_thousands_of_digits_are_one_line(where):
    big = "9" * 5000                    # (Python reads no int of 4,300 digits)
    ar = "  %ar = f32[8]{0} all-reduce(%p), channel_id=1, replica_groups=GROUPS, " \
         "use_global_device_ids=true, to_apply=%add"
    groups = {"iota": f"[1,{big}]<=[8]", "explicit": f"{{{{0,{big}}}}}",
              "mesh": f"mesh['x'={big}] {{'x'}}"}.get(where, "[2,4]<=[8]")
    text = ONE_AR.replace("BODY", ar.replace("GROUPS", groups))
    if where == "pairs":
        text = text.replace("all-reduce(%p)", "collective-permute(%p)").replace(
            "replica_groups=[2,4]<=[8], use_global_device_ids=true, to_apply=%add",
            f"source_target_pairs={{{{0,{big}}}}}")
    elif where == "partitions":
        text = text.replace("num_partitions=8", f"num_partitions={big}")
    elif where == "channel":
        text = text.replace("channel_id=1", f"channel_id={big}")
    _refused(text)


def test_tuples_nested_thousands_deep_are_one_line():
    deep = "(" * 5000 + "f32[8]{0}" + ")" * 5000
    message = _refused(ONE_AR.replace("BODY", f"  %ar = {deep} all-reduce(%p), "
                                              f"to_apply=%add"))
    assert message.startswith("line 9: all-reduce %ar: shape")
    assert "nests tuples more than 32 deep" in message


def test_a_megabyte_of_brackets_in_an_attribute_is_refused_within_a_budget(monkeypatch):
    # brackets nested more than eight deep are walked one at a time, within a budget
    monkeypatch.setattr(hlo_text, "MAX_SCANNED", 20_000)
    junk = "{" * 30_000 + "}" * 30_000
    message = _refused(ONE_AR.replace("BODY", _ars(1)).replace(
        "to_apply=%add", f"to_apply=%add, junk={junk}", 1))
    assert message == ("line 9: malformed all-reduce %ar.0: brackets nested over 8 "
                       "deep or unbalanced: the text makes the reader walk through "
                       "more than 20,000 brackets, quotes and commas")
    # nine deep (past the expression in C), within the budget: read as before
    nine = "{" * 9 + "}" * 9
    module = parse_hlo(ONE_AR.replace("BODY", _ars(1)).replace(
        "to_apply=%add", f"to_apply=%add, junk={nine}", 1))
    assert module[0].replica_groups == ((0, 1, 2, 3), (4, 5, 6, 7))


def test_bracket_expressions_agree_with_the_scanner():
    rng = random.Random(5)
    alphabet = "ab%, ()[]{}\"'\\0"
    fast = 0
    for _ in range(6000):
        text = rng.choice("([{") + "".join(rng.choice(alphabet)
                                           for _ in range(rng.randint(0, 30))) + ")"
        try:
            want = hlo_text._scan(text, 0, -1, True)[0]
        except hlo_text.Bad:
            want = None
        try:
            got = hlo_text.match(text, 0)
        except hlo_text.Bad:
            got = None
        assert got == want, text
        assert hlo_text.split_top(text) == hlo_text._scan(text, 0, 0, False)[1], text
        fast += hlo_text._MATCHED.match(text, 0) is not None
    assert fast > 2000                    # (the expression in C answered, and agreed)


def test_comments_are_removed_in_one_pass():
    rng = random.Random(9)
    for _ in range(3000):
        line = "".join(rng.choice("/*a ") for _ in range(rng.randint(0, 24)))
        assert hlo_parse._uncomment(line) == hlo_parse._COMMENT.sub("", line), line
