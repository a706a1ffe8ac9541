"""``parse_hlo``: every collective of one module, read as its devices run it.

The module is read in one cheap pass (:func:`read_module`: computations, and
each instruction's name, opcode and line); only collectives, the fusions
around them and the loops are parsed in full. :mod:`.fold` turns what the
compilers write into what runs (async chains, TPU collective fusions);
:mod:`.loops` counts the repeats.
"""

from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass

import numpy as np

from ..errors import CollectivesError
from ..bulk import make
from .held import paused_gc
from . import fold
from .ops import UNSUPPORTED, family, operand_shapes, shape_of
from .groups import MAX_DEVICES, expand_groups, expand_pairs, groups as parse_groups, pairs as parse_pairs
from .loops import repeats as count_repeats
from .records import KINDS, HloCollective, HloModule
from .text import (COMPUTATION, HEAD, LINE, Bad, Instr, clip, leaves, scan_budget,
                   short_errors)

# Ops with a use_global_device_ids attribute (the others are cross-partition
# when they have a channel_id and cross-replica when not).
_HAS_GLOBAL_IDS = ("all-gather", "reduce-scatter", "all-reduce")
_COMMENT = re.compile(r"/\*.*?\*/")


def _uncomment(line: str) -> str:
    """``line`` without its ``/* ... */`` comments, in one pass: an opening ``/*``
    after the last ``*/`` closes nothing and is left (a regular expression would look
    for its end from each of them, a line's length every time)."""
    last = line.rfind("*/")
    if last < 0:
        return line
    return _COMMENT.sub("", line[:last + 2]) + line[last + 2:]


#: Opcodes the reader walks (with collectives, async ops and every computation's root);
#: the other instructions are left in the text, found when an operand is looked up.
WALKED = frozenset({"fusion", "while", "call", "conditional", "get-tuple-element", "tuple",
                    "parameter", "convolution", "dot", "custom-call"})
_COLLECTIVE_PREFIXES = ("all-", "reduce-scatter", "collective-", "ragged-", "async-")

#: The most instructions a module may hold (a dump of a large model holds a few
#: hundred thousand; 2,000,000 are read in about a second).
MAX_INSTRUCTIONS = 2_000_000
#: The most lines read in full: instructions the reader walks (:data:`WALKED`,
#: collectives, roots), computation headers, brackets and lines it cannot skip.
MAX_READ = 150_000
#: The most collectives a module may run, counted as they run (an async chain once).
MAX_COLLECTIVES = 20_000
#: The most ``/* comments */`` a module may hold (XLA writes one every five elements
#: of a long tuple: ``/*index=5*/``).
MAX_COMMENTS = 1_000_000
#: The most loops (``while``) a module may hold (a model's has a few dozen; each has its
#: trip count read from the loop's shape).
MAX_LOOPS = 10_000
#: The most lines naming ``HloModule`` looked at for the one that starts with it.
_HEADER_LINES = 10_000

# The cheap pass's one scan (in C): from a line's first "=", "R", bracket or parenthesis
# to its end (every other line is jumped over). An instruction whose shape is one array
# (f32[8]{0}) and whose opcode the reader does not walk is told by group 2 and left
# unread; group 1 is a walked opcode; anything else (no group) is read in full.
_ARRAY_SHAPE = r"[a-z][a-z0-9]*\[[^\]\s]*\](?:\{[^}\s]*\})?"
_WALKED_OPCODE = (r"fusion|while|call|conditional|get-tuple-element|tuple|parameter"
                  r"|convolution|dot|custom-call"
                  r"|(?:all-|reduce-scatter|collective-|ragged-|async-)[a-z0-9\-]*")
_SCAN = re.compile(
    rf"=[ \t]*+(?:{_ARRAY_SHAPE}[ \t]++(?:({_WALKED_OPCODE})|([a-z][a-z0-9\-]*))\()?"
    r"[^\n]*|R[^\n]*|\{[^\n]*|\}[^\n]*|\([^\n]*")
# The name before "=" on an instruction's line (ROOT lines are read in full)
_NAME_ONLY = re.compile(r"[ \t]*%?([A-Za-z_][\w.\-]*)[ \t]*")
# The line breaks str.splitlines knows besides "\n" and "\r"
_ODD_BREAKS = "\x0b\x0c\x1c\x1d\x1e"
_WIDE_BREAKS = "\x85\u2028\u2029"


#: What the searches for instructions left in the text may scan, in all: this many times
#: the text's length and this many characters more (past it, the text is indexed once).
_SEARCH_BUDGET, _SEARCH_SLACK = 4, 2**20


class Names(dict):
    """Every instruction by name: those walked are :class:`Instr` already; the others
    are found in the text when first looked up, by a search (in C) back from the
    instruction that names them (``near``), where HLO defines its operands.

    The searches are budgeted (:data:`_SEARCH_BUDGET`): past four times the text's
    length scanned, the text's instructions are indexed once and looked up there."""

    def __init__(self, walked: dict, other: dict, text: str, spans: list):
        super().__init__(walked)
        self._other = other                    # read in full, not walked: (opcode, ...)
        self._text = text
        self._spans = spans                    # [start, end, computation], in order
        self._starts = [start for start, _, _ in spans]
        self._budget = _SEARCH_BUDGET * len(text) + _SEARCH_SLACK
        self._index: dict[str, int] | None = None
        self._missing: set[str] = set()
        self._marks: list[int] | None = None

    def get(self, name, default=None):
        found = self.find(name)
        return default if found is None else found

    def find(self, name, near: Instr | None = None) -> Instr | None:
        """The instruction ``name``, looked for back from ``near`` (None: the end)."""
        if dict.__contains__(self, name):
            return dict.__getitem__(self, name)
        if name in self._other:
            opcode, line, comp, rest, at = self._other.pop(name)
            ins = Instr(name, opcode, line, comp, False, rest, at)
        elif not isinstance(name, str) or not name or name in self._missing:
            return None
        else:
            before = len(self._text) if near is None or near.at < 0 else near.at
            ins = self._find(name, before)
            if ins is None:
                self._missing.add(name)
                return None
        dict.__setitem__(self, name, ins)
        return ins

    def __contains__(self, name) -> bool:
        return self.get(name) is not None

    def __getitem__(self, name):
        ins = self.get(name)
        if ins is None:
            raise KeyError(name)
        return ins

    # -- finding an instruction the cheap pass left in the text -------------------
    def _find(self, name: str, before: int) -> Instr | None:
        text = self._text
        if self._index is None and self._budget > 0:
            key = name + " = "
            end = before                                   # back from the user, then on
            while self._budget > 0:
                h = text.rfind(key, 0, end)
                self._budget -= end - (h if h >= 0 else 0)
                if h < 0:
                    break
                ins = self._at(name, h)
                if ins is not None:
                    return ins
                end = h
            start = before
            while self._budget > 0:
                h = text.find(key, start)
                self._budget -= (h if h >= 0 else len(text)) - start
                if h < 0:
                    break
                ins = self._at(name, h)
                if ins is not None:
                    return ins
                start = h + 1
            if self._budget > 0:                       # written without spaces: name=
                self._budget -= len(text)
                for m in re.finditer(re.escape(name) + r"[ \t]*=", text):
                    self._budget -= 4096               # (a line read for each)
                    ins = self._at(name, m.start())
                    if ins is not None or self._budget <= 0:
                        return ins
                return None
        if self._index is None:
            self._index = self._build_index()
        at = self._index.get(name)
        return None if at is None else self._at(name, at, line_start=True)

    def _at(self, name: str, h: int, line_start: bool = False) -> Instr | None:
        """The instruction ``name`` defined on the line through offset ``h``, if so."""
        text = self._text
        start = h if line_start else text.rfind("\n", 0, h) + 1
        end = text.find("\n", h)
        raw = text[start:len(text) if end < 0 else end]
        if "/*" in raw:
            raw = _uncomment(raw)
        m = LINE.match(raw.strip())
        if not m or m.group(2) != name:
            return None
        i = bisect.bisect_right(self._starts, start) - 1
        if i < 0 or start >= self._spans[i][1]:
            return None                        # not inside a computation: not read
        return Instr(name, m.group(4), self._line(start), self._spans[i][2],
                     bool(m.group(1)), m.group(3), start)

    def _line(self, offset: int) -> int:
        """The 1-based line at ``offset`` (newlines counted once, per 4 KiB, in C)."""
        text = self._text
        if self._marks is None:
            marks = [0]
            for k in range(0, len(text), 2**12):
                marks.append(marks[-1] + text.count("\n", k, k + 2**12))
            self._marks = marks
        k = offset >> 12
        return self._marks[k] + text.count("\n", k << 12, offset) + 1

    def _build_index(self) -> dict[str, int]:
        """Line start of every instruction the cheap pass left unread (read once)."""
        text, out = self._text, {}
        for m in _SCAN.finditer(text):
            if m.lastindex == 2:
                start = text.rfind("\n", 0, m.start()) + 1
                head = text[start:m.start()].split()
                if head:
                    out[head[-1].lstrip("%")] = start
        return out


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


def _one_break(text: str) -> str:
    """``text`` with every line break ``str.splitlines`` knows written as ``"\\n"`` (a
    CRLF file, a form feed), so that lines are numbered as they always were; each check
    is a scan in C, and the text is copied only when it holds one."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    odd = _ODD_BREAKS if text.isascii() else _ODD_BREAKS + _WIDE_BREAKS
    if any(ch in text for ch in odd):
        text = text.translate({ord(ch): "\n" for ch in odd})
    return text


def _header(text: str) -> tuple[int, int]:
    """(offset, 0-based line) of the text's one ``HloModule`` line. Only the lines that
    hold ``"HloModule "`` are looked at (a scan in C finds them), at most
    :data:`_HEADER_LINES` of them."""
    found: list[int] = []
    pos = looked = 0
    while looked < _HEADER_LINES:
        i = text.find("HloModule ", pos)
        if i < 0:
            break
        nl = text.rfind("\n", pos, i)
        start = pos if nl < 0 else nl + 1
        if not text[start:i].strip():
            found.append(start)
        looked += 1
        end = text.find("\n", i)
        if end < 0:
            break
        pos = end + 1
    if not found:
        first = re.search(r"\S", text)
        begin = "" if first is None else " ".join(
            text[first.start():first.start() + 200].split())
        if looked >= _HEADER_LINES:
            raise CollectivesError(f"not HLO text: {looked:,} lines name 'HloModule' "
                                   f"and none starts with it")
        raise CollectivesError(
            "not HLO text: the text is empty" if not begin else
            f"not HLO text: no 'HloModule' line (the text starts {clip(begin, 40)!r})")
    if len(found) > 1:
        lines = [text.count("\n", 0, at) + 1 for at in found[:8]]
        where = ", ".join(map(str, lines)) + (", ..." if len(found) > 8 else "")
        many = f"{len(found)}" if looked < _HEADER_LINES else f"at least {len(found)}"
        raise CollectivesError(f"the text holds {many} HLO modules (lines {where}); "
                               f"pass one module at a time")
    return found[0], text.count("\n", 0, found[0])


def read_module(text: str, *, max_collectives: int | None = MAX_COLLECTIVES) -> Module:
    """Computations and instructions of one module's text (the cheap pass).

    One scan in C (:data:`_SCAN`) jumps over every line without ``=``, ``{``, ``}``,
    ``(`` or ``R`` (blank lines, stray words) and tells the instructions the reader
    does not walk (an ``add``, a ``copy``), which are left in the text until an
    operand names them: nothing is made of either. The module is refused, in one
    line and as the scan reaches it, past :data:`MAX_INSTRUCTIONS` instructions,
    :data:`MAX_READ` lines read in full, :data:`MAX_LOOPS` loops,
    :data:`MAX_COMMENTS` comments or four collective instructions (every copy a
    fusion holds counted) per collective ``max_collectives`` allows."""
    most = None if max_collectives is None else 4 * max_collectives
    text = _one_break(text)
    at, lineno = _header(text)
    end = text.find("\n", at)
    end = len(text) if end < 0 else end
    header = text[at:end].strip()
    name = header.split()[1].rstrip(",") if len(header.split()) > 1 else "?"
    comps: dict[str, list[Instr]] = {}
    spans: list[list] = []                 # [start, end, name] of each computation
    instrs: list[Instr] = []
    walked: dict[str, Instr] = {}
    other: dict[str, tuple] = {}
    entry = current = None
    body: list[Instr] = []                 # the current computation's
    pos, lineno = end + 1, lineno + 1      # the line that starts at pos, 0-based
    seen = read = comments = 0
    counts = [0, 0]                        # collective instructions, loops
    for m in _SCAN.finditer(text, end):
        seen += 1
        if seen > MAX_INSTRUCTIONS:
            raise CollectivesError(_too_many(
                name, f"{MAX_INSTRUCTIONS:,} instructions, the most read here"))
        if m.lastindex == 2 and text[m.end() - 1] not in "{ \t":
            continue                       # an instruction the reader does not walk
        read += 1
        if read > MAX_READ:
            raise CollectivesError(_too_many(
                name, f"{MAX_READ:,} lines read in full (instructions the reader "
                      f"walks, computations, brackets), the most read here"))
        nl = text.rfind("\n", pos, m.start())
        if nl < 0:
            start = pos
        else:
            lineno += text.count("\n", pos, nl) + 1
            start = nl + 1
        pos = m.end() + 1
        lineno += 1                  # (the next line's 0-based; this one's 1-based)
        if m.lastindex == 1 and current is not None:
            # a walked instruction of one array, as _SCAN read it: what LINE would find
            h = _NAME_ONLY.fullmatch(text, start, m.start())
            if h is not None and text.find("/*", start, m.end()) < 0:
                opcode = m.group(1)
                if opcode == "while" or family(opcode) is not None:
                    counts[opcode == "while"] += not opcode.endswith("-done")
                    _within(name, counts, most, max_collectives)
                ins = Instr(h.group(1), opcode, lineno, current, False,
                            text[m.start() + 1:m.end()].strip(), start)
                body.append(ins)
                instrs.append(ins)
                walked[ins.name] = ins
                continue
        raw = text[start:m.end()]
        if "/*" in raw:
            comments += raw.count("/*")
            if comments > MAX_COMMENTS:
                raise CollectivesError(_too_many(name,
                                                 f"{MAX_COMMENTS:,} /* comments */"))
            raw = _uncomment(raw)
        s = raw.strip()
        if not s or s.startswith("//"):
            continue
        if current is None:
            # (a computation's line ends with "{": the expression, which backtracks
            # over a long line, is tried on no other)
            c = COMPUTATION.match(s) if s[-1] == "{" else None
            if c and not HEAD.match(s):
                current = c.group(2)
                comps[current] = body = []
                spans.append([m.end(), len(text), current])
                if c.group(1):
                    entry = current
            continue
        if s == "}":
            current = None
            spans[-1][1] = start
            continue
        i = LINE.match(s)
        if not i:
            _not_an_instruction(s, lineno)
            continue
        opcode = i.group(4)
        if i.group(1) or opcode in WALKED or opcode.startswith(_COLLECTIVE_PREFIXES):
            if opcode == "while" or family(opcode) is not None:
                counts[opcode == "while"] += not opcode.endswith("-done")
                _within(name, counts, most, max_collectives)
            ins = Instr(i.group(2), opcode, lineno, current, bool(i.group(1)),
                        i.group(3), start)
            body.append(ins)
            instrs.append(ins)
            walked[ins.name] = ins
        else:
            other[i.group(2)] = (opcode, lineno, current, i.group(3), start)
    if entry is None:
        raise CollectivesError(f"HLO module {clip(name, 40)} has no ENTRY computation")
    return Module(name, header, comps, entry, instrs, Names(walked, other, text, spans))


def _within(name: str, counts: list[int], most: int | None, max_collectives) -> None:
    """Refuse the module once its collective instructions or its loops are too many."""
    if most is not None and counts[0] > most:
        raise CollectivesError(_too_many(
            name, f"{most:,} collective instructions (async parts and fused "
                  f"copies counted), four for each of the {max_collectives:,} "
                  f"collectives read at most"))
    if counts[1] > MAX_LOOPS:
        raise CollectivesError(_too_many(name, f"{MAX_LOOPS:,} loops (while)"))


def _too_many(name: str, what: str) -> str:
    return f"HLO module {clip(name, 40)} holds more than {what}: pass a smaller module"


def _not_an_instruction(s: str, line: int) -> None:
    opcode = re.search(r"\s([a-z][a-z0-9\-]*)\(", s)
    if opcode and family(opcode.group(1)) is not None:
        raise CollectivesError(f"line {line}: malformed {opcode.group(1)}: not an instruction "
                               f"({clip(s)!r})")


# ---------------------------------------------------------------------------
# parse_hlo
# ---------------------------------------------------------------------------

def parse_hlo(text, *, max_collectives: int | None = MAX_COLLECTIVES) -> HloModule:
    """Every collective in one HLO module's text, as the devices run it, in the
    order the text lists them.

    Takes the text of ``jax.jit(f).lower(*args).compile().as_text()``, of
    ``.lower(*args).as_text(dialect="hlo")`` or of an XLA dump file, from any
    backend. An async start/update/done chain is one collective, named after
    its start; a TPU reduce-scatter fusion (an all-reduce sliced inside a
    ``kCustom`` fusion) is one reduce-scatter; a loop's body counts its trips.
    Raises :class:`~collectives_lib.errors.CollectivesError` with the line and
    the instruction when the text is not HLO or a collective in it is malformed, and
    in one line when the module is larger than the reader reads: more than
    ``max_collectives`` collectives (:data:`MAX_COLLECTIVES`; None: no limit, but
    :data:`MAX_INSTRUCTIONS` and :data:`MAX_READ` still hold). Every message is at
    most :data:`~.text.MAX_MESSAGE` characters (long group lists are cut short).

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
    if max_collectives is not None and (isinstance(max_collectives, bool) or
                                        not isinstance(max_collectives, int)
                                        or max_collectives < 0):
        raise CollectivesError(f"max_collectives must be a whole number >= 0 or None, "
                               f"got {clip(repr(max_collectives))}")
    # many objects, in no cycle; messages of one line; brackets walked within a budget
    with paused_gc(), short_errors(), scan_budget():
        return _parse(text, max_collectives)


def _parse(text: str, max_collectives: int | None) -> HloModule:
    module = read_module(text, max_collectives=max_collectives)
    partitions, replicas = _devices(module)
    try:
        rep = count_repeats(module.comps, module.entry, module.by_name)
    except Bad as err:
        raise CollectivesError(str(err) if err.located else f"malformed text: {err}") from None
    ctx = Context(module, partitions, replicas, rep, max_collectives)
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
    # (a count of 20 digits or more stands for "too many": Python reads no 4,300)
    replica_count = min(int(reps.group(1)[:20]), 10**19) if reps else 1
    if parts:
        num_partitions = min(int(parts.group(1)[:20]), 10**19)
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
    max_collectives: int | None = MAX_COLLECTIVES

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
    if channel is not None and (not channel.isdigit() or len(channel) > 19):
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
    if value.lstrip().startswith("mesh[") and raw.size != written:
        # a mesh names every device once: one of another size is not this module's
        raise Bad(f"replica_groups {clip(value)!r} is a mesh of {raw.size:,} devices "
                  f"but the module has {written:,} {_WHAT[mode]}")
    if raw.max() >= written:
        raise Bad(f"replica_groups {clip(value)!r} name device {int(raw.max())} "
                  f"but the module has {written} {_WHAT[mode]}")
    flat = raw.ravel()
    if flat.min() < 0 or np.bincount(flat).max() > 1:
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
