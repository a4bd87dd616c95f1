"""Hock et al.'s testbed as scenario documents, and the measures its
experiments share.

M. Hock, R. Bless, M. Zitterbart, "Experimental Evaluation of BBR
Congestion Control", IEEE ICNP 2017 (the talk's slides:
../shared/papers/hock-2017-bbr-evaluation-slides.txt; line numbers below
are that file's). The slides state (L94-L105): BBR of Linux 4.9, 1 and
10 Gbit/s, base RTT 20 ms, buffers of 160 ms (8 BDP) and 16 ms (0.8 BDP),
senders never application-limited, every experiment repeated 5 times.
Most results are pictures; each report states the claim it tests in the
slides' words; the claims judged are in claims.toml.

Choices where the slides are silent: the multi-flow experiments whose
slides name no rate (small buffer, intra-protocol, RTT fairness) run at
1 and 10 Gbit/s (L96); the large-buffer and inter-protocol ones at the
1 Gbit/s their backup slides name (L181, L131, L188); 60-s runs measured
from 20 s (CUBIC's first epoch at 1 Gbit/s in an 8-BDP buffer lasts
~20 s), BBR flows alone at 10 Gbit/s 30 s from 10 s (:func:`timing`);
all flows start together. Buffers are given in time at the bottleneck
rate (160 ms = 8 BDP of the 20 ms path), so a longer-RTT flow (hock-rtt)
does not enlarge them.
"""

from __future__ import annotations

from typing import Any

from ... import units
from .. import common, variants
from ..framework import Outcome, Paper, Variant

PAPER = Paper(
    key="hock",
    title="Hock et al.",
    citation="M. Hock, R. Bless, M. Zitterbart, *Experimental Evaluation of BBR Congestion Control*, IEEE ICNP "
    "2017 (talk slides): single flow, multiple flows in large and small buffers, BBR vs CUBIC, intra-protocol "
    "and RTT fairness on the simulator",
    file="hock-2017-bbr-evaluation-slides.txt",
)

#: The authors' BBR: Linux 4.9's (L22, L96), i.e. our BBR without the
#: ACK-aggregation allowance and the pacing margin Linux added later.
BBR = variants.older_linux(variants.BBR, "4.9")
CUBIC = variants.CUBIC
LABEL = {BBR.name: "BBR (Linux 4.9)", CUBIC.name: CUBIC.label}

#: L100: "RTT: 20ms".
RTT_MS = 20
#: L96: "1 Gbit/s and 10 Gbit/s". The slides name 1 Gbit/s for the large
#: buffer (L181) and BBR vs CUBIC (L131, L188); the other multi-flow
#: experiments run at both.
RATE_MBPS = 1000
HIGH_RATE_MBPS = 10_000
RATES_MBPS = (RATE_MBPS, HIGH_RATE_MBPS)
#: A run of BBR flows alone at 10 Gbit/s: BBR's steady state comes within
#: a second or two (no CUBIC epoch to wait for), so 30 s measured from
#: 10 s hold two ProbeRTTs, at half the simulation of a 60-s run.
BBR_ONLY_HIGH_DURATION_S = 30.0
BBR_ONLY_HIGH_FROM_S = 10.0
#: L102-L103: "Large: 160ms (= 8 bdp)", "Small: 16ms (= 0.8 bdp)".
LARGE_MS = 160
SMALL_MS = 16
BUFFERS_MS = (SMALL_MS, LARGE_MS)
#: L105: "Repeated every experiment 5 times" = our MIN_SEEDS.
SEEDS = variants.SEEDS
seeds = variants.seeds
DURATION_S = 60.0
#: Steady state: CUBIC's first epoch in 160 ms at 1 Gbit/s lasts ~20 s.
WINDOW_FROM_S = 20.0
QUICK_WINDOW_FROM_S = 10.0
INTERVAL = "100ms"

#: A --quick run gives no verdicts (one seed).
finish = common.finish
retransmit_rate = common.retransmit_rate
flow = variants.flow

SETUP = [
    f"Dumbbell, droptail bottleneck, base RTT {RTT_MS} ms split evenly between the data and ACK directions, "
    f"buffers of {LARGE_MS} ms and {SMALL_MS} ms at the bottleneck rate (8 and 0.8 BDP, L102-L103); BBR as Linux 4.9 "
    "ran it (the slides' kernel, L22: no ACK-aggregation allowance in cwnd, no pacing margin), paced; CUBIC unpaced; "
    "all flows start at 0 s and are never application-limited (iperf3, L104).",
    f"Each judged number is taken over seeds {', '.join(map(str, SEEDS))} (the slides: every experiment repeated "
    "5 times, L105); we report the mean and the min-max range. The slides give no spreads, so a number agrees when "
    "the distance from our mean to the slides' value or range is at most half our seed range (the rule under the "
    "table).",
]


def duration_s(quick: bool) -> float:
    return variants.QUICK_DURATION_S if quick else DURATION_S


def window_from_s(quick: bool) -> float:
    return QUICK_WINDOW_FROM_S if quick else WINDOW_FROM_S


def rates(quick: bool) -> tuple[int, ...]:
    """The rates a multi-flow experiment runs at: 10 Gbit/s only in a full
    run (a --quick run stays at 1 Gbit/s)."""
    return (RATE_MBPS,) if quick else RATES_MBPS


def rkey(rate_mbps: float) -> str:
    """A rate as run keys, tables and members show it ("10Gbit")."""
    return f"{rate_mbps / 1000:g}Gbit"


def timing(quick: bool, rate_mbps: float = RATE_MBPS, bbr_only: bool = False) -> tuple[float, float]:
    """(duration, measured from), s: a run of BBR flows alone at 10 Gbit/s
    is shorter (BBR_ONLY_HIGH_DURATION_S)."""
    if bbr_only and rate_mbps == HIGH_RATE_MBPS and not quick:
        return BBR_ONLY_HIGH_DURATION_S, BBR_ONLY_HIGH_FROM_S
    return duration_s(quick), window_from_s(quick)


def buffer_of(ms: float, rate_mbps: float = RATE_MBPS) -> str:
    """A buffer holding ``ms`` of the bottleneck's rate."""
    return f"{rate_mbps * ms / 8:g}kB"


def bkey(ms: float) -> str:
    return f"{ms:g}ms"


def scenario(flows: list[dict[str, Any]], *, seed: int, quick: bool, buffer_ms: float,
             rate_mbps: float = RATE_MBPS, interval: str | None = INTERVAL, bbr_only: bool = False) -> dict[str, Any]:
    """The testbed with ``flows``, measured from the steady state on
    (:func:`timing`)."""
    dur, lo = timing(quick, rate_mbps, bbr_only)
    return variants.scenario(flows, seed=seed, duration=dur, rate=f"{rate_mbps:g}Mbit",
                             buffer=buffer_of(buffer_ms, rate_mbps), window=(lo, dur), interval=interval)


def bdp_packets(rtt_ms: float = RTT_MS, rate_mbps: float = RATE_MBPS) -> float:
    """One BDP in full packets on the wire."""
    return rate_mbps * 1e6 / 8 * rtt_ms / 1e3 / units.PACKET_WIRE_BYTES


def share_of(run: Outcome, flows: list[int]) -> float:
    """The ``flows``' summed share of the window's goodput."""
    return sum(run.share(i) for i in flows)


def variant_label(v: Variant) -> str:
    return LABEL[v.name]


#: Telemetry :func:`over_own_bdp` needs.
OWN_BDP_COLUMNS = ("inflight", "cwnd", "bw_estimate_mbps")


def own_bdp_packets(run: Outcome, index: int, rtt_ms: float) -> "np.ndarray":
    """The flow's own BDP as BBR sees it, packets, per sample: its
    bandwidth estimate (BtlBw, payload) times its base RTT."""
    import numpy as np

    bw = np.asarray(run.flow["bw_estimate_mbps"][index], dtype=float)
    return bw * 1e6 / 8 * rtt_ms / 1e3 / units.MSS_BYTES


def over_own_bdp(run: Outcome, index: int, rtt_ms: float, lo: float, col: str = "inflight") -> float:
    """The median over the window's samples (after ``lo`` s) of the flow's
    ``col`` (in-flight, cwnd) over its own BDP: what the slides' "inflight
    cap of 2 bdp" (L154, L182) is measured by, in every experiment."""
    import numpy as np

    ratio = in_own_bdps(run, index, rtt_ms, col)[run.t_s > lo]
    ratio = ratio[np.isfinite(ratio)]
    return float(np.median(ratio)) if ratio.size else float("nan")


def in_own_bdps(run: Outcome, index: int, rtt_ms: float, col: str = "inflight") -> "np.ndarray":
    """The flow's ``col`` over its own BDP, per sample (NaN before it has
    a bandwidth estimate)."""
    import numpy as np

    bdp = own_bdp_packets(run, index, rtt_ms)
    x = np.asarray(run.flow[col][index], dtype=float)
    return np.divide(x, bdp, out=np.full(len(x), np.nan), where=bdp > 0)
