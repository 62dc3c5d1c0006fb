/* SPDX-License-Identifier: MIT */
/*
 * Registration traces: the region references a transport makes, for
 * leap-regsim (docs/registration.md).  Text, one record per line:
 *
 *   r ADDR LEN [CLIENT]   an operation on [ADDR, ADDR + LEN) by CLIENT (0)
 *   u ADDR LEN            [ADDR, ADDR + LEN) was unmapped or freed
 *   # ...                 a comment; blank lines are ignored too
 *
 * ADDR and LEN are decimal or 0x-prefixed hex, LEN > 0 and the range must
 * not wrap; CLIENT is decimal, < LEAP_REGTRACE_MAX_CLIENTS.  A transport
 * records one "r" line per RDMA operation (the local buffer on the client,
 * the remote range on the server) with leap_regtrace_format.
 */
#ifndef LEAP_REGTRACE_H
#define LEAP_REGTRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LEAP_REGTRACE_MAX_CLIENTS 4096

enum leap_regtrace_op { LEAP_REGTRACE_REF = 'r', LEAP_REGTRACE_UNMAP = 'u' };

struct leap_regtrace_rec {
	enum leap_regtrace_op op;
	uint64_t addr, len;
	uint32_t client;
};

/* 1: *rec filled; 0: blank or comment; -1: malformed. */
int leap_regtrace_parse(const char *line, struct leap_regtrace_rec *rec);
/* One line with its newline; the length, or -1 if buf is too small. */
int leap_regtrace_format(const struct leap_regtrace_rec *rec, char *buf, size_t len);

/* ---- synthetic traces ---- */

enum leap_regtrace_kind {
	LEAP_GEN_REPEAT,  /* a fixed set of buffers referenced again and again */
	LEAP_GEN_SLIDING, /* a window sliding by less than its size: overlaps */
	LEAP_GEN_RANDOM,  /* random ranges of random sizes */
	LEAP_GEN_OVERLAP, /* buffers referenced whole, in part, and grown */
	LEAP_GEN_CLIENTS, /* clients with hot sets; client 0 streams through all */
	LEAP_GEN_UNMAP,	  /* repeat, with buffers freed and mapped again */
};

struct leap_regtrace_gen {
	enum leap_regtrace_kind kind;
	uint64_t ops;	/* records to produce */
	uint64_t space; /* addresses in [base, base + space) */
	uint64_t base;
	uint64_t max_len; /* longest reference */
	uint64_t page;	  /* alignment of buffers */
	uint32_t buffers; /* repeat/overlap/unmap: how many buffers */
	uint32_t clients; /* clients */
	uint64_t seed;
	/* state */
	uint64_t done, rng, pos;
	uint64_t *buf_addr, *buf_len;
};

/* Fills defaults for kind (ops 100000, space 1 GiB at 0x10000000, max_len
 * 256 KiB, page 4096, 256 buffers, 4 clients, seed 1) then validates:
 * 0, or -1 for a nonsense combination. */
int leap_regtrace_gen_init(struct leap_regtrace_gen *g);
void leap_regtrace_gen_free(struct leap_regtrace_gen *g);
/* The next record; false when ops records were produced. */
bool leap_regtrace_gen_next(struct leap_regtrace_gen *g, struct leap_regtrace_rec *rec);
/* "repeat", "sliding", ... -> kind; -1 if unknown. */
int leap_regtrace_kind_parse(const char *name);
const char *leap_regtrace_kind_name(enum leap_regtrace_kind k);

#endif
