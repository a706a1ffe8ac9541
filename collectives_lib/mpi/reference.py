"""Reference MPI runs recorded with the library's runner and shipped with it.

A live run in a notebook measures the machine it runs on, which for a book
built on a small virtual machine means two processes at most. A reference run
is one recorded once with more ranks (``collectives_lib/data/mpi_runs/record.py``
runs ``collectives run`` a few times per command and writes one JSON file with
the machine, the date, every command and an honest label). :func:`reference`
reads it back and keeps, for every (algorithm, number of ranks, size), the
median over the repeats of the measured, MPI and predicted times, and how far
the repeats spread (largest over smallest), so a reader can see whether the
times are a measurement or noise.

Introduced in the chapter *Measure it yourself*.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources

import numpy as np

from ..errors import CollectivesError
from .calibration import Calibration

#: Reference runs shipped in ``collectives_lib/data/mpi_runs`` (name -> file).
REFERENCES = {"2core-vm": "reference-2core-vm.json"}

_KEY = ("collective", "algorithm", "num_ranks", "size_bytes")
_TIMES = ("time_s", "mpi_time_s", "predicted_s")


@dataclass(frozen=True)
class Reference:
    """A recorded run: its provenance, the median rows and the median calibration."""

    name: str
    label: str
    machine: dict
    date: str
    commands: tuple[str, ...]
    repeats: int
    rows: tuple[dict, ...]
    calibration: Calibration

    @property
    def ok(self) -> bool:
        """Every row of every repeat was correct (checked against the definition and MPI)."""
        return all(r["correct"] for r in self.rows)

    def select(self, algorithm: str | None = None, **match) -> list[dict]:
        """Rows of one algorithm (and matching other keys, e.g. ``num_ranks=8``), by size."""
        out = [r for r in self.rows if (algorithm is None or r["algorithm"] == algorithm)
               and all(r.get(k) == v for k, v in match.items())]
        return sorted(out, key=lambda r: r["size_bytes"])

    def series(self, algorithm: str, num_ranks: int, collective: str = "all_reduce") -> dict[str, np.ndarray]:
        """``size_bytes`` and the median times of one algorithm, as arrays over size."""
        rows = self.select(algorithm, num_ranks=num_ranks, collective=collective)
        if not rows:
            have = sorted({(r["collective"], r["algorithm"], r["num_ranks"]) for r in self.rows})
            raise CollectivesError(f"reference {self.name!r} has no {collective} {algorithm!r} on {num_ranks} "
                                   f"ranks; it has {have}")
        keys = ("size_bytes", "steps") + _TIMES + ("spread",)
        return {k: np.array([r[k] for r in rows]) for k in keys}


def reference(name: str = "2core-vm") -> Reference:
    """The reference run ``name`` (one of :data:`REFERENCES`), medians over its repeats."""
    if name not in REFERENCES:
        raise CollectivesError(f"no reference MPI run {name!r}; there are: {', '.join(REFERENCES)}")
    text = resources.files("collectives_lib").joinpath("data", "mpi_runs", REFERENCES[name]).read_text()
    data = json.loads(text)
    meta = data["meta"]
    groups: dict[tuple, list[dict]] = {}
    for run in data["runs"]:
        for row in run["result"]["rows"]:
            groups.setdefault(tuple(row[k] for k in _KEY), []).append(row)
    rows = []
    for key, rs in groups.items():
        row = dict(zip(_KEY, key))
        row.update({k: float(np.median([r[k] for r in rs])) for k in _TIMES})
        times = [r["time_s"] for r in rs]
        row.update(steps=rs[0]["steps"], repeats=len(rs), correct=all(r["correct"] for r in rs),
                   spread=max(times) / min(times))
        rows.append(row)
    cals = [run["result"]["calibration"] for run in data["runs"] if run["result"].get("calibration")]
    first = cals[0]
    cals = [c for c in cals if c["sizes"] == first["sizes"]]        # the ping-pongs over one set of sizes
    cal = Calibration(alpha=float(np.median([c["alpha_s"] for c in cals])),
                      beta=float(np.median([c["beta_s_per_byte"] for c in cals])),
                      sizes=tuple(first["sizes"]),
                      times=tuple(float(np.median([c["times_s"][i] for c in cals])) for i in range(len(first["sizes"]))),
                      method=f"median over {len(cals)} calibrations ({first['method']})",
                      library=data["runs"][0]["result"].get("library", ""))
    return Reference(name=name, label=meta["label"], machine=meta["machine"], date=meta["date"],
                     commands=tuple(meta["commands"]), repeats=int(meta["repeats"]), rows=tuple(rows),
                     calibration=cal)
