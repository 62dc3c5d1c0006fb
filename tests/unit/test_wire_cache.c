// SPDX-License-Identifier: MIT
/* leap-swapd's prefetch cache: eager eviction, kept pages, invalidation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "cache.h"

static uint8_t page[4096];

static void fetch(struct pcache *c, uint64_t pg, uint8_t fill)
{
	uint8_t *p = pcache_begin(c, pg);

	assert_non_null(p);
	memset(p, fill, 4096);
	pcache_end(c, pg, true);
}

static void test_eager_eviction(void **state)
{
	struct pcache c;
	struct pcache_stats st;
	(void)state;

	assert_int_equal(pcache_init(&c, 8), 0);
	c.demand_fresh_ns = 0;			       /* test_demand_read has the skip */
	assert_int_equal(pcache_take(&c, 5, page), 0); /* miss */
	fetch(&c, 5, 0x55);
	assert_null(pcache_begin(&c, 5)); /* already cached */
	assert_int_equal(pcache_take(&c, 5, page), 1);
	assert_int_equal(page[4095], 0x55);
	/* Evicted on the hit. */
	assert_int_equal(pcache_take(&c, 5, page), 0);
	pcache_get_stats(&c, &st);
	assert_int_equal(st.hits, 1);
	assert_int_equal(st.misses, 2);
	assert_int_equal(st.evicted_hit, 1);
	assert_int_equal(st.cached, 0);
	/* Prefetched and hit again after that eviction: kept from now on. */
	fetch(&c, 5, 0x66);
	assert_int_equal(pcache_take(&c, 5, page), 1);
	assert_int_equal(pcache_take(&c, 5, page), 1);
	assert_int_equal(page[0], 0x66);
	pcache_get_stats(&c, &st);
	assert_int_equal(st.kept, 2);
	assert_int_equal(st.cached, 1);
	pcache_fini(&c);
}

static void test_invalidation(void **state)
{
	struct pcache c;
	struct pcache_stats st;
	uint8_t *p;
	(void)state;

	assert_int_equal(pcache_init(&c, 8), 0);
	fetch(&c, 1, 1);
	pcache_invalidate(&c, 1); /* written: the copy is old */
	assert_int_equal(pcache_take(&c, 1, page), 0);
	/* A write while the fetch is in flight: the fetched data is discarded. */
	p = pcache_begin(&c, 2);
	assert_non_null(p);
	pcache_invalidate(&c, 2);
	memset(p, 2, 4096);
	pcache_end(&c, 2, true);
	assert_int_equal(pcache_take(&c, 2, page), 0);
	/* A failed fetch leaves nothing. */
	assert_non_null(pcache_begin(&c, 3));
	pcache_end(&c, 3, false);
	assert_int_equal(pcache_take(&c, 3, page), 0);
	pcache_get_stats(&c, &st);
	assert_int_equal(st.invalidated, 2);
	assert_int_equal(st.cached, 0);
	assert_int_equal(st.prefetched, 1);
	pcache_fini(&c);
}

static void test_full(void **state)
{
	struct pcache c;
	struct pcache_stats st;
	(void)state;

	assert_int_equal(pcache_init(&c, 4), 0);
	for (uint64_t pg = 0; pg < 4; pg++)
		fetch(&c, pg * 10, (uint8_t)pg);
	/* Full: the oldest ready entry makes room. */
	fetch(&c, 100, 9);
	assert_int_equal(pcache_take(&c, 0, page), 0);
	assert_int_equal(pcache_take(&c, 10, page), 1);
	assert_int_equal(page[0], 1);
	/* All entries fetching: nothing can be evicted. */
	pcache_fini(&c);
	assert_int_equal(pcache_init(&c, 2), 0);
	assert_non_null(pcache_begin(&c, 1));
	assert_non_null(pcache_begin(&c, 2));
	assert_null(pcache_begin(&c, 3));
	pcache_end(&c, 1, true);
	pcache_end(&c, 2, true);
	assert_non_null(pcache_begin(&c, 3));
	pcache_end(&c, 3, true);
	pcache_get_stats(&c, &st);
	assert_int_equal(st.evicted_unused, 1);
	assert_int_equal(st.cached, 2);
	pcache_fini(&c);
	assert_int_not_equal(pcache_init(&c, 0), 0);
}

/* A page just read on demand is not fetched again; a write ends that, and
 * so does time. */
static void test_demand_read(void **state)
{
	struct pcache c;
	struct pcache_stats st;
	(void)state;

	assert_int_equal(pcache_init(&c, 8), 0);
	assert_int_equal(pcache_take(&c, 3, page), 0); /* the kernel reads 3 */
	assert_null(pcache_begin(&c, 3));	       /* the push comes late */
	assert_non_null(pcache_begin(&c, 4));	       /* others are fetched */
	pcache_end(&c, 4, true);
	pcache_invalidate(&c, 3); /* written since: new data to prefetch */
	fetch(&c, 3, 3);
	assert_int_equal(pcache_take(&c, 3, page), 1);
	assert_int_equal(pcache_take(&c, 9, page), 0);
	c.demand_fresh_ns = 0; /* the window has passed */
	fetch(&c, 9, 9);
	pcache_get_stats(&c, &st);
	assert_int_equal(st.skipped_demand, 1);
	assert_int_equal(st.prefetched, 3);
	pcache_fini(&c);
}

static void test_model(void **state)
{
	/*
	 * Random begin / end / invalidate / take with fetches in flight across
	 * other operations.  version[pg] counts writes; a fetch copies the
	 * version current when it began (what the servers held then).  Every
	 * hit must serve the current version: never data older than a write.
	 */
	enum { PAGES = 12 };
	uint8_t version[PAGES] = {0}, seen[PAGES] = {0};
	uint8_t *inflight[PAGES] = {0};
	struct pcache c;
	uint64_t rng = 7, hits = 0;
	(void)state;

	assert_int_equal(pcache_init(&c, 8), 0);
	/* Every miss would bar its page for 100 ms, i.e. the whole run. */
	c.demand_fresh_ns = 0;
	for (int op = 0; op < 200000; op++) {
		uint64_t pg;

		rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
		pg = (rng >> 33) % PAGES;
		switch ((rng >> 20) % 4) {
		case 0:
			if (!inflight[pg]) {
				inflight[pg] = pcache_begin(&c, pg);
				seen[pg] = version[pg];
			}
			break;
		case 1:
			if (inflight[pg]) {
				memset(inflight[pg], seen[pg], 4096);
				pcache_end(&c, pg, (rng >> 40) % 8 != 0);
				inflight[pg] = NULL;
			}
			break;
		case 2:
			version[pg]++;
			pcache_invalidate(&c, pg);
			break;
		default:
			/* A take of a page in flight waits for its fetch: that
			 * needs a second thread (test_wait_for_fetch). */
			if (!inflight[pg] && pcache_take(&c, pg, page)) {
				hits++;
				assert_int_equal(page[0], version[pg]);
				assert_int_equal(page[4095], version[pg]);
			}
		}
	}
	print_message("# %llu hits checked\n", (unsigned long long)hits);
	assert_true(hits > 2000);
	pcache_fini(&c);
}

struct taker {
	struct pcache *c;
	uint64_t pg;
	uint8_t buf[4096];
	int hit, done;
};

static void *take_main(void *arg)
{
	struct taker *t = arg;

	t->hit = pcache_take(t->c, t->pg, t->buf);
	__atomic_store_n(&t->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* A read of a page whose prefetch is in flight waits for it (no second
 * fetch, no miss), and misses if the fetch fails. */
static void test_wait_for_fetch(void **state)
{
	struct pcache c;
	struct pcache_stats st;
	pthread_t th;
	(void)state;

	assert_int_equal(pcache_init(&c, 4), 0);
	for (int fail = 0; fail < 2; fail++) {
		struct taker t = {.c = &c, .pg = 7};
		uint8_t *p = pcache_begin(&c, 7);

		assert_non_null(p);
		memset(p, 0x5a, 4096);
		assert_int_equal(pthread_create(&th, NULL, take_main, &t), 0);
		usleep(50000);
		assert_int_equal(__atomic_load_n(&t.done, __ATOMIC_SEQ_CST), 0);
		pcache_end(&c, 7, !fail);
		pthread_join(th, NULL);
		assert_int_equal(t.hit, !fail);
		if (!fail)
			assert_int_equal(t.buf[4095], 0x5a);
	}
	pcache_get_stats(&c, &st);
	assert_int_equal(st.waited, 2);
	assert_int_equal(st.hits, 1);
	pcache_fini(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_eager_eviction),
		cmocka_unit_test(test_invalidation),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_demand_read),
		cmocka_unit_test(test_model),
		cmocka_unit_test(test_wait_for_fetch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
