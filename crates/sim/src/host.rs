//! The hosts: what real Linux senders and receivers add to a flow's timing.
//!
//! Why it exists: without it the simulator has no processing time at all.
//! An ACK-clocked sender then answers each departure from a busy
//! bottleneck exactly one base RTT later, so its packets reach the queue
//! at a fixed offset (phase) from the link's departures and the split of
//! a full buffer depends on the RTT to a fraction of a packet's time (a
//! "traffic phase effect", Floyd and Jacobson 1992); a BBR flow's min-RTT
//! samples are the exact floor, so its ProbeRTT stamps drift; and a run
//! of CUBIC has nothing random left in it, so its seeds are one run. Real
//! hosts break all three. This module puts back what they add, as
//! measured on Linux (`python/ccarena/live/hostmodel.py`, docs/host.md):
//!
//! - **start phase**: a flow's first SYN leaves up to `start_spread_ns`
//!   after its configured start (uniform): processes and handshakes do not
//!   start in lock step;
//! - **ACK turnaround**: each ACK reaches its sender's TCP an extra
//!   `ack_delay` after the base RTT (the receiver's time from a segment's
//!   arrival to its ACK, the sender's from the ACK to what it releases, and
//!   the path's per-packet scheduling noise), drawn per ACK, in order (an
//!   ACK never overtakes the one ahead: ACKs queued behind a slow one
//!   leave together, as after a softirq batch);
//! - **timer lateness**: a sender's timer (the pacing clock's release, a
//!   retransmission timer) fires `timer_lateness` after it is due (Linux
//!   arms an hrtimer; softirq scheduling makes it late);
//! - **stalls**: now and then the path (in the live testbed: the delay
//!   line, a process; on a host: its network stack) is descheduled for a
//!   while: a segment on its way to the bottleneck and an ACK on its way
//!   to the sender wait for the end (the senders' timers still run: they
//!   are the hosts'). Stalls start as a Poisson process (`stalls_per_s`)
//!   and last `stall_length`.
//!
//! - **tick**: the sender kernel's jiffies move every 1000 / `hz` ms
//!   (CONFIG_HZ: 250 on the live testbed, 1000 on Fedora). A congestion
//!   control's ms stamps (BBR's ProbeRTT and min-RTT windows, CUBIC's
//!   epoch) and TCP's timers are counted in them, so a wait ends on a
//!   tick's edge, not at its exact length; TCP's transmit timer fires on
//!   the timer wheel's ticks ([`Tick::timer_fires_ns`]). Where in a tick the run starts
//!   is drawn from the seed, once per run: one kernel serves every sender,
//!   as on the live testbed.
//!
//! Each distribution is empirical: (cumulative probability, ns) points,
//! sampled by linear interpolation of the inverse CDF. Every draw comes
//! from the run's seed, in streams of their own (one per flow, one for the
//! stalls, one for the tick's phase), so the seed decides everything and
//! two seeds are two samples.
//! A scenario with `host = "ideal"` has no host model (None) and draws
//! nothing: its runs are what they were before this module.

use std::collections::VecDeque;

use crate::config::HostConfig;
use crate::quantiles::Quantiles;
use crate::rng::SimRng;

/// Added to the run's seed, times (stream + 1), for a stream of host
/// draws: SplitMix64's increment (the golden ratio in 64 bits) rotated,
/// so that these streams differ from [`crate::jitter`]'s for the same flow.
const STREAM_STEP: u64 = 0x9e37_79b9_7f4a_7c15_u64.rotate_left(17);

/// The sender kernel's jiffies as the simulator's µs clock sees them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tick {
    /// One tick, µs (1e6 / HZ; a whole number of ms).
    pub tick_us: u32,
    /// How far into a tick the clock's origin falls, µs (< `tick_us`).
    pub phase_us: u32,
    /// Whether jiffies timers fire on the timer wheel's ticks
    /// ([`Tick::timer_fires_ns`]); false on the ideal host, where a timer
    /// fires exactly its duration after it is armed.
    pub wheel: bool,
}

impl Default for Tick {
    /// HZ=1000, ticks on whole ms, exact timers: the ideal host's clock.
    fn default() -> Self {
        Tick { tick_us: 1000, phase_us: 0, wheel: false }
    }
}

/// Linux's timer wheel (kernel/time/timer.c): each level has 64 buckets
/// (LVL_BITS = 6), each level's buckets 8 times as long as the one's below
/// (LVL_CLK_SHIFT = 3); a timer goes to the first level whose range,
/// LVL_START(n + 1) = 63 << 3n ticks, holds its delay.
const WHEEL_LEVEL_SHIFT: u32 = 3;
const WHEEL_LEVEL_SPAN: u64 = 63;
/// LVL_DEPTH at HZ <= 100 is 8, at higher HZ 9; a delay beyond the last
/// level (days) does not occur in a run.
const WHEEL_LEVELS: u32 = 9;

impl Tick {
    /// The tick of a run seeded `run_seed` (None: an ideal host, HZ=1000
    /// on whole ms, exact timers). Its phase has a stream of its own.
    pub fn of_run(cfg: Option<&HostConfig>, run_seed: u64) -> Self {
        let Some(c) = cfg else { return Tick::default() };
        let tick_us = 1_000_000 / c.hz;
        let mut rng = SimRng::new(run_seed.wrapping_add(STREAM_STEP.wrapping_mul(TICK_STREAM)));
        Tick { tick_us, phase_us: (rng.next_u64() % tick_us as u64) as u32, wheel: true }
    }

    /// When a jiffies timer armed at `now_ns` (the simulator's clock) for
    /// `when_us` (a whole number of ticks, or rounded up to one) fires, ns.
    /// On the wheel (`calc_wheel_index`, `calc_index`): `expires = jiffies
    /// + ticks` goes to the bucket after it at its level's granularity, so
    /// that the timer never fires early, and the bucket runs on the tick
    /// that begins it. A timer of fewer than 63 ticks fires at the start of
    /// tick `expires + 1`: between `ticks` and `ticks + 1` ticks after it
    /// was armed (4-8 ms for a 1-tick timer at HZ=250); longer ones are
    /// rounded up further, to 8, 64, ... ticks. The ideal host: exactly
    /// `when_us` later.
    pub fn timer_fires_ns(&self, now_ns: u64, when_us: u64) -> u64 {
        if !self.wheel {
            return now_ns + when_us * 1000;
        }
        let (tick_us, phase_us) = (self.tick_us as u64, self.phase_us as u64);
        let ticks = when_us.div_ceil(tick_us);
        let expires = (now_ns / 1000 + phase_us) / tick_us + ticks;
        let level = (0..WHEEL_LEVELS - 1)
            .find(|&n| ticks < WHEEL_LEVEL_SPAN << (WHEEL_LEVEL_SHIFT * n))
            .unwrap_or(WHEEL_LEVELS - 1);
        let shift = WHEEL_LEVEL_SHIFT * level;
        let bucket = ((expires >> shift) + 1) << shift;
        (bucket * tick_us - phase_us) * 1000
    }
}

/// The tick's stream: the multiplier of [`STREAM_STEP`] (flows use 2 and
/// up, the stalls 1).
const TICK_STREAM: u64 = u64::MAX;

/// One flow's host draws: its start phase, its ACKs' turnaround, its
/// timers' lateness.
pub struct FlowHost {
    start_spread_ns: u64,
    ack_delay: Option<Quantiles>,
    timer_lateness: Option<Quantiles>,
    rng: SimRng,
}

impl FlowHost {
    /// Flow `flow`'s host in a run seeded `run_seed` (None: an ideal host,
    /// which draws nothing).
    pub fn for_flow(cfg: Option<&HostConfig>, run_seed: u64, flow: usize) -> Self {
        let rng = SimRng::new(run_seed.wrapping_add(STREAM_STEP.wrapping_mul(flow as u64 + 2)));
        match cfg {
            None => FlowHost { start_spread_ns: 0, ack_delay: None, timer_lateness: None, rng },
            Some(c) => FlowHost {
                start_spread_ns: c.start_spread_ns,
                ack_delay: Quantiles::new(&c.ack_delay_ns),
                timer_lateness: Quantiles::new(&c.timer_lateness_ns),
                rng,
            },
        }
    }

    /// How much later than configured the flow starts, ns.
    pub fn start_offset(&mut self) -> u64 {
        if self.start_spread_ns == 0 {
            return 0;
        }
        self.rng.next_u64() % (self.start_spread_ns + 1)
    }

    /// The extra delay of the next ACK, ns.
    pub fn ack_delay(&mut self) -> u64 {
        match &self.ack_delay {
            Some(q) => q.at(self.rng.next_f64()),
            None => 0,
        }
    }

    /// How late the next timer fires, ns.
    pub fn timer_lateness(&mut self) -> u64 {
        match &self.timer_lateness {
            Some(q) => q.at(self.rng.next_f64()),
            None => 0,
        }
    }
}

/// The host's stalls, drawn ahead of time as far as they are asked for
/// and forgotten once passed: memory holds only the stalls between now and
/// the furthest instant a pipe has scheduled (a few per RTT at most).
pub struct Stalls {
    /// Mean gap between stall starts, ns (0: no stalls).
    mean_gap_ns: f64,
    length: Option<Quantiles>,
    rng: SimRng,
    /// Drawn stalls, [start, end), in time order, none overlapping.
    ahead: VecDeque<(u64, u64)>,
    /// Where the next stall after the last drawn one may start from.
    drawn_to_ns: u64,
}

impl Stalls {
    pub fn new(cfg: Option<&HostConfig>, run_seed: u64) -> Self {
        let rng = SimRng::new(run_seed.wrapping_add(STREAM_STEP));
        let (rate, length) = cfg.map_or((0.0, None), |c| (c.stalls_per_s, Quantiles::new(&c.stall_length_ns)));
        let mean_gap_ns = if rate > 0.0 && length.is_some() { 1e9 / rate } else { 0.0 };
        Stalls { mean_gap_ns, length, rng, ahead: VecDeque::new(), drawn_to_ns: 0 }
    }

    /// The instant something due at `t_ns` (asked at `now_ns`, <= `t_ns`)
    /// actually happens: `t_ns`, or the end of the stall it falls into.
    pub fn release(&mut self, now_ns: u64, t_ns: u64) -> u64 {
        if self.mean_gap_ns == 0.0 {
            return t_ns;
        }
        self.forget_before(now_ns);
        self.draw_until(t_ns);
        // Most instants fall before the first stall still ahead.
        if self.ahead.front().is_none_or(|&(s, _)| t_ns < s) {
            return t_ns;
        }
        match self.ahead.iter().find(|&&(s, e)| s <= t_ns && t_ns < e) {
            Some(&(_, end)) => end,
            None => t_ns,
        }
    }

    /// Forgets the stalls that ended at or before `now_ns` (nothing can be
    /// due before now).
    fn forget_before(&mut self, now_ns: u64) {
        while self.ahead.front().is_some_and(|&(_, e)| e <= now_ns) {
            self.ahead.pop_front();
        }
    }

    fn draw_until(&mut self, t_ns: u64) {
        let length = self.length.as_ref().expect("stalls need lengths");
        while self.drawn_to_ns <= t_ns {
            // Exponential gap (Poisson starts); 1 - u is in (0, 1].
            let gap = -(1.0 - self.rng.next_f64()).ln() * self.mean_gap_ns;
            let start = self.drawn_to_ns + gap as u64;
            let end = start + length.at(self.rng.next_f64()).max(1);
            self.ahead.push_back((start, end));
            self.drawn_to_ns = end;
        }
    }

    #[cfg(test)]
    fn held(&self) -> usize {
        self.ahead.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> HostConfig {
        HostConfig {
            start_spread_ns: 1_000_000,
            ack_delay_ns: vec![(0.0, 2_000), (0.5, 3_000), (0.9, 30_000), (1.0, 100_000)],
            timer_lateness_ns: vec![(0.0, 5_000), (1.0, 50_000)],
            stalls_per_s: 10.0,
            stall_length_ns: vec![(0.0, 300_000), (1.0, 1_500_000)],
            hz: 250,
        }
    }

    #[test]
    fn draws_follow_the_distribution_and_the_seed() {
        let c = cfg();
        let mut h = FlowHost::for_flow(Some(&c), 1, 0);
        let mut draws: Vec<u64> = (0..20_000).map(|_| h.ack_delay()).collect();
        draws.sort_unstable();
        let median = draws[draws.len() / 2];
        assert!((2_900..=3_100).contains(&median), "median {median}");
        let p95 = draws[draws.len() * 95 / 100];
        assert!((60_000..=70_000).contains(&p95), "p95 {p95}");
        assert!(draws[0] >= 2_000 && *draws.last().unwrap() <= 100_000);
        // Same seed and flow: the same draws; another flow or seed: others.
        let a: Vec<u64> = (0..10).map(|_| FlowHost::for_flow(Some(&c), 7, 1).ack_delay()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        let mut x = FlowHost::for_flow(Some(&c), 7, 1);
        let mut y = FlowHost::for_flow(Some(&c), 7, 2);
        let mut z = FlowHost::for_flow(Some(&c), 8, 1);
        let (xs, ys, zs): (Vec<u64>, Vec<u64>, Vec<u64>) =
            (0..8).map(|_| (x.ack_delay(), y.ack_delay(), z.ack_delay())).fold((vec![], vec![], vec![]), |mut v, d| {
                v.0.push(d.0);
                v.1.push(d.1);
                v.2.push(d.2);
                v
            });
        assert_ne!(xs, ys);
        assert_ne!(xs, zs);
        let offsets: Vec<u64> = (0..1000).map(|_| x.start_offset()).collect();
        assert!(offsets.iter().all(|&o| o <= 1_000_000) && offsets.iter().any(|&o| o > 900_000));
    }

    #[test]
    fn an_ideal_host_draws_nothing() {
        let mut h = FlowHost::for_flow(None, 1, 0);
        assert_eq!((h.start_offset(), h.ack_delay(), h.timer_lateness()), (0, 0, 0));
        let mut s = Stalls::new(None, 1);
        assert_eq!(s.release(0, 123), 123);
        assert_eq!(s.held(), 0);
    }

    #[test]
    fn the_tick_is_the_hosts_and_its_phase_the_seeds() {
        assert_eq!(Tick::of_run(None, 7), Tick { tick_us: 1000, phase_us: 0, wheel: false });
        let c = cfg(); // hz = 250
        let phases: Vec<u32> = (1..=50).map(|seed| Tick::of_run(Some(&c), seed).phase_us).collect();
        assert!(phases.iter().all(|&p| p < 4000));
        assert!(phases.iter().any(|&p| p < 1000) && phases.iter().any(|&p| p >= 3000), "{phases:?}");
        assert_eq!(Tick::of_run(Some(&c), 9), Tick::of_run(Some(&c), 9));
        assert_eq!(Tick::of_run(Some(&c), 9).tick_us, 4000);
        let ms = HostConfig { hz: 1000, ..c };
        assert_eq!(Tick::of_run(Some(&ms), 9).tick_us, 1000);
    }

    #[test]
    fn timers_fire_on_the_wheels_ticks_never_early() {
        let ideal = Tick::default();
        assert_eq!(ideal.timer_fires_ns(12_345_678, 10_000), 22_345_678, "the ideal host: exactly its duration");
        // HZ=250, the clock's origin 1 ms into a tick: ticks begin at 3, 7, 11, ... ms.
        let t = Tick { tick_us: 4000, phase_us: 1000, wheel: true };
        // Armed 0.5 ms into the tick that began at 3 ms (jiffy 1): 10 ticks
        // go to level 0, expire at jiffy 11 and fire as jiffy 12 begins,
        // at 47 ms: 43.5 ms after arming.
        assert_eq!(t.timer_fires_ns(3_500_000, 40_000), (3_000 + 11 * 4000) * 1000);
        // Armed at the very end of that tick: the same bucket, just over 10 ticks.
        assert_eq!(t.timer_fires_ns(6_999_000, 40_000), 47_000_000);
        // A timer of 0 ticks fires on the next tick.
        assert_eq!(t.timer_fires_ns(6_999_000, 0), 7_000_000);
        for now in (0..20_000).step_by(37) {
            for ticks in [0, 1, 10, 62, 63, 100, 503, 504, 4031] {
                let at = t.timer_fires_ns(now * 1000, ticks * 4000) / 1000;
                assert!(at > now + ticks * 4000, "never early: {now} {ticks} -> {at}");
                assert_eq!((at + 1000) % 4000, 0, "on a tick's start");
                let late_ticks = (at - now) / 4000 - ticks;
                let granularity = if ticks < 63 { 1 } else if ticks < 504 { 8 } else { 64 };
                assert!(late_ticks <= granularity, "{now} {ticks}: {late_ticks} ticks late");
            }
        }
    }

    #[test]
    fn stalls_come_at_their_rate_and_hold_what_falls_into_them() {
        let c = cfg();
        let mut s = Stalls::new(Some(&c), 3);
        let (mut stalled, mut starts) = (0u64, 0u64);
        let mut last_end = 0;
        // Every 10 us for 100 s.
        for t in (0..100_000_000_000u64).step_by(10_000) {
            let r = s.release(t, t);
            assert!(r >= t && r - t <= 1_500_000);
            if r > t {
                stalled += 1;
                if r != last_end {
                    starts += 1;
                    last_end = r;
                }
            }
            assert!(s.held() <= 2, "memory stays bounded");
        }
        // 10 stalls/s for 100 s, each 0.3-1.5 ms (mean 0.9 ms): ~1000
        // stalls, ~0.9% of the time.
        assert!((900..=1100).contains(&starts), "{starts} stalls");
        let share = stalled as f64 / 10_000_000.0;
        assert!((0.0075..0.0105).contains(&share), "{share}");
    }
}
