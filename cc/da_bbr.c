// SPDX-License-Identifier: GPL-2.0
/*
 * da_bbr.c - Delay-Aware BBR: BBR whose cwnd shrinks for flows whose RTT
 * is mostly propagation, for RTT fairness and less loss.
 *
 * Spec: G. H. Kim and Y. Z. Cho, "Delay-Aware BBR Congestion Control
 * Algorithm for RTT Fairness Improvement", IEEE Access 8, 2020, as the
 * issue states its mechanisms (the paper itself is not in
 * ../shared/papers/; the RTT-tuning blog names DA-BBR as a fix). Every
 * thing not named below is BBR v1 as Linux's tcp_bbr.c, compiled from
 * include/bbr_core.h.
 *
 * ---------------------------------------------------------------- model
 * BBR's cwnd is cwnd_gain * bw * RTprop: a long-RTT flow holds a BDP in
 * the queue proportional to its long RTprop, which is what lets it take
 * most of a shared link from a short one. DA-BBR scales the BDP behind the
 * cwnd target, in ProbeBW, by
 *
 *     gamma = RTT / (RTT + RTprop)        (the latest RTT sample)
 *
 * With an empty queue RTT = RTprop and gamma = 1/2: cwnd = 1 BDP at BBR's
 * gain 2. A queue of q adds the same q to every flow's RTT, so gamma
 * grows toward 1 faster for a short-RTprop flow ((Rs + q)/(2Rs + q)) than
 * for a long one: the long flow's share of the queue shrinks. When RTprop
 * rose by more than 20% since the previous bandwidth probe (a route
 * change, or an RTprop inflated by a standing queue) the BDP is not
 * scaled, so the flow can re-learn its operating point:
 *
 *     probe k-1 begins      probe k begins           probe k+1 begins
 *     (RTprop was R(k-1))   (RTprop was R(k))
 *           |                     | no scaling while RTprop |
 *           |                     | > 1.2 * R(k-1)          |
 *
 * i.e. from the start of one probe to the start of the next, RTprop is
 * measured against its value when the probe before began: the first probe
 * after a rise, and the rest of its cycle, run unscaled; the next probe,
 * whose reference is the risen RTprop, is scaled again. Two more changes:
 *
 *   ProbeRTT   cwnd = a third of the cwnd before it, instead of 4 packets
 *              (the queue still drains, in 200 ms, with less loss of rate)
 *   Recovery   on entering it, cwnd = what is in flight (no packet
 *              conservation round) and pacing gain 0.75 while in it; the
 *              pre-loss cwnd is not restored when it ends (BBR's restore
 *              re-creates the queue that overflowed). The rest is BBR's
 *              (bbr_core.h's recovery rule, whose hooks set only these
 *              cwnd values): lost packets off cwnd, and a new
 *              packet-timed round from the ACK that enters Recovery
 *
 * CCA_TRACE_VAR: gamma in ppm (1e6 = not scaled).
 *
 * ---------------------------------------------------- parameters (CCA_PARAM)
 * BBR's, from BBR_CORE_PARAM_DEFS, then (scenario key: without the unit):
 *   rtprop_rise_ppm = 200000     no scaling when RTprop rose more than this
 *                                fraction since the previous probe (20%)
 *   probe_rtt_divisor = 3        ProbeRTT's cwnd = prior cwnd / this
 *   recovery_pacing_gain_ppm = 750000   pacing gain in Recovery (0.75)
 *
 * ---------------------------------------------------------------- state
 * Beyond icsk_ca_priv (BBR_STATE_EXTENDED: the simulator's extension area,
 * BPF per-socket storage):
 *   da_rtt_us            us, the latest RTT sample (rs->rtt_us)
 *   da_rtprop_ref_us     us, RTprop when the previous probe (ProbeBW's
 *                        1.25 phase) began: what a rise is measured from
 *   da_rtprop_probe_us   us, RTprop when the latest probe began (the next
 *                        probe's reference)
 *   da_probing           the previous ACK was in a probe
 *
 * ---------------------------------------------------------- deviations
 *  - "The previous probe" is the start of the previous ProbeBW gain-1.25
 *    phase, the one before the probe under way (or, between probes, the
 *    one before the latest): the reference changes only when a probe
 *    begins, and the test is made on every ACK against it. Until two
 *    probes have begun RTprop has nothing to have risen from and gamma
 *    applies.
 *  - gamma scales the BDP only (bbr_bdp()); the ACK-aggregation allowance
 *    and the quantisation budget are added unscaled, as BBR adds them.
 *  - Linux 6.x BBR underneath (bbr_core.h), whatever kernel the authors
 *    patched; ProbeRTT's cwnd is at least cwnd_min_target (4).
 */
#include "ccarena_compat.h"

#define BBR_STATE_EXTENDED
#define BBR_EXT_FIELDS							\
	u32 da_rtt_us;		/* us, latest RTT sample; 0: none */	\
	u32 da_rtprop_ref_us;	/* us, RTprop at the previous probe; 0: none */ \
	u32 da_rtprop_probe_us;	/* us, RTprop at the latest probe; 0: none */ \
	u32 da_probing:1;	/* the previous ACK was in a probe */
#include "bbr_core.h"

enum da_bbr_param {
	/* No scaling when RTprop rose more than this since the previous
	 * probe, ppm (paper: 20%). */
	DA_PARAM_RTPROP_RISE_PPM = BBR_PARAM_COUNT,
	/* ProbeRTT's cwnd = prior cwnd / this (paper: a third). */
	DA_PARAM_PROBE_RTT_DIVISOR,
	/* Pacing gain while in Recovery, ppm (paper: 0.75). */
	DA_PARAM_RECOVERY_PACING_GAIN_PPM,
};

#define DA_RTPROP_RISE_PPM_DEFAULT 200000
#define DA_PROBE_RTT_DIVISOR_DEFAULT 3
#define DA_RECOVERY_PACING_GAIN_PPM_DEFAULT 750000

/* gamma in ppm: RTT / (RTT + RTprop), or 1e6 when not scaling. */
static inline u32 da_gamma_ppm(struct sock *sk)
{
	struct bbr *bbr = bbr_ca(sk);
	u64 rise = CCA_PARAM(sk, DA_PARAM_RTPROP_RISE_PPM,
			     DA_RTPROP_RISE_PPM_DEFAULT);
	u64 rtt = bbr->da_rtt_us, rtprop = bbr->min_rtt_us;

	if (bbr->mode != BBR_PROBE_BW || !rtt || rtprop == ~0U || !rtprop)
		return BBR_PPM;
	if (bbr->da_rtprop_ref_us &&
	    rtprop * BBR_PPM > (u64)bbr->da_rtprop_ref_us * (BBR_PPM + rise))
		return BBR_PPM;	/* RTprop rose > 20% since the last probe */
	return (u32)div64_u64(rtt * BBR_PPM, rtt + rtprop);
}

/* Per ACK: the latest RTT sample, and RTprop at each probe's start. */
static inline void da_update_model(struct sock *sk,
				   const struct rate_sample *rs)
{
	struct bbr *bbr = bbr_ca(sk);
	bool probing = bbr->mode == BBR_PROBE_BW && bbr->cycle_idx == 0;

	if (rs->rtt_us > 0)
		bbr->da_rtt_us = (u32)min_t(s64, rs->rtt_us, 0xffffffffLL);
	if (probing && !bbr->da_probing) {
		/* A probe begins: from now on compare with the RTprop of
		 * the one before it, and remember this one's for the next
		 * (not compare this probe with itself). */
		bbr->da_rtprop_ref_us = bbr->da_rtprop_probe_us;
		bbr->da_rtprop_probe_us = bbr->min_rtt_us;
	}
	bbr->da_probing = probing;
	CCA_TRACE_VAR(sk, da_gamma_ppm(sk));
}

/* The BDP behind the cwnd target, scaled by gamma in ProbeBW. */
static inline u32 da_cwnd_bdp(struct sock *sk, u32 bw, int gain)
{
	u64 bdp = bbr_bdp(sk, bw, gain);

	return (u32)max_t(u64, div_u64(bdp * da_gamma_ppm(sk), BBR_PPM), 1);
}

/* ProbeRTT: a third of the cwnd before it (at least cwnd_min_target). */
static inline u32 da_probe_rtt_cwnd(struct sock *sk)
{
	u64 divisor = CCA_PARAM(sk, DA_PARAM_PROBE_RTT_DIVISOR,
				DA_PROBE_RTT_DIVISOR_DEFAULT);
	u32 min_target = cca_u32_param(sk, BBR_PARAM_CWND_MIN_TARGET,
				       BBR_CWND_MIN_TARGET_DEFAULT);

	return max(bbr_ca(sk)->prior_cwnd /
		   (u32)clamp_t(u64, divisor, 1, 1000), min_target);
}

/* Pacing gain 0.75 while in Recovery. */
static inline u32 da_recovery_pacing_gain(struct sock *sk, u32 gain)
{
	if (inet_csk(sk)->icsk_ca_state != TCP_CA_Recovery)
		return gain;
	return bbr_gain_param(sk, DA_PARAM_RECOVERY_PACING_GAIN_PPM,
			      DA_RECOVERY_PACING_GAIN_PPM_DEFAULT);
}

/* Entering Recovery: cwnd = what is in flight (at least cwnd_min_target).
 * The core has restarted the round, as Linux's BBR does; lost packets
 * come off cwnd as in BBR. */
static inline u32 da_recovery_cwnd(struct sock *sk, u32 cwnd, u32 acked)
{
	u32 min_target = cca_u32_param(sk, BBR_PARAM_CWND_MIN_TARGET,
				       BBR_CWND_MIN_TARGET_DEFAULT);

	return max(tcp_packets_in_flight(tcp_sk(sk)), min_target);
}

/* No packet conservation round: toward the target from the first ACK. */
static inline bool da_conserve_cwnd(struct sock *sk, u32 cwnd, u32 acked,
				    u32 *new_cwnd)
{
	return false;
}

/* Leaving Recovery: the pre-loss cwnd is not restored. */
static inline u32 da_restore_cwnd(struct sock *sk, u32 cwnd)
{
	return cwnd;
}

static inline void da_init(struct sock *sk)
{
	struct bbr *bbr = bbr_ca(sk);

	bbr->da_rtt_us = 0;
	bbr->da_rtprop_ref_us = 0;
	bbr->da_rtprop_probe_us = 0;
	bbr->da_probing = 0;
	CCA_TRACE_VAR(sk, BBR_PPM);
}

/* Where DA-BBR differs from BBR (every other hook: BBR's behaviour). */
static const struct bbr_hooks bbr_hooks = {
	.init = da_init,
	.update_model = da_update_model,
	.cwnd_bdp = da_cwnd_bdp,
	.probe_rtt_cwnd = da_probe_rtt_cwnd,
	.recovery_pacing_gain = da_recovery_pacing_gain,
	.recovery_cwnd = da_recovery_cwnd,
	.conserve_cwnd = da_conserve_cwnd,
	.restore_cwnd = da_restore_cwnd,
};

CCA_DESCRIPTION(da_bbr,
	"Delay-Aware BBR: cwnd shrinks when the RTT is mostly propagation, for RTT fairness");
CCA_PARAMS(da_bbr, BBR_CORE_PARAM_DEFS
	CCA_PARAM_DEF(DA_PARAM_RTPROP_RISE_PPM, "rtprop_rise_ppm",
		      DA_RTPROP_RISE_PPM_DEFAULT)
	CCA_PARAM_DEF(DA_PARAM_PROBE_RTT_DIVISOR, "probe_rtt_divisor",
		      DA_PROBE_RTT_DIVISOR_DEFAULT)
	CCA_PARAM_DEF(DA_PARAM_RECOVERY_PACING_GAIN_PPM,
		      "recovery_pacing_gain_ppm",
		      DA_RECOVERY_PACING_GAIN_PPM_DEFAULT));

BBR_CORE_REGISTER(da_bbr);
