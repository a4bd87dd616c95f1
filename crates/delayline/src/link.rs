//! The userspace bottleneck (for what the kernel lacks here: RED, CoDel,
//! FQ-CoDel, PIE, ECN marking, fair queueing, a policer, random loss, rate
//! schedules and link traces, per-flow queue occupancy, per-packet
//! sojourn).
//!
//! The queue is the simulator's own (`sim::bottleneck::Bottleneck`: random
//! loss on entry, a token-bucket policer, droptail, RED, PIE, CoDel or a
//! step marker on a FIFO, or per-flow DRR / FQ-CoDel queues, in wire bytes,
//! serialised at the current rate);
//! this module feeds it real packets and real time. The link runs on its
//! own exact timeline: a transmission that ends at `t` is completed at `t`
//! even if we wake up later, so wake-up jitter delays packets slightly but
//! never changes the rate.
//!
//! The simulator's queue holds packet descriptors, not bytes. Under fq they
//! leave in DRR order, not arrival order, and an arrival may push out a
//! queued packet of another flow; so each packet's bytes wait in a slot of
//! [`Payloads`], and the slot's index rides through the queue in the
//! descriptor's `seq` (the live link has no segment numbers).
//!
//! ECN: the descriptor carries the packet's IPv4 ECN codepoint; a packet
//! the queue marks leaves with CE set in its real header (ecn.rs), and the
//! ACKs going back are counted per flow when they carry ECE.

use std::collections::VecDeque;

use sim::bottleneck::{Bottleneck, Offer};
use sim::config::BottleneckConfig;
use sim::packet::{DataPacket, Ecn};
use sim::rng::SimRng;

use crate::ecn;

/// Ethernet header: the bottleneck counts wire bytes (IP length + 14), as
/// the simulator's 1514-byte full packets do.
pub const ETHERNET_HEADER: u32 = 14;
/// Wire size of a full-sized packet (RED's mean packet size).
pub const FULL_PACKET_WIRE: u32 = 1514;

pub struct Link {
    queue: Bottleneck,
    rng: SimRng,
    /// Bytes of the packets in the queue and on the wire.
    payloads: Payloads,
    /// End of the transmission in progress.
    busy_until: Option<u64>,
    /// (absolute ns, rate) changes still to apply, ascending.
    schedule: VecDeque<(u64, u64)>,
    pending_schedule: Vec<(u64, u64)>,
    n_flows: usize,
    /// Whether the queue also carries the flows' ACKs (a topology's
    /// reverse paths), under keys `n_flows + flow` as in the simulator
    /// (sim::topology): fair queueing then gives them queues of their own
    /// and their drops are counted apart from the data's.
    carries_acks: bool,
    /// Per flow, ACKs seen going back with ECE set.
    ece_acks: Vec<u64>,
    /// Arrivals dropped that were Not-ECT (packets; with an ECN-marking
    /// queue these are what RFC 3168 forbids marking: the handshake and
    /// retransmissions, which Linux sends without ECT).
    not_ect_drops: u64,
}

impl Link {
    /// `carries_acks`: see the field; the queue then has `2 * n_flows` keys.
    pub fn new(cfg: &BottleneckConfig, n_flows: usize, carries_acks: bool, seed: u64) -> Self {
        let keys = if carries_acks { 2 * n_flows } else { n_flows };
        Link {
            queue: Bottleneck::new(cfg, keys, FULL_PACKET_WIRE),
            rng: SimRng::new(seed),
            payloads: Payloads::default(),
            busy_until: None,
            schedule: VecDeque::new(),
            pending_schedule: cfg.schedule.iter().map(|c| (c.at_ns, c.rate_bps)).collect(),
            n_flows,
            carries_acks,
            ece_acks: vec![0; n_flows],
            not_ect_drops: 0,
        }
    }

    /// The run's time zero: rate changes and a link trace are relative to it.
    pub fn start(&mut self, t0_ns: u64) {
        self.queue.set_time_origin(t0_ns);
        self.schedule = self.pending_schedule.drain(..).map(|(at, rate)| (t0_ns + at, rate)).collect();
    }

    /// The next instant the link needs attention (a transmission ends or
    /// the rate changes).
    pub fn next_event(&self) -> Option<u64> {
        match (self.busy_until, self.schedule.front().map(|&(at, _)| at)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// A packet under queue key `flow` (a flow's data, or with
    /// `carries_acks` `n_flows + flow` for its ACKs) arrives at `now_ns`;
    /// false if dropped.
    /// Call [`Link::advance`] up to `now_ns` first.
    pub fn offer(&mut self, now_ns: u64, flow: usize, bytes: Vec<u8>) -> bool {
        let wire_bytes = bytes.len() as u32 + ETHERNET_HEADER;
        let ecn = ecn::codepoint(&bytes);
        let slot = self.payloads.put(bytes);
        let pkt = DataPacket {
            flow: flow as u32,
            seq: slot,
            wire_bytes,
            retrans: false,
            sent_ns: now_ns,
            enqueued_ns: now_ns,
            ecn,
            ..Default::default()
        };
        let offer = self.queue.offer(now_ns, pkt, &mut self.rng);
        self.free_pushed_out();
        match offer {
            Offer::StartedTx(end) => {
                self.busy_until = Some(end);
                true
            }
            Offer::Queued => true,
            Offer::Dropped(_) => {
                self.payloads.take(slot);
                self.not_ect_drops += u64::from(ecn == Ecn::NotEct);
                false
            }
        }
    }

    /// Completes every transmission and rate change due by `now_ns`, in
    /// time order; `sent(key, end_ns, bytes)` gets each packet that left
    /// (`key` as offered).
    pub fn advance(&mut self, now_ns: u64, sent: &mut dyn FnMut(usize, u64, Vec<u8>)) {
        loop {
            let tx = self.busy_until.filter(|&t| t <= now_ns);
            let change = self.schedule.front().copied().filter(|&(at, _)| at <= now_ns);
            match (tx, change) {
                (Some(t), Some((at, rate))) if at < t => {
                    self.queue.set_rate(rate);
                    self.schedule.pop_front();
                }
                (Some(t), _) => {
                    let (done, next) = self.queue.complete_tx(t);
                    self.free_pushed_out();
                    self.busy_until = next;
                    let mut bytes = self.payloads.take(done.seq);
                    if done.ecn == Ecn::Ce {
                        ecn::set_ce(&mut bytes); // the queue marked it (or it came marked)
                    }
                    sent(done.flow as usize, t, bytes);
                }
                (None, Some((_, rate))) => {
                    self.queue.set_rate(rate);
                    self.schedule.pop_front();
                }
                (None, None) => return,
            }
        }
    }

    /// Queued packets the queue dropped (fq's push-out, CoDel at the head).
    fn free_pushed_out(&mut self) {
        for lost in self.queue.pushed_out() {
            self.payloads.take(lost.seq);
        }
    }

    /// An ACK of `flow` passes on its way back (counts its ECE).
    pub fn note_ack(&mut self, flow: usize, ip: &[u8]) {
        if ecn::tcp_ece(ip) {
            self.ece_acks[flow] += 1;
        }
    }

    pub fn set_recording(&mut self, on: bool) {
        self.queue.set_recording(on);
    }

    /// One JSON object of counters (what `tc -s qdisc` would give, plus
    /// per-flow backlog and sojourn sums).
    pub fn stats_json(&self) -> String {
        let s = &self.queue.stats;
        let per_flow =
            |f: &dyn Fn(usize) -> u64| (0..self.n_flows).map(|i| f(i).to_string()).collect::<Vec<_>>().join(", ");
        let ack_drops = match self.carries_acks {
            true => format!(", \"flow_ack_drops\": [{}]", per_flow(&|i| self.queue.flow_drops(self.n_flows + i))),
            false => String::new(),
        };
        format!(
            "{{\"bytes\": {}, \"packets\": {}, \"drops\": {}, \"policed\": {}, \"backlog\": {}, \"rate_bps\": {}, \
             \"sojourn_sum_ns\": {}, \"sojourn_count\": {}, \"max_backlog\": {}, \"flow_backlog\": [{}], \
             \"flow_drops\": [{}], \"drops_not_ect\": {}, \"marks\": {}, \"flow_marks\": [{}], \"flow_ece_acks\": [{}]{}}}",
            s.tx_bytes,
            s.tx_packets,
            s.drops,
            s.policed,
            self.queue.queue_bytes(),
            self.queue.rate_bps(),
            s.sojourn_sum_ns,
            s.sojourn_count,
            s.max_queue_bytes,
            per_flow(&|i| self.queue.flow_queue_bytes(i)),
            per_flow(&|i| self.queue.flow_drops(i)),
            self.not_ect_drops,
            s.marks,
            per_flow(&|i| self.queue.flow_marks(i)),
            per_flow(&|i| self.ece_acks[i]),
            ack_drops,
        )
    }

    /// Sojourn percentiles (us) of the packets recorded, as JSON fields.
    pub fn sojourn_json(&mut self) -> String {
        let samples = self.queue.sojourn_samples_ns();
        samples.sort_unstable();
        let pick = |q: f64| -> String {
            if samples.is_empty() {
                return "null".into();
            }
            let i = ((q * (samples.len() - 1) as f64).round() as usize).min(samples.len() - 1);
            format!("{:.3}", samples[i] as f64 / 1e3)
        };
        let mean = if samples.is_empty() {
            "null".into()
        } else {
            format!("{:.3}", samples.iter().sum::<u64>() as f64 / samples.len() as f64 / 1e3)
        };
        format!(
            "\"sojourn_mean_us\": {mean}, \"sojourn_p50_us\": {}, \"sojourn_p95_us\": {}, \"sojourn_p99_us\": {}",
            pick(0.5),
            pick(0.95),
            pick(0.99)
        )
    }
}

/// The bytes of the packets in the bottleneck, each in a numbered slot
/// until it leaves or is dropped (a slab: freed slots are reused, so the
/// slot numbers stay below the most packets ever queued at once).
#[derive(Default)]
struct Payloads {
    slots: Vec<Option<Vec<u8>>>,
    free: Vec<u32>,
}

impl Payloads {
    fn put(&mut self, bytes: Vec<u8>) -> u32 {
        match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = Some(bytes);
                slot
            }
            None => {
                self.slots.push(Some(bytes));
                (self.slots.len() - 1) as u32
            }
        }
    }

    fn take(&mut self, slot: u32) -> Vec<u8> {
        let bytes = self.slots[slot as usize].take().expect("a slot is taken once");
        self.free.push(slot);
        bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim::config::{Aqm, RateChange};

    fn cfg(schedule: Vec<RateChange>) -> BottleneckConfig {
        BottleneckConfig { schedule, ..BottleneckConfig::droptail(100_000_000, 3 * 1514) }
    }

    #[test]
    fn a_link_trace_starts_at_the_runs_time_zero() {
        // One opportunity 2 ms into every 2 ms; the run's time zero at 1 s.
        let mut c = cfg(vec![]);
        c.trace = Some(sim::config::TraceConfig::from_ms(&[2], 1514));
        let mut link = Link::new(&c, 1, false, 1);
        link.start(1_000_000_000);
        assert!(link.offer(1_000_500_000, 0, vec![0; 1500]));
        assert_eq!(link.next_event(), Some(1_002_000_000));
    }

    #[test]
    fn serialises_back_to_back_on_its_own_timeline() {
        let mut link = Link::new(&cfg(vec![]), 2, false, 1);
        link.start(0);
        // Four 1500-byte IP packets at t = 1000: one on the wire, three queued.
        for flow in [0, 1, 0, 1] {
            assert!(link.offer(1000, flow, vec![flow as u8; 1500]));
        }
        assert!(!link.offer(1000, 0, vec![9; 1500]), "the buffer holds three");
        assert_eq!(link.next_event(), Some(1000 + 121_120));
        // Waking up late completes each packet at its exact end time.
        let mut out = Vec::new();
        link.advance(122_119, &mut |flow, t, bytes| out.push((flow, t, bytes[0])));
        assert!(out.is_empty(), "nothing leaves before its transmission ends");
        link.advance(1_000_000, &mut |flow, t, bytes| out.push((flow, t, bytes[0])));
        let ends: Vec<u64> = out.iter().map(|o| o.1).collect();
        assert_eq!(ends, vec![122_120, 243_240, 364_360, 485_480]);
        assert_eq!(out.iter().map(|o| o.0).collect::<Vec<_>>(), vec![0, 1, 0, 1]);
        assert_eq!(link.next_event(), None);
        assert!(link.stats_json().contains("\"packets\": 4, \"drops\": 1"));
    }

    #[test]
    fn applies_rate_changes_relative_to_start() {
        let mut link = Link::new(&cfg(vec![RateChange { at_ns: 500, rate_bps: 50_000_000 }]), 1, false, 1);
        link.start(10_000);
        assert_eq!(link.next_event(), Some(10_500));
        link.advance(20_000, &mut |_, _, _| panic!("nothing was sent"));
        assert!(link.offer(20_000, 0, vec![0; 1500]));
        // At 50 Mbit/s a 1514-byte packet takes twice as long.
        assert_eq!(link.next_event(), Some(20_000 + 242_240));
    }

    #[test]
    fn fq_sends_each_packets_own_bytes_in_drr_order() {
        // Flow 0 fills the buffer (four packets), then flow 1 arrives: fq
        // pushes out flow 0's oldest waiting packet and serves the flows in
        // turn. Each packet that leaves carries its own bytes.
        let mut c = cfg(vec![]);
        c.aqm = Aqm::Fq;
        c.buffer_bytes = 4 * 1514;
        let mut link = Link::new(&c, 2, false, 1);
        link.start(0);
        for k in 0..5u8 {
            assert!(link.offer(0, 0, vec![k; 1500]));
        }
        assert!(link.offer(0, 1, vec![100; 1500]));
        assert!(link.offer(0, 1, vec![101; 1500]), "flow 0 is still the longest");
        let mut out = Vec::new();
        link.advance(u64::MAX / 2, &mut |flow, _, bytes| out.push((flow, bytes[0], bytes.len())));
        let order: Vec<(usize, u8)> = out.iter().map(|o| (o.0, o.1)).collect();
        // 0 went straight to the wire; 1 and 2 were pushed out.
        assert_eq!(order, vec![(0, 0), (0, 3), (1, 100), (0, 4), (1, 101)]);
        assert!(out.iter().all(|o| o.2 == 1500));
        assert!(link.stats_json().contains("\"drops\": 2, \"policed\": 0"), "{}", link.stats_json());
        assert!(link.stats_json().contains("\"flow_drops\": [2, 0]"), "{}", link.stats_json());
        // Every slot came back (six: five queued or on the wire, plus the
        // arrival that pushed one out), and the next packet reuses one.
        assert_eq!((link.payloads.free.len(), link.payloads.slots.len()), (6, 6));
        assert!(link.offer(u64::MAX / 2, 1, vec![7; 100]));
        assert_eq!(link.payloads.slots.len(), 6);
    }

    #[test]
    fn policer_drops_are_counted_apart() {
        let mut c = cfg(vec![]);
        c.buffer_bytes = 100 * 1514;
        let nz = |v| std::num::NonZeroU64::new(v).unwrap();
        c.policer = Some(sim::config::PolicerConfig { rate_bps: nz(10_000_000), burst_bytes: nz(2 * 1514) });
        let mut link = Link::new(&c, 1, false, 1);
        link.start(0);
        let passed = (0..5).filter(|_| link.offer(0, 0, vec![0; 1500])).count();
        assert_eq!(passed, 2, "the burst is two packets");
        assert!(link.stats_json().contains("\"drops\": 3, \"policed\": 3"), "{}", link.stats_json());
    }

    #[test]
    fn counts_the_not_ect_packets_it_drops() {
        // A three-packet buffer, full; then one ECT(0) and one Not-ECT
        // arrival are both tail-dropped, and only the second is Not-ECT.
        let mut link = Link::new(&cfg(vec![]), 1, false, 1);
        link.start(0);
        let ip = |tos: u8| {
            let mut p = vec![0u8; 1500];
            p[0] = 0x45;
            p[1] = tos;
            p
        };
        for _ in 0..4 {
            assert!(link.offer(0, 0, ip(0x02)));
        }
        assert!(!link.offer(0, 0, ip(0x02)));
        assert!(!link.offer(0, 0, ip(0x00)));
        assert!(link.stats_json().contains("\"drops\": 2,"), "{}", link.stats_json());
        assert!(link.stats_json().contains("\"drops_not_ect\": 1,"), "{}", link.stats_json());
    }
}
