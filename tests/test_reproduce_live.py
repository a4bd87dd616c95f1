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

import numpy as np
import pytest

from ccarena.errors import ScenarioError
from ccarena.experiments import linux, registry, report
from ccarena.experiments.framework import LIVE_PREFIX, Experiment, Outcome, Report, Result, RunSpec
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


# --- a pass that resumes (live_runs.py) ---------------------------------------

from ccarena.experiments import live_runs, runner  # noqa: E402


def _two_run_experiment(analysed: list) -> Experiment:
    def spec(seed: int) -> RunSpec:
        return RunSpec(f"bbr/seed={seed}", {
            "duration": "6s", "seed": seed, "measure": {"from": "2s"},
            "bottleneck": {"rate": "20Mbit", "buffer": "200KB"},
            "flow": [{"cc": "bbr", "rtt": "10ms"}, {"cc": "cubic", "rtt": "30ms"}]}, ("goodput_mbps",))

    def analyse(outcomes, _dir, _quick):
        analysed.append({k: o.share(0) for k, o in outcomes.items()})
        return Report()

    return Experiment("bbq-fig13", "-", "-", runs=lambda quick: [spec(1), spec(2)], analyse=analyse)


def _fake_live(calls: list):
    """A stand-in for the testbed: a run whose 10 ms flow has a share
    given by its seed and a column of its own, so a kept run is known."""
    def run_live(spec, log, wait=None):
        calls.append(spec.key)
        seed = spec.scenario["seed"]
        summary = {"flows": [{"share": seed / 10}, {"share": 1 - seed / 10}], "engine": "live",
                   "scenario": {"config": {"duration_ns": 6_000_000_000}},
                   "live": {"delay_line": {"late_over_1ms": 0}}}
        flow = {"goodput_mbps": np.full((2, 3), float(seed))}
        return Outcome(spec.key, summary, np.arange(3.0), flow, {}, 7.5)
    return run_live


def test_a_live_pass_keeps_each_run_and_resumes(tmp_path, monkeypatch):
    """Each run is kept as it finishes; the same pass again makes none
    that is kept (the analysis sees them as they were); a run whose file
    is gone or unreadable is made again; the record lists the days."""
    calls, analysed = [], []
    monkeypatch.setattr(runner, "run_live", _fake_live(calls))
    exp = _two_run_experiment(analysed)
    logged = []

    def once(date: str) -> linux.Record:
        record, _ = linux.run(exp, "bbq", quick=False, capacity_mbps=None, wait=None, log=logged.append,
                              date=date, reps=2, store=tmp_path)
        return record

    first = once("2026-01-01")
    assert calls == ["bbr/seed=1", "bbr/seed=2"] and first.days == ("2026-01-01",)
    kept = sorted((tmp_path / "bbq-fig13").iterdir())
    assert len(kept) == 2 and all(p.suffix == ".npz" for p in kept)
    # Again: nothing runs; the analysis gets the same outcomes.
    second = once("2026-01-02")
    assert calls == ["bbr/seed=1", "bbr/seed=2"]
    assert analysed[1] == analysed[0] == {"bbr/seed=1": 0.1, "bbr/seed=2": 0.2}
    assert any("2 of 2 runs kept" in line for line in logged)
    # A kept run is "the day it ran": the record spans both days.
    kept[0].write_bytes(b"not a run")
    third = once("2026-01-03")
    assert len(calls) == 3 and third.days == ("2026-01-01", "2026-01-03")
    assert linux.record_from_json("x", third.date, linux.record_to_json(third)).days == third.days


def test_a_kept_run_is_that_scenario_on_that_engine():
    """The name of a kept run changes with the scenario, its seed, the
    columns read and the live engine's code; the simulator's host model
    does not enter (the live engine runs none)."""
    base = RunSpec("k", {"duration": "6s", "seed": 1, "bottleneck": {"rate": "20Mbit", "buffer": "200KB"},
                         "flow": [{"cc": "bbr", "rtt": "10ms"}]}, ("goodput_mbps",))
    other_seed = dataclasses.replace(base, scenario={**base.scenario, "seed": 2})
    other_cols = dataclasses.replace(base, flow_columns=("goodput_mbps", "queue_bytes"))
    ideal_host = dataclasses.replace(base, scenario={**base.scenario, "host": "ideal"})
    names = {live_runs.digest(s) for s in (base, other_seed, other_cols)}
    assert len(names) == 3
    assert live_runs.digest(ideal_host) == live_runs.digest(base)
    assert "python/ccarena/live/engine.py" in {str(p.relative_to(live_runs._ROOT)) for p in live_runs._files()}


def test_a_kept_run_reads_back_without_pickle(tmp_path):
    outcome = Outcome("k", {"flows": [{"share": 0.25}], "x": [1, None]}, np.arange(4.0),
                      {"goodput_mbps": np.ones((1, 4))}, {"queue_bytes": np.zeros(4)}, 3.0)
    path = tmp_path / "a" / "b.npz"
    live_runs.store(path, outcome)
    back, day = live_runs.load(path)
    assert back.summary == outcome.summary and back.key == "k" and back.wall_s == 3.0 and len(day) == 10
    assert np.array_equal(back.flow["goodput_mbps"], outcome.flow["goodput_mbps"])
    assert np.array_equal(back.link["queue_bytes"], outcome.link["queue_bytes"])
    assert live_runs.load(tmp_path / "absent.npz") is None


def test_live_refuses_an_out_whose_live_runs_is_not_ours(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / ".ccarena-reproduce").write_text('{"written_by": "ccarena", "kind": "reproduce"}\n')
    (out / "live-runs").write_text("mine\n")
    with pytest.raises(ScenarioError, match=r"live-runs exists and is not a directory of kept live runs"):
        reproduce._check_store(out / live_runs.DIRNAME, "--out")
    assert (out / "live-runs").read_text() == "mine\n"


def test_live_runs_elsewhere_resume_from_there(tmp_path, monkeypatch):
    """--live-store RUNS keeps the runs in RUNS/NAME/ (e.g. a directory
    committed with the project), not in the reproduction's directory; a
    second pass into another --out resumes from them; a RUNS that is a
    file is refused before anything runs, and left as it was."""
    calls = []
    monkeypatch.setattr(runner, "run_live", _fake_live(calls))
    monkeypatch.setattr(reproduce, "check_live", lambda results: None)
    monkeypatch.setattr("ccarena.live.engine.check_prerequisites", lambda: None)
    monkeypatch.setattr("ccarena.live.engine.host_capacity", lambda *a: None)
    exp = _two_run_experiment([])
    monkeypatch.setattr(reproduce.registry, "get", lambda name: exp)
    monkeypatch.setattr(reproduce.registry, "paper_of", lambda name: type("P", (), {"key": "bbq"})())
    monkeypatch.setattr(reproduce, "write_experiment", lambda *a: (None, None))
    runs = tmp_path / "committed"
    for out in ("a", "b"):
        reproduce.reproduce(["bbq-fig13"], tmp_path / out, live=True, live_results=tmp_path / "2026-01-01.json",
                            live_store=runs, live_reps=2, jobs=1, progress=False)
    assert calls == ["bbr/seed=1", "bbr/seed=2"]
    assert len(list((runs / "bbq-fig13").glob("*.npz"))) == 2
    assert not (tmp_path / "a" / live_runs.DIRNAME).exists()
    bad = tmp_path / "file"
    bad.write_text("mine\n")
    with pytest.raises(ScenarioError, match=r"^--live-store: .*file exists and is not a directory of kept live runs"):
        reproduce.reproduce(["bbq-fig13"], tmp_path / "c", live=True, live_results=tmp_path / "2026-01-01.json",
                            live_store=bad, jobs=1, progress=False)
    assert bad.read_text() == "mine\n" and not (tmp_path / "c").exists()
