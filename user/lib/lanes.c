// SPDX-License-Identifier: MIT
/*
 * Lanes: several streams under one key (include/leap/engine.h,
 * leap_lane_get()).
 *
 * Leap's history is one per application: a fault's delta is taken from
 * whatever page the application faulted on before.  Two streams walked in
 * turns (an index scan's leaf pages and the table pages they point to, a
 * merge of two sorted runs, c[i] = a[i] + b[i] over arrays mapped far
 * apart) then give deltas that jump back and forth between the regions,
 * and FINDTREND finds no majority where each stream alone has one.  A
 * hardware stream prefetcher keeps a small table of streams and assigns a
 * miss to the stream whose last address it lies near; this does the same
 * for a key's faults, within the engine's per-event cost (lanes <= 8
 * lookups in the table's hash).
 *
 * "Near" is max_delta: a delta beyond it is never a trend (trend.c), so a
 * fault that far from every lane could not continue any lane's trend.
 * A lane's reach covers the pages of its newest window too, so a hit on a
 * page it prefetched far ahead (a strided window spans up to pw_max
 * strides) lands in the lane that issued it and drives its look-ahead.
 */
#include "leap/engine.h"

/* Pages from page to the lane: 0 inside its newest window's span. */
static uint64_t lane_distance(const struct leap_stream *s, uint64_t page)
{
	uint64_t lo = s->hist.last_page, hi = s->hist.last_page;

	if (s->ra_armed) {
		uint64_t a = s->ra_marker, b = s->ra_last;

		lo = a < lo ? a : lo;
		lo = b < lo ? b : lo;
		hi = a > hi ? a : hi;
		hi = b > hi ? b : hi;
	}
	if (page < lo)
		return lo - page;
	return page > hi ? page - hi : 0;
}

struct leap_stream *leap_lane_get(struct leap_table *t, struct leap_stream_key_t key,
				  const struct leap_params *p, uint64_t page,
				  uint64_t now)
{
	uint32_t lanes = p->lanes < LEAP_LANES_MAX ? p->lanes : LEAP_LANES_MAX;
	uint32_t unused = UINT32_MAX;
	struct leap_stream *best = NULL, *stalest = NULL;
	uint64_t best_d = UINT64_MAX;

	key.lane = 0;
	if (lanes <= 1 || p->max_delta == 0 || p->flavor == LEAP_FLAVOR_PAPER)
		return leap_table_get(t, &key, p->hsize, now);
	for (uint32_t lane = 0; lane < lanes; lane++) {
		struct leap_stream *s;
		uint64_t d;

		key.lane = lane;
		s = leap_table_find(t, &key);
		if (!s || !s->hist.has_last) {
			if (unused == UINT32_MAX)
				unused = lane;
			continue;
		}
		d = lane_distance(s, page);
		if (d < best_d) {
			best_d = d;
			best = s;
		}
		if (!stalest || s->last_used < stalest->last_used)
			stalest = s;
	}
	if (best && best_d <= p->max_delta) {
		leap_table_touch(t, best, now);
		return best;
	}
	if (unused == UINT32_MAX) {
		/* every lane taken: the least recently used one moves */
		leap_table_touch(t, stalest, now);
		return stalest;
	}
	key.lane = unused;
	return leap_table_get(t, &key, p->hsize, now);
}
