//! ccarena's simulator engine: a deterministic, packet-level discrete-event
//! simulation of a dumbbell or a topology of links, whose senders run the congestion controls of
//! `cc/*.c` exactly where Linux calls `tcp_congestion_ops`.
//!
//! Where to look:
//! - [`event_loop`]: the event loop;
//! - [`topology`]: a link (queue, serialiser, delay), paths, ACKs in links;
//! - [`bottleneck`] and [`qdisc`]: a link's queue, its FIFO and queue disciplines;
//! - [`pipe`]: propagation delay; [`host`]: what real hosts add to the
//!   timing (measured on Linux); [`jitter`]: a flow's extra ACK delay;
//! - [`flow_table`]: the flows by slot (a flow key in every link);
//!   [`workload`]: sized flows arriving by a Poisson process, in slots
//!   they free when done; [`alone`]: a flow's completion time alone;
//! - [`tcp`]: the TCP sender (rate sampling, pacing, loss recovery, CC
//!   calls); [`app`]: an application that writes less than it could send;
//! - [`receiver`]: cumulative ACK + SACK, delayed ACKs;
//! - [`telemetry`] and [`distribution`]: per-interval series and window
//!   statistics in bounded memory;
//! - [`limits`] and [`validate()`]: what the engine accepts.
//!
//! Entry points: [`run`], or [`run_with`] for a run that can be stopped.

pub mod alone;
pub mod app;
pub mod bottleneck;
pub mod config;
pub mod distribution;
pub mod event_loop;
pub mod event_queue;
pub mod flow_table;
pub mod host;
pub mod jitter;
pub mod limits;
pub mod packet;
pub mod pipe;
pub mod qdisc;
pub mod quantiles;
pub mod rcvbuf;
pub mod receiver;
pub mod result;
pub mod rng;
pub mod tcp;
pub mod telemetry;
pub mod topology;
pub mod trace_instants;
pub mod trace_link;
pub mod workload;
mod validate;

use config::SimConfig;
use result::SimResult;
pub use validate::validate;

/// Validates and runs one scenario.
pub fn run(cfg: &SimConfig) -> Result<SimResult, String> {
    validate(cfg)?;
    Ok(event_loop::Simulation::new(cfg.clone()).run())
}

/// Validates and runs one scenario, asking `should_stop(now_ns)` every
/// [`event_loop::STOP_POLL_EVENTS`] events whether to give up (e.g. on
/// Ctrl-C); `now_ns` is the simulated time, for a progress report.
/// `Ok(None)` if it did; the hook cannot change the result of a run it
/// lets finish.
pub fn run_with(cfg: &SimConfig, should_stop: &mut dyn FnMut(u64) -> bool) -> Result<Option<SimResult>, String> {
    validate(cfg)?;
    Ok(event_loop::Simulation::new(cfg.clone()).run_with(should_stop))
}

/// Parses a scenario given as JSON (the form the Python front end sends).
pub fn parse_config(config_json: &str) -> Result<SimConfig, String> {
    serde_json::from_str(config_json).map_err(|e| format!("scenario: {e}"))
}

/// Runs a scenario given as JSON.
pub fn run_json(config_json: &str) -> Result<SimResult, String> {
    run(&parse_config(config_json)?)
}
