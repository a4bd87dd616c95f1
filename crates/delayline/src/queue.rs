//! Per-flow, per-direction FIFO delay queues.
//!
//! Every packet of one (flow, direction) entering at the same moment gets
//! the same delay, and no packet leaves before an earlier one of the same
//! key (as on a wire, and as the simulator's `Pipe`): a packet's due time
//! is `max(entered + delay, due time of the packet ahead)`. So each key's
//! queue is ordered by due time, a FIFO per key is an exact timer queue,
//! and the next packet due overall is the earliest of the heads (few keys,
//! a linear scan). When a flow's delay grows, later packets simply leave
//! later; when it shrinks, they queue up behind the slower ones ahead and
//! the new delay takes effect as those drain.

use std::collections::VecDeque;

use sim::jitter::Jitter;

/// One delayed packet (or GSO frame).
pub struct Delayed {
    pub due_ns: u64,
    /// The queue it left (see [`DelayQueues::classify`]).
    pub key: usize,
    pub bytes: Vec<u8>,
}

/// A flow endpoint: its address and its one-way delay over the run.
#[derive(Clone, Debug)]
pub struct Endpoint {
    pub addr: [u8; 4],
    /// One-way delay from the start, ns.
    pub delay_ns: u64,
    /// (ns after the run's t0, new one-way delay ns), strictly ascending
    /// in time: the flow's RTT schedule, halved.
    pub schedule: Vec<(u64, u64)>,
    /// Largest extra delay of each packet to it (its ACKs), ns: the
    /// scenario's `jitter`, drawn as the simulator draws it.
    pub ack_jitter_ns: u64,
    /// What its ACKs' delay adds for links they do not cross (a topology's
    /// flow without a reverse path: the mirror of its data path's
    /// delays, network.rs), ns.
    pub ack_extra_ns: u64,
}

impl Endpoint {
    pub fn fixed(addr: [u8; 4], delay_ns: u64) -> Self {
        Endpoint { addr, delay_ns, schedule: Vec::new(), ack_jitter_ns: 0, ack_extra_ns: 0 }
    }

    /// The one-way delay in force at `now_ns` when the run started at
    /// `t0_ns` (None: not started yet, the schedule has not begun).
    fn delay_at(&self, t0_ns: Option<u64>, now_ns: u64) -> u64 {
        let passed = match t0_ns {
            Some(t0) if now_ns >= t0 => self.schedule.partition_point(|&(at, _)| at <= now_ns - t0),
            _ => 0,
        };
        passed.checked_sub(1).map_or(self.delay_ns, |last| self.schedule[last].1)
    }
}

/// Delay classes, looked up by the packet's IPv4 source or destination.
pub struct DelayQueues {
    endpoints: Vec<Endpoint>,
    /// Two queues per endpoint: index 2*i for packets from it, 2*i+1 to it.
    queues: Vec<VecDeque<Delayed>>,
    /// Per endpoint: the extra delay of packets to it.
    jitters: Vec<Jitter>,
    /// Bytes held in all queues (what the caller pushed: with a
    /// virtio-net header, frames including it).
    queued_bytes: usize,
    /// The run's time zero (CLOCK_MONOTONIC ns): schedules count from it.
    t0_ns: Option<u64>,
}

impl DelayQueues {
    /// `seed`: the run's seed (endpoint i draws flow i's jitter stream).
    pub fn new(endpoints: Vec<Endpoint>, seed: u64) -> Self {
        let queues = (0..2 * endpoints.len()).map(|_| VecDeque::new()).collect();
        let jitters = endpoints.iter().enumerate().map(|(i, e)| Jitter::for_flow(e.ack_jitter_ns, seed, i)).collect();
        DelayQueues { endpoints, queues, jitters, queued_bytes: 0, t0_ns: None }
    }

    /// The run's time zero: RTT schedules start counting.
    pub fn start(&mut self, t0_ns: u64) {
        self.t0_ns = Some(t0_ns);
    }

    /// Which queue a packet belongs to (by its IPv4 header); None: not
    /// ours (not IPv4, or no configured endpoint), forwarded at once.
    pub fn classify(&self, packet: &[u8]) -> Option<usize> {
        if packet.len() < 20 || packet[0] >> 4 != 4 {
            return None;
        }
        let src = &packet[12..16];
        let dst = &packet[16..20];
        for (i, endpoint) in self.endpoints.iter().enumerate() {
            if src == endpoint.addr {
                return Some(2 * i);
            }
            if dst == endpoint.addr {
                return Some(2 * i + 1);
            }
        }
        None
    }

    /// Queues a packet that enters key `key`'s delay at `entered_ns`;
    /// returns its due time.
    pub fn push(&mut self, key: usize, entered_ns: u64, bytes: Vec<u8>) -> u64 {
        let mut delay = self.endpoints[key / 2].delay_at(self.t0_ns, entered_ns);
        if key % 2 == 1 {
            delay += self.endpoints[key / 2].ack_extra_ns + self.jitters[key / 2].draw();
        }
        let queue = &mut self.queues[key];
        let behind = queue.back().map_or(0, |d| d.due_ns);
        let due_ns = (entered_ns + delay).max(behind);
        self.queued_bytes += bytes.len();
        queue.push_back(Delayed { due_ns, key, bytes });
        due_ns
    }

    /// The earliest due time of any queued packet.
    pub fn next_due(&self) -> Option<u64> {
        self.queues.iter().filter_map(|q| q.front().map(|d| d.due_ns)).min()
    }

    /// Removes and returns the earliest packet if it is due at `now_ns`.
    pub fn pop_due(&mut self, now_ns: u64) -> Option<Delayed> {
        let (key, due) = self
            .queues
            .iter()
            .enumerate()
            .filter_map(|(k, q)| q.front().map(|d| (k, d.due_ns)))
            .min_by_key(|&(_, due)| due)?;
        if due > now_ns {
            return None;
        }
        let packet = self.queues[key].pop_front()?;
        self.queued_bytes -= packet.bytes.len();
        Some(packet)
    }

    pub fn queued_bytes(&self) -> usize {
        self.queued_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ipv4(src: [u8; 4], dst: [u8; 4]) -> Vec<u8> {
        let mut p = vec![0u8; 40];
        p[0] = 0x45;
        p[12..16].copy_from_slice(&src);
        p[16..20].copy_from_slice(&dst);
        p
    }

    const A: [u8; 4] = [10, 201, 1, 10];
    const B: [u8; 4] = [10, 201, 1, 11];
    const RX: [u8; 4] = [10, 201, 2, 2];

    #[test]
    fn classifies_by_source_then_destination() {
        let q = DelayQueues::new(vec![Endpoint::fixed(A, 5_000_000), Endpoint::fixed(B, 25_000_000)], 1);
        assert_eq!(q.classify(&ipv4(A, RX)), Some(0));
        assert_eq!(q.classify(&ipv4(RX, A)), Some(1));
        assert_eq!(q.classify(&ipv4(B, RX)), Some(2));
        assert_eq!(q.classify(&ipv4(RX, B)), Some(3));
        assert_eq!(q.classify(&ipv4(RX, [10, 0, 0, 1])), None);
        let mut v6 = ipv4(A, RX);
        v6[0] = 0x60;
        assert_eq!(q.classify(&v6), None);
        assert_eq!(q.classify(&[0x45; 10]), None);
    }

    #[test]
    fn releases_in_due_order_across_keys_and_never_early() {
        let mut q = DelayQueues::new(vec![Endpoint::fixed(A, 50), Endpoint::fixed(B, 10)], 1);
        // Long-delay packet first, short-delay packet later: the short one
        // is due first.
        assert_eq!(q.push(0, 100, vec![1; 3]), 150);
        assert_eq!(q.push(2, 120, vec![2; 5]), 130);
        assert_eq!(q.push(0, 125, vec![3; 7]), 175);
        assert_eq!(q.queued_bytes(), 15);
        assert_eq!(q.next_due(), Some(130));
        assert!(q.pop_due(129).is_none());
        assert_eq!(q.pop_due(200).unwrap().bytes, vec![2; 5]);
        assert_eq!(q.pop_due(200).unwrap().bytes, vec![1; 3]);
        assert_eq!(q.next_due(), Some(175));
        assert!(q.pop_due(174).is_none());
        assert_eq!(q.pop_due(175).unwrap().bytes, vec![3; 7]);
        assert!(q.pop_due(u64::MAX).is_none());
        assert_eq!(q.queued_bytes(), 0);
        assert_eq!(q.next_due(), None);
    }

    #[test]
    fn a_schedule_counts_from_t0_and_a_shorter_delay_never_overtakes() {
        // One-way 100 ns; at t0+1000 it grows to 300; at t0+2000 it
        // shrinks to 10.
        let endpoint = Endpoint { schedule: vec![(1000, 300), (2000, 10)], ..Endpoint::fixed(A, 100) };
        let mut q = DelayQueues::new(vec![endpoint, Endpoint::fixed(B, 50)], 1);
        // Before t0 the schedule has not begun, whatever the clock says.
        assert_eq!(q.push(0, 5000, vec![0]), 5100);
        assert_eq!(q.pop_due(5100).unwrap().bytes, vec![0]);
        q.start(10_000);
        assert_eq!(q.push(0, 10_999, vec![1]), 11_099, "initial delay up to the first change");
        assert_eq!(q.push(0, 11_000, vec![2]), 11_300, "the change applies from its instant on");
        // Both directions of the flow follow the schedule; other flows not.
        assert_eq!(q.push(1, 11_500, vec![3]), 11_800);
        assert_eq!(q.push(2, 11_500, vec![4]), 11_550);
        // Shorter delay at t0+2000: packets queue behind the slower one
        // ahead (no overtaking) until it has drained.
        assert_eq!(q.push(0, 11_900, vec![5]), 12_200);
        assert_eq!(q.push(0, 12_000, vec![6]), 12_200, "held behind the packet ahead");
        assert_eq!(q.push(0, 12_150, vec![7]), 12_200);
        assert_eq!(q.push(0, 12_300, vec![8]), 12_310, "the new delay once the queue has drained");
        let mut order = Vec::new();
        while let Some(p) = q.pop_due(u64::MAX) {
            order.push((p.bytes[0], p.due_ns));
        }
        assert_eq!(
            order,
            vec![(1, 11_099), (2, 11_300), (4, 11_550), (3, 11_800), (5, 12_200), (6, 12_200), (7, 12_200), (8, 12_310)]
        );
        assert_eq!(q.queued_bytes(), 0);
    }

    #[test]
    fn acks_of_a_flow_whose_acks_cross_no_link_take_the_data_paths_delays_too() {
        let endpoint = Endpoint { ack_extra_ns: 30, ..Endpoint::fixed(A, 100) };
        let mut q = DelayQueues::new(vec![endpoint], 1);
        assert_eq!(q.push(0, 0, vec![0]), 100);
        assert_eq!(q.push(1, 0, vec![0]), 130);
    }

    #[test]
    fn acks_get_the_simulators_jitter_and_data_none() {
        // Endpoint 1 (flow 1) with up to 1000 ns of jitter in a run seeded 7:
        // packets to it draw flow 1's stream, in order; packets from it and
        // both directions of flow 0 keep their plain delay.
        let jittery = Endpoint { ack_jitter_ns: 1000, ..Endpoint::fixed(B, 50) };
        let mut q = DelayQueues::new(vec![Endpoint::fixed(A, 50), jittery], 7);
        let mut expect = Jitter::for_flow(1000, 7, 1);
        let mut behind = 0;
        for t in (0..100_000).step_by(100) {
            let due = q.push(3, t, vec![0]);
            behind = (t + 50 + expect.draw()).max(behind);
            assert_eq!(due, behind);
            assert_eq!(q.push(2, t, vec![0]), t + 50);
            assert_eq!(q.push(1, t, vec![0]), t + 50);
        }
    }
}
