//! The receiver's window growth, as far as it decides the ACKs a sender
//! sees (tcp_input.c: `tcp_grow_window`, `tcp_rcv_space_adjust`,
//! `tcp_rcvbuf_grow`, `tcp_rcv_rtt_measure_ts`; Linux 6.18).
//!
//! Why it exists: Linux's receiver ACKs every segment that raises its
//! `rcv_ssthresh` (`tcp_grow_window()` sets `icsk_ack.quick |= 1`), and
//! through a slow start it raises it with most segments, because the
//! autotuned buffer (dynamic right-sizing, DRS) keeps ahead of it. A
//! sender in slow start then gets one ACK per segment, not one per two:
//! in the live testbed's packet traces 88% of a 50 ms flow's ACKs in its
//! first 0.3 s covered one segment, 15% after (docs/host.md, "The
//! handshake and the receiver's start-up"). HyStart's delay test takes a
//! round's first eight ACKs, so this decides where slow start ends.
//!
//! The state, in bytes as Linux keeps it:
//! - `rcv_ssthresh`: grows by two segments per full segment received
//!   while there is room below the window clamp; each growth asks for an
//!   immediate ACK.
//! - `window_clamp` and `sk_rcvbuf`: once per receiver RTT the
//!   application's reads are measured (`copied`); if it read more than in
//!   the last measurement, the buffer grows to hold `2 copied` plus, in
//!   slow start, room for the sender to double again
//!   (`tcp_rcvbuf_grow()`: `rcvwin = 2 copied + 4 copied (copied - old) /
//!   old`), capped at `tcp_rmem[2]`, and the clamp follows. It never
//!   shrinks.
//! - the receiver's RTT (`rcv_rtt_est`), from the timestamps: a data
//!   segment's TSecr echoes the TSval of the latest ACK its sender had,
//!   so now minus TSecr is a round trip on the receiver's ms clock. A
//!   smaller sample replaces the estimate; otherwise a 1/8 EWMA.
//!
//! Deviations: the application reads every in-order byte as it arrives
//! (a bulk receiver: `inq` is 0, and the buffer's memory holds nothing
//! but out-of-order data, which is not charged: `tcp_space()` is taken as
//! the clamp); `scaling_ratio` is fixed at the value for the testbed's
//! skbs ([`SCALING_RATIO`]); no memory pressure (`tcp_clamp_window`,
//! `tcp_collapse`); the buffer grows only when the application reads,
//! not also on out-of-order arrivals (`tcp_data_queue_ofo` calls
//! `tcp_rcvbuf_grow` with the last measurement, for the span it holds;
//! here that span only adds to the next growth's window); the window
//! these bytes bound is not enforced on the
//! sender (crate::receiver: the sender is never window-limited), only
//! the ACKs follow from them.

/// `tcp_rmem[1]` (sysctl net.ipv4.tcp_rmem: min, default, max), bytes:
/// a new socket's `sk_rcvbuf`, the kernel's default, which the live
/// testbed's receiver keeps.
pub const TCP_RMEM_DEFAULT: u64 = 131_072;
/// `tcp_rmem[2]`, bytes: where autotuning stops. The live testbed's
/// receiver sets 64 MB (python/ccarena/live/testbed.py, `_TCP_MEM`: a 50
/// ms flow with a 2 MB buffer has ~2.6 MB in flight; the kernel's default
/// is 32 MB); tests/test_testbed.py checks the two agree.
pub const TCP_RMEM_MAX: u64 = 67_108_864;

/// `TCP_RMEM_TO_WIN_SCALE`: `scaling_ratio` is a fraction of 256.
const WIN_SCALE_SHIFT: u32 = 8;

/// `tp->scaling_ratio`: the share of buffer memory (`skb->truesize`) that
/// is payload, in 256ths, as `tcp_measure_rcv_mss()` sets it from the
/// first full segment: `len << 8 / truesize`. A 1514-byte frame written
/// to the testbed's TUN device is a linear skb of a 2048-byte kmalloc
/// (1728 bytes of data area after the shared info) plus the `sk_buff`
/// (256 bytes aligned) and `skb_shared_info` (320): truesize 2304, and
/// 1448 << 8 / 2304 = 160. It only sets the clamp before the first DRS
/// measurement (`tcp_win_from_space(tcp_rmem[1])` = 81,920 bytes); after,
/// the clamp is DRS's window (the ratio cancels).
pub const SCALING_RATIO: u64 = 160;

/// `tcp_select_initial_window()`'s window of the SYN-ACK, in segments: the
/// default buffer's space at the default ratio (1/2, 65,536 bytes),
/// rounded down to whole segments and at most 64 KB without scaling.
const INITIAL_WINDOW_BYTES_MAX: u64 = 65_535;
/// `TCP_DEFAULT_SCALING_RATIO` (1 << (8 - 1)): before any data.
const DEFAULT_SCALING_RATIO: u64 = 128;
/// `tcp_grow_window()` grows only on segments of at least this many bytes.
const GROW_MIN_LEN: u32 = 128;
/// Linux TCP_INIT_CWND: `rcvq_space.space` starts at this many segments.
const INIT_SPACE_SEGMENTS: u64 = 10;

/// `tcp_win_from_space()`: the window `space` bytes of buffer hold at
/// `ratio` (256ths payload).
fn win_from_space(space: u64, ratio: u64) -> u64 {
    (space * ratio) >> WIN_SCALE_SHIFT
}

use crate::tcp::timestamp::TsEcho;

/// One receiver's window growth.
#[derive(Clone, Debug)]
pub struct RcvBuf {
    /// Payload bytes per segment (`advmss`, `rcv_mss`).
    mss: u64,
    /// `tp->rcv_ssthresh`, bytes.
    rcv_ssthresh: u64,
    /// `sk->sk_rcvbuf`, bytes (the window clamp is the window it holds:
    /// [`RcvBuf::window_clamp`]).
    rcvbuf: u64,
    /// `rcvq_space.space`: bytes read in the last measurement that grew
    /// the buffer.
    space: u64,
    /// `rcvq_space.seq`: bytes read when the measurement began.
    space_seq: u64,
    /// `rcvq_space.time`: when it began, µs.
    space_time_us: u64,
    /// `rcv_rtt_est.rtt_us`: the receiver's RTT, µs << 3 (0: none yet).
    rtt_us8: u64,
    /// `rcv_rtt_last_tsecr`: the echo the last RTT sample came from.
    last_tsecr: u32,
}

impl RcvBuf {
    /// The connection is established at `now_us` (`tcp_init_buffer_space`
    /// after `tcp_select_initial_window`): the SYN-ACK's window is the
    /// default buffer's space, 45 segments (65,160 bytes); the clamp one
    /// segment under that space (64,088, "force reservation of one
    /// segment"); `rcv_ssthresh` the smaller. The first full segment then
    /// sets the measured ratio and the clamp to its space
    /// (`tcp_set_window_clamp`, which lifts `rcv_ssthresh` to the window):
    /// applied here at once, as nothing happens between.
    pub fn new(mss: u32, now_us: u64) -> Self {
        let mss = mss as u64;
        let space = win_from_space(TCP_RMEM_DEFAULT, DEFAULT_SCALING_RATIO);
        let rcv_wnd = (space / mss * mss).min(INITIAL_WINDOW_BYTES_MAX);
        let window_clamp = win_from_space(TCP_RMEM_DEFAULT, SCALING_RATIO);
        RcvBuf {
            mss,
            rcv_ssthresh: rcv_wnd.min(window_clamp),
            rcvbuf: TCP_RMEM_DEFAULT,
            space: (INIT_SPACE_SEGMENTS * mss).min(rcv_wnd),
            space_seq: 0,
            space_time_us: now_us,
            rtt_us8: 0,
            last_tsecr: 0,
        }
    }

    /// A data segment of `len` payload bytes arrived at `now_ms` (the
    /// receiver's timestamp clock) echoing `tsecr`: takes an RTT sample
    /// (`tcp_rcv_rtt_measure_ts`) and grows `rcv_ssthresh` if there is
    /// room (`tcp_grow_window`). True if it grew: ACK at once.
    pub fn on_segment(&mut self, now_ms: u32, tsecr: u32, len: u32) -> bool {
        self.measure_rtt(now_ms, tsecr, len);
        self.grow_window(len)
    }

    /// `tcp_rcv_rtt_measure_ts`: one sample per new echo, from full
    /// segments, the echo's age as the sender's TSecr samples take it
    /// (`tcp_rtt_tsopt_us`, [`TsEcho::rtt_us`]) with `min_delta` 0: an
    /// echo of this very tick (a path under 1 ms) gives no sample, as
    /// Linux 6.18 filters zero samples out of autotuning.
    fn measure_rtt(&mut self, now_ms: u32, tsecr: u32, len: u32) {
        if tsecr == 0 || tsecr == self.last_tsecr {
            return;
        }
        self.last_tsecr = tsecr;
        if (len as u64) < self.mss {
            return;
        }
        let sample_us = TsEcho { saw_tstamp: true, rcv_tsecr: tsecr }.rtt_us(now_ms, 0);
        let Ok(sample_us @ 1..) = u64::try_from(sample_us) else {
            return; // this tick's echo, or implausibly old
        };
        // tcp_rcv_rtt_update(tp, sample, 0): a smaller sample is taken at
        // once, a larger one through a 1/8 EWMA.
        let m = sample_us << 3;
        self.rtt_us8 = if self.rtt_us8 == 0 || m < self.rtt_us8 {
            m
        } else {
            self.rtt_us8 - (self.rtt_us8 >> 3) + sample_us
        };
    }

    /// `tcp_grow_window()`: with `room` below the clamp, two segments'
    /// worth (`incr = max(2 advmss, 2 len)`; the skb's truesize at the
    /// measured ratio is its length, so Linux's "check #2" takes this
    /// branch).
    fn grow_window(&mut self, len: u32) -> bool {
        let clamp = self.window_clamp();
        if len < GROW_MIN_LEN || self.rcv_ssthresh >= clamp {
            return false;
        }
        let room = clamp - self.rcv_ssthresh;
        let incr = (2 * self.mss).max(2 * len as u64);
        self.rcv_ssthresh += room.min(incr);
        true
    }

    /// The application has read `copied_total` bytes by `now_us`
    /// (`tcp_rcv_space_adjust`, once per receiver RTT): if it read more
    /// than the last growth's measurement, the buffer grows
    /// (`tcp_rcvbuf_grow`). `ooo_bytes`: from `rcv_nxt` to the end of the
    /// out-of-order data held (asked for only when the buffer grows).
    pub fn on_read(&mut self, now_us: u64, copied_total: u64, ooo_bytes: impl FnOnce() -> u64) {
        if self.rtt_us8 == 0 || now_us.saturating_sub(self.space_time_us) < self.rtt_us8 >> 3 {
            return;
        }
        let copied = copied_total - self.space_seq;
        if copied > self.space {
            self.grow_rcvbuf(copied, ooo_bytes());
        }
        self.space_seq = copied_total;
        self.space_time_us = now_us;
    }

    /// `tcp_rcvbuf_grow(sk, newval)`: "DRS is always one RTT late"
    /// (twice what was read), and in slow start room for the sender to
    /// double its rate (4 newval (newval - old) / old more); the buffer
    /// holds that window at the ratio, up to `tcp_rmem[2]`, and the clamp
    /// follows the buffer up, never down.
    fn grow_rcvbuf(&mut self, newval: u64, ooo_bytes: u64) {
        let old = self.space;
        self.space = newval;
        let mut rcvwin = newval << 1;
        rcvwin += (rcvwin * (newval - old) / old) << 1;
        rcvwin += ooo_bytes;
        let rcvbuf = ((rcvwin << WIN_SCALE_SHIFT) / SCALING_RATIO).min(TCP_RMEM_MAX);
        self.rcvbuf = self.rcvbuf.max(rcvbuf);
    }

    /// `tp->window_clamp`, bytes: the window the buffer holds
    /// (`tcp_win_from_space(sk_rcvbuf)`, which `tcp_set_window_clamp` and
    /// `tcp_rcvbuf_grow` set it to whenever the buffer changes).
    fn window_clamp(&self) -> u64 {
        win_from_space(self.rcvbuf, SCALING_RATIO)
    }

    /// The receiver's RTT estimate, µs (0: none yet).
    #[cfg(test)]
    fn rtt_us(&self) -> u64 {
        self.rtt_us8 >> 3
    }

    /// A receiver whose window has stopped growing (unit tests of the ACK
    /// policy in steady state).
    #[cfg(test)]
    pub fn settled(mss: u32) -> Self {
        let mut b = RcvBuf::new(mss, 0);
        b.rcv_ssthresh = b.window_clamp();
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1448;

    #[test]
    fn starts_as_linux_with_the_testbeds_ratio() {
        let b = RcvBuf::new(MSS, 0);
        // 45 segments (65,160) under a clamp of 131,072 * 160 / 256.
        assert_eq!((b.rcv_ssthresh, b.window_clamp(), b.space), (65_160, 81_920, 14_480));
        // Room for six growths (16,760 bytes), then none.
        let mut b = b;
        let grew: Vec<bool> = (0..8).map(|_| b.on_segment(0, 0, MSS)).collect();
        assert_eq!(grew, [true, true, true, true, true, true, false, false]);
        assert_eq!(b.rcv_ssthresh, b.window_clamp());
        // Short segments never grow it.
        let mut b = RcvBuf::new(MSS, 0);
        assert!(!b.on_segment(0, 0, 100));
    }

    #[test]
    fn the_rtt_comes_from_new_echoes_smaller_at_once_larger_by_an_eighth() {
        let mut b = RcvBuf::new(MSS, 0);
        b.on_segment(1_050, 1_000, MSS);
        assert_eq!(b.rtt_us(), 50_000);
        // The same echo again: no sample.
        b.on_segment(1_200, 1_000, MSS);
        assert_eq!(b.rtt_us(), 50_000);
        // Larger: an eighth of the way (50 + (130 - 50) / 8 = 60 ms).
        b.on_segment(1_230, 1_100, MSS);
        assert_eq!(b.rtt_us(), 60_000);
        // An echo of this tick: no sample (Linux drops zero deltas).
        b.on_segment(1_240, 1_240, MSS);
        assert_eq!(b.rtt_us(), 60_000);
        // Smaller: taken at once.
        b.on_segment(1_250, 1_249, MSS);
        assert_eq!(b.rtt_us(), 1_000);
    }

    #[test]
    fn in_slow_start_the_buffer_keeps_most_segments_growing_the_window() {
        // A sender doubling every 50 ms round trip; the receiver reads
        // everything at once. Per round, the share of segments that grow
        // rcv_ssthresh (and are ACKed alone): most of each round in slow
        // start, as the live traces show (88% of ACKs cover one segment).
        let mss = MSS as u64;
        let mut b = RcvBuf::new(MSS, 0);
        let (mut read, mut cwnd) = (0u64, 10u64);
        let mut shares = vec![];
        for round in 0..8u64 {
            let t0 = round * 50_000;
            let mut grew = 0;
            for i in 0..cwnd {
                let now_us = t0 + i * 50_000 / cwnd / 2;
                // The echo: the ACK of the previous round (50 ms ago).
                let tsecr = (1_000 + now_us / 1000 - 50) as u32;
                grew += b.on_segment((1_000 + now_us / 1000) as u32, tsecr, MSS) as u64;
                read += mss;
                b.on_read(now_us, read, || 0);
            }
            shares.push(grew * 100 / cwnd);
            cwnd *= 2;
        }
        // Rounds 3-8: DRS lets 3/4 of a doubling round grow the window.
        assert!(shares[3..].iter().all(|&s| (60..=100).contains(&s)), "{shares:?}");
        // The clamp stays ahead of what a round delivers.
        assert!(b.window_clamp() > 640 * mss, "{}", b.window_clamp());
    }

    #[test]
    fn at_a_steady_rate_the_window_stops_growing_within_a_round_or_two() {
        let mss = MSS as u64;
        let mut b = RcvBuf::new(MSS, 0);
        let mut read = 0u64;
        let mut growing_in_round = vec![];
        for round in 0..12u64 {
            let cwnd = if round < 5 { 10 << round } else { 160 };
            let mut grew = 0;
            for i in 0..cwnd {
                let now_us = round * 50_000 + i * 50_000 / cwnd;
                let now_ms = (1_000 + now_us / 1000) as u32;
                grew += b.on_segment(now_ms, now_ms - 50, MSS) as u64;
                read += mss;
                b.on_read(now_us, read, || 0);
            }
            growing_in_round.push(grew);
        }
        assert!(growing_in_round[8..].iter().all(|&g| g == 0), "{growing_in_round:?}");
        // Capped at tcp_rmem[2] whatever the rate.
        let mut b = RcvBuf::new(MSS, 0);
        b.on_segment(1_050, 1_000, MSS);
        b.on_read(1_000_000, 10 * TCP_RMEM_MAX, || 0);
        assert_eq!(b.rcvbuf, TCP_RMEM_MAX);
    }
}
