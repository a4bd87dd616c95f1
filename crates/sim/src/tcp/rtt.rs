//! RTT estimation and the retransmission timeout, as Linux's
//! `tcp_rtt_estimator()`, `tcp_set_rto()` and `tcp_update_rtt_min()`
//! (tcp_input.c), RFC 6298 with Linux's refinements:
//!
//! - `srtt_us` is kept << 3 and `mdev_us` << 2 in the `tcp_sock`;
//! - `rttvar_us` follows the largest `mdev` seen in the last RTT
//!   (`mdev_max_us`), decays by 1/4 per RTT, and never drops below
//!   TCP_RTO_MIN, so RTO = srtt + max(200 ms, ~4 mdev);
//! - RTO is counted in jiffies (rounded up to the host's ticks), capped at
//!   TCP_RTO_MAX, and doubled on every timeout (`backoff`).
//! - `rtt_min` is the windowed (300 s) minimum of the RTT samples.

use super::minmax;
use cc_native::TcpSock;

/// Linux TCP_RTO_MIN (200 ms), us.
pub const RTO_MIN_US: u32 = 200_000;
/// Linux TCP_RTO_MAX (120 s), us.
pub const RTO_MAX_US: u32 = 120_000_000;
/// Linux TCP_TIMEOUT_INIT (1 s): RTO before the first RTT sample, us.
pub const TIMEOUT_INIT_US: u32 = 1_000_000;
/// sysctl tcp_min_rtt_wlen (300 s), in the filter's time unit (ms).
pub const MIN_RTT_WLEN_MS: u32 = 300_000;

/// The parts of the RTT state Linux keeps outside the fields CCs read.
#[derive(Clone, Debug)]
pub struct RttEstimator {
    /// us, smoothed mean deviation used for the RTO (RFC 6298 RTTVAR).
    rttvar_us: u32,
    /// us, largest mdev in the current RTT.
    mdev_max_us: u32,
    /// Segment whose ACK ends the current RTT measurement round.
    rtt_seq: u32,
    /// us, the current RTO including backoff (`icsk_rto`).
    pub rto_us: u32,
    /// Timeouts since the last valid RTT sample (`icsk_backoff`).
    pub backoff: u32,
}

impl Default for RttEstimator {
    fn default() -> Self {
        Self {
            rttvar_us: TIMEOUT_INIT_US,
            mdev_max_us: 0,
            rtt_seq: 0,
            rto_us: TIMEOUT_INIT_US,
            backoff: 0,
        }
    }
}

impl RttEstimator {
    /// Initial `tcp_sock` values (tcp_init_sock): no sample yet, so
    /// `mdev_us` is the initial timeout and `rtt_min` is "infinite".
    pub fn init_sock(sk: &mut TcpSock) {
        sk.srtt_us = 0;
        sk.mdev_us = TIMEOUT_INIT_US;
        minmax::reset(&mut sk.rtt_min, 0, u32::MAX);
    }

    /// `tcp_rtt_estimator()`: feeds one RTT sample `m` (us, >= 0).
    /// `snd_una`/`snd_nxt` are in segments.
    pub fn estimate(&mut self, sk: &mut TcpSock, m_us: i64, snd_una: u32, snd_nxt: u32) {
        let mut m = m_us;
        let mut srtt = sk.srtt_us as i64;
        if srtt != 0 {
            m -= srtt >> 3; // error in the RTT estimate
            srtt += m; // srtt = 7/8 srtt + 1/8 new
            let mut mdev = sk.mdev_us as i64;
            if m < 0 {
                m = -m;
                m -= mdev >> 2;
                // A falling RTT moves mdev 8 times more slowly.
                if m > 0 {
                    m >>= 3;
                }
            } else {
                m -= mdev >> 2;
            }
            mdev += m; // mdev = 3/4 mdev + 1/4 new
            sk.mdev_us = mdev as u32;
            if sk.mdev_us > self.mdev_max_us {
                self.mdev_max_us = sk.mdev_us;
                if self.mdev_max_us > self.rttvar_us {
                    self.rttvar_us = self.mdev_max_us;
                }
            }
            if snd_una > self.rtt_seq {
                // One RTT passed: let rttvar decay towards mdev_max.
                if self.mdev_max_us < self.rttvar_us {
                    self.rttvar_us -= (self.rttvar_us - self.mdev_max_us) >> 2;
                }
                self.rtt_seq = snd_nxt;
                self.mdev_max_us = RTO_MIN_US;
            }
        } else {
            // First sample: RTO = 3 x RTT (at least srtt + RTO_MIN).
            srtt = m << 3;
            sk.mdev_us = (m << 1) as u32;
            self.rttvar_us = sk.mdev_us.max(RTO_MIN_US);
            self.mdev_max_us = self.rttvar_us;
            self.rtt_seq = snd_nxt;
        }
        sk.srtt_us = (srtt.max(1)) as u32;
    }

    /// `tcp_set_rto()` + `tcp_bound_rto()`: RTO from the estimate.
    pub fn set_rto(&mut self, sk: &TcpSock) {
        let us = sk.jiffies_us((sk.srtt_us >> 3) as u64 + self.rttvar_us as u64);
        self.rto_us = us.min(RTO_MAX_US as u64) as u32;
    }

    /// The RTO of the next timeout: doubled (`icsk_rto << 1`) up to the max.
    pub fn back_off(&mut self) {
        self.backoff += 1;
        self.rto_us = (self.rto_us.saturating_mul(2)).min(RTO_MAX_US);
    }

    /// `tcp_update_rtt_min()`: the 300 s windowed minimum (time in ms).
    pub fn update_rtt_min(sk: &mut TcpSock, rtt_us: u32, now_ms: u32) {
        // A zero sample counts as one jiffy, as in Linux.
        let v = if rtt_us == 0 { 1000 } else { rtt_us };
        minmax::running_min(&mut sk.rtt_min, MIN_RTT_WLEN_MS, now_ms, v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sock() -> TcpSock {
        let mut sk = TcpSock::default();
        RttEstimator::init_sock(&mut sk);
        sk
    }

    #[test]
    fn first_sample_sets_srtt_and_rto_of_srtt_plus_rto_min() {
        let mut sk = sock();
        let mut r = RttEstimator::default();
        r.estimate(&mut sk, 40_000, 0, 10);
        r.set_rto(&sk);
        assert_eq!(sk.srtt_us >> 3, 40_000);
        assert_eq!(sk.mdev_us, 80_000);
        // rttvar = max(2 * rtt, RTO_MIN) = 200 ms.
        assert_eq!(r.rto_us, 240_000);
    }

    #[test]
    fn constant_samples_converge_and_rto_stays_above_rto_min() {
        let mut sk = sock();
        let mut r = RttEstimator::default();
        for i in 0..200 {
            r.estimate(&mut sk, 10_000, i * 10, i * 10 + 5);
        }
        r.set_rto(&sk);
        assert_eq!(sk.srtt_us >> 3, 10_000);
        assert!(sk.mdev_us < 1_000, "mdev {}", sk.mdev_us);
        assert_eq!(r.rto_us, 210_000);
    }

    #[test]
    fn backoff_doubles_up_to_max() {
        let mut r = RttEstimator { rto_us: 300_000, ..Default::default() };
        r.back_off();
        assert_eq!(r.rto_us, 600_000);
        for _ in 0..20 {
            r.back_off();
        }
        assert_eq!(r.rto_us, RTO_MAX_US);
        assert_eq!(r.backoff, 21);
    }

    #[test]
    fn rtt_min_is_windowed() {
        let mut sk = sock();
        RttEstimator::update_rtt_min(&mut sk, 30_000, 0);
        RttEstimator::update_rtt_min(&mut sk, 20_000, 10);
        RttEstimator::update_rtt_min(&mut sk, 25_000, 20);
        assert_eq!(sk.rtt_min.s[0].v, 20_000);
        // 300 s later the old minimum has expired.
        RttEstimator::update_rtt_min(&mut sk, 50_000, 10 + MIN_RTT_WLEN_MS + 1);
        assert!(sk.rtt_min.s[0].v > 20_000);
    }
}
