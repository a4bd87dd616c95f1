//! A workload flow's completion time alone on the empty path: what its
//! slowdown (FCT over FCT alone) divides by.
//!
//! The same flow (the workload's cc, RTT, parameters, ECN, jitter and
//! routes; the run's links, host model and seed) is simulated with nothing
//! else in the network, started at 0, until it completes: exactly what the
//! front end does for a sized `[[flow]]` (python/ccarena/api.py), but
//! stopped at the completion instead of the run's end, and one engine call
//! for many sizes. A flow's sender sends whole segments, so the time
//! depends on the size in segments only; the front end asks for each
//! distinct one it needs (python/ccarena/workload_results.py).

use crate::config::SimConfig;
use crate::event_loop::Simulation;

/// The completion times alone (ns; None: not complete by the run's end)
/// of workload `workload`'s flows of `sizes_bytes`, in order; None if
/// `should_stop` (asked as in [`crate::run_with`]) stopped it.
pub fn fcts_alone(
    cfg: &SimConfig,
    workload: usize,
    sizes_bytes: &[u64],
    should_stop: &mut dyn FnMut(u64) -> bool,
) -> Result<Option<Vec<Option<u64>>>, String> {
    crate::validate(cfg)?;
    let wl = cfg.workloads.get(workload).ok_or_else(|| format!("workload: no workload {workload}"))?;
    // One telemetry sample (nothing reads it), the whole run measured.
    let base = SimConfig {
        flows: vec![],
        workloads: vec![],
        measure_from_ns: 0,
        measure_to_ns: cfg.duration_ns,
        interval_ns: cfg.duration_ns,
        ..cfg.clone()
    };
    let mut out = Vec::with_capacity(sizes_bytes.len());
    for &size in sizes_bytes {
        if !(1..=crate::limits::MAX_FLOW_BYTES).contains(&size) {
            return Err(format!("workload[{workload}].size: {size} bytes is not a size the engine runs"));
        }
        let mut solo = base.clone();
        solo.flows = vec![wl.flow(0, size)];
        match Simulation::new(solo).run_until_complete(should_stop) {
            Some(fct) => out.push(fct),
            None => return Ok(None),
        }
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{BottleneckConfig, EcnMode, HostConfig, WorkloadConfig};

    const MS: u64 = 1_000_000;
    const S: u64 = 1_000_000_000;

    fn cfg() -> SimConfig {
        SimConfig {
            duration_ns: 10 * S,
            seed: 3,
            measure_from_ns: 2 * S,
            measure_to_ns: 10 * S,
            interval_ns: 100 * MS,
            mss: 1448,
            wire_overhead: 66,
            bottleneck: BottleneckConfig::droptail(50_000_000, 200_000),
            links: vec![BottleneckConfig { delay_ns: 3 * MS, ..BottleneckConfig::droptail(20_000_000, 100_000) }],
            flows: vec![],
            workloads: vec![WorkloadConfig {
                cc: "bbr".into(),
                rtt_ns: 20 * MS,
                params: vec![],
                ecn: EcnMode::Off,
                jitter_ns: 0,
                path: vec![0, 1],
                reverse_path: vec![],
                start_ns: 0,
                stop_ns: 10 * S,
                arrival_rate_hz: 10.0,
                size_bytes: None,
                sizes: vec![(0.0, 1), (1.0, 10_000_000)],
                max_active: 10,
            }],
            host: Some(HostConfig {
                start_spread_ns: MS,
                ack_delay_ns: vec![(0.0, 10_000), (1.0, 100_000)],
                ..Default::default()
            }),
        }
    }

    #[test]
    fn a_size_alone_takes_what_a_run_of_that_flow_alone_takes() {
        // What the front end did for each sized [[flow]]: the flow alone
        // from 0, run to the end; here stopped at its completion.
        let c = cfg();
        let sizes = [1, 1448, 100_000, 1_000_000, 5_000_000];
        let alone = fcts_alone(&c, 0, &sizes, &mut |_| false).unwrap().unwrap();
        for (&size, &fct) in sizes.iter().zip(&alone) {
            let solo = SimConfig { flows: vec![c.workloads[0].flow(0, size)], workloads: vec![], ..c.clone() };
            assert_eq!(fct, crate::run(&solo).unwrap().flows[0].fct_ns, "{size} bytes");
        }
        // One segment either way; then longer for more.
        assert!(alone[0] == alone[1] && alone[1..].windows(2).all(|p| p[0] < p[1]), "{alone:?}");
        // 5 MB at 20 Mbit/s takes more than 2 s; not by 1 s.
        let mut short = c.clone();
        short.duration_ns = S;
        short.measure_from_ns = 0;
        short.measure_to_ns = S;
        short.workloads[0].stop_ns = S;
        assert_eq!(fcts_alone(&short, 0, &[5_000_000], &mut |_| false).unwrap().unwrap(), vec![None]);
        // Stopped (asked after 2^14 events: the 5 MB flow has more): None;
        // a workload that is not there, or a size of nothing: an error.
        assert_eq!(fcts_alone(&c, 0, &[5_000_000], &mut |_| true).unwrap(), None);
        assert!(fcts_alone(&c, 1, &sizes, &mut |_| false).is_err());
        assert!(fcts_alone(&c, 0, &[0], &mut |_| false).is_err());
    }
}
