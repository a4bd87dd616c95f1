//! A link whose capacity follows a trace of delivery opportunities, in
//! the format of mahimahi's `mm-link` (Netravali et al., USENIX ATC 2015):
//! each line of a trace file is a millisecond at which the link may deliver
//! one MTU-sized packet, lines repeat for several opportunities in the same
//! millisecond, and the trace repeats from its start once its last
//! millisecond has passed (its period is that last timestamp).
//!
//! As in mahimahi's `LinkQueue`, an opportunity is a budget of bytes, not
//! a packet: the packet at the head of the queue consumes opportunities
//! from the first one at or after it reaches the head; a packet larger than
//! one opportunity spans several, and what the last one leaves over serves
//! the next packet only if that packet is already waiting at that instant
//! (back to back), never one that arrives later: an opportunity that finds
//! the queue empty is lost. The packet leaves at the time of the
//! opportunity that completes it.
//!
//! One opportunity carries one full-size packet: mahimahi's is 1500 bytes
//! of IP packet, ours the `mss + wire_overhead` wire bytes of one full
//! segment (its 1500-byte IP packet plus the 14-byte Ethernet header the
//! wire accounting adds). A constant trace of one opportunity per
//! millisecond is therefore 12 Mbit/s of IP packets (12.112 Mbit/s of
//! wire bytes).

use std::collections::VecDeque;

use crate::config::TraceConfig;
use crate::trace_instants::TraceInstants;

const MS: u64 = 1_000_000;

/// The state of a trace-driven link: which opportunity comes next, and
/// which bytes each opportunity delivered.
#[derive(Clone, Debug)]
pub struct TraceLink {
    trace: TraceConfig,
    /// Global index (over all repetitions) of the first unused opportunity.
    next: u64,
    /// Bytes the latest used opportunity has left, and its instant (ns,
    /// trace time).
    left_bytes: u64,
    left_at_ns: u64,
    /// The instant the trace starts, ns: 0 in the simulator; the live
    /// delay line's clock reading at the run's time zero.
    origin_ns: u64,
    /// Bytes delivered by opportunities at instants before `pending`'s.
    settled_bytes: u64,
    /// (instant ns, bytes) the opportunities used since the latest
    /// packet reached the head deliver, by instant: at most a few.
    pending: VecDeque<(u64, u64)>,
}

impl TraceLink {
    pub fn new(cfg: &TraceConfig) -> Self {
        Self {
            trace: cfg.clone(),
            next: 0,
            left_bytes: 0,
            left_at_ns: 0,
            origin_ns: 0,
            settled_bytes: 0,
            pending: VecDeque::new(),
        }
    }

    pub fn trace(&self) -> &TraceConfig {
        &self.trace
    }

    /// The trace starts at `origin_ns` (the live delay line's time zero);
    /// packets before it are served as at its start.
    pub fn set_origin(&mut self, origin_ns: u64) {
        self.origin_ns = origin_ns;
    }

    /// A packet of `wire_bytes` reaches the head of the queue at `now_ns`:
    /// the instant it has been delivered (at or after `now_ns`).
    pub fn departure(&mut self, now_ns: u64, wire_bytes: u32) -> u64 {
        // Whatever is due before now is past every later question.
        while self.pending.front().is_some_and(|&(at, _)| at < now_ns) {
            self.settled_bytes += self.pending.pop_front().expect("checked").1;
        }
        let now_ns = now_ns.saturating_sub(self.origin_ns);
        self.origin_ns + self.departure_in_trace_time(now_ns, wire_bytes)
    }

    /// Wire bytes the link delivered at instants before `t_ns`, counting
    /// each byte at the instant of the opportunity that carried it (what
    /// the capacity over the same span counts: see [`Self::deliver`]).
    /// Final once every packet that reached the head before `t_ns` has
    /// (a simulator reads it at `t_ns`: later ones book at or after it).
    pub fn delivered_before(&self, t_ns: u64) -> u64 {
        self.settled_bytes + self.pending.iter().take_while(|&&(at, _)| at < t_ns).map(|&(_, b)| b).sum::<u64>()
    }

    fn departure_in_trace_time(&mut self, now_ns: u64, wire_bytes: u32) -> u64 {
        let mut need = wire_bytes as u64;
        let mut end_ns = now_ns;
        if self.left_bytes > 0 && self.left_at_ns >= now_ns {
            let used = self.left_bytes.min(need);
            self.left_bytes -= used;
            need -= used;
            end_ns = self.left_at_ns;
            self.deliver(self.left_at_ns, used);
        }
        if need > 0 {
            let per = self.trace.opportunity_bytes as u64;
            let first = self.next.max(self.trace.first_at_or_after(now_ns));
            let count = need.div_ceil(per);
            let last = first + count - 1;
            for idx in first..last {
                self.deliver(self.trace.time_of(idx), per);
            }
            end_ns = self.trace.time_of(last);
            self.deliver(end_ns, need - (count - 1) * per);
            self.next = last + 1;
            self.left_bytes = count * per - need;
            self.left_at_ns = end_ns;
        }
        end_ns
    }

    /// Books `bytes` on the opportunity at `at_ns` (trace time). A packet
    /// counts where its bytes went: the rest of an earlier opportunity it
    /// shared, then whole ones, then part of its last one, each at that
    /// opportunity's instant, not all at its departure. So the bytes
    /// delivered in any span `[from, to)` never exceed the bytes of the
    /// opportunities in it ([`TraceConfig::capacity_bytes`]): counting a
    /// packet whole when it leaves would put the part an opportunity before
    /// `from` carried inside the span, or, at the run's end, a packet
    /// leaving exactly at `to` (the window's end event runs after it).
    fn deliver(&mut self, at_ns: u64, bytes: u64) {
        let at_ns = self.origin_ns + at_ns;
        match self.pending.back_mut() {
            Some((t, b)) if *t == at_ns => *b += bytes,
            _ => self.pending.push_back((at_ns, bytes)),
        }
    }
}

impl TraceConfig {
    /// A trace of the instants `ms` (non-decreasing, the last the period;
    /// tests' traces, without the front end's digest).
    pub fn from_ms(ms: &[u32], opportunity_bytes: u32) -> Self {
        TraceConfig {
            opportunities: ms.len() as u64,
            gaps_ms: TraceInstants::from_ms(ms),
            period_ns: ms.last().map_or(0, |&last| last as u64 * MS),
            opportunity_bytes,
            opportunities_sha256: String::new(),
        }
    }

    /// Instant of the opportunity with global index `idx` (over all
    /// repetitions), ns. Non-decreasing in `idx`.
    pub fn time_of(&self, idx: u64) -> u64 {
        let n = self.gaps_ms.len() as u64;
        (idx / n) * self.period_ns + self.gaps_ms.get((idx % n) as usize) as u64 * MS
    }

    /// Global index of the first opportunity at or after `t_ns`: also the
    /// number of opportunities before `t_ns`. Offsets lie in [0, period],
    /// so the search starts one period early (an offset equal to the
    /// period is the next period's instant 0).
    pub fn first_at_or_after(&self, t_ns: u64) -> u64 {
        let n = self.gaps_ms.len() as u64;
        let mut k = (t_ns / self.period_ns).saturating_sub(1);
        loop {
            let off = t_ns - k * self.period_ns;
            // Instants are whole ms: at or after `off` ns is at or after its ceiling in ms.
            let i = self.gaps_ms.first_at_or_after(off.div_ceil(MS)) as u64;
            if i < n {
                return k * n + i;
            }
            k += 1;
        }
    }

    /// Opportunities with instants in `[from_ns, to_ns)`.
    pub fn opportunities_between(&self, from_ns: u64, to_ns: u64) -> u64 {
        self.first_at_or_after(to_ns).saturating_sub(self.first_at_or_after(from_ns))
    }

    /// Wire bytes the link can deliver in `[from_ns, to_ns)`.
    pub fn capacity_bytes(&self, from_ns: u64, to_ns: u64) -> u64 {
        self.opportunities_between(from_ns, to_ns) * self.opportunity_bytes as u64
    }

    /// The trace's mean rate, bit/s of wire bytes (rounded down).
    pub fn mean_rate_bps(&self) -> u64 {
        (self.gaps_ms.len() as u128 * self.opportunity_bytes as u128 * 8 * 1_000_000_000 / self.period_ns as u128)
            as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(ms: &[u32], bytes: u32) -> TraceConfig {
        TraceConfig::from_ms(ms, bytes)
    }

    #[test]
    fn a_packet_leaves_at_the_first_opportunity_at_or_after_it_reaches_the_head() {
        let mut link = TraceLink::new(&trace(&[2, 5], 1514));
        assert_eq!(link.departure(0, 1514), 2 * MS);
        assert_eq!(link.departure(2 * MS, 1514), 5 * MS);
        // The trace repeats every 5 ms: the next ones are at 7 and 10 ms.
        assert_eq!(link.departure(5 * MS, 1514), 7 * MS);
        // A packet arriving after an unused opportunity does not get it back.
        assert_eq!(link.departure(11 * MS, 1514), 12 * MS);
    }

    #[test]
    fn small_packets_back_to_back_share_an_opportunity_and_big_ones_span_several() {
        let mut link = TraceLink::new(&trace(&[1], 1514));
        assert_eq!(link.departure(0, 700), MS);
        // Waiting at that instant: rides in the same opportunity's 814 bytes.
        assert_eq!(link.departure(MS, 700), MS);
        // 114 bytes left: the rest of this one waits for the next.
        assert_eq!(link.departure(MS, 700), 2 * MS);
        // Arriving after the leftover's instant: the leftover is lost.
        assert_eq!(link.departure(5 * MS, 600), 5 * MS);
        assert_eq!(link.departure(7 * MS, 3000), 8 * MS);
    }

    #[test]
    fn an_origin_shifts_the_trace_to_the_run_time_zero() {
        let mut link = TraceLink::new(&trace(&[2, 5], 1514));
        link.set_origin(1_000 * MS);
        assert_eq!(link.departure(1_000 * MS, 1514), 1_002 * MS);
        assert_eq!(link.departure(0, 1514), 1_005 * MS); // before time zero: at its start
    }

    #[test]
    fn several_opportunities_in_one_millisecond_deliver_several_packets_then() {
        let mut link = TraceLink::new(&trace(&[1, 1, 1, 3], 1514));
        let ends: Vec<u64> = (0..5).map(|_| link.departure(0, 1514)).collect();
        assert_eq!(ends, vec![MS, MS, MS, 3 * MS, 4 * MS]);
    }

    #[test]
    fn bytes_count_at_the_opportunities_that_carried_them() {
        // The overshoot fuzzing found (utilisation up to 1.00075 on trace
        // links): A (700 B) leaves 814 B of the 1-ms opportunity; B
        // (1514 B) takes them and 700 B of the 2-ms one; C (700 B) the
        // rest of that. Counted whole at their departures, B
        // and C (2214 B) would fall in [1.5 ms, 2.5 ms), which holds one
        // opportunity (1514 B).
        let mut link = TraceLink::new(&trace(&[1], 1514));
        assert_eq!(link.departure(0, 700), MS);
        assert_eq!(link.departure(MS, 1514), 2 * MS);
        assert_eq!(link.departure(2 * MS, 700), 2 * MS);
        let window = |from: u64, to: u64| link.delivered_before(to) - link.delivered_before(from);
        assert_eq!(window(MS + MS / 2, 2 * MS + MS / 2), 1400);
        // Half-open as the capacity: what leaves at an instant counts after it.
        assert_eq!(link.delivered_before(2 * MS), 1514);
        assert_eq!(link.delivered_before(2 * MS + 1), 2914);
    }

    #[test]
    fn no_window_delivers_more_than_its_opportunities() {
        // A saturated queue of mixed packet sizes over 10 repetitions;
        // windows between every two instants a packet reached the head (and
        // a ns before), read then, as the simulator reads its counters.
        let cfg = trace(&[1, 1, 4, 4, 4, 7, 9, 9, 10], 1514);
        let mut link = TraceLink::new(&cfg);
        let mut books: Vec<(u64, u64)> = vec![];
        let mut now = 0u64;
        for i in 0..400u64 {
            let bytes = [1514, 66, 700, 1514, 1200][(i % 5) as usize];
            for t in [now.saturating_sub(1), now] {
                books.push((t, link.delivered_before(t)));
            }
            now = link.departure(now, bytes);
        }
        assert!(now > 10 * cfg.period_ns);
        for (i, &(from, at_from)) in books.iter().enumerate() {
            for &(to, at_to) in &books[i..] {
                if to >= from {
                    assert!(at_to - at_from <= cfg.capacity_bytes(from, to), "[{from}, {to})");
                }
            }
        }
    }

    #[test]
    fn an_opportunity_at_the_period_is_the_next_period_start() {
        // One line "1": one opportunity per ms, at 1, 2, 3, ... ms.
        let cfg = trace(&[1], 1514);
        assert_eq!(cfg.first_at_or_after(5 * MS), 4);
        assert_eq!(cfg.time_of(4), 5 * MS);
        assert_eq!(cfg.opportunities_between(0, 10 * MS + 1), 10);
        assert_eq!(cfg.mean_rate_bps(), 12_112_000);
    }

    #[test]
    fn opportunities_are_counted_over_repetitions_half_open() {
        let cfg = trace(&[1, 1, 4], 1514);
        assert_eq!(cfg.opportunities_between(0, 4 * MS), 2);
        assert_eq!(cfg.opportunities_between(0, 4 * MS + 1), 3);
        // 10 periods of 4 ms: 30 opportunities.
        assert_eq!(cfg.opportunities_between(0, 40 * MS + 1), 30);
        // 1, 1, 4, then the next period: 5, 5.
        assert_eq!(cfg.capacity_bytes(MS, 5 * MS + 1), 5 * 1514);
    }
}
