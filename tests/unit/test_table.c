// SPDX-License-Identifier: MIT
/* The bounded stream table: keying, LRU eviction, expiry, consistency. */
#include <stdlib.h>

#include "engine_test.h"

static void test_keying(void **state)
{
	struct leap_stream_key_t a, b;
	(void)state;

	a = leap_key_make(LEAP_KEY_PROCESS, 7, 100, 101);
	b = leap_key_make(LEAP_KEY_PROCESS, 7, 100, 102);
	assert_int_equal(a.tid, 0);
	assert_memory_equal(&a, &b, sizeof(a));
	a = leap_key_make(LEAP_KEY_THREAD, 7, 100, 101);
	assert_int_equal(a.tid, 101);
	assert_int_equal(a.tgid, 100);
	a = leap_key_make(LEAP_KEY_CGROUP, 7, 100, 101);
	assert_int_equal(a.tgid, 0);
	assert_int_equal(a.cgroup, 7);
}

static void test_per_thread_streams(void **state)
{
	struct leap_table t;
	struct leap_stream_key_t k1 = leap_key_make(LEAP_KEY_THREAD, 1, 50, 51);
	struct leap_stream_key_t k2 = leap_key_make(LEAP_KEY_THREAD, 1, 50, 52);
	struct leap_stream_key_t kp = leap_key_make(LEAP_KEY_PROCESS, 1, 50, 51);
	struct leap_stream *s1, *s2, *sp;
	(void)state;

	assert_int_equal(leap_table_init(&t, 16, 32), 0);
	s1 = leap_table_get(&t, &k1, 32, 1);
	s2 = leap_table_get(&t, &k2, 32, 2);
	sp = leap_table_get(&t, &kp, 32, 3);
	assert_ptr_not_equal(s1, s2);
	assert_ptr_not_equal(s1, sp);
	assert_int_equal(t.used, 3);
	assert_ptr_equal(leap_table_get(&t, &k1, 32, 4), s1);
	assert_ptr_equal(leap_table_find(&t, &k2), s2);
	/* Histories do not share storage. */
	leap_history_push(&s1->hist, 10);
	leap_history_push(&s1->hist, 11);
	leap_history_push(&s2->hist, 500);
	leap_history_push(&s2->hist, 400);
	assert_int_equal(leap_history_at(&s1->hist, 0), 1);
	assert_int_equal(leap_history_at(&s2->hist, 0), -100);
	/* A process exits: all its streams go. */
	assert_int_equal(leap_table_drop_tgid(&t, 50), 3);
	assert_int_equal(t.used, 0);
	assert_null(leap_table_find(&t, &k1));
	leap_table_free(&t);
}

static void test_lru_eviction(void **state)
{
	struct leap_table t;
	struct leap_stream_key_t k[6];
	(void)state;

	assert_int_equal(leap_table_init(&t, 4, 8), 0);
	for (int i = 0; i < 6; i++)
		k[i] = leap_key_make(LEAP_KEY_PROCESS, 0, 1000 + i, 0);
	for (int i = 0; i < 4; i++)
		leap_table_get(&t, &k[i], 8, i);
	/* Touch 0 so 1 is the least recently used. */
	leap_table_get(&t, &k[0], 8, 10);
	leap_table_get(&t, &k[4], 8, 11);
	assert_int_equal(t.evictions, 1);
	assert_int_equal(t.used, 4);
	assert_null(leap_table_find(&t, &k[1]));
	assert_non_null(leap_table_find(&t, &k[0]));
	leap_table_get(&t, &k[5], 8, 12);
	assert_null(leap_table_find(&t, &k[2]));
	/* A new stream starts empty even in an evicted stream's slot. */
	assert_int_equal(leap_table_find(&t, &k[5])->hist.count, 0);
	assert_int_equal(leap_table_find(&t, &k[5])->stats.accesses, 0);

	/* Expiry drops what was idle too long, stalest first. */
	assert_int_equal(leap_table_expire(&t, 20, 9), 2); /* k3 (3), k0 (10) */
	assert_int_equal(t.used, 2);
	assert_non_null(leap_table_find(&t, &k[4]));
	assert_int_equal(leap_table_expire(&t, 1000, 0), 2);
	assert_int_equal(t.used, 0);
	leap_table_free(&t);
}

static void test_bad_init(void **state)
{
	struct leap_table t;
	(void)state;

	assert_int_equal(leap_table_init(&t, 0, 8), -22);
	assert_int_equal(leap_table_init(&t, 8, 1), -22);
	assert_int_equal(leap_table_init(&t, 8, LEAP_HSIZE_MAX + 1), -22);
}

/* Many streams, random gets/drops, checked against a plain array model. */
static void test_many_streams_consistency(void **state)
{
	enum { CAP = 64, KEYS = 300, OPS = 200000 };
	struct leap_table t;
	uint64_t last[KEYS] = {0}; /* 0: absent in the model */
	uint64_t now = 0;
	unsigned seed = 12345;
	(void)state;

	assert_int_equal(leap_table_init(&t, CAP, 16), 0);
	for (int op = 0; op < OPS; op++) {
		uint32_t k = (uint32_t)rand_r(&seed) % KEYS;
		struct leap_stream_key_t key =
			leap_key_make(LEAP_KEY_THREAD, k % 3, k, k * 7);

		now++;
		if (rand_r(&seed) % 10 == 0) {
			if (leap_table_drop_tgid(&t, k))
				assert_true(last[k] != 0);
			last[k] = 0;
			continue;
		}
		if (rand_r(&seed) % 1000 == 0) {
			leap_table_expire(&t, now, 50);
			for (int i = 0; i < KEYS; i++)
				if (last[i] && now - last[i] > 50)
					last[i] = 0;
		}
		struct leap_stream *s = leap_table_get(&t, &key, 16, now);

		assert_non_null(s);
		assert_int_equal(s->key.tgid, k);
		leap_history_push(&s->hist, k);
		if (!last[k]) {
			/* Model LRU: evict the oldest when full. */
			uint32_t live = 0, oldest = 0;

			for (int i = 0; i < KEYS; i++)
				if (last[i]) {
					live++;
					if (!last[oldest] || last[i] < last[oldest])
						oldest = (uint32_t)i;
				}
			if (live == CAP)
				last[oldest] = 0;
		}
		last[k] = now;
		assert_true(t.used <= CAP);
	}
	for (int i = 0; i < KEYS; i++) {
		struct leap_stream_key_t key =
			leap_key_make(LEAP_KEY_THREAD, i % 3, i, i * 7);
		struct leap_stream *s = leap_table_find(&t, &key);

		assert_true((s != NULL) == (last[i] != 0));
		if (s)
			assert_int_equal(s->hist.last_page, (uint64_t)i);
	}
	leap_table_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keying),
		cmocka_unit_test(test_per_thread_streams),
		cmocka_unit_test(test_lru_eviction),
		cmocka_unit_test(test_bad_init),
		cmocka_unit_test(test_many_streams_consistency),
	};
	return cmocka_run_group_tests_name("table", tests, NULL, NULL);
}
