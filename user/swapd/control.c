// SPDX-License-Identifier: MIT
/*
 * leap-swapd's control socket: how leap-agent (or an operator) asks the
 * backend to prefetch swap slots into its cache, and reads its counters.
 * A Unix stream socket, mode 0600, and the peer's uid (SO_PEERCRED) must be
 * root or this daemon's: swap contents are other processes' memory.
 *
 * Text protocol, one command per line (at most CTL_LINE_MAX bytes), one
 * reply line each:
 *   PREFETCH SLOT...   slots are page indices of the device (the swap
 *                      entry's offset), up to CTL_BATCH_MAX per line; all
 *                      are validated before any is queued
 *                      -> "OK queued=N dropped=M" (dropped: queue full)
 *   STATS              -> "OK key=value ..." (new keys are appended)
 * Anything else -> "ERR reason"; a line too long closes the connection.
 *
 * Prefetches run on their own thread so a command never waits for the
 * network: the queue is bounded and a full queue drops (and counts) slots.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "rdma_mr.h"
#include "swapd.h"

#define CTL_LINE_MAX  65536
#define CTL_BATCH_MAX 4096
#define CTL_CLIENTS   8
#define QUEUE_CAP     8192
/* Prefetch windows in flight at once, each one READ per server: more than
 * one so a window never waits for the one before it. */
#define FETCH_THREADS 4

struct ctl_client {
	int fd;
	size_t len;
	char *buf; /* CTL_LINE_MAX + 1 */
};

struct swapd_ctl {
	struct swapd *sd;
	char path[108];
	int lfd, wake[2];
	pthread_t ctl_thread, fetch_thread[FETCH_THREADS];
	bool have_ctl;
	unsigned nfetch;
	struct ctl_client cl[CTL_CLIENTS];
	uint64_t *batch; /* parsed slots of one command */
	pthread_mutex_t qlock;
	pthread_cond_t qcond;
	uint64_t q[QUEUE_CAP];
	uint32_t qhead, qlen;
	uint64_t queued, dropped, commands, bad_commands;
	bool stop;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* ---- the prefetch thread ------------------------------------------------ */

/*
 * Fetches distinct pages pg[0..n) (n <= LEAP_WIRE_MAX_BATCH) straight into
 * their cache entries: one prefetch-class READ per server for the whole
 * window (leap_mc_prefetch_pages), not one round trip per run.
 */
static void fetch_batch(struct swapd_ctl *ctl, uint64_t *pg, uint32_t n)
{
	struct swapd *sd = ctl->sd;
	uint8_t *dst[LEAP_WIRE_MAX_BATCH];
	uint64_t want[LEAP_WIRE_MAX_BATCH], ok = 0;
	uint32_t m = 0;

	for (uint32_t i = 0; i < n; i++) {
		uint8_t *d = pcache_begin(&sd->cache, pg[i]);

		if (d) {
			want[m] = pg[i];
			dst[m++] = d;
		}
	}
	if (!m)
		return;
	if (leap_mc_prefetch_pages(sd->mc, want, m, dst, &ok))
		ok = 0;
	for (uint32_t j = 0; j < m; j++)
		pcache_end(&sd->cache, want[j], ok >> j & 1);
}

static void *fetch_main(void *arg)
{
	struct swapd_ctl *ctl = arg;
	uint64_t pg[LEAP_WIRE_MAX_BATCH];

	for (;;) {
		uint32_t n = 0, m = 0;

		pthread_mutex_lock(&ctl->qlock);
		while (!ctl->qlen && !ctl->stop)
			pthread_cond_wait(&ctl->qcond, &ctl->qlock);
		if (ctl->stop) {
			pthread_mutex_unlock(&ctl->qlock);
			return NULL;
		}
		while (ctl->qlen && n < LEAP_WIRE_MAX_BATCH) {
			pg[n++] = ctl->q[ctl->qhead];
			ctl->qhead = (ctl->qhead + 1) % QUEUE_CAP;
			ctl->qlen--;
		}
		pthread_mutex_unlock(&ctl->qlock);
		qsort(pg, n, sizeof(pg[0]), cmp_u64);
		for (uint32_t i = 0; i < n; i++)
			if (!m || pg[i] != pg[m - 1])
				pg[m++] = pg[i];
		fetch_batch(ctl, pg, m);
	}
}

/* ---- commands ------------------------------------------------------------- */

/* Queues validated slots for the fetch thread; how many fit. */
static uint32_t enqueue(struct swapd_ctl *ctl, const uint64_t *slot, uint32_t n)
{
	uint32_t queued = 0;

	pthread_mutex_lock(&ctl->qlock);
	for (uint32_t i = 0; i < n && ctl->qlen < QUEUE_CAP; i++) {
		ctl->q[(ctl->qhead + ctl->qlen) % QUEUE_CAP] = slot[i];
		ctl->qlen++;
		queued++;
	}
	ctl->queued += queued;
	ctl->dropped += n - queued;
	pthread_cond_signal(&ctl->qcond);
	pthread_mutex_unlock(&ctl->qlock);
	return queued;
}

int swapd_ioctl_prefetch(struct swapd *sd, struct leap_swapd_prefetch *p)
{
	uint64_t dev_pages = sd->size / LEAP_WIRE_PAGE_SIZE;

	if (!sd->ctl)
		return -ENOTTY;
	if (p->count < 1 || p->count > LEAP_SWAPD_IOC_SLOTS)
		return -EINVAL;
	for (uint32_t i = 0; i < p->count; i++)
		if (p->slot[i] >= dev_pages)
			return -EINVAL;
	sd->ctl->commands++;
	p->queued = enqueue(sd->ctl, p->slot, p->count);
	return 0;
}

int swapd_ioctl_stats(struct swapd *sd, struct leap_swapd_stats *o)
{
	struct pcache_stats c;

	if (!sd->ctl)
		return -ENOTTY;
	pcache_get_stats(&sd->cache, &c);
	pthread_mutex_lock(&sd->stat_lock);
	o->reads = sd->cnt.reads;
	o->writes = sd->cnt.writes;
	o->pages_in = sd->cnt.pages_in;
	o->pages_out = sd->cnt.pages_out;
	o->errors = sd->cnt.errors;
	pthread_mutex_unlock(&sd->stat_lock);
	o->cached = c.cached;
	o->prefetched = c.prefetched;
	o->hits = c.hits;
	o->misses = c.misses;
	o->evicted_hit = c.evicted_hit;
	o->evicted_unused = c.evicted_unused;
	o->invalidated = c.invalidated;
	o->kept = c.kept;
	pthread_mutex_lock(&sd->ctl->qlock);
	o->queued = sd->ctl->queued;
	o->dropped = sd->ctl->dropped;
	pthread_mutex_unlock(&sd->ctl->qlock);
	return 0;
}

static int reply(int fd, const char *s)
{
	size_t len = strlen(s), off = 0;

	while (off < len) {
		ssize_t n = send(fd, s + off, len - off, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		off += (size_t)n;
	}
	return 0;
}

static void cmd_prefetch(struct swapd_ctl *ctl, int fd, char *args)
{
	uint64_t dev_pages = ctl->sd->size / LEAP_WIRE_PAGE_SIZE, queued, dropped;
	char out[128], *p = args;
	uint32_t n = 0;

	for (;;) {
		char *end;
		unsigned long long v;

		while (*p == ' ')
			p++;
		if (!*p)
			break;
		if (*p < '0' || *p > '9') {
			reply(fd, "ERR slots are decimal page indices\n");
			ctl->bad_commands++;
			return;
		}
		errno = 0;
		v = strtoull(p, &end, 10);
		if (errno || (*end && *end != ' ') || v >= dev_pages) {
			snprintf(out, sizeof(out),
				 "ERR slot out of range (device has %llu)\n",
				 (unsigned long long)dev_pages);
			reply(fd, out);
			ctl->bad_commands++;
			return;
		}
		if (n == CTL_BATCH_MAX) {
			reply(fd, "ERR more than 4096 slots in one command\n");
			ctl->bad_commands++;
			return;
		}
		ctl->batch[n++] = v;
		p = end;
	}
	queued = enqueue(ctl, ctl->batch, n);
	dropped = n - queued;
	snprintf(out, sizeof(out), "OK queued=%llu dropped=%llu\n",
		 (unsigned long long)queued, (unsigned long long)dropped);
	reply(fd, out);
}

static void cmd_stats(struct swapd_ctl *ctl, int fd)
{
	struct swapd *sd = ctl->sd;
	struct pcache_stats c;
	struct leap_mc_counters m;
	struct leap_mr_stats mr;
	struct swapd_counters s;
	uint64_t queued, dropped, qlen;
	char out[2048];
	size_t n;

	pcache_get_stats(&sd->cache, &c);
	leap_mc_get_counters(sd->mc, &m);
	leap_mr_get_stats(&mr);
	pthread_mutex_lock(&sd->stat_lock);
	s = sd->cnt;
	pthread_mutex_unlock(&sd->stat_lock);
	pthread_mutex_lock(&ctl->qlock);
	queued = ctl->queued;
	dropped = ctl->dropped;
	qlen = ctl->qlen;
	pthread_mutex_unlock(&ctl->qlock);
	snprintf(out, sizeof(out),
		 "OK reads=%llu writes=%llu pages_in=%llu pages_out=%llu errors=%llu "
		 "cache_pages=%u cached=%llu prefetched=%llu hits=%llu misses=%llu "
		 "evicted_hit=%llu evicted_unused=%llu invalidated=%llu kept=%llu "
		 "waited=%llu skipped_demand=%llu queued=%llu dropped=%llu queue=%llu "
		 "commands=%llu "
		 "bad_commands=%llu "
		 "resilvered=%llu under_replicated=%llu discards=%llu "
		 "pages_discarded=%llu mr_regs=%llu mr_deregs=%llu "
		 "mr_bytes=%llu fh_moves=%llu fh_pins=%llu peak_inflight=%llu\n",
		 (unsigned long long)s.reads, (unsigned long long)s.writes,
		 (unsigned long long)s.pages_in, (unsigned long long)s.pages_out,
		 (unsigned long long)s.errors, sd->cache.cap,
		 (unsigned long long)c.cached, (unsigned long long)c.prefetched,
		 (unsigned long long)c.hits, (unsigned long long)c.misses,
		 (unsigned long long)c.evicted_hit, (unsigned long long)c.evicted_unused,
		 (unsigned long long)c.invalidated, (unsigned long long)c.kept,
		 (unsigned long long)c.waited, (unsigned long long)c.skipped_demand,
		 (unsigned long long)queued, (unsigned long long)dropped,
		 (unsigned long long)qlen, (unsigned long long)ctl->commands,
		 (unsigned long long)ctl->bad_commands, (unsigned long long)m.resilvered,
		 (unsigned long long)m.under_replicated, (unsigned long long)s.discards,
		 (unsigned long long)s.pages_discarded, (unsigned long long)mr.regs,
		 (unsigned long long)mr.deregs, (unsigned long long)mr.bytes,
		 (unsigned long long)m.fh_moves, (unsigned long long)m.fh_pins,
		 (unsigned long long)m.peak_inflight);
	/* The registration cache's line (zero-copy), if there is one. */
	n = strlen(out);
	if (n && out[n - 1] == '\n') {
		leap_mc_reg_stats(out + n - 1, sizeof(out) - n);
		n = strlen(out);
		if (n + 1 < sizeof(out)) {
			out[n] = '\n';
			out[n + 1] = '\0';
		}
	}
	reply(fd, out);
}

static void command(struct swapd_ctl *ctl, int fd, char *line)
{
	size_t n = strlen(line);

	if (n && line[n - 1] == '\r')
		line[n - 1] = '\0';
	ctl->commands++;
	if (!strncmp(line, "PREFETCH", 8) && (line[8] == ' ' || !line[8])) {
		cmd_prefetch(ctl, fd, line + 8);
	} else if (!strcmp(line, "STATS")) {
		cmd_stats(ctl, fd);
	} else {
		ctl->bad_commands++;
		reply(fd, "ERR unknown command (PREFETCH SLOT..., STATS)\n");
	}
}

/* ---- the socket thread -------------------------------------------------- */

static void client_close(struct ctl_client *c)
{
	close(c->fd);
	c->fd = -1;
	c->len = 0;
}

static void on_client(struct swapd_ctl *ctl, struct ctl_client *c)
{
	ssize_t n = recv(c->fd, c->buf + c->len, CTL_LINE_MAX - c->len, 0);
	char *nl;

	if (n <= 0) {
		client_close(c);
		return;
	}
	c->len += (size_t)n;
	c->buf[c->len] = '\0';
	while ((nl = memchr(c->buf, '\n', c->len))) {
		size_t used = (size_t)(nl - c->buf) + 1;

		*nl = '\0';
		command(ctl, c->fd, c->buf);
		memmove(c->buf, c->buf + used, c->len - used);
		c->len -= used;
		c->buf[c->len] = '\0';
	}
	if (c->len == CTL_LINE_MAX) {
		ctl->bad_commands++;
		reply(c->fd, "ERR line too long\n");
		client_close(c);
	}
}

static void on_accept(struct swapd_ctl *ctl)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);
	int fd = accept4(ctl->lfd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		return;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) ||
	    (cr.uid != 0 && cr.uid != geteuid())) {
		close(fd);
		return;
	}
	for (int i = 0; i < CTL_CLIENTS; i++)
		if (ctl->cl[i].fd < 0) {
			ctl->cl[i].fd = fd;
			ctl->cl[i].len = 0;
			return;
		}
	reply(fd, "ERR too many control connections\n");
	close(fd);
}

static void *ctl_main(void *arg)
{
	struct swapd_ctl *ctl = arg;

	for (;;) {
		struct pollfd pfd[CTL_CLIENTS + 2];
		int n = 0, map[CTL_CLIENTS + 2];

		pfd[n++] = (struct pollfd){.fd = ctl->wake[0], .events = POLLIN};
		pfd[n++] = (struct pollfd){.fd = ctl->lfd, .events = POLLIN};
		for (int i = 0; i < CTL_CLIENTS; i++)
			if (ctl->cl[i].fd >= 0) {
				map[n] = i;
				pfd[n++] = (struct pollfd){.fd = ctl->cl[i].fd,
							   .events = POLLIN};
			}
		if (poll(pfd, (nfds_t)n, -1) < 0) {
			if (errno == EINTR)
				continue;
			return NULL;
		}
		if (pfd[0].revents)
			return NULL;
		if (pfd[1].revents)
			on_accept(ctl);
		for (int j = 2; j < n; j++)
			if (pfd[j].revents)
				on_client(ctl, &ctl->cl[map[j]]);
	}
}

int swapd_ctl_start(struct swapd *sd, const char *path, char *err, size_t errlen)
{
	struct swapd_ctl *ctl = calloc(1, sizeof(*ctl));
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	sigset_t stop_sigs, old_sigs;
	pthread_attr_t attr;
	struct stat st;
	mode_t old;

	if (!ctl)
		goto nomem;
	ctl->sd = sd;
	ctl->lfd = -1;
	ctl->wake[0] = ctl->wake[1] = -1;
	for (int i = 0; i < CTL_CLIENTS; i++) {
		ctl->cl[i].fd = -1;
		ctl->cl[i].buf = malloc(CTL_LINE_MAX + 1);
		if (!ctl->cl[i].buf)
			goto nomem;
	}
	ctl->batch = malloc(CTL_BATCH_MAX * sizeof(*ctl->batch));
	if (!ctl->batch)
		goto nomem;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "control socket path too long: %s", path);
		goto fail;
	}
	strcpy(sa.sun_path, path);
	snprintf(ctl->path, sizeof(ctl->path), "%s", path);
	/* Replace a stale socket, never another kind of file. */
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(err, errlen, "%s exists and is not a socket", path);
			goto fail;
		}
		unlink(path);
	}
	ctl->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	old = umask(077); /* no window in which the socket is world-connectable */
	if (ctl->lfd < 0 || bind(ctl->lfd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(ctl->lfd, 8)) {
		umask(old);
		snprintf(err, errlen, "control socket %s: %s", path, strerror(errno));
		goto fail;
	}
	umask(old);
	if (chmod(path, 0600) || pipe2(ctl->wake, O_CLOEXEC)) {
		snprintf(err, errlen, "control socket %s: %s", path, strerror(errno));
		goto fail;
	}
	pthread_mutex_init(&ctl->qlock, NULL);
	pthread_cond_init(&ctl->qcond, NULL);
	/* Stop signals must reach the FUSE threads, whose waits they interrupt:
	 * these threads start with them blocked. */
	sigemptyset(&stop_sigs);
	sigaddset(&stop_sigs, SIGTERM);
	sigaddset(&stop_sigs, SIGINT);
	sigaddset(&stop_sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &stop_sigs, &old_sigs);
	/* mlockall locks whole stacks: 256 KiB, not glibc's 8 MiB, each. */
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 << 10);
	while (ctl->nfetch < FETCH_THREADS &&
	       !pthread_create(&ctl->fetch_thread[ctl->nfetch], &attr, fetch_main, ctl))
		ctl->nfetch++;
	pthread_attr_destroy(&attr);
	ctl->have_ctl = ctl->nfetch == FETCH_THREADS &&
			!pthread_create(&ctl->ctl_thread, NULL, ctl_main, ctl);
	pthread_sigmask(SIG_SETMASK, &old_sigs, NULL);
	if (!ctl->have_ctl) {
		snprintf(err, errlen, "cannot start the control threads");
		goto fail;
	}
	sd->ctl = ctl;
	return 0;
nomem:
	snprintf(err, errlen, "out of memory");
fail:
	if (ctl) {
		sd->ctl = ctl;
		swapd_ctl_stop(sd);
	}
	return -1;
}

void swapd_ctl_stop(struct swapd *sd)
{
	struct swapd_ctl *ctl = sd->ctl;

	if (!ctl)
		return;
	if (ctl->have_ctl) {
		if (write(ctl->wake[1], "x", 1) < 0)
			pthread_cancel(ctl->ctl_thread);
		pthread_join(ctl->ctl_thread, NULL);
	}
	if (ctl->nfetch) {
		pthread_mutex_lock(&ctl->qlock);
		ctl->stop = true;
		pthread_cond_broadcast(&ctl->qcond);
		pthread_mutex_unlock(&ctl->qlock);
		for (unsigned i = 0; i < ctl->nfetch; i++)
			pthread_join(ctl->fetch_thread[i], NULL);
	}
	for (int i = 0; i < CTL_CLIENTS; i++) {
		if (ctl->cl[i].fd >= 0)
			close(ctl->cl[i].fd);
		free(ctl->cl[i].buf);
	}
	if (ctl->lfd >= 0) {
		close(ctl->lfd);
		unlink(ctl->path);
	}
	if (ctl->wake[0] >= 0) {
		close(ctl->wake[0]);
		close(ctl->wake[1]);
	}
	free(ctl->batch);
	free(ctl);
	sd->ctl = NULL;
}
