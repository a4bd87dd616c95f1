"""What a person sees: results printed where
the user looks (a sweep's summary table, a 1000-flow run folded per
[[flow]] entry), `ccarena ccs` with descriptions and parameters, and the
small things: "1 flow", the speed of a slow run, "done in" counting the
whole command, the warning for a step marker without ECN, the README's
experiment list, and scorecard intervals that stay in range."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

import ccarena
from ccarena import _core
from ccarena.flow_groups import MAX_SHOWN
from ccarena.scenario import PARAM_BITS, param_specs
from ccarena.stats import clipped_interval
from ccarena.sweep import load_sweep
from ccarena.sweep.summary import summary_table
from conftest import REPO, run_cli
from test_sweep import BASE

#: test_sweep's two-flow scenario over a plain axis and one of two paths.
SWEEP = BASE + """
[sweep]
"bottleneck.rate" = ["10Mbit", "20Mbit"]
"flow.0.rtt,flow.1.rtt" = [["10ms", "20ms"], ["10ms", "40ms"]]
seeds = [1, 2]
"""


def _summary(shares: list[float], jain: float, utilization: float) -> dict:
    return {"flows": [{"share": s} for s in shares], "jain": jain, "utilization": utilization}


# ----------------------------------------------------------------- sweep


def test_a_sweep_prints_a_row_per_point_with_mean_and_sd_over_seeds(tmp_path):
    (tmp_path / "s.toml").write_text(SWEEP)
    proc = run_cli("sweep", tmp_path / "s.toml", "--out", tmp_path / "out", "--jobs", "2")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["bottleneck.rate", "flow.0.rtt,flow.1.rtt", "seeds", "flow", "0", "share", "%",
                                "flow", "1", "share", "%", "Jain", "utilisation", "%"]
    rows = lines[2:6]
    assert [r.split()[:3] for r in rows] == [["10Mbit", "10ms,20ms", "2"], ["10Mbit", "10ms,40ms", "2"],
                                             ["20Mbit", "10ms,20ms", "2"], ["20Mbit", "10ms,40ms", "2"]]
    assert all(r.count("±") == 4 for r in rows)
    assert "mean ± sd over seeds" in proc.stdout
    assert "points: 8 (0 cached, 8 computed)" in proc.stdout and "table:" in proc.stdout
    # The numbers are the table's: the first row's Jain is the mean of its two seeds.
    import pyarrow.parquet as pq

    table = pq.read_table(tmp_path / "out" / "points.parquet").to_pylist()
    jain = (table[0]["jain"] + table[1]["jain"]) / 2
    assert f"{jain:.3f} ±" in rows[0]


def test_the_summary_table_folds_seeds_and_stays_readable_when_wide():
    sweep = load_sweep(SWEEP.replace('"bottleneck.rate" = ["10Mbit", "20Mbit"]',
                                     '"bottleneck.rate" = ["10Mbit", "20Mbit", "30Mbit", "40Mbit", "50Mbit"]'))
    summaries = [_summary([0.25, 0.75], 0.8 + 0.1 * (p.values["seed"] - 1), 0.9) for p in sweep.points]
    text = summary_table(sweep.points, summaries, axes=["bottleneck.rate", "flow.0.rtt,flow.1.rtt"], max_rows=4)
    lines = text.splitlines()
    assert len(lines) == 2 + 4 + 2  # header, rule, 4 rows, "... more", "mean ± sd"
    assert lines[2].split() == ["10Mbit", "10ms,20ms", "2", "25.0", "±", "0.0", "75.0", "±", "0.0",
                                "0.850", "±", "0.071", "90.0", "±", "0.0"]
    assert lines[-2] == "... 6 more of 10 rows in points.parquet"
    # Many flows: one column of the smallest and largest share.
    many = [_summary([0.1, 0.2, 0.3, 0.2, 0.2], 0.9, 1.0) for _ in sweep.points]
    text = summary_table(sweep.points, many, axes=["bottleneck.rate"])
    assert "share % min-max" in text and "10.0-30.0" in text
    # One seed: means only.
    single = summary_table(sweep.points[:1], summaries[:1], axes=["bottleneck.rate"])
    assert "±" not in single


# ----------------------------------------------------------- many flows


def test_a_run_of_1000_flows_prints_a_row_per_flow_entry(tmp_path):
    (tmp_path / "many.toml").write_text(
        'duration = "300ms"\n[bottleneck]\nrate = "1Gbit"\nbuffer = "1bdp"\n'
        '[[flow]]\ncc = "cubic"\nrtt = "20ms"\ncount = 600\n'
        '[[flow]]\ncc = "bbr"\nrtt = "40ms"\ncount = 400\n')
    proc = run_cli("run", tmp_path / "many.toml", "--out", tmp_path / "o")
    assert proc.returncode == 0, proc.stderr
    assert "(1000 flows, 0.3 s simulated)" in proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) < 15
    assert lines[0].split() == ["entry", "cc", "rtt", "flows", "mean", "Mbit/s", "min-max", "Mbit/s", "share",
                                "retransmits"]
    first, second = lines[2].split(), lines[3].split()
    assert first[:5] == ["flow[0]", "cubic", "20", "ms", "600"] and second[:5] == ["flow[1]", "bbr", "40", "ms", "400"]
    assert re.fullmatch(r"\d+\.\d\d-\d+\.\d\d", first[6])
    shares = [float(first[7].rstrip("%")), float(second[7].rstrip("%"))]
    assert sum(shares) == pytest.approx(100, abs=0.15)


def test_the_table_and_the_plot_fold_flows_by_the_same_rule():
    from ccarena.plots import _line_groups

    def result(entries: list[dict]) -> ccarena.Result:
        return ccarena.run({"duration": "100ms", "bottleneck": {"rate": "100Mbit", "buffer": "1bdp"},
                            "flow": entries})

    few = result([{"cc": "reno", "rtt": "10ms", "count": MAX_SHOWN}])
    assert few.table().splitlines()[0].startswith("flow ") and len(_line_groups(few)) == MAX_SHOWN
    grouped = result([{"cc": "reno", "rtt": "10ms", "count": MAX_SHOWN}, {"cc": "cubic", "rtt": "20ms"}])
    assert [len(f) for _, f in _line_groups(grouped)] == [MAX_SHOWN, 1]
    assert [line.split()[0] for line in grouped.table().splitlines()[2:4]] == ["flow[0]", "flow[1]"]
    everyone = result([{"cc": "reno", "rtt": f"{10 + i}ms"} for i in range(MAX_SHOWN + 1)])
    assert len(_line_groups(everyone)) == 1
    row = everyone.table().splitlines()[2].split()
    assert row[:5] == ["all", "reno", f"10-{10 + MAX_SHOWN}", "ms", str(MAX_SHOWN + 1)]


def test_a_groups_share_is_its_goodputs_not_a_sum_of_rounded_shares():
    """30,000 equal flows: each share rounds to 3.3e-05 in summary.json,
    which added up make 99.0%; the row gives the group's goodput share."""
    from ccarena.flow_groups import Group
    from ccarena.results import _group_rows

    n = 30_000
    flows = [{"goodput_mbps": 1.0, "share": round(1 / n, 6), "cc": "reno", "rtt_ms": 10.0, "retransmits": 0}] * n
    (row,) = _group_rows(flows, [Group(None, list(range(n)))])[1:]
    assert row[6] == "100.0%"


# ------------------------------------------------------------------ ccs


def _c_descriptions() -> dict[str, str]:
    """CCA_DESCRIPTION(name, "...") of each cc/*.c, read from the source."""
    found = {}
    for path in sorted((REPO / "cc").glob("*.c")):
        m = re.search(r'CCA_DESCRIPTION\((\w+),\s*"((?:[^"\\]|\\.)*)"\)', path.read_text())
        assert m, f"{path.name} has no CCA_DESCRIPTION"
        found[m.group(1)] = m.group(2)
    return found


def test_each_description_is_written_once_in_c_and_reaches_python():
    described = _c_descriptions()
    assert sorted(described) == sorted(_core.cc_names())
    for name, text in described.items():
        assert _core.cc_description(name) == text
    with pytest.raises(ValueError, match="unknown congestion control 'nope'"):
        _core.cc_description("nope")


def test_ccs_lists_every_algorithm_with_its_description_and_parameters():
    proc = run_cli("ccs")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for name, text in _c_descriptions().items():
        assert re.search(rf"^{name} +{re.escape(text)}$", out, re.MULTILINE), name
    assert "19 parameters: bbr's 16, and alpha=\"3ms\", beta=0.01, first_cut=0" in out
    assert "pacing_margin=0.07" in out  # bbr_tuned's defaults that differ from bbr's
    # Of equal tables, the base is the earlier name whose defaults differ least.
    assert "33 parameters: bbr3's 33 (defaults that differ: pacing_margin=0.07, send_quantum=2)" in out
    assert "33 parameters: bbr2's 33 (defaults that differ: pacing_margin=0.07, send_quantum=2)" in out
    assert re.search(r"^reno +.*\n +no parameters$", out, re.MULTILINE)
    assert "ccarena ccs NAME" in out


def test_ccs_name_gives_every_parameter_with_unit_default_and_limits():
    proc = run_cli("ccs", "bbq")
    assert proc.returncode == 0, proc.stderr
    rows = {line.split()[0]: line for line in proc.stdout.splitlines()[4:] if line and not line.startswith("Per flow")}
    assert list(rows) == [s.key for s in param_specs("bbq")]
    assert re.search(r'^alpha +time \(us resolution\).* +"3ms" +0 to 2\^64-1 us, whole us +alpha_us$', rows["alpha"])
    assert re.search(r"^beta +fraction .* +0.01 +0 to 2\^64-1 ppm.* +beta_ppm$", rows["beta"])
    assert re.search(r"^first_cut +integer +0 +0 to 2\^64-1 +first_cut$", rows["first_cut"])
    # The scenario spelling of a name works too.
    assert run_cli("ccs", "bbr3-tuned").stdout.startswith("bbr3_tuned: ")


def test_the_limits_shown_are_what_the_scenario_parser_accepts():
    specs = {s.key: s for s in param_specs("bbq")}
    top = (1 << PARAM_BITS) - 1
    assert specs["first_cut"].parse(top) == top
    assert specs["alpha"].parse(f"{top}us") == top
    for key, too_big in (("first_cut", top + 1), ("alpha", f"{top + 1}us")):
        with pytest.raises(ccarena.units.UnitError, match="too large"):
            specs[key].parse(too_big)
    with pytest.raises(ccarena.units.UnitError):
        specs["alpha"].parse("1500ns")  # whole us


def test_ccs_of_an_unknown_name_is_one_line_exit_2():
    proc = run_cli("ccs", "nope")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.splitlines() == [
        f"ccarena: error: ccs: unknown congestion control 'nope' (known: {', '.join(sorted(_core.cc_names()))})"]


# --------------------------------------------------------- small things


def test_one_flow_is_one_flow_and_a_slow_run_has_a_speed(tmp_path):
    (tmp_path / "one.toml").write_text('duration = "2s"\n[bottleneck]\nrate = "10Mbit"\nbuffer = "1bdp"\n'
                                       '[[flow]]\ncc = "reno"\nrtt = "10ms"\n')
    proc = run_cli("run", tmp_path / "one.toml", "--out", tmp_path / "o")
    assert proc.returncode == 0, proc.stderr
    assert "(1 flow, 2 s simulated)" in proc.stderr
    done = proc.stderr.splitlines()[-1]
    assert re.fullmatch(r"ccarena: done in \d+\.\d\d s wall \(simulator \d+\.\d\d s, [\d.]+x real time\)", done)
    assert " 0x real time" not in done


def test_done_in_counts_the_whole_command_from_the_process_start(tmp_path):
    """The interpreter's start-up, ccarena's imports and the scenario's
    parsing are part of what the user waited for: a process that sleeps
    a second before the command starts reports at least that second."""
    (tmp_path / "one.toml").write_text('duration = "1s"\n[bottleneck]\nrate = "10Mbit"\nbuffer = "1bdp"\n'
                                       '[[flow]]\ncc = "reno"\nrtt = "10ms"\n')
    code = ("import sys, time; time.sleep(1.0); sys.argv = ['ccarena', 'run', 'one.toml', '--out', 'o']; "
            "from ccarena.cli import main; sys.exit(main())")
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                          check=False)
    waited = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr
    reported = float(re.search(r"done in ([\d.]+) s wall", proc.stderr).group(1))
    assert 1.0 <= reported <= waited + 0.05


def test_in_process_main_counts_from_its_own_call():
    from ccarena.command_clock import CommandClock, process_age_s

    age = process_age_s()
    assert age is not None and age > 0
    whole = CommandClock(whole_process=True)
    assert whole.seconds() >= age - 0.05
    assert CommandClock(whole_process=False).seconds() < 1.0


def _mark_threshold(tmp_path: Path, ecn: bool) -> subprocess.CompletedProcess[str]:
    (tmp_path / "m.toml").write_text(
        'duration = "2s"\n[bottleneck]\nrate = "10Mbit"\nbuffer = "4bdp"\nmark_threshold = "20pkt"\n'
        f'[[flow]]\ncc = "bbr3"\nrtt = "10ms"\necn = {"true" if ecn else "false"}\n')
    return run_cli("run", tmp_path / "m.toml", "--out", tmp_path / f"o-{ecn}")


def test_a_step_marker_without_an_ecn_flow_warns_and_runs(tmp_path):
    proc = _mark_threshold(tmp_path, ecn=False)
    assert proc.returncode == 0, proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("ccarena: warning:")]
    assert warnings == ["ccarena: warning: bottleneck.mark_threshold: no ECN-capable flow sends through this link, "
                        "so the step marker marks nothing and the link is a plain droptail FIFO (set ecn = true on "
                        "a [[flow]] or [[workload]] that crosses it)"]
    quiet = _mark_threshold(tmp_path, ecn=True)
    assert quiet.returncode == 0 and "warning" not in quiet.stderr


def test_a_marker_warns_per_link_and_counts_workloads_as_ecn_senders():
    """In a topology the warning names the link no ECN-capable sender
    crosses; an ECN workload is such a sender (and its marks are
    counted in summary.json)."""
    from ccarena import load_scenario, run

    link = {"rate": "10Mbit", "buffer": "4bdp", "mark_threshold": "5pkt"}
    doc = {"duration": "2s", "link": [{"name": "a", **link}, {"name": "b", **link}],
           "flow": [{"cc": "cubic", "rtt": "10ms", "path": ["a"], "ecn": True}]}
    assert [w.split(":")[0] for w in load_scenario(doc).warnings()] == ["link[1].mark_threshold"]
    dumbbell = {"duration": "2s", "bottleneck": link, "flow": [{"cc": "cubic", "rtt": "10ms"}],
                "workload": [{"cc": "cubic", "rtt": "10ms", "size": "50KB", "load": 0.5, "ecn": True}]}
    assert load_scenario(dumbbell).warnings() == []
    assert "marks" in run(dumbbell).summary


def test_a_sweep_warns_once_not_once_per_point(tmp_path):
    (tmp_path / "s.toml").write_text(
        'duration = "1s"\n[bottleneck]\nrate = "10Mbit"\nbuffer = "4bdp"\nmark_threshold = "20pkt"\n'
        '[[flow]]\ncc = "reno"\nrtt = "10ms"\n[sweep]\nseeds = [1, 2, 3]\n')
    proc = run_cli("sweep", tmp_path / "s.toml", "--out", tmp_path / "o")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("ccarena: warning: bottleneck.mark_threshold") == 1


def test_the_readme_lists_every_experiment_as_reproduce_list_does():
    listed = run_cli("reproduce", "--list").stdout.splitlines()
    readme = (REPO / "README.md").read_text()
    block = readme[readme.index("```\nbbq-fig1 ") + 4:]
    block = block[: block.index("```")].splitlines()
    assert block == listed


def test_interval_ends_stay_within_what_the_quantity_can_be():
    # Two seeds of a queueing delay: Student t's half-width (12.7 sd / sqrt 2) exceeds the mean.
    assert clipped_interval(3.0, 12.0, (0.0, None)) == (0.0, 15.0)
    assert clipped_interval(0.9, 0.3, (0.0, 1.0)) == (pytest.approx(0.6), 1.0)
    assert clipped_interval(5.0, 1.0, (None, None)) == (4.0, 6.0)
    assert clipped_interval(5.0, float("nan"), (0.0, None)) is None and clipped_interval(None, 1.0, (0, 1)) is None
