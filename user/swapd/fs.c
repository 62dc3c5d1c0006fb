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
#include <fcntl.h>
#include <linux/falloc.h>
#include <fuse.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "swapd.h"

#define PAGE LEAP_WIRE_PAGE_SIZE

static struct swapd *the_sd;
static struct fuse *the_fuse;
static struct swapd_fuse_opts the_fo;

static struct swapd *sd_of(void)
{
	return fuse_get_context()->private_data;
}

static void *fs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	/*
	 * A loop device with direct I/O submits its requests asynchronously
	 * (drivers/block/loop.c lo_rw_aio), and FUSE keeps at most
	 * max_background of them outstanding (fs/fuse/dev.c; libfuse's default
	 * 12, congested from 9 on): everything beyond waits in the kernel, so
	 * memclient's pipelining would never see it.
	 */
	if (the_fo.max_background) {
		conn->max_background = the_fo.max_background;
		conn->congestion_threshold = the_fo.max_background * 3 / 4;
	}
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

static int fs_read(const char *path, char *buf, size_t len, off_t off,
		   struct fuse_file_info *fi)
{
	struct swapd *sd = sd_of();

	(void)path;
	(void)fi;
	len = clamp(sd, off, len);
	if (!len)
		return 0;
	return swapd_io_read(sd, buf, len, (uint64_t)off) ?: (int)len;
}

static int fs_write(const char *path, const char *buf, size_t len, off_t off,
		    struct fuse_file_info *fi)
{
	struct swapd *sd = sd_of();
	size_t n = clamp(sd, off, len);

	(void)path;
	(void)fi;
	if (!n)
		return len ? -ENOSPC : 0;
	return swapd_io_write(sd, buf, n, (uint64_t)off) ?: (int)n;
}

/*
 * fallocate(PUNCH_HOLE | KEEP_SIZE) is a discard: what a loop device sends
 * for REQ_OP_DISCARD (swapon --discard).  Whole pages are dropped from the
 * store and the cache (swapd_io_discard); the partial pages at either end
 * are zeroed, since a punched range must read as zeros.  Nothing else
 * (allocation, zero range, collapse) makes sense for this fixed-size file.
 */
static int fs_fallocate(const char *path, int mode, off_t off, off_t len,
			struct fuse_file_info *fi)
{
	static const char
		zeros[2 * PAGE]; /* the most a range without a whole page spans */
	struct swapd *sd = sd_of();
	uint64_t start, end, head_end, tail_start;
	size_t n;
	int rc = 0;

	(void)fi;
	if (strcmp(path, "/" SWAPD_FILE))
		return -ENOENT;
	if (mode != (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE))
		return -EOPNOTSUPP;
	if (len <= 0)
		return -EINVAL;
	n = clamp(sd, off, (size_t)len);
	if (!n)
		return 0;
	start = (uint64_t)off;
	end = start + n;
	head_end = (start + PAGE - 1) / PAGE * PAGE;
	tail_start = end / PAGE * PAGE;
	if (head_end >= tail_start) /* no whole page: one or two partial ones */
		return swapd_io_write(sd, zeros, n, start);
	if (head_end > start)
		rc = swapd_io_write(sd, zeros, head_end - start, start);
	if (!rc && tail_start > head_end)
		rc = swapd_io_discard(sd, head_end, tail_start - head_end);
	if (!rc && end > tail_start)
		rc = swapd_io_write(sd, zeros, end - tail_start, tail_start);
	return rc;
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
	.fallocate = fs_fallocate,
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

int swapd_fuse_run(struct swapd *sd, const char *mountpoint, int max_threads,
		   const struct swapd_fuse_opts *fo)
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
	the_fo = *fo;
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
	/* Each worker reads /dev/fuse through its own clone: no single reader
	 * that every request passes. */
	fuse_loop_cfg_set_clone_fd(lc, (unsigned)fo->clone_fd);
	fprintf(stderr, "leap-swapd: serving %s/%s (%llu MiB)\n", mountpoint, SWAPD_FILE,
		(unsigned long long)(sd->size >> 20));
	rc = fuse_loop_mt(the_fuse, lc);
	fuse_loop_cfg_destroy(lc);
	fuse_unmount(the_fuse);
	fuse_destroy(the_fuse);
	the_fuse = NULL;
	return rc ? 1 : 0;
}
