//! BBRv3's undo (cc/include/bbr3_core.h, ssthresh / undo_cwnd): the
//! snapshot an undo restores is taken after the losses that start the
//! recovery were handled, as in Google's v3, where the stack marks packets
//! lost (skb_marked_lost: inflight_hi cut if a probe went too high) before
//! tcp_enter_recovery() asks ssthresh(). So an undo restores the bounds
//! the round-end loss response cut (bw_lo, inflight_lo) and keeps the
//! probe's inflight_hi cut.
//!
//! The stack's calls are played by hand on a bbr3 flow that the fake
//! network has brought into a bandwidth probe (PROBE_BW UP).

mod common;

use cc_native::{CaState, RateSample, TcpSock};
use common::{FakeNet, MSS, PKT_TIME_US, PROBE_BW, RTPROP_US};

const UP: u32 = 320; // pacing gain 1.25 << 8

/// struct bbr3 (bbr3_core.h), u32 indexes: after two u64 stamps,
/// min_rtt_us .. loss_round_delivered, then the undo snapshot, bw_latest,
/// bw_lo, bw_hi[2], inflight_latest, inflight_lo, inflight_hi.
const PRIOR_CWND: usize = 10;
const UNDO_INFLIGHT_HI: usize = 15;
const BW_LO: usize = 17;
const INFLIGHT_LO: usize = 21;
const INFLIGHT_HI: usize = 22;

fn field(sk: &TcpSock, idx: usize) -> u32 {
    (sk.cca.state[idx / 2] >> (32 * (idx % 2))) as u32
}

/// bbr3 on the fake network until its first probe (UP) is under way.
fn in_a_probe() -> FakeNet {
    let mut net = FakeNet::new("bbr3", MSS, PKT_TIME_US, RTPROP_US);
    let mut t = 1_000_000;
    while !(net.sk.cca.trace_mode == PROBE_BW && net.sk.cca.trace_pacing_gain == UP) {
        t += 1_000;
        assert!(t < 10_000_000, "no probe");
        net.run_until(t);
    }
    net.run_until(t + 10_000); // well into UP: its samples reflect the probe
    assert_eq!(net.sk.cca.trace_pacing_gain, UP);
    // The offsets above are struct bbr3's: a clean pipe has set no bound.
    for idx in [BW_LO, INFLIGHT_LO, INFLIGHT_HI] {
        assert_eq!(field(&net.sk, idx), u32::MAX, "field {idx}");
    }
    net
}

/// The ACK that makes the stack enter Recovery: `lost` packets marked
/// lost (tp->lost), then ssthresh, set_state(Recovery) and cong_control
/// with a sample sent at `tx_in_flight` that saw those losses.
fn enter_recovery(net: &mut FakeNet, tx_in_flight: u32, lost: u32) {
    let cwnd = net.sk.snd_cwnd;
    net.sk.lost += lost;
    net.sk.packets_out -= lost;
    net.ops.ssthresh(&mut net.sk);
    assert_eq!(field(&net.sk, PRIOR_CWND), cwnd, "ssthresh saved cwnd (offset check)");
    net.ops.set_state(&mut net.sk, CaState::Recovery);
    net.sk.inet_conn.icsk_ca_state = CaState::Recovery as u8;
    let rs = FakeNet::hand_sample(net.sk.delivered, lost, RTPROP_US + 2_000);
    net.hand_ack(RateSample { tx_in_flight, lost: lost as _, ..rs });
}

#[test]
fn an_undo_keeps_the_inflight_hi_cut_by_the_losses_that_started_recovery() {
    let mut net = in_a_probe();
    // 10% of a 250-packet flight lost, far above v3's 2%: the probe went
    // too high and inflight_hi is cut to where loss crossed 2%.
    enter_recovery(&mut net, 250, 25);
    let cut = field(&net.sk, INFLIGHT_HI);
    assert!(cut < u32::MAX && cut <= 250, "inflight_hi {cut}");
    // v3's snapshot is the cut value ...
    assert_eq!(field(&net.sk, UNDO_INFLIGHT_HI), cut);
    // ... so the undo (the loss was spurious) keeps it.
    net.ops.set_state(&mut net.sk, CaState::Open);
    net.sk.inet_conn.icsk_ca_state = CaState::Open as u8;
    net.ops.undo_cwnd(&mut net.sk);
    assert_eq!(field(&net.sk, INFLIGHT_HI), cut, "undo restored the pre-cut inflight_hi");
}

#[test]
fn an_undo_right_after_ssthresh_restores_the_bounds_as_they_are() {
    // No ACK between ssthresh and the undo: the snapshot is the current
    // bounds, so the undo changes none.
    let mut net = in_a_probe();
    enter_recovery(&mut net, 250, 25);
    let cut = field(&net.sk, INFLIGHT_HI);
    net.ops.set_state(&mut net.sk, CaState::Open);
    net.sk.inet_conn.icsk_ca_state = CaState::Open as u8;
    net.ops.ssthresh(&mut net.sk);
    net.ops.undo_cwnd(&mut net.sk);
    assert_eq!(field(&net.sk, INFLIGHT_HI), cut);
}
