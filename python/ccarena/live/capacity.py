"""What this host carries through the live testbed, measured once.

The live testbed forwards every packet in software: the senders' veth,
the router, the delay line's TUN device (twice), the bottleneck, the
receiver's veth, all on the machine's own cores. How fast that is depends
on the machine and on what else runs on it. Two machines of the same kind
(2 cores): one carried 5.1 Gbit/s flat out (`make bench-delayline`, a
10 Gbit/s bottleneck) and a 1 Gbit/s scenario cleanly at 955.6 Mbit/s; the
other carried 1.5 Gbit/s flat out and the 1 Gbit/s scenario only at
594-665 Mbit/s, with packets dropped by the host outside the bottleneck
(summary.json ``live.losses``).

So the first live run on a machine measures it: one CUBIC flow (10 ms)
through the real testbed behind a 10 Gbit/s bottleneck, far above what a
small machine forwards, for 6 s (goodput over the last 4 s). The figure
is cached per user (``$XDG_CACHE_HOME/ccarena/live-capacity.json``, else
``~/.cache/...``) together with what it depends on -- the delay line
binary (its SHA-256), the kernel release, the CPUs this process may use --
and measured again when any of them changes. ``ccarena live capacity
--measure`` measures again by hand (e.g. after measuring on a busy
machine); ``CCARENA_LIVE_CAPACITY=MBIT`` sets the figure, ``=off`` turns the
check off.

Before a run whose bottleneck (its fastest rate, with a schedule) asks for
more than 1/HEADROOM of that figure, the engine warns with both numbers:
the run goes ahead, but its result may be the host's rather than the
scenario's. It does not refuse: the figure moves with the machine's load,
and a warning that names it lets the user judge.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import platform
from pathlib import Path
from typing import Any

#: Bump when the measurement changes, so that old figures are measured again.
VERSION = 1
#: A scenario may ask for up to this fraction of the measured figure. At
#: 1/2: the 1 Gbit/s scenario passes on the machine that carried 5.1 Gbit/s
#: flat out (and ran it cleanly) and warns on the one that carried 1.5.
HEADROOM = 2.0
#: The measurement (one flow, the engine's kernel bottleneck and split).
SCENARIO: dict[str, Any] = {
    "duration": "6s",
    "measure": {"from": "2s"},
    "output": {"interval": "100ms"},
    "bottleneck": {"rate": "10Gbit", "buffer": "16MB"},
    "flow": [{"cc": "cubic", "rtt": "10ms"}],
}
ENV = "CCARENA_LIVE_CAPACITY"


def cache_path() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ccarena" / "live-capacity.json"


def host_key(binary: Path) -> dict[str, Any]:
    """What the figure depends on."""
    digest = hashlib.sha256(Path(binary).read_bytes()).hexdigest()
    return {"version": VERSION, "delay_line_sha256": digest, "kernel": platform.release(),
            "cpus": sorted(os.sched_getaffinity(0))}


def override() -> dict[str, Any] | None | str:
    """The environment's figure (a record), "off", or None (measure/cache)."""
    value = os.environ.get(ENV, "").strip()
    if not value:
        return None
    if value.lower() == "off":
        return "off"
    from ..errors import ScenarioError

    try:
        mbps = float(value)
    except ValueError:
        raise ScenarioError(ENV, f"expected a rate in Mbit/s or 'off', got {value!r}") from None
    if mbps <= 0:
        raise ScenarioError(ENV, f"expected a positive rate in Mbit/s, got {value!r}")
    return {"goodput_mbps": mbps, "source": ENV}


def cached(binary: Path) -> dict[str, Any] | None:
    """The cached record for this host, or None if absent or stale."""
    try:
        record = json.loads(cache_path().read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("key") != host_key(binary):
        return None
    if not isinstance(record.get("goodput_mbps"), (int, float)):
        return None
    return record


def store(binary: Path, result_summary: dict[str, Any]) -> dict[str, Any]:
    """Cache the measurement (a live run's summary); returns the record.
    A cache that cannot be written is not an error: the next run measures
    again."""
    flow = result_summary["flows"][0]
    live = result_summary["live"]
    record = {
        "key": host_key(binary),
        "goodput_mbps": round(float(flow["goodput_mbps"]), 1),
        "rtt_mean_ms": flow.get("rtt_mean_ms"),
        "delay_line_lateness_max_us": live["delay_line"].get("lateness_max_us"),
        "testbed_drops": live.get("losses", {}).get("testbed_total"),
        "measured_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "source": str(cache_path()),
    }
    from ..rundir import write_file_atomic

    try:
        write_file_atomic(cache_path(), json.dumps(record, indent=2) + "\n")
    except OSError:
        pass  # a cache: the next run measures again
    return record


def fastest_rate_bps(cfg: dict[str, Any]) -> int:
    bn = cfg["bottleneck"]
    return max([bn["rate_bps"]] + [c["rate_bps"] for c in bn["schedule"]])


def warning(cfg: dict[str, Any], record: dict[str, Any]) -> str | None:
    """The warning for a scenario asking for more than this host carries
    (see HEADROOM), or None."""
    rate_mbps = fastest_rate_bps(cfg) / 1e6
    carried = float(record["goodput_mbps"])
    if rate_mbps * HEADROOM <= carried:
        return None
    when = f", {record['measured_at'][:10]}" if record.get("measured_at") else ""
    return (f"ccarena: warning: live: the scenario's bottleneck ({rate_mbps:g} Mbit/s) is more than 1/{HEADROOM:g} "
            f"of what this host carried through the testbed flat out ({carried:g} Mbit/s; {record['source']}{when}): "
            "the host may drop and delay packets itself, so the result can be the machine's rather than the "
            "scenario's (summary.json: live.losses)")
