"""The live engine on this machine's kernel: real TCP in network namespaces.

Runs only as root with the delay line built (`make build`), and skips
otherwise with the reason. Each test runs at most 15 s of traffic; every
test checks afterwards that nothing is left: no ccalive-* namespaces, no
delay-line or agent processes, no ccarena devices or qdiscs in the host's
namespace, and the same registered congestion controls as before.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import EXAMPLES, REPO, run_cli

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
    suite's) is active meanwhile, and every finished one has cleaned up."""
    fd = os.open(LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    pytest.fail("the live testbed stayed locked by another run")
                time.sleep(0.5)
        yield fd
    finally:
        os.close(fd)


def our_processes(parent: int | None = None) -> list[str]:
    """Delay lines and agents (of the engine ``parent`` if given)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if ("delayline --tun" in cmd or "ccarena.live.agent" in cmd) and parent in (None, ppid):
            found.append(f"{entry.name}: {cmd.strip()}")
    return found


#: Our runs wait for a developer's live run to finish instead of failing.
WAIT_ENV = {**os.environ, "CCARENA_LIVE_WAIT": "300"}


def live_cli(*args: str | Path, wait: bool = True) -> subprocess.CompletedProcess[str]:
    """`python -m ccarena ARGS`, waiting for the testbed if ``wait``."""
    return subprocess.run([sys.executable, "-m", "ccarena", *map(str, args)], capture_output=True, text=True,
                          env=WAIT_ENV if wait else {**os.environ, "CCARENA_LIVE_WAIT": "0"}, timeout=600, check=False)


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
        # Processes killed by PR_SET_PDEATHSIG may take a moment to be reaped.
        deadline = time.monotonic() + 3
        while any(leftovers().values()) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert leftovers() == {"namespaces": [], "links": [], "tun devices": [], "qdiscs": [], "processes": []}
        # (Registered congestion controls: checked by the BPF test, the only
        # one that registers; other tests would race other users' loads.)


def is_registered(name: str) -> bool:
    return name in AVAILABLE.read_text().split()


def registered_after_teardown(name: str, expected: bool, timeout_s: float = 10) -> bool:
    """Whether ``name`` is registered, once it has had time to become
    ``expected``: the kernel drops an unregistered struct_ops when the last
    socket using it is freed, which the (asynchronous) namespace teardown
    does shortly after a run."""
    deadline = time.monotonic() + timeout_s
    while is_registered(name) != expected and time.monotonic() < deadline:
        time.sleep(0.1)
    return is_registered(name)


@pytest.fixture
def clean_host():
    with holding_testbed():
        before = AVAILABLE.read_text()
        assert not any(leftovers().values()), "live leftovers exist before the test"
    yield before
    assert_clean(before)


def test_bbr_rtt_unfairness_live(clean_host, tmp_path):
    """Linux BBR, 10 vs 50 ms on 100 Mbit/s with 2 MB: the 10 ms flow gets
    ~6% (BBQ paper: 6.3 of 93.6 Mbit/s). Measured here in 15-s runs:
    6.2, 7.2, 8.1% (5-8 s runs: 6.7-8.9%: the 50 ms flow is still growing
    its share in the first seconds; the simulator gives 7.2% for the same
    15 s); the bounds leave room for a busy 2-core machine."""
    out = tmp_path / "run"
    done = live_cli("live", "run", EXAMPLES / "bbr-rtt-unfairness.toml", *SHORT, "--out", out)
    assert done.returncode == 0, done.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["engine"] == "live"
    short, long_ = summary["flows"]
    assert 0.02 <= short["share"] <= 0.15, summary["flows"]
    assert long_["share"] >= 0.85
    # Measured in 15-s runs (window 5-15 s) on an otherwise idle 2-core
    # machine: 90.2, 93.0, 95.0, 96.4% (the simulator: 97.6%); the first
    # ProbeRTT falls inside this short window. The floor sits below the
    # lowest of those, not at the simulator's figure.
    assert summary["utilization"] >= 0.87
    # The delay line held the base RTT: BBR's min_rtt is ~10 and ~50 ms.
    assert 9.0 <= short["rtt_mean_ms"] and 49.0 <= long_["rtt_mean_ms"]
    assert summary["live"]["delay_line"]["dropped_overflow"] == 0
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


def test_ctrl_c_mid_run_leaves_nothing(clean_host, tmp_path):
    out = tmp_path / "run"
    proc = subprocess.Popen(
        [sys.executable, "-m", "ccarena", "live", "run", EXAMPLES / "bbr-rtt-unfairness.toml", *SHORT, "--out", out],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True, env=WAIT_ENV,
    )
    deadline = time.monotonic() + 300
    while len(our_processes(proc.pid)) < 3 and time.monotonic() < deadline:  # traffic is running
        time.sleep(0.1)
    assert len(our_processes(proc.pid)) == 3, "the run never started its delay line and agents"
    time.sleep(2)
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert err.strip().splitlines()[-1] == "ccarena: error: interrupted"
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
    deadline = time.monotonic() + 3
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
        os.write(fd, b"4242\n")
        done = live_cli("live", "run", EXAMPLES / "bbr-rtt-unfairness.toml", *SHORT, "--out", tmp_path / "x", wait=False)
        cleanup = live_cli("live", "cleanup", wait=False)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"ccarena: error: live: another live run (pid 4242) holds the testbed ({LOCK}); wait for it to finish"
    )
    assert cleanup.returncode == 2 and "holds the testbed" in cleanup.stderr
    assert not (tmp_path / "x").exists()


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
    """Two kernel BBR flows at 10 ms against the simulator's: both fair."""
    done = live_cli("compare", EXAMPLES / "bbr-equal-rtt.toml", "--set", "duration=12s", "--set", "measure.from=4s",
                   "--out", tmp_path / "cmp")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split()[:6] == ["flow", "cc", "rtt", "share", "sim", "share"]
    assert any(line.startswith("utilisation") for line in lines)
    assert any(line.startswith("largest share difference") for line in lines)
    for engine in ("sim", "live"):
        summary = json.loads((tmp_path / "cmp" / engine / "summary.json").read_text())
        assert summary["engine"] == engine
        assert all(0.35 <= f["share"] <= 0.65 for f in summary["flows"]), summary["flows"]


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
    event, gives 1.12. In this window: 1.21-1.38 in 5 runs."""
    done = live_cli("compare", EXAMPLES / "red-example.toml", "--set", "duration=10s", "--set", "measure.from=4s",
                    "--set", "measure.to=9.5s", "--out", tmp_path / "cmp")
    assert done.returncode == 0, done.stderr
    live = json.loads((tmp_path / "cmp" / "live" / "summary.json").read_text())
    sim = json.loads((tmp_path / "cmp" / "sim" / "summary.json").read_text())
    assert live["live"]["bottleneck"].startswith("userspace")
    assert live["drops"] > 100  # RED drops early: the queue never fills 2 MB
    assert live["conservation"]["max_queue_bytes"] < 1_000_000
    short, long_ = live["flows"]
    assert 0.05 <= short["share"] <= 0.4 and long_["share"] >= 0.6, live["flows"]
    assert 0.5 <= live["drops"] / sim["drops"] <= 2.0, (live["drops"], sim["drops"])
    # The userspace queue counts each flow's drops (whole run); they cover
    # the window's drops and are segments that left and never arrived.
    per_flow = live["conservation"]["flows"]
    assert sum(f["dropped"] for f in per_flow) >= live["drops"]
    assert all(0 < f["dropped"] <= f["sent"] - f["arrived"] and f["balanced"] for f in per_flow), per_flow
    import pyarrow.parquet as pq

    per_flow_queue = pq.read_table(tmp_path / "cmp" / "live" / "timeseries.parquet").column("queue_bytes").to_pylist()
    assert max(per_flow_queue) > 0  # the userspace queue reports each flow's bytes


def test_our_bbr_via_bpf_races_the_kernels_and_is_unregistered_after(clean_host, tmp_path):
    """cc = "bbr@ccarena" is cc/bbr.c registered as BPF struct_ops for the
    run (ccarena.kernel) and unregistered afterwards; two equal-RTT flows,
    ours vs the kernel's bbr, share the link (measured 47/53% in 5 s)."""
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
    6-8% in that window (test above). The floor of 20% sits below all
    six runs and far above BBR; the queue (12.6-13.1 ms live, BBR ~36 ms)
    must stay well below BBR's."""
    pytest.importorskip("ccarena.kernel", reason="the BPF loader (ccarena.kernel) is not part of this checkout")
    registered_before = is_registered("cc_bbq")
    out = tmp_path / "run"
    done = live_cli("live", "run", EXAMPLES / "bbq-rtt-fairness.toml", *SHORT, "--out", out)
    if done.returncode == 2 and "flow[0].cc" in done.stderr:
        pytest.skip(f"cannot load BPF congestion controls here: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["live"]["kernel_cc"] == ["cc_bbq", "cc_bbq"]
    assert summary["flows"][0]["share"] >= 0.20, summary["flows"]
    assert summary["queue_delay_ms"]["mean"] <= 20.0, summary["queue_delay_ms"]
    assert summary["utilization"] >= 0.87
    assert registered_after_teardown("cc_bbq", registered_before) == registered_before


def test_one_gigabit_bottleneck_is_reached(clean_host, tmp_path):
    """At 1 Gbit/s the engine moves the kernel's forwarding off the delay
    line's CPU (testbed.SPLIT_FROM_BPS). One CUBIC flow, 10 ms, 2 MB: two
    runs gave 955.6 and 955.7 Mbit/s, the TCP payload ceiling (1448/1514
    of the rate: 956); without the split 867 Mbit/s at an RTT of 279 ms.
    The floor of 900 Mbit/s lies between the two."""
    scenario = tmp_path / "gig.toml"
    scenario.write_text('duration = "10s"\n[measure]\nfrom = "2s"\n[bottleneck]\nrate = "1Gbit"\nbuffer = "2MB"\n'
                        '[[flow]]\ncc = "cubic"\nrtt = "10ms"\n')
    done = live_cli("live", "run", scenario, "--out", tmp_path / "run")
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["live"]["split_forwarding"] is True
    assert summary["flows"][0]["goodput_mbps"] >= 900, summary["flows"]
    assert summary["flows"][0]["rtt_mean_ms"] < 40  # the delay line kept up: 10 ms + the queue's ~16 ms at most
