/* SPDX-License-Identifier: MIT */
/*
 * Memory registration for the RDMA transport, behind one small interface so
 * that a registration cache (MRRC, client side) or a region budget
 * (Firehose, server side) can replace plain ibv_reg_mr later without
 * touching the transport: install a struct leap_mr_ops with
 * leap_mr_set_ops() before the first connection or listener.
 *
 * The transport registers each connection's message and staging buffers
 * once (they come from a pool and are kept registered for the process's
 * lifetime); leap-memd its whole page store once, or with --pin-budget its
 * regions on demand (transport reg_region, Firehose); with a registration
 * cache (below) clients register the callers' page buffers.  Every call is
 * counted, whatever the ops: registrations, deregistrations and the bytes
 * registered now show up in leap-memd's STATS and leap-swapd's.
 */
#ifndef LEAP_WIRE_RDMA_MR_H
#define LEAP_WIRE_RDMA_MR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ibv_pd;

struct leap_mr {
	void *addr;
	size_t len;
	uint32_t lkey, rkey;
	void *handle; /* the implementation's: struct ibv_mr * for the default */
};

struct leap_mr_ops {
	const char *name;
	/* Registers [addr, addr + len) in pd with ibv access flags; fills mr
	 * (addr, len, lkey, rkey, handle).  0 or -errno. */
	int (*reg)(void *ctx, struct ibv_pd *pd, void *addr, size_t len, int access,
		   struct leap_mr *mr);
	/* Releases what reg returned (a cache may keep it registered). */
	int (*dereg)(void *ctx, struct leap_mr *mr);
	void *ctx;
};

struct leap_mr_stats {
	uint64_t regs, deregs; /* successful calls */
	uint64_t failures;     /* reg calls that failed */
	uint64_t bytes;	       /* registered now */
	uint64_t bytes_total;  /* ever registered */
};

/* NULL restores the default (ibv_reg_mr / ibv_dereg_mr).  Not thread-safe
 * against concurrent registrations: call at start-up. */
void leap_mr_set_ops(const struct leap_mr_ops *ops);
const struct leap_mr_ops *leap_mr_get_ops(void);

int leap_mr_reg(struct ibv_pd *pd, void *addr, size_t len, int access,
		struct leap_mr *mr);
int leap_mr_dereg(struct leap_mr *mr);
void leap_mr_get_stats(struct leap_mr_stats *st);

/*
 * Client side, zero-copy (issue 6): RDMA READ/WRITE straight into/from the
 * caller's page buffers, registered through a registration cache (MRRC or
 * the LRU pin-down baseline, include/leap/reg.h) instead of a copy through
 * the connection's staging buffer.  The cache serves the first RDMA device
 * used (connections on another device keep the staging copy) and drops a
 * registration when its memory is unmapped (the userfaultfd monitor): without
 * the monitor there is no cache (a stale registration would move a page to
 * or from memory that is no longer the caller's), and leap_rdma_reg_cache
 * fails.  Whenever registration fails, the staging copy is used.
 * cfg NULL: off (the default).  Call once, before the first connection.
 */
struct leap_reg_config;
struct leap_reg_stats;
int leap_rdma_reg_cache(const struct leap_reg_config *cfg, char *err, size_t errlen);
/* The cache's statistics; false when there is no cache. */
bool leap_rdma_reg_stats(struct leap_reg_stats *st);
/* Calls that fell back to the staging copy (registration failed, another
 * device, or a buffer needing too many pieces). */
uint64_t leap_rdma_reg_fallbacks(void);

#endif /* LEAP_WIRE_RDMA_MR_H */
