//! The engine's gate: every check a resolved scenario must pass before
//! [`crate::event_loop::Simulation::new`] may build it, including the
//! [`crate::limits`]. The first problem is reported as one line,
//! `<field path>: <problem>`, with the paths of the Python front end
//! (`duration`, `bottleneck.rate`, `flow[2].rtt`, ...).

use crate::config::{AppConfig, Aqm, BottleneckConfig, HostConfig, MarkThreshold, SimConfig};
use crate::limits::{self, *};

/// Checks a resolved scenario; the error is one line naming the field.
pub fn validate(cfg: &SimConfig) -> Result<(), String> {
    let positive = [("duration", cfg.duration_ns), ("output.interval", cfg.interval_ns), ("mss", cfg.mss as u64)];
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
    if cfg.n_links() as u64 > MAX_LINKS {
        return Err(format!("link: {} links are more than the engine's limit of {MAX_LINKS}", cfg.n_links()));
    }
    for k in 0..cfg.n_links() {
        link(cfg.link(k), &cfg.link_field(k), packet_bytes)?;
    }
    if cfg.flows.is_empty() && cfg.workloads.is_empty() {
        return Err("flow: at least one [[flow]] (or [[workload]]) is required".into());
    }
    if cfg.flows.len() as u64 > MAX_FLOWS {
        return Err(format!(
            "flow: {} flows (after count) is more than the engine's limit of {MAX_FLOWS}",
            cfg.flows.len()
        ));
    }
    for (i, f) in cfg.flows.iter().enumerate() {
        let at = format!("flow[{i}]");
        sender(cfg, &at, &f.cc, f.rtt_ns, f.jitter_ns, &f.path, &f.reverse_path)?;
        if f.start_ns >= cfg.duration_ns {
            return Err(format!("{at}.start: must be before the end of the run"));
        }
        if f.stop_ns.is_some_and(|s| s <= f.start_ns) {
            return Err(format!("{at}.stop: must be after start"));
        }
        if let Some(size) = f.size_bytes {
            flow_size(&format!("{at}.size"), size)?;
        }
        for (k, c) in f.rtt_schedule.iter().enumerate() {
            if c.rtt_ns == 0 {
                return Err(format!("{at}.rtt_schedule[{k}].rtt: must be greater than zero"));
            }
            at_most(&format!("{at}.rtt_schedule[{k}].rtt"), c.rtt_ns, MAX_RTT_NS, Unit::Ns)?;
            if k > 0 && c.at_ns < f.rtt_schedule[k - 1].at_ns {
                return Err(format!("{at}.rtt_schedule[{k}].at: schedule must be in time order"));
            }
        }
        if let Some(a) = &f.app {
            app(a, &format!("{at}.app"), cfg.duration_ns)?;
        }
    }
    workloads(cfg)?;
    if let Some(h) = &cfg.host {
        host(h)?;
    }
    let rows = limits::series_rows(cfg.duration_ns, cfg.interval_ns, cfg.flows.len() as u64, cfg.n_links() as u64);
    if rows > MAX_SERIES_ROWS as u128 {
        return Err(format!(
            "output.interval: {} makes {rows} telemetry rows (duration / interval x (flows + links)), more \
             than the engine's limit of {MAX_SERIES_ROWS}; use a longer interval",
            human(cfg.interval_ns, Unit::Ns)
        ));
    }
    let max_rate = (0..cfg.n_links())
        .map(|k| cfg.link(k))
        .flat_map(|b| b.schedule.iter().map(|c| c.rate_bps).chain([b.rate_bps]))
        .fold(0, u64::max);
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

/// What a `[[flow]]` and a `[[workload]]` (field path `at`) have in
/// common: a known cc, an RTT and a jitter within the limits, routes
/// through existing links without repeats.
fn sender(
    cfg: &SimConfig,
    at: &str,
    cc: &str,
    rtt_ns: u64,
    jitter_ns: u64,
    path: &[u32],
    reverse: &[u32],
) -> Result<(), String> {
    if cc_native::lookup(cc).is_none() {
        return Err(format!("{at}.cc: unknown congestion control '{cc}' (known: {})", cc_native::names().join(", ")));
    }
    if rtt_ns == 0 {
        return Err(format!("{at}.rtt: must be greater than zero"));
    }
    at_most(&format!("{at}.rtt"), rtt_ns, MAX_RTT_NS, Unit::Ns)?;
    at_most(&format!("{at}.jitter"), jitter_ns, MAX_RTT_NS, Unit::Ns)?;
    for (what, path) in [("path", path), ("reverse", reverse)] {
        for (k, &l) in path.iter().enumerate() {
            if l as usize >= cfg.n_links() {
                return Err(format!("{at}.{what}[{k}]: no link {l} (the topology has {})", cfg.n_links()));
            }
            if path[..k].contains(&l) {
                return Err(format!("{at}.{what}[{k}]: link {l} is already on the path"));
            }
        }
    }
    Ok(())
}

/// A sized flow's bytes (`flow[i].size`, `workload[w].size`).
fn flow_size(field: &str, size: u64) -> Result<(), String> {
    if size == 0 {
        return Err(format!("{field}: must be greater than zero"));
    }
    at_most(field, size, MAX_FLOW_BYTES, Unit::Bytes)
}

/// An application-limited sender's writes ([`crate::app`]).
fn app(a: &AppConfig, at: &str, duration_ns: u64) -> Result<(), String> {
    if a.rate_bps.is_none() && a.on_off.is_none() {
        return Err(format!("{at}: give a rate, or on and off periods"));
    }
    if let Some(rate) = a.rate_bps {
        if rate == 0 {
            return Err(format!("{at}.rate: must be greater than zero"));
        }
        at_most(&format!("{at}.rate"), rate, MAX_RATE_BPS, Unit::Bps)?;
    }
    if let Some(p) = &a.on_off {
        for (what, ns) in [("on", p.on_ns), ("off", p.off_ns)] {
            if ns == 0 {
                return Err(format!("{at}.{what}: must be greater than zero"));
            }
            if ns > duration_ns {
                return Err(format!("{at}.{what}: longer than the run's duration"));
            }
        }
        let cycles = limits::app_cycles(duration_ns, p.on_ns, p.off_ns);
        if cycles > MAX_APP_CYCLES {
            return Err(format!("{at}.on: {cycles} ON/OFF cycles over the run, above the engine's limit of {MAX_APP_CYCLES}"));
        }
    }
    Ok(())
}

/// The `[[workload]]`s: each one's flows as a `[[flow]]`'s, its arrival
/// window inside the run, its rate and sizes within the limits; their
/// `max_active` and expected arrivals added up within theirs.
fn workloads(cfg: &SimConfig) -> Result<(), String> {
    let (mut active, mut expected) = (0u64, 0f64);
    for (w, wl) in cfg.workloads.iter().enumerate() {
        let at = format!("workload[{w}]");
        sender(cfg, &at, &wl.cc, wl.rtt_ns, wl.jitter_ns, &wl.path, &wl.reverse_path)?;
        if wl.start_ns >= cfg.duration_ns {
            return Err(format!("{at}.start: must be before the end of the run"));
        }
        if wl.stop_ns <= wl.start_ns || wl.stop_ns > cfg.duration_ns {
            return Err(format!("{at}.stop: must be after start and at most the run's duration"));
        }
        let rate = wl.arrival_rate_hz;
        if !(rate.is_finite() && rate > 0.0) {
            return Err(format!("{at}.arrival_rate: {rate} is not a positive number of arrivals per second"));
        }
        if rate > MAX_ARRIVAL_RATE_HZ as f64 {
            return Err(format!(
                "{at}.arrival_rate: {rate} per second is above the engine's limit of {MAX_ARRIVAL_RATE_HZ} per second"
            ));
        }
        match (wl.size_bytes, wl.sizes.is_empty()) {
            (Some(size), true) => flow_size(&format!("{at}.size"), size)?,
            (None, false) => size_points(&format!("{at}.sizes"), &wl.sizes)?,
            _ => return Err(format!("{at}.size: give a size or a size distribution (sizes), not both")),
        }
        if wl.max_active == 0 {
            return Err(format!("{at}.max_active: must be greater than zero"));
        }
        active += wl.max_active as u64;
        if active > MAX_ACTIVE_FLOWS {
            return Err(format!(
                "{at}.max_active: the workloads' max_active add up to {active}, above the engine's limit of \
                 {MAX_ACTIVE_FLOWS}"
            ));
        }
        expected += limits::expected_arrivals(rate, wl.start_ns, wl.stop_ns);
        if expected > MAX_WORKLOAD_ARRIVALS as f64 {
            return Err(format!(
                "{at}.arrival_rate: the workloads expect {expected:.0} arrivals (rate x arrival window, added \
                 up), above the engine's limit of {MAX_WORKLOAD_ARRIVALS}"
            ));
        }
    }
    Ok(())
}

/// A size distribution: (cumulative probability, bytes) points from 0.0
/// to 1.0, neither ever falling, the largest size within the limit.
fn size_points(field: &str, points: &[(f64, u64)]) -> Result<(), String> {
    at_most(field, points.len() as u64, MAX_SIZE_POINTS, Unit::Count)?;
    let rising = points.windows(2).all(|w| w[1].0 >= w[0].0 && w[1].1 >= w[0].1);
    if points.len() < 2 || points[0].0 != 0.0 || points[points.len() - 1].0 != 1.0 || !rising {
        return Err(format!(
            "{field}: cumulative probabilities must rise from 0.0 to 1.0, and the sizes never fall"
        ));
    }
    flow_size(field, points[points.len() - 1].1)
}

/// One link ([`BottleneckConfig`]), its fields named `<at>.<field>`
/// (`bottleneck.rate`, `link[2].rate`).
fn link(b: &BottleneckConfig, at: &str, packet_bytes: u64) -> Result<(), String> {
    if b.rate_bps == 0 {
        return Err(format!("{at}.rate: must be greater than zero"));
    }
    if b.buffer_bytes == 0 {
        return Err(format!("{at}.buffer: must be greater than zero"));
    }
    at_most(&format!("{at}.rate"), b.rate_bps, MAX_RATE_BPS, Unit::Bps)?;
    at_most(&format!("{at}.buffer"), b.buffer_bytes, MAX_BUFFER_BYTES, Unit::Bytes)?;
    if !(0.0..1.0).contains(&b.loss) {
        return Err(format!("{at}.loss: {} is not a probability in [0, 1)", b.loss));
    }
    if b.aqm == Aqm::Red {
        let Some(red) = &b.red else {
            return Err(format!("{at}.red: required when aqm = \"red\""));
        };
        at_most(&format!("{at}.red.min"), red.min_bytes, MAX_BUFFER_BYTES, Unit::Bytes)?;
        at_most(&format!("{at}.red.max"), red.max_bytes, MAX_BUFFER_BYTES, Unit::Bytes)?;
        if red.min_bytes >= red.max_bytes {
            return Err(format!("{at}.red: min must be below max"));
        }
        if !(red.max_p > 0.0 && red.max_p <= 1.0) {
            return Err(format!("{at}.red.max_p: {} is not in (0, 1]", red.max_p));
        }
        if !(red.wq > 0.0 && red.wq <= 1.0) {
            return Err(format!("{at}.red.wq: {} is not in (0, 1]", red.wq));
        }
    }
    if let Some(fq) = &b.fq {
        quantum(&format!("{at}.fq.quantum"), fq.quantum_bytes.get())?;
    }
    let need = |present: bool, table: &str, aqm: Aqm| -> Result<(), String> {
        match (present, b.aqm == aqm) {
            (false, true) => Err(format!("{at}.{table}: required when aqm = \"{table}\"")),
            (true, false) => Err(format!("{at}.{table}: given, but aqm is not \"{table}\"")),
            _ => Ok(()),
        }
    };
    need(b.codel.is_some(), "codel", Aqm::Codel)?;
    need(b.fq_codel.is_some(), "fq_codel", Aqm::FqCodel)?;
    need(b.pie.is_some(), "pie", Aqm::Pie)?;
    // A positive value within the engine's limit, named `<link>.<field>`.
    let within = |field: &str, v: u64, max: u64, unit: Unit| -> Result<(), String> {
        if v == 0 {
            return Err(format!("{at}.{field}: must be greater than zero"));
        }
        at_most(&format!("{at}.{field}"), v, max, unit)
    };
    if let Some(c) = &b.codel {
        within("codel.target", c.target_ns, MAX_AQM_TIME_NS, Unit::Ns)?;
        within("codel.interval", c.interval_ns, MAX_AQM_TIME_NS, Unit::Ns)?;
        within("codel.limit", c.limit_packets as u64, MAX_QUEUE_PACKETS, Unit::Packets)?;
    }
    if let Some(c) = &b.fq_codel {
        within("fq_codel.target", c.target_ns, MAX_AQM_TIME_NS, Unit::Ns)?;
        within("fq_codel.interval", c.interval_ns, MAX_AQM_TIME_NS, Unit::Ns)?;
        within("fq_codel.limit", c.limit_packets as u64, MAX_QUEUE_PACKETS, Unit::Packets)?;
        within("fq_codel.flows", c.flows as u64, MAX_FQ_CODEL_FLOWS, Unit::Count)?;
        quantum(&format!("{at}.fq_codel.quantum"), c.quantum_bytes.get())?;
    }
    if let Some(p) = &b.pie {
        within("pie.target", p.target_ns, MAX_AQM_TIME_NS, Unit::Ns)?;
        within("pie.tupdate", p.tupdate_ns, MAX_AQM_TIME_NS, Unit::Ns)?;
        at_least(&format!("{at}.pie.tupdate"), p.tupdate_ns, MIN_PIE_TUPDATE_NS, Unit::Ns)?;
        at_most(&format!("{at}.pie.burst"), p.burst_ns, MAX_AQM_TIME_NS, Unit::Ns)?;
        within("pie.limit", p.limit_packets as u64, MAX_QUEUE_PACKETS, Unit::Packets)?;
        at_most(&format!("{at}.pie.alpha"), p.alpha_16ths as u64, MAX_PIE_GAIN_16THS, Unit::Sixteenths)?;
        at_most(&format!("{at}.pie.beta"), p.beta_16ths as u64, MAX_PIE_GAIN_16THS, Unit::Sixteenths)?;
    }
    if let Some(m) = &b.mark_threshold {
        if b.aqm != Aqm::Droptail {
            return Err(format!("{at}.mark_threshold: a step marker runs on the droptail FIFO (aqm = \"droptail\")"));
        }
        match *m {
            MarkThreshold::Packets(k) => within("mark_threshold", k, MAX_QUEUE_PACKETS, Unit::Packets)?,
            MarkThreshold::Bytes(k) => within("mark_threshold", k, MAX_BUFFER_BYTES, Unit::Bytes)?,
            MarkThreshold::Ns(k) => within("mark_threshold", k, MAX_AQM_TIME_NS, Unit::Ns)?,
        }
    }
    if let Some(p) = &b.policer {
        at_most(&format!("{at}.policer.rate"), p.rate_bps.get(), MAX_RATE_BPS, Unit::Bps)?;
        at_most(&format!("{at}.policer.burst"), p.burst_bytes.get(), MAX_BUFFER_BYTES, Unit::Bytes)?;
    }
    if let Some(t) = &b.trace {
        if !b.schedule.is_empty() {
            return Err(format!("{at}.trace: a trace sets the rate over time; give no schedule with it"));
        }
        let n = t.gaps_ms.len() as u64;
        if n != t.opportunities {
            return Err(format!("{at}.trace: {} opportunities said, {n} given", t.opportunities));
        }
        if n == 0 || t.period_ns == 0 {
            return Err(format!("{at}.trace: needs at least one opportunity after 0 ms"));
        }
        if n > MAX_TRACE_OPPORTUNITIES {
            return Err(format!(
                "{at}.trace: {n} lines are more than the engine's limit of {MAX_TRACE_OPPORTUNITIES}"
            ));
        }
        if t.gaps_ms.last().map(|ms| ms as u64 * 1_000_000) != Some(t.period_ns) {
            return Err(format!("{at}.trace: the last timestamp must be the period"));
        }
        at_most(&format!("{at}.trace"), t.period_ns, MAX_TRACE_PERIOD_NS, Unit::Ns)?;
        at_most(&format!("{at}.trace"), t.mean_rate_bps(), MAX_RATE_BPS, Unit::Bps)?;
        if t.opportunity_bytes as u64 != packet_bytes {
            return Err(format!("{at}.trace: an opportunity carries one full-size packet"));
        }
    }
    for (j, c) in b.schedule.iter().enumerate() {
        if c.rate_bps == 0 {
            return Err(format!("{at}.schedule[{j}].rate: must be greater than zero"));
        }
        at_most(&format!("{at}.schedule[{j}].rate"), c.rate_bps, MAX_RATE_BPS, Unit::Bps)?;
        if j > 0 && c.at_ns < b.schedule[j - 1].at_ns {
            return Err(format!("{at}.schedule[{j}].at: schedule must be in time order"));
        }
    }
    at_most(&format!("{at}.delay"), b.delay_ns, MAX_RTT_NS, Unit::Ns)?;
    at_most(&format!("{at}.aggregate"), b.aggregate_ns, MAX_RTT_NS, Unit::Ns)?;
    Ok(())
}

#[derive(Clone, Copy)]
enum Unit {
    Ns,
    Bps,
    Bytes,
    Packets,
    Sixteenths,
    Count,
}

fn at_most(field: &str, value: u64, max: u64, unit: Unit) -> Result<(), String> {
    if value > max {
        return Err(format!("{field}: {} is above the engine's limit of {}", human(value, unit), human(max, unit)));
    }
    Ok(())
}

fn at_least(field: &str, value: u64, min: u64, unit: Unit) -> Result<(), String> {
    if value < min {
        return Err(format!("{field}: {} is below the engine's limit of {}", human(value, unit), human(min, unit)));
    }
    Ok(())
}

/// A host model ([`crate::host`]): its delays and stall rate within the
/// limits, each distribution an inverse CDF.
fn host(h: &HostConfig) -> Result<(), String> {
    at_most("host.start_spread_ns", h.start_spread_ns, MAX_HOST_DELAY_NS, Unit::Ns)?;
    if !(h.stalls_per_s >= 0.0 && h.stalls_per_s <= MAX_HOST_STALL_RATE_HZ as f64) {
        return Err(format!(
            "host.stalls_per_s: {} is outside the engine's limits of 0 to {MAX_HOST_STALL_RATE_HZ} per second",
            h.stalls_per_s
        ));
    }
    if h.stalls_per_s > 0.0 && h.stall_length_ns.is_empty() {
        return Err("host.stall_length_ns: stalls need their lengths".into());
    }
    if !(MIN_HOST_HZ..=MAX_HOST_HZ).contains(&(h.hz as u64)) || !MAX_HOST_HZ.is_multiple_of(h.hz as u64) {
        return Err(format!(
            "host.hz: {} is not a tick rate the engine models (it must divide {MAX_HOST_HZ}: 100, 250, 1000, ...)",
            h.hz
        ));
    }
    for (field, points) in
        [("ack_delay_ns", &h.ack_delay_ns), ("timer_lateness_ns", &h.timer_lateness_ns), ("stall_length_ns", &h.stall_length_ns)]
    {
        let field = format!("host.{field}");
        if points.is_empty() {
            continue;
        }
        at_most(&field, points.len() as u64, MAX_HOST_POINTS, Unit::Count)?;
        let rising = points.windows(2).all(|w| w[1].0 > w[0].0);
        if points[0].0 != 0.0 || points[points.len() - 1].0 != 1.0 || !rising {
            return Err(format!("{field}: cumulative probabilities must rise from 0.0 to 1.0"));
        }
        if points.windows(2).any(|w| w[1].1 < w[0].1) {
            return Err(format!("{field}: values (ns) must be non-negative and never fall"));
        }
        at_most(&field, points[points.len() - 1].1, MAX_HOST_DELAY_NS, Unit::Ns)?;
    }
    Ok(())
}

/// A DRR quantum within Linux's fq_codel bounds.
fn quantum(field: &str, bytes: u32) -> Result<(), String> {
    at_least(field, bytes as u64, MIN_QUANTUM_BYTES, Unit::Bytes)?;
    at_most(field, bytes as u64, MAX_QUANTUM_BYTES, Unit::Bytes)
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
        Unit::Packets => format!("{value} packets"),
        Unit::Sixteenths => format!("{value}/16"),
        Unit::Count => value.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{BottleneckConfig, FlowConfig, OnOffConfig, RateChange, RttChange, WorkloadConfig};

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
                size_bytes: None,
                params: vec![],
                rtt_schedule: vec![],
                ecn: Default::default(),
                jitter_ns: 0,
                path: vec![],
                reverse_path: vec![],
                app: None,
            }],
            workloads: vec![],
            links: vec![],
            host: None,
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
        assert_eq!(limits::series_rows(c.duration_ns, c.interval_ns, 1, 1), MAX_SERIES_ROWS as u128);
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
    fn the_queue_disciplines_policer_and_trace_are_held_to_their_limits() {
        use crate::config::{CodelConfig, FqCodelConfig, PieConfig, PolicerConfig, RedConfig, TraceConfig};
        use std::num::{NonZeroU32, NonZeroU64};
        fn codel(c: &mut SimConfig) -> &mut CodelConfig {
            c.bottleneck.codel.get_or_insert(CodelConfig {
                target_ns: 5_000_000,
                interval_ns: 100_000_000,
                limit_packets: 1000,
                ecn: false,
            })
        }
        fn fq_codel(c: &mut SimConfig) -> &mut FqCodelConfig {
            c.bottleneck.fq_codel.get_or_insert(FqCodelConfig {
                target_ns: 5_000_000,
                interval_ns: 100_000_000,
                limit_packets: 10_240,
                flows: 1024,
                quantum_bytes: NonZeroU32::new(1514).unwrap(),
                ecn: true,
            })
        }
        fn pie(c: &mut SimConfig) -> &mut PieConfig {
            c.bottleneck.pie.get_or_insert(PieConfig {
                target_ns: 15_000_000,
                tupdate_ns: 15_000_000,
                alpha_16ths: 2,
                beta_16ths: 20,
                burst_ns: 150_000_000,
                limit_packets: 1000,
                ecn: false,
            })
        }
        fn red(c: &mut SimConfig) -> &mut RedConfig {
            let (min_bytes, max_bytes, max_p, wq) = (5 * 1514, 30 * 1514, 0.1, 0.002);
            c.bottleneck.red.get_or_insert(RedConfig { min_bytes, max_bytes, max_p, wq, byte_mode: false, ecn: false })
        }
        fn mark(c: &mut SimConfig, threshold: MarkThreshold) {
            c.bottleneck.mark_threshold = Some(threshold);
        }
        fn policer_burst(c: &mut SimConfig, v: u64) {
            let (rate_bps, burst_bytes) = (NonZeroU64::new(1_000_000).unwrap(), NonZeroU64::new(v).unwrap());
            c.bottleneck.policer = Some(PolicerConfig { rate_bps, burst_bytes });
        }
        // Eight lines, the last at `last_ms`: its mean rate stays above 0.
        fn trace_period(c: &mut SimConfig, last_ms: u64) {
            c.bottleneck.trace = Some(TraceConfig::from_ms(&[1, 1, 1, 1, 1, 1, 1, last_ms as u32], 1514));
        }
        // `lines` opportunities at 1 ms: lines x 12.112 Mbit/s.
        fn trace_lines(c: &mut SimConfig, lines: u64) {
            c.bottleneck.trace = Some(TraceConfig::from_ms(&vec![1; lines as usize], 1514));
        }
        let (t, q, b) = (MAX_AQM_TIME_NS, MAX_QUEUE_PACKETS, MAX_BUFFER_BYTES);
        let (day_ms, fastest) = (MAX_TRACE_PERIOD_NS / 1_000_000, MAX_RATE_BPS / (1514 * 8 * 1000));
        // (queue, field, set it, the value at its limit, one step beyond)
        type Set = fn(&mut SimConfig, u64);
        let cases: [(Aqm, &str, Set, u64, u64); 17] = [
            (Aqm::Codel, "bottleneck.codel.target", |c, v| codel(c).target_ns = v, t, t + 1),
            (Aqm::Codel, "bottleneck.codel.interval", |c, v| codel(c).interval_ns = v, t, t + 1),
            (Aqm::Codel, "bottleneck.codel.limit", |c, v| codel(c).limit_packets = v as u32, q, q + 1),
            (Aqm::FqCodel, "bottleneck.fq_codel.target", |c, v| fq_codel(c).target_ns = v, t, t + 1),
            (Aqm::FqCodel, "bottleneck.fq_codel.flows", |c, v| fq_codel(c).flows = v as u32, 65_536, 65_537),
            (
                Aqm::FqCodel,
                "bottleneck.fq_codel.quantum",
                |c, v| fq_codel(c).quantum_bytes = NonZeroU32::new(v as u32).unwrap(),
                1 << 20,
                (1 << 20) + 1,
            ),
            (
                Aqm::FqCodel,
                "bottleneck.fq_codel.quantum",
                |c, v| fq_codel(c).quantum_bytes = NonZeroU32::new(v as u32).unwrap(),
                256,
                255,
            ),
            (Aqm::Pie, "bottleneck.pie.tupdate", |c, v| pie(c).tupdate_ns = v, 1_000_000, 999_999),
            (Aqm::Pie, "bottleneck.pie.burst", |c, v| pie(c).burst_ns = v, t, t + 1),
            (Aqm::Pie, "bottleneck.pie.alpha", |c, v| pie(c).alpha_16ths = v as u32, 32, 33),
            (Aqm::Red, "bottleneck.red.max", |c, v| red(c).max_bytes = v, b, b + 1),
            (Aqm::Droptail, "bottleneck.mark_threshold", |c, v| mark(c, MarkThreshold::Packets(v)), q, q + 1),
            (Aqm::Droptail, "bottleneck.mark_threshold", |c, v| mark(c, MarkThreshold::Ns(v)), t, t + 1),
            (Aqm::Droptail, "bottleneck.mark_threshold", |c, v| mark(c, MarkThreshold::Bytes(v)), b, b + 1),
            (Aqm::Droptail, "bottleneck.policer.burst", policer_burst, b, b + 1),
            (Aqm::Droptail, "bottleneck.trace", trace_period, day_ms, day_ms + 1),
            (Aqm::Droptail, "bottleneck.trace", trace_lines, fastest, fastest + 1),
        ];
        for (aqm, path, set, at, beyond) in cases {
            let with = |v: u64| {
                let mut c = ok_config();
                c.bottleneck.aqm = aqm;
                // The table its aqm needs (the defaults), then the change.
                match aqm {
                    Aqm::Codel => _ = codel(&mut c),
                    Aqm::FqCodel => _ = fq_codel(&mut c),
                    Aqm::Pie => _ = pie(&mut c),
                    Aqm::Red => _ = red(&mut c),
                    _ => {}
                }
                set(&mut c, v);
                validate(&c)
            };
            assert_eq!(with(at), Ok(()), "{path} at its limit");
            let e = with(beyond).expect_err(path);
            assert!(e.starts_with(&format!("{path}: ")) && e.contains("limit"), "{e}");
        }
    }

    fn workload() -> WorkloadConfig {
        WorkloadConfig {
            cc: "cubic".into(),
            rtt_ns: 10_000_000,
            params: vec![],
            ecn: Default::default(),
            jitter_ns: 0,
            path: vec![],
            reverse_path: vec![],
            start_ns: 0,
            stop_ns: 10_000_000_000,
            arrival_rate_hz: 100.0,
            size_bytes: Some(10_000),
            sizes: vec![],
            max_active: 100,
        }
    }

    #[test]
    fn workloads_and_applications_are_checked_with_their_field_paths() {
        let with = |change: &dyn Fn(&mut WorkloadConfig)| {
            let mut c = ok_config();
            c.workloads = vec![workload()];
            change(&mut c.workloads[0]);
            validate(&c)
        };
        assert_eq!(with(&|_| {}), Ok(()));
        type Change<'a> = &'a dyn Fn(&mut WorkloadConfig);
        let cases: Vec<(Change, &str)> = vec![
            (&|w| w.cc = "nope".into(), "workload[0].cc: unknown"),
            (&|w| w.rtt_ns = MAX_RTT_NS + 1, "workload[0].rtt: "),
            (&|w| w.jitter_ns = MAX_RTT_NS + 1, "workload[0].jitter: "),
            (&|w| w.start_ns = 10_000_000_000, "workload[0].start: "),
            (&|w| w.stop_ns = 10_000_000_001, "workload[0].stop: "),
            (&|w| w.arrival_rate_hz = MAX_ARRIVAL_RATE_HZ as f64 * 1.0001, "workload[0].arrival_rate: "),
            (&|w| w.arrival_rate_hz = f64::NAN, "workload[0].arrival_rate: "),
            // 10^5 a second for 10 s: 10^6 expected, the limit; more is beyond.
            (&|w| w.arrival_rate_hz = 100_001.0, "workload[0].arrival_rate: the workloads expect 1000010 arrivals"),
            (&|w| w.size_bytes = Some(MAX_FLOW_BYTES + 1), "workload[0].size: "),
            (&|w| w.sizes = vec![(0.0, 1), (1.0, 2)], "workload[0].size: give a size or"),
            (&|w| w.max_active = MAX_ACTIVE_FLOWS as u32 + 1, "workload[0].max_active: "),
            (&|w| w.path = vec![3], "workload[0].path[0]: no link 3"),
        ];
        for (change, want) in cases {
            let e = with(change).expect_err(want);
            assert!(e.starts_with(want), "{e:?} should start with {want:?}");
        }
        assert_eq!(with(&|w| w.arrival_rate_hz = 100_000.0), Ok(()));
        let sized = |points: Vec<(f64, u64)>| {
            with(&move |w| {
                w.size_bytes = None;
                w.sizes = points.clone();
            })
        };
        assert_eq!(sized(vec![(0.0, 0), (0.5, 100), (0.5, 1000), (1.0, 1000)]), Ok(()));
        for bad in [
            vec![(0.0, 10)],
            vec![(0.1, 10), (1.0, 20)],
            vec![(0.0, 10), (0.9, 20)],
            vec![(0.0, 10), (0.6, 20), (0.5, 30), (1.0, 40)],
            vec![(0.0, 10), (0.5, 5), (1.0, 40)],
        ] {
            assert!(sized(bad).unwrap_err().starts_with("workload[0].sizes: cumulative probabilities"));
        }
        let e = sized(vec![(0.0, 1), (1.0, MAX_FLOW_BYTES + 1)]).unwrap_err();
        assert!(e.starts_with("workload[0].sizes: ") && e.contains("limit"), "{e}");
        let many: Vec<(f64, u64)> = (0..=MAX_SIZE_POINTS).map(|k| (k as f64 / MAX_SIZE_POINTS as f64, k)).collect();
        assert!(sized(many).unwrap_err().contains("limit of 1024"));
        // Two workloads' max_active add up.
        let mut c = ok_config();
        c.workloads = vec![workload(), workload()];
        c.workloads[0].max_active = MAX_ACTIVE_FLOWS as u32;
        assert!(validate(&c).unwrap_err().starts_with("workload[1].max_active: the workloads' max_active add up"));
        // A scenario of workloads alone is one.
        c.flows.clear();
        c.workloads.pop();
        assert_eq!(validate(&c), Ok(()));
        // An application.
        let app = |a: AppConfig| {
            let mut c = ok_config();
            c.flows[0].app = Some(a);
            validate(&c)
        };
        let on_off = |on_ns, off_ns| Some(OnOffConfig { on_ns, off_ns, exponential: true });
        assert_eq!(app(AppConfig { rate_bps: Some(MAX_RATE_BPS), on_off: on_off(1, 10_000_000_000) }), Ok(()));
        for (rate_bps, on_off, want) in [
            (Some(MAX_RATE_BPS + 1), None, "flow[0].app.rate: "),
            (Some(0), None, "flow[0].app.rate: "),
            (None, None, "flow[0].app: "),
            (None, on_off(0, 5), "flow[0].app.on: "),
            (None, on_off(5, 10_000_000_001), "flow[0].app.off: "),
            (None, on_off(1, 1), "flow[0].app.on: "),
        ] {
            let e = app(AppConfig { rate_bps, on_off }).unwrap_err();
            assert!(e.starts_with(want), "{e}");
        }
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
