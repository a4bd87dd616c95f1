// SPDX-License-Identifier: GPL-2.0
/*
 * modest_bbr.c - Modest BBR: BBR whose cwnd, after a loss, searches
 * (binary search, then additive increase, as BIC) for a window that does
 * not lose.
 *
 * Spec: Algorithm 2 of G. Song, J. Kim, Y. Cho, "BBR-CWS: Improving the
 * Inter-Protocol Fairness of BBR", Electronics 9(5), 862, 2020
 * (../shared/papers/bbr-cws-song-2020.txt), the authors' implementation
 * of Zhang et al.'s Modest BBR "only depending on its pseudo code", which
 * is what their comparison (and ours) runs. Everything not named below is
 * BBR v1 as Linux's tcp_bbr.c, compiled from include/bbr_core.h.
 *
 * ---------------------------------------------------------------- model
 * A window w (packets) caps BBR's cwnd while Modest BBR is searching:
 *
 *   idle --loss--> binary search:  last = cwnd, lo = cwnd * w_max,
 *                                  hi = (cwnd + lo) / 2, w = hi
 *   binary search, per round:      loss: hi = (hi + lo) / 2, w = hi
 *                                  none: lo = (hi + lo) / 2, w = lo
 *                  once hi - lo <= s_min: additive increase
 *   additive increase:             w += s_min per round trip (or, with
 *                                  s_min_per_ack, per ACK) while
 *                                  w <= last; then idle (BBR's cwnd)
 *   additive increase --loss-->    binary search from the current cwnd
 *
 * So a flow that overflows the buffer settles on the largest window below
 * the lossy one, instead of BBR's 2 BDP, and probes back up slowly.
 *
 * ---------------------------------------------------- parameters (CCA_PARAM)
 * Name in the table (scenario key: without the unit suffix) = default.
 *   BBR's, from BBR_CORE_PARAM_DEFS, then:
 *   w_max_ppm = 800000  the search's lower end after a loss, as a fraction
 *       of cwnd ("W_max", Table 1; the paper gives no value). 0.8: Linux
 *       BIC's multiplicative decrease (beta = 819/1024), the algorithm
 *       Modest BBR's search is modelled on ("similar to BIC"), so a loss
 *       costs at most BIC's 20% and the first probe (hi) is 10% below the
 *       lossy window.
 *   s_min = 1           packets: the search ends when hi - lo <= s_min,
 *       and the additive increase adds s_min per round trip ("S_min",
 *       Table 1; no value given). One packet is the smallest step a
 *       window in packets can take, BIC's S_min is of that order (0.01
 *       packets in its paper, in practice one packet per round trip),
 *       and larger steps would make the search stop further from the
 *       lossless window.
 *   s_min_per_ack = 0   1: the additive increase adds s_min on every ACK
 *       (Algorithm 2, lines 21-22 as printed: "for each ACK do cwnd = cwnd
 *       + Smin"), which regains last_cwnd within a fraction of a round
 *       trip; 0: s_min per round trip (the paper's text, see the
 *       deviations). The ablation of that reading.
 *
 * ---------------------------------------------------------------- state
 * 21 bytes after struct bbr's 100: extended (BBR_STATE_EXTENDED).
 *
 * ----------------------------------------------- deviations from the paper
 *  - Algorithm 2, line 17 sets bin_p = 1 on entering the additive
 *    increase, which would keep the binary search running forever (its
 *    lines 9-13 rewrite the window every time) and make line 1 unreachable;
 *    we read bin_p = 0 (the search is over).
 *  - "Retransmission occurs" is evaluated once per packet-timed round
 *    (BBR's round): a round with newly lost packets (rs->losses) is a
 *    "retransmission" round. Per ACK, the search would collapse within a
 *    few ACKs of one loss event; the paper does not say.
 *  - The additive increase is s_min per round trip (s_min / w per ACK),
 *    not s_min per ACK as lines 21-22 read literally: the paper's text
 *    calls the phase linear twice ("binary search phase and linear phase
 *    similar to binary increase congestion (BIC) algorithm", Sec. 5.2;
 *    add_p is "Indicating in linear increase phase", Table 1), and BIC's
 *    linear phase adds its step per round trip; per ACK would double the
 *    window every round trip, i.e. slow start, and end the phase within
 *    a fraction of a round trip. s_min_per_ack = 1 runs the listing as
 *    printed.
 *  - The window is a cap on BBR's cwnd (BBR's rules still move cwnd
 *    below it, pacing is BBR's); the paper does not say how Algorithm 2
 *    and BBR's cwnd combine. W_min of Table 1 is not used by Algorithm 2.
 *  - Built on the Linux 6.x BBR of bbr_core.h, not Linux 4.14's.
 */
#include "ccarena_compat.h"

/* State beyond icsk_ca_priv: per-socket storage in BPF. */
#define BBR_STATE_EXTENDED
#define BBR_EXT_FIELDS							\
	u32 modest_win;		/* packets, the cap while searching */	\
	u32 modest_lo;		/* packets, binary search lower end */	\
	u32 modest_hi;		/* packets, binary search upper end */	\
	u32 modest_last;	/* packets, cwnd when the search began */ \
	u32 modest_acked;	/* packets acked toward the next +s_min */ \
	u8 modest_phase;	/* enum modest_phase */			\
	u8 modest_lost_in_round; /* 1: a loss in the current round */
#include "bbr_core.h"

enum modest_phase {
	MODEST_IDLE = 0,	/* BBR's cwnd, no cap */
	MODEST_SEARCH = 1,	/* binary search (bin_p = 1) */
	MODEST_ADD = 2,		/* additive increase (add_p = 1) */
};

enum modest_bbr_param {
	/* Lower end of the search after a loss, ppm of cwnd (W_max). */
	MODEST_PARAM_W_MAX_PPM = BBR_PARAM_COUNT,
	/* Search resolution and additive step, packets (S_min). */
	MODEST_PARAM_S_MIN,
	/* 1: the additive step on every ACK (the listing as printed). */
	MODEST_PARAM_S_MIN_PER_ACK,
};

#define MODEST_W_MAX_PPM_DEFAULT 800000
#define MODEST_S_MIN_DEFAULT 1
#define MODEST_S_MIN_PER_ACK_DEFAULT 0

static inline u32 modest_s_min(struct sock *sk)
{
	return (u32)clamp_t(u64, CCA_PARAM(sk, MODEST_PARAM_S_MIN,
					   MODEST_S_MIN_DEFAULT), 1, 1U << 20);
}

/* Algorithm 2, lines 1-6: a loss outside the search starts it. */
static inline void modest_start_search(struct sock *sk)
{
	struct bbr *bbr = bbr_ca(sk);
	u32 cwnd = tcp_snd_cwnd(tcp_sk(sk));
	u64 w_max = min_t(u64, CCA_PARAM(sk, MODEST_PARAM_W_MAX_PPM,
					 MODEST_W_MAX_PPM_DEFAULT), BBR_PPM);

	bbr->modest_phase = MODEST_SEARCH;
	bbr->modest_last = cwnd;
	bbr->modest_lo = (u32)div_u64((u64)cwnd * w_max, BBR_PPM);
	bbr->modest_hi = (cwnd + bbr->modest_lo) / 2;
	bbr->modest_win = bbr->modest_hi;
}

/* Algorithm 2, lines 7-18: one step of the search per round. */
static inline void modest_search_step(struct sock *sk, bool lost)
{
	struct bbr *bbr = bbr_ca(sk);
	u32 mid = (bbr->modest_hi + bbr->modest_lo) / 2;

	if (lost) {
		bbr->modest_hi = mid;
		bbr->modest_win = mid;
	} else {
		bbr->modest_lo = mid;
		bbr->modest_win = mid;
	}
	if (bbr->modest_hi - bbr->modest_lo <= modest_s_min(sk)) {
		bbr->modest_phase = MODEST_ADD;	/* bin_p = 0, add_p = 1 */
		bbr->modest_acked = 0;
	}
}

/* Per ACK, after BBR's model update (round_start is current). */
static inline void modest_update(struct sock *sk,
				 const struct rate_sample *rs)
{
	struct bbr *bbr = bbr_ca(sk);

	if (rs->losses > 0)
		bbr->modest_lost_in_round = 1;
	if (bbr->round_start) {
		bool lost = bbr->modest_lost_in_round;

		bbr->modest_lost_in_round = 0;
		if (bbr->modest_phase == MODEST_SEARCH)
			modest_search_step(sk, lost);
		else if (lost)
			modest_start_search(sk);
	}
	/* Lines 20-23: s_min per round trip (or per ACK) while at or
	 * below last_cwnd. */
	if (bbr->modest_phase == MODEST_ADD && rs->acked_sacked > 0) {
		bbr->modest_acked += rs->acked_sacked;
		if (bbr->modest_acked >= bbr->modest_win ||
		    CCA_PARAM(sk, MODEST_PARAM_S_MIN_PER_ACK,
			      MODEST_S_MIN_PER_ACK_DEFAULT)) {
			bbr->modest_acked = 0;
			bbr->modest_win += modest_s_min(sk);
		}
		if (bbr->modest_win > bbr->modest_last)
			bbr->modest_phase = MODEST_IDLE;
	}
	CCA_TRACE_VAR(sk, bbr->modest_phase == MODEST_IDLE ? 0 :
		      (u32)min_t(u64, bbr->modest_win, 4000));
}

static inline u32 modest_cwnd_cap(struct sock *sk, u32 target_cwnd)
{
	struct bbr *bbr = bbr_ca(sk);

	return bbr->modest_phase == MODEST_IDLE ? ~0U : bbr->modest_win;
}

static inline void modest_init(struct sock *sk)
{
	struct bbr *bbr = bbr_ca(sk);

	bbr->modest_phase = MODEST_IDLE;
	bbr->modest_win = 0;
	bbr->modest_lo = 0;
	bbr->modest_hi = 0;
	bbr->modest_last = 0;
	bbr->modest_acked = 0;
	bbr->modest_lost_in_round = 0;
	CCA_TRACE_VAR(sk, 0);
}

/* Where Modest BBR differs from BBR (every other hook: BBR's behaviour). */
static const struct bbr_hooks bbr_hooks = {
	.init = modest_init,
	.update_model = modest_update,
	.cwnd_cap = modest_cwnd_cap,
};

CCA_DESCRIPTION(modest_bbr,
	"Modest BBR: after a loss, searches (binary, then additive) for a cwnd that does not lose");
CCA_PARAMS(modest_bbr, BBR_CORE_PARAM_DEFS
	CCA_PARAM_DEF(MODEST_PARAM_W_MAX_PPM, "w_max_ppm",
		      MODEST_W_MAX_PPM_DEFAULT)
	CCA_PARAM_DEF(MODEST_PARAM_S_MIN, "s_min", MODEST_S_MIN_DEFAULT)
	CCA_PARAM_DEF(MODEST_PARAM_S_MIN_PER_ACK, "s_min_per_ack",
		      MODEST_S_MIN_PER_ACK_DEFAULT));

BBR_CORE_REGISTER(modest_bbr);
