// SPDX-License-Identifier: MIT
/* memclient's per-page state in a file (pstate.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "pstate.h"

#define TMPFS_MAGIC_ 0x01021994 /* linux/magic.h TMPFS_MAGIC */

_Static_assert(sizeof(struct leap_pstate_hdr) <= LEAP_PSTATE_HDR_SIZE,
	       "the header fits its page");

static uint64_t fnv1a(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < len; i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static uint64_t config_sum(const struct leap_pstate_hdr *h)
{
	return fnv1a(h, offsetof(struct leap_pstate_hdr, config_sum));
}

int leap_pstate_hdr_init(struct leap_pstate_hdr *h, const struct leap_pstate_geom *g,
			 char *err, size_t errlen)
{
	memset(h, 0, sizeof(*h));
	if (g->nservers < 1 || g->nservers > LEAP_PSTATE_MAX_SERVERS || g->replicas < 1 ||
	    g->replicas > 2 || !g->dev_pages || !g->stripe_pages) {
		snprintf(err, errlen, "state file: bad device geometry");
		return -EINVAL;
	}
	memcpy(h->magic, LEAP_PSTATE_MAGIC, sizeof(h->magic));
	h->version = LEAP_PSTATE_VERSION;
	h->hdr_size = LEAP_PSTATE_HDR_SIZE;
	h->dev_pages = g->dev_pages;
	h->stripe_pages = g->stripe_pages;
	h->replicas = g->replicas;
	h->nservers = g->nservers;
	h->dev = g->dev;
	for (unsigned i = 0; i < g->nservers; i++) {
		if (strlen(g->servers[i]) >= LEAP_PSTATE_ADDR_LEN) {
			snprintf(err, errlen,
				 "state file: server address '%.40s...' longer than %d",
				 g->servers[i], LEAP_PSTATE_ADDR_LEN - 1);
			return -EINVAL;
		}
		strcpy(h->servers[i], g->servers[i]);
	}
	h->config_sum = config_sum(h);
	h->clean = 1;
	return 0;
}

int leap_pstate_hdr_check(const struct leap_pstate_hdr *h,
			  const struct leap_pstate_geom *g, char *err, size_t errlen)
{
	if (memcmp(h->magic, LEAP_PSTATE_MAGIC, sizeof(h->magic))) {
		snprintf(err, errlen, "not a leap-swapd state file (bad magic)");
		return -EBADMSG;
	}
	if (h->version != LEAP_PSTATE_VERSION || h->hdr_size != LEAP_PSTATE_HDR_SIZE) {
		snprintf(err, errlen,
			 "state file version %u (header %u bytes), expected %u",
			 h->version, h->hdr_size, LEAP_PSTATE_VERSION);
		return -EBADMSG;
	}
	if (h->config_sum != config_sum(h)) {
		snprintf(err, errlen, "state file header is damaged (checksum mismatch)");
		return -EBADMSG;
	}
	/* The sum holds: the fields are what a leap-swapd wrote; compare. */
	if (h->dev_pages != g->dev_pages) {
		snprintf(err, errlen,
			 "state file is for a device of %llu pages, this one has %llu "
			 "(--size)",
			 (unsigned long long)h->dev_pages,
			 (unsigned long long)g->dev_pages);
		return -EINVAL;
	}
	if (h->nservers != g->nservers) {
		snprintf(err, errlen, "state file is for %u server(s), not %u (--server)",
			 h->nservers, g->nservers);
		return -EINVAL;
	}
	for (unsigned i = 0; i < g->nservers; i++)
		if (strncmp(h->servers[i], g->servers[i], LEAP_PSTATE_ADDR_LEN)) {
			snprintf(err, errlen,
				 "state file has server %u = %.*s, not %s (the same "
				 "servers in the same order are needed)",
				 i, LEAP_PSTATE_ADDR_LEN, h->servers[i], g->servers[i]);
			return -EINVAL;
		}
	if (h->replicas != g->replicas) {
		snprintf(err, errlen,
			 "state file is for %u replica(s), not %u (--replicas)",
			 h->replicas, g->replicas);
		return -EINVAL;
	}
	if (h->stripe_pages != g->stripe_pages) {
		snprintf(err, errlen,
			 "state file is for a stripe of %u pages, not %u (--stripe)",
			 h->stripe_pages, g->stripe_pages);
		return -EINVAL;
	}
	if (h->dev != g->dev) {
		snprintf(err, errlen, "state file is for device id %u, not %u (--dev)",
			 h->dev, g->dev);
		return -EINVAL;
	}
	if (h->clean > 1) {
		snprintf(err, errlen, "state file header is damaged (clean flag %u)",
			 h->clean);
		return -EBADMSG;
	}
	for (unsigned i = 0; i < LEAP_PSTATE_MAX_SERVERS; i++)
		if (h->have_instance[i] > 1 ||
		    (i >= g->nservers && h->have_instance[i])) {
			snprintf(err, errlen,
				 "state file header is damaged (instance flag of server "
				 "%u)",
				 i);
			return -EBADMSG;
		}
	return 0;
}

int leap_pstate_pages_check(const uint8_t *pages, uint64_t n, unsigned replicas,
			    uint64_t *bad)
{
	uint8_t valid = (uint8_t)(((1U << replicas) - 1) * LEAP_PS_VALID0);
	uint8_t known = LEAP_PS_WRITTEN | LEAP_PS_WRITING | valid;

	for (uint64_t pg = 0; pg < n; pg++) {
		uint8_t st = pages[pg];

		/* Only bits memclient sets; a replica or a write in flight only
		 * on a written page. */
		if ((st & ~known) || (st && !(st & LEAP_PS_WRITTEN))) {
			*bad = pg;
			return -EBADMSG;
		}
	}
	return 0;
}

uint64_t leap_pstate_settle(uint8_t *pages, uint64_t n)
{
	uint64_t k = 0;

	for (uint64_t pg = 0; pg < n; pg++)
		if (pages[pg] & LEAP_PS_WRITING) {
			pages[pg] = LEAP_PS_WRITTEN;
			k++;
		}
	return k;
}

uint64_t leap_pstate_count_written(const uint8_t *pages, uint64_t n)
{
	uint64_t k = 0;

	for (uint64_t pg = 0; pg < n; pg++)
		k += pages[pg] & LEAP_PS_WRITTEN;
	return k;
}

static int fail(struct leap_pstate *ps, int rc)
{
	if (ps->map && ps->map != MAP_FAILED)
		munmap(ps->map, ps->map_len);
	ps->map = NULL;
	if (ps->fd >= 0)
		close(ps->fd);
	ps->fd = -1;
	return rc;
}

int leap_pstate_open(struct leap_pstate *ps, const char *path,
		     const struct leap_pstate_geom *g, char *err, size_t errlen)
{
	struct leap_pstate_hdr h;
	struct stat st;
	uint64_t bad;
	char why[384];
	int rc;

	memset(ps, 0, sizeof(*ps));
	ps->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (ps->fd < 0) {
		snprintf(err, errlen, "state file %s: %s", path, strerror(errno));
		return -errno;
	}
	/* One leap-swapd per file: two would each claim replicas the other
	 * overwrote.  The lock goes with the process, however it ends. */
	if (flock(ps->fd, LOCK_EX | LOCK_NB)) {
		rc = -errno;
		snprintf(err, errlen, "state file %s: %s", path,
			 rc == -EWOULDBLOCK ? "in use by another leap-swapd"
					    : strerror(-rc));
		return fail(ps, rc);
	}
	if (fstat(ps->fd, &st)) {
		rc = -errno;
		snprintf(err, errlen, "state file %s: %s", path, strerror(-rc));
		return fail(ps, rc);
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "state file %s: not a regular file", path);
		return fail(ps, -EINVAL);
	}
	ps->map_len = LEAP_PSTATE_HDR_SIZE + g->dev_pages;
	if (st.st_size == 0) {
		/* A new device: every page unwritten. */
		rc = leap_pstate_hdr_init(&h, g, err, errlen);
		if (rc)
			return fail(ps, rc);
		/* Blocks now, so that a store into the mapping can never fault
		 * for space (SIGBUS) while swap is being served. */
		rc = posix_fallocate(ps->fd, 0, (off_t)ps->map_len);
		if (rc) {
			snprintf(err, errlen, "state file %s: allocating %zu bytes: %s",
				 path, ps->map_len, strerror(rc));
			return fail(ps, -rc);
		}
		if (pwrite(ps->fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
		    fsync(ps->fd)) {
			rc = errno ? -errno : -EIO;
			snprintf(err, errlen, "state file %s: writing the header: %s",
				 path, strerror(-rc));
			return fail(ps, rc);
		}
	} else {
		if (st.st_size < (off_t)sizeof(h) ||
		    pread(ps->fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h)) {
			snprintf(
				err, errlen,
				"state file %s: not a leap-swapd state file (%lld bytes)",
				path, (long long)st.st_size);
			return fail(ps, -EBADMSG);
		}
		rc = leap_pstate_hdr_check(&h, g, why, sizeof(why));
		if (rc) {
			snprintf(err, errlen, "state file %s: %s", path, why);
			return fail(ps, rc);
		}
		if ((uint64_t)st.st_size != ps->map_len) {
			snprintf(
				err, errlen,
				"state file %s: %lld bytes, a device of %llu pages needs "
				"%zu (truncated or damaged)",
				path, (long long)st.st_size,
				(unsigned long long)g->dev_pages, ps->map_len);
			return fail(ps, -EBADMSG);
		}
		ps->reattached = true;
		ps->was_clean = h.clean;
	}
	{
		struct statfs sf;

		ps->on_tmpfs = !fstatfs(ps->fd, &sf) && sf.f_type == TMPFS_MAGIC_;
	}
	ps->map = mmap(NULL, ps->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, ps->fd, 0);
	if (ps->map == MAP_FAILED) {
		rc = -errno;
		snprintf(err, errlen, "state file %s: mmap: %s", path, strerror(-rc));
		return fail(ps, rc);
	}
	ps->hdr = ps->map;
	ps->pages = (uint8_t *)ps->map + LEAP_PSTATE_HDR_SIZE;
	if (ps->reattached) {
		if (leap_pstate_pages_check(ps->pages, g->dev_pages, g->replicas, &bad)) {
			snprintf(err, errlen,
				 "state file %s: damaged: page %llu has state 0x%02x, "
				 "which no leap-swapd writes",
				 path, (unsigned long long)bad, ps->pages[bad]);
			return fail(ps, -EBADMSG);
		}
		ps->in_flight = leap_pstate_settle(ps->pages, g->dev_pages);
		ps->written = leap_pstate_count_written(ps->pages, g->dev_pages);
	}
	__atomic_store_n(&ps->hdr->clean, 0, __ATOMIC_SEQ_CST);
	return 0;
}

void leap_pstate_set_instance(struct leap_pstate *ps, unsigned idx, uint64_t instance)
{
	if (idx >= LEAP_PSTATE_MAX_SERVERS)
		return;
	/* The id before the flag: a death in between leaves either the old
	 * flag (unset: the next leap-swapd clears this server's bits, see
	 * leap_mc_open) or the flag with this id. */
	__atomic_store_n(&ps->hdr->instance[idx], instance, __ATOMIC_SEQ_CST);
	__atomic_store_n(&ps->hdr->have_instance[idx], 1, __ATOMIC_SEQ_CST);
}

void leap_pstate_close(struct leap_pstate *ps, bool clean)
{
	if (!ps->map)
		return;
	if (clean)
		__atomic_store_n(&ps->hdr->clean, 1, __ATOMIC_SEQ_CST);
	/* Not needed for a later leap-swapd on this host (the page cache is
	 * shared); an orderly stop writes it out anyway. */
	msync(ps->map, ps->map_len, MS_SYNC);
	munmap(ps->map, ps->map_len);
	close(ps->fd);
	ps->map = NULL;
	ps->fd = -1;
}
