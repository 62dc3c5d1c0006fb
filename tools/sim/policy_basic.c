// SPDX-License-Identifier: MIT
/*
 * Reference points: no prefetching, the n pages after every fault, and a
 * classic stride detector (two equal deltas in a row, per process).
 */
#include <stdlib.h>

#include "policy.h"

/* ---- none ---------------------------------------------------------------- */

static uint32_t none_miss(struct sim_policy *p, const struct sim_fault *f,
			  const struct sim_mem *m, uint32_t *out, uint32_t cap)
{
	(void)p;
	(void)f;
	(void)m;
	(void)out;
	(void)cap;
	return 0;
}

const struct sim_policy_ops sim_policy_none_ops = {
	.miss = none_miss,
};

/* ---- next-n -------------------------------------------------------------- */

static uint32_t next_n_miss(struct sim_policy *p, const struct sim_fault *f,
			    const struct sim_mem *m, uint32_t *out, uint32_t cap)
{
	const struct sim_trace *t = p->trace;
	uint32_t last = t->pid_first[f->pidx + 1], n = 0;
	uint64_t end = f->page + p->opts.window;

	/* Pages f+1 .. f+window of the footprint follow f in the array. */
	for (uint32_t i = f->pg + 1; i < last && t->pages[i].page <= end && n < cap; i++)
		if (sim_mem_state(m, i) == SIM_SWAPPED)
			out[n++] = i;
	return n;
}

const struct sim_policy_ops sim_policy_next_n_ops = {
	.miss = next_n_miss,
};

/* ---- stride -------------------------------------------------------------- */

struct stride_state {
	uint64_t last;
	int64_t delta;
	uint8_t seen; /* faults seen, saturating at 2 */
};

static int stride_init(struct sim_policy *p, const struct sim_trace *t)
{
	p->state = calloc(t->npids, sizeof(struct stride_state));
	return p->state ? 0 : -1;
}

/* Trains on every fault; returns whether the last two deltas agree. */
static bool stride_train(struct stride_state *s, uint64_t page, int64_t *delta)
{
	int64_t d = (int64_t)(page - s->last);
	bool confirmed = s->seen >= 2 && d == s->delta && d != 0;

	if (s->seen >= 1)
		s->delta = d;
	if (s->seen < 2)
		s->seen++;
	s->last = page;
	*delta = d;
	return confirmed;
}

static uint32_t stride_miss(struct sim_policy *p, const struct sim_fault *f,
			    const struct sim_mem *m, uint32_t *out, uint32_t cap)
{
	struct stride_state *s = (struct stride_state *)p->state + f->pidx;
	uint32_t n = 0;
	int64_t d;

	if (!stride_train(s, f->page, &d))
		return 0;
	for (uint32_t k = 1; k <= p->opts.window && n < cap; k++) {
		int64_t target = (int64_t)f->page + d * (int64_t)k;
		uint32_t pg;

		if (target < 0)
			break;
		pg = sim_trace_find(p->trace, f->pidx, (uint64_t)target);
		if (pg != SIM_NONE && sim_mem_state(m, pg) == SIM_SWAPPED)
			out[n++] = pg;
	}
	return n;
}

/* Trains only: a classic stride prefetcher fires on misses. */
static uint32_t stride_hit(struct sim_policy *p, const struct sim_fault *f,
			   const struct sim_mem *m, uint32_t *out, uint32_t cap)
{
	int64_t d;

	(void)m;
	(void)out;
	(void)cap;
	stride_train((struct stride_state *)p->state + f->pidx, f->page, &d);
	return 0;
}

static void stride_fini(struct sim_policy *p)
{
	free(p->state);
	p->state = NULL;
}

const struct sim_policy_ops sim_policy_stride_ops = {
	.init = stride_init,
	.miss = stride_miss,
	.hit = stride_hit,
	.fini = stride_fini,
};
