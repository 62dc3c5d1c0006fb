/* SPDX-License-Identifier: MIT */
/* leap-memd internals: the page store and the server loop. */
#ifndef LEAP_MEMD_H
#define LEAP_MEMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "leap/wire.h"
#include "transport.h"

/*
 * Pages by (device id, byte offset), sparse: a fixed arena of capacity pages
 * allocated and locked at start, and an open-addressing index over it.  A
 * FREE (the client's discard) gives a page back: its arena page goes on a
 * free list (linked through the freed pages themselves), its index entry
 * is deleted by backward shift, so lookups never need tombstones.
 */
struct memd_slot {
	uint64_t off;
	uint32_t dev;
	uint32_t idx1; /* arena index + 1; 0 = empty */
};

struct memd_store {
	uint8_t *arena;
	uint64_t capacity, used;
	uint64_t hwm;	/* arena pages ever handed out */
	uint32_t free1; /* freed arena pages: index + 1 of the first, 0 none */
	struct memd_slot *tab;
	uint64_t mask;
};

int memd_store_init(struct memd_store *s, uint64_t pages, bool lock, char *err,
		    size_t errlen);
void memd_store_fini(struct memd_store *s);
/* The page, or NULL if it was never written. */
uint8_t *memd_store_find(const struct memd_store *s, uint32_t dev, uint64_t off);
/* The page, allocated (zeroed) if new; NULL when the arena is full. */
uint8_t *memd_store_get(struct memd_store *s, uint32_t dev, uint64_t off);
/* Forgets the page (its memory is reused); 1 if it was there, else 0. */
int memd_store_free(struct memd_store *s, uint32_t dev, uint64_t off);

struct memd_config {
	const char *listen;
	const struct leap_transport *transport;
	uint8_t secret[LEAP_SECRET_MAX];
	size_t secret_len;
	unsigned max_clients;
	int auth_timeout_ms; /* a peer must authenticate within this */
	const char *port_file;
	/*
	 * Every reply of an authenticated connection leaves this long after
	 * its request was read (a timer, no CPU spent waiting): what a client
	 * sees of a server one network round trip away, for benchmarks on one
	 * machine.  One-sided RDMA traffic does not pass through here.
	 */
	unsigned delay_us;
	bool verbose;
	/* RDMA: pin at most pin_budget bytes of the store (0: all of it, once),
	 * in region_size regions, fh_clients sharing the budget (Firehose). */
	uint64_t pin_budget, region_size;
	uint32_t fh_clients;
};

/* Runs until SIGTERM/SIGINT; 0 on a clean stop.  SIGUSR1 drops every client
 * connection (tests use it to simulate a network failure). */
int memd_serve(const struct memd_config *cfg, struct memd_store *store);

#endif /* LEAP_MEMD_H */
