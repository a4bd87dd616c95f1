/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bbr2_params.h - BBRv2 (cc/bbr2.c, whose header comment lists how v2
 * differs from v3 and from Google's v2alpha) as the v3 core built as v2:
 * v2alpha's constants where they differ from v3's, as the defaults of the
 * same parameter table (include/bbr3_params.h), and BBR3_CORE_VERSION 2.
 * Included by cc/bbr2.c and cc/bbr2_tuned.c, which may define the pacing
 * margin and send quantum defaults first.
 */
#ifndef CCARENA_BBR2_PARAMS_H
#define CCARENA_BBR2_PARAMS_H

/* [v2 1] 2/ln 2, rounded up to 739/256 (v2's bbr_high_gain): the
 * smallest gain that doubles the rate each round while sending what an
 * unpaced slow start would; the same for STARTUP's cwnd. */
#define BBR3_STARTUP_PACING_GAIN_PPM_DEFAULT 2886719	/* 739/256 */
#define BBR3_STARTUP_CWND_GAIN_PPM_DEFAULT 2886719	/* 739/256 */
/* [v2 1] DOWN drains the probe's queue at v1's 3/4. */
#define BBR3_PROBE_DOWN_GAIN_PPM_DEFAULT 750000		/* 192/256 */
/* [v2 1] No extra cwnd gain in UP: cwnd_gain 2 in every phase. */
#define BBR3_PROBE_UP_CWND_GAIN_PPM_DEFAULT 0
/* [v2 2] STARTUP's loss exit: 8 loss events in a Recovery round. */
#define BBR3_FULL_LOSS_CNT_DEFAULT 8
#define BBR3_CORE_VERSION 2
#include "bbr3_core.h"

#endif /* CCARENA_BBR2_PARAMS_H */
