"""Rows of the "paper vs ccarena" table, built on the verdict rules of
:mod:`.framework` (``within_spread``, ``fairer``; docs/experiments.md,
"When a row agrees").

The BBQ paper reports single runs without error bars, so a number of
ours agrees when the paper's value lies within our seed spread (half the
min-max range around our mean, >= 5 seeds); a paper that states a spread
passes it as ``paper_spread``. There are no project tolerances: a row is
judged against the paper's claim, as stated.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .framework import MIN_SEEDS, Comparison, Outcome, within_spread


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
    tol: float = 0.0,
    unit: str = "",
    scale: float = 1.0,
    reason: str = "",
) -> Comparison:
    """A number the paper reports next to ours (the mean over ``values``,
    one per seed), judged by ``framework.within_spread``. ``tol`` is the
    paper's *stated* spread (a half-width in the values' unit; 0 when it
    states none). ``scale`` converts to the displayed unit (100 for
    percent). A differing row without a ``reason`` gets one that states
    how far outside our spread the paper's value lies."""
    arr = np.asarray(values, dtype=float)
    mean = float(arr.mean())
    agrees = within_spread(paper, values, tol)
    shown = [v * scale for v in values]
    if agrees is False and not reason:
        half = float(arr.max() - arr.min()) / 2
        reason = (f"the paper's {format(paper * scale, fmt)}{unit} lies "
                  f"{format(abs(mean - paper) * scale, fmt)}{unit} from our mean, outside our seed spread of "
                  f"+-{format(half * scale, fmt)}{unit}.")
    if agrees is None and len(values) < MIN_SEEDS and not reason:
        reason = f"not judged: {len(values)} seed(s), a verdict needs {MIN_SEEDS}."
    return Comparison(
        quantity=quantity,
        paper=f"{format(paper * scale, fmt)}{unit}",
        ours=f"{format(mean * scale, fmt)}{unit}",
        spread=spread(shown, fmt),
        agrees=agrees,
        reason=reason,
    )


def share(quantity: str, paper: float, values: Sequence[float], reason: str = "") -> Comparison:
    """A share (0-1), shown in percent."""
    return numeric(quantity, paper, values, fmt=".1f", unit="%", scale=100, reason=reason)


def relative(
    quantity: str, paper: float, values: Sequence[float], *, fmt: str, unit: str = "", reason: str = ""
) -> Comparison:
    """A delay, time, count or ratio (ratios: per-seed values, ``ratios()``)."""
    return numeric(quantity, paper, values, fmt=fmt, unit=unit, reason=reason)


def claim(
    quantity: str, paper: str, ours: str, holds: bool | None, *, spread_text: str = "", reason: str = ""
) -> Comparison:
    """A qualitative statement of the paper, checked on our numbers."""
    return Comparison(quantity=quantity, paper=paper, ours=ours, spread=spread_text, agrees=holds, reason=reason)


def ours_only(quantity: str, ours: str, spread_text: str = "", note: str = "") -> Comparison:
    """A number the paper does not report (no verdict)."""
    return Comparison(quantity=quantity, paper="-", ours=ours, spread=spread_text, agrees=None, reason=note)


def live_share_delay(quantity: str, live_run: Outcome, sim_run: Outcome) -> Comparison:
    """A :func:`live` row of the first flow's share and the mean queueing
    delay, live and simulated."""

    def show(run: Outcome) -> str:
        return f"{100 * run.share(0):.1f}%, {run.queue_delay_mean_ms:.1f} ms"

    return live(quantity, show(live_run), show(sim_run))


def live(quantity: str, live_text: str, sim_text: str, note: str = "") -> Comparison:
    """A number measured on real Linux by ``reproduce --live`` in this
    run, next to the simulator's for the same scenario and seed. One live
    run is not judged (rule 3); the row is evidence for the others'
    reasons."""
    return Comparison(quantity=f"live Linux (--live): {quantity}", paper="-", ours=f"{live_text} (simulated: {sim_text})",
                      agrees=None, reason=note)


def bound(
    quantity: str, paper: str, values: Sequence[float], limit: float, *, below: bool, tol: float = 0.0,
    scale: float = 100, fmt: str = ".1f", unit: str = "%", where: str = "", reason: str = "",
    spread_text: str = "",
) -> Comparison:
    """A bound the paper states ("< 10%" at every point), tested as
    stated: it holds when the worst of ``values`` (per point or per seed)
    is on its side; ``tol`` is a spread the paper states (none: 0).
    ``spread_text`` prints the worst point's seed range."""
    worst = max(values) if below else min(values)
    holds = worst <= limit + tol if below else worst >= limit - tol
    ours = f"{'max' if below else 'min'} {format(worst * scale, fmt)}{unit}{f' ({where})' if where else ''}"
    return claim(quantity, paper, ours, holds, spread_text=spread_text, reason=reason)


def ratios(numerators: Sequence[float], denominators: Sequence[float]) -> list[float]:
    """Per-seed ratios (seed i of one algorithm against seed i of the other)."""
    return [n / d if d > 0 else float("inf") for n, d in zip(numerators, denominators, strict=True)]
