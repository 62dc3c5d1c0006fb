// SPDX-License-Identifier: MIT
/*
 * GETPREFETCHWINDOWSIZE (Leap, ATC'20, Algorithm 2).
 *
 * The window grows with the prefetched pages that were actually used (Chit),
 * rounded up to a power of two as Linux's swapin_nr_pages does, and shrinks
 * at most by half per step so one unlucky fault does not throw away a
 * window that was working.  With no hit at all it falls back to one page
 * along the trend, or suspends prefetching (0) when the fault is off-trend.
 */
#include "leap/engine.h"

static uint32_t roundup_pow2(uint32_t v)
{
	uint32_t r = 1;

	while (r < v && r < (1u << 31))
		r <<= 1;
	return r;
}

uint32_t leap_window_next(struct leap_window *w, const struct leap_params *p,
			  bool follows_trend)
{
	uint32_t pw;

	if (w->chit == 0) {
		pw = follows_trend ? 1 : 0;
	} else {
		/* chit + 1 cannot overflow usefully: clamp first. */
		uint32_t want = w->chit >= p->pw_max ? p->pw_max : w->chit + 1;

		pw = roundup_pow2(want);
		if (pw > p->pw_max)
			pw = p->pw_max;
	}
	if (pw < w->pw_prev / 2)
		pw = w->pw_prev / 2;
	/* A policy reload may lower pw_max below the previous window. */
	if (pw > p->pw_max)
		pw = p->pw_max;
	w->chit = 0;
	w->pw_prev = pw;
	return pw;
}
