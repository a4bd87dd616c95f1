//! An application-limited sender ([`crate::app`]): what Linux does when the
//! application, not cwnd, decides what goes out.
//!
//! - The sender has new data only up to what the application has written
//!   ([`TcpSender::app_has_data`]); once it has sent it all it waits, and
//!   wakes when the application writes the next segment
//!   ([`TcpSender::app_next_write_ns`]).
//! - Each write that finds the sender caught up is a `tcp_sendmsg` on an
//!   empty write queue ([`TcpSender::on_app_write`]), which in Linux:
//!   - calls `tcp_rate_check_app_limited` (tcp.c, `tcp_sendmsg_locked`):
//!     not cwnd-limited and nothing left to retransmit, the flow is
//!     app-limited until what is in flight now is delivered, so the rate
//!     samples of what it sends meanwhile carry `rs->is_app_limited` and
//!     BBR keeps them out of its bandwidth filter unless they are higher;
//!   - calls `tcp_slow_start_after_idle_check` (`tcp_skb_entail`): with
//!     nothing in flight, after an idle time above the RTO, a congestion
//!     control without `cong_control` restarts from at most the initial
//!     window (`tcp_cwnd_restart`, RFC 2861 / RFC 5681 4.1; sysctl
//!     `tcp_slow_start_after_idle = 1`, Linux's default). BBR handles idle
//!     itself, on `CA_EVENT_TX_START`.
//!
//! Not modelled: `tcp_cwnd_validate`'s decay of a cwnd unused for an RTO
//! (`tcp_cwnd_application_limited`, RFC 2861). Its clock, `snd_cwnd_stamp`,
//! is refreshed by every ACK that may raise cwnd (`tcp_cong_avoid`), so it
//! needs an RTO without one while not cwnd-limited; after a silence the
//! restart above comes first.
//! A sender without an application model (bulk or sized) never runs out of
//! data before its end, so none of this applies to it, and it is skipped
//! (`app` is None): such flows run as they always did.

use super::rate_sample;
use super::sender::INIT_CWND;
use super::TcpSender;
use crate::app::Written;
use cc_native::CaEvent;

impl TcpSender {
    /// Whether the application has written data not yet sent (always,
    /// without an application model).
    #[inline]
    pub(super) fn app_has_data(&self) -> bool {
        match self.app.as_ref().map(|a| a.written(self.now_ns)) {
            None | Some(Written::Unlimited) => true,
            Some(Written::Segments(n)) => (self.sb.nxt() as u64) < n,
        }
    }

    /// When the application writes what the sender is waiting for, if it
    /// waits for nothing else (a stop, the end of a sized flow's data).
    #[inline]
    pub(super) fn app_next_write_ns(&self) -> Option<u64> {
        let app = self.app.as_ref()?;
        let done = self.stop_ns.is_some_and(|s| self.now_ns >= s)
            || self.size_segments.is_some_and(|n| self.sb.nxt() >= n);
        if done || self.app_has_data() {
            return None;
        }
        app.next_write_ns(self.now_ns, self.sb.nxt() as u64)
    }

    /// Called by `poll` before it sends: an application write to a sender
    /// that had sent everything (`tcp_sendmsg` on an empty write queue).
    #[inline]
    pub(super) fn app_write_check(&mut self) {
        if self.app_caught_up && self.app_has_data() {
            self.app_caught_up = false;
            self.on_app_write();
        }
    }

    /// Called by `poll` after it sent: whether the sender has caught up
    /// with its application (the next write then finds the queue empty).
    #[inline]
    pub(super) fn app_note_caught_up(&mut self) {
        self.app_caught_up = self.app.is_some() && !self.app_has_data();
    }

    /// `tcp_sendmsg_locked` and `tcp_skb_entail` for a write that finds
    /// nothing unsent.
    fn on_app_write(&mut self) {
        rate_sample::check_app_limited(&mut self.sk, false);
        // tcp_slow_start_after_idle_check()
        if self.ops.has_cong_control() || self.sk.packets_out != 0 {
            return;
        }
        let idle_us = (self.now_ns.saturating_sub(self.last_send_ns) / 1_000) as i64;
        if idle_us > self.rtt.rto_us as i64 {
            self.cwnd_restart(idle_us);
        }
    }

    /// `tcp_cwnd_restart()`: after `idle_us` without sending, cwnd halves
    /// once per RTO of idleness, down to the restart window
    /// min(initial window, cwnd).
    fn cwnd_restart(&mut self, idle_us: i64) {
        let restart_cwnd = INIT_CWND.min(self.sk.snd_cwnd);
        self.ops.cwnd_event(&mut self.sk, CaEvent::CwndRestart);
        self.sk.snd_ssthresh = self.current_ssthresh();
        let mut cwnd = self.sk.snd_cwnd;
        let mut delta = idle_us - self.rtt.rto_us as i64;
        while delta > 0 && cwnd > restart_cwnd {
            cwnd >>= 1;
            delta -= self.rtt.rto_us as i64;
        }
        self.sk.snd_cwnd = cwnd.max(restart_cwnd);
        self.sk.snd_cwnd_stamp = self.now_ms();
    }
}

#[cfg(test)]
mod tests {
    use super::super::testnet::{TestNet, MSS, WIRE};
    use crate::app::AppSource;
    use crate::config::{AppConfig, OnOffConfig};
    use std::cell::Cell;
    use std::rc::Rc;

    const MS: u64 = 1_000_000;

    fn app(rate_bps: Option<u64>, on_off: Option<(u64, u64)>) -> AppSource {
        let on_off = on_off.map(|(on_ns, off_ns)| OnOffConfig { on_ns, off_ns, exponential: false });
        AppSource::for_flow(&AppConfig { rate_bps, on_off }, MSS, 1, 0)
    }

    /// BBR at full speed for 3 s measures the 20 Mbit/s path; then its
    /// application writes 2 Mbit/s for 5 s (125 round trips, far beyond
    /// the bandwidth filter's 10). Every write finds the sender caught up,
    /// so the samples are app-limited: BBR keeps them out of its filter and
    /// its estimate stays the path's, while it sends what is written.
    #[test]
    fn app_limited_samples_do_not_lower_bbrs_bandwidth_estimate() {
        let link_bps = 20_000_000u64;
        let mut net = TestNet::new("bbr", 40 * MS, Some(link_bps));
        net.buffer_pkts = Some(200);
        net.start(0);
        net.run_until(3_000 * MS);
        let before = net.sender.telemetry().bw_estimate_bps;
        let path_goodput = link_bps as f64 * MSS as f64 / WIRE as f64;
        assert!((before / path_goodput - 1.0).abs() < 0.02, "bulk estimate {before}");
        let sent = net.sender.snd_nxt() as u64;
        net.sender.app = Some(app(Some(2_000_000), None).taking_over(3_000 * MS, sent));
        // From 4 s on: what was delivered, and at how many events the flow
        // was marked app-limited (`tp->app_limited`, the bubble).
        let log = Rc::new(Cell::new((0u32, 0u32, 0u32)));
        let l2 = log.clone();
        net.on_event = Some(Box::new(move |t, snd| {
            let (delivered, marked, events) = l2.get();
            if t <= 4_000 * MS {
                l2.set((snd.sk.delivered, 0, 0));
            } else {
                l2.set((delivered, marked + (snd.sk.app_limited != 0) as u32, events + 1));
            }
        }));
        net.run_until(8_000 * MS);
        let t = net.sender.telemetry();
        assert!((t.bw_estimate_bps / before - 1.0).abs() < 0.02, "estimate {} after {before}", t.bw_estimate_bps);
        // 4 s of 2 Mbit/s: 690 segments delivered, give or take one.
        let (delivered, marked, events) = log.get();
        let goodput = (net.sender.sk.delivered - delivered) as f64 * MSS as f64 * 8.0 / 4.0;
        assert!((goodput / 2e6 - 1.0).abs() < 0.01, "goodput {goodput}");
        assert!(marked as f64 >= 0.99 * events as f64, "app-limited at {marked} of {events} events");
        assert_eq!(t.retransmits_total, 0);
    }

    /// CUBIC ON for 2 s (bulk), then OFF for 1 s, more than an RTO: the
    /// first write after the silence finds nothing in flight, and cwnd
    /// restarts: halved once per RTO of the silence beyond the first, not
    /// below the initial window (`tcp_cwnd_restart`); BBR, which has
    /// `cong_control`, keeps its cwnd and handles the idle time itself.
    #[test]
    fn a_silence_longer_than_the_rto_restarts_cubics_window() {
        for (cc, restarts) in [("cubic", true), ("bbr", false)] {
            let mut net = TestNet::new(cc, 40 * MS, Some(10_000_000));
            net.buffer_pkts = Some(100);
            net.sender.app = Some(app(None, Some((2_000 * MS, 1_000 * MS))));
            net.start(0);
            net.run_until(2_999 * MS);
            let before = net.sender.telemetry();
            assert_eq!(before.inflight, 0, "{cc}: idle");
            assert!(before.cwnd > 40, "{cc}: cwnd {} after 2 s", before.cwnd);
            let sent = net.sent.len();
            net.run_until(3_000 * MS);
            let burst = net.sent.len() - sent;
            if restarts {
                let rto_us = net.sender.rtt.rto_us as u64;
                let halvings = (1_000_000 - 1) / rto_us; // while (idle -= rto) > 0
                let want = (before.cwnd >> halvings).max(super::INIT_CWND);
                assert!(halvings >= 2 && want < before.cwnd, "{cc}: rto {rto_us} us");
                assert_eq!(net.sender.sk.snd_cwnd, want, "{cc}: cwnd {} restarted", before.cwnd);
                assert_eq!(burst, want as usize, "{cc}: the restart window's burst");
                assert!(net.sender.sk.snd_ssthresh >= before.cwnd * 3 / 4, "{cc}: ssthresh remembers the window");
            } else {
                assert_eq!(net.sender.sk.snd_cwnd, before.cwnd, "{cc}: cwnd kept");
            }
        }
    }
}
