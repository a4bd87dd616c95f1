/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bbr3_core.h - BBRv3: the model and control laws of Google's v3 release of
 * Linux's net/ipv4/tcp_bbr.c (github.com/google/bbr, branch v3,
 * BBR_VERSION 3), for cc/bbr3.c and any variant of it; built with
 * BBR3_CORE_VERSION 2, also BBRv2 (cc/bbr2.c: Google's v2alpha
 * tcp_bbr2.c, which v3 fixed; the places where v2's code differs are
 * marked "[v2 N]" and listed in cc/bbr2.c).
 *
 * Spec: that file (decision for decision, with the deviations listed
 * below), and N. Cardwell et al., "BBRv3: Algorithm Bug Fixes and Public
 * Internet Deployment", IETF 117 ICCRG, 2023. Not a v1 derivative: it
 * shares nothing with include/bbr_core.h but the compat layer.
 *
 * ---------------------------------------------------------------- model
 * Like v1, a max-filtered delivery rate and a min-filtered RTT; unlike v1,
 * also bounds learned from loss and ECN, on two time scales:
 *   bw_hi        max delivery rate over the last two ProbeBW cycles
 *                (bw_hi[0] previous, bw_hi[1] current; a cycle is one
 *                probe, 2-3 s), the long-term upper bound (v1: 10 rounds)
 *   inflight_hi  the most data in flight that did not see loss above
 *                loss_thresh (2%) of it, nor CE marks above ecn_thresh
 *                (50%): set when a probe overshoots, to max(the flight at
 *                the point loss crossed 2%, 0.7 * target), raised when a
 *                larger flight proves safe and, in PROBE_UP, by a slope
 *                that doubles every round (1, 2, 4 ... packets per cwnd
 *                acked)
 *   bw_lo,       short-term lower bounds: at the end of every round with
 *   inflight_lo  loss (or CE) while not probing, cut by beta (30%), or by
 *                ecn_factor * ecn_alpha (alpha: EWMA of the CE fraction,
 *                gain 1/16), but never below what the last round
 *                delivered (bw_latest, inflight_latest); forgotten when a
 *                probe starts (REFILL) and after PROBE_RTT
 *   min_rtt      min RTT over 10 s; PROBE_RTT is timed by a separate 5 s
 *                window (probe_rtt_min_us)
 * and controls
 *   bw          = min(bw_hi, bw_lo)
 *   pacing_rate = pacing_gain * bw * (1 - 1%)
 *   cwnd        = cwnd_gain * bw * min_rtt + aggregation allowance
 *                 + quantisation budget, then capped by the phase's bound:
 *                 inflight_hi (UP, DOWN, REFILL), inflight_hi less 15%
 *                 headroom (CRUISE, PROBE_RTT), always inflight_lo; >= 4
 *
 *   STARTUP   pacing 2.77, cwnd 2          (4 ln 2: doubles per round
 *     |                                      with the packets of Reno's
 *     |                                      slow start)
 *     | bw grew < 25% in 3 rounds, or >= 6 loss events in a Recovery round
 *     | with loss > 2% of the flight (inflight_hi = max(BDP, the round's
 *     | delivered)), or CE >= 50% in 2 rounds (ECN-eligible flows)
 *     v
 *   DRAIN     pacing 0.344 until inflight <= BDP
 *     v
 *   PROBE_BW  cwnd gain 2 (2.25 in UP):
 *     DOWN   0.906 (91/100): until inflight <= min(BDP, inflight_hi - 15%)
 *        |      (or straight to REFILL if it is time to probe)
 *        v
 *     CRUISE 1.0: until probe_wait (2 s + rand 1 s of wall clock) has
 *        |      passed since DOWN began, or min(63, BDP) rounds (a Reno
 *        |      flow's loss epoch at this BDP: Reno coexistence), or the
 *        |      CE marks of an ECN-only cycle stopped (quick reprobe)
 *        v
 *     REFILL 1.0 for one round: bw_lo/inflight_lo forgotten, the pipe is
 *        |      filled at bw before any queue is risked
 *        v
 *     UP     1.25: inflight_hi grows with its slope; ends on loss > 2% or
 *            CE > 50% (inflight_hi cut, "too high"), on reaching the
 *            inflight_hi a previous probe found too high, or on a bw
 *            plateau (3 rounds < 25% growth while not inflight_hi-bound)
 *            -> DOWN (a new cycle; bw_hi's window advances one round
 *            after DOWN began)
 *   PROBE_RTT every 5 s without a lower RTT: cwnd = max(4, BDP/2) for
 *             200 ms and one round, then DOWN -> CRUISE (or STARTUP if the
 *             pipe was never filled)
 *
 * Loss recovery: none of v1's packet conservation; the loss response is
 * the model's (bw_lo/inflight_lo per round, inflight_hi per probe); an RTO
 * sets inflight_lo to the cwnd before it, and the cwnd is restored when the
 * Loss state ends; an undo restores bw_lo/inflight_lo/inflight_hi and cwnd
 * as they were once the losses that started the recovery were handled (a
 * probe's inflight_hi cut stays).
 * After an idle period pacing restarts at bw. The ACK-aggregation allowance
 * is v1's (windows of 1 round in STARTUP, 5 after). An app-limited ACK with
 * no loss/CE and a low sample takes v3's fast path (model not updated).
 *
 * ---------------------------------------------------------------- units
 * bw: packets per us << BW_SCALE (24). Gains and fractions: << BBR_SCALE
 * (8), 256 = 1.0. Times: us (tp->tcp_mstamp); "jiffies" are ms
 * (cca_now_ms()). Windows, flights and counts: packets. The tunables, each
 * with its reason, are the parameter table of include/bbr3_params.h.
 *
 * ---------------------------------------------------------------- state
 * struct bbr3, 160 bytes: more than icsk_ca_priv's 104 (Google's kernel
 * enlarges the private area for it; mainline does not), so it lives in the
 * extension area natively and in BPF per-socket storage
 * (CCA_STATE_EXTENDED, ccarena_compat.h; created by init, freed by
 * release).
 *
 * tcp_congestion_ops members (BBR3_CORE_REGISTER):
 *   init, release    state, STARTUP, pacing from srtt (or 1 ms)
 *   cong_control     per ACK: the emulated skb_marked_lost, model, control
 *   ssthresh         save cwnd, and (after this ACK's or RTO's losses)
 *                    the bounds an undo restores
 *   undo_cwnd        restore them; returns the saved cwnd
 *   set_state        RTO: inflight_lo from the pre-RTO cwnd; leaving Loss:
 *                    restore cwnd
 *   cwnd_event       TX_START after idle: pace at bw, maybe end PROBE_RTT
 *   in_ack_event     the ACK's ECE flag, for its cong_control
 *   min_tso_segs     v3's TSO burst (see deviations)
 *   sndbuf_expand    3
 *
 * ---------------------------------------------- deviations from Google's v3
 *  1. skb_marked_lost (a v3-only op the stack calls for each packet it
 *     marks lost, with the packet's own in-flight-at-send and loss count)
 *     is not in mainline, so not in BPF; the simulator does not offer it
 *     either, so that both builds run the same code. Its work is done at
 *     the next cong_control: when tp->lost has grown since the previous
 *     one (marked by this ACK, a RACK timer or an RTO), the loss round is
 *     noted (bbr3_note_loss, as v3); while the samples reflect a bw probe,
 *     the loss test runs on the ACK's own rate sample (tx_in_flight and
 *     lost of the most recently delivered packet, sent after the lost ones)
 *     and inflight_hi is placed by v3's lost-prefix rule taking the last
 *     lost packet as the "skb". On an RTO (set_state Loss) the sample is
 *     the whole flight (packets_out). v3 places inflight_hi at the first
 *     lost packet whose flight crossed 2%; ours is at most one round of
 *     sending later.
 *  2. rs->tx_in_flight (in flight when the sampled packet was sent) and
 *     rs->lost (packets marked lost since then) are v3's stack's, not
 *     mainline's: the simulator fills them as v3's tcp_rate.c does, and
 *     the BPF build estimates them here (bbr3_estimate_tx_signals), per
 *     packet-timed round, from tp->delivered, tp->lost and
 *     rs->prior_in_flight. Parameter estimate_tx_signals = 1 runs the
 *     estimates in the simulator too. Measured there (seeds 1-3): equal
 *     at 1% random loss (83.5-83.8 vs 82.4-83.8 Mbit/s at 100 Mbit/s
 *     100 ms), collapsed alike at 5% (2.0-2.4 vs 0.9-1.3), Jain against
 *     CUBIC within 0.035 at 0.5-2 BDP; at 2%, v3's threshold itself, the
 *     estimate errs low and keeps 50-54 Mbit/s where exact has 9-17.
 *     rs->is_ece is v3's too: the ACK's ECE comes from in_ack_event
 *     (CA_ACK_ECE, the same flag of the same ACK) in both builds.
 *     rs->delivered_ce and tp->delivered_ce are mainline's.
 *  3. tso_segs (a v3-only op replacing tcp_tso_autosize) is not in
 *     mainline: min_tso_segs returns v3's burst (rate / 2^pacing_shift +
 *     64 KB >> (min_rtt / 512 us), in segments, >= 2), which mainline's
 *     tcp_tso_autosize takes as a floor of its own, identical rule (it has
 *     v3's RTT allowance since 6.1, tcp_tso_rtt_log = 9, on the stack's
 *     min RTT). sysctl_tcp_min_tso_segs is its default, 2. The BPF build
 *     registers min_tso_segs only for a non-default send quantum
 *     (CCA_BPF_MIN_TSO_SEGS): a BPF min_tso_segs makes Linux 6.18 burst.
 *  4. ECN eligibility: v3 needs TCP_ECN_OK and TCP_ECN_LOW, a route flag of
 *     Google's kernel meaning (a) CE marks are shallow-threshold and (b)
 *     both endpoints give precise ACKs (each ACK covers segments of one CE
 *     status). Mainline has no such flag; the precise feedback it has is
 *     Accurate ECN (Linux >= 6.18, TCP_ECN_MODE_ACCECN = CCA_ECN_ACCECN;
 *     scenario `ecn = "accecn"`), which stands for both: an AccECN flow is
 *     eligible, an RFC 3168 one (`ecn = true`, whose ECE is sticky until
 *     CWR, so one mark reads as a round of marks) is not, as in v3 without
 *     ecn_low, and its CE marks reach none of v3's ECN logic. (b) is the
 *     AccECN receiver's; (a) is the scenario's marking AQM. v3's RTT gate
 *     stays (ECN is used only if min_rtt <= ecn_max_rtt, 5 ms, a parameter
 *     here; 0 = any RTT). TCP_ECN_ECT_PERMANENT (ECT on retransmits) is
 *     not set.
 *  5. The receiver-side parts are not here: precise ECE ACKs
 *     (dctcp_ece_ack_update on CA_EVENT_ECN_IS_CE/NO_CE, run by the CC of
 *     the *receiving* socket; TCP_CONG_WANTS_CE_EVENTS is not set) and
 *     fast_ack_mode.
 *  6. PLB (Protective Load Balancing: rehash the path on sustained CE) is
 *     left out: there is one path.
 *  7. TLP: CA_EVENT_TLP_RECOVERY and rs->is_acking_tlp_retrans_seq are
 *     v3-only; a loss repaired by a tail loss probe is not noted, and the
 *     latest-delivery filter always advances at a loss round's end.
 *  8. Time: jiffies are counted in ms (cca_now_ms(), a tick at a time;
 *     ccarena_compat.h, "Time").
 *  9. The tunables are a parameter table (CCA_PARAM) in ppm and us; every
 *     default converts to v3's constant exactly (gains and fractions to
 *     the nearest 1/256). bw_probe_cwnd_gain is a ppm (v3: quarters),
 *     the pacing margin a ppm (v3: percent). Constants not in the table:
 *     full_bw_thresh 5/4, full_bw_cnt 3, extra_acked_win_rtts 5,
 *     extra_acked_max 100 ms, ecn_alpha_init 1, ecn_reprobe_gain 1/2,
 *     bw_probe_rand_rounds 2.
 * 10. get_info (tcp_info export) is not implemented: it has no user here.
 * 11. The undo snapshot. v3's stack marks packets lost (skb_marked_lost,
 *     which may cut inflight_hi) before tcp_enter_recovery() or
 *     tcp_enter_loss() calls ssthresh, which saves bw_lo, inflight_lo and
 *     inflight_hi for an undo. Here the losses are handled later
 *     (deviation 1: at the next cong_control, or in set_state(Loss) for an
 *     RTO), so ssthresh only notes that a snapshot is due and it is taken
 *     right after that loss handling, before anything else of the ACK
 *     (the round-end cuts of bw_lo/inflight_lo, which an undo reverts) or
 *     of the RTO (inflight_lo from the pre-RTO cwnd); an undo_cwnd with
 *     no ACK since ssthresh takes it first. As in v3, an undo keeps the
 *     inflight_hi that the recovery's first losses cut.
 */
#ifndef CCARENA_BBR3_CORE_H
#define CCARENA_BBR3_CORE_H

#include "ccarena_compat.h"

/*
 * The v2 build. cc/bbr2.c defines BBR3_CORE_VERSION 2 before including
 * this file, and runs Google's v2alpha tcp_bbr2.c on this core: where v2
 * and v3 are the same code it runs as is; where the code differs, it tests
 * BBR3_V2 (a constant: the other branch is compiled out) at the places
 * marked "[v2 N]", N the number of the difference in cc/bbr2.c's header.
 * Constants that differ are parameter defaults (bbr3_params.h).
 */
#ifndef BBR3_CORE_VERSION
#define BBR3_CORE_VERSION 3
#endif
#define BBR3_V2 (BBR3_CORE_VERSION == 2)

/* Scale factor for rate in pkt/us to keep precision: 1 unit ~ 715 bit/s at
 * a 1500 B MTU; a u32 holds up to ~3 Tbit/s. */
#define BW_SCALE 24
#define BW_UNIT (1 << BW_SCALE)

#define BBR_SCALE 8	/* scaling factor for fractions (e.g. gains) */
#define BBR_UNIT (1 << BBR_SCALE)

/* BBR's modes (trace_mode: the same numbers as v1's, for the plots). */
enum bbr3_mode {
	BBR3_STARTUP = 0,	/* ramp up sending rate rapidly to fill pipe */
	BBR3_DRAIN = 1,		/* drain any queue created during startup */
	BBR3_PROBE_BW = 2,	/* discover, share bw: pace around estimated bw */
	BBR3_PROBE_RTT = 3,	/* cut inflight to min to probe min_rtt */
};

/* How does the incoming ACK stream relate to our bandwidth probing? */
enum bbr3_ack_phase {
	BBR3_ACKS_INIT,		  /* not probing; not getting probe feedback */
	BBR3_ACKS_REFILLING,	  /* sending at est. bw to fill pipe */
	BBR3_ACKS_PROBE_STARTING, /* inflight rising to probe bw */
	BBR3_ACKS_PROBE_FEEDBACK, /* getting feedback from bw probing */
	BBR3_ACKS_PROBE_STOPPING, /* stopped probing; still getting feedback */
};

/* The phases of PROBE_BW (cycle_idx). */
enum bbr3_pacing_gain_phase {
	BBR3_BW_PROBE_UP = 0,	  /* push up inflight to probe for bw/vol */
	BBR3_BW_PROBE_DOWN = 1,	  /* drain excess inflight from the queue */
	BBR3_BW_PROBE_CRUISE = 2, /* use pipe, w/ headroom in queue/pipe */
	BBR3_BW_PROBE_REFILL = 3, /* try to refill the pipe again to 100% */
};

/* BBRv3 congestion control block (extended state: see "state" above). */
struct bbr3 {
	u64 cycle_mstamp;	   /* us, start of this PROBE_BW phase's clock */
	u64 ack_epoch_mstamp;	   /* us, start of ACK sampling epoch */
	u32 min_rtt_us;		   /* us, min RTT in min_rtt_win */
	u32 min_rtt_stamp;	   /* ms, time min_rtt_us was taken */
	u32 probe_rtt_done_stamp;  /* ms, end of PROBE_RTT's 200 ms; 0: unset */
	u32 probe_rtt_min_us;	   /* us, min RTT in probe_rtt_win */
	u32 probe_rtt_min_stamp;   /* ms, time probe_rtt_min_us was taken */
	u32 next_rtt_delivered;	   /* packets, tp->delivered at end of round */
	u32 prior_cwnd;		   /* packets, cwnd before recovery/PROBE_RTT */
	u32 full_bw;		   /* pkts/us << 24, bw at last >= 25% growth */
	u32 loss_round_delivered;  /* packets, tp->delivered ending loss round */
	u32 undo_bw_lo;		   /* pkts/us << 24, bw_lo before latest losses */
	u32 undo_inflight_lo;	   /* packets, inflight_lo before them */
	u32 undo_inflight_hi;	   /* packets, inflight_hi before them */
	u32 bw_latest;		   /* pkts/us << 24, max delivery rate, this
				    * loss round */
	u32 bw_lo;		   /* pkts/us << 24, lower bound; ~0U: none */
	u32 bw_hi[2];		   /* pkts/us << 24, max delivery rate in the
				    * previous [0] and current [1] cycle */
	u32 inflight_latest;	   /* packets, max delivered, this loss round */
	u32 inflight_lo;	   /* packets, lower bound; ~0U: none */
	u32 inflight_hi;	   /* packets, upper bound; ~0U: none */
	u32 bw_probe_up_cnt;	   /* packets acked per inflight_hi increment;
				    * ~0U: not growing */
	u32 bw_probe_up_acks;	   /* packets acked since the last increment */
	u32 probe_wait_us;	   /* us, from DOWN to the next timed probe */
	u32 alpha_last_delivered;  /* packets, tp->delivered at alpha update */
	u32 alpha_last_delivered_ce; /* packets, tp->delivered_ce then */
	u32 lost_seen;		   /* packets, tp->lost at the last
				    * cong_control/RTO (deviation 1) */
	/* The estimates of tx_in_flight and lost (deviation 2), per
	 * packet-timed round: the previous [0] and current [1] one. */
	u32 est_delivered[2];	   /* packets, tp->delivered when each began */
	u32 est_lost[2];	   /* packets, tp->lost when each began */
	u32 est_inflight[2];	   /* packets, max in flight seen in each */
	u16 extra_acked[2];	   /* packets, max excess acked in each window */
	u32 mode:2,		   /* enum bbr3_mode */
	    prev_ca_state:3,	   /* CA state on previous ACK */
	    round_start:1,	   /* this ACK ended a packet-timed round */
	    bw_probe_up_rounds:5,  /* log2 of inflight_hi's slope in UP */
	    try_fast_path:1,	   /* cwnd reached its target: fast path ok */
	    idle_restart:1,	   /* first ACKs after an idle period */
	    probe_rtt_round_done:1, /* PROBE_RTT spent a full round low */
	    init_cwnd:7,	   /* packets, initial cwnd */
	    has_seen_rtt:1,	   /* pacing set from a real srtt */
	    full_bw_reached:1,	   /* STARTUP found the pipe full */
	    full_bw_cnt:2,	   /* rounds with < 25% bw growth */
	    full_bw_now:1,	   /* a bw plateau now (STARTUP or UP) */
	    initialized:1,	   /* init has run */
	    unused_1:5;
	u32 pacing_gain:10,	   /* pacing gain in use, << 8 */
	    cwnd_gain:10,	   /* cwnd gain in use, << 8 */
	    cycle_idx:2,	   /* enum bbr3_pacing_gain_phase */
	    ack_phase:3,	   /* enum bbr3_ack_phase: meaning of ACKs */
	    loss_events_in_round:4, /* ACKs with losses, STARTUP round */
	    startup_ecn_rounds:2,  /* consecutive high-CE STARTUP rounds */
	    ecn_eligible:1;	   /* min_rtt and handshake allow ECN */
	u32 ack_epoch_acked:20,	   /* packets (S)ACKed in this ACK epoch */
	    extra_acked_win_rtts:5, /* rounds in the current extra_acked window */
	    extra_acked_win_idx:1, /* which extra_acked slot is current */
	    loss_in_cycle:1,	   /* loss in this PROBE_BW cycle */
	    ecn_in_cycle:1,	   /* CE in this PROBE_BW cycle */
	    loss_round_start:1,	   /* this ACK ended a loss round */
	    loss_in_round:1,	   /* loss marked in this loss round */
	    ecn_in_round:1,	   /* ECE seen in this loss round */
	    bw_probe_samples:1;	   /* rate samples reflect a bw probe */
	u32 ecn_alpha:9,	   /* EWMA of CE fraction, << 8, 0..256 */
	    rounds_since_probe:8,  /* packet-timed rounds since the last probe */
	    prev_probe_too_high:1, /* did the last UP go too high? */
	    stopped_risky_probe:1, /* last UP stopped at that inflight_hi */
	    ack_ece:1,		   /* this ACK carried ECE (in_ack_event) */
	    undo_pending:1,	   /* ssthresh ran; the undo snapshot is
				    * taken after the losses are handled */
	    unused_2:11;
};

CCA_STATE_EXTENDED(struct bbr3)

static inline struct bbr3 *bbr3_ca(const struct sock *sk)
{
	return cca_state(sk);
}

/* Window length of extra_acked filter (rounds; 1 in STARTUP). */
#define BBR3_EXTRA_ACKED_WIN_RTTS 5
/* Reset the ACK epoch after ~1M packets, before ack_epoch_acked overflows. */
#define BBR3_ACK_EPOCH_ACKED_RESET_THRESH (1U << 20)
/* Cap of the aggregation allowance: 100 ms of bw bounds its queue. */
#define BBR3_EXTRA_ACKED_MAX_US (100 * USEC_PER_MSEC)
/* If bw has increased by 25%, there may be more bw available... */
#define BBR3_FULL_BW_THRESH (BBR_UNIT * 5 / 4)
/* ...but after 3 rounds without that, the pipe is full (1: rwin
 * autotuning, 2: filling it, 3: seeing the higher rate). */
#define BBR3_FULL_BW_CNT 3
/* ecn_alpha starts at 1.0 so a flow that starts into a congested
 * bottleneck responds at once. */
#define BBR3_ECN_ALPHA_INIT BBR_UNIT
/* After CE marks (and no loss) cease, reprobe fast: the first round of UP
 * raises inflight_hi by about this fraction of it. */
#define BBR3_ECN_REPROBE_GAIN (BBR_UNIT / 2)
/* Randomness (rounds) in the Reno-coexistence bound, for mixing. */
#define BBR3_BW_PROBE_RAND_ROUNDS 2
/* sysctl_tcp_min_tso_segs: the least TSO burst, segments. */
#define BBR3_MIN_TSO_SEGS 2
/* v2 only [v2 5]: UP ends once, after a min_rtt, inflight reaches this
 * multiple of the BDP (v1's probing gain; v2's bw_probe_pif_gain). */
#define BBR2_BW_PROBE_PIF_GAIN (BBR_UNIT * 5 / 4)

#include "bbr3_params.h"

/* ------------------------------------------------- signals of a sample */

/*
 * What v3's loss and ECN tests read from a rate sample. Filled once per
 * ACK by bbr3_sample_of(); v3 builds the same record from a lost packet in
 * skb_marked_lost (deviation 1).
 */
struct bbr3_sample {
	u32 tx_in_flight;	/* packets in flight when the sampled packet
				 * was sent; 0: unknown */
	s32 lost;		/* packets marked lost since it was sent */
	s32 delivered;		/* packets delivered over the interval */
	s32 delivered_ce;	/* of which CE-marked */
	bool is_app_limited;	/* sampled packet sent app-limited */
	bool is_ece;		/* this ACK carried ECE */
};

/*
 * Estimates of rs->tx_in_flight and rs->lost for a stack that lacks them
 * (mainline, hence BPF; deviation 2), from what the CC sees on every ACK.
 * Per packet-timed round of its own (one that phase changes do not
 * restart, unlike next_rtt_delivered): tp->delivered and tp->lost when it
 * began, and the largest flight before an ACK in it (rs->prior_in_flight:
 * the flight right after the latest transmissions, about the
 * in-flight-at-send of the newest packets). The sampled packet left when
 * tp->delivered was rs->prior_delivered: in the current round if that is
 * past the round's start (its delivery then ends the round), else, as a
 * rule, in the previous one. Then
 *   tx_in_flight ~ the largest flight of that round,
 *   lost         ~ tp->lost now - tp->lost when the packet left, the
 *                  latter interpolated in tp->delivered between the
 *                  round's ends (losses are spread over a round; taking
 *                  the round's start would count up to a round too many,
 *                  which at 1% random loss doubles the rate v3 sees).
 */
static inline void bbr3_estimate_tx_signals(struct sock *sk,
					    const struct rate_sample *rs,
					    struct bbr3_sample *s)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr3 *bbr = bbr3_ca(sk);
	u32 d0, d1, l0, l1, at, now_d, now_l, cur_d, cur_l;
	bool cur;

	if (rs->delivered < 0) {	/* no packet with send-time state */
		s->tx_in_flight = 0;
		s->lost = 0;
		return;
	}
	/* The packet's round [d0, d1) in tp->delivered, with tp->lost l0 and
	 * l1 at its ends. Values, not pointers, are chosen: the verifier
	 * refuses one load from both the socket and the state (and see
	 * bbr3_extra_acked_cur). */
	now_d = tp->delivered;
	now_l = tp->lost;
	cur_d = bbr->est_delivered[1];
	cur_l = bbr->est_lost[1];
	cur = !before(rs->prior_delivered, cur_d);
	s->tx_in_flight = cur ? bbr->est_inflight[1] : bbr->est_inflight[0];
	d0 = cur ? cur_d : bbr->est_delivered[0];
	l0 = cur ? cur_l : bbr->est_lost[0];
	d1 = cur ? now_d : cur_d;
	l1 = cur ? now_l : cur_l;
	at = l0;
	if (after(rs->prior_delivered, d0) && after(d1, d0) && after(l1, l0))
		at += (u32)div64_u64((u64)(l1 - l0) *
				     min(rs->prior_delivered - d0, d1 - d0),
				     d1 - d0);
	s->lost = (s32)(now_l - at);
}

/* Per ACK, after the estimates were taken: end the round if the sampled
 * packet was sent in it, and record the flight. */
static inline void bbr3_update_tx_estimates(struct sock *sk,
					    const struct rate_sample *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr3 *bbr = bbr3_ca(sk);

	if (rs->delivered >= 0 &&
	    !before(rs->prior_delivered, bbr->est_delivered[1])) {
		bbr->est_delivered[0] = bbr->est_delivered[1];
		bbr->est_lost[0] = bbr->est_lost[1];
		bbr->est_inflight[0] = bbr->est_inflight[1];
		bbr->est_delivered[1] = tp->delivered;
		bbr->est_lost[1] = tp->lost;
		bbr->est_inflight[1] = 0;
	}
	bbr->est_inflight[1] = max(bbr->est_inflight[1], rs->prior_in_flight);
}

/* The signals of this ACK's sample: the stack's where it has them (the
 * simulator), unless the estimates are asked for (to measure them). ECE
 * comes from in_ack_event, exactly as v3's rs->is_ece. */
static inline void bbr3_sample_of(struct sock *sk,
				  const struct rate_sample *rs,
				  struct bbr3_sample *s)
{
#ifdef CCARENA_BPF
	bbr3_estimate_tx_signals(sk, rs, s);
#else
	if (CCA_PARAM(sk, BBR3_PARAM_ESTIMATE_TX_SIGNALS,
		      BBR3_ESTIMATE_TX_SIGNALS_DEFAULT)) {
		bbr3_estimate_tx_signals(sk, rs, s);
	} else {
		s->tx_in_flight = rs->tx_in_flight;
		s->lost = rs->lost;
	}
#endif
	s->is_ece = bbr3_ca(sk)->ack_ece;
	s->delivered = rs->delivered;
	s->delivered_ce = rs->delivered_ce;
	s->is_app_limited = rs->is_app_limited;
}

/* Per-ACK values that are not state (v3's struct bbr_context). */
struct bbr3_context {
	u32 sample_bw;		/* pkts/us << 24, this ACK's delivery rate */
};

/* ----------------------------------------------------- model: accessors */

/* Can this connection use ECN? v3: negotiated and TCP_ECN_LOW (shallow
 * marks, precise ACKs); here Accurate ECN (deviation 4), never RFC 3168's
 * sticky ECE. */
static inline bool bbr3_can_use_ecn(const struct sock *sk)
{
	return tcp_sk(sk)->ecn_flags & CCA_ECN_ACCECN;
}

static inline bool bbr3_full_bw_reached(const struct sock *sk)
{
	return bbr3_ca(sk)->full_bw_reached;
}

/* The windowed max recent bandwidth sample, pkts/us << BW_SCALE. */
static inline u32 bbr3_max_bw(const struct sock *sk)
{
	const struct bbr3 *bbr = bbr3_ca(sk);

	return max(bbr->bw_hi[0], bbr->bw_hi[1]);
}

/* The estimated bandwidth of the path, pkts/us << BW_SCALE. */
static inline u32 bbr3_bw(const struct sock *sk)
{
	return min(bbr3_max_bw(sk), bbr3_ca(sk)->bw_lo);
}

/* Max extra acked in the past k-2k rounds, packets. */
static inline u16 bbr3_extra_acked(const struct sock *sk)
{
	const struct bbr3 *bbr = bbr3_ca(sk);

	return max(bbr->extra_acked[0], bbr->extra_acked[1]);
}

/* The extra_acked slot of the current window. (Branches, not indexing:
 * the BPF verifier rejects variable-offset accesses into the state.) */
static inline u16 bbr3_extra_acked_cur(const struct bbr3 *bbr)
{
	return bbr->extra_acked_win_idx ? bbr->extra_acked[1] :
					  bbr->extra_acked[0];
}

static inline void bbr3_extra_acked_set_cur(struct bbr3 *bbr, u16 val)
{
	if (bbr->extra_acked_win_idx)
		bbr->extra_acked[1] = val;
	else
		bbr->extra_acked[0] = val;
}

/* ------------------------------------------------------- pacing and TSO */

/* Rate in bytes per second for a bw (pkts/us << 24) times a gain (<< 8),
 * less margin_ppm, at least 1. The order avoids u64 overflow up to ~3
 * Tbit/s at gain 2.89. */
static inline u64 bbr3_rate_bytes_per_sec(struct sock *sk, u64 rate, u32 gain,
					  u32 margin_ppm)
{
	rate *= tcp_sk(sk)->mss_cache;
	rate *= gain;
	rate >>= BBR_SCALE;
	rate *= BBR3_PPM - margin_ppm;	/* us -> s, less the margin */
	rate >>= BW_SCALE;
	return max_t(u64, rate, 1);
}

/* The bw estimate in bytes per second with no gain or margin. */
static inline u64 bbr3_bw_bytes_per_sec(struct sock *sk, u32 bw)
{
	return bbr3_rate_bytes_per_sec(sk, bw, BBR_UNIT, 0);
}

/* A bw and gain as a pacing rate in bytes per second: pacing_margin (at
 * most 99%) below, capped at sk_max_pacing_rate. */
static inline unsigned long bbr3_bw_to_pacing_rate(struct sock *sk, u32 bw,
						   u32 gain)
{
	u32 margin = (u32)min_t(u64,
				CCA_PARAM(sk, BBR3_PARAM_PACING_MARGIN_PPM,
					  BBR3_PACING_MARGIN_PPM_DEFAULT),
				BBR3_PPM / 100 * 99);
	u64 rate = bbr3_rate_bytes_per_sec(sk, bw, gain, margin);

	return (unsigned long)min_t(u64, rate, sk->sk_max_pacing_rate);
}

/* Initial pacing rate: startup_pacing_gain * init_cwnd / RTT (srtt, else a
 * nominal 1 ms). */
static inline void bbr3_init_pacing_rate_from_rtt(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr3 *bbr = bbr3_ca(sk);
	u64 bw;
	u32 rtt_us;

	if (tp->srtt_us) {		/* any RTT sample yet? */
		rtt_us = max(tp->srtt_us >> 3, 1U);
		bbr->has_seen_rtt = 1;
	} else {			/* no RTT sample yet */
		rtt_us = USEC_PER_MSEC;	/* use nominal default RTT */
	}
	bw = div_u64((u64)tcp_snd_cwnd(tp) * BW_UNIT, rtt_us);
	sk->sk_pacing_rate = bbr3_bw_to_pacing_rate(
		sk, (u32)min_t(u64, bw, 0xffffffffULL),
		bbr3_startup_pacing_gain(sk));
}

/* Pace at bw * gain. Until the pipe is full, never lower the rate. */
static inline void bbr3_set_pacing_rate(struct sock *sk, u32 bw, u32 gain)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr3 *bbr = bbr3_ca(sk);
	unsigned long rate = bbr3_bw_to_pacing_rate(sk, bw, gain);

	if (!bbr->has_seen_rtt && tp->srtt_us)
		bbr3_init_pacing_rate_from_rtt(sk);
	if (bbr3_full_bw_reached(sk) || rate > sk->sk_pacing_rate)
		sk->sk_pacing_rate = rate;
}

/*
 * Segments per TSO burst by the send_quantum rule (send_quantum.h); v3's:
 * ~1 ms at the pacing rate (rate >> pacing_shift) plus an allowance that
 * favours short paths, 64 KB halved for every 2^tso_rtt_shift us of
 * min_rtt (0 beyond ~16 ms); within gso_max_size; at least
 * sysctl_tcp_min_tso_segs (2).
 */
static inline u32 bbr3_tso_segs_generic(struct sock *sk, u32 mss_now,
					u32 gso_max_size)
{
	u32 floor = BBR3_MIN_TSO_SEGS;
	u64 bytes;

	mss_now = max(mss_now, 1U);
	bytes = cca_send_quantum_bytes(
		sk, BBR3_PARAM_SEND_QUANTUM, BBR3_SEND_QUANTUM_DEFAULT,
		bbr3_ca(sk)->min_rtt_us, mss_now,
		cca_u32_param(sk, BBR3_PARAM_TSO_RTT_SHIFT,
			      BBR3_TSO_RTT_SHIFT_DEFAULT), &floor);
	/* [v2 15] v2's floor under Google's rule is v1's: 1 segment below
	 * 1.2 Mbit/s of pacing, else 2. */
	if (BBR3_V2 && cca_u32_param(sk, BBR3_PARAM_SEND_QUANTUM,
				     BBR3_SEND_QUANTUM_DEFAULT) ==
		       CCA_QUANTUM_HALVING)
		floor = cca_rate_min_tso_segs(sk);
	if (gso_max_size <= MAX_TCP_HEADER + 1)	/* unset: Linux's 64 KB */
		gso_max_size = GSO_LEGACY_MAX_SIZE;
	bytes = min_t(u64, bytes, gso_max_size - 1 - MAX_TCP_HEADER);
	return max_t(u32, (u32)bytes / mss_now, floor);
}

/* The burst the quantisation budget plans for: 64 KB GSO, mss_cache. */
static inline u32 bbr3_tso_segs_goal(struct sock *sk)
{
	return bbr3_tso_segs_generic(sk, tcp_sk(sk)->mss_cache,
				     GSO_LEGACY_MAX_SIZE);
}

/* Remember the cwnd to return to after recovery or PROBE_RTT: the current
 * one, unless recovery/PROBE_RTT already cut it. */
static inline void bbr3_save_cwnd(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr3 *bbr = bbr3_ca(sk);

	if (bbr->prev_ca_state < TCP_CA_Recovery && bbr->mode != BBR3_PROBE_RTT)
		bbr->prior_cwnd = tcp_snd_cwnd(tp);  /* this cwnd is good enough */
	else  /* loss recovery or PROBE_RTT have temporarily cut cwnd */
		bbr->prior_cwnd = max(bbr->prior_cwnd, tcp_snd_cwnd(tp));
}

/* ----------------------------------------------------------------- cwnd */

/* bdp = ceil(bw * min_rtt * gain), packets; init_cwnd before any RTT. */
static inline u32 bbr3_bdp(struct sock *sk, u32 bw, u32 gain)
{
	struct bbr3 *bbr = bbr3_ca(sk);
	u64 w;

	if (bbr->min_rtt_us == ~0U)	/* no valid RTT samples yet */
		return bbr->init_cwnd;	/* be safe: cap at initial cwnd */
	w = (u64)bw * bbr->min_rtt_us;
	/* Round up: rounding down would shrink cwnd, then the next bw
	 * sample, then cwnd again. */
	return (u32)((((w * gain) >> BBR_SCALE) + BW_UNIT - 1) / BW_UNIT);
}

/* Room for full-sized skbs in the sender's qdisc, its TSO engine and the
 * receiver's GRO (3 bursts), at least cwnd_min_target; +2 while probing up
 * so that inflight gets above the BDP even when it is small. (v1 adds the
 * bursts and rounds to even; v3 takes the max.) */
static inline u32 bbr3_quantization_budget(struct sock *sk, u32 cwnd)
{
	struct bbr3 *bbr = bbr3_ca(sk);

	cwnd = max_t(u32, cwnd, 3 * bbr3_tso_segs_goal(sk));
	cwnd = max_t(u32, cwnd, bbr3_cwnd_min_target(sk));
	if (bbr->mode == BBR3_PROBE_BW && bbr->cycle_idx == BBR3_BW_PROBE_UP)
		cwnd += 2;
	return cwnd;
}

/* The inflight for a bw and gain: BDP plus the quantisation budget. */
static inline u32 bbr3_inflight(struct sock *sk, u32 bw, u32 gain)
{
	return bbr3_quantization_budget(sk, bbr3_bdp(sk, bw, gain));
}

/* With EDT pacing, packets whose departure time is in the future are not
 * in the network yet: estimate inflight at the next departure time. */
static inline u32 bbr3_packets_in_net_at_edt(struct sock *sk, u32 inflight_now)
{
	struct bbr3 *bbr = bbr3_ca(sk);
	u64 interval_delivered;
	u32 inflight_at_edt;

	interval_delivered = ((u64)bbr3_bw(sk) * cca_edt_lead_us(sk)) >>
			     BW_SCALE;
	inflight_at_edt = inflight_now;
	if (bbr->pacing_gain > BBR_UNIT)	/* next skb is a TSO burst */
		inflight_at_edt += bbr3_tso_segs_goal(sk);
	if (interval_delivered >= inflight_at_edt)
		return 0;
	return inflight_at_edt - (u32)interval_delivered;
}

/* cwnd allowance for ACK aggregation, packets, capped at 100 ms of bw. */
static inline u32 bbr3_ack_aggregation_cwnd(struct sock *sk)
{
	u32 gain = bbr3_extra_acked_gain(sk);
	u32 max_aggr_cwnd, aggr_cwnd = 0;

	if (gain) {
		max_aggr_cwnd = (u32)(((u64)bbr3_bw(sk) *
				       BBR3_EXTRA_ACKED_MAX_US) / BW_UNIT);
		aggr_cwnd = (gain * bbr3_extra_acked(sk)) >> BBR_SCALE;
		aggr_cwnd = min(aggr_cwnd, max_aggr_cwnd);
	}
	return aggr_cwnd;
}

/* PROBE_RTT's cwnd: max(cwnd_min_target, BDP * probe_rtt_cwnd_gain). */
static inline u32 bbr3_probe_rtt_cwnd(struct sock *sk)
{
	return max_t(u32, bbr3_cwnd_min_target(sk),
		     bbr3_bdp(sk, bbr3_bw(sk),
			      bbr3_gain_param(sk,
				BBR3_PARAM_PROBE_RTT_CWND_GAIN_PPM,
				BBR3_PROBE_RTT_CWND_GAIN_PPM_DEFAULT)));
}

/* Grow cwnd by the packets acked toward target = cwnd_gain * BDP +
 * allowances (the bw estimate is rising, or losses drew it down); once the
 * pipe was filled, cut straight down to the target. Reaching the target
 * allows the fast path. */
static inline void bbr3_set_cwnd(struct sock *sk, u32 acked, u32 bw, u32 gain,
				 u32 cwnd)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr3 *bbr = bbr3_ca(sk);
	u32 target_cwnd;

	if (!acked)
		goto done;	/* no packet fully ACKed; just apply caps */

	target_cwnd = bbr3_bdp(sk, bw, gain);
	/* Room for data and ACKs that arrive in bursts. */
	target_cwnd += bbr3_ack_aggregation_cwnd(sk);
	target_cwnd = bbr3_quantization_budget(sk, target_cwnd);

	bbr->try_fast_path = 0;
	if (bbr3_full_bw_reached(sk)) {	/* only cut cwnd if pipe was filled */
		cwnd += acked;
		if (cwnd >= target_cwnd) {
			cwnd = target_cwnd;
			bbr->try_fast_path = 1;
		}
	} else if (cwnd < target_cwnd || cwnd < 2 * bbr->init_cwnd) {
		cwnd += acked;
	} else {
		bbr->try_fast_path = 1;
	}
	cwnd = max_t(u32, cwnd, bbr3_cwnd_min_target(sk));
done:
	tcp_snd_cwnd_set(tp, min(cwnd, tp->snd_cwnd_clamp));	/* global cap */
	if (bbr->mode == BBR3_PROBE_RTT)  /* drain queue, refresh min_rtt */
		tcp_snd_cwnd_set(tp, min_t(u32, tcp_snd_cwnd(tp),
					   bbr3_probe_rtt_cwnd(sk)));
}

/* ------------------------------------------------------- rounds and bw */

/* Packet-timed rounds: a round ends when a packet sent after the previous
 * round ended is delivered. */
static inline void bbr3_update_round_start(struct sock *sk,
					   const struct rate_sample *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr3 *bbr = bbr3_ca(sk);

	bbr->round_start = 0;
	if (rs->interval_us > 0 &&
	    !before(rs->prior_delivered, bbr->next_rtt_delivered)) {
		bbr->next_rtt_delivered = tp->delivered;
		bbr->round_start = 1;
	}
}

/* This ACK's delivery rate, pkts/us << 24, rounded up so that it can grow
 * at low rates; 0 without a valid interval. */
static inline void bbr3_calculate_bw_sample(const struct rate_sample *rs,
					    struct bbr3_context *ctx)
{
	u64 bw = 0;

	if (rs->interval_us > 0 && rs->delivered >= 0)
		bw = div64_u64((u64)rs->delivered * BW_UNIT +
			       (u64)rs->interval_us - 1, (u64)rs->interval_us);
	ctx->sample_bw = (u32)min_t(u64, bw, 0xffffffffULL);
}

/* Windowed max degree of ACK aggregation: the excess of data acked over
 * what bw predicts for the epoch, max over 5-10 rounds (1-2 in STARTUP). */
static inline void bbr3_update_ack_aggregation(struct sock *sk,
					       const struct rate_sample *rs)
{
	u32 epoch_us, expected_acked, extra_acked;
	struct bbr3 *bbr = bbr3_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	u32 win_rtts = BBR3_EXTRA_ACKED_WIN_RTTS;

	if (!bbr3_extra_acked_gain(sk) || rs->acked_sacked <= 0 ||
	    rs->delivered < 0 || rs->interval_us <= 0)
		return;

	if (bbr->round_start) {
		bbr->extra_acked_win_rtts = min(0x1F,
						bbr->extra_acked_win_rtts + 1);
		if (!bbr3_full_bw_reached(sk))
			win_rtts = 1;	/* STARTUP: the bw is rising fast */
		if (bbr->extra_acked_win_rtts >= win_rtts) {
			bbr->extra_acked_win_rtts = 0;
			bbr->extra_acked_win_idx = bbr->extra_acked_win_idx ?
						   0 : 1;
			bbr3_extra_acked_set_cur(bbr, 0);
		}
	}

	/* What bw alone would have delivered since the epoch began. */
	epoch_us = tcp_stamp_us_delta(tp->delivered_mstamp,
				      bbr->ack_epoch_mstamp);
	expected_acked = (u32)(((u64)bbr3_bw(sk) * epoch_us) / BW_UNIT);

	/* ACKs fell back to (or below) bw: start a new epoch; also before
	 * the 20-bit counter could overflow. */
	if (bbr->ack_epoch_acked <= expected_acked ||
	    (bbr->ack_epoch_acked + rs->acked_sacked >=
	     BBR3_ACK_EPOCH_ACKED_RESET_THRESH)) {
		bbr->ack_epoch_acked = 0;
		bbr->ack_epoch_mstamp = tp->delivered_mstamp;
		expected_acked = 0;
	}

	/* The excess over bw in this epoch, at most one cwnd. */
	bbr->ack_epoch_acked = min_t(u32, 0xFFFFF,
				     bbr->ack_epoch_acked + rs->acked_sacked);
	extra_acked = bbr->ack_epoch_acked - expected_acked;
	extra_acked = min(extra_acked, tcp_snd_cwnd(tp));
	if (extra_acked > bbr3_extra_acked_cur(bbr))
		bbr3_extra_acked_set_cur(bbr, (u16)min(extra_acked, 0xFFFFU));
}

/* Incorporate a bw sample into the current cycle's max. */
static inline void bbr3_take_max_bw_sample(struct sock *sk, u32 bw)
{
	struct bbr3 *bbr = bbr3_ca(sk);

	bbr->bw_hi[1] = max(bw, bbr->bw_hi[1]);
}

/* Keep the max of the last 1-2 cycles: each cycle, flip the window. */
static inline void bbr3_advance_max_bw_filter(struct sock *sk)
{
	struct bbr3 *bbr = bbr3_ca(sk);

	if (!bbr->bw_hi[1])
		return;  /* no samples in this window; remember old window */
	bbr->bw_hi[0] = bbr->bw_hi[1];
	bbr->bw_hi[1] = 0;
}

/* Reset the plateau detector (STARTUP's and UP's). */
static inline void bbr3_reset_full_bw(struct sock *sk)
{
	struct bbr3 *bbr = bbr3_ca(sk);

	bbr->full_bw = 0;
	bbr->full_bw_cnt = 0;
	bbr->full_bw_now = 0;
}

/* How much do we want in flight? Our BDP, unless congestion cut cwnd. */
static inline u32 bbr3_target_inflight(struct sock *sk)
{
	u32 bdp = bbr3_inflight(sk, bbr3_bw(sk), BBR_UNIT);

	return min(bdp, tcp_snd_cwnd(tcp_sk(sk)));
}

/* STARTUP, REFILL and UP push inflight up: no lower bounds then. */
static inline bool bbr3_is_probing_bandwidth(struct sock *sk)
{
	struct bbr3 *bbr = bbr3_ca(sk);

	return bbr->mode == BBR3_STARTUP ||
	       (bbr->mode == BBR3_PROBE_BW &&
		(bbr->cycle_idx == BBR3_BW_PROBE_REFILL ||
		 bbr->cycle_idx == BBR3_BW_PROBE_UP));
}

/* Has interval_us passed since the phase's clock started? */
static inline bool bbr3_has_elapsed_in_phase(const struct sock *sk,
					     u32 interval_us)
{
	return tcp_stamp_us_delta(tcp_sk(sk)->tcp_mstamp,
				  bbr3_ca(sk)->cycle_mstamp + interval_us) > 0;
}

/* ------------------------------------------------------------------ ECN */

/* STARTUP found the queue too high (loss or CE): the pipe is full, and
 * inflight_hi is what it held. */
static inline void bbr3_handle_queue_too_high_in_startup(struct sock *sk)
{
	struct bbr3 *bbr = bbr3_ca(sk);
	u32 bdp;  /* estimated BDP in packets, with quantization budget */

	bbr->full_bw_reached = 1;
	bdp = bbr3_inflight(sk, bbr3_max_bw(sk), BBR_UNIT);
	/* [v2 4] v2: the BDP alone. */
	bbr->inflight_hi = BBR3_V2 ? bdp : max(bdp, bbr->inflight_latest);
}

/* Exit STARTUP after full_ecn_cnt consecutive rounds with CE >= thresh. */
static inline void bbr3_check_ecn_too_high_in_startup(struct sock *sk,
						      u32 ce_ratio)
{
	struct bbr3 *bbr = bbr3_ca(sk);
	u32 full_ecn_cnt = cca_u32_param(sk, BBR3_PARAM_FULL_ECN_CNT,
					 BBR3_FULL_ECN_CNT_DEFAULT);
	u32 thresh = bbr3_ecn_thresh(sk);

	if (bbr3_full_bw_reached(sk) || !bbr->ecn_eligible ||
	    !full_ecn_cnt || !thresh)
		return;

	if (ce_ratio >= thresh)	/* saturating: the field has 2 bits */
		bbr->startup_ecn_rounds = min(bbr->startup_ecn_rounds + 1, 3);
	else
		bbr->startup_ecn_rounds = 0;

	if (bbr->startup_ecn_rounds >= full_ecn_cnt)
		bbr3_handle_queue_too_high_in_startup(sk);
}

/* Once per round: decide ECN eligibility, update ecn_alpha (EWMA of the
 * CE fraction of what was delivered since the last update). */
static inline void bbr3_update_ecn_alpha(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr3 *bbr = bbr3_ca(sk);
	u32 max_rtt = cca_u32_param(sk, BBR3_PARAM_ECN_MAX_RTT_US,
				    BBR3_ECN_MAX_RTT_US_DEFAULT);
	u32 gain = bbr3_fraction_param(sk, BBR3_PARAM_ECN_ALPHA_GAIN_PPM,
				       BBR3_ECN_ALPHA_GAIN_PPM_DEFAULT);
	s32 delivered, delivered_ce;
	u64 alpha, ce_ratio;

	/* See if we should use ECN sender logic for this connection.
	 * [v2 10] Never in v2 (v2alpha's bbr_ecn_enable is off). */
	if (!BBR3_V2 && !bbr->ecn_eligible && bbr3_can_use_ecn(sk) &&
	    bbr3_ecn_factor(sk) && (bbr->min_rtt_us <= max_rtt || !max_rtt))
		bbr->ecn_eligible = 1;
	if (!bbr->ecn_eligible)	/* (v3: or PLB on; there is no PLB here) */
		return;

	delivered = (s32)(tp->delivered - bbr->alpha_last_delivered);
	delivered_ce = (s32)(tp->delivered_ce - bbr->alpha_last_delivered_ce);
	if (delivered <= 0 || delivered_ce < 0)
		return;		/* nothing delivered, or counters went back */

	ce_ratio = div_u64((u64)delivered_ce << BBR_SCALE, (u32)delivered);
	alpha = ((u64)(BBR_UNIT - gain) * bbr->ecn_alpha) >> BBR_SCALE;
	alpha += (gain * ce_ratio) >> BBR_SCALE;
	bbr->ecn_alpha = (u32)min_t(u64, alpha, BBR_UNIT);

	bbr->alpha_last_delivered = tp->delivered;
	bbr->alpha_last_delivered_ce = tp->delivered_ce;

	bbr3_check_ecn_too_high_in_startup(sk, (u32)ce_ratio);
}

/* ---------------------------------------------------- upper bounds (hi) */

/* Each round of UP, double the volume by which inflight_hi grows: one
 * packet per cwnd / 2^rounds packets acked. */
static inline void bbr3_raise_inflight_hi_slope(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr3 *bbr = bbr3_ca(sk);
	u32 growth_this_round, cnt;

	growth_this_round = 1U << bbr->bw_probe_up_rounds;
	bbr->bw_probe_up_rounds = min(bbr->bw_probe_up_rounds + 1, 30);
	cnt = tcp_snd_cwnd(tp) / growth_this_round;
	bbr->bw_probe_up_cnt = max(cnt, 1U);
}

/* In UP without too much loss/CE: raise inflight_hi, if it is what limits
 * us (cwnd-limited at inflight_hi). */
static inline void bbr3_probe_inflight_hi_upward(struct sock *sk,
						 const struct rate_sample *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr3 *bbr = bbr3_ca(sk);
	u32 delta;

	if (!tp->is_cwnd_limited || tcp_snd_cwnd(tp) < bbr->inflight_hi) {
		if (BBR3_V2)	/* [v2 7] v2 drops the unused credits */
			bbr->bw_probe_up_acks = 0;
		return;  /* not fully using inflight_hi, so don't grow it */
	}

	/* For each bw_probe_up_cnt packets ACKed, inflight_hi += 1. */
	bbr->bw_probe_up_acks += rs->acked_sacked;
	if (bbr->bw_probe_up_acks >= bbr->bw_probe_up_cnt) {
		delta = bbr->bw_probe_up_acks / bbr->bw_probe_up_cnt;
		bbr->bw_probe_up_acks -= delta * bbr->bw_probe_up_cnt;
		bbr->inflight_hi += delta;
		if (!BBR3_V2)	/* [v2 7] v3 only */
			bbr->try_fast_path = 0;  /* need to update cwnd */
	}
	if (bbr->round_start)
		bbr3_raise_inflight_hi_slope(sk);
}

/* Does the loss or CE rate of this sample say inflight is too high? (In
 * STARTUP and in UP.) Loss: lost > loss_thresh * tx_in_flight. CE, for an
 * ECN-eligible flow: delivered_ce > ecn_thresh * delivered. */
static inline bool bbr3_is_inflight_too_high(struct sock *sk,
					     const struct bbr3_sample *s)
{
	const struct bbr3 *bbr = bbr3_ca(sk);
	u32 loss_thresh, ecn_thresh = bbr3_ecn_thresh(sk);

	if (s->lost > 0 && s->tx_in_flight) {
		loss_thresh = (u32)(((u64)s->tx_in_flight *
				     bbr3_loss_thresh(sk)) >> BBR_SCALE);
		if ((u32)s->lost > loss_thresh)
			return true;
	}
	if (s->delivered_ce > 0 && s->delivered > 0 && bbr->ecn_eligible &&
	    ecn_thresh) {
		ecn_thresh = (u32)(((u64)s->delivered * ecn_thresh) >>
				   BBR_SCALE);
		if ((u32)s->delivered_ce > ecn_thresh)
			return true;
	}
	return false;
}

/*
 * The flight at which loss went too high, for a lost packet of pcount
 * segments whose sample is s: solve for the prefix of it at which
 *   (lost_prev + prefix) / (inflight_prev + prefix) >= loss_thresh
 * with lost_prev/inflight_prev the loss and flight before it, rounded up
 * to a packet. ~0U if the sample is inconsistent.
 */
static inline u32 bbr3_inflight_hi_from_lost(struct sock *sk,
					     const struct bbr3_sample *s,
					     u32 pcount)
{
	u32 loss_thresh = bbr3_loss_thresh(sk);
	s32 inflight_prev, lost_prev;
	u64 loss_budget, lost_prefix;

	inflight_prev = (s32)s->tx_in_flight - (s32)pcount;
	lost_prev = s->lost - (s32)pcount;
	if (inflight_prev < 0 || lost_prev < 0)
		return ~0U;

	/* At what prefix of this lost packet did loss exceed the thresh? */
	loss_budget = ((u64)inflight_prev * loss_thresh + BBR_UNIT - 1) >>
		      BBR_SCALE;
	if ((u64)lost_prev >= loss_budget) {
		lost_prefix = 0;   /* previous losses crossed loss_thresh */
	} else {
		lost_prefix = (loss_budget - (u64)lost_prev) << BBR_SCALE;
		lost_prefix = div_u64(lost_prefix, BBR_UNIT - loss_thresh);
	}
	return (u32)min_t(u64, (u64)inflight_prev + lost_prefix, ~0U);
}

/* The operating point below inflight_hi that leaves headroom for other
 * flows (fairness, lower RTT and loss) after loss or CE: inflight_hi less
 * 15%, at least cwnd_min_target. */
static inline u32 bbr3_inflight_with_headroom(struct sock *sk)
{
	struct bbr3 *bbr = bbr3_ca(sk);
	u32 headroom;

	if (bbr->inflight_hi == ~0U)
		return ~0U;
	headroom = (u32)(((u64)bbr->inflight_hi *
			  bbr3_fraction_param(sk,
				BBR3_PARAM_INFLIGHT_HEADROOM_PPM,
				BBR3_INFLIGHT_HEADROOM_PPM_DEFAULT)) >>
			 BBR_SCALE);
	headroom = max(headroom, 1U);
	return max_t(s32, (s32)(bbr->inflight_hi - headroom),
		     (s32)bbr3_cwnd_min_target(sk));
}

/* Bound cwnd by the inflight model of the phase: inflight_hi while
 * probing or draining, inflight_hi less headroom when cruising or in
 * PROBE_RTT, and inflight_lo always. */
static inline void bbr3_bound_cwnd_for_inflight_model(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr3 *bbr = bbr3_ca(sk);
	u32 cap = ~0U;

	if (!bbr->initialized)
		return;
	if (bbr->mode == BBR3_PROBE_BW &&
	    bbr->cycle_idx != BBR3_BW_PROBE_CRUISE) {
		cap = bbr->inflight_hi;	/* see if more packets fit the path */
	} else if (bbr->mode == BBR3_PROBE_RTT ||
		   (bbr->mode == BBR3_PROBE_BW &&
		    bbr->cycle_idx == BBR3_BW_PROBE_CRUISE)) {
		cap = bbr3_inflight_with_headroom(sk);
	}
	/* Adapt to any loss/CE since the last bw probe. */
	cap = min(cap, bbr->inflight_lo);
	cap = max_t(u32, cap, bbr3_cwnd_min_target(sk));
	tcp_snd_cwnd_set(tp, min(cap, tcp_snd_cwnd(tp)));
}

/* ---------------------------------------------------- lower bounds (lo) */

/* The cut of the lower bounds per CE round: 1 - ecn_alpha * ecn_factor. */
static inline u32 bbr3_ecn_cut(struct sock *sk)
{
	return BBR_UNIT - ((bbr3_ca(sk)->ecn_alpha * bbr3_ecn_factor(sk)) >>
			   BBR_SCALE);
}

/* Start the lower bounds from the current model if unset. */
static inline void bbr3_init_lower_bounds(struct sock *sk, bool init_bw)
{
	struct bbr3 *bbr = bbr3_ca(sk);

	if (init_bw && bbr->bw_lo == ~0U)
		bbr->bw_lo = bbr3_max_bw(sk);
	if (bbr->inflight_lo == ~0U)
		bbr->inflight_lo = tcp_snd_cwnd(tcp_sk(sk));
}

/*
 * A short-term lower bound on the capacity available now: on loss (or CE)
 * while not probing, once per loss round, cut bw_lo and inflight_lo by
 * beta (CE: inflight_lo by ecn_factor * ecn_alpha) -- a multiplicative
 * decrease converges to a lower capacity in time logarithmic in the
 * decrease -- but not below what the last round delivered (bw_latest,
 * inflight_latest): faster would knowingly risk high loss.
 */
static inline void bbr3_adapt_lower_bounds(struct sock *sk)
{
	struct bbr3 *bbr = bbr3_ca(sk);
	u32 ecn_inflight_lo = ~0U, loss_cut;

	/* Only when not probing: probing must push inflight higher. */
	if (bbr3_is_probing_bandwidth(sk))
		return;

	/* (v3 sets ecn_in_round only for an eligible flow, v2 on any ECE
	 * [v2 10]; both respond only if eligible.) */
	if (bbr->ecn_in_round && bbr->ecn_eligible &&
	    bbr3_ecn_factor(sk)) {				/* ECN response */
		bbr3_init_lower_bounds(sk, false);
		ecn_inflight_lo = (u32)(((u64)bbr->inflight_lo *
					 bbr3_ecn_cut(sk)) >> BBR_SCALE);
	}
	if (bbr->loss_in_round) {				/* loss response */
		bbr3_init_lower_bounds(sk, true);
		loss_cut = BBR_UNIT - bbr3_beta(sk);
		bbr->bw_lo = max_t(u32, bbr->bw_latest,
				   ((u64)bbr->bw_lo * loss_cut) >> BBR_SCALE);
		bbr->inflight_lo = max_t(u32, bbr->inflight_latest,
					 ((u64)bbr->inflight_lo * loss_cut) >>
					 BBR_SCALE);
	}
	/* The lower of the levels loss and CE imply. */
	bbr->inflight_lo = min(bbr->inflight_lo, ecn_inflight_lo);
	if (!BBR3_V2)	/* [v2 11] v3 only */
		bbr->bw_lo = max(1U, bbr->bw_lo);
}

/* Forget the lower bounds, so that inflight can be pushed up. */
static inline void bbr3_reset_lower_bounds(struct sock *sk)
{
	struct bbr3 *bbr = bbr3_ca(sk);

	bbr->bw_lo = ~0U;
	bbr->inflight_lo = ~0U;
}

/* After probing (STARTUP/UP), clear the signals before a phase that adapts
 * the lower bounds to them. */
static inline void bbr3_reset_congestion_signals(struct sock *sk)
{
	struct bbr3 *bbr = bbr3_ca(sk);

	bbr->loss_in_round = 0;
	bbr->ecn_in_round = 0;
	bbr->loss_in_cycle = 0;
	bbr->ecn_in_cycle = 0;
	bbr->bw_latest = 0;
	bbr->inflight_latest = 0;
}

static inline void bbr3_exit_loss_recovery(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr3 *bbr = bbr3_ca(sk);

	tcp_snd_cwnd_set(tp, max(tcp_snd_cwnd(tp), bbr->prior_cwnd));
	bbr->try_fast_path = 0;	/* bound cwnd using latest model */
}

/* The max rate and volume delivered in this loss round; detect the end
 * of a loss round (a round timed from the first loss). */
static inline void bbr3_update_latest_delivery_signals(
	struct sock *sk, const struct rate_sample *rs,
	const struct bbr3_context *ctx)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr3 *bbr = bbr3_ca(sk);

	bbr->loss_round_start = 0;
	if (rs->interval_us <= 0 || !rs->acked_sacked)
		return;	/* not a valid observation */

	bbr->bw_latest = max_t(u32, bbr->bw_latest, ctx->sample_bw);
	bbr->inflight_latest = max_t(u32, bbr->inflight_latest,
				     (u32)rs->delivered);
	if (!before(rs->prior_delivered, bbr->loss_round_delivered)) {
		bbr->loss_round_delivered = tp->delivered;
		bbr->loss_round_start = 1;  /* mark start of new round trip */
	}
}

/* Once per loss round, restart the latest-delivery filter from this ACK.
 * (v3 keeps it when the ACK is for a TLP retransmit: deviation 7.) */
static inline void bbr3_advance_latest_delivery_signals(
	struct sock *sk, const struct rate_sample *rs,
	const struct bbr3_context *ctx)
{
	struct bbr3 *bbr = bbr3_ca(sk);

	if (bbr->loss_round_start) {
		bbr->bw_latest = ctx->sample_bw;
		bbr->inflight_latest = (u32)rs->delivered;
	}
}

/* Per ACK: the bw_hi sample and loss; per loss round: the lower bounds. */
static inline void bbr3_update_congestion_signals(
	struct sock *sk, const struct rate_sample *rs,
	const struct bbr3_context *ctx)
{
	struct bbr3 *bbr = bbr3_ca(sk);
	u32 bw = ctx->sample_bw;

	if (rs->interval_us <= 0 || !rs->acked_sacked)
		return;	/* not a valid observation */

	/* An app-limited sample measures the application, not the path: it
	 * may raise the estimate but not stand in for a lower one. */
	if (!rs->is_app_limited || bw >= bbr3_max_bw(sk))
		bbr3_take_max_bw_sample(sk, bw);

	bbr->loss_in_round |= (rs->losses > 0);

	if (!bbr->loss_round_start)
		return;	/* skip the per-round-trip updates */
	bbr3_adapt_lower_bounds(sk);
	bbr->loss_in_round = 0;
	bbr->ecn_in_round = 0;
}

/* ------------------------------------------------------- PROBE_BW cycle */

/*
 * Reno coexistence: a Reno flow with this BDP loses a packet about every
 * BDP rounds (its sawtooth), so probe (and risk loss) at least that often,
 * but at least every bw_probe_max_rounds (63), so that random loss, which
 * shaves a little off inflight each round, is survived.
 */
static inline bool bbr3_is_reno_coexistence_probe_time(struct sock *sk)
{
	u32 rounds = min_t(u32, cca_u32_param(sk,
					BBR3_PARAM_BW_PROBE_MAX_ROUNDS,
					BBR3_BW_PROBE_MAX_ROUNDS_DEFAULT),
			   bbr3_target_inflight(sk));

	return bbr3_ca(sk)->rounds_since_probe >= rounds;
}

/* How long to wait before probing (and risking loss): a random 0-1 rounds
 * into the Reno bound, and 2 s + rand(1 s) of wall clock: above 1.9 s, the
 * loss epoch of Reno at 25 Mbit/s and 30 ms, below 3 s, to find freed bw
 * on human time scales. Random for mixing and fairness convergence. */
static inline void bbr3_pick_probe_wait(struct sock *sk)
{
	struct bbr3 *bbr = bbr3_ca(sk);

	bbr->rounds_since_probe =
		cca_get_random_u32_below(sk, BBR3_BW_PROBE_RAND_ROUNDS);
	bbr->probe_wait_us =
		cca_u32_param(sk, BBR3_PARAM_BW_PROBE_BASE_US,
			      BBR3_BW_PROBE_BASE_US_DEFAULT) +
		cca_get_random_u32_below(sk, cca_u32_param(sk,
					 BBR3_PARAM_BW_PROBE_RAND_US,
					 BBR3_BW_PROBE_RAND_US_DEFAULT));
}

static inline void bbr3_set_cycle_idx(struct sock *sk, u32 cycle_idx)
{
	struct bbr3 *bbr = bbr3_ca(sk);

	bbr->cycle_idx = cycle_idx;
	bbr->try_fast_path = 0;	/* new phase: update cwnd and pacing rate */
}

/* REFILL: send at bw for a round, to fill the pipe without a queue; in a
 * shallow buffer, probing before the pipe is full would see loss and
 * underestimate bw_hi and inflight_hi. */
static inline void bbr3_start_bw_probe_refill(struct sock *sk,
					      u32 bw_probe_up_rounds)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr3 *bbr = bbr3_ca(sk);

	bbr3_reset_lower_bounds(sk);
	bbr->bw_probe_up_rounds = bw_probe_up_rounds;
	bbr->bw_probe_up_acks = 0;
	bbr->stopped_risky_probe = 0;
	bbr->ack_phase = BBR3_ACKS_REFILLING;
	bbr->next_rtt_delivered = tp->delivered;
	bbr3_set_cycle_idx(sk, BBR3_BW_PROBE_REFILL);
}

/* UP: probe the max deliverable rate and volume. */
static inline void bbr3_start_bw_probe_up(struct sock *sk,
					  const struct bbr3_context *ctx)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr3 *bbr = bbr3_ca(sk);

	bbr->ack_phase = BBR3_ACKS_PROBE_STARTING;
	bbr->next_rtt_delivered = tp->delivered;
	bbr->cycle_mstamp = tp->tcp_mstamp;
	if (!BBR3_V2) {	/* [v2 6] v3's plateau test ends UP; v2 has none */
		bbr3_reset_full_bw(sk);
		bbr->full_bw = ctx->sample_bw;
	}
	bbr3_set_cycle_idx(sk, BBR3_BW_PROBE_UP);
	bbr3_raise_inflight_hi_slope(sk);
}

/* DOWN: a new cycle. Pick when to probe next (wall clock and rounds) and
 * start the clock. */
static inline void bbr3_start_bw_probe_down(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr3 *bbr = bbr3_ca(sk);

	bbr3_reset_congestion_signals(sk);
	bbr->bw_probe_up_cnt = ~0U;	/* not growing inflight_hi any more */
	bbr3_pick_probe_wait(sk);
	bbr->cycle_mstamp = tp->tcp_mstamp;	/* start wall clock */
	bbr->ack_phase = BBR3_ACKS_PROBE_STOPPING;
	bbr->next_rtt_delivered = tp->delivered;
	bbr3_set_cycle_idx(sk, BBR3_BW_PROBE_DOWN);
}

/* CRUISE: hold a neutral, conservative operating point, reducing inflight
 * only on loss/CE. */
static inline void bbr3_start_bw_probe_cruise(struct sock *sk)
{
	struct bbr3 *bbr = bbr3_ca(sk);

	if (bbr->inflight_lo != ~0U)
		bbr->inflight_lo = min(bbr->inflight_lo, bbr->inflight_hi);
	bbr3_set_cycle_idx(sk, BBR3_BW_PROBE_CRUISE);
}

/* Loss or CE too high while probing: cut inflight_hi (once per probe) to
 * the flight of the sample, but not below 0.7 * target, and restart the
 * cycle if in UP. An app-limited sample did not probe the volume: it
 * leaves inflight_hi alone. */
static inline void bbr3_handle_inflight_too_high(struct sock *sk,
						 const struct bbr3_sample *s)
{
	struct bbr3 *bbr = bbr3_ca(sk);

	bbr->prev_probe_too_high = 1;
	bbr->bw_probe_samples = 0;	/* only react once per probe */
	if (!s->is_app_limited)
		bbr->inflight_hi = max_t(u32, s->tx_in_flight,
					 ((u64)bbr3_target_inflight(sk) *
					  (BBR_UNIT - bbr3_beta(sk))) >>
					 BBR_SCALE);
	if (bbr->mode == BBR3_PROBE_BW && bbr->cycle_idx == BBR3_BW_PROBE_UP)
		bbr3_start_bw_probe_down(sk);
}

/*
 * Adapt the upper bounds to the samples of a bw probe: loss/CE too high
 * cuts inflight_hi; a safe sample with a larger flight raises it (robust
 * to random loss: any phase may show a higher level is safe); in UP it
 * grows with its slope. Also time the probe's feedback (ack_phase) and
 * advance bw_hi's window a round after a probe ends. Returns true if it
 * decided a state transition.
 */
static inline bool bbr3_adapt_upper_bounds(struct sock *sk,
					   const struct rate_sample *rs,
					   const struct bbr3_sample *s)
{
	struct bbr3 *bbr = bbr3_ca(sk);

	if (bbr->ack_phase == BBR3_ACKS_PROBE_STARTING && bbr->round_start)
		bbr->ack_phase = BBR3_ACKS_PROBE_FEEDBACK;
	if (bbr->ack_phase == BBR3_ACKS_PROBE_STOPPING && bbr->round_start) {
		/* End of samples from the bw probing phase. */
		bbr->bw_probe_samples = 0;
		bbr->ack_phase = BBR3_ACKS_INIT;
		/* This sample is our best chance at the highest bw: the best
		 * time to forget the previous cycle's samples. */
		if (bbr->mode == BBR3_PROBE_BW && !rs->is_app_limited)
			bbr3_advance_max_bw_filter(sk);
		/* The probe reached the inflight_hi of the one before without
		 * loss/CE: probe again at once, holding inflight_hi for a
		 * round before accelerating beyond. */
		if (bbr->mode == BBR3_PROBE_BW &&
		    bbr->stopped_risky_probe && !bbr->prev_probe_too_high) {
			bbr3_start_bw_probe_refill(sk, 0);
			return true;
		}
	}
	if (bbr3_is_inflight_too_high(sk, s)) {
		if (bbr->bw_probe_samples)  /* sample is from bw probing? */
			bbr3_handle_inflight_too_high(sk, s);
	} else {
		/* Loss/CE declared safe: adjust the upper bound upward. */
		if (bbr->inflight_hi == ~0U)
			return false;	/* no excess queue signals yet */
		if (s->tx_in_flight > bbr->inflight_hi)
			bbr->inflight_hi = s->tx_in_flight;
		if (bbr->mode == BBR3_PROBE_BW &&
		    bbr->cycle_idx == BBR3_BW_PROBE_UP)
			bbr3_probe_inflight_hi_upward(sk, rs);
	}
	return false;
}

/* floor(log2(v)) for v > 0 (0 for 0), without a loop (BPF). */
static inline u32 bbr3_ilog2(u32 v)
{
	u32 r = 0;

	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8) { v >>= 8; r += 8; }
	if (v >> 4) { v >>= 4; r += 4; }
	if (v >> 2) { v >>= 2; r += 2; }
	if (v >> 1)
		r += 1;
	return r;
}

/* Time to probe? Quickly after an ECN-only cycle whose marks stopped (the
 * cross traffic may have left); else after the wall-clock wait or the
 * Reno-coexistence rounds. Starts REFILL if so. */
static inline bool bbr3_check_time_to_probe_bw(struct sock *sk)
{
	struct bbr3 *bbr = bbr3_ca(sk);
	u32 n;

	/* [v2 10] v2's ecn_reprobe_gain is 0: no quick reprobe. */
	if (!BBR3_V2 && bbr->ecn_eligible && bbr->ecn_in_cycle &&
	    !bbr->loss_in_cycle &&
	    inet_csk(sk)->icsk_ca_state == TCP_CA_Open) {
		/* n such that UP's first round raises inflight_hi by about
		 * inflight_hi * ecn_reprobe_gain (2^n packets). */
		n = bbr3_ilog2((u32)(((u64)bbr->inflight_hi *
				      BBR3_ECN_REPROBE_GAIN) >> BBR_SCALE));
		bbr3_start_bw_probe_refill(sk, n);
		return true;
	}
	if (bbr3_has_elapsed_in_phase(sk, bbr->probe_wait_us) ||
	    bbr3_is_reno_coexistence_probe_time(sk)) {
		bbr3_start_bw_probe_refill(sk, 0);
		return true;
	}
	return false;
}

/* DOWN -> CRUISE once inflight is below both the headroom point and the
 * BDP: the queue is drained; staying would underuse the pipe. */
static inline bool bbr3_check_time_to_cruise(struct sock *sk, u32 inflight,
					     u32 bw)
{
	if (inflight > bbr3_inflight_with_headroom(sk))
		return false;
	return inflight <= bbr3_inflight(sk, bw, BBR_UNIT);
}

/* The PROBE_BW state machine: cruise, refill, probe up, or drain down. */
static inline void bbr3_update_cycle_phase(struct sock *sk,
					   const struct rate_sample *rs,
					   const struct bbr3_sample *s,
					   const struct bbr3_context *ctx)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr3 *bbr = bbr3_ca(sk);
	bool is_bw_probe_done = false;
	u32 inflight, bw;

	if (!bbr3_full_bw_reached(sk))
		return;

	/* In DRAIN, PROBE_BW or PROBE_RTT: adjust the upper bounds. */
	if (bbr3_adapt_upper_bounds(sk, rs, s))
		return;		/* already decided state transition */

	if (bbr->mode != BBR3_PROBE_BW)
		return;

	inflight = bbr3_packets_in_net_at_edt(sk, rs->prior_in_flight);
	bw = bbr3_max_bw(sk);

	switch (bbr->cycle_idx) {
	case BBR3_BW_PROBE_CRUISE:
		/* Most of the time: pace at bw, full pipe, no queue. */
		bbr3_check_time_to_probe_bw(sk);
		break;
	case BBR3_BW_PROBE_REFILL:
		/* After a round of REFILL the samples show the refilled
		 * pipe, which may already be too much in flight: probe. */
		if (bbr->round_start) {
			bbr->bw_probe_samples = 1;
			bbr3_start_bw_probe_up(sk, ctx);
		}
		break;
	case BBR3_BW_PROBE_UP:
		/* Stop at (1) the inflight_hi a previous probe found too
		 * high (the next packets would fill the queue), or (2) a bw
		 * plateau while inflight_hi did not bind; (3) loss and (4) CE
		 * too high are bbr3_is_inflight_too_high()'s. */
		if (bbr->prev_probe_too_high &&
		    inflight >= bbr->inflight_hi) {
			bbr->stopped_risky_probe = 1;
			is_bw_probe_done = true;
		} else if (BBR3_V2) {
			/* [v2 5] v2: a queue is building, inflight at 1.25
			 * BDP after probing for a min_rtt. */
			is_bw_probe_done =
				bbr3_has_elapsed_in_phase(sk, bbr->min_rtt_us) &&
				inflight >= bbr3_inflight(sk, bw,
						BBR2_BW_PROBE_PIF_GAIN);
		} else if (tp->is_cwnd_limited &&
			   tcp_snd_cwnd(tp) >= bbr->inflight_hi) {
			/* inflight_hi is limiting bw growth */
			bbr3_reset_full_bw(sk);
			bbr->full_bw = ctx->sample_bw;
		} else if (bbr->full_bw_now) {
			/* Plateau in estimated bw. Pipe looks full. */
			is_bw_probe_done = true;
		}
		if (is_bw_probe_done) {
			bbr->prev_probe_too_high = 0;  /* no loss/CE (yet) */
			bbr3_start_bw_probe_down(sk);  /* restart w/ down */
		}
		break;
	case BBR3_BW_PROBE_DOWN:
		/* Drain the probe's queue down to min(BDP, inflight_hi less
		 * headroom), unless it is already time for the next probe. */
		if (bbr3_check_time_to_probe_bw(sk))
			return;		/* already decided state transition */
		if (bbr3_check_time_to_cruise(sk, inflight, bw))
			bbr3_start_bw_probe_cruise(sk);
		break;
	default:
		break;
	}
}

/* ----------------------------------------- STARTUP, DRAIN, PROBE_RTT */

/* Leaving PROBE_RTT: PROBE_BW, cruising (inflight is below the BDP) with
 * the next probe at a fresh random time; or STARTUP if never full. */
static inline void bbr3_exit_probe_rtt(struct sock *sk)
{
	struct bbr3 *bbr = bbr3_ca(sk);

	bbr3_reset_lower_bounds(sk);
	if (bbr3_full_bw_reached(sk)) {
		bbr->mode = BBR3_PROBE_BW;
		bbr3_start_bw_probe_down(sk);
		bbr3_start_bw_probe_cruise(sk);
	} else {
		bbr->mode = BBR3_STARTUP;
	}
}

static inline void bbr3_check_probe_rtt_done(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr3 *bbr = bbr3_ca(sk);

	if (!(bbr->probe_rtt_done_stamp &&
	      after(cca_now_ms(sk), bbr->probe_rtt_done_stamp)))
		return;

	bbr->probe_rtt_min_stamp = cca_now_ms(sk); /* next PROBE_RTT in 5 s */
	tcp_snd_cwnd_set(tp, max(tcp_snd_cwnd(tp), bbr->prior_cwnd));
	bbr3_exit_probe_rtt(sk);
}

/*
 * min_rtt and PROBE_RTT. Two windows: probe_rtt_min_us, the min RTT of
 * the last 5 s, times PROBE_RTT; min_rtt_us, of the last 10 s, is the
 * model's. When 5 s pass without a lower RTT, cut inflight to half the
 * BDP for max(200 ms, one round) so that every flow's queue drains and
 * the next sample is the propagation delay: 0.5 * 0.2 / 5 = 2% of
 * throughput for a flow that is busy all the time. Flows with natural
 * silences refresh min_rtt on their own.
 */
static inline void bbr3_update_min_rtt(struct sock *sk,
				       const struct rate_sample *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr3 *bbr = bbr3_ca(sk);
	u32 probe_rtt_win_ms = cca_ms_param(sk, BBR3_PARAM_PROBE_RTT_WIN_US,
					    BBR3_PROBE_RTT_WIN_US_DEFAULT);
	u32 min_rtt_win_ms = cca_ms_param(sk, BBR3_PARAM_MIN_RTT_WIN_US,
					  BBR3_MIN_RTT_WIN_US_DEFAULT);
	u32 probe_rtt_ms = cca_ms_param(sk, BBR3_PARAM_PROBE_RTT_MODE_US,
					BBR3_PROBE_RTT_MODE_US_DEFAULT);
	u32 now = cca_now_ms(sk);
	bool probe_rtt_expired, min_rtt_expired;

	/* Track min RTT in probe_rtt_win to time the next PROBE_RTT. */
	probe_rtt_expired = after(now, bbr->probe_rtt_min_stamp +
				       probe_rtt_win_ms);
	/* [v2 8] v2 also takes an equal RTT, which restarts the window. */
	if (rs->rtt_us >= 0 &&
	    (rs->rtt_us < (long)bbr->probe_rtt_min_us ||
	     (BBR3_V2 && rs->rtt_us == (long)bbr->probe_rtt_min_us) ||
	     (probe_rtt_expired && !rs->is_ack_delayed))) {
		bbr->probe_rtt_min_us = (u32)rs->rtt_us;
		bbr->probe_rtt_min_stamp = now;
	}
	/* Track min RTT seen in the min_rtt_win filter window. */
	min_rtt_expired = after(now, bbr->min_rtt_stamp + min_rtt_win_ms);
	if (bbr->probe_rtt_min_us <= bbr->min_rtt_us || min_rtt_expired) {
		bbr->min_rtt_us = bbr->probe_rtt_min_us;
		bbr->min_rtt_stamp = bbr->probe_rtt_min_stamp;
	}

	if (probe_rtt_ms > 0 && probe_rtt_expired &&
	    !bbr->idle_restart && bbr->mode != BBR3_PROBE_RTT) {
		bbr->mode = BBR3_PROBE_RTT;	/* dip, drain queue */
		bbr3_save_cwnd(sk);		/* restored when it ends */
		bbr->probe_rtt_done_stamp = 0;
		bbr->ack_phase = BBR3_ACKS_PROBE_STOPPING;
		bbr->next_rtt_delivered = tp->delivered;
	}

	if (bbr->mode == BBR3_PROBE_RTT) {
		/* Its low delivery rate is not the path's: mark it. */
		tp->app_limited =
			(tp->delivered + tcp_packets_in_flight(tp)) ? : 1;
		/* Once inflight is down: max(200 ms, one round) from now. */
		if (!bbr->probe_rtt_done_stamp &&
		    tcp_packets_in_flight(tp) <= bbr3_probe_rtt_cwnd(sk)) {
			bbr->probe_rtt_done_stamp = now + probe_rtt_ms;
			bbr->probe_rtt_round_done = 0;
			bbr->next_rtt_delivered = tp->delivered;
		} else if (bbr->probe_rtt_done_stamp) {
			if (bbr->round_start)
				bbr->probe_rtt_round_done = 1;
			if (bbr->probe_rtt_round_done)
				bbr3_check_probe_rtt_done(sk);
		}
	}
	/* An idle restart ends with the first ACK that delivers data. */
	if (rs->delivered > 0)
		bbr->idle_restart = 0;
}

/* The gains of the mode (and ProbeBW phase). */
static inline void bbr3_update_gains(struct sock *sk)
{
	struct bbr3 *bbr = bbr3_ca(sk);

	switch (bbr->mode) {
	case BBR3_STARTUP:
		bbr->pacing_gain = bbr3_startup_pacing_gain(sk);
		bbr->cwnd_gain = bbr3_startup_cwnd_gain(sk);
		break;
	case BBR3_DRAIN:
		bbr->pacing_gain = bbr3_gain_param(sk,
			BBR3_PARAM_DRAIN_GAIN_PPM, BBR3_DRAIN_GAIN_PPM_DEFAULT);
		bbr->cwnd_gain = bbr3_startup_cwnd_gain(sk);  /* keep cwnd */
		break;
	case BBR3_PROBE_BW:
		if (bbr->cycle_idx == BBR3_BW_PROBE_UP)
			bbr->pacing_gain = bbr3_gain_param(sk,
				BBR3_PARAM_PROBE_UP_GAIN_PPM,
				BBR3_PROBE_UP_GAIN_PPM_DEFAULT);
		else if (bbr->cycle_idx == BBR3_BW_PROBE_DOWN)
			bbr->pacing_gain = bbr3_gain_param(sk,
				BBR3_PARAM_PROBE_DOWN_GAIN_PPM,
				BBR3_PROBE_DOWN_GAIN_PPM_DEFAULT);
		else			/* CRUISE, REFILL */
			bbr->pacing_gain = BBR_UNIT;
		bbr->cwnd_gain = bbr3_gain_param(sk, BBR3_PARAM_CWND_GAIN_PPM,
						 BBR3_CWND_GAIN_PPM_DEFAULT);
		if (bbr->cycle_idx == BBR3_BW_PROBE_UP)
			bbr->cwnd_gain = min_t(u32, 1023, bbr->cwnd_gain +
				bbr3_gain_param(sk,
					BBR3_PARAM_PROBE_UP_CWND_GAIN_PPM,
					BBR3_PROBE_UP_CWND_GAIN_PPM_DEFAULT));
		break;
	case BBR3_PROBE_RTT:
		bbr->pacing_gain = BBR_UNIT;
		bbr->cwnd_gain = BBR_UNIT;
		break;
	default:
		break;
	}
}

/*
 * STARTUP's loss exit: at the end of a round in Recovery (the loss count
 * is then complete, and so is the sense of how much to drain), if at least
 * full_loss_cnt ACKs of the round marked losses and the loss rate is above
 * loss_thresh. Filters out noisy, low loss.
 */
static inline void bbr3_check_loss_too_high_in_startup(
	struct sock *sk, const struct rate_sample *rs,
	const struct bbr3_sample *s)
{
	struct bbr3 *bbr = bbr3_ca(sk);
	u32 full_loss_cnt = cca_u32_param(sk, BBR3_PARAM_FULL_LOSS_CNT,
					  BBR3_FULL_LOSS_CNT_DEFAULT);

	if (bbr3_full_bw_reached(sk))
		return;
	if (rs->losses && bbr->loss_events_in_round < 0xf)
		bbr->loss_events_in_round++;	/* saturating counter */
	if (full_loss_cnt && bbr->loss_round_start &&
	    inet_csk(sk)->icsk_ca_state == TCP_CA_Recovery &&
	    bbr->loss_events_in_round >= full_loss_cnt &&
	    bbr3_is_inflight_too_high(sk, s)) {
		bbr3_handle_queue_too_high_in_startup(sk);
		return;
	}
	if (bbr->loss_round_start)
		bbr->loss_events_in_round = 0;
}

/*
 * A bw plateau: the delivery rate did not grow 25% over 3 rounds that were
 * not app-limited (1: receive-window autotuning, 2: filling the larger
 * window, 3: seeing the higher rate). Marks the pipe full in STARTUP; in
 * UP, full_bw_now ends the probe.
 */
static inline void bbr3_check_full_bw_reached(struct sock *sk,
					      const struct rate_sample *rs,
					      const struct bbr3_context *ctx)
{
	struct bbr3 *bbr = bbr3_ca(sk);
	u32 bw_thresh;

	if (BBR3_V2) {
		/* [v2 3] v2 keeps v1's test: once a round, on the max
		 * filter, in STARTUP only. */
		if (bbr->full_bw_reached || !bbr->round_start ||
		    rs->is_app_limited)
			return;
		bw_thresh = (u32)(((u64)bbr->full_bw * BBR3_FULL_BW_THRESH) >>
				  BBR_SCALE);
		if (bbr3_max_bw(sk) >= bw_thresh) {
			bbr->full_bw = bbr3_max_bw(sk);
			bbr->full_bw_cnt = 0;
			return;
		}
		++bbr->full_bw_cnt;
		bbr->full_bw_reached = bbr->full_bw_cnt >= BBR3_FULL_BW_CNT;
		return;
	}
	if (bbr->full_bw_now || rs->is_app_limited)
		return;

	bw_thresh = (u32)(((u64)bbr->full_bw * BBR3_FULL_BW_THRESH) >>
			  BBR_SCALE);
	if (ctx->sample_bw >= bw_thresh) {
		bbr3_reset_full_bw(sk);
		bbr->full_bw = ctx->sample_bw;
		return;
	}
	if (!bbr->round_start)
		return;
	++bbr->full_bw_cnt;
	bbr->full_bw_now = bbr->full_bw_cnt >= BBR3_FULL_BW_CNT;
	bbr->full_bw_reached |= bbr->full_bw_now;
}

/* Pipe full: drain STARTUP's queue, then PROBE_BW (DOWN). */
static inline void bbr3_check_drain(struct sock *sk)
{
	struct bbr3 *bbr = bbr3_ca(sk);

	if (bbr->mode == BBR3_STARTUP && bbr3_full_bw_reached(sk)) {
		bbr->mode = BBR3_DRAIN;	/* drain queue we created */
		/* ssthresh is not used; a non-infinite value shows that
		 * STARTUP is over (for monitoring). */
		tcp_sk(sk)->snd_ssthresh =
			bbr3_inflight(sk, bbr3_max_bw(sk), BBR_UNIT);
		bbr3_reset_congestion_signals(sk);
	}	/* inflight may already be small enough: */
	if (bbr->mode == BBR3_DRAIN &&
	    bbr3_packets_in_net_at_edt(sk, tcp_packets_in_flight(tcp_sk(sk))) <=
	    bbr3_inflight(sk, bbr3_max_bw(sk), BBR_UNIT)) {
		bbr->mode = BBR3_PROBE_BW;
		bbr3_start_bw_probe_down(sk);
	}
}

static inline void bbr3_update_model(struct sock *sk,
				     const struct rate_sample *rs,
				     const struct bbr3_sample *s,
				     const struct bbr3_context *ctx)
{
	if (BBR3_V2)	/* [v2 9] v2: only when the model is updated */
		bbr3_update_latest_delivery_signals(sk, rs, ctx);
	bbr3_update_congestion_signals(sk, rs, ctx);
	if (BBR3_V2)	/* [v2 9] and restarted at once */
		bbr3_advance_latest_delivery_signals(sk, rs, ctx);
	bbr3_update_ack_aggregation(sk, rs);
	bbr3_check_loss_too_high_in_startup(sk, rs, s);
	bbr3_check_full_bw_reached(sk, rs, ctx);
	bbr3_check_drain(sk);
	bbr3_update_cycle_phase(sk, rs, s, ctx);
	bbr3_update_min_rtt(sk, rs);
}

/*
 * The fast path (v3's, for CPU): an app-limited ACK with a sample below
 * the max, no loss/CE in the round and cwnd at its target changes nothing
 * the model holds, so only the checks that can change the mode, the
 * phase or min_rtt run; the control is updated only if one of those
 * changed. Returns true to skip the control too.
 */
static inline bool bbr3_run_fast_path(struct sock *sk, bool *update_model,
				      const struct rate_sample *rs,
				      const struct bbr3_sample *s,
				      const struct bbr3_context *ctx)
{
	struct bbr3 *bbr = bbr3_ca(sk);
	u32 prev_min_rtt_us, prev_mode;

	if (bbr->try_fast_path && rs->is_app_limited &&
	    ctx->sample_bw < bbr3_max_bw(sk) &&
	    !bbr->loss_in_round && !bbr->ecn_in_round) {
		prev_mode = bbr->mode;
		prev_min_rtt_us = bbr->min_rtt_us;
		bbr3_check_drain(sk);
		bbr3_update_cycle_phase(sk, rs, s, ctx);
		bbr3_update_min_rtt(sk, rs);

		if (bbr->mode == prev_mode &&
		    bbr->min_rtt_us == prev_min_rtt_us &&
		    bbr->try_fast_path)
			return true;
		/* Skip the model update, but update the control. */
		*update_model = false;
	}
	return false;
}

/* ------------------------------------------ losses (v3's skb_marked_lost) */

/* Mark the current round as a loss round, timed from the first loss, to
 * see the path's full capacity over the round of the loss. */
static inline void bbr3_note_loss(struct sock *sk)
{
	struct bbr3 *bbr = bbr3_ca(sk);

	if (!bbr->loss_in_round)	/* first loss in this round trip? */
		bbr->loss_round_delivered = tcp_sk(sk)->delivered;
	bbr->loss_in_round = 1;
	bbr->loss_in_cycle = 1;
}

/*
 * What v3's skb_marked_lost() does, for the packets marked lost since the
 * last call (deviation 1): note the loss round; if the samples reflect a
 * bw probe, see whether the loss rate of the flight s describes went too
 * high and, if so, cut inflight_hi where it crossed loss_thresh, taking
 * the last lost packet (one segment) as the lost skb.
 */
static inline void bbr3_losses_marked(struct sock *sk,
				      const struct bbr3_sample *s)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr3 *bbr = bbr3_ca(sk);
	struct bbr3_sample lost = { 0 };

	if (tp->lost == bbr->lost_seen)
		return;		/* nothing newly marked lost */
	bbr->lost_seen = tp->lost;
	bbr3_note_loss(sk);

	if (!bbr->bw_probe_samples || !s->tx_in_flight)
		return;  /* not sent while probing for bandwidth, or unknown */
	lost.tx_in_flight = s->tx_in_flight;
	lost.lost = s->lost;
	lost.is_app_limited = s->is_app_limited;
	if (bbr3_is_inflight_too_high(sk, &lost)) {
		lost.tx_in_flight = bbr3_inflight_hi_from_lost(sk, &lost, 1);
		bbr3_handle_inflight_too_high(sk, &lost);
	}
}

/* The bounds an undo restores, as ssthresh saw them in v3: after the
 * losses of the ACK (or RTO) that started the recovery were handled, so
 * after a probe's inflight_hi cut and before the round-end cuts of
 * bw_lo/inflight_lo (deviation 11). Once per ssthresh call. */
static inline void bbr3_take_undo_snapshot(struct sock *sk)
{
	struct bbr3 *bbr = bbr3_ca(sk);

	if (!bbr->undo_pending)
		return;
	bbr->undo_pending = 0;
	bbr->undo_bw_lo = bbr->bw_lo;
	bbr->undo_inflight_lo = bbr->inflight_lo;
	bbr->undo_inflight_hi = bbr->inflight_hi;
}

/* ------------------------------------------ tcp_congestion_ops bodies */

/* cong_control: losses, model, then pacing rate and cwnd. */
static inline void bbr3_main(struct sock *sk, const struct rate_sample *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr3 *bbr = bbr3_ca(sk);
	struct bbr3_context ctx = { 0 };
	struct bbr3_sample s;
	bool update_model = true;
	u32 bw, max_bw;

	bbr3_sample_of(sk, rs, &s);
	bbr3_losses_marked(sk, &s);
	bbr3_take_undo_snapshot(sk);	/* v3's ssthresh came here */

	bbr3_update_round_start(sk, rs);
	bbr3_update_tx_estimates(sk, rs);
	if (bbr->round_start) {
		bbr->rounds_since_probe = min(bbr->rounds_since_probe + 1,
					      0xFF);
		bbr3_update_ecn_alpha(sk);
	}
	/* [v2 10] v2 notes any ECE (it acts on it only if eligible). */
	bbr->ecn_in_round |= ((BBR3_V2 || bbr->ecn_eligible) && s.is_ece);
	bbr3_calculate_bw_sample(rs, &ctx);
	if (!BBR3_V2)	/* [v2 9] v3: every ACK, fast path or not */
		bbr3_update_latest_delivery_signals(sk, rs, &ctx);

	if (bbr3_run_fast_path(sk, &update_model, rs, &s, &ctx))
		goto out;
	if (update_model)
		bbr3_update_model(sk, rs, &s, &ctx);

	bbr3_update_gains(sk);
	bw = bbr3_bw(sk);
	bbr3_set_pacing_rate(sk, bw, bbr->pacing_gain);
	bbr3_set_cwnd(sk, rs->acked_sacked, bw, bbr->cwnd_gain,
		      tcp_snd_cwnd(tp));
	bbr3_bound_cwnd_for_inflight_model(sk);

out:
	if (!BBR3_V2)	/* [v2 9] (v2: in bbr3_update_model) */
		bbr3_advance_latest_delivery_signals(sk, rs, &ctx);
	bbr->prev_ca_state = inet_csk(sk)->icsk_ca_state;
	bbr->loss_in_cycle |= s.lost > 0;
	bbr->ecn_in_cycle |= rs->delivered_ce > 0;
	bbr->ack_ece = 0;	/* in_ack_event sets it for the next ACK */

	bw = bbr3_bw(sk);
	max_bw = bbr3_max_bw(sk);
	CCA_TRACE(sk, bbr->mode, bbr->pacing_gain, bbr->cwnd_gain,
		  bbr3_bw_bytes_per_sec(sk, bw));
	/* How far the loss/CE lower bound holds bw below bw_hi (1: not). */
	CCA_TRACE_VAR(sk, max_bw ? div_u64((u64)bw * BBR3_PPM, max_bw) :
				   BBR3_PPM);
	/* The aggregation filter itself (packets), not the cwnd allowance it
	 * becomes (gain-scaled and capped; bbr3_ack_aggregation_cwnd). */
	CCA_TRACE_EXTRA_ACKED(sk, bbr3_extra_acked(sk));
}

static inline void bbr3_init(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr3 *bbr;

	cca_state_init(sk);	/* first: creates the state */
	bbr = bbr3_ca(sk);
	bbr->initialized = 1;

	bbr->init_cwnd = min(0x7FU, tcp_snd_cwnd(tp));
	bbr->prior_cwnd = tp->prior_cwnd;
	tp->snd_ssthresh = TCP_INFINITE_SSTHRESH;
	/* [v2 14] v2 starts the round count from 0 */
	bbr->next_rtt_delivered = BBR3_V2 ? 0 : tp->delivered;
	bbr->prev_ca_state = TCP_CA_Open;

	bbr->probe_rtt_done_stamp = 0;
	bbr->probe_rtt_round_done = 0;
	bbr->probe_rtt_min_us = tcp_min_rtt(tp);
	bbr->probe_rtt_min_stamp = cca_now_ms(sk);
	bbr->min_rtt_us = tcp_min_rtt(tp);
	bbr->min_rtt_stamp = cca_now_ms(sk);

	bbr->has_seen_rtt = 0;
	bbr3_init_pacing_rate_from_rtt(sk);

	bbr->round_start = 0;
	bbr->idle_restart = 0;
	bbr->full_bw_reached = 0;
	bbr->full_bw = 0;
	bbr->full_bw_cnt = 0;
	bbr->cycle_mstamp = 0;
	bbr->cycle_idx = 0;
	bbr->mode = BBR3_STARTUP;

	bbr->ack_epoch_mstamp = tp->tcp_mstamp;
	bbr->ack_epoch_acked = 0;
	bbr->extra_acked_win_rtts = 0;
	bbr->extra_acked_win_idx = 0;
	bbr->extra_acked[0] = 0;
	bbr->extra_acked[1] = 0;
	bbr->try_fast_path = 0;

	if (sk->sk_pacing_status == SK_PACING_NONE)
		sk->sk_pacing_status = SK_PACING_NEEDED;

	/* Start sampling ECN mark rate after first full flight is ACKed: */
	bbr->loss_round_delivered = tp->delivered + 1;
	bbr->loss_round_start = 0;
	bbr->undo_bw_lo = 0;
	bbr->undo_inflight_lo = 0;
	bbr->undo_inflight_hi = 0;
	bbr->undo_pending = 0;
	bbr->loss_events_in_round = 0;
	bbr->startup_ecn_rounds = 0;
	bbr3_reset_congestion_signals(sk);
	bbr->bw_lo = ~0U;
	bbr->bw_hi[0] = 0;
	bbr->bw_hi[1] = 0;
	bbr->inflight_lo = ~0U;
	bbr->inflight_hi = ~0U;
	bbr3_reset_full_bw(sk);
	bbr->bw_probe_up_cnt = ~0U;
	bbr->bw_probe_up_acks = 0;
	bbr->bw_probe_up_rounds = 0;
	bbr->probe_wait_us = 0;
	bbr->stopped_risky_probe = 0;
	bbr->ack_phase = BBR3_ACKS_INIT;
	bbr->rounds_since_probe = 0;
	bbr->bw_probe_samples = 0;
	bbr->prev_probe_too_high = 0;
	bbr->ecn_eligible = 0;
	bbr->ecn_alpha = BBR3_ECN_ALPHA_INIT;
	bbr->alpha_last_delivered = 0;
	bbr->alpha_last_delivered_ce = 0;
	bbr->lost_seen = tp->lost;
	bbr->est_delivered[0] = bbr->est_delivered[1] = tp->delivered;
	bbr->est_lost[0] = bbr->est_lost[1] = tp->lost;
	bbr->est_inflight[0] = bbr->est_inflight[1] = 0;
	bbr->ack_ece = 0;

	bbr3_update_gains(sk);	/* so telemetry has startup gains at once */
	CCA_TRACE(sk, bbr->mode, bbr->pacing_gain, bbr->cwnd_gain, 0);
	CCA_TRACE_VAR(sk, BBR3_PPM);
	CCA_TRACE_EXTRA_ACKED(sk, 0);
}

/* Undo (the loss was spurious): restore the bounds and cwnd saved by
 * ssthresh; restart plateau detection. */
static inline u32 bbr3_undo_cwnd(struct sock *sk)
{
	struct bbr3 *bbr = bbr3_ca(sk);

	bbr3_take_undo_snapshot(sk);	/* if no ACK came since ssthresh */
	bbr3_reset_full_bw(sk);	/* spurious slow-down; reset full bw */
	bbr->loss_in_round = 0;
	bbr->bw_lo = max(bbr->bw_lo, bbr->undo_bw_lo);
	bbr->inflight_lo = max(bbr->inflight_lo, bbr->undo_inflight_lo);
	bbr->inflight_hi = max(bbr->inflight_hi, bbr->undo_inflight_hi);
	if (!BBR3_V2)	/* [v2 13] v3 only */
		bbr->try_fast_path = 0;	/* set cwnd and pacing by slow path */
	return bbr->prior_cwnd;
}

/* Entering loss recovery (or CWR, or an RTO): save cwnd, and have the
 * loss-adapted bounds saved for an undo once the losses that started it
 * are handled (deviation 11); ssthresh itself is not used. */
static inline u32 bbr3_ssthresh(struct sock *sk)
{
	struct bbr3 *bbr = bbr3_ca(sk);

	bbr3_save_cwnd(sk);
	bbr->undo_pending = 1;
	return tcp_sk(sk)->snd_ssthresh;
}

/* An RTO (Loss): the stack has marked the flight lost (deviation 1: the
 * flight is the sample), restart plateau detection, and give
 * adapt_lower_bounds the cwnd before the RTO; leaving Loss: restore cwnd. */
static inline void bbr3_set_state(struct sock *sk, u8 new_state)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr3 *bbr = bbr3_ca(sk);

	if (new_state == TCP_CA_Loss) {
		struct bbr3_sample flight = {
			.tx_in_flight = tp->packets_out,
			.lost = (s32)(tp->lost - bbr->lost_seen),
		};

		bbr3_losses_marked(sk, &flight);
		bbr3_take_undo_snapshot(sk);	/* v3's ssthresh came here */
		bbr->prev_ca_state = TCP_CA_Loss;
		if (BBR3_V2)	/* [v2 12] v2 keeps full_bw_cnt */
			bbr->full_bw = 0;
		else
			bbr3_reset_full_bw(sk);
		/* [v2 12] v2: the cwnd saved by ssthresh alone */
		if (!bbr3_is_probing_bandwidth(sk) && bbr->inflight_lo == ~0U)
			bbr->inflight_lo = BBR3_V2 ? bbr->prior_cwnd :
					   max(tcp_snd_cwnd(tp),
					       bbr->prior_cwnd);
	} else if (bbr->prev_ca_state == TCP_CA_Loss) {
		bbr3_exit_loss_recovery(sk);
	}
}

/* After an idle period, restart at bw (PROBE_BW) rather than with a burst,
 * and check whether PROBE_RTT is already done. (CA_EVENT_ECN_IS_CE/NO_CE
 * are for a receiver: deviation 5.) */
static inline void bbr3_cwnd_event(struct sock *sk, int event)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr3 *bbr = bbr3_ca(sk);

	if (event == CA_EVENT_TX_START && tp->app_limited) {
		bbr->idle_restart = 1;
		bbr->ack_epoch_mstamp = tp->tcp_mstamp;
		bbr->ack_epoch_acked = 0;
		/* No reason to burst above bw after a pause: pace at bw. */
		if (bbr->mode == BBR3_PROBE_BW)
			bbr3_set_pacing_rate(sk, bbr3_bw(sk), BBR_UNIT);
		else if (bbr->mode == BBR3_PROBE_RTT)
			bbr3_check_probe_rtt_done(sk);
	}
}

/* The ACK's ECE flag, for this ACK's cong_control (which follows). */
static inline void bbr3_in_ack_event(struct sock *sk, u32 flags)
{
	bbr3_ca(sk)->ack_ece = !!(flags & CA_ACK_ECE);
}

/* v3's tso_segs as mainline's floor of tcp_tso_autosize (deviation 3). */
static inline u32 bbr3_min_tso_segs(struct sock *sk)
{
	return bbr3_tso_segs_generic(sk, tcp_sk(sk)->mss_cache,
				     sk->sk_gso_max_size);
}

/* min_tso_segs (CCA_MIN_TSO_SEGS_CB in the registration below): not
 * registered under BPF unless CCA_BPF_MIN_TSO_SEGS
 * (ccarena_compat.h: a BPF min_tso_segs makes Linux 6.18 send unpaced
 * bursts). v3's default burst is mainline's own tcp_tso_autosize rule
 * (deviation 3), so leaving the op out changes nothing but the min RTT
 * the allowance reads (the stack's instead of v3's). */

/*
 * BBR3_CORE_REGISTER(name): one thin callback per tcp_congestion_ops
 * member (a separate BPF program each, which is why they only call the
 * static inline bodies above) and the registration under `name`. The
 * variant declares its CCA_PARAMS table itself.
 */
#define BBR3_CORE_REGISTER(name)					\
	CCA_CB(void, name##_cb_init, struct sock *sk)			\
	{								\
		bbr3_init(sk);						\
	}								\
	CCA_CB(void, name##_cb_release, struct sock *sk)		\
	{								\
		cca_state_release(sk);					\
	}								\
	CCA_CB(void, name##_cb_main, struct sock *sk, u32 ack, int flag, \
	       const struct rate_sample *rs)				\
	{								\
		bbr3_main(sk, rs);					\
	}								\
	CCA_CB(u32, name##_cb_ssthresh, struct sock *sk)		\
	{								\
		return bbr3_ssthresh(sk);				\
	}								\
	CCA_CB(u32, name##_cb_undo_cwnd, struct sock *sk)		\
	{								\
		return bbr3_undo_cwnd(sk);				\
	}								\
	CCA_CB(void, name##_cb_set_state, struct sock *sk, u8 new_state) \
	{								\
		bbr3_set_state(sk, new_state);				\
	}								\
	CCA_CB(void, name##_cb_cwnd_event, struct sock *sk, int event)	\
	{								\
		bbr3_cwnd_event(sk, event);				\
	}								\
	CCA_CB(void, name##_cb_in_ack_event, struct sock *sk, u32 flags) \
	{								\
		bbr3_in_ack_event(sk, flags);				\
	}								\
	CCA_MIN_TSO_SEGS_CB(name, bbr3_min_tso_segs(sk))		\
	CCA_CB(u32, name##_cb_sndbuf_expand, struct sock *sk)		\
	{								\
		return 3;	/* BBR may slow-start even in recovery */ \
	}								\
	CCA_REGISTER(name,						\
		.flags = TCP_CONG_NON_RESTRICTED,			\
		.init = CCA_FN(name##_cb_init),				\
		.release = CCA_FN(name##_cb_release),			\
		.cong_control = CCA_FN(name##_cb_main),			\
		.ssthresh = CCA_FN(name##_cb_ssthresh),			\
		.undo_cwnd = CCA_FN(name##_cb_undo_cwnd),		\
		.set_state = CCA_FN(name##_cb_set_state),		\
		.cwnd_event = CCA_FN(name##_cb_cwnd_event),		\
		.in_ack_event = CCA_FN(name##_cb_in_ack_event),		\
		CCA_MIN_TSO_SEGS_MEMBER(name)				\
		.sndbuf_expand = CCA_FN(name##_cb_sndbuf_expand))

#endif /* CCARENA_BBR3_CORE_H */
