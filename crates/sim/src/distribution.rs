//! Mean and nearest-rank percentiles of a stream of samples (queueing
//! delays, RTTs) in memory that does not grow with the number of samples.
//!
//! The first [`EXACT_SAMPLES`] samples are kept as they are, so short runs
//! and sparse flows get exact statistics. From then on every sample goes
//! into an HDR histogram (Gil Tene's HdrHistogram, the `hdrhistogram`
//! crate) with [`SIGNIFICANT_DIGITS`] = 3: a value `v` is counted in a bin
//! of width at most `v / 1024` (width 1, i.e. exact, below 2048). A
//! percentile is reported as the highest value of the bin that holds the
//! exact nearest-rank sample (counts are exact, and bins are ordered as
//! the values in them), so it is
//!
//! ```text
//!   exact <= reported < exact * (1 + RELATIVE_ERROR),   RELATIVE_ERROR = 1/1024 (< 0.1%)
//! ```
//! The mean is exact in both regimes (integer sum / count). Memory: at
//! most `EXACT_SAMPLES` × 8 bytes, then 8 KiB per power of two between
//! 2048 and the largest sample (about 150 KiB for queueing delays up to a
//! second in ns), never more than ~0.5 MiB.

use hdrhistogram::Histogram;

/// Samples kept exactly before switching to the histogram: 32 KiB, half
/// what a histogram of RTTs in µs up to 100 ms costs (64 KiB), so sparse
/// flows (say, 10,000 of them sharing a link) stay cheap and exact.
pub const EXACT_SAMPLES: usize = 4096;
/// HdrHistogram precision: 3 decimal digits, i.e. 2^11 sub-buckets per
/// power of two, the error bound below.
pub const SIGNIFICANT_DIGITS: u8 = 3;
/// Bound on a percentile's relative error (above the exact value, never
/// below): one bin width, 1/1024 of the value, from 3 significant digits.
pub const RELATIVE_ERROR: f64 = 1.0 / 1024.0;

/// A stream of non-negative integer samples (any unit).
#[derive(Clone, Debug)]
pub struct Distribution {
    count: u64,
    /// Exact sum of the samples (u128: 2^64 samples of 2^64 cannot overflow).
    sum: u128,
    samples: Samples,
    /// Unit tests only: every sample, to check the estimator against.
    #[cfg(test)]
    all: Vec<u64>,
}

#[derive(Clone, Debug)]
enum Samples {
    /// Every sample so far (at most [`EXACT_SAMPLES`]); sorted lazily.
    Exact { values: Vec<u64>, sorted: bool },
    /// From the [`EXACT_SAMPLES`]-th sample on.
    Binned(Box<Histogram<u64>>),
}

impl Default for Distribution {
    fn default() -> Self {
        Self {
            count: 0,
            sum: 0,
            samples: Samples::Exact { values: Vec::new(), sorted: true },
            #[cfg(test)]
            all: Vec::new(),
        }
    }
}

impl Distribution {
    pub fn record(&mut self, value: u64) {
        #[cfg(test)]
        self.all.push(value);
        self.count += 1;
        self.sum += value as u128;
        match &mut self.samples {
            Samples::Exact { values, sorted } if values.len() < EXACT_SAMPLES => {
                values.push(value);
                *sorted = false;
            }
            Samples::Exact { values, .. } => {
                let mut h = Histogram::new(SIGNIFICANT_DIGITS).expect("3 significant digits are supported");
                for &v in values.iter().chain([&value]) {
                    record_into(&mut h, v);
                }
                self.samples = Samples::Binned(Box::new(h));
            }
            Samples::Binned(h) => record_into(h, value),
        }
    }

    /// Samples recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Exact mean; None without samples.
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum as f64 / self.count as f64)
    }

    /// The `p`-th percentile (0 < p <= 100) by nearest rank: the smallest
    /// sample with at least p% of the samples at or below it (exact while
    /// there are few samples, else within [`RELATIVE_ERROR`] above).
    /// None without samples.
    pub fn percentile(&mut self, p: f64) -> Option<u64> {
        if self.count == 0 {
            return None;
        }
        match &mut self.samples {
            Samples::Exact { values, sorted } => {
                if !*sorted {
                    values.sort_unstable();
                    *sorted = true;
                }
                let rank = ((p / 100.0) * values.len() as f64).ceil() as usize;
                Some(values[rank.clamp(1, values.len()) - 1])
            }
            // The same rank arithmetic as above (ceil of p/100 × n, at least 1).
            Samples::Binned(h) => Some(h.value_at_quantile(p / 100.0)),
        }
    }
}

#[cfg(test)]
impl Distribution {
    /// Unit tests only: the exact nearest-rank percentile of every sample.
    pub fn exact_percentile(&self, p: f64) -> Option<u64> {
        let mut sorted = self.all.clone();
        sorted.sort_unstable();
        let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
        (!sorted.is_empty()).then(|| sorted[rank.clamp(1, sorted.len()) - 1])
    }

    /// Whether the estimator has left its exact regime.
    pub fn is_binned(&self) -> bool {
        matches!(self.samples, Samples::Binned(_))
    }
}

/// Records `v`; the histogram grows to cover it (values up to 2^63 fit;
/// larger ones, which no simulated delay reaches, count as the largest).
fn record_into(h: &mut Histogram<u64>, v: u64) {
    if h.record(v).is_err() {
        h.saturating_record(h.high());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_core::RngCore;
    use rand_xoshiro::rand_core::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn of(values: impl IntoIterator<Item = u64>) -> Distribution {
        let mut d = Distribution::default();
        values.into_iter().for_each(|v| d.record(v));
        d
    }

    /// Nearest rank on a sorted copy: the definition the estimator follows.
    fn exact_percentile(sorted: &[u64], p: f64) -> u64 {
        let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
        sorted[rank.clamp(1, sorted.len()) - 1]
    }

    #[test]
    fn few_samples_are_exact_nearest_rank() {
        let mut d = of((1..=100).rev());
        assert_eq!(d.mean(), Some(50.5));
        assert_eq!(d.percentile(50.0), Some(50));
        assert_eq!(d.percentile(95.0), Some(95));
        assert_eq!(d.percentile(100.0), Some(100));
        d.record(1000);
        assert_eq!(d.percentile(100.0), Some(1000), "a sample after a query is seen");
    }

    #[test]
    fn no_samples_no_statistics() {
        let mut d = Distribution::default();
        assert_eq!((d.count(), d.mean(), d.percentile(99.0)), (0, None, None));
    }

    #[test]
    fn many_samples_stay_within_the_stated_error_of_exact_nearest_rank() {
        // A million samples spread over six decades (log-uniform, as
        // queueing delays in ns from an idle link to a bloated buffer),
        // with a heavy repeat of zero (the idle link's sojourn).
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let samples: Vec<u64> = (0..1_000_000)
            .map(|_| {
                let r = rng.next_u64();
                if r % 5 == 0 {
                    0
                } else {
                    let exp = (r >> 8) as f64 / (1u64 << 56) as f64 * 6.0 + 2.0;
                    10f64.powf(exp) as u64
                }
            })
            .collect();
        let mut d = of(samples.iter().copied());
        let mut sorted = samples.clone();
        sorted.sort_unstable();
        let exact_mean = samples.iter().map(|&v| v as u128).sum::<u128>() as f64 / samples.len() as f64;
        assert_eq!(d.mean(), Some(exact_mean), "the mean stays exact");
        assert_eq!(d.count(), 1_000_000);
        for p in [1.0, 10.0, 20.0, 25.0, 50.0, 90.0, 95.0, 99.0, 99.9, 99.99, 100.0] {
            let exact = exact_percentile(&sorted, p);
            let got = d.percentile(p).unwrap();
            assert!(got >= exact, "p{p}: {got} below exact {exact}");
            assert!(
                (got - exact) as f64 <= exact as f64 * RELATIVE_ERROR,
                "p{p}: {got} vs exact {exact}: more than {RELATIVE_ERROR} off"
            );
        }
        // The bound is far inside the 1% promised to users.
        const { assert!(RELATIVE_ERROR < 0.01) };
    }

    #[test]
    fn small_values_are_exact_in_the_histogram_too() {
        let samples: Vec<u64> = (0..10 * EXACT_SAMPLES as u64).map(|i| (i * 7919) % 2048).collect();
        let mut d = of(samples.iter().copied());
        let mut sorted = samples;
        sorted.sort_unstable();
        for p in [0.1, 50.0, 95.0, 99.0, 100.0] {
            assert_eq!(d.percentile(p), Some(exact_percentile(&sorted, p)), "p{p}");
        }
    }

    #[test]
    fn memory_stays_bounded_whatever_the_count() {
        // Past the exact regime the state is a histogram whose size depends
        // on the range of values only.
        let mut d = of((0..EXACT_SAMPLES as u64 + 1).map(|i| i * 1_000));
        let Samples::Binned(h) = &d.samples else { panic!("switched to the histogram") };
        let bins = h.distinct_values();
        for i in 0..1_000_000u64 {
            d.record(i % 4_000_000);
        }
        let Samples::Binned(h) = &d.samples else { unreachable!() };
        assert_eq!(h.distinct_values(), bins);
        assert!(bins * 8 < 200 * 1024, "{bins} bins");
    }

    #[test]
    fn huge_values_do_not_fail() {
        let mut d = of((0..EXACT_SAMPLES as u64 + 10).map(|i| i << 50));
        d.record(u64::MAX);
        assert!(d.percentile(100.0).unwrap() >= (EXACT_SAMPLES as u64) << 50);
    }
}
