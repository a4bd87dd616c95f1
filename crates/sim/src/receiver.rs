//! The TCP receiver: cumulative ACKs with SACK blocks and Linux's ACK
//! policy (tcp_input.c `__tcp_ack_snd_check`):
//! - ACK at once while in quick-ACK mode (the first 16 segments: Linux's
//!   TCP_MAX_QUICKACKS at connection start), when more than one full segment
//!   is unacknowledged (i.e. every second segment), while out-of-order data
//!   is held, and when a segment fills a hole or is a duplicate;
//! - otherwise hold the ACK for at most the delayed-ACK timeout (40 ms,
//!   TCP_DELACK_MIN / TCP_ATO_MIN at HZ=1000; with bulk traffic Linux's
//!   adaptive `ato` stays at this floor).
//! Deviations: no receive-window limit (the sender is never window-limited:
//! Linux autotuning grows rcvbuf beyond the BDPs we simulate), no GRO.

use crate::packet::{AckPacket, DataPacket, MAX_SACK_BLOCKS};

/// Linux TCP_MAX_QUICKACKS: segments ACKed one by one at connection start.
const QUICKACKS_AT_START: u32 = 16;
/// Delayed-ACK timeout, ns (Linux TCP_DELACK_MIN at HZ=1000).
pub const DELACK_NS: u64 = 40_000_000;

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
    ooo: Vec<OooRange>,
    /// Monotonic counter ordering SACK blocks by recency.
    touches: u64,
    /// Segments received in order since the last ACK we sent.
    unacked: u32,
    quickacks_left: u32,
    /// When the pending delayed ACK fires, if one is pending.
    delack_deadline: Option<u64>,
    /// Payload bytes delivered in order to the application.
    delivered_bytes: u64,
    /// Data segments that arrived (including duplicates).
    arrived_segments: u64,
}

/// What the receiver wants done after a segment arrives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RxAction {
    /// Send this ACK now.
    Ack(AckPacket),
    /// Hold the ACK; make sure the delayed-ACK timer fires at this time.
    ArmDelack(u64),
    /// A delayed ACK is already pending.
    Wait,
}

impl Receiver {
    pub fn new(flow: u32, mss: u32) -> Self {
        Self {
            flow,
            mss,
            rcv_nxt: 0,
            ooo: Vec::new(),
            touches: 0,
            unacked: 0,
            quickacks_left: QUICKACKS_AT_START,
            delack_deadline: None,
            delivered_bytes: 0,
            arrived_segments: 0,
        }
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
        let seq = pkt.seq;
        if seq < self.rcv_nxt || self.ooo.iter().any(|r| r.start <= seq && seq < r.end) {
            // Duplicate (a spurious retransmission): Linux ACKs at once (DSACK).
            return RxAction::Ack(self.make_ack(false, None));
        }
        if seq == self.rcv_nxt {
            let had_ooo = !self.ooo.is_empty();
            self.advance(seq + 1);
            if had_ooo {
                // Filled (part of) a hole: ACK at once (RFC 5681 4.2).
                return RxAction::Ack(self.make_ack(false, None));
            }
            self.unacked += 1;
            if self.quickacks_left > 0 || self.unacked >= 2 {
                self.quickacks_left = self.quickacks_left.saturating_sub(1);
                return RxAction::Ack(self.make_ack(false, None));
            }
            return match self.delack_deadline {
                Some(_) => RxAction::Wait,
                None => {
                    let t = now_ns + DELACK_NS;
                    self.delack_deadline = Some(t);
                    RxAction::ArmDelack(t)
                }
            };
        }
        let idx = self.insert_ooo(seq);
        RxAction::Ack(self.make_ack(false, Some(idx)))
    }

    /// The delayed-ACK timer set for `deadline_ns` fired. Returns the ACK to
    /// send, or None if that timer was cancelled by an ACK sent since.
    pub fn on_delack_timer(&mut self, deadline_ns: u64) -> Option<AckPacket> {
        if self.delack_deadline != Some(deadline_ns) {
            return None;
        }
        Some(self.make_ack(true, None))
    }

    fn advance(&mut self, to: u32) {
        let mut new_nxt = to;
        // Absorb out-of-order ranges that are now contiguous (ranges are
        // sorted by start and disjoint).
        while let Some(first) = self.ooo.first() {
            if first.start > new_nxt {
                break;
            }
            new_nxt = new_nxt.max(first.end);
            self.ooo.remove(0);
        }
        self.delivered_bytes += (new_nxt - self.rcv_nxt) as u64 * self.mss as u64;
        self.rcv_nxt = new_nxt;
    }

    /// Adds `seq` to the out-of-order set; returns the index of its range.
    fn insert_ooo(&mut self, seq: u32) -> usize {
        self.touches += 1;
        let touched = self.touches;
        let pos = self.ooo.partition_point(|r| r.end < seq);
        // `pos` is the first range that ends at or after seq.
        if pos < self.ooo.len() && self.ooo[pos].end == seq {
            self.ooo[pos].end = seq + 1;
            self.ooo[pos].touched = touched;
            if pos + 1 < self.ooo.len() && self.ooo[pos + 1].start == seq + 1 {
                self.ooo[pos].end = self.ooo[pos + 1].end;
                self.ooo.remove(pos + 1);
            }
            return pos;
        }
        if pos < self.ooo.len() && self.ooo[pos].start == seq + 1 {
            self.ooo[pos].start = seq;
            self.ooo[pos].touched = touched;
            return pos;
        }
        self.ooo.insert(pos, OooRange { start: seq, end: seq + 1, touched });
        pos
    }

    fn make_ack(&mut self, delayed: bool, first: Option<usize>) -> AckPacket {
        self.unacked = 0;
        self.delack_deadline = None;
        let mut sacks = [(0, 0); MAX_SACK_BLOCKS];
        let mut n = 0;
        if let Some(i) = first {
            sacks[0] = (self.ooo[i].start, self.ooo[i].end);
            n = 1;
        }
        if self.ooo.len() > n {
            // Remaining blocks, most recently changed first (RFC 2018).
            let mut rest: Vec<&OooRange> =
                self.ooo.iter().enumerate().filter(|(j, _)| Some(*j) != first).map(|(_, r)| r).collect();
            rest.sort_by(|a, b| b.touched.cmp(&a.touched));
            for r in rest.into_iter().take(MAX_SACK_BLOCKS - n) {
                sacks[n] = (r.start, r.end);
                n += 1;
            }
        }
        AckPacket { flow: self.flow, cum_ack: self.rcv_nxt, sacks, n_sacks: n as u8, delayed }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(seq: u32) -> DataPacket {
        DataPacket { flow: 0, seq, wire_bytes: 1514, retrans: false, sent_ns: 0, enqueued_ns: 0 }
    }

    fn ack(a: RxAction) -> AckPacket {
        match a {
            RxAction::Ack(a) => a,
            other => panic!("expected an ACK, got {other:?}"),
        }
    }

    #[test]
    fn quickacks_then_every_second_segment_then_delack() {
        let mut r = Receiver::new(0, 1448);
        for s in 0..16 {
            assert_eq!(ack(r.on_data(0, &seg(s))).cum_ack, s + 1);
        }
        assert_eq!(r.on_data(10, &seg(16)), RxAction::ArmDelack(10 + DELACK_NS));
        assert_eq!(ack(r.on_data(20, &seg(17))).cum_ack, 18);
        assert_eq!(r.on_data(30, &seg(18)), RxAction::ArmDelack(30 + DELACK_NS));
        let late = r.on_delack_timer(30 + DELACK_NS).expect("delayed ack");
        assert!(late.delayed);
        assert_eq!(late.cum_ack, 19);
        assert_eq!(r.delivered_bytes(), 19 * 1448);
    }

    #[test]
    fn cancelled_delack_timer_is_ignored() {
        let mut r = Receiver::new(0, 1448);
        r.quickacks_left = 0;
        let RxAction::ArmDelack(t) = r.on_data(0, &seg(0)) else { panic!() };
        ack(r.on_data(1, &seg(1)));
        assert_eq!(r.on_delack_timer(t), None);
    }

    #[test]
    fn holes_produce_sack_blocks_most_recent_first() {
        let mut r = Receiver::new(0, 1448);
        r.quickacks_left = 0;
        assert!(matches!(r.on_data(0, &seg(0)), RxAction::ArmDelack(_)));
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
}
