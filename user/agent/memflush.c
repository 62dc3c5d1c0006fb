// SPDX-License-Identifier: MIT
/* A swapping target's memory.stat, read now and then (memflush.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "clock.h"
#include "memflush.h"

/* The memory.stat of cgroup v2 directory dir, or of the v1 memory
 * hierarchy's cgroup of the same path; 0 or -ENOENT. */
static int stat_path(const char *dir, char *out, size_t len)
{
	char v2root[PATH_MAX], v1root[PATH_MAX];
	size_t n;

	if ((size_t)snprintf(out, len, "%s/memory.stat", dir) < len &&
	    access(out, R_OK) == 0)
		return 0;
	out[0] = '\0';
	/* A hybrid host: the v1 memory hierarchy's cgroup of the same path
	 * (systemd makes both, and so does `leap-agent run`). */
	if (cgroup2_mount(v2root, sizeof(v2root)) ||
	    cgroup1_memory_mount(v1root, sizeof(v1root)))
		return -ENOENT;
	n = strlen(v2root);
	if (strncmp(dir, v2root, n) || (dir[n] != '/' && dir[n] != '\0'))
		return -ENOENT;
	if ((size_t)snprintf(out, len, "%s%s/memory.stat", v1root, dir + n) < len &&
	    access(out, R_OK) == 0)
		return 0;
	out[0] = '\0';
	return -ENOENT;
}

/* One read: the kernel flushes the memcg's counters, then formats the
 * file; the first 256 bytes are enough to make it do both. */
static void read_stat(const char *path)
{
	char buf[256];
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	/* A failed read changes nothing: the next round reads again. */
	(void)!read(fd, buf, sizeof(buf));
	close(fd);
}

/* Reads every slot that swapped in lately; whether one did. */
static bool read_swapping(struct memflush *m, uint64_t now)
{
	bool any = false;

	for (uint32_t i = 0; i < LEAP_STATS_SLOTS; i++) {
		uint64_t seen = __atomic_load_n(&m->swapin_ns[i], __ATOMIC_RELAXED);

		if (!m->path[i][0] || !seen || now - seen > MEMFLUSH_ACTIVE_NS)
			continue;
		read_stat(m->path[i]);
		__atomic_store_n(&m->reads, m->reads + 1, __ATOMIC_RELAXED);
		any = true;
	}
	return any;
}

static void *run(void *arg)
{
	struct memflush *m = arg;

	pthread_mutex_lock(&m->lock);
	while (!m->stop) {
		uint64_t now = mono_ns();
		uint64_t next =
			now + (read_swapping(m, now) ? m->every_ns : MEMFLUSH_IDLE_NS);
		struct timespec until = {.tv_sec = (time_t)(next / 1000000000ULL),
					 .tv_nsec = (long)(next % 1000000000ULL)};

		while (!m->stop &&
		       pthread_cond_timedwait(&m->wake, &m->lock, &until) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&m->lock);
	return NULL;
}

int memflush_init(struct memflush *m, unsigned every_ms)
{
	pthread_condattr_t attr;

	m->every_ns = (uint64_t)every_ms * 1000 * 1000;
	m->path = calloc(LEAP_STATS_SLOTS, sizeof(*m->path));
	if (!m->path)
		return -ENOMEM;
	pthread_mutex_init(&m->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC); /* mono_ns()'s */
	pthread_cond_init(&m->wake, &attr);
	pthread_condattr_destroy(&attr);
	return 0;
}

int memflush_start(struct memflush *m)
{
	int rc;

	if (!m->path || !m->every_ns || m->started)
		return 0;
	rc = pthread_create(&m->thread, NULL, run, m);
	if (rc)
		return -rc;
	m->started = true;
	return 0;
}

void memflush_stop(struct memflush *m)
{
	if (!m->path)
		return;
	if (m->started) {
		pthread_mutex_lock(&m->lock);
		m->stop = true;
		pthread_cond_signal(&m->wake);
		pthread_mutex_unlock(&m->lock);
		pthread_join(m->thread, NULL);
		m->started = false;
	}
	pthread_cond_destroy(&m->wake);
	pthread_mutex_destroy(&m->lock);
	free(m->path);
	m->path = NULL;
}

void memflush_set(struct memflush *m, uint32_t slot, const char *dir)
{
	char path[PATH_MAX];

	if (!m->path || slot >= LEAP_STATS_SLOTS)
		return;
	if (stat_path(dir, path, sizeof(path)))
		path[0] = '\0'; /* no memory controller there: nothing to read */
	pthread_mutex_lock(&m->lock);
	memcpy(m->path[slot], path, sizeof(path));
	pthread_mutex_unlock(&m->lock);
}

void memflush_clear(struct memflush *m, uint32_t slot)
{
	if (!m->path || slot >= LEAP_STATS_SLOTS)
		return;
	pthread_mutex_lock(&m->lock);
	m->path[slot][0] = '\0';
	pthread_mutex_unlock(&m->lock);
}
