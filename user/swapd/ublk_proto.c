// SPDX-License-Identifier: MIT
/*
 * The ublk frontend's pure part (ublk_proto.h): device parameters, the
 * descriptor mmap layout and descriptor validation.  Facts from 6.12's
 * drivers/block/ublk_drv.c, cited where used.
 */
#include <errno.h>
#include <string.h>

#include "ublk_proto.h"

static int is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static uint8_t shift_of(uint32_t v)
{
	uint8_t s = 0;

	while ((1U << s) < v)
		s++;
	return s;
}

int ublkp_config_check(const struct ublkp_config *c, const char **why)
{
	/* ublk_validate_params: 9 <= logical_bs_shift <= PAGE_SHIFT. */
	if (c->block != 512 && c->block != 4096)
		return *why = "the logical block is 512 or 4096", -1;
	if (!c->size || c->size % c->block || c->size % 4096)
		return *why = "the size must be a non-zero multiple of 4096", -1;
	if (!c->queues || c->queues > UBLKP_MAX_QUEUES)
		return *why = "queues must be 1..4096", -1;
	if (!c->depth || c->depth > UBLK_MAX_QUEUE_DEPTH)
		return *why = "the queue depth must be 1..4096", -1;
	/* ublk_align_max_io_size rounds max_io_buf_bytes down to a page; the
	 * request size (max_sectors) may not exceed it. */
	if (c->max_io < 4096 || c->max_io % 4096 || c->max_io > (1U << 30))
		return *why = "the request buffer must be a page multiple, 4K..1G", -1;
	if (c->discard_max && (c->discard_max % 4096 || c->discard_max < 4096))
		return *why = "the discard limit must be a page multiple", -1;
	return 0;
}

void ublkp_dev_info(const struct ublkp_config *c, struct ublksrv_ctrl_dev_info *info)
{
	memset(info, 0, sizeof(*info));
	info->nr_hw_queues = c->queues;
	info->queue_depth = c->depth;
	info->max_io_buf_bytes = c->max_io;
	info->dev_id = UINT32_MAX; /* ublk_alloc_dev_number: any free number */
	/* No NEED_GET_DATA, no USER_COPY: the driver copies a WRITE's data into
	 * the tag's buffer before completing the fetch and a READ's out of it
	 * at commit (ublk_map_io / ublk_unmap_io). */
	info->flags = UBLK_F_CMD_IOCTL_ENCODE;
	/* USER_RECOVERY: when the server dies the disk stays and new I/O waits
	 * (ublk_nosrv_dev_should_queue_io); REISSUE: requests the dead server
	 * held are requeued rather than failed (ublk_do_fail_rq).  Without
	 * REISSUE a swap-in it held would fail with EIO. */
	if (c->recovery)
		info->flags |= UBLK_F_USER_RECOVERY | UBLK_F_USER_RECOVERY_REISSUE;
}

void ublkp_params(const struct ublkp_config *c, struct ublk_params *p)
{
	memset(p, 0, sizeof(*p));
	p->len = sizeof(*p);
	p->types = UBLK_PARAM_TYPE_BASIC;
	p->basic.logical_bs_shift = shift_of(c->block);
	/* Physical 4K either way: the servers store pages. */
	p->basic.physical_bs_shift = 12;
	p->basic.io_min_shift = 12;
	p->basic.io_opt_shift = 12;
	p->basic.max_sectors = c->max_io >> 9;
	p->basic.dev_sectors = c->size >> 9;
	/* No UBLK_ATTR_VOLATILE_CACHE: a write is on the servers when it
	 * completes, so the block layer sends no FLUSH (ublk_ctrl_start_dev). */
	if (c->discard_max) {
		p->types |= UBLK_PARAM_TYPE_DISCARD;
		/* ublk_validate_params: one segment, a non-zero granularity. */
		p->discard.discard_granularity = 4096;
		p->discard.max_discard_sectors = c->discard_max >> 9;
		p->discard.max_discard_segments = 1;
	}
}

uint64_t ublkp_desc_offset(uint16_t q, uint32_t page_size)
{
	uint64_t per = (uint64_t)UBLK_MAX_QUEUE_DEPTH * sizeof(struct ublksrv_io_desc);

	per = (per + page_size - 1) / page_size * page_size;
	return UBLKSRV_CMD_BUF_OFFSET + (uint64_t)q * per;
}

uint64_t ublkp_desc_length(uint16_t depth, uint32_t page_size)
{
	uint64_t len = (uint64_t)depth * sizeof(struct ublksrv_io_desc);

	return (len + page_size - 1) / page_size * page_size;
}

enum ublkp_action ublkp_check(const struct ublksrv_io_desc *d, uint64_t dev_size,
			      uint32_t block, uint32_t max_io, uint64_t *off,
			      uint32_t *len, int *err)
{
	uint8_t op = (uint8_t)(d->op_flags & 0xff);
	uint64_t bytes = (uint64_t)d->nr_sectors << 9;
	uint64_t start;
	enum ublkp_action a;

	*off = 0;
	*len = 0;
	*err = 0;
	switch (op) {
	case UBLK_IO_OP_READ:
		a = UBLKP_DO_READ;
		break;
	case UBLK_IO_OP_WRITE:
		a = UBLKP_DO_WRITE;
		break;
	case UBLK_IO_OP_FLUSH:
		return UBLKP_DO_FLUSH;
	case UBLK_IO_OP_DISCARD:
		a = UBLKP_DO_DISCARD;
		break;
	default:
		*err = EOPNOTSUPP;
		return UBLKP_DO_REJECT;
	}
	/* start_sector is in 512-byte units whatever the logical block. */
	if (d->start_sector > (UINT64_MAX >> 9)) {
		*err = EINVAL;
		return UBLKP_DO_REJECT;
	}
	start = d->start_sector << 9;
	if (!bytes || !is_pow2(block) || start % block || bytes % block) {
		*err = EINVAL;
		return UBLKP_DO_REJECT;
	}
	if (start > dev_size || bytes > dev_size - start) {
		*err = ENOSPC;
		return UBLKP_DO_REJECT;
	}
	if (a != UBLKP_DO_DISCARD && bytes > max_io) {
		*err = EINVAL;
		return UBLKP_DO_REJECT;
	}
	/* nr_sectors is 32 bits, so a discard could reach 2 TiB: the layer
	 * below takes a size_t but the result is an int32 (bytes). */
	if (bytes > INT32_MAX) {
		*err = EINVAL;
		return UBLKP_DO_REJECT;
	}
	*off = start;
	*len = (uint32_t)bytes;
	return a;
}

int32_t ublkp_result(enum ublkp_action a, uint32_t len, int rc)
{
	if (rc)
		return rc < 0 ? rc : -rc;
	if (a == UBLKP_DO_READ || a == UBLKP_DO_WRITE)
		return (int32_t)len;
	return 0;
}
