//! Per-flow, per-direction FIFO delay queues.
//!
//! Every packet of one (flow, direction) gets the same fixed delay, so its
//! queue is already ordered by due time: a FIFO per key is an exact timer
//! queue, and the next packet due overall is the earliest of the heads
//! (few keys, a linear scan). Packets never overtake one another within a
//! key, as on a wire.

use std::collections::VecDeque;

/// One delayed packet.
pub struct Delayed {
    pub due_ns: u64,
    pub bytes: Vec<u8>,
}

/// Delay classes, looked up by the packet's IPv4 source or destination.
pub struct DelayQueues {
    /// (address, one-way delay ns) per flow endpoint.
    endpoints: Vec<([u8; 4], u64)>,
    /// Two queues per endpoint: index 2*i for packets from it, 2*i+1 to it.
    queues: Vec<VecDeque<Delayed>>,
    queued_bytes: usize,
}

impl DelayQueues {
    pub fn new(endpoints: Vec<([u8; 4], u64)>) -> Self {
        let queues = (0..2 * endpoints.len()).map(|_| VecDeque::new()).collect();
        DelayQueues { endpoints, queues, queued_bytes: 0 }
    }

    /// Which queue a packet belongs to and its delay; None: not ours
    /// (not IPv4, or no configured endpoint), forwarded at once.
    pub fn classify(&self, packet: &[u8]) -> Option<(usize, u64)> {
        if packet.len() < 20 || packet[0] >> 4 != 4 {
            return None;
        }
        let src = &packet[12..16];
        let dst = &packet[16..20];
        for (i, (addr, delay)) in self.endpoints.iter().enumerate() {
            if src == addr {
                return Some((2 * i, *delay));
            }
            if dst == addr {
                return Some((2 * i + 1, *delay));
            }
        }
        None
    }

    /// One-way delay of flow `i` (endpoint index).
    pub fn delay_of(&self, i: usize) -> u64 {
        self.endpoints[i].1
    }

    pub fn n_endpoints(&self) -> usize {
        self.endpoints.len()
    }

    pub fn push(&mut self, key: usize, due_ns: u64, bytes: Vec<u8>) {
        self.queued_bytes += bytes.len();
        self.queues[key].push_back(Delayed { due_ns, bytes });
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
        let q = DelayQueues::new(vec![(A, 5_000_000), (B, 25_000_000)]);
        assert_eq!(q.classify(&ipv4(A, RX)), Some((0, 5_000_000)));
        assert_eq!(q.classify(&ipv4(RX, A)), Some((1, 5_000_000)));
        assert_eq!(q.classify(&ipv4(B, RX)), Some((2, 25_000_000)));
        assert_eq!(q.classify(&ipv4(RX, B)), Some((3, 25_000_000)));
        assert_eq!(q.classify(&ipv4(RX, [10, 0, 0, 1])), None);
        let mut v6 = ipv4(A, RX);
        v6[0] = 0x60;
        assert_eq!(q.classify(&v6), None);
        assert_eq!(q.classify(&[0x45; 10]), None);
    }

    #[test]
    fn releases_in_due_order_across_keys_and_never_early() {
        let mut q = DelayQueues::new(vec![(A, 50), (B, 10)]);
        // Long-delay packet first, short-delay packet later: the short one
        // is due first.
        q.push(0, 100 + 50, vec![1; 3]);
        q.push(2, 120 + 10, vec![2; 5]);
        q.push(0, 125 + 50, vec![3; 7]);
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
}
