/* SPDX-License-Identifier: MIT */
#ifndef LEAP_AGENT_SCHED_POLICY_H
#define LEAP_AGENT_SCHED_POLICY_H

#include <stdbool.h>

/*
 * The agent's CPU scheduling policy: SCHED_BATCH (batch = true) or
 * SCHED_NORMAL, for the calling thread and the threads it creates later.
 * Call after forking a command, which keeps the policy it had.
 * Returns 0 or -errno.
 */
int agent_set_scheduler(bool batch);

#endif
