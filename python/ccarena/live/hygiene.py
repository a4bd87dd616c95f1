"""What keeps the host clean: the testbed lock, the run-unique name prefix,
child processes that die with the engine, and removal of leftovers.

Everything a live run creates lives inside network namespaces named
``ccalive-<pid>-*`` (veths, the TUN device, qdiscs, addresses, routes are all
created inside them; nothing is added to the host's namespace), and every
process runs inside one of them. Deleting the namespaces after killing
their processes therefore removes everything.
"""

from __future__ import annotations

import ctypes
import fcntl
import math
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from ..command_clock import process_start_ticks
from ..errors import ScenarioError
from . import interrupts

#: Prefix of every namespace a live run creates.
PREFIX = "ccalive-"
LOCK_PATH = Path("/run/ccarena-live.lock")

_PR_SET_PDEATHSIG = 1


def run_prefix(pid: int | None = None) -> str:
    return f"{PREFIX}{os.getpid() if pid is None else pid}-"


#: The environment's default for --wait (seconds; ``inf`` waits until free).
WAIT_ENV = "CCARENA_LIVE_WAIT"


def parse_wait(text: str) -> float:
    """Seconds to wait for the testbed (``--wait``, CCARENA_LIVE_WAIT): a
    number >= 0, or ``inf``; ValueError with the reason otherwise."""
    try:
        seconds = float(text)
    except ValueError:
        raise ValueError(f"expected a number of seconds (or inf), got {text!r}") from None
    if not seconds >= 0:  # also NaN
        raise ValueError(f"expected a number of seconds >= 0, got {text!r}")
    return seconds


def _waiting_for(seconds: float) -> str:
    return "until it is free" if math.isinf(seconds) else f"up to {seconds:g} s"


class TestbedLock:
    """flock on /run/ccarena-live.lock: one live command at a time. The
    holder writes its pid into the file, for the others' messages."""

    def __init__(self, path: Path = LOCK_PATH) -> None:
        self.path = path
        self.fd: int | None = None

    def acquire(self, wait_s: float | None = None, log: Callable[[str], None] | None = None) -> None:
        """Take the lock, or refuse at once (ScenarioError, naming the
        holder's pid and --wait). With ``wait_s`` (None: the environment's
        CCARENA_LIVE_WAIT, else 0; ``math.inf``: until it is free) wait
        that long for the holder to finish, saying so once through ``log``.
        Commands that wait take the testbed in the order they began to
        wait (:class:`WaitQueue`), ahead of any that comes later, such as
        the next run of a ``reproduce --live`` that just released it.
        Ctrl-C ends the wait at once (also when deferred by interrupts.py)."""
        if wait_s is None:
            try:
                wait_s = parse_wait(os.environ.get(WAIT_ENV, "0"))
            except ValueError as err:
                raise ScenarioError(WAIT_ENV, str(err)) from None
        deadline = time.monotonic() + wait_s
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        queue = WaitQueue(self.path)
        try:
            told = False
            while True:
                ahead = queue.ahead()
                if ahead is None:
                    try:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                        break
                    except BlockingIOError:
                        pass
                holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or ahead or "?"
                if time.monotonic() >= deadline:
                    raise ScenarioError("live", self._refusal(holder, wait_s))
                queue.join()
                if not told and log is not None:
                    log(f"ccarena: the testbed ({self.path}) is held by pid {holder}; waiting "
                        f"{_waiting_for(wait_s)} (Ctrl-C stops waiting)")
                    told = True
                time.sleep(interrupts.POLL_S)
                interrupts.check()  # a deferred Ctrl-C ends the wait
        except BaseException:
            os.close(fd)
            raise
        finally:
            queue.leave()
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self.fd = fd

    def _refusal(self, holder: str, waited_s: float) -> str:
        if waited_s > 0:
            return (f"another live command (pid {holder}) still holds the testbed ({self.path}) after "
                    f"{waited_s:g} s; --wait longer, or --wait without a value to wait until it is free")
        return (f"another live command (pid {holder}) holds the testbed ({self.path}); "
                f"use --wait [SECONDS] to wait for it")

    def release(self) -> None:
        if self.fd is not None:
            os.ftruncate(self.fd, 0)
            os.close(self.fd)  # closing drops the flock
            self.fd = None


class WaitQueue:
    """The commands waiting for the testbed, in the order they began to
    wait: a file beside the lock (``<lock>.queue``), a line per waiter
    (pid, the process's start time in clock ticks, a token of its own),
    changed only under a flock of its own. A waiter whose process is gone
    (killed while waiting) no longer counts, and is dropped by the next
    change. Without it, a command that releases the lock and takes it
    again at once (``reproduce --live``, run after run) would win every
    time against one that polls for it."""

    def __init__(self, lock_path: Path) -> None:
        self.path = lock_path.with_name(lock_path.name + ".queue")
        # The token tells apart two waiters of one process (threads).
        self.entry = f"{os.getpid()} {process_start_ticks()} {id(self):x}"
        self.joined = False

    def ahead(self) -> str | None:
        """The pid of the first live waiter ahead of this one (of any, if
        it has not joined), or None: its turn."""
        entries = self._entries()
        if not entries or entries[0] == self.entry:
            return None
        return entries[0].split()[0]

    def join(self) -> None:
        if not self.joined:
            self._change(lambda entries: [*entries, self.entry])
            self.joined = True

    def leave(self) -> None:
        if self.joined:
            self._change(lambda entries: [e for e in entries if e != self.entry])
            self.joined = False

    def _entries(self) -> list[str]:
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            return []
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)  # never half a change
            return _live_lines(fd)
        finally:
            os.close(fd)

    def _change(self, edit: Callable[[list[str]], list[str]]) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            text = "".join(f"{line}\n" for line in edit(_live_lines(fd))).encode()
            os.ftruncate(fd, 0)
            os.pwrite(fd, text, 0)
        finally:
            os.close(fd)  # and the flock


def _live_lines(fd: int) -> list[str]:
    """The queue file's lines whose waiter still runs."""
    return [line for line in os.pread(fd, 1 << 20, 0).decode(errors="replace").splitlines() if _alive(line)]


def _alive(entry: str) -> bool:
    """Whether the waiter a queue line names still runs."""
    fields = entry.split()
    if len(fields) != 3 or not fields[0].isdigit():
        return False
    ticks = process_start_ticks(int(fields[0]))
    return ticks is not None and str(ticks) == fields[1]


def _die_with_parent() -> None:
    """preexec_fn: SIGKILL this child when the engine dies (inherited
    across `ip netns exec`, which execs in place)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() == 1:  # the parent is already gone
        os._exit(1)


def spawn(argv: list[str], **kwargs) -> subprocess.Popen:
    """A child in its own session (so a terminal's Ctrl-C reaches only the
    engine, which then tears down in order) that dies with the engine."""
    return subprocess.Popen(argv, start_new_session=True, preexec_fn=_die_with_parent, **kwargs)


def kill_group(proc: subprocess.Popen, grace_s: float = 0.0) -> None:
    """SIGTERM (optionally), then SIGKILL the child's process group."""
    if proc.poll() is not None:
        return
    try:
        if grace_s > 0:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=grace_s)
                return
            except subprocess.TimeoutExpired:
                pass
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def _quiet(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """A teardown command, in its own session: a second Ctrl-C at the
    terminal must not kill it half-way (the engine defers its own)."""
    return subprocess.run(argv, capture_output=True, text=True, check=False, start_new_session=True)


def list_namespaces(prefix: str = PREFIX) -> list[str]:
    out = _quiet(["ip", "netns", "list"]).stdout
    return [line.split()[0] for line in out.splitlines() if line.split() and line.split()[0].startswith(prefix)]


def delete_namespaces(names: list[str]) -> list[str]:
    """Kill every process inside each namespace, then delete it (its veths,
    TUN device and qdiscs go with it). Returns what was removed."""
    for name in names:
        pids = _quiet(["ip", "netns", "pids", name]).stdout
        for pid in pids.split():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
    removed = []
    for name in names:
        for _ in range(50):
            done = _quiet(["ip", "netns", "del", name])
            if done.returncode == 0 or name not in list_namespaces(name):
                removed.append(name)
                break
            time.sleep(0.02)
    return removed


def cleanup_leftovers(prefix: str = PREFIX) -> list[str]:
    """Remove every ``ccalive-*`` namespace (and its processes and devices):
    the leftovers of crashed runs. Only safe while holding the lock."""
    return delete_namespaces(list_namespaces(prefix))
