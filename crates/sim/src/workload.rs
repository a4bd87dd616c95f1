//! Workloads: sized flows that arrive by a Poisson process, with sizes
//! drawn from an empirical distribution (`[[workload]]`).
//!
//! ```text
//!   arrivals:  t_1 = start + X_1,  t_{k+1} = t_k + X_{k+1},  X ~ Exp(mean 1 / rate), rounded to ns
//!              while t_k < stop (and the run lasts)
//!   at t_k:    size ~ the size distribution (a fixed size, or (p, bytes) points
//!              interpolated as crate::quantiles), at least 1 byte
//!              if fewer than max_active of the workload's flows are in progress:
//!                  a sized flow starts at t_k (slot from crate::flow_table)
//!              else the arrival is refused (counted)
//!   a flow:    complete when its receiver has every byte (FCT = completion - t_k);
//!              gone when, besides, its sender has every ACK and nothing of it
//!              is in the network: its slot is free and its record written
//! ```
//! The front end gives `rate` as a load: `load x link rate / (8 x mean
//! size)`, the mean of the interpolated distribution (as HPCC's and
//! pFabric's traffic generators compute it), so the offered payload is that
//! fraction of the link.
//!
//! Each workload draws from its own stream of the run's seed (per arrival:
//! the flow's size and its CC's seed, then the gap to the next arrival),
//! so a scenario's other randomness is the same with or without it. A
//! workload's flows get no telemetry rows (those would grow with the
//! flows); each leaves a record instead ([`crate::result::WorkloadFlows`]).

use crate::config::WorkloadConfig;
use crate::quantiles::Quantiles;
use crate::result::WorkloadResult;
use crate::rng::SimRng;

/// Added to the run's seed, times (workload index + 1), for a workload's
/// stream: an odd constant of its own (those of [`crate::jitter`],
/// [`crate::host`] and [`crate::app`] are others).
const STREAM_STEP: u64 = 0x9e37_79b9_7f4a_7c15_u64.rotate_left(41);

/// One workload's arrival process and counts.
pub struct Workload {
    rng: SimRng,
    /// Mean gap between arrivals, ns.
    mean_gap_ns: f64,
    stop_ns: u64,
    /// Every flow's size, or the distribution to draw it from.
    size: Size,
    pub max_active: u32,
    /// Flows of this workload in progress now.
    pub active: u32,
    pub counts: WorkloadResult,
}

enum Size {
    Fixed(u64),
    Drawn(Quantiles),
}

impl Workload {
    /// Workload `index` of a run seeded `run_seed`.
    pub fn new(cfg: &WorkloadConfig, run_seed: u64, index: usize) -> Self {
        let size = match cfg.size_bytes {
            Some(bytes) => Size::Fixed(bytes),
            None => Size::Drawn(Quantiles::new(&cfg.sizes).expect("validated: sizes")),
        };
        Workload {
            rng: SimRng::new(run_seed.wrapping_add(STREAM_STEP.wrapping_mul(index as u64 + 1))),
            mean_gap_ns: 1e9 / cfg.arrival_rate_hz,
            stop_ns: cfg.stop_ns,
            size,
            max_active: cfg.max_active,
            active: 0,
            counts: WorkloadResult::default(),
        }
    }

    /// The arrival after one at `after_ns` (or after the window's start):
    /// None once past the window.
    pub fn next_arrival_ns(&mut self, after_ns: u64) -> Option<u64> {
        // Exponential gap (Poisson arrivals); 1 - u is in (0, 1].
        let gap = (-(1.0 - self.rng.next_f64()).ln() * self.mean_gap_ns).round();
        let at = after_ns.saturating_add(gap as u64);
        (at < self.stop_ns).then_some(at)
    }

    /// The next flow's size, bytes (at least 1), and its CC's seed.
    pub fn draw_flow(&mut self) -> (u64, u64) {
        let size = match &self.size {
            Size::Fixed(bytes) => *bytes,
            Size::Drawn(q) => q.at(self.rng.next_f64()).max(1),
        };
        (size, self.rng.derive_seed())
    }

    /// An arrival: true if it may start (fewer than `max_active` in
    /// progress), counted either way.
    pub fn admit(&mut self) -> bool {
        self.counts.arrived += 1;
        if self.active >= self.max_active {
            self.counts.refused += 1;
            return false;
        }
        self.active += 1;
        self.counts.peak_active = self.counts.peak_active.max(self.active);
        true
    }

    /// One of its flows is gone.
    pub fn release(&mut self) {
        self.active -= 1;
    }
}

/// Every arrival of workload `index` (of a run seeded `run_seed`) before
/// `until_ns`, in order, with its size: what the event loop draws
/// (`event_loop.rs`: the first arrival after the workload's start; at each,
/// the flow's size and CC seed, then the gap to the next), whether or not
/// the flow may start. The live engine's senders open a connection at
/// each (python/ccarena/live/workloads.py).
pub fn arrivals(cfg: &WorkloadConfig, run_seed: u64, index: usize, until_ns: u64) -> Vec<(u64, u64)> {
    let mut wl = Workload::new(cfg, run_seed, index);
    let mut out = Vec::new();
    let mut next = wl.next_arrival_ns(cfg.start_ns);
    while let Some(at) = next.filter(|&t| t < until_ns) {
        out.push((at, wl.draw_flow().0));
        next = wl.next_arrival_ns(at);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::EcnMode;

    fn cfg(rate_hz: f64, sizes: Vec<(f64, u64)>) -> WorkloadConfig {
        WorkloadConfig {
            cc: "cubic".into(),
            rtt_ns: 10_000_000,
            params: vec![],
            ecn: EcnMode::Off,
            jitter_ns: 0,
            path: vec![],
            reverse_path: vec![],
            start_ns: 1_000_000_000,
            stop_ns: 101_000_000_000,
            arrival_rate_hz: rate_hz,
            size_bytes: None,
            sizes,
            max_active: 2,
        }
    }

    #[test]
    fn arrivals_are_poisson_at_the_rate_inside_the_window() {
        // 100 per second for 100 s: 10,000 arrivals (sd 100), gaps with
        // mean 10 ms and the exponential's coefficient of variation 1.
        let mut w = Workload::new(&cfg(100.0, vec![(0.0, 1), (1.0, 1)]), 1, 0);
        let mut at = vec![];
        let mut t = 1_000_000_000;
        while let Some(next) = w.next_arrival_ns(t) {
            at.push(next);
            t = next;
        }
        assert!((9_700..=10_300).contains(&at.len()), "{} arrivals", at.len());
        assert!(at[0] >= 1_000_000_000 && *at.last().unwrap() < 101_000_000_000);
        let gaps: Vec<f64> = at.windows(2).map(|p| (p[1] - p[0]) as f64).collect();
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let sd = (gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64).sqrt();
        assert!((mean / 1e7 - 1.0).abs() < 0.03, "mean gap {mean}");
        assert!((sd / mean - 1.0).abs() < 0.05, "cv {}", sd / mean);
    }

    #[test]
    fn sizes_follow_the_distribution_and_its_mean() {
        // Web search's CDF (examples/workloads/websearch.cdf): its mean by
        // the front end's formula is 1,711,250 bytes.
        let points = vec![
            (0.0, 0),
            (0.15, 10_000),
            (0.2, 20_000),
            (0.3, 30_000),
            (0.4, 50_000),
            (0.53, 80_000),
            (0.6, 200_000),
            (0.7, 1_000_000),
            (0.8, 2_000_000),
            (0.9, 5_000_000),
            (0.97, 10_000_000),
            (1.0, 30_000_000),
        ];
        let mean: f64 = points.windows(2).map(|p| (p[1].0 - p[0].0) * (p[0].1 + p[1].1) as f64 / 2.0).sum();
        assert_eq!(mean.round(), 1_711_250.0);
        let mut w = Workload::new(&cfg(1.0, points), 7, 3);
        let draws: Vec<u64> = (0..400_000).map(|_| w.draw_flow().0).collect();
        let got = draws.iter().sum::<u64>() as f64 / draws.len() as f64;
        // The mean of a heavy tail converges slowly: within 2%.
        assert!((got / mean - 1.0).abs() < 0.02, "mean {got} vs {mean}");
        let small = draws.iter().filter(|&&s| s <= 10_000).count() as f64 / draws.len() as f64;
        assert!((small - 0.15).abs() < 0.005, "{small}");
        assert!(draws.iter().all(|&s| (1..=30_000_000).contains(&s)));
    }

    #[test]
    fn arrivals_beyond_max_active_are_refused_and_counted() {
        let mut w = Workload::new(&cfg(1.0, vec![(0.0, 5), (1.0, 5)]), 1, 0);
        assert!(w.admit() && w.admit());
        assert!(!w.admit());
        w.release();
        assert!(w.admit());
        assert_eq!((w.counts.arrived, w.counts.refused, w.counts.peak_active), (4, 1, 2));
    }
}
