"""Published nccl-tests runs as the referee of NCCL's model.

``collectives_lib/data/nccl_tests`` holds nccl-tests outputs people and
vendors have published (GitHub issues of NVIDIA/nccl and NVIDIA/nccl-tests,
cloud providers' benchmark repositories), one CSV per run with a row per
size, and ``runs.csv`` with each run's hardware, NCCL version, settings,
source URL and whether its poster or NVIDIA called it healthy. ``models.csv``
says which preset and options stand for each run (or why none does); a row
marked ``pending`` names a preset nobody has yet judged against the run, and
the run is left out of the comparison until someone does.

:func:`compare` predicts every row with :func:`collectives_lib.estimate`
(NCCL's model) and reports the error against the measured time:

    >>> from collectives_lib.nccl import validation
    >>> run = validation.run("dgxh100x8-nvls-allreduce-dgxc-bench")
    >>> rows = validation.compare(run)
    >>> big = [r for r in rows if r.nbytes == 4 * 2**30][0]
    >>> round(big.measured * 1e6), round(big.predicted * 1e6), f"{big.error:+.1%}"
    (15749, 16251, '+3.2%')

Introduced in the chapter *Measure it yourself*; ``benchmarks/bench_validation.py``
prints the whole table.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from importlib import resources

from ..collective import Collective
from ..errors import CollectivesError
from ..models import estimate
from ..topology import GpuCluster, nvswitch_node, parse_topology

#: nccl-tests' names of the collectives.
NAMES = {"all_reduce": "all_reduce", "all_gather": "all_gather", "reduce_scatter": "reduce_scatter",
         "alltoall": "all_to_all", "all_to_all": "all_to_all", "broadcast": "broadcast",
         "reduce": "reduce",
         "sendrecv": "send"}   # nccl-tests' sendrecv: every rank sends to the next one at once (a ring shift);
                                # the nearest collective, no run of it is modelled
#: nccl-tests' type names and the library's dtypes.
TYPES = {"float": "float32", "half": "float16", "bfloat16": "bfloat16", "double": "float64",
         "int8": "int8", "uint8": "uint8", "int32": "int32", "int64": "int64", "": "float32"}
#: The boundary between small and large messages in the goals, and the goals (relative error).
LARGE = 2**20
GOALS = {"large": 0.15, "small": 0.35}


@dataclass(frozen=True)
class Run:
    """One published run: its metadata and its rows."""

    run_id: str
    collective: Collective
    gpu: str
    gpus_per_node: int
    num_nodes: int
    nccl_version: str
    settings: str
    source_url: str
    healthy: str          # "yes", "no" or "unknown"
    note: str
    topology: str         # the preset spec that stands for it, or ""
    options: dict = field(default_factory=dict)
    why_not: str = ""     # why no preset stands for it
    rows: tuple = ()
    exceptions: dict = field(default_factory=dict)   # "small"/"large" -> why the goal does not hold

    @property
    def modelled(self) -> bool:
        return bool(self.topology)


@dataclass(frozen=True)
class Row:
    """One size: what was measured and what NCCL's model predicts."""

    nbytes: int
    measured: float       # seconds (nccl-tests' out-of-place time; in-place where that is all)
    predicted: float
    algorithm: str
    protocol: str | None

    @property
    def error(self) -> float:
        """(predicted - measured) / measured."""
        return (self.predicted - self.measured) / self.measured


def _read(name: str) -> list[dict]:
    path = resources.files("collectives_lib").joinpath("data", "nccl_tests", name)
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _options(text: str) -> dict:
    out = {}
    for item in filter(None, (t.strip() for t in text.split(";"))):
        key, _, value = item.partition("=")
        out[key.strip()] = value.strip()
    return out


def _exceptions(text: str) -> dict:
    out = {}
    for part in filter(None, (t.strip() for t in text.split("|"))):
        key, _, why = part.partition(":")
        out[key.strip()] = why.strip()
    return out


def runs() -> list[Run]:
    """Every published run, in the order of ``runs.csv``."""
    models = {m["run_id"]: m for m in _read("models.csv")}
    out = []
    for r in _read("runs.csv"):
        m = models.get(r["run_id"], {})
        if m.get("modelled") == "pending":       # a preset is named but its fit not yet judged
            m = dict(m, topology="", why_not=f"pending: {m['topology']} not yet judged: {m.get('why_not', '')}")
        rows = tuple(_read(f"{r['run_id']}.csv"))
        out.append(Run(r["run_id"], Collective(NAMES[r["collective"]]), r["gpu"],
                       int(r["gpus_per_node"]), int(r["num_nodes"]), r["nccl_version"],
                       r["settings"], r["source_url"], r["healthy"], r["note"],
                       m.get("topology", ""), _options(m.get("options", "")),
                       m.get("why_not", "no model mapping"), rows, _exceptions(m.get("exceptions", ""))))
    return out


def run(run_id: str) -> Run:
    for r in runs():
        if r.run_id == run_id:
            return r
    raise CollectivesError(f"no published run called {run_id!r}")


def topology_for(r: Run):
    """The preset that stands for a run's machine."""
    if not r.modelled:
        raise CollectivesError(f"{r.run_id} has no model: {r.why_not}")
    topo = parse_topology(r.topology)
    if "gpus" in r.options:
        topo = nvswitch_node(topo.name, gpus=int(r.options["gpus"]))
    if r.options.get("sharp") == "on":
        try:
            topo = GpuCluster(topo.system.name, topo.num_nodes, sharp=True)
        except TypeError:
            raise CollectivesError(f"{r.run_id} needs a fabric with InfiniBand SHARP, which "
                                   f"GpuCluster does not model yet") from None
    return topo


def _measured(row: dict, collective: Collective, n: int) -> float | None:
    for key in ("oop_time_us", "ip_time_us"):
        if row.get(key):
            return float(row[key]) * 1e-6
    busbw = row.get("ip_busbw_gbs") or row.get("oop_busbw_gbs")
    if busbw and float(busbw) > 0:
        algbw = float(busbw) * 1e9 / collective.busbw_factor(n)
        return int(row["size_bytes"]) / algbw
    return None


def compare(r: Run) -> list[Row]:
    """Predicted against measured for every row of a run with a model (sizes of 0 skipped)."""
    topo = topology_for(r)
    n = r.gpus_per_node * r.num_nodes
    algorithm = r.options.get("algorithm", "auto")
    nvls = {"off": False, "on": True}.get(r.options.get("nvls", ""))
    out = []
    for row in r.rows:
        size = int(row["size_bytes"])
        t = _measured(row, r.collective, n)
        if size <= 0 or t is None or t <= 0:
            continue
        dtype = r.options.get("dtype") or TYPES.get(row.get("type", ""), "float32")
        e = estimate(r.collective, topo, size, algorithm, model="nccl", nvls=nvls, dtype=dtype)
        out.append(Row(size, t, e.time, e.algorithm, e.protocol))
    return out


@dataclass(frozen=True)
class Summary:
    """A run's errors: median and worst (by absolute value), for small and large sizes."""

    run: Run
    rows: tuple
    median_small: float | None
    worst_small: float | None
    median_large: float | None
    worst_large: float | None

    def within_goals(self) -> bool:
        """The median error of each size class within its goal, unless the run's data
        record why the model does not hold there."""
        ok_small = ("small" in self.run.exceptions or self.median_small is None
                    or abs(self.median_small) <= GOALS["small"])
        ok_large = ("large" in self.run.exceptions or self.median_large is None
                    or abs(self.median_large) <= GOALS["large"])
        return ok_small and ok_large


def summarize(r: Run) -> Summary:
    rows = tuple(compare(r))
    small = [x.error for x in rows if x.nbytes < LARGE]
    large = [x.error for x in rows if x.nbytes >= LARGE]

    def med(xs):
        """The error of median size (by its absolute value, keeping its sign)."""
        return sorted(xs, key=abs)[len(xs) // 2] if xs else None

    def worst(xs):
        return max(xs, key=abs) if xs else None
    return Summary(r, rows, med(small), worst(small), med(large), worst(large))


def report(summaries=None) -> str:
    """The validation table: one line per run, then the rows of each."""
    skipped = []
    if summaries is None:
        summaries = []
        for r in runs():
            try:
                summaries.append(summarize(r))
            except CollectivesError as exc:
                skipped.append((r.run_id, str(exc)))

    def pct(x):
        return "    -" if x is None else f"{x:+6.0%}"
    lines = [f"{'run':<58} {'healthy':>7} {'rows':>4}  {'median<1MiB':>11} {'worst<1MiB':>10}"
             f"  {'median>=1MiB':>12} {'worst>=1MiB':>11}"]
    for s in summaries:
        lines.append(f"{s.run.run_id:<58} {s.run.healthy:>7} {len(s.rows):>4}  {pct(s.median_small):>11} "
                     f"{pct(s.worst_small):>10}  {pct(s.median_large):>12} {pct(s.worst_large):>11}")
    for run_id, why in skipped:
        lines.append(f"{run_id:<58} not modelled: {why}")
    return "\n".join(lines)
