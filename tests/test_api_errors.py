"""The Python API raises ScenarioError for any bad input — never TypeError,
AttributeError, FileNotFoundError or decimal.InvalidOperation — and a
path with '=' in it is still a path."""

from __future__ import annotations

import pytest

import ccarena

GOOD = {"duration": "1s", "bottleneck": {"rate": "10Mbit", "buffer": "50pkt"}, "flow": [{"cc": "cubic", "rtt": "20ms"}]}


@pytest.mark.parametrize(
    ("scenario", "path"),
    [
        (123, "scenario"),
        (None, "scenario"),
        (b"duration = '1s'", "scenario"),
        (["a"], "scenario"),
        ({1: 2}, "scenario"),
        ("no-such-file.toml", "no-such-file.toml"),
        ({**GOOD, "flow": "x"}, "flow"),
        ({**GOOD, "flow": [5]}, "flow[0]"),
        ({**GOOD, "duration": "1" + "0" * 40 + "s"}, "duration"),  # once decimal.InvalidOperation
        ({**GOOD, "seed": 1.5}, "seed"),
        ({**GOOD, "flow": [{"cc": "cubic", "rtt": "20ms", "params": 5}]}, "flow[0].params"),
        ({**GOOD, "flow": [{"cc": "cubic", "rtt": "20ms", "params": {"beta": 1e30}}]}, "flow[0].params.beta"),
    ],
)
def test_bad_scenarios_raise_scenario_error(scenario, path):
    with pytest.raises(ccarena.ScenarioError) as info:
        ccarena.run(scenario)
    assert info.value.path == path


@pytest.mark.parametrize(
    ("overrides", "path"),
    [
        (5, "overrides"),
        ("duration=2s", "overrides"),
        ({1: 2}, "overrides"),
        ([("a",)], "overrides"),
        ({"flow.².rtt": "5ms"}, "flow.²"),
        ({"bottleneck.rate": "20000000000Gbit"}, "bottleneck.rate"),
    ],
)
def test_bad_overrides_raise_scenario_error(overrides, path):
    with pytest.raises(ccarena.ScenarioError) as info:
        ccarena.run(GOOD, overrides=overrides)
    assert info.value.path == path


def test_a_path_with_an_equals_sign_is_a_path(tmp_path):
    folder = tmp_path / "seed=1"
    folder.mkdir()
    (folder / "s.toml").write_text('duration = "1s"\n[bottleneck]\nrate = "10Mbit"\nbuffer = "50pkt"\n'
                                   '[[flow]]\ncc = "cubic"\nrtt = "20ms"\n')
    scenario = ccarena.load_scenario(str(folder / "s.toml"))
    assert scenario.name == "s"
    with pytest.raises(ccarena.ScenarioError, match="no such scenario file"):
        ccarena.load_scenario(str(folder / "missing.toml"))


def test_ten_thousand_flows_plot_one_line_per_flow_entry(tmp_path):
    """A 10,000-flow run writes its plot in seconds: one goodput line (mean
    and band) per [[flow]] entry, not 10,000 lines and legend entries."""
    from ccarena.plots import _line_groups

    doc = {"duration": "200ms", "bottleneck": {"rate": "1Gbit", "buffer": "1bdp"},
           "flow": [{"cc": "cubic", "rtt": "20ms", "count": 9_999}, {"cc": "bbr", "rtt": "40ms"}]}
    result = ccarena.run(doc, out=tmp_path / "many")
    groups = _line_groups(result)
    assert [len(flows) for _, flows in groups] == [9_999, 1]
    assert (tmp_path / "many" / "goodput.png").is_file()
