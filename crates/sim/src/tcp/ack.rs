//! ACK processing, in the order of Linux's `tcp_ack()` (tcp_input.c,
//! Linux >= 6.10):
//!
//! 1. `rs.prior_in_flight`; fast path (pure cumulative advance) or slow
//!    path (SACK blocks: `tcp_sacktag_write_queue`; ECE, which also sets
//!    `CA_ACK_ECE` and `rs.is_ece`); `in_ack_event`;
//! 2. `tcp_clean_rtx_queue`: drop cumulatively ACKed segments, count
//!    `delivered`, advance RACK, rate-sample every delivered segment, RTT
//!    samples (Karn: only never-retransmitted segments), `pkts_acked`;
//! 3. TLP episode check, `tcp_fastretrans_alert` for "dubious" ACKs (not a
//!    pure advance, SACK info, ECE, or not in Open; ECE in Open/Disorder
//!    enters CWR), transmit timer;
//! 4. `tcp_rate_gen`, then `tcp_cong_control`: the CC's `cong_control`,
//!    or PRR in CWR/Recovery / `cong_avoid` when in-order data was ACKed,
//!    then `tcp_update_pacing_rate`.
//!
//! Retransmissions that Linux sends at the end of `tcp_ack`
//! (`tcp_xmit_recovery`) go out in the [`TcpSender::poll`] that the event
//! loop runs right after every ACK.

use super::rate_sample::{self, AckRate};
use super::rtt::RttEstimator;
use super::scoreboard::flag as sf;
use super::TcpSender;
use crate::config::EcnMode;
use crate::packet::AckPacket;
use cc_native::{AckSample, CaState, RateSample, CA_ACK_ECE, CA_ACK_SLOWPATH, CA_ACK_WIN_UPDATE};

/// `FLAG_*` of tcp_input.c (the `flag` argument of `cong_control`).
pub mod ackflag {
    pub const DATA: u32 = 0x01;
    pub const WIN_UPDATE: u32 = 0x02;
    pub const DATA_ACKED: u32 = 0x04;
    pub const RETRANS_DATA_ACKED: u32 = 0x08;
    pub const SYN_ACKED: u32 = 0x10;
    pub const DATA_SACKED: u32 = 0x20;
    pub const ECE: u32 = 0x40;
    pub const LOST_RETRANS: u32 = 0x80;
    pub const SLOWPATH: u32 = 0x100;
    pub const ORIG_SACK_ACKED: u32 = 0x200;
    pub const SND_UNA_ADVANCED: u32 = 0x400;
    pub const DSACKING_ACK: u32 = 0x800;
    pub const SET_XMIT_TIMER: u32 = 0x1000;
    pub const ACKED: u32 = DATA_ACKED | SYN_ACKED;
    pub const NOT_DUP: u32 = DATA | WIN_UPDATE | ACKED;
    pub const CA_ALERT: u32 = DATA_SACKED | ECE | DSACKING_ACK;
}
use ackflag as F;

/// What SACK tagging learned (`struct tcp_sacktag_state`).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct SackState {
    /// us, send time of the first / last newly SACKed never-retransmitted
    /// segment (0: none).
    first_sackt: u64,
    last_sackt: u64,
    /// Segments newly SACKed.
    delivered: u32,
}

impl TcpSender {
    pub(super) fn process_ack(&mut self, ack: &AckPacket) {
        let cum = ack.cum_ack;
        let prior_snd_una = self.sb.una();
        // Old (reordered) or impossible ACKs are ignored.
        if cum < prior_snd_una || cum > self.sb.nxt() {
            return;
        }
        let mut flag = 0u32;
        if cum > prior_snd_una {
            flag |= F::SND_UNA_ADVANCED;
            self.rec.retransmits = 0;
        }
        let mut ar = AckRate::new();
        let mut sack = SackState::default();
        ar.rs.prior_in_flight = self.in_flight();
        let prior_packets = self.sk.packets_out;
        let prior_delivered = self.sk.delivered;
        let prior_lost = self.sk.lost;

        self.sk.snd_una = self.seq_bytes(cum);
        let ece = self.ecn_echo(ack);
        if ece {
            flag |= F::ECE;
        }
        if ack.n_sacks == 0 && cum > prior_snd_una && !ece {
            // Header-predicted pure ACK (Linux's fast path).
            flag |= F::WIN_UPDATE;
            self.ops.in_ack_event(&mut self.sk, CA_ACK_WIN_UPDATE);
        } else {
            flag |= F::SLOWPATH;
            let mut ev = CA_ACK_SLOWPATH;
            if ece {
                ev |= CA_ACK_ECE;
            }
            if cum > prior_snd_una {
                flag |= F::WIN_UPDATE;
                ev |= CA_ACK_WIN_UPDATE;
            }
            if ack.n_sacks > 0 {
                flag |= self.sacktag(ack, &mut sack, &mut ar);
            }
            self.sk.delivered += sack.delivered;
            self.ops.in_ack_event(&mut self.sk, ev);
        }
        if prior_packets == 0 {
            return;
        }
        flag |= self.clean_rtx_queue(cum, &sack, &mut ar);
        if self.rec.tlp_high_seq.is_some() {
            self.process_tlp_ack(cum, flag);
        }
        if self.ack_is_dubious(flag) {
            self.fastretrans_alert(&mut flag);
        }
        if flag & F::SET_XMIT_TIMER != 0 {
            self.set_xmit_timer();
        }
        let delivered = self.sk.delivered - prior_delivered;
        if ece && self.ecn == EcnMode::Classic {
            // tcp_count_delivered(): all that an ECE ACK delivers counts.
            self.sk.delivered_ce += delivered;
        }
        let lost = self.sk.lost - prior_lost;
        ar.rs.is_ece = ece;
        // rs.is_ack_delayed stays false: Linux sets it (FLAG_ACK_MAYBE_DELAYED)
        // only when one runt segment, less than an MSS, is cumulatively
        // ACKed, and a bulk flow sends full segments only.
        rate_sample::gen(&mut self.sk, delivered, lost, &mut ar);
        self.cong_control(cum, delivered, flag, &ar.rs);
    }

    /// Whether this ACK signals congestion (`FLAG_ECE`): classic ECN's ECE
    /// bit, or AccECN's CE count having grown since the last ACK, whose
    /// increase counts into `delivered_ce` (`tcp_accecn_process`).
    fn ecn_echo(&mut self, ack: &AckPacket) -> bool {
        match self.ecn {
            EcnMode::Off => false,
            EcnMode::Classic => ack.ece,
            EcnMode::Accecn => {
                let newly = ack.ce_packets.wrapping_sub(self.ce_acked);
                self.ce_acked = ack.ce_packets;
                self.sk.delivered_ce += newly;
                newly > 0
            }
        }
    }

    /// `tcp_ack_is_dubious()`.
    fn ack_is_dubious(&self, flag: u32) -> bool {
        flag & F::NOT_DUP == 0 || flag & F::CA_ALERT != 0 || self.ca_state() != CaState::Open as u8
    }

    /// `tcp_sacktag_write_queue()`: tags the newly SACKed segments.
    fn sacktag(&mut self, ack: &AckPacket, st: &mut SackState, ar: &mut AckRate) -> u32 {
        let mut blocks = ack.sacks;
        let blocks = &mut blocks[..ack.n_sacks as usize];
        blocks.sort_unstable_by_key(|b| b.0);
        let mut newly = std::mem::take(&mut self.sack_scratch);
        newly.clear();
        for &(s, e) in blocks.iter() {
            self.sb.add_sack_block(s, e, &mut newly);
        }
        let mut flag = 0;
        for &(s, e) in &newly {
            for seq in s..e {
                flag |= self.sacktag_one(seq, st, ar);
            }
        }
        self.sack_scratch = newly;
        flag
    }

    /// `tcp_sacktag_one()` + the rate sample and time-sorted list updates
    /// of `tcp_sacktag_walk()`, for a segment not SACKed before.
    fn sacktag_one(&mut self, seq: u32, st: &mut SackState, ar: &mut AckRate) -> u32 {
        let mut flag = F::DATA_SACKED;
        let high_seq = self.rec.high_seq;
        let sk = &mut self.sk;
        let seg = self.sb.seg_mut(seq);
        let sacked = seg.flags;
        self.rack.advance(sk, sacked, seq + 1, seg.sent_us);
        if sacked & sf::RETRANS != 0 {
            // A lost-and-retransmitted segment: the retransmission arrived.
            // (Without LOST the original may still be in flight: keep RETRANS.)
            if sacked & sf::LOST != 0 {
                seg.flags &= !(sf::LOST | sf::RETRANS);
                sk.lost_out -= 1;
                sk.retrans_out -= 1;
            }
        } else {
            if sacked & sf::EVER_RETRANS == 0 {
                if seq < high_seq {
                    flag |= F::ORIG_SACK_ACKED;
                }
                if st.first_sackt == 0 {
                    st.first_sackt = seg.sent_us;
                }
                st.last_sackt = seg.sent_us;
            }
            if sacked & sf::LOST != 0 {
                seg.flags &= !sf::LOST;
                sk.lost_out -= 1;
            }
        }
        seg.flags |= sf::SACKED;
        sk.sacked_out += 1;
        st.delivered += 1;
        rate_sample::skb_delivered(sk, seg, seq, ar);
        self.sb.ts_unlink(seq);
        flag
    }

    /// `tcp_clean_rtx_queue()`: removes the segments below `cum`.
    fn clean_rtx_queue(&mut self, cum: u32, st: &SackState, ar: &mut AckRate) -> u32 {
        let mut flag = 0u32;
        let (mut first_ackt, mut last_ackt) = (0u64, 0u64);
        let mut pkts_acked = 0u32;
        let high_seq = self.rec.high_seq;
        while self.sb.una() < cum {
            let seq = self.sb.una();
            let mut seg = self.sb.pop_front();
            let sacked = seg.flags;
            let sk = &mut self.sk;
            if sacked & sf::ANY_RETRANS != 0 {
                if sacked & sf::RETRANS != 0 {
                    sk.retrans_out -= 1;
                }
                flag |= F::RETRANS_DATA_ACKED;
            } else if sacked & sf::SACKED == 0 {
                last_ackt = seg.sent_us;
                if first_ackt == 0 {
                    first_ackt = last_ackt;
                }
                if seq < high_seq {
                    flag |= F::ORIG_SACK_ACKED;
                }
            }
            if sacked & sf::SACKED != 0 {
                sk.sacked_out -= 1;
            } else {
                sk.delivered += 1;
                self.rack.advance(sk, sacked, seq + 1, seg.sent_us);
            }
            if sacked & sf::LOST != 0 {
                sk.lost_out -= 1;
            }
            sk.packets_out -= 1;
            pkts_acked += 1;
            rate_sample::skb_delivered(sk, &mut seg, seq, ar);
            flag |= F::DATA_ACKED;
        }
        if pkts_acked > 0 {
            self.sb.trim_sacked();
        }
        self.sync_seq();

        let now = self.sk.tcp_mstamp;
        let (mut seq_rtt, mut ca_rtt, mut sack_rtt) = (-1i64, -1i64, -1i64);
        if first_ackt != 0 && flag & F::RETRANS_DATA_ACKED == 0 {
            seq_rtt = now.saturating_sub(first_ackt) as i64;
            ca_rtt = now.saturating_sub(last_ackt) as i64;
        }
        if st.first_sackt != 0 {
            sack_rtt = now.saturating_sub(st.first_sackt) as i64;
            ca_rtt = now.saturating_sub(st.last_sackt) as i64;
        }
        let rtt_update = self.ack_update_rtt(seq_rtt, sack_rtt, ca_rtt, &mut ar.rs);
        if flag & F::ACKED != 0 {
            flag |= F::SET_XMIT_TIMER;
        } else if !self.sb.is_empty()
            && rtt_update
            && sack_rtt >= 0
            && sack_rtt > now.saturating_sub(self.sb.seg(self.sb.una()).sent_us) as i64
        {
            // The SACKed data was sent before the head's last transmission:
            // the head is not overdue, restart its timer.
            flag |= F::SET_XMIT_TIMER;
        }
        let sample = AckSample {
            pkts_acked,
            rtt_us: ar.rs.rtt_us as i32,
            in_flight: self.mss.wrapping_mul(self.sk.delivered.wrapping_sub(ar.rs.prior_delivered)),
        };
        self.ops.pkts_acked(&mut self.sk, &sample);
        flag
    }

    /// `tcp_ack_update_rtt()`: feeds the RTT estimator (µs samples, -1 =
    /// none). Returns whether an RTT sample was taken.
    fn ack_update_rtt(&mut self, seq_rtt: i64, sack_rtt: i64, ca_rtt: i64, rs: &mut RateSample) -> bool {
        let seq_rtt = if seq_rtt < 0 { sack_rtt } else { seq_rtt };
        rs.rtt_us = ca_rtt as _;
        if seq_rtt < 0 {
            return false;
        }
        let now_ms = self.now_ms();
        RttEstimator::update_rtt_min(&mut self.sk, ca_rtt as u32, now_ms);
        let (una, nxt) = (self.sb.una(), self.sb.nxt());
        self.rtt.estimate(&mut self.sk, seq_rtt, una, nxt);
        self.rtt.set_rto(&self.sk);
        self.rtt.backoff = 0;
        self.record_rtt(ca_rtt as u32);
        true
    }

    /// `tcp_cong_control()` (Linux >= 6.10).
    fn cong_control(&mut self, cum: u32, acked_sacked: u32, flag: u32, rs: &RateSample) {
        let ack = self.seq_bytes(cum);
        if self.ops.has_cong_control() {
            self.ops.cong_control(&mut self.sk, ack, flag as i32, rs);
            return;
        }
        if self.in_cwnd_reduction() {
            self.cwnd_reduction(acked_sacked, rs.losses.max(0) as u32, flag);
        } else if flag & F::DATA_ACKED != 0 {
            // tcp_may_raise_cwnd() with no reordering seen: in-order
            // delivery only. The CC checks tcp_is_cwnd_limited() itself.
            self.ops.cong_avoid(&mut self.sk, ack, acked_sacked);
            self.sk.snd_cwnd_stamp = self.now_ms();
        }
        super::pacing::update_pacing_rate(&mut self.sk);
    }
}
