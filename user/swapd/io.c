// SPDX-License-Identifier: MIT
/*
 * leap-swapd's request layer, shared by the FUSE and NBD frontends: reads
 * through the prefetch cache, writes and discards that invalidate it, the
 * unaligned bounce path, and the counters.  Callers clamp or validate the
 * range against sd->size first; everything here is within the device.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "swapd.h"

#define PAGE LEAP_WIRE_PAGE_SIZE

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void count_read(struct swapd *sd, uint64_t ns, size_t len, int rc)
{
	unsigned b = 0;

	for (uint64_t us = ns / 1000; us > 1 && b < SWAPD_LAT_BUCKETS - 1; us >>= 1)
		b++;
	pthread_mutex_lock(&sd->stat_lock);
	sd->cnt.reads++;
	sd->cnt.pages_in += len / PAGE;
	sd->cnt.read_lat[b]++;
	if (rc)
		sd->cnt.errors++;
	pthread_mutex_unlock(&sd->stat_lock);
}

static void count_write(struct swapd *sd, size_t len, int rc)
{
	pthread_mutex_lock(&sd->stat_lock);
	sd->cnt.writes++;
	sd->cnt.pages_out += len / PAGE;
	if (rc)
		sd->cnt.errors++;
	pthread_mutex_unlock(&sd->stat_lock);
}

/* Unaligned access through the bounce buffer, one bounce-sized piece at a time. */
static int unaligned(struct swapd *sd, char *buf, size_t len, uint64_t off, bool write)
{
	int rc = 0;

	pthread_mutex_lock(&sd->bounce_lock);
	sd->cnt.unaligned++;
	while (len && !rc) {
		uint64_t start = off / PAGE * PAGE;
		size_t head = (size_t)(off - start);
		size_t piece = sd->bounce_len - head, span;

		if (piece > len)
			piece = len;
		span = (head + piece + PAGE - 1) / PAGE * PAGE;
		if (start + span > sd->size)
			span = sd->size - start; /* size is a page multiple */
		rc = leap_mc_read(sd->mc, start, sd->bounce, span);
		if (!rc && write) {
			memcpy(sd->bounce + head, buf, piece);
			rc = leap_mc_write(sd->mc, start, sd->bounce, span);
		} else if (!rc) {
			memcpy(buf, sd->bounce + head, piece);
		}
		buf += piece;
		off += piece;
		len -= piece;
	}
	pthread_mutex_unlock(&sd->bounce_lock);
	return rc;
}

/*
 * Page-aligned reads: pages in the prefetch cache are served from it (and
 * evicted, cache.h), the runs of misses between them from the servers.
 */
static int read_pages(struct swapd *sd, char *buf, size_t len, uint64_t off)
{
	uint64_t pg0 = off / PAGE, n = len / PAGE, miss = UINT64_MAX;
	int rc;

	if (!sd->cache.cap)
		return leap_mc_read(sd->mc, off, buf, len);
	for (uint64_t i = 0; i <= n; i++) {
		bool hit = i < n && pcache_take(&sd->cache, pg0 + i, buf + i * PAGE);

		if ((hit || i == n) && miss != UINT64_MAX) {
			rc = leap_mc_read(sd->mc, (pg0 + miss) * PAGE, buf + miss * PAGE,
					  (i - miss) * PAGE);
			if (rc)
				return rc;
			miss = UINT64_MAX;
		} else if (!hit && i < n && miss == UINT64_MAX) {
			miss = i;
		}
	}
	return 0;
}

static void invalidate(struct swapd *sd, uint64_t off, size_t len)
{
	if (!sd->cache.cap)
		return;
	for (uint64_t pg = off / PAGE; pg * PAGE < off + len; pg++)
		pcache_invalidate(&sd->cache, pg);
}

int swapd_io_read(struct swapd *sd, void *buf, size_t len, uint64_t off)
{
	int64_t t0 = now_ns();
	int rc;

	if (off % PAGE == 0 && len % PAGE == 0)
		rc = read_pages(sd, buf, len, off);
	else
		rc = unaligned(sd, buf, len, off, false);
	count_read(sd, (uint64_t)(now_ns() - t0), len, rc);
	return rc ? -EIO : 0;
}

int swapd_io_write(struct swapd *sd, const void *buf, size_t len, uint64_t off)
{
	int rc;

	/* Before: a cached copy is old from now on.  After: a prefetch that
	 * started during the write may have read the old data. */
	invalidate(sd, off, len);
	if (off % PAGE == 0 && len % PAGE == 0)
		rc = leap_mc_write(sd->mc, off, buf, len);
	else
		rc = unaligned(sd, (char *)buf, len, off, true);
	invalidate(sd, off, len);
	count_write(sd, len, rc);
	return rc ? -EIO : 0;
}

int swapd_io_discard(struct swapd *sd, uint64_t off, size_t len)
{
	int rc;

	if (off % PAGE || len % PAGE)
		return -EINVAL;
	/* Same bracket as a write: no cached or in-flight prefetched copy of
	 * the old contents survives the discard. */
	invalidate(sd, off, len);
	rc = leap_mc_discard(sd->mc, off, len);
	invalidate(sd, off, len);
	pthread_mutex_lock(&sd->stat_lock);
	sd->cnt.discards++;
	if (!rc)
		sd->cnt.pages_discarded += len / PAGE;
	else
		sd->cnt.errors++;
	pthread_mutex_unlock(&sd->stat_lock);
	return rc ? -EIO : 0;
}

void swapd_print_stats(struct swapd *sd, FILE *f)
{
	struct swapd_counters c;
	struct leap_mc_counters m;
	uint64_t total = 0, acc = 0;
	int p50 = -1, p99 = -1;

	pthread_mutex_lock(&sd->stat_lock);
	c = sd->cnt;
	pthread_mutex_unlock(&sd->stat_lock);
	leap_mc_get_counters(sd->mc, &m);
	for (int i = 0; i < SWAPD_LAT_BUCKETS; i++)
		total += c.read_lat[i];
	for (int i = 0; i < SWAPD_LAT_BUCKETS && total; i++) {
		acc += c.read_lat[i];
		if (p50 < 0 && acc * 2 >= total)
			p50 = i;
		if (p99 < 0 && acc * 100 >= total * 99)
			p99 = i;
	}
	fprintf(f,
		"leap-swapd: reads=%llu writes=%llu pages_in=%llu pages_out=%llu "
		"unaligned=%llu errors=%llu read_p50_us<=%llu read_p99_us<=%llu "
		"reconnects=%llu retries=%llu failovers=%llu degraded_writes=%llu "
		"io_errors=%llu resilvered=%llu under_replicated=%llu discards=%llu "
		"pages_discarded=%llu\n",
		(unsigned long long)c.reads, (unsigned long long)c.writes,
		(unsigned long long)c.pages_in, (unsigned long long)c.pages_out,
		(unsigned long long)c.unaligned, (unsigned long long)c.errors,
		p50 < 0 ? 0ULL : 2ULL << p50, p99 < 0 ? 0ULL : 2ULL << p99,
		(unsigned long long)m.reconnects, (unsigned long long)m.retries,
		(unsigned long long)m.failovers, (unsigned long long)m.degraded_writes,
		(unsigned long long)m.io_errors, (unsigned long long)m.resilvered,
		(unsigned long long)m.under_replicated, (unsigned long long)c.discards,
		(unsigned long long)c.pages_discarded);
}
