"""Bad input never shows a traceback nor leaves a run directory: one line
`ccarena: error: <field>: <problem>` on stderr and exit status 2."""

from __future__ import annotations

import pytest

from conftest import run_cli

GOOD = """\
duration = "3s"
seed = 1
[bottleneck]
rate = "100Mbit"
buffer = "2MB"
[[flow]]
cc = "bbr"
rtt = "10ms"
"""

BAD = {
    "unknown-cc": (GOOD.replace('cc = "bbr"', 'cc = "foo"'), "flow[0].cc", "unknown congestion control 'foo'"),
    "malformed-duration": (GOOD.replace('"3s"', '"12 parsecs"'), "duration", "unknown time unit 'parsecs'"),
    "unitless-duration": (GOOD.replace('"3s"', "3"), "duration", "expected a time string"),
    "malformed-rate": (GOOD.replace('"100Mbit"', '"100 Mbit per fortnight"'), "bottleneck.rate", "malformed rate"),
    "zero-rate": (GOOD.replace('"100Mbit"', '"0Mbit"'), "bottleneck.rate", "must be > 0"),
    "negative-buffer": (GOOD.replace('"2MB"', '"-2MB"'), "bottleneck.buffer", "must be > 0"),
    "negative-duration": (GOOD.replace('"3s"', '"-3s"'), "duration", "must be > 0"),
    "unknown-key": (GOOD.replace("seed = 1", "seed = 1\ncolour = 'blue'"), "colour", "unknown key"),
    "unknown-nested-key": (GOOD.replace('rtt = "10ms"', 'rtt = "10ms"\nrwnd = "1MB"'), "flow[0].rwnd", "unknown key"),
    "empty-flow-list": ("flow = []\n" + GOOD.split("[[flow]]")[0], "flow", "at least 1 item"),
    "no-flows": (GOOD.split("[[flow]]")[0], "flow", "required key is missing"),
    "red-without-table": (GOOD.replace('buffer = "2MB"', 'buffer = "2MB"\naqm = "red"'), "bottleneck.red", "needs"),
    "measure-outside-run": (GOOD + '[measure]\nfrom = "1s"\nto = "10s"\n', "measure.to", "after the end of the run"),
    "unknown-param": (GOOD + 'params = { alpha = "3ms" }\n', "flow[0].params.alpha", "unknown parameter"),
    "toml-syntax": (GOOD.replace('seed = 1', 'seed = = 1'), "bad.toml", "TOML syntax error"),
}


def _check_one_line_error(proc, field, fragment):
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"ccarena: error: {field}: "), lines[0]
    assert fragment in lines[0]
    assert "Traceback" not in proc.stderr
    assert proc.stdout == ""


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_scenario_is_one_line_exit_2_and_no_run_dir(tmp_path, case):
    text, field, fragment = BAD[case]
    scenario = tmp_path / "bad.toml"
    scenario.write_text(text)
    out = tmp_path / "runs" / "out"
    proc = run_cli("run", "bad.toml", "--out", "runs/out", cwd=tmp_path)
    _check_one_line_error(proc, field, fragment)
    assert not out.exists()
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_missing_scenario_file(tmp_path):
    proc = run_cli("run", tmp_path / "nope.toml", "--out", tmp_path / "out")
    _check_one_line_error(proc, str(tmp_path / "nope.toml"), "no such scenario file")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("override", "field", "fragment"),
    [
        ("bottleneck.rate=lots", "bottleneck.rate", "malformed rate"),
        ("flow.3.rtt=30ms", "flow.3", "index out of range"),
        ("flow.0.cc=foo", "flow[0].cc", "unknown congestion control"),
        ("seed", "--set", "expected key=value"),
    ],
)
def test_bad_override_is_one_line_exit_2(tmp_path, override, field, fragment):
    scenario = tmp_path / "good.toml"
    scenario.write_text(GOOD)
    proc = run_cli("run", scenario, "--out", tmp_path / "out", "--set", override)
    _check_one_line_error(proc, field, fragment)
    assert not (tmp_path / "out").exists()


def test_out_that_is_a_file_is_refused_before_running(tmp_path):
    scenario = tmp_path / "good.toml"
    scenario.write_text(GOOD)
    out = tmp_path / "taken"
    out.write_text("not a directory")
    proc = run_cli("run", scenario, "--out", out)
    _check_one_line_error(proc, "--out", "not a directory")
    assert out.read_text() == "not a directory"


def test_usage_errors_are_one_line_too(tmp_path):
    proc = run_cli("run")
    assert proc.returncode == 2
    assert len(proc.stderr.splitlines()) == 1
    assert proc.stderr.startswith("ccarena: error: ")
    assert "Traceback" not in proc.stderr
