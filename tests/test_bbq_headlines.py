"""The BBQ paper's headline results, on the experiments `ccarena reproduce`
runs (the experiment code itself, full length, every seed), with the
issue's thresholds.

Measured on this simulator (5 seeds each, paper.SEEDS; the tolerance each
test keeps is the distance from these to the issue's threshold; the
reports themselves judge against the paper's numbers, docs/experiments.md):
- Fig. 1's pair with BBQ: the 10 ms flow gets at least 43.9% (mean 48.1%;
  >= 40%), utilisation at least 98.1% (>= 95%), mean queueing delay
  13.3 ms against BBR's 36.6 ms, a reduction of at least 61.6% (>= 50%).
- Fig. 13: after the 10 ms flow leaves, the 50 ms flow carries 90% of the
  link within 0.35-0.62 s (<= 2 s; the paper: 1.7 s).
- Fig. 15: against 100 ms, the 10 ms BBQ flow keeps 36.4-41.3% (>= 30%).
- Fig. 14: BBQ gives the 10 ms flow 12.8-46.0 points more than BBR at every
  rate from 10 Mbit/s to 1 Gbit/s (never less).
- Fig. 12: the paper's first cut must not beat BBR for the 10 ms flow.
"""

from __future__ import annotations

import pytest

from ccarena import experiments
from ccarena.experiments.bbq import fig3_14 as bbq_fig3_14

pytestmark = pytest.mark.behaviour


@pytest.fixture(scope="module")
def fig1():
    return experiments.measure("bbq-fig1")


def test_fig1_bbq_gives_the_10ms_flow_at_least_40_percent(fig1):
    # BBR leaves it 10.9% here (seeds 1-5, at least 10.4%; the paper: 6.3
    # of 93.6 Mbit/s, 6.7%; live Linux on the bbr-rtt-unfairness example
    # 6.4-8.3%: docs/live.md, "PSH-driven ACKs"). The bound keeps BBR far
    # below BBQ's 40%.
    assert fig1.numbers["bbr.short_share"] < 0.15
    assert fig1.numbers["bbq.short_share_min"] >= 0.40


def test_fig1_bbq_keeps_the_link_full(fig1):
    assert fig1.numbers["bbq.utilization_min"] >= 0.95


def test_fig1_bbq_halves_the_queueing_delay(fig1):
    # The paper: 23.4 -> 8.3 ms, -64.5%.
    assert fig1.numbers["queue_delay_reduction_min"] >= 0.50
    assert fig1.numbers["bbq.queue_delay_ms"] < fig1.numbers["bbr.queue_delay_ms"]


def test_fig13_remaining_flow_takes_the_link_within_2s():
    report = experiments.measure("bbq-fig13")
    assert report.numbers["bbq.time_to_90pct_max_s"] <= 2.0


def test_fig15_10ms_bbq_flow_keeps_30_percent_against_100ms():
    report = experiments.measure("bbq-fig5-15")
    assert report.numbers["bbq.short_share_min.100ms"] >= 0.30
    # ... where BBR leaves it under 10% (the paper: 37.1% / 4.62 = 8.0%).
    assert report.numbers["bbr.short_share.100ms"] < 0.10


def test_fig14_bbq_never_gives_the_short_flow_less_than_bbr():
    report = experiments.measure("bbq-fig3-14")
    for rate in bbq_fig3_14.RATES:
        bbq = report.numbers[f"bbq.short_share.{rate}Mbit"]
        bbr = report.numbers[f"bbr.short_share.{rate}Mbit"]
        assert bbq >= bbr, f"{rate} Mbit/s: BBQ {bbq:.3f} < BBR {bbr:.3f}"


@pytest.mark.xfail(
    strict=True,
    reason="known discrepancy with the paper, unresolved: on the simulator the first cut "
    "leaves the 10 ms flow ~13% against BBR's ~7%; it also makes the 50 ms flow drain, so the "
    "queue stays ~10 ms instead of ~37 ms; real Linux 6.18 gives the same ~14% live, and "
    "Linux 4.9's cwnd and pacing keep the order (11.8% vs 4.0%) (docs/algorithms.md; the "
    "bbq-fig12 report)",
)
def test_fig12_first_cut_is_not_better_than_bbr_for_the_10ms_flow():
    # The paper (Sec. V-A): "the short RTT flow ends up with even lower
    # bandwidth share than that using BBR". "Not better": at most BBR's
    # share plus 3 points (this test's margin; the report judges the claim
    # as stated, on the mean over seeds).
    report = experiments.measure("bbq-fig12")
    first_cut = report.numbers["bbq-first-cut.short_share"]
    bbr = report.numbers["bbr.short_share"]
    assert first_cut <= bbr + 0.03, f"first cut {first_cut:.3f} vs BBR {bbr:.3f}"
    # And, as in the paper, the 10 ms flow is stuck draining most of the time.
    assert report.numbers["bbq-first-cut.short_drain_fraction"] > 0.5
