// SPDX-License-Identifier: MIT
/*
 * ublk control commands: ADD_DEV, SET_PARAMS, START_DEV, STOP_DEV, DEL_DEV,
 * GET_DEV_INFO, GET_PARAMS and the two recovery commands, each an
 * IORING_OP_URING_CMD on /dev/ublk-control.
 *
 * The driver serves them only from 128-byte SQEs (ublk_ctrl_uring_cmd
 * refuses a command without IO_URING_F_SQE128): the 32-byte struct
 * ublksrv_ctrl_cmd lives in the SQE's command area.  It also refuses the
 * non-blocking attempt (-EAGAIN on IO_URING_F_NONBLOCK), so io_uring runs
 * every control command in a worker and START_DEV / END_USER_RECOVERY may
 * block there until every queue has fetched all its tags.  One command at a
 * time: submit, wait for its completion.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ublk.h"

#define UBLK_CONTROL "/dev/ublk-control"

int ublk_ctrl_open(struct ublk_ctrl *c, char *err, size_t errlen)
{
	int rc;

	c->fd = open(UBLK_CONTROL, O_RDWR | O_CLOEXEC);
	if (c->fd < 0) {
		snprintf(err, errlen, "%s: %s", UBLK_CONTROL, strerror(errno));
		return -1;
	}
	rc = io_uring_queue_init(4, &c->ring, IORING_SETUP_SQE128);
	if (rc) {
		snprintf(err, errlen, "io_uring with 128-byte SQEs: %s", strerror(-rc));
		close(c->fd);
		c->fd = -1;
		return -1;
	}
	return 0;
}

void ublk_ctrl_close(struct ublk_ctrl *c)
{
	if (c->fd < 0)
		return;
	io_uring_queue_exit(&c->ring);
	close(c->fd);
	c->fd = -1;
}

int ublk_ctrl_cmd(struct ublk_ctrl *c, uint32_t op, uint32_t dev_id, void *buf,
		  uint16_t len, uint64_t data0)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&c->ring);
	struct ublksrv_ctrl_cmd *cmd;
	struct io_uring_cqe *cqe;
	int rc;

	if (!sqe)
		return -EBUSY;
	memset(sqe, 0, 128);
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = c->fd;
	sqe->cmd_op = op;
	cmd = (struct ublksrv_ctrl_cmd *)sqe->cmd;
	cmd->dev_id = dev_id;
	cmd->queue_id = (uint16_t)-1; /* ublk_ctrl_add_dev insists on it */
	cmd->addr = (uint64_t)(uintptr_t)buf;
	cmd->len = len;
	cmd->data[0] = data0;
	rc = io_uring_submit_and_wait(&c->ring, 1);
	if (rc < 0)
		return rc;
	rc = io_uring_wait_cqe(&c->ring, &cqe);
	if (rc < 0)
		return rc;
	rc = cqe->res;
	io_uring_cqe_seen(&c->ring, cqe);
	return rc;
}

int swapd_ublk_probe(char *err, size_t errlen)
{
	struct stat st;

	if (!stat(UBLK_CONTROL, &st))
		return 0;
	if (errno == ENOENT)
		snprintf(err, errlen,
			 "the ublk driver is not loaded (%s missing): modprobe ublk_drv "
			 "(Linux 6.0 or later with CONFIG_BLK_DEV_UBLK)",
			 UBLK_CONTROL);
	else
		snprintf(err, errlen, "%s: %s", UBLK_CONTROL, strerror(errno));
	return -1;
}
