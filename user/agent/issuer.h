/* SPDX-License-Identifier: MIT */
/*
 * Windows issued asynchronously: the ring-buffer thread decides (the
 * engine) and queues each window here; a small pool of worker threads
 * checks residency and issues it (prefetch.c: pagemap filter, the
 * prefetched-page record, process_madvise), so that a process_madvise
 * that sleeps in the kernel (memcg charge and reclaim, a swap slot raced
 * for) holds up neither the next event nor another target's window.
 *
 *  - one queue per target (stats slot), served round-robin: a busy
 *    target cannot crowd out the others; a full queue drops its oldest
 *    window (counted: overflow);
 *  - each active target holds at most its share of the workers (all of
 *    them while it is alone), so another target's window finds one free;
 *  - a window whose pages the program has already faulted past is trimmed
 *    or dropped (stale), not issued;
 *  - windows of one process queued back to back go out in one call
 *    (coalesced);
 *  - budgets: pages per second for the host and per target (token
 *    buckets); a window over budget is cut to what is left (counted).
 * Stopping discards what is queued and joins every worker.
 */
#ifndef LEAP_AGENT_ISSUER_H
#define LEAP_AGENT_ISSUER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "leap/core.h"
#include "leap_event.h"
#include "placement.h"
#include "prefetch.h"

#define ISSUER_WORKERS_MAX 16
#define ISSUER_JOBS	   512 /* windows queued at most, host-wide */
#define ISSUER_QUEUE_MAX   64  /* ... per target, at most and by default */
/* A target that queued a window this recently counts as active for the
 * workers' shares: a program between two windows keeps its worker. */
#define ISSUER_ACTIVE_NS (50 * 1000 * 1000ULL)

/* One window to issue. */
struct window_job {
	struct window_job *next;
	uint32_t tgid;
	uint32_t slot; /* the target's stats slot: its queue */
	/* MADV_COLD for the n pages from pages[0] (the pages a fill went
	 * past), not a window: never trimmed, cut, nor joined to one. */
	bool cold;
	uint32_t n;
	uint64_t marker;
	uint64_t fault_ns;    /* the fault that asked for it (bpf_ktime_get_ns clock) */
	uint64_t event_ns;    /* ... and when it completed: its event sent */
	uint64_t dispatch_ns; /* set by the worker: prefetcher.dispatch_ns */
	uint32_t target;      /* the decision core's target id (completions) */
	uint32_t cpu;	      /* where its fault completed: issued there (placement.h) */
	/* The stream that asked for it: pages behind the stream's progress
	 * (issuer_progress()) are stale by the time a worker takes it.  No
	 * stream (has_stream false): never trimmed. */
	struct leap_stream_ref stream;
	bool has_stream;
	uint64_t pages[LEAP_PREFETCH_MAX_PAGES];
};

/* Issues one window (prefetch_pages' contract); tests give their own. */
typedef int (*issuer_issue_fn)(struct prefetcher *pf, uint32_t tgid, uint64_t *pages,
			       uint32_t n, uint64_t marker);

/* Makes n pages from first cold (prefetch_cold's contract). */
typedef int (*issuer_cold_fn)(struct prefetcher *pf, uint32_t tgid, uint64_t first,
			      uint32_t n);

/* Called by a worker once a job is issued (or found all stale: rc 0). */
typedef void (*issuer_done_fn)(void *ctx, const struct window_job *job, int rc,
			       uint64_t cpu_ns);

struct issuer_counters {
	uint64_t queued;       /* windows queued */
	uint64_t cold_jobs;    /* MADV_COLD ranges queued (not windows) */
	uint64_t issued;       /* windows issued (process_madvise calls made for them) */
	uint64_t coalesced;    /* windows issued with the one before them */
	uint64_t stale;	       /* windows dropped: the program was past them */
	uint64_t stale_pages;  /* pages trimmed off windows for the same reason */
	uint64_t overflow;     /* windows dropped from a full queue (the oldest) */
	uint64_t pool_empty;   /* windows dropped: every job in use */
	uint64_t budget_pages; /* pages cut by a budget */
	uint64_t max_depth;    /* windows queued at once, at most */
	uint64_t cpu_moves;    /* workers moved to a window's CPU (placement.h) */
	uint64_t busy_ns;      /* worker time spent issuing, all workers */
	/* each worker's part of busy_ns (issuer_workers() of them): an
	 * uneven split shows windows that wait while a worker sleeps */
	uint64_t worker_busy_ns[ISSUER_WORKERS_MAX];
	uint64_t depth;	  /* windows queued now */
	uint64_t in_hand; /* windows a worker has taken and not finished */
	/* overflow per target (stats slot), for saying which one falls behind */
	uint64_t overflow_slot[LEAP_STATS_SLOTS];
};

struct issuer;

struct issuer_config {
	unsigned workers; /* 1..ISSUER_WORKERS_MAX */
	double host_rate; /* pages per second, all targets; 0: unlimited */
	/* Windows a target may have queued (1..ISSUER_QUEUE_MAX; 0: the most).
	 * A shorter queue bounds how old a window can get before it is issued,
	 * at the price of dropping more when the workers fall behind. */
	unsigned queue_depth;
	uint64_t active_ns; /* 0: ISSUER_ACTIVE_NS (tests hold targets active longer) */
	/* Each worker issues a window on its fault's CPU (placement.h). */
	bool follow_cpu;
	/* Streams whose progress the issuer keeps (the decision core's stream
	 * table capacity: struct leap_stream_ref ids below it); 0: none. */
	uint32_t streams;
	/* Each worker's prefetcher starts as a copy of this one's settings
	 * (map fds, the issued array; its own process cache). */
	const struct prefetcher *like;
	issuer_issue_fn issue; /* NULL: prefetch_pages */
	issuer_cold_fn cold;   /* NULL: prefetch_cold */
	issuer_done_fn done;
	void *ctx;
};

/* Starts the workers; NULL (errno set) on failure. */
struct issuer *issuer_start(const struct issuer_config *cfg);
/* Discards what is queued, stops and joins every worker, frees. */
void issuer_stop(struct issuer *q);
/*
 * The newest page the stream faulted on, from the deciding thread after
 * each of its events: a worker trims the pages of the stream's queued
 * windows that lie behind it.  The issuer owns the value and it is
 * updated atomically, with the stream's generation: a window of a stream
 * whose slot another stream took since is left whole.
 */
void issuer_progress(struct issuer *q, struct leap_stream_ref stream, uint64_t page);
/* Queues a copy of job (pages[0..n)); false when it was dropped. */
bool issuer_submit(struct issuer *q, const struct window_job *job);
/* Pages per second a target's windows may take (0: unlimited). */
void issuer_set_rate(struct issuer *q, uint32_t slot, double rate);
/* A snapshot of the counters, and the workers' prefetch stats summed. */
void issuer_counters(struct issuer *q, struct issuer_counters *c,
		     struct prefetch_stats *pf, struct pagemap_reader *pm);
/* The number of workers. */
unsigned issuer_workers(const struct issuer *q);

/* Workers for a host: a quarter of the CPUs this process may use, 1 to 8;
 * none below 4 CPUs. */
unsigned issuer_default_workers(void);

#endif
