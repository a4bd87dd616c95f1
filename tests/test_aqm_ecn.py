"""ECN end to end and the delay-based AQMs, on the simulator.

The control laws have unit tests against the kernel's behaviour in
crates/sim/src/qdisc/ (CoDel's interval/sqrt(count) spacing and Newton
iteration, PIE's fixed-point update, FQ-CoDel's fattest-flow drop, RED's
and PIE's marking rule); these tests check what a researcher sees in a
run. Targets are the acceptance targets set when these AQMs were added
(CoDel's median sojourn at most 2x its 5 ms, FQ-CoDel's shares within
45-55%, PIE's median within +-50% of its 15 ms); the measured values (seeds
1-3 gave the same to 0.1 ms: one flow has no randomness but PIE's) are in
the comments.
"""

from __future__ import annotations

import pytest

from ccarena import load_scenario, run
from ccarena.errors import ScenarioError
from ccarena.plots import aqm_references
from conftest import run_cli


def scenario(bottleneck: dict, flows: list[dict], duration: str = "60s", seed: int = 1) -> dict:
    return {"duration": duration, "seed": seed, "measure": {"from": "20s"},
            "bottleneck": {"rate": "100Mbit", **bottleneck}, "flow": flows}


RED_ECN = {"buffer": "2BDP", "aqm": "red", "red": {"min": "0.2BDP", "max": "0.6BDP", "max_p": 0.1, "ecn": True}}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_red_with_ecn_marks_instead_of_dropping_and_accecn_counts_every_mark(seed):
    # Two CUBIC flows: marks, no drops, the average queue below RED's max
    # (the mean sojourn was 4.3 ms, max = 0.6 BDP = 24 ms at link rate).
    flows = [{"cc": "cubic", "rtt": "40ms", "ecn": "accecn", "count": 2}]
    s = run(scenario(RED_ECN, flows, "30s", seed)).summary
    assert s["marks"] > 0 and s["drops"] == 0
    assert s["queue_delay_ms"]["mean"] < 24
    for f in s["flows"]:
        # Echoed CE = delivered_ce, exactly; sent CE the same but for marked
        # segments still on their way to the receiver when the run ends
        # (seed 1: 285 marked, 284 received; a mark every ~0.05 s, 20 ms
        # one way).
        assert f["ce_marked"] > 0
        assert f["ce_received"] == f["delivered_ce"], f
        assert 0 <= f["ce_marked"] - f["ce_received"] <= 3, f
        assert f["retransmits_total"] == 0


def test_classic_ecn_echoes_every_mark_and_reduces_once_per_round_trip():
    # RFC 3168: ECE until CWR, so delivered_ce counts every segment an ECE
    # ACK delivered: at least the marks (measured 1701 for 380 marks).
    flows = [{"cc": "cubic", "rtt": "40ms", "ecn": True, "count": 2}]
    s = run(scenario(RED_ECN, flows, "30s")).summary
    assert s["drops"] == 0
    for f in s["flows"]:
        assert f["ecn"] == "classic"
        assert 0 < f["ce_marked"] == f["ce_received"] < f["delivered_ce"]
    # Without ECN the same RED drops early instead.
    plain = run(scenario(RED_ECN, [{"cc": "cubic", "rtt": "40ms", "count": 2}], "30s")).summary
    assert plain["drops"] > 0 and "marks" not in plain


def test_codel_holds_the_standing_queue_near_its_target_where_droptail_fills_the_buffer():
    # One CUBIC flow, 100 Mbit/s, 40 ms, a 20-BDP buffer. CoDel: median
    # sojourn 1.06 ms (at most 2 x 5 ms; CUBIC's 30% cut empties a 5-ms
    # queue, so it sits below target); droptail: 683 ms of the buffer's 800.
    flows = [{"cc": "cubic", "rtt": "40ms"}]
    codel = run(scenario({"buffer": "20BDP", "aqm": "codel"}, flows)).summary
    drop = run(scenario({"buffer": "20BDP"}, flows)).summary
    assert 0 < codel["queue_delay_ms"]["p50"] <= 2 * 5
    assert codel["utilization"] > 0.9
    assert drop["queue_delay_ms"]["p50"] > 0.5 * 800


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_fq_codel_removes_bbrs_rtt_bias(seed):
    # BBR 10 vs 50 ms: 50.3-50.5% for the 10-ms flow, median 3.4-3.5 ms.
    flows = [{"cc": "bbr", "rtt": "10ms"}, {"cc": "bbr", "rtt": "50ms"}]
    s = run(scenario({"buffer": "4BDP", "aqm": "fq_codel"}, flows, seed=seed)).summary
    assert 0.45 <= s["flows"][0]["share"] <= 0.55
    assert s["queue_delay_ms"]["p50"] < 10


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_pie_steers_the_median_delay_to_its_target(seed):
    # Four CUBIC flows: 15.0-15.1 ms against the 15-ms target.
    flows = [{"cc": "cubic", "rtt": "40ms", "count": 4}]
    s = run(scenario({"buffer": "4BDP", "aqm": "pie"}, flows, seed=seed)).summary
    assert 7.5 <= s["queue_delay_ms"]["p50"] <= 22.5


def test_the_step_marker_marks_without_dropping():
    flows = [{"cc": "cubic", "rtt": "40ms", "ecn": "accecn", "count": 2}]
    s = run(scenario({"buffer": "4BDP", "mark_threshold": "20pkt"}, flows)).summary
    assert s["marks"] > 0 and s["drops"] == 0
    # 20 packets at 100 Mbit/s is 2.4 ms: CUBIC keeps the queue below it.
    assert s["queue_delay_ms"]["p50"] < 20 * 1514 * 8 / 100e6 * 1e3


def test_the_queue_plot_draws_each_aqms_reference():
    cfg = lambda bn: load_scenario(scenario(bn, [{"cc": "bbr", "rtt": "40ms"}])).config["bottleneck"]  # noqa: E731
    assert aqm_references(cfg({"buffer": "4BDP", "aqm": "pie"})) == [(15.0, "pie target", "--")]
    assert [r[0] for r in aqm_references(cfg({"buffer": "4BDP", "aqm": "codel", "codel": {"target": "2ms"}}))] == [2.0]
    (ms, label, _), = aqm_references(cfg({"buffer": "4BDP", "mark_threshold": "20pkt"}))
    assert ms == pytest.approx(20 * 1514 * 8 / 100e6 * 1e3) and "mark threshold" in label
    assert aqm_references(cfg({"buffer": "4BDP"})) == []


def test_defaults_are_linuxs_and_resolve_to_the_engine_config():
    bn = lambda b: load_scenario(scenario(b, [{"cc": "bbr", "rtt": "40ms"}])).config["bottleneck"]  # noqa: E731
    assert bn({"buffer": "4BDP", "aqm": "codel"})["codel"] == {
        "target_ns": 5_000_000, "interval_ns": 100_000_000, "limit_packets": 1000, "ecn": False}
    assert bn({"buffer": "4BDP", "aqm": "fq_codel"})["fq_codel"] == {
        "target_ns": 5_000_000, "interval_ns": 100_000_000, "limit_packets": 10240, "flows": 1024,
        "quantum_bytes": 1514, "ecn": True}
    assert bn({"buffer": "4BDP", "aqm": "pie"})["pie"] == {
        "target_ns": 15_000_000, "tupdate_ns": 15_000_000, "alpha_16ths": 2, "beta_16ths": 20,
        "burst_ns": 150_000_000, "limit_packets": 1000, "ecn": False}
    assert bn({"buffer": "4BDP", "mark_threshold": "1ms"})["mark_threshold"] == {"ns": 1_000_000}
    assert bn({"buffer": "4BDP", "mark_threshold": "30KB"})["mark_threshold"] == {"bytes": 30_000}
    assert bn({"buffer": "4BDP"}).keys().isdisjoint({"codel", "fq_codel", "pie", "mark_threshold"})
    flows = load_scenario(scenario({"buffer": "4BDP"}, [{"cc": "bbr", "rtt": "40ms", "ecn": True},
                                                       {"cc": "bbr", "rtt": "40ms"}])).config["flows"]
    assert flows[0]["ecn"] == "classic" and "ecn" not in flows[1]


@pytest.mark.parametrize(
    "bottleneck, flow, field, fragment",
    [
        ({"aqm": "droptail", "codel": {}}, {}, "bottleneck.codel", "aqm = \"codel\""),
        ({"aqm": "pie", "pie": {"alpha": 0.1}}, {}, "bottleneck.pie.alpha", "1/16"),
        ({"aqm": "red", "red": {"min": "0.1BDP", "max": "0.5BDP", "max_p": 0.1}, "mark_threshold": "20pkt"}, {},
         "bottleneck.mark_threshold", "droptail"),
        ({"mark_threshold": "many"}, {}, "bottleneck.mark_threshold", "not packets"),
        ({"aqm": "fq_codel", "fq_codel": {"flows": 0}}, {}, "bottleneck.fq_codel.flows", ""),
        ({}, {"ecn": "dctcp"}, "flow[0].ecn", ""),
    ],
)
def test_bad_aqm_and_ecn_keys_are_one_line_errors(tmp_path, bottleneck, flow, field, fragment):
    doc = scenario({"buffer": "4BDP", **bottleneck}, [{"cc": "cubic", "rtt": "40ms", **flow}])
    with pytest.raises(ScenarioError) as err:
        load_scenario(doc)
    assert err.value.path.replace("[", ".").replace("]", "") == field.replace("[", ".").replace("]", ""), err.value
    assert fragment in str(err.value)
    # The CLI: exit 2, one line, nothing written.
    path = tmp_path / "bad.toml"
    import tomli_w

    path.write_text(tomli_w.dumps(doc))
    out = tmp_path / "out"
    done = run_cli("run", str(path), "--out", str(out))
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and not out.exists()
