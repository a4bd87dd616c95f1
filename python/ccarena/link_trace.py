"""Link traces in mahimahi's format (`bottleneck.trace`): one line per
delivery opportunity, the millisecond at which the link may deliver one
MTU-sized packet; lines repeat for several in one millisecond, and the
trace repeats once its last millisecond has passed. The engine's side is
crates/sim/src/trace_link.rs.

A relative path in a scenario file is relative to that file
(``scenario.resolve``'s ``base_dir``); in a dict or TOML text to the
working directory.
"""

from __future__ import annotations

import hashlib
import stat
from pathlib import Path
from typing import Any

from .errors import ScenarioError

FIELD = "bottleneck.trace"
#: Bytes of text read at most (10^7 opportunities of up to ~10 characters).
MAX_TRACE_FILE_BYTES = 128 << 20


def summary_of(trace: dict[str, Any]) -> dict[str, Any]:
    """The resolved trace as summary.json records it: its size and a
    digest of its instants instead of every one (which can be millions)."""
    digest = hashlib.sha256(",".join(map(str, trace["opportunities_ns"])).encode()).hexdigest()
    return {"opportunities": len(trace["opportunities_ns"]), "period_ns": trace["period_ns"],
            "opportunity_bytes": trace["opportunity_bytes"], "opportunities_sha256": digest}


def read_opportunities_ms(path_text: str, max_opportunities: int) -> list[int]:
    """The trace's opportunity instants, ms, validated: non-negative
    integers, never decreasing, the last (the period) after 0."""
    path = Path(path_text)
    try:
        mode = path.stat().st_mode
    except OSError as err:
        raise ScenarioError(FIELD, f"cannot read {path_text!r}: {err.strerror or err}") from None
    if not stat.S_ISREG(mode):
        raise ScenarioError(FIELD, f"{path_text!r} is not a regular file")
    with open(path, "rb") as handle:
        data = handle.read(MAX_TRACE_FILE_BYTES + 1)
    if len(data) > MAX_TRACE_FILE_BYTES:
        raise ScenarioError(FIELD, f"{path_text!r} is larger than {MAX_TRACE_FILE_BYTES >> 20} MiB")
    out: list[int] = []
    for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
        text = line.strip()
        if not text:
            continue
        if not text.isdigit():
            raise ScenarioError(FIELD, f"{path_text!r} line {number}: {text[:20]!r} is not a whole number of ms")
        ms = int(text)
        if out and ms < out[-1]:
            raise ScenarioError(FIELD, f"{path_text!r} line {number}: {ms} ms is before the line above ({out[-1]} ms)")
        out.append(ms)
        if len(out) > max_opportunities:
            raise ScenarioError(FIELD, f"{path_text!r} has more than the engine's limit of {max_opportunities} lines")
    if not out or out[-1] == 0:
        raise ScenarioError(FIELD, f"{path_text!r} has no opportunity after 0 ms (its last line is its period)")
    return out
