//! The engine's limits: the largest scenario it promises to run correctly
//! and in the memory of an ordinary machine. [`crate::validate`] enforces
//! them, and the Python front end reads the same values (`_core.limits()`)
//! to reject a scenario with the field's name before it reaches Rust.
//!
//! Each limit says why it is where it is. They are not tuning knobs: raise
//! one only with the arithmetic or the memory it protects.

/// Simulated time, ns: one day. Times are u64 ns (584 years), so this
/// is not about overflow but about sense: nobody waits for a longer run, and
/// at the rates where the segment limit ([`MAX_LINK_SEGMENTS`]) does not bind
/// first, a day is already ~10^7 RTTs.
pub const MAX_DURATION_NS: u64 = 86_400 * 1_000_000_000;

/// Bottleneck rate (initial and every scheduled one), bit/s: 1 Tbit/s. A
/// full packet still takes 12 ns to serialise, so integer-ns transmission
/// times keep their meaning; beyond any single link the BBR literature
/// studies (400 Gbit/s Ethernet is the fastest deployed).
pub const MAX_RATE_BPS: u64 = 1_000_000_000_000;

/// Bottleneck buffer, bytes: 4 GiB, i.e. 2.8M full packets. Every packet
/// the buffer holds costs ~100 bytes of engine state (its queue entry and
/// its sender's scoreboard entry), so a full buffer stays under ~300 MB;
/// and 10 BDP at 10 Gbit/s x 200 ms (2.5 GB) still fits. It bounds the
/// other byte sizes too: RED's thresholds and a step marker's (compared
/// with a queue that never holds more) and a policer's burst (a bucket
/// deeper than any buffer; Linux's act_police keeps it in a u32 too).
pub const MAX_BUFFER_BYTES: u64 = 1 << 32;

/// A flow's base RTT (initial and every scheduled one), ns: 10 s. Longer
/// than any real path (a geostationary satellite hop is ~600 ms), far below
/// where Linux's µs RTT fields overflow (`srtt_us` is kept << 3 in a u32:
/// 536 s) or the 120-s RTO cap would fire before every ACK.
pub const MAX_RTT_NS: u64 = 10 * 1_000_000_000;

/// Simulated flows, after `count` expansion: 100,000. A flow costs a few
/// KB of engine state and result (measured at 10 Gbit/s: 10,000 flows for
/// 2 s add 87 MB to the interpreter's RSS, 100,000 flows for 1 s 360 MB,
/// 600 MB once Python has decoded the result), and a flow index is a u32.
pub const MAX_FLOWS: u64 = 100_000;

/// Telemetry rows: (duration / interval) samples × (flows + 1) rows (one
/// per flow and one for the link): 8 million. The whole result crosses to
/// Python as JSON and is decoded there; measured peak RSS per row (1 ms-
/// scale intervals, 11 flows, 2.2M and 4.4M rows): ~160 bytes when the
/// engine returns (its columns and the JSON text, ~70 bytes a row), ~490
/// bytes after `json.loads`, ~650 bytes through `ccarena run` (tables,
/// parquet). 8M rows thus peak near 5.2 GB through the CLI, so that the
/// two such runs `ccarena reproduce` may hold at once on a 2-core, 24-GB
/// machine still leave half of it free.
pub const MAX_SERIES_ROWS: u64 = 8_000_000;

/// Full-size segments the bottleneck can carry in one run, at the largest
/// rate the scenario gives it (initial or scheduled) for the whole duration:
/// 3 × 2^30. Segment numbers are u32 per flow (as Linux's sequence space,
/// but in segments and without wrap-around), and a flow's highest segment
/// is at most what the link carried plus its window; 2^30 of headroom is
/// far above any window ([`MAX_BUFFER_BYTES`] holds < 2^22 packets). At
/// 10 Gbit/s this allows 65 minutes, at 100 Gbit/s 6.5 minutes.
pub const MAX_LINK_SEGMENTS: u64 = 3 << 30;

/// Bytes of one packet on the wire (payload + headers): the largest IPv4
/// packet. Keeps per-packet arithmetic (bits × 10^9) inside u64.
pub const MAX_PACKET_BYTES: u64 = 65_535;

/// Delivery opportunities in one period of a link trace (its lines):
/// 10^7, ~28 h of a 12 Mbit/s trace. The engine holds a trace's instants
/// as LEB128 gaps in ms (~1 byte each, [`crate::trace_instants`]), and the
/// front end the same bytes as base64 text: at the limit ~12 MB and 16 MB,
/// so that a run with such a trace stays under 200 MB of peak RSS through
/// `ccarena run` (bench/bench_memory.py measures it).
pub const MAX_TRACE_OPPORTUNITIES: u64 = 10_000_000;

/// A link trace's period (its last instant), ns: one day, as the longest
/// run ([`MAX_DURATION_NS`]), so a longer trace could never be played
/// whole. Its instants in ms then fit u32 (86.4M), as the engine keeps them.
pub const MAX_TRACE_PERIOD_NS: u64 = MAX_DURATION_NS;

/// The queue disciplines' times (CoDel's and FQ-CoDel's `target` and
/// `interval`, PIE's `target`, `tupdate` and `burst`) and a step marker's
/// time threshold, ns: 2^32 - 1 us (~71.6 min), what Linux's netlink
/// attributes for them (u32 microseconds) can say. It also keeps CoDel's
/// `now + 16 × interval` (its resume window) and PIE's 64-ns tick counts
/// far inside u64 and i64.
pub const MAX_AQM_TIME_NS: u64 = u32::MAX as u64 * 1_000;

/// PIE's shortest probability update interval, ns: 1 ms. Linux runs the
/// update from a timer in jiffies (1 ms at HZ=1000, its finest), and the
/// engine runs every update due before each arrival or departure, so a
/// 1-ns `tupdate` would cost 10^9 updates per simulated second.
pub const MIN_PIE_TUPDATE_NS: u64 = 1_000_000;

/// PIE's gains `alpha` and `beta`, sixteenths: 32 (a gain of 2), Linux's
/// range for both (`tc qdisc ... pie alpha 0..32 beta 0..32`).
pub const MAX_PIE_GAIN_16THS: u64 = 32;

/// Packets in a queue discipline's `limit` (CoDel, FQ-CoDel, PIE) or a
/// step marker's packet threshold: 2^22, above the most full-size packets
/// the largest buffer holds ([`MAX_BUFFER_BYTES`] / 1514 = 2.84M), so no
/// larger value could ever bind; queue lengths are u32.
pub const MAX_QUEUE_PACKETS: u64 = 1 << 22;

/// A DRR quantum (`fq.quantum`, `fq_codel.quantum`), bytes: at least 256
/// and at most 1 MiB, as Linux's fq_codel (it raises smaller quanta to 256
/// and rejects larger ones). Below, DRR spends up to 1514 / quantum rounds
/// per packet for nothing; the quantum is a u32.
pub const MIN_QUANTUM_BYTES: u64 = 256;
pub const MAX_QUANTUM_BYTES: u64 = 1 << 20;

/// FQ-CoDel's buckets (`fq_codel.flows`): 65536, Linux's limit (a
/// bucket index is a u16 there); the engine keeps min(flows, the
/// scenario's flows) buckets.
pub const MAX_FQ_CODEL_FLOWS: u64 = 65_536;

/// A host model's delays (`host.*_ns`: a start spread, an ACK's
/// turnaround, a timer's lateness, a stall), ns: 1 s. The measured Linux
/// models' longest stall is ~9 ms (135 ms in a run the hypervisor stole
/// from); a second is far beyond any host and
/// keeps every sum of them with the run's times far inside u64.
pub const MAX_HOST_DELAY_NS: u64 = 1_000_000_000;

/// A host model's stalls per second (`host.stalls_per_s`): 1000. Each one
/// is an interval the engine draws ahead of time; the measured Linux
/// models have 16 (idle) and 3 (busy).
pub const MAX_HOST_STALL_RATE_HZ: u64 = 1_000;

/// A host's tick rate (`host.hz`, CONFIG_HZ), Hz: 1 to 1000, and a divisor
/// of 1000, so that a tick is a whole number of ms (the congestion controls
/// count jiffies in ms; Linux offers 100, 250, 300 and 1000: all but 300).
pub const MIN_HOST_HZ: u64 = 1;
pub const MAX_HOST_HZ: u64 = 1_000;

/// Points of one host distribution (`host.ack_delay_ns`, ...): 64 (a
/// measured one has 18); each draw searches them.
pub const MAX_HOST_POINTS: u64 = 64;

/// Largest flow size, bytes (1 TiB): its segments (1448 B) stay far below
/// the sender's 32-bit sequence space and [`MAX_LINK_SEGMENTS`].
pub const MAX_FLOW_BYTES: u64 = 1 << 40;

/// Links in a topology (`[[link]]`): 64, more than any topology the
/// fairness literature studies (a parking lot has a handful). Each link
/// keeps per-flow counters for its flows and their ACKs (16 bytes × 2 ×
/// flows), and every packet's next hop is found by a scan of its path, so
/// a path is at most this long.
pub const MAX_LINKS: u64 = 64;

/// Workload flows in progress at once, over all `[[workload]]`s (their
/// `max_active` added up): 10,000. Each slot costs per-flow counters in
/// every link for its data and its ACKs (~60 bytes × 2 × links) from the
/// start, and a flow in progress its sender and receiver (a few KB plus
/// its window's segments); so a run's memory is bounded by this, not by
/// how many flows arrive ([`crate::flow_table`]). Far above the flows a
/// link carries at once at any load below 1 (at 60% load of the web-search
/// sizes, a few tens).
pub const MAX_ACTIVE_FLOWS: u64 = 10_000;

/// Workload arrivals a run may expect (each workload's arrival rate times
/// its arrival window, added up): 10^6. Each arrival leaves a record in the
/// engine (36 bytes) and a row of flows.parquet, and the front end runs
/// the flows' sizes alone ([`crate::alone`]); 10^6 rows stay in the
/// memory of an ordinary machine through `ccarena run` (bench/bench_memory.py
/// measures 100,000). The count itself is random (Poisson about this mean).
pub const MAX_WORKLOAD_ARRIVALS: u64 = 1_000_000;

/// A workload's arrival rate, per second: 10^8 (10 ns between arrivals on
/// average). Arrival times are whole ns (gaps rounded), so a faster
/// process would be a different one; with [`MAX_WORKLOAD_ARRIVALS`] such a
/// rate can only last 10 ms.
pub const MAX_ARRIVAL_RATE_HZ: u64 = 100_000_000;

/// Points of a workload's size distribution (the lines of its file):
/// 1024. The published ones have a dozen (web search 12, data mining 13);
/// each draw searches them.
pub const MAX_SIZE_POINTS: u64 = 1024;

/// ON/OFF cycles an application-limited flow may expect over the run (the
/// run's duration over its ON plus OFF lengths, whole cycles): 10^6. The
/// simulator draws the periods as it goes, but the live engine's agent is
/// given every ON period before the run ([`crate::app::on_periods`]): 16
/// bytes each here and ~100 as Python's tuples, so 10^6 stays near 100 MB,
/// where 1-ns periods over 2 s asked for 16 GB. (Drawn exponentially, the
/// count is random about this mean.)
pub const MAX_APP_CYCLES: u64 = 1_000_000;

/// Whole ON/OFF cycles of `on_ns` + `off_ns` in `duration_ns` (what
/// [`MAX_APP_CYCLES`] bounds; the front end computes the same quotient).
pub fn app_cycles(duration_ns: u64, on_ns: u64, off_ns: u64) -> u64 {
    duration_ns / on_ns.saturating_add(off_ns).max(1)
}

/// Every limit by its name in lower case (the keys of `_core.limits()`).
/// A name ends with its unit (`_ns`, `_bps`, `_bytes`, `_packets`, ...);
/// `max_` bounds from above, `min_` from below.
pub fn all() -> [(&'static str, u64); 29] {
    [
        ("max_duration_ns", MAX_DURATION_NS),
        ("max_rate_bps", MAX_RATE_BPS),
        ("max_buffer_bytes", MAX_BUFFER_BYTES),
        ("max_rtt_ns", MAX_RTT_NS),
        ("max_flows", MAX_FLOWS),
        ("max_series_rows", MAX_SERIES_ROWS),
        ("max_link_segments", MAX_LINK_SEGMENTS),
        ("max_packet_bytes", MAX_PACKET_BYTES),
        ("max_trace_opportunities", MAX_TRACE_OPPORTUNITIES),
        ("max_trace_period_ns", MAX_TRACE_PERIOD_NS),
        ("max_aqm_time_ns", MAX_AQM_TIME_NS),
        ("min_pie_tupdate_ns", MIN_PIE_TUPDATE_NS),
        ("max_pie_gain_16ths", MAX_PIE_GAIN_16THS),
        ("max_queue_packets", MAX_QUEUE_PACKETS),
        ("min_quantum_bytes", MIN_QUANTUM_BYTES),
        ("max_quantum_bytes", MAX_QUANTUM_BYTES),
        ("max_fq_codel_flows", MAX_FQ_CODEL_FLOWS),
        ("max_host_delay_ns", MAX_HOST_DELAY_NS),
        ("max_host_stall_rate_hz", MAX_HOST_STALL_RATE_HZ),
        ("max_host_points", MAX_HOST_POINTS),
        ("min_host_hz", MIN_HOST_HZ),
        ("max_host_hz", MAX_HOST_HZ),
        ("max_flow_bytes", MAX_FLOW_BYTES),
        ("max_links", MAX_LINKS),
        ("max_active_flows", MAX_ACTIVE_FLOWS),
        ("max_workload_arrivals", MAX_WORKLOAD_ARRIVALS),
        ("max_arrival_rate_hz", MAX_ARRIVAL_RATE_HZ),
        ("max_size_points", MAX_SIZE_POINTS),
        ("max_app_cycles", MAX_APP_CYCLES),
    ]
}

/// Arrivals a workload expects: `rate_hz` over `[start_ns, stop_ns)` (what
/// [`MAX_WORKLOAD_ARRIVALS`] bounds, added up over the workloads). The
/// front end computes the same product in the same order.
pub fn expected_arrivals(rate_hz: f64, start_ns: u64, stop_ns: u64) -> f64 {
    rate_hz * (stop_ns.saturating_sub(start_ns) as f64 / 1e9)
}

/// Telemetry rows a run of `duration_ns` sampled every `interval_ns`
/// produces with `flows` flows and `links` links, a row each per sample
/// (what [`MAX_SERIES_ROWS`] bounds).
pub fn series_rows(duration_ns: u64, interval_ns: u64, flows: u64, links: u64) -> u128 {
    (duration_ns / interval_ns.max(1)) as u128 * (flows as u128 + links as u128)
}

/// Full-size segments a link at `max_rate_bps` carries in `duration_ns`
/// (what [`MAX_LINK_SEGMENTS`] bounds), rounded down.
pub fn link_segments(max_rate_bps: u64, duration_ns: u64, packet_bytes: u64) -> u128 {
    max_rate_bps as u128 * duration_ns as u128 / (8 * 1_000_000_000 * packet_bytes.max(1) as u128)
}

// The limits agree with each other and with the engine's arithmetic,
// checked when the crate compiles.
const _: () = {
    // A flow's segments fit the sender's 32-bit sequence numbers.
    assert!(MAX_FLOW_BYTES / 1448 < 1 << 31);
    // The headroom of the segment limit covers a full buffer.
    assert!(MAX_BUFFER_BYTES / 1514 < 1 << 30);
    assert!(MAX_LINK_SEGMENTS + (1 << 30) <= 1 << 32);
    // A full packet at the largest rate takes at least a nanosecond.
    assert!(1514 * 8 * 1_000_000_000 / MAX_RATE_BPS >= 1);
    // The end of the run plus the largest RTT and the largest RTO back-off
    // (120 s) cannot overflow.
    assert!(MAX_DURATION_NS.checked_add(MAX_RTT_NS + 120 * 1_000_000_000).is_some());
    // The largest packet's nanobits plus a carried remainder fit u64.
    assert!((MAX_PACKET_BYTES * 8 * 1_000_000_000).checked_add(MAX_RATE_BPS).is_some());
    // 10,000-flow scenarios (the example) are allowed.
    assert!(MAX_FLOWS >= 10_000);
    // A trace's instants in ms fit u32.
    assert!(MAX_TRACE_PERIOD_NS / 1_000_000 <= u32::MAX as u64);
    // CoDel's resume window after the end of the longest run fits u64.
    assert!((MAX_DURATION_NS + 16 * MAX_AQM_TIME_NS).checked_mul(2).is_some());
    // The packet limits hold every full packet of the largest buffer and fit u32.
    assert!(MAX_BUFFER_BYTES / 1514 <= MAX_QUEUE_PACKETS && MAX_QUEUE_PACKETS <= u32::MAX as u64);
    assert!(MIN_QUANTUM_BYTES > 0 && MAX_QUANTUM_BYTES <= u32::MAX as u64);
    // Flow keys (flows and workload slots, twice with ACKs) fit u32.
    assert!(2 * (MAX_FLOWS + MAX_ACTIVE_FLOWS) <= u32::MAX as u64);
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_and_segment_counts() {
        // 120 s at 100 ms with two flows: 1200 samples of 3 rows.
        assert_eq!(series_rows(120_000_000_000, 100_000_000, 2, 1), 3600);
        // 10 Gbit/s for 1 s: 825,627 full packets of 1514 bytes.
        assert_eq!(link_segments(10_000_000_000, 1_000_000_000, 1514), 825_627);
    }
}
