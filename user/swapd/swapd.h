/* SPDX-License-Identifier: MIT */
/* leap-swapd internals: the request layer, the FUSE and NBD frontends and the
 * process hardening. */
#ifndef LEAP_SWAPD_H
#define LEAP_SWAPD_H

#include <pthread.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdint.h>

#include "cache.h"
#include "memclient.h"
#include "swapd_ioctl.h"

#define SWAPD_FILE	  "swap"
#define SWAPD_LAT_BUCKETS 32 /* log2 microseconds */

struct swapd_counters {
	uint64_t reads, writes, pages_in, pages_out, unaligned, errors;
	uint64_t discards, pages_discarded;
	uint64_t read_lat[SWAPD_LAT_BUCKETS]; /* per-request, by log2(us) */
};

struct swapd {
	struct leap_mc *mc;
	uint64_t size; /* bytes, page multiple */
	bool verbose;
	int open_count; /* the file's open handles (a loop device holds one) */
	pthread_mutex_t bounce_lock;
	uint8_t *bounce; /* for requests that are not page-aligned (rare) */
	size_t bounce_len;
	pthread_mutex_t stat_lock;
	struct swapd_counters cnt;
	struct pcache cache; /* cap 0: no prefetch cache */
	struct swapd_ctl *ctl;
};

/*
 * The request layer (io.c) both frontends call.  Ranges are within the
 * device (callers validate); reads use the prefetch cache, writes and
 * discards invalidate it.  0 or -EIO (-EINVAL: a discard not page-aligned).
 */
int swapd_io_read(struct swapd *sd, void *buf, size_t len, uint64_t off);
int swapd_io_write(struct swapd *sd, const void *buf, size_t len, uint64_t off);
int swapd_io_discard(struct swapd *sd, uint64_t off, size_t len);

/* How parallel the FUSE path is (docs/backend.md measures each knob). */
struct swapd_fuse_opts {
	unsigned max_background; /* 0: libfuse's default (12) */
	int clone_fd;
};

/* Serves one file of sd->size bytes at mountpoint until a stop signal that
 * arrives while the file is not open; 0 on a clean stop. */
int swapd_fuse_run(struct swapd *sd, const char *mountpoint, int max_threads,
		   const struct swapd_fuse_opts *fo);
void swapd_print_stats(struct swapd *sd, FILE *f);

#define SWAPD_NBD_MAX_CONNS 16

struct swapd_nbd_opts {
	const char *device;	 /* /dev/nbdN, or NULL for the first free one */
	int sock_fd;		 /* >= 0: serve this socket, no device (tests) */
	int nthreads;		 /* workers, spread over the connections (>= 1 each) */
	int connections;	 /* sockets given to the driver, 1..SWAPD_NBD_MAX_CONNS */
	unsigned dead_timeout_s; /* NBD_ATTR_DEAD_CONN_TIMEOUT; 0: none */
	bool reconnect; /* device is configured and lost its server: take it over */
};

/*
 * The NBD frontend (nbd.c): attaches o->device to socketpairs through the
 * kernel's netlink interface (or, with o->reconnect, hands fresh sockets
 * to a device whose leap-swapd died) and serves it until a stop signal
 * that arrives while the device is not claimed (swapon holds it
 * exclusively), or until the kernel drops every connection.  0 on a clean
 * stop, 1 on failure (with the reason on stderr).  o->sock_fd >= 0 instead
 * serves the NBD transmission phase on that connected socket, no device
 * (tests drive the request handling with it): a stop signal or
 * NBD_CMD_DISC ends it cleanly.
 */
int swapd_nbd_run(struct swapd *sd, const struct swapd_nbd_opts *o);
/* 0 if the kernel's NBD driver is loaded; -1 with a reason in err. */
int swapd_nbd_probe(char *err, size_t errlen);

/*
 * The ublk frontend (ublk.c, ublk_queue.c, ublk_ctrl.c): adds /dev/ublkbN
 * (or, with recover_id >= 0, takes over that device after its server
 * died) and serves it with `queues` queues of `depth` tags, each with
 * `workers` threads calling the request layer, until a stop signal that
 * arrives while the disk is not claimed (swapon holds it).  0 on a clean
 * stop, 1 on failure (reason on stderr).
 */
struct swapd_ublk_opts {
	unsigned queues, depth, workers;
	uint32_t block;	 /* logical block: 4096 or 512 */
	uint32_t max_io; /* bytes per request buffer */
	int recovery;	 /* add with UBLK_F_USER_RECOVERY(_REISSUE) */
	int recover_id;	 /* -1: add a new device */
};
int swapd_ublk_run(struct swapd *sd, const struct swapd_ublk_opts *o);
/* 0 if the ublk driver is loaded (/dev/ublk-control); -1 with a reason. */
int swapd_ublk_probe(char *err, size_t errlen);

/* The control socket (control.c) and its prefetch thread; needs the cache. */
int swapd_ctl_start(struct swapd *sd, const char *path, char *err, size_t errlen);
void swapd_ctl_stop(struct swapd *sd);
/* The same commands as ioctls on the FUSE file; 0 or -errno. */
int swapd_ioctl_prefetch(struct swapd *sd, struct leap_swapd_prefetch *p);
int swapd_ioctl_stats(struct swapd *sd, struct leap_swapd_stats *out);

/*
 * Keeps the daemon able to serve swap I/O under memory pressure: locks all
 * memory (unless no_mlock), marks the process an I/O flusher
 * (PR_SET_IO_FLUSHER: its allocations do not recurse into reclaim I/O) and
 * exempts it from the OOM killer.  Only the lock is required (-1 with a
 * reason in err); the other two are warnings without CAP_SYS_RESOURCE.
 */
int swapd_harden(bool no_mlock, char *err, size_t errlen);
/*
 * 1 if this process is in a memory cgroup with a limit (v1
 * memory.limit_in_bytes or v2 memory.max, on the path up to the root):
 * reclaim there waits for swap writeback that this daemon must do, which
 * deadlocks.  Describes the cgroup in why.
 */
int swapd_in_limited_memcg(char *why, size_t whylen);

#endif /* LEAP_SWAPD_H */
