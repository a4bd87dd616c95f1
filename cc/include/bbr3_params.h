/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bbr3_params.h - BBRv3's parameter table (CCA_PARAMS rows, defaults and
 * the reason for each) and the conversions to the fixed point the code
 * runs on. Included by bbr3_core.h, whose header comment is the design
 * document; a variant of bbr3 (a tuned one) starts its table with
 * BBR3_CORE_PARAM_DEFS and continues from BBR3_PARAM_COUNT. BBRv2
 * (cc/bbr2.c) has the same table with v2's defaults where v2's constants
 * differ: the STARTUP gains, DOWN's gain, UP's extra cwnd gain (none) and
 * full_loss_cnt.
 */
#ifndef CCARENA_BBR3_PARAMS_H
#define CCARENA_BBR3_PARAMS_H

#include "ccarena_compat.h"
#include "send_quantum.h"

#ifndef BBR_SCALE
#define BBR_SCALE 8	/* scaling factor for fractions (e.g. gains) */
#define BBR_UNIT (1 << BBR_SCALE)
#endif

#define BBR3_PPM CCA_PPM	/* 1.0 in a _ppm parameter */

/*
 * The table's units (every cc/ table's convention, docs/algorithms.md): a
 * name ending in _us is a time in us, _ppm a ratio in millionths (gains
 * included: 2.0 is 2000000), anything else a count. Each default is v3's
 * constant; gains and fractions are used in 1/256, rounded to nearest.
 */
enum bbr3_param {
	/* 4 ln 2 = 2.77: the smallest gain whose rate doubles each round
	 * while sending as many packets as Reno's slow start (v3: 710/256). */
	BBR3_PARAM_STARTUP_PACING_GAIN_PPM,
	/* STARTUP cwnd gain 2: enough for the doubling, less queue than
	 * v1's 2.89. */
	BBR3_PARAM_STARTUP_CWND_GAIN_PPM,
	/* DRAIN pacing gain 1/2.885 (v3 keeps v1's 88/256): drains STARTUP's
	 * queue in about a round. */
	BBR3_PARAM_DRAIN_GAIN_PPM,
	/* PROBE_BW cwnd gain 2: tolerates delayed and stretched ACKs. */
	BBR3_PARAM_CWND_GAIN_PPM,
	/* UP pacing gain 5/4: probe for more bw gently. */
	BBR3_PARAM_PROBE_UP_GAIN_PPM,
	/* DOWN pacing gain 91/100 (232/256): drain the probe's queue, and
	 * yield bw to other flows. */
	BBR3_PARAM_PROBE_DOWN_GAIN_PPM,
	/* Extra cwnd gain in UP, 1/4 (cwnd gain 2.25): room for the probe's
	 * higher flight (v3: bw_probe_cwnd_gain = 1 quarter). */
	BBR3_PARAM_PROBE_UP_CWND_GAIN_PPM,
	/* Loss above this fraction of the flight means the probe went too
	 * high: 2% (5/256 = 1.95%), tolerating a random loss rate below it. */
	BBR3_PARAM_LOSS_THRESH_PPM,
	/* Multiplicative cut of bw_lo/inflight_lo per lossy round, and floor
	 * of inflight_hi's cut: 30% (76/256), i.e. keep 0.7. */
	BBR3_PARAM_BETA_PPM,
	/* CE fraction above which a probe went too high: 50%. */
	BBR3_PARAM_ECN_THRESH_PPM,
	/* inflight_lo *= 1 - ecn_factor * ecn_alpha per CE round: 1/3. */
	BBR3_PARAM_ECN_FACTOR_PPM,
	/* EWMA gain of ecn_alpha: 1/16 per round. */
	BBR3_PARAM_ECN_ALPHA_GAIN_PPM,
	/* Use ECN only on paths with min_rtt below this, us: 5 ms, where CE
	 * is a datacenter's shallow threshold (0: any RTT). */
	BBR3_PARAM_ECN_MAX_RTT_US,
	/* Headroom left below inflight_hi when cruising: 15% (38/256), so
	 * that other flows can grow and the queue stays low. */
	BBR3_PARAM_INFLIGHT_HEADROOM_PPM,
	/* STARTUP exit on loss: this many ACKs with losses in a Recovery
	 * round (and loss > loss_thresh): 6 (at most 15, the counter's). */
	BBR3_PARAM_FULL_LOSS_CNT,
	/* STARTUP exit on ECN: this many rounds with CE >= ecn_thresh: 2
	 * (at most 3, the counter's). */
	BBR3_PARAM_FULL_ECN_CNT,
	/* Reno coexistence: probe after at most this many rounds, 63 (a
	 * Reno flow's loss epoch at 25 Mbit/s, 30 ms: BDP 62 packets). */
	BBR3_PARAM_BW_PROBE_MAX_ROUNDS,
	/* Wall-clock wait between probes, base, us: 2 s, so that a Reno flow
	 * at 30 ms can reach 4K video rates between BBR's losses... */
	BBR3_PARAM_BW_PROBE_BASE_US,
	/* ...plus uniform(0, this), us: 1 s (probes spread for mixing; at
	 * most 3 s to find freed bw on human time scales). */
	BBR3_PARAM_BW_PROBE_RAND_US,
	/* PROBE_RTT when no lower RTT was seen for this long, us: 5 s
	 * (v1: 10 s), used in ms, rounded up. */
	BBR3_PARAM_PROBE_RTT_WIN_US,
	/* Time in PROBE_RTT at its low cwnd, us: 200 ms (with the 5 s window
	 * the cost is 0.5 * 0.2 / 5 = 2% of throughput); 0 disables it. */
	BBR3_PARAM_PROBE_RTT_MODE_US,
	/* PROBE_RTT's cwnd, fraction of the BDP: 1/2 (v1: 4 packets). */
	BBR3_PARAM_PROBE_RTT_CWND_GAIN_PPM,
	/* min_rtt filter window, us: 10 s (ms, rounded up). */
	BBR3_PARAM_MIN_RTT_WIN_US,
	/* Least cwnd, packets: 4 keeps ACK clocking with delayed ACKs. */
	BBR3_PARAM_CWND_MIN_TARGET,
	/* Gain of the ACK-aggregation allowance: 1 (0 disables it). */
	BBR3_PARAM_EXTRA_ACKED_GAIN_PPM,
	/* Pace this far below bw: 1% drains queues from overestimates. */
	BBR3_PARAM_PACING_MARGIN_PPM,
	/* TSO burst allowance halves every 2^this us of min_rtt: 9 (512 us;
	 * below 1500 bytes after ~3 ms); 0 disables the allowance. */
	BBR3_PARAM_TSO_RTT_SHIFT,
	/* 1: use the BPF build's per-round estimates of rs->tx_in_flight and
	 * rs->lost in the simulator too (deviation 2), to measure what they
	 * change; 0: the stack's exact values. BPF always estimates. */
	BBR3_PARAM_ESTIMATE_TX_SIGNALS,
	/* The send quantum's rule (include/send_quantum.h): 1 v3's halving
	 * (with tso_rtt_shift), 2 the RTT-tuning blog's linear, 0 Linux v1's
	 * rate-only. */
	BBR3_PARAM_SEND_QUANTUM,
	/* The linear rule's end points (send_quantum.h). */
	BBR3_PARAM_QUANTUM_RTT_LO_US,
	BBR3_PARAM_QUANTUM_RTT_HI_US,
	BBR3_PARAM_QUANTUM_MAX_BYTES,
	BBR3_PARAM_QUANTUM_MIN_SEGS,
	BBR3_PARAM_COUNT
};
_Static_assert(BBR3_PARAM_QUANTUM_MIN_SEGS == BBR3_PARAM_SEND_QUANTUM + 4,
	       "cca_send_quantum_bytes() reads the five quantum rows in order");

/* v2 (cc/bbr2.c) defines its own values of these five before the
 * #include; the reasons for v2's are in bbr2.c. */
#ifndef BBR3_STARTUP_PACING_GAIN_PPM_DEFAULT
#define BBR3_STARTUP_PACING_GAIN_PPM_DEFAULT 2773438	/* 710/256 */
#endif
#ifndef BBR3_STARTUP_CWND_GAIN_PPM_DEFAULT
#define BBR3_STARTUP_CWND_GAIN_PPM_DEFAULT 2000000	/* 512/256 */
#endif
#define BBR3_DRAIN_GAIN_PPM_DEFAULT 343750		/* 88/256 */
#define BBR3_CWND_GAIN_PPM_DEFAULT 2000000		/* 512/256 */
#define BBR3_PROBE_UP_GAIN_PPM_DEFAULT 1250000		/* 320/256 */
#ifndef BBR3_PROBE_DOWN_GAIN_PPM_DEFAULT
#define BBR3_PROBE_DOWN_GAIN_PPM_DEFAULT 906250		/* 232/256 */
#endif
#ifndef BBR3_PROBE_UP_CWND_GAIN_PPM_DEFAULT
#define BBR3_PROBE_UP_CWND_GAIN_PPM_DEFAULT 250000	/* 64/256 */
#endif
#define BBR3_LOSS_THRESH_PPM_DEFAULT 19531		/* 5/256 */
#define BBR3_BETA_PPM_DEFAULT 296875			/* 76/256 */
#define BBR3_ECN_THRESH_PPM_DEFAULT 500000		/* 128/256 */
#define BBR3_ECN_FACTOR_PPM_DEFAULT 332031		/* 85/256 */
#define BBR3_ECN_ALPHA_GAIN_PPM_DEFAULT 62500		/* 16/256 */
#define BBR3_ECN_MAX_RTT_US_DEFAULT 5000
#define BBR3_INFLIGHT_HEADROOM_PPM_DEFAULT 148438	/* 38/256 */
#ifndef BBR3_FULL_LOSS_CNT_DEFAULT
#define BBR3_FULL_LOSS_CNT_DEFAULT 6
#endif
#define BBR3_FULL_ECN_CNT_DEFAULT 2
#define BBR3_BW_PROBE_MAX_ROUNDS_DEFAULT 63
#define BBR3_BW_PROBE_BASE_US_DEFAULT (2 * USEC_PER_SEC)
#define BBR3_BW_PROBE_RAND_US_DEFAULT (1 * USEC_PER_SEC)
#define BBR3_PROBE_RTT_WIN_US_DEFAULT (5 * USEC_PER_SEC)
#define BBR3_PROBE_RTT_MODE_US_DEFAULT (200 * USEC_PER_MSEC)
#define BBR3_PROBE_RTT_CWND_GAIN_PPM_DEFAULT 500000	/* 128/256 */
#define BBR3_MIN_RTT_WIN_US_DEFAULT (10 * USEC_PER_SEC)
#define BBR3_CWND_MIN_TARGET_DEFAULT 4
#define BBR3_EXTRA_ACKED_GAIN_PPM_DEFAULT 1000000	/* 256/256 */
/* A variant (cc/bbr3_tuned.c) may define these two before the #include. */
#ifndef BBR3_PACING_MARGIN_PPM_DEFAULT
#define BBR3_PACING_MARGIN_PPM_DEFAULT 10000		/* 1% */
#endif
#ifndef BBR3_SEND_QUANTUM_DEFAULT
#define BBR3_SEND_QUANTUM_DEFAULT CCA_QUANTUM_HALVING
#endif
#define BBR3_TSO_RTT_SHIFT_DEFAULT 9
#define BBR3_ESTIMATE_TX_SIGNALS_DEFAULT 0

/* The rows of a bbr3 variant's CCA_PARAMS table. */
#define BBR3_CORE_PARAM_DEFS						\
	CCA_PARAM_DEF(BBR3_PARAM_STARTUP_PACING_GAIN_PPM,		\
		      "startup_pacing_gain_ppm",			\
		      BBR3_STARTUP_PACING_GAIN_PPM_DEFAULT)		\
	CCA_PARAM_DEF(BBR3_PARAM_STARTUP_CWND_GAIN_PPM,			\
		      "startup_cwnd_gain_ppm",				\
		      BBR3_STARTUP_CWND_GAIN_PPM_DEFAULT)		\
	CCA_PARAM_DEF(BBR3_PARAM_DRAIN_GAIN_PPM, "drain_gain_ppm",	\
		      BBR3_DRAIN_GAIN_PPM_DEFAULT)			\
	CCA_PARAM_DEF(BBR3_PARAM_CWND_GAIN_PPM, "cwnd_gain_ppm",	\
		      BBR3_CWND_GAIN_PPM_DEFAULT)			\
	CCA_PARAM_DEF(BBR3_PARAM_PROBE_UP_GAIN_PPM, "probe_up_gain_ppm", \
		      BBR3_PROBE_UP_GAIN_PPM_DEFAULT)			\
	CCA_PARAM_DEF(BBR3_PARAM_PROBE_DOWN_GAIN_PPM,			\
		      "probe_down_gain_ppm",				\
		      BBR3_PROBE_DOWN_GAIN_PPM_DEFAULT)			\
	CCA_PARAM_DEF(BBR3_PARAM_PROBE_UP_CWND_GAIN_PPM,		\
		      "probe_up_cwnd_gain_ppm",				\
		      BBR3_PROBE_UP_CWND_GAIN_PPM_DEFAULT)		\
	CCA_PARAM_DEF(BBR3_PARAM_LOSS_THRESH_PPM, "loss_thresh_ppm",	\
		      BBR3_LOSS_THRESH_PPM_DEFAULT)			\
	CCA_PARAM_DEF(BBR3_PARAM_BETA_PPM, "beta_ppm",			\
		      BBR3_BETA_PPM_DEFAULT)				\
	CCA_PARAM_DEF(BBR3_PARAM_ECN_THRESH_PPM, "ecn_thresh_ppm",	\
		      BBR3_ECN_THRESH_PPM_DEFAULT)			\
	CCA_PARAM_DEF(BBR3_PARAM_ECN_FACTOR_PPM, "ecn_factor_ppm",	\
		      BBR3_ECN_FACTOR_PPM_DEFAULT)			\
	CCA_PARAM_DEF(BBR3_PARAM_ECN_ALPHA_GAIN_PPM,			\
		      "ecn_alpha_gain_ppm",				\
		      BBR3_ECN_ALPHA_GAIN_PPM_DEFAULT)			\
	CCA_PARAM_DEF(BBR3_PARAM_ECN_MAX_RTT_US, "ecn_max_rtt_us",	\
		      BBR3_ECN_MAX_RTT_US_DEFAULT)			\
	CCA_PARAM_DEF(BBR3_PARAM_INFLIGHT_HEADROOM_PPM,			\
		      "inflight_headroom_ppm",				\
		      BBR3_INFLIGHT_HEADROOM_PPM_DEFAULT)		\
	CCA_PARAM_DEF(BBR3_PARAM_FULL_LOSS_CNT, "full_loss_cnt",	\
		      BBR3_FULL_LOSS_CNT_DEFAULT)			\
	CCA_PARAM_DEF(BBR3_PARAM_FULL_ECN_CNT, "full_ecn_cnt",		\
		      BBR3_FULL_ECN_CNT_DEFAULT)			\
	CCA_PARAM_DEF(BBR3_PARAM_BW_PROBE_MAX_ROUNDS,			\
		      "bw_probe_max_rounds",				\
		      BBR3_BW_PROBE_MAX_ROUNDS_DEFAULT)			\
	CCA_PARAM_DEF(BBR3_PARAM_BW_PROBE_BASE_US, "bw_probe_base_us",	\
		      BBR3_BW_PROBE_BASE_US_DEFAULT)			\
	CCA_PARAM_DEF(BBR3_PARAM_BW_PROBE_RAND_US, "bw_probe_rand_us",	\
		      BBR3_BW_PROBE_RAND_US_DEFAULT)			\
	CCA_PARAM_DEF(BBR3_PARAM_PROBE_RTT_WIN_US, "probe_rtt_win_us",	\
		      BBR3_PROBE_RTT_WIN_US_DEFAULT)			\
	CCA_PARAM_DEF(BBR3_PARAM_PROBE_RTT_MODE_US, "probe_rtt_mode_us", \
		      BBR3_PROBE_RTT_MODE_US_DEFAULT)			\
	CCA_PARAM_DEF(BBR3_PARAM_PROBE_RTT_CWND_GAIN_PPM,		\
		      "probe_rtt_cwnd_gain_ppm",			\
		      BBR3_PROBE_RTT_CWND_GAIN_PPM_DEFAULT)		\
	CCA_PARAM_DEF(BBR3_PARAM_MIN_RTT_WIN_US, "min_rtt_win_us",	\
		      BBR3_MIN_RTT_WIN_US_DEFAULT)			\
	CCA_PARAM_DEF(BBR3_PARAM_CWND_MIN_TARGET, "cwnd_min_target",	\
		      BBR3_CWND_MIN_TARGET_DEFAULT)			\
	CCA_PARAM_DEF(BBR3_PARAM_EXTRA_ACKED_GAIN_PPM,			\
		      "extra_acked_gain_ppm",				\
		      BBR3_EXTRA_ACKED_GAIN_PPM_DEFAULT)		\
	CCA_PARAM_DEF(BBR3_PARAM_PACING_MARGIN_PPM, "pacing_margin_ppm", \
		      BBR3_PACING_MARGIN_PPM_DEFAULT)			\
	CCA_PARAM_DEF(BBR3_PARAM_TSO_RTT_SHIFT, "tso_rtt_shift",	\
		      BBR3_TSO_RTT_SHIFT_DEFAULT)			\
	CCA_PARAM_DEF(BBR3_PARAM_ESTIMATE_TX_SIGNALS,			\
		      "estimate_tx_signals",				\
		      BBR3_ESTIMATE_TX_SIGNALS_DEFAULT)			\
	CCA_PARAM_DEF(BBR3_PARAM_SEND_QUANTUM, "send_quantum",		\
		      BBR3_SEND_QUANTUM_DEFAULT)				\
	CCA_PARAM_DEF(BBR3_PARAM_QUANTUM_RTT_LO_US, "quantum_rtt_lo_us",	\
		      CCA_QUANTUM_RTT_LO_US_DEFAULT)			\
	CCA_PARAM_DEF(BBR3_PARAM_QUANTUM_RTT_HI_US, "quantum_rtt_hi_us",	\
		      CCA_QUANTUM_RTT_HI_US_DEFAULT)			\
	CCA_PARAM_DEF(BBR3_PARAM_QUANTUM_MAX_BYTES, "quantum_max_bytes",	\
		      CCA_QUANTUM_MAX_BYTES_DEFAULT)			\
	CCA_PARAM_DEF(BBR3_PARAM_QUANTUM_MIN_SEGS, "quantum_min_segs",	\
		      CCA_QUANTUM_MIN_SEGS_DEFAULT)

/* A _ppm parameter in 1/256 (BBR_SCALE), rounded to nearest, at most max. */
static inline u32 bbr3_ratio_param(struct sock *sk, u32 index, u64 dflt_ppm,
				   u32 max)
{
	return cca_ratio_param(sk, index, dflt_ppm, BBR_UNIT, max);
}

/* A gain, at most what the 10-bit gain fields hold (1023/256). */
static inline u32 bbr3_gain_param(struct sock *sk, u32 index, u64 dflt_ppm)
{
	return bbr3_ratio_param(sk, index, dflt_ppm, 1023);
}

/* A fraction of 1, at most 1 (256/256). */
static inline u32 bbr3_fraction_param(struct sock *sk, u32 index,
				      u64 dflt_ppm)
{
	return bbr3_ratio_param(sk, index, dflt_ppm, BBR_UNIT);
}

static inline u32 bbr3_cwnd_min_target(struct sock *sk)
{
	return cca_u32_param(sk, BBR3_PARAM_CWND_MIN_TARGET,
			     BBR3_CWND_MIN_TARGET_DEFAULT);
}

/* The loss threshold, < 1: the lost-prefix rule divides by 1 - it. */
static inline u32 bbr3_loss_thresh(struct sock *sk)
{
	return bbr3_ratio_param(sk, BBR3_PARAM_LOSS_THRESH_PPM,
				BBR3_LOSS_THRESH_PPM_DEFAULT, BBR_UNIT - 1);
}

static inline u32 bbr3_beta(struct sock *sk)
{
	return bbr3_fraction_param(sk, BBR3_PARAM_BETA_PPM,
				   BBR3_BETA_PPM_DEFAULT);
}

static inline u32 bbr3_ecn_thresh(struct sock *sk)
{
	return bbr3_fraction_param(sk, BBR3_PARAM_ECN_THRESH_PPM,
				   BBR3_ECN_THRESH_PPM_DEFAULT);
}

static inline u32 bbr3_ecn_factor(struct sock *sk)
{
	return bbr3_fraction_param(sk, BBR3_PARAM_ECN_FACTOR_PPM,
				   BBR3_ECN_FACTOR_PPM_DEFAULT);
}

static inline u32 bbr3_startup_pacing_gain(struct sock *sk)
{
	return bbr3_gain_param(sk, BBR3_PARAM_STARTUP_PACING_GAIN_PPM,
			       BBR3_STARTUP_PACING_GAIN_PPM_DEFAULT);
}

static inline u32 bbr3_startup_cwnd_gain(struct sock *sk)
{
	return bbr3_gain_param(sk, BBR3_PARAM_STARTUP_CWND_GAIN_PPM,
			       BBR3_STARTUP_CWND_GAIN_PPM_DEFAULT);
}

/* The ACK aggregation gain, at most 0xffff so that gain times the u16
 * extra_acked fits a u32. */
static inline u32 bbr3_extra_acked_gain(struct sock *sk)
{
	return bbr3_ratio_param(sk, BBR3_PARAM_EXTRA_ACKED_GAIN_PPM,
				BBR3_EXTRA_ACKED_GAIN_PPM_DEFAULT, 0xffff);
}

#endif /* CCARENA_BBR3_PARAMS_H */
