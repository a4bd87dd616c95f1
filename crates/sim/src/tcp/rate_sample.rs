//! Delivery-rate sampling, Linux's net/ipv4/tcp_rate.c
//! (draft-cheng-iccrg-delivery-rate-estimation):
//!
//! - on send (`tcp_rate_skb_sent`): stamp the skb with `tp->delivered`,
//!   `tp->delivered_mstamp`, `tp->first_tx_mstamp` and the app-limited bit;
//!   with nothing in flight the send window restarts now;
//! - on each newly (S)ACKed skb (`tcp_rate_skb_delivered`): the most
//!   recently sent one provides the sample's starting point
//!   (`prior_delivered`, `prior_mstamp`) and the send-phase interval, and
//!   `first_tx_mstamp` advances to its send time;
//! - once per ACK (`tcp_rate_gen`): delivered = `tp->delivered` −
//!   `prior_delivered` over max(send phase, ACK phase); a sample whose
//!   interval is below min_rtt is invalid (`interval_us = -1`);
//! - `tcp_rate_check_app_limited`: mark the "bubble" when the sender has
//!   nothing to send and is not cwnd-limited.
//!
//! Also the fields only Google's BBRv3 kernel has (`tx.in_flight`,
//! `tx.lost` per skb, hence `rs->tx_in_flight` and `rs->lost`), and
//! mainline's `delivered_ce` per sample.
//!
//! Times are us (`tp->tcp_mstamp` clock).

use super::scoreboard::{flag, Seg, TxInfo};
use cc_native::{RateSample, TcpSock};

/// A rate sample being built during one ACK, plus what Linux keeps in
/// `rs->last_end_seq` (here in segments).
#[derive(Clone, Copy, Debug)]
pub struct AckRate {
    pub rs: RateSample,
    /// End (segment number + 1) of the skb that provided the sample.
    last_end_seg: u32,
    /// `tp->lost` when that skb was sent.
    prior_lost: u32,
}

impl AckRate {
    /// `struct rate_sample rs = { .prior_delivered = 0 }` with `rtt_us` -1.
    pub fn new() -> Self {
        let rs = RateSample { rtt_us: -1, interval_us: -1, delivered: -1, ..Default::default() };
        Self { rs, last_end_seg: 0, prior_lost: 0 }
    }
}

impl Default for AckRate {
    fn default() -> Self {
        Self::new()
    }
}

/// `tcp_skb_sent_after()`: was (t1, seq1) sent after (t2, seq2)?
pub fn sent_after(t1: u64, t2: u64, seq1: u32, seq2: u32) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

/// `tcp_rate_skb_sent()` for an skb sent at `sent_us`; call before
/// `packets_out` counts it. Returns the stamp for its segments.
pub fn skb_sent(sk: &mut TcpSock, sent_us: u64) -> TxInfo {
    if sk.packets_out == 0 {
        // Nothing in flight: the send and delivery windows start now.
        sk.first_tx_mstamp = sent_us;
        sk.delivered_mstamp = sent_us;
    }
    TxInfo {
        delivered: sk.delivered,
        delivered_mstamp: sk.delivered_mstamp,
        first_tx_mstamp: sk.first_tx_mstamp,
        app_limited: sk.app_limited != 0,
        delivered_ce: sk.delivered_ce,
        in_flight: 0,
        lost: sk.lost,
    }
}

/// `tcp_rate_skb_delivered()`: segment `seq` was just (S)ACKed.
pub fn skb_delivered(sk: &mut TcpSock, seg: &mut Seg, seq: u32, ar: &mut AckRate) {
    if seg.tx_delivered_mstamp == 0 {
        return; // already used when it was SACKed
    }
    let end = seq + 1;
    let rs = &mut ar.rs;
    if rs.prior_delivered == 0 || sent_after(seg.sent_us, sk.first_tx_mstamp, end, ar.last_end_seg) {
        rs.prior_delivered = seg.tx_delivered;
        rs.prior_delivered_ce = seg.tx_delivered_ce;
        rs.prior_mstamp = seg.tx_delivered_mstamp;
        rs.is_app_limited = seg.has(flag::APP_LIMITED);
        rs.is_retrans = seg.has(flag::ANY_RETRANS);
        rs.tx_in_flight = seg.tx_in_flight;
        ar.prior_lost = seg.tx_lost;
        ar.last_end_seg = end;
        rs.last_end_seq = end.wrapping_mul(sk.mss_cache);
        // The send phase of this window: first to latest transmission.
        sk.first_tx_mstamp = seg.sent_us;
        rs.interval_us = sk.first_tx_mstamp.saturating_sub(seg.tx_first_tx_mstamp) as _;
    }
    // A SACKed segment must not count again when cumulatively ACKed.
    if seg.has(flag::SACKED) {
        seg.tx_delivered_mstamp = 0;
    }
}

/// `tcp_rate_gen()`: completes the sample once per ACK. `delivered` and
/// `lost` are the packets newly delivered / marked lost by this ACK.
pub fn gen(sk: &mut TcpSock, delivered: u32, lost: u32, ar: &mut AckRate) {
    // The app-limited bubble is over once it has been delivered.
    if sk.app_limited != 0 && (sk.delivered.wrapping_sub(sk.app_limited) as i32) > 0 {
        sk.app_limited = 0;
    }
    if delivered != 0 {
        sk.delivered_mstamp = sk.tcp_mstamp;
    }
    let rs = &mut ar.rs;
    rs.acked_sacked = delivered;
    rs.losses = lost as i32;
    if rs.prior_mstamp == 0 {
        // No timing information (nothing newly delivered with a stamp).
        rs.delivered = -1;
        rs.interval_us = -1;
        return;
    }
    rs.delivered = sk.delivered.wrapping_sub(rs.prior_delivered) as i32;
    rs.delivered_ce = sk.delivered_ce.wrapping_sub(rs.prior_delivered_ce) as i32;
    rs.lost = sk.lost.wrapping_sub(ar.prior_lost) as i32;
    // Send and ACK phases are separate pipeline stages; take the longer.
    let snd_us = rs.interval_us.max(0) as u64;
    let ack_us = sk.tcp_mstamp.saturating_sub(rs.prior_mstamp);
    rs.interval_us = snd_us.max(ack_us) as _;
    rs.snd_interval_us = snd_us as u32;
    rs.rcv_interval_us = ack_us as u32;
    let min_rtt = sk.rtt_min.s[0].v as i64;
    #[allow(clippy::useless_conversion)] // c_long is i64 only on LP64
    let interval = i64::from(rs.interval_us);
    if interval < min_rtt {
        // Shorter than a round trip: an ACK-compression artefact.
        rs.interval_us = -1;
        return;
    }
    // Keep the last non-app-limited sample, or a faster app-limited one.
    if !rs.is_app_limited
        || (rs.delivered as u64) * (sk.rate_interval_us as u64)
            >= (sk.rate_delivered as u64) * (rs.interval_us as u64)
    {
        sk.rate_delivered = rs.delivered as u32;
        sk.rate_interval_us = rs.interval_us as u32;
        sk.rate_app_limited = rs.is_app_limited as u8;
    }
}

/// `tcp_rate_check_app_limited()`: with no data left to send, not
/// cwnd-limited and no lost segment awaiting retransmission, the flow is
/// application-limited until what is in flight now has been delivered.
pub fn check_app_limited(sk: &mut TcpSock, has_data: bool) {
    let in_flight = packets_in_flight(sk);
    if !has_data && in_flight < sk.snd_cwnd && sk.lost_out <= sk.retrans_out {
        let v = sk.delivered.wrapping_add(in_flight);
        sk.app_limited = if v == 0 { 1 } else { v };
    }
}

/// `tcp_packets_in_flight()`.
pub fn packets_in_flight(sk: &TcpSock) -> u32 {
    sk.packets_out - (sk.sacked_out + sk.lost_out) + sk.retrans_out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::minmax;

    fn sock() -> TcpSock {
        let mut sk = TcpSock { mss_cache: 1448, ..Default::default() };
        minmax::reset(&mut sk.rtt_min, 0, 10_000);
        sk
    }

    /// A 10 ms path that delivers one packet per 100 us, with the sender
    /// sending one packet per 100 us: every sample measures 0.01 pkt/us.
    #[test]
    fn steady_stream_measures_the_path_rate() {
        let mut sk = sock();
        let mut segs: Vec<Seg> = Vec::new();
        let n = 300u64;
        let mut samples = Vec::new();
        // Events in time order: the send of segment i at 1000 + 100 i, its
        // ACK 10 ms later (ACKs first on ties).
        let (mut next_send, mut next_ack) = (0u64, 0u64);
        while next_ack < n {
            let t_ack = 1000 + 100 * next_ack + 10_000;
            let t_send = 1000 + 100 * next_send;
            if next_send < n && t_send < t_ack {
                let tx = skb_sent(&mut sk, t_send);
                sk.packets_out += 1;
                segs.push(Seg::new(t_send, tx));
                next_send += 1;
            } else {
                sk.tcp_mstamp = t_ack;
                let mut ar = AckRate::new();
                let j = next_ack as usize;
                skb_delivered(&mut sk, &mut segs[j], j as u32, &mut ar);
                sk.delivered += 1;
                sk.packets_out -= 1;
                gen(&mut sk, 1, 0, &mut ar);
                samples.push(ar.rs);
                next_ack += 1;
            }
        }
        // After the first round trip every sample is exact.
        for rs in &samples[150..] {
            assert_eq!((rs.delivered, rs.interval_us), (100, 10_000), "{rs:?}");
        }
        assert_eq!(sk.rate_delivered, 100);
        assert_eq!(sk.rate_interval_us, 10_000);
    }

    #[test]
    fn sample_shorter_than_min_rtt_is_invalid() {
        let mut sk = sock();
        let tx = skb_sent(&mut sk, 1000);
        sk.packets_out = 1;
        let mut seg = Seg::new(1000, tx);
        sk.tcp_mstamp = 5000; // 4 ms < min_rtt 10 ms
        let mut ar = AckRate::new();
        skb_delivered(&mut sk, &mut seg, 0, &mut ar);
        sk.delivered = 1;
        gen(&mut sk, 1, 0, &mut ar);
        assert_eq!(ar.rs.interval_us, -1);
        assert_eq!(ar.rs.delivered, 1);
    }

    #[test]
    fn app_limited_bubble_ends_when_delivered() {
        let mut sk = sock();
        sk.snd_cwnd = 10;
        sk.packets_out = 4;
        sk.delivered = 100;
        check_app_limited(&mut sk, false);
        assert_eq!(sk.app_limited, 104);
        let tx = skb_sent(&mut sk, 0);
        assert!(tx.app_limited);
        sk.delivered = 104;
        gen(&mut sk, 0, 0, &mut AckRate::new());
        assert_eq!(sk.app_limited, 104);
        sk.delivered = 105;
        gen(&mut sk, 0, 0, &mut AckRate::new());
        assert_eq!(sk.app_limited, 0);
    }

    #[test]
    fn most_recently_sent_segment_wins() {
        let mut sk = sock();
        let tx0 = skb_sent(&mut sk, 1000);
        sk.packets_out += 1;
        let mut a = Seg::new(1000, tx0);
        sk.delivered = 7; // pretend something was delivered in between
        let tx1 = skb_sent(&mut sk, 2000);
        sk.packets_out += 1;
        let mut b = Seg::new(2000, tx1);
        let mut ar = AckRate::new();
        skb_delivered(&mut sk, &mut b, 1, &mut ar);
        skb_delivered(&mut sk, &mut a, 0, &mut ar);
        assert_eq!(ar.rs.prior_delivered, 7);
        assert_eq!(sk.first_tx_mstamp, 2000);
    }
}
