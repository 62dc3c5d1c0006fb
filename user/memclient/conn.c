// SPDX-License-Identifier: MIT
/*
 * memclient's server connections: connect and handshake (HELLO, AUTH; a
 * new instance id means a restarted server), the one-sided transports'
 * lanes (connect, take and put, one request with reconnect-and-retry), and
 * marking a server down and up again.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>

#include "leap/firehose.h"
#include "memclient_int.h"

void mc_lane_disconnect(struct mc_lane *l)
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
int mc_lane_roundtrip(struct mc_lane *l, struct iovec *iov, int iovcnt, uint64_t id,
		      unsigned op, struct leap_wire_msg *m)
{
	return conn_roundtrip(l->s, &l->c, l->rx, iov, iovcnt, id, op, m);
}

/*
 * Connects c to server s and authenticates (HELLO, AUTH) with rx as the
 * receive buffer.  A new instance id means a restarted server: its pages
 * are forgotten before any connection to it can carry a request (under
 * ilock, which every handshake takes), so no write acknowledged by the new
 * instance is forgotten afterwards.
 */
int mc_srv_handshake(struct mc_server *s, struct leap_conn *c, uint8_t *rx,
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
		mc_srv_lost_everything(mc, s->idx);
		/* It may have come back with or without a pin budget: one lane
		 * until a MAP says (mc_lane_take). */
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
int mc_lane_connect(struct mc_lane *l, char *err, size_t errlen)
{
	int rc = mc_srv_handshake(l->s, &l->c, l->rx, &l->instance, err, errlen);

	if (rc)
		mc_lane_disconnect(l);
	return rc;
}

/* -EHOSTDOWN while s is marked down and not due for a probe; else 0, and
 * *probe says whether this is the probe (one attempt, no retry window). */
int mc_srv_check_down(struct mc_server *s, bool *probe)
{
	int rc = 0;

	pthread_mutex_lock(&s->ilock);
	*probe = s->down;
	if (s->down && leap_now_ms() < s->down_until)
		rc = -EHOSTDOWN;
	pthread_mutex_unlock(&s->ilock);
	return rc;
}

void mc_srv_mark_up(struct mc_server *s)
{
	pthread_mutex_lock(&s->ilock);
	s->down = false;
	s->probe_ms = 0;
	pthread_mutex_unlock(&s->ilock);
}

void mc_srv_mark_down(struct mc_server *s, int64_t start, const char *err)
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

/*
 * One request on lane l with reconnect-and-retry.  iov[0] is l->tx with the
 * request; the caller encodes it again for each attempt through build().
 * The reply is left in l->rx / m.  Call with l->lock held.  An answer from
 * a server instance other than the one the server is known by now (it
 * restarted meanwhile and another lane saw it first) does not count: the
 * request goes again, as check_instance does for pipes.
 */
int mc_lane_request_(struct mc_lane *l, build_fn build, attempt_fn try_fn, void *arg,
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
	rc = mc_srv_check_down(s, &probe);
	if (rc)
		return rc;
	if (probe)
		deadline = start;
	for (;;) {
		if (l->c.fd < 0) {
			rc = mc_lane_connect(l, err, sizeof(err));
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

				rc = mc_lane_roundtrip(l, iov, payload_len ? 2 : 1, id,
						       op, m);
			}
			if (rc == 0 && l->instance != __atomic_load_n(&s->instance,
								      __ATOMIC_ACQUIRE))
				rc = -ESTALE;
			if (rc == 0) {
				if (probe)
					mc_srv_mark_up(s);
				return 0;
			}
			snprintf(err, sizeof(err), "%s: %s", s->addr, strerror(-rc));
			/* After any failure the stream may be out of sync. */
			mc_lane_disconnect(l);
			if (rc == -ENOSPC)
				return rc;
		}
		if (rc == -EINVAL || leap_now_ms() + backoff >= deadline)
			break;
		mc_retry_wait(mc, &attempt, &backoff, err);
	}
	mc_srv_mark_down(s, start, err);
	return rc < 0 ? rc : -EIO;
}

int mc_lane_request(struct mc_lane *l, build_fn build, void *arg, const void *payload,
		    size_t payload_len, unsigned op, struct leap_wire_msg *m)
{
	return mc_lane_request_(l, build, NULL, arg, payload, payload_len, op, m);
}

/*
 * A lane of s for one request, locked: a free one if there is one (in turn
 * from where the last caller started), else the next in turn, waited for.
 * Lane 0 alone until the server's mode is known, and for a server with a
 * pin budget.
 */
struct mc_lane *mc_lane_take(struct mc_server *s)
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

void mc_lane_put(struct mc_lane *l)
{
	__atomic_sub_fetch(&l->s->lanes_busy, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&l->lock);
}
