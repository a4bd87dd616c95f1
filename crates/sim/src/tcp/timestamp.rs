//! TCP timestamps (RFC 7323) as Linux's sender uses them: the TSval it
//! puts on data and what it does with the TSecr an ACK echoes.
//!
//! Clock: Linux's default TSval clock is milliseconds (`TCP_TS_HZ` 1000,
//! `tcp_skb_timestamp_ts(false, skb)` = the skb's departure time
//! `skb_mstamp_ns` / 1 ms). Microsecond TSvals (`tcp_usec_ts`, Linux
//! >= 6.7) are used only on routes with the `tcp_usec_ts` feature, which
//! is off unless an administrator sets it per route, so the simulator uses
//! ms: the resolution of Eifel's test ([`TsEcho::ecr_before`]) and of the
//! RTT samples taken from TSecr ([`TsEcho::rtt_us`]) is Linux's default.
//! The per-connection random offset (`tsoffset`) is left out: it cancels
//! in every comparison, and [`super::sender::CLOCK_BASE_US`] keeps TSval
//! away from 0, which Linux reads as "no echo".
//!
//! Used for: Eifel detection of spurious retransmissions
//! (`tcp_packet_delayed`, `tcp_skb_spurious_retrans`) and RTT samples of
//! ACKs that only cover retransmitted data (`tcp_ack_update_rtt`). Not
//! modelled: PAWS (`tcp_paws_discard`; per-flow paths here are FIFO, so
//! TSvals never arrive out of order). The other direction, the
//! receiver's TSval that data echoes for its RTT estimate, is
//! crate::rcvbuf's.

/// µs per TSval tick (`USEC_PER_SEC / TCP_TS_HZ`).
pub const TS_TICK_US: u64 = 1_000;

/// `tcp_skb_timestamp_ts(false, skb)`: the TSval of a segment that left at
/// `sent_us` on the sender's µs clock.
pub fn tsval_of(sent_us: u64) -> u32 {
    (sent_us / TS_TICK_US) as u32
}

/// `before()` on the 32-bit timestamp circle.
pub fn ts_before(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

/// The timestamp option of the ACK being processed (`tp->rx_opt.saw_tstamp`,
/// `rcv_tsecr`).
#[derive(Clone, Copy, Debug, Default)]
pub struct TsEcho {
    pub saw_tstamp: bool,
    /// The echoed TSval; 0 = none.
    pub rcv_tsecr: u32,
}

impl TsEcho {
    /// `tcp_tsopt_ecr_before()`: the ACK echoes a TSval older than `when`.
    pub fn ecr_before(&self, when: u32) -> bool {
        self.saw_tstamp && self.rcv_tsecr != 0 && ts_before(self.rcv_tsecr, when)
    }

    /// `tcp_rtt_tsopt_us(tp, min_delta)`: the RTT the echo measures, µs, at
    /// `now_ts` (`tcp_time_stamp_ts`); a zero delta counts as `min_delta`
    /// ticks. -1 if the echo is implausibly old.
    pub fn rtt_us(&self, now_ts: u32, min_delta: u32) -> i64 {
        let mut delta = now_ts.wrapping_sub(self.rcv_tsecr);
        if (delta as u64) < i32::MAX as u64 / TS_TICK_US {
            if delta == 0 {
                delta = min_delta;
            }
            return delta as i64 * TS_TICK_US as i64;
        }
        -1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echo_before_and_rtt_in_whole_milliseconds() {
        let e = TsEcho { saw_tstamp: true, rcv_tsecr: 1_000 };
        assert!(e.ecr_before(1_001));
        assert!(!e.ecr_before(1_000));
        assert!(!TsEcho { saw_tstamp: true, rcv_tsecr: 0 }.ecr_before(5));
        assert_eq!(e.rtt_us(1_020, 1), 20_000);
        assert_eq!(e.rtt_us(1_000, 1), 1_000);
        assert_eq!(e.rtt_us(999, 1), -1);
        assert_eq!(tsval_of(1_234_567), 1_234);
        assert!(ts_before(u32::MAX, 1));
    }
}
