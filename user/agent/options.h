/* SPDX-License-Identifier: MIT */
/*
 * The options attach and run share (a child argp parser each of them
 * includes), and what the command line sets over the policy file.
 */
#ifndef LEAP_AGENT_OPTIONS_H
#define LEAP_AGENT_OPTIONS_H

#include <argp.h>
#include <stdbool.h>
#include <stdint.h>

#include "agent.h"
#include "config.h"
#include "observer.h"

struct agent_opts {
	const char *config_path;
	enum leap_hook hook;
	unsigned ring_kb;     /* 0: the config's */
	bool kernel_ra_off;   /* --kernel-readahead off */
	bool kernel_ra_defer; /* --kernel-readahead defer */
	long cold_behind;     /* --cold-behind; -1: from the config */
	int outcome;	      /* --outcome: 1 judge, 0 off; -1: from the config */
	const char *backend_sock;
	const char *backend_dev;
	bool backend_cache_only; /* --backend-into cache */
	bool backend_into_given; /* --backend-into named: no fallback */
	bool bpf_stats;
	bool verbose;
	bool fault_hooks_always; /* --fault-hooks always: no arming */
	bool wakeups_always;	 /* --wakeups always: even while the agent is awake */
	bool swap_cache_hits;	 /* --swap-cache-hits: counted, and judged with */
	int workers;		 /* --workers; -1: from the config */
	bool prefetch_cpu_any;	 /* --prefetch-cpu any: windows issued anywhere */
	const char *record_path; /* --record: the decision core's inputs */
	/* attach */
	const char *cgroups[AGENT_MAX_TARGETS];
	bool cgroup_exact[AGENT_MAX_TARGETS];
	int ncgroups;
	uint32_t pids[AGENT_MAX_TARGETS];
	int npids;
	const char *metrics_textfile;
	bool keep_running; /* stay up with no targets (a service) */
	/* run */
	uint64_t mem_limit;
	int policy; /* enum agent_mode; -1: from the config */
	const char *json_path;
	char **cmd;
};

/* Defaults: nothing given. */
#define AGENT_OPTS_INIT                                                                  \
	{                                                                                \
		.policy = -1, .cold_behind = -1, .outcome = -1, .workers = -1            \
	}

/*
 * The common options as a child parser; the parent's ARGP_KEY_INIT must
 * pass its input on (state->child_inputs[0] = state->input).
 */
extern const struct argp agent_common_argp;

/* The config file (or the defaults), with the command line's overrides;
 * 0, or -1 after saying why. */
int agent_opts_load_config(const struct agent_opts *o, struct agent_config *cfg);
/* Re-applies the overrides to a freshly loaded config (SIGHUP). */
void agent_opts_override(const struct agent_opts *o, struct agent_config *cfg);

#endif
