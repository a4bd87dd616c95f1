//! CUBIC against Linux's tcp_cubic.c behaviour.

mod common;

use cc_native::{lookup, AckSample, CaState, TcpSock};
use common::{new_sock, set_params};

const RTT_US: u64 = 100_000;

/// Ack one window at time `now_us`, spreading the ACKs over the RTT.
fn ack_one_rtt(sk: &mut TcpSock, now_us: u64) {
    let cubic = lookup("cubic").unwrap();
    let window = sk.snd_cwnd as u64;
    for i in 0..window {
        sk.tcp_mstamp = now_us + i * RTT_US / window;
        sk.is_cwnd_limited = 1;
        cubic.pkts_acked(sk, &AckSample { pkts_acked: 1, rtt_us: RTT_US as i32, in_flight: 0 });
        cubic.cong_avoid(sk, 0, 1);
    }
}

/// Cubic with HyStart off, so slow start runs to ssthresh.
fn params_without_hystart() -> Vec<u64> {
    let cubic = lookup("cubic").unwrap();
    let mut p: Vec<u64> = cubic.params().iter().map(|p| p.default).collect();
    p[cubic.param_index("hystart").unwrap()] = 0;
    p
}

#[test]
fn parameter_table_has_linux_defaults() {
    let cubic = lookup("cubic").unwrap();
    let get = |n: &str| cubic.params()[cubic.param_index(n).unwrap()].default;
    assert_eq!(get("beta_ppm"), 700_195); // 717/1024, Linux's beta
    assert_eq!(get("bic_scale"), 41);
    assert_eq!(get("hystart_low_window"), 16);
    assert_eq!(get("hystart_ack_delta_us"), 2000);
    assert_eq!(get("hystart_detect"), 3);
}

#[test]
fn slow_start_doubles_cwnd_per_rtt() {
    let cubic = lookup("cubic").unwrap();
    let params = params_without_hystart();
    let mut sk = new_sock(1448);
    set_params(&mut sk, &params);
    cubic.init(&mut sk);
    let mut seen = vec![sk.snd_cwnd];
    for r in 0..4 {
        ack_one_rtt(&mut sk, 1_000_000 + r * RTT_US);
        seen.push(sk.snd_cwnd);
    }
    assert_eq!(seen, [10, 20, 40, 80, 160]);
}

#[test]
fn ssthresh_is_0_7_cwnd() {
    let cubic = lookup("cubic").unwrap();
    let mut sk = new_sock(1448);
    cubic.init(&mut sk);
    sk.snd_cwnd = 100;
    assert_eq!(cubic.ssthresh(&mut sk), 100 * 717 / 1024); // 70
    sk.snd_cwnd = 3;
    assert_eq!(cubic.ssthresh(&mut sk), 2, "floor of 2 packets");
}

/// Two losses: at 100, then at 80 < W_max. With fast convergence the
/// second epoch plateaus at 80 * (1 + beta) / 2 = 68 (yield to a newcomer);
/// without it, at 80. (Reno-friendliness is off: at these small windows
/// the Reno estimate would outgrow the cubic and hide the plateau.)
#[test]
fn fast_convergence_lowers_the_plateau_when_w_max_falls() {
    for (fast, plateau) in [(1u64, 68.0), (0, 80.0)] {
        let cubic = lookup("cubic").unwrap();
        let mut params = params_without_hystart();
        params[cubic.param_index("fast_convergence").unwrap()] = fast;
        params[cubic.param_index("tcp_friendliness").unwrap()] = 0;
        let mut sk = new_sock(1448);
        set_params(&mut sk, &params);
        cubic.init(&mut sk);
        sk.snd_cwnd = 100;
        sk.tcp_mstamp = 1_000_000;
        cubic.ssthresh(&mut sk);
        sk.snd_cwnd = 80;
        let ss = cubic.ssthresh(&mut sk);
        sk.snd_cwnd = ss;
        sk.snd_ssthresh = ss;
        // K = cbrt((plateau - 56) / 0.4): 3.1 s or 3.9 s.
        let k = ((plateau - 56.0) / 0.4f64).cbrt();
        let mut now = 1_000_000u64;
        while ((now - 1_000_000) as f64) < k * 1e6 {
            ack_one_rtt(&mut sk, now);
            now += RTT_US;
        }
        let c = sk.snd_cwnd as f64;
        assert!((c - plateau).abs() <= 2.0, "fast={fast}: cwnd {c} at K, plateau {plateau}");
    }
}

/// After a loss at W_max = 100, cwnd follows W(t) = C (t - K)^3 + W_max:
/// a concave climb back to W_max at K = cbrt(W_max (1 - beta) / C) ~ 4.2 s,
/// a plateau around it, then convex probing beyond.
#[test]
fn window_follows_the_cubic_after_a_loss() {
    let cubic = lookup("cubic").unwrap();
    let params = params_without_hystart();
    let mut sk = new_sock(1448);
    set_params(&mut sk, &params);
    cubic.init(&mut sk);
    sk.snd_cwnd = 100;
    sk.tcp_mstamp = 1_000_000;
    let ssthresh = cubic.ssthresh(&mut sk);
    sk.snd_ssthresh = ssthresh;
    sk.snd_cwnd = ssthresh; // 70, as after fast recovery

    let beta = 717.0 / 1024.0;
    let k_s = (100.0 * (1.0 - beta) / 0.4f64).cbrt();
    let mut at = Vec::new(); // (seconds since loss, cwnd)
    let mut now = 1_000_000u64;
    while now < 1_000_000 + 7_000_000 {
        ack_one_rtt(&mut sk, now);
        now += RTT_US;
        at.push(((now - 1_000_000) as f64 / 1e6, sk.snd_cwnd));
    }
    let cwnd_at = |t: f64| at.iter().find(|(s, _)| *s >= t).unwrap().1 as f64;
    let w = |t: f64| 0.4 * (t - k_s).powi(3) + 100.0;
    // The window tracks the cubic one RTT ahead, within a few packets.
    for t in [1.0, 2.0, 3.0, 4.0, 5.0, 6.0] {
        let want = w(t + 0.1);
        assert!((cwnd_at(t) - want).abs() <= 4.0, "t={t}: cwnd {} vs W {want:.1}", cwnd_at(t));
    }
    // Concave, then a plateau at W_max, then convex.
    assert!(cwnd_at(1.0) - cwnd_at(0.1) > cwnd_at(4.0) - cwnd_at(3.0));
    assert!((cwnd_at(k_s) - 100.0).abs() <= 2.0);
    assert!(cwnd_at(6.9) - cwnd_at(5.9) > cwnd_at(5.0) - cwnd_at(4.0));
}

/// HyStart's delay detector: once a round's first 8 RTT samples all exceed
/// min_rtt + clamp(min_rtt / 8, 4 ms, 16 ms), slow start ends (ssthresh =
/// cwnd) before any loss.
#[test]
fn hystart_delay_increase_ends_slow_start() {
    let cubic = lookup("cubic").unwrap();
    let mut params: Vec<u64> = cubic.params().iter().map(|p| p.default).collect();
    params[cubic.param_index("hystart_detect").unwrap()] = 2; // delay only
    let mut sk = new_sock(1448);
    set_params(&mut sk, &params);
    sk.snd_cwnd = 32;
    sk.tcp_mstamp = 1_000_000;
    sk.snd_nxt = 32 * 1448;
    cubic.init(&mut sk);

    let sample = |sk: &mut TcpSock, t: u64, rtt: i32| {
        sk.tcp_mstamp = t;
        cubic.pkts_acked(sk, &AckSample { pkts_acked: 1, rtt_us: rtt, in_flight: 32 });
    };
    // Round 1: 20 ms RTTs; delay_min = 20 ms.
    for i in 0..16 {
        sk.snd_una = i * 1448;
        sample(&mut sk, 1_000_000 + i as u64 * 1000, 20_000);
    }
    assert_eq!(sk.snd_ssthresh, 0x7fff_ffff);
    // Round 2 (snd_una passes the round's end): +3 ms is within the
    // 4 ms threshold, nothing happens.
    sk.snd_una = 33 * 1448;
    sk.snd_nxt = 64 * 1448;
    for i in 0..12 {
        sample(&mut sk, 1_100_000 + i * 1000, 23_000);
    }
    assert_eq!(sk.snd_ssthresh, 0x7fff_ffff);
    // Round 3: +5 ms > 4 ms: the 9th sample ends slow start.
    sk.snd_una = 65 * 1448;
    sk.snd_nxt = 96 * 1448;
    for i in 0..8 {
        sample(&mut sk, 1_200_000 + i * 1000, 25_000);
        assert_eq!(sk.snd_ssthresh, 0x7fff_ffff, "needs 8 samples first");
    }
    sample(&mut sk, 1_208_000, 25_000);
    assert_eq!(sk.snd_ssthresh, 32);
}

/// HyStart's ACK-train detector: ACKs of one round, closely spaced, that
/// span more than min_rtt / 2 (unpaced) mean the pipe is full.
#[test]
fn hystart_ack_train_ends_slow_start() {
    let cubic = lookup("cubic").unwrap();
    let mut params: Vec<u64> = cubic.params().iter().map(|p| p.default).collect();
    params[cubic.param_index("hystart_detect").unwrap()] = 1; // ACK train only
    let mut sk = new_sock(1448);
    set_params(&mut sk, &params);
    sk.snd_cwnd = 32;
    sk.tcp_mstamp = 1_000_000;
    sk.snd_nxt = 32 * 1448;
    cubic.init(&mut sk);
    // 20 ms RTT; ACKs 1 ms apart; the train passes 10 ms after 11 ACKs.
    for i in 0..=10u64 {
        sk.tcp_mstamp = 1_000_000 + i * 1000;
        cubic.pkts_acked(&mut sk, &AckSample { pkts_acked: 1, rtt_us: 20_000, in_flight: 32 });
        assert_eq!(sk.snd_ssthresh, 0x7fff_ffff, "train of {i} ms");
    }
    sk.tcp_mstamp = 1_011_000;
    cubic.pkts_acked(&mut sk, &AckSample { pkts_acked: 1, rtt_us: 20_000, in_flight: 32 });
    assert_eq!(sk.snd_ssthresh, 32);
}

#[test]
fn rto_forgets_w_max_and_undo_restores_prior_cwnd() {
    let cubic = lookup("cubic").unwrap();
    let params = params_without_hystart();
    let mut sk = new_sock(1448);
    set_params(&mut sk, &params);
    cubic.init(&mut sk);
    sk.snd_cwnd = 100;
    cubic.ssthresh(&mut sk); // W_max = 100
    cubic.set_state(&mut sk, CaState::Loss);
    // With W_max forgotten, the first epoch starts at the origin: the
    // cubic grows from cwnd itself, capped at 5% per RTT before a loss.
    sk.snd_cwnd = 50;
    sk.snd_ssthresh = 50;
    ack_one_rtt(&mut sk, 2_000_000);
    assert!(sk.snd_cwnd <= 53, "cwnd {} grew faster than 5%/RTT", sk.snd_cwnd);
    assert!(sk.snd_cwnd > 50);
    sk.prior_cwnd = 80;
    assert_eq!(cubic.undo_cwnd(&mut sk), 80);
}

/// TCP friendliness: where Reno (AIMD with CUBIC's beta) would be faster —
/// small windows, long epochs — CUBIC follows the Reno estimate instead of
/// its own plateau.
#[test]
fn tcp_friendliness_outgrows_the_cubic_at_small_windows() {
    let grow = |friendly: u64| {
        let cubic = lookup("cubic").unwrap();
        let mut params = params_without_hystart();
        params[cubic.param_index("tcp_friendliness").unwrap()] = friendly;
        let mut sk = new_sock(1448);
        set_params(&mut sk, &params);
        cubic.init(&mut sk);
        sk.snd_cwnd = 30;
        sk.tcp_mstamp = 1_000_000;
        let ss = cubic.ssthresh(&mut sk); // 21, W_max 30, K ~ 2.8 s
        sk.snd_cwnd = ss;
        sk.snd_ssthresh = ss;
        let mut now = 1_000_000;
        for _ in 0..28 {
            ack_one_rtt(&mut sk, now);
            now += RTT_US;
        }
        sk.snd_cwnd
    };
    let (cubic_only, friendly) = (grow(0), grow(1));
    assert!(cubic_only <= 31, "cubic alone plateaus near W_max: {cubic_only}");
    assert!(friendly >= cubic_only + 3, "Reno estimate leads: {friendly} vs {cubic_only}");
}
