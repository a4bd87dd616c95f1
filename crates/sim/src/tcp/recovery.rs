//! The congestion-avoidance state machine (Linux tcp_input.c):
//!
//! ```text
//!            SACK / reorder info                 lost_out > 0 (RACK)
//!   Open ───────────────────────► Disorder ──────────────────────► Recovery
//!    ▲  ◄───────── nothing left out ──┘   (ssthresh(), PRR until     │
//!    │                                     snd_una >= high_seq)       │
//!    └─────────────── snd_una >= high_seq: cwnd = ssthresh ───────────┘
//!   any state ── RTO ──► Loss (ssthresh(), cwnd = in_flight + 1, slow start)
//!                         └── snd_una >= high_seq ──► Open
//!   Recovery/Loss ── found spurious: undo_cwnd() ──► Open (Disorder)
//!   Open ── TLP retransmission repaired a tail loss ──► CWR ──► Open
//!   Open/Disorder ── ECE ──► CWR (ssthresh(), PRR) ── above high_seq ACKed ──► Open
//! ```
//!
//! Every change goes through `ops.set_state()` before `icsk_ca_state`
//! changes (`tcp_set_ca_state`). `ssthresh()` is asked on entering
//! Recovery (`tcp_init_cwnd_reduction`) and Loss (`tcp_enter_loss`, then
//! `CA_EVENT_LOSS`). CCs without `cong_control` get PRR (RFC 6937,
//! `tcp_cwnd_reduction`) in CWR/Recovery and cwnd = ssthresh when it ends
//! (`tcp_end_cwnd_reduction`, `CA_EVENT_COMPLETE_CWR`); BBR-style CCs set
//! cwnd themselves.
//!
//! A reduction found spurious is undone (`undo_cwnd`, see [`super::undo`]):
//! in Recovery by DSACKs or timestamps (partial ACKs, or at its end), in
//! Open/Disorder by late DSACKs, in Loss by timestamps, DSACKs or F-RTO
//! (RFC 5682, `tcp_process_loss`).

use super::ack::ackflag as F;
use super::sender::INFINITE_SSTHRESH;
use super::TcpSender;
use super::timer::{TimerKind, TIMEOUT_MIN_US};
use crate::config::EcnMode;
use cc_native::{CaEvent, CaState, TCP_ECN_QUEUE_CWR};

/// Loss-recovery bookkeeping Linux keeps in `tcp_sock` beyond what CCs see.
#[derive(Clone, Debug, Default)]
pub struct Recovery {
    /// Segment: `snd_nxt` when Recovery/Loss/CWR/Disorder was entered.
    pub high_seq: u32,
    /// PRR: packets delivered / sent since Recovery began.
    pub prr_delivered: u32,
    pub prr_out: u32,
    /// RTOs since snd_una last advanced (`icsk_retransmits`).
    pub retransmits: u32,
    /// Segment: `snd_nxt` after a tail loss probe, while its episode lasts.
    pub tlp_high_seq: Option<u32>,
    /// The probe was a retransmission (not new data).
    pub tlp_retrans: bool,
    /// `tp->frto`: F-RTO (RFC 5682) is judging the last RTO.
    pub frto: bool,
    /// F-RTO step 2.b: the next transmission after this ACK is new data,
    /// not the lost segments (`REXMIT_NEW` for `tcp_xmit_recovery`).
    pub rexmit_new: bool,
}

impl TcpSender {
    /// `tcp_set_ca_state()`.
    pub(super) fn set_ca_state(&mut self, st: CaState) {
        self.ops.set_state(&mut self.sk, st);
        self.sk.inet_conn.icsk_ca_state = st as u8;
    }

    /// `tcp_in_cwnd_reduction()`: CWR or Recovery.
    pub(super) fn in_cwnd_reduction(&self) -> bool {
        let st = self.ca_state();
        st == CaState::Cwr as u8 || st == CaState::Recovery as u8
    }

    /// `tcp_fastretrans_alert()` for a SACK connection using RACK.
    /// `num_dupack`: 1 for a duplicate ACK (no advance, no DSACK).
    pub(super) fn fastretrans_alert(&mut self, num_dupack: u32, flag: &mut u32) {
        let ece_ack = *flag & F::ECE != 0;
        // A. ECE: the reduction is required, no undo.
        if ece_ack {
            self.sk.prior_ssthresh = 0;
        }
        // D. Exit conditions: high_seq has been ACKed.
        let una = self.sb.una();
        let st = self.ca_state();
        if st == CaState::Open as u8 {
            self.undo.retrans_stamp = 0;
        } else if una >= self.rec.high_seq {
            if st == CaState::Cwr as u8 {
                if una != self.rec.high_seq {
                    self.end_cwnd_reduction();
                    self.set_ca_state(CaState::Open);
                }
            } else if st == CaState::Recovery as u8 {
                self.try_undo_recovery();
                self.end_cwnd_reduction();
            }
        }
        // E. Process the state.
        let st = self.ca_state();
        if st == CaState::Recovery as u8 {
            if *flag & F::SND_UNA_ADVANCED != 0 && self.try_undo_partial() {
                return;
            }
            if self.try_undo_dsack() {
                self.try_keep_open();
            }
            self.identify_packet_loss(flag);
            if self.ca_state() != CaState::Recovery as u8 {
                if self.sk.lost_out == 0 {
                    return;
                }
                // Undo reverted the state, but loss is evident: a new one.
                self.enter_recovery(ece_ack);
            }
            return;
        }
        if st == CaState::Loss as u8 {
            self.process_loss(*flag, num_dupack);
            self.identify_packet_loss(flag);
            if !(self.ca_state() == CaState::Open as u8 || *flag & F::LOST_RETRANS != 0) {
                return;
            }
            // The cwnd was undone or retransmissions were lost: go on.
        }
        if self.ca_state() <= CaState::Disorder as u8 {
            self.try_undo_dsack();
        }
        self.identify_packet_loss(flag);
        if self.sk.lost_out == 0 {
            // tcp_time_to_recover() is false.
            self.try_to_open(*flag);
            return;
        }
        self.enter_recovery(ece_ack);
    }

    /// `tcp_process_loss()`: an ACK in Loss. Undo the RTO if it was
    /// spurious (Eifel, DSACK, or F-RTO, RFC 5682 3.1 with SACK: the ACK
    /// (s)acks data never retransmitted); else F-RTO step 2.b sends new
    /// data once before retransmitting more ([`Recovery::rexmit_new`]);
    /// Open once everything sent before the RTO is ACKed.
    fn process_loss(&mut self, flag: u32, num_dupack: u32) {
        let recovered = self.sb.una() >= self.rec.high_seq;
        if flag & F::SND_UNA_ADVANCED != 0 && self.try_undo_loss(false) {
            return;
        }
        if self.rec.frto {
            // Step 3.b: spurious if never-retransmitted data is (s)acked.
            if flag & F::ORIG_SACK_ACKED != 0 && self.try_undo_loss(true) {
                return;
            }
            if self.sb.nxt() > self.rec.high_seq {
                if flag & F::DATA_SACKED != 0 || num_dupack > 0 {
                    self.rec.frto = false; // Step 3.a: the loss was real.
                }
            } else if flag & F::SND_UNA_ADVANCED != 0 && !recovered {
                self.rec.high_seq = self.sb.nxt();
                // Step 2.b: send new data (after cwnd is updated).
                if self.has_new_data() {
                    self.rec.rexmit_new = true;
                    return;
                }
                self.rec.frto = false;
            }
        }
        if recovered {
            // Step 2.a and the first part of step 3.a.
            self.try_undo_recovery();
        }
    }

    /// `tcp_identify_packet_loss()` with RACK; arms the reorder timer.
    fn identify_packet_loss(&mut self, flag: &mut u32) {
        if self.sb.is_empty() {
            return;
        }
        let prior_retrans = self.sk.retrans_out;
        let wait_us = self.rack.mark_lost(&mut self.sk, &mut self.sb);
        if wait_us > 0 {
            // tcp_rack_mark_lost(): jiffies, plus TCP_TIMEOUT_MIN, at most RTO.
            let when = self.jiffies_us(wait_us as u64) + TIMEOUT_MIN_US;
            self.reset_xmit_timer(TimerKind::ReoTimeout, when, self.rtt.rto_us as u64, false);
            *flag &= !F::SET_XMIT_TIMER;
        }
        if prior_retrans > self.sk.retrans_out {
            *flag |= F::LOST_RETRANS;
        }
    }

    /// `tcp_try_to_open()` / `tcp_try_keep_open()`: an ECE reduces cwnd
    /// once (CWR) unless a reduction is under way.
    fn try_to_open(&mut self, flag: u32) {
        self.retrans_stamp_cleanup();
        if flag & F::ECE != 0 {
            self.enter_cwr();
        }
        if self.ca_state() != CaState::Cwr as u8 {
            self.try_keep_open();
        }
    }

    pub(super) fn try_keep_open(&mut self) {
        let left_out = self.sk.sacked_out + self.sk.lost_out;
        let st = if left_out > 0 || self.any_retrans_done() { CaState::Disorder } else { CaState::Open };
        if self.ca_state() != st as u8 {
            self.set_ca_state(st);
            self.rec.high_seq = self.sb.nxt();
        }
    }

    /// `tcp_current_ssthresh()`: ssthresh, or 3/4 cwnd if that is larger.
    pub(super) fn current_ssthresh(&self) -> u32 {
        if self.in_cwnd_reduction() {
            self.sk.snd_ssthresh
        } else {
            let c = self.sk.snd_cwnd;
            self.sk.snd_ssthresh.max((c >> 1) + (c >> 2))
        }
    }

    /// `tcp_enter_recovery()`: an ECE on the ACK (`ece_ack`) forbids an
    /// undo (no prior_ssthresh).
    pub(super) fn enter_recovery(&mut self, ece_ack: bool) {
        self.retrans_stamp_cleanup();
        self.sk.prior_ssthresh = 0;
        self.init_undo();
        if !self.in_cwnd_reduction() {
            if !ece_ack {
                self.sk.prior_ssthresh = self.current_ssthresh();
            }
            self.init_cwnd_reduction();
        }
        self.set_ca_state(CaState::Recovery);
    }

    /// `tcp_init_cwnd_reduction()`: asks the CC for ssthresh.
    pub(super) fn init_cwnd_reduction(&mut self) {
        self.rec.high_seq = self.sb.nxt();
        self.rec.tlp_high_seq = None;
        self.sk.snd_cwnd_cnt = 0;
        self.sk.prior_cwnd = self.sk.snd_cwnd;
        self.rec.prr_delivered = 0;
        self.rec.prr_out = 0;
        self.sk.snd_ssthresh = self.ops.ssthresh(&mut self.sk);
        // tcp_ecn_queue_cwr(): tell a classic ECN receiver (AccECN has no CWR).
        if self.ecn == EcnMode::Classic {
            self.sk.ecn_flags |= TCP_ECN_QUEUE_CWR;
        }
    }

    /// `tcp_enter_cwr()`: the ECN response, one reduction per round trip
    /// (CWR lasts until everything sent before it is ACKed).
    fn enter_cwr(&mut self) {
        self.sk.prior_ssthresh = 0;
        if self.ca_state() < CaState::Cwr as u8 {
            self.undo.marker = None;
            self.init_cwnd_reduction();
            self.set_ca_state(CaState::Cwr);
        }
    }

    /// `tcp_end_cwnd_reduction()`.
    pub(super) fn end_cwnd_reduction(&mut self) {
        if self.ops.has_cong_control() {
            return;
        }
        if self.sk.snd_ssthresh < INFINITE_SSTHRESH
            && (self.ca_state() == CaState::Cwr as u8 || self.undo.marker.is_some())
        {
            self.sk.snd_cwnd = self.sk.snd_ssthresh;
            self.sk.snd_cwnd_stamp = self.now_ms();
        }
        self.ops.cwnd_event(&mut self.sk, CaEvent::CompleteCwr);
    }

    /// `tcp_cwnd_reduction()`: Proportional Rate Reduction (RFC 6937) with
    /// slow-start reduction bound. cwnd tracks in-flight plus what PRR lets
    /// the sender send for this ACK.
    pub(super) fn cwnd_reduction(&mut self, newly_acked_sacked: u32, newly_lost: u32, flag: u32) {
        if newly_acked_sacked == 0 || self.sk.prior_cwnd == 0 {
            return;
        }
        let in_flight = self.in_flight() as i64;
        let ssthresh = self.sk.snd_ssthresh as i64;
        let delta = ssthresh - in_flight;
        self.rec.prr_delivered += newly_acked_sacked;
        let prr_delivered = self.rec.prr_delivered as i64;
        let prr_out = self.rec.prr_out as i64;
        let mut sndcnt = if delta < 0 {
            // Proportional: send ssthresh/prior_cwnd of what was delivered.
            let prior = self.sk.prior_cwnd as i64;
            (ssthresh * prr_delivered + prior - 1) / prior - prr_out
        } else {
            // Slow-start reduction bound: grow back towards ssthresh.
            let mut s = (prr_delivered - prr_out).max(newly_acked_sacked as i64);
            if flag & F::SND_UNA_ADVANCED != 0 && newly_lost == 0 {
                s += 1;
            }
            s.min(delta)
        };
        // Force a fast retransmit upon entering fast recovery.
        sndcnt = sndcnt.max(if self.rec.prr_out > 0 { 0 } else { 1 });
        self.sk.snd_cwnd = (in_flight + sndcnt).max(0) as u32;
    }

    /// `tcp_enter_loss()`: the retransmission timer fired. F-RTO judges
    /// the RTO (`tp->frto`, sysctl tcp_frto = 2, Linux's default) unless
    /// a recovery was under way, except for repeated RTOs of one snd_una.
    pub(super) fn enter_loss(&mut self) {
        let new_recovery = self.ca_state() < CaState::Recovery as u8;
        self.timeout_mark_lost();
        let st = self.ca_state();
        let una = self.sb.una();
        if st <= CaState::Disorder as u8
            || self.rec.high_seq <= una
            || (st == CaState::Loss as u8 && self.rec.retransmits == 0)
        {
            self.sk.prior_ssthresh = self.current_ssthresh();
            self.sk.prior_cwnd = self.sk.snd_cwnd;
            self.sk.snd_ssthresh = self.ops.ssthresh(&mut self.sk);
            self.ops.cwnd_event(&mut self.sk, CaEvent::Loss);
            self.init_undo();
        }
        self.sk.snd_cwnd = self.in_flight() + 1;
        self.sk.snd_cwnd_cnt = 0;
        self.sk.snd_cwnd_stamp = self.now_ms();
        self.set_ca_state(CaState::Loss);
        self.rec.high_seq = self.sb.nxt();
        self.rec.tlp_high_seq = None;
        // tcp_ecn_queue_cwr()
        if self.ecn == EcnMode::Classic {
            self.sk.ecn_flags |= TCP_ECN_QUEUE_CWR;
        }
        self.rec.frto = new_recovery || self.rec.retransmits > 0;
    }

    /// `tcp_timeout_mark_lost()`: everything outstanding is lost, except
    /// segments sent less than a RACK RTT ago (the head always is).
    fn timeout_mark_lost(&mut self) {
        let now = self.sk.tcp_mstamp;
        let (una, nxt) = (self.sb.una(), self.sb.nxt());
        for seq in una..nxt {
            let sent = self.sb.seg(seq).sent_us;
            if seq != una && self.rack.skb_timeout(now, sent, 0) > 0 {
                continue;
            }
            self.sb.mark_lost(&mut self.sk, seq);
        }
        self.sb.rtx_hint = una;
    }

    /// `tcp_process_tlp_ack()`: ends a tail-loss-probe episode; if the probe
    /// was a retransmission that repaired a loss, reduce cwnd once (CWR);
    /// not if a DSACK of the probe (`FLAG_DSACK_TLP`) or a pure duplicate
    /// ACK shows that the original arrived too.
    pub(super) fn process_tlp_ack(&mut self, cum: u32, flag: u32) {
        let Some(h) = self.rec.tlp_high_seq else { return };
        if cum < h {
            return;
        }
        if !self.rec.tlp_retrans || flag & F::DSACK_TLP != 0 {
            // New data was ACKed, or the DSACK says both the original and
            // the probe arrived: no loss.
            self.rec.tlp_high_seq = None;
        } else if cum > h {
            self.init_cwnd_reduction();
            self.set_ca_state(CaState::Cwr);
            self.end_cwnd_reduction();
            self.try_keep_open();
        } else if flag & (F::SND_UNA_ADVANCED | F::NOT_DUP | F::DATA_SACKED) == 0 {
            // A pure duplicate ACK: both original and probe arrived.
            self.rec.tlp_high_seq = None;
        }
    }
}
