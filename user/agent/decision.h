/* SPDX-License-Identifier: MIT */
/*
 * The decide stage's agent side: the decision core (include/leap/core.h)
 * made from the agent's options, fed every input on the event thread, and
 * each input recorded first when --record is on (recording.h), so that a
 * replay of the file makes the same calls in the same order.  The facts
 * the core asks for come from procs.c, through the recording's tap.
 */
#ifndef LEAP_AGENT_DECISION_H
#define LEAP_AGENT_DECISION_H

#include <stdbool.h>
#include <stdint.h>

#include "agent.h"

/* The core for a, with its targets' policies to come; recording to
 * record_path unless NULL.  0 or -errno (said on stderr). */
int decision_init(struct agent *a, const char *record_path);
/* Closes the recording (with the live counters) and frees the core. */
void decision_fini(struct agent *a);

/* A target's policy as the core sees it. */
struct leap_core_policy decision_policy(const struct agent_policy *p);

uint32_t decision_target_add(struct agent *a, const struct agent_policy *p);
/* Whether its verdict changed (it may no longer stand down). */
bool decision_target_set(struct agent *a, uint32_t id, const struct agent_policy *p);
void decision_target_remove(struct agent *a, uint32_t id);
/* The environment from what the agent knows now (recorded when it changed). */
void decision_env(struct agent *a, const struct leap_core_env *env);
const struct leap_core_plan *decision_event(struct agent *a, uint32_t target,
					    const struct leap_event *ev);
void decision_spent(struct agent *a, uint32_t target, uint32_t pages, uint64_t ns);
void decision_forget(struct agent *a, uint32_t tgid);
uint32_t decision_tick(struct agent *a, uint64_t now_ns, uint32_t *changed,
		       enum leap_verdict_change *how);

#endif
