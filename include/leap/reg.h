/* SPDX-License-Identifier: MIT */
/*
 * Memory registration for RDMA (issue 6): a registration cache with two
 * policies behind one API, a pluggable register/deregister backend, the
 * statistics every user prints, and an unmap monitor that invalidates cached
 * registrations whose memory went away.  docs/registration.md has the design.
 *
 * Seeds:
 *  - MRRC: L. Ou, X. He, J. Han, "MRRC: An Effective Cache for Fast Memory
 *    Registration in RDMA" (MSST 2006 slides, seeds/003): regions, not
 *    blocks; hit, contained-in, overlap (register only the difference),
 *    miss; MRE replacement: an LRU stack whose bottom "resorting section"
 *    is ordered by Evictfact(s, r) = r + 1/s, r an aging value taken from
 *    the bottom region at each eviction; batched deregistration of the
 *    eviction segment.
 *  - The classic pin-down cache (Tezuka et al.) as the LRU baseline.
 *  - UCX rcache / libfabric MR cache: invalidate on munmap.
 *
 * Threading: a cache is not thread-safe; its owner serialises calls.  The
 * monitor is thread-safe (it runs its own thread).
 */
#ifndef LEAP_REG_H
#define LEAP_REG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* At most this many registered regions cover one request (one SGE each). */
#define LEAP_REG_MAX_SEGS 8

/* What the backend hands back for one registration (ibv_mr: the pointer,
 * lkey, rkey; the fake backend: a serial number). */
struct leap_reg_key {
	uint64_t handle;
	uint32_t lkey;
	uint32_t rkey;
};

/* A registered range [addr, addr + len) and its key. */
struct leap_reg_span {
	uint64_t addr;
	uint64_t len;
	struct leap_reg_key key;
};

/*
 * The backend.  reg registers a page-aligned range (ibv_reg_mr) and returns
 * 0 or -errno; dereg deregisters a batch of spans (ibv_dereg_mr each): the
 * cache hands it a whole eviction segment at once.
 */
struct leap_reg_ops {
	int (*reg)(void *ctx, uint64_t addr, uint64_t len, struct leap_reg_key *key);
	void (*dereg)(void *ctx, const struct leap_reg_span *spans, size_t n);
	void *ctx;
};

/*
 * Statistics, shared by the cache and Firehose (fields one of them does not
 * use stay 0).  Lookups = hits + contained + overlaps + misses.
 */
struct leap_reg_stats {
	uint64_t lookups;
	uint64_t hits;	    /* a cached region equals the request's pages */
	uint64_t contained; /* the request lies inside one cached region */
	uint64_t overlaps;  /* partly cached: only the difference registered */
	uint64_t misses;    /* nothing cached overlaps the request */
	uint64_t registrations;
	uint64_t deregistrations;
	uint64_t dereg_batches; /* dereg calls (eviction segments and single ones) */
	uint64_t reg_bytes;	/* bytes registered in total */
	uint64_t evictions;	/* regions evicted for capacity */
	uint64_t invalidations; /* regions dropped because their memory went away */
	uint64_t merges;   /* overlaps needing > max_segs pieces: re-registered whole */
	uint64_t uncached; /* served by a registration the cache could not keep */
	uint64_t moves;	   /* Firehose move requests served */
	uint64_t victim_hits;  /* Firehose pins served from the victim FIFO */
	uint64_t shared_pins;  /* Firehose pins of a region another client holds */
	uint64_t refused;      /* Firehose requests over the client's share */
	uint64_t pinned_bytes; /* registered now */
	uint64_t pinned_peak;  /* the most ever registered at once */
	uint64_t entries;      /* cached regions now */
};

/* Prints the statistics as one "key=value ..." line (STATS replies). */
int leap_reg_stats_format(const struct leap_reg_stats *st, char *buf, size_t len);

/* ---- the cache ---------------------------------------------------------- */

enum leap_reg_policy {
	LEAP_REG_MRRC = 0, /* regions, overlap handling, MRE as the slides define it */
	LEAP_REG_LRU = 1,  /* classic pin-down cache: exact-or-contained, else register */
	/* MRRC's lookup with the pre-slides eviction guess: r = recency rank
	 * in [0, 1], the largest Evictfact (old, small regions) leaves first */
	LEAP_REG_MRRC_RANK = 2,
};

struct leap_reg_config {
	enum leap_reg_policy policy;
	uint64_t page_size;   /* registration granularity; 0: 4096 */
	uint64_t max_bytes;   /* pinned-bytes capacity; 0: unlimited */
	uint64_t max_entries; /* cached-region capacity; 0: unlimited */
	/* MRRC: the bottom resort_pct percent of the LRU stack (at most
	 * resort_max regions) is the resorting section; 0: 50 / 1024
	 * (docs/registration.md says why). */
	unsigned resort_pct;
	unsigned resort_max;
	/* The eviction segment: at least this many regions leave per eviction
	 * (more if the room needs it), deregistered in one batch; 0: 1 (4 for
	 * mrrc-rank, its old default).  docs/registration.md says why. */
	unsigned evict_batch;
	/* Pieces one request may be served in (<= LEAP_REG_MAX_SEGS); 0: max. */
	unsigned max_segs;
	/* MRRC: give every region of the resorting section Evictfact = r + 1/s
	 * at every eviction (the slides' loop read literally) instead of once
	 * per stay in the section; for comparison only (docs/registration.md). */
	bool mre_revalue;
};

enum leap_reg_class {
	LEAP_REG_HIT = 0,
	LEAP_REG_CONTAINED = 1,
	LEAP_REG_OVERLAP = 2,
	LEAP_REG_MISS = 3,
};

struct leap_reg_region; /* opaque */

/*
 * A reference: the request [addr, addr + len) is covered, in address order,
 * by segs[0..nsegs): each seg's addr/len is its part of the request and its
 * key the registration to use (lkey for a local SGE, rkey for a remote
 * peer).  Hold the reference while the NIC may touch the memory; then put it.
 */
struct leap_reg_ref {
	enum leap_reg_class cls;
	unsigned nsegs;
	struct leap_reg_span segs[LEAP_REG_MAX_SEGS];
	struct leap_reg_region *region[LEAP_REG_MAX_SEGS];
};

/*
 * The unmap monitor's hooks (leap_reg_monitor_hooks below gives the real
 * one; tests may plug their own).  watch is called when a region enters the
 * cache (an error keeps the region out of the cache: it is used once and
 * deregistered), unwatch when it leaves by eviction, and drain before every
 * lookup: it reports every range unmapped or discarded since the last drain.
 */
struct leap_reg_watch {
	int (*watch)(void *ctx, uint64_t addr, uint64_t len);
	void (*unwatch)(void *ctx, uint64_t addr, uint64_t len);
	void (*drain)(void *ctx, void (*fn)(void *arg, uint64_t addr, uint64_t len),
		      void *arg);
	void *ctx;
};

struct leap_reg_cache;

/* NULL on a bad config (errno EINVAL) or ENOMEM.  ops is copied. */
struct leap_reg_cache *leap_reg_cache_new(const struct leap_reg_config *cfg,
					  const struct leap_reg_ops *ops);
/* Deregisters everything, referenced or not: put every reference first. */
void leap_reg_cache_free(struct leap_reg_cache *c);
/* Plugs an unmap monitor in (before the first lookup); w is copied. */
void leap_reg_cache_set_watch(struct leap_reg_cache *c, const struct leap_reg_watch *w);

/*
 * Looks [addr, addr + len) up, registering what is missing.  0 with *ref
 * filled, or -EINVAL (len 0, range wraps), -ENOMEM, or the backend's error
 * (nothing is left referenced then).
 */
int leap_reg_get(struct leap_reg_cache *c, uint64_t addr, uint64_t len,
		 struct leap_reg_ref *ref);
/* Drops a reference; regions no longer cached are deregistered now. */
void leap_reg_put(struct leap_reg_cache *c, struct leap_reg_ref *ref);
/*
 * The memory [addr, addr + len) was unmapped, freed or replaced: every
 * cached region overlapping it leaves the cache; unreferenced ones are
 * deregistered now, referenced ones when their last reference is put.  None
 * is ever returned by a lookup again.
 */
void leap_reg_invalidate(struct leap_reg_cache *c, uint64_t addr, uint64_t len);
/* Applies pending monitor events without a lookup. */
void leap_reg_poll(struct leap_reg_cache *c);
/* Deregisters every unreferenced cached region. */
void leap_reg_flush(struct leap_reg_cache *c);
void leap_reg_cache_stats(const struct leap_reg_cache *c, struct leap_reg_stats *st);
const char *leap_reg_class_name(enum leap_reg_class cls);
const char *leap_reg_policy_name(enum leap_reg_policy p);
/* "mrrc", "lru" or "mrrc-rank" -> the policy; -1 for anything else. */
int leap_reg_policy_parse(const char *name);

/* ---- the fake backend: cost model T = a * pages + b per operation ------- */

/* The MRRC slides' cost model (after Wu 2003), microseconds: registration
 * and deregistration each T = a * pages + b. */
#define LEAP_REG_COST_REG_A   0.77
#define LEAP_REG_COST_REG_B   7.42
#define LEAP_REG_COST_DEREG_A 0.22
#define LEAP_REG_COST_DEREG_B 1.1

struct leap_reg_fake {
	uint64_t page_size;
	double reg_a, reg_b, dereg_a, dereg_b; /* us */
	double reg_us, dereg_us;	       /* modelled time so far */
	uint64_t regs, deregs, reg_pages, dereg_pages;
	uint64_t pinned_bytes, pinned_peak;
	uint64_t errors; /* dereg of a handle that is not live */
	int64_t fail_in; /* > 0: the fail_in-th next reg fails with -EIO */
	uint64_t next_handle;
	uint8_t *live;	    /* live[h]: handle h is registered */
	uint64_t *live_len; /* its length, to check dereg spans */
	uint64_t live_cap;
};

void leap_reg_fake_init(struct leap_reg_fake *f, uint64_t page_size);
void leap_reg_fake_fini(struct leap_reg_fake *f);
void leap_reg_fake_ops(struct leap_reg_fake *f, struct leap_reg_ops *ops);
/* Is handle h registered right now? */
bool leap_reg_fake_live(const struct leap_reg_fake *f, uint64_t h);
/* T = a * pages + b */
double leap_reg_cost_us(double a, double b, uint64_t pages);

/* ---- the unmap monitor (userfaultfd) ------------------------------------ */

struct leap_reg_monitor;

/*
 * Starts a monitor thread on a userfaultfd with UNMAP, REMOVE and REMAP
 * events.  Watched ranges are registered in write-protect mode without ever
 * write-protecting a page, so no page fault is ever delivered to us: we only
 * learn about munmap, mremap, madvise(DONTNEED/REMOVE/FREE) and brk shrink.
 * 0 or -errno (-EPERM without CAP_SYS_PTRACE and
 * vm.unprivileged_userfaultfd = 0, -ENOSYS without userfaultfd).
 */
int leap_reg_monitor_start(struct leap_reg_monitor **out);
void leap_reg_monitor_stop(struct leap_reg_monitor *m);
void leap_reg_monitor_hooks(struct leap_reg_monitor *m, struct leap_reg_watch *w);
/* Events received so far (unmap, remove, remap). */
uint64_t leap_reg_monitor_events(struct leap_reg_monitor *m);

#endif
