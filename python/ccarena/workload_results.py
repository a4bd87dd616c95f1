"""What a run reports of its workloads ([[workload]], scenario_workload.py):
each flow's completion time and slowdown (flows.parquet), and per
workload the counts and the completion times' and slowdowns' percentiles
by size bin (summary.json ``workloads``).

**Slowdown** is a flow's FCT over its FCT alone: the same flow on the empty
path (crates/sim/src/alone.rs), its time depending on its size in whole
segments only. Every distinct size of a workload's completed flows is run
alone once, exactly, when they add up to at most
:data:`EXACT_BUDGET_SEGMENTS` (10 million segments: a few thousand
web-search flows; summary.json says ``"fct_alone": "exact"``). A longer run
(100,000 web-search flows would need 2 x 10^8) is ``"interpolated"``: every
size up to :data:`EXACT_SEGMENTS` (1.45 MB) is still run alone, and larger
ones are interpolated linearly between runs at sizes 5% apart
(:data:`GRID_RATIO`), each interval halved where its midpoint is more than
1% off the line (a jump: a loss in slow start, a mode change), up to six
times. Alone on an empty path with a 1-BDP buffer, a flow's time is affine
in its size past slow start, with rare isolated spikes (a size whose last
segments are lost waits for an RTO) that no interpolation can see:
measured on 150 random sizes above 1.45 MB of web search at 1 Gbit/s
(tests/test_workloads.py; the default host model, with the receiver's
window growth of 2026-11-29), the mean error is 0.09% or less for CUBIC
at 10 and 100 ms and BBR at 100 ms (2 sizes of the 150 more than 2% off,
CUBIC at 10 ms, at most 4%), and 0.36% for BBR at 10 ms, where 8 of the
150 are more than 2% off and the largest 18% (before the receiver's
window growth: 0.8%, 4 sizes and a spike of 110%); with the earlier host model (`linux-stalls`) every
mean was below 0.5%, the largest error 49% (one CUBIC size at 10 ms).

**Size bins**: (0, 100 KB], (100 KB, 1 MB], (1 MB, 10 MB], (10 MB, inf):
pFabric's small and large flows (Alizadeh et al., SIGCOMM 2013, §5: "(0,
100KB]" and "(10MB, inf)"), whose middle is split at 1 MB as DCTCP's
short messages (100 KB-1 MB) and background flows; SI kilobytes, as every
ccarena size. Statistics cover the flows that arrived in the measurement
window: the fraction complete, and of those the mean and the nearest-rank
p50 and p99 of the FCT and the slowdown. A flow still in progress when the
run ends counts as unfinished and in none of the percentiles (long flows
are thus under-represented in a short run: see ``unfinished``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any


if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

#: Every size a workload's flows had is run alone when they add up to at
#: most this many segments (~10 s of the engine; a run of a few thousand
#: web-search flows)...
EXACT_BUDGET_SEGMENTS = 10_000_000
#: ...else the flows up to this many segments are run alone at their own size...
EXACT_SEGMENTS = 1000
#: Above, runs alone at sizes this factor apart bracket each flow's...
GRID_RATIO = 1.05
#: ...each bracket halved while its midpoint's time is further than this
#: (relative) from the line between its ends...
INTERPOLATION_TOLERANCE = 0.01
#: ...at most this many times (a bracket of 5% becomes one of 0.08%).
REFINEMENTS = 6
#: The engine's ``fct_ns`` of a flow the run's end found incomplete
#: (crates/sim/src/result.rs, WorkloadFlows::NOT_DONE).
NOT_DONE = (1 << 64) - 1
#: Size bins: (label, above bytes, at most bytes).
BINS = (("<=100KB", 0, 100_000), ("100KB-1MB", 100_000, 1_000_000), ("1MB-10MB", 1_000_000, 10_000_000),
        (">10MB", 10_000_000, math.inf))


def add_alone_fcts(config: Mapping[str, Any], raw: dict[str, Any]) -> None:
    """``raw["workload_flows"]["fct_alone_ns"]``: each flow's FCT alone
    (float ns; NaN for a flow not complete, or whose size alone did not
    complete by the run's end)."""
    import numpy as np

    from . import _core

    cols = raw["workload_flows"]
    raw["workload_alone"] = [None] * len(config["workloads"])
    alone = np.full(len(cols["workload"]), np.nan)
    mss = config["mss"]
    segments = -(-cols["size_bytes"].astype(np.int64) // mss)
    done = cols["fct_ns"] != np.uint64(NOT_DONE)
    text = json.dumps(config)
    for w in range(len(config["workloads"])):
        mine = done & (cols["workload"] == w)
        if not mine.any():
            continue

        def run(sizes: list[int], w: int = w) -> list[float]:
            times = _core.fcts_alone(text, w, [k * mss for k in sizes])
            return [math.nan if t is None else float(t) for t in times]

        needed = np.unique(segments[mine])
        runs, times = alone_runs(needed, run)
        raw["workload_alone"][w] = "exact" if np.isin(needed, runs).all() else "interpolated"
        alone[mine] = alone_times(segments[mine], runs, times)
    cols["fct_alone_ns"] = alone


def alone_runs(needed: "np.ndarray", run: Callable[[list[int]], list[float]]) -> tuple["np.ndarray", "np.ndarray"]:
    """The sizes (segments) run alone for flows of ``needed`` sizes
    (sorted, distinct), and their times: every one of them if they add up
    to at most EXACT_BUDGET_SEGMENTS; else every size up to
    EXACT_SEGMENTS, and above the points of the geometric grid that
    bracket the others, each bracket checked at its midpoint and halved
    where the time there is more than INTERPOLATION_TOLERANCE off the line
    between its ends (a jump: a loss, a mode change), at most REFINEMENTS
    times. ``run(sizes)`` gives the times alone of sizes (NaN: not
    complete)."""
    import numpy as np

    known: dict[int, float] = {}

    def measure(sizes: list[int]) -> None:
        new = sorted(set(sizes) - known.keys())
        known.update(zip(new, run(new), strict=True))

    if int(needed.sum()) <= EXACT_BUDGET_SEGMENTS:
        measure([int(k) for k in needed])
        return needed.copy(), np.asarray([known[int(k)] for k in needed])

    def interpolated(low: int, high: int) -> bool:
        """Whether a size strictly between ``low`` and ``high`` has no run."""
        first, end = np.searchsorted(needed, low, side="right"), np.searchsorted(needed, high)
        return any(int(k) not in known for k in needed[first:end])

    exact = [int(k) for k in needed if k <= EXACT_SEGMENTS]
    grid = _grid(int(needed[-1])) if needed[-1] > EXACT_SEGMENTS else []
    on_grid = sorted(set(grid) & {int(k) for k in needed})
    brackets = [(low, high) for low, high in zip(grid, grid[1:], strict=False) if interpolated(low, high)]
    measure(exact + on_grid + [end for bracket in brackets for end in bracket])
    for _ in range(REFINEMENTS):
        brackets = [(low, high) for low, high in brackets if high - low > 1 and interpolated(low, high)]
        if not brackets:
            break
        measure([(low + high) // 2 for low, high in brackets])
        split = []
        for low, high in brackets:
            mid = (low + high) // 2
            line = known[low] + (known[high] - known[low]) * (mid - low) / (high - low)
            if not abs(line - known[mid]) <= INTERPOLATION_TOLERANCE * known[mid]:
                split += [(low, mid), (mid, high)]
        brackets = split
    runs = np.asarray(sorted(known))
    return runs, np.asarray([known[k] for k in runs])


def _grid(top: int) -> list[int]:
    """The geometric grid's points from EXACT_SEGMENTS up to the first at or above ``top``."""
    points = [EXACT_SEGMENTS]
    while points[-1] < top:
        points.append(max(points[-1] + 1, math.ceil(points[-1] * GRID_RATIO)))
    return points


def alone_times(segments: "np.ndarray", runs: "np.ndarray", times: "np.ndarray") -> "np.ndarray":
    """Each flow's time alone (ns): its own size's run, or the linear
    interpolation between the runs bracketing it (NaN where one is)."""
    import numpy as np

    i = np.searchsorted(runs, segments)
    exact = (i < len(runs)) & (runs[np.minimum(i, len(runs) - 1)] == segments)
    lo, hi = np.maximum(i - 1, 0), np.minimum(i, len(runs) - 1)
    span = np.where(hi > lo, (runs[hi] - runs[lo]).astype(float), 1.0)
    between = times[lo] + (times[hi] - times[lo]) * (segments - runs[lo]) / span
    return np.where(exact, times[np.minimum(i, len(runs) - 1)], between)


def flow_columns(config: Mapping[str, Any], raw: Mapping[str, Any]) -> dict[str, "np.ndarray"]:
    """flows.parquet's columns, one row per workload flow in arrival order:
    ``workload``, ``start_s``, ``size_bytes``, ``fct_ms``, ``fct_alone_ms``,
    ``slowdown`` (NaN: not complete), ``retransmits``."""
    import numpy as np

    cols = raw["workload_flows"]
    done = cols["fct_ns"] != np.uint64(NOT_DONE)
    fct = np.where(done, cols["fct_ns"].astype(np.float64), np.nan)
    alone = cols["fct_alone_ns"]
    with np.errstate(invalid="ignore", divide="ignore"):
        slowdown = np.where(alone > 0, fct / alone, np.nan)
    return {
        "workload": cols["workload"].astype(np.uint32),
        "start_s": cols["start_ns"] / 1e9,
        "size_bytes": cols["size_bytes"].astype(np.uint64),
        "fct_ms": fct / 1e6,
        "fct_alone_ms": alone / 1e6,
        "slowdown": slowdown,
        "retransmits": cols["retransmits"].astype(np.uint64),
    }


def flow_table(config: Mapping[str, Any], raw: Mapping[str, Any]) -> "pa.Table":
    """flows.parquet."""
    import pyarrow as pa

    from .tables import _arrow

    return pa.table({name: _arrow(values) for name, values in flow_columns(config, raw).items()})


def summarize(cfg: Mapping[str, Any], human: Mapping[str, Any], raw: Mapping[str, Any],
              rounded: Callable[[float | None], float | None]) -> list[dict[str, Any]]:
    """summary.json's ``workloads``: per workload what it offered and the
    flows' completion times and slowdowns by size bin."""
    import numpy as np

    cols = flow_columns(cfg, raw)
    in_window = (cols["start_s"] * 1e9 >= cfg["measure_from_ns"]) & (cols["start_s"] * 1e9 < cfg["measure_to_ns"])
    out = []
    for w, (wl, given, counts) in enumerate(zip(cfg["workloads"], human["workload"], raw["workloads"], strict=True)):
        mine = in_window & (cols["workload"] == w)

        def stats(select: "np.ndarray") -> dict[str, Any]:
            fct = cols["fct_ms"][select]
            slowdown = cols["slowdown"][select]
            complete = ~np.isnan(fct)
            return {
                "flows": int(select.sum()),
                "completed": int(complete.sum()),
                "fct_ms": _percentiles(fct[complete], rounded),
                "slowdown": _percentiles(slowdown[~np.isnan(slowdown)], rounded),
            }

        size = cols["size_bytes"]
        bins = [{"bin": label, "above_bytes": low, "at_most_bytes": None if math.isinf(high) else high,
                 **stats(mine & (size > low) & (size <= high))} for label, low, high in BINS]
        every = stats(mine)
        out.append({
            "index": w,
            "cc": wl["cc"],
            "rtt_ms": rounded(wl["rtt_ns"] / 1e6),
            "arrival_rate_per_s": rounded(wl["arrival_rate_hz"]),
            "mean_size_bytes": rounded(given["mean_size_bytes"]),
            "offered_load": rounded(given["offered_load"]),
            "load_link": given["load_link"],
            # How fct_alone was found (module comment): each size run alone,
            # or above 1000 segments interpolated between runs.
            "fct_alone": raw["workload_alone"][w],
            # Whole run, as the engine counted them.
            "arrived": counts["arrived"],
            "refused": counts["refused"],
            "peak_active": counts["peak_active"],
            # Arrived in the window, and of those:
            "window": {"flows": every["flows"], "completed": every["completed"],
                       "unfinished": every["flows"] - every["completed"],
                       "fct_ms": every["fct_ms"], "slowdown": every["slowdown"]},
            "bins": bins,
        })
    return out


def _percentiles(values: "np.ndarray", rounded: Callable[[float | None], float | None]) -> dict[str, float | None]:
    """Mean, and nearest-rank p50 and p99 (None without values)."""
    import numpy as np

    if not len(values):
        return {"mean": None, "p50": None, "p99": None}
    ordered = np.sort(values)

    def rank(p: float) -> float:
        return float(ordered[max(math.ceil(p / 100 * len(ordered)), 1) - 1])

    return {"mean": rounded(float(values.mean())), "p50": rounded(rank(50)), "p99": rounded(rank(99))}


def lines(summary: Mapping[str, Any]) -> list[str]:
    """What `ccarena run` prints of each workload: its arrivals and the
    slowdowns by size bin."""
    out = []
    for w in summary.get("workloads", []):
        win = w["window"]
        head = (f"workload {w['index']} ({w['cc']}, {w['rtt_ms']:g} ms, load {w['offered_load']:.2f} of "
                f"{w['load_link']}, mean size {w['mean_size_bytes'] / 1e6:.3g} MB): "
                f"{win['flows']:,} flows arrived in the window, {win['completed']:,} completed, "
                f"{win['unfinished']:,} unfinished; {w['refused']:,} refused in the run")
        bins = ", ".join(f"{b['bin']} {_pair(b['slowdown'])}" for b in w["bins"] if b["flows"])
        out += [head, f"  slowdown p50/p99 by size: {bins or 'no flows'}"]
    return out


def _pair(p: Mapping[str, float | None]) -> str:
    if p["p50"] is None:
        return "n/a"
    return f"{p['p50']:.2f}/{p['p99']:.2f}"
