"""What every part of the reader asks of an opcode or an operand: which collective an
opcode belongs to, and the shapes of an instruction's operands (each distinct shape
text parsed once)."""

from __future__ import annotations

import functools

from .records import KINDS
from .text import Bad, Instr, clip, leaves, parse_shape

# Ops that are collectives but that this reader cannot size from the text.
UNSUPPORTED = {
    "ragged-all-to-all": "its per-peer sizes are operands known only at run time",
}
_FAMILIES = sorted(tuple(KINDS) + tuple(UNSUPPORTED), key=len, reverse=True)


@functools.lru_cache(maxsize=8192)
def shape_of(text: str):
    """:func:`~.text.parse_shape`, each distinct shape text parsed once."""
    return parse_shape(text)


@functools.lru_cache(maxsize=4096)
def family(opcode: str) -> str | None:
    """The collective an opcode belongs to (``all-gather-start`` -> ``all-gather``), or None."""
    for f in _FAMILIES:
        if opcode == f or opcode.startswith(f + "-"):
            return f
    return None


def operand_shapes(ins: Instr, by_name: dict[str, Instr]):
    """The arrays of every operand of ``ins`` (tuples flattened), from the shapes written
    beside them or those of the instructions they name."""
    shapes = []
    for op in ins.operands:
        tokens = op.split()
        ref = tokens[-1].lstrip("%")
        if len(tokens) > 1:
            shapes.extend(leaves(shape_of(" ".join(tokens[:-1]))))
        else:
            found = _lookup(by_name, ref, ins)
            if found is None:
                raise Bad(f"operand %{clip(ref)} is not defined in the module")
            shapes.extend(leaves(shape_of(found.shape)))
    if not shapes:
        raise Bad("no operands")
    return tuple(shapes)


def _lookup(by_name, name: str, near: Instr):
    """``by_name[name]``, searched for back from ``near`` (where HLO defines operands)
    when ``by_name`` is the reader's :class:`~.parse.Names`; None if there is none."""
    find = getattr(by_name, "find", None)
    return find(name, near) if find is not None else by_name.get(name)
