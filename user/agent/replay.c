// SPDX-License-Identifier: MIT
/*
 * `leap-agent replay FILE`: the decision core run again over a recording
 * (`run|attach --record FILE`, recording.h), with no kernel, BPF or root:
 * the plans it makes and its counters, byte for byte the same on every
 * replay, and beside them the counters the live run's core ended with.
 */
#include <argp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "recording.h"

struct replay_args {
	const char *path;
	bool plans;
	bool check;
	uint32_t lanes;
	bool no_sweeps;
	bool events_only;
};

static const struct argp_option replay_opts[] = {
	{"plans", 'p', NULL, 0,
	 "Print a line per event that planned something (a window, a hold, cold "
	 "pages, a quiet thread, a verdict), not only the verdicts and totals",
	 0},
	{"check", 'C', NULL, 0,
	 "Exit 1 unless the replay's windows and pages are the live run's", 0},
	{"lanes", 'l', "N", 0,
	 "Decide with N streams per key (1-8; 1: the paper's single history) instead "
	 "of the recorded policy's",
	 0},
	{"no-sweeps", 'S', NULL, 0,
	 "Decide without sweeps (each process's own streams only), where the live "
	 "run followed shared regions' fronts; their recorded answers are skipped",
	 0},
	{"events-only", 'E', NULL, 0,
	 "Judge the outcome by the target's swap events alone, leaving out the counts "
	 "of swap-cache hits not the agent's that the tracepoint path's events carry "
	 "(as the agent judged before recording version 5)",
	 0},
	{},
};

static error_t parse_replay(int key, char *arg, struct argp_state *state)
{
	struct replay_args *r = state->input;

	switch (key) {
	case 'p':
		r->plans = true;
		return 0;
	case 'C':
		r->check = true;
		return 0;
	case 'S':
		r->no_sweeps = true;
		return 0;
	case 'E':
		r->events_only = true;
		return 0;
	case 'l': {
		char *end;
		unsigned long v = strtoul(arg, &end, 10);

		if (!*arg || *end || v < 1 || v > LEAP_LANES_MAX)
			argp_error(state, "--lanes must be 1..%u, not '%s'",
				   LEAP_LANES_MAX, arg);
		r->lanes = (uint32_t)v;
		return 0;
	}
	case ARGP_KEY_ARG:
		if (r->path)
			argp_error(state, "one recording at a time");
		r->path = arg;
		return 0;
	case ARGP_KEY_NO_ARGS:
		argp_error(state, "give the recording to replay");
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

int do_replay(int argc, char **argv)
{
	struct argp argp = {replay_opts,
			    parse_replay,
			    "FILE",
			    "Run the decision core again over a recording made with "
			    "run or attach --record FILE, and print what it decides.\v"
			    "Needs no root, kernel support or BPF.  Two replays of one "
			    "recording print the same bytes; the last line compares the "
			    "replay's windows and pages with those of the live run that "
			    "made the recording.",
			    NULL,
			    NULL,
			    NULL};
	struct replay_args r = {0};
	struct replay_opts o = {.out = stdout};
	char err[512];
	bool same;

	if (argp_parse(&argp, argc, argv, 0, NULL, &r))
		return 2;
	o.plans = r.plans;
	o.lanes = r.lanes;
	o.no_sweeps = r.no_sweeps;
	o.events_only = r.events_only;
	if (recording_report(r.path, &o, &same, err, sizeof(err))) {
		fflush(stdout);
		fprintf(stderr, "leap-agent: replay %s: %s\n", r.path, err);
		return 1;
	}
	return r.check && !same ? 1 : 0;
}
