/* SPDX-License-Identifier: MIT */
/*
 * Firehose (C. Bell, D. Bonachea, "A New DMA Registration Strategy for
 * Pinning-Based High Performance Networks", and GASNet's firehose library):
 * the memory server may pin at most M bytes of its exported memory; it
 * registers that memory on demand in fixed-size regions, and each of its C
 * clients may hold p = M / (region size * C) of them ("firehoses"), managing
 * them itself.  A region's server-side reference count is the number of
 * clients holding a firehose to it; at zero it goes to a victim FIFO, still
 * registered, and is deregistered lazily: only when a new registration needs
 * the room.  Re-pinning a victim costs no registration.  A client that needs
 * a region it does not hold sends a move request: the firehoses it gives up
 * (its unused ones, least recently used first) and the regions it wants; the
 * server answers with the new regions' keys.  A request that would leave a
 * client holding more than p is refused (-EDQUOT).  So the server never pins
 * more than M: held regions <= C * p <= M / region size, and victims are
 * deregistered before anything new is registered past M.
 *
 * Pure logic over the leap_reg_ops backend; no I/O, not thread-safe.
 * Regions are numbered from the exported memory's base: region i is
 * [base + i * region_size, base + (i + 1) * region_size).
 */
#ifndef LEAP_FIREHOSE_H
#define LEAP_FIREHOSE_H

#include <stdbool.h>
#include <stdint.h>

#include "leap/reg.h"

/* Most regions one request may span (and one move may pin or unpin). */
#define LEAP_FH_MAX_SPAN 16
/* Most regions a server exports (keeps the per-client tables small). */
#define LEAP_FH_MAX_REGIONS (1u << 22)

struct leap_fh_config {
	uint64_t base;	      /* exported memory [base, base + size) */
	uint64_t size;	      /* a multiple of region_size */
	uint64_t region_size; /* a power of two, a multiple of page_size */
	uint64_t page_size;   /* 0: 4096 */
	uint64_t budget;      /* M: bytes the server may pin */
	uint32_t max_clients; /* C */
};

/* ---- server ---- */

struct leap_fh_server;

/* NULL with *err = -EINVAL (bad config, or p = M / (region_size * C) < 1)
 * or -ENOMEM.  ops is copied. */
struct leap_fh_server *leap_fh_server_new(const struct leap_fh_config *cfg,
					  const struct leap_reg_ops *ops, int *err);
/* Deregisters everything. */
void leap_fh_server_free(struct leap_fh_server *s);
/* p: the regions each client may hold. */
uint32_t leap_fh_server_share(const struct leap_fh_server *s);
uint32_t leap_fh_server_nregions(const struct leap_fh_server *s);
/* 0 and the new client's id, or -EUSERS when C clients are connected. */
int leap_fh_server_add_client(struct leap_fh_server *s, uint32_t *id);
/* A client went away: its firehoses are released (to the victim FIFO). */
int leap_fh_server_remove_client(struct leap_fh_server *s, uint32_t id);

/*
 * One move request: release unpin[0..nunpin) then pin pin[0..npin),
 * keys[i] receiving pin[i]'s key.  Errors, with nothing changed:
 *   -EINVAL  bad client or region id, unpin of a region the client does not
 *            hold, pin of one it holds, duplicates, a list over
 *            LEAP_FH_MAX_SPAN;
 *   -EDQUOT  the client would hold more than its share p.
 * A backend error (ibv_reg_mr failing) returns that error with
 * *unpinned = true: the unpins took effect, no pin did.  *unpinned is true on
 * success too and false for the errors above.
 */
int leap_fh_server_move(struct leap_fh_server *s, uint32_t id, const uint32_t *unpin,
			uint32_t nunpin, const uint32_t *pin, uint32_t npin,
			struct leap_reg_key *keys, bool *unpinned);
void leap_fh_server_stats(const struct leap_fh_server *s, struct leap_reg_stats *st);
/* Checks the server's invariants (tests): 0, or -1 if any is broken. */
int leap_fh_server_check(const struct leap_fh_server *s);

/* ---- client ---- */

/*
 * The client's view of one server: which regions it holds and their keys,
 * a local reference count per firehose (operations in flight through it),
 * and the LRU list of its unused firehoses, offered first in a move.
 */
struct leap_fh_client;

/*
 * One acquisition: the regions first .. first + n - 1 covering a request.
 * After leap_fh_client_acquire returns 1, send the move request
 * (unpin[0..nunpin), pin[0..npin)) and pass the answer to
 * leap_fh_client_moved; keys[i] is then region first + i's key.
 */
struct leap_fh_acquire {
	uint32_t first, n;
	uint32_t nunpin, npin;
	uint32_t unpin[LEAP_FH_MAX_SPAN];
	uint32_t pin[LEAP_FH_MAX_SPAN];
	struct leap_reg_key keys[LEAP_FH_MAX_SPAN];
};

/* share: the server's p (the client learns it when it connects). */
struct leap_fh_client *leap_fh_client_new(uint64_t base, uint64_t size,
					  uint64_t region_size, uint32_t share);
void leap_fh_client_free(struct leap_fh_client *cl);
/*
 * Acquires firehoses for [addr, addr + len):
 *   0       every region is held: keys filled, references taken;
 *   1       a move is needed: a->unpin / a->pin filled;
 *   -EAGAIN the share is full of firehoses in use: retry after releases;
 *   -E2BIG  the request spans more than p or LEAP_FH_MAX_SPAN regions;
 *   -EINVAL the range is not inside the exported memory (or len is 0).
 */
int leap_fh_client_acquire(struct leap_fh_client *cl, uint64_t addr, uint64_t len,
			   struct leap_fh_acquire *a);
/*
 * The server's answer to a's move: err and unpinned as leap_fh_server_move
 * returned them, keys for a->pin.  0 with the references taken, else err.
 */
int leap_fh_client_moved(struct leap_fh_client *cl, struct leap_fh_acquire *a, int err,
			 bool unpinned, const struct leap_reg_key *keys);
/* The operation that acquired a is done. */
void leap_fh_client_release(struct leap_fh_client *cl, const struct leap_fh_acquire *a);
/* Firehoses held now (<= share). */
uint32_t leap_fh_client_held(const struct leap_fh_client *cl);

#endif
