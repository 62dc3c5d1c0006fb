// SPDX-License-Identifier: MIT
/* The agent's decision for one fault, without I/O (include/leap/decide.h). */
#include <stddef.h>
#include <string.h>

#include "leap/decide.h"

/*
 * Whether the kernel's own readahead serves the stream: readahead is on and
 * the pages between the stream's previous miss and this one are mapped
 * (the program went through them without a major fault: the kernel read
 * them ahead).  Only misses and our hits reach the agent, so a sequential
 * stream looks like a stride of the kernel's window; the mapped gap tells
 * it from a real stride, whose gap pages the program never touches.
 * Returns the gap in pages, 0 when not served.
 */
static uint64_t served_gap(struct leap_stream *s, const struct leap_decide_cfg *cfg,
			   uint64_t page, const struct leap_decide_facts *facts,
			   bool *asked)
{
	uint64_t prev = s->hist.last_page, gap;
	int64_t signed_gap = (int64_t)(page - prev);

	if (!cfg->ra_pages || !s->hist.has_last)
		return 0;
	gap = page > prev ? page - prev : prev - page;
	if (gap <= 1 || gap > (uint64_t)cfg->ra_pages + 1) {
		s->kra_trust = 0;
		return 0;
	}
	/* The same gap in the same direction as a served miss just before:
	 * served again, without asking (a pagemap read, ~1.5 us, once per
	 * miss of a fill).  Every kra_trust + 1-th miss asks again, so a
	 * stream that turns into a real stride of that gap waits that many
	 * misses at most for its windows. */
	if (s->kra_trust && s->kra_gap == signed_gap) {
		s->kra_trust--;
		return gap;
	}
	*asked = true;
	if (facts->mapped && facts->mapped(facts->ctx, (page > prev ? prev : page) + 1,
					   (uint32_t)gap - 1)) {
		s->kra_gap = signed_gap;
		s->kra_trust = cfg->kra_trust;
		return gap;
	}
	s->kra_trust = 0;
	return 0;
}

/* Asked last, only of a served read stream that would otherwise go out. */
static bool in_shmem(const struct leap_decide_facts *facts, uint64_t page,
		     struct leap_plan *plan)
{
	plan->shmem = facts->shmem && facts->shmem(facts->ctx, page);
	return plan->shmem;
}

uint32_t leap_decide(struct leap_stream *s, const struct leap_params *p,
		     const struct leap_decide_cfg *cfg, const struct leap_fault *f,
		     const struct leap_decide_facts *facts, uint64_t *out, uint32_t cap,
		     struct leap_plan *plan)
{
	uint64_t prev = s->hist.last_page;

	memset(plan, 0, sizeof(*plan));
	if (f->wasted)
		leap_stream_wasted(s);
	else if (f->late && cfg->lead_on_late)
		/* Right, but late: lead (engine.h, leap_stream_late()). */
		leap_stream_late(s, p);
	if (!f->hit && cfg->follow_kernel_ra) {
		plan->kra_checked = true;
		plan->ra_gap = served_gap(s, cfg, f->page, facts, &plan->asked);
		/* A served fill gets no window of ours (the agent's
		 * decide_cfg() says why); a read stream's goes out past the
		 * kernel's, unless every served stream is held, or it reads
		 * shared memory: there windows past the kernel's readahead made
		 * CPython's sequential scan of shmem slower than the kernel
		 * alone in every run (scan 0.67-0.87x, 2026-11-28,
		 * docs/bench-real.md; why was not found), while the same
		 * windows over private memory gained 1.1-1.4x. */
		plan->hold = plan->ra_gap && !cfg->hold_none &&
			     (cfg->hold_all || f->fill || in_shmem(facts, f->page, plan));
		if (plan->ra_gap && f->fill && cfg->cold_behind)
			plan->cold_n = leap_behind_advance(
				&s->behind, f->page, f->page > prev ? 1 : -1,
				cfg->cold_behind, cfg->cold_chunk, &plan->cold_first);
	}
	/* The kernel read about as far past this miss as it did past the last
	 * one (its window is centred on a miss, mm/swap_state.c
	 * swap_ra_info()): ours starts beyond. */
	if (plan->ra_gap && !plan->hold)
		plan->n = leap_stream_access_after_ra(s, p, f->page, plan->ra_gap - 1,
						      out, cap, &plan->dec);
	else if (cfg->follow_kernel_ra && cfg->ra_pages)
		/* The kernel reads around a miss itself: a miss with no trend
		 * gets no "around" window of ours (leap_stream_access_kra()). */
		plan->n = leap_stream_access_kra(s, p, f->page, f->hit, out, cap,
						 &plan->dec);
	else
		plan->n = leap_stream_access(s, p, f->page, f->hit, out, cap, &plan->dec);
	return plan->n;
}
