"""The table ``ccarena sweep`` prints when it ends: a row per point of
the grid, its seeds folded into mean ± sd (sample standard deviation) —
the swept values, each flow's share, Jain's index and utilisation.
points.parquet has every number; this is the first look.

Wide sweeps stay readable: at most ``max_rows`` rows (the rest counted,
with where they are), and beyond :data:`MAX_SHARE_COLUMNS` flows the
shares fold into one column, the smallest and largest share of a point.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .spec import Point

#: Rows printed at most.
MAX_ROWS = 20
#: Up to this many flows get a share column each.
MAX_SHARE_COLUMNS = 4


def _mean_sd(values: Sequence[float | None], fmt: Callable[[float], str]) -> str:
    """``"mean ± sd"`` over seeds; the mean alone for one seed; n/a if none."""
    xs = [v for v in values if v is not None and math.isfinite(v)]
    if not xs:
        return "n/a"
    mean = fmt(statistics.fmean(xs))
    return mean if len(xs) < 2 else f"{mean} ± {fmt(statistics.stdev(xs))}"


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def summary_table(points: Sequence[Point], summaries: Sequence[Mapping[str, Any]], *,
                  axes: Sequence[str], max_rows: int = MAX_ROWS) -> str:
    """The table over ``points`` and their summaries (in grid order);
    ``axes`` are the sweep's axes but the seeds, which are folded."""
    groups: dict[tuple[str, ...], list[Mapping[str, Any]]] = {}
    for point, summary in zip(points, summaries, strict=True):
        # An axis of several paths ("flow.0.rtt,flow.1.rtt") shows their values joined.
        key = tuple(",".join(str(point.values[path]) for path in axis.split(",")) for axis in axes)
        groups.setdefault(key, []).append(summary)
    n_flows = max(len(s["flows"]) for s in summaries)
    per_flow = n_flows <= MAX_SHARE_COLUMNS
    share_heads = [f"flow {i} share %" for i in range(n_flows)] if per_flow else ["share % min-max"]
    header = [*axes, "seeds", *share_heads, "Jain", "utilisation %"]
    rows = []
    for key, runs in groups.items():
        shares = [[f["share"] for f in s["flows"]] for s in runs]
        if per_flow:
            share_cells = [_mean_sd([r[i] if i < len(r) else None for r in shares], _pct) for i in range(n_flows)]
        else:
            lows = [min(r) for r in shares if None not in r]
            highs = [max(r) for r in shares if None not in r]
            share_cells = ["n/a" if not lows else
                           f"{_pct(statistics.fmean(lows))}-{_pct(statistics.fmean(highs))}"]
        rows.append([*key, str(len(runs)), *share_cells,
                     _mean_sd([s["jain"] for s in runs], lambda x: f"{x:.3f}"),
                     _mean_sd([s["utilization"] for s in runs], _pct)])
    shown = rows[:max_rows]
    widths = [max(len(r[c]) for r in [header, *shown]) for c in range(len(header))]
    first_number = len(axes)
    lines = ["  ".join(cell.rjust(w) if c >= first_number else cell.ljust(w)
                       for c, (cell, w) in enumerate(zip(r, widths))).rstrip() for r in [header, *shown]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    if len(rows) > max_rows:
        lines.append(f"... {len(rows) - max_rows} more of {len(rows)} rows in points.parquet")
    seeds = max(len(runs) for runs in groups.values())
    if seeds > 1:
        lines.append("mean ± sd over seeds")
    return "\n".join(lines)
