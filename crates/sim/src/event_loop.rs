//! The event loop: owns every part of one simulated dumbbell and moves
//! packets between them.
//!
//! ```text
//!  sender i --(data)--> bottleneck queue --(serialise)--> data pipe i (rtt_i/2)
//!     ^                                                        |
//!     +----------------- ack pipe i (rtt_i/2) <--(ACK)--- receiver i
//! ```
//! Time is integer nanoseconds; events with equal times run in scheduling
//! order ([`EventQueue`]). Each pipe has at most one pending event (its
//! head), the link one (the end of the current transmission), and each
//! sender one valid wake-up (older ones are recognised by generation).

use crate::bottleneck::{Bottleneck, Offer};
use crate::config::SimConfig;
use crate::event_queue::EventQueue;
use crate::packet::{AckPacket, DataPacket};
use crate::pipe::Pipe;
use crate::receiver::{Receiver, RxAction};
use crate::result::{FlowResult, LinkResult, SimResult};
use crate::rng::SimRng;
use crate::tcp::{SenderConfig, TcpSender};
use crate::telemetry::{Distribution, FlowCounters, FlowSnapshot, Recorder};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    FlowStart(u32),
    /// The sender asked to be polled; valid only with the current generation.
    SenderWake { flow: u32, gen: u32 },
    /// The bottleneck finished serialising its packet.
    LinkTxDone,
    /// The head of flow's data pipe reaches the receiver.
    DataPipe(u32),
    /// The head of flow's ACK pipe reaches the sender.
    AckPipe(u32),
    /// Flow's delayed-ACK timer (valid if the receiver still has it armed).
    DelAck(u32),
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
    wake_gen: u32,
    wake_at: Option<u64>,
    sent: u64,
    /// Counters at the start and end of the measurement window.
    at_from: FlowCounters,
    at_to: Option<FlowCounters>,
}

impl Flow {
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
    flows: Vec<Flow>,
    recorder: Recorder,
    link_at_from: crate::bottleneck::LinkCounters,
    link_at_to: Option<crate::bottleneck::LinkCounters>,
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
                        rng_seed: rng.derive_seed(),
                        params: f.params.clone(),
                    },
                    ops,
                );
                // Base RTT split evenly between the two directions.
                let fwd = f.rtt_ns / 2;
                Flow {
                    sender,
                    receiver: Receiver::new(i as u32, cfg.mss),
                    data_pipe: Pipe::new(fwd),
                    ack_pipe: Pipe::new(f.rtt_ns - fwd),
                    wake_gen: 0,
                    wake_at: None,
                    sent: 0,
                    at_from: FlowCounters::default(),
                    at_to: None,
                }
            })
            .collect();
        let link = Bottleneck::new(&cfg.bottleneck, n, wire_bytes);
        let mut sim = Self {
            now_ns: 0,
            events: EventQueue::default(),
            rng,
            link,
            flows,
            recorder: Recorder::new(cfg.interval_ns, n),
            link_at_from: Default::default(),
            link_at_to: None,
            out: Vec::with_capacity(64),
            cfg,
        };
        for (i, f) in sim.cfg.flows.iter().enumerate() {
            sim.events.schedule(f.start_ns, Event::FlowStart(i as u32));
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
    pub fn run(mut self) -> SimResult {
        let end = self.cfg.duration_ns;
        while let Some((t, ev)) = self.events.pop_until(end) {
            self.now_ns = t;
            self.dispatch(ev);
        }
        self.now_ns = end;
        if self.link_at_to.is_none() {
            self.measure_end();
        }
        self.finish()
    }

    fn dispatch(&mut self, ev: Event) {
        let now = self.now_ns;
        match ev {
            Event::FlowStart(f) => {
                // The SYN exchange gave Linux a first RTT sample: the base
                // RTT plus the queue the SYN waited behind.
                let queue_ns = self.link.queue_bytes() * 8 * 1_000_000_000 / self.link.rate_bps();
                let fl = &mut self.flows[f as usize];
                fl.sender.set_handshake_rtt(self.cfg.flows[f as usize].rtt_ns + queue_ns);
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
            Event::LinkTxDone => {
                let (pkt, next) = self.link.complete_tx(now);
                if let Some(t) = next {
                    self.events.schedule(t, Event::LinkTxDone);
                }
                let f = pkt.flow;
                if let Some(t) = self.flows[f as usize].data_pipe.push(now, pkt) {
                    self.events.schedule(t, Event::DataPipe(f));
                }
            }
            Event::DataPipe(f) => {
                while let Some(pkt) = self.flows[f as usize].data_pipe.pop_due(now) {
                    match self.flows[f as usize].receiver.on_data(now, &pkt) {
                        RxAction::Ack(ack) => self.send_ack(f, ack),
                        RxAction::ArmDelack(t) => self.events.schedule(t, Event::DelAck(f)),
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
            Event::DelAck(f) => {
                if let Some(ack) = self.flows[f as usize].receiver.on_delack_timer(now) {
                    self.send_ack(f, ack);
                }
            }
            Event::RateChange(i) => {
                let rate = self.cfg.bottleneck.schedule[i as usize].rate_bps;
                self.link.set_rate(rate);
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
                self.link_at_from = self.link.stats;
                self.link.set_recording(true);
            }
            Event::MeasureEnd => self.measure_end(),
        }
    }

    fn measure_end(&mut self) {
        for f in &mut self.flows {
            f.at_to = Some(f.counters());
            f.sender.set_rtt_recording(false);
        }
        self.link_at_to = Some(self.link.stats);
        self.link.set_recording(false);
    }

    fn send_ack(&mut self, f: u32, ack: AckPacket) {
        if let Some(t) = self.flows[f as usize].ack_pipe.push(self.now_ns, ack) {
            self.events.schedule(t, Event::AckPipe(f));
        }
    }

    /// Lets the sender transmit what it may now, offers those packets to the
    /// bottleneck, and schedules the sender's next wake-up.
    fn poll_sender(&mut self, f: u32) {
        let now = self.now_ns;
        let mut out = std::mem::take(&mut self.out);
        let fl = &mut self.flows[f as usize];
        fl.sender.poll(now, &mut out);
        for pkt in out.drain(..) {
            fl.sent += 1;
            match self.link.offer(now, pkt, &mut self.rng) {
                Offer::StartedTx(t) => self.events.schedule(t, Event::LinkTxDone),
                // Drops are counted per flow by the link (under fq a
                // packet of another flow may be the one that is lost).
                Offer::Queued | Offer::Dropped(_) => {}
            }
        }
        self.out = out;
        if let Some(t) = fl.sender.next_wakeup_ns() {
            let t = t.max(now);
            if fl.wake_at.is_none_or(|w| t < w) {
                fl.wake_gen = fl.wake_gen.wrapping_add(1);
                fl.wake_at = Some(t);
                self.events.schedule(t, Event::SenderWake { flow: f, gen: fl.wake_gen });
            }
        }
    }

    fn finish(mut self) -> SimResult {
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
                let rtts = Distribution::new(f.sender.rtt_samples().drain(..).map(u64::from).collect());
                FlowResult {
                    delivered_bytes_window: end.delivered_bytes - f.at_from.delivered_bytes,
                    delivered_bytes_total: total.delivered_bytes,
                    retransmits_window: end.retransmits - f.at_from.retransmits,
                    retransmits_total: total.retransmits,
                    sent_segments: f.sent,
                    arrived_segments: f.receiver.arrived_segments(),
                    dropped_segments: self.link.flow_drops(i),
                    in_network_segments: self.link.flow_packets(i as u32) + f.data_pipe.len() as u64,
                    rtt_mean_us: rtts.mean,
                    rtt_p95_us: rtts.percentile(95.0),
                    rto_count: tel.rto_count,
                }
            })
            .collect();
        let sojourn = Distribution::new(std::mem::take(self.link.sojourn_samples_ns()));
        let link = LinkResult {
            tx_bytes_window: link_to.tx_bytes - self.link_at_from.tx_bytes,
            capacity_bytes_window: capacity_bytes(&self.cfg, from, to),
            tx_packets_total: self.link.stats.tx_packets,
            drops_window: link_to.drops - self.link_at_from.drops,
            queue_delay_mean_us: sojourn.mean / 1e3,
            queue_delay_p50_us: sojourn.percentile(50.0) / 1e3,
            queue_delay_p95_us: sojourn.percentile(95.0) / 1e3,
            queue_delay_p99_us: sojourn.percentile(99.0) / 1e3,
            max_queue_bytes: self.link.stats.max_queue_bytes,
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

/// Bytes the bottleneck could carry in `[from, to)` under its rate schedule.
fn capacity_bytes(cfg: &SimConfig, from: u64, to: u64) -> u64 {
    let b = &cfg.bottleneck;
    let mut edges: Vec<(u64, u64)> = vec![(0, b.rate_bps)];
    edges.extend(b.schedule.iter().map(|c| (c.at_ns, c.rate_bps)));
    let mut bits: u128 = 0;
    for (k, &(at, rate)) in edges.iter().enumerate() {
        let next = edges.get(k + 1).map_or(u64::MAX, |e| e.0);
        let (s, e) = (at.max(from), next.min(to));
        if e > s {
            bits += rate as u128 * (e - s) as u128;
        }
    }
    (bits / 8 / 1_000_000_000) as u64
}
