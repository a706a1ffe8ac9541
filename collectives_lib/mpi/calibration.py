"""Calibration: the alpha-beta model fitted to a ping-pong between two MPI processes.

:func:`calibrate` measures one-way times over a range of message sizes and fits
``t(m) = alpha + beta m`` with :func:`collectives_lib.analysis.fit_alpha_beta`;
:meth:`Calibration.predict` turns the fit into the simulator's prediction for
any schedule.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..analysis import fit_alpha_beta
from ..schedule import Schedule
from ..units import format_rate, format_time, parse_size
from .buffers import check_memory
from .launch import launch

#: Ping-pong sizes for :func:`calibrate` (bytes): 8 B to 2 MiB, factor 4.
CALIBRATION_SIZES = tuple(8 * 4 ** k for k in range(10))


def calibration_sizes(largest: int) -> tuple[int, ...]:
    """Ping-pong sizes for a run whose largest array is ``largest`` bytes: 8 B,
    32 B, ... (factor 4) up to ``largest``, and at least to 32 KiB so that both
    of MPI's protocols (eager and rendezvous) are sampled.

    Calibrate over the sizes you measure: the time per byte of shared memory is
    not one number (caches, and the protocol switch), so a line fitted to
    messages far larger than the run's would predict it worse.
    """
    top = max(int(largest), 32 * 1024)
    return tuple(8 * 4 ** k for k in range(40) if 8 * 4 ** k <= top)


@dataclass(frozen=True)
class Calibration:
    """A ping-pong between two MPI processes and the alpha-beta fit to it.

    ``alpha`` (s) is the one-way latency of a message, ``beta`` (s/byte) the
    time per byte, ``bandwidth = 1 / beta`` (bytes/s).
    """

    alpha: float
    beta: float
    sizes: tuple[int, ...]
    times: tuple[float, ...]
    method: str
    library: str = ""
    processes: int = 2

    @property
    def bandwidth(self) -> float:
        return 1.0 / self.beta

    def model(self, nbytes):
        """The fitted line: ``alpha + beta * nbytes`` (s)."""
        return self.alpha + self.beta * np.asarray(nbytes, dtype=float)

    def relative_residuals(self) -> np.ndarray:
        t = np.asarray(self.times)
        return (self.model(self.sizes) - t) / t

    def topology(self, num_ranks: int):
        """The machine as the simulator sees it: ``Switch(N, bandwidth=1/beta, latency=alpha/2)``.

        Every message between two processes crosses two links of a switch (up
        and down), and the simulator adds each link's latency once and each
        transfer's bandwidth term once, so a single message of ``m`` bytes is
        predicted to take exactly ``alpha + beta m``: the line fitted to the
        ping-pong. (``overhead=alpha`` per step would agree for one message but
        charge steps, not messages; the per-hop latency keeps the topology
        self-contained.) What a switch adds beyond the ping-pong is contention:
        a process sending to k others in one step shares its uplink k ways.
        """
        from ..topology import Switch
        return Switch(int(num_ranks), bandwidth=self.bandwidth, latency=self.alpha / 2, in_network=True)

    def predict(self, schedule: Schedule, sizes) -> np.ndarray:
        """Predicted times (s) of ``schedule`` for each size in ``sizes`` (bytes)."""
        from ..simulate import simulate_sizes
        return simulate_sizes(schedule, self.topology(schedule.num_ranks),
                              np.asarray(sizes, dtype=float))

    def __str__(self) -> str:
        return (f"alpha = {format_time(self.alpha)}, beta = {self.beta:.3g} s/B "
                f"(bandwidth {format_rate(self.bandwidth)}), {self.method}")


def calibration_from(pp: dict | None, library: str) -> Calibration | None:
    """The fit to a ping-pong as the worker reports it (``{"sizes", "times"}``), or None."""
    if not pp:
        return None
    alpha, beta, method = fit_alpha_beta(pp["sizes"], pp["times"])
    return Calibration(alpha, beta, tuple(int(s) for s in pp["sizes"]),
                       tuple(float(t) for t in pp["times"]), method, library)


def calibrate(*, sizes: Sequence[int] = CALIBRATION_SIZES, timeout: float = 120.0,
              hostfile=None, mpiexec_args: Sequence[str] = (), env=None) -> Calibration:
    """Ping-pong between two MPI processes over ``sizes`` and fit alpha and beta
    (:func:`fit_alpha_beta`)."""
    sizes = [parse_size(s) for s in sizes]
    check_memory(max(sizes), 2, per_byte=2, what="the ping-pong")
    payload = {"cases": [], "iters": 1, "warmup": 0, "dtype": "float64", "seed": 0,
               "inject": {}, "calibrate": sizes}
    result = launch(payload, 2, timeout=timeout, hostfile=hostfile,
                    mpiexec_args=mpiexec_args, env=env)
    return calibration_from(result["pingpong"], result.get("library", ""))

