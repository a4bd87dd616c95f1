//! RED (Floyd & Jacobson 1993), as Linux's sch_red applies it in its
//! default (non-gentle, no ECN) configuration:
//!
//! ```text
//!   avg <- (1 - wq) * avg + wq * q        on every arrival
//!   avg <  min          : enqueue
//!   min <= avg < max    : p_b = max_p * (avg - min) / (max - min)
//!                         [byte mode: p_b *= size / mss]
//!                         p_a = p_b / (1 - count * p_b); drop with p_a
//!   avg >= max          : drop
//! ```
//! `count` (packets since the last early drop) spreads drops out evenly.
//! While the queue is idle the average decays as if small packets had been
//! sent at link rate (the `m` idle correction of the paper); we approximate
//! the number of such packets by idle time / (mss at link rate).
//! A full buffer always drops (tail drop), whatever the average says.
//! With `ecn` (Linux's `red ... ecn`, without `harddrop`), an ECN-capable
//! packet is marked CE instead of every early drop, in both the random
//! and the forced (avg >= max) region; a Not-ECT packet is still dropped.

use super::{Arrival, Qdisc, Verdict};
use crate::config::RedConfig;
use crate::rng::SimRng;

pub struct Red {
    cfg: RedConfig,
    /// Average queue length, bytes.
    avg_bytes: f64,
    /// Arrivals since the last early drop while min <= avg < max; -1 when
    /// the average is below min.
    count: i64,
    /// When the queue last went idle, ns (None while busy).
    idle_since_ns: Option<u64>,
    /// Time to send one mss-sized packet at link rate, ns (idle aging).
    typical_tx_ns: u64,
    mss: u32,
}

impl Red {
    pub fn new(cfg: RedConfig, rate_bps: u64, mss_wire: u32) -> Self {
        let typical_tx_ns = (mss_wire as u64 * 8 * 1_000_000_000 / rate_bps.max(1)).max(1);
        Self { cfg, avg_bytes: 0.0, count: -1, idle_since_ns: Some(0), typical_tx_ns, mss: mss_wire }
    }

    pub fn avg_bytes(&self) -> f64 {
        self.avg_bytes
    }
}

impl Qdisc for Red {
    fn on_arrival(&mut self, a: Arrival, rng: &mut SimRng) -> Verdict {
        let wq = self.cfg.wq;
        if let Some(since) = self.idle_since_ns.take() {
            let m = (a.now_ns.saturating_sub(since) / self.typical_tx_ns) as i32;
            self.avg_bytes *= (1.0 - wq).powi(m.min(1 << 20));
        }
        self.avg_bytes = (1.0 - wq) * self.avg_bytes + wq * a.queue_bytes as f64;
        let (min, max) = (self.cfg.min_bytes as f64, self.cfg.max_bytes as f64);
        let verdict = if self.avg_bytes < min {
            self.count = -1;
            Verdict::Enqueue
        } else if self.avg_bytes >= max {
            self.count = 0;
            Verdict::congestion(self.cfg.ecn, a.ect)
        } else {
            self.count += 1;
            let mut p_b = self.cfg.max_p * (self.avg_bytes - min) / (max - min);
            if self.cfg.byte_mode {
                p_b *= a.wire_bytes as f64 / self.mss as f64;
            }
            let denom = 1.0 - self.count as f64 * p_b;
            let p_a = if denom <= 0.0 { 1.0 } else { (p_b / denom).min(1.0) };
            if rng.next_f64() < p_a {
                self.count = 0;
                Verdict::congestion(self.cfg.ecn, a.ect)
            } else {
                Verdict::Enqueue
            }
        };
        if matches!(verdict, Verdict::Enqueue | Verdict::Mark) && a.queue_bytes + a.wire_bytes as u64 > a.buffer_bytes {
            return Verdict::Overflow;
        }
        verdict
    }

    fn on_idle(&mut self, now_ns: u64) {
        self.idle_since_ns = Some(now_ns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn red() -> Red {
        let cfg = RedConfig { min_bytes: 30_000, max_bytes: 90_000, max_p: 0.1, wq: 0.002, byte_mode: false, ecn: false };
        Red::new(cfg, 100_000_000, 1514)
    }

    fn arrive(r: &mut Red, rng: &mut SimRng, queue_bytes: u64, now_ns: u64) -> Verdict {
        r.on_arrival(Arrival { now_ns, wire_bytes: 1514, queue_bytes, queue_packets: 0, buffer_bytes: 1_000_000, ect: false }, rng)
    }

    #[test]
    fn no_drops_below_min_and_all_above_max() {
        let mut rng = SimRng::new(7);
        let mut r = red();
        for i in 0..10_000 {
            assert_eq!(arrive(&mut r, &mut rng, 20_000, i), Verdict::Enqueue);
        }
        for i in 0..20_000 {
            arrive(&mut r, &mut rng, 200_000, 10_000 + i);
        }
        assert!(r.avg_bytes() > 90_000.0);
        assert_eq!(arrive(&mut r, &mut rng, 200_000, 40_000), Verdict::EarlyDrop);
    }

    #[test]
    fn drop_rate_between_thresholds_tracks_max_p() {
        // Hold the instantaneous queue at the midpoint: avg converges to 60 KB,
        // p_b = 0.05, and with count-spreading the drop rate is ~ 2 p_b / (1 + p_b)
        // (uniform inter-drop spacing in [1, 1/p_b]) ~ 0.095.
        let mut rng = SimRng::new(11);
        let mut r = red();
        for i in 0..20_000 {
            arrive(&mut r, &mut rng, 60_000, i);
        }
        let n = 200_000;
        let drops = (0..n).filter(|i| arrive(&mut r, &mut rng, 60_000, 20_000 + i) == Verdict::EarlyDrop).count();
        let rate = drops as f64 / n as f64;
        assert!((0.08..0.11).contains(&rate), "drop rate {rate}");
    }

    #[test]
    fn ecn_marks_capable_packets_where_it_would_drop() {
        let mut rng = SimRng::new(5);
        let mut r = red();
        r.cfg.ecn = true;
        for i in 0..20_000 {
            arrive(&mut r, &mut rng, 200_000, i);
        }
        let a = |ect| Arrival { now_ns: 30_000, wire_bytes: 1514, queue_bytes: 200_000, queue_packets: 0, buffer_bytes: 1_000_000, ect };
        assert_eq!(r.on_arrival(a(true), &mut rng), Verdict::Mark);
        assert_eq!(r.on_arrival(a(false), &mut rng), Verdict::EarlyDrop);
        // A full buffer drops even an ECN-capable packet.
        let full = Arrival { buffer_bytes: 200_000, ..a(true) };
        assert_eq!(r.on_arrival(full, &mut rng), Verdict::Overflow);
    }

    #[test]
    fn idle_time_ages_the_average() {
        let mut rng = SimRng::new(3);
        let mut r = red();
        for i in 0..20_000 {
            arrive(&mut r, &mut rng, 60_000, i);
        }
        let before = r.avg_bytes();
        r.on_idle(1_000_000);
        // 1 s idle at 100 Mbit/s is ~8250 packet times: avg decays to ~0.
        arrive(&mut r, &mut rng, 0, 1_001_000_000);
        assert!(r.avg_bytes() < before * 0.01);
    }
}
