// SPDX-License-Identifier: MIT
/* The bounded prefetched-page set used for hit detection. */
#include <stdlib.h>

#include "engine_test.h"
#include "leap/pageset.h"

static void test_basic(void **state)
{
	struct leap_pageset s;
	(void)state;

	assert_int_equal(leap_pageset_init(&s, 8), 0);
	assert_true(leap_pageset_add(&s, 1, 100));
	assert_false(leap_pageset_add(&s, 1, 100));
	assert_true(leap_pageset_add(&s, 2, 100)); /* other process, same page */
	assert_true(leap_pageset_contains(&s, 1, 100));
	assert_true(leap_pageset_take(&s, 1, 100));
	assert_false(leap_pageset_take(&s, 1, 100)); /* a hit counts once */
	assert_true(leap_pageset_contains(&s, 2, 100));
	assert_int_equal(s.count, 1);
	leap_pageset_free(&s);
	assert_int_equal(leap_pageset_init(&s, 0), -22);
}

static void test_fifo_forgetting(void **state)
{
	struct leap_pageset s;
	(void)state;

	assert_int_equal(leap_pageset_init(&s, 4), 0);
	for (uint64_t p = 0; p < 6; p++)
		leap_pageset_add(&s, 9, p);
	assert_int_equal(s.count, 4);
	assert_int_equal(s.forgotten, 2);
	assert_false(leap_pageset_contains(&s, 9, 0));
	assert_false(leap_pageset_contains(&s, 9, 1));
	for (uint64_t p = 2; p < 6; p++)
		assert_true(leap_pageset_contains(&s, 9, p));
	/* Taken entries free their ring slot without counting as forgotten. */
	assert_true(leap_pageset_take(&s, 9, 2));
	leap_pageset_add(&s, 9, 6);
	leap_pageset_add(&s, 9, 7);
	assert_int_equal(s.forgotten, 3);
	assert_false(leap_pageset_contains(&s, 9, 3));
	leap_pageset_free(&s);
}

/* Random adds/takes against a reference array. */
static void test_against_model(void **state)
{
	enum { CAP = 128, PAGES = 512, OPS = 300000 };
	struct leap_pageset s;
	uint64_t stamp[2][PAGES] = {{0}}; /* insertion order number, 0 = absent */
	uint64_t seq = 0;
	unsigned seed = 7;
	(void)state;

	assert_int_equal(leap_pageset_init(&s, CAP), 0);
	for (int op = 0; op < OPS; op++) {
		uint32_t tg = (uint32_t)rand_r(&seed) & 1;
		uint64_t page = (uint64_t)rand_r(&seed) % PAGES;

		if (rand_r(&seed) & 1) {
			bool added = leap_pageset_add(&s, tg + 10, page);

			assert_int_equal(added, stamp[tg][page] == 0);
			if (added)
				stamp[tg][page] = ++seq;
		} else {
			assert_int_equal(leap_pageset_take(&s, tg + 10, page),
					 stamp[tg][page] != 0);
			stamp[tg][page] = 0;
		}
		/* Model forgetting: anything older than the ring's reach. */
		for (int t = 0; t < 2; t++)
			for (int p = 0; p < PAGES; p++)
				if (stamp[t][p] && seq - stamp[t][p] >= CAP)
					stamp[t][p] = 0;
		if (op % 1000 == 0)
			for (int t = 0; t < 2; t++)
				for (int p = 0; p < PAGES; p++)
					assert_int_equal(
						leap_pageset_contains(&s, t + 10, p),
						stamp[t][p] != 0);
	}
	leap_pageset_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic),
		cmocka_unit_test(test_fifo_forgetting),
		cmocka_unit_test(test_against_model),
	};
	return cmocka_run_group_tests_name("pageset", tests, NULL, NULL);
}
