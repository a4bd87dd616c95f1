//! BBRv3 (cc/bbr3.c) on the fake network of the BBR tests: a clean pipe
//! (no loss, no ECN), so what is checked is the state machine and its
//! clocks, as Google's v3 tcp_bbr.c sets them: STARTUP at 2.77, DRAIN at
//! 0.344, PROBE_BW's DOWN / CRUISE / REFILL / UP at 0.906 / 1 / 1 / 1.25
//! with cwnd gain 2 (2.25 in UP), probes every 2-3 s of wall clock or
//! min(63, BDP) rounds, PROBE_RTT every 5 s at half the BDP for 200 ms.
//! Loss and ECN responses need a lossy bottleneck: tests/test_bbr3.py.

mod common;

use cc_native::lookup;
use common::{param_values, runs_where, set_params, FakeNet, Sample, DRAIN, MSS, PKT_TIME_US, PROBE_BW, PROBE_RTT, STARTUP};

/// Gains << 8, as v3 has them.
const STARTUP_PACING: u32 = 710; // 2.77
const STARTUP_CWND: u32 = 512; // 2
const DRAIN_PACING: u32 = 88; // 0.344
const UP: u32 = 320; // 1.25
const DOWN: u32 = 232; // 0.906 (v3: 91/100)
const CRUISE: u32 = 256; // also REFILL
const CWND_GAIN: u32 = 512;
const UP_CWND_GAIN: u32 = 576; // 2.25

const END_US: u64 = 16_000_000;

fn run(rtprop_us: u64, params: &[(&str, u64)]) -> (FakeNet, Vec<u64>) {
    let values = param_values("bbr3", params);
    let mut net = FakeNet::new("bbr3", MSS, PKT_TIME_US, rtprop_us);
    set_params(&mut net.sk, &values);
    net.run_until(END_US);
    (net, values)
}

/// First ACKs of the runs of samples for which `pred` holds.
fn starts(trace: &[Sample], pred: impl Fn(&Sample) -> bool) -> Vec<u64> {
    let mut out = Vec::new();
    let mut prev = false;
    for s in trace {
        let now = pred(s);
        if now && !prev {
            out.push(s.now_us);
        }
        prev = now;
    }
    out
}

fn is_up(s: &Sample) -> bool {
    s.mode == PROBE_BW && s.pacing_gain == UP
}

/// A PROBE_BW cycle starts with DOWN, where the probe-wait clock starts;
/// after PROBE_RTT it starts in CRUISE (v3: DOWN then CRUISE on one ACK).
fn cycle_starts(trace: &[Sample]) -> Vec<u64> {
    let mut out = starts(trace, |s| s.mode == PROBE_BW && s.pacing_gain == DOWN);
    let mut after_probe_rtt = Vec::new();
    for w in trace.windows(2) {
        if w[0].mode == PROBE_RTT && w[1].mode == PROBE_BW {
            after_probe_rtt.push(w[1].now_us);
        }
    }
    out.extend(after_probe_rtt);
    out.sort_unstable();
    out
}

/// For each probe (UP) after `from_us`: us from the start of its cycle.
fn waits_before_probes(trace: &[Sample], from_us: u64) -> Vec<u64> {
    let cycles = cycle_starts(trace);
    starts(trace, is_up)
        .into_iter()
        .filter(|&u| u >= from_us)
        .map(|u| u - cycles.iter().copied().filter(|&c| c < u).max().expect("a cycle before the probe"))
        .collect()
}

#[test]
fn startup_drain_and_probe_bw_gains_are_v3s() {
    let (net, _) = run(20_000, &[]);
    let t = &net.trace;
    assert_eq!((t[0].mode, t[0].pacing_gain, t[0].cwnd_gain), (STARTUP, STARTUP_PACING, STARTUP_CWND));
    let drain: Vec<&Sample> = t.iter().filter(|s| s.mode == DRAIN).collect();
    assert!(!drain.is_empty(), "no DRAIN");
    assert!(drain.iter().all(|s| s.pacing_gain == DRAIN_PACING && s.cwnd_gain == STARTUP_CWND));
    // After DRAIN: only PROBE_BW's four phases and PROBE_RTT, with v3's
    // gains; cwnd gain 2.25 exactly in UP.
    let first_bw = t.iter().position(|s| s.mode == PROBE_BW).unwrap();
    assert!(t[..first_bw].iter().all(|s| s.mode == STARTUP || s.mode == DRAIN));
    assert_eq!(t[first_bw].pacing_gain, DOWN, "PROBE_BW starts in DOWN");
    for s in &t[first_bw..] {
        match s.mode {
            PROBE_BW => {
                assert!([UP, DOWN, CRUISE].contains(&s.pacing_gain), "{s:?}");
                let want = if s.pacing_gain == UP { UP_CWND_GAIN } else { CWND_GAIN };
                assert_eq!(s.cwnd_gain, want, "{s:?}");
            }
            PROBE_RTT => assert_eq!((s.pacing_gain, s.cwnd_gain), (256, 256)),
            m => panic!("mode {m} after DRAIN: {s:?}"),
        }
    }
    // Every probe is followed by DOWN (a plateau ends it on a clean pipe).
    for w in runs_where(t, is_up) {
        let next = t.iter().find(|s| s.now_us > w.1).unwrap();
        assert!(next.pacing_gain == DOWN || next.mode == PROBE_RTT, "{next:?}");
    }
}

#[test]
fn on_a_long_path_probes_come_two_to_three_seconds_apart() {
    // 60 ms: 63 rounds (Reno coexistence) take 3.8 s, longer than the
    // wall-clock wait, 2 s + rand(1 s), which therefore decides.
    let (net, _) = run(60_000, &[]);
    let waits = waits_before_probes(&net.trace, 1_000_000);
    assert!(waits.len() >= 3, "{waits:?}");
    // The wait, then one round of REFILL (~60 ms) and the ACK that ends it.
    for &w in &waits {
        assert!((2_000_000..=3_000_000 + 2 * 61_000).contains(&w), "{waits:?}");
    }
    // Random, not fixed.
    assert!(waits.iter().max().unwrap() - waits.iter().min().unwrap() > 100_000, "{waits:?}");
}

#[test]
fn on_a_short_path_the_reno_bound_of_63_rounds_decides() {
    // 20 ms, BDP ~200 packets: min(63, BDP) = 63 rounds, ~1.3 s, shorter
    // than the 2-3 s wall clock.
    let (net, _) = run(20_000, &[]);
    let t = &net.trace;
    let round_at = |us: u64| t.iter().find(|s| s.now_us >= us).unwrap().round;
    let cycles = cycle_starts(t);
    let ups: Vec<u64> = starts(t, is_up).into_iter().filter(|&u| u >= 1_000_000).collect();
    assert!(ups.len() >= 6, "{ups:?}");
    for &u in &ups {
        let c = cycles.iter().copied().filter(|&c| c < u).max().unwrap();
        // 62 or 63 rounds (the count starts at rand(2)), then REFILL's.
        let rounds = round_at(u) - round_at(c);
        assert!((63..=65).contains(&rounds), "{rounds} rounds, {} us", u - c);
        assert!(u - c < 2_000_000);
    }
    // The wall clock decides again when the bound is raised.
    let (net, _) = run(20_000, &[("bw_probe_max_rounds", 255)]);
    let waits = waits_before_probes(&net.trace, 1_000_000);
    assert!(waits.len() >= 3 && waits.iter().all(|&w| (2_000_000..=3_000_000 + 2 * 21_000).contains(&w)), "{waits:?}");
}

#[test]
fn probe_rtt_every_five_seconds_at_half_the_bdp_for_200_ms() {
    let rtprop = 60_000;
    let (net, _) = run(rtprop, &[]);
    let t = &net.trace;
    let bdp = net.bdp_pkts();
    let episodes = runs_where(t, |s| s.mode == PROBE_RTT);
    assert!(episodes.len() >= 2, "{episodes:?}");
    // 5 s without a lower RTT (a clean pipe never shows one), then 200 ms
    // plus the round that ends it.
    for w in episodes.windows(2) {
        let gap = w[1].0 - w[0].1;
        assert!((5_000_000..=5_000_000 + 2 * rtprop).contains(&gap), "{episodes:?}");
    }
    for &(a, b) in &episodes {
        assert!((200_000..=200_000 + 3 * rtprop).contains(&(b - a)), "{episodes:?}");
    }
    // Its cwnd: max(4, BDP / 2), v1's 4 packets being far less.
    let cwnd = t.iter().filter(|s| s.mode == PROBE_RTT).map(|s| s.cwnd).max().unwrap();
    assert!((cwnd as f64 - bdp / 2.0).abs() <= 3.0, "cwnd {cwnd}, BDP {bdp:.0}");
}

#[test]
fn a_lone_flow_keeps_the_pipe_full_with_little_queue() {
    let (net, _) = run(20_000, &[]);
    let t = &net.trace;
    let (a, b) = (t.iter().find(|s| s.now_us >= 2_000_000).unwrap(), t.last().unwrap());
    let util = (b.delivered - a.delivered) as f64 / ((b.now_us - a.now_us) as f64 / PKT_TIME_US as f64);
    // PROBE_RTT costs ~2.5% (half the BDP for 200 ms and a round, every
    // 5 s), the 1% pacing margin the rest.
    assert!(util >= 0.95, "utilisation {util:.3}");
    // Cruising at bw less 1%: the queue stays a few packets deep, so RTT
    // samples stay near the propagation delay outside the probes.
    let cruise: Vec<u64> =
        t.iter().filter(|s| s.now_us > 2_000_000 && s.mode == PROBE_BW && s.pacing_gain == CRUISE).map(|s| s.rtt_us).collect();
    let median = {
        let mut c = cruise.clone();
        c.sort_unstable();
        c[c.len() / 2]
    };
    assert!(median <= 20_000 + 10 * PKT_TIME_US, "median cruise RTT {median} us");
}

#[test]
fn parameters_reach_the_state_machine() {
    let ops = lookup("bbr3").unwrap();
    // (The table fits CCA_MAX_PARAMS: a static assertion in the C build.)
    // A gentler probe and a faster ProbeRTT clock, from the table.
    let (net, _) = run(20_000, &[("probe_up_gain_ppm", 1_125_000), ("probe_rtt_win_us", 2_000_000)]);
    let gains: Vec<u32> = net.trace.iter().filter(|s| s.mode == PROBE_BW).map(|s| s.pacing_gain).collect();
    assert!(gains.contains(&288) && !gains.contains(&UP), "1.125 << 8 = 288");
    let episodes = runs_where(&net.trace, |s| s.mode == PROBE_RTT);
    assert!(episodes.len() >= 5, "{episodes:?}");
}
