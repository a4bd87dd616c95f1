//! The TCP sender: the interface the event loop uses, the state it owns,
//! and the entry points. The work is split by concern:
//!
//! - [`super::ack`]: `tcp_ack` — SACK tagging, cumulative ACK processing,
//!   RTT samples, rate sample, CC calls (`tcp_cong_control`);
//! - [`super::recovery`]: the CA state machine (`tcp_fastretrans_alert`),
//!   Recovery with PRR, Loss (`tcp_enter_loss`);
//! - [`super::output`]: `tcp_write_xmit`, `tcp_xmit_retransmit_queue`,
//!   cwnd validation;
//! - [`super::timer`]: RTO, RACK reorder timer, tail loss probe;
//! - [`super::undo`]: undoing spurious reductions (DSACK, Eifel, F-RTO);
//! - [`super::app_limited`]: an application that writes less than the
//!   sender could send ([`crate::app`]);
//! - data structures with their own tests: [`super::scoreboard`],
//!   [`super::rate_sample`], [`super::rack`], [`super::rtt`],
//!   [`super::pacing`], [`super::minmax`].
//!
//! Sequence numbers are segment indices (the data source is bulk: every
//! segment carries `mss` bytes); the `tcp_sock` fields that CCs read in
//! bytes (`snd_una`, `snd_nxt`) are kept as segment * mss.
//!
//! Clock: Linux's µs clocks (`tcp_mstamp`, skb timestamps) are
//! `now_ns / 1000 + CLOCK_BASE_US`. The base stands for the host having
//! booted before the connection: Linux uses 0 as "no timestamp"
//! (`tx.delivered_mstamp`, `rs->prior_mstamp`), which a flow starting at
//! simulated time 0 would otherwise hit.

use super::pacing::{self, Pacer};
use super::rack::Rack;
use super::rate_sample::packets_in_flight;
use super::recovery::Recovery;
use super::rtt::RttEstimator;
use super::scoreboard::Scoreboard;
use super::timer::XmitTimer;
use super::timestamp::TsEcho;
use super::undo::Undo;
use crate::host::Tick;
use super::SenderTelemetry;
use crate::app::AppSource;
use crate::config::EcnMode;
use crate::distribution::Distribution;
use crate::packet::{AckPacket, DataPacket};
use cc_native::{CaState, CongestionOps, TcpSock, CCA_ECN_ACCECN, TCP_ECN_OK};

/// µs added to the simulated clock for Linux's µs timestamps (see above).
pub const CLOCK_BASE_US: u64 = 1_000_000;

/// Linux's µs clock (`tcp_mstamp`) at simulated time `ns`, on every
/// simulated host (see above).
pub fn linux_clock_us(ns: u64) -> u64 {
    ns / 1000 + CLOCK_BASE_US
}
/// Linux TCP_INIT_CWND.
pub const INIT_CWND: u32 = 10;
/// Linux TCP_INFINITE_SSTHRESH.
pub const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;
/// Largest GSO packet (GSO_LEGACY_MAX_SIZE), bytes.
pub const GSO_MAX_SIZE: u32 = 65_536;
/// Device GSO segment limit (GSO_MAX_SEGS).
pub const GSO_MAX_SEGS: u16 = 65_535;
/// Linux default `sk_pacing_shift`: TSO bursts of ~1 ms.
pub const PACING_SHIFT: u8 = 10;

/// How to build one flow's sender.
#[derive(Clone, Debug)]
pub struct SenderConfig {
    pub flow: u32,
    /// Payload bytes per segment (1448).
    pub mss: u32,
    /// Bytes on the bottleneck wire per full segment (1514).
    pub wire_bytes: u32,
    /// Stop sending new data at this time (retransmissions still go).
    pub stop_ns: Option<u64>,
    /// New data the application has, segments (None: unlimited, bulk).
    pub size_segments: Option<u32>,
    /// Seed of the CC's per-flow RNG (`tcp_sock.cca.rng_state`), nonzero.
    pub rng_seed: u64,
    /// CC parameter overrides (`tcp_sock.cca.params`).
    pub params: Vec<u64>,
    /// ECN negotiated with the receiver.
    pub ecn: EcnMode,
    /// The application's writes (None: it always has data).
    pub app: Option<AppSource>,
    /// The host's jiffies: a tick and where the clock's origin falls in
    /// one, µs ([`crate::host::Tick`]).
    pub tick: Tick,
}

/// One flow's TCP sender running one congestion control.
pub struct TcpSender {
    pub(super) flow: u32,
    pub(super) mss: u32,
    pub(super) wire_bytes: u32,
    pub(super) stop_ns: Option<u64>,
    /// New data the application has, segments (None: bulk).
    pub(super) size_segments: Option<u32>,
    pub(super) ecn: EcnMode,
    /// AccECN: the receiver's CE count on the latest ACK processed.
    pub(super) ce_acked: u32,
    pub(super) ops: CongestionOps,
    /// Backing store of `sk.cca.params`; must outlive every CC call.
    _params: Vec<u64>,
    /// The socket the CC sees; authoritative for every field it has.
    pub(super) sk: TcpSock,
    pub(super) sb: Scoreboard,
    pub(super) rtt: RttEstimator,
    pub(super) rack: Rack,
    pub(super) rec: Recovery,
    pub(super) undo: Undo,
    /// The timestamp option of the ACK being processed.
    pub(super) ts: TsEcho,
    pub(super) pacer: Pacer,
    /// The pending transmit timer (`icsk_pending` + its deadline).
    pub(super) timer: Option<XmitTimer>,
    /// The host's jiffies, on which the transmit timer fires.
    pub(super) tick: Tick,
    /// Simulated time of the event being processed, ns.
    pub(super) now_ns: u64,
    pub(super) started: bool,
    /// RTT from the connection handshake, applied at start.
    handshake_rtt_ns: Option<u64>,
    /// `rx_opt.ts_recent`: the TSval of the latest ACK (at first the
    /// SYN-ACK's), echoed as every data segment's TSecr (0: none).
    pub(super) ts_recent: u32,
    /// `tp->cwnd_usage_seq` (segments): end of the window whose use
    /// `is_cwnd_limited`/`max_packets_out` describe.
    pub(super) cwnd_usage_seq: u32,
    /// Scratch for newly SACKed ranges (kept to avoid allocating per ACK).
    pub(super) sack_scratch: Vec<(u32, u32)>,
    pub(super) stats: SenderStats,
    pub(super) last_rtt_us: u32,
    /// Whether RTT samples go into `rtt_window`.
    pub(super) rtt_recording: bool,
    /// RTT samples (µs) taken while recording (the measurement window).
    pub(super) rtt_window: Distribution,
    /// The application's writes (None: it always has data).
    pub(super) app: Option<AppSource>,
    /// Whether the sender had sent all the application wrote at its last
    /// poll (the next write is then one to an empty queue).
    pub(super) app_caught_up: bool,
    /// When data last left (`tp->lsndtime`), ns.
    pub(super) last_send_ns: u64,
}

/// Counters for the results.
#[derive(Clone, Copy, Debug, Default)]
pub struct SenderStats {
    pub retransmits: u64,
    pub rto_count: u64,
    pub sent_segments: u64,
    pub tlp_count: u64,
}

impl TcpSender {
    pub fn new(cfg: SenderConfig, ops: CongestionOps) -> Self {
        let params = cfg.params;
        // tcp_init_sock() and sock_init_data().
        let mut sk = TcpSock {
            snd_cwnd: INIT_CWND,
            snd_ssthresh: INFINITE_SSTHRESH,
            snd_cwnd_clamp: u32::MAX,
            mss_cache: cfg.mss,
            rcv_wnd: u32::MAX,
            app_limited: u32::MAX, // app-limited until the first delivery
            rate_app_limited: 1,
            ..Default::default()
        };
        RttEstimator::init_sock(&mut sk);
        {
            let s = &mut sk.inet_conn.icsk_inet;
            s.sk_pacing_rate = pacing::RATE_UNSET as _;
            s.sk_max_pacing_rate = pacing::RATE_UNSET as _;
            s.sk_gso_max_size = GSO_MAX_SIZE;
            s.sk_gso_max_segs = GSO_MAX_SEGS;
            s.sk_pacing_shift = PACING_SHIFT;
        }
        sk.inet_conn.icsk_ca_state = CaState::Open as u8;
        sk.ecn_flags = match cfg.ecn {
            EcnMode::Off => 0,
            EcnMode::Classic => TCP_ECN_OK,
            EcnMode::Accecn => TCP_ECN_OK | CCA_ECN_ACCECN,
        };
        sk.cca.rng_state = if cfg.rng_seed == 0 { 0x9E37_79B9_7F4A_7C15 } else { cfg.rng_seed };
        sk.cca.params = if params.is_empty() { std::ptr::null() } else { params.as_ptr() };
        sk.cca.n_params = params.len() as u32;
        sk.set_tick(cfg.tick.tick_us, cfg.tick.phase_us);
        Self {
            flow: cfg.flow,
            mss: cfg.mss,
            wire_bytes: cfg.wire_bytes,
            stop_ns: cfg.stop_ns,
            size_segments: cfg.size_segments,
            ecn: cfg.ecn,
            ce_acked: 0,
            ops,
            _params: params,
            sk,
            sb: Scoreboard::default(),
            rtt: RttEstimator::default(),
            rack: Rack::default(),
            rec: Recovery::default(),
            undo: Undo::default(),
            ts: TsEcho::default(),
            pacer: Pacer::default(),
            timer: None,
            tick: cfg.tick,
            now_ns: 0,
            started: false,
            handshake_rtt_ns: None,
            ts_recent: 0,
            cwnd_usage_seq: 0,
            sack_scratch: Vec::with_capacity(8),
            stats: SenderStats::default(),
            last_rtt_us: 0,
            rtt_recording: false,
            rtt_window: Distribution::default(),
            app: cfg.app,
            app_caught_up: false,
            last_send_ns: 0,
        }
    }

    /// Optional, before [`Self::start`]: the RTT the SYN/SYN-ACK exchange
    /// measured. Linux starts data transfer with this sample in srtt,
    /// rtt_min and the RTO, and BBR sizes its initial pacing rate from it;
    /// without it the first RTT sample comes from the first data ACK.
    pub fn set_handshake_rtt(&mut self, rtt_ns: u64) {
        self.handshake_rtt_ns = Some(rtt_ns);
    }

    /// The flow starts: CC init (`tcp_init_transfer`); the first
    /// [`Self::poll`] sends the initial window.
    pub fn start(&mut self, now_ns: u64) {
        if let Some(app) = &mut self.app {
            app.start(now_ns);
        }
        self.set_clock(now_ns);
        if let Some(rtt_ns) = self.handshake_rtt_ns {
            // The SYN-ACK left the receiver half the handshake's round
            // trip ago; its TSval is what the first data echoes.
            self.ts_recent = super::timestamp::tsval_of(self.clock_us(now_ns.saturating_sub(rtt_ns / 2)));
            let rtt_us = (rtt_ns / 1000) as i64;
            let now_ms = self.now_ms();
            RttEstimator::update_rtt_min(&mut self.sk, rtt_us as u32, now_ms);
            self.rtt.estimate(&mut self.sk, rtt_us, 0, 0);
            self.rtt.set_rto(&self.sk);
            if !self.ops.has_cong_control() {
                pacing::update_pacing_rate(&mut self.sk);
            }
        }
        self.sk.snd_cwnd_stamp = self.now_ms();
        self.ops.init(&mut self.sk);
        self.sk.inet_conn.icsk_ca_initialized = 1;
        self.started = true;
    }

    /// An ACK arrived (see [`super::ack`]).
    pub fn on_ack(&mut self, now_ns: u64, ack: &AckPacket) {
        self.set_clock(now_ns);
        if self.started {
            self.process_ack(ack);
        }
    }

    /// Fires due timers, then sends what cwnd and pacing allow now:
    /// lost segments first (`tcp_xmit_retransmit_queue`), then new data
    /// (`tcp_write_xmit`). After an ACK for which F-RTO chose new data
    /// (`tcp_xmit_recovery(REXMIT_NEW)`), new data goes first and the lost
    /// segments wait unless none could be sent.
    pub fn poll(&mut self, now_ns: u64, out: &mut Vec<DataPacket>) {
        self.set_clock(now_ns);
        if !self.started {
            return;
        }
        self.app_write_check();
        let mut frto_new_sent = false;
        if std::mem::take(&mut self.rec.rexmit_new) {
            self.write_xmit(0, out);
            frto_new_sent = self.sb.nxt() > self.rec.high_seq;
            if !frto_new_sent {
                self.rec.frto = false;
            }
        }
        if let Some(t) = self.timer {
            if t.deadline_ns <= now_ns {
                self.timer = None;
                self.fire_timer(t.kind, out);
            }
        }
        if !frto_new_sent && self.sk.lost_out > self.sk.retrans_out && self.cwnd_room() > 0 {
            self.xmit_retransmit_queue(out);
        }
        if self.has_new_data() {
            self.write_xmit(0, out);
        } else {
            super::rate_sample::check_app_limited(&mut self.sk, false);
        }
        self.app_note_caught_up();
    }

    /// When [`Self::poll`] must run next: the transmit timer, or the pacing
    /// release if something could be sent then.
    #[inline]
    pub fn next_wakeup_ns(&self) -> Option<u64> {
        if !self.started {
            return None;
        }
        let mut t = self.timer.map(|t| t.deadline_ns);
        let wants_to_send = self.has_new_data() || self.sk.lost_out > self.sk.retrans_out;
        if wants_to_send && self.cwnd_room() > 0 && self.pacer.blocked(&self.sk, self.now_ns) {
            let release = self.pacer.wstamp_ns;
            t = Some(t.map_or(release, |x| x.min(release)));
        }
        if let Some(write) = self.app_next_write_ns() {
            t = Some(t.map_or(write, |x| x.min(write)));
        }
        t
    }

    /// Whether every segment the flow will send has been sent and
    /// cumulatively acknowledged (a sized flow's end; never for a bulk one).
    pub fn all_acked(&self) -> bool {
        self.size_segments.is_some_and(|n| self.sb.una() >= n)
    }

    /// `tp->delivered_ce`: segments delivered with CE feedback.
    pub fn delivered_ce(&self) -> u32 {
        self.sk.delivered_ce
    }

    pub fn telemetry(&self) -> SenderTelemetry {
        let sk = &self.sk;
        let rate = pacing::rate(sk);
        let min_rtt = sk.rtt_min.s[0].v;
        SenderTelemetry {
            cwnd: sk.snd_cwnd,
            inflight: packets_in_flight(sk),
            pacing_rate_bps: if rate == pacing::RATE_UNSET { 0.0 } else { rate as f64 * 8.0 },
            srtt_us: sk.srtt_us >> 3,
            last_rtt_us: self.last_rtt_us,
            min_rtt_us: if min_rtt == u32::MAX { 0 } else { min_rtt },
            ca_state: sk.inet_conn.icsk_ca_state,
            cc_mode: sk.cca.trace_mode,
            pacing_gain: sk.cca.trace_pacing_gain as f64 / 256.0,
            cwnd_gain: sk.cca.trace_cwnd_gain as f64 / 256.0,
            bw_estimate_bps: sk.cca.trace_bw as f64 * 8.0,
            delivery_rate_bps: if sk.rate_interval_us == 0 {
                0.0
            } else {
                sk.rate_delivered as f64 * self.mss as f64 * 8e6 / sk.rate_interval_us as f64
            },
            cc_var: if sk.cca.trace_var_ppm == cc_native::TRACE_VAR_NONE {
                f64::NAN
            } else {
                sk.cca.trace_var_ppm as f64 / 1e6
            },
            extra_acked: if sk.cca.trace_extra_acked == cc_native::TRACE_EXTRA_ACKED_NONE {
                f64::NAN
            } else {
                sk.cca.trace_extra_acked as f64
            },
            retransmits_total: self.stats.retransmits,
            rto_count: self.stats.rto_count,
            sent_segments: self.stats.sent_segments,
        }
    }

    /// Record RTT samples from now on (or stop).
    pub fn set_rtt_recording(&mut self, on: bool) {
        self.rtt_recording = on;
    }

    /// The RTT samples (µs) recorded so far.
    pub fn rtt_window(&mut self) -> &mut Distribution {
        &mut self.rtt_window
    }

    /// Segments ever sent for the first time (Linux's `snd_nxt` / mss).
    pub fn snd_nxt(&self) -> u32 {
        self.sb.nxt()
    }

    /// First segment not cumulatively acknowledged.
    pub fn snd_una(&self) -> u32 {
        self.sb.una()
    }

    /// The socket as the CC sees it (read-only).
    pub fn sock(&self) -> &TcpSock {
        &self.sk
    }

    // ---------------------------------------------------------- helpers

    pub(super) fn set_clock(&mut self, now_ns: u64) {
        self.now_ns = now_ns;
        if let Some(app) = &mut self.app {
            app.advance(now_ns);
        }
        let us = self.clock_us(now_ns);
        self.sk.tcp_mstamp = us;
        self.sk.tcp_clock_cache = self.clock_ns(now_ns);
        self.sk.tcp_wstamp_ns = self.clock_ns(self.pacer.wstamp_ns.max(now_ns));
    }

    /// Linux's µs clock for a simulated time.
    pub(super) fn clock_us(&self, ns: u64) -> u64 {
        linux_clock_us(ns)
    }

    /// Linux's ns clock (`tcp_clock_ns`) for a simulated time.
    pub(super) fn clock_ns(&self, ns: u64) -> u64 {
        ns + CLOCK_BASE_US * 1000
    }

    /// `tcp_jiffies32`, counted in ms: the host's tick, as the CC reads it.
    pub(super) fn now_ms(&self) -> u32 {
        self.sk.jiffies_ms()
    }

    /// `usecs_to_jiffies` and back: `us` rounded up to whole ticks.
    pub(super) fn jiffies_us(&self, us: u64) -> u64 {
        self.sk.jiffies_us(us)
    }

    pub(super) fn ca_state(&self) -> u8 {
        self.sk.inet_conn.icsk_ca_state
    }

    pub(super) fn in_flight(&self) -> u32 {
        packets_in_flight(&self.sk)
    }

    /// cwnd − in flight, may be negative.
    pub(super) fn cwnd_room(&self) -> i64 {
        self.sk.snd_cwnd as i64 - self.in_flight() as i64
    }

    /// Has the application data not yet sent (before `stop_ns`, below
    /// `size_segments` for a sized flow, and written by an
    /// application-limited one's application)?
    pub(super) fn has_new_data(&self) -> bool {
        self.stop_ns.is_none_or(|s| self.now_ns < s)
            && self.size_segments.is_none_or(|n| self.sb.nxt() < n)
            && self.app_has_data()
    }

    /// Segment number → `tcp_sock` byte sequence.
    pub(super) fn seq_bytes(&self, seg: u32) -> u32 {
        seg.wrapping_mul(self.mss)
    }

    /// Keeps `snd_una`/`snd_nxt`/`packets_out` of the socket in step with
    /// the scoreboard.
    pub(super) fn sync_seq(&mut self) {
        self.sk.snd_una = self.seq_bytes(self.sb.una());
        self.sk.snd_nxt = self.seq_bytes(self.sb.nxt());
    }

    pub(super) fn record_rtt(&mut self, rtt_us: u32) {
        self.last_rtt_us = rtt_us;
        if self.rtt_recording {
            self.rtt_window.record(rtt_us as u64);
        }
    }

    /// Test hook: the scoreboard and the socket agree.
    #[cfg(test)]
    pub(super) fn check_invariants(&self) -> Result<(), String> {
        self.sb.check(&self.sk)?;
        if self.sk.snd_nxt != self.seq_bytes(self.sb.nxt()) {
            return Err("snd_nxt out of step".into());
        }
        Ok(())
    }
}
