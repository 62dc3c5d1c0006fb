/* SPDX-License-Identifier: MIT */
/*
 * `leap-agent run`: whose allocation invoked the OOM kills of its cgroup,
 * the command's own or the agent's prefetch (leap/oomlog.h says why that
 * can happen and how the kernel log tells).  The kernel log is opened at
 * the start, while the agent may still read it (/dev/kmsg needs
 * CAP_SYSLOG where kernel.dmesg_restrict is set; the check is at open,
 * kernel/printk/printk.c devkmsg_open()), and read at the end: only the
 * records written in between.
 */
#ifndef LEAP_AGENT_OOMCAUSE_H
#define LEAP_AGENT_OOMCAUSE_H

#include <stdint.h>

struct oom_causes {
	int fd; /* /dev/kmsg at its end when opened; -1: not readable */
};

/* Never fails: an unreadable log leaves fd -1 (oom_causes_count says so). */
void oom_causes_open(struct oom_causes *c);
/*
 * The OOM kills in the cgroup named name (its directory's name, in either
 * hierarchy) since open: *kills in all, *by_agent those whose allocation
 * was one of this process's threads (its process_madvise).  0, or -errno
 * when the log could not be read.
 */
int oom_causes_count(struct oom_causes *c, const char *name, uint64_t *kills,
		     uint64_t *by_agent);
void oom_causes_close(struct oom_causes *c);

#endif
