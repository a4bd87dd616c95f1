//! The simulator's agenda: events ordered by `(time, seq)`, where `seq` is
//! the order of scheduling. Two events at the same nanosecond therefore run
//! in the order they were scheduled, on every machine, every time.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A min-heap of `(time_ns, seq, event)`.
pub struct EventQueue<E: Copy + Ord> {
    heap: BinaryHeap<Reverse<(u64, u64, E)>>,
    next_seq: u64,
    processed: u64,
}

impl<E: Copy + Ord> Default for EventQueue<E> {
    fn default() -> Self {
        Self { heap: BinaryHeap::with_capacity(64), next_seq: 0, processed: 0 }
    }
}

impl<E: Copy + Ord> EventQueue<E> {
    /// Schedules `event` at `time_ns`.
    pub fn schedule(&mut self, time_ns: u64, event: E) {
        self.heap.push(Reverse((time_ns, self.next_seq, event)));
        self.next_seq += 1;
    }

    /// Removes and returns the earliest event if it is due at or before
    /// `until_ns`.
    pub fn pop_until(&mut self, until_ns: u64) -> Option<(u64, E)> {
        match self.heap.peek() {
            Some(Reverse((t, _, _))) if *t <= until_ns => {
                let Reverse((t, _, e)) = self.heap.pop().expect("peeked");
                self.processed += 1;
                Some((t, e))
            }
            _ => None,
        }
    }

    /// Events handed out so far.
    pub fn processed(&self) -> u64 {
        self.processed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_time_events_keep_scheduling_order() {
        let mut q = EventQueue::default();
        q.schedule(5, 3u8);
        q.schedule(5, 1u8);
        q.schedule(2, 9u8);
        q.schedule(5, 2u8);
        let order: Vec<_> = std::iter::from_fn(|| q.pop_until(10)).collect();
        assert_eq!(order, vec![(2, 9), (5, 3), (5, 1), (5, 2)]);
        assert_eq!(q.processed(), 4);
    }

    #[test]
    fn pop_until_respects_horizon() {
        let mut q = EventQueue::default();
        q.schedule(11, 0u8);
        assert_eq!(q.pop_until(10), None);
        assert_eq!(q.pop_until(11), Some((11, 0)));
    }
}
