// SPDX-License-Identifier: MIT
/* leap_oomlog: whose allocation invoked an OOM kill, on recorded kernel logs. */
#include <string.h>

#include "engine_test.h"
#include "leap/oomlog.h"

/* Feeds lines; returns the kills reported, the last in *k. */
static int feed_all(struct leap_oomlog *l, const char *const *lines, int n,
		    struct leap_oom_kill *k)
{
	int kills = 0;

	for (int i = 0; i < n; i++)
		kills += leap_oomlog_feed(l, lines[i], k);
	return kills;
}

/* This machine's kernel log, 2026-12-01 (6.18): a PageRank under leap
 * killed by the agent's process_madvise charge, then one killed by its own
 * fault; the lines between them (the memcg's stats, the task table, the
 * call trace) as the kernel prints them in part. */
static const char *const log_6_18[] = {
	"leap-agent invoked oom-killer: gfp_mask=0x100cca(GFP_HIGHUSER_MOVABLE), "
	"order=0, "
	"oom_score_adj=0",
	"CPU: 0 UID: 0 PID: 20128 Comm: leap-agent Not tainted 6.18.44-fc-v1045 #1 "
	"PREEMPT(none) ",
	"Call Trace:",
	" mem_cgroup_swapin_charge_folio+0x5d/0x150",
	"memory: usage 192512kB, limit 192512kB, failcnt 358836",
	"Memory cgroup stats for /leap-run-20128:",
	"oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,"
	"oom_memcg=/leap-run-20128,task_memcg=/"
	"leap-run-20128,task=python3,pid=20130,uid=0",
	"Memory cgroup out of memory: Killed process 20130 (python3) total-vm:402904kB, "
	"anon-rss:188156kB, file-rss:15896kB, shmem-rss:0kB, UID:0 pgtables:828kB "
	"oom_score_adj:0",
	"oom_reaper: reaped process 20130 (python3), now anon-rss:0kB, file-rss:0kB, "
	"shmem-rss:0kB",
	"python3 invoked oom-killer: gfp_mask=0x100cca(GFP_HIGHUSER_MOVABLE), order=0, "
	"oom_score_adj=0",
	"CPU: 1 UID: 0 PID: 20203 Comm: python3 Not tainted 6.18.44-fc-v1045 #1 "
	"PREEMPT(none) ",
	"oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,"
	"oom_memcg=/leap-run-20201,task_memcg=/"
	"leap-run-20201,task=python3,pid=20203,uid=0",
	"Memory cgroup out of memory: Killed process 20203 (python3) total-vm:402904kB, "
	"anon-rss:191452kB, file-rss:16012kB, shmem-rss:0kB, UID:0 pgtables:824kB "
	"oom_score_adj:0",
};

static void test_invoker_and_victim(void **state)
{
	struct leap_oomlog l;
	struct leap_oom_kill k;
	(void)state;

	leap_oomlog_init(&l);
	assert_int_equal(feed_all(&l, log_6_18, 8, &k), 1);
	assert_string_equal(k.invoker, "leap-agent");
	assert_int_equal(k.invoker_pid, 20128);
	assert_string_equal(k.victim, "python3");
	assert_int_equal(k.victim_pid, 20130);
	assert_string_equal(k.memcg, "/leap-run-20128");
	/* The reaper's line is no kill; the next report is the program's own. */
	assert_int_equal(feed_all(&l, log_6_18 + 8, 5, &k), 1);
	assert_string_equal(k.invoker, "python3");
	assert_int_equal(k.invoker_pid, 20203);
	assert_int_equal(k.victim_pid, 20203);
	assert_string_equal(k.memcg, "/leap-run-20201");
}

/* Debian 11's 5.10: dump_stack() without "UID:"; a comm with a space; a
 * cgroup v2 path. */
static void test_5_10_format(void **state)
{
	static const char *const lines[] = {
		"Web Content invoked oom-killer: "
		"gfp_mask=0x1100cca(GFP_HIGHUSER_MOVABLE), "
		"order=0, oom_score_adj=0",
		"CPU: 1 PID: 312 Comm: Web Content Not tainted 5.10.0-32-amd64 #1 Debian "
		"5.10.223-1",
		"oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/"
		",mems_allowed=0,"
		"oom_memcg=/system.slice/leap-run-311,task_memcg=/system.slice/"
		"leap-run-311/w,"
		"task=leap-workload,pid=313,uid=0",
		"Memory cgroup out of memory: Killed process 313 (leap-workload) "
		"total-vm:70000kB, anon-rss:16000kB, file-rss:900kB, shmem-rss:0kB, "
		"UID:0 "
		"pgtables:100kB oom_score_adj:0",
	};
	struct leap_oomlog l;
	struct leap_oom_kill k;
	(void)state;

	leap_oomlog_init(&l);
	assert_int_equal(feed_all(&l, lines, 4, &k), 1);
	assert_string_equal(k.invoker, "Web Content");
	assert_int_equal(k.invoker_pid, 312);
	assert_string_equal(k.victim, "leap-workload");
	assert_int_equal(k.victim_pid, 313);
	assert_string_equal(k.memcg, "/system.slice/leap-run-311");
	assert_true(leap_oomlog_memcg_has(k.memcg, "leap-run-311"));
}

/* A kill whose report's start was lost (the ring overwrote it) names no
 * invoker; a global OOM names no memcg. */
static void test_partial_and_global(void **state)
{
	static const char *const lines[] = {
		"oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/"
		",mems_allowed=0,"
		"global_oom,task_memcg=/,task=sort,pid=99,uid=0",
		"Out of memory: Killed process 99 (sort) total-vm:1kB, anon-rss:1kB, "
		"file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:4kB oom_score_adj:0",
	};
	struct leap_oomlog l;
	struct leap_oom_kill k;
	(void)state;

	leap_oomlog_init(&l);
	assert_int_equal(feed_all(&l, lines, 2, &k), 1);
	assert_string_equal(k.invoker, "");
	assert_int_equal(k.invoker_pid, 0);
	assert_string_equal(k.victim, "sort");
	assert_string_equal(k.memcg, "");
	/* A stack dump outside a report (a warning) names no invoker. */
	assert_false(leap_oomlog_feed(&l, "CPU: 0 UID: 0 PID: 7 Comm: x", &k));
	assert_false(leap_oomlog_feed(&l, "Killed process 7 (x)", &k));
}

static void test_memcg_has(void **state)
{
	(void)state;
	assert_true(leap_oomlog_memcg_has("/leap-run-20128", "leap-run-20128"));
	assert_true(leap_oomlog_memcg_has("/a/leap-run-5/b", "leap-run-5"));
	/* Whole components only. */
	assert_false(leap_oomlog_memcg_has("/leap-run-51", "leap-run-5"));
	assert_false(leap_oomlog_memcg_has("/x-leap-run-5", "leap-run-5"));
	assert_false(leap_oomlog_memcg_has("/leap-run-51/leap-run-5x", "leap-run-5"));
	assert_true(leap_oomlog_memcg_has("/leap-run-51/leap-run-5", "leap-run-5"));
	assert_false(leap_oomlog_memcg_has("", "leap-run-5"));
	assert_false(leap_oomlog_memcg_has("/a", ""));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_invoker_and_victim),
		cmocka_unit_test(test_5_10_format),
		cmocka_unit_test(test_partial_and_global),
		cmocka_unit_test(test_memcg_has),
	};
	return cmocka_run_group_tests_name("oomlog", tests, NULL, NULL);
}
