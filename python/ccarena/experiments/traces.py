"""Reading telemetry: windows, smoothing, episodes, cwnd-limitation.

Telemetry samples (cwnd, in-flight, mode, gains) are taken at the end of
each interval; goodput and queue delay are interval averages.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

# BBR/BBQ modes as cc/include/bbr_core.h reports them (cc_mode), for the analyses.
from ..cc_modes import DRAIN, PROBE_BW, PROBE_RTT, STARTUP  # noqa: F401

if TYPE_CHECKING:
    from .framework import Outcome


def window(t: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Intervals ending in (lo, hi]."""
    return (t > lo + 1e-9) & (t <= hi + 1e-9)


def mean_over(t: np.ndarray, x: np.ndarray, lo: float, hi: float) -> float:
    sel = window(t, lo, hi) & np.isfinite(x)
    return float(x[sel].mean()) if sel.any() else math.nan


def peak(t: np.ndarray, x: np.ndarray) -> tuple[float, float]:
    """(largest finite value of ``x``, the time it is first reached); NaNs
    if ``x`` has none (a live run's column its bottleneck does not
    measure, e.g. a flow's queue behind the kernel's bfifo)."""
    finite = np.isfinite(x)
    if not finite.any():
        return math.nan, math.nan
    i = int(np.argmax(np.where(finite, x, -np.inf)))
    return float(x[i]), float(t[i])


def trailing_mean(x: np.ndarray, n: int) -> np.ndarray:
    """Mean of the last ``n`` samples (fewer at the start)."""
    x = np.nan_to_num(np.asarray(x, dtype=float))
    csum = np.concatenate(([0.0], np.cumsum(x)))
    idx = np.arange(1, len(x) + 1)
    lo = np.maximum(idx - n, 0)
    return (csum[idx] - csum[lo]) / (idx - lo)


def time_to_reach(t: np.ndarray, x: np.ndarray, threshold: float, after: float, smooth_n: int = 1) -> float:
    """Seconds from ``after`` until the trailing mean of ``x`` over
    ``smooth_n`` intervals first reaches ``threshold``; NaN if never."""
    smooth = trailing_mean(x, smooth_n)
    hits = np.nonzero((t > after) & (smooth >= threshold))[0]
    return float(t[hits[0]] - after) if len(hits) else math.nan


def episodes(t: np.ndarray, flag: np.ndarray) -> list[tuple[float, float]]:
    """(start, end) of each run of consecutive True samples; start is the
    beginning of the first interval, end the end of the last."""
    flag = np.asarray(flag, dtype=bool)
    if not flag.any():
        return []
    step = float(t[1] - t[0]) if len(t) > 1 else float(t[0])
    edges = np.diff(np.concatenate(([0], flag.astype(np.int8), [0])))
    starts = np.nonzero(edges == 1)[0]
    ends = np.nonzero(edges == -1)[0] - 1
    return [(float(t[s]) - step, float(t[e])) for s, e in zip(starts, ends)]


def cwnd_limited(cwnd: np.ndarray, inflight: np.ndarray, slack: float = 2.0) -> np.ndarray:
    """Samples where in-flight is within ``slack`` packets of cwnd: the
    sender could not send more (the paper's "CWND-bounded")."""
    return np.asarray(inflight) >= np.asarray(cwnd) - slack


def fraction(flag: np.ndarray, sel: np.ndarray) -> float:
    sel = np.asarray(sel, dtype=bool)
    return float(np.asarray(flag)[sel].mean()) if sel.any() else math.nan


def mean_and_range(values: Sequence[float]) -> tuple[float, float, float]:
    arr = np.asarray(values, dtype=float)
    return float(arr.mean()), float(arr.min()), float(arr.max())


def rtt(run: Outcome, index: int = 0, column: str = "rtt_ms") -> np.ndarray:
    """The flow's latest RTT sample per interval, ms (NaN before the first:
    the engine writes 0 there); ``column="srtt_ms"``: TCP's smoothed RTT
    (the live engine has only this one: its ``rtt_ms`` is srtt too)."""
    x = np.asarray(run.flow[column][index], dtype=float).copy()
    x[~(x > 0)] = np.nan
    return x


def jain(x: np.ndarray) -> float:
    """Jain's index of the values ``x`` (NaN if they are all zero)."""
    x = np.asarray(x, dtype=float)
    sq = float((x * x).sum())
    return float(x.sum() ** 2 / (len(x) * sq)) if sq > 0 else math.nan


def binned(run: Outcome, col: str, step_s: float, *, total: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(bin end times, values[flows, bins]) of a flow column resampled to
    ``step_s``: the mean of each bin's samples (goodput), or their sum
    (``total``: counts such as retransmits). The run's interval must divide
    ``step_s``."""
    t = run.t_s
    values = np.nan_to_num(run.flow[col])
    dt = float(t[1] - t[0]) if len(t) > 1 else float(t[0])
    k = max(1, int(round(step_s / dt)))
    n = len(t) // k
    shaped = values[:, : n * k].reshape(values.shape[0], n, k)
    out = shaped.sum(axis=2) if total else shaped.mean(axis=2)
    return t[k - 1 : n * k : k], out
