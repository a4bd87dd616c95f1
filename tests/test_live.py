"""The live engine on this machine's kernel: real TCP in network namespaces.

Runs only as root with the delay line built (`make build`), and skips
otherwise with the reason. Each test runs at most 15 s of traffic; every
test checks afterwards that nothing is left: no ccalive-* namespaces, no
delay-line or agent processes, no ccarena devices or qdiscs in the host's
namespace, and the same registered congestion controls as before.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from ccarena import rundir
from conftest import EXAMPLES, REPO, assert_decoys_intact, plant_decoys, run_cli

DELAYLINE = REPO / "target" / "release" / "delayline"
LOCK = Path("/run/ccarena-live.lock")
AVAILABLE = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="live tests need root (they create network namespaces)"),
    pytest.mark.skipif(not DELAYLINE.exists(), reason="delay line not built (make build)"),
    pytest.mark.skipif(shutil.which("tc") is None or shutil.which("ip") is None, reason="iproute2 (ip, tc) missing"),
]

#: BBR 10 vs 50 ms, 100 Mbit/s, 2 MB, shortened to 15 s (window 5-15 s).
SHORT = ["--set", "duration=15s", "--set", "measure.from=5s"]


@contextmanager
def holding_testbed(timeout_s: float = 300):
    """Hold the live testbed's lock: no live run (a developer's, another
    suite's) is active meanwhile, and every finished one has cleaned up.
    Waits in turn with the live commands (hygiene.WaitQueue)."""
    from ccarena.errors import ScenarioError
    from ccarena.live.hygiene import TestbedLock

    lock = TestbedLock(LOCK)
    try:
        lock.acquire(timeout_s)
    except ScenarioError as err:
        pytest.fail(f"the live testbed stayed locked by another run: {err}")
    try:
        yield lock.fd
    finally:
        lock.release()


def our_processes(parent: int | None = None) -> list[str]:
    """Delay lines, agents and the testbed's iperf3 ends (--app iperf3:
    they address the receiver, 10.201.2.2), of the engine ``parent`` if given."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        ours = "delayline --tun" in cmd or "ccarena.live.agent" in cmd or ("iperf3" in cmd and "10.201.2.2" in cmd)
        if ours and parent in (None, ppid):
            found.append(f"{entry.name}: {cmd.strip()}")
    return found


#: Our runs wait for a developer's live run to finish instead of failing.
WAIT_ENV = {**os.environ, "CCARENA_LIVE_WAIT": "300"}


def live_cli(*args: str | Path, wait: bool = True) -> subprocess.CompletedProcess[str]:
    """`python -m ccarena ARGS`, waiting for the testbed if ``wait``."""
    return subprocess.run([sys.executable, "-m", "ccarena", *map(str, args)], capture_output=True, text=True,
                          env=WAIT_ENV if wait else {**os.environ, "CCARENA_LIVE_WAIT": "0"}, timeout=600, check=False)


def compare_summaries(tmp_path: Path, example: Path, *settings: str) -> tuple[dict, dict]:
    """`ccarena compare EXAMPLE --set SETTING ...`, which must succeed;
    its (live, sim) summary.json documents."""
    sets = [arg for s in settings for arg in ("--set", s)]
    done = live_cli("compare", example, *sets, "--out", tmp_path / "cmp")
    assert done.returncode == 0, done.stderr
    return tuple(json.loads((tmp_path / "cmp" / engine / "summary.json").read_text()) for engine in ("live", "sim"))


def leftovers() -> dict[str, list[str]]:
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True, check=True).stdout
    tuns = subprocess.run(["ip", "-o", "link", "show", "type", "tun"], capture_output=True, text=True, check=True).stdout
    qdiscs = subprocess.run(["tc", "qdisc", "show"], capture_output=True, text=True, check=True).stdout
    return {
        "namespaces": [line for line in netns.splitlines() if line.startswith("ccalive-")],
        "links": [line for line in links.splitlines() if ": cca-" in line],
        "tun devices": [line for line in tuns.splitlines() if "cca-" in line],
        "qdiscs": [line for line in qdiscs.splitlines() if "dev cca-" in line],
        "processes": our_processes(),
    }


def assert_clean(ccs_before: str) -> None:
    with holding_testbed():
        # Processes killed by PR_SET_PDEATHSIG may take a moment to be reaped
        # (generous: a busy machine schedules the reaper late).
        deadline = time.monotonic() + 30
        while any(leftovers().values()) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert leftovers() == {"namespaces": [], "links": [], "tun devices": [], "qdiscs": [], "processes": []}
        # (Registered congestion controls: checked by the BPF test, the only
        # one that registers; other tests would race other users' loads.)


def is_registered(name: str) -> bool:
    return name in AVAILABLE.read_text().split()


def registered_after_teardown(name: str, expected: bool, timeout_s: float = 30) -> bool:
    """Whether ``name`` is registered, once it has had time to become
    ``expected``: the kernel drops an unregistered struct_ops when the last
    socket using it is freed, which the (asynchronous) namespace teardown
    does shortly after a run."""
    deadline = time.monotonic() + timeout_s
    while is_registered(name) != expected and time.monotonic() < deadline:
        time.sleep(0.1)
    return is_registered(name)


def remove_dead_runs_leftovers() -> list[str]:
    """With the lock held: the namespaces of live runs whose engine is gone
    (killed before it could tear down, by whoever ran it), removed as the
    engine itself removes them before a run (hygiene.cleanup_leftovers,
    here only those of dead pids). A machine of this kind may carry such
    leftovers from work before the suite (CI once found a dead run's three
    namespaces before the first live test); they are not this test's."""
    from ccarena.live.hygiene import PREFIX, delete_namespaces, list_namespaces

    dead = []
    for name in list_namespaces():
        pid = name[len(PREFIX):].split("-", 1)[0]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            dead.append(name)
    return delete_namespaces(dead)


@pytest.fixture
def clean_host():
    with holding_testbed():
        before = AVAILABLE.read_text()
        removed = remove_dead_runs_leftovers()
        if removed:
            print(f"removed a dead live run's leftovers before the test: {removed}")
        # Processes of a run that just ended may take a moment to be reaped.
        deadline = time.monotonic() + 30
        while any(leftovers().values()) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(leftovers().values()), f"live leftovers of a running process exist: {leftovers()}"
    yield before
    assert_clean(before)


def test_bbr_rtt_unfairness_live(clean_host, tmp_path):
    """Linux BBR, 10 vs 50 ms on 100 Mbit/s with 2 MB: the 10 ms flow gets
    ~6% (BBQ paper: 6.3 of 93.6 Mbit/s). Measured here in 15-s runs:
    6.2, 7.2, 8.1% (5-8 s runs: 6.7-8.9%: the 50 ms flow is still growing
    its share in the first seconds; the simulator gives 7.2% for the same
    15 s); a later session, with other work on the machine: 7.5, 7.1, 7.1%
    and, with a busy loop pinned to CPU 0 as well, 7.4, 7.3, 6.3, 6.8%.
    100 Mbit/s is far
    below what any machine of this kind forwards, so the share does not
    move with the host's load; the bounds are the spread's neighbourhood."""
    out = tmp_path / "run"
    decoys = plant_decoys(tmp_path)  # a user's files named like our temporaries
    done = live_cli("live", "run", EXAMPLES / "bbr-rtt-unfairness.toml", *SHORT, "--out", out)
    assert done.returncode == 0, done.stderr
    assert_decoys_intact(decoys)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["engine"] == "live"
    short, long_ = summary["flows"]
    assert 0.02 <= short["share"] <= 0.15, summary["flows"]
    assert long_["share"] >= 0.85
    # Measured in 15-s runs (window 5-15 s) on an otherwise idle 2-core
    # machine: 90.2, 93.0, 95.0, 96.4% (the simulator: 97.6%); the first
    # ProbeRTT falls inside this short window. Busy (other work, and in
    # five runs a busy loop pinned to CPU 0): 96.5-97.4% in nine runs. The
    # floor sits below the
    # lowest of those, not at the simulator's figure.
    assert summary["utilization"] >= 0.87
    # The delay line held the base RTT: BBR's min_rtt is ~10 and ~50 ms.
    assert 9.0 <= short["rtt_mean_ms"] and 49.0 <= long_["rtt_mean_ms"]
    assert summary["live"]["delay_line"]["dropped_overflow"] == 0
    assert summary["live"]["losses"]["unexplained_losses"] == 0, summary["live"]["losses"]
    # The kernel's chrono counters came back per flow: busy for about the
    # run (15 s, plus the drain), never longer, and no limit beyond busy.
    for limited in summary["live"]["limited"]:
        assert 10 <= limited["busy_s"] <= 30, limited
        assert 0 <= limited["sndbuf_limited_s"] <= limited["busy_s"] and 0 <= limited["rwnd_limited_s"] <= limited["busy_s"]
    # Same files and schema as the simulator's run directory.
    sim_out = tmp_path / "sim"
    sim = run_cli("run", EXAMPLES / "bbr-rtt-unfairness.toml", *SHORT, "--out", sim_out)
    assert sim.returncode == 0, sim.stderr
    sim_summary = json.loads((sim_out / "summary.json").read_text())
    assert set(summary) - {"live"} == set(sim_summary)
    assert set(summary["flows"][0]) == set(sim_summary["flows"][0])
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in sim_out.iterdir())
    import pyarrow.parquet as pq

    for name in ("timeseries.parquet", "link.parquet"):
        assert pq.read_schema(out / name).names == pq.read_schema(sim_out / name).names
    ts = pq.read_table(out / "timeseries.parquet")
    assert ts.num_rows == 2 * 150  # 100 ms intervals, 2 flows
    cwnd = ts.column("cwnd").to_pylist()
    assert max(cwnd) > 100  # TCP_INFO was sampled


def _zombie_or_gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


def _receiver_bytes(engine_pid: int) -> int:
    """Bytes the receiver's veth has taken in (0 before it exists)."""
    done = subprocess.run(["ip", "-n", f"ccalive-{engine_pid}-rx", "-s", "-j", "link", "show", "cca-rx0"],
                          capture_output=True, text=True, check=False)
    try:
        return int(json.loads(done.stdout)[0]["stats64"]["rx"]["bytes"])
    except (ValueError, LookupError):
        return 0


def _wait_for(what: str, condition, proc: subprocess.Popen, timeout_s: float = 300, poll_s: float = 0.002):
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert proc.poll() is None, f"the run ended before {what}: {proc.communicate()}"
        assert time.monotonic() < deadline, f"no {what} within {timeout_s} s"
        time.sleep(poll_s)


#: A short run: its teardown comes soon, and it is one moment of the test.
_SHORT_RUN = ["--set", "duration=3s", "--set", "measure.from=1s"]


def test_a_flow_stops_sending_at_its_stop_as_in_the_simulator(clean_host, tmp_path):
    """A flow with a ``stop`` sends at most agents.STOP_UNSENT_S of the
    link's rate after it (TCP_NOTSENT_LOWAT), not what a 64-MB socket took
    before it. BBR 10 ms (stops at 10 s) against BBR 50 ms: the 10 ms flow
    carried 7.6 and 10.4 Mbit/s in the two half-seconds after its stop and
    2.3 Mbit/s over 11-13 s before the fix; 3.4, 0.0 and 0.0 after it (the
    simulator: 0.5, 0.0, 0.0)."""
    import pyarrow.parquet as pq

    scenario = tmp_path / "stop.toml"
    scenario.write_text('duration = "16s"\n[measure]\nfrom = "4s"\nto = "10s"\n'
                        '[bottleneck]\nrate = "100Mbit"\nbuffer = "2MB"\n'
                        '[[flow]]\ncc = "bbr"\nrtt = "10ms"\nstop = "10s"\n[[flow]]\ncc = "bbr"\nrtt = "50ms"\n')
    out = tmp_path / "run"
    done = live_cli("live", "run", scenario, "--out", out)
    assert done.returncode == 0, done.stderr
    table = pq.read_table(out / "timeseries.parquet")
    t = table.column("t_s").to_numpy()[::2]
    goodput = table.column("goodput_mbps").to_numpy().reshape(-1, 2)[:, 0]
    assert goodput[(t > 9) & (t <= 10)].mean() > 1  # it was sending
    assert goodput[(t > 10.5) & (t <= 13)].mean() < 0.5


def test_separate_senders_run_each_flow_from_its_own_namespace(clean_host, tmp_path):
    """`--senders separate`: each flow's socket in a namespace of its own
    (its address exists only there, so a flow that runs was sent from it),
    the router bridging their veths; teardown removes them all (the
    fixture checks)."""
    out = tmp_path / "run"
    done = live_cli("live", "run", EXAMPLES / "bbr-rtt-unfairness.toml", "--set", "duration=6s",
                    "--set", "measure.from=2s", "--senders", "separate", "--out", out)
    assert done.returncode == 0, done.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["live"]["testbed"]["senders"] == "separate"
    assert all(f["goodput_mbps"] > 0 for f in summary["flows"]), summary["flows"]
    assert summary["live"]["losses"]["unexplained_losses"] == 0


@pytest.mark.parametrize("moment", ["waiting for the testbed", "setup", "traffic", "teardown"])
def test_ctrl_c_at_any_moment_is_interrupted_and_leaves_nothing(clean_host, tmp_path, moment):
    """A terminal's Ctrl-C (SIGINT to the engine's process group) at each
    moment of a live run ends it with `ccarena: error: interrupted`, exit
    status 130, no run directory and a clean host (it once ended in
    `internal: RuntimeError: release unlocked lock`). Each moment is an
    observable state, not a delay: the engine waiting for the
    testbed lock this test holds; its first namespace created (setup
    commands follow); data reaching the receiver; the delay line gone while
    the namespaces still exist (teardown)."""
    out = tmp_path / "run"
    env = {**WAIT_ENV, "CCARENA_LIVE_CAPACITY": "off"}  # no calibration run before the scenario's
    argv = [sys.executable, "-m", "ccarena", "live", "run", EXAMPLES / "bbr-rtt-unfairness.toml", *_SHORT_RUN,
            "--out", out]
    with contextlib.ExitStack() as stack:
        if moment == "waiting for the testbed":
            stack.enter_context(holding_testbed())
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True, env=env)
        try:
            netns = Path(f"/run/netns/ccalive-{proc.pid}-tx")
            if moment == "waiting for the testbed":
                def holds_lock_file() -> bool:
                    fds = Path(f"/proc/{proc.pid}/fd")
                    try:
                        return any(os.readlink(fd) == str(LOCK) for fd in fds.iterdir())
                    except OSError:
                        return False
                _wait_for("the engine opening the lock file", holds_lock_file, proc)
            elif moment == "setup":
                _wait_for("the first namespace", netns.exists, proc, poll_s=0.0005)
            elif moment == "traffic":
                _wait_for("data at the receiver", lambda: _receiver_bytes(proc.pid) > 1_000_000, proc, poll_s=0.05)
            else:
                found: list[int] = []

                def delay_line_gone() -> bool:
                    if not found:
                        found.extend(int(p.split(":")[0]) for p in our_processes(proc.pid) if "delayline" in p)
                        return False
                    return _zombie_or_gone(found[0]) and netns.exists()
                _wait_for("the delay line's end", delay_line_gone, proc, poll_s=0.001)
            os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
        finally:
            stack.close()  # the lock, if held
            _, err = proc.communicate(timeout=60)
    assert err.strip().splitlines()[-1] == "ccarena: error: interrupted", err
    assert proc.returncode == 130, err
    assert not out.exists()


def test_killed_engine_leaves_only_namespaces_and_cleanup_removes_them(clean_host):
    proc = subprocess.Popen(
        [sys.executable, "-m", "ccarena", "live", "run", EXAMPLES / "bbr-rtt-unfairness.toml", *SHORT, "--out", "/nonexistent-dir/x"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, env=WAIT_ENV,
    )
    deadline = time.monotonic() + 300
    while len(our_processes(proc.pid)) < 3 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(our_processes(proc.pid)) == 3, "the run never started its delay line and agents"
    proc.kill()  # SIGKILL: no chance to clean up
    proc.wait(timeout=10)
    deadline = time.monotonic() + 30
    while our_processes() and time.monotonic() < deadline:  # PR_SET_PDEATHSIG
        time.sleep(0.1)
    assert our_processes() == []
    assert sorted(leftovers()["namespaces"]) == [f"ccalive-{proc.pid}-{n}" for n in ("rt", "rx", "tx")]
    done = live_cli("live", "cleanup")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("removed: ccalive-")
    again = live_cli("live", "cleanup")
    assert again.stdout.strip() == "nothing to clean up"


def test_second_run_refused_while_testbed_is_locked(clean_host, tmp_path):
    with holding_testbed() as fd:
        os.ftruncate(fd, 0)
        os.pwrite(fd, b"4242\n", 0)
        done = live_cli("live", "run", EXAMPLES / "bbr-rtt-unfairness.toml", *SHORT, "--out", tmp_path / "x", wait=False)
        cleanup = live_cli("live", "cleanup", wait=False)
    # Both returned while the lock was still held: refused at once.
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"ccarena: error: live: another live command (pid 4242) holds the testbed ({LOCK}); "
        "use --wait [SECONDS] to wait for it"
    )
    assert cleanup.returncode == 2 and "holds the testbed" in cleanup.stderr and "--wait" in cleanup.stderr
    assert not (tmp_path / "x").exists()


def _waiting_line(proc: subprocess.Popen) -> str:
    """The first line the command prints on stderr (it says it waits)."""
    assert proc.stderr is not None
    return proc.stderr.readline().strip()


@pytest.mark.parametrize("how", [["--wait", "5"], ["--wait=5"], "CCARENA_LIVE_WAIT=5"])
def test_live_cleanup_waits_for_the_testbed(clean_host, how):
    """With --wait SECONDS (or the environment's CCARENA_LIVE_WAIT) a
    second live command waits for the holder -- here
    this test, which releases the lock after 1 s -- says once that it is
    waiting for its pid, and then runs."""
    from ccarena.live.hygiene import TestbedLock

    args = how if isinstance(how, list) else []
    env = {**os.environ, "CCARENA_LIVE_WAIT": how.split("=")[1] if isinstance(how, str) else "0"}
    lock = TestbedLock()
    lock.acquire(300)  # after any other live command
    try:
        proc = subprocess.Popen([sys.executable, "-m", "ccarena", "live", "cleanup", *args],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        try:
            first = _waiting_line(proc)
            assert first == (f"ccarena: the testbed ({LOCK}) is held by pid {os.getpid()}; waiting up to 5 s "
                             "(Ctrl-C stops waiting)")
            time.sleep(1)
            assert proc.poll() is None, "it must wait while the lock is held"
        finally:
            lock.release()
        out, err = proc.communicate(timeout=60)
    finally:
        lock.release()
    assert proc.returncode == 0, first + err
    assert "held by pid" not in err, "said once"
    assert out.strip() == "nothing to clean up" or out.startswith("removed: ")


def test_ctrl_c_ends_the_wait_for_the_testbed_at_once(clean_host):
    """A bare --wait waits until the testbed is free; Ctrl-C ends the wait
    (exit 130) while the holder still has it."""
    with holding_testbed() as fd:
        os.ftruncate(fd, 0)
        os.pwrite(fd, b"4242\n", 0)
        proc = subprocess.Popen([sys.executable, "-m", "ccarena", "live", "cleanup", "--wait"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            assert _waiting_line(proc) == (
                f"ccarena: the testbed ({LOCK}) is held by pid 4242; waiting until it is free (Ctrl-C stops waiting)"
            )
            os.killpg(proc.pid, signal.SIGINT)
            _, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 130 and err.strip() == "ccarena: error: interrupted", err


_BBQ_RUN = (
    'duration = "30s"\n[bottleneck]\nrate = "20Mbit"\nbuffer = "1bdp"\n'
    '[[flow]]\ncc = "bbq"\nrtt = "20ms"\n'
)


def _registered_ours() -> list[str]:
    return [name for name in AVAILABLE.read_text().split() if name.startswith("cc_bbq")]


def _kill_a_bbq_run(tmp_path: Path, ready) -> int:
    """Start a live run of BBQ (through BPF), SIGKILL it once ``ready()``
    holds; its pid."""
    scenario = tmp_path / "bbq.toml"
    scenario.write_text(_BBQ_RUN)
    proc = subprocess.Popen([sys.executable, "-m", "ccarena", "live", "run", scenario, "--out", tmp_path / "killed"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env={**WAIT_ENV, "CCARENA_LIVE_CAPACITY": "off"})
    try:
        deadline = time.monotonic() + 300
        while not ready(proc.pid):
            if proc.poll() is not None:
                err = proc.communicate()[1]
                if "flow[0].cc" in err:
                    pytest.skip(f"cannot load BPF congestion controls here: {err.strip()}")
                pytest.fail(f"the run ended first: {err}")
            assert time.monotonic() < deadline, "the run never got that far"
            time.sleep(0.005)
    finally:
        proc.kill()  # SIGKILL: no chance to clean up
        proc.communicate(timeout=30)
    return proc.pid


@pytest.mark.parametrize("then", ["live run", "live cleanup"])
def test_a_killed_runs_bpf_registration_goes_with_the_next_run_or_cleanup(clean_host, tmp_path, then):
    """SIGKILL a live run of BBQ as soon as cc_bbq is registered; the next
    live run (or live cleanup) removes its namespaces and unregisters
    cc_bbq, whose only user is dead."""
    pytest.importorskip("ccarena.kernel", reason="the BPF loader (ccarena.kernel) is not part of this checkout")
    if _registered_ours():
        pytest.skip(f"{_registered_ours()} registered by someone else")
    pid = _kill_a_bbq_run(tmp_path, lambda _pid: "cc_bbq" in _registered_ours())
    assert _registered_ours() == ["cc_bbq"], "SIGKILL cannot be caught: the registration is left"
    if then == "live run":
        done = live_cli("live", "run", EXAMPLES / "bbr-rtt-unfairness.toml", *_SHORT_RUN, "--out", tmp_path / "next")
        assert done.returncode == 0, done.stderr
        assert "ccarena: removed leftovers of an earlier live run: " in done.stderr and "cc_bbq" in done.stderr
    else:
        done = live_cli("live", "cleanup")
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("removed: ") and "cc_bbq" in done.stdout, done.stdout
    assert _registered_ours() == []
    assert not [ns for ns in leftovers()["namespaces"] if ns.startswith(f"ccalive-{pid}-")]
    assert not Path("/run/ccarena/kernel/cc_bbq.json").exists()


def test_a_killed_run_leaves_an_operators_load_registered(clean_host, tmp_path):
    """cc_bbq loaded by an operator (ccarena kernel load), used by a live
    run that is then SIGKILLed: live cleanup removes the run's namespaces
    but never the operator's registration."""
    pytest.importorskip("ccarena.kernel", reason="the BPF loader (ccarena.kernel) is not part of this checkout")
    if _registered_ours():
        pytest.skip(f"{_registered_ours()} registered by someone else")
    loaded = live_cli("kernel", "load", "bbq")
    if loaded.returncode != 0:
        pytest.skip(f"cannot load BPF congestion controls here: {loaded.stderr.strip()}")
    try:
        pid = _kill_a_bbq_run(tmp_path, lambda pid: Path(f"/run/netns/ccalive-{pid}-tx").exists())
        done = live_cli("live", "cleanup")
        assert done.returncode == 0, done.stderr
        assert f"ccalive-{pid}-" in done.stdout and "cc_bbq" not in done.stdout
        assert _registered_ours() == ["cc_bbq"]
    finally:
        unloaded = live_cli("kernel", "unload", "bbq")
    assert unloaded.returncode == 0, unloaded.stderr
    assert _registered_ours() == []


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        (["--bottleneck", "kernel", "--set", "bottleneck.aqm=red", "--set", "bottleneck.red.min=100KB",
          "--set", "bottleneck.red.max=300KB", "--set", "bottleneck.red.max_p=0.1"],
         "ccarena: error: --bottleneck: the kernel bottleneck (TBF + bfifo) cannot do aqm = \"red\" here"),
        (["--bottleneck", "kernel", "--set", "bottleneck.loss=0.01"],
         "ccarena: error: --bottleneck: the kernel bottleneck (TBF + bfifo) cannot do random loss"),
        (["--bottleneck", "wire"], "ccarena: error: argument --bottleneck: invalid choice: 'wire'"),
        (["--set", "flow.0.cc=foo"], "ccarena: error: flow[0].cc: unknown congestion control 'foo'"),
        (["--set", "flow.0.params.cwnd_gain=512"], "ccarena: error: flow[0].params: the live engine cannot set"),
        (["--set", "output.interval=1ms"], "ccarena: error: output.interval: the live engine samples at most every 10ms"),
    ],
)
def test_bad_input_is_one_line_exit_2(clean_host, tmp_path, overrides, expected):
    done = live_cli("live", "run", EXAMPLES / "bbr-rtt-unfairness.toml", *overrides, "--out", tmp_path / "x")
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stderr.startswith(expected), done.stderr
    assert not (tmp_path / "x").exists()


def test_missing_prerequisites_are_one_line_exit_2(clean_host, tmp_path):
    env = {**os.environ, "CCARENA_DELAYLINE": str(tmp_path / "no-such-delayline")}
    done = subprocess.run([sys.executable, "-m", "ccarena", "live", "run", EXAMPLES / "bbr-rtt-unfairness.toml",
                           *SHORT, "--out", tmp_path / "x"], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip() == (f"ccarena: error: live: delay line binary {tmp_path / 'no-such-delayline'} "
                                   "not found (run `make build`)")
    nobody = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-m",
                             "ccarena", "live", "run", EXAMPLES / "bbr-rtt-unfairness.toml"],
                            capture_output=True, text=True, timeout=60, cwd=tmp_path)
    if "Permission denied" in nobody.stderr and "ccarena: error" not in nobody.stderr:
        pytest.skip("the unprivileged user cannot read the checkout")
    assert nobody.returncode == 2
    assert nobody.stderr.strip() == "ccarena: error: live: needs root (it creates network namespaces)"


def test_compare_prints_both_engines_side_by_side(clean_host, tmp_path):
    """Two kernel BBR flows at 10 ms against the simulator's: both fair.
    The live split in this 8-s window: 46.1-54.7% for the first flow in nine
    runs with other work on the machine, five of them with a busy loop on
    CPU 0 as well; the simulator 45.4%. Equal-RTT BBR flows trade the lead on seconds'
    scales (docs/live.md), so the bound is wide, not the host's doing."""
    decoys = plant_decoys(tmp_path)  # a user's files named like our temporaries
    done = live_cli("compare", EXAMPLES / "bbr-equal-rtt.toml", "--set", "duration=12s", "--set", "measure.from=4s",
                   "--out", tmp_path / "cmp")
    assert done.returncode == 0, done.stderr
    assert_decoys_intact(decoys)
    # One comparison directory holding two run directories.
    assert rundir.kind_of(tmp_path / "cmp") == "compare"
    assert [rundir.kind_of(tmp_path / "cmp" / e) for e in ("sim", "live")] == ["run", "run"]
    lines = done.stdout.splitlines()
    assert lines[0].split()[:6] == ["flow", "cc", "rtt", "share", "sim", "share"]
    assert any(line.startswith("utilisation") for line in lines)
    assert any(line.startswith("largest share difference") for line in lines)
    for engine in ("sim", "live"):
        summary = json.loads((tmp_path / "cmp" / engine / "summary.json").read_text())
        assert summary["engine"] == engine
        assert all(0.35 <= f["share"] <= 0.65 for f in summary["flows"]), summary["flows"]


def pinned_pacing(samples: list[dict], flow: int, t_from: float, t_to: float) -> tuple[float, float, float]:
    """The longest stretch of `flow`'s `samples` (timeseries.parquet rows)
    in [t_from, t_to) whose pacing rate does not change: (seconds, that
    rate in Mbit/s, the flow's mean goodput over those samples). Linux BBR changes its pacing rate at
    every gain phase of ProbeBW (each one min RTT), so outside its
    long-term ("policed") bandwidth mode no rate survives many 0.1-s
    samples; inside that mode it paces at a fixed lt_bw for 48 rounds."""
    rows = [r for r in samples if r["flow"] == flow and t_from <= r["t_s"] < t_to]
    step = rows[1]["t_s"] - rows[0]["t_s"]
    best: list[dict] = []
    run: list[dict] = []
    for r in rows:
        run = run + [r] if run and r["pacing_rate_mbps"] == run[0]["pacing_rate_mbps"] else [r]
        best = run if len(run) > len(best) else best
    return len(best) * step, best[0]["pacing_rate_mbps"], sum(r["goodput_mbps"] for r in best) / len(best)


def test_userspace_bottleneck_runs_red_like_the_simulator(clean_host, tmp_path):
    """RED (the BBQ paper's Table I setting) has no kernel qdisc here: the
    delay line runs the simulator's queue on real packets. The 10 ms flow's
    share varies more from run to run under RED's random early drops than
    under droptail: measured 14.6% (15 s; simulator 14.2%), 15.8-28.9% in
    12-s runs (simulator 15.8%), 11.6-14.3% in the window below (simulator
    16.5%); the long-RTT flow always dominates.

    The window (4-9.5 s) ends before the flows' first ProbeRTT (~10 s):
    live, the two ProbeRTTs do not always coincide, and when the 10 ms
    flow takes the link during the 50 ms flow's (the paper's Fig. 8) RED
    drops hundreds of packets a second as the 50 ms flow returns. A window
    reaching to 12 s caught that in 2 of 6 runs (live/sim drops 2.8 and
    3.2, else 1.1-1.3); the full 120-s example, which contains every such
    event, gives 1.12. In this window: 1.21-1.38 in 5 runs; a later session
    (other work on the machine, and in two runs a busy loop on CPU 0):
    1.21-1.41 in nine runs, the 10 ms flow at 11.7-14.1%.

    BBR's long-term bandwidth mode. RED's forced drops after start-up
    (average above `max`: every arrival dropped) reach Linux BBR's policer
    test (>= 20% loss over >= 4 rounds, twice at the same rate), and the
    flow then paces at that fixed rate for 48 rounds (~3.8 s for the 50 ms
    flow). Both engines do it: the 50 ms flow at ~1.5 s in 3 of 16 live
    runs (2026-11-26) and 14 of 40 simulated seeds, pinned at 70-77 Mbit/s
    and ending ~5 s, leaving the 10 ms flow 16-20% of the window. Where
    the pinned rate is lower, or the episode lies in the window, the split
    is the pinned rate's: one CI run gave the 10 ms flow 44.2%, the 50 ms
    flow 52.8 Mbit/s with 155 retransmissions (unpinned runs: 430-610),
    consistent with a lower pinned rate (its trace was not kept).
    The simulator's seed-1 run has no episode in the window, so a run
    with one (a rate unchanged >= 1 s; unpinned, no rate lasts more than
    0.7 s: 26 live runs, 40 seeds) is checked against the mode instead:
    the pinned flow delivers its pinned rate and the other flow the rest."""
    window = (4.0, 9.5)
    live, sim = compare_summaries(tmp_path, EXAMPLES / "red-example.toml", "duration=10s",
                                  f"measure.from={window[0]}s", f"measure.to={window[1]}s")
    assert live["live"]["bottleneck"].startswith("userspace")
    assert live["conservation"]["max_queue_bytes"] < 1_000_000  # RED drops early: the queue never fills 2 MB
    # The userspace queue counts each flow's drops (whole run); they cover
    # the window's drops and are segments that left and never arrived.
    per_flow = live["conservation"]["flows"]
    assert sum(f["dropped"] for f in per_flow) >= live["drops"] > 0
    assert all(0 < f["dropped"] <= f["sent"] - f["arrived"] and f["balanced"] for f in per_flow), per_flow
    samples = pq.read_table(tmp_path / "cmp" / "live" / "timeseries.parquet").to_pylist()
    assert max(r["queue_bytes"] for r in samples) > 0  # each flow's bytes in the queue

    pinned = [pinned_pacing(samples, flow, *window) for flow in (0, 1)]
    seen = {"flows": live["flows"], "drops": (live["drops"], sim["drops"]), "pinned (s, Mbit/s, goodput)": pinned,
            "limited": live["live"]["limited"]}
    episodes = [(flow, rate, goodput) for flow, (seconds, rate, goodput) in enumerate(pinned) if seconds >= 1.0]
    if not episodes:
        short, long_ = live["flows"]
        assert 0.05 <= short["share"] <= 0.4 and long_["share"] >= 0.6, seen
        assert live["drops"] > 100 and 0.5 <= live["drops"] / sim["drops"] <= 2.0, seen
    for flow, rate, goodput in episodes:
        # Goodput against the pacing rate: 0.89-1.03 over the part of the
        # three live episodes above inside the window (0.96-1.01 over 2.5-5 s);
        # the link stays full around the pinned flow.
        assert 0.8 * rate <= goodput <= 1.1 * rate, seen
        assert live["utilization"] >= 0.9, seen


def test_a_link_trace_runs_in_the_delay_line_like_the_simulator(clean_host, tmp_path):
    """The example's synthetic cellular trace (28,348 opportunities: more
    than one argument may carry, so the delay line reads it from a file the
    engine removes) through the userspace bottleneck, the trace starting at
    the run's time zero in both engines. A 40-s compare on an idle host:
    BBR 24.9% live vs 24.7% simulated, utilisation 99.7 / 99.5%, mean
    queueing delay 190 / 194 ms. Here 15 s, bounds wide for a busy host."""
    live, sim = compare_summaries(tmp_path, EXAMPLES / "trace-lte-bbr-vs-cubic.toml", "duration=15s", "measure.from=5s")
    assert live["live"]["bottleneck"].startswith("userspace")
    # Utilisation is against the trace's own opportunities in both engines.
    assert 0.8 <= live["utilization"] <= 1.0 and 0.8 <= sim["utilization"] <= 1.0, (live["utilization"],
                                                                                    sim["utilization"])
    assert abs(live["goodput_total_mbps"] - sim["goodput_total_mbps"]) <= 0.15 * sim["goodput_total_mbps"]
    assert not list(Path(tempfile.gettempdir()).glob("ccarena-delayline-*"))


def test_ecn_marks_in_real_headers_are_echoed_and_counted(clean_host, tmp_path):
    """Two kernel CUBIC flows with net.ipv4.tcp_ecn = 1 behind RED with
    ecn in the delay line, which sets CE in the IPv4 header. RED marks
    every ECT packet it would have dropped, so it drops only Not-ECT ones:
    Linux sends retransmissions without ECT (RFC 3168), and on a busy host a
    tail-loss probe or a spurious timeout retransmits, so a drop or two
    can happen (CI: 2 in the window). The receiver's kernel counts every mark
    (tcpi_received_ce = the delay line's marks, exactly), and the sender's
    delivered_ce - classic ECN, ECE until CWR - counts at least them. A
    30-s run: marks 871/447, the same received, delivered_ce 2592/1930,
    no drops; the simulator 380/161."""
    doc = tmp_path / "red-ecn.toml"
    doc.write_text(
        'duration = "15s"\n[measure]\nfrom = "5s"\n[bottleneck]\nrate = "50Mbit"\nbuffer = "2BDP"\naqm = "red"\n'
        '[bottleneck.red]\nmin = "0.2BDP"\nmax = "0.6BDP"\nmax_p = 0.1\necn = true\n'
        '[[flow]]\ncc = "cubic"\nrtt = "40ms"\necn = true\ncount = 2\n')
    done = live_cli("live", "run", doc, "--out", tmp_path / "live")
    assert done.returncode == 0, done.stderr
    live = json.loads((tmp_path / "live" / "summary.json").read_text())
    assert live["marks"] > 0
    losses = live["live"]["losses"]
    # RED marks an ECT packet where it would drop it; only a full buffer
    # (2 BDP: 500,000 bytes) drops one, as in Linux's red without harddrop
    # (crates/sim/src/qdisc/red.rs). Two of six runs on one day overflowed
    # it (491 drops, 372 of them Not-ECT), the others dropped nothing.
    if losses["bottleneck"] != losses["bottleneck_not_ect"]:
        assert live["conservation"]["max_queue_bytes"] >= 500_000 - 2 * 1514, (losses, live["conservation"])
    for f in live["flows"]:
        assert f["ecn"] == "classic"
        assert f["ce_marked"] > 0 and f["ce_received"] == f["ce_marked"], f
        assert f["delivered_ce"] >= f["ce_marked"], f
    # Mixed ECN modes cannot run live (tcp_ecn is per host): one line, exit 2.
    mixed = tmp_path / "mixed.toml"
    mixed.write_text(doc.read_text().replace("count = 2\n", "") + '[[flow]]\ncc = "cubic"\nrtt = "40ms"\n')
    bad = live_cli("live", "run", mixed, "--out", tmp_path / "y")
    assert bad.returncode == 2 and bad.stderr.startswith("ccarena: error: flow.1.ecn:"), bad.stderr
    assert not (tmp_path / "y").exists()


def test_codel_runs_in_the_delay_line_like_the_simulator(clean_host, tmp_path):
    """The CoDel example (BBR vs CUBIC, Linux's defaults): the 60-s compare
    in docs/live.md agreed to 1.2 pp and a median delay 6.5 / 6.9 ms. Here
    20 s; bounds for a busy host."""
    live, sim = compare_summaries(tmp_path, EXAMPLES / "aqm-codel-bbr-vs-cubic.toml", "duration=20s", "measure.from=5s")
    assert live["live"]["bottleneck"].startswith("userspace")
    assert live["drops"] > 0  # CoDel drops at the head; the 4-BDP buffer never fills
    assert live["conservation"]["max_queue_bytes"] < 4 * 250_000
    assert abs(live["flows"][0]["share"] - sim["flows"][0]["share"]) <= 0.15
    assert 0.5 <= live["queue_delay_ms"]["p50"] / sim["queue_delay_ms"]["p50"] <= 2.0


def test_our_bbr_via_bpf_races_the_kernels_and_is_unregistered_after(clean_host, tmp_path):
    """cc = "bbr@ccarena" is cc/bbr.c registered as BPF struct_ops for the
    run (ccarena.kernel) and unregistered afterwards; two equal-RTT flows,
    ours vs the kernel's bbr, share the link (measured 47/53% in 5 s; in
    this 8-s window 45.0-56.4% for ours in nine runs with other work on the
    machine, five of them with a busy loop on CPU 0 as well)."""
    pytest.importorskip("ccarena.kernel", reason="the BPF loader (ccarena.kernel) is not part of this checkout")
    registered_before = is_registered("cc_bbr")
    scenario = tmp_path / "race.toml"
    scenario.write_text(
        'duration = "12s"\n[measure]\nfrom = "4s"\n[bottleneck]\nrate = "100Mbit"\nbuffer = "2MB"\n'
        '[[flow]]\ncc = "bbr@ccarena"\nrtt = "10ms"\n[[flow]]\ncc = "bbr"\nrtt = "10ms"\n'
    )
    done = live_cli("live", "run", scenario, "--out", tmp_path / "run")
    if done.returncode == 2 and "flow[0].cc" in done.stderr:
        pytest.skip(f"cannot load BPF congestion controls here: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["live"]["kernel_cc"] == ["cc_bbr", "bbr"]
    assert all(0.3 <= f["share"] <= 0.7 for f in summary["flows"]), summary["flows"]
    assert registered_after_teardown("cc_bbr", registered_before) == registered_before


def test_bbq_via_bpf_lifts_the_short_flow_live(clean_host, tmp_path):
    """BBQ (cc/bbq.c through BPF, both flows) on the BBR scenario above.

    The issue's headline, 10 ms flow >= 40%, is a 120-s figure: the full
    example measured 44.0, 44.5 and 40.4% live (simulator 46.8%,
    docs/live.md).
    In 15 s BBQ has not finished converging. Measured here in six 15-s
    runs (window 5-15 s): 27.1, 27.7, 28.4, 28.4, 29.8, 32.0% live; the
    simulator gives 33.9-34.8% (seeds 1-6), while BBR gives the same flow
    6-8% in that window (test above). A later session, with other work on
    the machine (and in five runs a busy loop pinned to CPU 0): 19.4-27.2%
    in nine runs, the lowest with the busy loop (BBQ converges more slowly
    where its pacing timers fire late, docs/live.md). BBR gave the same flow
    6.3-7.5% in that session. The floor, 15%, lies below all fifteen runs
    and at twice BBR's highest.

    The queue must stay well below BBR's: BBQ's mean queueing delay was
    12.6-13.1 ms on an idle machine, 13.3-21.3 ms on the busy one, BBR's
    33.7-38.9 ms in the same window, idle or busy. The bound, 25 ms, lies
    between."""
    pytest.importorskip("ccarena.kernel", reason="the BPF loader (ccarena.kernel) is not part of this checkout")
    registered_before = is_registered("cc_bbq")
    out = tmp_path / "run"
    done = live_cli("live", "run", EXAMPLES / "bbq-rtt-fairness.toml", *SHORT, "--out", out)
    if done.returncode == 2 and "flow[0].cc" in done.stderr:
        pytest.skip(f"cannot load BPF congestion controls here: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["live"]["kernel_cc"] == ["cc_bbq", "cc_bbq"]
    assert summary["flows"][0]["share"] >= 0.15, summary["flows"]
    assert summary["queue_delay_ms"]["mean"] <= 25.0, summary["queue_delay_ms"]
    assert summary["utilization"] >= 0.87
    assert registered_after_teardown("cc_bbq", registered_before) == registered_before


def test_paced_bbr_through_bpf_sends_no_bursts(clean_host, tmp_path):
    """One BBR flow (cc/bbr.c through BPF), 20 Mbit/s, 40 ms, a 0.5-BDP
    buffer: pacing spreads every send, as the kernel's bbr does. With a BPF
    min_tso_segs registered, this kernel sent a burst of up to
    cwnd - inflight packets about once a second (10-ms in-flight increases
    of 69-71 packets, 223-415 retransmissions from 2 s to 15 s); the kernel's
    bbr: at most 18-22 packets per 10 ms, 0-18 retransmissions; ours
    without the op (cc/include/bbr_core.h): 18 and 0. Bounds: 30 packets
    per 10 ms (1.25 x pacing allows ~21); retransmissions at most 60 more
    than twice the kernel's bbr's in the same scenario, run just after:
    on a busy host the delay line's late deliveries cost both some (ours
    117 in one such run, against a bound of 60 the kernel's was not run
    against)."""
    pytest.importorskip("ccarena.kernel", reason="the BPF loader (ccarena.kernel) is not part of this checkout")
    retransmits = {}
    for cc in ("bbr@ccarena", "bbr"):
        scenario = tmp_path / f"{cc}.toml"
        scenario.write_text(
            'duration = "15s"\n[measure]\nfrom = "2s"\n[output]\ninterval = "10ms"\n'
            f'[bottleneck]\nrate = "20Mbit"\nbuffer = "0.5bdp"\n[[flow]]\ncc = "{cc}"\nrtt = "40ms"\n'
        )
        out = tmp_path / cc
        done = live_cli("live", "run", scenario, "--out", out)
        if done.returncode == 2 and "flow[0].cc" in done.stderr:
            pytest.skip(f"cannot load BPF congestion controls here: {done.stderr.strip()}")
        assert done.returncode == 0, done.stderr
        if cc == "bbr@ccarena":
            t = pq.read_table(out / "timeseries.parquet").to_pydict()
            rise = [t["inflight"][i] - t["inflight"][i - 1] for i in range(1, len(t["t_s"])) if t["t_s"][i] > 1.5]
            assert max(rise) <= 30, f"a burst: in flight rose by {max(rise)} packets in 10 ms"
        retransmits[cc] = json.loads((out / "summary.json").read_text())["flows"][0]["retransmits"]
    assert retransmits["bbr@ccarena"] <= 60 + 2 * retransmits["bbr"], retransmits


def test_a_bpf_algorithm_reports_its_own_state_live(clean_host, tmp_path):
    """Our algorithms' CCA_TRACE / CCA_TRACE_VAR reach the live time series
    through their per-socket trace record (ccarena.live.cctrace), as in the
    simulator: BBR-CWS against the kernel's CUBIC in a 0.5-BDP buffer
    (examples/bbr-cws-vs-cubic.toml, 15 s). Its upper_scaling_factor
    (cc_var) starts at 1 and falls with the losses: 0.93 at 1.6 s and
    0.56-0.73 from 3 s on in a 20-s run (the simulator: 0.51-0.66 over
    60 s, seeds 1-3); BBR's mode is ProbeBW (2) or ProbeRTT (3) after
    Startup, with ProbeBW's gains. The kernel's CUBIC reports nothing."""
    pytest.importorskip("ccarena.kernel", reason="the BPF loader (ccarena.kernel) is not part of this checkout")
    out = tmp_path / "run"
    done = live_cli("live", "run", EXAMPLES / "bbr-cws-vs-cubic.toml", *SHORT, "--out", out)
    if done.returncode == 2 and "flow[0].cc" in done.stderr:
        pytest.skip(f"cannot load BPF congestion controls here: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    t = pq.read_table(out / "timeseries.parquet").to_pydict()
    cws = [i for i, f in enumerate(t["flow"]) if f == 0 and t["t_s"][i] >= 3.0]
    usf = [t["cc_var"][i] for i in cws]
    assert all(v is not None and 0.2 <= v <= 1.0 for v in usf), usf
    assert min(usf) < 0.9, "the factor never fell in a buffer of half a BDP"
    assert {t["cc_mode"][i] for i in cws} <= {2, 3}
    assert {t["pacing_gain"][i] for i in cws if t["cc_mode"][i] == 2} <= {0.75, 1.0, 1.25}
    assert all(t["bw_estimate_mbps"][i] and 0 < t["bw_estimate_mbps"][i] <= 20 * 1.05 for i in cws)
    cubic = [i for i, f in enumerate(t["flow"]) if f == 1]
    assert all(t["cc_var"][i] is None and t["bw_estimate_mbps"][i] is None for i in cubic)


def test_one_gigabit_bottleneck_loses_nothing_unexplained(clean_host, tmp_path):
    """At 1 Gbit/s the engine moves the kernel's forwarding off the delay
    line's CPU (testbed.SPLIT_FROM_BPS). How much of the rate one CUBIC flow
    gets depends on the machine and its load -- 955.6 Mbit/s (the payload
    ceiling) on an idle machine of this kind, 594-665 Mbit/s on a slower
    one, 686-860 in this test here with other work on the machine, with or
    without a busy loop pinned to a core -- so that figure is a benchmark's
    (`make bench-delayline` prints it), not a test's.

    What holds on any host: every segment that left the sender and never
    arrived was dropped where a counter saw it. On a slow or busy host the
    testbed itself drops (per-CPU backlogs of netdev_max_backlog packets
    overflow when the CPU behind them falls behind: measured here up to
    1803 packets at the receiver's veth, 398 frames out of the delay line)
    and reorders (the senders' packets reach the router from both CPUs;
    up to 483 reorderings seen, some answered by spurious retransmissions);
    none of it may go uncounted. With nothing dropped outside the
    bottleneck, the losses are exactly the bottleneck's drops (measured:
    equal in all 13 such runs, with other work on the machine and a busy
    loop pinned to CPU 0 or to CPU 1, which carries the forwarding; in the
    two runs that had host drops, none went unexplained)."""
    scenario = tmp_path / "gig.toml"
    scenario.write_text('duration = "10s"\n[measure]\nfrom = "2s"\n[bottleneck]\nrate = "1Gbit"\nbuffer = "2MB"\n'
                        '[[flow]]\ncc = "cubic"\nrtt = "10ms"\n')
    done = live_cli("live", "run", scenario, "--out", tmp_path / "run")
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    live = summary["live"]
    assert live["split_forwarding"] is (len(os.sched_getaffinity(0)) > 1)
    losses = live["losses"]
    print(f"\n1 Gbit/s: {summary['flows'][0]['goodput_mbps']:.1f} Mbit/s, losses {losses}, "
          f"delay line lateness max {live['delay_line']['lateness_max_us']:.0f} us")
    assert losses["unexplained_losses"] == 0, losses
    assert losses["sent_segments"] >= losses["arrived_segments"] > 0
    dl = live["delay_line"]  # percentiles from an HDR histogram: at most 1/1024 above the exact value
    assert dl["lateness_p50_us"] <= dl["lateness_p99_us"] <= dl["lateness_p999_us"] \
        <= dl["lateness_max_us"] * (1 + 1 / 1024) + 1e-3, dl
    assert 0 <= dl["late_over_1ms"] <= dl["packets"], dl
    if losses["drained"] and not losses["testbed_total"]:
        assert losses["lost_segments"] == losses["bottleneck"], losses
    # A host drop is reported, not hidden: one warning line naming the places.
    warned = [line for line in done.stderr.splitlines() if "the host dropped packets" in line]
    assert bool(warned) == bool(losses["testbed_total"]), done.stderr
    # The delay line never releases a packet early: no RTT below the base.
    assert summary["flows"][0]["rtt_mean_ms"] >= 10.0


def test_capacity_is_measured_once_cached_and_warned_about(clean_host, tmp_path):
    """The first live run on a machine measures what it carries through
    the testbed (capacity.py) and caches the figure with what it depends
    on; later runs reuse it, and a scenario asking for more than half of
    it gets one warning line naming both numbers (the run goes ahead)."""
    from ccarena.live import capacity

    env = {**WAIT_ENV, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env.pop("CCARENA_LIVE_CAPACITY", None)
    first = subprocess.run([sys.executable, "-m", "ccarena", "live", "capacity"], capture_output=True, text=True,
                           env=env, timeout=300, check=False)
    assert first.returncode == 0, first.stderr
    assert "measuring what this host carries" in first.stderr
    cache = tmp_path / "cache" / "ccarena" / "live-capacity.json"
    record = json.loads(cache.read_text())
    assert record["key"] == capacity.host_key(DELAYLINE)  # the binary's SHA-256, kernel, CPUs
    assert record["goodput_mbps"] > 0
    assert f"carries {record['goodput_mbps']:g} Mbit/s" in first.stdout
    again = subprocess.run([sys.executable, "-m", "ccarena", "live", "capacity"], capture_output=True, text=True,
                           env=env, timeout=300, check=False)
    assert again.returncode == 0 and "measuring" not in again.stderr, again.stderr
    # A figure below twice the scenario's rate: the run warns and goes on.
    cache.write_text(json.dumps({**record, "goodput_mbps": 150.0}))
    done = subprocess.run([sys.executable, "-m", "ccarena", "live", "run", EXAMPLES / "bbr-single-40ms.toml",
                           "--set", "duration=2s", "--set", "measure.from=1s", "--out", tmp_path / "run"],
                          capture_output=True, text=True, env=env, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if "carried through the testbed flat out" in line]
    assert len(warnings) == 1 and "(100 Mbit/s)" in warnings[0] and "(150 Mbit/s;" in warnings[0], done.stderr
    assert "measuring" not in done.stderr
