"""The traffic agents of the live engine, run inside the testbed's
namespaces (``python -m ccarena.live.agent recv|send CONFIG_JSON``).

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

    for i in range(n):
        threading.Thread(target=serve, args=(i,), daemon=True).start()
    t0 = _handshake()
    samples = []
    for tick in _ticks(t0, cfg):
        _sleep_until(tick)
        samples.append(list(received))
    sys.stdout.write(json.dumps({"bytes": samples}) + "\n")
    sys.stdout.flush()
    sys.stdin.readline()  # "end" (or the engine went away): the sender has drained
    infos = [tcp_info(c) if c is not None else None for c in conns]
    _finish({"data_segs_in": [i.data_segs_in if i else 0 for i in infos],
             "received_ce": [i.received_ce if i else None for i in infos]})


def is_ours(kernel_name: str) -> bool:
    """A congestion control registered from cc/ (cc_<name>...), which
    reports its state through a trace record (cctrace.py)."""
    return kernel_name.startswith(_OURS_PREFIX)


def send(cfg: dict[str, Any]) -> None:
    flows = cfg["flows"]
    socks: list[socket.socket | None] = [None] * len(flows)
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
        stop = end if flow["stop_ns"] is None else min(end, t0 + flow["stop_ns"])
        s.settimeout(0.05)
        view = memoryview(payload)
        while time.monotonic_ns() < stop:
            try:
                s.send(view)
            except TimeoutError:
                continue
            except OSError as err:
                errors.append(f"flow {i}: send: {err.strerror or err}")
                return

    # Fail before t0 if a congestion control cannot be set at all.
    for i, flow in enumerate(flows):
        probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            probe.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, flow["cc"].encode())
        except OSError as err:
            problem = f"flow {i}: cannot use congestion control '{flow['cc']}': {err.strerror or err}"
            print(json.dumps({"error": problem}), flush=True)
            os._exit(3)
        finally:
            probe.close()

    t0 = _handshake()
    end = t0 + cfg["duration_ns"]
    for i, flow in enumerate(flows):
        threading.Thread(target=run_flow, args=(i, flow, t0, end), daemon=True).start()

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
    _finish({"samples": samples, "final": final, "errors": errors, "drained": drained, "netstat": netstat()})


def main(argv: list[str]) -> None:
    mode, cfg = argv[0], json.loads(argv[1])
    if mode == "recv":
        receive(cfg)
    elif mode == "send":
        send(cfg)
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main(sys.argv[1:])
