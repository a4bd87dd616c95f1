//! A topology's links, and the ACKs that queue in them.
//!
//! ```text
//!  sender --> egress (rtt/2) --> link a --(delay a)--> link b --(delay b)--> receiver
//!     ^                                                                          |
//!     +-- ACK pipe (rtt/2) <--(delay r)-- link r <-- ACK egress (host turnaround) +
//! ```
//! A [`Link`] is one direction of a link: a queue discipline plus a
//! serialiser ([`Bottleneck`]), then its propagation delay (a [`Pipe`]). A
//! flow's data visits the links of its path in order; its ACKs visit those
//! of its reverse path, queueing behind whatever else crosses them (the
//! data of flows going the other way: reverse traffic). A flow with no
//! reverse path sends its ACKs over an unqueued path with the mirror of its
//! data path's delays, as the dumbbell does.
//!
//! Inside a link an ACK travels as a [`DataPacket`] envelope: the link's
//! queue disciplines see a packet of its wire size under its own flow key
//! (`n_flows + flow`, so fair queueing gives a flow's ACKs a queue of their
//! own and per-flow drop counts keep data and ACKs apart), whose `seq` is
//! the ACK's slot in the [`AckStore`]. The envelope is Not-ECT (Linux sends
//! pure ACKs without ECT, RFC 3168 6.1.4), so a marking queue drops it.

use crate::bottleneck::{Bottleneck, LinkCounters};
use crate::distribution::Distribution;
use crate::packet::{AckPacket, DataPacket, MAX_SACK_BLOCKS};
use crate::pipe::Pipe;

/// One direction of a link: queue and serialiser, then propagation.
pub struct Link {
    pub queue: Bottleneck,
    /// Generation of the queue's pending completion event (a rate change
    /// moves it and bumps this).
    pub gen: u32,
    /// Propagation delay after the serialiser, ns.
    pub delay_ns: u64,
    /// An aggregating link's release period, ns (0: none): see
    /// [`Link::release_ns`].
    pub aggregate_ns: u64,
    /// Packets past the serialiser, propagating (and, on an aggregating
    /// link, waiting for their release); unused when both are 0 (a packet
    /// then moves on in the event that serialised it, as the dumbbell's
    /// bottleneck always did).
    pub wire: Pipe<DataPacket>,
    /// The queue's counters at the start and end of the measurement window.
    pub at_from: LinkCounters,
    pub at_to: Option<LinkCounters>,
}

impl Link {
    pub fn new(queue: Bottleneck, delay_ns: u64, aggregate_ns: u64) -> Self {
        Self {
            queue,
            gen: 0,
            delay_ns,
            aggregate_ns,
            wire: Pipe::new(delay_ns),
            at_from: Default::default(),
            at_to: None,
        }
    }

    /// Whether a packet moves on in the event that serialised it.
    pub fn passes_at_once(&self) -> bool {
        self.delay_ns == 0 && self.aggregate_ns == 0
    }

    /// Puts a packet the queue finished serialising at `now_ns` on the
    /// wire: it leaves after the delay, on an aggregating link at the
    /// release after that ([`release_ns`]). Its exit time if the caller
    /// must schedule the wire's head.
    pub fn propagate(&mut self, now_ns: u64, pkt: DataPacket) -> Option<u64> {
        let period = self.aggregate_ns;
        self.wire.push_with(now_ns, pkt, |arrival| release_ns(arrival, period))
    }

    /// Packets of flow key `key` in the queue or on the wire.
    pub fn packets_of(&self, key: u32) -> u64 {
        self.queue.flow_packets(key) + self.wire.iter().filter(|p| p.flow == key).count() as u64
    }
}

/// When a packet that arrives at `arrival_ns` leaves a link that releases
/// every `period_ns` (0: at once): at the next multiple of the period, so
/// that every packet that arrived since the last release leaves with it,
/// in order (a burst).
pub fn release_ns(arrival_ns: u64, period_ns: u64) -> u64 {
    match period_ns {
        0 => arrival_ns,
        period => arrival_ns.div_ceil(period) * period,
    }
}

/// A flow's base RTT, ns: its hosts' RTT (`rtt_ns`) plus its path's link
/// delays both ways, the data path's again when it has no reverse path
/// (its ACKs then take an unqueued mirror of it: [`crate::flow_table`]'s
/// ACK pipe). `delay_ns` gives a link's one-way delay by index. The one
/// definition: the front end's (`ccarena.topology.base_rtt_ns`) is this,
/// through `_core.base_rtt_ns`.
pub fn base_rtt_ns(rtt_ns: u64, path: &[u32], reverse_path: &[u32], delay_ns: impl Fn(u32) -> u64) -> u64 {
    let delays = |links: &[u32]| links.iter().map(|&k| delay_ns(k)).sum::<u64>();
    let back = if reverse_path.is_empty() { path } else { reverse_path };
    rtt_ns + delays(path) + delays(back)
}

/// The next link after `here` on `path` (None: `here` is the last).
/// The last is tested first: it is every hop of a dumbbell's packets.
#[inline]
pub fn next_hop(path: &[u32], here: u32) -> Option<u32> {
    if path.last() == Some(&here) {
        return None;
    }
    let at = path.iter().position(|&l| l == here).expect("a packet is only on its own path's links");
    path.get(at + 1).copied()
}

/// How a flow's ACKs reach its sender, per telemetry interval: how many,
/// how many compressed, and the gaps between them. An ACK is compressed
/// when it arrives less than half a full packet's serialisation time at
/// the slowest link of the data path after the ACK before it: ACKs the
/// receiver sent one data packet apart that arrive closer than that
/// waited in a queue on the way back and left it back to back (ACK
/// compression: Zhang, Shenker and Clark, "Observations on the dynamics
/// of a congestion control algorithm: the effects of two-way traffic",
/// SIGCOMM 1991).
pub struct AckClock {
    /// Half a full packet's time at the data path's slowest link, ns.
    threshold_ns: u64,
    last_ns: Option<u64>,
    acks: u32,
    compressed: u32,
    /// Gaps between consecutive ACKs in the interval, ns.
    gaps: Distribution,
}

/// One telemetry interval of a flow's ACKs at its sender ([`AckClock::take`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AckInterval {
    pub acks: u32,
    pub compressed: u32,
    /// 10th percentile and median of the gaps between consecutive ACKs,
    /// µs (the first ACK's from the last one before the interval); NaN
    /// without a gap.
    pub gap_p10_us: f64,
    pub gap_p50_us: f64,
}

impl AckClock {
    pub fn new(packet_bytes: u32, slowest_bps: u64) -> Self {
        let threshold_ns = (packet_bytes as u128 * 8 * 1_000_000_000 / slowest_bps.max(1) as u128 / 2) as u64;
        Self { threshold_ns, last_ns: None, acks: 0, compressed: 0, gaps: Distribution::default() }
    }

    /// An ACK reached the sender at `now_ns`.
    pub fn on_ack(&mut self, now_ns: u64) {
        self.acks += 1;
        if let Some(t) = self.last_ns {
            let gap = now_ns - t;
            if gap < self.threshold_ns {
                self.compressed += 1;
            }
            self.gaps.record(gap);
        }
        self.last_ns = Some(now_ns);
    }

    /// The interval since the last call.
    pub fn take(&mut self) -> AckInterval {
        let mut gaps = std::mem::take(&mut self.gaps);
        let mut us = |p: f64| gaps.percentile(p).map_or(f64::NAN, |ns| ns as f64 / 1e3);
        let (gap_p10_us, gap_p50_us) = (us(10.0), us(50.0));
        let interval = AckInterval { acks: self.acks, compressed: self.compressed, gap_p10_us, gap_p50_us };
        (self.acks, self.compressed) = (0, 0);
        interval
    }
}

/// ACKs inside links, by slot: a slot is taken when an ACK enters its
/// first reverse link and given back when it leaves the last one or a
/// queue drops it, so the store holds at most the ACKs queued or
/// propagating at once (bounded by the buffers and the windows).
#[derive(Default)]
pub struct AckStore {
    slots: Vec<AckPacket>,
    free: Vec<u32>,
}

impl AckStore {
    /// Stores `ack`; its slot.
    pub fn put(&mut self, ack: AckPacket) -> u32 {
        match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = ack;
                slot
            }
            None => {
                self.slots.push(ack);
                (self.slots.len() - 1) as u32
            }
        }
    }

    /// The ACK in `slot`, which is free again.
    pub fn take(&mut self, slot: u32) -> AckPacket {
        self.free.push(slot);
        self.slots[slot as usize]
    }

    /// Slots in use.
    pub fn len(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Bytes an ACK occupies on a link's wire: the headers of a data segment
/// (`header_bytes`: Ethernet, IP, TCP with timestamps) and, with SACK
/// blocks, Linux's option (two NOPs, kind and length, 8 bytes per block).
pub fn ack_wire_bytes(ack: &AckPacket, header_bytes: u32) -> u32 {
    debug_assert!(ack.n_sacks as usize <= MAX_SACK_BLOCKS);
    header_bytes + if ack.n_sacks > 0 { 4 + 8 * ack.n_sacks as u32 } else { 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(cum_ack: u32, n_sacks: u8) -> AckPacket {
        AckPacket {
            flow: 0,
            cum_ack,
            sacks: [(0, 0); MAX_SACK_BLOCKS],
            n_sacks,
            delayed: false,
            ece: false,
            ce_packets: 0,
            tsecr: 0,
            tsval: 0,
        }
    }

    #[test]
    fn slots_are_reused_so_the_store_holds_only_acks_in_links() {
        let mut store = AckStore::default();
        let a = store.put(ack(1, 0));
        let b = store.put(ack(2, 0));
        assert_eq!(store.take(a).cum_ack, 1);
        let c = store.put(ack(3, 0));
        assert_eq!(c, a, "a freed slot is reused");
        assert_eq!((store.take(b).cum_ack, store.take(c).cum_ack), (2, 3));
        assert!(store.is_empty());
        assert_eq!(store.slots.len(), 2);
    }

    #[test]
    fn an_ack_is_its_headers_plus_the_sack_option() {
        assert_eq!(ack_wire_bytes(&ack(1, 0), 66), 66);
        assert_eq!(ack_wire_bytes(&ack(1, 3), 66), 66 + 4 + 24);
    }

    #[test]
    fn acks_closer_than_half_a_packet_at_the_slowest_link_are_compressed() {
        // 1514 B at 12.112 Mbit/s: 1 ms a packet, so the threshold is 0.5 ms.
        let mut clock = AckClock::new(1514, 12_112_000);
        for t_us in [0, 1_000, 2_000, 2_100, 2_200, 3_500] {
            clock.on_ack(t_us * 1_000);
        }
        let first = clock.take();
        assert_eq!((first.acks, first.compressed), (6, 2));
        // Gaps 1000, 1000, 100, 100, 1300 µs: nearest-rank p10 100, median 1000.
        assert_eq!((first.gap_p10_us, first.gap_p50_us), (100.0, 1_000.0));
        let empty = clock.take();
        assert_eq!((empty.acks, empty.compressed), (0, 0));
        assert!(empty.gap_p10_us.is_nan() && empty.gap_p50_us.is_nan());
        // The next interval's first gap is from the last ACK before it.
        clock.on_ack(3_600_000);
        assert_eq!(clock.take().gap_p50_us, 100.0);
    }

    #[test]
    fn an_aggregating_link_releases_at_multiples_of_its_period() {
        assert_eq!([0, 1, 40, 41, 79].map(|t| release_ns(t, 40)), [0, 40, 40, 80, 80]);
        assert_eq!(release_ns(41, 0), 41);
        let cfg = crate::config::BottleneckConfig::droptail(1_000_000, 100_000);
        let mut link = Link::new(Bottleneck::new(&cfg, 1, 1514), 5, 40);
        assert!(!link.passes_at_once());
        // Serialised at 36: arrives at 41 after the delay, leaves at 80.
        assert_eq!(link.propagate(36, DataPacket::default()), Some(80));
    }

    #[test]
    fn the_base_rtt_is_the_hosts_plus_the_links_both_ways() {
        let delays = [0, 5, 7, 11];
        let delay = |k: u32| delays[k as usize];
        // No reverse path: the data path's delays again.
        assert_eq!(base_rtt_ns(10, &[1, 2], &[], delay), 10 + 2 * (5 + 7));
        assert_eq!(base_rtt_ns(10, &[1, 2], &[3], delay), 10 + 5 + 7 + 11);
        assert_eq!(base_rtt_ns(10, &[0], &[], delay), 10);
    }

    #[test]
    fn the_next_hop_follows_the_path() {
        assert_eq!(next_hop(&[2, 0, 1], 2), Some(0));
        assert_eq!(next_hop(&[2, 0, 1], 1), None);
    }
}
