//! ACK processing, in the order of Linux's `tcp_ack()` (tcp_input.c,
//! Linux >= 6.10):
//!
//! 1. `rs.prior_in_flight`; fast path (pure cumulative advance) or slow
//!    path (SACK blocks: `tcp_sacktag_write_queue`; ECE, which also sets
//!    `CA_ACK_ECE` and `rs.is_ece`); `in_ack_event`;
//!    SACK tagging starts with the DSACK check (`tcp_check_dsack`): a first
//!    block below the cumulative ACK, or inside the second block, reports
//!    a duplicate (RFC 2883); it counts as delivered and towards undo;
//! 2. `tcp_clean_rtx_queue`: drop cumulatively ACKed segments, count
//!    `delivered`, advance RACK, rate-sample every delivered segment, RTT
//!    samples (Karn: only never-retransmitted segments; else the TSecr's,
//!    in whole ms), `pkts_acked`;
//! 3. TLP episode check, `tcp_fastretrans_alert` for "dubious" ACKs (not a
//!    pure advance, SACK or DSACK info, ECE, or not in Open; ECE in
//!    Open/Disorder enters CWR), transmit timer; with nothing outstanding
//!    only a DSACK is looked at (`no_queue`: it may undo);
//! 4. `tcp_rate_gen`, then `tcp_cong_control`: the CC's `cong_control`,
//!    or PRR in CWR/Recovery / `cong_avoid` when in-order data was ACKed,
//!    then `tcp_update_pacing_rate`.
//!
//! Retransmissions that Linux sends at the end of `tcp_ack`
//! (`tcp_xmit_recovery`) go out in the [`TcpSender::poll`] that the event
//! loop runs right after every ACK.
//!
//! Old ACKs (below snd_una) are ignored: the ACK path of a flow is FIFO,
//! so Linux's `old_ack` processing of their SACK blocks never arises.

use super::rate_sample::{self, AckRate};
use super::rtt::RttEstimator;
use super::scoreboard::flag as sf;
use super::timestamp::{tsval_of, TsEcho};
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
    pub const DSACK_TLP: u32 = 0x20000;
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
        // tcp_fast_parse_options(): every segment carries timestamps.
        self.ts = TsEcho { saw_tstamp: true, rcv_tsecr: ack.tsecr };
        // tcp_replace_ts_recent(): a pure ACK is at rcv_wup, so every
        // ACK's TSval that is not older becomes the echo.
        if ack.tsval != 0 && !super::timestamp::ts_before(ack.tsval, self.ts_recent) {
            self.ts_recent = ack.tsval;
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
                flag |= self.sacktag(ack, prior_snd_una, &mut sack, &mut ar);
            }
            self.sk.delivered += sack.delivered;
            self.ops.in_ack_event(&mut self.sk, ev);
        }
        if prior_packets == 0 {
            // no_queue: if data was DSACKed, see if a reduction can be undone.
            if flag & F::DSACKING_ACK != 0 {
                self.fastretrans_alert(0, &mut flag);
            }
            if self.rec.tlp_high_seq.is_some() {
                self.process_tlp_ack(cum, flag);
            }
            return;
        }
        flag |= self.clean_rtx_queue(cum, &sack, &mut ar, flag);
        if self.rec.tlp_high_seq.is_some() {
            self.process_tlp_ack(cum, flag);
        }
        if self.ack_is_dubious(flag) {
            let dup = flag & (F::SND_UNA_ADVANCED | F::NOT_DUP | F::DSACKING_ACK) == 0;
            self.fastretrans_alert(dup as u32, &mut flag);
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

    /// `tcp_sacktag_write_queue()`: the DSACK check, then tags the newly
    /// SACKed segments. `prior_una`: snd_una before this ACK (the
    /// scoreboard's `una` still is; `sk.snd_una` is the new one).
    fn sacktag(&mut self, ack: &AckPacket, prior_una: u32, st: &mut SackState, ar: &mut AckRate) -> u32 {
        let n = ack.n_sacks as usize;
        let mut flag = 0;
        let found_dup = self.check_dsack(ack, prior_una, st, &mut flag);
        let (cum, nxt) = (ack.cum_ack, self.sb.nxt());
        let mut blocks = [(0u32, 0u32); crate::packet::MAX_SACK_BLOCKS];
        let mut used = 0;
        let mut dup_block = None;
        for (i, &(s, e)) in ack.sacks[..n].iter().enumerate() {
            let dup = i == 0 && found_dup;
            if !self.sack_block_valid(dup, s, e, cum) || e <= prior_una {
                continue;
            }
            if dup {
                // tcp_sacktag_one(dup_sack): a DSACKed retransmission of
                // the episode no longer counts as one that may be needed.
                for seq in s.max(prior_una)..e.min(nxt) {
                    let ever = self.sb.seg(seq).has(sf::ANY_RETRANS);
                    let u = &mut self.undo;
                    if ever && u.retrans > 0 && u.marker.is_some_and(|m| seq + 1 > m) {
                        u.retrans -= 1;
                    }
                }
                dup_block = Some((s, e));
            }
            blocks[used] = (s, e);
            used += 1;
        }
        let blocks = &mut blocks[..used];
        blocks.sort_unstable_by_key(|b| b.0);
        let mut newly = std::mem::take(&mut self.sack_scratch);
        newly.clear();
        for &(s, e) in blocks.iter() {
            self.sb.add_sack_block(s, e, &mut newly);
        }
        for &(s, e) in &newly {
            for seq in s..e {
                flag |= self.sacktag_one(seq, st, ar);
            }
        }
        self.sack_scratch = newly;
        if let Some((s, e)) = dup_block {
            // DSACK of a segment whose retransmission was still taken to
            // be in flight (S|R or R): it is not.
            for seq in s.max(cum)..e.min(nxt) {
                let seg = self.sb.seg_mut(seq);
                if seg.flags & sf::RETRANS != 0 {
                    seg.flags &= !sf::RETRANS;
                    self.sk.retrans_out -= 1;
                }
            }
        }
        flag
    }

    /// `tcp_check_dsack()` + `tcp_dsack_seen()`: is the first block a
    /// DSACK (below the cumulative ACK, or inside the second block)? A
    /// plausible one (no more segments DSACKed than ever retransmitted)
    /// sets `FLAG_DSACKING_ACK` (`FLAG_DSACK_TLP` for the loss probe's
    /// segment), counts its segments as delivered, and, for data below
    /// snd_una, against `undo_retrans`.
    fn check_dsack(&mut self, ack: &AckPacket, prior_una: u32, st: &mut SackState, flag: &mut u32) -> bool {
        let (s0, e0) = ack.sacks[0];
        if s0 >= ack.cum_ack {
            if ack.n_sacks < 2 {
                return false;
            }
            let (s1, e1) = ack.sacks[1];
            if e0 > e1 || s0 < s1 {
                return false;
            }
        }
        // tcp_dsack_seen()
        if s0 >= e0 {
            return false;
        }
        let len = e0 - s0;
        if len == 1 && self.rec.tlp_high_seq == Some(e0) {
            *flag |= F::DSACK_TLP;
        }
        self.undo.dsack_dups += len;
        if self.undo.dsack_dups > self.sk.total_retrans {
            return false; // dubious: more than was ever retransmitted
        }
        *flag |= F::DSACKING_ACK;
        st.delivered += len;
        // DSACK for already forgotten data: dumb counting.
        let u = &mut self.undo;
        if u.retrans > 0 && e0 <= prior_una && u.marker.is_some_and(|m| e0 > m) {
            u.retrans = (u.retrans - len as i32).max(0);
        }
        true
    }

    /// `tcp_is_sackblock_valid()` (without the `max_window` bound): in the
    /// window, or a DSACK block below snd_una (`una`) and not below the
    /// undo marker.
    fn sack_block_valid(&self, is_dsack: bool, s: u32, e: u32, una: u32) -> bool {
        let nxt = self.sb.nxt();
        if e > nxt || s >= e || s >= nxt {
            return false;
        }
        if s > una {
            return true;
        }
        let Some(marker) = self.undo.marker else { return false };
        if !is_dsack || e > una {
            return false;
        }
        s >= marker || e > marker
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
    /// `ack_flag`: the flags so far (for the TSecr RTT rule).
    fn clean_rtx_queue(&mut self, cum: u32, st: &SackState, ar: &mut AckRate, ack_flag: u32) -> u32 {
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
                // tcp_skb_spurious_retrans(): the echo predates this
                // (re)transmission, so the ACK is for an earlier copy.
                let spurious = sacked & sf::ANY_RETRANS != 0 && self.ts.ecr_before(tsval_of(seg.sent_us));
                if !spurious {
                    self.rack.advance(sk, sacked, seq + 1, seg.sent_us);
                }
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
        let rtt_update = self.ack_update_rtt(ack_flag | flag, seq_rtt, sack_rtt, ca_rtt, &mut ar.rs);
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
    /// none); an ACK of retransmitted data only takes the TSecr's RTT
    /// (RFC 7323 RTTM, whole ms). Returns whether an RTT sample was taken.
    fn ack_update_rtt(&mut self, flag: u32, seq_rtt: i64, sack_rtt: i64, ca_rtt: i64, rs: &mut RateSample) -> bool {
        let mut seq_rtt = if seq_rtt < 0 { sack_rtt } else { seq_rtt };
        let mut ca_rtt = ca_rtt;
        if seq_rtt < 0 && self.ts.saw_tstamp && self.ts.rcv_tsecr != 0 && flag & F::ACKED != 0 {
            seq_rtt = self.ts.rtt_us(tsval_of(self.sk.tcp_mstamp), 1);
            ca_rtt = seq_rtt;
        }
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
