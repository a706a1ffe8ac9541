"""Is my cluster healthy? An nccl-tests output read beside NCCL's model.

``collectives diagnose FILE`` and :func:`diagnose` take what an nccl-tests
``*_perf`` binary printed, infer the collective, ranks, processes, hosts,
GPU model and NCCL version, pick the nearest preset (or take the one given),
time every row with NCCL's model and say ``healthy``, ``degraded`` or
``unknown`` (no preset stands for the machine), with findings that name a
likely cause and give the numbers behind it.

* :mod:`.parse`: any nccl-tests output to a frozen :class:`~.parse.Output`;
* :mod:`.infer`: the output to a :class:`~.infer.Machine` and its preset
  (:data:`~.infer.MACHINES`, one row per GPU model);
* :mod:`.findings`: the rows beside the model, the verdict and the findings,
  with the thresholds and the published runs they come from;
* :mod:`.report`: :class:`~.report.Diagnosis`, its text and its JSON.

The package is also the function: ``collectives_lib.diagnose(source, topology=None)``
calls :func:`diagnose` (``collectives_lib`` loads the package on first use, and a
package is what ``import collectives_lib.diagnose`` leaves on ``collectives_lib``,
so the package answers the call itself).

>>> from importlib import resources
>>> import collectives_lib as cl
>>> raw = resources.files("collectives_lib") / "data/nccl_tests/raw"
>>> d = cl.diagnose(raw / "h100x8-nvls-allreduce-issue290.txt")
>>> d.machine.spec, d.verdict, round(d.metrics.peak_ratio, 2)
('dgx-h100:1', 'healthy', 0.98)

Introduced in the chapter *Running and reading NCCL*.
"""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path

from ..errors import CollectivesError
from .findings import FAST, FLOOR, PLATEAU, SLOW, Comparison, Finding, Metrics, assess, compare
from .infer import MACHINES, Machine, MachineRow, infer_machine
from .parse import MAX_BYTES, Output, decode, parse_output
from .report import Diagnosis

__all__ = ["diagnose", "read_input", "Diagnosis", "Output", "Machine", "MachineRow", "MACHINES",
           "Comparison", "Finding", "Metrics", "parse_output", "infer_machine", "compare",
           "assess", "MAX_BYTES", "SLOW", "FAST", "FLOOR", "PLATEAU"]


def read_input(source) -> str:
    """The text of ``source``: a path (``str`` or :class:`~pathlib.Path`) or the text itself
    (a ``str`` with a line break), at most :data:`MAX_BYTES`."""
    if isinstance(source, bytes):
        return decode(source)
    if isinstance(source, (Path, os.PathLike)) or hasattr(source, "read_bytes") or (isinstance(source, str) and "\n" not in source
                                    and len(source) < 4096 and source.strip()):
        if hasattr(source, "read_bytes") and not isinstance(source, (str, os.PathLike)):
            data = source.read_bytes()                  # an importlib.resources Traversable
            return decode(data[:MAX_BYTES + 1], str(source))
        path = os.fspath(source)
        try:
            size = os.path.getsize(path)
        except OSError as exc:
            raise CollectivesError(f"cannot read {path}: {exc.strerror or exc}") from None
        if size > MAX_BYTES:
            raise CollectivesError(
                f"{path} is {size:,} bytes, more than the {MAX_BYTES // 2**20} MiB read: keep "
                f"rank 0's lines (nccl-tests prints its table once)")
        try:
            with open(path, "rb") as f:
                return decode(f.read(MAX_BYTES + 1), path)
        except OSError as exc:
            raise CollectivesError(f"cannot read {path}: {exc.strerror or exc}") from None
    if isinstance(source, str):
        return source
    raise CollectivesError(f"give nccl-tests output as text or a path, not {type(source).__name__}")


def diagnose(source, topology=None, *, env: dict | None = None) -> Diagnosis:
    """Diagnose one nccl-tests output: its text or a path to it.

    ``topology`` (a spec such as ``"dgx-h100:2"`` or a topology value) replaces the
    inferred preset; it must have the table's rank count. ``env`` adds NCCL settings the
    output does not state (``{"NCCL_ALGO": "Ring"}``); the output's own win otherwise.
    """
    out = parse_output(read_input(source))
    machine = infer_machine(out, topology, env)
    rows = compare(out, machine)
    verdict, found, metrics = assess(out, machine, rows)
    return Diagnosis(out, machine, rows, verdict, found, metrics)


class _CallableModule(types.ModuleType):
    """This package, callable as :func:`diagnose`."""

    def __call__(self, source, topology=None, *, env: dict | None = None) -> Diagnosis:
        return diagnose(source, topology, env=env)


sys.modules[__name__].__class__ = _CallableModule
