//! What a run returns: counters over the measurement window, per-packet
//! statistics the front end cannot recompute, and telemetry columns.
//! Serialised to JSON for the Python front end, which derives shares,
//! Jain's index and utilisation and writes summary.json / parquet.

use serde::Serialize;

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SimResult {
    pub flows: Vec<FlowResult>,
    pub link: LinkResult,
    /// Per-flow telemetry, one row per (interval, flow).
    pub flow_series: FlowSeries,
    /// Bottleneck telemetry, one row per interval.
    pub link_series: LinkSeries,
    /// Events the engine processed (for the benchmark).
    pub events: u64,
}

#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct FlowResult {
    /// Payload bytes delivered in order to the receiver inside the window.
    pub delivered_bytes_window: u64,
    /// Payload bytes delivered in order over the whole run.
    pub delivered_bytes_total: u64,
    /// Retransmitted segments sent inside the window.
    pub retransmits_window: u64,
    /// Retransmitted segments over the whole run.
    pub retransmits_total: u64,
    /// Data segments put on the wire (incl. retransmits), whole run.
    pub sent_segments: u64,
    /// Data segments that reached the receiver, whole run.
    pub arrived_segments: u64,
    /// Data segments dropped at the bottleneck (queue, AQM or random loss).
    pub dropped_segments: u64,
    /// Data segments still in the network (queue or pipe) at the end.
    pub in_network_segments: u64,
    /// RTT samples inside the window: mean and 95th percentile, us.
    pub rtt_mean_us: f64,
    pub rtt_p95_us: f64,
    /// RTO expirations, whole run.
    pub rto_count: u64,
}

#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct LinkResult {
    /// Wire bytes the bottleneck transmitted inside the window.
    pub tx_bytes_window: u64,
    /// Wire bytes the bottleneck could have transmitted inside the window
    /// (integral of the rate schedule).
    pub capacity_bytes_window: u64,
    /// Packets the bottleneck transmitted over the whole run.
    pub tx_packets_total: u64,
    /// Packets dropped inside the window.
    pub drops_window: u64,
    /// Queueing (sojourn) delay of packets leaving the queue inside the
    /// window, us.
    pub queue_delay_mean_us: f64,
    pub queue_delay_p50_us: f64,
    pub queue_delay_p95_us: f64,
    pub queue_delay_p99_us: f64,
    /// Largest queue occupancy seen, bytes (never above buffer_bytes).
    pub max_queue_bytes: u64,
}

/// Column-oriented per-flow telemetry.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct FlowSeries {
    /// End of the interval, ns.
    pub t_ns: Vec<u64>,
    pub flow: Vec<u32>,
    /// In-order payload delivered during the interval, bit/s.
    pub goodput_bps: Vec<f64>,
    /// Sampled at the end of the interval:
    pub cwnd: Vec<u32>,
    pub inflight: Vec<u32>,
    pub pacing_rate_bps: Vec<f64>,
    pub srtt_us: Vec<u32>,
    /// Latest RTT sample, us.
    pub rtt_us: Vec<u32>,
    pub min_rtt_us: Vec<u32>,
    pub ca_state: Vec<u8>,
    /// CC-reported mode / gains / bandwidth estimate (CCA_TRACE).
    pub cc_mode: Vec<u32>,
    pub pacing_gain: Vec<f64>,
    pub cwnd_gain: Vec<f64>,
    pub bw_estimate_bps: Vec<f64>,
    /// Bytes of this flow in the bottleneck queue at the sample instant.
    pub queue_bytes: Vec<u64>,
    /// Retransmits sent during the interval.
    pub retransmits: Vec<u64>,
}

/// Column-oriented bottleneck telemetry.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct LinkSeries {
    pub t_ns: Vec<u64>,
    /// Queue occupancy at the sample instant, bytes.
    pub queue_bytes: Vec<u64>,
    /// Mean sojourn time of packets dequeued during the interval, us
    /// (0 when none left).
    pub queue_delay_us: Vec<f64>,
    /// Drops during the interval.
    pub drops: Vec<u64>,
    /// Link rate in force at the sample instant, bit/s.
    pub rate_bps: Vec<u64>,
    /// Wire bytes transmitted during the interval.
    pub tx_bytes: Vec<u64>,
}
