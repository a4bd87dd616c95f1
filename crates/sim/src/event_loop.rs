//! The event loop: owns every part of one simulated network and moves
//! packets between them. The dumbbell:
//!
//! ```text
//!  sender i --(data)--> bottleneck queue --(serialise)--> data pipe i (rtt_i/2)
//!     ^                                                        |
//!     +----------------- ack pipe i (rtt_i/2) <--(ACK)--- receiver i
//! ```
//! A topology ([`crate::topology`]) has several links; a flow's data
//! crosses those of its path, each a queue, a serialiser and a delay, and
//! its ACKs those of its reverse path (if any) before the ACK pipe.
//! The hosts at both ends ([`crate::host`]) add their timing: a flow's
//! start phase, each ACK's turnaround (in the ACK pipe), a sender timer's
//! lateness, and stalls of the path, which hold the packets on their way
//! to the bottleneck (a flow's egress) and the ACKs on theirs to the
//! sender until they end.
//!
//! Time is integer nanoseconds; events with equal times run in scheduling
//! order ([`EventQueue`]). Each pipe has at most one pending event (its
//! head), each link one valid event (the end of the current transmission;
//! one a rate change moved is recognised by generation), and each sender
//! one valid wake-up (older ones are recognised by generation).
//!
//! Nothing here grows with the number of packets simulated: queues and
//! pipes are bounded by the buffer and the windows, stale events by the
//! timers' spans, and window statistics are streaming
//! ([`crate::distribution`]); only the telemetry grows, by one row per
//! flow and interval.

use crate::bottleneck::{nanobits_to_bytes, Bottleneck, Offer};
use crate::config::SimConfig;
use crate::event_queue::EventQueue;
use crate::host::{FlowHost, Stalls};
use crate::jitter::Jitter;
use crate::packet::{AckPacket, DataPacket};
use crate::pipe::Pipe;
use crate::receiver::{Receiver, RxAction};
use crate::result::{FlowResult, LinkResult, SimResult};
use crate::topology::{ack_wire_bytes, next_hop, AckClock, AckStore, Link};
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
    /// A link finished serialising its packet; valid only with the link's
    /// current generation (a rate change moves the end).
    LinkTxDone { link: u32, gen: u32 },
    /// The head of a link's propagation pipe reaches the link's far end.
    LinkWire(u32),
    /// The head of flow's data pipe reaches the receiver.
    DataPipe(u32),
    /// The head of flow's ACK pipe reaches the sender.
    AckPipe(u32),
    /// The head of flow's egress (packets a stall held) reaches the link.
    Egress(u32),
    /// The head of flow's ACK egress (a reverse path's flow: the host's
    /// turnaround) reaches the first link of its reverse path.
    AckOut(u32),
    /// Flow's receiver timer: delayed ACK or SACK compression (the
    /// receiver ignores it if an ACK sent since made it moot).
    AckTimer(u32),
    /// Index into a link's rate schedule.
    RateChange { link: u32, idx: u32 },
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
    /// A flow with a reverse path: its ACKs after the host's turnaround,
    /// on their way to the first link of that path (None: the ACK pipe
    /// takes them straight from the receiver).
    ack_out: Option<Pipe<AckPacket>>,
    /// What the ACK pipe adds to the second half of the flow's own RTT: the
    /// mirror of its data path's delays when it has no reverse path.
    ack_extra_ns: u64,
    /// How its ACKs arrive (recorded when the scenario has reverse paths).
    ack_clock: Option<AckClock>,
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
    /// The links: 0 is the bottleneck (the dumbbell's only one).
    links: Vec<Link>,
    /// ACKs inside the links of reverse paths.
    acks: AckStore,
    /// Whether the window has closed (the links' and flows' end counters).
    window_closed: bool,
    flows: Vec<Flow>,
    recorder: Recorder,
    /// The hosts' stalls (nothing arrives and no timer fires during one).
    stalls: Stalls,
    /// Reused buffer for packets a sender emits in one poll.
    out: Vec<DataPacket>,
}

impl Simulation {
    /// Builds the network. `cfg` must have passed [`crate::validate`].
    pub fn new(cfg: SimConfig) -> Self {
        let mut rng = SimRng::new(cfg.seed);
        let wire_bytes = cfg.mss + cfg.wire_overhead;
        let n = cfg.flows.len();
        let reverse_paths = cfg.flows.iter().any(|f| !f.reverse_path.is_empty());
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
                // The hosts' RTT split evenly between the two directions.
                let fwd = f.rtt_ns / 2;
                // The host's jitter goes where the ACK leaves the receiver.
                let jitter = Jitter::for_flow(f.jitter_ns, cfg.seed, i);
                let (ack_extra_ns, ack_out, ack_jitter) = if f.reverse_path.is_empty() {
                    (cfg.path_delay_ns(f.data_links()), None, jitter)
                } else {
                    (0, Some(Pipe::with_jitter(0, jitter)), Jitter::none())
                };
                Flow {
                    sender,
                    receiver: Receiver::new(i as u32, cfg.mss, f.ecn),
                    data_pipe: Pipe::new(fwd),
                    ack_pipe: Pipe::with_jitter(f.rtt_ns - fwd + ack_extra_ns, ack_jitter),
                    ack_out,
                    ack_extra_ns,
                    ack_clock: reverse_paths.then(|| {
                        let slowest = f.data_links().iter().map(|&k| cfg.link(k as usize).rate_bps).min();
                        AckClock::new(wire_bytes, slowest.expect("a path has a link"))
                    }),
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
        // ACKs in links queue under their own flow keys, n + flow.
        let keys = if reverse_paths { 2 * n } else { n };
        let links: Vec<Link> = (0..cfg.n_links())
            .map(|k| {
                let c = cfg.link(k);
                Link::new(Bottleneck::new(c, keys, wire_bytes), c.delay_ns, c.aggregate_ns)
            })
            .collect();
        let samples = (cfg.duration_ns / cfg.interval_ns) as usize;
        let mut sim = Self {
            now_ns: 0,
            events: EventQueue::default(),
            rng,
            recorder: Recorder::new(cfg.interval_ns, n, links.len(), samples),
            links,
            acks: AckStore::default(),
            window_closed: false,
            flows,
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
        for k in 0..sim.cfg.n_links() {
            for (i, c) in sim.cfg.link(k).schedule.iter().enumerate() {
                sim.events.schedule(c.at_ns, Event::RateChange { link: k as u32, idx: i as u32 });
            }
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
        if !self.window_closed {
            self.measure_end();
        }
        true
    }

    fn dispatch(&mut self, ev: Event) {
        let now = self.now_ns;
        match ev {
            Event::FlowStart(f) => {
                // The SYN exchange gave Linux a first RTT sample: the base
                // RTT plus the queues the SYN and its SYN-ACK waited behind.
                let fc = &self.cfg.flows[f as usize];
                let queue_ns: u64 = fc
                    .data_links()
                    .iter()
                    .chain(&fc.reverse_path)
                    .map(|&k| {
                        let q = &self.links[k as usize].queue;
                        (q.queue_bytes() as u128 * 8 * 1_000_000_000 / q.rate_bps() as u128) as u64
                    })
                    .sum();
                let rtt_ns = self.base_rtt_ns(f) + queue_ns;
                let fl = &mut self.flows[f as usize];
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
            Event::LinkTxDone { link, gen } => {
                let l = &mut self.links[link as usize];
                if gen != l.gen {
                    return; // moved by a rate change
                }
                let (pkt, next) = l.queue.complete_tx(now);
                if let Some(t) = next {
                    self.events.schedule(t, Event::LinkTxDone { link, gen });
                }
                self.free_dropped_acks(link);
                let l = &mut self.links[link as usize];
                if l.passes_at_once() {
                    self.leave_link(link, pkt);
                } else if let Some(t) = l.propagate(now, pkt) {
                    self.events.schedule(t, Event::LinkWire(link));
                }
            }
            Event::LinkWire(link) => {
                while let Some(pkt) = self.links[link as usize].wire.pop_due(now) {
                    self.leave_link(link, pkt);
                }
                if let Some(t) = self.links[link as usize].wire.head_exit_ns() {
                    self.events.schedule(t, Event::LinkWire(link));
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
                    if let Some(clock) = &mut self.flows[f as usize].ack_clock {
                        clock.on_ack(now);
                    }
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
            Event::AckOut(f) => {
                let first = self.cfg.flows[f as usize].reverse_path[0];
                let n = self.flows.len() as u32;
                let header = self.cfg.wire_overhead;
                while let Some(ack) = self.flows[f as usize].ack_out.as_mut().and_then(|p| p.pop_due(now)) {
                    let envelope = DataPacket {
                        flow: n + f,
                        seq: 0,
                        wire_bytes: ack_wire_bytes(&ack, header),
                        sent_ns: now,
                        ..Default::default()
                    };
                    let slot = self.acks.put(ack);
                    self.offer_to(first, DataPacket { seq: slot, ..envelope });
                }
                if let Some(t) = self.flows[f as usize].ack_out.as_ref().and_then(Pipe::head_exit_ns) {
                    self.events.schedule(t, Event::AckOut(f));
                }
            }
            Event::AckTimer(f) => {
                if let Some(ack) = self.flows[f as usize].receiver.on_timer(now) {
                    self.send_ack(f, ack);
                }
            }
            Event::RateChange { link, idx } => {
                let rate = self.cfg.link(link as usize).schedule[idx as usize].rate_bps;
                let l = &mut self.links[link as usize];
                if let Some(t) = l.queue.change_rate(now, rate) {
                    l.gen = l.gen.wrapping_add(1);
                    self.events.schedule(t, Event::LinkTxDone { link, gen: l.gen });
                }
            }
            Event::RttChange { flow, idx } => {
                let rtt = self.cfg.flows[flow as usize].rtt_schedule[idx as usize].rtt_ns;
                let fl = &mut self.flows[flow as usize];
                fl.data_pipe.set_delay(rtt / 2);
                fl.ack_pipe.set_delay(rtt - rtt / 2 + fl.ack_extra_ns);
            }
            Event::Sample => {
                let (links, cfg) = (&self.links, &self.cfg);
                let snaps = self.flows.iter_mut().enumerate().map(|(i, f)| FlowSnapshot {
                    counters: f.counters(),
                    sender: f.sender.telemetry(),
                    queue_bytes: cfg.flows[i]
                        .data_links()
                        .iter()
                        .map(|&k| links[k as usize].queue.flow_queue_bytes(i))
                        .sum(),
                    acks: f.ack_clock.as_mut().map(AckClock::take),
                });
                self.recorder.sample(now, snaps, self.links.iter().map(|l| &l.queue));
                self.events.schedule(now + self.cfg.interval_ns, Event::Sample);
            }
            Event::MeasureStart => {
                for f in &mut self.flows {
                    f.at_from = f.counters();
                    f.sender.set_rtt_recording(true);
                }
                for l in &mut self.links {
                    l.at_from = l.queue.counters(now);
                    l.queue.record_window(true);
                }
            }
            Event::MeasureEnd => self.measure_end(),
        }
    }

    fn measure_end(&mut self) {
        for f in &mut self.flows {
            f.at_to = Some(f.counters());
            f.sender.set_rtt_recording(false);
        }
        for l in &mut self.links {
            l.at_to = Some(l.queue.counters(self.now_ns));
            l.queue.record_window(false);
        }
        self.window_closed = true;
    }

    /// Flow `f`'s base RTT: its hosts' own and its links' delays both ways.
    fn base_rtt_ns(&self, f: u32) -> u64 {
        let fc = &self.cfg.flows[f as usize];
        fc.rtt_ns + self.cfg.path_delay_ns(fc.data_links()) + self.flows[f as usize].ack_extra_ns
            + self.cfg.path_delay_ns(&fc.reverse_path)
    }

    /// A packet leaves `link` (serialised and propagated): a data segment
    /// moves on to the next link of its flow's path or to the flow's data
    /// pipe, an ACK to the next link of its reverse path or to the flow's
    /// ACK pipe.
    fn leave_link(&mut self, link: u32, pkt: DataPacket) {
        let now = self.now_ns;
        let n = self.flows.len() as u32;
        if pkt.flow < n {
            let f = pkt.flow;
            match next_hop(self.cfg.flows[f as usize].data_links(), link) {
                Some(next) => self.offer_to(next, pkt),
                None => {
                    if let Some(t) = self.flows[f as usize].data_pipe.push(now, pkt) {
                        self.events.schedule(t, Event::DataPipe(f));
                    }
                }
            }
        } else {
            let f = pkt.flow - n;
            match next_hop(&self.cfg.flows[f as usize].reverse_path, link) {
                Some(next) => self.offer_to(next, pkt),
                None => {
                    let ack = self.acks.take(pkt.seq);
                    if let Some(t) = self.flows[f as usize].ack_pipe.push(now, ack) {
                        self.events.schedule(t, Event::AckPipe(f));
                    }
                }
            }
        }
    }

    /// Frees the slots of the ACKs `link`'s latest offer or completion
    /// dropped from its queue (pushed out, or dropped at the head).
    fn free_dropped_acks(&mut self, link: u32) {
        let n = self.flows.len() as u32;
        for p in self.links[link as usize].queue.pushed_out() {
            if p.flow >= n {
                self.acks.take(p.seq);
            }
        }
    }

    fn send_ack(&mut self, f: u32, ack: AckPacket) {
        let now = self.now_ns;
        let fl = &mut self.flows[f as usize];
        let turnaround = fl.host.ack_delay();
        let stalls = &mut self.stalls;
        let release = |t| stalls.release(now, t + turnaround);
        if let Some(out) = &mut fl.ack_out {
            if let Some(t) = out.push_with(now, ack, release) {
                self.events.schedule(t, Event::AckOut(f));
            }
        } else if let Some(t) = fl.ack_pipe.push_with(now, ack, release) {
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

    /// Offers a sender's packet to the first link of its path now.
    fn offer(&mut self, pkt: DataPacket) {
        let first = self.cfg.flows[pkt.flow as usize].data_links()[0];
        self.offer_to(first, pkt);
    }

    /// Offers a packet (a data segment or an ACK's envelope) to `link` now.
    fn offer_to(&mut self, link: u32, pkt: DataPacket) {
        let l = &mut self.links[link as usize];
        match l.queue.offer(self.now_ns, pkt, &mut self.rng) {
            Offer::StartedTx(t) => self.events.schedule(t, Event::LinkTxDone { link, gen: l.gen }),
            // Drops are counted per flow key by the link (under fq a packet
            // of another flow may be the one that is lost).
            Offer::Queued => {}
            Offer::Dropped(_) => {
                if pkt.flow >= self.flows.len() as u32 {
                    self.acks.take(pkt.seq);
                }
            }
        }
        self.free_dropped_acks(link);
    }

    /// The results of a run [`Self::advance`] completed.
    fn finish(&mut self) -> SimResult {
        let n = self.flows.len() as u32;
        let links = &self.links;
        // A flow's data counters over its path's links, its ACKs' drops
        // over its reverse path's.
        let over = |path: &[u32], count: &dyn Fn(&Link) -> u64| -> u64 {
            path.iter().map(|&k| count(&links[k as usize])).sum()
        };
        let flows = self
            .flows
            .iter_mut()
            .enumerate()
            .map(|(i, f)| {
                let fc = &self.cfg.flows[i];
                let key = i as u32;
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
                    dropped_segments: over(fc.data_links(), &|l| l.queue.flow_drops(i)),
                    in_network_segments: over(fc.data_links(), &|l| l.packets_of(key))
                        + f.data_pipe.len() as u64
                        + f.egress.len() as u64,
                    rtt_mean_us: rtts.mean(),
                    rtt_p95_us: rtts.percentile(95.0).map(|us| us as f64),
                    rto_count: tel.rto_count,
                    ce_marked: over(fc.data_links(), &|l| l.queue.flow_marks(i)),
                    ce_received: f.receiver.ce_packets() as u64,
                    delivered_ce: f.sender.delivered_ce() as u64,
                    fct_ns: f.completed_ns.map(|t| t - fc.start_ns),
                    acks_dropped: over(&fc.reverse_path, &|l| l.queue.flow_drops((n + key) as usize)),
                }
            })
            .collect();
        let (from, to) = (self.cfg.measure_from_ns, self.cfg.measure_to_ns.min(self.cfg.duration_ns));
        let now = self.now_ns;
        let mut results: Vec<LinkResult> = self
            .links
            .iter_mut()
            .enumerate()
            .map(|(k, l)| {
                let link_to = l.at_to.expect("window closed");
                let link_end = l.queue.counters(now);
                let sojourn = l.queue.sojourn_window();
                let mut sojourn_us = |p: f64| sojourn.percentile(p).map(|ns| ns as f64 / 1e3);
                let (p50, p95, p99) = (sojourn_us(50.0), sojourn_us(95.0), sojourn_us(99.0));
                LinkResult {
                    tx_bytes_window: nanobits_to_bytes(link_to.tx_nanobits - l.at_from.tx_nanobits),
                    capacity_bytes_window: self.cfg.link(k).capacity_bytes(from, to),
                    tx_packets_total: link_end.tx_packets,
                    drops_window: link_to.drops - l.at_from.drops,
                    marks_window: link_to.marks - l.at_from.marks,
                    queue_delay_mean_us: sojourn.mean().map(|ns| ns / 1e3),
                    queue_delay_p50_us: p50,
                    queue_delay_p95_us: p95,
                    queue_delay_p99_us: p99,
                    max_queue_bytes: link_end.max_queue_bytes,
                }
            })
            .collect();
        let link = results.remove(0);
        SimResult {
            flows,
            link,
            links: results,
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
            path: vec![],
            reverse_path: vec![],
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
            links: vec![],
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
            let sojourn = sim.links[0].queue.sojourn_window();
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
            links: vec![],
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
