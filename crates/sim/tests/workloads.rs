//! Workloads in the whole engine: flows arrive, complete, leave their
//! records and free their slots for later ones, in every kind of link;
//! and a workload changes nothing of the `[[flow]]`s' randomness.

mod common;
use common::{flow, MS, S};
use sim::config::{Aqm, BottleneckConfig, FqCodelConfig, HostConfig, WorkloadConfig};
use sim::result::WorkloadFlows;

/// CUBIC flows (10 ms) of `size_bytes` arriving at `rate_hz` over the
/// whole run through the bottleneck, at most `max_active` at once.
fn workload(size_bytes: u64, rate_hz: f64, max_active: u32) -> WorkloadConfig {
    common::workload(10, size_bytes, rate_hz, 10 * S, max_active)
}

fn done(r: &WorkloadFlows) -> usize {
    r.fct_ns.iter().filter(|&&f| f != WorkloadFlows::NOT_DONE).count()
}

#[test]
fn flows_arrive_complete_and_leave_a_record_each() {
    // 100 KB flows at 50/s on 100 Mbit/s: 40% load, ~500 flows in 10 s.
    let mut cfg = common::scenario(vec![], 100_000_000, 125_000);
    cfg.workloads = vec![workload(100_000, 50.0, 1000)];
    let r = sim::run(&cfg).unwrap();
    let w = r.workloads[0];
    let rec = &r.workload_flows;
    assert!((450..=550).contains(&w.arrived), "{w:?}");
    assert_eq!((w.refused, rec.len() as u64), (0, w.arrived));
    // In arrival order, all complete but those that arrived in the last
    // few RTTs; none much faster than alone (3 round trips of slow start
    // and a tail: 36.3 ms; a completion time counts from the handshake's
    // end). Some are faster, by up to 17.2% (30.1 ms): alone, the
    // sender defers its last 7 segments a round trip (TSO deferral,
    // tcp_tso_should_defer), which the larger RTT estimate of a flow that
    // met a queue at its start does not.
    assert!(rec.start_ns.windows(2).all(|p| p[0] <= p[1]));
    assert!(done(rec) + 5 >= rec.len(), "{} of {} done", done(rec), rec.len());
    let alone = sim::alone::fcts_alone(&cfg, 0, &[100_000], &mut |_| false).unwrap().unwrap()[0].unwrap();
    assert_eq!(alone, 36_332_320);
    let fcts: Vec<u64> = rec.fct_ns.iter().copied().filter(|&f| f != WorkloadFlows::NOT_DONE).collect();
    assert!(fcts.iter().all(|&f| f * 5 >= alone * 4), "fastest {:?}", fcts.iter().min());
    let median = { let mut v = fcts.clone(); v.sort_unstable(); v[v.len() / 2] };
    assert!(median >= alone, "median {median}");
    assert!(w.peak_active < 20, "{w:?}");
}

#[test]
fn arrivals_beyond_max_active_are_refused_and_slots_are_reused() {
    // Offered 4x the link (1 MB at 50/s on 100 Mbit/s) with room for 3 at
    // once: the slots are taken over and over, the rest refused.
    let mut cfg = common::scenario(vec![], 100_000_000, 250_000);
    cfg.workloads = vec![workload(1_000_000, 50.0, 3)];
    let r = sim::run(&cfg).unwrap();
    let w = r.workloads[0];
    assert_eq!(w.peak_active, 3);
    assert!(w.refused > w.arrived / 2, "{w:?}");
    assert_eq!(r.workload_flows.len() as u64, w.arrived - w.refused);
    assert!(done(&r.workload_flows) > 100);
}

#[test]
fn reused_slots_start_clean_in_fair_queues_reverse_paths_and_stalls() {
    // Two links each way, fq_codel on the forward one, the workload's
    // ACKs queueing behind a bulk flow going the other way, a host model
    // with stalls, and few slots: every reuse finds its keys empty in
    // every link (Bottleneck::reset_flow asserts it), stale timers of a
    // slot's earlier flows are ignored, and the bulk flows' books balance.
    let mut cfg = common::scenario(vec![flow("bbr", 10, 0), flow("cubic", 10, 0)], 50_000_000, 100_000);
    cfg.bottleneck.aqm = Aqm::FqCodel;
    cfg.bottleneck.fq_codel = Some(FqCodelConfig {
        target_ns: 5 * MS,
        interval_ns: 100 * MS,
        limit_packets: 10_240,
        flows: 1024,
        quantum_bytes: 1514.try_into().unwrap(),
        ecn: false,
    });
    cfg.links = vec![BottleneckConfig::droptail(20_000_000, 60_000)];
    cfg.flows[0].path = vec![0];
    cfg.flows[1].path = vec![1];
    let mut wl = workload(30_000, 100.0, 4);
    wl.path = vec![0];
    wl.reverse_path = vec![1];
    cfg.workloads = vec![wl];
    cfg.host = Some(HostConfig {
        start_spread_ns: MS,
        ack_delay_ns: vec![(0.0, 5_000), (1.0, 200_000)],
        timer_lateness_ns: vec![(0.0, 1_000), (1.0, 100_000)],
        stalls_per_s: 20.0,
        stall_length_ns: vec![(0.0, 100_000), (1.0, 3 * MS)],
        hz: 250,
    });
    sim::validate(&cfg).unwrap();
    let r = sim::run(&cfg).unwrap();
    let w = r.workloads[0];
    assert!(w.arrived > 800 && w.peak_active == 4 && w.refused > 0, "{w:?}");
    assert_eq!(r.workload_flows.len() as u64, w.arrived - w.refused);
    assert!(done(&r.workload_flows) > 300, "{} done", done(&r.workload_flows));
    for (i, f) in r.flows.iter().enumerate() {
        assert_eq!(f.sent_segments, f.arrived_segments + f.dropped_segments + f.in_network_segments, "flow {i}");
    }
    // The same scenario again: the same records.
    assert_eq!(sim::run(&cfg).unwrap().workload_flows, r.workload_flows);
}

#[test]
fn a_workload_leaves_the_flows_randomness_alone() {
    // A workload whose window holds no arrival: the [[flow]]s run exactly
    // as without it (their seeds, host draws and the link's random loss
    // are their own streams).
    let mut cfg = common::scenario(vec![flow("bbr", 10, 0), flow("cubic", 30, 0)], 20_000_000, 50_000);
    cfg.bottleneck.loss = 0.001;
    let without = sim::run(&cfg).unwrap();
    let mut wl = workload(10_000, 1e-6, 10);
    wl.stop_ns = MS;
    cfg.workloads = vec![wl];
    let with = sim::run(&cfg).unwrap();
    assert_eq!(with.workloads[0].arrived, 0);
    assert_eq!(with.flows, without.flows);
    // (As JSON: the series hold NaNs, which no float equals.)
    let series = |r: &sim::result::SimResult| serde_json::to_value(&r.flow_series).unwrap();
    assert_eq!(series(&with), series(&without));
}
