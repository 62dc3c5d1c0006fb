// SPDX-License-Identifier: MIT
/*
 * leap-memd: a memory server for leap's remote swap backend.  It lends a
 * fixed amount of its own RAM, locked in memory, to authenticated clients
 * (leap-swapd through user/memclient) over the wire protocol of
 * include/leap/wire.h.  See docs/backend.md.
 *
 * Exit status: 0 clean stop (SIGTERM/SIGINT), 1 start-up or runtime failure,
 * 2 bad usage.
 */
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#include "leap/size.h"
#include "memd.h"

const char *argp_program_version = "leap-memd 0.1";
const char *argp_program_bug_address = "the leap issue tracker";

static const char doc[] =
	"leap-memd: serve pages from this machine's RAM to leap-swapd.\v"
	"The memory (--size) is allocated and locked at start.  Clients must "
	"answer an HMAC-SHA256 challenge with the secret of --secret-file, a file "
	"nobody but its owner may read (mode 0600).  SIGUSR1 drops every client "
	"connection (a network failure, for tests); SIGTERM stops.";

enum {
	OPT_NO_MLOCK = 0x100,
	OPT_PORT_FILE,
	OPT_MAX_CLIENTS,
	OPT_AUTH_TIMEOUT,
	OPT_DELAY,
	OPT_PIN_BUDGET,
	OPT_REGION_SIZE,
	OPT_FH_CLIENTS,
};

static const struct argp_option options[] = {
	{"size", 's', "SIZE", 0, "Memory to serve: bytes or K/M/G suffix (required)", 0},
	{"listen", 'l', "ADDR:PORT", 0, "Address to listen on (default 127.0.0.1:7480)",
	 0},
	{"secret-file", 'k', "FILE", 0, "Shared secret, mode 0600 (required)", 0},
	{"transport", 't', "NAME", 0,
	 "Transport: tcp (default) or rdma (listen on the IP of the RDMA device's "
	 "netdev)",
	 0},
	{"max-clients", OPT_MAX_CLIENTS, "N", 0, "Connections at once (default 64)", 0},
	{"auth-timeout", OPT_AUTH_TIMEOUT, "MS", 0,
	 "Drop peers not authenticated within MS (default 5000)", 0},
	{"port-file", OPT_PORT_FILE, "FILE", 0,
	 "Write the bound ADDR:PORT here once listening (with --listen ...:0)", 0},
	{"no-mlock", OPT_NO_MLOCK, NULL, 0,
	 "Do not lock memory (unprivileged tests only: served pages could swap)", 0},
	{"delay-us", OPT_DELAY, "US", 0,
	 "Hold each reply US microseconds (0..100000, default 0): emulates a server "
	 "across a network when client and server share one machine (benchmarks)",
	 0},
	{"verbose", 'v', NULL, 0, "Log every connection", 0},
	{"pin-budget", OPT_PIN_BUDGET, "SIZE", 0,
	 "RDMA: pin at most SIZE of the store, registered on demand in regions "
	 "shared among --fh-clients clients (Firehose; default: the whole store, "
	 "registered once)",
	 0},
	{"region-size", OPT_REGION_SIZE, "SIZE", 0,
	 "With --pin-budget: bytes per region, a power of two (default 1M)", 0},
	{"fh-clients", OPT_FH_CLIENTS, "N", 0,
	 "With --pin-budget: clients the budget is divided among; each may hold "
	 "budget / (region size * N) regions (default 4)",
	 0},
	{0},
};

struct args {
	struct memd_config cfg;
	uint64_t size;
	const char *secret_file;
	bool no_mlock;
};

static int parse_uint(const char *s, unsigned long min, unsigned long max,
		      unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 10);
	return errno || end == s || *end || *out < min || *out > max ? -1 : 0;
}

static error_t parse_opt(int key, char *arg, struct argp_state *st)
{
	struct args *a = st->input;
	unsigned long v;

	switch (key) {
	case 's':
		if (leap_parse_size(arg, &a->size) || a->size < LEAP_WIRE_PAGE_SIZE)
			argp_error(st, "bad --size '%s'", arg);
		break;
	case 'l':
		a->cfg.listen = arg;
		break;
	case 'k':
		a->secret_file = arg;
		break;
	case 't':
		a->cfg.transport = leap_transport_find(arg);
		if (!a->cfg.transport)
			argp_error(st, "unknown transport '%s' (tcp or rdma)", arg);
		break;
	case OPT_MAX_CLIENTS:
		if (parse_uint(arg, 1, 4096, &v))
			argp_error(st, "bad --max-clients '%s' (1..4096)", arg);
		a->cfg.max_clients = (unsigned)v;
		break;
	case OPT_DELAY:
		if (parse_uint(arg, 0, 100000, &v))
			argp_error(st, "bad --delay-us '%s' (0..100000)", arg);
		a->cfg.delay_us = (unsigned)v;
		break;
	case OPT_AUTH_TIMEOUT:
		if (parse_uint(arg, 10, 600000, &v))
			argp_error(st, "bad --auth-timeout '%s' (10..600000)", arg);
		a->cfg.auth_timeout_ms = (int)v;
		break;
	case OPT_PORT_FILE:
		a->cfg.port_file = arg;
		break;
	case OPT_NO_MLOCK:
		a->no_mlock = true;
		break;
	case 'v':
		a->cfg.verbose = true;
		break;
	case OPT_PIN_BUDGET:
		if (leap_parse_size(arg, &a->cfg.pin_budget) || !a->cfg.pin_budget)
			argp_error(st, "bad --pin-budget '%s'", arg);
		break;
	case OPT_REGION_SIZE:
		if (leap_parse_size(arg, &a->cfg.region_size) ||
		    a->cfg.region_size < LEAP_WIRE_PAGE_SIZE ||
		    (a->cfg.region_size & (a->cfg.region_size - 1)))
			argp_error(st, "bad --region-size '%s' (a power of two >= 4K)",
				   arg);
		break;
	case OPT_FH_CLIENTS:
		if (parse_uint(arg, 1, 4096, &v))
			argp_error(st, "bad --fh-clients '%s' (1..4096)", arg);
		a->cfg.fh_clients = (uint32_t)v;
		break;
	case ARGP_KEY_ARG:
		argp_error(st, "unexpected argument '%s'", arg);
		break;
	case ARGP_KEY_END:
		if (!a->size)
			argp_error(st, "--size is required");
		if (!a->secret_file)
			argp_error(st, "--secret-file is required");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct args a = {
		.cfg = {.listen = "127.0.0.1:7480",
			.transport = &leap_tcp_transport,
			.max_clients = 64,
			.auth_timeout_ms = 5000,
			.region_size = 1 << 20,
			.fh_clients = 4},
	};
	struct argp argp = {options, parse_opt, NULL, doc, NULL, NULL, NULL};
	struct memd_store store;
	char err[512];
	long n;
	int rc;

	/* Usage errors exit 2, as the header says (argp's default is 64). */
	argp_err_exit_status = 2;
	setvbuf(stderr, NULL, _IOLBF, 0);
	if (argp_parse(&argp, argc, argv, 0, NULL, &a))
		return 2;
	n = leap_secret_load(a.secret_file, a.cfg.secret, sizeof(a.cfg.secret), err,
			     sizeof(err));
	if (n < 0) {
		fprintf(stderr, "leap-memd: %s\n", err);
		return 1;
	}
	a.cfg.secret_len = (size_t)n;
	/* No core dumps of served pages or the secret. */
	prctl(PR_SET_DUMPABLE, 0);
	if (memd_store_init(&store, a.size / LEAP_WIRE_PAGE_SIZE, !a.no_mlock, err,
			    sizeof(err))) {
		fprintf(stderr, "leap-memd: %s\n", err);
		return 1;
	}
	/* Everything allocated later (connection buffers) is locked as well. */
	if (!a.no_mlock && mlockall(MCL_CURRENT | MCL_FUTURE))
		fprintf(stderr, "leap-memd: mlockall: %s (served pages are locked)\n",
			strerror(errno));
	rc = memd_serve(&a.cfg, &store);
	memd_store_fini(&store);
	return rc;
}
