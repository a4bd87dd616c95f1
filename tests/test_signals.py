"""Signals end a command cleanly: SIGINT, SIGTERM and SIGHUP during a run
leave no run directory and no temporary directory, print one line and exit
with 128 + the signal; Ctrl-C stops the engine mid-simulation.

Nothing here waits a fixed time: each test waits for what it can observe
(a line on stderr, a temporary directory appearing) with generous
timeouts, so a slow or busy host changes only how long it takes."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ccarena import rundir

#: Seconds to wait for anything observable; far above what a busy host needs.
PATIENCE_S = 120

#: A run whose write phase lasts (120,000 telemetry rows and their plot).
LONG_WRITE = """\
duration = "60s"
[output]
interval = "1ms"
[bottleneck]
rate = "10Mbit"
buffer = "100pkt"
[[flow]]
cc = "cubic"
rtt = "20ms"
[[flow]]
cc = "bbr"
rtt = "40ms"
"""

#: A run the engine needs minutes for (10 Gbit/s for 10 minutes).
LONG_SIMULATION = """\
duration = "600s"
[bottleneck]
rate = "10Gbit"
buffer = "1bdp"
[[flow]]
cc = "bbr"
rtt = "10ms"
"""


def _start(tmp_path: Path, scenario: str) -> subprocess.Popen[str]:
    (tmp_path / "s.toml").write_text(scenario)
    return subprocess.Popen(
        [sys.executable, "-m", "ccarena", "run", "s.toml", "--out", "runs/out"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def _wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + PATIENCE_S
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.001)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_while_writing_leaves_nothing_half_written(tmp_path, sig):
    runs = tmp_path / "runs"
    interrupted = 0
    for _ in range(5):  # until one signal lands inside the write phase
        proc = _start(tmp_path, LONG_WRITE)
        _wait_for(lambda: proc.poll() is not None or (runs.is_dir() and any(runs.glob(".out.ccarena-tmp-*"))),
                  "the temporary run directory")
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=PATIENCE_S)
        leftovers = sorted(p.name for p in runs.iterdir()) if runs.is_dir() else []
        if proc.returncode == 0:  # the signal came after the rename: a whole run
            assert leftovers == ["out"]
            assert (runs / "out" / "goodput.png").is_file()
            continue
        expected = "interrupted" if sig == signal.SIGINT else f"terminated by {sig.name}"
        assert proc.returncode == 128 + sig, err
        assert err.splitlines()[-1] == f"ccarena: error: {expected}", err
        assert "Traceback" not in err
        # No temporary; at most the whole run, when the signal came during
        # the final rename (held back until it was done).
        assert leftovers in ([], ["out"]), leftovers
        if leftovers:
            assert rundir.is_run_dir(runs / "out") and (runs / "out" / "goodput.png").is_file()
        else:
            interrupted += 1
            break
    assert interrupted, "no signal landed inside the write phase in 5 tries"


def test_ctrl_c_stops_the_simulation_itself(tmp_path):
    """A 10-minute 10 Gbit/s simulation takes minutes of engine time; Ctrl-C
    during it ends the command at once (the engine polls for signals)."""
    proc = _start(tmp_path, LONG_SIMULATION)
    line = proc.stderr.readline()
    assert line.startswith("ccarena: running"), line
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=PATIENCE_S)
    waited = time.monotonic() - sent
    assert proc.returncode == 130, err
    assert err.splitlines()[-1] == "ccarena: error: interrupted"
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())
    # Behaviour, not speed: the whole run would take far longer than this.
    assert waited < PATIENCE_S


def test_api_users_keep_the_default_handlers():
    """Only the command installs handlers; importing or running through
    the API leaves a script's own signal handling alone."""
    code = (
        "import signal, ccarena\n"
        "before = [signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)]\n"
        "from ccarena import cli\n"
        "cli.main(['ccs'])\n"
        "after = [signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)]\n"
        "assert before == after, (before, after)\n"
        "print('ok')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=PATIENCE_S,
                          check=False)
    assert proc.stdout.splitlines()[-1] == "ok", proc.stderr
