//! Telemetry: samples every flow and the bottleneck once per interval into
//! column vectors ([`FlowSeries`], [`LinkSeries`]), and snapshots the
//! counters at the edges of the measurement window.

use crate::bottleneck::{Bottleneck, LinkCounters};
use crate::result::{FlowSeries, LinkSeries};
use crate::tcp::SenderTelemetry;

/// The per-flow counters telemetry differences between samples.
#[derive(Clone, Copy, Debug, Default)]
pub struct FlowCounters {
    pub delivered_bytes: u64,
    pub retransmits: u64,
}

/// What one flow looks like at a sample instant.
pub struct FlowSnapshot {
    pub counters: FlowCounters,
    pub sender: SenderTelemetry,
    pub queue_bytes: u64,
}

#[derive(Default)]
pub struct Recorder {
    interval_ns: u64,
    prev_flows: Vec<FlowCounters>,
    prev_link: LinkCounters,
    pub flow_series: FlowSeries,
    pub link_series: LinkSeries,
}

impl Recorder {
    pub fn new(interval_ns: u64, n_flows: usize) -> Self {
        Self { interval_ns, prev_flows: vec![FlowCounters::default(); n_flows], ..Default::default() }
    }

    /// Records one row per flow and one link row for the interval ending at
    /// `now_ns`.
    pub fn sample(&mut self, now_ns: u64, flows: impl Iterator<Item = FlowSnapshot>, link: &Bottleneck) {
        let secs = self.interval_ns as f64 / 1e9;
        let fs = &mut self.flow_series;
        for (i, snap) in flows.enumerate() {
            let prev = std::mem::replace(&mut self.prev_flows[i], snap.counters);
            let s = snap.sender;
            fs.t_ns.push(now_ns);
            fs.flow.push(i as u32);
            fs.goodput_bps.push((snap.counters.delivered_bytes - prev.delivered_bytes) as f64 * 8.0 / secs);
            fs.cwnd.push(s.cwnd);
            fs.inflight.push(s.inflight);
            fs.pacing_rate_bps.push(s.pacing_rate_bps);
            fs.srtt_us.push(s.srtt_us);
            fs.rtt_us.push(s.last_rtt_us);
            fs.min_rtt_us.push(s.min_rtt_us);
            fs.ca_state.push(s.ca_state);
            fs.cc_mode.push(s.cc_mode);
            fs.pacing_gain.push(s.pacing_gain);
            fs.cwnd_gain.push(s.cwnd_gain);
            fs.bw_estimate_bps.push(s.bw_estimate_bps);
            fs.queue_bytes.push(snap.queue_bytes);
            fs.retransmits.push(snap.counters.retransmits - prev.retransmits);
        }
        let now = link.stats;
        let prev = std::mem::replace(&mut self.prev_link, now);
        let ls = &mut self.link_series;
        let left = now.sojourn_count - prev.sojourn_count;
        ls.t_ns.push(now_ns);
        ls.queue_bytes.push(link.queue_bytes());
        ls.queue_delay_us.push(if left == 0 {
            0.0
        } else {
            (now.sojourn_sum_ns - prev.sojourn_sum_ns) as f64 / left as f64 / 1e3
        });
        ls.drops.push(now.drops - prev.drops);
        ls.rate_bps.push(link.rate_bps());
        ls.tx_bytes.push(now.tx_bytes - prev.tx_bytes);
    }
}

/// Mean and nearest-rank percentiles of `samples` (sorted in place).
pub struct Distribution {
    pub mean: f64,
    sorted: Vec<u64>,
}

impl Distribution {
    pub fn new(mut samples: Vec<u64>) -> Self {
        samples.sort_unstable();
        let mean = if samples.is_empty() {
            0.0
        } else {
            samples.iter().map(|&x| x as f64).sum::<f64>() / samples.len() as f64
        };
        Self { mean, sorted: samples }
    }

    /// The `p`-th percentile (0 < p <= 100) by nearest rank; 0 if empty.
    pub fn percentile(&self, p: f64) -> f64 {
        if self.sorted.is_empty() {
            return 0.0;
        }
        let rank = ((p / 100.0) * self.sorted.len() as f64).ceil() as usize;
        self.sorted[rank.clamp(1, self.sorted.len()) - 1] as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let d = Distribution::new((1..=100).rev().collect());
        assert_eq!(d.mean, 50.5);
        assert_eq!(d.percentile(50.0), 50.0);
        assert_eq!(d.percentile(95.0), 95.0);
        assert_eq!(d.percentile(100.0), 100.0);
        assert_eq!(Distribution::new(vec![]).percentile(99.0), 0.0);
    }
}
