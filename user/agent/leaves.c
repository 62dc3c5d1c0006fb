// SPDX-License-Identifier: MIT
/*
 * Matched cgroups (leaves.h).  BPF adds a leap_leaves entry when it first
 * resolves a faulting cgroup to a target; this file mirrors the map in a
 * small hash table, names the entries by walking the target's directory
 * (a cgroup id has no path of its own; name_to_handle_at() on each
 * directory gives the id, as leap_cgroup_id_from_path() does) and notices
 * removed cgroups by looking their path up again once a second.
 */
#include <errno.h>
#include <fcntl.h>
#include <fts.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leaves.h"

int cgroup_id_quiet(const char *path, uint64_t *id)
{
	struct {
		struct file_handle fh;
		uint64_t id;
	} h;
	int mount_id;

	/* kernfs (fs/kernfs/mount.c) encodes a node as its 64-bit id. */
	memset(&h, 0, sizeof(h));
	h.fh.handle_bytes = sizeof(h.id);
	if (name_to_handle_at(AT_FDCWD, path, &h.fh, &mount_id, 0))
		return -errno;
	if (h.fh.handle_bytes != sizeof(uint64_t))
		return -EINVAL;
	memcpy(id, h.fh.f_handle, sizeof(*id));
	return 0;
}

static uint32_t slot_of(uint64_t id)
{
	return (uint32_t)((id * 0x9E3779B97F4A7C15ULL) >> 40) & (AGENT_LEAVES_HASH - 1);
}

static void reindex(struct agent_leaves *l)
{
	for (int i = 0; i < AGENT_LEAVES_HASH; i++)
		l->idx[i] = -1;
	for (int i = 0; i < l->n; i++) {
		uint32_t s = slot_of(l->v[i].id);

		while (l->idx[s] >= 0)
			s = (s + 1) & (AGENT_LEAVES_HASH - 1);
		l->idx[s] = i;
	}
}

void leaves_init(struct agent_leaves *l, const struct leap_observer *obs)
{
	l->n = 0;
	l->obs = obs;
	reindex(l);
}

void leaves_fini(struct agent_leaves *l)
{
	for (int i = 0; i < l->n; i++)
		free(l->v[i].path);
	l->n = 0;
	reindex(l);
}

struct agent_leaf *leaves_find(struct agent_leaves *l, uint64_t leaf_id)
{
	for (uint32_t s = slot_of(leaf_id);; s = (s + 1) & (AGENT_LEAVES_HASH - 1)) {
		int32_t i = l->idx[s];

		if (i < 0)
			return NULL;
		if (l->v[i].id == leaf_id)
			return &l->v[i];
	}
}

static struct agent_leaf *add(struct agent_leaves *l, uint64_t id, uint64_t target_id)
{
	struct agent_leaf *f;
	uint32_t s;

	if (l->n == LEAP_LEAVES_MAX)
		return NULL;
	f = &l->v[l->n];
	f->id = id;
	f->target_id = target_id;
	f->path = NULL;
	f->announced = false;
	for (s = slot_of(id); l->idx[s] >= 0; s = (s + 1) & (AGENT_LEAVES_HASH - 1))
		;
	l->idx[s] = l->n++;
	return f;
}

/* Forgets entry i here and in BPF (the match cache resolves it afresh). */
static void forget(struct agent_leaves *l, int i)
{
	leap_observer_leaf_forget(l->obs, l->v[i].id);
	free(l->v[i].path);
	l->v[i] = l->v[--l->n];
	reindex(l);
}

uint64_t leaves_target(struct agent_leaves *l, uint64_t leaf_id)
{
	struct agent_leaf *f = leaves_find(l, leaf_id);
	__u64 target_id;
	bool in_leaves;

	if (f)
		return f->target_id;
	if (leap_observer_leaf_target(l->obs, leaf_id, &target_id, &in_leaves))
		return 0;
	if (in_leaves)
		add(l, leaf_id, target_id);
	return target_id;
}

static const char *root_path(const struct leaves_root *roots, int nroots, uint64_t id)
{
	for (int i = 0; i < nroots; i++)
		if (roots[i].id == id)
			return roots[i].path;
	return NULL;
}

/* Names the unnamed entries of one target by walking its directory. */
static void name_under(struct agent_leaves *l, const struct leaves_root *r)
{
	char *const argv[] = {(char *)r->path, NULL};
	FTS *fts = fts_open(argv, FTS_PHYSICAL | FTS_NOCHDIR, NULL);
	FTSENT *e;

	if (!fts)
		return;
	while ((e = fts_read(fts))) {
		struct agent_leaf *f;
		uint64_t id;

		if (e->fts_info != FTS_D || cgroup_id_quiet(e->fts_path, &id))
			continue;
		f = leaves_find(l, id);
		if (f && !f->path && f->target_id == r->id)
			f->path = strdup(e->fts_path);
	}
	fts_close(fts);
}

bool leaves_tick(struct agent_leaves *l, const struct leaves_root *roots, int nroots)
{
	__u64 key, next, *prev = NULL;
	struct leap_leaf leaf;
	bool changed = false, unnamed = false;

	/* 1. what BPF matched since the last tick */
	while (leap_observer_leaf_next(l->obs, prev, &next, &leaf) == 0) {
		struct agent_leaf *f;

		key = next;
		prev = &key;
		if (!leaf.target_id)
			continue;
		f = leaves_find(l, key);
		if (f && f->target_id != leaf.target_id) {
			f->target_id = leaf.target_id; /* targets changed: re-resolved */
			free(f->path);
			f->path = NULL;
			f->announced = false;
		} else if (!f) {
			add(l, key, leaf.target_id);
		}
	}
	for (int i = 0; i < l->n; i++)
		unnamed |= l->v[i].path == NULL;
	/* 2. their paths */
	if (unnamed)
		for (int r = 0; r < nroots; r++)
			name_under(l, &roots[r]);
	/* 3. new ones are announced; gone ones forgotten */
	for (int i = 0; i < l->n; i++) {
		struct agent_leaf *f = &l->v[i];
		const char *target = root_path(roots, nroots, f->target_id);
		uint64_t id;

		if (!target) {
			/* its target is not watched any more (leaves_drop_target) */
			forget(l, i--);
			changed = true;
			continue;
		}
		if (!f->path) {
			fprintf(stderr,
				"leap-agent: cgroup id %llu under %s was removed before "
				"it could be named; its faults stay in %s's counters\n",
				(unsigned long long)f->id, target, target);
			forget(l, i--);
			changed = true;
			continue;
		}
		if (cgroup_id_quiet(f->path, &id) || id != f->id) {
			fprintf(stderr,
				"leap-agent: cgroup %s was removed; its faults stay in "
				"%s's counters\n",
				f->path, target);
			forget(l, i--);
			changed = true;
			continue;
		}
		if (!f->announced) {
			fprintf(stderr, "leap-agent: cgroup %s faults under target %s\n",
				f->path, target);
			f->announced = true;
			changed = true;
		}
	}
	return changed;
}

void leaves_drop_target(struct agent_leaves *l, uint64_t target_id)
{
	for (int i = 0; i < l->n; i++)
		if (l->v[i].target_id == target_id)
			forget(l, i--);
}
