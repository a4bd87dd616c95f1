"""BBRv3 (cc/bbr3.c, Google's v3 tcp_bbr.c) in the simulator: the
behaviours the issue names, on a real bottleneck (loss, queues, CUBIC),
next to BBR v1 where the point is the difference. The state machine on a
clean pipe (gains, probe clocks, PROBE_RTT) is crates/cc-native/tests/
bbr3.rs.

Each threshold comes with the figures measured over seeds 1-5 (the seed
moves the probe times, the random loss and CUBIC's start); a threshold is
the issue's where it gives one, else a margin below the worst seed.
"""

from __future__ import annotations

import pytest

import ccarena
from conftest import bottleneck_scenario

pytestmark = pytest.mark.behaviour


scenario = bottleneck_scenario


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_one_flow_fills_the_link_with_a_small_queue(seed):
    # 100 Mbit/s, 40 ms, buffer 1 BDP. Measured, seeds 1-5, with the
    # default host: utilisation 97.2-97.8%, mean queueing delay 6.0-8.7 ms,
    # 197-315 retransmits in the window; live Linux (our bbr3 through BPF,
    # one 40-s run, window 10-40 s): 97.8%, 5.9 ms, 209. With ideal hosts
    # 96.7%, 2.3-3.0 ms and none: the host's bunched ACKs raise the
    # ACK-aggregation allowance, and its stalls' bursts overflow the buffer
    # now and then (v3 pays 2.5% for PROBE_RTT at half the BDP every 5 s,
    # v1 ~1% at 4 packets every 10 s).
    r = ccarena.run(scenario([("bbr3", "40ms")], buffer="1bdp", seed=seed, duration="60s", measure_from="10s"))
    assert r.summary["utilization"] >= 0.90
    assert r.summary["queue_delay_ms"]["mean"] <= 12.0  # above the worst seed; 30% of the RTT


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_two_flows_with_the_same_rtt_share_fairly(seed):
    # 2 x 40 ms, 1 BDP, window 30-120 s. Measured, seeds 1-5: Jain
    # 0.985-0.999, the smaller share 43.8-48.7% (v1: Jain 0.994-1.000).
    # v3 converges more slowly than v1: bw_hi forgets a higher rate only
    # after two probe cycles (2-3 s each), v1's filter after 10 rounds.
    r = ccarena.run(scenario([("bbr3", "40ms"), ("bbr3", "40ms")], buffer="1bdp", seed=seed))
    assert r.summary["jain"] >= 0.97
    assert min(f["share"] for f in r.flows) >= 0.40


def _goodput(cc, loss, seed):
    # The BBR paper's Fig. 8 setting (examples/random-loss-bbr.toml).
    r = ccarena.run(scenario([(cc, "100ms")], buffer="2MB", seed=seed, loss=loss, measure_from="20s"))
    return r.summary["goodput_total_mbps"]


@pytest.mark.parametrize("seed", [1, 2])
def test_one_percent_random_loss_keeps_goodput_high(seed):
    # 1% is below v3's loss threshold (2%): probes are not judged "too
    # high" by random loss, but every round of DOWN/CRUISE sees a loss
    # (~9 per round at this BDP), so bw_lo/inflight_lo are cut by 30% per
    # round, floored at what the last round delivered: the rate sags
    # between probes and REFILL restores it every 2-3 s. Measured, seeds
    # 1-5: 82.4-83.9 Mbit/s (v1, which ignores loss: 91.1-91.4).
    assert _goodput("bbr3", 0.01, seed) >= 75.0


@pytest.mark.parametrize("seed", [1, 2])
def test_five_percent_random_loss_costs_v3_far_more_than_v1(seed):
    # 5% is above the threshold on nearly every flight: STARTUP exits on
    # loss within a few rounds (>= 6 loss events in a recovery round, loss
    # > 2% of tx_in_flight), each probe is cut at once (inflight_hi =
    # max(tx_in_flight, 0.7 * target)) and the lower bounds fall by 30%
    # every round: v3 treats the loss as congestion, as CUBIC does.
    # Measured, seeds 1-5: 0.9-1.3 Mbit/s against v1's 87.5-87.9 (CUBIC:
    # 0.5). The issue asks for at least 2x lower.
    v3, v1 = _goodput("bbr3", 0.05, seed), _goodput("bbr", 0.05, seed)
    assert v3 < v1 / 2, (v3, v1)


@pytest.mark.parametrize("buffer", ["0.5bdp", "1bdp"])
def test_against_cubic_in_a_shallow_buffer_v3_is_fairer_than_v1(buffer):
    # 40 ms each, window 30-120 s. Measured, seeds 1-5, Jain: 0.5 BDP
    # v3 0.80-0.88 vs v1 0.60-0.61; 1 BDP v3 0.74-0.79 vs v1 0.62 (v1
    # takes ~90%, v3 68-80%: its loss response leaves CUBIC room). At
    # 2 BDP the order turns (v3 0.95-0.97, v1 0.99-1.00): not asserted.
    for seed in (1, 2):
        jain = {
            cc: ccarena.run(scenario([(cc, "40ms"), ("cubic", "40ms")], buffer=buffer, seed=seed)).summary["jain"]
            for cc in ("bbr3", "bbr")
        }
        assert jain["bbr3"] > jain["bbr"] + 0.05, jain


def test_the_bpf_builds_estimates_of_tx_in_flight_and_lost_act_like_the_exact_signals():
    # Mainline lacks rs->tx_in_flight and rs->lost: the BPF build estimates
    # them per round (bbr3_core.h, deviation 2); estimate_tx_signals = 1
    # runs the estimates here. Measured, seeds 1-3: 1% random loss
    # 83.5-83.8 Mbit/s estimated vs 82.4-83.8 exact; against CUBIC at
    # 0.5 BDP, Jain 0.80-0.83 vs 0.80-0.86 (2026-11-29; one seed's Jain
    # moves by 0.06 from seed to seed, so the means over the three are
    # compared). (At 2% loss, the threshold itself, they part: 50-54 vs
    # 9-17 Mbit/s; see docs/algorithms.md.)
    est = {"estimate_tx_signals": 1}

    def run(flows, seed=1, **kw):
        doc = scenario([(cc, rtt) for cc, rtt, _ in flows], seed=seed, **kw)
        for f, (_, _, params) in zip(doc["flow"], flows, strict=True):
            if params:
                f["params"] = params
        return ccarena.run(doc).summary

    lossy = dict(buffer="2MB", loss=0.01, measure_from="20s")
    exact = run([("bbr3", "100ms", None)], **lossy)["goodput_total_mbps"]
    estimated = run([("bbr3", "100ms", est)], **lossy)["goodput_total_mbps"]
    assert abs(estimated - exact) <= 0.05 * exact, (estimated, exact)
    shallow = dict(buffer="0.5bdp")
    seeds = (1, 2, 3)
    exact = sum(run([("bbr3", "40ms", None), ("cubic", "40ms", None)], seed=s, **shallow)["jain"] for s in seeds) / 3
    estimated = sum(run([("bbr3", "40ms", est), ("cubic", "40ms", None)], seed=s, **shallow)["jain"] for s in seeds) / 3
    assert abs(estimated - exact) <= 0.05, (estimated, exact)


def _step_marked(cc, rtt, ecn="accecn", duration="30s"):
    doc = {"duration": duration, "seed": 1, "measure": {"from": "10s"},
           "bottleneck": {"rate": "100Mbit", "buffer": "1MB", "mark_threshold": "20pkt"},
           "flow": [{"cc": cc, "rtt": rtt, "ecn": ecn, "count": 2}]}
    return ccarena.run(doc).summary


def test_ecn_holds_the_queue_at_the_marking_threshold_for_low_rtt_flows():
    # Two flows with AccECN behind a DCTCP-style step marker at 20 packets
    # (2.42 ms at 100 Mbit/s). At 2 ms, ECN-eligible (min RTT <= 5 ms),
    # v3's inflight_lo/inflight_hi follow the CE fraction: median queue
    # 2.24 ms, utilisation 99.8%, no drops. BBR v1 ignores CE: 8.06 ms. At
    # 40 ms v3 ignores CE too (v3's RTT gate): 45 ms.
    v3 = _step_marked("bbr3", "2ms")
    v1 = _step_marked("bbr", "2ms")
    far = _step_marked("bbr3", "40ms")
    threshold_ms = 20 * 1514 * 8 / 100e6 * 1e3
    assert v3["drops"] == 0 and v3["marks"] > 0 and v3["utilization"] >= 0.95
    assert v3["queue_delay_ms"]["p50"] <= 1.2 * threshold_ms
    assert v1["queue_delay_ms"]["p50"] >= 2 * threshold_ms
    assert far["queue_delay_ms"]["p50"] >= 5 * threshold_ms


def test_ecn_logic_needs_precise_feedback_classic_ece_is_ignored():
    # v3 uses CE marks only where TCP_ECN_LOW says the endpoints give
    # precise per-packet feedback (bbr3_core.h, deviation 4): here AccECN.
    # Classic ECN's ECE is sticky (every ACK until CWR), so v3 ignores it:
    # at 2 ms its queue is the one it keeps without ECN, while with AccECN
    # it holds the marking threshold. Measured, seed 1, 20 s: p50 queue
    # 2.27 ms with AccECN, 5.06 ms classic, 4.98 ms without ECN (before v3
    # required AccECN, classic gave 1.90 ms: one ECE read as a round of CE).
    threshold_ms = 20 * 1514 * 8 / 100e6 * 1e3
    precise = _step_marked("bbr3", "2ms", ecn="accecn", duration="20s")
    classic = _step_marked("bbr3", "2ms", ecn="classic", duration="20s")
    unmarked = _step_marked("bbr3", "2ms", ecn="off", duration="20s")
    assert precise["queue_delay_ms"]["p50"] <= 1.2 * threshold_ms, precise["queue_delay_ms"]
    assert classic["marks"] > 0 and classic["drops"] == 0
    q_classic, q_off = classic["queue_delay_ms"]["p50"], unmarked["queue_delay_ms"]["p50"]
    assert abs(q_classic - q_off) <= 0.15 * q_off, (q_classic, q_off)
    assert q_classic >= 1.5 * threshold_ms, q_classic
