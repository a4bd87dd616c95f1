"""Hock et al.'s experiments (`ccarena reproduce hock-*`): --quick runs
write complete reports, the shared measures are right on hand-made runs,
and (marked behaviour, full length, ~25 s together without the 10 Gbit/s
flow) the slides' claims hold where the simulator reaches them.

Spreads measured on this simulator (5 seeds, full length), behind the
thresholds below:
- hock-large-buffer: RTT 2.12-2.15 x the base RTT, 1.12-1.14 BDP queued,
  2.06-2.09 BDP in flight (the slides: "RTT is doubled", "1 to 1.5bdp
  queued").
- hock-small-buffer: six BBR flows retransmit 12.1-12.4% of their
  segments, six CUBIC flows 0.0020%: log10 of the ratio 3.66-3.89; at
  10 Gbit/s 8.9-10.1% against 0.0005%: 4.25-4.36.
- hock-bbr-vs-cubic: BBR's share 96.7-97.3% at 1 vs 1 in 16 ms, 98.9% at
  2 vs 2 (CUBIC 0.9-1.2% against 2.7-3.3%); 35.0-39.1% at 1 vs 1 in 160 ms.
- hock-intra: Jain 0.993-1.000 in 16 ms, 0.940-0.985 in 160 ms.
- hock-rtt: shares 0.5-0.7% / 2.1-2.6% / 96.8-97.3% at 20 / 40 / 80 ms;
  at 10 Gbit/s 0.1-0.2% / 19.4-23.2% / 76.7-80.4%.
- hock-single: utilisation 97.6% at 1 and 10 Gbit/s, mean RTT 1.13 and
  1.04 x the base RTT.
"""

from __future__ import annotations

import pytest

from ccarena import experiments
from ccarena.experiments.framework import Outcome
from ccarena.experiments.hock import EXPERIMENTS, PAPER, paper
from conftest import assert_quick_report, reproduce_quick

NAMES = [exp.name for exp in EXPERIMENTS]


@pytest.fixture(scope="module")
def quick_out(tmp_path_factory):
    return reproduce_quick(NAMES, tmp_path_factory.mktemp("hock"))


def test_every_experiment_of_the_slides_is_registered():
    assert PAPER.key == "hock" and all(name.startswith("hock-") for name in NAMES)
    assert set(NAMES) <= set(experiments.names())
    assert len(NAMES) == 7


@pytest.mark.parametrize("name", NAMES)
def test_quick_run_writes_a_complete_report_without_verdicts(quick_out, name):
    assert_quick_report(quick_out / name)


def test_buffers_are_time_at_the_bottleneck_rate():
    assert paper.buffer_of(paper.LARGE_MS) == "20000kB"  # 160 ms of 1 Gbit/s = 8 BDP of 20 ms
    assert paper.buffer_of(paper.SMALL_MS, paper.HIGH_RATE_MBPS) == "20000kB"
    assert paper.bdp_packets() == pytest.approx(1e9 / 8 * 0.02 / 1514)


def test_multi_flow_experiments_whose_slides_name_no_rate_run_at_10_gbit_in_full_runs_only():
    from ccarena.experiments.hock import intra, large_buffer, rtt, small_buffer, vs_cubic

    def rates(exp, quick: bool) -> set[str]:
        return {s.scenario["bottleneck"]["rate"] for s in exp.runs(quick)}

    for exp in (small_buffer, intra, rtt):
        assert rates(exp, False) == {"1000Mbit", "10000Mbit"} and rates(exp, True) == {"1000Mbit"}
    # The slides name 1 Gbit/s for these (L131, L181, L188).
    assert rates(large_buffer, False) == rates(vs_cubic, False) == {"1000Mbit"}
    # BBR flows alone at 10 Gbit/s: 30 s from 10 s; with CUBIC the usual 60 s from 20 s.
    assert paper.timing(False, paper.HIGH_RATE_MBPS, bbr_only=True) == (30.0, 10.0)
    assert paper.timing(False, paper.HIGH_RATE_MBPS) == (60.0, 20.0) == paper.timing(False, paper.RATE_MBPS, True)
    assert paper.timing(True, paper.HIGH_RATE_MBPS, True) == (paper.duration_s(True), paper.window_from_s(True))


def _run(flows: list[dict], window_s: float) -> Outcome:
    import numpy as np

    return Outcome(key="x", summary={"flows": flows, "window": {"from_s": 0.0, "to_s": window_s}},
                   t_s=np.array([1.0]), flow={}, link={}, wall_s=0.0)


def test_sending_rate_and_lost_data_come_from_the_windows_counts():
    from ccarena.experiments.hock import small_buffer

    # 11.584 Mbit/s of goodput and 1000 retransmitted segments in 1 s: 11.584 Mbit/s lost, 23.168 sent.
    run = _run([{"goodput_mbps": 11.584, "retransmits": 1000, "share": 1.0}], 1.0)
    assert small_buffer.lost_mbps(run) == pytest.approx(11.584)
    assert small_buffer.sent_over_link(run, 23.168 * 1514 / 1448) == pytest.approx(1.0)


def test_retransmit_rate_counts_retransmissions_against_all_segments_sent():
    # 11.584 Mbit/s of goodput for 1 s is 1000 segments of 1448 B; 10 more were retransmissions.
    run = _run([{"goodput_mbps": 11.584, "retransmits": 10, "share": 1.0}], 1.0)
    assert paper.retransmit_rate(run) == pytest.approx(10 / 1010)
    assert paper.retransmit_rate(_run([{"goodput_mbps": 0.0, "retransmits": 0, "share": 0.0}], 1.0)) == 0.0


@pytest.mark.behaviour
def test_two_flows_in_the_large_buffer_double_the_rtt():
    n = experiments.measure("hock-large-buffer").numbers
    assert 2.0 <= n["bbr.rtt_ratio"] <= 2.5
    assert 1.0 <= n["bbr.queue_bdp"] <= 1.5


@pytest.mark.behaviour
def test_six_bbr_flows_in_the_small_buffer_retransmit_orders_more_than_cubic():
    n = experiments.measure("hock-small-buffer").numbers
    # At least 100x, the acceptance target (the slides say three orders); measured 3.66-3.89.
    assert n["orders"] >= 2.0
    assert n["bbr-linux49.retransmit_rate"] > 0.05
    # At 10 Gbit/s BBR still loses ~10% and CUBIC less than at 1: measured 4.25-4.36 orders.
    assert n["bbr-linux49.retransmit_rate.10Gbit"] > 0.05 and n["orders.10Gbit"] > n["orders"]


@pytest.mark.behaviour
def test_bbr_dominates_cubic_in_the_small_buffer_and_loses_in_the_large():
    n = experiments.measure("hock-bbr-vs-cubic").numbers
    assert n["bbr_share.1v1.16ms"] > 0.8
    assert n["bbr_share.1v1.160ms"] < 0.5
    assert 1 - n["bbr_share.2v2.16ms"] < 1 - n["bbr_share.1v1.16ms"]


@pytest.mark.behaviour
def test_rtt_fairness_orders_the_flows_by_rtt():
    n = experiments.measure("hock-rtt").numbers
    assert n["bbr.share.20ms"] < n["bbr.share.40ms"] < n["bbr.share.80ms"]
    # At 10 Gbit/s too (measured 0.1 / 21.3 / 78.6%).
    assert n["bbr.share.20ms.10Gbit"] < n["bbr.share.40ms.10Gbit"] < n["bbr.share.80ms.10Gbit"]


@pytest.mark.behaviour
def test_two_flows_climb_to_their_cwnd_cap_and_stay_there():
    """hock-model: from Drain to the cap the summed in-flight climbs, as the
    slides say (measured 1.30 < 1.54 < 1.97 < 2.26 BDP over the climb's
    quarters, in every seed); then it holds at the cap, 2.14-2.20 BDP every
    second from 1 to 10 s, the two estimates summing to 1.00-1.01x the link."""
    rep = experiments.measure("hock-model")
    n = rep.numbers
    per_second = [n[f"bbr.inflight_bdp.{a}s"] for a in range(1, 10)]
    assert 2.0 <= min(per_second) and max(per_second) <= 2.4
    assert max(per_second) - min(per_second) < 0.15
    parts = list(rep.measured["model.inflight-increases"].members.values())
    for seed in range(len(parts[0])):
        climb = [part[seed] for part in parts]
        assert climb == sorted(climb) and climb[0] < 1.6 and climb[-1] > 2.0, climb
