// SPDX-License-Identifier: MIT
/*
 * The RDMA transport's pure parts: the MAP message that hands out remote
 * addresses (round trips and every refusal, above all a reply that would
 * aim an RDMA operation outside the exported region), the registration
 * interface (pluggable ops, counters), the transport table, and the clear
 * refusal on a machine without an RDMA device.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <infiniband/verbs.h>

#include "leap/wire.h"
#include "rdma_mr.h"
#include "transport.h"

static uint8_t buf[LEAP_WIRE_MAX_MSG];

static void put32_at(size_t at, uint32_t v)
{
	memcpy(buf + at, &v, 4); /* little-endian test hosts */
}

static void put64_at(size_t at, uint64_t v)
{
	memcpy(buf + at, &v, 8);
}

#define P(i) ((uint64_t)(i)*LEAP_WIRE_PAGE_SIZE)
#define REQ  LEAP_WIRE_HDR_SIZE /* payload offsets */

static long map_req(uint32_t count, uint32_t flags)
{
	uint64_t off[LEAP_WIRE_MAX_BATCH + 1];

	for (uint32_t i = 0; i < count && i <= LEAP_WIRE_MAX_BATCH; i++)
		off[i] = P(i * 5);
	return leap_wire_enc_map_req(buf, sizeof(buf), 42, 7, count, flags, off);
}

static void test_map_req(void **state)
{
	struct leap_wire_msg m;
	uint64_t bad[1] = {4095};
	long n;
	(void)state;

	n = map_req(LEAP_WIRE_MAX_BATCH, LEAP_WMAP_ALLOC);
	assert_int_equal(n, LEAP_WIRE_HDR_SIZE + LEAP_WIRE_MAP_REQ_HDR + 8 * 64);
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), 0);
	assert_int_equal(m.hdr.opcode, LEAP_WOP_MAP);
	assert_int_equal(m.u.map.dev, 7);
	assert_int_equal(m.u.map.count, 64);
	assert_int_equal(m.u.map.flags, LEAP_WMAP_ALLOC);
	assert_int_equal(m.u.map.offset[63], P(63 * 5));
	assert_string_equal(leap_wire_op_name(LEAP_WOP_MAP), "MAP");

	/* Encoder refusals. */
	assert_true(map_req(0, 0) < 0);
	assert_true(map_req(65, 0) < 0);
	assert_true(map_req(1, 2) < 0);
	assert_true(leap_wire_enc_map_req(buf, sizeof(buf), 1, 1, 1, 0, bad) < 0);
	assert_true(leap_wire_enc_map_req(buf, 30, 1, 1, 1, 0, bad) < 0);

	/* Decoder refusals, one field at a time. */
	n = map_req(2, 0);
	put32_at(REQ + 4, 0);
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_BATCH);
	n = map_req(2, 0);
	put32_at(REQ + 4, 65);
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_BATCH);
	n = map_req(2, 0);
	put32_at(REQ + 4, 3); /* count disagrees with the length */
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_LENGTH);
	n = map_req(2, 0);
	put32_at(REQ + 8, 0x80); /* unknown flag */
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_OP);
	n = map_req(2, 0);
	put32_at(REQ + 12, 1); /* reserved */
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_OP);
	n = map_req(2, 0);
	put64_at(REQ + LEAP_WIRE_MAP_REQ_HDR + 8, P(1) + 8); /* unaligned */
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_OFFSET);
	n = map_req(2, 0);
	put64_at(REQ + LEAP_WIRE_MAP_REQ_HDR, LEAP_WIRE_MAX_OFFSET); /* beyond 2^48 */
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_OFFSET);
	n = map_req(2, 0);
	assert_int_equal(leap_wire_decode(buf, (size_t)n - 8, &m), -LEAP_WERR_SHORT);
}

/* A reply for count pages: page i at index 10 + i of a 1000-page region,
 * even pages present. */
static long map_rep(uint32_t count)
{
	uint32_t idx[LEAP_WIRE_MAX_BATCH];
	uint64_t present = 0;

	for (uint32_t i = 0; i < count; i++) {
		idx[i] = 10 + i;
		if (i % 2 == 0)
			present |= 1ULL << i;
	}
	return leap_wire_enc_map_rep(buf, sizeof(buf), 42, 7, count, present, 0xabcd, 0,
				     0x7f0000000000ULL, P(1000), idx);
}

#define REP_IDX (LEAP_WIRE_HDR_SIZE + LEAP_WIRE_MAP_REP_HDR)

static void test_map_rep(void **state)
{
	struct leap_wire_msg m;
	uint32_t idx[2] = {999, 1000};
	long n;
	(void)state;

	n = map_rep(LEAP_WIRE_MAX_BATCH);
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), 0);
	assert_true(m.hdr.flags & LEAP_WF_REPLY);
	assert_int_equal(m.u.map.count, 64);
	assert_int_equal(m.u.map.rkey, 0xabcd);
	assert_int_equal(m.u.map.base, 0x7f0000000000ULL);
	assert_int_equal(m.u.map.len, P(1000));
	assert_int_equal(m.u.map.present, 0x5555555555555555ULL);
	assert_int_equal(m.u.map.idx[62], 72);
	assert_int_equal(m.u.map.idx[63], 0); /* absent: encoded as 0 */

	/* The last page of the region is fine, one past it is not. */
	n = leap_wire_enc_map_rep(buf, sizeof(buf), 1, 7, 1, 1, 1, 0, 0, P(1000),
				  &idx[0]);
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), 0);
	n = leap_wire_enc_map_rep(buf, sizeof(buf), 1, 7, 1, 1, 1, 0, 0, P(1000),
				  &idx[1]);
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_RANGE);
	/* present bits beyond count are refused by the encoder too */
	assert_true(leap_wire_enc_map_rep(buf, sizeof(buf), 1, 7, 1, 2, 1, 0, 0, P(1),
					  idx) < 0);
}

/* A hostile or broken server: every way to point outside the region. */
static void test_map_rep_hostile(void **state)
{
	struct leap_wire_msg m;
	long n;
	(void)state;

	n = map_rep(4);
	put32_at(REP_IDX, 1000); /* page index == region pages */
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_RANGE);
	n = map_rep(4);
	put32_at(REP_IDX, 0xffffffff);
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_RANGE);
	n = map_rep(4);
	put32_at(REP_IDX + 4, 5); /* an absent page with an index */
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_RANGE);
	n = map_rep(4);
	put64_at(REQ + 24, 0x7f0000000008ULL); /* unaligned base */
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_RANGE);
	n = map_rep(4);
	put64_at(REQ + 32, P(1000) + 1); /* unaligned length */
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_RANGE);
	n = map_rep(4);
	put64_at(REQ + 32, 0); /* empty region */
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_RANGE);
	n = map_rep(4);
	put64_at(REQ + 24, 0xfffffffffffff000ULL); /* base + len wraps */
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_RANGE);
	n = map_rep(4);
	put64_at(REQ + 8, 1ULL << 4); /* a present bit beyond count */
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_LENGTH);
	n = map_rep(4);
	put32_at(REQ + 20, 2); /* an unknown flag */
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_OP);
	n = map_rep(4);
	put32_at(REQ + 20, LEAP_WMAP_REP_FH); /* Firehose: allowed */
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), 0);
	assert_int_equal(m.u.map.flags, LEAP_WMAP_REP_FH);
	n = map_rep(4);
	put32_at(REQ + 4, 5); /* count disagrees with the length */
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_LENGTH);
	n = map_rep(4);
	put32_at(REQ + 4, 0);
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_BATCH);
	/* A MAP request header with the reply flag is a malformed reply. */
	n = map_req(4, 0);
	buf[7] = LEAP_WF_REPLY;
	assert_int_not_equal(leap_wire_decode(buf, (size_t)n, &m), 0);
}

/* ---- FH_MOVE (Firehose) ---------------------------------------------------- */

static void test_fh_req(void **state)
{
	uint32_t un[LEAP_WIRE_FH_MAX + 1] = {3, 4}, pin[LEAP_WIRE_FH_MAX + 1] = {9};
	struct leap_wire_msg m;
	long n;
	(void)state;

	n = leap_wire_enc_fh_req(buf, sizeof(buf), 5, 2, un, 1, pin);
	assert_int_equal(n, LEAP_WIRE_HDR_SIZE + LEAP_WIRE_FH_REQ_HDR + 12);
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), 0);
	assert_int_equal(m.hdr.opcode, LEAP_WOP_FH_MOVE);
	assert_int_equal(m.u.fh.nunpin, 2);
	assert_int_equal(m.u.fh.npin, 1);
	assert_int_equal(m.u.fh.unpin[1], 4);
	assert_int_equal(m.u.fh.pin[0], 9);
	assert_string_equal(leap_wire_op_name(LEAP_WOP_FH_MOVE), "FH_MOVE");
	/* Empty lists: the geometry query. */
	n = leap_wire_enc_fh_req(buf, sizeof(buf), 5, 0, NULL, 0, NULL);
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), 0);
	/* Lists over LEAP_WIRE_FH_MAX: neither encoded nor decoded. */
	assert_true(leap_wire_enc_fh_req(buf, sizeof(buf), 5, LEAP_WIRE_FH_MAX + 1, un, 0,
					 pin) < 0);
	n = leap_wire_enc_fh_req(buf, sizeof(buf), 5, 2, un, 1, pin);
	put32_at(REQ, LEAP_WIRE_FH_MAX + 1);
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_BATCH);
	n = leap_wire_enc_fh_req(buf, sizeof(buf), 5, 2, un, 1, pin);
	put32_at(REQ + 4, 2); /* npin disagrees with the length */
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_LENGTH);
	n = leap_wire_enc_fh_req(buf, sizeof(buf), 5, 2, un, 1, pin);
	assert_int_equal(leap_wire_decode(buf, (size_t)n - 4, &m), -LEAP_WERR_SHORT);
}

#define FH_BASE 0x7f0000000000ULL
#define FH_RS	(64 * 1024ULL)

static long fh_rep(uint32_t npin)
{
	uint32_t rkey[LEAP_WIRE_FH_MAX];

	for (uint32_t i = 0; i < LEAP_WIRE_FH_MAX; i++)
		rkey[i] = 0x100 + i;
	return leap_wire_enc_fh_rep(buf, sizeof(buf), 6, 0, LEAP_WFH_UNPINNED, 4, FH_BASE,
				    64 * FH_RS, FH_RS, npin, rkey);
}

/* A hostile server's geometry could aim the client's RDMA anywhere. */
static void test_fh_rep_hostile(void **state)
{
	struct leap_wire_msg m;
	long n;
	(void)state;

	n = fh_rep(3);
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), 0);
	assert_int_equal(m.u.fh.npin, 3);
	assert_int_equal(m.u.fh.rkey[2], 0x102);
	assert_int_equal(m.u.fh.share, 4);
	assert_int_equal(m.u.fh.base, FH_BASE);
	assert_int_equal(m.u.fh.size, 64 * FH_RS);
	assert_int_equal(m.u.fh.region_size, FH_RS);
	assert_int_equal(m.u.fh.flags, LEAP_WFH_UNPINNED);
	/* An error carries no keys. */
	assert_true(leap_wire_enc_fh_rep(buf, sizeof(buf), 6, 122, 0, 4, FH_BASE, FH_RS,
					 FH_RS, 1, (uint32_t[]){1}) < 0);
	n = fh_rep(1);
	put32_at(REQ, 122); /* status with a key */
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_BATCH);
	n = fh_rep(1);
	put32_at(REQ + 12, LEAP_WIRE_FH_MAX + 1);
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_BATCH);
	n = fh_rep(1);
	put32_at(REQ + 12, 2); /* npin disagrees with the length */
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_LENGTH);
	n = fh_rep(1);
	put32_at(REQ + 4, 2); /* unknown flag */
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_OP);
	n = fh_rep(1);
	put32_at(REQ + 8, 0); /* share 0 */
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_RANGE);
	n = fh_rep(1);
	put64_at(REQ + 16, FH_BASE + 8); /* unaligned base */
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_RANGE);
	n = fh_rep(1);
	put64_at(REQ + 16, 0xffffffffffff0000ULL); /* base + size wraps */
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_RANGE);
	n = fh_rep(1);
	put64_at(REQ + 24, 64 * FH_RS + 4096); /* not whole regions */
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_RANGE);
	n = fh_rep(1);
	put64_at(REQ + 24, 0); /* empty */
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_RANGE);
	n = fh_rep(1);
	put64_at(REQ + 32, 3 * 4096); /* region size not a power of two */
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_RANGE);
	n = fh_rep(1);
	put64_at(REQ + 32, 2048); /* below a page */
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_RANGE);
	n = fh_rep(1);
	put64_at(REQ + 32, 0);
	assert_int_equal(leap_wire_decode(buf, (size_t)n, &m), -LEAP_WERR_RANGE);
}

/* ---- registration interface ----------------------------------------------- */

static int fake_regs, fake_deregs, fake_fail;

static int fake_reg(void *ctx, struct ibv_pd *pd, void *addr, size_t len, int access,
		    struct leap_mr *mr)
{
	(void)pd;
	(void)access;
	assert_ptr_equal(ctx, &fake_regs);
	if (fake_fail)
		return -ENOMEM;
	fake_regs++;
	mr->addr = addr;
	mr->len = len;
	mr->lkey = 100 + (uint32_t)fake_regs;
	mr->rkey = 200 + (uint32_t)fake_regs;
	return 0;
}

static int fake_dereg(void *ctx, struct leap_mr *mr)
{
	(void)ctx;
	assert_true(mr->len > 0);
	fake_deregs++;
	return 0;
}

static void test_mr_ops(void **state)
{
	static const struct leap_mr_ops fake = {"fake", fake_reg, fake_dereg, &fake_regs};
	struct leap_mr_stats s0, s1;
	struct leap_mr a, b, c;
	static char mem[3 * 4096];
	(void)state;

	assert_string_equal(leap_mr_get_ops()->name, "verbs");
	leap_mr_set_ops(&fake);
	leap_mr_get_stats(&s0);
	assert_int_equal(leap_mr_reg(NULL, mem, 4096, 0, &a), 0);
	assert_int_equal(a.rkey, 201);
	assert_int_equal(leap_mr_reg(NULL, mem + 4096, 8192, 0, &b), 0);
	assert_int_equal(leap_mr_reg(NULL, NULL, 4096, 0, &c), -EINVAL);
	assert_int_equal(leap_mr_reg(NULL, mem, 0, 0, &c), -EINVAL);
	fake_fail = 1;
	assert_int_equal(leap_mr_reg(NULL, mem, 4096, 0, &c), -ENOMEM);
	fake_fail = 0;
	leap_mr_get_stats(&s1);
	assert_int_equal(s1.regs - s0.regs, 2);
	assert_int_equal(s1.failures - s0.failures, 1);
	assert_int_equal(s1.bytes - s0.bytes, 3 * 4096);
	assert_int_equal(leap_mr_dereg(&a), 0);
	assert_int_equal(a.len, 0);
	assert_int_equal(leap_mr_dereg(&a), 0); /* twice: a no-op */
	leap_mr_get_stats(&s1);
	assert_int_equal(s1.deregs - s0.deregs, 1);
	assert_int_equal(s1.bytes - s0.bytes, 2 * 4096);
	assert_int_equal(s1.bytes_total - s0.bytes_total, 3 * 4096);
	assert_int_equal(fake_deregs, 1);
	leap_mr_dereg(&b);
	leap_mr_set_ops(NULL);
	assert_string_equal(leap_mr_get_ops()->name, "verbs");
}

/* ---- the transport table and the no-device refusal ------------------------- */

static void test_transport_table(void **state)
{
	const struct leap_transport *r = leap_transport_find("rdma");
	const struct leap_transport *t = leap_transport_find("tcp");
	(void)state;

	assert_ptr_equal(r, &leap_rdma_transport);
	assert_non_null(r->export_mem);
	assert_non_null(r->grant);
	assert_non_null(r->read_pages);
	assert_non_null(r->write_pages);
	/* TCP stays a pure byte stream: memclient uses READ/WRITE messages. */
	assert_null(t->export_mem);
	assert_null(t->grant);
	assert_null(t->read_pages);
	assert_null(t->write_pages);
	assert_null(leap_transport_find("RDMA"));
	assert_null(leap_transport_find("rdma "));
}

static void test_no_device(void **state)
{
	struct ibv_device **l;
	struct leap_conn c = {.fd = -1};
	char err[256] = "";
	int n = 0;
	(void)state;

	l = ibv_get_device_list(&n);
	if (l)
		ibv_free_device_list(l);
	if (n > 0)
		skip(); /* a machine with an RDMA device: nothing to refuse */
	assert_int_equal(leap_rdma_transport.listen(&c, "127.0.0.1:0", err, sizeof(err)),
			 -ENODEV);
	assert_non_null(strstr(err, "no RDMA device"));
	err[0] = '\0';
	assert_int_equal(
		leap_rdma_transport.connect(&c, "127.0.0.1:7480", 100, err, sizeof(err)),
		-ENODEV);
	assert_non_null(strstr(err, "no RDMA device"));
	assert_int_equal(c.fd, -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_map_req),		cmocka_unit_test(test_map_rep),
		cmocka_unit_test(test_map_rep_hostile), cmocka_unit_test(test_fh_req),
		cmocka_unit_test(test_fh_rep_hostile),	cmocka_unit_test(test_mr_ops),
		cmocka_unit_test(test_transport_table), cmocka_unit_test(test_no_device),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
