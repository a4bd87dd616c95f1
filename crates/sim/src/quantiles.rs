//! An empirical distribution given by points of its CDF, sampled by linear
//! interpolation of the inverse CDF: the hosts' delays ([`crate::host`])
//! and a workload's flow sizes ([`crate::workload`]).
//!
//! ```text
//!   points (p_0 = 0, v_0), (p_1, v_1), ..., (p_n = 1, v_n)
//!   at(u), u in [0, 1):  k = the first point with p_k > u
//!                        v_{k-1} + (v_k - v_{k-1}) (u - p_{k-1}) / (p_k - p_{k-1})
//! ```
//! Probabilities never fall and values never fall (checked by
//! [`crate::validate`]). Two points with the same probability are a jump
//! of the CDF: no value strictly between them is ever drawn (the search
//! stops at the later one), which is how a size file says "no flows
//! between these sizes". The host model's distributions rise strictly.

/// An empirical distribution: (cumulative probability, value) points.
#[derive(Clone, Debug)]
pub struct Quantiles {
    points: Vec<(f64, u64)>,
    /// For each of [`BUCKETS`] equal slices of [0, 1), the first point
    /// whose probability is above the slice's start: a draw starts its
    /// search there (a step or two) instead of a binary search over all
    /// points, which was most of the host model's cost per packet.
    first_above: Vec<u32>,
}

/// Slices of [0, 1) in [`Quantiles::first_above`].
const BUCKETS: usize = 256;

impl Quantiles {
    pub fn new(points: &[(f64, u64)]) -> Option<Self> {
        (!points.is_empty()).then(|| Quantiles {
            points: points.to_vec(),
            first_above: (0..BUCKETS)
                .map(|b| points.partition_point(|&(p, _)| p <= b as f64 / BUCKETS as f64) as u32)
                .collect(),
        })
    }

    /// The value at cumulative probability `u` in [0, 1).
    pub fn at(&self, u: f64) -> u64 {
        // The first point above u (as partition_point would find it).
        let mut k = self.first_above[((u * BUCKETS as f64) as usize).min(BUCKETS - 1)] as usize;
        while k < self.points.len() && self.points[k].0 <= u {
            k += 1;
        }
        if k == 0 {
            return self.points[0].1;
        }
        if k == self.points.len() {
            return self.points[k - 1].1;
        }
        let ((p0, v0), (p1, v1)) = (self.points[k - 1], self.points[k]);
        v0 + ((v1 - v0) as f64 * (u - p0) / (p1 - p0)) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SimRng;

    #[test]
    fn the_bucketed_search_finds_what_a_binary_search_finds() {
        let points = [(0.0, 10), (0.001, 20), (0.5, 30), (0.5039, 35), (0.99, 400), (0.999, 900), (1.0, 5_000)];
        let q = Quantiles::new(&points).unwrap();
        let mut rng = SimRng::new(7);
        let edges = points.iter().map(|&(p, _)| p).chain([0.00390625, 0.5 - 1e-12, 0.999999]);
        for u in (0..100_000).map(|_| rng.next_f64()).chain(edges.filter(|&p| p < 1.0)) {
            let k = points.partition_point(|&(p, _)| p <= u);
            let want = if k == 0 {
                points[0].1
            } else if k == points.len() {
                points[k - 1].1
            } else {
                let ((p0, v0), (p1, v1)) = (points[k - 1], points[k]);
                v0 + ((v1 - v0) as f64 * (u - p0) / (p1 - p0)) as u64
            };
            assert_eq!(q.at(u), want, "u = {u}");
        }
    }

    #[test]
    fn quantiles_interpolate_the_inverse_cdf() {
        let q = Quantiles::new(&[(0.0, 0), (0.5, 100), (1.0, 1000)]).unwrap();
        assert_eq!(q.at(0.0), 0);
        assert_eq!(q.at(0.25), 50);
        assert_eq!(q.at(0.5), 100);
        assert_eq!(q.at(0.75), 550);
        assert_eq!(q.at(0.999_999), 999);
    }

    #[test]
    fn a_jump_of_the_cdf_draws_nothing_inside_it() {
        // Half the flows up to 100 B, half from 1000 B to 2000 B: nothing
        // in between, and the second half interpolates from 1000.
        let q = Quantiles::new(&[(0.0, 0), (0.5, 100), (0.5, 1000), (1.0, 2000)]).unwrap();
        assert_eq!(q.at(0.25), 50);
        assert_eq!(q.at(0.5), 1000);
        assert_eq!(q.at(0.75), 1500);
        let mut rng = SimRng::new(3);
        assert!((0..10_000).map(|_| q.at(rng.next_f64())).all(|v| v <= 100 || v >= 1000));
    }
}
