//! The bottleneck: random loss on entry, a queue discipline that admits or
//! drops, a FIFO measured in wire bytes, and a link that serialises one
//! packet at a time at the current rate (a queue that only serialises; the
//! propagation delay is in the pipes).

use std::collections::VecDeque;

use crate::config::{Aqm, BottleneckConfig};
use crate::packet::DataPacket;
use crate::qdisc::{droptail::DropTail, red::Red, Arrival, Qdisc, Verdict};
use crate::rng::SimRng;

/// Why a packet did not make it into the queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Drop {
    RandomLoss,
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

pub struct Bottleneck {
    rate_bps: u64,
    buffer_bytes: u64,
    loss: f64,
    qdisc: Box<dyn Qdisc>,
    /// Packets waiting, not counting the one on the wire.
    fifo: VecDeque<DataPacket>,
    queue_bytes: u64,
    /// Per-flow bytes waiting (the BBQ paper's Fig. 10).
    flow_queue_bytes: Vec<u64>,
    /// The packet being serialised, if any.
    on_wire: Option<DataPacket>,
    /// Sub-nanosecond remainder of serialisation times, in bit-ns units
    /// modulo the rate, so that long runs do not drift from the exact rate.
    tx_remainder: u64,
    recording: bool,
    sojourn_samples_ns: Vec<u64>,
    pub stats: LinkCounters,
}

/// Running totals (the telemetry layer differences them).
#[derive(Clone, Copy, Debug, Default)]
pub struct LinkCounters {
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub drops: u64,
    /// Sum and count of sojourn times of dequeued packets, ns.
    pub sojourn_sum_ns: u64,
    pub sojourn_count: u64,
    pub max_queue_bytes: u64,
}

impl Bottleneck {
    pub fn new(cfg: &BottleneckConfig, n_flows: usize, wire_bytes: u32) -> Self {
        let qdisc: Box<dyn Qdisc> = match cfg.aqm {
            Aqm::Droptail => Box::new(DropTail),
            Aqm::Red => Box::new(Red::new(
                cfg.red.clone().expect("validated: red config present"),
                cfg.rate_bps,
                wire_bytes,
            )),
        };
        Self {
            rate_bps: cfg.rate_bps,
            buffer_bytes: cfg.buffer_bytes,
            loss: cfg.loss,
            qdisc,
            fifo: VecDeque::with_capacity(4096),
            queue_bytes: 0,
            flow_queue_bytes: vec![0; n_flows],
            on_wire: None,
            tx_remainder: 0,
            recording: false,
            sojourn_samples_ns: Vec::new(),
            stats: LinkCounters::default(),
        }
    }

    pub fn rate_bps(&self) -> u64 {
        self.rate_bps
    }

    /// Takes effect from the next packet that starts serialising.
    pub fn set_rate(&mut self, rate_bps: u64) {
        self.rate_bps = rate_bps;
        self.tx_remainder = 0;
    }

    pub fn queue_bytes(&self) -> u64 {
        self.queue_bytes
    }

    pub fn flow_queue_bytes(&self, flow: usize) -> u64 {
        self.flow_queue_bytes[flow]
    }

    /// Packets of `flow` in the queue or on the wire.
    pub fn flow_packets(&self, flow: u32) -> u64 {
        self.fifo.iter().chain(self.on_wire.iter()).filter(|p| p.flow == flow).count() as u64
    }

    /// A packet arrives from a sender at `now_ns`.
    pub fn offer(&mut self, now_ns: u64, mut pkt: DataPacket, rng: &mut SimRng) -> Offer {
        if self.loss > 0.0 && rng.next_f64() < self.loss {
            self.stats.drops += 1;
            return Offer::Dropped(Drop::RandomLoss);
        }
        let arrival = Arrival {
            now_ns,
            wire_bytes: pkt.wire_bytes,
            queue_bytes: self.queue_bytes,
            buffer_bytes: self.buffer_bytes,
        };
        match self.qdisc.on_arrival(arrival, rng) {
            Verdict::Enqueue => {}
            Verdict::Overflow => {
                self.stats.drops += 1;
                return Offer::Dropped(Drop::Overflow);
            }
            Verdict::EarlyDrop => {
                self.stats.drops += 1;
                return Offer::Dropped(Drop::EarlyDrop);
            }
        }
        pkt.enqueued_ns = now_ns;
        if self.on_wire.is_none() {
            debug_assert!(self.fifo.is_empty());
            self.record_sojourn(0);
            return Offer::StartedTx(self.start_tx(now_ns, pkt));
        }
        self.queue_bytes += pkt.wire_bytes as u64;
        self.flow_queue_bytes[pkt.flow as usize] += pkt.wire_bytes as u64;
        self.stats.max_queue_bytes = self.stats.max_queue_bytes.max(self.queue_bytes);
        self.fifo.push_back(pkt);
        Offer::Queued
    }

    /// The packet on the wire has been fully transmitted at `now_ns`.
    /// Returns it, and the end time of the next transmission if one began.
    pub fn complete_tx(&mut self, now_ns: u64) -> (DataPacket, Option<u64>) {
        let done = self.on_wire.take().expect("a transmission was in progress");
        self.stats.tx_packets += 1;
        self.stats.tx_bytes += done.wire_bytes as u64;
        let next = match self.fifo.pop_front() {
            Some(pkt) => {
                self.queue_bytes -= pkt.wire_bytes as u64;
                self.flow_queue_bytes[pkt.flow as usize] -= pkt.wire_bytes as u64;
                self.record_sojourn(now_ns - pkt.enqueued_ns);
                Some(self.start_tx(now_ns, pkt))
            }
            None => {
                self.qdisc.on_idle(now_ns);
                None
            }
        };
        (done, next)
    }

    /// Keep every sojourn time from now on (inside the measurement window).
    pub fn set_recording(&mut self, on: bool) {
        self.recording = on;
    }

    /// Sojourn times (ns) of the packets that left the queue while recording.
    pub fn sojourn_samples_ns(&mut self) -> &mut Vec<u64> {
        &mut self.sojourn_samples_ns
    }

    fn record_sojourn(&mut self, ns: u64) {
        self.stats.sojourn_sum_ns += ns;
        self.stats.sojourn_count += 1;
        if self.recording {
            self.sojourn_samples_ns.push(ns);
        }
    }

    fn start_tx(&mut self, now_ns: u64, pkt: DataPacket) -> u64 {
        // duration = bits * 1e9 / rate, with the remainder carried over.
        let num = pkt.wire_bytes as u64 * 8 * 1_000_000_000 + self.tx_remainder;
        let rate = self.rate_bps.max(1);
        self.tx_remainder = num % rate;
        self.on_wire = Some(pkt);
        now_ns + num / rate
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Aqm;

    fn cfg(buffer_bytes: u64) -> BottleneckConfig {
        BottleneckConfig { rate_bps: 100_000_000, buffer_bytes, aqm: Aqm::Droptail, red: None, loss: 0.0, schedule: vec![] }
    }

    fn pkt(flow: u32, seq: u32) -> DataPacket {
        DataPacket { flow, seq, wire_bytes: 1514, retrans: false, sent_ns: 0, enqueued_ns: 0 }
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

    #[test]
    fn random_loss_drops_the_configured_fraction() {
        let mut rng = SimRng::new(5);
        let mut c = cfg(u64::MAX / 4);
        c.loss = 0.01;
        let mut b = Bottleneck::new(&c, 1, 1514);
        let n = 200_000;
        let drops = (0..n).filter(|&s| matches!(b.offer(0, pkt(0, s), &mut rng), Offer::Dropped(Drop::RandomLoss))).count();
        let rate = drops as f64 / n as f64;
        // Binomial sd at n = 2e5, p = 0.01 is 0.00022: 0.0095..0.0105 is > 2 sd.
        assert!((0.0095..0.0105).contains(&rate), "{rate}");
    }
}
