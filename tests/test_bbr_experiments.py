"""The BBR paper's experiments (`ccarena reproduce bbr-*`): --quick runs
write complete reports, the measures behind the rows are right on
hand-made traces, and (marked behaviour, full length, ~15 s together) the
paper's headline results and issue 12's targets hold where the simulator
reaches them, and the differences the reports explain stay pinned.

Spreads measured on this simulator (5 seeds, full length), behind the
thresholds below:
- bbr-fig3: the BtlBw estimate reaches the doubled rate in 0.74-1.31 gain
  cycles (bound 4.1) and falls back 12.6-13.7 rounds after the drop
  (bound 10 + 8); the queue is gone only after 66.9-70.1 rounds (4.9-5.1 s,
  Linux's 1% pacing margin; 10.7 s with Linux 4.9's BBR).
- bbr-fig4-5: Startup peaks at 68 packets (2.06 BDP) on every seed; the
  queue's minimum in the first gain cycle after Drain is 3-4 packets, what
  ProbeBW keeps later (3-4); median queue after 4.0 packets (0.12 BDP).
  CUBIC (deterministic here) falls back to 62.1% of the 4-BDP buffer,
  beta x (1 + 4) - 1 over 4 = 62.5% by its own cut.
- bbr-fig6: Jain's index per second over the last 10 s 0.987-0.998; it
  stays >= 0.95 from 9-18 s after the last start (issue 12: "within a few
  ProbeRTT periods").
- bbr-fig8: BBR at 95.1-96.0% of rate x (1 - loss) at every point up to 5%
  loss (seed ranges of each point <= 0.5 points); CUBIC's 0.001% / 0.1%
  ratio 11.6-16.8 per seed; CUBIC above 1% loss at most 0.91 Mbit/s (mean
  at 2%, seeds 0.80-1.06).
- bbr-fig10: CUBIC's median queue 78-100% of the buffer, 62.3 ms/kB
  (full: 62.5); BBR's median RTT 0.66-8.5 s against an empty path's
  135 ms, 4.7 s at 1000 kB against CUBIC's 62 s.
- bbr-policer: Startup's estimate 95.6 Mbit/s (the link's payload rate) on
  every seed, then 9.55 (policed: 9.56); 17-19 retransmissions per second
  while pinned to lt_bw against 230-251 while gain cycling.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ccarena import experiments
from ccarena.experiments.bbr import EXPERIMENTS, PAPER, fig6, fig10, paper
from ccarena.experiments.framework import Outcome
from conftest import assert_quick_report, reproduce_quick

NAMES = [exp.name for exp in EXPERIMENTS]


@pytest.fixture(scope="module")
def quick_out(tmp_path_factory):
    return reproduce_quick(NAMES, tmp_path_factory.mktemp("bbr"))


def test_every_figure_with_a_testbed_has_an_experiment():
    assert PAPER.key == "bbr" and all(name.startswith("bbr-") for name in NAMES)
    covered = " ".join(exp.figure for exp in EXPERIMENTS)
    for fig in ("Fig. 2", "Fig. 3", "Figs. 4-5", "Fig. 6", "Fig. 8", "Fig. 10", "Token-Bucket Policers"):
        assert fig in covered, fig
    assert set(NAMES) <= set(experiments.names())


@pytest.mark.parametrize("name", NAMES)
def test_quick_run_writes_a_complete_report_without_verdicts(quick_out, name):
    assert_quick_report(quick_out / name)


# --- The measures, on hand-made traces ------------------------------------


def _outcome(t: np.ndarray, link: dict | None = None, summary: dict | None = None, **cols: np.ndarray) -> Outcome:
    return Outcome("k", summary or {"flows": []}, t, {k: np.atleast_2d(v).astype(float) for k, v in cols.items()},
                   link or {}, 0.0)


def test_payload_rate_bdp_and_serialisation():
    assert paper.payload_mbps(100) == pytest.approx(100 * 1448 / 1514)
    assert paper.bdp_packets(10, 40) == pytest.approx(50_000 / 1514)
    assert paper.serialisation_ms(0.128) == pytest.approx(1514 * 8 / 128)


def test_rounds_count_round_trips_at_the_rtt_of_the_moment():
    t = np.arange(1, 1001) * 0.001
    rtt = np.where(t <= 0.5, 40.0, 80.0)
    rtt[:20] = np.nan  # before the first sample: as long as the first sample
    assert paper.rounds(t, rtt, 0.0, 0.5) == pytest.approx(12.5)
    assert paper.rounds(t, rtt, 0.5, 1.0) == pytest.approx(6.25)
    assert math.isnan(paper.rounds(t, rtt, 0.0, math.nan))


def test_cycle_min_queue_is_a_trailing_minimum():
    t = np.arange(1, 9) * 0.1
    run = _outcome(t, link={"queue_bytes": np.array([5.0, 1, 7, 8, 9, 2, 6, 6])})
    assert paper.cycle_min_queue(run, 0.3).tolist() == [5, 1, 1, 1, 7, 2, 2, 2]


def test_syn_timeout_crossing_is_interpolated_on_the_log_buffer_axis():
    assert fig10.crossing_kb([10, 100], [0.5, 2.0], 1.0) == pytest.approx(10 ** (1 + 1 / 3))
    assert fig10.crossing_kb([10, 100], [0.5, 0.9], 1.0) is None
    assert fig10.crossing_kb([10, 100], [1.5, 2.0], 1.0) == 10


def test_convergence_ignores_probe_rtt_dips_but_not_lasting_unfairness():
    t = np.arange(1, 3001) * 0.01  # 30 s
    fair = np.full((fig6.FLOWS, len(t)), 10.0)
    fair[0, t <= 15] = 40.0  # unfair until 15 s
    mode = np.full((fig6.FLOWS, len(t)), 2.0)
    dip = (t > 20) & (t <= 20.2)
    mode[:, dip] = 3  # a joint ProbeRTT at 20 s
    fair[1, (t > 20) & (t <= 21)] = 30.0  # and the dip's aftermath
    run = _outcome(t, goodput_mbps=fair, cc_mode=mode)
    assert fig6.converged_at(run, fig6.FAIR_JAIN) == pytest.approx(15 - fig6.last_start())
    assert [len(g) for g in fig6.probe_rtt_rounds(run)] == [fig6.FLOWS]


# --- Behaviour: full length, every seed -------------------------------------


@pytest.mark.behaviour
def test_fig8_bbr_meets_the_ceiling_where_cubic_collapses():
    n = experiments.measure("bbr-fig8").numbers
    # BBR: 95.2-95.9% (point means) of rate x (1 - loss) up to 5% loss; issue 12: within 5%.
    for p in (0.001, 0.01, 0.1, 0.2, 0.5, 1, 2, 5):
        assert n[f"bbr.ceiling_ratio.{p:g}%"] >= 0.945, p
    assert n["bbr.ceiling_ratio.10%"] >= 0.9
    # CUBIC: 15.1x lower at 0.1% (seeds 11.6-16.8; the paper: 10x) and under 1 Mbit/s above 1% (max 0.91).
    assert n["cubic.drop_at_0.1%"] >= 10
    assert max(n[f"cubic.goodput_mbps.{p:g}%"] for p in (2, 5, 10, 15, 20, 30, 50)) < 1.1
    # Beyond the ProbeBW peak gain (20% loss) BBR's estimate collapses too (L149).
    assert n["bbr.ceiling_ratio.30%"] < 0.5


@pytest.mark.behaviour
def test_fig3_bbr_follows_the_rate_up_at_once_and_down_within_the_filter_window():
    n = experiments.measure("bbr-fig3").numbers
    assert n["bbr.up.reach_cycles"] <= 1 + math.log(2) / math.log(1.25)  # measured 0.74-1.31
    assert n["bbr.down.bw_fell_rounds"] <= 10 + 8  # measured 12.6-13.7
    # The queue outlives the filter: it drains at the 1% pacing margin (measured 4.9-5.1 s).
    assert 2 < n["bbr.down.queue_gone_s"] < 8
    assert n["bbr.up.bw_high_mbps"] == pytest.approx(paper.payload_mbps(20), rel=0.02)


@pytest.mark.behaviour
def test_fig4_5_bbr_drains_its_startup_queue_and_cubic_cycles_in_the_buffer():
    n = experiments.measure("bbr-fig4-5").numbers
    bdp = paper.bdp_packets(10, 40)
    assert 1.5 * bdp < n["bbr.startup_peak_pkts"] < 2.5 * bdp  # measured 2.06 BDP ("up to 2BDP", L117)
    assert n["bbr.first_cycle_min_pkts"] <= n["bbr.steady_cycle_min_max_pkts"] + 1  # 3.2 vs 3.2
    assert n["bbr.steady_median_pkts"] <= n["bbr.probe_queue_pkts"]  # 4.0 <= 8.3
    assert n["bbr.reach_rounds"] <= math.log2(bdp)  # 3.8 <= 5.0
    # CUBIC: fills the buffer, then falls back to what its beta cut leaves (62.1% vs 62.5%).
    assert n["cubic.fill_max"] >= 0.95
    assert n["cubic.fill_min"] == pytest.approx(n["cubic.fill_min_predicted"], abs=0.03)


@pytest.mark.behaviour
def test_fig6_flows_converge_within_a_few_probe_rtt_periods():
    n = experiments.measure("bbr-fig6").numbers
    # Issue 12: Jain >= 0.95 within a few ProbeRTT periods (measured 9-18 s after the last start).
    assert n["bbr.converged_issue_s"] <= 3 * fig6.PROBE_RTT_PERIOD_S
    assert n["bbr.final_jain"] >= 0.95  # measured 0.987-0.998


@pytest.mark.behaviour
def test_fig10_cubic_fills_every_buffer_and_bbr_stays_far_below_it():
    n = experiments.measure("bbr-fig10").numbers
    assert min(n[f"cubic.fill.{b}KB"] for b in fig10.BUFFERS_KB) >= 0.7  # measured 78-100%
    assert n["cubic.rtt_slope_ms_per_kb"] == pytest.approx(8 / 0.128, rel=0.05)  # 62.3 vs 62.5 ms/kB
    # The difference the report explains: eight 4-packet minimum cwnds keep >= 3 s queued at 128 kbit/s.
    empty = 40 + paper.serialisation_ms(0.128)
    assert n["bbr.median_rtt_ms.1000KB"] > 2 * empty
    assert n["bbr.median_rtt_ms.1000KB"] < n["cubic.median_rtt_ms.1000KB"] / 5  # 4.7 s vs 62 s


@pytest.mark.behaviour
def test_policer_startup_learns_the_link_then_lt_bw_pins_the_policed_rate():
    n = experiments.measure("bbr-policer").numbers
    assert n["bbr.startup_bw"] >= 0.95 * paper.payload_mbps(100)
    assert n["bbr.bw_median"] == pytest.approx(paper.payload_mbps(10), rel=0.05)
    assert n["bbr.retx_pinned"] < n["bbr.retx_cycling"] / 5  # measured 18 vs 241 per second
    # Linux pins for 48 of BBR's rounds; counted here as time over the RTT
    # samples, which the host's ACK delays and stalls make longer than BBR's
    # packet-timed rounds (measured 52.9 with the default host).
    assert n["bbr.pin_rounds"] == pytest.approx(48, rel=0.15)
