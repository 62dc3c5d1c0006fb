// SPDX-License-Identifier: MIT
/*
 * Issuing on the fault's CPU (user/agent/placement.c): the thread moves to
 * each allowed CPU it is asked for, once, and stays put when it may not
 * follow, for a CPU outside its set, or for one past CPU_SETSIZE.
 */
#include <pthread.h>
#include <string.h>

#include "engine_test.h"
#include "placement.h"

static void test_follows_allowed_cpus(void **state)
{
	struct placement p;
	unsigned moved = 0;
	(void)state;

	placement_init(&p, true);
	for (unsigned cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &p.allowed))
			continue;
		placement_move(&p, cpu);
		moved++;
		assert_int_equal(p.on, (int)cpu);
		assert_int_equal(sched_getcpu(), (int)cpu);
		placement_move(&p, cpu); /* already there: no move */
		assert_int_equal(p.moves, moved);
	}
	assert_true(moved > 0);
	/* Outside the set, or no such CPU: stays where it is. */
	placement_move(&p, CPU_SETSIZE + 3);
	assert_int_equal(p.moves, moved);
	/* Back to every CPU it had. */
	sched_setaffinity(0, sizeof(p.allowed), &p.allowed);
}

static void test_stays_put_unless_following(void **state)
{
	struct placement p;
	cpu_set_t before, after;
	(void)state;

	sched_getaffinity(0, sizeof(before), &before);
	placement_init(&p, false);
	placement_move(&p, 0);
	sched_getaffinity(0, sizeof(after), &after);
	assert_true(CPU_EQUAL(&before, &after));
	assert_int_equal(p.moves, 0);
	assert_int_equal(p.on, -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_follows_allowed_cpus),
		cmocka_unit_test(test_stays_put_unless_following),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
