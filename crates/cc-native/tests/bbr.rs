//! BBR against Linux's tcp_bbr.c behaviour, on a clean fake network.

mod common;

use cc_native::{lookup, CaState, RateSample};
use common::{new_sock, FakeNet, Sample, DRAIN, MSS, PKT_TIME_US, PROBE_BW, PROBE_RTT, RTPROP_US, STARTUP};

const HIGH_GAIN: u32 = 256 * 2885 / 1000 + 1; // 739
const DRAIN_GAIN: u32 = 256 * 1000 / 2885; // 88

fn mode_name(m: u32) -> &'static str {
    ["STARTUP", "DRAIN", "PROBE_BW", "PROBE_RTT"][m as usize]
}

#[test]
fn init_paces_at_high_gain_times_initial_cwnd_over_srtt() {
    let bbr = lookup("bbr").unwrap();
    let mut sk = new_sock(1448);
    sk.srtt_us = 10_000 << 3; // 10 ms handshake RTT
    bbr.init(&mut sk);
    // Linux: bw = cwnd / srtt, rate = bw * mss * 2.885 * (1 - 1%).
    let want = 10.0 * 1448.0 / 0.010 * (HIGH_GAIN as f64 / 256.0) * 0.99;
    let got = sk.inet_conn.icsk_inet.sk_pacing_rate as f64;
    assert!((got / want - 1.0).abs() < 0.005, "pacing {got} want {want}");
    assert!((got / (10.0 * 1448.0 / 0.010) - 2.86).abs() < 0.02);
    assert_eq!(sk.snd_ssthresh, 0x7fff_ffff, "BBR has no slow-start threshold");
    assert_eq!(sk.cca.trace_mode, STARTUP);
    assert_eq!(sk.cca.trace_pacing_gain, HIGH_GAIN);
    assert_eq!(sk.inet_conn.icsk_inet.sk_pacing_status, cc_native::SK_PACING_NEEDED);
    assert_eq!(bbr.min_tso_segs(&mut sk), Some(2), "above 1.2 Mbit/s: 2 segs");
    assert_eq!(bbr.sndbuf_expand(&mut sk), Some(3));
}

#[test]
fn init_without_rtt_sample_assumes_one_millisecond() {
    let bbr = lookup("bbr").unwrap();
    let mut sk = new_sock(1000);
    bbr.init(&mut sk);
    let want = 10.0 * 1000.0 / 0.001 * (HIGH_GAIN as f64 / 256.0) * 0.99;
    let got = sk.inet_conn.icsk_inet.sk_pacing_rate as f64;
    assert!((got / want - 1.0).abs() < 0.005, "pacing {got} want {want}");
}

/// Runs of equal (mode, pacing_gain) in the trace: (mode, gain, start, end).
fn runs(trace: &[Sample]) -> Vec<(u32, u32, u64, u64)> {
    let mut out: Vec<(u32, u32, u64, u64)> = Vec::new();
    for s in trace {
        match out.last_mut() {
            Some(r) if r.0 == s.mode && r.1 == s.pacing_gain => r.3 = s.now_us,
            _ => out.push((s.mode, s.pacing_gain, s.now_us, s.now_us)),
        }
    }
    out
}

fn first(trace: &[Sample], mode: u32) -> &Sample {
    trace.iter().find(|s| s.mode == mode).unwrap_or_else(|| panic!("never in {}", mode_name(mode)))
}

/// One line per base RTT: the state at the last ACK of that RTT.
fn per_round_snapshot(net: &FakeNet, until_us: u64) -> String {
    let rtt = net.base_rtt_us();
    let mut out = String::from("# t_ms round mode pacing_gain cwnd_gain cwnd inflight bw_pkts_per_s\n");
    let mut i = 0;
    let mut t = rtt;
    while t <= until_us {
        while i + 1 < net.trace.len() && net.trace[i + 1].now_us <= t {
            i += 1;
        }
        let s = &net.trace[i];
        out.push_str(&format!(
            "{:>6} {:>4} {:<9} {:>3} {:>3} {:>4} {:>4} {:>6}\n",
            t / 1000,
            s.round,
            mode_name(s.mode),
            s.pacing_gain,
            s.cwnd_gain,
            s.cwnd,
            s.inflight,
            s.bw_bytes_per_sec / MSS as u64
        ));
        t += rtt;
    }
    out
}

fn check_snapshot(name: &str, got: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots").join(name);
    if std::env::var_os("CCARENA_UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|_| {
        panic!("{} missing: run with CCARENA_UPDATE_SNAPSHOTS=1 to create it", path.display())
    });
    if want != got {
        let diff: Vec<String> = want
            .lines()
            .zip(got.lines())
            .filter(|(a, b)| a != b)
            .take(10)
            .map(|(a, b)| format!("-{a}\n+{b}"))
            .collect();
        panic!(
            "{name} differs from the snapshot (CCARENA_UPDATE_SNAPSHOTS=1 to accept):\n{}",
            diff.join("\n")
        );
    }
}

#[test]
fn fake_network_startup_drain_probe_bw_probe_rtt() {
    let mut net = FakeNet::new("bbr", MSS, PKT_TIME_US, RTPROP_US);
    let rtt = net.base_rtt_us();
    let bdp = net.bdp_pkts();
    let link_pps = net.bw_pkts_per_sec();
    net.run_until(10_800_000);
    let snapshot = per_round_snapshot(&net, 10_800_000);
    if std::env::var_os("CCARENA_UPDATE_SNAPSHOTS").is_some() {
        check_snapshot("bbr_fake_network.txt", &snapshot);
    }
    let tr = &net.trace;

    // The bandwidth estimate converges on the bottleneck rate, from below.
    let late_bw = tr.last().unwrap().bw_bytes_per_sec as f64 / MSS as f64;
    assert!((late_bw / link_pps - 1.0).abs() < 0.01, "bw {late_bw} vs {link_pps}");
    assert!(tr.iter().all(|s| s.bw_bytes_per_sec as f64 / MSS as f64 <= link_pps * 1.001));

    // STARTUP: both gains 2/ln2 until the pipe is full...
    let drain = first(tr, DRAIN);
    for s in tr.iter().take_while(|s| s.mode == STARTUP) {
        assert_eq!((s.pacing_gain, s.cwnd_gain), (HIGH_GAIN, HIGH_GAIN));
    }
    // ...which it detects after 3 rounds without 25% growth: the bw reached
    // 80% of the link (the last step that can be a 25% growth) a few
    // rounds before Startup ends.
    let full = tr.iter().find(|s| s.bw_bytes_per_sec as f64 / MSS as f64 >= 0.8 * link_pps).unwrap();
    let rounds = drain.round - full.round;
    assert!((3..=5).contains(&rounds), "left Startup {rounds} rounds after full bw");
    // Startup doubled the sending rate per round: it filled a 201-packet
    // pipe from cwnd 10 within ~log2(20) + 3 rounds (+1 for the first RTT).
    assert!(drain.round <= 10, "Startup took {} rounds", drain.round);

    // DRAIN: pacing gain ln2/2 with the cwnd gain kept, until inflight
    // falls to the BDP (plus quantisation budget), within about one round.
    let probe_bw = first(tr, PROBE_BW);
    for s in tr.iter().filter(|s| s.mode == DRAIN) {
        assert_eq!((s.pacing_gain, s.cwnd_gain), (DRAIN_GAIN, HIGH_GAIN));
    }
    let drain_rounds = probe_bw.round - drain.round;
    assert!(drain_rounds <= 2, "Drain lasted {drain_rounds} rounds");
    let tso_budget = 3 * 9 + 1; // 3 TSO bursts of ~1 ms at 10 MB/s, even
    assert!((probe_bw.inflight as f64) <= bdp + tso_budget as f64 + 1.0,
            "Drain ended with {} in flight (BDP {bdp})", probe_bw.inflight);

    // PROBE_BW: the 8-phase cycle 5/4, 3/4, then 1 for 6 min_rtts.
    let bw_runs: Vec<_> = runs(tr)
        .into_iter()
        .filter(|r| r.0 == PROBE_BW && r.2 < 9_900_000)
        .collect();
    assert!(bw_runs.len() > 20, "too few ProbeBW phases: {}", bw_runs.len());
    assert_ne!(bw_runs[0].1, 192, "the random start phase is never the 3/4 phase");
    for w in bw_runs.windows(3).skip(1) {
        let (g, len) = (w[0].1, (w[1].2 - w[0].2) as f64 / rtt as f64);
        match g {
            // A probe lasts at least min_rtt and until inflight reaches
            // 5/4 BDP + quantisation budget: pacing 1/4 above the link adds
            // (1.25 BDP + 29 - BDP) / (BDP / 4 per rtt) ~ 1.6 rtts here.
            320 => {
                assert_eq!(w[1].1, 192, "5/4 is followed by 3/4");
                assert!((1.0..=2.0).contains(&len), "5/4 phase {len:.2} rtts");
            }
            // The drain phase ends at min_rtt or when inflight <= BDP.
            192 => {
                assert_eq!(w[1].1, 256, "3/4 is followed by cruising");
                assert!(len <= 1.1, "3/4 phase {len:.2} rtts");
            }
            // Six cruising phases of one min_rtt each.
            256 => {
                assert_eq!(w[1].1, 320, "cruising is followed by a probe");
                assert!((5.9..=6.4).contains(&len), "cruise {len:.2} rtts");
            }
            other => panic!("unexpected ProbeBW pacing gain {other}"),
        }
    }
    for s in tr.iter().filter(|s| s.mode == PROBE_BW) {
        assert_eq!(s.cwnd_gain, 512, "ProbeBW cwnd gain is 2");
    }

    // cwnd converges on Linux's target: 2 BDP, plus the quantisation
    // budget of 3 TSO bursts (~1 ms of data at the phase's pacing rate,
    // rounded up to even, +2 while probing), plus the ACK-aggregation
    // allowance (a couple of packets on this evenly clocked path).
    let steady: Vec<&Sample> = tr
        .iter()
        .filter(|s| s.mode == PROBE_BW && s.now_us > 2_000_000 && s.now_us < 9_900_000)
        .collect();
    for s in &steady {
        let bw_pps = s.bw_bytes_per_sec as f64 / MSS as f64;
        let two_bdp = (2.0 * bw_pps * rtt as f64 / 1e6).ceil() as u32;
        let tso = ((s.pacing_rate >> 10) as u32 / MSS).clamp(2, 127);
        let mut target = (two_bdp + 3 * tso + 1) & !1;
        if s.pacing_gain == 320 {
            target += 2;
        }
        // cwnd moves toward a new phase's target by at most one packet per
        // packet acked, so it may lag below a just-raised target.
        assert!(
            s.cwnd >= two_bdp && s.cwnd <= target + 4,
            "cwnd {} at {} us, target {target} (2 BDP {two_bdp}, tso {tso})",
            s.cwnd,
            s.now_us
        );
        let phase_start = bw_runs.iter().rev().find(|r| r.2 <= s.now_us).map_or(0, |r| r.2);
        if s.pacing_gain == 256 && s.now_us > phase_start + rtt {
            assert!(s.cwnd + 1 >= target, "cruising cwnd {} below target {target}", s.cwnd);
        }
    }

    // PROBE_RTT: min_rtt was last lowered ~20 ms in and never strictly
    // beaten since, so the 10 s filter expires at ~10.02 s.
    let pr = first(tr, PROBE_RTT);
    assert!((10_000_000..10_300_000).contains(&pr.now_us), "ProbeRTT at {} us", pr.now_us);
    let before = tr.iter().rev().find(|s| s.now_us < pr.now_us).unwrap();
    let in_rtt: Vec<&Sample> = tr.iter().filter(|s| s.mode == PROBE_RTT).collect();
    assert!(in_rtt.iter().all(|s| s.cwnd == 4), "ProbeRTT holds cwnd at 4");
    assert!(in_rtt.iter().all(|s| (s.pacing_gain, s.cwnd_gain) == (256, 256)));
    let last = in_rtt.last().unwrap();
    let exit = tr.iter().find(|s| s.now_us > last.now_us).expect("ProbeRTT ended");
    let dur = exit.now_us - pr.now_us;
    // max(200 ms, 1 round) at 4 packets, after inflight drained to 4.
    assert!((200_000..200_000 + 3 * rtt).contains(&dur), "ProbeRTT lasted {dur} us");
    assert_eq!(exit.mode, PROBE_BW, "a full pipe returns to ProbeBW");
    // The saved cwnd comes back at once (then is trimmed to the new
    // phase's target in the same ACK), instead of regrowing from 4.
    assert!(before.cwnd as f64 >= 2.0 * bdp);
    assert!(exit.cwnd as f64 >= 2.0 * bdp, "cwnd after ProbeRTT {}", exit.cwnd);
    // The queue drained: the RTT seen at 4 packets is the propagation RTT.
    assert!(tr.iter().filter(|s| s.mode == PROBE_RTT).any(|s| s.rtt_us == rtt));

    check_snapshot("bbr_fake_network.txt", &snapshot);
}

#[test]
fn loss_recovery_conserves_packets_then_restores_cwnd() {
    let mut net = FakeNet::new("bbr", MSS, PKT_TIME_US, RTPROP_US);
    net.run_until(3_000_000);
    let bbr = net.ops;
    let sk = &mut net.sk;
    let cwnd = sk.snd_cwnd;
    // Entering recovery: ssthresh() saves cwnd (the return value is unused).
    bbr.ssthresh(sk);
    sk.inet_conn.icsk_ca_state = CaState::Recovery as u8;
    let inflight = 50;
    sk.packets_out = inflight;
    let rs = RateSample { delivered: 1, interval_us: 20_000, acked_sacked: 1, losses: 1,
                          prior_delivered: sk.delivered, rtt_us: 21_000, ..Default::default() };
    bbr.cong_control(sk, 0, 0, &rs);
    assert_eq!(sk.snd_cwnd, inflight + 1, "packet conservation: inflight + acked");
    // Leaving recovery restores the cwnd saved on entry.
    sk.inet_conn.icsk_ca_state = CaState::Open as u8;
    let rs = RateSample { losses: 0, ..rs };
    bbr.cong_control(sk, 0, 0, &rs);
    assert!(sk.snd_cwnd >= cwnd.min(sk.snd_cwnd_clamp) - 1, "{} vs {cwnd}", sk.snd_cwnd);
    // undo keeps cwnd and restarts full-pipe detection.
    assert_eq!(bbr.undo_cwnd(sk), sk.snd_cwnd);
}

#[test]
fn rto_restarts_full_pipe_detection_but_keeps_mode() {
    let mut net = FakeNet::new("bbr", MSS, PKT_TIME_US, RTPROP_US);
    net.run_until(2_000_000);
    let mode = net.sk.cca.trace_mode;
    net.ops.set_state(&mut net.sk, CaState::Loss);
    net.sk.inet_conn.icsk_ca_state = CaState::Loss as u8;
    net.sk.inet_conn.icsk_ca_state = CaState::Open as u8;
    net.run_until(2_500_000);
    assert_eq!(mode, PROBE_BW);
    assert_eq!(net.sk.cca.trace_mode, PROBE_BW, "full_bw_reached is kept after an RTO");
}

#[test]
fn runs_are_deterministic_for_a_seed() {
    let mut a = FakeNet::new("bbr", MSS, PKT_TIME_US, RTPROP_US);
    let mut b = FakeNet::new("bbr", MSS, PKT_TIME_US, RTPROP_US);
    a.run_until(1_000_000);
    b.run_until(1_000_000);
    assert_eq!(per_round_snapshot(&a, 1_000_000), per_round_snapshot(&b, 1_000_000));
}
