// SPDX-License-Identifier: MIT
/* leap-swapd's ublk frontend: parameters, mmap layout and descriptor
 * validation (ublk_proto.h). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "ublk_proto.h"

#define DEV   (64ULL << 20) /* 64 MiB device */
#define MAXIO (128U << 10)

static const struct ublkp_config good = {
	.size = DEV,
	.block = 4096,
	.queues = 4,
	.depth = 64,
	.max_io = MAXIO,
	.discard_max = 64U << 20,
	.recovery = 1,
};

static void test_config_check(void **state)
{
	struct ublkp_config c = good;
	const char *why = NULL;

	(void)state;
	assert_int_equal(ublkp_config_check(&c, &why), 0);
	c.block = 512;
	assert_int_equal(ublkp_config_check(&c, &why), 0);
	c.block = 1024;
	assert_int_equal(ublkp_config_check(&c, &why), -1);
	assert_non_null(why);
	c = good;
	c.size = DEV + 512; /* not a page multiple */
	assert_int_equal(ublkp_config_check(&c, &why), -1);
	c = good;
	c.depth = 0;
	assert_int_equal(ublkp_config_check(&c, &why), -1);
	c.depth = UBLK_MAX_QUEUE_DEPTH + 1;
	assert_int_equal(ublkp_config_check(&c, &why), -1);
	c = good;
	c.queues = 0;
	assert_int_equal(ublkp_config_check(&c, &why), -1);
	c = good;
	c.max_io = 4096 + 512;
	assert_int_equal(ublkp_config_check(&c, &why), -1);
	c = good;
	c.discard_max = 100;
	assert_int_equal(ublkp_config_check(&c, &why), -1);
}

static void test_dev_info(void **state)
{
	struct ublkp_config c = good;
	struct ublksrv_ctrl_dev_info info;

	(void)state;
	ublkp_dev_info(&c, &info);
	assert_int_equal(info.nr_hw_queues, 4);
	assert_int_equal(info.queue_depth, 64);
	assert_int_equal(info.max_io_buf_bytes, MAXIO);
	assert_int_equal(info.dev_id, UINT32_MAX);
	assert_true(info.flags & UBLK_F_USER_RECOVERY);
	assert_true(info.flags & UBLK_F_USER_RECOVERY_REISSUE);
	/* The driver copies the data: no get-data round trip, no user copy. */
	assert_false(info.flags & UBLK_F_NEED_GET_DATA);
	assert_false(info.flags & (1ULL << 7)); /* UBLK_F_USER_COPY */
	c.recovery = 0;
	ublkp_dev_info(&c, &info);
	assert_false(info.flags & (UBLK_F_USER_RECOVERY | UBLK_F_USER_RECOVERY_REISSUE));
}

static void test_params(void **state)
{
	struct ublkp_config c = good;
	struct ublk_params p;

	(void)state;
	ublkp_params(&c, &p);
	assert_int_equal(p.len, sizeof(p));
	assert_int_equal(p.types, UBLK_PARAM_TYPE_BASIC | UBLK_PARAM_TYPE_DISCARD);
	assert_int_equal(p.basic.logical_bs_shift, 12);
	assert_int_equal(p.basic.physical_bs_shift, 12);
	assert_int_equal(p.basic.dev_sectors, DEV >> 9);
	assert_int_equal(p.basic.max_sectors, MAXIO >> 9);
	assert_int_equal(p.basic.attrs, 0); /* no volatile cache: no FLUSH */
	assert_int_equal(p.discard.discard_granularity, 4096);
	assert_int_equal(p.discard.max_discard_segments, 1);
	assert_int_equal(p.discard.max_discard_sectors, (64U << 20) >> 9);
	c.block = 512;
	c.discard_max = 0;
	ublkp_params(&c, &p);
	assert_int_equal(p.basic.logical_bs_shift, 9);
	/* ublk_validate_params: logical <= physical */
	assert_true(p.basic.logical_bs_shift <= p.basic.physical_bs_shift);
	assert_int_equal(p.types, UBLK_PARAM_TYPE_BASIC);
}

static void test_desc_layout(void **state)
{
	(void)state;
	/* 4096 descriptors of 24 bytes = 96 KiB per queue slot. */
	assert_int_equal(sizeof(struct ublksrv_io_desc), 24);
	assert_int_equal(ublkp_desc_offset(0, 4096), 0);
	assert_int_equal(ublkp_desc_offset(1, 4096), 98304);
	assert_int_equal(ublkp_desc_offset(3, 4096), 3 * 98304);
	assert_int_equal(ublkp_desc_length(64, 4096), 4096);  /* 1536 bytes, one page */
	assert_int_equal(ublkp_desc_length(171, 4096), 8192); /* 4104 bytes */
	assert_int_equal(ublkp_desc_length(170, 4096), 4096); /* 4080 bytes */
	assert_int_equal(ublkp_desc_length(64, 65536), 65536);
	assert_int_equal(ublkp_desc_offset(1, 65536), 131072);
}

static struct ublksrv_io_desc desc(uint8_t op, uint32_t flags, uint64_t sector,
				   uint32_t sectors)
{
	struct ublksrv_io_desc d = {
		.op_flags = op | (flags << 8),
		.nr_sectors = sectors,
		.start_sector = sector,
	};
	return d;
}

static int check(struct ublksrv_io_desc d, uint32_t block, uint64_t *off, uint32_t *len,
		 int *err)
{
	return (int)ublkp_check(&d, DEV, block, MAXIO, off, len, err);
}

static void test_check_ok(void **state)
{
	uint64_t off;
	uint32_t len;
	int err;

	(void)state;
	assert_int_equal(check(desc(UBLK_IO_OP_READ, 0, 8, 8), 4096, &off, &len, &err),
			 UBLKP_DO_READ);
	assert_int_equal(off, 4096);
	assert_int_equal(len, 4096);
	/* Swap writes carry UBLK_IO_F_SWAP (REQ_SWAP): a flag, not refused. */
	assert_int_equal(check(desc(UBLK_IO_OP_WRITE, UBLK_IO_F_SWAP >> 8, 0, MAXIO >> 9),
			       4096, &off, &len, &err),
			 UBLKP_DO_WRITE);
	assert_int_equal(len, MAXIO);
	/* The last page of the device. */
	assert_int_equal(check(desc(UBLK_IO_OP_READ, 0, (DEV >> 9) - 8, 8), 4096, &off,
			       &len, &err),
			 UBLKP_DO_READ);
	assert_int_equal(off, DEV - 4096);
	/* A discard may exceed the request buffer. */
	assert_int_equal(check(desc(UBLK_IO_OP_DISCARD, 0, 0, (8U << 20) >> 9), 4096,
			       &off, &len, &err),
			 UBLKP_DO_DISCARD);
	assert_int_equal(len, 8U << 20);
	assert_int_equal(check(desc(UBLK_IO_OP_FLUSH, 0, 0, 0), 4096, &off, &len, &err),
			 UBLKP_DO_FLUSH);
	/* 512-byte blocks: one sector is a valid request. */
	assert_int_equal(check(desc(UBLK_IO_OP_READ, 0, 3, 1), 512, &off, &len, &err),
			 UBLKP_DO_READ);
	assert_int_equal(off, 1536);
	assert_int_equal(len, 512);
}

static void test_check_reject(void **state)
{
	uint64_t off;
	uint32_t len;
	int err;

	(void)state;
	/* Not a block multiple with 4 KiB blocks. */
	assert_int_equal(check(desc(UBLK_IO_OP_READ, 0, 1, 8), 4096, &off, &len, &err),
			 UBLKP_DO_REJECT);
	assert_int_equal(err, EINVAL);
	assert_int_equal(check(desc(UBLK_IO_OP_WRITE, 0, 0, 1), 4096, &off, &len, &err),
			 UBLKP_DO_REJECT);
	/* Empty. */
	assert_int_equal(check(desc(UBLK_IO_OP_READ, 0, 0, 0), 4096, &off, &len, &err),
			 UBLKP_DO_REJECT);
	/* Past the end, and straddling it. */
	assert_int_equal(
		check(desc(UBLK_IO_OP_READ, 0, DEV >> 9, 8), 4096, &off, &len, &err),
		UBLKP_DO_REJECT);
	assert_int_equal(err, ENOSPC);
	assert_int_equal(check(desc(UBLK_IO_OP_WRITE, 0, (DEV >> 9) - 8, 16), 4096, &off,
			       &len, &err),
			 UBLKP_DO_REJECT);
	assert_int_equal(check(desc(UBLK_IO_OP_DISCARD, 0, (DEV >> 9) - 8, 16), 4096,
			       &off, &len, &err),
			 UBLKP_DO_REJECT);
	/* A start sector whose byte offset overflows 64 bits. */
	assert_int_equal(check(desc(UBLK_IO_OP_READ, 0, UINT64_MAX - 7, 8), 4096, &off,
			       &len, &err),
			 UBLKP_DO_REJECT);
	/* Larger than the tag's buffer. */
	assert_int_equal(check(desc(UBLK_IO_OP_READ, 0, 0, (MAXIO >> 9) + 8), 4096, &off,
			       &len, &err),
			 UBLKP_DO_REJECT);
	assert_int_equal(err, EINVAL);
	/* Operations the device does not advertise. */
	assert_int_equal(
		check(desc(UBLK_IO_OP_WRITE_ZEROES, 0, 0, 8), 4096, &off, &len, &err),
		UBLKP_DO_REJECT);
	assert_int_equal(err, EOPNOTSUPP);
	assert_int_equal(
		check(desc(UBLK_IO_OP_WRITE_SAME, 0, 0, 8), 4096, &off, &len, &err),
		UBLKP_DO_REJECT);
	assert_int_equal(check(desc(10, 0, 0, 8), 4096, &off, &len, &err),
			 UBLKP_DO_REJECT);
	assert_int_equal(off, 0);
	assert_int_equal(len, 0);
}

static void test_result(void **state)
{
	(void)state;
	assert_int_equal(ublkp_result(UBLKP_DO_READ, 8192, 0), 8192);
	assert_int_equal(ublkp_result(UBLKP_DO_WRITE, 4096, 0), 4096);
	assert_int_equal(ublkp_result(UBLKP_DO_READ, 8192, -EIO), -EIO);
	assert_int_equal(ublkp_result(UBLKP_DO_DISCARD, 1 << 20, 0), 0);
	assert_int_equal(ublkp_result(UBLKP_DO_FLUSH, 0, 0), 0);
	assert_int_equal(ublkp_result(UBLKP_DO_REJECT, 0, -EOPNOTSUPP), -EOPNOTSUPP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_check), cmocka_unit_test(test_dev_info),
		cmocka_unit_test(test_params),	     cmocka_unit_test(test_desc_layout),
		cmocka_unit_test(test_check_ok),     cmocka_unit_test(test_check_reject),
		cmocka_unit_test(test_result),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
