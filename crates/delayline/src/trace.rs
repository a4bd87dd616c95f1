//! A packet trace: when each packet reached the delay line and when it
//! left, with its TCP sequence and acknowledgement numbers. The delay line
//! sits between the hosts and the network, so its trace shows what the
//! hosts add to the timing: how long the receiver takes from a segment's
//! delivery to the ACK it sends (its host and its stack), and the sender
//! from an ACK's delivery to the segments that ACK releases. The live
//! engine's host measurement (`python/ccarena/live/hostmodel.py`) reads it.
//!
//! One record per event, [`RECORD_BYTES`] little-endian bytes:
//!
//! | bytes | field |
//! | --- | --- |
//! | 0-7 | `t_ns`: CLOCK_MONOTONIC when the packet was read (kind 0) or written (kind 1) |
//! | 8-15 | `due_ns`: when it was due to be written (kind 1; 0 for kind 0) |
//! | 16-17 | `key`: 2 × flow for packets from the flow's sender, 2 × flow + 1 to it |
//! | 18 | `kind`: 0 read, 1 written |
//! | 19 | TCP flags (FIN 0x01, SYN 0x02, ... ACK 0x10) |
//! | 20-23 | TCP sequence number |
//! | 24-27 | TCP acknowledgement number |
//! | 28-31 | TCP payload bytes (a GSO frame: all its segments') |
//!
//! Written through a buffer (a record costs a copy, not a system call), so
//! tracing barely moves the timing it observes; the file is flushed when
//! the delay line exits.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

/// Bytes of one record.
pub const RECORD_BYTES: usize = 32;

/// What happened to the packet.
#[derive(Clone, Copy)]
pub enum Kind {
    Read = 0,
    Written = 1,
}

pub struct PacketTrace {
    out: BufWriter<File>,
}

impl PacketTrace {
    pub fn create(path: &Path) -> std::io::Result<Self> {
        Ok(PacketTrace { out: BufWriter::with_capacity(1 << 20, File::create(path)?) })
    }

    /// Records packet `ip` (its IPv4 header onwards) of queue `key`.
    pub fn record(&mut self, kind: Kind, t_ns: u64, due_ns: u64, key: usize, ip: &[u8]) -> std::io::Result<()> {
        self.out.write_all(&encode(kind, t_ns, due_ns, key, ip))
    }

    pub fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// The record of one event (a packet that is not TCP over IPv4 gets zeros
/// for its TCP fields).
fn encode(kind: Kind, t_ns: u64, due_ns: u64, key: usize, ip: &[u8]) -> [u8; RECORD_BYTES] {
    let mut r = [0u8; RECORD_BYTES];
    r[0..8].copy_from_slice(&t_ns.to_le_bytes());
    r[8..16].copy_from_slice(&due_ns.to_le_bytes());
    r[16..18].copy_from_slice(&(key as u16).to_le_bytes());
    r[18] = kind as u8;
    if let Some((flags, seq, ack, payload)) = tcp_fields(ip) {
        r[19] = flags;
        r[20..24].copy_from_slice(&seq.to_le_bytes());
        r[24..28].copy_from_slice(&ack.to_le_bytes());
        r[28..32].copy_from_slice(&payload.to_le_bytes());
    }
    r
}

/// (flags, seq, ack, payload bytes) of a TCP segment in IPv4 packet `ip`.
fn tcp_fields(ip: &[u8]) -> Option<(u8, u32, u32, u32)> {
    const TCP: u8 = 6;
    if ip.len() < 20 || ip[0] >> 4 != 4 || ip[9] != TCP {
        return None;
    }
    let ihl = usize::from(ip[0] & 0x0f) * 4;
    let total = usize::from(u16::from_be_bytes([ip[2], ip[3]]));
    let tcp = ip.get(ihl..)?;
    if tcp.len() < 20 {
        return None;
    }
    let be32 = |at: usize| u32::from_be_bytes([tcp[at], tcp[at + 1], tcp[at + 2], tcp[at + 3]]);
    let doff = usize::from(tcp[12] >> 4) * 4;
    let payload = total.saturating_sub(ihl + doff) as u32;
    Some((tcp[13], be32(4), be32(8), payload))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An IPv4 + TCP header (20 + 32 bytes, timestamps) and `payload` bytes.
    fn segment(seq: u32, ack: u32, flags: u8, payload: usize) -> Vec<u8> {
        let total = 20 + 32 + payload;
        let mut p = vec![0u8; total];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        p[9] = 6;
        p[20 + 4..20 + 8].copy_from_slice(&seq.to_be_bytes());
        p[20 + 8..20 + 12].copy_from_slice(&ack.to_be_bytes());
        p[20 + 12] = 8 << 4;
        p[20 + 13] = flags;
        p
    }

    #[test]
    fn a_record_carries_the_times_the_queue_and_the_tcp_numbers() {
        let r = encode(Kind::Written, 1_000_000_007, 1_000_000_000, 3, &segment(4_000_000_000, 77, 0x10, 1448));
        assert_eq!(u64::from_le_bytes(r[0..8].try_into().unwrap()), 1_000_000_007);
        assert_eq!(u64::from_le_bytes(r[8..16].try_into().unwrap()), 1_000_000_000);
        assert_eq!(u16::from_le_bytes(r[16..18].try_into().unwrap()), 3);
        assert_eq!((r[18], r[19]), (1, 0x10));
        assert_eq!(u32::from_le_bytes(r[20..24].try_into().unwrap()), 4_000_000_000);
        assert_eq!(u32::from_le_bytes(r[24..28].try_into().unwrap()), 77);
        assert_eq!(u32::from_le_bytes(r[28..32].try_into().unwrap()), 1448);
    }

    #[test]
    fn a_pure_ack_has_no_payload_and_other_packets_no_tcp_fields() {
        let r = encode(Kind::Read, 5, 0, 1, &segment(1, 2, 0x10, 0));
        assert_eq!(u32::from_le_bytes(r[28..32].try_into().unwrap()), 0);
        let mut udp = segment(1, 2, 0x10, 100);
        udp[9] = 17;
        let r = encode(Kind::Read, 5, 0, 1, &udp);
        assert_eq!(&r[19..32], &[0u8; 13]);
    }
}
