// SPDX-License-Identifier: MIT
/* Strides with a fraction: records that are not a whole number of pages. */
#include "engine_test.h"

/* 4395/256 = 17.168 pages a step on average: SQLite's strided look-ups
 * step ~17.2 (engine.h, leap_stride_fine()). */
#define FINE_Q	 4395
#define RECORDS	 1024
#define JITTER_Q 64 /* each step +-1/4 page: records of a few lengths */

/* Where each record starts, in 1/LEAP_STRIDE_ONE pages from the first.
 * Without the jitter the deltas repeat (17 five times, then 18), which
 * is a nested stride (leap_find_period()) with windows of its own. */
static int64_t start_q[RECORDS];

static int setup(void **state)
{
	uint32_t lcg = 12345;
	(void)state;

	for (int i = 1; i < RECORDS; i++) {
		lcg = lcg * 1103515245u + 12345u;
		start_q[i] = start_q[i - 1] + FINE_Q +
			     (int64_t)((lcg >> 16) % (2 * JITTER_Q + 1)) - JITTER_Q;
	}
	return 0;
}

/* The i-th record's first page. */
static uint64_t record(uint64_t base, int64_t i)
{
	return base + (uint64_t)(start_q[i] / LEAP_STRIDE_ONE);
}

/* Whether page is some record's first page, at most max_i. */
static bool is_record(uint64_t base, uint64_t page, int64_t max_i)
{
	for (int64_t i = 0; i <= max_i; i++)
		if (record(base, i) == page)
			return true;
	return false;
}

/* ... without the jitter. */
static uint64_t lattice(uint64_t base, int64_t i)
{
	return base + (uint64_t)(i * FINE_Q / LEAP_STRIDE_ONE);
}

static void test_estimate(void **state)
{
	struct test_history t;
	int64_t fine;
	(void)state;

	test_history_init(&t, 32);
	for (int64_t i = 0; i < 40; i++)
		leap_history_push(&t.h, lattice(1000, i));
	/* Deltas of 17 and 18: the majority is +17, the stride 17.17. */
	fine = leap_stride_fine(&t.h, 17);
	assert_true(fine >= FINE_Q - LEAP_STRIDE_ONE / 16 &&
		    fine <= FINE_Q + LEAP_STRIDE_ONE / 16);
	/* Backwards: the same, negative. */
	test_history_init(&t, 32);
	for (int64_t i = 0; i < 40; i++)
		leap_history_push(&t.h, 100000 - lattice(0, i));
	fine = leap_stride_fine(&t.h, -17);
	assert_true(fine <= -FINE_Q + LEAP_STRIDE_ONE / 16 &&
		    fine >= -FINE_Q - LEAP_STRIDE_ONE / 16);
}

/* A whole stride stays whole: with a page touched between two steps,
 * with a stray far page, and when the history is too short to say. */
static void test_whole_strides_stay_whole(void **state)
{
	struct test_history t;
	uint64_t pt = 5000;
	(void)state;

	test_history_init(&t, 32);
	for (int i = 0; i < 40; i++, pt += 16) {
		leap_history_push(&t.h, pt);
		if (i % 7 == 3)
			leap_history_push(&t.h, pt + 1); /* 16 = +1, +15 */
		if (i % 11 == 5)
			leap_history_push(&t.h, pt + 900); /* noise */
	}
	assert_int_equal(leap_stride_fine(&t.h, 16), 0);
	/* Fewer than LEAP_FINE_MIN_STEPS steps: no estimate. */
	test_history_init(&t, 32);
	for (int64_t i = 0; i < 4; i++)
		leap_history_push(&t.h, record(1000, i));
	assert_int_equal(leap_stride_fine(&t.h, 17), 0);
	/* Unit trends have no fraction to find. */
	assert_int_equal(leap_stride_fine(&t.h, 1), 0);
	/* Nor strides too long to measure. */
	assert_int_equal(leap_stride_fine(&t.h, (int64_t)1 << 40), 0);
	assert_int_equal(leap_stride_fine(&t.h, INT64_MIN), 0);
}

static void test_candidates(void **state)
{
	uint64_t out[8];
	uint32_t n;
	(void)state;

	n = leap_candidates_fine(100, 4, FINE_Q, out, 8);
	assert_int_equal(n, 4);
	/* round(i * 17.168): 17, 34, 52 (51.504), 69 (68.67) */
	assert_int_equal(out[0], 117);
	assert_int_equal(out[1], 134);
	assert_int_equal(out[2], 152);
	assert_int_equal(out[3], 169);
	/* Backwards, stopping before page 0. */
	n = leap_candidates_fine(40, 8, -FINE_Q, out, 8);
	assert_int_equal(n, 2);
	assert_int_equal(out[0], 23);
	assert_int_equal(out[1], 6);
	/* Capped by the room given; less than a page a step is refused. */
	assert_int_equal(leap_candidates_fine(100, 8, FINE_Q, out, 3), 3);
	assert_int_equal(leap_candidates_fine(100, 8, LEAP_STRIDE_ONE / 2, out, 8), 0);
}

/* The pages the newest windows fetched. */
static uint64_t window_pages[256];
static uint32_t window_next;

static void remember(const uint64_t *out, uint32_t n)
{
	for (uint32_t j = 0; j < n; j++) {
		window_pages[window_next] = out[j];
		window_next = (window_next + 1) % 256;
	}
}

static bool fetched(uint64_t page)
{
	for (uint32_t j = 0; j < 256; j++)
		if (window_pages[j] == page)
			return true;
	return false;
}

/*
 * A stream on records 17.17 pages apart: its windows land on
 * the records ahead.  Along the majority's +17 the 4th step is already a
 * page short (68 against 69).
 */
static void test_windows_land_on_records(void **state)
{
	int64_t storage[LEAP_HSIZE_MAX];
	uint64_t out[LEAP_PW_LIMIT];
	struct leap_decision d;
	struct leap_stream s;
	struct leap_params p;
	const uint64_t base = 50000;
	uint32_t pages = 0, landed = 0;
	(void)state;

	leap_params_default(&p);
	p.pw_max = 16;
	leap_stream_init(&s, storage, LEAP_HSIZE_MAX);
	for (int64_t i = 0; i < 400; i++) {
		uint64_t page = record(base, i);
		uint32_t n;

		/* Hits where a window of the last few landed. */
		n = leap_stream_access(&s, &p, page, fetched(page), out, LEAP_PW_LIMIT,
				       &d);
		remember(out, n);
		if (i < 40)
			continue;
		if (d.ran) {
			assert_true(d.trend_found);
			assert_int_equal(d.trend, 17);
		}
		for (uint32_t j = 0; j < n; j++)
			landed += is_record(base, out[j], i + 2 * (int64_t)n + 2);
		pages += n;
	}
	print_message("# %u of %u window pages on a record\n", landed, pages);
	assert_true(pages > 300);
	/* Rounded to the nearest page, not knowing where in its page a
	 * record starts: 363 of 594 (61%) land; along +17, 258 of 567 (45%). */
	assert_true(landed * 20 >= pages * 11);
	assert_true(s.ra_fine != 0);
}

/* A fine stride's lead stops at LEAP_LEAD_FINE_MAX steps. */
static void test_fine_lead_capped(void **state)
{
	int64_t storage[LEAP_HSIZE_MAX];
	uint64_t out[LEAP_PW_LIMIT];
	struct leap_decision d;
	struct leap_stream s;
	struct leap_params p;
	const uint64_t base = 50000;
	uint32_t n;
	int64_t i;
	(void)state;

	leap_params_default(&p);
	leap_stream_init(&s, storage, LEAP_HSIZE_MAX);
	for (i = 0; i < 40; i++)
		leap_stream_access(&s, &p, record(base, i), false, out, LEAP_PW_LIMIT,
				   &d);
	/* Every window late (test_lead.c): the lead doubles to its most. */
	for (int k = 0; k < 12; k++, i++) {
		leap_stream_late(&s, &p);
		leap_stream_access(&s, &p, record(base, i), false, out, LEAP_PW_LIMIT,
				   &d);
	}
	assert_int_equal(s.lead, LEAP_LEAD_MAX);
	n = leap_stream_access(&s, &p, record(base, i), false, out, LEAP_PW_LIMIT, &d);
	assert_true(n > 0);
	assert_true(d.trend_found);
	/* The first page: LEAP_LEAD_FINE_MAX + 1 records on, give or take a
	 * page of rounding. */
	assert_true(out[0] + 1 >= record(base, i + LEAP_LEAD_FINE_MAX + 1));
	assert_true(out[0] <= record(base, i + LEAP_LEAD_FINE_MAX + 1) + 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_estimate),
		cmocka_unit_test(test_whole_strides_stay_whole),
		cmocka_unit_test(test_candidates),
		cmocka_unit_test(test_windows_land_on_records),
		cmocka_unit_test(test_fine_lead_capped),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
