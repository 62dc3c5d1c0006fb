// SPDX-License-Identifier: MIT
/*
 * leap-sim's model (tools/sim): the dense trace, LRU + prefetch-cache
 * accounting, swap slots, Linux's readahead window rules step by step, and
 * invariants of whole replays for every policy.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../tools/sim/mem.h"
#include "../../tools/sim/sim.h"
#include "../../tools/sim/trace_load.h"

/* ---- dense trace ------------------------------------------------------ */

static void load_pages(struct sim_trace *t, const uint64_t *pages, const uint32_t *tids,
		       uint32_t n)
{
	struct leap_trace_rec *recs = calloc(n, sizeof(*recs));
	char err[200];

	assert_non_null(recs);
	for (uint32_t i = 0; i < n; i++) {
		recs[i].page = pages[i];
		recs[i].tid = tids ? tids[i] : 0;
	}
	assert_int_equal(sim_trace_from_records(t, recs, n, err, sizeof(err)), 0);
	free(recs);
}

static void test_trace_dense(void **state)
{
	const struct leap_trace_rec recs[] = {
		{.page = 50, .pid = 2, .tid = 7}, {.page = 10, .pid = 1, .tid = 1},
		{.page = 50, .pid = 2, .tid = 8}, {.page = 12, .pid = 1, .tid = 1},
		{.page = 10, .pid = 1, .tid = 3},
	};
	struct sim_trace t;
	char err[200];

	(void)state;
	assert_int_equal(sim_trace_from_records(&t, recs, 5, err, sizeof(err)), 0);
	assert_int_equal(t.nevents, 5);
	assert_int_equal(t.npages, 3); /* (1,10) (1,12) (2,50) */
	assert_int_equal(t.nthreads, 4);
	assert_int_equal(t.npids, 2);
	assert_int_equal(t.pid_first[0], 0);
	assert_int_equal(t.pid_first[1], 2);
	assert_int_equal(t.pid_first[2], 3);
	assert_int_equal(t.pages[t.ev_page[0]].page, 50);
	assert_int_equal(t.ev_page[0], t.ev_page[2]);
	assert_int_equal(t.ev_page[1], t.ev_page[4]);
	assert_int_equal(t.threads[t.ev_thread[4]].tid, 3);
	assert_int_equal(t.threads[t.ev_thread[0]].pidx, 1);
	assert_int_equal(sim_trace_find(&t, 0, 12), 1);
	assert_int_equal(sim_trace_find(&t, 0, 50), SIM_NONE); /* other process */
	assert_int_equal(sim_trace_find(&t, 1, 50), 2);
	assert_int_equal(sim_trace_find(&t, 0, 11), SIM_NONE);
	sim_trace_free(&t);

	assert_int_equal(sim_trace_from_records(&t, recs, 0, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "no accesses"));
}

static void test_trace_load_error_names_line(void **state)
{
	static const char text[] = "1\n2\n\n0xzz\n";
	FILE *f = fmemopen((void *)text, sizeof(text) - 1, "r");
	struct sim_trace t;
	char err[400];

	(void)state;
	assert_int_equal(
		sim_trace_load(&t, f, "x.txt", LEAP_TRACE_AUTO, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "x.txt:4:"));
	fclose(f);
}

/* ---- memory model ----------------------------------------------------- */

static void test_mem_lru(void **state)
{
	struct sim_mem m;

	(void)state;
	assert_int_equal(sim_mem_init(&m, 10, 3, false), 0);
	for (uint32_t i = 0; i < 10; i++)
		assert_int_equal(sim_mem_state(&m, i), SIM_SWAPPED);
	sim_mem_fault_in(&m, 0);
	sim_mem_fault_in(&m, 1);
	sim_mem_fault_in(&m, 2);
	assert_int_equal(m.used, 3);
	sim_mem_touch(&m, 0); /* LRU order now 1, 2, 0 */
	sim_mem_fault_in(&m, 3);
	assert_int_equal(sim_mem_state(&m, 1), SIM_SWAPPED);
	assert_int_equal(sim_mem_state(&m, 0), SIM_RESIDENT);
	assert_int_equal(m.evictions, 1);
	assert_int_equal(m.unused_evicted, 0);
	assert_int_equal(m.used, 3);
	sim_mem_free(&m);
}

static void test_mem_prefetch_cache(void **state)
{
	struct sim_mem m;

	(void)state;
	assert_int_equal(sim_mem_init(&m, 10, 4, false), 0);
	sim_mem_fault_in(&m, 0);
	assert_true(sim_mem_prefetch(&m, 1));
	assert_true(sim_mem_prefetch(&m, 2));
	assert_false(sim_mem_prefetch(&m, 0)); /* resident: nothing to read */
	assert_false(sim_mem_prefetch(&m, 1)); /* already cached */
	assert_int_equal(m.ncached, 2);
	assert_int_equal(m.used, 3);
	/* Cached pages count against memory: two more pages evict 0 then 1. */
	assert_true(sim_mem_prefetch(&m, 3));
	sim_mem_fault_in(&m, 4);
	assert_int_equal(sim_mem_state(&m, 0), SIM_SWAPPED);
	assert_int_equal(m.unused_evicted, 0);
	sim_mem_fault_in(&m, 5);
	assert_int_equal(sim_mem_state(&m, 1), SIM_SWAPPED);
	assert_int_equal(m.unused_evicted, 1); /* pollution */
	assert_int_equal(m.ncached, 2);
	/* A hit makes the page resident and most recently used. */
	sim_mem_hit(&m, 2);
	assert_int_equal(sim_mem_state(&m, 2), SIM_RESIDENT);
	assert_int_equal(m.ncached, 1);
	assert_int_equal(m.head, 2);
	sim_mem_fault_in(&m, 6); /* evicts 3 (cached, unused), not 2 */
	assert_int_equal(sim_mem_state(&m, 3), SIM_SWAPPED);
	assert_int_equal(sim_mem_state(&m, 2), SIM_RESIDENT);
	assert_int_equal(m.unused_evicted, 2);
	assert_int_equal(m.evictions, 3);
	sim_mem_free(&m);
}

static void test_mem_slots(void **state)
{
	struct sim_mem m;

	(void)state;
	assert_int_equal(sim_mem_init(&m, 4, 2, true), 0);
	/* Initially in address order, slot 0 being the header. */
	for (uint32_t i = 0; i < 4; i++) {
		assert_int_equal(sim_mem_slot(&m, i), i + 1);
		assert_int_equal(sim_mem_page_at(&m, i + 1), i);
	}
	assert_int_equal(sim_mem_page_at(&m, 0), SIM_NONE);
	sim_mem_fault_in(&m, 2); /* frees slot 3 */
	assert_int_equal(sim_mem_slot(&m, 2), 0);
	assert_int_equal(sim_mem_page_at(&m, 3), SIM_NONE);
	assert_true(sim_mem_prefetch(&m, 0)); /* keeps slot 1 while cached */
	assert_int_equal(sim_mem_slot(&m, 0), 1);
	sim_mem_fault_in(&m, 3); /* evicts 2: next slot after the initial ones */
	assert_int_equal(sim_mem_slot(&m, 2), 5);
	assert_int_equal(sim_mem_page_at(&m, 5), 2);
	sim_mem_fault_in(&m, 1); /* evicts cached 0: it stays in slot 1 */
	assert_int_equal(sim_mem_state(&m, 0), SIM_SWAPPED);
	assert_int_equal(sim_mem_slot(&m, 0), 1);
	sim_mem_free(&m);
}

/* ---- Linux's readahead rules ------------------------------------------ */

static void test_linux_nr_pages(void **state)
{
	(void)state;
	/* No hits: adjacent fault 2 pages, otherwise 1. */
	assert_int_equal(sim_linux_nr_pages(100, 101, 0, 8, 0), 2);
	assert_int_equal(sim_linux_nr_pages(100, 99, 0, 8, 0), 2);
	assert_int_equal(sim_linux_nr_pages(100, 102, 0, 8, 0), 1);
	/* hits + 2 rounded up to a power of two, at least 4, capped. */
	assert_int_equal(sim_linux_nr_pages(0, 50, 1, 8, 0), 4);
	assert_int_equal(sim_linux_nr_pages(0, 50, 2, 8, 0), 4);
	assert_int_equal(sim_linux_nr_pages(0, 50, 3, 8, 0), 8);
	assert_int_equal(sim_linux_nr_pages(0, 50, 7, 8, 0), 8);
	assert_int_equal(sim_linux_nr_pages(0, 50, 7, 32, 0), 16);
	/* Shrinks no faster than half the previous window. */
	assert_int_equal(sim_linux_nr_pages(0, 50, 0, 8, 8), 4);
	assert_int_equal(sim_linux_nr_pages(0, 50, 0, 8, 4), 2);
	assert_int_equal(sim_linux_nr_pages(0, 50, 0, 8, 2), 1);
	assert_int_equal(sim_linux_nr_pages(0, 50, 0, 8, 3), 1);
}

static void test_linux_vma_sequence(void **state)
{
	struct sim_linux_ra ra = {0};
	uint64_t s, e;

	(void)state;
	/* A fresh VMA reads as 4 hits: window 8, centred (no direction). */
	assert_int_equal(sim_linux_vma_window(&ra, 1000, 3, 0, 1u << 20, &s, &e), 8);
	assert_int_equal(s, 997);
	assert_int_equal(e, 1005);
	assert_int_equal(ra.hits, 0);
	/* Four readahead hits; the last one becomes the previous address. */
	for (uint64_t p = 1001; p <= 1004; p++)
		sim_linux_vma_hit(&ra, p);
	assert_int_equal(ra.hits, 4);
	/* Adjacent forward fault: window ahead of the fault. */
	assert_int_equal(sim_linux_vma_window(&ra, 1005, 3, 0, 1u << 20, &s, &e), 8);
	assert_int_equal(s, 1005);
	assert_int_equal(e, 1013);
	/* A far fault without hits: halves, centred. */
	assert_int_equal(sim_linux_vma_window(&ra, 5000, 3, 0, 1u << 20, &s, &e), 4);
	assert_int_equal(s, 4999);
	assert_int_equal(e, 5003);
	/* Moving backward (previous = fault + 1): window behind the fault. */
	assert_int_equal(sim_linux_vma_window(&ra, 4999, 3, 0, 1u << 20, &s, &e), 2);
	assert_int_equal(s, 4998);
	assert_int_equal(e, 5000);
	/* Another far one: 2 -> no adjacency, 1 = no readahead at all. */
	assert_int_equal(sim_linux_vma_window(&ra, 9000, 3, 0, 1u << 20, &s, &e), 1);
	assert_int_equal(sim_linux_vma_window(&ra, 9100, 3, 0, 1u << 20, &s, &e), 1);
	/* ... until faults are adjacent again. */
	assert_int_equal(sim_linux_vma_window(&ra, 9101, 3, 0, 1u << 20, &s, &e), 2);
	assert_int_equal(s, 9101);
	assert_int_equal(e, 9103);
}

static void test_linux_vma_clamps(void **state)
{
	struct sim_linux_ra ra = {0};
	uint64_t s, e;

	(void)state;
	/* PMD: 1022 lives in the 2 MiB block [512, 1024). */
	ra = (struct sim_linux_ra){.prev_page = 1021, .hits = 6};
	assert_int_equal(sim_linux_vma_window(&ra, 1022, 3, 0, 1u << 20, &s, &e), 8);
	assert_int_equal(s, 1022);
	assert_int_equal(e, 1024);
	/* No wrap below page 0: centred on 2, [-1, 7) becomes [0, 7). */
	ra = (struct sim_linux_ra){0};
	assert_int_equal(sim_linux_vma_window(&ra, 2, 3, 0, 100, &s, &e), 8);
	assert_int_equal(s, 0);
	assert_int_equal(e, 7);
	/* Page 1 right after the fresh state's address 0 counts as forward. */
	ra = (struct sim_linux_ra){0};
	assert_int_equal(sim_linux_vma_window(&ra, 1, 3, 0, 100, &s, &e), 8);
	assert_int_equal(s, 1);
	assert_int_equal(e, 9);
	/* VMA bounds. */
	ra = (struct sim_linux_ra){0};
	assert_int_equal(sim_linux_vma_window(&ra, 60, 3, 59, 62, &s, &e), 8);
	assert_int_equal(s, 59);
	assert_int_equal(e, 62);
	/* page-cluster 0 disables readahead and leaves the state alone. */
	ra = (struct sim_linux_ra){0};
	assert_int_equal(sim_linux_vma_window(&ra, 60, 0, 0, 100, &s, &e), 1);
	assert_int_equal(ra.prev_page, 0);
	/* The window order is capped at SWAP_RA_ORDER_CEILING (5). */
	ra = (struct sim_linux_ra){.hits = 63};
	assert_int_equal(sim_linux_vma_window(&ra, 5000, 8, 0, 1u << 20, &s, &e), 32);
}

/* ---- whole replays ---------------------------------------------------- */

static struct sim_result run(const struct sim_trace *t, enum sim_policy_kind k,
			     uint32_t capacity)
{
	struct sim_policy_opts o;
	struct sim_config c = {.capacity = capacity, .hit_us = 1, .miss_us = 10};
	struct sim_result r;
	const char *why = NULL;

	sim_policy_opts_default(&o);
	if (sim_run(t, k, &o, &c, &r, &why))
		fail_msg("sim_run(%s): %s", sim_policy_name(k), why);
	return r;
}

static void make_pattern(struct sim_trace *t, uint32_t n, uint32_t passes, uint64_t step,
			 bool random_order, uint32_t threads)
{
	uint64_t *pages = malloc((size_t)n * passes * sizeof(*pages));
	uint32_t *tids = malloc((size_t)n * passes * sizeof(*tids));
	unsigned short rng[3] = {7, 8, 9};

	assert_non_null(pages);
	assert_non_null(tids);
	for (uint32_t p = 0, k = 0; p < passes; p++) {
		for (uint32_t i = 0; i < n; i++, k++) {
			uint32_t idx = random_order ? (uint32_t)(nrand48(rng) % n) : i;
			/* threads interleave round-robin over their own regions */
			uint32_t th = idx % threads, pos = idx / threads;

			pages[k] = 4096 + (uint64_t)th * 100000 + (uint64_t)pos * step;
			tids[k] = th + 1;
		}
	}
	load_pages(t, pages, tids, n * passes);
	free(pages);
	free(tids);
}

/* Every prefetched page is hit, evicted unused or still cached; every
 * access is resident, a hit or a miss. */
static void check_invariants(const struct sim_trace *t, const struct sim_result *r)
{
	uint64_t acc = 0, hits = 0, misses = 0;

	assert_int_equal(r->prefetched, r->hits + r->unused_evicted + r->unused_at_end);
	assert_int_equal(r->accesses, t->nevents);
	assert_true(r->hits + r->misses <= r->accesses);
	for (uint32_t i = 0; i < r->nthreads; i++) {
		acc += r->threads[i].accesses;
		hits += r->threads[i].hits;
		misses += r->threads[i].misses;
	}
	assert_int_equal(acc, r->accesses);
	assert_int_equal(hits, r->hits);
	assert_int_equal(misses, r->misses);
	assert_true(r->est_time_us == (double)r->misses * 10 + (double)r->hits);
}

static void test_replay_invariants(void **state)
{
	static const struct {
		uint64_t step;
		bool random;
		uint32_t threads;
	} shapes[] = {
		{1, false, 1}, {7, false, 1}, {1, true, 1}, {1, false, 4}, {3, true, 3}};

	(void)state;
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		struct sim_trace t;

		make_pattern(&t, 2000, 3, shapes[s].step, shapes[s].random,
			     shapes[s].threads);
		for (int k = 0; k < SIM_POL_COUNT; k++) {
			for (uint32_t cap = 1; cap <= 4096; cap *= 8) {
				struct sim_result r =
					run(&t, (enum sim_policy_kind)k, cap);

				check_invariants(&t, &r);
				if (k == SIM_POL_NONE) {
					assert_int_equal(r.prefetched, 0);
					assert_int_equal(r.hits, 0);
				}
				sim_result_free(&r);
			}
		}
		sim_trace_free(&t);
	}
}

static void test_replay_numbers(void **state)
{
	struct sim_trace t;
	struct sim_result r;

	(void)state;
	/* Sequential, memory of half the footprint: every access faults. */
	make_pattern(&t, 1024, 2, 1, false, 1);
	r = run(&t, SIM_POL_NONE, 512);
	assert_int_equal(r.misses, 2048);
	sim_result_free(&r);
	/* Linux settles at 8-page windows: 7 hits per miss. */
	r = run(&t, SIM_POL_LINUX, 512);
	assert_true(r.coverage > 0.87 && r.coverage < 0.88);
	assert_true(r.accuracy > 0.99);
	sim_result_free(&r);
	/* next-n with n = 8: 8 hits per miss. */
	r = run(&t, SIM_POL_NEXT_N, 512);
	assert_true(r.coverage > 0.88 && r.coverage < 0.89);
	sim_result_free(&r);
	/* Leap's window grows to pw_max (1024). */
	r = run(&t, SIM_POL_LEAP, 512);
	assert_true(r.coverage > 0.95);
	sim_result_free(&r);
	/* All of it fits: only the first pass faults. */
	r = run(&t, SIM_POL_NONE, 1024);
	assert_int_equal(r.misses, 1024);
	sim_result_free(&r);
	sim_trace_free(&t);

	/* Stride 5: Linux never sees adjacent faults, the stride policies do. */
	make_pattern(&t, 1024, 2, 5, false, 1);
	r = run(&t, SIM_POL_LINUX, 512);
	assert_true(r.coverage < 0.05);
	sim_result_free(&r);
	r = run(&t, SIM_POL_STRIDE, 512);
	assert_true(r.coverage > 0.85);
	sim_result_free(&r);
	sim_trace_free(&t);
}

static void test_parse_memory(void **state)
{
	uint32_t pages;

	(void)state;
	assert_int_equal(sim_parse_memory("100", 1000, &pages), 0);
	assert_int_equal(pages, 100);
	assert_int_equal(sim_parse_memory("50%", 1001, &pages), 0);
	assert_int_equal(pages, 501);
	assert_int_equal(sim_parse_memory("0.01%", 1000, &pages), 0);
	assert_int_equal(pages, 1);
	assert_int_equal(sim_parse_memory("200%", 10, &pages), 0);
	assert_int_equal(pages, 20);
	assert_int_equal(sim_parse_memory("0", 10, &pages), -1);
	assert_int_equal(sim_parse_memory("-5", 10, &pages), -1);
	assert_int_equal(sim_parse_memory("5x", 10, &pages), -1);
	assert_int_equal(sim_parse_memory("1.5", 10, &pages), -1);
	assert_int_equal(sim_parse_memory("%", 10, &pages), -1);
	assert_int_equal(sim_parse_memory("", 10, &pages), -1);
	assert_int_equal(sim_parse_memory("99999999999", 10, &pages), -1);
}

static void test_policy_names(void **state)
{
	(void)state;
	for (int k = 0; k < SIM_POL_COUNT; k++) {
		enum sim_policy_kind got;

		assert_int_equal(
			sim_policy_parse(sim_policy_name((enum sim_policy_kind)k), &got),
			0);
		assert_int_equal(got, k);
		assert_non_null(strstr(sim_policy_names(),
				       sim_policy_name((enum sim_policy_kind)k)));
	}
	enum sim_policy_kind got;

	assert_int_equal(sim_policy_parse("linuxx", &got), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trace_dense),
		cmocka_unit_test(test_trace_load_error_names_line),
		cmocka_unit_test(test_mem_lru),
		cmocka_unit_test(test_mem_prefetch_cache),
		cmocka_unit_test(test_mem_slots),
		cmocka_unit_test(test_linux_nr_pages),
		cmocka_unit_test(test_linux_vma_sequence),
		cmocka_unit_test(test_linux_vma_clamps),
		cmocka_unit_test(test_replay_invariants),
		cmocka_unit_test(test_replay_numbers),
		cmocka_unit_test(test_parse_memory),
		cmocka_unit_test(test_policy_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
