//! The engine's gate: every check a resolved scenario must pass before
//! [`crate::event_loop::Simulation::new`] may build it, including the
//! [`crate::limits`]. The first problem is reported as one line,
//! `<field path>: <problem>`, with the paths of the Python front end
//! (`duration`, `bottleneck.rate`, `flow[2].rtt`, ...).

use crate::config::{Aqm, MarkThreshold, SimConfig};
use crate::limits::{self, *};

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
    at_most("duration", cfg.duration_ns, MAX_DURATION_NS, Unit::Ns)?;
    if cfg.interval_ns > cfg.duration_ns {
        return Err("output.interval: longer than the run's duration".into());
    }
    if cfg.measure_from_ns >= cfg.measure_to_ns || cfg.measure_to_ns > cfg.duration_ns {
        return Err("measure: window must satisfy 0 <= from < to <= duration".into());
    }
    let packet_bytes = cfg.mss as u64 + cfg.wire_overhead as u64;
    at_most("mss", packet_bytes, MAX_PACKET_BYTES, Unit::Bytes)?;
    at_most("bottleneck.rate", b.rate_bps, MAX_RATE_BPS, Unit::Bps)?;
    at_most("bottleneck.buffer", b.buffer_bytes, MAX_BUFFER_BYTES, Unit::Bytes)?;
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
    let need = |present: bool, table: &str, aqm: Aqm| -> Result<(), String> {
        match (present, b.aqm == aqm) {
            (false, true) => Err(format!("bottleneck.{table}: required when aqm = \"{table}\"")),
            (true, false) => Err(format!("bottleneck.{table}: given, but aqm is not \"{table}\"")),
            _ => Ok(()),
        }
    };
    need(b.codel.is_some(), "codel", Aqm::Codel)?;
    need(b.fq_codel.is_some(), "fq_codel", Aqm::FqCodel)?;
    need(b.pie.is_some(), "pie", Aqm::Pie)?;
    let positive = |field: &str, v: u64| -> Result<(), String> {
        if v == 0 {
            return Err(format!("bottleneck.{field}: must be greater than zero"));
        }
        Ok(())
    };
    if let Some(c) = &b.codel {
        positive("codel.target", c.target_ns)?;
        positive("codel.interval", c.interval_ns)?;
        positive("codel.limit", c.limit_packets as u64)?;
    }
    if let Some(c) = &b.fq_codel {
        positive("fq_codel.target", c.target_ns)?;
        positive("fq_codel.interval", c.interval_ns)?;
        positive("fq_codel.limit", c.limit_packets as u64)?;
        positive("fq_codel.flows", c.flows as u64)?;
        if c.flows > 65536 {
            return Err(format!("bottleneck.fq_codel.flows: {} is more than Linux's 65536", c.flows));
        }
    }
    if let Some(p) = &b.pie {
        positive("pie.target", p.target_ns)?;
        positive("pie.tupdate", p.tupdate_ns)?;
        positive("pie.limit", p.limit_packets as u64)?;
        if p.alpha_16ths > 32 || p.beta_16ths > 32 {
            return Err("bottleneck.pie: alpha and beta must be in [0, 2] (Linux's 0..32 sixteenths)".into());
        }
    }
    if let Some(m) = &b.mark_threshold {
        if b.aqm != Aqm::Droptail {
            return Err("bottleneck.mark_threshold: a step marker runs on the droptail FIFO (aqm = \"droptail\")".into());
        }
        let (MarkThreshold::Packets(k) | MarkThreshold::Bytes(k) | MarkThreshold::Ns(k)) = *m;
        positive("mark_threshold", k)?;
    }
    if let Some(t) = &b.trace {
        if !b.schedule.is_empty() {
            return Err("bottleneck.trace: a trace sets the rate over time; give no schedule with it".into());
        }
        let n = t.gaps_ms.len() as u64;
        if n != t.opportunities {
            return Err(format!("bottleneck.trace: {} opportunities said, {n} given", t.opportunities));
        }
        if n == 0 || t.period_ns == 0 {
            return Err("bottleneck.trace: needs at least one opportunity after 0 ms".into());
        }
        if n > MAX_TRACE_OPPORTUNITIES {
            return Err(format!(
                "bottleneck.trace: {n} lines are more than the engine's limit of {MAX_TRACE_OPPORTUNITIES}"
            ));
        }
        // The gaps make the instants non-decreasing.
        if t.gaps_ms.last().map(|ms| ms as u64 * 1_000_000) != Some(t.period_ns) {
            return Err("bottleneck.trace: the last timestamp must be the period".into());
        }
        at_most("bottleneck.trace", t.period_ns, MAX_TRACE_PERIOD_NS, Unit::Ns)?;
        if t.opportunity_bytes as u64 != packet_bytes {
            return Err("bottleneck.trace: an opportunity carries one full-size packet".into());
        }
    }
    for (j, c) in b.schedule.iter().enumerate() {
        if c.rate_bps == 0 {
            return Err(format!("bottleneck.schedule[{j}].rate: must be greater than zero"));
        }
        at_most(&format!("bottleneck.schedule[{j}].rate"), c.rate_bps, MAX_RATE_BPS, Unit::Bps)?;
        if j > 0 && c.at_ns < b.schedule[j - 1].at_ns {
            return Err(format!("bottleneck.schedule[{j}].at: schedule must be in time order"));
        }
    }
    if cfg.flows.is_empty() {
        return Err("flow: at least one [[flow]] is required".into());
    }
    if cfg.flows.len() as u64 > MAX_FLOWS {
        return Err(format!(
            "flow: {} flows (after count) is more than the engine's limit of {MAX_FLOWS}",
            cfg.flows.len()
        ));
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
        at_most(&format!("flow[{i}].rtt"), f.rtt_ns, MAX_RTT_NS, Unit::Ns)?;
        at_most(&format!("flow[{i}].jitter"), f.jitter_ns, MAX_RTT_NS, Unit::Ns)?;
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
            at_most(&format!("flow[{i}].rtt_schedule[{k}].rtt"), c.rtt_ns, MAX_RTT_NS, Unit::Ns)?;
            if k > 0 && c.at_ns < f.rtt_schedule[k - 1].at_ns {
                return Err(format!("flow[{i}].rtt_schedule[{k}].at: schedule must be in time order"));
            }
        }
    }
    let rows = limits::series_rows(cfg.duration_ns, cfg.interval_ns, cfg.flows.len() as u64);
    if rows > MAX_SERIES_ROWS as u128 {
        return Err(format!(
            "output.interval: {} makes {rows} telemetry rows (duration / interval x (flows + 1)), more than \
             the engine's limit of {MAX_SERIES_ROWS}; use a longer interval",
            human(cfg.interval_ns, Unit::Ns)
        ));
    }
    let max_rate = b.schedule.iter().map(|c| c.rate_bps).fold(b.rate_bps, u64::max);
    let segments = limits::link_segments(max_rate, cfg.duration_ns, packet_bytes);
    if segments > MAX_LINK_SEGMENTS as u128 {
        return Err(format!(
            "duration: {} at {} is {segments} full-size packets through the bottleneck, more than the \
             engine's limit of {MAX_LINK_SEGMENTS} (32-bit segment numbers); shorten the run or lower the rate",
            human(cfg.duration_ns, Unit::Ns),
            human(max_rate, Unit::Bps)
        ));
    }
    Ok(())
}

#[derive(Clone, Copy)]
enum Unit {
    Ns,
    Bps,
    Bytes,
}

fn at_most(field: &str, value: u64, max: u64, unit: Unit) -> Result<(), String> {
    if value > max {
        return Err(format!("{field}: {} is above the engine's limit of {}", human(value, unit), human(max, unit)));
    }
    Ok(())
}

/// `value` in the unit people read, exact: "86400 s", "1.5 Gbit/s" (as
/// integers where they are, so a limit reads as the constant).
fn human(value: u64, unit: Unit) -> String {
    let scaled = |v: u64, steps: &[(u64, &str)]| -> String {
        let (div, name) = steps.iter().rev().find(|(d, _)| v >= *d).copied().unwrap_or(steps[0]);
        let x = v as f64 / div as f64;
        format!("{} {name}", format!("{x:.6}").trim_end_matches('0').trim_end_matches('.'))
    };
    match unit {
        Unit::Ns => scaled(value, &[(1, "ns"), (1_000, "us"), (1_000_000, "ms"), (1_000_000_000, "s")]),
        Unit::Bps => scaled(
            value,
            &[
                (1, "bit/s"),
                (1_000, "kbit/s"),
                (1_000_000, "Mbit/s"),
                (1_000_000_000, "Gbit/s"),
                (1_000_000_000_000, "Tbit/s"),
            ],
        ),
        Unit::Bytes => format!("{value} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{BottleneckConfig, FlowConfig, RateChange, RttChange};

    fn ok_config() -> SimConfig {
        SimConfig {
            duration_ns: 10_000_000_000,
            seed: 1,
            measure_from_ns: 0,
            measure_to_ns: 10_000_000_000,
            interval_ns: 100_000_000,
            mss: 1448,
            wire_overhead: 66,
            bottleneck: BottleneckConfig::droptail(100_000_000, 1_000_000),
            flows: vec![FlowConfig {
                cc: "reno".into(),
                rtt_ns: 10_000_000,
                start_ns: 0,
                stop_ns: None,
                params: vec![],
                rtt_schedule: vec![],
            ecn: Default::default(),
            jitter_ns: 0,
            }],
        }
    }

    fn error(change: impl FnOnce(&mut SimConfig)) -> String {
        let mut c = ok_config();
        change(&mut c);
        validate(&c).expect_err("rejected")
    }

    #[test]
    fn each_limit_is_enforced_with_the_front_ends_field_path() {
        assert_eq!(validate(&ok_config()), Ok(()));
        type Change = Box<dyn FnOnce(&mut SimConfig)>;
        let cases: Vec<(Change, &str)> = vec![
            (
                Box::new(|c| {
                    c.duration_ns = MAX_DURATION_NS + 1;
                    c.measure_to_ns = c.duration_ns;
                    c.bottleneck.rate_bps = 1_000;
                }),
                "duration: ",
            ),
            (Box::new(|c| c.bottleneck.rate_bps = MAX_RATE_BPS + 1), "bottleneck.rate: "),
            (Box::new(|c| c.bottleneck.buffer_bytes = MAX_BUFFER_BYTES + 1), "bottleneck.buffer: "),
            (Box::new(|c| c.flows[0].rtt_ns = MAX_RTT_NS + 1), "flow[0].rtt: "),
            (
                Box::new(|c| c.bottleneck.schedule = vec![RateChange { at_ns: 1, rate_bps: MAX_RATE_BPS + 1 }]),
                "bottleneck.schedule[0].rate: ",
            ),
            (
                Box::new(|c| c.flows[0].rtt_schedule = vec![RttChange { at_ns: 1, rtt_ns: MAX_RTT_NS + 1 }]),
                "flow[0].rtt_schedule[0].rtt: ",
            ),
            (Box::new(|c| c.flows = vec![c.flows[0].clone(); MAX_FLOWS as usize + 1]), "flow: "),
            (Box::new(|c| c.interval_ns = 100), "output.interval: "),
            (
                // Past the limit: 10 s at 2.5 us with one flow is 4M
                // samples of two rows, 8M (the limit); one more flow makes 12M.
                Box::new(|c| {
                    c.interval_ns = 2_500;
                    c.flows.push(c.flows[0].clone());
                }),
                "output.interval: ",
            ),
            (
                // 1 Tbit/s for an hour: far more packets than 32-bit segment numbers hold.
                Box::new(|c| {
                    c.duration_ns = 3_600_000_000_000;
                    c.measure_to_ns = c.duration_ns;
                    c.interval_ns = 1_000_000_000;
                    c.bottleneck.rate_bps = MAX_RATE_BPS;
                }),
                "duration: ",
            ),
            (Box::new(|c| c.wire_overhead = 65_000), "mss: "),
        ];
        for (change, path) in cases {
            let e = error(change);
            assert!(e.starts_with(path), "{e:?} should start with {path:?}");
            assert!(e.contains("limit"), "{e}");
        }
        // At the limit is fine.
        let mut c = ok_config();
        c.interval_ns = 10_000_000_000 * 2 / MAX_SERIES_ROWS;
        assert_eq!(limits::series_rows(c.duration_ns, c.interval_ns, 1), MAX_SERIES_ROWS as u128);
        assert_eq!(validate(&c), Ok(()));
        let mut c = ok_config();
        c.bottleneck.rate_bps = MAX_RATE_BPS;
        c.duration_ns = 1_000_000_000;
        c.measure_to_ns = c.duration_ns;
        c.flows[0].rtt_ns = MAX_RTT_NS;
        c.bottleneck.buffer_bytes = MAX_BUFFER_BYTES;
        assert_eq!(validate(&c), Ok(()));
    }

    #[test]
    fn a_ten_thousand_flow_scenario_is_allowed() {
        let mut c = ok_config();
        c.duration_ns = 2_000_000_000;
        c.measure_to_ns = c.duration_ns;
        c.bottleneck.rate_bps = 10_000_000_000;
        c.flows = vec![c.flows[0].clone(); 10_000];
        assert_eq!(validate(&c), Ok(()));
    }

    #[test]
    fn the_messages_name_the_value_and_the_limit_in_readable_units() {
        let e = error(|c| c.bottleneck.rate_bps = 20_000_000_000_000);
        assert_eq!(e, "bottleneck.rate: 20 Tbit/s is above the engine's limit of 1 Tbit/s");
        let e = error(|c| c.flows[0].rtt_ns = 12_500_000_000);
        assert_eq!(e, "flow[0].rtt: 12.5 s is above the engine's limit of 10 s");
        // 10 s at 100 ns with one flow: 10^8 samples of two rows.
        let e = error(|c| c.interval_ns = 100);
        assert!(e.starts_with("output.interval: 100 ns makes 200000000 telemetry rows"), "{e}");
    }

    #[test]
    fn the_checks_of_before_the_limits_remain() {
        assert!(error(|c| c.duration_ns = 0).starts_with("duration: must be greater than zero"));
        assert!(error(|c| c.interval_ns = 20_000_000_000).starts_with("output.interval: longer"));
        assert!(error(|c| c.measure_from_ns = 10_000_000_000).starts_with("measure:"));
        assert!(error(|c| c.bottleneck.loss = 1.0).starts_with("bottleneck.loss:"));
        assert!(error(|c| c.flows[0].start_ns = 10_000_000_000).starts_with("flow[0].start:"));
        assert!(error(|c| c.flows[0].stop_ns = Some(0)).starts_with("flow[0].stop:"));
        assert!(error(|c| c.flows[0].cc = "nope".into()).starts_with("flow[0].cc: unknown"));
        assert!(error(|c| c.flows.clear()).starts_with("flow: at least one"));
        assert!(error(|c| c.bottleneck.schedule = vec![RateChange { at_ns: 1, rate_bps: 0 }])
            .starts_with("bottleneck.schedule[0].rate: must be greater than zero"));
        assert!(error(|c| {
            c.bottleneck.schedule = vec![RateChange { at_ns: 5, rate_bps: 1 }, RateChange { at_ns: 1, rate_bps: 1 }]
        })
        .starts_with("bottleneck.schedule[1].at:"));
    }
}
