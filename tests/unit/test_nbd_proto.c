// SPDX-License-Identifier: MIT
/* leap-swapd's NBD frontend: request decoding and validation (nbd_proto.h). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "nbd_proto.h"

#define DEV   (64ULL << 20) /* 64 MiB device */
#define BLK   4096U
#define MAXIO (1U << 20)

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (24 - 8 * i));
}

static void req(uint8_t *b, uint32_t magic, uint32_t type_and_flags, uint64_t off,
		uint32_t len)
{
	put32(b, magic);
	put32(b + 4, type_and_flags);
	memcpy(b + 8, "HANDLE!!", 8);
	put32(b + 16, (uint32_t)(off >> 32));
	put32(b + 20, (uint32_t)off);
	put32(b + 24, len);
}

/* Decodes and checks one request; the action, *err set. */
static int check(uint32_t type_and_flags, uint64_t off, uint32_t len, uint32_t *err)
{
	uint8_t b[NBDP_REQ_SIZE];
	struct nbdp_req r;

	req(b, NBDP_REQUEST_MAGIC, type_and_flags, off, len);
	assert_int_equal(nbdp_decode(b, &r), 0);
	return (int)nbdp_check(&r, DEV, BLK, MAXIO, err);
}

static void test_decode(void **state)
{
	uint8_t b[NBDP_REQ_SIZE], rep[NBDP_REP_SIZE];
	struct nbdp_req r;
	(void)state;

	req(b, NBDP_REQUEST_MAGIC, 1U << 16 | NBDP_WRITE, 0x123456789000ULL, 8192);
	assert_int_equal(nbdp_decode(b, &r), 0);
	assert_int_equal(r.type, NBDP_WRITE);
	assert_int_equal(r.flags, NBDP_FLAG_FUA);
	assert_true(r.offset == 0x123456789000ULL);
	assert_int_equal(r.length, 8192);
	assert_memory_equal(r.handle, "HANDLE!!", 8);
	assert_int_equal(nbdp_payload(&r), 8192);
	req(b, NBDP_REPLY_MAGIC, NBDP_READ, 0, 4096); /* a reply is not a request */
	assert_int_equal(nbdp_decode(b, &r), -1);
	nbdp_encode_reply(rep, EIO, (const uint8_t *)"HANDLE!!");
	assert_memory_equal(rep, "\x67\x44\x66\x98\0\0\0\x05HANDLE!!", NBDP_REP_SIZE);
}

static void test_valid(void **state)
{
	uint32_t err;
	(void)state;

	assert_int_equal(check(NBDP_READ, 0, 4096, &err), NBDP_DO_READ);
	assert_int_equal(err, 0);
	assert_int_equal(check(NBDP_WRITE, DEV - MAXIO, MAXIO, &err), NBDP_DO_WRITE);
	assert_int_equal(check(NBDP_FLAG_FUA << 16 | NBDP_WRITE, 4096, 4096, &err),
			 NBDP_DO_WRITE);
	/* A discard is not bounded by the I/O buffer: it carries no data. */
	assert_int_equal(check(NBDP_TRIM, 0, (uint32_t)(DEV - 4096), &err), NBDP_DO_TRIM);
	assert_int_equal(check(NBDP_FLUSH, 0, 0, &err), NBDP_DO_FLUSH);
	assert_int_equal(check(NBDP_DISC, 0, 0, &err), NBDP_DO_DISCONNECT);
}

static void test_refused(void **state)
{
	uint32_t err;
	(void)state;

	/* Unknown commands (WRITE_ZEROES, BLOCK_STATUS, garbage) and flags. */
	assert_int_equal(check(6, 0, 4096, &err), NBDP_DO_REJECT);
	assert_int_equal(err, EINVAL);
	assert_int_equal(check(7, 0, 4096, &err), NBDP_DO_REJECT);
	assert_int_equal(check(0xffff, 0, 4096, &err), NBDP_DO_REJECT);
	assert_int_equal(check(NBDP_FLAG_FUA << 16 | NBDP_READ, 0, 4096, &err),
			 NBDP_DO_REJECT);
	assert_int_equal(check(0x8000U << 16 | NBDP_WRITE, 0, 4096, &err),
			 NBDP_DO_REJECT);
	assert_int_equal(check(2U << 16 | NBDP_FLUSH, 0, 0, &err), NBDP_DO_REJECT);
	/* Lengths and alignment. */
	assert_int_equal(check(NBDP_READ, 0, 0, &err), NBDP_DO_REJECT);
	assert_int_equal(check(NBDP_WRITE, 512, 4096, &err), NBDP_DO_REJECT);
	assert_int_equal(check(NBDP_READ, 0, 4095, &err), NBDP_DO_REJECT);
	assert_int_equal(check(NBDP_TRIM, 4096, 100, &err), NBDP_DO_REJECT);
	assert_int_equal(err, EINVAL);
	/* Range, including offsets whose sum with the length would wrap. */
	assert_int_equal(check(NBDP_READ, DEV, 4096, &err), NBDP_DO_REJECT);
	assert_int_equal(check(NBDP_WRITE, DEV - 4096, 8192, &err), NBDP_DO_REJECT);
	assert_int_equal(err, ENOSPC);
	assert_int_equal(check(NBDP_READ, UINT64_MAX - 4095, 8192, &err), NBDP_DO_REJECT);
	assert_int_equal(check(NBDP_TRIM, DEV + 4096, 4096, &err), NBDP_DO_REJECT);
	/* Bigger than a worker's buffer. */
	assert_int_equal(check(NBDP_READ, 0, MAXIO + 4096, &err), NBDP_DO_REJECT);
	assert_int_equal(err, EOVERFLOW);
}

static void test_payload(void **state)
{
	struct nbdp_req r = {.type = NBDP_READ, .length = 4096};
	(void)state;

	/* Only a WRITE carries data, refused or not. */
	assert_int_equal(nbdp_payload(&r), 0);
	r.type = NBDP_TRIM;
	assert_int_equal(nbdp_payload(&r), 0);
	r.type = NBDP_WRITE;
	r.offset = 3; /* refused, yet its data is on the stream */
	assert_int_equal(nbdp_payload(&r), 4096);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_payload),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
