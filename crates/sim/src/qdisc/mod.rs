//! Queue disciplines of the bottleneck and what sits in front of it.
//!
//! - [`Qdisc`] ([`droptail`], [`red`], [`pie`], [`step_mark`]) decides
//!   whether an arriving packet may join the single FIFO, may mark it CE
//!   instead of dropping it, and may mark it as it leaves; the FIFO itself
//!   and its serialisation at link rate live in [`crate::bottleneck`].
//! - [`codel`] decides as packets leave (dropping or marking at the head),
//!   over the FIFO (`aqm = "codel"`) or each flow's queue of [`fq_codel`].
//! - [`drr`] replaces the FIFO with per-flow queues served by Deficit
//!   Round Robin (`aqm = "fq"`); its admission is longest-queue drop,
//!   which [`longest`] finds in O(log flows).
//! - [`policer`] is a token bucket in front of any of them.
//!
//! ECN: a discipline that would drop early returns [`Verdict::Mark`]
//! instead when it is configured with `ecn` and the packet is ECN-capable
//! (Linux's `INET_ECN_set_ce` succeeding); the bottleneck sets CE and
//! counts the mark.

pub mod codel;
pub mod droptail;
pub mod drr;
pub mod fq_codel;
pub mod longest;
pub mod pie;
pub mod policer;
pub mod red;
pub mod step_mark;

use crate::rng::SimRng;

/// What the discipline sees when a packet arrives.
#[derive(Clone, Copy, Debug)]
pub struct Arrival {
    pub now_ns: u64,
    /// Wire bytes of the arriving packet.
    pub wire_bytes: u32,
    /// Bytes already queued (excluding the packet being serialised).
    pub queue_bytes: u64,
    /// Packets already queued.
    pub queue_packets: u32,
    /// Capacity of the buffer, bytes.
    pub buffer_bytes: u64,
    /// Whether the packet is ECN-capable (ECT or CE).
    pub ect: bool,
}

/// What the discipline sees when the head packet leaves the FIFO for the
/// link.
#[derive(Clone, Copy, Debug)]
pub struct Departure {
    pub now_ns: u64,
    /// Time the packet waited, ns.
    pub sojourn_ns: u64,
    /// Wire bytes of the departing packet.
    pub wire_bytes: u32,
    /// Bytes still queued behind it.
    pub queue_bytes: u64,
    /// Packets still queued behind it.
    pub queue_packets: u32,
    pub ect: bool,
}

/// Why a packet was turned away (for telemetry), or that it was marked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Enqueue,
    /// Enqueue it with CE set (an ECN-capable packet the AQM would drop).
    Mark,
    /// The buffer is full.
    Overflow,
    /// The AQM chose to drop early.
    EarlyDrop,
}

impl Verdict {
    /// An early congestion signal: a mark if `ecn` and `ect`, else a drop.
    pub fn congestion(ecn: bool, ect: bool) -> Self {
        if ecn && ect {
            Verdict::Mark
        } else {
            Verdict::EarlyDrop
        }
    }
}

pub trait Qdisc {
    /// Decides the fate of an arriving packet.
    fn on_arrival(&mut self, a: Arrival, rng: &mut SimRng) -> Verdict;
    /// The head packet leaves for the link; true to mark it CE (a
    /// dequeue-time marker). Disciplines that learn from departures (PIE's
    /// queueing delay) update here.
    fn on_departure(&mut self, _d: Departure) -> bool {
        false
    }
    /// Whether [`Qdisc::on_departure`] does anything (the bottleneck skips
    /// the call per packet otherwise).
    fn sees_departures(&self) -> bool {
        false
    }
    /// The queue became empty at `now_ns` (RED ages its average while idle).
    fn on_idle(&mut self, _now_ns: u64) {}
}
