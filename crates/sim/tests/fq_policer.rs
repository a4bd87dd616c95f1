//! Whole-engine checks of fair queueing (`aqm = fq`) and the policer: the
//! invariants of invariants.rs still hold when a drop can hit an already
//! queued packet of another flow, the flows' shares are what DRR promises,
//! and the policer caps a flow at its rate.

use std::num::{NonZeroU32, NonZeroU64};

use sim::config::{Aqm, FlowConfig, FqConfig, PolicerConfig, SimConfig};

mod common;
use common::flow;

fn scenario(flows: Vec<FlowConfig>, rate_bps: u64, buffer_bytes: u64) -> SimConfig {
    let mut cfg = common::scenario(flows, rate_bps, buffer_bytes);
    cfg.bottleneck.aqm = Aqm::Fq;
    cfg
}

fn policer(rate_bps: u64, burst_bytes: u64) -> Option<PolicerConfig> {
    Some(PolicerConfig {
        rate_bps: NonZeroU64::new(rate_bps).unwrap(),
        burst_bytes: NonZeroU64::new(burst_bytes).unwrap(),
    })
}

/// fq with drops (small buffer, mixed algorithms, a late starter, a half
/// quantum), and policers in front of fq and of droptail.
fn mix() -> Vec<SimConfig> {
    let shallow = scenario(vec![flow("cubic", 20, 0), flow("bbr", 40, 0), flow("reno", 10, 1000)], 50_000_000, 60_000);
    let mut half_quantum = scenario(vec![flow("bbr", 10, 0), flow("bbr", 50, 0)], 50_000_000, 100_000);
    half_quantum.bottleneck.fq = Some(FqConfig { quantum_bytes: NonZeroU32::new(757).unwrap() });
    let mut policed_fq = scenario(vec![flow("cubic", 20, 0), flow("bbr", 20, 0)], 50_000_000, 200_000);
    policed_fq.bottleneck.policer = policer(30_000_000, 64_000);
    let mut policed_fifo = scenario(vec![flow("bbr", 30, 0)], 50_000_000, 500_000);
    policed_fifo.bottleneck.aqm = Aqm::Droptail;
    policed_fifo.bottleneck.policer = policer(20_000_000, 30_000);
    vec![shallow, half_quantum, policed_fq, policed_fifo]
}

#[test]
fn conservation_buffer_and_determinism_hold_under_fq_and_policing() {
    for cfg in mix() {
        let r = sim::run(&cfg).expect("valid scenario");
        let total_drops: u64 = r.link_series.drops.iter().sum();
        assert!(total_drops > 0, "the mix is meant to drop: {cfg:?}");
        let mut dropped = 0;
        for (i, f) in r.flows.iter().enumerate() {
            // (CUBIC behind a policer shared with BBR gets few tokens:
            // ~800 segments in 10 s.)
            assert!(f.sent_segments > 500, "flow {i} barely sent: {f:?}");
            assert_eq!(
                f.sent_segments,
                f.arrived_segments + f.dropped_segments + f.in_network_segments,
                "conservation, flow {i} of {cfg:?}"
            );
            dropped += f.dropped_segments;
        }
        // Every drop is charged to one flow (the series stops at the last
        // sample; per-flow counts run to the end).
        assert!(dropped >= total_drops, "{dropped} per-flow drops < {total_drops} link drops");
        assert!(r.link.max_queue_bytes <= cfg.bottleneck.buffer_bytes);
        let again = sim::run(&cfg).unwrap();
        assert!(serde_json::to_string(&r).unwrap() == serde_json::to_string(&again).unwrap(), "{cfg:?} differs");
    }
}

#[test]
fn a_policed_flow_gets_the_policer_rate_however_fast_the_link() {
    // One CUBIC flow, 100 Mbit/s link, 30 Mbit/s policer: the wire bytes
    // it gets through in the window are at most the policer's rate (plus
    // its burst), and a loss-based flow keeps it busy most of the time.
    let mut c = scenario(vec![flow("cubic", 20, 0)], 100_000_000, 1_000_000);
    c.bottleneck.aqm = Aqm::Droptail;
    c.bottleneck.policer = policer(30_000_000, 64_000);
    let r = sim::run(&c).unwrap();
    let window_s = (c.measure_to_ns - c.measure_from_ns) as f64 / 1e9;
    let wire_mbps = r.link.tx_bytes_window as f64 * 8.0 / window_s / 1e6;
    assert!(wire_mbps <= 30.0 + 64_000.0 * 8.0 / window_s / 1e6 + 0.2, "{wire_mbps}");
    // Measured: 27.7 Mbit/s of wire bytes (CUBIC's sawtooth against a
    // bucket that does not queue); the floor leaves room for model changes.
    assert!(wire_mbps > 22.0, "{wire_mbps}");
}
