//! PIE (RFC 8033), as Linux's sch_pie.c / pie.c runs it with its defaults
//! (no `dq_rate_estimator`: the queueing delay is the departing packet's
//! timestamped sojourn):
//!
//! ```text
//!   every tupdate:  p += alpha * (qdelay - target) + beta * (qdelay - qdelay_old)
//!                   (alpha, beta scaled down by 2, then by 4 per decade
//!                    while p < 10%, 1%, 0.1%, ...; steps of at most 2%
//!                    once p >= 10%; +2% while qdelay > 250 ms;
//!                    p *= 63/64 when qdelay and qdelay_old are both 0)
//!   on arrival:     over the packet limit: drop; within the burst
//!                   allowance (150 ms after an idle start), below half the
//!                   target with p < 20%, or under 2 MTU queued: enqueue;
//!                   else drop with p (de-randomised: the accumulated
//!                   probability must reach 0.85 first and forces a drop at
//!                   8.5) - or mark, with ecn, while p <= 10%
//!   on departure:   qdelay = its sojourn (0 if the queue is now empty);
//!                   the burst allowance runs down
//! ```
//! The probability is Linux's fixed point (`MAX_PROB` = 2^56 - 1) and the
//! delays are psched ticks (64 ns), so the arithmetic is the kernel's. The
//! timer runs at every multiple of `tupdate` from the queue's creation;
//! since the queue only changes at arrivals and departures, the ticks due
//! are run when the next one happens, with the same inputs the kernel's
//! timer would have seen.
//!
//! Deviations: `bytemode` and `dq_rate_estimator` are not modelled (both
//! off by default).

use super::{Arrival, Departure, Qdisc, Verdict};
use crate::rng::SimRng;

/// Linux `MAX_PROB`: probability 1 in the fixed point.
pub const MAX_PROB: u64 = u64::MAX >> 8;
/// psched ticks per second (`PSCHED_TICKS_PER_SEC`, 64-ns ticks).
const TICKS_PER_SEC: u64 = 1_000_000_000 >> 6;
/// Delay above which p grows by 2% per update regardless (250 ms, ticks).
const HIGH_DELAY_TICKS: u64 = 250_000_000 >> 6;

fn ticks(ns: u64) -> u64 {
    ns >> 6
}

/// PIE's parameters (`struct pie_params`), Linux's defaults in
/// [`PieParams::linux_defaults`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PieParams {
    /// Target queueing delay, ns (15 ms).
    pub target_ns: u64,
    /// Probability update interval, ns (15 ms).
    pub tupdate_ns: u64,
    /// Gains in 1/16 (Linux's integers: alpha 2 = 0.125, beta 20 = 1.25).
    pub alpha_16ths: u32,
    pub beta_16ths: u32,
    /// Burst allowance after an idle start, ns (150 ms).
    pub max_burst_ns: u64,
    /// Packets the queue holds at most (1000).
    pub limit_packets: u32,
    /// One full frame, bytes (the "2 MTU" floor): `psched_mtu`, 1514.
    pub mtu_bytes: u64,
    pub ecn: bool,
}

pub struct Pie {
    p: PieParams,
    /// Drop probability, fixed point of [`MAX_PROB`].
    prob: u64,
    /// Accumulated probability since the last drop (de-randomisation).
    accu_prob: u64,
    /// Queueing delay now and at the previous update, ticks.
    qdelay: u64,
    qdelay_old: u64,
    /// Burst allowance left, ticks.
    burst_time: u64,
    /// Time of the previous departure, ticks (None: none yet).
    dq_tstamp: Option<u64>,
    /// Next probability update, ns.
    next_update_ns: u64,
}

impl PieParams {
    pub fn linux_defaults(mtu_bytes: u64) -> Self {
        Self {
            target_ns: 15_000_000,
            tupdate_ns: 15_000_000,
            alpha_16ths: 2,
            beta_16ths: 20,
            max_burst_ns: 150_000_000,
            limit_packets: 1000,
            mtu_bytes,
            ecn: false,
        }
    }
}

impl Pie {
    pub fn new(p: PieParams) -> Self {
        Self {
            p,
            prob: 0,
            accu_prob: 0,
            qdelay: 0,
            qdelay_old: 0,
            burst_time: ticks(p.max_burst_ns),
            dq_tstamp: None,
            next_update_ns: p.tupdate_ns,
        }
    }

    /// The drop probability, 0..1.
    pub fn probability(&self) -> f64 {
        self.prob as f64 / MAX_PROB as f64
    }

    /// Runs the updates due by `now_ns`, with `backlog` bytes queued.
    fn catch_up(&mut self, now_ns: u64, backlog: u64) {
        while self.next_update_ns <= now_ns {
            self.calculate_probability(backlog);
            self.next_update_ns += self.p.tupdate_ns;
        }
    }

    /// `pie_vars_init()` (called again when the queue has been quiet).
    fn restart_cycle(&mut self) {
        self.dq_tstamp = None;
        self.accu_prob = 0;
        self.burst_time = ticks(self.p.max_burst_ns);
    }

    /// `pie_calculate_probability()`.
    fn calculate_probability(&mut self, backlog: u64) {
        let target = ticks(self.p.target_ns) as i64;
        let (qdelay, qdelay_old) = (self.qdelay, self.qdelay_old);
        let mut update_prob = !(qdelay == 0 && backlog != 0);
        let mut alpha = (self.p.alpha_16ths as u64 * (MAX_PROB / TICKS_PER_SEC)) >> 4;
        let mut beta = (self.p.beta_16ths as u64 * (MAX_PROB / TICKS_PER_SEC)) >> 4;
        if self.prob < MAX_PROB / 10 {
            alpha >>= 1;
            beta >>= 1;
            let mut power = 100u64;
            while self.prob < MAX_PROB / power && power <= 1_000_000 {
                alpha >>= 2;
                beta >>= 2;
                power *= 10;
            }
        }
        let mut delta: i64 = (alpha as i64).wrapping_mul(qdelay as i64 - target);
        delta = delta.wrapping_add((beta as i64).wrapping_mul(qdelay as i64 - qdelay_old as i64));
        let oldprob = self.prob;
        if delta > (MAX_PROB / 50) as i64 && self.prob >= MAX_PROB / 10 {
            delta = ((MAX_PROB / 100) * 2) as i64;
        }
        if qdelay > HIGH_DELAY_TICKS {
            delta += (MAX_PROB / 50) as i64;
        }
        self.prob = self.prob.wrapping_add(delta as u64);
        if delta > 0 {
            if self.prob < oldprob {
                self.prob = MAX_PROB;
                update_prob = false;
            }
        } else if self.prob > oldprob {
            self.prob = 0;
        }
        // Linux caps nothing else: prob may exceed MAX_PROB by < 2% steps
        // only through the overflow guard above, as in the kernel.
        if qdelay == 0 && qdelay_old == 0 && update_prob {
            self.prob -= self.prob / 64;
        }
        self.qdelay = qdelay;
        if (qdelay as i64) < target / 2 && (qdelay_old as i64) < target / 2 && self.prob == 0 {
            self.restart_cycle();
        }
        self.qdelay_old = qdelay;
    }

    /// `pie_drop_early()`.
    fn drop_early(&mut self, backlog: u64, rng: &mut SimRng) -> bool {
        if self.burst_time > 0 {
            return false;
        }
        if self.qdelay < ticks(self.p.target_ns) / 2 && self.prob < MAX_PROB / 5 {
            return false;
        }
        if backlog < 2 * self.p.mtu_bytes {
            return false;
        }
        let local_prob = self.prob;
        if local_prob == 0 {
            self.accu_prob = 0;
        } else {
            self.accu_prob = self.accu_prob.saturating_add(local_prob);
        }
        if self.accu_prob < (MAX_PROB / 100) * 85 {
            return false;
        }
        if self.accu_prob >= (MAX_PROB / 2) * 17 {
            return true;
        }
        if (rng.next_u64() >> 8) < local_prob {
            self.accu_prob = 0;
            return true;
        }
        false
    }
}

impl Qdisc for Pie {
    fn on_arrival(&mut self, a: Arrival, rng: &mut SimRng) -> Verdict {
        self.catch_up(a.now_ns, a.queue_bytes);
        let verdict = if a.queue_packets >= self.p.limit_packets || a.queue_bytes + a.wire_bytes as u64 > a.buffer_bytes {
            Verdict::Overflow
        } else if !self.drop_early(a.queue_bytes, rng) {
            Verdict::Enqueue
        } else if self.p.ecn && self.prob <= MAX_PROB / 10 && a.ect {
            Verdict::Mark
        } else {
            Verdict::EarlyDrop
        };
        if matches!(verdict, Verdict::Overflow | Verdict::EarlyDrop) {
            self.accu_prob = 0;
        }
        verdict
    }

    fn sees_departures(&self) -> bool {
        true
    }

    fn on_departure(&mut self, d: Departure) -> bool {
        self.catch_up(d.now_ns, d.queue_bytes + d.wire_bytes as u64);
        let now = ticks(d.now_ns);
        self.qdelay = if d.queue_bytes == 0 { 0 } else { ticks(d.sojourn_ns) };
        let dtime = self.dq_tstamp.map_or(0, |t| now - t);
        self.dq_tstamp = Some(now);
        if dtime > 0 {
            self.burst_time = self.burst_time.saturating_sub(dtime);
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn pie() -> Pie {
        Pie::new(PieParams::linux_defaults(1514))
    }

    /// Packets arrive every `gap_ns` and leave after `sojourn_ns`; returns
    /// the fraction dropped in the last half.
    fn run(q: &mut Pie, sojourn_ns: u64, n: u64, rng: &mut SimRng) -> f64 {
        let gap = 100_000;
        let mut dropped = 0;
        for i in 0..n {
            let t = i * gap;
            let a = Arrival { now_ns: t, wire_bytes: 1514, queue_bytes: 100 * 1514, queue_packets: 100, buffer_bytes: u64::MAX, ect: false };
            let v = q.on_arrival(a, rng);
            if v == Verdict::Enqueue {
                q.on_departure(Departure {
                    now_ns: t,
                    sojourn_ns,
                    wire_bytes: 1514,
                    queue_bytes: 100 * 1514,
                    queue_packets: 100,
                    ect: false,
                });
            } else if i >= n / 2 {
                dropped += 1;
            }
        }
        dropped as f64 / (n / 2) as f64
    }

    #[test]
    fn no_drops_during_the_burst_allowance_or_at_target() {
        let mut rng = SimRng::new(1);
        let mut q = pie();
        // 100 ms of a 40-ms queue: still within the 150-ms allowance.
        assert_eq!(run(&mut q, 40 * MS, 1000, &mut rng), 0.0);
        // At the target the probability does not grow.
        let mut q = pie();
        run(&mut q, 15 * MS, 100_000, &mut rng);
        assert!(q.probability() < 0.001, "p = {}", q.probability());
    }

    #[test]
    fn probability_grows_while_delay_is_above_target_and_decays_when_idle() {
        let mut rng = SimRng::new(2);
        let mut q = pie();
        let rate = run(&mut q, 60 * MS, 100_000, &mut rng); // 10 s
        assert!(q.probability() > 0.05, "p = {}", q.probability());
        assert!(rate > 0.02, "drop rate {rate}");
        // Empty queue: qdelay 0 for many updates, p decays by 1/64 each.
        let p0 = q.probability();
        q.on_departure(Departure { now_ns: 10_000 * MS, sojourn_ns: 0, wire_bytes: 1514, queue_bytes: 0, queue_packets: 0, ect: false });
        q.catch_up(12_000 * MS, 0);
        assert!(q.probability() < p0 * 0.5, "{} -> {}", p0, q.probability());
    }

    #[test]
    fn the_update_is_the_kernels_fixed_point_law() {
        // One update from p = 0 with qdelay 30 ms, qdelay_old 0: alpha and
        // beta are scaled down by 2 and then by 4 five times (p < 1e-6),
        // i.e. by 2048 (RFC 8033's auto-tuning).
        let mut q = pie();
        q.qdelay = ticks(30 * MS);
        q.calculate_probability(100_000);
        let alpha = ((2 * (MAX_PROB / TICKS_PER_SEC)) >> 4) >> 1 >> 10;
        let beta = ((20 * (MAX_PROB / TICKS_PER_SEC)) >> 4) >> 1 >> 10;
        let want = alpha * ticks(15 * MS) + beta * ticks(30 * MS);
        assert_eq!(q.prob, want);
    }

    #[test]
    fn ecn_marks_below_ten_percent_and_drops_above() {
        let mut rng = SimRng::new(3);
        let mut q = Pie::new(PieParams { ecn: true, ..PieParams::linux_defaults(1514) });
        q.burst_time = 0;
        q.qdelay = ticks(30 * MS);
        q.prob = MAX_PROB / 20; // 5%
        q.accu_prob = (MAX_PROB / 2) * 17; // forces the decision
        let a = Arrival { now_ns: 0, wire_bytes: 1514, queue_bytes: 10 * 1514, queue_packets: 10, buffer_bytes: u64::MAX, ect: true };
        assert_eq!(q.on_arrival(a, &mut rng), Verdict::Mark);
        q.prob = MAX_PROB / 5; // 20%
        q.accu_prob = (MAX_PROB / 2) * 17;
        assert_eq!(q.on_arrival(a, &mut rng), Verdict::EarlyDrop);
    }
}
