// SPDX-License-Identifier: MIT
/*
 * Event handling.  The observer runs with swap_events_only: it sends major
 * faults, known swap faults (fentry path) and faults on pages in the
 * prefetched-page map, which the prefetcher fills before it advises.
 *  - major: a swap-in miss (LEAP_EV_PREFETCHED too: we were late, or the
 *    page was reclaimed again before use);
 *  - minor on a page we prefetched: a prefetch hit (process_madvise put
 *    it in the swap cache; the fault mapped it without I/O);
 *  - minor, known swap fault (fentry path): a swap-cache hit not of ours
 *    (kernel readahead), still a swap access for the history;
 *  - anything else (an observer without the filter): not a swap access.
 * Which targets are watched, and their comings and goings: targets.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent.h"
#include "clock.h"
#include "hooks.h"
#include "latency.h"
#include "leap/decide.h"
#include "swapra.h"
#include "swapslot.h"
#include "targets.h"

/* What /proc/swaps says of zram and pmem (struct leap_cost_swap). */
static struct leap_cost_swap read_swaps(void)
{
	struct leap_cost_swap sw = {.sync_pct = -1};
	char buf[8192];
	FILE *f = fopen("/proc/swaps", "re");
	size_t n;

	if (!f)
		return sw;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	sw.sync_pct = swapslot_sync_share(buf);
	sw.top_sync = swapslot_top_sync(buf);
	return sw;
}

/*
 * The most pages one swap readahead of the kernel brings in (swapra.h):
 * 1 << vm.page-cluster, at most 32 for VMA-based readahead
 * (mm/swap_state.c swap_vma_ra_win()), 0 when it is off.  Global, and the
 * kind changes as rotational swap areas come and go: probed every tick.
 * Past 1024 pages (page-cluster > 10) the engine counts it as none.  An
 * area on zram has no readahead at all, but there the target stands down.
 */
static uint32_t kernel_ra_pages(void)
{
	struct swapra ra;

	swapra_probe(&ra);
	return ra.max_pages <= 1024 ? ra.max_pages : 0;
}

int agent_init(struct agent *a, const struct agent_config *cfg)
{
	const char *why = NULL;
	int rc;

	memset(a, 0, sizeof(*a));
	a->config = *cfg;
	rc = leap_table_init(&a->streams, cfg->streams, LEAP_HSIZE_MAX);
	if (rc)
		return rc;
	prefetch_init(&a->pf, -1, true);
	/* Without the table (no memory) windows go out as before. */
	if (leap_recent_init(&a->recent, LEAP_RECENT_BITS) == 0)
		a->pf.recent = &a->recent;
	a->prefetch_ok = prefetch_probe_willneed(&why);
	a->cold_ok = true; /* until the kernel refuses it */
	a->prefetch_why = why;
	a->next_slot = 1; /* slot 0 collects pid targets */
	a->ra_pages = kernel_ra_pages();
	a->swap = read_swaps();
	leap_cost_params_default(&a->cost_params);
	return 0;
}

void agent_attach_observer(struct agent *a, struct leap_observer *obs)
{
	a->obs = obs;
	a->pf.prefetched_fd = leap_observer_map_fd(obs, "prefetched");
	a->pf.record_fd = leap_observer_map_fd(obs, "record");
	a->pf.issued = leap_observer_issued(obs);
	a->pf.regions = leap_observer_pf_regions(obs);
	leaves_init(&a->leaves, leap_observer_map_fd(obs, "leaves"),
		    leap_observer_map_fd(obs, "match"));
}

static void window_done(void *ctx, const struct window_job *j, int rc, uint64_t cpu_ns);
static void say_overflow(struct agent *a);
static void cold_refused_now(struct agent *a, int rc);

int agent_start_issuer(struct agent *a, unsigned workers)
{
	struct issuer_config cfg = {.workers = workers,
				    .host_rate = a->config.prefetch_rate,
				    .queue_depth = a->config.queue_depth,
				    .like = &a->pf,
				    .done = window_done,
				    .ctx = a};

	if (workers == 0 || a->be)
		return 0;
	pthread_mutex_init(&a->done_lock, NULL);
	a->iss = issuer_start(&cfg);
	if (!a->iss)
		return -errno;
	for (int i = 0; i < a->ntargets; i++)
		issuer_set_rate(a->iss, a->targets[i].slot,
				a->targets[i].policy.prefetch_rate);
	return 0;
}

void agent_stop_issuer(struct agent *a)
{
	if (!a->iss)
		return;
	agent_refresh(a); /* the workers' counters, for the summary */
	say_overflow(a);  /* since the last tick */
	issuer_stop(a->iss);
	a->iss = NULL;
	pthread_mutex_destroy(&a->done_lock);
}

void agent_refresh(struct agent *a)
{
	struct prefetch_stats w;
	struct pagemap_reader m;

	a->pf_sum = a->pf.stats;
	a->pm_sum = a->pf.pagemap;
	if (!a->iss)
		return;
	issuer_counters(a->iss, &a->issued, &w, &m);
	prefetch_stats_add(&a->pf_sum, &w);
	a->pm_sum.scans += m.scans;
	a->pm_sum.reads += m.reads;
}

void agent_fini(struct agent *a)
{
	agent_stop_issuer(a);
	leaves_fini(&a->leaves);
	prefetch_close(&a->pf);
	leap_recent_free(&a->recent);
	leap_table_free(&a->streams);
}

static void add_stat(struct agent *a, uint32_t slot, int which, uint64_t n)
{
	struct leap_cg_stats *s = leap_observer_stats(a->obs, slot);

	if (!s)
		return;
	/* BPF adds to the other fields of the same slot concurrently. */
	if (which == 0)
		__atomic_fetch_add(&s->prefetches, n, __ATOMIC_RELAXED);
	else
		__atomic_fetch_add(&s->prefetch_hits, n, __ATOMIC_RELAXED);
}

/*
 * What the workers learnt since (window_done()): processes gone, the
 * kernel refusing WILLNEED, and what t's windows cost (t may be NULL).
 */
static void agent_drain(struct agent *a, struct agent_target *t)
{
	uint32_t gone[64];
	unsigned ngone;
	uint64_t pages = 0, ns = 0;
	int cold_refused;
	bool refused;

	if (!a->iss)
		return;
	pthread_mutex_lock(&a->done_lock);
	ngone = a->ngone;
	memcpy(gone, a->gone, ngone * sizeof(*gone));
	a->ngone = 0;
	refused = a->refused;
	a->refused = false;
	cold_refused = a->cold_refused;
	a->cold_refused = 0;
	if (t) {
		pages = a->spent_pages[t->slot];
		ns = a->spent_ns[t->slot];
		a->spent_pages[t->slot] = a->spent_ns[t->slot] = 0;
	}
	pthread_mutex_unlock(&a->done_lock);
	for (unsigned i = 0; i < ngone; i++)
		target_forget_process(a, gone[i]);
	if (cold_refused && a->cold_ok)
		cold_refused_now(a, cold_refused);
	if (refused && a->prefetch_ok) {
		fprintf(stderr,
			"leap-agent: kernel refused process_madvise(MADV_WILLNEED); "
			"observing only from now on\n");
		a->prefetch_ok = false;
		a->prefetch_why = "refused at run time";
	}
	if (pages)
		leap_cost_spent(&t->cost, (uint32_t)pages, ns);
}

/*
 * A worker issued a window (issuer.h), in the worker's thread: the counts
 * that BPF shares are atomic, the rest is handed to the event thread
 * under done_lock (agent_drain()).
 */
static void window_done(void *ctx, const struct window_job *j, int rc, uint64_t cpu_ns)
{
	struct agent *a = ctx;

	if (j->cold) {
		if (rc == -EINVAL || rc == -ENOSYS || rc == -EPERM) {
			pthread_mutex_lock(&a->done_lock);
			a->cold_refused = rc;
			pthread_mutex_unlock(&a->done_lock);
		}
		return;
	}
	if (rc > 0) {
		__atomic_add_fetch(&a->c.prefetched, (uint64_t)rc, __ATOMIC_RELAXED);
		add_stat(a, j->slot, 0, (uint64_t)rc);
	}
	pthread_mutex_lock(&a->done_lock);
	if (rc > 0) {
		agent_record_latency(a, j->slot, j->fault_ns);
		agent_record_dispatch(a, j->event_ns, j->dispatch_ns);
		a->spent_pages[j->slot] += (uint64_t)rc;
		a->spent_ns[j->slot] += cpu_ns;
	} else if (rc == -ESRCH) {
		if (a->ngone < sizeof(a->gone) / sizeof(a->gone[0]))
			a->gone[a->ngone++] = j->tgid;
	} else if (rc == -EINVAL || rc == -ENOSYS) {
		a->refused = true;
	}
	pthread_mutex_unlock(&a->done_lock);
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
	uint64_t ent[LEAP_PW_LIMIT], slots[LEAP_PW_LIMIT];
	uint32_t k = 0, no_off = 0;
	int m, rc, issued = 0;
	/* Before prefetch_swap_entries() sorts them. */
	bool descending = n > 1 && pages[0] > pages[n - 1];

	m = prefetch_swap_entries(&a->pf, tgid, pages, n, ent);
	if (m <= 0)
		return m;
	for (int i = 0; i < m; i++) {
		uint32_t type;
		uint64_t off;

		if (!swapslot_decode(ent[i], &type, &off) || off == 0) {
			no_off++;
			continue;
		}
		backend_note(a->be, tgid, pages[i], type, off);
		if ((int)type != a->be->swap_type) {
			a->be->st.other_device++;
			continue;
		}
		pages[k] = pages[i];
		slots[k++] = off;
	}
	a->be->st.no_offset += no_off;
	if (no_off && !a->be_warned_no_offset) {
		/* Never predict on zeros (design.md section 6). */
		a->be_warned_no_offset = true;
		fprintf(stderr,
			"leap-agent: pid %u: pagemap shows swapped pages without their "
			"swap "
			"slots (opened without CAP_SYS_ADMIN?); nothing pushed for "
			"them\n",
			tgid);
	}
	if (k == 0)
		return 0;
	if (!a->be_swapcache) {
		prefetch_record(&a->pf, tgid, pages, k, marker);
	} else {
		uint32_t kept;

		issued = prefetch_advise(&a->pf, tgid, pages, k, descending, marker);
		/* Runs of slots reach leap-swapd as the kernel's own multi-page
		 * reads: only the scattered rest is worth a push. */
		kept = swapslot_drop_runs(slots, k, BACKEND_MERGED_RUN);
		a->be->st.left_to_kernel += k - kept;
		k = kept;
		if (k == 0)
			return issued;
	}
	/* Into the swap cache the window is issued already: do not wait for
	 * leap-swapd's count (docs/backend.md, "asynchronous push"). */
	rc = a->be_swapcache ? backend_prefetch_async(a->be, slots, k)
			     : backend_prefetch(a->be, slots, k);
	if (rc < 0 && a->be->fd < 0)
		fprintf(stderr,
			"leap-agent: leap-swapd control socket %s: %s; backend "
			"prefetching stopped, observing only\n",
			a->be->path, strerror(-rc));
	else if (rc < 0)
		fprintf(stderr, "leap-agent: leap-swapd refused a prefetch batch (%s)\n",
			strerror(-rc));
	/* What process_madvise issued stands whatever leap-swapd said. */
	return a->be_swapcache ? issued : rc;
}

/*
 * The one fact the decision reads (leap_decide()): whether the pages
 * between two misses are mapped, from /proc/PID/pagemap.
 */
struct gap_query {
	struct agent *a;
	uint32_t tgid;
};

static bool gap_mapped(void *ctx, uint64_t first, uint32_t n)
{
	struct gap_query *q = ctx;

	return prefetch_count_mapped(&q->a->pf, q->tgid, first, n) == n;
}

/*
 * A miss of a fill: a write fault (a read-modify-write stream), or one
 * whose swap-in found only zero-filled entries (a fill that reads each
 * page first: Perl's vec()).  A read miss that also read the device is
 * not one: SWPIN_ZERO comes for any page of the kernel's readahead around
 * the miss, and CPython's scan meets a page its fill left zero every 256
 * pages ((i * 7 + 1) & 0xff), each of which had made the whole stretch of
 * scan behind it cold (kernel-ra.t: 49,154-64,535 cold pages with the
 * scan left to the kernel, twice the fill's 32,273; a CI run failed on
 * the backward scan with its windows).
 */
static bool fill_miss(const struct leap_event *ev)
{
	if (ev->flags & LEAP_EV_WRITE)
		return true;
	return (ev->flags & (LEAP_EV_SWAPIN_ZERO | LEAP_EV_SWAPIN_IO)) ==
	       LEAP_EV_SWAPIN_ZERO;
}

/*
 * How the decision treats the kernel's readahead and fills, for target t.
 * Which stream the kernel's readahead serves gets no window of ours (held):
 * a write stream does (a read-modify-write fill: every page read back,
 * dirtied and evicted again).  Measured (docs/bench-real.md, "Why leap
 * lost on real programs"): a page the program reaches while our
 * process_madvise still holds its swap slot (claimed by
 * swapcache_prepare(), not yet in the swap cache while its memcg charge
 * reclaims, and with dirty pages to evict memcg v1 reclaim waits for their
 * write-back) costs the faulting thread a jiffy (4 ms at HZ=250) of sleep
 * in __read_swap_cache_async() (mm/swap_state.c, the -EEXIST retry).
 * So does a stream whose misses find zero-filled swap entries: the kernel
 * fills those without I/O (zeromap), so a window hides nothing and only
 * moves the reclaim into our process_madvise.  Perl's fill (vec() reads
 * each page of a zeroed string before writing it) is such a stream and
 * looks like a read stream otherwise: on 6.11+ the read fault maps the
 * page writable, so the write takes no fault.  A read stream's window
 * goes out past the kernel's instead (leap_stream_access_after_ra();
 * CPython's sequential and backward scans 1.3-1.5x in their scan phase,
 * docs/bench-real.md), unless --kernel-readahead defer.  Pushed only
 * (--backend-into cache): no slot of ours to race for, the kernel's
 * readahead reads what we pushed from leap-swapd's cache: never held, but
 * the window still goes past the kernel's reach on the stream's real trend.
 * An agent that cannot prefetch (process_madvise refuses WILLNEED)
 * observes only, as it says: it leaves reclaim alone too (no cold pages).
 */
static void decide_cfg(const struct agent *a, const struct agent_target *t,
		       struct leap_decide_cfg *cfg)
{
	*cfg = (struct leap_decide_cfg){
		.ra_pages = a->ra_pages,
		.follow_kernel_ra = t->policy.params.flavor == LEAP_FLAVOR_OURS &&
				    t->policy.mode == AGENT_MODE_LEAP,
		.hold_all = a->hold_all_kernel_ra,
		.hold_none = agent_pushes_only(a),
		/* Not in backend mode, whose windows come from leap-swapd's
		 * cache in tens of us: late by that little, a lead only left
		 * its gap's pages to major faults (backend-agent.t: 472-3,973
		 * against 218-514, 2026-11-26). */
		.lead_on_late = !a->be,
		.cold_behind = a->cold_ok && a->prefetch_ok ? t->policy.cold_behind : 0,
		.cold_chunk = AGENT_COLD_CHUNK,
		.kra_trust = AGENT_KRA_TRUST,
	};
}

/*
 * Misses of a held stream are only recorded: ask the observer not to wake
 * us for the thread's misses (they come with the next batch), and to wake
 * us again at its first miss we would act on.  The map is written when
 * the thread's quiet time is half gone, not per miss.
 */
static void thread_quiet(struct agent *a, const struct leap_event *ev, bool hold)
{
	struct agent_quiet *q = &a->quiet[ev->tid % AGENT_QUIET_SLOTS];
	bool mine = q->tid == ev->tid && q->until > ev->ts_ns;

	if (hold) {
		if (mine && q->until - ev->ts_ns > AGENT_QUIET_NS / 2)
			return;
		if (leap_observer_set_quiet(a->obs, ev->tid, ev->ts_ns + AGENT_QUIET_NS))
			return;
		if (!mine)
			a->c.quiet_sets++;
		q->tid = ev->tid;
		q->until = ev->ts_ns + AGENT_QUIET_NS;
	} else if (mine) {
		leap_observer_set_quiet(a->obs, ev->tid, 0);
		q->until = 0;
		a->c.quiet_lifts++;
	}
}

/* The kernel refused MADV_COLD: said once, and no more cold pages. */
static void cold_refused_now(struct agent *a, int rc)
{
	fprintf(stderr,
		"leap-agent: process_madvise(MADV_COLD) refused (%s); pages "
		"behind fills are left to reclaim from now on\n",
		strerror(-rc));
	a->cold_ok = false;
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
 * sort at 25% 0.96x -> 0.81x.  The decision (leap_decide()) says which
 * pages; this executes it.
 */
static void make_cold(struct agent *a, const struct agent_target *t, uint32_t tgid,
		      uint64_t first, uint32_t n)
{
	int rc;

	if (a->iss) {
		/* A worker's job, queued behind the target's windows: the
		 * event thread makes no madvise call of its own. */
		struct window_job *j = job_begin(t, tgid, n);

		j->cold = true;
		j->pages[0] = first;
		issuer_submit(a->iss, j);
		return;
	}
	rc = prefetch_cold(&a->pf, tgid, first, n);
	if (rc == -EINVAL || rc == -ENOSYS || rc == -EPERM)
		cold_refused_now(a, rc);
}

/*
 * Cost-aware prefetching (include/leap/cost.h): a target whose verdict
 * changed gets its new flags in BPF (LEAP_TGT_STANDBY: its faults are
 * followed no further), and the change is said once.
 */
static void cost_apply(struct agent *a, struct agent_target *t)
{
	bool standby = t->cost.state == LEAP_COST_STANDBY;

	if (standby)
		a->c.stand_downs++;
	else
		a->c.probes++;
	target_push(a, t, NULL, 0);
	a->state_dirty = true;
	hooks_follow_targets(a); /* off, when nobody is left to follow */
	if (standby)
		fprintf(stderr,
			"leap-agent: %s %s: standing down (%s); probing again in %llu "
			"s\n",
			t->kind == TARGET_CGROUP ? "cgroup" : "pid", t->path, t->cost.why,
			(unsigned long long)(t->cost.interval_ns / 1000000000ULL));
	else if (a->verbose)
		fprintf(stderr, "leap-agent: %s %s: probing whether prefetching pays\n",
			t->kind == TARGET_CGROUP ? "cgroup" : "pid", t->path);
}

/* An event's sample: a device page-in not of ours, or a hit. */
static void cost_sample(struct agent *a, struct agent_target *t,
			const struct leap_event *ev, bool hit)
{
	/*
	 * A miss is a device page-in.  On zram or pmem a zero-filled one
	 * (no device read) counts too: every page-in there is CPU work, and
	 * the hooks may come on after a fill's few device reads (the three
	 * that arm them go unseen) to see only its zero-filled misses and
	 * hits of windows over them, which alone never made a verdict (a
	 * strided scan on zram prefetched 29,000-31,000 pages before it
	 * stood down in 3 of 11 runs of tests/sys/cost.t).
	 */
	bool device;

	if (!target_cost_aware(t) || !ev->latency_ns)
		return;
	device = (ev->flags & LEAP_EV_SWAPIN_IO) ||
		 (a->swap.sync_pct >= LEAP_COST_SYNC_PCT &&
		  (ev->flags & LEAP_EV_SWAPIN_ZERO));
	if ((ev->flags & LEAP_EV_MAJOR) && device && !(ev->flags & LEAP_EV_PREFETCHED))
		leap_cost_miss(&t->cost, ev->latency_ns, ev->flags & LEAP_EV_SLEPT,
			       !fill_miss(ev));
	else if (hit && !(ev->flags & LEAP_EV_MAJOR))
		leap_cost_hit(&t->cost, ev->latency_ns);
	else
		return;
	if (leap_cost_update(&t->cost, &a->cost_params, ev->ts_ns, &a->swap))
		cost_apply(a, t);
}

/*
 * A window decided: to a worker (issuer.h), which issues it and reports
 * back through window_done(); or, in backend mode and with --workers 0,
 * issued here and now.
 */
static void issue_window(struct agent *a, struct agent_target *t, struct leap_stream *s,
			 const struct leap_event *ev, uint64_t *cands, uint32_t n)
{
	uint64_t marker = s->ra_armed ? s->ra_marker : UINT64_MAX;
	uint64_t spent = a->pf.stats.willneed.cpu_ns;
	int rc;

	if (a->iss) {
		struct window_job *j = job_begin(t, ev->tgid, n);

		j->marker = marker;
		j->fault_ns = ev->ts_ns;
		j->event_ns = ev->ts_ns + ev->latency_ns;
		j->progress = &s->hist.last_page;
		j->progress_tgid = &s->key.tgid;
		memcpy(j->pages, cands, n * sizeof(*cands));
		issuer_submit(a->iss, j);
		return;
	}
	a->pf.dispatch_ns = 0;
	if (a->be)
		rc = backend_push(a, ev->tgid, cands, n, marker);
	else
		rc = prefetch_pages(&a->pf, ev->tgid, cands, n, marker);
	if (rc > 0) {
		leap_cost_spent(&t->cost, (uint32_t)rc,
				a->pf.stats.willneed.cpu_ns - spent);
		a->c.prefetched += (uint64_t)rc;
		add_stat(a, t->slot, 0, (uint64_t)rc);
		agent_record_latency(a, t->slot, ev->ts_ns);
		agent_record_dispatch(a, ev->ts_ns + ev->latency_ns, a->pf.dispatch_ns);
	} else if (rc == -ESRCH) {
		target_forget_process(a, ev->tgid);
	} else if (rc == -EINVAL || rc == -ENOSYS) {
		fprintf(stderr,
			"leap-agent: kernel refused process_madvise(MADV_WILLNEED) (%s); "
			"observing only from now on\n",
			strerror(-rc));
		a->prefetch_ok = false;
		a->prefetch_why = "refused at run time";
	} else if ((rc == -EPERM || rc == -EACCES) && a->pf.stats.denied == 1) {
		fprintf(stderr, "leap-agent: not permitted to prefetch for pid %u (%s)\n",
			ev->tgid, strerror(-rc));
	}
}

int agent_on_event(void *ctx, const struct leap_event *ev)
{
	struct agent *a = ctx;
	uint64_t cands[LEAP_PW_LIMIT];
	struct agent_target *t;
	struct leap_stream *s;
	struct leap_stream_key_t key;
	struct leap_decide_cfg cfg;
	struct leap_fault f;
	struct leap_plan plan;
	struct gap_query gq;
	uint64_t page = ev->addr >> LEAP_PAGE_SHIFT;
	bool ours, hit;

	if (ev->flags & LEAP_EV_ARM) {
		hooks_arm(a, ev);
		return 0;
	}
	a->c.events++;
	t = target_of_event(a, ev);
	agent_drain(a, t);
	if (!t || t->policy.mode == AGENT_MODE_OFF)
		return 0;
	hooks_note_event(a, ev);
	if (a->be && (ev->flags & LEAP_EV_DEV_MULTI))
		a->c.ambiguous++; /* several device reads in one fault */
	if (a->be && (ev->flags & LEAP_EV_DEV_READ) && !(ev->flags & LEAP_EV_DEV_MULTI) &&
	    backend_confirm(a->be, ev->tgid, page, ev->swap_offset))
		fprintf(stderr,
			"leap-agent: %s is swap type %d, not its /proc/swaps position "
			"(a lower area was swapped off): pushing that type's slots\n",
			a->be->dev, a->be->swap_type);
	ours = ev->flags & LEAP_EV_PREFETCHED;
	if ((ev->flags & LEAP_EV_MAJOR) && ours && agent_pushes_only(a)) {
		/* Pushed only: the read of a page we pushed is the hit (served
		 * by leap-swapd's cache, or waiting for its fetch). */
		hit = true;
		a->c.hits++;
		add_stat(a, t->slot, 1, 1);
	} else if (ev->flags & LEAP_EV_MAJOR) {
		hit = false;
		a->c.late += ours;
	} else if (ours) {
		hit = true;
		/* Pushed only: a minor fault means the kernel's readahead read the
		 * page (from leap-swapd's cache); it drives the window, but the
		 * stats count as hits only faults whose own read we served, so
		 * coverage stays hits / major faults. */
		if (!agent_pushes_only(a)) {
			a->c.hits++;
			add_stat(a, t->slot, 1, 1);
		}
	} else if (ev->flags & LEAP_EV_SWAP) {
		hit = false;
	} else {
		a->c.ignored++;
		return 0;
	}
	a->c.swap_faults++;
	a->c.zero_misses += !hit && (ev->flags & LEAP_EV_SWAPIN_ZERO);
	cost_sample(a, t, ev, hit);
	key = leap_key_make(t->policy.params.key, ev->cgroup_id, ev->tgid, ev->tid);
	s = leap_table_get(&a->streams, &key, t->policy.params.hsize, ev->ts_ns);

	/* Decide (leap_decide(): no I/O but the gap question it asks) ... */
	decide_cfg(a, t, &cfg);
	f = (struct leap_fault){.page = page,
				.hit = hit,
				.late = (ev->flags & LEAP_EV_MAJOR) && ours,
				.wasted = ev->flags & LEAP_EV_WASTED,
				.fill = fill_miss(ev)};
	/* Asked only where the answer can change the plan: a read miss of a
	 * stream that may be held (the mappings are cached, vmas.h). */
	f.shmem = !hit && !f.fill && cfg.follow_kernel_ra && !cfg.hold_all &&
		  !cfg.hold_none && prefetch_in_shmem(&a->pf, ev->tgid, page);
	gq = (struct gap_query){.a = a, .tgid = ev->tgid};
	leap_decide(s, &t->policy.params, &cfg, &f, gap_mapped, &gq, cands, LEAP_PW_LIMIT,
		    &plan);

	/* ... then execute: quiet a held stream's thread, make what a fill
	 * went past cold, and hand the window to the workers. */
	if (plan.kra_checked)
		thread_quiet(a, ev, plan.hold);
	if (plan.cold_n)
		make_cold(a, t, ev->tgid, plan.cold_first, plan.cold_n);
	if (plan.n == 0 || t->policy.mode != AGENT_MODE_LEAP)
		return 0;
	if (a->be ? a->be->fd < 0 || (a->be_swapcache && !a->prefetch_ok)
		  : !a->prefetch_ok)
		return 0;
	if (plan.hold) {
		a->c.held_kernel_ra += plan.n;
		return 0;
	}
	a->c.lookaheads += plan.dec.lookahead;
	a->c.nested_strides += plan.dec.periodic;
	a->c.beyond_kernel_ra += plan.ra_gap != 0;
	issue_window(a, t, s, ev, cands, plan.n);
	return 0;
}

/*
 * A target whose window queue overflowed is told about once: the workers
 * fall behind its windows and drop the oldest (issuer.h).  The counter
 * windows_overflow keeps the count.
 */
static void say_overflow(struct agent *a)
{
	struct prefetch_stats pf;
	struct pagemap_reader pm;
	struct issuer_counters c;

	if (!a->iss)
		return;
	issuer_counters(a->iss, &c, &pf, &pm);
	if (!c.overflow)
		return;
	for (int i = 0; i < a->ntargets; i++) {
		struct agent_target *t = &a->targets[i];
		uint64_t n = t->slot < LEAP_STATS_SLOTS ? c.overflow_slot[t->slot] : 0;

		if (!n || t->overflow_said)
			continue;
		t->overflow_said = true;
		fprintf(stderr,
			"leap-agent: %s %s: the prefetch workers fall behind its "
			"windows; "
			"%llu dropped from its full queue, oldest first (counter "
			"windows_overflow; more workers or a deeper queue_depth help)\n",
			t->kind == TARGET_CGROUP ? "cgroup" : "pid", t->path,
			(unsigned long long)n);
	}
}

void agent_tick(struct agent *a, uint64_t now_ns)
{
	agent_drain(a, NULL);
	say_overflow(a);
	a->swap = read_swaps();
	for (int i = 0; i < a->ntargets; i++) {
		struct agent_target *t = &a->targets[i];

		/* A probe comes due; or a sample the swap devices just read
		 * decide (one page-in on zram): the page-ins it holds may be
		 * the last the hooks saw before they came off (a fill's first
		 * reads, its zero-filled rest unseen), and the swap in use is
		 * known only once something swapped out. */
		if (leap_cost_update(&t->cost, &a->cost_params, now_ns, &a->swap))
			cost_apply(a, t);
	}
	/* The idle disarm is the event loop's, at every wake-up
	 * (hooks_disarm_if_idle()). */
	hooks_follow_targets(a);
	a->ra_pages = kernel_ra_pages();
	targets_tick(a);
	leap_table_expire(&a->streams, now_ns,
			  (uint64_t)a->config.idle_timeout_s * 1000000000ULL);
}

void agent_totals(const struct agent *a, struct leap_cg_stats *sum)
{
	leap_observer_stats_sum(a->obs, sum);
}

const char *agent_prefetch_via(const struct agent *a)
{
	if (a->be && a->be->fd < 0)
		return "off (leap-swapd link lost)";
	if (a->be)
		return a->be_swapcache ? "leap-swapd+swapcache" : "leap-swapd";
	return a->prefetch_ok ? "process_madvise" : "off";
}
