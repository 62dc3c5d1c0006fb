// SPDX-License-Identifier: MIT
/*
 * The observer's maps that the agent writes besides its targets (observer.h):
 * the records of prefetched pages (leap_prefetched, through the leap_record
 * program where the kernel runs it) and the matched cgroups (leap_leaves,
 * leap_cg_match).  The agent's other files make no bpf() call of their
 * own: every map and link operation is the observer module's.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include <bpf/bpf.h>

#include "leap_observer.h"
#include "observer.h"

struct leap_records {
	int prefetched_fd; /* leap_prefetched */
	int record_fd;	   /* the leap_record program; -1: batch updates */
	bool no_batch;	   /* the kernel has no BPF_MAP_UPDATE_BATCH (< 5.6) */
	/* leap_record copies the pages into a per-CPU buffer and may sleep
	 * there: two runs at once on one CPU would mix windows.  It also
	 * guards record_fd and no_batch, which the first failure changes. */
	pthread_mutex_t lock;
};

struct leap_records *leap_records_open(const struct leap_observer *obs)
{
	struct leap_records *r = calloc(1, sizeof(*r));
	int fd;

	if (!r)
		return NULL;
	r->prefetched_fd = leap_observer_map_fd(obs, "prefetched");
	fd = leap_observer_map_fd(obs, "record");
	r->record_fd = fd >= 0 ? fd : -1;
	pthread_mutex_init(&r->lock, NULL);
	return r;
}

void leap_records_close(struct leap_records *r)
{
	if (!r)
		return;
	pthread_mutex_destroy(&r->lock);
	free(r);
}

/* One BPF_PROG_TEST_RUN of leap_record: false when it cannot run here. */
static bool record_by_program(struct leap_records *r, uint32_t tgid,
			      const uint64_t *pages, uint32_t n, uint64_t marker,
			      uint32_t window, uint32_t *failed)
{
	struct leap_record_args args = {.pages = (uintptr_t)pages,
					.marker = marker,
					.tgid = tgid,
					.n = n,
					.window = window};
	LIBBPF_OPTS(bpf_test_run_opts, run, .ctx_in = &args, .ctx_size_in = sizeof(args));

	if (bpf_prog_test_run_opts(r->record_fd, &run)) {
		/* Not runnable after all: batches from now on. */
		r->record_fd = -1;
		return false;
	}
	*failed = run.retval < n ? n - run.retval : 0;
	return true;
}

/*
 * Without the program: one BPF_MAP_UPDATE_BATCH where the kernel has it
 * (5.6+): a batch stops at the first key it cannot update (the map full)
 * and says how many it did (kernel/bpf/syscall.c
 * generic_map_update_batch()); that page is skipped.  Without batches, one
 * call per page.
 */
static uint32_t record_by_updates(struct leap_records *r, uint32_t tgid,
				  const uint64_t *pages, uint32_t n, uint64_t marker,
				  uint32_t window)
{
	struct leap_pf_key keys[LEAP_RECORD_MAX];
	__u32 vals[LEAP_RECORD_MAX];
	uint32_t at = 0, failed = 0;

	for (uint32_t i = 0; i < n; i++) {
		keys[i] = (struct leap_pf_key){.tgid = tgid, .page = pages[i]};
		vals[i] = window << LEAP_PF_WINDOW_SHIFT |
			  (pages[i] == marker ? LEAP_PF_MARKER : 0);
	}
	while (at < n && !r->no_batch) {
		__u32 count = n - at;

		if (bpf_map_update_batch(r->prefetched_fd, keys + at, vals + at, &count,
					 NULL) == 0)
			return failed;
		/* 524: the kernel's ENOTSUPP, a map type without batches */
		if (errno == EINVAL || errno == EOPNOTSUPP || errno == 524) {
			r->no_batch = true;
			break;
		}
		failed++;
		at += count + 1;
	}
	for (; at < n; at++)
		if (bpf_map_update_elem(r->prefetched_fd, &keys[at], &vals[at], BPF_ANY))
			failed++;
	return failed;
}

uint32_t leap_records_add(struct leap_records *r, uint32_t tgid, const uint64_t *pages,
			  uint32_t n, uint64_t marker, uint32_t window, bool *by_program)
{
	uint32_t failed = 0;

	*by_program = false;
	if (!r || r->prefetched_fd < 0 || n == 0)
		return 0;
	if (n > LEAP_RECORD_MAX)
		n = LEAP_RECORD_MAX;
	pthread_mutex_lock(&r->lock);
	if (r->record_fd >= 0)
		*by_program =
			record_by_program(r, tgid, pages, n, marker, window, &failed);
	if (!*by_program)
		failed = record_by_updates(r, tgid, pages, n, marker, window);
	pthread_mutex_unlock(&r->lock);
	return failed;
}

void leap_records_remove(struct leap_records *r, uint32_t tgid, uint64_t first,
			 uint32_t n)
{
	if (!r || r->prefetched_fd < 0)
		return;
	for (uint32_t k = 0; k < n; k++) {
		struct leap_pf_key key = {.tgid = tgid, .page = first + k};

		bpf_map_delete_elem(r->prefetched_fd, &key);
	}
}

/* ---- matched cgroups -------------------------------------------------------------- */

int leap_observer_leaf_target(const struct leap_observer *obs, __u64 leaf_id,
			      __u64 *target_id, bool *in_leaves)
{
	struct leap_leaf leaf;
	struct leap_match m;

	*in_leaves = false;
	if (bpf_map_lookup_elem(leap_observer_map_fd(obs, "leaves"), &leaf_id, &leaf) ==
	    0) {
		*in_leaves = true;
		*target_id = leaf.target_id;
		return 0;
	}
	/* leap_leaves is full: the per-cgroup match cache still knows. */
	if (bpf_map_lookup_elem(leap_observer_map_fd(obs, "match"), &leaf_id, &m) == 0) {
		*target_id = m.target_id;
		return 0;
	}
	return -ENOENT;
}

void leap_observer_leaf_forget(const struct leap_observer *obs, __u64 leaf_id)
{
	bpf_map_delete_elem(leap_observer_map_fd(obs, "leaves"), &leaf_id);
	bpf_map_delete_elem(leap_observer_map_fd(obs, "match"), &leaf_id);
}

int leap_observer_leaf_next(const struct leap_observer *obs, const __u64 *prev,
			    __u64 *next, struct leap_leaf *leaf)
{
	int fd = leap_observer_map_fd(obs, "leaves");
	__u64 key;

	if (bpf_map_get_next_key(fd, prev, &key))
		return -errno;
	*next = key;
	/* Removed meanwhile: an empty entry, skipped by its target id 0. */
	if (bpf_map_lookup_elem(fd, &key, leaf))
		leaf->target_id = 0;
	return 0;
}
