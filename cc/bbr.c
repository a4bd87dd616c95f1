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

CCA_DESCRIPTION(bbr,
	"BBR v1 as Linux's tcp_bbr.c: paces at the estimated bottleneck rate, cwnd 2 BDP");
CCA_PARAMS(bbr, BBR_CORE_PARAM_DEFS);

BBR_CORE_REGISTER(bbr);
