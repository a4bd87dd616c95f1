//! A DCTCP-style step marker (Alizadeh et al., SIGCOMM 2010; RFC 8257's
//! "mark when the instantaneous queue exceeds K"), on a droptail FIFO:
//! admission is droptail's, and a departing ECN-capable packet is marked
//! CE when the queue it leaves from exceeds the threshold (itself included)
//! or, for a time threshold, when it waited longer (fq_codel's
//! `ce_threshold` rule). Not-ECT packets are never dropped for it.
//! Marking at dequeue, rather than at enqueue as many switches do, gives
//! the sender the signal one queueing delay sooner.

use super::droptail::DropTail;
use super::{Arrival, Departure, Qdisc, Verdict};
use crate::config::MarkThreshold;
use crate::rng::SimRng;

pub struct StepMark {
    threshold: MarkThreshold,
}

impl StepMark {
    pub fn new(threshold: MarkThreshold) -> Self {
        Self { threshold }
    }
}

impl Qdisc for StepMark {
    fn on_arrival(&mut self, a: Arrival, rng: &mut SimRng) -> Verdict {
        DropTail.on_arrival(a, rng)
    }

    fn sees_departures(&self) -> bool {
        true
    }

    fn on_departure(&mut self, d: Departure) -> bool {
        d.ect
            && match self.threshold {
                MarkThreshold::Packets(k) => d.queue_packets as u64 + 1 > k,
                MarkThreshold::Bytes(k) => d.queue_bytes + d.wire_bytes as u64 > k,
                MarkThreshold::Ns(k) => d.sojourn_ns > k,
            }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leave(queue_packets: u32, sojourn_ns: u64, ect: bool) -> Departure {
        Departure { now_ns: 0, sojourn_ns, wire_bytes: 1514, queue_bytes: queue_packets as u64 * 1514, queue_packets, ect }
    }

    #[test]
    fn marks_above_the_threshold_only_and_only_ect() {
        let mut m = StepMark::new(MarkThreshold::Packets(20));
        assert!(!m.on_departure(leave(19, 0, true))); // 20 with itself
        assert!(m.on_departure(leave(20, 0, true)));
        assert!(!m.on_departure(leave(50, 0, false)));
        let mut m = StepMark::new(MarkThreshold::Bytes(20 * 1514));
        assert!(!m.on_departure(leave(19, 0, true)));
        assert!(m.on_departure(leave(20, 0, true)));
        let mut m = StepMark::new(MarkThreshold::Ns(1_000_000));
        assert!(!m.on_departure(leave(0, 1_000_000, true)));
        assert!(m.on_departure(leave(0, 1_000_001, true)));
    }
}
