/* SPDX-License-Identifier: GPL-2.0 */
/*
 * minmax.h - windowed running min/max of (time, value) samples, the
 * estimator of Linux's lib/win_minmax.c (Kathleen Nichols' algorithm).
 *
 * The filter keeps the best, 2nd-best and 3rd-best samples of the last
 * `win` time units, where "k-th best" means best among samples that are
 * newer than the (k-1)-th. When the best sample ages out of the window the
 * next one takes its place, so the estimate follows a falling (for max)
 * signal within one window without keeping every sample. Three samples in
 * 24 bytes; O(1) per update; no loops (BPF-safe).
 *
 * Time units are the caller's: BBR uses round-trip counts for its max-bw
 * filter. Comparisons of times are u32 differences, so times may wrap.
 */
#ifndef CCARENA_MINMAX_H
#define CCARENA_MINMAX_H

#include "ccarena_compat.h"

static inline u32 minmax_get(const struct minmax *m)
{
	return m->s[0].v;
}

/* Forget history: every slot holds (t, meas). Returns meas. */
static inline u32 minmax_reset(struct minmax *m, u32 t, u32 meas)
{
	m->s[0].t = m->s[1].t = m->s[2].t = t;
	m->s[0].v = m->s[1].v = m->s[2].v = meas;
	return meas;
}

/* Shift slots down by one and put the new sample last. */
static inline void minmax_shift_in(struct minmax *m, u32 t, u32 meas)
{
	m->s[0] = m->s[1];
	m->s[1] = m->s[2];
	m->s[2].t = t;
	m->s[2].v = meas;
}

/*
 * Age the slots after the new sample (t, meas) was placed. The best slot
 * expires once older than win; the 2nd and 3rd are refreshed once a
 * quarter and half of a window passed without a better sample, so that
 * after an expiry the replacement is recent.
 */
static inline u32 minmax_age(struct minmax *m, u32 win, u32 t, u32 meas)
{
	u32 age = t - m->s[0].t;

	if (age > win) {
		minmax_shift_in(m, t, meas);
		/* The promoted 2nd-best may itself be too old. */
		if (t - m->s[0].t > win)
			minmax_shift_in(m, t, meas);
	} else if (m->s[1].t == m->s[0].t && age > win / 4) {
		/* A quarter window with one distinct sample: take a new 2nd. */
		m->s[1].t = m->s[2].t = t;
		m->s[1].v = m->s[2].v = meas;
	} else if (m->s[2].t == m->s[1].t && age > win / 2) {
		/* Half a window with two distinct samples: take a new 3rd. */
		m->s[2].t = t;
		m->s[2].v = meas;
	}
	return m->s[0].v;
}

/* Add (t, meas) to a running max over the last win units; returns the max. */
static inline u32 minmax_running_max(struct minmax *m, u32 win, u32 t, u32 meas)
{
	/* A new best, or nothing in the window: restart from this sample. */
	if (meas >= m->s[0].v || t - m->s[2].t > win)
		return minmax_reset(m, t, meas);

	if (meas >= m->s[1].v) {
		m->s[1].t = m->s[2].t = t;
		m->s[1].v = m->s[2].v = meas;
	} else if (meas >= m->s[2].v) {
		m->s[2].t = t;
		m->s[2].v = meas;
	}
	return minmax_age(m, win, t, meas);
}

/* Add (t, meas) to a running min over the last win units; returns the min. */
static inline u32 minmax_running_min(struct minmax *m, u32 win, u32 t, u32 meas)
{
	if (meas <= m->s[0].v || t - m->s[2].t > win)
		return minmax_reset(m, t, meas);

	if (meas <= m->s[1].v) {
		m->s[1].t = m->s[2].t = t;
		m->s[1].v = m->s[2].v = meas;
	} else if (meas <= m->s[2].v) {
		m->s[2].t = t;
		m->s[2].v = meas;
	}
	return minmax_age(m, win, t, meas);
}

#endif /* CCARENA_MINMAX_H */
