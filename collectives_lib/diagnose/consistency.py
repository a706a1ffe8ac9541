"""Whether an nccl-tests table agrees with itself, within the rounding of the digits it
prints: algbw is size / time at every size, busbw / algbw is one factor of the rank
count in the whole table, and type, redop and root change only between sweeps.

Every check reads what :mod:`~collectives_lib.diagnose.parse` found and raises a
:class:`~collectives_lib.errors.CollectivesError` naming the line that contradicts the
rest. Its arguments are what ``parse`` makes (rows, their out-of-place and in-place
halves, the whole output); it does not import ``parse``, which imports it.
"""

from __future__ import annotations

import functools
import math
from ..errors import CollectivesError


def _ulp(value: float) -> float:
    """Half the last printed digit of a bandwidth (nccl-tests prints 2 decimals, fewer
    when the number is wide)."""
    if value >= 1e6:
        return 0.5 * 10 ** (math.floor(math.log10(value)) - 1)
    if value >= 1000:
        return 0.05 if value < 10000 else 0.5
    return 0.005


@functools.lru_cache(maxsize=8192)
def _half_of(text: str) -> float | None:
    """Half the last digit of a number as printed ('13.67' 0.005, '15749' 0.5, '1.2e+07'
    5e5), or None if the text is not a plain number."""
    mantissa, exp, power = text.lower().partition("e")
    whole, _, decimals = mantissa.lstrip("+-").partition(".")
    if not (whole + decimals).isdigit() or not (whole + decimals).isascii():
        return None
    if exp:
        power = power.lstrip("+")
        if not power.lstrip("-").isdigit():
            return None
    return 0.5 * 10.0 ** ((int(power) if exp else 0) - len(decimals))


def half_digit(t, i: int) -> float:
    """Half the last digit of column ``i`` (time, algbw, busbw) of a half row, as
    printed: nccl-tests' getFloatStr prints 2 decimals, fewer when the number is wide,
    then an exponent ('1.2e+07'); a hand-edited table may carry more decimals."""
    half = _half_of(t.printed[i]) if len(t.printed) > i else None
    if half is not None:
        return half
    value = (t.time_us, t.algbw, t.busbw)[i]
    if i == 0:                      # a time not printed: nccl-tests' 7 characters
        return value * _digits_rel(value) if value > 0 else 0.005
    return _ulp(value)


def ratio_interval(t) -> tuple[float, float]:
    """The busbw / algbw a half row allows after the rounding of its printed digits:
    (low, high), high infinite where algbw rounds to 0."""
    ua, ub = half_digit(t, 1), half_digit(t, 2)
    # and 0.01 %: hand-edited tables carry a digit more than they should
    lo = max(0.0, (t.busbw - ub) / (t.algbw + ua)) * (1 - 1e-4)
    hi = (t.busbw + ub) / (t.algbw - ua) * (1 + 1e-4) if t.algbw > ua else math.inf
    return lo, hi


def _digits_rel(value: float) -> float:
    """The relative rounding of a printed time: nccl-tests prints 7 characters
    (2 decimals, then fewer, then 2 significant digits)."""
    if value <= 0:
        return 1.0
    if value < 10000:
        return 0.005 / value
    if value < 100000:
        return 0.05 / value
    if value < 1e7:
        return 0.5 / value
    return 0.05


def _algbw_error(row, t, scale: float) -> float:
    """How far (GB/s) algbw lies outside what size / time allows when time and algbw are
    each anywhere within half their last printed digit (0 when consistent): at any size,
    so a 0.01 where size / time is 101 is as wrong as a 999.99."""
    if t.time_us <= 0:
        return 0.0
    ht, ha = half_digit(t, 0), half_digit(t, 1)
    lo = row.nbytes / ((t.time_us + ht) * scale) / 1e9 * (1 - 1e-9)
    hi = row.nbytes / ((t.time_us - ht) * scale) / 1e9 * (1 + 1e-9) if t.time_us > ht \
        else math.inf
    return max(0.0, lo - (t.algbw + ha), (t.algbw - ha) - hi)


def time_unit(rows: list, unit: str, cputime: bool) -> str:
    """us (every nccl-tests since 2019) or ms (the first ones): the one that makes
    algbw equal size / time in every row."""
    if cputime:
        return unit
    checks = [(r, t) for r in rows for t in (r.out_of_place, r.in_place)
              if t is not None and t.time_us > 0]
    if not checks:
        return unit
    for cand in (unit, "ms" if unit == "us" else "us"):
        scale = 1e-6 if cand == "us" else 1e-3
        if all(_algbw_error(r, t, scale) == 0.0 for r, t in checks):
            return cand
    scale = 1e-6 if unit == "us" else 1e-3
    r, t = max(checks, key=lambda rt: _algbw_error(rt[0], rt[1], scale))
    time, alg = (t.printed[:2] if len(t.printed) > 1
                 else (f"{t.time_us:g}", f"{t.algbw:g}"))
    raise CollectivesError(
        f"line {r.line}: algbw {alg} GB/s is not size / time ({r.nbytes} B in {time} "
        f"{unit} is {r.nbytes / (t.time_us * scale) / 1e9:.4g} GB/s, give or take the "
        f"rounding of the digits printed): the table contradicts itself")


def _agreed(intervals: list[tuple[float, float]]) -> tuple[float, float]:
    """The values inside the most intervals: (low, high), the first such from below."""
    events = sorted([(lo, 0) for lo, _ in intervals] + [(hi, 1) for _, hi in intervals])
    best = count = 0
    region = (0.0, math.inf)
    for k, (x, end) in enumerate(events):
        if end:
            count -= 1
            continue
        count += 1
        if count > best:
            upto = events[k + 1][0] if k + 1 < len(events) else math.inf
            best, region = count, (x, upto)
    return region


def _check_ratio(out) -> None:
    """busbw/algbw is one number in the whole table (nccl-tests computes busbw as
    algbw times a factor of the rank count): every row, small ones too, within the
    rounding of its printed digits, agrees with the value most rows with an algbw of
    1 GB/s or more (else most rows) allow."""
    halves = [(r, t) for r in out.rows for t in (r.out_of_place, r.in_place)
              if t is not None]
    if not halves:
        return
    spans = [ratio_interval(t) for _, t in halves]
    precise = [s for s, (_, t) in zip(spans, halves) if t.algbw >= 1.0]
    lo, hi = _agreed(precise or spans)
    for (a, b), (r, t) in zip(spans, halves):
        if a <= hi and b >= lo:
            continue
        ua, ub = half_digit(t, 1), half_digit(t, 2)
        low = max(0.0, (t.algbw - ua) * lo - ub)
        if hi < math.inf:
            allowed = f"{low:.2f} to {(t.algbw + ua) * hi + ub:.2f} GB/s"
            factor = f"{(lo + hi) / 2:.4g}"
        else:
            allowed, factor = f"at least {low:.2f} GB/s", f"{lo:.4g} or more"
        printed = t.printed[2] if len(t.printed) > 2 else f"{t.busbw:g}"
        alg = t.printed[1] if len(t.printed) > 1 else f"{t.algbw:g}"
        raise CollectivesError(
            f"line {r.line}: busbw {printed} GB/s does not go with algbw {alg} GB/s: "
            f"the other rows have busbw = algbw x {factor}, which allows {allowed} "
            f"here; busbw/algbw changes from row to row, but nccl-tests computes it "
            f"from the rank count alone: the table contradicts itself")


def _check_sweeps(rows: tuple) -> None:
    """nccl-tests runs every type, redop and root it is given (-d all, -o all, -r -1)
    as a whole sweep of its own: the three change only where the sizes start again."""
    def key(r):
        return r.type, r.redop, r.root
    blocks, start = [], 0
    for i in range(1, len(rows) + 1):
        if i == len(rows) or key(rows[i]) != key(rows[i - 1]):
            blocks.append((start, i))
            start = i
    for (a0, a1), (b0, b1) in zip(blocks, blocks[1:]):
        before, after = rows[a1 - 1], rows[b0]
        if after.nbytes <= before.nbytes:           # a new sweep starts
            continue
        # the shorter of the two runs of rows is the odd one
        odd, other = (rows[a0], rows[b0]) if a1 - a0 < b1 - b0 else (rows[b0], rows[a0])
        said = [(name, getattr(odd, name), getattr(other, name))
                for name in ("type", "redop", "root")
                if getattr(odd, name) != getattr(other, name)]
        this = ", ".join(f"{name} {x!r}" for name, x, _ in said)
        that = ", ".join(f"{name} {y!r}" for name, _, y in said)
        raise CollectivesError(
            f"line {odd.line}: {this} among rows of {that}, with no new sweep between "
            f"them ({before.nbytes} B, then {after.nbytes} B): nccl-tests prints each "
            f"type, redop and root (-d all, -o all, -r -1) as a whole sweep of its "
            f"own: the table contradicts itself")


def check_consistency(out) -> None:
    """busbw/algbw is one number (a function of the rank count) in the whole table,
    and the one a whole device list implies; type, redop and root change only between
    sweeps."""
    _check_ratio(out)
    _check_sweeps(out.rows)
    whole = out.whole_device_count()
    allowed = out.ranks_from_table()
    # (a factor no rank count gives: infer_machine says so, with the collective's name)
    if whole is not None and allowed is not None and allowed[0] <= allowed[1] \
            and not allowed[0] <= whole <= allowed[1]:
        lo, hi = allowed
        said = f"{lo}" if lo == hi else f"{lo} to {hi}"
        raise CollectivesError(
            f"the header lists {whole} ranks ('# Using devices') but busbw/algbw in the table "
            f"says {said}: the table contradicts its header")
