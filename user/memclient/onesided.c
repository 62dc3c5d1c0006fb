// SPDX-License-Identifier: MIT
/*
 * memclient's one-sided transport path (RDMA): MAP (where the pages live in
 * a server's exported store), firehoses for a server with a pin budget
 * (FH_MOVE, acquire, release), the RDMA READ/WRITE of a request's pages,
 * FREE across a server's lanes, and the --reg-trace records.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "leap/firehose.h"
#include "leap/regtrace.h"
#include "memclient_int.h"

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

long mc_build_stats(struct mc_lane *l, uint64_t id, void *p)
{
	(void)p;
	return leap_wire_enc_empty(l->tx, sizeof(l->tx), LEAP_WOP_STATS, 0, id);
}

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
	rc = mc_lane_roundtrip(l, &iov, 1, id, LEAP_WOP_MAP, &m);
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
	rc = mc_lane_roundtrip(l, &iov, 1, id, LEAP_WOP_FH_MOVE, m);
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
int mc_lane_pages(struct mc_server *s, struct page_arg *pa, uint64_t *instance)
{
	struct mc_lane *l = mc_lane_take(s);
	struct leap_wire_msg m;
	int rc = mc_lane_request_(l, NULL, try_pages, pa, NULL, 0, pa->op, &m);

	*instance = l->instance;
	mc_lane_put(l);
	return rc;
}

/*
 * FREE on a one-sided transport's connection; the pages' MAP answers go.
 * Every lane is held meanwhile (taken in order; no caller holds a lane
 * while it waits for another), so none can learn a page's old slot between
 * the forgetting and the FREE and later write into a slot the server has
 * handed to another page.
 */
int mc_srv_free_sync(struct mc_server *s, const uint64_t *offset, uint32_t count)
{
	struct io_arg a = {LEAP_WOP_FREE, count, offset};
	struct leap_wire_msg m;
	int rc;

	for (unsigned j = 0; j < s->nlanes; j++) {
		pthread_mutex_lock(&s->lanes[j].lock);
		for (uint32_t i = 0; i < count; i++)
			s->lanes[j].ridx[offset[i] / LEAP_WIRE_PAGE_SIZE] = 0;
	}
	rc = mc_lane_request(&s->lanes[0], build_io, &a, NULL, 0, LEAP_WOP_FREE, &m);
	if (rc == 0 && (m.u.io.count != count || m.u.io.dev != s->mc->cfg.dev))
		rc = -EPROTO;
	for (unsigned j = s->nlanes; j-- > 0;)
		pthread_mutex_unlock(&s->lanes[j].lock);
	return rc;
}
