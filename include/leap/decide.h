/* SPDX-License-Identifier: MIT */
/*
 * One stream's decision for one fault, as one pure step: what to fetch,
 * whether the kernel's own readahead already serves the stream (hold),
 * and which pages a fill went past (to make cold).  No I/O here: the two
 * facts that need a read are asked through callbacks, and only when the
 * answer can change the plan: whether the pages between two misses are
 * mapped (the kernel read them ahead and the program used them), unless
 * the stream's memory of that answer (kra_gap, kra_trust) already gives
 * it; and whether a served read stream lies in shared memory.  The
 * decision core (core.h) wraps this step with the gates and the cost
 * model; the agent executes the plan.
 */
#ifndef LEAP_DECIDE_H
#define LEAP_DECIDE_H

#include <stdbool.h>
#include <stdint.h>

#include "leap/engine.h"

/* What the observer saw of one fault (a swap fault of a watched task). */
struct leap_fault {
	uint64_t page;
	bool hit;    /* served by a page we prefetched, without a read */
	bool late;   /* a read of a page we prefetched: it was still on its way */
	bool wasted; /* a page we prefetched was read again before use */
	/* A fill's miss: a write fault (read-modify-write stream) or one that
	 * found zero-filled swap entries (a fill that reads each page first). */
	bool fill;
};

/* How the agent decides, the same for every fault of a target. */
struct leap_decide_cfg {
	/* The kernel's readahead reach in pages (0: readahead off, never
	 * checked), and whether to check it at all (flavour OURS, mode leap). */
	uint32_t ra_pages;
	bool follow_kernel_ra;
	/* Which served streams get no window of ours: every one (--kernel-
	 * readahead defer), fills only (the default), none (pushed only: no
	 * swap slot of ours to race the kernel for). */
	bool hold_all;
	bool hold_none;
	/* A late miss doubles the stream's lead (not in backend mode). */
	bool lead_on_late;
	/* Pages behind a served fill made cold (0: off), in runs of chunk. */
	uint32_t cold_behind;
	uint32_t cold_chunk;
	/* Misses across a served gap taken as served again without asking. */
	uint32_t kra_trust;
};

/* The facts that need the caller's I/O; a NULL function answers no. */
struct leap_decide_facts {
	/* Whether the n pages from first are all mapped. */
	bool (*mapped)(void *ctx, uint64_t first, uint32_t n);
	/* Whether page lies in shared memory: a read stream the kernel's
	 * readahead serves there is held like a fill (decide.c says why). */
	bool (*shmem)(void *ctx, uint64_t page);
	void *ctx;
};

struct leap_plan {
	uint32_t n;	     /* window pages written to out[] */
	bool kra_checked;    /* a miss the kernel's readahead question applied to */
	uint64_t ra_gap;     /* pages the kernel's readahead served (0: none) */
	bool hold;	     /* it serves the stream: issue nothing, n pages held */
	bool asked;	     /* the mapped callback was called */
	bool shmem;	     /* ... and the shmem one, which said yes */
	uint64_t cold_first; /* pages the fill is done with: [cold_first, +cold_n) */
	uint32_t cold_n;
	struct leap_decision dec;
};

/*
 * One fault of stream s (recorded in it).  Returns the window's page
 * count (also plan->n); a held window's pages are counted, not meant to be
 * issued.  out[] holds cap pages at least (pw_max for a full window).
 */
uint32_t leap_decide(struct leap_stream *s, const struct leap_params *p,
		     const struct leap_decide_cfg *cfg, const struct leap_fault *f,
		     const struct leap_decide_facts *facts, uint64_t *out, uint32_t cap,
		     struct leap_plan *plan);

#endif
