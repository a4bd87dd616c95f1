"""`ccarena reproduce --live`: every run again on the live engine, the
record in a results file (linux.py, tested in test_linux_column.py), and
the runs an experiment marks quoted in its prose from that command (rule 5
of docs/experiments.md), never a number in the source.

The analysis side needs no root: a live outcome is injected. The testbed
side runs one short live run (root, delay line built; skipped otherwise).
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import os

import pytest

from ccarena.experiments import linux, registry, report
from ccarena.experiments.framework import LIVE_PREFIX, Experiment, Report, Result, RunSpec
from conftest import run_cli

#: The module (ccarena.experiments exports a function of the same name).
reproduce = importlib.import_module("ccarena.experiments.reproduce")
FIG13 = "bbq-fig13"


@pytest.fixture(scope="module")
def fig13_quick():
    exp = registry.get(FIG13)
    return exp, reproduce.run_experiments([exp], quick=True, jobs=1)[FIG13]


def _with_live(outcomes, share_short: float):
    """The simulated BBQ seed-1 outcome, relabelled as a live one whose
    10 ms flow had ``share_short``."""
    sim = outcomes["bbq/seed=1"]
    summary = json.loads(json.dumps(sim.summary))
    summary["flows"][0]["share"] = share_short
    summary["flows"][1]["share"] = 1 - share_short
    live = dataclasses.replace(sim, key=LIVE_PREFIX + "bbq/seed=1", summary=summary)
    return {**outcomes, live.key: live}


def test_fig13_marks_its_headline_run_for_live():
    specs = registry.get(FIG13).live_specs(quick=False)
    assert [s.key for s in specs] == ["bbq/seed=1"]
    sim = {s.key: s for s in registry.get(FIG13).specs(quick=False)}
    # The same scenario as the simulated run, without the telemetry only the simulator has.
    assert specs[0].scenario == sim["bbq/seed=1"].scenario
    assert specs[0].flow_columns == () and specs[0].link_columns == ()


def test_live_row_and_reason_quote_the_live_run(fig13_quick):
    exp, outcomes = fig13_quick
    rep = exp.analyse(_with_live(outcomes, 0.3141), None, True)
    live_rows = [c for c in rep.comparisons if c.quantity.startswith("live Linux")]
    assert len(live_rows) == 1
    assert live_rows[0].ours.startswith("31.4%") and live_rows[0].agrees is None
    split = rep.measured["fig13.bbq-short-goodput"].note
    assert "31.4%" in split and "--live pass" in split


def test_without_live_no_live_row_and_the_reason_says_how(fig13_quick):
    exp, outcomes = fig13_quick
    rep = exp.analyse(outcomes, None, True)
    assert not [c for c in rep.comparisons if c.quantity.startswith("live Linux")]
    split = rep.measured["fig13.bbq-short-goodput"].note
    assert "ccarena reproduce bbq-fig13 --live" in split


def test_report_flags_live_runs(fig13_quick):
    exp, outcomes = fig13_quick
    rep = exp.analyse(_with_live(outcomes, 0.3), None, True)
    with_live = Result.of(exp, "bbq", rep, True, ["live/bbq/seed=1"])
    without = Result.of(exp, "bbq", exp.analyse(outcomes, None, True), True)
    assert "Includes 1 live run(s)" in report.markdown(with_live)
    assert json.loads(report.results_json(with_live))["live_runs"] == ["live/bbq/seed=1"]
    assert "live run" not in report.markdown(without)
    assert "live_runs" not in json.loads(report.results_json(without))


def test_live_results_only_with_live_and_never_over_a_users_file(tmp_path):
    out = tmp_path / "out"
    done = run_cli("reproduce", "bbq-fig17", "--quick", "--live-results", tmp_path / "x.json", "--out", out)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == ["ccarena: error: --live-results: records live runs: only with --live"]
    mine = tmp_path / "mine.json"
    mine.write_text('{"my": "data"}\n')
    done = run_cli("reproduce", "bbq-fig17", "--quick", "--live", "--live-results", mine, "--out", out)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"ccarena: error: --live-results: {mine} exists and is not a ccarena Linux results file; not touching it"]
    assert mine.read_text() == '{"my": "data"}\n' and not out.exists()


# --- on the testbed ----------------------------------------------------------

from test_live import DELAYLINE, clean_host  # noqa: E402,F401  (fixture)


@pytest.mark.skipif(os.geteuid() != 0, reason="live runs need root")
@pytest.mark.skipif(not DELAYLINE.exists(), reason="delay line not built (make build)")
def test_live_pass_runs_every_spec_and_records_it(clean_host, tmp_path):
    """A 6-s experiment: its run goes to the live engine, the analysis
    measures it, the record lands in the results file (beside what the
    file held), the run it marks comes back under live/KEY with the live
    engine's summary, and the testbed is clean afterwards (clean_host)."""
    scenario = {
        "duration": "6s", "seed": 1, "measure": {"from": "2s"},
        "bottleneck": {"rate": "20Mbit", "buffer": "200KB", "aqm": "droptail"},
        "flow": [{"cc": "bbr", "rtt": "10ms"}, {"cc": "bbr", "rtt": "30ms"}],
    }
    spec = RunSpec("bbr/seed=1", scenario, ("goodput_mbps", "pacing_gain"))
    exp = Experiment("bbq-fig13", "-", "-", runs=lambda quick: [spec], analyse=lambda o, d, q: Report(),
                     live=lambda quick: [spec])
    results = tmp_path / "2026-01-02.json"
    linux.write(results, [linux.Record("bbq-fig1", "2026-01-02", False, cannot="kept")])
    outcomes = reproduce.run_experiments([exp], quick=True, jobs=1)
    ran = reproduce.run_linux([exp], outcomes, quick=True, results=results)
    assert ran == {"bbq-fig13": ["live/bbr/seed=1"]}
    live = outcomes["bbq-fig13"]["live/bbr/seed=1"]
    assert live.summary["engine"] == "live"
    assert sum(f["goodput_mbps"] for f in live.flows) > 10  # the 20 Mbit/s link carried the two flows
    # The columns asked for, one row per flow, as for a simulated run.
    assert live.flow["goodput_mbps"].shape[0] == 2 and live.flow["pacing_gain"].shape == live.flow["goodput_mbps"].shape
    records = linux.latest(tmp_path)
    assert records["bbq-fig13"].runs == 1 and records["bbq-fig13"].quick and not records["bbq-fig13"].cannot
    # The record says how the testbed's path behaved (a stalling one moves results: docs/host.md).
    assert records["bbq-fig13"].host["late_over_1ms_per_s"] >= 0
    assert records["bbq-fig13"].host["bpf_clock"] == "jiffies" and records["bbq-fig13"].host["hz"] in (100, 250, 300, 1000, None)
    assert records["bbq-fig13"].host["runs_on_a_stalling_path"] in (0, 1)
    assert records["bbq-fig1"].cannot == "kept"


def test_cws_fig13_marks_the_points_it_misses_and_quotes_them():
    """cws-fig13 repeats live the points where our BBR-CWS misses the
    paper's claims, and BBR at one of them; an injected live outcome comes
    back as a live row."""
    exp = registry.get("cws-fig13")
    assert [s.key for s in exp.live_specs(quick=False)] == [
        "bbr-cws/rtt=10/buffer=6/seed=1", "bbr-cws/rtt=40/buffer=3/seed=1", "bbr/rtt=40/buffer=3/seed=1"]
    outcomes = reproduce.run_experiments([exp], quick=True, jobs=1)["cws-fig13"]
    (spec,) = exp.live_specs(quick=True)
    live = dataclasses.replace(outcomes[spec.key], key=LIVE_PREFIX + spec.key)
    rep = exp.analyse({**outcomes, live.key: live}, None, True)
    rows = [c for c in rep.comparisons if c.quantity.startswith("live Linux")]
    assert len(rows) == 1 and "whole-run F" in rows[0].ours and rows[0].agrees is None


def test_an_analysis_that_reads_a_flows_queue_gets_the_bottleneck_that_counts_it(monkeypatch):
    """Only the userspace bottleneck counts a flow's own queue (the kernel's
    bfifo reports null): a live run whose analysis reads ``queue_bytes``
    gets it; the others the live engine's choice ("auto")."""
    from ccarena.experiments import runner
    from ccarena.live import engine

    class Ran(Exception):
        pass

    asked = []

    def fake(scenario, **kw):
        asked.append(kw["bottleneck"])
        raise Ran

    monkeypatch.setattr(engine, "run_live", fake)
    scenario = {"duration": "6s", "bottleneck": {"rate": "20Mbit", "buffer": "200KB"},
                "flow": [{"cc": "bbr", "rtt": "10ms"}]}
    for columns in (("goodput_mbps", "queue_bytes"), ("goodput_mbps",)):
        with pytest.raises(Ran):
            runner.run_live(RunSpec("bbr/seed=1", scenario, columns), log=lambda line: None)
    assert asked == ["userspace", "auto"]
