"""Ctrl-C (and SIGTERM, SIGHUP) during a live run, acted on where it is safe.

Python runs a signal handler in the main thread between any two bytecodes.
A handler that raises (KeyboardInterrupt, as Python's default SIGINT
handler does) can therefore land inside library code that is not written
for it -- ``threading.Condition.wait``, which ``queue.Queue.get``,
``Thread.start`` and ``Event.wait`` use, releases its lock and re-acquires
it around the wait; an exception raised between the two leaves the lock
released, and the ``with`` that took it then fails with ``RuntimeError:
release unlocked lock``, which replaced the KeyboardInterrupt (a Ctrl-C
of ``ccarena live run`` once ended that way, as ``internal:``). It can
also land in the middle of the teardown.

So while the engine holds the testbed, :func:`deferred` replaces the
handlers with one that only records the first signal. The engine asks
:func:`check` at the points where stopping is safe -- between setup
commands, while waiting for a child's line (polled in short slices), while
waiting for the lock -- and ``check`` raises KeyboardInterrupt there; the
engine's ``finally`` tears the testbed down with the signal still only
recorded. When the block ends, the previous handlers come back and the
recorded signal is delivered to them again (``signal.raise_signal``), so
the command ends exactly as that signal would have ended it otherwise
(``ccarena: error: interrupted``, exit 130, for SIGINT), only later, with
the host clean.

A signal ignored when the block starts (SIG_IGN, e.g. SIGINT of a
background job) stays ignored. Outside the main thread nothing changes
(Python delivers signals only there).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from .. import signals

#: The signals a live run defers: the ones a command turns into exceptions.
DEFERRED = signals.HANDLED
#: How often a blocking wait looks at the recorded signal (s).
POLL_S = 0.05


class _Recorder:
    def __init__(self) -> None:
        self.signum: int | None = None

    def __call__(self, signum: int, _frame: FrameType | None) -> None:
        if self.signum is None:
            self.signum = signum


_active: _Recorder | None = None


def pending() -> int | None:
    """The signal recorded by the active :func:`deferred` block, if any."""
    return _active.signum if _active is not None else None


def check() -> None:
    """Raise KeyboardInterrupt if a deferred signal has arrived (main
    thread only: elsewhere there is nobody to unwind)."""
    if _active is not None and _active.signum is not None and threading.current_thread() is threading.main_thread():
        raise KeyboardInterrupt


@contextmanager
def deferred() -> Iterator[None]:
    """Defer SIGINT, SIGTERM and SIGHUP for the block (see the module
    comment). Nested blocks share the outermost one."""
    global _active
    if _active is not None or threading.current_thread() is not threading.main_thread():
        yield
        return
    recorder = _Recorder()
    previous = {}
    for sig in DEFERRED:
        handler = signal.getsignal(sig)
        if handler is not signal.SIG_IGN:
            previous[sig] = signal.signal(sig, recorder)
    _active = recorder
    try:
        yield
    finally:
        _active = None
        for sig, handler in previous.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
        if recorder.signum is not None:
            # The previous handler raises here (KeyboardInterrupt for
            # SIGINT), replacing whatever the block raised at a check();
            # a default SIGTERM ends the process, now that it is clean.
            signal.raise_signal(recorder.signum)
