// SPDX-License-Identifier: MIT
/* leap_behind_advance: the pages a sequential stream has gone past. */
#include "engine_test.h"

static void test_forward(void **state)
{
	struct leap_behind b = {0};
	uint64_t first = 0;
	(void)state;

	assert_int_equal(leap_behind_advance(&b, 1000, 1, 256, 64, &first), 0);
	/* Not yet lag + chunk pages on. */
	assert_int_equal(leap_behind_advance(&b, 1000 + 256 + 63, 1, 256, 64, &first), 0);
	assert_int_equal(leap_behind_advance(&b, 1000 + 256 + 64, 1, 256, 64, &first),
			 64);
	assert_int_equal(first, 1000);
	/* Each page once: the next run starts where this one ended. */
	assert_int_equal(leap_behind_advance(&b, 1000 + 256 + 200, 1, 256, 64, &first),
			 136);
	assert_int_equal(first, 1064);
	assert_int_equal(leap_behind_advance(&b, 1000 + 256 + 210, 1, 256, 64, &first),
			 0);
}

static void test_backward(void **state)
{
	struct leap_behind b = {0};
	uint64_t first = 0;
	(void)state;

	assert_int_equal(leap_behind_advance(&b, 5000, -1, 256, 64, &first), 0);
	assert_int_equal(leap_behind_advance(&b, 5000 - 319, -1, 256, 64, &first), 0);
	/* At 4680 with a lag of 256: 4937..5000 are done (64 pages). */
	assert_int_equal(leap_behind_advance(&b, 4680, -1, 256, 64, &first), 64);
	assert_int_equal(first, 4937);
	assert_int_equal(leap_behind_advance(&b, 4600, -1, 256, 64, &first), 80);
	assert_int_equal(first, 4857);
}

static void test_restarts(void **state)
{
	struct leap_behind b = {0};
	uint64_t first = 0;
	(void)state;

	assert_int_equal(leap_behind_advance(&b, 1000, 1, 16, 8, &first), 0);
	/* Going back restarts from there: nothing before it is handed out. */
	assert_int_equal(leap_behind_advance(&b, 900, 1, 16, 8, &first), 0);
	assert_int_equal(leap_behind_advance(&b, 930, 1, 16, 8, &first), 14);
	assert_int_equal(first, 900);
	/* A jump far ahead is another region, not pages gone past. */
	assert_int_equal(
		leap_behind_advance(&b, 900 + LEAP_BEHIND_JUMP + 100, 1, 16, 8, &first),
		0);
	assert_int_equal(
		leap_behind_advance(&b, 900 + LEAP_BEHIND_JUMP + 130, 1, 16, 8, &first),
		14);
	assert_int_equal(first, 900 + LEAP_BEHIND_JUMP + 100);
	/* A change of direction, or none, disarms. */
	assert_int_equal(leap_behind_advance(&b, 500, -1, 16, 8, &first), 0);
	assert_int_equal(leap_behind_advance(&b, 400, 0, 16, 8, &first), 0);
	assert_false(b.armed);
	/* Page 0 and below: a backward run ends at page lag + 1. */
	assert_int_equal(leap_behind_advance(&b, 40, -1, 16, 8, &first), 0);
	assert_int_equal(leap_behind_advance(&b, 0, -1, 16, 8, &first), 24);
	assert_int_equal(first, 17);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forward),
		cmocka_unit_test(test_backward),
		cmocka_unit_test(test_restarts),
	};
	return cmocka_run_group_tests_name("behind", tests, NULL, NULL);
}
