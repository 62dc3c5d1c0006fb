// SPDX-License-Identifier: MIT
/* leap_cost: standing down where prefetching cannot pay. */
#include <string.h>

#include "engine_test.h"
#include "leap/cost.h"

#define US 1000ULL
#define S  (1000ULL * 1000 * 1000)

/* /proc/swaps: a disk only; zram only; zram first in line above a disk
 * that holds most of what is swapped (older pages). */
static const struct leap_cost_swap disk = {.sync_pct = 0, .top_sync = false};
static const struct leap_cost_swap zram = {.sync_pct = 100, .top_sync = true};
static const struct leap_cost_swap zram_first = {.sync_pct = 30, .top_sync = true};

/* n page-ins of miss_ns (blocked ones: n * blocked_pct / 100), a window
 * of pages costing page_ns each, hits. */
static void feed(struct leap_cost *c, uint32_t n, uint64_t miss_ns, uint32_t blocked_pct,
		 uint32_t pages, uint64_t page_ns, uint32_t hits)
{
	for (uint32_t i = 0; i < n; i++)
		leap_cost_miss(c, miss_ns, i * 100 < n * blocked_pct, true);
	leap_cost_spent(c, pages, (uint64_t)pages * page_ns);
	leap_cost_planned(c, pages);
	for (uint32_t i = 0; i < hits; i++)
		leap_cost_hit(c, 2 * US);
}

/* A disk: page-ins of 80 us that wait for I/O, 9 us a prefetched page,
 * 90% of them hit: prefetch. */
static void test_disk_prefetches(void **state)
{
	struct leap_cost_params p;
	struct leap_cost c;
	(void)state;

	leap_cost_params_default(&p);
	leap_cost_init(&c, &p);
	feed(&c, 7, 80 * US, 100, 1000, 9 * US, 900);
	assert_false(leap_cost_update(&c, &p, 1 * S, &disk)); /* 7 < min_misses */
	assert_string_equal(c.why, "");
	feed(&c, 1, 80 * US, 100, 0, 0, 0);
	assert_false(leap_cost_update(&c, &p, 1 * S, &disk));
	assert_int_equal(c.state, LEAP_COST_PREFETCH);
	assert_int_equal(c.accuracy_pct, 90);
	assert_int_equal(c.blocked_pct, 100);
	assert_string_equal(c.why,
			    "page-ins of 80.0 us, 100% of them waiting for I/O: a "
			    "prefetch hides the wait (prefetched pages 9.0 us each, 90% "
			    "used)");
	/* The sample starts over after a verdict. */
	assert_int_equal(c.s.misses, 0);
	/* Misses alone: min_events of them before a verdict. */
	feed(&c, 63, 80 * US, 100, 0, 0, 0);
	assert_false(leap_cost_update(&c, &p, 1 * S, &disk));
	assert_int_equal(c.s.misses, 63);
	feed(&c, 1, 80 * US, 100, 1000, 9 * US, 900);
	assert_false(leap_cost_update(&c, &p, 1 * S, &disk));
	assert_int_equal(c.state, LEAP_COST_PREFETCH);
}

/*
 * zram (/proc/swaps: all swap in use on it): page-ins of 20 us are CPU
 * work in the faulting thread: stand down, and probe after 5 s, then 10,
 * 20, 40, 60, 60 while the verdict holds.
 */
static void test_zram_stands_down_and_probes(void **state)
{
	const uint64_t waits[] = {5, 10, 20, 40, 60, 60};
	struct leap_cost_params p;
	struct leap_cost c;
	uint64_t now = 100 * S;
	(void)state;

	leap_cost_params_default(&p);
	leap_cost_init(&c, &p);
	/* One page-in is enough to judge on zram. */
	feed(&c, 1, 20 * US, 0, 0, 0, 0);
	assert_true(leap_cost_update(&c, &p, now - 1, &zram));
	assert_int_equal(c.state, LEAP_COST_STANDBY);
	leap_cost_init(&c, &p);
	for (size_t i = 0; i < sizeof(waits) / sizeof(waits[0]); i++) {
		feed(&c, 64, 20 * US, 0, 1000, 5 * US, 900);
		assert_true(leap_cost_update(&c, &p, now, &zram));
		assert_int_equal(c.state, LEAP_COST_STANDBY);
		assert_string_equal(c.why,
				    "zram or pmem holds 100% of the swap in use and is "
				    "first in line: page-ins of 20.0 us, 0% of them "
				    "waiting for I/O, are CPU work a prefetch cannot "
				    "hide");
		assert_int_equal(c.probe_at_ns, now + waits[i] * S);
		/* Standing down: nothing changes before the probe. */
		assert_false(leap_cost_update(&c, &p, c.probe_at_ns - 1, &zram));
		now = c.probe_at_ns;
		assert_true(leap_cost_update(&c, &p, now, &zram));
		assert_int_equal(c.state, LEAP_COST_PREFETCH);
		assert_int_equal(c.probes, i + 1);
	}
	assert_int_equal(c.stand_downs, 6);
	/* The swap moved to a disk (a phase change): prefetch.  Back on zram,
	 * stand down, and the next stand-down waits 5 s again. */
	feed(&c, 64, 120 * US, 95, 1000, 9 * US, 900);
	assert_false(leap_cost_update(&c, &p, now, &disk));
	assert_int_equal(c.state, LEAP_COST_PREFETCH);
	feed(&c, 64, 20 * US, 0, 1000, 5 * US, 900);
	assert_true(leap_cost_update(&c, &p, now, &zram));
	assert_int_equal(c.probe_at_ns, now + 5 * S);
}

/* Two programs on two cores: page-ins of a full cgroup reclaim in the
 * faulting thread and rarely block, but the swap is a disk: prefetch. */
static void test_unblocked_disk_prefetches(void **state)
{
	struct leap_cost_params p;
	struct leap_cost c;
	(void)state;

	leap_cost_params_default(&p);
	leap_cost_init(&c, &p);
	feed(&c, 64, 178 * US, 19, 1000, 5 * US, 700);
	assert_false(leap_cost_update(&c, &p, 0, &disk));
	assert_int_equal(c.state, LEAP_COST_PREFETCH);
	assert_int_equal(c.blocked_pct, 20);
}

/* zram first in line above a disk holding older pages: the page-ins,
 * which do not block, decide (the 16-core host: 0.56-0.64x before). */
static void test_zram_above_a_disk(void **state)
{
	struct leap_cost_params p;
	struct leap_cost c;
	(void)state;

	leap_cost_params_default(&p);
	leap_cost_init(&c, &p);
	feed(&c, 64, 3 * US, 0, 1000, 5 * US, 900);
	assert_true(leap_cost_update(&c, &p, 0, &zram_first));
	assert_int_equal(c.state, LEAP_COST_STANDBY);
	/* The same devices, page-ins that wait: the disk serves them. */
	leap_cost_init(&c, &p);
	feed(&c, 64, 60 * US, 90, 1000, 5 * US, 900);
	assert_false(leap_cost_update(&c, &p, 0, &zram_first));
	assert_int_equal(c.state, LEAP_COST_PREFETCH);
}

/* Random access, or streams the kernel's readahead serves: almost
 * nothing prefetched over 1,024 page-ins of read streams: stand down. */
static void test_nothing_to_add(void **state)
{
	struct leap_cost_params p;
	struct leap_cost c;
	(void)state;

	leap_cost_params_default(&p);
	leap_cost_init(&c, &p);
	/* One sample without windows is not enough (a phase change). */
	feed(&c, 64, 80 * US, 100, 0, 9 * US, 0);
	assert_false(leap_cost_update(&c, &p, 0, &disk));
	assert_int_equal(c.state, LEAP_COST_PREFETCH);
	/* Over 1,024 page-ins, one page per 100 goes on and starts the
	 * count over. */
	feed(&c, 1000, 80 * US, 100, 11, 9 * US, 0);
	assert_false(leap_cost_update(&c, &p, 0, &disk));
	assert_int_equal(c.state, LEAP_COST_PREFETCH);
	assert_int_equal(c.idle_reads, 0);
	/* Fewer stand down. */
	feed(&c, 1000, 80 * US, 100, 9, 9 * US, 0);
	assert_false(leap_cost_update(&c, &p, 0, &disk));
	feed(&c, 64, 80 * US, 100, 0, 9 * US, 0);
	assert_true(leap_cost_update(&c, &p, 0, &disk));
	assert_int_equal(c.state, LEAP_COST_STANDBY);
	assert_string_equal(c.why,
			    "nothing to add: windows of 9 pages for 1064 page-ins of "
			    "read streams (Linux's readahead, or nothing, serves "
			    "them)");
	/* A chance window of random access in a small sample (1 page for 55
	 * page-ins, tests/data/recordings/py-random.rec) is judged with the
	 * page-ins after it. */
	leap_cost_init(&c, &p);
	feed(&c, 55, 80 * US, 100, 1, 9 * US, 0);
	assert_false(leap_cost_update(&c, &p, 0, &disk));
	feed(&c, 1000, 80 * US, 100, 0, 9 * US, 0);
	assert_true(leap_cost_update(&c, &p, 0, &disk));
	assert_string_equal(c.why,
			    "nothing to add: windows of 1 page for 1055 page-ins of "
			    "read streams (Linux's readahead, or nothing, serves "
			    "them)");
	/* Windows issued whose pages have not come back as spent (a starved
	 * agent's batch: the workers are behind) are something to add. */
	leap_cost_init(&c, &p);
	for (int i = 0; i < 4; i++) {
		for (int k = 0; k < 1100; k++)
			leap_cost_miss(&c, 80 * US, true, true);
		leap_cost_planned(&c, 64);
		assert_false(leap_cost_update(&c, &p, 0, &disk));
	}
	assert_int_equal(c.state, LEAP_COST_PREFETCH);
	/* One page for every 100 page-ins is enough to go on. */
	leap_cost_init(&c, &p);
	for (int i = 0; i < 4; i++) {
		feed(&c, 1000, 80 * US, 100, 10, 9 * US, 0);
		assert_false(leap_cost_update(&c, &p, 0, &disk));
	}
	assert_int_equal(c.state, LEAP_COST_PREFETCH);
}

/* Page-ins of fills (a write, zero-filled entries) ask for nothing while
 * the scan after them may: they never count as nothing to add. */
static void test_fills_do_not_count(void **state)
{
	struct leap_cost_params p;
	struct leap_cost c;
	(void)state;

	leap_cost_params_default(&p);
	leap_cost_init(&c, &p);
	for (int round = 0; round < 32; round++) {
		for (int i = 0; i < 64; i++)
			leap_cost_miss(&c, 80 * US, true, false);
		assert_false(leap_cost_update(&c, &p, 0, &disk));
	}
	assert_int_equal(c.state, LEAP_COST_PREFETCH);
	/* Nothing prefetched: no cost, no share used to report. */
	assert_string_equal(c.why,
			    "page-ins of 80.0 us, 100% of them waiting for I/O: a "
			    "prefetch hides the wait (prefetched pages 0.0 us each)");
}

/*
 * A fill's windows hit little, the scan's after it nearly all: accuracy
 * is reported, never a reason to stand down (on a disk, page-ins wait).
 */
static void test_accuracy_is_not_judged(void **state)
{
	struct leap_cost_params p;
	struct leap_cost c;
	(void)state;

	leap_cost_params_default(&p);
	leap_cost_init(&c, &p);
	feed(&c, 64, 50 * US, 100, 66, 3 * US, 0);
	assert_false(leap_cost_update(&c, &p, 0, &disk));
	assert_int_equal(c.accuracy_pct, 0); /* too few pages to say */
	feed(&c, 64, 50 * US, 100, 2000, 3 * US, 40);
	assert_false(leap_cost_update(&c, &p, 0, &disk));
	assert_int_equal(c.state, LEAP_COST_PREFETCH);
	assert_int_equal(c.accuracy_pct, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_disk_prefetches),
		cmocka_unit_test(test_zram_stands_down_and_probes),
		cmocka_unit_test(test_unblocked_disk_prefetches),
		cmocka_unit_test(test_zram_above_a_disk),
		cmocka_unit_test(test_nothing_to_add),
		cmocka_unit_test(test_fills_do_not_count),
		cmocka_unit_test(test_accuracy_is_not_judged),
	};
	return cmocka_run_group_tests_name("cost", tests, NULL, NULL);
}
