"""`ccarena reproduce`: the experiment framework (listing, errors, reports,
determinism), on --quick runs (a few seconds each)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ccarena import experiments
from ccarena.experiments import compare, framework, registry, report, runner
from ccarena.experiments.bbq import paper as bbq_paper
from ccarena.experiments.framework import Comparison, Paper, Result, RunSpec, Variant
from conftest import run_cli

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
TABLE_HEADER = "| quantity | paper | ccarena | ccarena range | verdict |"


def test_list_names_every_experiment_with_its_figure():
    proc = run_cli("reproduce", "--list")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert [line.split()[0] for line in lines] == experiments.names()
    by_name = {exp.name: exp for exp in experiments.EXPERIMENTS}
    for line in lines:
        exp = by_name[line.split()[0]]
        assert exp.figure in line and exp.summary in line
    # Every figure and table of the BBQ paper is covered by some experiment.
    covered = " ".join(exp.figure for exp in experiments.EXPERIMENTS)
    for fig in ["Fig. 1", "Fig. 3", "Fig. 4", "Table I", "Fig. 5", "Fig. 6", "Fig. 7", "Figs. 8-11", "Fig. 12",
                "Fig. 13", "Fig. 14", "Fig. 15", "Fig. 16", "Fig. 17"]:
        assert fig in covered, fig


@pytest.mark.parametrize(
    "args, field",
    [
        (["bbq-fig99"], "reproduce: unknown experiment 'bbq-fig99'"),
        (["bbq-fig1", "nope"], "reproduce: unknown experiment 'nope'"),
        (["bbq-fig1", "--jobs", "0"], "--jobs: must be >= 1"),
        (["all", "bbq-fig1"], "reproduce: 'all' runs every experiment"),
        ([], "reproduce: name an experiment"),
    ],
)
def test_bad_request_is_one_line_exit_2_and_writes_nothing(tmp_path, args, field):
    proc = run_cli("reproduce", *args, "--out", tmp_path / "out")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"ccarena: error: {field}")
    assert len(proc.stderr.splitlines()) == 1
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists()


def _report_numbers(text: str) -> list[str]:
    return re.findall(r"\d+\.\d+", text)


def test_quick_run_writes_report_with_table_figures_and_results(tmp_path):
    proc = run_cli("reproduce", "bbq-fig1", "--quick", "--out", tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "bbq-fig1"
    report = (out / "report.md").read_text()
    assert TABLE_HEADER in report
    assert "--quick run" in report
    # Every figure the report links exists and is a PNG.
    linked = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", report)
    assert linked and all((out / name).read_bytes().startswith(PNG_MAGIC) for name in linked)
    results = json.loads((out / "results.json").read_text())
    assert results["experiment"] == "bbq-fig1" and results["quick"] is True
    assert 0 < results["numbers"]["bbr.short_share"] < 1
    # The table is printed too, and progress goes to stderr, one line per run.
    assert "BBR: 10 ms flow goodput" in proc.stdout
    progress = [line for line in proc.stderr.splitlines() if re.match(r"ccarena: \[\s*\d+/\d+\] reproduce: bbq-fig1/", line)]
    runs = len(experiments.get("bbq-fig1").specs(quick=True))
    assert len(progress) == runs
    assert progress[-1].startswith(f"ccarena: [{runs}/{runs}]")


def test_reports_are_deterministic_across_runs_and_job_counts(tmp_path):
    first = run_cli("reproduce", "bbq-fig8-11", "bbq-fig4-table1", "--quick", "--jobs", "1", "--out", tmp_path / "a")
    second = run_cli("reproduce", "bbq-fig8-11", "bbq-fig4-table1", "--quick", "--jobs", "2", "--out", tmp_path / "b")
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    for name in ("bbq-fig8-11", "bbq-fig4-table1"):
        a = (tmp_path / "a" / name / "report.md").read_text()
        b = (tmp_path / "b" / name / "report.md").read_text()
        assert a == b
        assert _report_numbers(a)  # the report does carry numbers
        results = [(tmp_path / run / name / "results.json").read_bytes() for run in ("a", "b")]
        assert results[0] == results[1]


def test_all_quick_writes_an_index_linking_every_report(tmp_path):
    proc = run_cli("reproduce", "all", "--quick", "--out", tmp_path)
    assert proc.returncode == 0, proc.stderr
    index = (tmp_path / "index.md").read_text()
    assert index.startswith(report.INDEX_TITLE)
    for pkg in registry.PACKAGES:
        agreed = judged = 0
        for exp in pkg.EXPERIMENTS:
            name = exp.name
            assert f"[{name}/report.md]({name}/report.md)" in index
            # A package without a paper (beyond the papers) has no rows, and says so.
            expected = TABLE_HEADER if pkg.PAPER.file else report.NO_CLAIMS
            assert expected in (tmp_path / name / "report.md").read_text()
            rows = json.loads((tmp_path / name / "results.json").read_text())["comparisons"]
            agreed += sum(1 for r in rows if r["agrees"] is True)
            judged += sum(1 for r in rows if r["agrees"] is not None)
        # One section per paper, with the paper's verdict summary.
        assert f"## {pkg.PAPER.key}: {pkg.PAPER.title}" in index
        n = len(pkg.EXPERIMENTS)
        assert f"{agreed} of {judged} judged rows agree over {n} experiment{'s' if n != 1 else ''}" in index
    assert "## bbq: the BBQ paper" in index
    assert re.search(r"total wall time \d+\.\d s", index)


def test_every_experiment_belongs_to_the_paper_package_it_is_named_after():
    assert [p.key for p in registry.PAPERS] == [pkg.__name__.rsplit(".", 1)[1] for pkg in registry.PACKAGES]
    for pkg in registry.PACKAGES:
        for exp in pkg.EXPERIMENTS:
            assert exp.name.startswith(pkg.PAPER.key + "-")
            assert registry.paper_of(exp.name) is pkg.PAPER
    assert [e.name for e in experiments.EXPERIMENTS] == [e.name for pkg in registry.PACKAGES for e in pkg.EXPERIMENTS]


def test_a_variant_gives_the_flow_its_cc_and_params():
    assert bbq_paper.BBR.flow_fields() == {"cc": "bbr"}
    assert bbq_paper.FIRST_CUT.flow_fields() == {"cc": "bbq", "params": {"first_cut": 1}}
    old = bbq_paper.linux49(bbq_paper.FIRST_CUT)
    assert old.name == "bbq-first-cut-linux49" and old.cc == "bbq"
    assert dict(old.params) == {"first_cut": 1, "extra_acked_gain": 0, "pacing_margin": 0}
    assert bbq_paper.flow(old, 10, count=2) == {"cc": "bbq", "rtt": "10ms", "params": dict(old.params), "count": 2}
    with pytest.raises(TypeError):
        old.params["first_cut"] = 0  # shared by experiments: read-only
    with pytest.raises(TypeError, match="Variant"):
        bbq_paper.flow("bbq-first-cut", 10)  # no pseudo-cc strings
    assert len({Variant("x", "bbq", {"a": 1}), Variant("x", "bbq", {"a": 1})}) == 1


def test_index_has_a_section_and_a_verdict_summary_per_paper():
    papers = [Paper("aaa", "paper A", "A. Author, *A*", "a.txt"), Paper("bbb", "paper B", "B. Author, *B*", "b.txt")]

    def result(name: str, paper: str, verdicts: list[bool | None]) -> Result:
        rows = tuple(Comparison(f"q{i}", "1", "1", agrees=v, reason="r") for i, v in enumerate(verdicts))
        return Result(name, "Fig. 1", "summary", paper, False, (), rows, (), (), {})

    results = [result("aaa-fig1", "aaa", [True, False, None]), result("bbb-fig1", "bbb", [True, True]),
               result("aaa-fig2", "aaa", [True])]
    index = report.index_markdown(papers, results, False, 1.0, 3, 2)
    assert index.startswith(report.INDEX_TITLE + ": 2 papers, 3 experiments\n")
    assert "| aaa: paper A | 2 | 2 / 3 |" in index and "| bbb: paper B | 1 | 2 / 2 |" in index
    a, b = index.index("## aaa: paper A"), index.index("## bbb: paper B")
    assert a < index.index("| aaa-fig2 |") < b < index.index("| bbb-fig1 |")
    assert "2 of 3 judged rows agree over 2 experiments" in index
    md = report.markdown(results[0])
    assert "1 of 2 judged rows agree" in md and "- **q1**: r" in md and "### Notes on the rows" in md
    # A row that depends on the metric is in neither count, and the index says how many there are.
    depends = Comparison("q9", "1", "1", agrees=None, reason="r", metric_dependent=True)
    results[2] = Result("aaa-fig2", "Fig. 2", "summary", "aaa", False, (), (depends,), (), (), {})
    index = report.index_markdown(papers, results, False, 1.0, 3, 2)
    assert "| aaa: paper A | 2 | 1 / 2, 1 depends on the metric |" in index
    assert "| aaa-fig2 | Fig. 2 | 0 / 0, 1 depends on the metric |" in index
    assert "1 of 2 judged rows agree over 2 experiments; 1 depends on the metric (neither agree nor differ)" in index


def test_runner_reports_progress_once_per_run_and_keeps_requested_columns():
    doc = {"duration": "2s", "bottleneck": {"rate": "10Mbit", "buffer": "100KB"},
           "flow": [{"cc": "bbr", "rtt": "10ms"}, {"cc": "cubic", "rtt": "20ms"}]}
    specs = [RunSpec("plain", doc), RunSpec("traced", doc, ("cwnd",), ("queue_bytes",))]
    seen = []
    outcomes = runner.execute(specs, jobs=1, progress=lambda k, n, key, wall: seen.append((k, n, key)))
    assert [(k, n) for k, n, _ in seen] == [(1, 2), (2, 2)]
    assert {key for _, _, key in seen} == {"plain", "traced"}
    assert outcomes["plain"].flow == {} and outcomes["plain"].link == {}
    traced = outcomes["traced"]
    assert traced.flow["cwnd"].shape == (2, len(traced.t_s)) and len(traced.t_s) == 20
    assert traced.link["queue_bytes"].shape == (20,)
    assert outcomes["plain"].summary == traced.summary


def test_ratios_are_per_seed():
    # Ratio claims are judged on per-seed ratios (seed i of one algorithm over seed i of the other).
    assert compare.ratios([0.5, 0.6], [0.25, 0.3]) == [2.0, 2.0]
    assert compare.ratios([0.5], [0.0]) == [float("inf")]
    assert framework.MIN_SEEDS == 5


def test_fair_distance_is_from_the_fair_share():
    # "Fairer" compares these (verdict rules: tests/test_claims.py): for the
    # 200-300 ms pair of Fig. 17, BBR 67% -> BBQ 75% for the shorter flow is further from 50%.
    assert framework.fair_distance(0.75) > framework.fair_distance(0.67)
    assert framework.fair_distance(0.05, n=21) == pytest.approx(abs(0.05 - 1 / 21))


def test_reports_quote_no_live_numbers_and_no_project_targets():
    from ccarena.experiments.bbq import fig1, fig12, fig3_14, fig4_table1, fig17

    for module in (fig1, fig12, fig3_14, fig4_table1, fig17):
        text = Path(module.__file__).read_text()
        assert "issue target" not in text and "we test 40-60%" not in text, module.__name__
        assert not re.search(r"Linux 6\.18", text), module.__name__


def test_a_failing_run_is_reported_with_its_key():
    bad = {"duration": "2s", "bottleneck": {"rate": "10Mbit", "buffer": "100KB"},
           "flow": [{"cc": "no-such-cc", "rtt": "10ms"}]}
    good = {**bad, "flow": [{"cc": "bbr", "rtt": "10ms"}]}
    for jobs in (1, 2):
        with pytest.raises(runner.RunFailed, match=r"run broken failed: ScenarioError: .*no-such-cc"):
            runner.execute([RunSpec("fine", good), RunSpec("broken", bad)], jobs=jobs)


def _rows(name: str, rep) -> list:
    """Every row of the experiment's report: its claims judged by the
    framework, then its own rows."""
    from ccarena.experiments.framework import all_rows

    return all_rows(experiments.get(name), experiments.paper_of(name).key, rep)


@pytest.fixture(scope="module")
def quick_outcomes():
    """Every experiment's --quick runs (one seed), run once for this module."""
    specs = {name: experiments.get(name).specs(quick=True) for name in experiments.names()}
    outcomes = runner.execute([RunSpec(f"{name}|{s.key}", s.scenario, s.flow_columns, s.link_columns)
                               for name, group in specs.items() for s in group], jobs=2)
    return {name: {s.key: outcomes[f"{name}|{s.key}"] for s in group} for name, group in specs.items()}


def test_no_quick_row_differs_without_a_reason(quick_outcomes):
    for name in experiments.names():
        rows = _rows(name, experiments.get(name).analyse(quick_outcomes[name], None, True))
        assert not [c.quantity for c in rows if c.unexplained], name


def test_every_analysis_measures_runs_whose_own_queue_column_is_null(quick_outcomes):
    """A live run behind the kernel bottleneck has no per-flow queue (null,
    NaN here): an analysis that reads it must still measure the rest, not
    raise (np.nanargmax did, on cws-fig9-12)."""
    import dataclasses

    import numpy as np

    nulled = 0
    for name in experiments.names():
        outcomes = {}
        for k, run in quick_outcomes[name].items():
            if "queue_bytes" in run.flow:
                run = dataclasses.replace(run, flow={**run.flow, "queue_bytes": np.full_like(run.flow["queue_bytes"],
                                                                                              np.nan)})
                nulled += 1
            outcomes[k] = run
        experiments.get(name).analyse(outcomes, None, True)
    assert nulled > 0


def test_every_judged_row_that_differs_says_why_from_its_numbers(quick_outcomes, monkeypatch):
    """Rule 5 on the judged path, without full runs: the quick run's seed
    stands in for all of paper.SEEDS (identical seeds, zero spread), so
    nearly every number is judged and differs; each such row must carry a
    reason, no reason may quote a live-Linux number and no row may test a
    project target ("we test ...")."""
    from ccarena.experiments.bbq import fig7, paper

    first = paper.SEEDS[0]
    monkeypatch.setattr(paper, "seeds", lambda quick: paper.SEEDS)
    monkeypatch.setattr(fig7, "seeds", lambda quick: paper.SEEDS)
    judged = 0
    for name in experiments.names():
        outcomes = dict(quick_outcomes[name])
        for k, run in quick_outcomes[name].items():
            if k.endswith(f"/seed={first}"):
                for seed in paper.SEEDS[1:]:
                    outcomes.setdefault(k[: -len(str(first))] + str(seed), run)
        rows = _rows(name, experiments.get(name).analyse(outcomes, None, True))
        assert not [c.quantity for c in rows if c.unexplained], name
        judged += sum(c.agrees is not None for c in rows)
        for c in rows:
            assert "Linux 6.18" not in c.reason and "we test" not in c.paper, (name, c.quantity)
    assert judged >= 30
