//! Behaviour tests of the sender over the scripted network of
//! [`super::testnet`]: slow start, delivery-rate accuracy, RACK, RTO with
//! backoff, PRR, tail loss probe, and scoreboard conservation.

use super::testnet::{TestNet, WIRE};
use super::TcpSender;
use cc_native::{CaState, SK_PACING_NEEDED};
use std::cell::RefCell;
use std::rc::Rc;

const MS: u64 = 1_000_000;

/// Shared log the `on_event` hook can write into.
fn shared<T: Default>() -> Rc<RefCell<T>> {
    Rc::new(RefCell::new(T::default()))
}

#[test]
fn reno_slow_start_doubles_cwnd_every_round_trip() {
    let mut net = TestNet::new("reno", 10 * MS, None);
    net.start(0);
    assert_eq!(net.sent.len(), 10, "initial window");
    for k in 0..7u32 {
        net.run_until(k as u64 * 10 * MS + 5 * MS);
        let t = net.sender.telemetry();
        assert_eq!(t.cwnd, 10 << k, "cwnd after {k} round trips");
        assert_eq!(t.inflight, 10 << k);
        assert_eq!(t.ca_state, CaState::Open as u8);
    }
    let t = net.sender.telemetry();
    assert_eq!(t.srtt_us, 10_000);
    assert_eq!(t.min_rtt_us, 10_000);
    assert_eq!(t.retransmits_total, 0);
}

/// Rate samples of a paced flow crossing a 20 Mbit/s bottleneck: the
/// non-app-limited delivery rate (`tp->rate_delivered / rate_interval_us`)
/// equals the bottleneck's packet rate.
#[test]
fn rate_samples_of_a_paced_flow_measure_the_bottleneck_rate() {
    let rate_bps = 20_000_000u64;
    let link_pps = rate_bps as f64 / (WIRE as f64 * 8.0);
    let mut net = TestNet::new("reno", 40 * MS, Some(rate_bps));
    net.buffer_pkts = Some(70); // ~1 BDP: the link never idles after loss
    net.start(0);
    // Pace like Linux does for Reno under fq (1.2 x cwnd / srtt).
    net.sender.sk.inet_conn.icsk_inet.sk_pacing_status = SK_PACING_NEEDED;
    let samples = shared::<Vec<f64>>();
    let s2 = samples.clone();
    net.on_event = Some(Box::new(move |t, snd| {
        let sk = &snd.sk;
        if t > 3_000 * MS && sk.rate_interval_us > 0 && sk.rate_app_limited == 0 {
            s2.borrow_mut().push(sk.rate_delivered as f64 * 1e6 / sk.rate_interval_us as f64);
        }
    }));
    net.run_until(10_000 * MS);
    let s = samples.borrow();
    assert!(s.len() > 1000, "{} samples", s.len());
    let within = s.iter().filter(|&&r| (r / link_pps - 1.0).abs() < 0.02).count();
    assert!(
        within as f64 >= 0.95 * s.len() as f64,
        "{within} of {} samples within 2% of {link_pps:.1} pkt/s",
        s.len()
    );
    let mean = s.iter().sum::<f64>() / s.len() as f64;
    assert!((mean / link_pps - 1.0).abs() < 0.02, "mean {mean:.1} vs {link_pps:.1}");
    assert!(net.sender.pacer.data_segs_out > 0);
}

/// BBR asks for pacing; its rate samples and its own (max-filtered)
/// bandwidth estimate match the bottleneck's rate within 2%.
#[test]
fn bbr_is_paced_and_samples_the_bottleneck_rate() {
    let rate_bps = 20_000_000u64;
    let link_pps = rate_bps as f64 / (WIRE as f64 * 8.0);
    let mut net = TestNet::new("bbr", 40 * MS, Some(rate_bps));
    net.buffer_pkts = Some(200);
    net.start(0);
    assert_eq!(net.sender.sk.inet_conn.icsk_inet.sk_pacing_status, SK_PACING_NEEDED);
    let samples = shared::<Vec<f64>>();
    let s2 = samples.clone();
    net.on_event = Some(Box::new(move |t, snd| {
        let sk = &snd.sk;
        if t > 2_000 * MS && sk.rate_interval_us > 0 && sk.rate_app_limited == 0 {
            s2.borrow_mut().push(sk.rate_delivered as f64 * 1e6 / sk.rate_interval_us as f64);
        }
    }));
    net.run_until(10_000 * MS);
    let mut s = samples.borrow().clone();
    s.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let q = |p: f64| s[((s.len() - 1) as f64 * p) as usize] / link_pps;
    // Samples never overestimate the path, and the median is the path
    // rate; lower ones come from the 0.75-gain and ProbeRTT phases, where
    // the send rate (max of the two intervals) is the binding one.
    assert!(q(1.0) < 1.001, "max sample {:.4} of the link rate", q(1.0));
    assert!((q(0.5) - 1.0).abs() < 0.02, "median {:.4} of the link rate", q(0.5));
    assert!(s.len() > 1000);
    let t = net.sender.telemetry();
    let bw_pps = t.bw_estimate_bps / 8.0 / super::testnet::MSS as f64;
    assert!((bw_pps / link_pps - 1.0).abs() < 0.02, "BBR bw {bw_pps:.1} vs {link_pps:.1} pkt/s");
    // Paced near the bottleneck rate: no loss from a 200-packet buffer.
    assert_eq!(t.retransmits_total, 0);
}

/// A segment lost in mid-stream: three SACKs make RACK's reordering window
/// zero, the segment is marked lost about one RTT after it was sent, and
/// its retransmission leaves before any new data.
#[test]
fn rack_marks_a_dropped_segment_lost_and_retransmits_it_first() {
    let mut net = TestNet::new("reno", 20 * MS, Some(10_000_000));
    net.drop = Box::new(|seq, retrans| seq == 300 && !retrans);
    net.start(0);
    net.run_until(3_000 * MS);
    let tx = net.transmissions_of(300);
    assert_eq!(tx.len(), 2, "sent once, retransmitted once: {tx:?}");
    // The retransmission follows the third SACK: segment 303 was ACKed,
    // which on this 10 Mbit/s path is ~3.6 ms of serialisation after 300.
    let sent301 = net.transmissions_of(301)[0];
    let ack_of_303 = net.sent.iter().find(|s| s.pkt.seq == 303).unwrap().t_ns;
    assert!(tx[1] > ack_of_303, "after 303 was sent");
    let rtt_lower = 20 * MS;
    assert!(tx[1] - tx[0] >= rtt_lower, "not before an RTT: {}", tx[1] - tx[0]);
    assert!(tx[1] >= sent301);
    // First packet out at that instant.
    let first_at_t = net.sent.iter().find(|s| s.t_ns == tx[1]).unwrap();
    assert_eq!((first_at_t.pkt.seq, first_at_t.pkt.retrans), (300, true));
    let t = net.sender.telemetry();
    assert_eq!(t.retransmits_total, 1);
    assert_eq!(t.rto_count, 0);
    // Recovery ended.
    assert_eq!(t.ca_state, CaState::Open as u8);
}

/// A loss near the tail: only one later segment is SACKed, so RACK waits
/// rtt + reo_wnd (min_rtt / 4) on its reorder timer (rounded to jiffies,
/// plus TCP_TIMEOUT_MIN) before marking it lost.
#[test]
fn rack_reorder_timer_fires_after_rtt_plus_reo_wnd() {
    let stop = 201 * MS;
    // Dry run: which segments are sent last?
    let mut dry = TestNet::new("reno", 20 * MS, None).with_stop(stop);
    dry.start(0);
    dry.run_until(400 * MS);
    let last = dry.sender.snd_nxt() - 1;
    let victim = last - 1;

    let mut net = TestNet::new("reno", 20 * MS, None).with_stop(stop);
    net.drop = Box::new(move |seq, retrans| seq == victim && !retrans);
    net.start(0);
    net.run_until(1_000 * MS);
    let tx = net.transmissions_of(victim);
    assert_eq!(tx.len(), 2, "{tx:?}");
    // min_rtt = 20 ms: reo_wnd = 5 ms; timer = jiffies(remaining) + 2 ms.
    let waited = tx[1] - tx[0];
    assert!((27 * MS..=28 * MS).contains(&waited), "waited {waited} ns");
    assert_eq!(net.sender.telemetry().rto_count, 0);
    assert_eq!(net.sender.snd_una(), last + 1);
}

/// All ACKs stop: after a tail loss probe the RTO fires, cwnd collapses to
/// one packet in Loss, and each further RTO waits twice as long. When ACKs
/// return, the flow recovers and leaves Loss.
#[test]
fn rto_fires_when_acks_stop_and_backs_off_exponentially() {
    let mut net = TestNet::new("reno", 20 * MS, Some(10_000_000));
    net.ack_blackhole_from = Some(500 * MS);
    net.start(0);
    let in_loss_cwnds = shared::<Vec<u32>>();
    let c2 = in_loss_cwnds.clone();
    net.on_event = Some(Box::new(move |_, snd| {
        if snd.sk.inet_conn.icsk_ca_state == CaState::Loss as u8 {
            c2.borrow_mut().push(snd.sk.snd_cwnd);
        }
    }));
    net.run_until(500 * MS);
    let una = net.sender.snd_una();
    net.run_until(8_000 * MS);
    let t = net.sender.telemetry();
    assert!(t.rto_count >= 4, "rto_count {}", t.rto_count);
    assert_eq!(t.ca_state, CaState::Loss as u8);
    assert_eq!(t.cwnd, 1);
    assert!(in_loss_cwnds.borrow().iter().all(|&c| c == 1));
    // Retransmissions of the head: each interval doubles (1 ms jiffy slack).
    let head_tx: Vec<u64> = net
        .sent
        .iter()
        .filter(|s| s.pkt.seq == una && s.pkt.retrans)
        .map(|s| s.t_ns)
        .collect();
    assert!(head_tx.len() >= 4, "{head_tx:?}");
    for w in head_tx.windows(3) {
        let (a, b) = (w[1] - w[0], w[2] - w[1]);
        assert!(b.abs_diff(2 * a) <= 2 * MS, "intervals {a} then {b}");
    }
    // The first RTO is srtt + max(200 ms, 4 mdev) after the probe.
    assert!(head_tx[1] - head_tx[0] >= 400 * MS);

    // ACKs return: the flow leaves Loss and delivers again.
    net.ack_blackhole_from = None;
    net.run_until(20_000 * MS);
    let t = net.sender.telemetry();
    assert_eq!(t.ca_state, CaState::Open as u8);
    assert!(net.sender.snd_una() > una + 1000);
    assert!(t.cwnd > 10);
}

/// On a host with a tick (HZ=250) the RTO fires on the timer wheel: every
/// timed-out retransmission of the head leaves as a tick begins, and the
/// timeouts still double (when it fires is `Tick::timer_fires_ns`, tested
/// in host.rs).
#[test]
fn rtos_fire_as_a_tick_begins() {
    let tick = crate::host::Tick { tick_us: 4000, phase_us: 1500, wheel: true };
    let mut net = TestNet::with_tick("reno", 20 * MS, Some(10_000_000), tick);
    net.ack_blackhole_from = Some(500 * MS);
    net.start(0);
    net.run_until(500 * MS);
    let una = net.sender.snd_una();
    net.run_until(8_000 * MS);
    let head_tx: Vec<u64> =
        net.sent.iter().filter(|s| s.pkt.seq == una && s.pkt.retrans).map(|s| s.t_ns).collect();
    assert!(head_tx.len() >= 4, "{head_tx:?}");
    for t in &head_tx {
        assert_eq!((t / 1000 + 1500) % 4000, 0, "{t} ns is not a tick's start: {head_tx:?}");
    }
    for w in head_tx.windows(2) {
        let gap = w[1] - w[0];
        assert!(gap >= 400 * MS, "{gap}");
    }
}

/// PRR (RFC 6937): the window comes down to ssthresh gradually, one
/// packet per ACK at most, sending ssthresh/prior_cwnd of what is
/// delivered; at the end of Recovery cwnd = ssthresh.
#[test]
fn prr_reduces_cwnd_smoothly_to_ssthresh() {
    let mut net = TestNet::new("reno", 20 * MS, Some(20_000_000));
    net.drop = Box::new(|seq, retrans| (seq == 600 || seq == 640) && !retrans);
    #[derive(Default)]
    struct Log {
        cwnds: Vec<u32>,
        prior_cwnd: u32,
        ssthresh: u32,
        /// (prr_delivered, prr_out, in_flight) after every event.
        prr: Vec<(u32, u32, u32)>,
        after_exit: Option<u32>,
    }
    let log = shared::<Log>();
    let l2 = log.clone();
    let mut was_recovery = false;
    net.on_event = Some(Box::new(move |_, snd| {
        let mut l = l2.borrow_mut();
        let in_rec = snd.sk.inet_conn.icsk_ca_state == CaState::Recovery as u8;
        if in_rec {
            if !was_recovery {
                l.prior_cwnd = snd.sk.prior_cwnd;
                l.ssthresh = snd.sk.snd_ssthresh;
            }
            l.cwnds.push(snd.sk.snd_cwnd);
            l.prr.push((snd.rec.prr_delivered, snd.rec.prr_out, snd.in_flight()));
        } else if was_recovery && l.after_exit.is_none() {
            l.after_exit = Some(snd.sk.snd_cwnd);
        }
        was_recovery = in_rec;
    }));
    net.start(0);
    net.run_until(5_000 * MS);
    let l = log.borrow();
    assert!(l.prior_cwnd > 100, "prior cwnd {}", l.prior_cwnd);
    assert_eq!(l.ssthresh, l.prior_cwnd / 2);
    assert_eq!(l.after_exit, Some(l.ssthresh));
    // No cliff: cwnd moves by at most 2 packets per ACK...
    let first = l.cwnds[0];
    assert!(first + 4 >= l.prior_cwnd, "first recovery cwnd {first} vs {}", l.prior_cwnd);
    for w in l.cwnds.windows(2) {
        assert!(w[0].abs_diff(w[1]) <= 2, "cwnd jumped {} -> {}", w[0], w[1]);
    }
    // ... and while more than ssthresh is in flight, sending follows
    // ssthresh / prior_cwnd of what was delivered; below it, one packet
    // per packet delivered (the slow-start reduction bound).
    let mut proportional = 0;
    for &(delivered, out, in_flight) in &l.prr {
        if in_flight > l.ssthresh {
            let want = (delivered as u64 * l.ssthresh as u64).div_ceil(l.prior_cwnd as u64);
            assert!(out as u64 <= want.max(1) && out as u64 + 1 >= want, "prr_out {out} vs {want}");
            proportional += 1;
        }
    }
    assert!(proportional > 500);
    let &(delivered, out, _) = l.prr.last().unwrap();
    assert!(out <= delivered, "{out} sent for {delivered} delivered");
    assert_eq!(net.sender.telemetry().retransmits_total, 2);
}

/// The last two segments are lost: instead of waiting for an RTO, the tail
/// loss probe retransmits the last one after 2 srtt + 2 ms; its SACK lets
/// RACK find the other one.
#[test]
fn tail_loss_probe_repairs_a_lost_tail() {
    let stop = 201 * MS;
    let last = last_segment_before(stop);
    let mut net = TestNet::new("reno", 20 * MS, None).with_stop(stop);
    net.drop = Box::new(move |seq, retrans| seq >= last - 1 && !retrans);
    net.start(0);
    net.run_until(1_000 * MS);
    let tx = net.transmissions_of(last);
    assert_eq!(tx.len(), 2, "{tx:?}");
    // The probe timer starts at the ACK of the segment before (one RTT
    // after it was sent): 2 srtt (40 ms) + TCP_TIMEOUT_MIN.
    let waited = tx[1] - tx[0];
    assert_eq!(waited, 20 * MS + 42 * MS, "probe after {waited} ns");
    let other = net.transmissions_of(last - 1);
    assert_eq!(other.len(), 2, "{other:?}");
    assert!(other[1] > tx[1] && other[1] - tx[1] <= 21 * MS, "{other:?}");
    let t = net.sender.telemetry();
    assert_eq!(t.rto_count, 0);
    assert_eq!(net.sender.snd_una(), last + 1);
}

/// The last segment a Reno flow over 20 ms that stops at `stop` sends.
fn last_segment_before(stop: u64) -> u32 {
    let mut dry = TestNet::new("reno", 20 * MS, None).with_stop(stop);
    dry.start(0);
    dry.run_until(2 * stop);
    dry.sender.snd_nxt() - 1
}

/// Conservation under random loss, for every CC: everything sent is either
/// cumulatively ACKed or on the scoreboard, and the scoreboard's bits agree
/// with the socket's counters after every event.
#[test]
fn scoreboard_conserves_segments_under_loss() {
    for cc in cc_native::names() {
        let mut net = TestNet::new(cc, 30 * MS, Some(50_000_000));
        net.buffer_pkts = Some(60);
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        net.drop = Box::new(move |_, _| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x.is_multiple_of(100)
        });
        let errors = shared::<Vec<String>>();
        let e2 = errors.clone();
        net.on_event = Some(Box::new(move |t, snd| {
            if let Err(e) = snd.check_invariants() {
                e2.borrow_mut().push(format!("{cc} at {t}: {e}"));
            }
        }));
        net.start(0);
        net.run_until(5_000 * MS);
        assert!(errors.borrow().is_empty(), "{:?}", &errors.borrow()[..1]);
        let snd = &net.sender;
        let drops = net.sent.iter().filter(|s| s.dropped).count() as u64;
        assert!(drops > 20, "{cc}: only {drops} drops");
        let new_sent = net.sent.iter().filter(|s| !s.pkt.retrans).count() as u32;
        assert_eq!(new_sent, snd.snd_una() + snd.sk.packets_out, "{cc}");
        assert!(net.rx.rcv_nxt >= snd.snd_una(), "{cc}");
        // Every cumulatively ACKed segment got through at least once.
        let mut through = vec![false; snd.snd_una() as usize];
        for s in net.sent.iter().filter(|s| !s.dropped && s.pkt.seq < snd.snd_una()) {
            through[s.pkt.seq as usize] = true;
        }
        assert!(through.iter().all(|&b| b), "{cc}");
        let retrans = net.sent.iter().filter(|s| s.pkt.retrans).count() as u64;
        assert_eq!(retrans, snd.telemetry().retransmits_total, "{cc}");
        assert_eq!(net.sent.len() as u64, snd.telemetry().sent_segments, "{cc}");
        // 1% random loss over 30 ms: about Mathis' 1.22 MSS / (RTT sqrt(p)).
        assert!(snd.snd_una() > 2_000, "{cc} delivered only {}", snd.snd_una());
    }
}

/// TSO deferral (`tcp_tso_should_defer`): an ACK-clocked flow whose
/// receiver ACKs every segment frees one segment of cwnd per ACK; Linux
/// waits for a second one rather than send a 1-segment skb (its TSO size
/// is 2 at this rate), so new data leaves in 2-segment skbs, and the flow
/// still fills the link and keeps growing cwnd (deferring counts as
/// cwnd-limited). At 20 Mbit/s ACKs are 0.6 ms apart, within the 1 ms
/// since the last send for which Linux allows deferring.
#[test]
fn a_cwnd_limited_flow_defers_until_a_full_tso_skb_fits() {
    let rate_bps = 20_000_000u64;
    let mut net = TestNet::new("reno", 20 * MS, Some(rate_bps));
    net.buffer_pkts = Some(60);
    net.start(0);
    net.run_until(5_000 * MS);
    // Count cwnd increases in the Open state (Reno's congestion avoidance
    // grows cwnd only while tcp_is_cwnd_limited()).
    let grew = shared::<(u32, u32)>(); // (increases, last cwnd)
    let g2 = grew.clone();
    net.on_event = Some(Box::new(move |_, snd| {
        let t = snd.telemetry();
        let mut g = g2.borrow_mut();
        if t.ca_state == CaState::Open as u8 && g.1 != 0 && t.cwnd > g.1 {
            g.0 += 1;
        }
        g.1 = t.cwnd;
    }));
    let from = net.sent.len();
    net.run_until(6_000 * MS);
    assert!(grew.borrow().0 >= 10, "cwnd grew {} times in 1 s while deferring", grew.borrow().0);
    // skbs of new data: runs of consecutive segments sent at one instant.
    let mut skbs: Vec<u32> = Vec::new();
    let mut last: Option<(u64, u32)> = None;
    for s in net.sent[from..].iter().filter(|s| !s.pkt.retrans) {
        match last {
            Some((t, seq)) if t == s.t_ns && seq + 1 == s.pkt.seq => *skbs.last_mut().unwrap() += 1,
            _ => skbs.push(1),
        }
        last = Some((s.t_ns, s.pkt.seq));
    }
    let singles = skbs.iter().filter(|&&n| n == 1).count();
    assert!(skbs.len() > 300, "{} skbs", skbs.len());
    assert!(singles * 10 <= skbs.len(), "{singles} of {} skbs carry one segment", skbs.len());
    let segs: u32 = skbs.iter().sum();
    let link_pps = rate_bps as f64 / (WIRE as f64 * 8.0);
    assert!(segs as f64 >= 0.9 * link_pps, "{segs} segments in 1 s, link {link_pps:.0}/s");
}

/// `tcp_tso_should_defer` as of Linux 295ce1eb36ae (v6.18, and the stable
/// kernels down to 5.4): with room for one segment and a recent send, a
/// flow defers only if the oldest skb in flight is due to be ACKed within
/// min(1 ms, srtt/2); an older rule (head sent over srtt/2 ago) deferred
/// in every case below but the last.
#[test]
fn tso_deferral_waits_only_for_an_ack_due_within_a_millisecond() {
    let mut net = TestNet::new("reno", 20 * MS, Some(20_000_000));
    net.buffer_pkts = Some(60);
    net.start(0);
    net.run_until(3_000 * MS);
    let snd = &mut net.sender;
    assert!(snd.sk.packets_out > 4 && snd.sk.tcp_mstamp > 100_000);
    snd.sk.snd_cwnd = snd.in_flight() + 1; // room for one segment; TSO size 2
    snd.sk.srtt_us = 40_000 << 3;
    let now_us = snd.sk.tcp_mstamp;
    snd.now_ns = now_us * 1_000;
    snd.pacer.wstamp_ns = snd.now_ns - 500_000; // the last send, 0.5 ms ago
    let una = snd.sb.una();
    let defer_with_head_sent_ago = |snd: &mut TcpSender, ago_us: u64| {
        snd.sb.seg_mut(una).sent_us = now_us - ago_us;
        snd.tso_should_defer(2)
    };
    assert!(defer_with_head_sent_ago(snd, 39_500), "its ACK due in 0.5 ms: wait for it");
    assert!(defer_with_head_sent_ago(snd, 41_000), "its ACK overdue: wait");
    assert!(!defer_with_head_sent_ago(snd, 38_000), "its ACK due in 2 ms: send one segment now");
    assert!(!defer_with_head_sent_ago(snd, 25_000), "due in 15 ms (the old rule deferred here)");
    snd.pacer.wstamp_ns = snd.now_ns - 1_500_000; // the last send 1.5 ms ago
    assert!(!defer_with_head_sent_ago(snd, 39_500), "no deferral long after a send");
}

/// Linux sets PSH on the last segment of every skb of more than one
/// segment (`__tcp_transmit_skb`), never on a one-segment skb.
#[test]
fn psh_marks_the_last_segment_of_every_multi_segment_skb() {
    for (cc, rate) in [("reno", 20_000_000u64), ("bbr", 200_000_000)] {
        let mut net = TestNet::new(cc, 20 * MS, Some(rate));
        net.buffer_pkts = Some(200);
        net.start(0);
        net.run_until(3_000 * MS);
        let mut skbs: Vec<Vec<bool>> = Vec::new();
        let mut last: Option<(u64, u32)> = None;
        for s in net.sent.iter().filter(|s| !s.pkt.retrans) {
            match last {
                Some((t, seq)) if t == s.t_ns && seq + 1 == s.pkt.seq && !skbs.last().unwrap().last().unwrap() => {
                    skbs.last_mut().unwrap().push(s.pkt.psh)
                }
                _ => skbs.push(vec![s.pkt.psh]),
            }
            last = Some((s.t_ns, s.pkt.seq));
        }
        let multi = skbs.iter().filter(|k| k.len() > 1).count();
        assert!(multi > 100, "{cc}: {multi} multi-segment skbs");
        for k in &skbs {
            let n = k.len();
            assert!(k[..n - 1].iter().all(|p| !p), "{cc}: PSH inside an skb: {k:?}");
            assert_eq!(k[n - 1], n > 1, "{cc}: skb of {n}: {k:?}");
        }
    }
}

// ------------------------------------------------------------------ undo

use super::sender::INFINITE_SSTHRESH;

/// (time, ca_state, cwnd, ssthresh) after every event.
type StateLog = Rc<RefCell<Vec<(u64, u8, u32, u32)>>>;

fn log_states(net: &mut TestNet) -> StateLog {
    let log: StateLog = shared();
    let l = log.clone();
    net.on_event = Some(Box::new(move |t, snd| {
        let sk = &snd.sk;
        l.borrow_mut().push((t, sk.inet_conn.icsk_ca_state, sk.snd_cwnd, sk.snd_ssthresh));
    }));
    log
}

/// Segment 100 takes 8 ms longer than the rest (reordering): RACK takes it
/// for lost and fast-retransmits it. The receiver sends no timestamps, so
/// only the DSACK of the retransmission shows it was spurious: Linux
/// undoes the reduction (`tcp_try_undo_dsack` / `tcp_try_undo_recovery`),
/// ssthresh back to infinity and cwnd to its value before (Reno's
/// `undo_cwnd`).
#[test]
fn a_spurious_fast_retransmit_is_undone_by_its_dsack() {
    let mut net = TestNet::new("reno", 20 * MS, None);
    net.reorder = true;
    net.no_timestamps = true;
    net.extra_delay = Box::new(|_, seq, retrans| if seq == 100 && !retrans { 8 * MS } else { 0 });
    let log = log_states(&mut net);
    net.start(0);
    net.run_until(200 * MS);
    assert_eq!(net.transmissions_of(100).len(), 2, "one spurious fast retransmit");
    let log = log.borrow();
    let entered = log.iter().position(|e| e.1 == CaState::Recovery as u8).expect("Recovery");
    let prior_cwnd = log[entered - 1].2;
    assert!(log[entered].3 < INFINITE_SSTHRESH, "ssthresh() cut: {:?}", log[entered]);
    let last = log.last().unwrap();
    assert_eq!(last.3, INFINITE_SSTHRESH, "ssthresh restored");
    assert!(last.2 >= prior_cwnd, "cwnd {} back to >= {prior_cwnd}", last.2);
    assert_eq!(net.sender.undo.count, 1);
    assert_eq!(net.sender.undo.dsack_dups, 1);
    net.sender.check_invariants().unwrap();
}

/// As above with timestamps: the ACK the delayed original releases is a
/// partial ACK (data sent after it is still in flight) echoing the
/// original's TSval, older than the retransmission's: Eifel's test says
/// the packet was delayed, and with no retransmission left in flight
/// `tcp_try_undo_partial` undoes at once, before the DSACK arrives.
#[test]
fn a_partial_ack_echoing_the_original_undoes_the_recovery() {
    let mut net = TestNet::new("reno", 20 * MS, None);
    net.reorder = true;
    net.extra_delay = Box::new(|_, seq, retrans| if seq == 100 && !retrans { 8 * MS } else { 0 });
    let undone = shared::<Vec<(u64, u32, u32)>>();
    let u = undone.clone();
    let mut was_recovery = false;
    net.on_event = Some(Box::new(move |t, snd| {
        let rec = snd.ca_state() == CaState::Recovery as u8;
        if was_recovery && !rec {
            u.borrow_mut().push((t, snd.snd_una(), snd.rec.high_seq));
        }
        was_recovery = rec;
    }));
    net.start(0);
    net.run_until(200 * MS);
    let tx = net.transmissions_of(100);
    assert_eq!(tx.len(), 2);
    let undone = undone.borrow();
    let (t, una, high_seq) = undone[0];
    assert!(una < high_seq, "a partial ACK: una {una}, high_seq {high_seq}");
    // Before the retransmission (10 ms one way) could be DSACKed.
    assert!(t < tx[1] + 20 * MS, "undone at {t}, retransmitted at {}", tx[1]);
    assert_eq!(net.sender.sk.snd_ssthresh, INFINITE_SSTHRESH);
    assert_eq!(net.sender.undo.count, 1);
    net.sender.check_invariants().unwrap();
}

/// A CUBIC flow (20 ms, 50 Mbit/s) whose path RTT steps to 420 ms at
/// 300 ms: the ACKs of the data in flight come after the RTO (~220 ms),
/// which fires spuriously and cuts cwnd to 1. Checks that the RTO is
/// undone (cwnd back to at least its value before, CUBIC's `undo_cwnd`)
/// with only the head retransmitted.
fn spurious_rto_after_an_rtt_step(no_timestamps: bool) {
    let mut net = TestNet::new("cubic", 20 * MS, Some(50_000_000));
    net.no_timestamps = no_timestamps;
    net.extra_delay = Box::new(|t, _, _| if t >= 300 * MS { 400 * MS } else { 0 });
    let log = log_states(&mut net);
    net.start(0);
    net.run_until(1_500 * MS);
    let log = log.borrow();
    let rto = log.iter().position(|e| e.1 == CaState::Loss as u8).expect("an RTO");
    let before = log[rto - 1].2;
    assert_eq!(log[rto].2, 1);
    let after = log[rto..].iter().find(|e| e.1 != CaState::Loss as u8).unwrap();
    assert!(after.2 >= before, "cwnd {} after the undo, {before} before the RTO", after.2);
    assert_eq!(net.sender.telemetry().rto_count, 1);
    assert_eq!(net.sender.undo.count, 1);
    assert_eq!(net.sender.telemetry().retransmits_total, 1, "only the head retransmitted");
    net.sender.check_invariants().unwrap();
}

/// The first ACK after the spurious RTO echoes a TSval from before the
/// retransmission (Eifel, `tcp_try_undo_loss`): undone, lost marks cleared.
#[test]
fn a_spurious_rto_after_an_rtt_step_is_undone_by_timestamps() {
    spurious_rto_after_an_rtt_step(false);
}

/// Without timestamps, F-RTO (RFC 5682, Linux's default tcp_frto) sends
/// new data instead of retransmitting more after the first ACK, and the
/// next ACK, for data never retransmitted, shows the RTO was spurious.
#[test]
fn a_spurious_rto_is_undone_by_frto() {
    spurious_rto_after_an_rtt_step(true);
}

/// A tail loss probe retransmits the last segment, whose original was
/// only delayed; the ACK of the original is lost, so the first ACK after
/// the probe both advances snd_una to tlp_high_seq and DSACKs the probe.
/// `FLAG_DSACK_TLP` ends the episode (no loss, no cwnd reduction); without
/// it the episode stayed open and the next ACK above it would cut cwnd.
#[test]
fn a_dsack_of_the_loss_probe_ends_its_episode_without_a_reduction() {
    let stop = 201 * MS;
    let last = last_segment_before(stop);
    let mut net = TestNet::new("reno", 20 * MS, None).with_stop(stop);
    net.extra_delay = Box::new(move |_, seq, retrans| if seq == last && !retrans { 50 * MS } else { 0 });
    net.drop_ack = Box::new(move |a| a.cum_ack == last + 1 && a.n_sacks == 0);
    let log = log_states(&mut net);
    net.start(0);
    net.run_until(1_000 * MS);
    assert_eq!(net.transmissions_of(last).len(), 2, "the probe");
    assert_eq!(net.sender.stats.tlp_count, 1);
    assert_eq!(net.sender.snd_una(), last + 1);
    assert_eq!(net.sender.rec.tlp_high_seq, None, "episode ended");
    assert!(log.borrow().iter().all(|e| e.1 != CaState::Cwr as u8 && e.3 == INFINITE_SSTHRESH));
}
