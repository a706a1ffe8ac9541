"""Units: parsing sizes the way nccl-tests does, and printing times and rates.

Sizes are bytes, times seconds, bandwidths bytes per second (SI units in code).
``GB`` is 10**9 bytes and ``GiB`` is 2**30 bytes; bare ``K``/``M``/``G`` suffixes
mean powers of two, as in nccl-tests' ``-b 8 -e 128M``. Units are read in any
case except that a size ending in a lowercase ``b`` (``1Kb``, ``8Gb``) is refused:
that is bits in network units, and a size is bytes.
"""

from __future__ import annotations

import decimal
import functools
import math
import operator
import re

from .errors import CollectivesError

KB, MB, GB, TB = 1e3, 1e6, 1e9, 1e12
#: The largest size the library accepts: far beyond any memory, small enough that times stay finite.
MAX_BYTES = 10**36
KiB, MiB, GiB, TiB = 2**10, 2**20, 2**30, 2**40
US, MS = 1e-6, 1e-3

_SUFFIXES = {
    "": 1,
    "B": 1,
    "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
    "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40,
    "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40,
}

_SIZE_RE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)\s*$")

#: Element types and their sizes in bytes (nccl-tests' -d names and numpy's).
DTYPES = {
    "float32": 4, "float": 4, "float16": 2, "half": 2, "bfloat16": 2, "float64": 8, "double": 8,
    "int8": 1, "uint8": 1, "int32": 4, "uint32": 4, "int64": 8, "uint64": 8,
    "float8_e4m3": 1, "float8_e5m2": 1,
}


def element_size(dtype: str) -> int:
    """Bytes per element of ``dtype`` (``"float32"`` is 4)."""
    key = str(dtype).strip().lower()
    if key not in DTYPES:
        raise CollectivesError(f"dtype {dtype!r} is not one of {', '.join(DTYPES)}")
    return DTYPES[key]


def check_nbytes(nbytes, *, what: str = "size") -> int:
    """``nbytes`` as a positive whole number of bytes, else a :class:`CollectivesError`.
    Integers are taken exactly (``2**53 + 1`` stays itself); a float must be whole."""
    if isinstance(nbytes, bool):
        raise CollectivesError(f"{what} must be a whole number of bytes, got {nbytes!r}")
    if isinstance(nbytes, float) or getattr(getattr(nbytes, "dtype", None), "kind", "") == "f":
        value = float(nbytes) if getattr(nbytes, "ndim", 0) == 0 else math.nan
        if not math.isfinite(value) or value != math.floor(value):
            raise CollectivesError(f"{what} must be a whole number of bytes, got {nbytes!r}")
        whole = int(value)
    else:
        try:
            whole = operator.index(nbytes)
        except TypeError:
            raise CollectivesError(f"{what} must be a whole number of bytes (one integer), "
                                   f"got {_short(nbytes)}") from None
    if whole <= 0:
        raise CollectivesError(f"{what} must be positive, got {nbytes!r} bytes")
    if whole > MAX_BYTES:
        raise CollectivesError(f"{what} must be at most {MAX_BYTES:.0e} bytes, far beyond any "
                               f"memory, got {_short(nbytes)}")
    return whole


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


SIZE_HELP = (
    "an integer number of bytes, optionally with a suffix KB, MB, GB, TB (powers "
    "of 10), KiB, MiB, GiB, TiB (powers of 2) or K, M, G, T (powers of 2, as in "
    "nccl-tests)"
)


def _bits_message(text: str, number: str, unit: str) -> str:
    prefix = unit[:-1].upper().removesuffix("I")
    if not prefix:
        return f"size {text!r}: a lowercase b is bits; sizes are bytes: write {number}B or {number}"
    return (f"size {text!r}: a lowercase b is bits in network units, and sizes are bytes; write "
            f"{number}{prefix}B (powers of 10) or {number}{prefix}iB (powers of 2)")


def parse_size(text: str | int | float) -> int:
    """Parse a message size into a positive whole number of bytes, exactly (a size
    is never rounded: ``0.1G`` is not a whole number of bytes).

    >>> parse_size("8GB"), parse_size("1GiB"), parse_size("128M"), parse_size(4096)
    (8000000000, 1073741824, 134217728, 4096)
    """
    if isinstance(text, bool):
        raise CollectivesError(f"size {text!r} is not a size; use {SIZE_HELP}")
    if isinstance(text, int):
        value, mult, shown = decimal.Decimal(text), 1, repr(text)
    elif isinstance(text, float):
        if math.isnan(text):
            raise CollectivesError(f"size {text!r} is not a number; use {SIZE_HELP}")
        if math.isinf(text):
            raise CollectivesError(f"size {text!r} is beyond any memory: at most "
                                   f"{MAX_BYTES:.0e} bytes")
        value, mult, shown = decimal.Decimal(text), 1, repr(text)
    else:
        if str(text).strip().startswith("-"):
            raise CollectivesError(f"size {text!r} must be positive; use {SIZE_HELP}")
        match = _SIZE_RE.match(str(text))
        if not match:
            raise CollectivesError(f"size {text!r} is not understood; use {SIZE_HELP}")
        if match.group(2).endswith("b") and match.group(2).upper() in _SUFFIXES:
            raise CollectivesError(_bits_message(str(text), match.group(1), match.group(2)))
        suffix = match.group(2).upper()
        if suffix not in _SUFFIXES:
            raise CollectivesError(
                f"size {text!r} has an unknown unit {match.group(2)!r}; use {SIZE_HELP}"
            )
        number = match.group(1)
        digits = number.lower().partition("e")[2]
        if digits and abs(int(digits)) > 10**5:                # no size is written so
            raise CollectivesError(f"size {text!r} is beyond any memory: at most "
                                   f"{MAX_BYTES:.0e} bytes" if not digits.startswith("-") else
                                   f"size {text!r} is less than one byte; use {SIZE_HELP}")
        value, mult, shown = decimal.Decimal(number), _SUFFIXES[suffix], repr(text)
    with decimal.localcontext() as ctx:
        ctx.prec, ctx.Emax, ctx.Emin = 200, 10**6, -10**6     # exact for any size written
        nbytes = value * mult
        if nbytes <= 0:
            raise CollectivesError(f"size {shown} must be positive; use {SIZE_HELP}")
        if nbytes > MAX_BYTES:
            raise CollectivesError(f"size {shown} is beyond any memory: at most {MAX_BYTES:.0e} "
                                   f"bytes")
        if nbytes < 1:
            raise CollectivesError(f"size {shown} is less than one byte, not a whole number of "
                                   f"bytes; use {SIZE_HELP}")
        if nbytes != nbytes.to_integral_value():
            raise CollectivesError(f"size {shown} is not a whole number of bytes "
                                   f"({float(nbytes):.12g} bytes)")
        return int(nbytes)


def _sig(x: float, digits: int = 3) -> str:
    if x == 0:
        return "0"
    text = f"{x:.{digits}g}"
    if "e" in text:
        mantissa, exp = text.split("e")
        return f"{mantissa}e{int(exp)}"
    return text


def format_bytes(nbytes: float, *, binary: bool = False, digits: int = 3) -> str:
    """``format_bytes(14e9) == '14 GB'``; ``binary=True`` uses KiB, MiB, GiB."""
    if binary:
        return _scaled(nbytes, digits, _BINARY, "B")
    if math.isfinite(nbytes):
        nbytes = float(format(nbytes, _G.get(digits) or f".{digits}g"))   # 999.99... MB/s is 1 GB/s
        return _rounded(nbytes, digits, "B")
    return _scaled(nbytes, digits, _DECIMAL, "B")


_BINARY = (("TiB", TiB), ("GiB", GiB), ("MiB", MiB), ("KiB", KiB))
_DECIMAL = (("TB", TB), ("GB", GB), ("MB", MB), ("KB", KB))
_SECONDS = (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6))


def _scaled(value: float, digits: int, units, last: str) -> str:
    for name, scale in units:
        if abs(value) >= scale:
            return f"{_sig(value / scale, digits)} {name}"
    return f"{_sig(value / 1e-9 if last == 'ns' else value, digits)} {last}"


_G = {3: ".3g"}
_UNITS = {"B": _DECIMAL, "ns": _SECONDS}


@functools.lru_cache(maxsize=8192)
def _rounded(value: float, digits: int, last: str) -> str:
    # (a value rounded to ``digits`` figures: a table of ten thousand times prints
    # a few hundred distinct ones)
    return _scaled(value, digits, _UNITS[last], last)


def format_time(seconds: float, *, digits: int = 3) -> str:
    """``format_time(0.035) == '35 ms'``; microseconds print as ``µs``; a thousand
    seconds and more as whole seconds (``format_time(1099.7) == '1,100 s'``)."""
    if seconds == 0:
        return "0 s"
    if math.isfinite(seconds):
        seconds = float(format(seconds, _G.get(digits) or f".{digits}g"))   # 999.99... µs is 1 ms
        if abs(seconds) >= 1000:                    # not '1.1e3 s'
            return f"{seconds:,.0f} s"
        return _rounded(seconds, digits, "ns")
    return _scaled(seconds, digits, _SECONDS, "ns")


def format_rate(bytes_per_second: float, *, digits: int = 3) -> str:
    """``format_rate(4.5e11) == '450 GB/s'``."""
    return format_bytes(bytes_per_second, digits=digits) + "/s"


def format_flops(flops_per_second: float, *, digits: int = 3) -> str:
    """``format_flops(1.97e14) == '197 TFLOP/s'``."""
    for name, scale in [("PFLOP/s", 1e15), ("TFLOP/s", 1e12), ("GFLOP/s", 1e9)]:
        if abs(flops_per_second) >= scale:
            return f"{_sig(flops_per_second / scale, digits)} {name}"
    return f"{_sig(flops_per_second, digits)} FLOP/s"


#: A sweep (``collectives sweep``, ``run``) has at most this many sizes.
MAX_SWEEP_ROWS = 1000


def sweep_sizes(minbytes, maxbytes, stepfactor: float) -> list[int]:
    """nccl-tests' sizes: from -b to -e, each -f times the last, as whole bytes, each once."""
    lo, hi = parse_size(minbytes), parse_size(maxbytes)
    if hi < lo:
        raise CollectivesError(f"-e {maxbytes} is smaller than -b {minbytes}")
    factor = float(stepfactor)
    if not (factor > 1 and factor != float("inf")):
        raise CollectivesError(f"-f must be a number > 1, got {stepfactor}")
    sizes, s = [], float(lo)
    log_f = math.log(factor)
    while s <= hi * (1 + 1e-12):
        size = min(int(round(s)), hi)          # a float step may overshoot -e
        if not sizes or size != sizes[-1]:
            if len(sizes) == MAX_SWEEP_ROWS:
                raise CollectivesError(
                    f"-b {minbytes} -e {maxbytes} -f {stepfactor} makes more than "
                    f"{MAX_SWEEP_ROWS} different sizes; a sweep prints at most "
                    f"{MAX_SWEEP_ROWS}: use a larger -f")
            sizes.append(size)
            # skip the steps that round to this same whole size (a factor close to 1)
            skip = int(math.log((size + 0.5) / s) / log_f) - 1 if s < size + 0.5 else 0
            if skip > 0:
                s *= factor ** skip
        s *= factor
    return sizes
