//! BBRv2 (cc/bbr2.c: Google's v2alpha tcp_bbr2.c on the v3 core) on the
//! fake network of the BBR tests: a clean pipe (no loss, no ECN), so what
//! is checked is where v2's state machine differs from v3's
//! (crates/cc-native/tests/bbr3.rs) and what it shares: STARTUP and its
//! cwnd at 2.885, DRAIN at 0.344, PROBE_BW's DOWN / CRUISE / REFILL / UP
//! at 0.75 / 1 / 1 / 1.25 with cwnd gain 2 in every phase [v2 1]; UP
//! ending after one min_rtt at 1.25 BDP in flight [v2 5]; an RTT equal to
//! the minimum restarting the PROBE_RTT clock [v2 8]; v3's probe clocks.
//! The "[v2 N]" are the differences listed in cc/bbr2.c.

mod common;

use cc_native::lookup;
use common::{param_values, runs_where, set_params, FakeNet, Sample, DRAIN, MSS, PKT_TIME_US, PROBE_BW, PROBE_RTT, STARTUP};

/// Gains << 8, as v2alpha has them.
const STARTUP_GAIN: u32 = 739; // 2.885, pacing and cwnd
const DRAIN_PACING: u32 = 88; // 1/2.885
const UP: u32 = 320; // 1.25
const DOWN: u32 = 192; // 0.75
const CRUISE: u32 = 256; // also REFILL
const CWND_GAIN: u32 = 512; // 2, UP included

const END_US: u64 = 16_000_000;

fn run(cc: &str, rtprop_us: u64, params: &[(&str, u64)]) -> FakeNet {
    let values = param_values(cc, params);
    let mut net = FakeNet::new(cc, MSS, PKT_TIME_US, rtprop_us);
    set_params(&mut net.sk, &values);
    net.run_until(END_US);
    net
}

fn is_up(s: &Sample) -> bool {
    s.mode == PROBE_BW && s.pacing_gain == UP
}

#[test]
fn startup_drain_and_probe_bw_gains_are_v2s() {
    let net = run("bbr2", 20_000, &[]);
    let t = &net.trace;
    assert_eq!((t[0].mode, t[0].pacing_gain, t[0].cwnd_gain), (STARTUP, STARTUP_GAIN, STARTUP_GAIN));
    let drain: Vec<&Sample> = t.iter().filter(|s| s.mode == DRAIN).collect();
    assert!(!drain.is_empty(), "no DRAIN");
    // DRAIN keeps STARTUP's cwnd gain.
    assert!(drain.iter().all(|s| s.pacing_gain == DRAIN_PACING && s.cwnd_gain == STARTUP_GAIN));
    let first_bw = t.iter().position(|s| s.mode == PROBE_BW).unwrap();
    assert!(t[..first_bw].iter().all(|s| s.mode == STARTUP || s.mode == DRAIN));
    assert_eq!(t[first_bw].pacing_gain, DOWN, "PROBE_BW starts in DOWN");
    for s in &t[first_bw..] {
        match s.mode {
            // cwnd gain 2 in UP too (v3: 2.25).
            PROBE_BW => assert!([UP, DOWN, CRUISE].contains(&s.pacing_gain) && s.cwnd_gain == CWND_GAIN, "{s:?}"),
            PROBE_RTT => assert_eq!((s.pacing_gain, s.cwnd_gain), (256, 256)),
            m => panic!("mode {m} after DRAIN: {s:?}"),
        }
    }
}

#[test]
fn a_probe_lasts_one_min_rtt_where_v3s_waits_for_a_plateau() {
    for rtprop in [20_000, 60_000] {
        let net = run("bbr2", rtprop, &[]);
        let t = &net.trace;
        let ups: Vec<(u64, u64)> = runs_where(t, is_up).into_iter().filter(|w| w.1 < END_US - 2 * rtprop).collect();
        assert!(ups.len() >= 4, "{ups:?}");
        // v2 stops once a min_rtt has passed with 1.25 BDP in flight,
        // which a clean pipe reaches within that min_rtt; then DOWN.
        for &(a, b) in &ups {
            assert!((rtprop - 2 * PKT_TIME_US..=rtprop + 10 * PKT_TIME_US).contains(&(b - a)), "{rtprop}: {ups:?}");
            let next = t.iter().find(|s| s.now_us > b).unwrap();
            assert_eq!((next.mode, next.pacing_gain), (PROBE_BW, DOWN), "{next:?}");
        }
        // v3 probes until the bw stops growing: 3 rounds and more.
        let v3 = run("bbr3", rtprop, &[]);
        let v3_ups = runs_where(&v3.trace, |s| s.mode == PROBE_BW && s.pacing_gain == UP);
        assert!(v3_ups.iter().filter(|w| w.1 < END_US - 2 * rtprop).all(|w| w.1 - w.0 >= 3 * rtprop), "{v3_ups:?}");
    }
}

#[test]
fn an_rtt_equal_to_the_min_postpones_probe_rtt() {
    // The clean pipe's RTT returns to exactly its minimum whenever DOWN
    // drains the queue: v2 counts that as a new minimum (<=) and restarts
    // the 5-s PROBE_RTT clock; v3 (<) enters PROBE_RTT every 5 s.
    let net = run("bbr2", 60_000, &[]);
    assert!(net.trace.iter().all(|s| s.mode != PROBE_RTT));
    let v3 = run("bbr3", 60_000, &[]);
    assert_eq!(runs_where(&v3.trace, |s| s.mode == PROBE_RTT).len(), 3);
}

#[test]
fn probes_follow_v3s_clocks() {
    // The shared code: the wall clock (2 s + rand 1 s from DOWN's start)
    // on a long path, min(63, BDP) rounds on a short one.
    for (rtprop, lo, hi) in [(60_000u64, 2_000_000u64, 3_000_000 + 3 * 61_000), (20_000, 1_000_000, 1_600_000)] {
        let net = run("bbr2", rtprop, &[]);
        let t = &net.trace;
        let downs = runs_where(t, |s| s.mode == PROBE_BW && s.pacing_gain == DOWN);
        let ups = runs_where(t, is_up);
        let mut waits = Vec::new();
        for &(u, _) in ups.iter().filter(|w| w.0 > 1_000_000) {
            let c = downs.iter().map(|w| w.0).filter(|&d| d < u).max().unwrap();
            waits.push(u - c);
        }
        assert!(waits.len() >= 3, "{waits:?}");
        assert!(waits.iter().all(|w| (lo..=hi).contains(w)), "{rtprop}: {waits:?}");
    }
}

#[test]
fn v3s_gains_are_parameters_of_bbr2() {
    assert!(lookup("bbr2").is_some() && lookup("bbr2_tuned").is_some());
    // v3's DOWN gain and UP cwnd gain, set on a bbr2 flow.
    let net = run("bbr2", 20_000, &[("probe_down_gain_ppm", 906_250), ("probe_up_cwnd_gain_ppm", 250_000)]);
    let t = &net.trace;
    assert!(t.iter().any(|s| s.mode == PROBE_BW && s.pacing_gain == 232));
    assert!(t.iter().filter(|s| is_up(s)).all(|s| s.cwnd_gain == 576));
}

#[test]
fn bbr2s_table_is_bbr3s_with_v2s_constants() {
    // One table (bbr3_params.h); the defaults differ exactly where
    // v2alpha's constants do [v2 1, 2], and the tuned variant in its two.
    let v3 = lookup("bbr3").unwrap().params();
    let v2 = lookup("bbr2").unwrap().params();
    let tuned = lookup("bbr2_tuned").unwrap().params();
    assert_eq!(v2.iter().map(|p| p.name).collect::<Vec<_>>(), v3.iter().map(|p| p.name).collect::<Vec<_>>());
    let differ = |a: &[cc_native::ParamInfo], b: &[cc_native::ParamInfo]| -> Vec<(&'static str, u64)> {
        a.iter().zip(b).filter(|(x, y)| x.default != y.default).map(|(x, _)| (x.name, x.default)).collect()
    };
    assert_eq!(
        differ(&v2, &v3),
        [
            ("startup_pacing_gain_ppm", 2_886_719), // 739/256
            ("startup_cwnd_gain_ppm", 2_886_719),
            ("probe_down_gain_ppm", 750_000),
            ("probe_up_cwnd_gain_ppm", 0),
            ("full_loss_cnt", 8),
        ]
    );
    assert_eq!(differ(&tuned, &v2), [("pacing_margin_ppm", 70_000), ("send_quantum", 2)]);
}
