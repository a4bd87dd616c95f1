//! EDT pacing and TSO burst sizing, as Linux's tcp_output.c:
//!
//! - Internal pacing (`tcp_needs_internal_pacing`) applies only when the CC
//!   set `sk_pacing_status = SK_PACING_NEEDED` (BBR does; Reno and CUBIC
//!   do not, and with no `fq` qdisc Linux does not pace them).
//! - Every transmitted skb advances the earliest departure time
//!   `tcp_wstamp_ns` by len / pacing_rate (`tcp_update_skb_after_send`),
//!   minus up to half of it as credit for time the sender sat idle; the
//!   first 10 segments of a connection are not paced. The sender may send
//!   again once the clock reaches `tcp_wstamp_ns` (`tcp_pacing_check`).
//! - An skb carries `tcp_tso_segs()` segments: ~1 ms of data at the pacing
//!   rate (rate >> sk_pacing_shift) plus an allowance for short RTTs
//!   (`tcp_tso_rtt_log`), capped at 64 KB, at least `min_tso_segs`.
//! - For CCs without `cong_control`, `tcp_update_pacing_rate` sets the rate
//!   to 200% (slow start) or 120% of cwnd * mss / srtt; it only shapes TSO
//!   sizes unless the CC asked for pacing.

use cc_native::{TcpSock, SK_PACING_NEEDED, SK_PACING_NONE};

/// sysctl tcp_min_tso_segs.
pub const MIN_TSO_SEGS: u32 = 2;
/// sysctl tcp_tso_rtt_log: halve the RTT allowance every 2^9 us of min_rtt.
pub const TSO_RTT_LOG: u32 = 9;
/// sysctl tcp_pacing_ss_ratio / tcp_pacing_ca_ratio, percent.
pub const PACING_SS_RATIO: u64 = 200;
pub const PACING_CA_RATIO: u64 = 120;
/// `sk_pacing_rate` before anyone set it: "unlimited" (~0UL).
pub const RATE_UNSET: u64 = u64::MAX;
/// Segments sent before pacing starts (sch_fq compatibility in Linux).
const UNPACED_SEGS: u64 = 10;

/// `sk->sk_pacing_rate`, bytes per second (a C `unsigned long`).
#[allow(clippy::unnecessary_cast)] // c_ulong is u64 only on LP64 targets
pub fn rate(sk: &TcpSock) -> u64 {
    sk.inet_conn.icsk_inet.sk_pacing_rate as u64
}

/// Sets `sk->sk_pacing_rate`, capped by `sk_max_pacing_rate`.
#[allow(clippy::unnecessary_cast)]
pub fn set_rate(sk: &mut TcpSock, bytes_per_sec: u64) {
    let s = &mut sk.inet_conn.icsk_inet;
    s.sk_pacing_rate = bytes_per_sec.min(s.sk_max_pacing_rate as u64) as _;
}

/// `tcp_tso_autosize()`: segments per skb at the current pacing rate.
pub fn tso_autosize(sk: &TcpSock, mss: u32, min_tso_segs: u32) -> u32 {
    let s = &sk.inet_conn.icsk_inet;
    let gso_max = s.sk_gso_max_size as u64;
    let mut bytes = rate(sk) >> s.sk_pacing_shift;
    let r = sk.rtt_min.s[0].v >> TSO_RTT_LOG;
    if r < 32 {
        bytes = bytes.saturating_add(gso_max >> r);
    }
    let bytes = bytes.min(gso_max);
    ((bytes / mss as u64) as u32).max(min_tso_segs)
}

/// `tcp_tso_segs()`: autosize capped by the device's `gso_max_segs`.
pub fn tso_segs(sk: &TcpSock, mss: u32, min_tso_segs: u32) -> u32 {
    tso_autosize(sk, mss, min_tso_segs).min(sk.inet_conn.icsk_inet.sk_gso_max_segs as u32)
}

/// `tcp_update_pacing_rate()` (CCs without `cong_control`).
pub fn update_pacing_rate(sk: &mut TcpSock) {
    let cwnd = sk.snd_cwnd;
    let mut rate = sk.mss_cache as u64 * ((1_000_000 / 100) << 3);
    rate *= if cwnd < sk.snd_ssthresh / 2 { PACING_SS_RATIO } else { PACING_CA_RATIO };
    rate = rate.saturating_mul(cwnd.max(sk.packets_out) as u64);
    if sk.srtt_us != 0 {
        rate /= sk.srtt_us as u64;
    }
    set_rate(sk, rate);
}

/// The earliest-departure-time clock of one flow.
#[derive(Clone, Debug, Default)]
pub struct Pacer {
    /// ns, earliest departure time of the next skb (`tcp_wstamp_ns`).
    pub wstamp_ns: u64,
    /// Segments transmitted so far (`tp->data_segs_out`).
    pub data_segs_out: u64,
}

impl Pacer {
    /// Does the CC want the stack to pace (`SK_PACING_NEEDED`)?
    pub fn internal(sk: &TcpSock) -> bool {
        sk.inet_conn.icsk_inet.sk_pacing_status == SK_PACING_NEEDED
    }

    /// `tcp_pacing_check()`: must the sender wait for the pacing clock?
    pub fn blocked(&self, sk: &TcpSock, now_ns: u64) -> bool {
        Self::internal(sk) && self.wstamp_ns > now_ns
    }

    /// Transmits an skb of `segs` segments and `len` payload bytes at
    /// `now_ns`: returns its departure timestamp (`skb_mstamp_ns`) and
    /// advances the clock (`__tcp_transmit_skb` + `tcp_update_skb_after_send`).
    pub fn on_transmit(&mut self, sk: &TcpSock, now_ns: u64, segs: u32, len: u64) -> u64 {
        let prior = self.wstamp_ns;
        self.wstamp_ns = self.wstamp_ns.max(now_ns);
        let stamp = self.wstamp_ns;
        self.data_segs_out += segs as u64;
        let rate = rate(sk);
        if sk.inet_conn.icsk_inet.sk_pacing_status != SK_PACING_NONE
            && rate != RATE_UNSET
            && rate != 0
            && self.data_segs_out >= UNPACED_SEGS
        {
            let mut len_ns = ((len as u128 * 1_000_000_000) / rate as u128) as u64;
            // Credit for the time the sender was late (OS jitter in Linux).
            let credit = self.wstamp_ns - prior;
            len_ns -= (len_ns / 2).min(credit);
            self.wstamp_ns += len_ns;
        }
        stamp
    }

    /// ns until the pacing clock releases (`tcp_pacing_delay`), 0 if due.
    pub fn delay_ns(&self, now_ns: u64) -> u64 {
        self.wstamp_ns.saturating_sub(now_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::minmax;

    fn sock(rate_bytes: u64, min_rtt_us: u32) -> TcpSock {
        let mut sk = TcpSock::default();
        let s = &mut sk.inet_conn.icsk_inet;
        s.sk_pacing_rate = rate_bytes as _;
        s.sk_max_pacing_rate = RATE_UNSET as _;
        s.sk_gso_max_size = 65536;
        s.sk_gso_max_segs = 65535;
        s.sk_pacing_shift = 10;
        s.sk_pacing_status = SK_PACING_NEEDED;
        minmax::reset(&mut sk.rtt_min, 0, min_rtt_us);
        sk
    }

    #[test]
    fn tso_burst_is_about_a_millisecond_of_data() {
        // 100 Mbit/s = 12.5 MB/s: 12207 bytes per 1024 us = 8 segments.
        let sk = sock(12_500_000, 40_000);
        assert_eq!(tso_segs(&sk, 1448, MIN_TSO_SEGS), 8);
        // Slow flows send at least min_tso_segs.
        let sk = sock(100_000, 40_000);
        assert_eq!(tso_segs(&sk, 1448, MIN_TSO_SEGS), 2);
        // Fast flows are capped at 64 KB.
        let sk = sock(10_000_000_000, 40_000);
        assert_eq!(tso_segs(&sk, 1448, MIN_TSO_SEGS), 45);
        // A 1 ms path gets half of 64 KB on top (min_rtt >> 9 = 1).
        let sk = sock(12_500_000, 1_000);
        assert_eq!(tso_segs(&sk, 1448, MIN_TSO_SEGS), (12207 + 32768) / 1448);
    }

    #[test]
    fn pacing_clock_advances_by_len_over_rate() {
        let sk = sock(1_448_000, 40_000); // 1000 segments per second
        let mut p = Pacer { wstamp_ns: 0, data_segs_out: 10 };
        let t = p.on_transmit(&sk, 5_000_000, 2, 2 * 1448);
        assert_eq!(t, 5_000_000);
        // Idle since 0: half the burst time is forgiven as credit.
        assert_eq!(p.wstamp_ns, 5_000_000 + 1_000_000);
        assert!(p.blocked(&sk, 5_500_000));
        let t = p.on_transmit(&sk, 6_000_000, 2, 2 * 1448);
        assert_eq!(t, 6_000_000);
        assert_eq!(p.wstamp_ns, 8_000_000);
    }

    #[test]
    fn first_ten_segments_are_not_paced() {
        let sk = sock(1_448_000, 40_000);
        let mut p = Pacer::default();
        p.on_transmit(&sk, 1000, 5, 5 * 1448);
        assert_eq!(p.wstamp_ns, 1000);
        p.on_transmit(&sk, 1000, 5, 5 * 1448);
        assert!(p.wstamp_ns > 1000);
    }

    #[test]
    fn reno_pacing_rate_is_twice_cwnd_over_srtt_in_slow_start() {
        let mut sk = sock(0, 40_000);
        sk.mss_cache = 1000;
        sk.snd_cwnd = 10;
        sk.snd_ssthresh = 0x7fff_ffff;
        sk.srtt_us = 10_000 << 3; // 10 ms
        update_pacing_rate(&mut sk);
        // 10 * 1000 B / 10 ms = 1 MB/s, x2.
        assert_eq!(rate(&sk), 2_000_000);
        sk.snd_ssthresh = 10;
        update_pacing_rate(&mut sk);
        assert_eq!(rate(&sk), 1_200_000);
    }
}
