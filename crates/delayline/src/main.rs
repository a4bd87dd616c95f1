//! delayline: the live engine's per-flow base RTT, without netem, and
//! optionally its bottleneck.
//!
//! Creates a TUN device (gone when this process exits), reads every IPv4
//! packet the router namespace routes into it, holds it for the one-way
//! delay of the flow it belongs to (matched by source or destination
//! address) and writes it back; the kernel then routes it on to its real
//! destination. Timing uses CLOCK_MONOTONIC, ppoll with ns timeouts, a
//! 1 ns timer slack and (best effort) SCHED_FIFO priority 10.
//!
//!     delayline --tun NAME --flow 10.201.1.10=5000000 [--flow ADDR=NS ...]
//!               [--flow-schedule ADDR=T_NS:NS[,T_NS:NS...] ...]
//!               [--flow-jitter ADDR=NS ...]
//!               [--bottleneck BOTTLENECK_JSON|@FILE ...] [--flow-path ADDR=K[,K...] ...]
//!               [--flow-reverse ADDR=K[,K...] ...] [--seed N] [--trace FILE] [--check]
//!
//! `--check` reads the arguments and builds the bottleneck as a run would,
//! prints `ok` and exits, without a device (no root needed): the front
//! end's tests check with it that the delay line takes every scenario the
//! front end accepts (tests/test_field_limits.py).
//!
//! `--flow-schedule` changes a flow's one-way delay (both directions) at
//! T_NS after the run's time zero (the `t0` command); no packet overtakes
//! an earlier one of the same flow and direction (queue.rs).
//! `--flow-jitter` delays each packet to that address (the flow's ACKs) by
//! an extra 0..=NS, drawn as the simulator draws the scenario's `jitter`
//! (`sim::jitter`, from `--seed`), in order.
//!
//! Without `--bottleneck` the device is GSO-aware (vnet.rs): the kernel
//! hands over whole TCP send units (up to 64 KB) with a virtio-net header,
//! which is passed back unchanged, so the delay line handles a few frames
//! per 64 KB instead of one packet per 1.5 KB; the kernel segments them at
//! the bottleneck (the engine's TBF).
//!
//! With `--bottleneck` (a `sim::config::BottleneckConfig` as JSON), data
//! packets (from a flow's address) first take their delay, then pass the
//! simulator's bottleneck queue (link.rs), as in the simulator and on the
//! kernel's bottleneck (which the router reaches after the delay line);
//! ACKs only their delay. Given several
//! times, or with `--flow-path ADDR=K[,K...]` / `--flow-reverse
//! ADDR=K[,K...]` (link indices, the `--bottleneck`s in order from 0), it
//! is a topology (network.rs): each flow's data crosses the links of its
//! path (default: link 0), its ACKs those of its reverse path (default:
//! none), each link followed by its `delay_ns`; a flow's own delay comes
//! before its data's links and after its ACKs'. That queue
//! counts and serialises one wire packet per entry, so this mode keeps
//! the device per-packet (no offloads): a 64-KB frame must not be one
//! "packet" for RED, the drop decision or the per-packet serialisation.
//!
//! `--trace FILE` records every packet's arrival and departure with its
//! TCP numbers (trace.rs): what the live engine's host measurement reads.
//!
//! Prints `ready` on stdout once the device exists. Commands on stdin, one
//! per line: `t0 NS` (time zero of the run: rate and RTT schedules start),
//! `s` (print one JSON line of link counters; a topology's: `{"links":
//! [...], "acks": [...], "acks_compressed": [...]}`, network.rs), `s+` /
//! `s-` (the same, then start / stop recording sojourn times). On SIGTERM/SIGINT it prints one
//! JSON line of statistics and exits 0. It dies with its parent
//! (PR_SET_PDEATHSIG).

mod ecn;
mod link;
mod network;
mod queue;
mod sys;
mod trace;
mod vnet;

use std::io::Write;
use std::net::Ipv4Addr;
use std::os::fd::AsRawFd;
use std::process::ExitCode;

use network::{FlowRoute, Network};
use queue::{DelayQueues, Endpoint};
use trace::PacketTrace;
use sim::config::BottleneckConfig;
use sim::distribution::Distribution;

/// A packet written this much past its due time counts as late (1 ms: a
/// stall, not scheduling noise; `late_over_1ms` in the statistics).
const LATE_NS: u64 = 1_000_000;

/// Packets held beyond this many bytes are dropped (counted): a safety
/// valve, far above any scenario's bandwidth-delay product. Counted as
/// held in memory (with GSO, frames including their virtio-net header).
const MAX_QUEUED_BYTES: usize = 256 << 20;

/// Read buffer: the largest IPv4 packet (64 KB, also the largest GSO
/// frame: the veths' gso_max_size is 65536) plus its virtio-net header,
/// rounded up; a frame never arrives truncated.
const READ_BUFFER: usize = 128 << 10;

struct Args {
    tun: String,
    endpoints: Vec<Endpoint>,
    /// The links, link 0 first (empty: no userspace bottleneck).
    links: Vec<BottleneckConfig>,
    /// Per endpoint, its flow's routes through `links`.
    routes: Vec<FlowRoute>,
    /// Whether the statistics are a topology's (all links, `links`).
    topology: bool,
    seed: u64,
    check: bool,
    trace: Option<std::path::PathBuf>,
}

fn parse_addr(spec: &str, addr: &str) -> Result<[u8; 4], String> {
    let addr: Ipv4Addr = addr.parse().map_err(|_| format!("{spec}: bad IPv4 address"))?;
    Ok(addr.octets())
}

/// `ADDR=NS` after option `option`, NS being a `what` ("delay") in
/// integer ns; returns the option as written (for later errors), the
/// address and NS.
fn parse_addr_ns(option: &str, text: &str, what: &str) -> Result<(String, [u8; 4], u64), String> {
    let spec = format!("{option} {text}");
    let upper = what.to_uppercase();
    let (addr, ns) = text.split_once('=').ok_or(format!("{spec}: expected ADDR={upper}_NS"))?;
    let addr = parse_addr(&spec, addr)?;
    let ns: u64 = ns.parse().map_err(|_| format!("{spec}: bad {what} (integer ns)"))?;
    Ok((spec, addr, ns))
}

/// The `--flow` endpoint with address `addr`, for option `spec` that
/// refines it.
fn endpoint_of<'a>(endpoints: &'a mut [Endpoint], spec: &str, addr: [u8; 4]) -> Result<&'a mut Endpoint, String> {
    endpoints.iter_mut().find(|e| e.addr == addr).ok_or(format!("{spec}: no --flow has this address"))
}

/// `ADDR=K[,K...]`: a flow's route through the links, by index.
fn parse_route(option: &str, text: &str) -> Result<(String, [u8; 4], Vec<usize>), String> {
    let spec = format!("{option} {text}");
    let (addr, links) = text.split_once('=').ok_or(format!("{spec}: expected ADDR=K[,K...]"))?;
    let addr = parse_addr(&spec, addr)?;
    let links = links.split(',').map(|k| k.parse().map_err(|_| format!("{spec}: bad link index {k:?}"))).collect::<Result<Vec<usize>, _>>()?;
    Ok((spec, addr, links))
}

/// Checks a route's link indices: each an existing link, none twice (a
/// packet's place in its route is found by its link).
fn check_route(spec: &str, route: &[usize], n_links: usize) -> Result<(), String> {
    if let Some(k) = route.iter().find(|&&k| k >= n_links) {
        return Err(format!("{spec}: link {k} does not exist ({n_links} --bottleneck given)"));
    }
    if route.iter().enumerate().any(|(i, k)| route[..i].contains(k)) {
        return Err(format!("{spec}: a route crosses each link once"));
    }
    Ok(())
}

/// `T_NS:DELAY_NS[,T_NS:DELAY_NS...]`, strictly increasing in time.
fn parse_schedule(spec: &str, text: &str) -> Result<Vec<(u64, u64)>, String> {
    let mut changes: Vec<(u64, u64)> = Vec::new();
    for change in text.split(',') {
        let (at, delay) = change.split_once(':').ok_or(format!("{spec}: expected T_NS:DELAY_NS, got {change:?}"))?;
        let at: u64 = at.parse().map_err(|_| format!("{spec}: bad time {at:?} (integer ns)"))?;
        let delay: u64 = delay.parse().map_err(|_| format!("{spec}: bad delay {delay:?} (integer ns)"))?;
        if changes.last().is_some_and(|&(prev, _)| at <= prev) {
            return Err(format!("{spec}: times must increase"));
        }
        changes.push((at, delay));
    }
    Ok(changes)
}

fn parse_args() -> Result<Args, String> {
    let mut tun = None;
    let mut endpoints: Vec<Endpoint> = Vec::new();
    let mut schedules = Vec::new();
    let mut jitters = Vec::new();
    let mut links = Vec::new();
    let mut paths = Vec::new();
    let mut reverses = Vec::new();
    let mut seed = 1;
    let mut check = false;
    let mut trace = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--tun" => tun = Some(value()?),
            "--flow" => {
                let (_, addr, delay) = parse_addr_ns("--flow", &value()?, "delay")?;
                endpoints.push(Endpoint::fixed(addr, delay));
            }
            "--flow-schedule" => {
                let text = value()?;
                let spec = format!("--flow-schedule {text}");
                let (addr, changes) = text.split_once('=').ok_or(format!("{spec}: expected ADDR=T_NS:DELAY_NS,..."))?;
                let addr = parse_addr(&spec, addr)?;
                let changes = parse_schedule(&spec, changes)?;
                schedules.push((spec, addr, changes));
            }
            "--flow-jitter" => jitters.push(parse_addr_ns("--flow-jitter", &value()?, "jitter")?),
            "--bottleneck" => {
                // `@PATH`: the JSON is in that file (a link trace's can
                // exceed the kernel's 128 KB limit on one argument).
                let mut text = value()?;
                if let Some(path) = text.strip_prefix('@') {
                    text = std::fs::read_to_string(path).map_err(|e| format!("--bottleneck {text}: {e}"))?;
                }
                links.push(serde_json::from_str(&text).map_err(|e| format!("--bottleneck: {e}"))?);
            }
            "--flow-path" => paths.push(parse_route("--flow-path", &value()?)?),
            "--flow-reverse" => reverses.push(parse_route("--flow-reverse", &value()?)?),
            "--seed" => seed = value()?.parse().map_err(|_| "--seed: expected an integer".to_string())?,
            "--check" => check = true,
            "--trace" => trace = Some(value()?.into()),
            _ => return Err(format!("unknown argument {arg}")),
        }
    }
    for (spec, addr, changes) in schedules {
        endpoint_of(&mut endpoints, &spec, addr)?.schedule = changes;
    }
    for (spec, addr, jitter) in jitters {
        endpoint_of(&mut endpoints, &spec, addr)?.ack_jitter_ns = jitter;
    }
    let topology = links.len() > 1 || !paths.is_empty() || !reverses.is_empty();
    if topology && links.is_empty() {
        return Err("--flow-path and --flow-reverse need --bottleneck".into());
    }
    let mut routes = vec![FlowRoute { path: vec![0], reverse: vec![] }; endpoints.len()];
    for (spec, addr, path) in paths {
        check_route(&spec, &path, links.len())?;
        let i = endpoints.iter().position(|e| e.addr == addr).ok_or(format!("{spec}: no --flow has this address"))?;
        routes[i].path = path;
    }
    for (spec, addr, reverse) in reverses {
        check_route(&spec, &reverse, links.len())?;
        let i = endpoints.iter().position(|e| e.addr == addr).ok_or(format!("{spec}: no --flow has this address"))?;
        routes[i].reverse = reverse;
    }
    let tun = tun.ok_or("--tun is required")?;
    Ok(Args { tun, endpoints, links, routes, topology, seed, check, trace })
}

#[derive(Default)]
struct Stats {
    /// Packets (with GSO: frames) delayed and written back.
    packets: u64,
    /// Their IP bytes (without virtio-net headers).
    bytes: u64,
    /// Wire packets they stand for (a GSO frame: its segments).
    segments: u64,
    /// Whether the device hands over GSO frames.
    gso: bool,
    passthrough: u64,
    dropped_overflow: u64,
    write_errors: u64,
    /// Exact, as the histogram's top bin is only within 1/1024 of it.
    late_max_ns: u64,
    /// Every packet's lateness (ns past its due time), for its exact mean
    /// and its percentiles: the mean and the maximum hide whether the delay line adds a little
    /// to every packet or stalls now and then, releasing what queued
    /// behind the stall in a burst (bounded memory: an HDR histogram).
    lateness: Distribution,
    /// Packets written more than [`LATE_NS`] late.
    late_over_1ms: u64,
    max_queued_bytes: usize,
    realtime: bool,
}

impl Stats {
    /// A packet went out `late_ns` after its due time.
    fn note_late(&mut self, late_ns: u64) {
        self.late_max_ns = self.late_max_ns.max(late_ns);
        self.lateness.record(late_ns);
        self.late_over_1ms += u64::from(late_ns > LATE_NS);
    }

    fn json(&mut self, network: Option<&mut Network>, topology: bool) -> String {
        let mean_us = self.lateness.mean().unwrap_or(0.0) / 1e3;
        let mut pct = |p: f64| self.lateness.percentile(p).unwrap_or(0) as f64 / 1e3;
        let (p50, p99, p999) = (pct(50.0), pct(99.0), pct(99.9));
        let link_fields = match network {
            Some(network) if topology => format!(", \"links\": {}", network.final_links_json()),
            Some(network) => {
                let link = network.first_link();
                format!(", \"link\": {}, {}", link.stats_json(), link.sojourn_json())
            }
            None => String::new(),
        };
        format!(
            "{{\"packets\": {}, \"bytes\": {}, \"segments\": {}, \"gso\": {}, \"passthrough\": {}, \
             \"dropped_overflow\": {}, \"write_errors\": {}, \"lateness_mean_us\": {:.3}, \"lateness_max_us\": {:.3}, \
             \"lateness_p50_us\": {:.3}, \"lateness_p99_us\": {:.3}, \"lateness_p999_us\": {:.3}, \
             \"late_over_1ms\": {}, \"max_queued_bytes\": {}, \"realtime\": {}{}}}",
            self.packets,
            self.bytes,
            self.segments,
            self.gso,
            self.passthrough,
            self.dropped_overflow,
            self.write_errors,
            mean_us,
            self.late_max_ns as f64 / 1e3,
            p50,
            p99,
            p999,
            self.late_over_1ms,
            self.max_queued_bytes,
            self.realtime,
            link_fields
        )
    }
}

fn say(line: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}")?;
    out.flush()
}

/// Executes the complete command lines in `pending`.
fn commands(pending: &mut Vec<u8>, queues: &mut DelayQueues, network: &mut Option<Network>, topology: bool) -> std::io::Result<()> {
    while let Some(end) = pending.iter().position(|&b| b == b'\n') {
        let line: Vec<u8> = pending.drain(..=end).collect();
        let line = String::from_utf8_lossy(&line).trim().to_string();
        if let Some(t0) = line.strip_prefix("t0 ") {
            if let Ok(t0) = t0.trim().parse::<u64>() {
                queues.start(t0);
                if let Some(network) = network.as_mut() {
                    network.start(t0);
                }
            }
        } else if line.starts_with('s') {
            let stats = match network.as_mut() {
                Some(network) if topology => network.stats_json(),
                Some(network) => network.first_link().stats_json(),
                None => "null".to_string(),
            };
            say(&stats)?;
            if let Some(network) = network.as_mut() {
                match line.as_str() {
                    "s+" => network.set_recording(true),
                    "s-" => network.set_recording(false),
                    _ => {}
                }
            }
        }
    }
    Ok(())
}

/// The delay queues and the network of `args`: a flow's ACKs that cross
/// no link take the mirror of its data path's delays in their host delay;
/// a flow's ACK jitter is drawn where its ACKs leave the receiver, before
/// a reverse path's first link (network.rs), else in the host delay.
fn build(args: &Args) -> (DelayQueues, Option<Network>) {
    let mut endpoints = args.endpoints.clone();
    let network = (!args.links.is_empty()).then(|| {
        let jitters: Vec<u64> = endpoints.iter().map(|e| e.ack_jitter_ns).collect();
        Network::new(&args.links, &args.routes, &jitters, args.seed)
    });
    if let Some(network) = &network {
        for (i, e) in endpoints.iter_mut().enumerate() {
            e.ack_extra_ns = network.ack_extra_ns(i);
            if network.draws_ack_jitter(i) {
                e.ack_jitter_ns = 0;
            }
        }
    }
    (DelayQueues::new(endpoints, args.seed), network)
}

fn run(args: Args) -> std::io::Result<(Stats, Option<Network>)> {
    sys::set_process_options()?;
    let realtime = sys::try_realtime_priority();
    let signals = sys::termination_signals()?;
    // GSO frames only without the userspace bottleneck (see the top).
    let gso = args.links.is_empty();
    let tun = sys::open_tun(&args.tun, gso)?;
    let header = if gso { vnet::HEADER_LEN } else { 0 };
    let mut trace = args.trace.as_deref().map(PacketTrace::create).transpose()?;
    sys::set_nonblocking(0)?;
    say("ready")?;
    let (mut queues, mut network) = build(&args);
    let tun_fd = tun.as_raw_fd();
    let mut fds = vec![tun_fd, signals.as_raw_fd(), 0];
    let mut stats = Stats { realtime, gso, ..Stats::default() };
    let mut buf = vec![0u8; READ_BUFFER];
    let mut pending = Vec::new();
    // Packets to write back to the TUN device now: (route key, due, frame).
    let mut out: Vec<(usize, u64, Vec<u8>)> = Vec::new();
    loop {
        let now = sys::monotonic_ns();
        let next = match (queues.next_due(), network.as_ref().and_then(|n| n.next_event())) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let ready = sys::wait_readable(&fds, next.map(|due| due.saturating_sub(now)))?;
        if ready[1] {
            if let Some(trace) = trace.as_mut() {
                trace.flush()?;
            }
            return Ok((stats, network));
        }
        if fds.len() > 2 && ready[2] {
            match sys::read_nonblocking(0, &mut buf)? {
                Some(0) => {
                    fds.truncate(2); // the engine closed our stdin: no more commands
                }
                Some(n) => {
                    pending.extend_from_slice(&buf[..n]);
                    commands(&mut pending, &mut queues, &mut network, args.topology)?;
                }
                None => {}
            }
        }
        if ready[0] {
            while let Some(n) = sys::read_nonblocking(tun_fd, &mut buf)? {
                let arrived = sys::monotonic_ns();
                let frame = &buf[..n];
                match queues.classify(frame.get(header..).unwrap_or_default()) {
                    None => {
                        stats.passthrough += 1;
                        if sys::write_packet(tun_fd, frame).is_err() {
                            stats.write_errors += 1;
                        }
                    }
                    Some(_) if queues.queued_bytes() + n > MAX_QUEUED_BYTES => stats.dropped_overflow += 1,
                    Some(key) => {
                        if let Some(trace) = trace.as_mut() {
                            trace.record(trace::Kind::Read, arrived, 0, key, &frame[header..])?;
                        }
                        match network.as_mut() {
                            // An ACK crosses its reverse path's links (if
                            // any), then takes its host delay.
                            Some(network) if network::is_ack(key) => {
                                network.advance(arrived, &mut |key, t, bytes| leave(&mut queues, &mut out, key, t, bytes));
                                if let Some(bytes) = network.enter(arrived, key, frame.to_vec()) {
                                    queues.push(key, arrived, bytes);
                                }
                            }
                            // Data takes its host delay first, then its
                            // path's links; without a network, the delay only.
                            _ => {
                                queues.push(key, arrived, frame.to_vec());
                            }
                        }
                        stats.max_queued_bytes = stats.max_queued_bytes.max(queues.queued_bytes());
                    }
                }
            }
        }
        let now = sys::monotonic_ns();
        if let Some(network) = network.as_mut() {
            network.advance(now, &mut |key, t, bytes| leave(&mut queues, &mut out, key, t, bytes));
        }
        while let Some(packet) = queues.pop_due(now) {
            match network.as_mut() {
                // Data done with its host delay enters its path's first link.
                // (The network is advanced to `now` already.)
                Some(network) if !network::is_ack(packet.key) => {
                    if let Some(bytes) = network.enter(now, packet.key, packet.bytes) {
                        out.push((packet.key, packet.due_ns, bytes));
                    }
                    network.advance(now, &mut |key, t, bytes| leave(&mut queues, &mut out, key, t, bytes));
                    continue;
                }
                Some(network) => network.ack_delivered(packet.key / 2, packet.due_ns),
                None => {}
            }
            out.push((packet.key, packet.due_ns, packet.bytes));
            // Written as they fall due, with the data the network let out.
            write_out(&mut out, now, tun_fd, header, gso, &mut stats, &mut trace)?;
        }
        write_out(&mut out, now, tun_fd, header, gso, &mut stats, &mut trace)?;
    }
}

/// Where a packet leaving the network goes: data to the TUN device (it
/// took its host delay before the links), an ACK to its host delay.
fn leave(queues: &mut DelayQueues, out: &mut Vec<(usize, u64, Vec<u8>)>, key: usize, t_ns: u64, bytes: Vec<u8>) {
    if network::is_ack(key) {
        queues.push(key, t_ns, bytes);
    } else {
        out.push((key, t_ns, bytes));
    }
}

/// Writes the packets in `out` (route key, due time, frame) back to the
/// TUN device, counting each one's lateness at `now` and tracing it.
fn write_out(out: &mut Vec<(usize, u64, Vec<u8>)>, now: u64, tun_fd: i32, header: usize, gso: bool,
             stats: &mut Stats, trace: &mut Option<PacketTrace>) -> std::io::Result<()> {
    for (key, due_ns, bytes) in out.drain(..) {
        stats.packets += 1;
        stats.bytes += (bytes.len() - header) as u64;
        stats.segments += if gso { vnet::segments(&bytes) } else { 1 };
        stats.note_late(now.saturating_sub(due_ns));
        if sys::write_packet(tun_fd, &bytes).is_err() {
            stats.write_errors += 1;
        }
        if let Some(trace) = trace.as_mut() {
            trace.record(trace::Kind::Written, sys::monotonic_ns(), due_ns, key, &bytes[header..])?;
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(problem) => {
            eprintln!("delayline: {problem}");
            return ExitCode::from(2);
        }
    };
    if args.check {
        build(&args);
        println!("ok");
        return ExitCode::SUCCESS;
    }
    let topology = args.topology;
    match run(args) {
        Ok((mut stats, mut network)) => {
            println!("{}", stats.json(network.as_mut(), topology));
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("delayline: {err}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lateness_percentiles_show_rare_stalls_that_the_mean_hides() {
        let mut stats = Stats::default();
        // 985 packets 20 us late, 13 two ms late, 2 twelve ms late: the
        // mean (70 us) looks harmless, p99 and p99.9 show the stalls.
        for (count, late) in [(985, 20_000), (13, 2_000_000), (2, 12_000_000)] {
            for _ in 0..count {
                stats.packets += 1;
                stats.note_late(late);
            }
        }
        let json: serde_json::Value = serde_json::from_str(&stats.json(None, false)).unwrap();
        let us = |k: &str| json[k].as_f64().unwrap();
        assert_eq!(us("lateness_p50_us"), 20.0);
        assert_eq!(us("lateness_p99_us"), 2000.0);
        assert_eq!(us("lateness_p999_us"), 12000.0);
        assert_eq!(us("lateness_max_us"), 12000.0);
        assert_eq!(json["late_over_1ms"], 15);
        assert!((us("lateness_mean_us") - 69.7).abs() < 1e-9);
    }

    #[test]
    fn a_route_names_existing_links_each_once() {
        let (spec, addr, route) = parse_route("--flow-path", "10.201.1.10=0,2,1").unwrap();
        assert_eq!((addr, route.clone()), ([10, 201, 1, 10], vec![0, 2, 1]));
        assert!(check_route(&spec, &route, 3).is_ok());
        assert!(check_route(&spec, &route, 2).unwrap_err().contains("link 2 does not exist"));
        assert!(check_route(&spec, &[0, 1, 0], 2).unwrap_err().contains("once"));
        assert!(parse_route("--flow-path", "10.201.1.10=").unwrap_err().contains("bad link index"));
    }
}
