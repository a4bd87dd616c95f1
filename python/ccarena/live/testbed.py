"""The live testbed: three network namespaces joined by veth pairs, a
userspace delay line on a TUN device in the router, and the bottleneck
(TBF + bfifo) on the router's egress toward the receivers.

    ccalive-<pid>-tx             ccalive-<pid>-rt               ccalive-<pid>-rx
    senders         veth        router          veth           receiver
    10.201.1.(10+i) ------- cca-rt-tx    cca-rt-rx --------- 10.201.2.2
                                 \\  cca-dl (TUN)  /  TBF rate + bfifo buffer
                                  delayline (userspace)

Policy routing in the router sends everything that arrives from either
veth into the TUN device; the delay line holds each packet for its flow's
one-way delay (rtt/2, matched by the sender's address as source for data,
as destination for ACKs) and writes it back; coming from the TUN device it
is routed normally, data through the bottleneck to the receiver, ACKs to
the sender. Only private 10.201.0.0/16 addresses, only inside these
namespaces; nothing is routed out of them.

GSO: the senders' TCP hands the veth whole send units (GSO packets of up
to 64 KB; veths keep them whole), the router forwards them whole, and
without the userspace bottleneck the delay line's TUN device takes them
whole too (IFF_VNET_HDR + TUNSETOFFLOAD, crates/delayline/src/vnet.rs);
nothing has to be switched on for that (no ethtool: the veths' TSO/GSO
features are on by default, the TUN device's are set by the delay line).
The bottleneck's TBF then cuts them into MTU-sized packets before its
FIFO (see install_bottleneck), so the queue, its drops and its counters
are per wire packet as in the simulator.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from typing import Any

from ..errors import ScenarioError
from ..units import MSS_BYTES
from . import interrupts
from .choices import APPS, DELAYS, QDISCS, SENDERS, SOCKET_BUFFERS

SENDER_NET = "10.201.1"
RECEIVER_NET = "10.201.2"
RECEIVER_ADDR = f"{RECEIVER_NET}.2"
ROUTER_TX_ADDR = f"{SENDER_NET}.254"
ROUTER_RX_ADDR = f"{RECEIVER_NET}.254"
BASE_PORT = 5201
MAX_FLOWS = 200
TUN = "cca-dl"
BOTTLENECK_DEV = "cca-rt-rx"
#: The router's device toward the senders (a veth, or with separate
#: senders the bridge of their veths).
ROUTER_TX_DEV = "cca-rt-tx"
#: The bottleneck's bfifo qdisc handle.
FIFO_HANDLE = "10:"
#: A full-sized packet on the veth (1500-byte IP MTU + Ethernet header):
#: the size the bottleneck queues and counts.
_WIRE_MTU = 1514
#: The TBF's peak rate (see install_bottleneck).
_PEAK_BPS = 10**12
_DELAY_TABLE = "100"
#: Socket buffer ceilings for autotuning (the 50 ms flow with a 2 MB
#: buffer has ~2.6 MB in flight). The simulator's receiver grows its
#: window up to the same (crates/sim/src/rcvbuf.rs; tests/test_testbed.py).
_TCP_MEM = "4096 131072 67108864"


#: From this bottleneck rate on, the kernel's forwarding of what the delay
#: line writes runs on the other CPUs (split_forwarding). Measured with
#: `make bench-delayline` (one CUBIC flow, 10 ms, 2 MB): at 500 Mbit/s one
#: core doing both reaches the payload ceiling (477 Mbit/s) but is 72%
#: busy; at 1 Gbit/s it saturates (867 Mbit/s, RTT 279 ms instead of ~20)
#: and split reaches 956 Mbit/s at 31% of a core. Below, the examples'
#: 100 Mbit/s runs keep the layout their agreement was measured on.
SPLIT_FROM_BPS = 400_000_000


def flow_addr(i: int) -> str:
    return f"{SENDER_NET}.{10 + i}"


# SENDERS, QDISCS, SOCKET_BUFFERS, APPS, DELAYS: the testbed's choices
# (choices.py, which the command's parser reads without importing this module).


@dataclass(frozen=True)
class Choices:
    """How the testbed is built, where a testbed's builder has a choice;
    the defaults are the engine's. A run's summary.json records them
    (``live.testbed``)."""

    senders: str = SENDERS[0]
    qdisc: str = QDISCS[0]
    socket_buffers: str = SOCKET_BUFFERS[0]
    app: str = APPS[0]
    delays: str = DELAYS[0]

    def check(self, cfg: dict[str, Any] | None = None, bottleneck: str = "kernel") -> None:
        """Refuses a value that is not a choice and, given the scenario's
        configuration and the bottleneck it runs on (engine.check_supported),
        a combination that cannot work."""
        for flag, value, allowed in (("--senders", self.senders, SENDERS), ("--qdisc", self.qdisc, QDISCS),
                                     ("--socket-buffers", self.socket_buffers, SOCKET_BUFFERS),
                                     ("--app", self.app, APPS), ("--delays", self.delays, DELAYS)):
            if value not in allowed:
                raise ScenarioError(flag, f"expected one of {', '.join(allowed)}, got {value!r}")
        if cfg is None:
            return
        if self.senders == "separate" and cfg.get("workloads"):
            raise ScenarioError("--senders", "separate senders run the [[flow]]s only; [[workload]]s run with "
                                "shared ones")
        if self.qdisc != QDISCS[0] and bottleneck != "kernel":
            raise ScenarioError("--qdisc", f"{self.qdisc} is the kernel bottleneck's; this run uses the "
                                f"{bottleneck} one")
        if self.delays == "per-sender":
            if self.senders != "separate":
                raise ScenarioError("--delays", "per-sender delay lines need --senders separate (a sender "
                                    "host, so a namespace, each)")
            if bottleneck != "kernel":
                raise ScenarioError("--delays", f"per-sender delay lines need the kernel bottleneck (the "
                                    f"{bottleneck} one lives in the one delay line)")
        if self.app == "iperf3":
            from .iperf3 import check_scenario  # (iperf3.py imports this module)

            check_scenario(cfg)


@dataclass(frozen=True)
class Names:
    tx: str
    rt: str
    rx: str
    #: With separate senders, flow i's namespace (the sender agent runs in
    #: ``tx`` and opens each flow's socket in its own); empty when shared.
    senders: tuple[str, ...] = ()

    @classmethod
    def for_prefix(cls, prefix: str, separate_senders: int = 0) -> "Names":
        return cls(tx=prefix + "tx", rt=prefix + "rt", rx=prefix + "rx",
                   senders=tuple(f"{prefix}tx{i}" for i in range(separate_senders)))

    def all(self) -> list[str]:
        return [self.tx, self.rt, self.rx, *self.senders]

    def sending(self) -> list[str]:
        """The namespaces the flows' sockets live in."""
        return list(self.senders) or [self.tx]


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """A short command in its own session: a terminal's Ctrl-C reaches
    only the engine, which decides when to stop (interrupts.py)."""
    return subprocess.run(argv, capture_output=True, text=True, check=False, start_new_session=True)


def sh(*argv: str) -> str:
    """Run one setup command; a failure is a one-line error. A Ctrl-C
    that arrived meanwhile stops the setup here."""
    done = _run(list(argv))
    interrupts.check()
    if done.returncode != 0:
        detail = " ".join((done.stderr or done.stdout).split()) or f"exit status {done.returncode}"
        raise ScenarioError("live", f"testbed setup failed: `{' '.join(argv)}`: {detail}")
    return done.stdout


#: net.ipv4.tcp_ecn per scenario ECN mode (the flows' common one).
TCP_ECN = {"off": 0, "classic": 1, "accecn": 3}


def create_namespaces(names: Names, n_flows: int, ecn: str = "off", socket_buffers: str = "ccarena") -> None:
    for ns in names.all():
        sh("ip", "netns", "add", ns)
        sh("ip", "netns", "exec", ns, "sysctl", "-qw",
           "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1")
        sh("ip", "-n", ns, "link", "set", "lo", "up")
    sh("ip", "netns", "exec", names.rt, "sysctl", "-qw", "net.ipv4.ip_forward=1",
       "net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0")
    for ns in names.sending():
        sh("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv4.tcp_no_metrics_save=1")
        if socket_buffers == "ccarena":
            sh("ip", "netns", "exec", ns, "sysctl", "-qw", f"net.ipv4.tcp_wmem={_TCP_MEM}")
    if socket_buffers == "ccarena":
        sh("ip", "netns", "exec", names.rx, "sysctl", "-qw", f"net.ipv4.tcp_rmem={_TCP_MEM}")
    if ecn != "off":  # both hosts (the namespaces' default, 2, only accepts ECN)
        for ns in (*names.sending(), names.rx):
            sh("ip", "netns", "exec", ns, "sysctl", "-qw", f"net.ipv4.tcp_ecn={TCP_ECN[ecn]}")

    sh("ip", "-n", names.rt, "link", "add", BOTTLENECK_DEV, "type", "veth", "peer", "name", "cca-rx0", "netns", names.rx)
    if names.senders:
        # One veth per sender; the router's ends in a bridge that takes the
        # shared layout's device name, so routing and rules are the same.
        sh("ip", "-n", names.rt, "link", "add", ROUTER_TX_DEV, "type", "bridge")
        for i, ns in enumerate(names.senders):
            sh("ip", "-n", ns, "link", "add", f"cca-tx{i}", "type", "veth", "peer", "name", f"cca-rtt{i}",
               "netns", names.rt)
            sh("ip", "-n", names.rt, "link", "set", f"cca-rtt{i}", "master", ROUTER_TX_DEV, "up")
            sh("ip", "-n", ns, "addr", "add", f"{flow_addr(i)}/24", "dev", f"cca-tx{i}")
            sh("ip", "-n", ns, "link", "set", f"cca-tx{i}", "up")
            sh("ip", "-n", ns, "route", "add", "default", "via", ROUTER_TX_ADDR)
    else:
        sh("ip", "-n", names.tx, "link", "add", "cca-tx0", "type", "veth", "peer", "name", ROUTER_TX_DEV,
           "netns", names.rt)
        sh("ip", "-n", names.tx, "addr", "add", f"{SENDER_NET}.1/24", "dev", "cca-tx0")
        for i in range(n_flows):
            sh("ip", "-n", names.tx, "addr", "add", f"{flow_addr(i)}/24", "dev", "cca-tx0")
        sh("ip", "-n", names.tx, "link", "set", "cca-tx0", "up")
        sh("ip", "-n", names.tx, "route", "add", "default", "via", ROUTER_TX_ADDR)
    sh("ip", "-n", names.rt, "addr", "add", f"{ROUTER_TX_ADDR}/24", "dev", ROUTER_TX_DEV)
    sh("ip", "-n", names.rt, "addr", "add", f"{ROUTER_RX_ADDR}/24", "dev", BOTTLENECK_DEV)
    sh("ip", "-n", names.rx, "addr", "add", f"{RECEIVER_ADDR}/24", "dev", "cca-rx0")
    for ns, dev in ((names.rt, ROUTER_TX_DEV), (names.rt, BOTTLENECK_DEV), (names.rx, "cca-rx0")):
        sh("ip", "-n", ns, "link", "set", dev, "up")
    sh("ip", "-n", names.rx, "route", "add", "default", "via", ROUTER_RX_ADDR)


def tun_names(per_sender: int = 0) -> list[str]:
    """The delay lines' TUN devices in the router: one for every flow, or
    with ``per_sender`` senders one each (``--delays per-sender``)."""
    return [f"{TUN}{i}" for i in range(per_sender)] if per_sender else [TUN]


def route_through_delay_line(names: Names, tuns: list[str] | None = None) -> None:
    """Once the delay lines have created their TUN devices: everything
    arriving from the senders or the receiver into the one TUN device, or
    with a device per sender (tun_names) what comes from sender i and what
    goes to it into device i, through a routing table of its own."""
    tuns = tuns or [TUN]
    for tun in tuns:
        sh("ip", "-n", names.rt, "link", "set", tun, "txqueuelen", "20000", "up")
    if tuns == [TUN]:
        sh("ip", "-n", names.rt, "route", "add", "default", "dev", TUN, "table", _DELAY_TABLE)
        for pref, dev in (("100", ROUTER_TX_DEV), ("101", BOTTLENECK_DEV)):
            sh("ip", "-n", names.rt, "rule", "add", "pref", pref, "iif", dev, "lookup", _DELAY_TABLE)
        return
    for i, tun in enumerate(tuns):
        table = str(int(_DELAY_TABLE) + 1 + i)
        sh("ip", "-n", names.rt, "route", "add", "default", "dev", tun, "table", table)
        sh("ip", "-n", names.rt, "rule", "add", "pref", "100", "iif", ROUTER_TX_DEV, "from", flow_addr(i),
           "lookup", table)
        sh("ip", "-n", names.rt, "rule", "add", "pref", "101", "iif", BOTTLENECK_DEV, "to", flow_addr(i),
           "lookup", table)


def install_bottleneck(names: Names, rate_bps: int, buffer_bytes: int, qdisc: str = "tbf") -> None:
    """A token bucket (TBF) shapes to the rate; a byte-limited FIFO
    (droptail, wire bytes) under it.

    TBF rather than HTB because it segments: a GSO packet longer than its
    max_size is cut into MTU-sized packets on enqueue (sch_tbf's
    tbf_segment) and each goes into the FIFO on its own, whereas HTB would
    queue, drop and release a 64-KB GSO packet as one unit. max_size is
    min(burst, peak bucket); a one-packet peak bucket (`mtu 1514`) at a
    peak rate of 1 Tbit/s (or 100x the rate) makes it one wire packet
    without shaping anything (a packet's worth of peak tokens takes 12 ns;
    a slower peak rate would make packets of a burst wait for the qdisc's
    timer, one timer interrupt per packet). The bucket itself is as HTB's
    was: max(2 packets, 0.5 ms of the rate)."""
    burst = max(2 * _WIRE_MTU, rate_bps // 8 // 2000)
    peak_bps = max(_PEAK_BPS, 100 * rate_bps)
    dev = ("dev", BOTTLENECK_DEV)
    if qdisc == "htb":
        # The same rate and bucket, GSO send units whole (--qdisc htb).
        sh("tc", "-n", names.rt, "qdisc", "add", *dev, "root", "handle", "1:", "htb", "default", "1")
        sh("tc", "-n", names.rt, "class", "add", *dev, "parent", "1:", "classid", "1:1", "htb",
           "rate", f"{rate_bps}bit", "burst", f"{burst}b", "cburst", f"{burst}b")
        sh("tc", "-n", names.rt, "qdisc", "add", *dev, "parent", "1:1", "handle", FIFO_HANDLE, "bfifo",
           "limit", f"{buffer_bytes}b")
        return
    sh("tc", "-n", names.rt, "qdisc", "add", *dev, "root", "handle", "1:", "tbf",
       "rate", f"{rate_bps}bit", "burst", f"{burst}b", "peakrate", f"{peak_bps}bit", "mtu", str(_WIRE_MTU),
       "limit", f"{buffer_bytes}b")
    sh("tc", "-n", names.rt, "qdisc", "add", *dev, "parent", "1:1", "handle", FIFO_HANDLE, "bfifo",
       "limit", f"{buffer_bytes}b")


def read_bottleneck(names: Names) -> dict[str, int] | None:
    """The bfifo's counters: bytes and packets sent, drops, backlog bytes."""
    done = _run(["tc", "-n", names.rt, "-s", "-j", "qdisc", "show", "dev", BOTTLENECK_DEV])
    if done.returncode != 0:
        return None
    for q in json.loads(done.stdout or "[]"):
        if q.get("handle") == FIFO_HANDLE:
            return {"bytes": int(q.get("bytes", 0)), "packets": int(q.get("packets", 0)),
                    "drops": int(q.get("drops", 0)), "backlog": int(q.get("backlog", 0))}
    return None


def cpumask(cpus: list[int]) -> str:
    """A CPU set in sysfs's cpumask format (32-bit hex words, commas)."""
    bits, words = sum(1 << c for c in cpus), []
    while True:
        words.append(f"{bits & 0xFFFFFFFF:08x}")
        bits >>= 32
        if not bits:
            return ",".join(reversed(words))


def split_forwarding(names: Names, delay_pids: list[int], tuns: list[str] | None = None) -> bool:
    """Pins the delay lines to the first CPU we may use and steers the
    kernel's processing of what they write into their TUN devices (routing,
    the bottleneck qdisc, the receiver's stack: otherwise done inside their
    write() calls, on their CPU) to the others with receive packet
    steering. False on a single CPU."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return False
    for tun in tuns or [TUN]:
        sh("ip", "netns", "exec", names.rt, "sh", "-c",
           f"echo {cpumask(cpus[1:])} > /sys/class/net/{tun}/queues/rx-0/rps_cpus")
    for pid in delay_pids:
        os.sched_setaffinity(pid, {cpus[0]})
    return True


# ------------------------------------------------------------------ losses
#
# Where a packet can be lost in the testbed, and the counter that says so.
# On a slow or busy host the bottleneck is not the only place: the kernel
# hands packets between CPUs through per-CPU backlog queues of
# net.core.netdev_max_backlog packets (a host-wide setting, 1000
# by default, that the engine does not change), and when the CPU behind
# one falls behind, packets are dropped there. Every such drop is counted
# on a device of the testbed:
#
#   sender --veth--> router --TUN--> delay line --TUN--> router --TBF--> --veth--> receiver
#   cca-tx0 tx_dropped   cca-dl tx_dropped   cca-dl rx_dropped   qdisc    cca-rt-rx tx_dropped
#   (send units, GSO)    (frames)            (frames; RPS        drops    (wire packets)
#                                             backlog when split)
#
# plus the router's IP discards, the receiver's TCP drops (socket memory)
# and, for ACKs, cca-rx0 and cca-rt-tx tx_dropped. With the kernel
# bottleneck the packets before the TBF are GSO send units of up to
# GSO_MAX_SEGMENTS wire packets each; after it, and everywhere with the
# userspace bottleneck (whose TUN device is per packet), wire packets.

#: Wire packets in the largest GSO send unit (64 KB of full-sized segments).
GSO_MAX_SEGMENTS = 65536 // MSS_BYTES

#: Receiver-side TCP counters of segments dropped after arrival.
_RECEIVER_TCP_DROPS = ("TcpExt.TCPBacklogDrop", "TcpExt.TCPRcvQDrop", "TcpExt.TCPOFODrop",
                       "TcpExt.TCPZeroWindowDrop", "TcpExt.RcvPruned", "TcpExt.OfoPruned", "Tcp.InErrs")
#: The router's IP-layer discards (forwarding).
_ROUTER_IP_DROPS = ("Ip.InDiscards", "Ip.OutDiscards", "Ip.InHdrErrors", "Ip.InAddrErrors", "Ip.OutNoRoutes")


def _proc_net(ns: str) -> dict[str, int]:
    """The namespace's SNMP and extended TCP counters (/proc/net/snmp and
    /proc/net/netstat: a header line of names, then one of values, per
    protocol), as {"Tcp.RetransSegs": n, "TcpExt.TCPSACKReorder": n, ...}."""
    done = _run(["ip", "netns", "exec", ns, "cat", "/proc/net/snmp", "/proc/net/netstat"])
    counters: dict[str, int] = {}
    lines = done.stdout.splitlines() if done.returncode == 0 else []
    for head, values in zip(lines[::2], lines[1::2]):
        proto, _, names = head.partition(":")
        for name, value in zip(names.split(), values.partition(":")[2].split()):
            try:
                counters[f"{proto}.{name}"] = int(value)
            except ValueError:
                pass
    return counters


def _link_drops(ns: str) -> dict[str, dict[str, int]]:
    done = _run(["ip", "-n", ns, "-s", "-j", "link", "show"])
    links = {}
    for link in json.loads(done.stdout or "[]") if done.returncode == 0 else []:
        stats = link.get("stats64") or link.get("stats") or {}
        links[link["ifname"]] = {"tx_dropped": int(stats.get("tx", {}).get("dropped", 0)),
                                 "rx_dropped": int(stats.get("rx", {}).get("dropped", 0))}
    return links


def _qdisc_drops(ns: str) -> dict[str, int]:
    """Drops of each device's root qdisc (TBF counts its bfifo's too)."""
    done = _run(["tc", "-n", ns, "-s", "-j", "qdisc", "show"])
    drops: dict[str, int] = {}
    for q in json.loads(done.stdout or "[]") if done.returncode == 0 else []:
        if q.get("root"):
            drops[q["dev"]] = drops.get(q["dev"], 0) + int(q.get("drops", 0))
    return drops


def read_counters(names: Names) -> dict[str, Any]:
    """A snapshot of every loss counter of the testbed (see above), taken
    while the delay line still runs (its TUN device goes with it). Best
    effort: what cannot be read is missing."""
    links: dict[str, dict[str, int]] = {}
    qdiscs: dict[str, int] = {}
    for ns in names.all():
        try:
            links.update(_link_drops(ns))
            qdiscs.update(_qdisc_drops(ns))
        except (json.JSONDecodeError, KeyError, ValueError, TypeError):
            pass
    tx: dict[str, int] = {}
    for ns in names.sending():
        for key, value in _proc_net(ns).items():
            tx[key] = tx.get(key, 0) + value
    return {"links": links, "qdiscs": qdiscs, "tx": tx, "rt": _proc_net(names.rt), "rx": _proc_net(names.rx),
            "separate_senders": bool(names.senders)}


def loss_report(counters: dict[str, Any], delay_stats: dict[str, Any], userspace: bool,
                sender: dict[str, Any], receiver: dict[str, Any]) -> dict[str, Any]:
    """Whole-run loss accounting (summary.json ``live.losses``).

    The senders' data segments out and the receiver's data segments in
    (TCP_INFO, every arrival counted, duplicates included) are read after
    the network drained (agent.py), so every segment sent either arrived,
    was dropped, or is among the few still unacknowledged: ``lost_segments``
    = sent - arrived - unacknowledged is exact. The places that count drops
    (above) must account for all of it: ``unexplained_losses`` is what they
    cannot, 0 unless a packet was lost where nothing counts (with the
    kernel bottleneck a drop before it may be a whole GSO send unit, so the
    bound allows GSO_MAX_SEGMENTS for each). Every retransmission is then
    either the repair of a lost segment or spurious (the segment arrived
    twice): ``spurious_retransmits`` = retransmitted - lost.

    The drop counters are read after the agents' counts, so they can only
    have grown: the check errs toward explaining, never toward blaming.

    iperf3 (``--app iperf3``) reports retransmissions but no segment
    counts: the sums that need them are null, the drop counters stay."""
    links, qdiscs = counters["links"], counters["qdiscs"]
    rt, rx = counters["rt"], counters["rx"]
    # Read by the sender with its TCP_INFO, unless the flows' sockets are in
    # namespaces of their own (then the sum over them, read after).
    tx = counters["tx"] if counters.get("separate_senders") else (sender.get("netstat") or counters["tx"])
    finals = [f for f in sender.get("final", []) if f]
    retransmitted = sum(f["total_retrans"] for f in finals)
    counted = sender.get("telemetry", "agent") == "agent"
    if counted:
        sent = sum(f["data_segs_out"] for f in finals)
        arrived = sum(receiver.get("data_segs_in", []))
        unacked = sum(f.get("unacked", 0) for f in finals)

    def dropped(dev: str, way: str) -> int:
        return links.get(dev, {}).get(f"{way}_dropped", 0)

    def tun_dropped(way: str) -> int:  # the delay lines' devices (tun_names)
        return sum(v[f"{way}_dropped"] for dev, v in links.items() if dev.startswith(TUN))

    if userspace:
        # A topology's links (network.rs): the data segments they dropped
        # (not the ACKs a reverse path dropped, which lose no segment).
        network = delay_stats.get("links")
        bottleneck = (sum(sum(link["flow_drops"]) for link in network) if network is not None
                      else int((delay_stats.get("link") or {}).get("drops", 0)))
        # Of them, packets without ECT: an ECN-marking queue drops only these
        # (RFC 3168 keeps ECT off the handshake and off retransmissions).
        bottleneck_not_ect = int(sum(link.get("drops_not_ect", 0) for link in (network or [delay_stats.get("link") or {}])))
    else:
        bottleneck = qdiscs.get(BOTTLENECK_DEV, 0)
        bottleneck_not_ect = None  # the bfifo does not say
    testbed = {
        # retransmissions the sender's own stack failed to send, segments
        "sender_tcp": tx.get("TcpExt.TCPRetransFail", 0),
        # the senders' data, in send units
        "sender_to_router": sum(v["tx_dropped"] for dev, v in links.items() if dev.startswith("cca-tx")),
        "router_ip": sum(rt.get(k, 0) for k in _ROUTER_IP_DROPS),
        # both directions, in frames (GSO units with the kernel bottleneck)
        "into_delay_line": tun_dropped("tx") + sum(n for dev, n in qdiscs.items() if dev.startswith(TUN)),
        "delay_line": int(delay_stats.get("dropped_overflow", 0)) + int(delay_stats.get("write_errors", 0)),
        "out_of_delay_line": tun_dropped("rx"),
        # data after the bottleneck, wire packets
        "router_to_receiver": dropped(BOTTLENECK_DEV, "tx"),
        "receiver_tcp": sum(rx.get(k, 0) for k in _RECEIVER_TCP_DROPS),
        # ACKs
        "receiver_to_router": dropped("cca-rx0", "tx"),
        "router_to_sender": sum(v["tx_dropped"] for dev, v in links.items()
                                if dev == ROUTER_TX_DEV or dev.startswith("cca-rtt")),
    }
    per_unit = 1 if userspace else GSO_MAX_SEGMENTS
    counted_at_most = (
        bottleneck + testbed["sender_tcp"] + testbed["router_to_receiver"]
        + GSO_MAX_SEGMENTS * (testbed["sender_to_router"] + testbed["router_ip"])
        + per_unit * (testbed["into_delay_line"] + testbed["delay_line"] + testbed["out_of_delay_line"])
    )
    segments: dict[str, int | None] = dict.fromkeys(
        ("sent_segments", "arrived_segments", "unacknowledged_segments", "lost_segments", "unexplained_losses"))
    spurious = None
    if counted:
        lost = max(0, sent - arrived - unacked)
        segments = {"sent_segments": sent, "arrived_segments": arrived, "unacknowledged_segments": unacked,
                    "lost_segments": lost, "unexplained_losses": max(0, lost - counted_at_most)}
        spurious = max(0, retransmitted - lost)
    return {
        "bottleneck": bottleneck,
        "bottleneck_not_ect": bottleneck_not_ect,
        "testbed": testbed,
        "testbed_total": sum(testbed.values()),
        **segments,
        "retransmitted_segments": retransmitted,
        "spurious_retransmits": spurious,
        "reordering_seen": sum(tx.get(f"TcpExt.{k}", 0) for k in ("TCPSACKReorder", "TCPTSReorder", "TCPRenoReorder")),
        "drained": bool(sender.get("drained", False)) if counted else None,
    }
