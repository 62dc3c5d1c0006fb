/* SPDX-License-Identifier: MIT */
/*
 * One replay of a trace through the memory model with one policy.
 *
 * Per access: a RESIDENT page is no event (the kernel sees no fault); a
 * CACHED page is a prefetch hit (the policy hears of it, the page becomes
 * resident, then whatever the policy proposed is read); anything else is a
 * miss: the policy proposes pages, those still swapped out are read into
 * the prefetch cache, then the faulting page is mapped (last, so it is the
 * most recently used).
 */
#ifndef LEAP_SIM_SIM_H
#define LEAP_SIM_SIM_H

#include <stdint.h>

#include "policy.h"
#include "trace_load.h"

/* Defaults: a remote page over RDMA costs ~10 us end to end (Leap, ATC'20,
 * Fig. 1), a fault served from the swap cache ~1 us (a minor fault). */
#define SIM_DEFAULT_MISS_US 10.0
#define SIM_DEFAULT_HIT_US  1.0

struct sim_config {
	uint32_t capacity; /* resident + prefetch cache, in pages */
	double hit_us, miss_us;
};

struct sim_thread_stats {
	uint64_t accesses, misses, hits;
};

struct sim_result {
	enum sim_policy_kind kind;
	uint32_t capacity;
	uint64_t accesses;	 /* every access of the trace */
	uint64_t misses;	 /* faults that read the page remotely */
	uint64_t hits;		 /* faults served by a prefetched page */
	uint64_t prefetched;	 /* pages read ahead */
	uint64_t unused_evicted; /* prefetched pages evicted before any use */
	uint64_t unused_at_end;	 /* prefetched pages never used, still cached */
	uint64_t evictions;
	double accuracy;		  /* hits / prefetched */
	double coverage;		  /* hits / (hits + misses) */
	double est_time_us;		  /* misses * miss_us + hits * hit_us */
	double seconds;			  /* wall time of the replay */
	struct sim_thread_stats *threads; /* per trace thread */
	uint32_t nthreads;
};

/* 0 on success; -1 on bad options or out of memory (*why says which). */
int sim_run(const struct sim_trace *t, enum sim_policy_kind kind,
	    const struct sim_policy_opts *opts, const struct sim_config *cfg,
	    struct sim_result *r, const char **why);
void sim_result_free(struct sim_result *r);

/* --memory: "N" pages or "P%" of the footprint (rounded up, at least 1).
 * 0 and *pages on success, -1 on a malformed or zero size. */
int sim_parse_memory(const char *s, uint32_t footprint, uint32_t *pages);

#endif
