// SPDX-License-Identifier: GPL-2.0
/*
 * bbr3_tuned.c - BBRv3 with the RTT-fairness tuning of the "BBRv2 RTT
 * tuning" blog (../shared/papers/bbrv2-rtt-tuning-blog-2020.txt;
 * scenario name bbr3_tuned, or bbr3-tuned): a 7% pacing margin (the
 * middle of the blog's 5-10%, instead of v3's 1%) and a send quantum
 * linear in min RTT, 64 KB at 10 ms to 2 segments at 400 ms (the blog's
 * end points), in place of v3's halving per 512 us of min RTT.
 *
 * Everything else is bbr3 (include/bbr3_core.h, the design document); the
 * two are parameters of every bbr3 flow (pacing_margin, send_quantum and
 * the quantum_* end points), and this file changes only their defaults.
 */
#define BBR3_PACING_MARGIN_PPM_DEFAULT CCA_TUNED_PACING_MARGIN_PPM /* 7% */
#define BBR3_SEND_QUANTUM_DEFAULT CCA_QUANTUM_LINEAR
/* The linear quantum works through min_tso_segs: register it under BPF
 * too (ccarena_compat.h: a BPF min_tso_segs costs Linux 6.18 periodic
 * bursts). */
#define CCA_BPF_MIN_TSO_SEGS 1
#include "bbr3_core.h"

CCA_DESCRIPTION(bbr3_tuned,
	"BBRv3 with the RTT-tuning blog's 7% pacing margin and a send quantum linear in min RTT");
CCA_PARAMS(bbr3_tuned, BBR3_CORE_PARAM_DEFS);

BBR3_CORE_REGISTER(bbr3_tuned);
