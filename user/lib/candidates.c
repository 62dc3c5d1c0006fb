// SPDX-License-Identifier: MIT
/*
 * DOPREFETCH's choice of pages (Leap, ATC'20, Algorithm 2).
 *
 * With a trend d the pages are Pt+d, Pt+2d, ...: a stride never repeats a
 * page, so no de-duplication is needed.  Without one the paper fetches
 * "around Pt following the latest trend": we stride along the latest trend
 * when there is one, and otherwise take the nearest neighbours of Pt,
 * alternating forward and backward (forward first, the common direction).
 */
#include "leap/engine.h"

bool leap_stride_step(uint64_t pt, int64_t d, uint64_t k, uint64_t *out)
{
	if (k == 0) {
		*out = pt;
		return true;
	}
	if (d > 0) {
		uint64_t off = (uint64_t)d * k;

		if (off / k != (uint64_t)d || pt + off < pt)
			return false;
		*out = pt + off;
	} else {
		uint64_t mag = (uint64_t)0 - (uint64_t)d;
		uint64_t off = mag * k;

		if (off / k != mag || off > pt)
			return false;
		*out = pt - off;
	}
	return true;
}

static uint32_t stride(uint64_t pt, int64_t d, uint32_t n, uint64_t *out)
{
	uint32_t written = 0;

	if (d == 0) /* the paper flavour admits delta 0: nothing beyond Pt */
		return 0;
	for (uint32_t i = 1; i <= n; i++) {
		if (!leap_stride_step(pt, d, i, &out[written]))
			break;
		written++;
	}
	return written;
}

static uint32_t around(uint64_t pt, uint32_t n, uint64_t *out)
{
	uint32_t written = 0;

	for (uint64_t k = 1; written < n; k++) {
		bool fwd = pt + k > pt, back = k <= pt;

		if (!fwd && !back)
			break;
		if (fwd)
			out[written++] = pt + k;
		if (back && written < n)
			out[written++] = pt - k;
	}
	return written;
}

bool leap_fine_step(uint64_t pt, int64_t fine, uint64_t i, uint64_t *out)
{
	uint64_t mag = fine < 0 ? (uint64_t)0 - (uint64_t)fine : (uint64_t)fine;
	uint64_t off;

	if (i > 0 && mag > (UINT64_MAX - LEAP_STRIDE_ONE / 2) / i)
		return false;
	off = (i * mag + LEAP_STRIDE_ONE / 2) / LEAP_STRIDE_ONE;
	if (fine > 0 ? pt + off < pt : off > pt)
		return false;
	*out = fine > 0 ? pt + off : pt - off;
	return true;
}

uint32_t leap_candidates_fine(uint64_t pt, uint32_t pw, int64_t fine, uint64_t *out,
			      uint32_t cap)
{
	uint64_t mag = fine < 0 ? (uint64_t)0 - (uint64_t)fine : (uint64_t)fine;
	uint32_t n = pw < cap ? pw : cap, written = 0;

	if (mag < LEAP_STRIDE_ONE)
		return 0;
	while (written < n && leap_fine_step(pt, fine, written + 1, &out[written]))
		written++;
	return written;
}

uint32_t leap_candidates_periodic(uint64_t pt, uint32_t pw, const int64_t *deltas,
				  uint32_t period, uint32_t *phase, uint64_t *out,
				  uint32_t cap)
{
	uint32_t n = pw < cap ? pw : cap, written = 0;
	uint64_t page = pt;

	while (period > 0 && written < n &&
	       leap_stride_step(page, deltas[*phase], 1, &page)) {
		out[written++] = page;
		*phase = *phase + 1 == period ? 0 : *phase + 1;
	}
	return written;
}

uint32_t leap_candidates(uint64_t pt, uint32_t pw, bool has_trend, int64_t trend,
			 bool has_latest, int64_t latest, uint64_t *out, uint32_t cap)
{
	uint32_t n = pw < cap ? pw : cap;

	if (n == 0)
		return 0;
	if (has_trend)
		return stride(pt, trend, n, out);
	if (has_latest && latest != 0)
		return stride(pt, latest, n, out);
	return around(pt, n, out);
}

uint32_t leap_window_close_gaps(uint64_t *out, uint32_t n, uint32_t cap)
{
	uint64_t first, last, span;
	bool up;

	if (n < 2 || cap < n)
		return n;
	up = out[1] > out[0];
	for (uint32_t i = 1; i < n; i++)
		if (up ? out[i] - out[i - 1] != 2 : out[i - 1] - out[i] != 2)
			return n;
	first = out[0];
	last = out[n - 1];
	span = (up ? last - first : first - last) + 1;
	if (span > cap)
		span = cap;
	for (uint64_t i = 0; i < span; i++)
		out[i] = up ? first + i : first - i;
	return (uint32_t)span;
}
