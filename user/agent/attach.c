// SPDX-License-Identifier: MIT
/*
 * `leap-agent attach`: watch cgroups and processes until SIGINT or SIGTERM
 * (SIGHUP reloads the policy file), the form a service runs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "session.h"

enum {
	OPT_CGROUP_EXACT = 2000,
	OPT_METRICS_TEXTFILE,
	OPT_KEEP_RUNNING,
	OPT_JSON,
};

static const struct argp_option attach_opts[] = {
	{"cgroup", 'g', "PATH", 0,
	 "Watch this cgroup v2 directory and every cgroup below it, present or future "
	 "(repeatable; the deepest watched cgroup's policy applies)",
	 0},
	{"cgroup-exact", OPT_CGROUP_EXACT, "PATH", 0,
	 "Watch this cgroup only, not its descendants (repeatable)", 0},
	{"metrics-textfile", OPT_METRICS_TEXTFILE, "PATH", 0,
	 "Write Prometheus metrics to PATH every second, atomically (for "
	 "node_exporter's textfile collector)",
	 0},
	{"json", OPT_JSON, "PATH", 0,
	 "Write a JSON summary to PATH when the agent stops (as run --json)", 0},
	{"pid", 'p', "PID", 0, "Watch this process (repeatable)", 0},
	{"keep-running", OPT_KEEP_RUNNING, NULL, 0,
	 "Stay attached when there is nothing (left) to watch: the service's form, "
	 "whose default config names no target yet",
	 0},
	{},
};

static error_t parse_attach(int key, char *arg, struct argp_state *state)
{
	struct agent_opts *o = state->input;
	unsigned long v;
	char *end;

	switch (key) {
	case ARGP_KEY_INIT:
		state->child_inputs[0] = state->input; /* common options */
		return 0;
	case 'g':
	case OPT_CGROUP_EXACT:
		if (o->ncgroups == AGENT_MAX_TARGETS)
			argp_error(state, "too many --cgroup");
		o->cgroup_exact[o->ncgroups] = key == OPT_CGROUP_EXACT;
		o->cgroups[o->ncgroups++] = arg;
		return 0;
	case OPT_METRICS_TEXTFILE:
		if (!*arg || arg[strlen(arg) - 1] == '/')
			argp_error(state,
				   "--metrics-textfile needs a file name, not '%s'", arg);
		o->metrics_textfile = arg;
		return 0;
	case 'p':
		v = strtoul(arg, &end, 10);
		if (*end || v == 0 || v > 0x3fffffff)
			argp_error(state, "--pid takes a process id, not '%s'", arg);
		if (o->npids == AGENT_MAX_TARGETS)
			argp_error(state, "too many --pid");
		o->pids[o->npids++] = (uint32_t)v;
		return 0;
	case OPT_KEEP_RUNNING:
		o->keep_running = true;
		return 0;
	case OPT_JSON:
		o->json_path = arg;
		return 0;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s'", arg);
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

/* The config's [cgroup PATH] sections, then --cgroup, then --pid; 0 or -1. */
static int add_targets(struct session *s)
{
	const struct agent_opts *o = s->o;
	const struct agent_config *cfg = &s->cfg;
	char err[1024];
	int rc = 0;

	for (int i = 0; !rc && i < cfg->ncgroups; i++)
		rc = agent_add_cgroup(s->a, cfg->cgroups[i].path, &cfg->cgroups[i].policy,
				      err, sizeof(err));
	for (int i = 0; !rc && i < o->ncgroups; i++)
		rc = agent_add_cgroup_opts(s->a, o->cgroups[i],
					   agent_config_policy_for(cfg, o->cgroups[i]),
					   o->cgroup_exact[i], err, sizeof(err));
	for (int i = 0; !rc && i < o->npids; i++)
		rc = agent_add_pid(s->a, o->pids[i], &cfg->def, err, sizeof(err));
	if (rc)
		fprintf(stderr, "leap-agent: %s\n", err);
	return rc ? -1 : 0;
}

/*
 * Backend mode on addresses reads swap slots from /proc/PID/pagemap, which
 * shows them only through a file opened with CAP_SYS_ADMIN (swapslot.h):
 * open the pid targets' files now, before the capabilities go.  Processes
 * that can appear later (cgroup targets, or targets still to come) need
 * the capability kept: returns whether to keep it.
 */
static bool preopen_targets(struct agent *a, bool more_later)
{
	bool keep = more_later;

	if (!a->ex.be)
		return false;
	for (int i = 0; i < a->ntargets; i++) {
		struct agent_target *t = &a->targets[i];
		int rc;

		if (t->kind != TARGET_PID) {
			keep = true;
			continue;
		}
		rc = procs_preopen(a->ex.procs, t->tgid);
		if (rc)
			fprintf(stderr, "leap-agent: pid %u: /proc/%u/pagemap: %s\n",
				t->tgid, t->tgid, strerror(-rc));
	}
	return keep;
}

int do_attach(int argc, char **argv)
{
	struct argp_child kids[] = {{&agent_common_argp, 0, "Common options:", 0}, {}};
	struct argp argp = {
		attach_opts,
		parse_attach,
		NULL,
		"Watch cgroups and processes and prefetch their swapped pages.\v"
		"Targets come from --cgroup, --pid and the config's [cgroup PATH] "
		"sections.  SIGINT/SIGTERM detach and remove the pins; SIGHUP reloads "
		"the config (a bad file keeps the old policy; new [cgroup] sections "
		"take a restart).  Without --keep-running the agent exits 0 when no "
		"target is left.",
		kids,
		NULL,
		NULL};
	struct agent_opts o = AGENT_OPTS_INIT;
	struct session s;
	json_object *sum;
	int rc = 1;

	if (argp_parse(&argp, argc, argv, 0, NULL, &o))
		return 2;
	if (session_config(&s, &o))
		return 1;
	if (o.ncgroups + o.npids + s.cfg.ncgroups == 0 && !o.keep_running) {
		fprintf(stderr,
			"leap-agent: nothing to watch: give --cgroup PATH, --pid PID or "
			"[cgroup PATH] sections in --config\n");
		return 2;
	}
	session_guard(&s, NULL);
	if (session_start(&s) || add_targets(&s))
		goto out;
	session_warn_observing(&s);
	if (session_drop_caps(&s, preopen_targets(s.a, o.keep_running)))
		goto out;
	fprintf(stderr,
		"leap-agent: attached to %d target(s), hook %s, prefetch %s, caps %s\n",
		s.a->ntargets, leap_observer_hook_name(s.a->obs), agent_prefetch_via(s.a),
		s.caps);
	if (s.a->ntargets == 0)
		fprintf(stderr,
			"leap-agent: nothing to watch yet: add [cgroup PATH] sections to "
			"%s and restart the agent\n",
			o.config_path ? o.config_path : "a --config file");
	session_clock_start(&s);
	session_loop(&s, 0, NULL);
	sum = session_summary(&s);
	summary_print(stderr, sum);
	summary_write(o.json_path, sum);
	json_object_put(sum);
	rc = 0;
out:
	session_end(&s);
	return rc;
}
