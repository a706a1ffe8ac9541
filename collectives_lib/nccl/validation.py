"""Published nccl-tests runs as the referee of NCCL's model: an experiment, fitted apart from tested.

``collectives_lib/data/nccl_tests`` holds nccl-tests outputs people and
vendors have published (GitHub issues of NVIDIA/nccl and NVIDIA/nccl-tests,
cloud providers' benchmark repositories and guides), one CSV per run with a
row per size, and ``runs.csv`` with each run's hardware, NCCL version,
settings, source URL and whether its poster or NVIDIA called it healthy.

* ``models.csv`` says which preset and options stand for each run (a spec such
  as ``dgx-a100:3:nics=4x200`` and ``launch=gpus-per-process=4``), or why none
  does, and each run's recorded **verdict**: ``within`` the goals, an
  ``exception`` (the ``exceptions`` column says, per size class, why the model
  does not hold there), or ``not-modelled`` (``why_not``).
* ``fits.csv`` says which runs each fitted constant of the model was fitted on
  (:data:`FITTED`). Those runs are the **fit set**; every other run is
  **held out**, and the goals are tested on the held-out runs.

:func:`compare` predicts every row with :func:`collectives_lib.estimate`
(NCCL's model) and reports the error against the measured time:

    >>> from collectives_lib.nccl import validation
    >>> run = validation.run("dgxh100x8-nvls-allreduce-dgxc-bench")
    >>> rows = validation.compare(run)
    >>> big = [r for r in rows if r.nbytes == 4 * 2**30][0]
    >>> round(big.measured * 1e6), round(big.predicted * 1e6), f"{big.error:+.1%}"
    (15749, 16171, '+2.7%')

:func:`refit` fits a constant again on any set of runs and :func:`leave_one_out`
refits it without each of its runs in turn (``benchmarks/bench_validation.py``
prints both).

Introduced in the chapter *Measure it yourself*.
"""

from __future__ import annotations

import contextlib
import csv
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

from ..collective import Collective
from ..errors import CollectivesError
from ..models import sweep
from ..topology import GpuCluster, parse_topology
from . import measured, p2p

#: nccl-tests' names of the collectives.
NAMES = {"all_reduce": "all_reduce", "all_gather": "all_gather", "reduce_scatter": "reduce_scatter",
         "alltoall": "all_to_all", "all_to_all": "all_to_all", "broadcast": "broadcast",
         "reduce": "reduce",
         "sendrecv": "send"}   # nccl-tests' sendrecv: every rank sends to the next one at once (a ring
                                # shift); one message between two ranks is the nearest collective
#: nccl-tests' type names and the library's dtypes.
TYPES = {"float": "float32", "half": "float16", "bfloat16": "bfloat16", "double": "float64",
         "int8": "int8", "uint8": "uint8", "int32": "int32", "int64": "int64", "": "float32"}
#: The boundary between small and large messages in the goals, and the goals (relative error).
LARGE = 2**20
SMALL_FROM = 2**10
GOALS = {"large": 0.15, "small": 0.35}
#: The collectives the goals are held to one by one (nccl-tests' sendrecv is "send").
COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send")
VERDICTS = ("within", "exception", "not-modelled")


@dataclass(frozen=True)
class Run:
    """One published run: its metadata, its rows, the preset that stands for it and its verdict."""

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
    verdict: str = ""     # recorded in models.csv: within, exception, not-modelled
    gpu_model: str = ""
    launch: str = ""

    @property
    def modelled(self) -> bool:
        return bool(self.topology)

    @property
    def machine(self) -> str:
        """A short name of the machine: GPU model and GPUs x nodes."""
        return f"{self.gpu_model or self.gpu.split()[0]} {self.gpus_per_node}x{self.num_nodes}"

    @property
    def fitted(self) -> tuple[str, ...]:
        """The constants this run was fitted on (fits.csv), empty for a held-out run."""
        return tuple(name for name, f in FITTED.items() if self.run_id in f.runs)

    @property
    def held_out(self) -> bool:
        return not self.fitted


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


@lru_cache(maxsize=1)
def _runs() -> tuple[Run, ...]:
    models = {m["run_id"]: m for m in _read("models.csv")}
    out = []
    for r in _read("runs.csv"):
        m = models.get(r["run_id"], {})
        if m.get("modelled") == "pending":       # a preset is named but its fit not yet judged
            m = dict(m, topology="", why_not=f"pending: {m['topology']} not yet judged: {m.get('why_not', '')}")
        elif m.get("modelled") == "no":
            m = dict(m, topology="")
        rows = tuple(_read(f"{r['run_id']}.csv"))
        out.append(Run(r["run_id"], Collective(NAMES[r["collective"]]), r["gpu"],
                       int(r["gpus_per_node"]), int(r["num_nodes"]), r["nccl_version"],
                       r["settings"], r["source_url"], r["healthy"], r["note"],
                       m.get("topology", ""), _options(m.get("options", "")),
                       m.get("why_not", "no model mapping"), rows, _exceptions(m.get("exceptions", "")),
                       m.get("verdict", ""), r.get("gpu_model", ""), r.get("launch", "")))
    return tuple(out)


def runs() -> list[Run]:
    """Every published run, in the order of ``runs.csv``."""
    return list(_runs())


def run(run_id: str) -> Run:
    for r in _runs():
        if r.run_id == run_id:
            return r
    raise CollectivesError(f"no published run called {run_id!r}")


def topology_for(r: Run):
    """The preset that stands for a run's machine."""
    if not r.modelled:
        raise CollectivesError(f"{r.run_id} has no model: {r.why_not}")
    topo = parse_topology(r.topology)
    if r.options.get("sharp") == "on":
        if not isinstance(topo, GpuCluster):
            raise CollectivesError(f"{r.run_id}: SHARP needs nodes on an InfiniBand fabric, not {topo!r}")
        topo = GpuCluster(topo.system.name, topo.num_nodes, sharp=True, gpus_per_node=topo.gpus_per_node,
                          nics_per_node=topo.nics_per_node, nic_rate=topo.nic_rate, fabric=topo.fabric)
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


def request(r: Run) -> dict:
    """The keyword arguments of :func:`collectives_lib.estimate` for a run's options."""
    nvls = {"off": False, "on": True}.get(r.options.get("nvls", ""))
    return {"model": "nccl", "nvls": nvls, "launch": r.options.get("launch") or None,
            "registered": r.options.get("registered") == "yes",
            "protocol": r.options.get("protocol") or None}


def compare(r: Run) -> list[Row]:
    """Predicted against measured for every row of a run with a model (sizes of 0 skipped)."""
    topo = topology_for(r)
    n = r.gpus_per_node * r.num_nodes
    algorithm = r.options.get("algorithm", "auto")
    kw = request(r)
    wanted = {}                                   # dtype -> [(size, measured)]
    for row in r.rows:
        size = int(row["size_bytes"])
        t = _measured(row, r.collective, n)
        if size <= 0 or t is None or t <= 0:
            continue
        dtype = r.options.get("dtype") or TYPES.get(row.get("type", ""), "float32")
        wanted.setdefault(dtype, []).append((size, t))
    out = []
    for dtype, items in wanted.items():
        answers = sweep(r.collective, topo, [s for s, _ in items], algorithm, dtype=dtype, **kw)
        out += [Row(size, t, e.time, e.algorithm, e.protocol) for (size, t), e in zip(items, answers)]
    return sorted(out, key=lambda x: x.nbytes)


@dataclass(frozen=True)
class Summary:
    """A run's errors: median and worst (by absolute value), for small (1 KiB to 1 MiB)
    and large (1 MiB and above) sizes."""

    run: Run
    rows: tuple
    median_small: float | None
    worst_small: float | None
    median_large: float | None
    worst_large: float | None

    def meets(self, size_class: str) -> bool:
        """The median error of ``size_class`` within its goal (or no rows there)."""
        med = self.median_small if size_class == "small" else self.median_large
        return med is None or abs(med) <= GOALS[size_class]

    def within_goals(self) -> bool:
        """The median error of each size class within its goal, unless the run's data
        record why the model does not hold there."""
        return all(self.meets(c) or c in self.run.exceptions for c in ("small", "large"))

    def meets_goals(self) -> bool:
        """Both goals met, exceptions or not."""
        return self.meets("small") and self.meets("large")

    @property
    def verdict(self) -> str:
        """What the comparison says: ``within`` (both goals met) or ``exception``."""
        return "within" if self.meets_goals() else "exception"


def _med(xs):
    """The error of median size (by its absolute value, keeping its sign)."""
    return sorted(xs, key=abs)[len(xs) // 2] if xs else None


def summarize(r: Run) -> Summary:
    rows = tuple(compare(r))
    small = [x.error for x in rows if SMALL_FROM <= x.nbytes < LARGE]
    large = [x.error for x in rows if x.nbytes >= LARGE]

    def worst(xs):
        return max(xs, key=abs) if xs else None
    return Summary(r, rows, _med(small), worst(small), _med(large), worst(large))


def verdict(r: Run) -> str:
    """A run's verdict as the model gives it today: ``not-modelled``, ``within`` or ``exception``."""
    return summarize(r).verdict if r.modelled else "not-modelled"


# --------------------------------------------------------------------------- the fitted constants

@dataclass(frozen=True)
class Fitted:
    """A fitted constant of NCCL's model: where it lives, the runs it was fitted on
    (fits.csv), the size class its goal is judged in, and the values a fit tries."""

    name: str
    value: float
    unit: str
    size_class: str                  # "small" or "large"
    runs: tuple[str, ...]
    how: str
    grid: tuple[float, ...] = ()

    def get(self) -> float:
        return _access(self.name)[0]()

    def set(self, value: float) -> None:
        _access(self.name)[1](value)


def _access(name: str):
    """(getter, setter) of a fitted constant by its fits.csv name."""
    if name.startswith("PIPELINE_LATENCY."):
        key = name.split(".", 1)[1]
        keys = ("COLLNET_DIRECT", "COLLNET_CHAIN") if key == "COLLNET" else (key,)

        def put(v):
            for k in keys:
                measured.PIPELINE_LATENCY[k] = v
        return (lambda: measured.PIPELINE_LATENCY[keys[0]], put)
    if name.startswith("PLUGIN_LATENCY."):
        key = name.split(".", 1)[1]

        def put_plugin(v):
            measured.PLUGIN_LATENCY[key] = v
        return (lambda: measured.PLUGIN_LATENCY[key], put_plugin)
    module, attr = {"LAUNCH": (measured, "LAUNCH"), "LAUNCH_GRAPH": (measured, "LAUNCH_GRAPH"),
                    "NVLS_TREE_MNNVL": (measured, "NVLS_TREE_MNNVL"), "NET_LATENCY": (measured, "NET_LATENCY"),
                    "p2p.BASE": (p2p, "BASE"), "p2p.PER_PEER": (p2p, "PER_PEER"),
                    "p2p.NVLINK_EFFICIENCY": (p2p, "NVLINK_EFFICIENCY")}.get(name, (None, None))
    if module is None:
        raise CollectivesError(f"fits.csv names {name!r}, which is not a constant of NCCL's model")
    return (lambda: getattr(module, attr), lambda v: setattr(module, attr, v))


def _fits() -> dict[str, Fitted]:
    out = {}
    for f in _read("fits.csv"):
        grid = tuple(float(x) for x in f["grid"].split()) if f.get("grid") else ()
        out[f["constant"]] = Fitted(f["constant"], float(f["value"]), f["unit"], f["size_class"],
                                    tuple(x for x in f["runs"].split(";") if x), f["how"], grid)
    return out


#: Every fitted constant of NCCL's model, by its fits.csv name.
FITTED: dict[str, Fitted] = _fits()


@contextlib.contextmanager
def constants(values: dict):
    """Set fitted constants (name -> value) for the duration of a ``with`` block."""
    old = {name: FITTED[name].get() for name in values}
    try:
        for name, v in values.items():
            FITTED[name].set(v)
        yield
    finally:
        for name, v in old.items():
            FITTED[name].set(v)


def _score(f: Fitted, run_ids, value: float) -> float:
    """The largest over ``run_ids`` of |median error| in ``f``'s size class at ``value``."""
    with constants({f.name: value}):
        meds = []
        for rid in run_ids:
            s = summarize(run(rid))
            m = s.median_small if f.size_class == "small" else s.median_large
            if m is not None:
                meds.append(abs(m))
    return max(meds) if meds else float("inf")


def refit(name: str, run_ids=None) -> float:
    """The value of the grid that best fits ``run_ids`` (default: the constant's fit set):
    the least largest |median error| over the runs, in the constant's size class (ties:
    the smaller value)."""
    f = FITTED[name]
    ids = f.runs if run_ids is None else tuple(run_ids)
    if not ids or not f.grid:
        return f.value
    return min(f.grid, key=lambda v: (_score(f, ids, v), v))


def leave_one_out(name: str) -> list[tuple[str, float, float | None]]:
    """For each run of the constant's fit set (two or more): the value fitted without it,
    and that run's median error (in the constant's size class) at that value."""
    f = FITTED[name]
    out = []
    if len(f.runs) < 2 or not f.grid:
        return out
    for rid in f.runs:
        value = refit(name, [x for x in f.runs if x != rid])
        with constants({name: value}):
            s = summarize(run(rid))
        out.append((rid, value, s.median_small if f.size_class == "small" else s.median_large))
    return out


# --------------------------------------------------------------------------- the tables

def summaries() -> list[Summary]:
    """The summary of every modelled run."""
    return [summarize(r) for r in _runs() if r.modelled]


def by_collective(rows: list[Summary]) -> dict[str, tuple[int, int]]:
    """(runs meeting both goals, runs) per collective."""
    out = {}
    for c in COLLECTIVES:
        mine = [s for s in rows if s.run.collective.value == c]
        out[c] = (sum(s.meets_goals() for s in mine), len(mine))
    return out


def report(rows: list[Summary] | None = None) -> str:
    """The validation table: the fit set and the held-out runs apart, then the runs not modelled."""
    rows = summaries() if rows is None else rows

    def pct(x):
        return "    -" if x is None else f"{x:+6.0%}"

    def line(s):
        why = ""
        if not s.meets_goals():
            why = "  " + " | ".join(f"{k}: {v}" for k, v in s.run.exceptions.items())[:90]
        return (f"{s.run.run_id:<58} {s.run.collective.value:<14} {s.run.machine:<22} {s.run.healthy:>7} "
                f"{pct(s.median_small):>7} {pct(s.median_large):>7}  {s.verdict}{why}")
    head = (f"{'run':<58} {'collective':<14} {'machine':<22} {'healthy':>7} {'<1MiB':>7} {'>=1MiB':>7}  verdict")
    fit = [s for s in rows if not s.run.held_out]
    held = [s for s in rows if s.run.held_out]
    lines = [f"fit set ({len(fit)} runs: the fitted constants' runs, fits.csv)", head]
    lines += [line(s) for s in fit]
    lines += ["", f"held out ({len(held)} runs)", head]
    lines += [line(s) for s in held]
    judged = [s for s in held if s.run.healthy != "no"]
    ok = sum(s.meets_goals() for s in judged)
    lines += ["", f"held out, healthy or unknown: {ok} of {len(judged)} meet both goals "
              f"({ok / max(1, len(judged)):.0%}); per collective: "
              + ", ".join(f"{c} {a}/{b}" for c, (a, b) in by_collective(judged).items() if b)]
    lines += ["", "not modelled"]
    lines += [f"{r.run_id:<58} {r.why_not}" for r in _runs() if not r.modelled]
    return "\n".join(lines)
