//! Helpers shared by the whole-engine tests (each file in tests/ is its
//! own crate and includes this module).

use sim::config::{BottleneckConfig, FlowConfig, SimConfig};

/// ns per ms and per s.
pub const MS: u64 = 1_000_000;
pub const S: u64 = 1_000_000_000;

/// A bulk flow with no parameters and no RTT schedule.
pub fn flow(cc: &str, rtt_ms: u64, start_ms: u64) -> FlowConfig {
    FlowConfig {
        cc: cc.into(),
        rtt_ns: rtt_ms * MS,
        start_ns: start_ms * MS,
        stop_ns: None,
        size_bytes: None,
        params: vec![],
        rtt_schedule: vec![],
        ecn: Default::default(),
        jitter_ns: 0,
        path: vec![],
        reverse_path: vec![],
    }
}

/// 10 s (measured from 3 s) over a droptail link with no loss; tests
/// change the bottleneck fields they exercise.
pub fn scenario(flows: Vec<FlowConfig>, rate_bps: u64, buffer_bytes: u64) -> SimConfig {
    SimConfig {
        duration_ns: 10 * S,
        seed: 1,
        measure_from_ns: 3 * S,
        measure_to_ns: 10 * S,
        interval_ns: 100 * MS,
        mss: 1448,
        wire_overhead: 66,
        bottleneck: BottleneckConfig::droptail(rate_bps, buffer_bytes),
        flows,
        links: vec![],
        host: None,
    }
}
