// SPDX-License-Identifier: MIT
/*
 * leap-swapd's NBD frontend: /dev/nbdN served over a socketpair.  One end
 * goes to the kernel's NBD driver through its netlink interface
 * (nbd_nl.c); workers serve the driver's requests (nbd_proto.h) on the
 * other through the request layer the FUSE frontend uses too (io.c).
 *
 * Why netlink rather than the ioctls (NBD_SET_SOCK ... NBD_DO_IT): the
 * ioctl interface parks a thread in NBD_DO_IT, an interruptible wait that
 * tears the device down when a signal interrupts it, and SIGSTOP (a shell's
 * ^Z, a debugger attaching) cannot be blocked; under live swap that turns
 * every swap-in into an I/O error.  It also leaves picking a free device
 * to a racy scan of /sys.  NBD_CMD_CONNECT returns once the device is up,
 * picks a free device under the driver's lock, and nothing waits in the
 * kernel on our behalf.  Two commands need no libnl (nbd_nl.c).
 *
 * Several connections (--nbd-connections, NBD_FLAG_CAN_MULTI_CONN): the
 * driver gives its blk-mq device one hardware queue per socket
 * (nbd_start_device: blk_mq_update_nr_hw_queues(num_connections)) and
 * sends each request on its queue's socket (nbd_queue_rq ->
 * nbd_handle_cmd(cmd, hctx->queue_num)), so CPUs submitting at once do not
 * share one socket's tx_lock in the kernel, nor one rx_lock here.  Each
 * connection has its own workers: they take turns reading a request
 * (header, then a WRITE's data) under that connection's rx_lock, serve it
 * without locks, and send the reply (a READ's data with it) under its
 * tx_lock, so requests are served in parallel as the driver allows (up to
 * 128 in flight per queue) and replies never interleave.  What workers of
 * different connections share is the request layer (io.c: its counters
 * under stat_lock, the bounce buffer under bounce_lock, the prefetch cache
 * under its own lock) and memclient, which is thread-safe.
 *
 * Surviving a SIGKILL (--nbd-dead-timeout, --reconnect; read from
 * drivers/block/nbd.c of Linux 6.1, the guest's kernel):
 *  - Our death closes our socket ends; each connection's recv_work fails
 *    and nbd_mark_nsock_dead() marks it dead.  The device stays
 *    configured: nbd_genl_connect() keeps a config reference
 *    (NBD_RT_HAS_CONFIG_REF) that only a disconnect drops.
 *  - New requests find every socket dead (nbd_handle_cmd ->
 *    find_fallback fails) and wait_for_reconnect() holds them up to
 *    dead_conn_timeout (NBD_ATTR_DEAD_CONN_TIMEOUT) for live_connections
 *    to rise; without one they fail with EIO at once (the old behaviour,
 *    --nbd-dead-timeout 0).
 *  - Requests already sent on a dead socket are not failed: their block
 *    layer timer (30 s when NBD_ATTR_TIMEOUT is 0, nbd_set_cmd_timeout)
 *    fires and nbd_xmit_timeout() requeues them, with one connection once
 *    the socket was replaced (cmd->cookie != nsock->cookie: commit "nbd:
 *    requeue command if the soket is changed"), with several at once
 *    (they go to a live socket or wait as above).  So a request in flight
 *    at the kill is sent again to the new leap-swapd, up to 30 s later:
 *    never lost, never completed with an error.  We leave NBD_ATTR_TIMEOUT
 *    at 0: with one connection a timeout would make the driver shut down a
 *    live socket whose request is merely slow.
 *  - NBD_CMD_RECONFIGURE (nbd_genl_reconfigure) needs the device bound and
 *    configured, else EINVAL; each NBD_SOCK_ITEM goes to
 *    nbd_reconnect_socket(), which puts it in the first dead slot, bumps
 *    that slot's cookie, starts its recv_work and wakes the waiters; a
 *    socket with no dead slot left is dropped (-ENOSPC, ignored).
 * What the replayed requests find on the servers is memclient's business
 * (the --state file, user/memclient/pstate.h): a write in flight at the
 * kill is written again; a read gets the latest acknowledged version.
 *
 * Every request is validated before anything is touched (nbdp_check): a
 * bad one gets an error reply and a log line; a request whose header is
 * not one (bad magic) means the stream is lost, and the connection is
 * closed, which fails outstanding I/O with EIO rather than guess.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/nbd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "nbd_nl.h"
#include "nbd_proto.h"
#include "swapd.h"

#define PAGE LEAP_WIRE_PAGE_SIZE
#define NBD_MAX_IO                                                                       \
	(1U << 20) /* per worker buffer; the queue's max_sectors_kb is capped to it */
#define WORKER_STACK (256 << 10) /* mlockall locks whole stacks: not glibc's 8 MiB */

struct nbd_srv;

/* One socket the driver sends requests on. */
struct nbd_conn {
	struct nbd_srv *s;
	int idx;
	int sock; /* our end of its socketpair */
	pthread_mutex_t rx_lock, tx_lock;
	bool rx_done;  /* under rx_lock: no more requests will be read */
	bool lost;     /* the stream broke (bad magic, short read, send failure) */
	bool got_disc; /* under rx_lock: NBD_CMD_DISC read */
	int live;      /* its workers running (atomic) */
};

struct nbd_worker {
	struct nbd_conn *c;
	pthread_t t;
	uint8_t *buf; /* NBD_MAX_IO */
	bool started;
};

struct nbd_srv {
	struct swapd *sd;
	int index;
	bool stopping;	   /* atomic: we asked the driver to disconnect */
	char name[32];	   /* "nbdN", or "fd N" when serving an inherited socket */
	int live;	   /* workers running, all connections (atomic) */
	uint64_t rejected; /* atomic */
	struct nbd_conn *conn;
	int nconn;
	struct nbd_worker *w;
	int nw;
};

static int recv_all(int fd, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = recv(fd, p, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Consumes len bytes of a refused WRITE's data so the stream stays in step. */
static int drain(int fd, uint8_t *buf, uint32_t len)
{
	while (len) {
		uint32_t n = len < NBD_MAX_IO ? len : NBD_MAX_IO;

		if (recv_all(fd, buf, n))
			return -1;
		len -= n;
	}
	return 0;
}

static int send_reply(struct nbd_conn *s, const uint8_t *rep, const uint8_t *data,
		      size_t len)
{
	struct iovec iov[2] = {{(void *)rep, NBDP_REP_SIZE},
			       {(void *)data, data ? len : 0}};
	struct msghdr m = {.msg_iov = iov, .msg_iovlen = data ? 2 : 1};
	int rc = 0;

	pthread_mutex_lock(&s->tx_lock);
	while (m.msg_iovlen) {
		ssize_t n = sendmsg(s->sock, &m, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = -1;
			break;
		}
		while (m.msg_iovlen && (size_t)n >= m.msg_iov->iov_len) {
			n -= (ssize_t)m.msg_iov->iov_len;
			m.msg_iov++;
			m.msg_iovlen--;
		}
		if (m.msg_iovlen) {
			m.msg_iov->iov_base = (uint8_t *)m.msg_iov->iov_base + n;
			m.msg_iov->iov_len -= (size_t)n;
		}
	}
	pthread_mutex_unlock(&s->tx_lock);
	return rc;
}

static const char *type_name(uint16_t t)
{
	static const char *const names[] = {"READ", "WRITE", "DISC", "FLUSH", "TRIM"};

	return t < sizeof(names) / sizeof(names[0]) ? names[t] : "unknown";
}

static void log_reject(struct nbd_srv *s, const struct nbdp_req *r, uint32_t err)
{
	uint64_t n = __atomic_add_fetch(&s->rejected, 1, __ATOMIC_RELAXED);

	/* The first few, then powers of two: a flood stays readable. */
	if (n <= 8 || !(n & (n - 1)))
		fprintf(stderr,
			"leap-swapd: %s: refused request #%llu: type %u (%s) flags "
			"0x%x offset %llu length %u: %s\n",
			s->name, (unsigned long long)n, r->type, type_name(r->type),
			r->flags, (unsigned long long)r->offset, r->length,
			strerror((int)err));
}

/* Reads one request under rx_lock; the action, or -1 when reading stops. */
static int next_request(struct nbd_worker *w, struct nbdp_req *r, uint32_t *err)
{
	struct nbd_conn *s = w->c;
	uint8_t hdr[NBDP_REQ_SIZE];
	int act = -1;

	pthread_mutex_lock(&s->rx_lock);
	if (s->rx_done)
		goto out;
	if (recv_all(s->sock, hdr, sizeof(hdr)))
		goto stop; /* the kernel closed its end (after a disconnect) */
	if (nbdp_decode(hdr, r)) {
		fprintf(stderr,
			"leap-swapd: %s: connection %d: request with bad magic "
			"0x%08x: stream lost, closing the connection\n",
			s->s->name, s->idx, r->magic);
		s->lost = true;
		goto stop;
	}
	act = (int)nbdp_check(r, s->s->sd->size, PAGE, NBD_MAX_IO, err);
	if (act == NBDP_DO_WRITE ? recv_all(s->sock, w->buf, r->length)
				 : drain(s->sock, w->buf, nbdp_payload(r))) {
		/* Cut off inside a request: lost, unless we are disconnecting. */
		s->lost = !__atomic_load_n(&s->s->stopping, __ATOMIC_SEQ_CST);
		act = -1;
		goto stop;
	}
	if (act == NBDP_DO_DISCONNECT) {
		/* No reply; requests already read still get theirs. */
		s->got_disc = true;
		shutdown(s->sock, SHUT_RD);
		act = -1;
		goto stop;
	}
	goto out;
stop:
	s->rx_done = true;
	if (s->lost)
		shutdown(s->sock, SHUT_RDWR);
out:
	pthread_mutex_unlock(&s->rx_lock);
	return act;
}

static void *worker_main(void *arg)
{
	struct nbd_worker *w = arg;
	struct nbd_conn *c = w->c;
	struct nbd_srv *s = c->s;
	struct swapd *sd = s->sd;
	uint8_t rep[NBDP_REP_SIZE];
	struct nbdp_req r;
	uint32_t err;
	int act, rc;

	while ((act = next_request(w, &r, &err)) >= 0) {
		rc = 0;
		switch (act) {
		case NBDP_DO_READ:
			rc = swapd_io_read(sd, w->buf, r.length, r.offset);
			break;
		case NBDP_DO_WRITE:
			rc = swapd_io_write(sd, w->buf, r.length, r.offset);
			break;
		case NBDP_DO_TRIM:
			rc = swapd_io_discard(sd, r.offset, r.length);
			break;
		case NBDP_DO_FLUSH:
			break; /* a write is on the servers before its reply */
		default:
			log_reject(s, &r, err);
			break;
		}
		if (act != NBDP_DO_REJECT)
			err = rc ? EIO : 0;
		nbdp_encode_reply(rep, err, r.handle);
		if (send_reply(c, rep, act == NBDP_DO_READ && !err ? w->buf : NULL,
			       r.length)) {
			pthread_mutex_lock(&c->rx_lock);
			c->rx_done = true;
			/* After our disconnect the driver shuts its end: expected. */
			if (!__atomic_load_n(&s->stopping, __ATOMIC_SEQ_CST))
				c->lost = true;
			shutdown(c->sock, SHUT_RDWR);
			pthread_mutex_unlock(&c->rx_lock);
			break;
		}
	}
	/* The last worker of a connection that ended while others serve says
	 * so: the driver requeues what it had sent on it to the others. */
	if (__atomic_sub_fetch(&c->live, 1, __ATOMIC_SEQ_CST) == 0 &&
	    !__atomic_load_n(&s->stopping, __ATOMIC_SEQ_CST) && s->nconn > 1 &&
	    __atomic_load_n(&s->live, __ATOMIC_SEQ_CST) > 1)
		fprintf(stderr,
			"leap-swapd: %s: connection %d %s; the others go on serving\n",
			s->name, c->idx, c->lost ? "lost" : "closed by the driver");
	__atomic_sub_fetch(&s->live, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* Requests larger than a worker's buffer would be refused: cap the queue. */
static void cap_request_size(struct nbd_srv *s)
{
	char path[96], val[32];
	unsigned long cur = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/block/%s/queue/max_sectors_kb", s->name);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%lu", &cur) != 1)
			cur = 0;
		fclose(f);
	}
	if (cur && cur <= NBD_MAX_IO / 1024)
		return;
	snprintf(val, sizeof(val), "%u\n", NBD_MAX_IO / 1024);
	f = fopen(path, "w");
	if (!f || fputs(val, f) < 0 || fclose(f))
		fprintf(stderr,
			"leap-swapd: warning: cannot cap %s to %u: requests above it "
			"will fail with EIO\n",
			path, NBD_MAX_IO / 1024);
}

/*
 * A stop signal: disconnect only if no one holds the device exclusively
 * (swapon does, as does a mounted filesystem).  The exclusive open we make
 * to find out is kept until the end, so nothing can claim the device
 * between the check and the disconnect.
 */
static void try_stop(struct nbd_srv *s, int *excl_fd)
{
	char dev[48], err[256];

	if (s->stopping)
		return;
	snprintf(dev, sizeof(dev), "/dev/%s", s->name);
	*excl_fd = open(dev, O_RDONLY | O_EXCL | O_CLOEXEC);
	if (*excl_fd < 0) {
		fprintf(stderr,
			"leap-swapd: not stopping: %s is in use (%s; swapon?): "
			"swapoff first\n",
			dev, strerror(errno));
		return;
	}
	__atomic_store_n(&s->stopping, true, __ATOMIC_SEQ_CST);
	if (nbd_nl_disconnect(s->index, err, sizeof(err))) {
		fprintf(stderr, "leap-swapd: %s\n", err);
		__atomic_store_n(&s->stopping, false, __ATOMIC_SEQ_CST);
		close(*excl_fd);
		*excl_fd = -1;
	}
}

int swapd_nbd_probe(char *err, size_t errlen)
{
	return nbd_nl_probe(err, errlen);
}

static int parse_device(const char *device, int *index)
{
	const char *p = device;
	char *end;
	long v;

	*index = -1;
	if (!device)
		return 0;
	if (!strncmp(p, "/dev/", 5))
		p += 5;
	if (!strncmp(p, "nbd", 3))
		p += 3;
	errno = 0;
	v = strtol(p, &end, 10);
	if (errno || end == p || *end || v < 0 || v > 1000000)
		return -1;
	*index = (int)v;
	return 0;
}

/* The device's size in bytes from sysfs, or -1 when it has none (not
 * configured: /sys/block/nbdN/pid exists only while it is). */
static long long configured_size(const char *name)
{
	char path[96];
	unsigned long long sectors = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/block/%s/pid", name);
	if (access(path, F_OK))
		return -1;
	snprintf(path, sizeof(path), "/sys/block/%s/size", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%llu", &sectors) != 1)
		sectors = 0;
	fclose(f);
	return (long long)(sectors * 512);
}

/*
 * The kernel's side: kend[] (one end of each connection's socketpair)
 * handed to the driver by netlink, a new device (NBD_CMD_CONNECT) or, with
 * o->reconnect, the device that lost its leap-swapd (NBD_CMD_RECONFIGURE).
 * 0 or -1.
 */
static int attach_device(struct nbd_srv *s, int *kend, const struct swapd_nbd_opts *o)
{
	char err[512];
	int rc;

	if (o->reconnect) {
		long long have;

		snprintf(s->name, sizeof(s->name), "nbd%d", s->index);
		have = configured_size(s->name);
		if (have < 0) {
			fprintf(stderr,
				"leap-swapd: --reconnect /dev/%s: the device is not "
				"configured (no server ever attached, or it was "
				"disconnected: its dead-connection timeout ran out?); "
				"start without --reconnect\n",
				s->name);
			rc = -1;
		} else if ((unsigned long long)have != s->sd->size) {
			fprintf(stderr,
				"leap-swapd: --reconnect /dev/%s: the device has %lld "
				"bytes, --size says %llu: refusing\n",
				s->name, have, (unsigned long long)s->sd->size);
			rc = -1;
		} else {
			rc = nbd_nl_reconfigure(s->index, kend, s->nconn,
						o->dead_timeout_s, err, sizeof(err));
			if (rc)
				fprintf(stderr, "leap-swapd: %s\n", err);
		}
	} else {
		rc = nbd_nl_connect(kend, s->nconn, s->sd->size, PAGE,
				    NBD_FLAG_HAS_FLAGS | NBD_FLAG_SEND_FLUSH |
					    NBD_FLAG_SEND_TRIM |
					    (s->nconn > 1 ? NBD_FLAG_CAN_MULTI_CONN : 0),
				    o->dead_timeout_s, &s->index, err, sizeof(err));
		if (rc)
			fprintf(stderr, "leap-swapd: %s\n", err);
	}
	/* Either way the driver holds its own references to the sockets now. */
	for (int i = 0; i < s->nconn; i++)
		close(kend[i]);
	if (rc)
		return -1;
	snprintf(s->name, sizeof(s->name), "nbd%d", s->index);
	cap_request_size(s);
	fprintf(stderr,
		"leap-swapd: %s /dev/%s (%llu MiB) over NBD, %d connection%s, %d "
		"workers, dead-connection timeout %u s\n",
		o->reconnect ? "reconnected to" : "serving", s->name,
		(unsigned long long)(s->sd->size >> 20), s->nconn,
		s->nconn > 1 ? "s" : "", s->live, o->dead_timeout_s);
	return 0;
}

int swapd_nbd_run(struct swapd *sd, const struct swapd_nbd_opts *o)
{
	static struct nbd_srv srv;
	struct nbd_srv *s = &srv;
	sigset_t stop_sigs, old_sigs;
	pthread_attr_t attr;
	char err[512];
	int kend[SWAPD_NBD_MAX_CONNS];
	int excl_fd = -1, rc = 1, per, nkend = 0;
	bool lost = false, disc = true;

	memset(s, 0, sizeof(*s));
	s->sd = sd;
	if (parse_device(o->device, &s->index)) {
		fprintf(stderr, "leap-swapd: bad --device '%s' (/dev/nbdN)\n", o->device);
		return 1;
	}
	s->nconn = o->sock_fd >= 0 ? 1 : o->connections;
	if (s->nconn < 1 || s->nconn > SWAPD_NBD_MAX_CONNS || o->nthreads < 1) {
		fprintf(stderr, "leap-swapd: bad NBD connection or thread count\n");
		return 1;
	}
	/* The workers spread over the connections, at least one each. */
	per = (o->nthreads + s->nconn - 1) / s->nconn;
	s->nw = per * s->nconn;
	s->conn = calloc((size_t)s->nconn, sizeof(*s->conn));
	s->w = calloc((size_t)s->nw, sizeof(*s->w));
	if (!s->conn || !s->w)
		goto nomem;
	for (int i = 0; i < s->nconn; i++) {
		s->conn[i] = (struct nbd_conn){.s = s, .idx = i, .sock = -1};
		pthread_mutex_init(&s->conn[i].rx_lock, NULL);
		pthread_mutex_init(&s->conn[i].tx_lock, NULL);
	}
	for (int i = 0; i < s->nw; i++) {
		s->w[i].c = &s->conn[i % s->nconn];
		s->w[i].buf = malloc(NBD_MAX_IO);
		if (!s->w[i].buf)
			goto nomem;
	}
	if (o->sock_fd >= 0) {
		s->conn[0].sock = o->sock_fd;
		snprintf(s->name, sizeof(s->name), "fd %d", o->sock_fd);
	} else {
		for (; nkend < s->nconn; nkend++) {
			int sv[2];

			if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
				fprintf(stderr, "leap-swapd: socketpair: %s\n",
					strerror(errno));
				goto out;
			}
			kend[nkend] = sv[0];
			s->conn[nkend].sock = sv[1];
		}
	}
	/* Stop signals are taken here with sigtimedwait, never by a worker. */
	sigemptyset(&stop_sigs);
	sigaddset(&stop_sigs, SIGTERM);
	sigaddset(&stop_sigs, SIGINT);
	sigaddset(&stop_sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &stop_sigs, &old_sigs);
	signal(SIGPIPE, SIG_IGN);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, WORKER_STACK);
	for (int i = 0; i < s->nw; i++) {
		s->w[i].started =
			!pthread_create(&s->w[i].t, &attr, worker_main, &s->w[i]);
		if (s->w[i].started) {
			__atomic_add_fetch(&s->w[i].c->live, 1, __ATOMIC_SEQ_CST);
			__atomic_add_fetch(&s->live, 1, __ATOMIC_SEQ_CST);
		}
	}
	pthread_attr_destroy(&attr);
	for (int i = 0; i < s->nconn; i++)
		if (!s->conn[i].live) {
			fprintf(stderr, "leap-swapd: cannot start NBD workers\n");
			goto join; /* out: closes the kernel's ends */
		}
	if (o->sock_fd < 0) {
		nkend = 0; /* attach_device closes them */
		if (attach_device(s, kend, o))
			goto join;
	}
	if (o->sock_fd >= 0)
		fprintf(stderr, "leap-swapd: serving NBD on %s (%llu MiB), %d workers\n",
			s->name, (unsigned long long)(sd->size >> 20), s->live);
	while (__atomic_load_n(&s->live, __ATOMIC_SEQ_CST) > 0) {
		struct timespec ts = {0, 200 * 1000000L};

		if (sigtimedwait(&stop_sigs, NULL, &ts) <= 0)
			continue;
		if (o->sock_fd < 0) {
			try_stop(s, &excl_fd);
		} else { /* no device to check: the peer is a test */
			__atomic_store_n(&s->stopping, true, __ATOMIC_SEQ_CST);
			shutdown(s->conn[0].sock, SHUT_RDWR);
		}
	}
	for (int i = 0; i < s->nconn; i++) {
		lost |= s->conn[i].lost;
		disc &= s->conn[i].got_disc;
	}
	if (!lost && (s->stopping || (o->sock_fd >= 0 && disc))) {
		rc = 0;
	} else {
		fprintf(stderr, "leap-swapd: %s: connection%s %s\n", s->name,
			s->nconn > 1 ? "s" : "",
			lost ? "lost (see above)" : "closed by the peer");
		/* Leave no half-configured device behind (only a SIGKILL does:
		 * that one a --reconnect picks up). */
		if (o->sock_fd < 0 && !s->stopping &&
		    nbd_nl_disconnect(s->index, err, sizeof(err)))
			fprintf(stderr, "leap-swapd: %s\n", err);
	}
join:
	for (int i = 0; i < s->nconn; i++)
		if (s->conn[i].sock >= 0)
			shutdown(s->conn[i].sock, SHUT_RDWR);
	for (int i = 0; i < s->nw; i++)
		if (s->w[i].started)
			pthread_join(s->w[i].t, NULL);
	pthread_sigmask(SIG_SETMASK, &old_sigs, NULL);
	goto out;
nomem:
	fprintf(stderr, "leap-swapd: out of memory\n");
out:
	for (int k = 0; k < nkend; k++)
		close(kend[k]);
	if (excl_fd >= 0)
		close(excl_fd);
	for (int i = 0; s->conn && i < s->nconn; i++)
		if (s->conn[i].sock >= 0)
			close(s->conn[i].sock);
	for (int i = 0; s->w && i < s->nw; i++)
		free(s->w[i].buf);
	free(s->w);
	free(s->conn);
	if (!rc)
		fprintf(stderr, "leap-swapd: %s disconnected\n", s->name);
	return rc;
}
