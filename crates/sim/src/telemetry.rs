//! Telemetry: samples every flow and every link once per interval into
//! column vectors ([`FlowSeries`], [`LinkSeries`]). Memory grows with the
//! number of samples (duration / interval × flows), never with packets;
//! window statistics of per-packet samples are in [`crate::distribution`].

use crate::bottleneck::{nanobits_to_bytes, Bottleneck, LinkCounters};
use crate::result::{FlowSeries, LinkSeries};
use crate::tcp::SenderTelemetry;
use crate::topology::AckInterval;

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
    /// The interval's ACKs at the sender, when the run records them
    /// (reverse paths: [`crate::topology::AckClock`]).
    pub acks: Option<AckInterval>,
}

#[derive(Default)]
pub struct Recorder {
    interval_ns: u64,
    prev_flows: Vec<FlowCounters>,
    prev_links: Vec<LinkCounters>,
    pub flow_series: FlowSeries,
    pub link_series: LinkSeries,
}

impl Recorder {
    /// A recorder for `samples` samples (duration / interval) of `n_flows`
    /// flows and `n_links` links; its columns are allocated once, at their
    /// final size.
    pub fn new(interval_ns: u64, n_flows: usize, n_links: usize, samples: usize) -> Self {
        let mut r = Self {
            interval_ns,
            prev_flows: vec![FlowCounters::default(); n_flows],
            prev_links: vec![LinkCounters::default(); n_links],
            ..Default::default()
        };
        r.flow_series.reserve(samples * n_flows);
        r.link_series.reserve(samples * n_links);
        if n_links > 1 {
            r.link_series.link.reserve_exact(samples * n_links);
        }
        r
    }

    /// Records one row per flow and one per link for the interval ending
    /// at `now_ns`.
    pub fn sample<'a>(
        &mut self,
        now_ns: u64,
        flows: impl Iterator<Item = FlowSnapshot>,
        links: impl Iterator<Item = &'a Bottleneck>,
    ) {
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
            fs.delivery_rate_bps.push(s.delivery_rate_bps);
            fs.cc_var.push(s.cc_var);
            fs.extra_acked.push(s.extra_acked);
            fs.queue_bytes.push(snap.queue_bytes);
            fs.retransmits.push(snap.counters.retransmits - prev.retransmits);
            if let Some(a) = snap.acks {
                fs.acks.push(a.acks);
                fs.acks_compressed.push(a.compressed);
                fs.ack_gap_p10_us.push(a.gap_p10_us);
                fs.ack_gap_p50_us.push(a.gap_p50_us);
            }
        }
        let topology = self.prev_links.len() > 1;
        for (k, link) in links.enumerate() {
            let now = link.counters(now_ns);
            let prev = std::mem::replace(&mut self.prev_links[k], now);
            let ls = &mut self.link_series;
            let left = now.sojourn_count - prev.sojourn_count;
            ls.t_ns.push(now_ns);
            if topology {
                ls.link.push(k as u32);
            }
            ls.queue_bytes.push(link.queue_bytes());
            ls.queue_delay_us.push(if left == 0 {
                0.0
            } else {
                (now.sojourn_sum_ns - prev.sojourn_sum_ns) as f64 / left as f64 / 1e3
            });
            ls.drops.push(now.drops - prev.drops);
            ls.rate_bps.push(link.offered_rate_bps(now_ns.saturating_sub(self.interval_ns), now_ns));
            ls.tx_bytes.push(nanobits_to_bytes(now.tx_nanobits - prev.tx_nanobits));
        }
    }
}
