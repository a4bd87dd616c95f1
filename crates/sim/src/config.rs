//! The resolved scenario the simulator runs: every unit already converted to
//! integers (ns, bytes, bit/s) by the Python front end
//! (`python/ccarena/scenario.py`), passed across as JSON.
//!
//! Unknown fields are rejected so that the two sides cannot drift silently.

use std::num::{NonZeroU32, NonZeroU64};

use serde::{Deserialize, Serialize};

/// One simulation run.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SimConfig {
    /// Simulated time to run, ns.
    pub duration_ns: u64,
    /// Seed of the run's single RNG (random loss, RED, per-flow CC RNGs).
    pub seed: u64,
    /// Measurement window start, ns (summary statistics cover [from, to)).
    pub measure_from_ns: u64,
    /// Measurement window end, ns (normally `duration_ns`).
    pub measure_to_ns: u64,
    /// Telemetry sampling interval, ns.
    pub interval_ns: u64,
    /// TCP payload bytes per full segment (Linux with timestamps: 1448).
    pub mss: u32,
    /// Bytes a full data segment occupies on the bottleneck wire
    /// (payload + TCP/IP/timestamp headers + Ethernet: 1448 + 66 = 1514).
    pub wire_overhead: u32,
    pub bottleneck: BottleneckConfig,
    pub flows: Vec<FlowConfig>,
}

/// The shared bottleneck link, forward direction only (ACKs are not queued).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BottleneckConfig {
    /// Link rate, bit/s.
    pub rate_bps: u64,
    /// Queue capacity, bytes of wire size.
    pub buffer_bytes: u64,
    /// Queue discipline.
    pub aqm: Aqm,
    /// RED parameters, required when `aqm` is `red`.
    #[serde(default)]
    pub red: Option<RedConfig>,
    /// Fair-queueing parameters when `aqm` is `fq` (None: a quantum of one
    /// full packet, `mss + wire_overhead`); ignored otherwise.
    #[serde(default)]
    pub fq: Option<FqConfig>,
    /// A token-bucket policer in front of the queue (None: no policer).
    #[serde(default)]
    pub policer: Option<PolicerConfig>,
    /// Probability in [0, 1) that a packet is dropped at random on entry
    /// (independent of the queue), e.g. 0.01 for the BBR paper's Fig. 8.
    #[serde(default)]
    pub loss: f64,
    /// Rate changes over time, ascending `at_ns`.
    #[serde(default)]
    pub schedule: Vec<RateChange>,
    /// A trace of delivery opportunities that replaces serialisation at
    /// `rate_bps` (None: a constant-rate link). `rate_bps` is then the
    /// trace's mean rate (what BDP-sized buffers and limits use).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceConfig>,
}

/// A mahimahi-style link trace ([`crate::trace_link`]), resolved.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct TraceConfig {
    /// Opportunity instants within one period, ns, non-decreasing, each in
    /// (0, period] (the file's millisecond timestamps).
    pub opportunities_ns: Vec<u64>,
    /// The trace repeats every `period_ns` (its last timestamp), ns.
    pub period_ns: u64,
    /// Wire bytes one opportunity carries (one full-size packet).
    pub opportunity_bytes: u32,
}

impl BottleneckConfig {
    /// Wire bytes the link could carry in `[from_ns, to_ns)` (rounded
    /// down): its trace's opportunities, or the integral of its rate
    /// schedule, each change applying at its instant. Both engines' results
    /// report utilisation against this.
    pub fn capacity_bytes(&self, from_ns: u64, to_ns: u64) -> u64 {
        if let Some(trace) = &self.trace {
            return trace.capacity_bytes(from_ns, to_ns);
        }
        let mut edges: Vec<(u64, u64)> = vec![(0, self.rate_bps)];
        edges.extend(self.schedule.iter().map(|c| (c.at_ns, c.rate_bps)));
        let mut nanobits: u128 = 0;
        for (k, &(at, rate)) in edges.iter().enumerate() {
            let next = edges.get(k + 1).map_or(u64::MAX, |e| e.0);
            let (s, e) = (at.max(from_ns), next.min(to_ns));
            if e > s {
                nanobits += rate as u128 * (e - s) as u128;
            }
        }
        crate::bottleneck::nanobits_to_bytes(nanobits)
    }

    /// A droptail link and nothing else (no AQM, policer, loss or schedule):
    /// where tests start, changing the fields they exercise.
    pub fn droptail(rate_bps: u64, buffer_bytes: u64) -> Self {
        Self {
            rate_bps,
            buffer_bytes,
            aqm: Aqm::Droptail,
            red: None,
            fq: None,
            policer: None,
            loss: 0.0,
            schedule: vec![],
            trace: None,
        }
    }
}

/// The queue discipline: how packets wait and which one is dropped.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Aqm {
    /// One FIFO; a packet that does not fit is dropped.
    Droptail,
    /// One FIFO; RED drops early on its average queue length.
    Red,
    /// One queue per flow, served by Deficit Round Robin; a full buffer
    /// drops from the longest queue.
    Fq,
}

/// Per-flow fair queueing (Deficit Round Robin, Shreedhar & Varghese 1995).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct FqConfig {
    /// Bytes of wire size a flow may send per round (1514: one full packet).
    pub quantum_bytes: NonZeroU32,
}

/// A token bucket that drops the packets exceeding `rate_bps` (after a
/// burst of `burst_bytes`) before they reach the queue.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct PolicerConfig {
    /// Token refill rate, bit/s of wire size.
    pub rate_bps: NonZeroU64,
    /// Bucket depth, bytes of wire size (the bucket starts full).
    pub burst_bytes: NonZeroU64,
}

/// RED as in Floyd & Jacobson / Linux sch_red (the BBQ paper's Table I).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RedConfig {
    /// Average queue below which nothing is dropped, bytes.
    pub min_bytes: u64,
    /// Average queue above which everything is dropped, bytes.
    pub max_bytes: u64,
    /// Drop probability reached at `max_bytes`.
    pub max_p: f64,
    /// Weight of the EWMA of the queue length (Linux default 2^-9 ~ 0.002).
    pub wq: f64,
    /// Byte mode: drop probability scaled by packet size / mss.
    pub byte_mode: bool,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RateChange {
    pub at_ns: u64,
    pub rate_bps: u64,
}

/// One bulk TCP flow (Python expands `count = N` into N entries).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FlowConfig {
    /// Congestion control name, as registered by cc-native ("bbr", "cubic").
    pub cc: String,
    /// Base round-trip time, ns (split evenly: data path and ACK path).
    pub rtt_ns: u64,
    /// Time the flow starts sending, ns.
    pub start_ns: u64,
    /// Time the flow stops sending new data, ns (None: runs to the end).
    #[serde(default)]
    pub stop_ns: Option<u64>,
    /// Per-algorithm parameter overrides, already as u64 in the algorithm's
    /// units, by index in that algorithm's parameter table.
    #[serde(default)]
    pub params: Vec<u64>,
    /// Changes of the flow's base RTT over time, ascending `at_ns` (the BBQ
    /// paper's Fig. 7 "latency cheating": a flow inflating its own RTT).
    #[serde(default)]
    pub rtt_schedule: Vec<RttChange>,
}

/// From `at_ns` on, the flow's base RTT is `rtt_ns` (split evenly between
/// the directions as the initial one). Packets already in a pipe keep the
/// delay they entered with, and no packet overtakes an earlier one.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RttChange {
    pub at_ns: u64,
    pub rtt_ns: u64,
}
