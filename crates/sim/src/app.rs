//! Application-limited senders: how much an application has written into
//! its socket by a given instant, when a sender only sends what was written.
//!
//! A bulk flow's application always has data; real ones often do not: a
//! video server writes at the video's bit rate, a request-response
//! service in bursts with silences between. Then the sender runs out of
//! data with room left in cwnd, and the rate samples it takes measure the
//! application, not the path. Linux marks them (`tcp_rate_check_app_limited`
//! at each write, `rs->is_app_limited`) so that BBR's bandwidth filter
//! ignores them unless they are higher than its estimate; this module
//! gives the sender ([`crate::tcp`]) an application that exercises that.
//!
//! The model, from the flow's start `t0`:
//!
//! ```text
//!   ON/OFF:   [ON t0..t1)[OFF t1..t2)[ON t2..t3)...   (always ON without periods)
//!             period lengths fixed, or exponential with the given means
//!   written(t) = floor(rate x (ON time in [t0, t)) / (8 x mss))   segments   (with a rate)
//!              = unlimited while ON, nothing new while OFF         (without a rate)
//! ```
//! so a rate-capped application writes one segment at a time, evenly
//! while ON (a constant-bit-rate source: what the sender has not sent when
//! an OFF period begins stays in its buffer), and an unlimited one is a
//! bulk sender that pauses while OFF (exponential periods: a Markov ON/OFF
//! source). Every draw comes from the flow's own stream of the run's seed.

use crate::config::AppConfig;
use crate::rng::SimRng;

/// Added to the run's seed, times (flow index + 1), for a flow's ON/OFF
/// stream: another odd constant than [`crate::jitter`]'s and
/// [`crate::host`]'s, so the streams differ for the same flow.
const STREAM_STEP: u64 = 0x9e37_79b9_7f4a_7c15_u64.rotate_left(29);

/// What the application has written by now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Written {
    /// More than the sender can take (an unlimited application while ON).
    Unlimited,
    /// This many segments in all since the flow started.
    Segments(u64),
}

/// One period of an ON/OFF source, `[start_ns, end_ns)`.
#[derive(Clone, Copy, Debug)]
struct Period {
    on: bool,
    start_ns: u64,
    end_ns: u64,
}

/// One flow's application.
#[derive(Clone, Debug)]
pub struct AppSource {
    /// Payload bit/s written while ON (None: unlimited).
    rate_bps: Option<u64>,
    /// Payload bytes of a segment.
    mss: u32,
    /// ON and OFF lengths (means if exponential), ns; None: always ON.
    on_off: Option<(u64, u64, bool)>,
    rng: SimRng,
    /// The period `now` is in (None before the flow starts).
    period: Option<Period>,
    /// ON time before the current period, ns.
    on_before_ns: u64,
    /// Segments written before the ON time counted here (a test's change
    /// of application mid-flow; 0 otherwise).
    base_segments: u64,
}

impl AppSource {
    /// Flow `flow`'s application in a run seeded `run_seed`.
    pub fn for_flow(cfg: &AppConfig, mss: u32, run_seed: u64, flow: usize) -> Self {
        AppSource {
            rate_bps: cfg.rate_bps,
            mss,
            on_off: cfg.on_off.as_ref().map(|p| (p.on_ns, p.off_ns, p.exponential)),
            rng: SimRng::new(run_seed.wrapping_add(STREAM_STEP.wrapping_mul(flow as u64 + 1))),
            period: None,
            on_before_ns: 0,
            base_segments: 0,
        }
    }

    /// This application taking over at `now_ns` from one that had written
    /// `segments` (a test switching a flow's application mid-run).
    #[cfg(test)]
    pub fn taking_over(mut self, now_ns: u64, segments: u64) -> Self {
        self.start(now_ns);
        self.base_segments = segments;
        self
    }

    /// The flow starts at `now_ns`, with an ON period.
    pub fn start(&mut self, now_ns: u64) {
        let end_ns = self.period_end(true, now_ns);
        self.period = Some(Period { on: true, start_ns: now_ns, end_ns });
    }

    /// Moves the periods on to the one holding `now_ns` (never back).
    pub fn advance(&mut self, now_ns: u64) {
        while let Some(p) = self.period.filter(|p| now_ns >= p.end_ns) {
            if p.on {
                self.on_before_ns += p.end_ns - p.start_ns;
            }
            let end_ns = self.period_end(!p.on, p.end_ns);
            self.period = Some(Period { on: !p.on, start_ns: p.end_ns, end_ns });
        }
    }

    /// What the application has written by `now_ns` (after [`Self::advance`]).
    pub fn written(&self, now_ns: u64) -> Written {
        let Some(p) = self.period else { return Written::Segments(0) };
        match self.rate_bps {
            None if p.on => Written::Unlimited,
            // Unlimited but OFF: nothing new (the sender's own count stands).
            None => Written::Segments(0),
            Some(rate) => {
                let on_ns = self.on_before_ns + if p.on { now_ns - p.start_ns } else { 0 };
                Written::Segments(self.base_segments + self.segments_in(rate, on_ns))
            }
        }
    }

    /// When, after `now_ns`, the application will have written more than
    /// `sent` segments (the sender has sent them all): an instant to look
    /// again at (the end of the current period if that comes first). None
    /// before the flow starts.
    pub fn next_write_ns(&self, now_ns: u64, sent: u64) -> Option<u64> {
        let p = self.period?;
        match self.rate_bps {
            None => Some(if p.on { now_ns } else { p.end_ns }),
            Some(rate) if p.on => {
                // The least ON time that has written segment `sent + 1`.
                let own = (sent + 1).saturating_sub(self.base_segments) as u128;
                let need = (own * self.mss as u128 * 8 * 1_000_000_000).div_ceil(rate as u128);
                let at = (p.start_ns as u128 + need.saturating_sub(self.on_before_ns as u128)).min(u64::MAX as u128);
                Some((at as u64).min(p.end_ns).max(now_ns))
            }
            Some(_) => Some(p.end_ns),
        }
    }

    /// Whole segments `rate` bit/s writes in `on_ns`.
    fn segments_in(&self, rate: u64, on_ns: u64) -> u64 {
        (rate as u128 * on_ns as u128 / (8 * 1_000_000_000 * self.mss as u128)) as u64
    }

    /// The end of an ON (`on`) or OFF period starting at `start_ns`.
    fn period_end(&mut self, on: bool, start_ns: u64) -> u64 {
        let Some((on_ns, off_ns, exponential)) = self.on_off else { return u64::MAX };
        let mean = if on { on_ns } else { off_ns };
        let length = if exponential {
            // 1 - u is in (0, 1]; at least 1 ns, so time moves on.
            ((-(1.0 - self.rng.next_f64()).ln() * mean as f64).round() as u64).max(1)
        } else {
            mean
        };
        start_ns.saturating_add(length)
    }
}

/// Flow `flow`'s ON periods (a run seeded `run_seed`) as offsets from its
/// start, up to `until_ns` after it: the periods [`AppSource`] draws (the
/// flow's stream, in order), for the live engine's agent, which writes
/// only inside them (python/ccarena/live/agent.py). One period, to
/// `until_ns`, without ON/OFF.
pub fn on_periods(cfg: &AppConfig, mss: u32, run_seed: u64, flow: usize, until_ns: u64) -> Vec<(u64, u64)> {
    let mut app = AppSource::for_flow(cfg, mss, run_seed, flow);
    app.start(0);
    let mut on = Vec::new();
    while let Some(p) = app.period {
        if p.on {
            on.push((p.start_ns, p.end_ns.min(until_ns)));
        }
        if p.end_ns >= until_ns {
            return on;
        }
        app.advance(p.end_ns);
    }
    on
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::OnOffConfig;

    const MS: u64 = 1_000_000;

    fn app(rate_bps: Option<u64>, on_off: Option<(u64, u64, bool)>) -> AppSource {
        let on_off = on_off.map(|(on_ns, off_ns, exponential)| OnOffConfig { on_ns, off_ns, exponential });
        AppSource::for_flow(&AppConfig { rate_bps, on_off }, 1448, 1, 0)
    }

    #[test]
    fn the_on_periods_are_the_sources_own() {
        let cfg = |exponential| AppConfig {
            rate_bps: None,
            on_off: Some(OnOffConfig { on_ns: 10 * MS, off_ns: 30 * MS, exponential }),
        };
        assert_eq!(on_periods(&cfg(false), 1448, 1, 0, 100 * MS), vec![(0, 10 * MS), (40 * MS, 50 * MS), (80 * MS, 90 * MS)]);
        // Exponential: each ON period is where the source writes, the rest not.
        let periods = on_periods(&cfg(true), 1448, 7, 2, 10_000 * MS);
        let mut a = AppSource::for_flow(&cfg(true), 1448, 7, 2);
        a.start(0);
        for &(start, end) in &periods {
            for t in [start, end - 1] {
                a.advance(t);
                assert_eq!(a.written(t), Written::Unlimited);
            }
            a.advance(end);
            assert_eq!(a.written(end), Written::Segments(0));
        }
        assert!(periods.len() > 100);
        let always = AppConfig { rate_bps: Some(1_000_000), on_off: None };
        assert_eq!(on_periods(&always, 1448, 1, 0, 5 * MS), vec![(0, 5 * MS)]);
    }

    #[test]
    fn a_rate_writes_whole_segments_evenly() {
        // 11.584 Mbit/s = one 1448-byte segment per ms.
        let mut a = app(Some(11_584_000), None);
        a.start(5 * MS);
        a.advance(5 * MS);
        assert_eq!(a.written(5 * MS), Written::Segments(0));
        assert_eq!(a.next_write_ns(5 * MS, 0), Some(6 * MS));
        a.advance(6 * MS - 1);
        assert_eq!(a.written(6 * MS - 1), Written::Segments(0));
        a.advance(6 * MS);
        assert_eq!(a.written(6 * MS), Written::Segments(1));
        a.advance(105 * MS);
        assert_eq!(a.written(105 * MS), Written::Segments(100));
        assert_eq!(a.next_write_ns(105 * MS, 100), Some(106 * MS));
    }

    #[test]
    fn fixed_periods_write_only_while_on() {
        // 10 ms ON, 30 ms OFF, one segment per ms while ON.
        let mut a = app(Some(11_584_000), Some((10 * MS, 30 * MS, false)));
        a.start(0);
        a.advance(10 * MS);
        assert_eq!(a.written(10 * MS), Written::Segments(10));
        // During OFF nothing more, and the next write is 1 ms into the next ON.
        a.advance(25 * MS);
        assert_eq!(a.written(25 * MS), Written::Segments(10));
        assert_eq!(a.next_write_ns(25 * MS, 10), Some(40 * MS));
        a.advance(40 * MS);
        assert_eq!(a.next_write_ns(40 * MS, 10), Some(41 * MS));
        a.advance(45 * MS);
        assert_eq!(a.written(45 * MS), Written::Segments(15));
        // An ON period ending before the next segment: look again at its end.
        assert_eq!(a.next_write_ns(45 * MS, 20), Some(50 * MS));
    }

    #[test]
    fn an_unlimited_application_pauses_while_off() {
        let mut a = app(None, Some((10 * MS, 30 * MS, false)));
        a.start(0);
        a.advance(3 * MS);
        assert_eq!(a.written(3 * MS), Written::Unlimited);
        a.advance(12 * MS);
        assert_eq!(a.written(12 * MS), Written::Segments(0));
        assert_eq!(a.next_write_ns(12 * MS, 500), Some(40 * MS));
    }

    #[test]
    fn exponential_periods_have_their_means_and_follow_the_seed() {
        let mut a = app(None, Some((10 * MS, 30 * MS, true)));
        a.start(0);
        let (mut on, mut off, mut t) = (0u64, 0u64, 0u64);
        let mut last = a.period.unwrap();
        while t < 4_000_000 * MS {
            t += MS;
            a.advance(t);
            let p = a.period.unwrap();
            if p.start_ns != last.start_ns {
                if last.on {
                    on += last.end_ns - last.start_ns;
                } else {
                    off += last.end_ns - last.start_ns;
                }
                last = p;
            }
        }
        // 100,000 periods of each: the ON share is 1/4 within 1%.
        let share = on as f64 / (on + off) as f64;
        assert!((0.2475..0.2525).contains(&share), "{share}");
        let mut b = app(None, Some((10 * MS, 30 * MS, true)));
        b.start(0);
        b.advance(1000 * MS);
        let mut c = app(None, Some((10 * MS, 30 * MS, true)));
        c.start(0);
        c.advance(1000 * MS);
        assert_eq!((b.period.unwrap().start_ns, b.on_before_ns), (c.period.unwrap().start_ns, c.on_before_ns));
    }
}
