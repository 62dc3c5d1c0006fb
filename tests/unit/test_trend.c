// SPDX-License-Identifier: MIT
/* AccessHistory and FINDTREND, including the seed's worked example. */
#include "engine_test.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Seed example: Hsize 8, Nsplit 2, pages requested at t0..t15. */
static const uint64_t seed_pages[16] = {0x48, 0x45, 0x42, 0x3F, 0x3C, 0x02, 0x04, 0x06,
					0x08, 0x0A, 0x0C, 0x10, 0x39, 0x12, 0x14, 0x16};

static void run_seed_example(enum leap_flavor flavor)
{
	struct leap_params p = test_params(8, 2, flavor);
	struct test_history t;
	int64_t d = 0;
	uint32_t w = 0;

	test_history_init(&t, 8);
	/* t0..t3: -3 found in the first window (4 slots, 3 filled). */
	test_history_push_all(&t, seed_pages, 4);
	assert_true(leap_find_trend(&t.h, &p, &d, &w));
	assert_int_equal(d, -3);
	assert_int_equal(w, 4);

	/* t4..t7: t4-t7 (-3,-58,+2,+2) has no majority; the window doubles to
	 * t0-t7 where -3 holds 4 of the 7 filled slots. */
	test_history_push_all(&t, seed_pages + 4, 4);
	assert_int_equal(t.h.count, 7);
	{
		struct leap_params only4 = test_params(8, 2, flavor);
		struct test_history t4;

		/* The same newest four deltas alone hold no majority. */
		test_history_init(&t4, 4);
		test_history_push_all(&t4, seed_pages + 3, 5);
		only4.hsize = 4;
		only4.nsplit = 1;
		assert_false(leap_find_trend(&t4.h, &only4, &d, NULL));
	}
	assert_true(leap_find_trend(&t.h, &p, &d, &w));
	assert_int_equal(d, -3);
	assert_int_equal(w, 8);

	/* t8..t15: +2 among +41/-39 once the window doubles to t8-t15. */
	test_history_push_all(&t, seed_pages + 8, 8);
	assert_int_equal(t.h.count, 8);
	assert_true(leap_find_trend(&t.h, &p, &d, &w));
	assert_int_equal(d, 2);
	assert_int_equal(w, 8);
}

static void test_seed_example_paper(void **state)
{
	(void)state;
	run_seed_example(LEAP_FLAVOR_PAPER);
}

static void test_seed_example_ours(void **state)
{
	(void)state;
	run_seed_example(LEAP_FLAVOR_OURS);
}

/* Pushes pages built from a delta list, starting at page `start`. */
static void push_deltas(struct test_history *t, uint64_t start, const int64_t *deltas,
			size_t n)
{
	uint64_t page = start;

	leap_history_push(&t->h, page);
	for (size_t i = 0; i < n; i++) {
		page += (uint64_t)deltas[i];
		leap_history_push(&t->h, page);
	}
}

static void test_majority_exact_threshold(void **state)
{
	struct leap_params p = test_params(4, 1, LEAP_FLAVOR_OURS);
	struct test_history t;
	int64_t d;
	(void)state;

	/* 3 of 4 = floor(4/2)+1: a majority. */
	test_history_init(&t, 4);
	push_deltas(&t, 1000, (const int64_t[]){5, 7, 5, 5}, 4);
	assert_true(leap_find_trend(&t.h, &p, &d, NULL));
	assert_int_equal(d, 5);

	/* 2 of 4 is a tie, not a majority. */
	test_history_init(&t, 4);
	push_deltas(&t, 1000, (const int64_t[]){5, 7, 5, 7}, 4);
	assert_false(leap_find_trend(&t.h, &p, &d, NULL));

	/* Boyer-Moore's survivor is not a majority by itself: 1,2,3 leaves 3. */
	test_history_init(&t, 4);
	push_deltas(&t, 1000, (const int64_t[]){1, 2, 3}, 3);
	assert_false(leap_find_trend(&t.h, &p, &d, NULL));

	/* Odd window: 3 of 5 is the least majority; 2 of 5 is not. */
	p = test_params(5, 1, LEAP_FLAVOR_OURS);
	test_history_init(&t, 5);
	push_deltas(&t, 1000, (const int64_t[]){4, 9, 4, 9, 4}, 5);
	assert_true(leap_find_trend(&t.h, &p, &d, NULL));
	assert_int_equal(d, 4);
	test_history_init(&t, 5);
	push_deltas(&t, 1000, (const int64_t[]){4, 9, 4, 9, 1}, 5);
	assert_false(leap_find_trend(&t.h, &p, &d, NULL));
}

static void test_ring_not_full(void **state)
{
	struct leap_params p = test_params(32, 2, LEAP_FLAVOR_OURS);
	struct test_history t;
	int64_t d;
	uint32_t w;
	(void)state;

	test_history_init(&t, 32);
	/* No delta yet after one page; none at all before. */
	assert_false(leap_find_trend(&t.h, &p, &d, NULL));
	leap_history_push(&t.h, 10);
	assert_int_equal(t.h.count, 0);
	assert_false(leap_find_trend(&t.h, &p, &d, NULL));
	/* One delta is a majority of one filled slot. */
	leap_history_push(&t.h, 12);
	assert_true(leap_find_trend(&t.h, &p, &d, &w));
	assert_int_equal(d, 2);
	/* 2 of 3 filled slots (+2,+2,+9): majority counted over filled slots. */
	leap_history_push(&t.h, 14);
	leap_history_push(&t.h, 23);
	assert_true(leap_find_trend(&t.h, &p, &d, &w));
	assert_int_equal(d, 2);
	assert_int_equal(w, 16);
}

static void test_wraparound(void **state)
{
	struct leap_params p = test_params(8, 2, LEAP_FLAVOR_OURS);
	struct test_history t;
	uint64_t page = 0;
	int64_t d;
	(void)state;

	test_history_init(&t, 8);
	for (int i = 0; i < 21; i++) {
		page += 3;
		leap_history_push(&t.h, page);
	}
	assert_int_equal(t.h.count, 8);
	assert_true(leap_find_trend(&t.h, &p, &d, NULL));
	assert_int_equal(d, 3);
	/* The ring wraps several times; the newest 4 deltas decide first. */
	for (int i = 0; i < 3; i++) {
		page += 7;
		leap_history_push(&t.h, page);
	}
	assert_int_equal(leap_history_at(&t.h, 0), 7);
	assert_int_equal(leap_history_at(&t.h, 3), 3);
	assert_true(leap_find_trend(&t.h, &p, &d, NULL));
	assert_int_equal(d, 7);
}

static void test_negative_and_huge(void **state)
{
	struct leap_params ours = test_params(8, 2, LEAP_FLAVOR_OURS);
	struct leap_params paper = test_params(8, 2, LEAP_FLAVOR_PAPER);
	struct test_history t;
	int64_t d;
	(void)state;

	/* Descending by 1000 pages: a trend for the paper, too far for ours
	 * with the default cap, a trend for ours without a cap. */
	test_history_init(&t, 8);
	for (uint64_t page = 100000; page > 90000; page -= 1000)
		leap_history_push(&t.h, page);
	assert_true(leap_find_trend(&t.h, &paper, &d, NULL));
	assert_int_equal(d, -1000);
	assert_false(leap_find_trend(&t.h, &ours, &d, NULL));
	ours.max_delta = 0;
	assert_true(leap_find_trend(&t.h, &ours, &d, NULL));
	assert_int_equal(d, -1000);

	/* Deltas at the edge of int64: no overflow in |d|. */
	test_history_init(&t, 8);
	for (int i = 0; i < 6; i++)
		leap_history_push(&t.h, (i & 1) ? (1ULL << 63) : 0);
	assert_true(leap_find_trend(&t.h, &paper, &d, NULL));
	assert_int_equal(d, INT64_MIN);
	ours.max_delta = LEAP_DEFAULT_MAX_DELTA;
	assert_false(leap_find_trend(&t.h, &ours, &d, NULL));

	/* Negative small stride is fine for ours. */
	ours.max_delta = LEAP_DEFAULT_MAX_DELTA;
	test_history_init(&t, 8);
	for (uint64_t page = 500; page > 400; page -= 4)
		leap_history_push(&t.h, page);
	assert_true(leap_find_trend(&t.h, &ours, &d, NULL));
	assert_int_equal(d, -4);
}

static void test_delta_zero(void **state)
{
	struct leap_params ours = test_params(8, 2, LEAP_FLAVOR_OURS);
	struct leap_params paper = test_params(8, 2, LEAP_FLAVOR_PAPER);
	struct test_history t;
	int64_t d = 99;
	(void)state;

	test_history_init(&t, 8);
	for (int i = 0; i < 9; i++)
		leap_history_push(&t.h, 77);
	assert_true(leap_find_trend(&t.h, &paper, &d, NULL));
	assert_int_equal(d, 0);
	assert_false(leap_find_trend(&t.h, &ours, &d, NULL));
}

/* A nested stride is found once two periods repeat; one stride, a period
 * summing to 0, deltas past max_delta and noise are not periods. */
static void test_period(void **state)
{
	struct leap_params p = test_params(32, 2, LEAP_FLAVOR_OURS);
	struct test_history t;
	int64_t deltas[LEAP_PERIOD_MAX];
	uint64_t page = 1000;
	(void)state;

	/* numpy a[::4, ::1024] over 16-page rows: +2 x7, +50. */
	test_history_init(&t, 32);
	leap_history_push(&t.h, page);
	for (int i = 0; i < 15; i++) {
		page += i % 8 == 7 ? 50 : 2;
		leap_history_push(&t.h, page);
	}
	assert_int_equal(leap_find_period(&t.h, &p, deltas), 0); /* 15 deltas */
	page += 50; /* the 16th delta is the +50 of the second period */
	leap_history_push(&t.h, page);
	assert_int_equal(leap_find_period(&t.h, &p, deltas), 8);
	/* Oldest first: the delta after the newest page comes first. */
	for (int i = 0; i < 7; i++)
		assert_int_equal(deltas[i], 2);
	assert_int_equal(deltas[7], 50);
	page += 2;
	leap_history_push(&t.h, page);
	assert_int_equal(leap_find_period(&t.h, &p, deltas), 8);
	assert_int_equal(deltas[0], 2);
	assert_int_equal(deltas[6], 50);
	assert_int_equal(deltas[7], 2);

	/* One stride is FINDTREND's, not a period. */
	test_history_init(&t, 32);
	for (uint64_t q = 0; q < 40; q++)
		leap_history_push(&t.h, 5000 + 16 * q);
	assert_int_equal(leap_find_period(&t.h, &p, deltas), 0);

	/* Back and forth (sum 0) revisits pages: not a period. */
	test_history_init(&t, 32);
	for (uint64_t q = 0; q < 40; q++)
		leap_history_push(&t.h, q % 2 ? 5003 : 5000);
	assert_int_equal(leap_find_period(&t.h, &p, deltas), 0);

	/* +1 x3, +300: past max_delta (256). */
	test_history_init(&t, 32);
	page = 0;
	for (int i = 0; i < 40; i++) {
		page += i % 4 == 3 ? 300 : 1;
		leap_history_push(&t.h, page);
	}
	assert_int_equal(leap_find_period(&t.h, &p, deltas), 0);
	p.max_delta = 0; /* no cap: a period */
	assert_int_equal(leap_find_period(&t.h, &p, deltas), 4);

	/* Noise never repeats exactly. */
	test_history_init(&t, 32);
	page = 1 << 20;
	for (uint64_t q = 1; q < 40; q++) {
		page += 1 + q * 7919 % 97;
		leap_history_push(&t.h, page);
	}
	assert_int_equal(leap_find_period(&t.h, &p, deltas), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seed_example_paper),
		cmocka_unit_test(test_seed_example_ours),
		cmocka_unit_test(test_majority_exact_threshold),
		cmocka_unit_test(test_ring_not_full),
		cmocka_unit_test(test_wraparound),
		cmocka_unit_test(test_negative_and_huge),
		cmocka_unit_test(test_delta_zero),
		cmocka_unit_test(test_period),
	};
	return cmocka_run_group_tests_name("trend", tests, NULL, NULL);
}
