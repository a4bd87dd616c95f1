// SPDX-License-Identifier: GPL-2.0
/*
 * bbq.c - BBQ: BBR with a capped probing period while a persistent queue
 * exists, for RTT fairness between BBR flows.
 *
 * Spec: S. Ma, J. Jiang, W. Wang, B. Li, "Fairness of Congestion-Based
 * Congestion Control: Experimental Evaluation and Analysis", Section V
 * (../shared/papers/bbq-ma-rtt-fairness.txt). Everything not named below
 * is BBR v1 as Linux's tcp_bbr.c, compiled from include/bbr_core.h (whose
 * header comment is the design document of that part).
 *
 * ---------------------------------------------------------------- model
 * Why BBR favours long-RTT flows (paper Sec. IV): in ProbeBW a flow probes
 * by pacing at 5/4 of its BtlBw estimate for one MinRTT, so each probe
 * deposits about 0.25 * BtlBw * MinRTT in the bottleneck queue, an amount
 * proportional to the flow's RTT. Once the probes have built a persistent
 * queue, throughput follows queue share: the long-RTT flow's larger
 * deposits win it a higher delivery rate, the short-RTT flow's max-bw
 * filter expires to a lower value, it sends less, holds even less of the
 * queue, and a positive feedback loop drives it down (and, with queueing
 * delay above its MinRTT, its inflight is also cwnd-bound at 2 BDP).
 *
 * BBQ gives every flow the same deposit by capping the probing (5/4) phase
 * while the queue persists (Sec. V-B):
 *
 *     queue  =  RTT >= (1 + beta) * MinRTT            per packet-timed round
 *     rho    =  queue ? min(MinRTT, alpha) : MinRTT   length of the 5/4 phase
 *
 * With alpha = 3 ms, below typical Internet RTTs, all flows probe for the
 * same 3 ms and deposit 0.25 * BtlBw * 3 ms each, whatever their RTT; the
 * queue also grows more slowly, so the short flow is less often cwnd-bound.
 * Without a queue BBQ is BBR: a flow that finds spare bandwidth (a
 * competitor left, Fig. 13) probes for a full MinRTT and grabs it at BBR's
 * speed, +25% per 8-phase cycle. Draining (3/4: until inflight <= one BDP,
 * at most MinRTT), cruising, Startup, ProbeRTT and cwnd = 2 BDP are BBR's.
 *
 *  ProbeBW phase       5/4 (probing)            3/4 (draining)     1 (x 6)
 *  BBR, BBQ w/o queue  MinRTT, and on until     until inflight <=   MinRTT
 *                      inflight >= 5/4 BDP      BDP, <= MinRTT      each
 *                      (or a loss)
 *  BBQ with a queue    rho = min(MinRTT,        as BBR              as BBR
 *                      alpha): a hard limit
 *
 * The persistent-queue detector. "RTT" in the paper's rule is taken as the
 * minimum RTT sample (rs->rtt_us) over the last packet-timed round, i.e.
 * the flow's view of the queue's low point over one round trip:
 *  - the paper asks for a *persistent* queue, the standing queue of its
 *    phase 1, not the transient one each probe makes and drains; a queue
 *    that empties at some point of a round trip is not persistent;
 *  - single samples are inflated without any standing queue: a paced
 *    sender emits TSO bursts of ~1 ms of data that arrive back to back at
 *    the bottleneck, so the k-th packet of a burst waits k-1 serialisation
 *    times (0.12 ms per packet at 100 Mbit/s). beta * MinRTT is 0.1 ms at
 *    10 ms, so a per-sample rule would see a "queue" on an idle link; the
 *    minimum over a round is set by a burst's first packet;
 *  - one round is the shortest window that contains a sample of every
 *    part of the flow's flight, and it keeps the detector "instant" in the
 *    paper's sense (Fig. 13: BBQ "instantly detects" the competitor's
 *    departure and reduces to BBR): the decision lags by one round trip.
 * The verdict of a round is taken on the ACK that ends it and holds until
 * the next round ends (a round without RTT samples keeps the old one).
 * The probing phase tests it on every ACK once rho has elapsed, so a queue
 * detected mid-probe ends the probe at once. (A per-sample rule, tried on
 * the simulator: same fairness, but a lone 10 ms flow whose link doubled
 * reached 90% of it in 0.9-1.0 s instead of BBR's 0.6 s, and lone flows
 * used 96.5-98.4% of the new link instead of 98.0-99.7%: their own bursts
 * held the cap on. With the round minimum, BBQ matched BBR exactly.)
 *
 * A lone flow can hold a persistent queue of its own: BBR's drain phase
 * stops at one BDP *plus* the quantisation budget (3 TSO bursts, ~1 ms of
 * data each), and cruising at 0.99 * bw drains only 6% of MinRTT's worth
 * per 8-phase cycle, so on short paths part of the budget stays queued
 * from probe to probe. BBQ rightly sees a full pipe with a standing queue
 * and caps some of those probes; the link stays full (tests/bbq.rs).
 *
 * ---------------------------------------------------- parameters (CCA_PARAM)
 * Name in the table (scenario key: without the unit suffix) = default.
 *   BBR's, from BBR_CORE_PARAM_DEFS, then:
 *   alpha_us = 3000   cap of the probing phase while a queue persists, us.
 *       The paper's recommendation (Sec. V-C): below the propagation delay
 *       of typical connections (5-300 ms) so that all of them probe
 *       equally long; much smaller would make probes too short to raise a
 *       flow's bw estimate and slow convergence to a fair share.
 *   beta_ppm = 10000  slack of the queue test: 1%, the top of the paper's
 *       recommended 0.5%-1% for wired networks (Sec. V-C). The two pulls:
 *       small enough that a standing queue is not taken for an idle pipe
 *       (a queue below beta * MinRTT is invisible and the flow falls back
 *       to BBR's long probes), large enough that noise in RTT samples does
 *       not hold the cap on while the pipe is underused (slowing the grab
 *       of freed bandwidth). On the simulator the two ends of the range
 *       measured alike (10 vs 50 ms, 100 Mbit/s, seeds 1-5: share of the
 *       10 ms flow 48.0-52.5%, mean queueing delay 13.2-13.7 ms, Fig. 13
 *       ramp to 90% 0.7-0.9 s, for both); only far outside it do things
 *       change:
 *       beta = 0 never releases the cap (an RTT is always >= MinRTT) and
 *       the freed link is not filled within 10 s, beta = 20% hands the
 *       50 ms flow back 63.4%. With no difference inside the range we take
 *       its top: real hosts add RTT jitter the simulator does not have
 *       (timers, interrupt coalescing, GRO), the larger slack tolerates
 *       twice as much of it, and the queue BBQ leaves standing (~13 ms in
 *       the case above) is still 26x what 1% hides from a 50 ms flow.
 *   first_cut = 0     1: the paper's failed first cut (Sec. V-A, Fig. 12)
 *       instead of BBQ: BBR whose draining (3/4) phase lasts until inflight
 *       is down to exactly one up-to-date BDP (bw * MinRTT, without BBR's
 *       quantisation budget: the paper's "exactly", and its bound "a queue
 *       above MinRTT/3 makes it impossible", 0.75 * bw * (MinRTT + Q) <=
 *       bw * MinRTT, holds only for the bare BDP), with no MinRTT time
 *       limit, and no probing cap.
 *       It leaves no backlog after each probe, but under a queue of more
 *       than MinRTT/3 a 3/4 pacing gain can never bring inflight to one
 *       BDP, so a short flow stays trapped in draining while its max-bw
 *       expires; the paper found it no better than BBR.
 *
 * ---------------------------------------------------------------- state
 * Two fields in the 4 bytes struct bbr leaves free (BBR_EXT_FIELDS; the
 * state stays in icsk_ca_priv, as BBR's):
 * the minimum RTT of the current round (us, 31 bits: 35 minutes) and the
 * queue verdict of the last finished round.
 *
 * ----------------------------------------------- deviations from the paper
 *  - The paper leaves open which RTT its rule compares; the round minimum
 *    above is our reading, for the reasons given.
 *  - With a queue, rho is a hard limit on the probe: BBR's rule "probe
 *    past MinRTT until inflight reaches 5/4 BDP" (tcp_bbr.c) is not
 *    applied, as that would let a long-RTT flow, whose inflight is far
 *    from 5/4 BDP after alpha, probe for most of its MinRTT again (the
 *    paper: such a flow "now probes for at most alpha time"). Where
 *    MinRTT <= alpha, rho = MinRTT and BBR's rule is kept: BBQ changes
 *    nothing there.
 *  - The paper's BBQ is a patch of Linux 4.9's tcp_bbr.c; ours builds on
 *    the Linux 6.x BBR of bbr_core.h (EDT in-flight accounting,
 *    ACK-aggregation allowance), the BBR the simulator compares it with.
 *  - Not a deviation but a property of the rule worth knowing: a longer
 *    path (a route change, or a receiver inflating its RTT as in the
 *    paper's Fig. 7) looks like a persistent queue until the MinRTT filter
 *    adopts the new RTT (ProbeRTT, within 10 s); meanwhile probes are
 *    capped and a lone flow's bw estimate can sag (~4% in 1.6 s on the
 *    fake network of tests/bbq.rs).
 *  - The first cut (first_cut = 1), as the paper describes it, traps the
 *    short flow in draining (Fig. 12's mechanism, reproduced) but on the
 *    simulator it leaves the 10 ms flow ~15% against 50 ms, above BBR's
 *    ~10%, where the paper saw it below BBR's; see docs/algorithms.md.
 */
#include "ccarena_compat.h"

/* BBQ's state: appended to struct bbr, in the 4 bytes it leaves free. */
#define BBR_EXT_FIELDS							\
	u32 bbq_round_min_rtt_us:31, /* us, min RTT sample this round */ \
	    bbq_queue:1;	     /* last round: a persistent queue */

#include "bbr_core.h"

/* "No RTT sample yet this round": the 31-bit field's largest value. */
#define BBQ_NO_RTT 0x7fffffffU

enum bbq_param {
	/* Probing-phase cap while a queue persists, us (paper: 3 ms). */
	BBQ_PARAM_ALPHA_US = BBR_PARAM_COUNT,
	/* Queue test slack, ppm (paper: 0.5%-1%). */
	BBQ_PARAM_BETA_PPM,
	/* 1: the paper's first cut (drain to one BDP) instead of BBQ. */
	BBQ_PARAM_FIRST_CUT,
};

#define BBQ_ALPHA_US_DEFAULT (3 * USEC_PER_MSEC)
#define BBQ_BETA_PPM_DEFAULT 10000
#define BBQ_FIRST_CUT_DEFAULT 0

static inline bool bbq_first_cut(struct sock *sk)
{
	return CCA_PARAM(sk, BBQ_PARAM_FIRST_CUT, BBQ_FIRST_CUT_DEFAULT) != 0;
}

static inline u32 bbq_alpha_us(struct sock *sk)
{
	return cca_u32_param(sk, BBQ_PARAM_ALPHA_US, BBQ_ALPHA_US_DEFAULT);
}

/* Is an RTT of rtt_us at or above (1 + beta) * min_rtt? In u64 without a
 * division: rtt * 1e6 >= min_rtt * (1e6 + beta_ppm). beta is capped at
 * 1000x so the product cannot overflow. */
static inline bool bbq_rtt_shows_queue(struct sock *sk, u32 rtt_us)
{
	u64 beta = min_t(u64, CCA_PARAM(sk, BBQ_PARAM_BETA_PPM,
					BBQ_BETA_PPM_DEFAULT),
			 1000ULL * BBR_PPM);
	u32 min_rtt = bbr_ca(sk)->min_rtt_us;

	if (min_rtt == ~0U)
		return false;	/* no MinRTT yet: nothing to compare with */
	return (u64)rtt_us * BBR_PPM >= (u64)min_rtt * (BBR_PPM + beta);
}

/* Is the current phase a probe under BBQ's cap? Only when a persistent
 * queue was seen and the cap is below MinRTT (otherwise rho = MinRTT and
 * BBQ changes nothing). */
static inline bool bbq_probe_capped(struct sock *sk)
{
	struct bbr *bbr = bbr_ca(sk);

	return bbr->pacing_gain > BBR_UNIT && bbr->bbq_queue &&
	       bbq_alpha_us(sk) < bbr->min_rtt_us && !bbq_first_cut(sk);
}

/* rho: the length of the current ProbeBW phase, us. */
static inline u32 bbq_phase_len_us(struct sock *sk)
{
	return bbq_probe_capped(sk) ? bbq_alpha_us(sk) :
				      bbr_ca(sk)->min_rtt_us;
}

static inline bool bbq_probe_until_inflight(struct sock *sk)
{
	return !bbq_probe_capped(sk);
}

static inline bool bbq_drain_until_bdp(struct sock *sk)
{
	return bbq_first_cut(sk);
}

/* The detector: per packet-timed round, was the lowest RTT sample still
 * (1 + beta) above MinRTT? Runs after BBR's model update of this ACK, so
 * round_start and min_rtt_us are current. */
static inline void bbq_update_queue(struct sock *sk,
				    const struct rate_sample *rs)
{
	struct bbr *bbr = bbr_ca(sk);

	if (bbr->round_start) {
		if (bbr->bbq_round_min_rtt_us != BBQ_NO_RTT)
			bbr->bbq_queue = bbq_rtt_shows_queue(
				sk, bbr->bbq_round_min_rtt_us);
		bbr->bbq_round_min_rtt_us = BBQ_NO_RTT;
	}
	if (rs->rtt_us >= 0 && rs->rtt_us < (long)bbr->bbq_round_min_rtt_us)
		bbr->bbq_round_min_rtt_us = (u32)rs->rtt_us;
	/* Telemetry (cc_var): the verdict in force, 1.0 = a persistent queue. */
	CCA_TRACE_VAR(sk, bbr->bbq_queue ? BBR_PPM : 0);
}

static inline void bbq_init(struct sock *sk)
{
	struct bbr *bbr = bbr_ca(sk);

	bbr->bbq_round_min_rtt_us = BBQ_NO_RTT;
	bbr->bbq_queue = 0;
}

/* Where BBQ differs from BBR (every other hook: BBR's behaviour). */
static const struct bbr_hooks bbr_hooks = {
	.init = bbq_init,
	.update_model = bbq_update_queue,
	.phase_len_us = bbq_phase_len_us,
	.probe_until_inflight = bbq_probe_until_inflight,
	.drain_until_bdp = bbq_drain_until_bdp,
};

CCA_DESCRIPTION(bbq,
	"BBR v1 that caps its probing period while a queue persists, for RTT fairness (Ma et al.)");
CCA_PARAMS(bbq, BBR_CORE_PARAM_DEFS
	CCA_PARAM_DEF(BBQ_PARAM_ALPHA_US, "alpha_us", BBQ_ALPHA_US_DEFAULT)
	CCA_PARAM_DEF(BBQ_PARAM_BETA_PPM, "beta_ppm", BBQ_BETA_PPM_DEFAULT)
	CCA_PARAM_DEF(BBQ_PARAM_FIRST_CUT, "first_cut",
		      BBQ_FIRST_CUT_DEFAULT));

BBR_CORE_REGISTER(bbq);
