/* SPDX-License-Identifier: GPL-2.0 */
/*
 * send_quantum.h - how big a BBR's send quantum (TSO/GSO burst) is, which
 * also sizes its cwnd budget (3 bursts of quantisation allowance), for
 * include/bbr_core.h (v1) and include/bbr3_core.h (v3, and v2 on it).
 *
 * Three rules, chosen per flow by the parameter send_quantum:
 *
 *   0 rate     Linux v1 (bbr_tso_segs_goal): ~1 ms of data at the pacing
 *              rate (rate >> sk_pacing_shift); floor 1-2 segments.
 *   1 halving  Google's v2/v3 (bbr_tso_segs_generic): the rate term plus
 *              an allowance favouring short paths, 64 KB halved for every
 *              512 us (2^tso_rtt_shift) of min RTT; floor 2 segments.
 *   2 linear   the RTT-tuning blog (bbrv2-rtt-tuning-blog-2020: "TSO
 *              segments that are a linear function of RTT with a negative
 *              gradient"): quantum_max_bytes (64 KB) at min RTT <=
 *              quantum_rtt_lo (10 ms), quantum_min_segs (2) at >=
 *              quantum_rtt_hi (400 ms), linear between; no rate term (the
 *              blog makes the burst a function of RTT alone). The blog's
 *              SureLink-XG code is not public: the end points are its text.
 *
 * The parameters (names as the scenario writes them, without the unit
 * suffix): send_quantum, quantum_rtt_lo_us, quantum_rtt_hi_us,
 * quantum_max_bytes, quantum_min_segs. Each core declares them in its own
 * table; the defaults below are the one definition.
 */
#ifndef CCARENA_SEND_QUANTUM_H
#define CCARENA_SEND_QUANTUM_H

#include "ccarena_compat.h"

enum cca_send_quantum {
	CCA_QUANTUM_RATE = 0,
	CCA_QUANTUM_HALVING = 1,
	CCA_QUANTUM_LINEAR = 2,
};

/* The blog's end points: 64 KB (GSO's legacy maximum) at 10 ms ... */
#define CCA_QUANTUM_RTT_LO_US_DEFAULT (10 * USEC_PER_MSEC)
#define CCA_QUANTUM_MAX_BYTES_DEFAULT GSO_LEGACY_MAX_SIZE
/* ... down to 2 segments (the BBR draft's minimum burst) at 400 ms. */
#define CCA_QUANTUM_RTT_HI_US_DEFAULT (400 * USEC_PER_MSEC)
#define CCA_QUANTUM_MIN_SEGS_DEFAULT 2
/* Google's halving period: 2^9 us = 512 us of min RTT (tcp_tso_rtt_log). */
#define CCA_QUANTUM_HALVING_SHIFT 9
/* The tuned variants' pacing margin (bbr_tuned, bbr2_tuned, bbr3_tuned):
 * 7%, the middle of the blog's "5 - 10 percent" below the bottleneck
 * bandwidth, to keep the queue (and the short flows' overestimate of
 * their round time) low. Not a quantum, but the blog's other knob. */
#define CCA_TUNED_PACING_MARGIN_PPM 70000

/* Below this pacing rate (bit/s) Linux v1's and Google's v2's BBR send one
 * segment per burst, else two (bbr_min_tso_rate: 1.2 Mbit/s). */
#define CCA_QUANTUM_MIN_TSO_RATE 1200000

/* bbr_min_tso_segs() of Linux v1 and Google's v2: the least TSO burst, 1
 * segment below 1.2 Mbit/s of pacing, else 2. */
static inline u32 cca_rate_min_tso_segs(const struct sock *sk)
{
	return sk->sk_pacing_rate < (CCA_QUANTUM_MIN_TSO_RATE >> 3) ? 1 : 2;
}

/* The linear rule, bytes: max_bytes at rtt <= rtt_lo, min_bytes at rtt >=
 * rtt_hi, linear between (max_bytes if the end points are not ordered). */
static inline u64 cca_linear_quantum_bytes(u32 min_rtt_us, u32 rtt_lo_us,
					   u32 rtt_hi_us, u32 max_bytes,
					   u32 min_bytes)
{
	if (rtt_hi_us <= rtt_lo_us || min_rtt_us <= rtt_lo_us ||
	    max_bytes <= min_bytes)
		return max(max_bytes, min_bytes);
	if (min_rtt_us >= rtt_hi_us)
		return min_bytes;
	return max_bytes - div_u64((u64)(max_bytes - min_bytes) *
				   (min_rtt_us - rtt_lo_us),
				   rtt_hi_us - rtt_lo_us);
}

/* Google's RTT allowance, bytes: 64 KB >> (min_rtt / 2^shift). */
static inline u64 cca_halving_allowance_bytes(u32 min_rtt_us, u32 shift)
{
	u32 r;

	if (!shift)
		return 0;
	r = min_rtt_us >> min(shift, 31U);
	return r < 32 ? (u64)(GSO_LEGACY_MAX_SIZE >> r) : 0; /* >> 32+ is undefined */
}

/*
 * The quantum in bytes before the GSO cap, by the flow's rule; *floor (in:
 * the rate rule's least segments) becomes the least segments of the rule
 * used. A core lists the five parameters consecutively from `first`
 * (send_quantum, quantum_rtt_lo_us, quantum_rtt_hi_us, quantum_max_bytes,
 * quantum_min_segs); `halving_shift` is its halving period's log2 (us).
 */
static inline u64 cca_send_quantum_bytes(struct sock *sk, u32 first,
					 u32 rule_dflt, u32 min_rtt_us,
					 u32 mss, u32 halving_shift,
					 u32 *floor)
{
	u32 rule = cca_u32_param(sk, first, rule_dflt);
	u64 bytes = sk->sk_pacing_rate >> sk->sk_pacing_shift;

	if (rule == CCA_QUANTUM_HALVING) {
		bytes += cca_halving_allowance_bytes(min_rtt_us, halving_shift);
		*floor = 2;	/* sysctl_tcp_min_tso_segs */
	} else if (rule == CCA_QUANTUM_LINEAR) {
		*floor = max(cca_u32_param(sk, first + 4,
					   CCA_QUANTUM_MIN_SEGS_DEFAULT), 1U);
		bytes = cca_linear_quantum_bytes(
			min_rtt_us,
			cca_u32_param(sk, first + 1, CCA_QUANTUM_RTT_LO_US_DEFAULT),
			cca_u32_param(sk, first + 2, CCA_QUANTUM_RTT_HI_US_DEFAULT),
			cca_u32_param(sk, first + 3, CCA_QUANTUM_MAX_BYTES_DEFAULT),
			*floor * mss);
	}
	return bytes;
}

#endif
