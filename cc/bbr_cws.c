// SPDX-License-Identifier: GPL-2.0
/*
 * bbr_cws.c - BBR-CWS: BBR with congestion window scaling, which takes
 * packet loss as a sign that BBR's operating point (cwnd = 2 BDP) is too
 * high for the bottleneck's buffer, for fairness with loss-based flows.
 *
 * Spec: G. Song, J. Kim, Y. Cho, "BBR-CWS: Improving the Inter-Protocol
 * Fairness of BBR", Electronics 9(5), 862, 2020, Algorithm 1
 * (../shared/papers/bbr-cws-song-2020.txt). Everything not named below is
 * BBR v1 as Linux's tcp_bbr.c, compiled from include/bbr_core.h.
 *
 * ---------------------------------------------------------------- model
 * BBR's cwnd is 2 BDP whatever the buffer. In a buffer below 1 BDP the
 * second BDP overflows it on every probe, BBR ignores the losses (it
 * restores cwnd after recovery) and a CUBIC flow sharing the link backs
 * off each time: BBR keeps ~90% of the link and retransmits heavily. In a
 * deep buffer CUBIC fills the queue, BBR's RTprop then includes CUBIC's
 * queue after a ProbeRTT that could not drain it, and its 2 BDP grows
 * with it: the two take turns every 10 s. BBR-CWS reacts to a loss in two
 * ways (paper Sec. 4):
 *
 *  1. A cut. On entering Recovery, cwnd = inflight / 3 (a third of what
 *     was in flight, "more than half" gone, so that BBR's own excess queue
 *     drains); cwnd may then grow by what is acked but not above that
 *     inflight, until Recovery ends; there is no restore of the pre-loss
 *     cwnd afterwards (BBR's restore is what the paper blames for its
 *     endless losses). With the queue drained, the flow may see a lower
 *     RTprop, and its BDP, hence its cwnd, shrinks.
 *  2. A scale. An upper_scaling_factor (usf) in [floor, 1] multiplies the
 *     cwnd target: cwnd <= usf * target. Three RTTs after a cut, if no
 *     lower RTprop was measured (the cut did not reveal an over-estimated
 *     RTprop, so the flow simply sends more than the path holds), usf *=
 *     beta; without a cut for three RTTs, usf += delta. So in a shallow
 *     buffer usf settles where the flow's inflight just fits pipe + buffer,
 *     and in a deep one it stays near 1 while the cuts correct RTprop.
 *
 *   event                       BBR                     BBR-CWS
 *   enter Recovery              round restarts,         round restarts,
 *                               cwnd = inflight+acked,  cwnd = inflight/3 (once
 *                               conserve one round      per evaluation window),
 *                                                       then min(cwnd + acked,
 *                                                       inflight at the cut)
 *   leave Recovery              cwnd = max(cwnd, prior) cwnd kept
 *   every ACK otherwise         min(cwnd + acked,       min(cwnd + acked,
 *                                   target)                 usf * target)
 *   3 RTTs after a cut          -                       no lower RTprop:
 *                                                       usf = max(usf * beta,
 *                                                                 floor)
 *   3 RTTs without a cut        -                       usf = min(usf+delta, 1)
 *
 * ---------------------------------------------------- parameters (CCA_PARAM)
 * Name in the table (scenario key: without the unit suffix) = default.
 *   BBR's, from BBR_CORE_PARAM_DEFS, then:
 *   beta_ppm = 900000    usf's multiplicative decrease, ppm (paper: 0.9).
 *   delta_ppm = 10000    usf's additive increase, ppm (paper: 0.01).
 *   floor_ppm = 200000   usf's lower bound, ppm (Algorithm 1, line 28:
 *       0.2; 16 decreases reach it from 1). usf's upper bound is 1 (the
 *       paper fixes it: a deep buffer never gets more than BBR's 2 BDP).
 *   wait_rtts = 3        RTTs (srtt) to wait after a cut for a lower RTprop,
 *       and between two increases of usf (paper: "3 RTT", enough for the
 *       cut to drain the flow's queue and the drained RTT to come back).
 *   cut_divisor = 3      on entering Recovery, cwnd = inflight / this
 *       (Algorithm 1, line 7; the paper: to cut "by more than half").
 *   reset_on_lower_rtprop = 0   1: set usf back to 1 when a lower RTprop
 *       was measured within the wait (the paper's text, Sec. 4.2: "BBR-CWS
 *       resets the upper_scaling_factor to 1 so that a new RTprop is
 *       entirely applied"); 0: only skip the decrease (Algorithm 1, lines
 *       25-31, which have no reset). The default follows the algorithm:
 *       it is the paper's precise statement, the figures' data are not in
 *       the text we have to tell the two apart, and the behaviour the
 *       text describes for them (usf lower in smaller buffers, Fig. 8b;
 *       a deep-buffer flow finding its RTprop by repeated cuts, Fig. 12)
 *       follows from either. cws-fig13 runs both (docs/algorithms.md).
 *   any_rtprop_update = 0   1: "RTprop is updated" whenever Linux 4.14's
 *       bbr_update_min_rtt() would write min_rtt (a sample at or below it,
 *       or the sample the core writes once the 10-s window expired: 6.x
 *       skips a delayed ACK's there, 4.14 did not), and the flag is
 *       cleared only at the end of a wait (Algorithm 1, lines 30-31), as
 *       the listing's footnote read against the kernel the paper ran;
 *       0: a strictly lower min_rtt since the cut (see the deviations).
 *   cut_on_rto = 0      1: an RTO (entering Loss) also starts a cut's
 *       wait, so usf *= beta unless a lower RTprop follows, as entering
 *       Recovery does; cwnd is the RTO's (in flight + 1, already below
 *       inflight / 3) and Loss is not conserved. 0: Recovery only, as the
 *       listing (see the deviations).
 *
 * ---------------------------------------------------------------- state
 * 40 bytes after struct bbr's 100: more than icsk_ca_priv's 104, so the
 * state is extended (BBR_STATE_EXTENDED: the simulator's extension area,
 * BPF per-socket storage).
 *
 * ----------------------------------------------- deviations from the paper
 *  - "current_rtt" (Algorithm 1, lines 24, 33) is the smoothed RTT
 *    (tp->srtt_us); the paper does not say which RTT it means. Times are
 *    in us (tcp_mstamp), not jiffies.
 *  - "RTprop is updated" (is_rtt_min_updated) counts a strictly lower
 *    min_rtt_us only, not an equal sample nor the 10-s expiry (Linux
 *    4.14's bbr_update_min_rtt() writes min_rtt on <= and on expiry, and
 *    the listing's footnote sets the flag "when RTprop is updated in
 *    bbr_update_model"). The paper's words are "lower" each time it says
 *    what the flag means: "whether the lower RTprop is measured within a
 *    certain time after BBR reduces the congestion window" (variable
 *    list), "waits for the lower RTprop measured during up to 3 RTT"
 *    (Sec. 4.2), "cannot update the lower RTprop" in a shallow buffer
 *    (Sec. 4.2), where equal samples are exactly what it sees and the
 *    decrease must happen. The flag is cleared at each cut, so the wait
 *    asks about RTprop drops after the cut (the listing clears it only
 *    at the end of a wait, which lets a drop found in Startup or a
 *    ProbeRTT cancel a later decrease). any_rtprop_update = 1 is the
 *    4.14 reading.
 *  - usf is updated at the start of the next ACK's processing rather
 *    than right after bbr_set_cwnd (one ACK later; the hooks run before
 *    the cwnd update).
 *  - Linux's per-ACK "cwnd -= newly lost packets" and its round restart
 *    on entering Recovery (next_rtt_delivered = tp->delivered: the
 *    packet-timed round, hence the bw filter's and full-pipe clocks,
 *    starts at the loss) of bbr_set_cwnd_to_recover_or_restore() are kept
 *    (the listing shows the function's new lines, not these, and the
 *    paper says it modified the function "slightly"); they are the core's
 *    (bbr_core.h), which the three recovery hooks below only give cwnd
 *    values. The restart happens with a cut pending too, as in BBR; BBR's
 *    own one-round conservation does not (the listing has none there).
 *  - The cut is taken on entering Recovery (fast recovery) only, as the
 *    listing (line 2: "current_ca_state == TCP_CA_Recovery") and the
 *    text ("When the tcp_ca_state is converted to TCP_CA_Recovery",
 *    Sec. 4.1; loss_detected_time is when the state "is set to
 *    TCP_CA_Recovery"); an RTO (Loss state) ends conservation (line 10:
 *    "< TCP_CA_Recovery") but does not cut, though Sec. 4.1 names both
 *    states as how a loss is seen. cut_on_rto = 1 lets an RTO start the
 *    wait too.
 *  - The paper also "configured the amount of reduction in ProbeRTT
 *    phase" without saying how; ProbeRTT is BBR's (4 packets, 200 ms).
 *  - The paper's BBR-CWS is a patch of Linux 4.14's tcp_bbr.c; ours
 *    builds on the Linux 6.x BBR of bbr_core.h (EDT in-flight accounting,
 *    ACK-aggregation allowance), the BBR the simulator compares it with.
 *    usf scales the whole target, allowances included.
 *  - The cwnd after a cut is at least BBR's cwnd_min_target (4).
 */
#include "ccarena_compat.h"

/* State beyond icsk_ca_priv: per-socket storage in BPF. */
#define BBR_STATE_EXTENDED
#define BBR_EXT_FIELDS							\
	u64 cws_cut_us;		/* us, time of the pending cut; 0: none */ \
	u64 cws_last_action_us;	/* us, last change of usf */		\
	u32 cws_usf_ppm;	/* upper_scaling_factor, ppm of 1 */	\
	u32 cws_upper_cwnd;	/* packets, inflight at the cut */	\
	u32 cws_seen_min_rtt_us; /* us, min_rtt_us at the last ACK */	\
	u32 cws_rtt_min_dropped:1, /* RTprop updated (any_rtprop_update) */ \
	    cws_conserving:1;	/* between a cut and Recovery's end */
#include "bbr_core.h"

enum bbr_cws_param {
	/* usf's multiplicative decrease, ppm (paper: 0.9). */
	CWS_PARAM_BETA_PPM = BBR_PARAM_COUNT,
	/* usf's additive increase, ppm (paper: 0.01). */
	CWS_PARAM_DELTA_PPM,
	/* usf's floor, ppm (Algorithm 1: 0.2). */
	CWS_PARAM_FLOOR_PPM,
	/* srtts to wait after a cut, and between increases (paper: 3). */
	CWS_PARAM_WAIT_RTTS,
	/* cwnd = inflight / this on entering Recovery (paper: 3). */
	CWS_PARAM_CUT_DIVISOR,
	/* 1: usf = 1 when a lower RTprop follows a cut (paper's text). */
	CWS_PARAM_RESET_ON_LOWER_RTPROP,
	/* 1: "RTprop updated" as Linux 4.14 writes min_rtt (<=, expiry). */
	CWS_PARAM_ANY_RTPROP_UPDATE,
	/* 1: an RTO (entering Loss) starts a cut's wait too. */
	CWS_PARAM_CUT_ON_RTO,
};

#define CWS_BETA_PPM_DEFAULT 900000
#define CWS_DELTA_PPM_DEFAULT 10000
#define CWS_FLOOR_PPM_DEFAULT 200000
#define CWS_WAIT_RTTS_DEFAULT 3
#define CWS_CUT_DIVISOR_DEFAULT 3
#define CWS_RESET_ON_LOWER_RTPROP_DEFAULT 0
#define CWS_ANY_RTPROP_UPDATE_DEFAULT 0
#define CWS_CUT_ON_RTO_DEFAULT 0

static inline bool cws_any_rtprop_update(struct sock *sk)
{
	return CCA_PARAM(sk, CWS_PARAM_ANY_RTPROP_UPDATE,
			 CWS_ANY_RTPROP_UPDATE_DEFAULT);
}

/* A parameter in ppm, at most 1 (usf never exceeds 1). */
static inline u32 cws_ppm(struct sock *sk, u32 index, u32 dflt)
{
	return (u32)min_t(u64, CCA_PARAM(sk, index, dflt), BBR_PPM);
}

/* us the wait after a cut, and between two increases, lasts:
 * wait_rtts * srtt (srtt_us is << 3; before any RTT sample, 1 ms). */
static inline u64 cws_wait_us(struct sock *sk)
{
	u32 srtt_us = tcp_sk(sk)->srtt_us >> 3;
	u64 rtts = CCA_PARAM(sk, CWS_PARAM_WAIT_RTTS, CWS_WAIT_RTTS_DEFAULT);

	return min_t(u64, rtts, 1000) * (srtt_us ? srtt_us : USEC_PER_MSEC);
}

/* Algorithm 1, lines 22-37 (bbr_set_upper_scaling_factor), and the
 * is_rtt_min_updated flag of bbr_update_model (line 45). Runs on every
 * ACK after BBR's model update. */
static inline void cws_update_scale(struct sock *sk,
				    const struct rate_sample *rs)
{
	struct bbr *bbr = bbr_ca(sk);
	u64 now = cca_now_us(sk);
	u32 usf = bbr->cws_usf_ppm;

	/* After the core's update: a sample at or below min_rtt_us is one
	 * 4.14 would have written (a lower or equal one, or an expired
	 * window's, which the core wrote). */
	if (bbr->min_rtt_us < bbr->cws_seen_min_rtt_us ||
	    (cws_any_rtprop_update(sk) && rs->rtt_us >= 0 &&
	     rs->rtt_us <= (long)bbr->min_rtt_us))
		bbr->cws_rtt_min_dropped = 1;
	bbr->cws_seen_min_rtt_us = bbr->min_rtt_us;

	if (bbr->cws_cut_us) {
		if (now > bbr->cws_cut_us + cws_wait_us(sk)) {
			if (!bbr->cws_rtt_min_dropped) {
				usf = (u32)div_u64((u64)usf *
					cws_ppm(sk, CWS_PARAM_BETA_PPM,
						CWS_BETA_PPM_DEFAULT), BBR_PPM);
				usf = max(usf, cws_ppm(sk, CWS_PARAM_FLOOR_PPM,
						       CWS_FLOOR_PPM_DEFAULT));
				bbr->cws_last_action_us = now;
			} else if (CCA_PARAM(sk, CWS_PARAM_RESET_ON_LOWER_RTPROP,
					     CWS_RESET_ON_LOWER_RTPROP_DEFAULT)) {
				usf = BBR_PPM;
			}
			bbr->cws_cut_us = 0;
			bbr->cws_rtt_min_dropped = 0;
		}
	} else if (now > bbr->cws_last_action_us + cws_wait_us(sk)) {
		usf = min_t(u32, usf + cws_ppm(sk, CWS_PARAM_DELTA_PPM,
					       CWS_DELTA_PPM_DEFAULT), BBR_PPM);
		bbr->cws_last_action_us = now;
	}
	bbr->cws_usf_ppm = usf;
	CCA_TRACE_VAR(sk, usf);
}

/* Algorithm 1, lines 1-14 and 20-21 (bbr_set_cwnd_to_recover_or_restore
 * and the "done:" label) as three cwnd rules for the core's recovery
 * hooks; the core keeps Linux's losses off cwnd, round restart on
 * entering Recovery and CA-state tracking. */

/* A cut's wait starts (Algorithm 1, line 5): usf is judged wait_rtts
 * later. */
static inline void cws_start_wait(struct sock *sk)
{
	struct bbr *bbr = bbr_ca(sk);

	bbr->cws_cut_us = max_t(u64, cca_now_us(sk), 1);
	if (!cws_any_rtprop_update(sk))
		bbr->cws_rtt_min_dropped = 0;
}

/* Entering Recovery: the cut, once per evaluation window (with a cut
 * pending, cwnd is kept and nothing is conserved). */
static inline u32 cws_recovery_cwnd(struct sock *sk, u32 cwnd, u32 acked)
{
	struct bbr *bbr = bbr_ca(sk);
	u64 divisor = CCA_PARAM(sk, CWS_PARAM_CUT_DIVISOR,
				CWS_CUT_DIVISOR_DEFAULT);
	u32 min_target = cca_u32_param(sk, BBR_PARAM_CWND_MIN_TARGET,
				       BBR_CWND_MIN_TARGET_DEFAULT);

	if (bbr->cws_cut_us)
		return cwnd;
	cws_start_wait(sk);
	bbr->cws_upper_cwnd = tcp_packets_in_flight(tcp_sk(sk));
	bbr->cws_conserving = 1;
	cwnd = (u32)div_u64(bbr->cws_upper_cwnd,
			    (u32)clamp_t(u64, divisor, 1, 1000));
	return max(cwnd, min_target);
}

/* From the cut until Recovery ends: cwnd + acked, at most the flight at
 * the cut, and no target. Not BBR's one-round conservation otherwise. */
static inline bool cws_conserve_cwnd(struct sock *sk, u32 cwnd, u32 acked,
				     u32 *new_cwnd)
{
	struct bbr *bbr = bbr_ca(sk);
	u32 min_target = cca_u32_param(sk, BBR_PARAM_CWND_MIN_TARGET,
				       BBR_CWND_MIN_TARGET_DEFAULT);

	if (!bbr->cws_conserving)
		return false;
	*new_cwnd = max(min(cwnd + acked, bbr->cws_upper_cwnd), min_target);
	return true;
}

/* Leaving Recovery: conservation ends and prior_cwnd is not restored. */
static inline u32 cws_restore_cwnd(struct sock *sk, u32 cwnd)
{
	bbr_ca(sk)->cws_conserving = 0;
	return cwnd;
}

/* An RTO (entering Loss), with cut_on_rto: the wait starts, once per
 * evaluation window; the stack has already set cwnd to in flight + 1. */
static inline void cws_set_state(struct sock *sk, u8 old_state, u8 new_state)
{
	if (new_state == TCP_CA_Loss && old_state != TCP_CA_Loss &&
	    !bbr_ca(sk)->cws_cut_us &&
	    CCA_PARAM(sk, CWS_PARAM_CUT_ON_RTO, CWS_CUT_ON_RTO_DEFAULT))
		cws_start_wait(sk);
}

/* Algorithm 1, line 19: upper_cwnd = target_cwnd * usf. */
static inline u32 cws_cwnd_cap(struct sock *sk, u32 target_cwnd)
{
	return (u32)div_u64((u64)target_cwnd * bbr_ca(sk)->cws_usf_ppm,
			    BBR_PPM);
}

static inline void cws_init(struct sock *sk)
{
	struct bbr *bbr = bbr_ca(sk);

	bbr->cws_cut_us = 0;
	bbr->cws_last_action_us = cca_now_us(sk);
	bbr->cws_usf_ppm = BBR_PPM;
	bbr->cws_upper_cwnd = 0;
	bbr->cws_seen_min_rtt_us = bbr->min_rtt_us;
	bbr->cws_rtt_min_dropped = 0;
	bbr->cws_conserving = 0;
	CCA_TRACE_VAR(sk, BBR_PPM);
}

/* Where BBR-CWS differs from BBR (every other hook: BBR's behaviour). */
static const struct bbr_hooks bbr_hooks = {
	.init = cws_init,
	.update_model = cws_update_scale,
	.recovery_cwnd = cws_recovery_cwnd,
	.conserve_cwnd = cws_conserve_cwnd,
	.restore_cwnd = cws_restore_cwnd,
	.cwnd_cap = cws_cwnd_cap,
	.set_state = cws_set_state,
};

CCA_DESCRIPTION(bbr_cws,
	"BBR-CWS: BBR that scales its cwnd down on loss, for fairness with CUBIC (Song et al.)");
CCA_PARAMS(bbr_cws, BBR_CORE_PARAM_DEFS
	CCA_PARAM_DEF(CWS_PARAM_BETA_PPM, "beta_ppm", CWS_BETA_PPM_DEFAULT)
	CCA_PARAM_DEF(CWS_PARAM_DELTA_PPM, "delta_ppm", CWS_DELTA_PPM_DEFAULT)
	CCA_PARAM_DEF(CWS_PARAM_FLOOR_PPM, "floor_ppm", CWS_FLOOR_PPM_DEFAULT)
	CCA_PARAM_DEF(CWS_PARAM_WAIT_RTTS, "wait_rtts", CWS_WAIT_RTTS_DEFAULT)
	CCA_PARAM_DEF(CWS_PARAM_CUT_DIVISOR, "cut_divisor",
		      CWS_CUT_DIVISOR_DEFAULT)
	CCA_PARAM_DEF(CWS_PARAM_RESET_ON_LOWER_RTPROP, "reset_on_lower_rtprop",
		      CWS_RESET_ON_LOWER_RTPROP_DEFAULT)
	CCA_PARAM_DEF(CWS_PARAM_ANY_RTPROP_UPDATE, "any_rtprop_update",
		      CWS_ANY_RTPROP_UPDATE_DEFAULT)
	CCA_PARAM_DEF(CWS_PARAM_CUT_ON_RTO, "cut_on_rto",
		      CWS_CUT_ON_RTO_DEFAULT));

BBR_CORE_REGISTER(bbr_cws);
