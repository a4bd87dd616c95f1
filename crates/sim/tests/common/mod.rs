//! Helpers shared by the whole-engine tests (each file in tests/ is its
//! own crate and includes this module).

use sim::config::FlowConfig;

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
        params: vec![],
        rtt_schedule: vec![],
    }
}
