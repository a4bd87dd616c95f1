"""The issue's behaviour targets, each checked on the full 120-s example
scenario through the real simulator (each example runs once per session).

Thresholds are the issue's; where it says "heavily" or "a few RTTs" the
definition and its reason are given next to the test. Reference figures:
BBQ paper (Ma et al.), BBR paper (Cardwell et al. 2016, Figs. 5 and 8),
Hock et al. 2017, and real Linux on our machines (quoted in the issue).
"""

from __future__ import annotations

import statistics
from functools import cache

import pytest

import ccarena
from conftest import EXAMPLES

pytestmark = pytest.mark.behaviour

ALL_EXAMPLES = sorted(p.stem for p in EXAMPLES.glob("*.toml"))


@cache
def run(name: str) -> ccarena.Result:
    return ccarena.run(EXAMPLES / f"{name}.toml")


def shares(result: ccarena.Result) -> list[float]:
    return [f["share"] for f in result.flows]


def test_bbr_long_rtt_flow_takes_at_least_85_percent():
    # BBQ paper: 87.3 vs 6.3 Mbit/s; Linux on our machines: 94% / 6%.
    result = run("bbr-rtt-unfairness")
    assert [f["rtt_ms"] for f in result.flows] == [10.0, 50.0]
    assert result.flows[1]["share"] >= 0.85, shares(result)


def test_two_bbr_flows_with_equal_rtt_are_fair():
    result = run("bbr-equal-rtt")
    assert result.summary["jain"] >= 0.98, shares(result)


#: Seeds of cubic-rtt the CUBIC target is judged over. A CUBIC pair swings
#: on ~10-s scales and, with the host model, each seed is one sample of it:
#: seeds 1-6 gave the 10 ms flow 56.8 / 65.5 / 61.4 / 61.2 / 57.7 / 65.2%
#: (mean 61.3%); live Linux, three 120-s runs of the same example on
#: different days, 58.3 / 63.5 / 65.5% (docs/live.md).
CUBIC_SEEDS = range(1, 7)


def test_cubic_short_rtt_flow_takes_at_least_60_percent():
    # On average over seeds: one run of a CUBIC pair is one sample.
    results = [run("cubic-rtt")] + [ccarena.run(EXAMPLES / "cubic-rtt.toml", overrides={"seed": seed})
                                    for seed in CUBIC_SEEDS if seed != 1]
    assert all(r.flows[0]["rtt_ms"] == 10.0 for r in results)
    short = [r.flows[0]["share"] for r in results]
    assert statistics.mean(short) >= 0.60, short


def retransmit_fraction(result: ccarena.Result, index: int) -> float:
    """Retransmitted segments per delivered segment, in the window."""
    delivered = result.raw["flows"][index]["delivered_bytes_window"] / result.scenario.config["mss"]
    return result.flows[index]["retransmits"] / max(delivered, 1.0)


def test_bbr_dominates_cubic_in_a_shallow_buffer_and_retransmits_heavily():
    # Linux: BBR 89.5%. "Heavily" means both:
    # - BBR retransmits at least 1% of the segments it delivers in the
    #   window. In 0.5 BDP, BBR's 2-BDP in-flight cap exceeds what the path
    #   holds (BDP + buffer = 1.5 BDP), so the queue overflows in every
    #   ProbeBW cycle and BBR, which ignores loss, keeps losing part of each
    #   probe. For contrast, the same pair in a 5-BDP buffer
    #   (bbr-vs-cubic-deep) measured 0.16%: 1% is a 6x margin above that,
    #   and the shallow run measured 1.7%.
    # - BBR retransmits at least 5x as many segments as CUBIC (measured
    #   12x), although CUBIC is the flow that keeps backing off: the losses
    #   are BBR's doing (Hock et al. 2017 saw BBR's losses in small buffers
    #   orders of magnitude above CUBIC's).
    result = run("bbr-vs-cubic-shallow")
    bbr, cubic = result.flows
    assert (bbr["cc"], cubic["cc"]) == ("bbr", "cubic")
    assert bbr["share"] >= 0.80, shares(result)
    assert retransmit_fraction(result, 0) >= 0.01, (bbr["retransmits"], retransmit_fraction(result, 0))
    assert bbr["retransmits"] >= 5 * cubic["retransmits"], (bbr["retransmits"], cubic["retransmits"])


def test_bbr_and_cubic_split_a_deep_buffer_roughly_evenly():
    # Linux: BBR 47.5%.
    result = run("bbr-vs-cubic-deep")
    assert result.flows[0]["cc"] == "bbr"
    assert 0.40 <= result.flows[0]["share"] <= 0.60, shares(result)


def test_single_bbr_flow_fills_the_link_with_a_small_queue():
    # BBR paper Fig. 5: full utilisation, queue near empty after Drain.
    result = run("bbr-single-40ms")
    rtt_ms = result.flows[0]["rtt_ms"]
    assert rtt_ms == 40.0
    assert result.summary["utilization"] >= 0.97
    assert result.summary["queue_delay_ms"]["p50"] <= 0.1 * rtt_ms


def test_single_bbr_flow_drains_its_startup_queue_within_a_few_rtts():
    # Startup (gain 2/ln2) ends with ~1.9 BDP queued, held for the three
    # rounds of the full-pipe test; Drain (gain ln2/2) then empties it at
    # ~0.65 x the link rate, i.e. in ~3 RTTs. "A few RTTs": within 5 RTTs
    # of the moment the Startup queue starts to fall, the queue is below
    # 10% of the base RTT's worth of bytes, and from 10 RTTs after that on
    # the median queueing delay is too. The queue length (instantaneous,
    # at 10 ms samples) times the timing: the sojourn-time series lags the
    # queue by the delay itself.
    result = run("bbr-single-40ms")
    rtt_s = result.flows[0]["rtt_ms"] / 1e3
    small_ms = 0.1 * rtt_s * 1e3
    link = result.link.to_pydict()
    queue_ms = [b * 8 / (r * 1e6) * 1e3 for b, r in zip(link["queue_bytes"], link["rate_mbps"])]
    samples = list(zip(link["t_s"], queue_ms, link["queue_delay_ms"]))
    startup = [s for s in samples if s[0] <= 2.0]
    peak_ms = max(q for _, q, _ in startup)
    assert peak_ms > 0.5 * rtt_s * 1e3, f"Startup should build a queue (peak {peak_ms:.1f} ms)"
    t_fall = max(t for t, q, _ in startup if q >= 0.9 * peak_ms)
    drained = [t for t, q, _ in samples if t_fall < t <= t_fall + 5 * rtt_s and q <= small_ms]
    assert drained, f"Startup queue ({peak_ms:.0f} ms) not drained within 5 RTTs of {t_fall:.2f} s"
    after = [d for t, _, d in samples if t >= t_fall + 10 * rtt_s]
    assert statistics.median(after) <= small_ms


def test_a_spurious_rto_after_an_rtt_step_is_undone():
    # CUBIC's RTT steps from 20 to 800 ms at 10 s: the ACKs in flight come
    # after the RTO, which fires once (cwnd 1, Loss). The next ACK echoes a
    # TSval from before the retransmission (Eifel): Linux undoes the RTO
    # (cwnd back to its value before, Open) instead of slow-starting from
    # 1 and timing out again (live Linux: 62 -> 1 -> 64 within 0.1 s).
    result = run("rtt-step-cubic")
    assert result.flows[0]["rtos"] == 1, result.flows[0]
    ts = result.timeseries.to_pydict()
    rows = list(zip(ts["t_s"], ts["cwnd"], ts["ca_state"]))
    before = max(c for t, c, _ in rows if 9.5 <= t < 10.0)
    after = [(c, s) for t, c, s in rows if 10.6 <= t <= 11.0]
    assert all(s == 0 and c >= 0.9 * before for c, s in after), (before, after)


def test_bbr_keeps_its_rate_under_one_percent_random_loss():
    # BBR paper Fig. 8: BBR stays near the link rate up to ~15% loss.
    result = run("random-loss-bbr")
    assert result.summary["goodput_total_mbps"] >= 90.0


def test_cubic_collapses_under_one_percent_random_loss():
    # BBR paper Fig. 8: CUBIC's throughput falls by 10x at 0.1% loss and more.
    result = run("random-loss-cubic")
    assert result.summary["goodput_total_mbps"] <= 10.0


def test_web_search_flows_next_to_a_bulk_bbr_flow_are_slowed_down():
    # examples/workload-websearch-next-to-bbr.toml: BBR keeps the 1-BDP
    # buffer nearly full and takes what the workload leaves; the short
    # CUBIC flows take twice their time alone, the 1-10 MB ones over ten
    # times (next to bulk CUBIC: 1.07 and 1.28).
    result = run("workload-websearch-next-to-bbr")
    (workload,) = result.summary["workloads"]
    slowdown = {b["bin"]: b["slowdown"]["p50"] for b in workload["bins"]}
    assert slowdown["<=100KB"] > 2 and slowdown["1MB-10MB"] > 10, slowdown
    assert workload["refused"] == 0 and workload["window"]["completed"] > 700
    assert result.summary["queue_delay_ms"]["p50"] > 0.8 * 10  # of a 10-ms buffer


@pytest.mark.parametrize("name", ALL_EXAMPLES)
def test_conservation(name):
    result = run(name)
    cons = result.summary["conservation"]
    for flow in cons["flows"]:
        assert flow["sent"] == flow["arrived"] + flow["dropped"] + flow["in_network"], flow
        assert flow["balanced"]
        assert flow["sent"] > 0
    assert 0 < cons["max_queue_bytes"] <= cons["buffer_bytes"]
    assert max(result.link.column("queue_bytes").to_pylist()) <= cons["buffer_bytes"]
    assert 0 < result.summary["utilization"] <= 1.0
    # Per interval the link sends at most its rate (plus one packet that may
    # straddle the interval boundary).
    interval_s = result.scenario.config["interval_ns"] / 1e9
    slack_mbps = 1514 * 8 / interval_s / 1e6
    link = result.link.to_pydict()
    for tx, rate in zip(link["tx_mbps"], link["rate_mbps"]):
        assert tx <= rate + slack_mbps
    # Goodput cannot exceed what the links carried: the flows through each
    # link (a topology's, by their paths) no more than its rate.
    cfg = result.scenario.config
    for k, link_cfg in enumerate([cfg["bottleneck"], *cfg.get("links", [])]):
        through = [f["goodput_mbps"] for f, fc in zip(result.summary["flows"], cfg["flows"], strict=True)
                   if k in fc.get("path", [0])]
        assert sum(through) <= link_cfg["rate_bps"] / 1e6


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_bbr_cws_gives_cubic_a_share_back_and_retransmits_far_less_than_bbr(seed):
    # examples/bbr-cws-vs-cubic.toml (20 Mbit/s, 40 ms, 0.5 BDP, 0.6 ms of
    # ACK jitter). Measured, seeds 1-5: BBR-CWS 65.0-71.6% with 102-146
    # retransmits (seeds 1-20: 62.1-76.3%, mean 70.1%; live Linux
    # 66.9-78.1% over 22 runs); BBR in its place 88.2-89.2% with 856-951.
    # (Before the core's round restart on entering Recovery reached
    # BBR-CWS: seeds 1-20 64.4-72.9%, mean 69.7%.) Bounds:
    # BBR-CWS at most 82% (above every seed of 20, below BBR's 88%), CUBIC
    # at least 18%, and at most a quarter of BBR's retransmits (measured a
    # seventh to a tenth).
    cws = ccarena.run(EXAMPLES / "bbr-cws-vs-cubic.toml", overrides={"seed": seed})
    bbr = ccarena.run(EXAMPLES / "bbr-cws-vs-cubic.toml",
                      overrides={"seed": seed, "flow.0.cc": "bbr", "flow.0.params": {}})
    assert [f["cc"] for f in cws.flows] == ["bbr_cws", "cubic"]
    assert bbr.flows[0]["share"] >= 0.80, shares(bbr)
    assert cws.flows[0]["share"] <= 0.82, shares(cws)
    assert cws.flows[1]["share"] >= 0.18, shares(cws)
    # In the window (10-60 s): Startup's losses, alike for both, are left out.
    assert cws.flows[0]["retransmits"] * 4 <= bbr.flows[0]["retransmits"]
