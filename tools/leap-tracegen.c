// SPDX-License-Identifier: MIT
/*
 * leap-tracegen: synthetic page-access traces for leap-sim (patterns:
 * tools/sim/patterns.h; formats: include/leap/trace.h).
 */
#include <argp.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim/patterns.h"

static struct {
	struct pat_spec spec;
	bool have_pattern;
	enum leap_trace_format format;
	const char *out;
} env = {
	.spec = {.pages = 0, .passes = 1, .seed = 1, .base = 0x10000},
	.format = LEAP_TRACE_TEXT,
};

const char *argp_program_version = "leap-tracegen 0.1";
static const char doc[] =
	"Generate a synthetic page-access trace.\n\n"
	"PATTERN: seq, reverse, stride:K, interleave:T (T threads, each sequential "
	"over its own region, in random order), phase (seq, reverse, stride 8 and "
	"random over four quarters), random (a new permutation per pass), noise:K "
	"(sequential, K% of steps preceded by a random page).  --pages is the "
	"footprint (distinct pages) of one pass.";

enum { OPT_BASE = 1000 };

static const struct argp_option options[] = {
	{"pattern", 't', "PATTERN", 0, "Access pattern (required)", 0},
	{"pages", 'n', "N", 0, "Distinct pages per pass (required)", 0},
	{"passes", 'P', "P", 0, "Repeat the pattern P times (default 1)", 0},
	{"seed", 's', "S", 0, "Random seed (default 1)", 0},
	{"format", 'f', "FMT", 0, "text (default), memsim or bin", 0},
	{"base", OPT_BASE, "PAGE", 0, "First page number (default 0x10000)", 0},
	{"output", 'o', "FILE", 0, "Write here instead of stdout", 0},
	{0},
};

static unsigned long long num(const char *s, unsigned long long max,
			      struct argp_state *state, const char *what)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = (s[0] >= '0' && s[0] <= '9') ? strtoull(s, &end, 0) : (end = (char *)s, 0);
	if (errno || *end || end == s || v > max)
		argp_error(state, "bad %s '%s'", what, s);
	return v;
}

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	const char *why;

	switch (key) {
	case 't':
		if (pat_parse(arg, &env.spec, &why))
			argp_error(state, "--pattern %s: %s", arg, why);
		env.have_pattern = true;
		break;
	case 'n':
		env.spec.pages = (uint32_t)num(arg, 1u << 30, state, "--pages");
		break;
	case 'P':
		env.spec.passes = (uint32_t)num(arg, 1u << 20, state, "--passes");
		break;
	case 's':
		env.spec.seed = num(arg, ~0ULL, state, "--seed");
		break;
	case OPT_BASE:
		env.spec.base = num(arg, LEAP_TRACE_PAGE_MAX, state, "--base");
		break;
	case 'f':
		if (leap_trace_format_parse(arg, &env.format) ||
		    env.format == LEAP_TRACE_AUTO)
			argp_error(state, "unknown format '%s' (text, memsim, bin)", arg);
		break;
	case 'o':
		env.out = arg;
		break;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s'", arg);
		break;
	case ARGP_KEY_END:
		if (!env.have_pattern || !env.spec.pages)
			argp_error(state, "--pattern and --pages are required");
		if (pat_validate(&env.spec, &why))
			argp_error(state, "%s", why);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static int append(void *ctx, const struct leap_trace_rec *rec)
{
	return leap_trace_append(ctx, rec);
}

int main(int argc, char **argv)
{
	static const struct argp argp = {options, parse_arg, NULL, doc, 0, 0, 0};
	struct leap_trace_writer w;
	FILE *f = stdout;
	int rc;

	argp_err_exit_status = 2; /* usage errors: 2, like the rest of leap-sim */
	if (argp_parse(&argp, argc, argv, 0, NULL, NULL))
		return 2;
	if (env.out && !(f = fopen(env.out, "w"))) {
		fprintf(stderr, "leap-tracegen: %s: %s\n", env.out, strerror(errno));
		return 1;
	}
	if (leap_trace_writer_open(&w, f, env.format, 0)) {
		fprintf(stderr, "leap-tracegen: %s\n", strerror(errno));
		return 1;
	}
	rc = pat_generate(&env.spec, append, &w);
	if (leap_trace_writer_close(&w))
		rc = rc ? rc : -1;
	if (f != stdout && fclose(f))
		rc = rc ? rc : -1;
	if (rc) {
		fprintf(stderr, "leap-tracegen: writing %s failed: %s\n",
			env.out ? env.out : "stdout", strerror(errno));
		return 1;
	}
	return 0;
}
