// SPDX-License-Identifier: MIT
/*
 * memclient (memclient.h): striping, replication, reconnect-and-retry over
 * the wire protocol.  Every buffer is allocated at open: leap-swapd calls
 * this on the swap-out path, where allocating memory can wait for the very
 * swap-out being served.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "leap/firehose.h"
#include "leap/reg.h"
#include "leap/regtrace.h"
#include "memclient.h"
#include "pipe.h"
#include "pstate.h"
#include "rdma_mr.h"

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
 * free one (lane_take), so that many page operations are in flight at once,
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

static void mc_log(struct leap_mc *mc, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: %s\n", mc->cfg.log_prefix, line);
}

#define COUNT(mc, field, n)                                                              \
	do {                                                                             \
		pthread_mutex_lock(&(mc)->stat_lock);                                    \
		(mc)->cnt.field += (n);                                                  \
		pthread_mutex_unlock(&(mc)->stat_lock);                                  \
	} while (0)

unsigned leap_mc_place(uint64_t pg, uint32_t stripe_pages, unsigned nservers, unsigned k)
{
	return (unsigned)((pg / stripe_pages + k) % nservers);
}

/* ---- one server connection ----------------------------------------------- */

static void lane_disconnect(struct mc_lane *l)
{
	if (l->c.fd >= 0)
		l->c.t->close(&l->c);
	l->c.fd = -1;
	if (l->ridx && l->have_region)
		memset(l->ridx, 0, l->s->mc->cfg.dev_pages * sizeof(*l->ridx));
	l->have_region = false;
	/* The server released our firehoses with the connection. */
	if (l->fh)
		leap_fh_client_free(l->fh);
	l->fh = NULL;
	l->fh_mode = false;
}

/* Sends one request (iov) on c and receives its reply into rx, decoded into
 * m.  Returns 0, -EPROTO (a reply that makes no sense: do not retry), or
 * another -errno for transport failures (retry on a new connection). */
static int conn_roundtrip(struct mc_server *s, struct leap_conn *c, uint8_t *rx,
			  struct iovec *iov, int iovcnt, uint64_t id, unsigned op,
			  struct leap_wire_msg *m)
{
	int64_t deadline = leap_now_ms() + s->mc->cfg.io_timeout_ms;
	struct leap_wire_hdr h;
	int rc;

	rc = leap_conn_send_all(c, iov, iovcnt, deadline);
	if (rc)
		return rc;
	rc = leap_conn_recv_all(c, rx, LEAP_WIRE_HDR_SIZE, deadline);
	if (rc)
		return rc;
	if (leap_wire_decode_hdr(rx, LEAP_WIRE_HDR_SIZE, &h))
		return -EPROTO;
	rc = leap_conn_recv_all(c, rx + LEAP_WIRE_HDR_SIZE, h.length, deadline);
	if (rc)
		return rc;
	if (leap_wire_decode(rx, LEAP_WIRE_HDR_SIZE + h.length, m) ||
	    !(m->hdr.flags & LEAP_WF_REPLY) || m->hdr.req_id != id)
		return -EPROTO;
	if (m->hdr.opcode == LEAP_WOP_ERROR) {
		mc_log(s->mc, "%s: server error: %s: %.*s", s->addr,
		       leap_wire_err_name(m->u.error.code), (int)m->u.error.msg_len,
		       m->u.error.msg);
		return m->u.error.code == LEAP_WERR_NOSPACE ? -ENOSPC : -EPROTO;
	}
	return m->hdr.opcode == op ? 0 : -EPROTO;
}

/* The same on a lane (one-sided transports). */
static int lane_roundtrip(struct mc_lane *l, struct iovec *iov, int iovcnt, uint64_t id,
			  unsigned op, struct leap_wire_msg *m)
{
	return conn_roundtrip(l->s, &l->c, l->rx, iov, iovcnt, id, op, m);
}

/* Forget which pages server idx held: it lost them all. */
static void srv_lost_everything(struct leap_mc *mc, unsigned idx)
{
	for (uint64_t pg = 0; pg < mc->cfg.dev_pages; pg++)
		for (unsigned k = 0; k < mc->cfg.replicas; k++)
			if (leap_mc_place(pg, mc->cfg.stripe_pages, mc->cfg.nservers,
					  k) == idx)
				__atomic_and_fetch(&mc->pstate[pg],
						   (uint8_t) ~(PS_VALID0 << k),
						   __ATOMIC_RELAXED);
}

/*
 * Connects c to server s and authenticates (HELLO, AUTH) with rx as the
 * receive buffer.  A new instance id means a restarted server: its pages
 * are forgotten before any connection to it can carry a request (under
 * ilock, which every handshake takes), so no write acknowledged by the new
 * instance is forgotten afterwards.
 */
static int srv_handshake(struct mc_server *s, struct leap_conn *c, uint8_t *rx,
			 uint64_t *instance, char *err, size_t errlen)
{
	struct leap_mc *mc = s->mc;
	struct leap_wire_msg m;
	uint8_t mac[LEAP_WIRE_MAC_LEN], nonce[LEAP_WIRE_NONCE_LEN];
	uint8_t tx[LEAP_WIRE_HDR_SIZE + LEAP_WIRE_HELLO_REQ_LEN + LEAP_WIRE_MAC_LEN];
	struct iovec iov;
	uint64_t id;
	long n;
	int rc;

	if (leap_wire_nonce(nonce)) {
		snprintf(err, errlen, "no randomness");
		return -EIO;
	}
	rc = mc->cfg.transport->connect(c, s->addr, mc->cfg.io_timeout_ms, err, errlen);
	if (rc) {
		c->fd = -1;
		return rc;
	}
	id = __atomic_add_fetch(&s->next_id, 1, __ATOMIC_RELAXED);
	n = leap_wire_enc_hello(tx, sizeof(tx), id, nonce);
	iov = (struct iovec){tx, (size_t)n};
	rc = conn_roundtrip(s, c, rx, &iov, 1, id, LEAP_WOP_HELLO, &m);
	if (rc)
		goto fail;
	/* The server proves the secret first: no page goes to an impostor. */
	if (!leap_wire_mac_ok(mc->secret, mc->cfg.secret_len, LEAP_WIRE_ROLE_SERVER,
			      nonce, m.u.hello_rep.nonce, m.u.hello_rep.mac)) {
		mc_log(mc, "%s: the server does not know the secret: refusing it",
		       s->addr);
		rc = -EACCES;
		goto fail;
	}
	if (leap_wire_mac(mc->secret, mc->cfg.secret_len, LEAP_WIRE_ROLE_CLIENT,
			  m.u.hello_rep.nonce, nonce, mac)) {
		rc = -EPROTO;
		goto fail;
	}
	pthread_mutex_lock(&s->ilock);
	if (s->have_instance && m.u.hello_rep.instance != s->instance) {
		/* A new server process: whatever this client stored there is gone. */
		mc_log(mc,
		       "%s restarted (instance %016llx -> %016llx): its pages are lost",
		       s->addr, (unsigned long long)s->instance,
		       (unsigned long long)m.u.hello_rep.instance);
		/* The new id first: a write acknowledged by the old instance
		 * that marks its pages valid after the clear below sees it
		 * (leap_mc_write) and takes the mark back. */
		__atomic_store_n(&s->instance, m.u.hello_rep.instance, __ATOMIC_SEQ_CST);
		srv_lost_everything(mc, s->idx);
		/* It may have come back with or without a pin budget: one lane
		 * until a MAP says (lane_take). */
		__atomic_store_n(&s->mode_known, false, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&s->instance, m.u.hello_rep.instance, __ATOMIC_SEQ_CST);
	s->have_instance = true;
	/* Persisted only now, after the pages it lost were forgotten: a
	 * leap-swapd that dies between the two finds the old id in the file
	 * and forgets them again (leap_mc_open), never the reverse. */
	if (mc->have_ps)
		leap_pstate_set_instance(&mc->ps, s->idx, m.u.hello_rep.instance);
	s->capacity = m.u.hello_rep.capacity_pages;
	s->hello = true;
	pthread_mutex_unlock(&s->ilock);
	*instance = m.u.hello_rep.instance;
	id = __atomic_add_fetch(&s->next_id, 1, __ATOMIC_RELAXED);
	n = leap_wire_enc_auth(tx, sizeof(tx), id, mac);
	OPENSSL_cleanse(mac, sizeof(mac));
	iov = (struct iovec){tx, (size_t)n};
	rc = conn_roundtrip(s, c, rx, &iov, 1, id, LEAP_WOP_AUTH, &m);
	if (rc)
		goto fail;
	return 0;
fail:
	snprintf(err, errlen, "%s: handshake: %s", s->addr,
		 rc == -EPROTO ? "refused (wrong secret or protocol?)" : strerror(-rc));
	c->t->close(c);
	c->fd = -1;
	return rc;
}

/* A lane's connection (one-sided transports). */
static int lane_connect(struct mc_lane *l, char *err, size_t errlen)
{
	int rc = srv_handshake(l->s, &l->c, l->rx, &l->instance, err, errlen);

	if (rc)
		lane_disconnect(l);
	return rc;
}

static int srv_check_down(struct mc_server *s, bool *probe);
static void srv_mark_up(struct mc_server *s);
static void srv_mark_down(struct mc_server *s, int64_t start, const char *err);

/*
 * One request on lane l with reconnect-and-retry.  iov[0] is l->tx with the
 * request; the caller encodes it again for each attempt through build().
 * The reply is left in l->rx / m.  Call with l->lock held.  An answer from
 * a server instance other than the one the server is known by now (it
 * restarted meanwhile and another lane saw it first) does not count: the
 * request goes again, as check_instance does for pipes.
 */
typedef long (*build_fn)(struct mc_lane *l, uint64_t id, void *arg);
/* Instead of build: one whole attempt (one-sided transports' page path). */
typedef int (*attempt_fn)(struct mc_lane *l, void *arg);

static int lane_request_(struct mc_lane *l, build_fn build, attempt_fn try_fn, void *arg,
			 const void *payload, size_t payload_len, unsigned op,
			 struct leap_wire_msg *m)
{
	struct mc_server *s = l->s;
	struct leap_mc *mc = s->mc;
	int64_t start = leap_now_ms(), deadline = start + mc->cfg.retry_ms;
	int backoff = 20, rc = -EIO, attempt = 0;
	char err[256] = "";
	bool probe;

	/*
	 * A server that already failed a whole retry window gets one quick probe
	 * now and then instead of a new window per request: with r = 2 the other
	 * replica carries on at full speed, with r = 1 errors come back fast.
	 */
	rc = srv_check_down(s, &probe);
	if (rc)
		return rc;
	if (probe)
		deadline = start;
	for (;;) {
		if (l->c.fd < 0) {
			rc = lane_connect(l, err, sizeof(err));
			if (rc == 0 && (probe || attempt > 0)) {
				mc_log(mc, "%s: reconnected", s->addr);
				COUNT(mc, reconnects, 1);
			}
		} else {
			rc = 0;
		}
		if (rc == 0) {
			if (try_fn) {
				rc = try_fn(l, arg);
			} else {
				uint64_t id = __atomic_add_fetch(&s->next_id, 1,
								 __ATOMIC_RELAXED);
				long n = build(l, id, arg);
				struct iovec iov[2] = {{l->tx, (size_t)n},
						       {(void *)payload, payload_len}};

				rc = lane_roundtrip(l, iov, payload_len ? 2 : 1, id, op,
						    m);
			}
			if (rc == 0 && l->instance != __atomic_load_n(&s->instance,
								      __ATOMIC_ACQUIRE))
				rc = -ESTALE;
			if (rc == 0) {
				if (probe)
					srv_mark_up(s);
				return 0;
			}
			snprintf(err, sizeof(err), "%s: %s", s->addr, strerror(-rc));
			/* After any failure the stream may be out of sync. */
			lane_disconnect(l);
			if (rc == -ENOSPC)
				return rc;
		}
		if (rc == -EINVAL || leap_now_ms() + backoff >= deadline)
			break;
		if (attempt++ == 0)
			mc_log(mc, "%s; retrying for up to %d ms", err, mc->cfg.retry_ms);
		COUNT(mc, retries, 1);
		nanosleep(&(struct timespec){0, backoff * 1000000L}, NULL);
		backoff = backoff * 2 > 500 ? 500 : backoff * 2;
	}
	srv_mark_down(s, start, err);
	return rc < 0 ? rc : -EIO;
}

static int lane_request(struct mc_lane *l, build_fn build, void *arg, const void *payload,
			size_t payload_len, unsigned op, struct leap_wire_msg *m)
{
	return lane_request_(l, build, NULL, arg, payload, payload_len, op, m);
}

/*
 * A lane of s for one request, locked: a free one if there is one (in turn
 * from where the last caller started), else the next in turn, waited for.
 * Lane 0 alone until the server's mode is known, and for a server with a
 * pin budget.
 */
static struct mc_lane *lane_take(struct mc_server *s)
{
	unsigned n = s->nlanes, start, busy, peak;
	struct mc_lane *l = NULL;

	if (!__atomic_load_n(&s->mode_known, __ATOMIC_ACQUIRE) ||
	    __atomic_load_n(&s->fh_server, __ATOMIC_RELAXED))
		n = 1;
	start = __atomic_fetch_add(&s->next_lane, 1, __ATOMIC_RELAXED);
	for (unsigned i = 0; i < n && !l; i++)
		if (!pthread_mutex_trylock(&s->lanes[(start + i) % n].lock))
			l = &s->lanes[(start + i) % n];
	if (!l) {
		l = &s->lanes[start % n];
		pthread_mutex_lock(&l->lock);
	}
	busy = __atomic_add_fetch(&s->lanes_busy, 1, __ATOMIC_RELAXED);
	peak = __atomic_load_n(&s->lanes_peak, __ATOMIC_RELAXED);
	while (busy > peak &&
	       !__atomic_compare_exchange_n(&s->lanes_peak, &peak, busy, true,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	return l;
}

static void lane_put(struct mc_lane *l)
{
	__atomic_sub_fetch(&l->s->lanes_busy, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&l->lock);
}

/* ---- stream transports: pipelined requests -------------------------------- */

/* Connects pipe p if it is down (one caller does it; the others wait). */
static int pipe_ready(struct mc_server *s, struct mc_pipe *p, bool *fresh, char *err,
		      size_t errlen)
{
	uint64_t instance = 0;
	int rc;

	*fresh = false;
	if (mc_pipe_claim(p))
		return 0;
	rc = srv_handshake(s, &p->c, p->rx, &instance, err, errlen);
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

/* -EHOSTDOWN while s is marked down and not due for a probe; else 0, and
 * *probe says whether this is the probe (one attempt, no retry window). */
static int srv_check_down(struct mc_server *s, bool *probe)
{
	int rc = 0;

	pthread_mutex_lock(&s->ilock);
	*probe = s->down;
	if (s->down && leap_now_ms() < s->down_until)
		rc = -EHOSTDOWN;
	pthread_mutex_unlock(&s->ilock);
	return rc;
}

static void srv_mark_up(struct mc_server *s)
{
	pthread_mutex_lock(&s->ilock);
	s->down = false;
	s->probe_ms = 0;
	pthread_mutex_unlock(&s->ilock);
}

static void srv_mark_down(struct mc_server *s, int64_t start, const char *err)
{
	pthread_mutex_lock(&s->ilock);
	if (!s->down)
		mc_log(s->mc, "%s: giving up after %lld ms (%s); marked down, probing it",
		       s->addr, (long long)(leap_now_ms() - start), err);
	s->down = true;
	s->probe_ms =
		s->probe_ms ? (s->probe_ms * 2 > 2000 ? 2000 : s->probe_ms * 2) : 50;
	s->down_until = leap_now_ms() + s->probe_ms;
	pthread_mutex_unlock(&s->ilock);
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
 * r on s with reconnect-and-retry, as lane_request_ does for one-sided
 * transports: READ, WRITE and STATS are idempotent, so a request whose
 * connection failed is simply sent again on a new one.
 */
static int pipe_call(struct mc_server *s, struct mc_pipe_req *r)
{
	struct leap_mc *mc = s->mc;
	int64_t start = leap_now_ms(), deadline = start + mc->cfg.retry_ms;
	int backoff = 20, rc, attempt = 0;
	char err[256] = "";
	bool probe, fresh;

	rc = srv_check_down(s, &probe);
	if (rc)
		return rc;
	if (probe)
		deadline = start;
	for (;;) {
		struct mc_pipe *p = pick_pipe(s);

		rc = pipe_ready(s, p, &fresh, err, sizeof(err));
		if (rc == 0) {
			mc_pipe_submit(p, r);
			rc = check_instance(s, r, mc_pipe_wait(r));
			if (rc == 0) {
				if (probe)
					srv_mark_up(s);
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
		if (attempt++ == 0)
			mc_log(mc, "%s; retrying for up to %d ms", err, mc->cfg.retry_ms);
		COUNT(mc, retries, 1);
		nanosleep(&(struct timespec){0, backoff * 1000000L}, NULL);
		backoff = backoff * 2 > 500 ? 500 : backoff * 2;
	}
	srv_mark_down(s, start, err);
	return rc < 0 ? rc : -EIO;
}

/*
 * Starts r on s without waiting for it (stream transports); srv_finish
 * waits.  A request that cannot start now completes at once with an error
 * and srv_finish takes the slow path.
 */
static void pipe_start(struct mc_server *s, struct mc_pipe_req *r)
{
	char err[256];
	bool probe, fresh;
	struct mc_pipe *p;
	int rc = srv_check_down(s, &probe);

	r->p = NULL;
	r->done = 1;
	r->rc = rc;
	if (rc || probe) {
		if (!rc)
			r->rc = -ENOTCONN; /* the probe is pipe_call's */
		return;
	}
	p = pick_pipe(s);
	rc = pipe_ready(s, p, &fresh, err, sizeof(err));
	if (rc) {
		r->rc = -ENOTCONN;
		return;
	}
	mc_pipe_submit(p, r);
}

static int pipe_finish(struct mc_server *s, struct mc_pipe_req *r)
{
	int rc = r->p ? check_instance(s, r, mc_pipe_wait(r)) : r->rc;

	if (rc == -ENOSPC)
		log_nospace(s);

	if (rc == 0 || rc == -ENOSPC || rc == -EHOSTDOWN)
		return rc;
	return pipe_call(s, r);
}

/* ---- READ / WRITE of one chunk on one server ----------------------------- */

struct io_arg {
	unsigned op;
	uint32_t count;
	const uint64_t *offset;
};

static long build_io(struct mc_lane *l, uint64_t id, void *p)
{
	struct io_arg *a = p;

	return leap_wire_enc_io_req(l->tx, sizeof(l->tx), a->op, id, l->s->mc->cfg.dev,
				    a->count, a->offset);
}

static long build_stats(struct mc_lane *l, uint64_t id, void *p)
{
	(void)p;
	return leap_wire_enc_empty(l->tx, sizeof(l->tx), LEAP_WOP_STATS, 0, id);
}

/* ---- one-sided transports (RDMA): MAP, then RDMA READ/WRITE ------------- */

struct page_arg {
	unsigned op;
	uint32_t count;
	const uint64_t *offset;
	uint8_t *const *out; /* READ */
	uint64_t *present;   /* READ */
	const void *pages;   /* WRITE */
};

/* Learns with one MAP where the pages not known yet live on l's server, allocating
 * them for a write.  The decoder has checked every index against the
 * exported region; the region must not change within a connection. */
static int lane_map(struct mc_lane *l, const uint64_t *offset, uint32_t count, bool alloc)
{
	struct mc_server *s = l->s;
	uint64_t need[LEAP_WIRE_MAX_BATCH], id;
	struct leap_wire_msg m;
	struct iovec iov;
	uint32_t n = 0;
	long len;
	int rc;

	for (uint32_t i = 0; i < count; i++)
		if (!l->ridx[offset[i] / LEAP_WIRE_PAGE_SIZE])
			need[n++] = offset[i];
	if (!n)
		return 0;
	id = __atomic_add_fetch(&s->next_id, 1, __ATOMIC_RELAXED);
	len = leap_wire_enc_map_req(l->tx, sizeof(l->tx), id, s->mc->cfg.dev, n,
				    alloc ? LEAP_WMAP_ALLOC : 0, need);
	if (len < 0)
		return -EINVAL;
	iov = (struct iovec){l->tx, (size_t)len};
	rc = lane_roundtrip(l, &iov, 1, id, LEAP_WOP_MAP, &m);
	if (rc)
		return rc;
	if (m.u.map.count != n || m.u.map.dev != s->mc->cfg.dev)
		return -EPROTO;
	if (l->have_region &&
	    (m.u.map.rkey != l->region.rkey || m.u.map.base != l->region.base ||
	     m.u.map.len != l->region.len ||
	     l->fh_mode != !!(m.u.map.flags & LEAP_WMAP_REP_FH)))
		return -EPROTO;
	l->region = (struct leap_export){m.u.map.base, m.u.map.len, m.u.map.rkey};
	l->have_region = true;
	l->fh_mode = m.u.map.flags & LEAP_WMAP_REP_FH;
	/* Lanes beyond the first only for a server without a pin budget. */
	if (!__atomic_load_n(&s->mode_known, __ATOMIC_RELAXED)) {
		__atomic_store_n(&s->fh_server, l->fh_mode, __ATOMIC_RELAXED);
		__atomic_store_n(&s->mode_known, true, __ATOMIC_RELEASE);
	}
	for (uint32_t j = 0; j < n; j++) {
		if (m.u.map.present >> j & 1)
			l->ridx[need[j] / LEAP_WIRE_PAGE_SIZE] = m.u.map.idx[j] + 1;
		else if (alloc)
			return -EPROTO; /* an allocating MAP maps all or answers NOSPACE
					 */
	}
	return 0;
}

/*
 * One FH_MOVE round trip: unpin/pin as the client table asked (both empty:
 * the geometry only).  The reply's geometry must be the MAP region's, so
 * every page MAP placed lies inside exactly one region of it.
 */
static int lane_fh_move(struct mc_lane *l, const uint32_t *unpin, uint32_t nunpin,
			const uint32_t *pin, uint32_t npin, struct leap_wire_msg *m)
{
	uint64_t id = __atomic_add_fetch(&l->s->next_id, 1, __ATOMIC_RELAXED);
	struct iovec iov;
	long len;
	int rc;

	len = leap_wire_enc_fh_req(l->tx, sizeof(l->tx), id, nunpin, unpin, npin, pin);
	if (len < 0)
		return -EINVAL;
	iov = (struct iovec){l->tx, (size_t)len};
	rc = lane_roundtrip(l, &iov, 1, id, LEAP_WOP_FH_MOVE, m);
	if (rc)
		return rc;
	if (m->u.fh.base != l->region.base || m->u.fh.size != l->region.len ||
	    (l->fh && (m->u.fh.region_size != l->fh_rs)) ||
	    (m->u.fh.status == 0 && m->u.fh.npin != npin))
		return -EPROTO;
	return 0;
}

/* The firehose table, set up with the server's geometry on first use. */
static int lane_fh_table(struct mc_lane *l)
{
	struct mc_server *s = l->s;
	struct leap_wire_msg m;
	int rc;

	if (l->fh)
		return 0;
	rc = lane_fh_move(l, NULL, 0, NULL, 0, &m);
	if (rc)
		return rc;
	if (m.u.fh.status) {
		mc_log(s->mc, "%s: no firehose share for this client: %s%s", s->addr,
		       strerror((int)m.u.fh.status),
		       m.u.fh.status == EUSERS ? " (more clients than its --fh-clients)"
					       : "");
		return -EPROTO;
	}
	/* Regions numbered from the store's base (offsets), as the server's. */
	l->fh = leap_fh_client_new(0, m.u.fh.size, m.u.fh.region_size, m.u.fh.share);
	if (!l->fh)
		return -ENOMEM;
	l->fh_rs = m.u.fh.region_size;
	return 0;
}

/* A firehose to the region holding the remote page raddr: its rkey, the
 * acquisition in *a to release once the operation is done. */
static int lane_fh_acquire(struct mc_lane *l, uint64_t raddr, struct leap_fh_acquire *a,
			   uint32_t *rkey)
{
	struct mc_server *s = l->s;
	struct leap_reg_key keys[LEAP_WIRE_FH_MAX];
	struct leap_wire_msg m;
	int rc;

	rc = lane_fh_table(l);
	if (rc)
		return rc;
	rc = leap_fh_client_acquire(l->fh, raddr - l->region.base, LEAP_WIRE_PAGE_SIZE,
				    a);
	if (rc == 1) {
		rc = lane_fh_move(l, a->unpin, a->nunpin, a->pin, a->npin, &m);
		if (rc)
			return rc;
		COUNT(s->mc, fh_moves, 1);
		COUNT(s->mc, fh_pins, a->npin);
		for (uint32_t i = 0; i < m.u.fh.npin; i++)
			keys[i] = (struct leap_reg_key){.rkey = m.u.fh.rkey[i]};
		rc = leap_fh_client_moved(l->fh, a, -(int)m.u.fh.status,
					  m.u.fh.flags & LEAP_WFH_UNPINNED, keys);
		if (rc) {
			mc_log(s->mc, "%s: firehose move refused: %s", s->addr,
			       strerror(-rc));
			return -EPROTO;
		}
	} else if (rc) {
		/* One page, one firehose in use at a time: never EAGAIN/E2BIG. */
		return -EPROTO;
	}
	/* keys[i] is region first + i's; a page spans one region. */
	*rkey = a->keys[0].rkey;
	return 0;
}

/*
 * The pages of one request through firehoses: runs of pages in the same
 * region, one RDMA operation per run, its firehose held only meanwhile (so
 * this client never has more than one in use and a move can always free
 * room).
 */
static int fh_pages(struct mc_lane *l, unsigned op, const uint64_t *raddr, uint32_t k,
		    uint8_t *const *out, const void *pages, int64_t deadline)
{
	const struct leap_transport *t = l->c.t;
	int rc = lane_fh_table(l); /* the region size, before any run */

	if (rc)
		return rc;
	for (uint32_t i = 0, j; i < k; i = j) {
		uint64_t r = (raddr[i] - l->region.base) / l->fh_rs;
		struct leap_fh_acquire a;
		uint32_t rkey;

		for (j = i + 1; j < k && (raddr[j] - l->region.base) / l->fh_rs == r; j++)
			;
		rc = lane_fh_acquire(l, raddr[i], &a, &rkey);
		if (rc)
			return rc;
		if (op == LEAP_WOP_WRITE)
			rc = t->write_pages(&l->c, rkey, raddr + i, j - i,
					    (const uint8_t *)pages +
						    (size_t)i * LEAP_WIRE_PAGE_SIZE,
					    deadline);
		else
			rc = t->read_pages(&l->c, rkey, raddr + i, j - i, out + i,
					   deadline);
		leap_fh_client_release(l->fh, &a);
		if (rc)
			return rc;
	}
	return 0;
}

/* One "r" record per contiguous local buffer of n pages at out[] (or
 * pages, n consecutive ones). */
static void trace_bufs(struct leap_mc *mc, uint8_t *const *out, const void *pages,
		       uint32_t n)
{
	struct leap_regtrace_rec rec = {.op = LEAP_REGTRACE_REF};
	char line[96];

	if (!mc->trace || !n)
		return;
	pthread_mutex_lock(&mc->trace_lock);
	for (uint32_t i = 0, j; i < n; i = j) {
		uint64_t a = pages ? (uintptr_t)pages : (uintptr_t)out[i];

		j = pages ? n : i + 1;
		while (!pages && j < n &&
		       (uintptr_t)out[j] == a + (uint64_t)(j - i) * LEAP_WIRE_PAGE_SIZE)
			j++;
		rec.addr = a;
		rec.len = (uint64_t)(j - i) * LEAP_WIRE_PAGE_SIZE;
		if (leap_regtrace_format(&rec, line, sizeof(line)) > 0)
			fputs(line, mc->trace);
	}
	pthread_mutex_unlock(&mc->trace_lock);
}

static int try_pages(struct mc_lane *l, void *p)
{
	struct page_arg *a = p;
	const struct leap_transport *t = l->c.t;
	int64_t deadline = leap_now_ms() + l->s->mc->cfg.io_timeout_ms;
	uint64_t raddr[LEAP_WIRE_MAX_BATCH], present = 0;
	uint8_t *out[LEAP_WIRE_MAX_BATCH];
	uint32_t k = 0;
	int rc;

	rc = lane_map(l, a->offset, a->count, a->op == LEAP_WOP_WRITE);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < a->count; i++) {
		uint32_t r = l->ridx[a->offset[i] / LEAP_WIRE_PAGE_SIZE];

		if (!r) {
			if (a->op == LEAP_WOP_WRITE)
				return -EPROTO;
			memset(a->out[i], 0, LEAP_WIRE_PAGE_SIZE);
			continue;
		}
		raddr[k] = l->region.base + (uint64_t)(r - 1) * LEAP_WIRE_PAGE_SIZE;
		if (a->op == LEAP_WOP_READ)
			out[k] = a->out[i];
		present |= 1ULL << i;
		k++;
	}
	trace_bufs(l->s->mc, out, a->op == LEAP_WOP_WRITE ? a->pages : NULL, k);
	if (l->fh_mode) {
		rc = fh_pages(l, a->op, raddr, k, out, a->pages, deadline);
		if (rc)
			return rc;
		if (a->op == LEAP_WOP_READ)
			*a->present = present;
		return 0;
	}
	if (a->op == LEAP_WOP_WRITE)
		return t->write_pages(&l->c, l->region.rkey, raddr, k, a->pages,
				      deadline);
	if (k) {
		rc = t->read_pages(&l->c, l->region.rkey, raddr, k, out, deadline);
		if (rc)
			return rc;
	}
	*a->present = present;
	return 0;
}

/* One READ or WRITE through a lane (one-sided transports); *instance the
 * server instance that carried it. */
static int lane_pages(struct mc_server *s, struct page_arg *pa, uint64_t *instance)
{
	struct mc_lane *l = lane_take(s);
	struct leap_wire_msg m;
	int rc = lane_request_(l, NULL, try_pages, pa, NULL, 0, pa->op, &m);

	*instance = l->instance;
	lane_put(l);
	return rc;
}

/* One READ or WRITE on one server, started now and finished later: with
 * pipes the request is in flight meanwhile; on a one-sided transport it is
 * done (synchronously) at start. */
struct srv_io {
	struct mc_server *s;
	struct mc_pipe_req r;
	bool sync;
	int rc;
};

/*
 * FREE on a one-sided transport's connection; the pages' MAP answers go.
 * Every lane is held meanwhile (taken in order; no caller holds a lane
 * while it waits for another), so none can learn a page's old slot between
 * the forgetting and the FREE and later write into a slot the server has
 * handed to another page.
 */
static int srv_free_sync(struct mc_server *s, const uint64_t *offset, uint32_t count)
{
	struct io_arg a = {LEAP_WOP_FREE, count, offset};
	struct leap_wire_msg m;
	int rc;

	for (unsigned j = 0; j < s->nlanes; j++) {
		pthread_mutex_lock(&s->lanes[j].lock);
		for (uint32_t i = 0; i < count; i++)
			s->lanes[j].ridx[offset[i] / LEAP_WIRE_PAGE_SIZE] = 0;
	}
	rc = lane_request(&s->lanes[0], build_io, &a, NULL, 0, LEAP_WOP_FREE, &m);
	if (rc == 0 && (m.u.io.count != count || m.u.io.dev != s->mc->cfg.dev))
		rc = -EPROTO;
	for (unsigned j = s->nlanes; j-- > 0;)
		pthread_mutex_unlock(&s->lanes[j].lock);
	return rc;
}

static void srv_io_start(struct srv_io *io, struct mc_server *s, unsigned op,
			 bool prefetch, const uint64_t *offset, uint32_t count,
			 uint8_t *const *out, const void *pages)
{
	io->s = s;
	io->r = (struct mc_pipe_req){.op = op,
				     .prefetch = prefetch,
				     .dev = s->mc->cfg.dev,
				     .count = count,
				     .offset = offset,
				     .pages = pages,
				     .out = out};
	io->sync = !s->pipes;
	if (!io->sync)
		pipe_start(s, &io->r);
	else if (op == LEAP_WOP_FREE)
		io->rc = srv_free_sync(s, offset, count);
	else {
		struct page_arg pa = {.op = op,
				      .count = count,
				      .offset = offset,
				      .out = out,
				      .present = &io->r.present,
				      .pages = pages};

		/* The instance, for leap_mc_write's check as with pipes. */
		io->rc = lane_pages(s, &pa, &io->r.instance);
	}
}

static int srv_io_finish(struct srv_io *io)
{
	return io->sync ? io->rc : pipe_finish(io->s, &io->r);
}

static int srv_write(struct mc_server *s, const uint64_t *offset, uint32_t count,
		     const void *pages)
{
	struct srv_io io;

	srv_io_start(&io, s, LEAP_WOP_WRITE, false, offset, count, NULL, pages);
	return srv_io_finish(&io);
}

/* Reads count pages; out[i] gets page i; *present the server's mask. */
static int srv_read(struct mc_server *s, const uint64_t *offset, uint32_t count,
		    uint8_t *const *out, uint64_t *present)
{
	struct srv_io io;
	int rc;

	srv_io_start(&io, s, LEAP_WOP_READ, false, offset, count, out, NULL);
	rc = srv_io_finish(&io);
	*present = io.r.present;
	return rc;
}

/* ---- the device --------------------------------------------------------- */

static int check_range(struct leap_mc *mc, uint64_t off, size_t len)
{
	if (off % LEAP_WIRE_PAGE_SIZE || len % LEAP_WIRE_PAGE_SIZE ||
	    off / LEAP_WIRE_PAGE_SIZE > mc->cfg.dev_pages ||
	    len / LEAP_WIRE_PAGE_SIZE > mc->cfg.dev_pages - off / LEAP_WIRE_PAGE_SIZE)
		return -EINVAL;
	return 0;
}

/* Pages from pg on that share a stripe, at most a batch. */
static uint32_t chunk_pages(struct leap_mc *mc, uint64_t pg, uint64_t left)
{
	uint64_t n = mc->cfg.stripe_pages - pg % mc->cfg.stripe_pages;

	if (n > left)
		n = left;
	return n > LEAP_WIRE_MAX_BATCH ? LEAP_WIRE_MAX_BATCH : (uint32_t)n;
}

static void log_io_error(struct leap_mc *mc, const char *what, uint64_t pg,
			 const char *why)
{
	int64_t now = leap_now_ms();
	bool say;

	pthread_mutex_lock(&mc->stat_lock);
	mc->cnt.io_errors++;
	/* One line a second at most: a dead server under swap fails every call. */
	say = now - mc->last_err_log >= 1000;
	if (say) {
		mc->last_err_log = now;
		if (mc->err_suppressed)
			mc_log(mc, "(%llu similar errors not shown)",
			       (unsigned long long)mc->err_suppressed);
		mc->err_suppressed = 0;
	} else {
		mc->err_suppressed++;
	}
	pthread_mutex_unlock(&mc->stat_lock);
	if (say)
		mc_log(mc, "I/O error: %s of page %llu (offset %llu): %s", what,
		       (unsigned long long)pg,
		       (unsigned long long)pg * LEAP_WIRE_PAGE_SIZE, why);
}

static pthread_mutex_t *chunk_lock(struct leap_mc *mc, uint64_t pg)
{
	return &mc->chunk_lock[(pg / mc->cfg.stripe_pages) % CHUNK_LOCKS];
}

/* ---- re-replication (r = 2) --------------------------------------------- */

/*
 * Copies the pages of chunk [pg, pg + n) that only replica src holds to
 * replica dst.  Under the chunk's lock, so no write of these pages runs
 * meanwhile: what src holds is the latest version and stays so until the
 * copy is marked valid.  Returns pages copied; *under counts those left.
 */
static uint32_t resilver_chunk(struct leap_mc *mc, uint64_t pg, uint32_t n, unsigned src,
			       unsigned dst, uint64_t *under)
{
	unsigned ssrv = leap_mc_place(pg, mc->cfg.stripe_pages, mc->cfg.nservers, src);
	unsigned dsrv = leap_mc_place(pg, mc->cfg.stripe_pages, mc->cfg.nservers, dst);
	uint64_t offset[LEAP_WIRE_MAX_BATCH], present = 0;
	uint8_t *out[LEAP_WIRE_MAX_BATCH];
	uint32_t cnt = 0, m = 0;
	struct mc_server *d = &mc->srv[dsrv];

	for (uint32_t i = 0; i < n; i++) {
		uint8_t st = __atomic_load_n(&mc->pstate[pg + i], __ATOMIC_RELAXED);

		if ((st & (PS_WRITTEN | PS_WRITING)) == PS_WRITTEN &&
		    (st & (PS_VALID0 << src)) && !(st & (PS_VALID0 << dst))) {
			offset[cnt] = (pg + i) * LEAP_WIRE_PAGE_SIZE;
			out[cnt] = mc->rs_buf + (size_t)cnt * LEAP_WIRE_PAGE_SIZE;
			cnt++;
		}
	}
	if (!cnt)
		return 0;
	*under += cnt;
	/* A replica known down is skipped without I/O until it answers again. */
	if (d->down && leap_now_ms() < d->down_until)
		return 0;
	if (srv_read(&mc->srv[ssrv], offset, cnt, out, &present))
		return 0;
	/* Keep the pages src still had (one it lost is read_chunk's business). */
	for (uint32_t j = 0; j < cnt; j++)
		if (present >> j & 1) {
			if (m != j)
				memcpy(mc->rs_buf + (size_t)m * LEAP_WIRE_PAGE_SIZE,
				       mc->rs_buf + (size_t)j * LEAP_WIRE_PAGE_SIZE,
				       LEAP_WIRE_PAGE_SIZE);
			offset[m++] = offset[j];
		}
	if (!m || srv_write(d, offset, m, mc->rs_buf))
		return 0;
	for (uint32_t j = 0; j < m; j++)
		__atomic_or_fetch(&mc->pstate[offset[j] / LEAP_WIRE_PAGE_SIZE],
				  (uint8_t)(PS_VALID0 << dst), __ATOMIC_RELAXED);
	*under -= m;
	return m;
}

static void resilver_scan(struct leap_mc *mc)
{
	uint64_t under = 0, copied = 0;

	for (uint64_t pg = 0; pg < mc->cfg.dev_pages;) {
		uint32_t n = chunk_pages(mc, pg, mc->cfg.dev_pages - pg);
		bool any = false;

		/* Cheap unlocked look first: most chunks are fully replicated. */
		for (uint32_t i = 0; i < n && !any; i++) {
			uint8_t st =
				__atomic_load_n(&mc->pstate[pg + i], __ATOMIC_RELAXED);

			any = (st & PS_WRITTEN) && (st & (PS_VALID0 | PS_VALID0 << 1)) !=
							   (PS_VALID0 | PS_VALID0 << 1);
		}
		if (any) {
			pthread_mutex_lock(chunk_lock(mc, pg));
			copied += resilver_chunk(mc, pg, n, 0, 1, &under);
			copied += resilver_chunk(mc, pg, n, 1, 0, &under);
			pthread_mutex_unlock(chunk_lock(mc, pg));
		}
		pg += n;
	}
	pthread_mutex_lock(&mc->stat_lock);
	mc->cnt.under_replicated = under;
	mc->cnt.resilvered += copied;
	pthread_mutex_unlock(&mc->stat_lock);
	if (copied)
		mc_log(mc, "re-replicated %llu pages (%llu still on one replica)",
		       (unsigned long long)copied, (unsigned long long)under);
}

/*
 * A server marked down is probed here too (a STATS request, once its probe
 * time has come), not only by the I/O that happens to reach it: a server
 * that comes back empty while nothing reads from it (its pages all have
 * their other replica) must still show its new instance id, so that its
 * pages are forgotten and copied back to it before the other replica fails.
 */
static void probe_down_servers(struct leap_mc *mc)
{
	uint64_t value[LEAP_WIRE_MAX_STATS];

	for (unsigned i = 0; i < mc->cfg.nservers; i++) {
		struct mc_server *s = &mc->srv[i];
		bool due;

		pthread_mutex_lock(&s->ilock);
		due = s->down && leap_now_ms() >= s->down_until;
		pthread_mutex_unlock(&s->ilock);
		if (due)
			leap_mc_server_stats(mc, i, value);
	}
}

static void *resilver_main(void *arg)
{
	struct leap_mc *mc = arg;

	pthread_mutex_lock(&mc->rs_lock);
	while (!mc->resilver_stop) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 200 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&mc->rs_cond, &mc->rs_lock, &ts);
		if (mc->resilver_stop)
			break;
		pthread_mutex_unlock(&mc->rs_lock);
		probe_down_servers(mc);
		resilver_scan(mc);
		pthread_mutex_lock(&mc->rs_lock);
	}
	pthread_mutex_unlock(&mc->rs_lock);
	return NULL;
}

int leap_mc_write(struct leap_mc *mc, uint64_t off, const void *buf, size_t len)
{
	uint64_t pg = off / LEAP_WIRE_PAGE_SIZE, left = len / LEAP_WIRE_PAGE_SIZE;
	const uint8_t *p = buf;

	if (check_range(mc, off, len))
		return -EINVAL;
	COUNT(mc, writes, 1);
	while (left) {
		uint32_t n = chunk_pages(mc, pg, left);
		uint64_t offset[LEAP_WIRE_MAX_BATCH];
		uint8_t valid = 0;
		struct srv_io io[2];

		pthread_mutex_t *cl = chunk_lock(mc, pg);

		for (uint32_t i = 0; i < n; i++)
			offset[i] = (pg + i) * LEAP_WIRE_PAGE_SIZE;
		pthread_mutex_lock(cl);
		/* Until every replica has answered, no copy is known to be current. */
		for (uint32_t i = 0; i < n; i++)
			__atomic_store_n(&mc->pstate[pg + i], PS_WRITTEN | PS_WRITING,
					 __ATOMIC_RELAXED);
		/* Both replicas at once; the page counts as written (valid on a
		 * replica) only once that replica has acknowledged it. */
		for (unsigned k = 0; k < mc->cfg.replicas; k++) {
			unsigned si = leap_mc_place(pg, mc->cfg.stripe_pages,
						    mc->cfg.nservers, k);

			srv_io_start(&io[k], &mc->srv[si], LEAP_WOP_WRITE, false, offset,
				     n, NULL, p);
		}
		for (unsigned k = 0; k < mc->cfg.replicas; k++)
			if (srv_io_finish(&io[k]) == 0)
				valid |= (uint8_t)(PS_VALID0 << k);
		for (uint32_t i = 0; i < n; i++)
			__atomic_store_n(&mc->pstate[pg + i], PS_WRITTEN | valid,
					 __ATOMIC_SEQ_CST);
		/* A replica that restarted since it acknowledged does not hold
		 * these pages: its handshake may have forgotten them just before
		 * the store above. */
		for (unsigned k = 0; k < mc->cfg.replicas; k++)
			if ((valid & (PS_VALID0 << k)) &&
			    io[k].r.instance != __atomic_load_n(&io[k].s->instance,
								__ATOMIC_SEQ_CST)) {
				valid &= (uint8_t) ~(PS_VALID0 << k);
				for (uint32_t i = 0; i < n; i++)
					__atomic_and_fetch(&mc->pstate[pg + i],
							   (uint8_t) ~(PS_VALID0 << k),
							   __ATOMIC_SEQ_CST);
				/* Once more, to the new instance (re-replication
				 * would copy it later otherwise). */
				srv_io_start(&io[k], io[k].s, LEAP_WOP_WRITE, false,
					     offset, n, NULL, p);
				if (srv_io_finish(&io[k]) == 0 &&
				    io[k].r.instance ==
					    __atomic_load_n(&io[k].s->instance,
							    __ATOMIC_SEQ_CST)) {
					valid |= (uint8_t)(PS_VALID0 << k);
					for (uint32_t i = 0; i < n; i++)
						__atomic_or_fetch(
							&mc->pstate[pg + i],
							(uint8_t)(PS_VALID0 << k),
							__ATOMIC_SEQ_CST);
				}
			}
		pthread_mutex_unlock(cl);
		if (!valid) {
			log_io_error(mc, "write", pg, "no replica reachable");
			return -EIO;
		}
		if (valid != (uint8_t)(((1U << mc->cfg.replicas) - 1) << 1))
			COUNT(mc, degraded_writes, 1);
		COUNT(mc, pages_written, n);
		pg += n;
		left -= n;
		p += (size_t)n * LEAP_WIRE_PAGE_SIZE;
	}
	return 0;
}

/*
 * Reading one chunk (pages of one stripe, at most a batch): the pages not
 * yet served are asked from each replica in turn.  The first request of
 * every chunk of a call goes out at once (pipelined); a chunk that needs a
 * second replica asks it afterwards.
 */
struct rchunk {
	uint64_t pg;
	uint32_t n, cnt;
	uint8_t *p;
	uint64_t need;
	unsigned k; /* replica asked now */
	uint32_t idx[LEAP_WIRE_MAX_BATCH];
	uint64_t offset[LEAP_WIRE_MAX_BATCH];
	uint8_t *out[LEAP_WIRE_MAX_BATCH];
	struct srv_io io;
};

/* Which pages need a server; never-written ones read as zeros. */
static int chunk_init(struct leap_mc *mc, struct rchunk *c, uint64_t pg, uint32_t n,
		      uint8_t *p)
{
	c->pg = pg;
	c->n = n;
	c->p = p;
	c->need = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint8_t st = __atomic_load_n(&mc->pstate[pg + i], __ATOMIC_RELAXED);

		/* Only a speculative reader (a prefetch) can race with a write of
		 * the same page: tell it so, quietly, rather than guess. */
		if (st & PS_WRITING)
			return -EBUSY;
		if (st & PS_WRITTEN)
			c->need |= 1ULL << i;
		else
			memset(p + (size_t)i * LEAP_WIRE_PAGE_SIZE, 0,
			       LEAP_WIRE_PAGE_SIZE);
	}
	return 0;
}

/* The pages replica k can serve (it holds their latest version). */
static uint32_t chunk_build(struct leap_mc *mc, struct rchunk *c, unsigned k)
{
	c->k = k;
	c->cnt = 0;
	for (uint32_t i = 0; i < c->n; i++) {
		uint8_t st = __atomic_load_n(&mc->pstate[c->pg + i], __ATOMIC_RELAXED);

		if ((c->need >> i & 1) && (st & (PS_VALID0 << k))) {
			c->idx[c->cnt] = i;
			c->offset[c->cnt] = (c->pg + i) * LEAP_WIRE_PAGE_SIZE;
			c->out[c->cnt++] = c->p + (size_t)i * LEAP_WIRE_PAGE_SIZE;
		}
	}
	return c->cnt;
}

static void chunk_start(struct leap_mc *mc, struct rchunk *c, bool prefetch)
{
	unsigned si = leap_mc_place(c->pg, mc->cfg.stripe_pages, mc->cfg.nservers, c->k);

	srv_io_start(&c->io, &mc->srv[si], LEAP_WOP_READ, prefetch, c->offset, c->cnt,
		     c->out, NULL);
}

/* Takes replica c->k's answer (rc, present). */
static void chunk_absorb(struct leap_mc *mc, struct rchunk *c, int rc)
{
	unsigned k = c->k;
	unsigned si = leap_mc_place(c->pg, mc->cfg.stripe_pages, mc->cfg.nservers, k);
	uint64_t present = c->io.r.present;

	if (rc)
		return;
	for (uint32_t j = 0; j < c->cnt; j++) {
		if (present >> j & 1) {
			c->need &= ~(1ULL << c->idx[j]);
			if (k > 0)
				COUNT(mc, failovers, 1);
			continue;
		}
		/* Written here and acknowledged, now absent: the server lost it. */
		__atomic_and_fetch(&mc->pstate[c->pg + c->idx[j]],
				   (uint8_t) ~(PS_VALID0 << k), __ATOMIC_RELAXED);
		COUNT(mc, lost_pages, 1);
		mc_log(mc, "%s lost page %llu", mc->srv[si].addr,
		       (unsigned long long)(c->pg + c->idx[j]));
	}
}

/* After the first answer: the other replicas in turn, then the verdict. */
static int chunk_finish(struct leap_mc *mc, struct rchunk *c, bool prefetch)
{
	for (unsigned k = c->k + 1; k < mc->cfg.replicas && c->need; k++) {
		if (!chunk_build(mc, c, k))
			continue;
		chunk_start(mc, c, prefetch);
		chunk_absorb(mc, c, srv_io_finish(&c->io));
	}
	if (c->need) {
		log_io_error(mc, "read", c->pg + (uint64_t)__builtin_ctzll(c->need),
			     "no replica holding its latest version answered");
		return -EIO;
	}
	return 0;
}

/* Chunks in flight at once per call: the largest FUSE or NBD request
 * (1 MiB) in 16-page stripes. */
#define READ_CHUNKS 16

static int mc_read(struct leap_mc *mc, uint64_t off, void *buf, size_t len, bool prefetch)
{
	uint64_t pg = off / LEAP_WIRE_PAGE_SIZE, left = len / LEAP_WIRE_PAGE_SIZE;
	uint8_t *p = buf;
	/* On the stack (~25 KiB): no allocation on the swap path. */
	struct rchunk ch[READ_CHUNKS];
	int rc = 0;

	if (check_range(mc, off, len))
		return -EINVAL;
	COUNT(mc, reads, 1);
	while (left && !rc) {
		unsigned nch = 0, done = 0;
		uint64_t pages = 0;

		for (; left && nch < READ_CHUNKS; nch++) {
			uint32_t n = chunk_pages(mc, pg, left);

			rc = chunk_init(mc, &ch[nch], pg, n, p);
			if (rc)
				break;
			pg += n;
			left -= n;
			pages += n;
			p += (size_t)n * LEAP_WIRE_PAGE_SIZE;
		}
		if (rc)
			break;
		/* Every chunk's first request goes out before any is waited for. */
		for (unsigned i = 0; i < nch; i++) {
			struct rchunk *c = &ch[i];
			unsigned k = 0;

			while (c->need && k < mc->cfg.replicas && !chunk_build(mc, c, k))
				k++;
			c->k = k;
			if (c->need && k < mc->cfg.replicas)
				chunk_start(mc, c, prefetch);
		}
		for (; done < nch; done++) {
			struct rchunk *c = &ch[done];

			if (c->need && c->k < mc->cfg.replicas)
				chunk_absorb(mc, c, srv_io_finish(&c->io));
			if (!rc)
				rc = chunk_finish(mc, c, prefetch);
		}
		if (!rc)
			COUNT(mc, pages_read, pages);
	}
	return rc;
}

int leap_mc_read(struct leap_mc *mc, uint64_t off, void *buf, size_t len)
{
	return mc_read(mc, off, buf, len, false);
}

int leap_mc_prefetch(struct leap_mc *mc, uint64_t off, void *buf, size_t len)
{
	return mc_read(mc, off, buf, len, true);
}

/*
 * Scattered pages (a prefetch window), in the prefetch class: the pages
 * each server can serve go out as one READ per server (a READ names any
 * offsets), all servers at once.  A page whose first replica does not
 * answer is read on its own, through the other replicas.
 */
int leap_mc_prefetch_pages(struct leap_mc *mc, const uint64_t *pg, uint32_t n,
			   uint8_t *const *out, uint64_t *ok)
{
	struct {
		uint32_t cnt;
		uint32_t idx[LEAP_WIRE_MAX_BATCH];
		uint64_t offset[LEAP_WIRE_MAX_BATCH];
		uint8_t *out[LEAP_WIRE_MAX_BATCH];
		struct srv_io io;
	} req[LEAP_MC_MAX_SERVERS];
	uint64_t need = 0;

	*ok = 0;
	if (n > LEAP_WIRE_MAX_BATCH)
		return -EINVAL;
	for (uint32_t i = 0; i < n; i++)
		if (pg[i] >= mc->cfg.dev_pages)
			return -EINVAL;
	for (unsigned si = 0; si < mc->cfg.nservers; si++)
		req[si].cnt = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint8_t st = __atomic_load_n(&mc->pstate[pg[i]], __ATOMIC_RELAXED);
		unsigned k = 0;

		if (st & PS_WRITING)
			continue; /* a write is in flight: no guess */
		if (!(st & PS_WRITTEN)) {
			memset(out[i], 0, LEAP_WIRE_PAGE_SIZE);
			*ok |= 1ULL << i;
			continue;
		}
		need |= 1ULL << i;
		while (k < mc->cfg.replicas && !(st & (PS_VALID0 << k)))
			k++;
		if (k == mc->cfg.replicas)
			continue;
		{
			unsigned si = leap_mc_place(pg[i], mc->cfg.stripe_pages,
						    mc->cfg.nservers, k);
			uint32_t c = req[si].cnt++;

			req[si].idx[c] = i;
			req[si].offset[c] = pg[i] * LEAP_WIRE_PAGE_SIZE;
			req[si].out[c] = out[i];
		}
	}
	for (unsigned si = 0; si < mc->cfg.nservers; si++)
		if (req[si].cnt)
			srv_io_start(&req[si].io, &mc->srv[si], LEAP_WOP_READ, true,
				     req[si].offset, req[si].cnt, req[si].out, NULL);
	for (unsigned si = 0; si < mc->cfg.nservers; si++) {
		if (!req[si].cnt)
			continue;
		if (srv_io_finish(&req[si].io))
			continue;
		for (uint32_t j = 0; j < req[si].cnt; j++)
			if (req[si].io.r.present >> j & 1) {
				*ok |= 1ULL << req[si].idx[j];
				need &= ~(1ULL << req[si].idx[j]);
			}
	}
	/* The rest one by one, with failover (and lost-page accounting). */
	for (uint32_t i = 0; i < n; i++)
		if ((need >> i & 1) && mc_read(mc, pg[i] * LEAP_WIRE_PAGE_SIZE, out[i],
					       LEAP_WIRE_PAGE_SIZE, true) == 0)
			*ok |= 1ULL << i;
	COUNT(mc, pages_read, (uint64_t)__builtin_popcountll(*ok));
	return 0;
}

int leap_mc_check_capacity(struct leap_mc *mc, char *err, size_t errlen)
{
	uint64_t need[LEAP_MC_MAX_SERVERS] = {0};
	uint64_t sp = mc->cfg.stripe_pages, n = mc->cfg.dev_pages;

	/* Exactly what the placement puts on each server: stripe s on server
	 * s % N, and with r = 2 also on (s + 1) % N. */
	for (uint64_t st = 0; st * sp < n; st++) {
		uint64_t pages = n - st * sp < sp ? n - st * sp : sp;

		for (unsigned k = 0; k < mc->cfg.replicas; k++)
			need[leap_mc_place(st * sp, mc->cfg.stripe_pages,
					   mc->cfg.nservers, k)] += pages;
	}
	for (unsigned i = 0; i < mc->cfg.nservers; i++)
		if (mc->srv[i].hello && need[i] > mc->srv[i].capacity) {
			snprintf(err, errlen,
				 "%s serves %llu MiB but this device at %u replica%s "
				 "places %llu MiB on it: add servers, give them more "
				 "memory (leap-memd --size) or make the device smaller",
				 mc->srv[i].addr,
				 (unsigned long long)(mc->srv[i].capacity >> 8),
				 mc->cfg.replicas, mc->cfg.replicas > 1 ? "s" : "",
				 (unsigned long long)((need[i] + 255) >> 8));
			return -ENOSPC;
		}
	return 0;
}

int leap_mc_discard(struct leap_mc *mc, uint64_t off, size_t len)
{
	uint64_t pg = off / LEAP_WIRE_PAGE_SIZE, left = len / LEAP_WIRE_PAGE_SIZE;

	if (check_range(mc, off, len))
		return -EINVAL;
	while (left) {
		uint32_t n = chunk_pages(mc, pg, left);

		uint64_t offset[LEAP_WIRE_MAX_BATCH];
		struct srv_io io[2];

		for (uint32_t i = 0; i < n; i++)
			offset[i] = (pg + i) * LEAP_WIRE_PAGE_SIZE;
		/* Under the chunk lock: a re-replication copy in progress must not
		 * mark a page valid again after it was forgotten.  The servers free
		 * the slots before the discard returns, so a later write of these
		 * pages (on any connection) always lands after the FREE.  A server
		 * that does not answer keeps the old contents until the next write
		 * of the page (as before FREE existed): best effort. */
		pthread_mutex_lock(chunk_lock(mc, pg));
		for (uint32_t i = 0; i < n; i++)
			__atomic_store_n(&mc->pstate[pg + i], 0, __ATOMIC_RELAXED);
		for (unsigned k = 0; k < mc->cfg.replicas; k++)
			srv_io_start(&io[k],
				     &mc->srv[leap_mc_place(pg, mc->cfg.stripe_pages,
							    mc->cfg.nservers, k)],
				     LEAP_WOP_FREE, false, offset, n, NULL, NULL);
		for (unsigned k = 0; k < mc->cfg.replicas; k++)
			if (srv_io_finish(&io[k]))
				COUNT(mc, free_failures, 1);
		pthread_mutex_unlock(chunk_lock(mc, pg));
		COUNT(mc, pages_discarded, n);
		pg += n;
		left -= n;
	}
	return 0;
}

int leap_mc_server_stats(struct leap_mc *mc, unsigned idx, uint64_t *value)
{
	struct mc_server *s;
	struct leap_wire_msg m;
	struct mc_lane *l;
	int rc;

	if (idx >= mc->cfg.nservers)
		return -EINVAL;
	s = &mc->srv[idx];
	if (s->pipes) {
		struct mc_pipe_req r = {.op = LEAP_WOP_STATS, .stats = value};

		rc = pipe_call(s, &r);
		return rc ? rc : (int)r.nstats;
	}
	l = lane_take(s);
	rc = lane_request(l, build_stats, NULL, NULL, 0, LEAP_WOP_STATS, &m);
	if (rc == 0) {
		memcpy(value, m.u.stats.value, sizeof(uint64_t) * m.u.stats.n);
		rc = (int)m.u.stats.n;
	}
	lane_put(l);
	return rc;
}

void leap_mc_get_counters(struct leap_mc *mc, struct leap_mc_counters *out)
{
	pthread_mutex_lock(&mc->stat_lock);
	*out = mc->cnt;
	pthread_mutex_unlock(&mc->stat_lock);
	out->peak_inflight = 0;
	for (unsigned i = 0; i < mc->cfg.nservers; i++) {
		/* One-sided: the most lanes busy at once on one server. */
		unsigned lp = __atomic_load_n(&mc->srv[i].lanes_peak, __ATOMIC_RELAXED);

		if (lp > out->peak_inflight)
			out->peak_inflight = lp;
		for (unsigned j = 0; j < mc->srv[i].npipes; j++) {
			unsigned pk = __atomic_load_n(&mc->srv[i].pipes[j].peak,
						      __ATOMIC_RELAXED);

			if (pk > out->peak_inflight)
				out->peak_inflight = pk;
		}
	}
}

/*
 * cfg.state_file: the per-page state in a shared mapping of that file, so a
 * leap-swapd that dies leaves it behind and the next one reattaches.  What
 * each state byte means after a death, and why it is safe to trust:
 *
 *  - A page marked written with replica k valid: replica k acknowledged a
 *    write of its latest version (leap_mc_write stores VALID only after the
 *    acknowledgement) or a re-replication copy (resilver_chunk, the same).
 *    If that server restarted since, its instance id differs from the one
 *    in the file and the first handshake clears its bits (srv_handshake);
 *    with r = 2 the re-replication thread then copies the pages back from
 *    the other replica.  A page left on no replica reads as -EIO, with a
 *    log line: never zeros, never a stale copy.
 *  - A page marked PS_WRITING: a write was in flight when the process died.
 *    Its replicas hold the old version, the new one, or a mix (one replica
 *    acknowledged, the other not).  The kernel never got that request's
 *    completion, so it resends it (NBD requeues requests of a dead socket
 *    on reconnect) or fails it to its submitter (swap keeps the page dirty
 *    and in memory and writes it again later): nobody can legitimately
 *    read that page before it is written again.  leap_pstate_settle marks
 *    it written on no replica, so a read in between is an -EIO, not a
 *    guess, and the next write makes it whole.
 *  - A discard in flight cleared the bytes before freeing on the servers:
 *    the pages read as zeros, which is what a completed discard gives, and
 *    its completion was never seen either.
 */
static int mc_state_attach(struct leap_mc *mc, char *err, size_t errlen)
{
	const struct leap_mc_config *cfg = &mc->cfg;
	struct leap_pstate_geom g = {
		.dev_pages = cfg->dev_pages,
		.stripe_pages = cfg->stripe_pages,
		.replicas = cfg->replicas,
		.nservers = cfg->nservers,
		.dev = cfg->dev,
		.servers = cfg->servers,
	};

	if (cfg->existing) {
		snprintf(err, errlen, "a state file and 'existing' exclude each other");
		return -EINVAL;
	}
	if (leap_pstate_open(&mc->ps, cfg->state_file, &g, err, errlen))
		return -EINVAL;
	mc->have_ps = true;
	mc->pstate = mc->ps.pages;
	if (mc->ps.on_tmpfs)
		mc_log(mc,
		       "warning: state file %s is on tmpfs: while no leap-swapd holds "
		       "it locked, its pages can be swapped out to this very device",
		       cfg->state_file);
	if (mc->ps.reattached)
		mc_log(mc,
		       "state file %s: reattaching (%s): %llu pages written, %llu of "
		       "them had a write in flight (they read as errors until "
		       "rewritten)",
		       cfg->state_file,
		       mc->ps.was_clean ? "closed cleanly" : "its leap-swapd died",
		       (unsigned long long)mc->ps.written,
		       (unsigned long long)mc->ps.in_flight);
	return 0;
}

struct leap_mc *leap_mc_open(const struct leap_mc_config *cfg, char *err, size_t errlen)
{
	struct leap_mc *mc;
	bool away = false; /* a server left down at start (state file, r = 2) */

	if (cfg->nservers < 1 || cfg->nservers > LEAP_MC_MAX_SERVERS ||
	    cfg->replicas < 1 || cfg->replicas > 2 || cfg->replicas > cfg->nservers) {
		snprintf(err, errlen,
			 "need 1..%d servers and 1 <= replicas (<= 2) <= servers",
			 LEAP_MC_MAX_SERVERS);
		return NULL;
	}
	if (cfg->secret_len < LEAP_SECRET_MIN || cfg->secret_len > LEAP_SECRET_MAX ||
	    cfg->dev_pages < 1 ||
	    cfg->dev_pages > LEAP_WIRE_MAX_OFFSET / LEAP_WIRE_PAGE_SIZE) {
		snprintf(err, errlen, "bad secret length or device size");
		return NULL;
	}
	mc = calloc(1, sizeof(*mc));
	if (!mc)
		goto nomem;
	mc->cfg = *cfg;
	if (!mc->cfg.transport)
		mc->cfg.transport = &leap_tcp_transport;
	if (!mc->cfg.stripe_pages)
		mc->cfg.stripe_pages = 16;
	if (!mc->cfg.io_timeout_ms)
		mc->cfg.io_timeout_ms = 2000;
	if (!mc->cfg.retry_ms)
		mc->cfg.retry_ms = 10000;
	if (!mc->cfg.log_prefix)
		mc->cfg.log_prefix = "memclient";
	if (!mc->cfg.conns)
		mc->cfg.conns = 2;
	if (!mc->cfg.window)
		mc->cfg.window = 32;
	if (mc->cfg.conns > LEAP_MC_MAX_CONNS || mc->cfg.window < 2 ||
	    mc->cfg.window > MC_PIPE_MAX_WINDOW) {
		snprintf(err, errlen,
			 "need 1..%d connections per server and a window of 2..%d",
			 LEAP_MC_MAX_CONNS, MC_PIPE_MAX_WINDOW);
		free(mc);
		return NULL;
	}
	memcpy(mc->secret, cfg->secret, cfg->secret_len);
	mc->cfg.secret = NULL;
	pthread_mutex_init(&mc->stat_lock, NULL);
	pthread_mutex_init(&mc->trace_lock, NULL);
	pthread_mutex_init(&mc->rs_lock, NULL);
	pthread_cond_init(&mc->rs_cond, NULL);
	if (cfg->reg_cache && strcmp(cfg->reg_cache, "off") &&
	    mc->cfg.transport->read_pages) {
		struct leap_reg_config rc = {
			.policy = (enum leap_reg_policy)leap_reg_policy_parse(
				cfg->reg_cache),
			.max_bytes =
				cfg->reg_cache_bytes ? cfg->reg_cache_bytes : 64 << 20,
		};
		char why[256];

		if (leap_rdma_reg_cache(&rc, why, sizeof(why)))
			mc_log(mc, "--reg-cache %s: %s; using the staging copy",
			       cfg->reg_cache, why);
	}
	if (cfg->reg_trace && !(mc->trace = fopen(cfg->reg_trace, "we"))) {
		snprintf(err, errlen, "%s: %s", cfg->reg_trace, strerror(errno));
		leap_mc_close(mc);
		return NULL;
	}
	for (int i = 0; i < CHUNK_LOCKS; i++)
		pthread_mutex_init(&mc->chunk_lock[i], NULL);
	if (cfg->state_file) {
		if (mc_state_attach(mc, err, errlen)) {
			leap_mc_close(mc);
			return NULL;
		}
	} else {
		mc->pstate = calloc(cfg->dev_pages, 1);
		if (!mc->pstate)
			goto nomem;
	}
	if (cfg->existing)
		memset(mc->pstate, PS_WRITTEN | (((1U << cfg->replicas) - 1) << 1),
		       cfg->dev_pages);
	for (unsigned i = 0; i < cfg->nservers; i++) {
		struct mc_server *s = &mc->srv[i];

		s->mc = mc;
		s->idx = i;
		s->addr = cfg->servers[i];
		pthread_mutex_init(&s->ilock, NULL);
		/* The instance the state file last saw: a server that restarted
		 * since answers with another one, and its handshake forgets its
		 * pages (srv_handshake); one never seen holds no claimed page. */
		if (mc->have_ps && mc->ps.hdr->have_instance[i]) {
			s->instance = mc->ps.hdr->instance[i];
			s->have_instance = true;
		} else if (mc->have_ps && mc->ps.reattached) {
			srv_lost_everything(mc, i);
		}
		if (mc->cfg.transport->read_pages && mc->cfg.transport->write_pages) {
			/* One-sided: conns lanes (QPs), connected as used. */
			s->lanes = calloc(mc->cfg.conns, sizeof(*s->lanes));
			if (!s->lanes)
				goto nomem;
			for (; s->nlanes < mc->cfg.conns; s->nlanes++) {
				struct mc_lane *l = &s->lanes[s->nlanes];

				l->s = s;
				l->c.fd = -1;
				pthread_mutex_init(&l->lock, NULL);
				l->rx = malloc(LEAP_WIRE_MAX_MSG);
				l->ridx = calloc(cfg->dev_pages, sizeof(*l->ridx));
				if (!l->rx || !l->ridx) {
					s->nlanes++; /* freed by leap_mc_close */
					goto nomem;
				}
			}
			continue;
		}
		/* A stream transport: pipelined connections. */
		s->pipes = calloc(mc->cfg.conns, sizeof(*s->pipes));
		if (!s->pipes)
			goto nomem;
		for (; s->npipes < mc->cfg.conns; s->npipes++)
			if (mc_pipe_init(&s->pipes[s->npipes], mc->cfg.window,
					 mc->cfg.io_timeout_ms, &s->next_id))
				goto nomem;
	}
	for (unsigned i = 0; i < cfg->nservers; i++) {
		struct mc_server *s = &mc->srv[i];
		bool fresh;
		int rc = 0;

		if (s->lanes)
			rc = lane_connect(&s->lanes[0], err, errlen);
		/*
		 * A server just resumed (SIGCONT) or restarted can reset the
		 * first handshake (seen in backend-faults.t): a stream
		 * connection is tried three times, 200 ms apart, before the
		 * open fails.  Connections that came up stay up.
		 */
		for (int attempt = 0; s->pipes && attempt < 3; attempt++) {
			rc = 0;
			for (unsigned j = 0; j < s->npipes && !rc; j++)
				rc = pipe_ready(s, &s->pipes[j], &fresh, err, errlen);
			if (!rc)
				break;
			if (attempt < 2) {
				mc_log(mc, "%s: %s; trying again", s->addr, err);
				usleep(200 * 1000);
			}
		}
		/*
		 * Reattaching a state file at r = 2, one server may be away (it
		 * died with the leap-swapd that is being replaced, say): every
		 * stripe has its other replica elsewhere, the state says which
		 * pages that one holds, and a server that comes back is checked
		 * against its instance id like any reconnect.  Refusing to start
		 * would fail the swap device that is waiting for us.
		 */
		if (rc && mc->have_ps && mc->ps.reattached && mc->cfg.replicas == 2 &&
		    !away) {
			mc_log(mc,
			       "%s unreachable at start (%s): going on without it; its "
			       "pages are read from their other replica until it is back",
			       s->addr, err);
			srv_mark_down(s, leap_now_ms(), err);
			away = true;
			continue;
		}
		if (rc) {
			leap_mc_close(mc);
			return NULL;
		}
	}
	mc->opened = true;
	if (mc->cfg.replicas == 2) {
		mc->rs_buf = malloc((size_t)LEAP_WIRE_MAX_BATCH * LEAP_WIRE_PAGE_SIZE);
		if (!mc->rs_buf)
			goto nomem;
		mc->resilver_running =
			!pthread_create(&mc->resilver, NULL, resilver_main, mc);
		if (!mc->resilver_running) {
			snprintf(err, errlen, "cannot start the re-replication thread");
			leap_mc_close(mc);
			return NULL;
		}
	}
	return mc;
nomem:
	snprintf(err, errlen, "out of memory");
	leap_mc_close(mc);
	return NULL;
}

void leap_mc_close(struct leap_mc *mc)
{
	if (!mc)
		return;
	if (mc->resilver_running) {
		pthread_mutex_lock(&mc->rs_lock);
		mc->resilver_stop = true;
		pthread_cond_signal(&mc->rs_cond);
		pthread_mutex_unlock(&mc->rs_lock);
		pthread_join(mc->resilver, NULL);
	}
	free(mc->rs_buf);
	for (unsigned i = 0; i < mc->cfg.nservers; i++) {
		for (unsigned j = 0; j < mc->srv[i].nlanes; j++) {
			struct mc_lane *l = &mc->srv[i].lanes[j];

			lane_disconnect(l);
			pthread_mutex_destroy(&l->lock);
			free(l->rx);
			free(l->ridx);
		}
		free(mc->srv[i].lanes);
		for (unsigned j = 0; j < mc->srv[i].npipes; j++)
			mc_pipe_fini(&mc->srv[i].pipes[j]);
		free(mc->srv[i].pipes);
	}
	if (mc->have_ps)
		leap_pstate_close(&mc->ps, mc->opened);
	else
		free(mc->pstate);
	if (mc->trace)
		fclose(mc->trace);
	OPENSSL_cleanse(mc->secret, sizeof(mc->secret));
	free(mc);
}

int leap_mc_reg_cache_ok(const char *name)
{
	return !strcmp(name, "off") || leap_reg_policy_parse(name) >= 0;
}

void leap_mc_reg_stats(char *buf, size_t len)
{
	struct leap_reg_stats st;
	char line[512], *p, *tok, *save = NULL;
	size_t n = 0;

	buf[0] = '\0';
	if (!leap_rdma_reg_stats(&st))
		return;
	if (leap_reg_stats_format(&st, line, sizeof(line)) < 0)
		return;
	n = (size_t)snprintf(buf, len, " reg_fallbacks=%llu",
			     (unsigned long long)leap_rdma_reg_fallbacks());
	for (p = line; (tok = strtok_r(p, " \n", &save)); p = NULL) {
		if (n >= len)
			break;
		n += (size_t)snprintf(buf + n, len - n, " reg_%s", tok);
	}
}
