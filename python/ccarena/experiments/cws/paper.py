"""The BBR-CWS paper's testbeds as scenario documents, and the measures
its figures use.

Song, Kim, Cho, "BBR-CWS: Improving the
Inter-Protocol Fairness of BBR", *Electronics* 2020, 9(5), 862
(../shared/papers/bbr-cws-song-2020.txt). Two testbeds:

- the physical one of Sec. 3 (Figs. 4-6): 100 Mbit/s, 10 ms RTT, one BBR
  and one CUBIC flow from one host;
- Mininet, Sec. 5 (Figs. 8-15): Table 2's scenarios, 50 and 20 Mbit/s at
  10 and 40 ms RTT; "two hosts sent data for 150 s, starting at the same
  time" (single flows: 60 s); shallow 0.5 BDP and deep 5 BDP (Sec. 5.4),
  0.8 BDP as "shallow" in Figs. 5, 14 and 15; Fig. 13 sweeps 0.2-6 BDP.

What the paper does not say (the measurement window, how Jain's index is
taken over time, the rate behind Figs. 13-15, the number of runs) is
chosen here once and stated in every report.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from .. import common, traces, variants
from ..framework import Outcome, Paper, Variant

PAPER = Paper(
    key="cws",
    title="the BBR-CWS paper",
    citation="Song, Kim, Cho, *BBR-CWS: Improving the Inter-Protocol Fairness of BBR*, Electronics "
    "2020, 9(5), 862: every figure with data (Figs. 4-6, 8-15) on the simulator",
    file="bbr-cws-song-2020.txt",
)

#: Table 2, scenarios 1-2: "50 Mbps", end-to-end delay 10 and 40 ms. The
#: paper shows no result for scenarios 3-4 (20 Mbit/s) and does not name
#: the rate of Figs. 13-15; Sec. 5.4 runs scenario 1, so we use 50 Mbit/s.
RATE = "50Mbit"
RATE_MBPS = 50
SHORT_MS = 10
LONG_MS = 40
#: Sec. 3 (Figs. 4-6): "The bottleneck bandwidth was 100 Mbps, and the
#: propagation round-trip time between two end-to-end hosts was set to 10 ms".
TESTBED_RATE = "100Mbit"
TESTBED_RATE_MBPS = 100
#: Sec. 5.4: "two hosts sent data for 150 s, starting at the same time".
DURATION_S = 150
#: Sec. 5.3: "send data for 60 s" (single flows, Fig. 8).
SINGLE_DURATION_S = 60
#: Sec. 5.4: "We set the shallow buffer to 0.5 BDP and 5 BDP for the deep buffer."
SHALLOW_BDP = 0.5
DEEP_BDP = 5.0
#: Figs. 5, 14, 15 call 0.8 BDP shallow.
SHALLOW_08_BDP = 0.8
#: Sec. 5.4: throughput and retransmissions "at 0.1 intervals" (seconds).
STEP_S = 0.1
SEEDS = variants.SEEDS
QUICK_DURATION_S = variants.QUICK_DURATION_S
QUICK_SINGLE_DURATION_S = 20

#: The paper's BBR: Linux 4.14 BBRv1; ours is cc/bbr.c (Linux 6.x BBRv1).
BBR = variants.BBR
CUBIC = variants.CUBIC
#: Algorithm 1 (cc/bbr_cws.c; its defaults are the paper's beta = 0.9,
#: delta = 0.01, floor 0.2, 3-RTT wait, cut to inflight/3).
BBR_CWS = Variant("bbr-cws", "bbr_cws", label="BBR-CWS")
#: Algorithm 1 with the text's reset (Sec. 4.2: "BBR-CWS resets the
#: upper_scaling_factor to 1" when a lower RTprop follows a cut), which the
#: listing lacks; cc/bbr_cws.c follows the listing by default. An ablation.
BBR_CWS_RESET = BBR_CWS.derive("bbr-cws-reset", {"reset_on_lower_rtprop": 1}, label="BBR-CWS, usf reset")
#: Algorithm 2 (cc/modest_bbr.c; w_max and S_min are its own choices,
#: the paper gives none).
MODEST = Variant("modest-bbr", "modest_bbr", label="Modest BBR")
def linux414(variant: Variant) -> Variant:
    """``variant`` under Linux 4.14's cwnd and pacing ("bbr-linux414"), the
    kernel the paper ran: an ablation next to BBR."""
    return variants.older_linux(variant, "4.14")


BBR_414 = linux414(BBR)

#: Display names of the variants in tables and legends, by name.
LABEL = {v.name: v.label for v in (BBR, CUBIC, BBR_CWS, BBR_CWS_RESET, MODEST, BBR_414)}

#: Telemetry column carrying BBR-CWS's upper_scaling_factor (cc/bbr_cws.c
#: exports it through the generic per-algorithm telemetry value). None
#: while the engine does not export it: the figures and rows that need it
#: then say so instead of failing.
USF_COLUMN: str | None = "cc_var"

SETUP = [
    "Dumbbell, droptail bottleneck, base RTTs split evenly between the data and ACK directions; CUBIC "
    "unpaced, the BBR variants paced (the paper enables fq on the BBR hosts only). Buffers in multiples of "
    "the bandwidth-delay product (rate x base RTT), in bytes (the paper does not say whether netem's limit "
    "was set in packets; a 0.5 BDP buffer at 50 Mbit/s and 10 ms is 31,250 B, 20.8 packets of 1500 B).",
    "Flows start together and every number is measured over the whole run (the paper plots \"over the entire "
    "transfer time\" and names no warm-up to exclude).",
    f"Each point is run with seeds {', '.join(map(str, SEEDS))}; we report the mean and the min-max range. The "
    "paper reports single runs without error bars: a number it states is taken to the precision it is stated to "
    "(\"10 s\" +-0.5 s), a bound or a range as stated, and a claim agrees when the distance from our mean to it is "
    "at most the larger of that and half our seed range (the rule beside each row; the claims are in "
    "experiments/cws/claims.toml).",
    "Our BBR is Linux 6.x BBRv1 (cc/bbr.c); the paper ran Linux 4.14, which lacks the ACK-aggregation "
    "allowance in cwnd and the 1% pacing margin. Where it matters an ablation with both switched off "
    "(\"BBR, Linux 4.14 cwnd/pacing\") runs next to it.",
    "The hosts are the simulator's default host model, measured on Linux (`host = \"linux\"`, docs/host.md), "
    "as in every other experiment: the paper does not describe its hosts' timing.",
]

#: How Jain's index is taken (the paper gives the formula but not the interval).
JAIN_SETUP = (
    "Jain's index F = (sum x)^2 / (n sum x^2), x the flows' throughput (L272-L273). The paper does not say over "
    "what interval x is taken; its text says the deep-buffer oscillation \"causes constantly low fairness, "
    "regardless of whether both flows reach the same average throughput\" (L56), which a whole-run average cannot "
    "show. So our primary F is taken on each flow's goodput per 0.1 s (the paper's sampling interval, L271) and "
    "averaged over the run's intervals; F on whole-run goodputs is the other reasonable reading, measured next to "
    "it for every claim on F: where the two give different verdicts the row says it depends on the metric."
)


seeds = variants.seeds


def duration_s(quick: bool) -> int:
    return QUICK_DURATION_S if quick else DURATION_S


def single_duration_s(quick: bool) -> int:
    return QUICK_SINGLE_DURATION_S if quick else SINGLE_DURATION_S


#: A buffer of ``bdp`` bandwidth-delay products (variants.buffer).
buffer = variants.buffer


def bdp_packets(rate_mbps: float, rtt_ms: float) -> float:
    """One BDP in MSS-sized segments (1448 B of payload), how cwnd is counted."""
    return rate_mbps * 1e6 / 8 * rtt_ms / 1e3 / 1448


#: A ``[[flow]]`` entry: flow(variant, rtt_ms, **extra) (variants.flow).
flow = variants.flow


def scenario(
    flows: list[dict[str, Any]],
    *,
    seed: int,
    duration: float,
    buffer_bdp: float,
    rate: str = RATE,
    interval: str | None = None,
) -> dict[str, Any]:
    """A scenario document: the whole run is the measurement window."""
    doc: dict[str, Any] = {
        "duration": f"{duration:g}s",
        "seed": seed,
        "measure": {"from": "0s", "to": f"{duration:g}s"},
        "bottleneck": {"rate": rate, "buffer": buffer(buffer_bdp)},
        "flow": flows,
    }
    if interval is not None:
        doc["output"] = {"interval": interval}
    return doc


def pair(variant: Variant, rtt_ms: float, *, seed: int, duration: float, buffer_bdp: float,
         rate: str = RATE, interval: str | None = None, count: int = 1) -> dict[str, Any]:
    """``count`` flows of ``variant`` (first) against as many CUBIC flows."""
    extra: dict[str, Any] = {"count": count} if count > 1 else {}
    return scenario([flow(variant, rtt_ms, **extra), flow(CUBIC, rtt_ms, **extra)], seed=seed, duration=duration,
                    buffer_bdp=buffer_bdp, rate=rate, interval=interval)


# --- Measures ------------------------------------------------------------


#: Jain's index of an array of values (traces.jain).
jain = traces.jain


def binned(run: Outcome, col: str, step_s: float = STEP_S, *, total: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """traces.binned with this paper's 0.1-s step by default (Figs. 9-12's bins)."""
    return traces.binned(run, col, step_s, total=total)


def group_goodput(run: Outcome, groups: list[list[int]], step_s: float = STEP_S) -> tuple[np.ndarray, np.ndarray]:
    """Goodput per ``step_s`` of groups of flows (their sum)."""
    t, g = binned(run, "goodput_mbps", step_s)
    return t, np.vstack([g[idx].sum(axis=0) for idx in groups])


def interval_jain(run: Outcome, lo: float = 0.0, hi: float = math.inf, groups: list[list[int]] | None = None,
                  step_s: float = STEP_S) -> float:
    """Jain's index on each flow's (or group's) goodput per ``step_s``,
    averaged over the bins ending in (lo, hi] in which anything was
    delivered."""
    if groups is None:
        t, g = binned(run, "goodput_mbps", step_s)
    else:
        t, g = group_goodput(run, groups, step_s)
    sel = traces.window(t, lo, hi) & (g.sum(axis=0) > 0)
    if not sel.any():
        return math.nan
    x = g[:, sel]
    per_bin = x.sum(axis=0) ** 2 / (x.shape[0] * (x * x).sum(axis=0))
    return float(per_bin.mean())


def whole_jain(run: Outcome, groups: list[list[int]] | None = None) -> float:
    """Jain's index of the flows' (or groups') goodput over the window."""
    good = np.array([f["goodput_mbps"] for f in run.flows], dtype=float)
    if groups is not None:
        good = np.array([good[idx].sum() for idx in groups])
    return jain(good)


def leader_changes(run: Outcome, a: list[int], b: list[int], smooth_s: float = 1.0, band: float = 0.1,
                   lo: float = 0.0, hi: float = math.inf) -> list[float]:
    """Times at which the lead changes between groups ``a`` and ``b``: the
    share of ``a`` in 1-s goodput crossing from above 50% + ``band`` to
    below 50% - ``band`` or back (the band keeps noise around 50% from
    counting)."""
    t, g = group_goodput(run, [a, b], smooth_s)
    total = g.sum(axis=0)
    share = np.divide(g[0], total, out=np.full_like(total, 0.5), where=total > 0)
    state = 0
    changes = []
    for ti, s in zip(t, share):
        if ti <= lo or ti > hi:
            continue
        now = 1 if s > 0.5 + band else -1 if s < 0.5 - band else 0
        if now and now != state:
            if state:
                changes.append(float(ti))
            state = now
    return changes


def probe_rtt_starts(run: Outcome, index: int) -> list[float]:
    """Start times of the flow's ProbeRTT episodes (needs cc_mode)."""
    return [lo for lo, _ in traces.episodes(run.t_s, run.flow["cc_mode"][index] == traces.PROBE_RTT)]


def has_usf(run: Outcome) -> bool:
    return USF_COLUMN is not None and USF_COLUMN in run.flow


def usf_mean(run: Outcome, index: int = 0) -> float:
    """The flow's mean upper_scaling_factor (NaN if not exported)."""
    if not has_usf(run):
        return math.nan
    x = np.asarray(run.flow[USF_COLUMN][index], dtype=float)
    return float(x[np.isfinite(x)].mean()) if np.isfinite(x).any() else math.nan


@functools.cache
def _engine_exports_usf() -> bool:
    """Does this build of the engine write :data:`USF_COLUMN`? (Asked once,
    with a 0.2-s run: the column arrived with BBR-CWS.)"""
    if USF_COLUMN is None:
        return False
    from ...api import run

    doc = scenario([flow(BBR, SHORT_MS)], seed=1, duration=0.2, buffer_bdp=1.0, interval="100ms")
    return USF_COLUMN in run(doc).timeseries.column_names


def usf_columns() -> tuple[str, ...]:
    """The telemetry columns a BBR-CWS run asks for to show its
    upper_scaling_factor: none while the engine does not export it."""
    return (USF_COLUMN,) if _engine_exports_usf() else ()


USF_TODO = (f"this build of the engine does not export BBR-CWS's upper_scaling_factor (telemetry column "
            f"`{USF_COLUMN}`), so it is not measured.")


def bkey(bdp: float) -> str:
    """A buffer size as run keys show it ("0.5", "5")."""
    return f"{bdp:g}"


#: A --quick run gives no verdicts (common.finish).
finish = common.finish


def stated(claim_id: str) -> float:
    """The number the paper states for a claim, as claims.toml holds it
    (for a figure's reference mark or a note's comparison; never a bar)."""
    from .. import claims

    claim = next(c for c in claims.of_paper(PAPER.key) if c.id == claim_id)
    return claim.interval[0]


#: How RTprop is read (the engine exports the sender's tcp_min_rtt, a
#: 5-minute minimum, not BBR's 10-s RTprop).
RTPROP_SETUP = (
    "RTprop (BBR's min_rtt) is not exported by the engine (its `min_rtt_ms` column is the TCP stack's 5-minute "
    "minimum), so we reconstruct it from the RTT samples taken every 10 ms as BBR keeps it: the running minimum, "
    "restarted at each ProbeRTT (BBR enters ProbeRTT exactly when its 10-s RTprop expires, and takes the next "
    "samples as the new RTprop). Sampling every 10 ms can miss the lowest sample, so this is an upper bound."
)


def rtprop(run: Outcome, index: int) -> np.ndarray:
    """BBR's RTprop over time, reconstructed from the flow's RTT samples
    (``rtt_ms``) and modes (``cc_mode``): see :data:`RTPROP_SETUP`."""
    rtt = np.asarray(run.flow["rtt_ms"][index], dtype=float)
    mode = run.flow["cc_mode"][index]
    out = np.full_like(rtt, np.nan)
    current = math.inf
    prev_mode = -1
    for i, (r, m) in enumerate(zip(rtt, mode)):
        if m == traces.PROBE_RTT and prev_mode != traces.PROBE_RTT:
            current = math.inf
        if np.isfinite(r) and r > 0:
            current = min(current, r)
        out[i] = current if np.isfinite(current) else np.nan
        prev_mode = m
    return out


def value_at(run: Outcome, series: np.ndarray, t: float) -> float:
    """``series`` (over the run's intervals) at time ``t``; NaN at an
    unknown time (NaN)."""
    if math.isnan(t):
        return math.nan
    idx = int(np.searchsorted(run.t_s, t))
    return float(series[min(idx, len(run.t_s) - 1)])
