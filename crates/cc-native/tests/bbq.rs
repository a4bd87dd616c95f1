//! BBQ (cc/bbq.c) on the fake network of the BBR tests: BBR until a
//! persistent queue appears, then a probing phase capped at alpha; and the
//! paper's first cut, which drains to one BDP.
//!
//! A persistent queue is what the flow sees as one: RTT samples above
//! (1 + beta) * MinRTT for whole rounds. The fake network makes it by
//! lengthening the path's propagation time mid-run (from 20 ms to more):
//! the 10 s MinRTT filter still holds 20 ms, so to the flow the extra time
//! is a standing queue that its own sending does not drain, as a queue
//! kept up by a competitor is.

mod common;

use cc_native::lookup;
use common::{param_values, set_params, FakeNet, Sample, MSS, PKT_TIME_US, PROBE_BW, RTPROP_US};

const UP: u32 = 320; // 5/4 << 8
const DOWN: u32 = 192; // 3/4 << 8
const CRUISE: u32 = 256;

/// When the "queue" appears: long after Startup, in steady ProbeBW.
const QUEUE_AT_US: u64 = 3_000_000;
/// Until the 10 s MinRTT filter would expire and adopt the longer path.
const END_US: u64 = 9_500_000;

/// A ProbeBW phase: pacing gain, first and last ACK, and the inflight
/// (packets) at its last ACK.
#[derive(Clone, Copy, Debug)]
struct Phase {
    gain: u32,
    start_us: u64,
    end_us: u64,
    inflight_end: u32,
    bw_pps: f64,
    pacing_rate: u64,
}

impl Phase {
    /// From this phase's first ACK to the next phase's first ACK, us.
    fn len_us(&self, next: &Phase) -> u64 {
        next.start_us - self.start_us
    }
}

fn phases(trace: &[Sample], from_us: u64) -> Vec<Phase> {
    let mut out: Vec<Phase> = Vec::new();
    for s in trace.iter().filter(|s| s.now_us >= from_us) {
        // Gain 0 stands for "not in ProbeBW" (ProbeRTT).
        let gain = if s.mode == PROBE_BW { s.pacing_gain } else { 0 };
        let bw_pps = s.bw_bytes_per_sec as f64 / MSS as f64;
        match out.last_mut() {
            Some(p) if p.gain == gain => {
                p.end_us = s.now_us;
                p.inflight_end = s.inflight;
                p.bw_pps = bw_pps;
                p.pacing_rate = s.pacing_rate;
            }
            _ => out.push(Phase {
                gain,
                start_us: s.now_us,
                end_us: s.now_us,
                inflight_end: s.inflight,
                bw_pps,
                pacing_rate: s.pacing_rate,
            }),
        }
    }
    out
}

/// Lengths (us) of the complete phases of `gain` (ProbeBW only): the
/// first phase, cut by `from_us`, and the last, unfinished, are skipped.
fn lengths(ph: &[Phase], gain: u32) -> Vec<u64> {
    ph.windows(2).skip(1).filter(|w| w[0].gain == gain).map(|w| w[0].len_us(&w[1])).collect()
}

/// The complete phases of `gain`.
fn complete(ph: &[Phase], gain: u32) -> Vec<Phase> {
    ph.windows(2).skip(1).filter(|w| w[0].gain == gain).map(|w| w[0]).collect()
}

/// The fake network running `cc` with `params` (name -> value in the C
/// table's unit; the rest at their defaults).
struct Run {
    net: FakeNet,
    _params: Vec<u64>,
}

fn run(cc: &str, params: &[(&str, u64)], queue_rtprop_us: Option<u64>) -> Run {
    run_on(cc, params, RTPROP_US, queue_rtprop_us)
}

fn run_on(cc: &str, params: &[(&str, u64)], rtprop_us: u64, queue_rtprop_us: Option<u64>) -> Run {
    let values = param_values(cc, params);
    let mut net = FakeNet::new(cc, MSS, PKT_TIME_US, rtprop_us);
    // Init read only BBR's Startup gain, which no test changes.
    set_params(&mut net.sk, &values);
    match queue_rtprop_us {
        Some(rtprop) => {
            net.run_until(QUEUE_AT_US);
            assert_eq!(net.sk.cca.trace_mode, PROBE_BW);
            net.rtprop_us = rtprop;
            net.run_until(END_US);
        }
        None => net.run_until(10_800_000),
    }
    Run { net, _params: values }
}

/// Steady state under the queue: from a few rounds after it appeared.
const STEADY_US: u64 = QUEUE_AT_US + 500_000;

#[test]
fn parameter_table_extends_bbr_with_alpha_beta_first_cut() {
    let bbq = lookup("bbq").unwrap();
    let bbr = lookup("bbr").unwrap();
    let p = bbq.params();
    // BBR's rows first, same order and defaults: the indexes are shared.
    assert_eq!(&p[..bbr.params().len()], &bbr.params()[..]);
    let tail: Vec<(&str, u64)> = p[bbr.params().len()..].iter().map(|p| (p.name, p.default)).collect();
    assert_eq!(tail, [("alpha_us", 3000), ("beta_ppm", 10_000), ("first_cut", 0)]);
}

#[test]
fn without_a_persistent_queue_bbq_is_bbr_ack_for_ack() {
    // A lone flow on a 100 ms path: each probe's queue is drained by the
    // 3/4 phase down to BBR's quantisation budget (3 TSO bursts, ~3 ms of
    // data), and the six cruising MinRTTs at 0.99 * bw drain that too, so
    // every round sees the empty queue and the cap never applies:
    // Startup, Drain, ProbeBW and ProbeRTT exactly as BBR.
    let bbq = run_on("bbq", &[], 100_000, None);
    let bbr = run_on("bbr", &[], 100_000, None);
    let key = |s: &Sample| (s.now_us, s.mode, s.pacing_gain, s.cwnd_gain, s.cwnd, s.inflight, s.pacing_rate);
    let first_diff = bbq.net.trace.iter().zip(&bbr.net.trace).find(|(a, b)| key(a) != key(b));
    assert!(first_diff.is_none(), "BBQ left BBR's path: {first_diff:?}");
    assert_eq!(bbq.net.trace.len(), bbr.net.trace.len());
    // ...and that run did probe for a full MinRTT, many times, and went
    // through ProbeRTT.
    let probes = lengths(&phases(&bbq.net.trace, 2_000_000), UP);
    assert!(probes.len() >= 8 && probes.iter().all(|&l| l >= 100_000), "{probes:?}");
    assert!(bbq.net.trace.iter().any(|s| s.mode == 3));
}

#[test]
fn a_lone_short_flow_caps_only_probes_its_own_queue_survived_and_keeps_the_link_full() {
    // On the 20 ms path the lone flow's drain phase stops at BBR's one-BDP
    // target, which includes the quantisation budget (3 TSO bursts,
    // ~2.8 ms of data here); cruising at 0.99 * bw drains only ~1.2 ms of it
    // per cycle. A BBR-length probe therefore leaves a standing queue above
    // 1% of MinRTT for the next cycle, whose probe BBQ caps; the short
    // probe leaves little, the queue empties, and the next probe is BBR's
    // again (a verdict that turns mid-probe ends it at once, in between).
    // The detector follows the flow's own queue, and either way the link
    // stays full: the bw estimate holds the link rate within 3%.
    let bbq = run("bbq", &[], None);
    let probes = lengths(&phases(&bbq.net.trace, 2_000_000), UP);
    let capped = probes.iter().filter(|&&l| l <= 3_300).count();
    let full = probes.iter().filter(|&&l| l >= RTPROP_US).count();
    assert!(capped >= 10 && full >= 10, "{probes:?}");
    assert!(capped + full + 2 >= probes.len(), "{probes:?}");
    let late = bbq.net.trace.iter().filter(|s| s.now_us > 2_000_000 && s.mode == PROBE_BW);
    for s in late {
        let bw = s.bw_bytes_per_sec as f64 / MSS as f64;
        assert!(bw > 0.97 * 10_000.0, "bw {bw} at {} us", s.now_us);
    }
}

#[test]
fn with_a_persistent_queue_the_probe_lasts_alpha() {
    // 20 -> 24 ms: 20% above MinRTT, far above beta = 1%.
    let bbq = run("bbq", &[], Some(24_000));
    let ph = phases(&bbq.net.trace, STEADY_US);
    let probes = lengths(&ph, UP);
    assert!(probes.len() >= 30, "too few probes: {}", probes.len());
    // The phase ends on the first ACK after alpha = 3 ms (one ACK per
    // 100 us here), a sixth of MinRTT...
    for &l in &probes {
        assert!((3_000..=3_300).contains(&l), "probe lasted {l} us: {probes:?}");
    }
    // ...while draining and cruising keep BBR's lengths: 3/4 until inflight
    // is down to one BDP (at most MinRTT), and 1 for six MinRTTs.
    for l in lengths(&ph, DOWN) {
        assert!(l <= RTPROP_US + 2 * PKT_TIME_US + 100, "drain {l} us");
    }
    for l in lengths(&ph, CRUISE) {
        assert!((6 * RTPROP_US..6 * RTPROP_US + 4 * 1000).contains(&l), "cruise {l} us");
    }
    // The cycle is otherwise BBR's: 5/4, 3/4, then cruising.
    for w in ph.windows(2).skip(1).filter(|w| w[0].gain == UP) {
        assert_eq!(w[1].gain, DOWN);
    }

    // BBR under the same queue probes for at least MinRTT, and on until
    // its inflight reaches 5/4 BDP.
    let bbr = run("bbr", &[], Some(24_000));
    let bbr_probes = lengths(&phases(&bbr.net.trace, STEADY_US), UP);
    assert!(!bbr_probes.is_empty());
    for &l in &bbr_probes {
        assert!(l >= RTPROP_US, "BBR probe {l} us");
    }
}

#[test]
fn alpha_and_beta_come_from_the_parameter_table() {
    // alpha = 5 ms: the capped probe lasts 5 ms.
    let five = run("bbq", &[("alpha_us", 5_000)], Some(24_000));
    for l in lengths(&phases(&five.net.trace, STEADY_US), UP) {
        assert!((5_000..=5_300).contains(&l), "probe lasted {l} us with alpha = 5 ms");
    }
    // beta = 25%: an RTT 20% above MinRTT is no persistent queue: BBR.
    let slack = run("bbq", &[("beta_ppm", 250_000)], Some(24_000));
    let probes = lengths(&phases(&slack.net.trace, STEADY_US), UP);
    assert!(!probes.is_empty() && probes.iter().all(|&l| l >= RTPROP_US), "{probes:?}");
    // alpha above MinRTT: rho = MinRTT, and BBR's rule applies unchanged.
    let long = run("bbq", &[("alpha_us", 50_000)], Some(24_000));
    let bbr = run("bbr", &[], Some(24_000));
    let key = |s: &Sample| (s.now_us, s.pacing_gain, s.cwnd, s.inflight);
    assert!(long.net.trace.iter().map(key).eq(bbr.net.trace.iter().map(key)));
}

/// BBR's "one BDP" for the draining phase's exit, packets: bw * MinRTT
/// rounded up, plus the quantisation budget of 3 TSO bursts (~1 ms of
/// data at the pacing rate), rounded up to even.
fn one_bdp_target(p: &Phase) -> u32 {
    let bdp = (p.bw_pps * (RTPROP_US + PKT_TIME_US) as f64 / 1e6).ceil() as u32;
    let tso = ((p.pacing_rate >> 10) as u32 / MSS).clamp(2, 127);
    (bdp + 3 * tso + 1) & !1
}

#[test]
fn first_cut_drains_to_one_bdp_where_bbr_stops_after_min_rtt() {
    // 20 -> 28 ms: a queue of 0.4 MinRTT. BBR's 3/4 phase removes only
    // 0.25 BDP in its MinRTT, so it ends above one BDP; the first cut goes
    // on until inflight is down to it (0.75 * bw * 28 ms < one BDP here).
    let fc = run("bbq", &[("first_cut", 1)], Some(28_000));
    let ph = phases(&fc.net.trace, STEADY_US);
    let drains = complete(&ph, DOWN);
    assert!(drains.len() >= 10, "too few drain phases: {}", drains.len());
    for d in &drains {
        // inflight at the last ACK of the phase; the exit test counts
        // inflight at the next departure time, at most a TSO burst less.
        let target = one_bdp_target(d);
        assert!(d.inflight_end <= target + 8, "drain ended at {} > {target}", d.inflight_end);
        assert!(d.end_us - d.start_us > RTPROP_US, "first cut drained in {} us", d.end_us - d.start_us);
    }
    // No probing cap in the first cut: probes last MinRTT or more.
    assert!(lengths(&ph, UP).iter().all(|&l| l >= RTPROP_US));

    let bbr = run("bbr", &[], Some(28_000));
    let ph = phases(&bbr.net.trace, STEADY_US);
    let above: Vec<(u32, u32)> =
        complete(&ph, DOWN).iter().map(|d| (d.inflight_end, one_bdp_target(d))).collect();
    assert!(!above.is_empty());
    for &(inflight, target) in &above {
        assert!(inflight > target + 8, "BBR drained to {inflight} <= {target}: {above:?}");
    }
}

#[test]
fn first_cut_is_trapped_in_draining_under_a_queue_above_a_third_of_min_rtt() {
    // Paper Sec. V-A: pacing at 3/4, inflight only falls to
    // 0.75 * bw * (MinRTT + queue), above one BDP when queue > MinRTT / 3.
    // 20 -> 40 ms (queue = MinRTT): the first cut stays in 3/4 for seconds
    // while its bw estimate expires downward, round after round (it gets
    // out only once the estimate is so low that the quantisation budget
    // alone covers 0.75 * bw * 40 ms); BBR keeps cycling at the link rate.
    let fc = run("bbq", &[("first_cut", 1)], Some(40_000));
    let trapped: Vec<&Sample> = fc
        .net
        .trace
        .iter()
        .filter(|s| (QUEUE_AT_US + 500_000..QUEUE_AT_US + 3_000_000).contains(&s.now_us))
        .collect();
    assert!(trapped.iter().all(|s| s.pacing_gain == DOWN), "left the drain phase");
    let link_pps = 1e6 / PKT_TIME_US as f64;
    let bw_end = trapped.last().unwrap().bw_bytes_per_sec as f64 / MSS as f64;
    assert!(bw_end < 0.25 * link_pps, "bw estimate {bw_end} pkts/s");

    let bbr = run("bbr", &[], Some(40_000));
    let ph = phases(&bbr.net.trace, QUEUE_AT_US + 1_000_000);
    assert!(lengths(&ph, CRUISE).len() >= 5);
    let bw_end = bbr.net.trace.last().unwrap().bw_bytes_per_sec as f64 / MSS as f64;
    assert!(bw_end > 0.95 * link_pps, "BBR bw estimate {bw_end} pkts/s");
}

#[test]
fn phase_trace_under_a_persistent_queue_matches_the_snapshot() {
    // One line per ProbeBW phase from the queue's appearance: a readable
    // record of the cap taking hold (CCARENA_UPDATE_SNAPSHOTS=1 rewrites).
    let bbq = run("bbq", &[], Some(24_000));
    let mut out = String::from("# start_ms gain len_us inflight_end bw_pkts_per_s\n");
    let ph = phases(&bbq.net.trace, QUEUE_AT_US - 200_000);
    for w in ph.windows(2).take(40) {
        out.push_str(&format!(
            "{:>9.1} {:>4} {:>6} {:>4} {:>6.0}\n",
            w[0].start_us as f64 / 1000.0,
            w[0].gain,
            w[0].len_us(&w[1]),
            w[0].inflight_end,
            w[0].bw_pps
        ));
    }
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/bbq_persistent_queue.txt");
    if std::env::var_os("CCARENA_UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, &out).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("{} missing: run with CCARENA_UPDATE_SNAPSHOTS=1", path.display()));
    assert_eq!(want, out, "BBQ's phase trace changed (CCARENA_UPDATE_SNAPSHOTS=1 to accept)");
}

