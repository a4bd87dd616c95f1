"""Topologies in the live engine: the delay line carries every [[link]]
(the simulator's queue and serialiser, then the link's delay) and routes
each flow's data over its path and its ACKs over its reverse path
(crates/delayline/src/network.rs, whose Rust tests check the timing).

The argument and result-shaping tests run anywhere; the live ones need
root and the built delay line (they skip otherwise), run 15 s of traffic
each and check that nothing is left behind (test_live.py's fixtures).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pyarrow.parquet as pq
import pytest

from conftest import EXAMPLES
from test_live import DELAYLINE, clean_host, live_cli  # noqa: F401  (clean_host is a fixture)

from ccarena import load_scenario, run
from ccarena.errors import ScenarioError
from ccarena.live.compare import table as compare_table
from ccarena.live.engine import check_supported, delay_line_args, load_live_scenario
from ccarena.live.rawresult import build_raw
from ccarena.results import Result

needs_delay_line = pytest.mark.skipif(not DELAYLINE.exists(), reason="delay line not built (make build)")
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="live tests need root (they create network namespaces)")
needs_iproute2 = pytest.mark.skipif(shutil.which("tc") is None or shutil.which("ip") is None,
                                    reason="iproute2 (ip, tc) missing")

LINK = {"rate": "20Mbit", "buffer": "1bdp"}


def two_way(duration: str = "1s") -> dict:
    """examples/reverse-traffic-bbr.toml's shape: up and down, 5 ms each."""
    return {"duration": duration, "output": {"interval": "100ms"},
            "link": [{"name": "up", **LINK, "delay": "5ms"}, {"name": "down", **LINK, "delay": "5ms"}],
            "flow": [{"cc": "bbr", "rtt": "40ms", "path": ["up"], "reverse": ["down"]},
                     {"cc": "cubic", "rtt": "40ms", "path": ["down"]}]}


def test_a_topology_runs_on_the_userspace_links_and_the_kernel_bottleneck_refuses_it():
    scenario = load_scenario(EXAMPLES / "parking-lot.toml")
    assert check_supported(scenario) == "userspace"
    assert check_supported(scenario, "userspace") == "userspace"
    with pytest.raises(ScenarioError) as err:
        check_supported(scenario, "kernel")
    assert err.value.path == "--bottleneck" and "[[link]]" in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(ScenarioError) as err:
        check_supported(load_scenario({**two_way(), "link": [{"name": "up", **LINK, "aggregate": "5ms"},
                                                             {"name": "down", **LINK}]}))
    assert err.value.path == "link[0].aggregate"


def test_the_delay_line_gets_every_link_and_route():
    cfg = load_live_scenario(two_way()).config
    args = delay_line_args(cfg, "userspace")
    assert args[:8] == ["--flow", "10.201.1.10=20000000", "--flow-path", "10.201.1.10=0", "--flow-reverse",
                        "10.201.1.10=1", "--flow", "10.201.1.11=20000000"]
    assert args[8:10] == ["--flow-path", "10.201.1.11=1"]
    links = [json.loads(args[i + 1]) for i, a in enumerate(args) if a == "--bottleneck"]
    assert [(link["rate_bps"], link["delay_ns"]) for link in links] == [(20_000_000, 5_000_000)] * 2
    # The dumbbell's arguments are as they were: no routes.
    plain = load_live_scenario(EXAMPLES / "bbr-rtt-unfairness.toml").config
    assert "--flow-path" not in delay_line_args(plain, "userspace")


@needs_delay_line
def test_the_delay_line_takes_every_topology_example():
    for name in ("parking-lot", "reverse-traffic-bbr"):
        args = delay_line_args(load_live_scenario(EXAMPLES / f"{name}.toml").config, "userspace")
        done = subprocess.run([DELAYLINE, "--tun", "check", *args, "--check"], capture_output=True, text=True)
        assert done.returncode == 0 and done.stdout == "ok\n", done.stderr


def _live_shaped_raw(cfg: dict) -> dict:
    """A live run's raw result for a two-way topology from made-up
    telemetry: 10 ticks; the delay line's samples as network.rs prints them."""
    n_ticks, n = cfg["duration_ns"] // cfg["interval_ns"], len(cfg["flows"])
    row = [10, 5, 1e7, 40_000, 40_000, 0, 0, None, None, None, 1e7, None, None, None]

    def link(k: int, tick: int) -> dict:
        return {"bytes": 2_000_000 * tick, "packets": 1400 * tick, "drops": tick, "backlog": 30_000 * (k + 1),
                "rate_bps": 20_000_000, "sojourn_sum_ns": 10**6 * tick, "sojourn_count": 100 * tick,
                "max_backlog": 60_000, "flow_backlog": [1000 * (k + 1), 2000], "flow_drops": [tick, 0],
                "flow_marks": [0, 0], "flow_ack_drops": [1, 0], "drops_not_ect": 0, "marks": 0}

    samples = {t: {"links": [link(0, t), link(1, t)], "acks": [90 * t, 80 * t], "acks_compressed": [9 * t, 0]}
               for t in range(1, n_ticks + 1)}
    final = [{**link(k, n_ticks), "sojourn_mean_us": 1500.0, "sojourn_p50_us": 1400.0, "sojourn_p95_us": 3000.0,
              "sojourn_p99_us": 3500.0} for k in range(2)]
    rx = {"bytes": [[2_000_000 * t] * n for t in range(1, n_ticks + 1)], "data_segs_in": [1000] * n}
    tx = {"samples": [[row] * n] * n_ticks, "final": [{"data_segs_out": 1000, "total_retrans": 0, "unacked": 0}] * n}
    return build_raw(cfg, rx, tx, samples, userspace={"links": final})


def test_a_live_topologys_summary_has_the_simulators_fields(tmp_path):
    """Per flow path, base RTT, max-min share and its goodput over it, per
    link its figures; link.parquet's link column and the ACK columns."""
    live_scenario = load_live_scenario(two_way())
    live = Result(live_scenario, _live_shaped_raw(live_scenario.config))
    sim = run(load_scenario(two_way()))
    assert [sorted(f) for f in live.summary["flows"]] == [sorted(f) for f in sim.summary["flows"]]
    assert [sorted(link) for link in live.summary["links"]] == [sorted(link) for link in sim.summary["links"]]
    flow = live.summary["flows"][0]
    assert (flow["path"], flow["reverse"], flow["base_rtt_ms"], flow["acks_dropped"]) == (["up"], ["down"], 50.0, 1)
    assert live.summary["flows"][1]["base_rtt_ms"] == 50.0  # its ACKs take the mirror of its path's 5 ms
    assert flow["maxmin_mbps"] == sim.summary["flows"][0]["maxmin_mbps"]
    assert [link["name"] for link in live.summary["links"]] == ["up", "down"]
    assert live.summary["links"][1]["queue_delay_ms"]["p50"] == 1.4
    # `ccarena compare` shows each flow's base RTT and its goodput over its max-min share.
    lines = compare_table(sim, live).splitlines()
    assert "of max-min sim" in lines[0] and " 50 ms " in lines[2], lines
    live.save(tmp_path / "live")
    table = pq.read_table(tmp_path / "live" / "link.parquet")
    assert table.column("link").to_pylist()[:4] == [0, 1, 0, 1]
    series = pq.read_table(tmp_path / "live" / "timeseries.parquet").to_pandas()
    assert series.groupby("flow")["acks_compressed"].sum().tolist() == [90, 0]
    # Per flow, its bytes queued in its data path's links.
    assert series[series.flow == 0]["queue_bytes"].iloc[0] == 1000


@needs_root
@needs_delay_line
@needs_iproute2
def test_a_parking_lot_runs_live(clean_host, tmp_path):
    """The long flow crosses three queues and gets less than its max-min
    share, the cross flows more (BBR; the simulator: 17% and 179%, seed
    1, 60 s)."""
    out = tmp_path / "run"
    done = live_cli("live", "run", EXAMPLES / "parking-lot.toml", "--set", "duration=15s", "--set", "measure.from=5s",
                    "--out", out)
    assert done.returncode == 0, done.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["engine"] == "live" and "3 links" in summary["live"]["bottleneck"]
    long_, *cross = summary["flows"]
    assert long_["path"] == ["a", "b", "c"] and long_["base_rtt_ms"] == 40.0
    assert all(long_["of_maxmin"] < c["of_maxmin"] for c in cross), summary["flows"]
    assert [link["name"] for link in summary["links"]] == ["a", "b", "c"]
    assert all(link["utilization"] > 0.8 for link in summary["links"]), summary["links"]
    assert set(pq.read_table(out / "link.parquet").column("link").to_pylist()) == {0, 1, 2}


@needs_root
@needs_delay_line
@needs_iproute2
def test_reverse_traffic_queues_acks_behind_data_live(clean_host, tmp_path):
    """BBR's ACKs come back down the link CUBIC sends on: once CUBIC runs,
    they queue behind its data and arrive compressed."""
    out = tmp_path / "run"
    done = live_cli("live", "run", EXAMPLES / "reverse-traffic-bbr.toml", "--set", "duration=15s",
                    "--set", "measure.from=10s", "--set", "flow.1.start=5s", "--out", out)
    assert done.returncode == 0, done.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert [f["reverse"] for f in summary["flows"]] == [["down"], ["up"]]
    series = pq.read_table(out / "timeseries.parquet").to_pandas()
    bbr = series[series.flow == 0]
    before, after = bbr[(bbr.t_s > 2) & (bbr.t_s <= 5)], bbr[bbr.t_s > 10]
    share = lambda rows: rows["acks_compressed"].sum() / max(1, rows["acks"].sum())  # noqa: E731
    assert share(after) > share(before) + 0.05, (share(before), share(after))
    # CUBIC's queue on the way down: a sawtooth that drains after each
    # loss (its median is ~1 ms in both engines over 10-15 s), so its p95.
    assert summary["links"][1]["queue_delay_ms"]["p95"] > 5.0, summary["links"][1]
