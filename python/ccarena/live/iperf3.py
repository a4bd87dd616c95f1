"""iperf3 as the live run's application (``ccarena live run --app iperf3``).

Each [[flow]] is an iperf3 client (``-C`` the flow's algorithm as the
kernel knows it, ``-B`` its address, in its sender namespace) against an
iperf3 server of its own (one port per flow) in the receiver namespace,
with iperf3's own socket buffers (no ``-w``). A client is started at its
flow's start by the agent's ``at`` mode (agent.py), which sleeps in the
sender namespace until then and execs iperf3 (the flow's cc is tried on a
socket first, so a refusal comes before t0); the flow's data follows
iperf3's control handshake (a few round trips).

Both ends print JSON (``-J``) with interval reports every output interval
(iperf3's shortest is 0.1 s): the server's are the receiver-side goodput
the run's shares are counted from, the client's the sender-side counts
(bytes written, retransmissions, cwnd and smoothed RTT). Their times are
relative to each end's own test start, which iperf3's JSON does not place
on a clock; ``--debug=1 --forceflush`` makes each end also print one line
per interval as it ends (``interval_len S bytes_transferred N``), and the
engine notes when each arrives: the earliest (arrival - interval end)
places the end's test start on CLOCK_MONOTONIC, the clock of the run's
ticks. The receiver's bytes at each tick are then read off its intervals,
linearly within one.

What iperf3 does not report stays null rather than made up: in-flight
data, pacing rate, min RTT, CA state, the algorithm's mode, gains and
estimates (the agent's TCP_INFO samples and BPF trace), and the segment
counts of the loss accounting.
"""

from __future__ import annotations

import bisect
import itertools
import json
import re
import shutil
import sys
import time
from dataclasses import dataclass
from typing import Any

from ..errors import ScenarioError
from . import interrupts, testbed
from .processes import READY_TIMEOUT_S, Child

#: iperf3's shortest and longest interval between reports (-i).
MIN_INTERVAL_NS = 100_000_000
MAX_INTERVAL_NS = 60_000_000_000
#: Each end's line per interval (--debug=1), printed as the interval ends.
_INTERVAL_LINE = re.compile(r"^interval_len ([0-9.]+) bytes_transferred [0-9]+$")
#: What iperf3 does not report, per flow and tick (timeseries.parquet's
#: null columns), and in the loss accounting (summary.json).
NOT_MEASURED = ("inflight", "pacing_rate_mbps", "min_rtt_ms", "ca_state", "cc_mode", "pacing_gain", "cwnd_gain",
                "bw_estimate_mbps", "delivery_rate_mbps", "cc_var", "extra_acked")


def check_scenario(cfg: dict[str, Any]) -> None:
    """Refuses what iperf3 cannot run as the scenario says (one line each):
    only bulk [[flow]]s, whole seconds of life (iperf3's -t), reports at
    most every 0.1 s (its -i)."""
    if cfg.get("workloads"):
        raise ScenarioError("--app", "iperf3 runs the [[flow]]s only; [[workload]]s need --app agent")
    for i, f in enumerate(cfg["flows"]):
        if f.get("size_bytes") is not None:
            raise ScenarioError("--app", f"iperf3 runs bulk flows; flow[{i}] has a size (use --app agent)")
        if f.get("app"):
            raise ScenarioError("--app", f"iperf3 runs bulk flows; flow[{i}] has an app (use --app agent)")
        life_ns = life(cfg, i)
        if life_ns % 1_000_000_000:
            raise ScenarioError("--app", f"iperf3 sends for whole seconds (-t); flow[{i}] lasts "
                                f"{life_ns / 1e9:g} s (its start to its stop or the run's end)")
    if not MIN_INTERVAL_NS <= cfg["interval_ns"] <= MAX_INTERVAL_NS:
        raise ScenarioError("--app", f"iperf3 reports every 0.1 s at most and 60 s at least (-i); "
                            f"output.interval is {cfg['interval_ns'] / 1e9:g} s")


def check_installed() -> None:
    if shutil.which("iperf3") is None:
        raise ScenarioError("--app", "iperf3 not found (apt-get install iperf3, or make deps)")


def life(cfg: dict[str, Any], i: int) -> int:
    """Flow i's life (ns): its start to its stop, or to the run's end."""
    f = cfg["flows"][i]
    stop = cfg["duration_ns"] if f.get("stop_ns") is None else min(f["stop_ns"], cfg["duration_ns"])
    return stop - f["start_ns"]


def _seconds(ns: int) -> str:
    return f"{ns / 1e9:g}"


#: Both ends: JSON, a report per output interval, and the per-interval line
#: that places the reports on the engine's clock (above).
def _common(port: int, interval_ns: int) -> list[str]:
    return ["-p", str(port), "-i", _seconds(interval_ns), "-J", "--debug=1", "--forceflush"]


def server_argv(addr: str, port: int, interval_ns: int) -> list[str]:
    """One flow's server: one test (-1), then it exits."""
    return ["iperf3", "-s", "-1", "-B", addr, *_common(port, interval_ns)]


def client_argv(dst: str, src: str, port: int, cc: str, life_ns: int, interval_ns: int) -> list[str]:
    """One flow's client: from its address, with its algorithm, for its
    life (whole seconds, check_scenario), iperf3's socket buffers."""
    return ["iperf3", "-c", dst, "-B", src, "-C", cc, "-t", str(life_ns // 1_000_000_000),
            *_common(port, interval_ns)]


# ------------------------------------------------------------------ output


@dataclass
class Report:
    """One end's output: its JSON document and, on CLOCK_MONOTONIC, the
    start of its intervals (``anchor_ns``)."""

    doc: dict[str, Any]
    anchor_ns: int
    #: Each interval's (start ns, end ns, bytes, its stream's report), absolute.
    intervals: list[tuple[int, int, int, dict[str, Any]]]

    def __post_init__(self) -> None:
        # Ends and running totals, for a binary search per tick.
        self._ends = [end for _, end, _, _ in self.intervals]
        self._bytes = list(itertools.accumulate((n for _, _, n, _ in self.intervals), initial=0))
        self._retrans = list(itertools.accumulate((int(stream.get("retransmits") or 0)
                                                   for *_, stream in self.intervals), initial=0))

    def cumulative(self, t_ns: int) -> int:
        """Bytes by ``t_ns``: all of the intervals that ended by then, the
        elapsed part of the one under way (linearly)."""
        k = bisect.bisect_right(self._ends, t_ns)
        if k == len(self.intervals):
            return self._bytes[k]
        start, end, n, _ = self.intervals[k]
        return self._bytes[k] + (n * (t_ns - start) // (end - start) if t_ns > start else 0)

    def last_report(self, t_ns: int) -> tuple[dict[str, Any], int] | None:
        """The latest interval report out by ``t_ns`` (as a sample taken
        then would read it) and the retransmissions up to it; None before
        the first."""
        k = bisect.bisect_right(self._ends, t_ns)
        return None if k == 0 else (self.intervals[k - 1][3], self._retrans[k])


def parse(lines: list[tuple[int, str]], who: str) -> Report:
    """An end's stdout, each line with its arrival (CLOCK_MONOTONIC ns):
    the per-interval lines, then the JSON document (from the last line that
    opens an object at the margin: the debug output's own objects come
    before it). A one-line error if iperf3 failed or reported nothing."""
    starts = [k for k, (_, line) in enumerate(lines) if line == "{"]
    if not starts:
        text = " ".join(line for _, line in lines[-3:]).strip()
        raise ScenarioError("live", f"{who}: iperf3 printed no JSON report{': ' + text if text else ''}")
    try:
        doc = json.loads("\n".join(line for _, line in lines[starts[-1]:]))
    except json.JSONDecodeError as err:
        raise ScenarioError("live", f"{who}: iperf3's JSON report did not parse: {err}") from None
    if doc.get("error"):
        raise ScenarioError("live", f"{who}: iperf3: {doc['error']}")
    # Each interval line arrives when the interval ends, or later (the
    # process or the pipe may be late, never early): the earliest arrival
    # less its interval's end is the test's start.
    anchors, ended = [], 0.0
    for t_ns, line in lines[:starts[-1]]:
        match = _INTERVAL_LINE.match(line)
        if match:
            ended += float(match.group(1))
            anchors.append(t_ns - round(ended * 1e9))
    if not anchors or not doc.get("intervals"):
        raise ScenarioError("live", f"{who}: iperf3 reported no intervals")
    anchor = min(anchors)
    intervals = []
    for interval in doc["intervals"]:
        stream = interval["streams"][0]
        intervals.append((anchor + round(stream["start"] * 1e9), anchor + round(stream["end"] * 1e9),
                          int(stream["bytes"]), stream))
    return Report(doc, anchor, intervals)


def _end(report: Report, side: str) -> dict[str, Any]:
    streams = report.doc.get("end", {}).get("streams") or [{}]
    return streams[0].get(side) or {}


def documents(cfg: dict[str, Any], t0: int, servers: list[Report],
              clients: list[Report]) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """The receiver's and the sender's documents shaped as the agents'
    (rawresult.build_raw reads them; ``telemetry`` tells it they are
    iperf3's), and the summary's ``live.iperf3``."""
    iv = cfg["interval_ns"]
    ticks = [t0 + k * iv for k in range(1, cfg["duration_ns"] // iv + 1)]
    n = len(cfg["flows"])
    mss = [c.doc.get("start", {}).get("tcp_mss_default") or cfg["mss"] for c in clients]
    samples = []
    for t in ticks:
        row = []
        for i in range(n):
            got = clients[i].last_report(t)
            # Before its first report, as the agent's before its connection:
            # no window, no retransmission (and no more known than later).
            stream, retrans = got if got is not None else ({"snd_cwnd": 0}, 0)
            # The agent's sample columns (rawresult.py); None: not reported.
            row.append([round(stream.get("snd_cwnd", 0) / mss[i]), None, None, stream.get("rtt"), None, None, retrans,
                        None, None, None, None, None, None, None])
        samples.append(row)
    rx = {"bytes": [[servers[i].cumulative(t) for i in range(n)] for t in ticks],
          "data_segs_in": [None] * n, "received_ce": [None] * n, "done_ns": [None] * n}
    tx = {"telemetry": "iperf3", "samples": samples, "errors": [], "drained": None,
          "connected_ns": [None] * n, "workload": {},
          "final": [{"total_retrans": int(_end(c, "sender").get("retransmits") or 0)} for c in clients]}
    w_from, w_to = t0 + cfg["measure_from_ns"], t0 + cfg["measure_to_ns"]
    sent = [c.cumulative(w_to) - c.cumulative(w_from) for c in clients]
    flows = [{
        # When each end's intervals began, on the run's clock (s): the
        # client's start plus iperf3's control handshake.
        "receiver_start_s": round((s.anchor_ns - t0) / 1e9, 4),
        "sender_start_s": round((c.anchor_ns - t0) / 1e9, 4),
        "receiver_bytes_window": s.cumulative(w_to) - s.cumulative(w_from),
        "sender_bytes_window": sent[i],
        "sender_share": round(sent[i] / sum(sent), 6) if sum(sent) else None,
        "receiver_bytes_total": int(_end(s, "receiver").get("bytes") or 0),
        "sender_bytes_total": int(_end(c, "sender").get("bytes") or 0),
        "sender_retransmits": tx["final"][i]["total_retrans"],
    } for i, (s, c) in enumerate(zip(servers, clients, strict=True))]
    summary = {"version": clients[0].doc.get("start", {}).get("version") if clients else None,
               "flows": flows, "not_measured": list(NOT_MEASURED)}
    return rx, tx, summary


# ------------------------------------------------------------------ running


class Iperf3App:
    """The flows as iperf3 clients and servers, as children of the engine
    (processes.Child: their own sessions, PR_SET_PDEATHSIG), with the
    interface of agents.Agents: ``start(t0)``, ``wait_traffic(deadline)``,
    ``results()``."""

    def __init__(self, cfg: dict[str, Any], names: testbed.Names, kernel_ccs: list[str],
                 children: list[Child]) -> None:
        self.cfg = cfg
        n = len(cfg["flows"])
        iv = cfg["interval_ns"]
        ports = [testbed.BASE_PORT + i for i in range(n)]
        self.servers = [Child(f"flow {i}'s iperf3 server", ["ip", "netns", "exec", names.rx,
                                                            *server_argv(testbed.RECEIVER_ADDR, ports[i], iv)],
                              stamped=True) for i in range(n)]
        children.extend(self.servers)
        _wait_listening(names.rx, ports, self.servers)
        self.clients = []
        for i, f in enumerate(cfg["flows"]):
            argv = client_argv(testbed.RECEIVER_ADDR, testbed.flow_addr(i), ports[i], kernel_ccs[i], life(cfg, i), iv)
            at = {"flow": i, "start_ns": f["start_ns"], "cc": kernel_ccs[i], "argv": argv}
            self.clients.append(Child(f"flow {i}'s iperf3 client", [
                "ip", "netns", "exec", names.senders[i] if names.senders else names.tx, sys.executable, "-m",
                "ccarena.live.agent", "at", json.dumps(at)], stamped=True))
            children.append(self.clients[-1])
        deadline = time.monotonic() + READY_TIMEOUT_S
        for client in self.clients:
            line = client.next_line(deadline)
            if line != "ready":
                raise ScenarioError("live", json.loads(line).get("error", line))
        self.t0 = 0

    def start(self, t0: int) -> None:
        self.t0 = t0
        for client in self.clients:
            client.send(str(t0))

    def wait_traffic(self, deadline: float) -> None:
        """Until every client has finished (each sends for its life after
        its handshake)."""
        for client in self.clients:
            client.wait_output(deadline)

    def results(self) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        """Both ends' reports (the clients' first: a client's error, such as
        a refused connection, is the one to tell)."""
        deadline = time.monotonic() + 10
        clients = [parse(c.wait_output(deadline), c.name) for c in self.clients]
        servers = [parse(s.wait_output(deadline), s.name) for s in self.servers]
        return documents(self.cfg, self.t0, servers, clients)


def _wait_listening(ns: str, ports: list[int], servers: list[Child], timeout_s: float = 10.0) -> None:
    """Until the receiver namespace listens on every port (iperf3 says
    nothing when it does); a server that exits first is its error."""
    want = {str(p) for p in ports}
    deadline = time.monotonic() + timeout_s
    while True:
        for server in servers:
            if server.proc.poll() is not None:
                parse(server.wait_output(time.monotonic() + 5), server.name)  # its error, if it printed one
                raise ScenarioError("live", f"{server.name} exited: {server.error_text()}")
        lines = testbed.sh("ip", "netns", "exec", ns, "ss", "-Hltn").splitlines()
        if want <= {line.split()[3].rpartition(":")[2] for line in lines if len(line.split()) > 3}:
            return
        if time.monotonic() > deadline:
            raise ScenarioError("live", f"iperf3 servers did not listen within {timeout_s:g} s")
        time.sleep(interrupts.POLL_S)
