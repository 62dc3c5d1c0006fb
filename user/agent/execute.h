/* SPDX-License-Identifier: MIT */
/*
 * The execute stage: a plan of the decision core (include/leap/core.h)
 * performed.  The quiet map and a verdict's BPF flags go through the
 * observer; MADV_COLD and windows to the workers (issuer.h), or issued on
 * this thread (backend mode, --workers 0) through prefetch.c and
 * backend.c; what came of them to the account stage (account.h).
 */
#ifndef LEAP_AGENT_EXECUTE_H
#define LEAP_AGENT_EXECUTE_H

#include <stdbool.h>
#include <stdint.h>

#include "agent.h"

/* The processes' files, this thread's prefetcher, the records port. */
int execute_init(struct agent *a, bool follow_cpu);
/* Once the observer is open: windows are recorded in its maps. */
void execute_attach_observer(struct agent *a);
void execute_fini(struct agent *a);
/* Workers issue the windows (0: this thread does); 0 or -errno. */
int execute_start_workers(struct agent *a, unsigned workers);
void execute_stop_workers(struct agent *a);

/* Performs one event's plan; t: the event's target (NULL: none). */
void execute_plan(struct agent *a, struct agent_target *t, const struct leap_event *ev,
		  const struct leap_core_plan *plan);
/* A target's verdict changed: its BPF flags, the fault hooks, and a word
 * on stderr. */
void execute_verdict(struct agent *a, struct agent_target *t, enum leap_verdict_change v);

#endif
