// SPDX-License-Identifier: MIT
/* The execute stage (execute.h). */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "account.h"
#include "execute.h"
#include "hooks.h"
#include "swapslot.h"
#include "targets.h"

static uint32_t records_add(void *ctx, uint32_t tgid, const uint64_t *pages, uint32_t n,
			    uint64_t marker, uint32_t window, bool *by_program)
{
	return leap_records_add(ctx, tgid, pages, n, marker, window, by_program);
}

static void records_remove(void *ctx, uint32_t tgid, uint64_t first, uint32_t n)
{
	leap_records_remove(ctx, tgid, first, n);
}

int execute_init(struct agent *a, bool follow_cpu)
{
	struct agent_exec *x = &a->ex;

	placement_init(&x->at, follow_cpu);
	x->procs = procs_new(true);
	if (!x->procs)
		return -ENOMEM;
	prefetch_init(&x->pf, x->procs);
	/* Without the table (no memory) windows go out as before. */
	if (leap_recent_init(&x->recent, LEAP_RECENT_BITS) == 0)
		x->pf.recent = &x->recent;
	x->prefetch_ok = prefetch_probe_willneed(&x->prefetch_why);
	x->cold_ok = true; /* until the kernel refuses it */
	return 0;
}

void execute_attach_observer(struct agent *a)
{
	struct agent_exec *x = &a->ex;

	x->records = leap_records_open(a->obs);
	x->records_port = (struct prefetch_records){
		.add = records_add, .remove = records_remove, .ctx = x->records};
	if (x->records)
		x->pf.records = &x->records_port;
	x->pf.issued = leap_observer_issued(a->obs);
	x->pf.regions = leap_observer_pf_regions(a->obs);
}

void execute_fini(struct agent *a)
{
	struct agent_exec *x = &a->ex;

	execute_stop_workers(a);
	leap_recent_free(&x->recent);
	leap_records_close(x->records);
	x->records = NULL;
	procs_free(x->procs);
	x->procs = NULL;
}

/* A worker issued a job (issuer.h), in the worker's thread. */
static void job_done(void *ctx, const struct window_job *j, int rc, uint64_t cpu_ns)
{
	struct agent *a = ctx;

	if (j->cold) {
		account_cold_done(a, j->tgid, rc);
		return;
	}
	account_window_done(a, &(struct window_result){.target = j->target,
						       .slot = j->slot,
						       .tgid = j->tgid,
						       .rc = rc,
						       .cpu_ns = cpu_ns,
						       .fault_ns = j->fault_ns,
						       .event_ns = j->event_ns,
						       .dispatch_ns = j->dispatch_ns});
}

int execute_start_workers(struct agent *a, unsigned workers)
{
	struct issuer_config cfg = {.workers = workers,
				    .host_rate = a->config.prefetch_rate,
				    .queue_depth = a->config.queue_depth,
				    .streams = a->config.streams,
				    .follow_cpu = a->ex.at.follow,
				    .like = &a->ex.pf,
				    .done = job_done,
				    .ctx = a};

	if (workers == 0 || a->ex.be)
		return 0;
	a->ex.iss = issuer_start(&cfg);
	if (!a->ex.iss)
		return -errno;
	for (int i = 0; i < a->ntargets; i++)
		issuer_set_rate(a->ex.iss, a->targets[i].slot,
				a->targets[i].policy.prefetch_rate);
	return 0;
}

void execute_stop_workers(struct agent *a)
{
	if (!a->ex.iss)
		return;
	agent_refresh(a); /* the workers' counters, for the summary */
	issuer_stop(a->ex.iss);
	a->ex.iss = NULL;
}

void execute_verdict(struct agent *a, struct agent_target *t, enum leap_verdict_change v)
{
	const struct leap_cost *c = leap_core_target_cost(a->dec.core, t->core_id);

	target_push(a, t, NULL, 0);
	a->state_dirty = true;
	hooks_follow_targets(a); /* off, when nobody is left to follow */
	if (v == LEAP_VERDICT_STAND_DOWN)
		fprintf(stderr,
			"leap-agent: %s %s: standing down (%s); probing again in %llu "
			"s\n",
			t->kind == TARGET_CGROUP ? "cgroup" : "pid", t->path, c->why,
			(unsigned long long)(c->interval_ns / 1000000000ULL));
	else if (a->verbose)
		fprintf(stderr, "leap-agent: %s %s: probing whether prefetching pays\n",
			t->kind == TARGET_CGROUP ? "cgroup" : "pid", t->path);
}

/*
 * A job for the workers, cleared up to its pages[]: issuer_submit() copies
 * only the pages in use, so clearing all 8 KiB of them on each window (as
 * a compound literal does) is work for nothing.  One job, this thread's
 * only: issuer_submit() has copied it before the next is begun.
 */
static struct window_job *job_begin(const struct agent_target *t, uint32_t tgid,
				    uint32_t n)
{
	static struct window_job j;

	memset(&j, 0, offsetof(struct window_job, pages));
	j.tgid = tgid;
	j.slot = t->slot;
	j.target = t->core_id;
	j.n = n;
	return &j;
}

/*
 * Leap's eager eviction, as far as a stock kernel allows: the pages a fill
 * went past cold_behind pages ago get MADV_COLD, so that reclaim in the
 * target's memory cgroup takes them first.  Without it reclaim gives every
 * page the fill wrote (mapped, young) a second trip round the inactive
 * list (mm/vmscan.c folio_check_references()), so the fill's own direct
 * reclaim scans each page twice, and the first pages it finds
 * unreferenced are the unmapped ones: our prefetches.  Measured
 * (docs/bench-real.md): CPython's fill 8-19% faster than with Linux's
 * readahead alone; behind read streams it paid nowhere and cost SQLite's
 * sort at 25% 0.96x -> 0.81x.  The decision says which pages; this
 * executes it.
 */
static void make_cold(struct agent *a, const struct agent_target *t,
		      const struct leap_event *ev, uint64_t first, uint32_t n)
{
	if (a->ex.iss) {
		/* A worker's job, queued behind the target's windows: the
		 * event thread makes no madvise call of its own. */
		struct window_job *j = job_begin(t, ev->tgid, n);

		j->cold = true;
		j->cpu = ev->cpu;
		j->pages[0] = first;
		issuer_submit(a->ex.iss, j);
		return;
	}
	placement_move(&a->ex.at, ev->cpu);
	account_cold_done(a, ev->tgid, prefetch_cold(&a->ex.pf, ev->tgid, first, n));
}

/*
 * Backend mode on addresses: the window's pages that pagemap shows swapped
 * out on the backend's device are prefetched through leap-swapd.  Resident
 * pages, pages not in swap and pages on another swap area are neither
 * prefetched nor counted.  Two ways (measured in docs/backend.md):
 *  - be_swapcache: process_madvise first, then push the slots that are
 *    not in runs (swapslot_drop_runs: a run is one multi-page read of
 *    the kernel's, which leap-swapd fetches at once anyway; on sequential
 *    windows it used to skip ~90% of the pushed pages as just read on
 *    demand).  The kernel's reads are under way before leap-swapd hears
 *    of the window; those that reach it after its fetch thread took the
 *    window wait for that one multi-page fetch (pcache_take), the others
 *    are read on demand.  Either way the page lands in the swap cache:
 *    the fault is minor.  Pushing first was measured 2-3x slower: the
 *    socket round trip delays process_madvise, and faults then reach
 *    pages it is still reading in (most likely sleeping a jiffy each in
 *    the -EEXIST retry of mm/swap_state.c __read_swap_cache_async).
 *  - otherwise: push only, and record the pages in the prefetched-page map
 *    first, so the (major) fault on one counts as the hit; leap-swapd's
 *    cache serves its read.
 * Pages issued, or -errno.
 */
static int backend_push(struct agent *a, uint32_t tgid, uint64_t *pages, uint32_t n,
			uint64_t marker)
{
	struct agent_exec *x = &a->ex;
	uint64_t ent[LEAP_PW_LIMIT], slots[LEAP_PW_LIMIT];
	uint32_t k = 0, no_off = 0;
	int m, rc, issued = 0;
	/* Before prefetch_swap_entries() sorts them. */
	bool descending = n > 1 && pages[0] > pages[n - 1];

	m = prefetch_swap_entries(&x->pf, tgid, pages, n, ent);
	if (m <= 0)
		return m;
	for (int i = 0; i < m; i++) {
		uint32_t type;
		uint64_t off;

		if (!swapslot_decode(ent[i], &type, &off) || off == 0) {
			no_off++;
			continue;
		}
		backend_note(x->be, tgid, pages[i], type, off);
		if ((int)type != x->be->swap_type) {
			x->be->st.other_device++;
			continue;
		}
		pages[k] = pages[i];
		slots[k++] = off;
	}
	x->be->st.no_offset += no_off;
	if (no_off && !x->be_warned_no_offset) {
		/* Never predict on zeros (design.md section 6). */
		x->be_warned_no_offset = true;
		fprintf(stderr,
			"leap-agent: pid %u: pagemap shows swapped pages without their "
			"swap slots (opened without CAP_SYS_ADMIN?); nothing pushed for "
			"them\n",
			tgid);
	}
	if (k == 0)
		return 0;
	if (!x->be_swapcache) {
		k = prefetch_record(&x->pf, tgid, pages, slots, k, marker);
		if (k == 0)
			return 0;
	} else {
		uint32_t kept;

		issued = prefetch_advise(&x->pf, tgid, pages, k, descending, marker);
		/* Runs of slots reach leap-swapd as the kernel's own multi-page
		 * reads: only the scattered rest is worth a push. */
		kept = swapslot_drop_runs(slots, k, BACKEND_MERGED_RUN);
		x->be->st.left_to_kernel += k - kept;
		k = kept;
		if (k == 0)
			return issued;
	}
	/* Into the swap cache the window is issued already: do not wait for
	 * leap-swapd's count (docs/backend.md, "asynchronous push"). */
	rc = x->be_swapcache ? backend_prefetch_async(x->be, slots, k)
			     : backend_prefetch(x->be, slots, k);
	if (rc < 0 && x->be->fd < 0)
		fprintf(stderr,
			"leap-agent: leap-swapd control socket %s: %s; backend "
			"prefetching stopped, observing only\n",
			x->be->path, strerror(-rc));
	else if (rc < 0)
		fprintf(stderr, "leap-agent: leap-swapd refused a prefetch batch (%s)\n",
			strerror(-rc));
	/* What process_madvise issued stands whatever leap-swapd said. */
	return x->be_swapcache ? issued : rc;
}

/*
 * The window: to a worker (issuer.h), which issues it and reports back
 * through job_done(); or, in backend mode and with --workers 0, issued
 * here and now, and accounted at once.
 */
static void issue_window(struct agent *a, struct agent_target *t,
			 const struct leap_event *ev, const struct leap_core_plan *plan)
{
	struct agent_exec *x = &a->ex;
	uint64_t pages[LEAP_PW_LIMIT], spent = x->pf.stats.willneed.cpu_ns;
	int rc;

	if (x->iss) {
		struct window_job *j = job_begin(t, ev->tgid, plan->n);

		j->marker = plan->marker;
		j->fault_ns = ev->ts_ns;
		j->event_ns = ev->ts_ns + ev->latency_ns;
		j->stream = plan->stream;
		j->has_stream = true;
		j->cpu = ev->cpu;
		memcpy(j->pages, plan->pages, plan->n * sizeof(*plan->pages));
		issuer_submit(x->iss, j);
		return;
	}
	/* prefetch_pages() sorts the pages it is given. */
	memcpy(pages, plan->pages, plan->n * sizeof(*pages));
	placement_move(&x->at, ev->cpu);
	x->pf.dispatch_ns = 0;
	if (x->be)
		rc = backend_push(a, ev->tgid, pages, plan->n, plan->marker);
	else
		rc = prefetch_pages(&x->pf, ev->tgid, pages, plan->n, plan->marker);
	account_window_done(
		a, &(struct window_result){.target = t->core_id,
					   .slot = t->slot,
					   .tgid = ev->tgid,
					   .rc = rc,
					   .cpu_ns = x->pf.stats.willneed.cpu_ns - spent,
					   .fault_ns = ev->ts_ns,
					   .event_ns = ev->ts_ns + ev->latency_ns,
					   .dispatch_ns = x->pf.dispatch_ns});
	account_drain(a);
	if (x->be && x->be->fd < 0)
		agent_update_env(a); /* the link to leap-swapd is lost */
}

void execute_plan(struct agent *a, struct agent_target *t, const struct leap_event *ev,
		  const struct leap_core_plan *plan)
{
	if (!t || plan->cls == LEAP_CLASS_NONE)
		return;
	if (plan->count_hit)
		account_hit(a, t->slot);
	if (plan->verdict)
		execute_verdict(a, t, plan->verdict);
	/* The stream's progress, for the workers that trim its windows. */
	if (a->ex.iss && plan->stream.gen)
		issuer_progress(a->ex.iss, plan->stream, plan->progress);
	if (plan->quiet)
		leap_observer_set_quiet(a->obs, plan->quiet_tid,
					plan->quiet == LEAP_QUIET_SET ? plan->quiet_until
								      : 0);
	if (plan->cold_n)
		make_cold(a, t, ev, plan->cold_first, plan->cold_n);
	if (plan->n)
		issue_window(a, t, ev, plan);
}
