// SPDX-License-Identifier: GPL-2.0
/*
 * clock.c - the congestion controls' jiffies, for the simulator's TCP.
 *
 * Linux's TCP stamps some of its own fields with tcp_jiffies32 too
 * (snd_cwnd_stamp). The simulator takes that clock from here, so that its
 * TCP and its congestion controls read one definition: cca_now_ms() of
 * ccarena_compat.h, the sender host's jiffies counted in ms.
 */
#include "ccarena_compat.h"

u32 ccarena_native_now_ms(const struct tcp_sock *tp)
{
	return cca_now_ms((const struct sock *)tp);
}
