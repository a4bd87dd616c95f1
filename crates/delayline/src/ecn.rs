//! ECN in real IPv4 headers (RFC 3168): the codepoint the bottleneck reads
//! from a data packet, CE set when it marks one (the header checksum
//! updated), and the ECE flag of a TCP ACK on its way back.

use sim::packet::Ecn;

/// The ECN field (low two bits of the TOS byte) of an IPv4 packet.
pub fn codepoint(ip: &[u8]) -> Ecn {
    match ip.get(1).map(|tos| tos & 0b11) {
        Some(0b11) => Ecn::Ce,
        Some(0b01 | 0b10) => Ecn::Ect0, // ECT(1) treated alike: both may be marked
        _ => Ecn::NotEct,
    }
}

/// Sets CE and recomputes the IPv4 header checksum (RFC 1071).
pub fn set_ce(ip: &mut [u8]) {
    if ip.len() < 20 || ip[0] >> 4 != 4 {
        return;
    }
    ip[1] |= 0b11;
    let ihl = ((ip[0] & 0x0f) as usize * 4).clamp(20, ip.len());
    ip[10] = 0;
    ip[11] = 0;
    let mut sum: u32 = ip[..ihl].chunks(2).map(|w| u16::from_be_bytes([w[0], *w.get(1).unwrap_or(&0)]) as u32).sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    ip[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
}

/// Whether an IPv4 TCP segment carries the ECE flag.
pub fn tcp_ece(ip: &[u8]) -> bool {
    if ip.len() < 20 || ip[9] != 6 {
        return false;
    }
    let ihl = (ip[0] & 0x0f) as usize * 4;
    ip.get(ihl + 13).is_some_and(|flags| flags & 0x40 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 20-byte IPv4 header + 20-byte TCP header (a real capture's).
    fn packet(tos: u8, tcp_flags: u8) -> Vec<u8> {
        let mut p = vec![
            0x45, tos, 0x00, 0x28, 0x1c, 0x46, 0x40, 0x00, 0x40, 0x06, 0x00, 0x00, 0x0a, 0xc9, 0x01, 0x0a, 0x0a, 0xca,
            0x00, 0x01,
        ];
        p.extend_from_slice(&[0; 20]);
        p[20 + 13] = tcp_flags;
        p
    }

    fn checksum_ok(ip: &[u8]) -> bool {
        let mut sum: u32 = ip[..20].chunks(2).map(|w| u16::from_be_bytes([w[0], w[1]]) as u32).sum();
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        sum == 0xffff
    }

    #[test]
    fn reads_and_marks_the_codepoint_keeping_the_checksum_valid() {
        let mut p = packet(0x02, 0x10);
        assert_eq!(codepoint(&p), Ecn::Ect0);
        assert_eq!(codepoint(&packet(0x00, 0x10)), Ecn::NotEct);
        set_ce(&mut p);
        assert_eq!(codepoint(&p), Ecn::Ce);
        assert_eq!(p[1], 0x03);
        assert!(checksum_ok(&p));
    }

    #[test]
    fn sees_ece_on_acks() {
        assert!(tcp_ece(&packet(0, 0x50)));
        assert!(!tcp_ece(&packet(0, 0x10)));
    }
}
