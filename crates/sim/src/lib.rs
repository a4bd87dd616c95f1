//! ccarena's simulator engine: a deterministic, packet-level discrete-event
//! simulation of a dumbbell, whose senders run the congestion controls of
//! `cc/*.c` exactly where Linux calls `tcp_congestion_ops`.
//!
//! Where to look:
//! - [`event_loop`]: the event loop and the topology;
//! - [`bottleneck`] and [`qdisc`]: the link, its FIFO and queue disciplines;
//! - [`pipe`]: propagation delay;
//! - [`tcp`]: the TCP sender (rate sampling, pacing, loss recovery, CC calls);
//! - [`receiver`]: cumulative ACK + SACK, delayed ACKs;
//! - [`telemetry`]: per-interval series and window statistics.
//!
//! Entry point: [`run`].

pub mod bottleneck;
pub mod config;
pub mod event_loop;
pub mod event_queue;
pub mod packet;
pub mod pipe;
pub mod qdisc;
pub mod receiver;
pub mod result;
pub mod rng;
pub mod tcp;
pub mod telemetry;

use config::{Aqm, SimConfig};
use result::SimResult;

/// Checks a resolved scenario; the error is one line naming the field.
pub fn validate(cfg: &SimConfig) -> Result<(), String> {
    let b = &cfg.bottleneck;
    let positive = [
        ("duration", cfg.duration_ns),
        ("output.interval", cfg.interval_ns),
        ("bottleneck.rate", b.rate_bps),
        ("bottleneck.buffer", b.buffer_bytes),
        ("mss", cfg.mss as u64),
    ];
    for (field, v) in positive {
        if v == 0 {
            return Err(format!("{field}: must be greater than zero"));
        }
    }
    if cfg.measure_from_ns >= cfg.measure_to_ns || cfg.measure_to_ns > cfg.duration_ns {
        return Err("measure: window must satisfy 0 <= from < to <= duration".into());
    }
    if !(0.0..1.0).contains(&b.loss) {
        return Err(format!("bottleneck.loss: {} is not a probability in [0, 1)", b.loss));
    }
    if b.aqm == Aqm::Red {
        let Some(red) = &b.red else {
            return Err("bottleneck.red: required when aqm = \"red\"".into());
        };
        if red.min_bytes >= red.max_bytes {
            return Err("bottleneck.red: min must be below max".into());
        }
        if !(red.max_p > 0.0 && red.max_p <= 1.0) {
            return Err(format!("bottleneck.red.max_p: {} is not in (0, 1]", red.max_p));
        }
        if !(red.wq > 0.0 && red.wq <= 1.0) {
            return Err(format!("bottleneck.red.wq: {} is not in (0, 1]", red.wq));
        }
    }
    for (i, c) in b.schedule.iter().enumerate() {
        if c.rate_bps == 0 {
            return Err(format!("bottleneck.schedule[{i}].rate: must be greater than zero"));
        }
        if i > 0 && c.at_ns < b.schedule[i - 1].at_ns {
            return Err(format!("bottleneck.schedule[{i}].at: schedule must be in time order"));
        }
    }
    if cfg.flows.is_empty() {
        return Err("flow: at least one [[flow]] is required".into());
    }
    for (i, f) in cfg.flows.iter().enumerate() {
        if cc_native::lookup(&f.cc).is_none() {
            return Err(format!(
                "flow[{i}].cc: unknown congestion control '{}' (known: {})",
                f.cc,
                cc_native::names().join(", ")
            ));
        }
        if f.rtt_ns == 0 {
            return Err(format!("flow[{i}].rtt: must be greater than zero"));
        }
        if f.start_ns >= cfg.duration_ns {
            return Err(format!("flow[{i}].start: must be before the end of the run"));
        }
        if f.stop_ns.is_some_and(|s| s <= f.start_ns) {
            return Err(format!("flow[{i}].stop: must be after start"));
        }
        for (k, c) in f.rtt_schedule.iter().enumerate() {
            if c.rtt_ns == 0 {
                return Err(format!("flow[{i}].rtt_schedule[{k}].rtt: must be greater than zero"));
            }
            if k > 0 && c.at_ns < f.rtt_schedule[k - 1].at_ns {
                return Err(format!("flow[{i}].rtt_schedule[{k}].at: schedule must be in time order"));
            }
        }
    }
    Ok(())
}

/// Validates and runs one scenario.
pub fn run(cfg: &SimConfig) -> Result<SimResult, String> {
    validate(cfg)?;
    Ok(event_loop::Simulation::new(cfg.clone()).run())
}

/// Runs a scenario given as JSON (the form the Python front end sends).
pub fn run_json(config_json: &str) -> Result<SimResult, String> {
    let cfg: SimConfig = serde_json::from_str(config_json).map_err(|e| format!("scenario: {e}"))?;
    run(&cfg)
}
