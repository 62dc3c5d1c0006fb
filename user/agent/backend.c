// SPDX-License-Identifier: MIT
/*
 * leap-agent's link to leap-swapd's control socket (see backend.h).  One
 * blocking request/reply per engine window: leap-swapd only queues the
 * slots before it answers (its fetch thread does the network I/O), so a
 * command costs a round trip over a Unix socket, not a remote read.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include "backend.h"

#define BACKEND_LINE_MAX 4096 /* replies are one short line */

/* Room for "PREFETCH" and LEAP_PW_LIMIT-sized windows of 20-digit slots. */
#define BACKEND_CMD_MAX (16 + 1024 * 21)

size_t backend_format_prefetch(char *buf, size_t len, const uint64_t *slots, uint32_t n)
{
	size_t off;
	int w;

	w = snprintf(buf, len, "PREFETCH");
	if (w < 0 || (size_t)w >= len)
		return 0;
	off = (size_t)w;
	for (uint32_t i = 0; i < n; i++) {
		w = snprintf(buf + off, len - off, " %" PRIu64, slots[i]);
		if (w < 0 || (size_t)w >= len - off)
			return 0;
		off += (size_t)w;
	}
	if (off + 1 >= len)
		return 0;
	buf[off++] = '\n';
	buf[off] = '\0';
	return off;
}

int backend_parse_stat(const char *line, const char *key, uint64_t *v)
{
	size_t klen = strlen(key);
	const char *p;

	if (strncmp(line, "OK", 2) ||
	    (line[2] != ' ' && line[2] != '\0' && line[2] != '\n'))
		return -EPROTO;
	for (p = line + 2; (p = strstr(p, key)); p += klen) {
		char *end;
		unsigned long long x;

		/* whole key: preceded by a space, followed by '=' */
		if (p[-1] != ' ' || p[klen] != '=')
			continue;
		errno = 0;
		x = strtoull(p + klen + 1, &end, 10);
		if (errno || end == p + klen + 1 ||
		    (*end != ' ' && *end != '\n' && *end != '\0'))
			return -EPROTO;
		*v = x;
		return 0;
	}
	return -ENOENT;
}

int backend_parse_reply(const char *line, uint64_t *queued, uint64_t *dropped)
{
	if (backend_parse_stat(line, "queued", queued) ||
	    backend_parse_stat(line, "dropped", dropped))
		return -EPROTO;
	return 0;
}

static void backend_break(struct backend *b)
{
	if (b->fd >= 0)
		close(b->fd);
	b->fd = -1;
	b->st.errors++;
	b->async_n = 0; /* owed replies die with the link */
	b->rlen = 0;
}

/* Writes a whole command line; -errno (the link closed) on failure. */
static int backend_send(struct backend *b, const char *cmd, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t w = send(b->fd, cmd + off, len - off, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int e = w < 0 ? -errno : -EPIPE;

			backend_break(b);
			return e;
		}
		off += (size_t)w;
	}
	return 0;
}

/* Counts one reply to an asynchronous PREFETCH of m slots. */
static void async_account(struct backend *b, const char *line, uint32_t m)
{
	uint64_t queued = 0, dropped = 0;

	if (backend_parse_reply(line, &queued, &dropped) || queued + dropped != m) {
		b->st.errors++; /* refused whole, or a reply that does not add up */
		return;
	}
	b->st.queued += queued;
	b->st.dropped += dropped;
}

/*
 * The next whole reply line, from the bytes already read or, with wait,
 * read now: 1 with *line NUL-terminated in b->rbuf and *used its length
 * with the newline (line_done() drops it), 0 when none is here yet
 * (without wait), or -errno when the link broke (then closed).
 */
static int next_line(struct backend *b, bool wait, char **line, size_t *used)
{
	for (;;) {
		char *nl = memchr(b->rbuf, '\n', b->rlen);
		ssize_t r;

		if (nl) {
			*nl = '\0';
			*line = b->rbuf;
			*used = (size_t)(nl - b->rbuf) + 1;
			return 1;
		}
		if (b->rlen == sizeof(b->rbuf) - 1) {
			backend_break(b); /* no reply is this long */
			return -EPROTO;
		}
		if (wait) {
			struct pollfd pfd = {.fd = b->fd, .events = POLLIN};
			int pr = poll(&pfd, 1, BACKEND_TIMEOUT_MS);

			if (pr < 0 && errno == EINTR)
				continue;
			if (pr <= 0) {
				int e = pr == 0 ? -ETIMEDOUT : -errno;

				backend_break(b);
				return e;
			}
		}
		r = recv(b->fd, b->rbuf + b->rlen, sizeof(b->rbuf) - 1 - b->rlen,
			 wait ? 0 : MSG_DONTWAIT);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && !wait && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (r <= 0) {
			int e = r < 0 ? -errno : -ECONNRESET;

			backend_break(b);
			return e;
		}
		b->rlen += (size_t)r;
	}
}

static void line_done(struct backend *b, size_t used)
{
	memmove(b->rbuf, b->rbuf + used, b->rlen - used);
	b->rlen -= used;
}

/*
 * Reads the replies owed for asynchronous commands: those already here
 * (wait false), or all of them (wait true, before a command that waits for
 * its own reply).  0, or -errno when the link broke (then closed).
 */
static int async_drain(struct backend *b, bool wait)
{
	while (b->async_n) {
		char *line;
		size_t used;
		int rc = next_line(b, wait, &line, &used);

		if (rc <= 0)
			return rc;
		async_account(b, line, b->async_m[b->async_head]);
		b->async_head = (b->async_head + 1) % BACKEND_ASYNC_MAX;
		b->async_n--;
		line_done(b, used);
	}
	return 0;
}

/* Sends one command line and reads the one reply line into reply. */
static int backend_call(struct backend *b, const char *cmd, size_t len, char *reply,
			size_t rlen)
{
	char *line;
	size_t used;
	int rc;

	if (b->fd < 0)
		return -ENOTCONN;
	/* Replies owed to asynchronous commands come first. */
	rc = async_drain(b, true);
	if (!rc)
		rc = backend_send(b, cmd, len);
	if (!rc)
		rc = next_line(b, true, &line, &used);
	if (rc < 0)
		return rc;
	/* One command in flight: nothing may follow the reply. */
	if (used != b->rlen || used > rlen) {
		backend_break(b);
		return -EPROTO;
	}
	memcpy(reply, line, used); /* with its NUL where the newline was */
	line_done(b, used);
	return 0;
}

/*
 * dev's swap type from /proc/swaps (swapslot_type_from_swaps), -1 if it is
 * not a swap area in use.  /proc/swaps names it by its real path.
 */
static int swap_type_of(const char *dev)
{
	static char text[65536];
	char want[PATH_MAX];
	FILE *f = fopen("/proc/swaps", "re");
	size_t n;

	if (!f)
		return -1;
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	if (!realpath(dev, want))
		snprintf(want, sizeof(want), "%s", dev);
	return swapslot_type_from_swaps(text, want);
}

int backend_open(struct backend *b, const char *sock_path, const char *dev, char *err,
		 size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct stat st;
	uint64_t bytes = 0, v;
	char reply[BACKEND_LINE_MAX];
	int fd, rc;

	memset(b, 0, sizeof(*b));
	b->fd = -1;
	snprintf(b->dev, sizeof(b->dev), "%s", dev);
	if (strlen(sock_path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "backend socket path too long: %s", sock_path);
		return -ENAMETOOLONG;
	}
	snprintf(b->path, sizeof(b->path), "%s", sock_path);
	if (stat(dev, &st)) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", dev, strerror(errno));
		return rc;
	}
	if (!S_ISBLK(st.st_mode)) {
		snprintf(err, errlen, "%s: not a block device", dev);
		return -ENOTBLK;
	}
	fd = open(dev, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, BLKGETSIZE64, &bytes)) {
		rc = -errno;
		snprintf(err, errlen, "%s: size: %s", dev, strerror(errno));
		if (fd >= 0)
			close(fd);
		return rc;
	}
	close(fd);
	b->swap_type = swap_type_of(dev);
	if (b->swap_type < 0) {
		snprintf(err, errlen, "%s is not in use as swap (see /proc/swaps)", dev);
		return -EINVAL;
	}
	b->dev_pages = bytes / 4096;
	/* kernel dev_t: include/linux/kdev_t.h, 12-bit major, 20-bit minor */
	b->kdev = major(st.st_rdev) << 20 | minor(st.st_rdev);
	b->notes = calloc(BACKEND_NOTES, sizeof(*b->notes));
	if (!b->notes) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "socket: %s", strerror(errno));
		goto fail;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		rc = -errno;
		snprintf(err, errlen, "leap-swapd control socket %s: %s", sock_path,
			 strerror(errno));
		close(fd);
		goto fail;
	}
	b->fd = fd;
	/* A STATS round trip proves it is leap-swapd's control socket. */
	rc = backend_call(b, "STATS\n", 6, reply, sizeof(reply));
	if (rc == 0 && backend_parse_stat(reply, "cache_pages", &v))
		rc = -EPROTO;
	if (rc) {
		snprintf(err, errlen,
			 "%s does not answer as a leap-swapd control socket (%s)",
			 sock_path, rc == -EPROTO ? "unexpected reply" : strerror(-rc));
		goto fail;
	}
	b->st.errors = 0;
	return 0;
fail:
	backend_close(b);
	return rc;
}

void backend_close(struct backend *b)
{
	if (b->fd >= 0)
		close(b->fd);
	b->fd = -1;
	free(b->notes);
	b->notes = NULL;
}

static struct backend_note *note_of(struct backend *b, uint64_t page)
{
	return &b->notes[(page * 0x9E3779B97F4A7C15ULL) >> 52 & (BACKEND_NOTES - 1)];
}

void backend_note(struct backend *b, uint32_t tgid, uint64_t page, uint32_t type,
		  uint64_t offset)
{
	if (b->notes)
		*note_of(b, page) = (struct backend_note){
			.page = page, .offset = offset, .tgid = tgid, .type = type};
}

bool backend_confirm(struct backend *b, uint32_t tgid, uint64_t page, uint64_t dev_off)
{
	struct backend_note *e;
	int t;

	if (!b->notes)
		return false;
	e = note_of(b, page);
	if (e->tgid != tgid || e->page != page || e->offset != dev_off)
		return false;
	b->st.type_votes++;
	t = swapslot_vote(&b->votes, b->swap_type, e->type, e->offset, dev_off);
	e->tgid = 0;
	if (t == b->swap_type)
		return false;
	b->swap_type = t;
	b->st.type_switches++;
	return true;
}

/*
 * The PREFETCH line for the slots in range (slot 0 is the swap header; the
 * control protocol refuses a whole batch for one bad slot), in a buffer of
 * its own: *line, and its length; 0 when no slot is left, -E2BIG, or
 * -ENOTCONN once the link broke.  *m: the slots in it.
 */
static long prefetch_line(struct backend *b, const uint64_t *slots, uint32_t n,
			  const char **line, uint32_t *m)
{
	static char cmd[BACKEND_CMD_MAX];
	uint64_t valid[1024];
	size_t len;

	*m = 0;
	if (b->fd < 0)
		return -ENOTCONN;
	for (uint32_t i = 0; i < n && *m < 1024; i++) {
		if (slots[i] == 0 || slots[i] >= b->dev_pages) {
			b->st.out_of_range++;
			continue;
		}
		valid[(*m)++] = slots[i];
	}
	if (*m == 0)
		return 0;
	len = backend_format_prefetch(cmd, sizeof(cmd), valid, *m);
	*line = cmd;
	return len ? (long)len : -E2BIG;
}

int backend_prefetch_async(struct backend *b, const uint64_t *slots, uint32_t n)
{
	const char *cmd = NULL;
	uint32_t m;
	long len = prefetch_line(b, slots, n, &cmd, &m);
	int rc;

	if (len <= 0)
		return (int)len;
	/* Replies already here; all of them if the ring of owed ones is full. */
	rc = async_drain(b, b->async_n == BACKEND_ASYNC_MAX);
	if (rc)
		return rc;
	b->st.commands++;
	rc = backend_send(b, cmd, (size_t)len);
	if (rc)
		return rc;
	b->async_m[(b->async_head + b->async_n) % BACKEND_ASYNC_MAX] = m;
	b->async_n++;
	return (int)m;
}

int backend_prefetch(struct backend *b, const uint64_t *slots, uint32_t n)
{
	uint64_t queued, errors;
	int rc;

	/* Owed replies first, so that the counts below are this batch's. */
	if (b->fd >= 0 && (rc = async_drain(b, true)))
		return rc;
	queued = b->st.queued;
	errors = b->st.errors;
	rc = backend_prefetch_async(b, slots, n);
	if (rc <= 0)
		return rc;
	rc = async_drain(b, true);
	if (rc)
		return rc;
	/* An ERR line: our batch was refused whole (the device shrank?). */
	if (b->st.errors != errors)
		return -EPROTO;
	return (int)(b->st.queued - queued);
}

int backend_stat(struct backend *b, const char *key, uint64_t *v)
{
	char reply[BACKEND_LINE_MAX];
	int rc = backend_call(b, "STATS\n", 6, reply, sizeof(reply));

	return rc ? rc : backend_parse_stat(reply, key, v);
}
