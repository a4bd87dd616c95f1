// SPDX-License-Identifier: GPL-2.0
/*
 * bbr_big.c - test-only (tests/test_cc_contract.py, crates/cc-native/tests/
 * contract.rs): Linux BBR whose state does not fit the socket's 104-byte
 * private area and which sets every hook of bbr_core.h to a function that
 * does what the default does. So it must behave exactly as cc/bbr.c, ACK
 * for ACK, while proving that
 *  - an extended state (BBR_STATE_EXTENDED: the simulator's extension area,
 *    BPF per-socket storage) is created, used and released, and
 *  - every hook is called where the header says, with the core's value.
 * Not an algorithm: the simulator's registry does not list it.
 */
#define BBR_STATE_EXTENDED
#define BBR_EXT_FIELDS							\
	u64 big_acks;		/* ACKs seen by update_model */		\
	u32 big_state_changes;	/* set_state calls */			\
	u32 big_recoveries;	/* entries into Recovery or Loss */	\
	u32 big_hooks_seen;	/* bitmap of hooks called (BIG_SEEN_*) */ \
	u32 big_pad[19];	/* past icsk_ca_priv's 104 bytes */	\
	u32 big_magic;		/* BIG_MAGIC once init ran */
#include "bbr_core.h"

#define BIG_MAGIC 0xfeedc0de

enum {
	BIG_SEEN_BDP = 1, BIG_SEEN_CAP = 2, BIG_SEEN_PROBE_RTT = 4,
	BIG_SEEN_SSTHRESH = 8, BIG_SEEN_UNDO = 16, BIG_SEEN_TARGET = 32,
	BIG_SEEN_PHASE = 64, BIG_SEEN_GAIN = 128, BIG_SEEN_CONSERVE = 256,
	BIG_SEEN_RECOVERY_CWND = 512, BIG_SEEN_RESTORE = 1024,
};

static inline void big_seen(struct sock *sk, u32 bit)
{
	bbr_ca(sk)->big_hooks_seen |= bit;
}

static inline void big_init(struct sock *sk)
{
	bbr_ca(sk)->big_magic = BIG_MAGIC;
}

static inline void big_update_model(struct sock *sk,
				    const struct rate_sample *rs)
{
	bbr_ca(sk)->big_acks++;
}

static inline u32 big_phase_len_us(struct sock *sk)
{
	big_seen(sk, BIG_SEEN_PHASE);
	return bbr_ca(sk)->min_rtt_us;
}

static inline bool big_probe_until_inflight(struct sock *sk)
{
	return true;
}

static inline bool big_drain_until_bdp(struct sock *sk)
{
	return false;
}

static inline u32 big_cwnd_bdp(struct sock *sk, u32 bw, int gain)
{
	big_seen(sk, BIG_SEEN_BDP);
	return bbr_bdp(sk, bw, gain);
}

static inline u32 big_target_cwnd(struct sock *sk, u32 cwnd)
{
	big_seen(sk, BIG_SEEN_TARGET);
	return cwnd;
}

static inline u32 big_cwnd_cap(struct sock *sk, u32 target_cwnd)
{
	big_seen(sk, BIG_SEEN_CAP);
	return ~0U;
}

static inline u32 big_probe_rtt_cwnd(struct sock *sk)
{
	big_seen(sk, BIG_SEEN_PROBE_RTT);
	return cca_u32_param(sk, BBR_PARAM_CWND_MIN_TARGET,
			     BBR_CWND_MIN_TARGET_DEFAULT);
}

static inline u32 big_recovery_pacing_gain(struct sock *sk, u32 gain)
{
	big_seen(sk, BIG_SEEN_GAIN);
	return gain;
}

static inline void big_set_state(struct sock *sk, u8 old_state, u8 new_state)
{
	struct bbr *bbr = bbr_ca(sk);

	bbr->big_state_changes++;
	if (new_state >= TCP_CA_Recovery && old_state < TCP_CA_Recovery)
		bbr->big_recoveries++;
}

static inline u32 big_ssthresh(struct sock *sk)
{
	big_seen(sk, BIG_SEEN_SSTHRESH);
	return bbr_core_ssthresh(sk);
}

static inline u32 big_undo_cwnd(struct sock *sk)
{
	big_seen(sk, BIG_SEEN_UNDO);
	return bbr_core_undo_cwnd(sk);
}

static inline u32 big_recovery_cwnd(struct sock *sk, u32 cwnd, u32 acked)
{
	big_seen(sk, BIG_SEEN_RECOVERY_CWND);
	return bbr_recovery_cwnd(sk, cwnd, acked);
}

static inline bool big_conserve_cwnd(struct sock *sk, u32 cwnd, u32 acked,
				     u32 *new_cwnd)
{
	big_seen(sk, BIG_SEEN_CONSERVE);
	return bbr_conserve_cwnd(sk, cwnd, acked, new_cwnd);
}

static inline u32 big_restore_cwnd(struct sock *sk, u32 cwnd)
{
	big_seen(sk, BIG_SEEN_RESTORE);
	return bbr_restore_cwnd(sk, cwnd);
}

static const struct bbr_hooks bbr_hooks = {
	.init = big_init,
	.update_model = big_update_model,
	.phase_len_us = big_phase_len_us,
	.probe_until_inflight = big_probe_until_inflight,
	.drain_until_bdp = big_drain_until_bdp,
	.cwnd_bdp = big_cwnd_bdp,
	.target_cwnd = big_target_cwnd,
	.cwnd_cap = big_cwnd_cap,
	.probe_rtt_cwnd = big_probe_rtt_cwnd,
	.recovery_pacing_gain = big_recovery_pacing_gain,
	.set_state = big_set_state,
	.ssthresh = big_ssthresh,
	.undo_cwnd = big_undo_cwnd,
	.recovery_cwnd = big_recovery_cwnd,
	.conserve_cwnd = big_conserve_cwnd,
	.restore_cwnd = big_restore_cwnd,
};

CCA_DESCRIPTION(bbr_big,
	"test-only: Linux BBR with an extended state and every hook set, for the contract tests");
CCA_PARAMS(bbr_big, BBR_CORE_PARAM_DEFS);

BBR_CORE_REGISTER(bbr_big);
