//! Transmission, as Linux's tcp_output.c:
//!
//! - `write_xmit` (`tcp_write_xmit`): new data while in-flight < cwnd, one
//!   skb per pacing slot, each of min(cwnd quota, TSO size) segments where
//!   the quota is min(cwnd/2, cwnd − in-flight) (`tcp_cwnd_test`); then
//!   `tcp_cwnd_validate` and the tail loss probe;
//! - `xmit_retransmit_queue` (`tcp_xmit_retransmit_queue`): lost segments
//!   in sequence order, while cwnd and pacing allow, before any new data;
//! - `transmit` (`__tcp_transmit_skb` + `tcp_event_new_data_sent`):
//!   `CA_EVENT_TX_START` when nothing is in flight, pacing clock, rate
//!   sample stamp, time-sorted list, RTO arming.
//!
//! Not modelled: TSO deferral (`tcp_tso_should_defer`), Nagle, TSQ, the
//! receive window and idle cwnd restart (a bulk sender never idles while it
//! has data).

use super::pacing;
use super::rate_sample;
use super::scoreboard::{flag as sf, Seg};
use super::timer::TimerKind;
use super::rtt::RTO_MAX_US;
use super::TcpSender;
use crate::packet::DataPacket;
use cc_native::CaEvent;

impl TcpSender {
    /// `tcp_tso_segs()`: segments per skb now.
    pub(super) fn tso_segs(&mut self) -> u32 {
        let min_tso = self.ops.min_tso_segs(&mut self.sk).unwrap_or(pacing::MIN_TSO_SEGS);
        pacing::tso_segs(&self.sk, self.mss, min_tso)
    }

    /// `tcp_cwnd_test()`: segments cwnd lets the next skb carry.
    fn cwnd_test(&self) -> u32 {
        let in_flight = self.in_flight();
        let cwnd = self.sk.snd_cwnd;
        if in_flight >= cwnd {
            return 0;
        }
        // At least two skbs per window, for better ACK clocking.
        let half = (cwnd >> 1).max(1);
        half.min(cwnd - in_flight)
    }

    /// `tcp_write_xmit()`: sends new data. `push_one`: 0 = as much as
    /// allowed, 2 = one skb even beyond cwnd (loss probe).
    pub(super) fn write_xmit(&mut self, push_one: u8, out: &mut Vec<DataPacket>) {
        let max_segs = self.tso_segs();
        let mut sent = 0u32;
        while self.has_new_data() {
            if self.pacer.blocked(&self.sk, self.now_ns) {
                break;
            }
            let mut quota = self.cwnd_test();
            if quota == 0 {
                if push_one == 2 {
                    quota = 1;
                } else {
                    break;
                }
            }
            let n = quota.min(max_segs);
            self.transmit_new(n, out);
            sent += n;
            if push_one != 0 {
                break;
            }
        }
        let is_cwnd_limited = self.in_flight() >= self.sk.snd_cwnd;
        if sent > 0 || is_cwnd_limited {
            self.cwnd_validate(is_cwnd_limited);
        }
        if sent > 0 {
            if self.in_cwnd_reduction() {
                self.rec.prr_out += sent;
            }
            if push_one != 2 {
                self.schedule_loss_probe(false);
            }
        }
    }

    /// `tcp_cwnd_validate()`: remembers whether the last window was
    /// cwnd-limited (`is_cwnd_limited`, `max_packets_out`), which CCs read
    /// through `tcp_is_cwnd_limited()`.
    fn cwnd_validate(&mut self, is_cwnd_limited: bool) {
        let sk = &mut self.sk;
        if self.sb.una() >= self.cwnd_usage_seq
            || is_cwnd_limited
            || (sk.is_cwnd_limited == 0 && sk.packets_out > sk.max_packets_out)
        {
            sk.is_cwnd_limited = is_cwnd_limited as u8;
            sk.max_packets_out = sk.packets_out;
            self.cwnd_usage_seq = self.sb.nxt();
        }
        let limited = sk.is_cwnd_limited != 0
            || (sk.snd_cwnd < sk.snd_ssthresh && sk.snd_cwnd < 2 * sk.max_packets_out);
        if limited {
            sk.snd_cwnd_stamp = (sk.tcp_mstamp / 1000) as u32;
        }
    }

    /// `tcp_xmit_retransmit_queue()`: retransmits lost segments, lowest
    /// first, in skbs of up to min(cwnd room, TSO size) consecutive ones.
    pub(super) fn xmit_retransmit_queue(&mut self, out: &mut Vec<DataPacket>) {
        if self.sk.packets_out == 0 {
            return;
        }
        let max_segs = self.tso_segs() as i64;
        let nxt = self.sb.nxt();
        let mut seq = self.sb.rtx_hint.max(self.sb.una());
        let mut rearm = false;
        let needs_rtx = |f: u8| f & sf::LOST != 0 && f & (sf::SACKED | sf::RETRANS) == 0;
        while seq < nxt {
            if self.pacer.blocked(&self.sk, self.now_ns) {
                break;
            }
            let room = self.cwnd_room().min(max_segs);
            if room <= 0 || self.sk.retrans_out >= self.sk.lost_out {
                break;
            }
            if !needs_rtx(self.sb.seg(seq).flags) {
                seq += 1;
                self.sb.rtx_hint = seq;
                continue;
            }
            let mut n = 1u32;
            while (n as i64) < room && seq + n < nxt && needs_rtx(self.sb.seg(seq + n).flags) {
                n += 1;
            }
            if seq == self.sb.una() && self.timer.map(|t| t.kind) != Some(TimerKind::ReoTimeout) {
                rearm = true;
            }
            self.retransmit_segs(seq, n, true, out);
            if self.in_cwnd_reduction() {
                self.rec.prr_out += n;
            }
            seq += n;
            self.sb.rtx_hint = seq;
        }
        if rearm {
            self.reset_xmit_timer(TimerKind::Retrans, self.rtt.rto_us as u64, RTO_MAX_US as u64, true);
        }
    }

    /// Sends `n` new segments as one skb.
    fn transmit_new(&mut self, n: u32, out: &mut Vec<DataPacket>) {
        let prior_packets = self.sk.packets_out;
        let sent_us = self.transmit_skb(n);
        let tx = rate_sample::skb_sent(&mut self.sk, sent_us);
        for _ in 0..n {
            let seq = self.sb.push(Seg::new(sent_us, tx));
            out.push(self.packet(seq, false));
        }
        // tcp_event_new_data_sent()
        self.sk.packets_out += n;
        self.stats.sent_segments += n as u64;
        self.sync_seq();
        if prior_packets == 0 || self.timer.map(|t| t.kind) == Some(TimerKind::LossProbe) {
            self.rearm_rto();
        }
    }

    /// Retransmits segments `[first, first + n)` as one skb
    /// (`tcp_retransmit_skb`; `mark_retrans` false: the loss probe's
    /// `__tcp_retransmit_skb`, which does not count it in `retrans_out`).
    pub(super) fn retransmit_segs(&mut self, first: u32, n: u32, mark_retrans: bool, out: &mut Vec<DataPacket>) {
        let sent_us = self.transmit_skb(n);
        let tx = rate_sample::skb_sent(&mut self.sk, sent_us);
        for seq in first..first + n {
            let seg = self.sb.seg_mut(seq);
            seg.set_tx(sent_us, tx);
            seg.flags |= sf::EVER_RETRANS;
            if mark_retrans {
                seg.flags |= sf::RETRANS;
                self.sk.retrans_out += 1;
            }
            self.sb.ts_push_tail(seq);
            out.push(self.packet(seq, true));
        }
        self.sk.total_retrans = self.sk.total_retrans.wrapping_add(n);
        self.stats.retransmits += n as u64;
        self.stats.sent_segments += n as u64;
    }

    /// The part of `__tcp_transmit_skb` common to all data: TX_START,
    /// pacing clock. Returns the skb's timestamp (µs clock).
    fn transmit_skb(&mut self, n: u32) -> u64 {
        if self.in_flight() == 0 {
            self.ops.cwnd_event(&mut self.sk, CaEvent::TxStart);
        }
        let len = n as u64 * self.mss as u64;
        let stamp_ns = self.pacer.on_transmit(&self.sk, self.now_ns, n, len);
        self.sk.tcp_wstamp_ns = self.clock_ns(self.pacer.wstamp_ns);
        self.clock_us(stamp_ns)
    }

    fn packet(&self, seq: u32, retrans: bool) -> DataPacket {
        DataPacket {
            flow: self.flow,
            seq,
            wire_bytes: self.wire_bytes,
            retrans,
            sent_ns: self.now_ns,
            enqueued_ns: 0,
        }
    }
}
