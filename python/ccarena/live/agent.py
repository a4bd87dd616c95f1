"""The traffic agents of the live engine, run inside the testbed's
namespaces (``python -m ccarena.live.agent recv|send|at CONFIG_JSON``).

Protocol with the engine: the agent prepares (listens, or checks its
sockets can be made), prints ``ready``, reads the start instant t0
(CLOCK_MONOTONIC ns, shared by all namespaces) from stdin, samples at
t0 + k*interval for k = 1..duration/interval, prints one JSON document
(the receiver two, below) and exits. It dies with the engine
(PR_SET_PDEATHSIG, set by the engine).

- ``recv``: one listening port per flow; per tick, each flow's cumulative
  payload bytes received (receiver-side goodput), printed after the last
  tick. It keeps reading until the engine sends ``end`` (after the
  sender's drain, below), then prints each flow's data segments received.
- ``send``: one thread per flow: at its start time, a TCP connection with
  the flow's congestion control set per socket (TCP_CONGESTION), bulk
  data until its stop time; per tick, TCP_INFO (cwnd, in flight, pacing
  rate, RTTs, CA state, retransmits) and, for the kernel's BBR,
  TCP_CC_INFO; for our BPF algorithms, the state they report through their
  per-socket trace record (cctrace.py: mode, gains, bandwidth estimate,
  own variable). After the
  last tick it lets the network drain (every byte written acknowledged,
  then one more round trip, at most DRAIN_S), so that the final counters
  -- TCP_INFO and the namespace's TCP statistics, read together -- count
  every segment sent as arrived, dropped or still unacknowledged
  (summary.json ``live.losses``).
- ``at``: a flow carried by another program (``--app iperf3``, iperf3.py):
  checks the flow's congestion control, prints ``ready``, reads t0, sleeps
  until the flow's start and execs the program in its place.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from ..kernel.names import PREFIX as _OURS_PREFIX
from .cctrace import TraceMaps
from .tcpinfo import TCP_CONGESTION, bbr_info, tcp_info

_CHUNK = 1 << 20
#: Longest wait for the network to drain after the last tick (s).
DRAIN_S = 2.0
#: ioctl: bytes in a socket's send queue, unsent or unacknowledged.
_SIOCOUTQ = 0x5411


#: setns(2)'s type for a network namespace.
_CLONE_NEWNET = 0x40000000


def enter_netns(path: str) -> None:
    """Moves the calling thread (only it: a network namespace is per
    thread) into the namespace at ``path`` (/run/netns/NAME): the sockets
    it opens then live there. With separate senders each flow's thread
    does this before it connects."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(path, os.O_RDONLY)
    try:
        if libc.setns(fd, _CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"setns {path}: {os.strerror(err)}")
    finally:
        os.close(fd)


def netstat() -> dict[str, int]:
    """This namespace's TCP counters (/proc/net/snmp, /proc/net/netstat:
    header and value lines per protocol) as {"Tcp.RetransSegs": n, ...}."""
    counters: dict[str, int] = {}
    for path in ("/proc/net/snmp", "/proc/net/netstat"):
        try:
            with open(path) as f:
                lines = f.read().splitlines()
        except OSError:
            continue
        for head, values in zip(lines[::2], lines[1::2]):
            proto, _, names = head.partition(":")
            for name, value in zip(names.split(), values.partition(":")[2].split()):
                if value.lstrip("-").isdigit():
                    counters[f"{proto}.{name}"] = int(value)
    return counters


def _outq(sock: socket.socket) -> int:
    try:
        return struct.unpack("i", fcntl.ioctl(sock.fileno(), _SIOCOUTQ, b"\0" * 4))[0]
    except OSError:
        return 0


def _drain(socks: list[socket.socket | None], deadline_ns: int) -> bool:
    """Wait until every byte written is acknowledged, then one more
    (minimum) round trip for copies still on the way; False if the
    deadline came first."""
    live = [s for s in socks if s is not None]
    while any(_outq(s) > 0 for s in live):
        if time.monotonic_ns() >= deadline_ns:
            return False
        time.sleep(0.01)
    rtt_us = max((tcp_info(s).min_rtt_us for s in live), default=0)
    if 0 < rtt_us < 1_000_000:
        time.sleep(rtt_us / 1e6)
    return True


def _sleep_until(t_ns: int) -> None:
    while True:
        left = t_ns - time.monotonic_ns()
        if left <= 0:
            return
        time.sleep(left / 1e9)


def _ticks(t0: int, cfg: dict[str, Any]) -> list[int]:
    n = cfg["duration_ns"] // cfg["interval_ns"]
    return [t0 + k * cfg["interval_ns"] for k in range(1, n + 1)]


def _handshake() -> int:
    print("ready", flush=True)
    line = sys.stdin.readline()
    if not line.strip():
        os._exit(1)  # the engine went away
    return int(line)


def _finish(doc: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(doc) + "\n")
    sys.stdout.flush()
    os._exit(0)  # reader/sender threads may still be blocked


def receive(cfg: dict[str, Any]) -> None:
    n = len(cfg["ports"])
    received = [0] * n
    conns: list[socket.socket | None] = [None] * n
    listeners = []
    for port in cfg["ports"]:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((cfg["addr"], port))
        s.listen(4)
        listeners.append(s)

    # A sized flow's bytes: when the receiver has them all (CLOCK_MONOTONIC
    # ns), if before the run's end (``end[0]``, once t0 is known), as the
    # simulator counts a completion.
    targets = cfg.get("sizes") or [None] * n
    done: list[int | None] = [None] * n
    end = [0]

    def complete(now: int) -> int | None:
        return now if now < end[0] else None

    def serve(i: int) -> None:
        conn, _ = listeners[i].accept()
        conns[i] = conn
        buf = bytearray(_CHUNK)
        view = memoryview(buf)
        while True:
            got = conn.recv_into(view)
            if got <= 0:
                return
            received[i] += got
            if targets[i] is not None and done[i] is None and received[i] >= targets[i]:
                done[i] = complete(time.monotonic_ns())
                targets[i] = None

    for i in range(n):
        threading.Thread(target=serve, args=(i,), daemon=True).start()
    workload = cfg.get("workload")
    workload_done: list[int | None] = []
    if workload:
        workload_done = [None] * len(workload["targets"])
        threading.Thread(target=_serve_workloads, args=(cfg["addr"], workload, workload_done, complete),
                         daemon=True).start()
    t0 = _handshake()
    end[0] = t0 + cfg["duration_ns"]
    samples = []
    for tick in _ticks(t0, cfg):
        _sleep_until(tick)
        samples.append(list(received))
    sys.stdout.write(json.dumps({"bytes": samples}) + "\n")
    sys.stdout.flush()
    sys.stdin.readline()  # "end" (or the engine went away): the sender has drained
    infos = [tcp_info(c) if c is not None else None for c in conns]
    _finish({"data_segs_in": [i.data_segs_in if i else 0 for i in infos],
             "received_ce": [i.received_ce if i else None for i in infos],
             "done_ns": done, "workload_done_ns": workload_done})


def _serve_workloads(addr: str, cfg: dict[str, Any], done: list[int | None],
                     complete: Callable[[int], int | None]) -> None:
    """The workloads' connections, all in one thread (a run may open
    thousands): accepts on each workload's port, knows flow k by its source
    port (workloads.SOURCE_PORT_BASE + k), and notes when it has all of
    flow k's bytes (``cfg["targets"][k]``) in ``done[k]`` (``complete(now)``:
    None after the run's end)."""
    import selectors

    sel = selectors.DefaultSelector()
    for port in cfg["ports"]:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((addr, port))
        listener.listen(1024)
        listener.setblocking(False)
        sel.register(listener, selectors.EVENT_READ, None)
    targets, base = cfg["targets"], cfg["source_port_base"]
    received = [0] * len(targets)
    view = memoryview(bytearray(_CHUNK))
    while True:
        for key, _ in sel.select():
            if key.data is None:
                try:
                    conn, (_, port) = key.fileobj.accept()
                except BlockingIOError:
                    continue
                conn.setblocking(False)
                sel.register(conn, selectors.EVENT_READ, port - base)
                continue
            k = key.data
            try:
                got = key.fileobj.recv_into(view)
            except BlockingIOError:
                continue
            except OSError:
                got = 0
            if got <= 0:
                sel.unregister(key.fileobj)
                key.fileobj.close()
                continue
            received[k] += got
            if received[k] >= targets[k] > 0:
                done[k] = complete(time.monotonic_ns())
                targets[k] = 0  # once


def is_ours(kernel_name: str) -> bool:
    """A congestion control registered from cc/ (cc_<name>...), which
    reports its state through a trace record (cctrace.py)."""
    return kernel_name.startswith(_OURS_PREFIX)


def send(cfg: dict[str, Any]) -> None:
    flows = cfg["flows"]
    socks: list[socket.socket | None] = [None] * len(flows)
    connected: list[int | None] = [None] * len(flows)
    errors: list[str] = []
    payload = bytes(_CHUNK)

    def run_flow(i: int, flow: dict[str, Any], t0: int, end: int) -> None:
        _sleep_until(t0 + flow["start_ns"])
        try:
            if flow.get("netns"):
                enter_netns(flow["netns"])
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, flow["cc"].encode())
            s.bind((flow["src"], 0))
            s.settimeout(5.0)
            s.connect((flow["dst"], flow["port"]))
        except OSError as err:
            errors.append(f"flow {i}: {flow['cc']}: {err.strerror or err}")
            return
        socks[i] = s
        connected[i] = time.monotonic_ns()
        stop = end if flow["stop_ns"] is None else min(end, t0 + flow["stop_ns"])
        if flow.get("unsent_bytes"):  # a flow that stops: agents.STOP_UNSENT_S
            s.setsockopt(socket.IPPROTO_TCP, _TCP_NOTSENT_LOWAT, flow["unsent_bytes"])
        s.settimeout(0.05)
        view = memoryview(payload)
        # A sized flow writes its bytes and then nothing more; an
        # application-limited one only what its application has written.
        left = flow.get("size")
        app = _App(flow["app"], connected[i], s) if flow.get("app") else None
        while time.monotonic_ns() < stop and left != 0:
            want = _CHUNK if app is None else app.writable(time.monotonic_ns(), stop)
            if left is not None:
                want = min(want, left)
            if want == 0:
                continue
            try:
                sent = s.send(view[:want])
            except TimeoutError:
                continue
            except OSError as err:
                errors.append(f"flow {i}: send: {err.strerror or err}")
                return
            if left is not None:
                left -= sent
            if app is not None:
                app.written += sent

    for i, flow in enumerate(flows):
        _probe_cc(i, flow["cc"])

    t0 = _handshake()
    end = t0 + cfg["duration_ns"]
    for i, flow in enumerate(flows):
        threading.Thread(target=run_flow, args=(i, flow, t0, end), daemon=True).start()
    workload = cfg.get("workload")
    workload_out: dict[str, Any] = {}
    if workload:
        workload_thread = threading.Thread(target=_run_workloads, args=(workload, t0, end, errors, workload_out),
                                           daemon=True)
        workload_thread.start()

    traces = None
    if any(is_ours(f["cc"]) for f in flows):
        try:
            traces = TraceMaps()
        except (OSError, AttributeError):  # no usable libbpf: those columns stay null
            traces = None
    samples = []
    for tick in _ticks(t0, cfg):
        _sleep_until(tick)
        row = []
        for i, s in enumerate(socks):
            if s is None:
                row.append(None)
                continue
            info = tcp_info(s)
            bbr = bbr_info(s) if flows[i]["cc"] == "bbr" else None
            mode, var, extra_acked = None, None, None
            if traces is not None and is_ours(flows[i]["cc"]):
                rec = traces.read(s)
                if rec is not None:
                    bbr = (rec["bw_estimate_bps"], rec["pacing_gain"], rec["cwnd_gain"])
                    mode, var, extra_acked = rec["cc_mode"], rec["cc_var"], rec["extra_acked"]
            row.append(
                [info.snd_cwnd, info.inflight, info.pacing_rate_Bps * 8, info.rtt_us, info.min_rtt_us,
                 info.ca_state, info.total_retrans, *(bbr or (None, None, None)), info.delivery_rate_Bps * 8,
                 mode, var, extra_acked]
            )
        samples.append(row)
    if traces is not None:
        traces.close()
    if workload:
        workload_thread.join()
    drained = _drain(socks, end + int(DRAIN_S * 1e9))
    final = []
    for s in socks:
        if s is None:
            final.append(None)
            continue
        info = tcp_info(s)
        final.append({"data_segs_out": info.data_segs_out, "total_retrans": info.total_retrans,
                      "total_rto": info.total_rto, "unacked": info.unacked, "delivered_ce": info.delivered_ce,
                      "busy_time_us": info.busy_time_us, "rwnd_limited_us": info.rwnd_limited_us,
                      "sndbuf_limited_us": info.sndbuf_limited_us})
    _finish({"samples": samples, "final": final, "errors": errors, "drained": drained, "netstat": netstat(),
             "connected_ns": connected, "workload": workload_out})


#: TCP_NOTSENT_LOWAT (linux/tcp.h), and what an application-limited flow
#: allows: a socket that took 64 MB of an unlimited application before an
#: OFF period would go on sending for seconds of it; the simulator's
#: application gives its sender only what it can send.
_TCP_NOTSENT_LOWAT = 25
APP_UNSENT_BYTES = 128 << 10


class _App:
    """A flow's application (the scenario's ``app``; crates/sim/src/app.rs):
    ON periods (offsets from the connection, the simulator's draws) in
    which it writes at ``rate_bps`` (whole segments, evenly: by ON time t,
    floor(rate x t / (8 x mss)) segments) or, without a rate, as much as
    the socket takes; nothing in between."""

    def __init__(self, cfg: dict[str, Any], start_ns: int, sock: socket.socket) -> None:
        self.on = [(start_ns + a, start_ns + b) for a, b in cfg["on"]]
        self.rate_bps, self.mss = cfg["rate_bps"], cfg["mss"]
        self.written = 0
        sock.setsockopt(socket.IPPROTO_TCP, _TCP_NOTSENT_LOWAT, APP_UNSENT_BYTES)

    def writable(self, now: int, stop: int) -> int:
        """Bytes to write now; 0 after sleeping until there may be some
        (or the flow's stop)."""
        on_time, nxt = 0, stop
        for a, b in self.on:
            if now < a:
                nxt = a
                break
            on_time += min(now, b) - a
            if now < b:
                nxt = None
                break
        if nxt is not None:  # OFF until the next period
            _sleep_until(min(nxt, stop))
            return 0
        if self.rate_bps is None:
            return _CHUNK
        due = self.rate_bps * on_time // (8 * 10**9 * self.mss) * self.mss
        if due > self.written:
            return min(_CHUNK, due - self.written)
        need_ns = (self.written + self.mss) * 8 * 10**9 // self.rate_bps - on_time
        _sleep_until(min(now + max(need_ns, 1), stop))
        return 0


def _run_workloads(cfg: dict[str, Any], t0: int, end: int, errors: list[str], out: dict[str, Any]) -> None:
    """The workloads' flows, all in one thread: at each arrival
    (``cfg["flows"]``: [workload, arrival ns, bytes to write], in order) a
    non-blocking connection from the workload's address and the flow's
    source port, unless ``max_active`` of its flows are in progress
    (refused); its bytes written as the socket takes them; done when every
    byte is acknowledged (then its retransmissions are read and it is
    closed). Fills ``out`` (workloads.records reads it)."""
    import selectors

    flows, n_w = cfg["flows"], len(cfg["max_active"])
    sel = selectors.DefaultSelector()
    active, peak, refused = [0] * n_w, [0] * n_w, [0] * n_w
    started = [False] * len(flows)
    connected: list[int | None] = [None] * len(flows)
    retransmits = [0] * len(flows)
    written: dict[int, tuple[socket.socket, int]] = {}  # all written, not yet all acknowledged
    view = memoryview(bytes(_CHUNK))
    nxt = 0
    while time.monotonic_ns() < end:
        now = time.monotonic_ns()
        while nxt < len(flows) and t0 + flows[nxt][1] <= now:
            k, (w, _, left) = nxt, flows[nxt]
            nxt += 1
            if active[w] >= cfg["max_active"][w]:
                refused[w] += 1
                continue
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, cfg["cc"][w].encode())
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind((cfg["src"][w], cfg["source_port_base"] + k))
                s.setblocking(False)
                s.connect_ex((cfg["dst"], cfg["ports"][w]))
            except OSError as err:
                errors.append(f"workload {w} flow {k}: {err.strerror or err}")
                s.close()
                continue
            started[k] = True
            active[w] += 1
            peak[w] = max(peak[w], active[w])
            sel.register(s, selectors.EVENT_WRITE, [k, w, left])
        wait = (t0 + flows[nxt][1] - now) / 1e9 if nxt < len(flows) else 0.01
        for key, _ in sel.select(min(0.01, max(0.0, wait))):
            s, state = key.fileobj, key.data
            k, w = state[0], state[1]
            if connected[k] is None:
                problem = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if problem:
                    errors.append(f"workload {w} flow {k}: connect: {os.strerror(problem)}")
                    sel.unregister(s)
                    s.close()
                    active[w] -= 1
                    continue
                connected[k] = time.monotonic_ns()
            try:
                state[2] -= s.send(view[:min(state[2], _CHUNK)])
            except BlockingIOError:
                continue
            except OSError as err:
                errors.append(f"workload {w} flow {k}: send: {err.strerror or err}")
                state[2] = 0
            if state[2] == 0:
                sel.unregister(s)
                written[k] = (s, w)
        for k, (s, w) in list(written.items()):
            if _outq(s) == 0:
                retransmits[k] = tcp_info(s).total_retrans
                s.close()
                del written[k]
                active[w] -= 1
    for key in list(sel.get_map().values()):
        written[key.data[0]] = (key.fileobj, key.data[1])
    for k, (s, _) in written.items():
        retransmits[k] = tcp_info(s).total_retrans
    out.update(started=started, connected_ns=connected, retransmits=retransmits, refused=refused, peak_active=peak)


def _probe_cc(i: int, cc: str) -> None:
    """Fail before t0 if flow i's congestion control cannot be set at all:
    one JSON line naming it, exit status 3."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        probe.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, cc.encode())
    except OSError as err:
        problem = f"flow {i}: cannot use congestion control '{cc}': {err.strerror or err}"
        print(json.dumps({"error": problem}), flush=True)
        os._exit(3)
    finally:
        probe.close()


def start_at(cfg: dict[str, Any]) -> None:
    """``at``: another program as a flow's application (iperf3.py): its
    congestion control tried here, ``ready``, t0 read, then at t0 +
    ``start_ns`` this process becomes ``argv`` (exec: same pid, same
    PR_SET_PDEATHSIG, stdout to the engine)."""
    _probe_cc(cfg["flow"], cfg["cc"])
    t0 = _handshake()
    _sleep_until(t0 + cfg["start_ns"])
    os.execvp(cfg["argv"][0], cfg["argv"])


def main(argv: list[str]) -> None:
    mode, cfg = argv[0], json.loads(argv[1])
    if mode == "recv":
        receive(cfg)
    elif mode == "send":
        send(cfg)
    elif mode == "at":
        start_at(cfg)
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main(sys.argv[1:])
