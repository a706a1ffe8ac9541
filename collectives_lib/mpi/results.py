"""Results: what a run measured (:class:`RunResult`), and its table in the style of
nccl-tests' ``all_reduce_perf`` (:func:`format_table`, read back by :func:`parse_table`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import CollectivesError
from ..units import format_rate, format_time
from .calibration import Calibration


@dataclass
class RunResult:
    """What a run measured: one row per (schedule, size), and the calibration."""

    rows: list[dict]
    calibration: Calibration | None = None
    library: str = ""
    world_size: int = 0
    hosts: list[str] = field(default_factory=list)
    iters: int = 0
    warmup: int = 0

    @property
    def ok(self) -> bool:
        """Every schedule computed its collective (and MPI's collective agreed)."""
        return all(r["correct"] for r in self.rows)

    def select(self, algorithm: str | None = None, **match) -> list[dict]:
        """Rows of one algorithm (and matching other keys, e.g. ``num_ranks=4``)."""
        return [r for r in self.rows
                if (algorithm is None or r["algorithm"] == algorithm)
                and all(r.get(k) == v for k, v in match.items())]

    def table(self, *, compact: bool = False) -> str:
        """The nccl-tests style table (:func:`format_table`)."""
        return format_table(self, compact=compact)

    def as_dict(self) -> dict:
        cal = None
        if self.calibration is not None:
            c = self.calibration
            cal = {"alpha_s": c.alpha, "beta_s_per_byte": c.beta, "bandwidth": c.bandwidth,
                   "method": c.method, "sizes": list(c.sizes), "times_s": list(c.times)}
        return strict({"library": self.library, "world_size": self.world_size, "hosts": self.hosts,
                       "iters": self.iters, "warmup": self.warmup, "calibration": cal,
                       "rows": self.rows, "ok": self.ok})


def strict(value):
    """``value`` with every float that is not finite (NaN, inf) as None, so that
    ``json.dumps(..., allow_nan=False)`` writes strict JSON (``null``)."""
    if isinstance(value, dict):
        return {k: strict(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict(v) for v in value]
    if isinstance(value, (float, np.floating)):
        return float(value) if np.isfinite(value) else None
    return value



def _num(value, scale: float, fmt: str) -> str:
    return "-" if value is None or not np.isfinite(value) else format(value * scale, fmt)


#: The table's columns: (name, unit, width, text of a row).
_COLUMNS = {
    "size": ("(B)", 11, lambda r: str(r["size_bytes"])),
    "count": ("(elements)", 10, lambda r: str(r["count"])),
    "algorithm": ("", 20, lambda r: r["algorithm"]),
    "N": ("", 3, lambda r: str(r["num_ranks"])),
    "steps": ("", 5, lambda r: str(r["steps"])),
    "time": ("(us)", 10, lambda r: _num(r["time_s"], 1e6, ".2f")),
    "mpi": ("(us)", 10, lambda r: _num(r["mpi_time_s"], 1e6, ".2f")),
    "algbw": ("(GB/s)", 8, lambda r: _num(r["algbw"], 1e-9, ".3f")),
    "busbw": ("(GB/s)", 8, lambda r: _num(r["busbw"], 1e-9, ".3f")),
    "mpi_busbw": ("(GB/s)", 9, lambda r: _num(r["mpi_busbw"], 1e-9, ".3f")),
    "predicted": ("(us)", 10, lambda r: _num(r.get("predicted_s"), 1e6, ".2f")),
    "meas/pred": ("", 9, lambda r: _num(r.get("measured_over_predicted"), 1, ".2f")),
    "correct": ("", 7, lambda r: str(bool(r["correct"]))),
}
#: Columns of the command's table, in order (what :func:`parse_table` reads).
TABLE_COLUMNS = tuple(_COLUMNS)
#: The narrower table for a page column (``compact=True``), with narrower widths.
COMPACT_COLUMNS = ("size", "algorithm", "N", "steps", "time", "mpi", "busbw", "predicted",
                   "meas/pred", "correct")
_COMPACT_WIDTHS = {"size": 9, "algorithm": 18, "time": 9, "mpi": 9, "predicted": 9}


def format_table(result: RunResult, *, compact: bool = False) -> str:
    """An nccl-tests style table: one line per (algorithm, size); comment lines start
    with #. ``compact=True`` keeps the columns that fit a page (the prediction
    columns only when the run was calibrated)."""
    rows = result.rows
    cal = result.calibration
    names = list(TABLE_COLUMNS)
    width = {c: w for c, (_, w, _) in _COLUMNS.items()}
    if compact:
        predicted = any(r.get("predicted_s") is not None for r in rows)
        names = [c for c in COMPACT_COLUMNS if predicted or c not in ("predicted", "meas/pred")]
        width.update(_COMPACT_WIDTHS)
    # the algorithm column holds its longest name (bidirectional_ring_whole is 24 characters)
    width["algorithm"] = max([width["algorithm"]] + [len(r["algorithm"]) for r in rows])
    lines = []
    if rows:
        r0 = rows[0]
        ranks = ", ".join(map(str, sorted({r["num_ranks"] for r in rows})))
        hosts = len(result.hosts) or 1
        lines.append(f"# {r0['collective']}, N = {ranks}: {result.world_size} processes on {hosts} "
                     f"host{'s' if hosts > 1 else ''}, {r0['dtype']}")
        lines.append(f"# median of {result.iters} timed runs after {result.warmup} warm-up runs")
        changed = sorted({(a, r["size_bytes"]) for r in rows
                          for a in r.get("asked_bytes", [r["size_bytes"]]) if a != r["size_bytes"]})
        if changed:
            shown = ", ".join(f"{a:,} B ran as {b:,} B" for a, b in changed[:4])
            more = f" and {len(changed) - 4} more" if len(changed) > 4 else ""
            lines.append(f"# sizes run as whole {r0['dtype']} elements, at least one per slot: "
                         f"{shown}{more}")
    lines.append(f"# {' '.join(result.library.split())}")
    if cal is not None:
        lines.append(f"# ping-pong: alpha = {format_time(cal.alpha)}, beta = {cal.beta:.3g} s/B "
                     f"({format_rate(cal.bandwidth)})")
        lines.append(f"# ({cal.method})")
        lines.append("# predicted: simulate on Switch(N, bandwidth=1/beta, latency=alpha/2)")
    emulated = sorted({a for r in rows for a in r["emulated_agents"]})
    if emulated:
        lines.append(f"# emulated on extra processes: {', '.join(emulated)}")
    if rows:
        lines.append(f"# time: the library's schedule; mpi: {rows[0]['mpi']}, same input")
        lines.append(f"# busbw = algbw x {_factor_text(rows[0]['collective'])}")
    lines.append("# " + " ".join(f"{c:>{width[c]}}" for c in names))
    lines.append("# " + " ".join(f"{_COLUMNS[c][0]:>{width[c]}}" for c in names))
    for r in rows:
        lines.append("  " + " ".join(f"{_COLUMNS[c][2](r):>{width[c]}}" for c in names))
    bad = [r for r in rows if not r["correct"]]
    for r in bad[:5]:
        lines.append(f"# WRONG: {r['algorithm']} N={r['num_ranks']} {r['size_bytes']} B: {r['error']}")
    if bad:
        lines.append(f"# {len(bad)} of {len(rows)} rows are wrong: their times measure a "
                     f"schedule that does not compute {rows[0]['collective']}")
    else:
        lines.append("# every row correct: each rank matches the definition and MPI")
    return "\n".join(lines)


def _factor_text(collective: str) -> str:
    return {"all_reduce": "2(N-1)/N", "all_gather": "(N-1)/N", "reduce_scatter": "(N-1)/N",
            "all_to_all": "(N-1)/N", "gather": "(N-1)/N"}.get(collective, "1")


def parse_table(text: str) -> list[dict]:
    """Read the rows back from :func:`format_table`'s output (the full table), for
    tests and scripts: one dict per row, keyed by column name, numbers as floats
    (``None`` for ``-``), ``correct`` as a bool."""
    rows = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = line.split()
        if len(fields) != len(TABLE_COLUMNS):
            raise CollectivesError(f"not a row of the run table: {line!r}")
        row: dict[str, Any] = {}
        for name, value in zip(TABLE_COLUMNS, fields):
            if name == "algorithm":
                row[name] = value
            elif name == "correct":
                row[name] = value == "True"
            elif name in ("size", "count", "N", "steps"):
                row[name] = int(value)
            else:
                row[name] = None if value == "-" else float(value)
        rows.append(row)
    return rows

