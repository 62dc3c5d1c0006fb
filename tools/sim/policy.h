/* SPDX-License-Identifier: MIT */
/*
 * A prefetch policy as the simulator sees it: the kernel only tells a
 * prefetcher about faults, so a policy hears about misses and about
 * prefetch hits (a fault served from the prefetch cache), and may propose
 * pages to read on either; it never hears of accesses to resident pages.
 */
#ifndef LEAP_SIM_POLICY_H
#define LEAP_SIM_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "leap/engine.h"
#include "mem.h"
#include "trace_load.h"

enum sim_policy_kind {
	SIM_POL_NONE,
	SIM_POL_LINUX,	       /* VMA-based swap readahead */
	SIM_POL_LINUX_CLUSTER, /* swap-slot cluster readahead */
	SIM_POL_NEXT_N,
	SIM_POL_STRIDE,
	SIM_POL_LEAP,	     /* Leap engine, one stream per process */
	SIM_POL_LEAP_THREAD, /* Leap engine, one stream per thread */
	SIM_POL_COUNT,
};

/* Knobs shared by all policies; each reads the ones it needs. */
struct sim_policy_opts {
	uint32_t page_cluster;	 /* linux*: max window 1 << page_cluster */
	uint32_t window;	 /* next-n, stride: pages per prefetch */
	struct leap_params leap; /* leap*: key is set by the policy kind */
};

void sim_policy_opts_default(struct sim_policy_opts *o);

/* One fault as the policies see it. */
struct sim_fault {
	uint64_t seq;  /* event number, a clock for stream tables */
	uint32_t pg;   /* footprint index */
	uint64_t page; /* virtual page number */
	uint32_t pidx; /* process index */
	uint32_t pid, tid;
};

struct sim_policy;

struct sim_policy_ops {
	int (*init)(struct sim_policy *p, const struct sim_trace *t);
	/* A miss on f.pg: write up to cap footprint indices to prefetch. */
	uint32_t (*miss)(struct sim_policy *p, const struct sim_fault *f,
			 const struct sim_mem *m, uint32_t *out, uint32_t cap);
	/* A prefetch hit on f.pg (before it becomes resident).  Usually
	 * proposes nothing; a policy with look-ahead (a hit on a marker page
	 * issues the next window) writes candidates like miss. */
	uint32_t (*hit)(struct sim_policy *p, const struct sim_fault *f,
			const struct sim_mem *m, uint32_t *out, uint32_t cap);
	void (*fini)(struct sim_policy *p);
};

struct sim_policy {
	enum sim_policy_kind kind;
	const struct sim_policy_ops *ops;
	struct sim_policy_opts opts;
	const struct sim_trace *trace;
	void *state;
	bool needs_slots; /* memory model must track swap slots */
};

const char *sim_policy_name(enum sim_policy_kind k);
/* 0 and *out on a known name, -1 otherwise. */
int sim_policy_parse(const char *s, enum sim_policy_kind *out);
/* Comma-separated list of every name, for --help. */
const char *sim_policy_names(void);

int sim_policy_init(struct sim_policy *p, enum sim_policy_kind k,
		    const struct sim_policy_opts *o, const struct sim_trace *t);
void sim_policy_fini(struct sim_policy *p);

/* The implementations, one file each. */
extern const struct sim_policy_ops sim_policy_none_ops;
extern const struct sim_policy_ops sim_policy_linux_ops;
extern const struct sim_policy_ops sim_policy_linux_cluster_ops;
extern const struct sim_policy_ops sim_policy_next_n_ops;
extern const struct sim_policy_ops sim_policy_stride_ops;
extern const struct sim_policy_ops sim_policy_leap_ops;

/*
 * Linux's readahead window rule, __swapin_nr_pages() in mm/swap_state.c:
 * hits + 2 rounded up to a power of two (at least 4), or without hits 2
 * for a fault adjacent to the previous one and 1 otherwise; capped at
 * max_pages and never below half the previous window.  Exposed for tests.
 */
uint32_t sim_linux_nr_pages(uint64_t prev, uint64_t cur, uint32_t hits,
			    uint32_t max_pages, uint32_t prev_win);

/* Per-VMA readahead state, swap_readahead_info in struct vm_area_struct. */
struct sim_linux_ra {
	uint64_t prev_page; /* SWAP_RA_ADDR: last fault or readahead hit */
	uint32_t win;	    /* SWAP_RA_WIN */
	uint32_t hits;	    /* SWAP_RA_HITS */
};

/*
 * swap_vma_ra_win(): updates ra for a fault on page and returns the window;
 * with win > 1, [*start, *end) are the pages to read, clamped to the VMA
 * [vma_start, vma_end) and to the fault's 2 MiB PMD.  Exposed for tests.
 */
uint32_t sim_linux_vma_window(struct sim_linux_ra *ra, uint64_t page,
			      uint32_t page_cluster, uint64_t vma_start, uint64_t vma_end,
			      uint64_t *start, uint64_t *end);
/* swap_update_readahead(): a fault found a readahead page in the swap cache. */
void sim_linux_vma_hit(struct sim_linux_ra *ra, uint64_t page);

#endif
