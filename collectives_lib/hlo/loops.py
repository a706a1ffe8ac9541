"""How many times one run of a module executes each computation.

A computation called by a ``while`` runs as many times as the loop trips (its
condition once more). The trip count is read, in order, from

1. the while's ``backend_config`` (``"known_trip_count":{"n":"12"}``: XLA's CPU
   and GPU pipelines write it);
2. the loop's shape, as the TPU pipeline leaves it (it writes no count): the
   condition's root compares one element of the loop state with a constant
   (``compare(get-tuple-element(state), index=0), constant(12)), direction=LT``),
   the while's initial tuple holds a constant there (through copies), and the
   body's root tuple puts that element plus a constant back.

A loop read neither way counts ``None`` (unknown), and so does everything inside it.
"""

from __future__ import annotations

import re

from .text import Bad, Instr

_KNOWN = re.compile(r'"known_trip_count":\{"n":"(\d{1,19})"\}')
_FLIP = {"LT": "GT", "LE": "GE", "GT": "LT", "GE": "LE", "EQ": "EQ", "NE": "NE"}
#: Most trips a loop may be read to make (beyond it the count is not believed).
MAX_TRIPS = 1 << 40


def _get(by_name, name: str, near: Instr) -> Instr | None:
    """The instruction ``name``, looked for from ``near`` on (the reader's names search
    the text back from the instruction that names an operand)."""
    find = getattr(by_name, "find", None)
    return find(name, near) if find is not None else by_name.get(name)


def _through(ins: Instr | None, by_name) -> Instr | None:
    """Follow copies, bitcasts and converts back to what they copy."""
    seen = 0
    while ins is not None and ins.opcode in ("copy", "bitcast", "convert", "reshape") and seen < 64:
        names = ins.operand_names()
        ins = _get(by_name, names[0], ins) if names else None
        seen += 1
    return ins


def _constant(ins: Instr | None, by_name) -> int | None:
    ins = _through(ins, by_name)
    if ins is None or ins.opcode != "constant":
        return None
    m = re.search(r"constant\((-?\d{1,19})\)", ins.rest)
    return int(m.group(1)) if m else None


def _element(ins: Instr | None, by_name, param: str) -> int | None:
    """The tuple index of ``param`` that ``ins`` reads, through copies."""
    ins = _through(ins, by_name)
    if ins is None or ins.opcode != "get-tuple-element":
        return None
    names = ins.operand_names()
    if not names or names[0] != param:
        return None
    m = re.fullmatch(r"\d{1,19}", ins.attrs.get("index", ""))
    return int(m.group(0)) if m else None


def _param(body: list[Instr]) -> str | None:
    params = [i for i in body if i.opcode == "parameter"]
    return params[0].name if len(params) == 1 else None


def trip_count(loop: Instr, comps: dict[str, list[Instr]], by_name,
               memo: dict | None = None) -> int | None:
    """Trips of one ``while`` (None: not readable from the text). ``memo`` keeps what
    a condition and a body say, for the other loops that share them."""
    m = _KNOWN.search(loop.rest)
    if m:
        return int(m.group(1))
    try:
        return _shaped_trips(loop, comps, by_name, {} if memo is None else memo)
    except Bad:
        return None


def _shaped_trips(loop: Instr, comps, by_name, memo: dict) -> int | None:
    cond_name = loop.attrs.get("condition", "").lstrip("%")
    body_name = loop.attrs.get("body", "").lstrip("%")
    cond, body = comps.get(cond_name), comps.get(body_name)
    if not cond or not body:
        return None
    key = ("condition", cond_name)
    if key not in memo:
        memo[key] = None
        memo[key] = _condition(cond, by_name)
    if memo[key] is None:
        return None
    index, bound, direction = memo[key]
    names = loop.operand_names()
    init_tuple = _get(by_name, names[0], loop) if names else None
    if (init_tuple is None or init_tuple.opcode != "tuple"
            or index >= len(init_tuple.operands)):
        return None
    first = _get(by_name, init_tuple.operand_names()[index], init_tuple)
    start = _constant(first, by_name)
    key = ("body", body_name, index)
    if key not in memo:
        memo[key] = None
        memo[key] = _step(body, by_name, index)
    step = memo[key]
    if start is None or step is None:
        return None
    return _count(start, bound, step, direction)


def _condition(cond: list[Instr], by_name) -> tuple[int, int, str] | None:
    """(tuple index, bound, direction) of a loop condition that compares one element
    of the loop state with a constant."""
    root = next((i for i in cond if i.root), cond[-1])
    if root.opcode != "compare":
        return None
    direction = root.attrs.get("direction", "")
    a, b = (_get(by_name, n, root) for n in root.operand_names()[:2])
    param = _param(cond)
    index, bound = _element(a, by_name, param), _constant(b, by_name)
    if index is None:
        index, bound, direction = _element(b, by_name, param), _constant(a, by_name), _FLIP.get(direction, "")
    if index is None or bound is None:
        return None
    return index, bound, direction


def _step(body: list[Instr], by_name, index: int) -> int | None:
    root = next((i for i in body if i.root), body[-1])
    param = _param(body)
    if root.opcode != "tuple" or index >= len(root.operands) or param is None:
        return None
    nxt = _through(_get(by_name, root.operand_names()[index], root), by_name)
    if nxt is None or nxt.opcode not in ("add", "subtract"):
        return None
    x, y = (_get(by_name, n, nxt) for n in nxt.operand_names()[:2])
    sign = 1 if nxt.opcode == "add" else -1
    if _element(x, by_name, param) == index and _constant(y, by_name) is not None:
        return sign * _constant(y, by_name)
    if nxt.opcode == "add" and _element(y, by_name, param) == index and _constant(x, by_name) is not None:
        return _constant(x, by_name)
    return None


def _count(start: int, bound: int, step: int, direction: str) -> int | None:
    if step == 0:
        return None
    if direction in ("LT", "LE") and step > 0:
        last = bound - 1 if direction == "LT" else bound
        trips = max(0, (last - start) // step + 1)
    elif direction in ("GT", "GE") and step < 0:
        last = bound + 1 if direction == "GT" else bound
        trips = max(0, (start - last) // -step + 1)
    elif direction == "NE" and (bound - start) % step == 0 and (bound - start) // step >= 0:
        trips = (bound - start) // step
    else:
        return None
    return trips if trips <= MAX_TRIPS else None


def repeats(comps: dict[str, list[Instr]], entry: str, by_name) -> dict[str, int | None]:
    """How many times one run executes each computation (None: unknown)."""
    callers: dict[str, list[tuple[str, int | None]]] = {}
    memo: dict = {}
    for comp, body in comps.items():
        for ins in body:
            rest = ins.rest
            if ins.opcode not in ("call", "map") and ("calls=" not in rest and "body=" not in rest
                                                       and "_computation" not in rest
                                                       and "condition=" not in rest):
                continue                  # (a reduction's to_apply runs no collective)
            trip = (trip_count(ins, comps, by_name, memo) if ins.opcode == "while"
                    else None)
            if ins.opcode == "fusion":      # (most callers: attributes the walk reads)
                fused = ins.calls()
                found = [("calls", fused)] if fused else []
            else:
                found = ins.callees()
            for key, callee in found:
                if key == "body":
                    mult = trip
                elif key == "condition":
                    mult = None if trip is None else trip + 1
                else:
                    mult = 1
                callers.setdefault(callee, []).append((comp, mult))
    return _evaluate(callers, comps, entry)


def _evaluate(callers, comps, entry) -> dict[str, int | None]:
    """Each computation's count: the sum over its callers of the caller's count
    times the call's multiplier; evaluated without recursion (a hostile module
    may nest deeply), a cycle (which HLO cannot have) counting 0."""
    memo: dict[str, int | None] = {entry: 1}
    for top in comps:
        stack, on = [top], {top}
        while stack:
            comp = stack[-1]
            if comp in memo:
                on.discard(stack.pop())
                continue
            pending = [c for c, _ in callers.get(comp, []) if c not in memo and c not in on]
            if pending:
                stack.extend(pending)
                on.update(pending)
                continue
            total, unknown = 0, False
            for caller, mult in callers.get(comp, []):
                up = memo.get(caller, 0)
                if up == 0:
                    continue
                if up is None or mult is None:
                    unknown = True
                else:
                    total += up * mult
            memo[comp] = None if unknown else total
            on.discard(stack.pop())
    return {c: memo.get(c, 0) for c in comps}
