// SPDX-License-Identifier: GPL-2.0
/*
 * layout.c - what the C compiler thinks ccarena_native.h looks like.
 *
 * ccarena_native_layout() fills `out` with (name, value) rows: "S" for
 * sizeof(struct S), "S.f" for offsetof(struct S, f). The Rust test
 * "NAME" for a constant. The Rust test
 * `layout_matches_c` compares every row with sock.rs's #[repr(C)] mirror,
 * so the two can never silently drift apart.
 */
#include "ccarena_compat.h"

struct ccarena_layout_row {
	const char *name;
	u64 value;
};

#define SIZE(s) { #s, sizeof(struct s) },
#define OFF(s, f) { #s "." #f, offsetof(struct s, f) },
#define VAL(c) { #c, (c) },

static const struct ccarena_layout_row rows[] = {
	SIZE(minmax_sample) OFF(minmax_sample, t) OFF(minmax_sample, v)
	SIZE(minmax) OFF(minmax, s)

	SIZE(sock)
	OFF(sock, sk_pacing_rate) OFF(sock, sk_max_pacing_rate)
	OFF(sock, sk_gso_max_size) OFF(sock, sk_gso_max_segs)
	OFF(sock, sk_pacing_status) OFF(sock, sk_pacing_shift)

	SIZE(inet_connection_sock)
	OFF(inet_connection_sock, icsk_inet)
	OFF(inet_connection_sock, icsk_ca_state)
	OFF(inet_connection_sock, icsk_ca_initialized)
	OFF(inet_connection_sock, icsk_pad)
	OFF(inet_connection_sock, icsk_ca_priv)

	SIZE(ccarena_ext)
	OFF(ccarena_ext, rng_state) OFF(ccarena_ext, params)
	OFF(ccarena_ext, n_params) OFF(ccarena_ext, trace_mode)
	OFF(ccarena_ext, trace_pacing_gain) OFF(ccarena_ext, trace_cwnd_gain)
	OFF(ccarena_ext, trace_bw) OFF(ccarena_ext, trace_var_ppm)
	OFF(ccarena_ext, trace_extra_acked) OFF(ccarena_ext, tick_us)
	OFF(ccarena_ext, tick_phase_us) OFF(ccarena_ext, ext_pad)
	OFF(ccarena_ext, state)

	SIZE(tcp_sock)
	OFF(tcp_sock, inet_conn) OFF(tcp_sock, snd_cwnd)
	OFF(tcp_sock, snd_cwnd_cnt) OFF(tcp_sock, snd_cwnd_clamp)
	OFF(tcp_sock, snd_cwnd_stamp) OFF(tcp_sock, snd_ssthresh)
	OFF(tcp_sock, prior_cwnd) OFF(tcp_sock, prior_ssthresh)
	OFF(tcp_sock, srtt_us) OFF(tcp_sock, mdev_us)
	OFF(tcp_sock, packets_out) OFF(tcp_sock, sacked_out)
	OFF(tcp_sock, lost_out) OFF(tcp_sock, retrans_out)
	OFF(tcp_sock, delivered) OFF(tcp_sock, delivered_ce)
	OFF(tcp_sock, lost) OFF(tcp_sock, app_limited)
	OFF(tcp_sock, mss_cache) OFF(tcp_sock, snd_una) OFF(tcp_sock, snd_nxt)
	OFF(tcp_sock, max_packets_out) OFF(tcp_sock, rate_delivered)
	OFF(tcp_sock, rate_interval_us) OFF(tcp_sock, total_retrans)
	OFF(tcp_sock, rcv_wnd) OFF(tcp_sock, is_cwnd_limited)
	OFF(tcp_sock, rate_app_limited) OFF(tcp_sock, ecn_flags)
	OFF(tcp_sock, tp_pad) OFF(tcp_sock, tcp_mstamp)
	OFF(tcp_sock, tcp_clock_cache) OFF(tcp_sock, delivered_mstamp)
	OFF(tcp_sock, first_tx_mstamp) OFF(tcp_sock, tcp_wstamp_ns)
	OFF(tcp_sock, rtt_min)
	OFF(tcp_sock, cca)

	SIZE(rate_sample)
	OFF(rate_sample, prior_mstamp) OFF(rate_sample, prior_delivered)
	OFF(rate_sample, prior_delivered_ce) OFF(rate_sample, delivered)
	OFF(rate_sample, delivered_ce) OFF(rate_sample, interval_us)
	OFF(rate_sample, snd_interval_us) OFF(rate_sample, rcv_interval_us)
	OFF(rate_sample, rtt_us) OFF(rate_sample, losses)
	OFF(rate_sample, acked_sacked) OFF(rate_sample, prior_in_flight)
	OFF(rate_sample, last_end_seq) OFF(rate_sample, is_app_limited)
	OFF(rate_sample, is_retrans) OFF(rate_sample, is_ack_delayed)
	OFF(rate_sample, tx_in_flight) OFF(rate_sample, lost) OFF(rate_sample, is_ece)

	SIZE(ack_sample)
	OFF(ack_sample, pkts_acked) OFF(ack_sample, rtt_us)
	OFF(ack_sample, in_flight)

	SIZE(tcp_congestion_ops)
	OFF(tcp_congestion_ops, ssthresh) OFF(tcp_congestion_ops, cong_avoid)
	OFF(tcp_congestion_ops, set_state) OFF(tcp_congestion_ops, cwnd_event)
	OFF(tcp_congestion_ops, in_ack_event)
	OFF(tcp_congestion_ops, pkts_acked)
	OFF(tcp_congestion_ops, min_tso_segs)
	OFF(tcp_congestion_ops, cong_control)
	OFF(tcp_congestion_ops, undo_cwnd)
	OFF(tcp_congestion_ops, sndbuf_expand)
	OFF(tcp_congestion_ops, init) OFF(tcp_congestion_ops, release)
	OFF(tcp_congestion_ops, flags) OFF(tcp_congestion_ops, name)

	SIZE(ccarena_param)
	OFF(ccarena_param, name) OFF(ccarena_param, dflt)

	VAL(CA_ACK_SLOWPATH) VAL(CA_ACK_WIN_UPDATE) VAL(CA_ACK_ECE)
	VAL(TCP_ECN_OK) VAL(TCP_ECN_QUEUE_CWR) VAL(CCA_ECN_ACCECN)
};

/* Copies up to cap rows into out; returns the total number of rows. */
size_t ccarena_native_layout(struct ccarena_layout_row *out, size_t cap)
{
	size_t n = sizeof(rows) / sizeof(rows[0]);

	for (size_t i = 0; i < n && i < cap; i++)
		out[i] = rows[i];
	return n;
}
