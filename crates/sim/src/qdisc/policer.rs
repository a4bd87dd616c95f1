//! A token-bucket policer (as a provider's ingress policer, or Linux's
//! act_police without peak rate): tokens arrive at `rate_bps`, the bucket
//! holds at most `burst_bytes`, and a packet passes only if the bucket has
//! its size in tokens, which it then spends. Non-conforming packets are
//! dropped, never delayed, so the policer has no queue.
//!
//! Tokens are counted in nanobits (1e-9 bit) so that a refill of
//! `elapsed_ns * rate_bps` is exact in integers: no rounding drift however
//! long the run, and no wall clock (time is the caller's `now_ns`).

use crate::config::PolicerConfig;

const NANOBITS_PER_BYTE: u128 = 8 * 1_000_000_000;

pub struct TokenBucket {
    /// Refill rate, bit/s (= nanobits per ns).
    rate_bps: u128,
    /// Bucket depth, nanobits.
    depth: u128,
    /// Tokens in the bucket at `last_ns`, nanobits.
    tokens: u128,
    /// When `tokens` was last brought up to date, ns.
    last_ns: u64,
}

impl TokenBucket {
    /// A full bucket at time 0.
    pub fn new(cfg: &PolicerConfig) -> Self {
        let depth = cfg.burst_bytes.get() as u128 * NANOBITS_PER_BYTE;
        Self { rate_bps: cfg.rate_bps.get() as u128, depth, tokens: depth, last_ns: 0 }
    }

    /// Whether a packet of `wire_bytes` arriving at `now_ns` conforms (and
    /// takes its tokens). `now_ns` never goes backwards.
    pub fn admit(&mut self, now_ns: u64, wire_bytes: u32) -> bool {
        let elapsed = now_ns.saturating_sub(self.last_ns) as u128;
        self.last_ns = self.last_ns.max(now_ns);
        self.tokens = (self.tokens + elapsed * self.rate_bps).min(self.depth);
        let cost = wire_bytes as u128 * NANOBITS_PER_BYTE;
        if self.tokens >= cost {
            self.tokens -= cost;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bucket(rate_bps: u64, burst_bytes: u64) -> TokenBucket {
        let nz = |v| std::num::NonZeroU64::new(v).unwrap();
        TokenBucket::new(&PolicerConfig { rate_bps: nz(rate_bps), burst_bytes: nz(burst_bytes) })
    }

    #[test]
    fn a_full_bucket_passes_the_burst_then_nothing_until_it_refills() {
        // 10 packets of burst, 10 Mbit/s: one 1514-byte packet of tokens
        // every 1211.2 us.
        let mut b = bucket(10_000_000, 10 * 1514);
        let passed = (0..50).filter(|_| b.admit(0, 1514)).count();
        assert_eq!(passed, 10);
        assert!(!b.admit(1_211_199, 1514), "one ns short of a packet's tokens");
        assert!(b.admit(1_211_200, 1514));
        // A long idle spell refills to the burst, not beyond.
        let passed = (0..50).filter(|_| b.admit(10_000_000_000, 1514)).count();
        assert_eq!(passed, 10);
    }

    #[test]
    fn long_run_rate_is_the_policer_rate() {
        // Offer 100 Mbit/s (a 1514-byte packet every 121.12 us) to a
        // 30 Mbit/s policer with a 64 kB burst, for 60 s.
        let (rate, burst) = (30_000_000u64, 64_000u64);
        let mut b = bucket(rate, burst);
        let (gap_ns, secs) = (121_120u64, 60u64);
        let mut passed_bytes = 0u64;
        let mut t = 0;
        while t < secs * 1_000_000_000 {
            if b.admit(t, 1514) {
                passed_bytes += 1514;
            }
            t += gap_ns;
        }
        // Exact bound of a token bucket: at most burst + rate * time, and at
        // least that minus one packet (the bucket never sits idle with a
        // packet's worth of tokens while packets keep arriving faster than
        // the rate: the leftover is below one packet at the end).
        let max = burst + rate * secs / 8;
        assert!(passed_bytes <= max, "{passed_bytes} > {max}");
        assert!(passed_bytes + 2 * 1514 >= max, "{passed_bytes} vs {max}");
    }

    #[test]
    fn traffic_below_the_rate_is_never_dropped() {
        let mut b = bucket(50_000_000, 1514);
        // 1514 B every 250 us = 48.4 Mbit/s, burst of a single packet.
        assert!((0..100_000u64).all(|k| b.admit(k * 250_000, 1514)));
    }
}
