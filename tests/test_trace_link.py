"""Trace-driven links (`bottleneck.trace`, mahimahi's format): a constant
trace is the link of its rate, the link never delivers more than the
trace's opportunities, paths are relative to the scenario file, and bad
traces are one-line errors (exit 2, nothing written). The engine's own
tests of the opportunity rule are in crates/sim/src/trace_link.rs."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from ccarena import link_trace, load_scenario, run
from ccarena.errors import ScenarioError
from conftest import run_cli

REPO = Path(__file__).resolve().parent.parent
TRACES = REPO / "examples" / "traces"


def scenario(bottleneck: dict, cc: str = "cubic", duration: str = "30s") -> dict:
    return {"duration": duration, "seed": 1, "measure": {"from": "10s"},
            "bottleneck": {"buffer": "150kB", **bottleneck}, "flow": [{"cc": cc, "rtt": "40ms"}]}


@pytest.mark.parametrize("cc", ["cubic", "bbr"])
def test_a_constant_trace_is_the_link_of_its_rate(cc):
    # One opportunity per ms carries one 1514-byte packet: 12.112 Mbit/s on the wire.
    traced = run(scenario({"trace": str(TRACES / "const-12mbit.trace")}, cc))
    fixed = run(scenario({"rate": "12.112Mbit"}, cc))
    a, b = traced.summary["goodput_total_mbps"], fixed.summary["goodput_total_mbps"]
    assert a == pytest.approx(b, rel=0.01), (a, b)  # the trace link's target: within 1%
    assert load_scenario(scenario({"trace": str(TRACES / "const-12mbit.trace")})).config["bottleneck"][
        "rate_bps"] == 12_112_000


def test_the_link_never_delivers_more_than_the_trace_offers(tmp_path):
    out = tmp_path / "run"
    proc = run_cli("run", REPO / "examples" / "trace-lte-bbr-vs-cubic.toml", "--set", "duration=30s",
                   "--set", "measure.from=5s", "--set", "output.interval=10ms", "--out", out)
    assert proc.returncode == 0, proc.stderr
    link = pq.read_table(out / "link.parquet").to_pydict()
    link = {k: np.asarray(v, dtype=float) for k, v in link.items()}
    dt = float(link["t_s"][1] - link["t_s"][0])
    sent = np.cumsum(link["tx_mbps"] * dt)
    offered = np.cumsum(link["rate_mbps"] * dt)
    # Cumulative megabits; one packet (0.0121 Mb) of slack for a delivery
    # exactly at a sampling instant.
    assert np.all(sent <= offered + 0.0122)
    # The trace's rate varies (outages included), and the flows use it.
    assert link["rate_mbps"].min() == 0.0 and link["rate_mbps"].max() > 30
    assert 0.9 < sent[-1] / offered[-1] <= 1.0


def test_a_relative_trace_is_relative_to_the_scenario_file(tmp_path):
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "x.trace").write_text("1\n1\n2\n")
    (tmp_path / "s.toml").write_text('duration = "5s"\n[bottleneck]\ntrace = "t/x.trace"\nbuffer = "1bdp"\n'
                                     '[[flow]]\ncc = "reno"\nrtt = "20ms"\n')
    resolved = load_scenario(tmp_path / "s.toml")
    trace = resolved.config["bottleneck"]["trace"]
    # Instants 1, 1, 2 ms as gaps 1, 0, 1 (LEB128, base64: crates/sim/src/trace_instants.rs).
    assert base64.b64decode(trace["gaps_ms"]) == bytes([1, 0, 1]) and trace["opportunities"] == 3
    assert trace["period_ns"] == 2_000_000
    assert resolved.human["bottleneck"]["trace"] == "t/x.trace"  # as written
    assert resolved.human["bottleneck"]["trace_mean_rate"] == "18168Kbit"


@pytest.mark.parametrize("text, problem", [
    ("1\nx\n", "line 2: 'x' is not a whole number of ms"),
    ("5\n3\n", "line 2: 3 ms is before the line above (5 ms)"),
    ("0\n0\n", "no opportunity after 0 ms"),
    ("", "no opportunity after 0 ms"),
    ("1\r\n\r\n2 3\r\n", "line 3: '2 3' is not a whole number of ms"),
    ("1\n" + "9" * 30 + "\n", "line 2: 999999999999999999999999999999 ms is beyond the engine's limit of 86400s"),
    ("1\n٣\n", "line 2: '٣' is not a whole number of ms"),
])
def test_a_bad_trace_is_a_one_line_error_naming_the_line(tmp_path, text, problem):
    path = tmp_path / "bad.trace"
    path.write_text(text)
    with pytest.raises(ScenarioError) as err:
        load_scenario(scenario({"trace": str(path)}))
    assert err.value.path == "bottleneck.trace" and problem in str(err.value)


def _trace_config(path):
    return load_scenario(scenario({"trace": str(path)})).config["bottleneck"]["trace"]


def test_a_trace_is_read_in_chunks_into_compact_gaps_with_the_digest_of_its_instants(tmp_path, monkeypatch):
    # Gaps of one, two and three LEB128 bytes, in chunks of 64 bytes (lines
    # cut at chunk edges); the digest is that of the instants in ns.
    instants = [1, 1, 2, 302, 302, 20_302, 20_303] + [20_303 + k // 3 for k in range(60)]
    path = tmp_path / "x.trace"
    path.write_text("".join(f"{ms}\n" for ms in instants))
    monkeypatch.setattr(link_trace, "CHUNK_BYTES", 64)
    trace = _trace_config(path)
    gaps = [1, 0, 1, 300, 0, 20_000, 1] + [int(k % 3 == 0 and k > 0) for k in range(60)]
    leb128 = b"".join(bytes([g]) if g < 128 else bytes([g & 0x7F | 0x80, g >> 7]) if g < 1 << 14
                      else bytes([g & 0x7F | 0x80, (g >> 7) & 0x7F | 0x80, g >> 14]) for g in gaps)
    assert base64.b64decode(trace["gaps_ms"]) == leb128
    assert trace["opportunities"] == len(instants) and trace["period_ns"] == instants[-1] * 1_000_000
    digest = hashlib.sha256(",".join(str(ms * 1_000_000) for ms in instants).encode()).hexdigest()
    assert trace["opportunities_sha256"] == digest
    # The same instants written otherwise: the same trace.
    path.write_text("0" + "\r\n\r\n  ".join(f"{ms}\t" for ms in instants))
    assert _trace_config(path) == trace
    # A bad line past the first chunks is still named by its number.
    path.write_text("".join(f"{ms}\n" for ms in instants) + "20000\n")
    with pytest.raises(ScenarioError) as err:
        _trace_config(path)
    assert f"line {len(instants) + 1}: 20000 ms is before the line above" in str(err.value)


def test_trace_with_rate_or_schedule_or_missing_file_exits_2_writing_nothing(tmp_path):
    good = str(TRACES / "const-12mbit.trace")
    for extra, field in (({"trace": good, "rate": "10Mbit"}, "bottleneck.rate"),
                         ({"trace": good, "schedule": [{"at": "1s", "rate": "5Mbit"}]}, "bottleneck.schedule"),
                         ({"trace": str(tmp_path / "nope.trace")}, "bottleneck.trace"),
                         ({}, "bottleneck.rate")):
        with pytest.raises(ScenarioError) as err:
            load_scenario(scenario(extra))
        assert err.value.path == field
    toml = tmp_path / "s.toml"
    toml.write_text(f'duration = "5s"\n[bottleneck]\ntrace = "{good}"\nrate = "1Mbit"\nbuffer = "1bdp"\n'
                    '[[flow]]\ncc = "reno"\nrtt = "20ms"\n')
    proc = run_cli("run", toml, "--out", tmp_path / "out")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "bottleneck.rate" in proc.stderr
    assert not (tmp_path / "out").exists()


def test_summary_records_the_trace_by_size_and_digest_not_every_instant(tmp_path):
    result = run(scenario({"trace": str(TRACES / "square-24-6mbit.trace")}, duration="12s"))
    recorded = result.summary["scenario"]["config"]["bottleneck"]["trace"]
    assert recorded["opportunities"] == 2500 and recorded["period_ns"] == 2_000_000_000
    assert len(recorded["opportunities_sha256"]) == 64
