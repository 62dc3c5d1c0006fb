// SPDX-License-Identifier: MIT
/*
 * memclient's replication: placement (which servers hold a page's
 * replicas; stripes and their locks), forgetting what a server that lost
 * everything held, and re-replication at r = 2 (the resilver thread copies
 * pages left on one replica back to the other, and probes servers marked
 * down).
 */
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "memclient_int.h"

unsigned leap_mc_place(uint64_t pg, uint32_t stripe_pages, unsigned nservers, unsigned k)
{
	return (unsigned)((pg / stripe_pages + k) % nservers);
}

/* Forget which pages server idx held: it lost them all. */
void mc_srv_lost_everything(struct leap_mc *mc, unsigned idx)
{
	for (uint64_t pg = 0; pg < mc->cfg.dev_pages; pg++)
		for (unsigned k = 0; k < mc->cfg.replicas; k++)
			if (leap_mc_place(pg, mc->cfg.stripe_pages, mc->cfg.nservers,
					  k) == idx)
				__atomic_and_fetch(&mc->pstate[pg],
						   (uint8_t) ~(PS_VALID0 << k),
						   __ATOMIC_RELAXED);
}

/* Pages from pg on that share a stripe, at most a batch. */
uint32_t mc_chunk_pages(struct leap_mc *mc, uint64_t pg, uint64_t left)
{
	uint64_t n = mc->cfg.stripe_pages - pg % mc->cfg.stripe_pages;

	if (n > left)
		n = left;
	return n > LEAP_WIRE_MAX_BATCH ? LEAP_WIRE_MAX_BATCH : (uint32_t)n;
}

pthread_mutex_t *mc_chunk_lock(struct leap_mc *mc, uint64_t pg)
{
	return &mc->chunk_lock[(pg / mc->cfg.stripe_pages) % CHUNK_LOCKS];
}

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
	if (mc_srv_read(&mc->srv[ssrv], offset, cnt, out, &present))
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
	if (!m || mc_srv_write(d, offset, m, mc->rs_buf))
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
		uint32_t n = mc_chunk_pages(mc, pg, mc->cfg.dev_pages - pg);
		bool any = false;

		/* Cheap unlocked look first: most chunks are fully replicated. */
		for (uint32_t i = 0; i < n && !any; i++) {
			uint8_t st =
				__atomic_load_n(&mc->pstate[pg + i], __ATOMIC_RELAXED);

			any = (st & PS_WRITTEN) && (st & (PS_VALID0 | PS_VALID0 << 1)) !=
							   (PS_VALID0 | PS_VALID0 << 1);
		}
		if (any) {
			pthread_mutex_lock(mc_chunk_lock(mc, pg));
			copied += resilver_chunk(mc, pg, n, 0, 1, &under);
			copied += resilver_chunk(mc, pg, n, 1, 0, &under);
			pthread_mutex_unlock(mc_chunk_lock(mc, pg));
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

void *mc_resilver_main(void *arg)
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
