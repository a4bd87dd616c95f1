/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ccarena_compat.h - one congestion-control source, two builds.
 *
 * Every cc/<name>.c includes this header and nothing else from the system.
 * It is written against Linux's tcp_congestion_ops API (Linux >= 6.10:
 * cong_control(sk, ack, flag, rs)) and builds two ways:
 *
 *   native   gcc/clang via crates/cc-native/build.rs. Types come from
 *            ccarena_native.h; the simulator owns the struct tcp_sock.
 *            Registration exports `const struct tcp_congestion_ops
 *            ccarena_ops_<name>` (and `ccarena_params_<name>`), which the
 *            Rust registry finds by the file's stem.
 *
 *   BPF      clang -O2 -g -target bpf -D__TARGET_ARCH_<uname -m> -DCCARENA_BPF
 *            against the running kernel's vmlinux.h (cc/build-bpf.sh, i.e.
 *            python/ccarena/kernel/build.py: the one BPF builder).
 *            Registration emits a SEC(".struct_ops.link") struct named
 *            cc_<name> whose .name is "cc_<name>" (so it never clashes with
 *            the kernel's own reno/cubic/bbr).
 *
 * What a CC may use (all spelled as in Linux unless noted):
 *   tcp_sk() inet_csk() inet_csk_ca() tcp_snd_cwnd() tcp_snd_cwnd_set()
 *   tcp_min_rtt() tcp_packets_in_flight() tcp_stamp_us_delta()
 *   tcp_in_slow_start() tcp_is_cwnd_limited() tcp_slow_start()
 *   tcp_cong_avoid_ai() tcp_reno_ssthresh_of() tcp_reno_undo_cwnd_of()
 *   min() max() min_t() max_t() clamp() div_u64() div64_u64() before() after()
 *   cca_get_random_u32_below(sk, ceil)   Linux: get_random_u32_below(ceil);
 *                                        takes sk for the per-flow RNG
 *   cca_now_us(sk)    tp->tcp_mstamp, us
 *   cca_now_ms(sk)    tcp_jiffies32 counted in ms (steps of one tick)
 *   cca_ms_to_jiffies_ms(sk, ms)  msecs_to_jiffies(ms), in ms: rounded up
 *                                 to whole ticks
 *   cca_edt_lead_us(sk)  us until the earliest departure time (EDT) of the
 *                        next packet
 *   CCA_TRACE(sk, mode, pacing_gain, cwnd_gain, bw_bytes_per_sec)
 *   CCA_TRACE_VAR(sk, value_ppm)        the CC's own variable, for plots
 *   CCA_TRACE_EXTRA_ACKED(sk, packets)  its ACK-aggregation estimate
 *   CCA_PARAM(sk, index, default)
 *   CCA_CB(ret, name, args...)          define a tcp_congestion_ops member
 *   CCA_FN(name)                        reference one in CCA_REGISTER
 *   CCA_PARAMS(name, CCA_PARAM_DEF(...) ...)  the algorithm's parameter table
 *   CCA_DESCRIPTION(name, "one line")   what `ccarena ccs` says it is
 *   CCA_STATE_PRIV(type) / CCA_STATE_EXTENDED(type)  its state: cca_state(sk)
 *   CCA_REGISTER(name, .member = CCA_FN(fn), ...)
 *
 * Deviations from Linux that every CC inherits:
 *  - Time. Linux CCs mix jiffies (tcp_jiffies32, HZ ticks) and tcp_mstamp
 *    (us). Here jiffies are counted in ms (cca_now_ms(): tcp_jiffies32 *
 *    1000 / HZ), so that a CC's constants stay in ms whatever the tick;
 *    the clock still moves a tick at a time, and waits are rounded up to
 *    ticks (cca_ms_to_jiffies_ms()). A kernel's HZ must divide 1000 (100,
 *    250, 1000; not 300). The tick decides where a stamp sits on a tick's
 *    edge: a BBR flow whose round trip divides ProbeRTT's 200 ms (50 ms)
 *    leaves ProbeRTT one round later, more often, at HZ=250 than at 1000
 *    (docs/host.md, "Three BBR flows"). The simulator takes HZ from the
 *    host model (`hz`; HZ=1000 for host = "ideal").
 *  - EDT. Linux BBR uses tp->tcp_wstamp_ns - tp->tcp_clock_cache (both ns)
 *    to count packets that will have left by the next departure time; the
 *    simulator keeps both fields as the kernel does, so cca_edt_lead_us()
 *    is the same code in both builds.
 *  - Randomness is a per-flow xorshift64* seeded by the simulator, so runs
 *    are reproducible; BPF uses bpf_get_prandom_u32().
 *
 * BPF rules these sources obey (net/ipv4/bpf_tcp_ca.c): a struct_ops CC may
 * write only sk_pacing_rate, sk_pacing_status, icsk_ca_priv, snd_cwnd,
 * snd_cwnd_cnt, snd_ssthresh, ecn_flags and app_limited; everything else is
 * read-only (so prior_cwnd lives in the CC's private area). No floating
 * point, 64-bit division only through div_u64()/div64_u64() on unsigned
 * values, loops must have a constant bound, and a CCA_CB callback must never
 * call another CCA_CB callback (each is a separate BPF program): shared
 * logic lives in static inline helpers.
 */
#ifndef CCARENA_COMPAT_H
#define CCARENA_COMPAT_H

/* Bytes of the largest algorithm state (CCA_STATE_EXTENDED, below); the
 * size of the simulator's extension area. BBRv3's struct bbr is ~152. */
#define CCA_STATE_MAX 512

#ifdef CCARENA_BPF
/* ------------------------------------------------------------------ BPF */
/*
 * The kernel's built-in BBR and CUBIC put their private types in BTF, so
 * vmlinux.h defines struct bbr, enum bbr_mode (with BBR_STARTUP...) and
 * struct bictcp. Rename the kernel's copies out of the way; ours are the
 * ones the CC uses.
 */
#define bbr ccarena_vmlinux_bbr
#define bbr_mode ccarena_vmlinux_bbr_mode
#define BBR_STARTUP ccarena_vmlinux_BBR_STARTUP
#define BBR_DRAIN ccarena_vmlinux_BBR_DRAIN
#define BBR_PROBE_BW ccarena_vmlinux_BBR_PROBE_BW
#define BBR_PROBE_RTT ccarena_vmlinux_BBR_PROBE_RTT
#define bictcp ccarena_vmlinux_bictcp
#include "vmlinux.h"
#undef bbr
#undef bbr_mode
#undef BBR_STARTUP
#undef BBR_DRAIN
#undef BBR_PROBE_BW
#undef BBR_PROBE_RTT
#undef bictcp
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

/* Not in BTF (they are macros in the kernel). */
#define ICSK_CA_PRIV_SIZE (13 * sizeof(u64))

#else
/* --------------------------------------------------------------- native */
#include "ccarena_native.h"
#endif

/* --------------------------------------------------- constants (both) */
#ifndef USEC_PER_SEC
#define USEC_PER_SEC 1000000UL
#endif
#ifndef USEC_PER_MSEC
#define USEC_PER_MSEC 1000UL
#endif
#ifndef NSEC_PER_USEC
#define NSEC_PER_USEC 1000UL
#endif
#ifndef MSEC_PER_SEC
#define MSEC_PER_SEC 1000UL
#endif
/* include/net/tcp.h */
#define TCP_INFINITE_SSTHRESH 0x7fffffff
#define TCP_INIT_CWND 10
#define TCP_CONG_NON_RESTRICTED 0x1
/* include/net/tcp.h: tp->ecn_flags. The simulator sets TCP_ECN_OK for
 * both classic ECN and AccECN (Linux 6.18 keeps the two modes in separate
 * bits, TCP_ECN_MODE_RFC3168 = TCP_ECN_OK and TCP_ECN_MODE_ACCECN), so that
 * a CC testing "did this flow negotiate ECN" by TCP_ECN_OK sees both. */
#ifndef TCP_ECN_OK
#define TCP_ECN_OK 1
#define TCP_ECN_QUEUE_CWR 2
#define TCP_ECN_DEMAND_CWR 4
#define TCP_ECN_SEEN 8
#endif
#define CCA_ECN_ACCECN 16
/* include/linux/netdevice.h: the largest non-BIG-TCP GSO packet, bytes. */
#define GSO_LEGACY_MAX_SIZE 65536u
/* include/net/tcp.h: L1_CACHE_ALIGN(128 + MAX_HEADER) on a typical x86-64
 * config (MAX_HEADER = LL_MAX_HEADER 128 + 48 for tunnels), bytes. */
#define MAX_TCP_HEADER 320u

/* ------------------------------------------------------ generic helpers */
#define min(x, y) ({ __typeof__(x) _min1 = (x); __typeof__(y) _min2 = (y); \
		     _min1 < _min2 ? _min1 : _min2; })
#define max(x, y) ({ __typeof__(x) _max1 = (x); __typeof__(y) _max2 = (y); \
		     _max1 > _max2 ? _max1 : _max2; })
#define min_t(type, x, y) ({ type _mint1 = (x); type _mint2 = (y); \
			     _mint1 < _mint2 ? _mint1 : _mint2; })
#define max_t(type, x, y) ({ type _maxt1 = (x); type _maxt2 = (y); \
			     _maxt1 > _maxt2 ? _maxt1 : _maxt2; })
#define clamp(v, lo, hi) min(max(v, lo), hi)
#define clamp_t(type, v, lo, hi) min_t(type, max_t(type, v, lo), hi)

/* Sequence-space / 32-bit-stamp comparisons that survive wrap-around. */
static inline bool before(u32 seq1, u32 seq2)
{
	return (s32)(seq1 - seq2) < 0;
}
#define after(seq2, seq1) before(seq1, seq2)

/* 64-bit divisions: unsigned only (BPF has no signed 64-bit divide). */
static inline u64 div_u64(u64 dividend, u32 divisor)
{
	return dividend / divisor;
}

static inline u64 div64_u64(u64 dividend, u64 divisor)
{
	return dividend / divisor;
}

/* ---------------------------------------------------- socket accessors */
static inline struct tcp_sock *tcp_sk(const struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

static inline struct inet_connection_sock *inet_csk(const struct sock *sk)
{
	return (struct inet_connection_sock *)sk;
}

static inline void *inet_csk_ca(const struct sock *sk)
{
	return (void *)inet_csk(sk)->icsk_ca_priv;
}

static inline u32 tcp_snd_cwnd(const struct tcp_sock *tp)
{
	return tp->snd_cwnd;
}

static inline void tcp_snd_cwnd_set(struct tcp_sock *tp, u32 val)
{
	tp->snd_cwnd = val;
}

/* Windowed min RTT of the connection, us (~0U before the first sample). */
static inline u32 tcp_min_rtt(const struct tcp_sock *tp)
{
	return tp->rtt_min.s[0].v;
}

/* packets_out - (sacked_out + lost_out) + retrans_out, as in tcp.h. */
static inline u32 tcp_packets_in_flight(const struct tcp_sock *tp)
{
	return tp->packets_out - (tp->sacked_out + tp->lost_out) +
	       tp->retrans_out;
}

/* t1 - t0 in us, clamped at 0. */
static inline u32 tcp_stamp_us_delta(u64 t1, u64 t0)
{
	return t1 > t0 ? (u32)(t1 - t0) : 0;
}

static inline bool tcp_in_slow_start(const struct tcp_sock *tp)
{
	return tcp_snd_cwnd(tp) < tp->snd_ssthresh;
}

/* tcp.h: is cwnd the limit? In slow start, grow cwnd to twice what was
 * used (max_packets_out) even if the last window was not cwnd-limited. */
static inline bool tcp_is_cwnd_limited(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	if (tp->is_cwnd_limited)
		return true;
	if (tcp_in_slow_start(tp))
		return tcp_snd_cwnd(tp) < 2 * tp->max_packets_out;
	return false;
}

/* tcp_cong.c: slow start (RFC 5681 with ABC L = infinite): cwnd grows by
 * the packets acked, up to ssthresh. Returns the acked packets left over
 * once ssthresh is reached, for congestion avoidance to consume. */
static inline u32 tcp_slow_start(struct tcp_sock *tp, u32 acked)
{
	u32 cwnd = min(tcp_snd_cwnd(tp) + acked, tp->snd_ssthresh);

	acked -= cwnd - tcp_snd_cwnd(tp);
	tcp_snd_cwnd_set(tp, min(cwnd, tp->snd_cwnd_clamp));
	return acked;
}

/* tcp_cong.c: additive increase, cwnd += 1 per w packets acked. */
static inline void tcp_cong_avoid_ai(struct tcp_sock *tp, u32 w, u32 acked)
{
	if (w == 0)
		w = 1;
	/* Credits accumulated at a larger w are applied gently now. */
	if (tp->snd_cwnd_cnt >= w) {
		tp->snd_cwnd_cnt = 0;
		tcp_snd_cwnd_set(tp, tcp_snd_cwnd(tp) + 1);
	}
	tp->snd_cwnd_cnt += acked;
	if (tp->snd_cwnd_cnt >= w) {
		u32 delta = tp->snd_cwnd_cnt / w;

		tp->snd_cwnd_cnt -= delta * w;
		tcp_snd_cwnd_set(tp, tcp_snd_cwnd(tp) + delta);
	}
	tcp_snd_cwnd_set(tp, min(tcp_snd_cwnd(tp), tp->snd_cwnd_clamp));
}

/* tcp_cong.c tcp_reno_ssthresh(): halve, but never below 2 packets. */
static inline u32 tcp_reno_ssthresh_of(const struct sock *sk)
{
	return max(tcp_snd_cwnd(tcp_sk(sk)) >> 1U, 2U);
}

/* tcp_cong.c tcp_reno_undo_cwnd(): back to the cwnd before the reduction. */
static inline u32 tcp_reno_undo_cwnd_of(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	return max(tcp_snd_cwnd(tp), tp->prior_cwnd);
}

/* ------------------------------------------------- newer rate samples */
/*
 * Three rate-sample fields that BBRv2/v3 read exist only in Google's
 * kernel. The simulator fills them as that kernel does; mainline Linux
 * (this BPF build) has none of them, and each accessor says what a BPF
 * CC gets instead:
 *   tx_in_flight  (tcp_set_tx_in_flight: packets_in_flight after the skb
 *                 was sent) - BPF: 0, "unknown"; a CC that needs it
 *                 estimates it from rs->prior_in_flight per round.
 *   lost          (tp->lost now minus tp->lost when the skb was sent) -
 *                 BPF: 0; estimate from tp->lost across rounds.
 *   is_ece        (FLAG_ECE of this ACK) - BPF: false; the same flag of
 *                 the same ACK reaches in_ack_event() as CA_ACK_ECE, which
 *                 is how a CC should learn it in both builds.
 * rs->is_ack_delayed is mainline's (FLAG_ACK_MAYBE_DELAYED: one runt
 * segment, less than an MSS, cumulatively ACKed), in both builds.
 */
#ifdef CCARENA_BPF
#define cca_rs_tx_in_flight(sk, rs) ((void)(sk), (void)(rs), 0U)
#define cca_rs_lost(sk, rs) ((void)(sk), (void)(rs), 0)
#define cca_rs_is_ece(sk, rs) ((void)(sk), (void)(rs), false)
#else
#define cca_rs_tx_in_flight(sk, rs) ((void)(sk), (rs)->tx_in_flight)
#define cca_rs_lost(sk, rs) ((void)(sk), (rs)->lost)
#define cca_rs_is_ece(sk, rs) ((void)(sk), (rs)->is_ece)
#endif

/* ------------------------------------------------------------------ time */
/* The one clock: us, the time of the ACK or transmit being processed. */
static inline u64 cca_now_us(const struct sock *sk)
{
	return tcp_sk(sk)->tcp_mstamp;
}

/*
 * Jiffies, counted in ms: tcp_jiffies32 times the tick's length in ms, as
 * u32 (wraps after 49 days; compare with before/after). It moves in steps
 * of one tick, as the kernel's does: 4 ms at HZ=250, 1 ms at HZ=1000.
 *   BPF: the kernel's jiffies (bpf_jiffies64()) times 1000 / CONFIG_HZ
 *        (libbpf reads CONFIG_HZ from the kernel's config). A kernel whose
 *        tick is not a whole number of ms (HZ=300), or whose config libbpf
 *        cannot read, gets tp->tcp_mstamp / 1000: HZ=1000's clock.
 *   native: tp->tcp_mstamp at the sender host's tick: struct
 *        ccarena_ext's tick_us (the host model's `hz`) and tick_phase_us
 *        (where the run starts within a tick, drawn from the seed;
 *        crates/sim/src/host.rs). 1000 and 0 by default: HZ=1000.
 */
#ifdef CCARENA_BPF
extern unsigned int CONFIG_HZ __kconfig __weak;

/* The tick, ms: 1000 / CONFIG_HZ, or 0 where jiffies are not whole ms. */
static inline u32 cca_bpf_tick_ms(void)
{
	u32 hz = CONFIG_HZ;

	return hz && hz <= MSEC_PER_SEC && MSEC_PER_SEC % hz == 0 ? MSEC_PER_SEC / hz : 0;
}

static inline u32 cca_tick_ms(const struct sock *sk)
{
	u32 tick = cca_bpf_tick_ms();

	return tick ? tick : 1;
}

static inline u32 cca_now_ms(const struct sock *sk)
{
	u32 tick = cca_bpf_tick_ms();

	if (!tick)
		return (u32)div_u64(tcp_sk(sk)->tcp_mstamp, USEC_PER_MSEC);
	return (u32)bpf_jiffies64() * tick;
}
#else
static inline u32 cca_tick_ms(const struct sock *sk)
{
	return (u32)div_u64(tcp_sk(sk)->cca.tick_us, USEC_PER_MSEC);
}

/* The ticks since the clock's origin, shifted by the host's phase, times
 * the tick in ms. The simulator's TCP reads the same function
 * (ccarena_native_now_ms(), crates/cc-native/src/clock.c) for its own
 * tcp_jiffies32. */
static inline u32 cca_now_ms(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	u64 ticks = div_u64(tp->tcp_mstamp + tp->cca.tick_phase_us,
			    tp->cca.tick_us);

	return (u32)(ticks * cca_tick_ms(sk));
}
#endif

/* msecs_to_jiffies(ms), in ms: ms rounded up to a whole number of ticks
 * (Linux rounds up, so that a wait is never shorter than asked). */
static inline u32 cca_ms_to_jiffies_ms(const struct sock *sk, u32 ms)
{
	u32 tick = cca_tick_ms(sk);

	return tick > 1 ? (ms + tick - 1) / tick * tick : ms;
}

/* us from now until the earliest departure time of the next packet. */
static inline u32 cca_edt_lead_us(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	u64 now_ns = tp->tcp_clock_cache;
	u64 edt_ns = tp->tcp_wstamp_ns;

	return edt_ns > now_ns ? (u32)div_u64(edt_ns - now_ns, NSEC_PER_USEC) : 0;
}

/* ---------------------------------------------------------- randomness */
/* Uniform in [0, ceil) (ceil > 0), by multiply-shift like Linux's fast path
 * of get_random_u32_below(). */
static inline u32 cca_get_random_u32_below(struct sock *sk, u32 ceil)
{
	u32 r;
#ifdef CCARENA_BPF
	(void)sk;
	r = bpf_get_prandom_u32();
#else
	/* xorshift64* (Vigna 2016): per-flow state, never 0. */
	u64 x = tcp_sk(sk)->cca.rng_state;

	if (x == 0)
		x = 0x9E3779B97F4A7C15ULL;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	tcp_sk(sk)->cca.rng_state = x;
	r = (u32)((x * 0x2545F4914F6CDD1DULL) >> 32);
#endif
	return (u32)(((u64)r * ceil) >> 32);
}

/* ------------------------------------------------------------ telemetry */
/* Report the CC's state for plots: mode is CC-specific (e.g. BBR_PROBE_BW),
 * gains are << 8, bw is the CC's bandwidth estimate in bytes per second.
 *
 * Native: fields of the simulator's struct ccarena_ext, sampled with the
 * flow's other telemetry. BPF: one record per socket in the per-socket
 * storage map cca_trace, which the live engine's sender reads with the
 * socket's fd (bpf_map_lookup_elem on an SK_STORAGE map takes the fd as
 * key; python/ccarena/live/cctrace.py) at every telemetry tick -- TCP_INFO
 * carries none of this for a BPF algorithm (get_info is not a struct_ops
 * member BPF may set). The record is created by the first report (so every
 * object has the map, used or not) and freed with the socket. */
#ifdef CCARENA_BPF
/* The layout python/ccarena/live/cctrace.py decodes; a test reads it back
 * from the built object's BTF (tests/test_bpf_build.py). */
struct cca_trace_rec {
	__u32 mode;		/* CC-specific state number */
	__u32 pacing_gain;	/* << 8 (BBR_UNIT) */
	__u32 cwnd_gain;	/* << 8 (BBR_UNIT) */
	__u32 has_var;		/* 1 once CCA_TRACE_VAR reported var_ppm */
	__u64 bw;		/* CC's bandwidth estimate, bytes per second */
	__u64 var_ppm;		/* CC's own variable, ppm of 1 */
	__u32 extra_acked;	/* packets, CCA_TRACE_EXTRA_ACKED */
	__u32 has_extra_acked;	/* 1 once CCA_TRACE_EXTRA_ACKED reported */
};

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct cca_trace_rec);
} cca_trace SEC(".maps");

static inline struct cca_trace_rec *cca_trace_rec(const struct sock *sk)
{
	return bpf_sk_storage_get(&cca_trace, (void *)sk, 0,
				  BPF_SK_STORAGE_GET_F_CREATE);
}

#define CCA_TRACE(sk, mode_, pacing_gain_, cwnd_gain_, bw_bytes_per_sec)	\
	do {								\
		struct cca_trace_rec *_t = cca_trace_rec(sk);		\
		if (_t) {						\
			_t->mode = (__u32)(mode_);			\
			_t->pacing_gain = (__u32)(pacing_gain_);	\
			_t->cwnd_gain = (__u32)(cwnd_gain_);		\
			_t->bw = (__u64)(bw_bytes_per_sec);		\
		}							\
	} while (0)
#else
#define CCA_TRACE(sk, mode, pacing_gain, cwnd_gain, bw_bytes_per_sec)	\
	do {								\
		struct ccarena_ext *_cca = &tcp_sk(sk)->cca;		\
		_cca->trace_mode = (u32)(mode);				\
		_cca->trace_pacing_gain = (u32)(pacing_gain);		\
		_cca->trace_cwnd_gain = (u32)(cwnd_gain);		\
		_cca->trace_bw = (u64)(bw_bytes_per_sec);		\
	} while (0)
#endif

/* Report one variable of the CC's own (e.g. BBR-CWS's upper_scaling_factor)
 * for plots, as a number in ppm of 1 (1000000 = 1.0); the telemetry column
 * cc_var is it / 1e6, null for a CC that never reports one (the simulator
 * starts the field at cc_native::TRACE_VAR_NONE; BPF has has_var). */
#ifdef CCARENA_BPF
#define CCA_TRACE_VAR(sk, value_ppm)					\
	do {								\
		struct cca_trace_rec *_t = cca_trace_rec(sk);		\
		if (_t) {						\
			_t->var_ppm = (__u64)(value_ppm);		\
			_t->has_var = 1;				\
		}							\
	} while (0)
#else
#define CCA_TRACE_VAR(sk, value_ppm)					\
	(tcp_sk(sk)->cca.trace_var_ppm = (u64)(value_ppm))
#endif

/* Report the CC's estimate of ACK aggregation, in packets: how many more
 * packets the ACKs of the recent rounds delivered than its bandwidth
 * estimate predicts over the same time (BBR's extra_acked max filter,
 * which it adds to cwnd). Bunched ACKs -- delayed or stretched ACKs, a
 * wifi link, ACKs compressed in a reverse queue -- raise it; the telemetry
 * column extra_acked, null for a CC that never reports one (the simulator
 * starts the field at cc_native::TRACE_EXTRA_ACKED_NONE; BPF has
 * has_extra_acked). */
#ifdef CCARENA_BPF
#define CCA_TRACE_EXTRA_ACKED(sk, packets)				\
	do {								\
		struct cca_trace_rec *_t = cca_trace_rec(sk);		\
		if (_t) {						\
			_t->extra_acked = (__u32)(packets);		\
			_t->has_extra_acked = 1;			\
		}							\
	} while (0)
#else
#define CCA_TRACE_EXTRA_ACKED(sk, packets)				\
	(tcp_sk(sk)->cca.trace_extra_acked = (u32)(packets))
#endif

/* ------------------------------------------------------ min_tso_segs */
/* CCA_BPF_MIN_TSO_SEGS: defined (to 1), the BPF build registers the
 * algorithm's min_tso_segs; undefined (the default), it leaves the TSO
 * floor to the kernel's tcp_min_tso_segs. The cores test it where they
 * register (bbr_core.h, bbr3_core.h), so it may be defined before or
 * after this header is included.
 * On the live engine's Linux 6.18 a BPF min_tso_segs -- whatever it
 * returns -- makes the stack send about once a second a burst of up to
 * cwnd - inflight packets that pacing does not spread (docs/live.md,
 * "Sender bursts from a BPF min_tso_segs"). An algorithm whose send
 * quantum works through the op defines this to 1 before its includes
 * (bbr_tuned.c, bbr3_tuned.c); a parameter variant that changes
 * send_quantum gets it from python/ccarena/kernel/build.py. The native
 * build always registers the op.
 *
 * A core registers the op with CCA_MIN_TSO_SEGS_CB(name, value) -- the
 * callback name##_cb_min_tso_segs returning value, an expression of sk --
 * and CCA_MIN_TSO_SEGS_MEMBER(name) among its CCA_REGISTER members. Under
 * BPF both expand to nothing unless CCA_BPF_MIN_TSO_SEGS is 1 where they
 * expand (token pasting: an undefined CCA_BPF_MIN_TSO_SEGS pastes as its
 * own name), so the algorithm may define it after this header. */
#define CCA_PASTE_(a, b) a##b
#define CCA_PASTE(a, b) CCA_PASTE_(a, b)
#ifdef CCARENA_BPF
#define CCA_MIN_TSO_SEGS_KEEP_1(...) __VA_ARGS__
#define CCA_MIN_TSO_SEGS_KEEP_CCA_BPF_MIN_TSO_SEGS(...)
#define CCA_MIN_TSO_SEGS_IF(...)					\
	CCA_PASTE(CCA_MIN_TSO_SEGS_KEEP_, CCA_BPF_MIN_TSO_SEGS)(__VA_ARGS__)
#else
#define CCA_MIN_TSO_SEGS_IF(...) __VA_ARGS__
#endif
#define CCA_MIN_TSO_SEGS_CB(name, value)				\
	CCA_MIN_TSO_SEGS_IF(						\
	CCA_CB(u32, name##_cb_min_tso_segs, struct sock *sk)		\
	{								\
		return (value);						\
	})
#define CCA_MIN_TSO_SEGS_MEMBER(name)					\
	CCA_MIN_TSO_SEGS_IF(.min_tso_segs = CCA_FN(name##_cb_min_tso_segs),)

/* ----------------------------------------------------------- parameters */
/*
 * Each algorithm numbers its tunables 0..n-1 (an enum in its .c) and lists
 * them with CCA_PARAMS so the simulator can map scenario names to indexes.
 * CCA_PARAM(sk, i, dflt) is the per-flow override if one was given, else
 * dflt. In BPF the overrides are one rodata array per object that the
 * loader may fill before load (cca_params / cca_n_params), else defaults.
 */
/* The most parameters one algorithm may have: the size of the BPF override
 * array (cca_params) and the limit CCA_PARAMS checks. The one definition:
 * python/ccarena/kernel/build.py reads it from this line. BBRv3 with the
 * send quantum's parameters has 33. */
#define CCA_MAX_PARAMS 40

/*
 * One row of an algorithm's parameter table (native export only). The name
 * carries the unit as a suffix, which the scenario front end reads: "_us" a
 * time in us (scenario: alpha = "3ms"), "_ppm" a ratio in parts per million
 * (scenario: beta = 0.01 or "1%"), none a plain integer. The scenario key is
 * the name without its suffix.
 */
struct ccarena_param {
	const char *name;	/* e.g. "alpha_us", "cwnd_gain_ppm", "first_cut" */
	u64 dflt;		/* value used when the scenario does not set it */
};

#define CCA_PARAM_DEF(index, pname, dflt_value) \
	[index] = { .name = pname, .dflt = (u64)(dflt_value) },

/* Rows in a table (the highest index + 1): checked against CCA_MAX_PARAMS
 * where the table is declared, in both builds. */
#define CCA_PARAMS_COUNT(...)						\
	(sizeof((const struct ccarena_param[]){ __VA_ARGS__ { 0, 0 } }) / \
	 sizeof(struct ccarena_param) - 1)
#define CCA_PARAMS_CHECK(cname, ...)					\
	_Static_assert(CCA_PARAMS_COUNT(__VA_ARGS__) <= CCA_MAX_PARAMS,	\
		       #cname ": more parameters than CCA_MAX_PARAMS")

#ifdef CCARENA_BPF
/*
 * A parameter variant (python/ccarena/kernel/build.py) defines
 * CCA_PARAM_VALUES (its values in index order, a comma-separated list) and
 * CCA_N_PARAMS before it includes this header, so that these are the one
 * cca_params / cca_n_params every use reads: the helpers below are
 * compiled here, in this header. (Renaming an empty pair out of the way
 * with #define and defining a filled pair after the #include, as the
 * builder once did, left these helpers reading the empty pair: every value
 * read through cca_u32_param, cca_ms_param or cca_ratio_param, most of
 * BBR's and all of CUBIC's, was its default under BPF.)
 */
#ifndef CCA_PARAM_VALUES
#define CCA_PARAM_VALUES 0
#define CCA_N_PARAMS 0
#endif
const volatile u64 cca_params[CCA_MAX_PARAMS] = { CCA_PARAM_VALUES };
const volatile u32 cca_n_params = CCA_N_PARAMS;

#define CCA_PARAM(sk, index, dflt)					\
	({ (void)(sk);							\
	   (u32)(index) < cca_n_params && (u32)(index) < CCA_MAX_PARAMS \
		   ? cca_params[(index)] : (u64)(dflt); })
#define CCA_PARAMS(cname, ...) CCA_PARAMS_CHECK(cname, __VA_ARGS__)
#else
#define CCA_PARAM(sk, index, dflt)					\
	({ const struct ccarena_ext *_cp = &tcp_sk(sk)->cca;		\
	   _cp->params && (u32)(index) < _cp->n_params			\
		   ? _cp->params[(index)] : (u64)(dflt); })
/* The table ends with a row whose name is NULL. */
#define CCA_PARAMS(cname, ...)						\
	CCA_PARAMS_CHECK(cname, __VA_ARGS__);				\
	const struct ccarena_param ccarena_params_##cname[] = {		\
		__VA_ARGS__ { .name = 0, .dflt = 0 } }
#endif

/*
 * The algorithm's one-line description, next to its parameter table: the
 * one place it is written (`ccarena ccs` lists it). A string literal
 * ("" text does not compile otherwise) of at most CCA_DESCRIPTION_MAX
 * characters, checked in both builds; exported natively as
 * `ccarena_description_<name>` (the Rust registry requires one per
 * algorithm: a missing description does not link), nothing in BPF.
 */
#define CCA_DESCRIPTION_MAX 100
#define CCA_DESCRIPTION_CHECK(cname, text)				\
	_Static_assert(sizeof("" text) > 1 &&				\
		       sizeof("" text) <= CCA_DESCRIPTION_MAX + 1,	\
		       #cname ": CCA_DESCRIPTION must be 1-100 characters")
#ifdef CCARENA_BPF
#define CCA_DESCRIPTION(cname, text) CCA_DESCRIPTION_CHECK(cname, text)
#else
#define CCA_DESCRIPTION(cname, text)					\
	CCA_DESCRIPTION_CHECK(cname, text);				\
	const char ccarena_description_##cname[] = "" text
#endif

/*
 * A parameter in the unit the code runs on, for every algorithm: the
 * table's u64 clamped to what the field holds. Times as ms ("jiffies")
 * are rounded up, so that only 0 is 0, and capped where after()/before()
 * on ms stamps still order correctly; ratios (_ppm) are rounded to the
 * nearest 1/unit and capped at max.
 */
#define CCA_PPM 1000000U	/* 1.0 in a _ppm parameter */

static inline u32 cca_u32_param(struct sock *sk, u32 index, u64 dflt)
{
	return (u32)min_t(u64, CCA_PARAM(sk, index, dflt), 0xffffffffULL);
}

/* A wait added to a jiffies stamp (cca_now_ms()), from a parameter in us:
 * ms rounded up to whole ticks, as Linux's msecs_to_jiffies() and
 * `seconds * HZ` give it. */
static inline u32 cca_ms_param(struct sock *sk, u32 index, u64 dflt_us)
{
	u64 us = min_t(u64, CCA_PARAM(sk, index, dflt_us),
		       0x3fffffffULL * USEC_PER_MSEC);

	return cca_ms_to_jiffies_ms(sk, (u32)div_u64(us + USEC_PER_MSEC - 1,
						     USEC_PER_MSEC));
}

static inline u32 cca_ratio_param(struct sock *sk, u32 index, u64 dflt_ppm,
				  u32 unit, u32 max)
{
	u64 ppm = min_t(u64, CCA_PARAM(sk, index, dflt_ppm),
			(u64)max * CCA_PPM);

	return (u32)min_t(u64, div_u64(ppm * unit + CCA_PPM / 2, CCA_PPM),
			  max);
}

/* ------------------------------------------------------------- state */
/*
 * An algorithm's per-socket state, behind one accessor, wherever it lives:
 *
 *   CCA_STATE_PRIV(struct foo)      in icsk_ca_priv (104 bytes), as Linux's
 *                                   own CCs; asserted to fit.
 *   CCA_STATE_EXTENDED(struct foo)  state that does not fit (asserted: a
 *                                   state that fits must use the private
 *                                   area), up to CCA_STATE_MAX bytes:
 *                                   natively in the simulator's extension
 *                                   area (tp->cca.state, zeroed by init),
 *                                   in BPF in per-socket storage (a
 *                                   BPF_MAP_TYPE_SK_STORAGE map, created
 *                                   zeroed by init and deleted by release;
 *                                   the kernel also frees it with the
 *                                   socket).
 *
 * Either defines, for the algorithm's callbacks:
 *   struct foo *cca_state(const struct sock *sk)  the state (never NULL)
 *   void cca_state_init(struct sock *sk)     first thing in .init
 *   void cca_state_release(struct sock *sk)  in .release (a no-op for PRIV,
 *                                            which needs no .release)
 * In BPF, should the kernel fail to allocate the storage (ENOMEM), the
 * accessor falls back to one shared scratch copy rather than NULL, so that
 * the verifier accepts every access without a NULL test; the socket then
 * runs on garbage state, which only an out-of-memory host sees.
 */
#define CCA_STATE_PRIV(T)						\
	_Static_assert(sizeof(T) <= ICSK_CA_PRIV_SIZE,		\
		       #T " must fit in icsk_ca_priv");		\
	static inline T *cca_state(const struct sock *sk)		\
	{								\
		return (T *)inet_csk_ca(sk);				\
	}								\
	static inline void cca_state_init(struct sock *sk) { (void)sk; } \
	static inline void cca_state_release(struct sock *sk) { (void)sk; }

#define CCA_STATE_EXTENDED_CHECK(T)					\
	_Static_assert(sizeof(T) > ICSK_CA_PRIV_SIZE,		\
		       #T " fits in icsk_ca_priv: use CCA_STATE_PRIV"); \
	_Static_assert(sizeof(T) <= CCA_STATE_MAX,			\
		       #T " is larger than CCA_STATE_MAX");

#ifdef CCARENA_BPF
#define CCA_STATE_EXTENDED(T)					\
	CCA_STATE_EXTENDED_CHECK(T)					\
	struct {							\
		__uint(type, BPF_MAP_TYPE_SK_STORAGE);			\
		__uint(map_flags, BPF_F_NO_PREALLOC);			\
		__type(key, int);					\
		__type(value, T);					\
	} cca_state_map SEC(".maps");					\
	static T cca_state_scratch;					\
	static inline T *cca_state(const struct sock *sk)		\
	{								\
		T *s = bpf_sk_storage_get(&cca_state_map, (void *)sk, 0, 0); \
		return s ? s : &cca_state_scratch;			\
	}								\
	static inline void cca_state_init(struct sock *sk)		\
	{								\
		bpf_sk_storage_get(&cca_state_map, sk, 0,		\
				   BPF_SK_STORAGE_GET_F_CREATE);	\
	}								\
	static inline void cca_state_release(struct sock *sk)		\
	{								\
		bpf_sk_storage_delete(&cca_state_map, sk);		\
	}
#else
#define CCA_STATE_EXTENDED(T)					\
	CCA_STATE_EXTENDED_CHECK(T)					\
	static inline T *cca_state(const struct sock *sk)		\
	{								\
		return (T *)tcp_sk(sk)->cca.state;			\
	}								\
	static inline void cca_state_init(struct sock *sk)		\
	{								\
		__builtin_memset(tcp_sk(sk)->cca.state, 0,		\
				 sizeof(tcp_sk(sk)->cca.state));	\
	}								\
	static inline void cca_state_release(struct sock *sk) { (void)sk; }
#endif

/* ---------------------------------------------------------- registration */
#ifdef CCARENA_BPF
/*
 * ".struct_ops.link" (libbpf >= 1.2) registers the CC through a BPF link
 * that is unregistered when the link goes away. libbpf 1.1 (Debian 12's
 * bpftool 7.1) only knows ".struct_ops" (register by map update, unregister
 * with `bpftool struct_ops unregister name cc_<name>`): build with
 * -DCCARENA_BPF_LEGACY_STRUCT_OPS (cc/build-bpf.sh --legacy) for it.
 */
#ifdef CCARENA_BPF_LEGACY_STRUCT_OPS
#define CCA_STRUCT_OPS_SEC ".struct_ops"
#else
#define CCA_STRUCT_OPS_SEC ".struct_ops.link"
#endif
#define CCA_CB(ret, name, ...) SEC("struct_ops") ret BPF_PROG(name, __VA_ARGS__)
#define CCA_FN(name) ((void *)(name))
#define CCA_REGISTER(cname, ...)					\
	char _license[] SEC("license") = "GPL";				\
	SEC(CCA_STRUCT_OPS_SEC)						\
	struct tcp_congestion_ops cc_##cname = {			\
		__VA_ARGS__,						\
		.name = "cc_" #cname,					\
	}
#else
#define CCA_CB(ret, name, ...) static ret name(__VA_ARGS__)
#define CCA_FN(name) (name)
#define CCA_REGISTER(cname, ...)					\
	const struct tcp_congestion_ops ccarena_ops_##cname = {		\
		__VA_ARGS__,						\
		.name = #cname,						\
	}
#endif

#endif /* CCARENA_COMPAT_H */
