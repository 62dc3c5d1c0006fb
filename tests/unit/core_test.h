/* SPDX-License-Identifier: MIT */
/* A decision core for the unit tests that drive it (include/leap/core.h). */
#ifndef LEAP_CORE_TEST_H
#define LEAP_CORE_TEST_H

#include "engine_test.h"
#include "leap/core.h"

/* A core of cfg, the cost model's and the outcome judge's parameters at
 * their defaults, in env. */
static inline struct leap_core *test_core_new(struct leap_core_config cfg,
					      const struct leap_core_env *env)
{
	struct leap_core *c;

	leap_cost_params_default(&cfg.cost);
	leap_outcome_params_default(&cfg.outcome);
	c = leap_core_new(&cfg);
	assert_non_null(c);
	leap_core_set_env(c, env);
	return c;
}

#endif
