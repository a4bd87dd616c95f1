"""Rows of the "paper vs ccarena" table that are not judged: numbers the
paper does not report (:func:`ours_only`), live-Linux evidence
(:func:`live`), and the helpers that format seed ranges and per-seed
ratios. Every judged row comes from a paper's claims table through
:mod:`.verdict`; nothing here decides a verdict.
"""

from __future__ import annotations

from collections.abc import Sequence

from .framework import Comparison, Outcome


def spread(values: Sequence[float], fmt: str) -> str:
    """"lo-hi (n seeds)", or "" for a single value."""
    if len(values) < 2:
        return ""
    return f"{format(min(values), fmt)}-{format(max(values), fmt)} ({len(values)} seeds)"


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


def ratios(numerators: Sequence[float], denominators: Sequence[float]) -> list[float]:
    """Per-seed ratios (seed i of one algorithm against seed i of the other)."""
    return [n / d if d > 0 else float("inf") for n, d in zip(numerators, denominators, strict=True)]
