"""The BBQ paper's testbed as scenario documents.

S. Ma, J. Jiang, W. Wang, B. Li, "Fairness of Congestion-Based Congestion
Control: Experimental Evaluation and Analysis" (../shared/papers/
bbq-ma-rtt-fairness.txt). Sec. III-A/B: a dumbbell of netem-delayed
senders through one Linux bottleneck; 100 Mbit/s, a 2 MB per-port buffer,
RTTs of 10 ms and 50 ms unless stated, 120 s bulk flows. What the paper
does not say (start times, the measurement window, RED's averaging
weight, ...) is chosen here once and stated in every report.
"""

from __future__ import annotations

from typing import Any

from .. import variants
from ..framework import Paper, Variant

PAPER = Paper(
    key="bbq",
    title="the BBQ paper",
    citation="S. Ma, J. Jiang, W. Wang, B. Li, *Fairness of Congestion-Based Congestion Control: "
    "Experimental Evaluation and Analysis* (BBQ), every figure and table on the simulator, "
    "plus experiments beyond the paper",
    file="bbq-ma-rtt-fairness.txt",
)

RATE = "100Mbit"
#: Sec. III-A: "The switch buffer size per port is by default 2 MB".
BUFFER = "2MB"
#: Sec. III-B: "each flow lasts for 120 seconds".
DURATION_S = 120
SHORT_MS = 10
LONG_MS = 50
#: "Excluding the startup phase" (Fig. 1): we measure from 20 s, after
#: both flows have left Startup/Drain and the first ProbeRTT (~10 s).
WINDOW_FROM_S = 20
SEEDS = variants.SEEDS
QUICK_DURATION_S = variants.QUICK_DURATION_S
QUICK_WINDOW_FROM_S = 10

#: The paper's BBR: cc/bbr.c (Linux 6.x BBR v1, cc/include/bbr_core.h).
BBR = variants.BBR
#: BBQ with the parameters the paper recommends (Sec. V-C): alpha = 3 ms,
#: beta in [0.5%, 1%]. cc/bbq.c's defaults are these, so it sets none.
BBQ = Variant("bbq", "bbq", label="BBQ")
#: The failed first cut of Sec. V-A, "drain to exactly one BDP after
#: probing", without BBQ's probe cap (cc/bbq.c's variant switch).
FIRST_CUT = BBQ.derive("bbq-first-cut", {"first_cut": 1}, label="first cut (Sec. V-A)")


def linux49(variant: Variant) -> Variant:
    """``variant`` under Linux 4.9's cwnd and pacing ("bbr-linux49"): the
    paper ran Linux 4.9.18 (an ablation, used by bbq-fig1 and bbq-fig12)."""
    return variants.older_linux(variant, "4.9")


#: Display names of the variants in tables and legends, by name.
LABEL = {v.name: v.label for v in (BBR, BBQ, FIRST_CUT)}

SETUP = [
    "Dumbbell, bottleneck 100 Mbit/s, droptail buffer 2 MB (Sec. III-A), "
    f"{DURATION_S} s bulk flows (Sec. III-B: \"each flow lasts for 120 seconds\"), starting together at 0 s "
    "unless stated (our choice: the paper gives start times only for Fig. 1, where the 10 ms flow runs alone "
    "first); base RTTs split evenly between the data and ACK directions.",
    f"Shares and goodputs are measured over {WINDOW_FROM_S}-{DURATION_S} s (the paper says only "
    "\"excluding the startup phase\"; we chose 20 s, after Startup, Drain and the first ProbeRTT).",
    f"Each point is run with seeds {', '.join(map(str, SEEDS))} (the random ProbeBW start phase); "
    "we report the mean and the min-max range. The paper reports single runs without error bars, "
    "so a number agrees when the distance from our mean to the paper's value, range or bound is at most "
    "half our seed range (the rule under the table; the claims are in bbq/claims.toml).",
]


seeds = variants.seeds


def duration_s(quick: bool) -> int:
    return QUICK_DURATION_S if quick else DURATION_S


def window_from_s(quick: bool) -> int:
    return QUICK_WINDOW_FROM_S if quick else WINDOW_FROM_S


#: A ``[[flow]]`` entry: flow(variant, rtt_ms, **extra) (variants.flow).
flow = variants.flow


def scenario(
    flows: list[dict[str, Any]],
    *,
    quick: bool,
    seed: int = 1,
    rate: str = RATE,
    buffer: str = BUFFER,
    duration: float | None = None,
    window: tuple[float, float] | None = None,
    interval: str | None = None,
    **bottleneck: Any,
) -> dict[str, Any]:
    """A scenario document on the paper's testbed (defaults above)."""
    total = duration if duration is not None else duration_s(quick)
    return variants.scenario(flows, seed=seed, duration=total, rate=rate, buffer=buffer,
                             window=window if window is not None else (window_from_s(quick), total),
                             interval=interval, **bottleneck)
