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
use common::FakeNet;

const MSS: u32 = 1000;
/// 10 000 packets/s (80 Mbit/s) and 20 ms propagation: BDP = 201 packets.
const PKT_TIME_US: u64 = 100;
const RTPROP_US: u64 = 20_000;
const PROBE_BW: u32 = 2;

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
    net.sk.packets_out = net.sk.packets_out.saturating_sub(losses);
    net.hand_ack(FakeNet::hand_sample(prior_delivered, losses, RTPROP_US + 5_000));
}

/// The stack entering `state`: ssthresh, then set_state before the state.
fn enter(net: &mut FakeNet, state: CaState) {
    net.ops.ssthresh(&mut net.sk);
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
