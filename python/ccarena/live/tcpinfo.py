"""Reading Linux's ``struct tcp_info`` (include/uapi/linux/tcp.h) and BBR's
``struct tcp_bbr_info`` (TCP_CC_INFO) from a socket."""

from __future__ import annotations

import socket
import struct
from dataclasses import dataclass

TCP_INFO = 11
TCP_CONGESTION = 13
TCP_CC_INFO = 26

#: Bytes of struct tcp_info we ask for (the kernel copies what it has).
_INFO_LEN = 256


@dataclass(frozen=True)
class TcpInfo:
    ca_state: int
    unacked: int
    sacked: int
    lost: int
    retrans: int
    rtt_us: int  # smoothed RTT
    snd_cwnd: int
    total_retrans: int
    pacing_rate_Bps: int
    bytes_received: int
    min_rtt_us: int
    data_segs_in: int
    data_segs_out: int
    delivery_rate_Bps: int
    #: Linux's chrono counters (tcp_chrono_*), us since the connection
    #: began: time with data in flight or queued, and the parts of it
    #: limited by the receive window and by the send buffer (the sending
    #: application not keeping the socket full).
    busy_time_us: int
    rwnd_limited_us: int
    sndbuf_limited_us: int
    total_rto: int | None
    #: Segments delivered with ECN feedback (the sender's tp->delivered_ce).
    delivered_ce: int
    #: CE-marked segments received (tp->received_ce; Linux >= 6.18).
    received_ce: int | None

    @property
    def inflight(self) -> int:
        """Linux's tcp_packets_in_flight()."""
        return max(0, self.unacked - self.sacked - self.lost + self.retrans)


def tcp_info(sock: socket.socket) -> TcpInfo:
    raw = sock.getsockopt(socket.IPPROTO_TCP, TCP_INFO, _INFO_LEN)
    u32 = lambda off: struct.unpack_from("=I", raw, off)[0]  # noqa: E731
    u64 = lambda off: struct.unpack_from("=Q", raw, off)[0]  # noqa: E731
    return TcpInfo(
        ca_state=raw[1],
        unacked=u32(24),
        sacked=u32(28),
        lost=u32(32),
        retrans=u32(36),
        rtt_us=u32(68),
        snd_cwnd=u32(80),
        total_retrans=u32(100),
        pacing_rate_Bps=u64(104),
        bytes_received=u64(128),
        min_rtt_us=u32(148),
        data_segs_in=u32(152),
        data_segs_out=u32(156),
        delivery_rate_Bps=u64(160),
        busy_time_us=u64(168),
        rwnd_limited_us=u64(176),
        sndbuf_limited_us=u64(184),
        total_rto=struct.unpack_from("=H", raw, 240)[0] if len(raw) >= 242 else None,
        delivered_ce=u32(196),
        received_ce=u32(248) if len(raw) >= 252 else None,
    )


def bbr_info(sock: socket.socket) -> tuple[float, float, float] | None:
    """(bandwidth estimate bit/s, pacing_gain, cwnd_gain) from the kernel's
    BBR via TCP_CC_INFO; None if the algorithm reports nothing."""
    try:
        raw = sock.getsockopt(socket.IPPROTO_TCP, TCP_CC_INFO, 64)
    except OSError:
        return None
    if len(raw) < 20:
        return None
    bw_lo, bw_hi, _min_rtt, pacing_gain, cwnd_gain = struct.unpack_from("=5I", raw, 0)
    return ((bw_hi << 32 | bw_lo) * 8.0, pacing_gain / 256.0, cwnd_gain / 256.0)
