// SPDX-License-Identifier: GPL-2.0
/*
 * bbr2.c - BBRv2 congestion control, as Google's v2alpha release of
 * net/ipv4/tcp_bbr2.c (github.com/google/bbr, branch v2alpha; "bbr2"), the
 * version the RTT-tuning blog tuned (../shared/papers/
 * bbrv2-rtt-tuning-blog-2020.txt).
 *
 * On the v3 core. v3 (include/bbr3_core.h, whose header comment is the
 * design document: model, state machine, units, state) is v2 with fixes,
 * so most of the two is the same code; this file compiles that core with
 * BBR3_CORE_VERSION 2, which switches the places where v2's code differs
 * (marked "[v2 N]" there) and sets v2's constants as the defaults of the
 * same parameter table.
 *
 * ------------------------------------------------------- the same code
 * The model and its bounds (bw_hi as the max of two ProbeBW cycles,
 * inflight_hi with its lost-prefix cut and its doubling slope in UP,
 * bw_lo/inflight_lo cut by beta per lossy round but not below the latest
 * round's delivery, forgotten in REFILL and after PROBE_RTT); the pacing
 * rate (1% margin) and cwnd (gain * BDP + ACK aggregation + 3 TSO bursts,
 * +2 in UP; cut to the target only once the pipe was full) and their
 * caps by inflight_hi / inflight_hi less 15% headroom / inflight_lo; the
 * ProbeBW cycle DOWN -> CRUISE -> REFILL -> UP with its clocks (2 s +
 * rand 1 s, or min(63, BDP) rounds for Reno coexistence), the risky-probe
 * stop and the re-probe; STARTUP's loss exit (>= full_loss_cnt loss events
 * in a Recovery round with loss > 2%); DRAIN; PROBE_RTT (every 5 s, half
 * the BDP for 200 ms and a round); the loss hooks (ssthresh, undo,
 * set_state, the emulated skb_marked_lost); the ACK-aggregation filter;
 * the fast path's test. Every tunable v2 shares with v3 has the same value
 * (loss_thresh 2%, beta 30%, headroom 15%, probe_rtt_cwnd_gain 1/2, ...).
 *
 * ------------------------------------------------ where v2 differs from v3
 *  1. Gains: STARTUP paces at v1's 2/ln 2 = 2.885 (739/256; v3 2.77) with
 *     cwnd gain 2.885 (v3 2), which DRAIN keeps; DOWN paces at 0.75 (v3
 *     0.906); UP has no extra cwnd gain (v3 +0.25). Parameter defaults.
 *  2. full_loss_cnt 8 (v3 6): STARTUP's loss exit wants 8 loss events in
 *     a Recovery round. Parameter default.
 *  3. STARTUP's full-bw test is v1's: once per round, the max filter must
 *     grow 25% in 3 rounds (v3: each ACK's sample, counted per round); it
 *     runs only in STARTUP (v3 also uses it in UP, note 5).
 *  4. STARTUP's loss exit sets inflight_hi to the BDP (with budget); v3 to
 *     the max of that and the latest round's delivery.
 *  5. UP ends after a min_rtt once inflight reaches 1.25 BDP (a queue is
 *     building: bw_probe_pif_gain) or at the inflight_hi a previous probe
 *     found too high; v3 ends it on a bw plateau unless inflight_hi binds.
 *  6. Starting UP does not reset the plateau detector (v2 has none in UP).
 *  7. In UP, when not cwnd-limited at inflight_hi, v2 drops the ACKs
 *     counted toward the next inflight_hi increment; v3 keeps them, and
 *     clears try_fast_path when it raises inflight_hi.
 *  8. An RTT sample equal to the PROBE_RTT window's min restarts that
 *     window (<=; v3 <): on a path whose RTT sits at its minimum v2 enters
 *     PROBE_RTT later, or not at all.
 *  9. The latest round's delivery (bw_latest, inflight_latest) and the
 *     loss round are tracked only on ACKs that update the model (not on
 *     the fast path), and restart right after the lower bounds are
 *     adapted (so a DRAIN or DOWN entry on that ACK clears them); v3 on
 *     every ACK, restarting at its end.
 * 10. ECN: v2alpha's ECN is for lab tests and off by default
 *     (bbr_ecn_enable = false): no flow is ECN-eligible, so no ECN
 *     response, no ECN STARTUP exit, no ECN-driven reprobe
 *     (ecn_reprobe_gain = 0). Any ECE still marks the round (blocking the
 *     fast path), as in v2. The ecn_* parameters are accepted but have no
 *     effect.
 * 11. bw_lo has no floor of 1 (v3 keeps it >= 1).
 * 12. An RTO sets inflight_lo (if unset, and not probing) to the cwnd
 *     saved by ssthresh (v3: the max of that and the cwnd), and resets
 *     full_bw but not full_bw_cnt.
 * 13. An undo does not clear try_fast_path.
 * 14. Packet-timed rounds start counting from delivered = 0 (v3: from
 *     the delivered count at init).
 * 15. The least TSO burst of Google's rule is v1's, 1 segment below
 *     1.2 Mbit/s of pacing, else 2 (v3: 2).
 *
 * --------------------------------------- deviations from Google's v2alpha
 * Those of bbr3_core.h, which v2alpha shares (the numbers are that
 * header's): 1 skb_marked_lost (a v2 op too) is emulated at the next
 * cong_control; 2 rs->tx_in_flight and rs->lost are the simulator's exact
 * values and estimated in the BPF build; 3 the tso_segs op becomes
 * min_tso_segs (registered under BPF only for a non-default send
 * quantum, so the kernel's own autosizing, the same rule with floor 2,
 * sets the default bursts live: at pacing rates below 1.2 Mbit/s its
 * floor is 2 where v2's is 1); 5 the receiver side (precise ECE ACKs,
 * TCP_CONG_WANTS_CE_EVENTS, fast_ack_mode) is left out; 8 jiffies are ms;
 * 9 the tunables are the ppm/us table (v2's constants below are its
 * defaults; bw_probe_pif_gain 5/4 is a constant of the core); 10 no
 * get_info; 11 the undo snapshot is taken after the losses are handled.
 * (bbr3_core.h's 4, ECN eligibility, 6, PLB, and 7, TLP accounting, are
 * about v3 features v2alpha lacks: ECN is off here, note 10.) Besides:
 *  a. v2alpha's module parameters that are off or neutral by default are
 *     not offered: usage_based_cwnd (off), drain_to_target (on: the DOWN
 *     exit is the BDP test), refill_add_inc (0), ecn_bw_lo/ecn_bw_hi and
 *     bw_hi as a separate bound (ECN-only: bw_hi stays unbounded without
 *     ECN), bw_probe_reno_gain (1: the Reno bound is BDP rounds),
 *     cwnd_tso_budget (1: the budget is a floor), extra_acked_in_startup
 *     (1), fast_path (1), undo (1).
 *  b. v2's PROBE_BW pacing_gain[] array and cycle_rand are v1's leftovers:
 *     v2 indexes it only by its four phases, whose gains note 1 gives.
 *
 * tcp_congestion_ops members and parameters: as bbr3 (bbr3_core.h,
 * "state"; BBR3_CORE_PARAM_DEFS), with v2's defaults (include/
 * bbr2_params.h, shared with cc/bbr2_tuned.c).
 */
#include "bbr2_params.h"

CCA_DESCRIPTION(bbr2,
	"BBRv2 as Google's v2alpha tcp_bbr2.c (on the v3 core): BBR with loss bounds on inflight");
CCA_PARAMS(bbr2, BBR3_CORE_PARAM_DEFS);

BBR3_CORE_REGISTER(bbr2);
