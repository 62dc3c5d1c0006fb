// SPDX-License-Identifier: MIT
/*
 * The agent's cache of process files (user/agent/procs.c): the same entry
 * for the same process, whichever was asked for last (the lookup starts at
 * the entry found last); a forgotten process's entry never answered again,
 * even while a holder keeps it open; an exited process refused (-ESRCH).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine_test.h"
#include "../../user/agent/procs.h"

static pid_t sleeper(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		/* Gone with the test, even one that fails before reap(). */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(STDOUT_FILENO);
		close(STDERR_FILENO);
		pause();
		_exit(0);
	}
	assert_true(pid > 0);
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void test_same_entry(void **state)
{
	struct procs *c = procs_new(false);
	pid_t a = getpid(), b = sleeper();
	struct proc_entry *ea, *eb, *e;
	int err = 0;
	(void)state;

	assert_non_null(c);
	ea = procs_get(c, (uint32_t)a, &err);
	assert_non_null(ea);
	eb = procs_get(c, (uint32_t)b, &err);
	assert_non_null(eb);
	assert_ptr_not_equal(ea, eb);
	procs_put(c, eb);
	procs_put(c, ea);
	/* Asked in turns: each answer is its own process's entry. */
	for (int i = 0; i < 4; i++) {
		e = procs_get(c, (uint32_t)(i % 2 ? b : a), &err);
		assert_ptr_equal(e, i % 2 ? eb : ea);
		procs_put(c, e);
	}
	procs_free(c);
	reap(b);
}

static void test_forgotten(void **state)
{
	struct procs *c = procs_new(false);
	pid_t b = sleeper();
	struct proc_entry *held, *e;
	int err = 0;
	(void)state;

	held = procs_get(c, (uint32_t)b, &err);
	assert_non_null(held);
	/* Forgotten while held: the next question opens a new entry. */
	procs_forget(c, (uint32_t)b);
	e = procs_get(c, (uint32_t)b, &err);
	assert_non_null(e);
	assert_ptr_not_equal(e, held);
	procs_put(c, e);
	procs_put(c, held);
	procs_forget(c, (uint32_t)b);
	reap(b);
	/* Gone: refused, not answered from the entry found last. */
	err = 0;
	assert_null(procs_get(c, (uint32_t)b, &err));
	assert_int_equal(err, -ESRCH);
	procs_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_entry),
		cmocka_unit_test(test_forgotten),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
