//! Host jitter: a random extra delay on a flow's ACK path.
//!
//! Why it exists: with constant propagation delays and no processing time,
//! an ACK-clocked sender (CUBIC, Reno) answers each departure from a busy
//! bottleneck exactly one base RTT later, so its packets reach the queue at
//! a fixed offset (phase) from the link's departures. Whether they find the
//! slot a departure just freed, or arrive just before the next one and are
//! the ones dropped, then depends on the base RTT modulo one packet's
//! serialisation time: a "traffic phase effect" (Floyd and Jacobson,
//! "On Traffic Phase Effects in Packet-Switched Gateways", 1992). In
//! ccarena's BBR-CWS vs CUBIC example (20 Mbit/s, 40 ms, 0.5 BDP) moving
//! both RTTs by 0-0.6 ms swings BBR-CWS's share from 48% to 78%
//! (docs/live.md). Real hosts break the lock: interrupts, softirqs and
//! scheduling add tens to hundreds of microseconds that vary per packet.
//! `jitter` puts that back, as Floyd and Jacobson did with a random
//! processing time of up to one bottleneck service time.
//!
//! Each ACK of the flow is delayed by an extra amount drawn uniformly from
//! [0, max_ns], never overtaking the ACK ahead of it (the pipe keeps FIFO
//! order), so jitter adds delay and variation but no reordering. The
//! simulator's pipes and the live engine's delay line draw from the same
//! per-flow stream ([`Jitter::for_flow`]), independent of the run's other
//! randomness: a scenario without jitter draws nothing and gives the
//! results it gave before.

use crate::rng::SimRng;

/// Added to the run's seed, times (flow index + 1), for a flow's jitter
/// stream: any odd 64-bit constant separates the streams (SplitMix64,
/// behind `SimRng::new`, scrambles neighbouring seeds); this one is
/// SplitMix64's own increment (the golden ratio in 64 bits).
const STREAM_STEP: u64 = 0x9e37_79b9_7f4a_7c15;

/// One flow's jitter source.
pub struct Jitter {
    /// The largest extra delay, ns (0: none, and nothing is drawn).
    max_ns: u64,
    rng: SimRng,
}

impl Jitter {
    /// Flow `flow`'s jitter in a run seeded with `run_seed`.
    pub fn for_flow(max_ns: u64, run_seed: u64, flow: usize) -> Self {
        let seed = run_seed.wrapping_add(STREAM_STEP.wrapping_mul(flow as u64 + 1));
        Jitter { max_ns, rng: SimRng::new(seed) }
    }

    /// No extra delay (a pipe without host jitter).
    pub fn none() -> Self {
        Self::for_flow(0, 0, 0)
    }

    /// The extra delay of the next packet, ns, uniform in [0, max_ns].
    pub fn draw(&mut self) -> u64 {
        if self.max_ns == 0 {
            return 0;
        }
        self.rng.next_u64() % (self.max_ns + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_jitter_is_always_zero() {
        let mut j = Jitter::for_flow(0, 7, 0);
        assert!((0..1000).all(|_| j.draw() == 0));
    }

    #[test]
    fn draws_stay_in_range_and_cover_it() {
        let mut j = Jitter::for_flow(1_000, 1, 0);
        let draws: Vec<u64> = (0..10_000).map(|_| j.draw()).collect();
        assert!(draws.iter().all(|&d| d <= 1_000));
        let mean = draws.iter().sum::<u64>() as f64 / draws.len() as f64;
        // Uniform on [0, 1000]: mean 500, standard error ~2.9 over 10k draws.
        assert!((480.0..520.0).contains(&mean), "mean {mean}");
        assert!(draws.iter().any(|&d| d < 50) && draws.iter().any(|&d| d > 950));
    }

    #[test]
    fn flows_get_independent_repeatable_streams() {
        let take = |seed, flow| {
            let mut j = Jitter::for_flow(1 << 40, seed, flow);
            (0..4).map(|_| j.draw()).collect::<Vec<_>>()
        };
        assert_eq!(take(1, 0), take(1, 0));
        assert_ne!(take(1, 0), take(1, 1));
        assert_ne!(take(1, 0), take(2, 0));
    }
}
