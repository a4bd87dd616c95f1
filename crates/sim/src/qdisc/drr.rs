//! Per-flow fair queueing: one FIFO per flow, served by Deficit Round Robin
//! (Shreedhar & Varghese, SIGCOMM 1995), in the form Linux's sch_drr uses
//! for a link that sends one packet at a time:
//!
//! ```text
//!   enqueue: a flow whose queue was empty joins the tail of the active
//!            list with deficit = quantum
//!   dequeue: f = head of the active list
//!            if size(head packet of f) <= deficit(f):
//!                deficit(f) -= size; send it; if f is now empty, f leaves
//!                the list (its unused deficit is forgotten)
//!            else: deficit(f) += quantum; move f to the tail; repeat
//! ```
//! Every backlogged flow thus gets `quantum` bytes per round whatever its
//! packet sizes, and an idle flow cannot save up credit.
//!
//! The buffer is shared. When an arrival does not fit, room is made by
//! dropping the oldest packet of the flow with the most bytes waiting
//! (longest-queue drop with head drop, as fq_codel treats its fattest
//! flow), so a greedy flow cannot take the buffer from the others.
//! Longest-queue drop is a choice of the caller ([`crate::bottleneck`]),
//! which frees room one packet at a time with [`Drr::push_out`].
//!
//! Cost per packet does not grow with the number of flows beyond
//! O(log flows): the longest queue is kept in a tournament tree
//! ([`LongestQueue`]), and a flow emptied by a push-out leaves the active
//! list lazily (its entry goes stale and is skipped when it reaches the
//! head) instead of being searched for.

use std::collections::VecDeque;

use super::longest::LongestQueue;
use crate::packet::DataPacket;

pub struct Drr {
    /// Wire bytes a flow may send per round.
    quantum_bytes: u64,
    /// Waiting packets per flow (the flow index is the queue's key).
    queues: Vec<VecDeque<DataPacket>>,
    /// Wire bytes waiting per flow, and which flow has the most.
    bytes: LongestQueue,
    /// Wire bytes each active flow may still send this round.
    deficit_bytes: Vec<u64>,
    /// Flows with packets waiting, in service order (the head is served
    /// next), as (flow, the flow's `joins` when it joined); an entry whose
    /// count is not the flow's current one is stale (the flow left since).
    active: VecDeque<(u32, u32)>,
    /// Per flow, times it has joined the active list (wrapping).
    joins: Vec<u32>,
}

/// What [`Drr::push_out`] dropped to make room.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Victim {
    /// The arriving packet's flow is the longest but has nothing queued:
    /// the arrival itself is dropped.
    Arrival,
    /// The oldest waiting packet of the longest flow was dropped.
    Queued(DataPacket),
}

impl Drr {
    pub fn new(n_flows: usize, quantum_bytes: u32) -> Self {
        assert!(quantum_bytes > 0, "validated: quantum > 0");
        Self {
            quantum_bytes: quantum_bytes as u64,
            queues: (0..n_flows).map(|_| VecDeque::new()).collect(),
            bytes: LongestQueue::new(n_flows),
            deficit_bytes: vec![0; n_flows],
            active: VecDeque::with_capacity(n_flows),
            joins: vec![0; n_flows],
        }
    }

    pub fn is_empty(&self) -> bool {
        self.queues.iter().all(VecDeque::is_empty)
    }

    /// Wire bytes of `flow` waiting.
    pub fn flow_bytes(&self, flow: usize) -> u64 {
        self.bytes.bytes(flow)
    }

    /// Packets of `flow` waiting.
    pub fn flow_len(&self, flow: usize) -> usize {
        self.queues[flow].len()
    }

    pub fn enqueue(&mut self, pkt: DataPacket) {
        let f = pkt.flow as usize;
        if self.queues[f].is_empty() {
            self.deficit_bytes[f] = self.quantum_bytes;
            self.joins[f] = self.joins[f].wrapping_add(1);
            self.active.push_back((pkt.flow, self.joins[f]));
        }
        self.bytes.set(f, self.bytes.bytes(f) + pkt.wire_bytes as u64);
        self.queues[f].push_back(pkt);
    }

    /// The next packet to send, in DRR order.
    pub fn dequeue(&mut self) -> Option<DataPacket> {
        loop {
            let (flow, joined) = *self.active.front()?;
            let f = flow as usize;
            if joined != self.joins[f] || self.queues[f].is_empty() {
                self.active.pop_front(); // stale: the flow left since
                continue;
            }
            let size = self.queues[f].front().expect("an active flow has packets").wire_bytes as u64;
            if size <= self.deficit_bytes[f] {
                self.deficit_bytes[f] -= size;
                let pkt = self.pop_head(f);
                if self.queues[f].is_empty() {
                    self.active.pop_front();
                }
                return Some(pkt);
            }
            self.deficit_bytes[f] += self.quantum_bytes;
            self.active.rotate_left(1);
        }
    }

    /// Drops one packet to make room for `arriving` (not yet queued): the
    /// oldest packet of the flow with the most bytes, counting the arrival
    /// in its own flow. Ties go against the arriving packet's flow, then
    /// against the lowest flow index (deterministic).
    pub fn push_out(&mut self, arriving: &DataPacket) -> Victim {
        let own = arriving.flow as usize;
        let own_bytes = self.bytes.bytes(own) + arriving.wire_bytes as u64;
        let longest = match self.bytes.longest() {
            // Strictly more than the arrival's flow with the arrival; the
            // lowest index among equals (the tree's tie rule).
            Some((f, most)) if most > own_bytes => f,
            _ => own,
        };
        if self.queues[longest].is_empty() {
            return Victim::Arrival;
        }
        // If this empties the flow, its active entry goes stale.
        Victim::Queued(self.pop_head(longest))
    }

    /// Removes the head of `f`'s queue. If that empties it, the flow has
    /// left the active list: its entry there is stale from now on (the
    /// caller pops it if it is the head).
    fn pop_head(&mut self, f: usize) -> DataPacket {
        let pkt = self.queues[f].pop_front().expect("the flow has packets");
        self.bytes.set(f, self.bytes.bytes(f) - pkt.wire_bytes as u64);
        pkt
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(flow: u32, seq: u32, wire_bytes: u32) -> DataPacket {
        DataPacket { flow, seq, wire_bytes, retrans: false, ..Default::default() }
    }

    #[test]
    fn backlogged_flows_get_equal_bytes_whatever_their_packet_sizes() {
        // Flow 0 sends full packets, flow 1 packets of a third of that
        // (e.g. 500-byte datagrams): per-packet round robin would give
        // flow 0 three quarters of the link; DRR gives each half the bytes.
        let mut q = Drr::new(2, 1514);
        for s in 0..1000 {
            q.enqueue(pkt(0, s, 1514));
        }
        for s in 0..3000 {
            q.enqueue(pkt(1, s, 514));
        }
        let mut sent = [0u64; 2];
        // Serve 600 kB while both are still backlogged.
        while sent.iter().sum::<u64>() < 600_000 {
            let p = q.dequeue().unwrap();
            sent[p.flow as usize] += p.wire_bytes as u64;
        }
        // DRR's bound: the difference in service is at most one quantum plus
        // one maximum packet (Shreedhar & Varghese, Lemma 2).
        let diff = sent[0].abs_diff(sent[1]);
        assert!(diff <= 1514 + 1514, "sent {sent:?}");
    }

    #[test]
    fn packets_of_one_flow_stay_in_order_and_flows_alternate() {
        let mut q = Drr::new(3, 1514);
        for s in 0..3 {
            q.enqueue(pkt(0, s, 1514));
            q.enqueue(pkt(2, s, 1514));
        }
        let order: Vec<(u32, u32)> = std::iter::from_fn(|| q.dequeue()).map(|p| (p.flow, p.seq)).collect();
        assert_eq!(order, vec![(0, 0), (2, 0), (0, 1), (2, 1), (0, 2), (2, 2)]);
        assert!(q.is_empty());
    }

    #[test]
    fn an_idle_flow_does_not_save_up_credit() {
        // Flow 1 sends one 500-byte packet and goes idle with 1014 bytes of
        // its round unused. It returns with 1000-byte packets next to flow
        // 0's full ones: starting over with one quantum it sends one packet
        // (1000 <= 1514 < 2000) before flow 0's turn; had it kept the 1014
        // bytes (2528 in all) it would send two.
        let mut q = Drr::new(2, 1514);
        q.enqueue(pkt(1, 0, 500));
        assert_eq!(q.dequeue().map(|p| (p.flow, p.seq)), Some((1, 0)));
        assert!(q.is_empty() && q.dequeue().is_none());
        for s in 0..4 {
            q.enqueue(pkt(0, s, 1514));
            q.enqueue(pkt(1, 1 + s, 1000));
        }
        let flows: Vec<u32> = (0..3).map(|_| q.dequeue().unwrap().flow).collect();
        assert_eq!(flows, vec![0, 1, 0]);
    }

    #[test]
    fn a_quantum_below_the_packet_size_takes_several_rounds() {
        // Quantum 500 B: a 1500-byte packet needs three rounds of credit, so
        // a flow of 500-byte packets sends three of them per such packet.
        let mut q = Drr::new(2, 500);
        for s in 0..4 {
            q.enqueue(pkt(0, s, 1500));
        }
        for s in 0..12 {
            q.enqueue(pkt(1, s, 500));
        }
        let mut sent = [0u64; 2];
        for _ in 0..8 {
            let p = q.dequeue().unwrap();
            sent[p.flow as usize] += p.wire_bytes as u64;
        }
        // 8 packets: two of flow 0 (3000 B) and six of flow 1 (3000 B).
        assert_eq!(sent, [3000, 3000]);
    }

    #[test]
    fn push_out_drops_the_oldest_packet_of_the_longest_flow() {
        let mut q = Drr::new(3, 1514);
        for s in 0..5 {
            q.enqueue(pkt(0, s, 1514));
        }
        q.enqueue(pkt(1, 0, 1514));
        // An arrival of flow 1 (2 packets with it) finds flow 0 longest.
        assert_eq!(q.push_out(&pkt(1, 1, 1514)), Victim::Queued(pkt(0, 0, 1514)));
        assert_eq!((q.flow_len(0), q.flow_bytes(0)), (4, 4 * 1514));
        // Flow 0's arrival counts itself: 5 packets, still the longest.
        assert_eq!(q.push_out(&pkt(0, 5, 1514)), Victim::Queued(pkt(0, 1, 1514)));
        // An empty flow's arrival: flow 0 (3 packets) is the longest.
        assert_eq!(q.push_out(&pkt(2, 0, 1514)), Victim::Queued(pkt(0, 2, 1514)));
        // A tie: flow 1 with its arrival has 2 packets, as has flow 0; the
        // arriving flow loses.
        assert_eq!(q.push_out(&pkt(1, 1, 1514)), Victim::Queued(pkt(1, 0, 1514)));
        // Flow 1 is now empty and has left the active list: flow 0 alone is served.
        assert_eq!(q.flow_len(1), 0);
        let order: Vec<u32> = std::iter::from_fn(|| q.dequeue()).map(|p| p.seq).collect();
        assert_eq!(order, vec![3, 4]);
    }

    #[test]
    fn push_out_drops_the_arrival_when_its_empty_flow_is_longest() {
        // A full-sized arrival of an empty flow against small queued packets.
        let mut q = Drr::new(2, 1514);
        q.enqueue(pkt(0, 0, 100));
        assert_eq!(q.push_out(&pkt(1, 0, 1514)), Victim::Arrival);
        assert_eq!(q.flow_len(0), 1);
        // Nothing queued at all: the arrival is the only candidate.
        let mut empty = Drr::new(2, 1514);
        assert_eq!(empty.push_out(&pkt(0, 0, 1514)), Victim::Arrival);
    }
}
