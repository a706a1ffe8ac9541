"""What :func:`collectives_lib.estimate` answers, in either model.

An answer is a value: a time and what it is made of, the lower bound beside
it, the other algorithms the choice weighed, and which model said so. The two
models answer with two types that share :class:`Estimate`:

* :class:`IdealEstimate` (the ideal link model): the schedule, how it was
  timed (``"simulated"``, or ``"closed form"`` for a schedule too large to
  build) and, for a simulated one, the simulator's whole :attr:`~IdealEstimate.result`
  (every link's bytes, the stage times, the bottleneck), computed when asked.
* :class:`NcclEstimate` (NCCL's model): NCCL's algorithm and protocol, the
  tuner's own time (what NCCL chooses by) beside the time a run would
  measure, and the channels NCCL launches. Nothing in it comes from the
  book's ideal schedules.

Every field of both is a plain value: none raises. Each alternative is an
:class:`Alternative` with the same times as the answer, so an answer can be
read as a small table (:meth:`Estimate.table`).

Introduced in the chapter *A first look*; every chapter uses it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .bounds import Bound
from .collective import Collective
from .errors import CollectivesError
from .schedule import Schedule
from .topology import Topology
from .units import element_size, format_bytes, format_rate, format_time


@dataclass(frozen=True)
class Choice:
    """An algorithm and why it was chosen."""

    algorithm: str
    reason: str


@dataclass(frozen=True)
class Alternative:
    """Another candidate the answer weighed, timed the same way.

    ``time`` is comparable with the answer's :attr:`Estimate.time`; under NCCL's
    model ``tuner_time`` is the tuner's own prediction, the one NCCL chooses by.
    """

    algorithm: str
    time: float
    protocol: str | None = None
    tuner_time: float | None = None
    how: str = ""                    # ideal model: "simulated" or "closed form"

    @property
    def label(self) -> str:
        return self.algorithm + (f"/{self.protocol}" if self.protocol else "")

    @property
    def chosen_by(self) -> float:
        """The time the choice compares: the tuner's under NCCL's model, else the time."""
        return self.time if self.tuner_time is None else self.tuner_time

    def as_dict(self) -> dict:
        out = {"algorithm": self.algorithm, "time_s": self.time}
        if self.protocol is not None:
            out.update(protocol=self.protocol, tuner_time_s=self.tuner_time)
        if self.how:
            out["how"] = self.how
        return out


@dataclass(frozen=True, kw_only=True)
class Estimate:
    """An answer: a time, what it is made of, the bound beside it, and which model said so.

    ``bound`` is the lower bound for this algorithm's kind: an algorithm that
    does not reduce in the network is held to the bound without in-network
    reduction; where the network could reduce (NVLS, SHARP) and this algorithm
    does not use it, ``network_bound`` gives that lower bound apart.
    """

    collective: Collective
    topology: Topology = field(repr=False)
    algorithm: str
    model: str
    nbytes: int                       # nccl-tests' size (for all-to-all, one rank's buffer)
    dtype: str
    time: float
    latency_time: float
    bandwidth_time: float
    group_size: int
    num_groups: int
    reason: str
    bound: Bound
    network_bound: Bound | None = None
    note: str = ""                    # how the size split, when not evenly
    alternatives: tuple[Alternative, ...] = ()

    # -- nccl-tests' figures ---------------------------------------------------
    @property
    def moves_nothing(self) -> bool:
        """One rank per group: nothing moves, the time is 0 and bandwidths do not apply."""
        return self.group_size == 1 or self.time == 0

    @property
    def why_nothing_moves(self) -> str:
        """Why nothing moves (where :attr:`moves_nothing`): one rank, or no whole element."""
        if self.group_size == 1:
            return "one rank per group: nothing moves"
        return (f"{self.nbytes:,} bytes hold no whole {self.dtype} element and the links "
                f"have no latency: nothing moves")

    @property
    def algbw(self) -> float | None:
        """nccl-tests' algorithm bandwidth: size / time, the size in whole elements (as
        nccl-tests counts it: 7 bytes of float32 are one element, 4 bytes); None where
        nothing moves."""
        if self.moves_nothing:
            return None
        esize = element_size(self.dtype)
        return (self.nbytes - self.nbytes % esize) / self.time

    @property
    def busbw(self) -> float | None:
        """nccl-tests' bus bandwidth: algbw times the collective's factor; None where nothing moves."""
        algbw = self.algbw
        return None if algbw is None else algbw * self.collective.busbw_factor(self.group_size)

    @property
    def efficiency(self) -> float:
        """The lower bound as a share of the time (1: the bound is reached)."""
        return self.bound.efficiency(self.time)

    @property
    def chosen_by(self) -> float:
        """The time the choice compared with its :attr:`alternatives`."""
        return self.time

    @property
    def choice(self) -> Choice:
        return Choice(self.algorithm, self.reason)

    @property
    def label(self) -> str:
        return self.algorithm

    @property
    def row_label(self) -> str:
        """The algorithm as a table row names it (``ring``; under NCCL's model ``ring/LL``)."""
        return self.algorithm

    @property
    def model_name(self) -> str:
        return "the ideal link model" if self.model == "ideal" else "NCCL's model"

    def __str__(self) -> str:
        rates = (self.why_nothing_moves if self.moves_nothing else
                 f"algbw {format_rate(self.algbw)}, busbw {format_rate(self.busbw)}")
        return (f"{self.label} {self.collective} of {format_bytes(self.nbytes)} over "
                f"{self.group_size} ranks ({self.model} model): {format_time(self.time)}, "
                f"{rates}; lower bound {format_time(self.bound.time)} "
                f"({self.efficiency:.0%} of it reached)")

    def as_dict(self) -> dict:
        """Plain, JSON-safe values (no infinities or NaN; None where a figure does not apply)."""
        out = {
            "collective": self.collective.value, "topology": repr(self.topology),
            "algorithm": self.algorithm, "model": self.model,
            "nbytes": self.nbytes, "dtype": self.dtype,
            "array_bytes": self.nbytes * (self.group_size if self.collective.layout == "pairs" else 1),
            "time_s": self.time, "latency_time_s": self.latency_time,
            "bandwidth_time_s": self.bandwidth_time,
            "algbw": self.algbw, "busbw": self.busbw,
            "num_ranks": self.topology.num_ranks, "group_size": self.group_size,
            "groups": self.num_groups, "why": self.reason, "note": self.note,
            "lower_bound": self.bound.as_dict(), "efficiency": self.efficiency,
            "network_lower_bound": None if self.network_bound is None else self.network_bound.as_dict(),
            "alternatives": [a.as_dict() for a in self.alternatives],
            "protocol": None, "nccl_algorithm": None,
        }
        out.update(self._extra())
        return finite(out)

    def _extra(self) -> dict:
        return {}


@dataclass(frozen=True, kw_only=True)
class IdealEstimate(Estimate):
    """The ideal link model's answer: a schedule timed on the topology's links.

    ``how`` is ``"simulated"`` (the schedule was built and timed by
    :func:`~collectives_lib.simulate`) or ``"closed form"`` (too large to build:
    the algorithm's formula in the same model, and ``schedule`` is None).
    :attr:`result` is the simulator's full answer, computed on first use.
    """

    num_steps: int = 0
    how: str = "simulated"
    schedule: Schedule | None = field(default=None, repr=False, compare=False)
    overhead: float = 0.0
    placement: object = field(default=None, repr=False, compare=False)
    element_size: int = 4
    formula_bottleneck: str = ""     # a closed form's busiest link, where it names one

    @cached_property
    def result(self):
        """The simulator's :class:`~collectives_lib.simulate.Result` (links, stages,
        bottleneck) for this size, or None for a closed form (no schedule was built)."""
        if self.schedule is None:
            return None
        from .simulate import simulate
        return simulate(self.schedule, self.topology, self.nbytes, overhead=self.overhead,
                        placement=self.placement, element_size=self.element_size)

    def _from_result(self, what: str):
        r = self.result
        return None if r is None else getattr(r, what)

    @property
    def link_bytes(self):
        """Bytes on every link (None for a closed form)."""
        return self._from_result("link_bytes")

    @property
    def link_busy(self):
        return self._from_result("link_busy")

    @property
    def stage_times(self) -> dict | None:
        return self._from_result("stage_times")

    @property
    def step_times(self):
        return self._from_result("step_times")

    @property
    def time_unoverlapped(self) -> float | None:
        return self._from_result("time_unoverlapped")

    @property
    def bottleneck(self) -> str:
        """The busiest link, or what the closed form assumes."""
        r = self.result
        if r is None:
            return self.formula_bottleneck or "closed form, not simulated: it names no single link"
        return r.bottleneck

    def stages(self):
        """The stage breakdown (:meth:`collectives_lib.simulate.Result.stages`); None for a closed form."""
        r = self.result
        return None if r is None else r.stages()

    def _extra(self) -> dict:
        out = {"steps": self.num_steps, "how": self.how}
        if self.result is not None:
            out["bottleneck"] = self.result.bottleneck
            out["stage_times_s"] = dict(self.result.stage_times)
        elif self.formula_bottleneck:
            out["bottleneck"] = self.formula_bottleneck
        return out


@dataclass(frozen=True, kw_only=True)
class NcclEstimate(Estimate):
    """NCCL's model's answer: what NCCL runs and what nccl-tests would measure.

    ``time`` is the time a run would measure (the tuner's prediction plus the
    pipeline fill of :mod:`collectives_lib.nccl.measured`); ``tuner_time`` is
    the tuner's own prediction, which is what NCCL chooses by: the pick has the
    least ``tuner_time`` of its :attr:`alternatives`, whose ``time`` may be less
    (NCCL's tuner can misjudge; forcing that algorithm would then be faster).
    """

    protocol: str | None = None       # LL, LL128 or SIMPLE (None: point-to-point)
    nccl_algorithm: str = ""          # NCCL's name: RING, TREE, NVLS, ...
    tuner_time: float = 0.0
    channels: int = 0                 # the collective channels NCCL launches

    @property
    def label(self) -> str:
        return f"{self.algorithm} ({self.nccl_algorithm}" + (f"/{self.protocol})" if self.protocol else ")")

    @property
    def row_label(self) -> str:
        return self.algorithm + (f"/{self.protocol}" if self.protocol else "")

    @property
    def chosen_by(self) -> float:
        return self.tuner_time

    @property
    def bottleneck(self) -> str:
        return f"NCCL's model: {self.nccl_algorithm}" + (f"/{self.protocol}" if self.protocol else "") \
            + f" over {self.channels} channel{'' if self.channels == 1 else 's'}"

    def _extra(self) -> dict:
        return {"protocol": self.protocol, "nccl_algorithm": self.nccl_algorithm,
                "nccl_tuner_time_s": self.tuner_time, "channels": self.channels}


def finite(value):
    """``value`` with numpy scalars made plain; raises on an infinity or NaN (never in JSON)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise CollectivesError(f"an estimate came out as {value}: please report this input")
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    if isinstance(value, np.generic):
        return finite(value.item())
    return value
