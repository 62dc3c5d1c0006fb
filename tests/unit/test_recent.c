// SPDX-License-Identifier: MIT
/* leap_recent_filter: pages issued a moment ago are not issued again. */
#include <errno.h>

#include "engine_test.h"
#include "leap/recent.h"

#define MS (1000ULL * 1000)

static void test_skips_recent(void **state)
{
	struct leap_recent r;
	uint64_t a[] = {10, 11, 12, 13}, b[] = {12, 13, 14, 15};
	(void)state;

	assert_int_equal(leap_recent_init(&r, LEAP_RECENT_BITS), 0);
	assert_int_equal(leap_recent_filter(&r, 7, a, 4, ~0ULL, 100 * MS, 20 * MS), 4);
	/* The overlap of a window restarted over the one in flight goes. */
	assert_int_equal(leap_recent_filter(&r, 7, b, 4, ~0ULL, 101 * MS, 20 * MS), 2);
	assert_int_equal(b[0], 14);
	assert_int_equal(b[1], 15);
	leap_recent_free(&r);
}

static void test_expires_and_keeps_marker(void **state)
{
	struct leap_recent r;
	uint64_t a[] = {10, 11, 12}, b[] = {10, 11, 12}, c[] = {10, 11, 12};
	(void)state;

	assert_int_equal(leap_recent_init(&r, 8), 0);
	assert_int_equal(leap_recent_filter(&r, 7, a, 3, ~0ULL, 100 * MS, 20 * MS), 3);
	/* The marker stays: its hit is what wakes the agent for the next. */
	assert_int_equal(leap_recent_filter(&r, 7, b, 3, 11, 105 * MS, 20 * MS), 1);
	assert_int_equal(b[0], 11);
	/* Past the ttl (from the last issue: 10 and 12 at 100, 11 at 105)
	 * a page may have been reclaimed unused: asked for again. */
	assert_int_equal(leap_recent_filter(&r, 7, c, 3, ~0ULL, 121 * MS, 20 * MS), 2);
	assert_int_equal(c[0], 10);
	assert_int_equal(c[1], 12);
	leap_recent_free(&r);
}

static void test_per_process(void **state)
{
	struct leap_recent r;
	uint64_t a[] = {10, 11}, b[] = {10, 11};
	(void)state;

	assert_int_equal(leap_recent_init(&r, LEAP_RECENT_BITS), 0);
	assert_int_equal(leap_recent_filter(&r, 7, a, 2, ~0ULL, 100 * MS, 20 * MS), 2);
	/* The same addresses in another process are other pages. */
	assert_int_equal(leap_recent_filter(&r, 8, b, 2, ~0ULL, 100 * MS, 20 * MS), 2);
	leap_recent_free(&r);
}

static void test_clock_wraps(void **state)
{
	struct leap_recent r;
	/* Time is kept in 24 bits of 2^16 ns: it wraps every 2^40 ns. */
	uint64_t wrap = 1ULL << 40, a[] = {5}, b[] = {5}, c[] = {5};
	(void)state;

	assert_int_equal(leap_recent_init(&r, 8), 0);
	assert_int_equal(leap_recent_filter(&r, 1, a, 1, ~0ULL, wrap - 5 * MS, 20 * MS),
			 1);
	assert_int_equal(leap_recent_filter(&r, 1, b, 1, ~0ULL, wrap + 5 * MS, 20 * MS),
			 0);
	assert_int_equal(leap_recent_filter(&r, 1, c, 1, ~0ULL, wrap + 40 * MS, 20 * MS),
			 1);
	leap_recent_free(&r);
}

static void test_uninitialised_and_bad_size(void **state)
{
	struct leap_recent r = {0};
	uint64_t a[] = {1, 2, 3};
	(void)state;

	/* No table: nothing is filtered (an agent that could not allocate
	 * one issues as before). */
	assert_int_equal(leap_recent_filter(&r, 1, a, 3, ~0ULL, 0, 20 * MS), 3);
	assert_int_equal(leap_recent_filter(&r, 1, a, 3, ~0ULL, 0, 20 * MS), 3);
	assert_int_equal(leap_recent_init(&r, 2), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(leap_recent_init(&r, 30), -1);
	leap_recent_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_skips_recent),
		cmocka_unit_test(test_expires_and_keeps_marker),
		cmocka_unit_test(test_per_process),
		cmocka_unit_test(test_clock_wraps),
		cmocka_unit_test(test_uninitialised_and_bad_size),
	};
	return cmocka_run_group_tests_name("recent", tests, NULL, NULL);
}
