// SPDX-License-Identifier: GPL-2.0
/*
 * bbr.c - BBR v1 congestion control, as Linux's net/ipv4/tcp_bbr.c.
 *
 * The design document (model, state machine, units, deviations from Linux)
 * is the header comment of include/bbr_core.h, which holds the algorithm so
 * that derivatives (BBQ, BBR-CWS, ...) compile the same code with their own
 * hooks. This file only binds the core to tcp_congestion_ops with every
 * hook at its default, i.e. plain Linux BBR.
 *
 * tcp_congestion_ops members, as in Linux:
 *   init           bbr_core_init: Startup, pacing from srtt (or 1 ms) and cwnd
 *   cong_control   bbr_core_main: model update, pacing rate and cwnd per ACK
 *   ssthresh       save cwnd for recovery; ssthresh itself is not used
 *   undo_cwnd      reset full-pipe and policer detection, keep cwnd
 *   set_state      on CA_Loss (RTO): restart full-pipe detection, lt sample
 *   cwnd_event     on TX_START after idle: pace at bw, maybe end ProbeRTT
 *   min_tso_segs   1 below 1.2 Mbit/s, else 2
 *   sndbuf_expand  3
 *
 * Parameters (CCA_PARAM index: name = default): see BBR_CORE_PARAM_DEFS in
 * include/bbr_core.h; every default is Linux's constant.
 */
#include "bbr_core.h"

CCA_CB(void, bbr_init, struct sock *sk)
{
	bbr_core_init(sk);
}

CCA_CB(void, bbr_main, struct sock *sk, u32 ack, int flag,
       const struct rate_sample *rs)
{
	bbr_core_main(sk, ack, flag, rs);
}

CCA_CB(u32, bbr_ssthresh, struct sock *sk)
{
	return bbr_core_ssthresh(sk);
}

CCA_CB(u32, bbr_undo_cwnd, struct sock *sk)
{
	return bbr_core_undo_cwnd(sk);
}

CCA_CB(void, bbr_set_state, struct sock *sk, u8 new_state)
{
	bbr_core_set_state(sk, new_state);
}

CCA_CB(void, bbr_cwnd_event, struct sock *sk, int event)
{
	bbr_core_cwnd_event(sk, event);
}

CCA_CB(u32, bbr_min_tso_segs, struct sock *sk)
{
	return bbr_min_tso_segs_of(sk);
}

CCA_CB(u32, bbr_sndbuf_expand, struct sock *sk)
{
	return bbr_core_sndbuf_expand(sk);
}

CCA_PARAMS(bbr, BBR_CORE_PARAM_DEFS);

CCA_REGISTER(bbr,
	.flags = TCP_CONG_NON_RESTRICTED,
	.init = CCA_FN(bbr_init),
	.cong_control = CCA_FN(bbr_main),
	.ssthresh = CCA_FN(bbr_ssthresh),
	.undo_cwnd = CCA_FN(bbr_undo_cwnd),
	.set_state = CCA_FN(bbr_set_state),
	.cwnd_event = CCA_FN(bbr_cwnd_event),
	.min_tso_segs = CCA_FN(bbr_min_tso_segs),
	.sndbuf_expand = CCA_FN(bbr_sndbuf_expand));
