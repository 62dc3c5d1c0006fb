// SPDX-License-Identifier: MIT
/*
 * memclient's read of the device: each chunk from its replicas in turn,
 * the first request of every chunk of a call at once; failover, pages a
 * replica lost, and -EIO when no replica holding the latest version
 * answers.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "memclient_int.h"

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

	mc_srv_io_start(&c->io, &mc->srv[si], LEAP_WOP_READ, prefetch, c->offset, c->cnt,
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
		chunk_absorb(mc, c, mc_srv_io_finish(&c->io));
	}
	if (c->need) {
		mc_log_io_error(mc, "read", c->pg + (uint64_t)__builtin_ctzll(c->need),
				"no replica holding its latest version answered");
		return -EIO;
	}
	return 0;
}

/* Chunks in flight at once per call: the largest FUSE or NBD request
 * (1 MiB) in 16-page stripes. */
#define READ_CHUNKS 16

int mc_read(struct leap_mc *mc, uint64_t off, void *buf, size_t len, bool prefetch)
{
	uint64_t pg = off / LEAP_WIRE_PAGE_SIZE, left = len / LEAP_WIRE_PAGE_SIZE;
	uint8_t *p = buf;
	/* On the stack (~25 KiB): no allocation on the swap path. */
	struct rchunk ch[READ_CHUNKS];
	int rc = 0;

	if (mc_check_range(mc, off, len))
		return -EINVAL;
	COUNT(mc, reads, 1);
	while (left && !rc) {
		unsigned nch = 0, done = 0;
		uint64_t pages = 0;

		for (; left && nch < READ_CHUNKS; nch++) {
			uint32_t n = mc_chunk_pages(mc, pg, left);

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
				chunk_absorb(mc, c, mc_srv_io_finish(&c->io));
			if (!rc)
				rc = chunk_finish(mc, c, prefetch);
		}
		if (!rc)
			COUNT(mc, pages_read, pages);
	}
	return rc;
}
