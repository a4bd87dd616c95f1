"""BBRv2 (cc/bbr2.c, Google's v2alpha tcp_bbr2.c on the v3 core) in the
simulator: on a real bottleneck (loss, CUBIC, an ECN marker), where the
point is what v2 shares with v3 and where it differs. The state machine
on a clean pipe is crates/cc-native/tests/bbr2.rs.

Each threshold comes with the figures measured (seeds as stated); a
threshold is a margin below the worst seed.
"""

from __future__ import annotations

import statistics

import pytest

import ccarena
from conftest import bottleneck_scenario

pytestmark = pytest.mark.behaviour

#: The BPF build's estimates of rs->tx_in_flight and rs->lost, run in the
#: simulator (bbr3_core.h, deviation 2): what the live engine's bbr2 runs.
ESTIMATES = {"estimate_tx_signals": 1}


def scenario(flows, *, buffer, seed, duration="60s", measure_from="20s", loss=None):
    """flows: (cc, rtt, params or None)."""
    return bottleneck_scenario(flows, buffer=buffer, seed=seed, duration=duration, measure_from=measure_from,
                               loss=loss)


def test_random_loss_below_the_threshold_keeps_goodput_high_above_it_is_congestion():
    # v3's loss response, which v2 shares (loss_thresh 2%, beta 0.3): 100
    # Mbit/s, 100 ms, 2 MB, 120 s from 20 s. Measured, seeds 1-3: 1% loss
    # 83.0-84.3 Mbit/s (v3 82.4-83.9), 5% 1.1-1.2 (v3 0.9-1.3).
    def goodput(loss):
        doc = scenario([("bbr2", "100ms", None)], buffer="2MB", seed=1, duration="120s", loss=loss)
        return ccarena.run(doc).summary["goodput_total_mbps"]

    assert goodput(0.01) >= 75.0
    assert goodput(0.05) <= 5.0


def test_ecn_is_off_as_in_v2alpha():
    # v2alpha's ECN logic is for lab tests, off by default (bbr_ecn_enable
    # = false), and so here: two flows at 2 ms behind a step marker at 20
    # packets keep the queue they keep without ECN, where v3 (AccECN,
    # eligible below 5 ms) holds the threshold. Measured, seed 1, 30 s:
    # p50 queue 4.22 ms with AccECN, 4.20 ms without; v3 2.29 ms.
    def p50(cc, ecn):
        doc = {"duration": "30s", "seed": 1, "measure": {"from": "10s"},
               "bottleneck": {"rate": "100Mbit", "buffer": "1MB", "mark_threshold": "20pkt"},
               "flow": [{"cc": cc, "rtt": "2ms", "ecn": ecn, "count": 2}]}
        return ccarena.run(doc).summary["queue_delay_ms"]["p50"]

    v2, v2_off, v3 = p50("bbr2", "accecn"), p50("bbr2", "off"), p50("bbr3", "accecn")
    assert abs(v2 - v2_off) <= 0.1 * v2_off, (v2, v2_off)
    assert v2 >= 1.5 * v3, (v2, v3)


def test_against_cubic_the_source_of_the_loss_signals_decides():
    # Tuned BBRv2 against CUBIC, 40 ms, 1 BDP (docs/live.md, "BBRv2
    # through BPF"): with v2's own exact tx_in_flight/lost it keeps the
    # inflight_hi of STARTUP's loss exit and its one-min_rtt probes barely
    # raise it; with the BPF build's per-round estimates, a larger flight
    # right after STARTUP passes as safe and inflight_hi rises with it.
    # Measured (2026-11-29, the timer wheel), seeds 1-5: exact 18.8, 18.8,
    # 20.8, 25.0, 23.8%; estimates 18.8, 38.5, 49.8, 48.1, 45.0%; live
    # Linux (the estimates, five runs) 33.3-54.6%, mean 45.2%. In seed 1
    # the two builds run the same run: whether a larger flight follows
    # STARTUP is the seed's, so the rule is over the seeds' median.
    def share(params, seed):
        doc = scenario([("bbr2_tuned", "40ms", params), ("cubic", "40ms", None)], buffer="1bdp", seed=seed)
        return ccarena.run(doc).summary["flows"][0]["share"]

    pairs = [(share(None, seed), share(ESTIMATES, seed)) for seed in range(1, 6)]
    assert all(exact <= 0.30 and estimated >= exact for exact, estimated in pairs), pairs
    assert statistics.median(estimated - exact for exact, estimated in pairs) >= 0.15, pairs
