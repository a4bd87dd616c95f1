//! The userspace network: the scenario's links and the routes through
//! them, as the simulator composes them (sim::topology, sim::flow_table).
//!
//! ```text
//!  data:  TUN --> host delay (rtt/2) --> link p0 --(delay p0)--> link p1 --(delay p1)--> TUN
//!  ACKs:  TUN --(jitter)--> link r0 --(delay r0)--> ...          --> host delay (rtt/2) --> TUN
//!         or, without a reverse path: host delay (rtt/2 + the data path's delays + jitter)
//! ```
//! A link ([`Link`]) is a queue discipline plus a serialiser, then its
//! propagation delay (a FIFO "wire": every packet takes the same time, so
//! none overtakes another). A flow's data visits the links of its path in
//! order, its ACKs those of its reverse path, where they queue behind
//! whatever else crosses the link: the data of flows whose path it is
//! (reverse traffic). The host delays stay in [`crate::queue::DelayQueues`]:
//! data enters its first link when its delay is over (as the simulator's
//! egress, sim::event_loop: the bottleneck at the receivers' end of the
//! path), and an ACK's route ends in its delay ([`Network::advance`] hands
//! the packet over).
//!
//! In a link, a flow's data has queue key `flow` and its ACKs `n_flows +
//! flow` (the simulator's keys: fair queueing gives a flow's ACKs a queue
//! of their own, drops are counted apart). The dumbbell is the one-link
//! case: data through link 0, ACKs through no link.
//!
//! The network runs on its own exact timeline, as one link does: every
//! transmission, rate change and arrival at the next link happens at its
//! own instant, in time order, however late we wake up.

use std::collections::VecDeque;

use sim::config::BottleneckConfig;
use sim::jitter::Jitter;
use sim::topology::AckClock;

use crate::link::{Link, FULL_PACKET_WIRE};

/// Route keys are the delay queues' keys: `2 * flow` for the flow's data,
/// `2 * flow + 1` for its ACKs (crate::queue::DelayQueues::classify).
pub fn data_key(flow: usize) -> usize {
    2 * flow
}

pub fn ack_key(flow: usize) -> usize {
    2 * flow + 1
}

/// True for an ACK's route key ([`ack_key`]), false for data's.
pub fn is_ack(key: usize) -> bool {
    key % 2 == 1
}

/// A packet between two stages of its route.
struct Transit {
    /// When it reaches the stage `next`, ns.
    due_ns: u64,
    /// Its route key.
    key: usize,
    /// Index in its route of the link it enters next (the route's length:
    /// it leaves the network).
    next: usize,
    bytes: Vec<u8>,
}

/// A FIFO of packets in transit whose due times never decrease.
#[derive(Default)]
struct Wire(VecDeque<Transit>);

impl Wire {
    /// Appends a packet due at `due_ns`, or when the one ahead is, if later.
    fn push(&mut self, mut transit: Transit) {
        transit.due_ns = transit.due_ns.max(self.0.back().map_or(0, |t| t.due_ns));
        self.0.push_back(transit);
    }

    fn due(&self) -> Option<u64> {
        self.0.front().map(|t| t.due_ns)
    }
}

struct Hop {
    link: Link,
    delay_ns: u64,
    /// Packets past its serialiser, propagating.
    wire: Wire,
}

/// A flow's routes: the link indices its data and its ACKs cross, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FlowRoute {
    pub path: Vec<usize>,
    pub reverse: Vec<usize>,
}

/// What [`Network::next_event`] found first.
enum Next {
    Link(usize),
    Wire(usize),
    Ingress(usize),
}

pub struct Network {
    hops: Vec<Hop>,
    /// Per route key, the links it crosses.
    routes: Vec<Vec<usize>>,
    n_flows: usize,
    /// ACKs on their way to their first reverse link, held by the host's
    /// jitter as in the simulator (flow_table.rs: the jitter goes where the
    /// ACK leaves the receiver): (flow, its jitter, its FIFO), only for
    /// flows with a reverse path and jitter.
    ingress: Vec<(usize, Jitter, Wire)>,
    /// With reverse paths, per flow: how its ACKs reach the sender
    /// (compressed or not, and their gaps since the last sample), and the
    /// counts so far (acks, compressed).
    ack_clocks: Vec<AckClock>,
    ack_counts: Vec<(u64, u64)>,
}

impl Network {
    /// `links`: every link's configuration (its `delay_ns` included);
    /// `routes`: per flow; `jitter_ns`: per flow, the ACKs' jitter (used
    /// here only for flows with a reverse path); `seed`: the run's (link 0
    /// draws from it as the dumbbell's bottleneck does, link k from
    /// `seed + k`).
    pub fn new(links: &[BottleneckConfig], routes: &[FlowRoute], jitter_ns: &[u64], seed: u64) -> Self {
        let n_flows = routes.len();
        let reverse = routes.iter().any(|r| !r.reverse.is_empty());
        let hops = links
            .iter()
            .enumerate()
            .map(|(k, cfg)| Hop {
                link: Link::new(cfg, n_flows, reverse, seed.wrapping_add(k as u64)),
                delay_ns: cfg.delay_ns,
                wire: Wire::default(),
            })
            .collect();
        let ingress = routes
            .iter()
            .enumerate()
            .filter(|&(i, r)| !r.reverse.is_empty() && jitter_ns[i] > 0)
            .map(|(i, _)| (i, Jitter::for_flow(jitter_ns[i], seed, i), Wire::default()))
            .collect();
        let ack_clocks = match reverse {
            true => routes
                .iter()
                .map(|r| AckClock::new(FULL_PACKET_WIRE, r.path.iter().map(|&k| links[k].rate_bps).min().unwrap_or(1)))
                .collect(),
            false => Vec::new(),
        };
        Network {
            hops,
            routes: routes.iter().flat_map(|r| [r.path.clone(), r.reverse.clone()]).collect(),
            n_flows,
            ingress,
            ack_counts: vec![(0, 0); ack_clocks.len()],
            ack_clocks,
        }
    }

    /// The dumbbell: `n_flows` flows' data through one link, ACKs through
    /// none (what main.rs builds from one `--bottleneck` and no routes).
    #[cfg(test)]
    pub fn dumbbell(cfg: &BottleneckConfig, n_flows: usize, seed: u64) -> Self {
        let routes = vec![FlowRoute { path: vec![0], reverse: vec![] }; n_flows];
        Self::new(std::slice::from_ref(cfg), &routes, &vec![0; n_flows], seed)
    }

    /// What the host delay of flow `flow`'s ACKs adds for the links: the
    /// mirror of its data path's delays when its ACKs cross no link (the
    /// simulator's unqueued return path), else nothing.
    pub fn ack_extra_ns(&self, flow: usize) -> u64 {
        match self.routes[ack_key(flow)].is_empty() {
            true => self.routes[data_key(flow)].iter().map(|&k| self.hops[k].delay_ns).sum(),
            false => 0,
        }
    }

    /// Whether this flow's ACK jitter is drawn here (see `ingress`).
    pub fn draws_ack_jitter(&self, flow: usize) -> bool {
        self.ingress.iter().any(|(f, _, _)| *f == flow)
    }

    pub fn start(&mut self, t0_ns: u64) {
        for hop in &mut self.hops {
            hop.link.start(t0_ns);
        }
    }

    pub fn set_recording(&mut self, on: bool) {
        for hop in &mut self.hops {
            hop.link.set_recording(on);
        }
    }

    /// A packet of route key `key` arrived at `now_ns` (call
    /// [`Network::advance`] up to `now_ns` first): data after its host
    /// delay, an ACK from the receiver. Returns it if its route crosses no
    /// link (it is then done with, or goes straight to, its host delay).
    pub fn enter(&mut self, now_ns: u64, key: usize, bytes: Vec<u8>) -> Option<Vec<u8>> {
        let flow = key / 2;
        if key == ack_key(flow) {
            // ECE is counted at the flow's first link (the dumbbell's bottleneck).
            let first = self.routes[data_key(flow)][0];
            self.hops[first].link.note_ack(flow, &bytes);
        }
        if self.routes[key].is_empty() {
            return Some(bytes);
        }
        let transit = Transit { due_ns: now_ns, key, next: 0, bytes };
        match self.ingress.iter_mut().find(|(f, _, _)| *f == flow && key == ack_key(flow)) {
            Some((_, jitter, wire)) => {
                let due_ns = now_ns + jitter.draw();
                wire.push(Transit { due_ns, ..transit });
            }
            None => self.arrive(transit, &mut |_, _, _| unreachable!("the route has a link")),
        }
        None
    }

    /// The next instant the network needs attention.
    pub fn next_event(&self) -> Option<u64> {
        self.next().map(|(t, _)| t)
    }

    fn next(&self) -> Option<(u64, Next)> {
        let links = self.hops.iter().enumerate().filter_map(|(k, h)| h.link.next_event().map(|t| (t, Next::Link(k))));
        let wires = self.hops.iter().enumerate().filter_map(|(k, h)| h.wire.due().map(|t| (t, Next::Wire(k))));
        let ingress = self.ingress.iter().enumerate().filter_map(|(j, (_, _, w))| w.due().map(|t| (t, Next::Ingress(j))));
        // At equal times a link's own event first: a packet then never
        // enters a link that still has to complete an earlier transmission.
        links.chain(wires).chain(ingress).min_by_key(|(t, _)| *t)
    }

    /// Runs every event due by `now_ns` in time order; `leave(key, t,
    /// bytes)` gets each packet that left its route's last link at `t`
    /// (after that link's delay).
    pub fn advance(&mut self, now_ns: u64, leave: &mut dyn FnMut(usize, u64, Vec<u8>)) {
        while let Some((t, next)) = self.next().filter(|&(t, _)| t <= now_ns) {
            match next {
                Next::Link(k) => {
                    let n_flows = self.n_flows;
                    let Hop { link, delay_ns, wire } = &mut self.hops[k];
                    let routes = &self.routes;
                    link.advance(t, &mut |queue_key, end, bytes| {
                        let key = match queue_key < n_flows {
                            true => data_key(queue_key),
                            false => ack_key(queue_key - n_flows),
                        };
                        let at = routes[key].iter().position(|&l| l == k).expect("a packet is only on its own route's links");
                        wire.push(Transit { due_ns: end + *delay_ns, key, next: at + 1, bytes });
                    });
                }
                Next::Wire(k) => {
                    let transit = self.hops[k].wire.0.pop_front().expect("a wire with a due packet");
                    self.arrive(transit, leave);
                }
                Next::Ingress(j) => {
                    let transit = self.ingress[j].2 .0.pop_front().expect("an ingress with a due packet");
                    self.arrive(transit, leave);
                }
            }
        }
    }

    /// A packet reaches the next stage of its route at its due time.
    fn arrive(&mut self, transit: Transit, leave: &mut dyn FnMut(usize, u64, Vec<u8>)) {
        let Transit { due_ns, key, next, bytes } = transit;
        let Some(&k) = self.routes[key].get(next) else {
            return leave(key, due_ns, bytes);
        };
        let flow = key / 2;
        let queue_key = if key == data_key(flow) { flow } else { self.n_flows + flow };
        // Nothing of this link is due before `due_ns` (events run in time
        // order); its events at `due_ns` ran first (`next`).
        self.hops[k].link.offer(due_ns, queue_key, bytes);
    }

    /// An ACK of `flow` reached its sender at `t_ns` (left its host delay).
    pub fn ack_delivered(&mut self, flow: usize, t_ns: u64) {
        if let Some(clock) = self.ack_clocks.get_mut(flow) {
            clock.on_ack(t_ns);
        }
    }

    /// Link 0 (the dumbbell's bottleneck).
    pub fn first_link(&mut self) -> &mut Link {
        &mut self.hops[0].link
    }

    /// One sample, a JSON object: every link's counters (`links`) and,
    /// with reverse paths, each flow's ACKs that reached the sender and the
    /// compressed ones so far (`acks`, `acks_compressed`), and the 10th
    /// percentile and median of their gaps since the last sample, µs, null
    /// without a gap (`ack_gap_p10_us`, `ack_gap_p50_us`; the simulator's
    /// columns, from the same `AckClock`). Empty lists without reverse
    /// paths. Each call starts the next sample's gaps.
    pub fn stats_json(&mut self) -> String {
        let links: Vec<String> = self.hops.iter().map(|h| h.link.stats_json()).collect();
        let (mut p10, mut p50) = (Vec::new(), Vec::new());
        for (clock, counts) in self.ack_clocks.iter_mut().zip(self.ack_counts.iter_mut()) {
            let sample = clock.take();
            counts.0 += u64::from(sample.acks);
            counts.1 += u64::from(sample.compressed);
            let us = |v: f64| if v.is_finite() { format!("{v:.3}") } else { "null".to_string() };
            p10.push(us(sample.gap_p10_us));
            p50.push(us(sample.gap_p50_us));
        }
        let counts = |f: fn(&(u64, u64)) -> u64| self.ack_counts.iter().map(|c| f(c).to_string()).collect::<Vec<_>>().join(", ");
        format!(
            "{{\"links\": [{}], \"acks\": [{}], \"acks_compressed\": [{}], \"ack_gap_p10_us\": [{}], \"ack_gap_p50_us\": [{}]}}",
            links.join(", "),
            counts(|c| c.0),
            counts(|c| c.1),
            p10.join(", "),
            p50.join(", ")
        )
    }

    /// Every link's counters and its sojourn percentiles, a JSON list.
    pub fn final_links_json(&mut self) -> String {
        let links: Vec<String> = self
            .hops
            .iter_mut()
            .map(|h| {
                let stats = h.link.stats_json();
                format!("{}, {}}}", &stats[..stats.len() - 1], h.link.sojourn_json())
            })
            .collect();
        format!("[{}]", links.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1514-byte wire packets (1500 IP bytes) take 121.12 us at 100 Mbit/s.
    const TX_NS: u64 = 121_120;

    fn link(delay_ns: u64) -> BottleneckConfig {
        BottleneckConfig { delay_ns, ..BottleneckConfig::droptail(100_000_000, 100 * 1514) }
    }

    fn route(path: &[usize], reverse: &[usize]) -> FlowRoute {
        FlowRoute { path: path.to_vec(), reverse: reverse.to_vec() }
    }

    fn packet(tag: u8, len: usize) -> Vec<u8> {
        vec![tag; len]
    }

    /// Runs the network to `until`, returning what left: (key, time, tag).
    fn run(net: &mut Network, until: u64) -> Vec<(usize, u64, u8)> {
        let mut out = Vec::new();
        net.advance(until, &mut |key, t, bytes| out.push((key, t, bytes[0])));
        out
    }

    #[test]
    fn data_crosses_its_path_in_order_with_each_links_delay() {
        // A parking lot's long flow (0) over links 0, 1, 2 of 5 ms each, and
        // a cross flow (1) on link 1 alone.
        let links = [link(5_000_000), link(5_000_000), link(5_000_000)];
        let mut net = Network::new(&links, &[route(&[0, 1, 2], &[]), route(&[1], &[])], &[0, 0], 1);
        assert!(net.enter(0, data_key(0), packet(1, 1500)).is_none());
        assert_eq!(net.next_event(), Some(TX_NS));
        // Three serialisations and three delays.
        let out = run(&mut net, u64::MAX / 2);
        assert_eq!(out, vec![(data_key(0), 3 * TX_NS + 15_000_000, 1)]);
        assert_eq!(net.next_event(), None);
        // Without a reverse path its ACKs cross no link; their host delay
        // gains the data path's delays (the mirror), the cross flow's 5 ms.
        assert_eq!(net.enter(0, ack_key(0), packet(2, 52)), Some(packet(2, 52)));
        assert_eq!((net.ack_extra_ns(0), net.ack_extra_ns(1)), (15_000_000, 5_000_000));
    }

    #[test]
    fn a_packet_waits_at_the_second_link_behind_the_cross_flow() {
        // The cross flow's packet reaches link 1 at t = 0; the long flow's
        // arrives there at TX_NS (after link 0, no delay) while it is being
        // sent, and waits for the rest of it.
        let links = [link(0), link(0)];
        let mut net = Network::new(&links, &[route(&[0, 1], &[]), route(&[1], &[])], &[0, 0], 1);
        net.enter(0, data_key(0), packet(1, 1500));
        net.enter(TX_NS / 2, data_key(1), packet(2, 1500));
        let out = run(&mut net, u64::MAX / 2);
        assert_eq!(out, vec![(data_key(1), TX_NS / 2 + TX_NS, 2), (data_key(0), TX_NS / 2 + 2 * TX_NS, 1)]);
    }

    #[test]
    fn acks_queue_behind_the_reverse_flows_data() {
        // Flow 0 sends up link 0, its ACKs come down link 1; flow 1 sends
        // down link 1. An ACK (66 wire bytes) arriving behind two of flow
        // 1's data packets leaves after them, and its queue key is counted
        // apart from the data's.
        let links = [link(0), link(2_000_000)];
        let mut net = Network::new(&links, &[route(&[0], &[1]), route(&[1], &[0])], &[0, 0], 1);
        net.enter(0, data_key(1), packet(1, 1500));
        net.enter(0, data_key(1), packet(2, 1500));
        net.advance(10, &mut |_, _, _| panic!("nothing is due"));
        assert!(net.enter(10, ack_key(0), packet(3, 52)).is_none());
        let ack_tx = 66 * 8 * 1_000_000_000 / 100_000_000;
        let out = run(&mut net, u64::MAX / 2);
        let delay = 2_000_000;
        assert_eq!(
            out,
            vec![
                (data_key(1), TX_NS + delay, 1),
                (data_key(1), 2 * TX_NS + delay, 2),
                (ack_key(0), 2 * TX_NS + ack_tx + delay, 3)
            ]
        );
        assert_eq!(net.ack_extra_ns(0), 0, "the reverse path's delay is the link's own");
        let stats: serde_json::Value = serde_json::from_str(&net.stats_json()).unwrap();
        assert_eq!(stats["links"][1]["packets"], 3);
        assert_eq!(stats["links"][1]["flow_ack_drops"], serde_json::json!([0, 0]));
    }

    #[test]
    fn acks_reaching_the_sender_back_to_back_are_compressed() {
        let links = [link(0), link(0)];
        let mut net = Network::new(&links, &[route(&[0], &[1]), route(&[1], &[0])], &[0, 0], 1);
        // Half a full packet at 100 Mbit/s is 60.56 us.
        for t in [0, 121_000, 130_000, 140_000] {
            net.ack_delivered(0, t);
        }
        let stats: serde_json::Value = serde_json::from_str(&net.stats_json()).unwrap();
        assert_eq!(stats["acks"], serde_json::json!([4, 0]));
        assert_eq!(stats["acks_compressed"], serde_json::json!([2, 0]));
        // Gaps 121, 9 and 10 us: nearest rank.
        assert_eq!(stats["ack_gap_p10_us"], serde_json::json!([9.0, null]));
        assert_eq!(stats["ack_gap_p50_us"], serde_json::json!([10.0, null]));
        // The next sample's gaps start from the last ACK; the counts go on.
        net.ack_delivered(0, 150_000);
        let stats: serde_json::Value = serde_json::from_str(&net.stats_json()).unwrap();
        assert_eq!(stats["acks"], serde_json::json!([5, 0]));
        assert_eq!(stats["ack_gap_p50_us"], serde_json::json!([10.0, null]));
    }

    #[test]
    fn a_reverse_paths_acks_take_their_jitter_before_the_first_link_in_order() {
        // ACKs 10 us apart with up to 50 us of jitter each: each reaches
        // the link at max(arrival + its draw, the one ahead), drawn as the
        // simulator draws flow 0's jitter, and leaves after its 66 wire bytes.
        let links = [link(0), link(0)];
        let jitter = 50_000;
        let mut net = Network::new(&links, &[route(&[0], &[1]), route(&[1], &[])], &[jitter, 0], 3);
        assert!(net.draws_ack_jitter(0) && !net.draws_ack_jitter(1));
        let mut expect = Jitter::for_flow(jitter, 3, 0);
        let ack_tx = 66 * 8 * 1_000_000_000 / 100_000_000;
        let (mut out, mut want, mut reach, mut free) = (Vec::new(), Vec::new(), 0, 0);
        for k in 0..50u64 {
            let t = k * 10_000;
            net.advance(t, &mut |key, at, bytes| out.push((key, at, bytes[0])));
            net.enter(t, ack_key(0), packet(k as u8, 52));
            reach = (t + expect.draw()).max(reach);
            free = reach.max(free) + ack_tx;
            want.push((ack_key(0), free, k as u8));
        }
        out.extend(run(&mut net, u64::MAX / 2));
        assert_eq!(out, want);
    }

    #[test]
    fn the_dumbbell_is_one_link_for_data_and_none_for_acks() {
        let mut net = Network::dumbbell(&link(0), 2, 1);
        net.enter(0, data_key(0), packet(1, 1500));
        net.enter(0, data_key(1), packet(2, 1500));
        assert_eq!(net.enter(0, ack_key(0), packet(3, 52)), Some(packet(3, 52)));
        assert_eq!(run(&mut net, u64::MAX / 2), vec![(data_key(0), TX_NS, 1), (data_key(1), 2 * TX_NS, 2)]);
        assert_eq!((net.ack_extra_ns(0), net.draws_ack_jitter(0)), (0, false));
        let stats: serde_json::Value = serde_json::from_str(&net.stats_json()).unwrap();
        assert!(stats["links"][0].get("flow_ack_drops").is_none());
        assert_eq!(stats["acks"], serde_json::json!([]));
    }

    #[test]
    fn a_link_that_drops_ends_the_packets_route() {
        let tiny = BottleneckConfig::droptail(100_000_000, 1514);
        let links = [tiny, link(0)];
        let mut net = Network::new(&links, &[route(&[0, 1], &[])], &[0], 1);
        for tag in 0..3 {
            net.enter(0, data_key(0), packet(tag, 1500));
        }
        // One on the wire, one queued, one dropped.
        let out = run(&mut net, u64::MAX / 2);
        assert_eq!(out.iter().map(|o| o.2).collect::<Vec<_>>(), vec![0, 1]);
        let stats: serde_json::Value = serde_json::from_str(&net.stats_json()).unwrap();
        assert_eq!(stats["links"][0]["drops"], 1);
    }
}
