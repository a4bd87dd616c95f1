//! CoDel (Nichols & Jacobson, RFC 8289), as Linux's
//! include/net/codel_impl.h `codel_dequeue()` runs it for sch_codel and
//! for each flow of sch_fq_codel. It decides at dequeue, from the head
//! packet's sojourn time:
//!
//! ```text
//!   sojourn < target or backlog <= mtu : below; forget first_above_time
//!   above for a whole interval          : ok to drop
//!   not dropping and ok to drop         : drop (or mark) the head, enter
//!       dropping; count = 1, or the previous episode's excess
//!       (count - lastcount) if it ended less than 16 intervals ago
//!   dropping and now >= drop_next       : drop (or mark) the head, count++,
//!       drop_next += interval / sqrt(count)   (the control law)
//!   dropping and no longer ok to drop   : leave dropping
//! ```
//! 1/√count is Linux's 16-bit fixed-point Newton iteration
//! (`codel_Newton_step`, `rec_inv_sqrt`), not a floating-point root, so
//! the drop spacing matches the kernel's to its rounding. When a drop
//! leaves a new head, that head is judged at once in the same dequeue
//! (several drops per dequeue are possible at a high count). With `ecn`
//! an ECN-capable head is marked CE instead and sent: marking does not
//! dequeue another packet.
//!
//! Deviations: time is ns in u64 (Linux: 1.024-µs ticks in a wrapping
//! u32); `ce_threshold` (off by default) is not modelled.

use crate::packet::DataPacket;

/// Linux `REC_INV_SQRT_BITS`: 1/√count is a 16-bit fixed-point fraction.
const REC_INV_SQRT_BITS: u32 = 16;
/// Linux `REC_INV_SQRT_SHIFT` (32 - 16): its place in a u32.
const REC_INV_SQRT_SHIFT: u32 = 32 - REC_INV_SQRT_BITS;
/// An episode that ended less than this many intervals ago resumes at its
/// excess count (Linux `16 * params->interval`).
const RESUME_INTERVALS: u64 = 16;

/// The control law's parameters (`struct codel_params`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodelParams {
    /// Acceptable standing queue delay, ns (Linux default 5 ms).
    pub target_ns: u64,
    /// Window over which the delay must stay above target, ns (100 ms).
    pub interval_ns: u64,
    /// A backlog of at most this many bytes is never "above"
    /// (`psched_mtu`: one full Ethernet frame, 1514).
    pub mtu_bytes: u64,
    /// Mark ECN-capable packets instead of dropping them.
    pub ecn: bool,
}

/// The per-queue state (`struct codel_vars`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Codel {
    /// Drops (or marks) since entering the dropping state.
    count: u32,
    /// `count` when the last dropping state began.
    lastcount: u32,
    dropping: bool,
    /// 1/√count, 16-bit fixed point.
    rec_inv_sqrt: u16,
    /// When the delay will have been above target for an interval, ns
    /// (0: it is below).
    first_above_time: u64,
    /// When the next drop is due while dropping, ns.
    drop_next: u64,
}

/// What a dequeue produced besides the packet it returns.
#[derive(Debug, Default)]
pub struct DequeueOutcome {
    /// Packets dropped at the head on the way, oldest first.
    pub dropped: Vec<DataPacket>,
    /// The returned packet must be marked CE.
    pub mark: bool,
}

impl Codel {
    pub fn new() -> Self {
        Self { rec_inv_sqrt: u16::MAX, ..Default::default() }
    }

    pub fn count(&self) -> u32 {
        self.count
    }

    pub fn dropping(&self) -> bool {
        self.dropping
    }

    /// `codel_dequeue()`: `pop` removes the queue's head and returns it
    /// with the bytes left queued after it (the whole qdisc's backlog, as
    /// Linux passes `sch->qstats.backlog`). Returns the packet to send, if
    /// any; `out` collects the drops and whether to mark.
    pub fn dequeue(
        &mut self,
        p: &CodelParams,
        now_ns: u64,
        mut pop: impl FnMut() -> Option<(DataPacket, u64)>,
        out: &mut DequeueOutcome,
    ) -> Option<DataPacket> {
        out.mark = false;
        let Some((mut pkt, backlog)) = pop() else {
            self.dropping = false;
            return None;
        };
        let drop = self.should_drop(p, now_ns, Some((&pkt, backlog)));
        if self.dropping {
            if !drop {
                self.dropping = false;
            } else if now_ns >= self.drop_next {
                while self.dropping && now_ns >= self.drop_next {
                    self.count = self.count.wrapping_add(1);
                    self.newton_step();
                    if p.ecn && pkt.ecn.capable() {
                        out.mark = true;
                        self.drop_next = self.control_law(self.drop_next, p.interval_ns);
                        return Some(pkt);
                    }
                    out.dropped.push(pkt);
                    match pop() {
                        Some((next, b)) => {
                            pkt = next;
                            if self.should_drop(p, now_ns, Some((&pkt, b))) {
                                self.drop_next = self.control_law(self.drop_next, p.interval_ns);
                            } else {
                                self.dropping = false;
                            }
                        }
                        None => {
                            self.should_drop(p, now_ns, None);
                            self.dropping = false;
                            return None;
                        }
                    }
                }
            }
        } else if drop {
            if p.ecn && pkt.ecn.capable() {
                out.mark = true;
            } else {
                out.dropped.push(pkt);
                // The new head is judged (its verdict only updates
                // first_above_time) and sent whatever it says.
                let next = pop();
                self.should_drop(p, now_ns, next.as_ref().map(|(q, b)| (q, *b)));
                let Some((next, _)) = next else {
                    self.enter_dropping(p, now_ns);
                    return None;
                };
                pkt = next;
            }
            self.enter_dropping(p, now_ns);
        }
        Some(pkt)
    }

    /// Entering the dropping state after the first drop (or mark).
    fn enter_dropping(&mut self, p: &CodelParams, now_ns: u64) {
        self.dropping = true;
        let delta = self.count.wrapping_sub(self.lastcount);
        if delta > 1 && now_ns.wrapping_sub(self.drop_next) < RESUME_INTERVALS * p.interval_ns {
            self.count = delta;
            self.newton_step();
        } else {
            self.count = 1;
            self.rec_inv_sqrt = u16::MAX;
        }
        self.lastcount = self.count;
        self.drop_next = self.control_law(now_ns, p.interval_ns);
    }

    /// `codel_should_drop()`: `head` is the packet at the head with the
    /// backlog left after it, or None if the queue is empty.
    fn should_drop(&mut self, p: &CodelParams, now_ns: u64, head: Option<(&DataPacket, u64)>) -> bool {
        let Some((pkt, backlog)) = head else {
            self.first_above_time = 0;
            return false;
        };
        let sojourn_ns = now_ns.saturating_sub(pkt.enqueued_ns);
        if sojourn_ns < p.target_ns || backlog <= p.mtu_bytes {
            self.first_above_time = 0;
            return false;
        }
        if self.first_above_time == 0 {
            self.first_above_time = now_ns + p.interval_ns;
            false
        } else {
            now_ns > self.first_above_time
        }
    }

    /// `codel_Newton_step()`: one Newton iteration of 1/√count.
    fn newton_step(&mut self) {
        let invsqrt = (self.rec_inv_sqrt as u32) << REC_INV_SQRT_SHIFT;
        let invsqrt2 = ((invsqrt as u64 * invsqrt as u64) >> 32) as u32;
        let mut val = (3u64 << 32).wrapping_sub(self.count as u64 * invsqrt2 as u64);
        val >>= 2; // avoid overflow in the multiply below
        val = (val * invsqrt as u64) >> (32 - 2 + 1);
        self.rec_inv_sqrt = (val >> REC_INV_SQRT_SHIFT) as u16;
    }

    /// `codel_control_law()`: t + interval / √count.
    fn control_law(&self, t_ns: u64, interval_ns: u64) -> u64 {
        let scale = ((self.rec_inv_sqrt as u64) << REC_INV_SQRT_SHIFT) as u128;
        t_ns + ((interval_ns as u128 * scale) >> 32) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Ecn;
    use std::collections::VecDeque;

    const MS: u64 = 1_000_000;

    fn params(ecn: bool) -> CodelParams {
        CodelParams { target_ns: 5 * MS, interval_ns: 100 * MS, mtu_bytes: 1514, ecn }
    }

    /// A queue that always holds `depth` packets that waited `sojourn`.
    fn standing(now_ns: u64, sojourn_ns: u64, ecn: Ecn) -> impl FnMut() -> Option<(DataPacket, u64)> {
        move || {
            let pkt = DataPacket { wire_bytes: 1514, enqueued_ns: now_ns - sojourn_ns, ecn, ..Default::default() };
            Some((pkt, 100 * 1514))
        }
    }

    #[test]
    fn newton_iteration_tracks_inverse_square_root() {
        // One Newton step per increment from 1.0, as the kernel does: coarse
        // at first (count 2 gives 0.5, count 3 gives 0.5625), then within
        // 1.5% from count 5 and 0.2% from count 15 (its "quadratic
        // convergence").
        let mut c = Codel::new();
        for count in 2..=1000u32 {
            c.count = count;
            c.newton_step();
            let exact = 1.0 / (count as f64).sqrt();
            let got = c.rec_inv_sqrt as f64 / 65536.0;
            match count {
                2 => assert_eq!(c.rec_inv_sqrt, 0x8001),
                3 => assert_eq!(c.rec_inv_sqrt, 0x9000),
                4 => {}
                5..=14 => assert!((got - exact).abs() / exact < 0.015, "count {count}: {got} vs {exact}"),
                _ => assert!((got - exact).abs() / exact < 0.002, "count {count}: {got} vs {exact}"),
            }
        }
    }

    #[test]
    fn nothing_is_dropped_below_target_or_within_the_first_interval() {
        let p = params(false);
        let mut c = Codel::new();
        let mut out = DequeueOutcome::default();
        for t in (0..1000).map(|i| 1000 * MS + i * MS) {
            assert!(c.dequeue(&p, t, standing(t, 4 * MS, Ecn::NotEct), &mut out).is_some());
            assert!(out.dropped.is_empty());
        }
        // Above target: the first interval passes without drops.
        let t0 = 3000 * MS;
        for t in (0..=100).map(|i| t0 + i * MS) {
            c.dequeue(&p, t, standing(t, 20 * MS, Ecn::NotEct), &mut out);
            assert!(out.dropped.is_empty(), "dropped at {} ms", (t - t0) / MS);
        }
        c.dequeue(&p, t0 + 101 * MS, standing(t0 + 101 * MS, 20 * MS, Ecn::NotEct), &mut out);
        assert_eq!(out.dropped.len(), 1);
        assert!(c.dropping());
    }

    #[test]
    fn drops_are_spaced_by_interval_over_root_count() {
        // A standing queue far above target: drop times follow
        // t_{n+1} = t_n + interval / sqrt(n) (RFC 8289 3.3).
        let p = params(false);
        let mut c = Codel::new();
        let mut out = DequeueOutcome::default();
        let mut drops = Vec::new();
        let step = MS / 10;
        let mut t = 0;
        while drops.len() < 30 {
            t += step;
            out.dropped.clear();
            c.dequeue(&p, t, standing(t, 50 * MS, Ecn::NotEct), &mut out);
            // A standing queue keeps "should drop" true: one drop each time.
            if !out.dropped.is_empty() {
                drops.push(t);
            }
        }
        // The n-th gap follows count n + 1; the first is the kernel's coarse
        // 1/2 (see the Newton test), the rest the law within its rounding.
        assert!((drops[2] - drops[1]).abs_diff(50 * MS) <= step);
        for n in 4..drops.len() - 1 {
            let gap = (drops[n + 1] - drops[n]) as f64;
            let law = 100.0 * MS as f64 / ((n + 1) as f64).sqrt();
            assert!((gap - law).abs() <= law * 0.015 + step as f64, "drop {n}: gap {gap} vs {law}");
        }
    }

    #[test]
    fn ecn_marks_instead_of_dropping_and_keeps_the_packet() {
        let p = params(true);
        let mut c = Codel::new();
        let mut out = DequeueOutcome::default();
        let mut marks = 0;
        for i in 0..3000 {
            let t = i * MS / 10;
            let sent = c.dequeue(&p, t, standing(t, 50 * MS, Ecn::Ect0), &mut out);
            assert!(sent.is_some() && out.dropped.is_empty());
            marks += out.mark as u32;
        }
        assert!(marks > 1 && c.count() == marks, "{marks} marks, count {}", c.count());
        // Not-ECT packets of the same queue are dropped.
        let t = 300 * MS + 100 * MS;
        c.dequeue(&p, t, standing(t, 50 * MS, Ecn::NotEct), &mut out);
        assert!(!out.mark && !out.dropped.is_empty());
    }

    #[test]
    fn a_drained_queue_ends_the_episode() {
        let p = params(false);
        let mut c = Codel::new();
        let mut out = DequeueOutcome::default();
        for i in 0..3000 {
            let t = i * MS / 10;
            c.dequeue(&p, t, standing(t, 50 * MS, Ecn::NotEct), &mut out);
        }
        assert!(c.dropping());
        let mut q: VecDeque<DataPacket> = VecDeque::new();
        assert!(c.dequeue(&p, 301 * MS, || q.pop_front().map(|p| (p, 0)), &mut out).is_none());
        assert!(!c.dropping());
    }
}
