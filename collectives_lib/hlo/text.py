"""The HLO text itself: brackets, shapes and one instruction's parts.

Nothing here knows what a collective is. :class:`Instr` is one instruction,
split cheaply when the module is read (name, opcode, line) and parsed in full
(shape, operands, attributes) only when a reader asks, so that a module of
50 MB costs one scan in C and a regular expression for each line the reader
needs. Brackets are matched by a regular expression (nested up to eight deep)
and, deeper, by a scanner walking them one at a time within a budget
(:func:`scan_budget`).
"""

from __future__ import annotations

import contextlib
import re
import threading
from dataclasses import dataclass, field

from ..errors import CollectivesError


#: Bits per element of XLA's element types (``pred`` is stored as one byte).
ELEMENT_BITS: dict[str, int] = {
    "pred": 8,
    "s1": 1, "s2": 2, "s4": 4, "s8": 8, "s16": 16, "s32": 32, "s64": 64,
    "u1": 1, "u2": 2, "u4": 4, "u8": 8, "u16": 16, "u32": 32, "u64": 64,
    "f16": 16, "bf16": 16, "f32": 32, "f64": 64, "c64": 64, "c128": 128,
    "f8e5m2": 8, "f8e4m3": 8, "f8e4m3fn": 8, "f8e4m3b11fnuz": 8, "f8e5m2fnuz": 8,
    "f8e4m3fnuz": 8, "f8e3m4": 8, "f8e8m0fnu": 8, "f4e2m1fn": 4,
    "token": 0,
}

#: The most elements one array may have (2**62): larger dimensions are not real programs.
MAX_ELEMENTS = 1 << 62


class Bad(Exception):
    """A problem inside one instruction; the parser adds the line and the name
    (``located``: the message already names them)."""

    located = False


@dataclass(frozen=True)
class Array:
    """One array in an HLO shape: element type and dimensions.

    >>> a = Array("bf16", (16, 4))
    >>> str(a), a.num_elements, a.nbytes, a.element_size
    ('bf16[16,4]', 64, 128, 2.0)
    """

    dtype: str
    dims: tuple[int, ...]

    @property
    def num_elements(self) -> int:
        out = 1
        for d in self.dims:
            out *= d
        return out

    @property
    def element_size(self) -> float:
        """Bytes per element (0.5 for four-bit types)."""
        return ELEMENT_BITS[self.dtype] / 8

    @property
    def nbytes(self) -> int:
        return -(-self.num_elements * ELEMENT_BITS[self.dtype] // 8)

    def __str__(self) -> str:
        return f"{self.dtype}[{','.join(map(str, self.dims))}]"


_OPEN, _CLOSE = "([{", ")]}"
_SPECIAL = re.compile(r"[()\[\]{}\"',\\]")

#: The most brackets, quotes and commas one module's text may make the reader walk
#: through one at a time (Python's pace, about 3 a microsecond). Brackets nested at
#: most eight deep are matched by a regular expression in C and do not count: this is
#: the bound on what a hostile text (a megabyte of braces in an attribute) costs.
MAX_SCANNED = 2_000_000
_budget = threading.local()


@contextlib.contextmanager
def scan_budget(limit: int | None = None):
    """Within the block, :func:`_scan` walks at most ``limit`` (:data:`MAX_SCANNED`)
    characters in all (outside it, any number): beyond, :class:`Bad` says so."""
    before = getattr(_budget, "left", None), getattr(_budget, "limit", None)
    _budget.left = _budget.limit = MAX_SCANNED if limit is None else limit
    try:
        yield
    finally:
        _budget.left, _budget.limit = before


def _spend(n: int) -> None:
    left = getattr(_budget, "left", None)
    if left is not None:
        _budget.left = left = left - n
        if left < 0:
            raise Bad(f"brackets nested over 8 deep or unbalanced: the text makes "
                      f"the reader walk through more than {_budget.limit:,} brackets, "
                      f"quotes and commas")


# Brackets nested at most eight deep, with quoted strings (a backslash escapes inside
# them), matched in C as _scan matches them (any closing bracket closes the last one
# opened); a text they do not fit (deeper, unbalanced, an open quote) goes to _scan,
# which says what is wrong.
_QUOTED = r""""(?:[^"\\]|\\.)*+"|'(?:[^'\\]|\\.)*+'"""


def _nested(depth: int) -> str:
    plain = r"""[^()\[\]{}"']++"""
    inner = f"(?:{plain}|{_QUOTED})"
    for _ in range(depth):
        bracket = rf"[(\[{{]{inner}*+[)\]}}]"
        inner = f"(?:{plain}|{_QUOTED}|{bracket})"
    return bracket


_BRACKET = _nested(8)
_MATCHED = re.compile(_BRACKET, re.S)
_PIECE = rf"""(?:[^()\[\]{{}}"',]++|{_QUOTED}|{_BRACKET})*+"""
_PIECES = re.compile(rf"{_PIECE}(?:,{_PIECE})*+", re.S)
_NEXT_PIECE = re.compile(rf"({_PIECE})(?:,|\Z)", re.S)


def _scan(text: str, start: int, split: int, close: bool) -> tuple[int, list[str]]:
    """The one quote-aware bracket scanner (a backslash escapes inside quotes): from
    ``start``, the pieces between commas at bracket depth ``split`` (-1: none), up to
    the bracket that closes depth 0 when ``close`` (else to the end); returns (index
    just past that bracket, or ``len(text)``; the pieces, stripped, empty ones left
    out). What it walks counts towards :func:`scan_budget`."""
    parts, depth, quote, skip = [], 0, None, -1
    begin = start + 1 if close else start
    walked = 0
    for m in _SPECIAL.finditer(text, start):
        walked += 1
        if walked == 4096:
            _spend(walked)
            walked = 0
        j = m.start()
        if j <= skip:
            continue
        ch = text[j]
        if quote:
            if ch == "\\":
                skip = j + 1
            elif ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
            if depth == 0 and close:
                if split >= 0:
                    parts.append(text[begin:j])
                _spend(walked + len(parts))
                return j + 1, [p.strip() for p in parts if p.strip()]
        elif ch == "," and depth == split:
            parts.append(text[begin:j])
            begin = j + 1
    _spend(walked + len(parts))
    if close:
        raise Bad(f"unbalanced {text[start]!r} in {clip(text[start:])!r}")
    parts.append(text[begin:])
    return len(text), [p.strip() for p in parts if p.strip()]


def _split(text: str, start: int = 0, end: int | None = None) -> list[str] | None:
    """``_scan(text[start:end], 0, 0, False)[1]`` read in C, or None when the text is
    not brackets :data:`_BRACKET` matches (each piece made counts one)."""
    end = len(text) if end is None else end
    if _PIECES.fullmatch(text, start, end) is None:
        return None
    out = []
    for m in _NEXT_PIECE.finditer(text, start, end):
        piece = m.group(1).strip()
        if piece:
            out.append(piece)
        if m.end() >= end:
            break
    _spend(len(out))
    return out


def match(text: str, i: int) -> int:
    """Index just past the bracket that closes ``text[i]``."""
    m = _MATCHED.match(text, i)
    return m.end() if m else _scan(text, i, -1, True)[0]


def split_top(text: str) -> list[str]:
    """Split at commas outside brackets and quotes."""
    found = _split(text)
    return found if found is not None else _scan(text, 0, 0, False)[1]


def _bracketed(text: str, i: int) -> tuple[int, list[str]]:
    """``(match(text, i), split_top(text[i + 1:match(text, i) - 1]))`` in one pass: the
    end of the bracket opened at ``text[i]`` and what it holds, split at its commas."""
    m = _MATCHED.match(text, i)
    if m:
        found = _split(text, i + 1, m.end() - 1)
        if found is not None:
            return m.end(), found
    return _scan(text, i, 1, True)


def clip(text: str, n: int = 60) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."


#: The longest message the reader's errors have (a longer one is cut, ending "..."):
#: with "collectives: error: " before it, a line of at most 300 characters.
MAX_MESSAGE = 280


@contextlib.contextmanager
def short_errors():
    """Every :class:`~collectives_lib.errors.CollectivesError` raised in the block
    kept to one line of at most :data:`MAX_MESSAGE` characters (what a message
    quotes is clipped where it is written; this is the last guard)."""
    try:
        yield
    except CollectivesError as err:
        text = str(err)
        if len(text) <= MAX_MESSAGE and "\n" not in text:
            raise
        raise type(err)(clip(" ".join(text.split()), MAX_MESSAGE)) from None


_ARRAY = re.compile(r"([a-z][a-z0-9]*)\[([^\]]*)\]")


#: The deepest tuples nest in a shape read (XLA's nest two or three deep).
MAX_TUPLE_DEPTH = 32


def parse_shape(text: str, depth: int = 0):
    """An HLO shape: an :class:`Array`, or a tuple of shapes."""
    text = text.strip()
    if text.startswith("("):
        if depth >= MAX_TUPLE_DEPTH:
            raise Bad(f"shape {clip(text)!r} nests tuples more than {MAX_TUPLE_DEPTH} "
                      f"deep")
        end = match(text, 0)
        return tuple(parse_shape(p, depth + 1) for p in split_top(text[1:end - 1]))
    m = _ARRAY.match(text)
    if not m:
        raise Bad(f"shape {clip(text)!r} is not understood")
    dtype = m.group(1)
    if dtype not in ELEMENT_BITS:
        raise Bad(f"unknown element type {dtype!r} in shape {clip(text)!r}")
    dims = []
    count = 1
    for d in m.group(2).split(","):
        d = d.strip()
        if not d:
            continue
        d = d[2:] if d.startswith("<=") else d   # bounded dynamic: its bound
        if not d.isdigit() or len(d) > 19:
            raise Bad(f"dimension {clip(d, 24)!r} of shape {clip(text)!r} is not a whole number "
                      f"below 10^19")
        dims.append(int(d))
        count *= int(d)
    if count > MAX_ELEMENTS:
        raise Bad(f"shape {clip(text)!r} has more than 2^62 elements")
    return Array(dtype, tuple(dims))


def leaves(shape) -> tuple[Array, ...]:
    if isinstance(shape, Array):
        return (shape,)
    return tuple(a for s in shape for a in leaves(s))


def shape_token(rest: str) -> tuple[str, str]:
    """Split ``rest`` into the leading shape and what follows it."""
    if rest.startswith("("):
        end = match(rest, 0)
        return rest[:end], rest[end:]
    m = _ARRAY.match(rest)
    if not m:
        raise Bad(f"shape {clip(rest)!r} is not understood")
    end = m.end()
    if end < len(rest) and rest[end] == "{":
        close = rest.find("}", end)
        if close > 0 and "{" not in rest[end + 1:close]:
            end = close + 1                      # a plain layout: {1,0:T(8,128)}
        else:
            end = match(rest, end)
    return rest[:end], rest[end:]


# an instruction line: name = shape opcode(operands), attributes
HEAD = re.compile(r"\s*(ROOT\s+)?%?([A-Za-z_][\w.\-]*)\s*=\s*")
# the same, with the opcode: the first lowercase word followed by "(" after a space
LINE = re.compile(r"\s*(ROOT\s+)?%?([A-Za-z_][\w.\-]*)\s*=\s*(\S.*?\s([a-z][a-z0-9\-]*)\(.*)$")
OPCODE = re.compile(r"\s([a-z][a-z0-9\-]*)\(")
_OPCODE_AT = re.compile(r"\s*([a-z][a-z0-9\-]*)\(")
_NESTED = re.compile(r"[(\[{\"']")
# operands as XLA prints them after optimization, each with its shape (a plain layout):
# the commas between them are the only ones outside brackets
_OPERAND_TEXT = r"(?:[a-z][a-z0-9]*\[[\d,]*\](?:\{[\d,]*\})?\s+)?%[\w.\-]+"
_OPERAND = re.compile(_OPERAND_TEXT)
_OPERANDS = re.compile(rf"\(\s*({_OPERAND_TEXT}(?:\s*,\s*{_OPERAND_TEXT})*)\s*\)")
COMPUTATION = re.compile(r"\s*(ENTRY\s+)?%?([A-Za-z_][\w.\-]*)\b.*\{\s*$")
_CALLEE = re.compile(r"\b(calls|body|condition|to_apply|true_computation|false_computation)="
                     r"%?([\w.\-]+)")
_CALLEES = re.compile(r"\b(branch_computations|called_computations|calls)=\{([^}]*)\}")


@dataclass(slots=True)
class Instr:
    """One instruction: what a cheap pass finds, the rest parsed on first use."""

    name: str
    opcode: str
    line: int
    computation: str
    root: bool
    rest: str                                  # the text after ``name =``
    at: int = -1                               # the offset of its line in the text
    _parsed: tuple | None = field(default=None, repr=False)

    def _parse(self) -> tuple:
        if self._parsed is None:
            try:
                self._parsed = _parse_rest(self.rest)
            except Bad as err:
                if err.located:
                    raise
                where = Bad(f"line {self.line}: malformed {self.opcode} %{self.name}: {err}")
                where.located = True
                raise where from None
        return self._parsed

    @property
    def shape(self) -> str:
        return self._parse()[0]

    @property
    def operands(self) -> list[str]:
        return self._parse()[1]

    @property
    def attrs(self) -> dict[str, str]:
        return self._parse()[2]

    def operand_names(self) -> list[str]:
        return [op.split()[-1].lstrip("%") for op in self.operands]

    def callees(self) -> list[tuple[str, str]]:
        """``(attribute, computation)`` for every computation this instruction calls
        (read from its attributes, not from the metadata and configs after them)."""
        rest = self.rest
        heavy = _HEAVY.search(rest)
        end = heavy.start() if heavy else len(rest)
        out = [(k, v) for k, v in _CALLEE.findall(rest, 0, end)]
        for key, inner in _CALLEES.findall(rest, 0, end):
            out.extend((key, c.strip().lstrip("%")) for c in inner.split(",") if c.strip())
        return out

    def calls(self) -> str:
        """The computation ``calls=`` names, without its ``%`` ("" when none)."""
        return self.attrs.get("calls", "").lstrip("%")


#: Attributes XLA prints after the ones a reader needs, long (JSON, quoted paths):
#: an instruction's attributes are split up to the first of them, never past it.
_HEAVY = re.compile(r", (?:metadata=\{|backend_config=|frontend_attributes=\{|statistics_viz=)")


# One attribute in the forms XLA prints (a fast path: anything else is split by brackets)
_ATTR = re.compile(r"""(\s*([A-Za-z_][\w.]*)=(
      \{[^{}"']*(?:\{[^{}"']*\}[^{}"']*)*\}                 # {..} with one level inside
    | \[[\d,]*\](?:<=\[[\d,]*\](?:T\([\d,]*\))?)?         # [2,4]<=[8]T(1,0)
    | "[^"\\]*"                                          # a plain quoted string
    | [^,{}\[\]()"'=\s]+                                # a word, a number, %name
    )\s*(?:,|$))""", re.VERBOSE)


def _split_attrs(text: str, previous: str | None) -> dict[str, str]:
    found = _ATTR.findall(text)
    # the matches (in order, never overlapping) are the whole text when their lengths add up
    if sum(len(whole) for whole, _, _ in found) == len(text):
        return {key: value.strip() for _, key, value in found}
    attrs: dict[str, str] = {}
    for part in split_top(text):
        key, eq, value = part.partition("=")
        key = key.strip()
        if key == "device_ids" and previous == "replica_groups":
            # mesh['x'=4,'y'=2], device_ids=(...) {'x'}: one value with a comma
            attrs["replica_groups"] += ", " + part
            continue
        attrs[key] = value.strip() if eq else ""
        previous = key
    return attrs


def _parse_rest(rest: str) -> tuple[str, list[str], dict[str, str]]:
    rest = rest.strip()
    shape, rest = shape_token(rest)
    op = _OPCODE_AT.match(rest)
    if not op:
        raise Bad(f"no opcode after the shape in {clip(rest)!r}")
    start = op.end() - 1
    close = rest.find(")", start)
    inner = rest[start + 1:close]
    if close > 0 and not _NESTED.search(inner):
        end = close + 1                          # plain operands: %a, %b
        operands = [o.strip() for o in inner.split(",") if o.strip()]
    else:
        plain = _OPERANDS.match(rest, start)
        if plain:                                # typed operands: f32[2,3]{1,0} %a, f32[4] %b
            end, operands = plain.end(), _OPERAND.findall(plain.group(1))
        else:
            end, operands = _bracketed(rest, start)
    text = rest[end:]
    heavy = _HEAVY.search(text)
    cut = heavy.start() if heavy else len(text)
    return shape, operands, _split_attrs(text[:cut].lstrip(", "), None)


def number(text: str, what: str = "the number") -> int:
    """A whole number of at most 19 digits (a longer one is no count or id of a real
    program, and Python refuses to read one of 4,300 digits)."""
    digits = text.strip()
    if len(digits.lstrip("-")) > 19:
        raise Bad(f"{what} {clip(digits, 24)!r} is not a whole number below 10^19")
    return int(digits)


def ints(text: str) -> list[int]:
    return [number(v) for v in text.split(",") if v.strip()]
