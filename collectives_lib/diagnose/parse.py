"""Any nccl-tests output, read into one frozen value.

:func:`parse_output` reads what a ``*_perf`` binary of NVIDIA/nccl-tests prints
(``all_reduce_perf``, ``all_gather_perf``, ``reduce_scatter_perf``,
``alltoall_perf``, ``broadcast_perf``, ``reduce_perf``, ``sendrecv_perf``,
``gather_perf``, ``scatter_perf``), as a reader pastes it: with or without
its header, behind a launcher's prefix (``0: `` from ``srun -l``,
``[1,0]<stdout>:`` from ``mpirun --tag-output``), indented in a Markdown
block, with other programs' lines interleaved. It keeps

* the header: ``# nccl-tests version … nccl-library=22902``, ``# Collective
  test starting: all_reduce_perf``, the ``# nThread 1 nGpus 1 minBytes 8 …``
  line (every field it names), the ``# Using devices`` block (one
  :class:`Device` per ``#  Rank`` line, and whether the list is whole);
* the table, one :class:`Row` per size, each with its out-of-place and
  in-place :class:`Timing` (time, algbw, busbw and ``#wrong``, which is
  ``None`` where nccl-tests prints ``N/A``: validation off with ``-c 0``,
  or a half it does not check). Its layout comes from the column header
  when there is one, else from the rows: the current one (``size count type
  redop root`` and two groups of ``time algbw busbw #wrong``), the one
  before nccl-tests 2.13 (no ``root`` column, and an ``error`` column that
  is the largest difference, not a count), the oldest (``bytes N type op``,
  times in ms), per-iteration columns (``-I 1``: ``i_min i_max i_p99
  i_cv%``), a timestamp (``-S 1``) and CPU time (``-C 1``);
* the footer: ``# Out of bounds values : 0 OK`` and ``# Avg bus bandwidth``;
* NCCL's own lines when ``NCCL_DEBUG=INFO`` was set (:class:`NcclInfo`):
  its version, ranks and nodes, ``MNNVL``, whether NVLS multicast is
  available, its channels, the network (``Using network IB``, the NICs of
  ``NET/IB : Using [0]mlx5_0:1/IB …``), GPUDirect RDMA (``GDR 1``, ``via
  NET/IB/0/GDRDMA``), PXN, the transports of its channels (``P2P/CUMEM``,
  ``SHM``, ``NET/Socket``) and every ``NCCL_X set by environment to Y``;
* the settings a command line states (``NCCL_ALGO=Ring ./all_reduce_perf``,
  ``-x NCCL_PROTO=Simple``, ``export NCCL_NVLS_ENABLE=0``) and its ``-g``;
* where a partial table stopped (:attr:`Output.stopped`).

What it refuses, with one line (:class:`~collectives_lib.CollectivesError`)
that names the line, the value and what nccl-tests prints there: an empty
input, input with no nccl-tests row, more than :data:`MAX_BYTES`, a line of
the table that starts like a row (a size and a count) but does not read as
one (a type or redop nccl-tests does not have, ``nan``, a row cut short with
more rows after it), a size above :data:`MAX_SIZE`, a negative time or
bandwidth, a time of 0 for a size above 0, and a table that contradicts
itself or its header: a row wider than its column header, an algbw that is
not size over time (within the rounding of the digits printed), a row whose
busbw over algbw is not the other rows' (it is a function of the rank
count), one that names another rank count than a whole ``# Using devices``
list, and a type, redop or root that changes in the middle of a sweep
(``-d all``, ``-o all`` and ``-r -1`` print a whole sweep for each).

>>> out = parse_output('''
... #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
...    134217728      33554432     float     sum      -1    613.3  218.85  382.99      0    614.3  218.48  382.34      0
... ''')
>>> out.rows[0].nbytes, out.rows[0].out_of_place.busbw, out.ranks_from_table()
(134217728, 382.99, (8, 8))

Introduced in the chapter *Running and reading NCCL*.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace

from ..errors import CollectivesError
from ..units import format_bytes
from .consistency import check_consistency, ratio_interval, time_unit
from .info import INFO_PATTERNS, NcclInfo, InfoReader

#: The most input read: an ``NCCL_DEBUG=INFO`` log of a few nodes fits; a bigger
#: one is better cut to rank 0's lines.
MAX_BYTES = 4 * 2**20

#: The largest size a row may name: nccl-tests' buffers live in one GPU's memory
#: (it cuts ``-e`` to (memory - reserve - 1 GiB) / 3, src/common.cu), and no GPU
#: holds 2^50 B (1 PiB).
MAX_SIZE = 2**50

#: nccl-tests' type names (``-d``), old and new, and the library's dtypes.
TYPES = {"float": "float32", "half": "float16", "bfloat16": "bfloat16", "double": "float64",
         "int8": "int8", "uint8": "uint8", "int32": "int32", "uint32": "uint32",
         "int64": "int64", "uint64": "uint64", "f8e4m3": "float8_e4m3",
         "f8e5m2": "float8_e5m2", "char": "int8", "int": "int32"}
#: nccl-tests' reduction names (``-o``); ``none`` for the collectives that do not reduce.
REDOPS = ("sum", "prod", "max", "min", "avg", "mulsum", "none")
#: The collectives of the ``*_perf`` binaries (their name without ``_perf``).
PROGRAMS = ("all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast", "reduce",
            "sendrecv", "gather", "scatter", "hypercube", "alltoallv")

_PREFIXES = (
    re.compile(r"^\[\d+,\d+\]<std(?:out|err)>:\s?"),          # mpirun --tag-output
    re.compile(r"^\s*\d+:\s"),                                # srun -l
    re.compile(r"^\[\d+\]\s"),                                # mpirun -prepend-rank
    re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z?\s"),   # kubectl logs --timestamps
    re.compile(r"^\s*>\s?"),                                  # a quoted block
)
_INT = re.compile(r"^-?\d+$")
_NUM = re.compile(r"^-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$")
_DATE = re.compile(r"^\d{4}-\d\d-\d\d$")
_CLOCK = re.compile(r"^\d\d:\d\d:\d\d$")
_RANK = re.compile(r"\bRank\s+(\d+)\s+(?:Group\s+(\d+)\s+)?(?:Pid\s+(\d+)\s+)?on\s+(\S+)\s+"
                   r"device\s+(\d+)\s+\[([^\]]*)\]\s*(.*?)\s*$")
_HEADER_FIELDS = {
    "nThread": r"\bnThreads? (\d+)", "nGpus": r"\bnGpus (\d+)", "minBytes": r"\bminBytes (\d+)",
    "maxBytes": r"\bmaxBytes (\d+)", "step": r"\bstep: (\d+)\((\w+)\)",
    "warmup_iters": r"\bwarmup iters: (\d+)", "iters": r"(?<!warmup )(?<!agg )\biters: (\d+)",
    "agg_iters": r"\bagg iters: (\d+)", "validation": r"\bvalidation: (\d+)",
    "graph": r"\bgraph: (\d+)", "unalign": r"\bunalign: (\d+)",
}
_PROGRAM = re.compile(r"\b(" + "|".join(PROGRAMS) + r")_perf(?:_mpi)?\b")
_SETTING = re.compile(r"(?<![\w$])(NCCL_[A-Z0-9_]+)=(\"[^\"]*\"|'[^']*'|[^\s;]+)")


@dataclass(frozen=True)
class Device:
    """One ``#  Rank`` line: which GPU of which host a rank ran on."""

    rank: int
    group: int | None
    pid: int | None
    host: str
    device: int
    bus: str
    name: str


@dataclass(frozen=True)
class Timing:
    """One half of a row (out-of-place or in-place) as printed."""

    time_us: float          # microseconds (the oldest nccl-tests printed ms; read as us)
    algbw: float            # GB/s (1e9 bytes/s), nccl-tests' size / time
    busbw: float            # GB/s, algbw times the collective's factor
    wrong: int | None = None      # '#wrong'; None where nccl-tests prints N/A
    error: float | None = None    # before nccl-tests 2.13: the largest difference found
    printed: tuple[str, ...] = field(default=(), compare=False)   # the columns as printed

    @property
    def checked(self) -> bool:
        return self.wrong is not None or self.error is not None


@dataclass(frozen=True)
class Row:
    """One size of the table."""

    line: int               # 1-based line number in the input
    nbytes: int             # nccl-tests' size column
    count: int
    type: str               # nccl-tests' name: float, half, bfloat16, ...
    redop: str | None       # None in layouts without the column
    root: int | None
    out_of_place: Timing | None
    in_place: Timing | None
    complete: bool = True   # False: the line stops before its last column

    @property
    def dtype(self) -> str:
        return TYPES[self.type]

    @property
    def timing(self) -> Timing | None:
        """The half the diagnosis compares: out-of-place, else in-place."""
        return self.out_of_place or self.in_place

    @property
    def wrong(self) -> int:
        """Elements found wrong in either half (0 where not checked)."""
        return sum(t.wrong or 0 for t in (self.out_of_place, self.in_place) if t is not None)




@dataclass(frozen=True)
class Output:
    """Everything read from one nccl-tests output."""

    rows: tuple[Row, ...]
    program: str | None = None          # "all_reduce" for all_reduce_perf
    nccl_tests_version: str | None = None
    nccl_library: int | None = None     # nccl-tests' "nccl-library=22902"
    header: dict = field(default_factory=dict)   # the "# nThread ..." line's fields
    devices: tuple[Device, ...] = ()
    devices_elided: bool = False        # the list was cut ("...", an "omitted" note)
    columns: tuple[str, ...] = ()       # the column header's names, when printed
    time_unit: str = "us"
    cputime: bool = False               # -C 1: the time column is CPU time
    avg_busbw: float | None = None
    out_of_bounds: int | None = None
    info: NcclInfo = field(default_factory=NcclInfo)
    settings: tuple[tuple[str, str], ...] = ()   # NCCL_* set on a command line or by export
    gpus_flag: int | None = None        # a command line's -g
    runs: int = 1                       # "# nThread" headers seen (processes that ran alone)
    stopped: str | None = None          # where a partial table stopped
    lines: int = 0

    def whole_device_count(self) -> int | None:
        """The rank count of the ``# Using devices`` list when it is whole: ranks 0..k-1,
        each once, nothing cut out, and one list (not one per process run alone)."""
        if not self.devices or self.devices_elided or self.runs > 1:
            return None
        ranks = sorted(d.rank for d in self.devices)
        if ranks != list(range(len(ranks))):
            return None
        return len(ranks)

    def series(self) -> tuple[Row, ...]:
        """The rows of the first (type, redop, root) the table sweeps, one per size:
        ``-d all``, ``-o all``, ``-r -1`` and ``-N`` repeat the sweep."""
        if not self.rows:
            return ()
        first = self.rows[0]
        key = (first.type, first.redop, first.root)
        seen, out = set(), []
        for r in self.rows:
            if (r.type, r.redop, r.root) == key and r.nbytes not in seen:
                seen.add(r.nbytes)
                out.append(r)
        return tuple(out)

    def busbw_ratio(self) -> tuple[float, float] | None:
        """busbw / algbw as the table prints it: the (low, high) interval every row with
        an algbw of at least 1 GB/s allows after rounding, or None without such a row."""
        lo, hi = 0.0, math.inf
        found = False
        for r in self.rows:
            for t in (r.out_of_place, r.in_place):
                if t is None or t.algbw < 1.0:
                    continue
                a, b = ratio_interval(t)
                lo, hi = max(lo, a), min(hi, b)
                found = True
        return (lo, hi) if found else None

    def ranks_from_table(self) -> tuple[int, int] | None:
        """The rank counts busbw/algbw allows for the factor family it belongs to:
        2(n-1)/n (ratio >= 1) or (n-1)/n (ratio < 1); (low, high), or None when the
        ratio is 1 (broadcast, reduce, sendrecv; or an all-reduce over 2 ranks) or unknown."""
        ratio = self.busbw_ratio()
        if ratio is None:
            return None
        lo, hi = ratio
        if lo <= 1.0 <= hi:
            return None
        scale = 2.0 if lo > 1.0 else 1.0          # all-reduce: 2(n-1)/n; others: (n-1)/n
        def n_of(x):
            return math.inf if x >= scale else scale / (scale - x)
        low, high = n_of(lo), n_of(hi)
        return (max(1, math.ceil(low - 1e-9)), math.floor(high + 1e-9) if high < math.inf else 10**9)


_INNER_TAG = re.compile(r"\[\d+\](?=\s|$)")


def _strip(line: str) -> str:
    for _ in range(3):
        before = line
        for p in _PREFIXES:
            line = p.sub("", line, count=1)
        if line == before:
            break
    line = line.strip().strip("`")
    if line[:1].isdigit() and "[" in line:
        # mpirun's rank tag before every printf of a row: '-1[0]    1626.5 ...'
        line = _INNER_TAG.sub(" ", line)
    return line


def _column_names(text: str) -> tuple[str, ...] | None:
    """The column header line's names, normalised, or None if this is not one."""
    t = text.lstrip("#").strip()
    words = t.replace("|", " ").split()
    low = [w.lower().strip(".") for w in words]
    if not (("size" in low or "bytes" in low) and ("count" in low or "n" in low)
            and "busbw" in low and ("time" in low or "cputime" in low)):
        return None
    names = []
    for w in low:
        w = w.lstrip("#")
        names.append({"bytes": "size", "n": "count", "op": "redop", "cputime": "time",
                      "error": "wrong", "res": "wrong"}.get(w, w))
    return tuple(names)


def _timing(toks: list[str], line: int) -> Timing:
    t, a, b = (float(x) for x in toks[:3])
    wrong = error = None
    if len(toks) > 3:
        w = toks[3]
        if w.upper() == "N/A":
            pass
        elif _INT.match(w):
            wrong = int(w)
        elif _NUM.match(w):
            error = float(w)
        else:
            raise CollectivesError(f"line {line}: '#wrong' is {w!r}, not a number or N/A")
    return Timing(t, a, b, wrong, error, tuple(toks[:4]))


def _lead(toks: list[str], columns: tuple[str, ...] | None) -> tuple[str, ...]:
    """The names of a row's leading columns: ``size count type`` and, where the layout has
    them, ``redop`` and ``root``. From the column header when there is one, else from the row
    (13 tokens: the current layout; 12: before nccl-tests 2.13, no root; a root of -1 also
    marks a row cut short)."""
    if columns:
        return columns[:columns.index("time")] if "time" in columns else columns[:5]
    if len(toks) > 3 and toks[3] in REDOPS:
        has_root = (len(toks) > 4 and _INT.match(toks[4])
                    and (len(toks) in (13, 15, 21, 23) or int(toks[4]) < 0))
        return ("size", "count", "type", "redop", "root") if has_root else ("size", "count", "type", "redop")
    if len(toks) > 3 and _INT.match(toks[3]) and len(toks) in (12, 13):
        return ("size", "count", "type", "root")         # old broadcast: no redop column
    return ("size", "count", "type")                      # old sendrecv


def _row(toks: list[str], line: int, columns: tuple[str, ...] | None) -> Row | None:
    """One table row, or None when the line is not one."""
    if len(toks) < 6 or not _INT.match(toks[0]) or not _INT.match(toks[1]) or toks[2] not in TYPES:
        return None
    if int(toks[0]) < 0 or int(toks[1]) < 0:
        return None
    names = _lead(toks, columns)
    redop = root = None
    for name, tok in zip(names, toks):
        if name == "redop":
            if tok not in REDOPS:
                return None
            redop = tok
        elif name == "root":
            if not _INT.match(tok):
                return None
            root = int(tok)
    rest = toks[len(names):]
    if len(rest) >= 2 and _DATE.match(rest[-2]) and _CLOCK.match(rest[-1]):
        rest = rest[:-2]                                   # a timestamp (-S 1) ends the line
    group = _group(columns, rest)
    for i, x in enumerate(rest):
        if not (_NUM.match(x) or (i % group == 3 and x.upper() == "N/A")):
            return None
    if columns:
        expected = len(columns) - len(names) - (1 if "timestamp" in columns else 0)
        if len(rest) > expected:
            raise CollectivesError(
                f"line {line} has {len(names) + len(rest)} columns; the column header above it "
                f"names {len(names) + expected}: the table contradicts its header")
        complete = len(rest) == expected
    else:
        complete = len(rest) in (8, 16)
    halves = [h for h in (rest[i:i + group] for i in range(0, len(rest), group)) if len(h) >= 3]
    if not halves or len(halves) > 2:
        return None
    oop = _timing(halves[0], line)
    ip = _timing(halves[1], line) if len(halves) > 1 else None
    return Row(line, int(toks[0]), int(toks[1]), toks[2], redop, root, oop, ip, complete)


def _group(columns, rest) -> int:
    """Columns per half: 4 (time algbw busbw #wrong), 8 with per-iteration timing."""
    if columns:
        return 8 if "i_min" in columns else 4
    return 8 if len(rest) == 16 else 4



_HALF = ("time", "algbw", "busbw", "#wrong")
_ITER = ("i_min", "i_max", "i_p99", "i_cv%")
_WORD = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
_NUMISH = re.compile(
    r"^(?:[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+|nan|inf(?:inity)?)|N/A)$", re.I)
_FAILURE = re.compile(r"\bTest (?:NCCL |CUDA )?failure\b.*")


def _looks_like_row(toks: list[str], in_table: bool) -> bool:
    """A line that starts as a row does (a size, then a count): in the table (after
    its column header or a row), any such line; before it, one that also has a
    type-like word and numbers after it (a headerless table's first row)."""
    if not toks or not _INT.match(toks[0]):
        return False
    if in_table:
        if len(toks) == 1:
            return not toks[0].startswith("-")
        return bool(_INT.match(toks[1]))
    return (len(toks) >= 6 and bool(_INT.match(toks[1])) and bool(_WORD.match(toks[2]))
            and sum(1 for t in toks[3:] if _NUMISH.match(t)) >= 3)


def _columns_after(names, columns, group) -> tuple[str, ...]:
    """The names of a row's columns after its leading ones."""
    if columns:
        return tuple(c for c in columns[len(names):] if c != "timestamp")
    half = _HALF + (_ITER if group == 8 else ())
    return half + half


def _why_not(toks: list[str], columns: tuple[str, ...] | None) -> tuple[str, str]:
    """Why a line that starts like a row is not one: ("cut", what) for a row that
    stops early with every column it has right, ("bad", what) for a column nccl-tests
    never prints so."""
    if int(toks[0]) < 0:
        return "bad", f"size {toks[0]} B is negative"
    if len(toks) > 1 and int(toks[1]) < 0:
        return "bad", f"count {toks[1]} is negative"
    if len(toks) > 2 and toks[2] not in TYPES:
        return "bad", (f"type {toks[2]!r} is not one of nccl-tests' types "
                       f"({', '.join(TYPES)})")
    names = _lead(toks, columns)
    if not columns and len(toks) > 4 and (toks[3] in REDOPS or _WORD.match(toks[3])) \
            and toks[3].lower() not in ("nan", "inf", "infinity"):
        # no header: a word after the type is a redop, and a word after it a root
        root = not _NUMISH.match(toks[4]) or _INT.match(toks[4])
        names = ("size", "count", "type", "redop") + (("root",) if root else ())
    for name, tok in zip(names, toks):
        if name == "redop" and tok not in REDOPS:
            return "bad", (f"redop {tok!r} is not one of nccl-tests' "
                           f"({', '.join(REDOPS)})")
        if name == "root" and not _INT.match(tok):
            return "bad", (f"root {tok!r} is not a rank (nccl-tests prints -1 where "
                           f"there is none)")
    rest = toks[len(names):]
    if len(rest) >= 2 and _DATE.match(rest[-2]) and _CLOCK.match(rest[-1]):
        rest = rest[:-2]
    group = _group(columns, rest)
    after = _columns_after(names, columns, group)
    for i, x in enumerate(rest):
        if not (_NUM.match(x) or (i % group == 3 and x.upper() == "N/A")):
            half = "out-of-place" if i < group else "in-place"
            label = after[i] if i < len(after) else "column"
            return "bad", (f"{half} {label} {x!r} is not a number (after the root a "
                           f"row holds numbers: time in us, algbw and busbw in GB/s, "
                           f"#wrong or N/A)")
    if len(rest) < len(after) or len(rest) < 3:
        return "cut", (f"the row of {toks[0]} B stops after {len(toks)} of its "
                       f"{len(names) + len(after)} columns")
    return "bad", "it does not read as a row of nccl-tests' table"


def _check_values(row: Row, unit: str) -> None:
    """What no nccl-tests row holds: a size beyond any GPU's memory, a negative or not
    finite time or bandwidth, a time of 0 for data that moved, a negative #wrong."""
    if row.nbytes > MAX_SIZE:
        raise CollectivesError(
            f"line {row.line}: size {row.nbytes} B is more than nccl-tests can run: "
            f"its buffers live in one GPU's memory, and a size here is at most 2^50 B "
            f"(1 PiB)")
    for half, t in (("out-of-place", row.out_of_place), ("in-place", row.in_place)):
        if t is None:
            continue
        values = (("time", t.time_us), ("algbw", t.algbw), ("busbw", t.busbw))
        for i, (label, value) in enumerate(values):
            text = t.printed[i] if len(t.printed) > i else f"{value:g}"
            what = (f"line {row.line}: {half} {label} {text} "
                    f"{unit if i == 0 else 'GB/s'}")
            if not math.isfinite(value):
                raise CollectivesError(f"{what} is not a finite number")
            if value < 0:
                raise CollectivesError(
                    f"{what} is negative: nccl-tests prints "
                    + ("a time above 0" if i == 0 else "a bandwidth of 0 or more"))
        if t.time_us == 0 and row.nbytes > 0:
            raise CollectivesError(
                f"line {row.line}: {half} time {t.printed[0] if t.printed else 0} "
                f"{unit} for {row.nbytes} B: moving data takes time, and nccl-tests "
                f"prints a time of 0 only for a size of 0")
        if t.wrong is not None and t.wrong < 0:
            raise CollectivesError(
                f"line {row.line}: {half} #wrong {t.wrong} is negative: it counts the "
                f"elements found wrong (0 or more; N/A when not checked)")


_PREAMBLE = re.compile(r"^\d+\s+\d+\s+(?:" + "|".join(TYPES) + r")\b")
_INFO_PREFIX = re.compile(r"(\S+):\d+:\d+\s+\[\d+\]\s*$")


def _glued(before: str, hosts: set[str]) -> str:
    """What precedes NCCL's ``host:pid:tid [dev] NCCL INFO`` on its line: nccl-tests prints a
    row in pieces, so with NCCL_DEBUG=INFO a row's start ('   268435456 ... sum  -1') or its
    out-of-place half can run straight into NCCL's line ('-138dcf168f605:1375:1375 [0] NCCL
    INFO ...'). The host names the device list printed tell where nccl-tests' text ends."""
    m = _INFO_PREFIX.search(before)
    if m is None:
        return ""
    head, token = before[:m.start(1)], m.group(1)
    if not head.strip():              # NCCL's own line: learn its host
        hosts.add(token)
        return ""
    for h in sorted(hosts, key=len, reverse=True):
        if token.endswith(h):
            return head + token[:-len(h)]
    # no host known: a root of -1, N/A, or the digits of '#wrong'
    if g := re.match(r"(-1|N/A|\d+)", token):
        return head + g.group(1)
    return head


def decode(data: bytes, name: str = "input") -> str:
    """Bytes to text, refusing what is too large or not text."""
    if len(data) > MAX_BYTES:
        raise CollectivesError(
            f"{name} is {len(data):,} bytes, more than the {MAX_BYTES // 2**20} MiB read: keep "
            f"rank 0's lines (nccl-tests prints its table once; NCCL_DEBUG=INFO repeats per rank)")
    if b"\x00" in data[:65536]:
        raise CollectivesError(f"{name} is not text (it holds NUL bytes): not nccl-tests output")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def parse_output(text: str) -> Output:
    """Read one nccl-tests output (see the module's docstring)."""
    if not isinstance(text, str):
        raise CollectivesError(f"nccl-tests output must be text, got {type(text).__name__}")
    if len(text) > MAX_BYTES:
        raise CollectivesError(f"the input is {len(text):,} characters, more than the "
                               f"{MAX_BYTES // 2**20} MiB read: keep rank 0's lines")
    if not text.strip():
        raise CollectivesError("the input is empty: give the text an nccl-tests binary printed "
                               "(all_reduce_perf and the others)")
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    reader = _Reader()
    for number, raw in enumerate(lines, start=1):
        reader.feed(number, raw)
    return reader.finish(lines)


class _Reader:
    """The state of one pass over an output's lines: each line is NCCL's log, a header
    field, a device, the column names, a row (perhaps split by NCCL's lines), or noise."""

    def __init__(self):
        self.info = InfoReader()
        self.header: dict = {}
        self.devices: list[Device] = []
        self.elided = False
        self.columns: tuple[str, ...] | None = None
        self.unit = "us"
        self.cputime = False
        self.rows: list[Row] = []
        self.named = self.version = self.library = None
        self.avg = self.oob = None
        self.settings: dict[str, str] = {}
        self.gpus_flag = None
        self.runs = 0
        self.in_devices = False
        self.hosts: set[str] = set()
        self.pending: list = []              # [first line, tokens]: a row NCCL's log lines split
        self.commands: list[str] = []
        self.in_table = False       # after the column header or a row, to the footer
        self.cut: tuple | None = None       # (line, size, why): the last row cut short
        self.stop_note: str | None = None   # where the table stops, outside the rows

    def flush(self) -> None:
        """The row NCCL's lines split, as far as it came: a row (perhaps cut short), or
        the start of one with no time, kept as where the table stops (refused if a row
        follows)."""
        if self.pending:
            number, toks = self.pending[0], list(self.pending[1])
            self.pending.clear()
            row = _row(toks, number, self.columns)
            if row is not None:
                self._add(row)
            else:
                self._broken(number, toks, "")

    def _add(self, row: Row) -> None:
        self._no_cut_before(row.line)
        _check_values(row, self.unit)
        self.rows.append(row)
        self.in_table = True
        if not row.complete:
            half = "in-place half" if row.in_place is None else "last columns"
            self.cut = (row.line, row.nbytes,
                        f"the row of {row.nbytes} B stops without its {half}")

    def _no_cut_before(self, number: int) -> None:
        """A row cut short is where a table stops: refused when another row follows."""
        if self.cut is not None:
            line, _, why = self.cut
            raise CollectivesError(
                f"line {line}: {why}, and line {number} starts another row: only the "
                f"last row of nccl-tests' table may be cut short (a row has size, "
                f"count, type, redop, root, then time, algbw, busbw and #wrong "
                f"out-of-place and in-place)")

    def _broken(self, number: int, toks: list[str], line: str) -> None:
        """A line that starts like a row but is not one: refused, but for a row cut
        short (or one the run failed in), which may be where the table stops."""
        self._no_cut_before(number)
        size = format_bytes(int(toks[0]), binary=True)
        failed = _FAILURE.search(line)
        if failed:
            said = failed.group(0).strip()
            self.cut = (number, int(toks[0]),
                        f"the run failed in the row of {toks[0]} B ('{said}')")
            self.stop_note = (f"the run failed in the row of {size} (line {number}): "
                              f"'{said}'")
            return
        kind, why = _why_not(toks, self.columns)
        if kind == "bad":
            raise CollectivesError(
                f"line {number}: {why}: the table cannot be read as printed")
        self.cut = (number, int(toks[0]), why)
        self.stop_note = (f"the table stops in the row of {size} (line {number}): no "
                          f"time printed")
        self.in_table = True

    def feed(self, number: int, raw: str) -> None:
        if "NCCL INFO" in raw or "NCCL WARN" in raw:
            key = "NCCL INFO" if "NCCL INFO" in raw else "NCCL WARN"
            before, msg = raw.split(key, 1)
            if key == "NCCL INFO":
                self.info.feed(msg.strip())
            raw = _glued(before, self.hosts)        # nccl-tests' text before NCCL's, on one line
            if not raw.strip():
                return
        line = _strip(raw)
        if not line:
            return
        toks = line.split()
        if self.pending:
            if all(_NUM.match(t) or t.upper() == "N/A" for t in toks) and len(toks) <= 8:
                self.pending[1].extend(toks)
                row = _row(self.pending[1], self.pending[0], self.columns)
                if row is not None and row.complete:
                    self.pending.clear()
                    self._add(row)
                return
            # another row, or the table's end, ends the split row; another program's
            # line between its pieces does not
            if line.startswith("#") or _looks_like_row(toks, True) \
                    or _PREAMBLE.match(line):
                self.flush()
        if m := INFO_PATTERNS["version"].search(line):
            self.info.d.setdefault("version", m.group(1))
        body = line.lstrip("#").strip()
        if self._header_line(body) or self._table_line(body, toks, number):
            return
        if not line.startswith("#") and _looks_like_row(toks, self.in_table) and not (
                _PREAMBLE.match(line) and len(toks) <= 5):
            self._broken(number, toks, line)
            return
        self._other_line(line, toks, number)

    def _header_line(self, body: str) -> bool:
        """The banner, the nThread line, the device list: True when the line was one."""
        if m := re.search(r"nccl-tests version (\S+)(?: nccl-headers=\d+)? nccl-library=(\d+)", body):
            self.version, self.library = m.group(1), int(m.group(2))
            return True
        if m := re.search(r"Collective test (?:starting|concluded): (\w+)", body):
            name = m.group(1).removesuffix("_mpi").removesuffix("_perf")
            self.named = self.named or (name if name in PROGRAMS else None)
            self.in_table = False
            return True
        if re.search(r"\bnThreads? \d+ nGpus \d+", body):
            self.runs += 1
            self.in_table = False
            for key, pat in _HEADER_FIELDS.items():
                if m := re.search(pat, body):
                    self.header.setdefault(key, int(m.group(1)))
                    if key == "step":
                        self.header.setdefault("step_kind", m.group(2))
            self.in_devices = False
            return True
        if body.startswith("Using devices"):
            self.in_devices = True
            self.in_table = False
            return True
        if m := _RANK.search(body):
            self.devices.append(Device(int(m.group(1)), None if m.group(2) is None else int(m.group(2)),
                                       None if m.group(3) is None else int(m.group(3)), m.group(4),
                                       int(m.group(5)), m.group(6), m.group(7)))
            self.hosts.add(m.group(4))
            return True
        if self.in_devices and (body.startswith("...") or "omitted" in body or "truncated" in body.lower()):
            self.elided = True
            return True
        return False

    def _table_line(self, body: str, toks: list[str], number: int) -> bool:
        """The column names, the units line, the closing figures, a row: True when the line was one."""
        if (names := _column_names(body)) is not None:
            self.columns = names
            self.in_devices = False
            self.in_table = True
            return True
        if body.startswith("(B)") or body.startswith("(bytes)"):
            if "(ms)" in body:
                self.unit = "ms"
            return True
        if m := re.match(r"Out of bounds values\s*:\s*(\d+)", body):
            self.oob = int(m.group(1))
            self.in_table = False
            return True
        if m := re.match(r"Avg bus bandwidth\s*:\s*(-?[0-9.eE+-]+|nan|inf)", body):
            try:
                self.avg = float(m.group(1))
            except ValueError:
                self.avg = None
            self.in_table = False
            return True
        row = _row(toks, number, self.columns)
        if row is not None:
            if not row.complete:
                self._no_cut_before(number)
                self.pending[:] = [number, toks]   # the rest may follow on later lines
            else:
                self._add(row)
            self.in_devices = False
            return True
        return False

    def _other_line(self, line: str, toks: list[str], number: int) -> None:
        """A row's start that NCCL's log cut, the command line, settings, a cputime column."""
        if _PREAMBLE.match(line) and len(toks) <= 5:
            self.pending[:] = [number, toks]
            return
        if m := _PROGRAM.search(line):
            if not self.rows:
                self.commands.append(m.group(1))
            if g := re.search(r"(?:^|\s)(?:-g|--ngpus)[ =](\d+)\b", line):
                self.gpus_flag = int(g.group(1))
        if "NCCL_" in line:
            for m in _SETTING.finditer(line):
                self.settings[m.group(1)] = m.group(2).strip("\"'")
        if "cputime" in line.lower() and self.columns is None:
            self.cputime = True

    def finish(self, lines: list[str]) -> Output:
        self.flush()
        rows, columns = self.rows, self.columns
        program = self.named or (self.commands[-1] if self.commands else None)
        cputime = self.cputime
        if columns is not None and "time" in columns and any(
                "cputime" in _strip(x).lower() for x in lines if "busbw" in x):
            cputime = True
        if not rows:
            if self.header or columns or self.devices:
                raise CollectivesError(
                    "the output has nccl-tests' header but no row of its table: the run stopped "
                    "before its first size (look for an error after the header)")
            raise CollectivesError(
                "no nccl-tests table found: expected rows like '  1048576  262144  float  sum  -1  "
                "27.37  38.31  67.04  0  ...' (size, count, type, redop, root, then time, algbw, "
                "busbw and #wrong out-of-place and in-place)")
        # hypercube and alltoallv compute algbw from other than the size printed
        # (their GetBw, src/*.cu)
        unchecked = cputime or program in ("hypercube", "alltoallv")
        unit = time_unit(rows, self.unit, unchecked)
        if unit == "ms":                         # the first nccl-tests printed milliseconds
            rows = [replace(r, out_of_place=_in_us(r.out_of_place), in_place=_in_us(r.in_place))
                    for r in rows]
        out = Output(tuple(rows), program, self.version, self.library, self.header, tuple(self.devices),
                     self.elided, columns or (), unit, cputime, self.avg, self.oob, self.info.info(),
                     tuple(sorted(self.settings.items())), self.gpus_flag, max(self.runs, 1), None, len(lines))
        check_consistency(out)
        return _with_stop(out, self.stop_note if self.cut is not None else None)


def _in_us(t: Timing | None) -> Timing | None:
    return None if t is None else replace(t, time_us=t.time_us * 1e3)


def _expected_sizes(header: dict) -> list[int] | None:
    lo, hi, step = header.get("minBytes"), header.get("maxBytes"), header.get("step")
    if lo is None or hi is None or step is None or lo <= 0 or hi < lo:
        return None
    sizes, s = [], lo
    while s <= hi and len(sizes) < 200:
        sizes.append(s)
        s = s * step if header.get("step_kind") == "factor" and step > 1 else s + max(step, 1)
    return sizes


def _with_stop(out: Output, note: str | None = None) -> Output:
    """Say where a partial table stopped: a last row cut short (``note``: one with no
    time, not among the rows), or a sweep that ends before the header's maxBytes with
    no footer after it."""
    if note:
        return replace(out, stopped=note)
    last = out.rows[-1]
    if not last.complete:
        half = "its in-place half" if last.in_place is None else "its last columns"
        return replace(out, stopped=f"the table stops in the row of {format_bytes(last.nbytes, binary=True)} "
                                    f"(line {last.line}): {half} missing")
    sizes = _expected_sizes(out.header)
    footer = out.avg_busbw is not None or out.out_of_bounds is not None
    if sizes and not footer and max(r.nbytes for r in out.rows) < sizes[-1]:
        return replace(out, stopped=f"the table stops after {format_bytes(last.nbytes, binary=True)} (line "
                                    f"{last.line}); the header's sweep goes on to "
                                    f"{format_bytes(sizes[-1], binary=True)} and no footer follows")
    return out
