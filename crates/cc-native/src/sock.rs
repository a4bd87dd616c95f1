//! Rust mirror of `cc/include/ccarena_native.h`: the socket a congestion
//! control sees. Field for field `#[repr(C)]`; `tests::layout_matches_c`
//! compares sizes and offsets with what the C compiler reports.
//!
//! The simulator's sender owns one [`TcpSock`] per flow and treats it as the
//! authoritative store of the fields Linux keeps in `struct tcp_sock`
//! (cwnd, packets_out, pacing rate, ...): the C code and the sender read and
//! write the same memory.

/// `struct minmax_sample` (include/linux/win_minmax.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MinmaxSample {
    /// Time of the sample (units chosen by the user of the filter).
    pub t: u32,
    /// Sampled value.
    pub v: u32,
}

/// `struct minmax`: a windowed min or max of three samples.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Minmax {
    pub s: [MinmaxSample; 3],
}

/// `struct sock`: the pacing fields.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Sock {
    /// Bytes per second, set by the CC.
    pub sk_pacing_rate: std::os::raw::c_ulong,
    /// Bytes per second cap (`!0`: none).
    pub sk_max_pacing_rate: std::os::raw::c_ulong,
    /// Bytes, largest TSO burst.
    pub sk_gso_max_size: u32,
    /// Segments, largest TSO burst.
    pub sk_gso_max_segs: u16,
    /// `enum sk_pacing`.
    pub sk_pacing_status: u8,
    /// TSO budget = pacing rate >> shift (10: ~1 ms of data).
    pub sk_pacing_shift: u8,
}

/// Size of `icsk_ca_priv` in u64 words (Linux: 13).
pub const ICSK_CA_PRIV_WORDS: usize = 13;

/// `struct inet_connection_sock`: CA state and the CC's private area.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct InetConnectionSock {
    pub icsk_inet: Sock,
    /// `enum tcp_ca_state` ([`CaState`] as u8).
    pub icsk_ca_state: u8,
    pub icsk_ca_initialized: u8,
    pub icsk_pad: [u8; 6],
    /// The CC's private state (`inet_csk_ca(sk)`).
    pub icsk_ca_priv: [u64; ICSK_CA_PRIV_WORDS],
}

/// `struct ccarena_ext`: native-only extension (RNG, parameters, telemetry).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CcarenaExt {
    /// Per-flow xorshift64* state; never 0.
    pub rng_state: u64,
    /// Parameter overrides (indexes defined per algorithm), or null.
    pub params: *const u64,
    /// Entries behind `params`.
    pub n_params: u32,
    /// CC-specific mode number reported for plots.
    pub trace_mode: u32,
    /// Pacing gain << 8.
    pub trace_pacing_gain: u32,
    /// Cwnd gain << 8.
    pub trace_cwnd_gain: u32,
    /// The CC's bandwidth estimate, bytes per second.
    pub trace_bw: u64,
    /// The CC's own variable, ppm of 1 (`CCA_TRACE_VAR`), or
    /// [`TRACE_VAR_NONE`] if it reports none.
    pub trace_var_ppm: u64,
    /// The CC's ACK-aggregation estimate, packets
    /// (`CCA_TRACE_EXTRA_ACKED`), or [`TRACE_EXTRA_ACKED_NONE`] if it
    /// reports none.
    pub trace_extra_acked: u32,
    /// One tick of the sender host's jiffies, µs (1e6 / HZ, whole ms).
    pub tick_us: u32,
    /// How far into a tick the µs clock's origin falls, µs (< `tick_us`).
    pub tick_phase_us: u32,
    /// Keeps `state` 8-byte aligned (as the C struct).
    pub ext_pad: u32,
    /// State of a CC too large for `icsk_ca_priv` (`CCA_STATE_EXTENDED`).
    pub state: [u64; CCA_STATE_WORDS],
}

/// `trace_var_ppm` before the CC reports a variable (set only here; C
/// never reads it).
pub const TRACE_VAR_NONE: u64 = u64::MAX;

/// `trace_extra_acked` before the CC reports an ACK-aggregation estimate
/// (set only here; C never reads it).
pub const TRACE_EXTRA_ACKED_NONE: u32 = u32::MAX;

/// `CCA_STATE_MAX / 8` of ccarena_compat.h: u64 words of the extension area
/// for CC state beyond the 104-byte private area (checked by
/// `tests::layout_matches_c`).
pub const CCA_STATE_WORDS: usize = 64;

impl Default for CcarenaExt {
    fn default() -> Self {
        Self {
            rng_state: 0x9E37_79B9_7F4A_7C15,
            params: std::ptr::null(),
            n_params: 0,
            trace_mode: 0,
            trace_pacing_gain: 0,
            trace_cwnd_gain: 0,
            trace_bw: 0,
            trace_var_ppm: TRACE_VAR_NONE,
            trace_extra_acked: TRACE_EXTRA_ACKED_NONE,
            tick_us: 1000,
            tick_phase_us: 0,
            ext_pad: 0,
            state: [0; CCA_STATE_WORDS],
        }
    }
}

/// `struct tcp_sock`: see the C header for each field's meaning and unit.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct TcpSock {
    pub inet_conn: InetConnectionSock,
    pub snd_cwnd: u32,
    pub snd_cwnd_cnt: u32,
    pub snd_cwnd_clamp: u32,
    pub snd_cwnd_stamp: u32,
    pub snd_ssthresh: u32,
    pub prior_cwnd: u32,
    pub prior_ssthresh: u32,
    pub srtt_us: u32,
    pub mdev_us: u32,
    pub packets_out: u32,
    pub sacked_out: u32,
    pub lost_out: u32,
    pub retrans_out: u32,
    pub delivered: u32,
    pub delivered_ce: u32,
    pub lost: u32,
    pub app_limited: u32,
    pub mss_cache: u32,
    pub snd_una: u32,
    pub snd_nxt: u32,
    pub max_packets_out: u32,
    pub rate_delivered: u32,
    pub rate_interval_us: u32,
    pub total_retrans: u32,
    pub rcv_wnd: u32,
    pub is_cwnd_limited: u8,
    pub rate_app_limited: u8,
    pub ecn_flags: u8,
    pub tp_pad: u8,
    pub tcp_mstamp: u64,
    pub tcp_clock_cache: u64,
    pub delivered_mstamp: u64,
    pub first_tx_mstamp: u64,
    pub tcp_wstamp_ns: u64,
    pub rtt_min: Minmax,
    pub cca: CcarenaExt,
}

unsafe extern "C" {
    fn ccarena_native_now_ms(tp: *const TcpSock) -> u32;
}

impl TcpSock {
    /// The sender host's jiffies at `tcp_mstamp`, counted in ms: what the
    /// congestion controls read (`cca_now_ms()`, src/clock.c), for Linux's
    /// own `tcp_jiffies32` stamps.
    pub fn jiffies_ms(&self) -> u32 {
        // SAFETY: the C function reads the struct it is given, nothing else.
        unsafe { ccarena_native_now_ms(self) }
    }

    /// `usecs_to_jiffies(us)` and back: `us` rounded up to whole ticks.
    pub fn jiffies_us(&self, us: u64) -> u64 {
        us.div_ceil(self.cca.tick_us as u64) * self.cca.tick_us as u64
    }

    /// `nsecs_to_jiffies(ns)` and back, in µs: `ns` cut down to whole ticks
    /// (Linux divides by the tick's length, truncating).
    pub fn nsecs_to_jiffies_us(&self, ns: u64) -> u64 {
        let tick_us = self.cca.tick_us as u64;
        ns / (tick_us * 1000) * tick_us
    }

    /// Sets the host's tick (`tick_us`, a whole number of ms) and where
    /// the µs clock's origin falls within one (`phase_us` < `tick_us`).
    pub fn set_tick(&mut self, tick_us: u32, phase_us: u32) {
        assert!(tick_us >= 1000 && tick_us.is_multiple_of(1000) && phase_us < tick_us, "tick {tick_us} us, phase {phase_us} us");
        self.cca.tick_us = tick_us;
        self.cca.tick_phase_us = phase_us;
    }
}

/// `struct rate_sample` (tcp_rate.c's output for one ACK).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct RateSample {
    pub prior_mstamp: u64,
    pub prior_delivered: u32,
    pub prior_delivered_ce: u32,
    pub delivered: i32,
    pub delivered_ce: i32,
    pub interval_us: std::os::raw::c_long,
    pub snd_interval_us: u32,
    pub rcv_interval_us: u32,
    pub rtt_us: std::os::raw::c_long,
    pub losses: i32,
    pub acked_sacked: u32,
    pub prior_in_flight: u32,
    pub last_end_seq: u32,
    pub is_app_limited: bool,
    pub is_retrans: bool,
    pub is_ack_delayed: bool,
    pub tx_in_flight: u32,
    pub lost: i32,
    pub is_ece: bool,
}

/// `struct ack_sample` (argument of `pkts_acked`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct AckSample {
    pub pkts_acked: u32,
    pub rtt_us: i32,
    pub in_flight: u32,
}

/// `enum tcp_ca_state`.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    Open = 0,
    Disorder = 1,
    Cwr = 2,
    Recovery = 3,
    Loss = 4,
}

/// `enum tcp_ca_event`.
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaEvent {
    TxStart = 0,
    CwndRestart = 1,
    CompleteCwr = 2,
    Loss = 3,
    EcnNoCe = 4,
    EcnIsCe = 5,
}

/// `enum sk_pacing`.
pub const SK_PACING_NONE: u8 = 0;
pub const SK_PACING_NEEDED: u8 = 1;
/// `tcp_ca_ack_event_flags`.
pub const CA_ACK_SLOWPATH: u32 = 1;
pub const CA_ACK_WIN_UPDATE: u32 = 2;
pub const CA_ACK_ECE: u32 = 4;
/// `tp->ecn_flags` (ccarena_compat.h: TCP_ECN_OK for classic and AccECN).
pub const TCP_ECN_OK: u8 = 1;
pub const TCP_ECN_QUEUE_CWR: u8 = 2;
pub const CCA_ECN_ACCECN: u8 = 16;

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use std::ffi::{c_char, CStr};
    use std::mem::{offset_of, size_of};

    #[test]
    fn jiffies_move_a_tick_at_a_time() {
        let mut sk = TcpSock { tcp_mstamp: 12_345_678, ..Default::default() };
        assert_eq!(sk.jiffies_ms(), 12_345, "HZ=1000 by default: the µs clock in whole ms");
        sk.set_tick(4000, 0);
        assert_eq!(sk.jiffies_ms(), 12_344);
        sk.set_tick(4000, 1_000);
        assert_eq!(sk.jiffies_ms(), 12_344); // (12_345_678 + 1000) / 4000 = 3086
        sk.set_tick(4000, 2_500);
        assert_eq!(sk.jiffies_ms(), 12_348); // 3087 ticks
        // From a tick's edge (1_001_500 + 2_500 = 251 ticks), 40 ms: ten ticks.
        let steps: std::collections::BTreeSet<u32> = (0..40_000u64)
            .map(|us| TcpSock { tcp_mstamp: 1_001_500 + us, cca: sk.cca, ..Default::default() }.jiffies_ms())
            .collect();
        assert_eq!(steps.len(), 10, "40 ms at HZ=250: ten ticks");
        assert!(steps.iter().all(|ms| ms % 4 == 0));
    }

    #[test]
    fn usecs_round_up_to_ticks_and_nsecs_down() {
        let mut sk = TcpSock::default();
        sk.set_tick(4000, 0);
        assert_eq!(sk.jiffies_us(1), 4000, "usecs_to_jiffies rounds up");
        assert_eq!(sk.jiffies_us(8000), 8000);
        assert_eq!(sk.nsecs_to_jiffies_us(3_999_999), 0, "nsecs_to_jiffies truncates");
        assert_eq!(sk.nsecs_to_jiffies_us(6_000_000), 4000);
        assert_eq!(sk.nsecs_to_jiffies_us(8_000_000), 8000);
    }

    #[repr(C)]
    struct LayoutRow {
        name: *const c_char,
        value: u64,
    }

    extern "C" {
        fn ccarena_native_layout(out: *mut LayoutRow, cap: usize) -> usize;
    }

    /// Every sizeof/offsetof the C compiler reports for ccarena_native.h.
    fn c_layout() -> BTreeMap<String, u64> {
        let n = unsafe { ccarena_native_layout(std::ptr::null_mut(), 0) };
        let mut rows: Vec<LayoutRow> = (0..n)
            .map(|_| LayoutRow { name: std::ptr::null(), value: 0 })
            .collect();
        assert_eq!(unsafe { ccarena_native_layout(rows.as_mut_ptr(), n) }, n);
        rows.iter()
            .map(|r| {
                let name = unsafe { CStr::from_ptr(r.name) }.to_str().unwrap().to_string();
                (name, r.value)
            })
            .collect()
    }

    macro_rules! rust_layout {
        ($($cname:literal : $ty:ty { $($cf:ident),* $(,)? })*) => {{
            let mut m = BTreeMap::new();
            $(
                m.insert($cname.to_string(), size_of::<$ty>() as u64);
                $( m.insert(format!("{}.{}", $cname, stringify!($cf)),
                            offset_of!($ty, $cf) as u64); )*
            )*
            m
        }};
    }

    #[test]
    fn layout_matches_c() {
        let rust = rust_layout! {
            "minmax_sample": MinmaxSample { t, v }
            "minmax": Minmax { s }
            "sock": Sock { sk_pacing_rate, sk_max_pacing_rate, sk_gso_max_size,
                           sk_gso_max_segs, sk_pacing_status, sk_pacing_shift }
            "inet_connection_sock": InetConnectionSock { icsk_inet, icsk_ca_state,
                           icsk_ca_initialized, icsk_pad, icsk_ca_priv }
            "ccarena_ext": CcarenaExt { rng_state, params, n_params, trace_mode,
                           trace_pacing_gain, trace_cwnd_gain, trace_bw, trace_var_ppm,
                           trace_extra_acked, tick_us, tick_phase_us, ext_pad, state }
            "tcp_sock": TcpSock { inet_conn, snd_cwnd, snd_cwnd_cnt, snd_cwnd_clamp,
                           snd_cwnd_stamp, snd_ssthresh, prior_cwnd, prior_ssthresh,
                           srtt_us, mdev_us, packets_out, sacked_out, lost_out,
                           retrans_out, delivered, delivered_ce, lost, app_limited,
                           mss_cache, snd_una, snd_nxt, max_packets_out,
                           rate_delivered, rate_interval_us, total_retrans, rcv_wnd,
                           is_cwnd_limited, rate_app_limited, ecn_flags, tp_pad,
                           tcp_mstamp, tcp_clock_cache, delivered_mstamp,
                           first_tx_mstamp, tcp_wstamp_ns, rtt_min, cca }
            "rate_sample": RateSample { prior_mstamp, prior_delivered,
                           prior_delivered_ce, delivered, delivered_ce, interval_us,
                           snd_interval_us, rcv_interval_us, rtt_us, losses,
                           acked_sacked, prior_in_flight, last_end_seq,
                           is_app_limited, is_retrans, is_ack_delayed, tx_in_flight, lost, is_ece }
            "ack_sample": AckSample { pkts_acked, rtt_us, in_flight }
            "tcp_congestion_ops": crate::RawOps { ssthresh, cong_avoid, set_state,
                           cwnd_event, in_ack_event, pkts_acked, min_tso_segs,
                           cong_control, undo_cwnd, sndbuf_expand, init, release,
                           flags, name }
            "ccarena_param": crate::RawParam { name, dflt }
        };
        let mut rust = rust;
        for (name, value) in [
            ("CA_ACK_SLOWPATH", CA_ACK_SLOWPATH as u64),
            ("CA_ACK_WIN_UPDATE", CA_ACK_WIN_UPDATE as u64),
            ("CA_ACK_ECE", CA_ACK_ECE as u64),
            ("TCP_ECN_OK", TCP_ECN_OK as u64),
            ("TCP_ECN_QUEUE_CWR", TCP_ECN_QUEUE_CWR as u64),
            ("CCA_ECN_ACCECN", CCA_ECN_ACCECN as u64),
        ] {
            rust.insert(name.to_string(), value);
        }
        let c = c_layout();
        // Same set of rows (a field added on one side only is a mismatch)...
        let c_keys: Vec<&String> = c.keys().collect();
        let r_keys: Vec<&String> = rust.keys().collect();
        assert_eq!(c_keys, r_keys, "layout.c and this test list different fields");
        // ...and the same numbers.
        for (k, v) in &c {
            assert_eq!(rust[k], *v, "{k}: C says {v}, Rust says {}", rust[k]);
        }
        // The CC's private area is Linux's 13 u64s (ICSK_CA_PRIV_SIZE = 104).
        assert_eq!(c["inet_connection_sock.icsk_pad"] + 6, c["inet_connection_sock.icsk_ca_priv"]);
        assert_eq!(size_of::<[u64; ICSK_CA_PRIV_WORDS]>(), 104);
    }
}
