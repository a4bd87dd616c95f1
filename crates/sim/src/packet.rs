//! Packets on the simulated wire. Sequence numbers count segments, not
//! bytes: every data segment carries `mss` payload bytes (bulk flows), so a
//! segment index is Linux's `seq / mss`.

/// A data segment from a sender to its receiver.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
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
    /// The IP header's ECN field (RFC 3168): ECT(0) from an ECN-capable
    /// sender, CE once a queue marked it.
    pub ecn: Ecn,
    /// The TCP header's CWR flag: the sender reduced its window after an
    /// ECE (RFC 3168 6.1.2; Linux sets it on the next new data segment).
    pub cwr: bool,
    /// The TCP header's PSH flag. Linux sets it on the last segment of
    /// every skb of more than one segment (`__tcp_transmit_skb`: "Force
    /// a PSH flag on all (GSO) packets to expedite GRO flush at
    /// receiver"), not on one-segment skbs; the receiver ACKs such a
    /// segment at once (see crate::receiver).
    pub psh: bool,
    /// The timestamp option's TSval (RFC 7323): the sender's ms clock at
    /// the skb's departure (see crate::tcp::timestamp).
    pub tsval: u32,
    /// The timestamp option's TSecr: the TSval of the latest ACK the
    /// sender had processed (its `ts_recent`; at first the SYN-ACK's); the
    /// receiver's RTT estimate is taken from it (crate::rcvbuf).
    pub tsecr: u32,
}

/// The two ECN bits of the IP header (RFC 3168 5). ECT(1) is not used:
/// Linux's classic ECN and AccECN senders send ECT(0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Ecn {
    /// Not-ECT: a queue must drop, not mark.
    #[default]
    NotEct,
    /// ECT(0): ECN-capable transport.
    Ect0,
    /// CE: congestion experienced (set by a queue instead of a drop).
    Ce,
}

impl Ecn {
    /// Whether a queue may mark this packet instead of dropping it
    /// (`INET_ECN_set_ce` succeeds on ECT and on CE).
    pub fn capable(self) -> bool {
        self != Ecn::NotEct
    }
}

/// Maximum SACK blocks per ACK (Linux with timestamps: 3).
pub const MAX_SACK_BLOCKS: usize = 3;

/// A (possibly delayed) cumulative ACK with SACK blocks, receiver to sender.
/// A DSACK block (RFC 2883), if any, is the first of `sacks`.
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
    /// The TCP header's ECE flag (classic RFC 3168 echo: set on every ACK
    /// from the first CE until a CWR arrives).
    pub ece: bool,
    /// AccECN's count of CE-marked data packets received so far (the ACE
    /// field, carried here at full width: the simulated ACK path loses
    /// nothing, so the 3-bit wrap Linux resolves never arises).
    pub ce_packets: u32,
    /// The timestamp option's TSecr: the receiver's `ts_recent`, the TSval
    /// it echoes (RFC 7323 3.4; 0 before the first data segment).
    pub tsecr: u32,
    /// The timestamp option's TSval: the receiver's ms clock when the ACK
    /// left (crate::receiver).
    pub tsval: u32,
}
