// SPDX-License-Identifier: MIT
/*
 * The kernel NBD driver's generic netlink interface (linux/nbd-netlink.h),
 * spoken directly over an AF_NETLINK socket: two commands with a handful
 * of attributes do not earn libnl.  Attribute types follow the kernel's
 * nbd_attr_policy (drivers/block/nbd.c): INDEX u32, SIZE_BYTES /
 * BLOCK_SIZE_BYTES / SERVER_FLAGS u64, SOCKETS nested SOCK_ITEMs each
 * holding a SOCK_FD u32.  CONNECT without an INDEX takes the first device
 * with no configuration (or adds one) under the driver's own lock, so two
 * daemons never race for a device; the reply carries the index.
 */
#include <errno.h>
#include <linux/genetlink.h>
#include <linux/nbd-netlink.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "nbd_nl.h"

#define NL_BUF 4096

struct nlreq {
	uint8_t buf[NL_BUF];
	size_t len;
	size_t nest[4];
	int depth;
};

static void put_attr(struct nlreq *q, uint16_t type, const void *data, size_t len)
{
	struct nlattr *a = (struct nlattr *)(q->buf + q->len);

	a->nla_type = type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + len);
	memcpy(q->buf + q->len + NLA_HDRLEN, data, len);
	q->len += NLA_ALIGN(NLA_HDRLEN + len);
}

static void put_u32(struct nlreq *q, uint16_t type, uint32_t v)
{
	put_attr(q, type, &v, sizeof(v));
}

static void put_u64(struct nlreq *q, uint16_t type, uint64_t v)
{
	put_attr(q, type, &v, sizeof(v));
}

static void nest_begin(struct nlreq *q, uint16_t type)
{
	q->nest[q->depth++] = q->len;
	put_attr(q, type, NULL, 0);
}

static void nest_end(struct nlreq *q)
{
	size_t at = q->nest[--q->depth];

	((struct nlattr *)(q->buf + at))->nla_len = (uint16_t)(q->len - at);
}

static void begin(struct nlreq *q, uint16_t family, uint8_t cmd, uint8_t version)
{
	struct nlmsghdr *h = (struct nlmsghdr *)q->buf;
	struct genlmsghdr *g = (struct genlmsghdr *)(q->buf + NLMSG_HDRLEN);

	memset(q, 0, sizeof(*q));
	h->nlmsg_type = family;
	h->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	h->nlmsg_seq = 1;
	g->cmd = cmd;
	g->version = version;
	q->len = NLMSG_HDRLEN + GENL_HDRLEN;
}

/*
 * Sends q and reads replies until the ACK (or error).  For the first
 * attribute of type want_attr in a reply's genl payload, copies up to
 * out_len bytes of it to out.  Returns 0, or -errno (the kernel's).
 */
static int transact(int fd, struct nlreq *q, uint16_t want_attr, void *out,
		    size_t out_len)
{
	static uint8_t rx[16384];
	struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};

	((struct nlmsghdr *)q->buf)->nlmsg_len = (uint32_t)q->len;
	if (sendto(fd, q->buf, q->len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		return -errno;
	for (;;) {
		ssize_t n = recv(fd, rx, sizeof(rx), 0);
		int left;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		left = (int)n;
		for (struct nlmsghdr *h = (struct nlmsghdr *)rx; NLMSG_OK(h, left);
		     h = NLMSG_NEXT(h, left)) {
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);

				if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
					return -EPROTO;
				return e->error; /* 0: the ACK */
			}
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_len < NLMSG_LENGTH(GENL_HDRLEN))
				continue;
			int alen = (int)h->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
			struct nlattr *a =
				(struct nlattr *)((uint8_t *)NLMSG_DATA(h) + GENL_HDRLEN);

			for (; alen >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&
			       a->nla_len <= alen;
			     alen -= NLA_ALIGN(a->nla_len),
			     a = (struct nlattr *)((uint8_t *)a +
						   NLA_ALIGN(a->nla_len))) {
				size_t plen = a->nla_len - NLA_HDRLEN;

				if ((a->nla_type & NLA_TYPE_MASK) != want_attr || !out)
					continue;
				memcpy(out, (uint8_t *)a + NLA_HDRLEN,
				       plen < out_len ? plen : out_len);
				out = NULL; /* the first one only */
			}
		}
	}
}

static int open_genl(void)
{
	struct sockaddr_nl me = {.nl_family = AF_NETLINK};
	struct timeval tv = {.tv_sec = 10};
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);

	if (fd < 0)
		return -1;
	/* A netlink call never blocks for long; if it did, fail, not hang. */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (bind(fd, (struct sockaddr *)&me, sizeof(me))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The generic netlink family id of "nbd"; -ENOENT when the driver is not loaded. */
static int family_id(int fd)
{
	struct nlreq q;
	uint16_t id = 0;
	int rc;

	begin(&q, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1);
	put_attr(&q, CTRL_ATTR_FAMILY_NAME, NBD_GENL_FAMILY_NAME,
		 sizeof(NBD_GENL_FAMILY_NAME));
	rc = transact(fd, &q, CTRL_ATTR_FAMILY_ID, &id, sizeof(id));
	if (rc)
		return rc;
	return id ? id : -ENOENT;
}

static int nbd_open_family(char *err, size_t errlen, int *fam)
{
	int fd = open_genl();

	if (fd < 0) {
		snprintf(err, errlen, "generic netlink socket: %s", strerror(errno));
		return -1;
	}
	*fam = family_id(fd);
	if (*fam == -ENOENT) {
		snprintf(err, errlen,
			 "the kernel's NBD driver is not loaded (no generic netlink "
			 "family \"nbd\"): modprobe nbd, if this kernel has it");
		close(fd);
		return -1;
	}
	if (*fam < 0) {
		snprintf(err, errlen, "resolving the nbd netlink family: %s",
			 strerror(-*fam));
		close(fd);
		return -1;
	}
	return fd;
}

/* NBD_ATTR_SOCKETS: one NBD_SOCK_ITEM nest per socket (nbd_genl_connect
 * and nbd_genl_reconfigure walk them with nla_for_each_nested). */
static void put_sockets(struct nlreq *q, const int *fds, int nfds)
{
	nest_begin(q, NBD_ATTR_SOCKETS);
	for (int i = 0; i < nfds; i++) {
		nest_begin(q, NBD_SOCK_ITEM);
		put_u32(q, NBD_SOCK_FD, (uint32_t)fds[i]);
		nest_end(q);
	}
	nest_end(q);
}

int nbd_nl_connect(const int *fds, int nfds, uint64_t size, uint64_t block,
		   uint64_t server_flags, unsigned dead_timeout_s, int *index, char *err,
		   size_t errlen)
{
	struct nlreq q;
	uint32_t idx = UINT32_MAX;
	int fam, rc, fd = nbd_open_family(err, errlen, &fam);

	if (fd < 0)
		return -1;
	begin(&q, (uint16_t)fam, NBD_CMD_CONNECT, NBD_GENL_VERSION);
	if (*index >= 0)
		put_u32(&q, NBD_ATTR_INDEX, (uint32_t)*index);
	put_u64(&q, NBD_ATTR_SIZE_BYTES, size);
	put_u64(&q, NBD_ATTR_BLOCK_SIZE_BYTES, block);
	put_u64(&q, NBD_ATTR_SERVER_FLAGS, server_flags);
	/* Seconds (nbd_genl_connect multiplies by HZ): while no connection is
	 * alive, requests wait this long for a reconnect (wait_for_reconnect
	 * in nbd_handle_cmd) instead of failing at once. */
	if (dead_timeout_s)
		put_u64(&q, NBD_ATTR_DEAD_CONN_TIMEOUT, dead_timeout_s);
	put_sockets(&q, fds, nfds);
	rc = transact(fd, &q, NBD_ATTR_INDEX, &idx, sizeof(idx));
	close(fd);
	if (rc || idx == UINT32_MAX) {
		snprintf(err, errlen, "NBD_CMD_CONNECT: %s%s",
			 rc ? strerror(-rc) : "no device index in the reply",
			 rc == -EINVAL && nfds > 1
				 ? " (does this kernel take several connections?)"
				 : "");
		return -1;
	}
	*index = (int)idx;
	return 0;
}

int nbd_nl_reconfigure(int index, const int *fds, int nfds, unsigned dead_timeout_s,
		       char *err, size_t errlen)
{
	struct nlreq q;
	int fam, rc, fd = nbd_open_family(err, errlen, &fam);

	if (fd < 0)
		return -1;
	begin(&q, (uint16_t)fam, NBD_CMD_RECONFIGURE, NBD_GENL_VERSION);
	put_u32(&q, NBD_ATTR_INDEX, (uint32_t)index);
	if (dead_timeout_s)
		put_u64(&q, NBD_ATTR_DEAD_CONN_TIMEOUT, dead_timeout_s);
	put_sockets(&q, fds, nfds);
	rc = transact(fd, &q, 0, NULL, 0);
	close(fd);
	if (rc) {
		snprintf(err, errlen, "NBD_CMD_RECONFIGURE nbd%d: %s%s", index,
			 strerror(-rc),
			 rc == -EINVAL ? " (not configured: nothing to reconnect to)"
				       : "");
		return -1;
	}
	return 0;
}

int nbd_nl_disconnect(int index, char *err, size_t errlen)
{
	struct nlreq q;
	int fam, rc, fd = nbd_open_family(err, errlen, &fam);

	if (fd < 0)
		return -1;
	begin(&q, (uint16_t)fam, NBD_CMD_DISCONNECT, NBD_GENL_VERSION);
	put_u32(&q, NBD_ATTR_INDEX, (uint32_t)index);
	rc = transact(fd, &q, 0, NULL, 0);
	close(fd);
	if (rc) {
		snprintf(err, errlen, "NBD_CMD_DISCONNECT nbd%d: %s", index,
			 strerror(-rc));
		return -1;
	}
	return 0;
}

int nbd_nl_probe(char *err, size_t errlen)
{
	int fam, fd = nbd_open_family(err, errlen, &fam);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}
