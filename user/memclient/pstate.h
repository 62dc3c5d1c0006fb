/* SPDX-License-Identifier: MIT */
/*
 * memclient's per-page replica state kept in a file (leap-swapd --state), so
 * that a leap-swapd that died (SIGKILL, a crash) can be restarted and serve
 * the pages its servers still hold, never a stale replica.
 *
 * The file is a header (one page, struct leap_pstate_hdr) followed by one
 * state byte per device page, mapped MAP_SHARED: every store memclient makes
 * to a state byte is in the page cache the moment it is made, so a killed
 * process leaves the file exactly as its last store left it.  It does not
 * survive a crash of the host, and need not: the kernel's swap (the only
 * thing that references these pages) dies with it.
 *
 * The pure part (header, byte checks, the settle step at reattach) does no
 * I/O and is what tests/unit/test_pstate.c exercises; leap_pstate_open and
 * leap_pstate_close do the file.
 */
#ifndef LEAP_MEMCLIENT_PSTATE_H
#define LEAP_MEMCLIENT_PSTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The state byte of one page. */
#define LEAP_PS_WRITTEN 0x01 /* written since the device was created */
#define LEAP_PS_VALID0	0x02 /* replica k holds the latest version: VALID0 << k */
#define LEAP_PS_WRITING 0x08 /* a write is in flight: replicas hold old or new data */

#define LEAP_PSTATE_MAGIC	"LEAPPST1"
#define LEAP_PSTATE_VERSION	1
#define LEAP_PSTATE_HDR_SIZE	4096
#define LEAP_PSTATE_MAX_SERVERS 16
#define LEAP_PSTATE_ADDR_LEN	128

/* On disk, native byte order (the file never leaves its host). */
struct leap_pstate_hdr {
	char magic[8];
	uint32_t version;
	uint32_t hdr_size; /* where the page bytes start */
	uint64_t dev_pages;
	uint32_t stripe_pages;
	uint32_t replicas;
	uint32_t nservers;
	uint32_t dev; /* device id on the servers */
	char servers[LEAP_PSTATE_MAX_SERVERS][LEAP_PSTATE_ADDR_LEN];
	uint64_t config_sum; /* FNV-1a 64 of everything above */
	/* Below: changes while the device is served (not in the sum). */
	uint32_t clean; /* 1: the last leap-swapd closed it; 0: it died */
	uint32_t pad;
	uint64_t instance[LEAP_PSTATE_MAX_SERVERS]; /* each server's, as last seen */
	uint8_t have_instance[LEAP_PSTATE_MAX_SERVERS];
};

/* What a state file must match: the device as configured now. */
struct leap_pstate_geom {
	uint64_t dev_pages;
	uint32_t stripe_pages, replicas, nservers, dev;
	const char *const *servers; /* nservers addresses, in order */
};

/* Fills a fresh header for geom (clean, no instance seen); -EINVAL if an
 * address is too long or a count out of range, with why in err. */
int leap_pstate_hdr_init(struct leap_pstate_hdr *h, const struct leap_pstate_geom *g,
			 char *err, size_t errlen);
/* 0 if h describes exactly the device g; else -EINVAL (another device:
 * size, servers, replication, ...) or -EBADMSG (not a state file, another
 * version, or a damaged header), with what differs in err. */
int leap_pstate_hdr_check(const struct leap_pstate_hdr *h,
			  const struct leap_pstate_geom *g, char *err, size_t errlen);
/* 0 if every byte is a state memclient can have written at replication
 * replicas; else -EBADMSG and the first bad page in *bad. */
int leap_pstate_pages_check(const uint8_t *pages, uint64_t n, unsigned replicas,
			    uint64_t *bad);
/*
 * At reattach: a page whose write was in flight when the last leap-swapd
 * died (LEAP_PS_WRITING) is claimed by no replica any more (written, no
 * replica holds a known version), so it reads as -EIO until it is written
 * again.  Returns how many pages that was.
 */
uint64_t leap_pstate_settle(uint8_t *pages, uint64_t n);
/* Pages marked written. */
uint64_t leap_pstate_count_written(const uint8_t *pages, uint64_t n);

struct leap_pstate {
	int fd;
	void *map;
	size_t map_len;
	struct leap_pstate_hdr *hdr;
	uint8_t *pages;	    /* hdr + hdr_size: dev_pages bytes */
	bool reattached;    /* the file existed and matched */
	bool was_clean;	    /* ... and its last user closed it */
	bool on_tmpfs;	    /* swappable: see leap-swapd's --state help */
	uint64_t written;   /* pages marked written at open */
	uint64_t in_flight; /* pages settled (a write in flight at the death) */
};

/*
 * Opens (creating it if absent or empty) and maps path for geom, locked
 * against a second user (flock).  An existing file must match geom and hold
 * only valid bytes, which are then settled; the header is marked not
 * clean until leap_pstate_close.  0 or -errno with the reason in err.
 */
int leap_pstate_open(struct leap_pstate *ps, const char *path,
		     const struct leap_pstate_geom *g, char *err, size_t errlen);
/* Records server idx's instance id (after its lost pages were cleared). */
void leap_pstate_set_instance(struct leap_pstate *ps, unsigned idx, uint64_t instance);
/* Marks the file clean (if clean) and unmaps it. */
void leap_pstate_close(struct leap_pstate *ps, bool clean);

#endif /* LEAP_MEMCLIENT_PSTATE_H */
