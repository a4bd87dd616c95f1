//! Packets on the simulated wire. Sequence numbers count segments, not
//! bytes: every data segment carries `mss` payload bytes (bulk flows), so a
//! segment index is Linux's `seq / mss`.

/// A data segment from a sender to its receiver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataPacket {
    /// Index of the flow in the scenario.
    pub flow: u32,
    /// Segment number (0, 1, 2, ...). The live engine's userspace
    /// bottleneck (crates/delayline/src/link.rs), which has no segment
    /// numbers, carries the slot of the packet's bytes here instead.
    pub seq: u32,
    /// Bytes on the bottleneck wire (payload + headers).
    pub wire_bytes: u32,
    /// True for a retransmission.
    pub retrans: bool,
    /// Time the sender put it on the wire, ns.
    pub sent_ns: u64,
    /// Time it entered the bottleneck queue, ns (set by the queue).
    pub enqueued_ns: u64,
}

/// Maximum SACK blocks per ACK (Linux with timestamps: 3).
pub const MAX_SACK_BLOCKS: usize = 3;

/// A (possibly delayed) cumulative ACK with SACK blocks, receiver to sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckPacket {
    pub flow: u32,
    /// Next segment the receiver expects: all of `[0, cum_ack)` arrived.
    pub cum_ack: u32,
    /// SACK blocks `[start, end)` in segments, most recent first.
    pub sacks: [(u32, u32); MAX_SACK_BLOCKS],
    pub n_sacks: u8,
    /// The receiver held this ACK back (delayed ACK) before sending it.
    pub delayed: bool,
}
