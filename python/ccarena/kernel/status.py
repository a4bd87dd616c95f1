"""What ``ccarena kernel list`` shows: our algorithms and their state."""

from __future__ import annotations

from dataclasses import dataclass

from . import owners, struct_ops
from .names import KERNEL_BUILTINS, OURS_SUFFIX, PREFIX, our_algorithms


@dataclass(frozen=True)
class Row:
    name: str  # how a scenario names it, e.g. "bbr@ccarena", "bbq"
    kernel_name: str
    registered: bool
    by: str  # "", "operator", "run (pid 1234)", "not ccarena", "stale"


@dataclass(frozen=True)
class Status:
    ours: list[Row]
    available: list[str]  # the kernel's list, ours included
    default: str


def status() -> Status:
    available = struct_ops.available()
    records = {r["kernel_name"]: r for r in owners.all_records()}
    rows = []
    seen = set()
    for src in our_algorithms():
        kname = PREFIX + src
        spec = f"{src}{OURS_SUFFIX}" if src in KERNEL_BUILTINS else src
        rows.append(Row(spec, kname, kname in available, _by(kname, kname in available, records.get(kname))))
        seen.add(kname)
    # Parameter variants and anything else of ours.
    for kname, rec in sorted(records.items()):
        if kname not in seen:
            rows.append(Row(str(rec.get("spec", kname)), kname, kname in available, _by(kname, kname in available, rec)))
            seen.add(kname)
    return Status(ours=rows, available=available, default=struct_ops.default_cc())


def _by(kname: str, registered: bool, rec: dict | None) -> str:  # type: ignore[type-arg]
    if not registered:
        return "stale record" if rec else ""
    if rec is None:
        return "not by ccarena"
    if rec.get("operator"):
        return "operator (ccarena kernel load)"
    users = owners.live_users(rec)
    if users:
        return "run, pid " + ", ".join(str(pid) for pid, _ in users)
    return "left by a killed run (removed by the next live run, or ccarena live cleanup)"
