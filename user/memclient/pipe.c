// SPDX-License-Identifier: MIT
/*
 * A pipelined connection (pipe.h).  Lock order: send_lock before lock.
 * Only the receiver thread closes the connection (teardown), holding both,
 * so a sender that holds send_lock always writes to the connection its
 * request was registered on -- or finds the request already failed.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "pipe.h"

static void wake_all(struct mc_pipe *p)
{
	pthread_cond_broadcast(&p->cond);
}

/* Called with p->lock held: takes r off the window and marks it done. */
static void finish_locked(struct mc_pipe *p, struct mc_pipe_req *r, int rc)
{
	/* Stored atomically: pick_pipe reads the load without the lock. */
	__atomic_store_n(&p->inflight, p->inflight - 1, __ATOMIC_RELAXED);
	if (r->prefetch)
		p->inflight_pf--;
	r->rc = rc;
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
	wake_all(p);
}

/*
 * Closes the connection and fails everything in flight with rc.  Called by
 * the receiver with p->lock held; returns with it held.
 */
static void teardown(struct mc_pipe *p, int rc)
{
	p->broken = true;
	/* Senders blocked on a full socket fail now and drop send_lock. */
	shutdown(p->c.fd, SHUT_RDWR);
	pthread_mutex_unlock(&p->lock);
	pthread_mutex_lock(&p->send_lock);
	pthread_mutex_lock(&p->lock);
	p->c.t->close(&p->c);
	p->c.fd = -1;
	while (p->pending) {
		struct mc_pipe_req *r = p->pending;

		p->pending = r->next;
		finish_locked(p, r, rc);
	}
	__atomic_store_n(&p->state, MC_PIPE_DOWN, __ATOMIC_RELAXED);
	p->broken = false;
	wake_all(p);
	pthread_mutex_unlock(&p->send_lock);
}

/* Fills r from its reply m; 0, -ENOSPC, or -EPROTO (the stream is suspect). */
static int complete(struct mc_pipe_req *r, const struct leap_wire_msg *m)
{
	if (m->hdr.opcode == LEAP_WOP_ERROR)
		return m->u.error.code == LEAP_WERR_NOSPACE ? -ENOSPC : -EPROTO;
	if (m->hdr.opcode != r->op)
		return -EPROTO;
	switch (r->op) {
	case LEAP_WOP_READ:
		if (m->u.io.count != r->count || m->u.io.dev != r->dev)
			return -EPROTO;
		for (uint32_t i = 0; i < r->count; i++)
			memcpy(r->out[i], m->u.io.pages + (size_t)i * LEAP_WIRE_PAGE_SIZE,
			       LEAP_WIRE_PAGE_SIZE);
		r->present = m->u.io.present;
		return 0;
	case LEAP_WOP_WRITE:
	case LEAP_WOP_FREE:
		return m->u.io.count == r->count && m->u.io.dev == r->dev ? 0 : -EPROTO;
	case LEAP_WOP_STATS:
		r->nstats = m->u.stats.n;
		memcpy(r->stats, m->u.stats.value, sizeof(uint64_t) * m->u.stats.n);
		return 0;
	}
	return -EPROTO;
}

/* One reply, if one arrives within 50 ms: 0, -EAGAIN (none), or an error
 * that breaks the connection. */
static int rx_one(struct mc_pipe *p)
{
	struct pollfd pfd = {.fd = p->c.fd, .events = POLLIN};
	int64_t deadline;
	struct leap_wire_hdr h;
	struct leap_wire_msg m;
	struct mc_pipe_req **pp, *r;
	int n, rc;

	n = poll(&pfd, 1, 50);
	if (n == 0 || (n < 0 && errno == EINTR))
		return -EAGAIN;
	if (n < 0)
		return -errno;
	/* Once a reply starts, all of it must follow within the I/O timeout. */
	deadline = leap_now_ms() + p->io_timeout_ms;
	rc = leap_conn_recv_all(&p->c, p->rx, LEAP_WIRE_HDR_SIZE, deadline);
	if (rc)
		return rc;
	if (leap_wire_decode_hdr(p->rx, LEAP_WIRE_HDR_SIZE, &h))
		return -EPROTO;
	rc = leap_conn_recv_all(&p->c, p->rx + LEAP_WIRE_HDR_SIZE, h.length, deadline);
	if (rc)
		return rc;
	if (leap_wire_decode(p->rx, LEAP_WIRE_HDR_SIZE + h.length, &m) ||
	    !(m.hdr.flags & LEAP_WF_REPLY))
		return -EPROTO;
	pthread_mutex_lock(&p->lock);
	for (pp = &p->pending; *pp && (*pp)->id != m.hdr.req_id; pp = &(*pp)->next)
		;
	r = *pp;
	if (r)
		*pp = r->next;
	pthread_mutex_unlock(&p->lock);
	/* A reply to nothing we asked on this connection: out of sync. */
	if (!r)
		return -EPROTO;
	/* Off the list, r is ours alone: its waiter waits for done. */
	rc = complete(r, &m);
	r->instance = p->instance;
	pthread_mutex_lock(&p->lock);
	finish_locked(p, r, rc);
	pthread_mutex_unlock(&p->lock);
	return rc == -EPROTO ? rc : 0;
}

static void *rx_main(void *arg)
{
	struct mc_pipe *p = arg;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		int rc;

		while (!p->stop && p->state != MC_PIPE_UP)
			pthread_cond_wait(&p->cond, &p->lock);
		if (p->stop)
			break;
		if (p->broken) {
			teardown(p, -ECONNRESET);
			continue;
		}
		pthread_mutex_unlock(&p->lock);
		rc = rx_one(p);
		pthread_mutex_lock(&p->lock);
		if (rc == -EAGAIN || rc == 0) {
			int64_t now = leap_now_ms();

			rc = 0;
			for (struct mc_pipe_req *r = p->pending; r; r = r->next)
				if (now - r->sent_ms > p->io_timeout_ms)
					rc = -ETIMEDOUT;
		}
		if (rc || p->broken)
			teardown(p, rc ? rc : -ECONNRESET);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int mc_pipe_init(struct mc_pipe *p, unsigned window, int io_timeout_ms, uint64_t *next_id)
{
	memset(p, 0, sizeof(*p));
	if (window < 2 || window > MC_PIPE_MAX_WINDOW)
		return -EINVAL;
	p->window = window;
	p->io_timeout_ms = io_timeout_ms;
	p->next_id = next_id;
	p->c.fd = -1;
	p->rx = malloc(LEAP_WIRE_MAX_MSG);
	if (!p->rx)
		return -ENOMEM;
	pthread_mutex_init(&p->lock, NULL);
	pthread_mutex_init(&p->send_lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	{
		pthread_attr_t attr;
		int rc;

		/* leap-swapd locks all its memory (mlockall), whole stacks too:
		 * the receiver needs little. */
		pthread_attr_init(&attr);
		pthread_attr_setstacksize(&attr, MC_PIPE_STACK);
		rc = pthread_create(&p->thread, &attr, rx_main, p);
		pthread_attr_destroy(&attr);
		if (rc) {
			free(p->rx);
			p->rx = NULL;
			return -EAGAIN;
		}
	}
	p->thread_running = true;
	return 0;
}

void mc_pipe_fini(struct mc_pipe *p)
{
	if (p->thread_running) {
		pthread_mutex_lock(&p->lock);
		p->stop = true;
		if (p->state == MC_PIPE_UP)
			shutdown(p->c.fd, SHUT_RDWR);
		wake_all(p);
		pthread_mutex_unlock(&p->lock);
		pthread_join(p->thread, NULL);
		p->thread_running = false;
	}
	if (p->c.fd >= 0)
		p->c.t->close(&p->c);
	p->c.fd = -1;
	free(p->rx);
	p->rx = NULL;
}

int mc_pipe_claim(struct mc_pipe *p)
{
	int up;

	pthread_mutex_lock(&p->lock);
	/* A broken pipe is up until its receiver has failed what was on it. */
	while (p->state == MC_PIPE_CONNECTING || (p->state == MC_PIPE_UP && p->broken))
		pthread_cond_wait(&p->cond, &p->lock);
	up = p->state == MC_PIPE_UP;
	if (!up)
		__atomic_store_n(&p->state, MC_PIPE_CONNECTING, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&p->lock);
	return up;
}

void mc_pipe_connected(struct mc_pipe *p, bool ok, uint64_t instance)
{
	pthread_mutex_lock(&p->lock);
	__atomic_store_n(&p->state, ok ? MC_PIPE_UP : MC_PIPE_DOWN, __ATOMIC_RELAXED);
	p->instance = instance;
	p->connects += ok;
	wake_all(p);
	pthread_mutex_unlock(&p->lock);
}

unsigned mc_pipe_load(struct mc_pipe *p)
{
	return __atomic_load_n(&p->inflight, __ATOMIC_RELAXED);
}

void mc_pipe_submit(struct mc_pipe *p, struct mc_pipe_req *r)
{
	uint8_t hdr[sizeof(p->tx)];
	struct iovec iov[2];
	long n;
	int rc;

	r->p = p;
	r->rc = 0;
	r->done = 0;
	pthread_mutex_lock(&p->lock);
	for (;;) {
		if (p->state != MC_PIPE_UP || p->broken || p->stop) {
			pthread_mutex_unlock(&p->lock);
			r->rc = -ENOTCONN;
			r->done = 1;
			return;
		}
		/* Prefetches never hold more than half the window: a demand read
		 * always finds a slot soon, ahead of queued prefetches. */
		if (p->inflight < p->window &&
		    (!r->prefetch || p->inflight_pf < p->window / 2))
			break;
		pthread_cond_wait(&p->cond, &p->lock);
	}
	r->id = __atomic_add_fetch(p->next_id, 1, __ATOMIC_RELAXED);
	r->sent_ms = leap_now_ms();
	r->next = p->pending;
	p->pending = r;
	__atomic_store_n(&p->inflight, p->inflight + 1, __ATOMIC_RELAXED);
	if (r->prefetch)
		p->inflight_pf++;
	if (p->inflight > p->peak)
		__atomic_store_n(&p->peak, p->inflight, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&p->lock);

	pthread_mutex_lock(&p->send_lock);
	/* Failed meanwhile (teardown): its connection is gone, send nothing. */
	if (__atomic_load_n(&r->done, __ATOMIC_ACQUIRE)) {
		pthread_mutex_unlock(&p->send_lock);
		return;
	}
	if (r->op == LEAP_WOP_STATS)
		n = leap_wire_enc_empty(hdr, sizeof(hdr), LEAP_WOP_STATS, 0, r->id);
	else
		n = leap_wire_enc_io_req(hdr, sizeof(hdr), r->op, r->id, r->dev, r->count,
					 r->offset);
	iov[0] = (struct iovec){hdr, n > 0 ? (size_t)n : 0};
	iov[1] = (struct iovec){(void *)r->pages, (size_t)r->count * LEAP_WIRE_PAGE_SIZE};
	rc = n > 0 ? leap_conn_send_all(&p->c, iov, r->op == LEAP_WOP_WRITE ? 2 : 1,
					leap_now_ms() + p->io_timeout_ms)
		   : -EINVAL;
	if (rc) {
		/* The stream may hold half a message: the receiver fails r and
		 * everything else in flight. */
		pthread_mutex_lock(&p->lock);
		p->broken = true;
		shutdown(p->c.fd, SHUT_RDWR);
		wake_all(p);
		pthread_mutex_unlock(&p->lock);
	}
	pthread_mutex_unlock(&p->send_lock);
}

int mc_pipe_wait(struct mc_pipe_req *r)
{
	struct mc_pipe *p = r->p;

	if (__atomic_load_n(&r->done, __ATOMIC_ACQUIRE))
		return r->rc;
	pthread_mutex_lock(&p->lock);
	while (!__atomic_load_n(&r->done, __ATOMIC_ACQUIRE))
		pthread_cond_wait(&p->cond, &p->lock);
	pthread_mutex_unlock(&p->lock);
	return r->rc;
}

void mc_pipe_break(struct mc_pipe *p)
{
	pthread_mutex_lock(&p->lock);
	if (p->state == MC_PIPE_UP && !p->broken) {
		p->broken = true;
		shutdown(p->c.fd, SHUT_RDWR);
		wake_all(p);
	}
	pthread_mutex_unlock(&p->lock);
}
