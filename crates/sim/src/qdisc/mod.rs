//! Queue disciplines of the bottleneck and what sits in front of it.
//!
//! - [`Qdisc`] ([`droptail`], [`red`]) only decides whether an arriving
//!   packet may join the single FIFO; the FIFO itself and its
//!   serialisation at link rate live in [`crate::bottleneck`].
//! - [`drr`] replaces the FIFO with per-flow queues served by Deficit
//!   Round Robin (`aqm = "fq"`); its admission is longest-queue drop,
//!   which [`longest`] finds in O(log flows).
//! - [`policer`] is a token bucket in front of either.

pub mod droptail;
pub mod drr;
pub mod longest;
pub mod policer;
pub mod red;

use crate::rng::SimRng;

/// What the discipline sees when a packet arrives.
#[derive(Clone, Copy, Debug)]
pub struct Arrival {
    pub now_ns: u64,
    /// Wire bytes of the arriving packet.
    pub wire_bytes: u32,
    /// Bytes already queued (excluding the packet being serialised).
    pub queue_bytes: u64,
    /// Capacity of the buffer, bytes.
    pub buffer_bytes: u64,
}

/// Why a packet was turned away (for telemetry).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Enqueue,
    /// The buffer is full.
    Overflow,
    /// The AQM chose to drop early.
    EarlyDrop,
}

pub trait Qdisc {
    /// Decides the fate of an arriving packet.
    fn on_arrival(&mut self, a: Arrival, rng: &mut SimRng) -> Verdict;
    /// The queue became empty at `now_ns` (RED ages its average while idle).
    fn on_idle(&mut self, _now_ns: u64) {}
}
