//! The TCP receiver: cumulative ACKs with SACK blocks and Linux's ACK
//! policy (tcp_input.c `__tcp_ack_snd_check`):
//! - ACK at once while in quick-ACK mode (the first 16 segments: Linux's
//!   TCP_MAX_QUICKACKS at connection start, and the 16 after a duplicate
//!   of delivered data; a segment that grows the window adds one: see
//!   below), when more than one full segment is
//!   unacknowledged (i.e. every second segment), when an in-order segment
//!   carries PSH (the last of a multi-segment skb: ICSK_ACK_PUSHED, the
//!   application reading at once), while out-of-order data is held, and
//!   when a segment fills a hole or is a duplicate;
//! - otherwise hold the ACK for at most the delayed-ACK timeout (40 ms,
//!   TCP_DELACK_MIN / TCP_ATO_MIN, HZ/25 jiffies at any HZ; with bulk
//!   traffic Linux's adaptive `ato` stays at this floor; it fires 40 ms
//!   after it is armed, not on a tick's edge);
//! - SACK compression (`__tcp_ack_snd_check`, Linux ≥ 4.19): while
//!   out-of-order data is held, the first three ACKs for one `rcv_nxt`
//!   go out at once (DupThresh, so that the sender's fast retransmit is
//!   not delayed); after that, ACKs that would only carry new SACK
//!   information wait on a timer of min(1 ms, 5% of the RTT)
//!   (`tcp_comp_sack_delay_ns`, the 6.18 ratio), at most 44 of them
//!   (`tcp_comp_sack_nr`), and go out as one. Any ACK sent cancels it;
//!   and before an arrival changes a SACK block other than the two most
//!   recent ones (or adds a block to two or more), the held ACK goes out
//!   first, so that no block the sender has not heard of is pushed out of
//!   the three an ACK carries (`tcp_sack_new_ofo_skb` ->
//!   `tcp_sack_compress_send_ack`).
//!
//!
//! ECN ([`EcnMode`], tcp_input.c `tcp_ecn_accept_cwr` /
//! `tcp_ecn_check_ce`): a classic (RFC 3168) receiver that sees CE demands
//! CWR — it ACKs the next two segments at once (`tcp_enter_quickack_mode(sk,
//! 2)`, so a sender with a tiny cwnd hears quickly) and sets ECE on every
//! ACK until a segment with CWR arrives, which it ACKs at once. An AccECN
//! receiver counts CE packets and every ACK carries the count; its ACK
//! policy is unchanged. The receiver runs no congestion control, so the
//! receiver-side `CA_EVENT_ECN_IS_CE / NO_CE` (DCTCP's per-packet echo)
//! has no one to go to: per-packet feedback is AccECN's.
//!
//! Timestamps (RFC 7323 3.4, as Linux's `tcp_replace_ts_recent` and the
//! fast path's `tcp_store_ts_recent`): `ts_recent` takes the TSval of a
//! segment that starts at (or just below) `rcv_wup`, the `rcv_nxt` of the
//! last ACK sent, and every ACK echoes it. So a delayed ACK echoes its
//! first segment, an ACK for out-of-order data the segment before the
//! hole, and a duplicate (below `rcv_wup - 1`, dropped by `tcp_sequence`)
//! leaves the echo as it was: what the sender's Eifel test needs.
//!
//! DSACK (RFC 2883, sysctl tcp_dsack = 1): a duplicate of delivered data
//! (`tcp_send_dupack` / `tcp_data_queue`) or of held out-of-order data
//! (`tcp_data_queue_ofo`, which also makes its SACK block the most recent)
//! is reported in a DSACK block, the first of the next ACK's blocks
//! (`tcp_dsack_set`, `tcp_options_write`), sent once.
//!
//! Window growth ([`crate::rcvbuf`]): a segment that raises
//! `rcv_ssthresh` is ACKed at once (`tcp_grow_window`: `icsk_ack.quick
//! |= 1`), which through a slow start is most segments; every ACK carries
//! the receiver's ms clock as its TSval, which the sender echoes on data
//! and the receiver's RTT estimate (for the autotuning) is taken from.
//!
//! Deviations: no receive-window limit (the sender is never window-limited:
//! Linux autotuning grows rcvbuf beyond the BDPs we simulate), no GRO.

use std::collections::{BTreeMap, VecDeque};

use crate::config::EcnMode;
use crate::packet::{AckPacket, DataPacket, Ecn, MAX_SACK_BLOCKS};
use crate::rcvbuf::RcvBuf;
use crate::tcp::sender::linux_clock_us;
use crate::tcp::timestamp::tsval_of;

/// Linux TCP_MAX_QUICKACKS: segments ACKed one by one at connection start.
const QUICKACKS_AT_START: u32 = 16;
/// Segments ACKed one by one after a duplicate of delivered data arrives
/// (TCP_MAX_QUICKACKS; Linux caps it at rcv_wnd / (2 MSS), above 16 for
/// every window we simulate).
const QUICKACKS_AFTER_DUPLICATE: u32 = 16;
/// Segments ACKed at once after the first CE (`tcp_enter_quickack_mode(sk, 2)`).
const QUICKACKS_AFTER_CE: u32 = 2;
/// Delayed-ACK timeout, ns (Linux TCP_DELACK_MIN at HZ=1000).
pub const DELACK_NS: u64 = 40_000_000;
/// SACK compression: ACKs sent at once per `rcv_nxt` before compressing
/// (TCP_FASTRETRANS_THRESH).
const SACKS_BEFORE_COMPRESSION: u32 = 3;
/// sysctl tcp_comp_sack_nr: at most this many ACKs compressed into one.
const COMP_SACK_NR: u32 = 44;
/// A change to a SACK block less recent than this many flushes the held
/// ACK first (TCP_SACK_BLOCKS_EXPECTED: "the max is 4, but this becomes 3
/// if TCP timestamps are there; given that SACK packets might be lost,
/// be conservative and use 2").
const SACK_BLOCKS_EXPECTED: usize = 2;
/// sysctl tcp_comp_sack_delay_ns: the compression timer's ceiling, ns.
const COMP_SACK_DELAY_NS: u64 = 1_000_000;
/// The timer is this fraction of the RTT (1/20: 5%, fixed before Linux
/// 6.19's tcp_comp_sack_rtt_percent).
const COMP_SACK_RTT_DIVISOR: u64 = 20;

/// An out-of-order range `[start, end)` and when it last grew.
#[derive(Clone, Copy, Debug)]
struct OooRange {
    start: u32,
    end: u32,
    touched: u64,
}

pub struct Receiver {
    flow: u32,
    mss: u32,
    rcv_nxt: u32,
    /// Out-of-order ranges, sorted by start, disjoint and not adjacent.
    ooo: VecDeque<OooRange>,
    /// Monotonic counter ordering SACK blocks by recency.
    touches: u64,
    /// Every range of `ooo` by its `touched` (to its start), so that an
    /// ACK finds the most recently changed ranges in O(log ranges), not by
    /// a look at every range (thousands after a burst of losses).
    by_touch: BTreeMap<u64, u32>,
    /// Segments received in order since the last ACK we sent.
    unacked: u32,
    quickacks_left: u32,
    /// When the pending delayed ACK fires, if one is pending.
    delack_deadline: Option<u64>,
    /// SACK compression: ACKs held back since the last one sent
    /// (`tp->compressed_ack`), ACKs sent at once for `comp_rcv_nxt`
    /// (`dup_ack_counter`), and when the held ones go out.
    compressed: u32,
    dupacks_sent: u32,
    comp_rcv_nxt: u32,
    comp_deadline: Option<u64>,
    /// The held ACK an arrival flushed before its own (see
    /// [`Receiver::take_flushed`]).
    flushed: Option<AckPacket>,
    /// `tcp_comp_sack_nr` (0: no compression).
    comp_sack_nr: u32,
    /// The compression timer, ns: min(1 ms, RTT / 20), the RTT being the
    /// handshake's (Linux: min(srtt, receiver RTT estimate)).
    comp_delay_ns: u64,
    /// Payload bytes delivered in order to the application.
    delivered_bytes: u64,
    /// Data segments that arrived (including duplicates).
    arrived_segments: u64,
    ecn: EcnMode,
    /// Classic ECN's `TCP_ECN_DEMAND_CWR`: ECE on every ACK until CWR.
    demand_cwr: bool,
    /// CE-marked data segments that arrived (AccECN's `received_ce`).
    ce_packets: u32,
    /// `rx_opt.ts_recent`: the TSval the next ACK echoes (0: none yet).
    ts_recent: u32,
    /// `tp->rcv_wup`: `rcv_nxt` when the last ACK was sent.
    rcv_wup: u32,
    /// `rx_opt.dsack` + `duplicate_sack[0]`: the DSACK block to send.
    dsack: Option<(u32, u32)>,
    /// The window's growth and the buffer's autotuning.
    rcvbuf: RcvBuf,
    /// The receiver's timestamp clock at the event being processed (the
    /// TSval of the ACKs it sends), ms.
    now_ts: u32,
}

/// What the receiver wants done after a segment arrives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RxAction {
    /// Send this ACK now.
    Ack(AckPacket),
    /// Hold the ACK; make sure [`Receiver::on_timer`] is called at this
    /// time (the delayed-ACK or the SACK compression timer).
    ArmTimer(u64),
    /// A held ACK is already pending.
    Wait,
}

impl Receiver {
    pub fn new(flow: u32, mss: u32, ecn: EcnMode) -> Self {
        Self {
            flow,
            mss,
            rcv_nxt: 0,
            ooo: VecDeque::new(),
            touches: 0,
            by_touch: BTreeMap::new(),
            unacked: 0,
            quickacks_left: QUICKACKS_AT_START,
            delack_deadline: None,
            compressed: 0,
            dupacks_sent: 0,
            comp_rcv_nxt: 0,
            comp_deadline: None,
            flushed: None,
            comp_sack_nr: COMP_SACK_NR,
            comp_delay_ns: COMP_SACK_DELAY_NS,
            delivered_bytes: 0,
            arrived_segments: 0,
            ecn,
            demand_cwr: false,
            ce_packets: 0,
            ts_recent: 0,
            rcv_wup: 0,
            dsack: None,
            rcvbuf: RcvBuf::new(mss, 0),
            now_ts: 0,
        }
    }

    /// The connection is established at `now_ns`: the window and the
    /// buffer start from Linux's initial values (`tcp_init_buffer_space`).
    pub fn establish(&mut self, now_ns: u64) {
        self.rcvbuf = RcvBuf::new(self.mss, now_ns / 1000);
    }

    /// A receiver whose start-up is over: no quick ACKs left and a
    /// window that no longer grows (unit tests of the steady ACK policy).
    #[cfg(test)]
    pub fn settle(&mut self) {
        self.quickacks_left = 0;
        self.rcvbuf = RcvBuf::settled(self.mss);
    }

    /// The receiver's timestamp clock (`tcp_time_stamp_ts`) at `now_ns`,
    /// ms: the sender's clock and formula (its host booted as long before
    /// the run).
    fn ts_clock(now_ns: u64) -> u32 {
        tsval_of(linux_clock_us(now_ns))
    }

    /// The connection's handshake measured `rtt_ns` (sets the SACK
    /// compression timer).
    pub fn set_handshake_rtt(&mut self, rtt_ns: u64) {
        self.comp_delay_ns = COMP_SACK_DELAY_NS.min(rtt_ns / COMP_SACK_RTT_DIVISOR);
    }

    /// CE-marked data segments received so far.
    pub fn ce_packets(&self) -> u32 {
        self.ce_packets
    }

    pub fn delivered_bytes(&self) -> u64 {
        self.delivered_bytes
    }

    pub fn arrived_segments(&self) -> u64 {
        self.arrived_segments
    }

    /// A data segment arrives at `now_ns`.
    pub fn on_data(&mut self, now_ns: u64, pkt: &DataPacket) -> RxAction {
        self.arrived_segments += 1;
        self.now_ts = Self::ts_clock(now_ns);
        let ack_now = self.ecn_on_data(pkt);
        let seq = pkt.seq;
        self.replace_ts_recent(seq, pkt.tsval);
        if seq < self.rcv_nxt {
            // A duplicate of delivered data (a spurious retransmission):
            // Linux ACKs at once with a DSACK and enters quick-ACK mode
            // (tcp_send_dupack / tcp_data_queue:
            // tcp_enter_quickack_mode(sk, TCP_MAX_QUICKACKS)).
            self.quickacks_left = self.quickacks_left.max(QUICKACKS_AFTER_DUPLICATE);
            self.dsack = Some((seq, seq + 1));
            return RxAction::Ack(self.make_ack(false, None));
        }
        if let Some(idx) = self.held_range(seq) {
            // A duplicate of held out-of-order data (tcp_data_queue_ofo):
            // DSACK, no quick-ACK mode, and its block becomes the most
            // recent (tcp_sack_new_ofo_skb); an ACK like any out-of-order one.
            self.dsack = Some((seq, seq + 1));
            if self.compressed > 0 && !self.among_latest_blocks(self.ooo[idx].touched) {
                self.flushed = Some(self.make_ack(false, None));
            }
            self.touch(idx);
            return self.sack_check(now_ns, Some(idx));
        }
        // New data: the RTT sample and the window's growth
        // (`tcp_rcv_rtt_measure_ts`, then `tcp_grow_window` from
        // `tcp_event_data_recv` or `tcp_data_queue_ofo`).
        if self.rcvbuf.on_segment(self.now_ts, pkt.tsecr, self.mss) {
            self.quickacks_left |= 1;
        }
        if seq == self.rcv_nxt {
            let had_ooo = !self.ooo.is_empty();
            self.advance(seq + 1);
            // The application reads it (`tcp_recvmsg` ->
            // `tcp_rcv_space_adjust`), after the softirq's ACK decision
            // below; the order does not matter to either.
            let (ooo, rcv_nxt, mss) = (&self.ooo, self.rcv_nxt, self.mss as u64);
            let ooo_bytes = || ooo.back().map_or(0, |r| (r.end - rcv_nxt) as u64 * mss);
            self.rcvbuf.on_read(now_ns / 1000, self.delivered_bytes, ooo_bytes);
            if had_ooo {
                // Filled (part of) a hole: ACK at once (RFC 5681 4.2).
                return RxAction::Ack(self.make_ack(false, None));
            }
            self.unacked += 1;
            // A full-sized segment with PSH: Linux sets ICSK_ACK_PUSHED
            // (tcp_measure_rcv_mss) and ACKs as soon as the application
            // has read everything (tcp_cleanup_rbuf), which a bulk
            // receiver does at once: an skb's last segment is ACKed even
            // when it is the only one unacknowledged.
            if ack_now || self.quickacks_left > 0 || self.unacked >= 2 || pkt.psh {
                return RxAction::Ack(self.make_ack(false, None));
            }
            return match self.delack_deadline {
                Some(_) => RxAction::Wait,
                None => {
                    let t = now_ns + DELACK_NS;
                    self.delack_deadline = Some(t);
                    RxAction::ArmTimer(t)
                }
            };
        }
        if self.compressed > 0 && self.changes_an_older_block(seq) {
            self.flushed = Some(self.make_ack(false, None));
        }
        let idx = self.insert_ooo(seq);
        self.sack_check(now_ns, Some(idx))
    }

    /// The held (compressed) ACK that the last [`Receiver::on_data`] sent
    /// ahead of its own action, if it did: send it first.
    pub fn take_flushed(&mut self) -> Option<AckPacket> {
        self.flushed.take()
    }

    /// Would out-of-order `seq` add a SACK block to two or more, or grow a
    /// range other than the two most recently changed ones?
    fn changes_an_older_block(&self, seq: u32) -> bool {
        let pos = self.ooo.partition_point(|r| r.end < seq);
        let grows = self.ooo.get(pos).filter(|r| r.end == seq || r.start == seq + 1);
        match grows {
            Some(r) => !self.among_latest_blocks(r.touched),
            None => self.ooo.len() >= SACK_BLOCKS_EXPECTED,
        }
    }

    /// Is the range last changed at `touched` one of the
    /// SACK_BLOCKS_EXPECTED most recently changed?
    fn among_latest_blocks(&self, touched: u64) -> bool {
        self.by_touch.keys().rev().take(SACK_BLOCKS_EXPECTED).any(|&t| t == touched)
    }

    /// `tcp_replace_ts_recent()` (and the fast path's
    /// `tcp_store_ts_recent()`): a segment that passes `tcp_sequence`
    /// (ends at or above `rcv_wup`) and starts at or below it, with a
    /// TSval not older than `ts_recent` (`tcp_paws_check`), sets the echo.
    fn replace_ts_recent(&mut self, seq: u32, tsval: u32) {
        let at_wup = seq <= self.rcv_wup && seq + 1 >= self.rcv_wup;
        if at_wup && (self.ts_recent == 0 || !crate::tcp::timestamp::ts_before(tsval, self.ts_recent)) {
            self.ts_recent = tsval;
        }
    }

    /// An ACK that out-of-order data calls for: at once, or compressed
    /// (the SACK part of `__tcp_ack_snd_check`). `first`: the range to
    /// report first, if the arrival created or grew one.
    fn sack_check(&mut self, now_ns: u64, first: Option<usize>) -> RxAction {
        if self.compressed >= self.comp_sack_nr {
            return RxAction::Ack(self.make_ack(false, first));
        }
        if self.comp_rcv_nxt != self.rcv_nxt {
            self.comp_rcv_nxt = self.rcv_nxt;
            self.dupacks_sent = 0;
        }
        if self.dupacks_sent < SACKS_BEFORE_COMPRESSION {
            self.dupacks_sent += 1;
            return RxAction::Ack(self.make_ack(false, first));
        }
        self.compressed += 1;
        if self.comp_deadline.is_some() {
            return RxAction::Wait;
        }
        let t = now_ns + self.comp_delay_ns;
        self.comp_deadline = Some(t);
        RxAction::ArmTimer(t)
    }

    /// `tcp_ecn_accept_cwr` then `tcp_ecn_check_ce` for an arriving
    /// segment; true if it must be ACKed at once (it carries CWR).
    fn ecn_on_data(&mut self, pkt: &DataPacket) -> bool {
        if pkt.ecn == Ecn::Ce {
            self.ce_packets += 1;
        }
        if self.ecn != EcnMode::Classic {
            return false;
        }
        if pkt.cwr {
            self.demand_cwr = false;
        }
        if pkt.ecn == Ecn::Ce && !self.demand_cwr {
            self.quickacks_left = self.quickacks_left.max(QUICKACKS_AFTER_CE);
            self.demand_cwr = true;
        }
        pkt.cwr
    }

    /// A timer armed for `deadline_ns` ([`RxAction::ArmTimer`]) fired.
    /// Returns the ACK to send: the delayed ACK, or the compressed SACKs
    /// (the latest SACK blocks, most recently changed first); None if an
    /// ACK sent since made it moot.
    pub fn on_timer(&mut self, deadline_ns: u64) -> Option<AckPacket> {
        self.now_ts = Self::ts_clock(deadline_ns);
        if self.delack_deadline == Some(deadline_ns) {
            return Some(self.make_ack(true, None));
        }
        if self.comp_deadline == Some(deadline_ns) && self.compressed > 0 {
            return Some(self.make_ack(false, None));
        }
        None
    }

    fn advance(&mut self, to: u32) {
        let mut new_nxt = to;
        // Absorb out-of-order ranges that are now contiguous (ranges are
        // sorted by start and disjoint), removing them in one go.
        while let Some(first) = self.ooo.front() {
            if first.start > new_nxt {
                break;
            }
            new_nxt = new_nxt.max(first.end);
            self.by_touch.remove(&first.touched);
            self.ooo.pop_front();
        }
        self.delivered_bytes += (new_nxt - self.rcv_nxt) as u64 * self.mss as u64;
        self.rcv_nxt = new_nxt;
    }

    /// The out-of-order range that holds `seq`, if one does.
    fn held_range(&self, seq: u32) -> Option<usize> {
        let i = self.ooo.partition_point(|r| r.end <= seq);
        (i < self.ooo.len() && self.ooo[i].start <= seq).then_some(i)
    }

    /// Whether an out-of-order range holds `seq`.
    #[cfg(test)]
    fn holds(&self, seq: u32) -> bool {
        self.held_range(seq).is_some()
    }

    /// Makes range `idx` the most recently changed.
    fn touch(&mut self, idx: usize) {
        self.touches += 1;
        let r = &mut self.ooo[idx];
        self.by_touch.remove(&r.touched);
        r.touched = self.touches;
        self.by_touch.insert(r.touched, r.start);
    }

    /// Adds `seq` to the out-of-order set; returns the index of its range.
    fn insert_ooo(&mut self, seq: u32) -> usize {
        self.touches += 1;
        let touched = self.touches;
        let pos = self.ooo.partition_point(|r| r.end < seq);
        // `pos` is the first range that ends at or after seq.
        if pos < self.ooo.len() && self.ooo[pos].end == seq {
            self.ooo[pos].end = seq + 1;
            if pos + 1 < self.ooo.len() && self.ooo[pos + 1].start == seq + 1 {
                let next = self.ooo.remove(pos + 1).expect("checked");
                self.by_touch.remove(&next.touched);
                self.ooo[pos].end = next.end;
            }
        } else if pos < self.ooo.len() && self.ooo[pos].start == seq + 1 {
            self.ooo[pos].start = seq;
        } else {
            self.ooo.insert(pos, OooRange { start: seq, end: seq + 1, touched });
        }
        let r = &mut self.ooo[pos];
        self.by_touch.remove(&r.touched);
        r.touched = touched;
        self.by_touch.insert(touched, r.start);
        pos
    }

    /// Up to `room` ranges other than `first`, most recently changed first.
    fn most_recent(&self, first: Option<usize>, room: usize) -> impl Iterator<Item = usize> + '_ {
        self.by_touch
            .values()
            .rev()
            .map(|&start| self.ooo.partition_point(|r| r.start < start))
            .filter(move |&i| Some(i) != first)
            .take(room)
    }

    fn make_ack(&mut self, delayed: bool, first: Option<usize>) -> AckPacket {
        // Every ACK sent uses up one quick ACK (tcp_event_ack_sent ->
        // tcp_dec_quickack_mode).
        self.quickacks_left = self.quickacks_left.saturating_sub(1);
        self.unacked = 0;
        self.delack_deadline = None;
        // tcp_event_ack_sent: the compressed ACKs went out with this one.
        self.compressed = 0;
        self.comp_deadline = None;
        // tcp_select_window(): the ACK advertises a window from rcv_nxt.
        self.rcv_wup = self.rcv_nxt;
        let mut sacks = [(0, 0); MAX_SACK_BLOCKS];
        let mut n = 0;
        // The DSACK block first, once (tcp_options_write clears rx_opt.dsack).
        if let Some(d) = self.dsack.take() {
            sacks[0] = d;
            n = 1;
        }
        if let Some(i) = first {
            sacks[n] = (self.ooo[i].start, self.ooo[i].end);
            n += 1;
        }
        let placed = n;
        if self.ooo.len() > first.is_some() as usize {
            // Remaining blocks, most recently changed first (RFC 2018).
            for i in self.most_recent(first, MAX_SACK_BLOCKS - placed) {
                sacks[n] = (self.ooo[i].start, self.ooo[i].end);
                n += 1;
            }
        }
        AckPacket {
            flow: self.flow,
            cum_ack: self.rcv_nxt,
            sacks,
            n_sacks: n as u8,
            delayed,
            ece: self.demand_cwr,
            ce_packets: if self.ecn == EcnMode::Accecn { self.ce_packets } else { 0 },
            tsecr: self.ts_recent,
            tsval: self.now_ts,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(seq: u32) -> DataPacket {
        DataPacket { flow: 0, seq, wire_bytes: 1514, retrans: false, ..Default::default() }
    }

    fn ack(a: RxAction) -> AckPacket {
        match a {
            RxAction::Ack(a) => a,
            other => panic!("expected an ACK, got {other:?}"),
        }
    }

    #[test]
    fn quickacks_then_every_second_segment_then_delack() {
        // Sixteen quick ACKs at the start (TCP_MAX_QUICKACKS); the first
        // six segments also grow the window (room for six below the
        // initial clamp), and each growth's `quick |= 1` gives back the
        // quick ACK it used: 6 + 16 segments ACKed one by one.
        let mut r = Receiver::new(0, 1448, EcnMode::Off);
        for s in 0..22 {
            assert_eq!(ack(r.on_data(0, &seg(s))).cum_ack, s + 1);
        }
        assert_eq!(r.on_data(10, &seg(22)), RxAction::ArmTimer(10 + DELACK_NS));
        assert_eq!(ack(r.on_data(20, &seg(23))).cum_ack, 24);
        assert_eq!(r.on_data(30, &seg(24)), RxAction::ArmTimer(30 + DELACK_NS));
        let late = r.on_timer(30 + DELACK_NS).expect("delayed ack");
        assert!(late.delayed);
        assert_eq!(late.cum_ack, 25);
        assert_eq!(r.delivered_bytes(), 25 * 1448);
    }

    #[test]
    fn a_segment_that_grows_the_window_is_acked_at_once_and_acks_carry_the_clock() {
        let mut r = Receiver::new(0, 1448, EcnMode::Off);
        r.settle();
        assert!(matches!(r.on_data(0, &seg(0)), RxAction::ArmTimer(_)));
        // The buffer grows (DRS after a measured RTT of 50 ms): the next
        // segment grows the window and goes out alone.
        let mut r = Receiver::new(0, 1448, EcnMode::Off);
        r.settle();
        let mut grown = RcvBuf::new(1448, 0);
        grown.on_segment(1_050, 1_000, 1448);
        grown.on_read(60_000, 100 * 1448, || 0);
        r.rcvbuf = grown;
        let a = ack(r.on_data(70_000_000, &seg(0)));
        assert_eq!(a.cum_ack, 1);
        // TSval: the receiver's ms clock (boot time + 70 ms).
        assert_eq!(a.tsval, (crate::tcp::sender::CLOCK_BASE_US / 1000 + 70) as u32);
    }

    #[test]
    fn cancelled_delack_timer_is_ignored() {
        let mut r = Receiver::new(0, 1448, EcnMode::Off);
        r.settle();
        let RxAction::ArmTimer(t) = r.on_data(0, &seg(0)) else { panic!() };
        ack(r.on_data(1, &seg(1)));
        assert_eq!(r.on_timer(t), None);
    }

    #[test]
    fn with_many_holes_the_blocks_are_the_most_recently_changed() {
        let mut r = Receiver::new(0, 1448, EcnMode::Off);
        r.comp_sack_nr = 0; // an ACK per arrival, to see every block list
        // Every other segment from 2 on arrives, in a scrambled order: one
        // hole each. The ACK of each carries its own block first, then the
        // two ranges touched just before it.
        let order: Vec<u32> = (0..500u32).map(|i| 2 + 2 * ((i * 37) % 500)).collect();
        let mut seen = vec![];
        for &seq in &order {
            let a = ack(r.on_data(0, &seg(seq)));
            assert_eq!(a.n_sacks as usize, (seen.len() + 1).min(3));
            let mut want = vec![(seq, seq + 1)];
            want.extend(seen.iter().rev().take(2).map(|&s: &u32| (s, s + 1)));
            assert_eq!(&a.sacks[..a.n_sacks as usize], &want[..]);
            seen.push(seq);
        }
        // Filling the first hole absorbs the range after it, up to the next
        // hole (3); filling every hole delivers everything.
        assert_eq!(ack(r.on_data(0, &seg(0))).cum_ack, 1);
        assert_eq!(ack(r.on_data(0, &seg(1))).cum_ack, 3);
        for seq in (3..1000).step_by(2) {
            r.on_data(0, &seg(seq));
        }
        assert_eq!(r.rcv_nxt, 1001);
        assert!(r.ooo.is_empty());
    }

    #[test]
    fn sack_blocks_are_those_a_full_sort_by_recency_gives() {
        // Random arrivals (reordered, duplicated, holes filled late), so
        // that ranges are merged and delivered often and the latest changes
        // do not always name enough current ranges.
        let mut rng = crate::rng::SimRng::new(11);
        let mut r = Receiver::new(0, 1448, EcnMode::Off);
        r.comp_sack_nr = 0;
        for _ in 0..20_000 {
            // Mostly near the in-order point (ranges soon delivered, their
            // changes going stale), sometimes far ahead (old ranges that
            // only a look at every range finds).
            let x = rng.next_f64();
            let seq = r.rcv_nxt
                + match x {
                    _ if x < 0.3 => 0,
                    _ if x < 0.9 => (rng.next_u64() % 20) as u32,
                    _ => 500 + (rng.next_u64() % 5000) as u32,
                };
            let out_of_order = seq > r.rcv_nxt;
            let dup = seq < r.rcv_nxt || r.holds(seq);
            let a = match r.on_data(0, &seg(seq)) {
                RxAction::Ack(a) => a,
                _ => continue,
            };
            // The reference: a DSACK for a duplicate, the arrival's own
            // range if it is out of order (new or duplicate), then every
            // other range by recency.
            let own = out_of_order.then(|| r.ooo.iter().position(|x| x.start <= seq && seq < x.end).unwrap());
            let mut rest: Vec<&OooRange> =
                r.ooo.iter().enumerate().filter(|(j, _)| Some(*j) != own).map(|(_, x)| x).collect();
            rest.sort_by_key(|x| std::cmp::Reverse(x.touched));
            let want: Vec<(u32, u32)> = dup
                .then_some((seq, seq + 1))
                .into_iter()
                .chain(own.map(|i| (r.ooo[i].start, r.ooo[i].end)))
                .chain(rest.iter().map(|x| (x.start, x.end)))
                .take(MAX_SACK_BLOCKS)
                .collect();
            assert_eq!(&a.sacks[..a.n_sacks as usize], &want[..]);
            // The recency index lists exactly the current ranges.
            let index: Vec<(u64, u32)> = r.by_touch.iter().map(|(&t, &s)| (t, s)).collect();
            let mut ranges: Vec<(u64, u32)> = r.ooo.iter().map(|x| (x.touched, x.start)).collect();
            ranges.sort_unstable();
            assert_eq!(index, ranges);
        }
        assert!(r.rcv_nxt > 3000, "{}", r.rcv_nxt);
    }

    #[test]
    fn holes_produce_sack_blocks_most_recent_first() {
        let mut r = Receiver::new(0, 1448, EcnMode::Off);
        r.settle();
        r.comp_sack_nr = 0;
        assert!(matches!(r.on_data(0, &seg(0)), RxAction::ArmTimer(_)));
        let a = ack(r.on_data(0, &seg(2)));
        assert_eq!((a.cum_ack, a.n_sacks, a.sacks[0]), (1, 1, (2, 3)));
        let a = ack(r.on_data(0, &seg(5)));
        assert_eq!((a.n_sacks, a.sacks[0], a.sacks[1]), (2, (5, 6), (2, 3)));
        let a = ack(r.on_data(0, &seg(3)));
        assert_eq!((a.n_sacks, a.sacks[0], a.sacks[1]), (2, (2, 4), (5, 6)));
        let a = ack(r.on_data(0, &seg(4)));
        assert_eq!((a.n_sacks, a.sacks[0]), (1, (2, 6)));
        // Filling the hole ACKs at once and delivers everything.
        let a = ack(r.on_data(0, &seg(1)));
        assert_eq!((a.cum_ack, a.n_sacks), (6, 0));
        assert_eq!(r.delivered_bytes(), 6 * 1448);
    }

    fn psh(seq: u32) -> DataPacket {
        DataPacket { psh: true, ..seg(seq) }
    }

    #[test]
    fn a_segment_with_psh_is_acked_even_alone() {
        // Two-segment skbs, the second with PSH. In step, every ACK covers
        // one skb; one segment out of step (a 1-segment skb), the ACK
        // after it covers that segment and the next, and the skb's PSH
        // segment is ACKed alone: the ACKs fall back in step with the skbs.
        let mut r = Receiver::new(0, 1448, EcnMode::Off);
        r.settle();
        assert!(matches!(r.on_data(0, &seg(0)), RxAction::ArmTimer(_)));
        assert_eq!(ack(r.on_data(1, &psh(1))).cum_ack, 2);
        assert!(matches!(r.on_data(2, &seg(2)), RxAction::ArmTimer(_))); // a 1-segment skb
        assert_eq!(ack(r.on_data(3, &seg(3))).cum_ack, 4);
        assert_eq!(ack(r.on_data(4, &psh(4))).cum_ack, 5);
        assert!(matches!(r.on_data(5, &seg(5)), RxAction::ArmTimer(_)));
        assert_eq!(ack(r.on_data(6, &psh(6))).cum_ack, 7);
    }

    #[test]
    fn a_duplicate_of_delivered_data_starts_sixteen_quick_acks() {
        let mut r = Receiver::new(0, 1448, EcnMode::Off);
        r.settle();
        for s in 0..4 {
            r.on_data(0, &seg(s));
        }
        assert_eq!(ack(r.on_data(0, &seg(1))).cum_ack, 4); // the duplicate, at once
        for s in 4..19 {
            assert_eq!(ack(r.on_data(0, &seg(s))).cum_ack, s + 1, "segment {s}");
        }
        assert!(matches!(r.on_data(0, &seg(19)), RxAction::ArmTimer(_)));
        // A duplicate of held out-of-order data is not one of these.
        let mut r = Receiver::new(0, 1448, EcnMode::Off);
        r.settle();
        r.on_data(0, &seg(0));
        r.on_data(0, &seg(2));
        r.on_data(0, &seg(2));
        r.on_data(0, &seg(1)); // fills the hole, ACKed at once
        assert!(matches!(r.on_data(0, &seg(3)), RxAction::ArmTimer(_)));
    }

    #[test]
    fn sack_compression_after_three_dupacks_and_at_most_44() {
        let mut r = Receiver::new(0, 1448, EcnMode::Off);
        r.set_handshake_rtt(40_000_000); // timer: min(1 ms, 40 ms / 20)
        r.settle();
        let t = 1_000;
        r.on_data(t, &seg(0));
        ack(r.on_data(t, &seg(1)));
        // Segment 2 lost: the first three out-of-order arrivals are ACKed
        // at once (the sender's DupThresh), the fourth arms the timer.
        for s in 3..6 {
            assert_eq!(ack(r.on_data(t + s as u64, &seg(s))).cum_ack, 2);
        }
        let deadline = t + 6 + 1_000_000;
        assert_eq!(r.on_data(t + 6, &seg(6)), RxAction::ArmTimer(deadline));
        assert_eq!(r.on_data(t + 7, &seg(7)), RxAction::Wait);
        let a = r.on_timer(deadline).expect("the compressed ACK");
        assert_eq!((a.cum_ack, a.n_sacks, a.sacks[0]), (2, 1, (3, 8)));
        assert!(!a.delayed);
        assert_eq!(r.on_timer(deadline), None, "sent once");
        // Later arrivals compress again, at most 44 into one ACK.
        let mut seq = 8;
        let mut sent = 0;
        for _ in 0..45 {
            if let RxAction::Ack(_) = r.on_data(t + 10, &seg(seq)) {
                sent += 1;
            }
            seq += 1;
        }
        assert_eq!(sent, 1, "the 45th after 44 compressed goes out at once");
        // An ACK that delivers data (the retransmission filling the hole)
        // goes out at once and cancels the pending timer.
        let RxAction::ArmTimer(d2) = r.on_data(t + 20, &seg(seq)) else { panic!("expected a timer") };
        assert_eq!(ack(r.on_data(t + 21, &seg(2))).cum_ack, seq + 1);
        assert_eq!(r.on_timer(d2), None);
        // A short RTT shortens the timer (5%).
        let mut r = Receiver::new(0, 1448, EcnMode::Off);
        r.set_handshake_rtt(10_000_000);
        assert_eq!(r.comp_delay_ns, 500_000);
    }

    #[test]
    fn a_new_sack_block_flushes_the_held_ack_first() {
        let mut r = Receiver::new(0, 1448, EcnMode::Off);
        r.set_handshake_rtt(40_000_000);
        r.settle();
        // Holes at 0 and 2: ranges [1, 2) and [3, 6); three immediate
        // duplicate ACKs, then held ones.
        for s in [1, 3, 4] {
            ack(r.on_data(0, &seg(s)));
        }
        assert!(matches!(r.on_data(0, &seg(5)), RxAction::ArmTimer(_)));
        assert_eq!(r.take_flushed(), None);
        // Growing the most recent range keeps holding.
        assert_eq!(r.on_data(0, &seg(6)), RxAction::Wait);
        assert_eq!(r.take_flushed(), None);
        // A third range: the held ACK goes out first, with the blocks as
        // they were, then the new arrival is held again.
        let action = r.on_data(0, &seg(8));
        let flushed = r.take_flushed().expect("the held ACK");
        assert_eq!(&flushed.sacks[..flushed.n_sacks as usize], &[(3, 7), (1, 2)]);
        assert!(matches!(action, RxAction::ArmTimer(_)));
        // Growing a range that is not among the two most recent ones
        // ([1, 2): [8, 9) and [3, 7) are newer) flushes too.
        r.on_data(0, &seg(2));
        let flushed = r.take_flushed().expect("the held ACK");
        assert_eq!(&flushed.sacks[..flushed.n_sacks as usize], &[(8, 9), (3, 7), (1, 2)]);
    }

    fn ts(seq: u32, tsval: u32) -> DataPacket {
        DataPacket { tsval, ..seg(seq) }
    }

    #[test]
    fn duplicates_are_reported_in_one_dsack_block_first() {
        let mut r = Receiver::new(0, 1448, EcnMode::Off);
        r.comp_sack_nr = 0;
        for s in 0..4 {
            r.on_data(0, &seg(s));
        }
        // A duplicate of delivered data: DSACK below the cumulative ACK.
        let a = ack(r.on_data(0, &seg(1)));
        assert_eq!((a.cum_ack, a.n_sacks, a.sacks[0]), (4, 1, (1, 2)));
        // Sent once.
        let a = ack(r.on_data(0, &seg(6)));
        assert_eq!(&a.sacks[..a.n_sacks as usize], &[(6, 7)]);
        r.on_data(0, &seg(9));
        // A duplicate of held data: DSACK, then its block (now the most
        // recent), then the others.
        let a = ack(r.on_data(0, &seg(6)));
        assert_eq!(&a.sacks[..a.n_sacks as usize], &[(6, 7), (6, 7), (9, 10)]);
    }

    #[test]
    fn the_echo_is_the_tsval_of_the_segment_at_the_last_acks_rcv_nxt() {
        let mut r = Receiver::new(0, 1448, EcnMode::Off);
        r.settle();
        // Delayed ACK of two segments echoes the first (RFC 7323 3.4).
        assert!(matches!(r.on_data(0, &ts(0, 100)), RxAction::ArmTimer(_)));
        assert_eq!(ack(r.on_data(0, &ts(1, 101))).tsecr, 100);
        // Out of order: the echo stays that of the segment at the hole.
        assert!(matches!(r.on_data(0, &ts(2, 102)), RxAction::ArmTimer(_)));
        assert_eq!(ack(r.on_data(0, &ts(4, 104))).tsecr, 102);
        // The hole filled by a later retransmission: its TSval.
        assert_eq!(ack(r.on_data(0, &ts(3, 110))).tsecr, 110);
        // A duplicate of older data leaves the echo alone (Eifel).
        let a = ack(r.on_data(0, &ts(1, 120)));
        assert_eq!((a.tsecr, a.sacks[0]), (110, (1, 2)));
    }
}
