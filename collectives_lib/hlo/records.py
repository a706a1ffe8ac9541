"""What the reader returns: :class:`HloCollective` and :class:`HloModule`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from ..collective import Collective
from .text import Array


class _once:
    """A property computed on first use and kept in the instance's ``__dict__`` (what
    ``functools.cached_property`` does, without the lock it takes on Python 3.11 at
    every first use: tens of thousands of collectives each ask for ``nbytes``)."""

    def __init__(self, fn):
        self.fn, self.name, self.__doc__ = fn, fn.__name__, fn.__doc__

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        value = obj.__dict__[self.name] = self.fn(obj)
        return value


#: HLO opcode of each collective -> the library's name for it.
KINDS: dict[str, str] = {
    "all-gather": "all_gather",
    "reduce-scatter": "reduce_scatter",
    "all-reduce": "all_reduce",
    "all-to-all": "all_to_all",
    "collective-permute": "collective_permute",
    "collective-broadcast": "broadcast",
}


_COLLECTIVES = {c.value: c for c in Collective}


@dataclass(frozen=True)
class HloCollective:
    """One collective in an HLO module, as its devices run it.

    ``kind`` is the library's name (``all_gather``, ``reduce_scatter``,
    ``all_reduce``, ``all_to_all``, ``collective_permute``, ``broadcast``);
    ``name`` and ``opcode`` are the instruction's as written (an async pair or
    chain is named after its start; a TPU reduce-scatter fusion after the
    fusion). ``operands`` and ``results`` are what one device holds before and
    after. ``dimension`` is the gather, scatter or split dimension (None for
    all-reduce, permutes and tuple all-to-alls). ``replica_groups`` are the
    groups of global device ids (replica * num_partitions + partition) that run
    it together, expanded from whatever form the text uses; permutes have
    ``source_target_pairs`` instead. ``repeats`` is how many times one run of
    the program executes it (the trip counts of the loops around it; None when
    a loop's count cannot be read). ``line`` is the 1-based line of the
    instruction in the text.

    ``folded`` names the instructions the reader counted as this one collective
    (the updates and done of an async chain, the all-reduce inside a TPU
    reduce-scatter fusion); ``overlaps`` names the computations the module
    schedules while it is in flight (between its start and its done, or fused
    into its chain); ``note`` says what the reader inferred.
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
    folded: tuple[str, ...] = ()
    overlaps: tuple[str, ...] = ()
    note: str = ""

    @property
    def is_async(self) -> bool:
        return self.opcode.endswith("-start") or bool(self.folded and self.kind != "reduce_scatter")

    @_once
    def dtype(self) -> str:
        """The operands' element type (``"f32+bf16"`` when a tuple mixes types)."""
        types = list(dict.fromkeys(a.dtype for a in self.operands))
        return "+".join(types)

    @property
    def element_size(self) -> float:
        """Bytes per element (the smallest, when a tuple mixes types)."""
        return min(a.element_size for a in self.operands)

    @_once
    def operand_bytes(self) -> int:
        """Bytes of all operands on one device."""
        return sum(a.nbytes for a in self.operands)

    @_once
    def result_bytes(self) -> int:
        """Bytes of all results on one device."""
        return sum(a.nbytes for a in self.results)

    @_once
    def nbytes(self) -> int:
        """The size nccl-tests would report for this collective, per device.

        all_reduce: the buffer; all_gather: the gathered output; reduce_scatter:
        the input (unscattered) buffer; all_to_all: one device's buffer;
        collective_permute and broadcast: the buffer sent. A reduction that sums a
        narrow operand into a wider result (bf16 into f32) counts the wider type.
        """
        coll = self.collective
        if coll is not None and coll.starts == "owner" and coll.ends == "everyone":
            return self.result_bytes             # every device ends with the whole array
        if coll is not None and coll.reduces and self.widens:
            # a bf16 operand summed into an f32 result: the partial sums travel as f32
            return sum(a.num_elements * r.nbytes // max(1, r.num_elements)
                       for a, r in zip(self.operands, self.results))
        return self.operand_bytes

    @property
    def collective(self) -> Collective | None:
        """The library's :class:`~collectives_lib.collective.Collective` for this kind, or
        None (a collective permute is not one)."""
        return _COLLECTIVES.get(self.kind)

    @property
    def widens(self) -> bool:
        """A reduction whose result type is wider than its operand's (TPU: bf16 into f32)."""
        return any(a.element_size < r.element_size for a, r in zip(self.operands, self.results))

    @property
    def group_size(self) -> int | None:
        """Devices per group (None for a permute, which has pairs)."""
        return len(self.replica_groups[0]) if self.replica_groups else None

    @property
    def num_groups(self) -> int | None:
        return len(self.replica_groups) if self.replica_groups else None

    def groups_text(self) -> str:
        """``"4 x 2"`` (groups x size) or ``"8 pairs"``."""
        if self.kind == "collective_permute":
            return f"{len(self.source_target_pairs)} pairs"
        return f"{self.num_groups} x {self.group_size}"

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

    Iterating, ``len`` and indexing go over :attr:`collectives`. ``notes`` are
    what the reader could not read as a known pattern (a collective fused
    into an unknown fusion, named), never dropped silently.
    """

    name: str
    num_partitions: int
    replica_count: int
    collectives: tuple[HloCollective, ...]
    notes: tuple[str, ...] = ()

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
        """How many collectives of each kind the module runs (each read once)."""
        out: dict[str, int] = {}
        for c in self.collectives:
            out[c.kind] = out.get(c.kind, 0) + 1
        return out

    @property
    def bytes_per_step(self) -> int | None:
        """nccl-tests' sizes of every collective times its repeats: what one run
        moves by that measure (None when a loop's trip count is unknown)."""
        if any(c.repeats is None for c in self.collectives):
            return None
        return sum(c.nbytes * c.repeats for c in self.collectives)

    def __str__(self) -> str:
        n = len(self.collectives)
        head = (f"HloModule {self.name}: {n} collective{'s' if n != 1 else ''} on "
                f"{self.num_devices} device{'s' if self.num_devices != 1 else ''}")
        if not n:
            return "\n".join([head] + list(self.notes))
        with_repeats = any(c.repeats != 1 for c in self.collectives)
        cols = ["name", "kind", "operands", "result", "groups", "nbytes"]
        if with_repeats:
            cols.append("repeats")
        rows = [cols]
        for c in self.collectives:
            row = [c.name, c.kind, ", ".join(map(str, c.operands)),
                   ", ".join(map(str, c.results)), c.groups_text(), str(c.nbytes)]
            if with_repeats:
                row.append("?" if c.repeats is None else str(c.repeats))
            rows.append(row)
        widths = [max(len(r[i]) for r in rows) for i in range(len(cols))]
        lines = ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in rows]
        return "\n".join([head] + lines + list(self.notes))
