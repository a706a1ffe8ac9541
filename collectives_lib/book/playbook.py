"""The Ultra-Scale Playbook's measured figures, as the book keeps them.

``collectives_lib/data/playbook/measured.csv`` holds the numbers the Playbook
([Tazi et al. 2025](https://huggingface.co/spaces/nanotron/ultrascale-playbook))
plots or states about throughput and bandwidth on its cluster of 8xH100 nodes,
each row with the section it comes from and the copy of the text it was read in
(repository, path, commit). Its README says how they were copied.

>>> from collectives_lib.book import playbook
>>> playbook.measured("tp_scaling", "change_from_previous")[16]
-42.7
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, fields
from functools import lru_cache
from importlib import resources

from ..errors import CollectivesError

URL = "https://huggingface.co/spaces/nanotron/ultrascale-playbook"
CSV = ("data", "playbook", "measured.csv")


@dataclass(frozen=True)
class Figure:
    """One number of the Playbook: ``value`` (``unit``) of ``series`` at ``x_name = x``."""

    id: str              # which figure or sentence: tp_scaling, comm_bandwidth, ...
    series: str          # tokens_per_s_per_gpu, change_from_previous, all_reduce, ...
    x_name: str          # tp, dp, pp or nodes
    x: int
    value: float
    unit: str            # tokens/s/GPU, percent, GB/s
    kind: str            # plot data, plot annotation or text
    section: str         # the Playbook's section, "Part > subsection"
    source_repo: str     # the copy of the Playbook it was read in
    source_path: str
    source_commit: str
    original_url: str
    also_in: str         # a translation that states it too, where one was checked
    note: str


@lru_cache(maxsize=1)
def figures() -> tuple[Figure, ...]:
    """Every row of ``measured.csv``, typed."""
    text = resources.files("collectives_lib").joinpath(*CSV).read_text(encoding="utf-8")
    rows = csv.DictReader(text.splitlines())
    names = [f.name for f in fields(Figure)]
    if rows.fieldnames != names:
        raise CollectivesError(f"{'/'.join(CSV)}: columns {rows.fieldnames}, expected {names}")
    return tuple(Figure(**{**row, "x": int(row["x"]), "value": float(row["value"])})
                 for row in rows)


def measured(figure: str, series: str) -> dict[int, float]:
    """``{x: value}`` of one series of one figure, in the order the Playbook gives them."""
    out = {f.x: f.value for f in figures() if f.id == figure and f.series == series}
    if not out:
        known = sorted({(f.id, f.series) for f in figures()})
        raise CollectivesError(f"no Playbook figure {figure!r}, series {series!r}; known: {known}")
    return out
