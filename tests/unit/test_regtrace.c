// SPDX-License-Identifier: MIT
/* Registration traces: the text format and the generators. */
#include <string.h>

#include "engine_test.h"
#include "leap/regtrace.h"

static bool rec_eq(const struct leap_regtrace_rec *a, const struct leap_regtrace_rec *b)
{
	return a->op == b->op && a->addr == b->addr && a->len == b->len &&
	       a->client == b->client;
}

static void test_parse(void **state)
{
	struct leap_regtrace_rec r;
	static const char *const bad[] = {"x 1 2",
					  "r",
					  "r 1",
					  "r 1 0",
					  "r 0x10 2 3 4",
					  "r -1 2",
					  "u 1 2 3",
					  "r 1 2 4096",
					  "r 1 2x",
					  "r18446744073709551615 1",
					  "r 18446744073709551615 2",
					  "r 1 99999999999999999999"};
	(void)state;

	assert_int_equal(leap_regtrace_parse("", &r), 0);
	assert_int_equal(leap_regtrace_parse("  # hi\n", &r), 0);
	assert_int_equal(leap_regtrace_parse("\n", &r), 0);
	assert_int_equal(leap_regtrace_parse("r 0x1000 4096\n", &r), 1);
	assert_int_equal(r.op, LEAP_REGTRACE_REF);
	assert_int_equal(r.addr, 0x1000);
	assert_int_equal(r.len, 4096);
	assert_int_equal(r.client, 0);
	assert_int_equal(leap_regtrace_parse("r 10 20 7", &r), 1);
	assert_int_equal(r.client, 7);
	assert_int_equal(leap_regtrace_parse("u\t0x2000\t8192  \n", &r), 1);
	assert_int_equal(r.op, LEAP_REGTRACE_UNMAP);
	assert_int_equal(r.len, 8192);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(leap_regtrace_parse(bad[i], &r), -1);
}

static void test_format_roundtrip(void **state)
{
	struct leap_regtrace_rec in = {LEAP_REGTRACE_REF, 0xdead000, 12345, 3}, out;
	char buf[64];
	(void)state;

	assert_true(leap_regtrace_format(&in, buf, sizeof(buf)) > 0);
	assert_int_equal(leap_regtrace_parse(buf, &out), 1);
	assert_true(rec_eq(&in, &out));
	in.op = LEAP_REGTRACE_UNMAP;
	in.client = 0;
	assert_true(leap_regtrace_format(&in, buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "u 0xdead000 12345\n");
	assert_int_equal(leap_regtrace_format(&in, buf, 5), -1);
}

/* Every kind: the requested count, ranges inside the space (give or take
 * the overlap kind's growth), deterministic per seed. */
static void test_generators(void **state)
{
	(void)state;
	for (int k = 0; k <= LEAP_GEN_UNMAP; k++) {
		struct leap_regtrace_gen g = {.kind = k,
					      .ops = 5000,
					      .space = 64 << 20,
					      .max_len = 128 << 10,
					      .buffers = 64,
					      .clients = 4,
					      .seed = 9};
		struct leap_regtrace_gen h = g;
		struct leap_regtrace_rec a, b;
		uint64_t n = 0, unmaps = 0, clients = 0;

		assert_string_equal(leap_regtrace_kind_name(k),
				    leap_regtrace_kind_name(leap_regtrace_kind_parse(
					    leap_regtrace_kind_name(k))));
		assert_int_equal(leap_regtrace_gen_init(&g), 0);
		assert_int_equal(leap_regtrace_gen_init(&h), 0);
		while (leap_regtrace_gen_next(&g, &a)) {
			assert_true(leap_regtrace_gen_next(&h, &b));
			assert_true(rec_eq(&a, &b));
			assert_true(a.len > 0);
			assert_true(a.len <= 2 * g.max_len);
			assert_true(a.addr + g.max_len >= g.base);
			assert_true(a.addr + a.len <= g.base + g.space + g.max_len);
			unmaps += a.op == LEAP_REGTRACE_UNMAP;
			clients |= 1ULL << a.client;
			n++;
		}
		assert_int_equal(n, 5000);
		assert_true((k == LEAP_GEN_UNMAP) == (unmaps > 0));
		assert_int_equal(clients, k == LEAP_GEN_CLIENTS ? 0xf : 1);
		leap_regtrace_gen_free(&g);
		leap_regtrace_gen_free(&h);
	}
	assert_int_equal(leap_regtrace_kind_parse("nope"), -1);
	{
		struct leap_regtrace_gen g = {.kind = LEAP_GEN_RANDOM, .page = 3000};

		assert_int_equal(leap_regtrace_gen_init(&g), -1);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_parse),
					   cmocka_unit_test(test_format_roundtrip),
					   cmocka_unit_test(test_generators)};

	return cmocka_run_group_tests_name("regtrace", tests, NULL, NULL);
}
