//! FQ-CoDel (RFC 8290), as Linux's sch_fq_codel.c runs it:
//!
//! ```text
//!   enqueue: packet -> bucket (flow % flows); a bucket not in a list joins
//!            new_flows with deficit = quantum; then, over the packet limit
//!            or the buffer, drop from the head of the bucket with the most
//!            bytes until half its bytes or 64 packets are gone
//!   dequeue: take the head bucket of new_flows, else of old_flows;
//!            deficit <= 0: deficit += quantum, move it to old_flows' tail
//!            else: CoDel dequeue from it (its own CoDel state; the backlog
//!            it compares with one MTU is the whole qdisc's, as in Linux)
//!              nothing left: a new bucket moves to old_flows if any are
//!              waiting there (no starvation), else the bucket leaves
//!              sent: deficit -= size
//! ```
//! New (sparse) flows are thus served ahead of backlogged ones, and each
//! backlogged flow gets a quantum per round.
//!
//! Deviations: the bucket is the flow's index modulo `flows` (Linux hashes
//! the 5-tuple, so two flows may collide there; here they do not below
//! 1024 flows); the scenario's buffer, in wire bytes, stands in for the
//! 32 MB memory limit; `ce_threshold` is not modelled.

use std::collections::VecDeque;

use super::codel::{Codel, CodelParams, DequeueOutcome};
use crate::packet::DataPacket;

/// Linux `drop_batch_size` default: at most this many packets per overflow.
const DROP_BATCH: usize = 64;

struct Bucket {
    queue: VecDeque<DataPacket>,
    bytes: u64,
    /// Bytes this bucket may still send this round (may go negative).
    deficit: i64,
    codel: Codel,
    /// In new_flows or old_flows (Linux: `!list_empty(&flow->flowchain)`).
    listed: bool,
}

pub struct FqCodel {
    params: CodelParams,
    quantum: i64,
    limit_packets: u32,
    buffer_bytes: u64,
    buckets: Vec<Bucket>,
    new_flows: VecDeque<usize>,
    old_flows: VecDeque<usize>,
    backlog_bytes: u64,
    packets: u32,
}

impl FqCodel {
    /// `flows` buckets (at most `n_flows` are ever used).
    pub fn new(params: CodelParams, quantum_bytes: u32, flows: u32, limit_packets: u32, buffer_bytes: u64, n_flows: usize) -> Self {
        assert!(flows > 0 && quantum_bytes > 0, "validated");
        let n = (flows as usize).min(n_flows.max(1));
        let buckets = (0..n)
            .map(|_| Bucket { queue: VecDeque::new(), bytes: 0, deficit: 0, codel: Codel::new(), listed: false })
            .collect();
        Self {
            params,
            quantum: quantum_bytes as i64,
            limit_packets,
            buffer_bytes,
            buckets,
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            backlog_bytes: 0,
            packets: 0,
        }
    }

    pub fn backlog_bytes(&self) -> u64 {
        self.backlog_bytes
    }

    fn bucket_of(&self, flow: u32) -> usize {
        flow as usize % self.buckets.len()
    }

    /// `fq_codel_enqueue()`: queues `pkt`, then drops from the fattest
    /// bucket while over a limit; the drops (possibly `pkt` itself) go to
    /// `dropped`, oldest first.
    pub fn enqueue(&mut self, pkt: DataPacket, dropped: &mut Vec<DataPacket>) {
        let idx = self.bucket_of(pkt.flow);
        let b = &mut self.buckets[idx];
        b.bytes += pkt.wire_bytes as u64;
        b.queue.push_back(pkt);
        if !b.listed {
            b.listed = true;
            b.deficit = self.quantum;
            self.new_flows.push_back(idx);
        }
        self.backlog_bytes += pkt.wire_bytes as u64;
        self.packets += 1;
        if self.packets > self.limit_packets || self.backlog_bytes > self.buffer_bytes {
            self.drop_from_fattest(dropped);
        }
    }

    /// `fq_codel_drop()`: head-drops half the bytes (at most 64 packets) of
    /// the bucket with the most bytes (the lowest index among equals).
    fn drop_from_fattest(&mut self, dropped: &mut Vec<DataPacket>) {
        let mut fattest = 0;
        for (i, b) in self.buckets.iter().enumerate() {
            if b.bytes > self.buckets[fattest].bytes {
                fattest = i;
            }
        }
        let threshold = self.buckets[fattest].bytes / 2;
        let mut len = 0;
        for _ in 0..DROP_BATCH {
            let Some(pkt) = self.pop(fattest) else { break };
            len += pkt.wire_bytes as u64;
            dropped.push(pkt);
            if len >= threshold {
                break;
            }
        }
    }

    fn pop(&mut self, idx: usize) -> Option<DataPacket> {
        let pkt = self.buckets[idx].queue.pop_front()?;
        self.buckets[idx].bytes -= pkt.wire_bytes as u64;
        self.backlog_bytes -= pkt.wire_bytes as u64;
        self.packets -= 1;
        Some(pkt)
    }

    /// `fq_codel_dequeue()`: the next packet to send at `now_ns`; CoDel's
    /// drops are appended to `out.dropped`, `out.mark` says to mark it.
    pub fn dequeue(&mut self, now_ns: u64, out: &mut DequeueOutcome) -> Option<DataPacket> {
        loop {
            let (from_new, idx) = match (self.new_flows.front(), self.old_flows.front()) {
                (Some(&i), _) => (true, i),
                (None, Some(&i)) => (false, i),
                (None, None) => return None,
            };
            if self.buckets[idx].deficit <= 0 {
                self.buckets[idx].deficit += self.quantum;
                self.unlink_head(from_new);
                self.old_flows.push_back(idx);
                continue;
            }
            let params = self.params;
            let mut codel = self.buckets[idx].codel;
            let sent = codel.dequeue(&params, now_ns, || self.pop(idx).map(|p| (p, self.backlog_bytes)), out);
            self.buckets[idx].codel = codel;
            match sent {
                Some(pkt) => {
                    self.buckets[idx].deficit -= pkt.wire_bytes as i64;
                    return Some(pkt);
                }
                None => {
                    self.unlink_head(from_new);
                    if from_new && !self.old_flows.is_empty() {
                        self.old_flows.push_back(idx);
                    } else {
                        self.buckets[idx].listed = false;
                    }
                }
            }
        }
    }

    fn unlink_head(&mut self, from_new: bool) {
        if from_new {
            self.new_flows.pop_front();
        } else {
            self.old_flows.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn fq(limit_packets: u32) -> FqCodel {
        let p = CodelParams { target_ns: 5 * MS, interval_ns: 100 * MS, mtu_bytes: 1514, ecn: false };
        FqCodel::new(p, 1514, 1024, limit_packets, u64::MAX, 4)
    }

    fn pkt(flow: u32, seq: u32, at_ns: u64) -> DataPacket {
        DataPacket { flow, seq, wire_bytes: 1514, enqueued_ns: at_ns, ..Default::default() }
    }

    #[test]
    fn a_sparse_flow_is_served_before_a_backlogged_one() {
        let mut q = fq(10_240);
        let mut dropped = Vec::new();
        for s in 0..20 {
            q.enqueue(pkt(0, s, 0), &mut dropped);
        }
        let mut out = DequeueOutcome::default();
        assert_eq!(q.dequeue(0, &mut out).unwrap().flow, 0);
        // Flow 0 has used its quantum; flow 1 arrives and is new.
        q.enqueue(pkt(1, 0, 0), &mut dropped);
        assert_eq!(q.dequeue(0, &mut out).unwrap().flow, 1);
        assert_eq!(q.dequeue(0, &mut out).unwrap().flow, 0);
        assert!(dropped.is_empty());
    }

    #[test]
    fn backlogged_flows_alternate_one_quantum_each() {
        let mut q = fq(10_240);
        let mut dropped = Vec::new();
        for s in 0..10 {
            q.enqueue(pkt(0, s, 0), &mut dropped);
            q.enqueue(pkt(1, s, 0), &mut dropped);
        }
        let mut out = DequeueOutcome::default();
        let order: Vec<u32> = (0..20).map(|_| q.dequeue(0, &mut out).unwrap().flow).collect();
        let from0 = order.iter().filter(|&&f| f == 0).count();
        assert_eq!(from0, 10);
        // After the first round the two alternate packet by packet.
        assert!(order[2..].windows(2).all(|w| w[0] != w[1]), "{order:?}");
    }

    #[test]
    fn overflow_drops_half_of_the_fattest_flow_from_its_head() {
        let mut q = fq(30);
        let mut dropped = Vec::new();
        for s in 0..24 {
            q.enqueue(pkt(0, s, 0), &mut dropped);
        }
        for s in 0..6 {
            q.enqueue(pkt(1, s, 0), &mut dropped);
        }
        assert!(dropped.is_empty());
        q.enqueue(pkt(1, 6, 0), &mut dropped);
        // Flow 0 held 24 packets: 12 of them, the oldest, are dropped.
        assert_eq!(dropped.len(), 12);
        assert!(dropped.iter().all(|p| p.flow == 0));
        assert_eq!(dropped.iter().map(|p| p.seq).collect::<Vec<_>>(), (0..12).collect::<Vec<_>>());
        assert_eq!(q.backlog_bytes(), 19 * 1514);
    }

    #[test]
    fn codel_runs_per_flow() {
        // Flow 0 keeps a standing queue far above target; flow 1 sends a
        // packet now and then. Only flow 0 loses packets.
        let mut q = fq(10_240);
        let mut dropped = Vec::new();
        let mut out = DequeueOutcome::default();
        let (mut s0, mut s1) = (0, 0);
        let tx_ns = 120_000; // 1514 B at 100 Mbit/s
        let mut t = 0;
        let mut got1 = 0;
        while t < 2_000 * MS {
            // Flow 0 arrives at twice the link rate.
            for _ in 0..2 {
                q.enqueue(pkt(0, s0, t), &mut dropped);
                s0 += 1;
            }
            if s0 % 100 == 0 {
                q.enqueue(pkt(1, s1, t), &mut dropped);
                s1 += 1;
            }
            if let Some(p) = q.dequeue(t, &mut out) {
                got1 += (p.flow == 1) as u32;
            }
            t += tx_ns;
        }
        assert!(out.dropped.iter().all(|p| p.flow == 0));
        assert!(out.dropped.len() > 100, "{} CoDel drops", out.dropped.len());
        assert_eq!(got1 as usize + q.buckets[1].queue.len(), s1 as usize);
    }
}
