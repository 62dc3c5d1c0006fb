/* SPDX-License-Identifier: MIT */
/*
 * The ublk driver's userspace interface as leap-swapd's ublk frontend uses
 * it (include/uapi/linux/ublk_cmd.h, drivers/block/ublk_drv.c of 6.12):
 * the parameters the device is added with, the place of each queue's I/O
 * descriptor array in the char device's mmap space, and the validation of
 * one descriptor before anything is touched.
 *
 * The build host's header (Debian bookworm's linux-libc-dev, 6.1) has the
 * structures but not the ioctl-encoded opcodes, which 6.12 prefers: they
 * are defined here as the 6.12 UAPI defines them.  The driver matches the
 * control and I/O opcodes by _IOC_NR and accepts type 'u' (and type 0 only
 * with CONFIG_BLKDEV_UBLK_LEGACY_OPCODES; ublk_check_cmd_op).
 *
 * Pure code, no I/O: unit-tested in tests/unit/test_ublk_proto.c.
 */
#ifndef LEAP_SWAPD_UBLK_PROTO_H
#define LEAP_SWAPD_UBLK_PROTO_H

#include <linux/ioctl.h>
#include <linux/ublk_cmd.h>
#include <stdint.h>

#ifndef UBLK_U_CMD_ADD_DEV
#define UBLK_U_CMD_GET_DEV_INFO _IOR('u', UBLK_CMD_GET_DEV_INFO, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_ADD_DEV	_IOWR('u', UBLK_CMD_ADD_DEV, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_DEL_DEV	_IOWR('u', UBLK_CMD_DEL_DEV, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_START_DEV	_IOWR('u', UBLK_CMD_START_DEV, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_STOP_DEV	_IOWR('u', UBLK_CMD_STOP_DEV, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_SET_PARAMS	_IOWR('u', UBLK_CMD_SET_PARAMS, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_GET_PARAMS	_IOR('u', UBLK_CMD_GET_PARAMS, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_START_USER_RECOVERY                                                   \
	_IOWR('u', UBLK_CMD_START_USER_RECOVERY, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_END_USER_RECOVERY                                                     \
	_IOWR('u', UBLK_CMD_END_USER_RECOVERY, struct ublksrv_ctrl_cmd)
#define UBLK_U_IO_FETCH_REQ _IOWR('u', UBLK_IO_FETCH_REQ, struct ublksrv_io_cmd)
#define UBLK_U_IO_COMMIT_AND_FETCH_REQ                                                   \
	_IOWR('u', UBLK_IO_COMMIT_AND_FETCH_REQ, struct ublksrv_io_cmd)
#endif

/* Added in 6.3 (the driver sets it on every device it adds since then). */
#ifndef UBLK_F_CMD_IOCTL_ENCODE
#define UBLK_F_CMD_IOCTL_ENCODE (1UL << 6)
#endif

/* ublk_ctrl_add_dev: nr_hw_queues is at most UBLK_MAX_NR_QUEUES (4096 in
 * 6.12's UAPI) and is cut to nr_cpu_ids; queue_depth at most
 * UBLK_MAX_QUEUE_DEPTH. */
#define UBLKP_MAX_QUEUES 4096

/* Everything the device is added with (ADD_DEV) and configured with
 * (SET_PARAMS). */
struct ublkp_config {
	uint64_t size;	      /* bytes, a multiple of block */
	uint32_t block;	      /* logical block: 512 or 4096 */
	uint16_t queues;      /* 1..UBLKP_MAX_QUEUES */
	uint16_t depth;	      /* 1..UBLK_MAX_QUEUE_DEPTH */
	uint32_t max_io;      /* bytes per request buffer, a page multiple */
	uint32_t discard_max; /* bytes per discard; 0: no discard */
	int recovery;	      /* UBLK_F_USER_RECOVERY | _REISSUE */
};

/* 0, or -1 with the reason (a static string) in *why. */
int ublkp_config_check(const struct ublkp_config *c, const char **why);
/* The ADD_DEV payload: dev_id U32_MAX lets the driver pick the number. */
void ublkp_dev_info(const struct ublkp_config *c, struct ublksrv_ctrl_dev_info *info);
/* The SET_PARAMS payload: basic (size, block, max request) and discard. */
void ublkp_params(const struct ublkp_config *c, struct ublk_params *p);

/*
 * Queue q's I/O descriptor array in the char device: offset and length to
 * mmap (read-only).  ublk_ch_mmap: queue q sits at UBLKSRV_CMD_BUF_OFFSET +
 * q * round_up(UBLK_MAX_QUEUE_DEPTH * sizeof(desc), PAGE_SIZE), and the
 * length must be round_up(depth * sizeof(desc), PAGE_SIZE) exactly.
 */
uint64_t ublkp_desc_offset(uint16_t q, uint32_t page_size);
uint64_t ublkp_desc_length(uint16_t depth, uint32_t page_size);

/* What a queue does with a descriptor that passed ublkp_check. */
enum ublkp_action {
	UBLKP_DO_READ,
	UBLKP_DO_WRITE,
	UBLKP_DO_FLUSH,
	UBLKP_DO_DISCARD,
	UBLKP_DO_REJECT, /* complete with -*err, touch nothing */
};

/*
 * Validates one descriptor against a device of dev_size bytes, logical
 * blocks of block bytes and request buffers of max_io bytes: READ/WRITE
 * need 1..max_io bytes, DISCARD any non-zero length; start and length
 * block multiples, the range within the device.  FLUSH carries no range.
 * Other operations (WRITE_ZEROES, WRITE_SAME, zoned ones) are refused with
 * EOPNOTSUPP: the device does not advertise them.  *off and *len are the
 * byte range; on UBLKP_DO_REJECT, *err is the errno.
 */
enum ublkp_action ublkp_check(const struct ublksrv_io_desc *d, uint64_t dev_size,
			      uint32_t block, uint32_t max_io, uint64_t *off,
			      uint32_t *len, int *err);

/* The result COMMIT_AND_FETCH_REQ reports: bytes done for READ/WRITE
 * (__ublk_complete_rq fails a READ that reports 0), 0 for FLUSH/DISCARD,
 * -errno on failure. */
int32_t ublkp_result(enum ublkp_action a, uint32_t len, int rc);

#endif /* LEAP_SWAPD_UBLK_PROTO_H */
