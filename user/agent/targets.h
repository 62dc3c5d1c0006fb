/* SPDX-License-Identifier: MIT */
/*
 * The agent's targets (struct agent_target): cgroups and pids added, their
 * entries in BPF, a reloaded policy, a removed cgroup watched again when
 * its path returns, pid targets that exited.  agent_add_cgroup(),
 * agent_add_pid() and agent_apply_config() (agent.h) live here too; the
 * event path (agent.c) asks which target an event is of.
 */
#ifndef LEAP_AGENT_TARGETS_H
#define LEAP_AGENT_TARGETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent.h"

/* Writes t's entry (flags, stats slot) into BPF; err (if not NULL) says why not. */
int target_push(struct agent *a, struct agent_target *t, char *err, size_t errlen);

/* The target an event is of: its pid, its cgroup, or the target that BPF
 * matched its cgroup to (leaves.h); NULL: none. */
struct agent_target *target_of_event(struct agent *a, const struct leap_event *ev);

/* Once a tick: removed and returned cgroups, the leaves, exited pids. */
void targets_tick(struct agent *a);

#endif
