/* SPDX-License-Identifier: MIT */
/*
 * The account stage: what came of a plan.  Windows issued by a worker
 * thread or by the event thread end here (account_window_done()): the
 * counters that BPF shares are added at once (atomically), the rest waits
 * under a lock until the event thread drains it (account_drain()), which
 * hands each target's cost to the decision core, forgets processes found
 * gone and turns the kernel's refusals into the agent's policy, through
 * one errno-to-policy function (account_outcome()).
 */
#ifndef LEAP_AGENT_ACCOUNT_H
#define LEAP_AGENT_ACCOUNT_H

#include <stdbool.h>
#include <stdint.h>

#include "agent.h"

/* What a window's or a MADV_COLD's result means for the agent. */
enum account_outcome {
	OUTCOME_DONE,	 /* rc >= 0: pages issued (or 0: nothing to do) */
	OUTCOME_GONE,	 /* the process exited: forget it */
	OUTCOME_REFUSED, /* the kernel refuses the advice: stop asking */
	OUTCOME_DENIED,	 /* not permitted for this process: say so once */
	OUTCOME_FAILED,	 /* anything else: this window only */
};

enum account_outcome account_outcome(int rc, bool cold);

void account_init(struct agent *a);
void account_fini(struct agent *a);

/* What one issued window came to (any thread). */
struct window_result {
	uint32_t target; /* the core's target id */
	uint32_t slot;	 /* its stats slot */
	uint32_t tgid;
	int rc;		      /* pages issued, or -errno */
	uint64_t cpu_ns;      /* the issuing thread's CPU for it */
	uint64_t fault_ns;    /* the fault that asked for it */
	uint64_t event_ns;    /* ... its event */
	uint64_t dispatch_ns; /* when it entered the kernel (0: it did not) */
};

void account_window_done(struct agent *a, const struct window_result *r);
/* A MADV_COLD (any thread): pages or -errno. */
void account_cold_done(struct agent *a, uint32_t tgid, int rc);
/* Event thread: what the workers learnt since, applied. */
void account_drain(struct agent *a);
/* A prefetch hit, for the target's stats slot. */
void account_hit(struct agent *a, uint32_t slot);
/* A process found gone (or exited): the core and procs.c forget it. */
void account_forget_process(struct agent *a, uint32_t tgid);
/* Sums this thread's and the workers' prefetch counters into pf_sum, pm_sum
 * and issued: call before reading them. */
void agent_refresh(struct agent *a);

#endif
