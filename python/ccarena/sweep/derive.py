"""Derived metrics: numbers a sweep point needs from its telemetry, not
its summary, computed where the point runs (so only the numbers travel
and get cached). A sweep asks for them by name, ``[sweep] derive =
["convergence"]``; they appear in the point's summary under ``derived``
and in points.parquet as ``derived.NAME``.

``convergence`` — how fast the flows settle after one joins and after
one leaves (the scorecard's convergence criteria), from the per-flow
goodput of every telemetry interval, smoothed over :data:`WINDOW_S`:

- ``join_s``: after the last flow to start joins, the time until Jain's
  index of the active flows' smoothed goodputs reaches :data:`JAIN_SETTLED`
  and stays there for :data:`HOLD_S` (at least :data:`WINDOW_S`: the
  first smoothed value after the join ends a window after it); if it never does before the next event
  (a flow leaving, or the end), the whole span (a censored value, which
  ranks as worst);
- ``leave_s``: after the first flow to stop leaves, the time until the
  remaining flows' total goodput reaches :data:`RECLAIMED` of the total
  before it left and stays there for :data:`HOLD_S` (censored likewise).

None where the scenario has no such event.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

#: Smoothing window of the goodput series, s: long enough to average
#: over BBR's 8-phase gain cycle at RTTs up to ~100 ms.
WINDOW_S = 1.0
#: Jain's index counted as converged (0.95: two flows' shares within
#: about 39/61).
JAIN_SETTLED = 0.95
#: Fraction of the earlier total goodput the remaining flows must reclaim.
RECLAIMED = 0.9
#: How long the condition must hold, s (a passing swing is not convergence).
HOLD_S = 2.0


def _smoothed(t_s: np.ndarray, goodput: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """goodput (flows x intervals) averaged over the trailing WINDOW_S."""
    dt = float(np.median(np.diff(t_s))) if len(t_s) > 1 else 1.0
    k = max(1, int(round(WINDOW_S / dt)))
    kernel = np.ones(k) / k
    smooth = np.array([np.convolve(row, kernel, mode="full")[: len(row)] for row in goodput])
    return t_s, smooth


def _first_held(t_s: np.ndarray, ok: np.ndarray, start: float, end: float) -> float:
    """Seconds from ``start`` to the first instant (at least a window after
    it) from which ``ok`` holds for HOLD_S, within [start, end];
    ``end - start`` if none."""
    sel = np.flatnonzero((t_s >= start + WINDOW_S) & (t_s <= end))
    for n, i in enumerate(sel):
        if not ok[i]:
            continue
        horizon = t_s[i] + HOLD_S
        if horizon > end:
            break
        span = sel[n:][t_s[sel[n:]] <= horizon]
        if ok[span].all():
            return float(t_s[i] - start)
    return end - start


def convergence(summary: Mapping[str, Any], t_s: np.ndarray, goodput: np.ndarray) -> dict[str, float | None]:
    flows = summary["flows"]
    duration = float(summary["scenario"]["config"]["duration_ns"]) / 1e9
    starts = [float(f["start_s"]) for f in flows]
    stops = [
        (cfg.get("stop_ns") or 0) / 1e9 or duration for cfg in summary["scenario"]["config"]["flows"]
    ]
    t_s, smooth = _smoothed(t_s, goodput)
    result: dict[str, float | None] = {"join_s": None, "leave_s": None}
    join = max(starts)
    if join > 0:
        leaves_after = [s for s in stops if s > join and s < duration]
        end = min(leaves_after) if leaves_after else duration
        active = [i for i in range(len(flows)) if starts[i] <= join and stops[i] > join]
        x = smooth[active]
        jain = np.where(x.sum(axis=0) > 0, x.sum(axis=0) ** 2 / (len(active) * (x ** 2).sum(axis=0) + 1e-300), 0.0)
        result["join_s"] = round(_first_held(t_s, jain >= JAIN_SETTLED, join, end), 3)
    leaving = [s for s in stops if s < duration]
    if leaving:
        leave = min(leaving)
        remaining = [i for i in range(len(flows)) if stops[i] > leave and starts[i] < leave]
        if remaining:
            before_sel = (t_s > leave - WINDOW_S) & (t_s <= leave)
            before = float(smooth[:, before_sel].sum(axis=0).mean()) if before_sel.any() else 0.0
            total = smooth[remaining].sum(axis=0)
            result["leave_s"] = round(_first_held(t_s, total >= RECLAIMED * before, leave, duration), 3)
    return result


#: name -> (telemetry columns it needs, function of (summary, t_s, {column: flows x intervals})).
DERIVED: dict[str, tuple[tuple[str, ...], Callable[..., dict[str, Any]]]] = {
    "convergence": (("goodput_mbps",), lambda summary, t_s, cols: convergence(summary, t_s, cols["goodput_mbps"])),
}


def columns_for(names: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(col for name in names for col in DERIVED[name][0]))


def compute(names: tuple[str, ...], summary: Mapping[str, Any], t_s: np.ndarray,
            flow: Mapping[str, np.ndarray]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in names:
        out.update({f"{name}.{k}": v for k, v in DERIVED[name][1](summary, t_s, flow).items()})
    return out
