// SPDX-License-Identifier: MIT
/*
 * Why SCHED_BATCH by default: the observer wakes the agent on major
 * faults, from the faulting thread.  A woken SCHED_NORMAL task may preempt
 * the task running on the CPU it lands on, often the program we serve; a
 * woken SCHED_BATCH task never does (kernel/sched/fair.c, the wake-up
 * preemption check: "Batch and idle tasks do not preempt non-idle tasks
 * (their preemption is driven by the tick)").  It still runs at once on
 * an idle CPU, which the scheduler looks for at wake-up; only when every
 * CPU is busy does it wait for the next tick.  Measured on CPython's
 * reverse scan (docs/bench-real.md): involuntary context switches of the
 * program 1,600-3,800 with SCHED_NORMAL against ~450 without the agent.
 * Lowering the policy needs no privilege (sched(7)).
 */
#include <errno.h>
#include <sched.h>

#include "sched_policy.h"

int agent_set_scheduler(bool batch)
{
	struct sched_param sp = {.sched_priority = 0};

	if (sched_setscheduler(0, batch ? SCHED_BATCH : SCHED_OTHER, &sp))
		return -errno;
	return 0;
}
