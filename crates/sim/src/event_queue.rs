//! The simulator's agenda: events ordered by `(time, seq)`, where `seq` is
//! the order of scheduling. Two events at the same nanosecond therefore run
//! in the order they were scheduled, on every machine, every time.
//!
//! A binary min-heap of its own rather than `std`'s `BinaryHeap`: the
//! same algorithm (sift up on a push; on a pop, the hole sifted to the
//! bottom and the last entry sifted up from there), but its `pop` is
//! inlined into the event loop, which `std`'s was not once the loop grew
//! with topologies and workloads (the headline scenario ran ~10% slower
//! than before them, most of it here); and the entries compare as one
//! `u128` key. Keys are unique, so any correct heap gives the same order.

/// A min-heap of events by `(time_ns, seq)`.
pub struct EventQueue<E: Copy> {
    heap: Vec<Entry<E>>,
    next_seq: u64,
    processed: u64,
}

/// One scheduled event: `(time_ns, seq)` as one integer (time in the high
/// half), so an entry's order is one comparison; `seq` is unique, so the
/// event itself is never compared.
#[derive(Clone, Copy)]
struct Entry<E> {
    key: u128,
    event: E,
}

impl<E> Entry<E> {
    #[inline]
    fn time_ns(&self) -> u64 {
        (self.key >> 64) as u64
    }
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self { heap: Vec::with_capacity(64), next_seq: 0, processed: 0 }
    }
}

impl<E: Copy> EventQueue<E> {
    /// Schedules `event` at `time_ns`.
    #[inline]
    pub fn schedule(&mut self, time_ns: u64, event: E) {
        let entry = Entry { key: (time_ns as u128) << 64 | self.next_seq as u128, event };
        self.next_seq += 1;
        self.heap.push(entry);
        self.sift_up(self.heap.len() - 1, entry);
    }

    /// Removes and returns the earliest event if it is due at or before
    /// `until_ns`.
    #[inline(always)]
    pub fn pop_until(&mut self, until_ns: u64) -> Option<(u64, E)> {
        let head = *self.heap.first()?;
        if head.time_ns() > until_ns {
            return None;
        }
        let last = self.heap.pop().expect("not empty");
        if !self.heap.is_empty() {
            // The hole at the root goes down along the earlier child to
            // the bottom; the last entry fills it from there.
            let n = self.heap.len();
            let (mut hole, mut child) = (0, 1);
            while child + 1 < n {
                child += (self.heap[child + 1].key < self.heap[child].key) as usize;
                self.heap[hole] = self.heap[child];
                hole = child;
                child = 2 * hole + 1;
            }
            if child == n - 1 {
                self.heap[hole] = self.heap[child];
                hole = child;
            }
            self.sift_up(hole, last);
        }
        self.processed += 1;
        Some((head.time_ns(), head.event))
    }

    /// Puts `entry` at `hole` or above it, moving later parents down.
    #[inline]
    fn sift_up(&mut self, mut hole: usize, entry: Entry<E>) {
        while hole > 0 {
            let parent = (hole - 1) / 2;
            if self.heap[parent].key <= entry.key {
                break;
            }
            self.heap[hole] = self.heap[parent];
            hole = parent;
        }
        self.heap[hole] = entry;
    }

    /// Events handed out so far.
    #[inline]
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

    #[test]
    fn pops_in_the_order_of_a_sort_by_time_then_scheduling() {
        // Pushes and pops interleaved, many equal times: what comes out is
        // what a stable sort by time of what went in gives.
        let mut rng = crate::rng::SimRng::new(3);
        let mut q = EventQueue::default();
        let (mut pending, mut out, mut want) = (Vec::new(), Vec::new(), Vec::new());
        let mut now = 0;
        for i in 0..5_000u32 {
            let t = now + (rng.next_f64() * 50.0) as u64;
            q.schedule(t, i);
            pending.push((t, i));
            if rng.next_f64() < 0.45 {
                let popped = q.pop_until(u64::MAX).expect("one pending at least");
                now = popped.0;
                out.push(popped);
                pending.sort_by_key(|&(t, _)| t);
                want.push(pending.remove(0));
            }
        }
        while let Some(x) = q.pop_until(u64::MAX) {
            out.push(x);
        }
        pending.sort_by_key(|&(t, _)| t);
        want.extend(pending);
        assert_eq!(out, want);
    }
}
