/* SPDX-License-Identifier: MIT */
/*
 * Whether prefetching pays, per target: what a demand page-in costs the
 * faulting program against what a prefetched page costs to bring in.  Pure
 * (no kernel, no I/O, no clock of its own): the agent feeds it the
 * latencies the observer measures and the CPU its windows took, and applies
 * its verdicts.
 *
 * A prefetch hides what a page-in waits for: the device's I/O.  Swap on a
 * synchronous, CPU-bound device (zram, pmem: the kernel reads in the
 * faulting thread, skipping its swap cache and readahead) has nothing to
 * hide: prefetching only moves that CPU work to the agent, through the
 * swap cache the kernel's own path avoids (CPython and Perl ran 0.47-0.77x
 * of Linux's speed on zram with 85-91% of the prefetches used).  So a
 * target stands down when
 *  - the swap in use lies on such devices (the caller reads /proc/swaps);
 *  - or the highest-priority swap area is one (swap-outs go there first,
 *    whatever older pages a disk below it holds) and the target's
 *    page-ins do not block (LEAP_EV_SLEPT: at most
 *    LEAP_COST_MAX_BLOCKED_PCT of them);
 *  - or leap has nothing to add: almost no page prefetched over many
 *    page-ins of read streams (random access; or streams Linux's own
 *    readahead serves, whose windows leap holds back or finds resident).
 *    Page-ins of fills (a write, or zero-filled entries) do not count: a
 *    fill asks for nothing while the scan after it may.
 * Whether the faulting thread blocked is no verdict by itself: zram's
 * page-ins blocked 0-3% here, a disk's 48-100% with one program, but 19%
 * with two on two cores, whose page-ins of a full cgroup reclaim in the
 * faulting thread for 150+ us while the read completes.
 * What the prefetched pages cost and how many were used (page_ns,
 * accuracy_pct) is measured and reported, not judged either: a sample's
 * hits lag its windows, a fill's windows hit little before its scan's hit
 * nearly all (a verdict on them stood CPython's sequential scan down in 3
 * of 5 runs here), and the engine already shrinks a window that is not
 * hit to one page, or none.
 * Standing down, the observer stops following its faults, so it costs
 * nothing, until a probe (after probe_first_ns, doubling up to
 * probe_max_ns while the verdict holds) prefetches again for another
 * sample and a new verdict.
 */
#ifndef LEAP_COST_H
#define LEAP_COST_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum leap_cost_state {
	LEAP_COST_PREFETCH = 0, /* prefetching, and measuring both sides */
	LEAP_COST_STANDBY,	/* stood down until the next probe */
};

struct leap_cost_params {
	/*
	 * A verdict once a sample holds min_misses device page-ins and
	 * min_events page-ins and hits together: while prefetching works,
	 * misses are few and hits many.
	 */
	uint32_t min_misses;
	uint32_t min_events;
	uint64_t probe_first_ns; /* the first probe after standing down */
	uint64_t probe_max_ns;	 /* the probe interval's cap (it doubles) */
	/* Nothing to add: fewer pages in the windows the core issued for
	 * read streams than reads / idle_ratio, over samples in a row
	 * holding at least idle_reads page-ins of read streams. */
	uint32_t idle_ratio;
	uint32_t idle_reads;
};

#define LEAP_COST_DEFAULT_MIN_MISSES 8u
#define LEAP_COST_DEFAULT_MIN_EVENTS 64u
#define LEAP_COST_DEFAULT_PROBE_NS   (5ULL * 1000 * 1000 * 1000)
#define LEAP_COST_DEFAULT_PROBE_MAX  (60ULL * 1000 * 1000 * 1000)
#define LEAP_COST_DEFAULT_IDLE_RATIO 100u
#define LEAP_COST_DEFAULT_IDLE_READS 1024u
/* Below this many prefetched pages, accuracy is not known yet. */
#define LEAP_COST_JUDGED_PAGES 512u
/* Stand down when at least this share (percent) of the swap in use lies
 * on synchronous devices ... */
#define LEAP_COST_SYNC_PCT 90
/* ... or the top area is one and at most this share of page-ins blocked. */
#define LEAP_COST_MAX_BLOCKED_PCT 20

/* One sample: sums since the last verdict. */
struct leap_cost_sample {
	uint64_t misses, miss_ns; /* device page-ins (not of pages we prefetched) */
	uint64_t blocked;	  /* ... that blocked (waited for I/O or a lock) */
	uint64_t hits, hit_ns;	  /* faults on pages we prefetched */
	uint64_t pages, page_ns;  /* pages prefetched and what they cost */
	uint64_t reads;		  /* ... of read streams (not fills) */
	uint64_t planned;	  /* pages in the windows issued (leap_cost_planned) */
};

struct leap_cost {
	enum leap_cost_state state;
	struct leap_cost_sample s;
	/* The last verdict's means (ns; 0: not measured yet), for reports. */
	uint64_t miss_ns, hit_ns, page_ns;
	/* Hits and prefetched pages over the samples, halved at each verdict
	 * (hits come after their windows: one sample says too little). */
	uint64_t hits_seen, pages_seen;
	uint32_t accuracy_pct; /* hits_seen per pages_seen at the last verdict;
				  0 below LEAP_COST_JUDGED_PAGES pages */
	uint64_t misses_seen, blocked_seen; /* as hits_seen and pages_seen */
	uint32_t blocked_pct; /* blocked_seen per misses_seen at the last verdict */
	uint64_t probe_at_ns; /* STANDBY: when to prefetch again */
	uint64_t interval_ns; /* the probe interval now */
	uint32_t streak;      /* stand-downs since the last verdict to prefetch */
	uint64_t idle_reads, idle_pages; /* samples in a row with nothing to add */
	uint64_t stand_downs, probes;	 /* totals */
	char why[160]; /* the last verdict, for people; "" before the first */
};

void leap_cost_params_default(struct leap_cost_params *p);
void leap_cost_init(struct leap_cost *c, const struct leap_cost_params *p);

/* A device page-in of a page not prefetched: entry to exit, ns; whether
 * the faulting thread blocked in it; whether its stream reads (not a
 * fill: no write, no zero-filled entries). */
void leap_cost_miss(struct leap_cost *c, uint64_t ns, bool blocked, bool read);
/* A fault on a page we prefetched, ns (reported, not judged: a hit that
 * waited for its window's read in flight says the window was late). */
void leap_cost_hit(struct leap_cost *c, uint64_t ns);
/* A window of pages prefetched, and what it cost, ns. */
void leap_cost_spent(struct leap_cost *c, uint32_t pages, uint64_t ns);
/*
 * A window of pages the decision issued for a read stream (not a fill),
 * when it issues it.  Nothing to add is judged on these, not on the
 * pages spent: those come back from the workers later, less the pages
 * the program passed before a worker got to them.  An agent short of
 * CPU (three busy loops on two cores) handled 1,024 page-ins in one
 * batch before any spent pages came back and stood down from a scan it
 * served: 3 of 8 runs of agent.t's per-thread row, and 638 hits in a CI
 * run of it against 10,000-25,000 (2026-11-28).
 */
void leap_cost_planned(struct leap_cost *c, uint32_t pages);

/*
 * A verdict once the sample is large enough (call after each sample
 * added, and from a periodic tick for the probe).  Returns true
 * when the state changed: PREFETCH -> STANDBY (stand down; why says
 * why), or STANDBY -> PREFETCH (a probe is due, or, from the tick, the
 * probe time came).  now_ns: any monotonic clock.
 */
/* What the caller knows of the swap devices (/proc/swaps). */
struct leap_cost_swap {
	int sync_pct;  /* share of the swap in use on zram or pmem; -1 unknown */
	bool top_sync; /* the highest-priority area is one: swap-outs go there */
};

bool leap_cost_update(struct leap_cost *c, const struct leap_cost_params *p,
		      uint64_t now_ns, const struct leap_cost_swap *swap);

/* Stand down for a reason found elsewhere (the outcome judge, outcome.h),
 * why says it; the next probe after interval_ns (the caller's: the cost
 * model's own prefetch verdicts, which come in the first second of every
 * probe, do not say whether this reason still holds). */
void leap_cost_stand_down(struct leap_cost *c, uint64_t now_ns, uint64_t interval_ns,
			  const char *why);

const char *leap_cost_state_name(enum leap_cost_state s);

#ifdef __cplusplus
}
#endif

#endif
