// SPDX-License-Identifier: MIT
/*
 * leap-bench-engine: cost of the engine's full per-event path (stream
 * lookup, history update, FINDTREND, window sizing, candidates) on the
 * access mixes the agent sees.  Reports ns per event; the target is
 * <= 100 ns on average.
 */
#include <argp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "leap/engine.h"

static struct {
	unsigned long events;
	unsigned streams;
	unsigned pw_max;
} env = {.events = 20000000, .streams = 64, .pw_max = LEAP_DEFAULT_PW_MAX};

static const struct argp_option opts[] = {
	{"events", 'n', "N", 0, "Events per pattern (default 20000000)", 0},
	{"streams", 's', "N", 0, "Concurrent streams (default 64)", 0},
	{"pw-max", 'w', "N", 0, "Prefetch window cap (default 32)", 0},
	{},
};

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	char *end;
	unsigned long v;

	switch (key) {
	case 'n':
	case 's':
	case 'w':
		v = strtoul(arg, &end, 10);
		if (*end || v == 0)
			argp_error(state, "bad number '%s'", arg);
		if (key == 'n')
			env.events = v;
		else if (key == 's')
			env.streams = (unsigned)v;
		else
			env.pw_max = (unsigned)v;
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

enum pattern { SEQ, STRIDE, RANDOM, MIXED };
static const char *const pattern_names[] = {"sequential", "stride-16", "random", "mixed"};

/* xorshift64*: a cheap deterministic source that does not dominate cost. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

static volatile uint64_t sink;

static double run(enum pattern pat, const struct leap_params *p)
{
	struct leap_table t;
	uint64_t *pos = calloc(env.streams, sizeof(*pos));
	uint64_t out[LEAP_PW_LIMIT], seed = 88172645463325252ULL, acc = 0;
	double t0, t1;

	if (!pos || leap_table_init(&t, env.streams * 2, p->hsize) < 0) {
		fprintf(stderr, "leap-bench-engine: out of memory\n");
		exit(1);
	}
	for (unsigned i = 0; i < env.streams; i++)
		pos[i] = (uint64_t)i << 30;
	t0 = now_ns();
	for (unsigned long e = 0; e < env.events; e++) {
		uint32_t sid = (uint32_t)(e % env.streams);
		struct leap_stream_key_t key = leap_key_make(p->key, 1, 1000 + sid, 0);
		struct leap_stream *s = leap_table_get(&t, &key, p->hsize, e);
		enum pattern this = pat == MIXED ? (enum pattern)(sid % 3) : pat;
		uint64_t r = rnd(&seed);
		bool hit;

		switch (this) {
		case SEQ:
			pos[sid] += 1;
			break;
		case STRIDE:
			pos[sid] += 16;
			break;
		default:
			pos[sid] = ((uint64_t)sid << 30) + (r >> 40);
			break;
		}
		/* About half of all faults land on prefetched pages when a
		 * trend exists, as in the simulator's steady state. */
		hit = this != RANDOM && (r & 1);
		acc += leap_stream_access(s, p, pos[sid], hit, out, LEAP_PW_LIMIT, NULL);
	}
	t1 = now_ns();
	sink = acc;
	leap_table_free(&t);
	free(pos);
	return (t1 - t0) / (double)env.events;
}

int main(int argc, char **argv)
{
	static const struct argp argp = {
		opts, parse_arg, NULL, "Measure the engine's per-event cost.",
		NULL, NULL,	 NULL};
	struct leap_params p;
	double sum = 0;

	if (argp_parse(&argp, argc, argv, 0, NULL, NULL))
		return 1;
	leap_params_default(&p);
	p.pw_max = env.pw_max;
	if (leap_params_validate(&p, NULL)) {
		fprintf(stderr, "leap-bench-engine: bad --pw-max\n");
		return 1;
	}
	printf("%-12s %10s\n", "pattern", "ns/event");
	for (int i = SEQ; i <= MIXED; i++) {
		double ns = run((enum pattern)i, &p);

		sum += ns;
		printf("%-12s %10.1f\n", pattern_names[i], ns);
	}
	printf("%-12s %10.1f   (target <= 100 ns; %lu events x 4 patterns, %u streams, "
	       "hsize %u, pw_max %u)\n",
	       "average", sum / 4, env.events, env.streams, p.hsize, p.pw_max);
	return 0;
}
