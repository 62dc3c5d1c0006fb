/* SPDX-License-Identifier: MIT */
/*
 * What the agent changes on the system while it runs (vm.page-cluster,
 * run's cgroup), and the guardian process that undoes it once the agent
 * is gone, however it goes.
 */
#ifndef LEAP_AGENT_GUARDIAN_H
#define LEAP_AGENT_GUARDIAN_H

#include <sys/types.h>

#include "cgroup.h"

/* Sets vm.page-cluster to 0 (Linux's swap readahead off), remembering the
 * old value for guardian_finish(); 0 or -errno. */
int page_cluster_off(void);
/* Puts back what page_cluster_off() found (also done by the guardian). */
void page_cluster_restore(void);

struct guardian {
	pid_t pid;
	int fd; /* write end; closing it releases the guardian */
};

/*
 * Forks the guardian while the agent still has every capability: it waits
 * for its end of a pipe to close, which happens on a clean exit and on a
 * crash alike, then restores vm.page-cluster and removes cg (may be NULL).
 * The agent itself keeps no capability to remove cgroups once it has
 * dropped its capabilities.  0 or -errno.
 */
int guardian_start(struct guardian *g, struct run_cgroup *cg);
/* Releases the guardian and waits for it to finish undoing. */
void guardian_finish(struct guardian *g);

#endif
