/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bbr_core.h - BBR v1 (Bottleneck Bandwidth and Round-trip propagation
 * time), the model and control laws of Linux's net/ipv4/tcp_bbr.c, shared
 * by cc/bbr.c and by every BBR derivative (BBQ, BBR-CWS, ...).
 *
 * Spec: N. Cardwell, Y. Cheng, C. S. Gunn, S. H. Yeganeh, V. Jacobson,
 * "BBR: Congestion-Based Congestion Control", ACM Queue 14(5), 2016
 * (../shared/papers/bbr-cardwell-2016.txt), and Linux's tcp_bbr.c, whose
 * behaviour this file reproduces decision for decision.
 *
 * ---------------------------------------------------------------- model
 * A flow's path is summarised by two numbers:
 *   BtlBw    the bottleneck bandwidth: a windowed MAX of delivery-rate
 *            samples over the last 10 round trips (bbr->bw, packets/us
 *            << BW_SCALE). Max because queues and ACK compression only
 *            make samples too low, never too high.
 *   RTprop   the round-trip propagation time: a windowed MIN of RTT
 *            samples over 10 s (bbr->min_rtt_us). Min because queueing
 *            only makes RTTs too long.
 *   BDP      = BtlBw * RTprop, the data the pipe holds without a queue.
 * and is controlled by
 *   pacing_rate = pacing_gain * BtlBw * (1 - 1% margin)
 *   cwnd        = cwnd_gain * BDP + ack-aggregation allowance
 *                 + quantisation budget (3 TSO bursts, rounded to even)
 * The gains are set by a state machine:
 *
 *            +---------> STARTUP  ----+   pacing = cwnd gain = 2/ln2 (2.885)
 *            |              |         |   doubles delivery each round;
 *            |              | BtlBw grew < 25% for 3 rounds
 *            |              V         |
 *            |            DRAIN   ----+   pacing gain = ln2/2 until
 *            |              |         |   inflight <= BDP
 *            |              V         |
 *            +--------> PROBE_BW -----+   8-phase gain cycle
 *            |            ^   |           5/4, 3/4, 1, 1, 1, 1, 1, 1 (one
 *            |            |   |           RTprop each; random start phase)
 *            |            |   | RTprop not refreshed for 10 s
 *            |            |   V
 *            +-------- PROBE_RTT          cwnd = 4 for max(200 ms, 1 round)
 *   (PROBE_RTT exits to STARTUP if the pipe was never filled, else to
 *    PROBE_BW; any state enters PROBE_RTT when the min_rtt filter expires.)
 *
 * Also as in Linux: loss recovery uses packet conservation for the first
 * round (cwnd = inflight + acked) and restores the pre-recovery cwnd after;
 * app-limited samples can raise but not lower BtlBw; after an idle period
 * the flow restarts pacing at BtlBw; a token-bucket policer is detected by
 * "long-term" sampling (4+ rounds with >= 20% loss at a steady rate) and
 * then BtlBw is pinned to the policed rate for 48 rounds; ACK aggregation
 * (delayed/stretched ACKs, wifi) is measured as extra_acked, the excess of
 * acked data over BtlBw * epoch, and added to cwnd (max over 10 rounds,
 * capped at 100 ms of BtlBw) once the pipe is full.
 *
 * ---------------------------------------------------------------- units
 * bw: packets per us << BW_SCALE (24) in u32 (a 1500 B MTU at 1 Tbit/s is
 * 83 pkts/us, < 2^8, so u32 suffices). Gains: << BBR_SCALE (8), 256 = 1.0.
 * Times: us from tp->tcp_mstamp / tp->delivered_mstamp; "jiffies" are ms
 * (cca_now_ms()). Windows and counts: packets.
 *
 * ---------------------------------------------------- deviations from Linux
 *  - Time: Linux's jiffies stamps (min_rtt_stamp, probe_rtt_done_stamp)
 *    are jiffies counted in ms (cca_now_ms(): they move a tick at a time,
 *    and waits are rounded up to ticks; ccarena_compat.h, "Time");
 *    lt_last_stamp is ms of delivered_mstamp, as in Linux.
 *  - bbr_tso_segs_goal(): the GSO cap is min(sk_gso_max_size, 64 KB)
 *    instead of the constant 64 KB, so a simulated sender without TSO can
 *    set a smaller sk_gso_max_size; with 64 KB (the default) it is Linux.
 *  - get_info (tcp_info export) is not implemented: it has no user here
 *    (the live engine reads CCA_TRACE's per-socket record instead).
 *  - BPF build: min_tso_segs is not registered unless the algorithm
 *    defines CCA_BPF_MIN_TSO_SEGS 1 (bbr_tuned, whose send quantum is the
 *    point; a parameter variant changing send_quantum gets it too), so the
 *    kernel floors TSO bursts at sysctl_tcp_min_tso_segs (2) where v1 says
 *    1 below 1.2 Mbit/s of pacing. A BPF min_tso_segs makes this kernel
 *    burst (ccarena_compat.h, CCA_BPF_MIN_TSO_SEGS).
 *  - The send quantum (bbr_tso_segs_goal) has two more rules than
 *    Linux's, chosen by the parameter send_quantum (include/
 *    send_quantum.h): Google's v2/v3 halving and the RTT-tuning blog's
 *    linear one; the default is Linux's.
 *  - The tunables are a parameter table (CCA_PARAM) instead of module
 *    constants, in the table's units (times in us, ratios in ppm) and
 *    converted to Linux's (ms, << 8) with rounding; every default converts
 *    to Linux's constant exactly. Gains are capped at 1023/256 (10-bit
 *    fields, as in Linux's struct bbr).
 *
 * ---------------------------------------------------- reuse by derivatives
 * The extension contract. Why a header of static inline functions rather
 * than a library: a BPF program cannot call through function pointers and
 * every CC must be one self-contained object, so the shared code is
 * compiled into each derivative and the points where a derivative differs
 * are resolved at compile time. A derivative (cc/bbq.c is the worked
 * example; tests/cc/bbr_big.c sets every hook) declares three things:
 *
 *     #define BBR_EXT_FIELDS u32 foo_x:31, foo_y:1;    // 1. its state
 *     #include "bbr_core.h"
 *     static inline u32 foo_phase_len_us(struct sock *sk) { ... }
 *     static const struct bbr_hooks bbr_hooks = {      // 2. its hooks
 *             .phase_len_us = foo_phase_len_us,
 *     };
 *     enum { FOO_PARAM_X = BBR_PARAM_COUNT, ... };
 *     CCA_DESCRIPTION(foo, "BBR that ...");           // `ccarena ccs`
 *     CCA_PARAMS(foo, BBR_CORE_PARAM_DEFS              // 3. its parameters
 *                CCA_PARAM_DEF(FOO_PARAM_X, "x_us", 3000));
 *     BBR_CORE_REGISTER(foo);     // callbacks + tcp_congestion_ops
 *
 * 1. State. BBR_EXT_FIELDS are appended to struct bbr, which bbr_ca(sk)
 *    (= cca_state(sk), ccarena_compat.h) returns in every build. BBR's own
 *    fields use 100 of icsk_ca_priv's 104 bytes (plus the spare_* bits);
 *    a derivative that needs more defines BBR_STATE_EXTENDED before the
 *    #include, and struct bbr then lives in the simulator's extension
 *    area natively and in BPF per-socket storage (bpf_sk_storage, created
 *    by init, deleted by release), up to CCA_STATE_MAX bytes. A state that
 *    does not fit without BBR_STATE_EXTENDED, or fits with it, is a
 *    static assertion failure.
 * 2. Hooks: the members of struct bbr_hooks below, by designated
 *    initializer, so a misspelt member is a compile error (and the old
 *    BBR_HOOK_* macros are an #error). Unset members (NULL) are Linux BBR.
 *    The struct is a compile-time constant: each call is direct and
 *    inlined, in BPF too.
 * 3. Parameters: indexes from BBR_PARAM_COUNT on, the table starting with
 *    BBR_CORE_PARAM_DEFS; CCA_PARAMS refuses more than CCA_MAX_PARAMS
 *    (ccarena_compat.h) rows in all.
 *
 * Hooks (struct bbr_hooks; default = Linux BBR; units as in "units" above):
 *   init(sk)                  after bbr's own init: the derivative's fields.
 *   update_model(sk, rs)      per ACK, after BBR's model update (bw, cycle
 *                             phase, full pipe, min_rtt, ProbeRTT) and
 *                             before the gains are set from the mode.
 *   phase_len_us(sk)          us a ProbeBW gain phase must last before it
 *                             may end (default: min_rtt_us).
 *   probe_until_inflight(sk)  true (default): a probing (gain > 1) phase,
 *                             once its length is up, goes on until inflight
 *                             reaches gain * BDP or a loss; false: the
 *                             length is a hard cap.
 *   drain_until_bdp(sk)       false (default): a draining (gain < 1) phase
 *                             ends at inflight <= BDP + the quantisation
 *                             budget or after its length; true: only at
 *                             inflight <= exactly bw * min_rtt.
 *   cwnd_bdp(sk, bw, gain)    packets: the BDP the cwnd target is built on
 *                             (default bbr_bdp(): ceil(bw * min_rtt * gain),
 *                             bw pkts/us << 24, gain << 8); the aggregation
 *                             allowance and quantisation budget are added
 *                             to it. Other uses of the BDP (Drain's exit,
 *                             phase ends) are not affected.
 *   target_cwnd(sk, cwnd)     packets: adjust the finished target (after
 *                             the allowances; default unchanged).
 *   cwnd_cap(sk, target)      packets: a ceiling on the new cwnd, applied
 *                             after cwnd moved toward the target and before
 *                             the cwnd_min_target floor; not while
 *                             conserve_cwnd decides cwnd (default: none).
 *   probe_rtt_cwnd(sk)        packets: ProbeRTT's cwnd, and the inflight at
 *                             which its 200 ms start (default
 *                             cwnd_min_target, Linux's 4).
 *   recovery_pacing_gain(sk, gain)  << 8: the pacing gain used while in
 *                             Recovery or Loss (icsk_ca_state), given the
 *                             mode's; bbr->pacing_gain itself is unchanged
 *                             (default: the mode's gain).
 *   set_state(sk, old, new)   every CA-state change, after BBR's own
 *                             handling; old is icsk_ca_state (Linux calls
 *                             set_state before changing it), so entering
 *                             (old < Recovery <= new) and leaving loss
 *                             recovery are visible.
 *   ssthresh(sk)              packets: replaces bbr_core_ssthresh() (which
 *                             saves cwnd and returns ssthresh unchanged);
 *                             a hook may call it.
 *   undo_cwnd(sk)             packets: replaces bbr_core_undo_cwnd() (reset
 *                             full-pipe and policer detection, keep cwnd);
 *                             a hook may call it.
 *   Loss recovery (bbr_set_cwnd_to_recover_or_restore(), Linux's rule:
 *   lost packets off cwnd; on entering Recovery a new round starts at once
 *   and packet conservation holds for it; on leaving, cwnd restored) is
 *   the core's; three hooks set only the cwnd in it (packets; cwnd is the
 *   current one less this ACK's losses):
 *   recovery_cwnd(sk, cwnd, acked)  on entering Recovery, after the core
 *                             restarted the round and set
 *                             packet_conservation (default
 *                             bbr_recovery_cwnd(): inflight + acked).
 *   conserve_cwnd(sk, cwnd, acked, *new_cwnd)  on every ACK with data
 *                             acked, after the above: true and *new_cwnd
 *                             to set cwnd to it and skip the target (as in
 *                             packet conservation), false to move toward
 *                             the target from cwnd (default
 *                             bbr_conserve_cwnd(): while
 *                             bbr->packet_conservation, max(cwnd, inflight
 *                             + acked)).
 *   restore_cwnd(sk, cwnd)    on leaving Recovery or Loss (default
 *                             bbr_restore_cwnd(): max(cwnd, prior_cwnd)).
 *   A hook may call its default. None of the three owns the round count,
 *   packet_conservation (cleared by the next round start, as in Linux) or
 *   bbr->prev_ca_state: a derivative that conserves on its own terms
 *   (BBR-CWS) keeps its own flag and returns false otherwise.
 */
#ifndef CCARENA_BBR_CORE_H
#define CCARENA_BBR_CORE_H

#include "ccarena_compat.h"
#include "minmax.h"
#include "send_quantum.h"

#define BW_SCALE 24
#define BW_UNIT (1 << BW_SCALE)

#define BBR_SCALE 8	/* scaling factor for fractions in BBR (e.g. gains) */
#define BBR_UNIT (1 << BBR_SCALE)

/* BBR has the following modes for deciding how fast to send (trace_mode): */
enum bbr_mode {
	BBR_STARTUP = 0,	/* doubling the rate per round to find BtlBw */
	BBR_DRAIN = 1,		/* removing the queue Startup built */
	BBR_PROBE_BW = 2,	/* cycling gains around BtlBw (steady state) */
	BBR_PROBE_RTT = 3,	/* cwnd 4 to measure RTprop */
};

#ifndef BBR_EXT_FIELDS
#define BBR_EXT_FIELDS
#endif

/* BBR congestion control block, in the socket's private area. */
struct bbr {
	u64 cycle_mstamp;	   /* us, start of current ProbeBW gain phase */
	u64 ack_epoch_mstamp;	   /* us, start of ACK sampling epoch */
	struct minmax bw;	   /* max recent delivery rate, pkts/us << 24,
				    * windowed over rtt_cnt */
	u32 min_rtt_us;		   /* us, min RTT in min_rtt_win_sec window */
	u32 min_rtt_stamp;	   /* ms, time min_rtt_us was taken */
	u32 probe_rtt_done_stamp;  /* ms, end of ProbeRTT's 200 ms; 0: unset */
	u32 rtt_cnt;		   /* count of packet-timed rounds elapsed */
	u32 next_rtt_delivered;	   /* packets, tp->delivered at end of round */
	u32 lt_bw;		   /* pkts/us << 24, long-term (policed) bw */
	u32 lt_last_delivered;	   /* packets, tp->delivered at lt interval start */
	u32 lt_last_stamp;	   /* ms, tp->delivered_mstamp at interval start */
	u32 lt_last_lost;	   /* packets, tp->lost at lt interval start */
	u32 prior_cwnd;		   /* packets, cwnd before loss recovery/ProbeRTT */
	u32 full_bw;		   /* pkts/us << 24, bw at last >= 25% growth */
	u16 extra_acked[2];	   /* packets, max excess acked in each window */
	u32 mode:3,		   /* enum bbr_mode */
	    prev_ca_state:3,	   /* CA state on previous ACK */
	    packet_conservation:1, /* first recovery round: cwnd = inflight+acked */
	    round_start:1,	   /* this ACK ended a packet-timed round */
	    idle_restart:1,	   /* first ACKs after an idle period */
	    probe_rtt_round_done:1, /* ProbeRTT spent a full round at 4 pkts */
	    lt_is_sampling:1,	   /* a policer-detection interval is open */
	    lt_rtt_cnt:7,	   /* rounds in that interval (or pinned) */
	    lt_use_bw:1,	   /* lt_bw replaces the max filter */
	    spare_a:13;		   /* free for derivatives */
	u32 pacing_gain:10,	   /* pacing gain in use, << 8 */
	    cwnd_gain:10,	   /* cwnd gain in use, << 8 */
	    full_bw_reached:1,	   /* Startup found the pipe full */
	    full_bw_cnt:2,	   /* rounds with < 25% bw growth */
	    cycle_idx:3,	   /* ProbeBW phase 0..7 */
	    has_seen_rtt:1,	   /* pacing set from a real srtt */
	    spare_b:5;		   /* free for derivatives */
	u32 ack_epoch_acked:20,	   /* packets (S)ACKed in this ACK epoch */
	    extra_acked_win_rtts:5, /* rounds in the current extra_acked window */
	    extra_acked_win_idx:1, /* which extra_acked slot is current */
	    spare_c:6;		   /* free for derivatives */
	BBR_EXT_FIELDS
};

/* Where struct bbr lives (see "reuse by derivatives" above): the private
 * area, asserted to fit, unless the derivative asked for more room. */
#ifdef BBR_STATE_EXTENDED
CCA_STATE_EXTENDED(struct bbr)
#else
CCA_STATE_PRIV(struct bbr)
#endif

#define CYCLE_LEN 8	/* number of phases in a pacing gain cycle */

/* Window length of bw filter (in rounds): a full gain cycle plus slack. */
#define BBR_BW_RTTS (CYCLE_LEN + 2)
/* If bw has increased by this factor, full bw may not yet be reached. */
#define BBR_FULL_BW_THRESH (BBR_UNIT * 5 / 4)
/* After this many rounds of < 25% bw growth, estimate the pipe is full. */
#define BBR_FULL_BW_CNT 3
/* Randomise the starting phase among all but the 3/4 (draining) one. */
#define BBR_CYCLE_RAND 7

/* Long-term ("LT") bw sampling, to detect token-bucket policers: */
/* The minimum number of rounds in an LT bw sampling interval. */
#define BBR_LT_INTVL_MIN_RTTS 4
/* If lost/delivered ratio > 20% (50/256), interval is "lossy": policed. */
#define BBR_LT_LOSS_THRESH 50
/* If two intervals' bw differ by <= 1/8, their bw is "consistent". */
#define BBR_LT_BW_RATIO (BBR_UNIT / 8)
/* ...or by <= 4 Kbit/s (in bytes per second). */
#define BBR_LT_BW_DIFF (4000 / 8)
/* Use the policed rate for at most this many rounds, then re-probe. */
#define BBR_LT_BW_MAX_RTTS 48

/* Gain cycling of extra_acked (in rounds): max over two 5-round windows. */
#define BBR_EXTRA_ACKED_WIN_RTTS 5
/* Reset the ACK epoch after ~1M packets, before ack_epoch_acked overflows. */
#define BBR_ACK_EPOCH_ACKED_RESET_THRESH (1U << 20)

/* ------------------------------------------------------------ parameters
 * Units follow the parameter naming convention of every cc/ table (see
 * docs/scenario-format.md): a name ending in _us is a time in us, one
 * ending in _ppm a dimensionless ratio in millionths (gains included: 2.0
 * is 2000000), anything else a plain count. The scenario key drops the
 * suffix (params = { cwnd_gain = 2.5, probe_rtt_mode = "100ms" }). The
 * helpers below convert to the fixed point the code runs on (gains << 8,
 * ms "jiffies"), so every default reproduces Linux's constant exactly.
 */
enum bbr_param {
	/* Startup gain 2/ln2: the smallest that doubles delivery per round. */
	BBR_PARAM_HIGH_GAIN_PPM,
	/* Drain gain ln2/2: the inverse of startup, drains its queue in 1 RTT. */
	BBR_PARAM_DRAIN_GAIN_PPM,
	/* ProbeBW cwnd gain 2: tolerates delayed/stretched ACKs. */
	BBR_PARAM_CWND_GAIN_PPM,
	/* ProbeBW probing phase 5/4: gently probe for more bw. */
	BBR_PARAM_PROBE_UP_GAIN_PPM,
	/* ProbeBW draining phase 3/4: drain the queue the probe made. */
	BBR_PARAM_PROBE_DOWN_GAIN_PPM,
	/* min_rtt filter window, 10 s: path changes are rarer than that
	 * (used in whole ticks, rounded up: cca_ms_param()). */
	BBR_PARAM_MIN_RTT_WIN_US,
	/* Time in ProbeRTT at min cwnd, 200 ms: long enough to see an empty
	 * queue (whole ticks, rounded up; 0 disables ProbeRTT). */
	BBR_PARAM_PROBE_RTT_MODE_US,
	/* Min cwnd, packets: keeps ACK clocking with delayed ACKs. */
	BBR_PARAM_CWND_MIN_TARGET,
	/* Gain for the ACK aggregation allowance (0 disables it). */
	BBR_PARAM_EXTRA_ACKED_GAIN_PPM,
	/* Cap of the aggregation allowance, us of bw: bounds its queue. */
	BBR_PARAM_EXTRA_ACKED_MAX_US,
	/* Pace 1% below bw, to drain queues from inaccurate bw estimates. */
	BBR_PARAM_PACING_MARGIN_PPM,
	/* The send quantum's rule (include/send_quantum.h): 0 Linux v1's
	 * (rate), 1 Google's halving, 2 the RTT-tuning blog's linear. */
	BBR_PARAM_SEND_QUANTUM,
	/* The linear rule's end points (send_quantum.h): max bytes at
	 * rtt_lo or less, min segments at rtt_hi or more. */
	BBR_PARAM_QUANTUM_RTT_LO_US,
	BBR_PARAM_QUANTUM_RTT_HI_US,
	BBR_PARAM_QUANTUM_MAX_BYTES,
	BBR_PARAM_QUANTUM_MIN_SEGS,
	BBR_PARAM_COUNT
};
_Static_assert(BBR_PARAM_QUANTUM_MIN_SEGS == BBR_PARAM_SEND_QUANTUM + 4,
	       "cca_send_quantum_bytes() reads the five quantum rows in order");

#define BBR_PPM CCA_PPM

/* Linux's BBR_UNIT * 2885 / 1000 + 1 = 739/256 = 2.88671875. */
#define BBR_HIGH_GAIN_PPM_DEFAULT 2886719
/* Linux's BBR_UNIT * 1000 / 2885 = 88/256 = 0.34375. */
#define BBR_DRAIN_GAIN_PPM_DEFAULT 343750
#define BBR_CWND_GAIN_PPM_DEFAULT 2000000
#define BBR_PROBE_UP_GAIN_PPM_DEFAULT 1250000
#define BBR_PROBE_DOWN_GAIN_PPM_DEFAULT 750000
#define BBR_MIN_RTT_WIN_US_DEFAULT (10 * USEC_PER_SEC)
#define BBR_PROBE_RTT_MODE_US_DEFAULT (200 * USEC_PER_MSEC)
#define BBR_CWND_MIN_TARGET_DEFAULT 4
#define BBR_EXTRA_ACKED_GAIN_PPM_DEFAULT 1000000
#define BBR_EXTRA_ACKED_MAX_US_DEFAULT (100 * USEC_PER_MSEC)
/* A variant (cc/bbr_tuned.c) may define these two before the #include. */
#ifndef BBR_PACING_MARGIN_PPM_DEFAULT
#define BBR_PACING_MARGIN_PPM_DEFAULT 10000
#endif
#ifndef BBR_SEND_QUANTUM_DEFAULT
#define BBR_SEND_QUANTUM_DEFAULT CCA_QUANTUM_RATE
#endif

/* The rows a derivative's CCA_PARAMS table starts with. */
#define BBR_CORE_PARAM_DEFS						\
	CCA_PARAM_DEF(BBR_PARAM_HIGH_GAIN_PPM, "high_gain_ppm",		\
		      BBR_HIGH_GAIN_PPM_DEFAULT)			\
	CCA_PARAM_DEF(BBR_PARAM_DRAIN_GAIN_PPM, "drain_gain_ppm",	\
		      BBR_DRAIN_GAIN_PPM_DEFAULT)			\
	CCA_PARAM_DEF(BBR_PARAM_CWND_GAIN_PPM, "cwnd_gain_ppm",		\
		      BBR_CWND_GAIN_PPM_DEFAULT)			\
	CCA_PARAM_DEF(BBR_PARAM_PROBE_UP_GAIN_PPM, "probe_up_gain_ppm",	\
		      BBR_PROBE_UP_GAIN_PPM_DEFAULT)			\
	CCA_PARAM_DEF(BBR_PARAM_PROBE_DOWN_GAIN_PPM, "probe_down_gain_ppm", \
		      BBR_PROBE_DOWN_GAIN_PPM_DEFAULT)			\
	CCA_PARAM_DEF(BBR_PARAM_MIN_RTT_WIN_US, "min_rtt_win_us",	\
		      BBR_MIN_RTT_WIN_US_DEFAULT)			\
	CCA_PARAM_DEF(BBR_PARAM_PROBE_RTT_MODE_US, "probe_rtt_mode_us",	\
		      BBR_PROBE_RTT_MODE_US_DEFAULT)			\
	CCA_PARAM_DEF(BBR_PARAM_CWND_MIN_TARGET, "cwnd_min_target",	\
		      BBR_CWND_MIN_TARGET_DEFAULT)			\
	CCA_PARAM_DEF(BBR_PARAM_EXTRA_ACKED_GAIN_PPM, "extra_acked_gain_ppm", \
		      BBR_EXTRA_ACKED_GAIN_PPM_DEFAULT)			\
	CCA_PARAM_DEF(BBR_PARAM_EXTRA_ACKED_MAX_US, "extra_acked_max_us", \
		      BBR_EXTRA_ACKED_MAX_US_DEFAULT)			\
	CCA_PARAM_DEF(BBR_PARAM_PACING_MARGIN_PPM, "pacing_margin_ppm",	\
		      BBR_PACING_MARGIN_PPM_DEFAULT)			\
	CCA_PARAM_DEF(BBR_PARAM_SEND_QUANTUM, "send_quantum",		\
		      BBR_SEND_QUANTUM_DEFAULT)				\
	CCA_PARAM_DEF(BBR_PARAM_QUANTUM_RTT_LO_US, "quantum_rtt_lo_us",	\
		      CCA_QUANTUM_RTT_LO_US_DEFAULT)			\
	CCA_PARAM_DEF(BBR_PARAM_QUANTUM_RTT_HI_US, "quantum_rtt_hi_us",	\
		      CCA_QUANTUM_RTT_HI_US_DEFAULT)			\
	CCA_PARAM_DEF(BBR_PARAM_QUANTUM_MAX_BYTES, "quantum_max_bytes",	\
		      CCA_QUANTUM_MAX_BYTES_DEFAULT)			\
	CCA_PARAM_DEF(BBR_PARAM_QUANTUM_MIN_SEGS, "quantum_min_segs",	\
		      CCA_QUANTUM_MIN_SEGS_DEFAULT)

/* A _ppm parameter in BBR's fixed point (<< BBR_SCALE), rounded to the
 * nearest 1/256 and capped at max. */
static inline u32 bbr_ratio_param(struct sock *sk, u32 index, u64 dflt_ppm,
				  u32 max)
{
	return cca_ratio_param(sk, index, dflt_ppm, BBR_UNIT, max);
}

/* A gain parameter, capped to what the 10-bit gain fields hold. */
static inline u32 bbr_gain_param(struct sock *sk, u32 index, u64 dflt_ppm)
{
	return bbr_ratio_param(sk, index, dflt_ppm, 1023);
}

/* The ACK aggregation gain << BBR_SCALE, at most 0xffff so that gain times
 * the u16 extra_acked fits a u32. */
static inline u32 bbr_extra_acked_gain(struct sock *sk)
{
	return bbr_ratio_param(sk, BBR_PARAM_EXTRA_ACKED_GAIN_PPM,
			       BBR_EXTRA_ACKED_GAIN_PPM_DEFAULT, 0xffff);
}

/* ----------------------------------------------------------------- hooks */
#if defined(BBR_HOOK_PHASE_LEN_US) || defined(BBR_HOOK_TARGET_CWND) || \
	defined(BBR_HOOK_UPDATE_MODEL) || defined(BBR_HOOK_INIT) ||	\
	defined(BBR_HOOK_PROBE_UNTIL_INFLIGHT) || defined(BBR_HOOK_DRAIN_UNTIL_BDP)
#error "BBR_HOOK_* macros are gone: set the member of struct bbr_hooks instead"
#endif

/* The points where a derivative differs from BBR; see the header comment.
 * A NULL member (the default) is Linux BBR's behaviour. */
struct bbr_hooks {
	void (*init)(struct sock *sk);
	void (*update_model)(struct sock *sk, const struct rate_sample *rs);
	u32 (*phase_len_us)(struct sock *sk);
	bool (*probe_until_inflight)(struct sock *sk);
	bool (*drain_until_bdp)(struct sock *sk);
	u32 (*cwnd_bdp)(struct sock *sk, u32 bw, int gain);
	u32 (*target_cwnd)(struct sock *sk, u32 cwnd);
	u32 (*cwnd_cap)(struct sock *sk, u32 target_cwnd);
	u32 (*probe_rtt_cwnd)(struct sock *sk);
	u32 (*recovery_pacing_gain)(struct sock *sk, u32 gain);
	void (*set_state)(struct sock *sk, u8 old_state, u8 new_state);
	u32 (*ssthresh)(struct sock *sk);
	u32 (*undo_cwnd)(struct sock *sk);
	u32 (*recovery_cwnd)(struct sock *sk, u32 cwnd, u32 acked);
	bool (*conserve_cwnd)(struct sock *sk, u32 cwnd, u32 acked,
			      u32 *new_cwnd);
	u32 (*restore_cwnd)(struct sock *sk, u32 cwnd);
};

/* A tentative definition: the derivative's `static const struct bbr_hooks
 * bbr_hooks = { ... };` below the #include completes it; without one (plain
 * BBR) it is all NULL. Being a constant known to the compiler, every
 * bbr_hooks.x(...) is resolved at compile time: a direct, inlinable call
 * (BPF has no indirect calls) or, for NULL, the default. */
static const struct bbr_hooks bbr_hooks;

/* Call hook `h` with the arguments, or evaluate dflt if it is not set. */
#define BBR_HOOK(h, dflt, ...) (bbr_hooks.h ? bbr_hooks.h(__VA_ARGS__) : (dflt))

static inline struct bbr *bbr_ca(const struct sock *sk)
{
	return cca_state(sk);
}

/* ProbeRTT's cwnd, packets: cwnd_min_target (Linux: 4), or the hook's. */
static inline u32 bbr_probe_rtt_cwnd(struct sock *sk)
{
	return BBR_HOOK(probe_rtt_cwnd,
			cca_u32_param(sk, BBR_PARAM_CWND_MIN_TARGET,
				      BBR_CWND_MIN_TARGET_DEFAULT), sk);
}

/* Has Startup's full-pipe detection fired? */
static inline bool bbr_full_bw_reached(const struct sock *sk)
{
	return bbr_ca(sk)->full_bw_reached;
}

/* Return the windowed max recent bandwidth sample, pkts/us << BW_SCALE. */
static inline u32 bbr_max_bw(const struct sock *sk)
{
	return minmax_get(&bbr_ca(sk)->bw);
}

/* Return the estimated bandwidth of the path, pkts/us << BW_SCALE. */
static inline u32 bbr_bw(const struct sock *sk)
{
	struct bbr *bbr = bbr_ca(sk);

	return bbr->lt_use_bw ? bbr->lt_bw : bbr_max_bw(sk);
}

/* The extra_acked slot of the current window. (Branches, not indexing:
 * the BPF verifier rejects variable-offset writes into the socket.) */
static inline u16 bbr_extra_acked_cur(const struct bbr *bbr)
{
	return bbr->extra_acked_win_idx ? bbr->extra_acked[1] :
					  bbr->extra_acked[0];
}

static inline void bbr_extra_acked_set_cur(struct bbr *bbr, u16 val)
{
	if (bbr->extra_acked_win_idx)
		bbr->extra_acked[1] = val;
	else
		bbr->extra_acked[0] = val;
}

/* Return maximum extra acked in past k-2k round trips, packets. */
static inline u16 bbr_extra_acked(const struct sock *sk)
{
	struct bbr *bbr = bbr_ca(sk);

	return max(bbr->extra_acked[0], bbr->extra_acked[1]);
}

/* Rate in bytes per second for a bw (pkts/us << 24) times gain (<< 8),
 * less the pacing margin. Order of operations avoids u64 overflow. */
static inline u64 bbr_rate_bytes_per_sec(struct sock *sk, u64 rate, int gain)
{
	u32 mss = tcp_sk(sk)->mss_cache;
	u64 margin = min_t(u64, CCA_PARAM(sk, BBR_PARAM_PACING_MARGIN_PPM,
					  BBR_PACING_MARGIN_PPM_DEFAULT),
			   BBR_PPM / 100 * 99);	/* at most 99% */

	rate *= mss;
	rate *= gain;
	rate >>= BBR_SCALE;
	rate *= BBR_PPM - margin;	/* us -> s, less the margin */
	return rate >> BW_SCALE;
}

/* Convert a BBR bw and gain factor to a pacing rate in bytes per second,
 * capped at sk_max_pacing_rate. */
static inline unsigned long bbr_bw_to_pacing_rate(struct sock *sk, u32 bw,
						  int gain)
{
	u64 rate = bbr_rate_bytes_per_sec(sk, bw, gain);

	return (unsigned long)min_t(u64, rate, sk->sk_max_pacing_rate);
}

/* The bw estimate in bytes per second with no gain or margin (telemetry). */
static inline u64 bbr_bw_bytes_per_sec(const struct sock *sk, u32 bw)
{
	return ((u64)bw * tcp_sk(sk)->mss_cache * USEC_PER_SEC) >> BW_SCALE;
}

/* Initialize pacing rate to: high_gain * init_cwnd / RTT. */
static inline void bbr_init_pacing_rate_from_rtt(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr *bbr = bbr_ca(sk);
	u64 bw;
	u32 rtt_us;

	if (tp->srtt_us) {		/* any RTT sample yet? */
		rtt_us = max(tp->srtt_us >> 3, 1U);
		bbr->has_seen_rtt = 1;
	} else {			/* no RTT sample yet */
		rtt_us = USEC_PER_MSEC;	/* use nominal default RTT */
	}
	bw = div_u64((u64)tcp_snd_cwnd(tp) * BW_UNIT, rtt_us);
	sk->sk_pacing_rate = bbr_bw_to_pacing_rate(sk, (u32)bw,
		bbr_gain_param(sk, BBR_PARAM_HIGH_GAIN_PPM,
			       BBR_HIGH_GAIN_PPM_DEFAULT));
}

/* Pace using current bw estimate and a gain factor. Until the pipe is
 * full, never lower the rate (a bw estimate that is still ramping up). */
static inline void bbr_set_pacing_rate(struct sock *sk, u32 bw, int gain)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr *bbr = bbr_ca(sk);
	unsigned long rate = bbr_bw_to_pacing_rate(sk, bw, gain);

	if (!bbr->has_seen_rtt && tp->srtt_us)
		bbr_init_pacing_rate_from_rtt(sk);
	if (bbr_full_bw_reached(sk) || rate > sk->sk_pacing_rate)
		sk->sk_pacing_rate = rate;
}

static inline u32 bbr_send_quantum_rule(struct sock *sk)
{
	return cca_u32_param(sk, BBR_PARAM_SEND_QUANTUM, BBR_SEND_QUANTUM_DEFAULT);
}

/* Linux v1's least TSO burst: 1 segment below 1.2 Mbit/s, else 2. */
static inline u32 bbr_v1_min_tso_segs(struct sock *sk)
{
	return cca_rate_min_tso_segs(sk);	/* send_quantum.h */
}

/* Packets per TSO burst by the send_quantum rule (send_quantum.h; v1's:
 * ~1 ms of data at the pacing rate, rate >> sk_pacing_shift), within the
 * GSO size limit, at most 127. */
static inline u32 bbr_tso_segs_goal(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	u32 mss = max(tp->mss_cache, 1U);
	u32 gso = sk->sk_gso_max_size;
	u32 floor = bbr_v1_min_tso_segs(sk);
	u64 bytes = cca_send_quantum_bytes(sk, BBR_PARAM_SEND_QUANTUM,
					   BBR_SEND_QUANTUM_DEFAULT,
					   bbr_ca(sk)->min_rtt_us, mss,
					   CCA_QUANTUM_HALVING_SHIFT, &floor);
	u32 segs;

	if (gso == 0 || gso > GSO_LEGACY_MAX_SIZE)
		gso = GSO_LEGACY_MAX_SIZE;
	bytes = min_t(u64, bytes, gso - 1 - MAX_TCP_HEADER);
	segs = max_t(u32, (u32)bytes / mss, floor);
	return min(segs, 0x7FU);
}

/* min_tso_segs: v1's, or under another rule the whole quantum, which the
 * stack's tcp_tso_autosize() then takes as its floor (as bbr3.c does for
 * v3's tso_segs op). */
static inline u32 bbr_min_tso_segs_of(struct sock *sk)
{
	if (bbr_send_quantum_rule(sk) == CCA_QUANTUM_RATE)
		return bbr_v1_min_tso_segs(sk);
	return bbr_tso_segs_goal(sk);
}

/* Remember the cwnd to return to after recovery or ProbeRTT: the current
 * one, unless recovery/ProbeRTT already cut it. */
static inline void bbr_save_cwnd(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr *bbr = bbr_ca(sk);

	if (bbr->prev_ca_state < TCP_CA_Recovery && bbr->mode != BBR_PROBE_RTT)
		bbr->prior_cwnd = tcp_snd_cwnd(tp);  /* this cwnd is good enough */
	else  /* loss recovery or BBR_PROBE_RTT have temporarily cut cwnd */
		bbr->prior_cwnd = max(bbr->prior_cwnd, tcp_snd_cwnd(tp));
}

/* Calculate bdp based on min RTT and the estimated bottleneck bandwidth:
 *   bdp = ceil(bw * min_rtt * gain)
 * packets. Before any RTT sample, TCP_INIT_CWND. */
static inline u32 bbr_bdp(struct sock *sk, u32 bw, int gain)
{
	struct bbr *bbr = bbr_ca(sk);
	u64 w;

	if (bbr->min_rtt_us == ~0U)	/* no RTT sample yet */
		return TCP_INIT_CWND;

	w = (u64)bw * bbr->min_rtt_us;
	/* Round up: rounding down would shrink cwnd, then the next bw
	 * sample, then cwnd again. */
	return (u32)((((w * gain) >> BBR_SCALE) + BW_UNIT - 1) / BW_UNIT);
}

/* Quantisation budget: hosts move data in TSO/GRO bursts, so cwnd needs
 * room for 3 of them (sender qdisc, wire, receiver GRO) beyond the BDP;
 * round up to even (delayed ACKs ack pairs); while probing at 5/4 add 2
 * so inflight can get above the target at small BDPs. */
static inline u32 bbr_quantization_budget(struct sock *sk, u32 cwnd)
{
	struct bbr *bbr = bbr_ca(sk);

	cwnd += 3 * bbr_tso_segs_goal(sk);
	cwnd = (cwnd + 1) & ~1U;
	if (bbr->mode == BBR_PROBE_BW && bbr->cycle_idx == 0)
		cwnd += 2;
	return cwnd;
}

/* Find inflight based on min RTT and the estimated bottleneck bandwidth. */
static inline u32 bbr_inflight(struct sock *sk, u32 bw, int gain)
{
	return bbr_quantization_budget(sk, bbr_bdp(sk, bw, gain));
}

/* With EDT pacing, packets whose departure time is in the future are not
 * yet in the network: estimate inflight at the next departure time. */
static inline u32 bbr_packets_in_net_at_edt(struct sock *sk, u32 inflight_now)
{
	struct bbr *bbr = bbr_ca(sk);
	u64 interval_delivered;
	u32 inflight_at_edt;

	interval_delivered = ((u64)bbr_bw(sk) * cca_edt_lead_us(sk)) >> BW_SCALE;
	inflight_at_edt = inflight_now;
	if (bbr->pacing_gain > BBR_UNIT)	/* next skb is a TSO burst */
		inflight_at_edt += bbr_tso_segs_goal(sk);
	if (interval_delivered >= inflight_at_edt)
		return 0;
	return inflight_at_edt - (u32)interval_delivered;
}

/* cwnd allowance for ACK aggregation: extra_acked, packets, capped at
 * extra_acked_max_us of bw; only once the pipe is full. */
static inline u32 bbr_ack_aggregation_cwnd(struct sock *sk)
{
	u32 gain = bbr_extra_acked_gain(sk);
	u32 max_us = cca_u32_param(sk, BBR_PARAM_EXTRA_ACKED_MAX_US,
				   BBR_EXTRA_ACKED_MAX_US_DEFAULT);
	u32 max_aggr_cwnd, aggr_cwnd = 0;

	if (gain && bbr_full_bw_reached(sk)) {
		max_aggr_cwnd = (u32)(((u64)bbr_bw(sk) * max_us) / BW_UNIT);
		aggr_cwnd = (gain * bbr_extra_acked(sk)) >> BBR_SCALE;
		aggr_cwnd = min(aggr_cwnd, max_aggr_cwnd);
	}
	return aggr_cwnd;
}

/* cwnd on entering Recovery, packets: what is in flight plus what this ACK
 * acked (cwnd beyond what is in flight was unused: app-limited, TSQ or TSO
 * deferral). The recovery_cwnd hook's default. */
static inline u32 bbr_recovery_cwnd(struct sock *sk, u32 cwnd, u32 acked)
{
	return tcp_packets_in_flight(tcp_sk(sk)) + acked;
}

/* Packet conservation for the first round of Recovery: send one packet
 * per packet delivered, cwnd >= inflight + acked, and skip the target.
 * The conserve_cwnd hook's default. */
static inline bool bbr_conserve_cwnd(struct sock *sk, u32 cwnd, u32 acked,
				     u32 *new_cwnd)
{
	if (!bbr_ca(sk)->packet_conservation)
		return false;
	*new_cwnd = max(cwnd, tcp_packets_in_flight(tcp_sk(sk)) + acked);
	return true;
}

/* cwnd on leaving Recovery or Loss, packets: back to the cwnd saved on
 * entry (bbr_save_cwnd). The restore_cwnd hook's default. */
static inline u32 bbr_restore_cwnd(struct sock *sk, u32 cwnd)
{
	return max(cwnd, bbr_ca(sk)->prior_cwnd);
}

/* Loss recovery: on the first round of recovery use packet conservation
 * (cwnd = inflight + acked, i.e. send one packet per packet delivered);
 * losses reduce cwnd one for one; on leaving recovery restore the cwnd
 * saved by bbr_save_cwnd(). Returns true if conservation decides cwnd.
 * The cwnd values are the recovery hooks' (a derivative's own rule); the
 * round restart and the CA-state tracking are always Linux's. */
static inline bool bbr_set_cwnd_to_recover_or_restore(
	struct sock *sk, const struct rate_sample *rs, u32 acked, u32 *new_cwnd)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr *bbr = bbr_ca(sk);
	u8 prev_state = bbr->prev_ca_state, state = inet_csk(sk)->icsk_ca_state;
	u32 cwnd = tcp_snd_cwnd(tp);

	/* Bound the burst an ACK may release to twice what it acked: lost
	 * packets come off cwnd here, and bbr_set_cwnd() adds acked back. */
	if (rs->losses > 0)
		cwnd = (u32)max_t(s32, (s32)cwnd - rs->losses, 1);

	if (state == TCP_CA_Recovery && prev_state != TCP_CA_Recovery) {
		/* First round of recovery: conserve packets for one round,
		 * which starts now. */
		bbr->packet_conservation = 1;
		bbr->next_rtt_delivered = tp->delivered;
		cwnd = BBR_HOOK(recovery_cwnd,
				bbr_recovery_cwnd(sk, cwnd, acked),
				sk, cwnd, acked);
	} else if (prev_state >= TCP_CA_Recovery && state < TCP_CA_Recovery) {
		/* Recovery is over: back to the cwnd saved on entry. */
		cwnd = BBR_HOOK(restore_cwnd, bbr_restore_cwnd(sk, cwnd),
				sk, cwnd);
		bbr->packet_conservation = 0;
	}
	bbr->prev_ca_state = state;

	if (BBR_HOOK(conserve_cwnd,
		     bbr_conserve_cwnd(sk, cwnd, acked, new_cwnd),
		     sk, cwnd, acked, new_cwnd))
		return true;
	*new_cwnd = cwnd;
	return false;
}

/* Move cwnd toward target = cwnd_gain * BDP + allowances: grow by the
 * packets acked when below it (the bw estimate is rising, or losses cut
 * cwnd), and once the pipe has been filled, cut straight down to it. */
static inline void bbr_set_cwnd(struct sock *sk, const struct rate_sample *rs,
				u32 acked, u32 bw, int gain)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr *bbr = bbr_ca(sk);
	u32 cwnd = tcp_snd_cwnd(tp), target_cwnd = 0;
	u32 min_target = cca_u32_param(sk, BBR_PARAM_CWND_MIN_TARGET,
				       BBR_CWND_MIN_TARGET_DEFAULT);

	if (!acked)
		goto done;	/* nothing newly acked: only enforce the caps */

	if (bbr_set_cwnd_to_recover_or_restore(sk, rs, acked, &cwnd))
		goto done;

	target_cwnd = BBR_HOOK(cwnd_bdp, bbr_bdp(sk, bw, gain), sk, bw, gain);

	/* Room for ACKs that arrive in bursts (aggregation), so the sender
	 * is not starved between bursts. */
	target_cwnd += bbr_ack_aggregation_cwnd(sk);
	target_cwnd = bbr_quantization_budget(sk, target_cwnd);
	target_cwnd = BBR_HOOK(target_cwnd, target_cwnd, sk, target_cwnd);

	if (bbr_full_bw_reached(sk))	/* the model is trusted: cap at target */
		cwnd = min(cwnd + acked, target_cwnd);
	else if (cwnd < target_cwnd || tp->delivered < TCP_INIT_CWND)
		cwnd = cwnd + acked;
	if (bbr_hooks.cwnd_cap)		/* a derivative's ceiling */
		cwnd = min(cwnd, bbr_hooks.cwnd_cap(sk, target_cwnd));
	cwnd = max(cwnd, min_target);

done:
	tcp_snd_cwnd_set(tp, min(cwnd, tp->snd_cwnd_clamp));
	if (bbr->mode == BBR_PROBE_RTT)	/* hold inflight tiny to see RTprop */
		tcp_snd_cwnd_set(tp, min(tcp_snd_cwnd(tp),
					 bbr_probe_rtt_cwnd(sk)));
}

/* ProbeBW pacing gain of cycle phase idx: up, down, then cruise at 1. */
static inline u32 bbr_cycle_pacing_gain(struct sock *sk, u32 idx)
{
	if (idx == 0)
		return bbr_gain_param(sk, BBR_PARAM_PROBE_UP_GAIN_PPM,
				      BBR_PROBE_UP_GAIN_PPM_DEFAULT);
	if (idx == 1)
		return bbr_gain_param(sk, BBR_PARAM_PROBE_DOWN_GAIN_PPM,
				      BBR_PROBE_DOWN_GAIN_PPM_DEFAULT);
	return BBR_UNIT;
}

/* Has the current ProbeBW phase done its job (time and/or inflight)? */
static inline bool bbr_is_next_cycle_phase(struct sock *sk,
					   const struct rate_sample *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr *bbr = bbr_ca(sk);
	bool is_full_length =
		tcp_stamp_us_delta(tp->delivered_mstamp, bbr->cycle_mstamp) >
		BBR_HOOK(phase_len_us, bbr->min_rtt_us, sk);
	u32 inflight, bw;

	/* Cruising at gain 1: phases are purely time-based. */
	if (bbr->pacing_gain == BBR_UNIT)
		return is_full_length;

	inflight = bbr_packets_in_net_at_edt(sk, rs->prior_in_flight);
	bw = bbr_max_bw(sk);

	/* Probing (gain > 1): keep going past min_rtt until inflight actually
	 * reached gain * BDP (slow on short paths), but give up on loss: a
	 * shallow buffer may never hold that much. (A derivative may make the
	 * phase length a hard limit instead.) */
	if (bbr->pacing_gain > BBR_UNIT)
		return is_full_length &&
			(rs->losses || !BBR_HOOK(probe_until_inflight, true, sk) ||
			 inflight >= bbr_inflight(sk, bw, bbr->pacing_gain));

	/* A derivative may insist on draining to exactly one BDP, however
	 * long that takes (the BBQ paper's first cut). */
	if (BBR_HOOK(drain_until_bdp, false, sk))
		return inflight <= bbr_bdp(sk, bw, BBR_UNIT);

	/* Draining (gain < 1): stop as soon as inflight is down to one BDP
	 * (the probe's queue is gone; more would idle the link), or after
	 * min_rtt at the latest. */
	return is_full_length || inflight <= bbr_inflight(sk, bw, BBR_UNIT);
}

static inline void bbr_advance_cycle_phase(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr *bbr = bbr_ca(sk);

	bbr->cycle_idx = (bbr->cycle_idx + 1) & (CYCLE_LEN - 1);
	bbr->cycle_mstamp = tp->delivered_mstamp;
}

/* Gain cycling: cycle pacing gain to converge to fair share of available bw. */
static inline void bbr_update_cycle_phase(struct sock *sk,
					  const struct rate_sample *rs)
{
	struct bbr *bbr = bbr_ca(sk);

	if (bbr->mode == BBR_PROBE_BW && bbr_is_next_cycle_phase(sk, rs))
		bbr_advance_cycle_phase(sk);
}

static inline void bbr_reset_startup_mode(struct sock *sk)
{
	bbr_ca(sk)->mode = BBR_STARTUP;
}

/* Enter ProbeBW at a random phase other than the draining (3/4) one:
 * idx = CYCLE_LEN - 1 - rand(7), then advance: lands on 0 or 2..7. */
static inline void bbr_reset_probe_bw_mode(struct sock *sk)
{
	struct bbr *bbr = bbr_ca(sk);

	bbr->mode = BBR_PROBE_BW;
	bbr->cycle_idx = CYCLE_LEN - 1 -
			 cca_get_random_u32_below(sk, BBR_CYCLE_RAND);
	bbr_advance_cycle_phase(sk);
}

static inline void bbr_reset_mode(struct sock *sk)
{
	if (!bbr_full_bw_reached(sk))
		bbr_reset_startup_mode(sk);
	else
		bbr_reset_probe_bw_mode(sk);
}

/* Start a new long-term sampling interval. */
static inline void bbr_reset_lt_bw_sampling_interval(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr *bbr = bbr_ca(sk);

	bbr->lt_last_stamp = (u32)div_u64(tp->delivered_mstamp, USEC_PER_MSEC);
	bbr->lt_last_delivered = tp->delivered;
	bbr->lt_last_lost = tp->lost;
	bbr->lt_rtt_cnt = 0;
}

/* Completely reset long-term bandwidth sampling. */
static inline void bbr_reset_lt_bw_sampling(struct sock *sk)
{
	struct bbr *bbr = bbr_ca(sk);

	bbr->lt_bw = 0;
	bbr->lt_use_bw = 0;
	bbr->lt_is_sampling = false;
	bbr_reset_lt_bw_sampling_interval(sk);
}

/* Long-term bw sampling interval is done. Estimate whether we're policed. */
static inline void bbr_lt_bw_interval_done(struct sock *sk, u32 bw)
{
	struct bbr *bbr = bbr_ca(sk);
	u32 diff;

	if (bbr->lt_bw) {
		/* Two intervals in a row at (nearly) the same rate: a policer. */
		diff = bw > bbr->lt_bw ? bw - bbr->lt_bw : bbr->lt_bw - bw;
		if (((u64)diff * BBR_UNIT <= (u64)BBR_LT_BW_RATIO * bbr->lt_bw) ||
		    (bbr_rate_bytes_per_sec(sk, diff, BBR_UNIT) <=
		     BBR_LT_BW_DIFF)) {
			bbr->lt_bw = (bw + bbr->lt_bw) >> 1;	/* their mean */
			bbr->lt_use_bw = 1;
			bbr->pacing_gain = BBR_UNIT;	/* stop probing into it */
			bbr->lt_rtt_cnt = 0;
			return;
		}
	}
	bbr->lt_bw = bw;
	bbr_reset_lt_bw_sampling_interval(sk);
}

/* Policer detection ("long-term" sampling). A token-bucket policer lets a
 * burst through and then drops everything above its rate, so the max-bw
 * filter keeps remembering the burst rate and BBR keeps losing packets.
 * Signature: an interval of 4..16 rounds, started and ended by a loss,
 * with >= 20% loss; two such intervals in a row at the same delivery rate
 * (within 1/8 or 4 kbit/s) mean we are policed, and their mean rate
 * (lt_bw) replaces the max filter for 48 rounds. (Flach et al., "An
 * Internet-Wide Analysis of Traffic Policing", SIGCOMM 2016.) */
static inline void bbr_lt_bw_sampling(struct sock *sk,
				      const struct rate_sample *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr *bbr = bbr_ca(sk);
	u32 lost, delivered;
	u64 bw;
	u32 t;

	if (bbr->lt_use_bw) {
		/* Pinned to lt_bw: after 48 rounds, forget it and probe again. */
		if (bbr->mode == BBR_PROBE_BW && bbr->round_start &&
		    ++bbr->lt_rtt_cnt >= BBR_LT_BW_MAX_RTTS) {
			bbr_reset_lt_bw_sampling(sk);
			bbr_reset_probe_bw_mode(sk);
		}
		return;
	}

	/* An interval starts at a loss: the bucket's burst is spent by then,
	 * so what follows is the policed rate, not the burst. */
	if (!bbr->lt_is_sampling) {
		if (!rs->losses)
			return;
		bbr_reset_lt_bw_sampling_interval(sk);
		bbr->lt_is_sampling = true;
	}

	/* An app-limited stretch says nothing about the policer: restart. */
	if (rs->is_app_limited) {
		bbr_reset_lt_bw_sampling(sk);
		return;
	}

	if (bbr->round_start)
		bbr->lt_rtt_cnt++;
	if (bbr->lt_rtt_cnt < BBR_LT_INTVL_MIN_RTTS)
		return;		/* too short to average over */
	if (bbr->lt_rtt_cnt > 4 * BBR_LT_INTVL_MIN_RTTS) {
		bbr_reset_lt_bw_sampling(sk);	/* too long: not a policer */
		return;
	}

	/* ...and ends at a loss too, i.e. with the bucket empty again. */
	if (!rs->losses)
		return;

	lost = tp->lost - bbr->lt_last_lost;
	delivered = tp->delivered - bbr->lt_last_delivered;
	/* Lossy enough (lost/delivered >= 50/256)? Otherwise keep going. */
	if (!delivered || ((u64)lost << BBR_SCALE) <
			  (u64)BBR_LT_LOSS_THRESH * delivered)
		return;

	/* The interval's mean delivery rate. */
	t = (u32)div_u64(tp->delivered_mstamp, USEC_PER_MSEC) -
	    bbr->lt_last_stamp;
	if ((s32)t < 1)
		return;		/* under 1 ms: wait */
	if (t >= ~0U / USEC_PER_MSEC) {	/* t * 1000 would overflow */
		bbr_reset_lt_bw_sampling(sk);
		return;
	}
	t *= USEC_PER_MSEC;
	bw = div_u64((u64)delivered * BW_UNIT, t);
	bbr_lt_bw_interval_done(sk, (u32)bw);
}

/* Estimate the bandwidth based on how fast packets are delivered. */
static inline void bbr_update_bw(struct sock *sk, const struct rate_sample *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr *bbr = bbr_ca(sk);
	u64 bw;

	bbr->round_start = 0;
	if (rs->delivered < 0 || rs->interval_us <= 0)
		return;	/* tcp_rate.c found no valid interval */

	/* Packet-timed rounds: a round ends when a packet sent after the
	 * previous round ended is delivered. */
	if (!before(rs->prior_delivered, bbr->next_rtt_delivered)) {
		bbr->next_rtt_delivered = tp->delivered;
		bbr->rtt_cnt++;
		bbr->round_start = 1;
		bbr->packet_conservation = 0;
	}

	bbr_lt_bw_sampling(sk, rs);

	/* Delivery rate of this sample, pkts/us << 24 (the scaling keeps the
	 * fraction: a typical flow delivers far less than 1 packet per us). */
	bw = div64_u64((u64)rs->delivered * BW_UNIT, (u64)rs->interval_us);

	/* An app-limited sample measures the application, not the path: it
	 * may raise the estimate but must not age a higher one out. */
	if (!rs->is_app_limited || bw >= bbr_max_bw(sk)) {
		minmax_running_max(&bbr->bw, BBR_BW_RTTS, bbr->rtt_cnt,
				   (u32)min_t(u64, bw, 0xffffffffULL));
	}
}

/* Estimates the windowed max degree of ack aggregation: the excess of data
 * acked over what bw predicts for the epoch, max over the last 5-10 rounds.
 * An epoch restarts when the ACK rate falls back to bw. */
static inline void bbr_update_ack_aggregation(struct sock *sk,
					      const struct rate_sample *rs)
{
	u32 epoch_us, expected_acked, extra_acked;
	struct bbr *bbr = bbr_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	u32 gain = bbr_extra_acked_gain(sk);

	if (!gain || rs->acked_sacked <= 0 ||
	    rs->delivered < 0 || rs->interval_us <= 0)
		return;

	if (bbr->round_start) {
		bbr->extra_acked_win_rtts = min(0x1F,
						bbr->extra_acked_win_rtts + 1);
		if (bbr->extra_acked_win_rtts >= BBR_EXTRA_ACKED_WIN_RTTS) {
			bbr->extra_acked_win_rtts = 0;
			bbr->extra_acked_win_idx = bbr->extra_acked_win_idx ?
						   0 : 1;
			bbr_extra_acked_set_cur(bbr, 0);
		}
	}

	/* What bw alone would have delivered since the epoch began. */
	epoch_us = tcp_stamp_us_delta(tp->delivered_mstamp,
				      bbr->ack_epoch_mstamp);
	expected_acked = (u32)(((u64)bbr_bw(sk) * epoch_us) / BW_UNIT);

	/* ACKs fell back to (or below) bw: the burst is over, start a new
	 * epoch; also before the 20-bit counter could overflow. */
	if (bbr->ack_epoch_acked <= expected_acked ||
	    (bbr->ack_epoch_acked + rs->acked_sacked >=
	     BBR_ACK_EPOCH_ACKED_RESET_THRESH)) {
		bbr->ack_epoch_acked = 0;
		bbr->ack_epoch_mstamp = tp->delivered_mstamp;
		expected_acked = 0;
	}

	/* The excess over bw in this epoch, at most one cwnd. */
	bbr->ack_epoch_acked = min_t(u32, 0xFFFFF,
				     bbr->ack_epoch_acked + rs->acked_sacked);
	extra_acked = bbr->ack_epoch_acked - expected_acked;
	extra_acked = min(extra_acked, tcp_snd_cwnd(tp));
	if (extra_acked > bbr_extra_acked_cur(bbr))
		bbr_extra_acked_set_cur(bbr, (u16)extra_acked);
}

/* Full-pipe detection for Startup: in Startup the delivery rate should
 * grow 2x per round; when the max bw has grown less than 25% in each of 3
 * consecutive rounds (that were not app-limited) the pipe is full. Three,
 * not one, so a receive window that is still autotuning, or a short burst
 * of cross traffic, does not end Startup early. */
static inline void bbr_check_full_bw_reached(struct sock *sk,
					     const struct rate_sample *rs)
{
	struct bbr *bbr = bbr_ca(sk);
	u32 bw_thresh;

	if (bbr_full_bw_reached(sk) || !bbr->round_start || rs->is_app_limited)
		return;

	bw_thresh = (u32)(((u64)bbr->full_bw * BBR_FULL_BW_THRESH) >> BBR_SCALE);
	if (bbr_max_bw(sk) >= bw_thresh) {
		bbr->full_bw = bbr_max_bw(sk);
		bbr->full_bw_cnt = 0;
		return;
	}
	++bbr->full_bw_cnt;
	bbr->full_bw_reached = bbr->full_bw_cnt >= BBR_FULL_BW_CNT;
}

/* If pipe is probably full, drain the queue and then enter steady-state. */
static inline void bbr_check_drain(struct sock *sk, const struct rate_sample *rs)
{
	struct bbr *bbr = bbr_ca(sk);

	if (bbr->mode == BBR_STARTUP && bbr_full_bw_reached(sk)) {
		bbr->mode = BBR_DRAIN;	/* remove Startup's queue */
		tcp_sk(sk)->snd_ssthresh =
			bbr_inflight(sk, bbr_max_bw(sk), BBR_UNIT);
	}	/* inflight may already be small enough: */
	if (bbr->mode == BBR_DRAIN &&
	    bbr_packets_in_net_at_edt(sk, tcp_packets_in_flight(tcp_sk(sk))) <=
	    bbr_inflight(sk, bbr_max_bw(sk), BBR_UNIT))
		bbr_reset_probe_bw_mode(sk);
}

static inline void bbr_check_probe_rtt_done(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr *bbr = bbr_ca(sk);

	if (!(bbr->probe_rtt_done_stamp &&
	      after(cca_now_ms(sk), bbr->probe_rtt_done_stamp)))
		return;

	bbr->min_rtt_stamp = cca_now_ms(sk);	/* next ProbeRTT in 10 s */
	tcp_snd_cwnd_set(tp, max(tcp_snd_cwnd(tp), bbr->prior_cwnd));
	bbr_reset_mode(sk);
}

/* RTprop filter and ProbeRTT. A queue that never empties hides RTprop,
 * so when the 10 s min_rtt filter expires without a new minimum, enter
 * ProbeRTT: cwnd drops to 4 packets for max(200 ms, one round), long enough
 * for every BBR flow sharing the bottleneck to drain its share, after which
 * the next RTT sample is the propagation delay. 200 ms per 10 s bounds the
 * cost to ~2%. Flows that idle or run app-limited refresh min_rtt on their
 * own and seldom need it. */
static inline void bbr_update_min_rtt(struct sock *sk,
				      const struct rate_sample *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr *bbr = bbr_ca(sk);
	u32 win_ms = cca_ms_param(sk, BBR_PARAM_MIN_RTT_WIN_US,
				  BBR_MIN_RTT_WIN_US_DEFAULT);
	u32 probe_rtt_ms = cca_ms_param(sk, BBR_PARAM_PROBE_RTT_MODE_US,
					BBR_PROBE_RTT_MODE_US_DEFAULT);
	bool filter_expired;

	/* A new min, or any undelayed sample once the window expired. */
	filter_expired = after(cca_now_ms(sk), bbr->min_rtt_stamp + win_ms);
	if (rs->rtt_us >= 0 &&
	    (rs->rtt_us < (long)bbr->min_rtt_us ||
	     (filter_expired && !rs->is_ack_delayed))) {
		bbr->min_rtt_us = (u32)rs->rtt_us;
		bbr->min_rtt_stamp = cca_now_ms(sk);
	}

	if (probe_rtt_ms > 0 && filter_expired &&
	    !bbr->idle_restart && bbr->mode != BBR_PROBE_RTT) {
		bbr->mode = BBR_PROBE_RTT;
		bbr_save_cwnd(sk);	/* restored when ProbeRTT ends */
		bbr->probe_rtt_done_stamp = 0;
	}

	if (bbr->mode == BBR_PROBE_RTT) {
		/* ProbeRTT's low delivery rate is not the path's: mark it. */
		tp->app_limited =
			(tp->delivered + tcp_packets_in_flight(tp)) ? : 1;
		/* Once inflight is down to 4: 200 ms and one round from now. */
		if (!bbr->probe_rtt_done_stamp &&
		    tcp_packets_in_flight(tp) <= bbr_probe_rtt_cwnd(sk)) {
			bbr->probe_rtt_done_stamp = cca_now_ms(sk) + probe_rtt_ms;
			bbr->probe_rtt_round_done = 0;
			bbr->next_rtt_delivered = tp->delivered;
		} else if (bbr->probe_rtt_done_stamp) {
			if (bbr->round_start)
				bbr->probe_rtt_round_done = 1;
			if (bbr->probe_rtt_round_done)
				bbr_check_probe_rtt_done(sk);
		}
	}
	/* An idle restart ends with the first ACK that delivers data. */
	if (rs->delivered > 0)
		bbr->idle_restart = 0;
}

static inline void bbr_update_gains(struct sock *sk)
{
	struct bbr *bbr = bbr_ca(sk);
	u32 high_gain = bbr_gain_param(sk, BBR_PARAM_HIGH_GAIN_PPM,
				       BBR_HIGH_GAIN_PPM_DEFAULT);

	switch (bbr->mode) {
	case BBR_STARTUP:
		bbr->pacing_gain = high_gain;
		bbr->cwnd_gain = high_gain;
		break;
	case BBR_DRAIN:
		bbr->pacing_gain = bbr_gain_param(sk, BBR_PARAM_DRAIN_GAIN_PPM,
						  BBR_DRAIN_GAIN_PPM_DEFAULT);
		bbr->cwnd_gain = high_gain;	/* keep cwnd */
		break;
	case BBR_PROBE_BW:
		bbr->pacing_gain = bbr->lt_use_bw ? BBR_UNIT :
				   bbr_cycle_pacing_gain(sk, bbr->cycle_idx);
		bbr->cwnd_gain = bbr_gain_param(sk, BBR_PARAM_CWND_GAIN_PPM,
						BBR_CWND_GAIN_PPM_DEFAULT);
		break;
	case BBR_PROBE_RTT:
		bbr->pacing_gain = BBR_UNIT;
		bbr->cwnd_gain = BBR_UNIT;
		break;
	default:
		break;
	}
}

static inline void bbr_update_model(struct sock *sk,
				    const struct rate_sample *rs)
{
	bbr_update_bw(sk, rs);
	bbr_update_ack_aggregation(sk, rs);
	bbr_update_cycle_phase(sk, rs);
	bbr_check_full_bw_reached(sk, rs);
	bbr_check_drain(sk, rs);
	bbr_update_min_rtt(sk, rs);
	if (bbr_hooks.update_model)
		bbr_hooks.update_model(sk, rs);
	bbr_update_gains(sk);
}

/* ------------------------------------------- tcp_congestion_ops bodies */

/* cong_control: update the model, then set pacing rate and cwnd. */
static inline void bbr_core_main(struct sock *sk, u32 ack, int flag,
				 const struct rate_sample *rs)
{
	struct bbr *bbr = bbr_ca(sk);
	u32 bw, pacing_gain;

	bbr_update_model(sk, rs);

	bw = bbr_bw(sk);
	pacing_gain = bbr->pacing_gain;
	if (bbr_hooks.recovery_pacing_gain &&
	    inet_csk(sk)->icsk_ca_state >= TCP_CA_Recovery)
		pacing_gain = bbr_hooks.recovery_pacing_gain(sk, pacing_gain);
	bbr_set_pacing_rate(sk, bw, pacing_gain);
	bbr_set_cwnd(sk, rs, rs->acked_sacked, bw, bbr->cwnd_gain);

	CCA_TRACE(sk, bbr->mode, bbr->pacing_gain, bbr->cwnd_gain,
		  bbr_bw_bytes_per_sec(sk, bw));
	/* The aggregation filter itself (packets), not the cwnd allowance it
	 * becomes (gain-scaled and capped; bbr_ack_aggregation_cwnd): what
	 * bunched ACKs did to the estimate, in every mode. */
	CCA_TRACE_EXTRA_ACKED(sk, bbr_extra_acked(sk));
}

static inline void bbr_core_init(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr *bbr;

	cca_state_init(sk);	/* first: creates the state if not private */
	bbr = bbr_ca(sk);
	bbr->prior_cwnd = 0;
	tp->snd_ssthresh = TCP_INFINITE_SSTHRESH;
	bbr->rtt_cnt = 0;
	bbr->next_rtt_delivered = tp->delivered;
	bbr->prev_ca_state = TCP_CA_Open;
	bbr->packet_conservation = 0;

	bbr->probe_rtt_done_stamp = 0;
	bbr->probe_rtt_round_done = 0;
	bbr->min_rtt_us = tcp_min_rtt(tp);
	bbr->min_rtt_stamp = cca_now_ms(sk);

	minmax_reset(&bbr->bw, bbr->rtt_cnt, 0);  /* init max bw to 0 */

	bbr->has_seen_rtt = 0;
	bbr_init_pacing_rate_from_rtt(sk);

	bbr->round_start = 0;
	bbr->idle_restart = 0;
	bbr->full_bw_reached = 0;
	bbr->full_bw = 0;
	bbr->full_bw_cnt = 0;
	bbr->cycle_mstamp = 0;
	bbr->cycle_idx = 0;
	bbr_reset_lt_bw_sampling(sk);
	bbr_reset_startup_mode(sk);

	bbr->ack_epoch_mstamp = tp->tcp_mstamp;
	bbr->ack_epoch_acked = 0;
	bbr->extra_acked_win_rtts = 0;
	bbr->extra_acked_win_idx = 0;
	bbr->extra_acked[0] = 0;
	bbr->extra_acked[1] = 0;

	if (sk->sk_pacing_status == SK_PACING_NONE)
		sk->sk_pacing_status = SK_PACING_NEEDED;

	bbr_update_gains(sk);	/* so telemetry has startup gains at once */
	CCA_TRACE(sk, bbr->mode, bbr->pacing_gain, bbr->cwnd_gain, 0);
	CCA_TRACE_EXTRA_ACKED(sk, 0);
	if (bbr_hooks.init)
		bbr_hooks.init(sk);
}

/* Provision 3 * cwnd since BBR may slow-start even during recovery. */
static inline u32 bbr_core_sndbuf_expand(struct sock *sk)
{
	return 3;
}

/* Undo (the loss was spurious): BBR did not cut cwnd for it, so keep cwnd,
 * but the loss may have stalled full-pipe and policer detection: restart
 * both. */
static inline u32 bbr_core_undo_cwnd(struct sock *sk)
{
	struct bbr *bbr = bbr_ca(sk);

	bbr->full_bw = 0;   /* spurious slow-down; reset full pipe detection */
	bbr->full_bw_cnt = 0;
	bbr_reset_lt_bw_sampling(sk);
	return tcp_snd_cwnd(tcp_sk(sk));
}

/* Entering recovery: remember cwnd for its end; ssthresh is not used. */
static inline u32 bbr_core_ssthresh(struct sock *sk)
{
	bbr_save_cwnd(sk);
	return tcp_sk(sk)->snd_ssthresh;
}

static inline void bbr_core_set_state(struct sock *sk, u8 new_state)
{
	struct bbr *bbr = bbr_ca(sk);

	if (new_state == TCP_CA_Loss) {
		struct rate_sample rs = { .losses = 1 };

		bbr->prev_ca_state = TCP_CA_Loss;
		bbr->full_bw = 0;
		bbr->round_start = 1;	/* an RTO ends a round */
		bbr_lt_bw_sampling(sk, &rs);
	}
}

/* After an idle period, restart at the estimated bw (ProbeBW) rather than
 * with a burst, and check whether ProbeRTT is already done. */
static inline void bbr_core_cwnd_event(struct sock *sk, int event)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr *bbr = bbr_ca(sk);

	if (event == CA_EVENT_TX_START && tp->app_limited) {
		bbr->idle_restart = 1;
		bbr->ack_epoch_mstamp = tp->tcp_mstamp;
		bbr->ack_epoch_acked = 0;
		/* No reason to burst above bw after a pause: pace at bw. */
		if (bbr->mode == BBR_PROBE_BW)
			bbr_set_pacing_rate(sk, bbr_bw(sk), BBR_UNIT);
		else if (bbr->mode == BBR_PROBE_RTT)
			bbr_check_probe_rtt_done(sk);
	}
}

/* min_tso_segs (CCA_MIN_TSO_SEGS_CB in the registration below): not
 * registered under BPF unless CCA_BPF_MIN_TSO_SEGS
 * (ccarena_compat.h: a BPF min_tso_segs makes Linux 6.18 send unpaced
 * bursts; one paced BBR flow, 20 Mbit/s, 40 ms, 0.5 BDP: 10-ms in-flight
 * increases of 69-71 packets against the kernel's bbr's 18-22, 223-415
 * retransmissions in 13 s against 0-18). Without the op Linux floors TSO
 * bursts at sysctl_tcp_min_tso_segs (2), v1's value above 1.2 Mbit/s. */

/* release: only a state outside the private area has anything to free. */
#ifdef BBR_STATE_EXTENDED
#define BBR_CORE_RELEASE_CB(name)					\
	CCA_CB(void, name##_cb_release, struct sock *sk)		\
	{								\
		cca_state_release(sk);					\
	}
#define BBR_CORE_RELEASE_MEMBER(name) .release = CCA_FN(name##_cb_release),
#else
#define BBR_CORE_RELEASE_CB(name)
#define BBR_CORE_RELEASE_MEMBER(name)
#endif

/*
 * BBR_CORE_REGISTER(name): the tcp_congestion_ops members of BBR and of
 * every derivative are the core's functions above; this defines one thin
 * callback per member (a separate BPF program each, which is why they
 * cannot simply be shared) and registers them under `name`. The derivative
 * declares its CCA_PARAMS table itself.
 */
#define BBR_CORE_REGISTER(name)						\
	CCA_CB(void, name##_cb_init, struct sock *sk)			\
	{								\
		bbr_core_init(sk);					\
	}								\
	CCA_CB(void, name##_cb_main, struct sock *sk, u32 ack, int flag, \
	       const struct rate_sample *rs)				\
	{								\
		bbr_core_main(sk, ack, flag, rs);			\
	}								\
	CCA_CB(u32, name##_cb_ssthresh, struct sock *sk)		\
	{								\
		return BBR_HOOK(ssthresh, bbr_core_ssthresh(sk), sk);	\
	}								\
	CCA_CB(u32, name##_cb_undo_cwnd, struct sock *sk)		\
	{								\
		return BBR_HOOK(undo_cwnd, bbr_core_undo_cwnd(sk), sk);	\
	}								\
	CCA_CB(void, name##_cb_set_state, struct sock *sk, u8 new_state) \
	{								\
		u8 old_state = inet_csk(sk)->icsk_ca_state;		\
									\
		bbr_core_set_state(sk, new_state);			\
		if (bbr_hooks.set_state)				\
			bbr_hooks.set_state(sk, old_state, new_state);	\
	}								\
	CCA_CB(void, name##_cb_cwnd_event, struct sock *sk, int event)	\
	{								\
		bbr_core_cwnd_event(sk, event);				\
	}								\
	CCA_MIN_TSO_SEGS_CB(name, bbr_min_tso_segs_of(sk))		\
	CCA_CB(u32, name##_cb_sndbuf_expand, struct sock *sk)		\
	{								\
		return bbr_core_sndbuf_expand(sk);			\
	}								\
	BBR_CORE_RELEASE_CB(name)					\
	CCA_REGISTER(name,						\
		BBR_CORE_RELEASE_MEMBER(name)				\
		.flags = TCP_CONG_NON_RESTRICTED,			\
		.init = CCA_FN(name##_cb_init),				\
		.cong_control = CCA_FN(name##_cb_main),			\
		.ssthresh = CCA_FN(name##_cb_ssthresh),			\
		.undo_cwnd = CCA_FN(name##_cb_undo_cwnd),		\
		.set_state = CCA_FN(name##_cb_set_state),		\
		.cwnd_event = CCA_FN(name##_cb_cwnd_event),		\
		CCA_MIN_TSO_SEGS_MEMBER(name)				\
		.sndbuf_expand = CCA_FN(name##_cb_sndbuf_expand))

#endif /* CCARENA_BBR_CORE_H */
