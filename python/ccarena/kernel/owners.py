"""Who registered which of our congestion controls, so that a run removes
only what it added and leftovers of a killed process can be found.

One JSON record per kernel name in the run directory (/run/ccarena/kernel,
tmpfs: it goes away with the registrations at reboot):

    {"kernel_name": "cc_bbr", "spec": "bbr@ccarena", "map_id": 66,
     "operator": false, "users": [[pid, start_ticks], ...]}

``users`` are the processes (pid plus start time, so a reused pid does not
count) that use it through ``registered()``/``ensure_available()``; the
last one out unregisters it, and once all are dead (SIGKILL) the next live
run or ``ccarena live cleanup`` does. ``operator`` marks ``ccarena kernel
load``: kept until ``ccarena kernel unload``. A registration without a
record was made by someone else (bpftool by hand...) and is never removed
by a run; nor is one whose map is not ``map_id`` (re-registered by someone
since). Beside each record, ``<kernel name>.bpftool.log`` keeps what the
registering bpftool printed, its map id included: a process killed before
it recorded ``map_id`` leaves it there. All changes happen under one
flock, so concurrent ccarena processes agree.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from . import paths

User = tuple[int, int]
Record = dict[str, Any]


def me() -> User:
    return os.getpid(), _start_ticks(os.getpid())


def alive(user: User) -> bool:
    pid, start = user
    return _start_ticks(pid) == start


def _start_ticks(pid: int) -> int:
    """Field 22 of /proc/<pid>/stat (start time, clock ticks); -1 if gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return -1
    return int(stat.rsplit(")", 1)[1].split()[19])


@contextlib.contextmanager
def locked() -> Iterator[None]:
    where = paths.run_dir()
    where.mkdir(parents=True, exist_ok=True)
    with open(where / ".lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _path(kernel_name: str) -> Path:
    return paths.run_dir() / f"{kernel_name}.json"


def bpftool_log(kernel_name: str) -> Path:
    """Where the registering bpftool writes its output."""
    return paths.run_dir() / f"{kernel_name}.bpftool.log"


def read(kernel_name: str) -> Record | None:
    try:
        rec: Record = json.loads(_path(kernel_name).read_text())
    except (OSError, ValueError):
        return None
    rec["users"] = [tuple(u) for u in rec.get("users", [])]
    return rec


def write(rec: Record) -> None:
    path = _path(rec["kernel_name"])
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.write_text(json.dumps({**rec, "users": [list(u) for u in rec["users"]]}, sort_keys=True))
    tmp.replace(path)


def remove(kernel_name: str) -> None:
    _path(kernel_name).unlink(missing_ok=True)
    bpftool_log(kernel_name).unlink(missing_ok=True)


def all_records() -> list[Record]:
    where = paths.run_dir()
    if not where.is_dir():
        return []
    recs = [read(p.stem) for p in sorted(where.glob("*.json"))]
    return [r for r in recs if r is not None]


def live_users(rec: Record) -> list[User]:
    return [u for u in rec["users"] if alive(u)]
