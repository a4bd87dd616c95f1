"""Scenario validation and resolution into SimConfig (scenario.py)."""

from __future__ import annotations

import copy

import pytest

import ccarena
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
        {"cc": "bbr", "rtt_ns": 10_000_000, "start_ns": 0, "stop_ns": None, "params": [], "rtt_schedule": []},
        {
            "cc": "cubic",
            "rtt_ns": 50_000_000,
            "start_ns": 500_000_000,
            "stop_ns": None,
            "params": [],
            "rtt_schedule": [],
        },
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
        ("bottleneck.aqm", "cake", "bottleneck.aqm", "'droptail', 'red', 'fq', 'codel', 'fq_codel' or 'pie'"),
        ("bottleneck.loss", 1.5, "bottleneck.loss", "less than 1"),
        ("bottleneck.loss", "1%", "bottleneck.loss", "valid number"),
        ("bottleneck.colour", "red", "bottleneck.colour", "unknown key"),
        ("wat", 1, "wat", "unknown key"),
        ("flow.1.count", 0, "flow[1].count", "greater than or equal to 1"),
        ("flow.1.start", "3s", "flow[1].start", "at or after the end of the run"),
        ("flow.1.stop", "0.2s", "flow[1].stop", "stops before it starts"),
        ("flow.0.params", {"alpha": "3ms"}, "flow[0].params.alpha", "unknown parameter for cc 'bbr'"),
        ("flow.0.params", {"cwnd_gain": -1}, "flow[0].params.cwnd_gain", "must be >= 0"),
        ("flow.0.params", {"cwnd_min_target": 2.5}, "flow[0].params.cwnd_min_target", "non-negative integer"),
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
    assert info.value.path == "bottleneck.rate" and info.value.problem.startswith("required key is missing")


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
    assert "cwnd_gain_ppm" in names
    flows = resolve(_with(small_scenario, "flow.0.params", {"cwnd_gain": 3})).config["flows"]
    expected = [default for _, default in table]
    expected[names.index("cwnd_gain_ppm")] = 3_000_000
    assert flows[0]["params"] == expected
    assert flows[1]["params"] == []  # nothing set: the algorithm's defaults


def test_unknown_cc_is_checked_against_the_simulator_by_default(small_scenario):
    from ccarena import _core

    names = _core.cc_names()
    assert {"bbr", "cubic", "reno"} <= set(names)
    doc = _with(small_scenario, "flow.0.cc", "vegas-but-not-compiled")
    with pytest.raises(ScenarioError, match="unknown congestion control"):
        load_scenario(doc)


# -- per-algorithm parameters with units ------------------------------------

BBQ = ("bbq", "bbr", "cubic", "reno")


def bbq_doc(small_scenario, **params):
    doc = _with(small_scenario, "flow.0.cc", "bbq")
    return _with(doc, "flow.0.params", params)


def bbq_params(small_scenario, **params):
    """{C table name: value} of flow 0's resolved parameter vector."""
    from ccarena import _core

    names = [name for name, _ in _core.cc_params("bbq")]
    values = load_scenario(bbq_doc(small_scenario, **params), known_ccs=BBQ).config["flows"][0]["params"]
    return dict(zip(names, values, strict=True))


def test_every_table_name_follows_the_unit_convention():
    # _us: a time in us, _ppm: a ratio in ppm, else a plain count. The
    # scenario key drops the suffix, so no two names may share a key.
    from ccarena import _core
    from ccarena.scenario import param_specs

    for cc in _core.cc_names():
        specs = param_specs(cc)
        assert len({s.key for s in specs}) == len(specs), cc
        for spec in specs:
            assert not spec.key.endswith(("_us", "_ppm", "_ms", "_sec", "_percent")), (cc, spec.name)
    kinds = {s.key: s.kind for s in param_specs("bbq")}
    assert (kinds["alpha"], kinds["beta"], kinds["first_cut"]) == ("time", "fraction", "integer")
    assert (kinds["cwnd_gain"], kinds["probe_rtt_mode"], kinds["cwnd_min_target"]) == ("fraction", "time", "integer")


def test_bbq_defaults_are_the_papers_alpha_and_a_one_percent_beta():
    from ccarena.scenario import param_specs

    defaults = {s.key: s.human(s.default) for s in param_specs("bbq")}
    assert defaults["alpha"] == "3ms"
    assert 0.005 <= defaults["beta"] <= 0.01  # the paper's recommended range
    assert defaults["first_cut"] == 0


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"alpha": "3ms"}, {"alpha_us": 3000}),
        ({"alpha": "2.5ms"}, {"alpha_us": 2500}),
        ({"alpha": "750us"}, {"alpha_us": 750}),
        ({"alpha": "0s"}, {"alpha_us": 0}),
        ({"beta": 0.01}, {"beta_ppm": 10_000}),
        ({"beta": "0.5%"}, {"beta_ppm": 5000}),
        ({"beta": "1 %"}, {"beta_ppm": 10_000}),
        ({"beta": 0}, {"beta_ppm": 0}),
        ({"first_cut": 1}, {"first_cut": 1}),
        # BBR's own rows: gains as plain ratios, times as time strings.
        ({"cwnd_gain": 2.5, "probe_rtt_mode": "100ms"}, {"cwnd_gain_ppm": 2_500_000, "probe_rtt_mode_us": 100_000}),
        ({"high_gain": "200%"}, {"high_gain_ppm": 2_000_000}),
    ],
)
def test_params_are_converted_to_the_tables_units(small_scenario, params, expected):
    got = bbq_params(small_scenario, **params)
    for name, value in expected.items():
        assert got[name] == value
    # Everything not given keeps its default.
    assert got["min_rtt_win_us"] == 10_000_000
    assert got["pacing_margin_ppm"] == 10_000


@pytest.mark.parametrize(
    ("params", "key", "fragment"),
    [
        ({"alpha": 3}, "alpha", "expected a time string"),
        ({"alpha": "3"}, "alpha", "malformed time"),
        ({"alpha": "3.5us"}, "alpha", "whole number of microseconds"),
        ({"alpha": "-1ms"}, "alpha", "must be >= 0"),
        ({"beta": "1"}, "beta", "malformed fraction"),
        ({"beta": "1 percent"}, "beta", "malformed fraction"),
        ({"beta": -0.01}, "beta", "must be >= 0"),
        ({"beta": "-1%"}, "beta", "must be >= 0"),
        ({"beta": True}, "beta", "expected a number"),
        ({"beta": 1e-9}, "beta", "below the 1 ppm"),
        ({"beta": float("nan")}, "beta", "finite"),
        ({"first_cut": 1.5}, "first_cut", "non-negative integer"),
        ({"first_cut": -1}, "first_cut", "non-negative integer"),
        ({"first_cut": True}, "first_cut", "non-negative integer"),
        ({"first_cut": 1 << 64}, "first_cut", "too large"),
        ({"gamma": 1}, "gamma", "unknown parameter for cc 'bbq' (known: high_gain, "),
        ({"alpha_us": 3000}, "alpha_us", "did you mean 'alpha'?"),
    ],
)
def test_param_errors_name_the_field(small_scenario, params, key, fragment):
    with pytest.raises(ScenarioError) as info:
        load_scenario(bbq_doc(small_scenario, **params), known_ccs=BBQ)
    assert info.value.path == f"flow[0].params.{key}"
    assert fragment in info.value.problem
    assert "\n" not in str(info.value)


def test_summary_shows_params_in_human_units(small_scenario):
    human = load_scenario(bbq_doc(small_scenario, alpha="3000us", beta="1%", first_cut=1), known_ccs=BBQ).human
    assert human["flow"][0]["params"] == {"alpha": "3ms", "beta": 0.01, "first_cut": 1}
    assert human["flow"][1]["params"] == {}


def test_params_from_toml_and_overrides(small_scenario):
    text = """
duration = "3s"
[bottleneck]
rate = "100Mbit"
buffer = "2MB"
[[flow]]
cc = "bbq"
rtt = "10ms"
params = { alpha = "3ms", beta = 0.01 }
"""
    scenario = load_scenario(text, {"flow.0.params.beta": "0.5%"}, known_ccs=BBQ)
    assert scenario.human["flow"][0]["params"] == {"alpha": "3ms", "beta": 0.005}
    # --set reads "0.5%" as a string and 0.005 as a float: the same value.
    again = load_scenario(text, [parse_override("flow.0.params.beta=0.005")], known_ccs=BBQ)
    assert again.config == scenario.config


# -- rtt_schedule ---------------------------------------------------------------


def test_rtt_schedule_resolves_to_ns_and_is_copied_by_count(small_scenario):
    doc = _with(small_scenario, "flow.0.rtt_schedule", [{"at": "1s", "rtt": "20ms"}, {"at": "2.5s", "rtt": "5ms"}])
    doc = _with(doc, "flow.0.count", 2)
    scenario = resolve(doc)
    flows = scenario.config["flows"]
    want = [{"at_ns": 1_000_000_000, "rtt_ns": 20_000_000}, {"at_ns": 2_500_000_000, "rtt_ns": 5_000_000}]
    assert flows[0]["rtt_schedule"] == flows[1]["rtt_schedule"] == want
    assert flows[2]["rtt_schedule"] == []
    assert flows[0]["rtt_ns"] == 10_000_000  # the initial RTT is still `rtt`
    assert scenario.human["flow"][0]["rtt_schedule"] == [{"at": "1s", "rtt": "20ms"}, {"at": "2.5s", "rtt": "5ms"}]


def test_rtt_schedule_as_toml_array_of_tables():
    text = """
duration = "30s"
[bottleneck]
rate = "100Mbit"
buffer = "2MB"
[[flow]]
cc = "bbr"
rtt = "5ms"
[[flow.rtt_schedule]]
at = "10s"
rtt = "10ms"
[[flow.rtt_schedule]]
at = "20s"
rtt = "20ms"
[[flow]]
cc = "bbr"
rtt = "5ms"
rtt_schedule = [{ at = "15s", rtt = "40ms" }]
"""
    flows = load_scenario(text, known_ccs=CCS).config["flows"]
    assert [c["rtt_ns"] for c in flows[0]["rtt_schedule"]] == [10_000_000, 20_000_000]
    assert flows[1]["rtt_schedule"] == [{"at_ns": 15_000_000_000, "rtt_ns": 40_000_000}]


@pytest.mark.parametrize(
    ("schedule", "error_path", "fragment"),
    [
        ([{"at": "2s", "rtt": "1ms"}, {"at": "1s", "rtt": "2ms"}], "flow[0].rtt_schedule[1].at", "increasing time order"),
        ([{"at": "1s", "rtt": "1ms"}, {"at": "1s", "rtt": "2ms"}], "flow[0].rtt_schedule[1].at", "increasing time order"),
        ([{"at": "3s", "rtt": "1ms"}], "flow[0].rtt_schedule[0].at", "at or after the end of the run"),
        ([{"at": "1s", "rtt": "0ms"}], "flow[0].rtt_schedule[0].rtt", "must be > 0"),
        ([{"at": "-1s", "rtt": "5ms"}], "flow[0].rtt_schedule[0].at", "must be >= 0"),
        ([{"at": "1s", "rtt": 5}], "flow[0].rtt_schedule[0].rtt", "expected a time string"),
        ([{"at": "1s"}], "flow[0].rtt_schedule[0].rtt", "required key is missing"),
        ([{"at": "1s", "rtt": "5ms", "jitter": "1ms"}], "flow[0].rtt_schedule[0].jitter", "unknown key"),
        ({"at": "1s", "rtt": "5ms"}, "flow[0].rtt_schedule", "expected an array"),
    ],
)
def test_rtt_schedule_errors_name_the_field(small_scenario, schedule, error_path, fragment):
    with pytest.raises(ScenarioError) as info:
        resolve(_with(small_scenario, "flow.0.rtt_schedule", schedule))
    assert info.value.path == error_path
    assert fragment in info.value.problem


# -- fair queueing and the policer ----------------------------------------------


def test_fq_and_policer_resolve_to_wire_bytes_and_bit_per_second(small_scenario):
    doc = _with(small_scenario, "bottleneck.aqm", "fq")
    doc = _with(doc, "bottleneck.policer", {"rate": "50Mbit", "burst": "64KB"})
    resolved = resolve(doc)
    bn = resolved.config["bottleneck"]
    # The quantum defaults to one full packet on the wire.
    assert bn["fq"] == {"quantum_bytes": 1514}
    assert bn["policer"] == {"rate_bps": 50_000_000, "burst_bytes": 64_000}
    human = resolved.human["bottleneck"]
    assert human["fq"] == {"quantum": "1514B", "quantum_bytes": 1514}
    assert human["policer"] == {"rate": "50Mbit", "burst": "64KB", "burst_bytes": 64_000}
    doc = _with(doc, "bottleneck.fq", {"quantum": "2pkt"})
    assert resolve(doc).config["bottleneck"]["fq"] == {"quantum_bytes": 2 * 1514}


def test_scenarios_without_fq_or_policer_keep_their_config(small_scenario):
    # The keys appear only when used: older scenarios resolve (and their
    # summary.json reads) exactly as before.
    bn = resolve(small_scenario).config["bottleneck"]
    assert "fq" not in bn and "policer" not in bn


@pytest.mark.parametrize(
    ("path", "value", "error_path", "fragment"),
    [
        ("bottleneck.policer", {"rate": "0Mbit", "burst": "64KB"}, "bottleneck.policer.rate", "must be > 0"),
        ("bottleneck.policer", {"rate": "fast", "burst": "64KB"}, "bottleneck.policer.rate", "malformed rate"),
        ("bottleneck.policer", {"rate": "50Mbit", "burst": "0B"}, "bottleneck.policer.burst", "must be > 0"),
        ("bottleneck.policer", {"rate": "50Mbit", "burst": "1000B"}, "bottleneck.policer.burst",
         "less than one packet"),
        ("bottleneck.policer", {"rate": "50Mbit"}, "bottleneck.policer.burst", "required key is missing"),
        ("bottleneck.policer", {"rate": "50Mbit", "burst": "64KB", "peak": "1Gbit"}, "bottleneck.policer.peak",
         "unknown key"),
        ("bottleneck.policer", "50Mbit", "bottleneck.policer", "expected a table"),
        ("bottleneck.fq", {"quantum": "1514B"}, "bottleneck.fq", "aqm is \"droptail\" (set aqm = \"fq\")"),
    ],
)
def test_policer_and_fq_errors_name_the_field(small_scenario, path, value, error_path, fragment):
    with pytest.raises(ScenarioError) as info:
        resolve(_with(small_scenario, path, value))
    assert info.value.path == error_path
    assert fragment in info.value.problem


@pytest.mark.parametrize(
    ("quantum", "fragment"),
    [
        ("0B", "must be > 0"),
        ("100B", "'100B' is below the engine's limit of 256B"),
        ("2MiB", "'2MiB' is above the engine's limit of 1MiB"),
        (1514, "expected a size string"),
    ],
)
def test_fq_quantum_is_a_size_within_fq_codels_bounds(small_scenario, quantum, fragment):
    doc = _with(_with(small_scenario, "bottleneck.aqm", "fq"), "bottleneck.fq", {"quantum": quantum})
    with pytest.raises(ScenarioError) as info:
        resolve(doc)
    assert info.value.path == "bottleneck.fq.quantum"
    assert fragment in info.value.problem


def test_a_sized_flow_completes_and_reports_its_completion_time():
    """`size`: the application's bytes; the flow is done when the receiver
    has them all (docs/scenario-format.md, "Sized flows"). Alone on
    100 Mbit/s, 20 ms, a 10 MB CUBIC transfer took 0.91 s."""
    doc = {"duration": "3s", "bottleneck": {"rate": "100Mbit", "buffer": "2BDP"},
           "flow": [{"cc": "cubic", "rtt": "20ms", "size": "10MB"}, {"cc": "bbr", "rtt": "20ms", "start": "2s"}]}
    r = ccarena.run(doc)
    sized, bulk = r.summary["flows"]
    assert sized["size_bytes"] == 10_000_000 and 0.5 * 1e3 < sized["fct_ms"] < 2 * 1e3
    # Alone from the start, it finishes as fast: slowdown 1 (the BBR flow starts after it is done).
    assert sized["fct_alone_ms"] == sized["fct_ms"] and sized["slowdown"] == 1.0
    assert "size_bytes" not in bulk and "fct_ms" not in bulk
    assert "completion" in r.table() and "(10MB, 1.00x alone)" in r.table()
    # Too short a run: not done, null.
    short = ccarena.run({**doc, "duration": "0.2s", "flow": doc["flow"][:1]})
    assert short.summary["flows"][0]["fct_ms"] is None and "not done" in short.table()


@pytest.mark.parametrize("size, problem", [
    ("2BDP", "give the application's bytes"),
    ("100pkt", "give the application's bytes"),
    ("0MB", "must be > 0"),
    ("2000GB", "above the engine's limit"),
])
def test_a_bad_flow_size_is_one_line_naming_the_field(size, problem):
    doc = {"duration": "3s", "bottleneck": {"rate": "100Mbit", "buffer": "2BDP"},
           "flow": [{"cc": "cubic", "rtt": "20ms", "size": size}]}
    with pytest.raises(ccarena.ScenarioError, match=r"^flow\[0\]\.size: .*" + problem):
        ccarena.load_scenario(doc)


def test_the_live_engine_refuses_a_topology_on_the_kernel_bottleneck_before_the_run(tmp_path):
    from conftest import EXAMPLES, run_cli

    done = run_cli("live", "run", EXAMPLES / "parking-lot.toml", "--bottleneck", "kernel", "--out", tmp_path / "x")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "ccarena: error: --bottleneck: the kernel bottleneck (TBF + bfifo) cannot do [[link]] tables (a topology) "
        "here (one link, no sch_red, no netem); use --bottleneck userspace"]
    assert not (tmp_path / "x").exists()
