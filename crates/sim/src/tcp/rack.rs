//! RACK loss detection (RFC 8985), Linux's net/ipv4/tcp_recovery.c:
//!
//! A segment is lost once a segment sent after it has been delivered and
//! more than `rack.rtt + reo_wnd` has passed since it was sent:
//!
//! ```text
//!   lost(s)  <=>  sent_after(rack.mstamp, s.sent) && now - s.sent >= rack.rtt + reo_wnd
//! ```
//!
//! `rack.mstamp`/`rack.end_seq` identify the most recently sent delivered
//! segment and `rack.rtt` its RTT (`tcp_rack_advance`). Segments not yet
//! past their deadline arm the reorder timer for the longest wait.
//!
//! `reo_wnd` (`tcp_rack_reo_wnd`): with no reordering ever seen (the
//! simulator never reorders, and DSACK-driven reordering detection is not
//! modelled) it is 0 in Recovery/Loss or once `sacked_out` reaches the
//! dupthresh (`tp->reordering` = 3), else min(min_rtt/4, srtt).

use super::rate_sample::sent_after;
use super::scoreboard::{flag, Scoreboard};
use cc_native::{CaState, TcpSock};

/// Linux `tp->reordering` default (sysctl tcp_reordering): the dupthresh.
pub const REORDERING: u32 = 3;

#[derive(Clone, Debug)]
pub struct Rack {
    /// us, send time of the most recently sent delivered segment.
    pub mstamp_us: u64,
    /// End (segment number + 1) of that segment.
    pub end_seq: u32,
    /// us, RTT of the most recently delivered segment.
    pub rtt_us: u32,
    /// A delivery advanced the state since the last loss scan.
    pub advanced: bool,
    /// Multiplier of min_rtt/4 (grows with DSACKs in Linux; 1 here).
    reo_wnd_steps: u32,
}

impl Default for Rack {
    fn default() -> Self {
        Self { mstamp_us: 0, end_seq: 0, rtt_us: 0, advanced: false, reo_wnd_steps: 1 }
    }
}

impl Rack {
    /// `tcp_rack_advance()`: segment `[end_seq - 1, end_seq)` sent at
    /// `xmit_us` (with its `sacked` bits `flags`) was just delivered.
    pub fn advance(&mut self, sk: &TcpSock, flags: u8, end_seq: u32, xmit_us: u64) {
        let rtt_us = sk.tcp_mstamp.saturating_sub(xmit_us) as u32;
        if rtt_us < sk.rtt_min.s[0].v && flags & flag::ANY_RETRANS != 0 {
            // Faster than possible for the retransmission: the original was
            // delivered (or this is ambiguous); learn nothing.
            return;
        }
        self.advanced = true;
        self.rtt_us = rtt_us;
        if sent_after(xmit_us, self.mstamp_us, end_seq, self.end_seq) {
            self.mstamp_us = xmit_us;
            self.end_seq = end_seq;
        }
    }

    /// `tcp_rack_reo_wnd()`, us.
    pub fn reo_wnd(&self, sk: &TcpSock) -> u32 {
        // No reordering is ever seen (reord_seen == 0): be aggressive in
        // recovery or once dupthresh SACKs arrived.
        if sk.inet_conn.icsk_ca_state >= CaState::Recovery as u8 || sk.sacked_out >= REORDERING {
            return 0;
        }
        ((sk.rtt_min.s[0].v >> 2).saturating_mul(self.reo_wnd_steps)).min(sk.srtt_us >> 3)
    }

    /// us left before the segment sent at `xmit_us` counts as lost
    /// (`tcp_rack_skb_timeout`); <= 0 means lost now.
    pub fn skb_timeout(&self, now_us: u64, xmit_us: u64, reo_wnd: u32) -> i64 {
        self.rtt_us as i64 + reo_wnd as i64 - now_us.saturating_sub(xmit_us) as i64
    }

    /// `tcp_rack_detect_loss()`: marks lost every segment sent before the
    /// RACK segment whose deadline passed; returns the longest remaining
    /// wait (us) of the others, 0 if none.
    pub fn detect_loss(&self, sk: &mut TcpSock, sb: &mut Scoreboard) -> u32 {
        let reo_wnd = self.reo_wnd(sk);
        let now = sk.tcp_mstamp;
        let mut reo_timeout = 0u32;
        // Lost-and-not-retransmitted and SACKed segments are not on the list.
        let mut cur = sb.ts_first();
        while let Some(seq) = cur {
            cur = sb.ts_next(seq);
            let sent = sb.seg(seq).sent_us;
            if !sent_after(self.mstamp_us, sent, self.end_seq, seq + 1) {
                break;
            }
            let remaining = self.skb_timeout(now, sent, reo_wnd);
            if remaining <= 0 {
                sb.mark_lost(sk, seq);
            } else {
                reo_timeout = reo_timeout.max(remaining as u32);
            }
        }
        reo_timeout
    }

    /// `tcp_rack_mark_lost()` minus the timer: scans only if a delivery
    /// advanced RACK; returns the reorder timeout to arm (us, 0 = none).
    pub fn mark_lost(&mut self, sk: &mut TcpSock, sb: &mut Scoreboard) -> u32 {
        if !self.advanced {
            return 0;
        }
        self.advanced = false;
        self.detect_loss(sk, sb)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::minmax;
    use crate::tcp::scoreboard::{Seg, TxInfo};

    fn setup(n: u32) -> (TcpSock, Scoreboard) {
        let mut sk = TcpSock::default();
        minmax::reset(&mut sk.rtt_min, 0, 10_000);
        sk.srtt_us = 12_000 << 3;
        let mut sb = Scoreboard::default();
        for i in 0..n {
            // Sent 100 us apart from t = 1000 us.
            sb.push(Seg::new(1000 + 100 * i as u64, TxInfo::default()));
            sk.packets_out += 1;
        }
        (sk, sb)
    }

    #[test]
    fn segment_is_lost_after_rack_rtt_plus_reo_wnd() {
        let (mut sk, mut sb) = setup(10);
        let mut rack = Rack::default();
        // Segment 0 vanished; segment 1 is SACKed 10 ms after it was sent.
        sk.tcp_mstamp = 1100 + 10_000;
        sb.ts_unlink(1);
        rack.advance(&sk, 0, 2, 1100);
        assert_eq!(rack.rtt_us, 10_000);
        // Open state, one SACK: reo_wnd = min_rtt / 4 = 2.5 ms.
        assert_eq!(rack.reo_wnd(&sk), 2_500);
        let wait = rack.mark_lost(&mut sk, &mut sb);
        // Segment 0 was sent 100 us before segment 1: 2.4 ms left.
        assert_eq!(wait, 2_400);
        assert_eq!(sk.lost_out, 0);
        // When the reorder timer fires it is lost; 2..9 are not examined.
        sk.tcp_mstamp += 2_400;
        assert_eq!(rack.detect_loss(&mut sk, &mut sb), 0);
        assert_eq!(sk.lost_out, 1);
        assert!(sb.seg(0).has(flag::LOST));
        assert!(!sb.seg(2).has(flag::LOST));
    }

    #[test]
    fn in_recovery_the_reordering_window_is_zero() {
        let (mut sk, mut sb) = setup(10);
        sk.inet_conn.icsk_ca_state = CaState::Recovery as u8;
        let mut rack = Rack::default();
        sk.tcp_mstamp = 1500 + 10_000;
        for s in 1..=5 {
            sb.ts_unlink(s);
        }
        rack.advance(&sk, 0, 6, 1500);
        assert_eq!(rack.reo_wnd(&sk), 0);
        assert_eq!(rack.mark_lost(&mut sk, &mut sb), 0);
        assert_eq!(sk.lost_out, 1);
        assert_eq!(sk.lost, 1);
    }

    #[test]
    fn fast_ack_of_a_retransmission_is_ignored() {
        let (sk, _) = setup(1);
        let mut rack = Rack::default();
        let mut sk = sk;
        sk.tcp_mstamp = 5_000;
        rack.advance(&sk, flag::EVER_RETRANS, 1, 1000);
        assert!(!rack.advanced);
        rack.advance(&sk, 0, 1, 1000);
        assert!(rack.advanced);
    }
}
