"""A sweep's directory and its cache of finished points.

Each point is stored, the moment it finishes, as ``points/<key>.json``
(written whole or not at all), where ``key`` digests

- the point's resolved scenario (the engine's configuration, which
  carries its seed, the scenario as a person reads it, and its name,
  the sweep file's: all three are in the summary),
- the engine's build id (``_core.build_id()``: a digest of ``cc/`` and
  the engine's sources, so a changed algorithm or engine never reuses an
  old point),
- the front end's summary code (``metrics.py``, which shapes summary.json,
  and ``derive.py``) and the derived metrics the point computes.

A rerun into the same directory therefore skips every finished point, and
an interrupted sweep resumes where it stopped; a sweep file widened
with more values or seeds computes only the new points.

The directory is ccarena's: a container (rundir's one rule for
``--out``), created with a marker file (:data:`MARKER`); a directory
without it that holds anything is refused. Nothing in it is ever
deleted; files are only added or replaced.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path
from typing import Any

from ..rundir import CONTAINERS, open_container, write_file_atomic
from ..scenario import ResolvedScenario

#: Marks a directory as a sweep's.
MARKER = CONTAINERS["sweep"]
#: Finished points, one JSON file each.
POINTS = "points"


@cache
def code_id() -> str:
    """What, besides the scenario, decides a point's summary."""
    from .. import _core, metrics

    from . import derive

    front = hashlib.sha256(Path(metrics.__file__).read_bytes() + Path(derive.__file__).read_bytes()).hexdigest()[:16]
    return f"{_core.build_id()}-{front}"


def point_key(scenario: ResolvedScenario, derive: tuple[str, ...] = ()) -> str:
    """The cache key of a point (32 hex digits)."""
    text = json.dumps(
        {"config": scenario.config, "input": scenario.human, "name": scenario.name, "code": code_id(),
         **({"derive": list(derive)} if derive else {})},
        sort_keys=True,
        separators=(",", ":"),
        default=str,
    )
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def open_sweep_dir(out: Path) -> None:
    """Create ``out`` as a sweep directory, or check that it is one (to
    resume); anything else is refused (rundir's one rule for ``--out``)."""
    open_container(out, "sweep")
    (Path(out) / POINTS).mkdir(exist_ok=True)


def load_point(out: Path, key: str) -> dict[str, Any] | None:
    """The cached summary of point ``key``, or None if it has not finished
    (or its file is not one we can read: it is then computed again)."""
    try:
        record = json.loads((Path(out) / POINTS / f"{key}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("key") != key or not isinstance(record.get("summary"), dict):
        return None
    return record["summary"]


def store_point(out: Path, key: str, values: dict[str, Any], summary: dict[str, Any]) -> None:
    """Record a finished point (atomically)."""
    record = {"key": key, "values": values, "summary": summary}
    write_file_atomic(Path(out) / POINTS / f"{key}.json", json.dumps(record, sort_keys=True, indent=1) + "\n")
