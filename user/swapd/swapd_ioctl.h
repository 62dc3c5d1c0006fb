/* SPDX-License-Identifier: MIT */
/*
 * ioctls on leap-swapd's FUSE file (<mount>/swap), the same commands as its
 * control socket (control.c) for a client that has the file open, such as
 * leap-agent's backend mode.  Open the FUSE file itself: a loop device
 * over it does not pass ioctls on.  Needs --control (the cache); ENOTTY
 * otherwise.  Fixed-size structures: FUSE forwards only ioctls whose size
 * is encoded in the command.
 */
#ifndef LEAP_SWAPD_IOCTL_H
#define LEAP_SWAPD_IOCTL_H

#include <linux/ioctl.h>
#include <stdint.h>

#define LEAP_SWAPD_IOC_SLOTS 1000

struct leap_swapd_prefetch {
	uint32_t count;	 /* in: slots used, 1..LEAP_SWAPD_IOC_SLOTS */
	uint32_t queued; /* out: slots queued (the rest: queue full) */
	uint64_t slot[LEAP_SWAPD_IOC_SLOTS]; /* device page indices */
};

struct leap_swapd_stats {
	uint64_t reads, writes, pages_in, pages_out, errors;
	uint64_t cached, prefetched, hits, misses, evicted_hit, evicted_unused;
	uint64_t invalidated, kept, queued, dropped;
};

#define LEAP_SWAPD_IOC_PREFETCH _IOWR('L', 0x10, struct leap_swapd_prefetch)
#define LEAP_SWAPD_IOC_STATS	_IOR('L', 0x11, struct leap_swapd_stats)

#endif /* LEAP_SWAPD_IOCTL_H */
