"""The Ultra-Scale Playbook's measured figures and the chapter's comparison with them.

``collectives_lib/data/playbook/measured.csv`` keeps numbers copied from the Playbook
with their sources; ``collectives_lib.book.playbook`` reads them; the chapter
*Parallelism onto the tiers* sets the library's predictions beside them in its section
"Checked against the Ultra-Scale Playbook". These tests hold the data to itself (bars
against the percentages drawn beside them), the chapter's numbers to what the library
computes and to the data (change the data and the prose changes), and the prose's
claims (agreement on one and two nodes, divergence beyond) to the numbers.
"""

from __future__ import annotations

import csv
import re
import tomllib
from dataclasses import replace

import nbformat
import pytest

import collectives_lib as cl
from collectives_lib.book import playbook
from collectives_lib.topology import with_mesh
from conftest import ROOT

DATA = ROOT / "collectives_lib" / "data" / "playbook"
CHAPTER = ROOT / "notebooks" / "parallelism_tiers.ipynb"
COLUMNS = ["id", "series", "x_name", "x", "value", "unit", "kind", "section", "source_repo",
           "source_path", "source_commit", "original_url", "also_in", "note"]
MIB256 = 256 * 2**20
ACT = 8192 * 8192 * 2


# ---------------------------------------------------------------- the data and its sources

def test_csv_has_its_columns_and_every_row_parses():
    with open(DATA / "measured.csv", newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        assert reader.fieldnames == COLUMNS
        rows = list(reader)
    assert len(rows) == len(playbook.figures()) > 40
    for row in rows:
        int(row["x"]), float(row["value"])          # noqa: B018  (they parse)
        assert row["kind"] in {"plot data", "plot annotation", "text"}, row
        assert row["unit"] in {"tokens/s/GPU", "percent", "GB/s"}, row


def test_every_row_names_its_source():
    for f in playbook.figures():
        assert f.original_url == playbook.URL == "https://huggingface.co/spaces/nanotron/ultrascale-playbook"
        assert f.source_repo == "vinjn/nanotron-ultrascale-playbook"
        assert re.fullmatch(r"[0-9a-f]{40}", f.source_commit), f
        assert f.source_path == "index.md" or re.fullmatch(r"fragments/\w+\.html", f.source_path), f
        assert f.section and f.note, f
        if f.kind == "text":                          # the sentences were checked in a translation
            assert f.also_in.startswith("pprp/ultrascale-playbook-zh:"), f


def test_readme_names_every_figure_and_the_commits():
    text = (DATA / "README.md").read_text(encoding="utf-8")
    for fid in {f.id for f in playbook.figures()}:
        assert f"`{fid}`" in text, fid
    for commit in {f.source_commit for f in playbook.figures()} | {"ce85eaab008fe97655cd02a56f7f120092dc8177"}:
        assert commit in text
    assert "EFA" in text and "NVLink" in text


def test_the_data_ships_with_the_package():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["package-data"]["collectives_lib"]
    assert "data/playbook/*.csv" in patterns and "data/playbook/*.md" in patterns


@pytest.mark.parametrize("fid", ["tp_scaling", "tp_sp_scaling", "dp_scaling"])
def test_drawn_percentages_are_the_bars_changes(fid):
    # a wrong bar or a wrong annotation copied from the figure shows here
    bars = playbook.measured(fid, "tokens_per_s_per_gpu")
    change = playbook.measured(fid, "change_from_previous")
    xs = list(bars)
    assert list(change) == xs[1:]
    for before, x in zip(xs, xs[1:], strict=False):
        assert round(100 * (bars[x] / bars[before] - 1), 1) == change[x], (fid, x)


def test_bandwidth_series_cover_1_to_64_nodes_and_gather_matches_scatter():
    for series in ("all_reduce", "all_gather", "reduce_scatter"):
        assert list(playbook.measured("comm_bandwidth", series)) == [1, 2, 4, 8, 16, 32, 64]
    ag, rs = (playbook.measured("comm_bandwidth", s) for s in ("all_gather", "reduce_scatter"))
    assert all(abs(ag[n] / rs[n] - 1) < 0.05 for n in ag)      # the same bytes, either way
    ar = playbook.measured("comm_bandwidth", "all_reduce")
    assert all(ar[a] > ar[b] for a, b in zip(ar, list(ar)[1:], strict=False))


def test_the_sentences_agree_with_the_figures():
    # "around 43%" across nodes is the figure's 8 -> 16 drop, rounded
    assert playbook.measured("tp_cross_node_text", "drop_stated")[16] == 43
    assert round(-playbook.measured("tp_scaling", "change_from_previous")[16]) == 43
    assert playbook.measured("pp_1f1b_text", "drop_stated") == {16: 14}


def test_unknown_figure_is_named():
    with pytest.raises(cl.CollectivesError, match="no Playbook figure 'tp'"):
        playbook.measured("tp", "all_reduce")


# ---------------------------------------------------------------- the chapter's comparison

def _run_chapter(monkeypatch, figures=None) -> dict:
    """The chapter's code cells up to its exercises (figures left out), in one namespace."""
    monkeypatch.setenv("MPLBACKEND", "Agg")
    if figures is not None:
        monkeypatch.setattr(playbook, "figures", lambda: figures)
    nb = nbformat.read(CHAPTER, as_version=4)
    end = next(i for i, c in enumerate(nb.cells) if c.source.startswith("## Exercises"))
    ns: dict = {}
    for cell in nb.cells[:end]:
        src = cell.source
        if cell.cell_type != "code" or src.startswith("# Colab only") or "draw." in src:
            continue
        exec(compile(src, f"{CHAPTER.name}:{cell.get('id')}", "exec"), ns)
    return ns


@pytest.fixture(scope="module")
def chapter():
    with pytest.MonkeyPatch.context() as mp:
        yield _run_chapter(mp)


def busbw(collective, nodes):
    topo = cl.parse_topology(f"dgx-h100:{nodes}")
    return cl.estimate(collective, topo, MIB256, model="nccl").busbw


def test_section_is_in_the_chapter():
    nb = nbformat.read(CHAPTER, as_version=4)
    heads = [c.source.splitlines()[0] for c in nb.cells
             if c.cell_type == "markdown" and c.source.startswith("## ")]
    # the last section before the exercises
    assert heads[-2:] == ["## Checked against the Ultra-Scale Playbook", "## Exercises"]


def test_bandwidth_numbers_are_the_librarys_and_the_datas(chapter):
    ar = playbook.measured("comm_bandwidth", "all_reduce")
    ag = playbook.measured("comm_bandwidth", "all_gather")
    fr = cl.format_rate
    for n in (1, 2, 4, 64):
        assert chapter[f"pb_ar{n}_m"] == fr(busbw("all_reduce", n))
        assert chapter[f"pb_ar{n}"] == fr(ar[n] * 1e9)
    for n in (1, 64):
        assert chapter[f"pb_ag{n}_m"] == fr(busbw("all_gather", n))
        assert chapter[f"pb_ag{n}"] == fr(ag[n] * 1e9)
    one = cl.estimate("all_reduce", cl.parse_topology("dgx-h100:1"), MIB256, model="nccl")
    assert chapter["pb_ceil"] == fr(MIB256 / one.bound.time)
    assert chapter["pb_x64"] == f"{busbw('all_reduce', 64) / (ar[64] * 1e9):.0f}"


def test_the_bandwidth_prose_holds(chapter):
    """One and two nodes agree within a few percent read as busbw; from four on the
    model keeps well over the measured bandwidth; read as algbw the one-node figure
    would sit far above NCCL's model but not above the NVSwitch's bound."""
    ar = playbook.measured("comm_bandwidth", "all_reduce")
    for n in (1, 2):
        assert abs(ar[n] * 1e9 / busbw("all_reduce", n) - 1) < 0.05
    for n in (4, 8, 16, 32, 64):
        assert busbw("all_reduce", n) > 1.5 * ar[n] * 1e9
    one = cl.estimate("all_reduce", cl.parse_topology("dgx-h100:1"), MIB256, model="nccl")
    assert ar[1] * 1e9 <= MIB256 / one.bound.time
    assert ar[1] * 1e9 > 1.5 * one.algbw
    ag = playbook.measured("comm_bandwidth", "all_gather")
    assert ag[1] * 1e9 < busbw("all_gather", 1)          # "parts from the start"


def by_hand():
    """The TP comparison computed here, apart from the chapter's code."""
    pod = cl.parse_topology("dgx-h100:16")
    t = {k: cl.estimate("all_reduce", with_mesh(pod, {"dp": 128 // k, "tp": k}), ACT,
                        axes=["tp"], model="nccl").time for k in (4, 8, 16, 32)}
    r = {4: t[8] / t[4], 8: t[16] / t[8], 16: t[32] / t[16]}
    bw = playbook.measured("comm_bandwidth", "all_reduce")
    # time ratio = inverse busbw ratio x ratio of the factors 2(n-1)/n
    r_bw = {8: bw[1] / bw[2] * (30 / 16) / (14 / 8), 16: bw[2] / bw[4] * (62 / 32) / (30 / 16)}
    d = {k: v / 100 for k, v in playbook.measured("tp_scaling", "change_from_previous").items()}
    # throughput ratio when TP doubles: (C + M) / (C + 2 r M); share f = M / (C + M)
    f4 = (1 / (1 + d[8]) - 1) / (2 * r[4] - 1)
    f8 = 2 * r[4] * f4 / (1 - f4 + 2 * r[4] * f4)
    out = {}
    for name, rr in (("model", r), ("seen", r_bw)):
        f16 = 2 * rr[8] * f8 / (1 - f8 + 2 * rr[8] * f8)
        out[name] = {16: 1 / (1 - f8 + 2 * rr[8] * f8) - 1, 32: 1 / (1 - f16 + 2 * rr[16] * f16) - 1}
    return r, r_bw, f4, f8, d, out


def test_tp_numbers_are_computed(chapter):
    r, r_bw, f4, f8, d, pred = by_hand()
    assert chapter["pb_r4"] == f"{r[4]:.2f}" and chapter["pb_r8"] == f"{r[8]:.2f}"
    assert chapter["pb_r16"] == f"{r[16]:.2f}"
    assert chapter["pb_r8s"] == f"{r_bw[8]:.2f}" and chapter["pb_r16s"] == f"{r_bw[16]:.2f}"
    assert chapter["pb_f4"] == f"{f4:.0%}" and chapter["pb_f8"] == f"{f8:.0%}"
    for k in (8, 16, 32):
        assert chapter[f"pb_seen{k}"] == f"{d[k]:.1%}"
    for k in (16, 32):
        assert chapter[f"pb_p{k}"] == f"{pred['model'][k]:.0%}"
        assert chapter[f"pb_p{k}s"] == f"{pred['seen'][k]:.0%}"
    pod = cl.parse_topology("dgx-h100:16")
    algs = [cl.estimate("all_reduce", with_mesh(pod, {"dp": 128 // k, "tp": k}), ACT,
                        axes=["tp"], model="nccl").nccl_algorithm for k in (4, 8)]
    assert [chapter["pb_alg4"], chapter["pb_alg8"]] == algs


def test_the_tp_prose_holds():
    """Two nodes: the two r agree and both predict less than the measured drop; four
    nodes: the measured bandwidth predicts the drop, NCCL's model much less."""
    r, r_bw, f4, f8, d, pred = by_hand()
    assert 0 < f4 < f8 < 1
    assert abs(r[8] / r_bw[8] - 1) < 0.15
    assert d[16] < pred["model"][16] < 0 and d[16] < pred["seen"][16] < 0
    assert abs(pred["seen"][32] - d[32]) < 0.03
    assert pred["model"][32] - d[32] > 0.1
    assert r_bw[16] > 1.5 * r[16]


def test_the_prose_follows_the_data(monkeypatch, chapter):
    """Change the Playbook's numbers and the chapter's measured and predicted numbers
    change with them: none is typed into the chapter."""
    ar1 = playbook.measured("comm_bandwidth", "all_reduce")[1]
    tp16 = playbook.measured("tp_scaling", "change_from_previous")[16]
    changed = tuple(replace(f, value=2 * f.value) if f.id == "comm_bandwidth" else
                    replace(f, value=f.value - 1) if f.series == "change_from_previous" else f
                    for f in playbook.figures())
    ns = _run_chapter(monkeypatch, changed)
    assert ns["pb_ar1"] == cl.format_rate(2 * ar1 * 1e9) != chapter["pb_ar1"]
    assert ns["pb_seen16"] == f"{(tp16 - 1) / 100:.1%}" != chapter["pb_seen16"]
    for name in ("pb_f4", "pb_p16", "pb_p32s", "pb_x64"):
        assert ns[name] != chapter[name], name
    assert ns["pb_ar1_m"] == chapter["pb_ar1_m"]          # the library's side is the library's


def test_no_number_is_typed_into_the_sections_prose():
    nb = nbformat.read(CHAPTER, as_version=4)
    start = next(i for i, c in enumerate(nb.cells)
                 if c.source.startswith("## Checked against the Ultra-Scale Playbook"))
    end = next(i for i, c in enumerate(nb.cells) if c.source.startswith("## Exercises"))
    typed = re.compile(r"\d[\d.]*\s*(%|GB/s|TB/s|µs|ms|times\b)")
    for cell in nb.cells[start:end]:
        if cell.cell_type == "markdown":
            prose = re.sub(r"\{eval\}`[^`]+`|\$[^$]+\$", "", cell.source)
            assert not typed.findall(prose), typed.findall(prose)
