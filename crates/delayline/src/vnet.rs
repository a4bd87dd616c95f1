//! The virtio-net header a TUN device opened with `IFF_VNET_HDR` puts in
//! front of every packet (and expects in front of every packet written).
//!
//! With it, and with the offloads switched on (`TUNSETOFFLOAD`), the
//! kernel hands the delay line whole GSO super-packets (a TCP sender's
//! up-to-64-KB send unit, never segmented on the way) with a partial
//! checksum, instead of segmenting them in software into MTU-sized packets
//! and computing every checksum first. The delay line passes the header
//! through unchanged: written back, the frame becomes the same GSO packet
//! again, and the kernel segments it only where a device or qdisc needs
//! MTU-sized packets (in the live testbed: the bottleneck's TBF).
//!
//! Layout (`struct virtio_net_hdr`, legacy: the host's byte order):
//! `flags: u8, gso_type: u8, hdr_len: u16, gso_size: u16, csum_start: u16,
//! csum_offset: u16`.

/// Bytes of `struct virtio_net_hdr` (what TUNSETVNETHDRSZ is set to).
pub const HEADER_LEN: usize = 10;

/// `gso_type` of a frame that is a single packet.
const GSO_NONE: u8 = 0;
/// `gso_type`'s ECN bit (the sender set CWR: the kernel's TSO_ECN).
const GSO_ECN: u8 = 0x80;

/// The GSO part of a frame's header.
#[derive(Debug, PartialEq, Eq)]
pub struct Gso {
    /// Payload bytes per segment (the TCP MSS of the sender).
    pub size: u16,
}

/// The frame's GSO description, or None when the frame is one packet (or
/// too short to carry a header).
pub fn gso(frame: &[u8]) -> Option<Gso> {
    if frame.len() < HEADER_LEN || frame[1] & !GSO_ECN == GSO_NONE {
        return None;
    }
    let size = u16::from_ne_bytes([frame[4], frame[5]]);
    (size > 0).then_some(Gso { size })
}

/// How many wire packets an IPv4 TCP frame (header included) stands for:
/// 1 for a plain packet, ceil(payload / gso_size) for a GSO super-packet.
pub fn segments(frame: &[u8]) -> u64 {
    let Some(Gso { size }) = gso(frame) else { return 1 };
    let ip = &frame[HEADER_LEN..];
    if ip.len() < 20 || ip[0] >> 4 != 4 {
        return 1;
    }
    let ip_header = usize::from(ip[0] & 0x0f) * 4;
    let Some(&offset_byte) = ip.get(ip_header + 12) else { return 1 };
    let tcp_header = usize::from(offset_byte >> 4) * 4;
    let payload = ip.len().saturating_sub(ip_header + tcp_header);
    (payload.div_ceil(usize::from(size))).max(1) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A frame: virtio-net header, 20-byte IPv4 header, 32-byte TCP
    /// header (timestamps), `payload` bytes.
    fn frame(gso_type: u8, gso_size: u16, payload: usize) -> Vec<u8> {
        let mut f = vec![0u8; HEADER_LEN + 20 + 32 + payload];
        f[0] = 1; // VIRTIO_NET_HDR_F_NEEDS_CSUM
        f[1] = gso_type;
        f[4..6].copy_from_slice(&gso_size.to_ne_bytes());
        f[HEADER_LEN] = 0x45;
        f[HEADER_LEN + 20 + 12] = 8 << 4;
        f
    }

    #[test]
    fn a_plain_packet_is_one_segment() {
        assert_eq!(gso(&frame(0, 0, 1448)), None);
        assert_eq!(segments(&frame(0, 0, 1448)), 1);
        assert_eq!(segments(&[0u8; 4]), 1);
    }

    #[test]
    fn a_super_packet_counts_its_segments() {
        // VIRTIO_NET_HDR_GSO_TCPV4 = 1; 44 full segments of 1448 bytes.
        assert_eq!(gso(&frame(1, 1448, 44 * 1448)), Some(Gso { size: 1448 }));
        assert_eq!(segments(&frame(1, 1448, 44 * 1448)), 44);
        // A short last segment still is a packet; the ECN bit is no type.
        assert_eq!(segments(&frame(1 | GSO_ECN, 1448, 3 * 1448 + 1)), 4);
        assert_eq!(gso(&frame(GSO_ECN, 1448, 3 * 1448)), None);
    }
}
