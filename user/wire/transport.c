// SPDX-License-Identifier: MIT
/*
 * TCP transport (transport.h) and the blocking helpers clients use.  All
 * sockets are non-blocking: leap-memd multiplexes them with epoll, and a
 * client bounds every wait by a deadline so a stalled server becomes a
 * timeout and a reconnect, never a hang of the swap path.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "transport.h"

int64_t leap_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int leap_addr_split(const char *addr, char *host, size_t hostlen, char *port,
		    size_t portlen)
{
	const char *colon, *h = addr;
	size_t hl;

	if (!addr || !*addr)
		return -1;
	colon = strrchr(addr, ':');
	if (!colon || !colon[1] || strlen(colon + 1) >= portlen)
		return -1;
	hl = (size_t)(colon - addr);
	if (hl >= 2 && addr[0] == '[' && addr[hl - 1] == ']') {
		h = addr + 1;
		hl -= 2;
	} else if (memchr(addr, ':', hl)) {
		return -1; /* a bare IPv6 address needs brackets */
	}
	if (hl == 0 || hl >= hostlen)
		return -1;
	memcpy(host, h, hl);
	host[hl] = '\0';
	strcpy(port, colon + 1);
	for (const char *p = port; *p; p++)
		if (*p < '0' || *p > '9')
			return -1;
	return 0;
}

void leap_addr_format(const struct sockaddr *sa, socklen_t len, char *buf, size_t n)
{
	char host[NI_MAXHOST], serv[NI_MAXSERV];

	if (getnameinfo(sa, len, host, sizeof(host), serv, sizeof(serv),
			NI_NUMERICHOST | NI_NUMERICSERV)) {
		snprintf(buf, n, "?");
		return;
	}
	if (sa->sa_family == AF_INET6)
		snprintf(buf, n, "[%s]:%s", host, serv);
	else
		snprintf(buf, n, "%s:%s", host, serv);
}

int leap_addr_resolve(const char *addr, int passive, struct addrinfo **res, char *err,
		      size_t errlen)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0)};
	char host[256], port[16];
	int rc;

	if (leap_addr_split(addr, host, sizeof(host), port, sizeof(port))) {
		snprintf(err, errlen, "bad address '%s' (want ADDR:PORT)", addr);
		return -EINVAL;
	}
	rc = getaddrinfo(host, port, &hints, res);
	if (rc) {
		snprintf(err, errlen, "%s: %s", addr, gai_strerror(rc));
		return -EINVAL;
	}
	return 0;
}

static int tcp_listen(struct leap_conn *l, const char *addr, char *err, size_t errlen)
{
	struct addrinfo *res, *ai;
	int fd = -1, one = 1, rc;

	rc = leap_addr_resolve(addr, 1, &res, err, errlen);
	if (rc)
		return rc;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
			    0);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 128) == 0)
			break;
		rc = -errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		snprintf(err, errlen, "listen %s: %s", addr,
			 strerror(rc ? -rc : EADDRNOTAVAIL));
		return rc ? rc : -EADDRNOTAVAIL;
	}
	l->t = &leap_tcp_transport;
	l->fd = fd;
	l->priv = NULL;
	snprintf(l->peer, sizeof(l->peer), "%s", addr);
	return 0;
}

static int tcp_accept(struct leap_conn *l, struct leap_conn *c)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int fd, one = 1;

	fd = accept4(l->fd, (struct sockaddr *)&ss, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return -errno;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->t = l->t;
	c->fd = fd;
	c->priv = NULL;
	leap_addr_format((struct sockaddr *)&ss, len, c->peer, sizeof(c->peer));
	return 0;
}

static int connect_one(const struct addrinfo *ai, int timeout_ms)
{
	struct pollfd pfd;
	socklen_t len = sizeof(int);
	int fd, soerr = 0, one = 1, rc;

	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
		return fd;
	if (errno != EINPROGRESS) {
		rc = -errno;
		close(fd);
		return rc;
	}
	pfd = (struct pollfd){.fd = fd, .events = POLLOUT};
	rc = poll(&pfd, 1, timeout_ms);
	if (rc <= 0) {
		close(fd);
		return rc == 0 ? -ETIMEDOUT : -errno;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) < 0 || soerr) {
		close(fd);
		return soerr ? -soerr : -EIO;
	}
	return fd;
}

static int tcp_connect(struct leap_conn *c, const char *addr, int timeout_ms, char *err,
		       size_t errlen)
{
	struct addrinfo *res, *ai;
	int fd = -ECONNREFUSED, rc;

	rc = leap_addr_resolve(addr, 0, &res, err, errlen);
	if (rc)
		return rc;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = connect_one(ai, timeout_ms);
		if (fd >= 0)
			break;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		snprintf(err, errlen, "connect %s: %s", addr, strerror(-fd));
		return fd;
	}
	c->t = &leap_tcp_transport;
	c->fd = fd;
	c->priv = NULL;
	snprintf(c->peer, sizeof(c->peer), "%s", addr);
	return 0;
}

static ssize_t tcp_send(struct leap_conn *c, const struct iovec *iov, int iovcnt)
{
	struct msghdr mh = {.msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)iovcnt};
	ssize_t n;

	do
		n = sendmsg(c->fd, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

static ssize_t tcp_recv(struct leap_conn *c, void *buf, size_t len)
{
	ssize_t n;

	do
		n = recv(c->fd, buf, len, 0);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

static void tcp_close(struct leap_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

static int tcp_local_addr(struct leap_conn *l, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (getsockname(l->fd, (struct sockaddr *)&ss, &sl) < 0)
		return -errno;
	leap_addr_format((struct sockaddr *)&ss, sl, buf, len);
	return 0;
}

const struct leap_transport leap_tcp_transport = {
	.name = "tcp",
	.listen = tcp_listen,
	.accept = tcp_accept,
	.connect = tcp_connect,
	.send = tcp_send,
	.recv = tcp_recv,
	.close = tcp_close,
	.local_addr = tcp_local_addr,
};

const struct leap_transport *leap_transport_find(const char *name)
{
	if (strcmp(name, "tcp") == 0)
		return &leap_tcp_transport;
	if (strcmp(name, "rdma") == 0)
		return &leap_rdma_transport;
	return NULL;
}

static int wait_fd(int fd, short events, int64_t deadline_ms)
{
	struct pollfd pfd = {.fd = fd, .events = events};
	int64_t left = deadline_ms - leap_now_ms();
	int rc;

	if (left <= 0)
		return -ETIMEDOUT;
	rc = poll(&pfd, 1, left > 60000 ? 60000 : (int)left);
	if (rc < 0)
		return errno == EINTR ? 0 : -errno;
	if (rc == 0)
		return leap_now_ms() >= deadline_ms ? -ETIMEDOUT : 0;
	return 0;
}

int leap_conn_send_all(struct leap_conn *c, struct iovec *iov, int iovcnt,
		       int64_t deadline_ms)
{
	while (iovcnt > 0) {
		ssize_t n = c->t->send(c, iov, iovcnt);
		int rc;

		if (n == -EAGAIN) {
			rc = wait_fd(c->fd, POLLOUT, deadline_ms);
			if (rc)
				return rc;
			continue;
		}
		if (n < 0)
			return (int)n;
		/* Advance past what was sent. */
		while (iovcnt > 0 && (size_t)n >= iov->iov_len) {
			n -= (ssize_t)iov->iov_len;
			iov++;
			iovcnt--;
		}
		if (iovcnt > 0) {
			iov->iov_base = (char *)iov->iov_base + n;
			iov->iov_len -= (size_t)n;
		}
	}
	return 0;
}

int leap_conn_recv_all(struct leap_conn *c, void *buf, size_t len, int64_t deadline_ms)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = c->t->recv(c, (char *)buf + got, len - got);
		int rc;

		if (n == -EAGAIN) {
			rc = wait_fd(c->fd, POLLIN, deadline_ms);
			if (rc)
				return rc;
			continue;
		}
		if (n == 0)
			return -ECONNRESET;
		if (n < 0)
			return (int)n;
		got += (size_t)n;
	}
	return 0;
}
