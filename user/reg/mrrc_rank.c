// SPDX-License-Identifier: MIT
/*
 * mrrc-rank: MRRC's lookup with the eviction rule we guessed before the
 * slides were at hand (kept as a named variant because it wins on some
 * traces; docs/registration.md says which).  In the resorting section
 *   r = recency rank scaled to [0, 1]: 1 for its least recently used
 *       region, 0 for its most recent one;
 *   s = the region's size in pages;
 * and the largest Evictfact = r + 1/s leaves first: old, small regions go
 * before large ones, the opposite of MRE's size order (mre.c).  Scaling r
 * keeps both terms in the same range; with raw integer ranks 1/s <= 1 would
 * only break ties and this would be plain LRU.
 */
#include <stdlib.h>

#include "cache_int.h"

static int cmp_descending(const void *a, const void *b)
{
	const struct leap_reg_region *x = *(struct leap_reg_region *const *)a;
	const struct leap_reg_region *y = *(struct leap_reg_region *const *)b;

	if (x->evictfact != y->evictfact)
		return x->evictfact > y->evictfact ? -1 : 1;
	return x->age < y->age ? -1 : x->age > y->age; /* older first */
}

void mrrc_rank_make_room(struct leap_reg_cache *c, uint64_t len)
{
	while (!reg_has_room(c, len)) {
		size_t m = reg_section(c);

		if (!m)
			return; /* everything cached is in use */
		for (size_t j = 0; j < m; j++) {
			struct leap_reg_region *q = c->scratch[j];
			double rank =
				m == 1 ? 1.0 : (double)(m - 1 - j) / (double)(m - 1);

			q->age = (uint32_t)j;
			q->evictfact =
				rank + 1.0 / (double)reg_pages(c, q->end - q->start);
		}
		qsort(c->scratch, m, sizeof(*c->scratch), cmp_descending);
		reg_evict_segment(c, m, len);
	}
}
