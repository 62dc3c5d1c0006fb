/* SPDX-License-Identifier: MIT */
/*
 * Waiting on the event ring without asking BPF for a wake-up the reader
 * does not need (observer_ring.c).  Internal to the observer module.
 */
#ifndef LEAP_OBSERVER_RING_H
#define LEAP_OBSERVER_RING_H

#include <linux/types.h>

struct ring_buffer;
struct leap_ring_wait;

/*
 * @map_fd: the BPF_MAP_TYPE_RINGBUF map @rb reads; @busy: the BPF
 * program's leap_reader_busy.  NULL with errno set when the ring's
 * positions cannot be mapped.
 */
struct leap_ring_wait *leap_ring_wait_open(struct ring_buffer *rb, int map_fd,
					   volatile __u32 *busy);
/*
 * Like ring_buffer__poll(): waits up to @timeout_ms for events unless some
 * are already waiting, then hands them out; the number handed out, or
 * -errno.  From its return to the next call the reader counts as busy.
 */
int leap_ring_wait_poll(struct leap_ring_wait *w, int timeout_ms);
void leap_ring_wait_close(struct leap_ring_wait *w);

#endif
