// SPDX-License-Identifier: MIT
/*
 * What keeps a userspace swap daemon alive while the machine swaps to it
 * (design.md, section 3): every page it touches locked, its allocations
 * exempt from reclaim I/O, no OOM kill, and no memory cgroup limit above it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#include "swapd.h"

#ifndef PR_SET_IO_FLUSHER
#define PR_SET_IO_FLUSHER 57
#endif

int swapd_harden(bool no_mlock, char *err, size_t errlen)
{
	FILE *f;

	if (!no_mlock && mlockall(MCL_CURRENT | MCL_FUTURE)) {
		snprintf(err, errlen, "mlockall: %s (needs root or CAP_IPC_LOCK)",
			 strerror(errno));
		return -1;
	}
	/* Both need CAP_SYS_RESOURCE, which containers often drop: without them
	 * the daemon still works (it is locked and outside the limited cgroup),
	 * with less margin under global memory pressure, so say so and go on. */
	if (prctl(PR_SET_IO_FLUSHER, 1, 0, 0, 0))
		fprintf(stderr, "leap-swapd: warning: prctl(PR_SET_IO_FLUSHER): %s\n",
			strerror(errno));
	f = fopen("/proc/self/oom_score_adj", "w");
	if (!f || fputs("-1000", f) < 0 || fclose(f))
		fprintf(stderr, "leap-swapd: warning: oom_score_adj -1000: %s\n",
			strerror(errno));
	return 0;
}

/* A limit in file path: "max" (v2) or a huge number (v1: unlimited) is none. */
static int limited(const char *path, char *why, size_t whylen)
{
	char buf[64];
	FILE *f = fopen(path, "r");
	unsigned long long v;

	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return 0;
	}
	fclose(f);
	if (!strncmp(buf, "max", 3))
		return 0;
	v = strtoull(buf, NULL, 10);
	if (v >= (1ULL << 62))
		return 0;
	snprintf(why, whylen, "%s = %llu", path, v);
	return 1;
}

/* Walks cgroup path cg under root up to the top, checking file. */
static int walk(const char *root, const char *cg, const char *file, char *why,
		size_t whylen)
{
	char path[4096], dir[2048];

	snprintf(dir, sizeof(dir), "%s", cg);
	for (;;) {
		char *slash;

		snprintf(path, sizeof(path), "%s%s/%s", root, dir, file);
		if (limited(path, why, whylen))
			return 1;
		slash = strrchr(dir, '/');
		if (!slash || slash == dir)
			break;
		*slash = '\0';
	}
	return 0;
}

int swapd_in_limited_memcg(char *why, size_t whylen)
{
	char line[4096];
	FILE *f = fopen("/proc/self/cgroup", "r");
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		char *cg;

		if (!c2)
			continue;
		cg = c2 + 1;
		cg[strcspn(cg, "\n")] = '\0';
		if (!strcmp(cg, "/"))
			continue;
		*c2 = '\0';
		if (strstr(c1 + 1, "memory"))
			found = walk("/sys/fs/cgroup/memory", cg, "memory.limit_in_bytes",
				     why, whylen);
		else if (c1[1] == '\0')
			found = walk("/sys/fs/cgroup", cg, "memory.max", why, whylen) ||
				walk("/sys/fs/cgroup/unified", cg, "memory.max", why,
				     whylen);
	}
	fclose(f);
	return found;
}
