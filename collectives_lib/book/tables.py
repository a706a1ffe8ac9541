"""A chapter's small tables, printed one way and never wider than the code box.

A chapter that compares algorithms of one collective at several sizes uses
:func:`collectives_lib.analysis.compare`, which prints like nccl-tests. Every
other table a chapter prints (one row per machine, per N, per stage...) is a
:class:`Table`: rows of cells under a header, text columns aligned left and
number columns right, so no chapter aligns columns by hand with f-strings.

>>> print(table([("ring", 7, 1.5e-3), ("tree", 3, None)], ("algorithm", "steps", "time (s)")))
algorithm  steps  time (s)
ring           7    0.0015
tree           3       n/a

A table wider than the book's code box (:data:`WIDTH` characters) is refused
when it is made, naming its width, so a chapter cannot print lines a reader
has to scroll sideways to read.

Introduced in the chapter *A first look*.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any, Iterable, Sequence

from ..errors import CollectivesError

#: Characters a line of code or output may hold: the code box of the built
#: site holds about 93 at 1600 px, a little less in a narrow JupyterLab pane.
WIDTH = 88


def _cell(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, Integral):
        return str(int(value))
    if isinstance(value, Real):
        return f"{float(value):.4g}"
    return str(value)


def _numeric(value: Any) -> bool:
    return value is None or (isinstance(value, Real) and not isinstance(value, bool))


#: A formatted quantity: a number, then at most one unit word ("1.2 ms", "3.5x",
#: "2,198", "20.8 GB/s"); a label that only starts with a digit ("2 nodes (16 GPUs)",
#: "9 of 40") is text.
_QUANTITY = re.compile(r"[-+]?\d[\d,.]*(?:e[-+]?\d+)?(?: ?[^\s\d][^\s]*)?")


def _quantity(value: Any) -> bool:
    return _numeric(value) or (isinstance(value, str) and _QUANTITY.fullmatch(value) is not None)


@dataclass(frozen=True)
class Table:
    """Rows of text cells under a header (made by :func:`table`); ``str()`` aligns them."""

    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    right: tuple[bool, ...]            # which columns align right (numbers)
    title: str | None = None
    gap: int = 2

    def widths(self) -> list[int]:
        return [max([len(h)] + [len(r[i]) for r in self.rows]) for i, h in enumerate(self.header)]

    def lines(self) -> list[str]:
        widths = self.widths()
        pad = " " * self.gap

        def line(cells):
            return pad.join(c.rjust(w) if right else c.ljust(w)
                            for c, w, right in zip(cells, widths, self.right)).rstrip()

        out = [self.title] if self.title else []
        out.append(line(self.header))
        out.extend(line(r) for r in self.rows)
        return out

    def column(self, name: str) -> list[str]:
        """The cells of the column headed ``name``."""
        if name not in self.header:
            raise CollectivesError(f"this table has no column {name!r}; its columns: {', '.join(self.header)}")
        i = self.header.index(name)
        return [r[i] for r in self.rows]

    def as_dict(self) -> dict:
        return {"title": self.title, "header": list(self.header), "rows": [list(r) for r in self.rows]}

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(str(self))


def table(rows: Iterable[Sequence[Any]], header: Sequence[str], *, title: str | None = None,
          width: int = WIDTH) -> Table:
    """A :class:`Table` of ``rows`` (each a sequence of cells, one per name of
    ``header``). Cells that are text print as they are (format times, sizes
    and rates with :func:`~collectives_lib.format_time` and its siblings);
    whole numbers print as they are, other numbers to 4 significant digits,
    ``None`` as ``n/a``. A column whose cells are all numbers aligns right,
    and so does a column of text cells that start with a digit (formatted
    quantities such as ``1.2 ms``).

    Refused, naming the value: a row with more or fewer cells than the
    header, an empty header, or a table wider than ``width`` characters.
    """
    header = tuple(str(h) for h in header)
    if not header:
        raise CollectivesError("table needs a header: one name per column")
    raw = [tuple(r) for r in rows]
    for k, r in enumerate(raw):
        if len(r) != len(header):
            raise CollectivesError(f"table row {k} has {len(r)} cells, the header {len(header)}: {r!r}")
    cells = tuple(tuple(_cell(v) for v in r) for r in raw)
    right = tuple(
        bool(raw) and all(_quantity(r[i]) for r in raw)
        for i in range(len(header)))
    t = Table(header, cells, right, title)
    widest = max(len(line) for line in t.lines())
    if widest > width:
        raise CollectivesError(
            f"this table is {widest} characters wide and the book's code box holds {width}: "
            "shorten its labels, drop a column or split it in two")
    return t
