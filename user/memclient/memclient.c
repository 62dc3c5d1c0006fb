// SPDX-License-Identifier: MIT
/*
 * memclient's public API (memclient.h): open and close, write, read and
 * prefetch, discard, capacity check, statistics; and the log lines the
 * other files share.  Every buffer is allocated at open: leap-swapd calls
 * this on the swap-out path, where allocating memory can wait for the very
 * swap-out being served.  How the rest is split up: memclient_int.h.
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

#include "leap/reg.h"
#include "memclient_int.h"
#include "rdma_mr.h"

void mc_log(struct leap_mc *mc, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: %s\n", mc->cfg.log_prefix, line);
}

int mc_check_range(struct leap_mc *mc, uint64_t off, size_t len)
{
	if (off % LEAP_WIRE_PAGE_SIZE || len % LEAP_WIRE_PAGE_SIZE ||
	    off / LEAP_WIRE_PAGE_SIZE > mc->cfg.dev_pages ||
	    len / LEAP_WIRE_PAGE_SIZE > mc->cfg.dev_pages - off / LEAP_WIRE_PAGE_SIZE)
		return -EINVAL;
	return 0;
}

void mc_retry_wait(struct leap_mc *mc, int *attempt, int *backoff_ms, const char *err)
{
	if ((*attempt)++ == 0)
		mc_log(mc, "%s; retrying for up to %d ms", err, mc->cfg.retry_ms);
	COUNT(mc, retries, 1);
	nanosleep(&(struct timespec){0, *backoff_ms * 1000000L}, NULL);
	*backoff_ms = *backoff_ms * 2 > 500 ? 500 : *backoff_ms * 2;
}

void mc_log_io_error(struct leap_mc *mc, const char *what, uint64_t pg, const char *why)
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

int leap_mc_write(struct leap_mc *mc, uint64_t off, const void *buf, size_t len)
{
	uint64_t pg = off / LEAP_WIRE_PAGE_SIZE, left = len / LEAP_WIRE_PAGE_SIZE;
	const uint8_t *p = buf;

	if (mc_check_range(mc, off, len))
		return -EINVAL;
	COUNT(mc, writes, 1);
	while (left) {
		uint32_t n = mc_chunk_pages(mc, pg, left);
		uint64_t offset[LEAP_WIRE_MAX_BATCH];
		uint8_t valid = 0;
		struct srv_io io[2];

		pthread_mutex_t *cl = mc_chunk_lock(mc, pg);

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

			mc_srv_io_start(&io[k], &mc->srv[si], LEAP_WOP_WRITE, false,
					offset, n, NULL, p);
		}
		for (unsigned k = 0; k < mc->cfg.replicas; k++)
			if (mc_srv_io_finish(&io[k]) == 0)
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
				mc_srv_io_start(&io[k], io[k].s, LEAP_WOP_WRITE, false,
						offset, n, NULL, p);
				if (mc_srv_io_finish(&io[k]) == 0 &&
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
			mc_log_io_error(mc, "write", pg, "no replica reachable");
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
			mc_srv_io_start(&req[si].io, &mc->srv[si], LEAP_WOP_READ, true,
					req[si].offset, req[si].cnt, req[si].out, NULL);
	for (unsigned si = 0; si < mc->cfg.nservers; si++) {
		if (!req[si].cnt)
			continue;
		if (mc_srv_io_finish(&req[si].io))
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

	if (mc_check_range(mc, off, len))
		return -EINVAL;
	while (left) {
		uint32_t n = mc_chunk_pages(mc, pg, left);

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
		pthread_mutex_lock(mc_chunk_lock(mc, pg));
		for (uint32_t i = 0; i < n; i++)
			__atomic_store_n(&mc->pstate[pg + i], 0, __ATOMIC_RELAXED);
		for (unsigned k = 0; k < mc->cfg.replicas; k++)
			mc_srv_io_start(&io[k],
					&mc->srv[leap_mc_place(pg, mc->cfg.stripe_pages,
							       mc->cfg.nservers, k)],
					LEAP_WOP_FREE, false, offset, n, NULL, NULL);
		for (unsigned k = 0; k < mc->cfg.replicas; k++)
			if (mc_srv_io_finish(&io[k]))
				COUNT(mc, free_failures, 1);
		pthread_mutex_unlock(mc_chunk_lock(mc, pg));
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

		rc = mc_srv_pipe_call(s, &r);
		return rc ? rc : (int)r.nstats;
	}
	l = mc_lane_take(s);
	rc = mc_lane_request(l, mc_build_stats, NULL, NULL, 0, LEAP_WOP_STATS, &m);
	if (rc == 0) {
		memcpy(value, m.u.stats.value, sizeof(uint64_t) * m.u.stats.n);
		rc = (int)m.u.stats.n;
	}
	mc_lane_put(l);
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
 *    in the file and the first handshake clears its bits (mc_srv_handshake);
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
		 * pages (mc_srv_handshake); one never seen holds no claimed page. */
		if (mc->have_ps && mc->ps.hdr->have_instance[i]) {
			s->instance = mc->ps.hdr->instance[i];
			s->have_instance = true;
		} else if (mc->have_ps && mc->ps.reattached) {
			mc_srv_lost_everything(mc, i);
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
			rc = mc_lane_connect(&s->lanes[0], err, errlen);
		/*
		 * A server just resumed (SIGCONT) or restarted can reset the
		 * first handshake (seen in backend-faults.t): a stream
		 * connection is tried three times, 200 ms apart, before the
		 * open fails.  Connections that came up stay up.
		 */
		for (int attempt = 0; s->pipes && attempt < 3; attempt++) {
			rc = 0;
			for (unsigned j = 0; j < s->npipes && !rc; j++)
				rc = mc_srv_pipe_ready(s, &s->pipes[j], &fresh, err,
						       errlen);
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
			mc_srv_mark_down(s, leap_now_ms(), err);
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
			!pthread_create(&mc->resilver, NULL, mc_resilver_main, mc);
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

			mc_lane_disconnect(l);
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
