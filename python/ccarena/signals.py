"""Signals that end a command: SIGINT, SIGTERM and SIGHUP become exceptions
in the main thread, so that every ``finally`` and ``except BaseException``
on the way out runs (temporary run directories are removed, the live
testbed is torn down, registered congestion controls are unloaded).

- SIGINT raises :class:`KeyboardInterrupt` (exit status 130);
- SIGTERM and SIGHUP raise :class:`Terminated`, a :class:`SystemExit` with
  status 128 + the signal number, as the kernel session expects.

Only the first signal raises: later ones are ignored while the cleanup the
first one started runs (SIGKILL still ends everything; what it leaves,
the next run or ``ccarena live cleanup`` removes).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

#: The signals a command turns into exceptions.
HANDLED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Terminated(SystemExit):
    """SIGTERM or SIGHUP arrived; ``code`` is 128 + the signal number."""

    def __init__(self, signum: int) -> None:
        super().__init__(128 + signum)
        self.signum = signum

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name


class _Once:
    def __init__(self) -> None:
        self.fired = False

    def __call__(self, signum: int, _frame: FrameType | None) -> None:
        if self.fired:
            return
        self.fired = True
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise Terminated(signum)


def trap() -> Callable[[], None]:
    """Install the handlers (in the main thread; elsewhere nothing); returns
    the function that puts the previous handlers back."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    handler = _Once()
    previous = {sig: signal.signal(sig, handler) for sig in HANDLED}

    def restore() -> None:
        for sig, old in previous.items():
            signal.signal(sig, old)

    return restore


@contextmanager
def held() -> Iterator[None]:
    """Hold the :data:`HANDLED` signals back (in the main thread; elsewhere
    nothing) while the block runs, so that a step which must not be cut in
    two — swapping run directories, unregistering congestion controls —
    finishes first; a signal that came meanwhile is delivered after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, set(HANDLED))
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
