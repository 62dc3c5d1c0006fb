// SPDX-License-Identifier: MIT
/*
 * MRRC, after L. Ou, X. He, J. Han, "MRRC: An Effective Cache for Fast
 * Memory Registration in RDMA": the cache manages memory regions, not
 * blocks.  A lookup is
 *   - a hit: a cached region is exactly the request's pages;
 *   - contained-in: the request lies inside one cached region;
 *   - an overlap: cached regions cover part of the request; only the
 *     difference (the gaps) is registered, as new regions, and the request
 *     is served by the old and new regions together (one SGE each), so
 *     both are kept;
 *   - a miss: nothing cached overlaps; the request's pages are registered.
 * Cached regions never overlap, which keeps the address index a sorted
 * array.  A request needing more than max_segs pieces is re-registered as
 * one region spanning the union (stats.merges) and the old pieces leave.
 *
 * Replacement: MRE (mre.c), or the rank rule of mrrc-rank (mrrc_rank.c).
 */
#include <errno.h>
#include <stdlib.h>

#include "cache_int.h"

/* Drops the cached pieces a merge replaces (referenced ones wait detached). */
static void merge_out(struct leap_reg_cache *c, size_t first, size_t n)
{
	for (size_t k = 0; k < n; k++)
		reg_drop(c, c->idx[first], false);
	c->st.merges++;
}

int mrrc_get(struct leap_reg_cache *c, uint64_t addr, uint64_t len,
	     struct leap_reg_ref *ref)
{
	uint64_t mask = c->cfg.page_size - 1;
	uint64_t start = addr & ~mask, end = (addr + len + mask) & ~mask;
	size_t first = reg_idx_lower(c, start), n = 0, pieces = 0;
	uint64_t cur = start;
	struct leap_reg_region *r;
	int err;

	if (first > 0 && c->idx[first - 1]->end > start)
		first--;
	while (first + n < c->nidx && c->idx[first + n]->start < end)
		n++;
	if (n == 0) {
		err = reg_new_region(c, start, end, &r);
		if (err)
			return err;
		ref->cls = LEAP_REG_MISS;
		reg_add_seg(ref, r, addr, len);
		return 0;
	}
	r = c->idx[first];
	if (n == 1 && r->start <= start && r->end >= end) {
		ref->cls = r->start == start && r->end == end ? LEAP_REG_HIT
							      : LEAP_REG_CONTAINED;
		reg_ref(c, r);
		reg_add_seg(ref, r, addr, len);
		return 0;
	}
	ref->cls = LEAP_REG_OVERLAP;
	for (size_t k = 0; k < n; k++) {
		pieces += (c->idx[first + k]->start > cur) + 1;
		cur = c->idx[first + k]->end;
	}
	pieces += cur < end;
	if (pieces > c->cfg.max_segs) {
		uint64_t ustart =
			c->idx[first]->start < start ? c->idx[first]->start : start;
		uint64_t uend = c->idx[first + n - 1]->end;

		uend = uend > end ? uend : end;
		merge_out(c, first, n);
		reg_flush_batch(c);
		err = reg_new_region(c, ustart, uend, &r);
		if (err)
			return err;
		reg_add_seg(ref, r, addr, len);
		return 0;
	}
	/* Reference the cached pieces first so making room for the gaps
	 * cannot evict them; the index shifts as gaps are inserted, so copy. */
	{
		struct leap_reg_region *have[LEAP_REG_MAX_SEGS];

		for (size_t k = 0; k < n; k++) {
			have[k] = c->idx[first + k];
			reg_ref(c, have[k]);
		}
		cur = start;
		for (size_t k = 0; k <= n; k++) {
			uint64_t gap_end = k < n ? have[k]->start : end;

			if (gap_end > cur) {
				err = reg_new_region(c, cur, gap_end, &r);
				if (err) {
					/* the pieces not yet in ref */
					for (size_t j = k; j < n; j++)
						reg_add_seg(ref, have[j], addr, len);
					reg_unref_all(c, ref);
					return err;
				}
				reg_add_seg(ref, r, addr, len);
			}
			if (k < n) {
				reg_add_seg(ref, have[k], addr, len);
				cur = have[k]->end;
			}
		}
	}
	return 0;
}
