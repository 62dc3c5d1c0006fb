/* SPDX-License-Identifier: MIT */
/*
 * leap-swapd's ublk frontend, internal: the control commands (ublk_ctrl.c),
 * the queues (ublk_queue.c) and the device's life cycle (ublk.c).
 */
#ifndef LEAP_SWAPD_UBLK_H
#define LEAP_SWAPD_UBLK_H

#include <liburing.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "swapd.h"
#include "ublk_proto.h"

/* /dev/ublk-control and a ring of 128-byte SQEs to send it commands. */
struct ublk_ctrl {
	int fd;
	struct io_uring ring;
};

int ublk_ctrl_open(struct ublk_ctrl *c, char *err, size_t errlen);
void ublk_ctrl_close(struct ublk_ctrl *c);
/* One command (a UBLK_U_CMD_* opcode) for device dev_id with payload buf
 * of len bytes and data[0] = data0; the driver's result (0 or -errno). */
int ublk_ctrl_cmd(struct ublk_ctrl *c, uint32_t op, uint32_t dev_id, void *buf,
		  uint16_t len, uint64_t data0);

struct ublk_q;

/* What every queue of one device shares (read-only once queues run). */
struct ublk_dev {
	struct swapd *sd;
	int cdev_fd; /* /dev/ublkcN */
	int id;
	uint16_t queues, depth;
	uint32_t max_io, block;
	unsigned workers;  /* per queue */
	uint64_t rejected; /* atomic: descriptors refused (ublkp_check) */
	uint64_t *served;  /* per queue, atomic: requests served */
	struct ublk_q **q;
};

/*
 * Starts queue qid's thread: it maps the queue's descriptors, creates its
 * io_uring and issues FETCH_REQ for every tag.  Returns once that is done
 * (0) or failed (-1, reason on stderr); the driver completes START_DEV or
 * END_USER_RECOVERY only when every queue has fetched all its tags.  The
 * thread then serves requests through the request layer (io.c) with
 * dev->workers workers until the driver aborts its commands (STOP_DEV, or
 * DEL_DEV of a device never started).
 */
struct ublk_q *ublk_queue_start(struct ublk_dev *dev, uint16_t qid);
/* True once the queue's thread has ended (all its commands aborted). */
bool ublk_queue_ended(struct ublk_q *q);
/* Joins the queue's thread and workers and frees it. */
void ublk_queue_join(struct ublk_q *q);

#endif /* LEAP_SWAPD_UBLK_H */
