// SPDX-License-Identifier: MIT
/*
 * `leap-agent run`: run a command in a fresh memory-limited cgroup under a
 * policy, and report what it did (the A/B form: --policy off runs the same
 * set-up without prefetching).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "leap/size.h"
#include "oomcause.h"
#include "session.h"

enum {
	OPT_MEMLIMIT = 2000,
	OPT_POLICY,
	OPT_JSON,
};

static const struct argp_option run_opts[] = {
	{"memory-limit", OPT_MEMLIMIT, "SIZE", 0,
	 "Memory limit of the command's cgroup (e.g. 64M)", 0},
	{"policy", OPT_POLICY, "leap|observe|off", 0,
	 "Policy for the command (overrides the config's [default] mode)", 0},
	{"json", OPT_JSON, "PATH", 0, "Write a JSON summary to PATH", 0},
	{},
};

static error_t parse_run(int key, char *arg, struct argp_state *state)
{
	struct agent_opts *o = state->input;
	enum agent_mode m;

	switch (key) {
	case ARGP_KEY_INIT:
		state->child_inputs[0] = state->input; /* common options */
		return 0;
	case OPT_MEMLIMIT:
		if (leap_parse_size(arg, &o->mem_limit) || o->mem_limit < (1 << 20))
			argp_error(state,
				   "--memory-limit needs a size of at least 1M, not '%s'",
				   arg);
		return 0;
	case OPT_POLICY:
		if (agent_mode_parse(arg, &m))
			argp_error(state, "--policy takes leap, observe or off, not '%s'",
				   arg);
		o->policy = (int)m;
		return 0;
	case OPT_JSON:
		o->json_path = arg;
		return 0;
	case ARGP_KEY_ARGS:
		o->cmd = state->argv + state->next;
		return 0;
	case ARGP_KEY_NO_ARGS:
		argp_error(state, "give the command to run after --");
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

/*
 * The OOM killer took a process of the command: say so, since a bare
 * "killed by signal 9" hides it, and whose allocation invoked it.  The
 * count is the cgroup's own (v1 memory.oom_control, v2 memory.events:
 * kills of its tasks by any OOM killer); the cause is the kernel log's
 * (oomcause.h): the program's own fault, or the agent's
 * process_madvise(MADV_WILLNEED), whose swap-ins are charged to the same
 * cgroup and may run the OOM killer like any other charge.  Seen here
 * with swap to spare and with or without the agent (README, Known limits).
 */
static void report_oom_kills(uint64_t kills, uint64_t limit, int log_rc, uint64_t logged,
			     uint64_t by_agent)
{
	fprintf(stderr, "leap-agent: the OOM killer killed %llu process%s of the command",
		(unsigned long long)kills, kills == 1 ? "" : "es");
	if (limit)
		fprintf(stderr, " (--memory-limit %llu MiB)",
			(unsigned long long)(limit >> 20));
	if (log_rc)
		fprintf(stderr,
			"; the kernel log names the task whose allocation invoked "
			"it (unread here: %s)\n",
			strerror(-log_rc));
	else if (logged)
		fprintf(stderr,
			";\nby the kernel log, %llu invoked by leap's prefetch (its "
			"process_madvise's charge), %llu by the command's own "
			"allocations\n",
			(unsigned long long)by_agent,
			(unsigned long long)(logged - by_agent));
	else
		fprintf(stderr, "; the kernel log since the start names none of them\n");
}

/* The command, forked and held until released through go (go[0] its end);
 * ex[1] closes with its exec. */
static pid_t fork_command(char **cmd, int go[2], int ex[2])
{
	pid_t child = fork();
	char c;

	if (child != 0)
		return child;
	/* Wait until the parent has put us in the cgroup and attached. */
	close(go[1]);
	close(ex[0]);
	if (read(go[0], &c, 1) != 1)
		_exit(127);
	execvp(cmd[0], cmd);
	fprintf(stderr, "leap-agent: cannot run %s: %s\n", cmd[0], strerror(errno));
	_exit(127);
}

/*
 * Backend mode: a pagemap file reads the mm its process had when it was
 * opened (fs/proc/base.c proc_mem_open): open the command's after its
 * exec, which closes the O_CLOEXEC pipe ex, and before the capabilities
 * go.  Processes it starts later are opened without them: their slots are
 * not shown, and the agent says so.
 */
static void preopen_after_exec(struct agent *a, pid_t child, int *ex_read)
{
	char c;

	while (read(*ex_read, &c, 1) < 0 && errno == EINTR)
		;
	close(*ex_read);
	*ex_read = -1;
	if (procs_preopen(a->ex.procs, (uint32_t)child))
		fprintf(stderr, "leap-agent: pid %d: cannot open its pagemap\n", child);
}

static void report(struct session *s, const struct agent_policy *pol,
		   struct run_cgroup *cg, const char *cg_name, struct oom_causes *causes,
		   int rc)
{
	const struct agent_opts *o = s->o;
	json_object *sum = session_summary(s);
	uint64_t oom_kills = 0, majflt = 0, logged = 0, by_agent = 0;
	bool oom_known = run_cgroup_oom_kills(cg, &oom_kills) == 0;
	int log_rc = oom_causes_count(causes, cg_name, &logged, &by_agent);

	if (oom_known && oom_kills)
		report_oom_kills(oom_kills, o->mem_limit, log_rc, logged, by_agent);
	json_object_object_add(sum, "policy",
			       json_object_new_string(agent_mode_name(pol->mode)));
	json_object_object_add(sum, "memory_limit", json_object_new_uint64(o->mem_limit));
	json_object_object_add(sum, "exit_status", json_object_new_int(rc));
	if (oom_known)
		json_object_object_add(sum, "oom_kills",
				       json_object_new_uint64(oom_kills));
	/* Kills the kernel log shows invoked by our own prefetch's charge;
	 * absent where the log could not be read. */
	if (!log_rc)
		json_object_object_add(sum, "oom_kills_by_prefetch",
				       json_object_new_uint64(by_agent));
	if (run_cgroup_major_faults(cg, &majflt) == 0)
		json_object_object_add(sum, "major_faults",
				       json_object_new_uint64(majflt));
	summary_print(stderr, sum);
	summary_write(o->json_path, sum);
	json_object_put(sum);
}

int do_run(int argc, char **argv)
{
	struct argp_child kids[] = {{&agent_common_argp, 0, "Common options:", 0}, {}};
	struct argp argp = {
		run_opts,
		parse_run,
		"-- CMD [ARGS...]",
		"Run CMD in a fresh cgroup (with --memory-limit) under a policy and "
		"report what it did.\vExits with CMD's exit status (128+N if killed "
		"by signal N).  --policy off runs the same set-up without prefetching, "
		"for a fair A/B.",
		kids,
		NULL,
		NULL};
	struct agent_opts o = AGENT_OPTS_INIT;
	struct agent_policy pol;
	struct session s;
	struct run_cgroup cg;
	struct oom_causes causes = {.fd = -1};
	char err[1024], name[64];
	/* go: the parent releases the command; ex: closed by its exec */
	int go[2] = {-1, -1}, ex[2] = {-1, -1}, status = 0, rc = 1;
	pid_t child = -1;

	if (argp_parse(&argp, argc, argv, ARGP_IN_ORDER, NULL, &o))
		return 2;
	if (session_config(&s, &o))
		return 1;
	pol = s.cfg.def;
	if (o.policy >= 0)
		pol.mode = (enum agent_mode)o.policy;
	snprintf(name, sizeof(name), "leap-run-%d", getpid());
	if (run_cgroup_create(&cg, name, o.mem_limit, err, sizeof(err))) {
		fprintf(stderr, "leap-agent: %s\n", err);
		return 1;
	}
	oom_causes_open(&causes); /* while the agent may still read the log */
	if (session_guard(&s, &cg)) {
		perror("leap-agent: fork");
		run_cgroup_destroy(&cg);
		return 1;
	}
	if (pipe2(go, O_CLOEXEC) || pipe2(ex, O_CLOEXEC)) {
		perror("leap-agent: pipe");
		goto out;
	}
	child = fork_command(o.cmd, go, ex);
	if (child < 0) {
		perror("leap-agent: fork");
		goto out;
	}
	close(go[0]);
	go[0] = -1;
	close(ex[1]);
	ex[1] = -1;
	if (run_cgroup_enter(&cg, child)) {
		fprintf(stderr, "leap-agent: cannot move the command into %s\n", cg.v2);
		goto out;
	}
	if (session_start(&s))
		goto out;
	if (agent_add_cgroup(s.a, cg.v2, &pol, err, sizeof(err))) {
		fprintf(stderr, "leap-agent: %s\n", err);
		goto out;
	}
	if (pol.mode == AGENT_MODE_LEAP)
		session_warn_observing(&s);
	if (!s.a->ex.be && session_drop_caps(&s, false))
		goto out;
	session_clock_start(&s);
	if (write(go[1], "g", 1) != 1)
		goto out;
	close(go[1]);
	go[1] = -1;
	if (s.a->ex.be) {
		preopen_after_exec(s.a, child, &ex[0]);
		if (session_drop_caps(&s, false))
			goto out;
	}
	session_loop(&s, child, &status);
	if (session_interrupted()) {
		/* Interrupted: stop the command too, then report. */
		kill(child, SIGTERM);
		waitpid(child, &status, 0);
	}
	child = -1;
	rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	report(&s, &pol, &cg, name, &causes, rc);
out:
	if (go[1] >= 0)
		close(go[1]); /* an unreleased child reads EOF and exits 127 */
	for (int i = 0; i < 2; i++)
		if (ex[i] >= 0)
			close(ex[i]);
	if (child > 0)
		waitpid(child, NULL, 0);
	oom_causes_close(&causes);
	session_end(&s); /* the guardian removes the cgroup, restores page-cluster */
	return rc;
}
