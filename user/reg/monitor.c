// SPDX-License-Identifier: MIT
/*
 * The unmap monitor: tells the registration cache when memory it registered
 * is unmapped, remapped or discarded, so a new mapping at the same address
 * is never served with the old registration (which still pins the old
 * pages: RDMA through it would read and write memory the process no longer
 * sees).  UCX's rcache and libfabric's MR cache solve the same problem with
 * memory hooks or a userfaultfd monitor; we use userfaultfd because it sees
 * every unmap, including glibc's internal munmap/brk/madvise calls that
 * symbol interposition misses.
 *
 * How (userfaultfd(2), ioctl_userfaultfd(2), Documentation/admin-guide/mm/
 * userfaultfd.rst):
 *  - UFFDIO_API with UFFD_FEATURE_EVENT_UNMAP, _REMOVE and _REMAP: munmap
 *    (and brk shrink, mmap MAP_FIXED over the range), madvise(MADV_DONTNEED/
 *    REMOVE) and mremap of a registered range queue an event;
 *  - ranges are registered in UFFDIO_REGISTER_MODE_WP only, and we never
 *    write-protect a page, so no page fault ever waits for us (MISSING mode
 *    would route every first touch of a zapped page to this thread);
 *  - the kernel makes the unmapping call wait until the event is read
 *    (userfaultfd_event_wait_completion), and this thread reads and records
 *    events under the same lock drain() takes: when munmap returns, its
 *    range is already recorded, so the cache's next lookup (which drains
 *    first) cannot hit the stale region.  The lock is never held across a
 *    call that could unmap memory, so an unmap inside the cache cannot
 *    deadlock against this thread.
 * Needs CAP_SYS_PTRACE (root) or vm.unprivileged_userfaultfd = 1.  With
 * UFFD_FEATURE_WP_ASYNC (6.7+) any mapping can be watched; before it only
 * anonymous, shmem and hugetlbfs memory (a range that cannot be watched,
 * e.g. with a hole in it, is not cached: the cache serves it uncached).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "leap/reg.h"

#define MON_RING 1024

/* Linux 6.7's uapi value; Debian bookworm's headers predate it. */
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC (1 << 15)
#endif

struct leap_reg_monitor {
	int uffd, stopfd;
	pthread_t thread;
	pthread_mutex_t lock;
	/* ranges reported since the last drain; overflow: drain everything */
	uint64_t start[MON_RING], len[MON_RING];
	unsigned n;
	bool overflow;
	uint64_t events;
	uint64_t faults; /* page faults we never expect (WP without protection) */
};

static void record(struct leap_reg_monitor *m, uint64_t start, uint64_t end)
{
	if (end <= start)
		return;
	m->events++;
	if (m->n == MON_RING) {
		m->overflow = true;
		return;
	}
	m->start[m->n] = start;
	m->len[m->n] = end - start;
	m->n++;
}

static void handle(struct leap_reg_monitor *m, const struct uffd_msg *msg)
{
	switch (msg->event) {
	case UFFD_EVENT_UNMAP:
	case UFFD_EVENT_REMOVE:
		record(m, msg->arg.remove.start, msg->arg.remove.end);
		break;
	case UFFD_EVENT_REMAP:
		/* the old range is gone; what lies at the new one was not
		 * registered there */
		record(m, msg->arg.remap.from, msg->arg.remap.from + msg->arg.remap.len);
		break;
	case UFFD_EVENT_PAGEFAULT: {
		/* Cannot happen (nothing is write-protected); if it did, the
		 * faulting thread must not hang: unprotect and wake it. */
		struct uffdio_writeprotect wp = {
			.range = {.start = msg->arg.pagefault.address & ~4095ULL,
				  .len = 4096},
			.mode = 0};

		m->faults++;
		ioctl(m->uffd, UFFDIO_WRITEPROTECT, &wp);
		break;
	}
	default:
		break;
	}
}

static void *monitor_main(void *arg)
{
	struct leap_reg_monitor *m = arg;
	struct pollfd pfd[2] = {{.fd = m->uffd, .events = POLLIN},
				{.fd = m->stopfd, .events = POLLIN}};

	for (;;) {
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[1].revents)
			break;
		if (!(pfd[0].revents & POLLIN))
			continue;
		pthread_mutex_lock(&m->lock);
		for (;;) {
			struct uffd_msg msg[16];
			ssize_t r = read(m->uffd, msg, sizeof(msg));

			if (r <= 0)
				break;
			for (size_t i = 0; i < (size_t)r / sizeof(msg[0]); i++)
				handle(m, &msg[i]);
		}
		pthread_mutex_unlock(&m->lock);
	}
	return NULL;
}

int leap_reg_monitor_start(struct leap_reg_monitor **out)
{
	struct leap_reg_monitor *m = calloc(1, sizeof(*m));
	const uint64_t base_features = UFFD_FEATURE_EVENT_UNMAP |
				       UFFD_FEATURE_EVENT_REMOVE |
				       UFFD_FEATURE_EVENT_REMAP;
	struct uffdio_api api;
	int err;

	if (!m)
		return -ENOMEM;
	m->stopfd = -1;
	/* UFFD_FEATURE_WP_ASYNC (Linux 6.7+) lets WP-mode registration cover
	 * any memory type, file-backed too; older kernels: without it. */
	for (int attempt = 0;; attempt++) {
		m->uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
		if (m->uffd < 0) {
			err = -errno;
			free(m);
			return err;
		}
		api.api = UFFD_API;
		api.features = base_features | (attempt ? 0 : UFFD_FEATURE_WP_ASYNC);
		if (ioctl(m->uffd, UFFDIO_API, &api) == 0)
			break;
		err = -errno;
		close(m->uffd);
		if (attempt || err != -EINVAL) {
			free(m);
			return err;
		}
	}
	m->stopfd = eventfd(0, EFD_CLOEXEC);
	if (m->stopfd < 0) {
		err = -errno;
		goto fail;
	}
	pthread_mutex_init(&m->lock, NULL);
	err = pthread_create(&m->thread, NULL, monitor_main, m);
	if (err) {
		err = -err;
		pthread_mutex_destroy(&m->lock);
		goto fail;
	}
	*out = m;
	return 0;
fail:
	if (m->stopfd >= 0)
		close(m->stopfd);
	close(m->uffd);
	free(m);
	return err;
}

void leap_reg_monitor_stop(struct leap_reg_monitor *m)
{
	uint64_t one = 1;

	if (!m)
		return;
	if (write(m->stopfd, &one, sizeof(one)) != sizeof(one))
		abort(); /* an eventfd write cannot fail here; never leave the thread */
	pthread_join(m->thread, NULL);
	/* Closing the uffd drops every registration it still has. */
	close(m->uffd);
	close(m->stopfd);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

static int mon_watch(void *ctx, uint64_t addr, uint64_t len)
{
	struct leap_reg_monitor *m = ctx;
	struct uffdio_register reg = {.range = {.start = addr, .len = len},
				      .mode = UFFDIO_REGISTER_MODE_WP};

	if (ioctl(m->uffd, UFFDIO_REGISTER, &reg) < 0)
		return -errno;
	return 0;
}

static void mon_unwatch(void *ctx, uint64_t addr, uint64_t len)
{
	struct leap_reg_monitor *m = ctx;
	struct uffdio_range r = {.start = addr, .len = len};

	/* Best effort: the range may be partly unmapped already; a watch left
	 * behind only reports events that invalidate nothing. */
	(void)ioctl(m->uffd, UFFDIO_UNREGISTER, &r);
}

static void mon_drain(void *ctx, void (*fn)(void *arg, uint64_t addr, uint64_t len),
		      void *arg)
{
	struct leap_reg_monitor *m = ctx;
	uint64_t start[MON_RING], len[MON_RING];
	unsigned n;
	bool overflow;

	/* Copy out under the lock, call back without it: fn deregisters, and
	 * deregistration may free memory. */
	pthread_mutex_lock(&m->lock);
	n = m->n;
	overflow = m->overflow;
	memcpy(start, m->start, n * sizeof(start[0]));
	memcpy(len, m->len, n * sizeof(len[0]));
	m->n = 0;
	m->overflow = false;
	pthread_mutex_unlock(&m->lock);
	if (overflow) {
		fn(arg, 0, UINT64_MAX);
		return;
	}
	for (unsigned i = 0; i < n; i++)
		fn(arg, start[i], len[i]);
}

void leap_reg_monitor_hooks(struct leap_reg_monitor *m, struct leap_reg_watch *w)
{
	w->watch = mon_watch;
	w->unwatch = mon_unwatch;
	w->drain = mon_drain;
	w->ctx = m;
}

uint64_t leap_reg_monitor_events(struct leap_reg_monitor *m)
{
	uint64_t n;

	pthread_mutex_lock(&m->lock);
	n = m->events;
	pthread_mutex_unlock(&m->lock);
	return n;
}
