// SPDX-License-Identifier: MIT
/*
 * AccessHistory and FINDTREND (Leap, ATC'20, Algorithm 1).
 *
 * The ring keeps the Hsize newest page deltas.  FINDTREND looks for a
 * Boyer-Moore majority among the w newest, starting at w = Hsize/Nsplit so a
 * fresh trend is seen quickly, and doubles w up to Hsize so a trend that
 * survives short irregularities is still found.
 */
#include "leap/engine.h"

void leap_history_init(struct leap_history *h, int64_t *storage, uint32_t size)
{
	h->delta = storage;
	h->size = size;
	h->head = 0;
	h->count = 0;
	h->last_page = 0;
	h->has_last = false;
}

void leap_history_push(struct leap_history *h, uint64_t page)
{
	if (h->has_last) {
		/* Two's complement wrap gives the right signed delta for any
		 * pair of 64-bit page numbers closer than 2^63. */
		h->delta[h->head] = (int64_t)(page - h->last_page);
		h->head = h->head + 1 == h->size ? 0 : h->head + 1;
		if (h->count < h->size)
			h->count++;
	}
	h->last_page = page;
	h->has_last = true;
}

int64_t leap_history_at(const struct leap_history *h, uint32_t i)
{
	uint32_t pos = h->head + h->size - 1 - i;

	if (pos >= h->size)
		pos -= h->size;
	return h->delta[pos];
}

static uint64_t magnitude(int64_t d)
{
	return d < 0 ? (uint64_t)0 - (uint64_t)d : (uint64_t)d;
}

/* Whether a majority delta is usable as a trend under the policy. */
static bool trend_acceptable(int64_t d, const struct leap_params *p)
{
	if (p->flavor == LEAP_FLAVOR_PAPER)
		return true;
	if (d == 0)
		return false;
	return p->max_delta == 0 || magnitude(d) <= p->max_delta;
}

uint32_t leap_find_period(const struct leap_history *h, const struct leap_params *p,
			  int64_t deltas[LEAP_PERIOD_MAX])
{
	uint32_t same = 1;

	if (h->count < LEAP_PERIOD_SPAN)
		return 0;
	/* One stride repeats with every period: FINDTREND's, and the common
	 * case on a miss, so it is ruled out first. */
	while (same < LEAP_PERIOD_SPAN &&
	       leap_history_at(h, same) == leap_history_at(h, 0))
		same++;
	if (same == LEAP_PERIOD_SPAN)
		return 0;
	for (uint32_t per = 2; per <= LEAP_PERIOD_MAX; per++) {
		uint32_t span = 2 * per > LEAP_PERIOD_SPAN ? 2 * per : LEAP_PERIOD_SPAN;
		bool repeats = span <= h->count;
		int64_t sum = 0;

		for (uint32_t i = 0; repeats && i + per < span; i++)
			repeats = leap_history_at(h, i) == leap_history_at(h, i + per);
		for (uint32_t i = 0; repeats && i < per; i++) {
			int64_t d = leap_history_at(h, i);

			repeats = d != 0 &&
				  (p->max_delta == 0 || magnitude(d) <= p->max_delta);
			sum += d;
		}
		/* (A period of one delta repeated is one stride: ruled out above,
		 * since the span's deltas would all be equal.) */
		if (!repeats || sum == 0)
			continue;
		for (uint32_t i = 0; i < per; i++)
			deltas[i] = leap_history_at(h, per - 1 - i);
		return per;
	}
	return 0;
}

/*
 * Boyer-Moore majority vote over the n newest deltas, then a counting pass
 * to confirm: the vote alone returns a candidate even when none exists.
 */
static bool majority(const struct leap_history *h, uint32_t n, int64_t *out)
{
	int64_t cand = 0;
	uint32_t votes = 0, count = 0;

	for (uint32_t i = 0; i < n; i++) {
		int64_t d = leap_history_at(h, i);

		if (votes == 0) {
			cand = d;
			votes = 1;
		} else if (d == cand) {
			votes++;
		} else {
			votes--;
		}
	}
	for (uint32_t i = 0; i < n; i++)
		count += leap_history_at(h, i) == cand;
	if (count < n / 2 + 1)
		return false;
	*out = cand;
	return true;
}

bool leap_find_trend(const struct leap_history *h, const struct leap_params *p,
		     int64_t *trend, uint32_t *window_used)
{
	uint32_t w = h->size / (p->nsplit ? p->nsplit : 1);

	if (w == 0)
		w = 1;
	for (;;) {
		/* While the ring fills, only filled slots vote. */
		uint32_t n = w < h->count ? w : h->count;
		int64_t d;

		if (window_used)
			*window_used = w;
		if (n > 0 && majority(h, n, &d) && trend_acceptable(d, p)) {
			*trend = d;
			return true;
		}
		/* Nothing more to learn once the window covers every filled slot. */
		if (w >= h->size || w >= h->count)
			return false;
		w = w * 2 > h->size ? h->size : w * 2;
	}
}

int64_t leap_stride_fine(const struct leap_history *h, int64_t trend)
{
	uint64_t mag = magnitude(trend), pages = 0, steps = 0, exact = 0;

	/* (The bound keeps pages * LEAP_STRIDE_ONE below 2^64.) */
	if (mag < 2 || mag > LEAP_FINE_MAG_MAX)
		return 0;
	for (uint32_t i = 0; i < h->count; i++) {
		int64_t d = leap_history_at(h, i);
		uint64_t m = magnitude(d), k = (m + mag / 2) / mag;

		if ((d < 0) != (trend < 0))
			continue;
		if (k == 0 && m <= 1) {
			pages += m; /* a record's second page */
		} else if (k >= 1 && k <= LEAP_FINE_K_MAX &&
			   (m > k * mag ? m - k * mag : k * mag - m) <= k) {
			pages += m;
			steps += k;
			exact += m == k * mag ? k : 0;
		}
	}
	/* Steps all exact: a whole stride, whatever pages lie between. */
	if (steps < LEAP_FINE_MIN_STEPS || exact == steps)
		return 0;
	/* Within a page over all the steps counted of a whole stride: the
	 * history's ends cut a step from its page between (+1, +15 of a +16
	 * stride), no fraction. */
	if (pages + 1 >= steps * mag && pages <= steps * mag + 1)
		return 0;
	/* Rounded to the nearest 1/LEAP_STRIDE_ONE. */
	mag = (pages * LEAP_STRIDE_ONE + steps / 2) / steps;
	return trend < 0 ? -(int64_t)mag : (int64_t)mag;
}
