"""The book's helpers: what the chapters use beside the engine and the models.

Loaded on first use (``import collectives_lib`` does not import them), like
:mod:`collectives_lib.draw`:

==============  ===========================================================
``prose``       :func:`~.prose.glue`: a chapter's prose numbers, shown beside the code
                in Colab and VS Code and evaluated by ``{eval}`` on the site
``tables``      :func:`~.tables.table`: every small table a chapter prints, aligned one
                way and no wider than the code box
``explore``     explorers and step players that also work on the static site
``workloads``   worked examples: FSDP, ZeRO, DDP buckets, multi-slice, sharded
                matmuls, PXN, pipelines of stages
``scaling``     Amdahl, stragglers, MoE traffic, reduction depth
``wire``        from a program to the wire: XLA HLO modules timed, torch.distributed
                calls mapped to collectives
==============  ===========================================================

``collectives_lib.workloads``, ``.scaling``, ``.wire`` and ``.explore`` name the
same modules, so a chapter writes ``cl.workloads.zero_traffic(...)``.
"""

from __future__ import annotations

import importlib

from .prose import BUILD_ENV, Text, glue, in_book_build
from .tables import WIDTH, Table, table

__all__ = ["glue", "table", "Table", "WIDTH", "Text", "BUILD_ENV", "in_book_build", "explore", "workloads", "scaling", "wire"]

_LAZY = {"explore", "workloads", "scaling", "wire"}


def __getattr__(name: str):
    if name in _LAZY:
        module = importlib.import_module(f".{name}", __name__)
        globals()[name] = module
        return module
    raise AttributeError(f"module 'collectives_lib.book' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _LAZY)
