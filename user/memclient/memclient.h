/* SPDX-License-Identifier: MIT */
/*
 * memclient: one block device's pages stored in one or more leap-memd
 * servers.  Placement is striped: the device is cut into stripes of
 * stripe_pages pages, stripe s lives on server s % N and, with replication
 * r = 2, also on server (s + 1) % N.  A write goes to every replica; a read
 * asks the replicas in turn.  Each server connection reconnects and retries
 * (the protocol's READ and WRITE are idempotent) until retry_ms runs out.
 *
 * Data is never silently wrong: the client remembers, per page, whether it
 * was ever written and which replicas hold its latest version (1 byte per
 * page).  A replica that missed a write, restarted (new instance id) or
 * reports a written page absent is not read from for that page; when no
 * replica holding the latest version answers, the read fails with -EIO and
 * a log line.  A never-written page reads as zeros.
 *
 * With r = 2 a background thread re-replicates: every 200 ms it copies
 * pages held by one replica only (a write missed the other, or it
 * restarted empty) back to the other once that answers, under a per-stripe
 * lock that writes take too, so a copy never overwrites a newer write.
 * It also probes servers marked down (STATS), so one that came back empty
 * shows its new instance id even when no I/O reaches it.
 *
 * With cfg.state_file the per-page bytes live in that file (pstate.h) and
 * a client that replaces a dead one reattaches to what the servers hold.
 *
 * Thread-safe.  Over TCP each server gets `conns` connections, each with
 * up to `window` requests in flight, matched to their replies by request
 * id (user/memclient/pipe.h); a call's chunks all go out before it waits
 * for any, and a write goes to both replicas at once.  One-sided
 * transports (RDMA) get `conns` connections (QPs) per server, each
 * carrying one request (a chain of up to LEAP_WIRE_MAX_BATCH work
 * requests) at a time; a server with a pin budget gets one.
 */
#ifndef LEAP_MEMCLIENT_H
#define LEAP_MEMCLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "leap/wire.h"
#include "transport.h"

#define LEAP_MC_MAX_SERVERS 16
#define LEAP_MC_MAX_CONNS   16

struct leap_mc_config {
	const char *servers[LEAP_MC_MAX_SERVERS];
	unsigned nservers;
	unsigned replicas; /* 1 or 2, <= nservers */
	const struct leap_transport *transport;
	const uint8_t *secret;
	size_t secret_len;
	uint32_t dev;	       /* device id on the servers: one per client */
	uint64_t dev_pages;    /* device size in pages */
	uint32_t stripe_pages; /* placement unit; 0 = 16 */
	int io_timeout_ms;     /* one attempt; 0 = 2000 */
	int retry_ms;	       /* keep retrying a server this long; 0 = 10000 */
	const char *log_prefix;
	/* The pages were written by an earlier client (e.g. leap-memctl fill,
	 * then verify): count every page as written to every replica, so an
	 * absent one is an error rather than zeros. */
	int existing;
	/* Keep the per-page state in this file (user/memclient/pstate.h): a
	 * new client with the same file, servers and geometry reattaches to
	 * the pages an earlier one (that died) left on the servers; at r = 2
	 * it starts even if one server does not answer (marked down, probed).
	 * NULL: in memory only. */
	const char *state_file;
	/* RDMA: record the local buffer of every RDMA operation here, in the
	 * registration trace format (include/leap/regtrace.h) for leap-regsim:
	 * what a registration cache would have to register. */
	const char *reg_trace;
	/* RDMA: "mrrc", "lru" or "mrrc-rank": RDMA straight into/from the caller's
	 * buffers, registered through that cache of reg_cache_bytes (0: 64 MiB) pinned at
	 * most; NULL or "off": through the staging copy (rdma_mr.h). */
	const char *reg_cache;
	uint64_t reg_cache_bytes;
	/* Connections per server (0: 2, at most LEAP_MC_MAX_CONNS).  TCP:
	 * each with up to window requests in flight (0: 32; prefetches take
	 * at most half).  RDMA: one request at a time each. */
	unsigned conns, window;
};

/* Is name a --reg-cache value (mrrc, lru, off)? */
int leap_mc_reg_cache_ok(const char *name);
/* The registration cache's statistics as " reg_key=value ..." (empty
 * without a cache) into buf. */
void leap_mc_reg_stats(char *buf, size_t len);

struct leap_mc_counters {
	uint64_t reads, writes; /* calls */
	uint64_t pages_read, pages_written;
	uint64_t reconnects;	   /* successful reconnections after a failure */
	uint64_t retries;	   /* attempts repeated after a transport error */
	uint64_t failovers;	   /* reads served by a second replica */
	uint64_t degraded_writes;  /* writes that reached fewer than r replicas */
	uint64_t lost_pages;	   /* written pages a replica no longer had */
	uint64_t io_errors;	   /* calls that returned -EIO */
	uint64_t resilvered;	   /* pages copied back to a replica that lost them */
	uint64_t under_replicated; /* pages on one replica only, at the last scan */
	uint64_t pages_discarded;  /* pages forgotten by leap_mc_discard */
	uint64_t fh_moves;	   /* FH_MOVE requests (servers with a pin budget) */
	uint64_t fh_pins;	   /* regions those moves pinned */
	uint64_t peak_inflight;	   /* most requests in flight on one connection */
	uint64_t free_failures;	   /* FREEs a server did not acknowledge */
};

struct leap_mc;

/* Connects to every server and authenticates; NULL with a reason in err. */
struct leap_mc *leap_mc_open(const struct leap_mc_config *cfg, char *err, size_t errlen);
void leap_mc_close(struct leap_mc *mc);

/* off and len page-aligned, within the device.  0, -EINVAL or -EIO; a read
 * of a page whose write is still in flight (another thread) gets -EBUSY. */
int leap_mc_write(struct leap_mc *mc, uint64_t off, const void *buf, size_t len);
int leap_mc_read(struct leap_mc *mc, uint64_t off, void *buf, size_t len);
/* A read in the prefetch class: it never takes the window slots kept for
 * demand reads (leap_mc_read), so demand reads overtake it. */
int leap_mc_prefetch(struct leap_mc *mc, uint64_t off, void *buf, size_t len);
/*
 * n (<= LEAP_WIRE_MAX_BATCH) scattered pages pg[i] (page numbers) into
 * out[i], in the prefetch class, one READ per server for all of them.  Bit
 * i of *ok says page i was read; a page being written, or that no replica
 * served, is left out (a prefetch never guesses).  0 or -EINVAL.
 */
int leap_mc_prefetch_pages(struct leap_mc *mc, const uint64_t *pg, uint32_t n,
			   uint8_t *const *out, uint64_t *ok);
/*
 * Discard (TRIM) of page-aligned [off, off + len): the client forgets the
 * pages, which then read as zeros without asking a server, stops
 * re-replicating them, and tells every replica to FREE them (the servers'
 * memory comes back), waiting for the answers.  A server that does not
 * answer keeps the old contents until the next write of the page (counted
 * in free_failures).  0 or -EINVAL.
 */
int leap_mc_discard(struct leap_mc *mc, uint64_t off, size_t len);

/*
 * Whether every server can hold what the placement puts on it (its HELLO
 * capacity, all of it for this device): 0, or -ENOSPC with which server
 * and how much in err.  leap-swapd refuses to start otherwise: a full
 * server fails swap-outs mid-run.  A server that never answered (left down
 * at a reattach, see state_file) is not checked.
 */
int leap_mc_check_capacity(struct leap_mc *mc, char *err, size_t errlen);

/* STATS of server idx into value[LEAP_WIRE_MAX_STATS]; the count, or -errno. */
int leap_mc_server_stats(struct leap_mc *mc, unsigned idx, uint64_t *value);
void leap_mc_get_counters(struct leap_mc *mc, struct leap_mc_counters *out);

/* Server index of replica k of the page at page number pg (for tests). */
unsigned leap_mc_place(uint64_t pg, uint32_t stripe_pages, unsigned nservers, unsigned k);

#endif /* LEAP_MEMCLIENT_H */
