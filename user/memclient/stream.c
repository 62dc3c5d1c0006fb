// SPDX-License-Identifier: MIT
/*
 * memclient's requests over a stream transport (TCP): a server's pipelined
 * connections (each one a struct mc_pipe, pipe.c) are picked, connected and
 * retried here: a request is started on one and finished later, and sent
 * again on a new connection when its connection fails.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "memclient_int.h"

/* Connects pipe p if it is down (one caller does it; the others wait). */
int mc_srv_pipe_ready(struct mc_server *s, struct mc_pipe *p, bool *fresh, char *err,
		      size_t errlen)
{
	uint64_t instance = 0;
	int rc;

	*fresh = false;
	if (mc_pipe_claim(p))
		return 0;
	rc = mc_srv_handshake(s, &p->c, p->rx, &instance, err, errlen);
	mc_pipe_connected(p, rc == 0, instance);
	*fresh = rc == 0;
	if (rc == 0 && p->connects > 1) {
		mc_log(s->mc, "%s: reconnected", s->addr);
		COUNT(s->mc, reconnects, 1);
	}
	return rc;
}

/* A pipe for the next request: one that is down first (so it reconnects),
 * else the least loaded, ties in turn. */
static struct mc_pipe *pick_pipe(struct mc_server *s)
{
	unsigned start = __atomic_fetch_add(&s->next_pipe, 1, __ATOMIC_RELAXED);
	struct mc_pipe *best = NULL;

	for (unsigned i = 0; i < s->npipes; i++) {
		struct mc_pipe *p = &s->pipes[(start + i) % s->npipes];

		if (__atomic_load_n(&p->state, __ATOMIC_RELAXED) == MC_PIPE_DOWN)
			return p;
		if (!best || mc_pipe_load(p) < mc_pipe_load(best))
			best = p;
	}
	return best;
}

/* A full server says so once a second at most. */
static void log_nospace(struct mc_server *s)
{
	int64_t now = leap_now_ms();

	if (now - __atomic_load_n(&s->nospace_log, __ATOMIC_RELAXED) < 1000)
		return;
	__atomic_store_n(&s->nospace_log, now, __ATOMIC_RELAXED);
	mc_log(s->mc, "%s: server error: NOSPACE (its --size is used up)", s->addr);
}

/* A reply from a server instance other than the current one (it restarted
 * while r was in flight) does not count: r is sent again. */
static int check_instance(struct mc_server *s, struct mc_pipe_req *r, int rc)
{
	if (rc == 0 && r->instance != __atomic_load_n(&s->instance, __ATOMIC_ACQUIRE))
		return -ESTALE;
	return rc;
}

/*
 * r on s with reconnect-and-retry, as mc_lane_request_ does for one-sided
 * transports: READ, WRITE and STATS are idempotent, so a request whose
 * connection failed is simply sent again on a new one.
 */
int mc_srv_pipe_call(struct mc_server *s, struct mc_pipe_req *r)
{
	struct leap_mc *mc = s->mc;
	int64_t start = leap_now_ms(), deadline = start + mc->cfg.retry_ms;
	int backoff = 20, rc, attempt = 0;
	char err[256] = "";
	bool probe, fresh;

	rc = mc_srv_check_down(s, &probe);
	if (rc)
		return rc;
	if (probe)
		deadline = start;
	for (;;) {
		struct mc_pipe *p = pick_pipe(s);

		rc = mc_srv_pipe_ready(s, p, &fresh, err, sizeof(err));
		if (rc == 0) {
			mc_pipe_submit(p, r);
			rc = check_instance(s, r, mc_pipe_wait(r));
			if (rc == 0) {
				if (probe)
					mc_srv_mark_up(s);
				return 0;
			}
			snprintf(err, sizeof(err), "%s: %s", s->addr, strerror(-rc));
			if (rc == -ENOSPC) {
				log_nospace(s);
				return rc;
			}
		}
		if (leap_now_ms() + backoff >= deadline)
			break;
		mc_retry_wait(mc, &attempt, &backoff, err);
	}
	mc_srv_mark_down(s, start, err);
	return rc < 0 ? rc : -EIO;
}

/*
 * Starts r on s without waiting for it (stream transports); srv_finish
 * waits.  A request that cannot start now completes at once with an error
 * and srv_finish takes the slow path.
 */
void mc_srv_pipe_start(struct mc_server *s, struct mc_pipe_req *r)
{
	char err[256];
	bool probe, fresh;
	struct mc_pipe *p;
	int rc = mc_srv_check_down(s, &probe);

	r->p = NULL;
	r->done = 1;
	r->rc = rc;
	if (rc || probe) {
		if (!rc)
			r->rc = -ENOTCONN; /* the probe is mc_srv_pipe_call's */
		return;
	}
	p = pick_pipe(s);
	rc = mc_srv_pipe_ready(s, p, &fresh, err, sizeof(err));
	if (rc) {
		r->rc = -ENOTCONN;
		return;
	}
	mc_pipe_submit(p, r);
}

int mc_srv_pipe_finish(struct mc_server *s, struct mc_pipe_req *r)
{
	int rc = r->p ? check_instance(s, r, mc_pipe_wait(r)) : r->rc;

	if (rc == -ENOSPC)
		log_nospace(s);

	if (rc == 0 || rc == -ENOSPC || rc == -EHOSTDOWN)
		return rc;
	return mc_srv_pipe_call(s, r);
}
