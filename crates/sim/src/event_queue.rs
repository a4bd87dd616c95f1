//! The simulator's agenda: events ordered by `(time, seq)`, where `seq` is
//! the order of scheduling. Two events at the same nanosecond therefore run
//! in the order they were scheduled, on every machine, every time.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// A min-heap of events by `(time_ns, seq)`.
pub struct EventQueue<E: Copy> {
    heap: BinaryHeap<Entry<E>>,
    next_seq: u64,
    processed: u64,
}

/// One scheduled event. Ordered by `(time_ns, seq)` alone, reversed (the
/// standard heap is a max-heap): `seq` is unique, so the event itself is
/// never compared, and the comparison stays two integers however many
/// kinds of event there are (it sits on the hot path of every event).
#[derive(Clone, Copy)]
struct Entry<E> {
    time_ns: u64,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        (self.time_ns, self.seq) == (other.time_ns, other.seq)
    }
}

impl<E> Eq for Entry<E> {}

impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<E> Ord for Entry<E> {
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        (other.time_ns, other.seq).cmp(&(self.time_ns, self.seq))
    }
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self { heap: BinaryHeap::with_capacity(64), next_seq: 0, processed: 0 }
    }
}

impl<E: Copy> EventQueue<E> {
    /// Schedules `event` at `time_ns`.
    pub fn schedule(&mut self, time_ns: u64, event: E) {
        self.heap.push(Entry { time_ns, seq: self.next_seq, event });
        self.next_seq += 1;
    }

    /// Removes and returns the earliest event if it is due at or before
    /// `until_ns`.
    pub fn pop_until(&mut self, until_ns: u64) -> Option<(u64, E)> {
        match self.heap.peek() {
            Some(head) if head.time_ns <= until_ns => {
                let Entry { time_ns, event, .. } = self.heap.pop().expect("peeked");
                self.processed += 1;
                Some((time_ns, event))
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
