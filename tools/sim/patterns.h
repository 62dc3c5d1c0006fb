/* SPDX-License-Identifier: MIT */
/*
 * Synthetic access patterns for leap-tracegen.  --pages is always the
 * footprint (distinct pages), so every pattern is comparable at the same
 * --memory P%.  Deterministic for a given seed (nrand48, whose sequence
 * POSIX specifies).
 */
#ifndef LEAP_SIM_PATTERNS_H
#define LEAP_SIM_PATTERNS_H

#include <stdint.h>

#include "leap/trace.h"

enum pat_kind {
	PAT_SEQ,	/* base, base+1, ... */
	PAT_REVERSE,	/* the same, downwards */
	PAT_STRIDE,	/* base, base+K, base+2K, ... (arg K) */
	PAT_INTERLEAVE, /* arg T threads, each sequential over its own region,
			 * interleaved in random order */
	PAT_LOCKSTEP,	/* arg K regions, one thread: page i of each in turn
			 * (c[i] = a[i] + b[i]; an index and its table) */
	PAT_PHASE,	/* per pass: seq, reverse, stride 8, random, each over
			 * its own quarter of the footprint */
	PAT_RANDOM,	/* a fresh random permutation of the footprint per pass */
	PAT_NOISE,	/* sequential, arg K% of steps preceded by a random page */
};

struct pat_spec {
	enum pat_kind kind;
	uint32_t arg;
	uint32_t pages;	 /* footprint */
	uint32_t passes; /* times the pattern is repeated */
	uint64_t seed;
	uint64_t base; /* first page number */
};

/* Parses "seq", "stride:8", ...; 0 or -1 with *why set. */
int pat_parse(const char *s, struct pat_spec *out, const char **why);
/* Checks the spec as a whole (e.g. pages >= threads); 0 or -1 and *why. */
int pat_validate(const struct pat_spec *s, const char **why);

/* Receives every access in order; a non-zero return stops generation. */
typedef int (*pat_emit_fn)(void *ctx, const struct leap_trace_rec *rec);
/* 0, the emitter's non-zero value, or -1 (out of memory). */
int pat_generate(const struct pat_spec *s, pat_emit_fn emit, void *ctx);

#endif
