// SPDX-License-Identifier: MIT
/* Pattern generators (patterns.h). */
#include <stdlib.h>
#include <string.h>

#include "patterns.h"

/* Phase: the stride of its strided quarter. */
#define PHASE_STRIDE 8u
/* Interleaved thread ids start here (0 would read as "no thread"). */
#define TID_BASE 1u

struct gen {
	const struct pat_spec *s;
	pat_emit_fn emit;
	void *ctx;
	unsigned short rng[3];
	uint32_t *perm; /* scratch for permutations */
};

static const struct {
	const char *name;
	enum pat_kind kind;
	bool has_arg;
} names[] = {
	{"seq", PAT_SEQ, false},      {"reverse", PAT_REVERSE, false},
	{"stride", PAT_STRIDE, true}, {"interleave", PAT_INTERLEAVE, true},
	{"phase", PAT_PHASE, false},  {"random", PAT_RANDOM, false},
	{"noise", PAT_NOISE, true},   {"lockstep", PAT_LOCKSTEP, true},
};

int pat_parse(const char *s, struct pat_spec *out, const char **why)
{
	const char *colon = strchr(s, ':');
	size_t len = colon ? (size_t)(colon - s) : strlen(s);

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *end;
		unsigned long v;

		if (strlen(names[i].name) != len || strncmp(s, names[i].name, len) != 0)
			continue;
		out->kind = names[i].kind;
		out->arg = 0;
		if (!names[i].has_arg) {
			if (colon) {
				*why = "this pattern takes no argument";
				return -1;
			}
			return 0;
		}
		if (!colon || !(colon[1] >= '0' && colon[1] <= '9')) {
			*why = "this pattern needs an argument (e.g. stride:8)";
			return -1;
		}
		v = strtoul(colon + 1, &end, 10);
		if (*end || v == 0 || v > 1000000) {
			*why = "pattern argument must be 1..1000000";
			return -1;
		}
		out->arg = (uint32_t)v;
		return 0;
	}
	*why = "unknown pattern (seq, reverse, stride:K, interleave:T, lockstep:K, "
	       "phase, random, noise:K)";
	return -1;
}

int pat_validate(const struct pat_spec *s, const char **why)
{
	*why = NULL;
	if (s->pages == 0)
		*why = "--pages must be at least 1";
	else if (s->passes == 0)
		*why = "--passes must be at least 1";
	else if (s->kind == PAT_INTERLEAVE && s->arg > s->pages)
		*why = "interleave:T needs at least T pages";
	else if (s->kind == PAT_LOCKSTEP && s->arg > s->pages)
		*why = "lockstep:K needs at least K pages";
	else if (s->kind == PAT_NOISE && s->arg > 100)
		*why = "noise:K is a percentage (1..100)";
	else if (s->kind == PAT_PHASE && s->pages < 4)
		*why = "phase needs at least 4 pages";
	else if (s->base + (uint64_t)s->pages * (s->kind == PAT_STRIDE ? s->arg : 16) >
		 LEAP_TRACE_PAGE_MAX)
		*why = "pattern does not fit below the largest page number";
	return *why ? -1 : 0;
}

static int emit(struct gen *g, uint64_t page, uint32_t tid)
{
	struct leap_trace_rec r = {
		.page = page, .tid = tid, .swap_offset = LEAP_TRACE_NO_SWAP};

	return g->emit(g->ctx, &r);
}

/* Uniform in [0, n): nrand48 gives 31 bits, enough for any footprint here. */
static uint32_t rnd(struct gen *g, uint32_t n)
{
	return (uint32_t)((uint64_t)nrand48(g->rng) * n >> 31);
}

static int run_linear(struct gen *g, uint64_t base, uint32_t n, int64_t step,
		      bool reverse)
{
	for (uint32_t i = 0; i < n; i++) {
		uint32_t k = reverse ? n - 1 - i : i;
		int rc = emit(g, base + (uint64_t)((int64_t)k * step), 0);

		if (rc)
			return rc;
	}
	return 0;
}

static int run_random(struct gen *g, uint64_t base, uint32_t n)
{
	/* Fisher-Yates: every page once per pass, in no order at all. */
	for (uint32_t i = 0; i < n; i++)
		g->perm[i] = i;
	for (uint32_t i = n; i > 1; i--) {
		uint32_t j = rnd(g, i), tmp = g->perm[i - 1];

		g->perm[i - 1] = g->perm[j];
		g->perm[j] = tmp;
	}
	for (uint32_t i = 0; i < n; i++) {
		int rc = emit(g, base + g->perm[i], 0);

		if (rc)
			return rc;
	}
	return 0;
}

static int run_interleave(struct gen *g, uint64_t base, uint32_t n, uint32_t threads)
{
	uint32_t region = n / threads, live = threads;
	uint32_t *next = g->perm, *order = g->perm + threads;

	/* order[0..live) are the threads with pages left this pass. */
	for (uint32_t t = 0; t < threads; t++) {
		next[t] = 0;
		order[t] = t;
	}
	while (live) {
		uint32_t i = rnd(g, live), t = order[i];
		int rc = emit(g, base + (uint64_t)t * region + next[t], TID_BASE + t);

		if (rc)
			return rc;
		if (++next[t] == region)
			order[i] = order[--live];
	}
	return 0;
}

/* One thread, k regions of n/k pages (the rest of n unused), page i of
 * each in turn: streams far apart that advance together. */
static int run_lockstep(struct gen *g, uint64_t base, uint32_t n, uint32_t k)
{
	uint32_t region = n / k;

	for (uint32_t i = 0; i < region; i++) {
		for (uint32_t r = 0; r < k; r++) {
			int rc = emit(g, base + (uint64_t)r * region + i, 0);

			if (rc)
				return rc;
		}
	}
	return 0;
}

static int run_noise(struct gen *g, uint64_t base, uint32_t n, uint32_t pct)
{
	for (uint32_t i = 0; i < n; i++) {
		int rc = 0;

		if (rnd(g, 100) < pct)
			rc = emit(g, base + rnd(g, n), 0);
		if (!rc)
			rc = emit(g, base + i, 0);
		if (rc)
			return rc;
	}
	return 0;
}

static int run_phase(struct gen *g, uint64_t base, uint32_t n)
{
	uint32_t q = n / 4, last = n - 3 * q;
	uint64_t b1 = base + q, b2 = b1 + q, b3 = b2 + (uint64_t)q * PHASE_STRIDE;
	int rc;

	rc = run_linear(g, base, q, 1, false);
	if (!rc)
		rc = run_linear(g, b1, q, 1, true);
	if (!rc)
		rc = run_linear(g, b2, q, PHASE_STRIDE, false);
	if (!rc)
		rc = run_random(g, b3, last);
	return rc;
}

static int one_pass(struct gen *g)
{
	const struct pat_spec *s = g->s;

	switch (s->kind) {
	case PAT_SEQ:
		return run_linear(g, s->base, s->pages, 1, false);
	case PAT_REVERSE:
		return run_linear(g, s->base, s->pages, 1, true);
	case PAT_STRIDE:
		return run_linear(g, s->base, s->pages, s->arg, false);
	case PAT_INTERLEAVE:
		return run_interleave(g, s->base, s->pages, s->arg);
	case PAT_LOCKSTEP:
		return run_lockstep(g, s->base, s->pages, s->arg);
	case PAT_PHASE:
		return run_phase(g, s->base, s->pages);
	case PAT_RANDOM:
		return run_random(g, s->base, s->pages);
	case PAT_NOISE:
		return run_noise(g, s->base, s->pages, s->arg);
	}
	return -1;
}

int pat_generate(const struct pat_spec *s, pat_emit_fn fn, void *ctx)
{
	struct gen g = {.s = s, .emit = fn, .ctx = ctx};
	int rc = 0;

	/* srand48's seeding, spread over all 48 bits. */
	g.rng[0] = (unsigned short)(0x330e ^ (s->seed >> 32));
	g.rng[1] = (unsigned short)s->seed;
	g.rng[2] = (unsigned short)(s->seed >> 16);
	g.perm = malloc(((size_t)s->pages + 2 * (size_t)s->arg + 1) * sizeof(*g.perm));
	if (!g.perm)
		return -1;
	for (uint32_t p = 0; p < s->passes && !rc; p++)
		rc = one_pass(&g);
	free(g.perm);
	return rc;
}
