//! The flows of a run and where they live: one slot per `[[flow]]`, then a
//! bounded slab of slots that the workloads' flows take as they arrive and
//! give back when they are done ([`crate::workload`]).
//!
//! ```text
//!  slot (= flow key in every link)   0 .. n_static      n_static .. n_static + capacity
//!                                    [[flow]] i          workload flows, reused
//!  ACK key in a reverse path's link  keys + slot         (keys = n_static + capacity)
//! ```
//! A slot's index is the flow's key in every link's per-flow state (queue
//! occupancy, drops and marks, fair queueing's queues), so the links hold
//! state for `keys` flows whatever the number of flows that arrive; a
//! reused slot's counters are reset in every link when it is taken
//! ([`crate::bottleneck::Bottleneck::reset_flow`]), and nothing of the
//! previous flow is left in a link then (a slot is given back only when
//! none of its packets or ACKs is anywhere in the network).
//!
//! Events name flows by slot. Those that can outlive a flow (a sender's
//! wake-up, a receiver's timer) carry a generation that goes on counting
//! across a slot's occupants, so an old one is recognised and ignored; a
//! pipe's events exist only while it holds packets, and a slot's pipes are
//! empty when it is given back.

use crate::app::AppSource;
use crate::config::{FlowConfig, SimConfig};
use crate::host::{FlowHost, Tick};
use crate::jitter::Jitter;
use crate::packet::{AckPacket, DataPacket};
use crate::pipe::Pipe;
use crate::receiver::Receiver;
use crate::tcp::{SenderConfig, TcpSender};
use crate::telemetry::FlowCounters;
use crate::topology::AckClock;

/// A workload's flow: which workload, and what the results record of it.
#[derive(Clone, Copy, Debug)]
pub struct Arrival {
    pub workload: u32,
    /// The run's arrivals numbered in order, all workloads together.
    pub id: u64,
    /// Its payload bytes.
    pub size_bytes: u64,
}

/// One flow's state: its sender, receiver and the pipes between them.
pub struct Flow {
    pub(crate) sender: TcpSender,
    pub(crate) receiver: Receiver,
    /// Its ACKs' way back: the second half of its RTT (and the host's
    /// turnaround), after the receiver.
    pub(crate) ack_pipe: Pipe<AckPacket>,
    /// A flow with a reverse path: its ACKs after the host's turnaround,
    /// on their way to the first link of that path (None: the ACK pipe
    /// takes them straight from the receiver).
    pub(crate) ack_out: Option<Pipe<AckPacket>>,
    /// What the ACK pipe adds to the second half of the flow's own RTT: the
    /// mirror of its data path's delays when it has no reverse path.
    pub(crate) ack_extra_ns: u64,
    /// How its ACKs arrive (recorded when the scenario has reverse paths).
    pub(crate) ack_clock: Option<AckClock>,
    /// Its data's way to the first link of its path: the first half of
    /// its RTT (before the bottleneck: event_loop.rs), and a packet due
    /// during a stall of the path held until it ends (and those behind
    /// it, in order).
    pub(crate) egress: Pipe<DataPacket>,
    /// The flow's hosts: start phase, ACK turnaround, timer lateness.
    pub(crate) host: FlowHost,
    pub(crate) wake_gen: u32,
    pub(crate) wake_at: Option<u64>,
    /// Generation of the receiver's timer events (its slot's occupants counted).
    pub(crate) epoch: u32,
    pub(crate) sent: u64,
    /// Counters at the start and end of the measurement window.
    pub(crate) at_from: FlowCounters,
    pub(crate) at_to: Option<FlowCounters>,
    /// A sized flow: payload bytes the receiver must have in order (whole
    /// segments) for the flow to be complete; None for a bulk flow.
    pub(crate) complete_at_bytes: Option<u64>,
    /// When the receiver had them all, ns.
    pub(crate) completed_ns: Option<u64>,
    /// The links its data crosses, in order (the bottleneck alone: `[0]`).
    pub(crate) data_links: Vec<u32>,
    /// The links its ACKs cross (empty: none).
    pub(crate) reverse_path: Vec<u32>,
    /// Its base RTT, ns ([`crate::topology::base_rtt_ns`]).
    pub(crate) base_rtt_ns: u64,
    /// When it was to start (its configured start, or its arrival), ns.
    pub(crate) start_ns: u64,
    /// When its handshake was done and data could go, ns (its start until
    /// then). A completion time counts from here, as the live engine's
    /// does from the connection's establishment.
    pub(crate) opened_ns: u64,
    /// Its data segments and ACKs anywhere in the network: pipes, links'
    /// queues and wires (a workload flow's slot is given back at 0).
    pub(crate) in_network: u32,
    /// A workload's flow (None: a `[[flow]]`).
    pub(crate) arrival: Option<Arrival>,
}

/// What a flow is built from besides its configuration.
pub struct FlowSeeds {
    /// Seed of its congestion control's RNG.
    pub cc_seed: u64,
    /// Its stream of the run's seed for the host model, jitter and its
    /// application (the flow's index for a `[[flow]]`).
    pub stream: usize,
}

impl Flow {
    /// The flow `fc` in slot `key` of a run of `cfg`.
    pub fn new(cfg: &SimConfig, fc: &FlowConfig, key: u32, seeds: FlowSeeds) -> Self {
        let ops = cc_native::lookup(&fc.cc).expect("validated: known cc");
        let wire_bytes = cfg.mss + cfg.wire_overhead;
        let sender = TcpSender::new(
            SenderConfig {
                flow: key,
                mss: cfg.mss,
                wire_bytes,
                stop_ns: fc.stop_ns,
                size_segments: fc.size_bytes.map(|b| b.div_ceil(cfg.mss as u64) as u32),
                rng_seed: seeds.cc_seed,
                params: fc.params.clone(),
                ecn: fc.ecn,
                app: fc.app.as_ref().map(|a| AppSource::for_flow(a, cfg.mss, cfg.seed, seeds.stream)),
                tick: Tick::of_run(cfg.host.as_ref(), cfg.seed),
            },
            ops,
        );
        // The hosts' RTT split evenly between the two directions: the
        // data's half before its path's links, the ACKs' after them.
        let fwd = fc.rtt_ns / 2;
        // The host's jitter goes where the ACK leaves the receiver.
        let jitter = Jitter::for_flow(fc.jitter_ns, cfg.seed, seeds.stream);
        let (ack_extra_ns, ack_out, ack_jitter) = if fc.reverse_path.is_empty() {
            (cfg.path_delay_ns(fc.data_links()), None, jitter)
        } else {
            (0, Some(Pipe::with_jitter(0, jitter)), Jitter::none())
        };
        Flow {
            sender,
            receiver: Receiver::new(key, cfg.mss, fc.ecn),
            ack_pipe: Pipe::with_jitter(fc.rtt_ns - fwd + ack_extra_ns, ack_jitter),
            ack_out,
            ack_extra_ns,
            ack_clock: cfg.has_reverse_paths().then(|| {
                let slowest = fc.data_links().iter().map(|&k| cfg.link(k as usize).rate_bps).min();
                AckClock::new(wire_bytes, slowest.expect("a path has a link"))
            }),
            egress: Pipe::new(fwd),
            host: FlowHost::for_flow(cfg.host.as_ref(), cfg.seed, seeds.stream),
            wake_gen: 0,
            wake_at: None,
            epoch: 0,
            sent: 0,
            at_from: FlowCounters::default(),
            at_to: None,
            complete_at_bytes: fc.size_bytes.map(|b| b.div_ceil(cfg.mss as u64) * cfg.mss as u64),
            completed_ns: None,
            data_links: fc.data_links().to_vec(),
            reverse_path: fc.reverse_path.clone(),
            base_rtt_ns: cfg.base_rtt_ns(fc),
            start_ns: fc.start_ns,
            opened_ns: fc.start_ns,
            in_network: 0,
            arrival: None,
        }
    }

    /// A sized flow is complete the first time its receiver has every byte.
    pub fn note_completion(&mut self, now_ns: u64) {
        if self.completed_ns.is_none() && self.complete_at_bytes.is_some_and(|b| self.receiver.delivered_bytes() >= b) {
            self.completed_ns = Some(now_ns);
        }
    }

    /// Its completion time: from the handshake's end (the connection's
    /// establishment, where the live engine starts its clock) to the
    /// receiver's last byte; None if it did not complete.
    pub fn fct_ns(&self) -> Option<u64> {
        self.completed_ns.map(|t| t - self.opened_ns)
    }

    /// Whether the flow is over and nothing of it is left anywhere: its
    /// receiver has every byte, its sender has heard so, and none of its
    /// packets or ACKs is in the network.
    pub fn is_done(&self) -> bool {
        self.completed_ns.is_some() && self.sender.all_acked() && self.in_network == 0
    }

    pub fn counters(&self) -> FlowCounters {
        FlowCounters {
            delivered_bytes: self.receiver.delivered_bytes(),
            retransmits: self.sender.telemetry().retransmits_total,
        }
    }
}

/// The run's flows by slot: the `[[flow]]`s inline, the workloads' slots
/// boxed (a free one costs a pointer, not a flow). The `[[flow]]`s' own
/// vector spares the per-packet accesses of a dumbbell's flows the box
/// and the "is a flow there" test (with every slot boxed, the headline
/// scenario ran ~1% more instructions).
pub struct FlowTable {
    statics: Vec<Flow>,
    /// Workload slots: slot `statics.len() + i` is `workload[i]`.
    workload: Vec<Option<Box<Flow>>>,
    /// Free workload slots, a stack (at first the lowest on top).
    free: Vec<u32>,
    /// Per workload slot, the wake-up and timer generations its next
    /// occupant starts from (so that events of an earlier one never match).
    next_gens: Vec<(u32, u32)>,
}

impl FlowTable {
    /// The `[[flow]]`s in their slots, and `capacity` free slots after them.
    pub fn new(statics: Vec<Flow>, capacity: usize) -> Self {
        let n_static = statics.len();
        let free = (n_static..n_static + capacity).rev().map(|s| s as u32).collect();
        let workload = std::iter::repeat_with(|| None).take(capacity).collect();
        FlowTable { statics, workload, free, next_gens: vec![(0, 0); capacity] }
    }

    /// Flow keys: every slot (what the links keep per-flow state for).
    pub fn keys(&self) -> u32 {
        (self.statics.len() + self.workload.len()) as u32
    }

    /// The `[[flow]]`s, in order.
    pub fn statics(&self) -> impl Iterator<Item = &Flow> {
        self.statics.iter()
    }

    pub fn statics_mut(&mut self) -> impl Iterator<Item = &mut Flow> {
        self.statics.iter_mut()
    }

    /// The flow in `slot`, if one is there.
    #[inline]
    pub fn get(&self, slot: u32) -> Option<&Flow> {
        match self.statics.get(slot as usize) {
            Some(f) => Some(f),
            None => self.workload.get(slot as usize - self.statics.len()).and_then(|f| f.as_deref()),
        }
    }

    /// The flow in `slot`, if one is there.
    #[inline]
    pub fn get_mut(&mut self, slot: u32) -> Option<&mut Flow> {
        let n_static = self.statics.len();
        match self.statics.get_mut(slot as usize) {
            Some(f) => Some(f),
            None => self.workload.get_mut(slot as usize - n_static).and_then(|f| f.as_deref_mut()),
        }
    }

    /// The workload slot [`Self::insert`] fills next, if one is free.
    pub fn next_free(&self) -> Option<u32> {
        self.free.last().copied()
    }

    /// Puts `flow` (built for slot [`Self::next_free`]) into that slot.
    pub fn insert(&mut self, mut flow: Flow) -> u32 {
        let slot = self.free.pop().expect("a free slot");
        let i = slot as usize - self.statics.len();
        (flow.wake_gen, flow.epoch) = self.next_gens[i];
        self.workload[i] = Some(Box::new(flow));
        slot
    }

    /// Takes the flow out of workload slot `slot`, which is free again.
    pub fn remove(&mut self, slot: u32) -> Box<Flow> {
        let i = slot.checked_sub(self.statics.len() as u32).expect("a [[flow]] keeps its slot") as usize;
        let flow = self.workload[i].take().expect("a flow in the slot");
        self.next_gens[i] = (flow.wake_gen.wrapping_add(1), flow.epoch.wrapping_add(1));
        self.free.push(slot);
        flow
    }
}

impl std::ops::Index<usize> for FlowTable {
    type Output = Flow;
    #[inline]
    fn index(&self, slot: usize) -> &Flow {
        self.get(slot as u32).expect("a flow in the slot")
    }
}

impl std::ops::IndexMut<usize> for FlowTable {
    #[inline]
    fn index_mut(&mut self, slot: usize) -> &mut Flow {
        self.get_mut(slot as u32).expect("a flow in the slot")
    }
}
