// SPDX-License-Identifier: MIT
/*
 * leap-agent: Leap's majority-trend prefetcher for swapped memory on a stock
 * kernel.  main() holds the command table and the global options; each
 * subcommand lives in its own file under user/agent/ (commands.h).
 */
#include <argp.h>
#include <stdio.h>
#include <string.h>

#include "agent/commands.h"

const char *argp_program_version = "leap-agent 0.1";
const char *argp_program_bug_address = "the leap issue tracker";

static const struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} commands[] = {
	{"attach", do_attach, "watch cgroups or processes and prefetch for them"},
	{"run", do_run, "run a command in a memory-limited cgroup under a policy"},
	{"replay", do_replay, "run the decisions of a recording (--record) again"},
	{"stats", do_stats, "live per-cgroup counters"},
	{"status", do_status, "kernel features found and the running agent"},
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: leap-agent COMMAND [OPTIONS]\n\n"
		   "Leap's majority-trend prefetcher for swapped memory, on a stock "
		   "kernel.\n\nCommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-7s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\n'leap-agent COMMAND --help' describes each.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		puts(argp_program_version);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name)) {
			/* argp sees "leap-agent CMD" as the program name. */
			char prog[64];

			snprintf(prog, sizeof(prog), "leap-agent %s", commands[i].name);
			argv[1] = prog;
			return commands[i].fn(argc - 1, argv + 1);
		}
	fprintf(stderr, "leap-agent: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return 2;
}
