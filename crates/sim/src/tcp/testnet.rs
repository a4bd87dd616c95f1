//! A tiny scripted network for the sender's tests: one sender, a FIFO
//! bottleneck (optional rate, optional buffer), fixed one-way delays, a
//! receiver that ACKs every segment at once with SACK blocks (a DSACK
//! first for a duplicate) and echoes timestamps as crate::receiver does,
//! scripted drops, scripted extra delay and an ACK blackhole. Everything
//! is deterministic.

use super::{SenderConfig, TcpSender};
use crate::packet::{AckPacket, DataPacket, MAX_SACK_BLOCKS};
use std::collections::VecDeque;

pub const MSS: u32 = 1448;
pub const WIRE: u32 = 1514;

/// Receiver: cumulative ACK + SACK (+ DSACK), one ACK per segment.
#[derive(Default)]
pub struct MiniReceiver {
    pub rcv_nxt: u32,
    /// Out-of-order ranges `[s, e)`, sorted.
    ooo: Vec<(u32, u32)>,
    /// The TSval echoed (RFC 7323: of the segment at the last ACK's rcv_nxt).
    ts_recent: u32,
}

impl MiniReceiver {
    pub fn receive(&mut self, flow: u32, pkt: &DataPacket) -> AckPacket {
        let seq = pkt.seq;
        // Every segment is ACKed at once: rcv_wup == rcv_nxt on arrival.
        if (seq == self.rcv_nxt || seq + 1 == self.rcv_nxt) && pkt.tsval >= self.ts_recent {
            self.ts_recent = pkt.tsval;
        }
        let dup = seq < self.rcv_nxt || self.ooo.iter().any(|r| r.0 <= seq && seq < r.1);
        if seq == self.rcv_nxt {
            self.rcv_nxt += 1;
            while let Some(&(s, e)) = self.ooo.first() {
                if s <= self.rcv_nxt {
                    self.rcv_nxt = self.rcv_nxt.max(e);
                    self.ooo.remove(0);
                } else {
                    break;
                }
            }
        } else if seq > self.rcv_nxt {
            self.ooo.push((seq, seq + 1));
            self.ooo.sort_unstable();
            let mut merged: Vec<(u32, u32)> = Vec::new();
            for &(s, e) in &self.ooo {
                match merged.last_mut() {
                    Some(last) if s <= last.1 => last.1 = last.1.max(e),
                    _ => merged.push((s, e)),
                }
            }
            self.ooo = merged;
        }
        let mut ack = AckPacket {
            flow,
            cum_ack: self.rcv_nxt,
            sacks: [(0, 0); MAX_SACK_BLOCKS],
            n_sacks: 0,
            delayed: false,
            ece: false,
            ce_packets: 0,
            tsecr: self.ts_recent,
            tsval: 0,
        };
        // A DSACK first, then the block holding the segment just received,
        // then the highest others (RFC 2018 asks for the most recent first).
        let mut order: Vec<(u32, u32)> = Vec::new();
        if dup {
            order.push((seq, seq + 1));
        }
        if let Some(&b) = self.ooo.iter().find(|r| r.0 <= seq && seq < r.1) {
            order.push(b);
        }
        for &b in self.ooo.iter().rev() {
            if !order[dup as usize..].contains(&b) {
                order.push(b);
            }
        }
        for (i, b) in order.into_iter().take(MAX_SACK_BLOCKS).enumerate() {
            ack.sacks[i] = b;
            ack.n_sacks = i as u8 + 1;
        }
        ack
    }
}

/// One transmission seen on the wire.
#[derive(Clone, Copy, Debug)]
pub struct Sent {
    pub t_ns: u64,
    pub pkt: DataPacket,
    pub dropped: bool,
}

/// Hook run after every event.
pub type EventHook = Box<dyn FnMut(u64, &TcpSender)>;

pub struct TestNet {
    pub sender: TcpSender,
    pub rx: MiniReceiver,
    /// Bottleneck rate, bit/s (None: infinitely fast).
    pub rate_bps: Option<u64>,
    /// Bottleneck buffer, packets (None: unlimited).
    pub buffer_pkts: Option<usize>,
    pub fwd_ns: u64,
    pub rev_ns: u64,
    /// Drop this transmission? (segment, is a retransmission)
    pub drop: Box<dyn FnMut(u32, bool) -> bool>,
    /// ACKs arriving at or after this time are lost.
    pub ack_blackhole_from: Option<u64>,
    /// Extra one-way delay (ns) of a transmission, on top of `fwd_ns`:
    /// (time sent, segment, is a retransmission).
    pub extra_delay: Box<dyn FnMut(u64, u32, bool) -> u64>,
    /// Later packets may overtake a delayed one (else the path is FIFO).
    pub reorder: bool,
    /// Lose this ACK?
    pub drop_ack: Box<dyn FnMut(&AckPacket) -> bool>,
    /// The receiver sends no timestamps (TSecr 0).
    pub no_timestamps: bool,
    pub now: u64,
    link_free_at: u64,
    /// Departure times of packets still in the bottleneck queue.
    queue: VecDeque<u64>,
    data: VecDeque<(u64, DataPacket)>,
    acks: VecDeque<(u64, AckPacket)>,
    pub sent: Vec<Sent>,
    pub acks_delivered: u64,
    /// Called after every event with the sender.
    pub on_event: Option<EventHook>,
    out: Vec<DataPacket>,
}

impl TestNet {
    /// A flow running `cc` over a path of base RTT `rtt_ns`.
    pub fn new(cc: &str, rtt_ns: u64, rate_bps: Option<u64>) -> Self {
        Self::with_tick(cc, rtt_ns, rate_bps, crate::host::Tick::default())
    }

    /// The same, on a sender host whose jiffies are `tick`.
    pub fn with_tick(cc: &str, rtt_ns: u64, rate_bps: Option<u64>, tick: crate::host::Tick) -> Self {
        let ops = cc_native::lookup(cc).unwrap_or_else(|| panic!("cc {cc} not registered"));
        let cfg = SenderConfig {
            flow: 0,
            mss: MSS,
            wire_bytes: WIRE,
            stop_ns: None,
            size_segments: None,
            rng_seed: 42,
            params: Vec::new(),
            ecn: crate::config::EcnMode::Off,
            app: None,
            tick,
        };
        Self {
            sender: TcpSender::new(cfg, ops),
            rx: MiniReceiver::default(),
            rate_bps,
            buffer_pkts: None,
            fwd_ns: rtt_ns / 2,
            rev_ns: rtt_ns - rtt_ns / 2,
            drop: Box::new(|_, _| false),
            ack_blackhole_from: None,
            extra_delay: Box::new(|_, _, _| 0),
            reorder: false,
            drop_ack: Box::new(|_| false),
            no_timestamps: false,
            now: 0,
            link_free_at: 0,
            queue: VecDeque::new(),
            data: VecDeque::new(),
            acks: VecDeque::new(),
            sent: Vec::new(),
            acks_delivered: 0,
            on_event: None,
            out: Vec::new(),
        }
    }

    pub fn with_stop(mut self, stop_ns: u64) -> Self {
        self.sender.stop_ns = Some(stop_ns);
        self
    }

    /// Starts the flow at `t` and runs until `until_ns`.
    pub fn start(&mut self, t: u64) {
        self.now = t;
        self.sender.start(t);
        self.poll();
    }

    fn poll(&mut self) {
        let mut out = std::mem::take(&mut self.out);
        out.clear();
        self.sender.poll(self.now, &mut out);
        for p in &out {
            self.offer(*p);
        }
        self.out = out;
    }

    fn offer(&mut self, p: DataPacket) {
        let now = self.now;
        while self.queue.front().is_some_and(|&d| d <= now) {
            self.queue.pop_front();
        }
        let dropped = (self.drop)(p.seq, p.retrans)
            || self.buffer_pkts.is_some_and(|b| self.queue.len() >= b);
        self.sent.push(Sent { t_ns: now, pkt: p, dropped });
        if dropped {
            return;
        }
        let depart = match self.rate_bps {
            Some(r) => {
                let start = self.link_free_at.max(now);
                let d = start + p.wire_bytes as u64 * 8 * 1_000_000_000 / r;
                self.link_free_at = d;
                d
            }
            None => now,
        };
        self.queue.push_back(depart);
        let extra = (self.extra_delay)(now, p.seq, p.retrans);
        let mut at = depart + self.fwd_ns + extra;
        if !self.reorder {
            at = at.max(self.data.back().map_or(0, |d| d.0));
        }
        let pos = self.data.partition_point(|d| d.0 <= at);
        self.data.insert(pos, (at, p));
    }

    pub fn run_until(&mut self, end_ns: u64) {
        loop {
            let t_data = self.data.front().map(|d| d.0);
            let t_ack = self.acks.front().map(|a| a.0);
            let t_wake = self.sender.next_wakeup_ns();
            let next = [t_ack, t_data, t_wake].into_iter().flatten().min();
            let Some(next) = next else { break };
            if next > end_ns {
                break;
            }
            assert!(next >= self.now, "time went backwards: {next} < {}", self.now);
            self.now = next;
            if t_ack == Some(next) {
                let (_, ack) = self.acks.pop_front().unwrap();
                if self.ack_blackhole_from.is_some_and(|b| next >= b) {
                    continue;
                }
                self.acks_delivered += 1;
                self.sender.on_ack(next, &ack);
                self.poll();
            } else if t_data == Some(next) {
                let (_, p) = self.data.pop_front().unwrap();
                let mut ack = self.rx.receive(p.flow, &p);
                if self.no_timestamps {
                    ack.tsecr = 0;
                }
                if !(self.drop_ack)(&ack) {
                    self.acks.push_back((next + self.rev_ns, ack));
                }
            } else {
                self.poll();
            }
            if let Some(f) = self.on_event.as_mut() {
                f(self.now, &self.sender);
            }
        }
        self.now = self.now.max(end_ns);
    }

    /// Times at which segment `seq` was transmitted.
    pub fn transmissions_of(&self, seq: u32) -> Vec<u64> {
        self.sent.iter().filter(|s| s.pkt.seq == seq).map(|s| s.t_ns).collect()
    }
}
