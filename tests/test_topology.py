"""Topologies: [[link]] tables, each flow's path and reverse path
(docs/scenario-format.md, "Topologies")."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ccarena import _core, run
from ccarena.api import simulate
from ccarena.errors import ScenarioError
from ccarena.live.engine import check_supported
from ccarena.scenario import apply_overrides, engine_limits, load_scenario
from ccarena.tables import link_columns
from ccarena.topology import base_rtt_ns, max_min

LINK = {"rate": "20Mbit", "buffer": "1bdp"}


def parking_lot(cc: str = "cubic", duration: str = "20s") -> dict:
    """Three links of 5 ms; one flow across all three, one across each."""
    return {
        "duration": duration,
        "link": [{"name": name, **LINK, "delay": "5ms"} for name in ("a", "b", "c")],
        "flow": [{"cc": cc, "rtt": "10ms", "path": ["a", "b", "c"]}]
        + [{"cc": cc, "rtt": "10ms", "path": [name]} for name in ("a", "b", "c")],
    }


def two_way(reverse_flow: bool, duration: str = "20s") -> dict:
    """A BBR flow up, its ACKs down; with ``reverse_flow``, a CUBIC flow
    down from the start, its ACKs up."""
    flows = [{"cc": "bbr", "rtt": "40ms", "path": ["up"], "reverse": ["down"]}]
    if reverse_flow:
        flows.append({"cc": "cubic", "rtt": "40ms", "path": ["down"], "reverse": ["up"]})
    return {"duration": duration, "link": [{"name": "up", **LINK}, {"name": "down", **LINK}], "flow": flows}


def test_one_link_without_delay_is_the_dumbbell():
    dumbbell = {"duration": "10s", "bottleneck": LINK, "flow": [{"cc": "bbr", "rtt": "10ms"}, {"cc": "cubic", "rtt": "30ms"}]}
    topology = {**{k: v for k, v in dumbbell.items() if k != "bottleneck"}, "link": [{"name": "only", **LINK}]}
    a, b = simulate(load_scenario(dumbbell)), simulate(load_scenario(topology))
    assert a["flows"] == b["flows"] and a["link"] == b["link"]
    assert "links" not in b  # one link: nothing beyond link 0


def test_a_parking_lots_long_flow_is_compared_with_max_min():
    result = run(parking_lot())
    flows = result.summary["flows"]
    # Max-min: every link is shared by two flows, so each gets half of a
    # link's goodput capacity (20 Mbit/s of 1514-byte frames, 1448 payload).
    half = 20 * 1448 / 1514 / 2
    assert [f["maxmin_mbps"] for f in flows] == pytest.approx([half] * 4, rel=1e-6)
    assert flows[0]["path"] == ["a", "b", "c"] and flows[0]["base_rtt_ms"] == 40
    assert [f["base_rtt_ms"] for f in flows[1:]] == [20, 20, 20]
    # CUBIC's long flow (two more queues, twice the RTT) gets less than its
    # max-min share; the short ones more. Every link is full.
    assert flows[0]["of_maxmin"] < 1 < min(f["of_maxmin"] for f in flows[1:])
    links = result.summary["links"]
    assert [link["name"] for link in links] == ["a", "b", "c"]
    assert all(link["utilization"] > 0.95 for link in links)
    assert all(f["balanced"] for f in result.summary["conservation"]["flows"])


def test_a_flows_base_rtt_is_the_engines_rule():
    # Its hosts' RTT plus its links' delays both ways; without a reverse
    # path, its data path's delays again (summary.json's base_rtt_ms, the
    # flow labels and the BDP unit all take it from the engine's rule).
    ms = 1_000_000
    delays = [0, 5 * ms, 7 * ms, 11 * ms]
    flow = {"rtt_ns": 10 * ms, "path": [1, 2]}
    assert base_rtt_ns(delays, flow) == (10 + 2 * (5 + 7)) * ms
    assert base_rtt_ns(delays, {**flow, "reverse_path": [3]}) == (10 + 5 + 7 + 11) * ms
    assert base_rtt_ns(delays, {**flow, "path": [0]}) == 10 * ms
    with pytest.raises(ValueError, match="link 4: no delay"):
        _core.base_rtt_ns(10 * ms, delays, [1], [4])
    doc = two_way(reverse_flow=True, duration="2s")
    doc["link"][0]["delay"], doc["link"][1]["delay"] = "5ms", "3ms"
    assert [f["base_rtt_ms"] for f in run(doc).summary["flows"]] == [48, 48]


def test_max_min_fills_progressively():
    # A link of 10 shared by a long flow and a short one, and a link of 4
    # crossed by the long flow only: the long flow is held at 4 by the
    # second link, and the short one takes the rest of the first.
    assert max_min([10, 4], [[0, 1], [0]]) == [4, 6]
    assert max_min([10, 10], [[0, 1], [0], [1], None]) == [5, 5, 5, None]


def test_acks_queue_behind_reverse_traffic():
    alone = run(two_way(reverse_flow=False)).summary
    loaded = run(two_way(reverse_flow=True)).summary
    bbr, bbr_loaded = alone["flows"][0], loaded["flows"][0]
    # Alone, the ACK link carries only ACKs: a few percent of it, no queue.
    assert alone["links"][1]["utilization"] < 0.05 and alone["links"][1]["queue_delay_ms"]["p99"] < 1
    # With a CUBIC flow the other way, BBR's ACKs wait in its queue: BBR's
    # RTT rises by that queue, and its share of the up link falls.
    assert bbr_loaded["rtt_mean_ms"] > bbr["rtt_mean_ms"] + 10
    assert loaded["links"][0]["utilization"] < alone["links"][0]["utilization"]
    assert bbr_loaded["reverse"] == ["down"] and "acks_dropped" in bbr_loaded
    assert all(f["balanced"] for f in loaded["conservation"]["flows"])


def test_link_telemetry_has_a_row_per_link_and_interval():
    result = run(two_way(reverse_flow=True, duration="3s"))
    link = link_columns(result.raw)
    assert list(np.unique(link["link"])) == [0, 1]
    up = link["link"] == 0
    # Each row's rate over its own link's previous sample: never above the link.
    assert link["tx_mbps"][up].max() <= 20 * 1.0001
    assert len(link["t_s"]) == 2 * 30


def test_acks_arrive_compressed_behind_reverse_traffic():
    def compressed(reverse_flow: bool) -> float:
        flows = run(two_way(reverse_flow, duration="10s")).timeseries.to_pydict()
        acks = [a for f, a in zip(flows["flow"], flows["acks"], strict=True) if f == 0]
        squeezed = [c for f, c in zip(flows["flow"], flows["acks_compressed"], strict=True) if f == 0]
        return sum(squeezed) / sum(acks)

    # Seed 1, 10 s: 0.0 alone against 0.193 behind the CUBIC flow (ideal
    # hosts 0.178; the stalling machine's model `linux-stalls` 0.245).
    assert compressed(False) < 0.05 < 0.1 < compressed(True)
    # The dumbbell records no ACK columns.
    dumbbell = run({"duration": "2s", "bottleneck": LINK, "flow": [{"cc": "bbr", "rtt": "10ms"}]})
    assert "acks" not in dumbbell.timeseries.column_names


def test_reverse_traffic_raises_bbrs_extra_acked():
    """ACK compression from reverse traffic, in BBR's own telemetry: its
    ACK-aggregation filter (extra_acked, packets, from the algorithm's
    CCA_TRACE_EXTRA_ACKED) and the gaps between its ACKs. Seed 1, 10 s,
    after 3 s: extra_acked at most 4 alone and up to 45 with the CUBIC
    flow the other way (mean 3.1 -> 15.2; seeds 2-3: at most 6-13 alone,
    37-43 loaded). The 10th percentile of the ACK gaps: 1172 µs in every
    interval alone (one ACK per two packets; a packet is 606 µs at 20
    Mbit/s); loaded, ACKs back to back (under half a packet's time) in
    49% of the intervals (seeds 2-3: 61%, 46%), while the median gap stays
    at the receiver's pace (1211 -> 1220 µs). (In most other loaded
    intervals the 10th percentile is one packet's time: for a while after
    each growth of its buffer, which a loss recovery's burst of reads sets
    off, the receiver ACKs each segment: crate::rcvbuf.) CUBIC reports no
    extra_acked: null. tests/test_live_ack_compression.py asks the same of
    the live engine."""
    def forward(reverse_flow: bool) -> dict[str, np.ndarray]:
        t = run(two_way(reverse_flow, duration="10s")).timeseries.to_pydict()
        rows = [i for i, (f, ts) in enumerate(zip(t["flow"], t["t_s"], strict=True)) if f == 0 and ts > 3]
        return {name: np.array([t[name][i] for i in rows], dtype=float)
                for name in ("extra_acked", "ack_gap_p10_us", "ack_gap_p50_us")}

    alone, loaded = forward(False), forward(True)
    assert not np.isnan(alone["extra_acked"]).any() and not np.isnan(loaded["extra_acked"]).any()
    assert loaded["extra_acked"].max() >= 1.5 * alone["extra_acked"].max()
    assert loaded["extra_acked"].mean() > alone["extra_acked"].mean()
    packet_us = 1514 * 8 / 20
    assert (alone["ack_gap_p10_us"] >= packet_us).all()
    assert np.mean(loaded["ack_gap_p10_us"] < packet_us / 2) > 1 / 3
    assert np.nanmean(loaded["ack_gap_p50_us"]) == pytest.approx(np.nanmean(alone["ack_gap_p50_us"]), rel=0.1)
    cubic = run(two_way(True, duration="2s")).timeseries.to_pydict()
    assert {x for f, x in zip(cubic["flow"], cubic["extra_acked"], strict=True) if f == 1} == {None}


def test_an_aggregating_link_releases_the_acks_together():
    doc = two_way(reverse_flow=False, duration="5s")
    plain = run(doc).timeseries.to_pydict()
    doc["link"][1]["aggregate"] = "20ms"
    held = run(doc)
    bursts = held.timeseries.to_pydict()
    # Released every 20 ms, nearly every ACK arrives right behind another.
    assert sum(bursts["acks_compressed"]) / sum(bursts["acks"]) > 0.9
    assert sum(plain["acks_compressed"]) / sum(plain["acks"]) < 0.05
    assert held.scenario.config["links"][0]["aggregate_ns"] == 20_000_000
    with pytest.raises(ScenarioError) as err:
        check_supported(load_scenario({"duration": "1s", "bottleneck": {**LINK, "aggregate": "5ms"},
                                       "flow": [{"cc": "bbr", "rtt": "10ms"}]}))
    assert err.value.path == "bottleneck.aggregate"


def test_a_topology_of_workloads_alone_reports_each_link():
    """Workloads can be all of a topology's traffic: it is still a
    topology, with a summary (and a printed line) per link."""
    result = run({"duration": "3s", "measure": {"from": "1s"},
                  "link": [{"name": "a", **LINK}, {"name": "b", "rate": "10Mbit", "buffer": "50KB"}],
                  "workload": [{"cc": "cubic", "rtt": "10ms", "path": ["b"], "size": "100KB", "load": 0.5}]})
    links = {link["name"]: link for link in result.summary["links"]}
    assert links["a"]["utilization"] == 0 and links["b"]["utilization"] > 0.3
    assert [line.split(":")[0] for line in result.table().splitlines() if line.startswith("link ")] == ["link a",
                                                                                                       "link b"]


def test_a_topology_is_deterministic():
    a = simulate(load_scenario({**two_way(reverse_flow=True, duration="5s"), "seed": 3}))
    b = simulate(load_scenario({**two_way(reverse_flow=True, duration="5s"), "seed": 3}))
    assert json.dumps(a["flows"]) == json.dumps(b["flows"])
    assert all(np.array_equal(a["link_series"][k], b["link_series"][k]) for k in a["link_series"])


@pytest.mark.parametrize(("change", "path", "words"), [
    ({"bottleneck": LINK}, "link", "not both"),
    ({"link": None}, "bottleneck", "required"),
    ({"flow.0.path": ["a", "x"]}, "flow[0].path[1]", "no link named 'x'"),
    ({"flow.0.path": ["a", "a"]}, "flow[0].path[1]", "already on the path"),
    ({"flow.0.path": []}, "flow[0].path", "at least one link"),
    ({"flow.1.path": None}, "flow[1].path", "required with several"),
    ({"link.1.name": "a"}, "link[1].name", "names link[0] already"),
    ({"link.2.delay": "11s"}, "link[2].delay", "limit"),
    ({"link.1.buffer": "0B"}, "link[1].buffer", "must be > 0"),
])
def test_bad_topologies_name_the_field(change, path, words):
    doc = apply_overrides(parking_lot(), {k: v for k, v in change.items() if v is not None})
    for key in (k for k, v in change.items() if v is None):
        if "." in key:
            doc["flow"][int(key.split(".")[1])].pop(key.rsplit(".", 1)[1])
        else:
            doc.pop(key)
    with pytest.raises(ScenarioError) as err:
        load_scenario(doc)
    assert err.value.path == path and words in str(err.value), str(err.value)


def test_routes_need_links_and_the_link_count_has_a_limit():
    with pytest.raises(ScenarioError) as err:
        load_scenario({"duration": "1s", "bottleneck": LINK, "flow": [{"cc": "bbr", "rtt": "10ms", "path": ["a"]}]})
    assert err.value.path == "flow[0].path"
    many = engine_limits()["max_links"] + 1
    doc = {"duration": "1s", "link": [{"name": f"l{k}", **LINK} for k in range(many)],
           "flow": [{"cc": "bbr", "rtt": "10ms", "path": ["l0"]}]}
    with pytest.raises(ScenarioError) as err:
        load_scenario(doc)
    assert err.value.path == "link"
    # The engine agrees, on the same field.
    config = load_scenario({**doc, "link": doc["link"][:2]}).config
    config["links"] = config["links"] * many
    with pytest.raises(ValueError, match=r"^link: "):
        _core.validate(json.dumps(config))


def test_the_live_engine_runs_a_topology_on_its_userspace_links():
    """(tests/test_live_topology.py: how.)"""
    assert check_supported(load_scenario(parking_lot())) == "userspace"
