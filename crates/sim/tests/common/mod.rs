//! Helpers shared by the whole-engine tests (each file in tests/ is its
//! own crate and includes this module).

use sim::config::{BottleneckConfig, EcnMode, FlowConfig, SimConfig, WorkloadConfig};

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
        app: None,
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
        workloads: vec![],
        host: None,
    }
}

/// A workload of CUBIC flows of `size_bytes` over the bottleneck, arriving
/// at `rate_hz` from 0 until `stop_ns`, at most `max_active` at once.
#[allow(dead_code)] // not every test file uses it
pub fn workload(rtt_ms: u64, size_bytes: u64, rate_hz: f64, stop_ns: u64, max_active: u32) -> WorkloadConfig {
    WorkloadConfig {
        cc: "cubic".into(),
        rtt_ns: rtt_ms * MS,
        params: vec![],
        ecn: EcnMode::Off,
        jitter_ns: 0,
        path: vec![],
        reverse_path: vec![],
        start_ns: 0,
        stop_ns,
        arrival_rate_hz: rate_hz,
        size_bytes: Some(size_bytes),
        sizes: vec![],
        max_active,
    }
}
