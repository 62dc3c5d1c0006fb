// SPDX-License-Identifier: MIT
/*
 * Bounded (tgid, page) set.  Entries live in a ring in insertion order,
 * which gives FIFO forgetting for free; an open-addressing index (linear
 * probing, at most half full, backward-shift deletion) finds them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "leap/pageset.h"

static uint32_t hash(uint32_t tgid, uint64_t page)
{
	uint64_t x =
		page * 0x9e3779b97f4a7c15ULL ^ ((uint64_t)tgid * 0xc2b2ae3d27d4eb4fULL);

	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ULL;
	return (uint32_t)(x ^ (x >> 32));
}

int leap_pageset_init(struct leap_pageset *s, uint32_t capacity)
{
	uint32_t slots = 2;

	memset(s, 0, sizeof(*s));
	if (capacity == 0 || capacity > (1u << 26))
		return -EINVAL;
	while (slots < capacity * 2)
		slots <<= 1;
	s->ring = calloc(capacity, sizeof(*s->ring));
	s->index = calloc(slots, sizeof(*s->index));
	if (!s->ring || !s->index) {
		leap_pageset_free(s);
		return -ENOMEM;
	}
	s->index_mask = slots - 1;
	s->capacity = capacity;
	return 0;
}

void leap_pageset_free(struct leap_pageset *s)
{
	free(s->ring);
	free(s->index);
	memset(s, 0, sizeof(*s));
}

static uint32_t probe(const struct leap_pageset *s, uint32_t tgid, uint64_t page)
{
	uint32_t i = hash(tgid, page) & s->index_mask;

	for (;; i = (i + 1) & s->index_mask) {
		const struct leap_pageset_entry *e;

		if (!s->index[i])
			return i;
		e = &s->ring[s->index[i] - 1];
		if (e->tgid == tgid && e->page == page)
			return i;
	}
}

static void index_delete(struct leap_pageset *s, uint32_t i)
{
	uint32_t j = i;

	s->index[i] = 0;
	for (;;) {
		const struct leap_pageset_entry *e;
		uint32_t home;

		j = (j + 1) & s->index_mask;
		if (!s->index[j])
			return;
		e = &s->ring[s->index[j] - 1];
		home = hash(e->tgid, e->page) & s->index_mask;
		if (((j - home) & s->index_mask) >= ((j - i) & s->index_mask)) {
			s->index[i] = s->index[j];
			s->index[j] = 0;
			i = j;
		}
	}
}

bool leap_pageset_contains(const struct leap_pageset *s, uint32_t tgid, uint64_t page)
{
	return s->index[probe(s, tgid, page)] != 0;
}

bool leap_pageset_take(struct leap_pageset *s, uint32_t tgid, uint64_t page)
{
	uint32_t i = probe(s, tgid, page);

	if (!s->index[i])
		return false;
	s->ring[s->index[i] - 1].live = 0;
	index_delete(s, i);
	s->count--;
	return true;
}

bool leap_pageset_add(struct leap_pageset *s, uint32_t tgid, uint64_t page)
{
	struct leap_pageset_entry *slot = &s->ring[s->next];
	uint32_t i;

	if (leap_pageset_contains(s, tgid, page))
		return false;
	/* The ring slot we reuse may still hold the oldest live entry. */
	if (slot->live) {
		index_delete(s, probe(s, slot->tgid, slot->page));
		s->count--;
		s->forgotten++;
	}
	slot->tgid = tgid;
	slot->page = page;
	slot->live = 1;
	i = probe(s, tgid, page);
	s->index[i] = s->next + 1;
	s->next = s->next + 1 == s->capacity ? 0 : s->next + 1;
	s->count++;
	return true;
}
