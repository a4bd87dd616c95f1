//! The event loop: owns every part of one simulated dumbbell and moves
//! packets between them.
//!
//! ```text
//!  sender i --(data)--> bottleneck queue --(serialise)--> data pipe i (rtt_i/2)
//!     ^                                                        |
//!     +----------------- ack pipe i (rtt_i/2) <--(ACK)--- receiver i
//! ```
//! The hosts at both ends ([`crate::host`]) add their timing: a flow's
//! start phase, each ACK's turnaround (in the ACK pipe), a sender timer's
//! lateness, and stalls of the path, which hold the packets on their way
//! to the bottleneck (a flow's egress) and the ACKs on theirs to the
//! sender until they end.
//!
//! Time is integer nanoseconds; events with equal times run in scheduling
//! order ([`EventQueue`]). Each pipe has at most one pending event (its
//! head), the link one valid event (the end of the current transmission;
//! one a rate change moved is recognised by generation), and each sender
//! one valid wake-up (older ones are recognised by generation).
//!
//! Nothing here grows with the number of packets simulated: queues and
//! pipes are bounded by the buffer and the windows, stale events by the
//! timers' spans, and window statistics are streaming
//! ([`crate::distribution`]); only the telemetry grows, by one row per
//! flow and interval.

use crate::bottleneck::{nanobits_to_bytes, Bottleneck, LinkCounters, Offer};
use crate::config::SimConfig;
use crate::event_queue::EventQueue;
use crate::host::{FlowHost, Stalls};
use crate::jitter::Jitter;
use crate::packet::{AckPacket, DataPacket};
use crate::pipe::Pipe;
use crate::receiver::{Receiver, RxAction};
use crate::result::{FlowResult, LinkResult, SimResult};
use crate::rng::SimRng;
use crate::tcp::{SenderConfig, TcpSender};
use crate::telemetry::{FlowCounters, FlowSnapshot, Recorder};

/// Events between two calls of [`Simulation::run_with`]'s stop hook: a
/// power of two (a mask test per event). Measured: ~1.4 ms of wall time
/// (at most 4 ms) for one BBR flow at 10 Gbit/s (~11M events/s), ~6-8 ms
/// for 10,000 flows at 10 Gbit/s (2-2.5M events/s); so a Ctrl-C is seen
/// within a few ms, while the hook's cost (the GIL and a signal check,
/// ~1 µs) stays below 0.1%.
/// The same hook carries the simulated time out, for a progress bar: a
/// read of the clock every few ms of wall time, at no extra cost.
pub const STOP_POLL_EVENTS: u64 = 1 << 14;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    FlowStart(u32),
    /// The sender asked to be polled; valid only with the current generation.
    SenderWake { flow: u32, gen: u32 },
    /// The bottleneck finished serialising its packet; valid only with the
    /// current link generation (a rate change moves the end).
    LinkTxDone { gen: u32 },
    /// The head of flow's data pipe reaches the receiver.
    DataPipe(u32),
    /// The head of flow's ACK pipe reaches the sender.
    AckPipe(u32),
    /// The head of flow's egress (packets a stall held) reaches the link.
    Egress(u32),
    /// Flow's receiver timer: delayed ACK or SACK compression (the
    /// receiver ignores it if an ACK sent since made it moot).
    AckTimer(u32),
    RateChange(u32),
    /// Flow's base RTT changes (index into its rtt_schedule).
    RttChange { flow: u32, idx: u32 },
    Sample,
    MeasureStart,
    MeasureEnd,
}

struct Flow {
    sender: TcpSender,
    receiver: Receiver,
    data_pipe: Pipe<DataPacket>,
    ack_pipe: Pipe<AckPacket>,
    /// Packets sent during a stall of the path, held until it ends (and
    /// those behind them, in order); empty without stalls.
    egress: Pipe<DataPacket>,
    /// The flow's hosts: start phase, ACK turnaround, timer lateness.
    host: FlowHost,
    wake_gen: u32,
    wake_at: Option<u64>,
    sent: u64,
    /// Counters at the start and end of the measurement window.
    at_from: FlowCounters,
    at_to: Option<FlowCounters>,
    /// A sized flow: payload bytes the receiver must have in order (whole
    /// segments) for the flow to be complete; None for a bulk flow.
    complete_at_bytes: Option<u64>,
    /// When the receiver had them all, ns.
    completed_ns: Option<u64>,
}

impl Flow {
    /// A sized flow is complete the first time its receiver has every byte.
    fn note_completion(&mut self, now_ns: u64) {
        if self.completed_ns.is_none() && self.complete_at_bytes.is_some_and(|b| self.receiver.delivered_bytes() >= b) {
            self.completed_ns = Some(now_ns);
        }
    }

    fn counters(&self) -> FlowCounters {
        FlowCounters {
            delivered_bytes: self.receiver.delivered_bytes(),
            retransmits: self.sender.telemetry().retransmits_total,
        }
    }
}

pub struct Simulation {
    cfg: SimConfig,
    now_ns: u64,
    events: EventQueue<Event>,
    rng: SimRng,
    link: Bottleneck,
    /// Generation of the link's pending completion event.
    link_gen: u32,
    flows: Vec<Flow>,
    recorder: Recorder,
    link_at_from: LinkCounters,
    link_at_to: Option<LinkCounters>,
    /// The hosts' stalls (nothing arrives and no timer fires during one).
    stalls: Stalls,
    /// Reused buffer for packets a sender emits in one poll.
    out: Vec<DataPacket>,
}

impl Simulation {
    /// Builds the dumbbell. `cfg` must have passed [`crate::validate`].
    pub fn new(cfg: SimConfig) -> Self {
        let mut rng = SimRng::new(cfg.seed);
        let wire_bytes = cfg.mss + cfg.wire_overhead;
        let n = cfg.flows.len();
        let flows = cfg
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let ops = cc_native::lookup(&f.cc).expect("validated: known cc");
                let sender = TcpSender::new(
                    SenderConfig {
                        flow: i as u32,
                        mss: cfg.mss,
                        wire_bytes,
                        stop_ns: f.stop_ns,
                        size_segments: f.size_bytes.map(|b| b.div_ceil(cfg.mss as u64) as u32),
                        rng_seed: rng.derive_seed(),
                        params: f.params.clone(),
                        ecn: f.ecn,
                    },
                    ops,
                );
                // Base RTT split evenly between the two directions.
                let fwd = f.rtt_ns / 2;
                Flow {
                    sender,
                    receiver: Receiver::new(i as u32, cfg.mss, f.ecn),
                    data_pipe: Pipe::new(fwd),
                    ack_pipe: Pipe::with_jitter(f.rtt_ns - fwd, Jitter::for_flow(f.jitter_ns, cfg.seed, i)),
                    egress: Pipe::new(0),
                    host: FlowHost::for_flow(cfg.host.as_ref(), cfg.seed, i),
                    wake_gen: 0,
                    wake_at: None,
                    sent: 0,
                    at_from: FlowCounters::default(),
                    at_to: None,
                    complete_at_bytes: f.size_bytes.map(|b| b.div_ceil(cfg.mss as u64) * cfg.mss as u64),
                    completed_ns: None,
                }
            })
            .collect();
        let link = Bottleneck::new(&cfg.bottleneck, n, wire_bytes);
        let mut sim = Self {
            now_ns: 0,
            events: EventQueue::default(),
            rng,
            link,
            link_gen: 0,
            flows,
            recorder: Recorder::new(cfg.interval_ns, n, (cfg.duration_ns / cfg.interval_ns) as usize),
            link_at_from: Default::default(),
            link_at_to: None,
            stalls: Stalls::new(cfg.host.as_ref(), cfg.seed),
            out: Vec::with_capacity(64),
            cfg,
        };
        for (i, f) in sim.cfg.flows.iter().enumerate() {
            let start = (f.start_ns + sim.flows[i].host.start_offset()).min(sim.cfg.duration_ns - 1);
            sim.events.schedule(start, Event::FlowStart(i as u32));
        }
        for (f, fc) in sim.cfg.flows.iter().enumerate() {
            for (idx, c) in fc.rtt_schedule.iter().enumerate() {
                sim.events.schedule(c.at_ns, Event::RttChange { flow: f as u32, idx: idx as u32 });
            }
        }
        for (i, c) in sim.cfg.bottleneck.schedule.iter().enumerate() {
            sim.events.schedule(c.at_ns, Event::RateChange(i as u32));
        }
        sim.events.schedule(sim.cfg.measure_from_ns, Event::MeasureStart);
        if sim.cfg.measure_to_ns < sim.cfg.duration_ns {
            sim.events.schedule(sim.cfg.measure_to_ns, Event::MeasureEnd);
        }
        sim.events.schedule(sim.cfg.interval_ns, Event::Sample);
        sim
    }

    /// Runs to the configured duration and returns the results.
    pub fn run(self) -> SimResult {
        self.run_with(&mut |_| false).expect("never asked to stop")
    }

    /// Runs to the configured duration, calling `should_stop(now_ns)` with
    /// the simulated time every [`STOP_POLL_EVENTS`] events; None if it
    /// returned true (the run is abandoned). The hook sees nothing of the
    /// simulation but its clock and changes nothing in it: a run it lets
    /// finish is the run [`Self::run`] gives.
    pub fn run_with(mut self, should_stop: &mut dyn FnMut(u64) -> bool) -> Option<SimResult> {
        self.advance(should_stop).then(|| self.finish())
    }

    /// Processes every event up to the end of the run and closes the
    /// measurement window; false if `should_stop` ended it early.
    fn advance(&mut self, should_stop: &mut dyn FnMut(u64) -> bool) -> bool {
        let end = self.cfg.duration_ns;
        while let Some((t, ev)) = self.events.pop_until(end) {
            self.now_ns = t;
            self.dispatch(ev);
            if self.events.processed().is_multiple_of(STOP_POLL_EVENTS) && should_stop(self.now_ns) {
                return false;
            }
        }
        self.now_ns = end;
        if self.link_at_to.is_none() {
            self.measure_end();
        }
        true
    }

    fn dispatch(&mut self, ev: Event) {
        let now = self.now_ns;
        match ev {
            Event::FlowStart(f) => {
                // The SYN exchange gave Linux a first RTT sample: the base
                // RTT plus the queue the SYN waited behind.
                let queue_ns =
                    (self.link.queue_bytes() as u128 * 8 * 1_000_000_000 / self.link.rate_bps() as u128) as u64;
                let fl = &mut self.flows[f as usize];
                let rtt_ns = self.cfg.flows[f as usize].rtt_ns + queue_ns;
                fl.sender.set_handshake_rtt(rtt_ns);
                fl.receiver.set_handshake_rtt(rtt_ns);
                fl.sender.start(now);
                self.poll_sender(f);
            }
            Event::SenderWake { flow, gen } => {
                let fl = &mut self.flows[flow as usize];
                if gen == fl.wake_gen {
                    fl.wake_at = None;
                    self.poll_sender(flow);
                }
            }
            Event::LinkTxDone { gen } => {
                if gen != self.link_gen {
                    return; // moved by a rate change
                }
                let (pkt, next) = self.link.complete_tx(now);
                if let Some(t) = next {
                    self.events.schedule(t, Event::LinkTxDone { gen });
                }
                let f = pkt.flow;
                if let Some(t) = self.flows[f as usize].data_pipe.push(now, pkt) {
                    self.events.schedule(t, Event::DataPipe(f));
                }
            }
            Event::DataPipe(f) => {
                while let Some(pkt) = self.flows[f as usize].data_pipe.pop_due(now) {
                    let action = self.flows[f as usize].receiver.on_data(now, &pkt);
                    self.flows[f as usize].note_completion(now);
                    if let Some(ack) = self.flows[f as usize].receiver.take_flushed() {
                        self.send_ack(f, ack);
                    }
                    match action {
                        RxAction::Ack(ack) => self.send_ack(f, ack),
                        RxAction::ArmTimer(t) => self.events.schedule(t, Event::AckTimer(f)),
                        RxAction::Wait => {}
                    }
                }
                if let Some(t) = self.flows[f as usize].data_pipe.head_exit_ns() {
                    self.events.schedule(t, Event::DataPipe(f));
                }
            }
            Event::AckPipe(f) => {
                while let Some(ack) = self.flows[f as usize].ack_pipe.pop_due(now) {
                    self.flows[f as usize].sender.on_ack(now, &ack);
                    self.poll_sender(f);
                }
                if let Some(t) = self.flows[f as usize].ack_pipe.head_exit_ns() {
                    self.events.schedule(t, Event::AckPipe(f));
                }
            }
            Event::Egress(f) => {
                while let Some(pkt) = self.flows[f as usize].egress.pop_due(now) {
                    self.offer(pkt);
                }
                if let Some(t) = self.flows[f as usize].egress.head_exit_ns() {
                    self.events.schedule(t, Event::Egress(f));
                }
            }
            Event::AckTimer(f) => {
                if let Some(ack) = self.flows[f as usize].receiver.on_timer(now) {
                    self.send_ack(f, ack);
                }
            }
            Event::RateChange(i) => {
                let rate = self.cfg.bottleneck.schedule[i as usize].rate_bps;
                if let Some(t) = self.link.change_rate(now, rate) {
                    self.link_gen = self.link_gen.wrapping_add(1);
                    self.events.schedule(t, Event::LinkTxDone { gen: self.link_gen });
                }
            }
            Event::RttChange { flow, idx } => {
                let rtt = self.cfg.flows[flow as usize].rtt_schedule[idx as usize].rtt_ns;
                let fl = &mut self.flows[flow as usize];
                fl.data_pipe.set_delay(rtt / 2);
                fl.ack_pipe.set_delay(rtt - rtt / 2);
            }
            Event::Sample => {
                let link = &self.link;
                let snaps = self.flows.iter().enumerate().map(|(i, f)| FlowSnapshot {
                    counters: f.counters(),
                    sender: f.sender.telemetry(),
                    queue_bytes: link.flow_queue_bytes(i),
                });
                self.recorder.sample(now, snaps, link);
                self.events.schedule(now + self.cfg.interval_ns, Event::Sample);
            }
            Event::MeasureStart => {
                for f in &mut self.flows {
                    f.at_from = f.counters();
                    f.sender.set_rtt_recording(true);
                }
                self.link_at_from = self.link.counters(now);
                self.link.record_window(true);
            }
            Event::MeasureEnd => self.measure_end(),
        }
    }

    fn measure_end(&mut self) {
        for f in &mut self.flows {
            f.at_to = Some(f.counters());
            f.sender.set_rtt_recording(false);
        }
        self.link_at_to = Some(self.link.counters(self.now_ns));
        self.link.record_window(false);
    }

    fn send_ack(&mut self, f: u32, ack: AckPacket) {
        let now = self.now_ns;
        let fl = &mut self.flows[f as usize];
        let turnaround = fl.host.ack_delay();
        let stalls = &mut self.stalls;
        if let Some(t) = fl.ack_pipe.push_with(now, ack, |t| stalls.release(now, t + turnaround)) {
            self.events.schedule(t, Event::AckPipe(f));
        }
    }

    /// Lets the sender transmit what it may now, offers those packets to the
    /// bottleneck, and schedules the sender's next wake-up.
    fn poll_sender(&mut self, f: u32) {
        let now = self.now_ns;
        let mut out = std::mem::take(&mut self.out);
        self.flows[f as usize].sender.poll(now, &mut out);
        // During a stall of the path the packets wait for its end (and
        // later ones behind them), as they would in a stalled host or delay line.
        let held_until = if out.is_empty() { now } else { self.stalls.release(now, now) };
        for pkt in out.drain(..) {
            let fl = &mut self.flows[f as usize];
            fl.sent += 1;
            if held_until > now || !fl.egress.is_empty() {
                if let Some(t) = fl.egress.push_with(now, pkt, |_| held_until) {
                    self.events.schedule(t, Event::Egress(f));
                }
            } else {
                self.offer(pkt);
            }
        }
        self.out = out;
        let fl = &mut self.flows[f as usize];
        if let Some(t) = fl.sender.next_wakeup_ns() {
            let t = t.max(now);
            if fl.wake_at.is_none_or(|w| t < w) {
                fl.wake_gen = fl.wake_gen.wrapping_add(1);
                fl.wake_at = Some(t);
                // The timer fires late.
                let fires = t + fl.host.timer_lateness();
                self.events.schedule(fires, Event::SenderWake { flow: f, gen: fl.wake_gen });
            }
        }
    }

    /// Offers a packet to the bottleneck now.
    fn offer(&mut self, pkt: DataPacket) {
        match self.link.offer(self.now_ns, pkt, &mut self.rng) {
            Offer::StartedTx(t) => self.events.schedule(t, Event::LinkTxDone { gen: self.link_gen }),
            // Drops are counted per flow by the link (under fq a packet of
            // another flow may be the one that is lost).
            Offer::Queued | Offer::Dropped(_) => {}
        }
    }

    /// The results of a run [`Self::advance`] completed.
    fn finish(&mut self) -> SimResult {
        let (from, to) = (self.cfg.measure_from_ns, self.cfg.measure_to_ns.min(self.cfg.duration_ns));
        let link_to = self.link_at_to.expect("window closed");
        let flows = self
            .flows
            .iter_mut()
            .enumerate()
            .map(|(i, f)| {
                let end = f.at_to.expect("window closed");
                let total = f.counters();
                let tel = f.sender.telemetry();
                let rtts = f.sender.rtt_window();
                FlowResult {
                    delivered_bytes_window: end.delivered_bytes - f.at_from.delivered_bytes,
                    delivered_bytes_total: total.delivered_bytes,
                    retransmits_window: end.retransmits - f.at_from.retransmits,
                    retransmits_total: total.retransmits,
                    sent_segments: f.sent,
                    arrived_segments: f.receiver.arrived_segments(),
                    dropped_segments: self.link.flow_drops(i),
                    in_network_segments: self.link.flow_packets(i as u32)
                        + f.data_pipe.len() as u64
                        + f.egress.len() as u64,
                    rtt_mean_us: rtts.mean(),
                    rtt_p95_us: rtts.percentile(95.0).map(|us| us as f64),
                    rto_count: tel.rto_count,
                    ce_marked: self.link.flow_marks(i),
                    ce_received: f.receiver.ce_packets() as u64,
                    delivered_ce: f.sender.delivered_ce() as u64,
                    fct_ns: f.completed_ns.map(|t| t - self.cfg.flows[i].start_ns),
                }
            })
            .collect();
        let link_end = self.link.counters(self.now_ns);
        let sojourn = self.link.sojourn_window();
        let mut sojourn_us = |p: f64| sojourn.percentile(p).map(|ns| ns as f64 / 1e3);
        let (p50, p95, p99) = (sojourn_us(50.0), sojourn_us(95.0), sojourn_us(99.0));
        let link = LinkResult {
            tx_bytes_window: nanobits_to_bytes(link_to.tx_nanobits - self.link_at_from.tx_nanobits),
            capacity_bytes_window: self.cfg.bottleneck.capacity_bytes(from, to),
            tx_packets_total: link_end.tx_packets,
            drops_window: link_to.drops - self.link_at_from.drops,
            marks_window: link_to.marks - self.link_at_from.marks,
            queue_delay_mean_us: sojourn.mean().map(|ns| ns / 1e3),
            queue_delay_p50_us: p50,
            queue_delay_p95_us: p95,
            queue_delay_p99_us: p99,
            max_queue_bytes: link_end.max_queue_bytes,
        };
        SimResult {
            flows,
            link,
            flow_series: std::mem::take(&mut self.recorder.flow_series),
            link_series: std::mem::take(&mut self.recorder.link_series),
            events: self.events.processed(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Aqm, BottleneckConfig, FlowConfig, FqConfig, PolicerConfig, RedConfig};
    use crate::distribution::{Distribution, RELATIVE_ERROR};

    const MS: u64 = 1_000_000;
    const S: u64 = 1_000_000_000;

    fn flow(cc: &str, rtt_ms: u64) -> FlowConfig {
        FlowConfig {
            cc: cc.into(),
            rtt_ns: rtt_ms * MS,
            start_ns: 0,
            stop_ns: None,
            size_bytes: None,
            params: vec![],
            rtt_schedule: vec![],
            ecn: Default::default(),
            jitter_ns: 0,
        }
    }

    /// The scenarios of examples/*.toml (100 Mbit/s; 2 MB droptail unless
    /// said), measured from 20 s of 60 s instead of 120 s.
    fn examples() -> Vec<(&'static str, SimConfig)> {
        let base = |flows: Vec<FlowConfig>| SimConfig {
            duration_ns: 60 * S,
            seed: 1,
            measure_from_ns: 20 * S,
            measure_to_ns: 60 * S,
            interval_ns: 100 * MS,
            mss: 1448,
            wire_overhead: 66,
            bottleneck: BottleneckConfig::droptail(100_000_000, 2_000_000),
            flows,
            host: None,
        };
        let with = |mut c: SimConfig, change: &dyn Fn(&mut SimConfig)| {
            change(&mut c);
            c
        };
        vec![
            ("bbq-rtt-fairness", base(vec![flow("bbq", 10), flow("bbq", 50)])),
            ("bbr-equal-rtt", base(vec![flow("bbr", 10), flow("bbr", 10)])),
            (
                "bbr-policer",
                with(base(vec![flow("bbr", 40)]), &|c| {
                    c.bottleneck.policer = Some(PolicerConfig {
                        rate_bps: 50_000_000.try_into().unwrap(),
                        burst_bytes: 64_000.try_into().unwrap(),
                    })
                }),
            ),
            (
                "bbr-rtt-fq",
                with(base(vec![flow("bbr", 10), flow("bbr", 50)]), &|c| {
                    c.bottleneck.aqm = Aqm::Fq;
                    c.bottleneck.fq = Some(FqConfig { quantum_bytes: 1514.try_into().unwrap() });
                }),
            ),
            ("bbr-rtt-unfairness", base(vec![flow("bbr", 10), flow("bbr", 50)])),
            ("bbr-single-40ms", with(base(vec![flow("bbr", 40)]), &|c| c.interval_ns = 10 * MS)),
            (
                "bbr-vs-cubic-deep",
                with(base(vec![flow("bbr", 10), flow("cubic", 10)]), &|c| c.bottleneck.buffer_bytes = 625_000),
            ),
            (
                "bbr-vs-cubic-shallow",
                with(base(vec![flow("bbr", 10), flow("cubic", 10)]), &|c| c.bottleneck.buffer_bytes = 62_500),
            ),
            ("cubic-rtt", base(vec![flow("cubic", 10), flow("cubic", 50)])),
            ("random-loss-bbr", with(base(vec![flow("bbr", 100)]), &|c| c.bottleneck.loss = 0.01)),
            ("random-loss-cubic", with(base(vec![flow("cubic", 100)]), &|c| c.bottleneck.loss = 0.01)),
            (
                "red-example",
                with(base(vec![flow("bbr", 10), flow("bbr", 50)]), &|c| {
                    c.bottleneck.aqm = Aqm::Red;
                    c.bottleneck.red = Some(RedConfig {
                        min_bytes: 170_000,
                        max_bytes: 500_000,
                        max_p: 0.02,
                        wq: 0.002,
                        byte_mode: false,
                        ecn: false,
                    });
                }),
            ),
        ]
    }

    /// `reported` (µs, from the result) is within the stated error of the
    /// exact nearest-rank percentile of every sample (ns or µs: `scale`).
    fn check(name: &str, what: &str, reported: Option<f64>, d: &Distribution, p: f64, scale: f64) {
        let exact = d.exact_percentile(p).map(|v| v as f64 / scale);
        let (Some(got), Some(exact)) = (reported, exact) else {
            assert_eq!(reported, exact, "{name}: {what}");
            return;
        };
        assert!(
            got >= exact && got - exact <= exact * RELATIVE_ERROR,
            "{name}: {what} p{p} {got} vs exact {exact}"
        );
    }

    #[test]
    fn window_percentiles_of_the_examples_are_within_the_stated_error_of_exact() {
        for (name, cfg) in examples() {
            crate::validate(&cfg).unwrap();
            let mut sim = Simulation::new(cfg);
            assert!(sim.advance(&mut |_| false));
            let r = sim.finish();
            let sojourn = sim.link.sojourn_window();
            assert!(sojourn.is_binned(), "{name}: enough samples to leave the exact regime");
            check(name, "queue delay", r.link.queue_delay_p50_us, sojourn, 50.0, 1e3);
            check(name, "queue delay", r.link.queue_delay_p95_us, sojourn, 95.0, 1e3);
            check(name, "queue delay", r.link.queue_delay_p99_us, sojourn, 99.0, 1e3);
            for (i, f) in sim.flows.iter_mut().enumerate() {
                check(name, &format!("flow {i} RTT"), r.flows[i].rtt_p95_us, f.sender.rtt_window(), 95.0, 1.0);
            }
        }
    }

    #[test]
    fn a_sized_flow_sends_its_bytes_once_and_reports_when_they_all_arrived() {
        // 1 MB = 691 segments (the last rounded up), alone on an empty
        // 100 Mbit/s, 10 ms path with a deep buffer: slow start from 10
        // segments needs 6 round trips to send them, plus the last one's
        // trip; a bulk flow beside it never completes.
        let mut sized = flow("cubic", 10);
        sized.size_bytes = Some(1_000_000);
        let cfg = SimConfig {
            duration_ns: 2 * S,
            seed: 1,
            measure_from_ns: 0,
            measure_to_ns: 2 * S,
            interval_ns: 100 * MS,
            mss: 1448,
            wire_overhead: 66,
            bottleneck: BottleneckConfig::droptail(100_000_000, 4_000_000),
            flows: vec![sized],
            host: None,
        };
        crate::validate(&cfg).unwrap();
        let mut sim = Simulation::new(cfg.clone());
        assert!(sim.advance(&mut |_| false));
        let r = sim.finish();
        assert_eq!(r.flows[0].sent_segments, 691);
        assert_eq!(r.flows[0].delivered_bytes_total, 691 * 1448);
        let fct = r.flows[0].fct_ns.expect("complete");
        assert!((60 * MS..=120 * MS).contains(&fct), "fct {fct}");
        // Started later, the same flow takes as long (FCT counts from its start).
        let mut later = cfg.clone();
        later.flows[0].start_ns = 500 * MS;
        later.flows.push(flow("bbr", 10));
        later.flows[1].start_ns = 1500 * MS;
        let mut sim = Simulation::new(later);
        assert!(sim.advance(&mut |_| false));
        let r = sim.finish();
        assert_eq!(r.flows[0].fct_ns, Some(fct));
        assert_eq!(r.flows[1].fct_ns, None);
    }

    #[test]
    fn a_window_without_samples_reports_no_statistics() {
        // A flow that starts after the window sees no RTT sample in it, and
        // an idle link dequeues nothing.
        let mut c = examples().remove(1).1;
        c.duration_ns = 2 * S;
        c.measure_from_ns = 0;
        c.measure_to_ns = 100 * MS;
        c.flows[1].start_ns = S;
        c.flows[0].start_ns = S;
        let r = Simulation::new(c).run();
        assert_eq!((r.flows[1].rtt_mean_us, r.flows[1].rtt_p95_us), (None, None));
        assert_eq!(r.link.queue_delay_mean_us, None);
        assert_eq!(r.link.queue_delay_p99_us, None);
        let json = serde_json::to_value(&r).unwrap();
        assert!(json["flows"][0]["rtt_mean_us"].is_null() && json["link"]["queue_delay_p50_us"].is_null());
    }
}
