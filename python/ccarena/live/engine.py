"""``ccarena live run``: the scenario on real Linux TCP in a namespace
testbed (see testbed.py), with the same summary.json / parquet / plot as
the simulator (the telemetry is shaped like the engine's raw result and
goes through metrics.py, tables.py and plots.py unchanged)."""

from __future__ import annotations

import dataclasses
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from .. import progress
from ..errors import ScenarioError
from ..results import Result
from ..rundir import check_target
from ..scenario import ResolvedScenario, apply_overrides, read_source, resolve, source_dir
from ..topology import is_topology, link_configs
from . import capacity, interrupts, iperf3, testbed, workloads
from .agents import Agents
from .ccs import cc_key, cleanup_registrations, is_kernel_cc, known_names, resolve_kernel_names
from .hygiene import TestbedLock, cleanup_leftovers, delete_namespaces, run_prefix
from .hostmodel import cpu_times, steal_fraction
from .processes import READY_TIMEOUT_S, Child
from .rawresult import build_raw

#: Shortest telemetry interval (the bottleneck is read with `tc` per tick).
MIN_INTERVAL_NS = 10_000_000
#: Between the start signal and t0, for every agent to be waiting.
_START_LEAD_NS = 300_000_000


def delayline_binary() -> Path:
    env = os.environ.get("CCARENA_DELAYLINE")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[3] / "target" / "release" / "delayline"


#: What a live run's summary says of its hosts.
LIVE_HOST = "real (the live engine adds no host model)"


def load_live_scenario(
    source: str | Path | Mapping[str, Any] | ResolvedScenario,
    overrides: Mapping[str, Any] | Iterable[tuple[str, Any]] | None = None,
    bottleneck: str = "auto",
    base_dir: Path | None = None,
) -> ResolvedScenario:
    """Like :func:`ccarena.load_scenario`, with the live engine's cc names
    (the kernel's, ``NAME@ccarena``) and its limits checked."""
    if isinstance(source, ResolvedScenario):
        resolved = source
    else:
        doc, name = read_source(source)
        if overrides:
            doc = apply_overrides(doc, overrides)
        for table in ("flow", "workload"):
            for i, flow in enumerate(doc.get(table) or []):
                if isinstance(flow, dict) and flow.get("params") and is_kernel_cc(str(flow.get("cc"))):
                    raise ScenarioError(
                        f"{table}[{i}].params",
                        f"the live engine cannot set a kernel algorithm's parameters (use '{flow.get('cc')}@ccarena')",
                    )
        from .. import _core

        resolved = resolve(doc, name=name, known_ccs=known_names(set(_core.cc_names())), base_dir=base_dir if base_dir is not None else source_dir(source))
        # The live engine's hosts are real: it adds no host model (the
        # scenario's `host` is the simulator's).
        resolved.config.pop("host", None)
        resolved.human["host"] = LIVE_HOST
    check_supported(resolved, bottleneck)
    return resolved


BOTTLENECKS = ("auto", "kernel", "userspace")


def check_supported(scenario: ResolvedScenario, bottleneck: str = "auto") -> str:
    """Refuses what the live engine cannot run; returns the bottleneck to
    use: ``kernel`` (TBF + bfifo) for a plain droptail link, ``userspace``
    (the simulator's queue inside the delay line) for RED, fair queueing,
    a policer, random loss, a rate schedule or a topology ([[link]]s: the
    delay line then carries every link and route), or when asked for."""
    cfg = scenario.config
    bn = cfg["bottleneck"]
    if bottleneck not in BOTTLENECKS:
        raise ScenarioError("--bottleneck", f"expected one of {', '.join(BOTTLENECKS)}, got {bottleneck!r}")
    links = "link" in scenario.human
    for k, link in enumerate(link_configs(cfg)):
        if link.get("aggregate_ns"):
            raise ScenarioError(f"link[{k}].aggregate" if links else "bottleneck.aggregate",
                                "the live engine has no aggregating link; an aggregating link runs in the simulator")
    if len(endpoints(cfg)) > testbed.MAX_FLOWS:
        raise ScenarioError("flow", f"the live testbed supports at most {testbed.MAX_FLOWS} flows and workloads")
    workloads.schedule(cfg)  # refuses more arrivals than the agents take
    if cfg["interval_ns"] < MIN_INTERVAL_NS:
        raise ScenarioError("output.interval", "the live engine samples at most every 10ms")
    needs_userspace = [
        reason for reason, present in (
            ("[[link]] tables (a topology)", links),
            (f"aqm = \"{bn['aqm']}\"", bn["aqm"] != "droptail"),
            ("a policer", bn.get("policer") is not None),
            ("random loss", bn["loss"] > 0),
            ("a rate schedule", bool(bn["schedule"])),
            ("a link trace", bn.get("trace") is not None),
            ("a step marker (mark_threshold)", bn.get("mark_threshold") is not None),
        ) if present
    ]
    ecn_mode(cfg)
    if bottleneck == "kernel" and needs_userspace:
        raise ScenarioError("--bottleneck", f"the kernel bottleneck (TBF + bfifo) cannot do {needs_userspace[0]} "
                            "here (one link, no sch_red, no netem); use --bottleneck userspace")
    if bottleneck == "auto":
        return "userspace" if needs_userspace else "kernel"
    return bottleneck


def endpoints(cfg: dict[str, Any]) -> list[dict[str, Any]]:
    """The delay line's endpoints, each an address of the sender
    namespace: the [[flow]]s, then one per [[workload]] (all of its flows
    connect from it: its RTT, path and jitter)."""
    return [*cfg["flows"], *(cfg.get("workloads") or [])]


def ecn_mode(cfg: dict[str, Any]) -> str:
    """The flows' common ECN mode: the live engine sets ECN per host
    (net.ipv4.tcp_ecn in the sender's and the receiver's namespace), so
    every flow must use the same; AccECN needs a kernel that accepts
    tcp_ecn = 3."""
    modes = [f.get("ecn", "off") for f in endpoints(cfg)]
    for i, mode in enumerate(modes):
        if mode != modes[0]:
            where = f"flow.{i}.ecn" if i < len(cfg["flows"]) else f"workload.{i - len(cfg['flows'])}.ecn"
            raise ScenarioError(where, f"{mode!r} differs from flow 0's {modes[0]!r}: the live engine sets "
                                "ECN per host (net.ipv4.tcp_ecn), for all flows at once")
    if modes[0] == "accecn" and not _kernel_accepts_tcp_ecn(testbed.TCP_ECN["accecn"]):
        raise ScenarioError("flow.0.ecn", "this kernel does not accept net.ipv4.tcp_ecn = 3 (AccECN): "
                            "use ecn = true (classic) live")
    return modes[0]


def _kernel_accepts_tcp_ecn(value: int) -> bool:
    """Tries the value in a throwaway network namespace (gone with the
    process: nothing to clean up)."""
    done = subprocess.run(["unshare", "--net", "sh", "-c", f"echo {value} > /proc/sys/net/ipv4/tcp_ecn"],
                          capture_output=True, text=True)
    return done.returncode == 0


#: Above this, the bottleneck's JSON goes to the delay line in a file
#: (`--bottleneck @FILE`): Linux caps one argument at 128 KiB, which a link
#: trace's opportunities can exceed.
MAX_INLINE_BOTTLENECK_BYTES = 64 << 10


def delay_line_args(cfg: dict[str, Any], mode: str, bottleneck_file: Path | None = None) -> list[str]:
    """The delay line's flow arguments: each flow's one-way delay (half its
    RTT, in both directions) and its RTT schedule, halved the same way,
    relative to the run's t0; its ACKs' jitter, drawn from the run's seed
    as the simulator draws it; with the userspace bottleneck, its
    configuration (the delay line then keeps its device per-packet),
    written to a file beside ``bottleneck_file`` when it is larger than an
    argument may be; a topology's links likewise (link 0 first), and each
    flow's path and reverse path through them."""
    args = []
    topology = is_topology(cfg)
    for i, f in enumerate(endpoints(cfg)):
        addr = testbed.flow_addr(i)
        args += ["--flow", f"{addr}={f['rtt_ns'] // 2}"]
        if f.get("rtt_schedule"):
            changes = ",".join(f"{c['at_ns']}:{c['rtt_ns'] // 2}" for c in f["rtt_schedule"])
            args += ["--flow-schedule", f"{addr}={changes}"]
        if f.get("jitter_ns"):
            args += ["--flow-jitter", f"{addr}={f['jitter_ns']}"]
        if topology:
            args += ["--flow-path", f"{addr}={','.join(map(str, f.get('path') or [0]))}"]
            if f.get("reverse_path"):
                args += ["--flow-reverse", f"{addr}={','.join(map(str, f['reverse_path']))}"]
    if mode == "userspace":
        for k, link in enumerate(link_configs(cfg) if topology else [cfg["bottleneck"]]):
            text = json.dumps(link)
            if len(text) > MAX_INLINE_BOTTLENECK_BYTES:
                if bottleneck_file is None:
                    raise ValueError("a bottleneck this large needs a file")
                path = bottleneck_file if k == 0 else bottleneck_file.with_name(f"link{k}-{bottleneck_file.name}")
                path.write_text(text)
                text = f"@{path}"
            args += ["--bottleneck", text]
    if mode == "userspace" or any(f.get("jitter_ns") for f in endpoints(cfg)):
        args += ["--seed", str(cfg["seed"])]
    return args


def check_prerequisites() -> Path:
    if os.geteuid() != 0:
        raise ScenarioError("live", "needs root (it creates network namespaces)")
    for tool in ("ip", "tc", "sysctl"):
        if shutil.which(tool) is None:
            raise ScenarioError("live", f"'{tool}' not found (apt-get install iproute2 procps)")
    if not Path("/dev/net/tun").exists():
        raise ScenarioError("live", "/dev/net/tun is missing (the delay line needs TUN)")
    binary = delayline_binary()
    if not os.access(binary, os.X_OK):
        raise ScenarioError("live", f"delay line binary {binary} not found (run `make build`)")
    return binary


class _LinkSampler(threading.Thread):
    """Reads the bottleneck's counters at every tick -- `tc -s qdisc` for
    the kernel's, a command to the delay line for the userspace one (which
    also records sojourn times inside the measurement window). A late read
    covers the ticks it missed."""

    def __init__(self, names: testbed.Names, t0: int, cfg: dict[str, Any], delay: Child | None) -> None:
        super().__init__(daemon=True)
        self.names, self.t0, self.delay = names, t0, delay
        self.interval_ns = cfg["interval_ns"]
        self.n_ticks = cfg["duration_ns"] // cfg["interval_ns"]
        self.k_from = cfg["measure_from_ns"] // cfg["interval_ns"]
        self.k_to = min(self.n_ticks, cfg["measure_to_ns"] // cfg["interval_ns"])
        self.samples: dict[int, dict[str, Any]] = {}
        self.stop = threading.Event()
        self.recording = 0  # 0 before the window, 1 inside, 2 after

    def _read(self, k: int) -> dict[str, Any] | None:
        if self.delay is None:
            return testbed.read_bottleneck(self.names)
        command = "s"
        if self.recording == 0 and k >= self.k_from:
            command, self.recording = "s+", 1
        if self.recording == 1 and k >= self.k_to:
            command, self.recording = "s-", 2
        self.delay.send(command)
        return json.loads(self.delay.next_line(time.monotonic() + 5))

    def run(self) -> None:
        k = 0 if self.k_from == 0 and self.delay is not None else 1
        while k <= self.n_ticks and not self.stop.is_set():
            left = self.t0 + k * self.interval_ns - time.monotonic_ns()
            if left > 0 and self.stop.wait(left / 1e9):
                return
            reading = self._read(k)
            if reading is not None and k > 0:
                self.samples[k] = reading
            k = max(k + 1, (time.monotonic_ns() - self.t0) // self.interval_ns + 1)


def run_live(
    scenario: ResolvedScenario,
    out: str | Path | None = None,
    log: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True),
    announce: str | None = None,
    bottleneck: str = "auto",
    wait: float | None = None,
    packet_trace: Path | None = None,
    choices: testbed.Choices = testbed.Choices(),
) -> Result:
    """Run a (live-checked) scenario on the testbed; returns a Result whose
    summary has ``engine: "live"``. Needs root; holds the testbed lock.
    ``choices``: how the testbed is built (testbed.Choices: separate
    senders, HTB, the kernel's socket buffers, iperf3 as the application,
    a delay line per sender), the engine's by default.
    ``packet_trace``: a file for the delay line's packet trace (the host
    measurement's input, crates/delayline/src/trace.rs).
    ``wait``: seconds to wait for it if another live command holds it
    (``math.inf``: until it is free; None: $CCARENA_LIVE_WAIT, else refuse
    at once). ``announce`` is logged once the testbed is ours (so that a
    refusal is the only line printed). Leftovers of killed runs (their
    namespaces and the BPF congestion controls they registered) are
    removed first.

    Ctrl-C, SIGTERM and SIGHUP are deferred while the testbed is ours
    (interrupts.py): the run stops at the next safe point, tears down, and
    the signal then ends the command as it would have otherwise."""
    mode = check_supported(scenario, bottleneck)
    choices.check(scenario.config, mode)
    if packet_trace is not None and choices.delays != testbed.DELAYS[0]:
        raise ScenarioError("live", "a packet trace is one delay line's; per-sender delay lines have several")
    binary = check_prerequisites()
    if choices.app == "iperf3":
        iperf3.check_installed()
    if out is not None:
        check_target(Path(out), "run")
    with interrupts.deferred():
        try:
            lock = TestbedLock()
            lock.acquire(wait, log=log)
            try:
                if announce:
                    log(announce)
                stale = cleanup_leftovers() + cleanup_registrations()
                if stale:
                    log(f"ccarena: removed leftovers of an earlier live run: {', '.join(stale)}")
                record = host_capacity(binary, log)
                if record is not None:
                    warn = capacity.warning(scenario.config, record)
                    if warn:
                        log(warn)
                result = _execute(scenario, mode, binary, packet_trace=packet_trace, choices=choices)
            finally:
                lock.release()
        except Exception:
            interrupts.check()  # an error the signal caused (e.g. a setup command it killed) is the interrupt
            raise
    losses = result.summary["live"]["losses"]
    if losses["testbed_total"] or losses["unexplained_losses"]:
        log(loss_warning(result.summary["live"]))
    if out is not None:
        result.save(out)
    return result


def loss_warning(live: dict[str, Any]) -> str:
    """One line naming where the host itself dropped packets."""
    losses, dl = live["losses"], live["delay_line"]
    places = ", ".join(f"{place.replace('_', ' ')} {n}" for place, n in losses["testbed"].items() if n)
    text = (f"ccarena: warning: live: the host dropped packets outside the bottleneck ({places or 'none counted'}; "
            f"the bottleneck {losses['bottleneck']}), delay line up to {dl['lateness_max_us'] / 1e3:.1f} ms late")
    if losses["unexplained_losses"]:
        text += f"; {losses['unexplained_losses']} segments lost where nothing counts"
    return text + ": this machine did not carry the scenario cleanly (summary.json: live.losses)"


def host_capacity(binary: Path, log: Callable[[str], None], remeasure: bool = False) -> dict[str, Any] | None:
    """What this host carries through the testbed (capacity.py): the
    environment's figure, the cached one, or measured now (with the
    testbed lock held) and cached. None when the check is off."""
    record = None if remeasure else capacity.override()
    if record == "off":
        return None
    if isinstance(record, dict):
        return record
    record = None if remeasure else capacity.cached(binary)
    if record is None:
        log(f"ccarena: measuring what this host carries through the live testbed (once, ~7 s; "
            f"cached in {capacity.cache_path()})")
        measured = _execute(load_live_scenario(capacity.SCENARIO), "kernel", binary, what="measuring this host")
        record = capacity.store(binary, measured.summary)
    return record


def _execute(scenario: ResolvedScenario, mode: str, binary: Path, what: str = "live traffic",
             packet_trace: Path | None = None, choices: testbed.Choices = testbed.Choices()) -> Result:
    """One run on a fresh testbed (the lock is held): set up, run, tear
    down; the Result, not yet saved. While the traffic runs, a bar of its
    seconds (``what``) at a terminal (ccarena.progress)."""
    cfg = scenario.config
    flows = cfg["flows"]
    arrivals = workloads.schedule(cfg)
    names = testbed.Names.for_prefix(run_prefix(), len(flows) if choices.senders == "separate" else 0)
    tuns = testbed.tun_names(len(flows) if choices.delays == "per-sender" else 0)
    children: list[Child] = []
    stack = ExitStack()
    sampler = None
    try:
        kernel_cc = resolve_kernel_names([cc_key(f) for f in endpoints(cfg)], stack)
        testbed.create_namespaces(names, len(endpoints(cfg)), ecn_mode(cfg), choices.socket_buffers)
        delays = _start_delay_lines(cfg, mode, binary, names, tuns, packet_trace, children)
        testbed.route_through_delay_line(names, tuns)
        split = capacity.fastest_rate_bps(cfg) >= testbed.SPLIT_FROM_BPS and testbed.split_forwarding(
            names, [d.proc.pid for d in delays], tuns)
        if mode == "kernel":
            testbed.install_bottleneck(names, cfg["bottleneck"]["rate_bps"], cfg["bottleneck"]["buffer_bytes"],
                                       choices.qdisc)

        if choices.app == "iperf3":
            app: Agents | iperf3.Iperf3App = iperf3.Iperf3App(cfg, names, [kernel_cc[cc_key(f)] for f in flows],
                                                              children)
        else:
            app = Agents(cfg, names, kernel_cc, endpoints(cfg), arrivals, children)
        t0 = time.monotonic_ns() + _START_LEAD_NS
        for delay in delays:
            delay.send(f"t0 {t0}")
        sampler = _LinkSampler(names, t0, cfg, delays[0] if mode == "userspace" else None)
        sampler.start()
        steal_before = cpu_times()
        app.start(t0)
        deadline = time.monotonic() + (_START_LEAD_NS + cfg["duration_ns"]) / 1e9 + 20
        with progress.seconds(cfg["duration_ns"] / 1e9, what) as bar, progress.WallClockTicker(bar, t0 / 1e9):
            app.wait_traffic(deadline)
        rx_doc, tx_doc, app_summary = app.results()
        steal = steal_fraction(steal_before, cpu_times())
        sampler.join(timeout=5)
        counters = testbed.read_counters(names)  # before the delay lines (and their TUN devices) go
        delay_stats = _stop_delay_lines(delays)
    finally:
        # Signals are only recorded meanwhile (interrupts.deferred).
        if sampler is not None:
            sampler.stop.set()
        for child in reversed(children):
            child.kill()
        delete_namespaces(names.all())
        stack.close()

    if tx_doc["errors"]:
        raise ScenarioError("live", tx_doc["errors"][0])
    delay_line = merged_delay_stats(delay_stats)
    raw = build_raw(cfg, rx_doc, tx_doc, sampler.samples, delay_line if mode == "userspace" else None)
    add_sized_flows(cfg, raw, arrivals, tx_doc, rx_doc)
    result = Result(scenario, raw)
    result.summary["engine"] = "live"
    result.summary["live"] = {
        "kernel": platform.release(),
        "kernel_cc": [kernel_cc[cc_key(f)] for f in flows],
        "bottleneck": (("userspace (the simulator's queues in the delay line, a topology of "
                        f"{len(link_configs(cfg))} links)" if is_topology(cfg) else
                        "userspace (the simulator's queue in the delay line)")
                       if mode == "userspace" else f"kernel ({choices.qdisc.upper()} + bfifo)"),
        "delay_line": delay_line,
        **({"delay_lines": delay_stats} if len(delay_stats) > 1 else {}),
        "split_forwarding": split,
        "testbed": dataclasses.asdict(choices),
        # The share of the machine's CPU time its hypervisor gave others
        # during the traffic (/proc/stat): stalls grow with it.
        "cpu_steal": round(steal, 4),
        "link_samples": len(sampler.samples),
        "losses": testbed.loss_report(counters, delay_line, mode == "userspace", tx_doc, rx_doc),
        "limited": limited_report(tx_doc),
        **({"iperf3": app_summary} if app_summary is not None else {}),
    }
    return result


def _start_delay_lines(cfg: dict[str, Any], mode: str, binary: Path, names: testbed.Names, tuns: list[str],
                       packet_trace: Path | None, children: list[Child]) -> list[Child]:
    """One delay line per TUN device (testbed.tun_names), each with every
    flow's arguments (the routes give each only its own sender's packets;
    a flow's jitter stream is then its own, as in one delay line), ready."""
    delays = []
    with tempfile.TemporaryDirectory(prefix="ccarena-delayline-") as tmp:
        args = delay_line_args(cfg, mode, Path(tmp) / "bottleneck.json")
        for tun in tuns:
            delays.append(Child("delay line" if len(tuns) == 1 else f"delay line {tun}", [
                "ip", "netns", "exec", names.rt, str(binary), "--tun", tun, *args,
                *(["--trace", str(packet_trace)] if packet_trace else [])]))
            children.append(delays[-1])
        # Ready: it has read its arguments (and the file, if any).
        for delay in delays:
            if delay.next_line(time.monotonic() + READY_TIMEOUT_S) != "ready":
                raise ScenarioError("live", f"{delay.name} did not start")
    return delays


def _stop_delay_lines(delays: list[Child]) -> list[dict[str, Any]]:
    """Each delay line's statistics, printed as SIGTERM stops it."""
    for delay in delays:
        delay.proc.send_signal(signal.SIGTERM)
    return [json.loads(delay.next_line(time.monotonic() + 5)) for delay in delays]


#: Delay-line statistics that add up over several delay lines.
_SUMMED = ("packets", "bytes", "segments", "passthrough", "dropped_overflow", "write_errors", "late_over_1ms")


def merged_delay_stats(stats: list[dict[str, Any]]) -> dict[str, Any]:
    """One delay line's statistics as they are; several (per-sender) as
    one: counts summed, the mean lateness over all their packets, the
    maxima and the percentiles the worst delay line's (an upper bound;
    each one's are in ``live.delay_lines``)."""
    if len(stats) == 1:
        return stats[0]
    packets = sum(s["packets"] for s in stats)
    return {
        **{key: max(s[key] for s in stats) for key in stats[0] if key.startswith("lateness_") or key.startswith("max_")},
        **{key: sum(s[key] for s in stats) for key in _SUMMED},
        "lateness_mean_us": round(sum(s["lateness_mean_us"] * s["packets"] for s in stats) / packets, 3)
        if packets else 0.0,
        "gso": all(s["gso"] for s in stats),
        "realtime": all(s["realtime"] for s in stats),
    }


def add_sized_flows(cfg: dict[str, Any], raw: dict[str, Any], arrivals: list[tuple[int, int, int, int]],
                    tx_doc: dict[str, Any], rx_doc: dict[str, Any]) -> None:
    """Sized flows' completion times (from their connection to their last
    byte at the receiver) and workloads' records and counts, with the
    simulator's times alone (workloads.py says why)."""
    from ..api import _add_alone_fcts
    from ..workload_results import add_alone_fcts

    for i, res in enumerate(raw["flows"]):
        done, connected = rx_doc["done_ns"][i], tx_doc["connected_ns"][i]
        if cfg["flows"][i].get("size_bytes") is not None:
            res["fct_ns"] = None if done is None or connected is None else max(0, done - connected)
    _add_alone_fcts(cfg, raw)
    if cfg.get("workloads"):
        raw["workloads"], raw["workload_flows"] = workloads.records(arrivals, tx_doc, rx_doc, len(cfg["workloads"]))
        add_alone_fcts(cfg, raw)


def limited_report(tx_doc: dict[str, Any]) -> list[dict[str, float] | None]:
    """Per flow, over its whole life (Linux's chrono counters, TCP_INFO):
    seconds busy (data in flight or queued), and of those the seconds
    limited by the receiver's window and by the send buffer -- the agent
    not refilling the socket in time, which the simulator's always-backlogged
    senders never are. Both should be ~0 for bulk flows."""
    out: list[dict[str, float] | None] = []
    for f in tx_doc.get("final", []):
        if not f or "busy_time_us" not in f:
            out.append(None)
            continue
        out.append({"busy_s": round(f["busy_time_us"] / 1e6, 3),
                    "rwnd_limited_s": round(f["rwnd_limited_us"] / 1e6, 3),
                    "sndbuf_limited_s": round(f["sndbuf_limited_us"] / 1e6, 3)})
    return out
