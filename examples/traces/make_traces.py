"""Writes the example link traces of this directory (mahimahi's format:
one line per 1500-byte delivery opportunity, its millisecond; the trace
repeats after its last line). Run from anywhere: `python3 make_traces.py`.
Deterministic: the same files every time.

- const-12mbit.trace: one opportunity every millisecond: 12 Mbit/s.
- square-24-6mbit.trace: 1 s at 24 Mbit/s, then 1 s at 6 Mbit/s (period 2 s).
- lte-like.trace: 30 s of a synthetic cellular-like rate: every 100 ms
  the rate r follows a log-normal AR(1) process, log r' = mu + phi (log r
  - mu) + sigma e with e ~ N(0, 1), phi = 0.9, sigma = 0.35 and mu such
  that the median rate is 8 Mbit/s, clipped to 0.5-60 Mbit/s; with
  probability 0.01 per 100 ms an outage of 200-800 ms (rate 0) starts.
  Opportunities are spaced evenly within each millisecond's credit.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: Mbit/s of one opportunity per millisecond (1500 B x 8 / 1 ms).
MBPS_PER_OPPORTUNITY_MS = 12.0


def from_rates(rates_mbps: list[float], slot_ms: int) -> list[int]:
    """Opportunity instants (ms, from 1) for a rate per slot of ``slot_ms``."""
    out: list[int] = []
    credit = 0.0
    for k, rate in enumerate(rates_mbps):
        for ms in range(k * slot_ms + 1, (k + 1) * slot_ms + 1):
            credit += rate / MBPS_PER_OPPORTUNITY_MS
            while credit >= 1.0:
                out.append(ms)
                credit -= 1.0
    last = len(rates_mbps) * slot_ms
    if not out or out[-1] != last:
        out.append(last)  # the period: the last line is the trace's length
    return out


def lte_like(seconds: int = 30, seed: int = 7) -> list[float]:
    rng = random.Random(seed)
    mu, phi, sigma = math.log(8.0), 0.9, 0.35
    x, outage, rates = mu, 0, []
    for _ in range(seconds * 10):
        x = mu + phi * (x - mu) + sigma * rng.gauss(0.0, 1.0)
        if outage == 0 and rng.random() < 0.01:
            outage = rng.randint(2, 8)
        if outage > 0:
            outage -= 1
            rates.append(0.0)
        else:
            rates.append(min(60.0, max(0.5, math.exp(x))))
    return rates


def write(name: str, opportunities: list[int]) -> None:
    (HERE / name).write_text("".join(f"{ms}\n" for ms in opportunities))


def main() -> None:
    write("const-12mbit.trace", [1])
    write("square-24-6mbit.trace", from_rates([24.0] * 10 + [6.0] * 10, 100))
    write("lte-like.trace", from_rates(lte_like(), 100))


if __name__ == "__main__":
    main()
