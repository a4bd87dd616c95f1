//! The bottleneck: random loss on entry, an optional token-bucket policer,
//! a queue in wire bytes, and a link that serialises one packet at a time
//! at the current rate (a queue that only serialises; the propagation delay
//! is in the pipes).
//!
//! The queue is one FIFO whose admission a [`Qdisc`] decides (droptail,
//! RED, PIE, the step marker), one FIFO under CoDel (which drops at its
//! head), per-flow queues served by Deficit Round Robin ([`Drr`], `aqm =
//! "fq"`) whose shared buffer, when full, makes room by dropping the oldest
//! packet of the longest flow, or FQ-CoDel. So a packet already queued may
//! be dropped later - pushed out by an arrival, or by CoDel at the head:
//! callers that track packets find those in [`Bottleneck::pushed_out`]
//! after each [`Bottleneck::offer`] and [`Bottleneck::complete_tx`], and
//! the per-flow drop counts ([`Bottleneck::flow_drops`]) charge the flow
//! whose packet was lost. An ECN-capable packet that a discipline would
//! drop early may be marked CE instead ([`Bottleneck::flow_marks`]).
//!
//! The link takes the next packet from the queue when it is idle, so each
//! discipline sees every packet pass through (an arrival to an idle link
//! waits zero time; a FIFO's skips the empty FIFO itself).
//!
//! Serialisation is continuous work: the link does `rate_bps` nanobits
//! (10^-9 bit) of a packet per ns, so what it has serialised by any instant
//! ([`Bottleneck::counters`]) is exact, a packet on the wire counting by the
//! part already sent. In the simulator a rate change takes effect at its
//! instant, also for the packet on the wire, whose end moves
//! ([`Bottleneck::change_rate`]); so the bytes serialised over any interval
//! never exceed the integral of the rate schedule over it (the capacity the
//! results report).
//!
//! The live engine's delay line (crates/delayline) reuses this queue with
//! its own older interface: [`Bottleneck::set_rate`] (a change takes effect
//! from the next packet), `stats.tx_bytes` (whole packets) and
//! [`Bottleneck::set_recording`] / [`Bottleneck::sojourn_samples_ns`]
//! (every sojourn time kept: its real-time runs are short).

use std::collections::VecDeque;

use crate::config::{Aqm, BottleneckConfig};
use crate::distribution::Distribution;
use crate::packet::{DataPacket, Ecn};
use crate::qdisc::codel::{Codel, CodelParams, DequeueOutcome};
use crate::qdisc::drr::{Drr, Victim};
use crate::qdisc::fq_codel::FqCodel;
use crate::qdisc::pie::{Pie, PieParams};
use crate::qdisc::policer::TokenBucket;
use crate::qdisc::step_mark::StepMark;
use crate::qdisc::{droptail::DropTail, red::Red, Arrival, Departure, Qdisc, Verdict};
use crate::rng::SimRng;
use crate::trace_link::TraceLink;

/// Why a packet did not make it through the bottleneck.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Drop {
    RandomLoss,
    /// Over the policer's rate (its token bucket was short).
    Policed,
    /// The buffer was full (under fq: the arrival's own flow was the
    /// longest, with nothing queued to push out).
    Overflow,
    EarlyDrop,
}

/// Outcome of offering a packet to the bottleneck.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer {
    /// Queued; the link was idle, so its transmission ends at this time and
    /// the caller must schedule the completion.
    StartedTx(u64),
    Queued,
    Dropped(Drop),
}

/// Where packets wait for the link.
enum Waiting {
    /// One FIFO in arrival order; `admission` decides who may join (and,
    /// if `departures`, sees each packet leave).
    Fifo { admission: Box<dyn Qdisc>, departures: bool, fifo: VecDeque<DataPacket> },
    /// One FIFO under CoDel, at most `limit_packets` long.
    Codel { params: CodelParams, codel: Codel, limit_packets: u32, fifo: VecDeque<DataPacket> },
    /// One queue per flow, DRR service, longest-queue drop.
    Fair(Drr),
    FqCodel(FqCodel),
}

/// What is waiting, in total and per flow.
struct Occupancy {
    bytes: u64,
    packets: u32,
    /// Per-flow bytes waiting (the BBQ paper's Fig. 10).
    flow_bytes: Vec<u64>,
    flow_packets: Vec<u32>,
}

impl Occupancy {
    fn add(&mut self, pkt: &DataPacket) {
        self.bytes += pkt.wire_bytes as u64;
        self.packets += 1;
        self.flow_bytes[pkt.flow as usize] += pkt.wire_bytes as u64;
        self.flow_packets[pkt.flow as usize] += 1;
    }

    fn remove(&mut self, pkt: &DataPacket) {
        self.bytes -= pkt.wire_bytes as u64;
        self.packets -= 1;
        self.flow_bytes[pkt.flow as usize] -= pkt.wire_bytes as u64;
        self.flow_packets[pkt.flow as usize] -= 1;
    }
}

pub struct Bottleneck {
    rate_bps: u64,
    buffer_bytes: u64,
    loss: f64,
    policer: Option<TokenBucket>,
    /// A trace of delivery opportunities in place of serialisation at
    /// `rate_bps` ([`crate::trace_link`]).
    trace: Option<TraceLink>,
    /// Packets waiting, not counting the one on the wire.
    waiting: Waiting,
    occ: Occupancy,
    /// Per-flow packets dropped here, for any reason.
    flow_drops: Vec<u64>,
    /// Per-flow packets marked CE here.
    flow_marks: Vec<u64>,
    /// Queued packets the latest offer or completion dropped, oldest first.
    pushed_out: Vec<DataPacket>,
    /// Scratch for CoDel's dequeues.
    dequeue_out: DequeueOutcome,
    /// The packet being serialised, if any.
    on_wire: Option<Transmission>,
    /// Nanobits a finished packet still owed when its transmission ended on
    /// a whole ns (less than one ns of work); the next packet serialises
    /// them first, so that long runs do not drift from the exact rate.
    tx_debt_nanobits: u64,
    /// Whether sojourn times go into `sojourn_window`.
    recording_window: bool,
    /// Sojourn times (ns) of the packets that left the queue while
    /// `recording_window` (the simulator's measurement window).
    sojourn_window: Distribution,
    /// Whether every sojourn time goes into `sojourn_samples_ns`.
    recording_samples: bool,
    /// The live delay line's sojourn times (ns), every one.
    sojourn_samples_ns: Vec<u64>,
    /// Running totals (the live delay line reads them here); `tx_nanobits`
    /// only up to `on_wire`'s `since_ns`: [`Bottleneck::counters`] adds
    /// the part of the packet on the wire serialised since (with a trace,
    /// it stays 0: counters() reads the trace's books).
    pub stats: LinkCounters,
}

/// The packet on the wire and how much of it is left.
#[derive(Clone, Copy, Debug)]
struct Transmission {
    pkt: DataPacket,
    /// Start of the stretch serialised at `rate_bps` (the packet's start,
    /// or the latest rate change), ns.
    since_ns: u64,
    /// The rate of this stretch, bit/s.
    rate_bps: u64,
    /// Work left at `since_ns`, nanobits (bit/s × ns).
    left_nanobits: u64,
    /// When the transmission ends at the current rate, ns.
    end_ns: u64,
}

/// Nanobits in one byte (8 bits of 10^9 nanobits).
const NANOBITS_PER_BYTE: u128 = 8 * 1_000_000_000;

/// Whole bytes in `nanobits` (rounded down).
pub fn nanobits_to_bytes(nanobits: u128) -> u64 {
    (nanobits / NANOBITS_PER_BYTE) as u64
}

/// Running totals (the telemetry layer differences them).
#[derive(Clone, Copy, Debug, Default)]
pub struct LinkCounters {
    /// Packets whose transmission has ended.
    pub tx_packets: u64,
    /// Wire bytes of the packets whose transmission has ended.
    pub tx_bytes: u64,
    /// Wire bits serialised, nanobits (10^-9 bit: rate in bit/s × ns),
    /// including the part of the packet on the wire sent so far.
    pub tx_nanobits: u128,
    /// Packets dropped, every reason (random loss, policer, queue).
    pub drops: u64,
    /// Of `drops`, those the policer dropped.
    pub policed: u64,
    /// Packets marked CE (ECN) instead of dropped.
    pub marks: u64,
    /// Sum and count of sojourn times of dequeued packets, ns (u128: a
    /// day of 3·10^9 packets waiting seconds each would overflow u64).
    pub sojourn_sum_ns: u128,
    pub sojourn_count: u64,
    pub max_queue_bytes: u64,
}

impl Bottleneck {
    pub fn new(cfg: &BottleneckConfig, n_flows: usize, wire_bytes: u32) -> Self {
        let fifo = |admission: Box<dyn Qdisc>| Waiting::Fifo {
            departures: admission.sees_departures(),
            admission,
            fifo: VecDeque::with_capacity(4096),
        };
        let waiting = match cfg.aqm {
            Aqm::Droptail => match cfg.mark_threshold {
                Some(k) => fifo(Box::new(StepMark::new(k))),
                None => fifo(Box::new(DropTail)),
            },
            Aqm::Red => fifo(Box::new(Red::new(
                cfg.red.clone().expect("validated: red config present"),
                cfg.rate_bps,
                wire_bytes,
            ))),
            Aqm::Pie => {
                let c = cfg.pie.as_ref().expect("validated: pie config present");
                fifo(Box::new(Pie::new(PieParams {
                    target_ns: c.target_ns,
                    tupdate_ns: c.tupdate_ns,
                    alpha_16ths: c.alpha_16ths,
                    beta_16ths: c.beta_16ths,
                    max_burst_ns: c.burst_ns,
                    limit_packets: c.limit_packets,
                    mtu_bytes: wire_bytes as u64,
                    ecn: c.ecn,
                })))
            }
            Aqm::Codel => {
                let c = cfg.codel.as_ref().expect("validated: codel config present");
                Waiting::Codel {
                    params: CodelParams {
                        target_ns: c.target_ns,
                        interval_ns: c.interval_ns,
                        mtu_bytes: wire_bytes as u64,
                        ecn: c.ecn,
                    },
                    codel: Codel::new(),
                    limit_packets: c.limit_packets,
                    fifo: VecDeque::with_capacity(4096),
                }
            }
            Aqm::FqCodel => {
                let c = cfg.fq_codel.as_ref().expect("validated: fq_codel config present");
                let params =
                    CodelParams { target_ns: c.target_ns, interval_ns: c.interval_ns, mtu_bytes: wire_bytes as u64, ecn: c.ecn };
                Waiting::FqCodel(FqCodel::new(
                    params,
                    c.quantum_bytes.get(),
                    c.flows,
                    c.limit_packets,
                    cfg.buffer_bytes,
                    n_flows,
                ))
            }
            Aqm::Fq => {
                Waiting::Fair(Drr::new(n_flows, cfg.fq.as_ref().map_or(wire_bytes, |fq| fq.quantum_bytes.get())))
            }
        };
        Self {
            rate_bps: cfg.rate_bps,
            buffer_bytes: cfg.buffer_bytes,
            loss: cfg.loss,
            policer: cfg.policer.as_ref().map(TokenBucket::new),
            trace: cfg.trace.as_ref().map(TraceLink::new),
            waiting,
            occ: Occupancy { bytes: 0, packets: 0, flow_bytes: vec![0; n_flows], flow_packets: vec![0; n_flows] },
            flow_drops: vec![0; n_flows],
            flow_marks: vec![0; n_flows],
            pushed_out: Vec::new(),
            dequeue_out: DequeueOutcome::default(),
            on_wire: None,
            tx_debt_nanobits: 0,
            recording_window: false,
            sojourn_window: Distribution::default(),
            recording_samples: false,
            sojourn_samples_ns: Vec::new(),
            stats: LinkCounters::default(),
        }
    }

    pub fn rate_bps(&self) -> u64 {
        self.rate_bps
    }

    /// The rate the link offered over `[from_ns, to_ns)`, bit/s: the
    /// current rate, or with a trace its opportunities' bytes over the span.
    pub fn offered_rate_bps(&self, from_ns: u64, to_ns: u64) -> u64 {
        match &self.trace {
            Some(t) if to_ns > from_ns => {
                (t.trace().capacity_bytes(from_ns, to_ns) as u128 * 8 * 1_000_000_000 / (to_ns - from_ns) as u128) as u64
            }
            _ => self.rate_bps,
        }
    }

    /// The rate becomes `rate_bps` at `now_ns`, also for the rest of the
    /// packet on the wire: returns that packet's new end time, which
    /// replaces the one [`Bottleneck::offer`] or [`Bottleneck::complete_tx`]
    /// gave (the caller must ignore the old completion event).
    pub fn change_rate(&mut self, now_ns: u64, rate_bps: u64) -> Option<u64> {
        self.rate_bps = rate_bps;
        let tx = self.on_wire.as_mut()?;
        let done = tx.rate_bps * (now_ns - tx.since_ns);
        self.stats.tx_nanobits += done as u128;
        tx.left_nanobits -= done;
        tx.since_ns = now_ns;
        tx.rate_bps = rate_bps;
        tx.end_ns = now_ns + tx.left_nanobits / rate_bps;
        Some(tx.end_ns)
    }

    /// The live delay line's time zero: a link trace starts at `t0_ns`
    /// (the simulator's starts at 0).
    pub fn set_time_origin(&mut self, t0_ns: u64) {
        if let Some(trace) = &mut self.trace {
            trace.set_origin(t0_ns);
        }
    }

    /// The live delay line's rule: the rate becomes `rate_bps` from the
    /// next packet that starts serialising; the packet on the wire keeps
    /// its rate and end.
    pub fn set_rate(&mut self, rate_bps: u64) {
        self.rate_bps = rate_bps;
    }

    /// The running totals as of `now_ns` (not before the latest event).
    /// With a trace, `tx_nanobits` counts the bytes of the opportunities
    /// before `now_ns` ([`TraceLink::delivered_before`]).
    pub fn counters(&self, now_ns: u64) -> LinkCounters {
        let mut c = self.stats;
        if let Some(trace) = &self.trace {
            c.tx_nanobits = trace.delivered_before(now_ns) as u128 * 8 * 1_000_000_000;
        } else if let Some(tx) = &self.on_wire {
            c.tx_nanobits += tx.rate_bps as u128 * (now_ns - tx.since_ns) as u128;
        }
        c
    }

    pub fn queue_bytes(&self) -> u64 {
        self.occ.bytes
    }

    pub fn flow_queue_bytes(&self, flow: usize) -> u64 {
        self.occ.flow_bytes[flow]
    }

    /// Packets of `flow` marked CE so far.
    pub fn flow_marks(&self, flow: usize) -> u64 {
        self.flow_marks[flow]
    }

    /// Packets of `flow` dropped so far (random loss, policer, queue).
    pub fn flow_drops(&self, flow: usize) -> u64 {
        self.flow_drops[flow]
    }

    /// A new flow takes key `flow` (a workload flow's reused slot,
    /// [`crate::flow_table`]): its drop and mark counts start from 0. The
    /// previous holder of the key left nothing in the queue.
    pub fn reset_flow(&mut self, flow: u32) {
        let f = flow as usize;
        assert_eq!(self.flow_packets(flow), 0, "a reused key with packets queued");
        self.flow_drops[f] = 0;
        self.flow_marks[f] = 0;
    }

    /// Already-queued packets the latest [`Bottleneck::offer`] (fq's and
    /// fq_codel's drops to make room) or [`Bottleneck::complete_tx`]
    /// (CoDel's drops at the head) dropped.
    #[inline]
    pub fn pushed_out(&self) -> &[DataPacket] {
        &self.pushed_out
    }

    /// Packets of `flow` in the queue or on the wire.
    pub fn flow_packets(&self, flow: u32) -> u64 {
        let on_wire = self.on_wire.is_some_and(|tx| tx.pkt.flow == flow) as u64;
        self.occ.flow_packets[flow as usize] as u64 + on_wire
    }

    /// A packet arrives from a sender at `now_ns`.
    pub fn offer(&mut self, now_ns: u64, mut pkt: DataPacket, rng: &mut SimRng) -> Offer {
        self.pushed_out.clear();
        if self.loss > 0.0 && rng.next_f64() < self.loss {
            return self.drop(pkt.flow, Drop::RandomLoss);
        }
        if let Some(policer) = &mut self.policer {
            if !policer.admit(now_ns, pkt.wire_bytes) {
                self.stats.policed += 1;
                return self.drop(pkt.flow, Drop::Policed);
            }
        }
        let fits = self.occ.bytes + pkt.wire_bytes as u64 <= self.buffer_bytes;
        pkt.enqueued_ns = now_ns;
        match &mut self.waiting {
            Waiting::Fifo { admission, .. } => {
                let arrival = Arrival {
                    now_ns,
                    wire_bytes: pkt.wire_bytes,
                    queue_bytes: self.occ.bytes,
                    queue_packets: self.occ.packets,
                    buffer_bytes: self.buffer_bytes,
                    ect: pkt.ecn.capable(),
                };
                match admission.on_arrival(arrival, rng) {
                    Verdict::Enqueue => {}
                    Verdict::Mark => self.mark(&mut pkt),
                    Verdict::Overflow => return self.drop(pkt.flow, Drop::Overflow),
                    Verdict::EarlyDrop => return self.drop(pkt.flow, Drop::EarlyDrop),
                }
            }
            Waiting::Codel { limit_packets, .. } => {
                if self.occ.packets >= *limit_packets || !fits {
                    return self.drop(pkt.flow, Drop::Overflow);
                }
            }
            Waiting::Fair(drr) => {
                while self.occ.bytes + pkt.wire_bytes as u64 > self.buffer_bytes {
                    match drr.push_out(&pkt) {
                        Victim::Arrival => return self.drop(pkt.flow, Drop::Overflow),
                        Victim::Queued(v) => {
                            self.occ.remove(&v);
                            self.stats.drops += 1;
                            self.flow_drops[v.flow as usize] += 1;
                            self.pushed_out.push(v);
                        }
                    }
                }
            }
            Waiting::FqCodel(q) => {
                // Queue first, then drop from the fattest flow if over.
                self.occ.add(&pkt);
                let mut dropped = std::mem::take(&mut self.pushed_out);
                q.enqueue(pkt, &mut dropped);
                let mut own_dropped = false;
                dropped.retain(|v| {
                    let own = *v == pkt;
                    own_dropped |= own;
                    !own
                });
                for v in &dropped {
                    self.occ.remove(v);
                    self.stats.drops += 1;
                    self.flow_drops[v.flow as usize] += 1;
                }
                self.pushed_out = dropped;
                if own_dropped {
                    self.occ.remove(&pkt);
                    return self.drop(pkt.flow, Drop::Overflow);
                }
                return self.after_enqueue(now_ns);
            }
        }
        if self.on_wire.is_none() {
            if let Waiting::Fifo { admission, departures, .. } = &mut self.waiting {
                // An idle link takes the arrival at once: it waits zero
                // time (the FIFO is empty; no need to pass through it).
                if *departures && admission.on_departure(Self::departure(now_ns, &pkt, &self.occ)) {
                    self.mark(&mut pkt);
                }
                self.record_sojourn(0);
                return Offer::StartedTx(self.start_tx(now_ns, pkt));
            }
        }
        self.occ.add(&pkt);
        match &mut self.waiting {
            Waiting::Fifo { fifo, .. } | Waiting::Codel { fifo, .. } => fifo.push_back(pkt),
            Waiting::Fair(drr) => drr.enqueue(pkt),
            Waiting::FqCodel(_) => unreachable!("queued above"),
        }
        self.after_enqueue(now_ns)
    }

    /// The arrival is queued: an idle link starts on the queue's next
    /// packet at once.
    fn after_enqueue(&mut self, now_ns: u64) -> Offer {
        if self.on_wire.is_some() {
            self.stats.max_queue_bytes = self.stats.max_queue_bytes.max(self.occ.bytes);
            return Offer::Queued;
        }
        match self.dequeue(now_ns) {
            Some(pkt) => Offer::StartedTx(self.start_tx(now_ns, pkt)),
            None => Offer::Queued, // CoDel dropped it at the head
        }
    }

    /// The packet on the wire has been fully transmitted at `now_ns`.
    /// Returns it, and the end time of the next transmission if one began.
    pub fn complete_tx(&mut self, now_ns: u64) -> (DataPacket, Option<u64>) {
        self.pushed_out.clear();
        let tx = self.on_wire.take().expect("a transmission was in progress");
        debug_assert_eq!(now_ns, tx.end_ns, "a stale completion");
        // With a trace, its bytes count at the opportunities that carried
        // them (counters(), from the trace's books).
        if self.trace.is_none() {
            let work = tx.rate_bps * (now_ns - tx.since_ns);
            self.stats.tx_nanobits += work as u128;
            self.tx_debt_nanobits = tx.left_nanobits - work;
        }
        self.stats.tx_packets += 1;
        self.stats.tx_bytes += tx.pkt.wire_bytes as u64;
        let next = self.dequeue(now_ns).map(|pkt| self.start_tx(now_ns, pkt));
        (tx.pkt, next)
    }

    /// The next packet for the link at `now_ns`, with what the discipline
    /// decides as it leaves (CoDel's head drops, marks); None if the queue
    /// is (or has been emptied) empty.
    fn dequeue(&mut self, now_ns: u64) -> Option<DataPacket> {
        if let Waiting::Fifo { fifo, admission, departures } = &mut self.waiting {
            // The common case, kept lean: no drops at dequeue.
            let Some(mut pkt) = fifo.pop_front() else {
                admission.on_idle(now_ns);
                return None;
            };
            self.occ.remove(&pkt);
            if *departures && admission.on_departure(Self::departure(now_ns, &pkt, &self.occ)) {
                self.mark(&mut pkt);
            }
            self.record_sojourn(now_ns - pkt.enqueued_ns);
            return Some(pkt);
        }
        let occ = &mut self.occ;
        let out = &mut self.dequeue_out;
        out.dropped.clear();
        out.mark = false;
        let pkt = match &mut self.waiting {
            Waiting::Fifo { .. } => unreachable!("handled above"),
            Waiting::Codel { params, codel, fifo, .. } => {
                let pop = || {
                    fifo.pop_front().map(|p| {
                        occ.remove(&p);
                        (p, occ.bytes)
                    })
                };
                codel.dequeue(params, now_ns, pop, out)
            }
            Waiting::Fair(drr) => {
                let pkt = drr.dequeue();
                if let Some(p) = &pkt {
                    occ.remove(p);
                }
                pkt
            }
            Waiting::FqCodel(q) => {
                let pkt = q.dequeue(now_ns, out);
                for p in pkt.iter().chain(out.dropped.iter()) {
                    occ.remove(p);
                }
                pkt
            }
        };
        for i in 0..self.dequeue_out.dropped.len() {
            let v = self.dequeue_out.dropped[i];
            self.stats.drops += 1;
            self.flow_drops[v.flow as usize] += 1;
            self.pushed_out.push(v);
        }
        let mut pkt = pkt?;
        if self.dequeue_out.mark {
            self.mark(&mut pkt);
        }
        self.record_sojourn(now_ns - pkt.enqueued_ns);
        Some(pkt)
    }

    /// What the discipline sees of `pkt` leaving at `now_ns` with `occ` queued behind it.
    fn departure(now_ns: u64, pkt: &DataPacket, occ: &Occupancy) -> Departure {
        Departure {
            now_ns,
            sojourn_ns: now_ns - pkt.enqueued_ns,
            wire_bytes: pkt.wire_bytes,
            queue_bytes: occ.bytes,
            queue_packets: occ.packets,
            ect: pkt.ecn.capable(),
        }
    }

    /// Sets CE on `pkt` and counts the mark.
    fn mark(&mut self, pkt: &mut DataPacket) {
        pkt.ecn = Ecn::Ce;
        self.stats.marks += 1;
        self.flow_marks[pkt.flow as usize] += 1;
    }

    /// Record sojourn times into [`Self::sojourn_window`] from now on (the
    /// simulator's measurement window), or stop.
    pub fn record_window(&mut self, on: bool) {
        self.recording_window = on;
    }

    /// Sojourn times (ns) of the packets that left the queue while
    /// [`Self::record_window`] was on, in bounded memory.
    pub fn sojourn_window(&mut self) -> &mut Distribution {
        &mut self.sojourn_window
    }

    /// The live delay line's recording: keep every sojourn time from now on
    /// in [`Self::sojourn_samples_ns`] (memory grows with the packets), or stop.
    pub fn set_recording(&mut self, on: bool) {
        self.recording_samples = on;
    }

    /// Every sojourn time (ns) recorded while [`Self::set_recording`] was on.
    pub fn sojourn_samples_ns(&mut self) -> &mut Vec<u64> {
        &mut self.sojourn_samples_ns
    }

    fn drop(&mut self, flow: u32, why: Drop) -> Offer {
        self.stats.drops += 1;
        self.flow_drops[flow as usize] += 1;
        Offer::Dropped(why)
    }

    fn record_sojourn(&mut self, ns: u64) {
        self.stats.sojourn_sum_ns += ns as u128;
        self.stats.sojourn_count += 1;
        if self.recording_window {
            self.sojourn_window.record(ns);
        }
        if self.recording_samples {
            self.sojourn_samples_ns.push(ns);
        }
    }

    /// Puts `pkt` on the wire at `now_ns`; returns its end time. Duration
    /// = work / rate rounded down to the ns; what the rounding leaves
    /// undone is carried to the next packet (`tx_debt_nanobits`).
    fn start_tx(&mut self, now_ns: u64, pkt: DataPacket) -> u64 {
        if let Some(trace) = &mut self.trace {
            // The trace books its bytes on the opportunities that carry it.
            let end_ns = trace.departure(now_ns, pkt.wire_bytes);
            self.on_wire = Some(Transmission { pkt, since_ns: now_ns, rate_bps: 0, left_nanobits: 0, end_ns });
            return end_ns;
        }
        let left_nanobits = pkt.wire_bytes as u64 * 8 * 1_000_000_000 + std::mem::take(&mut self.tx_debt_nanobits);
        let rate_bps = self.rate_bps;
        let end_ns = now_ns + left_nanobits / rate_bps;
        self.on_wire = Some(Transmission { pkt, since_ns: now_ns, rate_bps, left_nanobits, end_ns });
        end_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Aqm;

    fn cfg(buffer_bytes: u64) -> BottleneckConfig {
        BottleneckConfig::droptail(100_000_000, buffer_bytes)
    }

    fn pkt(flow: u32, seq: u32) -> DataPacket {
        DataPacket { flow, seq, wire_bytes: 1514, retrans: false, ..Default::default() }
    }

    #[test]
    fn serialises_at_link_rate_and_bounds_the_queue() {
        let mut rng = SimRng::new(1);
        let mut b = Bottleneck::new(&cfg(3 * 1514), 2, 1514);
        // 1514 B at 100 Mbit/s = 121.12 us.
        assert_eq!(b.offer(0, pkt(0, 0), &mut rng), Offer::StartedTx(121_120));
        assert_eq!(b.offer(0, pkt(1, 0), &mut rng), Offer::Queued);
        assert_eq!(b.offer(0, pkt(0, 1), &mut rng), Offer::Queued);
        assert_eq!(b.offer(0, pkt(0, 2), &mut rng), Offer::Queued);
        assert_eq!(b.offer(0, pkt(0, 3), &mut rng), Offer::Dropped(Drop::Overflow));
        assert_eq!(b.queue_bytes(), 3 * 1514);
        assert_eq!(b.flow_queue_bytes(0), 2 * 1514);
        assert_eq!(b.flow_packets(0), 3);
        let (done, next) = b.complete_tx(121_120);
        assert_eq!((done.flow, done.seq), (0, 0));
        assert_eq!(next, Some(242_240));
        assert_eq!(b.flow_queue_bytes(1), 0);
        assert_eq!(b.stats.sojourn_sum_ns, 121_120);
    }

    #[test]
    fn fractional_serialisation_times_do_not_drift() {
        // 1514 B at 3 Mbit/s = 4037333.33 ns; 3000 packets must take 12.112 s.
        let mut rng = SimRng::new(1);
        let mut c = cfg(u64::MAX / 4);
        c.rate_bps = 3_000_000;
        let mut b = Bottleneck::new(&c, 1, 1514);
        let mut end = match b.offer(0, pkt(0, 0), &mut rng) {
            Offer::StartedTx(t) => t,
            o => panic!("{o:?}"),
        };
        for s in 1..3000 {
            b.offer(0, pkt(0, s), &mut rng);
        }
        while let (_, Some(t)) = b.complete_tx(end) {
            end = t;
        }
        assert_eq!(end, 12_112_000_000);
    }

    fn tx_bytes(b: &Bottleneck, now_ns: u64) -> u64 {
        nanobits_to_bytes(b.counters(now_ns).tx_nanobits)
    }

    #[test]
    fn a_packet_on_the_wire_counts_by_the_part_already_serialised() {
        let mut rng = SimRng::new(1);
        let mut b = Bottleneck::new(&cfg(10 * 1514), 1, 1514);
        // 1514 B at 100 Mbit/s: 121.12 us, 12.5 bytes per us.
        assert_eq!(b.offer(1_000, pkt(0, 0), &mut rng), Offer::StartedTx(122_120));
        assert_eq!(b.offer(1_000, pkt(0, 1), &mut rng), Offer::Queued);
        assert_eq!(tx_bytes(&b, 1_000), 0);
        assert_eq!(tx_bytes(&b, 41_000), 500);
        assert_eq!(tx_bytes(&b, 122_120), 1514);
        // A window [41 us, 161 us) sees 1014 bytes of the first packet and
        // 486 of the second (38.88 us of it): the link's 1500 bytes in 120 us.
        let from = b.counters(41_000).tx_nanobits;
        let (_, next) = b.complete_tx(122_120);
        assert_eq!(next, Some(243_240));
        let to = b.counters(161_000).tx_nanobits;
        assert_eq!(nanobits_to_bytes(to - from), 1500);
        assert_eq!(nanobits_to_bytes(b.counters(161_000).tx_nanobits), 1514 + 486);
        b.complete_tx(243_240);
        // Idle: nothing more is counted.
        assert_eq!(tx_bytes(&b, 10_000_000), 2 * 1514);
    }

    #[test]
    fn a_rate_change_applies_to_the_rest_of_the_packet_on_the_wire() {
        let mut rng = SimRng::new(1);
        let mut b = Bottleneck::new(&cfg(10 * 1514), 1, 1514);
        assert_eq!(b.offer(0, pkt(0, 0), &mut rng), Offer::StartedTx(121_120));
        b.offer(0, pkt(0, 1), &mut rng);
        // Half the packet (757 B) at 100 Mbit/s, then the link halves its
        // rate: the other half takes twice as long.
        assert_eq!(b.change_rate(60_560, 50_000_000), Some(60_560 + 121_120));
        assert_eq!(tx_bytes(&b, 60_560), 757);
        assert_eq!(tx_bytes(&b, 60_560 + 60_560), 757 + 378);
        let (done, next) = b.complete_tx(181_680);
        assert_eq!(done.seq, 0);
        // The next packet starts at the new rate: 242.24 us.
        assert_eq!(next, Some(181_680 + 242_240));
        assert_eq!(tx_bytes(&b, 181_680), 1514);
        // An idle link just changes its rate.
        b.complete_tx(181_680 + 242_240);
        assert_eq!(b.change_rate(1_000_000, 100_000_000), None);
        assert_eq!(b.offer(1_000_000, pkt(0, 2), &mut rng), Offer::StartedTx(1_121_120));
    }

    #[test]
    fn a_rate_change_at_the_end_of_a_packet_leaves_its_end_unmoved() {
        let mut rng = SimRng::new(1);
        let mut b = Bottleneck::new(&cfg(10 * 1514), 1, 1514);
        assert_eq!(b.offer(0, pkt(0, 0), &mut rng), Offer::StartedTx(121_120));
        // The change runs before the completion event of the same instant.
        assert_eq!(b.change_rate(121_120, 1_000_000), Some(121_120));
        let (_, next) = b.complete_tx(121_120);
        assert_eq!(next, None);
        assert_eq!(tx_bytes(&b, 121_120), 1514);
    }

    #[test]
    fn random_loss_drops_the_configured_fraction() {
        let mut rng = SimRng::new(5);
        let mut c = cfg(u64::MAX / 4);
        c.loss = 0.01;
        let mut b = Bottleneck::new(&c, 1, 1514);
        let n = 200_000;
        let drops =
            (0..n).filter(|&s| matches!(b.offer(0, pkt(0, s), &mut rng), Offer::Dropped(Drop::RandomLoss))).count();
        let rate = drops as f64 / n as f64;
        // Binomial sd at n = 2e5, p = 0.01 is 0.00022: 0.0095..0.0105 is > 2 sd.
        assert!((0.0095..0.0105).contains(&rate), "{rate}");
    }

    fn fq(buffer_bytes: u64) -> BottleneckConfig {
        BottleneckConfig { aqm: Aqm::Fq, ..cfg(buffer_bytes) }
    }

    fn sized(flow: u32, seq: u32, wire_bytes: u32) -> DataPacket {
        DataPacket { wire_bytes, ..pkt(flow, seq) }
    }

    /// Completes transmissions from `end` on until `bytes` wire bytes have
    /// left; returns the bytes per flow and the last end time.
    fn drain(b: &mut Bottleneck, mut end: u64, bytes: u64) -> ([u64; 2], u64) {
        let mut sent = [0u64; 2];
        while sent.iter().sum::<u64>() < bytes {
            let (done, next) = b.complete_tx(end);
            sent[done.flow as usize] += done.wire_bytes as u64;
            end = next.expect("still backlogged");
        }
        (sent, end)
    }

    #[test]
    fn fq_shares_the_link_by_bytes_between_flows_of_different_packet_sizes() {
        let mut rng = SimRng::new(1);
        let mut b = Bottleneck::new(&fq(10_000_000), 2, 1514);
        let Offer::StartedTx(end) = b.offer(0, sized(0, 0, 1514), &mut rng) else { panic!() };
        for s in 1..2000 {
            b.offer(0, sized(0, s, 1514), &mut rng);
        }
        for s in 0..6000 {
            b.offer(0, sized(1, s, 514), &mut rng);
        }
        // 1 MB through the link while both stay backlogged: within DRR's
        // bound of a quantum plus a packet (+ the first packet, sent alone).
        let (sent, _) = drain(&mut b, end, 1_000_000);
        assert!(sent[0].abs_diff(sent[1]) <= 3 * 1514, "{sent:?}");
        // The per-flow telemetry follows the queues.
        let on_wire_0 = b.on_wire.is_some_and(|tx| tx.pkt.flow == 0) as u64;
        assert_eq!(b.flow_queue_bytes(0), 2000 * 1514 - sent[0] - 1514 * on_wire_0);
        assert_eq!(b.queue_bytes(), b.flow_queue_bytes(0) + b.flow_queue_bytes(1));
    }

    #[test]
    fn fq_full_buffer_pushes_out_the_oldest_packet_of_the_longest_flow() {
        let mut rng = SimRng::new(1);
        let mut b = Bottleneck::new(&fq(4 * 1514), 2, 1514);
        assert!(matches!(b.offer(0, pkt(0, 0), &mut rng), Offer::StartedTx(_)));
        for s in 1..5 {
            assert_eq!(b.offer(0, pkt(0, s), &mut rng), Offer::Queued);
        }
        // Flow 0 holds the whole buffer; flow 1's arrival pushes out flow
        // 0's oldest waiting packet (seq 1; seq 0 is on the wire).
        assert_eq!(b.offer(10, pkt(1, 0), &mut rng), Offer::Queued);
        assert_eq!(b.pushed_out().iter().map(|p| (p.flow, p.seq)).collect::<Vec<_>>(), vec![(0, 1)]);
        assert_eq!((b.flow_queue_bytes(0), b.flow_queue_bytes(1)), (3 * 1514, 1514));
        assert_eq!((b.flow_drops(0), b.flow_drops(1), b.stats.drops), (1, 0, 1));
        // Flow 0 pushing more only displaces its own oldest packets.
        assert_eq!(b.offer(20, pkt(0, 5), &mut rng), Offer::Queued);
        assert_eq!(b.pushed_out()[0].seq, 2);
        assert_eq!((b.flow_queue_bytes(0), b.flow_queue_bytes(1)), (3 * 1514, 1514));
        // Service alternates; flow 0's packets leave in order, minus the lost.
        let mut end = 121_120;
        let mut order = vec![];
        loop {
            let (done, next) = b.complete_tx(end);
            order.push((done.flow, done.seq));
            let Some(t) = next else { break };
            end = t;
        }
        assert_eq!(order, vec![(0, 0), (0, 3), (1, 0), (0, 4), (0, 5)]);
        assert_eq!(b.queue_bytes(), 0);
        assert_eq!(b.stats.sojourn_count, 5);
        // The pushed-out list describes the latest offer only.
        assert!(matches!(b.offer(end, pkt(1, 1), &mut rng), Offer::StartedTx(_)));
        assert!(b.pushed_out().is_empty());
    }

    #[test]
    fn fq_goes_idle_and_restarts_with_empty_queues() {
        let mut rng = SimRng::new(1);
        let mut b = Bottleneck::new(&fq(100 * 1514), 3, 1514);
        assert_eq!(b.offer(0, pkt(2, 0), &mut rng), Offer::StartedTx(121_120));
        assert_eq!(b.offer(0, pkt(2, 1), &mut rng), Offer::Queued);
        assert_eq!(b.flow_packets(2), 2);
        assert_eq!(b.complete_tx(121_120).1, Some(242_240));
        assert_eq!(b.complete_tx(242_240).1, None, "both queues empty: the link idles");
        assert_eq!((b.queue_bytes(), b.flow_packets(2)), (0, 0));
        // Sojourns: 0 for the first (idle link), one transmission for the second.
        assert_eq!((b.stats.sojourn_count, b.stats.sojourn_sum_ns), (2, 121_120));
        assert_eq!(b.offer(1_000_000, pkt(0, 0), &mut rng), Offer::StartedTx(1_121_120));
    }

    #[test]
    fn policer_drops_what_exceeds_its_rate_and_counts_it() {
        let mut rng = SimRng::new(1);
        let mut c = cfg(u64::MAX / 4);
        let nz = |v| std::num::NonZeroU64::new(v).unwrap();
        c.policer = Some(crate::config::PolicerConfig { rate_bps: nz(50_000_000), burst_bytes: nz(3 * 1514) });
        let mut b = Bottleneck::new(&c, 1, 1514);
        let offers: Vec<Offer> = (0..5).map(|s| b.offer(0, pkt(0, s), &mut rng)).collect();
        assert_eq!(offers[3..], [Offer::Dropped(Drop::Policed), Offer::Dropped(Drop::Policed)]);
        // 1514 B of tokens at 50 Mbit/s take 242.24 us.
        assert_eq!(b.offer(242_240, pkt(0, 5), &mut rng), Offer::Queued);
        assert_eq!((b.stats.policed, b.stats.drops, b.flow_drops(0)), (2, 2, 2));
    }
}
