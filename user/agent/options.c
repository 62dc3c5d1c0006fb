// SPDX-License-Identifier: MIT
/* Options shared by attach and run (options.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

enum {
	OPT_HOOK = 1000,
	OPT_RINGBUF,
	OPT_KERNEL_RA,
	OPT_BPF_STATS,
	OPT_BACKEND,
	OPT_BACKEND_DEV,
	OPT_BACKEND_INTO,
	OPT_COLD_BEHIND,
	OPT_FAULT_HOOKS,
	OPT_WORKERS,
	OPT_RECORD,
	OPT_PREFETCH_CPU,
	OPT_OUTCOME,
	OPT_WAKEUPS,
	OPT_SWAP_CACHE_HITS,
};

/*
 * The index of arg among the NULL-terminated names of option opt; an
 * argp usage error (exit 64) naming them otherwise.
 */
static int choice(struct argp_state *state, const char *opt, const char *arg,
		  const char *const *names)
{
	char list[128] = "";
	size_t len = 0;
	int n = 0;

	for (; names[n]; n++)
		if (!strcmp(arg, names[n]))
			return n;
	for (int i = 0; i < n && len < sizeof(list); i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s",
					i == 0	     ? ""
					: i == n - 1 ? " or "
						     : ", ",
					names[i]);
	argp_error(state, "--%s takes %s, not '%s'", opt, list, arg);
	return -1; /* not reached: argp_error exits */
}

static const struct argp_option common_opts[] = {
	{"config", 'c', "FILE", 0, "Policy file (INI; see leap-agent(8))", 0},
	{"hook", OPT_HOOK, "auto|fentry|tracepoint", 0,
	 "Fault hooks (default auto: fentry where the kernel allows it)", 0},
	{"ringbuf-kb", OPT_RINGBUF, "KB", 0, "BPF ring buffer size (power of two)", 0},
	{"kernel-readahead", OPT_KERNEL_RA, "keep|defer|off", 0,
	 "keep: Linux's swap readahead stays on; Leap leaves the streams it serves to it "
	 "when they write, find zero-filled swap entries or read shared memory, and "
	 "prefetches past it on other read streams.  defer: Leap leaves every "
	 "stream it serves to it.  off: set vm.page-cluster=0 while running so Leap "
	 "alone prefetches (restored at exit).  Default: keep",
	 0},
	{"cold-behind", OPT_COLD_BEHIND, "PAGES", 0,
	 "Give MADV_COLD to the pages a fill (a read-modify-write stream the kernel's "
	 "readahead serves) went past PAGES pages ago, so that reclaim takes them "
	 "first (Leap's eager eviction); 0: never.  Overrides the policy file's "
	 "cold_behind.  Default 256",
	 0},
	{"fault-hooks", OPT_FAULT_HOOKS, "on-swap|always", 0,
	 "Tracepoint path: attach the fault hooks, which every fault of every task "
	 "pays for, only while a target swaps in (on-swap, the default), or for as "
	 "long as the agent runs (always)",
	 0},
	{"wakeups", OPT_WAKEUPS, "asleep|always", 0,
	 "Wake the agent for a near major fault only while it sleeps (asleep, the "
	 "default on x86-64: a wake-up costs the faulting thread an interrupt, "
	 "and an awake agent reads the event anyway) or for every one (always, "
	 "and on other architectures)",
	 0},
	{"workers", OPT_WORKERS, "N", 0,
	 "Threads that issue the windows, so that the event loop never waits on "
	 "process_madvise (0: the event loop issues them itself).  Default: the "
	 "config's [agent] workers, else a quarter of the CPUs, 1 to 8 (none "
	 "below 4 CPUs)",
	 0},
	{"prefetch-cpu", OPT_PREFETCH_CPU, "fault|any", 0,
	 "Where a window is issued: on the CPU its fault completed on, the "
	 "program's, as Linux's own readahead runs in the faulting thread (fault, "
	 "the default), or wherever the scheduler runs the agent (any)",
	 0},
	{"outcome", OPT_OUTCOME, "judge|off", 0,
	 "Every target: now and then hold its windows for a short epoch and stand "
	 "down where it runs as fast without them (judge), or not (off); the "
	 "config's outcome key otherwise",
	 0},
	{"swap-cache-hits", OPT_SWAP_CACHE_HITS, NULL, 0,
	 "Tracepoint path: count the swap-cache hits on pages the agent did not "
	 "prefetch (one more hook on every fault while the hooks are on) and let the "
	 "outcome judge count them",
	 0},
	{"bpf-stats", OPT_BPF_STATS, NULL, 0,
	 "Measure BPF run time per event (bpf_enable_stats)", 0},
	{"backend", OPT_BACKEND, "SOCKET", 0,
	 "Backend mode: push the swap slots of the engine's windows to this leap-swapd "
	 "control socket (the engine runs on virtual addresses; slots come from "
	 "/proc/PID/pagemap)",
	 0},
	{"backend-dev", OPT_BACKEND_DEV, "DEV", 0,
	 "The swap block device leap-swapd serves (e.g. /dev/loop0); with --backend", 0},
	{"backend-into", OPT_BACKEND_INTO, "swapcache|cache", 0,
	 "With --backend: swapcache (default) also process_madvises the pushed pages, "
	 "so the kernel reads them from leap-swapd's cache into its swap cache and the "
	 "fault is minor; cache only pushes (the fault stays major, served from "
	 "leap-swapd's cache)",
	 0},
	{"record", OPT_RECORD, "FILE", 0,
	 "Record the decision core's inputs to FILE (gzip; replaced if it exists): "
	 "every fault event as the agent saw it, with the answers its /proc reads "
	 "gave, the workers' results and the ticks; `leap-agent replay FILE` runs "
	 "the same decisions again",
	 0},
	{"verbose", 'v', NULL, 0, "Log more", 0},
	{},
};

static error_t parse_common(int key, char *arg, struct argp_state *state)
{
	struct agent_opts *o = state->input;
	unsigned long v;
	char *end;

	switch (key) {
	case 'c':
		o->config_path = arg;
		break;
	case 'v':
		o->verbose = true;
		break;
	case OPT_HOOK: {
		static const enum leap_hook modes[] = {LEAP_HOOK_AUTO, LEAP_HOOK_FENTRY,
						       LEAP_HOOK_TRACEPOINT};

		o->hook = modes[choice(
			state, "hook", arg,
			(const char *const[]){"auto", "fentry", "tracepoint", NULL})];
		break;
	}
	case OPT_RINGBUF:
		v = strtoul(arg, &end, 10);
		if (*end || v < 4 || v > (1u << 20) || (v & (v - 1)))
			argp_error(
				state,
				"--ringbuf-kb must be a power of two from 4 to 1048576");
		o->ring_kb = (unsigned)v;
		break;
	case OPT_KERNEL_RA:
		v = (unsigned long)choice(
			state, "kernel-readahead", arg,
			(const char *const[]){"keep", "defer", "off", NULL});
		o->kernel_ra_defer = v == 1;
		o->kernel_ra_off = v == 2;
		break;
	case OPT_COLD_BEHIND:
		v = strtoul(arg, &end, 10);
		if (!*arg || *end || v > (1u << 20))
			argp_error(state,
				   "--cold-behind takes a page count up to 1048576 (0: "
				   "off), not '%s'",
				   arg);
		o->cold_behind = (long)v;
		break;
	case OPT_BPF_STATS:
		o->bpf_stats = true;
		break;
	case OPT_SWAP_CACHE_HITS:
		o->swap_cache_hits = true;
		break;
	case OPT_WORKERS:
		v = strtoul(arg, &end, 10);
		if (!*arg || *end || v > ISSUER_WORKERS_MAX)
			argp_error(state, "--workers takes 0 to %d, not '%s'",
				   ISSUER_WORKERS_MAX, arg);
		o->workers = (int)v;
		break;
	case OPT_FAULT_HOOKS:
		o->fault_hooks_always =
			choice(state, "fault-hooks", arg,
			       (const char *const[]){"on-swap", "always", NULL}) == 1;
		break;
	case OPT_WAKEUPS:
		o->wakeups_always =
			choice(state, "wakeups", arg,
			       (const char *const[]){"asleep", "always", NULL}) == 1;
		break;
	case OPT_PREFETCH_CPU:
		o->prefetch_cpu_any =
			choice(state, "prefetch-cpu", arg,
			       (const char *const[]){"fault", "any", NULL}) == 1;
		break;
	case OPT_OUTCOME:
		o->outcome = choice(state, "outcome", arg,
				    (const char *const[]){"judge", "off", NULL}) == 0;
		break;
	case OPT_RECORD:
		if (!*arg)
			argp_error(state, "--record needs a file name");
		o->record_path = arg;
		break;
	case OPT_BACKEND:
		o->backend_sock = arg;
		break;
	case OPT_BACKEND_DEV:
		o->backend_dev = arg;
		break;
	case OPT_BACKEND_INTO:
		o->backend_cache_only =
			choice(state, "backend-into", arg,
			       (const char *const[]){"swapcache", "cache", NULL}) == 1;
		o->backend_into_given = true;
		break;
	case ARGP_KEY_END:
		if (!o->backend_sock != !o->backend_dev)
			argp_error(state, "--backend and --backend-dev go together");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

const struct argp agent_common_argp = {common_opts, parse_common, NULL, NULL,
				       NULL,	    NULL,	  NULL};

void agent_opts_override(const struct agent_opts *o, struct agent_config *cfg)
{
	if (o->cold_behind >= 0) {
		cfg->def.cold_behind = (uint32_t)o->cold_behind;
		for (int i = 0; i < cfg->ncgroups; i++)
			cfg->cgroups[i].policy.cold_behind = (uint32_t)o->cold_behind;
	}
	if (o->outcome >= 0) {
		cfg->def.judge_outcome = o->outcome;
		for (int i = 0; i < cfg->ncgroups; i++)
			cfg->cgroups[i].policy.judge_outcome = o->outcome;
	}
}

int agent_opts_load_config(const struct agent_opts *o, struct agent_config *cfg)
{
	char err[1024];

	if (!o->config_path) {
		agent_config_default(cfg);
	} else if (agent_config_load(o->config_path, cfg, err, sizeof(err))) {
		fprintf(stderr, "leap-agent: %s\n", err);
		return -1;
	}
	agent_opts_override(o, cfg);
	return 0;
}
