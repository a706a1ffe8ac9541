"""``parse_hlo``: every collective of one module, read as its devices run it.

The module is read in one cheap pass (:func:`read_module`: computations, and
each instruction's name, opcode and line); only collectives, the fusions
around them and the loops are parsed in full. :mod:`.fold` turns what the
compilers write into what runs (async chains, TPU collective fusions);
:mod:`.loops` counts the repeats.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import numpy as np

from ..errors import CollectivesError
from ..bulk import make, paused_gc
from . import fold
from .ops import UNSUPPORTED, family, operand_shapes, shape_of
from .groups import MAX_DEVICES, expand_groups, expand_pairs, groups as parse_groups, pairs as parse_pairs
from .loops import repeats as count_repeats
from .records import KINDS, HloCollective, HloModule
from .text import COMPUTATION, HEAD, LINE, Bad, Instr, clip, leaves

# Ops with a use_global_device_ids attribute (the others are cross-partition
# when they have a channel_id and cross-replica when not).
_HAS_GLOBAL_IDS = ("all-gather", "reduce-scatter", "all-reduce")
_COMMENT = re.compile(r"/\*.*?\*/")


#: Opcodes the reader walks (with collectives, async ops and every computation's root);
#: the others are kept as text and made instructions only when an operand is looked up.
WALKED = frozenset({"fusion", "while", "call", "conditional", "get-tuple-element", "tuple",
                    "parameter", "convolution", "dot", "custom-call"})
_COLLECTIVE_PREFIXES = ("all-", "reduce-scatter", "collective-", "ragged-", "async-")


class Names(dict):
    """Every instruction by name: those walked are :class:`Instr` already, the rest
    ``(opcode, line, computation, rest)`` until first looked up."""

    def __init__(self, walked: dict, other: dict):
        super().__init__(walked)
        self._other = other

    def _make(self, name):
        opcode, line, comp, rest = self._other.pop(name)
        ins = Instr(name, opcode, line, comp, False, rest)
        dict.__setitem__(self, name, ins)
        return ins

    def get(self, name, default=None):
        if dict.__contains__(self, name):
            return dict.__getitem__(self, name)
        return self._make(name) if name in self._other else default

    def __contains__(self, name) -> bool:
        return dict.__contains__(self, name) or name in self._other

    def __getitem__(self, name):
        ins = self.get(name)
        if ins is None:
            raise KeyError(name)
        return ins


@dataclass
class Module:
    """A module after the cheap pass: the computations list the instructions the
    reader walks (:data:`WALKED`, collectives, roots), in order."""

    name: str
    header: str
    comps: dict[str, list[Instr]]
    entry: str
    instrs: list[Instr]
    by_name: Names

    @functools.cached_property
    def roots(self) -> dict[str, Instr | None]:
        return {c: next((x for x in body if x.root), body[-1] if body else None)
                for c, body in self.comps.items()}


def _header(lines: list[str]) -> int:
    headers = [i for i, ln in enumerate(lines) if "HloModule " in ln and ln.lstrip().startswith("HloModule ")]
    if not headers:
        start = " ".join(" ".join(lines[:20]).split())
        raise CollectivesError(
            "not HLO text: the text is empty" if not start else
            f"not HLO text: no 'HloModule' line (the text starts {clip(start, 40)!r})")
    if len(headers) > 1:
        where = ", ".join(str(i + 1) for i in headers[:8]) + (", ..." if len(headers) > 8 else "")
        raise CollectivesError(
            f"the text holds {len(headers)} HLO modules (lines {where}); pass one module at a time")
    return headers[0]


def read_module(text: str) -> Module:
    """Computations and instructions of one module's text (cheap pass)."""
    lines = text.splitlines()
    first = _header(lines)
    header = lines[first].strip()
    comps: dict[str, list[Instr]] = {}
    instrs: list[Instr] = []
    walked: dict[str, Instr] = {}
    other: dict[str, tuple] = {}
    entry = current = None
    for i in range(first + 1, len(lines)):
        raw = lines[i]
        if "/*" in raw:
            raw = _COMMENT.sub("", raw)
        s = raw.strip()
        if not s or s.startswith("//"):
            continue
        if current is None:
            m = COMPUTATION.match(s)
            if m and not HEAD.match(s):
                current = m.group(2)
                comps[current] = []
                if m.group(1):
                    entry = current
            continue
        if s == "}":
            current = None
            continue
        m = LINE.match(s)
        if not m:
            _not_an_instruction(s, i + 1)
            continue
        opcode = m.group(4)
        if m.group(1) or opcode in WALKED or opcode.startswith(_COLLECTIVE_PREFIXES):
            ins = Instr(m.group(2), opcode, i + 1, current, bool(m.group(1)), m.group(3))
            comps[current].append(ins)
            instrs.append(ins)
            walked[ins.name] = ins
        else:
            other[m.group(2)] = (opcode, i + 1, current, m.group(3))
    name = header.split()[1].rstrip(",") if len(header.split()) > 1 else "?"
    if entry is None:
        raise CollectivesError(f"HLO module {name} has no ENTRY computation")
    return Module(name, header, comps, entry, instrs, Names(walked, other))


def _not_an_instruction(s: str, line: int) -> None:
    opcode = re.search(r"\s([a-z][a-z0-9\-]*)\(", s)
    if opcode and family(opcode.group(1)) is not None:
        raise CollectivesError(f"line {line}: malformed {opcode.group(1)}: not an instruction "
                               f"({clip(s)!r})")


# ---------------------------------------------------------------------------
# parse_hlo
# ---------------------------------------------------------------------------

def parse_hlo(text) -> HloModule:
    """Every collective in one HLO module's text, as the devices run it, in the
    order the text lists them.

    Takes the text of ``jax.jit(f).lower(*args).compile().as_text()``, of
    ``.lower(*args).as_text(dialect="hlo")`` or of an XLA dump file, from any
    backend. An async start/update/done chain is one collective, named after
    its start; a TPU reduce-scatter fusion (an all-reduce sliced inside a
    ``kCustom`` fusion) is one reduce-scatter; a loop's body counts its trips.
    Raises :class:`~collectives_lib.errors.CollectivesError` with the line and
    the instruction when the text is not HLO or a collective in it is malformed.

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
    with paused_gc():          # a module of many instructions is many objects, in no cycle
        return _parse(text)


def _parse(text: str) -> HloModule:
    module = read_module(text)
    partitions, replicas = _devices(module)
    try:
        rep = count_repeats(module.comps, module.entry, module.by_name)
    except Bad as err:
        raise CollectivesError(str(err) if err.located else f"malformed text: {err}") from None
    ctx = Context(module, partitions, replicas, rep)
    try:
        found, notes = fold.collectives(module, ctx)
    except Bad as err:            # an instruction the walk had to read is malformed
        raise CollectivesError(str(err) if err.located else f"malformed text: {err}") from None
    found.sort(key=lambda c: c.line)
    return HloModule(module.name, partitions, replicas, tuple(found), tuple(notes))


def _devices(module: Module) -> tuple[int, int]:
    header = module.header
    parts = re.search(r"\bnum_partitions=(\d+)", header)
    reps = re.search(r"\breplica_count=(\d+)", header)
    replica_count = int(reps.group(1)) if reps else 1
    if parts:
        num_partitions = int(parts.group(1))
    elif reps:
        num_partitions = 1
    else:
        # unoptimized text does not say: as many partitions as the groups name
        num_partitions = _devices_named(module.instrs)
    if num_partitions < 1 or replica_count < 1 or num_partitions * replica_count > MAX_DEVICES:
        raise CollectivesError(
            f"HLO module {module.name} runs on {num_partitions} partitions x {replica_count} "
            f"replicas: at least 1 and at most {MAX_DEVICES:,} devices are read")
    return num_partitions, replica_count


def _devices_named(instrs: list[Instr]) -> int:
    """1 + the largest device id any collective's groups or pairs name."""
    top = 0
    for ins in instrs:
        if family(ins.opcode) is None and ins.opcode != "async-start":
            continue
        try:
            value = ins.attrs.get("replica_groups")
            if value is not None:
                top = max(top, int(parse_groups(value, 1).max()))
            if "source_target_pairs" in ins.attrs:
                top = max(top, max(max(p) for p in parse_pairs(ins.attrs["source_target_pairs"])))
        except Bad:
            pass                       # reported with its line by the main pass
    return top + 1


@dataclass
class Context:
    """What reading one collective needs to know of its module."""

    module: Module
    partitions: int
    replicas: int
    repeats: dict[str, int | None]

    def record(self, target: Instr, *, name: str, opcode: str, line: int, computation: str,
               results=None, operands=None, base: str | None = None, **extra) -> HloCollective:
        """The :class:`HloCollective` of collective instruction ``target``, anchored at
        ``name``/``line`` in ``computation`` (a fusion's, for a fused collective)."""
        try:
            return _record(self, target, name, opcode, line, computation, results, operands,
                           base, extra)
        except Bad as err:
            if err.located:
                raise CollectivesError(str(err)) from None
            raise CollectivesError(f"line {target.line}: {target.opcode} %{target.name}: "
                                   f"{err}") from None


def _record(ctx: Context, target: Instr, name, opcode, line, computation, results, operands,
            base, extra) -> HloCollective:
    # (shapes and groups are parsed through caches: a module repeats the same few)
    named = base is None
    base = base or family(target.opcode)
    if base in UNSUPPORTED:
        raise Bad(f"not supported: {UNSUPPORTED[base]}")
    if named and target.opcode not in (base, base + "-start"):
        raise Bad(f"unknown collective op {target.opcode!r}; known: {', '.join(KINDS)}, their "
                  f"-start/-done forms and async-start")
    attrs = target.attrs
    if operands is None:
        operands = operand_shapes(target, ctx.module.by_name)
    if results is None:
        shape = shape_of(target.shape)
        if target.opcode.endswith("-start") and base != "all-reduce":
            # (operands, results, contexts...): the results are the second element
            if not isinstance(shape, tuple) or len(shape) < 2:
                raise Bad(f"shape {clip(target.shape)} of an async start is not "
                          f"(operands, results, ...)")
            shape = shape[1]
        results = leaves(shape)
    channel_id, mode = _mode(attrs, base)
    dimension = extra.pop("dimension") if "dimension" in extra else _dimension(attrs, base)
    P, R = ctx.partitions, ctx.replicas
    pairs: tuple[tuple[int, int], ...] = ()
    groups: tuple[tuple[int, ...], ...] = ()
    if base == "collective-permute":
        if "source_target_pairs" not in attrs:
            raise Bad("no source_target_pairs attribute")
        found = parse_pairs(attrs["source_target_pairs"])
        written = P if mode == "partition" else R
        top = max(max(p) for p in found)
        if top >= written:
            raise Bad(f"source_target_pairs name device {top} but the module has {written} "
                      f"{'partitions' if mode == 'partition' else 'replicas'}")
        pairs = tuple(expand_pairs(found, mode, P, R))
    else:
        groups = _groups(attrs.get("replica_groups", "{}"), mode, P, R)
        check_shapes(base, operands, results, dimension, len(groups[0]))
    to_apply, reduction = _reduction(attrs, base, ctx.module)
    fields = {
        "kind": KINDS[base], "name": name, "opcode": opcode, "operands": tuple(operands),
        "results": tuple(results), "dimension": dimension, "replica_groups": groups,
        "source_target_pairs": pairs, "channel_id": channel_id,
        "use_global_device_ids": attrs.get("use_global_device_ids", "false") == "true",
        "to_apply": to_apply, "reduction": reduction, "computation": computation,
        "repeats": ctx.repeats.get(computation, 0), "num_devices": P * R, "line": line,
        "folded": (), "overlaps": (), "note": ""}
    fields.update(extra)
    return make(HloCollective, fields)      # HloCollective(**fields), made by the ten thousand


def _mode(attrs, base) -> tuple[int | None, str]:
    channel = attrs.get("channel_id")
    if channel is not None and not channel.isdigit():
        raise Bad(f"channel_id {clip(channel)!r} is not a whole number")
    channel_id = int(channel) if channel is not None else None
    use_global = attrs.get("use_global_device_ids", "false") == "true"
    if channel_id is None:
        return None, "replica"
    if base not in _HAS_GLOBAL_IDS:
        return channel_id, "partition"
    return channel_id, "global" if use_global else "replica_and_partition"


def _dimension(attrs, base) -> int | None:
    dims_attr = attrs.get("dimensions")
    if dims_attr is not None:
        m = re.fullmatch(r"\{(\d{1,4})\}", dims_attr)
        if not m:
            raise Bad(f"dimensions={clip(dims_attr)} is not one dimension like {{0}}")
        return int(m.group(1))
    if base in ("all-gather", "reduce-scatter"):
        raise Bad("no dimensions={...} attribute")
    return None


_WHAT = {"replica": "replicas (without a channel_id the groups list replicas)",
         "partition": "partitions", "global": "devices",
         "replica_and_partition": "replicas (with use_global_device_ids=false the groups "
                                  "list replicas)"}


@functools.lru_cache(maxsize=1024)
def _groups(value: str, mode: str, P: int, R: int) -> tuple[tuple[int, ...], ...]:
    """The groups of global device ids ``replica_groups=value`` writes (each distinct
    text read once: a module repeats the same few)."""
    written = {"replica": R, "partition": P, "global": R * P, "replica_and_partition": R}[mode]
    raw = parse_groups(value, written)
    if raw.size == 0:
        raise Bad(f"replica_groups {clip(value)!r} list no device")
    if raw.max() >= written:
        raise Bad(f"replica_groups {clip(value)!r} name device {int(raw.max())} "
                  f"but the module has {written} {_WHAT[mode]}")
    flat = raw.ravel()
    if len(np.unique(flat)) != len(flat):
        raise Bad(f"replica_groups {clip(value)!r} list a device twice")
    return tuple(expand_groups(raw, mode, P, R))


def _reduction(attrs, base, module: Module) -> tuple[str | None, str | None]:
    to_apply = attrs.get("to_apply")
    if to_apply is None:
        if base in ("all-reduce", "reduce-scatter"):
            raise Bad("no to_apply=%computation (the reduction)")
        return None, None
    to_apply = to_apply.lstrip("%")
    if to_apply not in module.comps:
        raise Bad(f"to_apply=%{clip(to_apply)} names no computation in the module")
    root = module.roots.get(to_apply)
    return to_apply, (root.opcode if root is not None else None)


def check_shapes(base, operands, results, dimension, n) -> None:
    """The size rules XLA's verifier enforces, so that the bytes can be trusted."""
    def say(arrays):
        return ", ".join(map(str, arrays))
    if base == "all-to-all" and dimension is None:
        if len(operands) != n:
            raise Bad(f"a tuple all-to-all has one operand per device of the group: "
                      f"{len(operands)} operands for groups of {n}")
        return
    if len(operands) != len(results):
        raise Bad(f"{len(operands)} operands ({clip(say(operands))}) but {len(results)} results "
                  f"({clip(say(results))})")
    for a, b in zip(operands, results):
        if a.dtype != b.dtype and not (base in ("all-reduce", "reduce-scatter")
                                       and a.element_size < b.element_size):
            # (the TPU compiler sums a bf16 operand into an f32 result: allowed)
            raise Bad(f"operand {a} and result {b} have different element types")
        if base in ("all-reduce", "all-to-all", "collective-broadcast"):
            if a.dims != b.dims:
                raise Bad(f"result {b} is not the shape of operand {a}")
            if base == "all-to-all" and (dimension >= len(a.dims) or a.dims[dimension] % n):
                raise Bad(f"dimension {dimension} of operand {a} does not split into {n} parts")
            continue
        if dimension >= len(a.dims) or len(a.dims) != len(b.dims):
            raise Bad(f"dimension {dimension} does not fit operand {a} and result {b}")
        big, small = (b, a) if base == "all-gather" else (a, b)
        want = list(small.dims)
        want[dimension] *= n
        if list(big.dims) != want:
            which = "result" if base == "all-gather" else "operand"
            raise Bad(f"{which} {big} is not {n} x {small} along dimension {dimension}")
