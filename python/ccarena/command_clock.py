"""How long a command took, as the person who typed it waited: from the
start of the process (the interpreter's start-up and ccarena's imports
included), not from when the work began. Read from /proc once, when the
command starts; then the monotonic clock."""

from __future__ import annotations

import os
import time
from pathlib import Path


def process_start_ticks(pid: int | str = "self") -> int | None:
    """When a process started, in clock ticks after boot (/proc/PID/stat
    field 22, which also tells it from a later process given the same
    pid), or None where /proc cannot tell (no such process)."""
    try:
        # The fields after the command name (which may hold spaces) start at field 3.
        stat = Path(f"/proc/{pid}/stat").read_text()
        return int(stat[stat.rindex(")") + 2 :].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def process_age_s() -> float | None:
    """Seconds since this process started (clock-tick resolution, 10 ms),
    or None where /proc cannot tell."""
    start_ticks = process_start_ticks()
    if start_ticks is None:
        return None
    try:
        uptime_s = float(Path("/proc/uptime").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return max(0.0, uptime_s - start_ticks / os.sysconf("SC_CLK_TCK"))


class CommandClock:
    """Started where a command begins. ``whole_process``: the command is
    this process (``ccarena ...`` at a shell), so its start-up counts too;
    otherwise (``cli.main([...])`` called inside a longer-lived program)
    only the time since the clock started."""

    def __init__(self, whole_process: bool = True) -> None:
        self.t0 = time.perf_counter()
        self.before_s = (process_age_s() or 0.0) if whole_process else 0.0

    def seconds(self) -> float:
        return self.before_s + time.perf_counter() - self.t0
