#!/usr/bin/env python3
"""Convert verbatim nccl-tests output (raw/<run_id>.txt) into <run_id>.csv.

Usage: python3 convert.py [run_id ...]   (default: every raw/*.txt)

Data rows are recognised as lines that, after stripping an optional launcher
prefix ("0: ", "[1,0]<stdout>:", "  " indentation), consist of
  size count type redop root  oop_time oop_algbw oop_busbw oop_wrong  ip_time ip_algbw ip_busbw ip_wrong
(13 tokens, current nccl-tests layout) or the same without the root column
(12 tokens, nccl-tests <= 2.10 layout, or 'error' columns).  Rows truncated
in the source (fewer tokens) are kept with the missing trailing fields empty,
provided at least size..oop_busbw are present.  Everything is copied as
printed (strings), nothing is recomputed.

Logs written with NCCL_DEBUG=INFO and 2>&1 can have NCCL's log records cut into the
table (a row's first fields, then log lines, then its time/algbw/busbw fields glued to
the next log line): deinterleave() puts such rows back together first.

The script also checks each row: algbw ~= size/time (1e9 GB/s, time in us) and
busbw ~= algbw * factor(collective, nranks) and prints a report; nranks is
taken from runs.csv when available (column 'gpus_per_node'*'num_nodes').
"""
import csv
import glob
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RAW = os.path.join(HERE, "raw")
HEADER = ["size_bytes", "count", "type", "redop", "root",
          "oop_time_us", "oop_algbw_gbs", "oop_busbw_gbs", "oop_wrong",
          "ip_time_us", "ip_algbw_gbs", "ip_busbw_gbs", "ip_wrong"]
TYPES = {"float", "half", "bfloat16", "double", "int8", "uint8", "int32", "uint32",
         "int64", "uint64", "f8e4m3", "f8e5m2", "int", "char"}
PREFIX = re.compile(r"^\s*(?:\d+:\s|\[\d+,\d+\]<stdout>:|\[\d+\])")
NUM = re.compile(r"^-?\d+(\.\d+)?([eE][-+]?\d+)?$")


def parse_line(line):
    s = PREFIX.sub("", line).strip()
    if not s or s.startswith("#") or s.startswith("|"):
        return None
    toks = s.split()
    if len(toks) < 7 or not toks[0].isdigit() or not toks[1].isdigit():
        return None
    if toks[2] not in TYPES:
        return None
    size, count, typ, redop = toks[0], toks[1], toks[2], toks[3]
    rest = toks[4:]
    # root column present if next token is an integer like -1 / 0 and the
    # total row has 13 tokens (or partial rows whose 5th token is '-1')
    if len(toks) == 13 or (len(toks) < 13 and rest and re.fullmatch(r"-?\d+", rest[0]) and rest[0] == "-1"):
        root, rest = rest[0], rest[1:]
    else:
        root = ""
    vals = rest + [""] * (8 - len(rest))
    return [size, count, typ, redop, root] + vals[:8]


LOGREC = re.compile(r"^([\w.-]+):\d+:\d+ \[\d+\] NCCL (?:INFO|WARN|TRACE)")
FRAGMENT = re.compile(r"^\s*(?:(?:-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|N/A)\s+)*(?:-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|N/A)\s*$")


def deinterleave(lines):
    """Undo stderr interleaved into a table (nccl-tests run with NCCL_DEBUG=INFO and 2>&1).

    stdout is block-buffered per field group, so a data row can come out as
    "   268435456  67108864  float  sum  -1" + "<host>:<pid>:<tid> [0] NCCL INFO ..." on one line,
    then INFO lines, then "   893.35  300.48  300.48  0" glued to the next INFO line, and so on.
    The NCCL log records are cut off at their host name (taken from the file's clean log lines), and
    the number-only fragments that follow an incomplete row are appended to it. Other files pass
    through unchanged.
    """
    hosts = {m.group(1) for m in (LOGREC.match(line) for line in lines) if m}
    if not hosts:
        return lines
    cut = re.compile("(" + "|".join(re.escape(h) for h in sorted(hosts, key=len, reverse=True)) +
                     r"):\d+:\d+ \[\d+\] NCCL ")
    out, pending = [], None
    for line in lines:
        m = cut.search(line)
        head = line[:m.start()] if m else line.rstrip("\n")
        if m and not head.strip():
            continue                                   # a log line
        if pending is not None and FRAGMENT.match(head):
            pending += " " + head.strip()
            if len(pending.split()) >= 13:
                out.append(pending + "\n")
                pending = None
            continue
        if pending is not None:
            out.append(pending + "\n")
            pending = None
        toks = PREFIX.sub("", head).split()
        starts_row = len(toks) >= 3 and toks[0].isdigit() and toks[1].isdigit() and toks[2] in TYPES
        if m and starts_row and len(toks) < 13:
            pending = head.rstrip()                    # a row cut by a log record
        else:
            out.append(head + "\n")
    if pending is not None:
        out.append(pending + "\n")
    return out


def factor(coll, n):
    if coll == "all_reduce":
        return 2.0 * (n - 1) / n
    if coll in ("all_gather", "reduce_scatter", "alltoall"):
        return (n - 1) / n
    return 1.0


def load_meta():
    meta = {}
    p = os.path.join(HERE, "runs.csv")
    if os.path.exists(p):
        with open(p, newline="") as f:
            for r in csv.DictReader(f):
                meta[r["run_id"]] = r
    return meta


def check(run_id, rows, meta):
    m = meta.get(run_id)
    msgs = []
    n = None
    if m:
        try:
            n = int(m["gpus_per_node"]) * int(m["num_nodes"])
        except ValueError:
            n = None
    worst_alg, worst_bus = 0.0, 0.0
    for r in rows:
        size = float(r[0])
        for t_i, a_i, b_i in ((5, 6, 7), (9, 10, 11)):
            try:
                t, a, b = float(r[t_i]), float(r[a_i]), float(r[b_i])
            except ValueError:
                continue
            if t > 0 and size >= 1 << 20:          # ignore rows that round to 0.00
                alg = size / t / 1e3
                worst_alg = max(worst_alg, abs(alg - a) / a if a else 0)
                if n and m and a > 1:
                    fac = factor(m["collective"], n)
                    worst_bus = max(worst_bus, abs(a * fac - b) / b if b else 0)
    msgs.append(f"max rel err algbw vs size/time = {worst_alg:.4f}")
    if n:
        msgs.append(f"max rel err busbw vs algbw*factor(n={n}) = {worst_bus:.4f}")
    return "; ".join(msgs)


# Runs published only as a markdown "size label | busbw" table (in-place busbw).
# Sizes are labelled loosely ("65K", "132K", "33M"); the table is a 2x sweep
# starting at 1 KiB, so row i is 1024 * 2**i bytes.  Only ip_busbw is filled.
BUSBW_ONLY = {rid: (1024, "", "sum", "") for rid in (
    "azure-nda100v4-a100x8-allreduce-busbw-only", "azure-ndh100v5-h100x8-allreduce-nvls-busbw-only",
    "azure-ndh200v5-h200x8-allreduce-nvls-busbw-only", "azure-ndgb200v6-gb200x4-allreduce-ring-busbw-only")}
MDROW = re.compile(r"^\|\s*(\d+)([KMG])\s*\|\s*([0-9.]+)\s*\|")


def parse_busbw_only(run_id, lines):
    start, typ, redop, root = BUSBW_ONLY[run_id]
    rows = []
    for line in lines:
        m = MDROW.match(line.strip())
        if not m:
            continue
        size = start * 2 ** len(rows)
        label = int(m.group(1)) * {"K": 1e3, "M": 1e6, "G": 1e9}[m.group(2)]
        assert 0.5 < label / size < 1.1, (line, size)
        rows.append([str(size), "", typ, redop, root, "", "", "", "", "", "", m.group(3), ""])
    return rows


def main(ids):
    meta = load_meta()
    if not ids:
        ids = sorted(os.path.splitext(os.path.basename(p))[0] for p in glob.glob(os.path.join(RAW, "*.txt")))
    for run_id in ids:
        with open(os.path.join(RAW, run_id + ".txt"), encoding="utf-8") as f:
            lines = f.readlines()
        if run_id in BUSBW_ONLY:
            rows = parse_busbw_only(run_id, lines)
        else:
            rows = [r for r in (parse_line(line) for line in deinterleave(lines)) if r]
        with open(os.path.join(HERE, run_id + ".csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(HEADER)
            w.writerows(rows)
        print(f"{run_id}: {len(rows)} rows; {check(run_id, rows, meta)}")


if __name__ == "__main__":
    main(sys.argv[1:])
