// SPDX-License-Identifier: MIT
/*
 * The decision step (user/lib/decide.c): what one fault asks for, with the
 * one fact that needs I/O (is the gap between two misses mapped?) answered
 * by a stand-in that counts how often it is asked.
 */
#include <string.h>

#include "engine_test.h"
#include "leap/decide.h"

static struct {
	bool answer;
	unsigned asked;
	bool shmem;
	unsigned shmem_asked;
	uint64_t first;
	uint32_t n;
} fact;

static bool fake_mapped(void *ctx, uint64_t first, uint32_t n)
{
	(void)ctx;
	fact.asked++;
	fact.first = first;
	fact.n = n;
	return fact.answer;
}

/* Shared memory, for the pages the rig says (fact.shmem). */
static bool fake_shmem(void *ctx, uint64_t page)
{
	(void)ctx;
	(void)page;
	fact.shmem_asked++;
	return fact.shmem;
}

static const struct leap_decide_facts facts = {.mapped = fake_mapped,
					       .shmem = fake_shmem};

struct rig {
	int64_t storage[LEAP_HSIZE_MAX];
	struct leap_stream s;
	struct leap_params p;
	struct leap_decide_cfg cfg;
	uint64_t out[LEAP_PW_LIMIT];
	struct leap_plan plan;
};

static void rig_init(struct rig *r, uint32_t ra_pages)
{
	memset(r, 0, sizeof(*r));
	memset(&fact, 0, sizeof(fact));
	leap_params_default(&r->p);
	leap_stream_init(&r->s, r->storage, LEAP_HSIZE_MAX);
	r->cfg = (struct leap_decide_cfg){.ra_pages = ra_pages,
					  .follow_kernel_ra = true,
					  .lead_on_late = true,
					  .kra_trust = 3};
}

static uint32_t decide(struct rig *r, const struct leap_fault *f)
{
	return leap_decide(&r->s, &r->p, &r->cfg, f, &facts, r->out, LEAP_PW_LIMIT,
			   &r->plan);
}

static uint32_t miss(struct rig *r, uint64_t page, bool fill)
{
	return decide(r, &(struct leap_fault){.page = page, .fill = fill});
}

/*
 * A stride wider than the kernel's readahead reach never asks, and the
 * decision is the engine's own: the same windows as leap_stream_access()
 * on a twin stream (one program's decisions are unchanged).
 */
static void test_wide_stride_is_the_engines(void **state)
{
	int64_t twin_storage[LEAP_HSIZE_MAX];
	uint64_t twin_out[LEAP_PW_LIMIT];
	struct leap_decision d;
	struct leap_stream twin;
	static struct rig r;
	uint64_t pt = 5000;
	uint32_t windows = 0;
	(void)state;

	rig_init(&r, 8);
	leap_stream_init(&twin, twin_storage, LEAP_HSIZE_MAX);
	for (int i = 0; i < 40; i++, pt += 16) {
		uint32_t n = miss(&r, pt, false);
		uint32_t m = leap_stream_access(&twin, &r.p, pt, false, twin_out,
						LEAP_PW_LIMIT, &d);

		assert_int_equal(n, m);
		assert_memory_equal(r.out, twin_out, n * sizeof(*twin_out));
		assert_true(r.plan.kra_checked);
		assert_int_equal(r.plan.ra_gap, 0);
		assert_false(r.plan.hold);
		windows += n > 0;
	}
	assert_int_equal(fact.asked, 0);
	assert_true(windows > 30);
}

/*
 * Misses every 8 pages with the gaps mapped: the kernel's readahead
 * serves a read stream.  The first gap is asked about, the next three
 * are taken on trust, the fifth is asked again; the windows start past
 * the kernel's reach; nothing is held.
 */
static void test_served_read_stream_goes_beyond(void **state)
{
	static struct rig r;
	uint64_t pt = 1000;
	(void)state;

	rig_init(&r, 8);
	fact.answer = true;
	miss(&r, pt, false); /* no previous miss: nothing to ask */
	assert_int_equal(fact.asked, 0);
	pt += 8;
	miss(&r, pt, false);
	assert_int_equal(fact.asked, 1);
	assert_int_equal(fact.first, 1001);
	assert_int_equal(fact.n, 7);
	assert_int_equal(r.plan.ra_gap, 8);
	assert_false(r.plan.hold);
	for (int i = 0; i < 3; i++) {
		pt += 8;
		miss(&r, pt, false);
		assert_int_equal(r.plan.ra_gap, 8);
		assert_false(r.plan.asked);
	}
	assert_int_equal(fact.asked, 1);
	pt += 8;
	miss(&r, pt, false);
	assert_true(r.plan.asked);
	assert_int_equal(fact.asked, 2);
	/* After a few misses the trend is +1 and the window starts beyond
	 * what the kernel is reading around pt. */
	for (int i = 0; i < 6; i++) {
		pt += 8;
		miss(&r, pt, false);
	}
	assert_true(r.plan.n > 0);
	assert_true(r.out[0] >= pt + 7);
	assert_int_equal(r.plan.cold_n, 0); /* a read stream: nothing made cold */
}

/*
 * A served fill is held (its window counted, not meant to be issued),
 * and the pages it went past come out for MADV_COLD, cold_behind pages
 * behind it, in runs of at least cold_chunk.
 */
static void test_served_fill_held_and_cold(void **state)
{
	static struct rig r;
	uint64_t pt = 20000, cold_pages = 0, cold_end = 0;
	(void)state;

	rig_init(&r, 8);
	r.cfg.cold_behind = 64;
	r.cfg.cold_chunk = 16;
	fact.answer = true;
	for (int i = 0; i < 60; i++, pt += 8) {
		miss(&r, pt, true);
		if (i > 0)
			assert_true(r.plan.hold);
		if (r.plan.cold_n) {
			assert_true(r.plan.cold_n >= 16);
			assert_true(r.plan.cold_first + r.plan.cold_n <= pt - 64);
			cold_pages += r.plan.cold_n;
			cold_end = r.plan.cold_first + r.plan.cold_n;
		}
	}
	assert_true(cold_pages > 300);
	assert_true(cold_end <= pt - 64);

	/* Pushed only: never held, and the window goes past the kernel's. */
	rig_init(&r, 8);
	r.cfg.hold_none = true;
	fact.answer = true;
	for (int i = 0; i < 10; i++, pt += 8) {
		miss(&r, pt, true);
		assert_false(r.plan.hold);
	}
	assert_int_equal(r.plan.ra_gap, 8);
}

/*
 * A read stream in shared memory: served, it is held as a fill is, with
 * nothing made cold (it is not done with its pages); not served (a stride
 * past the kernel's reach), it gets windows as in private memory, and
 * shared memory is never asked about: only a served read stream asks.
 */
static void test_shmem_read_stream(void **state)
{
	static struct rig r;
	uint64_t pt = 40000;
	uint32_t windows = 0;
	(void)state;

	rig_init(&r, 8);
	r.cfg.cold_behind = 64;
	r.cfg.cold_chunk = 16;
	fact.answer = true;
	fact.shmem = true;
	for (int i = 0; i < 30; i++, pt += 8) {
		miss(&r, pt, false);
		if (i > 0) {
			assert_int_equal(r.plan.ra_gap, 8);
			assert_true(r.plan.hold);
			assert_true(r.plan.shmem);
		}
		assert_int_equal(r.plan.cold_n, 0);
	}
	assert_int_equal(fact.shmem_asked, 29);

	rig_init(&r, 8);
	fact.answer = false;
	fact.shmem = true;
	for (int i = 0; i < 20; i++, pt += 16) {
		windows += miss(&r, pt, false) > 0;
		assert_false(r.plan.hold);
	}
	assert_true(windows > 10);
	assert_int_equal(fact.shmem_asked, 0);

	/* A served fill is held without asking. */
	rig_init(&r, 8);
	fact.answer = true;
	fact.shmem = true;
	for (int i = 0; i < 10; i++, pt += 8)
		miss(&r, pt, true);
	assert_true(r.plan.hold);
	assert_int_equal(fact.shmem_asked, 0);
}

/* An unmapped gap is a real stride of 8: asked every time, windows out. */
static void test_unmapped_gap_is_a_stride(void **state)
{
	static struct rig r;
	uint64_t pt = 3000;
	uint32_t windows = 0;
	(void)state;

	rig_init(&r, 8);
	fact.answer = false;
	for (int i = 0; i < 20; i++, pt += 8) {
		windows += miss(&r, pt, false) > 0;
		assert_int_equal(r.plan.ra_gap, 0);
		assert_false(r.plan.hold);
	}
	assert_int_equal(fact.asked, 19);
	assert_true(windows > 10);
	assert_int_equal((r.out[0] - (pt - 8)) % 8, 0);
}

/*
 * A hit asks nothing; readahead off asks nothing; a late miss leads only
 * where the agent wants leads (not in backend mode).
 */
static void test_hits_readahead_off_and_late(void **state)
{
	static struct rig r;
	struct leap_fault f = {.page = 100, .hit = true};
	uint64_t pt = 8000;
	(void)state;

	rig_init(&r, 8);
	fact.answer = true;
	miss(&r, 92, false);
	leap_decide(&r.s, &r.p, &r.cfg, &f, &facts, r.out, LEAP_PW_LIMIT, &r.plan);
	assert_false(r.plan.kra_checked);
	assert_int_equal(fact.asked, 0);

	rig_init(&r, 0);
	fact.answer = true;
	for (int i = 0; i < 5; i++, pt += 4)
		miss(&r, pt, false);
	assert_int_equal(fact.asked, 0);

	for (int lead = 0; lead < 2; lead++) {
		rig_init(&r, 0);
		r.cfg.lead_on_late = lead;
		pt = 8000;
		for (int i = 0; i < 6; i++, pt += 8)
			miss(&r, pt, false);
		f = (struct leap_fault){.page = pt, .late = true};
		leap_decide(&r.s, &r.p, &r.cfg, &f, &facts, r.out, LEAP_PW_LIMIT,
			    &r.plan);
		if (lead)
			assert_true(r.s.lead > 0);
		else
			assert_int_equal(r.s.lead, 0);
	}
}

/*
 * Random misses with a hit now and then (SQLite's look-ups: a row's page
 * and the one its page header spills into): Chit keeps the paper's window
 * open, and with no trend, found or lately, it goes "around" the miss.
 * With the kernel's readahead on (ra_pages > 0) that window is left to the
 * kernel, which reads around the miss itself; with it off, ours goes out,
 * the nearest pages first.
 */
static void test_around_left_to_kernel_readahead(void **state)
{
	static struct rig r;
	(void)state;

	for (uint32_t ra = 0; ra <= 8; ra += 8) {
		uint64_t x = 12345, windows = 0, pages = 0, around = 0;

		rig_init(&r, ra);
		for (int i = 0; i < 400; i++) {
			uint64_t pt;

			x = x * 6364136223846793005ull + 1442695040888963407ull;
			pt = 100000 + (x >> 33) % 50000;
			miss(&r, pt, false);
			if (r.plan.n > 0) {
				windows++;
				pages += r.plan.n;
				assert_false(r.plan.dec.trend_found);
				assert_int_equal(r.out[0], pt + 1);
				if (r.plan.n > 1)
					assert_int_equal(r.out[1], pt - 1);
			}
			around += r.plan.dec.around_left;
			/* The neighbour it spills into, prefetched: a hit. */
			if (i % 3 == 0)
				decide(&r,
				       &(struct leap_fault){.page = pt + 1, .hit = true});
		}
		if (ra) {
			assert_int_equal(windows, 0);
			assert_true(around > 100);
			assert_int_equal(r.s.stats.around_left, around);
		} else {
			assert_true(windows > 100);
			assert_true(pages >= windows);
			assert_int_equal(around, 0);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wide_stride_is_the_engines),
		cmocka_unit_test(test_served_read_stream_goes_beyond),
		cmocka_unit_test(test_served_fill_held_and_cold),
		cmocka_unit_test(test_shmem_read_stream),
		cmocka_unit_test(test_unmapped_gap_is_a_stride),
		cmocka_unit_test(test_hits_readahead_off_and_late),
		cmocka_unit_test(test_around_left_to_kernel_readahead),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
