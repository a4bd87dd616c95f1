"""Scenario validation and resolution into SimConfig (scenario.py)."""

from __future__ import annotations

import copy

import pytest

from ccarena import ScenarioError, load_scenario
from ccarena.scenario import apply_overrides, parse_override

CCS = ("bbr", "cubic", "reno")


def resolve(doc, overrides=None):
    return load_scenario(doc, overrides, known_ccs=CCS)


def test_minimal_scenario_resolves_with_documented_defaults(small_scenario):
    cfg = resolve(small_scenario).config
    assert cfg["duration_ns"] == 3_000_000_000
    assert cfg["seed"] == 1
    # Default window: skip the first third of the run.
    assert (cfg["measure_from_ns"], cfg["measure_to_ns"]) == (1_000_000_000, 3_000_000_000)
    assert cfg["interval_ns"] == 100_000_000
    assert (cfg["mss"], cfg["wire_overhead"]) == (1448, 66)
    assert cfg["bottleneck"] == {
        "rate_bps": 100_000_000,
        "buffer_bytes": 2_000_000,
        "aqm": "droptail",
        "red": None,
        "loss": 0.0,
        "schedule": [],
    }
    assert cfg["flows"] == [
        {"cc": "bbr", "rtt_ns": 10_000_000, "start_ns": 0, "stop_ns": None, "params": []},
        {"cc": "cubic", "rtt_ns": 50_000_000, "start_ns": 500_000_000, "stop_ns": None, "params": []},
    ]


def test_full_scenario_resolves_every_field(small_scenario):
    doc = copy.deepcopy(small_scenario)
    doc["seed"] = 7
    doc["measure"] = {"from": "1s", "to": "2.5s"}
    doc["output"] = {"interval": "10ms"}
    doc["bottleneck"].update(
        aqm="red",
        loss=0.01,
        red={"min": "30KB", "max": "60pkt", "max_p": 0.1, "byte_mode": True},
        schedule=[{"at": "1s", "rate": "50Mbit"}, {"at": "2s", "rate": "1Gbit"}],
    )
    doc["flow"][1]["stop"] = "2s"
    cfg = resolve(doc).config
    assert cfg["seed"] == 7
    assert (cfg["measure_from_ns"], cfg["measure_to_ns"]) == (1_000_000_000, 2_500_000_000)
    assert cfg["interval_ns"] == 10_000_000
    bn = cfg["bottleneck"]
    assert bn["aqm"] == "red" and bn["loss"] == 0.01
    assert bn["red"] == {"min_bytes": 30_000, "max_bytes": 60 * 1514, "max_p": 0.1, "wq": 0.002, "byte_mode": True}
    assert bn["schedule"] == [
        {"at_ns": 1_000_000_000, "rate_bps": 50_000_000},
        {"at_ns": 2_000_000_000, "rate_bps": 1_000_000_000},
    ]
    assert cfg["flows"][1]["stop_ns"] == 2_000_000_000


def test_bdp_buffer_uses_rate_and_largest_rtt(small_scenario):
    doc = copy.deepcopy(small_scenario)
    doc["bottleneck"]["buffer"] = "0.5bdp"
    # 100 Mbit/s x 50 ms (the larger RTT) = 625 kB; half of it:
    assert resolve(doc).config["bottleneck"]["buffer_bytes"] == 312_500
    doc["flow"] = [{"cc": "bbr", "rtt": "10ms"}]
    doc["bottleneck"]["buffer"] = "5bdp"
    assert resolve(doc).config["bottleneck"]["buffer_bytes"] == 625_000


def test_count_expands_into_identical_flows(small_scenario):
    doc = copy.deepcopy(small_scenario)
    doc["flow"][0]["count"] = 3
    flows = resolve(doc).config["flows"]
    assert [f["cc"] for f in flows] == ["bbr", "bbr", "bbr", "cubic"]
    assert flows[0] == flows[1] == flows[2]
    assert flows[0] is not flows[1]


def test_human_readable_scenario_keeps_units_and_fills_defaults(small_scenario):
    human = resolve(small_scenario).human
    assert human["duration"] == "3s"
    assert human["bottleneck"]["rate"] == "100Mbit"
    assert human["bottleneck"]["buffer_bytes"] == 2_000_000
    assert human["bottleneck"]["bdp_bytes"] == 625_000
    assert human["measure"] == {"from": "1s", "to": "3s"}
    assert human["flow"][1]["start"] == "0.5s"


def test_flow_labels_name_cc_and_rtt(small_scenario):
    assert resolve(small_scenario).flow_labels == ["flow 0: bbr, 10ms", "flow 1: cubic, 50ms"]


def test_toml_text_and_file_give_the_same_config(tmp_path, small_scenario):
    import tomli_w

    text = tomli_w.dumps(small_scenario)
    path = tmp_path / "two-flows.toml"
    path.write_text(text)
    from_text = resolve(text)
    from_file = resolve(path)
    from_str_path = resolve(str(path))
    assert from_text.config == from_file.config == from_str_path.config == resolve(small_scenario).config
    assert from_file.name == "two-flows"


# -- overrides ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        ("seed=3", ("seed", 3)),
        ("bottleneck.rate=50Mbit", ("bottleneck.rate", "50Mbit")),
        ("bottleneck.loss=0.01", ("bottleneck.loss", 0.01)),
        ("bottleneck.red.byte_mode=true", ("bottleneck.red.byte_mode", True)),
        ('flow.0.cc="reno"', ("flow.0.cc", "reno")),
        ("flow.1.rtt = 30ms", ("flow.1.rtt", "30ms")),
    ],
)
def test_parse_override_reads_toml_values_else_strings(item, expected):
    assert parse_override(item) == expected


def test_overrides_set_dotted_paths_with_list_indexes(small_scenario):
    overrides = [parse_override(s) for s in ("bottleneck.rate=50Mbit", "flow.1.rtt=30ms", "seed=3", "measure.from=2s")]
    cfg = resolve(small_scenario, overrides).config
    assert cfg["bottleneck"]["rate_bps"] == 50_000_000
    assert cfg["flows"][1]["rtt_ns"] == 30_000_000
    assert cfg["seed"] == 3
    assert cfg["measure_from_ns"] == 2_000_000_000


def test_overrides_accept_a_dict_and_leave_the_input_alone(small_scenario):
    before = copy.deepcopy(small_scenario)
    cfg = resolve(small_scenario, {"flow.0.cc": "reno", "bottleneck.buffer": "10pkt"}).config
    assert cfg["flows"][0]["cc"] == "reno"
    assert cfg["bottleneck"]["buffer_bytes"] == 15_140
    assert small_scenario == before


@pytest.mark.parametrize(
    ("override", "path", "fragment"),
    [
        (("flow.5.rtt", "1ms"), "flow.5", "index out of range"),
        (("flow.x.rtt", "1ms"), "flow.x", "expected an index"),
        (("seed.deep", 1), "seed.deep", "cannot set a key inside a value"),
        (("bottleneck..rate", 1), "bottleneck..rate", "malformed"),
    ],
)
def test_bad_override_paths(small_scenario, override, path, fragment):
    with pytest.raises(ScenarioError) as info:
        apply_overrides(small_scenario, [override])
    assert info.value.path == path
    assert fragment in info.value.problem


def test_override_without_equals_is_rejected():
    with pytest.raises(ScenarioError, match="expected key=value"):
        parse_override("seed")


# -- errors name the field -----------------------------------------------------


def _with(doc, path, value):
    return apply_overrides(doc, [(path, value)])


@pytest.mark.parametrize(
    ("path", "value", "error_path", "fragment"),
    [
        ("flow.0.cc", "foo", "flow[0].cc", "unknown congestion control 'foo' (known: bbr, cubic, reno)"),
        ("duration", "12 parsecs", "duration", "unknown time unit 'parsecs'"),
        ("duration", 120, "duration", "expected a time string"),
        ("duration", "-1s", "duration", "must be > 0"),
        ("bottleneck.rate", "fast", "bottleneck.rate", "malformed rate"),
        ("bottleneck.rate", "0Mbit", "bottleneck.rate", "must be > 0"),
        ("bottleneck.buffer", "-2MB", "bottleneck.buffer", "must be > 0"),
        ("bottleneck.buffer", "100B", "bottleneck.buffer", "less than one packet"),
        ("bottleneck.aqm", "codel", "bottleneck.aqm", "'droptail' or 'red'"),
        ("bottleneck.loss", 1.5, "bottleneck.loss", "less than 1"),
        ("bottleneck.loss", "1%", "bottleneck.loss", "valid number"),
        ("bottleneck.colour", "red", "bottleneck.colour", "unknown key"),
        ("wat", 1, "wat", "unknown key"),
        ("flow.1.count", 0, "flow[1].count", "greater than or equal to 1"),
        ("flow.1.start", "3s", "flow[1].start", "at or after the end of the run"),
        ("flow.1.stop", "0.2s", "flow[1].stop", "stops before it starts"),
        ("flow.0.params", {"alpha": "3ms"}, "flow[0].params.alpha", "unknown parameter for cc 'bbr'"),
        ("flow.0.params", {"cwnd_gain": -1}, "flow[0].params.cwnd_gain", "non-negative integer"),
        ("flow.0.params", {"cwnd_gain": 2.5}, "flow[0].params.cwnd_gain", "non-negative integer"),
        ("flow", [], "flow", "at least 1 item"),
        ("seed", -1, "seed", "greater than or equal to 0"),
        ("measure.from", "5s", "measure.from", "window is empty"),
        ("measure.to", "4s", "measure.to", "after the end of the run"),
        ("output.interval", "5s", "output.interval", "longer than the run"),
        ("bottleneck.aqm", "red", "bottleneck.red", "needs a [bottleneck.red] table"),
        ("bottleneck.red", {"min": "1MB", "max": "2MB", "max_p": 0.1}, "bottleneck.red", "aqm is \"droptail\""),
        ("bottleneck.schedule", [{"at": "9s", "rate": "1Mbit"}], "bottleneck.schedule[0].at", "after the end"),
    ],
)
def test_errors_name_the_field(small_scenario, path, value, error_path, fragment):
    with pytest.raises(ScenarioError) as info:
        resolve(_with(small_scenario, path, value))
    assert info.value.path == error_path
    assert fragment in info.value.problem
    assert "\n" not in str(info.value)


def test_missing_required_keys_are_named(small_scenario):
    doc = copy.deepcopy(small_scenario)
    del doc["bottleneck"]["rate"]
    with pytest.raises(ScenarioError) as info:
        resolve(doc)
    assert (info.value.path, info.value.problem) == ("bottleneck.rate", "required key is missing")


def test_red_thresholds_must_be_ordered(small_scenario):
    doc = _with(small_scenario, "bottleneck.aqm", "red")
    doc = _with(doc, "bottleneck.red", {"min": "90KB", "max": "30KB", "max_p": 0.1})
    with pytest.raises(ScenarioError) as info:
        resolve(doc)
    assert info.value.path == "bottleneck.red.max"


def test_schedule_must_be_in_time_order(small_scenario):
    doc = _with(small_scenario, "bottleneck.schedule", [{"at": "2s", "rate": "1Mbit"}, {"at": "1s", "rate": "2Mbit"}])
    with pytest.raises(ScenarioError) as info:
        resolve(doc)
    assert info.value.path == "bottleneck.schedule[1].at"


def test_params_fill_the_algorithms_table_with_defaults(small_scenario):
    from ccarena import _core

    table = _core.cc_params("bbr")
    names = [name for name, _ in table]
    assert "cwnd_gain" in names
    flows = resolve(_with(small_scenario, "flow.0.params", {"cwnd_gain": 3 * 256})).config["flows"]
    expected = [default for _, default in table]
    expected[names.index("cwnd_gain")] = 3 * 256
    assert flows[0]["params"] == expected
    assert flows[1]["params"] == []  # nothing set: the algorithm's defaults


def test_unknown_cc_is_checked_against_the_simulator_by_default(small_scenario):
    from ccarena import _core

    names = _core.cc_names()
    assert {"bbr", "cubic", "reno"} <= set(names)
    doc = _with(small_scenario, "flow.0.cc", "vegas-but-not-compiled")
    with pytest.raises(ScenarioError, match="unknown congestion control"):
        load_scenario(doc)
