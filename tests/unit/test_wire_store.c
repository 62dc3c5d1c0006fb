// SPDX-License-Identifier: MIT
/* leap-memd's page store against a model, and memclient's placement. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "memd.h"
#include "memclient.h"

static void test_store_model(void **state)
{
	enum { CAP = 1000, KEYS = 1500 };
	static uint32_t model_dev[KEYS];
	static uint64_t model_off[KEYS];
	static uint8_t model_val[KEYS];
	struct memd_store s;
	char err[256];
	uint64_t rng = 1;
	unsigned used = 0;
	(void)state;

	assert_int_equal(memd_store_init(&s, CAP, false, err, sizeof(err)), 0);
	for (unsigned i = 0; i < KEYS; i++) {
		model_dev[i] = i % 3;
		model_off[i] = (uint64_t)(i / 3) * 7 * LEAP_WIRE_PAGE_SIZE;
	}
	for (int op = 0; op < 200000; op++) {
		unsigned k;
		uint8_t *pg;

		rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
		k = (unsigned)(rng >> 33) % KEYS;
		pg = memd_store_find(&s, model_dev[k], model_off[k]);
		if (!model_val[k]) {
			assert_null(pg);
			pg = memd_store_get(&s, model_dev[k], model_off[k]);
			if (used == CAP) {
				assert_null(pg); /* full: refused, nothing evicted */
				continue;
			}
			assert_non_null(pg);
			used++;
			assert_int_equal(s.used, used);
		} else {
			assert_non_null(pg);
			assert_int_equal(pg[0], model_val[k]);
			assert_int_equal(pg[4095], model_val[k]);
		}
		model_val[k] = (uint8_t)(rng >> 20) | 1;
		memset(pg, model_val[k], LEAP_WIRE_PAGE_SIZE);
	}
	assert_int_equal(used, CAP);
	memd_store_fini(&s);
	assert_int_equal(memd_store_init(&s, 0, false, err, sizeof(err)), -1);
}

/* FREE: pages come and go; every key present in the model stays reachable
 * (backward-shift deletion), freed memory is reused, used counts right. */
static void test_store_free_model(void **state)
{
	enum { CAP = 300, KEYS = 500 };
	static uint8_t model_val[KEYS];
	struct memd_store s;
	char err[256];
	uint64_t rng = 5, used = 0, frees = 0;
	(void)state;

	assert_int_equal(memd_store_init(&s, CAP, false, err, sizeof(err)), 0);
	for (int op = 0; op < 300000; op++) {
		unsigned k;
		uint64_t off;
		uint8_t *pg;

		rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
		k = (unsigned)(rng >> 33) % KEYS;
		off = (uint64_t)k * 5 * LEAP_WIRE_PAGE_SIZE;
		if ((rng >> 20) % 3 == 0) {
			assert_int_equal(memd_store_free(&s, k % 2, off),
					 model_val[k] != 0);
			used -= model_val[k] != 0;
			frees += model_val[k] != 0;
			model_val[k] = 0;
			assert_int_equal(s.used, used);
			continue;
		}
		pg = memd_store_find(&s, k % 2, off);
		if (!model_val[k]) {
			assert_null(pg);
			pg = memd_store_get(&s, k % 2, off);
			if (used == CAP) {
				assert_null(pg);
				continue;
			}
			assert_non_null(pg);
			/* New or reused, a page starts as zeros. */
			assert_int_equal(pg[0], 0);
			assert_int_equal(pg[4095], 0);
			used++;
		} else {
			assert_non_null(pg);
			assert_int_equal(pg[0], model_val[k]);
			assert_int_equal(pg[4095], model_val[k]);
		}
		model_val[k] = (uint8_t)(rng >> 24) | 1;
		memset(pg, model_val[k], LEAP_WIRE_PAGE_SIZE);
	}
	assert_true(frees > 10000);
	assert_true(s.hwm <= CAP); /* freed memory was reused, never more */
	memd_store_fini(&s);
}

static void test_placement(void **state)
{
	unsigned per[4] = {0};
	(void)state;

	/* Stripes of 16 pages round-robin; the replica is the next server. */
	assert_int_equal(leap_mc_place(0, 16, 3, 0), 0);
	assert_int_equal(leap_mc_place(15, 16, 3, 0), 0);
	assert_int_equal(leap_mc_place(16, 16, 3, 0), 1);
	assert_int_equal(leap_mc_place(16, 16, 3, 1), 2);
	assert_int_equal(leap_mc_place(47, 16, 3, 1), 0);
	for (uint64_t pg = 0; pg < 4 * 16 * 100; pg++) {
		per[leap_mc_place(pg, 16, 4, 0)]++;
		/* Two replicas never share a server. */
		assert_int_not_equal(leap_mc_place(pg, 16, 4, 0),
				     leap_mc_place(pg, 16, 4, 1));
	}
	for (int i = 0; i < 4; i++)
		assert_int_equal(per[i], 1600);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_store_model),
		cmocka_unit_test(test_store_free_model),
		cmocka_unit_test(test_placement),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
