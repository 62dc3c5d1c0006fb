// SPDX-License-Identifier: MIT
/* Whose allocation invoked the OOM kills of `run`'s cgroup (oomcause.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "leap/oomlog.h"
#include "oomcause.h"

void oom_causes_open(struct oom_causes *c)
{
	c->fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	/* SEEK_END: the next read returns the first record written after. */
	if (c->fd >= 0 && lseek(c->fd, 0, SEEK_END) < 0) {
		close(c->fd);
		c->fd = -1;
	}
}

/* Whether tid is a thread of this process (the invoker of a kill). */
static int own_thread(int32_t tid)
{
	char path[64];

	if (tid <= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/task/%d", tid);
	return access(path, F_OK) == 0;
}

int oom_causes_count(struct oom_causes *c, const char *name, uint64_t *kills,
		     uint64_t *by_agent)
{
	/* A record: "PRIO,SEQ,USEC,FLAGS[,...];MESSAGE\n" and " KEY=VALUE\n"
	 * lines (Documentation/ABI/testing/dev-kmsg); one per read(). */
	char rec[8192];
	struct leap_oomlog log;
	struct leap_oom_kill kill;

	*kills = *by_agent = 0;
	if (c->fd < 0)
		return -EACCES;
	leap_oomlog_init(&log);
	for (;;) {
		ssize_t n = read(c->fd, rec, sizeof(rec) - 1);
		char *msg, *end;

		if (n < 0 && errno == EPIPE)
			continue; /* overwritten before we read it: skipped */
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? 0 : -errno;
		if (n == 0)
			return 0;
		rec[n] = '\0';
		msg = strchr(rec, ';');
		if (!msg)
			continue;
		msg++;
		end = strchr(msg, '\n');
		if (end)
			*end = '\0';
		if (!leap_oomlog_feed(&log, msg, &kill) ||
		    !leap_oomlog_memcg_has(kill.memcg, name))
			continue;
		(*kills)++;
		if (own_thread(kill.invoker_pid))
			(*by_agent)++;
	}
}

void oom_causes_close(struct oom_causes *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}
