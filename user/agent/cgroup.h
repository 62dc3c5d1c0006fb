/* SPDX-License-Identifier: MIT */
/*
 * The cgroup `leap-agent run` puts its command in: a memory limit (cgroup v2
 * memory.max where the v2 hierarchy has the memory controller, else the v1
 * memory controller's memory.limit_in_bytes) and a cgroup v2 directory,
 * whose id is what the BPF filter matches.
 */
#ifndef LEAP_AGENT_CGROUP_H
#define LEAP_AGENT_CGROUP_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct run_cgroup {
	char v2[PATH_MAX];     /* cgroup v2 directory (always) */
	char v1_mem[PATH_MAX]; /* v1 memory cgroup, "" when v2 does memory */
	uint64_t id;	       /* cgroup v2 id of v2 */
};

/* The value of key in dir/file, a flat keyed file ("key value" lines:
 * memory.stat, memory.events, /proc/vmstat); -ENOENT if absent, -errno
 * if the file cannot be opened. */
int read_keyed(const char *dir, const char *file, const char *key, uint64_t *val);
/* Mount point of the cgroup2 hierarchy, or -ENOENT. */
int cgroup2_mount(char *out, size_t len);
/* Mount point of the cgroup v1 hierarchy with the memory controller, or -ENOENT. */
int cgroup1_memory_mount(char *out, size_t len);
/* Creates the cgroups (limit 0: no limit).  err gets a message on failure. */
int run_cgroup_create(struct run_cgroup *cg, const char *name, uint64_t limit, char *err,
		      size_t errlen);
/* Moves pid into every cgroup of cg. */
int run_cgroup_enter(const struct run_cgroup *cg, pid_t pid);
/*
 * How many of cg's processes an OOM killer (the cgroup's or the global one)
 * has killed: key oom_kill of v1 memory.oom_control or v2 memory.events.
 * -ENOENT when cg has no memory cgroup of its own (no limit) or the kernel
 * does not count them (v1 before 4.13).
 */
int run_cgroup_oom_kills(const struct run_cgroup *cg, uint64_t *kills);
/* Major faults of the command's cgroup (memory.stat pgmajfault: every one,
 * whether or not the fault hooks were on); a negative errno where the
 * memory controller gives none. */
int run_cgroup_major_faults(const struct run_cgroup *cg, uint64_t *faults);
/* Kills what is left inside, then removes the directories. */
void run_cgroup_destroy(struct run_cgroup *cg);

#endif
