//! NewReno against Linux's tcp_reno_* behaviour.

mod common;

use cc_native::{lookup, TcpSock};
use common::new_sock;

/// Ack one window, one packet per ACK, as a cwnd-limited sender would.
fn ack_one_rtt(sk: &mut TcpSock, cc: &str) {
    let ops = lookup(cc).unwrap();
    let window = sk.snd_cwnd;
    for _ in 0..window {
        sk.is_cwnd_limited = 1;
        ops.cong_avoid(sk, 0, 1);
    }
}

#[test]
fn slow_start_doubles_cwnd_per_rtt() {
    let reno = lookup("reno").unwrap();
    let mut sk = new_sock(1448);
    reno.init(&mut sk);
    let mut seen = vec![sk.snd_cwnd];
    for _ in 0..4 {
        ack_one_rtt(&mut sk, "reno");
        seen.push(sk.snd_cwnd);
    }
    assert_eq!(seen, [10, 20, 40, 80, 160]);
}

#[test]
fn slow_start_stops_at_ssthresh_then_adds_one_per_rtt() {
    let reno = lookup("reno").unwrap();
    let mut sk = new_sock(1448);
    sk.snd_ssthresh = 30;
    ack_one_rtt(&mut sk, "reno"); // 10 -> 20
    ack_one_rtt(&mut sk, "reno"); // 20 -> 30 (capped), 10 acks left over
    assert_eq!(sk.snd_cwnd, 30);
    for expect in 31..=35 {
        ack_one_rtt(&mut sk, "reno");
        assert_eq!(sk.snd_cwnd, expect, "congestion avoidance: +1 per RTT");
    }
    // A stretch ACK for a whole window counts as a whole window.
    let cwnd = sk.snd_cwnd;
    sk.snd_cwnd_cnt = 0;
    reno.cong_avoid(&mut sk, 0, cwnd);
    assert_eq!(sk.snd_cwnd, cwnd + 1);
}

#[test]
fn ssthresh_halves_with_floor_of_two() {
    let reno = lookup("reno").unwrap();
    let mut sk = new_sock(1448);
    sk.snd_cwnd = 41;
    assert_eq!(reno.ssthresh(&mut sk), 20);
    sk.snd_cwnd = 3;
    assert_eq!(reno.ssthresh(&mut sk), 2);
}

#[test]
fn no_growth_when_not_cwnd_limited() {
    let reno = lookup("reno").unwrap();
    let mut sk = new_sock(1448);
    sk.is_cwnd_limited = 0;
    sk.max_packets_out = 5; // used half the window: slow start may not grow
    reno.cong_avoid(&mut sk, 0, 5);
    assert_eq!(sk.snd_cwnd, 10);
    sk.max_packets_out = 6; // 10 < 2 * 6: in slow start, grow toward 2x use
    reno.cong_avoid(&mut sk, 0, 5);
    assert_eq!(sk.snd_cwnd, 15);
}

#[test]
fn cwnd_clamp_is_respected() {
    let mut sk = new_sock(1448);
    sk.snd_cwnd_clamp = 12;
    ack_one_rtt(&mut sk, "reno");
    assert_eq!(sk.snd_cwnd, 12);
}

#[test]
fn undo_restores_prior_cwnd() {
    let reno = lookup("reno").unwrap();
    let mut sk = new_sock(1448);
    sk.snd_cwnd = 15;
    sk.prior_cwnd = 30;
    assert_eq!(reno.undo_cwnd(&mut sk), 30);
    sk.prior_cwnd = 10;
    assert_eq!(reno.undo_cwnd(&mut sk), 15);
    assert!(!reno.has_cong_control());
    assert_eq!(reno.min_tso_segs(&mut sk), None);
    assert!(reno.params().is_empty());
}
