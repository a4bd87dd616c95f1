"""A good run: the CLI's table and files, and the Python API."""

from __future__ import annotations

import json
import math

import pytest

import ccarena
from ccarena import cli
from conftest import EXAMPLES, run_cli

SHORT = {"duration": "6s", "measure.from": "2s"}
RUN_FILES = ["goodput.png", "link.parquet", "scenario.toml", "summary.json", "timeseries.parquet"]


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("cli") / "demo"
    args = [f"--set={k}={v}" for k, v in SHORT.items()]
    proc = run_cli("run", EXAMPLES / "bbr-rtt-unfairness.toml", "--out", out, *args)
    assert proc.returncode == 0, proc.stderr
    return proc, out


def test_cli_writes_the_run_directory_and_nothing_else(cli_run):
    _, out = cli_run
    assert sorted(p.name for p in out.iterdir()) == [".ccarena-run", *RUN_FILES]
    assert (out / "goodput.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [p.name for p in out.parent.iterdir()] == ["demo"]  # no temp dirs left


def test_cli_prints_table_and_paths_and_progress(cli_run):
    proc, out = cli_run
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["flow", "cc", "rtt", "goodput", "Mbit/s", "share", "retransmits"]
    assert lines[2].split()[:4] == ["0", "bbr", "10", "ms"]
    assert lines[3].split()[:4] == ["1", "bbr", "50", "ms"]
    assert "Jain" in proc.stdout and "utilisation" in proc.stdout and "queueing delay" in proc.stdout
    assert str(out / "goodput.png") in proc.stdout
    progress = proc.stderr.splitlines()
    assert progress[0].startswith("ccarena: running") and "6 s simulated" in progress[0]
    assert progress[-1].startswith("ccarena: done in")


def test_summary_schema(cli_run):
    _, out = cli_run
    text = (out / "summary.json").read_text()
    summary = json.loads(text)
    assert text == json.dumps(summary, sort_keys=True, indent=2) + "\n"
    assert summary["engine"] == "sim"
    assert summary["window"] == {"from_s": 2.0, "to_s": 6.0}
    assert summary["scenario"]["input"]["bottleneck"]["rate"] == "100Mbit"
    assert summary["scenario"]["config"]["duration_ns"] == 6_000_000_000
    assert [f["rtt_ms"] for f in summary["flows"]] == [10.0, 50.0]
    for flow in summary["flows"]:
        assert set(flow) >= {"index", "cc", "rtt_ms", "start_s", "goodput_mbps", "share", "retransmits",
                             "rtt_mean_ms", "rtt_p95_ms"}
    assert math.isclose(sum(f["share"] for f in summary["flows"]), 1.0, abs_tol=1e-5)
    assert math.isclose(sum(f["goodput_mbps"] for f in summary["flows"]), summary["goodput_total_mbps"], abs_tol=1e-4)
    assert 0.5 <= summary["jain"] <= 1.0
    assert 0 < summary["utilization"] <= 1.0
    assert set(summary["queue_delay_ms"]) == {"mean", "p50", "p95", "p99"}
    assert summary["bottleneck_packets"] > 0
    assert len(summary["conservation"]["flows"]) == 2


def test_parquet_columns(cli_run):
    import pyarrow.parquet as pq

    _, out = cli_run
    ts = pq.read_table(out / "timeseries.parquet")
    assert ts.column_names == [
        "t_s", "flow", "cc", "goodput_mbps", "cwnd", "inflight", "pacing_rate_mbps", "srtt_ms", "rtt_ms",
        "min_rtt_ms", "ca_state", "cc_mode", "pacing_gain", "cwnd_gain", "bw_estimate_mbps", "delivery_rate_mbps", "cc_var",
        "extra_acked", "queue_bytes", "retransmits",
    ]
    assert set(ts.column("flow").to_pylist()) == {0, 1}
    assert ts.num_rows == 2 * 60  # 6 s at 100 ms, two flows
    # The latest delivery-rate sample follows what each flow delivers
    # (medians over 2-6 s measured: 5.50 vs 5.56 and 89.85 vs 89.95 Mbit/s).
    import numpy as np

    flow, t = ts.column("flow").to_numpy(), ts.column("t_s").to_numpy()
    rate, goodput = ts.column("delivery_rate_mbps").to_numpy(), ts.column("goodput_mbps").to_numpy()
    for i in (0, 1):
        after = (flow == i) & (t > 2)
        assert np.median(rate[after]) == pytest.approx(np.median(goodput[after]), rel=0.1)
    link = pq.read_table(out / "link.parquet")
    assert link.column_names == ["t_s", "queue_bytes", "queue_delay_ms", "drops", "rate_mbps", "tx_mbps"]
    assert link.num_rows == 60
    assert set(link.column("rate_mbps").to_pylist()) == {100.0}
    one_packet_mbps = 1514 * 8 / 0.1 / 1e6  # a packet may straddle two intervals
    assert max(link.column("tx_mbps").to_pylist()) <= 100.0 + one_packet_mbps


def test_python_api_matches_the_cli(cli_run, tmp_path):
    _, out = cli_run
    result = ccarena.run(EXAMPLES / "bbr-rtt-unfairness.toml", overrides=SHORT)
    assert result.out is None and not any(tmp_path.iterdir())  # nothing written without out=
    assert result.summary == json.loads((out / "summary.json").read_text())
    assert result.flows == result.summary["flows"]
    assert result.timeseries.num_rows == 120 and result.link.num_rows == 60
    assert set(result.raw) >= {"flows", "link", "flow_series", "link_series", "events"}
    saved = result.save(tmp_path / "again")
    assert (saved / "summary.json").read_text() == (out / "summary.json").read_text()


def test_api_run_with_out_replaces_an_older_run(tmp_path):
    doc = {
        "duration": "2s",
        "bottleneck": {"rate": "10Mbit", "buffer": "100pkt"},
        "flow": [{"cc": "cubic", "rtt": "20ms"}],
    }
    out = tmp_path / "run"
    ccarena.run(dict(doc, seed=2), out=out)
    older = (out / "summary.json").read_text()
    result = ccarena.run(doc, out=out)
    assert result.out == out
    assert (out / "summary.json").read_text() != older
    assert sorted(p.name for p in out.iterdir()) == [".ccarena-run", *RUN_FILES]
    assert [p.name for p in tmp_path.iterdir()] == ["run"]


def test_api_raises_scenario_error_before_simulating(tmp_path):
    with pytest.raises(ccarena.ScenarioError) as info:
        ccarena.run({"duration": "1s", "bottleneck": {"rate": "1Mbit", "buffer": "1MB"}, "flow": []},
                    out=tmp_path / "x")
    assert info.value.path == "flow"
    assert not (tmp_path / "x").exists()


def test_engine_rejection_is_one_line_and_leaves_no_dir(tmp_path, monkeypatch, capsys):
    from ccarena import _core

    def reject(config_json, series=True, progress=None):
        raise ValueError("flows[0].cc: unknown congestion control 'x' (known: bbr)")

    monkeypatch.setattr(_core, "simulate", reject)
    status = cli.main(["run", str(EXAMPLES / "bbr-rtt-unfairness.toml"), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.splitlines()
    assert status == 2
    assert err[-1] == "ccarena: error: flows[0].cc: unknown congestion control 'x' (known: bbr)"
    assert list(tmp_path.iterdir()) == []


def test_failure_while_writing_leaves_no_dir(tmp_path, monkeypatch, capsys):
    from ccarena import plots

    def broken_plot(result, path):
        path.write_bytes(b"half a png")
        raise OSError("disk full")

    monkeypatch.setattr(plots, "plot_goodput", broken_plot)
    args = ["run", str(EXAMPLES / "bbr-rtt-unfairness.toml"), "--out", str(tmp_path / "out"), "--set", "duration=1s", "--set", "measure.from=0.5s"]
    status = cli.main(args)
    err = capsys.readouterr().err.splitlines()
    assert status == 1
    assert err[-1].startswith("ccarena: error: internal: OSError: disk full")
    assert list(tmp_path.iterdir()) == []


def test_ccs_lists_the_compiled_algorithms():
    proc = run_cli("ccs")
    assert proc.returncode == 0
    assert {"bbr", "cubic", "reno"} <= set(proc.stdout.split())
