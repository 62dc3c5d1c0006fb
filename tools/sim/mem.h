/* SPDX-License-Identifier: MIT */
/*
 * The model of local memory: a resident set of `capacity` pages under one
 * LRU list.  Prefetched pages sit in the same list (a prefetch cache whose
 * pages count against the resident set), so every wrong prefetch pushes out
 * a page that may still be needed: pollution has a price, as in the
 * kernel's swap cache.
 *
 * Page states: SWAPPED (remote), CACHED (prefetched, not yet used),
 * RESIDENT (mapped).  Every footprint page starts SWAPPED: the trace
 * replays a working set that lives in remote memory.
 *
 * Swap slots (only with track_slots, for cluster readahead): initially in
 * address order; a resident page that is evicted gets the next free slot
 * (next-fit, as the kernel's allocator scans forward), and gives it up when
 * faulted back in.  A prefetched page keeps its slot, like a swap-cache
 * page, and an unused one evicted again simply stays there.
 */
#ifndef LEAP_SIM_MEM_H
#define LEAP_SIM_MEM_H

#include <stdbool.h>
#include <stdint.h>

enum sim_page_state {
	SIM_SWAPPED = 0,
	SIM_CACHED = 1,
	SIM_RESIDENT = 2,
};

struct sim_mem {
	uint32_t npages;   /* footprint */
	uint32_t capacity; /* resident + cached pages allowed */
	uint32_t used;
	uint8_t *state;	       /* enum sim_page_state per page */
	uint32_t *prev, *next; /* LRU links, SIM_NONE-terminated */
	uint32_t head, tail;   /* most / least recently used */
	/* accounting */
	uint64_t evictions;
	uint64_t unused_evicted; /* prefetched pages evicted before any use */
	uint32_t ncached;	 /* CACHED pages now */
	/* swap slots: slot 0 is the swap header, as on a real device */
	bool track_slots;
	uint32_t *slot_of; /* page -> slot, 0 = none */
	uint32_t *page_at; /* slot -> page + 1, 0 = free */
	uint32_t nslots;   /* slots 1..nslots */
	uint32_t slot_next;
};

int sim_mem_init(struct sim_mem *m, uint32_t npages, uint32_t capacity, bool track_slots);
void sim_mem_free(struct sim_mem *m);

static inline enum sim_page_state sim_mem_state(const struct sim_mem *m, uint32_t pg)
{
	return (enum sim_page_state)m->state[pg];
}

/* A resident page was accessed: it becomes most recently used. */
void sim_mem_touch(struct sim_mem *m, uint32_t pg);
/* A SWAPPED page is read on a fault and mapped. */
void sim_mem_fault_in(struct sim_mem *m, uint32_t pg);
/* Reads a SWAPPED page into the prefetch cache; false (no-op) otherwise. */
bool sim_mem_prefetch(struct sim_mem *m, uint32_t pg);
/* A CACHED page is used: it is mapped like any resident page. */
void sim_mem_hit(struct sim_mem *m, uint32_t pg);
/* Slot of a SWAPPED or CACHED page (track_slots only), 0 if none. */
static inline uint32_t sim_mem_slot(const struct sim_mem *m, uint32_t pg)
{
	return m->slot_of[pg];
}
/* Page in a slot, or SIM_NONE (track_slots only). */
static inline uint32_t sim_mem_page_at(const struct sim_mem *m, uint32_t slot)
{
	return slot <= m->nslots && m->page_at[slot] ? m->page_at[slot] - 1 : UINT32_MAX;
}

#endif
