"""Progress on long work (ccarena/progress.py): one tqdm bar on stderr at
a terminal, plain lines (or nothing) otherwise; the engine reports its
simulated time without changing the run; Ctrl-C still stops a run that
shows a bar; the live engine's bar is driven by a clock a test can turn.

A terminal is faked with a stream whose isatty() is True, or a real
pseudo-terminal for the command itself."""

from __future__ import annotations

import io
import json
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

import ccarena
from ccarena import progress
from ccarena.api import simulate
from ccarena.scenario import load_scenario
from conftest import EXAMPLES, run_cli

#: Seconds to wait for anything observable; far above what a busy host needs.
PATIENCE_S = 120


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _short(duration: str = "3s", rate: str = "100Mbit") -> ccarena.ResolvedScenario:
    return load_scenario({"duration": duration, "bottleneck": {"rate": rate, "buffer": "1bdp"},
                          "flow": [{"cc": "bbr", "rtt": "10ms"}, {"cc": "cubic", "rtt": "40ms"}]})


def test_counted_work_draws_a_bar_with_what_and_total_at_a_terminal():
    term = FakeTerminal()
    with progress.Progress(8, what="scorecard rtt", unit="run", log=True, stream=term) as bar:
        bar.skip(2)
        bar.advance("flow.0.cc=bbr seed=1")
        bar.set_what("scorecard cubic")
        bar.advance("flow.0.cc=cubic seed=1")
    out = term.getvalue()
    assert "scorecard rtt" in out and "scorecard cubic" in out
    assert "4/8" in out and "flow.0.cc=cubic seed=1" in out
    assert "ccarena: [" not in out  # a bar, not log lines


def test_not_at_a_terminal_counted_work_logs_sparse_lines_and_continuous_work_nothing():
    log = io.StringIO()
    with progress.Progress(20, what="sweep s", unit="pt", log=True, stream=log) as bar:
        for i in range(20):
            bar.advance(f"seed={i}")
    lines = log.getvalue().splitlines()
    # Every tenth of the way (2 points), with the total and what it is.
    assert len(lines) == 10
    assert lines[0].startswith("ccarena: [ 2/20] sweep s: seed=1  elapsed")
    assert lines[-1].startswith("ccarena: [20/20] sweep s: seed=19")
    quiet = io.StringIO()
    with progress.seconds(60, "simulating", stream=quiet) as bar:
        bar.update_to(30)
        assert progress.simulated_time_hook(bar) is None  # the engine is not even called back
    assert quiet.getvalue() == ""


def test_the_engine_reports_simulated_time_and_the_run_is_the_same():
    # Long enough to outlast the engine's first visit to Python (at most
    # every 50 ms of wall time: crates/py's PYTHON_POLL_INTERVAL).
    scenario = _short("10s", "1Gbit")
    seen: list[int] = []
    with_hook = simulate(scenario, series=False, progress=seen.append)
    without = simulate(scenario, series=False)
    assert json.dumps(with_hook, sort_keys=True) == json.dumps(without, sort_keys=True)
    assert seen and seen == sorted(seen) and 0 < seen[-1] <= scenario.config["duration_ns"]


def test_a_bar_of_simulated_seconds_follows_the_engine():
    scenario = _short("10s", "1Gbit")
    term = FakeTerminal()
    bar = progress.Progress(10.0, what="simulating", unit="s", stream=term, bar_format=progress._SECONDS_FORMAT)
    hook = progress.simulated_time_hook(bar)
    assert hook is not None
    simulate(scenario, series=False, progress=hook)
    # Moved by the engine's visits (every 50 ms of wall time at most), the
    # last of them before the end.
    assert 0.0 < bar.done <= 10.0
    bar.close()
    assert "simulating:" in term.getvalue() and "x real time" in term.getvalue()


def test_an_exception_in_the_progress_callback_stops_the_engine_at_once():
    calls = []

    def stop(now_ns: int) -> None:
        calls.append(now_ns)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        simulate(_short("600s", "10Gbit"), series=False, progress=stop)
    assert len(calls) == 1


@pytest.mark.parametrize(
    ("simulated_s", "wall_s", "text"),
    [(120, 0.25, "480x real time"), (60, 24, "2.5x real time"), (10, 32, "0.31x real time"),
     (1, 1000, "0.001x real time"), (0, 1, "speed n/a")],
)
def test_speed_is_readable_and_never_0x(simulated_s, wall_s, text):
    assert progress.speed(simulated_s, wall_s) == text


def test_the_wall_clock_ticker_moves_the_bar_while_something_else_blocks():
    term = FakeTerminal()
    now = [100.0]
    bar = progress.seconds(6.0, "measuring this host", stream=term)
    with progress.WallClockTicker(bar, start=100.0, tick_s=0.001, clock=lambda: now[0]) as ticker:
        now[0] = 103.0
        deadline = time.monotonic() + PATIENCE_S
        while bar.done < 3.0 and time.monotonic() < deadline:
            time.sleep(0.001)
        now[0] = 200.0  # past the end: the bar stops at its total
        while bar.done < 6.0 and time.monotonic() < deadline:
            time.sleep(0.001)
    assert bar.done == 6.0 and not ticker.thread.is_alive()
    bar.close()
    # Not at a terminal: no thread at all.
    quiet = progress.seconds(6.0, "live traffic", stream=io.StringIO())
    with progress.WallClockTicker(quiet, start=0.0) as ticker:
        pass
    assert ticker.thread.ident is None


def test_the_first_live_run_says_it_measures_the_host_and_counts_that_traffic(monkeypatch, tmp_path):
    """Without the testbed: what host_capacity does when nothing is cached."""
    from ccarena.live import capacity, engine

    monkeypatch.delenv(capacity.ENV, raising=False)
    monkeypatch.setattr(capacity, "cached", lambda binary: None)
    monkeypatch.setattr(capacity, "store", lambda binary, summary: {"goodput_mbps": 1234.0})
    executed = []
    monkeypatch.setattr(engine, "_execute", lambda scenario, mode, binary, what="live traffic":
                        executed.append((scenario.config["duration_ns"], what)) or type("R", (), {"summary": {}})())
    lines: list[str] = []
    record = engine.host_capacity(tmp_path / "delayline", lines.append)
    assert record == {"goodput_mbps": 1234.0}
    assert len(lines) == 1 and lines[0].startswith("ccarena: measuring what this host carries")
    assert executed == [(6_000_000_000, "measuring this host")]


def test_run_prints_no_bar_when_stderr_is_not_a_terminal(tmp_path):
    proc = run_cli("run", EXAMPLES / "bbr-rtt-unfairness.toml", "--set", "duration=3s", "--set", "measure.from=1s",
                   "--out", tmp_path / "o")
    assert proc.returncode == 0, proc.stderr
    assert "\r" not in proc.stderr and "simulating" not in proc.stderr
    assert len(proc.stderr.splitlines()) == 2  # "running ..." and "done in ..."


def _read_until(fd: int, pattern: str, deadline: float) -> str:
    seen = ""
    while not re.search(pattern, seen):
        left = deadline - time.monotonic()
        if left <= 0:
            pytest.fail(f"timed out waiting for {pattern!r}; got {seen[-500:]!r}")
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # the other end closed
                break
            if not chunk:
                break
            seen += chunk.decode(errors="replace")
    return seen


def test_at_a_terminal_a_long_run_shows_its_bar_and_ctrl_c_still_stops_it(tmp_path):
    """`ccarena run` of 10 minutes at 10 Gbit/s in a pseudo-terminal: the
    bar appears (after its one-second delay) with simulated seconds, and
    SIGINT then ends the command at once with the usual line."""
    (tmp_path / "s.toml").write_text('duration = "600s"\n[bottleneck]\nrate = "10Gbit"\nbuffer = "1bdp"\n'
                                     '[[flow]]\ncc = "bbr"\nrtt = "10ms"\n')
    master, slave = pty.openpty()
    # A window size, as a terminal has: tqdm fits the bar to it.
    import fcntl

    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    proc = subprocess.Popen([sys.executable, "-m", "ccarena", "run", "s.toml", "--out", "o"], cwd=tmp_path,
                            stdin=slave, stdout=slave, stderr=slave, start_new_session=True)
    os.close(slave)
    try:
        seen = _read_until(master, r"simulating: +\d+%\|.*/600 s", time.monotonic() + PATIENCE_S)
        assert "ccarena: running s.toml (1 flow, 600 s simulated)" in seen
        proc.send_signal(signal.SIGINT)
        seen += _read_until(master, r"ccarena: error: interrupted", time.monotonic() + PATIENCE_S)
        assert proc.wait(timeout=PATIENCE_S) == 130
        assert "Traceback" not in seen
        assert not (tmp_path / "o").exists()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)


def test_the_sweep_bar_is_the_shared_one():
    """One progress module: sweep/progress.py is gone, the sweep uses ccarena.progress."""
    import ccarena.sweep as sweep

    assert sweep.Progress is progress.Progress
    assert not (Path(sweep.__file__).parent / "progress.py").exists()
