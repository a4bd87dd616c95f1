//! The resolved scenario the simulator runs: every unit already converted to
//! integers (ns, bytes, bit/s) by the Python front end
//! (`python/ccarena/scenario.py`), passed across as JSON.
//!
//! Unknown fields are rejected so that the two sides cannot drift silently.

use std::num::{NonZeroU32, NonZeroU64};

use serde::{Deserialize, Serialize};

use crate::trace_instants::TraceInstants;

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
    /// The first link: the dumbbell's bottleneck, or a topology's link 0.
    pub bottleneck: BottleneckConfig,
    /// A topology's further links (the scenario's `[[link]]` after the
    /// first), link `k + 1` in a flow's path; empty: the dumbbell.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<BottleneckConfig>,
    /// The flows of `[[flow]]` (after `count`): flow `i` is key `i` in
    /// every link; a scenario of workloads alone has none.
    #[serde(default)]
    pub flows: Vec<FlowConfig>,
    /// Arrival processes of sized flows (`[[workload]]`, [`crate::workload`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workloads: Vec<WorkloadConfig>,
    /// What the hosts add to the timing ([`crate::host`]); None: ideal
    /// hosts (`host = "ideal"`), exact timing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<HostConfig>,
}

/// The hosts' timing model ([`crate::host`]), resolved from the scenario's
/// `host` (a named model measured on Linux, or the user's own). Each
/// distribution is (cumulative probability, ns) points.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HostConfig {
    /// A flow starts up to this much after its `start`, uniformly, ns.
    #[serde(default)]
    pub start_spread_ns: u64,
    /// Extra delay of each ACK on its way to the sender's TCP.
    #[serde(default)]
    pub ack_delay_ns: Vec<(f64, u64)>,
    /// Lateness of a sender's timer (pacing release, retransmission).
    #[serde(default)]
    pub timer_lateness_ns: Vec<(f64, u64)>,
    /// Host stalls per second (a Poisson process; 0: none).
    #[serde(default)]
    pub stalls_per_s: f64,
    /// Length of a stall.
    #[serde(default)]
    pub stall_length_ns: Vec<(f64, u64)>,
    /// The sender kernel's tick rate (CONFIG_HZ), Hz: jiffies move every
    /// 1000 / `hz` ms. It divides 1000 (100, 250, 1000).
    #[serde(default = "default_hz")]
    pub hz: u32,
}

/// HZ=1000: jiffies are ms.
fn default_hz() -> u32 {
    1000
}

impl Default for HostConfig {
    /// A host that adds nothing, ticking at HZ=1000.
    fn default() -> Self {
        HostConfig {
            start_spread_ns: 0,
            ack_delay_ns: Vec::new(),
            timer_lateness_ns: Vec::new(),
            stalls_per_s: 0.0,
            stall_length_ns: Vec::new(),
            hz: default_hz(),
        }
    }
}

/// One direction of a link: a queue and a serialiser, then `delay_ns` of
/// propagation. The dumbbell has one (the shared bottleneck, which ACKs
/// do not cross); a topology has several, and each flow's data crosses
/// its `path` of them and its ACKs its `reverse_path`.
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
    /// CoDel parameters, required when `aqm` is `codel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub codel: Option<CodelConfig>,
    /// FQ-CoDel parameters, required when `aqm` is `fq_codel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fq_codel: Option<FqCodelConfig>,
    /// PIE parameters, required when `aqm` is `pie`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pie: Option<PieConfig>,
    /// A DCTCP-style step marker on the droptail FIFO (None: no marking).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mark_threshold: Option<MarkThreshold>,
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
    /// Propagation delay after the serialiser, one way, ns (the dumbbell's
    /// bottleneck: 0, its flows' `rtt_ns` holds every delay).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub delay_ns: u64,
    /// A link that aggregates: what it carried leaves together at each
    /// multiple of this period (after `delay_ns`), as Wi-Fi, cellular and
    /// cable links release packets (ACKs in particular) in bursts, ns; 0:
    /// each packet leaves when serialised.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub aggregate_ns: u64,
}

/// A mahimahi-style link trace ([`crate::trace_link`]), resolved.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct TraceConfig {
    /// Opportunities in one period (the file's lines).
    pub opportunities: u64,
    /// Their instants within the period, whole ms, non-decreasing, the
    /// last equal to the period (the file's timestamps), held compactly
    /// ([`TraceInstants`]: base64 of LEB128 gaps in JSON).
    pub gaps_ms: TraceInstants,
    /// The trace repeats every `period_ns` (its last timestamp), ns.
    pub period_ns: u64,
    /// Wire bytes one opportunity carries (one full-size packet).
    pub opportunity_bytes: u32,
    /// SHA-256 of the instants as the front end read them (in ns, joined
    /// by commas): what summary.json records instead of the instants. The
    /// engine carries it unread.
    pub opportunities_sha256: String,
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
            codel: None,
            fq_codel: None,
            pie: None,
            mark_threshold: None,
            policer: None,
            loss: 0.0,
            schedule: vec![],
            trace: None,
            delay_ns: 0,
            aggregate_ns: 0,
        }
    }
}

/// The queue discipline: how packets wait and which one is dropped.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Aqm {
    /// One FIFO; a packet that does not fit is dropped.
    Droptail,
    /// One FIFO; RED drops early on its average queue length.
    Red,
    /// One queue per flow, served by Deficit Round Robin; a full buffer
    /// drops from the longest queue.
    Fq,
    /// One FIFO; CoDel drops (or marks) at its head on the sojourn time.
    Codel,
    /// Per-flow queues (new flows first, DRR) each under CoDel.
    FqCodel,
    /// One FIFO; PIE drops (or marks) on arrival with a probability it
    /// steers by the queueing delay.
    Pie,
}

/// CoDel as Linux's sch_codel (defaults: `tc qdisc add ... codel`).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct CodelConfig {
    /// Acceptable standing queue delay, ns (5 ms).
    pub target_ns: u64,
    /// Sliding window of the minimum delay, ns (100 ms).
    pub interval_ns: u64,
    /// Queue limit, packets (1000).
    pub limit_packets: u32,
    /// Mark ECN-capable packets instead of dropping (Linux: off).
    pub ecn: bool,
}

/// FQ-CoDel as Linux's sch_fq_codel (defaults: `tc qdisc add ... fq_codel`).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct FqCodelConfig {
    pub target_ns: u64,
    pub interval_ns: u64,
    /// Queue limit over all flows, packets (10240).
    pub limit_packets: u32,
    /// Hash buckets (1024).
    pub flows: u32,
    /// Bytes per round per flow (one MTU frame, 1514).
    pub quantum_bytes: NonZeroU32,
    /// Mark ECN-capable packets instead of dropping (Linux: on).
    pub ecn: bool,
}

/// PIE as Linux's sch_pie (defaults: `tc qdisc add ... pie`).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct PieConfig {
    /// Target queueing delay, ns (15 ms).
    pub target_ns: u64,
    /// Probability update interval, ns (15 ms).
    pub tupdate_ns: u64,
    /// Gains in 1/16 (Linux's `alpha 2 beta 20`: 0.125 and 1.25).
    pub alpha_16ths: u32,
    pub beta_16ths: u32,
    /// Burst allowance, ns (150 ms).
    pub burst_ns: u64,
    /// Queue limit, packets (1000).
    pub limit_packets: u32,
    /// Mark ECN-capable packets while the probability is <= 10% (Linux: off).
    pub ecn: bool,
}

/// Where a step marker starts marking: queue length in packets or bytes
/// (the departing packet included), or its sojourn time.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum MarkThreshold {
    Packets(u64),
    Bytes(u64),
    Ns(u64),
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
    /// Mark ECN-capable packets CE instead of dropping them early.
    #[serde(default)]
    pub ecn: bool,
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
    /// Base round-trip time of the flow's own hosts, ns, split evenly
    /// between the data and the ACK direction; the links' delays on its
    /// paths add to it (none in the dumbbell).
    pub rtt_ns: u64,
    /// Time the flow starts sending, ns.
    pub start_ns: u64,
    /// Time the flow stops sending new data, ns (None: runs to the end).
    #[serde(default)]
    pub stop_ns: Option<u64>,
    /// Bytes the application gives the flow, rounded up to whole segments
    /// (None: a bulk transfer). The flow is complete when the receiver has
    /// them all in order; its completion time is in the results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_bytes: Option<u64>,
    /// Per-algorithm parameter overrides, already as u64 in the algorithm's
    /// units, by index in that algorithm's parameter table.
    #[serde(default)]
    pub params: Vec<u64>,
    /// Changes of the flow's base RTT over time, ascending `at_ns` (the BBQ
    /// paper's Fig. 7 "latency cheating": a flow inflating its own RTT).
    #[serde(default)]
    pub rtt_schedule: Vec<RttChange>,
    /// Whether the flow negotiates ECN, and which feedback its receiver
    /// gives ([`EcnMode`]).
    #[serde(default)]
    pub ecn: EcnMode,
    /// Largest extra delay of each of the flow's ACKs, ns, drawn uniformly
    /// from [0, jitter_ns] and kept in order: a host's processing time,
    /// which breaks the phase lock of ACK-clocked senders ([`crate::jitter`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub jitter_ns: u64,
    /// The links the flow's data crosses, in order, by index (0: the
    /// `bottleneck`, k: `links[k - 1]`); empty: the bottleneck alone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub path: Vec<u32>,
    /// The links its ACKs cross, in order; empty: the ACKs queue nowhere
    /// and take the mirror of the data path's delays.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reverse_path: Vec<u32>,
    /// An application-limited sender ([`crate::app`]): how the application
    /// writes (None: it always has data, a bulk or sized transfer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<AppConfig>,
}

/// How an application writes into its socket ([`crate::app`]).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AppConfig {
    /// Payload bit/s the application writes at most, while on (None: as
    /// fast as the sender takes it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_bps: Option<u64>,
    /// ON/OFF periods (None: always on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_off: Option<OnOffConfig>,
}

/// An ON/OFF source: the application writes during ON periods and not at
/// all during OFF periods; the flow starts with an ON period.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct OnOffConfig {
    /// Length of an ON period (its mean if `exponential`), ns.
    pub on_ns: u64,
    /// Length of an OFF period (its mean if `exponential`), ns.
    pub off_ns: u64,
    /// Periods drawn from exponential distributions with these means
    /// (a Markov-modulated source), else exactly these lengths.
    pub exponential: bool,
}

/// A `[[workload]]`: sized flows of one kind, started by a Poisson process
/// ([`crate::workload`]). Each flow is a [`FlowConfig`] of the fields
/// below, sized by a draw from `sizes` and started at its arrival.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WorkloadConfig {
    pub cc: String,
    pub rtt_ns: u64,
    #[serde(default)]
    pub params: Vec<u64>,
    #[serde(default)]
    pub ecn: EcnMode,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub jitter_ns: u64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub path: Vec<u32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reverse_path: Vec<u32>,
    /// Arrivals happen in `[start_ns, stop_ns)`.
    pub start_ns: u64,
    pub stop_ns: u64,
    /// Mean arrivals per second (the Poisson process's rate; the front end
    /// derives it from a load and the mean size).
    pub arrival_rate_hz: f64,
    /// Every flow's payload bytes (`size`), or None: drawn from `sizes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_bytes: Option<u64>,
    /// The flow sizes' distribution (`sizes`, a file): (cumulative
    /// probability, payload bytes) points, sampled as
    /// [`crate::quantiles::Quantiles`] (a draw of 0 bytes is 1 byte);
    /// empty with `size_bytes`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sizes: Vec<(f64, u64)>,
    /// Flows of this workload in progress at once at most: an arrival
    /// finding this many is refused (counted, never started), which bounds
    /// the engine's memory when the offered load exceeds what the network
    /// carries.
    pub max_active: u32,
}

impl WorkloadConfig {
    /// A flow of this workload: arrived at `start_ns`, of `size_bytes`.
    pub fn flow(&self, start_ns: u64, size_bytes: u64) -> FlowConfig {
        FlowConfig {
            cc: self.cc.clone(),
            rtt_ns: self.rtt_ns,
            start_ns,
            stop_ns: None,
            size_bytes: Some(size_bytes),
            params: self.params.clone(),
            rtt_schedule: vec![],
            ecn: self.ecn,
            jitter_ns: self.jitter_ns,
            path: self.path.clone(),
            reverse_path: self.reverse_path.clone(),
            app: None,
        }
    }

    /// The links its flows' data crosses (the bottleneck alone when none is given).
    pub fn data_links(&self) -> &[u32] {
        if self.path.is_empty() {
            &[0]
        } else {
            &self.path
        }
    }
}

impl FlowConfig {
    /// The data path's links (the bottleneck alone when none is given).
    pub fn data_links(&self) -> &[u32] {
        if self.path.is_empty() {
            &[0]
        } else {
            &self.path
        }
    }
}

impl SimConfig {
    /// Link `k` of the topology (0: the bottleneck).
    pub fn link(&self, k: usize) -> &BottleneckConfig {
        if k == 0 {
            &self.bottleneck
        } else {
            &self.links[k - 1]
        }
    }

    /// Links in the topology (1 for the dumbbell).
    pub fn n_links(&self) -> usize {
        1 + self.links.len()
    }

    /// Whether the scenario names its links (`[[link]]`) rather than the
    /// dumbbell's one bottleneck: field paths then say `link[k]`.
    pub fn is_topology(&self) -> bool {
        !self.links.is_empty()
            || self.flows.iter().any(|f| !f.path.is_empty() || !f.reverse_path.is_empty())
            || self.workloads.iter().any(|w| !w.path.is_empty() || !w.reverse_path.is_empty())
    }

    /// Flow keys of the links' per-flow state: one per `[[flow]]`, then
    /// one per slot of the workloads' flows (their `max_active` added up;
    /// [`crate::flow_table`]). A reverse path's ACKs take the keys after
    /// these ([`crate::topology`]).
    pub fn flow_keys(&self) -> usize {
        self.flows.len() + self.workloads.iter().map(|w| w.max_active as usize).sum::<usize>()
    }

    /// Whether any flow's ACKs queue in links (their keys are then needed).
    pub fn has_reverse_paths(&self) -> bool {
        self.flows.iter().any(|f| !f.reverse_path.is_empty())
            || self.workloads.iter().any(|w| !w.reverse_path.is_empty())
    }

    /// The field path of link `k` in the front end's errors.
    pub fn link_field(&self, k: usize) -> String {
        if self.is_topology() {
            format!("link[{k}]")
        } else {
            "bottleneck".into()
        }
    }

    /// A flow's one-way propagation delay over the links of `path`, ns.
    pub fn path_delay_ns(&self, path: &[u32]) -> u64 {
        path.iter().map(|&k| self.link(k as usize).delay_ns).sum()
    }

    /// Flow `fc`'s base RTT in this config's links ([`crate::topology::base_rtt_ns`]).
    pub fn base_rtt_ns(&self, fc: &FlowConfig) -> u64 {
        crate::topology::base_rtt_ns(fc.rtt_ns, fc.data_links(), &fc.reverse_path, |k| {
            self.link(k as usize).delay_ns
        })
    }
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// ECN negotiated by a flow (`net.ipv4.tcp_ecn` on both hosts).
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum EcnMode {
    /// Not ECN-capable: queues drop this flow's packets.
    #[default]
    Off,
    /// RFC 3168 (`tcp_ecn = 1`): the receiver sets ECE on every ACK from
    /// the first CE until the sender's CWR arrives, so the sender learns
    /// "at least one mark this round trip".
    Classic,
    /// Accurate ECN (`tcp_ecn = 3`, Linux >= 6.18): every ACK carries the
    /// count of CE packets received, so the sender counts each mark.
    Accecn,
}

impl EcnMode {
    pub fn enabled(self) -> bool {
        self != EcnMode::Off
    }
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
