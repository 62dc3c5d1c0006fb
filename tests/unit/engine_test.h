/* SPDX-License-Identifier: MIT */
/* Shared bits of the cmocka unit tests. */
#ifndef LEAP_ENGINE_TEST_H
#define LEAP_ENGINE_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "leap/engine.h"

/* A history with its own storage, for tests that drive FINDTREND directly. */
struct test_history {
	struct leap_history h;
	int64_t slots[LEAP_HSIZE_MAX];
};

static inline void test_history_init(struct test_history *t, uint32_t hsize)
{
	leap_history_init(&t->h, t->slots, hsize);
}

static inline void test_history_push_all(struct test_history *t, const uint64_t *pages,
					 size_t n)
{
	for (size_t i = 0; i < n; i++)
		leap_history_push(&t->h, pages[i]);
}

static inline struct leap_params test_params(uint32_t hsize, uint32_t nsplit,
					     enum leap_flavor flavor)
{
	struct leap_params p;

	leap_params_default(&p);
	p.hsize = hsize;
	p.nsplit = nsplit;
	p.flavor = flavor;
	return p;
}

#endif
