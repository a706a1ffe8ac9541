"""Errors the library raises for bad input.

Every user-facing error is a :class:`CollectivesError` (a ``ValueError``), and its
message names the offending value and what is allowed, so the command line and
the notebook widgets can show it as one line.
"""

from __future__ import annotations


class CollectivesError(ValueError):
    """Bad input: the message says which value is wrong and what is allowed."""


class ScheduleError(CollectivesError):
    """A schedule is malformed or does not compute its collective.

    The message names the step, the rank and the chunk at fault.
    """


def require(condition: bool, message: str) -> None:
    """Raise :class:`CollectivesError` with ``message`` unless ``condition``."""
    if not condition:
        raise CollectivesError(message)


def check_power_of_two(n: int, algorithm: str) -> None:
    """Raise unless ``n`` is a power of two (recursive doubling and friends)."""
    if n < 1 or n & (n - 1):
        lower = 1 << (n.bit_length() - 1)
        upper = lower << 1
        raise CollectivesError(
            f"{algorithm} needs a power-of-two number of ranks, got N = {n}; "
            f"use N = {lower} or {upper}, or a ring algorithm"
        )
