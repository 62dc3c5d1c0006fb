// SPDX-License-Identifier: MIT
/*
 * leap-memd's server loop: one thread, epoll over the listener, a signalfd
 * and every client.  Each connection reads one whole message (header first,
 * so an oversize length is refused before anything is buffered), handles
 * it, and sends the reply before it reads the next: a client that does not
 * read its replies only stalls itself.  Buffers are allocated once per
 * connection at accept, never per message -- except under --delay-us, where
 * each reply is copied into a held buffer that leaves when due, so a client
 * may keep many requests in flight on one connection and each one sees the
 * emulated round trip once (latency), not one after another (occupancy).
 *
 * A connection must HELLO then AUTH (mutual HMAC challenge-response over
 * both sides' nonces, include/leap/wire.h) within auth_timeout_ms; anything else before
 * that, a bad MAC or a malformed message gets an ERROR reply and the connection closed.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "fh.h"
#include "memd.h"
#include "rdma_mr.h"

enum conn_state { ST_HELLO, ST_AUTH, ST_READY };

struct conn {
	struct leap_conn c;
	enum conn_state state;
	int64_t auth_deadline;
	uint8_t nonce[LEAP_WIRE_NONCE_LEN];	 /* ours */
	uint8_t peer_nonce[LEAP_WIRE_NONCE_LEN]; /* the client's */
	uint8_t *rx, *tx;
	size_t rx_have, rx_need;
	size_t tx_len, tx_off;
	bool close_after_tx;
	uint32_t fh_id; /* Firehose client id, MEMD_FH_NONE before its first FH_MOVE */
	struct conn *next;
	bool dead; /* closed; freed once the current epoll batch is done */
	/* --delay-us: replies held (in the server's FIFO or, once due, in oq
	 * waiting for the socket), their bytes, and whether the last held one
	 * closes the connection (nothing more is read then). */
	struct held *oq_head, *oq_tail;
	size_t held_bytes;
	bool closing, out_blocked;
};

/* A reply held for --delay-us. */
struct held {
	struct held *next; /* server FIFO, then the connection's oq */
	struct conn *cn;
	uint64_t due_ns;
	size_t len, off;
	bool close_after;
	uint8_t buf[];
};

/* Held bytes per connection before it is read no further: bounds the memory
 * a client can pin with requests whose replies it does not read. */
#define HELD_MAX (16u << 20)

struct server {
	const struct memd_config *cfg;
	struct memd_store *store;
	struct leap_conn listener;
	int ep, sigfd;
	/* --delay-us: replies held back, oldest first (one delay for all, so
	 * the FIFO is in due order), and the timer that releases them. */
	int tfd;
	struct held *dhead, *dtail;
	uint64_t instance;
	struct conn *conns, *zombies;
	unsigned nconns;
	uint64_t stat[LEAP_WSTAT_NR];
	bool stop;
	/* One-sided transports: the store as peers see it (MAP hands it out). */
	bool exported;
	struct leap_export ex;
	/* --pin-budget: the store is registered on demand in regions. */
	bool firehose;
	struct memd_fh fh;
};

#define LOG(fmt, ...) fprintf(stderr, "leap-memd: " fmt "\n", ##__VA_ARGS__)
#define VLOG(s, ...)                                                                     \
	do {                                                                             \
		if ((s)->cfg->verbose)                                                   \
			LOG(__VA_ARGS__);                                                \
	} while (0)

static void held_free_list(struct held *h)
{
	while (h) {
		struct held *n = h->next;

		free(h);
		h = n;
	}
}

/*
 * Closes cn.  The memory stays until the end of the epoll batch (reap):
 * later events of the same batch may still name it, and see cn->dead.
 */
static void conn_free(struct server *s, struct conn *cn)
{
	struct conn **pp;
	struct held **hp, *prev = NULL;

	if (cn->dead)
		return;
	cn->dead = true;
	/* Its replies still waiting for their due time go with it. */
	for (hp = &s->dhead; *hp;) {
		struct held *h = *hp;

		if (h->cn == cn) {
			*hp = h->next;
			free(h);
		} else {
			prev = h;
			hp = &h->next;
		}
	}
	s->dtail = prev;
	held_free_list(cn->oq_head);
	cn->oq_head = cn->oq_tail = NULL;

	for (pp = &s->conns; *pp; pp = &(*pp)->next)
		if (*pp == cn) {
			*pp = cn->next;
			break;
		}
	epoll_ctl(s->ep, EPOLL_CTL_DEL, cn->c.fd, NULL);
	VLOG(s, "%s: closed", cn->c.peer);
	cn->c.t->close(&cn->c);
	/* Only now, with its queue pair gone, may its regions be unpinned. */
	if (s->firehose)
		memd_fh_drop(&s->fh, &cn->fh_id);
	free(cn->rx);
	free(cn->tx);
	cn->rx = cn->tx = NULL;
	cn->next = s->zombies;
	s->zombies = cn;
	s->nconns--;
	s->stat[LEAP_WSTAT_CLIENTS] = s->nconns;
}

/* Frees the connections closed during the last epoll batch. */
static void reap(struct server *s)
{
	while (s->zombies) {
		struct conn *cn = s->zombies;

		s->zombies = cn->next;
		free(cn);
	}
}

static void want(struct server *s, struct conn *cn, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.ptr = cn};

	epoll_ctl(s->ep, EPOLL_CTL_MOD, cn->c.fd, &ev);
}

/* Queues an ERROR reply; fatal ones close the connection once it is sent. */
static void reply_error(struct server *s, struct conn *cn, uint64_t id, int code,
			const char *why)
{
	long n = leap_wire_enc_error(cn->tx, LEAP_WIRE_MAX_MSG, id, (uint32_t)code, why);

	cn->tx_len = n > 0 ? (size_t)n : 0;
	cn->tx_off = 0;
	if (code != LEAP_WERR_NOSPACE && code != LEAP_WERR_RANGE)
		cn->close_after_tx = true;
	if (code == LEAP_WERR_AUTH)
		s->stat[LEAP_WSTAT_AUTH_FAILURES]++;
	else if (code != LEAP_WERR_NOSPACE && code != LEAP_WERR_RANGE)
		s->stat[LEAP_WSTAT_BAD_MESSAGES]++;
	LOG("%s: %s%s%s", cn->c.peer, leap_wire_err_name((unsigned)code), why ? ": " : "",
	    why ? why : "");
}

static void handle_hello(struct server *s, struct conn *cn, const struct leap_wire_msg *m)
{
	uint8_t mac[LEAP_WIRE_MAC_LEN];
	long n;

	if (m->u.hello.min_version > LEAP_WIRE_VERSION ||
	    m->u.hello.max_version < LEAP_WIRE_VERSION) {
		reply_error(s, cn, m->hdr.req_id, LEAP_WERR_VERSION,
			    "server speaks version 1");
		return;
	}
	if (leap_wire_nonce(cn->nonce)) {
		reply_error(s, cn, m->hdr.req_id, LEAP_WERR_INTERNAL, "no randomness");
		return;
	}
	memcpy(cn->peer_nonce, m->u.hello.nonce, LEAP_WIRE_NONCE_LEN);
	if (leap_wire_mac(s->cfg->secret, s->cfg->secret_len, LEAP_WIRE_ROLE_SERVER,
			  cn->peer_nonce, cn->nonce, mac)) {
		reply_error(s, cn, m->hdr.req_id, LEAP_WERR_INTERNAL, "no HMAC");
		return;
	}
	n = leap_wire_enc_hello_rep(cn->tx, LEAP_WIRE_MAX_MSG, m->hdr.req_id,
				    s->store->capacity, s->instance, cn->nonce, mac);
	cn->tx_len = (size_t)n;
	cn->state = ST_AUTH;
}

static void handle_auth(struct server *s, struct conn *cn, const struct leap_wire_msg *m)
{
	if (!leap_wire_mac_ok(s->cfg->secret, s->cfg->secret_len, LEAP_WIRE_ROLE_CLIENT,
			      cn->nonce, cn->peer_nonce, m->u.auth.mac)) {
		reply_error(s, cn, m->hdr.req_id, LEAP_WERR_AUTH, "wrong secret");
		return;
	}
	/* A nonce answers one challenge only. */
	OPENSSL_cleanse(cn->nonce, sizeof(cn->nonce));
	/* Only now may the peer reach the exported store (RDMA). */
	if (cn->c.t->grant && cn->c.t->grant(&cn->c)) {
		reply_error(s, cn, m->hdr.req_id, LEAP_WERR_INTERNAL,
			    "cannot grant access");
		return;
	}
	cn->state = ST_READY;
	cn->tx_len = (size_t)leap_wire_enc_empty(cn->tx, LEAP_WIRE_MAX_MSG, LEAP_WOP_AUTH,
						 LEAP_WF_REPLY, m->hdr.req_id);
	VLOG(s, "%s: authenticated", cn->c.peer);
}

static void handle_read(struct server *s, struct conn *cn, const struct leap_wire_msg *m)
{
	uint32_t count = m->u.io.count;
	uint8_t *out = cn->tx + LEAP_WIRE_HDR_SIZE + LEAP_WIRE_IO_HDR + 8;
	uint64_t present = 0;
	long n;

	for (uint32_t i = 0; i < count; i++) {
		const uint8_t *pg =
			memd_store_find(s->store, m->u.io.dev, m->u.io.offset[i]);

		if (pg) {
			memcpy(out + (size_t)i * LEAP_WIRE_PAGE_SIZE, pg,
			       LEAP_WIRE_PAGE_SIZE);
			present |= 1ULL << i;
		} else {
			memset(out + (size_t)i * LEAP_WIRE_PAGE_SIZE, 0,
			       LEAP_WIRE_PAGE_SIZE);
		}
	}
	n = leap_wire_enc_read_rep(cn->tx, LEAP_WIRE_MAX_MSG, m->hdr.req_id, m->u.io.dev,
				   count, present);
	cn->tx_len = (size_t)n + (size_t)count * LEAP_WIRE_PAGE_SIZE;
	s->stat[LEAP_WSTAT_READ_REQS]++;
	s->stat[LEAP_WSTAT_PAGES_READ] += count;
}

static void handle_write(struct server *s, struct conn *cn, const struct leap_wire_msg *m)
{
	uint32_t count = m->u.io.count, fresh = 0;

	/* All or nothing: a batch never lands half-written for lack of room. */
	for (uint32_t i = 0; i < count; i++)
		if (!memd_store_find(s->store, m->u.io.dev, m->u.io.offset[i]))
			fresh++;
	if (s->store->used + fresh > s->store->capacity) {
		reply_error(s, cn, m->hdr.req_id, LEAP_WERR_NOSPACE, NULL);
		return;
	}
	for (uint32_t i = 0; i < count; i++)
		memcpy(memd_store_get(s->store, m->u.io.dev, m->u.io.offset[i]),
		       m->u.io.pages + (size_t)i * LEAP_WIRE_PAGE_SIZE,
		       LEAP_WIRE_PAGE_SIZE);
	cn->tx_len = (size_t)leap_wire_enc_write_rep(cn->tx, LEAP_WIRE_MAX_MSG,
						     m->hdr.req_id, m->u.io.dev, count);
	s->stat[LEAP_WSTAT_WRITE_REQS]++;
	s->stat[LEAP_WSTAT_PAGES_WRITTEN] += count;
	s->stat[LEAP_WSTAT_USED_PAGES] = s->store->used;
}

/*
 * FREE: the client discarded these pages; their memory goes back to the
 * store.  Over RDMA the client forgets where they were (MAP answers about
 * them are void from now on): a freed page's memory may hold another page
 * after the next allocation.
 */
static void handle_free(struct server *s, struct conn *cn, const struct leap_wire_msg *m)
{
	uint32_t freed = 0;

	for (uint32_t i = 0; i < m->u.io.count; i++)
		freed += (uint32_t)memd_store_free(s->store, m->u.io.dev,
						   m->u.io.offset[i]);
	cn->tx_len = (size_t)leap_wire_enc_free_rep(
		cn->tx, LEAP_WIRE_MAX_MSG, m->hdr.req_id, m->u.io.dev, m->u.io.count);
	s->stat[LEAP_WSTAT_PAGES_FREED] += freed;
	s->stat[LEAP_WSTAT_USED_PAGES] = s->store->used;
}

/*
 * MAP: where the pages are in the exported store, allocating absent ones
 * for a write (all or nothing, as handle_write).  The pages then move by
 * RDMA without this thread.  memd never moves a page and frees one only on
 * its owner's FREE, so an answer stays true for the life of this process
 * (its instance id) until that client itself discards the page.
 */
static void handle_map(struct server *s, struct conn *cn, const struct leap_wire_msg *m)
{
	uint32_t count = m->u.map.count, fresh = 0, idx[LEAP_WIRE_MAX_BATCH];
	uint64_t present = 0;
	bool alloc = m->u.map.flags & LEAP_WMAP_ALLOC;

	if (!s->exported) {
		reply_error(s, cn, m->hdr.req_id, LEAP_WERR_OP,
			    "MAP needs a one-sided transport (--transport rdma)");
		return;
	}
	if (alloc) {
		for (uint32_t i = 0; i < count; i++)
			if (!memd_store_find(s->store, m->u.map.dev, m->u.map.offset[i]))
				fresh++;
		if (s->store->used + fresh > s->store->capacity) {
			reply_error(s, cn, m->hdr.req_id, LEAP_WERR_NOSPACE, NULL);
			return;
		}
	}
	for (uint32_t i = 0; i < count; i++) {
		uint8_t *pg =
			alloc ? memd_store_get(s->store, m->u.map.dev, m->u.map.offset[i])
			      : memd_store_find(s->store, m->u.map.dev,
						m->u.map.offset[i]);

		idx[i] = 0;
		if (pg) {
			idx[i] = (uint32_t)((size_t)(pg - s->store->arena) /
					    LEAP_WIRE_PAGE_SIZE);
			present |= 1ULL << i;
		}
	}
	cn->tx_len = (size_t)leap_wire_enc_map_rep(
		cn->tx, LEAP_WIRE_MAX_MSG, m->hdr.req_id, m->u.map.dev, count, present,
		s->ex.rkey, s->firehose ? LEAP_WMAP_REP_FH : 0, s->ex.base, s->ex.len,
		idx);
	s->stat[LEAP_WSTAT_MAP_REQS]++;
	s->stat[LEAP_WSTAT_PAGES_MAPPED] += count;
	s->stat[LEAP_WSTAT_USED_PAGES] = s->store->used;
}

static void handle(struct server *s, struct conn *cn)
{
	struct leap_wire_msg m;
	int rc = leap_wire_decode(cn->rx, cn->rx_have, &m);
	static const enum conn_state need[] = {
		[LEAP_WOP_HELLO] = ST_HELLO, [LEAP_WOP_AUTH] = ST_AUTH,
		[LEAP_WOP_READ] = ST_READY,  [LEAP_WOP_WRITE] = ST_READY,
		[LEAP_WOP_STATS] = ST_READY, [LEAP_WOP_ERROR] = ST_READY,
		[LEAP_WOP_MAP] = ST_READY,   [LEAP_WOP_FH_MOVE] = ST_READY,
		[LEAP_WOP_FREE] = ST_READY,
	};
	_Static_assert(sizeof(need) / sizeof(need[0]) == LEAP_WOP_MAX + 1,
		       "a state for every opcode");

	cn->tx_off = 0;
	cn->tx_len = 0;
	if (rc) {
		reply_error(s, cn, m.hdr.req_id, -rc, NULL);
		return;
	}
	if ((m.hdr.flags & LEAP_WF_REPLY) || m.hdr.opcode == LEAP_WOP_ERROR) {
		reply_error(s, cn, m.hdr.req_id, LEAP_WERR_OP, "replies are for clients");
		return;
	}
	if (need[m.hdr.opcode] != cn->state) {
		reply_error(s, cn, m.hdr.req_id,
			    cn->state == ST_READY ? LEAP_WERR_STATE : LEAP_WERR_AUTH,
			    cn->state == ST_READY ? "already authenticated"
						  : "HELLO and AUTH come first");
		return;
	}
	switch (m.hdr.opcode) {
	case LEAP_WOP_HELLO:
		handle_hello(s, cn, &m);
		break;
	case LEAP_WOP_AUTH:
		handle_auth(s, cn, &m);
		break;
	case LEAP_WOP_READ:
		handle_read(s, cn, &m);
		break;
	case LEAP_WOP_WRITE:
		handle_write(s, cn, &m);
		break;
	case LEAP_WOP_FREE:
		handle_free(s, cn, &m);
		break;
	case LEAP_WOP_MAP:
		handle_map(s, cn, &m);
		break;
	case LEAP_WOP_FH_MOVE:
		if (!s->firehose) {
			reply_error(s, cn, m.hdr.req_id, LEAP_WERR_OP,
				    "FH_MOVE needs leap-memd --pin-budget");
			break;
		}
		cn->tx_len = (size_t)memd_fh_move(&s->fh, &cn->fh_id, &m, cn->tx,
						  LEAP_WIRE_MAX_MSG);
		break;
	case LEAP_WOP_STATS: {
		struct leap_mr_stats mr;

		leap_mr_get_stats(&mr);
		s->stat[LEAP_WSTAT_MR_REGS] = mr.regs;
		s->stat[LEAP_WSTAT_MR_DEREGS] = mr.deregs;
		s->stat[LEAP_WSTAT_MR_BYTES] = mr.bytes;
		s->stat[LEAP_WSTAT_CAPACITY_PAGES] = s->store->capacity;
		s->stat[LEAP_WSTAT_USED_PAGES] = s->store->used;
		if (s->firehose)
			memd_fh_stats(&s->fh, s->stat);
		cn->tx_len = (size_t)leap_wire_enc_stats_rep(
			cn->tx, LEAP_WIRE_MAX_MSG, m.hdr.req_id, s->stat, LEAP_WSTAT_NR);
		break;
	}
	}
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Arms the timer for the oldest held reply (or disarms it). */
static void delay_arm(struct server *s)
{
	struct itimerspec its = {0};

	if (s->dhead) {
		its.it_value.tv_sec = (time_t)(s->dhead->due_ns / 1000000000ULL);
		its.it_value.tv_nsec = (long)(s->dhead->due_ns % 1000000000ULL);
	}
	timerfd_settime(s->tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

/* What cn waits for: more requests unless it is closing or holds too much,
 * and writability while a reply is stuck in the socket. */
static void update_events(struct server *s, struct conn *cn)
{
	uint32_t ev = 0;

	if (!cn->closing && cn->held_bytes < HELD_MAX && !cn->tx_len)
		ev |= EPOLLIN;
	if (cn->out_blocked)
		ev |= EPOLLOUT;
	want(s, cn, ev);
}

/*
 * Holds cn's reply (cn->tx) for --delay-us in a buffer of its own, so the
 * connection reads on meanwhile.  Every reply of a connection goes this way
 * once it is held at all, so replies leave in the order they were made.
 */
static bool delay_reply(struct server *s, struct conn *cn)
{
	struct held *h = malloc(sizeof(*h) + cn->tx_len);

	if (!h) {
		LOG("%s: out of memory holding a reply; closing", cn->c.peer);
		conn_free(s, cn);
		return false;
	}
	h->next = NULL;
	h->cn = cn;
	h->due_ns = mono_ns() + (uint64_t)s->cfg->delay_us * 1000;
	h->len = cn->tx_len;
	h->off = 0;
	h->close_after = cn->close_after_tx;
	memcpy(h->buf, cn->tx, cn->tx_len);
	cn->tx_len = cn->tx_off = 0;
	cn->held_bytes += h->len;
	if (h->close_after)
		cn->closing = true;
	if (s->dtail)
		s->dtail->next = h;
	else
		s->dhead = h;
	s->dtail = h;
	if (s->dhead == h)
		delay_arm(s);
	return true;
}

/* Sends cn's due replies in order; false if the connection is gone. */
static bool send_held(struct server *s, struct conn *cn)
{
	while (cn->oq_head) {
		struct held *h = cn->oq_head;
		struct iovec iov = {h->buf + h->off, h->len - h->off};
		ssize_t n = cn->c.t->send(&cn->c, &iov, 1);

		if (n == -EAGAIN) {
			cn->out_blocked = true;
			update_events(s, cn);
			return true;
		}
		if (n <= 0) {
			conn_free(s, cn);
			return false;
		}
		h->off += (size_t)n;
		if (h->off < h->len)
			continue;
		cn->oq_head = h->next;
		if (!cn->oq_head)
			cn->oq_tail = NULL;
		cn->held_bytes -= h->len;
		if (h->close_after) {
			free(h);
			conn_free(s, cn);
			return false;
		}
		free(h);
	}
	cn->out_blocked = false;
	update_events(s, cn);
	return true;
}

/* The timer fired: every reply that is due moves to its connection's
 * output queue and goes out. */
static void delay_release(struct server *s)
{
	uint64_t ticks, now = mono_ns();

	if (read(s->tfd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
		LOG("timerfd: %s", strerror(errno));
	while (s->dhead && s->dhead->due_ns <= now) {
		struct held *h = s->dhead;
		struct conn *cn = h->cn;

		s->dhead = h->next;
		if (!s->dhead)
			s->dtail = NULL;
		h->next = NULL;
		if (cn->oq_tail)
			cn->oq_tail->next = h;
		else
			cn->oq_head = h;
		cn->oq_tail = h;
		if (!cn->out_blocked)
			send_held(s, cn);
	}
	delay_arm(s);
}

/* Sends what is queued; false if the connection is gone. */
static bool flush(struct server *s, struct conn *cn)
{
	while (cn->tx_off < cn->tx_len) {
		struct iovec iov = {cn->tx + cn->tx_off, cn->tx_len - cn->tx_off};
		ssize_t n = cn->c.t->send(&cn->c, &iov, 1);

		if (n == -EAGAIN) {
			want(s, cn, EPOLLOUT);
			return true;
		}
		if (n <= 0) {
			conn_free(s, cn);
			return false;
		}
		cn->tx_off += (size_t)n;
	}
	cn->tx_len = cn->tx_off = 0;
	if (cn->close_after_tx) {
		conn_free(s, cn);
		return false;
	}
	want(s, cn, EPOLLIN);
	return true;
}

/*
 * The reply in cn->tx goes out now, or is held (--delay-us, authenticated
 * connections).  True if the connection may read its next request now.
 */
static bool emit(struct server *s, struct conn *cn)
{
	if (s->cfg->delay_us && cn->state == ST_READY) {
		if (!cn->tx_len)
			return true;
		if (!delay_reply(s, cn))
			return false;
		if (cn->closing || cn->held_bytes >= HELD_MAX) {
			update_events(s, cn);
			return false;
		}
		return true;
	}
	/* closed, or waiting for EPOLLOUT before reading on */
	return flush(s, cn) && !cn->tx_len;
}

static void on_readable(struct server *s, struct conn *cn)
{
	/* Bounded so one busy client cannot starve the others. */
	for (int round = 0; round < 16; round++) {
		ssize_t n = cn->c.t->recv(&cn->c, cn->rx + cn->rx_have,
					  cn->rx_need - cn->rx_have);
		struct leap_wire_hdr h;
		int rc;

		if (n == -EAGAIN)
			return;
		if (n <= 0) {
			conn_free(s, cn);
			return;
		}
		cn->rx_have += (size_t)n;
		if (cn->rx_have < cn->rx_need)
			continue;
		if (cn->rx_need == LEAP_WIRE_HDR_SIZE) {
			rc = leap_wire_decode_hdr(cn->rx, cn->rx_have, &h);
			if (rc) {
				cn->tx_off = cn->tx_len = 0;
				reply_error(s, cn, h.req_id, -rc, "bad header");
				emit(s, cn);
				return;
			}
			/* Before authentication only HELLO and AUTH, both small, are
			 * allowed: never buffer a big payload for an unknown peer. */
			if (cn->state != ST_READY && h.length > LEAP_WIRE_HELLO_REP_LEN) {
				cn->tx_off = cn->tx_len = 0;
				reply_error(s, cn, h.req_id, LEAP_WERR_AUTH,
					    "HELLO and AUTH come first");
				emit(s, cn);
				return;
			}
			cn->rx_need += h.length;
			if (h.length)
				continue;
		}
		handle(s, cn);
		cn->rx_have = 0;
		cn->rx_need = LEAP_WIRE_HDR_SIZE;
		if (!emit(s, cn))
			return;
	}
}

static void on_accept(struct server *s)
{
	for (;;) {
		struct conn *cn = calloc(1, sizeof(*cn));
		struct epoll_event ev = {.events = EPOLLIN};

		if (!cn)
			return;
		cn->fh_id = MEMD_FH_NONE;
		if (s->listener.t->accept(&s->listener, &cn->c)) {
			free(cn);
			return;
		}
		s->stat[LEAP_WSTAT_CLIENTS_TOTAL]++;
		if (s->nconns >= s->cfg->max_clients) {
			LOG("%s: refused, %u clients already", cn->c.peer, s->nconns);
			cn->c.t->close(&cn->c);
			free(cn);
			continue;
		}
		cn->rx = malloc(LEAP_WIRE_MAX_MSG);
		cn->tx = malloc(LEAP_WIRE_MAX_MSG);
		ev.data.ptr = cn;
		if (!cn->rx || !cn->tx ||
		    epoll_ctl(s->ep, EPOLL_CTL_ADD, cn->c.fd, &ev)) {
			LOG("%s: refused, out of memory", cn->c.peer);
			cn->c.t->close(&cn->c);
			free(cn->rx);
			free(cn->tx);
			free(cn);
			continue;
		}
		cn->rx_need = LEAP_WIRE_HDR_SIZE;
		cn->auth_deadline = leap_now_ms() + s->cfg->auth_timeout_ms;
		cn->next = s->conns;
		s->conns = cn;
		s->nconns++;
		s->stat[LEAP_WSTAT_CLIENTS] = s->nconns;
		VLOG(s, "%s: connected", cn->c.peer);
	}
}

static void drop_all(struct server *s)
{
	LOG("dropping %u client connections (SIGUSR1)", s->nconns);
	while (s->conns)
		conn_free(s, s->conns);
}

static void on_signal(struct server *s)
{
	struct signalfd_siginfo si;

	while (read(s->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGUSR1)
			drop_all(s);
		else
			s->stop = true;
	}
}

/* Peers that have not authenticated in time are dropped (slow-loris). */
static void reap_unauthenticated(struct server *s)
{
	int64_t now = leap_now_ms();
	struct conn *cn = s->conns, *next;

	for (; cn; cn = next) {
		next = cn->next;
		if (cn->state != ST_READY && now > cn->auth_deadline) {
			LOG("%s: no authentication within %d ms, closing", cn->c.peer,
			    s->cfg->auth_timeout_ms);
			s->stat[LEAP_WSTAT_AUTH_FAILURES]++;
			conn_free(s, cn);
		}
	}
}

static int write_port_file(const char *path, const char *addr)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return -1;
	fprintf(f, "%s\n", addr);
	if (fclose(f) || rename(tmp, path))
		return -1;
	return 0;
}

int memd_serve(const struct memd_config *cfg, struct memd_store *store)
{
	struct server s = {.cfg = cfg, .store = store, .ep = -1, .sigfd = -1, .tfd = -1};
	struct epoll_event ev, evs[64];
	char err[256], bound[128];
	sigset_t mask;
	int rc = 1;

	uint8_t rnd[LEAP_WIRE_NONCE_LEN];

	/* A random instance id lets clients tell a restarted server (empty) from
	 * a reconnection to the same one. */
	if (leap_wire_nonce(rnd)) {
		LOG("no randomness");
		return 1;
	}
	memcpy(&s.instance, rnd, sizeof(s.instance));
	s.stat[LEAP_WSTAT_CAPACITY_PAGES] = store->capacity;
	if (cfg->transport->listen(&s.listener, cfg->listen, err, sizeof(err))) {
		LOG("%s", err);
		return 1;
	}
	/* One-sided transports with a pin budget below the store: regions on
	 * demand (Firehose); the store's address range is still what MAP hands
	 * out, with no key of its own. */
	if (cfg->transport->export_mem && cfg->pin_budget &&
	    cfg->pin_budget < store->capacity * LEAP_WIRE_PAGE_SIZE) {
		if (memd_fh_init(&s.fh, &s.listener, store->arena,
				 store->capacity * LEAP_WIRE_PAGE_SIZE, cfg->region_size,
				 cfg->pin_budget, cfg->fh_clients, err, sizeof(err))) {
			LOG("%s", err);
			s.listener.t->close(&s.listener);
			return 1;
		}
		s.firehose = s.exported = true;
		s.ex = (struct leap_export){(uintptr_t)store->arena,
					    store->capacity * LEAP_WIRE_PAGE_SIZE, 0};
		LOG("pin budget %llu MiB in %llu KiB regions: %u per client, %u clients",
		    (unsigned long long)(cfg->pin_budget >> 20),
		    (unsigned long long)(cfg->region_size >> 10), s.fh.share,
		    cfg->fh_clients);
	} else if (cfg->transport->export_mem) {
		/* Register the whole store once, up front. */
		if (cfg->transport->export_mem(&s.listener, store->arena,
					       store->capacity * LEAP_WIRE_PAGE_SIZE,
					       &s.ex, err, sizeof(err))) {
			LOG("%s", err);
			s.listener.t->close(&s.listener);
			return 1;
		}
		s.exported = true;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGUSR1);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	s.sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	s.ep = epoll_create1(EPOLL_CLOEXEC);
	if (s.sigfd < 0 || s.ep < 0) {
		LOG("epoll/signalfd: %s", strerror(errno));
		goto out;
	}
	ev = (struct epoll_event){.events = EPOLLIN, .data.ptr = &s.listener};
	epoll_ctl(s.ep, EPOLL_CTL_ADD, s.listener.fd, &ev);
	ev = (struct epoll_event){.events = EPOLLIN, .data.ptr = &s.sigfd};
	epoll_ctl(s.ep, EPOLL_CTL_ADD, s.sigfd, &ev);
	if (cfg->delay_us) {
		s.tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
		if (s.tfd < 0) {
			LOG("timerfd: %s", strerror(errno));
			goto out;
		}
		ev = (struct epoll_event){.events = EPOLLIN, .data.ptr = &s.tfd};
		epoll_ctl(s.ep, EPOLL_CTL_ADD, s.tfd, &ev);
		/* The default 50 us timer slack would dwarf a short delay. */
		prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
		LOG("holding every reply %u us (--delay-us: an emulated network)",
		    cfg->delay_us);
	}

	if (cfg->transport->local_addr(&s.listener, bound, sizeof(bound)))
		snprintf(bound, sizeof(bound), "%s", cfg->listen);
	LOG("serving %llu pages (%llu MiB) on %s://%s",
	    (unsigned long long)store->capacity,
	    (unsigned long long)(store->capacity >> 8), cfg->transport->name, bound);
	if (cfg->port_file && write_port_file(cfg->port_file, bound)) {
		LOG("cannot write %s: %s", cfg->port_file, strerror(errno));
		goto out;
	}
	while (!s.stop) {
		int n = epoll_wait(s.ep, evs, 64, 1000);

		if (n < 0 && errno != EINTR) {
			LOG("epoll_wait: %s", strerror(errno));
			goto out;
		}
		for (int i = 0; i < n; i++) {
			void *p = evs[i].data.ptr;

			if (p == &s.listener) {
				on_accept(&s);
			} else if (p == &s.tfd) {
				delay_release(&s);
			} else if (p == &s.sigfd) {
				on_signal(&s);
				/* Connections may be gone: the rest of this batch is
				 * stale. */
				break;
			} else {
				struct conn *cn = p;
				uint32_t e = evs[i].events;

				if (cn->dead)
					continue;
				if (e & EPOLLOUT) {
					if (cn->out_blocked)
						send_held(&s, cn);
					else if (cn->tx_len)
						flush(&s, cn);
					else
						update_events(&s, cn);
					continue;
				}
				/* Not reading (closing or too much held): only a
				 * peer that went away matters. */
				if (cn->closing || cn->held_bytes >= HELD_MAX) {
					if (e & (EPOLLHUP | EPOLLERR))
						conn_free(&s, cn);
					continue;
				}
				on_readable(&s, cn);
			}
		}
		reap_unauthenticated(&s);
		reap(&s);
	}
	LOG("stopping: %llu pages used, %llu read, %llu written",
	    (unsigned long long)store->used,
	    (unsigned long long)s.stat[LEAP_WSTAT_PAGES_READ],
	    (unsigned long long)s.stat[LEAP_WSTAT_PAGES_WRITTEN]);
	if (s.firehose) {
		struct leap_reg_stats st;
		char line[512];

		leap_fh_server_stats(s.fh.srv, &st);
		leap_reg_stats_format(&st, line, sizeof(line));
		LOG("firehose: %s", line);
	}
	rc = 0;
out:
	while (s.conns)
		conn_free(&s, s.conns);
	reap(&s);
	if (s.firehose)
		memd_fh_fini(&s.fh);
	s.listener.t->close(&s.listener);
	if (s.ep >= 0)
		close(s.ep);
	if (s.sigfd >= 0)
		close(s.sigfd);
	if (s.tfd >= 0)
		close(s.tfd);
	return rc;
}
