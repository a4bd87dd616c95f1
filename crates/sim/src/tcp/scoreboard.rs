//! The retransmission queue: every segment sent and not yet cumulatively
//! acknowledged, with Linux's per-skb `sacked` bits and `tcp_skb_cb.tx`
//! rate-sampling fields (one entry per MSS segment; Linux's skbs may hold
//! several, which changes nothing the CCs can observe).
//!
//! Indexing is `seq - una`, so lookups and cumulative ACKs are O(1) per
//! segment. Two side structures keep per-ACK work proportional to what the
//! ACK changes rather than to the window:
//! - the time-sorted list (`tcp_sock.tsorted_sent_queue`): a doubly linked
//!   list threaded through the entries, of segments that may still be
//!   delivered and are not SACKed, in transmit order. RACK walks it from
//!   the oldest and stops at the first segment sent after the newest
//!   delivered one;
//! - the SACKed ranges, sorted and merged, so a SACK block that repeats
//!   what earlier ACKs said costs O(holes), not O(block);
//! - `rtx_hint`: no segment below it needs retransmitting (Linux's
//!   `retransmit_skb_hint`).
//!
//! The counters (`packets_out`, `sacked_out`, `lost_out`, `retrans_out`,
//! `lost`) live in the `tcp_sock`; the functions that change a segment's
//! bits update them in the same place, as Linux does.

use cc_native::TcpSock;
use std::collections::VecDeque;

/// `tcp_skb_cb.sacked` bits (and two of ours).
pub mod flag {
    /// TCPCB_SACKED_ACKED: the receiver SACKed it.
    pub const SACKED: u8 = 1 << 0;
    /// TCPCB_SACKED_RETRANS: a retransmission of it is in flight.
    pub const RETRANS: u8 = 1 << 1;
    /// TCPCB_LOST: marked lost (by RACK or a timeout).
    pub const LOST: u8 = 1 << 2;
    /// TCPCB_EVER_RETRANS: retransmitted at least once.
    pub const EVER_RETRANS: u8 = 1 << 3;
    /// `tx.is_app_limited`: sent while the flow was application-limited.
    pub const APP_LIMITED: u8 = 1 << 4;
    /// On the time-sorted list.
    pub const TSORTED: u8 = 1 << 5;
    /// TCPCB_RETRANS (SACKED_RETRANS | EVER_RETRANS).
    pub const ANY_RETRANS: u8 = RETRANS | EVER_RETRANS;
}

const NIL: u32 = u32::MAX;

/// One sent, not yet cumulatively acknowledged segment.
#[derive(Clone, Copy, Debug)]
pub struct Seg {
    /// us, time of its latest transmission (`tcp_skb_timestamp_us`).
    pub sent_us: u64,
    /// `tx.delivered`: `tp->delivered` when it was sent.
    pub tx_delivered: u32,
    /// us, `tx.delivered_mstamp`; 0 once consumed by a SACK.
    pub tx_delivered_mstamp: u64,
    /// us, `tx.first_tx_mstamp`: start of the send window it belongs to.
    pub tx_first_tx_mstamp: u64,
    /// `tx.delivered_ce`: `delivered_ce` when it was sent.
    pub tx_delivered_ce: u32,
    /// Packets in flight once it was sent, itself included (BBRv3's
    /// `tx.in_flight`).
    pub tx_in_flight: u32,
    /// `tp->lost` when it was sent (BBRv3's `tx.lost`).
    pub tx_lost: u32,
    /// Time-sorted list links (segment numbers, NIL at the ends).
    prev: u32,
    next: u32,
    /// [`flag`] bits.
    pub flags: u8,
}

impl Seg {
    pub fn new(sent_us: u64, tx: TxInfo) -> Self {
        let mut s = Self {
            sent_us,
            tx_delivered: 0,
            tx_delivered_mstamp: 0,
            tx_first_tx_mstamp: 0,
            tx_delivered_ce: 0,
            tx_in_flight: 0,
            tx_lost: 0,
            prev: NIL,
            next: NIL,
            flags: 0,
        };
        s.set_tx(sent_us, tx);
        s
    }

    /// Records a (re)transmission at `sent_us` with the rate snapshot `tx`.
    pub fn set_tx(&mut self, sent_us: u64, tx: TxInfo) {
        self.sent_us = sent_us;
        self.tx_delivered = tx.delivered;
        self.tx_delivered_mstamp = tx.delivered_mstamp;
        self.tx_first_tx_mstamp = tx.first_tx_mstamp;
        self.tx_delivered_ce = tx.delivered_ce;
        self.tx_in_flight = tx.in_flight;
        self.tx_lost = tx.lost;
        if tx.app_limited {
            self.flags |= flag::APP_LIMITED;
        } else {
            self.flags &= !flag::APP_LIMITED;
        }
    }

    pub fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
}

/// What `tcp_rate_skb_sent()` stamps on an skb when it is sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TxInfo {
    pub delivered: u32,
    pub delivered_mstamp: u64,
    pub first_tx_mstamp: u64,
    pub app_limited: bool,
    pub delivered_ce: u32,
    /// Packets in flight once the skb was sent, itself included.
    pub in_flight: u32,
    pub lost: u32,
}

#[derive(Debug)]
pub struct Scoreboard {
    segs: VecDeque<Seg>,
    /// Segment number of `segs[0]` (Linux's `snd_una`, in segments).
    una: u32,
    ts_head: u32,
    ts_tail: u32,
    /// Sorted, disjoint, non-adjacent SACKed ranges `[start, end)` above `una`.
    sacked: Vec<(u32, u32)>,
    /// No segment below this needs retransmission.
    pub rtx_hint: u32,
}

impl Default for Scoreboard {
    fn default() -> Self {
        Self {
            segs: VecDeque::new(),
            una: 0,
            ts_head: NIL,
            ts_tail: NIL,
            sacked: Vec::new(),
            rtx_hint: 0,
        }
    }
}

impl Scoreboard {
    /// First unacknowledged segment.
    pub fn una(&self) -> u32 {
        self.una
    }

    /// Next segment to be sent for the first time.
    pub fn nxt(&self) -> u32 {
        self.una + self.segs.len() as u32
    }

    pub fn len(&self) -> u32 {
        self.segs.len() as u32
    }

    pub fn is_empty(&self) -> bool {
        self.segs.is_empty()
    }

    pub fn seg(&self, seq: u32) -> &Seg {
        &self.segs[(seq - self.una) as usize]
    }

    pub fn seg_mut(&mut self, seq: u32) -> &mut Seg {
        &mut self.segs[(seq - self.una) as usize]
    }

    /// Appends the next new segment (number `nxt()`), newest on the
    /// time-sorted list.
    pub fn push(&mut self, seg: Seg) -> u32 {
        let seq = self.nxt();
        self.segs.push_back(seg);
        self.ts_push_tail(seq);
        seq
    }

    /// Removes the head segment (cumulatively acknowledged).
    pub fn pop_front(&mut self) -> Seg {
        let seq = self.una;
        self.ts_unlink(seq);
        let seg = self.segs.pop_front().expect("pop_front on an empty scoreboard");
        self.una += 1;
        self.rtx_hint = self.rtx_hint.max(self.una);
        seg
    }

    /// Drops SACKed ranges that the cumulative ACK has passed.
    pub fn trim_sacked(&mut self) {
        let una = self.una;
        let gone = self.sacked.partition_point(|r| r.1 <= una);
        self.sacked.drain(..gone);
        if let Some(first) = self.sacked.first_mut() {
            first.0 = first.0.max(una);
        }
    }

    /// Records the SACK block `[start, end)` (clipped to the window) and
    /// appends to `newly` the sub-ranges not SACKed before.
    pub fn add_sack_block(&mut self, start: u32, end: u32, newly: &mut Vec<(u32, u32)>) {
        let s = start.max(self.una);
        let e = end.min(self.nxt());
        if s >= e {
            return;
        }
        let first = self.sacked.partition_point(|r| r.1 < s);
        let mut j = first;
        let mut cur = s;
        let (mut lo, mut hi) = (s, e);
        while j < self.sacked.len() && self.sacked[j].0 <= e {
            let (rs, re) = self.sacked[j];
            if rs > cur {
                newly.push((cur, rs));
            }
            cur = cur.max(re);
            lo = lo.min(rs);
            hi = hi.max(re);
            j += 1;
        }
        if cur < e {
            newly.push((cur, e));
        }
        self.sacked.splice(first..j, [(lo, hi)]);
    }

    /// Highest SACKed segment + 1, or `una` if nothing is SACKed.
    pub fn highest_sack_end(&self) -> u32 {
        self.sacked.last().map_or(self.una, |r| r.1)
    }

    /// `tcp_mark_skb_lost()`: marks `seq` lost (a lost retransmission loses
    /// its RETRANS bit); counts it in `tp->lost`. Returns false for a SACKed
    /// segment, which cannot be lost.
    pub fn mark_lost(&mut self, sk: &mut TcpSock, seq: u32) -> bool {
        let seg = self.seg_mut(seq);
        if seg.has(flag::SACKED) {
            return false;
        }
        if seg.has(flag::LOST) {
            if seg.has(flag::RETRANS) {
                // The retransmission was lost too.
                seg.flags &= !flag::RETRANS;
                sk.retrans_out -= 1;
                sk.lost += 1;
            }
        } else {
            seg.flags |= flag::LOST;
            sk.lost_out += 1;
            sk.lost += 1;
        }
        // Lost and not retransmitted: RACK has nothing more to learn from it.
        self.ts_unlink(seq);
        self.rtx_hint = self.rtx_hint.min(seq);
        true
    }

    /// The loss-marking part of `tcp_undo_cwnd_reduction(sk, true)`: no
    /// segment is lost any more (`lost_out` = 0, retransmit hint reset).
    /// Linux keeps lost segments on the time-sorted list; here
    /// [`Self::mark_lost`] took the unretransmitted ones off, so they go
    /// back in transmit order: one sort of them and one merge with the
    /// list, O(n log n), only on an undo.
    pub fn unmark_all_lost(&mut self, sk: &mut TcpSock) {
        let una = self.una;
        let mut back: Vec<(u64, u32)> = Vec::new();
        for (i, s) in self.segs.iter_mut().enumerate() {
            if s.flags & flag::LOST == 0 {
                continue;
            }
            s.flags &= !flag::LOST;
            if s.flags & (flag::TSORTED | flag::SACKED) == 0 {
                back.push((s.sent_us, una + i as u32));
            }
        }
        sk.lost_out = 0;
        self.rtx_hint = una;
        if back.is_empty() {
            return;
        }
        back.sort_unstable();
        // Merge `back` into the list: walk both in (sent time, segment) order.
        let mut cur = self.ts_head;
        let mut prev = NIL;
        let mut k = 0;
        while k < back.len() {
            let take_back = cur == NIL || {
                let c = self.seg(cur);
                back[k] < (c.sent_us, cur)
            };
            if take_back {
                let seq = back[k].1;
                self.ts_link(seq, prev, cur);
                prev = seq;
                k += 1;
            } else {
                prev = cur;
                cur = self.seg(cur).next;
            }
        }
    }

    // ------------------------------------------------ time-sorted list

    /// Oldest segment on the time-sorted list.
    pub fn ts_first(&self) -> Option<u32> {
        (self.ts_head != NIL).then_some(self.ts_head)
    }

    /// The segment sent after `seq` on the time-sorted list.
    pub fn ts_next(&self, seq: u32) -> Option<u32> {
        let n = self.seg(seq).next;
        (n != NIL).then_some(n)
    }

    /// Takes `seq` off the time-sorted list (no-op if it is not on it).
    pub fn ts_unlink(&mut self, seq: u32) {
        let (prev, next, on) = {
            let s = self.seg(seq);
            (s.prev, s.next, s.has(flag::TSORTED))
        };
        if !on {
            return;
        }
        if prev == NIL {
            self.ts_head = next;
        } else {
            self.seg_mut(prev).next = next;
        }
        if next == NIL {
            self.ts_tail = prev;
        } else {
            self.seg_mut(next).prev = prev;
        }
        let s = self.seg_mut(seq);
        s.prev = NIL;
        s.next = NIL;
        s.flags &= !flag::TSORTED;
    }

    /// Puts `seq` at the newest end of the time-sorted list (it was just
    /// (re)transmitted).
    pub fn ts_push_tail(&mut self, seq: u32) {
        self.ts_unlink(seq);
        self.ts_link(seq, self.ts_tail, NIL);
    }

    /// Links `seq` (not on the list) between `prev` and `next`, neighbours
    /// on the list (NIL: the ends).
    fn ts_link(&mut self, seq: u32, prev: u32, next: u32) {
        {
            let s = self.seg_mut(seq);
            s.prev = prev;
            s.next = next;
            s.flags |= flag::TSORTED;
        }
        if prev == NIL {
            self.ts_head = seq;
        } else {
            self.seg_mut(prev).next = seq;
        }
        if next == NIL {
            self.ts_tail = seq;
        } else {
            self.seg_mut(next).prev = seq;
        }
    }

    /// Recounts every bit and compares with the socket's counters and the
    /// side structures; a description of the first mismatch.
    #[cfg(test)]
    pub fn check(&self, sk: &TcpSock) -> Result<(), String> {
        let (mut sacked, mut lost, mut retrans) = (0, 0, 0);
        for s in &self.segs {
            sacked += s.has(flag::SACKED) as u32;
            lost += s.has(flag::LOST) as u32;
            retrans += s.has(flag::RETRANS) as u32;
            if s.has(flag::SACKED) && s.has(flag::LOST) {
                return Err("segment both SACKed and lost".into());
            }
        }
        let got = (self.len(), sacked, lost, retrans);
        let want = (sk.packets_out, sk.sacked_out, sk.lost_out, sk.retrans_out);
        if got != want {
            return Err(format!("(packets, sacked, lost, retrans): recount {got:?} vs sock {want:?}"));
        }
        let in_ranges: u32 = self.sacked.iter().map(|r| r.1 - r.0).sum();
        if in_ranges != sacked {
            return Err(format!("SACK ranges hold {in_ranges}, flags {sacked}"));
        }
        // The list is time-ordered and holds exactly the TSORTED segments.
        let mut n = 0;
        let mut cur = self.ts_head;
        let mut last_t = 0;
        while cur != NIL {
            let s = self.seg(cur);
            if !s.has(flag::TSORTED) || s.sent_us < last_t {
                return Err(format!("time-sorted list broken at {cur}"));
            }
            last_t = s.sent_us;
            n += 1;
            cur = s.next;
        }
        let tagged = self.segs.iter().filter(|s| s.has(flag::TSORTED)).count();
        if n != tagged {
            return Err(format!("list has {n}, tagged {tagged}"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(n: u32) -> (Scoreboard, TcpSock) {
        let mut sb = Scoreboard::default();
        let mut sk = TcpSock::default();
        for i in 0..n {
            sb.push(Seg::new(i as u64, TxInfo::default()));
            sk.packets_out += 1;
        }
        (sb, sk)
    }

    #[test]
    fn sack_blocks_report_only_new_ranges() {
        let (mut sb, _) = board(100);
        let mut newly = Vec::new();
        sb.add_sack_block(10, 20, &mut newly);
        assert_eq!(newly, vec![(10, 20)]);
        newly.clear();
        sb.add_sack_block(30, 40, &mut newly);
        sb.add_sack_block(5, 45, &mut newly);
        assert_eq!(newly, vec![(30, 40), (5, 10), (20, 30), (40, 45)]);
        newly.clear();
        sb.add_sack_block(5, 45, &mut newly);
        assert!(newly.is_empty());
        assert_eq!(sb.highest_sack_end(), 45);
        // Clipped to the window.
        sb.add_sack_block(90, 500, &mut newly);
        assert_eq!(newly, vec![(90, 100)]);
    }

    #[test]
    fn cumulative_ack_trims_ranges_and_hint() {
        let (mut sb, _) = board(50);
        let mut newly = Vec::new();
        sb.add_sack_block(10, 20, &mut newly);
        sb.add_sack_block(30, 40, &mut newly);
        for _ in 0..15 {
            sb.pop_front();
        }
        sb.trim_sacked();
        assert_eq!(sb.una(), 15);
        assert_eq!(sb.rtx_hint, 15);
        assert_eq!(sb.sacked, vec![(15, 20), (30, 40)]);
    }

    #[test]
    fn time_sorted_list_follows_retransmissions() {
        let (mut sb, mut sk) = board(5);
        assert_eq!(sb.ts_first(), Some(0));
        // Segment 1 is lost and leaves the list; its retransmission is the
        // newest transmission.
        sb.mark_lost(&mut sk, 1);
        assert_eq!(sb.ts_next(0), Some(2));
        sb.seg_mut(1).sent_us = 10;
        sb.ts_push_tail(1);
        let order: Vec<u32> = std::iter::successors(sb.ts_first(), |&s| sb.ts_next(s)).collect();
        assert_eq!(order, vec![0, 2, 3, 4, 1]);
        sb.pop_front();
        let order: Vec<u32> = std::iter::successors(sb.ts_first(), |&s| sb.ts_next(s)).collect();
        assert_eq!(order, vec![2, 3, 4, 1]);
        assert_eq!(sk.lost_out, 1);
        assert_eq!(sk.lost, 1);
    }

    #[test]
    fn losing_a_retransmission_clears_its_retrans_bit() {
        let (mut sb, mut sk) = board(3);
        sb.mark_lost(&mut sk, 0);
        sb.seg_mut(0).flags |= flag::RETRANS | flag::EVER_RETRANS;
        sk.retrans_out += 1;
        assert!(sb.mark_lost(&mut sk, 0));
        assert_eq!((sk.lost_out, sk.retrans_out, sk.lost), (1, 0, 2));
        assert!(!sb.seg(0).has(flag::RETRANS));
    }

    #[test]
    fn unmarking_losses_puts_segments_back_in_transmit_order() {
        let (mut sb, mut sk) = board(6);
        // 1, 2 and 4 lost; 2 retransmitted at t = 10 (the newest), then
        // lost again; 3 SACKed.
        for s in [1, 2, 4] {
            sb.mark_lost(&mut sk, s);
        }
        sb.seg_mut(2).flags |= flag::RETRANS | flag::EVER_RETRANS;
        sk.retrans_out += 1;
        sb.seg_mut(2).sent_us = 10;
        sb.ts_push_tail(2);
        sb.mark_lost(&mut sk, 2);
        let mut newly = Vec::new();
        sb.add_sack_block(3, 4, &mut newly);
        sb.seg_mut(3).flags |= flag::SACKED;
        sk.sacked_out += 1;
        sb.ts_unlink(3);
        sb.unmark_all_lost(&mut sk);
        let order: Vec<u32> = std::iter::successors(sb.ts_first(), |&s| sb.ts_next(s)).collect();
        assert_eq!(order, vec![0, 1, 4, 5, 2]);
        assert_eq!(sk.lost_out, 0);
        assert_eq!(sb.rtx_hint, 0);
        sb.check(&sk).unwrap();
    }
}
