"""Small statistics over repeated seeds: mean with a Student-t confidence
interval (and that interval cut to what the quantity can take), and
Kendall's rank correlation (the scorecard's stability)."""

from __future__ import annotations

import math
from collections.abc import Sequence

#: Two-sided 95% Student-t critical values t(0.975, df) for df = 1..30
#: (standard tables); beyond 30 degrees of freedom the normal 1.96 is
#: within 2% of t.
_T95 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)


def mean_ci95(values: Sequence[float]) -> tuple[float, float]:
    """The mean of ``values`` and the half-width of its 95% confidence
    interval (Student t over the seeds; NaN for a single value)."""
    xs = [float(v) for v in values if v is not None and math.isfinite(v)]
    if not xs:
        return math.nan, math.nan
    n = len(xs)
    mean = sum(xs) / n
    if n < 2:
        return mean, math.nan
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1))
    t = _T95[n - 2] if n - 1 <= len(_T95) else 1.96
    return mean, t * sd / math.sqrt(n)


def clipped_interval(
    mean: float | None, half_width: float | None, bounds: tuple[float | None, float | None]
) -> tuple[float, float] | None:
    """``mean ± half_width`` cut to the values the quantity can take
    (``bounds``; None: unbounded on that side), or None without an
    interval. With few seeds Student t's interval is wide: over 2 seeds
    t = 12.7, and a queueing delay's interval would reach below 0 ms."""
    if mean is None or half_width is None or not math.isfinite(mean) or not math.isfinite(half_width):
        return None
    low, high = mean - half_width, mean + half_width
    if bounds[0] is not None:
        low = max(low, bounds[0])
    if bounds[1] is not None:
        high = min(high, bounds[1])
    return low, high


def kendall_tau(a: Sequence[object], b: Sequence[object]) -> float:
    """Kendall's tau-b between two rankings of the same items (each a list
    of items, best first)."""
    items = list(a)
    if sorted(map(str, items)) != sorted(map(str, b)) or len(items) < 2:
        raise ValueError("two rankings of the same items (at least two) are needed")
    pos_b = {item: i for i, item in enumerate(b)}
    concordant = discordant = 0
    for i in range(len(items)):
        for j in range(i + 1, len(items)):
            # items[i] is ranked above items[j] in a; is it in b too?
            if pos_b[items[i]] < pos_b[items[j]]:
                concordant += 1
            else:
                discordant += 1
    return (concordant - discordant) / (concordant + discordant)
