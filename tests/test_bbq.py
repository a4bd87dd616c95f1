"""BBQ (cc/bbq.c) through the simulator: the BBQ paper's headline case,
10 ms vs 50 ms on 100 Mbit/s with a 2 MB droptail buffer, 120 s, measured
from 20 s (examples/bbq-rtt-fairness.toml), against BBR in the same
scenario; the remaining flow's ramp when its competitor leaves (Fig. 13);
the capped probe itself; and the paper's first cut (Sec. V-A, Fig. 12).

Thresholds are the issue's. What the simulator measured, seeds 1-10
(`ccarena run examples/bbq-rtt-fairness.toml --set seed=N`; since the
simulator's PSH-driven ACKs of 2026-11-26):
  BBQ: share of the 10 ms flow 45.8-52.5%, utilisation 98.1-98.4%, mean
       queueing delay 12.6-13.7 ms;
  BBR: share 8.6-10.3% (seed 1, the one tested: 9.8%), mean queueing
       delay 36.3-37.8 ms.
So the 40% / 95% / -50% bounds hold with 5.8 points, 3.1 points and 12
points to spare on the worst seed; they are the paper's claims (51.4 vs
42.5 Mbit/s, 23.4 -> 8.3 ms), not fitted to our numbers. BBR's <= 10%
has 0.2 points: the noiseless simulator gives BBR's 10 ms flow ~2.7
points more than real Linux (7.0%) because its ProbeRTTs drift apart
(docs/live.md, "BBR 10 vs 50 ms: ProbeRTT alignment"); the runs are
deterministic, so the margin is exact, not a flake risk.
"""

from __future__ import annotations

import json
from functools import cache

import pytest

import ccarena
from conftest import EXAMPLES

pytestmark = pytest.mark.behaviour

EXAMPLE = EXAMPLES / "bbq-rtt-fairness.toml"
AS_BBR = {"flow.0.cc": "bbr", "flow.0.params": {}, "flow.1.cc": "bbr", "flow.1.params": {}}
FIRST_CUT = {"flow.0.params": {"first_cut": 1}, "flow.1.params": {"first_cut": 1}}
#: Goodput of a full 100 Mbit/s link: 1448 payload bytes per 1514 on the wire.
LINK_GOODPUT_MBPS = 100 * 1448 / 1514


def run(*overrides: dict[str, object]) -> ccarena.Result:
    """The example with ``overrides`` merged in order; each distinct run
    once per session."""
    merged: dict[str, object] = {}
    for o in overrides:
        merged.update(o)
    return _run(json.dumps(merged, sort_keys=True))


@cache
def _run(overrides_json: str) -> ccarena.Result:
    return ccarena.run(EXAMPLE, overrides=json.loads(overrides_json))


def bbq() -> ccarena.Result:
    return run()


def bbr() -> ccarena.Result:
    return run(AS_BBR)


def shares(result: ccarena.Result) -> list[float]:
    return [f["share"] for f in result.flows]


def test_the_example_runs_bbq_with_the_papers_parameters():
    result = bbq()
    assert [f["cc"] for f in result.flows] == ["bbq", "bbq"]
    assert [f["rtt_ms"] for f in result.flows] == [10.0, 50.0]
    assert result.summary["window"]["from_s"] == 20.0
    assert result.scenario.human["flow"][0]["params"] == {"alpha": "3ms", "beta": 0.01}


def test_short_rtt_flow_gets_at_least_40_percent():
    # Paper: 51.4 vs 42.5 Mbit/s (54.7%); BBR in the same scenario: ~7% (ours: 9.8%).
    assert bbq().flows[0]["share"] >= 0.40, shares(bbq())
    assert bbr().flows[0]["share"] <= 0.10, shares(bbr())


def test_utilisation_stays_at_least_95_percent():
    assert bbq().summary["utilization"] >= 0.95


def test_mean_queueing_delay_is_at_least_halved_relative_to_bbr():
    # Paper: 23.4 ms (BBR) -> 8.3 ms (BBQ), -65%.
    q_bbq = bbq().summary["queue_delay_ms"]["mean"]
    q_bbr = bbr().summary["queue_delay_ms"]["mean"]
    assert q_bbq <= 0.5 * q_bbr, (q_bbq, q_bbr)


def test_remaining_flow_fills_the_link_within_2_s_after_its_competitor_leaves():
    # Fig. 13: the 10 ms flow stops at 110 s; the paper's 50 ms flow took
    # 1.7 s to saturate the link. Once the queue drains, BBQ is BBR again
    # and probes for a whole MinRTT. "Reaches 90%": a 0.5 s average of its
    # goodput at 90% of the link's (measured: 0.8-1.1 s, seeds 1-5).
    result = run({"flow.0.stop": "110s", "measure.to": "110s"})
    ts = result.timeseries.to_pydict()
    goodput = [(t, g) for t, f, g in zip(ts["t_s"], ts["flow"], ts["goodput_mbps"], strict=True) if f == 1 and t > 110]
    window = 5  # 100 ms samples
    reached = next(
        (
            goodput[i - 1][0] - 110
            for i in range(window, len(goodput) + 1)
            if sum(g for _, g in goodput[i - window : i]) / window >= 0.9 * LINK_GOODPUT_MBPS
        ),
        None,
    )
    assert reached is not None and reached <= 2.0, reached


def probe_lengths_ms(result: ccarena.Result, flow: int, since_s: float = 20.0) -> list[float]:
    """Lengths of the flow's ProbeBW 5/4 phases from `since_s` on, from 1 ms
    samples (each run of consecutive samples at gain 1.25; partial runs at
    the edges dropped)."""
    ts = result.timeseries.to_pydict()
    samples = [
        (t, m == 2 and abs(g - 1.25) < 1e-9)
        for t, f, m, g in zip(ts["t_s"], ts["flow"], ts["cc_mode"], ts["pacing_gain"], strict=True)
        if f == flow and t >= since_s
    ]
    lengths, start = [], None
    for i, (t, probing) in enumerate(samples):
        if probing and start is None:
            start = i
        elif not probing and start is not None:
            if start > 0:
                lengths.append((i - start) * 1.0)
            start = None
    return lengths


def test_both_flows_probe_for_alpha_under_the_persistent_queue():
    # The mechanism: with the queue standing, each 5/4 phase ends on the
    # first ACK after alpha = 3 ms, for the 50 ms flow too (BBR: >= 50 ms,
    # and 10-19 ms for the 10 ms flow, which probes on until its inflight
    # reaches 5/4 BDP). Seen in 1 ms samples as runs of 3-4 samples;
    # measured 20-40 s: 256 of the 10 ms flow's 258 probes and 54 of the
    # 50 ms flow's 55; the others are full MinRTT probes right after a
    # ProbeRTT, when the queue had drained and BBQ was BBR.
    over = {"duration": "40s", "measure.from": "20s", "output.interval": "1ms"}
    for flow in (0, 1):
        probes = probe_lengths_ms(run(over), flow)
        assert len(probes) >= 20, probes
        short = sum(1 for p in probes if p <= 4)
        assert short >= 0.9 * len(probes), (flow, probes)
    # (BBR's median: a probe cut short by ProbeRTT is also a run.)
    bbr_long = sorted(probe_lengths_ms(run(over, AS_BBR), 1))
    assert bbr_long and bbr_long[len(bbr_long) // 2] >= 50, bbr_long


def test_the_queue_verdict_is_in_the_telemetry_and_holds_under_the_standing_queue():
    # cc_var is BBQ's verdict in force (1 = persistent queue). Measured,
    # seeds 1-3, window 20-120 s: 97-98% of the samples for the 10 ms
    # flow, 96-97% for the 50 ms flow (live, BBQ through BPF: 98 / 97%);
    # the rest are the rounds right after a ProbeRTT drained the queue.
    # BBR leaves cc_var empty.
    ts = bbq().timeseries.to_pydict()
    for flow in (0, 1):
        verdicts = [v for t, f, v in zip(ts["t_s"], ts["flow"], ts["cc_var"], strict=True) if f == flow and t > 20]
        assert set(verdicts) <= {0.0, 1.0}, set(verdicts)
        assert sum(verdicts) >= 0.9 * len(verdicts), (flow, sum(verdicts), len(verdicts))
    assert set(bbr().timeseries.column("cc_var").to_pylist()) == {None}


def drain_fraction(result: ccarena.Result, flow: int) -> float:
    """Share of the flow's ProbeBW samples in the window at gain 3/4."""
    ts = result.timeseries.to_pydict()
    gains = [
        g
        for t, f, m, g in zip(ts["t_s"], ts["flow"], ts["cc_mode"], ts["pacing_gain"], strict=True)
        if f == flow and m == 2 and t > 20
    ]
    return sum(1 for g in gains if g < 1) / len(gains)


def test_first_cut_traps_the_short_flow_in_draining_and_does_not_fix_fairness():
    # Sec. V-A / Fig. 12: draining to one BDP at gain 3/4 cannot succeed
    # while the queue exceeds MinRTT/3 (3.3 ms for the 10 ms flow), so the
    # 10 ms flow spends most of its time in the drain phase while its
    # max-bw filter expires. Measured: ~70% of its samples at 3/4 (BBQ:
    # ~13%), share 11.9-13.9% (seeds 1-3), against BBQ's 45-51%. The
    # paper found the first cut even below BBR (BBR: 6.7%); here it lands
    # above BBR's 7% but far below a fair share:
    # "of little help", not the fix (see docs/algorithms.md, "bbq").
    first_cut = run(FIRST_CUT)
    assert drain_fraction(first_cut, 0) >= 0.5
    assert drain_fraction(first_cut, 0) >= 3 * drain_fraction(bbq(), 0)
    assert drain_fraction(first_cut, 1) <= 0.35  # the 50 ms flow can drain
    assert first_cut.flows[0]["share"] <= 0.25, shares(first_cut)
    assert first_cut.flows[0]["share"] <= 0.5 * bbq().flows[0]["share"]
