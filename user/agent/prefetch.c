// SPDX-License-Identifier: MIT
/*
 * process_madvise(2): "MADV_WILLNEED ... since Linux 5.15"; it needs
 * PTRACE_MODE_READ on the target and CAP_SYS_NICE, takes at most IOV_MAX
 * iovecs and stops at the first failing one, returning the bytes advised so
 * far (mm/madvise.c vector_madvise).  We therefore merge pages into ranges,
 * and when a range fails (typically ENOMEM: not mapped any more) we skip
 * exactly that range and go on with the rest.
 *
 * Before asking, /proc/PID/pagemap tells which candidates are really swapped
 * out (pagemap.c): resident or never-touched pages would be no-ops for the
 * kernel but would count as prefetched and, later, as false hits.
 *
 * Hits are detected in BPF: the pages we are about to advise go into the
 * leap_prefetched map first (so a fault racing with process_madvise is
 * still seen as ours), and ranges the kernel then refuses are taken out.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "leap/recent.h"
#include "leap_event.h"
#include "pagemap.h"
#include "prefetch.h"

#define PAGE_SHIFT 12

/* One window fits one leap_record run. */
_Static_assert(LEAP_PREFETCH_MAX_PAGES <= LEAP_RECORD_MAX,
	       "window larger than leap_record");
#ifndef IOV_MAX
#define IOV_MAX 1024
#endif

static ssize_t sys_process_madvise(int pidfd, const struct iovec *iov, size_t n,
				   int advice)
{
	return syscall(SYS_process_madvise, pidfd, iov, n, advice, 0);
}

/* process_madvise, counted in t with its CPU and wall time. */
static ssize_t timed_madvise(int pidfd, const struct iovec *iov, size_t n, int advice,
			     struct madvise_time *t)
{
	uint64_t cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID),
		 wall0 = clock_ns(CLOCK_MONOTONIC);
	ssize_t done = sys_process_madvise(pidfd, iov, n, advice);
	int e = errno;

	t->wall_ns += clock_ns(CLOCK_MONOTONIC) - wall0;
	t->cpu_ns += clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
	t->calls++;
	errno = e;
	return done;
}

void prefetch_init(struct prefetcher *p, struct procs *procs)
{
	memset(p, 0, sizeof(*p));
	p->procs = procs;
}

static void madvise_time_add(struct madvise_time *to, const struct madvise_time *t)
{
	to->calls += t->calls;
	to->cpu_ns += t->cpu_ns;
	to->wall_ns += t->wall_ns;
}

void prefetch_stats_add(struct prefetch_stats *to, const struct prefetch_stats *s)
{
	to->requested += s->requested;
	to->not_swapped += s->not_swapped;
	to->issued += s->issued;
	to->holes += s->holes;
	to->gone += s->gone;
	to->denied += s->denied;
	to->map_errors += s->map_errors;
	to->record_calls += s->record_calls;
	to->cold_pages += s->cold_pages;
	to->shmem_windows += s->shmem_windows;
	to->reissues_skipped += s->reissues_skipped;
	madvise_time_add(&to->willneed, &s->willneed);
	madvise_time_add(&to->cold, &s->cold);
}

/* The process's entry, held (procs.h); NULL with *err, a gone one counted. */
static struct proc_entry *proc_or_gone(struct prefetcher *p, uint32_t tgid, int *err)
{
	struct proc_entry *e = procs_get(p->procs, tgid, err);

	if (!e && *err == -ESRCH)
		p->stats.gone++;
	return e;
}

/* The kernel says the process is gone: counted, and forgotten by all. */
static void proc_gone(struct prefetcher *p, uint32_t tgid)
{
	p->stats.gone++;
	procs_forget(p->procs, tgid);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Issues iov[0..n) in IOV_MAX batches, skipping ranges that fail.  On return
 * the ranges not advised have iov_len 0, so the caller records only what
 * the kernel accepted.
 */
static int advise_all(struct prefetcher *p, int pidfd, struct iovec *iov, size_t n,
		      uint64_t *issued)
{
	size_t at = 0;

	while (at < n) {
		size_t batch = n - at < IOV_MAX ? n - at : IOV_MAX;
		ssize_t done = timed_madvise(pidfd, iov + at, batch, MADV_WILLNEED,
					     &p->stats.willneed);

		if (done < 0) {
			int e = errno;

			if (e == ESRCH || e == EPERM || e == EACCES || e == ENOSYS ||
			    e == EINVAL || e == EBADF) {
				for (size_t i = at; i < n; i++)
					iov[i].iov_len = 0;
				return -e;
			}
			if (e == EINTR || e == EAGAIN)
				continue;
			/* ENOMEM/EFAULT/EIO: the first range is bad: skip it. */
			p->stats.holes += iov[at].iov_len >> PAGE_SHIFT;
			iov[at].iov_len = 0; /* not issued: excluded from the set */
			at++;
			continue;
		}
		/* Whole ranges advised; a partial one stops the kernel there. */
		while (batch && (size_t)done >= iov[at].iov_len && iov[at].iov_len) {
			done -= (ssize_t)iov[at].iov_len;
			*issued += iov[at].iov_len >> PAGE_SHIFT;
			at++;
			batch--;
		}
		if (batch && at < n) {
			/* Stopped inside or at iov[at]: that range failed. */
			p->stats.holes += iov[at].iov_len >> PAGE_SHIFT;
			iov[at].iov_len = 0;
			at++;
		}
	}
	return 0;
}

/*
 * The BPF side looks a fault up in leap_prefetched only where a window was
 * recorded (include/leap_event.h, leap_pf_region()): the buckets of these
 * pages are set first, so a fault that finds a page recorded also finds
 * its bucket set (the record is a bpf() call, a full barrier).  A window
 * covers few regions: a store per page, skipped while the region repeats.
 */
static void mark_regions(struct prefetcher *p, uint32_t tgid, const uint64_t *pages,
			 uint32_t n)
{
	uint64_t last = UINT64_MAX;

	if (!p->regions)
		return;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t region = pages[i] >> LEAP_PF_REGION_SHIFT;

		if (region == last)
			continue;
		last = region;
		__atomic_store_n(&p->regions[leap_pf_region(tgid, pages[i])], 1,
				 __ATOMIC_RELAXED);
	}
}

/*
 * Adds pages[0..n) of tgid to the BPF prefetched-page map, tagged with
 * their window (LEAP_PF_WINDOW_SHIFT; 0: never issued), through the
 * observer (p->records).
 */
static void record_pages(struct prefetcher *p, uint32_t tgid, const uint64_t *pages,
			 uint32_t n, uint64_t marker, uint32_t window)
{
	bool by_program = false;

	if (n > LEAP_PREFETCH_MAX_PAGES)
		n = LEAP_PREFETCH_MAX_PAGES;
	mark_regions(p, tgid, pages, n);
	if (!p->records || n == 0)
		return;
	p->stats.map_errors += p->records->add(p->records->ctx, tgid, pages, n, marker,
					       window, &by_program);
	p->stats.record_calls += by_program;
}

/*
 * After process_madvise: pages of ranges the kernel refused (iov_len 0 in
 * done[]) come back out of the prefetched-page map (rare, one by one); the
 * accepted ones are in the swap cache, so from now on a major fault on one
 * means it was reclaimed before use.  That is one store for the whole
 * window, into its leap_issued slot (mmapped: no bpf() call).  Marking
 * each page instead cost one bpf() call per prefetched page (1-1.5 us of
 * the agent's CPU per event), and BPF_MAP_UPDATE_BATCH cannot do it: its
 * elem_flags take only BPF_F_LOCK, so it cannot leave out the pages a
 * fault took out meanwhile (BPF_EXIST), and adding those back would count
 * a later fault as ours.
 */
static void settle_pages(struct prefetcher *p, uint32_t tgid, const struct iovec *asked,
			 const struct iovec *done, uint32_t niov, uint64_t issued)
{
	struct leap_issued_slot *slot;

	if (!p->records)
		return;
	for (uint32_t i = 0; i < niov; i++)
		if (!done[i].iov_len)
			p->records->remove(p->records->ctx, tgid,
					   (uintptr_t)asked[i].iov_base >> PAGE_SHIFT,
					   (uint32_t)(asked[i].iov_len >> PAGE_SHIFT));
	if (!issued || !p->issued)
		return;
	/* BPF reads window, then done_ns (pf_issued_before()): the time goes
	 * first, so a slot never shows this window with another's time (an
	 * older window reading the new time in between is judged late, as if
	 * its slot had not been written). */
	slot = &p->issued[p->window % LEAP_ISSUED_WINDOWS];
	__atomic_store_n(&slot->done_ns, clock_ns(CLOCK_MONOTONIC), __ATOMIC_RELEASE);
	__atomic_store_n(&slot->window, p->window, __ATOMIC_RELEASE);
}

/*
 * A new window number for the prefetched-page map: 30 bits, never 0,
 * unique across the prefetchers of the process (the issuer's workers each
 * have one; leap_issued has one slot per number).
 */
static void next_window(struct prefetcher *p)
{
	static uint32_t seq;

	do
		p->window = __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED) &
			    (UINT32_MAX >> LEAP_PF_WINDOW_SHIFT);
	while (p->window == 0);
}

/*
 * A window is nearly always one run along its trend (leap_candidates()),
 * in order one way or the other: one pass finds out, and a descending one
 * is reversed.  qsort (glibc's merge sort) took ~30 us for a window of
 * 1,024 pages in order: 13% of the agent's samples under Node.js's
 * collection (perf, 2026-11-29).
 */
uint32_t prefetch_sort_unique(uint64_t *pages, uint32_t n)
{
	bool up = true, down = true;
	uint32_t m = 0;

	for (uint32_t i = 1; i < n && (up || down); i++) {
		up = up && pages[i - 1] <= pages[i];
		down = down && pages[i - 1] >= pages[i];
	}
	if (!up && down) {
		for (uint32_t i = 0, j = n - 1; i < j; i++, j--) {
			uint64_t t = pages[i];

			pages[i] = pages[j];
			pages[j] = t;
		}
	} else if (!up) {
		qsort(pages, n, sizeof(*pages), cmp_u64);
	}
	for (uint32_t i = 0; i < n; i++)
		if (m == 0 || pages[i] != pages[m - 1])
			pages[m++] = pages[i];
	return m;
}

/*
 * A descending window goes out nearest first: the kernel advises the
 * iovecs in order and each range from its low end (mm/madvise.c
 * madvise_willneed() -> swapin_walk_pmd_entry()), so one range of a
 * backward stream would fetch the page the program needs last first, and
 * the program, catching up, would fault on the slots our walk has not
 * reached yet, racing it for them.
 */
uint32_t prefetch_iovecs(const uint64_t *pages, uint32_t m, bool descending,
			 struct iovec *iov)
{
	uint32_t niov = 0;

	for (uint32_t i = 0; i < m; i++) {
		uint64_t len = niov ? iov[niov - 1].iov_len >> PAGE_SHIFT : 0;

		if (niov && len < (descending ? LEAP_PREFETCH_DESC_CHUNK : UINT32_MAX) &&
		    len + ((uintptr_t)iov[niov - 1].iov_base >> PAGE_SHIFT) == pages[i]) {
			iov[niov - 1].iov_len += 1ULL << PAGE_SHIFT;
			continue;
		}
		iov[niov].iov_base = (void *)(uintptr_t)(pages[i] << PAGE_SHIFT);
		iov[niov].iov_len = 1ULL << PAGE_SHIFT;
		niov++;
	}
	for (uint32_t i = 0; descending && i < niov / 2; i++) {
		struct iovec t = iov[i];

		iov[i] = iov[niov - 1 - i];
		iov[niov - 1 - i] = t;
	}
	return niov;
}

/*
 * Copies into fresh[] the pages of pages[0..m) (m <= LEAP_PREFETCH_MAX_PAGES)
 * not issued a moment ago (p->recent; all of them without one), in order,
 * and counts the rest as skipped; how many it copied.
 */
static uint32_t recent_filter(struct prefetcher *p, uint32_t tgid, const uint64_t *pages,
			      uint32_t m, uint64_t marker, uint64_t *fresh)
{
	uint32_t kept;

	memcpy(fresh, pages, m * sizeof(*pages));
	if (!p->recent)
		return m;
	kept = leap_recent_filter(p->recent, tgid, fresh, m, marker,
				  clock_ns(CLOCK_MONOTONIC), LEAP_RECENT_TTL_NS);
	p->stats.reissues_skipped += m - kept;
	return kept;
}

/*
 * process_madvise for pages[0..m) of pr (sorted, unique), recorded in the
 * prefetched-page map first; descending: the window runs downwards.  Pages
 * issued a moment ago (p->recent) are left out: they are on their way.
 * Pages issued or -errno, as prefetch_pages.
 */
static int advise_pages(struct prefetcher *p, struct proc_entry *pr, uint32_t tgid,
			const uint64_t *pages, uint32_t m, bool descending,
			uint64_t marker)
{
	struct iovec iov[LEAP_PREFETCH_MAX_PAGES], orig_len[LEAP_PREFETCH_MAX_PAGES];
	uint64_t fresh[LEAP_PREFETCH_MAX_PAGES], issued = 0;
	uint32_t niov;
	int rc;

	m = recent_filter(p, tgid, pages, m, marker, fresh);
	if (m == 0)
		return 0;
	pages = fresh;
	niov = prefetch_iovecs(pages, m, descending, iov);
	next_window(p);
	record_pages(p, tgid, pages, m, marker, p->window);
	memcpy(orig_len, iov, niov * sizeof(*iov));
	p->dispatch_ns = clock_ns(CLOCK_MONOTONIC);
	rc = advise_all(p, proc_pidfd(pr), iov, niov, &issued);
	settle_pages(p, tgid, orig_len, iov, niov, issued);
	if (rc == -ESRCH) {
		proc_gone(p, tgid);
	} else if (rc == -EPERM || rc == -EACCES) {
		p->stats.denied++;
	}
	if (rc < 0 && issued == 0)
		return rc;
	p->stats.issued += issued;
	return (int)issued;
}

/*
 * What every request starts with: at most LEAP_PREFETCH_MAX_PAGES pages,
 * counted, the process found (NULL with *err set, a gone one counted),
 * and the pages sorted without repeats (*n updated).
 */
static struct proc_entry *request_begin(struct prefetcher *p, uint32_t tgid,
					uint64_t *pages, uint32_t *n, int *err)
{
	struct proc_entry *pr;

	if (*n > LEAP_PREFETCH_MAX_PAGES)
		*n = LEAP_PREFETCH_MAX_PAGES;
	p->stats.requested += *n;
	pr = proc_or_gone(p, tgid, err);
	if (!pr)
		return NULL;
	*n = prefetch_sort_unique(pages, *n);
	return pr;
}

/*
 * Whether a window starting at page lies in shared memory, whose swapped
 * pages the pagemap shows as none (vmas.h, read by procs.c).
 */
static bool window_in_shmem(struct prefetcher *p, struct proc_entry *pr, uint64_t page)
{
	if (!proc_in_shmem(pr, page))
		return false;
	p->stats.shmem_windows++;
	return true;
}

int prefetch_pages(struct prefetcher *p, uint32_t tgid, uint64_t *pages, uint32_t n,
		   uint64_t marker)
{
	struct proc_entry *pr;
	uint32_t m = n;
	bool descending = n > 1 && pages[0] > pages[n - 1];
	int fd, rc = 0, err = 0;

	p->dispatch_ns = 0;
	if (n == 0)
		return 0;
	pr = request_begin(p, tgid, pages, &m, &err);
	if (!pr)
		return err;
	fd = proc_pagemap_fd(pr);
	if (fd >= 0) {
		uint32_t kept =
			window_in_shmem(p, pr, pages[0])
				? pagemap_keep_absent(&p->pagemap, fd, pages, m)
				: pagemap_keep_swapped(&p->pagemap, fd, pages, m, NULL);

		p->stats.not_swapped += m - kept;
		m = kept;
	}
	if (m)
		rc = advise_pages(p, pr, tgid, pages, m, descending, marker);
	procs_put(p->procs, pr);
	return rc;
}

int prefetch_swap_entries(struct prefetcher *p, uint32_t tgid, uint64_t *pages,
			  uint32_t n, uint64_t *ent)
{
	struct proc_entry *pr;
	uint32_t m = n, kept = 0;
	int fd, err = 0;

	if (n == 0)
		return 0;
	pr = request_begin(p, tgid, pages, &m, &err);
	if (!pr)
		return err;
	fd = proc_pagemap_fd(pr);
	if (fd >= 0) {
		kept = pagemap_keep_swapped(&p->pagemap, fd, pages, m, ent);
		p->stats.not_swapped += m - kept;
	}
	procs_put(p->procs, pr);
	return fd >= 0 ? (int)kept : -EACCES;
}

int prefetch_advise(struct prefetcher *p, uint32_t tgid, const uint64_t *pages,
		    uint32_t m, bool descending, uint64_t marker)
{
	struct proc_entry *pr;
	int rc, err = 0;

	if (m == 0)
		return 0;
	pr = proc_or_gone(p, tgid, &err);
	if (!pr)
		return err;
	rc = advise_pages(p, pr, tgid, pages, m, descending, marker);
	procs_put(p->procs, pr);
	return rc;
}

int prefetch_cold(struct prefetcher *p, uint32_t tgid, uint64_t first, uint32_t n)
{
	struct iovec iov = {.iov_base = (void *)(uintptr_t)(first << PAGE_SHIFT),
			    .iov_len = (size_t)n << PAGE_SHIFT};
	struct proc_entry *pr;
	ssize_t done;
	int err = 0;

	if (n == 0)
		return 0;
	pr = proc_or_gone(p, tgid, &err);
	if (!pr)
		return err;
	done = timed_madvise(proc_pidfd(pr), &iov, 1, MADV_COLD, &p->stats.cold);
	err = done < 0 ? -errno : 0;
	procs_put(p->procs, pr);
	if (done < 0) {
		if (err == -ESRCH)
			proc_gone(p, tgid);
		/* -ENOMEM: part of the range is unmapped (freed meanwhile). */
		return err == -ENOMEM ? 0 : err;
	}
	p->stats.cold_pages += (uint64_t)done >> PAGE_SHIFT;
	return (int)((uint64_t)done >> PAGE_SHIFT);
}

/*
 * Pushed to leap-swapd only: a major fault on one is the hit.  A window
 * restarted over one still in flight pushed its pages again, each counted
 * again among those prefetched: backend-agent.t's accuracy in this mode
 * read 0.85-0.997 (2 of 11 runs under its 0.90 bound, 1 of 11 with the
 * code before), over 35,000 pages pushed for 32,768 (2026-11-29).
 */
uint32_t prefetch_record(struct prefetcher *p, uint32_t tgid, uint64_t *pages,
			 uint64_t *slots, uint32_t m, uint64_t marker)
{
	uint64_t fresh[LEAP_PREFETCH_MAX_PAGES];
	uint32_t kept, j = 0;

	if (m > LEAP_PREFETCH_MAX_PAGES)
		m = LEAP_PREFETCH_MAX_PAGES;
	kept = recent_filter(p, tgid, pages, m, marker, fresh);
	/* fresh[] is pages[] less some, in order: the slots follow. */
	for (uint32_t i = 0; i < m && j < kept; i++) {
		if (pages[i] != fresh[j])
			continue;
		pages[j] = pages[i];
		slots[j++] = slots[i];
	}
	m = kept;
	if (m) {
		record_pages(p, tgid, pages, m, marker, 0);
		p->stats.issued += m;
	}
	return m;
}

static int sys_pidfd_open(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

int prefetch_probe_willneed(const char **why)
{
	/* Advise one page of our own, mapped and resident: only a kernel
	 * without WILLNEED support for process_madvise refuses. */
	static char page[4096] __attribute__((aligned(4096)));
	struct iovec iov = {.iov_base = page, .iov_len = sizeof(page)};
	int fd = sys_pidfd_open(getpid());
	ssize_t rc;

	page[0] = 1;
	if (fd < 0) {
		*why = errno == ENOSYS ? "pidfd_open unsupported (kernel < 5.3)"
				       : "pidfd_open failed";
		return 0;
	}
	rc = sys_process_madvise(fd, &iov, 1, MADV_WILLNEED);
	close(fd);
	if (rc >= 0) {
		*why = "process_madvise(MADV_WILLNEED) supported";
		return 1;
	}
	if (errno == ENOSYS)
		*why = "process_madvise unsupported (kernel < 5.10)";
	else if (errno == EINVAL)
		*why = "process_madvise refuses MADV_WILLNEED (kernel < 5.15)";
	else if (errno == EPERM)
		*why = "process_madvise not permitted (needs CAP_SYS_NICE)";
	else
		*why = strerror(errno);
	return 0;
}
