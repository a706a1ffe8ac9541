"""Collectives as values: what each rank starts with and what it must end with.

A :class:`Collective` is one of eight operations. It knows its names (the
library's, nccl-tests' and torch.distributed's spellings all resolve to it),
nccl-tests' bus-bandwidth factor, how a size splits into pieces, and its
definition in two lines: which ranks hold a slot of the array before step 1
(:attr:`~Collective.starts`) and which ranks must hold it, with what value,
at the end (:attr:`~Collective.ends`), and what follows from them: whether it
:attr:`~Collective.reduces`, is :attr:`~Collective.rooted`, is
:attr:`~Collective.personalised` (every slot goes to one rank: NCCL runs it as
sends), :attr:`~Collective.splits` the array per rank. Replay, the MPI runner,
the simulator, the bounds, NCCL's model, the log reader, the command line and the
drawings ask it rather than branching on names.

The slot grid a schedule works on (see :mod:`collectives_lib.schedule`) is laid
out by :attr:`~Collective.layout`:

* ``"blocks"``: the leading axes index the rank that owns a block (all-gather,
  reduce-scatter, all-reduce, gather);
* ``"pairs"``: ``(origin..., destination..., part)`` (all-to-all);
* ``"chunks"``: pipeline chunks of one array (broadcast, reduce, send).

>>> Collective("allreduce") is Collective.ALL_REDUCE
True
>>> Collective.ALL_REDUCE.busbw_factor(8)
1.75
>>> Collective.ALL_GATHER.starts, Collective.ALL_GATHER.ends
('owner', 'everyone')

Introduced in the chapter *A first look*.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

from .errors import CollectivesError


@dataclass(frozen=True)
class _Spec:
    title: str
    aliases: tuple[str, ...]
    layout: str          # "blocks", "pairs" or "chunks"
    starts: str          # "owner", "everyone" (each rank contributes to every slot) or "root"
    ends: str            # "everyone", "owner", "destination", "root" or "peer"
    busbw: str           # nccl-tests' factor: "2(n-1)/n", "(n-1)/n" or "1"
    dual: str | None
    description: str


_SPECS = {
    "all_gather": _Spec("all-gather", ("allgather", "all_gather_into_tensor"), "blocks",
                        "owner", "everyone", "(n-1)/n", "reduce_scatter",
                        "every rank holds one block; every rank ends with all of them"),
    "reduce_scatter": _Spec("reduce-scatter", ("reducescatter", "reduce_scatter_tensor",
                                               "psum_scatter"), "blocks",
                            "everyone", "owner", "(n-1)/n", "all_gather",
                            "every rank holds a whole array; each ends with one block of the sum"),
    "all_reduce": _Spec("all-reduce", ("allreduce", "psum"), "blocks",
                        "everyone", "everyone", "2(n-1)/n", None,
                        "every rank holds a whole array; every rank ends with the sum"),
    "all_to_all": _Spec("all-to-all", ("alltoall", "all_to_all_single"), "pairs",
                        "owner", "destination", "(n-1)/n", None,
                        "every rank holds one block for each rank; each ends with the blocks "
                        "addressed to it"),
    "broadcast": _Spec("broadcast", ("bcast",), "chunks", "root", "everyone", "1", "reduce",
                       "the root holds an array; every rank ends with it"),
    "reduce": _Spec("reduce", (), "chunks", "everyone", "root", "1", "broadcast",
                    "every rank holds an array; the root ends with the sum"),
    "gather": _Spec("gather", (), "blocks", "owner", "root", "(n-1)/n", None,
                    "every rank holds one block; the root ends with all of them"),
    "send": _Spec("send", ("p2p", "sendrecv", "send_recv"), "chunks", "root", "peer", "1", None,
                  "one rank sends an array to another"),
}


class Collective(str, enum.Enum):
    """One collective operation; equal to its name as a string (``Collective.ALL_GATHER == "all_gather"``).

    ``Collective(name)`` accepts the library's names and common spellings
    (``"allreduce"``, ``"all-reduce"``, ``"psum"``, ``"all_to_all_single"``) and
    raises :class:`CollectivesError` for anything else, listing what is allowed.
    """

    ALL_GATHER = "all_gather"
    REDUCE_SCATTER = "reduce_scatter"
    ALL_REDUCE = "all_reduce"
    ALL_TO_ALL = "all_to_all"
    BROADCAST = "broadcast"
    REDUCE = "reduce"
    SEND = "send"
    GATHER = "gather"

    __str__ = str.__str__
    __format__ = str.__format__

    @classmethod
    def _missing_(cls, value):
        if isinstance(value, str):
            key = value.strip().lower().replace("-", "_").replace(" ", "_")
            for member in cls:
                if key == member.value or key in _SPECS[member.value].aliases:
                    return member
        raise CollectivesError(
            f"unknown collective {value!r}; use one of {', '.join(m.value for m in cls)}")

    def __repr__(self) -> str:
        return f"Collective({self.value!r})"

    # -- facts -------------------------------------------------------------------
    @property
    def _spec(self) -> _Spec:
        return _SPECS[self.value]

    @property
    def title(self) -> str:
        """The name as prose writes it: ``"all-gather"``."""
        return self._spec.title

    @property
    def aliases(self) -> tuple[str, ...]:
        return self._spec.aliases

    @property
    def description(self) -> str:
        return self._spec.description

    @property
    def layout(self) -> str:
        """How a schedule's slot grid is laid out: ``"blocks"``, ``"pairs"`` or ``"chunks"``."""
        return self._spec.layout

    @property
    def starts(self) -> str:
        """Who holds a slot before step 1: its ``"owner"``, ``"everyone"`` (each rank
        holds its own contribution to every slot) or the ``"root"``."""
        return self._spec.starts

    @property
    def ends(self) -> str:
        """Who must hold a slot at the end: ``"everyone"``, its ``"owner"``, its
        ``"destination"``, the ``"root"`` or the ``"peer"`` of a send."""
        return self._spec.ends

    @property
    def reduces(self) -> bool:
        """Whether the result is a sum of every rank's contribution."""
        return self.starts == "everyone"

    @property
    def personalised(self) -> bool:
        """Whether every slot goes from one rank to one other rank, neither copied to
        several nor summed (all-to-all, gather, send): NCCL runs these as point-to-point
        sends and receives, with no algorithm to choose.

        >>> [c.value for c in Collective if c.personalised]
        ['all_to_all', 'send', 'gather']
        """
        return not self.reduces and self.ends in ("destination", "root", "peer")

    @property
    def sized_per_rank(self) -> bool:
        """Whether nccl-tests' size is one rank's buffer rather than the whole array
        (all-to-all: a rank holds one block for each rank, the array is all of them)."""
        return self.layout == "pairs"

    @property
    def busbw_formula(self) -> str:
        """nccl-tests' bus-bandwidth factor as a formula: ``"2(n-1)/n"``, ``"(n-1)/n"`` or ``"1"``."""
        return self._spec.busbw

    @property
    def passes(self) -> int:
        """How many times the busbw factor counts each byte's (n-1)/n: 2 for all-reduce
        (a reduce-scatter, then an all-gather), else 1."""
        return 2 if self.busbw_formula.startswith("2") else 1

    @property
    def rooted(self) -> bool:
        """Whether the collective has a root (broadcast, reduce, gather, send)."""
        return "root" in (self.starts, self.ends)

    @property
    def endpoint_options(self) -> tuple[str, ...]:
        """The options that name ranks: ``("root",)`` for broadcast, reduce and gather,
        ``("src", "dst")`` for a send, ``()`` for the others.

        >>> Collective.GATHER.endpoint_options, Collective.SEND.endpoint_options
        (('root',), ('src', 'dst'))
        """
        if self.ends == "peer":
            return ("src", "dst")
        return ("root",) if self.rooted else ()

    def endpoints(self, root: int | None = None, dst: int | None = None) -> dict:
        """A root and a destination given together (as the command line's ``--root`` and
        ``--dst``) as this collective's options: the root of broadcast, reduce and
        gather, the source and destination of a send. None leaves an option out (its
        default: rank 0, and a send's last rank); a value this collective has no use
        for is refused, never ignored.

        >>> Collective.GATHER.endpoints(3), Collective.SEND.endpoints(1, 2), Collective.ALL_REDUCE.endpoints()
        ({'root': 3}, {'src': 1, 'dst': 2}, {})
        """
        keys = self.endpoint_options
        if root is not None and not keys:
            raise CollectivesError(f"a root does not apply to {self.value}: only broadcast, reduce, "
                                   f"gather and send (its source) have one")
        if dst is not None and len(keys) < 2:
            raise CollectivesError(f"a destination applies to send only, not to {self.value}")
        values = dict(zip(keys, (root, dst)))
        return {k: v for k, v in values.items() if v is not None}

    @property
    def dual(self) -> "Collective | None":
        """The collective a schedule becomes when reversed with reductions for copies."""
        d = self._spec.dual
        return None if d is None else Collective(d)

    def busbw_factor(self, n: int) -> float:
        """nccl-tests' bus-bandwidth factor for ``n`` ranks: ``busbw = algbw * factor``."""
        rule = self._spec.busbw
        if rule == "1":
            return 1.0
        if n < 1:
            raise CollectivesError(f"number of ranks must be >= 1, got {n}")
        return (2.0 if rule == "2(n-1)/n" else 1.0) * (n - 1) / n

    @property
    def splits(self) -> bool:
        """Whether the array splits into a piece per rank or per pair of ranks (all-gather,
        reduce-scatter, gather, all-to-all): nccl-tests' count column is then one rank's
        share. All-reduce's blocks are not pieces: every rank holds the whole sum."""
        return self.layout != "chunks" and not (self.reduces and self.ends == "everyone")

    def pieces(self, n: int) -> int:
        """How many equal pieces an array splits into for ``n`` ranks: one per rank
        (all-gather, reduce-scatter, gather), one per pair (all-to-all), else 1."""
        if self.layout == "pairs":
            return n * n
        return n if self.splits else 1

    # -- the definition ----------------------------------------------------------
    def start_mask(self, owner: np.ndarray, local: np.ndarray, root: int | None) -> np.ndarray:
        """``mask[i, s]``: whether local rank ``local[i]`` holds slot ``s`` before step 1.

        ``owner[s]`` is the local rank that owns slot ``s`` (its origin, for
        all-to-all), or -1 where the layout has no owner.
        """
        local = np.asarray(local)
        if self.starts == "owner":
            return owner[None, :] == local[:, None]
        if self.starts == "everyone":
            return np.ones((len(local), len(owner)), dtype=bool)
        return np.broadcast_to((local == root)[:, None], (len(local), len(owner))).copy()

    def end_mask(self, owner: np.ndarray, dest: np.ndarray, local: np.ndarray,
                 root: int | None, peer: int | None) -> np.ndarray:
        """``mask[i, s]``: whether the definition fixes what local rank ``local[i]``
        holds in slot ``s`` at the end."""
        local = np.asarray(local)
        shape = (len(local), len(owner))
        ends = self.ends
        if ends == "everyone":
            return np.ones(shape, dtype=bool)
        if ends == "owner":
            return owner[None, :] == local[:, None]
        if ends == "destination":
            return dest[None, :] == local[:, None]
        who = root if ends == "root" else peer
        return np.broadcast_to((local == who)[:, None], shape).copy()

    def source(self, owner: np.ndarray, root: int | None) -> np.ndarray | None:
        """``source[s]``: the local rank whose input ends up in slot ``s``, or None
        when the result is the sum over every rank."""
        if self.reduces:
            return None
        if self.starts == "owner":
            return owner
        return np.full(len(owner), -1 if root is None else root)


#: Every collective, in the order the book introduces them.
COLLECTIVES: tuple[Collective, ...] = tuple(Collective)


def collective(name) -> Collective:
    """The :class:`Collective` called ``name`` (any accepted spelling)."""
    if isinstance(name, Collective):
        return name
    if not isinstance(name, str):
        raise CollectivesError(
            f"collective must be a name such as 'all_gather', got {name!r}; use one of "
            f"{', '.join(c.value for c in Collective)}")
    return Collective(name)
