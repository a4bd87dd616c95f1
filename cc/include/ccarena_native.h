/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ccarena_native.h - the slice of Linux's socket structures that cc/*.c
 * touches, for the native (simulator) build.
 *
 * In the BPF build these types come from the running kernel's vmlinux.h and
 * this file is not included. In the native build the simulator owns one
 * `struct tcp_sock` per flow and keeps it authoritative: the sender reads
 * and writes these very fields (snd_cwnd, packets_out, sk_pacing_rate, ...)
 * so there is no copy to drift out of sync.
 *
 * Layout contract: crates/cc-native/src/sock.rs mirrors every struct here
 * field for field (#[repr(C)]). The helper ccarena_native_layout() in
 * crates/cc-native/src/layout.c reports sizeof/offsetof values that a Rust
 * test compares against the mirror, so a change here that is not made there
 * fails `cargo test`.
 *
 * Nesting follows Linux so that tcp_sk(sk), inet_csk(sk) and inet_csk_ca(sk)
 * are the same pointer casts in both builds:
 *   struct tcp_sock { struct inet_connection_sock { struct sock } ... }
 * Bitfields of the kernel (icsk_ca_state, is_cwnd_limited) are whole bytes
 * here; code reads and writes them by name, which works for both.
 */
#ifndef CCARENA_NATIVE_H
#define CCARENA_NATIVE_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;
typedef uint8_t __u8;
typedef uint16_t __u16;
typedef uint32_t __u32;
typedef uint64_t __u64;
typedef int32_t __s32;
typedef int64_t __s64;

/* include/linux/win_minmax.h: a windowed min/max of (time, value) samples. */
struct minmax_sample {
	u32 t;	/* time the sample was taken (units chosen by the user) */
	u32 v;	/* value */
};
struct minmax {
	struct minmax_sample s[3];
};

/* include/net/sock.h */
struct sock {
	unsigned long sk_pacing_rate;	  /* bytes per second, set by the CC */
	unsigned long sk_max_pacing_rate; /* bytes per second, cap (~0UL: none) */
	u32 sk_gso_max_size;		  /* bytes, largest TSO burst (64 KB) */
	u16 sk_gso_max_segs;		  /* segments, largest TSO burst */
	u8 sk_pacing_status;		  /* enum sk_pacing */
	u8 sk_pacing_shift;		  /* TSO budget = rate >> shift (10: ~1 ms) */
};

/* include/net/inet_connection_sock.h; ICSK_CA_PRIV_SIZE is 13 u64s. */
#define ICSK_CA_PRIV_SIZE (13 * sizeof(u64))
struct inet_connection_sock {
	struct sock icsk_inet;	/* Linux nests inet_sock here; we need sock only */
	u8 icsk_ca_state;	/* enum tcp_ca_state */
	u8 icsk_ca_initialized;
	u8 icsk_pad[6];
	u64 icsk_ca_priv[13];	/* the CC's private state (inet_csk_ca) */
};

/*
 * ccarena's native-only extension: what the kernel does not have but the
 * simulator needs from a CC. Reached through ccarena_ext(sk); in the BPF
 * build the accessors that use it compile to nothing or to BPF equivalents.
 */
struct ccarena_ext {
	u64 rng_state;		/* per-flow xorshift64* state, seeded by the sim */
	const u64 *params;	/* per-flow parameter overrides, or NULL */
	u32 n_params;		/* entries in params */
	/* Telemetry the CC reports for plots (CCA_TRACE); 0 when unused. */
	u32 trace_mode;		/* CC-specific state number, e.g. BBR_PROBE_BW */
	u32 trace_pacing_gain;	/* << 8 (BBR_UNIT) */
	u32 trace_cwnd_gain;	/* << 8 (BBR_UNIT) */
	u64 trace_bw;		/* CC's bandwidth estimate, bytes per second */
	/* CC's own variable (CCA_TRACE_VAR), ppm of 1; all ones
	 * (cc_native::TRACE_VAR_NONE) until the CC reports one. */
	u64 trace_var_ppm;
	/* CC's ACK-aggregation estimate (CCA_TRACE_EXTRA_ACKED), packets;
	 * all ones (cc_native::TRACE_EXTRA_ACKED_NONE) until it reports one. */
	u32 trace_extra_acked;
	/* The sender host's jiffies (cca_now_ms()): one tick, us (1e6 / HZ,
	 * a whole number of ms), and how far into a tick tcp_mstamp's origin
	 * falls, us (< tick_us); set by the simulator (crates/sim/src/host.rs). */
	u32 tick_us;
	u32 tick_phase_us;
	u32 ext_pad;		/* keeps state 8-byte aligned, as in Rust */
	/* The state of a CC too large for icsk_ca_priv (CCA_STATE_EXTENDED
	 * in ccarena_compat.h; BPF keeps it in per-socket storage). */
	u64 state[CCA_STATE_MAX / 8];
};

/* include/linux/tcp.h: the fields cc/*.c reads or writes. */
struct tcp_sock {
	struct inet_connection_sock inet_conn;
	u32 snd_cwnd;		/* packets, congestion window */
	u32 snd_cwnd_cnt;	/* linear-increase counter */
	u32 snd_cwnd_clamp;	/* packets, cwnd upper bound */
	u32 snd_cwnd_stamp;	/* jiffies (ms) of last cwnd change/validation */
	u32 snd_ssthresh;	/* packets, slow-start threshold */
	u32 prior_cwnd;		/* packets, cwnd before loss recovery */
	u32 prior_ssthresh;	/* packets, ssthresh saved for undo */
	u32 srtt_us;		/* smoothed RTT << 3, in us */
	u32 mdev_us;		/* RTT mean deviation, in us */
	u32 packets_out;	/* packets sent and not yet cumulatively acked */
	u32 sacked_out;		/* packets SACKed */
	u32 lost_out;		/* packets marked lost */
	u32 retrans_out;	/* retransmitted packets in flight */
	u32 delivered;		/* packets delivered, incl. retransmits */
	u32 delivered_ce;	/* packets delivered with ECN CE */
	u32 lost;		/* packets lost in total */
	u32 app_limited;	/* delivered count at which app-limited ends, 0=no */
	u32 mss_cache;		/* bytes, payload per segment */
	u32 snd_una;		/* first unacknowledged sequence number (bytes) */
	u32 snd_nxt;		/* next sequence number to send (bytes) */
	u32 max_packets_out;	/* packets, max packets_out in last window */
	u32 rate_delivered;	/* packets, delivered in the last rate sample */
	u32 rate_interval_us;	/* us, interval of the last rate sample */
	u32 total_retrans;	/* packets retransmitted in total */
	u32 rcv_wnd;		/* bytes, receiver's window (unused by CCs) */
	u8 is_cwnd_limited;	/* was cwnd the limit in the last window? */
	u8 rate_app_limited;	/* was the last rate sample app-limited? */
	u8 ecn_flags;
	u8 tp_pad;
	u64 tcp_mstamp;		/* us, time of the current ACK/transmit event */
	u64 tcp_clock_cache;	/* ns, tcp_clock_ns() at tcp_mstamp (Linux: ns) */
	u64 delivered_mstamp;	/* us, time tp->delivered last changed */
	u64 first_tx_mstamp;	/* us, start of the current send window */
	u64 tcp_wstamp_ns;	/* ns, earliest departure time of the next skb */
	struct minmax rtt_min;	/* windowed min RTT in us (tcp_min_rtt) */
	struct ccarena_ext cca;	/* native-only: see above */
};

/* include/net/tcp.h: one delivery-rate sample, filled as in tcp_rate.c. */
struct rate_sample {
	u64 prior_mstamp;	/* us, starting timestamp for interval */
	u32 prior_delivered;	/* tp->delivered at prior_mstamp */
	u32 prior_delivered_ce;
	s32 delivered;		/* packets delivered over interval */
	s32 delivered_ce;
	long interval_us;	/* us, time for tp->delivered to incr "delivered" */
	u32 snd_interval_us;	/* us, snd interval for delivered packets */
	u32 rcv_interval_us;	/* us, rcv interval for delivered packets */
	long rtt_us;		/* us, RTT of last (S)ACKed packet (or -1) */
	int losses;		/* packets marked lost upon ACK */
	u32 acked_sacked;	/* packets newly (S)ACKed upon ACK */
	u32 prior_in_flight;	/* packets in flight before this ACK */
	u32 last_end_seq;	/* end_seq of most recently ACKed packet */
	bool is_app_limited;	/* is sample from packet with bubble in pipe? */
	bool is_retrans;	/* is sample from retransmission? */
	bool is_ack_delayed;	/* is this (likely) a delayed ACK? */
	/* Fields of Google's BBRv3 stack, not mainline's (read them through
	 * cca_rs_tx_in_flight() / cca_rs_lost() / cca_rs_is_ece(), which say
	 * what the BPF build has instead): */
	u32 tx_in_flight;	/* packets in flight when the sampled skb was sent, itself included */
	s32 lost;		/* packets marked lost since the sampled skb was sent */
	bool is_ece;		/* this ACK carried ECE (FLAG_ECE) */
};

/* include/net/tcp.h: argument of pkts_acked. */
struct ack_sample {
	u32 pkts_acked;		/* packets newly acked */
	s32 rtt_us;		/* us, RTT sample, or -1 */
	u32 in_flight;		/* packets in flight before this ACK */
};

/* include/net/tcp.h; members named and typed as in Linux >= 6.10. */
#define TCP_CA_NAME_MAX 16
struct tcp_congestion_ops {
	u32 (*ssthresh)(struct sock *sk);
	void (*cong_avoid)(struct sock *sk, u32 ack, u32 acked);
	void (*set_state)(struct sock *sk, u8 new_state);
	void (*cwnd_event)(struct sock *sk, int ev);
	void (*in_ack_event)(struct sock *sk, u32 flags);
	void (*pkts_acked)(struct sock *sk, const struct ack_sample *sample);
	u32 (*min_tso_segs)(struct sock *sk);
	void (*cong_control)(struct sock *sk, u32 ack, int flag,
			     const struct rate_sample *rs);
	u32 (*undo_cwnd)(struct sock *sk);
	u32 (*sndbuf_expand)(struct sock *sk);
	void (*init)(struct sock *sk);
	void (*release)(struct sock *sk);
	u32 flags;
	char name[TCP_CA_NAME_MAX];
};

/* enum tcp_ca_state */
enum tcp_ca_state {
	TCP_CA_Open = 0,
	TCP_CA_Disorder = 1,
	TCP_CA_CWR = 2,
	TCP_CA_Recovery = 3,
	TCP_CA_Loss = 4,
};

/* enum tcp_ca_event */
enum tcp_ca_event {
	CA_EVENT_TX_START,	/* first transmit when no packets in flight */
	CA_EVENT_CWND_RESTART,	/* congestion window restart */
	CA_EVENT_COMPLETE_CWR,	/* end of congestion recovery */
	CA_EVENT_LOSS,		/* loss timeout */
	CA_EVENT_ECN_NO_CE,
	CA_EVENT_ECN_IS_CE,
};

/* enum tcp_ca_ack_event_flags */
#define CA_ACK_SLOWPATH (1 << 0)
#define CA_ACK_WIN_UPDATE (1 << 1)
#define CA_ACK_ECE (1 << 2)

/* enum sk_pacing */
enum sk_pacing {
	SK_PACING_NONE = 0,
	SK_PACING_NEEDED = 1,
	SK_PACING_FQ = 2,
};

#endif /* CCARENA_NATIVE_H */
