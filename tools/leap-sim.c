// SPDX-License-Identifier: MIT
/*
 * leap-sim: replays a page-access trace through a model of local memory
 * and reports how each prefetcher does (model: tools/sim/sim.h, usage and
 * measured numbers: docs/sim.md).  Scripts depend on this interface:
 *   leap-sim --policy POLICY --memory N|P% [--json|--csv] TRACE
 */
#include <argp.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "sim/report.h"
#include "sim/sim.h"
#include "sim/trace_load.h"

#define MAX_RUNS SIM_POL_COUNT

static struct {
	enum sim_policy_kind policy[MAX_RUNS];
	int npolicies;
	const char *memory;
	const char *trace;
	enum leap_trace_format format;
	enum sim_report_format report;
	struct sim_policy_opts opts;
	struct sim_config cfg;
	bool bench;
} env = {
	.format = LEAP_TRACE_AUTO,
	.report = SIM_REPORT_TABLE,
	.cfg = {.hit_us = SIM_DEFAULT_HIT_US, .miss_us = SIM_DEFAULT_MISS_US},
};

const char *argp_program_version = "leap-sim 0.1";
static const char doc[] =
	"Replay a page-access trace through a model of local memory (LRU resident "
	"set whose size includes the prefetch cache) and report how each "
	"prefetch policy does.\n\n"
	"POLICY: none, linux (VMA-based swap readahead), linux-cluster (swap-slot "
	"readahead), next-n, stride, leap (per process), leap-thread (per thread), or "
	"all; comma-separated and/or repeated options run side by side.\n"
	"TRACE: text (\"[[PID] TID] PAGE\" per line), memsim (\"%08x R|W\", byte "
	"addresses) or leap binary; '-' reads stdin.\n\n"
	"Every footprint page starts in remote memory.  est_time_us = misses * "
	"miss-us + hits * hit-us (accesses to resident pages cost nothing).\n\n"
	"Examples:\n"
	"  leap-tracegen --pattern stride:8 --pages 8192 --passes 3 -o s8.txt\n"
	"  leap-sim --policy leap,linux --memory 50% s8.txt\n"
	"  leap-sim --policy all --memory 4096 --json s8.txt";
static const char args_doc[] = "TRACE";

enum {
	OPT_JSON = 1000,
	OPT_CSV,
	OPT_HIT_US,
	OPT_MISS_US,
	OPT_PAGE_CLUSTER,
	OPT_WINDOW,
	OPT_HSIZE,
	OPT_NSPLIT,
	OPT_PW_MAX,
	OPT_MAX_DELTA,
	OPT_FLAVOR,
	OPT_LANES,
	OPT_BENCH,
};

static const struct argp_option options[] = {
	{"policy", 'p', "POLICY[,...]", 0, "Policies to run (repeatable)", 0},
	{"memory", 'm', "N|P%", 0, "Local memory: N pages or P% of the footprint", 0},
	{"format", 'f', "FMT", 0, "Trace format: auto (default), text, memsim, bin", 0},
	{"json", OPT_JSON, NULL, 0, "One JSON object per policy per line", 1},
	{"csv", OPT_CSV, NULL, 0, "CSV with a header line", 1},
	{"bench", OPT_BENCH, NULL, 0,
	 "Repeat each replay for >= 0.3 s, print events/s on stderr and in the output",
	 1},
	{"hit-us", OPT_HIT_US, "X", 0, "Cost of a prefetch hit in us (default 1)", 2},
	{"miss-us", OPT_MISS_US, "Y", 0,
	 "Cost of a miss (remote read) in us (default 10)", 2},
	{"page-cluster", OPT_PAGE_CLUSTER, "N", 0,
	 "linux*: vm.page-cluster, window up to 2^N pages (default 3)", 3},
	{"window", OPT_WINDOW, "N", 0, "next-n, stride: pages per prefetch (default 8)",
	 3},
	{"hsize", OPT_HSIZE, "N", 0, "leap*: AccessHistory size (default 32)", 4},
	{"nsplit", OPT_NSPLIT, "N", 0,
	 "leap*: first FINDTREND window hsize/N (default 2)", 4},
	{"pw-max", OPT_PW_MAX, "N", 0, "leap*: largest prefetch window (default 32)", 4},
	{"max-delta", OPT_MAX_DELTA, "N", 0,
	 "leap* (ours): largest |delta| taken as a trend, 0 = none (default 256)", 4},
	{"flavor", OPT_FLAVOR, "paper|ours", 0, "leap*: algorithm flavour (default ours)",
	 4},
	{"lanes", OPT_LANES, "N", 0,
	 "leap* (ours): streams per process or thread, 1-8; 1 = the paper's single "
	 "history (default 4)",
	 4},
	{0},
};

static int parse_uint(const char *s, unsigned long long max, unsigned long long *out)
{
	char *end;

	if (!s || !(*s >= '0' && *s <= '9'))
		return -1;
	errno = 0;
	*out = strtoull(s, &end, 0);
	return errno || *end || *out > max ? -1 : 0;
}

static int parse_us(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return errno || *end || end == s || !(*out >= 0) ? -1 : 0;
}

static error_t add_policies(char *list, struct argp_state *state)
{
	for (char *save, *tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		enum sim_policy_kind k;

		if (strcmp(tok, "all") == 0) {
			env.npolicies = 0;
			for (int i = 0; i < SIM_POL_COUNT; i++)
				env.policy[env.npolicies++] = (enum sim_policy_kind)i;
			continue;
		}
		if (sim_policy_parse(tok, &k))
			argp_error(state, "unknown policy '%s' (known: %s)", tok,
				   sim_policy_names());
		/* Each policy once, in the order first given. */
		bool dup = false;

		for (int i = 0; i < env.npolicies; i++)
			dup = dup || env.policy[i] == k;
		if (!dup)
			env.policy[env.npolicies++] = k;
	}
	return 0;
}

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	unsigned long long v;

	switch (key) {
	case 'p':
		return add_policies(arg, state);
	case 'm':
		env.memory = arg;
		break;
	case 'f':
		if (leap_trace_format_parse(arg, &env.format))
			argp_error(state, "unknown trace format '%s'", arg);
		break;
	case OPT_JSON:
		env.report = SIM_REPORT_JSON;
		break;
	case OPT_CSV:
		env.report = SIM_REPORT_CSV;
		break;
	case OPT_BENCH:
		env.bench = true;
		break;
	case OPT_HIT_US:
		if (parse_us(arg, &env.cfg.hit_us))
			argp_error(state, "bad --hit-us '%s'", arg);
		break;
	case OPT_MISS_US:
		if (parse_us(arg, &env.cfg.miss_us))
			argp_error(state, "bad --miss-us '%s'", arg);
		break;
	case OPT_PAGE_CLUSTER:
		if (parse_uint(arg, 10, &v))
			argp_error(state, "bad --page-cluster '%s' (0..10)", arg);
		env.opts.page_cluster = (uint32_t)v;
		break;
	case OPT_WINDOW:
		if (parse_uint(arg, 4096, &v) || v == 0)
			argp_error(state, "bad --window '%s' (1..4096)", arg);
		env.opts.window = (uint32_t)v;
		break;
	case OPT_HSIZE:
	case OPT_NSPLIT:
	case OPT_PW_MAX:
		if (parse_uint(arg, UINT32_MAX, &v))
			argp_error(state, "bad number '%s'", arg);
		if (key == OPT_HSIZE)
			env.opts.leap.hsize = (uint32_t)v;
		else if (key == OPT_NSPLIT)
			env.opts.leap.nsplit = (uint32_t)v;
		else
			env.opts.leap.pw_max = (uint32_t)v;
		break;
	case OPT_MAX_DELTA:
		if (parse_uint(arg, ULLONG_MAX, &v))
			argp_error(state, "bad --max-delta '%s'", arg);
		env.opts.leap.max_delta = v;
		break;
	case OPT_LANES:
		if (parse_uint(arg, LEAP_LANES_MAX, &v) || v == 0)
			argp_error(state, "bad --lanes '%s' (1..%u)", arg,
				   LEAP_LANES_MAX);
		env.opts.leap.lanes = (uint32_t)v;
		break;
	case OPT_FLAVOR:
		if (leap_flavor_parse(arg, &env.opts.leap.flavor))
			argp_error(state, "unknown flavor '%s' (paper or ours)", arg);
		break;
	case ARGP_KEY_ARG:
		if (env.trace)
			argp_error(state, "only one TRACE");
		env.trace = arg;
		break;
	case ARGP_KEY_END:
		if (!env.trace)
			argp_error(state, "no TRACE given");
		if (!env.memory)
			argp_error(state, "--memory is required");
		if (env.npolicies == 0)
			argp_error(state, "--policy is required");
		/* Checked here, before any output, for whichever policy needs it. */
		const char *why;

		if (leap_params_validate(&env.opts.leap, &why))
			argp_error(state, "%s", why);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static int load(struct sim_trace *t)
{
	char err[400];
	FILE *f = stdin;
	int rc;

	if (strcmp(env.trace, "-") != 0) {
		f = fopen(env.trace, "r");
		if (!f) {
			fprintf(stderr, "leap-sim: %s: %s\n", env.trace, strerror(errno));
			return -1;
		}
	}
	rc = sim_trace_load(t, f, env.trace, env.format, err, sizeof(err));
	if (f != stdin)
		fclose(f);
	if (rc)
		fprintf(stderr, "leap-sim: %s\n", err);
	return rc;
}

/* With --bench, repeats the replay so short traces still time reliably. */
static int run_one(const struct sim_trace *t, enum sim_policy_kind k,
		   struct sim_result *r)
{
	const char *why = NULL;
	double seconds = 0;
	uint64_t reps = 0;

	do {
		if (reps)
			sim_result_free(r);
		if (sim_run(t, k, &env.opts, &env.cfg, r, &why)) {
			fprintf(stderr, "leap-sim: %s: %s\n", sim_policy_name(k), why);
			return -1;
		}
		seconds += r->seconds;
		reps++;
	} while (env.bench && seconds < 0.3 && reps < 10000);
	r->seconds = seconds / (double)reps;
	if (env.bench)
		fprintf(stderr,
			"leap-sim: %-13s %.3g events/s (%llu events x %llu runs)\n",
			sim_policy_name(k), sim_events_per_s(r),
			(unsigned long long)r->accesses, (unsigned long long)reps);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct argp argp = {options, parse_arg, args_doc, doc, 0, 0, 0};
	struct sim_report_ctx ctx;
	struct sim_trace t;
	int rc = 0;

	sim_policy_opts_default(&env.opts);
	argp_err_exit_status = 2; /* usage errors: 2, like the rest of leap-sim */
	if (argp_parse(&argp, argc, argv, 0, NULL, NULL))
		return 2;
	if (load(&t))
		return 1;
	if (sim_parse_memory(env.memory, t.npages, &env.cfg.capacity)) {
		fprintf(stderr, "leap-sim: bad --memory '%s' (N pages or P%%)\n",
			env.memory);
		sim_trace_free(&t);
		return 2;
	}
	ctx = (struct sim_report_ctx){.trace_name = env.trace,
				      .trace = &t,
				      .opts = &env.opts,
				      .cfg = &env.cfg,
				      .bench = env.bench};
	sim_report_begin(stdout, env.report, &ctx);
	for (int i = 0; i < env.npolicies && rc == 0; i++) {
		struct sim_result r;

		if (run_one(&t, env.policy[i], &r)) {
			rc = 1;
			break;
		}
		if (sim_report_row(stdout, env.report, &ctx, &r)) {
			fprintf(stderr,
				"leap-sim: out of memory formatting the report\n");
			rc = 1;
		}
		sim_result_free(&r);
	}
	sim_trace_free(&t);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "leap-sim: writing output: %s\n", strerror(errno));
		rc = 1;
	}
	return rc;
}
