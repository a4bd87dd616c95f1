"""Bad input never shows a traceback nor leaves a run directory: one line
`ccarena: error: <field>: <problem>` on stderr and exit status 2."""

from __future__ import annotations

import subprocess
import sys

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


# --------------------------------------------------------------------------
# Input that once escaped the promise: each is still one line, exit 2, and
# nothing written (the run directory, and nothing beside it).


def _nothing_written(tmp_path, before):
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@pytest.mark.parametrize(
    ("override", "field", "fragment"),
    [
        ("flow.².rtt=5ms", "flow.²", "expected an index"),
        ("duration=99999999999999999999s", "duration", "above the engine's limit of 86400s"),
        ("duration=1" + "0" * 40 + "s", "duration", "above the engine's limit"),
        ("bottleneck.rate=20000000000Gbit", "bottleneck.rate", "above"),
        ("bottleneck.buffer=1" + "0" * 30 + "B", "bottleneck.buffer", "above"),
        ("flow.0.rtt=1" + "0" * 25 + "s", "flow[0].rtt", "above"),
        ("output.interval=1us", "output.interval", "telemetry rows"),  # with duration = 120s, below
        ("flow.0.stop=200s", "flow[0].stop", "after the end of the run"),
        ("flow.0.params.beta=1e30", "flow[0].params.beta", "unknown parameter"),
        ("flow.0.count=10001", "flow[0].count", "less than or equal to 10000"),
        ("flow.0.size=0.4B", "flow[0].size", "'0.4B' rounds to 0 bytes"),
        ("duration=10ms", "output.interval", "100ms (the default) is longer than the run's duration (10ms)"),
        ("flow.0.ecn=on", "flow[0].ecn", "expected true, false or one of \"off\", \"classic\", \"accecn\", got 'on'"),
        ("host=/dev/zero", "host", "'/dev/zero' is not a regular file"),
        ("flow.0.cc=a\nb", "flow[0].cc", "unknown congestion control 'a\\nb'"),
    ],
)
def test_values_beyond_what_the_engine_holds_are_one_line(tmp_path, override, field, fragment):
    scenario = tmp_path / "good.toml"
    scenario.write_text(GOOD.replace('"3s"', '"120s"'))  # the 120-s run: 240M rows at 1 us
    before = sorted(p.name for p in tmp_path.iterdir())
    proc = run_cli("run", scenario, "--out", tmp_path / "out", "--set", override)
    _check_one_line_error(proc, field, fragment)
    _nothing_written(tmp_path, before)


HUGE = "1" + "0" * 25  # past every u64 of the engine, as a number of any unit

WORKLOAD = GOOD + """
[[workload]]
cc = "cubic"
rtt = "10ms"
"""
LINK = """duration = "3s"
[[link]]
name = "a"
trace = "no-such.trace"
buffer = "50KB"
[[flow]]
cc = "bbr"
rtt = "10ms"
path = ["a"]
"""


@pytest.mark.parametrize(("text", "field", "fragment"), [
    # The engine was the first to refuse these, or Python crashed (exit 1).
    (WORKLOAD + 'size = "0.4B"\nload = 0.5\n', "workload[0].size", "rounds to 0 bytes"),
    (WORKLOAD + 'size = "1024GiB"\nload = 5e-324\n', "workload[0].load", "no flow would ever arrive"),
    (WORKLOAD + 'size = "10KB"\narrival_rate = 1' + "0" * 400 + "\n", "workload[0].arrival_rate",
     "above the engine's limit"),
    (GOOD.replace('buffer = "2MB"', 'buffer = "2MB"\naqm = "pie"\n[bottleneck.pie]\nbeta = inf'),
     "bottleneck.pie.beta", "inf is not a finite number"),
    (GOOD + '[host]\nack_delay_ns = [[0.0, 0], [nan, 5], [1.0, 9]]\n', "host.ack_delay_ns[1][0]", "greater than"),
    (GOOD + '[host]\nstalls_per_s = 1' + "0" * 400 + '\nstall_length_ns = [[0.0, 1], [1.0, 2]]\n',
     "host.stalls_per_s", "above the engine's limit"),
    (LINK, "link[0].trace", "cannot read 'no-such.trace'"),
])
def test_input_the_engine_refused_or_python_crashed_on(tmp_path, text, field, fragment):
    (tmp_path / "s.toml").write_text(text)
    before = sorted(p.name for p in tmp_path.iterdir())
    proc = run_cli("run", "s.toml", "--out", "out", cwd=tmp_path)
    _check_one_line_error(proc, field, fragment)
    _nothing_written(tmp_path, before)


def _huge_field(overrides):
    return next(o for o in overrides if HUGE in o or "4GiB" in o).split("=")[0]


@pytest.mark.parametrize(
    "overrides",
    [
        # Each once passed the front end and failed in the engine
        # ("config: invalid type ...", exit 1) after "running".
        ["bottleneck.aqm=fq_codel", "bottleneck.fq_codel.quantum=4GiB"],
        ["bottleneck.aqm=codel", f"bottleneck.codel.target={HUGE}s"],
        ["bottleneck.aqm=codel", f"bottleneck.codel.interval={HUGE}s"],
        ["bottleneck.aqm=fq_codel", f"bottleneck.fq_codel.target={HUGE}s"],
        ["bottleneck.aqm=fq_codel", f"bottleneck.fq_codel.interval={HUGE}ms"],
        ["bottleneck.aqm=pie", f"bottleneck.pie.target={HUGE}s"],
        ["bottleneck.aqm=pie", f"bottleneck.pie.burst={HUGE}s"],
        ["bottleneck.aqm=pie", f"bottleneck.pie.tupdate={HUGE}us"],
        [f"bottleneck.mark_threshold={HUGE}pkt"],
        [f"bottleneck.mark_threshold={HUGE}ms"],
        [f"bottleneck.mark_threshold={HUGE}B"],
        ["bottleneck.policer.rate=10Mbit", f"bottleneck.policer.burst={HUGE}B"],
        ["bottleneck.aqm=red", f"bottleneck.red.min={HUGE}B", "bottleneck.red.max=10pkt", "bottleneck.red.max_p=0.1"],
        ["bottleneck.aqm=red", "bottleneck.red.min=5pkt", f"bottleneck.red.max={HUGE}GB", "bottleneck.red.max_p=0.1"],
    ],
    ids=lambda overrides: _huge_field(overrides),
)
def test_huge_queue_discipline_values_are_refused_before_the_engine(tmp_path, overrides):
    scenario = tmp_path / "good.toml"
    scenario.write_text(GOOD)
    before = sorted(p.name for p in tmp_path.iterdir())
    sets = [arg for item in overrides for arg in ("--set", item)]
    proc = run_cli("run", scenario, "--out", tmp_path / "out", *sets)
    _check_one_line_error(proc, _huge_field(overrides), "above the engine's limit")
    assert "running" not in proc.stdout
    _nothing_written(tmp_path, before)


@pytest.mark.parametrize(
    ("out", "fragment"),
    [
        ("", "names no new directory"),
        (".", "names no new directory"),
        ("..", "names no new directory"),
        ("/proc/ccarena-test", "cannot create"),
        ("afile/x", "is not a directory"),
    ],
)
def test_out_that_cannot_be_a_run_dir_is_refused_before_running(tmp_path, out, fragment):
    scenario = tmp_path / "good.toml"
    scenario.write_text(GOOD)
    (tmp_path / "afile").write_text("mine")
    before = sorted(p.name for p in tmp_path.iterdir())
    proc = run_cli("run", "good.toml", "--out", out, cwd=tmp_path)
    _check_one_line_error(proc, "--out", fragment)
    assert "running" not in proc.stderr  # refused before simulating
    _nothing_written(tmp_path, before)
    assert (tmp_path / "afile").read_text() == "mine"


def test_a_scenario_whose_name_cannot_name_a_directory(tmp_path):
    (tmp_path / "..toml").write_text(GOOD)
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "keep.txt").write_text("mine")
    proc = run_cli("run", "..toml", cwd=tmp_path)
    _check_one_line_error(proc, "--out", "cannot name a run directory")
    assert (tmp_path / "runs" / "keep.txt").read_text() == "mine"


@pytest.mark.parametrize(
    ("source", "fragment"),
    [
        ("/dev/zero", "is not a regular file"),
        (".", "is a directory"),
        ("afile/s.toml", "a part of the path is not a directory"),
        ("binary.toml", "not UTF-8 text"),
        ("huge.toml", "not a scenario file"),
    ],
)
def test_scenario_sources_that_are_not_scenario_files(tmp_path, source, fragment):
    (tmp_path / "afile").write_text("mine")
    (tmp_path / "binary.toml").write_bytes(b"\xff\xfe\x00duration")
    with open(tmp_path / "huge.toml", "wb") as handle:
        handle.truncate(2 << 20)
    proc = run_cli("run", source, "--out", "out", cwd=tmp_path)
    _check_one_line_error(proc, source, fragment)
    assert not (tmp_path / "out").exists()


def test_engine_crash_is_an_internal_error_with_a_bug_line(tmp_path):
    """A panic in the Rust engine is not a traceback: one line asking for a
    bug report, exit status 1 (the test-only crash hook of _core)."""
    code = (
        "import sys; from unittest import mock; from ccarena import cli, _core\n"
        "with mock.patch('ccarena.api.simulate', side_effect=lambda s, **_: _core._crash_for_test()):\n"
        "    sys.exit(cli.main(['run', sys.argv[1], '--out', sys.argv[2]]))\n"
    )
    scenario = tmp_path / "good.toml"
    scenario.write_text(GOOD)
    proc = subprocess.run([sys.executable, "-c", code, str(scenario), str(tmp_path / "out")], capture_output=True,
                          text=True, timeout=300, check=False)
    assert proc.returncode == 1, proc.stderr
    last = proc.stderr.splitlines()[-1]
    assert last.startswith("ccarena: error: internal: the simulator crashed:"), proc.stderr
    assert "please report it" in last
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists()


def test_a_byte_order_mark_is_not_part_of_the_scenario(tmp_path):
    """Some editors begin UTF-8 files with a byte-order mark; TOML has no
    place for it, so it is not read as text."""
    import ccarena

    (tmp_path / "bom.toml").write_bytes(b"\xef\xbb\xbf" + GOOD.encode())
    assert ccarena.load_scenario(tmp_path / "bom.toml").config == ccarena.load_scenario(GOOD).config


@pytest.mark.parametrize("argv, field", [
    (("kernel", "load", "bb\nq"), "kernel NAME"),
    (("kernel", "unload", "cc_bbq\r"), "kernel NAME"),
    (("kernel", "load", "bbq", "--param", "alpha=3\nms"), "kernel --param"),
])
def test_kernel_names_and_params_with_control_characters_are_refused_on_one_line(argv, field):
    """Before anything is built or registered (root or not): the front end
    gates the kernel commands' NAME and --param as it gates a scenario."""
    proc = run_cli(*argv)
    _check_one_line_error(proc, field, "holds a control character")
    assert "\\" in proc.stderr  # the character shown as its escape
