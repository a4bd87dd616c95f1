//! bbr_core.h's extension contract, natively: tests/cc/bbr_big.c is Linux
//! BBR with a state too large for icsk_ca_priv (BBR_STATE_EXTENDED) and
//! every hook set to a function that returns what the default would. It
//! must run ACK for ACK as cc/bbr.c does, keep its state in the simulator's
//! extension area (tp->cca.state) and leave the private area untouched, and
//! each hook must be called where the header says.

mod common;

use cc_native::{lookup, lookup_test_only, CaState, CCA_STATE_WORDS, ICSK_CA_PRIV_WORDS};
use common::{FakeNet, MSS, PKT_TIME_US, RTPROP_US};

/// Past one ProbeRTT (10 s filter), so the ProbeRTT hooks run too.
const END_US: u64 = 12_000_000;

/// Words of struct bbr (bbr_core.h) before BBR_EXT_FIELDS: 100 bytes of
/// BBR's own fields, padded to 104 for the u64 that bbr_big adds first.
const EXT_WORD: usize = 13;

fn big() -> cc_native::CongestionOps {
    lookup_test_only("bbr_big").expect("tests/cc/bbr_big.c is compiled by build.rs")
}

#[test]
fn test_only_derivatives_are_not_algorithms() {
    assert!(lookup("bbr_big").is_none());
    assert!(!cc_native::names().contains(&"bbr_big"));
}

#[test]
fn extended_state_with_default_hooks_is_plain_bbr_ack_for_ack() {
    let mut bbr = FakeNet::new("bbr", MSS, PKT_TIME_US, RTPROP_US);
    let mut big = FakeNet::with_ops(big(), MSS, PKT_TIME_US, RTPROP_US);
    bbr.run_until(END_US);
    big.run_until(END_US);
    assert!(bbr.trace.len() > 100_000, "a long run: {} ACKs", bbr.trace.len());
    assert_eq!(bbr.trace.len(), big.trace.len());
    for (i, (a, b)) in bbr.trace.iter().zip(&big.trace).enumerate() {
        assert_eq!(format!("{a:?}"), format!("{b:?}"), "ACK {i} differs");
    }
    // ProbeRTT happened (mode 3), so its cwnd hook was exercised.
    assert!(big.trace.iter().any(|s| s.mode == 3));

    // The state is in the extension area; icsk_ca_priv was never written.
    assert_eq!(big.sk.inet_conn.icsk_ca_priv, [0u64; ICSK_CA_PRIV_WORDS]);
    let st = &big.sk.cca.state;
    let acks = st[EXT_WORD];
    assert_eq!(acks, big.trace.len() as u64, "update_model runs once per ACK");
    let word = |w: usize, hi: bool| (st[w] >> if hi { 32 } else { 0 }) as u32;
    let seen = word(EXT_WORD + 2, false);
    // BDP, cap, ProbeRTT cwnd, target, phase length, conserve (not:
    // ssthresh, undo, recovery gain, recovery and restore cwnd, which
    // need a loss).
    assert_eq!(seen, 1 | 2 | 4 | 32 | 64 | 256, "hooks seen {seen:#x}");
    // big_magic, the last u32 of the state, set by the init hook.
    let magic_pos = (8 + 4 + 4 + 4 + 19 * 4) / 4; // u32s after the core's 104 bytes
    let magic = word(EXT_WORD + magic_pos / 2, magic_pos % 2 == 1);
    assert_eq!(magic, 0xfeed_c0de);
    assert!(EXT_WORD + magic_pos / 2 < CCA_STATE_WORDS);
}

#[test]
fn set_state_ssthresh_and_undo_hooks_see_recovery() {
    let mut big = FakeNet::with_ops(big(), MSS, PKT_TIME_US, RTPROP_US);
    big.run_until(2_000_000);
    let ops = big.ops;
    // As Linux: ssthresh, then set_state(Recovery) before icsk_ca_state.
    let ss = ops.ssthresh(&mut big.sk);
    assert_eq!(ss, big.sk.snd_ssthresh, "BBR's ssthresh leaves it as is");
    ops.set_state(&mut big.sk, CaState::Recovery);
    big.sk.inet_conn.icsk_ca_state = CaState::Recovery as u8;
    big.run_until(2_100_000); // ACKs in Recovery: the recovery pacing gain
    ops.set_state(&mut big.sk, CaState::Open);
    big.sk.inet_conn.icsk_ca_state = CaState::Open as u8;
    big.run_until(2_150_000); // the first ACK in Open restores cwnd
    let cwnd = big.sk.snd_cwnd;
    assert_eq!(ops.undo_cwnd(&mut big.sk), cwnd, "BBR's undo keeps cwnd");
    let st = &big.sk.cca.state;
    assert_eq!(st[EXT_WORD + 1] as u32, 2, "two set_state calls");
    assert_eq!((st[EXT_WORD + 1] >> 32) as u32, 1, "one entry into Recovery");
    let want = 8 | 16 | 128 | 512 | 1024;
    assert_eq!(st[EXT_WORD + 2] as u32 & want, want, "ssthresh, undo, recovery gain, recovery and restore cwnd");
}
