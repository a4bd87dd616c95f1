//! Test drivers shared by the algorithm tests.
//!
//! [`FakeNet`] is a tiny packet-level network for one flow: a sender that
//! obeys cwnd and the pacing rate, one FIFO bottleneck of fixed rate with an
//! unbounded buffer, a fixed propagation RTT and one ACK per packet. Delivery
//! rate samples are computed as Linux's tcp_rate.c does, so a CC with
//! cong_control (BBR) sees what it would see on a real path. No loss, no
//! reordering: a clean pipe with a known BDP to check the control laws on.
#![allow(dead_code)]
// c_long / c_ulong are i64 / u64 on this target only: keep the casts.
#![allow(clippy::unnecessary_cast)]

use cc_native::{CaEvent, CongestionOps, RateSample, TcpSock, SK_PACING_NONE};
use std::collections::VecDeque;

/// The path most algorithm tests run on: 1000-byte packets, one every
/// 100 us (10 000 packets/s, 80 Mbit/s), 20 ms propagation: BDP = 201
/// packets.
pub const MSS: u32 = 1000;
pub const PKT_TIME_US: u64 = 100;
pub const RTPROP_US: u64 = 20_000;

/// BBR's modes (bbr_core.h's enum bbr_mode; BBRv3's, bbr3_core.h, number
/// them the same), as `get_mode` reports them.
pub const STARTUP: u32 = 0;
pub const DRAIN: u32 = 1;
pub const PROBE_BW: u32 = 2;
pub const PROBE_RTT: u32 = 3;

/// Points the socket's parameter overrides at `params` (index order of
/// the algorithm's table); the caller keeps `params` alive while `sk` is used.
pub fn set_params(sk: &mut TcpSock, params: &[u64]) {
    sk.cca.params = params.as_ptr();
    sk.cca.n_params = params.len() as u32;
}

/// `cc`'s parameter table (index order) with `params` set by name, the
/// rest at their defaults: what [`set_params`] takes.
pub fn param_values(cc: &str, params: &[(&str, u64)]) -> Vec<u64> {
    let ops = cc_native::lookup(cc).expect("registered cc");
    let mut values: Vec<u64> = ops.params().iter().map(|p| p.default).collect();
    for (name, v) in params {
        values[ops.param_index(name).unwrap_or_else(|| panic!("{cc} has no {name}"))] = *v;
    }
    values
}

/// A socket as the sender would hand it to a CC right after the handshake.
pub fn new_sock(mss: u32) -> TcpSock {
    let mut sk = TcpSock {
        snd_cwnd: 10,
        snd_ssthresh: 0x7fff_ffff,
        snd_cwnd_clamp: u32::MAX,
        mss_cache: mss,
        app_limited: !0,
        ..Default::default()
    };
    sk.inet_conn.icsk_inet.sk_max_pacing_rate = !0;
    sk.inet_conn.icsk_inet.sk_gso_max_size = 65536;
    sk.inet_conn.icsk_inet.sk_gso_max_segs = 64;
    sk.inet_conn.icsk_inet.sk_pacing_shift = 10;
    sk.inet_conn.icsk_inet.sk_pacing_status = SK_PACING_NONE;
    for s in sk.rtt_min.s.iter_mut() {
        s.v = !0;
    }
    sk
}

/// What tcp_rate.c remembers about a packet in flight.
#[derive(Clone, Copy, Debug)]
struct InFlight {
    sent_us: u64,
    ack_us: u64,
    delivered: u32,
    delivered_mstamp: u64,
    first_tx_mstamp: u64,
    app_limited: bool,
}

/// The CC's state after one ACK, as CCA_TRACE and the socket report it.
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    pub now_us: u64,
    pub mode: u32,
    pub pacing_gain: u32,
    pub cwnd_gain: u32,
    pub bw_bytes_per_sec: u64,
    pub cwnd: u32,
    pub inflight: u32,
    pub pacing_rate: u64,
    pub rtt_us: u64,
    pub delivered: u32,
    /// Packet-timed round trips so far, counted as BBR counts them: a round
    /// ends when a packet sent after the previous round ended is acked.
    pub round: u32,
}

/// (start, end) times, us, of the runs of consecutive samples for which
/// `pred` holds (a phase's or a mode's episodes).
pub fn runs_where(trace: &[Sample], pred: impl Fn(&Sample) -> bool) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    let mut prev = false;
    for s in trace {
        let now = pred(s);
        if now && !prev {
            out.push((s.now_us, s.now_us));
        } else if now {
            out.last_mut().unwrap().1 = s.now_us;
        }
        prev = now;
    }
    out
}

pub struct FakeNet {
    pub ops: CongestionOps,
    pub sk: TcpSock,
    /// Bottleneck service time of one packet, us.
    pub pkt_time_us: u64,
    /// Propagation RTT, us (excludes the bottleneck's service time).
    pub rtprop_us: u64,
    pub now_us: u64,
    link_free_us: u64,
    next_send_us: u64,
    flight: VecDeque<InFlight>,
    round: u32,
    next_round_delivered: u32,
    /// One entry per ACK processed.
    pub trace: Vec<Sample>,
}

impl FakeNet {
    pub fn new(cc: &str, mss: u32, pkt_time_us: u64, rtprop_us: u64) -> Self {
        Self::with_ops(cc_native::lookup(cc).expect("registered cc"), mss, pkt_time_us, rtprop_us)
    }

    pub fn with_ops(ops: CongestionOps, mss: u32, pkt_time_us: u64, rtprop_us: u64) -> Self {
        let mut sk = new_sock(mss);
        sk.cca.rng_state = 0x1234_5678_9abc_def1;
        ops.init(&mut sk);
        FakeNet {
            ops,
            sk,
            pkt_time_us,
            rtprop_us,
            now_us: 0,
            link_free_us: 0,
            next_send_us: 0,
            flight: VecDeque::new(),
            round: 0,
            next_round_delivered: 0,
            trace: Vec::new(),
        }
    }

    /// Packets the bottleneck carries per second.
    pub fn bw_pkts_per_sec(&self) -> f64 {
        1e6 / self.pkt_time_us as f64
    }

    /// RTT of a packet that finds the queue empty, us.
    pub fn base_rtt_us(&self) -> u64 {
        self.rtprop_us + self.pkt_time_us
    }

    /// Bandwidth-delay product, packets.
    pub fn bdp_pkts(&self) -> f64 {
        self.bw_pkts_per_sec() * self.base_rtt_us() as f64 / 1e6
    }

    fn inflight(&self) -> u32 {
        self.sk.packets_out
    }

    fn send(&mut self) {
        let now = self.now_us;
        let sk = &mut self.sk;
        if sk.packets_out == 0 {
            // tcp_rate_skb_sent(): a new flight starts the send interval.
            sk.first_tx_mstamp = now;
            sk.delivered_mstamp = now;
            // tcp_event_data_sent(): first transmit with nothing in flight.
            self.ops.cwnd_event(sk, CaEvent::TxStart);
        }
        let depart = now.max(self.link_free_us) + self.pkt_time_us;
        self.link_free_us = depart;
        self.flight.push_back(InFlight {
            sent_us: now,
            ack_us: depart + self.rtprop_us,
            delivered: sk.delivered,
            delivered_mstamp: sk.delivered_mstamp,
            first_tx_mstamp: sk.first_tx_mstamp,
            app_limited: sk.app_limited != 0,
        });
        sk.packets_out += 1;
        sk.snd_nxt = sk.snd_nxt.wrapping_add(sk.mss_cache);
        sk.max_packets_out = sk.max_packets_out.max(sk.packets_out);
        let rate = (sk.inet_conn.icsk_inet.sk_pacing_rate as u64).max(1);
        self.next_send_us = now + (sk.mss_cache as u64 * 1_000_000).div_ceil(rate);
    }

    fn ack(&mut self) {
        let p = self.flight.pop_front().unwrap();
        let now = self.now_us;
        let sk = &mut self.sk;
        let prior_in_flight = sk.packets_out;
        sk.tcp_mstamp = now;
        sk.packets_out -= 1;
        sk.snd_una = sk.snd_una.wrapping_add(sk.mss_cache);
        // tcp_rate_skb_delivered()
        sk.delivered += 1;
        let rtt = now - p.sent_us;
        sk.first_tx_mstamp = p.sent_us;
        // tcp_rate_gen()
        let mut rs = RateSample {
            prior_delivered: p.delivered,
            prior_mstamp: p.delivered_mstamp,
            is_app_limited: p.app_limited,
            acked_sacked: 1,
            prior_in_flight,
            rtt_us: rtt as _,
            ..Default::default()
        };
        if sk.app_limited != 0 && (sk.app_limited.wrapping_sub(sk.delivered) as i32) < 0 {
            sk.app_limited = 0;
        }
        sk.delivered_mstamp = now;
        if rs.prior_delivered >= self.next_round_delivered {
            self.next_round_delivered = sk.delivered;
            self.round += 1;
        }
        rs.delivered = (sk.delivered - rs.prior_delivered) as i32;
        let snd_us = p.sent_us - p.first_tx_mstamp;
        let ack_us = now - p.delivered_mstamp;
        rs.interval_us = snd_us.max(ack_us) as _;
        // RTT estimators of tcp_input.c (srtt << 3; windowed min simplified
        // to an all-time min: the path never changes here).
        let rtt32 = rtt as u32;
        if sk.srtt_us == 0 {
            sk.srtt_us = rtt32 << 3;
        } else {
            sk.srtt_us = sk.srtt_us - (sk.srtt_us >> 3) + rtt32;
        }
        if rtt32 < sk.rtt_min.s[0].v {
            for s in sk.rtt_min.s.iter_mut() {
                *s = cc_native::MinmaxSample { t: (now / 1000) as u32, v: rtt32 };
            }
        }
        if (rs.interval_us as i64) < sk.rtt_min.s[0].v as i64 {
            rs.interval_us = -1; // too short to be a valid sample
        }
        sk.is_cwnd_limited = 1;
        if self.ops.has_cong_control() {
            self.ops.cong_control(sk, sk.snd_una, 0, &rs);
        } else {
            self.ops.cong_avoid(sk, sk.snd_una, 1);
        }
        self.trace.push(Sample {
            now_us: now,
            mode: sk.cca.trace_mode,
            pacing_gain: sk.cca.trace_pacing_gain,
            cwnd_gain: sk.cca.trace_cwnd_gain,
            bw_bytes_per_sec: sk.cca.trace_bw,
            cwnd: sk.snd_cwnd,
            inflight: sk.packets_out,
            pacing_rate: sk.inet_conn.icsk_inet.sk_pacing_rate as u64,
            rtt_us: rtt,
            delivered: sk.delivered,
            round: self.round,
        });
    }

    /// A rate sample for an ACK played by hand ([`FakeNet::hand_ack`]):
    /// one packet delivered, sent when tp->delivered was
    /// `prior_delivered`, `losses` newly lost, RTT `rtt_us`, a 20 ms
    /// interval.
    pub fn hand_sample(prior_delivered: u32, losses: u32, rtt_us: u64) -> RateSample {
        RateSample {
            delivered: 1,
            interval_us: 20_000,
            acked_sacked: 1,
            losses: losses as _,
            prior_delivered,
            rtt_us: rtt_us as _,
            ..Default::default()
        }
    }

    /// One ACK played by hand, as the stack would hand it over: delivers
    /// one packet (tp->delivered, packets_out, the clock 100 us on) and
    /// calls cong_control with `rs` (its prior_in_flight filled in). Lost
    /// packets are the caller's to take off packets_out and add to
    /// tp->lost.
    pub fn hand_ack(&mut self, rs: RateSample) {
        let sk = &mut self.sk;
        sk.delivered += 1;
        sk.packets_out = sk.packets_out.saturating_sub(1);
        sk.tcp_mstamp += 100;
        sk.delivered_mstamp = sk.tcp_mstamp;
        let rs = RateSample { prior_in_flight: sk.packets_out + 1, ..rs };
        self.ops.cong_control(sk, sk.snd_una, 0, &rs);
    }

    /// Run until `end_us`: ACKs first at equal times, then sends.
    pub fn run_until(&mut self, end_us: u64) {
        loop {
            let next_ack = self.flight.front().map(|p| p.ack_us).unwrap_or(u64::MAX);
            let can_send = self.inflight() < self.sk.snd_cwnd;
            let next_send = if can_send { self.next_send_us.max(self.now_us) } else { u64::MAX };
            let t = next_ack.min(next_send);
            if t > end_us {
                self.now_us = end_us;
                return;
            }
            self.now_us = t;
            self.sk.tcp_mstamp = t;
            if next_ack <= next_send {
                self.ack();
            } else {
                self.send();
            }
        }
    }
}
