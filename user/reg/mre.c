// SPDX-License-Identifier: MIT
/*
 * MRE (Memory Resorting and Eviction), MRRC's replacement as the MSST 2006
 * slides define it (seeds/003): upon the full of the cache,
 *
 *     r = e.evictfact;             (e: the region at the bottom of the stack)
 *     for each region a in the resorting section: a.evictfact = r + 1/s;
 *     resort the section by Evictfact, smaller closer to the bottom;
 *     deregister the eviction segment (the bottom) in one batch; evict it.
 *
 * with r = 0 at start.  r is an aging value, as L in GreedyDual-Size
 * (Cao & Irani): the Evictfact of the region at the bottom, carried from
 * eviction to eviction, growing as regions age.  At equal r the largest region
 * (smallest 1/s) sits lowest and leaves first.
 *
 * What the pseudocode leaves open, decided as GreedyDual-Size would
 * (docs/registration.md gives the reasons and the measurements):
 *  - a region gets its Evictfact once, the first time an eviction finds it
 *    in the resorting section after its last reference, and keeps it while
 *    it stays there; a reference clears it (the region goes to the top, and
 *    is valued afresh, with the r of that later time, when it comes back
 *    down).  So a region that lingers in the section falls behind the ones
 *    that arrive after r has grown: GDS's aging.  Re-valuing every region
 *    at every eviction would give all of them the same r, make r a constant
 *    with no effect on the order, and let small stale regions stay forever
 *    (cfg.mre_revalue runs that reading, for comparison);
 *  - a bottom region without an Evictfact (the first eviction) leaves r as
 *    it is;
 *  - the eviction segment: at least evict_batch regions, more if the room
 *    needs it; the resorting section: resort_pct percent of the stack
 *    (reg_section()), unreferenced regions only.
 * r is rebased to 0 (every Evictfact lowered by the same amount, which
 * keeps the order) once it reaches 1024, so the rounding step of r + 1/s
 * stays <= 2^-42: neighbouring sizes stay apart up to 2^21 pages.
 */
#include <stdlib.h>

#include "cache_int.h"

/* Below 2^10 a double's step is 2^-42 (52-bit mantissa). */
#define MRE_REBASE_AT 1024.0

static int cmp_ascending(const void *a, const void *b)
{
	const struct leap_reg_region *x = *(struct leap_reg_region *const *)a;
	const struct leap_reg_region *y = *(struct leap_reg_region *const *)b;

	if (x->evictfact != y->evictfact)
		return x->evictfact < y->evictfact ? -1 : 1;
	return x->age < y->age ? -1 : x->age > y->age; /* lower in the stack first */
}

static void mre_rebase(struct leap_reg_cache *c)
{
	for (struct leap_reg_region *q = c->head; q; q = q->next)
		if (q->valued)
			q->evictfact -= c->mre_r;
	c->mre_r = 0;
}

void mre_make_room(struct leap_reg_cache *c, uint64_t len)
{
	while (!reg_has_room(c, len)) {
		size_t m = reg_section(c);

		if (!m)
			return; /* everything cached is in use */
		if (c->scratch[0]->valued)
			c->mre_r = c->scratch[0]->evictfact; /* r = e.evictfact */
		for (size_t j = 0; j < m; j++) {
			struct leap_reg_region *q = c->scratch[j];

			q->age = (uint32_t)j;
			if (!q->valued || c->cfg.mre_revalue) {
				q->evictfact =
					c->mre_r +
					1.0 / (double)reg_pages(c, q->end - q->start);
				q->valued = true;
			}
		}
		qsort(c->scratch, m, sizeof(*c->scratch), cmp_ascending);
		/* Resort in place: the section goes back to the bottom of the
		 * stack, smallest Evictfact lowest. */
		for (size_t j = m; j-- > 0;)
			reg_to_bottom(c, c->scratch[j]);
		reg_evict_segment(c, m, len);
		if (c->mre_r >= MRE_REBASE_AT)
			mre_rebase(c);
	}
}
