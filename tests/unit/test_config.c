// SPDX-License-Identifier: MIT
/* leap-agent's policy file: good files, and every kind of bad one. */
#include <stdio.h>
#include <string.h>

#include "engine_test.h"
#include "../../user/agent/config.h"

static struct agent_config cfg;
static char err[1024];

static int parse(const char *text)
{
	err[0] = '\0';
	return agent_config_parse_string(text, "test.conf", &cfg, err, sizeof(err));
}

static void test_defaults_and_inheritance(void **state)
{
	const struct agent_policy *p;
	(void)state;

	assert_int_equal(parse(""), 0);
	assert_int_equal(cfg.def.mode, AGENT_MODE_LEAP);
	assert_int_equal(cfg.queue_depth, 64);
	assert_int_equal(cfg.memcg_flush_ms, 50);
	assert_int_equal(cfg.def.params.hsize, LEAP_DEFAULT_HSIZE);

	/* [cgroup] before [default]: inheritance is not order dependent. */
	assert_int_equal(parse("# comment\n"
			       "[cgroup /sys/fs/cgroup/unified/db]\n"
			       "pw_max = 64\n"
			       "stream = thread\n"
			       "[default]\n"
			       "mode = observe\n"
			       "hsize = 16\n"
			       "[agent]\n"
			       "ring_kb = 8192\n"
			       "queue_depth = 8\n"
			       "memcg_flush_ms = 0\n"),
			 0);
	assert_int_equal(cfg.ring_kb, 8192);
	assert_int_equal(cfg.queue_depth, 8);
	assert_int_equal(cfg.memcg_flush_ms, 0);
	assert_int_equal(cfg.ncgroups, 1);
	p = agent_config_policy_for(&cfg, "/sys/fs/cgroup/unified/db");
	assert_int_equal(p->params.pw_max, 64);
	assert_int_equal(p->params.key, LEAP_KEY_THREAD);
	assert_int_equal(p->params.hsize, 16);
	assert_int_equal(p->mode, AGENT_MODE_OBSERVE);
	p = agent_config_policy_for(&cfg, "/elsewhere");
	assert_ptr_equal(p, &cfg.def);
	assert_int_equal(p->params.pw_max, LEAP_DEFAULT_PW_MAX);
	assert_int_equal(p->cold_behind, AGENT_DEFAULT_COLD_BEHIND);

	/* cold_behind: per section, inherited, 0 turns it off. */
	assert_int_equal(parse("[default]\ncold_behind = 0\n[cgroup /a]\n"
			       "[cgroup /b]\ncold_behind = 1024\n"),
			 0);
	assert_int_equal(agent_config_policy_for(&cfg, "/a")->cold_behind, 0);
	assert_int_equal(agent_config_policy_for(&cfg, "/b")->cold_behind, 1024);

	/* outcome: judge by default, per section, inherited. */
	assert_int_equal(parse(""), 0);
	assert_true(cfg.def.judge_outcome);
	assert_int_equal(parse("[default]\noutcome = off\n[cgroup /a]\n"
			       "[cgroup /b]\noutcome = judge\n"),
			 0);
	assert_false(agent_config_policy_for(&cfg, "/a")->judge_outcome);
	assert_true(agent_config_policy_for(&cfg, "/b")->judge_outcome);

	/* sweeps: on by default, an [agent] key. */
	assert_int_equal(parse(""), 0);
	assert_true(cfg.sweeps);
	assert_int_equal(parse("[agent]\nsweeps = off\n"), 0);
	assert_false(cfg.sweeps);

	/* lanes: 4 by default, per section, inherited. */
	assert_int_equal(parse(""), 0);
	assert_int_equal(cfg.def.params.lanes, LEAP_DEFAULT_LANES);
	assert_int_equal(parse("[default]\nlanes = 1\n[cgroup /a]\n"
			       "[cgroup /b]\nlanes = 8\n"),
			 0);
	assert_int_equal(agent_config_policy_for(&cfg, "/a")->params.lanes, 1);
	assert_int_equal(agent_config_policy_for(&cfg, "/b")->params.lanes, 8);
}

/* match = tree (default) | exact, per section or from [default]. */
static void test_match(void **state)
{
	(void)state;

	assert_int_equal(parse("[cgroup /s]\nmode = observe\n"
			       "[cgroup /s/c]\nmatch = exact\n"),
			 0);
	assert_false(agent_config_policy_for(&cfg, "/s")->exact);
	assert_true(agent_config_policy_for(&cfg, "/s/c")->exact);
	assert_int_equal(parse("[default]\nmatch = exact\n[cgroup /s]\n[cgroup /t]\n"
			       "match = tree\n"),
			 0);
	assert_true(agent_config_policy_for(&cfg, "/s")->exact);
	assert_false(agent_config_policy_for(&cfg, "/t")->exact);
}

static void expect_error(const char *text, const char *fragment)
{
	assert_int_equal(parse(text), -1);
	if (!strstr(err, fragment)) {
		fprintf(stderr, "error '%s' lacks '%s'\n", err, fragment);
		fail();
	}
}

static void test_bad_files(void **state)
{
	(void)state;

	expect_error("[default]\nmode = fast\n", "test.conf:2: mode must be");
	expect_error("[cgroup /a]\nmatch = subtree\n", ":2: match must be tree or exact");
	expect_error("[default]\nhsize = 1\n", "test.conf:2: hsize");
	expect_error("[default]\nhsize = 12abc\n", ":2: hsize");
	expect_error("[default]\npw_max = -3\n", ":2: pw_max");
	expect_error("[default]\ncold_behind = lots\n", ":2: cold_behind must be");
	expect_error("[default]\ncold_behind = 2000000\n", ":2: cold_behind must be");
	expect_error("[default]\noutcome = maybe\n", ":2: outcome must be judge or off");
	expect_error("[default]\nlanes = 0\n", ":2: lanes must be 1");
	expect_error("[default]\nlanes = 9\n", ":2: lanes must be 1");
	expect_error("[default]\nbogus = 1\n", ":2: unknown key 'bogus'");
	expect_error("\n\n[nonsense]\n", ":3: unknown section");
	expect_error("[cgroup relative/path]\n",
		     ":1: cgroup section needs an absolute path");
	expect_error("[cgroup /a]\n[cgroup /a]\n", ":2: duplicate section");
	expect_error("[default]\nthis line has no equals sign\n", ":2: syntax error");
	expect_error("[agent]\nring_kb = 1\n", ":2: bad value '1' for ring_kb");
	expect_error("[agent]\nqueue_depth = 0\n",
		     ":2: bad value '0' for queue_depth (a number from 1 to 64)");
	expect_error(
		"[agent]\nmemcg_flush_ms = 10001\n",
		":2: bad value '10001' for memcg_flush_ms (a number from 0 to 10000)");
	expect_error("[agent]\nsweeps = maybe\n",
		     ":2: bad value 'maybe' for sweeps (on or off)");
	expect_error("hsize = 4\n", ":1: 'hsize' outside any section");
	expect_error("[default]\nhsize = 8\n[cgroup]\n", ":3: unknown section");
	/* nsplit above hsize passes each key's range but not the policy check. */
	expect_error("[cgroup /x]\nhsize = 4\nnsplit = 8\n", ":1: [cgroup /x]: nsplit");
}

static void test_missing_file(void **state)
{
	(void)state;

	assert_int_equal(
		agent_config_load("/nonexistent/leap.conf", &cfg, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "No such file"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_and_inheritance),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_missing_file),
	};
	return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
