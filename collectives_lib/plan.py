"""The front door: turn (collective, topology, algorithm) into a schedule.

``build("all_gather", tpu_slice("v5e", "8x16"), axes="x")`` returns the
schedule XLA would run on that axis (a chain: the short axis has no
wraparound); ``algorithm="auto"`` is resolved by
:func:`collectives_lib.timing.choose` (the ideal model's ``auto``), which on GPU systems does what NCCL's
tuner does. ``algorithms`` lists what applies and, with ``reasons=True``, why
the rest does not. Both read the algorithm registry
(:mod:`collectives_lib.builders`).

>>> import collectives_lib as cl
>>> cl.build("all_gather", 4, "ring")
<Schedule ring all_gather: 4 ranks, 3 steps>
>>> cl.algorithms("all_reduce", cl.Ring(6, bandwidth=45e9), reasons=True)["rabenseifner"]
'rabenseifner needs a power-of-two number of ranks, got N = 6'

Introduced in the chapter *A first look*; every chapter uses it.
"""

from __future__ import annotations

import numpy as np

from . import checks, timing
from .builders import algorithm_name, build_named, reasons as _reasons_for
from .collective import collective as as_collective
from .errors import CollectivesError
from .builders import check_options
from .schedule import Schedule


def build(collective, topology, algorithm: str = "auto", *, axes=None,
          nbytes: int | None = None, **options) -> Schedule:
    """The schedule of ``collective`` on ``topology`` with ``algorithm``.

    ``topology`` is a :class:`~collectives_lib.topology.Topology`, or a number of
    ranks for a schedule over abstract ranks (no network: ``build("all_gather",
    4, "ring")``). ``axes`` names the mesh axes the collective spans (``"x"``,
    ``("x", "y")``, ``"node"``, ``"gpu"``); the other axes form independent
    groups that run at the same time. ``nbytes`` only matters to ``auto`` on
    GPU systems, where the best algorithm depends on the size. Options:
    ``root`` (broadcast, reduce, gather), ``chunks`` (pipelined chain
    broadcast), ``matrix`` (all-to-all traffic matrix, bytes from origin to
    destination), ``intra`` ("ring" or "direct" inside nodes), ``src``, ``dst``
    and ``paths`` (send: "disjoint", "shortest" or a count).
    """
    coll = as_collective(collective)
    check_options(coll, options)
    name = algorithm_name(algorithm)
    if name == "auto":
        if isinstance(topology, (int, np.integer)) and not isinstance(topology, bool):
            raise CollectivesError("auto needs a topology to choose for; name an algorithm "
                                   "for a schedule over a number of ranks")
        size = 1 << 30 if nbytes is None else checks.size(nbytes)
        name = timing.choose(coll, topology, size, axes=axes, options=options)[0]
    return build_named(coll, topology, name, axes, options)


def algorithms(collective, topology, axes=None, *, reasons: bool = False, **options):
    """The algorithms that apply to ``collective`` on ``topology`` (over ``axes``).

    A list of names; with ``reasons=True``, a dict over every registered
    algorithm for the collective: None where it applies, else why not.
    """
    coll = as_collective(collective)
    check_options(coll, options)
    table = _reasons_for(coll, topology, axes, options)
    if reasons:
        return table
    return [name for name, why in table.items() if why is None]
