// SPDX-License-Identifier: MIT
/* leap_parse_size: the byte counts every command line takes. */
#include "engine_test.h"
#include "leap/size.h"

static void test_sizes(void **state)
{
	static const struct {
		const char *in;
		uint64_t out;
	} good[] = {{"0", 0},
		    {"4096", 4096},
		    {"64M", 64ULL << 20},
		    {"64m", 64ULL << 20},
		    {"2GiB", 2ULL << 30},
		    {"512kb", 512ULL << 10},
		    {"3T", 3ULL << 40},
		    {"16777215T", 16777215ULL << 40}};
	static const char *const bad[] = {"",	 "-1",	      "M",
					  "12Q", "1.5G",      "1Mx",
					  " 1M", "16777216T", "99999999999999999999"};
	uint64_t v;
	(void)state;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_int_equal(leap_parse_size(good[i].in, &v), 0);
		assert_int_equal(v, good[i].out);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(leap_parse_size(bad[i], &v), -1);
	assert_int_equal(leap_parse_size(NULL, &v), -1);
}

static void test_uints(void **state)
{
	unsigned long long v;
	(void)state;

	assert_int_equal(leap_parse_uint("42", 10, 100, &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(leap_parse_uint("0x10", 0, 100, &v), 0);
	assert_int_equal(v, 16);
	assert_int_equal(leap_parse_uint("101", 10, 100, &v), -1);
	assert_int_equal(leap_parse_uint("-1", 10, ~0ULL, &v), -1);
	assert_int_equal(leap_parse_uint(" 1", 10, 100, &v), -1);
	assert_int_equal(leap_parse_uint("1x", 10, 100, &v), -1);
	assert_int_equal(leap_parse_uint("", 10, 100, &v), -1);
	assert_int_equal(leap_parse_uint("99999999999999999999", 10, ~0ULL, &v), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_sizes),
					   cmocka_unit_test(test_uints)};

	return cmocka_run_group_tests_name("size", tests, NULL, NULL);
}
