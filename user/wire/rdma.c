// SPDX-License-Identifier: MIT
/*
 * RDMA verbs transport (transport.h): RDMA CM for connection set-up, one RC
 * queue pair per connection, and two ways to move data:
 *
 *  - a message stream over SEND/RECV for the wire protocol's control
 *    messages (HELLO, AUTH, STATS, MAP, ERROR).  Each send() call becomes
 *    SENDs of up to CHUNK bytes from registered slots; recv() copies out of
 *    the receive slots in completion order (RC delivers in order) and posts
 *    each slot again once it is consumed.  Flow control is the receiver's
 *    posted buffers with an infinite RNR retry: a sender stalls in the HCA
 *    rather than lose a message, and gives up at its deadline;
 *  - page batches with one-sided RDMA READ/WRITE (read_pages/write_pages)
 *    between a registered staging buffer and the server's exported page
 *    store: a chain of WRs posted with one ibv_post_send, completions polled
 *    in batches.
 *
 * Completions: one CQ per connection with a completion channel; the
 * connection's pollable fd is an epoll fd over that channel (and, on a
 * client, over its RDMA CM event channel, so a DISCONNECTED wakes it).
 * Every entry point first "pumps": acknowledges channel events, re-arms the
 * CQ, then polls it empty, so level-triggered epoll on the fd is right.
 *
 * Errors: any failed completion, a DISCONNECTED or a deadline makes the
 * connection's error sticky; every later call returns it and memclient
 * reconnects and retries (never a page reported moved that was not).
 *
 * Access: a server's QP is moved through INIT/RTR/RTS here (not by
 * librdmacm) so that it starts with no remote access flags; grant() adds
 * REMOTE_READ|REMOTE_WRITE only after the peer passed the HMAC handshake.
 * rkeys are small and guessable (rxe: an index and 8 random bits), so this,
 * not the key, is what keeps unauthenticated peers out of the page store.
 *
 * References: rdma_cm(7), rdma_accept(3) ("if the user creates the QP
 * without rdma_create_qp, the user must transition it"), rdma_init_qp_attr(3),
 * ibv_get_cq_event(3) (the ack/re-arm/poll pattern), ibv_modify_qp(3)
 * (IBV_QP_ACCESS_FLAGS is allowed RTS->RTS).
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "leap/reg.h"
#include "leap/wire.h"
#include "rdma_mr.h"
#include "transport.h"

#define CHUNK	     4096 /* one SEND/RECV slot */
#define RX_DEPTH     16
#define TX_DEPTH     16
#define STAGE_PAGES  LEAP_WIRE_MAX_BATCH
#define MAX_SGE	     4	  /* local pieces of one page (zero-copy through the cache) */
#define SEND_WAIT_MS 2000 /* a stream send waits this long for a slot */

/* wr_id: kind in the top byte, slot below. */
#define WR_RECV		  1ULL
#define WR_SEND		  2ULL
#define WR_RDMA		  3ULL
#define WR_ID(kind, slot) ((kind) << 56 | (uint64_t)(slot))
#define WR_KIND(id)	  ((id) >> 56)
#define WR_SLOT(id)	  ((id)&0xffffffffULL)

/* Registered buffers, kept registered for the process's lifetime and reused
 * by later connections on the same PD: a reconnect costs no registration. */
struct rbuf {
	struct rbuf *next;
	struct ibv_pd *pd;
	size_t len;
	uint8_t *mem;
	struct leap_mr mr;
};

/* One protection domain per device (librdmacm hands out one ibv_context
 * per device for the whole process). */
struct rdev {
	struct rdev *next;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	int max_rd_atom;
};

static pthread_mutex_t glock = PTHREAD_MUTEX_INITIALIZER;
static struct rdev *devs;
static struct rbuf *free_bufs;

enum { K_CONN = 0x52434f4e, K_LISTEN = 0x524c5354 };

struct rconn {
	int kind; /* K_CONN */
	struct rdma_cm_id *id;
	struct rdma_event_channel *ech; /* client only: its own CM events */
	struct ibv_comp_channel *cch;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_pd *pd;
	struct rdev *dev;
	int epfd;
	struct rbuf *buf; /* rx slots | tx slots | staging (client) */
	uint8_t *rx, *tx, *stage;
	uint32_t rx_len[RX_DEPTH];
	/* Received slots in arrival order, not yet consumed. */
	uint32_t rxq[RX_DEPTH];
	unsigned rxq_head, rxq_n;
	size_t rx_off; /* consumed bytes of the head slot */
	unsigned tx_free[TX_DEPTH], tx_nfree;
	unsigned rdma_done, rdma_posted;
	int err; /* sticky: 0 or -errno */
	bool granted;
};

struct rlisten {
	int kind; /* K_LISTEN */
	struct rdma_event_channel *ech;
	struct rdma_cm_id *id;
	struct rdev *dev;
	struct leap_mr export_mr;
};

static void set_err(char *err, size_t errlen, const char *fmt, const char *a,
		    const char *b)
{
	snprintf(err, errlen, fmt, a, b);
}

/* Clear message when there is no device at all (the usual case on a host
 * without RDMA hardware or rxe). */
static int need_device(const char *addr, char *err, size_t errlen)
{
	int n = 0;
	struct ibv_device **l = ibv_get_device_list(&n);

	if (l)
		ibv_free_device_list(l);
	if (n > 0)
		return 0;
	set_err(err, errlen,
		"%s: no RDMA device on this machine (%s; for soft-RoCE: modprobe "
		"rdma_rxe && rdma link add rxe0 type rxe netdev IFACE)",
		addr, l ? "ibv_get_device_list found none" : "verbs unavailable");
	return -ENODEV;
}

static struct rdev *dev_for(struct ibv_context *ctx)
{
	struct rdev *d;
	struct ibv_device_attr attr;

	pthread_mutex_lock(&glock);
	for (d = devs; d; d = d->next)
		if (d->ctx == ctx)
			goto out;
	d = calloc(1, sizeof(*d));
	if (!d)
		goto out;
	d->ctx = ctx;
	d->pd = ibv_alloc_pd(ctx);
	if (!d->pd) {
		free(d);
		d = NULL;
		goto out;
	}
	d->max_rd_atom = 16;
	if (ibv_query_device(ctx, &attr) == 0 && attr.max_qp_rd_atom < d->max_rd_atom)
		d->max_rd_atom = attr.max_qp_rd_atom;
	if (d->max_rd_atom < 1)
		d->max_rd_atom = 1;
	d->next = devs;
	devs = d;
out:
	pthread_mutex_unlock(&glock);
	return d;
}

static struct rbuf *buf_get(struct ibv_pd *pd, size_t len)
{
	struct rbuf **pp, *b;

	pthread_mutex_lock(&glock);
	for (pp = &free_bufs; *pp; pp = &(*pp)->next)
		if ((*pp)->pd == pd && (*pp)->len == len) {
			b = *pp;
			*pp = b->next;
			pthread_mutex_unlock(&glock);
			return b;
		}
	pthread_mutex_unlock(&glock);
	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		      0);
	if (b->mem == MAP_FAILED) {
		free(b);
		return NULL;
	}
	b->pd = pd;
	b->len = len;
	/* Local access only: no peer may touch our buffers. */
	if (leap_mr_reg(pd, b->mem, len, IBV_ACCESS_LOCAL_WRITE, &b->mr)) {
		munmap(b->mem, len);
		free(b);
		return NULL;
	}
	return b;
}

static void buf_put(struct rbuf *b)
{
	if (!b)
		return;
	pthread_mutex_lock(&glock);
	b->next = free_bufs;
	free_bufs = b;
	pthread_mutex_unlock(&glock);
}

/* ---- completions ---------------------------------------------------------- */

static int post_recv(struct rconn *r, unsigned slot)
{
	struct ibv_sge sge = {(uintptr_t)(r->rx + (size_t)slot * CHUNK), CHUNK,
			      r->buf->mr.lkey};
	struct ibv_recv_wr wr = {.wr_id = WR_ID(WR_RECV, slot),
				 .sg_list = &sge,
				 .num_sge = 1},
			   *bad;

	return ibv_post_recv(r->qp, &wr, &bad) ? -EIO : 0;
}

static void fail(struct rconn *r, int err)
{
	if (!r->err)
		r->err = err;
}

static void on_wc(struct rconn *r, const struct ibv_wc *wc)
{
	uint64_t kind = WR_KIND(wc->wr_id);
	unsigned slot = (unsigned)WR_SLOT(wc->wr_id);

	if (wc->status != IBV_WC_SUCCESS) {
		/* Flushes follow the first error: keep the first. */
		if (wc->status != IBV_WC_WR_FLUSH_ERR && !r->err)
			fprintf(stderr, "rdma: %s: completion error: %s (vendor 0x%x)\n",
				r->id && r->id->verbs
					? ibv_get_device_name(r->id->verbs->device)
					: "?",
				ibv_wc_status_str(wc->status), wc->vendor_err);
		fail(r, -ECONNRESET);
		if (kind == WR_SEND && r->tx_nfree < TX_DEPTH)
			r->tx_free[r->tx_nfree++] = slot;
		if (kind == WR_RDMA)
			r->rdma_done++;
		return;
	}
	switch (kind) {
	case WR_RECV:
		if (slot >= RX_DEPTH || r->rxq_n >= RX_DEPTH) {
			fail(r, -EPROTO);
			return;
		}
		r->rx_len[slot] = wc->byte_len;
		r->rxq[(r->rxq_head + r->rxq_n++) % RX_DEPTH] = slot;
		break;
	case WR_SEND:
		if (r->tx_nfree < TX_DEPTH)
			r->tx_free[r->tx_nfree++] = slot;
		break;
	case WR_RDMA:
		r->rdma_done++;
		break;
	}
}

static void check_cm_events(struct rconn *r)
{
	struct rdma_cm_event *ev;

	if (!r->ech)
		return;
	while (rdma_get_cm_event(r->ech, &ev) == 0) {
		enum rdma_cm_event_type t = ev->event;

		rdma_ack_cm_event(ev);
		if (t == RDMA_CM_EVENT_DISCONNECTED ||
		    t == RDMA_CM_EVENT_DEVICE_REMOVAL || t == RDMA_CM_EVENT_TIMEWAIT_EXIT)
			fail(r, -ECONNRESET);
	}
}

/* Acknowledge channel events, re-arm, poll the CQ empty. */
static void pump(struct rconn *r)
{
	struct ibv_cq *cq;
	void *ctx;
	struct ibv_wc wc[16];
	int n;

	check_cm_events(r);
	while (ibv_get_cq_event(r->cch, &cq, &ctx) == 0)
		ibv_ack_cq_events(cq, 1);
	if (ibv_req_notify_cq(r->cq, 0))
		fail(r, -EIO);
	while ((n = ibv_poll_cq(r->cq, 16, wc)) > 0)
		for (int i = 0; i < n; i++)
			on_wc(r, &wc[i]);
	if (n < 0)
		fail(r, -EIO);
}

/* Waits for the fd (completions or CM events) until deadline_ms. */
static int wait_r(struct rconn *r, int64_t deadline_ms)
{
	struct pollfd pfd = {.fd = r->epfd, .events = POLLIN};
	int64_t left = deadline_ms - leap_now_ms();
	int rc;

	if (left <= 0)
		return -ETIMEDOUT;
	rc = poll(&pfd, 1, left > 1000 ? 1000 : (int)left);
	if (rc < 0 && errno != EINTR)
		return -errno;
	return 0;
}

/* ---- set-up --------------------------------------------------------------- */

/* librdmacm moves only QPs it created (rdma_create_qp) to the error state
 * on rdma_disconnect; ours is moved here, which flushes the posted
 * receives: the completions wake whoever polls the connection's fd. */
static void qp_error(struct rconn *r)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_ERR};

	if (r->qp)
		ibv_modify_qp(r->qp, &a, IBV_QP_STATE);
}

static void rconn_free(struct rconn *r)
{
	if (!r)
		return;
	if (r->id)
		rdma_disconnect(r->id);
	qp_error(r);
	if (r->qp)
		ibv_destroy_qp(r->qp);
	if (r->cq) {
		pump(r);
		ibv_destroy_cq(r->cq);
	}
	if (r->cch)
		ibv_destroy_comp_channel(r->cch);
	buf_put(r->buf);
	if (r->id)
		rdma_destroy_id(r->id);
	if (r->ech)
		rdma_destroy_event_channel(r->ech);
	if (r->epfd >= 0)
		close(r->epfd);
	free(r);
}

static int nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) ? -errno : 0;
}

static int ep_add(int epfd, int fd)
{
	struct epoll_event ev = {.events = EPOLLIN};

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

/* CQ, QP (RESET), buffers, the epoll fd; the caller connects the QP. */
static int rconn_setup(struct rconn *r, struct rdev *d, bool client)
{
	struct ibv_qp_init_attr qa = {0};
	size_t len = (size_t)(RX_DEPTH + TX_DEPTH) * CHUNK +
		     (client ? (size_t)STAGE_PAGES * LEAP_WIRE_PAGE_SIZE : 0);
	int cqe = RX_DEPTH + TX_DEPTH + STAGE_PAGES + 8;

	r->pd = d->pd;
	r->dev = d;
	r->epfd = epoll_create1(EPOLL_CLOEXEC);
	r->cch = ibv_create_comp_channel(d->ctx);
	if (r->epfd < 0 || !r->cch || nonblock(r->cch->fd) || ep_add(r->epfd, r->cch->fd))
		return -EIO;
	if (r->ech && (nonblock(r->ech->fd) || ep_add(r->epfd, r->ech->fd)))
		return -EIO;
	r->cq = ibv_create_cq(d->ctx, cqe, r, r->cch, 0);
	if (!r->cq)
		return -ENOMEM;
	qa.send_cq = r->cq;
	qa.recv_cq = r->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = TX_DEPTH + STAGE_PAGES;
	qa.cap.max_recv_wr = RX_DEPTH;
	qa.cap.max_send_sge = MAX_SGE;
	qa.cap.max_recv_sge = 1;
	r->qp = ibv_create_qp(d->pd, &qa);
	if (!r->qp)
		return errno ? -errno : -ENOMEM;
	r->buf = buf_get(d->pd, len);
	if (!r->buf)
		return -ENOMEM;
	r->rx = r->buf->mem;
	r->tx = r->rx + (size_t)RX_DEPTH * CHUNK;
	r->stage = client ? r->tx + (size_t)TX_DEPTH * CHUNK : NULL;
	for (unsigned i = 0; i < TX_DEPTH; i++)
		r->tx_free[i] = i;
	r->tx_nfree = TX_DEPTH;
	if (ibv_req_notify_cq(r->cq, 0))
		return -EIO;
	return 0;
}

static int post_all_recvs(struct rconn *r)
{
	for (unsigned i = 0; i < RX_DEPTH; i++)
		if (post_recv(r, i))
			return -EIO;
	return 0;
}

/* Moves the QP through INIT (then posts the receives), RTR, RTS, up to
 * nstates of them, with the attributes RDMA CM computed but no remote access
 * (grant() adds it).  The active side can reach RTR only once the peer has
 * answered (its QP number comes with the reply). */
static int qp_modify(struct rconn *r, unsigned nstates)
{
	static const enum ibv_qp_state states[] = {IBV_QPS_INIT, IBV_QPS_RTR,
						   IBV_QPS_RTS};

	for (unsigned i = 0; i < nstates; i++) {
		struct ibv_qp_attr a = {.qp_state = states[i]};
		int mask = 0;

		if (rdma_init_qp_attr(r->id, &a, &mask))
			return -errno;
		if (states[i] == IBV_QPS_INIT) {
			a.qp_access_flags = 0;
			mask |= IBV_QP_ACCESS_FLAGS;
		} else {
			mask &= ~IBV_QP_ACCESS_FLAGS;
		}
		if (ibv_modify_qp(r->qp, &a, mask))
			return -errno;
		if (states[i] == IBV_QPS_INIT && post_all_recvs(r))
			return -EIO;
	}
	return 0;
}

/* A CM address as "ADDR:PORT" (its length from its family). */
static void fmt_sa(const struct sockaddr *sa, char *buf, size_t n)
{
	leap_addr_format(sa,
			 sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
						   : sizeof(struct sockaddr_in),
			 buf, n);
}

/* ---- server --------------------------------------------------------------- */

static void rlisten_free(struct rlisten *L)
{
	if (!L)
		return;
	leap_mr_dereg(&L->export_mr);
	if (L->id)
		rdma_destroy_id(L->id);
	if (L->ech)
		rdma_destroy_event_channel(L->ech);
	free(L);
}

static int rdma_listen_(struct leap_conn *l, const char *addr, char *err, size_t errlen)
{
	struct addrinfo *res;
	struct rlisten *L;
	int rc;

	rc = need_device(addr, err, errlen);
	if (rc)
		return rc;
	rc = leap_addr_resolve(addr, 1, &res, err, errlen);
	if (rc)
		return rc;
	L = calloc(1, sizeof(*L));
	rc = -ENOMEM;
	if (L)
		L->kind = K_LISTEN;
	if (!L || !(L->ech = rdma_create_event_channel()) ||
	    rdma_create_id(L->ech, &L->id, NULL, RDMA_PS_TCP)) {
		snprintf(err, errlen, "%s: rdma_create_id: %s", addr, strerror(errno));
		goto fail;
	}
	if (rdma_bind_addr(L->id, res->ai_addr)) {
		rc = -errno;
		snprintf(err, errlen, "%s: rdma_bind_addr: %s", addr, strerror(errno));
		goto fail;
	}
	/* Bound to the wildcard or to an address of a netdev without an RDMA
	 * device (127.0.0.1 with rxe on another netdev), no device is known and
	 * there is nothing to export the store through. */
	if (!L->id->verbs) {
		rc = -ENODEV;
		snprintf(err, errlen,
			 "%s is not an address of an RDMA device: listen on the IP "
			 "of the netdev the RDMA (rxe) device sits on",
			 addr);
		goto fail;
	}
	L->dev = dev_for(L->id->verbs);
	if (!L->dev || nonblock(L->ech->fd) || rdma_listen(L->id, 64)) {
		rc = errno ? -errno : -EIO;
		snprintf(err, errlen, "%s: rdma_listen: %s", addr, strerror(-rc));
		goto fail;
	}
	freeaddrinfo(res);
	l->t = &leap_rdma_transport;
	l->fd = L->ech->fd;
	l->priv = L;
	snprintf(l->peer, sizeof(l->peer), "%s", addr);
	return 0;
fail:
	freeaddrinfo(res);
	rlisten_free(L);
	return rc;
}

static int accept_one(struct rlisten *L, struct rdma_cm_event *ev, struct leap_conn *c)
{
	struct rdma_conn_param p = {0};
	struct rconn *r = calloc(1, sizeof(*r));
	int rc;

	if (!r)
		return -ENOMEM;
	r->epfd = -1;
	r->id = ev->id;
	r->id->context = r;
	r->kind = K_CONN;
	rc = rconn_setup(r, L->dev, false);
	if (rc == 0)
		rc = qp_modify(r, 3);
	if (rc == 0) {
		/* We serve RDMA READs of the peer: as many as it asks, up to
		 * what the device allows.  The event's values are already from
		 * our side's point of view (responder_resources = the peer's
		 * initiator depth): a 0 here would leave the peer unable to
		 * issue a single READ. */
		p.responder_resources = ev->param.conn.responder_resources;
		if (p.responder_resources > L->dev->max_rd_atom)
			p.responder_resources = (uint8_t)L->dev->max_rd_atom;
		p.initiator_depth = 0;
		p.rnr_retry_count = 7;
		p.retry_count = 7;
		p.qp_num = r->qp->qp_num;
		if (rdma_accept(r->id, &p))
			rc = -errno;
	}
	if (rc) {
		rdma_reject(ev->id, NULL, 0);
		r->id = NULL; /* destroyed by the caller after the ack */
		rconn_free(r);
		return rc;
	}
	c->t = &leap_rdma_transport;
	c->fd = r->epfd;
	c->priv = r;
	fmt_sa(rdma_get_peer_addr(r->id), c->peer, sizeof(c->peer));
	return 0;
}

/* Handles CM events of the listener's channel; returns one new connection,
 * or -EAGAIN when there are no more events. */
static int rdma_accept_(struct leap_conn *l, struct leap_conn *c)
{
	struct rlisten *L = l->priv;
	struct rdma_cm_event *ev;

	while (rdma_get_cm_event(L->ech, &ev) == 0) {
		struct rdma_cm_id *id = ev->id;
		struct rconn *r = id ? id->context : NULL;
		enum rdma_cm_event_type t = ev->event;
		int rc;

		if (t == RDMA_CM_EVENT_CONNECT_REQUEST) {
			rc = accept_one(L, ev, c);
			rdma_ack_cm_event(ev);
			if (rc == 0)
				return 0;
			rdma_destroy_id(id);
			continue;
		}
		rdma_ack_cm_event(ev);
		if (r && id != L->id &&
		    (t == RDMA_CM_EVENT_DISCONNECTED ||
		     t == RDMA_CM_EVENT_TIMEWAIT_EXIT ||
		     t == RDMA_CM_EVENT_CONNECT_ERROR || t == RDMA_CM_EVENT_UNREACHABLE ||
		     t == RDMA_CM_EVENT_REJECTED || t == RDMA_CM_EVENT_DEVICE_REMOVAL)) {
			/* The QP goes to error: its receives flush, the connection's
			 * fd fires and the server reads the error. */
			if (!r->err) {
				r->err = -ECONNRESET;
				qp_error(r);
			}
		}
	}
	return errno == EAGAIN || errno == EWOULDBLOCK ? -EAGAIN : -errno;
}

static int rdma_local_addr_(struct leap_conn *l, char *buf, size_t len)
{
	struct rlisten *L = l->priv;

	fmt_sa(rdma_get_local_addr(L->id), buf, len);
	return 0;
}

static int rdma_export_mem(struct leap_conn *l, void *addr, size_t len,
			   struct leap_export *ex, char *err, size_t errlen)
{
	struct rlisten *L = l->priv;
	int rc;

	if (L->export_mr.len) {
		snprintf(err, errlen, "memory already exported");
		return -EBUSY;
	}
	rc = leap_mr_reg(L->dev->pd, addr, len,
			 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
				 IBV_ACCESS_REMOTE_WRITE,
			 &L->export_mr);
	if (rc) {
		snprintf(err, errlen, "cannot register %zu bytes for RDMA: %s", len,
			 strerror(-rc));
		return rc;
	}
	ex->base = (uintptr_t)addr;
	ex->len = len;
	ex->rkey = L->export_mr.rkey;
	return 0;
}

static int rdma_reg_region(struct leap_conn *l, void *addr, size_t len, uint32_t *rkey,
			   void **handle)
{
	struct rlisten *L = l->priv;
	struct leap_mr *mr = calloc(1, sizeof(*mr));
	int rc;

	if (!mr)
		return -ENOMEM;
	rc = leap_mr_reg(L->dev->pd, addr, len,
			 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
				 IBV_ACCESS_REMOTE_WRITE,
			 mr);
	if (rc) {
		free(mr);
		return rc;
	}
	*rkey = mr->rkey;
	*handle = mr;
	return 0;
}

static void rdma_dereg_region(struct leap_conn *l, void *handle)
{
	(void)l;
	leap_mr_dereg(handle);
	free(handle);
}

static int rdma_grant(struct leap_conn *c)
{
	struct rconn *r = c->priv;
	struct ibv_qp_attr a = {.qp_access_flags =
					IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE};

	if (r->err)
		return r->err;
	if (ibv_modify_qp(r->qp, &a, IBV_QP_ACCESS_FLAGS))
		return -errno;
	r->granted = true;
	return 0;
}

/* ---- client --------------------------------------------------------------- */

static int wait_cm(struct rconn *r, enum rdma_cm_event_type want, int64_t deadline,
		   const char *what, char *err, size_t errlen)
{
	struct rdma_cm_event *ev;

	for (;;) {
		struct pollfd pfd = {.fd = r->ech->fd, .events = POLLIN};
		int64_t left = deadline - leap_now_ms();
		enum rdma_cm_event_type t;
		int status;

		if (rdma_get_cm_event(r->ech, &ev) == 0) {
			t = ev->event;
			status = ev->status;
			rdma_ack_cm_event(ev);
			if (t == want)
				return 0;
			snprintf(err, errlen, "%s: %s%s%s", what, rdma_event_str(t),
				 status ? ": " : "", status ? strerror(abs(status)) : "");
			return t == RDMA_CM_EVENT_REJECTED ? -ECONNREFUSED
							   : -EHOSTUNREACH;
		}
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			snprintf(err, errlen, "%s: rdma_get_cm_event: %s", what,
				 strerror(errno));
			return -errno;
		}
		if (left <= 0) {
			snprintf(err, errlen, "%s: timed out", what);
			return -ETIMEDOUT;
		}
		poll(&pfd, 1, (int)left);
	}
}

static int rdma_connect_(struct leap_conn *c, const char *addr, int timeout_ms, char *err,
			 size_t errlen)
{
	int64_t deadline = leap_now_ms() + timeout_ms;
	struct rdma_conn_param p = {0};
	struct addrinfo *res;
	struct rconn *r;
	struct rdev *d;
	char what[128];
	int rc;

	rc = need_device(addr, err, errlen);
	if (rc)
		return rc;
	rc = leap_addr_resolve(addr, 0, &res, err, errlen);
	if (rc)
		return rc;
	r = calloc(1, sizeof(*r));
	if (!r) {
		freeaddrinfo(res);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	r->epfd = -1;
	r->kind = K_CONN;
	rc = -EIO;
	if (!(r->ech = rdma_create_event_channel()) || nonblock(r->ech->fd) ||
	    rdma_create_id(r->ech, &r->id, r, RDMA_PS_TCP)) {
		snprintf(err, errlen, "%s: rdma_create_id: %s", addr, strerror(errno));
		goto fail;
	}
	snprintf(what, sizeof(what), "connect %s: resolving the address", addr);
	if (rdma_resolve_addr(r->id, NULL, res->ai_addr, timeout_ms)) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", what, strerror(errno));
		goto fail;
	}
	rc = wait_cm(r, RDMA_CM_EVENT_ADDR_RESOLVED, deadline, what, err, errlen);
	if (rc)
		goto fail;
	snprintf(what, sizeof(what), "connect %s: resolving the route", addr);
	if (rdma_resolve_route(r->id, timeout_ms)) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", what, strerror(errno));
		goto fail;
	}
	rc = wait_cm(r, RDMA_CM_EVENT_ROUTE_RESOLVED, deadline, what, err, errlen);
	if (rc)
		goto fail;
	d = r->id->verbs ? dev_for(r->id->verbs) : NULL;
	if (!d) {
		rc = -ENODEV;
		snprintf(err, errlen, "connect %s: no RDMA device reaches it", addr);
		goto fail;
	}
	rc = rconn_setup(r, d, true);
	if (rc == 0)
		rc = qp_modify(r, 1);
	if (rc) {
		snprintf(err, errlen, "connect %s: queue pair set-up: %s", addr,
			 strerror(-rc));
		goto fail;
	}
	p.initiator_depth = (uint8_t)d->max_rd_atom;
	p.responder_resources = 0; /* nobody reads from us */
	p.retry_count = 7;
	p.rnr_retry_count = 7;
	p.qp_num = r->qp->qp_num;
	snprintf(what, sizeof(what), "connect %s", addr);
	if (rdma_connect(r->id, &p)) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", what, strerror(errno));
		goto fail;
	}
	rc = wait_cm(r, RDMA_CM_EVENT_CONNECT_RESPONSE, deadline, what, err, errlen);
	if (rc)
		goto fail;
	/* Our QP is ours to move (we did not use rdma_create_qp): RTR and RTS
	 * now that the peer answered, then the handshake's RTU. */
	{
		static const enum ibv_qp_state st[] = {IBV_QPS_RTR, IBV_QPS_RTS};

		for (unsigned i = 0; i < 2; i++) {
			struct ibv_qp_attr a = {.qp_state = st[i]};
			int mask = 0;

			if (rdma_init_qp_attr(r->id, &a, &mask) ||
			    ibv_modify_qp(r->qp, &a, mask & ~IBV_QP_ACCESS_FLAGS)) {
				rc = -errno;
				snprintf(err, errlen, "%s: QP to %s: %s", what,
					 i ? "RTS" : "RTR", strerror(errno));
				rdma_reject(r->id, NULL, 0);
				goto fail;
			}
		}
	}
	if (rdma_establish(r->id)) {
		rc = -errno;
		snprintf(err, errlen, "%s: rdma_establish: %s", what, strerror(errno));
		goto fail;
	}
	freeaddrinfo(res);
	c->t = &leap_rdma_transport;
	c->fd = r->epfd;
	c->priv = r;
	snprintf(c->peer, sizeof(c->peer), "%s", addr);
	return 0;
fail:
	freeaddrinfo(res);
	r->err = rc ? rc : -EIO; /* no disconnect of a connection never made */
	rconn_free(r);
	return rc ? rc : -EIO;
}

/* ---- the stream ----------------------------------------------------------- */

static ssize_t rdma_send_(struct leap_conn *c, const struct iovec *iov, int iovcnt)
{
	struct rconn *r = c->priv;
	int64_t deadline = leap_now_ms() + SEND_WAIT_MS;
	size_t total = 0, done = 0;
	int i = 0;
	size_t ioff = 0;

	for (int k = 0; k < iovcnt; k++)
		total += iov[k].iov_len;
	while (done < total) {
		size_t n = 0;
		unsigned slot;
		uint8_t *p;

		pump(r);
		if (r->err)
			return done ? (ssize_t)done : r->err;
		if (!r->tx_nfree) {
			if (wait_r(r, deadline)) {
				fail(r, -ETIMEDOUT);
				return done ? (ssize_t)done : -ETIMEDOUT;
			}
			continue;
		}
		slot = r->tx_free[--r->tx_nfree];
		p = r->tx + (size_t)slot * CHUNK;
		while (n < CHUNK && i < iovcnt) {
			size_t take = iov[i].iov_len - ioff;

			if (take > CHUNK - n)
				take = CHUNK - n;
			memcpy(p + n, (const uint8_t *)iov[i].iov_base + ioff, take);
			n += take;
			ioff += take;
			if (ioff == iov[i].iov_len) {
				i++;
				ioff = 0;
			}
		}
		{
			struct ibv_sge sge = {(uintptr_t)p, (uint32_t)n, r->buf->mr.lkey};
			struct ibv_send_wr wr = {.wr_id = WR_ID(WR_SEND, slot),
						 .sg_list = &sge,
						 .num_sge = 1,
						 .opcode = IBV_WR_SEND,
						 .send_flags = IBV_SEND_SIGNALED},
					   *bad;

			if (ibv_post_send(r->qp, &wr, &bad)) {
				fail(r, -EIO);
				return done ? (ssize_t)done : -EIO;
			}
		}
		done += n;
	}
	return (ssize_t)done;
}

static ssize_t rdma_recv_(struct leap_conn *c, void *buf, size_t len)
{
	struct rconn *r = c->priv;
	size_t got = 0;

	pump(r);
	while (got < len && r->rxq_n) {
		unsigned slot = r->rxq[r->rxq_head];
		size_t take = r->rx_len[slot] - r->rx_off;

		if (take > len - got)
			take = len - got;
		memcpy((uint8_t *)buf + got, r->rx + (size_t)slot * CHUNK + r->rx_off,
		       take);
		got += take;
		r->rx_off += take;
		if (r->rx_off == r->rx_len[slot]) {
			r->rx_off = 0;
			r->rxq_head = (r->rxq_head + 1) % RX_DEPTH;
			r->rxq_n--;
			if (!r->err && post_recv(r, slot))
				fail(r, -EIO);
		}
	}
	if (got)
		return (ssize_t)got;
	return r->err ? r->err : -EAGAIN;
}

static void rdma_close_(struct leap_conn *c)
{
	/* A listener's priv is a struct rlisten, a connection's a struct
	 * rconn; both start with their kind. */
	if (c->priv && *(int *)c->priv == K_LISTEN)
		rlisten_free(c->priv);
	else if (c->priv)
		rconn_free(c->priv);
	c->priv = NULL;
	c->fd = -1;
}

/* ---- one-sided pages -------------------------------------------------------- */

/* Posts the chain wr[0..n) (one doorbell) and waits for every completion.
 * On any error the connection is finished: late completions could land in
 * a buffer the caller reuses. */
static int post_wait(struct rconn *r, struct ibv_send_wr *wr, uint32_t n,
		     int64_t deadline_ms)
{
	struct ibv_send_wr *bad;

	r->rdma_done = 0;
	if (ibv_post_send(r->qp, wr, &bad)) {
		/* Some may be posted: the connection cannot be trusted any more. */
		fail(r, -EIO);
		return -EIO;
	}
	for (;;) {
		pump(r);
		if (r->err)
			return r->err;
		if (r->rdma_done >= n)
			return 0;
		if (wait_r(r, deadline_ms)) {
			fail(r, -ETIMEDOUT);
			return -ETIMEDOUT;
		}
	}
}

/* wr[i] for page i at raddr[i], its local side in sge[i * MAX_SGE ..]. */
static void chain(struct ibv_send_wr *wr, enum ibv_wr_opcode op, uint32_t rkey,
		  const uint64_t *raddr, uint32_t n, struct ibv_sge *sge, const int *nsge)
{
	/* Every WR signalled so a completion count tells exactly how many pages
	 * moved. */
	for (uint32_t i = 0; i < n; i++) {
		wr[i] = (struct ibv_send_wr){.wr_id = WR_ID(WR_RDMA, i),
					     .next = i + 1 < n ? &wr[i + 1] : NULL,
					     .sg_list = &sge[i * MAX_SGE],
					     .num_sge = nsge[i],
					     .opcode = op,
					     .send_flags = IBV_SEND_SIGNALED};
		wr[i].wr.rdma.remote_addr = raddr[i];
		wr[i].wr.rdma.rkey = rkey;
	}
}

static int rdma_pages(struct rconn *r, enum ibv_wr_opcode op, uint32_t rkey,
		      const uint64_t *raddr, uint32_t n, int64_t deadline_ms)
{
	struct ibv_send_wr wr[STAGE_PAGES];
	struct ibv_sge sge[STAGE_PAGES * MAX_SGE];
	int nsge[STAGE_PAGES];

	if (n < 1 || n > STAGE_PAGES || !r->stage)
		return -EINVAL;
	pump(r);
	if (r->err)
		return r->err;
	for (uint32_t i = 0; i < n; i++) {
		sge[i * MAX_SGE] = (struct ibv_sge){
			(uintptr_t)(r->stage + (size_t)i * LEAP_WIRE_PAGE_SIZE),
			LEAP_WIRE_PAGE_SIZE, r->buf->mr.lkey};
		nsge[i] = 1;
	}
	chain(wr, op, rkey, raddr, n, sge, nsge);
	return post_wait(r, wr, n, deadline_ms);
}

/* ---- zero-copy through the registration cache (rdma_mr.h) ------------------- */

static struct {
	pthread_mutex_t lock;
	bool on;
	struct leap_reg_config cfg;
	struct leap_reg_monitor *mon;
	struct leap_reg_cache *cache; /* for dev, created at first use */
	struct rdev *dev;
	uint64_t fallbacks;
} zc = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* The cache's backend: local registrations (LOCAL_WRITE: RDMA READ lands
 * there), counted with every other registration (leap_mr_reg). */
static int zc_reg(void *ctx, uint64_t addr, uint64_t len, struct leap_reg_key *key)
{
	struct rdev *d = ctx;
	struct leap_mr *mr = calloc(1, sizeof(*mr));
	int rc;

	if (!mr)
		return -ENOMEM;
	rc = leap_mr_reg(d->pd, (void *)(uintptr_t)addr, len, IBV_ACCESS_LOCAL_WRITE, mr);
	if (rc) {
		free(mr);
		return rc;
	}
	*key = (struct leap_reg_key){(uintptr_t)mr, mr->lkey, mr->rkey};
	return 0;
}

static void zc_dereg(void *ctx, const struct leap_reg_span *spans, size_t n)
{
	(void)ctx;
	for (size_t i = 0; i < n; i++) {
		struct leap_mr *mr = (void *)(uintptr_t)spans[i].key.handle;

		leap_mr_dereg(mr);
		free(mr);
	}
}

int leap_rdma_reg_cache(const struct leap_reg_config *cfg, char *err, size_t errlen)
{
	int rc;

	pthread_mutex_lock(&zc.lock);
	if (!cfg || zc.on) {
		pthread_mutex_unlock(&zc.lock);
		return 0;
	}
	rc = leap_reg_monitor_start(&zc.mon);
	if (rc) {
		snprintf(err, errlen,
			 "no userfaultfd unmap monitor (%s): a registration cache could "
			 "keep stale registrations",
			 strerror(-rc));
		pthread_mutex_unlock(&zc.lock);
		return rc;
	}
	zc.cfg = *cfg;
	zc.on = true;
	pthread_mutex_unlock(&zc.lock);
	return 0;
}

bool leap_rdma_reg_stats(struct leap_reg_stats *st)
{
	bool have;

	pthread_mutex_lock(&zc.lock);
	have = zc.cache != NULL;
	if (have)
		leap_reg_cache_stats(zc.cache, st);
	pthread_mutex_unlock(&zc.lock);
	return have;
}

uint64_t leap_rdma_reg_fallbacks(void)
{
	uint64_t n;

	pthread_mutex_lock(&zc.lock);
	n = zc.fallbacks;
	pthread_mutex_unlock(&zc.lock);
	return n;
}

/* With zc.lock: the cache for d, or NULL (off, another device, no memory). */
static struct leap_reg_cache *zc_cache(struct rdev *d)
{
	struct leap_reg_ops ops = {.reg = zc_reg, .dereg = zc_dereg, .ctx = d};
	struct leap_reg_watch w;

	if (!zc.on || (zc.dev && zc.dev != d))
		return NULL;
	if (!zc.cache) {
		zc.cache = leap_reg_cache_new(&zc.cfg, &ops);
		if (!zc.cache)
			return NULL;
		leap_reg_monitor_hooks(zc.mon, &w);
		leap_reg_cache_set_watch(zc.cache, &w);
		zc.dev = d;
	}
	return zc.cache;
}

/* One contiguous local buffer of a request and its registration. */
struct zc_run {
	uint64_t addr, len;
	struct leap_reg_ref ref;
};

/* The local pieces of [a, a + PAGE) inside run u: sge[0..return), or -1 if
 * more than MAX_SGE. */
static int page_sges(const struct zc_run *u, uint64_t a, struct ibv_sge *sge)
{
	uint64_t end = a + LEAP_WIRE_PAGE_SIZE;
	int k = 0;

	for (unsigned i = 0; i < u->ref.nsegs && a < end; i++) {
		const struct leap_reg_span *g = &u->ref.segs[i];
		uint64_t lo = a > g->addr ? a : g->addr;
		uint64_t hi = end < g->addr + g->len ? end : g->addr + g->len;

		if (hi <= lo)
			continue;
		if (k == MAX_SGE || lo != a)
			return -1;
		sge[k++] = (struct ibv_sge){lo, (uint32_t)(hi - lo), g->key.lkey};
		a = hi;
	}
	return a == end ? k : -1;
}

/*
 * RDMA straight into out[i] (READ) or from pages (WRITE), registered
 * through the cache.  1: not possible (no cache, a registration failed):
 * use the staging copy; else 0 or -errno as rdma_pages.
 */
static int zc_pages(struct rconn *r, enum ibv_wr_opcode op, uint32_t rkey,
		    const uint64_t *raddr, uint32_t n, uint8_t *const *out,
		    const uint8_t *pages, int64_t deadline_ms)
{
	struct ibv_send_wr wr[STAGE_PAGES];
	struct ibv_sge sge[STAGE_PAGES * MAX_SGE];
	int nsge[STAGE_PAGES];
	struct zc_run run[STAGE_PAGES];
	struct leap_reg_cache *c;
	uint32_t nrun = 0, i, j;
	int rc = 0;

	if (!zc.on || n < 1 || n > STAGE_PAGES)
		return 1;
	pthread_mutex_lock(&zc.lock);
	c = zc_cache(r->dev);
	for (i = 0; c && i < n; i = j) {
		uint64_t a = pages ? (uintptr_t)pages : (uintptr_t)out[i];

		j = pages ? n : i + 1;
		while (!pages && j < n &&
		       (uintptr_t)out[j] == a + (uint64_t)(j - i) * LEAP_WIRE_PAGE_SIZE)
			j++;
		run[nrun].addr = a;
		run[nrun].len = (uint64_t)(j - i) * LEAP_WIRE_PAGE_SIZE;
		if (leap_reg_get(c, a, run[nrun].len, &run[nrun].ref)) {
			rc = 1;
			break;
		}
		for (uint32_t p = i; p < j && rc == 0; p++) {
			nsge[p] = page_sges(&run[nrun],
					    a + (uint64_t)(p - i) * LEAP_WIRE_PAGE_SIZE,
					    &sge[p * MAX_SGE]);
			if (nsge[p] < 0)
				rc = 1;
		}
		nrun++;
		if (rc)
			break;
	}
	if (!c)
		rc = 1;
	if (rc) {
		for (i = 0; i < nrun; i++)
			leap_reg_put(c, &run[i].ref);
		zc.fallbacks++;
		pthread_mutex_unlock(&zc.lock);
		return 1;
	}
	pthread_mutex_unlock(&zc.lock);
	pump(r);
	rc = r->err;
	if (!rc) {
		chain(wr, op, rkey, raddr, n, sge, nsge);
		rc = post_wait(r, wr, n, deadline_ms);
	}
	if (rc)
		/* Stop the QP: no late completion may land in memory the caller
		 * gets back now. */
		qp_error(r);
	pthread_mutex_lock(&zc.lock);
	for (i = 0; i < nrun; i++) {
		/* After a failure, deregister what this request used: whatever
		 * the HCA still had in flight can no longer reach it. */
		if (rc)
			leap_reg_invalidate(c, run[i].addr, run[i].len);
		leap_reg_put(c, &run[i].ref);
	}
	pthread_mutex_unlock(&zc.lock);
	return rc;
}

static int rdma_read_pages(struct leap_conn *c, uint32_t rkey, const uint64_t *raddr,
			   uint32_t n, uint8_t *const *out, int64_t deadline_ms)
{
	struct rconn *r = c->priv;
	int rc = zc_pages(r, IBV_WR_RDMA_READ, rkey, raddr, n, out, NULL, deadline_ms);

	if (rc <= 0)
		return rc;
	rc = rdma_pages(r, IBV_WR_RDMA_READ, rkey, raddr, n, deadline_ms);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < n; i++)
		memcpy(out[i], r->stage + (size_t)i * LEAP_WIRE_PAGE_SIZE,
		       LEAP_WIRE_PAGE_SIZE);
	return 0;
}

static int rdma_write_pages(struct leap_conn *c, uint32_t rkey, const uint64_t *raddr,
			    uint32_t n, const void *pages, int64_t deadline_ms)
{
	struct rconn *r = c->priv;
	int rc;

	if (n < 1 || n > STAGE_PAGES || !r->stage)
		return -EINVAL;
	rc = zc_pages(r, IBV_WR_RDMA_WRITE, rkey, raddr, n, NULL, pages, deadline_ms);
	if (rc <= 0)
		return rc;
	memcpy(r->stage, pages, (size_t)n * LEAP_WIRE_PAGE_SIZE);
	return rdma_pages(r, IBV_WR_RDMA_WRITE, rkey, raddr, n, deadline_ms);
}

const struct leap_transport leap_rdma_transport = {
	.name = "rdma",
	.listen = rdma_listen_,
	.accept = rdma_accept_,
	.connect = rdma_connect_,
	.send = rdma_send_,
	.recv = rdma_recv_,
	.close = rdma_close_,
	.local_addr = rdma_local_addr_,
	.export_mem = rdma_export_mem,
	.reg_region = rdma_reg_region,
	.dereg_region = rdma_dereg_region,
	.grant = rdma_grant,
	.read_pages = rdma_read_pages,
	.write_pages = rdma_write_pages,
};
