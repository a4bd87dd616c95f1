"""Properties over fuzzed scenarios: whatever the Python front end (the
gate) accepts, the engine accepts too; utilisation never exceeds 1;
packets are conserved; the same seed gives the same summary.

The scenarios come from a seeded generator (the test is deterministic) and
are small (<= 1 s, <= 200 Mbit/s) so that 1000 of them take seconds. They
cover every kind of link and queue: constant rates and rate schedules,
link traces (examples/traces/), droptail, RED, fq, CoDel, FQ-CoDel and
PIE (with and without ECN), a step marker with ECN flows, policers,
random loss, ACK jitter and RTT schedules; application-limited senders
and workloads (alone or next to flows).

Agreement at each field's limits is tests/test_field_limits.py."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

from ccarena import _core, metrics
from ccarena.api import simulate
from ccarena.errors import ScenarioError
from ccarena.scenario import load_scenario

N_SCENARIOS = 1000
CCS = ("bbr", "bbq", "cubic", "reno")
TRACES = sorted(str(p) for p in (Path(__file__).resolve().parent.parent / "examples" / "traces").glob("*.trace"))


def _aqm_table(rng: random.Random, aqm: str) -> dict:
    """Sometimes a table of the AQM's own parameters, else its defaults."""
    if rng.random() < 0.5:
        return {}
    ms = lambda lo, hi: f"{rng.randint(lo, hi)}ms"  # noqa: E731
    if aqm == "codel":
        return {"codel": {"target": ms(1, 20), "interval": ms(20, 200), "ecn": rng.random() < 0.5}}
    if aqm == "fq_codel":
        return {"fq_codel": {"target": ms(1, 20), "quantum": f"{rng.choice([300, 1514, 3000])}B",
                             "flows": rng.choice([1, 16, 1024]), "ecn": rng.random() < 0.5}}
    if aqm == "pie":
        return {"pie": {"target": ms(5, 30), "tupdate": ms(5, 30), "alpha": rng.choice([0, 0.125, 2]),
                        "beta": rng.choice([0, 1.25, 2]), "burst": ms(0, 150), "ecn": rng.random() < 0.5}}
    return {}


def _scenario(rng: random.Random) -> dict:
    duration_ms = rng.randint(50, 1000)
    rate_kbit = rng.choice([500, 2_000, 10_000, 50_000, 200_000])
    ecn = rng.choice([False, False, True, "accecn"])
    flows = []
    for _ in range(rng.randint(1, 4)):
        flow = {"cc": rng.choice(CCS), "rtt": f"{rng.randint(1, 200)}ms", "count": rng.randint(1, 3)}
        if ecn:
            flow["ecn"] = ecn
        if rng.random() < 0.3:
            flow["start"] = f"{rng.randint(0, duration_ms - 1)}ms"
        if rng.random() < 0.2:
            start = int(flow.get("start", "0ms")[:-2])
            flow["stop"] = f"{rng.randint(start + 1, duration_ms)}ms"
        if rng.random() < 0.1:
            flow["rtt_schedule"] = [{"at": f"{rng.randint(0, duration_ms - 1)}ms", "rtt": f"{rng.randint(1, 300)}ms"}]
        if rng.random() < 0.1:
            flow["jitter"] = f"{rng.randint(0, 2000)}us"
        flows.append(flow)
    bottleneck: dict = {
        "rate": f"{rate_kbit}Kbit",
        "buffer": rng.choice(["2pkt", "10pkt", "0.5bdp", "1bdp", "4bdp", "300KB"]),
        "aqm": rng.choice(["droptail", "droptail", "red", "fq", "codel", "fq_codel", "pie"]),
    }
    if bottleneck["aqm"] == "red":
        bottleneck["buffer"] = "100pkt"
        bottleneck["red"] = {"min": "5pkt", "max": "30pkt", "max_p": rng.choice([0.05, 0.1, 0.5])}
        if ecn:
            bottleneck["red"]["ecn"] = True
    bottleneck |= _aqm_table(rng, bottleneck["aqm"])
    if bottleneck["aqm"] == "droptail" and ecn and rng.random() < 0.6:
        bottleneck["mark_threshold"] = rng.choice(["1pkt", "5pkt", "20pkt", "3KB", "0.2bdp", "500us", "5ms"])
    if rng.random() < 0.2:
        bottleneck["loss"] = rng.choice([0.001, 0.01, 0.1])
    if rng.random() < 0.25:
        # A link trace in place of the rate (and of any schedule).
        del bottleneck["rate"]
        bottleneck["trace"] = rng.choice(TRACES)
    elif rng.random() < 0.25:
        bottleneck["schedule"] = [
            {"at": f"{at}ms", "rate": f"{rng.choice([300, 5_000, 80_000])}Kbit"}
            for at in sorted(rng.sample(range(1, duration_ms), k=rng.randint(1, 3)))
        ]
    if rng.random() < 0.15:
        bottleneck["policer"] = {"rate": f"{rng.choice([rate_kbit // 2, 5_000])}Kbit",
                                 "burst": rng.choice(["1pkt", "20pkt", "100KB"])}
    doc = {
        "duration": f"{duration_ms}ms",
        "seed": rng.randint(0, 1 << 32),
        "bottleneck": bottleneck,
        "flow": flows,
        "output": {"interval": f"{rng.choice([1, 10, 50])}ms"},
    }
    if rng.random() < 0.5:
        # Windows of every size, down to a few microseconds at the end
        # (where a packet on the wire straddles the edge).
        to_us = rng.randint(1, duration_ms * 1000)
        doc["measure"] = {"from": f"{rng.randint(0, to_us - 1)}us", "to": f"{to_us}us"}
    # Drawn last, so that the scenarios above stay what they were.
    if rng.random() < 0.2:
        # An application-limited sender: a rate, ON/OFF periods or both.
        app: dict = {}
        if rng.random() < 0.7:
            app["rate"] = f"{rng.choice([100, 2_000, 30_000])}Kbit"
        if not app or rng.random() < 0.5:
            app |= {"on": f"{rng.randint(1, 300)}ms", "off": f"{rng.randint(1, 300)}ms",
                    "periods": rng.choice(["fixed", "exponential"])}
        rng.choice(flows)["app"] = app
    if rng.random() < 0.2:
        # Sized flows arriving, a few slots for them (some refused, slots reused).
        workload = {"cc": rng.choice(CCS), "rtt": f"{rng.randint(1, 200)}ms", "max_active": rng.randint(1, 8),
                    "size": rng.choice(["1B", "3KB", "40KB", "300KB"])}
        if ecn:
            workload["ecn"] = ecn
        if rng.random() < 0.5:
            workload["load"] = rng.choice([0.1, 0.5, 1.0])
        else:
            workload["arrival_rate"] = rng.choice([5, 100, 2000])
        doc["workload"] = [workload]
        if rng.random() < 0.3:
            del doc["flow"]  # workloads alone
    return doc


def _fuzzed() -> list[dict]:
    rng = random.Random(20261123)
    return [_scenario(rng) for _ in range(N_SCENARIOS)]


def test_what_python_accepts_the_engine_runs_with_utilisation_at_most_one():
    checked = 0
    kinds: Counter[str] = Counter()
    for doc in _fuzzed():
        try:
            scenario = load_scenario(doc)
        except ScenarioError:
            continue  # e.g. a start after a stop: the generator is not perfect
        bn = doc["bottleneck"]
        kinds.update([bn["aqm"], *(key for key in ("trace", "schedule", "policer", "mark_threshold") if key in bn),
                      *(["app"] if any("app" in f for f in doc.get("flow", [])) else []),
                      *(["workload"] if "workload" in doc else [])])
        config_json = json.dumps(scenario.config)
        _core.validate(config_json)  # the engine never disagrees with the gate
        raw = simulate(scenario)
        summary = metrics.summarize(scenario, raw)
        util = summary["utilization"]
        assert util is None or 0 <= util <= 1, (doc, util)
        assert raw["link"]["tx_bytes_window"] <= raw["link"]["capacity_bytes_window"], doc
        assert all(f["balanced"] for f in summary["conservation"]["flows"]), doc
        shares = [f["share"] for f in summary["flows"]]
        assert all(s is None for s in shares) or abs(sum(shares) - 1) < 1e-5, (doc, shares)
        for f in summary["flows"]:
            assert f["rtt_mean_ms"] is None or f["rtt_mean_ms"] > 0, (doc, f)
        for w, counts in zip(summary.get("workloads", []), raw.get("workloads", []), strict=True):
            # Every flow that started has its record; none beyond its slots.
            assert len(raw["workload_flows"]["workload"]) == counts["arrived"] - counts["refused"], doc
            assert counts["peak_active"] <= scenario.config["workloads"][0]["max_active"], doc
            assert w["window"]["completed"] + w["window"]["unfinished"] == w["window"]["flows"], doc
        checked += 1
    assert checked >= 0.9 * N_SCENARIOS
    # Every kind of link and queue was among them, and the senders'.
    assert min(kinds.values()) >= 15 and len(kinds) == 12, kinds


def test_a_trace_link_is_never_used_above_its_opportunities():
    # Two Reno flows at 300 ms on the constant 12-Mbit/s trace for 15 s
    # once reported 1.0001 (4 of 189 fuzzed runs were above 1): the packet
    # leaving at the end of the run (an opportunity at 15 s, outside
    # [5 s, 15 s)) counted in the window.
    # The link stays saturated (so the end of the window is at stake):
    # with ideal hosts it leaves at most one opportunity of the window
    # unused (since each flow's data takes its delay before the link,
    # 0.9999; before, 1.0), with the host model's stalls a few.
    doc = {"duration": "15s", "host": "ideal", "bottleneck": {"trace": TRACES[0], "buffer": "1bdp"},
           "flow": [{"cc": "reno", "rtt": "300ms", "count": 2}]}
    assert TRACES[0].endswith("const-12mbit.trace")
    scenario = load_scenario(doc)
    raw = simulate(scenario, series=False)
    link = raw["link"]
    assert link["tx_bytes_window"] <= link["capacity_bytes_window"], link
    assert 0.9995 <= metrics.summarize(scenario, raw)["utilization"] <= 1.0
