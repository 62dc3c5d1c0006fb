// SPDX-License-Identifier: MIT
/* The replay loop (model in sim.h).  No allocation inside the loop. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mem.h"
#include "sim.h"

/* Most pages any policy proposes per miss (LEAP_PW_LIMIT is the largest
 * built-in window); a larger --window is clamped to it. */
#define SIM_MAX_CANDIDATES 4096u

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void replay(const struct sim_trace *t, struct sim_policy *pol, struct sim_mem *m,
		   uint32_t *cand, uint32_t cap, struct sim_result *r)
{
	const struct sim_policy_ops *ops = pol->ops;

	for (uint64_t i = 0; i < t->nevents; i++) {
		uint32_t pg = t->ev_page[i];
		enum sim_page_state st = sim_mem_state(m, pg);
		const struct sim_thread *th;
		struct sim_thread_stats *ts = &r->threads[t->ev_thread[i]];
		struct sim_fault f;

		ts->accesses++;
		if (st == SIM_RESIDENT) {
			sim_mem_touch(m, pg);
			continue;
		}
		th = &t->threads[t->ev_thread[i]];
		f = (struct sim_fault){.seq = i,
				       .pg = pg,
				       .page = t->pages[pg].page,
				       .pidx = th->pidx,
				       .pid = th->pid,
				       .tid = th->tid};
		uint32_t n = 0;

		if (st == SIM_CACHED) {
			ts->hits++;
			if (ops->hit)
				n = ops->hit(pol, &f, m, cand, cap);
			/* Mapped first: the reads it triggers cannot evict it. */
			sim_mem_hit(m, pg);
			for (uint32_t j = 0; j < n; j++)
				r->prefetched += sim_mem_prefetch(m, cand[j]);
			continue;
		}
		ts->misses++;
		n = ops->miss(pol, &f, m, cand, cap);
		for (uint32_t j = 0; j < n; j++)
			r->prefetched += sim_mem_prefetch(m, cand[j]);
		sim_mem_fault_in(m, pg);
	}
}

static double ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0.0;
}

int sim_run(const struct sim_trace *t, enum sim_policy_kind kind,
	    const struct sim_policy_opts *opts, const struct sim_config *cfg,
	    struct sim_result *r, const char **why)
{
	struct sim_policy pol;
	struct sim_mem mem;
	uint32_t *cand = NULL, cap;
	const char *dummy;
	double t0;

	if (!why)
		why = &dummy;
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->capacity = cfg->capacity;
	if (cfg->capacity == 0) {
		*why = "memory size must be at least one page";
		return -1;
	}
	if ((kind == SIM_POL_LEAP || kind == SIM_POL_LEAP_THREAD) &&
	    leap_params_validate(&opts->leap, why))
		return -1;
	if (sim_policy_init(&pol, kind, opts, t)) {
		*why = "policy initialisation failed (out of memory?)";
		return -1;
	}
	/* The faulting page must fit beside what is read ahead of it. */
	cap = cfg->capacity - 1 < SIM_MAX_CANDIDATES ? cfg->capacity - 1
						     : SIM_MAX_CANDIDATES;
	r->nthreads = t->nthreads;
	r->threads = calloc(t->nthreads, sizeof(*r->threads));
	cand = malloc((cap ? cap : 1) * sizeof(*cand));
	if (!r->threads || !cand ||
	    sim_mem_init(&mem, t->npages, cfg->capacity, pol.needs_slots)) {
		sim_policy_fini(&pol);
		free(cand);
		sim_result_free(r);
		*why = "out of memory";
		return -1;
	}

	t0 = now_s();
	replay(t, &pol, &mem, cand, cap, r);
	r->seconds = now_s() - t0;

	for (uint32_t i = 0; i < t->nthreads; i++) {
		r->accesses += r->threads[i].accesses;
		r->misses += r->threads[i].misses;
		r->hits += r->threads[i].hits;
	}
	r->unused_evicted = mem.unused_evicted;
	r->unused_at_end = mem.ncached;
	r->evictions = mem.evictions;
	r->accuracy = ratio(r->hits, r->prefetched);
	r->coverage = ratio(r->hits, r->hits + r->misses);
	r->est_time_us = (double)r->misses * cfg->miss_us + (double)r->hits * cfg->hit_us;
	sim_mem_free(&mem);
	sim_policy_fini(&pol);
	free(cand);
	return 0;
}

void sim_result_free(struct sim_result *r)
{
	free(r->threads);
	r->threads = NULL;
	r->nthreads = 0;
}

int sim_parse_memory(const char *s, uint32_t footprint, uint32_t *pages)
{
	char *end;
	double v;

	if (!s || !*s || !(s[0] >= '0' && s[0] <= '9'))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || v <= 0)
		return -1;
	if (*end == '%' && end[1] == '\0') {
		/* Over 100% is fine: a resident set larger than the footprint. */
		v = ceil(v / 100.0 * footprint);
	} else if (*end != '\0' || v != floor(v)) {
		return -1;
	}
	if (v < 1)
		v = 1;
	if (v > UINT32_MAX)
		return -1;
	*pages = (uint32_t)v;
	return 0;
}
