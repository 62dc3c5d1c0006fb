/* SPDX-License-Identifier: MIT */
/*
 * memclient's insides, shared by its files (the API is memclient.h):
 * striping, replication, reconnect-and-retry over the wire protocol.
 *
 *   memclient.c  the public API: open/close, read/write/prefetch, discard,
 *                stats
 *   conn.c       server connections: handshake, lanes, up/down marking
 *   stream.c     stream transports (TCP): requests over a server's
 *                pipelined connections (one connection: pipe.c)
 *   onesided.c   one-sided transports (RDMA): MAP, firehoses, RDMA
 *                READ/WRITE
 *   server_io.c  one request on one server, whichever its transport
 *   read.c       reading a chunk from the replicas in turn, failover
 *   replica.c    placement, re-replication (the resilver thread)
 *   pstate.c     the per-page state's --state file
 */
#ifndef LEAP_MEMCLIENT_INT_H
#define LEAP_MEMCLIENT_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "leap/firehose.h"
#include "memclient.h"
#include "pipe.h"
#include "pstate.h"

/* Per-page state bits (pstate.h: the same bytes go to a --state file). */
#define PS_WRITTEN LEAP_PS_WRITTEN
#define PS_VALID0  LEAP_PS_VALID0  /* replica k holds the latest version: << k */
#define PS_WRITING LEAP_PS_WRITING /* a write is in flight: old or new data */

#define CHUNK_LOCKS 256
/* The largest request we build: a MAP of a full batch. */
#define TX_CAP (LEAP_WIRE_HDR_SIZE + LEAP_WIRE_MAP_REQ_HDR + 8 * LEAP_WIRE_MAX_BATCH)
_Static_assert(LEAP_WIRE_MAP_REQ_HDR >= LEAP_WIRE_IO_HDR, "TX_CAP fits READ/WRITE");

struct mc_server;

/*
 * One connection of a one-sided transport (RDMA: one QP): one request at a
 * time under its lock.  A server has cfg.conns of them; a caller takes a
 * free one (mc_lane_take), so that many page operations are in flight at once,
 * each a chain of up to LEAP_WIRE_MAX_BATCH work requests.
 */
struct mc_lane {
	struct mc_server *s;
	pthread_mutex_t lock;
	struct leap_conn c; /* c.fd < 0: not connected */
	uint64_t instance;  /* the server instance this connection reached */
	uint8_t tx[TX_CAP];
	uint8_t *rx; /* LEAP_WIRE_MAX_MSG */
	/* Where each page lives in this server's exported store (index + 1; 0
	 * = ask with MAP), and that store, both learned on this connection and
	 * forgotten with it. */
	uint32_t *ridx; /* dev_pages entries */
	struct leap_export region;
	bool have_region;
	/* A server with a pin budget (MAP says so): the region has no key of
	 * its own; pages are reached through firehoses (FH_MOVE), whose table
	 * lives and dies with the connection. */
	bool fh_mode;
	struct leap_fh_client *fh;
	uint64_t fh_rs; /* region size */
};

struct mc_server {
	struct leap_mc *mc;
	unsigned idx;
	const char *addr;
	pthread_mutex_t ilock; /* instance; down state */
	uint64_t instance;
	uint64_t capacity; /* pages, as its HELLO said */
	bool hello;	   /* a HELLO was answered: capacity is known */
	int64_t nospace_log;
	bool have_instance;
	bool down; /* a retry window failed: fail fast, probe at down_until */
	int64_t down_until;
	int probe_ms;
	uint64_t next_id; /* atomic: pipes and lanes share it */
	/* Stream transports (TCP): conns pipelined connections; NULL for
	 * one-sided ones, which have lanes. */
	struct mc_pipe *pipes;
	unsigned npipes, next_pipe;
	/* One-sided transports (RDMA): conns lanes, NULL for stream ones.
	 * Lane 0 alone until a MAP said whether the server has a pin budget
	 * (mode_known); with one (fh_server) lane 0 stays the only one, since
	 * every connection would take a firehose share of its own. */
	struct mc_lane *lanes;
	unsigned nlanes, next_lane;
	bool mode_known, fh_server;	 /* atomic */
	unsigned lanes_busy, lanes_peak; /* atomic */
};

struct leap_mc {
	struct leap_mc_config cfg;
	uint8_t secret[LEAP_SECRET_MAX];
	struct mc_server srv[LEAP_MC_MAX_SERVERS];
	uint8_t *pstate; /* dev_pages bytes: calloc'd, or ps.pages */
	/* cfg.state_file: pstate lives in that file's shared mapping. */
	struct leap_pstate ps;
	bool have_ps, opened;
	pthread_mutex_t stat_lock;
	struct leap_mc_counters cnt;
	/* Writes and re-replication of a stripe exclude each other. */
	pthread_mutex_t chunk_lock[CHUNK_LOCKS];
	/* r = 2: a thread copies pages that lost a replica back to it. */
	pthread_t resilver;
	bool resilver_running, resilver_stop;
	pthread_mutex_t rs_lock;
	pthread_cond_t rs_cond;
	uint8_t *rs_buf; /* LEAP_WIRE_MAX_BATCH pages */
	FILE *trace;	 /* --reg-trace */
	pthread_mutex_t trace_lock;
	int64_t last_err_log;
	uint64_t err_suppressed;
};

void mc_log(struct leap_mc *mc, const char *fmt, ...);

#define COUNT(mc, field, n)                                                              \
	do {                                                                             \
		pthread_mutex_lock(&(mc)->stat_lock);                                    \
		(mc)->cnt.field += (n);                                                  \
		pthread_mutex_unlock(&(mc)->stat_lock);                                  \
	} while (0)

/* Encodes the request of one attempt into l->tx (mc_lane_request). */
typedef long (*build_fn)(struct mc_lane *l, uint64_t id, void *arg);
/* Instead of build: one whole attempt (one-sided transports' page path). */
typedef int (*attempt_fn)(struct mc_lane *l, void *arg);

/* A READ or WRITE of pages through a lane (mc_lane_pages). */
struct page_arg {
	unsigned op;
	uint32_t count;
	const uint64_t *offset;
	uint8_t *const *out; /* READ */
	uint64_t *present;   /* READ */
	const void *pages;   /* WRITE */
};

/* One READ or WRITE on one server, started now and finished later: with
 * pipes the request is in flight meanwhile; on a one-sided transport it is
 * done (synchronously) at start. */
struct srv_io {
	struct mc_server *s;
	struct mc_pipe_req r;
	bool sync;
	int rc;
};

/* memclient.c */
int mc_check_range(struct leap_mc *mc, uint64_t off, size_t len);
void mc_log_io_error(struct leap_mc *mc, const char *what, uint64_t pg, const char *why);

/* Before a request's next attempt: logs the first retry, counts it, and
 * sleeps backoff ms, doubling it up to 500 ms for the next one. */
void mc_retry_wait(struct leap_mc *mc, int *attempt, int *backoff_ms, const char *err);

/* conn.c */
void mc_lane_disconnect(struct mc_lane *l);
int mc_lane_roundtrip(struct mc_lane *l, struct iovec *iov, int iovcnt, uint64_t id,
		      unsigned op, struct leap_wire_msg *m);
int mc_srv_handshake(struct mc_server *s, struct leap_conn *c, uint8_t *rx,
		     uint64_t *instance, char *err, size_t errlen);
int mc_lane_connect(struct mc_lane *l, char *err, size_t errlen);
int mc_srv_check_down(struct mc_server *s, bool *probe);
void mc_srv_mark_up(struct mc_server *s);
void mc_srv_mark_down(struct mc_server *s, int64_t start, const char *err);
int mc_lane_request_(struct mc_lane *l, build_fn build, attempt_fn try_fn, void *arg,
		     const void *payload, size_t payload_len, unsigned op,
		     struct leap_wire_msg *m);
int mc_lane_request(struct mc_lane *l, build_fn build, void *arg, const void *payload,
		    size_t payload_len, unsigned op, struct leap_wire_msg *m);
struct mc_lane *mc_lane_take(struct mc_server *s);
void mc_lane_put(struct mc_lane *l);

/* stream.c */
int mc_srv_pipe_ready(struct mc_server *s, struct mc_pipe *p, bool *fresh, char *err,
		      size_t errlen);
int mc_srv_pipe_call(struct mc_server *s, struct mc_pipe_req *r);
void mc_srv_pipe_start(struct mc_server *s, struct mc_pipe_req *r);
int mc_srv_pipe_finish(struct mc_server *s, struct mc_pipe_req *r);

/* onesided.c */
long mc_build_stats(struct mc_lane *l, uint64_t id, void *p);
int mc_lane_pages(struct mc_server *s, struct page_arg *pa, uint64_t *instance);
int mc_srv_free_sync(struct mc_server *s, const uint64_t *offset, uint32_t count);

/* server_io.c */
void mc_srv_io_start(struct srv_io *io, struct mc_server *s, unsigned op, bool prefetch,
		     const uint64_t *offset, uint32_t count, uint8_t *const *out,
		     const void *pages);
int mc_srv_io_finish(struct srv_io *io);
int mc_srv_write(struct mc_server *s, const uint64_t *offset, uint32_t count,
		 const void *pages);
int mc_srv_read(struct mc_server *s, const uint64_t *offset, uint32_t count,
		uint8_t *const *out, uint64_t *present);

/* read.c */
int mc_read(struct leap_mc *mc, uint64_t off, void *buf, size_t len, bool prefetch);

/* replica.c */
void mc_srv_lost_everything(struct leap_mc *mc, unsigned idx);
uint32_t mc_chunk_pages(struct leap_mc *mc, uint64_t pg, uint64_t left);
pthread_mutex_t *mc_chunk_lock(struct leap_mc *mc, uint64_t pg);
void *mc_resilver_main(void *arg);

#endif /* LEAP_MEMCLIENT_INT_H */
