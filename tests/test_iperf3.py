"""`ccarena live run --app iperf3` and `--delays per-sender` without a
testbed: what is refused (one line, exit 2), the iperf3 command lines,
the reading of iperf3's output (a recorded run's, tests/data/iperf3-run.json)
and the summary and timeseries built from it. The live runs are in
tests/test_live_choices.py."""

from __future__ import annotations

import json

import pytest

from conftest import REPO, run_cli

from ccarena.errors import ScenarioError
from ccarena.live import iperf3, testbed
from ccarena.live.engine import load_live_scenario, merged_delay_stats
from ccarena.live.rawresult import build_raw
from ccarena.results import Result
from ccarena.tables import flow_table

#: The recorded run's scenario.
SCENARIO = """
duration = "2s"
[measure]
from = "1s"
[bottleneck]
rate = "100Mbit"
buffer = "1MB"
[[flow]]
cc = "cubic"
rtt = "10ms"
[[flow]]
cc = "reno"
rtt = "20ms"
"""
RECORDED = REPO / "tests" / "data" / "iperf3-run.json"


def _scenario(tmp_path, text: str = SCENARIO, overrides=()):
    path = tmp_path / "s.toml"
    path.write_text(text)
    return load_live_scenario(path, list(overrides))


@pytest.mark.parametrize("choices, overrides, expected", [
    ({"app": "iperf3"}, [("flow.0.size", "1MB")], "--app: iperf3 runs bulk flows; flow[0] has a size"),
    ({"app": "iperf3"}, [("flow.1.app", {"rate": "10Mbit"})], "--app: iperf3 runs bulk flows; flow[1] has an app"),
    ({"app": "iperf3"}, [("duration", "2.5s")], "--app: iperf3 sends for whole seconds (-t); flow[0] lasts 2.5 s"),
    ({"app": "iperf3"}, [("flow.1.start", "0.5s")], "--app: iperf3 sends for whole seconds (-t); flow[1] lasts 1.5 s"),
    ({"app": "iperf3"}, [("output.interval", "50ms")], "--app: iperf3 reports every 0.1 s at most"),
    ({"app": "iperf3"}, [("workload", [{"cc": "cubic", "rtt": "10ms", "load": 0.1,
                                         "sizes": str(REPO / "examples" / "workloads" / "websearch.cdf")}])],
     "--app: iperf3 runs the [[flow]]s only"),
    ({"delays": "per-sender"}, [], "--delays: per-sender delay lines need --senders separate"),
    ({"app": "nc"}, [], "--app: expected one of agent, iperf3, got 'nc'"),
])
def test_what_iperf3_and_per_sender_delays_cannot_run_is_refused(tmp_path, choices, overrides, expected):
    scenario = _scenario(tmp_path, overrides=overrides)
    with pytest.raises(ScenarioError) as err:
        testbed.Choices(**choices).check(scenario.config, "kernel")
    assert str(err.value).startswith(expected), err.value


def test_per_sender_delays_need_the_kernel_bottleneck(tmp_path):
    choices = testbed.Choices(senders="separate", delays="per-sender")
    choices.check(_scenario(tmp_path).config, "kernel")
    with pytest.raises(ScenarioError, match="^--delays: per-sender delay lines need the kernel bottleneck"):
        choices.check(_scenario(tmp_path).config, "userspace")


def test_a_whole_second_flow_with_a_start_and_a_stop_runs(tmp_path):
    scenario = _scenario(tmp_path, overrides=[("duration", "5s"), ("flow.1.start", "0.5s"),
                                              ("flow.1.stop", "3.5s")])
    testbed.Choices(app="iperf3").check(scenario.config, "kernel")
    assert iperf3.life(scenario.config, 1) == 3_000_000_000


@pytest.mark.parametrize("flags, expected", [
    (["--app", "iperf3", "--set", "output.interval=10ms"], "ccarena: error: --app: iperf3 reports every 0.1 s"),
    (["--delays", "per-sender"], "ccarena: error: --delays: per-sender delay lines need --senders separate"),
    (["--senders", "separate", "--delays", "per-sender", "--bottleneck", "userspace"],
     "ccarena: error: --delays: per-sender delay lines need the kernel bottleneck"),
])
def test_the_command_refuses_in_one_line_before_touching_anything(tmp_path, flags, expected):
    (tmp_path / "s.toml").write_text(SCENARIO)
    done = run_cli("live", "run", tmp_path / "s.toml", *flags, "--out", tmp_path / "x")
    assert done.returncode == 2
    assert done.stderr.strip().startswith(expected) and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert not (tmp_path / "x").exists()


def test_iperf3_command_lines():
    client = iperf3.client_argv("10.201.2.2", "10.201.1.11", 5202, "cc_bbq", 40_000_000_000, 100_000_000)
    # The flow's algorithm as the kernel knows it, its address, its life,
    # reports every output interval; iperf3's own socket buffers (no -w).
    assert client[:9] == ["iperf3", "-c", "10.201.2.2", "-B", "10.201.1.11", "-C", "cc_bbq", "-t", "40"]
    assert ["-p", "5202", "-i", "0.1", "-J", "--debug=1", "--forceflush"] == client[9:]
    assert "-w" not in client
    server = iperf3.server_argv("10.201.2.2", 5202, 250_000_000)
    assert server == ["iperf3", "-s", "-1", "-B", "10.201.2.2", "-p", "5202", "-i", "0.25", "-J", "--debug=1",
                      "--forceflush"]


def _recorded() -> tuple[list[iperf3.Report], list[iperf3.Report]]:
    doc = json.loads(RECORDED.read_text())
    return ([iperf3.parse([(t, line) for t, line in out], f"server {i}") for i, out in enumerate(doc["servers"])],
            [iperf3.parse([(t, line) for t, line in out], f"client {i}") for i, out in enumerate(doc["clients"])])


def test_each_ends_reports_are_placed_on_the_runs_clock():
    """The recorded run's t0 is 0: each end's intervals start after its
    flow's start (0) by iperf3's handshake, a few round trips (10 and 20
    ms), the server's before the client's data reaches it; every interval
    line arrived at or after the end it reports."""
    servers, clients = _recorded()
    for i, (server, client, rtt_ms) in enumerate(zip(servers, clients, (10, 20), strict=True)):
        assert 2 * rtt_ms * 1e6 < server.anchor_ns < 12 * rtt_ms * 1e6, (i, server.anchor_ns)
        assert abs(client.anchor_ns - server.anchor_ns) < 2 * rtt_ms * 1e6
        ends = [end for _, end, _, _ in server.intervals]
        assert ends == sorted(ends) and server.intervals[0][0] == server.anchor_ns
        # Contiguous 0.1-s intervals.
        assert all(abs(b[0] - a[1]) < 1000 for a, b in zip(server.intervals, server.intervals[1:]))
        assert all(abs((end - start) - 100_000_000) < 2_000_000 for start, end, _, _ in server.intervals[:-1])
        total = sum(n for _, _, n, _ in server.intervals)
        assert server.cumulative(server.anchor_ns) == 0 and server.cumulative(10**12) == total
        halfway = server.intervals[3]
        assert server.cumulative((halfway[0] + halfway[1]) // 2) == sum(
            n for _, _, n, _ in server.intervals[:3]) + halfway[2] // 2


def test_a_failed_or_silent_iperf3_is_one_line():
    failed = [(1, "{"), (2, '\t"start": {},'), (3, '\t"error": "unable to connect to server: Connection refused"'),
              (4, "}")]
    with pytest.raises(ScenarioError, match="^live: flow 0: iperf3: unable to connect to server: Connection refused$"):
        iperf3.parse(failed, "flow 0")
    with pytest.raises(ScenarioError, match="^live: flow 1: iperf3 printed no JSON report: iperf3: error - x$"):
        iperf3.parse([(1, "iperf3: error - x")], "flow 1")
    with pytest.raises(ScenarioError, match="^live: flow 1: iperf3 reported no intervals$"):
        iperf3.parse([(1, "{"), (2, '"intervals": [], "end": {}'), (3, "}")], "flow 1")


def test_a_recorded_runs_summary_counts_goodput_at_the_receiver_and_leaves_the_rest_null(tmp_path):
    scenario = _scenario(tmp_path)
    cfg = scenario.config
    servers, clients = _recorded()
    rx, tx, summary = iperf3.documents(cfg, 0, servers, clients)
    raw = build_raw(cfg, rx, tx, {})
    result = Result(scenario, raw)
    flows = result.summary["flows"]
    # The shares are the receiving iperf3's bytes in the window.
    window = [f["receiver_bytes_window"] for f in summary["flows"]]
    assert [f["share"] for f in flows] == pytest.approx([w / sum(window) for w in window], abs=1e-6)
    assert flows[0]["goodput_mbps"] == pytest.approx(window[0] * 8 / 1e6, rel=1e-6)  # a 1-s window
    assert 90 < result.summary["goodput_total_mbps"] < 100 and result.summary["jain"] is not None
    # The sender's own count, for comparison: bytes written in the window.
    assert abs(summary["flows"][0]["sender_share"] - flows[0]["share"]) < 0.05
    assert [f["retransmits_total"] for f in flows] == [f["sender_retransmits"] for f in summary["flows"]]
    assert all(f["retransmits"] <= f["retransmits_total"] for f in flows)
    assert all(f["rtt_mean_ms"] > f["rtt_ms"] for f in flows)  # iperf3's smoothed RTT, queueing included
    # No segment counts, no RTOs: null, not zero.
    assert all(f["rtos"] is None for f in flows)
    assert all(c["sent"] is None and c["balanced"] is None for c in result.summary["conservation"]["flows"])
    losses = testbed.loss_report({"links": {}, "qdiscs": {}, "tx": {}, "rt": {}, "rx": {}}, {}, False, tx, rx)
    assert losses["lost_segments"] is None and losses["unexplained_losses"] is None
    assert losses["retransmitted_segments"] == sum(f["retransmits_total"] for f in flows)

    table = flow_table(scenario, raw)
    for column in ("inflight", "ca_state", "cc_mode", "pacing_rate_mbps", "min_rtt_ms", "delivery_rate_mbps"):
        assert table.column(column).null_count == table.num_rows, column
    assert table.column("cwnd").null_count == 0 and max(table.column("cwnd").to_pylist()) > 10
    assert table.column("srtt_ms").null_count < table.num_rows
    assert set(summary["not_measured"]) <= {name for name in table.column_names}


def test_per_sender_delay_lines_have_a_device_each_and_one_set_of_statistics():
    assert testbed.tun_names() == ["cca-dl"]
    assert testbed.tun_names(3) == ["cca-dl0", "cca-dl1", "cca-dl2"]
    one = {"packets": 10, "bytes": 15000, "segments": 10, "gso": True, "passthrough": 0, "dropped_overflow": 0,
           "write_errors": 0, "lateness_mean_us": 10.0, "lateness_max_us": 900.0, "lateness_p50_us": 8.0,
           "lateness_p99_us": 50.0, "lateness_p999_us": 800.0, "late_over_1ms": 0, "max_queued_bytes": 3000,
           "realtime": True}
    other = {**one, "packets": 30, "lateness_mean_us": 50.0, "lateness_max_us": 2000.0, "late_over_1ms": 2,
             "max_queued_bytes": 1000, "realtime": False}
    assert merged_delay_stats([one]) is one
    merged = merged_delay_stats([one, other])
    assert merged.keys() == one.keys()
    assert (merged["packets"], merged["late_over_1ms"], merged["max_queued_bytes"]) == (40, 2, 3000)
    assert merged["lateness_mean_us"] == 40.0 and merged["lateness_max_us"] == 2000.0
    assert merged["realtime"] is False and merged["gso"] is True
