//! Droptail: admit while the packet fits in the buffer.

use super::{Arrival, Qdisc, Verdict};
use crate::rng::SimRng;

#[derive(Default)]
pub struct DropTail;

impl Qdisc for DropTail {
    fn on_arrival(&mut self, a: Arrival, _rng: &mut SimRng) -> Verdict {
        if a.queue_bytes + a.wire_bytes as u64 > a.buffer_bytes {
            Verdict::Overflow
        } else {
            Verdict::Enqueue
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drops_only_what_does_not_fit() {
        let mut rng = SimRng::new(1);
        let mut q = DropTail;
        let a = |queue_bytes| Arrival { now_ns: 0, wire_bytes: 1500, queue_bytes, queue_packets: 0, buffer_bytes: 3000, ect: false };
        assert_eq!(q.on_arrival(a(1500), &mut rng), Verdict::Enqueue);
        assert_eq!(q.on_arrival(a(1501), &mut rng), Verdict::Overflow);
    }
}
