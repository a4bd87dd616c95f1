//! Modest BBR's window search (cc/modest_bbr.c): after a loss round the
//! binary search settles below the lossy window, then the additive
//! increase climbs back to it, s_min per round trip by default (the
//! paper's "linear phase"), or s_min per ACK with `s_min_per_ack` (its
//! Algorithm 2 as printed).
//!
//! Each case drives Modest BBR on the fake network into ProbeBW, then
//! plays ACKs by hand: one round with a loss, lossless rounds until the
//! search is over, then ACKs within one round. The window is the traced
//! variable (packets while it caps cwnd, 0 once the cap is lifted).

mod common;

use common::{param_values, set_params, FakeNet, MSS, PKT_TIME_US, PROBE_BW, RTPROP_US};

/// Lossless rounds after the loss: the search halves hi - lo (10% of a
/// ~400-packet cwnd) each round, so it is over well before this.
const SEARCH_ROUNDS: usize = 12;
/// ACKs of one round after the search: more than the ~10% of cwnd the
/// window is below the lossy one, far fewer than a round's worth.
const ADD_ACKS: usize = 100;

/// One hand-played ACK of one packet; a round ends with it when the
/// packet left at or after the round began (`prior_delivered`).
fn ack(net: &mut FakeNet, prior_delivered: u32, losses: u32) {
    net.sk.packets_out += 1 + losses; // keep a flight
    net.hand_ack(FakeNet::hand_sample(prior_delivered, losses, RTPROP_US + 5_000));
}

/// The window (the traced variable) after a loss round, the search and
/// `ADD_ACKS` ACKs of one round, with `s_min_per_ack`; and the cwnd at the
/// loss.
fn window_after_regrowth(s_min_per_ack: u64) -> (u64, u64, u32) {
    let values = param_values("modest_bbr", &[("s_min_per_ack", s_min_per_ack)]);
    let mut net = FakeNet::new("modest_bbr", MSS, PKT_TIME_US, RTPROP_US);
    set_params(&mut net.sk, &values);
    net.run_until(3_000_000);
    assert_eq!(net.sk.cca.trace_mode, PROBE_BW);
    assert_eq!(net.sk.cca.trace_var_ppm, 0, "no cap before a loss");
    let lossy_cwnd = net.sk.snd_cwnd;
    // A round with a loss (each of these ACKs ends a round: its packet
    // left after the previous round began).
    let d = net.sk.delivered;
    ack(&mut net, d, 1);
    assert!(net.sk.cca.trace_var_ppm > 0, "the search caps cwnd");
    for _ in 0..SEARCH_ROUNDS {
        let d = net.sk.delivered;
        ack(&mut net, d, 0);
    }
    let searched = net.sk.cca.trace_var_ppm;
    // ACKs of packets sent before the last round began: no round ends.
    let round_began = net.sk.delivered;
    for _ in 0..ADD_ACKS {
        ack(&mut net, round_began - 1, 0);
    }
    (searched, net.sk.cca.trace_var_ppm, lossy_cwnd)
}

#[test]
fn additive_increase_is_s_min_per_round_trip_by_default() {
    let (searched, after, lossy) = window_after_regrowth(0);
    // The search settled between W_max (80%) and 90% of the lossy cwnd.
    assert!(searched * 10 >= lossy as u64 * 8 && searched * 10 <= lossy as u64 * 9,
            "searched {searched}, lossy {lossy}");
    // Within one round the window grows by at most one s_min (one packet):
    // still below the lossy cwnd, still capping.
    assert!(after >= searched && after <= searched + 1, "{searched} -> {after}");
}

#[test]
fn additive_increase_per_ack_regains_the_lossy_window_within_a_round() {
    let (searched, after, lossy) = window_after_regrowth(1);
    assert!(searched > 0 && searched < lossy as u64, "searched {searched}, lossy {lossy}");
    // One packet per ACK: past last_cwnd within ADD_ACKS ACKs of one
    // round, so the cap is lifted (BBR's cwnd again).
    assert_eq!(after, 0, "the cap is lifted");
}
