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
import os
import signal
import subprocess
import time
from pathlib import Path

from ..errors import ScenarioError
from . import interrupts

#: Prefix of every namespace a live run creates.
PREFIX = "ccalive-"
LOCK_PATH = Path("/run/ccarena-live.lock")

_PR_SET_PDEATHSIG = 1


def run_prefix(pid: int | None = None) -> str:
    return f"{PREFIX}{os.getpid() if pid is None else pid}-"


class TestbedLock:
    """flock on /run/ccarena-live.lock: one live run at a time."""

    def __init__(self, path: Path = LOCK_PATH) -> None:
        self.path = path
        self.fd: int | None = None

    def acquire(self, wait_s: float | None = None) -> None:
        """Take the lock, or refuse at once; with ``wait_s`` (default: the
        environment's CCARENA_LIVE_WAIT seconds, else 0) wait that long
        for another run to finish first."""
        if wait_s is None:
            try:
                wait_s = float(os.environ.get("CCARENA_LIVE_WAIT", "0"))
            except ValueError:
                raise ScenarioError("CCARENA_LIVE_WAIT", "expected a number of seconds") from None
        deadline = time.monotonic() + wait_s
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() < deadline:
                    time.sleep(0.2)
                    try:
                        interrupts.check()  # a deferred Ctrl-C ends the wait
                    except KeyboardInterrupt:
                        os.close(fd)
                        raise
                    continue
                holder = os.read(fd, 64).decode(errors="replace").strip() or "?"
                os.close(fd)
                raise ScenarioError(
                    "live", f"another live run (pid {holder}) holds the testbed ({self.path}); wait for it to finish"
                ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self.fd = fd

    def release(self) -> None:
        if self.fd is not None:
            os.ftruncate(self.fd, 0)
            os.close(self.fd)  # closing drops the flock
            self.fd = None


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
