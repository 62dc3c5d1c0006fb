// SPDX-License-Identifier: MIT
/*
 * The leap policies are the agent's own decision core (include/leap/core.h),
 * fed what the simulator's kernel tells a prefetcher: a miss is a major
 * fault that read the device, a prefetch hit a minor fault on a page of
 * ours.  One target (mode leap, no stand-down: the paper has no cost
 * model), streams per process (leap) or per thread (leap-thread).  The
 * simulator has no readahead of the kernel's beside ours, so the core's
 * questions about it never come (ra_pages 0).  Candidates outside the
 * footprint have no swap entry and are dropped, as MADV_WILLNEED would.
 */
#include <stdlib.h>

#include "leap/core.h"
#include "policy.h"

struct leap_state {
	struct leap_core *core;
	uint32_t target;
};

static int leap_init(struct sim_policy *p, const struct sim_trace *t)
{
	struct leap_state *s = calloc(1, sizeof(*s));
	struct leap_core_env env = {.swap = {.sync_pct = -1}, .can_prefetch = true};
	struct leap_core_policy pol = {.mode = LEAP_CORE_LEAP};
	struct leap_core_config cfg = {0};

	if (!s)
		return -1;
	p->opts.leap.key =
		p->kind == SIM_POL_LEAP_THREAD ? LEAP_KEY_THREAD : LEAP_KEY_PROCESS;
	/* Room for every lane of each thread or process of the trace: none
	 * is evicted, so the table's LRU does not blur the comparison. */
	cfg.streams = p->opts.leap.key == LEAP_KEY_THREAD ? t->nthreads : t->npids;
	cfg.streams *= p->opts.leap.lanes ? p->opts.leap.lanes : 1;
	cfg.hsize_max = p->opts.leap.hsize;
	leap_cost_params_default(&cfg.cost);
	leap_outcome_params_default(&cfg.outcome);
	s->core = leap_core_new(&cfg);
	if (!s->core) {
		free(s);
		return -1;
	}
	pol.params = p->opts.leap;
	leap_core_set_env(s->core, &env);
	s->target = leap_core_target_add(s->core, &pol);
	p->state = s;
	return 0;
}

/* One fault through the core; its window's pages become footprint indices
 * of pages still swapped out. */
static uint32_t leap_access(struct sim_policy *p, const struct sim_fault *f,
			    const struct sim_mem *m, bool hit, uint32_t *out,
			    uint32_t cap)
{
	struct leap_state *s = p->state;
	struct leap_event ev = {
		.ts_ns = f->seq,
		.addr = f->page << LEAP_PAGE_SHIFT,
		.tgid = f->pid,
		.tid = f->tid,
		.flags = hit ? LEAP_EV_PREFETCHED : LEAP_EV_MAJOR | LEAP_EV_SWAPIN_IO,
	};
	const struct leap_core_plan *plan =
		leap_core_event(s->core, s->target, &ev, NULL);
	uint32_t written = 0;

	for (uint32_t i = 0; i < plan->n && written < cap; i++) {
		uint32_t pg = sim_trace_find(p->trace, f->pidx, plan->pages[i]);

		if (pg != SIM_NONE && sim_mem_state(m, pg) == SIM_SWAPPED)
			out[written++] = pg;
	}
	return written;
}

static uint32_t leap_miss(struct sim_policy *p, const struct sim_fault *f,
			  const struct sim_mem *m, uint32_t *out, uint32_t cap)
{
	return leap_access(p, f, m, false, out, cap);
}

/* A hit feeds Chit; with look-ahead it may also issue the next window. */
static uint32_t leap_hit(struct sim_policy *p, const struct sim_fault *f,
			 const struct sim_mem *m, uint32_t *out, uint32_t cap)
{
	return leap_access(p, f, m, true, out, cap);
}

static void leap_fini(struct sim_policy *p)
{
	struct leap_state *s = p->state;

	if (s)
		leap_core_free(s->core);
	free(s);
	p->state = NULL;
}

const struct sim_policy_ops sim_policy_leap_ops = {
	.init = leap_init,
	.miss = leap_miss,
	.hit = leap_hit,
	.fini = leap_fini,
};
