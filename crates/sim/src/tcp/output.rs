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
//! - `tso_should_defer` (`tcp_tso_should_defer`): when cwnd has room for
//!   less than a full TSO skb, Linux waits for more ACKs rather than send a
//!   small one, unless a third of cwnd is free, the oldest unacknowledged
//!   skb's ACK is due more than min(1 ms, srtt/2) from now, the last send
//!   is over 1 ms ago, or the flow is in Recovery/Loss. This shapes when a
//!   cwnd-limited flow sends (in units, at ACKs) and which RTT samples it
//!   takes.
//!
//! Not modelled: Nagle, TSQ and the receive window (`send_win` is taken
//! as unlimited). Idle cwnd restart of an application-limited sender is
//! [`super::app_limited`]'s (a bulk or sized sender never idles while it
//! has data).

use super::pacing;
use super::rate_sample;
use super::scoreboard::{flag as sf, Seg};
use super::timer::TimerKind;
use super::rtt::RTO_MAX_US;
use super::TcpSender;
use crate::packet::{DataPacket, Ecn};
use cc_native::{CaEvent, CaState, TCP_ECN_QUEUE_CWR};

/// sysctl tcp_tso_win_divisor: send a smaller skb anyway once this
/// fraction (1/3) of cwnd is free.
const TSO_WIN_DIVISOR: u32 = 3;
/// `tcp_tso_should_defer` defers only if the last skb left at most this
/// long ago (NSEC_PER_MSEC), ns.
const DEFER_RECENT_WRITE_NS: u64 = 1_000_000;
/// ... and only if the next ACK is due within this long (or half an
/// srtt, if less): NSEC_PER_MSEC, µs.
const DEFER_ACK_SOON_US: i64 = 1_000;

impl TcpSender {
    /// `tcp_tso_segs()`: segments per skb now.
    pub(super) fn tso_segs(&mut self) -> u32 {
        let min_tso = self.ops.min_tso_segs(&mut self.sk).unwrap_or(pacing::MIN_TSO_SEGS);
        pacing::tso_segs(&self.sk, self.mss, min_tso)
    }

    /// `tcp_tso_should_defer()`: should the next skb of `max_segs`
    /// segments wait for more ACKs rather than go out smaller now? Called
    /// with cwnd room > 0 and `max_segs` > 1 (Linux: `tso_segs > 1`, the
    /// write-queue skb being a full TSO one for a bulk sender).
    pub(super) fn tso_should_defer(&self, max_segs: u32) -> bool {
        if self.ca_state() >= CaState::Recovery as u8 {
            return false;
        }
        // "Avoid bursty behavior by allowing defer only if the last write
        // was recent": tcp_wstamp_ns is at most 1 ms in the past.
        if self.now_ns > self.pacer.wstamp_ns + DEFER_RECENT_WRITE_NS {
            return false;
        }
        let room = self.cwnd_room().max(0) as u32;
        // A full-sized TSO skb can be sent.
        if room >= max_segs {
            return false;
        }
        // At least a 1/tcp_tso_win_divisor fraction of cwnd is available.
        if room * TSO_WIN_DIVISOR >= self.sk.snd_cwnd {
            return false;
        }
        // The next ACK is likely to come too late: the oldest skb in
        // flight is expected to be ACKed (its send time + srtt) more than
        // min(1 ms, srtt/2) from now (Linux 295ce1eb36ae "tcp: fix
        // tcp_tso_should_defer() vs large RTT", v6.18 and the stable
        // kernels down to 5.4; before it: sent less than srtt/2 ago).
        // A cwnd-limited ACK-clocked flow whose skbs leave a few ms apart
        // therefore sends a 1-segment skb at once rather than wait.
        if self.sk.packets_out == 0 {
            return false;
        }
        let head_sent_us = self.sb.seg(self.sb.una()).sent_us as i64;
        let srtt_us = (self.sk.srtt_us >> 3) as i64;
        let ack_in_us = head_sent_us + srtt_us - self.sk.tcp_mstamp as i64;
        if ack_in_us > (srtt_us / 2).min(DEFER_ACK_SOON_US) {
            return false;
        }
        // cwnd-limited (the receive window is never the limit here).
        true
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
        // Deferring because of cwnd counts as cwnd-limited (Linux's
        // tcp_tso_should_defer sets is_cwnd_limited), so that CCs keep
        // growing cwnd while they wait for room for a full skb.
        let mut deferred = false;
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
            // A sized flow's last data: nothing more will come to fill a
            // bigger skb, so it goes now (Linux: the tail skb is sent once
            // cwnd and the receive window allow all of it).
            let left = self.size_segments.map_or(u32::MAX, |n| n - self.sb.nxt());
            if max_segs > 1 && push_one == 0 && left > quota && self.tso_should_defer(max_segs) {
                deferred = true;
                break;
            }
            let n = quota.min(max_segs).min(left);
            self.transmit_new(n, out);
            sent += n;
            if push_one != 0 {
                break;
            }
        }
        let is_cwnd_limited = deferred || self.in_flight() >= self.sk.snd_cwnd;
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
            sk.snd_cwnd_stamp = sk.jiffies_ms();
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
        let mut tx = rate_sample::skb_sent(&mut self.sk, sent_us);
        tx.in_flight = rate_sample::packets_in_flight(&self.sk) + n;
        // tcp_ecn_send(): new data is ECT; a queued CWR goes out on the
        // skb's first segment (GSO clears it on the rest).
        let mut cwr = self.sk.ecn_flags & TCP_ECN_QUEUE_CWR != 0;
        self.sk.ecn_flags &= !TCP_ECN_QUEUE_CWR;
        for i in 0..n {
            let seq = self.sb.push(Seg::new(sent_us, tx));
            let mut pkt = self.packet(seq, false, i, n);
            pkt.cwr = std::mem::take(&mut cwr);
            out.push(pkt);
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
        let mut tx = rate_sample::skb_sent(&mut self.sk, sent_us);
        tx.in_flight = rate_sample::packets_in_flight(&self.sk) + n;
        for seq in first..first + n {
            let seg = self.sb.seg_mut(seq);
            seg.set_tx(sent_us, tx);
            seg.flags |= sf::EVER_RETRANS;
            if mark_retrans {
                seg.flags |= sf::RETRANS;
                self.sk.retrans_out += 1;
            }
            self.sb.ts_push_tail(seq);
            out.push(self.packet(seq, true, seq - first, n));
        }
        if mark_retrans {
            // tcp_retransmit_skb(): the episode's first retransmission's
            // TSval, and one more retransmission a DSACK may excuse.
            if self.undo.retrans_stamp == 0 {
                self.undo.retrans_stamp = super::timestamp::tsval_of(sent_us);
            }
            self.undo.retrans = self.undo.retrans.max(0) + n as i32;
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
        self.last_send_ns = self.now_ns;
        let len = n as u64 * self.mss as u64;
        let stamp_ns = self.pacer.on_transmit(&self.sk, self.now_ns, n, len);
        self.sk.tcp_wstamp_ns = self.clock_ns(self.pacer.wstamp_ns);
        self.clock_us(stamp_ns)
    }

    /// Segment `index` of an skb of `segs`, on the wire. ECN-capable flows
    /// send new data as ECT(0) and retransmissions as Not-ECT
    /// (`INET_ECN_dontxmit`, RFC 3168 6.1.5); the last segment of an skb
    /// of two or more carries PSH (`__tcp_transmit_skb`). TSval: the
    /// skb's departure time (`tcp_options_write`).
    fn packet(&self, seq: u32, retrans: bool, index: u32, segs: u32) -> DataPacket {
        let tsval = super::timestamp::tsval_of(self.sb.seg(seq).sent_us);
        let ecn = if self.ecn.enabled() && !retrans { Ecn::Ect0 } else { Ecn::NotEct };
        DataPacket {
            flow: self.flow,
            seq,
            wire_bytes: self.wire_bytes,
            retrans,
            sent_ns: self.now_ns,
            enqueued_ns: 0,
            ecn,
            cwr: false,
            psh: segs > 1 && index == segs - 1,
            tsval,
            tsecr: self.ts_recent,
        }
    }
}
