/* SPDX-License-Identifier: MIT */
/*
 * What a running agent publishes, read from outside it, so that `stats`
 * works from any root shell and the agent's own metrics export shows
 * exactly what the command shows:
 *  - LEAP_PIN_DIR/stats: per-target counters (BPF and the agent's
 *    prefetch counts), one slot per cgroup target, slot 0 for pid targets;
 *  - LEAP_PIN_DIR/leaves: the cgroups that faulted under each target;
 *  - the state file (state.h): target paths and policies, matched cgroups'
 *    paths, the agent's own counters and latency histogram.
 */
#ifndef LEAP_AGENT_VIEW_H
#define LEAP_AGENT_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "leap_event.h"

struct view_leaf {
	uint64_t id;
	uint32_t slot;
	const char *path; /* from the state file; NULL if not named yet */
};

struct agent_view {
	json_object *state; /* NULL: no state file */
	struct leap_cg_stats slots[LEAP_STATS_SLOTS];
	bool used[LEAP_STATS_SLOTS];
	struct view_leaf *leaves;
	int nleaves;
	bool pushes_only;   /* a hit is a major fault (counters.h agent_rates) */
	char cg2root[4096]; /* cgroup2 mount, stripped from labels */
};

/* 0, or -ENOENT with a reason in err when no agent runs. */
int view_load(struct agent_view *v, char *err, size_t errlen);
void view_free(struct agent_view *v);
/* A cgroup directory as the hierarchy names it: "/a/b" below the mount. */
const char *view_cgroup_name(const struct agent_view *v, const char *path);

#endif
