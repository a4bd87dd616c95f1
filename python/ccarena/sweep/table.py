"""points.parquet: one row per point, for pandas or polars.

Columns, in this order:

- ``point`` (grid position) and ``key`` (its cache key);
- one per axis, named by its dotted path (``bottleneck.rate``,
  ``flow.1.rtt``, ``seed``), holding the value as the sweep file gave it;
- the resolved setup: ``duration_s``, ``rate_mbps`` (the bottleneck's
  base rate), ``buffer_bytes``, ``aqm``, and per flow ``flow.I.cc``,
  ``flow.I.rtt_ms``;
- the summary (summary.json flattened): ``jain``, ``utilization``,
  ``goodput_total_mbps``, ``queue_delay_ms.mean`` / ``p50`` / ``p95`` /
  ``p99``, ``drops``, ... and per flow ``flow.I.share``,
  ``flow.I.goodput_mbps``, ``flow.I.retransmits``, ``flow.I.rtt_mean_ms``, ...

A sweep whose points have different numbers of flows has null where a
point has no flow I. The same points give the same bytes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

#: summary.json parts that are not measurements (the scenario is in the
#: setup columns, the conservation check is a test's business).
_NOT_MEASURED = ("engine", "scenario", "window", "conservation")


def flatten_summary(summary: Mapping[str, Any]) -> dict[str, Any]:
    """summary.json as flat ``dotted.name -> value`` columns."""
    row: dict[str, Any] = {}

    def put(prefix: str, value: Any) -> None:
        if isinstance(value, Mapping):
            for k, v in value.items():
                put(f"{prefix}.{k}" if prefix else k, v)
        else:
            row[prefix] = value

    for key, value in summary.items():
        if key in _NOT_MEASURED:
            continue
        if key == "flows":
            for flow in value:
                put(f"flow.{flow['index']}", {k: v for k, v in flow.items() if k != "index"})
        else:
            put(key, value)
    # One order whether the summary came fresh or from the cache (sorted
    # JSON), flows by number (flow.2 before flow.10).
    return dict(sorted(row.items(), key=lambda item: _natural(item[0])))


def _natural(name: str) -> tuple:
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in name.split("."))


def setup_columns(config: Mapping[str, Any], human: Mapping[str, Any]) -> dict[str, Any]:
    bottleneck = config["bottleneck"]
    row: dict[str, Any] = {
        "duration_s": config["duration_ns"] / 1e9,
        "rate_mbps": bottleneck["rate_bps"] / 1e6,
        "buffer_bytes": bottleneck["buffer_bytes"],
        "aqm": human.get("bottleneck", {}).get("aqm", "droptail"),
    }
    for i, flow in enumerate(config["flows"]):
        row[f"flow.{i}.cc"] = flow["cc"]
        row[f"flow.{i}.rtt_ms"] = flow["rtt_ns"] / 1e6
    return row


def write_points(path: Path, rows: Sequence[Mapping[str, Any]]) -> None:
    """Write the rows (dicts; missing keys are null) as Parquet, atomically."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ..rundir import atomic_file

    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(row))
    arrays = {name: _column([row.get(name) for row in rows]) for name in columns}
    with atomic_file(path) as tmp:
        pq.write_table(pa.table(arrays), tmp)


def _column(values: list[Any]) -> Any:
    """A column of the table: as Arrow infers it; integers beyond int64
    (seeds and u64 parameters reach 2^64 - 1) as uint64; mixed kinds (an
    axis of 1 and "2") as text."""
    import pyarrow as pa

    for kind in (None, pa.uint64()):
        try:
            return pa.array(values, kind)
        except OverflowError:
            continue  # an integer beyond int64: try uint64
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            break
    return pa.array([None if v is None else str(v) for v in values], pa.string())
