// SPDX-License-Identifier: GPL-2.0
/*
 * reno.c - TCP NewReno congestion control, as Linux's tcp_reno_* in
 * net/ipv4/tcp_cong.c (RFC 5681 / RFC 6582).
 *
 * Model: the sender probes with an additive increase and backs off by half
 * on loss ("AIMD"):
 *   slow start          cwnd += acked              while cwnd < ssthresh
 *   congestion avoid.   cwnd += 1 per cwnd acked   (one packet per RTT)
 *   on loss             ssthresh = max(cwnd / 2, 2)
 *   undo (spurious)     cwnd = max(cwnd, prior_cwnd)
 * Growth happens only while the flow is cwnd-limited (tcp_is_cwnd_limited),
 * so an application-limited flow does not inflate a window it never uses.
 * Fast recovery itself (PRR, retransmission) is the sender's job, as in
 * Linux: this file only answers ssthresh/cong_avoid/undo_cwnd.
 *
 * State: none (Reno keeps everything in tcp_sock: snd_cwnd, snd_ssthresh,
 * snd_cwnd_cnt).
 *
 * Parameters: none.
 *
 * Deviations from Linux: none in behaviour. Linux's slow start honours
 * tcp_sk(sk)->snd_cwnd_clamp as here; the sender enforces ABC elsewhere.
 */
#include "ccarena_compat.h"

CCA_CB(u32, reno_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh_of(sk);
}

CCA_CB(void, reno_cong_avoid, struct sock *sk, u32 ack, u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);

	(void)ack;
	if (!tcp_is_cwnd_limited(sk))
		return;

	/* In "safe" area, increase. */
	if (tcp_in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	/* In dangerous area, increase slowly: +1 packet per window. */
	tcp_cong_avoid_ai(tp, tcp_snd_cwnd(tp), acked);
}

CCA_CB(u32, reno_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd_of(sk);
}

CCA_DESCRIPTION(reno,
	"TCP NewReno as Linux's tcp_reno_*: AIMD, halves cwnd on loss");
CCA_PARAMS(reno);

CCA_REGISTER(reno,
	.ssthresh = CCA_FN(reno_ssthresh),
	.cong_avoid = CCA_FN(reno_cong_avoid),
	.undo_cwnd = CCA_FN(reno_undo_cwnd));
