//! Loss recovery of BBR and of the derivatives that change BBR's cwnd
//! rule around it (BBR-CWS, DA-BBR), through bbr_core.h's recovery hooks:
//! each derivative sets only the cwnd (on entering Recovery, while
//! conserving, on leaving); the rest is the core's, as Linux's
//! bbr_set_cwnd_to_recover_or_restore(): lost packets come off cwnd, and
//! entering Recovery starts a new packet-timed round at once
//! (`next_rtt_delivered = tp->delivered`), whichever cwnd follows.
//!
//! Each case drives the algorithm on the fake network into ProbeBW, then
//! plays the stack's calls by hand: ssthresh, set_state(Recovery), the
//! ACKs in Recovery, set_state(Open).

mod common;

use cc_native::{CaState, TcpSock};
use common::{param_values, set_params, FakeNet, MSS, PKT_TIME_US, PROBE_BW, RTPROP_US};

/// struct bbr (bbr_core.h): u32 index of rtt_cnt and next_rtt_delivered
/// (after two u64 stamps, the 24-byte bw filter and three u32s).
const RTT_CNT: usize = 13;
const NEXT_RTT_DELIVERED: usize = 14;

/// The u32 at `idx` of struct bbr: in icsk_ca_priv (plain BBR) or in the
/// extension area (BBR_STATE_EXTENDED: BBR-CWS, DA-BBR).
fn bbr_u32(sk: &TcpSock, extended: bool, idx: usize) -> u32 {
    let words: &[u64] = if extended { &sk.cca.state } else { &sk.inet_conn.icsk_ca_priv };
    (words[idx / 2] >> (32 * (idx % 2))) as u32
}

/// BBR-CWS and DA-BBR keep struct bbr in the extension area.
fn extended(cc: &str) -> bool {
    cc != "bbr"
}

/// `cc` on the fake network for 3 s: in ProbeBW with a full pipe.
fn in_probe_bw(cc: &str) -> FakeNet {
    let mut net = FakeNet::new(cc, MSS, PKT_TIME_US, RTPROP_US);
    net.run_until(3_000_000);
    assert_eq!(net.sk.cca.trace_mode, PROBE_BW, "{cc}");
    // The offsets above are struct bbr's: the round count matches the
    // fake network's own count of packet-timed rounds, give or take the
    // few samples BBR finds invalid.
    let rtt_cnt = bbr_u32(&net.sk, extended(cc), RTT_CNT);
    let round = net.trace.last().unwrap().round;
    assert!(rtt_cnt <= round && rtt_cnt + 5 >= round, "{cc}: rtt_cnt {rtt_cnt}, rounds {round}");
    let next = bbr_u32(&net.sk, extended(cc), NEXT_RTT_DELIVERED);
    assert!(next <= net.sk.delivered && next + 1000 > net.sk.delivered, "{cc}: {next}");
    net
}

/// One ACK delivering one packet that left when tp->delivered was
/// `prior_delivered`, with `losses` newly lost.
fn ack(net: &mut FakeNet, prior_delivered: u32, losses: u32) {
    ack_rtt(net, prior_delivered, losses, RTPROP_US + 5_000);
}

/// [`ack`] with an RTT sample of `rtt_us`.
fn ack_rtt(net: &mut FakeNet, prior_delivered: u32, losses: u32, rtt_us: u64) {
    net.sk.packets_out = net.sk.packets_out.saturating_sub(losses);
    net.hand_ack(FakeNet::hand_sample(prior_delivered, losses, rtt_us));
}

/// The stack entering `state`: ssthresh, then set_state before the state.
fn enter(net: &mut FakeNet, state: CaState) {
    net.ops.ssthresh(&mut net.sk);
    enter_state_only(net, state);
}

/// set_state, then the state (ssthresh already called).
fn enter_state_only(net: &mut FakeNet, state: CaState) {
    net.ops.set_state(&mut net.sk, state);
    net.sk.inet_conn.icsk_ca_state = state as u8;
}

/// `cc` in ProbeBW enters Recovery with `inflight` packets in flight once
/// the entering ACK is processed (an ACK of the current round, which
/// cannot end it).
fn entered_with_flight(cc: &str, inflight: u32) -> FakeNet {
    let mut net = in_probe_bw(cc);
    net.sk.packets_out = inflight + 1;
    let next = bbr_u32(&net.sk, extended(cc), NEXT_RTT_DELIVERED);
    enter(&mut net, CaState::Recovery);
    ack(&mut net, next.wrapping_sub(1), 0);
    net
}

/// The stack leaving Recovery with cwnd 60, then one ACK: the cwnd after.
fn cwnd_after_leaving(net: &mut FakeNet) -> u32 {
    net.sk.snd_cwnd = 60;
    net.ops.set_state(&mut net.sk, CaState::Open);
    net.sk.inet_conn.icsk_ca_state = CaState::Open as u8;
    let d = net.sk.delivered;
    ack(net, d, 0);
    net.sk.snd_cwnd
}

/// What the round counter does over Recovery's first ACKs: (round count
/// change, next_rtt_delivered == tp->delivered) after the entering ACK
/// (it acks a packet of the current round, which cannot end it); then the
/// round count change after an ACK of the last packet sent before
/// Recovery, and after one of the first packet sent in it.
fn rounds_on_recovery_entry(cc: &str) -> (u32, bool, u32, u32) {
    let mut net = in_probe_bw(cc);
    let ext = extended(cc);
    let rtt_cnt = |net: &FakeNet| bbr_u32(&net.sk, ext, RTT_CNT);
    let before = rtt_cnt(&net);
    let next = bbr_u32(&net.sk, ext, NEXT_RTT_DELIVERED);
    enter(&mut net, CaState::Recovery);
    ack(&mut net, next.wrapping_sub(1), 3);
    let entry_delivered = net.sk.delivered;
    let restarted = bbr_u32(&net.sk, ext, NEXT_RTT_DELIVERED) == entry_delivered;
    let entry = rtt_cnt(&net) - before;
    let before = rtt_cnt(&net);
    ack(&mut net, entry_delivered - 1, 0); // sent just before Recovery
    let old_packet = rtt_cnt(&net) - before;
    let before = rtt_cnt(&net);
    ack(&mut net, entry_delivered, 0); // sent after Recovery began
    let new_packet = rtt_cnt(&net) - before;
    (entry, restarted, old_packet, new_packet)
}

#[test]
fn entering_recovery_restarts_the_round_as_linux_bbr_does() {
    // Linux: the entering ACK starts a round (next_rtt_delivered =
    // tp->delivered), so the packets sent before Recovery no longer end
    // one; the first packet sent in Recovery does.
    assert_eq!(rounds_on_recovery_entry("bbr"), (0, true, 0, 1));
}

#[test]
fn bbr_cws_and_da_bbr_count_rounds_in_recovery_as_the_core_does() {
    let bbr = rounds_on_recovery_entry("bbr");
    for cc in ["bbr_cws", "da_bbr"] {
        assert_eq!(rounds_on_recovery_entry(cc), bbr, "{cc}");
    }
}

#[test]
fn bbr_cws_cuts_to_a_third_of_the_flight_and_does_not_restore() {
    let inflight = 150;
    let mut net = entered_with_flight("bbr_cws", inflight);
    // The cut to inflight / 3, then what the ACK acked (conservation).
    assert_eq!(net.sk.snd_cwnd, inflight / 3 + 1);
    // While Recovery lasts: + acked per ACK, at most the flight at the cut,
    // and no target (no ProbeBW cap lowers it either). The packets were
    // sent in one round (a round of 1-packet samples per ACK would age the
    // bw estimate out).
    let sent_at = net.sk.delivered;
    for _ in 0..200 {
        net.sk.packets_out += 1; // keep a flight
        ack(&mut net, sent_at, 0);
    }
    assert_eq!(net.sk.snd_cwnd, inflight, "grows to the flight at the cut, no more");
    // Leaving Recovery: no restore of the pre-loss cwnd (BBR's would be
    // ~2 BDP = 400+); then toward the (usf-scaled) target as usual.
    assert_eq!(cwnd_after_leaving(&mut net), 61, "no restore: cwnd + acked");
}

#[test]
fn da_bbr_sets_cwnd_to_the_flight_without_conservation_or_restore() {
    let inflight = 150;
    let mut net = entered_with_flight("da_bbr", inflight);
    // cwnd = in flight, then toward the target at once (+ acked, the pipe
    // being full): no packet conservation round.
    assert_eq!(net.sk.snd_cwnd, inflight + 1);
    let d = net.sk.delivered;
    ack(&mut net, d, 0);
    assert_eq!(net.sk.snd_cwnd, inflight + 2);
    assert_eq!(cwnd_after_leaving(&mut net), 61, "no restore: cwnd + acked");
}

#[test]
fn bbr_conserves_one_round_then_restores() {
    // The core's rule, for comparison: inflight + acked on entry (then
    // max(cwnd, inflight + acked) until the round ends); on leaving, the
    // cwnd saved by ssthresh comes back.
    let saved = in_probe_bw("bbr").sk.snd_cwnd; // the same run: the same cwnd
    let inflight = 150;
    let mut net = entered_with_flight("bbr", inflight);
    assert_eq!(net.sk.snd_cwnd, inflight + 1);
    let cwnd = cwnd_after_leaving(&mut net);
    assert!(cwnd >= saved.min(400), "restored: {cwnd} (saved {saved})");
}

// --- BBR-CWS's usf after a cut: the readings of the paper kept as
// parameters (cc/bbr_cws.c's header) ------------------------------------

/// The fake network's RTprop as BBR measured it: a packet into an empty
/// queue (propagation plus one service time).
const MIN_RTT_US: u64 = RTPROP_US + PKT_TIME_US;
/// srtts of ACKs played after a cut: past the 3-srtt wait (wait_rtts),
/// short of a second one (usf grows by delta every 3 srtt after it).
const WAIT_SRTTS: u64 = 4;

/// usf (ppm, the traced variable) after `WAIT_SRTTS` srtts of ACKs of RTT
/// `rtt_us` (one per 100 us) in the CA state the net is in, keeping a
/// flight.
fn usf_after_wait(net: &mut FakeNet, rtt_us: u64) -> u64 {
    let sent_at = net.sk.delivered;
    let srtt_us = (net.sk.srtt_us >> 3) as u64;
    for _ in 0..WAIT_SRTTS * srtt_us / 100 {
        net.sk.packets_out += 1;
        ack_rtt(net, sent_at, 0, rtt_us);
    }
    net.sk.cca.trace_var_ppm
}

/// BBR-CWS in ProbeBW with `params` enters Recovery (the cut) and sees
/// RTT `rtt_us` for the wait: usf after it, ppm.
fn usf_after_recovery(params: &[(&str, u64)], rtt_us: u64) -> u64 {
    let values = param_values("bbr_cws", params);
    let mut net = entered_with_flight("bbr_cws", 150);
    set_params(&mut net.sk, &values);
    usf_after_wait(&mut net, rtt_us)
}

#[test]
fn bbr_cws_scales_down_when_no_lower_rtprop_follows_a_cut() {
    // The control for the two below: higher samples, either reading.
    for any in [0, 1] {
        assert_eq!(usf_after_recovery(&[("any_rtprop_update", any)], MIN_RTT_US + 5_000), 900_000, "{any}");
    }
}

#[test]
fn bbr_cws_equal_rtprop_samples_cancel_the_decrease_only_as_linux_4_14_counts_them() {
    // Samples equal to min_rtt after the cut: no lower RTprop, so usf *=
    // beta (the paper's "lower RTprop"); Linux 4.14 writes min_rtt on <=,
    // so with any_rtprop_update they count as an update and usf stays 1.
    assert!(in_probe_bw("bbr_cws").trace.iter().all(|s| s.rtt_us >= MIN_RTT_US), "MIN_RTT_US is the min");
    assert_eq!(usf_after_recovery(&[], MIN_RTT_US), 900_000);
    assert_eq!(usf_after_recovery(&[("any_rtprop_update", 1)], MIN_RTT_US), 1_000_000);
}

#[test]
fn bbr_cws_lower_rtprop_after_a_cut_resets_usf_only_with_reset_on_lower_rtprop() {
    // A first cut without a lower RTprop (usf 0.9), then a second one
    // that finds one: the default keeps 0.9 (no decrease, Algorithm 1);
    // reset_on_lower_rtprop sets usf back to 1 (the paper's text).
    let usf = |reset: u64| {
        let values = param_values("bbr_cws", &[("reset_on_lower_rtprop", reset)]);
        let mut net = entered_with_flight("bbr_cws", 150);
        set_params(&mut net.sk, &values);
        assert_eq!(usf_after_wait(&mut net, MIN_RTT_US + 5_000), 900_000);
        net.ops.set_state(&mut net.sk, CaState::Open);
        net.sk.inet_conn.icsk_ca_state = CaState::Open as u8;
        let d = net.sk.delivered;
        ack(&mut net, d, 0);
        enter(&mut net, CaState::Recovery);
        ack(&mut net, d, 0); // the cut; the lower samples come after it
        usf_after_wait(&mut net, MIN_RTT_US - 1_000)
    };
    // 0.9 kept (not 0.81), then one delta (0.01) once the wait is over.
    assert_eq!(usf(0), 910_000);
    assert_eq!(usf(1), 1_000_000);
}

#[test]
fn bbr_cws_rto_starts_a_wait_only_with_cut_on_rto() {
    // An RTO (the stack: ssthresh, cwnd = in flight + 1, Loss) followed by
    // higher samples: without cut_on_rto usf stays 1 (no cut, Recovery
    // only, as the listing); with it the wait runs and usf *= beta.
    let usf = |cut_on_rto: u64| {
        let values = param_values("bbr_cws", &[("cut_on_rto", cut_on_rto)]);
        let mut net = in_probe_bw("bbr_cws");
        set_params(&mut net.sk, &values);
        net.ops.ssthresh(&mut net.sk);
        net.sk.packets_out = 1;
        net.sk.snd_cwnd = 1;
        enter_state_only(&mut net, CaState::Loss);
        let cwnd = net.sk.snd_cwnd;
        (cwnd, usf_after_wait(&mut net, MIN_RTT_US + 5_000))
    };
    assert_eq!(usf(0), (1, 1_000_000));
    assert_eq!(usf(1), (1, 900_000), "the RTO's cwnd is kept, the wait runs");
}
