"""Make congestion controls available to sockets, and take ours away again.

    ensure_available(name, params=None) -> kernel name for TCP_CONGESTION
    registered(names)                   context manager: everything it (or
                                        ensure_available inside it) registered
                                        is unregistered on exit
    load / unload                       the operator's system-wide versions
    cleanup_stale()                     remove what killed processes left

The kernel's own algorithms (cubic, reno, bbr, ...) are only checked, and
their module loaded with modprobe if need be; they are never unloaded.
Ours are built (build.py), verified and registered by the kernel
(struct_ops.py), with ownership tracked in owners.py: a registration that
existed before -- loaded by an operator, or by another run -- is reused and
left in place.
"""

from __future__ import annotations

import contextlib
import contextvars
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from .. import signals
from . import owners, prereqs, struct_ops
from .build import build
from .errors import KernelError
from .names import KERNEL_BUILTINS, PARAMS_FIELD, ParamsArg, Target, our_algorithms, resolve

# The innermost active registered() block of this thread/task, so that
# ensure_available() called inside it hands its registrations to the block.
_SESSION: contextvars.ContextVar[Registrations | None] = contextvars.ContextVar("ccarena_kernel_session", default=None)


@dataclass(frozen=True)
class Loaded:
    """What acquiring one congestion control did."""

    target: Target
    kernel_name: str
    action: str  # "registered", "reused", "kernel"
    held: bool  # we hold a user slot and must release it
    object: Path | None = None
    map_id: int | None = None


def ensure_available(name: str, params: ParamsArg = None) -> str:
    """The name to pass to setsockopt(TCP_CONGESTION) for ``name``.

    Kernel algorithms are returned as they are (loading ``tcp_<name>`` with
    modprobe if needed). Ours are built and registered as ``cc_<name>``
    (``cc_<name>_<hash>`` with non-default params). Inside a
    ``registered()`` block the registration belongs to the block and goes
    away on exit; outside one it belongs to this process and stays until
    ``cleanup_stale()`` runs after the process has ended.
    """
    session = _SESSION.get()
    if session is not None:
        return session.ensure_available(name, params)
    return _acquire(resolve(name, params), operator=False).kernel_name


class Registrations:
    """The congestion controls of one ``registered()`` block."""

    def __init__(self) -> None:
        self._held: list[str] = []
        self._names: dict[str, str] = {}
        self._lock = threading.Lock()

    def ensure_available(self, name: str, params: ParamsArg = None) -> str:
        target = resolve(name, params)
        with self._lock:
            if target.kernel_name in self._held or (not target.ours and name in self._names):
                self._names.setdefault(name, target.kernel_name)
                return target.kernel_name
            loaded = _acquire(target, operator=False)
            if loaded.held:
                self._held.append(loaded.kernel_name)
            if not params:
                self._names[name] = loaded.kernel_name
            return loaded.kernel_name

    def __getitem__(self, name: str) -> str:
        """Kernel name of a name given to registered() without params."""
        return self._names[name]

    @property
    def held(self) -> list[str]:
        """Kernel names this block will unregister (unless others use them)."""
        return list(self._held)

    def release(self) -> list[str]:
        """Release everything; returns the problems (never raises)."""
        problems = []
        with self._lock:
            while self._held:
                kname = self._held.pop()
                try:
                    _release(kname)
                except (KernelError, OSError) as err:
                    problems.append(f"{kname}: {err}")
        return problems


Spec = str | tuple[str, ParamsArg]


@contextlib.contextmanager
def registered(names: Iterable[Spec] = ()) -> Iterator[Registrations]:
    """Make ``names`` (each a name or ``(name, params)``) available for the
    block; on exit -- normal, exception, Ctrl-C, SIGTERM or SIGHUP --
    unregister what this block registered. Yields a Registrations:
    ``regs["bbr@ccarena"] == "cc_bbr"``, ``regs.ensure_available(...)``.

    SIGTERM/SIGHUP become SystemExit(128 + signal) while the block runs (in
    the main thread, and only if nobody else handles them), so cleanup runs;
    signals are held off while it does. SIGKILL cannot be caught: the
    records let ``cleanup_stale()`` (``ccarena live cleanup``) finish later.
    """
    regs = Registrations()
    token = _SESSION.set(regs)
    restore = _trap_termination()
    try:
        for spec in names:
            name, params = (spec, None) if isinstance(spec, str) else spec
            regs.ensure_available(name, params)
        yield regs
    finally:
        _SESSION.reset(token)
        with signals.held():
            try:
                problems = regs.release()
            finally:
                restore()
        for p in problems:
            print(f"ccarena: warning: could not unregister {p}", file=sys.stderr)


_TERMINATION = (signal.SIGTERM, signal.SIGHUP)


def _raise_exit(signum: int, _frame: FrameType | None) -> None:
    raise signals.Terminated(signum)  # a SystemExit(128 + signum)


def _trap_termination() -> Callable[[], None]:
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = {}
    for sig in _TERMINATION:
        if signal.getsignal(sig) == signal.SIG_DFL:
            previous[sig] = signal.signal(sig, _raise_exit)

    def restore() -> None:
        for sig, handler in previous.items():
            signal.signal(sig, handler)

    return restore


# ------------------------------------------------------------ acquire/release


def _acquire(target: Target, *, operator: bool) -> Loaded:
    if not target.ours:
        _ensure_kernel_cc(target.source)
        return Loaded(target, target.kernel_name, "kernel", held=False)
    kname = target.kernel_name
    prereqs.require_all(f"registering {kname}")
    obj = build(target)
    with owners.locked():
        rec = owners.read(kname)
        if kname in struct_ops.available():
            if rec is None:  # someone else's: use it, never remove it
                return Loaded(target, kname, "reused", held=False, object=obj)
            rec["users"] = owners.live_users(rec)
            if operator:
                rec["operator"] = True
            elif owners.me() not in rec["users"]:
                rec["users"].append(owners.me())
            owners.write(rec)
            return Loaded(target, kname, "reused", held=not operator, object=obj, map_id=rec.get("map_id"))
        # Record first: a process killed mid-registration still leaves a trace.
        rec = {
            "kernel_name": kname,
            "spec": target.describe(),
            "map_id": None,
            "operator": operator,
            "users": [] if operator else [owners.me()],
        }
        owners.write(rec)
        try:
            map_id = struct_ops.register(obj, kname, owners.bpftool_log(kname))
        except BaseException:
            # A signal may land after bpftool registered it: undo that too.
            with contextlib.suppress(KernelError):
                _unregister_ours(kname, rec)
            owners.remove(kname)
            raise
        if map_id is None:  # registered by hand meanwhile: not ours
            owners.remove(kname)
            return Loaded(target, kname, "reused", held=False, object=obj)
        rec["map_id"] = map_id
        owners.write(rec)
        return Loaded(target, kname, "registered", held=not operator, object=obj, map_id=map_id)


def _release(kname: str) -> None:
    with owners.locked():
        rec = owners.read(kname)
        if rec is None:
            return
        rec["users"] = [u for u in owners.live_users(rec) if u != owners.me()]
        if rec["users"] or rec.get("operator"):
            owners.write(rec)
            return
        _unregister_ours(kname, rec)
        owners.remove(kname)


def _unregister_ours(kname: str, rec: owners.Record) -> bool:
    """Unregister ``kname`` if it is provably the registration ``rec``
    records: the kernel's map for it is the one ccarena's bpftool registered
    (its id, recorded, or in bpftool's log when the process was killed
    before it could record it). Anything else -- re-registered by someone
    since, or no id to prove it -- stays, with a warning. True if removed."""
    if kname not in struct_ops.available():
        return False
    map_id = rec.get("map_id") or struct_ops.logged_map_id(owners.bpftool_log(kname))
    if map_id is None or map_id not in struct_ops.registered_ids(kname):
        why = "no map id recorded" if map_id is None else f"its map is no longer id {map_id}, the one ccarena registered"
        print(f"ccarena: warning: kept {kname} registered: not provably ccarena's ({why}); "
              f"`ccarena kernel unload {kname}` removes it", file=sys.stderr)
        return False
    struct_ops.unregister(kname, map_id)
    return True


def _ensure_kernel_cc(name: str) -> None:
    if name in struct_ops.available():
        return
    if prereqs.is_root():
        try:
            subprocess.run(["modprobe", "-q", f"tcp_{name}"], capture_output=True, timeout=60, check=False)
        except FileNotFoundError:  # no kmod: only built-ins
            pass
        if name in struct_ops.available():
            return
    known = " ".join(struct_ops.available())
    how = "" if prereqs.is_root() else f"; as root, modprobe tcp_{name} may add it"
    raise KernelError(f"unknown congestion control '{name}' (the kernel has: {known}{how})")


# ------------------------------------------------------------- operators


def load(name: str, params: ParamsArg = None, *, field_prefix: str = PARAMS_FIELD) -> Loaded:
    """``ccarena kernel load``: register one of ours system-wide until
    unload. A bad parameter is named ``field_prefix + key``."""
    target = resolve(name, params, field_prefix=field_prefix)
    if not target.ours:
        ours = our_algorithms()
        if name in ours:
            raise KernelError(
                f"'{name}' is the kernel's own congestion control; load ccarena's port as '{name}@ccarena' (cc_{name})"
            )
        known = ", ".join(f"{n}@ccarena" if n in KERNEL_BUILTINS else n for n in ours)
        raise KernelError(f"unknown congestion control '{name}' (ccarena's: {known})")
    return _acquire(target, operator=True)


@dataclass(frozen=True)
class Unloaded:
    kernel_name: str
    sockets: int  # sockets still running it until they close
    users: list[owners.User]  # ccarena processes that were using it


def unload(name: str) -> Unloaded:
    """``ccarena kernel unload``: unregister one of ours (by our name or its
    kernel name, e.g. ``bbq``, ``bbr@ccarena``, ``cc_bbr_1a2b3c``)."""
    if name.startswith("cc_") and (owners.read(name) is not None or name in struct_ops.available()):
        kname = name
    else:
        target = resolve(name)
        if not target.ours:
            if name.startswith("cc_"):
                raise KernelError(f"{name} is not registered (see ccarena kernel list)")
            if name in our_algorithms():
                raise KernelError(f"'{name}' is the kernel's own congestion control; ccarena's port is '{name}@ccarena'")
            raise KernelError(f"'{name}' is not one of ccarena's congestion controls (see ccarena kernel list)")
        kname = target.kernel_name
    prereqs.require_root(f"unregistering {kname}")
    prereqs.require_tools("bpftool")
    if struct_ops.default_cc() == kname:
        raise KernelError(
            f"{kname} is this host's default congestion control; switch first, e.g. "
            f"sysctl -w net.ipv4.tcp_congestion_control=cubic"
        )
    with owners.locked():
        rec = owners.read(kname)
        if kname not in struct_ops.available():
            owners.remove(kname)
            raise KernelError(f"{kname} is not registered (see ccarena kernel list)")
        users = owners.live_users(rec) if rec else []
        sockets = struct_ops.unregister(kname)
        owners.remove(kname)
    return Unloaded(kname, sockets, users)


def cleanup_stale() -> list[str]:
    """Unregister what ccarena processes that no longer exist left behind:
    registrations whose every recorded user is dead, that no operator
    loaded (``ccarena kernel load``) and that are provably the ones ccarena
    registered (see _unregister_ours). The live engine calls it before each
    run, and ``ccarena live cleanup``. Returns the kernel names removed."""
    removed = []
    with owners.locked():
        for rec in owners.all_records():
            kname = rec["kernel_name"]
            users = owners.live_users(rec)
            if users or rec.get("operator"):
                if users != rec["users"]:
                    owners.write({**rec, "users": users})
                continue
            if kname in struct_ops.available():
                prereqs.require_root(f"unregistering {kname}")
                if _unregister_ours(kname, rec):
                    removed.append(kname)
            owners.remove(kname)
    return removed
