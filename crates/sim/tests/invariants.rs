//! Whole-engine invariants that hold for any scenario: packet conservation
//! per flow, a queue that never exceeds its buffer, a link that never
//! exceeds its rate, and bit-for-bit determinism.

use sim::config::{Aqm, FlowConfig, RateChange, RedConfig, RttChange, SimConfig};

mod common;
use common::{flow, MS, S};

fn scenario(flows: Vec<FlowConfig>, buffer_bytes: u64, loss: f64) -> SimConfig {
    let mut cfg = common::scenario(flows, 50_000_000, buffer_bytes);
    cfg.bottleneck.loss = loss;
    cfg
}

/// A mix that exercises drops, recovery, pacing and an idle link.
fn busy_mix() -> Vec<SimConfig> {
    let mut red = scenario(vec![flow("cubic", 20, 0), flow("reno", 40, 500)], 200_000, 0.0);
    red.bottleneck.aqm = Aqm::Red;
    red.bottleneck.red = Some(RedConfig { min_bytes: 30_000, max_bytes: 90_000, max_p: 0.1, wq: 0.002, byte_mode: false, ecn: false });
    let mut sched = scenario(vec![flow("bbr", 30, 0)], 300_000, 0.0);
    sched.bottleneck.schedule = vec![RateChange { at_ns: 4 * S, rate_bps: 10_000_000 }, RateChange { at_ns: 7 * S, rate_bps: 80_000_000 }];
    let mut stopping = scenario(vec![flow("bbr", 10, 0), flow("cubic", 50, 0)], 100_000, 0.0);
    stopping.flows[0].stop_ns = Some(5 * S);
    let mut cheating = scenario(vec![flow("bbr", 5, 0), flow("bbr", 5, 0)], 500_000, 0.0);
    cheating.flows[0].rtt_schedule = vec![RttChange { at_ns: 3 * S, rtt_ns: 10 * MS }, RttChange { at_ns: 6 * S, rtt_ns: 5 * MS }];
    cheating.flows[1].rtt_schedule = vec![RttChange { at_ns: 6 * S, rtt_ns: 20 * MS }];
    vec![
        scenario(vec![flow("bbr", 10, 0), flow("bbr", 50, 1000)], 1_000_000, 0.0),
        scenario(vec![flow("bbr", 10, 0), flow("cubic", 10, 0)], 30_000, 0.0),
        scenario(vec![flow("cubic", 100, 0)], 2_000_000, 0.01),
        red,
        sched,
        stopping,
        cheating,
    ]
}

#[test]
fn every_segment_is_delivered_dropped_or_still_in_the_network() {
    for cfg in busy_mix() {
        let r = sim::run(&cfg).expect("valid scenario");
        for (i, f) in r.flows.iter().enumerate() {
            assert!(f.sent_segments > 1000, "flow {i} barely sent: {f:?}");
            assert_eq!(
                f.sent_segments,
                f.arrived_segments + f.dropped_segments + f.in_network_segments,
                "conservation, flow {i} of {cfg:?}"
            );
        }
    }
}

#[test]
fn queue_never_exceeds_the_buffer() {
    for cfg in busy_mix() {
        let r = sim::run(&cfg).unwrap();
        assert!(r.link.max_queue_bytes <= cfg.bottleneck.buffer_bytes, "{:?}", r.link);
        assert!(r.link_series.queue_bytes.iter().all(|&q| q <= cfg.bottleneck.buffer_bytes));
    }
}

#[test]
fn link_never_exceeds_its_rate() {
    for cfg in busy_mix() {
        let r = sim::run(&cfg).unwrap();
        let ls = &r.link_series;
        for k in 0..ls.t_ns.len() {
            // Bytes serialised in an interval (a packet across an edge
            // counting in part on each side), at most the rate in force
            // (the larger of the rates at both ends, for a change inside it).
            let rate = ls.rate_bps[k].max(if k > 0 { ls.rate_bps[k - 1] } else { 0 });
            let cap = rate as u128 * cfg.interval_ns as u128 / 8 / 1_000_000_000;
            assert!(ls.tx_bytes[k] as u128 <= cap, "interval {k}: {} > {cap}", ls.tx_bytes[k]);
        }
        assert!(r.link.tx_bytes_window <= r.link.capacity_bytes_window);
    }
}

#[test]
fn same_scenario_and_seed_give_identical_results() {
    for cfg in busy_mix() {
        let a = serde_json::to_string(&sim::run(&cfg).unwrap()).unwrap();
        let b = serde_json::to_string(&sim::run(&cfg).unwrap()).unwrap();
        assert!(a == b, "two runs of {cfg:?} differ");
    }
}

#[test]
fn a_stop_hook_that_never_stops_changes_nothing_and_one_that_does_stops_the_run() {
    let poll = sim::event_loop::STOP_POLL_EVENTS;
    let mut checked = 0;
    for cfg in busy_mix() {
        let plain = sim::run(&cfg).unwrap();
        if plain.events < 2 * poll {
            continue; // too short to be polled twice
        }
        let mut polls = 0u64;
        let mut clock = Vec::new();
        let hooked = sim::run_with(&cfg, &mut |now_ns| {
            polls += 1;
            clock.push(now_ns);
            false
        })
        .unwrap()
        .expect("not stopped");
        let json = |r: &sim::result::SimResult| serde_json::to_string(r).unwrap();
        assert!(json(&plain) == json(&hooked), "the hook changed the run of {cfg:?}");
        // Polled once every STOP_POLL_EVENTS events.
        assert_eq!(polls, hooked.events / poll);
        // With the simulated time (for progress): never backwards, within the run.
        assert!(clock.windows(2).all(|w| w[0] <= w[1]), "{clock:?}");
        assert!(clock.iter().all(|&t| t <= cfg.duration_ns) && clock[0] > 0, "{clock:?}");
        // Stopping at the first poll abandons the run.
        let mut asked = 0;
        let stopped = sim::run_with(&cfg, &mut |_| {
            asked += 1;
            true
        });
        assert_eq!((stopped, asked), (Ok(None), 1));
        checked += 1;
    }
    assert!(checked >= 3, "{checked}");
    // A rejected scenario never starts.
    let mut bad = busy_mix().remove(0);
    bad.flows.clear();
    assert!(sim::run_with(&bad, &mut |_| panic!("not polled")).unwrap_err().starts_with("flow:"));
}

#[test]
fn bad_scenarios_name_the_field() {
    let mut c = scenario(vec![flow("nosuchcc", 10, 0)], 100_000, 0.0);
    let e = sim::run(&c).unwrap_err();
    assert!(e.starts_with("flow[0].cc: unknown congestion control 'nosuchcc'"), "{e}");
    c.flows = vec![];
    assert!(sim::run(&c).unwrap_err().starts_with("flow:"));
    let mut c = scenario(vec![flow("reno", 10, 0)], 0, 0.0);
    assert!(sim::run(&c).unwrap_err().starts_with("bottleneck.buffer:"));
    c.bottleneck.buffer_bytes = 1000;
    c.bottleneck.aqm = Aqm::Red;
    assert!(sim::run(&c).unwrap_err().starts_with("bottleneck.red:"));
    let e = sim::run_json("{\"duration_ns\": 1, \"bogus\": 2}").unwrap_err();
    assert!(e.starts_with("scenario:"), "{e}");
}

#[test]
fn an_rtt_change_moves_the_flows_rtt() {
    let mut c = scenario(vec![flow("cubic", 10, 0)], 10_000_000, 0.0);
    c.flows[0].rtt_schedule = vec![RttChange { at_ns: 5 * S, rtt_ns: 40 * MS }];
    let r = sim::run(&c).unwrap();
    let fs = &r.flow_series;
    let min_rtt_at = |t_s: u64| fs.min_rtt_us[fs.t_ns.iter().position(|&t| t == t_s * S).unwrap()];
    let rtt_at = |t_s: u64| fs.rtt_us[fs.t_ns.iter().position(|&t| t == t_s * S).unwrap()];
    // Before the change the path is 10 ms (plus queueing); after it, every
    // sample is at least the new 40 ms base.
    assert!((10_000..12_000).contains(&min_rtt_at(4)), "{}", min_rtt_at(4));
    assert!(rtt_at(8) >= 40_000, "{}", rtt_at(8));
}
