// SPDX-License-Identifier: MIT
/* Resident set + prefetch cache under one LRU (see mem.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"
#include "trace_load.h"

int sim_mem_init(struct sim_mem *m, uint32_t npages, uint32_t capacity, bool track_slots)
{
	memset(m, 0, sizeof(*m));
	if (npages == 0 || capacity == 0)
		return -EINVAL;
	m->npages = npages;
	m->capacity = capacity;
	m->head = m->tail = SIM_NONE;
	m->state = calloc(npages, sizeof(*m->state));
	m->prev = malloc(npages * sizeof(*m->prev));
	m->next = malloc(npages * sizeof(*m->next));
	if (!m->state || !m->prev || !m->next)
		goto nomem;
	m->track_slots = track_slots;
	if (track_slots) {
		/* Twice the footprint: next-fit then rarely scans far. */
		m->nslots = npages > UINT32_MAX / 2 - 8 ? UINT32_MAX - 1 : npages * 2 + 8;
		m->slot_of = malloc(npages * sizeof(*m->slot_of));
		m->page_at = calloc((size_t)m->nslots + 1, sizeof(*m->page_at));
		if (!m->slot_of || !m->page_at)
			goto nomem;
		/* As if the working set had been swapped out in address order. */
		for (uint32_t i = 0; i < npages; i++) {
			m->slot_of[i] = i + 1;
			m->page_at[i + 1] = i + 1;
		}
		m->slot_next = npages + 1;
	}
	return 0;
nomem:
	sim_mem_free(m);
	return -ENOMEM;
}

void sim_mem_free(struct sim_mem *m)
{
	free(m->state);
	free(m->prev);
	free(m->next);
	free(m->slot_of);
	free(m->page_at);
	memset(m, 0, sizeof(*m));
}

static void unlink_page(struct sim_mem *m, uint32_t pg)
{
	uint32_t p = m->prev[pg], n = m->next[pg];

	if (p != SIM_NONE)
		m->next[p] = n;
	else
		m->head = n;
	if (n != SIM_NONE)
		m->prev[n] = p;
	else
		m->tail = p;
}

static void push_head(struct sim_mem *m, uint32_t pg)
{
	m->prev[pg] = SIM_NONE;
	m->next[pg] = m->head;
	if (m->head != SIM_NONE)
		m->prev[m->head] = pg;
	else
		m->tail = pg;
	m->head = pg;
}

static void slot_release(struct sim_mem *m, uint32_t pg)
{
	if (!m->track_slots || !m->slot_of[pg])
		return;
	m->page_at[m->slot_of[pg]] = 0;
	m->slot_of[pg] = 0;
}

static void slot_assign(struct sim_mem *m, uint32_t pg)
{
	/* At most npages slots are taken, so a free one exists within
	 * nslots - npages steps of any start. */
	while (m->page_at[m->slot_next]) {
		if (++m->slot_next > m->nslots)
			m->slot_next = 1;
	}
	m->slot_of[pg] = m->slot_next;
	m->page_at[m->slot_next] = pg + 1;
	if (++m->slot_next > m->nslots)
		m->slot_next = 1;
}

static void evict_one(struct sim_mem *m)
{
	uint32_t victim = m->tail;

	unlink_page(m, victim);
	m->used--;
	m->evictions++;
	if (m->state[victim] == SIM_CACHED) {
		/* Never used: a clean swap-cache page, dropped in place. */
		m->unused_evicted++;
		m->ncached--;
	} else if (m->track_slots) {
		slot_assign(m, victim);
	}
	m->state[victim] = SIM_SWAPPED;
}

static void bring_in(struct sim_mem *m, uint32_t pg, enum sim_page_state st)
{
	while (m->used >= m->capacity)
		evict_one(m);
	m->state[pg] = (uint8_t)st;
	m->used++;
	push_head(m, pg);
}

void sim_mem_touch(struct sim_mem *m, uint32_t pg)
{
	if (m->head == pg)
		return;
	unlink_page(m, pg);
	push_head(m, pg);
}

void sim_mem_fault_in(struct sim_mem *m, uint32_t pg)
{
	slot_release(m, pg);
	bring_in(m, pg, SIM_RESIDENT);
}

bool sim_mem_prefetch(struct sim_mem *m, uint32_t pg)
{
	if (m->state[pg] != SIM_SWAPPED)
		return false;
	bring_in(m, pg, SIM_CACHED);
	m->ncached++;
	return true;
}

void sim_mem_hit(struct sim_mem *m, uint32_t pg)
{
	slot_release(m, pg);
	m->state[pg] = SIM_RESIDENT;
	m->ncached--;
	sim_mem_touch(m, pg);
}
