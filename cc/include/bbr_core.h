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
 *  - Time: Linux's jiffies stamps (min_rtt_stamp, probe_rtt_done_stamp,
 *    lt_last_stamp) are ms from tp->tcp_mstamp, i.e. HZ = 1000.
 *  - bbr_packets_in_net_at_edt(): the EDT lead comes from
 *    cca_edt_lead_us(), which is 0 in the native build (no tcp_wstamp_ns
 *    in the simulator's socket); the BPF build reads the kernel's fields.
 *  - bbr_tso_segs_goal(): the GSO cap is min(sk_gso_max_size, 64 KB)
 *    instead of the constant 64 KB, so a simulated sender without TSO can
 *    set a smaller sk_gso_max_size; with 64 KB (the default) it is Linux.
 *  - get_info (tcp_info export) is not implemented: it has no user here.
 *  - The tunables are a parameter table (CCA_PARAM) instead of module
 *    constants; defaults are Linux's. high_gain/cwnd_gain are capped at
 *    1023 (10-bit fields, as in Linux's struct bbr).
 *
 * ---------------------------------------------------- reuse by derivatives
 * Why a header of static inline functions with macro hooks, rather than a
 * library with function pointers: a BPF program cannot call through
 * function pointers and every CC must be one self-contained object, so the
 * shared code is compiled into each derivative, and the points where a
 * derivative differs are resolved at compile time. A derivative
 * (cc/bbq.c, ...) does:
 *
 *     static u32 bbq_phase_len_us(struct sock *sk);     // prototypes first
 *     #define BBR_HOOK_PHASE_LEN_US(sk) bbq_phase_len_us(sk)
 *     #define BBR_EXT_FIELDS u32 queue_seen_stamp;      // its own state
 *     #include "bbr_core.h"
 *     static u32 bbq_phase_len_us(struct sock *sk) { ... }
 *     ... CCA_CB wrappers calling bbr_core_*(), CCA_PARAMS, CCA_REGISTER.
 *
 * Hooks (default = Linux BBR; add more here when a derivative needs one):
 *   BBR_HOOK_PHASE_LEN_US(sk)        us a ProbeBW gain phase must last
 *                                    before it may end (default min_rtt).
 *   BBR_HOOK_TARGET_CWND(sk, cwnd)   adjust the target cwnd computed by
 *                                    bbr_set_cwnd() (default: unchanged).
 *   BBR_HOOK_UPDATE_MODEL(sk, rs)    per-ACK extra model update, after
 *                                    BBR's own and before gains are used.
 *   BBR_HOOK_INIT(sk)                extra initialisation after bbr_init.
 *   BBR_EXT_FIELDS                   members appended to struct bbr (the
 *                                    _Static_assert guards the 104 bytes).
 * Parameter indexes of a derivative start at BBR_PARAM_COUNT and its
 * CCA_PARAMS table starts with BBR_CORE_PARAM_DEFS.
 */
#ifndef CCARENA_BBR_CORE_H
#define CCARENA_BBR_CORE_H

#include "ccarena_compat.h"
#include "minmax.h"

#define BW_SCALE 24
#define BW_UNIT (1 << BW_SCALE)

#define BBR_SCALE 8	/* scaling factor for fractions in BBR (e.g. gains) */
#define BBR_UNIT (1 << BBR_SCALE)

/* BBR has the following modes for deciding how fast to send (trace_mode): */
enum bbr_mode {
	BBR_STARTUP = 0,	/* ramp up sending rate rapidly to fill pipe */
	BBR_DRAIN = 1,		/* drain any queue created during startup */
	BBR_PROBE_BW = 2,	/* discover, share bw: pace around estimated bw */
	BBR_PROBE_RTT = 3,	/* cut inflight to min to probe min_rtt */
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
	    packet_conservation:1, /* use packet conservation? */
	    round_start:1,	   /* start of packet-timed tx->ack round? */
	    idle_restart:1,	   /* restarting after idle? */
	    probe_rtt_round_done:1, /* a BBR_PROBE_RTT round at 4 pkts? */
	    lt_is_sampling:1,	   /* taking long-term ("LT") samples now? */
	    lt_rtt_cnt:7,	   /* rounds in long-term sampling interval */
	    lt_use_bw:1,	   /* use lt_bw as our bw estimate? */
	    spare_a:13;		   /* free for derivatives */
	u32 pacing_gain:10,	   /* current gain for setting pacing rate, <<8 */
	    cwnd_gain:10,	   /* current gain for setting cwnd, <<8 */
	    full_bw_reached:1,	   /* reached full bw in Startup? */
	    full_bw_cnt:2,	   /* rounds without large bw gains */
	    cycle_idx:3,	   /* current index in pacing_gain cycle array */
	    has_seen_rtt:1,	   /* have we seen an RTT sample yet? */
	    spare_b:5;		   /* free for derivatives */
	u32 ack_epoch_acked:20,	   /* packets (S)ACKed in sampling epoch */
	    extra_acked_win_rtts:5, /* rounds in the current extra_acked window */
	    extra_acked_win_idx:1, /* current index in extra_acked array */
	    spare_c:6;		   /* free for derivatives */
	BBR_EXT_FIELDS
};

_Static_assert(sizeof(struct bbr) <= ICSK_CA_PRIV_SIZE,
	       "struct bbr must fit in icsk_ca_priv");

#define CYCLE_LEN 8	/* number of phases in a pacing gain cycle */

/* Window length of bw filter (in rounds): a full gain cycle plus slack. */
#define BBR_BW_RTTS (CYCLE_LEN + 2)
/* If bw has increased by this factor, full bw may not yet be reached. */
#define BBR_FULL_BW_THRESH (BBR_UNIT * 5 / 4)
/* After this many rounds of < 25% bw growth, estimate the pipe is full. */
#define BBR_FULL_BW_CNT 3
/* Minimum TSO burst rate: below 1.2 Mbit/s send one packet per burst. */
#define BBR_MIN_TSO_RATE 1200000
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

/* ------------------------------------------------------------ parameters */
enum bbr_param {
	/* Startup gain 2/ln2: the smallest that doubles delivery per round. */
	BBR_PARAM_HIGH_GAIN,
	/* Drain gain ln2/2: the inverse of startup, drains its queue in 1 RTT. */
	BBR_PARAM_DRAIN_GAIN,
	/* ProbeBW cwnd gain 2: tolerates delayed/stretched ACKs. */
	BBR_PARAM_CWND_GAIN,
	/* ProbeBW probing phase 5/4: gently probe for more bw. */
	BBR_PARAM_PROBE_UP_GAIN,
	/* ProbeBW draining phase 3/4: drain the queue the probe made. */
	BBR_PARAM_PROBE_DOWN_GAIN,
	/* min_rtt filter window, s: path changes are rarer than 10 s. */
	BBR_PARAM_MIN_RTT_WIN_SEC,
	/* Time in ProbeRTT at min cwnd, ms: long enough to see an empty queue. */
	BBR_PARAM_PROBE_RTT_MODE_MS,
	/* Min cwnd, packets: keeps ACK clocking with delayed ACKs. */
	BBR_PARAM_CWND_MIN_TARGET,
	/* Gain for the ACK aggregation allowance, << 8. */
	BBR_PARAM_EXTRA_ACKED_GAIN,
	/* Cap of the aggregation allowance, us of bw: bounds its queue. */
	BBR_PARAM_EXTRA_ACKED_MAX_US,
	/* Pace 1% below bw, to drain queues from inaccurate bw estimates. */
	BBR_PARAM_PACING_MARGIN_PERCENT,
	BBR_PARAM_COUNT
};

#define BBR_HIGH_GAIN_DEFAULT (BBR_UNIT * 2885 / 1000 + 1)
#define BBR_DRAIN_GAIN_DEFAULT (BBR_UNIT * 1000 / 2885)
#define BBR_CWND_GAIN_DEFAULT (BBR_UNIT * 2)
#define BBR_PROBE_UP_GAIN_DEFAULT (BBR_UNIT * 5 / 4)
#define BBR_PROBE_DOWN_GAIN_DEFAULT (BBR_UNIT * 3 / 4)
#define BBR_MIN_RTT_WIN_SEC_DEFAULT 10
#define BBR_PROBE_RTT_MODE_MS_DEFAULT 200
#define BBR_CWND_MIN_TARGET_DEFAULT 4
#define BBR_EXTRA_ACKED_GAIN_DEFAULT BBR_UNIT
#define BBR_EXTRA_ACKED_MAX_US_DEFAULT (100 * 1000)
#define BBR_PACING_MARGIN_PERCENT_DEFAULT 1

/* The rows a derivative's CCA_PARAMS table starts with. */
#define BBR_CORE_PARAM_DEFS						\
	CCA_PARAM_DEF(BBR_PARAM_HIGH_GAIN, "high_gain", BBR_HIGH_GAIN_DEFAULT) \
	CCA_PARAM_DEF(BBR_PARAM_DRAIN_GAIN, "drain_gain", BBR_DRAIN_GAIN_DEFAULT) \
	CCA_PARAM_DEF(BBR_PARAM_CWND_GAIN, "cwnd_gain", BBR_CWND_GAIN_DEFAULT) \
	CCA_PARAM_DEF(BBR_PARAM_PROBE_UP_GAIN, "probe_up_gain",		\
		      BBR_PROBE_UP_GAIN_DEFAULT)			\
	CCA_PARAM_DEF(BBR_PARAM_PROBE_DOWN_GAIN, "probe_down_gain",	\
		      BBR_PROBE_DOWN_GAIN_DEFAULT)			\
	CCA_PARAM_DEF(BBR_PARAM_MIN_RTT_WIN_SEC, "min_rtt_win_sec",	\
		      BBR_MIN_RTT_WIN_SEC_DEFAULT)			\
	CCA_PARAM_DEF(BBR_PARAM_PROBE_RTT_MODE_MS, "probe_rtt_mode_ms", \
		      BBR_PROBE_RTT_MODE_MS_DEFAULT)			\
	CCA_PARAM_DEF(BBR_PARAM_CWND_MIN_TARGET, "cwnd_min_target",	\
		      BBR_CWND_MIN_TARGET_DEFAULT)			\
	CCA_PARAM_DEF(BBR_PARAM_EXTRA_ACKED_GAIN, "extra_acked_gain",	\
		      BBR_EXTRA_ACKED_GAIN_DEFAULT)			\
	CCA_PARAM_DEF(BBR_PARAM_EXTRA_ACKED_MAX_US, "extra_acked_max_us", \
		      BBR_EXTRA_ACKED_MAX_US_DEFAULT)			\
	CCA_PARAM_DEF(BBR_PARAM_PACING_MARGIN_PERCENT,			\
		      "pacing_margin_percent",				\
		      BBR_PACING_MARGIN_PERCENT_DEFAULT)

/* A gain parameter, capped to what the 10-bit gain fields hold. */
static inline u32 bbr_gain_param(struct sock *sk, u32 index, u32 dflt)
{
	return (u32)min_t(u64, CCA_PARAM(sk, index, dflt), 1023);
}

static inline u32 bbr_u32_param(struct sock *sk, u32 index, u32 dflt)
{
	return (u32)min_t(u64, CCA_PARAM(sk, index, dflt), 0xffffffffULL);
}

/* ----------------------------------------------------------------- hooks */
#ifndef BBR_HOOK_PHASE_LEN_US
#define BBR_HOOK_PHASE_LEN_US(sk) (((struct bbr *)inet_csk_ca(sk))->min_rtt_us)
#endif
#ifndef BBR_HOOK_TARGET_CWND
#define BBR_HOOK_TARGET_CWND(sk, cwnd) (cwnd)
#endif
#ifndef BBR_HOOK_UPDATE_MODEL
#define BBR_HOOK_UPDATE_MODEL(sk, rs) do { } while (0)
#endif
#ifndef BBR_HOOK_INIT
#define BBR_HOOK_INIT(sk) do { } while (0)
#endif

static inline struct bbr *bbr_ca(const struct sock *sk)
{
	return (struct bbr *)inet_csk_ca(sk);
}

/* Do we estimate that STARTUP filled the pipe? */
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
	u32 margin = bbr_u32_param(sk, BBR_PARAM_PACING_MARGIN_PERCENT,
				   BBR_PACING_MARGIN_PERCENT_DEFAULT);

	margin = min(margin, 99U);
	rate *= mss;
	rate *= gain;
	rate >>= BBR_SCALE;
	rate *= USEC_PER_SEC / 100 * (100 - margin);
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
		bbr_gain_param(sk, BBR_PARAM_HIGH_GAIN, BBR_HIGH_GAIN_DEFAULT));
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

/* Minimum TSO segments per burst: 1 below 1.2 Mbit/s, else 2. */
static inline u32 bbr_min_tso_segs_of(struct sock *sk)
{
	return sk->sk_pacing_rate < (BBR_MIN_TSO_RATE >> 3) ? 1 : 2;
}

/* Packets per TSO burst: ~1 ms of data at the pacing rate (rate >>
 * sk_pacing_shift), within the GSO size limit, at most 127. */
static inline u32 bbr_tso_segs_goal(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	u32 gso = sk->sk_gso_max_size;
	u32 segs, bytes;

	if (gso == 0 || gso > GSO_LEGACY_MAX_SIZE)
		gso = GSO_LEGACY_MAX_SIZE;
	bytes = (u32)min_t(u64, sk->sk_pacing_rate >> sk->sk_pacing_shift,
			   gso - 1 - MAX_TCP_HEADER);
	segs = max_t(u32, bytes / max(tp->mss_cache, 1U),
		     bbr_min_tso_segs_of(sk));
	return min(segs, 0x7FU);
}

/* Save "last known good" cwnd so we can restore it after losses/ProbeRTT. */
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

	if (bbr->min_rtt_us == ~0U)	/* no valid RTT samples yet? */
		return TCP_INIT_CWND;	/* be safe: cap at default initial cwnd */

	w = (u64)bw * bbr->min_rtt_us;
	/* Apply a gain to the given value, remove the BW_SCALE shift, and
	 * round the value up to avoid a negative feedback loop. */
	return (u32)(((w * gain) >> BBR_SCALE) + BW_UNIT - 1) / BW_UNIT;
}

/* To achieve full performance in high-speed paths, budget enough cwnd to
 * fit full-sized skbs in-flight on both end hosts (3 TSO bursts: sender's
 * qdisc, in flight, receiver's GRO), round to even for delayed ACKs, and in
 * the probing phase add 2 so inflight can actually exceed the BDP. */
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
	u32 gain = bbr_u32_param(sk, BBR_PARAM_EXTRA_ACKED_GAIN,
				 BBR_EXTRA_ACKED_GAIN_DEFAULT);
	u32 max_us = bbr_u32_param(sk, BBR_PARAM_EXTRA_ACKED_MAX_US,
				   BBR_EXTRA_ACKED_MAX_US_DEFAULT);
	u32 max_aggr_cwnd, aggr_cwnd = 0;

	if (gain && bbr_full_bw_reached(sk)) {
		max_aggr_cwnd = (u32)(((u64)bbr_bw(sk) * max_us) / BW_UNIT);
		aggr_cwnd = (gain * bbr_extra_acked(sk)) >> BBR_SCALE;
		aggr_cwnd = min(aggr_cwnd, max_aggr_cwnd);
	}
	return aggr_cwnd;
}

/* Loss recovery: on the first round of recovery use packet conservation
 * (cwnd = inflight + acked, i.e. send one packet per packet delivered);
 * losses reduce cwnd one for one; on leaving recovery restore the cwnd
 * saved by bbr_save_cwnd(). Returns true if conservation decides cwnd. */
static inline bool bbr_set_cwnd_to_recover_or_restore(
	struct sock *sk, const struct rate_sample *rs, u32 acked, u32 *new_cwnd)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr *bbr = bbr_ca(sk);
	u8 prev_state = bbr->prev_ca_state, state = inet_csk(sk)->icsk_ca_state;
	u32 cwnd = tcp_snd_cwnd(tp);

	/* An ACK for P pkts should release at most 2*P packets. We do this
	 * in two steps. First, here we deduct the number of lost packets.
	 * Then, in bbr_set_cwnd() we slow start up toward the target cwnd. */
	if (rs->losses > 0)
		cwnd = (u32)max_t(s32, (s32)cwnd - rs->losses, 1);

	if (state == TCP_CA_Recovery && prev_state != TCP_CA_Recovery) {
		/* Starting 1st round of Recovery, so do packet conservation. */
		bbr->packet_conservation = 1;
		bbr->next_rtt_delivered = tp->delivered;  /* start round now */
		/* Cut unused cwnd from app behavior, TSQ, or TSO deferral: */
		cwnd = tcp_packets_in_flight(tp) + acked;
	} else if (prev_state >= TCP_CA_Recovery && state < TCP_CA_Recovery) {
		/* Exiting loss recovery; restore cwnd saved before recovery. */
		cwnd = max(cwnd, bbr->prior_cwnd);
		bbr->packet_conservation = 0;
	}
	bbr->prev_ca_state = state;

	if (bbr->packet_conservation) {
		*new_cwnd = max(cwnd, tcp_packets_in_flight(tp) + acked);
		return true;	/* yes, using packet conservation */
	}
	*new_cwnd = cwnd;
	return false;
}

/* Slow-start up toward target cwnd (if bw estimate is growing, or packet
 * loss has drawn us down below target), or snap down to target if we're
 * above it. */
static inline void bbr_set_cwnd(struct sock *sk, const struct rate_sample *rs,
				u32 acked, u32 bw, int gain)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr *bbr = bbr_ca(sk);
	u32 cwnd = tcp_snd_cwnd(tp), target_cwnd = 0;
	u32 min_target = bbr_u32_param(sk, BBR_PARAM_CWND_MIN_TARGET,
				       BBR_CWND_MIN_TARGET_DEFAULT);

	if (!acked)
		goto done;  /* no packet fully ACKed; just apply caps */

	if (bbr_set_cwnd_to_recover_or_restore(sk, rs, acked, &cwnd))
		goto done;

	target_cwnd = bbr_bdp(sk, bw, gain);

	/* Increment the cwnd to account for excess ACKed data that seems
	 * due to aggregation (of data and/or ACKs) visible in the ACK stream. */
	target_cwnd += bbr_ack_aggregation_cwnd(sk);
	target_cwnd = bbr_quantization_budget(sk, target_cwnd);
	target_cwnd = BBR_HOOK_TARGET_CWND(sk, target_cwnd);

	/* If we're below target cwnd, slow start cwnd toward target cwnd. */
	if (bbr_full_bw_reached(sk))  /* only cut cwnd if we filled the pipe */
		cwnd = min(cwnd + acked, target_cwnd);
	else if (cwnd < target_cwnd || tp->delivered < TCP_INIT_CWND)
		cwnd = cwnd + acked;
	cwnd = max(cwnd, min_target);

done:
	tcp_snd_cwnd_set(tp, min(cwnd, tp->snd_cwnd_clamp));  /* apply cap */
	if (bbr->mode == BBR_PROBE_RTT)  /* drain queue, refresh min_rtt */
		tcp_snd_cwnd_set(tp, min(tcp_snd_cwnd(tp), min_target));
}

/* ProbeBW pacing gain of cycle phase idx: up, down, then cruise at 1. */
static inline u32 bbr_cycle_pacing_gain(struct sock *sk, u32 idx)
{
	if (idx == 0)
		return bbr_gain_param(sk, BBR_PARAM_PROBE_UP_GAIN,
				      BBR_PROBE_UP_GAIN_DEFAULT);
	if (idx == 1)
		return bbr_gain_param(sk, BBR_PARAM_PROBE_DOWN_GAIN,
				      BBR_PROBE_DOWN_GAIN_DEFAULT);
	return BBR_UNIT;
}

/* End cycle phase if it's time and/or we hit the phase's in-flight target. */
static inline bool bbr_is_next_cycle_phase(struct sock *sk,
					   const struct rate_sample *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr *bbr = bbr_ca(sk);
	bool is_full_length =
		tcp_stamp_us_delta(tp->delivered_mstamp, bbr->cycle_mstamp) >
		BBR_HOOK_PHASE_LEN_US(sk);
	u32 inflight, bw;

	/* The pacing_gain of 1.0 paces at the estimated bw to try to fully
	 * use the pipe without increasing the queue. */
	if (bbr->pacing_gain == BBR_UNIT)
		return is_full_length;		/* just use wall clock time */

	inflight = bbr_packets_in_net_at_edt(sk, rs->prior_in_flight);
	bw = bbr_max_bw(sk);

	/* A pacing_gain > 1.0 probes for bw by trying to raise inflight to at
	 * least pacing_gain*BDP; this may take more than min_rtt if min_rtt
	 * is small (e.g. on a LAN). We do not persist if packets are lost,
	 * since a path with small buffers may not hold that much. */
	if (bbr->pacing_gain > BBR_UNIT)
		return is_full_length &&
			(rs->losses ||  /* perhaps pacing_gain*BDP won't fit */
			 inflight >= bbr_inflight(sk, bw, bbr->pacing_gain));

	/* A pacing_gain < 1.0 tries to drain extra queue we added if bw
	 * probing didn't find more bw. If inflight falls to match BDP then we
	 * estimate queue is drained; persisting would underutilize the pipe. */
	return is_full_length ||
		inflight <= bbr_inflight(sk, bw, BBR_UNIT);
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
	bbr_advance_cycle_phase(sk);	/* flip to next phase of gain cycle */
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

	if (bbr->lt_bw) {  /* do we have bw from a previous interval? */
		/* Is new bw close to the lt_bw from the previous interval? */
		diff = bw > bbr->lt_bw ? bw - bbr->lt_bw : bbr->lt_bw - bw;
		if (((u64)diff * BBR_UNIT <= (u64)BBR_LT_BW_RATIO * bbr->lt_bw) ||
		    (bbr_rate_bytes_per_sec(sk, diff, BBR_UNIT) <=
		     BBR_LT_BW_DIFF)) {
			/* All criteria are met; estimate we're policed. */
			bbr->lt_bw = (bw + bbr->lt_bw) >> 1;  /* avg 2 intvls */
			bbr->lt_use_bw = 1;
			bbr->pacing_gain = BBR_UNIT;  /* try to avoid drops */
			bbr->lt_rtt_cnt = 0;
			return;
		}
	}
	bbr->lt_bw = bw;
	bbr_reset_lt_bw_sampling_interval(sk);
}

/* Token-bucket traffic policers are common (see "An Internet-Wide Analysis
 * of Traffic Policing", SIGCOMM 2016). BBR detects token-bucket policers
 * and explicitly models their policed rate, to reduce unnecessary losses.
 * We estimate that we're policed if we see 2 consecutive sampling intervals
 * with consistent throughput and high packet loss. If we think we're being
 * policed, set lt_bw to the "long-term" average delivery rate from those
 * 2 intervals. */
static inline void bbr_lt_bw_sampling(struct sock *sk,
				      const struct rate_sample *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr *bbr = bbr_ca(sk);
	u32 lost, delivered;
	u64 bw;
	u32 t;

	if (bbr->lt_use_bw) {	/* already using long-term rate, lt_bw? */
		if (bbr->mode == BBR_PROBE_BW && bbr->round_start &&
		    ++bbr->lt_rtt_cnt >= BBR_LT_BW_MAX_RTTS) {
			bbr_reset_lt_bw_sampling(sk);    /* stop using lt_bw */
			bbr_reset_probe_bw_mode(sk);  /* restart gain cycling */
		}
		return;
	}

	/* Wait for the first loss before sampling, to let the policer exhaust
	 * its tokens and estimate the steady-state rate allowed by the policer.
	 * Starting samples earlier includes bursts that over-estimate the bw. */
	if (!bbr->lt_is_sampling) {
		if (!rs->losses)
			return;
		bbr_reset_lt_bw_sampling_interval(sk);
		bbr->lt_is_sampling = true;
	}

	/* To avoid underestimates, reset sampling if we run out of data. */
	if (rs->is_app_limited) {
		bbr_reset_lt_bw_sampling(sk);
		return;
	}

	if (bbr->round_start)
		bbr->lt_rtt_cnt++;	/* count round trips in this interval */
	if (bbr->lt_rtt_cnt < BBR_LT_INTVL_MIN_RTTS)
		return;		/* sampling interval needs to be longer */
	if (bbr->lt_rtt_cnt > 4 * BBR_LT_INTVL_MIN_RTTS) {
		bbr_reset_lt_bw_sampling(sk);  /* interval is too long */
		return;
	}

	/* End sampling interval when a packet is lost, so we estimate the
	 * policer tokens were exhausted. Stopping the sampling before the
	 * tokens are exhausted under-estimates the policed rate. */
	if (!rs->losses)
		return;

	/* Calculate packets lost and delivered in sampling interval. */
	lost = tp->lost - bbr->lt_last_lost;
	delivered = tp->delivered - bbr->lt_last_delivered;
	/* Is loss rate (lost/delivered) >= lt_loss_thresh? If not, wait. */
	if (!delivered || ((u64)lost << BBR_SCALE) <
			  (u64)BBR_LT_LOSS_THRESH * delivered)
		return;

	/* Find average delivery rate in this sampling interval. */
	t = (u32)div_u64(tp->delivered_mstamp, USEC_PER_MSEC) -
	    bbr->lt_last_stamp;
	if ((s32)t < 1)
		return;		/* interval is less than one ms, so wait */
	/* Check if we can multiply without overflow */
	if (t >= ~0U / USEC_PER_MSEC) {
		bbr_reset_lt_bw_sampling(sk);  /* interval too long; reset */
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
		return; /* Not a valid observation */

	/* See if we've reached the next RTT: a round ends when a packet sent
	 * after the previous round ended has been delivered. */
	if (!before(rs->prior_delivered, bbr->next_rtt_delivered)) {
		bbr->next_rtt_delivered = tp->delivered;
		bbr->rtt_cnt++;
		bbr->round_start = 1;
		bbr->packet_conservation = 0;
	}

	bbr_lt_bw_sampling(sk, rs);

	/* Divide delivered by the interval to find a (lower bound) bottleneck
	 * bandwidth sample. Delivered is in packets and interval_us in uS and
	 * ratio will be <<1 for most connections. So delivered is first scaled. */
	bw = div64_u64((u64)rs->delivered * BW_UNIT, (u64)rs->interval_us);

	/* If this sample is application-limited, it is likely to have a very
	 * low delivered count that represents application behavior rather than
	 * the available network rate. Such a sample could drag down estimated
	 * bw, causing needless slow-down. Thus, to continue to send at the
	 * last measured network rate, we filter out app-limited samples unless
	 * they describe the path bw at least as well as our bw model. */
	if (!rs->is_app_limited || bw >= bbr_max_bw(sk)) {
		/* Incorporate new sample into our max bw filter. */
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
	u32 gain = bbr_u32_param(sk, BBR_PARAM_EXTRA_ACKED_GAIN,
				 BBR_EXTRA_ACKED_GAIN_DEFAULT);

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

	/* Compute how many packets we expected to be delivered over epoch. */
	epoch_us = tcp_stamp_us_delta(tp->delivered_mstamp,
				      bbr->ack_epoch_mstamp);
	expected_acked = (u32)(((u64)bbr_bw(sk) * epoch_us) / BW_UNIT);

	/* Reset the aggregation epoch if ACK rate is below expected rate or
	 * significantly large no. of ack received since epoch (potentially
	 * quite old epoch). */
	if (bbr->ack_epoch_acked <= expected_acked ||
	    (bbr->ack_epoch_acked + rs->acked_sacked >=
	     BBR_ACK_EPOCH_ACKED_RESET_THRESH)) {
		bbr->ack_epoch_acked = 0;
		bbr->ack_epoch_mstamp = tp->delivered_mstamp;
		expected_acked = 0;
	}

	/* Compute excess data delivered, beyond what was expected. */
	bbr->ack_epoch_acked = min_t(u32, 0xFFFFF,
				     bbr->ack_epoch_acked + rs->acked_sacked);
	extra_acked = bbr->ack_epoch_acked - expected_acked;
	extra_acked = min(extra_acked, tcp_snd_cwnd(tp));
	if (extra_acked > bbr_extra_acked_cur(bbr))
		bbr_extra_acked_set_cur(bbr, (u16)extra_acked);
}

/* Estimate when the pipe is full, using the change in delivery rate: BBR
 * estimates that STARTUP filled the pipe if the estimated bw hasn't changed
 * by at least bbr_full_bw_thresh (25%) after bbr_full_bw_cnt (3)
 * non-app-limited rounds. Why 3 rounds: 1: rwin autotuning grows the rwin,
 * 2: we fill the higher rwin, 3: we get higher delivery rate samples. Or
 * transient cross-traffic or radio noise can go away. CUBIC Hystart shares
 * a similar design goal, but uses delay and inter-ACK spacing instead of
 * bandwidth. */
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
		bbr->mode = BBR_DRAIN;	/* drain queue we created */
		tcp_sk(sk)->snd_ssthresh =
			bbr_inflight(sk, bbr_max_bw(sk), BBR_UNIT);
	}	/* fall through to check if in-flight is already small: */
	if (bbr->mode == BBR_DRAIN &&
	    bbr_packets_in_net_at_edt(sk, tcp_packets_in_flight(tcp_sk(sk))) <=
	    bbr_inflight(sk, bbr_max_bw(sk), BBR_UNIT))
		bbr_reset_probe_bw_mode(sk);  /* we estimate queue is drained */
}

static inline void bbr_check_probe_rtt_done(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr *bbr = bbr_ca(sk);

	if (!(bbr->probe_rtt_done_stamp &&
	      after(cca_now_ms(sk), bbr->probe_rtt_done_stamp)))
		return;

	bbr->min_rtt_stamp = cca_now_ms(sk);  /* wait a while until PROBE_RTT */
	tcp_snd_cwnd_set(tp, max(tcp_snd_cwnd(tp), bbr->prior_cwnd));
	bbr_reset_mode(sk);
}

/* The goal of PROBE_RTT mode is to have BBR flows cooperatively and
 * periodically drain the bottleneck queue, to converge to measure the true
 * min_rtt (unloaded propagation delay). This allows the flows to keep
 * queues small (reducing queuing delay and packet loss) and achieve
 * fairness among BBR flows.
 *
 * The min_rtt filter window is 10 seconds. When the min_rtt estimate
 * expires, we enter PROBE_RTT mode and cap the cwnd at bbr_cwnd_min_target
 * (4 packets). After at least bbr_probe_rtt_mode_ms (200 ms) and at least
 * one packet-timed round trip elapsed with that flight size lower bound, we
 * leave PROBE_RTT mode and re-enter the previous mode. BBR uses 200 ms to
 * approximately bound the performance penalty of PROBE_RTT's cwnd capping
 * to roughly 2% (200 ms / 10 s).
 *
 * Note that flows need only pay 2% if they are busy sending over the last
 * 10 seconds. Interactive applications (e.g., Web, RPCs, video chunks)
 * often have natural silences or low-rate periods within 10 seconds where
 * the rate is low enough for long enough to drain its queue in the
 * bottleneck. We pick up these min RTT measurements opportunistically with
 * our min_rtt filter. :-) */
static inline void bbr_update_min_rtt(struct sock *sk,
				      const struct rate_sample *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr *bbr = bbr_ca(sk);
	u32 win_ms = bbr_u32_param(sk, BBR_PARAM_MIN_RTT_WIN_SEC,
				   BBR_MIN_RTT_WIN_SEC_DEFAULT) * MSEC_PER_SEC;
	u32 probe_rtt_ms = bbr_u32_param(sk, BBR_PARAM_PROBE_RTT_MODE_MS,
					 BBR_PROBE_RTT_MODE_MS_DEFAULT);
	u32 min_target = bbr_u32_param(sk, BBR_PARAM_CWND_MIN_TARGET,
				       BBR_CWND_MIN_TARGET_DEFAULT);
	bool filter_expired;

	/* Track min RTT seen in the min_rtt_win_sec filter window: */
	filter_expired = after(cca_now_ms(sk), bbr->min_rtt_stamp + win_ms);
	if (rs->rtt_us >= 0 &&
	    (rs->rtt_us < (long)bbr->min_rtt_us ||
	     (filter_expired && !rs->is_ack_delayed))) {
		bbr->min_rtt_us = (u32)rs->rtt_us;
		bbr->min_rtt_stamp = cca_now_ms(sk);
	}

	if (probe_rtt_ms > 0 && filter_expired &&
	    !bbr->idle_restart && bbr->mode != BBR_PROBE_RTT) {
		bbr->mode = BBR_PROBE_RTT;  /* dip, drain queue */
		bbr_save_cwnd(sk);  /* note cwnd so we can restore it */
		bbr->probe_rtt_done_stamp = 0;
	}

	if (bbr->mode == BBR_PROBE_RTT) {
		/* Ignore low rate samples during this mode. */
		tp->app_limited =
			(tp->delivered + tcp_packets_in_flight(tp)) ? : 1;
		/* Maintain min packets in flight for max(200 ms, 1 round). */
		if (!bbr->probe_rtt_done_stamp &&
		    tcp_packets_in_flight(tp) <= min_target) {
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
	/* Restart after idle ends only once we process a new S/ACK for data */
	if (rs->delivered > 0)
		bbr->idle_restart = 0;
}

static inline void bbr_update_gains(struct sock *sk)
{
	struct bbr *bbr = bbr_ca(sk);
	u32 high_gain = bbr_gain_param(sk, BBR_PARAM_HIGH_GAIN,
				       BBR_HIGH_GAIN_DEFAULT);

	switch (bbr->mode) {
	case BBR_STARTUP:
		bbr->pacing_gain = high_gain;
		bbr->cwnd_gain = high_gain;
		break;
	case BBR_DRAIN:
		bbr->pacing_gain = bbr_gain_param(sk, BBR_PARAM_DRAIN_GAIN,
						  BBR_DRAIN_GAIN_DEFAULT);
		bbr->cwnd_gain = high_gain;	/* keep cwnd */
		break;
	case BBR_PROBE_BW:
		bbr->pacing_gain = bbr->lt_use_bw ? BBR_UNIT :
				   bbr_cycle_pacing_gain(sk, bbr->cycle_idx);
		bbr->cwnd_gain = bbr_gain_param(sk, BBR_PARAM_CWND_GAIN,
						BBR_CWND_GAIN_DEFAULT);
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
	BBR_HOOK_UPDATE_MODEL(sk, rs);
	bbr_update_gains(sk);
}

/* ------------------------------------------- tcp_congestion_ops bodies */

/* cong_control: update the model, then set pacing rate and cwnd. */
static inline void bbr_core_main(struct sock *sk, u32 ack, int flag,
				 const struct rate_sample *rs)
{
	struct bbr *bbr = bbr_ca(sk);
	u32 bw;

	bbr_update_model(sk, rs);

	bw = bbr_bw(sk);
	bbr_set_pacing_rate(sk, bw, bbr->pacing_gain);
	bbr_set_cwnd(sk, rs, rs->acked_sacked, bw, bbr->cwnd_gain);

	CCA_TRACE(sk, bbr->mode, bbr->pacing_gain, bbr->cwnd_gain,
		  bbr_bw_bytes_per_sec(sk, bw));
}

static inline void bbr_core_init(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr *bbr = bbr_ca(sk);

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
	BBR_HOOK_INIT(sk);
}

/* Provision 3 * cwnd since BBR may slow-start even during recovery. */
static inline u32 bbr_core_sndbuf_expand(struct sock *sk)
{
	return 3;
}

/* In theory BBR does not need to undo the cwnd since it does not always
 * reduce cwnd on losses (see bbr_main()). Keep it for now. Undo means the
 * loss was spurious: forget the full-bw plateau and the lt sampling. */
static inline u32 bbr_core_undo_cwnd(struct sock *sk)
{
	struct bbr *bbr = bbr_ca(sk);

	bbr->full_bw = 0;   /* spurious slow-down; reset full pipe detection */
	bbr->full_bw_cnt = 0;
	bbr_reset_lt_bw_sampling(sk);
	return tcp_snd_cwnd(tcp_sk(sk));
}

/* Entering loss recovery, so save cwnd for when we exit or undo recovery. */
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
		bbr->round_start = 1;	/* treat RTO like end of a round */
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
		/* Avoid pointless buffer overflows: pace at est. bw if we don't
		 * need more speed (we're restarting from idle and app-limited). */
		if (bbr->mode == BBR_PROBE_BW)
			bbr_set_pacing_rate(sk, bbr_bw(sk), BBR_UNIT);
		else if (bbr->mode == BBR_PROBE_RTT)
			bbr_check_probe_rtt_done(sk);
	}
}

#endif /* CCARENA_BBR_CORE_H */
