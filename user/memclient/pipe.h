/* SPDX-License-Identifier: MIT */
/*
 * One pipelined connection to a leap-memd over a stream transport (TCP):
 * many requests in flight, their replies matched by request id (the wire
 * header's req_id), a bounded window, and two classes so that prefetches
 * never take the slots demand reads need.  A receiver thread reads replies
 * and completes requests; senders write whole messages under a send lock so
 * messages never interleave.  Any failure (a send or receive error, a reply
 * that makes no sense, a request unanswered for io_timeout_ms) breaks the
 * connection: every request in flight completes with an error and the
 * caller (memclient) resends it on a new connection.  A reply is never
 * matched to a request of another connection: requests live and die with
 * the connection they were sent on.
 *
 * The handshake is the caller's: mc_pipe_claim() hands a disconnected pipe
 * to one caller, who connects p->c, authenticates on it with p->rx, then
 * calls mc_pipe_connected().
 */
#ifndef LEAP_MC_PIPE_H
#define LEAP_MC_PIPE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "leap/wire.h"
#include "transport.h"

#define MC_PIPE_MAX_WINDOW 256
#define MC_PIPE_STACK	   (256 << 10) /* receiver thread stack */

struct mc_pipe;

struct mc_pipe_req {
	/* in */
	unsigned op; /* LEAP_WOP_READ, _WRITE, _FREE or _STATS */
	bool prefetch;
	uint32_t dev, count;
	const uint64_t *offset;
	const void *pages;   /* WRITE: count consecutive pages */
	uint8_t *const *out; /* READ: page i into out[i] */
	uint64_t *stats;     /* STATS: LEAP_WIRE_MAX_STATS values */
	/* out */
	uint64_t present;  /* READ */
	uint32_t nstats;   /* STATS */
	uint64_t instance; /* the server instance that answered */
	int rc;		   /* 0, -ENOSPC, -EPROTO or a transport error */
	/* private */
	uint64_t id;
	int64_t sent_ms;
	struct mc_pipe *p;
	struct mc_pipe_req *next;
	int done;
};

enum mc_pipe_state { MC_PIPE_DOWN, MC_PIPE_CONNECTING, MC_PIPE_UP };

struct mc_pipe {
	pthread_mutex_t lock; /* everything below but c's I/O */
	pthread_cond_t cond;  /* completions, window, state */
	pthread_mutex_t send_lock;
	enum mc_pipe_state state;
	bool broken, stop;
	struct leap_conn c;
	uint64_t instance; /* of the server on this connection */
	uint8_t *rx;	   /* LEAP_WIRE_MAX_MSG */
	uint8_t tx[LEAP_WIRE_HDR_SIZE + LEAP_WIRE_IO_HDR + 8 * LEAP_WIRE_MAX_BATCH];
	unsigned window, inflight, inflight_pf, peak;
	unsigned connects; /* successful connects (more than 1: reconnects) */
	struct mc_pipe_req *pending;
	uint64_t *next_id; /* shared by the server's pipes */
	int io_timeout_ms;
	pthread_t thread;
	bool thread_running;
};

/* 0 or -errno.  window: requests in flight at most (prefetches: half). */
int mc_pipe_init(struct mc_pipe *p, unsigned window, int io_timeout_ms,
		 uint64_t *next_id);
void mc_pipe_fini(struct mc_pipe *p);
/*
 * Waits while another caller connects p.  Returns 1 if p is up, 0 if it is
 * down and now claimed by this caller (connect it, then mc_pipe_connected).
 */
int mc_pipe_claim(struct mc_pipe *p);
/* The claimed connect succeeded (p->c is authenticated, with instance) or
 * failed (ok false; p->c is closed already). */
void mc_pipe_connected(struct mc_pipe *p, bool ok, uint64_t instance);
/* Requests in flight or waiting for a slot (to pick the least loaded). */
unsigned mc_pipe_load(struct mc_pipe *p);
/*
 * Sends r (its "in" fields set) once the window has room.  r always
 * completes: mc_pipe_wait returns its rc.  -ENOTCONN if p is not up.
 */
void mc_pipe_submit(struct mc_pipe *p, struct mc_pipe_req *r);
int mc_pipe_wait(struct mc_pipe_req *r);
/* Breaks the connection (tests, shutdown): requests in flight fail. */
void mc_pipe_break(struct mc_pipe *p);

#endif /* LEAP_MC_PIPE_H */
