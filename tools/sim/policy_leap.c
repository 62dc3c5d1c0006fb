// SPDX-License-Identifier: MIT
/*
 * The Leap engine (user/lib) unchanged, as the agent drives it: one stream
 * per process (leap) or per thread (leap-thread) from a leap_table, a miss
 * runs DOPREFETCH, a prefetch hit feeds Chit.  Candidates outside the
 * footprint have no swap entry and are dropped, as MADV_WILLNEED would.
 */
#include <stdlib.h>

#include "policy.h"

struct leap_state {
	struct leap_table table;
	uint64_t cand[LEAP_PW_LIMIT];
};

static int leap_init(struct sim_policy *p, const struct sim_trace *t)
{
	struct leap_state *s = calloc(1, sizeof(*s));
	uint32_t streams;

	if (!s)
		return -1;
	p->opts.leap.key =
		p->kind == SIM_POL_LEAP_THREAD ? LEAP_KEY_THREAD : LEAP_KEY_PROCESS;
	/* One stream per thread or process of the trace: none is evicted, so
	 * the table's LRU does not blur the comparison. */
	streams = p->opts.leap.key == LEAP_KEY_THREAD ? t->nthreads : t->npids;
	if (leap_table_init(&s->table, streams, p->opts.leap.hsize)) {
		free(s);
		return -1;
	}
	p->state = s;
	return 0;
}

static struct leap_stream *stream_of(struct sim_policy *p, const struct sim_fault *f)
{
	struct leap_state *s = p->state;
	struct leap_stream_key_t key = leap_key_make(p->opts.leap.key, 0, f->pid, f->tid);

	return leap_table_get(&s->table, &key, p->opts.leap.hsize, f->seq);
}

/* One access through the engine; its candidate pages become footprint
 * indices of pages still swapped out. */
static uint32_t leap_access(struct sim_policy *p, const struct sim_fault *f,
			    const struct sim_mem *m, bool hit, uint32_t *out,
			    uint32_t cap)
{
	struct leap_state *s = p->state;
	struct leap_stream *st = stream_of(p, f);
	uint32_t n, written = 0;

	if (!st)
		return 0;
	n = leap_stream_access(st, &p->opts.leap, f->page, hit, s->cand, LEAP_PW_LIMIT,
			       NULL);
	for (uint32_t i = 0; i < n && written < cap; i++) {
		uint32_t pg = sim_trace_find(p->trace, f->pidx, s->cand[i]);

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
		leap_table_free(&s->table);
	free(s);
	p->state = NULL;
}

const struct sim_policy_ops sim_policy_leap_ops = {
	.init = leap_init,
	.miss = leap_miss,
	.hit = leap_hit,
	.fini = leap_fini,
};
