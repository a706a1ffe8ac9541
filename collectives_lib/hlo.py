"""Read which collectives an XLA program runs, from its HLO text.

A JAX program compiled for several devices runs collectives that XLA inserted
or that the program asked for (``jax.lax.psum``, ``all_gather``,
``psum_scatter``, ``all_to_all``, ``ppermute``). Their list, with the shapes,
the element types and the device groups, is in the compiled module's text::

    compiled = jax.jit(f).lower(*args).compile()
    module = parse_hlo(compiled.as_text())

The same reader takes the unoptimized text (``.lower(*args).as_text(dialect="hlo")``)
and XLA's dump files (``XLA_FLAGS=--xla_dump_to=DIR``, ``*after_optimizations.txt``).
It is plain text parsing: no JAX is imported, so a dump made on a TPU host can be
read anywhere.

Every collective is counted once: an asynchronous pair (``all-gather-start`` and
``all-gather-done``, or ``async-start``/``async-done`` around a wrapped
collective) is one :class:`HloCollective`, named after its start. Replica groups in
any of XLA's spellings (explicit ``{{0,1},{2,3}}``, iota ``[2,4]<=[8]``,
``[4,2]<=[2,4]T(1,0)``, or mesh axes ``mesh['x'=4,'y'=2] {'x'}``) are expanded
into explicit groups of device ids, and :func:`mesh_axes` says which axes of
your mesh they span.

>>> text = '''
... HloModule jit_f, num_partitions=8
...
... %add (a: f32[], b: f32[]) -> f32[] {
...   %a = f32[] parameter(0)
...   %b = f32[] parameter(1)
...   ROOT %sum = f32[] add(%a, %b)
... }
...
... ENTRY %main (p: f32[16,4]) -> (f32[32,4], f32[16,4]) {
...   %p = f32[16,4]{1,0} parameter(0)
...   %ag = f32[32,4]{1,0} all-gather(%p), channel_id=1, replica_groups={{0,1},{2,3},{4,5},{6,7}}, dimensions={0}, use_global_device_ids=true
...   %ar = f32[16,4]{1,0} all-reduce(%p), channel_id=2, replica_groups=[2,4]<=[4,2]T(1,0), use_global_device_ids=true, to_apply=%add
...   ROOT %t = (f32[32,4]{1,0}, f32[16,4]{1,0}) tuple(%ag, %ar)
... }
... '''
>>> module = parse_hlo(text)
>>> print(module)
HloModule jit_f: 2 collectives on 8 devices
name  kind        operands   result     groups  nbytes
ag    all_gather  f32[16,4]  f32[32,4]  4 x 2   512
ar    all_reduce  f32[16,4]  f32[16,4]  2 x 4   256
>>> ag, ar = module
>>> ag.dimension, ag.operand_bytes, ag.nbytes
(0, 256, 512)
>>> ar.replica_groups, ar.reduction
(((0, 2, 4, 6), (1, 3, 5, 7)), 'add')
>>> mesh_axes(ag, {"x": 4, "y": 2}), mesh_axes(ar, {"x": 4, "y": 2})
(('y',), ('x',))

Introduced in the chapter *From your code to the wire*.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Iterator, Mapping

import numpy as np

from .errors import CollectivesError

__all__ = ["Array", "HloCollective", "HloModule", "ELEMENT_BITS", "KINDS", "parse_hlo",
           "parse_mesh", "mesh_axes", "mesh_sizes", "format_groups"]

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

#: HLO opcode of each collective -> the library's name for it.
KINDS: dict[str, str] = {
    "all-gather": "all_gather",
    "reduce-scatter": "reduce_scatter",
    "all-reduce": "all_reduce",
    "all-to-all": "all_to_all",
    "collective-permute": "collective_permute",
    "collective-broadcast": "broadcast",
}

# Ops that are collectives but that this reader cannot size from the text.
_UNSUPPORTED = {
    "ragged-all-to-all": "its per-peer sizes are operands known only at run time",
}
_FAMILIES = tuple(KINDS) + tuple(_UNSUPPORTED)
# Ops with a use_global_device_ids attribute (the others are cross-partition
# when they have a channel_id and cross-replica when not).
_HAS_GLOBAL_IDS = ("all-gather", "reduce-scatter", "all-reduce")


# ---------------------------------------------------------------------------
# records
# ---------------------------------------------------------------------------

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
        return int(np.prod(self.dims, dtype=np.int64)) if self.dims else 1

    @property
    def element_size(self) -> float:
        """Bytes per element (0.5 for four-bit types)."""
        return ELEMENT_BITS[self.dtype] / 8

    @property
    def nbytes(self) -> int:
        return -(-self.num_elements * ELEMENT_BITS[self.dtype] // 8)

    def __str__(self) -> str:
        return f"{self.dtype}[{','.join(map(str, self.dims))}]"


@dataclass(frozen=True)
class HloCollective:
    """One collective in an HLO module, as its devices run it.

    ``kind`` is the library's name (``all_gather``, ``reduce_scatter``,
    ``all_reduce``, ``all_to_all``, ``collective_permute``, ``broadcast``);
    ``name`` and ``opcode`` are the instruction's as written (an async pair is
    named after its start). ``operands`` and ``results`` are what one device
    holds before and after. ``dimension`` is the gather, scatter or split
    dimension (None for all-reduce, permutes and tuple all-to-alls).
    ``replica_groups`` are the groups of global device ids (replica *
    num_partitions + partition) that run it together, expanded from whatever
    form the text uses; permutes have ``source_target_pairs`` instead.
    ``repeats`` is how many times one run of the program executes it (the trip
    counts of the loops around it; None when a loop's count is not in the
    text). ``line`` is the 1-based line of the instruction in the text.
    """

    kind: str
    name: str
    opcode: str
    operands: tuple[Array, ...]
    results: tuple[Array, ...]
    dimension: int | None
    replica_groups: tuple[tuple[int, ...], ...]
    source_target_pairs: tuple[tuple[int, int], ...]
    channel_id: int | None
    use_global_device_ids: bool
    to_apply: str | None
    reduction: str | None
    computation: str
    repeats: int | None
    num_devices: int
    line: int

    @property
    def is_async(self) -> bool:
        return self.opcode.endswith("-start")

    @property
    def dtype(self) -> str:
        """The operands' element type (``"f32+bf16"`` when a tuple mixes types)."""
        types = list(dict.fromkeys(a.dtype for a in self.operands))
        return "+".join(types)

    @property
    def element_size(self) -> float:
        """Bytes per element (the smallest, when a tuple mixes types)."""
        return min(a.element_size for a in self.operands)

    @property
    def operand_bytes(self) -> int:
        """Bytes of all operands on one device."""
        return sum(a.nbytes for a in self.operands)

    @property
    def result_bytes(self) -> int:
        """Bytes of all results on one device."""
        return sum(a.nbytes for a in self.results)

    @property
    def nbytes(self) -> int:
        """The size nccl-tests would report for this collective, per device.

        all_reduce: the buffer; all_gather: the gathered output; reduce_scatter:
        the input (unscattered) buffer; all_to_all: one device's buffer;
        collective_permute and broadcast: the buffer sent.
        """
        if self.kind == "all_gather":
            return self.result_bytes
        return self.operand_bytes

    @property
    def group_size(self) -> int | None:
        """Devices per group (None for a permute, which has pairs)."""
        return len(self.replica_groups[0]) if self.replica_groups else None

    @property
    def num_groups(self) -> int | None:
        return len(self.replica_groups) if self.replica_groups else None

    def __str__(self) -> str:
        ops = ", ".join(map(str, self.operands))
        res = ", ".join(map(str, self.results))
        if self.kind == "collective_permute":
            over = f"{len(self.source_target_pairs)} pairs"
        else:
            over = (f"{self.num_groups} group{'s' if self.num_groups != 1 else ''} of "
                    f"{self.group_size}")
        times = "" if self.repeats == 1 else f", {self.repeats if self.repeats is not None else '?'} times"
        return f"{self.name}: {self.kind} {ops} -> {res} over {over}, {self.nbytes} bytes{times}"


@dataclass(frozen=True)
class HloModule:
    """The collectives of one HLO module, in the order the text lists them.

    Iterating, ``len`` and indexing go over :attr:`collectives`.
    """

    name: str
    num_partitions: int
    replica_count: int
    collectives: tuple[HloCollective, ...]

    @property
    def num_devices(self) -> int:
        return self.num_partitions * self.replica_count

    def __iter__(self) -> Iterator[HloCollective]:
        return iter(self.collectives)

    def __len__(self) -> int:
        return len(self.collectives)

    def __getitem__(self, i):
        return self.collectives[i]

    def counts(self) -> dict[str, int]:
        """How many collectives of each kind the text lists."""
        out: dict[str, int] = {}
        for c in self.collectives:
            out[c.kind] = out.get(c.kind, 0) + 1
        return out

    def __str__(self) -> str:
        n = len(self.collectives)
        head = (f"HloModule {self.name}: {n} collective{'s' if n != 1 else ''} on "
                f"{self.num_devices} device{'s' if self.num_devices != 1 else ''}")
        if not n:
            return head
        with_repeats = any(c.repeats != 1 for c in self.collectives)
        cols = ["name", "kind", "operands", "result", "groups", "nbytes"]
        if with_repeats:
            cols.append("repeats")
        rows = [cols]
        for c in self.collectives:
            if c.kind == "collective_permute":
                groups = f"{len(c.source_target_pairs)} pairs"
            else:
                groups = f"{c.num_groups} x {c.group_size}"
            row = [c.name, c.kind, ", ".join(map(str, c.operands)),
                   ", ".join(map(str, c.results)), groups, str(c.nbytes)]
            if with_repeats:
                row.append("?" if c.repeats is None else str(c.repeats))
            rows.append(row)
        widths = [max(len(r[i]) for r in rows) for i in range(len(cols))]
        lines = ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in rows]
        return "\n".join([head] + lines)


# ---------------------------------------------------------------------------
# text helpers
# ---------------------------------------------------------------------------

class _Bad(Exception):
    """A problem inside one instruction; parse_hlo adds the line and name."""


_OPEN, _CLOSE = "([{", ")]}"


def _match(text: str, i: int) -> int:
    """Index just past the bracket that closes ``text[i]``."""
    depth, quote, j = 0, None, i
    while j < len(text):
        ch = text[j]
        if quote:
            if ch == "\\":
                j += 1
            elif ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    raise _Bad(f"unbalanced {text[i]!r} in {_clip(text[i:])!r}")


def _split_top(text: str) -> list[str]:
    """Split at commas outside brackets and quotes."""
    parts, depth, quote, start, j = [], 0, None, 0, 0
    while j < len(text):
        ch = text[j]
        if quote:
            if ch == "\\":
                j += 1
            elif ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:j])
            start = j + 1
        j += 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _clip(text: str, n: int = 60) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."


_ARRAY = re.compile(r"([a-z][a-z0-9]*)\[([^\]]*)\]")


def _parse_shape(text: str):
    """An HLO shape: an :class:`Array`, or a tuple of shapes."""
    text = text.strip()
    if text.startswith("("):
        end = _match(text, 0)
        return tuple(_parse_shape(p) for p in _split_top(text[1:end - 1]))
    m = _ARRAY.match(text)
    if not m:
        raise _Bad(f"shape {_clip(text)!r} is not understood")
    dtype = m.group(1)
    if dtype not in ELEMENT_BITS:
        raise _Bad(f"unknown element type {dtype!r} in shape {_clip(text)!r}")
    dims = []
    for d in m.group(2).split(","):
        d = d.strip()
        if not d:
            continue
        d = d[2:] if d.startswith("<=") else d   # bounded dynamic: its bound
        if not d.isdigit():
            raise _Bad(f"dimension {d!r} of shape {_clip(text)!r} is not a whole number")
        dims.append(int(d))
    return Array(dtype, tuple(dims))


def _leaves(shape) -> tuple[Array, ...]:
    if isinstance(shape, Array):
        return (shape,)
    return tuple(a for s in shape for a in _leaves(s))


def _shape_token(rest: str) -> tuple[str, str]:
    """Split ``rest`` into the leading shape and what follows it."""
    if rest.startswith("("):
        end = _match(rest, 0)
        return rest[:end], rest[end:]
    m = _ARRAY.match(rest)
    if not m:
        raise _Bad(f"shape {_clip(rest)!r} is not understood")
    end = m.end()
    if end < len(rest) and rest[end] == "{":
        end = _match(rest, end)
    return rest[:end], rest[end:]


@dataclass
class _Instr:
    name: str
    shape: str
    opcode: str
    operands: list[str]
    attrs: dict[str, str]
    line: int
    computation: str
    root: bool


_INSTR = re.compile(r"^(ROOT\s+)?%?([A-Za-z_][\w.\-]*)\s*=\s*(.*)$")
_COMPUTATION = re.compile(r"^(ENTRY\s+)?%?([A-Za-z_][\w.\-]*)\b.*\{$")
_OPCODE = re.compile(r"\s*([a-z][a-z0-9\-]*)\(")


def _parse_instr(text: str, line: int, computation: str) -> _Instr:
    m = _INSTR.match(text)
    if not m:
        raise _Bad("not an instruction")
    root, name, rest = bool(m.group(1)), m.group(2), m.group(3).strip()
    shape, rest = _shape_token(rest)
    op = _OPCODE.match(rest)
    if not op:
        raise _Bad(f"no opcode after the shape in {_clip(rest)!r}")
    opcode = op.group(1)
    start = op.end() - 1
    end = _match(rest, start)
    operands = _split_top(rest[start + 1:end - 1])
    attrs: dict[str, str] = {}
    previous = None
    for part in _split_top(rest[end:].lstrip(", ")):
        key, eq, value = part.partition("=")
        key = key.strip()
        if key == "device_ids" and previous == "replica_groups":
            # mesh['x'=4,'y'=2], device_ids=(...) {'x'}: one value with a comma
            attrs["replica_groups"] += ", " + part
            continue
        attrs[key] = value.strip() if eq else ""
        previous = key
    return _Instr(name, shape, opcode, operands, attrs, line, computation, root)


def _family(opcode: str) -> str | None:
    for f in sorted(_FAMILIES, key=len, reverse=True):
        if opcode == f or opcode.startswith(f + "-"):
            return f
    return None


# ---------------------------------------------------------------------------
# replica groups
# ---------------------------------------------------------------------------

_IOTA = re.compile(r"\[(\d+(?:,\d+)*)\]<=\[(\d+(?:,\d+)*)\](?:T\((\d+(?:,\d+)*)\))?")


def _ints(text: str) -> list[int]:
    return [int(v) for v in text.split(",") if v.strip()]


def _iota(dims: list[int], reshape: list[int], perm: list[int] | None, what: str) -> np.ndarray:
    if int(np.prod(dims)) != int(np.prod(reshape)):
        raise _Bad(f"{what}: {'x'.join(map(str, dims))} is not "
                   f"{int(np.prod(reshape))} devices")
    ids = np.arange(int(np.prod(reshape))).reshape(reshape)
    if perm is not None:
        if sorted(perm) != list(range(len(reshape))):
            raise _Bad(f"{what}: T({','.join(map(str, perm))}) is not a permutation "
                       f"of {len(reshape)} dimensions")
        ids = ids.transpose(perm)
    return ids.reshape(dims)


def _mesh_groups(value: str) -> np.ndarray:
    """Groups of ``mesh['a'=4,'b'=2](, device_ids=(...))? {'a', 'b':(1)2}``.

    XLA's rule: reshape the device array so that every referenced sub-axis is a
    dimension of its own, move the referenced dimensions last (in mesh order;
    sub-axes of one mesh axis in the order listed) and cut into groups.
    """
    what = f"replica_groups {_clip(value)!r}"
    if not value.startswith("mesh["):
        raise _Bad(f"{what} is not understood")
    end = _match(value, 4)
    axes = []
    for part in _split_top(value[5:end - 1]):
        m = re.fullmatch(r"'?([^'=]+)'?\s*=\s*(\d+)", part)
        if not m:
            raise _Bad(f"{what}: mesh axis {part!r} is not name=size")
        axes.append((m.group(1), int(m.group(2))))
    names = [a for a, _ in axes]
    sizes = [s for _, s in axes]
    n = int(np.prod(sizes))
    rest = value[end:].strip()
    ids = np.arange(n)
    if rest.startswith(","):
        rest = rest[1:].strip()
        if not rest.startswith("device_ids=("):
            raise _Bad(f"{what}: expected device_ids=(...) after the mesh")
        start = len("device_ids=")
        close = _match(rest, start)
        inner = rest[start + 1:close - 1].strip()
        rest = rest[close:].strip()
        iota = re.fullmatch(r"\[(\d+(?:,\d+)*)\](?:T\((\d+(?:,\d+)*)\))?", inner)
        if iota:
            ids = _iota([n], _ints(iota.group(1)),
                        _ints(iota.group(2)) if iota.group(2) else None, what)
        elif re.fullmatch(r"\d+(?:\s*,\s*\d+)*", inner):
            ids = np.array(_ints(inner))
        else:
            raise _Bad(f"{what}: device_ids ({inner}) is not a list of device ids")
        if sorted(ids.tolist()) != list(range(n)):
            raise _Bad(f"{what}: device_ids are not a permutation of 0..{n - 1}")
    if not (rest.startswith("{") and rest.endswith("}")):
        raise _Bad(f"{what}: expected the grouped axes in braces after the mesh")
    refs: dict[int, list[tuple[int, int | None, int | None]]] = {}
    for order, part in enumerate(_split_top(rest[1:-1])):
        m = re.fullmatch(r"'?([^':]+)'?(?::\((\d+)\)(\d+))?", part)
        if not m or m.group(1) not in names:
            raise _Bad(f"{what}: {part} is not an axis of the mesh ({', '.join(names)})")
        i = names.index(m.group(1))
        pre = int(m.group(2)) if m.group(2) else None
        size = int(m.group(3)) if m.group(3) else None
        if pre is not None and (sizes[i] % (pre * size) or size < 2):
            raise _Bad(f"{what}: sub-axis {part} does not divide axis {names[i]} "
                       f"of size {sizes[i]}")
        refs.setdefault(i, []).append((order, pre, size))
    if not refs:
        raise _Bad(f"{what} groups no axis")
    dims: list[int] = []
    grouped: list[int] = []
    for i, full in enumerate(sizes):
        mine = refs.get(i)
        offset = len(dims)
        if not mine:
            dims.append(full)
            continue
        if len(mine) == 1 and mine[0][1] is None:
            dims.append(full)
            grouped.append(offset)
            continue
        if any(pre is None for _, pre, _ in mine):
            raise _Bad(f"{what}: axis {names[i]} is grouped both whole and in parts")
        by_pre = sorted(mine, key=lambda r: r[1])
        position: dict[int, int] = {}
        prefix = 1
        for order, pre, size in by_pre:
            if pre % prefix:
                raise _Bad(f"{what}: sub-axes of {names[i]} overlap")
            if pre != prefix:
                dims.append(pre // prefix)
                prefix = pre
            position[order] = len(dims) - offset
            dims.append(size)
            prefix *= size
        if full % prefix:
            raise _Bad(f"{what}: sub-axes of {names[i]} do not divide its size {full}")
        if prefix != full:
            dims.append(full // prefix)
        grouped.extend(offset + position[order] for order, _, _ in mine)
    others = [d for d in range(len(dims)) if d not in grouped]
    size = int(np.prod([dims[d] for d in grouped]))
    return ids.reshape(dims).transpose(others + grouped).reshape(-1, size)


def _groups(value: str, participants: int) -> np.ndarray:
    value = value.strip()
    if value.startswith("{"):
        inner = value[1:-1].strip() if value.endswith("}") else None
        if inner == "":
            return np.arange(participants)[None, :]
        groups = []
        if inner is not None:
            for part in _split_top(inner):
                m = re.fullmatch(r"\{\s*(\d+(?:\s*,\s*\d+)*)\s*\}", part)
                if not m:
                    groups = None
                    break
                groups.append(_ints(m.group(1)))
        if not groups:
            raise _Bad(f"replica_groups {_clip(value)!r} is not a list of groups like "
                       "{{0,1},{2,3}}")
        if len({len(g) for g in groups}) > 1:
            raise _Bad(f"replica_groups {_clip(value)!r} has groups of different sizes")
        return np.array(groups)
    m = _IOTA.fullmatch(value)
    if m:
        dims = _ints(m.group(1))
        if len(dims) != 2:
            raise _Bad(f"replica_groups {value!r} must be [groups,size]<=[...]")
        return _iota(dims, _ints(m.group(2)), _ints(m.group(3)) if m.group(3) else None,
                     f"replica_groups {value!r}")
    if value.startswith("mesh["):
        return _mesh_groups(value)
    raise _Bad(f"replica_groups {_clip(value)!r} is not understood: expected "
               "{{0,1},{2,3}}, [2,4]<=[8] or mesh['x'=4] {'x'}")


def format_groups(groups, limit: int = 8) -> str:
    """Groups as HLO writes them, the first ``limit`` of them: ``{{0,1},{2,3}}``."""
    return _format_groups(groups, limit)


def _format_groups(groups, limit: int = 8) -> str:
    parts = ["{" + ",".join(map(str, g)) + "}" for g in list(groups)[:limit]]
    if len(groups) > limit:
        parts.append(f"... {len(groups) - limit} more")
    return "{" + ",".join(parts) + "}"


# ---------------------------------------------------------------------------
# parse_hlo
# ---------------------------------------------------------------------------

def parse_hlo(text) -> HloModule:
    """Every collective in one HLO module's text, in the order listed.

    Takes the text of ``jax.jit(f).lower(*args).compile().as_text()``, of
    ``.lower(*args).as_text(dialect="hlo")`` or of an XLA dump file. Raises
    :class:`~collectives_lib.errors.CollectivesError` with the line and the
    instruction when the text is not HLO or a collective in it is malformed.

    >>> m = parse_hlo('''HloModule m, num_partitions=4
    ... ENTRY %main (p: bf16[8]) -> bf16[8] {
    ...   %p = bf16[8]{0} parameter(0)
    ...   %cp = (bf16[8]{0}, bf16[8]{0}, u32[], u32[]) collective-permute-start(%p), channel_id=1, source_target_pairs={{0,1},{1,2},{2,3},{3,0}}
    ...   ROOT %done = bf16[8]{0} collective-permute-done(%cp)
    ... }''')
    >>> print(m[0])
    cp: collective_permute bf16[8] -> bf16[8] over 4 pairs, 16 bytes
    >>> m[0].is_async, m[0].source_target_pairs[:2]
    (True, ((0, 1), (1, 2)))
    >>> parse_hlo("module m")
    Traceback (most recent call last):
    ...
    collectives_lib.errors.CollectivesError: not HLO text: no 'HloModule' line (the text starts 'module m')
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    if not isinstance(text, str):
        raise CollectivesError(f"parse_hlo takes HLO text (a str), got {type(text).__name__}")
    lines = text.splitlines()
    headers = [i for i, ln in enumerate(lines) if ln.lstrip().startswith("HloModule ")]
    if not headers:
        start = " ".join(text.split())
        raise CollectivesError(
            "not HLO text: the text is empty" if not start else
            f"not HLO text: no 'HloModule' line (the text starts {_clip(start, 40)!r})"
        )
    if len(headers) > 1:
        raise CollectivesError(
            f"the text holds {len(headers)} HLO modules (lines "
            f"{', '.join(str(i + 1) for i in headers)}); pass one module at a time"
        )
    header = lines[headers[0]].strip()
    mod_name = header.split()[1].rstrip(",")
    parts = re.search(r"\bnum_partitions=(\d+)", header)
    reps = re.search(r"\breplica_count=(\d+)", header)
    replica_count = int(reps.group(1)) if reps else 1

    instrs: list[_Instr] = []
    comps: dict[str, list[_Instr]] = {}
    entry = None
    current = None
    for i in range(headers[0] + 1, len(lines)):
        raw = re.sub(r"/\*.*?\*/", "", lines[i]).strip()
        if not raw or raw.startswith("//"):
            continue
        if current is None:
            m = _COMPUTATION.match(raw)
            if m and not _INSTR.match(raw):
                current = m.group(2)
                comps[current] = []
                if m.group(1):
                    entry = current
            continue
        if raw == "}":
            current = None
            continue
        try:
            ins = _parse_instr(raw, i + 1, current)
        except _Bad as err:
            name = _INSTR.match(raw)
            opcode = re.search(r"\s([a-z][a-z0-9\-]*)\(", raw)
            if opcode and _family(opcode.group(1)) is not None:
                who = f"%{name.group(2)}" if name else "an instruction"
                raise CollectivesError(
                    f"line {i + 1}: malformed {opcode.group(1)} {who}: {err}") from None
            continue
        comps[current].append(ins)
        instrs.append(ins)
    if entry is None:
        raise CollectivesError(f"HLO module {mod_name} has no ENTRY computation")

    if parts:
        num_partitions = int(parts.group(1))
    elif reps:
        num_partitions = 1
    else:
        # unoptimized text does not say: as many partitions as the groups name
        num_partitions = _devices_named(instrs)
    by_name = {ins.name: ins for ins in instrs}
    roots = {c: next((x for x in body if x.root), body[-1] if body else None)
             for c, body in comps.items()}
    repeats = _repeats(comps, entry)

    wrapped = set()
    for ins in instrs:
        if ins.opcode == "async-start":
            callee = ins.attrs.get("calls", "").lstrip("%")
            root = roots.get(callee)
            if root is not None and root.opcode in KINDS:
                wrapped.add(callee)

    out = []
    for ins in instrs:
        if ins.computation in wrapped:
            continue
        try:
            rec = _collective(ins, by_name, comps, roots, num_partitions, replica_count,
                              repeats.get(ins.computation, 0))
        except _Bad as err:
            raise CollectivesError(f"line {ins.line}: {ins.opcode} %{ins.name}: {err}") from None
        if rec is not None:
            out.append(rec)
    return HloModule(mod_name, num_partitions, replica_count, tuple(out))


def _devices_named(instrs: list[_Instr]) -> int:
    """1 + the largest device id any collective's groups or pairs name."""
    top = 0
    for ins in instrs:
        if _family(ins.opcode) is None and ins.opcode != "async-start":
            continue
        value = ins.attrs.get("replica_groups")
        try:
            if value is not None:
                top = max(top, int(_groups(value, 1).max()))
        except _Bad:
            pass                       # reported with its line by the main pass
        for v in re.findall(r"\d+", ins.attrs.get("source_target_pairs", "")):
            top = max(top, int(v))
    return top + 1


def _repeats(comps: dict[str, list[_Instr]], entry: str) -> dict[str, int | None]:
    """How many times one run executes each computation (None: unknown)."""
    callers: dict[str, list[tuple[str, int | None]]] = {}
    for comp, body in comps.items():
        for ins in body:
            trip = None
            if ins.opcode == "while":
                m = re.search(r'"known_trip_count":\{"n":"(\d+)"\}', ins.attrs.get("backend_config", ""))
                trip = int(m.group(1)) if m else None
            for key, value in ins.attrs.items():
                if key in ("body", "condition"):
                    mult = trip if key == "body" else (None if trip is None else trip + 1)
                    names = [value]
                elif key in ("calls", "to_apply", "true_computation", "false_computation",
                             "branch_computations", "called_computations"):
                    mult = 1
                    names = _split_top(value.strip("{}")) if value.startswith("{") else [value]
                else:
                    continue
                for callee in names:
                    callers.setdefault(callee.strip().lstrip("%"), []).append((comp, mult))
    memo: dict[str, int | None] = {entry: 1}

    def count(comp: str) -> int | None:
        if comp in memo:
            return memo[comp]
        memo[comp] = 0          # HLO has no recursion; this only guards bad text
        total, unknown = 0, False
        for caller, mult in callers.get(comp, []):
            up = count(caller)
            if up == 0:
                continue
            if up is None or mult is None:
                unknown = True
            else:
                total += up * mult
        memo[comp] = None if unknown else total
        return memo[comp]

    return {c: count(c) for c in comps}


def _operand_shapes(ins: _Instr, by_name: dict[str, _Instr]) -> tuple[Array, ...]:
    shapes = []
    for op in ins.operands:
        tokens = op.split()
        ref = tokens[-1].lstrip("%")
        if len(tokens) > 1:
            shapes.extend(_leaves(_parse_shape(" ".join(tokens[:-1]))))
        elif ref in by_name:
            shapes.extend(_leaves(_parse_shape(by_name[ref].shape)))
        else:
            raise _Bad(f"operand %{ref} is not defined in the module")
    if not shapes:
        raise _Bad("no operands")
    return tuple(shapes)


def _collective(ins: _Instr, by_name, comps, roots, num_partitions, replica_count,
                repeats) -> HloCollective | None:
    opcode = ins.opcode
    family = _family(opcode)
    target = ins
    if opcode == "async-start":
        callee = ins.attrs.get("calls", "").lstrip("%")
        root = roots.get(callee)
        if root is None or root.opcode not in KINDS:
            return None
        target = root
        base = root.opcode
    elif opcode in ("async-done", "async-update"):
        return None
    elif family is None:
        return None
    elif family in _UNSUPPORTED:
        raise _Bad(f"not supported: {_UNSUPPORTED[family]}")
    elif opcode in KINDS:
        base = opcode
    elif opcode == family + "-start":
        base = family
    elif opcode == family + "-done":
        return None
    else:
        raise _Bad(f"unknown collective op {opcode!r}; known: "
                   f"{', '.join(KINDS)}, their -start/-done forms and async-start")
    kind = KINDS[base]
    attrs = target.attrs
    operands = _operand_shapes(target, by_name)
    shape = _parse_shape(target.shape)
    if target is ins and opcode.endswith("-start") and base != "all-reduce":
        # (operands, results, contexts...): the results are the second element
        if not isinstance(shape, tuple) or len(shape) < 2:
            raise _Bad(f"shape {target.shape} of an async start is not (operands, results, ...)")
        shape = shape[1]
    results = _leaves(shape)

    channel = attrs.get("channel_id")
    if channel is not None and not channel.isdigit():
        raise _Bad(f"channel_id {channel!r} is not a whole number")
    channel_id = int(channel) if channel is not None else None
    use_global = attrs.get("use_global_device_ids", "false") == "true"
    if channel_id is None:
        mode = "replica"
    elif base not in _HAS_GLOBAL_IDS:
        mode = "partition"
    else:
        mode = "global" if use_global else "replica_and_partition"
    written = {"replica": replica_count, "partition": num_partitions,
               "global": replica_count * num_partitions,
               "replica_and_partition": replica_count}[mode]

    dimension = None
    dims_attr = attrs.get("dimensions")
    if dims_attr is not None:
        m = re.fullmatch(r"\{(\d+)\}", dims_attr)
        if not m:
            raise _Bad(f"dimensions={dims_attr} is not one dimension like {{0}}")
        dimension = int(m.group(1))
    elif base in ("all-gather", "reduce-scatter"):
        raise _Bad("no dimensions={...} attribute")

    pairs: tuple[tuple[int, int], ...] = ()
    groups: tuple[tuple[int, ...], ...] = ()
    if base == "collective-permute":
        value = attrs.get("source_target_pairs")
        if value is None:
            raise _Bad("no source_target_pairs attribute")
        found = re.findall(r"\{\s*(\d+)\s*,\s*(\d+)\s*\}", value)
        if not found or re.sub(r"\{\s*\d+\s*,\s*\d+\s*\}|[\s,{}]", "", value):
            raise _Bad(f"source_target_pairs {_clip(value)!r} is not a list like {{{{0,1}},{{1,0}}}}")
        raw = [(int(s), int(t)) for s, t in found]
        pairs = tuple(_expand_pairs(raw, mode, num_partitions, replica_count))
    else:
        value = attrs.get("replica_groups", "{}")
        raw_groups = _groups(value, written)
        if raw_groups.max() >= written:
            what = {"replica": "replicas (without a channel_id the groups list replicas)",
                    "partition": "partitions",
                    "global": "devices",
                    "replica_and_partition": "replicas (with use_global_device_ids=false "
                                             "the groups list replicas)"}[mode]
            raise _Bad(f"replica_groups {_clip(value)!r} name device {int(raw_groups.max())} "
                       f"but the module has {written} {what}")
        flat = raw_groups.ravel().tolist()
        if len(set(flat)) != len(flat):
            raise _Bad(f"replica_groups {_clip(value)!r} list a device twice")
        groups = tuple(_expand_groups(raw_groups, mode, num_partitions, replica_count))
        _check_shapes(base, operands, results, dimension, len(groups[0]))

    to_apply = attrs.get("to_apply")
    reduction = None
    if to_apply is not None:
        to_apply = to_apply.lstrip("%")
        if to_apply not in comps:
            raise _Bad(f"to_apply=%{to_apply} names no computation in the module")
        root = roots.get(to_apply)
        reduction = root.opcode if root is not None else None
    elif base in ("all-reduce", "reduce-scatter"):
        raise _Bad("no to_apply=%computation (the reduction)")

    return HloCollective(
        kind=kind, name=ins.name, opcode=opcode, operands=operands, results=results,
        dimension=dimension, replica_groups=groups, source_target_pairs=pairs,
        channel_id=channel_id, use_global_device_ids=use_global, to_apply=to_apply,
        reduction=reduction, computation=ins.computation, repeats=repeats,
        num_devices=num_partitions * replica_count, line=ins.line,
    )


def _expand_groups(groups: np.ndarray, mode: str, P: int, R: int):
    """Groups as written -> groups of global device ids (replica * P + partition)."""
    if mode == "global":
        yield from (tuple(int(v) for v in g) for g in groups)
    elif mode == "replica":
        for p in range(P):
            yield from (tuple(int(r) * P + p for r in g) for g in groups)
    elif mode == "partition":
        for r in range(R):
            yield from (tuple(r * P + int(p) for p in g) for g in groups)
    else:  # replica_and_partition: the replicas listed, with all their partitions
        yield from (tuple(int(r) * P + p for r in g for p in range(P)) for g in groups)


def _expand_pairs(pairs, mode: str, P: int, R: int):
    if mode == "partition":
        for r in range(R):
            yield from ((r * P + s, r * P + t) for s, t in pairs)
    else:
        for p in range(P):
            yield from ((s * P + p, t * P + p) for s, t in pairs)


def _check_shapes(base, operands, results, dimension, n) -> None:
    """The size rules XLA's verifier enforces, so that the bytes can be trusted."""
    def say(arrays):
        return ", ".join(map(str, arrays))
    if base == "all-to-all" and dimension is None:
        if len(operands) != n:
            raise _Bad(f"a tuple all-to-all has one operand per device of the group: "
                       f"{len(operands)} operands for groups of {n}")
        return
    if len(operands) != len(results):
        raise _Bad(f"{len(operands)} operands ({say(operands)}) but {len(results)} results "
                   f"({say(results)})")
    for a, b in zip(operands, results):
        if a.dtype != b.dtype:
            raise _Bad(f"operand {a} and result {b} have different element types")
        if base in ("all-reduce", "all-to-all", "collective-broadcast"):
            if a.dims != b.dims:
                raise _Bad(f"result {b} is not the shape of operand {a}")
            if base == "all-to-all" and (dimension >= len(a.dims) or a.dims[dimension] % n):
                raise _Bad(f"dimension {dimension} of operand {a} does not split into {n} parts")
            continue
        if dimension >= len(a.dims) or len(a.dims) != len(b.dims):
            raise _Bad(f"dimension {dimension} does not fit operand {a} and result {b}")
        big, small = (b, a) if base == "all-gather" else (a, b)
        want = list(small.dims)
        want[dimension] *= n
        if list(big.dims) != want:
            which = "result" if base == "all-gather" else "operand"
            raise _Bad(f"{which} {big} is not {n} x {small} along dimension {dimension}")


# ---------------------------------------------------------------------------
# meshes
# ---------------------------------------------------------------------------

def parse_mesh(text: str) -> dict[str, int]:
    """``"x=4,y=2"`` -> ``{"x": 4, "y": 2}``, the way a command line writes a mesh.

    >>> parse_mesh("x=4, y=2")
    {'x': 4, 'y': 2}
    """
    out: dict[str, int] = {}
    for part in str(text).split(","):
        m = re.fullmatch(r"\s*([A-Za-z_]\w*)\s*=\s*(\d+)\s*", part)
        if not m or int(m.group(2)) < 1 or m.group(1) in out:
            raise CollectivesError(
                f"mesh {text!r} is not understood; write axis=size pairs like x=4,y=2")
        out[m.group(1)] = int(m.group(2))
    return out


def _resolve_mesh(mesh, devices) -> tuple[list[str], np.ndarray, str]:
    """(axis names, device-id array shaped like the mesh, description)."""
    if isinstance(mesh, str):
        mesh = parse_mesh(mesh)
    if hasattr(mesh, "axis_names") and hasattr(mesh, "devices") and not isinstance(mesh, Mapping):
        # A jax.sharding.Mesh, read without importing jax. HLO numbers devices by
        # their position in the mesh (partition ids), so only its shape matters
        # here; its devices' ids say which chip each partition runs on.
        mesh = dict(zip((str(a) for a in mesh.axis_names), np.shape(mesh.devices)))
    if not isinstance(mesh, Mapping) or not mesh:
        raise CollectivesError(
            f"mesh must map axis names to sizes, like {{'x': 4, 'y': 2}} or 'x=4,y=2'; "
            f"got {mesh!r}")
    names = [str(a) for a in mesh]
    sizes = []
    for a, s in mesh.items():
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 1:
            raise CollectivesError(f"mesh axis {a!r} must have a whole size >= 1, got {s!r}")
        sizes.append(int(s))
    desc = ",".join(f"{a}={s}" for a, s in zip(names, sizes))
    n = int(np.prod(sizes))
    if devices is None:
        ids = np.arange(n).reshape(sizes)
    else:
        ids = np.asarray(devices)
        if ids.shape != tuple(sizes):
            raise CollectivesError(
                f"devices has shape {ids.shape} but mesh {desc} needs {tuple(sizes)}")
        if not np.issubdtype(ids.dtype, np.integer) or sorted(ids.ravel().tolist()) != list(range(n)):
            raise CollectivesError(
                f"devices must hold each device id 0..{n - 1} once, got {ids.ravel().tolist()}")
        ids = ids.astype(np.int64)
        if not np.array_equal(ids.ravel(), np.arange(n)):
            desc += f" (devices {ids.tolist()})"
    return names, ids, desc


def mesh_sizes(mesh) -> dict[str, int]:
    """``mesh`` (``"x=4,y=2"``, a dict or a ``jax.sharding.Mesh``) as ``{axis: size}``.

    >>> mesh_sizes("x=4,y=2")
    {'x': 4, 'y': 2}
    """
    names, ids, _ = _resolve_mesh(mesh, None)
    return dict(zip(names, (int(s) for s in ids.shape)))


def mesh_axes(groups, mesh, *, devices=None) -> tuple[str, ...]:
    """Which axes of ``mesh`` the replica groups span.

    ``groups`` is a :class:`HloCollective` or a list of groups of device ids.
    ``mesh`` maps axis names to sizes in order (``{"x": 4, "y": 2}``,
    ``"x=4,y=2"`` or a ``jax.sharding.Mesh``). The ids in HLO groups are
    positions in the mesh (partition ids: row-major, the last axis fastest, as
    ``np.arange(8).reshape(4, 2)``), whatever physical devices the mesh holds;
    ``devices`` gives another numbering as an array shaped like the mesh.
    The axes come in the order the groups list their devices (``("y", "x")``
    when a group runs along y first), and ``()`` for groups of one device. A
    permute spans the axes along which its pairs move data.

    >>> mesh = {"x": 4, "y": 2}
    >>> mesh_axes([[0, 1], [2, 3], [4, 5], [6, 7]], mesh)
    ('y',)
    >>> mesh_axes([[0, 2, 4, 6], [1, 3, 5, 7]], mesh)
    ('x',)
    >>> mesh_axes([list(range(8))], mesh)
    ('x', 'y')
    >>> mesh_axes([[0, 3], [1, 2]], {"x": 2, "y": 2})
    Traceback (most recent call last):
    ...
    collectives_lib.errors.CollectivesError: replica groups {{0,3},{1,2}} do not span any set of axes of mesh x=2,y=2
    """
    names, ids, desc = _resolve_mesh(mesh, devices)
    n = ids.size
    if isinstance(groups, HloCollective):
        if groups.num_devices != n:
            raise CollectivesError(
                f"mesh {desc} has {n} devices but {groups.name} runs on a module of "
                f"{groups.num_devices}")
        if groups.kind == "collective_permute":
            return _permute_axes(groups.source_target_pairs, names, ids, desc)
        groups = groups.replica_groups
    try:
        groups = [[int(v) for v in g] for g in groups]
    except (TypeError, ValueError):
        raise CollectivesError(
            f"replica groups must be lists of device ids, got {groups!r}") from None
    if not groups or not all(groups):
        raise CollectivesError(f"replica groups must be non-empty lists of device ids, got {groups!r}")
    text = _format_groups(groups)
    covered = sorted(v for g in groups for v in g)
    if len(set(covered)) != len(covered):
        raise CollectivesError(f"replica groups {text} list a device twice")
    if len(covered) != n:
        raise CollectivesError(
            f"mesh {desc} has {n} devices but the replica groups {text} cover {len(covered)}")
    if covered != list(range(n)):
        raise CollectivesError(
            f"replica groups {text} name devices outside 0..{n - 1} of mesh {desc}")
    if len(groups[0]) == 1 and all(len(g) == 1 for g in groups):
        return ()
    want = {frozenset(g) for g in groups}
    exact = sorted(tuple(g) for g in groups)
    for k in range(1, len(names) + 1):
        for subset in itertools.combinations(range(len(names)), k):
            if _axis_groups(ids, subset, set_form=True) != want:
                continue
            for order in itertools.permutations(subset):
                if sorted(map(tuple, _axis_groups(ids, order).tolist())) == exact:
                    return tuple(names[a] for a in order)
            return tuple(names[a] for a in subset)
    raise CollectivesError(f"replica groups {text} do not span any set of axes of mesh {desc}")


def _axis_groups(ids: np.ndarray, axes, set_form: bool = False):
    others = [a for a in range(ids.ndim) if a not in axes]
    size = int(np.prod([ids.shape[a] for a in axes]))
    groups = ids.transpose(others + list(axes)).reshape(-1, size)
    if set_form:
        return {frozenset(g) for g in groups.tolist()}
    return groups


def _permute_axes(pairs, names, ids, desc) -> tuple[str, ...]:
    where = {int(d): np.unravel_index(i, ids.shape) for i, d in enumerate(ids.ravel())}
    moved = set()
    for s, t in pairs:
        if s not in where or t not in where:
            raise CollectivesError(
                f"source_target_pairs name device {s if s not in where else t}, "
                f"outside mesh {desc}")
        moved |= {a for a in range(len(names)) if where[s][a] != where[t][a]}
    return tuple(names[a] for a in sorted(moved))
