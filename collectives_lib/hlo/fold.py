"""What runs: the compilers' spellings of one collective folded into one record.

* **Async pairs**: ``all-gather-start`` ... ``all-gather-done`` (and the
  ``collective-permute``, ``all-reduce``, ``all-to-all`` forms), and
  ``async-start``/``async-update``/``async-done`` around a wrapped collective,
  are one collective, named after the start.
* **TPU async collective fusions**: the TPU compiler splits a collective into a
  chain of ``kCustom``/``kOutput`` fusions, each holding a copy of the same
  collective instruction: a start (its fused root is
  ``custom-call(..., custom_call_target="AsyncCollectiveStart")``), updates that
  fuse a piece of the collective with a matmul (the overlap), and a done
  (``AsyncCollectiveDone``). They are linked through the tuple values they hand
  on (``get-tuple-element``), and read as one collective named after the start.
* **TPU reduce-scatter fusions**: a ``kCustom`` fusion whose computation
  all-reduces a (padded) buffer and keeps each device's ``dynamic-slice`` of it
  runs as a reduce-scatter (``SingleInputAllReduceScatterFusion``): one
  reduce-scatter of the padded buffer to the fusion's result.
* Any other fusion that holds a collective is read as that collective, named,
  with a note on the record and on the module: never dropped silently.

``overlaps`` lists what the module schedules while each collective is in
flight: the matmul fusions between an async start and its done, and the
matmuls fused into a TPU chain's updates.
"""

from __future__ import annotations

import re

from ..errors import CollectivesError
from .ops import family, operand_shapes, shape_of
from .records import HloCollective
from .text import Instr, clip, leaves

_TARGET = re.compile(r'custom_call_target="([^"]+)"')
_COMPUTE = ("convolution", "dot")


def _calls(ins: Instr) -> str:
    return ins.calls()


class _Finder:
    """Walks each computation that is not fused and collects its collectives."""

    def __init__(self, module, ctx):
        self.m, self.ctx = module, ctx
        self.fused: set[str] = set()
        self.wrapped: set[str] = set()
        self.inner: dict[str, list[Instr]] = {}
        self._matmul: dict[str, bool] = {}
        self.family = family
        for ins in module.instrs:
            if ins.opcode == "fusion":
                self.fused.add(_calls(ins))
            elif ins.opcode == "async-start":
                root = module.roots.get(_calls(ins))
                if root is not None and family(root.opcode) is not None:
                    self.wrapped.add(_calls(ins))
            if family(ins.opcode) is not None and not ins.opcode.endswith("-done"):
                self.inner.setdefault(ins.computation, []).append(ins)
        self.out: list[HloCollective] = []
        self.beyond = 0                     # collectives past the most read: counted
        self.notes: list[str] = []

    # -- helpers ---------------------------------------------------------------
    def matmul(self, comp: str, depth: int = 0) -> bool:
        """Whether a computation (or a fusion inside it) multiplies matrices."""
        if comp in self._matmul:
            return self._matmul[comp]
        self._matmul[comp] = False
        found = False
        for ins in self.m.comps.get(comp, []):
            if ins.opcode in _COMPUTE or (ins.opcode == "fusion" and depth < 32
                                          and self.matmul(_calls(ins), depth + 1)):
                found = True
                break
        self._matmul[comp] = found
        return found

    def matmuls_in(self, comp: str) -> list[str]:
        return [i.name for i in self.m.comps.get(comp, []) if i.opcode in _COMPUTE]

    def role(self, fusion: Instr, callee: str, linked: bool) -> str:
        body = self.m.comps.get(callee, [])
        root = self.m.roots.get(callee)
        if root is not None and root.opcode == "custom-call":
            target = _TARGET.search(root.rest)
            if target and target.group(1) == "AsyncCollectiveStart":
                return "start"
            if target and target.group(1) == "AsyncCollectiveDone":
                return "done"
        if linked:
            return "update"
        inner = self.inner.get(callee, [])
        if (len(inner) == 1 and inner[0].opcode == "all-reduce" and root is not None
                and root.opcode == "dynamic-slice" and root.operand_names()[:1] == [inner[0].name]
                and len(body) > 1):
            return "reduce_scatter"
        return "unknown"

    # -- the walk --------------------------------------------------------------
    def run(self):
        for comp, body in self.m.comps.items():
            if comp in self.fused or comp in self.wrapped:
                continue
            self.walk(comp, body)
        if self.beyond:
            raise CollectivesError(
                f"HLO module {clip(self.m.name, 40)} runs "
                f"{len(self.out) + self.beyond:,} collectives; at most "
                f"{self.ctx.max_collectives:,} are read: pass a smaller module")
        return self.out, self.notes

    def walk(self, comp: str, body: list[Instr]) -> None:
        chain_of: dict[str, dict] = {}      # value name -> its open record's fields
        open_: dict[str, dict] = {}         # start name -> fields, until its done
        for ins in body:
            op = ins.opcode
            if op == "get-tuple-element":
                src = ins.operand_names()[:1]
                if src and src[0] in chain_of:
                    chain_of[ins.name] = chain_of[src[0]]
                continue
            if op == "fusion":
                self.fusion(ins, comp, chain_of, open_)
            elif op in ("async-start", "async-update", "async-done") or self.family(op):
                self.plain(ins, comp, chain_of, open_)
            elif op in _COMPUTE:
                for rec in open_.values():
                    rec["overlaps"].append(ins.name)
        for rec in open_.values():            # a start whose done the text lacks
            self.finish(rec)

    def fusion(self, ins: Instr, comp: str, chain_of, open_) -> None:
        callee = _calls(ins)
        inner = self.inner.get(callee)
        if not inner:
            if self.matmul(callee):
                for rec in open_.values():
                    rec["overlaps"].append(ins.name)
            return
        linked = next((chain_of[n] for n in ins.operand_names() if n in chain_of), None)
        role = self.role(ins, callee, linked is not None)
        if role == "start":
            rec = self.new(inner[0], ins, comp, folded=[inner[0].name],
                           note="a TPU async collective fusion chain (start, updates, done)")
            open_[ins.name] = chain_of[ins.name] = rec
        elif role in ("update", "done") and linked is not None:
            linked["folded"].extend([ins.name] + [i.name for i in inner])
            linked["overlaps"].extend(self.matmuls_in(callee))
            chain_of[ins.name] = linked
            if role == "done":
                self.finish(linked)
                open_.pop(linked["name"], None)
        elif role == "reduce_scatter":
            self.reduce_scatter(ins, inner[0], comp)
        else:
            for c in inner:
                what = (f"inside fusion %{ins.name} (calls %{callee}), "
                        + ("an async collective part with no start before it"
                           if role in ("update", "done") else "a fusion the reader does not know")
                        + f": read as its {c.opcode} alone")
                self.notes.append(f"line {ins.line}: {c.opcode} %{c.name} {what}")
                self.finish(self.new(c, ins, comp, name=c.name, note=what))

    def reduce_scatter(self, ins: Instr, ar: Instr, comp: str) -> None:
        results = leaves(shape_of(ins.shape))
        operands = operand_shapes(ar, self.m.by_name)
        dims = [d for d, (a, b) in enumerate(zip(operands[0].dims, results[0].dims)) if a != b]
        dimension = dims[0] if len(dims) == 1 else None
        if len(operands) != 1 or len(results) != 1 or dimension is None:
            what = (f"inside fusion %{ins.name}: an all-reduce sliced in a way the reader does not "
                    f"know (from {operands[0]} to {results[0]}): read as the all-reduce alone")
            self.notes.append(f"line {ins.line}: all-reduce %{ar.name} {what}")
            self.finish(self.new(ar, ins, comp, name=ar.name, note=what))
            return
        note = (f"a TPU reduce-scatter fusion: all-reduce %{ar.name} of {operands[0]} "
                f"sliced to each device's {results[0]}")
        self.finish(self.new(ar, ins, comp, base="reduce-scatter", results=results,
                             operands=operands, dimension=dimension, folded=[ar.name],
                             note=note))

    def plain(self, ins: Instr, comp: str, chain_of, open_) -> None:
        op = ins.opcode
        if op.endswith("-done") or op == "async-update":
            start = ins.operand_names()[:1]
            rec = open_.get(start[0]) if start else None
            if rec is not None:
                rec["folded"].append(ins.name)
                if op != "async-update":
                    self.finish(open_.pop(start[0]))
            return
        target = ins
        if op == "async-start":
            target = self.m.roots.get(_calls(ins))
            if target is None or self.family(target.opcode) is None:
                return
        rec = self.new(target, ins, comp, opcode=op)
        if op.endswith("-start"):
            open_[ins.name] = rec
        else:
            self.finish(rec)

    def new(self, target: Instr, anchor: Instr, comp: str, **fields) -> dict:
        fields.setdefault("name", anchor.name)
        fields.setdefault("opcode", target.opcode if anchor.opcode != "async-start" else "async-start")
        fields.setdefault("folded", [])
        return dict(target=target, line=anchor.line, computation=comp, overlaps=[], **fields)

    def finish(self, rec: dict) -> None:
        if rec.get("done"):
            return
        rec["done"] = True
        limit = self.ctx.max_collectives
        if limit is not None and len(self.out) >= limit:
            self.beyond += 1                # (the records are the walk's costly part)
            return
        fields = {k: v for k, v in rec.items() if k not in ("target", "done", "overlaps", "folded")}
        self.out.append(self.ctx.record(rec["target"], folded=tuple(rec["folded"]),
                                        overlaps=tuple(dict.fromkeys(rec["overlaps"])), **fields))


def collectives(module, ctx) -> tuple[list[HloCollective], list[str]]:
    """Every collective of ``module`` as it runs, and the notes on what was inferred."""
    return _Finder(module, ctx).run()
