// SPDX-License-Identifier: MIT
/* Late means lead: a stream whose windows arrive after its faults. */
#include <string.h>

#include "engine_test.h"

#define STRIDE 8

/*
 * A +8 stride whose every window is late (the 16-core Perl scan: 64,465
 * of 64,547 misses on the stride, no hits): without a lead each window
 * shrinks to one page next to the fault, and stays late.  With it the
 * window keeps its size and moves ahead, doubling its distance per late
 * miss, up to pw_max trend steps.
 */
static void test_late_windows_lead(void **state)
{
	int64_t storage[LEAP_HSIZE_MAX];
	uint64_t out[LEAP_PW_LIMIT];
	struct leap_decision d;
	struct leap_stream s;
	struct leap_params p;
	uint64_t pt = 1000;
	uint32_t n, pw = 0;
	(void)state;

	leap_params_default(&p);
	p.pw_max = 64;
	leap_stream_init(&s, storage, LEAP_HSIZE_MAX);
	/* The stride is found, the first windows go out (no hits yet). */
	for (int i = 0; i < 6; i++, pt += STRIDE)
		leap_stream_access(&s, &p, pt, false, out, LEAP_PW_LIMIT, &d);
	assert_true(d.trend_found);
	assert_int_equal(d.trend, STRIDE);
	assert_int_equal(s.lead, 0);
	/* Each next miss lands on a page of the last window, still on its way. */
	for (int i = 0; i < 12; i++, pt += STRIDE) {
		uint32_t lead_before;

		leap_stream_late(&s, &p);
		lead_before = s.lead;
		n = leap_stream_access(&s, &p, pt, false, out, LEAP_PW_LIMIT, &d);
		assert_true(n > 0);
		/* Never shrinks: the late pages count as hits. */
		assert_true(d.window >= pw);
		pw = d.window;
		/* Starts lead trend steps ahead of the fault, or further. */
		assert_true(out[0] >= pt + (uint64_t)lead_before * STRIDE + STRIDE);
		assert_int_equal((out[0] - pt) % STRIDE, 0);
	}
	assert_int_equal(s.stats.late, 12);
	assert_int_equal(pw, p.pw_max);
	assert_int_equal(s.lead, p.pw_max);
	/* A late miss among hits: the distance works, nothing changes. */
	leap_stream_add_hits(&s, 3);
	leap_stream_late(&s, &p);
	assert_int_equal(s.lead, p.pw_max);
	/* Reclaimed before use: too far ahead for the memory; the lead halves. */
	leap_stream_wasted(&s);
	assert_int_equal(s.lead, p.pw_max / 2);
}

/* A backward stride leads downwards, and never below page 0. */
static void test_lead_backwards_stops_at_zero(void **state)
{
	int64_t storage[LEAP_HSIZE_MAX];
	uint64_t out[LEAP_PW_LIMIT];
	struct leap_decision d;
	struct leap_stream s;
	struct leap_params p;
	uint64_t pt = 400;
	uint32_t n;
	(void)state;

	leap_params_default(&p);
	leap_stream_init(&s, storage, LEAP_HSIZE_MAX);
	for (int i = 0; i < 6; i++, pt -= STRIDE)
		leap_stream_access(&s, &p, pt, false, out, LEAP_PW_LIMIT, &d);
	for (int i = 0; i < 4; i++)
		leap_stream_late(&s, &p);
	n = leap_stream_access(&s, &p, pt, false, out, LEAP_PW_LIMIT, &d);
	/* The lead would go below 0: the window starts at the fault instead. */
	for (uint32_t i = 0; i < n; i++)
		assert_true(out[i] < pt);
}

/* The paper's flavour has no lead. */
static void test_paper_flavour_unchanged(void **state)
{
	int64_t storage[LEAP_HSIZE_MAX];
	struct leap_stream s;
	struct leap_params p;
	(void)state;

	leap_params_default(&p);
	p.flavor = LEAP_FLAVOR_PAPER;
	leap_stream_init(&s, storage, LEAP_HSIZE_MAX);
	leap_stream_late(&s, &p);
	assert_int_equal(s.lead, 0);
	assert_int_equal(s.stats.late, 0);
}

/*
 * With windows of up to 1024 pages the lead still stops at LEAP_LEAD_MAX
 * steps: doubling to pw_max sent a scan's next pass 1,024 steps ahead of
 * its faults, one page a window, and every page before them missed.
 */
static void test_lead_capped(void **state)
{
	int64_t storage[LEAP_HSIZE_MAX];
	uint64_t out[LEAP_PW_LIMIT];
	struct leap_decision d;
	struct leap_stream s;
	struct leap_params p;
	uint64_t pt = 100000;
	(void)state;

	leap_params_default(&p);
	assert_int_equal(p.pw_max, 1024);
	leap_stream_init(&s, storage, LEAP_HSIZE_MAX);
	for (int i = 0; i < 6; i++, pt += STRIDE)
		leap_stream_access(&s, &p, pt, false, out, LEAP_PW_LIMIT, &d);
	for (int i = 0; i < 20; i++, pt += STRIDE) {
		leap_stream_late(&s, &p);
		assert_true(s.lead <= LEAP_LEAD_MAX);
		leap_stream_access(&s, &p, pt, false, out, LEAP_PW_LIMIT, &d);
	}
	assert_int_equal(s.lead, LEAP_LEAD_MAX);
	/* The window starts LEAP_LEAD_MAX steps past the fault, no further. */
	leap_stream_late(&s, &p);
	leap_stream_access(&s, &p, pt, false, out, LEAP_PW_LIMIT, &d);
	assert_true(d.count > 0);
	assert_true(out[0] <= pt + (uint64_t)(LEAP_LEAD_MAX + 1) * STRIDE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_late_windows_lead),
		cmocka_unit_test(test_lead_backwards_stops_at_zero),
		cmocka_unit_test(test_paper_flavour_unchanged),
		cmocka_unit_test(test_lead_capped),
	};
	return cmocka_run_group_tests_name("lead", tests, NULL, NULL);
}
