"""Checks of the public entry points' arguments, in one place.

Each function returns the value in the form the library works with, or raises
:class:`~collectives_lib.errors.CollectivesError` with a message that names the
value and what is allowed, so a wrong type never surfaces as a raw
``AttributeError``, ``TypeError`` or ``IndexError`` from deep inside, and a
value is never silently changed (``2.5`` ranks is not 2, ``True`` is not a
bandwidth of 1 B/s).

>>> positive(45e9, "bandwidth")
45000000000.0
>>> dims((4, 4))
(4, 4)
>>> dims((2.5, 2))
Traceback (most recent call last):
...
collectives_lib.errors.CollectivesError: torus axis sizes must be whole numbers >= 1, got 2.5 in (2.5, 2)
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .errors import CollectivesError
from .units import MAX_BYTES, check_nbytes  # noqa: F401  (the largest size: far beyond any memory, times stay finite)


def is_bool(value) -> bool:
    return isinstance(value, (bool, np.bool_))


def _real(value, what: str, allowed: str) -> float:
    if is_bool(value) or not isinstance(value, (numbers.Real, str)) and not hasattr(value, "__float__"):
        raise CollectivesError(f"{what} must be {allowed}, got {value!r}")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise CollectivesError(f"{what} must be {allowed}, got {value!r}") from None


def positive(value, what: str) -> float:
    """``value`` as a finite float > 0 (not a bool), else an error naming ``what``."""
    x = _real(value, what, "a positive number")
    if not math.isfinite(x) or x <= 0:
        raise CollectivesError(f"{what} must be a positive number, got {value!r}")
    return x


def nonnegative(value, what: str) -> float:
    """``value`` as a finite float >= 0 (not a bool), else an error naming ``what``."""
    x = _real(value, what, "a number >= 0")
    if not math.isfinite(x) or x < 0:
        raise CollectivesError(f"{what} must be a number >= 0, got {value!r}")
    return x


#: A link's one-way bandwidth, bytes/s: from a thousandth of a byte per second to an exabyte per
#: second (real links are 1e6..1e12); beyond, times overflow a float or mean nothing.
BANDWIDTH_RANGE = (1e-3, 1e18)
#: A link's or a step's latency, seconds: at most a million (about 11 days).
MAX_LATENCY = 1e6


def bandwidth(value, what: str = "bandwidth (bytes/s, one way)") -> float:
    """A link bandwidth in bytes/s, within :data:`BANDWIDTH_RANGE`."""
    x = positive(value, what)
    lo, hi = BANDWIDTH_RANGE
    if not lo <= x <= hi:
        raise CollectivesError(f"{what} must be between {lo:g} and {hi:g} bytes/s, got {value!r}")
    return x


def latency(value, what: str = "latency (s per hop)") -> float:
    """A latency in seconds, 0 .. :data:`MAX_LATENCY`."""
    x = nonnegative(value, what)
    if x > MAX_LATENCY:
        raise CollectivesError(f"{what} must be at most {MAX_LATENCY:g} s (about 11 days), got {value!r}")
    return x


def whole(value, what: str, *, minimum: int = 1) -> int:
    """``value`` as an int >= ``minimum``: an int or numpy integer, never a bool, a float or a string."""
    if is_bool(value) or not isinstance(value, numbers.Integral):
        raise CollectivesError(f"{what} must be a whole number >= {minimum}, got {value!r}")
    if int(value) < minimum:
        raise CollectivesError(f"{what} must be >= {minimum}, got {int(value)}")
    return int(value)


def flag(value, what: str):
    """``value`` as a bool: only True or False (a string such as "no" is not False)."""
    if not is_bool(value):
        raise CollectivesError(f"{what} must be True or False, got {value!r}")
    return bool(value)


def size(value, what: str = "size") -> int:
    """A positive whole number of bytes (see :func:`collectives_lib.units.check_nbytes`)."""
    return check_nbytes(value, what=what)


def dims(value, what: str = "torus axis sizes") -> tuple[int, ...]:
    """A torus's shape: one whole number >= 1, or a non-empty sequence of them."""
    if isinstance(value, str):
        raise CollectivesError(
            f"{what} must be a tuple of whole numbers such as (4, 4), got the string {value!r}; "
            f"a spec such as 'torus:{value}' is read by cl.parse_topology")
    items = tuple(value) if iterable(value) else (value,)
    if not items:
        raise CollectivesError(f"{what} must name at least one axis, such as (8,) or (4, 4), got {value!r}")
    for d in items:
        if is_bool(d) or not isinstance(d, numbers.Integral) or int(d) < 1:
            raise CollectivesError(f"{what} must be whole numbers >= 1, got {d!r} in {value!r}")
    return tuple(int(d) for d in items)


def axes(value):
    """The axes a collective spans: None (all), one name or index, or a non-empty list of them."""
    if value is None:
        return None
    if isinstance(value, (str, numbers.Integral)) and not is_bool(value):
        if isinstance(value, str) and not value.strip():
            raise CollectivesError("axes must name an axis, such as 'x' or ('x', 'y'), got ''")
        return [value]
    if not iterable(value):
        raise CollectivesError(f"axes must be an axis name such as 'x', a list of them, or None, got {value!r}")
    items = list(value)
    if not items:
        raise CollectivesError(f"axes must name at least one axis (None means every axis), got {value!r}")
    for a in items:
        if is_bool(a) or not isinstance(a, (str, numbers.Integral)):
            raise CollectivesError(f"axes must be axis names such as 'x' or indices, got {a!r} in {value!r}")
    return items


def root(value, group_size: int, num_groups: int = 1, what: str = "root") -> int:
    """A root rank: a whole number 0 .. group_size - 1 (local to its group when there are several)."""
    where = "" if num_groups == 1 else f" of its group ({num_groups} groups of {group_size} ranks)"
    if is_bool(value) or not isinstance(value, numbers.Integral):
        raise CollectivesError(f"{what} must be a whole-number rank, got {value!r}")
    if not 0 <= int(value) < group_size:
        raise CollectivesError(f"{what} must be a rank 0..{group_size - 1}{where}, got {int(value)}")
    return int(value)


def endpoints(collective, options: dict, group_size: int, num_groups: int = 1) -> dict:
    """The rank options of ``collective`` (:attr:`Collective.endpoint_options`: a root, or a
    send's ``src`` and ``dst``) checked as ranks of a group of ``group_size``; options
    that name no rank for this collective are refused rather than ignored. Per-group
    lists (one root per group) are left to the builder."""
    from .collective import collective as as_collective
    coll = as_collective(collective)
    out = dict(options)
    allowed = coll.endpoint_options
    for key in ("root", "src", "dst"):
        value = options.get(key)
        if value is None:
            continue
        if key not in allowed:
            what = (f"its ranks are {' and '.join(allowed)}" if allowed else "it has no root")
            raise CollectivesError(f"{key} does not apply to {coll}: {what}")
        if not iterable(value):
            out[key] = root(value, group_size, num_groups, what=key)
    if "src" in allowed and not iterable(out.get("src", 0)) and not iterable(out.get("dst", 0)):
        s, d = out.get("src", 0), out.get("dst", group_size - 1)
        if s == d:
            raise CollectivesError(
                f"send needs two different ranks, got {s} and {d}" if group_size > 1 else
                f"send needs two ranks; the group has {group_size}")
    return out


def iterable(value) -> bool:
    try:
        iter(value)
    except TypeError:
        return False
    return True


#: The most ranks a topology may have: its links are arrays (about 40 bytes a link), so
#: 4,194,304 ranks keep any topology under about a gigabyte; a 1,000,000-port switch and
#: 100,000 DGX nodes (800,000 GPUs) fit.
MAX_TOPOLOGY_RANKS = 1 << 22


def check_num_ranks(n: int, *, what: str = "number of ranks N") -> int:
    """Return ``n`` as an int if it is a whole number >= 1, else raise."""
    return whole(n, what)


def topology_ranks(n: int, what: str) -> int:
    """``n`` ranks of a topology ``what``, refused past :data:`MAX_TOPOLOGY_RANKS`."""
    n = int(n)
    if n > MAX_TOPOLOGY_RANKS:
        raise CollectivesError(f"{what} has {n:,} ranks, beyond the {MAX_TOPOLOGY_RANKS:,} a "
                               "topology may have (its links are held in memory)")
    return n
