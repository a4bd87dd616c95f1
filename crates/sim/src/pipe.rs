//! A pipe only delays: items leave in the order they entered, each exactly
//! `delay_ns` after it entered. Because the delay is constant, a FIFO is
//! enough and the event loop needs one pending event per pipe (its head),
//! not one per packet in flight. The delay may change over time (a flow
//! whose path gets longer); an item never leaves before the one ahead of
//! it, so a shorter delay takes effect as the pipe drains. A pipe may add
//! a random extra delay per item ([`Jitter`], a host's processing time);
//! the same no-overtaking rule keeps it in order.

use std::collections::VecDeque;

use crate::jitter::Jitter;

pub struct Pipe<T> {
    delay_ns: u64,
    /// Extra random delay per item ([`Jitter::none`] unless
    /// [`Pipe::with_jitter`]).
    jitter: Jitter,
    items: VecDeque<(u64, T)>,
}

impl<T> Pipe<T> {
    pub fn new(delay_ns: u64) -> Self {
        Self::with_jitter(delay_ns, Jitter::none())
    }

    /// A pipe whose items each get an extra delay drawn from `jitter`.
    pub fn with_jitter(delay_ns: u64, jitter: Jitter) -> Self {
        Self { delay_ns, jitter, items: VecDeque::new() }
    }

    /// Puts `item` in at `now_ns`. Returns its exit time if the pipe was
    /// empty, i.e. when the caller must schedule the head event.
    pub fn push(&mut self, now_ns: u64, item: T) -> Option<u64> {
        self.push_with(now_ns, item, |exit| exit)
    }

    /// As [`Pipe::push`], with the exit time the pipe gives (delay and
    /// jitter) passed through `host` first ([`crate::host`]: a host's
    /// turnaround, a stall); still never before the item ahead.
    pub fn push_with(&mut self, now_ns: u64, item: T, host: impl FnOnce(u64) -> u64) -> Option<u64> {
        let behind = self.items.back().map_or(0, |(t, _)| *t);
        let exit = host(now_ns + self.delay_ns + self.jitter.draw()).max(behind);
        let was_empty = self.items.is_empty();
        self.items.push_back((exit, item));
        was_empty.then_some(exit)
    }

    /// Items entering from now on are delayed by `delay_ns`.
    pub fn set_delay(&mut self, delay_ns: u64) {
        self.delay_ns = delay_ns;
    }

    /// Takes the head if it is due at `now_ns`.
    pub fn pop_due(&mut self, now_ns: u64) -> Option<T> {
        match self.items.front() {
            Some((exit, _)) if *exit <= now_ns => self.items.pop_front().map(|(_, t)| t),
            _ => None,
        }
    }

    /// Exit time of the head, if any.
    pub fn head_exit_ns(&self) -> Option<u64> {
        self.items.front().map(|(t, _)| *t)
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.items.iter().map(|(_, t)| t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_by_constant_and_keeps_order() {
        let mut p = Pipe::new(100);
        assert_eq!(p.push(0, 'a'), Some(100));
        assert_eq!(p.push(5, 'b'), None);
        assert_eq!(p.pop_due(99), None);
        assert_eq!(p.pop_due(100), Some('a'));
        assert_eq!(p.head_exit_ns(), Some(105));
        assert_eq!(p.pop_due(200), Some('b'));
        assert!(p.is_empty());
    }

    #[test]
    fn jitter_delays_within_bounds_and_keeps_order() {
        let mut p = Pipe::with_jitter(100, Jitter::for_flow(50, 1, 0));
        for t in 0..200u64 {
            p.push(t, t);
        }
        let mut last = (0, 0);
        for now in 0..400 {
            while let Some(item) = p.pop_due(now) {
                assert!(now >= item + 100 && now <= item + 150, "item {item} left at {now}");
                assert!(item >= last.1 && now >= last.0, "order kept");
                last = (now, item);
            }
        }
        assert_eq!(last.1, 199);
        assert!(p.is_empty());
    }

    #[test]
    fn a_shorter_delay_never_lets_an_item_overtake() {
        let mut p = Pipe::new(100);
        p.push(0, 'a');
        p.set_delay(10);
        assert_eq!(p.push(20, 'b'), None);
        assert_eq!(p.pop_due(99), None);
        assert_eq!(p.pop_due(100), Some('a'));
        assert_eq!(p.pop_due(100), Some('b'));
        p.set_delay(50);
        assert_eq!(p.push(200, 'c'), Some(250));
    }
}
