// SPDX-License-Identifier: GPL-2.0
/*
 * bbr3.c - BBRv3 congestion control, as Google's v3 release of Linux's
 * net/ipv4/tcp_bbr.c (github.com/google/bbr, branch v3, BBR_VERSION 3).
 *
 * The design document (model, state machine, units, state layout and the
 * deviations from Google's v3, among them what the BPF build approximates)
 * is the header comment of include/bbr3_core.h, which holds the algorithm
 * so that variants (e.g. a tuned BBRv3) compile the same code. This file
 * binds it to tcp_congestion_ops with every parameter at v3's value.
 *
 * tcp_congestion_ops members: see "state" in include/bbr3_core.h.
 * Parameters (CCA_PARAM index: name = default): BBR3_CORE_PARAM_DEFS in
 * include/bbr3_core.h; every default is v3's constant.
 */
#include "bbr3_core.h"

CCA_DESCRIPTION(bbr3,
	"BBRv3 as Google's v3 of tcp_bbr.c: BBR with loss and ECN bounds on inflight");
CCA_PARAMS(bbr3, BBR3_CORE_PARAM_DEFS);

BBR3_CORE_REGISTER(bbr3);
