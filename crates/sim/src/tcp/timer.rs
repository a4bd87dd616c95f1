//! The transmit timer (Linux's one `icsk_retransmit_timer` slot, whose
//! `icsk_pending` says what it is for), tcp_timer.c / tcp_output.c:
//!
//! - `Retrans`: RTO (`tcp_retransmit_timer`): enter Loss, retransmit the
//!   head, double the RTO (exponential backoff, up to 120 s);
//! - `ReoTimeout`: RACK's reorder timer (`tcp_rack_reo_timeout`): mark what
//!   is now overdue lost, enter Recovery, retransmit;
//! - `LossProbe`: tail loss probe (`tcp_send_loss_probe`, RFC 8985): in
//!   Open/CWR, 2 srtt after the last transmission send one new segment
//!   (or retransmit the last one) so that a tail loss is repaired by RACK
//!   instead of an RTO.
//!
//! Durations are in jiffies in Linux; here µs rounded up to whole ticks of
//! the sender's host (`TcpSock::jiffies_us`: 1 ms at HZ=1000, 4 ms at 250).
//! Timers armed through `tcp_reset_xmit_timer` also wait for the pacing
//! clock (`tcp_pacing_delay`: its ns cut down to whole ticks, as
//! `nsecs_to_jiffies` does, so a wait shorter than a tick adds nothing),
//! and the sum is capped at the maximum (`inet_csk_reset_xmit_timer`).
//! The timer then fires on the timer wheel's ticks, as `sk_reset_timer`'s
//! do ([`crate::host::Tick::timer_fires_ns`]: up to a tick later than its
//! duration, more beyond 63 ticks); on the ideal host exactly its duration
//! after it is armed.

use super::rtt::{RTO_MAX_US, RTO_MIN_US, TIMEOUT_INIT_US};
use super::scoreboard::flag as sf;
use super::TcpSender;
use crate::packet::DataPacket;
use cc_native::CaState;

/// Linux TCP_TIMEOUT_MIN (2 jiffies), µs.
pub const TIMEOUT_MIN_US: u64 = 2_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerKind {
    Retrans,
    ReoTimeout,
    LossProbe,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct XmitTimer {
    pub kind: TimerKind,
    pub deadline_ns: u64,
}

impl TcpSender {
    /// `inet_csk_reset_xmit_timer` (`with_pacing` false) or
    /// `tcp_reset_xmit_timer` (true): the timer fires `when_us` (plus the
    /// pacing delay, with `with_pacing`), at most `max_us`, from now.
    pub(super) fn reset_xmit_timer(&mut self, kind: TimerKind, when_us: u64, max_us: u64, with_pacing: bool) {
        let pacing_us = if with_pacing { self.sk.nsecs_to_jiffies_us(self.pacer.delay_ns(self.now_ns)) } else { 0 };
        let deadline_ns = self.tick.timer_fires_ns(self.now_ns, (when_us + pacing_us).min(max_us));
        self.timer = Some(XmitTimer { kind, deadline_ns });
    }

    fn pending(&self) -> Option<TimerKind> {
        self.timer.map(|t| t.kind)
    }

    /// `tcp_rto_delta_us()`: µs until the head's RTO would expire.
    fn rto_delta_us(&self) -> i64 {
        let head_sent = self.sb.seg(self.sb.una()).sent_us;
        (head_sent + self.jiffies_us(self.rtt.rto_us as u64)) as i64 - self.sk.tcp_mstamp as i64
    }

    /// `tcp_rearm_rto()`.
    pub(super) fn rearm_rto(&mut self) {
        if self.sk.packets_out == 0 {
            self.timer = None;
            return;
        }
        let mut rto = self.rtt.rto_us as u64;
        if matches!(self.pending(), Some(TimerKind::ReoTimeout | TimerKind::LossProbe)) {
            // Keep the RTO relative to the head's transmission.
            rto = self.jiffies_us(self.rto_delta_us().max(1) as u64);
        }
        self.reset_xmit_timer(TimerKind::Retrans, rto, RTO_MAX_US as u64, true);
    }

    /// `tcp_set_xmit_timer()`: a loss probe if allowed, else the RTO.
    pub(super) fn set_xmit_timer(&mut self) {
        if !self.schedule_loss_probe(true) {
            self.rearm_rto();
        }
    }

    /// `tcp_schedule_loss_probe()`: in Open/CWR with data outstanding,
    /// probe after 2 srtt (+ delayed-ACK allowance for a single segment),
    /// but no later than the RTO.
    pub(super) fn schedule_loss_probe(&mut self, advancing_rto: bool) -> bool {
        let st = self.ca_state();
        if self.sk.packets_out == 0 || (st != CaState::Open as u8 && st != CaState::Cwr as u8) {
            return false;
        }
        let mut timeout = if self.sk.srtt_us != 0 {
            let mut t = (self.sk.srtt_us >> 2) as u64;
            t += if self.sk.packets_out == 1 { RTO_MIN_US as u64 } else { TIMEOUT_MIN_US };
            self.jiffies_us(t)
        } else {
            TIMEOUT_INIT_US as u64
        };
        let rto_delta = if advancing_rto { self.rtt.rto_us as i64 } else { self.rto_delta_us() };
        if rto_delta > 0 {
            timeout = timeout.min(self.jiffies_us(rto_delta as u64));
        }
        self.reset_xmit_timer(TimerKind::LossProbe, timeout, RTO_MAX_US as u64, true);
        true
    }

    /// Runs the handler of the timer that fired (`tcp_write_timer_handler`).
    pub(super) fn fire_timer(&mut self, kind: TimerKind, out: &mut Vec<DataPacket>) {
        match kind {
            TimerKind::Retrans => self.retransmit_timer(out),
            TimerKind::ReoTimeout => self.rack_reo_timeout(out),
            TimerKind::LossProbe => self.send_loss_probe(out),
        }
    }

    /// `tcp_retransmit_timer()`.
    fn retransmit_timer(&mut self, out: &mut Vec<DataPacket>) {
        if self.sk.packets_out == 0 {
            return;
        }
        self.enter_loss();
        self.stats.rto_count += 1;
        self.rec.retransmits += 1;
        let head = self.sb.una();
        self.retransmit_segs(head, 1, true, out);
        self.rtt.back_off();
        self.reset_xmit_timer(TimerKind::Retrans, self.rtt.rto_us as u64, RTO_MAX_US as u64, false);
    }

    /// `tcp_rack_reo_timeout()`.
    fn rack_reo_timeout(&mut self, out: &mut Vec<DataPacket>) {
        let prior_in_flight = self.in_flight();
        let prior_lost = self.sk.lost;
        self.rack.detect_loss(&mut self.sk, &mut self.sb);
        if prior_in_flight != self.in_flight() {
            if self.ca_state() != CaState::Recovery as u8 {
                self.enter_recovery(false);
                if !self.ops.has_cong_control() {
                    let lost = self.sk.lost - prior_lost;
                    self.cwnd_reduction(1, lost, 0);
                }
            }
            self.xmit_retransmit_queue(out);
        }
        if self.pending() != Some(TimerKind::Retrans) {
            self.rearm_rto();
        }
    }

    /// `tcp_send_loss_probe()`.
    fn send_loss_probe(&mut self, out: &mut Vec<DataPacket>) {
        if self.sb.is_empty() {
            return;
        }
        if self.rec.tlp_high_seq.is_some() {
            self.rearm_rto();
            return;
        }
        self.rec.tlp_retrans = false;
        if self.has_new_data() {
            let before = self.sk.packets_out;
            self.write_xmit(2, out);
            if self.sk.packets_out <= before {
                self.rearm_rto();
                return;
            }
        } else {
            // Retransmit the last segment (without marking it lost).
            let last = self.sb.nxt() - 1;
            if self.sb.seg(last).has(sf::SACKED) {
                self.rearm_rto();
                return;
            }
            self.retransmit_segs(last, 1, false, out);
            self.rec.tlp_retrans = true;
        }
        self.stats.tlp_count += 1;
        self.rec.tlp_high_seq = Some(self.sb.nxt());
        self.timer = None;
        self.rearm_rto();
    }
}
