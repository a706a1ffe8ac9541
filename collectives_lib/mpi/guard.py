"""A run's deadline and its stop signals, from the moment it starts to its last cleanup.

A run owns processes (mpiexec, Hydra's proxy, the ranks) and files (the payload
it hands them). Whatever ends it must end those too: the run finishing, a rank
failing, the deadline passing, or a signal to the launcher: SIGTERM (a batch
scheduler, a Jupyter kernel restart), SIGHUP (a closed terminal) or SIGINT
(Ctrl-C). :func:`guarded` turns each of them into an exception raised *inside*
the run, so that the same ``finally`` blocks stop the process tree and remove
the files on every path:

* In the main thread, :class:`RunGuard` installs handlers for SIGTERM, SIGHUP
  and SIGINT (not for one that is ignored, as under ``nohup``, or that was set
  outside Python) and arms ``ITIMER_REAL`` for the deadline; a signal raises
  :class:`Stopped`, the deadline :class:`DeadlineExceeded`, wherever the run is:
  building schedules, writing the payload, starting mpiexec or waiting for it.
  The previous handlers and timer are restored when the run ends.
* Inside :meth:`RunGuard.hold` (acquiring a resource and recording it, or
  cleaning up) nothing is raised: a signal or the deadline waits for the end of
  the section. Once one has been raised, later signals are only recorded, so
  that they cannot cut the cleanup short.
* When the run is over, a stop signal is handed on. From Python (a notebook),
  the handler that was there before gets it: Python's default SIGINT handler
  raises :class:`KeyboardInterrupt`, the default action of SIGTERM and SIGHUP
  ends the process (with the process tree already stopped and the files
  removed), and a handler that returns leaves :class:`MPIRunError` raised. The
  command line passes ``signals="raise"`` instead and exits with status
  128 + the signal's number.
* Outside the main thread Python cannot install signal handlers. There the
  deadline is checked between phases and enforced while waiting for mpiexec,
  the launcher registers an :mod:`atexit` cleanup, and a signal takes the
  process's own default action; the ranks notice that their launcher is gone
  and end themselves (:mod:`collectives_lib.mpi.executor`).

A guard opened while another is active in the same thread (``collectives run``
guards the whole command, and :func:`~collectives_lib.mpi.run` guards itself)
shares it: the earlier deadline wins.
"""

from __future__ import annotations

import math
import signal
import threading
import time
from contextlib import contextmanager
from typing import Iterator

from ..errors import CollectivesError
from .errors import MPIRunError

#: The signals that stop a run (SIGHUP where the platform has it).
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP", "SIGINT")
                     if hasattr(signal, name))
#: The longest timeout a run accepts (s), about 11.6 days.
MAX_TIMEOUT = 1e6

_local = threading.local()


class Stopped(BaseException):
    """A stop signal arrived during a run. Raised inside the run (a BaseException, so
    that no ``except Exception`` on the way swallows it); ``signum`` is the signal."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = int(signum)

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name

    def __str__(self) -> str:
        return f"stopped by {self.name}"


class DeadlineExceeded(BaseException):
    """The run's deadline passed. Raised inside the run, turned into :class:`MPIRunError`."""


def check_timeout(timeout, name: str = "timeout") -> float:
    """``timeout`` as seconds, or :class:`CollectivesError` naming the value and what is allowed."""
    try:
        value = float(timeout)
    except (TypeError, ValueError):
        value = math.nan
    if isinstance(timeout, bool) or not (0 < value <= MAX_TIMEOUT):
        shown = timeout if isinstance(timeout, str) else repr(timeout)
        raise CollectivesError(f"{name} must be a number of seconds > 0 and at most {MAX_TIMEOUT:.0f} "
                               f"(about 11 days), got {shown}")
    return value


def _strongest(signums: list[int]) -> int:
    """The signal to hand on when several arrived: a termination outranks Ctrl-C."""
    ends = [s for s in signums if s != signal.SIGINT]
    return ends[0] if ends else signums[0]


class RunGuard:
    """The deadline and stop signals of one run in one thread (see the module's text)."""

    def __init__(self, timeout: float, *, signals: str = "redeliver"):
        if signals not in ("redeliver", "raise"):
            raise ValueError(f"signals must be 'redeliver' or 'raise', got {signals!r}")
        self.timeout = check_timeout(timeout)
        self.deadline = time.monotonic() + self.timeout
        self.signals = signals
        #: What the run is doing, for the message when the deadline passes first.
        self.phase = "preparing the run"
        #: Stop signals received, in order.
        self.received: list[int] = []
        self.main_thread = threading.current_thread() is threading.main_thread()
        self._holds = 0
        self._raised = False
        self._installed = False
        self._previous: dict[int, object] = {}
        self._timer: tuple[tuple[float, float], float] | None = None

    # -- asking -------------------------------------------------------------

    def remaining(self) -> float:
        """Seconds left before the deadline (0 once it has passed)."""
        return max(0.0, self.deadline - time.monotonic())

    def check(self) -> None:
        """Raise what is due and not raised yet: a stop signal, or the deadline. The
        handlers call it, and so does code between phases (outside the main thread,
        the only way the deadline is seen before mpiexec starts)."""
        if self._holds or self._raised:
            return
        if self.received:
            self._raised = True
            raise Stopped(self.received[0])
        if time.monotonic() >= self.deadline:
            self._raised = True
            raise DeadlineExceeded()

    @contextmanager
    def hold(self) -> Iterator[None]:
        """A section no signal or deadline interrupts; what arrived meanwhile is raised
        at its end (unless an exception is already leaving it)."""
        self._holds += 1
        try:
            yield
        finally:
            self._holds -= 1
        self.check()

    def expire(self) -> None:
        """The deadline passed while waiting (outside the main thread, or just before the timer)."""
        self._raised = True
        raise DeadlineExceeded()

    # -- handlers -------------------------------------------------------------

    def _on_signal(self, signum, frame) -> None:
        self.received.append(signum)
        self.check()

    def _on_alarm(self, signum, frame) -> None:
        if time.monotonic() < self.deadline:  # early, or the deadline moved: wait for it
            self._arm()
            return
        self.check()

    def _arm(self) -> None:
        if self._installed and signal.SIGALRM in self._previous:
            signal.setitimer(signal.ITIMER_REAL, max(self.remaining(), 1e-4))

    def install(self) -> None:
        """Install the handlers and arm the timer (main thread only; elsewhere nothing)."""
        if not self.main_thread:
            return
        self._installed = True
        for signum in STOP_SIGNALS:
            previous = signal.getsignal(signum)
            if previous is signal.SIG_IGN or previous is None:  # ignored (nohup), or not Python's
                continue
            self._previous[signum] = previous
            signal.signal(signum, self._on_signal)
        previous = signal.getsignal(signal.SIGALRM)
        if previous is not None:
            self._previous[signal.SIGALRM] = previous
            signal.signal(signal.SIGALRM, self._on_alarm)
            before = signal.setitimer(signal.ITIMER_REAL, max(self.remaining(), 1e-4))
            self._timer = (before, time.monotonic())

    def uninstall(self) -> None:
        """Put back the handlers and the timer that were there before."""
        if not self._installed:
            return
        self._installed = False
        if signal.SIGALRM in self._previous:
            signal.setitimer(signal.ITIMER_REAL, 0)
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        if self._timer is not None:
            (delay, interval), armed = self._timer
            if delay > 0:  # someone else's timer: what is left of it (due now if it passed)
                signal.setitimer(signal.ITIMER_REAL, max(delay - (time.monotonic() - armed), 1e-4),
                                 interval)
        self._timer = None

    # -- the end of the run -----------------------------------------------------

    def finish(self, exc: BaseException | None) -> None:
        """After the run's cleanup: hand on a stop signal, or turn the deadline into
        :class:`MPIRunError`. Returns when ``exc`` (None, or what is leaving the run)
        should simply go on."""
        if self.received:
            signum = _strongest(self.received)
            if self.signals == "raise":
                if isinstance(exc, Stopped) and exc.signum == signum:
                    return
                raise Stopped(signum) from None
            previous = self._previous.get(signum, signal.SIG_DFL)
            if previous is signal.default_int_handler:
                raise KeyboardInterrupt from None
            if callable(previous):
                try:
                    previous(signum, None)
                except BaseException as handed:  # noqa: BLE001 - it is the caller's handler's to raise
                    raise handed from None
            else:
                signal.raise_signal(signum)  # the default action: the process normally ends here
            raise MPIRunError(f"the run was stopped by {signal.Signals(signum).name}; every MPI "
                              f"process was stopped and the run's files removed") from None
        if isinstance(exc, DeadlineExceeded):
            raise MPIRunError(f"the run did not finish within {self.timeout:g} s, its timeout: it was "
                              f"stopped while {self.phase}") from None

    def __enter__(self) -> RunGuard:
        self._holds += 1  # a signal now is raised by the first check inside the block
        try:
            self.install()
            _local.guard = self
        except BaseException:
            self.uninstall()
            raise
        finally:
            self._holds -= 1
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        self._holds += 1  # from here on a signal is only recorded
        _local.guard = None
        self.uninstall()
        self.finish(exc)
        return False


@contextmanager
def guarded(timeout: float, *, signals: str = "redeliver") -> Iterator[RunGuard]:
    """The run's :class:`RunGuard`: a new one, or the one already active in this thread
    (then the earlier of the two deadlines applies until the block ends)."""
    outer = active()
    if outer is None:
        with RunGuard(timeout, signals=signals) as guard:
            guard.check()
            yield guard
        return
    timeout = check_timeout(timeout)
    saved = outer.deadline, outer.timeout
    if time.monotonic() + timeout < outer.deadline:
        outer.deadline, outer.timeout = time.monotonic() + timeout, timeout
        outer._arm()
    try:
        yield outer
    finally:
        outer.deadline, outer.timeout = saved
        outer._arm()


def active() -> RunGuard | None:
    """The guard of the run under way in this thread, if any."""
    return getattr(_local, "guard", None)
