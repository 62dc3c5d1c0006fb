// SPDX-License-Identifier: MIT
/*
 * leap-swapd's ublk frontend: the life of one /dev/ublkbN.
 *
 *   new device: ADD_DEV (queues, depth, request buffer size, recovery
 *   flags) -> SET_PARAMS (size, block, discard) -> open /dev/ublkcN ->
 *   every queue fetches all its tags (ublk_queue.c) -> START_DEV, which
 *   the driver completes once they have (ublk_ctrl_start_dev waits for
 *   ub->completion) and which creates the disk.
 *
 *   recovery (--recover N) of a device whose server died: GET_DEV_INFO and
 *   GET_PARAMS (the device must have been added with UBLK_F_USER_RECOVERY
 *   and have --size) -> START_USER_RECOVERY, which the driver refuses with
 *   EBUSY until the old server's char device is released and the device
 *   is quiesced (ublk_ctrl_start_recovery), so it is retried -> open
 *   /dev/ublkcN -> the queues fetch -> END_USER_RECOVERY unquiesces the
 *   disk and the I/O that waited (and, with REISSUE, what the dead server
 *   held) runs.
 *
 *   stop (SIGTERM/SIGINT/SIGHUP): refused while the disk is held
 *   exclusively (swapon holds it), as with NBD; otherwise STOP_DEV (the
 *   disk goes, the driver aborts every fetch, the queue threads end), the
 *   char device is closed, DEL_DEV (which waits for that close).
 *
 * A SIGKILLed leap-swapd leaves, with recovery, the disk in place and its
 * I/O queued until a new leap-swapd --recover N takes over; without, the
 * driver stops the disk (ublk_uring_cmd_cancel_fn schedules stop_work) and
 * I/O fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ublk.h"

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* The char device appears with the device (devtmpfs, or udev a moment
 * later). */
static int open_cdev(int id)
{
	char path[48];
	int fd = -1;

	snprintf(path, sizeof(path), "/dev/ublkc%d", id);
	for (int i = 0; i < 100 && fd < 0; i++) {
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0 && errno != ENOENT && errno != EBUSY)
			break;
		if (fd < 0)
			sleep_ms(50);
	}
	if (fd < 0)
		fprintf(stderr, "leap-swapd: %s: %s\n", path, strerror(errno));
	return fd;
}

/* ADD_DEV + SET_PARAMS; the device number, or -1. */
static int add_device(struct ublk_ctrl *c, const struct ublkp_config *cfg,
		      struct ublksrv_ctrl_dev_info *info)
{
	struct ublk_params p;
	uint64_t want =
		cfg->recovery ? UBLK_F_USER_RECOVERY | UBLK_F_USER_RECOVERY_REISSUE : 0;
	int rc;

	ublkp_dev_info(cfg, info);
	rc = ublk_ctrl_cmd(c, UBLK_U_CMD_ADD_DEV, info->dev_id, info, sizeof(*info), 0);
	if (rc) {
		fprintf(stderr, "leap-swapd: ublk ADD_DEV: %s\n", strerror(-rc));
		return -1;
	}
	/* The driver clears the flags it does not support (UBLK_F_ALL). */
	if ((info->flags & want) != want) {
		fprintf(stderr,
			"leap-swapd: this ublk driver lacks user recovery with reissue "
			"(flags 0x%llx): use --ublk-recovery 0\n",
			(unsigned long long)info->flags);
		goto del;
	}
	ublkp_params(cfg, &p);
	rc = ublk_ctrl_cmd(c, UBLK_U_CMD_SET_PARAMS, info->dev_id, &p, sizeof(p), 0);
	if (rc) {
		fprintf(stderr, "leap-swapd: ublk SET_PARAMS: %s\n", strerror(-rc));
		goto del;
	}
	return (int)info->dev_id;
del:
	ublk_ctrl_cmd(c, UBLK_U_CMD_DEL_DEV, info->dev_id, NULL, 0, 0);
	return -1;
}

/* GET_DEV_INFO + GET_PARAMS + START_USER_RECOVERY of device id; 0 or -1. */
static int begin_recovery(struct ublk_ctrl *c, int id, uint64_t size,
			  struct ublksrv_ctrl_dev_info *info, uint32_t *block)
{
	struct ublk_params p;
	int rc;

	memset(info, 0, sizeof(*info));
	rc = ublk_ctrl_cmd(c, UBLK_U_CMD_GET_DEV_INFO, (uint32_t)id, info, sizeof(*info),
			   0);
	if (rc) {
		fprintf(stderr, "leap-swapd: --recover %d: GET_DEV_INFO: %s\n", id,
			strerror(-rc));
		return -1;
	}
	if (!(info->flags & UBLK_F_USER_RECOVERY)) {
		fprintf(stderr,
			"leap-swapd: --recover %d: the device was added without user "
			"recovery: nothing to take over\n",
			id);
		return -1;
	}
	memset(&p, 0, sizeof(p));
	p.len = sizeof(p);
	rc = ublk_ctrl_cmd(c, UBLK_U_CMD_GET_PARAMS, (uint32_t)id, &p, sizeof(p), 0);
	if (rc) {
		fprintf(stderr, "leap-swapd: --recover %d: GET_PARAMS: %s\n", id,
			strerror(-rc));
		return -1;
	}
	if ((p.basic.dev_sectors << 9) != size) {
		fprintf(stderr,
			"leap-swapd: --recover %d: the device has %llu bytes, --size "
			"says "
			"%llu\n",
			id, (unsigned long long)(p.basic.dev_sectors << 9),
			(unsigned long long)size);
		return -1;
	}
	*block = 1U << p.basic.logical_bs_shift;
	/* EBUSY until the dead server's files are released and the queue is
	 * quiesced (ublk_ctrl_start_recovery); its exit can take a while
	 * when it held many connections. */
	for (int i = 0; i < 300; i++) {
		rc = ublk_ctrl_cmd(c, UBLK_U_CMD_START_USER_RECOVERY, (uint32_t)id, NULL,
				   0, 0);
		if (rc != -EBUSY)
			break;
		sleep_ms(100);
	}
	if (rc) {
		fprintf(stderr, "leap-swapd: --recover %d: START_USER_RECOVERY: %s%s\n",
			id, strerror(-rc),
			rc == -EBUSY	? " (is the old leap-swapd still running?)"
			: rc == -EINVAL ? " (the device is not waiting for a new server)"
					: "");
		return -1;
	}
	return 0;
}

/* Stop signal: STOP_DEV unless the disk is held (swapon).  The exclusive
 * open that checks it is kept until the end, so nothing can claim the disk
 * in between.  True once stopping. */
static bool try_stop(struct ublk_ctrl *c, int id, int *excl_fd)
{
	char dev[48];
	int rc;

	snprintf(dev, sizeof(dev), "/dev/ublkb%d", id);
	*excl_fd = open(dev, O_RDONLY | O_EXCL | O_CLOEXEC);
	if (*excl_fd < 0) {
		fprintf(stderr,
			"leap-swapd: not stopping: %s is in use (%s; swapon?): "
			"swapoff first\n",
			dev, strerror(errno));
		return false;
	}
	/* The queues keep serving while the driver drains: it waits for every
	 * started request before it deletes the disk (ublk_stop_dev).  The
	 * open disk must be closed before DEL_DEV, which waits for the last
	 * reference (ublk_free_disk drops the disk's). */
	rc = ublk_ctrl_cmd(c, UBLK_U_CMD_STOP_DEV, (uint32_t)id, NULL, 0, 0);
	close(*excl_fd);
	*excl_fd = -1;
	if (rc) {
		fprintf(stderr, "leap-swapd: ublk STOP_DEV: %s\n", strerror(-rc));
		return false;
	}
	return true;
}

static bool all_ended(struct ublk_dev *d)
{
	for (unsigned i = 0; i < d->queues; i++)
		if (d->q[i] && !ublk_queue_ended(d->q[i]))
			return false;
	return true;
}

int swapd_ublk_run(struct swapd *sd, const struct swapd_ublk_opts *o)
{
	static struct ublk_dev dev;
	struct ublk_dev *d = &dev;
	struct ublksrv_ctrl_dev_info info;
	struct ublk_ctrl c = {.fd = -1};
	struct ublkp_config cfg = {
		.size = sd->size,
		.block = o->block,
		.queues = (uint16_t)o->queues,
		.depth = (uint16_t)o->depth,
		.max_io = o->max_io,
		.discard_max = 64U << 20,
		.recovery = o->recovery,
	};
	sigset_t stop_sigs, old_sigs;
	const char *why;
	char err[512];
	bool stopping = false, started = false, recovering = o->recover_id >= 0;
	int excl_fd = -1, rc = 1, id = -1;

	memset(d, 0, sizeof(*d));
	d->sd = sd;
	d->cdev_fd = -1;
	if (!recovering && ublkp_config_check(&cfg, &why)) {
		fprintf(stderr, "leap-swapd: ublk: %s\n", why);
		return 1;
	}
	if (ublk_ctrl_open(&c, err, sizeof(err))) {
		fprintf(stderr, "leap-swapd: %s\n", err);
		return 1;
	}
	sigemptyset(&stop_sigs);
	sigaddset(&stop_sigs, SIGTERM);
	sigaddset(&stop_sigs, SIGINT);
	sigaddset(&stop_sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &stop_sigs, &old_sigs);
	if (recovering) {
		id = o->recover_id;
		if (begin_recovery(&c, id, sd->size, &info, &cfg.block))
			goto out;
	} else {
		id = add_device(&c, &cfg, &info);
		if (id < 0)
			goto out;
	}
	/* The driver's numbers: queues cut to the CPUs (ublk_ctrl_add_dev),
	 * or the recovered device's own. */
	d->id = id;
	d->queues = info.nr_hw_queues;
	d->depth = info.queue_depth;
	d->max_io = info.max_io_buf_bytes;
	d->block = cfg.block;
	d->workers = o->workers < d->depth ? o->workers : d->depth;
	d->q = calloc(d->queues, sizeof(*d->q));
	d->served = calloc(d->queues, sizeof(*d->served));
	d->cdev_fd = open_cdev(id);
	if (!d->q || !d->served || d->cdev_fd < 0)
		goto teardown;
	for (unsigned i = 0; i < d->queues; i++) {
		d->q[i] = ublk_queue_start(d, (uint16_t)i);
		if (!d->q[i])
			goto teardown;
	}
	if (recovering)
		rc = ublk_ctrl_cmd(&c, UBLK_U_CMD_END_USER_RECOVERY, (uint32_t)id, NULL,
				   0, (uint64_t)getpid());
	else
		rc = ublk_ctrl_cmd(&c, UBLK_U_CMD_START_DEV, (uint32_t)id, NULL, 0,
				   (uint64_t)getpid());
	if (rc) {
		fprintf(stderr, "leap-swapd: ublk %s: %s\n",
			recovering ? "END_USER_RECOVERY" : "START_DEV", strerror(-rc));
		rc = 1;
		goto teardown;
	}
	started = true;
	fprintf(stderr,
		"leap-swapd: %s /dev/ublkb%d (%llu MiB) over ublk, %u queues of depth "
		"%u, "
		"%u workers each, block %u, recovery %s\n",
		recovering ? "recovered, serving" : "serving", id,
		(unsigned long long)(sd->size >> 20), d->queues, d->depth, d->workers,
		d->block, (info.flags & UBLK_F_USER_RECOVERY) ? "on" : "off");
	while (!all_ended(d)) {
		struct timespec ts = {0, 200 * 1000000L};

		if (sigtimedwait(&stop_sigs, NULL, &ts) <= 0 || stopping)
			continue;
		stopping = try_stop(&c, id, &excl_fd);
	}
	rc = stopping ? 0 : 1;
	if (!stopping)
		fprintf(stderr, "leap-swapd: ublkb%d: the driver ended the queues\n", id);
teardown:
	/* Not started (or recovery not ended): STOP_DEV aborts the fetches
	 * (ublk_stop_dev -> ublk_cancel_dev) so the queue threads end.  For a
	 * recovery that failed midway it also deletes the disk: the queued
	 * I/O fails rather than wait for a server forever. */
	if (!started || !stopping)
		ublk_ctrl_cmd(&c, UBLK_U_CMD_STOP_DEV, (uint32_t)id, NULL, 0, 0);
	for (unsigned i = 0; d->q && i < d->queues; i++)
		if (d->q[i])
			ublk_queue_join(d->q[i]);
	free(d->q);
	if (started && d->served) {
		/* Which queues the block layer used (one per CPU it ran on). */
		fprintf(stderr, "leap-swapd: ublkb%d requests per queue:", id);
		for (unsigned i = 0; i < d->queues; i++)
			fprintf(stderr, " %llu", (unsigned long long)d->served[i]);
		fprintf(stderr, "\n");
	}
	free(d->served);
	if (d->cdev_fd >= 0)
		close(d->cdev_fd);
	/* DEL_DEV waits until the char device is released (ublk_ctrl_del_dev
	 * waits for the device number to be freed). */
	if (id >= 0) {
		int drc = ublk_ctrl_cmd(&c, UBLK_U_CMD_DEL_DEV, (uint32_t)id, NULL, 0, 0);

		if (drc)
			fprintf(stderr, "leap-swapd: ublk DEL_DEV: %s\n", strerror(-drc));
		else if (!rc)
			fprintf(stderr, "leap-swapd: ublkb%d stopped and deleted\n", id);
	}
out:
	if (excl_fd >= 0)
		close(excl_fd);
	ublk_ctrl_close(&c);
	pthread_sigmask(SIG_SETMASK, &old_sigs, NULL);
	return rc;
}
