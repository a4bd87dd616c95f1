// SPDX-License-Identifier: GPL-2.0
/*
 * cubic.c - CUBIC congestion control with HyStart, as Linux's
 * net/ipv4/tcp_cubic.c (the Linux default).
 *
 * Spec: S. Ha, I. Rhee, L. Xu, "CUBIC: a new TCP-friendly high-speed TCP
 * variant", ACM SIGOPS OSR 42(5), 2008; RFC 9438. HyStart: S. Ha, I. Rhee,
 * "Taming the elephants: new TCP slow start", Computer Networks, 2011.
 *
 * ---------------------------------------------------------------- model
 * After a loss at window W_max, cwnd follows a cubic in the time t since
 * the reduction (the "epoch"):
 *     W(t) = C * (t - K)^3 + W_max,      K = cbrt(W_max * (1 - beta) / C)
 * with C = 0.4 and beta = 0.7 (717/1024): a fast recovery toward W_max, a
 * plateau around it (the last known safe window), then accelerating probing
 * beyond it. Growth depends on time, not on the RTT, so flows of different
 * RTTs converge to similar windows. Per ACK, cwnd grows by 1 every ca->cnt
 * packets acked, where cnt = cwnd / (W(t + min_rtt) - cwnd), i.e. cwnd
 * reaches W one min_rtt from now.
 *   - Fast convergence: if W_max falls (a new flow took bandwidth), release
 *     more: W_max = cwnd * (1 + beta) / 2.
 *   - TCP friendliness: track the window a Reno flow with the same loss
 *     rate would have (AIMD with alpha = 3(1-beta)/(1+beta)) and never grow
 *     slower than it.
 *   - Growth is capped at 1.5x per RTT (cnt >= 2), and 5% per RTT
 *     (cnt <= 20) before the first loss.
 * HyStart ends slow start before the first loss when either
 *   - ACK train: the ACKs of one round, spaced <= 2 ms apart, span more
 *     than min_rtt/2 (min_rtt when paced) : the pipe is full; or
 *   - delay: the min RTT of the first 8 ACKs of a round exceeds
 *     min_rtt + clamp(min_rtt/8, 4 ms, 16 ms): a queue is building,
 * by setting ssthresh = cwnd.
 *
 * ---------------------------------------------------------------- units
 * cwnd, W_max, origin: packets. Epoch times: jiffies counted in ms
 * (cca_now_ms()). The cubic's time t and K: 2^-10 s (BICTCP_HZ).
 * HyStart stamps and delays: us (low 32 bits of tp->tcp_mstamp).
 *
 * ---------------------------------------------------- deviations from Linux
 *  - jiffies are counted in ms (ccarena_compat.h, "Time"); an epoch_start
 *    of 0 means "no epoch" as in Linux, so a clock reading of 0 is taken
 *    as 1 ms.
 *  - cubic_root() is our own: a seed from the bit length, then Newton
 *    steps, exact to the integer floor (Linux: table + one Newton step,
 *    within ~0.2%).
 *  - After idle (CA_EVENT_TX_START) Linux shifts the epoch by now -
 *    tp->lsndtime (last send). The simulator's socket has no lsndtime, so
 *    the last send is estimated as (last ACK seen - min RTT).
 *  - The friendliness loop `while (ack_cnt > delta)` is one division
 *    (same result; BPF needs bounded loops).
 *  - hystart_ack_delay() takes an unset (0) sk_gso_max_size as 64 KB.
 *  - Module parameters are a CCA_PARAMS table with Linux's defaults;
 *    beta is given in ppm (the table's unit for ratios) and used in
 *    Linux's 1/1024 (rounded to nearest, at most 1023/1024).
 */
#include "ccarena_compat.h"

#define BICTCP_BETA_SCALE 1024	/* scale of beta: 1024 = 1.0 */
#define BICTCP_HZ 10		/* cubic time unit: 2^-10 s */

/* HyStart's two detectors (bitmask of the hystart_detect parameter). */
#define HYSTART_ACK_TRAIN 0x1
#define HYSTART_DELAY 0x2

/* RTT samples per round before the delay detector judges: noise filter. */
#define HYSTART_MIN_SAMPLES 8
/* Delay increase threshold bounds, us: ignore jitter, act on 16 ms. */
#define HYSTART_DELAY_MIN 4000U
#define HYSTART_DELAY_MAX 16000U

enum cubic_param {
	/* Fast convergence: yield faster when W_max drops (new competitor). */
	CUBIC_PARAM_FAST_CONVERGENCE,
	/* Multiplicative decrease 717/1024 ~ 0.7, ppm: gentler than Reno's 0.5. */
	CUBIC_PARAM_BETA_PPM,
	/* Initial ssthresh, packets (0: infinite; used only without HyStart). */
	CUBIC_PARAM_INITIAL_SSTHRESH,
	/* C = bic_scale * 10 / 1024: 41 gives C ~ 0.4 (RFC 9438). */
	CUBIC_PARAM_BIC_SCALE,
	/* Never grow slower than Reno would (RFC 9438 "Reno-friendly"). */
	CUBIC_PARAM_TCP_FRIENDLINESS,
	/* Use HyStart to leave slow start before the first loss. */
	CUBIC_PARAM_HYSTART,
	/* Which HyStart detectors: 1 ACK train, 2 delay, 3 both. */
	CUBIC_PARAM_HYSTART_DETECT,
	/* HyStart acts only above this cwnd, packets: tiny windows are noise. */
	CUBIC_PARAM_HYSTART_LOW_WINDOW,
	/* ACKs closer than this, us, belong to one train. */
	CUBIC_PARAM_HYSTART_ACK_DELTA_US,
	CUBIC_PARAM_COUNT
};

#define CUBIC_FAST_CONVERGENCE_DEFAULT 1
/* Linux's 717/1024 = 0.7001953 in ppm (converts back to 717 exactly). */
#define CUBIC_BETA_PPM_DEFAULT 700195
#define CUBIC_INITIAL_SSTHRESH_DEFAULT 0
#define CUBIC_BIC_SCALE_DEFAULT 41
#define CUBIC_TCP_FRIENDLINESS_DEFAULT 1
#define CUBIC_HYSTART_DEFAULT 1
#define CUBIC_HYSTART_DETECT_DEFAULT (HYSTART_ACK_TRAIN | HYSTART_DELAY)
#define CUBIC_HYSTART_LOW_WINDOW_DEFAULT 16
#define CUBIC_HYSTART_ACK_DELTA_US_DEFAULT 2000

/* CUBIC state, in the socket's private area. */
struct bictcp {
	u32 cnt;		/* packets acked per +1 cwnd */
	u32 last_max_cwnd;	/* packets, W_max: cwnd before last reduction */
	u32 last_cwnd;		/* packets, cwnd at last cnt update */
	u32 last_time;		/* ms, time of last cnt update */
	u32 bic_origin_point;	/* packets, cwnd at the cubic's plateau */
	u32 bic_K;		/* 2^-10 s, epoch start to plateau */
	u32 delay_min;		/* us, min RTT seen (0: none yet) */
	u32 epoch_start;	/* ms, start of this epoch (0: no epoch) */
	u32 ack_cnt;		/* packets acked in epoch, for friendliness */
	u32 tcp_cwnd;		/* packets, what Reno's cwnd would be */
	/* ---- cubic_reset() clears everything above ---- */
	u8 sample_cnt;		/* RTT samples in this HyStart round */
	u8 found;		/* HyStart has ended slow start */
	u16 unused;
	u32 round_start;	/* us, start of this HyStart round */
	u32 end_seq;		/* bytes, snd_nxt when the round started */
	u32 last_ack;		/* us, last ACK of the current ACK train */
	u32 curr_rtt;		/* us, min RTT of this round's first samples */
	u32 last_ack_ms;	/* ms, last ACK seen (estimates lsndtime) */
};

_Static_assert(sizeof(struct bictcp) <= ICSK_CA_PRIV_SIZE,
	       "struct bictcp must fit in icsk_ca_priv");

static inline struct bictcp *cubic_ca(const struct sock *sk)
{
	return (struct bictcp *)inet_csk_ca(sk);
}

/* beta in 1/BICTCP_BETA_SCALE from its ppm parameter, rounded to nearest;
 * below 1.0 so that 1 - beta never vanishes. */
static inline u32 cubic_beta(struct sock *sk)
{
	u64 ppm = min_t(u64, CCA_PARAM(sk, CUBIC_PARAM_BETA_PPM,
				       CUBIC_BETA_PPM_DEFAULT), 1000000ULL);
	u64 beta = div_u64(ppm * BICTCP_BETA_SCALE + 500000, 1000000);

	return (u32)min_t(u64, beta, BICTCP_BETA_SCALE - 1);
}

/* ms clock; 0 is reserved for "no epoch". */
static inline u32 cubic_clock_ms(const struct sock *sk)
{
	return max(cca_now_ms(sk), 1U);
}

/* HyStart's us clock (wraps every 71 minutes; compared by difference). */
static inline u32 cubic_clock_us(const struct sock *sk)
{
	return (u32)cca_now_us(sk);
}

/* Index of the most significant set bit, 1-based; 0 for 0 (fls64). */
static inline u32 cubic_fls64(u64 x)
{
	u32 n = 0;

	if (x == 0)
		return 0;
	if (x >> 32) { n += 32; x >>= 32; }
	if (x >> 16) { n += 16; x >>= 16; }
	if (x >> 8) { n += 8; x >>= 8; }
	if (x >> 4) { n += 4; x >>= 4; }
	if (x >> 2) { n += 2; x >>= 2; }
	if (x >> 1) { n += 1; x >>= 1; }
	return n + (u32)x;
}

/*
 * floor(cbrt(a)). Seed x0 = 2^ceil(b/3) for a of b bits: x0 >= cbrt(a) and
 * x0 < 2 cbrt(a). Newton's x' = (2x + a/x^2) / 3 then decreases
 * monotonically toward cbrt(a) (from above it never undershoots by more
 * than rounding), with relative error 1, 0.42, 0.11, 0.011, 1e-4, 1e-8 after
 * each step: six steps reach the floor for any 64-bit a; a final check
 * corrects the integer rounding.
 */
static inline u32 cubic_root(u64 a)
{
	u64 x;
	int i;

	if (a < 2)
		return (u32)a;
	x = 1ULL << ((cubic_fls64(a) + 2) / 3);
	for (i = 0; i < 6; i++) {
		u64 nx = (2 * x + div64_u64(a, x * x)) / 3;

		if (nx >= x)
			break;	/* converged */
		x = nx;
	}
	if (x * x * x > a)
		x--;
	return (u32)x;
}

/* Forget the epoch and W_max (on init and after an RTO). */
static inline void cubic_reset(struct bictcp *ca)
{
	ca->cnt = 0;
	ca->last_max_cwnd = 0;
	ca->last_cwnd = 0;
	ca->last_time = 0;
	ca->bic_origin_point = 0;
	ca->bic_K = 0;
	ca->delay_min = 0;
	ca->epoch_start = 0;
	ca->ack_cnt = 0;
	ca->tcp_cwnd = 0;
	ca->found = 0;
}

/* Start a HyStart round now: it ends when snd_nxt of now is acked. */
static inline void cubic_hystart_reset(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bictcp *ca = cubic_ca(sk);

	ca->round_start = ca->last_ack = cubic_clock_us(sk);
	ca->end_seq = tp->snd_nxt;
	ca->curr_rtt = ~0U;
	ca->sample_cnt = 0;
}

/* Compute ca->cnt, the packets to ack per +1 cwnd, from the cubic. */
static inline void cubic_update(struct sock *sk, u32 cwnd, u32 acked)
{
	struct bictcp *ca = cubic_ca(sk);
	u32 now = cubic_clock_ms(sk);
	u32 bic_scale = cca_u32_param(sk, CUBIC_PARAM_BIC_SCALE,
				      CUBIC_BIC_SCALE_DEFAULT);
	u32 beta = cubic_beta(sk);
	u32 delta, bic_target, max_cnt;
	u64 offs, t;

	ca->ack_cnt += acked;	/* count the number of ACKed packets */

	/* At most one update per 1/32 s unless cwnd changed. */
	if (ca->last_cwnd == cwnd && (s32)(now - ca->last_time) <= 1000 / 32)
		return;

	/* The cubic is recomputed at most once per ms; a reduction sets
	 * epoch_start = 0 which forces it. */
	if (!(ca->epoch_start && now == ca->last_time)) {
		ca->last_cwnd = cwnd;
		ca->last_time = now;

		if (ca->epoch_start == 0) {
			ca->epoch_start = now;	/* record beginning */
			ca->ack_cnt = acked;	/* start counting */
			ca->tcp_cwnd = cwnd;	/* sync with cubic */

			if (ca->last_max_cwnd <= cwnd) {
				ca->bic_K = 0;
				ca->bic_origin_point = cwnd;
			} else {
				/* K = cbrt((W_max - cwnd) / C) in 2^-10 s:
				 * cube_factor = 2^(10 + 3*10) / (bic_scale*10) */
				u64 cube_factor = div64_u64(
					1ULL << (10 + 3 * BICTCP_HZ),
					max(bic_scale * 10, 1U));

				ca->bic_K = cubic_root(cube_factor *
					(ca->last_max_cwnd - cwnd));
				ca->bic_origin_point = ca->last_max_cwnd;
			}
		}

		/* t = time since epoch start + min RTT (cwnd one RTT ahead),
		 * in 2^-10 s. usecs_to_jiffies() rounds up. */
		t = (u64)(s32)(now - ca->epoch_start);
		t += cca_ms_to_jiffies_ms(sk, (ca->delay_min + USEC_PER_MSEC - 1) /
						  USEC_PER_MSEC);
		t <<= BICTCP_HZ;
		t = div_u64(t, MSEC_PER_SEC);

		offs = t < ca->bic_K ? ca->bic_K - t : t - ca->bic_K;

		/* C * (t - K)^3 in packets: C = bic_scale*10 / 2^10 per s^3
		 * with t in 2^-10 s, hence the >> (10 + 3*10). Safe from
		 * overflow for cwnd < 1M packets. */
		delta = (u32)(((u64)bic_scale * 10 * offs * offs * offs) >>
			      (10 + 3 * BICTCP_HZ));
		if (t < ca->bic_K)	/* below origin */
			bic_target = ca->bic_origin_point - delta;
		else			/* above origin */
			bic_target = ca->bic_origin_point + delta;

		/* Reach bic_target one RTT from now. */
		if (bic_target > cwnd)
			ca->cnt = cwnd / (bic_target - cwnd);
		else
			ca->cnt = 100 * cwnd;	/* very small increment */

		/* Before the first loss the cubic is too timid: 5%/RTT. */
		if (ca->last_max_cwnd == 0 && ca->cnt > 20)
			ca->cnt = 20;
	}

	/* TCP friendliness: Reno's AIMD with alpha = 3(1-beta)/(1+beta) grows
	 * by 1 per cwnd / alpha acks; beta_scale = 8 * 3(1+beta)/(1-beta)/3. */
	if (cca_u32_param(sk, CUBIC_PARAM_TCP_FRIENDLINESS,
			  CUBIC_TCP_FRIENDLINESS_DEFAULT)) {
		u32 beta_scale = 8 * (BICTCP_BETA_SCALE + beta) / 3 /
				 max(BICTCP_BETA_SCALE - min(beta, 1023U), 1U);

		delta = (cwnd * beta_scale) >> 3;
		if (delta == 0)
			delta = 1;
		if (ca->ack_cnt > delta) {	/* update tcp cwnd */
			u32 n = (ca->ack_cnt - 1) / delta;

			ca->ack_cnt -= n * delta;
			ca->tcp_cwnd += n;
		}

		if (ca->tcp_cwnd > cwnd) {	/* if bic is slower than tcp */
			delta = ca->tcp_cwnd - cwnd;
			max_cnt = cwnd / delta;
			if (ca->cnt > max_cnt)
				ca->cnt = max_cnt;
		}
	}

	/* At most 1 packet per 2 acked: cwnd grows at most 1.5x per RTT. */
	ca->cnt = max(ca->cnt, 2U);
}

/* us of ACK compression allowance for the ACK-train detector: two GSO
 * bursts at the pacing rate (doubled in slow start), capped at 1 ms. */
static inline u32 cubic_hystart_ack_delay(const struct sock *sk)
{
	u64 rate = sk->sk_pacing_rate;
	u32 gso = sk->sk_gso_max_size;

	if (!rate)
		return 0;
	if (gso == 0)	/* a sender that never set it: the classic 64 KB */
		gso = GSO_LEGACY_MAX_SIZE;
	return (u32)min_t(u64, USEC_PER_MSEC,
			  div64_u64((u64)gso * 4 * USEC_PER_SEC, rate));
}

/* One RTT sample (us) in slow start: run the HyStart detectors. */
static inline void cubic_hystart_update(struct sock *sk, u32 delay)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bictcp *ca = cubic_ca(sk);
	u32 detect = cca_u32_param(sk, CUBIC_PARAM_HYSTART_DETECT,
				   CUBIC_HYSTART_DETECT_DEFAULT);
	u32 threshold;

	if (after(tp->snd_una, ca->end_seq))
		cubic_hystart_reset(sk);

	/* HyStart triggers only when cwnd is larger than some threshold. */
	if (tcp_snd_cwnd(tp) < cca_u32_param(sk, CUBIC_PARAM_HYSTART_LOW_WINDOW,
					     CUBIC_HYSTART_LOW_WINDOW_DEFAULT))
		return;

	if (detect & HYSTART_ACK_TRAIN) {
		u32 now = cubic_clock_us(sk);

		/* ACK train: consecutive ACKs closely spaced. */
		if ((s32)(now - ca->last_ack) <=
		    (s32)cca_u32_param(sk, CUBIC_PARAM_HYSTART_ACK_DELTA_US,
				       CUBIC_HYSTART_ACK_DELTA_US_DEFAULT)) {
			ca->last_ack = now;

			threshold = ca->delay_min + cubic_hystart_ack_delay(sk);

			/* Unpaced, the train is half the RTT when the pipe is
			 * full; pacing may spread it up to the whole RTT. */
			if (sk->sk_pacing_status == SK_PACING_NONE)
				threshold >>= 1;

			if ((s32)(now - ca->round_start) > (s32)threshold) {
				ca->found = 1;
				tp->snd_ssthresh = tcp_snd_cwnd(tp);
			}
		}
	}

	if (detect & HYSTART_DELAY) {
		/* Min delay over the first samples of the round. */
		if (ca->curr_rtt > delay)
			ca->curr_rtt = delay;
		if (ca->sample_cnt < HYSTART_MIN_SAMPLES) {
			ca->sample_cnt++;
		} else if (ca->curr_rtt > ca->delay_min +
			   clamp(ca->delay_min >> 3, HYSTART_DELAY_MIN,
				 HYSTART_DELAY_MAX)) {
			ca->found = 1;
			tp->snd_ssthresh = tcp_snd_cwnd(tp);
		}
	}
}

CCA_CB(void, cubic_init, struct sock *sk)
{
	struct bictcp *ca = cubic_ca(sk);
	u32 hystart = cca_u32_param(sk, CUBIC_PARAM_HYSTART,
				    CUBIC_HYSTART_DEFAULT);
	u32 initial_ssthresh = cca_u32_param(sk, CUBIC_PARAM_INITIAL_SSTHRESH,
					     CUBIC_INITIAL_SSTHRESH_DEFAULT);

	cubic_reset(ca);
	ca->last_ack_ms = 0;
	if (hystart)
		cubic_hystart_reset(sk);
	if (!hystart && initial_ssthresh)
		tcp_sk(sk)->snd_ssthresh = initial_ssthresh;
}

CCA_CB(void, cubic_cwnd_event, struct sock *sk, int event)
{
	struct bictcp *ca = cubic_ca(sk);

	if (event == CA_EVENT_TX_START) {
		u32 now = cubic_clock_ms(sk);
		/* Linux: now - tp->lsndtime; our estimate of the last send is
		 * one min RTT before the last ACK. */
		u32 lsnd = ca->last_ack_ms - ca->delay_min / USEC_PER_MSEC;
		s32 delta = (s32)(now - lsnd);

		/* We were application limited (idle) for a while: shift the
		 * epoch so cwnd keeps to the cubic curve. */
		if (ca->last_ack_ms && ca->epoch_start && delta > 0) {
			ca->epoch_start += delta;
			if (after(ca->epoch_start, now))
				ca->epoch_start = now;
		}
	}
}

CCA_CB(void, cubic_cong_avoid, struct sock *sk, u32 ack, u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bictcp *ca = cubic_ca(sk);

	if (!tcp_is_cwnd_limited(sk))
		return;

	if (tcp_in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	cubic_update(sk, tcp_snd_cwnd(tp), acked);
	tcp_cong_avoid_ai(tp, ca->cnt, acked);
}

CCA_CB(u32, cubic_recalc_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct bictcp *ca = cubic_ca(sk);
	u32 beta = cubic_beta(sk);
	u32 cwnd = tcp_snd_cwnd(tp);

	ca->epoch_start = 0;	/* end of epoch */

	/* W_max, with fast convergence: release more if W_max fell. */
	if (cwnd < ca->last_max_cwnd &&
	    cca_u32_param(sk, CUBIC_PARAM_FAST_CONVERGENCE,
			  CUBIC_FAST_CONVERGENCE_DEFAULT))
		ca->last_max_cwnd = (cwnd * (BICTCP_BETA_SCALE + beta)) /
				    (2 * BICTCP_BETA_SCALE);
	else
		ca->last_max_cwnd = cwnd;

	return max((cwnd * beta) / BICTCP_BETA_SCALE, 2U);
}

CCA_CB(void, cubic_state, struct sock *sk, u8 new_state)
{
	if (new_state == TCP_CA_Loss) {
		cubic_reset(cubic_ca(sk));
		cubic_hystart_reset(sk);
	}
}

CCA_CB(void, cubic_acked, struct sock *sk, const struct ack_sample *sample)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct bictcp *ca = cubic_ca(sk);
	u32 now = cubic_clock_ms(sk);
	u32 delay;

	ca->last_ack_ms = now;

	/* Some calls are for duplicates without timestamps. */
	if (sample->rtt_us < 0)
		return;

	/* Discard delay samples right after fast recovery (1 s). */
	if (ca->epoch_start && (s32)(now - ca->epoch_start) < 1000)
		return;

	delay = (u32)sample->rtt_us;
	if (delay == 0)
		delay = 1;

	/* First time call or link delay decreases. */
	if (ca->delay_min == 0 || ca->delay_min > delay)
		ca->delay_min = delay;

	if (!ca->found && tcp_in_slow_start(tp) &&
	    cca_u32_param(sk, CUBIC_PARAM_HYSTART, CUBIC_HYSTART_DEFAULT))
		cubic_hystart_update(sk, delay);
}

CCA_CB(u32, cubic_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd_of(sk);
}

CCA_DESCRIPTION(cubic,
	"CUBIC with HyStart as Linux's tcp_cubic.c (the Linux default): loss-based, cubic growth");
CCA_PARAMS(cubic,
	CCA_PARAM_DEF(CUBIC_PARAM_FAST_CONVERGENCE, "fast_convergence",
		      CUBIC_FAST_CONVERGENCE_DEFAULT)
	CCA_PARAM_DEF(CUBIC_PARAM_BETA_PPM, "beta_ppm", CUBIC_BETA_PPM_DEFAULT)
	CCA_PARAM_DEF(CUBIC_PARAM_INITIAL_SSTHRESH, "initial_ssthresh",
		      CUBIC_INITIAL_SSTHRESH_DEFAULT)
	CCA_PARAM_DEF(CUBIC_PARAM_BIC_SCALE, "bic_scale",
		      CUBIC_BIC_SCALE_DEFAULT)
	CCA_PARAM_DEF(CUBIC_PARAM_TCP_FRIENDLINESS, "tcp_friendliness",
		      CUBIC_TCP_FRIENDLINESS_DEFAULT)
	CCA_PARAM_DEF(CUBIC_PARAM_HYSTART, "hystart", CUBIC_HYSTART_DEFAULT)
	CCA_PARAM_DEF(CUBIC_PARAM_HYSTART_DETECT, "hystart_detect",
		      CUBIC_HYSTART_DETECT_DEFAULT)
	CCA_PARAM_DEF(CUBIC_PARAM_HYSTART_LOW_WINDOW, "hystart_low_window",
		      CUBIC_HYSTART_LOW_WINDOW_DEFAULT)
	CCA_PARAM_DEF(CUBIC_PARAM_HYSTART_ACK_DELTA_US, "hystart_ack_delta_us",
		      CUBIC_HYSTART_ACK_DELTA_US_DEFAULT));

CCA_REGISTER(cubic,
	.init = CCA_FN(cubic_init),
	.ssthresh = CCA_FN(cubic_recalc_ssthresh),
	.cong_avoid = CCA_FN(cubic_cong_avoid),
	.set_state = CCA_FN(cubic_state),
	.undo_cwnd = CCA_FN(cubic_undo_cwnd),
	.cwnd_event = CCA_FN(cubic_cwnd_event),
	.pkts_acked = CCA_FN(cubic_acked));
