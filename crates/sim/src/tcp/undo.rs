//! Undoing a cwnd reduction that a spurious retransmission caused, as
//! Linux's tcp_input.c does ("undo heuristics": a reduction is undone once
//! the evidence says no segment was lost):
//!
//! ```text
//!   evidence                              where Linux looks for it
//!   all retransmissions DSACKed           tcp_try_undo_dsack (Recovery, Open/Disorder)
//!     (undo_retrans == 0)                 tcp_try_undo_recovery (end of Recovery/Loss)
//!   the ACK echoes a TSval older than     tcp_try_undo_partial (partial ACK in Recovery)
//!     the first retransmission (Eifel,    tcp_try_undo_loss (snd_una advances in Loss)
//!     tcp_packet_delayed)                 tcp_try_undo_recovery
//!   F-RTO: never-retransmitted data       tcp_process_loss (see super::recovery)
//!     (s)ACKed after an RTO
//! ```
//!
//! An undo (`tcp_undo_cwnd_reduction`) asks the CC for the cwnd to return
//! to (`undo_cwnd`: Reno/CUBIC max(cwnd, prior_cwnd); BBR keeps cwnd and
//! restarts its full-pipe check; BBRv3 restores its pre-loss bounds and
//! prior cwnd) and restores the ssthresh saved on entering the reduction
//! (`prior_ssthresh`); after an RTO it also unmarks the segments it took
//! for lost.
//!
//! The bookkeeping is Linux's `tcp_sock` fields: `undo_marker` (snd_una
//! when the episode began; None for Linux's 0), `undo_retrans`
//! (retransmissions not yet DSACKed; -1 = none), `retrans_stamp` (TSval of
//! the episode's first retransmission; 0 = none) and `dsack_dups`.
//! Follows Linux >= 6.16 (`tcp_packet_delayed` with d0fa59897e04;
//! `tcp_retrans_stamp_cleanup` of b41b4cbd9655).
//!
//! Deviations: reordering is not measured (`tcp_check_sack_reordering`,
//! `reord_seen`, and with it RACK's DSACK-driven `reo_wnd` growth and
//! `reo_wnd_persist` are left out; the simulator's paths never reorder
//! packets of a flow), so `tcp_try_undo_partial` does not raise
//! `tp->reordering`; `tcp_is_sackblock_valid`'s `max_window` bound is
//! not checked (the receive window is unlimited); MIB counters are not
//! kept.

use super::scoreboard::flag as sf;
use super::TcpSender;
use cc_native::{CaState, TCP_ECN_QUEUE_CWR};

/// What Linux keeps in `tcp_sock` to undo a cwnd reduction.
#[derive(Clone, Debug)]
pub struct Undo {
    /// Segment: `tp->undo_marker`, snd_una when the episode began.
    pub marker: Option<u32>,
    /// `tp->undo_retrans`: retransmissions of the episode not yet DSACKed
    /// (-1: none sent yet).
    pub retrans: i32,
    /// `tp->retrans_stamp`: TSval of the first retransmission (0: none).
    pub retrans_stamp: u32,
    /// `tp->dsack_dups`: segments DSACKed so far.
    pub dsack_dups: u32,
    /// Undos done (Linux's TCPFULLUNDO + TCPDSACKUNDO + TCPPARTIALUNDO +
    /// TCPLOSSUNDO).
    pub count: u64,
}

impl Default for Undo {
    fn default() -> Self {
        // tcp_clear_retrans(): undo_retrans = -1.
        Self { marker: None, retrans: -1, retrans_stamp: 0, dsack_dups: 0, count: 0 }
    }
}

impl TcpSender {
    /// `tcp_init_undo()`: a recovery episode begins at snd_una.
    pub(super) fn init_undo(&mut self) {
        self.undo.marker = Some(self.sb.una());
        // Retransmissions still in flight may cause DSACKs later.
        self.undo.retrans = if self.sk.retrans_out > 0 { self.sk.retrans_out as i32 } else { -1 };
    }

    /// `tcp_any_retrans_done()`.
    pub(super) fn any_retrans_done(&self) -> bool {
        self.sk.retrans_out > 0 || (!self.sb.is_empty() && self.sb.seg(self.sb.una()).has(sf::EVER_RETRANS))
    }

    /// `tcp_retrans_stamp_cleanup()`: no retransmission left in the
    /// window, forget when the first was sent.
    pub(super) fn retrans_stamp_cleanup(&mut self) {
        if !self.any_retrans_done() {
            self.undo.retrans_stamp = 0;
        }
    }

    /// `tcp_packet_delayed()`: the ACK echoes a TSval from before the
    /// first retransmission, or nothing was retransmitted yet (a SACK
    /// connection outside SYN_SENT).
    fn packet_delayed(&self) -> bool {
        if self.undo.retrans_stamp != 0 {
            return self.ts.ecr_before(self.undo.retrans_stamp);
        }
        true
    }

    /// `tcp_may_undo()`.
    fn may_undo(&self) -> bool {
        self.undo.marker.is_some() && (self.undo.retrans == 0 || self.packet_delayed())
    }

    /// `tcp_undo_cwnd_reduction()`: back to the cwnd (the CC's
    /// `undo_cwnd`) and ssthresh of before the episode; after an RTO
    /// (`unmark_loss`) nothing is taken for lost any more.
    fn undo_cwnd_reduction(&mut self, unmark_loss: bool) {
        if unmark_loss {
            self.sb.unmark_all_lost(&mut self.sk);
        }
        if self.sk.prior_ssthresh != 0 {
            self.sk.snd_cwnd = self.ops.undo_cwnd(&mut self.sk);
            if self.sk.prior_ssthresh > self.sk.snd_ssthresh {
                self.sk.snd_ssthresh = self.sk.prior_ssthresh;
                // tcp_ecn_withdraw_cwr()
                self.sk.ecn_flags &= !TCP_ECN_QUEUE_CWR;
            }
        }
        self.sk.snd_cwnd_stamp = self.now_ms();
        self.undo.marker = None;
        self.undo.count += 1;
        // Force RACK to re-examine losses.
        self.rack.advanced = true;
    }

    /// `tcp_try_undo_recovery()`: Recovery or Loss ends (snd_una reached
    /// high_seq); undo if it was spurious, then Open. (The non-SACK
    /// `tcp_is_non_sack_preventing_reopen` never holds: SACK is always on.)
    pub(super) fn try_undo_recovery(&mut self) {
        if self.may_undo() {
            self.undo_cwnd_reduction(false);
        }
        self.set_ca_state(CaState::Open);
    }

    /// `tcp_try_undo_dsack()`: every retransmission was DSACKed.
    pub(super) fn try_undo_dsack(&mut self) -> bool {
        if self.undo.marker.is_some() && self.undo.retrans == 0 {
            self.undo_cwnd_reduction(false);
            return true;
        }
        false
    }

    /// `tcp_try_undo_partial()`: a partial ACK in Recovery whose echo says
    /// the hole was filled by the original, not the retransmission. Undo
    /// once no retransmission is out; true: stop processing this ACK (some
    /// are: send new data but mark nothing more lost).
    pub(super) fn try_undo_partial(&mut self) -> bool {
        if self.undo.marker.is_some() && self.packet_delayed() {
            // (tcp_check_sack_reordering: not modelled, see the module.)
            if self.sk.retrans_out > 0 {
                return true;
            }
            self.retrans_stamp_cleanup();
            self.undo_cwnd_reduction(true);
            self.try_keep_open();
        }
        // Else Linux computes do_lost for non-RACK loss marking; RACK here.
        false
    }

    /// `tcp_try_undo_loss()`: in Loss, undo an RTO that was spurious
    /// (Eifel/DSACK, or `frto_undo`: F-RTO's verdict).
    pub(super) fn try_undo_loss(&mut self, frto_undo: bool) -> bool {
        if frto_undo || self.may_undo() {
            self.undo_cwnd_reduction(true);
            self.rec.retransmits = 0;
            self.set_ca_state(CaState::Open);
            return true;
        }
        false
    }
}
