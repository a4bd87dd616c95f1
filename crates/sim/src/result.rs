//! What a run returns: counters over the measurement window, per-packet
//! statistics the front end cannot recompute, and telemetry columns.
//! The counters cross to the Python front end as JSON and the telemetry
//! as raw column buffers ([`Column`], `FlowSeries::columns`), no JSON
//! detour for the bulk; the front end derives shares, Jain's index and
//! utilisation and writes summary.json / parquet.

use serde::Serialize;

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SimResult {
    pub flows: Vec<FlowResult>,
    /// The bottleneck (a topology's link 0).
    pub link: LinkResult,
    /// A topology's further links, 1, 2, ... (empty for the dumbbell).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<LinkResult>,
    /// Per-flow telemetry, one row per (interval, flow).
    pub flow_series: FlowSeries,
    /// Link telemetry, one row per interval and link.
    pub link_series: LinkSeries,
    /// Events the engine processed (for the benchmark).
    pub events: u64,
    /// Per `[[workload]]`: its arrivals' counts (empty without workloads).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub workloads: Vec<WorkloadResult>,
    /// One record per workload flow that started, in arrival order.
    #[serde(skip_serializing_if = "WorkloadFlows::is_empty")]
    pub workload_flows: WorkloadFlows,
}

/// A workload's arrivals over the whole run ([`crate::workload`]).
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
pub struct WorkloadResult {
    /// Arrivals, started or refused.
    pub arrived: u64,
    /// Arrivals refused: `max_active` of its flows were in progress.
    pub refused: u64,
    /// The most of its flows in progress at once.
    pub peak_active: u32,
}

/// Column-oriented records of the workloads' flows, one row per flow that
/// started, in arrival order: what a completed flow leaves behind when its
/// state is freed (and, at the end of the run, each flow still in progress).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct WorkloadFlows {
    /// Index of its `[[workload]]`.
    pub workload: Vec<u32>,
    /// Its arrival, ns.
    pub start_ns: Vec<u64>,
    /// Its payload bytes (the size drawn; the sender rounds up to whole segments).
    pub size_bytes: Vec<u64>,
    /// Completion time from its arrival, ns; [`WorkloadFlows::NOT_DONE`]
    /// if the run ended first.
    pub fct_ns: Vec<u64>,
    /// Segments it retransmitted.
    pub retransmits: Vec<u64>,
}

impl WorkloadFlows {
    /// `fct_ns` of a flow the run's end found incomplete.
    pub const NOT_DONE: u64 = u64::MAX;

    pub fn is_empty(&self) -> bool {
        self.workload.is_empty()
    }

    pub fn len(&self) -> usize {
        self.workload.len()
    }

    /// Appends one flow's record.
    pub fn push(&mut self, workload: u32, start_ns: u64, size_bytes: u64, fct_ns: Option<u64>, retransmits: u64) {
        self.workload.push(workload);
        self.start_ns.push(start_ns);
        self.size_bytes.push(size_bytes);
        self.fct_ns.push(fct_ns.unwrap_or(Self::NOT_DONE));
        self.retransmits.push(retransmits);
    }

    /// The records reordered: row `order[i]` becomes row `i`.
    pub fn permuted(&self, order: &[usize]) -> Self {
        let pick = |v: &[u64]| order.iter().map(|&i| v[i]).collect();
        WorkloadFlows {
            workload: order.iter().map(|&i| self.workload[i]).collect(),
            start_ns: pick(&self.start_ns),
            size_bytes: pick(&self.size_bytes),
            fct_ns: pick(&self.fct_ns),
            retransmits: pick(&self.retransmits),
        }
    }

    /// Every column by its serialised name (see `FlowSeries::columns`).
    pub fn columns(&self) -> [(&'static str, Column<'_>); 5] {
        let Self { workload, start_ns, size_bytes, fct_ns, retransmits } = self;
        [
            ("workload", Column::U32(workload)),
            ("start_ns", Column::U64(start_ns)),
            ("size_bytes", Column::U64(size_bytes)),
            ("fct_ns", Column::U64(fct_ns)),
            ("retransmits", Column::U64(retransmits)),
        ]
    }
}

#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct FlowResult {
    /// Payload bytes delivered in order to the receiver inside the window:
    /// counted at the instant the receiver's in-order point (`rcv_nxt`)
    /// passes them, whole segments. This is goodput at the receiver, not
    /// the link's view: over a window shorter than the path's delay it may
    /// include bytes the link carried before the window opened (and exceed
    /// the link's capacity for that window), and it excludes bytes still
    /// in flight when the window closes.
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
    /// RTT samples taken inside the window: exact mean, µs; None (JSON
    /// null) if the flow took no sample there.
    pub rtt_mean_us: Option<f64>,
    /// Their 95th percentile by nearest rank, µs, within
    /// [`crate::distribution::RELATIVE_ERROR`] (< 0.1%) above the exact
    /// value; None if no sample.
    pub rtt_p95_us: Option<f64>,
    /// RTO expirations, whole run.
    pub rto_count: u64,
    /// ECN, whole run: data segments the bottleneck marked CE, ...
    pub ce_marked: u64,
    /// ...CE segments the receiver got (it echoes them: ECE or AccECN)...
    pub ce_received: u64,
    /// ...and the sender's `delivered_ce` (classic ECN counts every segment
    /// an ECE ACK delivers, so it may exceed the marks; AccECN counts each).
    pub delivered_ce: u64,
    /// A sized flow: time from its start until the receiver had every
    /// byte in order (flow completion time), ns; None for a bulk flow or
    /// one not complete when the run ended (left out of the JSON then).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fct_ns: Option<u64>,
    /// The flow's ACKs its reverse path's links dropped, whole run (left
    /// out of the JSON when none: always so without a reverse path).
    #[serde(skip_serializing_if = "is_zero")]
    pub acks_dropped: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct LinkResult {
    /// Wire bytes the bottleneck serialised inside the window
    /// `[measure_from, measure_to)`: each packet counts by the part of its
    /// transmission that lies inside the window (at the rate in force while
    /// it was on the wire), so this never exceeds `capacity_bytes_window`.
    pub tx_bytes_window: u64,
    /// Wire bytes the bottleneck could have serialised inside the window:
    /// the integral of the rate schedule (the link applies a rate change at
    /// its instant, also to the packet on the wire), rounded down.
    pub capacity_bytes_window: u64,
    /// Packets the bottleneck transmitted over the whole run.
    pub tx_packets_total: u64,
    /// Packets dropped inside the window.
    pub drops_window: u64,
    /// Packets marked CE (instead of dropped) inside the window.
    pub marks_window: u64,
    /// Queueing (sojourn) delay of packets leaving the queue inside the
    /// window, µs: exact mean, and nearest-rank percentiles within
    /// [`crate::distribution::RELATIVE_ERROR`] (< 0.1%) above the exact
    /// ones. None (JSON null) if no packet left the queue in the window.
    pub queue_delay_mean_us: Option<f64>,
    pub queue_delay_p50_us: Option<f64>,
    pub queue_delay_p95_us: Option<f64>,
    pub queue_delay_p99_us: Option<f64>,
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
    /// Latest delivery-rate sample (TCP_INFO's tcpi_delivery_rate), bit/s.
    pub delivery_rate_bps: Vec<f64>,
    /// The CC's own variable (CCA_TRACE_VAR); NaN where it exports none.
    pub cc_var: Vec<f64>,
    /// The CC's ACK-aggregation estimate (CCA_TRACE_EXTRA_ACKED), packets;
    /// NaN where it reports none.
    pub extra_acked: Vec<f64>,
    /// Bytes of this flow in the bottleneck queue at the sample instant.
    pub queue_bytes: Vec<u64>,
    /// Retransmits sent during the interval.
    pub retransmits: Vec<u64>,
    /// With reverse paths (a topology whose ACKs queue): ACKs that reached
    /// the sender during the interval, and of them the compressed ones
    /// ([`crate::topology::AckClock`]). Empty otherwise, and then not
    /// columns of the table.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub acks: Vec<u32>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub acks_compressed: Vec<u32>,
    /// With reverse paths: the 10th percentile and the median of the gaps
    /// between consecutive ACKs at the sender over the interval, µs (the
    /// first ACK's gap is from the last ACK before the interval); NaN
    /// without one. ACKs a queue compressed arrive back to back, far closer
    /// than the data's serialisation time at the bottleneck: once a tenth
    /// of them are, the 10th percentile drops below it while the median
    /// (the receiver's pace: one ACK per one or two packets) holds.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ack_gap_p10_us: Vec<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ack_gap_p50_us: Vec<f64>,
}

/// Column-oriented link telemetry: one row per sample of the bottleneck,
/// or of every link of a topology (then `link` says which).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct LinkSeries {
    pub t_ns: Vec<u64>,
    /// A topology's link index (0, 1, ...); empty for the dumbbell, whose
    /// table has no such column.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub link: Vec<u32>,
    /// Queue occupancy at the sample instant, bytes.
    pub queue_bytes: Vec<u64>,
    /// Mean sojourn time of packets dequeued during the interval, us
    /// (0 when none left).
    pub queue_delay_us: Vec<f64>,
    /// Drops during the interval.
    pub drops: Vec<u64>,
    /// Link rate in force at the sample instant, bit/s.
    pub rate_bps: Vec<u64>,
    /// Wire bytes serialised during the interval, a packet on the wire
    /// across an interval's edge counting in part on each side (never above
    /// the rate in force times the interval).
    pub tx_bytes: Vec<u64>,
}

/// One telemetry column, borrowed, with its element type: what the
/// Python glue hands over as a typed buffer (numpy `u8`/`u4`/`u1`/`f8`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Column<'a> {
    U64(&'a [u64]),
    U32(&'a [u32]),
    U8(&'a [u8]),
    F64(&'a [f64]),
}

impl Column<'_> {
    /// Numpy's type code of the elements (native byte order).
    pub fn type_code(&self) -> &'static str {
        match self {
            Column::U64(_) => "u8",
            Column::U32(_) => "u4",
            Column::U8(_) => "u1",
            Column::F64(_) => "f8",
        }
    }

    /// The elements' bytes in native byte order.
    pub fn to_ne_bytes(&self) -> Vec<u8> {
        match self {
            Column::U64(v) => v.iter().flat_map(|x| x.to_ne_bytes()).collect(),
            Column::U32(v) => v.iter().flat_map(|x| x.to_ne_bytes()).collect(),
            Column::U8(v) => v.to_vec(),
            Column::F64(v) => v.iter().flat_map(|x| x.to_ne_bytes()).collect(),
        }
    }
}

impl FlowSeries {
    /// Every column by its serialised name (destructured, so that a new
    /// field cannot be left out); the ACK columns only when recorded, as
    /// serde leaves them out otherwise.
    pub fn columns(&self) -> Vec<(&'static str, Column<'_>)> {
        let Self {
            t_ns,
            flow,
            goodput_bps,
            cwnd,
            inflight,
            pacing_rate_bps,
            srtt_us,
            rtt_us,
            min_rtt_us,
            ca_state,
            cc_mode,
            pacing_gain,
            cwnd_gain,
            bw_estimate_bps,
            delivery_rate_bps,
            cc_var,
            extra_acked,
            queue_bytes,
            retransmits,
            acks,
            acks_compressed,
            ack_gap_p10_us,
            ack_gap_p50_us,
        } = self;
        let mut cols = vec![
            ("t_ns", Column::U64(t_ns)),
            ("flow", Column::U32(flow)),
            ("goodput_bps", Column::F64(goodput_bps)),
            ("cwnd", Column::U32(cwnd)),
            ("inflight", Column::U32(inflight)),
            ("pacing_rate_bps", Column::F64(pacing_rate_bps)),
            ("srtt_us", Column::U32(srtt_us)),
            ("rtt_us", Column::U32(rtt_us)),
            ("min_rtt_us", Column::U32(min_rtt_us)),
            ("ca_state", Column::U8(ca_state)),
            ("cc_mode", Column::U32(cc_mode)),
            ("pacing_gain", Column::F64(pacing_gain)),
            ("cwnd_gain", Column::F64(cwnd_gain)),
            ("bw_estimate_bps", Column::F64(bw_estimate_bps)),
            ("delivery_rate_bps", Column::F64(delivery_rate_bps)),
            ("cc_var", Column::F64(cc_var)),
            ("extra_acked", Column::F64(extra_acked)),
            ("queue_bytes", Column::U64(queue_bytes)),
            ("retransmits", Column::U64(retransmits)),
        ];
        if !acks.is_empty() {
            cols.extend([
                ("acks", Column::U32(acks)),
                ("acks_compressed", Column::U32(acks_compressed)),
                ("ack_gap_p10_us", Column::F64(ack_gap_p10_us)),
                ("ack_gap_p50_us", Column::F64(ack_gap_p50_us)),
            ]);
        }
        cols
    }

    /// Room for `rows` more rows in every column.
    pub fn reserve(&mut self, rows: usize) {
        let Self {
            t_ns,
            flow,
            goodput_bps,
            cwnd,
            inflight,
            pacing_rate_bps,
            srtt_us,
            rtt_us,
            min_rtt_us,
            ca_state,
            cc_mode,
            pacing_gain,
            cwnd_gain,
            bw_estimate_bps,
            delivery_rate_bps,
            cc_var,
            extra_acked,
            queue_bytes,
            retransmits,
            acks: _,
            acks_compressed: _,
            ack_gap_p10_us: _,
            ack_gap_p50_us: _,
        } = self;
        t_ns.reserve_exact(rows);
        flow.reserve_exact(rows);
        goodput_bps.reserve_exact(rows);
        cwnd.reserve_exact(rows);
        inflight.reserve_exact(rows);
        pacing_rate_bps.reserve_exact(rows);
        srtt_us.reserve_exact(rows);
        rtt_us.reserve_exact(rows);
        min_rtt_us.reserve_exact(rows);
        ca_state.reserve_exact(rows);
        cc_mode.reserve_exact(rows);
        pacing_gain.reserve_exact(rows);
        cwnd_gain.reserve_exact(rows);
        bw_estimate_bps.reserve_exact(rows);
        delivery_rate_bps.reserve_exact(rows);
        cc_var.reserve_exact(rows);
        extra_acked.reserve_exact(rows);
        queue_bytes.reserve_exact(rows);
        retransmits.reserve_exact(rows);
    }
}

impl LinkSeries {
    /// Every column by its serialised name (see `FlowSeries::columns`).
    /// (`link` only for a topology, as serde leaves it out otherwise.)
    pub fn columns(&self) -> Vec<(&'static str, Column<'_>)> {
        let Self { t_ns, link, queue_bytes, queue_delay_us, drops, rate_bps, tx_bytes } = self;
        let mut cols = vec![("t_ns", Column::U64(t_ns))];
        if !link.is_empty() {
            cols.push(("link", Column::U32(link)));
        }
        cols.extend([
            ("queue_bytes", Column::U64(queue_bytes)),
            ("queue_delay_us", Column::F64(queue_delay_us)),
            ("drops", Column::U64(drops)),
            ("rate_bps", Column::U64(rate_bps)),
            ("tx_bytes", Column::U64(tx_bytes)),
        ]);
        cols
    }

    /// Room for `rows` more rows in every column.
    pub fn reserve(&mut self, rows: usize) {
        let Self { t_ns, link: _, queue_bytes, queue_delay_us, drops, rate_bps, tx_bytes } = self;
        t_ns.reserve_exact(rows);
        queue_bytes.reserve_exact(rows);
        queue_delay_us.reserve_exact(rows);
        drops.reserve_exact(rows);
        rate_bps.reserve_exact(rows);
        tx_bytes.reserve_exact(rows);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The column views name every field as serde does, so that the front
    /// end sees the same columns either way.
    #[test]
    fn column_views_match_the_serialised_fields() {
        let flow = serde_json::to_value(FlowSeries::default()).unwrap();
        let mut names: Vec<&str> = FlowSeries::default().columns().iter().map(|(n, _)| *n).collect();
        names.sort_unstable();
        assert_eq!(names, flow.as_object().unwrap().keys().map(String::as_str).collect::<Vec<_>>());
        let link = serde_json::to_value(LinkSeries::default()).unwrap();
        let mut names: Vec<&str> = LinkSeries::default().columns().iter().map(|(n, _)| *n).collect();
        names.sort_unstable();
        assert_eq!(names, link.as_object().unwrap().keys().map(String::as_str).collect::<Vec<_>>());
        let records = serde_json::to_value(WorkloadFlows::default()).unwrap();
        let mut names: Vec<&str> = WorkloadFlows::default().columns().iter().map(|(n, _)| *n).collect();
        names.sort_unstable();
        assert_eq!(names, records.as_object().unwrap().keys().map(String::as_str).collect::<Vec<_>>());
    }

    #[test]
    fn columns_round_trip_through_native_bytes() {
        let v = [1u32, 0xdead_beef];
        let bytes = Column::U32(&v).to_ne_bytes();
        assert_eq!(bytes.len(), 8);
        assert_eq!(u32::from_ne_bytes(bytes[4..8].try_into().unwrap()), 0xdead_beef);
        assert_eq!(Column::F64(&[f64::NAN]).type_code(), "f8");
    }
}
