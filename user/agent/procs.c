// SPDX-License-Identifier: MIT
/* The watched processes' files, shared by the agent's threads (procs.h). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "caps.h"
#include "clock.h"
#include "procs.h"
#include "vmas.h"

struct proc_entry {
	uint32_t tgid; /* 0: free */
	int pidfd;
	int pagemap_fd;	    /* -1 when unreadable: no filtering for this process */
	uint32_t holders;   /* procs_get() without procs_put() */
	bool forgotten;	    /* out of the lookup; closed by its last holder */
	bool pinned;	    /* preopened while privileged: never evicted */
	uint64_t last_used; /* the cache's clock */
	pthread_mutex_t vmas_lock;
	struct proc_vmas vmas; /* its mappings, read at the first question */
};

struct procs {
	pthread_mutex_t lock; /* the entries' tgid, holders, flags, clock */
	bool use_pagemap;
	uint64_t clock;
	/* The entry procs_get() found last: one process faults at a time,
	 * mostly, and a scan of the whole cache for it was ~3% of the
	 * agent's CPU on a heap walk (perf, 2026-11-30). */
	uint32_t hint;
	struct proc_entry e[PROCS_CACHE];
};

static int sys_pidfd_open(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

struct procs *procs_new(bool use_pagemap)
{
	struct procs *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	pthread_mutex_init(&c->lock, NULL);
	c->use_pagemap = use_pagemap;
	for (int i = 0; i < PROCS_CACHE; i++) {
		c->e[i].pidfd = c->e[i].pagemap_fd = -1;
		pthread_mutex_init(&c->e[i].vmas_lock, NULL);
	}
	return c;
}

/* Closes e's files; e is free again (the caller holds c->lock, or is the
 * last one to use e). */
static void entry_close(struct proc_entry *e)
{
	if (e->pidfd >= 0)
		close(e->pidfd);
	if (e->pagemap_fd >= 0)
		close(e->pagemap_fd);
	e->pidfd = e->pagemap_fd = -1;
	vmas_free(&e->vmas);
	memset(&e->vmas, 0, sizeof(e->vmas));
	e->tgid = 0;
	e->pinned = e->forgotten = false;
}

void procs_free(struct procs *c)
{
	if (!c)
		return;
	for (int i = 0; i < PROCS_CACHE; i++) {
		entry_close(&c->e[i]);
		pthread_mutex_destroy(&c->e[i].vmas_lock);
	}
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/* Opens tgid's files into the free entry e (c->lock held); 0 or -errno. */
static int entry_open(struct procs *c, struct proc_entry *e, uint32_t tgid)
{
	char path[64];

	e->pidfd = sys_pidfd_open((pid_t)tgid);
	if (e->pidfd < 0)
		return -errno;
	if (c->use_pagemap) {
		snprintf(path, sizeof(path), "/proc/%u/pagemap", tgid);
		e->pagemap_fd = agent_open_proc_file(path, O_RDONLY | O_CLOEXEC);
	}
	e->tgid = tgid;
	return 0;
}

struct proc_entry *procs_get(struct procs *c, uint32_t tgid, int *err)
{
	struct proc_entry *victim = NULL, *e;
	int rc;

	pthread_mutex_lock(&c->lock);
	c->clock++;
	e = &c->e[c->hint];
	if (e->tgid == tgid && !e->forgotten)
		goto found;
	for (int i = 0; i < PROCS_CACHE; i++) {
		e = &c->e[i];
		if (e->tgid == tgid && !e->forgotten) {
			c->hint = (uint32_t)i;
			goto found;
		}
		if (e->pinned || e->holders)
			continue;
		if (!victim || e->tgid == 0 ||
		    (victim->tgid && e->last_used < victim->last_used))
			victim = e;
	}
	if (!victim) {
		pthread_mutex_unlock(&c->lock);
		*err = -EMFILE; /* every entry held or pinned: nothing to evict */
		return NULL;
	}
	entry_close(victim);
	rc = entry_open(c, victim, tgid);
	if (rc) {
		entry_close(victim);
		pthread_mutex_unlock(&c->lock);
		*err = rc;
		return NULL;
	}
	victim->holders = 1;
	victim->last_used = c->clock;
	c->hint = (uint32_t)(victim - c->e);
	pthread_mutex_unlock(&c->lock);
	return victim;
found:
	e->holders++;
	e->last_used = c->clock;
	pthread_mutex_unlock(&c->lock);
	return e;
}

void procs_put(struct procs *c, struct proc_entry *e)
{
	pthread_mutex_lock(&c->lock);
	if (--e->holders == 0 && e->forgotten)
		entry_close(e);
	pthread_mutex_unlock(&c->lock);
}

int proc_pidfd(const struct proc_entry *e)
{
	return e->pidfd;
}

int proc_pagemap_fd(const struct proc_entry *e)
{
	return e->pagemap_fd;
}

/*
 * Its mappings are read at the first question and again when a page lies
 * in a new mapping, at most every VMAS_REREAD_NS, or when they are a
 * second old (vmas.h).  Before, a table of 512 mappings and a read for
 * every window outside it: Node.js's 1,185 mappings cost the agent ~210 us
 * an event in /proc/PID/maps and node-gc ran 0.93x of Linux's readahead
 * (2026-11-27).
 */
bool proc_in_shmem(struct proc_entry *e, uint64_t page)
{
	int rc;

	pthread_mutex_lock(&e->vmas_lock);
	rc = vmas_shmem(&e->vmas, e->tgid, page, clock_ns(CLOCK_MONOTONIC));
	pthread_mutex_unlock(&e->vmas_lock);
	return rc == 1;
}

bool proc_shmem_at(struct proc_entry *e, uint64_t page, struct vma_range *out)
{
	bool yes;

	pthread_mutex_lock(&e->vmas_lock);
	yes = vmas_shmem_at(&e->vmas, e->tgid, page, clock_ns(CLOCK_MONOTONIC), out);
	pthread_mutex_unlock(&e->vmas_lock);
	return yes;
}

void procs_forget(struct procs *c, uint32_t tgid)
{
	pthread_mutex_lock(&c->lock);
	for (int i = 0; i < PROCS_CACHE; i++) {
		struct proc_entry *e = &c->e[i];

		if (e->tgid != tgid || e->forgotten)
			continue;
		if (e->holders)
			e->forgotten = true; /* its last holder closes it */
		else
			entry_close(e);
	}
	pthread_mutex_unlock(&c->lock);
}

int procs_preopen(struct procs *c, uint32_t tgid)
{
	struct proc_entry *e;
	bool pinned;
	int err = 0;

	e = procs_get(c, tgid, &err);
	if (!e)
		return err;
	pthread_mutex_lock(&c->lock);
	pinned = e->pinned = e->pagemap_fd >= 0;
	pthread_mutex_unlock(&c->lock);
	procs_put(c, e);
	return pinned ? 0 : -EACCES;
}

/* ---- the facts port ------------------------------------------------------------ */

static bool fact_mapped(void *ctx, uint32_t tgid, uint64_t first, uint32_t n)
{
	struct procs_facts *f = ctx;
	struct proc_entry *e;
	uint32_t present = 0;
	int err = 0;

	e = procs_get(f->c, tgid, &err);
	if (!e)
		return false;
	if (e->pagemap_fd >= 0)
		present = pagemap_count_present(f->r, e->pagemap_fd, first, n);
	procs_put(f->c, e);
	return n && present == n;
}

static bool fact_shmem(void *ctx, uint32_t tgid, uint64_t page)
{
	struct procs_facts *f = ctx;
	struct proc_entry *e;
	bool shmem;
	int err = 0;

	e = procs_get(f->c, tgid, &err);
	if (!e)
		return false;
	shmem = proc_in_shmem(e, page);
	procs_put(f->c, e);
	return shmem;
}

static bool fact_region(void *ctx, uint32_t tgid, uint64_t page,
			struct leap_region_at *at)
{
	struct procs_facts *f = ctx;
	struct proc_entry *e;
	struct vma_range r;
	bool yes;
	int err = 0;

	e = procs_get(f->c, tgid, &err);
	if (!e)
		return false;
	yes = proc_shmem_at(e, page, &r);
	procs_put(f->c, e);
	if (!yes)
		return false;
	*at = (struct leap_region_at){.id = r.object,
				      .index = r.pgoff + (page - r.start),
				      .first = r.start,
				      .end = r.end};
	return true;
}

struct leap_core_facts procs_facts_port(struct procs_facts *ctx)
{
	return (struct leap_core_facts){.mapped = fact_mapped,
					.shmem = fact_shmem,
					.region = fact_region,
					.ctx = ctx};
}
