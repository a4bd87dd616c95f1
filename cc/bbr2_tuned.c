// SPDX-License-Identifier: GPL-2.0
/*
 * bbr2_tuned.c - BBRv2 with the RTT-fairness tuning of the "BBRv2 RTT
 * tuning" blog (../shared/papers/bbrv2-rtt-tuning-blog-2020.txt;
 * scenario name bbr2_tuned, or bbr2-tuned), the algorithm the blog
 * describes: v2's bbr_pacing_margin_percent at 7% (the middle of the
 * blog's 5-10%, instead of v2's 1%) and bbr_tso_segs_generic's burst made
 * linear in min RTT, 64 KB at 10 ms to 2 segments at 400 ms (the blog's
 * end points), in place of v2's halving per 512 us of min RTT.
 *
 * Everything else is bbr2 (cc/bbr2.c: how v2 differs from v3 and from
 * Google's v2alpha; include/bbr3_core.h: the design document); the two
 * are parameters of every bbr2 flow (pacing_margin, send_quantum and the
 * quantum_* end points), and this file changes only their defaults, as
 * cc/bbr3_tuned.c does for v3.
 */
#define BBR3_PACING_MARGIN_PPM_DEFAULT CCA_TUNED_PACING_MARGIN_PPM /* 7% */
#define BBR3_SEND_QUANTUM_DEFAULT CCA_QUANTUM_LINEAR
/* The linear quantum works through min_tso_segs: register it under BPF
 * too (ccarena_compat.h: a BPF min_tso_segs costs Linux 6.18 periodic
 * bursts). */
#define CCA_BPF_MIN_TSO_SEGS 1
#include "bbr2_params.h"

CCA_DESCRIPTION(bbr2_tuned,
	"BBRv2 with the RTT-tuning blog's 7% pacing margin and a send quantum linear in min RTT");
CCA_PARAMS(bbr2_tuned, BBR3_CORE_PARAM_DEFS);

BBR3_CORE_REGISTER(bbr2_tuned);
