"""Rows of the "paper vs ccarena" table, and when they agree.

The paper reports single runs with no error bars. A number of ours
*agrees* when the paper's value lies within our seed range widened by a
tolerance per kind of quantity (below): the seed range is our measured
run-to-run spread, the tolerance what we take as the paper's own (a
testbed run differs from the next by about that much in BBR measurement
studies: a few percent of the link, a fifth of a delay). Anything else is
reported as a difference, with the reason the traces give.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .framework import Comparison

#: Tolerances, in the quantity's own unit.
TOL_SHARE = 0.03  # 3 percentage points of the link
TOL_MBPS_PER_100 = 3.0  # 3% of a 100 Mbit/s link
TOL_RELATIVE = 0.20  # delays, times, retransmissions, ratios: 20%


def spread(values: Sequence[float], fmt: str) -> str:
    """"lo-hi (n seeds)", or "" for a single value."""
    if len(values) < 2:
        return ""
    return f"{format(min(values), fmt)}-{format(max(values), fmt)} ({len(values)} seeds)"


def numeric(
    quantity: str,
    paper: float,
    values: Sequence[float],
    *,
    fmt: str,
    tol: float,
    unit: str = "",
    scale: float = 1.0,
    reason: str = "",
) -> Comparison:
    """A number the paper reports next to ours (the mean over ``values``).
    ``scale`` converts to the displayed unit (100 for percent)."""
    arr = np.asarray(values, dtype=float)
    mean = float(arr.mean())
    half_range = float(arr.max() - arr.min()) / 2
    agrees = abs(mean - paper) <= tol + half_range
    shown = [v * scale for v in values]
    return Comparison(
        quantity=quantity,
        paper=f"{format(paper * scale, fmt)}{unit}",
        ours=f"{format(mean * scale, fmt)}{unit}",
        spread=spread(shown, fmt),
        agrees=agrees,
        reason=reason,
    )


def share(quantity: str, paper: float, values: Sequence[float], reason: str = "") -> Comparison:
    return numeric(quantity, paper, values, fmt=".1f", unit="%", scale=100, tol=TOL_SHARE, reason=reason)


def relative(
    quantity: str, paper: float, values: Sequence[float], *, fmt: str, unit: str = "", reason: str = ""
) -> Comparison:
    return numeric(quantity, paper, values, fmt=fmt, unit=unit, tol=TOL_RELATIVE * abs(paper), reason=reason)


def claim(
    quantity: str, paper: str, ours: str, holds: bool, *, spread_text: str = "", reason: str = ""
) -> Comparison:
    """A qualitative statement of the paper, checked on our numbers."""
    return Comparison(quantity=quantity, paper=paper, ours=ours, spread=spread_text, agrees=holds, reason=reason)


def ours_only(quantity: str, ours: str, spread_text: str = "", note: str = "") -> Comparison:
    """A number the paper does not report (no verdict)."""
    return Comparison(quantity=quantity, paper="-", ours=ours, spread=spread_text, agrees=None, reason=note)


def bound(
    quantity: str, paper: str, values: Sequence[float], limit: float, *, below: bool, tol: float = TOL_SHARE,
    scale: float = 100, fmt: str = ".1f", unit: str = "%", where: str = "", reason: str = "",
) -> Comparison:
    """A bound the paper states ("< 10%"): it holds when the worst of our
    values is within ``tol`` of the bound on the right side."""
    worst = max(values) if below else min(values)
    holds = worst <= limit + tol if below else worst >= limit - tol
    ours = f"{'max' if below else 'min'} {format(worst * scale, fmt)}{unit}{f' ({where})' if where else ''}"
    return claim(quantity, paper, ours, holds, reason=reason)


def ratios(numerators: Sequence[float], denominators: Sequence[float]) -> list[float]:
    """Per-seed ratios (seed i of one algorithm against seed i of the other)."""
    return [n / d if d > 0 else float("inf") for n, d in zip(numerators, denominators, strict=True)]
