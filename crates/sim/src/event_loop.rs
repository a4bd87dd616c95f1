//! The event loop: owns every part of one simulated network and moves
//! packets between them. The dumbbell:
//!
//! ```text
//!  sender i --(data)--> egress i (rtt_i/2) --> bottleneck queue --(serialise)--> receiver i
//!     ^                                                                          |
//!     +-------------------------- ack pipe i (rtt_i/2) <--(ACK)------------------+
//! ```
//! A flow's data takes its one-way delay before the bottleneck, its ACKs
//! the other half after it: the bottleneck sits at the receivers' end of
//! the paths, as in the live engine's testbed (its delay line holds data
//! before the kernel's bottleneck, and its own bottleneck after the
//! delay) and in ns-3's dumbbell (each sender's delay on its access
//! link). Where the delay sits decides which queue a flow's first window
//! meets: a 50 ms flow's first packets reach the bottleneck 25 ms after
//! they leave (docs/host.md, "Where the delay sits").
//! A topology ([`crate::topology`]) has several links; a flow's data
//! crosses those of its path after its egress, each a queue, a serialiser
//! and a delay, and its ACKs those of its reverse path (if any) before the
//! ACK pipe.
//! The hosts at both ends ([`crate::host`]) add their timing: a flow's
//! start phase, each ACK's turnaround (in the ACK pipe), a sender timer's
//! lateness, and stalls of the path, which hold the packets on their way
//! to the bottleneck (a flow's egress) and the ACKs on theirs to the
//! sender until they end.
//!
//! The flows are the `[[flow]]`s, and the workloads' flows
//! ([`crate::workload`]), which arrive during the run, take a slot of the
//! [`FlowTable`] and give it back when nothing of them is left in the
//! network.
//!
//! Time is integer nanoseconds; events with equal times run in scheduling
//! order ([`EventQueue`]). Each pipe has at most one pending event (its
//! head), each link one valid event (the end of the current transmission;
//! one a rate change moved is recognised by generation), and each sender
//! one valid wake-up (older ones, and those of a slot's earlier flows, are
//! recognised by generation).
//!
//! Nothing here grows with the number of packets simulated: queues and
//! pipes are bounded by the buffer and the windows, stale events by the
//! timers' spans, and window statistics are streaming
//! ([`crate::distribution`]); nor with the number of workload flows, whose
//! state is freed when they are done (their slots bounded by
//! `max_active`). Only the telemetry grows, by one row per `[[flow]]` and
//! interval, and the workloads' records, by one per flow.

use crate::bottleneck::{nanobits_to_bytes, Bottleneck, Offer};
use crate::config::SimConfig;
use crate::event_queue::EventQueue;
use crate::flow_table::{Arrival, Flow, FlowSeeds, FlowTable};
use crate::host::Stalls;
use crate::packet::{AckPacket, DataPacket};
use crate::pipe::Pipe;
use crate::receiver::RxAction;
use crate::result::{FlowResult, LinkResult, SimResult, WorkloadFlows};
use crate::rng::SimRng;
use crate::telemetry::{FlowSnapshot, Recorder};
use crate::topology::{ack_wire_bytes, next_hop, AckClock, AckStore, Link};
use crate::workload::Workload;

/// Events between two calls of [`Simulation::run_with`]'s stop hook: a
/// power of two (a mask test per event). Measured: ~1.4 ms of wall time
/// (at most 4 ms) for one BBR flow at 10 Gbit/s (~11M events/s), ~6-8 ms
/// for 10,000 flows at 10 Gbit/s (2-2.5M events/s), so the hook is asked
/// often enough for a Ctrl-C to be seen promptly; the Python binding
/// (crates/py) decides how often it then visits Python (the GIL, a signal
/// check, a progress callback): at most every 50 ms of wall time.
/// The same hook carries the simulated time out, for a progress bar.
pub const STOP_POLL_EVENTS: u64 = 1 << 14;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// A flow's SYN leaves: its handshake begins.
    FlowStart(u32),
    /// A flow's SYN-ACK reached its sender: data may go (valid only for
    /// the slot's flow of that epoch).
    FlowOpen { flow: u32, epoch: u32 },
    /// The sender asked to be polled; valid only with the current generation.
    SenderWake { flow: u32, gen: u32 },
    /// A link finished serialising its packet; valid only with the link's
    /// current generation (a rate change moves the end).
    LinkTxDone { link: u32, gen: u32 },
    /// The head of a link's propagation pipe reaches the link's far end.
    LinkWire(u32),
    /// The head of flow's ACK pipe reaches the sender.
    AckPipe(u32),
    /// The head of flow's egress (its one-way delay, and what a stall
    /// held) reaches the first link of its path.
    Egress(u32),
    /// The head of flow's ACK egress (a reverse path's flow: the host's
    /// turnaround) reaches the first link of its reverse path.
    AckOut(u32),
    /// Flow's receiver timer: delayed ACK or SACK compression (the
    /// receiver ignores it if an ACK sent since made it moot); valid only
    /// for the slot's flow of that epoch.
    AckTimer { flow: u32, epoch: u32 },
    /// Index into a link's rate schedule.
    RateChange { link: u32, idx: u32 },
    /// Flow's base RTT changes (index into its rtt_schedule).
    RttChange { flow: u32, idx: u32 },
    /// A flow of workload `.0` arrives.
    Arrival(u32),
    Sample,
    MeasureStart,
    MeasureEnd,
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
    flows: FlowTable,
    /// Flow keys (the table's slots); a reverse path's ACKs are keyed
    /// `keys + slot`.
    keys: u32,
    /// Whether the links keep per-flow state for ACKs (a reverse path).
    ack_keys: bool,
    /// The workloads' arrival processes and counts.
    workloads: Vec<Workload>,
    /// Workload arrivals so far (the next one's number).
    arrivals: u64,
    /// The records of the workload flows that are gone, and their
    /// arrivals' numbers (the results list them in arrival order).
    records: WorkloadFlows,
    record_ids: Vec<u64>,
    /// Workload flows an event may have finished (checked after it).
    maybe_done: Vec<u32>,
    recorder: Recorder,
    /// The hosts' stalls (nothing arrives and no timer fires during one).
    stalls: Stalls,
    /// Reused buffer for packets a sender emits in one poll.
    out: Vec<DataPacket>,
    /// Reused buffer for the packets a link dropped from its queue.
    pushed: Vec<DataPacket>,
}

impl Simulation {
    /// Builds the network. `cfg` must have passed [`crate::validate`].
    pub fn new(cfg: SimConfig) -> Self {
        let mut rng = SimRng::new(cfg.seed);
        let wire_bytes = cfg.mss + cfg.wire_overhead;
        let n = cfg.flows.len();
        let statics = cfg
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| Flow::new(&cfg, f, i as u32, FlowSeeds { cc_seed: rng.derive_seed(), stream: i }))
            .collect();
        let flows = FlowTable::new(statics, cfg.flow_keys() - n);
        let keys = flows.keys();
        // ACKs in links queue under their own flow keys, keys + flow.
        let ack_keys = cfg.has_reverse_paths();
        let link_keys = if ack_keys { 2 * keys as usize } else { keys as usize };
        let links: Vec<Link> = (0..cfg.n_links())
            .map(|k| {
                let c = cfg.link(k);
                Link::new(Bottleneck::new(c, link_keys, wire_bytes), c.delay_ns, c.aggregate_ns)
            })
            .collect();
        let workloads = cfg.workloads.iter().enumerate().map(|(w, c)| Workload::new(c, cfg.seed, w)).collect();
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
            keys,
            ack_keys,
            workloads,
            arrivals: 0,
            records: WorkloadFlows::default(),
            record_ids: Vec::new(),
            maybe_done: Vec::new(),
            stalls: Stalls::new(cfg.host.as_ref(), cfg.seed),
            out: Vec::with_capacity(64),
            pushed: Vec::new(),
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
        for (w, wl) in sim.workloads.iter_mut().enumerate() {
            if let Some(t) = wl.next_arrival_ns(sim.cfg.workloads[w].start_ns) {
                sim.events.schedule(t, Event::Arrival(w as u32));
            }
        }
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

    /// Runs until flow 0 (a sized flow) is complete, at most to the
    /// configured duration, asking `should_stop` as [`Self::run_with`]
    /// does: its completion time (None if the run ended first), or None if
    /// stopped ([`crate::alone`]).
    pub fn run_until_complete(mut self, should_stop: &mut dyn FnMut(u64) -> bool) -> Option<Option<u64>> {
        let end = self.cfg.duration_ns;
        while self.flows[0].completed_ns.is_none() {
            let Some((t, ev)) = self.events.pop_until(end) else { return Some(None) };
            self.now_ns = t;
            self.dispatch(ev);
            if self.events.processed().is_multiple_of(STOP_POLL_EVENTS) && should_stop(self.now_ns) {
                return None;
            }
        }
        let f = &self.flows[0];
        Some(f.fct_ns())
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

    /// Runs one event. The per-packet kinds are here, inlined into the
    /// loops that pop events, as the heap's pop is ([`EventQueue`]): once
    /// topologies and workloads added kinds neither was, and the headline
    /// dumbbell ran ~10% slower. The other kinds are
    /// [`Self::dispatch_rare`]'s.
    #[inline(always)]
    fn dispatch(&mut self, ev: Event) {
        let now = self.now_ns;
        match ev {
            Event::SenderWake { flow, gen } => {
                // A slot's earlier flow's wake-up finds another generation (or no flow).
                if let Some(fl) = self.flows.get_mut(flow).filter(|fl| fl.wake_gen == gen) {
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
                self.account_pushed_out(link);
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
            Event::Egress(f) => {
                while let Some(pkt) = self.flows[f as usize].egress.pop_due(now) {
                    self.offer(pkt);
                }
                if let Some(t) = self.flows[f as usize].egress.head_exit_ns() {
                    self.events.schedule(t, Event::Egress(f));
                }
            }
            Event::AckPipe(f) => {
                while let Some(ack) = self.flows[f as usize].ack_pipe.pop_due(now) {
                    let fl = &mut self.flows[f as usize];
                    fl.in_network = fl.in_network.checked_sub(1).expect("an ACK was in the network");
                    if let Some(clock) = &mut fl.ack_clock {
                        clock.on_ack(now);
                    }
                    fl.sender.on_ack(now, &ack);
                    self.poll_sender(f);
                }
                if let Some(t) = self.flows[f as usize].ack_pipe.head_exit_ns() {
                    self.events.schedule(t, Event::AckPipe(f));
                }
                self.note_activity(f);
            }
            Event::AckTimer { flow, epoch } => {
                let fl = self.flows.get_mut(flow).filter(|fl| fl.epoch == epoch);
                if let Some(ack) = fl.and_then(|fl| fl.receiver.on_timer(now)) {
                    self.send_ack(flow, ack);
                }
            }
            _ => self.dispatch_rare(ev),
        }
        if !self.maybe_done.is_empty() {
            self.free_done_flows();
        }
    }

    /// The events that come once per flow, per interval or per stall, and
    /// those of topologies only.
    #[inline(never)]
    fn dispatch_rare(&mut self, ev: Event) {
        let now = self.now_ns;
        match ev {
            Event::FlowStart(f) => self.start_flow(f),
            Event::FlowOpen { flow, epoch } => {
                if self.flows.get_mut(flow).is_some_and(|fl| fl.epoch == epoch) {
                    self.open_flow(flow);
                }
            }
            Event::AckOut(f) => {
                let first = self.flows[f as usize].reverse_path[0];
                let keys = self.keys;
                let header = self.cfg.wire_overhead;
                while let Some(ack) = self.flows[f as usize].ack_out.as_mut().and_then(|p| p.pop_due(now)) {
                    let envelope = DataPacket {
                        flow: keys + f,
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
                fl.egress.set_delay(rtt / 2);
                fl.ack_pipe.set_delay(rtt - rtt / 2 + fl.ack_extra_ns);
            }
            Event::Arrival(w) => self.arrive(w),
            Event::Sample => {
                let links = &self.links;
                let snaps = self.flows.statics_mut().enumerate().map(|(i, f)| FlowSnapshot {
                    counters: f.counters(),
                    sender: f.sender.telemetry(),
                    queue_bytes: f.data_links.iter().map(|&k| links[k as usize].queue.flow_queue_bytes(i)).sum(),
                    acks: f.ack_clock.as_mut().map(AckClock::take),
                });
                self.recorder.sample(now, snaps, self.links.iter().map(|l| &l.queue));
                self.events.schedule(now + self.cfg.interval_ns, Event::Sample);
            }
            Event::MeasureStart => {
                for f in self.flows.statics_mut() {
                    f.at_from = f.counters();
                    f.sender.set_rtt_recording(true);
                }
                for l in &mut self.links {
                    l.at_from = l.queue.counters(now);
                    l.queue.record_window(true);
                }
            }
            Event::MeasureEnd => self.measure_end(),
            _ => unreachable!("a per-packet event: dispatch's"),
        }
    }

    fn measure_end(&mut self) {
        for f in self.flows.statics_mut() {
            f.at_to = Some(f.counters());
            f.sender.set_rtt_recording(false);
        }
        for l in &mut self.links {
            l.at_to = Some(l.queue.counters(self.now_ns));
            l.queue.record_window(false);
        }
        self.window_closed = true;
    }

    /// Flow `f` starts now: its SYN leaves, and the SYN-ACK reaches it a
    /// round trip later, the base RTT plus the queues the two wait behind
    /// (taken as the queues are now: the SYN is never lost, and the host
    /// model's turnaround is not added). Linux's client sends its first
    /// data then, so a flow's data starts one round trip after its
    /// `start` (a completion time counts from then: [`Flow::fct_ns`]).
    fn start_flow(&mut self, f: u32) {
        let fl = &mut self.flows[f as usize];
        let queue_ns: u64 = fl
            .data_links
            .iter()
            .chain(&fl.reverse_path)
            .map(|&k| {
                let q = &self.links[k as usize].queue;
                (q.queue_bytes() as u128 * 8 * 1_000_000_000 / q.rate_bps() as u128) as u64
            })
            .sum();
        let rtt_ns = fl.base_rtt_ns + queue_ns;
        fl.sender.set_handshake_rtt(rtt_ns);
        fl.receiver.set_handshake_rtt(rtt_ns);
        let epoch = fl.epoch;
        self.events.schedule(self.now_ns + rtt_ns, Event::FlowOpen { flow: f, epoch });
    }

    /// Flow `f`'s handshake is done: the receiver's buffer starts (it
    /// is established when the client's ACK arrives, just before the
    /// first data) and the sender sends.
    fn open_flow(&mut self, f: u32) {
        let fl = &mut self.flows[f as usize];
        fl.opened_ns = self.now_ns;
        fl.receiver.establish(self.now_ns);
        fl.sender.start(self.now_ns);
        self.poll_sender(f);
    }

    /// A flow of workload `w` arrives: it starts in a free slot unless the
    /// workload has `max_active` in progress; the next arrival is drawn.
    fn arrive(&mut self, w: u32) {
        let now = self.now_ns;
        let wl = &mut self.workloads[w as usize];
        let (size_bytes, cc_seed) = wl.draw_flow();
        let id = self.arrivals;
        self.arrivals += 1;
        if wl.admit() {
            let slot = self.flows.next_free().expect("max_active slots per workload");
            let fc = self.cfg.workloads[w as usize].flow(now, size_bytes);
            let stream = self.cfg.flows.len() + id as usize;
            let mut flow = Flow::new(&self.cfg, &fc, slot, FlowSeeds { cc_seed, stream });
            flow.arrival = Some(Arrival { workload: w, id, size_bytes });
            // The slot's previous flow's counts in the links are not this one's.
            for l in &mut self.links {
                l.queue.reset_flow(slot);
                if self.ack_keys {
                    l.queue.reset_flow(self.keys + slot);
                }
            }
            self.flows.insert(flow);
            self.start_flow(slot);
        }
        if let Some(t) = self.workloads[w as usize].next_arrival_ns(now) {
            self.events.schedule(t, Event::Arrival(w));
        }
    }

    /// Something of flow `f` arrived or was lost: a workload's flow may be done.
    fn note_activity(&mut self, f: u32) {
        if f as usize >= self.cfg.flows.len() {
            self.maybe_done.push(f);
        }
    }

    /// Frees the slots of the workload flows that are done, keeping their
    /// records.
    fn free_done_flows(&mut self) {
        while let Some(f) = self.maybe_done.pop() {
            if !self.flows.get_mut(f).is_some_and(|fl| fl.is_done()) {
                continue; // not yet, or already freed
            }
            let fl = self.flows.remove(f);
            self.record(&fl);
        }
    }

    /// The record of a workload's flow (gone, or in progress at the end).
    fn record(&mut self, fl: &Flow) {
        let a = fl.arrival.expect("a workload's flow");
        let fct = fl.fct_ns();
        self.records.push(a.workload, fl.start_ns, a.size_bytes, fct, fl.sender.telemetry().retransmits_total);
        self.record_ids.push(a.id);
        self.workloads[a.workload as usize].release();
    }

    /// A data segment reaches flow `f`'s receiver, which ACKs it now or
    /// arms its timer.
    #[inline(always)]
    fn receive(&mut self, f: u32, pkt: &DataPacket) {
        let now = self.now_ns;
        let fl = &mut self.flows[f as usize];
        fl.in_network = fl.in_network.checked_sub(1).expect("an arrival was in the network");
        let action = fl.receiver.on_data(now, pkt);
        fl.note_completion(now);
        if let Some(ack) = fl.receiver.take_flushed() {
            self.send_ack(f, ack);
        }
        match action {
            RxAction::Ack(ack) => self.send_ack(f, ack),
            RxAction::ArmTimer(t) => {
                let epoch = self.flows[f as usize].epoch;
                self.events.schedule(t, Event::AckTimer { flow: f, epoch })
            }
            RxAction::Wait => {}
        }
        self.note_activity(f);
    }

    /// A packet leaves `link` (serialised and propagated): a data segment
    /// moves on to the next link of its flow's path or reaches the flow's
    /// receiver, an ACK to the next link of its reverse path or to the
    /// flow's ACK pipe.
    #[inline(always)]
    fn leave_link(&mut self, link: u32, pkt: DataPacket) {
        let now = self.now_ns;
        let keys = self.keys;
        if pkt.flow < keys {
            let f = pkt.flow;
            match next_hop(&self.flows[f as usize].data_links, link) {
                Some(next) => self.offer_to(next, pkt),
                None => self.receive(f, &pkt),
            }
        } else {
            let f = pkt.flow - keys;
            match next_hop(&self.flows[f as usize].reverse_path, link) {
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

    /// A packet (a data segment or an ACK's envelope) is lost: it leaves
    /// the network (and an ACK its slot).
    fn lost(&mut self, pkt: &DataPacket) {
        let f = if pkt.flow < self.keys {
            pkt.flow
        } else {
            self.acks.take(pkt.seq);
            pkt.flow - self.keys
        };
        let fl = &mut self.flows[f as usize];
        fl.in_network = fl.in_network.checked_sub(1).expect("a lost packet was in the network");
        self.note_activity(f);
    }

    /// Accounts for the packets `link`'s latest offer or completion
    /// dropped from its queue (pushed out, or dropped at the head).
    /// (The test inline, on every packet's path; the accounting apart.)
    #[inline]
    fn account_pushed_out(&mut self, link: u32) {
        if !self.links[link as usize].queue.pushed_out().is_empty() {
            self.lose_pushed_out(link);
        }
    }

    #[inline(never)]
    fn lose_pushed_out(&mut self, link: u32) {
        let dropped = self.links[link as usize].queue.pushed_out();
        let mut pushed = std::mem::take(&mut self.pushed);
        pushed.extend_from_slice(dropped);
        for p in pushed.drain(..) {
            self.lost(&p);
        }
        self.pushed = pushed;
    }

    fn send_ack(&mut self, f: u32, ack: AckPacket) {
        let now = self.now_ns;
        let fl = &mut self.flows[f as usize];
        fl.in_network += 1;
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
        // Each packet takes the flow's one-way delay to the bottleneck; one
        // due during a stall of the path waits for its end (and later ones
        // behind it), as in a stalled host or delay line.
        let stalls = &mut self.stalls;
        for pkt in out.drain(..) {
            let fl = &mut self.flows[f as usize];
            fl.sent += 1;
            fl.in_network += 1;
            if let Some(t) = fl.egress.push_with(now, pkt, |t| stalls.release(now, t)) {
                self.events.schedule(t, Event::Egress(f));
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
        let first = self.flows[pkt.flow as usize].data_links[0];
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
            Offer::Dropped(_) => self.lost(&pkt),
        }
        self.account_pushed_out(link);
    }

    /// The results of a run [`Self::advance`] completed.
    fn finish(&mut self) -> SimResult {
        let keys = self.keys;
        let links = &self.links;
        // A flow's data counters over its path's links, its ACKs' drops
        // over its reverse path's.
        let over = |path: &[u32], count: &dyn Fn(&Link) -> u64| -> u64 {
            path.iter().map(|&k| count(&links[k as usize])).sum()
        };
        let flows = self
            .flows
            .statics_mut()
            .enumerate()
            .map(|(i, f)| {
                let key = i as u32;
                let end = f.at_to.expect("window closed");
                let total = f.counters();
                let tel = f.sender.telemetry();
                let (data, reverse) = (f.data_links.clone(), f.reverse_path.clone());
                let rtts = f.sender.rtt_window();
                FlowResult {
                    delivered_bytes_window: end.delivered_bytes - f.at_from.delivered_bytes,
                    delivered_bytes_total: total.delivered_bytes,
                    retransmits_window: end.retransmits - f.at_from.retransmits,
                    retransmits_total: total.retransmits,
                    sent_segments: f.sent,
                    arrived_segments: f.receiver.arrived_segments(),
                    dropped_segments: over(&data, &|l| l.queue.flow_drops(i)),
                    in_network_segments: over(&data, &|l| l.packets_of(key))
                        + f.egress.len() as u64,
                    rtt_mean_us: rtts.mean(),
                    rtt_p95_us: rtts.percentile(95.0).map(|us| us as f64),
                    rto_count: tel.rto_count,
                    ce_marked: over(&data, &|l| l.queue.flow_marks(i)),
                    ce_received: f.receiver.ce_packets() as u64,
                    delivered_ce: f.sender.delivered_ce() as u64,
                    fct_ns: f.fct_ns(),
                    acks_dropped: over(&reverse, &|l| l.queue.flow_drops((keys + key) as usize)),
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
            workload_flows: self.workload_records(),
            workloads: self.workloads.iter().map(|w| w.counts).collect(),
        }
    }

    /// Every workload flow's record, in arrival order: those gone, and
    /// those the run's end found in progress.
    fn workload_records(&mut self) -> WorkloadFlows {
        let in_progress: Vec<u32> =
            (self.cfg.flows.len() as u32..self.keys).filter(|&s| self.flows.get_mut(s).is_some()).collect();
        for slot in in_progress {
            let fl = self.flows.remove(slot);
            self.record(&fl);
        }
        let mut order: Vec<usize> = (0..self.record_ids.len()).collect();
        order.sort_unstable_by_key(|&i| self.record_ids[i]);
        self.records.permuted(&order)
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
            app: None,
        }
    }

    /// `flows` on a 100 Mbit/s dumbbell with a `buffer_bytes` droptail
    /// queue and ideal hosts, seed 1, measured over the whole run.
    fn measured_whole(duration_ns: u64, interval_ns: u64, buffer_bytes: u64, flows: Vec<FlowConfig>) -> SimConfig {
        SimConfig {
            duration_ns,
            seed: 1,
            measure_from_ns: 0,
            measure_to_ns: duration_ns,
            interval_ns,
            mss: 1448,
            wire_overhead: 66,
            bottleneck: BottleneckConfig::droptail(100_000_000, buffer_bytes),
            flows,
            links: vec![],
            workloads: vec![],
            host: None,
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
            workloads: vec![],
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
            for (i, f) in sim.flows.statics_mut().enumerate() {
                check(name, &format!("flow {i} RTT"), r.flows[i].rtt_p95_us, f.sender.rtt_window(), 95.0, 1.0);
            }
        }
    }

    #[test]
    fn data_starts_a_handshakes_round_trip_after_the_start() {
        // A 10 ms flow sends nothing before its SYN-ACK is back; a 50 ms
        // flow started at 100 ms beside it, nothing before its base RTT
        // plus the queue its SYN and SYN-ACK meet (the 10 ms flow's), then
        // its initial window.
        let mut late = flow("cubic", 50);
        late.start_ns = 100 * MS;
        let sent = |end_ms: u64, flows: Vec<FlowConfig>| {
            let cfg = measured_whole(end_ms * MS, MS, 2_000_000, flows);
            crate::validate(&cfg).unwrap();
            let mut sim = Simulation::new(cfg);
            assert!(sim.advance(&mut |_| false));
            sim.finish().flows.iter().map(|f| f.sent_segments).collect::<Vec<_>>()
        };
        assert_eq!(sent(9, vec![flow("cubic", 10)]), [0]);
        assert!(sent(11, vec![flow("cubic", 10)])[0] >= 10);
        let both = || vec![flow("cubic", 10), late.clone()];
        assert_eq!(sent(150, both())[1], 0);
        let queued = sent(250, both());
        assert_eq!(sent(151, both())[1], 0, "the queue's wait comes on top of the base RTT");
        assert!(queued[1] >= 10, "{queued:?}");
    }

    #[test]
    fn data_meets_the_bottleneck_its_one_way_delay_after_it_leaves() {
        // A 50 ms flow alone: its SYN-ACK is back at 50 ms, its initial
        // window leaves then and reaches the bottleneck 25 ms later (the
        // bottleneck is at the receivers' end of the path, as in the live
        // testbed and ns-3's dumbbell), and the receiver at once after it.
        let carried = |end_ms: u64| {
            let cfg = measured_whole(end_ms * MS, MS, 2_000_000, vec![flow("cubic", 50)]);
            crate::validate(&cfg).unwrap();
            let mut sim = Simulation::new(cfg);
            assert!(sim.advance(&mut |_| false));
            let r = sim.finish();
            (r.flows[0].sent_segments, r.link.tx_packets_total, r.flows[0].arrived_segments)
        };
        assert_eq!(carried(74), (10, 0, 0));
        // 1 ms later the link has sent 8 of them (0.12 ms each at 100
        // Mbit/s), and each arrived as it was sent.
        assert_eq!(carried(76), (10, 8, 8));
    }

    #[test]
    fn a_sized_flow_sends_its_bytes_once_and_reports_when_they_all_arrived() {
        // 1 MB = 691 segments (the last rounded up), alone on an empty
        // 100 Mbit/s, 10 ms path with a deep buffer: slow start from 10
        // segments needs 6 round trips to send them, plus the last one's
        // trip (from the handshake's end); a bulk flow beside it never
        // completes.
        let mut sized = flow("cubic", 10);
        sized.size_bytes = Some(1_000_000);
        let cfg = measured_whole(2 * S, 100 * MS, 4_000_000, vec![sized]);
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

    /// Every flow's `in_network` (what frees a workload flow's slot) is
    /// what a count of its packets and ACKs in the pipes, egresses, links'
    /// queues and wires finds.
    fn assert_in_network_is_counted(sim: &Simulation) {
        let ack_key = |slot: u32| if sim.ack_keys { Some(sim.keys + slot) } else { None };
        for slot in 0..sim.keys {
            let Some(f) = sim.flows.get(slot) else { continue };
            let in_links = |key: u32| sim.links.iter().map(|l| l.packets_of(key)).sum::<u64>();
            let data = f.egress.len() + in_links(slot) as usize;
            let queued_acks = ack_key(slot).map_or(0, in_links) as usize;
            let acks = f.ack_pipe.len() + f.ack_out.as_ref().map_or(0, Pipe::len) + queued_acks;
            assert_eq!(f.in_network as usize, data + acks, "slot {slot} at {} ns", sim.now_ns);
        }
    }

    #[test]
    fn a_flows_count_of_what_it_has_in_the_network_is_exact() {
        // A workload (fq_codel's push-outs and CoDel's head drops, ACKs
        // queueing and dropped in a reverse link, stalls holding packets),
        // checked at many instants.
        use crate::config::{FqCodelConfig, HostConfig, WorkloadConfig};
        let mut cfg = examples().remove(1).1;
        cfg.duration_ns = 4 * S;
        cfg.measure_from_ns = 0;
        cfg.measure_to_ns = 4 * S;
        cfg.bottleneck = BottleneckConfig { aqm: Aqm::FqCodel, ..BottleneckConfig::droptail(30_000_000, 60_000) };
        cfg.bottleneck.fq_codel = Some(FqCodelConfig {
            target_ns: MS,
            interval_ns: 20 * MS,
            limit_packets: 40,
            flows: 4,
            quantum_bytes: 1514.try_into().unwrap(),
            ecn: false,
        });
        cfg.links = vec![BottleneckConfig::droptail(5_000_000, 8_000)];
        cfg.flows[0].path = vec![0];
        cfg.flows[1].path = vec![1];
        cfg.flows[1].reverse_path = vec![0];
        cfg.workloads = vec![WorkloadConfig {
            cc: "bbr".into(),
            rtt_ns: 20 * MS,
            params: vec![],
            ecn: Default::default(),
            jitter_ns: 0,
            path: vec![0],
            reverse_path: vec![1],
            start_ns: 0,
            stop_ns: 4 * S,
            arrival_rate_hz: 50.0,
            size_bytes: None,
            sizes: vec![(0.0, 1), (0.7, 20_000), (1.0, 400_000)],
            max_active: 6,
        }];
        cfg.host = Some(HostConfig {
            ack_delay_ns: vec![(0.0, 5_000), (1.0, 300_000)],
            stalls_per_s: 30.0,
            stall_length_ns: vec![(0.0, 100_000), (1.0, 2 * MS)],
            ..Default::default()
        });
        crate::validate(&cfg).unwrap();
        let mut sim = Simulation::new(cfg);
        let mut checks = 0;
        while let Some((t, ev)) = sim.events.pop_until(4 * S) {
            sim.now_ns = t;
            sim.dispatch(ev);
            if sim.events.processed() % 31 == 0 {
                assert_in_network_is_counted(&sim);
                checks += 1;
            }
        }
        let (w, drops) = (sim.workloads[0].counts, sim.links[1].queue.stats.drops);
        assert!(checks > 1000 && w.arrived > 150 && w.refused > 0 && drops > 0, "{checks} {w:?} {drops}");
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
