"""Real Linux beside every judged row (experiments/linux.py): the results
file, the simulator-vs-Linux rule, and the Linux column in report.md,
results.json, the terminal table and index.md. No root: records are made
by hand; test_reproduce_live.py runs the testbed side."""

from __future__ import annotations

import json
import math

import pytest

from ccarena.errors import ScenarioError
from ccarena.experiments import linux, registry, report, verdict
from ccarena.experiments.claims import parse
from ccarena.experiments.framework import Comparison, Experiment, Report, Result, RunSpec
from ccarena.experiments.verdict import Measured

CLAIMS = parse('''
[[claim]]
id = "share"
experiment = "x"
quote = "the short flow gets 6%"
line = 1
quantity = "the 10 ms flow's share"
metric = "goodput share"
unit = "%"
scale = 100
format = ".1f"
[claim.paper]
value = 0.06
exact = "a test's number"
source = "L1"

[[claim]]
id = "order"
experiment = "x"
quote = "grows with the buffer"
line = 2
quantity = "share over buffers"
metric = "goodput share"
[claim.paper]
order = "increasing"
source = "L2"
''', "test")
SHARE, ORDER = CLAIMS


def record(**measured: Measured) -> linux.Record:
    return linux.Record("x", "2026-11-27", False, measured=measured, runs=5)


def test_measured_survives_the_file_nan_included():
    m = Measured(values=[0.1, float("nan")], members={"a": [1.0, 2.0]}, note="n",
                 alternatives={"alt": Measured(values=[3.0])}, chains={"c": {"p": [1.0], "q": [2.0]}})
    back = linux.measured_from_json(json.loads(json.dumps(linux.measured_to_json(m))))
    assert back.values[0] == 0.1 and math.isnan(back.values[1])
    assert back.members == {"a": [1.0, 2.0]} and back.note == "n" and back.alternatives["alt"].values == [3.0]
    assert back.chains == {"c": {"p": [1.0], "q": [2.0]}}


def test_simulator_and_linux_consistent_within_the_larger_half_range():
    sim = Measured(values=[0.062, 0.064, 0.066, 0.068, 0.070])   # mean 6.6%, half-range 0.4 pp
    live = Measured(values=[0.058, 0.060, 0.064])                 # mean 6.07%, half-range 0.3 pp
    status, rule = verdict.sim_vs_linux(SHARE, sim, live)
    assert status == "differ", rule
    assert rule.startswith("simulator and Linux differ: simulator 6.6%, Linux 6.1%; distance 0.5% > 0.4%")
    wide = Measured(values=[0.050, 0.060, 0.070])                 # half-range 1 pp
    assert verdict.sim_vs_linux(SHARE, sim, wide)[0] == "consistent"


def test_numbers_that_would_print_alike_get_the_digits_that_tell_them_apart():
    """A reader checks "x > y" from the printed numbers: where the claim's
    format would print two different numbers alike (6.0% against 6.0%,
    a distance of 0.0% > 0.0%), the rule prints more digits."""
    sim = Measured(values=[0.0600] * 5)
    live = Measured(values=[0.0601] * 3)
    status, rule = verdict.sim_vs_linux(SHARE, sim, live)
    assert status == "differ"
    assert rule.startswith("simulator and Linux differ: simulator 6.00%, Linux 6.01%; distance 0.01% > 0.00%"), rule
    assert SHARE.show_apart(0.06, 0.06) == ("6.0%", "6.0%")


def test_a_number_counted_on_a_grid_is_not_told_apart_below_half_its_step():
    """Both engines give the same whole bin in every run (half-ranges 0):
    a difference under half the grid's step is not a difference."""
    sim = Measured(values=[0.0600] * 5, resolution=0.001)
    live = Measured(values=[0.0604] * 3)
    status, rule = verdict.sim_vs_linux(SHARE, sim, live)
    assert status == "consistent", rule
    assert "half our resolution 0.1%" in rule
    assert verdict.sim_vs_linux(SHARE, sim, Measured(values=[0.0606] * 3))[0] == "differ"
    # The paper's rule allows the same half step, and says so.
    row = verdict.judge(SHARE, Measured(values=[0.0604] * 5, resolution=0.001))
    assert row.agrees is True and "half our resolution 0.1%" in row.rule
    assert verdict.judge(SHARE, Measured(values=[0.0604] * 5)).agrees is False
    # Kept in a Linux record.
    assert linux.measured_from_json(linux.measured_to_json(sim)).resolution == 0.001


def test_too_few_repetitions_or_nan_are_not_compared():
    sim = Measured(values=[0.06] * 5)
    assert verdict.sim_vs_linux(SHARE, sim, Measured(values=[0.06, 0.06]))[0] == "not compared"
    assert verdict.sim_vs_linux(SHARE, sim, Measured(values=[0.06, 0.06, float("nan")]))[0] == "not compared"


def test_an_order_compares_its_members():
    sim = Measured(members={"1 BDP": [0.1] * 5, "4 BDP": [0.3] * 5})
    live = Measured(members={"1 BDP": [0.1] * 5, "4 BDP": [0.5] * 5})
    status, rule = verdict.sim_vs_linux(ORDER, sim, live)
    assert status == "differ" and "4 BDP: simulator 0.3, Linux 0.5" in rule and "1 BDP: simulator 0.1, Linux 0.1" in rule


def test_the_linux_cell_says_why_it_has_no_numbers():
    sim = Measured(values=[0.06] * 5)
    none = verdict.linux_cell(SHARE, sim, None, quick=False)
    assert (none.ours, none.status) == ("-", "not run live") and "--live" in none.rule
    cannot = verdict.linux_cell(SHARE, sim, linux.Record("x", "2026-11-27", False, cannot="a 10 Gbit/s link"),
                                quick=False)
    assert cannot.status == "cannot carry" and "a 10 Gbit/s link" in cannot.rule
    assert cannot.source == "docs/linux/2026-11-27.json"
    quick = verdict.linux_cell(SHARE, sim, record(share=Measured(values=[0.06] * 5)), quick=True)
    assert quick.status == "not compared" and quick.ours == "6.0%"


def test_linux_is_judged_against_the_paper_by_the_same_rule():
    cell = verdict.linux_cell(SHARE, Measured(values=[0.06] * 5), record(share=Measured(values=[0.06, 0.061, 0.059,
                                                                                                0.06, 0.06])), False)
    assert cell.verdict == "agrees" and cell.status == "consistent"
    assert cell.rule.startswith("Linux against the paper: paper 6.0%; ours 6.0%")
    few = verdict.linux_cell(SHARE, Measured(values=[0.06] * 5), record(share=Measured(values=[0.06] * 3)), False)
    assert few.verdict == "-" and few.status == "consistent"  # 3 repetitions: compared, not judged


def test_newest_record_per_experiment_and_foreign_files_ignored(tmp_path):
    linux.write(tmp_path / "2026-01-01.json", [linux.Record("a", "2026-01-01", False, cannot="old"),
                                                 linux.Record("b", "2026-01-01", False, cannot="only")])
    linux.write(tmp_path / "2026-02-01.json", [linux.Record("a", "2026-02-01", False, cannot="new")])
    (tmp_path / "2026-03-01.json").write_text('{"not": "ours"}')
    records = linux.latest(tmp_path)
    assert (records["a"].cannot, records["a"].date, records["b"].cannot) == ("new", "2026-02-01", "only")
    # Adding to a file keeps its other experiments.
    linux.write(tmp_path / "2026-01-01.json", [linux.Record("c", "2026-01-01", False, cannot="added")])
    doc = json.loads((tmp_path / "2026-01-01.json").read_text())
    assert sorted(doc["experiments"]) == ["a", "b", "c"] and doc["format"] == linux.FORMAT


def test_a_users_file_is_never_written(tmp_path):
    mine = tmp_path / "2026-01-01.json"
    mine.write_text("my notes\n")
    with pytest.raises(ScenarioError, match="not a ccarena Linux results file"):
        linux.write(mine, [linux.Record("a", "2026-01-01", False)])
    assert mine.read_text() == "my notes\n"
    with pytest.raises(ScenarioError, match="does not exist"):
        linux.check_writable(tmp_path / "nowhere" / "x.json")


def test_kernel_bbr_with_parameters_runs_as_ours_through_bpf():
    spec = RunSpec("k", {"flow": [{"cc": "bbr", "params": {"cwnd_gain": 2}}, {"cc": "bbr"}, {"cc": "cubic"}]})
    flows = linux.on_linux(spec).scenario["flow"]
    assert [f["cc"] for f in flows] == ["bbr@ccarena", "bbr", "cubic"]
    assert spec.scenario["flow"][0]["cc"] == "bbr"  # the simulator's spec is untouched


def test_the_testbed_says_what_it_cannot_carry():
    fine = {"duration": "5s", "bottleneck": {"rate": "100Mbit", "buffer": "1MB"}, "flow": [{"cc": "cubic", "rtt": "10ms"}]}
    assert linux.cannot_carry([RunSpec("a", fine)], 1445.0) == ""
    fast = {**fine, "bottleneck": {"rate": "1Gbit", "buffer": "1MB"}}
    assert "1000 Mbit/s bottleneck" in linux.cannot_carry([RunSpec("b", fast)], 1445.0)
    fine_grained = {**fine, "output": {"interval": "1ms"}}
    assert "samples at most every 10ms" in linux.cannot_carry([RunSpec("c", fine_grained)], None)
    held_acks = {**fine, "host": {"ack_delay_ns": [[0.0, 0], [1.0, 40_000_000]]}}
    assert "host model" in linux.cannot_carry([RunSpec("d", held_acks)], None)
    assert linux.cannot_carry([RunSpec("e", {**fine, "host": "linux"})], None) == ""


def _result(rows) -> Result:
    return Result("x", "Fig. 1", "s", "bbq", False, (), tuple(rows), (), (), {})


def test_reports_show_paper_simulator_and_linux(tmp_path):
    rows = verdict.rows(CLAIMS, {"share": Measured(values=[0.062, 0.064, 0.066, 0.068, 0.070]),
                                 "order": Measured(members={"1": [0.1] * 5, "2": [0.2] * 5})}, "x",
                        record(share=Measured(values=[0.058, 0.060, 0.064]),
                               order=Measured(members={"1": [0.1] * 5, "2": [0.2] * 5})), False)
    res = _result(rows + [Comparison("ours only", "-", "1")])
    md = report.markdown(res)
    assert "| Linux | simulator vs Linux |" in md and "**differ**" in md and "### Real Linux" in md
    assert "From `docs/linux/2026-11-27.json`." in md
    back = report.result_from_json(report.results_json(res))
    assert back.rows[0].linux == rows[0].linux and back.rows[2].linux is None
    assert "DIFFER" in report.plain_table(res.rows)
    index = report.index_markdown(registry.PAPERS, [res], False, 1.0, 1, 1)
    assert "## Simulator defects to investigate" in index and "- x: the 10 ms flow's share" in index
    assert "| 1 / 1 |" in index  # one consistent, one differing row


def test_every_judged_row_of_a_real_experiment_has_a_linux_cell():
    exp = registry.get("bbr-policer")
    claimed = [c for c in Result.of(exp, "bbr", exp.analyse(_policer_outcomes(), None, True), True).rows if c.claim]
    assert claimed and all(c.linux is not None for c in claimed)


def _policer_outcomes():
    from ccarena.experiments import reproduce as _  # noqa: F401
    import importlib

    rp = importlib.import_module("ccarena.experiments.reproduce")
    return rp.run_experiments([registry.get("bbr-policer")], quick=True, jobs=1)["bbr-policer"]


def test_an_experiment_without_claims_gets_no_linux_column():
    exp = Experiment("bbq-fairness-map", "-", "-", runs=lambda q: [], analyse=lambda o, d, q: Report())
    res = Result.of(exp, "bbq", Report(comparisons=[Comparison("a", "-", "1")]), False)
    assert all(c.linux is None for c in res.rows) and "Linux" not in report.markdown(res)


def test_a_live_pass_runs_the_first_seeds_only():
    from ccarena.experiments.variants import first_seeds

    exp = registry.get("bbr-fig6")
    full = exp.specs(False)
    with first_seeds(3):
        live = exp.specs(False)
    assert len(live) == len(full) * 3 // 5 and {s.scenario["seed"] for s in live} == {1, 2, 3}
    assert len(exp.specs(False)) == len(full)  # only inside the block


@pytest.mark.parametrize("args, message", [
    (["--live-reps", "3"], "--live-reps: repeats live runs: only with --live"),
    (["--live", "--live-reps", "0"], "--live-reps: must be >= 1, got 0"),
    (["--live-store", "runs"], "--live-store: keeps live runs: only with --live"),
])
def test_live_reps_errors(tmp_path, args, message):
    from conftest import run_cli

    done = run_cli("reproduce", "bbr-fig6", *args, "--out", tmp_path / "o")
    assert done.returncode == 2 and done.stderr.strip().splitlines() == [f"ccarena: error: {message}"]
    assert not (tmp_path / "o").exists()
