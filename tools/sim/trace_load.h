/* SPDX-License-Identifier: MIT */
/*
 * A whole trace in memory, in the dense form the simulator runs on: every
 * event names its page and thread by index, so the hot loop indexes arrays
 * instead of hashing.  The footprint (distinct (pid, page) pairs) is kept
 * sorted, which makes virtual-address neighbours array neighbours: what
 * Linux's VMA readahead and next-n need, with no hash table at all.
 */
#ifndef LEAP_SIM_TRACE_LOAD_H
#define LEAP_SIM_TRACE_LOAD_H

#include <stdint.h>
#include <stdio.h>

#include "leap/trace.h"

#define SIM_NONE UINT32_MAX

struct sim_page {
	uint64_t page; /* virtual page number */
	uint32_t pid;
	uint32_t pidx; /* index of pid in sim_trace.pid_first */
};

struct sim_thread {
	uint32_t pid, tid;
	uint32_t pidx;
};

struct sim_trace {
	uint64_t nevents;
	uint32_t *ev_page;	/* per event: index into pages[] */
	uint32_t *ev_thread;	/* per event: index into threads[] */
	struct sim_page *pages; /* footprint, sorted by (pid, page) */
	uint32_t npages;
	struct sim_thread *threads; /* sorted by (pid, tid) */
	uint32_t nthreads;
	/* pages of process i are pages[pid_first[i] .. pid_first[i + 1]) */
	uint32_t *pid_first;
	uint32_t npids;
};

/*
 * Reads every record of f (format as for leap_trace_reader_open).  0 on
 * success; -1 with a message naming the file and line in err.  An empty
 * trace is an error: there is nothing to simulate.
 */
int sim_trace_load(struct sim_trace *t, FILE *f, const char *name,
		   enum leap_trace_format fmt, char *err, size_t errlen);
/* Builds a trace from records already in memory (tests, generators). */
int sim_trace_from_records(struct sim_trace *t, const struct leap_trace_rec *recs,
			   uint64_t n, char *err, size_t errlen);
void sim_trace_free(struct sim_trace *t);

/* Index of (pid index, page) in the footprint, or SIM_NONE. */
uint32_t sim_trace_find(const struct sim_trace *t, uint32_t pidx, uint64_t page);

#endif
