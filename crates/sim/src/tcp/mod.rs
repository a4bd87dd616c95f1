//! The TCP sender, following Linux (>= 6.10) where it shapes how flows
//! share a bottleneck: delivery-rate sampling (`tcp_rate.c`), EDT pacing
//! and TSO sizing, cwnd and in-flight accounting, SACK scoreboard with
//! RACK-TLP loss detection (`tcp_recovery.c`), the CA state machine with
//! PRR, and RTO with exponential backoff. The congestion control is the C
//! code of `cc/*.c`, called through [`cc_native::CongestionOps`] exactly
//! where Linux calls `tcp_congestion_ops`, on a `tcp_sock` that this module
//! keeps authoritative.
//!
//! Entry point: [`TcpSender`] (see [`sender`] for the map of the files).

mod ack;
mod app_limited;
pub mod minmax;
mod output;
pub mod pacing;
pub mod rack;
pub mod rate_sample;
mod recovery;
pub mod rtt;
pub mod scoreboard;
pub mod sender;
mod timer;
pub mod timestamp;
mod undo;

#[cfg(test)]
mod testnet;
#[cfg(test)]
mod tests;

pub use sender::{SenderConfig, TcpSender};

/// A snapshot of one sender for the time series.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SenderTelemetry {
    /// Congestion window, packets.
    pub cwnd: u32,
    /// Packets in flight (`tcp_packets_in_flight`).
    pub inflight: u32,
    /// Pacing rate, bit/s (0 while unset).
    pub pacing_rate_bps: f64,
    /// Smoothed RTT, µs.
    pub srtt_us: u32,
    /// Latest RTT sample, µs.
    pub last_rtt_us: u32,
    /// Windowed minimum RTT, µs (0 before the first sample).
    pub min_rtt_us: u32,
    /// `enum tcp_ca_state`.
    pub ca_state: u8,
    /// CC-specific mode (e.g. BBR state), from `CCA_TRACE`.
    pub cc_mode: u32,
    /// Pacing gain (1.0 = unity; 0 if the CC does not report one).
    pub pacing_gain: f64,
    /// Cwnd gain (1.0 = unity; 0 if the CC does not report one).
    pub cwnd_gain: f64,
    /// The CC's bandwidth estimate, bit/s (0 if it has none).
    pub bw_estimate_bps: f64,
    /// Latest delivery-rate sample the stack kept (`tp->rate_delivered` /
    /// `tp->rate_interval_us`, what TCP_INFO reports as
    /// `tcpi_delivery_rate`), payload bit/s; 0 before the first.
    pub delivery_rate_bps: f64,
    /// The CC's own state variable (`CCA_TRACE_VAR`, e.g. BBR-CWS's
    /// upper_scaling_factor); NaN if the CC exports none.
    pub cc_var: f64,
    /// The CC's ACK-aggregation estimate (`CCA_TRACE_EXTRA_ACKED`, BBR's
    /// extra_acked filter), packets; NaN if the CC reports none.
    pub extra_acked: f64,
    /// Segments retransmitted (fast, RTO and probe retransmissions).
    pub retransmits_total: u64,
    /// Retransmission timeouts.
    pub rto_count: u64,
    /// Data segments transmitted, including retransmissions.
    pub sent_segments: u64,
}
