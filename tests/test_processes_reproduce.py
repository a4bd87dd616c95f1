"""`ccarena reproduce` leaves no process behind, however it ends, and its
worker pool works from a script without a ``__main__`` guard.

Each command runs in its own session, so that its descendants are the
processes of that session (a worker that lost its parent keeps the
session). The signal goes once the first progress line is out, i.e. with
the workers started and more runs to go: the tests name several
experiments so that, even on a busy machine, the pool is still running
when the signal lands; the command is ended by the signal, so this does
not make the test longer. No fixed sleeps; the timeouts are generous and
only bound a failure.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from ccarena.experiments import registry, runner
from ccarena.experiments.framework import RunSpec

#: Far above what a clean exit takes (well under a second here).
TIMEOUT_S = 60.0
#: Until the first run is done, on a busy machine.
START_TIMEOUT_S = 300.0
#: The quick runs of every experiment: ~40 runs, seconds of work on 2 cores.
MANY = registry.names()
WORKER_MARK = "worker_main"


def _live_processes() -> list[tuple[int, int, int, str]]:
    """Every live (not zombie) process: (pid, parent pid, session, command line)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue  # exited while we looked
        state, ppid, _pgrp, session = stat[stat.rindex(")") + 2 :].split()[:4]
        if state not in ("Z", "X"):
            found.append((int(entry), int(ppid), int(session), cmdline))
    return found


def _session(sid: int) -> list[tuple[int, str]]:
    """Live processes of session ``sid``: (pid, command line)."""
    return [(pid, cmd) for pid, _, session, cmd in _live_processes() if session == sid]


def _children(pid: int) -> list[tuple[int, str]]:
    """Live workers whose parent is ``pid``."""
    return [(p, cmd) for p, ppid, _, cmd in _live_processes() if ppid == pid and WORKER_MARK in cmd]


class _Started:
    """A command in its own session, its stderr collected by a thread."""

    def __init__(self, argv: list[str], cwd: Path) -> None:
        self.proc = subprocess.Popen(
            argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True
        )
        self.lines: list[str] = []
        self.progress = threading.Event()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)
            if "[" in line and "]" in line:  # "ccarena: [ 1/38] key  0.15 s" or the script's
                self.progress.set()
        self.progress.set()  # end of file: nothing more to wait for

    @property
    def stderr(self) -> str:
        return "".join(self.lines)

    def wait_for_progress(self) -> None:
        assert self.progress.wait(START_TIMEOUT_S), "no progress line"
        assert self.proc.poll() is None, f"ended before the signal ({self.proc.returncode}):\n{self.stderr}"
        assert len(_session(self.proc.pid)) >= 3, "no workers running"

    def wait_for_exit(self) -> int:
        """The command's exit status, once it and every process of its
        session have gone (all killed and the test failed if not)."""
        try:
            status = self.proc.wait(TIMEOUT_S)
        except subprocess.TimeoutExpired:
            status = None
        deadline = time.monotonic() + TIMEOUT_S
        while (left := _session(self.proc.pid)) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.kill_all()
        self.reader.join(TIMEOUT_S)
        assert self.proc.stderr is not None
        self.proc.stderr.close()
        assert status is not None, f"still running {TIMEOUT_S} s after the signal:\n{self.stderr}"
        assert not left, f"left behind: {left}"
        return status

    def kill_all(self) -> None:
        for pid, _ in _session(self.proc.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait(TIMEOUT_S)


@pytest.fixture
def start(tmp_path):
    started: list[_Started] = []

    def start(*argv: str) -> _Started:
        command = _Started(list(argv), tmp_path)
        started.append(command)
        return command

    yield start
    for command in started:  # after a failed assertion
        if command.proc.returncode is None:
            command.kill_all()


def _reproduce(start, tmp_path: Path) -> _Started:
    return start(sys.executable, "-m", "ccarena", "reproduce", *MANY, "--quick", "--jobs", "2", "--out", str(tmp_path / "out"))


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_a_signal_to_reproduce_ends_it_and_its_workers(start, tmp_path, sig):
    command = _reproduce(start, tmp_path)
    command.wait_for_progress()
    os.kill(command.proc.pid, sig)
    status = command.wait_for_exit()
    # Seen: 130 (SIGINT), 143 (SIGTERM), 129 (SIGHUP): ccarena.signals.
    assert status in (130, 128 + sig), command.stderr
    assert "Traceback" not in command.stderr


def test_ctrl_c_at_a_terminal_reaches_the_workers_too_and_they_leave_it_to_the_parent(start, tmp_path):
    command = _reproduce(start, tmp_path)
    command.wait_for_progress()
    os.killpg(command.proc.pid, signal.SIGINT)  # what the terminal does: the whole foreground group
    assert command.wait_for_exit() == 130, command.stderr
    assert "Traceback" not in command.stderr


def test_after_sigkill_of_reproduce_its_workers_exit_by_themselves(start, tmp_path):
    command = _reproduce(start, tmp_path)
    command.wait_for_progress()
    os.kill(command.proc.pid, signal.SIGKILL)
    assert command.wait_for_exit() == -signal.SIGKILL


def _scenario(duration: str, rate: str) -> dict:
    return {
        "duration": duration,
        "bottleneck": {"rate": rate, "buffer": "1MB"},
        "flow": [{"cc": "bbr", "rtt": "10ms"}, {"cc": "bbr", "rtt": "50ms"}],
    }


#: Three simulated hours at 1 Gbit/s: minutes of work for one worker,
#: far beyond TIMEOUT_S on any machine of this kind.
LONG = _scenario("10800s", "1Gbit")
SHORT = _scenario("1s", "10Mbit")


def test_a_terminated_parent_kills_a_worker_in_the_middle_of_a_run(start, tmp_path):
    # The longest run goes first, so one worker is on it (for minutes)
    # when the first short run is reported: the exit must not wait for it.
    script = tmp_path / "sweep.py"
    script.write_text(
        textwrap.dedent(f"""
            import sys
            from ccarena import signals
            from ccarena.experiments import runner
            from ccarena.experiments.framework import RunSpec

            signals.trap()
            specs = [RunSpec("long", {LONG!r})] + [RunSpec(f"short{{i}}", {SHORT!r}) for i in range(50)]
            runner.execute(specs, jobs=2, progress=lambda n, total, key, wall: print(f"[{{n}}/{{total}}] {{key}}", file=sys.stderr, flush=True))
        """),
        encoding="utf-8",
    )
    command = start(sys.executable, str(script))
    command.wait_for_progress()
    os.kill(command.proc.pid, signal.SIGTERM)
    assert command.wait_for_exit() == 128 + signal.SIGTERM, command.stderr
    assert "[1/51] short" in command.stderr and "long" not in command.stderr


def test_a_worker_that_dies_fails_its_run_by_key_and_none_is_left():
    killed = []

    def progress(done: int, total: int, key: str, wall_s: float) -> None:
        # "short" is done and its worker idle; the other is on "long".
        for pid, _ in _children(os.getpid()):
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)

    specs = [RunSpec("long", LONG), RunSpec("short", SHORT)]
    with pytest.raises(runner.RunFailed, match=r"^run long failed: its worker process was killed by SIGKILL$"):
        runner.execute(specs, jobs=2, progress=progress)
    assert len(killed) == 2
    assert _children(os.getpid()) == []


def test_measure_works_from_a_script_without_a_main_guard(tmp_path):
    script = tmp_path / "unguarded.py"
    script.write_text(
        "import ccarena.experiments\n"
        "\n"
        'report = ccarena.experiments.measure("bbq-fig3-14", quick=True, jobs=2)\n'
        'print(report.numbers["bbq.short_share.100Mbit"])\n',
        encoding="utf-8",
    )
    proc = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=START_TIMEOUT_S, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert 0.0 < float(proc.stdout) < 1.0
    assert "Traceback" not in proc.stderr
