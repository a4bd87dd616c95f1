//! The userspace bottleneck (for what the kernel lacks here: RED, random
//! loss, rate schedules, per-flow queue occupancy, per-packet sojourn).
//!
//! The queue is the simulator's own (`sim::bottleneck::Bottleneck`: random
//! loss on entry, droptail or RED, a FIFO in wire bytes serialised at the
//! current rate); this module feeds it real packets and real time. The link
//! runs on its own exact timeline: a transmission that ends at `t` is
//! completed at `t` even if we wake up later, so wake-up jitter delays
//! packets slightly but never changes the rate.

use std::collections::VecDeque;

use sim::bottleneck::{Bottleneck, Offer};
use sim::config::BottleneckConfig;
use sim::packet::DataPacket;
use sim::rng::SimRng;

/// Ethernet header: the bottleneck counts wire bytes (IP length + 14), as
/// the simulator's 1514-byte full packets do.
pub const ETHERNET_HEADER: u32 = 14;
/// Wire size of a full-sized packet (RED's mean packet size).
const FULL_PACKET_WIRE: u32 = 1514;

pub struct Link {
    queue: Bottleneck,
    rng: SimRng,
    /// Bytes of the packets in the queue and on the wire, in order.
    packets: VecDeque<Vec<u8>>,
    /// End of the transmission in progress.
    busy_until: Option<u64>,
    /// (absolute ns, rate) changes still to apply, ascending.
    schedule: VecDeque<(u64, u64)>,
    pending_schedule: Vec<(u64, u64)>,
    n_flows: usize,
}

impl Link {
    pub fn new(cfg: &BottleneckConfig, n_flows: usize, seed: u64) -> Self {
        Link {
            queue: Bottleneck::new(cfg, n_flows, FULL_PACKET_WIRE),
            rng: SimRng::new(seed),
            packets: VecDeque::new(),
            busy_until: None,
            schedule: VecDeque::new(),
            pending_schedule: cfg.schedule.iter().map(|c| (c.at_ns, c.rate_bps)).collect(),
            n_flows,
        }
    }

    /// The run's time zero: rate changes are relative to it.
    pub fn start(&mut self, t0_ns: u64) {
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

    /// A data packet of `flow` arrives at `now_ns`; false if dropped.
    /// Call [`Link::advance`] up to `now_ns` first.
    pub fn offer(&mut self, now_ns: u64, flow: usize, bytes: Vec<u8>) -> bool {
        let pkt = DataPacket {
            flow: flow as u32,
            seq: 0,
            wire_bytes: bytes.len() as u32 + ETHERNET_HEADER,
            retrans: false,
            sent_ns: now_ns,
            enqueued_ns: now_ns,
        };
        match self.queue.offer(now_ns, pkt, &mut self.rng) {
            Offer::StartedTx(end) => {
                self.busy_until = Some(end);
                self.packets.push_back(bytes);
                true
            }
            Offer::Queued => {
                self.packets.push_back(bytes);
                true
            }
            Offer::Dropped(_) => false,
        }
    }

    /// Completes every transmission and rate change due by `now_ns`, in
    /// time order; `sent(flow, end_ns, bytes)` gets each packet that left.
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
                    self.busy_until = next;
                    let bytes = self.packets.pop_front().expect("a packet per transmission");
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

    pub fn set_recording(&mut self, on: bool) {
        self.queue.set_recording(on);
    }

    /// One JSON object of counters (what `tc -s qdisc` would give, plus
    /// per-flow backlog and sojourn sums).
    pub fn stats_json(&self) -> String {
        let s = &self.queue.stats;
        let flows: Vec<String> = (0..self.n_flows).map(|i| self.queue.flow_queue_bytes(i).to_string()).collect();
        format!(
            "{{\"bytes\": {}, \"packets\": {}, \"drops\": {}, \"backlog\": {}, \"rate_bps\": {}, \
             \"sojourn_sum_ns\": {}, \"sojourn_count\": {}, \"max_backlog\": {}, \"flow_backlog\": [{}]}}",
            s.tx_bytes,
            s.tx_packets,
            s.drops,
            self.queue.queue_bytes(),
            self.queue.rate_bps(),
            s.sojourn_sum_ns,
            s.sojourn_count,
            s.max_queue_bytes,
            flows.join(", ")
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

#[cfg(test)]
mod tests {
    use super::*;
    use sim::config::{Aqm, RateChange};

    fn cfg(schedule: Vec<RateChange>) -> BottleneckConfig {
        BottleneckConfig { rate_bps: 100_000_000, buffer_bytes: 3 * 1514, aqm: Aqm::Droptail, red: None, loss: 0.0, schedule }
    }

    #[test]
    fn serialises_back_to_back_on_its_own_timeline() {
        let mut link = Link::new(&cfg(vec![]), 2, 1);
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
        let mut link = Link::new(&cfg(vec![RateChange { at_ns: 500, rate_bps: 50_000_000 }]), 1, 1);
        link.start(10_000);
        assert_eq!(link.next_event(), Some(10_500));
        link.advance(20_000, &mut |_, _, _| panic!("nothing was sent"));
        assert!(link.offer(20_000, 0, vec![0; 1500]));
        // At 50 Mbit/s a 1514-byte packet takes twice as long.
        assert_eq!(link.next_event(), Some(20_000 + 242_240));
    }
}
