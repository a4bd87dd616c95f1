"""The live testbed's lock and --wait, without root:
the lock on a file of the test's own. The live commands waiting for the
real one are in test_live.py."""

from __future__ import annotations

import math
import os
import threading
import time
from pathlib import Path

import pytest

from ccarena.cli import main
from ccarena.errors import ScenarioError
from ccarena.live import hygiene
from ccarena.live.hygiene import parse_wait


@pytest.mark.parametrize(("text", "seconds"), [("0", 0.0), ("2.5", 2.5), ("30", 30.0), ("inf", math.inf)])
def test_wait_takes_seconds(text: str, seconds: float) -> None:
    assert parse_wait(text) == seconds


@pytest.mark.parametrize("text", ["-1", "nan", "x", "5s", ""])
def test_wait_refuses_what_is_not_seconds(text: str) -> None:
    with pytest.raises(ValueError, match="seconds"):
        parse_wait(text)


def test_a_held_lock_refuses_at_once_naming_the_holder_and_wait(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CCARENA_LIVE_WAIT", raising=False)
    path = tmp_path / "live.lock"
    holder = hygiene.TestbedLock(path)
    holder.acquire(0)
    try:
        with pytest.raises(ScenarioError) as err:
            hygiene.TestbedLock(path).acquire()
        assert str(err.value) == (f"live: another live command (pid {os.getpid()}) holds the testbed ({path}); "
                                  "use --wait [SECONDS] to wait for it")
        with pytest.raises(ScenarioError, match=r"still holds the testbed .* after 0.2 s; --wait longer"):
            hygiene.TestbedLock(path).acquire(0.2)
    finally:
        holder.release()


def test_waiting_says_so_once_and_takes_the_lock_when_it_is_free(tmp_path: Path) -> None:
    path = tmp_path / "live.lock"
    holder = hygiene.TestbedLock(path)
    holder.acquire(0)
    released = threading.Timer(0.5, holder.release)
    released.start()
    lines: list[str] = []
    waiter = hygiene.TestbedLock(path)
    try:
        waiter.acquire(math.inf, log=lines.append)
        assert holder.fd is None, "it waited for the release"
        assert lines == [f"ccarena: the testbed ({path}) is held by pid {os.getpid()}; waiting until it is free "
                         "(Ctrl-C stops waiting)"]
        assert path.read_text() == f"{os.getpid()}\n"
    finally:
        released.cancel()
        holder.release()
        waiter.release()


def test_the_environment_still_sets_the_default_wait(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "live.lock"
    holder = hygiene.TestbedLock(path)
    holder.acquire(0)
    try:
        monkeypatch.setenv("CCARENA_LIVE_WAIT", "0.2")
        with pytest.raises(ScenarioError, match=r"after 0.2 s"):
            hygiene.TestbedLock(path).acquire()
        monkeypatch.setenv("CCARENA_LIVE_WAIT", "soon")
        with pytest.raises(ScenarioError, match=r"^CCARENA_LIVE_WAIT: expected a number of seconds"):
            hygiene.TestbedLock(path).acquire()
    finally:
        holder.release()


def test_waiters_take_the_testbed_in_the_order_they_came(tmp_path: Path) -> None:
    """A command that releases the testbed and asks for it again at once
    (reproduce --live, run after run) queues behind one already waiting."""
    path = tmp_path / "live.lock"
    holder = hygiene.TestbedLock(path)
    holder.acquire(0)
    order: list[str] = []
    first = hygiene.TestbedLock(path)

    def wait_then_hold() -> None:
        first.acquire(math.inf)
        order.append("waited")
        time.sleep(0.3)
        first.release()

    thread = threading.Thread(target=wait_then_hold)
    thread.start()
    queue = path.with_name(path.name + ".queue")
    deadline = time.monotonic() + 60
    while not (queue.exists() and queue.read_text()) and time.monotonic() < deadline:
        time.sleep(0.01)
    holder.release()
    holder.acquire(math.inf)  # at once, as the next run of a reproduce would
    order.append("again")
    holder.release()
    thread.join(timeout=60)
    assert order == ["waited", "again"]
    assert queue.read_text() == ""


def test_a_waiter_that_died_holds_no_one_back(tmp_path: Path) -> None:
    path = tmp_path / "live.lock"
    dead = 2**22 + 1  # above pid_max's default: no such process
    path.with_name(path.name + ".queue").write_text(f"{dead} 123 ab\n")
    lock = hygiene.TestbedLock(path)
    lock.acquire(0)
    lock.release()


def test_without_wait_a_free_testbed_with_a_waiter_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The testbed is the waiter's turn; a command that does not wait is
    refused, naming it."""
    monkeypatch.delenv("CCARENA_LIVE_WAIT", raising=False)
    path = tmp_path / "live.lock"
    waiter = hygiene.WaitQueue(path)
    waiter.join()
    try:
        with pytest.raises(ScenarioError, match=rf"another live command \(pid {os.getpid()}\) holds the testbed"):
            hygiene.TestbedLock(path).acquire(0)
    finally:
        waiter.leave()
    hygiene.TestbedLock(path).acquire(0)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["live", "cleanup", "--wait", "soon"],
         "ccarena: error: argument --wait: expected a number of seconds (or inf), got 'soon' "
         "(a bare --wait must come last; or write --wait=SECONDS) (see ccarena --help)"),
        (["live", "run", "--wait", "s.toml"], "got 's.toml' (a bare --wait must come last"),
        (["compare", "s.toml", "--wait", "-1"], "expected a number of seconds >= 0, got '-1'"),
        (["reproduce", "bbq-fig1", "--wait", "5"], "ccarena: error: --wait: waits for the live testbed: only with --live"),
    ],
)
def test_bad_wait_is_one_line_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str], expected: str) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and expected in err, err
