/* SPDX-License-Identifier: MIT */
/*
 * Matched cgroups: the agent's view of the BPF map leap_leaves (read
 * through the observer, observer.h), i.e. which
 * cgroups under each cgroup target have faulted, with their paths, and
 * which of them have since been removed.  Lets the agent attribute an
 * event from a descendant cgroup to its target without a syscall per
 * event, and lets status and stats show where a target's counts come from.
 */
#ifndef LEAP_AGENT_LEAVES_H
#define LEAP_AGENT_LEAVES_H

#include <stdbool.h>
#include <stdint.h>

#include "leap_event.h"
#include "observer.h"

#define AGENT_LEAVES_HASH (2 * LEAP_LEAVES_MAX) /* power of two */

struct agent_leaf {
	uint64_t id;	    /* cgroup v2 id */
	uint64_t target_id; /* the target cgroup it matched */
	char *path;	    /* NULL until found under the target's directory */
	bool announced;	    /* logged once named */
};

struct agent_leaves {
	struct agent_leaf v[LEAP_LEAVES_MAX];
	int n;
	int32_t idx[AGENT_LEAVES_HASH];	 /* open addressing into v, -1 = empty */
	const struct leap_observer *obs; /* its maps leap_leaves, leap_cg_match */
};

void leaves_init(struct agent_leaves *l, const struct leap_observer *obs);
void leaves_fini(struct agent_leaves *l);
/*
 * The target cgroup a faulting cgroup matched (0: none known), asking the
 * BPF maps on the first event of a cgroup.
 */
uint64_t leaves_target(struct agent_leaves *l, uint64_t leaf_id);
struct agent_leaf *leaves_find(struct agent_leaves *l, uint64_t leaf_id);

/* A target (the root of a tree): its id and directory. */
struct leaves_root {
	uint64_t id;
	const char *path;
};

/*
 * Once a second: picks up cgroups BPF matched since, names them by walking
 * their target's directory, forgets (in the BPF map too) those removed and
 * logs each addition and removal to stderr.  Returns whether the set
 * changed (the state file is then rewritten).
 */
bool leaves_tick(struct agent_leaves *l, const struct leaves_root *roots, int nroots);
/* Forgets every cgroup matched to target_id (the target itself is gone). */
void leaves_drop_target(struct agent_leaves *l, uint64_t target_id);

/* The v2 id of a cgroup directory, without logging; -errno (ENOENT: gone). */
int cgroup_id_quiet(const char *path, uint64_t *id);

#endif
