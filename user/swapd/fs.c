// SPDX-License-Identifier: MIT
/*
 * leap-swapd's FUSE frontend: one file, /swap, whose pages live in
 * leap-memd servers (memclient).  A loop device with direct I/O over it
 * (losetup --direct-io=on) is a block device the kernel can swap to on a
 * kernel without NBD or ublk.  Direct I/O everywhere: the kernel must not
 * keep a page cache copy of swapped pages (that would need memory exactly
 * when memory is short, and double-cache every page).
 *
 * Requests are synchronous: a write is acknowledged once memclient has it
 * on the servers.  Swap I/O is page-aligned; anything else (a tool reading
 * the file) goes through a preallocated bounce buffer.
 */
#define FUSE_USE_VERSION 312
#include <errno.h>
#include <fuse.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "swapd.h"

#define PAGE LEAP_WIRE_PAGE_SIZE

static struct swapd *the_sd;
static struct fuse *the_fuse;

static struct swapd *sd_of(void)
{
	return fuse_get_context()->private_data;
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

static void *fs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	(void)conn;
	cfg->direct_io = 1;
	cfg->kernel_cache = 0;
	cfg->use_ino = 0;
	cfg->attr_timeout = 3600;
	cfg->entry_timeout = 3600;
	return the_sd;
}

static int fs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	(void)fi;
	memset(st, 0, sizeof(*st));
	st->st_uid = getuid();
	st->st_gid = getgid();
	if (!strcmp(path, "/")) {
		st->st_mode = S_IFDIR | 0700;
		st->st_nlink = 2;
		return 0;
	}
	if (!strcmp(path, "/" SWAPD_FILE)) {
		/* 0600: swap contents are other processes' memory. */
		st->st_mode = S_IFREG | 0600;
		st->st_nlink = 1;
		st->st_size = (off_t)sd_of()->size;
		st->st_blksize = PAGE;
		st->st_blocks = (blkcnt_t)(sd_of()->size / 512);
		return 0;
	}
	return -ENOENT;
}

static int fs_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
		      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	(void)off;
	(void)fi;
	(void)flags;
	if (strcmp(path, "/"))
		return -ENOENT;
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	fill(buf, SWAPD_FILE, NULL, 0, 0);
	return 0;
}

static int fs_open(const char *path, struct fuse_file_info *fi)
{
	struct swapd *sd = sd_of();

	if (strcmp(path, "/" SWAPD_FILE))
		return -ENOENT;
	if (fi->flags & O_TRUNC)
		return -EPERM;
	fi->direct_io = 1;
	fi->keep_cache = 0;
	__atomic_add_fetch(&sd->open_count, 1, __ATOMIC_SEQ_CST);
	return 0;
}

static int fs_release(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	(void)fi;
	__atomic_sub_fetch(&sd_of()->open_count, 1, __ATOMIC_SEQ_CST);
	return 0;
}

static int fs_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	(void)path;
	(void)fi;
	return (uint64_t)size == sd_of()->size ? 0 : -EPERM;
}

static int fs_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void)path;
	(void)datasync;
	(void)fi;
	return 0; /* every write is on the servers when it returns */
}

/* Clamps [off, off + len) to the file; the length to serve. */
static size_t clamp(struct swapd *sd, off_t off, size_t len)
{
	if (off < 0 || (uint64_t)off >= sd->size)
		return 0;
	return (uint64_t)off + len > sd->size ? sd->size - (uint64_t)off : len;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
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

static int fs_read(const char *path, char *buf, size_t len, off_t off,
		   struct fuse_file_info *fi)
{
	struct swapd *sd = sd_of();
	int64_t t0 = now_ns();
	int rc;

	(void)path;
	(void)fi;
	len = clamp(sd, off, len);
	if (!len)
		return 0;
	if (off % PAGE == 0 && len % PAGE == 0)
		rc = read_pages(sd, buf, len, (uint64_t)off);
	else
		rc = unaligned(sd, buf, len, (uint64_t)off, false);
	count_read(sd, (uint64_t)(now_ns() - t0), len, rc);
	return rc ? -EIO : (int)len;
}

static int fs_write(const char *path, const char *buf, size_t len, off_t off,
		    struct fuse_file_info *fi)
{
	struct swapd *sd = sd_of();
	size_t n = clamp(sd, off, len);
	int rc;

	(void)path;
	(void)fi;
	if (!n)
		return len ? -ENOSPC : 0;
	/* Before: a cached copy is old from now on.  After: a prefetch that
	 * started during the write may have read the old data. */
	invalidate(sd, (uint64_t)off, n);
	if (off % PAGE == 0 && n % PAGE == 0)
		rc = leap_mc_write(sd->mc, (uint64_t)off, buf, n);
	else
		rc = unaligned(sd, (char *)buf, n, (uint64_t)off, true);
	invalidate(sd, (uint64_t)off, n);
	count_write(sd, n, rc);
	return rc ? -EIO : (int)n;
}

/* PREFETCH / STATS (swapd_ioctl.h).  FUSE copies the fixed-size argument in
 * and out as the command's direction and size say. */
static int fs_ioctl(const char *path, unsigned int cmd, void *arg,
		    struct fuse_file_info *fi, unsigned int flags, void *data)
{
	(void)arg;
	(void)fi;
	if (strcmp(path, "/" SWAPD_FILE))
		return -ENOTTY;
	if (flags & FUSE_IOCTL_COMPAT)
		return -ENOSYS;
	switch (cmd) {
	case LEAP_SWAPD_IOC_PREFETCH:
		return swapd_ioctl_prefetch(sd_of(), data);
	case LEAP_SWAPD_IOC_STATS:
		memset(data, 0, sizeof(struct leap_swapd_stats));
		return swapd_ioctl_stats(sd_of(), data);
	}
	return -ENOTTY;
}

static const struct fuse_operations ops = {
	.init = fs_init,
	.getattr = fs_getattr,
	.readdir = fs_readdir,
	.open = fs_open,
	.release = fs_release,
	.truncate = fs_truncate,
	.fsync = fs_fsync,
	.read = fs_read,
	.write = fs_write,
	.ioctl = fs_ioctl,
};

/*
 * SIGTERM/SIGINT/SIGHUP stop the daemon only while nothing has the file
 * open: with a loop device (and maybe swap) on it, stopping would turn
 * every swap-in into an I/O error and kill whatever process owns the page.
 * Repeating the signal changes nothing (a service manager or a shell loop
 * may well repeat it); SIGKILL is the way to force it.
 */
static void on_stop(int sig)
{
	static const char msg[] =
		"leap-swapd: not stopping: the swap file is still open "
		"(loop device attached?); swapoff and losetup -d first\n";

	(void)sig;
	if (__atomic_load_n(&the_sd->open_count, __ATOMIC_SEQ_CST) == 0) {
		fuse_exit(the_fuse);
		return;
	}
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
		return;
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
		"io_errors=%llu resilvered=%llu under_replicated=%llu\n",
		(unsigned long long)c.reads, (unsigned long long)c.writes,
		(unsigned long long)c.pages_in, (unsigned long long)c.pages_out,
		(unsigned long long)c.unaligned, (unsigned long long)c.errors,
		p50 < 0 ? 0ULL : 2ULL << p50, p99 < 0 ? 0ULL : 2ULL << p99,
		(unsigned long long)m.reconnects, (unsigned long long)m.retries,
		(unsigned long long)m.failovers, (unsigned long long)m.degraded_writes,
		(unsigned long long)m.io_errors, (unsigned long long)m.resilvered,
		(unsigned long long)m.under_replicated);
}

int swapd_fuse_run(struct swapd *sd, const char *mountpoint, int max_threads)
{
	char *argv[] = {"leap-swapd", "-o", "fsname=leap-swapd,subtype=leap", NULL, NULL};
	struct fuse_args args = FUSE_ARGS_INIT(3, argv);
	struct fuse_loop_config *lc;
	struct sigaction sa = {.sa_handler = on_stop};
	int rc;

	if (sd->verbose) {
		argv[3] = "-d";
		args.argc = 4;
	}
	the_sd = sd;
	the_fuse = fuse_new(&args, &ops, sizeof(ops), sd);
	if (!the_fuse)
		return 1;
	if (fuse_mount(the_fuse, mountpoint)) {
		fuse_destroy(the_fuse);
		return 1;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	lc = fuse_loop_cfg_create();
	/* Only the cap: libfuse 3.12+ keeps its threads, and setting
	 * max_idle_threads is discouraged (libfuse PR #1034). */
	fuse_loop_cfg_set_max_threads(lc, (unsigned)max_threads);
	fprintf(stderr, "leap-swapd: serving %s/%s (%llu MiB)\n", mountpoint, SWAPD_FILE,
		(unsigned long long)(sd->size >> 20));
	rc = fuse_loop_mt(the_fuse, lc);
	fuse_loop_cfg_destroy(lc);
	fuse_unmount(the_fuse);
	fuse_destroy(the_fuse);
	the_fuse = NULL;
	return rc ? 1 : 0;
}
