"""`ccarena scorecard`: the battery through sweeps (cached), scores with
intervals, ranks that follow the scores, and two behaviour facts the
papers establish (BBR is RTT-unfair and rewards latency cheating; BBQ is
fairer across RTTs)."""

from __future__ import annotations

import contextlib
import io
import json
import re

import pytest

from ccarena.scorecard import battery, run_scorecard
from ccarena.stats import kendall_tau, mean_ci95
from conftest import assert_decoys_intact, plant_decoys, run_cli

CCS = ["bbr", "bbq", "cubic"]
SEEDS = [1, 2]


#: A user's files named like ccarena's temporaries, beside the scorecard.
DECOYS: dict = {}


@pytest.fixture(scope="module")
def card(tmp_path_factory):
    out = tmp_path_factory.mktemp("card") / "sc"
    DECOYS.update(plant_decoys(out.parent))
    # Progress as in a log (stderr not a terminal), kept for a test.
    log = io.StringIO()
    with contextlib.redirect_stderr(log):
        done = run_scorecard(out, ccs=CCS, seeds=SEEDS, jobs=2)
    done.log = log.getvalue()
    return done


def test_every_criterion_scores_every_algorithm_and_ranks_follow_the_means(card):
    record = card.record
    assert record["algorithms"] == CCS and record["seeds"] == SEEDS
    assert [c["key"] for c in record["criteria"]] == [c.key for c in battery.CRITERIA]
    for crit in record["criteria"]:
        means = {cc: crit["scores"][cc]["mean"] for cc in CCS}
        assert all(m is not None for m in means.values()), crit["key"]
        for cc in CCS:
            entry = crit["scores"][cc]
            assert len(entry["values"]) == len(SEEDS)
            m, ci = mean_ci95(entry["values"])
            # per-seed values are stored rounded to 6 decimals, the mean and interval from the exact ones
            assert entry["mean"] == pytest.approx(m, abs=5e-6) and entry["ci95"] == pytest.approx(ci, rel=1e-3, abs=5e-6)
        sign = 1 if crit["better"] == "higher" else -1
        ordered = [sign * means[cc] for cc in crit["ranking"]]
        assert ordered == sorted(ordered, reverse=True), crit["key"]
    mean_ranks = [o["mean_rank"] for o in record["overall"]]
    assert mean_ranks == sorted(mean_ranks)
    for o in record["overall"]:
        ranks = [c["scores"][o["cc"]]["rank"] for c in record["criteria"]]
        assert o["mean_rank"] == pytest.approx(sum(ranks) / len(ranks), abs=1e-6)


def test_the_papers_rtt_unfairness_shows_in_the_scores(card):
    crit = {c["key"]: c["scores"] for c in card.record["criteria"]}
    # Measured (seeds 1-2): RTT-fairness Jain BBR 0.61, BBQ 0.93; the
    # cheating gain of BBR 42.6 +- 5.5 pp, BBQ 5.2 +- 8.2 pp.
    assert crit["rtt_fairness"]["bbq"]["mean"] > crit["rtt_fairness"]["bbr"]["mean"] + 0.15
    assert crit["cheating"]["bbr"]["mean"] > 25
    assert crit["cheating"]["bbr"]["mean"] > crit["cheating"]["bbq"]["mean"] + 15
    # Two loss-based CUBIC flows converge slowly at 2 BDP; BBR's do within seconds.
    assert crit["converge_join"]["bbr"]["mean"] < 5


def test_outputs_and_a_rerun_reuses_every_point(card):
    out = card.out
    for name in ("scorecard.json", "scorecard.md", "scorecard.png"):
        assert (out / name).is_file()
    assert (out / "scorecard.png").read_bytes()[:4] == b"\x89PNG"
    assert card.computed == card.points > 0
    DECOYS.update(plant_decoys(out))  # inside its own directory too
    again = run_scorecard(out, ccs=CCS, seeds=SEEDS, jobs=2, progress=False)
    assert (again.cached, again.computed) == (card.points, 0)
    assert json.loads((out / "scorecard.json").read_text()) == card.record
    assert_decoys_intact(DECOYS)


def test_progress_is_one_counter_over_all_families_named_by_family(card):
    lines = card.log.splitlines()
    assert lines, "no progress lines"
    counters = [re.match(r"ccarena: \[\s*(\d+)/(\d+)\] scorecard (\w+): ", line) for line in lines]
    assert all(counters), lines
    assert {int(m.group(2)) for m in counters} == {card.points}  # one total: every family's runs
    assert [int(m.group(1)) for m in counters] == sorted(int(m.group(1)) for m in counters)
    assert int(counters[-1].group(1)) == card.points
    assert {m.group(3) for m in counters} <= set(battery.family_docs(CCS, SEEDS))
    assert len(lines) <= 10 + 5  # a tenth of the way (and every 30 s at most)


def test_intervals_are_cut_to_what_each_criterion_can_be(card):
    """Student t over 2 seeds (t = 12.7) reaches below 0 ms of delay or
    above 100% utilisation; the recorded (and drawn) interval does not."""
    bounds = {c.key: c.bounds for c in battery.CRITERIA}
    cut = 0
    for crit in card.record["criteria"]:
        low_bound, high_bound = bounds[crit["key"]]
        for cc in CCS:
            entry = crit["scores"][cc]
            low, high = entry["interval"]
            assert low <= entry["mean"] <= high
            assert (low_bound is None or low >= low_bound) and (high_bound is None or high <= high_bound)
            # The record rounds each of the three to 6 decimals: up to 1.5e-6 apart.
            assert low >= entry["mean"] - entry["ci95"] - 1e-5 and high <= entry["mean"] + entry["ci95"] + 1e-5
            cut += low > entry["mean"] - entry["ci95"] + 1e-6 or high < entry["mean"] + entry["ci95"] - 1e-6
    assert cut, "no interval reached past its criterion's range: the case is not exercised"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--ccs", "bbr,nope"], "--ccs: unknown congestion control 'nope'"),
        (["--ccs", "bbr"], "--ccs: a scorecard ranks at least two algorithms"),
        (["--ccs", "bbr,cubic", "--seeds", "1,x"], "--seeds: expected comma-separated integers"),
        (["--ccs", "bbr,,cubic"], "--ccs: expected comma-separated names, got 'bbr,,cubic' (an empty name)"),
        (["--ccs", "bbr,cubic", "--seeds", str(1 << 64)], "--seeds: expected distinct seeds from 0 to 2^64 - 1"),
    ],
)
def test_bad_arguments_are_one_line_and_write_nothing(tmp_path, args, message):
    proc = run_cli("scorecard", *args, "--out", tmp_path / "sc")
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    assert not (tmp_path / "sc").exists()


def test_a_foreign_directory_is_left_alone(tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "data.csv").write_text("1,2\n")
    proc = run_cli("scorecard", "--ccs", "bbr,cubic", "--out", tmp_path / "mine")
    assert proc.returncode == 2 and "is not a ccarena scorecard directory" in proc.stderr
    assert [p.name for p in (tmp_path / "mine").iterdir()] == ["data.csv"]


def test_kendall_tau():
    assert kendall_tau(["a", "b", "c", "d"], ["a", "b", "c", "d"]) == 1
    assert kendall_tau(["a", "b", "c", "d"], ["d", "c", "b", "a"]) == -1
    assert kendall_tau(["a", "b", "c", "d"], ["b", "a", "c", "d"]) == pytest.approx(4 / 6)
