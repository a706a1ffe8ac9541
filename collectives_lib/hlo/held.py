"""The collector held while the reader builds a module's records, and the records
left out of its young generations after.

:func:`collectives_lib.bulk.paused_gc` holds Python's cyclic garbage collector for a
block; when the block ends, the first allocation starts a collection that walks every
object the block made (a module of 50,000 collectives: over a million, 0.1 s a block,
three blocks a run). None of them is in a cycle, so :func:`paused_gc` here also moves
them, and whatever else the young generations hold, into the oldest generation as the
block ends (``gc.freeze()`` then ``gc.unfreeze()``: two list splices, no walk), where
only a full collection looks at them.

>>> import gc
>>> with paused_gc():
...     gc.isenabled()
False
>>> gc.isenabled(), gc.get_count()[0] < 700
(True, True)
"""

from __future__ import annotations

import contextlib
import gc

from ..bulk import paused_gc as _held

__all__ = ["paused_gc"]


@contextlib.contextmanager
def paused_gc():
    """The collector held for the block (as :func:`collectives_lib.bulk.paused_gc`),
    what the block made moved to the oldest generation as it ends."""
    try:
        with _held():
            yield
    finally:
        if gc.isenabled():
            gc.freeze()
            gc.unfreeze()
