"""Workloads and application-limited senders (docs/scenario-format.md,
"Workloads" and "Application-limited senders"): how a [[workload]]
resolves, what a run reports of its flows, their times alone, and what
an ``app`` table does to a flow."""

from __future__ import annotations

import json
import math

import numpy as np
import pyarrow.parquet as pq
import pytest

from ccarena import _core, run
from ccarena.api import simulate
from ccarena.errors import ScenarioError
from ccarena.live.engine import check_supported
from ccarena.scenario import load_scenario
from ccarena import workload_results
from ccarena.scenario_limits import engine_limits
from ccarena.scenario_workload import mean_size, read_sizes
from ccarena.workload_results import BINS, alone_runs, alone_times

from conftest import EXAMPLES, run_cli

WEBSEARCH = EXAMPLES / "workloads" / "websearch.cdf"
DATAMINING = EXAMPLES / "workloads" / "datamining.cdf"
LIMITS = engine_limits()


def scenario(**workload) -> dict:
    """100 Mbit/s, 20 ms: one workload of CUBIC flows (``workload`` adds keys)."""
    return {"duration": "10s", "bottleneck": {"rate": "100Mbit", "buffer": "1bdp"},
            "workload": [{"cc": "cubic", "rtt": "20ms", **workload}]}


# --------------------------------------------------------------------------
# Resolution.


def test_a_load_is_an_arrival_rate_of_the_mean_size():
    cfg = load_scenario(scenario(sizes=str(WEBSEARCH), load=0.5))
    (w,) = cfg.config["workloads"]
    assert w["arrival_rate_hz"] == pytest.approx(0.5 * 100e6 / 8 / 1_711_250, rel=1e-12)
    assert w["sizes"][0] == [0.0, 0] and w["sizes"][-1] == [1.0, 30_000_000] and len(w["sizes"]) == 12
    human = cfg.human["workload"][0]
    assert (human["offered_load"], human["load_link"], human["mean_size_bytes"]) == (0.5, "bottleneck", 1_711_250)
    # The published means (the files' comments): web search 1.71 MB, data mining 12.66 MB.
    assert mean_size(read_sizes(str(DATAMINING), "workload[0].sizes", None, LIMITS)) == pytest.approx(12_658_198.6)
    # A fixed size, at an explicit rate: its offered load.
    cfg = load_scenario(scenario(size="125KB", arrival_rate=50))
    assert cfg.config["workloads"][0]["size_bytes"] == 125_000
    assert cfg.human["workload"][0]["offered_load"] == pytest.approx(0.5)
    # The BDP unit counts the workloads' RTTs: 100 Mbit/s x 20 ms.
    assert cfg.config["bottleneck"]["buffer_bytes"] == 250_000


def test_the_engines_sizes_average_what_the_front_end_computes(tmp_path):
    # The one definition of the mean (scenario_workload.mean_size) is what
    # the engine's interpolated draws average: so a load is what it says.
    # A first line with a probability (a step there) and a jump (two
    # lines at 0.6: nothing between 500 and 2000 bytes).
    sizes = tmp_path / "small.cdf"
    sizes.write_text("# bytes probability\n100 0.2\n500 0.6\n2000 0.6\n4000 1\n")
    points = read_sizes(str(sizes), "workload[0].sizes", None, LIMITS)
    assert points == [[0.0, 100], [0.2, 100], [0.6, 500], [0.6, 2000], [1.0, 4000]]
    doc = scenario(sizes=str(sizes), arrival_rate=20_000)
    doc.update(duration="2s", bottleneck={"rate": "1Gbit", "buffer": "1bdp"})
    raw = simulate(load_scenario(doc), series=False)
    drawn = raw["workload_flows"]["size_bytes"]
    assert 38_000 < len(drawn) < 42_000
    assert drawn.mean() == pytest.approx(mean_size(points), rel=0.01)
    assert not ((drawn > 500) & (drawn < 2000)).any()


@pytest.mark.parametrize(("text", "problem"), [
    ("0 0\n10 0.5\n", "the last cumulative probability must be 1"),
    ("0 0\n10 0.7\n5 1\n", "line 3: sizes and probabilities must never fall"),
    ("0 0\n10 1.5\n", "line 2: '1.5' is not a cumulative probability"),
    ("0 0\n10.5 1\n", "line 2: '10.5' is not a whole number of bytes"),
    ("0 1 0\n10 2 1\n", "line 1: expected 'bytes probability'"),
    ("0 0\n0 1\n", "every size is 0 bytes"),
])
def test_a_bad_size_file_is_named_with_its_line(tmp_path, text, problem):
    (tmp_path / "bad.cdf").write_text(text)
    with pytest.raises(ScenarioError) as err:
        load_scenario(scenario(sizes=str(tmp_path / "bad.cdf"), load=0.5))
    assert err.value.path == "workload[0].sizes" and problem in str(err.value), str(err.value)


@pytest.mark.parametrize(("keys", "path", "problem"), [
    ({"size": "10KB"}, "workload[0].load", "required key is missing"),
    ({"load": 0.5}, "workload[0].sizes", "required key is missing"),
    ({"size": "10KB", "sizes": str(WEBSEARCH), "load": 0.5}, "workload[0].size", "not both"),
    ({"size": "10KB", "load": 0.5, "arrival_rate": 5}, "workload[0].load", "not both"),
    ({"size": "10pkt", "load": 0.5}, "workload[0].size", "not packets or BDPs"),
    ({"size": "10KB", "load": 0.5, "link": "x"}, "workload[0].link", "with [bottleneck]"),
    ({"size": "10KB", "arrival_rate": 5, "link": "x"}, "workload[0].link", "only with load"),
    ({"size": "10KB", "load": 0.5, "start": "5s", "stop": "4s"}, "workload[0].stop", "before they start"),
    ({"size": "10KB", "load": 1.5}, "workload[0].load", "less than or equal to 1"),
    ({"size": "10KB", "load": 0.5, "path": ["a"]}, "workload[0].path", "routes need [[link]]"),
    ({"size": "1B", "load": 1.0}, "workload[0].load", "above the engine's limit"),
])
def test_workload_keys_are_checked(keys, path, problem):
    with pytest.raises(ScenarioError) as err:
        load_scenario(scenario(**keys))
    assert err.value.path == path and problem in str(err.value), str(err.value)


def test_a_topologys_load_is_of_the_slowest_link_on_the_path_or_the_one_named():
    doc = {"duration": "10s",
           "link": [{"name": name, "rate": rate, "buffer": "1bdp"}
                    for name, rate in (("a", "100Mbit"), ("b", "40Mbit"), ("c", "10Mbit"))],
           "workload": [{"cc": "cubic", "rtt": "20ms", "size": "100KB", "load": 0.5, "path": ["a", "b"]}]}
    cfg = load_scenario(doc)
    assert cfg.config["workloads"][0]["arrival_rate_hz"] == pytest.approx(0.5 * 40e6 / 8 / 100e3)
    assert cfg.human["workload"][0]["load_link"] == "b"
    doc["workload"][0]["link"] = "a"
    assert load_scenario(doc).config["workloads"][0]["arrival_rate_hz"] == pytest.approx(0.5 * 100e6 / 8 / 100e3)
    for link, problem in (("c", "not on the workload's path"), ("z", "no link named 'z'")):
        doc["workload"][0]["link"] = link
        with pytest.raises(ScenarioError, match=problem):
            load_scenario(doc)


def test_the_live_engine_runs_workloads_and_applications():
    """(tests/test_live_workloads.py: how.)"""
    assert check_supported(load_scenario({**scenario(size="10KB", load=0.5),
                                          "flow": [{"cc": "cubic", "rtt": "20ms"}]})) == "kernel"
    doc = {"duration": "10s", "bottleneck": {"rate": "100Mbit", "buffer": "1bdp"},
           "flow": [{"cc": "cubic", "rtt": "20ms", "app": {"rate": "10Mbit"}}]}
    assert check_supported(load_scenario(doc)) == "kernel"


# --------------------------------------------------------------------------
# Runs.


def test_a_run_reports_each_flow_and_the_size_bins(tmp_path):
    doc = scenario(sizes=str(WEBSEARCH), load=0.4)
    doc.update(duration="30s", measure={"from": "5s"}, seed=3)
    result = run(doc, out=tmp_path / "run")
    s = result.summary
    (w,) = s["workloads"]
    table = pq.read_table(tmp_path / "run" / "flows.parquet").to_pydict()
    assert set(table) == {"workload", "start_s", "size_bytes", "fct_ms", "fct_alone_ms", "slowdown", "retransmits"}
    assert len(table["workload"]) == w["arrived"] - w["refused"] and w["refused"] == 0
    # Rows in arrival order; a complete flow has both times and their ratio.
    assert table["start_s"] == sorted(table["start_s"])
    for fct, alone, slowdown in zip(table["fct_ms"], table["fct_alone_ms"], table["slowdown"], strict=True):
        assert (fct is None) == (slowdown is None)
        if fct is not None:
            assert slowdown == pytest.approx(fct / alone)
    # The summary's numbers, from the table: flows that arrived in the
    # window, by size bin, nearest-rank percentiles of the complete ones.
    in_window = [i for i, t in enumerate(table["start_s"]) if 5 <= t < 30]
    assert w["window"]["flows"] == len(in_window) == sum(b["flows"] for b in w["bins"])
    assert w["window"]["completed"] + w["window"]["unfinished"] == w["window"]["flows"]
    assert [b["bin"] for b in w["bins"]] == [label for label, _, _ in BINS]
    for b, (_, low, high) in zip(w["bins"], BINS, strict=True):
        mine = sorted(table["slowdown"][i] for i in in_window
                      if low < table["size_bytes"][i] <= high and table["slowdown"][i] is not None)
        assert b["completed"] == len(mine)
        if mine:
            assert b["slowdown"]["p50"] == pytest.approx(mine[math.ceil(0.5 * len(mine)) - 1], abs=1e-6)
            assert b["slowdown"]["p99"] == pytest.approx(mine[math.ceil(0.99 * len(mine)) - 1], abs=1e-6)
            assert b["slowdown"]["mean"] == pytest.approx(sum(mine) / len(mine), abs=1e-6)
    assert w["fct_alone"] == "exact" and w["offered_load"] == 0.4
    # The offered load is carried: 40% of the link in payload, and more on
    # the wire (headers, whole segments), within the sampling of 30 s.
    assert 0.3 < s["utilization"] < 0.6
    text = result.table()
    assert "workload 0 (cubic, 20 ms, load 0.40 of bottleneck, mean size 1.71 MB)" in text
    assert "slowdown p50/p99 by size: <=100KB" in text
    # The same scenario and seed: the same bytes.
    again = run(doc, out=tmp_path / "again")
    assert (tmp_path / "run" / "summary.json").read_bytes() == (tmp_path / "again" / "summary.json").read_bytes()
    assert pq.read_table(tmp_path / "again" / "flows.parquet").to_pydict() == table
    assert again.summary == s


def test_a_scenario_of_workloads_alone_runs_from_the_cli(tmp_path):
    path = tmp_path / "w.toml"
    path.write_text(f'duration = "5s"\n[bottleneck]\nrate = "100Mbit"\nbuffer = "1bdp"\n'
                    f'[[workload]]\ncc = "bbr"\nrtt = "10ms"\nsizes = "{WEBSEARCH}"\nload = 0.3\n')
    done = run_cli("run", path, "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    assert "(0 flows, 1 workload, 5 s simulated)" in done.stderr
    assert "workload 0 (bbr, 10 ms, load 0.30 of bottleneck" in done.stdout and "flows.parquet" in done.stdout
    assert "total goodput" not in done.stdout
    # Its scenario.toml runs again to the same numbers (the sizes file's path absolute).
    again = run_cli("run", tmp_path / "out" / "scenario.toml", "--out", tmp_path / "again", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    first, second = (json.loads((tmp_path / d / "summary.json").read_text()) for d in ("out", "again"))
    assert first["workloads"] == second["workloads"]


# --------------------------------------------------------------------------
# Times alone.


def test_sizes_are_run_alone_each_when_they_are_few_and_bracketed_when_many(monkeypatch):
    # A time alone that is affine in the size, with a jump of 3% between
    # 3000 and 3001 segments (a loss), as the engine's may be.
    def fct(k: int) -> float:
        return 1000.0 + 10.0 * k + (1000.0 if k > 3000 else 0.0)

    asked: list[list[int]] = []

    def engine(sizes: list[int]) -> list[float]:
        asked.append(sizes)
        return [fct(k) for k in sizes]

    needed = np.asarray([5, 700, 1500, 2999, 3002, 9000])
    runs, times = alone_runs(needed, engine)
    assert runs.tolist() == needed.tolist() and len(asked) == 1  # few: each exactly
    monkeypatch.setattr(workload_results, "EXACT_BUDGET_SEGMENTS", 1000)
    asked.clear()
    runs, times = alone_runs(needed, engine)
    got = alone_times(needed, runs, times)
    # Up to 1000 segments exact; above, the grid's brackets (5% apart),
    # the one holding the jump halved until it is narrow around it.
    assert {5, 700} <= set(runs.tolist()) and 1500 not in runs
    assert np.allclose(got, [fct(k) for k in needed], rtol=1e-3)
    assert len(runs) < 40 and len(asked) <= 1 + workload_results.REFINEMENTS


@pytest.mark.parametrize(("cc", "rtt"), [("cubic", "10ms"), ("bbr", "10ms"), ("cubic", "100ms"), ("bbr", "100ms")])
def test_interpolated_times_alone_of_web_search_sizes_are_close(cc, rtt, monkeypatch):
    # The error the module comment states: 3,000 random sizes above 1000
    # segments of web search at 1 Gbit/s (a 1-BDP buffer), interpolated,
    # against 150 of them run alone.
    doc = {"duration": "60s", "bottleneck": {"rate": "1Gbit", "buffer": "1bdp"},
           "workload": [{"cc": cc, "rtt": rtt, "sizes": str(WEBSEARCH), "load": 0.5}]}
    text = json.dumps(load_scenario(doc).config)

    def engine(sizes: list[int]) -> list[float]:
        return [math.nan if t is None else float(t) for t in _core.fcts_alone(text, 0, [k * 1448 for k in sizes])]

    rng = np.random.default_rng(2)
    needed = np.unique(rng.integers(1001, 20720, 3000))
    monkeypatch.setattr(workload_results, "EXACT_BUDGET_SEGMENTS", 0)
    runs, times = alone_runs(needed, engine)
    pick = np.sort(rng.choice(needed, 150, replace=False))
    error = np.abs(alone_times(pick, runs, times) / np.asarray(engine(pick.tolist())) - 1)
    assert len(runs) < 250
    # Measured (workload_results' comment): mean 0.09% or less, 0.36% for
    # BBR at 10 ms (8 of 150 sizes over 2%, the largest 18%).
    assert error.mean() < 0.01 and (error > 0.02).mean() < 0.08, (error.mean(), error.max())


# --------------------------------------------------------------------------
# Application-limited senders.


def test_an_application_writes_at_its_rate_and_in_its_periods():
    doc = {"duration": "20s", "seed": 1, "measure": {"from": "5s"}, "bottleneck": {"rate": "100Mbit", "buffer": "1bdp"},
           "flow": [{"cc": "bbr", "rtt": "20ms", "app": {"rate": "10Mbit"}},
                    {"cc": "cubic", "rtt": "20ms", "app": {"on": "1s", "off": "2s", "periods": "fixed"}}]}
    cfg = load_scenario(doc).config
    assert cfg["flows"][0]["app"] == {"rate_bps": 10_000_000}
    assert cfg["flows"][1]["app"] == {"on_off": {"on_ns": 1_000_000_000, "off_ns": 2_000_000_000, "exponential": False}}
    result = run(doc)
    bbr, cubic = result.flows
    # At the rate: 10 Mbit/s of payload; BBR's estimate of the path is not
    # dragged down to it (its app-limited samples are kept out).
    assert bbr["goodput_mbps"] == pytest.approx(10, rel=0.01)
    series = result.timeseries.to_pydict()
    rows = [i for i, (t, f) in enumerate(zip(series["t_s"], series["flow"], strict=True)) if f == 0 and t > 5]
    assert min(series["bw_estimate_mbps"][i] for i in rows) > 10
    # ON one second in three (from 0 s: ON at 6, 9, ... s): nothing during OFF.
    goodput = {round(series["t_s"][i], 1): series["goodput_mbps"][i] for i in range(len(series["t_s"]))
               if series["flow"][i] == 1}
    assert all(goodput[round(t, 1)] == 0 for t in np.arange(7.3, 8.95, 0.1))
    assert goodput[6.5] > 50


@pytest.mark.parametrize(("app", "path", "problem"), [
    ({}, "flow[0].app", "give a rate, or on and off periods"),
    ({"on": "1s"}, "flow[0].app.off", "required with the other"),
    ({"rate": "1Mbit", "periods": "fixed"}, "flow[0].app.periods", "given without on and off"),
    ({"on": "11s", "off": "1s"}, "flow[0].app.on", "longer than the run"),
])
def test_application_keys_are_checked(app, path, problem):
    doc = {"duration": "10s", "bottleneck": {"rate": "100Mbit", "buffer": "1bdp"},
           "flow": [{"cc": "cubic", "rtt": "20ms", "app": app}]}
    with pytest.raises(ScenarioError) as err:
        load_scenario(doc)
    assert err.value.path == path and problem in str(err.value), str(err.value)
