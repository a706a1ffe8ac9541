"""The HLO text itself: brackets, shapes and one instruction's parts.

Nothing here knows what a collective is. :class:`Instr` is one instruction,
split cheaply when the module is read (name, opcode, line) and parsed in full
(shape, operands, attributes) only when a reader asks, so that a module of
50 MB costs one pass of two regular expressions per line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


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


def _scan(text: str, start: int, split: int, close: bool) -> tuple[int, list[str]]:
    """The one quote-aware bracket scanner (a backslash escapes inside quotes): from
    ``start``, the pieces between commas at bracket depth ``split`` (-1: none), up to
    the bracket that closes depth 0 when ``close`` (else to the end); returns (index
    just past that bracket, or ``len(text)``; the pieces, stripped, empty ones left out)."""
    parts, depth, quote, skip = [], 0, None, -1
    begin = start + 1 if close else start
    for m in _SPECIAL.finditer(text, start):
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
                return j + 1, [p.strip() for p in parts if p.strip()]
        elif ch == "," and depth == split:
            parts.append(text[begin:j])
            begin = j + 1
    if close:
        raise Bad(f"unbalanced {text[start]!r} in {clip(text[start:])!r}")
    parts.append(text[begin:])
    return len(text), [p.strip() for p in parts if p.strip()]


def match(text: str, i: int) -> int:
    """Index just past the bracket that closes ``text[i]``."""
    return _scan(text, i, -1, True)[0]


def split_top(text: str) -> list[str]:
    """Split at commas outside brackets and quotes."""
    return _scan(text, 0, 0, False)[1]


def _bracketed(text: str, i: int) -> tuple[int, list[str]]:
    """``(match(text, i), split_top(text[i + 1:match(text, i) - 1]))`` in one pass: the
    end of the bracket opened at ``text[i]`` and what it holds, split at its commas."""
    return _scan(text, i, 1, True)


def clip(text: str, n: int = 60) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."


_ARRAY = re.compile(r"([a-z][a-z0-9]*)\[([^\]]*)\]")


def parse_shape(text: str):
    """An HLO shape: an :class:`Array`, or a tuple of shapes."""
    text = text.strip()
    if text.startswith("("):
        end = match(text, 0)
        return tuple(parse_shape(p) for p in split_top(text[1:end - 1]))
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
        """``(attribute, computation)`` for every computation this instruction calls."""
        out = [(k, v) for k, v in _CALLEE.findall(self.rest)]
        for key, inner in _CALLEES.findall(self.rest):
            out.extend((key, c.strip().lstrip("%")) for c in inner.split(",") if c.strip())
        return out


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


def ints(text: str) -> list[int]:
    return [int(v) for v in text.split(",") if v.strip()]
