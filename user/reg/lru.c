// SPDX-License-Identifier: MIT
/*
 * The baseline: a classic pin-down cache (Tezuka et al., as MRRC compares
 * against).  A lookup hits when one cached region contains the request's
 * pages (exact or contained-in); anything else registers the request's pages
 * as a new region, even when cached regions overlap it, and regions may
 * therefore overlap.  Replacement is plain LRU, evict_batch (default 1)
 * regions at a time.
 */
#include "cache_int.h"

void lru_make_room(struct leap_reg_cache *c, uint64_t len)
{
	while (!reg_has_room(c, len)) {
		struct leap_reg_region *r = c->tail;
		unsigned evicted = 0;

		while (r && evicted < c->cfg.evict_batch) {
			struct leap_reg_region *prev = r->prev;

			if (!r->refs) {
				c->st.evictions++;
				reg_drop(c, r, false);
				evicted++;
			}
			r = prev;
		}
		reg_flush_batch(c);
		if (!evicted)
			return; /* everything cached is in use */
	}
}

int lru_get(struct leap_reg_cache *c, uint64_t addr, uint64_t len,
	    struct leap_reg_ref *ref)
{
	uint64_t mask = c->cfg.page_size - 1;
	uint64_t start = addr & ~mask, end = (addr + len + mask) & ~mask;
	struct leap_reg_region *r;
	int err;

	/* Most recent first: a linear search, as in the classic design. */
	for (r = c->head; r; r = r->next) {
		if (r->start <= start && r->end >= end) {
			ref->cls = r->start == start && r->end == end
					   ? LEAP_REG_HIT
					   : LEAP_REG_CONTAINED;
			reg_ref(c, r);
			reg_add_seg(ref, r, addr, len);
			return 0;
		}
	}
	err = reg_new_region(c, start, end, &r);
	if (err)
		return err;
	ref->cls = LEAP_REG_MISS;
	reg_add_seg(ref, r, addr, len);
	return 0;
}
