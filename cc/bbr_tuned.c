// SPDX-License-Identifier: GPL-2.0
/*
 * bbr_tuned.c - BBR v1 with the RTT-fairness tuning of the "BBRv2 RTT
 * tuning" blog (../shared/papers/bbrv2-rtt-tuning-blog-2020.txt;
 * scenario name bbr_tuned, or bbr-tuned):
 *
 *   - pace 7% below the bandwidth estimate instead of 1%: the blog's
 *     5-10% ("to reduce queues at the bottleneck, and hence the
 *     overestimation of the round delivery time by short-RTT flows");
 *     7% is the middle of its range;
 *   - a send quantum (TSO burst, hence 3 bursts of cwnd budget) linear in
 *     min RTT from 64 KB at 10 ms to 2 segments at 400 ms, the blog's end
 *     points ("allows cwnd to be set in inverse proportion to the RTT").
 *
 * Everything else is plain Linux BBR (include/bbr_core.h, whose header is
 * the design document); the two are parameters of every BBR flow
 * (pacing_margin, send_quantum and the quantum_* end points), so a plain
 * bbr flow can be tuned the same way, and this file changes only their
 * defaults. The blog tuned BBRv2: bbr2_tuned.c.
 */
#define BBR_PACING_MARGIN_PPM_DEFAULT CCA_TUNED_PACING_MARGIN_PPM /* 7% */
#define BBR_SEND_QUANTUM_DEFAULT CCA_QUANTUM_LINEAR
/* The linear quantum works through min_tso_segs: register it under BPF
 * too (ccarena_compat.h: a BPF min_tso_segs costs Linux 6.18 periodic
 * bursts). */
#define CCA_BPF_MIN_TSO_SEGS 1
#include "bbr_core.h"

CCA_DESCRIPTION(bbr_tuned,
	"BBR v1 with the RTT-tuning blog's 7% pacing margin and a send quantum linear in min RTT");
CCA_PARAMS(bbr_tuned, BBR_CORE_PARAM_DEFS);

BBR_CORE_REGISTER(bbr_tuned);
