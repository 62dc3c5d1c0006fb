// SPDX-License-Identifier: MIT
/*
 * The reader's side of leap_reader_busy (bpf/leap_observer.bpf.c): while
 * the agent is awake, a major fault's event needs no wake-up, and each one
 * it is spared saves the faulting thread a self-IPI.
 *
 * The protocol is a store-buffering pair.  Before it sleeps, the reader
 * clears busy (a sequentially consistent store: xchg on x86), then loads
 * the ring's producer position and sleeps only if it equals the consumer
 * position.  The BPF program reserves its record (advancing the producer
 * position), makes a locked add, then loads busy.  At least one of the two
 * loads sees the other side's store: either BPF sees busy clear and wakes
 * the reader, or the reader sees the record and reads it instead of
 * sleeping.  A record it sees reserved but not yet submitted (its busy
 * bit, which ring_buffer__consume() stops at) is read on the next call:
 * the caller polls again at once.
 *
 * The positions are read from a read-only mapping of the ring's first two
 * pages (the consumer's page, then the producer's: kernel/bpf/ringbuf.c,
 * ringbuf_map_mmap_kern()), because libbpf 1.1 has no accessor for them.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "observer_ring.h"

struct leap_ring_wait {
	struct ring_buffer *rb;
	volatile __u32 *busy;
	void *pos; /* the consumer's page, then the producer's */
	size_t page;
	bool unfinished; /* the last call left a reserved record behind */
};

struct leap_ring_wait *leap_ring_wait_open(struct ring_buffer *rb, int map_fd,
					   volatile __u32 *busy)
{
	struct leap_ring_wait *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->rb = rb;
	w->busy = busy;
	w->page = (size_t)sysconf(_SC_PAGESIZE);
	w->pos = mmap(NULL, 2 * w->page, PROT_READ, MAP_SHARED, map_fd, 0);
	if (w->pos == MAP_FAILED) {
		int err = errno;

		free(w);
		errno = err;
		return NULL;
	}
	return w;
}

void leap_ring_wait_close(struct leap_ring_wait *w)
{
	if (!w)
		return;
	/* Wake-ups again for whoever reads the ring next. */
	__atomic_store_n(w->busy, 0, __ATOMIC_SEQ_CST);
	munmap(w->pos, 2 * w->page);
	free(w);
}

static bool ring_empty(const struct leap_ring_wait *w)
{
	const __u64 *cons = w->pos;
	const __u64 *prod = (const __u64 *)((const char *)w->pos + w->page);

	return __atomic_load_n(prod, __ATOMIC_ACQUIRE) ==
	       __atomic_load_n(cons, __ATOMIC_ACQUIRE);
}

int leap_ring_wait_poll(struct leap_ring_wait *w, int timeout_ms)
{
	int n;

	__atomic_store_n(w->busy, 0, __ATOMIC_SEQ_CST);
	if (ring_empty(w)) {
		struct epoll_event ev;

		if (epoll_wait(ring_buffer__epoll_fd(w->rb), &ev, 1, timeout_ms) < 0)
			return -errno;
	} else if (w->unfinished) {
		/* Its producer is between reserve and submit: let it run. */
		sched_yield();
	}
	__atomic_store_n(w->busy, 1, __ATOMIC_RELAXED);
	n = ring_buffer__consume(w->rb);
	w->unfinished = n == 0 && !ring_empty(w);
	return n;
}
